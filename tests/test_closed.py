"""opalg.closed: loop closures on trees (docs/REFERENCE.md H2–H5), against independent routes.

* H2 G_c: the derivative of the pose-based constraint error e(q(t)) (central differences of
  poses composed by ``body_poses``-style transforms, no Jacobian code) equals G_c θ̇ at closed
  configurations;
* H3 U: complex-step d/dt [G_c(q + t θ̇) θ̇] (exact to rounding), and the crm(V_rel) term is shown
  to be needed for ball and revolute closures;
* H4 Λ_c⁻¹ from Ω against the dense G_c ℳ⁻¹ G_cᵀ (crba + LU solve), loops within a branch, across
  branches and to ground, on random chains and trees with every joint kind;
* H5 forward against the dense KKT solve (θ̈ and G_cᵀλ), G_cθ̈ = U, f_ext, batching, and dependent
  rows (warning + rank; equal to the lstsq KKT solution).

Tolerances: a relative error of the operator route against a dense LU solve is bounded by
cond · (backward error); the backward error of both routes is a few hundred ε at these sizes
(n ≤ 12), so K_SOLVE·cond·ε = 450·cond·ε (≈ 1e-13·cond) is used, with cond the condition number of
the matrix solved, computed in the test (ℳ for Λ_c⁻¹; the KKT matrix for θ̈, λ and the projection).
The comparisons without a solve (G_c by two routes, U against its complex-step derivative, the
batched calls) have bounds measured over 155 random closed systems (chains and trees of 8-12
bodies, every joint kind, weld, ball and revolute closures within a branch, across branches and to
ground) and 200 four-bar cranks, under the default BLAS/SIMD kernels and under
OPENBLAS_CORETYPE=Sandybridge / Prescott with NPY_DISABLE_CPU_FEATURES=X86_V3, with >= 10x margin.
Measured against K_SOLVE: Λ_c⁻¹ ≤ 0.27 cond(ℳ) ε, θ̈ and G_cᵀλ ≤ 0.6 cond(KKT) ε, the
projection ≤ 0.97 cond(KKT) ε, the two spanning trees of a four-bar ≤ 14 cond(KKT) ε.
"""

from __future__ import annotations


import numpy as np
import pytest

import opalg
from opalg.closed import ClosedSystem, LoopClosure, RankDeficientWarning, four_bar, random_closed_system
from opalg.closed import geometry as geo
from opalg.errors import StateError
from opalg.spatial.vectors import crm

from helpers import Tol, assert_close, cond_tol, measured

EPS = np.finfo(float).eps
SWEEP = "155 random closed systems (8-12 bodies, every joint and closure kind) under 3 kernels"
#: k of the cond-based tolerances k·cond·ε (module docstring).
K_SOLVE = 450
#: G_c against the frame_jacobian/body_poses route: products of O(1) geometry, no solve.
GEOMETRY = measured(2e-13, 1.1e-14, SWEEP)
#: U against the complex-step −d/dt[G_c θ̇], relative to max(‖U‖, ‖θ̇‖²).
DRIFT = measured(1e-12, 5.2e-15, SWEEP + ", on and off the manifold")
#: A batched forward against the per-state call: only the summation order differs, amplified by
#: at most cond(KKT); measured ≤ 0.9 cond(KKT) ε over 200 four-bar cranks under 3 kernels (an
#: absolute 1e-14 was exceeded there: 1.8e-14).
K_BATCH = 10

#: (n, topology, where, kinds, seed): loops within one branch, across branches, to ground, and mixed.
CASES = [
    (8, "chain", ("branch",), ("weld",), 0),
    (8, "chain", ("ground",), ("revolute",), 1),
    (10, "tree", ("across",), ("weld",), 2),
    (10, "tree", ("across",), ("ball",), 3),
    (10, "tree", ("across",), ("revolute",), 4),
    (10, "tree", ("branch",), ("ball",), 5),
    (12, "tree", ("branch", "across", "ground"), ("weld", "ball", "revolute"), 6),
    (12, "tree", ("ground", "across"), ("revolute", "ball"), 7),
]
IDS = [f"{t}-{'+'.join(w)}-{'+'.join(k)}" for _, t, w, k, _ in CASES]


def system(case):
    n, topo, where, kinds, seed = case
    n_loops = max(len(where), len(kinds))
    return random_closed_system(n, n_loops, seed, kinds=kinds, where=where, topology=topo)


