"""Independent checks of the opalg recursions (docs/REFERENCE.md §5, [C1b], [C4], [C5], [C8]).

Every test compares a recursion (CRBA, RNEA, ABA, ℳ⁻¹, Jacobians) with a route that
does not share its code path: complex-step derivatives of the body poses, the
Lagrangian derived here with sympy, hand-written planar closed forms, energy
conservation, or the same mechanism under another labelling.

Tolerances: complex-step derivatives (h = 1e-20) carry no truncation or cancellation
error, so the two routes agree to accumulated round-off; 1e-10 relative leaves
~4 orders of margin over the ~1e-14 observed and would still catch any wrong term
(which shows up at O(1)).
"""

from __future__ import annotations

import itertools

import numpy as np
import pytest
import sympy as sp
from hypothesis import given, settings
from hypothesis import strategies as st

import opalg
from helpers import EPS, Tol, assert_close, cond_tol, measured, roundtrip_tol, trig_zero

H_CS = 1e-20  # complex-step increment: Im f(x + ih v)/h = f'(x)v + O(h²), no cancellation
#: Forward routes (complex step, closed forms, relabelling) vs the recursions: see module docstring.
RTOL = measured(1e-10, 6.1e-15, "200 random chains, trees and two-root forests (n 2-9, mixed joints) "
                "under 3 BLAS/SIMD kernels: crba vs poses, bias vs Lagrangian, gravity vs ∂U/∂q")
# (routes through a solve with ℳ use tol_solve / tol_roundtrip: aba(rnea(q̈)) reached 10.8 cond(ℳ)·ε
#  = 5.3e-9 at cond 2e8 in that sweep, so no fixed bound holds for them)
#: A batch of states vs the same call state by state (the same formulas, other BLAS kernels).
RTOL_BATCH = measured(1e-12, 2.0e-15, "the same 200 models, batches of 4 states, rnea/crba/bias, 3 kernels")


def tol_solve(M):
    """100·cond(ℳ)·ε: the forward error of a solve with ℳ (N <= 36 dofs here: a few N)."""
    return cond_tol(np.linalg.cond(M), 100)


# (topology, n bodies, seed, n_roots); every model has at least one 2- or 3-axis joint
# (checked in test_cases_are_not_trivial) and the trees include a forest.
CASES = [
    ("chain", 5, 2, 1),
    ("chain", 8, 5, 1),
    ("chain", 12, 4, 1),
    ("tree", 5, 3, 1),
    ("tree", 8, 1, 1),
    ("tree", 12, 0, 1),
    ("tree", 12, 5, 1),
    ("tree", 9, 3, 2),
]
CASE_IDS = [f"{t}{n}-s{s}-r{r}" for t, n, s, r in CASES]


def make_model(topology, n, seed, n_roots=1, **kw):
    if topology == "chain":
        return opalg.random_model(n, "chain", seed=seed, joints="mixed", **kw)
    return opalg.random_model(n, "tree", seed=seed, joints="mixed", n_roots=n_roots, **kw)


def make_state(model, seed, k=3):
    """k seeded random joint-space vectors (q, qd, qdd/tau, ...)."""
    return np.random.default_rng(1000 + seed).normal(size=(k, model.ndof))


def vee(W):
    """Axial vector of the (antisymmetric part of the) 3x3 matrix W."""
    A = 0.5 * (W - W.T)
    return np.array([A[2, 1], A[0, 2], A[1, 0]])


# --------------------------------------------------------------------------- pose route
def pose_derivative(model, q, v):
    """Poses at q and their exact directional derivatives along v, by complex step.

    Returns (R, p, Rdot, pdot): lists over bodies of R_0k, p_0k and d/dε at q + εv.
    """
    Rs, ps = opalg.body_poses(model, np.asarray(q, dtype=complex) + 1j * H_CS * np.asarray(v))
    R = [np.real(x) for x in Rs]
    p = [np.real(x) for x in ps]
    Rd = [np.imag(x) / H_CS for x in Rs]
    pd = [np.imag(x) / H_CS for x in ps]
    return R, p, Rd, pd


