"""opalg.flex against independent routes (docs/REFERENCE.md K3–K6).

Oracles (tests/flex_oracle.py): ℳ = Σ J_eᵀ M_e J_e with element Jacobians by complex step of
4x4 poses composed from rotation matrices; the bias from the Lagrangian
ℳ̇ẋ − ½∇(ẋᵀℳẋ) + ∇U + Dη̇ by complex step; dense solves.  Random models: chains and trees
of 1–5 bodies with every joint kind of opalg.random_model (R, P, H, 2–3 axis sequences),
0–3 modes per body with translational and rotational mode shapes, random attachment nodes.
Restriction: one state at a time (no batches), numeric models only.

Tolerances: ``PRODUCTS`` measured over SWEEP for the routes without a solve; k·cond(ℳ)·ε with
cond(ℳ) of the test's state where one side solves with ℳ (the largest err/(cond(ℳ)·ε) of SWEEP is
quoted at each); the energy tests' bounds are the integrator's (not round-off).
"""

from __future__ import annotations

import numpy as np
import pytest

import opalg
from opalg import flex
from opalg.errors import ModelError, StateError

from flex_oracle import grad_potential, mass_matrix, random_flex_model, H_CS
from helpers import EPS, Tol, assert_close, cond_tol, measured, roundtrip_tol

SWEEP = ("300 random flexible models (chains and trees of 1-5 bodies, every joint kind, 0-3 modes; "
         "and 300 mode-free trees of 4) under 3 BLAS/SIMD kernels")
#: Products and sums only (element assembly, complex-step Lagrangian, rigid limits): measured.
PRODUCTS = measured(1e-13, 3.7e-15, SWEEP)
#: k of k·cond(ℳ)·ε (SWEEP: ≤ 1.0 for aba vs the dense solve, 2.6 hybrid, 0.6 the rigid aba).
K_SOLVE = 100


CASES = [(n, topo, seed) for seed in range(3) for n, topo in ((1, "chain"), (3, "chain"), (5, "tree"))]


def _state(fm, seed, scale=0.3):
    return np.random.default_rng(100 + seed).normal(size=(3, fm.ndof)) * scale


@pytest.mark.verifies("K3", route="flex.crba vs Σ J_eᵀM_eJ_e, complex-step Jacobians of 4x4 element poses")
@pytest.mark.parametrize("n,topo,seed", CASES)
def test_crba_vs_element_assembly(n, topo, seed):
    """[K3] ℳ = ℋΦ𝓜Φ*ℋ* equals Σ J_eᵀ M_e J_e (complex-step Jacobians): rounding only
    (complex step has no truncation error at h = 1e-30); PRODUCTS (was 1e-12)."""
    fm = random_flex_model(n, topo, seed)
    x = _state(fm, seed)[0]
    assert_close(flex.crba(fm, x), mass_matrix(fm, x), PRODUCTS, "flex ℳ vs Σ JᵀMJ")


@pytest.mark.verifies("K4", route="flex.rnea vs ℳẍ + ℳ̇ẋ − ½∇(ẋᵀℳẋ) + ∇U + 𝒟ẋ by complex step of crba and the oracle's U")
@pytest.mark.parametrize("n,topo,seed", CASES)
def test_rnea_vs_lagrangian(n, topo, seed):
    """[K4] rnea = ℳẍ + C + ∇U + Dη̇ with C = ℳ̇ẋ − ½∇(ẋᵀℳẋ) by complex step of crba
    (itself checked against the element assembly) and ∇U by complex step of the oracle's
    potential (gravity + modal strain).  Rounding only: PRODUCTS (was 1e-11)."""
    fm = random_flex_model(n, topo, seed)
    x, v, a = _state(fm, seed)
    Mdot_v = flex.crba(fm, x + 1j * H_CS * v).imag / H_CS @ v
    half_grad = np.array([0.5 * v @ (flex.crba(fm, x + 1j * H_CS * e).imag / H_CS) @ v for e in np.eye(fm.ndof)])
    damp = np.zeros(fm.ndof)
    for k, b in enumerate(fm.bodies):
        damp[fm.eta_slice[k]] = b.D @ v[fm.eta_slice[k]]
    lag = flex.crba(fm, x) @ a + Mdot_v - half_grad + grad_potential(fm, x) + damp
    assert_close(flex.rnea(fm, x, v, a), lag, PRODUCTS, "flex rnea vs Lagrangian")