def dense_kkt_cond(sys, q):
    M = opalg.crba(sys.model, q)
    G = sys.jacobian(q)
    N, m = M.shape[0], G.shape[0]
    K = np.block([[M, G.T], [G, np.zeros((m, m))]])
    return np.linalg.cond(M), np.linalg.cond(K)


# ---------------------------------------------------------------------------
# H2: G_c is the derivative of the pose error
# ---------------------------------------------------------------------------
@pytest.mark.verifies("H2", route="G_c θ̇ vs central differences of the pose error e(q(t))")
@pytest.mark.parametrize("case", CASES, ids=IDS)
def test_jacobian_is_derivative_of_constraint_error(case):
    sys, q = system(case)
    rng = np.random.default_rng(case[-1])
    qd = rng.normal(size=q.size)
    h = 1e-5
    # Central difference: truncation h²|e'''|/6 ~ 1e-10 relative, rounding ε|e|/h ~ 1e-11.
    de = (sys.constraint_error(q + h * qd) - sys.constraint_error(q - h * qd)) / (2 * h)
    assert_close(sys.jacobian(q) @ qd, de, Tol(1e-8, "truncation h²|e'''|/6 ~ 1e-10 and rounding ε|e|/h ~ 1e-11 "
                 "of the central difference, h = 1e-5"), "G_c θ̇ vs d/dt e(q(t)) at a closed configuration")


@pytest.mark.verifies("H2", route="G_c vs Π[J_e1 − X12 J_e2] from frame_jacobian and body_poses")
def test_jacobian_matches_frame_jacobians():
    """G_c = Π[J_e1 − X12 J_e2] with opalg.frame_jacobian and X12 from body_poses (a second route)."""
    sys, q = system(CASES[2])
    R, p = opalg.body_poses(sys.model, q)
    from opalg.spatial.vectors import motion_transform
    G = []
    for c in sys.closures:
        Ja = opalg.frame_jacobian(sys.model, q, (c.body1, c.R1, c.p1))
        Jb = opalg.frame_jacobian(sys.model, q, (c.body2, c.R2, c.p2))
        Rw1, pw1 = R[c.body1] @ c.R1, R[c.body1] @ c.p1 + p[c.body1]
        Rw2, pw2 = R[c.body2] @ c.R2, R[c.body2] @ c.p2 + p[c.body2]
        X12 = motion_transform(Rw1.T @ Rw2, Rw2.T @ (pw1 - pw2))     # ^{e1}X_{e2}
        G.append(c.Pi @ (Ja - X12 @ Jb))
    assert_close(sys.jacobian(q), np.concatenate(G), GEOMETRY, "G_c vs frame_jacobian route")


# ---------------------------------------------------------------------------
# H3: the drift U = −Ġ_c θ̇
# ---------------------------------------------------------------------------
def complex_step_Gdot_qd(sys, q, qd, h=1e-30):
    """d/dt [G_c(q + tθ̇) θ̇] at t = 0 by the complex step: exact to rounding (no subtraction)."""
    return (sys.jacobian(q + 1j * h * qd) @ qd).imag / h


@pytest.mark.verifies("H3", route="U vs the complex-step derivative −d/dt[G_c(q + tθ̇)θ̇]")
@pytest.mark.parametrize("case", CASES, ids=IDS)
@pytest.mark.parametrize("closed_velocity", [True, False])
def test_drift_is_minus_Gdot_qd(case, closed_velocity):
    sys, q = system(case)
    rng = np.random.default_rng(100 + case[-1])
    qd = rng.normal(size=q.size)
    if closed_velocity:
        qd = sys.project(q, qd)
    else:
        q = q + 0.3 * rng.normal(size=q.size)        # the identity holds off the manifold too
    ref = -complex_step_Gdot_qd(sys, q, qd)
    # Both sides are sums of products of O(1) geometry with θ̇ twice: rounding ~ depth·ε·|θ̇|²
    # (U itself vanishes for a weld whose loop path has exactly 6 dofs, hence the scale).
    assert_close(sys.drift(q, qd), ref, DRIFT, "U vs complex-step −Ġθ̇", scale=np.linalg.norm(qd) ** 2)