def pose_jacobians(model, q):
    """World angular Jacobian Jw[k] (3xN) and mass-centre linear Jacobian Jc[k] (3xN) of
    every body, column by column from complex-step derivatives of body_poses; also R_0k."""
    N, n = model.ndof, model.n
    Jw = [np.zeros((3, N)) for _ in range(n)]
    Jc = [np.zeros((3, N)) for _ in range(n)]
    R = None
    for j, e in enumerate(np.eye(N)):
        R, _, Rd, pd = pose_derivative(model, q, e)
        for k in range(n):
            com = np.asarray(model.inertias[k].com, dtype=float)
            Jw[k][:, j] = vee(Rd[k] @ R[k].T)          # ω̃ = Ṙ Rᵀ (world coordinates)
            Jc[k][:, j] = pd[k] + Rd[k] @ com          # c = p + R com
    return Jw, Jc, R


def mass_matrix_from_poses(model, q):
    """ℳ = Σ m Jcᵀ Jc + Jwᵀ (R I_com Rᵀ) Jw: the kinetic-energy Hessian from the poses."""
    Jw, Jc, R = pose_jacobians(model, q)
    M = np.zeros((model.ndof, model.ndof))
    for k, inr in enumerate(model.inertias):
        Iw = R[k] @ np.asarray(inr.I_com, dtype=float) @ R[k].T
        M += float(inr.mass) * Jc[k].T @ Jc[k] + Jw[k].T @ Iw @ Jw[k]
    return M


def potential(model, q):
    """U = −Σ m_k g·c_k from the poses (complex-safe: no conjugation, no abs)."""
    Rs, ps = opalg.body_poses(model, q)
    g = np.asarray(model.gravity, dtype=float)
    return -sum(float(i.mass) * (g @ (p + R @ np.asarray(i.com, dtype=float)))
                for i, R, p in zip(model.inertias, Rs, ps))


def grad_potential(model, q):
    """∂U/∂q by complex step of the pose-based potential."""
    q = np.asarray(q, dtype=complex)
    return np.array([np.imag(potential(model, q + 1j * H_CS * e)) / H_CS for e in np.eye(model.ndof)])


def crba_partials(model, q):
    """∂ℳ/∂q_j (list over j) by complex step of opalg.crba.

    crba itself is validated against the poses by test_mass_matrix_from_pose_kinetic_energy,
    so this is an independent route to the derivatives of ℳ.
    """
    q = np.asarray(q, dtype=complex)
    return [np.imag(opalg.crba(model, q + 1j * H_CS * e)) / H_CS for e in np.eye(model.ndof)]


def crba_rate(model, q, qd):
    """ℳ̇ = Σ_j ∂ℳ/∂q_j q̇_j as one directional complex step of crba along q̇."""
    return np.imag(opalg.crba(model, np.asarray(q, dtype=complex) + 1j * H_CS * np.asarray(qd))) / H_CS


def lagrangian_bias(model, q, qd, gravity=True):
    """ℳ̇q̇ − ½∂(q̇ᵀℳq̇)/∂q (+ ∂U/∂q): Euler–Lagrange bias from complex-step derivatives."""
    dM = crba_partials(model, q)
    c = crba_rate(model, q, qd) @ qd - 0.5 * np.array([qd @ D @ qd for D in dM])
    return c + grad_potential(model, q) if gravity else c


# --------------------------------------------------------------------------- sanity of cases
def test_cases_are_not_trivial():
    """Guard: each random case has a multi-axis joint, the trees branch, and one is a forest."""
    for topo, n, seed, roots in CASES:
        m = make_model(topo, n, seed, roots)
        assert any(j.ndof >= 2 for j in m.joints), (topo, n, seed)
        assert any("P" in j.kinds for j in m.joints), (topo, n, seed)
        if topo == "tree":
            assert max(len(c) for c in m.children) >= 2
    assert any(make_model(*c).parents.count(-1) >= 2 for c in CASES)