@pytest.mark.verifies("K5", route="flex.aba vs flex.rnea (round trip) and vs an LU solve of flex.crba")
@pytest.mark.parametrize("n,topo,seed", CASES)
def test_aba_inverts_rnea_and_matches_dense(n, topo, seed):
    """[K5] aba∘rnea = identity and aba = ℳ⁻¹(T − rnea(x, v, 0)) (dense solve).  Both solve with
    ℳ (was max(1e-12, cond(ℳ)·1e-15)): roundtrip_tol, and K_SOLVE·cond(ℳ)·ε."""
    fm = random_flex_model(n, topo, seed)
    x, v, a = _state(fm, seed)
    M = flex.crba(fm, x)
    C = flex.rnea(fm, x, v, np.zeros(fm.ndof))
    assert_close(flex.aba(fm, x, v, flex.rnea(fm, x, v, a)), a, roundtrip_tol(M, C, a, k=K_SOLVE), "aba∘rnea")
    T = np.random.default_rng(seed).normal(size=fm.ndof)
    dense = np.linalg.solve(M, T - C)
    assert_close(flex.aba(fm, x, v, T), dense, cond_tol(np.linalg.cond(M), K_SOLVE), "aba vs dense solve")


@pytest.mark.verifies("K5", route="flex.hybrid vs the dense partitioned system of flex.crba/rnea (LU on ℳ_ηη)")
@pytest.mark.parametrize("n,topo,seed", CASES)
def test_hybrid_vs_partitioned_solve(n, topo, seed):
    """[K5] hybrid (joints prescribed, modes free) vs the dense partitioned system:
    ℳ_ηη η̈ = τ_η − h_η − ℳ_ηθ θ̈,  τ_θ = ℳ_θη η̈ + ℳ_θθ θ̈ + h_θ  (h = rnea at ẍ = 0)."""
    fm = random_flex_model(n, topo, seed)
    x, v, _ = _state(fm, seed)
    eta = np.concatenate([np.arange(s.start, s.stop) for s in fm.eta_slice]).astype(int)
    th = np.concatenate([np.arange(s.start, s.stop) for s in fm.theta_slice]).astype(int)
    rng = np.random.default_rng(seed)
    thdd, tau_eta = rng.normal(size=th.size), rng.normal(size=eta.size)
    M, h = flex.crba(fm, x), flex.rnea(fm, x, v, np.zeros(fm.ndof))
    eta_dd = (np.linalg.solve(M[np.ix_(eta, eta)], tau_eta - h[eta] - M[np.ix_(eta, th)] @ thdd)
              if eta.size else eta * 0.0)
    tau_th = M[np.ix_(th, eta)] @ eta_dd + M[np.ix_(th, th)] @ thdd + h[th]
    e, t = flex.hybrid(fm, x, v, thdd, tau_eta)
    # solves with ℳ_ηη, cond(ℳ_ηη) ≤ cond(ℳ) (was max(1e-12, cond(ℳ)·1e-15))
    assert_close(np.concatenate([e, t]), np.concatenate([eta_dd, tau_th]), cond_tol(np.linalg.cond(M), K_SOLVE),
                 "hybrid vs partitioned")


@pytest.mark.verifies("K6", route="flex.crba/rnea/aba without modes vs opalg.crba/rnea/aba on rigidify()")
@pytest.mark.parametrize("topo,seed", [("chain", 0), ("tree", 1), ("tree", 2)])
def test_rigid_limit(topo, seed):
    """[K6] No modes: flex crba/rnea/aba equal opalg's on rigidify() (rounding: PRODUCTS; the two
    ABAs solve with ℳ, K_SOLVE·cond(ℳ)·ε, was 1e-12)."""
    fm = random_flex_model(4, topo, seed, max_modes=0)
    rigid = fm.rigidify()
    x, v, a = _state(fm, seed)
    assert_close(flex.crba(fm, x), opalg.crba(rigid, x), PRODUCTS, "crba rigid limit")
    assert_close(flex.rnea(fm, x, v, a), opalg.rnea(rigid, x, v, a), PRODUCTS, "rnea rigid limit")
    assert_close(flex.aba(fm, x, v, a), opalg.aba(rigid, x, v, a), cond_tol(np.linalg.cond(opalg.crba(rigid, x)), K_SOLVE),
                 "aba rigid limit")