@pytest.mark.verifies("H3", route="U with and without the crm(V_rel) term vs the complex-step derivative")
@pytest.mark.parametrize("kind", ["ball", "revolute"])
def test_drift_needs_the_relative_velocity_term(kind):
    """Dropping Π crm(V_rel) X12 V_e2 fails for lower-pair closures even on the closed manifold."""
    sys, q = random_closed_system(10, 1, 3, kinds=(kind,), where=("across",))
    qd = sys.project(q, np.random.default_rng(0).normal(size=q.size))
    kin = opalg.model.kinematics.body_kinematics(sys.model, q, qd, gravity=False)
    fr = geo.closure_frames(sys.model, kin, sys.closures)
    c, X12 = sys.closures[0], fr.X12[0]
    V1 = c.X1 @ kin.V[c.body1]
    V2 = X12 @ c.X2 @ kin.V[c.body2]
    term = c.Pi @ crm(V1 - V2) @ V2
    U = sys.drift(q, qd)
    ref = -complex_step_Gdot_qd(sys, q, qd)
    assert np.linalg.norm(V1 - V2) > 1e-2          # the closure leaves directions free
    assert np.linalg.norm((U + term) - ref) > 1e-3 * np.linalg.norm(ref)
    # relative to max(‖U‖, ‖θ̇‖²) as above: a closure whose U vanishes has no relative yardstick
    assert_close(U, ref, DRIFT, "U with the crm term", scale=np.linalg.norm(qd) ** 2)


@pytest.mark.verifies("H3", route="V_rel of a weld after the projection (the crm term vanishes)")
def test_weld_drift_term_vanishes_on_manifold():
    sys, q = random_closed_system(10, 1, 2, kinds=("weld",), where=("across",))
    qd = sys.project(q, np.random.default_rng(1).normal(size=q.size))
    kin = opalg.model.kinematics.body_kinematics(sys.model, q, qd, gravity=False)
    fr = geo.closure_frames(sys.model, kin, sys.closures)
    c = sys.closures[0]
    V_rel = c.X1 @ kin.V[c.body1] - fr.X12[0] @ c.X2 @ kin.V[c.body2]
    # zero in exact arithmetic; what is left is the projection's residual: measured ≤ 1.4e-13 |θ̇|
    assert_close(V_rel, 0 * V_rel, measured(1e-11, 1.4e-13, SWEEP + " (|V_rel| / max|θ̇| of weld closures)"),
                 "V_rel of a weld on the manifold", scale=np.abs(qd).max())


# ---------------------------------------------------------------------------
# H4: Λ_c⁻¹ from Ω
# ---------------------------------------------------------------------------
@pytest.mark.verifies("H4", route="Λ_c⁻¹ from Ω (F3/F5) vs dense G_c ℳ⁻¹ G_cᵀ (crba + LU)")
@pytest.mark.parametrize("case", CASES, ids=IDS)
def test_compliance_matches_dense(case):
    sys, q = system(case)
    qs = np.stack([q, q + 0.2])                      # batched, one state off the manifold
    G = sys.jacobian(qs)
    M = opalg.crba(sys.model, qs)
    dense = G @ np.linalg.solve(M, np.swapaxes(G, -1, -2))
    cond = max(np.linalg.cond(M[i]) for i in range(2))
    assert_close(sys.compliance(qs), dense, cond_tol(cond, K_SOLVE, "ℳ"), "Λ_c⁻¹ from Ω vs G ℳ⁻¹ Gᵀ")


# ---------------------------------------------------------------------------
# H5: forward dynamics
# ---------------------------------------------------------------------------
@pytest.mark.verifies("H5", route="forward (tree passes + m×m solve) vs the dense KKT LU solve")
@pytest.mark.parametrize("case", CASES, ids=IDS)
def test_forward_matches_kkt(case):
    sys, q = system(case)
    rng = np.random.default_rng(200 + case[-1])
    N = q.size
    qs = np.stack([q, q + 0.1 * rng.normal(size=N), q + 0.1 * rng.normal(size=N)])
    qd, tau = rng.normal(size=(2, 3, N))
    qdd, lam = sys.forward(qs, qd, tau)
    qdd_k, lam_k = sys.kkt(qs, qd, tau)
    G = sys.jacobian(qs)
    cond = max(dense_kkt_cond(sys, qs[i])[1] for i in range(3))
    tol = cond_tol(cond, K_SOLVE, "KKT")
    assert_close(qdd, qdd_k, tol, "θ̈ forward vs KKT")
    assert_close(np.einsum("...mi,...m->...i", G, lam), np.einsum("...mi,...m->...i", G, lam_k), tol,
                 "G_cᵀλ forward vs KKT")
    # relative to ‖G_c‖‖θ̈‖: U vanishes identically for some closures (a ball in one branch of the
    # sweep), where ‖U‖ is no yardstick for the residual G_cθ̈ − U
    assert_close(np.einsum("...mi,...i->...m", G, qdd), sys.drift(qs, qd), tol, "G_c θ̈ = U",
                 scale=np.linalg.norm(G) * np.linalg.norm(qdd))