# --------------------------------------------------------------------------- 1. ℳ from poses
@pytest.mark.verifies("C3", route="crba vs the kinetic-energy Hessian from complex-step pose Jacobians")
@pytest.mark.parametrize("case", CASES, ids=CASE_IDS)
def test_mass_matrix_from_pose_kinetic_energy(case):
    """[C3] crba vs ℳ = Σ mJcᵀJc + JωᵀIJω with Jacobians from complex-step body poses."""
    model = make_model(*case)
    q = make_state(model, case[2], 1)[0]
    M_ref = mass_matrix_from_poses(model, q)
    M = opalg.crba(model, q)
    assert_close(M, M_ref, RTOL, "C3: crba vs pose kinetic-energy Hessian")
    assert np.all(np.linalg.eigvalsh(M_ref) > 0)  # the reference is a genuine mass matrix


# --------------------------------------------------------------------------- 2. velocities
@pytest.mark.verifies("C1b", route="V vs complex-step time derivatives of the body poses")
@pytest.mark.parametrize("case", CASES, ids=CASE_IDS)
def test_body_velocities_from_pose_rates(case):
    """[C1b] operators(...).V vs [Rᵀ vee(ṘRᵀ); Rᵀṗ] from a complex-step time derivative of poses."""
    model = make_model(*case)
    q, qd = make_state(model, case[2], 2)
    V = opalg.operators(model, q, qd).V
    R, _, Rd, pd = pose_derivative(model, q, qd)
    V_ref = np.concatenate([np.concatenate([R[k].T @ vee(Rd[k] @ R[k].T), R[k].T @ pd[k]])
                            for k in range(model.n)])
    assert V.shape == (6 * model.n,)
    assert_close(V, V_ref, RTOL, "C1b: V vs complex-step pose rates")


# --------------------------------------------------------------------------- 3. bias [C4], [C5]
@pytest.mark.verifies("C4", "K2",
                      route="bias vs ℳ̇q̇ − ½∇(q̇ᵀℳq̇) + ∇U by complex step (multi-axis joints included)")
@pytest.mark.parametrize("case", CASES, ids=CASE_IDS)
def test_bias_equals_lagrangian_terms(case):
    """[C4] bias vs ℳ̇q̇ − ½∇(q̇ᵀℳq̇) + ∇U, complex step of crba and of the pose potential."""
    model = make_model(*case)
    q, qd = make_state(model, case[2], 2)
    assert_close(opalg.bias(model, q, qd), lagrangian_bias(model, q, qd), RTOL, "C4: bias vs Lagrangian")
    # the velocity part alone (gravity off), so gravity cannot mask a Coriolis error
    assert_close(opalg.bias(model, q, qd, gravity=False), lagrangian_bias(model, q, qd, gravity=False),
                 RTOL, "C4: Coriolis bias vs Lagrangian")


@pytest.mark.verifies("C5", route="bias(q, 0) vs the complex-step gradient of the pose potential")
@pytest.mark.parametrize("case", CASES, ids=CASE_IDS)
def test_gravity_torques_are_potential_gradient(case):
    """[C5] bias(q, 0) vs ∂U/∂q with U = −Σ m g·c from complex-step body poses."""
    model = make_model(*case)
    q = make_state(model, case[2], 1)[0]
    zero = np.zeros(model.ndof)
    G_ref = grad_potential(model, q)
    assert np.abs(G_ref).max() > 1.0  # gravity genuinely loads the joints
    assert_close(opalg.bias(model, q, zero), G_ref, RTOL, "C5: gravity torques vs ∂U/∂q")
    # without gravity nothing is left at rest: exactly, since a = 0 and b = crf(V)MV = 0 at V = 0
    assert np.all(opalg.bias(model, q, zero, gravity=False) == 0.0)


@pytest.mark.verifies("C5", route="bias(q, 0) vs ∂U/∂q with a tilted gravity vector")
def test_gravity_vector_is_used_as_given():
    """[C5] a model with a tilted gravity vector: bias(q, 0) vs ∂U/∂q of that gravity."""
    g = np.array([1.5, -2.0, -9.0])
    model = opalg.random_model(7, "tree", seed=11, joints="mixed", gravity=g)
    q = make_state(model, 11, 1)[0]
    assert_close(opalg.bias(model, q, np.zeros(model.ndof)), grad_potential(model, q), RTOL,
                 "C5: tilted gravity torques vs ∂U/∂q")