@pytest.mark.verifies("K6", route="joint rows of flex.crba/rnea at η = η̇ = η̈ = 0 vs opalg on rigidify()")
@pytest.mark.parametrize("seed", range(3))
def test_rigidify_is_the_undeformed_model(seed):
    """[K6] With modes, the joint rows at η = η̇ = η̈ = 0 are the rigid model's dynamics."""
    fm = random_flex_model(4, "tree", seed)
    rigid = fm.rigidify()
    th = np.concatenate([np.arange(s.start, s.stop) for s in fm.theta_slice]).astype(int)
    q, qd, qdd = np.random.default_rng(seed).normal(size=(3, rigid.ndof))
    x, v, a = np.zeros((3, fm.ndof))
    x[th], v[th], a[th] = q, qd, qdd
    assert_close(flex.crba(fm, x)[np.ix_(th, th)], opalg.crba(rigid, q), PRODUCTS, "ℳ_θθ at η = 0")
    assert_close(flex.rnea(fm, x, v, a)[th], opalg.rnea(rigid, q, qd, qdd), PRODUCTS, "T_θ at η = 0")


def test_two_link_arm_sizes_and_modes():
    """two_link_arm(modes) for modes = 0..4: N = 2(modes + 1).  With the exact clamped-free
    shapes, the lumped modal mass with 40 nodes gives frequencies within 1 % (vector norm) of the
    continuum beam's (β_iL)²√(EI/(ρA L⁴)) (lumping error O(1/nodes²))."""
    for m in range(5):
        assert flex.examples.two_link_arm(modes=m).ndof == 2 * (m + 1)
    fm = flex.examples.two_link_arm(modes=3, nodes=40, gravity=(0, 0, 0))
    b = fm.bodies[0]
    from opalg.flex.kinematics import node_inertia
    Mee = node_inertia(b, np.zeros(3))[:3, :3]
    w = np.sqrt(np.sort(np.linalg.eigvals(np.linalg.solve(Mee, b.K)).real))
    exact = flex.examples.cantilever_roots(3) ** 2 * np.sqrt(20.0 / 1.0)
    assert_close(w, exact, 1e-2, "clamped-free frequencies")          # not round-off: the lumping error


def test_errors():
    """Bad input: ModelError / StateError naming the problem."""
    fm = flex.examples.two_link_arm(modes=1)
    with pytest.raises(StateError, match="shape"):
        flex.crba(fm, np.zeros(3))
    with pytest.raises(StateError, match="non-finite"):
        flex.rnea(fm, np.full(fm.ndof, np.nan), np.zeros(fm.ndof), np.zeros(fm.ndof))
    b = fm.bodies[0]
    with pytest.raises(ModelError, match="attach node 12"):
        flex.FlexModel([-1, 0], fm.joints, fm.placements, fm.bodies, attach=[-1, 12])
    with pytest.raises(ModelError, match="root"):
        flex.FlexModel([-1, 0], fm.joints, fm.placements, fm.bodies, attach=[0, 1])
    with pytest.raises(ModelError, match="positive semidefinite"):
        flex.FlexBody(b.hub, b.node_positions, b.node_inertias, b.Phi, b.Psi, K=-np.eye(1))
    with pytest.raises(ModelError, match="Phi has shape"):
        flex.FlexBody(b.hub, b.node_positions, b.node_inertias, b.Phi[:2], b.Psi, K=np.eye(1))
    massless = [(0.0, np.zeros(3), np.zeros((3, 3)))] * b.p
    with pytest.raises(ModelError, match="modes move no mass"):
        flex.FlexModel([-1], fm.joints[:1], fm.placements[:1],
                       [flex.FlexBody((1.0, np.zeros(3), 0.1 * np.eye(3)), b.node_positions, massless, b.Phi, b.Psi,
                                      K=np.eye(1))])
    with pytest.raises(StateError, match="theta_dd"):
        flex.hybrid(fm, np.zeros(fm.ndof), np.zeros(fm.ndof), [1.0])


def test_damping_validated_on_assignment():
    """FlexBody.D is a property: an assignment is checked (shape, finiteness, symmetry,
    positive semidefiniteness) like the constructor argument, and the stored matrix is
    read-only so that an in-place edit cannot bypass the check; the dynamics use the new D."""
    fm = flex.examples.two_link_arm(modes=2, gravity=(0, 0, 0))
    b = fm.bodies[0]
    for bad, msg in (([[1.0]], "shape"), ([[1.0, 2.0], [0.0, 1.0]], "symmetric"),
                     (-np.eye(2), "positive semidefinite"), ([[np.nan, 0], [0, 1]], "non-finite"),
                     ("abc", "array of numbers")):
        with pytest.raises(ModelError, match=msg):
            b.D = bad
    assert np.array_equal(b.D, np.zeros((2, 2)))             # exact: a refused value leaves D unchanged
    with pytest.raises(ValueError):
        b.D[0, 0] = -1.0
    x, v = np.zeros(fm.ndof), np.zeros(fm.ndof)
    v[:2] = [1.0, -2.0]
    b.D = [[3.0, 1.0], [1.0, 2.0]]
    # at x = 0 with only modal rates: T_η = C_η + D η̇; the difference with D = 0 is D η̇.  The two
    # calls share every operation but the last sum fl(N + Dη̇) (Dη̇ is integer, exact), so the
    # difference is off by at most 2ε(‖N‖ + ‖Dη̇‖), N the undamped call (was 1e-14)
    T_damped = flex.rnea(fm, x, v, 0 * x)
    b.D = np.zeros((2, 2))
    T_plain, Dv = flex.rnea(fm, x, v, 0 * x), np.r_[[3.0 - 2.0, 1.0 - 4.0], np.zeros(4)]
    tol = Tol(4 * EPS * (1 + np.linalg.norm(T_plain) / np.linalg.norm(Dv)), "4ε(1 + ‖N‖/‖Dη̇‖): one rounded sum")
    assert_close(T_damped - T_plain, Dv, tol, "D η̇ in rnea")