@pytest.mark.verifies("H5", route="forward with f_ext vs the dense KKT LU solve")
def test_forward_with_external_forces():
    sys, q = system(CASES[6])
    rng = np.random.default_rng(7)
    qd, tau = rng.normal(size=(2, q.size))
    f = rng.normal(size=(sys.model.n, 6))
    qdd, lam = sys.forward(q, qd, tau, f_ext=f)
    qdd_k, lam_k = sys.kkt(q, qd, tau, f_ext=f)
    assert_close(qdd, qdd_k, cond_tol(dense_kkt_cond(sys, q)[1], K_SOLVE, "KKT"), "θ̈ with f_ext")
    assert np.linalg.norm(qdd - sys.forward(q, qd, tau)[0]) > 1e-3     # f_ext does enter


@pytest.mark.verifies("H5", route="batched forward vs per-state calls")
def test_forward_batches_like_a_loop():
    """Batch shapes (2, 3) and a batch above the chunk size give the per-state results (to
    K_BATCH cond(KKT) ε: the same arithmetic up to BLAS summation order)."""
    sys, q = four_bar(closure="planar")
    rng = np.random.default_rng(3)
    qs = q + 0.05 * rng.normal(size=(2, 3, 3))
    qd, tau = rng.normal(size=(2, 2, 3, 3))
    res = sys.forward(qs, qd, tau)
    assert res.qdd.shape == (2, 3, 3) and res.lam.shape == (2, 3, 2) and res.rank.shape == (2, 3)
    for i in range(2):
        for j in range(3):
            a, b = sys.forward(qs[i, j], qd[i, j], tau[i, j])
            tol = cond_tol(dense_kkt_cond(sys, qs[i, j])[1], K_BATCH, "KKT")
            assert_close(res.qdd[i, j], a, tol, "batched vs single state")   # same arithmetic up to BLAS order
    big = q + 0.05 * rng.normal(size=(opalg.model.kinematics.CHUNK + 50, 3))
    out = sys.forward(big, np.zeros(3), np.zeros(3))
    for i in (0, opalg.model.kinematics.CHUNK - 1, opalg.model.kinematics.CHUNK + 49):
        tol = cond_tol(dense_kkt_cond(sys, big[i])[1], K_BATCH, "KKT")
        assert_close(out.qdd[i], sys.forward(big[i], np.zeros(3), np.zeros(3)).qdd, tol, "chunked")


# ---------------------------------------------------------------------------
# H5: dependent rows
# ---------------------------------------------------------------------------
@pytest.mark.verifies("H5", route="rank-deficient forward vs the lstsq (least-norm) KKT solution")
def test_planar_loop_closed_with_five_rows_warns_and_matches_lstsq():
    sys, q = four_bar(closure="revolute")           # 5 rows, 3 of them identically zero in the plane
    qd = sys.project(q, np.array([1.0, 0.0, 0.0]))
    tau = np.array([0.5, -0.2, 0.1])
    with pytest.warns(RankDeficientWarning, match=r"rank 2 .*closure 0 \(D\)"):
        res = sys.forward(q, qd, tau)
    assert int(res.rank) == 2 and res.m == 5
    qdd_k, lam_k = sys.kkt(q, qd, tau)             # lstsq (minimum norm)
    G = sys.jacobian(q)
    # cond(ℳ)·cond(G_in-plane)²: the in-plane Λ_c⁻¹ = G ℳ⁻¹ Gᵀ that both routes solve with
    cond = np.linalg.cond(opalg.crba(sys.model, q)) * np.linalg.cond(G[[3, 4]]) ** 2
    tol = Tol(K_SOLVE * cond * EPS, f"{K_SOLVE}·cond(ℳ)·cond(G_in-plane)²·ε, = {K_SOLVE * cond * EPS:.1e}")
    assert_close(res.qdd, qdd_k, tol, "θ̈ vs lstsq KKT")
    assert_close(G.T @ res.lam, G.T @ lam_k, tol, "G_cᵀλ vs lstsq KKT")
    assert_close(res.lam, lam_k, tol, "least-norm λ")
    # ... and equal to the well-posed in-plane formulation of the same mechanism.
    sys2, _ = four_bar(closure="planar")
    assert_close(res.qdd, sys2.forward(q, qd, tau).qdd, tol, "θ̈, 5 rows vs rows=[3, 4]")