# --------------------------------------------------------------------------- 4. energy
@pytest.mark.parametrize("case", CASES, ids=CASE_IDS)
def test_aba_conserves_energy(case):
    """ABA with τ = 0: d/dt(T) = q̇ᵀℳq̈ + ½q̇ᵀℳ̇q̇ = 0 (no gravity), d/dt(T + U) = 0 (gravity);
    ℳ̇ by complex step of crba, ∇U by complex step of the poses."""
    model = make_model(*case)
    q, qd = make_state(model, case[2], 2)
    zero = np.zeros(model.ndof)
    M, Md = opalg.crba(model, q), crba_rate(model, q, qd)

    qdd = opalg.aba(model, q, qd, zero, gravity=False)
    terms = np.array([qd @ M @ qdd, 0.5 * qd @ Md @ qd])
    assert_close(terms.sum(), 0.0, tol_solve(M), "energy balance, no gravity", scale=np.abs(terms).max())
    assert np.abs(terms).max() > 1e-3  # not trivially zero

    qdd = opalg.aba(model, q, qd, zero)
    terms = np.array([qd @ M @ qdd, 0.5 * qd @ Md @ qd, grad_potential(model, q) @ qd])
    assert_close(terms.sum(), 0.0, tol_solve(M), "energy balance with gravity", scale=np.abs(terms).max())


# --------------------------------------------------------------------------- 5. round trips
@pytest.mark.verifies("E9", "E8", route="aba∘rnea and rnea∘aba vs the identity; minv·crba vs I")
@pytest.mark.parametrize("case", CASES, ids=CASE_IDS)
def test_aba_rnea_round_trip_single(case):
    """aba(rnea(q̈)) = q̈ and rnea(aba(τ)) = τ: the innovations inverse vs Newton–Euler."""
    model = make_model(*case)
    q, qd, x = make_state(model, case[2], 3)
    M, C = opalg.crba(model, q), opalg.bias(model, q, qd)
    assert_close(opalg.aba(model, q, qd, opalg.rnea(model, q, qd, x)), x, roundtrip_tol(M, C, x),
                 "E9: aba(rnea(x)) = x")
    # rnea(aba(x)) = x: the solve's error (cond·ε relative to q̈) mapped back by ℳ, relative to x
    a = opalg.aba(model, q, qd, x)
    amp = (np.linalg.norm(M, 2) * np.linalg.norm(a) + np.linalg.norm(C)) / np.linalg.norm(x)
    assert_close(opalg.rnea(model, q, qd, a), x,
                 Tol(100 * np.linalg.cond(M) * amp * EPS, f"100·cond(ℳ)·ε·(‖ℳ‖‖q̈‖ + ‖C‖)/‖τ‖, "
                     f"cond = {np.linalg.cond(M):.1e}, factor {amp:.1f}"), "E9: rnea(aba(x)) = x")
    # and ℳ⁻¹ from the innovations factorization times crba: the residual of an inverse, cond·ε
    assert_close(opalg.minv(model, q) @ M, np.eye(model.ndof), tol_solve(M), "E8: minv crba = I")