def _energy(fm, x, v):
    from flex_oracle import potential
    return 0.5 * v @ flex.crba(fm, x) @ v + potential(fm, x)


def _rk4(fm, x, v, dt, steps):
    def f(y):
        return np.concatenate([y[fm.ndof:], flex.aba(fm, y[:fm.ndof], y[fm.ndof:], np.zeros(fm.ndof))])
    y = np.concatenate([x, v])
    for _ in range(steps):
        k1 = f(y); k2 = f(y + dt / 2 * k1); k3 = f(y + dt / 2 * k2); k4 = f(y + dt * k3)
        y = y + dt / 6 * (k1 + 2 * k2 + 2 * k3 + k4)
    return y[:fm.ndof], y[fm.ndof:]


@pytest.mark.parametrize("damping", [0.0, 0.05])
def test_energy_two_link_arm(damping):
    """[K4, K5] Kinetic + gravity + modal strain energy (oracle potential) over 0.1 s of RK4.
    Undamped: the drift is integration error only — it falls by > 10 when dt halves (RK4:
    ~2⁴–2⁵; a modelling error would not shrink) and is < 1e-6 relative at dt = 0.5 ms.
    Damped (ζ = 0.05): the energy falls by more than the undamped drift."""
    fm = flex.examples.two_link_arm(modes=2, damping=damping)
    x = np.zeros(fm.ndof); x[[2, 5]] = [0.4, -0.6]; x[[0, 3]] = [0.01, -0.02]
    v = np.zeros(fm.ndof); v[[2, 5]] = [1.0, -1.5]
    energy0 = _energy(fm, x, v)
    errs = [(_energy(fm, *_rk4(fm, x, v, dt, n)) - energy0) / abs(energy0) for dt, n in ((1e-3, 100), (5e-4, 200))]
    if damping == 0:
        assert abs(errs[1]) < 1e-6 and abs(errs[0]) > 10 * abs(errs[1]), errs
    else:
        assert errs[1] < -1e-4, errs


def test_energy_random_tree():
    """[K4, K5] Energy conservation on a random undamped flexible tree (all joint kinds)."""
    fm = random_flex_model(3, "tree", 7)
    for b in fm.bodies:
        b.D = np.zeros_like(b.D)
    x, v, _ = _state(fm, 7, 0.2)
    energy0 = _energy(fm, x, v)
    x1, v1 = _rk4(fm, x, v, 1e-3, 100)
    assert abs(_energy(fm, x1, v1) - energy0) <= 1e-6 * abs(energy0) + 1e-9


def test_singular_articulated_pivot_names_the_body():
    """A point mass on the joint axis (massless hub, one node at the origin, no rotary inertia)
    gives the revolute row of ℋPℋ* zero: aba and operators refuse naming body 0, while hybrid,
    which eliminates only the (massive) modal row, still solves."""
    base = flex.examples.two_link_arm(modes=1)
    point = flex.FlexBody((0.0, np.zeros(3), np.zeros((3, 3))), [[0.0, 0, 0]], [(1.0, np.zeros(3), np.zeros((3, 3)))],
                          Phi=[[[0.0], [1.0], [0.0]]], K=[[1.0]])
    fm = flex.FlexModel([-1], base.joints[:1], [(np.eye(3), np.zeros(3))], [point])
    z = np.zeros(fm.ndof)
    with pytest.raises(opalg.SingularConfigurationError, match=r"body 0 .*pivot D\(k\)"):
        flex.aba(fm, z, z, z)
    with pytest.raises(opalg.SingularConfigurationError, match=r"body 0 .*pivot D\(k\)"):
        flex.operators(fm, z).D
    eta_dd, _ = flex.hybrid(fm, z, z, [0.0])
    assert np.all(np.isfinite(eta_dd))