@pytest.mark.verifies("H5", route="duplicated closure vs the lstsq KKT solution and the single closure")
def test_redundant_closures_warn_and_match_lstsq():
    sys, q = random_closed_system(10, 1, 4, kinds=("revolute",), where=("across",))
    twice = ClosedSystem(sys.model, [sys.closures[0], sys.closures[0]])
    rng = np.random.default_rng(4)
    qd, tau = rng.normal(size=(2, q.size))
    with pytest.warns(RankDeficientWarning, match="rank 5"):
        qdd, lam = twice.forward(q, qd, tau)
    qdd_k, lam_k = twice.kkt(q, qd, tau)
    G = twice.jacobian(q)
    tol = cond_tol(dense_kkt_cond(sys, q)[1], K_SOLVE, "KKT of the single closure")
    assert_close(qdd, qdd_k, tol, "θ̈, duplicated closure vs lstsq KKT")
    assert_close(G.T @ lam, G.T @ lam_k, tol, "G_cᵀλ, duplicated closure")
    assert_close(qdd, sys.forward(q, qd, tau).qdd, tol, "θ̈, duplicated vs single closure")


# ---------------------------------------------------------------------------
# loop-cut invariance
# ---------------------------------------------------------------------------
@pytest.mark.verifies("H5", route="four-bar cut at a joint vs cut in a link (two spanning trees)")
@pytest.mark.parametrize("crank", [0.6, 2.0, -1.2])
def test_four_bar_acceleration_does_not_depend_on_the_cut(crank):
    """The four-bar cut at its ground pivot D (3-body chain) or in the middle of the rocker
    (a 4-body tree with a planar weld): the same mechanism, so crank, coupler and rocker
    accelerations agree."""
    joint, q = four_bar(crank=crank, closure="planar")
    split, qs = four_bar(crank=crank, closure="split")
    # measured bit-identical over 200 cranks under 3 kernels (the same assembly); 1e-12 is a bound
    assert_close(qs[:3], q, Tol(1e-12, "measured: identical (0) over 200 cranks under 3 kernels"),
                 "common coordinates")
    qd = joint.project(q, np.array([1.5, 0.0, 0.0]))
    qd_s = np.append(qd, qd.sum())                 # the D half turns with θ1 + θ2 + θ3
    # zero in exact arithmetic: the projection's residual, ≤ 7.7 cond(KKT) ε |θ̇| over 200 cranks
    # under 3 kernels (1.2e-13 |θ̇| at crank −1.07, where an absolute 1e-12 kept only 8x)
    G_s = split.jacobian(qs)
    assert_close(G_s @ qd_s, 0 * G_s[:, 0], cond_tol(dense_kkt_cond(joint, q)[1], 100, "KKT"),
                 "G_c θ̇ of the split tree", scale=np.abs(qd).max())
    tau = np.array([2.0, -1.0, 0.5])
    a = joint.forward(q, qd, tau).qdd
    b = split.forward(qs, qd_s, np.append(tau, 0.0)).qdd
    cond = dense_kkt_cond(split, qs)[1]
    assert_close(b[:3], a, cond_tol(cond, K_SOLVE, "KKT"), "θ̈ of the common coordinates, two spanning trees")
    assert_close(b[3], a.sum(), cond_tol(cond, K_SOLVE, "KKT"), "θ̈ of the D half")