@pytest.mark.parametrize("case", [CASES[1], CASES[4]], ids=[CASE_IDS[1], CASE_IDS[4]])
@pytest.mark.parametrize("batch", [(4,), (2, 3)], ids=["B", "B1xB2"])
def test_batched_equals_per_state(case, batch):
    """Batched rnea/aba/crba/bias (one recursion over the batch) vs a Python loop of single states."""
    model = make_model(*case)
    rng = np.random.default_rng(77)
    q, qd, qdd = rng.normal(size=(3,) + batch + (model.ndof,))
    tau = opalg.rnea(model, q, qd, qdd)
    back = opalg.aba(model, q, qd, tau)
    fwd = opalg.aba(model, q, qd, qdd)
    again = opalg.rnea(model, q, qd, fwd)
    Mb, Cb = opalg.crba(model, q), opalg.bias(model, q, qd)
    assert tau.shape == back.shape == batch + (model.ndof,)
    assert Mb.shape == batch + (model.ndof, model.ndof)
    for idx in np.ndindex(*batch):
        rt = roundtrip_tol(Mb[idx], Cb[idx], qdd[idx])
        assert_close(back[idx], qdd[idx], rt, "batched aba(rnea(qdd))")
        assert_close(again[idx], qdd[idx], rt, "batched rnea(aba(qdd))")
        assert_close(tau[idx], opalg.rnea(model, q[idx], qd[idx], qdd[idx]), RTOL_BATCH, "batched rnea")
        assert_close(fwd[idx], opalg.aba(model, q[idx], qd[idx], qdd[idx]), tol_solve(Mb[idx]), "batched aba")
        assert_close(Mb[idx], opalg.crba(model, q[idx]), RTOL_BATCH, "batched crba")
        assert_close(Cb[idx], opalg.bias(model, q[idx], qd[idx]), RTOL_BATCH, "batched bias")


def test_batch_axes_broadcast():
    """rnea/aba with q (B1,1,N), qd (B2,N), q̈ (N,): broadcast result vs the per-state loop."""
    model = make_model(*CASES[3])
    rng = np.random.default_rng(5)
    q = rng.normal(size=(2, 1, model.ndof))
    qd = rng.normal(size=(3, model.ndof))
    qdd = rng.normal(size=model.ndof)
    tau = opalg.rnea(model, q, qd, qdd)
    acc = opalg.aba(model, q, qd, tau)
    assert tau.shape == acc.shape == (2, 3, model.ndof)
    for i, j in itertools.product(range(2), range(3)):
        assert_close(tau[i, j], opalg.rnea(model, q[i, 0], qd[j], qdd), RTOL_BATCH, "broadcast rnea")
        assert_close(acc[i, j], qdd, roundtrip_tol(opalg.crba(model, q[i, 0]), opalg.bias(model, q[i, 0], qd[j]), qdd),
                     "broadcast aba(rnea(qdd))")


# --------------------------------------------------------------------------- 6. relabelling
def _non_topological_perms(model, rng, count=3):
    """Random perms whose relabelled model has some parent label > child label; plus, if
    possible, the Jain (tip-to-base) labelling where every parent label is larger."""
    perms = [list(reversed(model.order))]
    while len(perms) < count + 1:
        perm = [int(i) for i in rng.permutation(model.n)]
        m2 = model.relabeled(perm)
        ps = m2.parents
        if any(p > k for k, p in enumerate(ps)) and any(0 <= p < k for k, p in enumerate(ps)):
            perms.append(perm)
    return perms


@pytest.mark.parametrize("case", [CASES[2], CASES[5], CASES[7]], ids=[CASE_IDS[2], CASE_IDS[5], CASE_IDS[7]])
def test_relabelling_invariance(case):
    """crba/bias/aba/minv of model.relabeled(perm) at q[idx] vs the permuted results of model."""
    model = make_model(*case)
    q, qd, tau = make_state(model, case[2], 3)
    M, C = opalg.crba(model, q), opalg.bias(model, q, qd)
    A, Mi = opalg.aba(model, q, qd, tau), opalg.minv(model, q)
    perms = _non_topological_perms(model, np.random.default_rng(case[2]))
    jain = model.relabeled(perms[0])
    assert all(p > k for k, p in enumerate(jain.parents) if p >= 0)  # Jain numbering
    for perm in perms:
        m2, idx = model.relabeled(perm), model.dof_permutation(perm)
        assert sorted(idx) == list(range(model.ndof))
        ix = np.ix_(idx, idx)
        assert_close(opalg.crba(m2, q[idx]), M[ix], RTOL, "relabelled crba")
        assert_close(opalg.bias(m2, q[idx], qd[idx]), C[idx], RTOL, "relabelled bias")
        assert_close(opalg.aba(m2, q[idx], qd[idx], tau[idx]), A[idx], tol_solve(M), "relabelled aba")
        assert_close(opalg.minv(m2, q[idx]), Mi[ix], tol_solve(M), "relabelled minv")


# --------------------------------------------------------------------------- 7. planar arms
def planar_lagrangian(L, m, I, c, g, q, qd):
    """Mass matrix and bias (Coriolis + gravity) of a planar revolute arm, from its Lagrangian.

    Mass centre k at Σ_{i<k} L_i u(θ_i) + c_k u(θ_k), θ_k = q_1 + … + q_k, u(θ) = (cos θ, sin θ);
    T = Σ ½ m_k |ċ_k|² + ½ I_k θ̇_k², U = Σ m_k g y_k (gravity (0, −g, 0)).
    Returns (M, bias) as sympy matrices: M = ∂²T/∂q̇², bias = d/dt ∂T/∂q̇ − ∂T/∂q + ∂U/∂q − M q̈.
    """
    n = len(L)
    qv, qdv = sp.Matrix(q), sp.Matrix(qd)
    th = [sum(q[:k + 1]) for k in range(n)]
    T, U = 0, 0
    for k in range(n):
        pos = sum((L[i] * sp.Matrix([sp.cos(th[i]), sp.sin(th[i])]) for i in range(k)), sp.zeros(2, 1))
        pos += c[k] * sp.Matrix([sp.cos(th[k]), sp.sin(th[k])])
        vel = pos.jacobian(qv) * qdv
        thd = sum(qd[:k + 1])
        T += sp.Rational(1, 2) * m[k] * (vel.T * vel)[0, 0] + sp.Rational(1, 2) * I[k] * thd ** 2
        U += m[k] * g * pos[1]
    M = sp.hessian(T, qdv)
    dTdqd = sp.Matrix([sp.diff(T, v) for v in qd])
    # d/dt ∂T/∂q̇ without the q̈ terms: Σ_j ∂(∂T/∂q̇)/∂q_j q̇_j
    ddt = dTdqd.jacobian(qv) * qdv
    bias = ddt - sp.Matrix([sp.diff(T, v) for v in q]) + sp.Matrix([sp.diff(U, v) for v in q])
    return M, bias


def _is_zero(expr):
    return trig_zero(expr)


@pytest.fixture(scope="module")
def symbolic_arm():
    S = dict(zip("l1 l2 m1 m2 I1 I2 c1 c2 g".split(),
                 sp.symbols("l1 l2 m1 m2 I1 I2 c1 c2 g", positive=True)))
    q, qd = sp.symbols("q1 q2", real=True), sp.symbols("qd1 qd2", real=True)
    arm = opalg.planar_arm([S["l1"], S["l2"]], [S["m1"], S["m2"]], [S["I1"], S["I2"]],
                           com=[S["c1"], S["c2"]], gravity=(0, -S["g"], 0))
    M_ref, C_ref = planar_lagrangian([S["l1"], S["l2"]], [S["m1"], S["m2"]], [S["I1"], S["I2"]],
                                     [S["c1"], S["c2"]], S["g"], list(q), list(qd))
    return arm, S, q, qd, M_ref, C_ref


def test_symbolic_lagrangian_reference_is_textbook(symbolic_arm):
    """Guard on the reference: the sympy Lagrangian gives the textbook 2-link M and gravity terms."""
    _, S, (q1, q2), qd, M_ref, C_ref = symbolic_arm
    l1, m1, m2, I1, I2, c1, c2, g = (S[k] for k in "l1 m1 m2 I1 I2 c1 c2 g".split())
    book = sp.Matrix([
        [m1 * c1**2 + I1 + m2 * (l1**2 + c2**2 + 2 * l1 * c2 * sp.cos(q2)) + I2,
         m2 * (c2**2 + l1 * c2 * sp.cos(q2)) + I2],
        [m2 * (c2**2 + l1 * c2 * sp.cos(q2)) + I2, m2 * c2**2 + I2]])
    grav = sp.Matrix([(m1 * c1 + m2 * l1) * g * sp.cos(q1) + m2 * c2 * g * sp.cos(q1 + q2),
                      m2 * c2 * g * sp.cos(q1 + q2)])
    assert all(_is_zero(x) for x in (M_ref - book))
    assert all(_is_zero(x) for x in (C_ref.subs({qd[0]: 0, qd[1]: 0}) - grav))