# ---------------------------------------------------------------------------
# constraint error, assembly, projection
# ---------------------------------------------------------------------------
@pytest.mark.verifies("H6", route="assembly's residual e(q) against its stopping tolerance")
@pytest.mark.parametrize("case", CASES[::2], ids=IDS[::2])
def test_assemble_returns_to_the_manifold(case):
    sys, q = system(case)
    q0 = q + 0.05 * np.random.default_rng(9).normal(size=q.size)
    assert np.abs(sys.constraint_error(q0)).max() > 1e-3
    res = sys.assemble(q0, tol=1e-12)
    # exact by assemble's contract: it returns only once max|e(q)| <= tol (a StateError otherwise),
    # and e(q) is recomputed from the same q by the same arithmetic
    assert res.residual <= 1e-12 and res.iterations <= 20
    assert np.abs(sys.constraint_error(res.q)).max() <= 1e-12


def test_assemble_reports_failure():
    model = opalg.planar_arm([1.0, 1.0], [1.0, 1.0], [0.1, 0.1])
    far = ClosedSystem(model, [LoopClosure((1, [1.0, 0, 0]), (-1, [5.0, 0, 0]), rows=[3, 4])])
    with pytest.raises(StateError, match="max \\|e\\|"):
        far.assemble(np.array([0.1, 0.2]), max_iter=30)


@pytest.mark.verifies("H6", route="mass-metric projection vs the dense formula (crba + LU)")
@pytest.mark.parametrize("case", CASES[1::2], ids=IDS[1::2])
def test_project_mass_metric(case):
    sys, q = system(case)
    qd = np.random.default_rng(5).normal(size=q.size)
    M = opalg.crba(sys.model, q)
    G = sys.jacobian(q)
    ref = qd - np.linalg.solve(M, G.T @ np.linalg.solve(G @ np.linalg.solve(M, G.T), G @ qd))
    out = sys.project(q, qd)
    # the projection solves the KKT system of (ℳ, G_c): measured ≤ 0.97 cond(KKT) ε (the earlier
    # yardstick cond(ℳ)² was up to 1e3 times larger for these systems)
    assert_close(out, ref, cond_tol(dense_kkt_cond(sys, q)[1], K_SOLVE, "KKT"), "ℳ-metric projection vs dense")
    assert np.abs(G @ out).max() < 1e-10 * np.abs(qd).max()
    e = sys.project(q, qd, metric="euclidean")
    assert np.abs(G @ e).max() < 1e-10 * np.abs(qd).max()
    resid = (qd - e) - G.T @ np.linalg.lstsq(G.T, qd - e, rcond=None)[0]
    assert np.abs(resid).max() < 1e-10 * np.abs(qd).max()          # the change lies in range(Gᵀ)


# ---------------------------------------------------------------------------
# bad input
# ---------------------------------------------------------------------------
@pytest.mark.parametrize("args, kw, match", [
    (((0, [0, 0, 0]), (1, [0, 0, 0])), dict(kind="hinge"), "unknown kind 'hinge'"),
    (((0, [0, 0, 0]), (1, [0, 0, 0])), dict(kind="revolute", axis=[0, 0, 2.0]), "not a unit vector"),
    (((0, [0, 0, 0]), (1, [0, 0, 0])), dict(kind="revolute"), "needs axis"),
    (((0, [0, 0, 0]), (1, [0, 0, 0])), dict(kind="ball", axis=[0, 0, 1.0]), "only used by a revolute"),
    (((0, [0, 0, 0]), (1, [0, 0, 0])), dict(rows=[2, 6]), "distinct integers in 0..5"),
    (((0, [0, 0, 0]), (1, [0, 0, 0])), dict(rows=[2, 2]), "distinct integers"),
    (((0, [0, 0, 0]), (1, [0, 0, 0])), dict(rows=[]), "at least one"),
    (((0, [0, 0, 0]), (1, [0, 0, 0])), dict(rows="xy"), "sequence of integers"),
    (((-1, [0, 0, 0]), (1, [0, 0, 0])), {}, "frame1 must be on a body"),
    (((0, [0, 0, 0]), (-2, [0, 0, 0])), {}, "use -1 for the ground"),
    (((0, [0, 0]), (1, [0, 0, 0])), {}, "p a 3-vector"),
    (((0, 2 * np.eye(3), [0, 0, 0]), (1, [0, 0, 0])), {}, "not a proper rotation"),
    (((0.5, [0, 0, 0]), (1, [0, 0, 0])), {}, "not an integer"),
    (("body", (1, [0, 0, 0])), {}, "expected \\(body, p\\)"),
])
def test_loop_closure_rejects_bad_input(args, kw, match):
    with pytest.raises(StateError, match=match):
        LoopClosure(*args, **kw)