@pytest.mark.verifies("C3", route="symbolic crba vs the sympy Lagrangian Hessian, exactly")
def test_symbolic_two_link_mass_matrix(symbolic_arm):
    """[C3] symbolic crba of a 2-link planar arm vs the Hessian of the sympy Lagrangian, exactly."""
    arm, _, q, _, M_ref, _ = symbolic_arm
    M = opalg.crba(arm, list(q))
    assert M.dtype == object and M.shape == (2, 2)
    for i, j in np.ndindex(2, 2):
        assert _is_zero(M[i, j] - M_ref[i, j]), (i, j, M[i, j], M_ref[i, j])


@pytest.mark.verifies("C4", route="symbolic bias vs the sympy Lagrangian terms, exactly")
def test_symbolic_two_link_bias(symbolic_arm):
    """[C4] symbolic bias of a 2-link arm vs the Coriolis + gravity terms of the sympy Lagrangian."""
    arm, _, q, qd, _, C_ref = symbolic_arm
    C = opalg.bias(arm, list(q), list(qd))
    assert C.dtype == object and C.shape == (2,)
    for i in range(2):
        assert _is_zero(C[i] - C_ref[i]), (i, C[i], C_ref[i])


@pytest.mark.verifies("C3", "E6", route="symbolic HφMφ*H* and LDL* vs the sympy Lagrangian ℳ, exactly")
def test_symbolic_two_link_operator_factorizations(symbolic_arm):
    """[C3]/[E6] symbolic HφMφ*H* and (I+HφK)D(I+HφK)* vs the Lagrangian mass matrix, exactly."""
    arm, _, q, _, M_ref, _ = symbolic_arm
    ops = opalg.operators(arm, list(q))
    A = ops.mass_matrix.dense()
    B = (ops.L @ ops.D @ ops.L.T).dense()
    for i, j in np.ndindex(2, 2):
        assert _is_zero(A[i, j] - M_ref[i, j]), ("HphiMphi*H*", i, j)
        assert _is_zero(sp.together(B[i, j] - M_ref[i, j])), ("LDL*", i, j)


def planar_closed_form_M(L, m, I, c, q):
    """ℳ of a planar revolute arm written by hand: Jc_k column j = ẑ × (c_k − o_j), Jω = 1 for j ≤ k."""
    n = len(L)
    th = np.cumsum(q)
    u = np.stack([np.cos(th), np.sin(th)], -1)
    joints = np.vstack([np.zeros(2), np.cumsum(L[:, None] * u, 0)[:-1]])  # joint origins o_j
    M = np.zeros((n, n))
    for k in range(n):
        ck = joints[k] + c[k] * u[k]
        Jv = np.zeros((2, n))
        for j in range(k + 1):
            r = ck - joints[j]
            Jv[:, j] = [-r[1], r[0]]
        Jw = (np.arange(n) <= k).astype(float)
        M += m[k] * Jv.T @ Jv + I[k] * np.outer(Jw, Jw)
    return M


@pytest.mark.verifies("C3", "C4",
                      route="crba vs a hand-written closed form and the sympy Lagrangian; bias vs the Lagrangian")