def test_closed_system_rejects_bad_input():
    model = opalg.planar_arm([1.0, 1.0], [1.0, 1.0], [0.1, 0.1])
    with pytest.raises(StateError, match="frame2 is on body 5.*bodies 0..1"):
        ClosedSystem(model, [LoopClosure((1, [0, 0, 0]), (5, [0, 0, 0]), name="x")])
    with pytest.raises(StateError, match="at least one LoopClosure"):
        ClosedSystem(model, [])
    with pytest.raises(StateError, match="closure 0 is a tuple"):
        ClosedSystem(model, [((1, [0, 0, 0]), (-1, [0, 0, 0]))])
    sys, q = four_bar()
    with pytest.raises(StateError, match="baumgarte"):
        sys.forward(q, np.zeros(3), np.zeros(3), baumgarte=(1.0,))
    with pytest.raises(StateError, match="q has shape"):
        sys.jacobian(np.zeros(4))
    with pytest.raises(StateError, match="metric"):
        sys.project(q, np.zeros(3), metric="kinetic")


@pytest.mark.verifies("H5", route="3-D loop cut at a revolute closure vs a weld through a link")
@pytest.mark.parametrize("seed", [4, 8])
def test_spatial_loop_acceleration_does_not_depend_on_the_cut(seed):
    """A 3-D loop closed by a revolute closure between link L (frame e1) and body B (frame e2),
    and the same mechanism as another spanning tree: the revolute joint becomes a tree joint of a
    new body L_b hanging from B, L's mass is shared between L and L_b, and the loop is cut instead
    by a weld between L and L_b.  θ̈ of every coordinate of the first tree agrees."""
    from opalg.closed.closure import rotation_log
    from opalg.model.multibody import Inertia, Joint, Model
    sys1, q1 = random_closed_system(10, 1, seed, kinds=("revolute",), where=("across",))
    m1, c = sys1.model, sys1.closures[0]
    L, B = c.body1, c.body2
    inL = m1.inertias[L]
    half = Inertia(0.5 * inL.mass, inL.com, 0.5 * np.asarray(inL.I_com))
    # L_b's frame is e1: its half of L in e1 coordinates.
    half_b = Inertia(0.5 * inL.mass, c.R1.T @ (np.asarray(inL.com) - c.p1), 0.5 * c.R1.T @ inL.I_com @ c.R1)
    inertias = list(m1.inertias)
    inertias[L] = half
    m2 = Model(list(m1.parents) + [B], list(m1.joints) + [Joint("R", c.axis, name="cut_joint")],
               list(m1.placements) + [(c.R2, c.p2)], inertias + [half_b], m1.gravity)
    weld = LoopClosure((L, c.R1, c.p1), (m1.n, np.eye(3), np.zeros(3)), kind="weld")
    sys2 = ClosedSystem(m2, [weld])
    # Joint angle at which L_b's frame (e2 turned about a) coincides with e1.
    R, p = opalg.body_poses(m1, q1)
    R21 = (R[B] @ c.R2).T @ (R[L] @ c.R1)
    theta = float(rotation_log(R21) @ c.axis)
    q2 = np.append(q1, theta)
    assert np.abs(sys2.constraint_error(q2)).max() < 1e-10
    rng = np.random.default_rng(seed)
    qd1 = sys1.project(q1, rng.normal(size=q1.size))
    G2 = sys2.jacobian(q2)
    x = np.linalg.lstsq(G2[:, -1:], -G2[:, :-1] @ qd1, rcond=None)[0]   # the cut joint's rate
    qd2 = np.append(qd1, x)
    assert np.abs(G2 @ qd2).max() < 1e-10 * np.abs(qd1).max()
    tau = rng.normal(size=q1.size)
    a1 = sys1.forward(q1, qd1, tau).qdd
    a2 = sys2.forward(q2, qd2, np.append(tau, 0.0)).qdd
    assert_close(a2[:-1], a1, cond_tol(dense_kkt_cond(sys2, q2)[1], K_SOLVE, "KKT"), "θ̈, revolute cut vs weld cut")