def test_three_link_planar_arm_numeric():
    """3-link arm, numeric parameters: crba vs a hand-written closed form and vs the sympy
    Lagrangian (lambdified), bias vs the Lagrangian's Coriolis + gravity terms."""
    L = np.array([0.9, 0.7, 0.45])
    m = np.array([2.0, 1.3, 0.6])
    I = np.array([0.15, 0.07, 0.02])
    c = np.array([0.4, 0.3, 0.25])
    g = 9.81
    arm = opalg.planar_arm(list(L), list(m), list(I), com=list(c), gravity=(0, -g, 0))
    qs, qds = sp.symbols("q1:4", real=True), sp.symbols("qd1:4", real=True)
    M_sym, C_sym = planar_lagrangian([sp.Float(x) for x in L], [sp.Float(x) for x in m],
                                     [sp.Float(x) for x in I], [sp.Float(x) for x in c],
                                     sp.Float(g), list(qs), list(qds))
    M_fn = sp.lambdify([qs], M_sym, "numpy")
    C_fn = sp.lambdify([qs, qds], C_sym, "numpy")
    rng = np.random.default_rng(3)
    for _ in range(4):
        q, qd = rng.uniform(-np.pi, np.pi, size=(2, 3))
        M = opalg.crba(arm, q)
        assert_close(M, planar_closed_form_M(L, m, I, c, q), RTOL, "C3: crba vs planar closed form")
        assert_close(M, np.array(M_fn(q), dtype=float), RTOL, "C3: crba vs sympy Lagrangian")
        assert_close(opalg.bias(arm, q, qd), np.array(C_fn(q, qd), dtype=float).ravel(), RTOL,
                     "C4: bias vs sympy Lagrangian")


# --------------------------------------------------------------------------- 8. frame Jacobian
@pytest.mark.verifies("C8", route="frame_jacobian vs complex-step derivative of the frame pose")
@pytest.mark.parametrize("case", [CASES[1], CASES[4], CASES[6]], ids=[CASE_IDS[1], CASE_IDS[4], CASE_IDS[6]])
def test_frame_jacobian_from_frame_pose(case):
    """[C8] frame_jacobian vs complex-step derivative of the frame pose (R_0k R, p_0k + R_0k p),
    ω and the frame-origin velocity both in frame coordinates."""
    model = make_model(*case)
    q = make_state(model, case[2], 1)[0]
    rng = np.random.default_rng(case[2] + 50)
    Qr, _ = np.linalg.qr(rng.normal(size=(3, 3)))
    Re = Qr * np.sign(np.linalg.det(Qr))            # a proper rotation
    for body in (model.n - 1, model.n // 2, 0):
        pe = rng.uniform(-0.5, 0.5, size=3)
        J = opalg.frame_jacobian(model, q, (body, Re, pe))
        J_ref = np.zeros((6, model.ndof))
        for j, e in enumerate(np.eye(model.ndof)):
            R, _, Rd, pd = pose_derivative(model, q, e)
            R0e, R0e_dot = R[body] @ Re, Rd[body] @ Re
            J_ref[:3, j] = R0e.T @ vee(R0e_dot @ R0e.T)
            J_ref[3:, j] = R0e.T @ (pd[body] + Rd[body] @ pe)
        assert J.shape == (6, model.ndof)
        assert_close(J, J_ref, RTOL, f"C8: frame_jacobian vs frame pose rates, body {body}")
        # columns of joints not on the path to the root are zero in the reference too
        assert np.count_nonzero(np.abs(J_ref).max(0) == 0) == np.count_nonzero(np.abs(J).max(0) == 0)


# --------------------------------------------------------------------------- property tests
@settings(max_examples=15)
@given(n=st.integers(1, 9), seed=st.integers(0, 10_000), topology=st.sampled_from(["chain", "tree"]))
def test_property_mass_matrix_and_round_trip(n, seed, topology):
    """Property over (n, seed, topology): crba vs the pose route and aba(rnea(q̈)) = q̈."""
    model = make_model(topology, n, seed)
    q, qd, qdd = make_state(model, seed, 3)
    assert_close(opalg.crba(model, q), mass_matrix_from_poses(model, q), RTOL, "C3: property")
    assert_close(opalg.aba(model, q, qd, opalg.rnea(model, q, qd, qdd)), qdd,
                 roundtrip_tol(opalg.crba(model, q), opalg.bias(model, q, qd), qdd), "E9: property")


@settings(max_examples=10)
@given(n=st.integers(1, 7), seed=st.integers(0, 10_000), topology=st.sampled_from(["chain", "tree"]))
def test_property_bias_lagrangian(n, seed, topology):
    """Property over (n, seed, topology): bias vs the complex-step Euler–Lagrange terms."""
    model = make_model(topology, n, seed)
    q, qd = make_state(model, seed, 2)
    assert_close(opalg.bias(model, q, qd), lagrangian_bias(model, q, qd), RTOL, "C4: property")
