"""opalg.closed.linearize (docs/REFERENCE.md H11): the closed system's motion linearized on its
constraint manifold, checked by routes that do not share its derivative code.

* the four-bar's small-oscillation frequency from its potential energy along the manifold
  (ω² = V''(u)/(zᵀℳz), u the crank angle, q(u) from the closed-form geometry of ``four_bar``);
* central differences of ``ClosedSystem.forward`` along the tangent basis T (A = T⁺JT, and
  JT = TA at an equilibrium), and B against columns of the dense KKT solve ``ClosedSystem.kkt``;
* an LQR on (A, B) that holds the upside-down four-bar with only its crank actuated.
"""

from __future__ import annotations

import warnings

import numpy as np
import pytest
from scipy.linalg import expm, solve_continuous_are
from scipy.optimize import brentq

import opalg
from opalg import closed
from opalg.closed import LoopClosure, four_bar, linearize, random_closed_system
from opalg.closed.simulation import mechanical_energy

from hybrid_cases import scaled
from helpers import EPS, Tol, assert_close


def _wrap(a):
    return (a + np.pi) % (2 * np.pi) - np.pi


# ------------------------------------------------------------------ the four-bar by its energy
def _crank_equilibria():
    """The crank angles of the four-bar's stable (V minimum) and unstable (V maximum) equilibria,
    at rest under gravity: V'(u) = 0 by brentq on a central difference (h = 1e-4, truncation
    h²|V'''|/6 ≈ 1e-7 → u* within ~1e-8 rad), bracketed from a 5° grid."""
    sys, _ = four_bar()
    V = lambda u: float(mechanical_energy(sys.model, four_bar(crank=u)[1], np.zeros(3)))  # noqa: E731
    us = np.linspace(-np.pi, np.pi, 73)
    Vs = np.array([V(u) for u in us])
    dV = lambda u: (V(u + 1e-4) - V(u - 1e-4)) / 2e-4  # noqa: E731
    return V, [brentq(dV, us[i] - 0.1, us[i] + 0.1, xtol=1e-13) for i in (np.argmin(Vs), np.argmax(Vs))]


@pytest.mark.verifies("H11", route="four-bar: eigenvalues of A vs ω² = V''(u)/(zᵀℳz) from the potential "
                      "energy along the crank angle (central differences of closed-form geometry)")
def test_H11_four_bar_frequency_from_the_energy():
    """The 1-dof four-bar at rest: in the crank angle u, L = ½m(u)u̇² − V(u) with m = zᵀℳz,
    z = dq/du, so at V'(u*) = 0 the motion is ü = −(V''/m) δu: eigenvalues ±iω, ω² = V''/m at the
    minimum, ±√(−V''/m) at the maximum.  Eigenvalues at an equilibrium do not depend on the chart,
    so they compare with A's directly (λ² = −ω²); the "split" spanning tree (the rocker cut in
    its middle, 4 joints, 3 closure rows) is the same mechanism and must give the same A.

    Tolerance: V'' by central differences with h = 1e-3 has truncation h²|V''''|/12 and rounding
    4ε|V|/h² ≈ 3e-8 of V'' here; Richardson's estimate |ω²(h) − ω²(h/3)|·9/8 is asserted below
    1e-6 of ω² (measured 7.5e-8), and z by central differences of q(u) (h = 1e-5) adds ≈ 1e-10.
    The residual V'(u*) ≈ 1e-8 moves ω² by less than 1e-7; tolerance 1e-5 of ω² (measured
    ≈ 1e-7 at both equilibria).
    """
    V, (u_min, u_max) = _crank_equilibria()
    for u, stable in ((u_min, True), (u_max, False)):
        sys, q = four_bar(crank=u)
        z = _wrap(four_bar(crank=u + 1e-5)[1] - four_bar(crank=u - 1e-5)[1]) / 2e-5
        m = z @ opalg.crba(sys.model, q) @ z

        def w2(h):
            return (V(u + h) - 2 * V(u) + V(u - h)) / h ** 2 / m
        omega2 = w2(1e-3 / 3)
        assert abs(w2(1e-3) - omega2) * 9 / 8 < 1e-6 * abs(omega2)
        assert (omega2 > 0) == stable
        lin = linearize(sys, q, np.zeros(3), np.zeros(3))
        assert lin.A.shape == (2, 2) and lin.rank == 2
        lam2 = np.linalg.eigvals(lin.A) ** 2
        tol = Tol(1e-5, "V'' by central differences, h = 1e-3/3: Richardson estimate < 1e-6 of ω², "
                  "z by differences ≈ 1e-10, residual V'(u*) ≈ 1e-8")
        assert_close(lam2, np.full(2, -omega2 + 0j), tol, f"λ(A)² vs −V''/m ({'min' if stable else 'max'} of V)")
        # the same mechanism on another spanning tree
        sys_s, q_s = four_bar(crank=u, closure="split")
        lin_s = linearize(sys_s, q_s, np.zeros(4), np.zeros(4))
        assert_close(np.sort_complex(np.linalg.eigvals(lin_s.A)), np.sort_complex(np.linalg.eigvals(lin.A)),
                     Tol(1e-10, "two spanning trees of one mechanism: each A to ≈ cond(KKT)·ε ≈ 1e-13"),
                     "eigenvalues of A, 'split' tree vs 'planar' tree")


# ------------------------------------------------------- central differences and the dense KKT
def _relabeled(sys, q, seed):
    """The same mechanism with its bodies relabeled at random (non-topological order) and the
    inertias scaled by 10^U(−2, 2) (mass ratios up to 10⁴): closures follow their bodies."""
    model = sys.model
    rng = np.random.default_rng(900 + seed)
    perm = [int(p) for p in rng.permutation(model.n)]
    new = scaled(model.relabeled(perm), 10.0 ** rng.uniform(-2, 2, model.n))
    inv = {old: k for k, old in enumerate(perm)}
    cl = []
    for c in sys.closures:
        kw = dict(rows=list(c.rows)) if c.kind == "rows" else dict(kind=c.kind, axis=c.axis)
        cl.append(LoopClosure((inv[c.body1], c.R1, c.p1), (-1 if c.ground else inv[c.body2], c.R2, c.p2),
                              name=c.name, **kw))
    return closed.ClosedSystem(new, cl), q[model.dof_permutation(perm)]


def _case(name):
    if name == "four_bar":
        return four_bar()
    if name == "split":
        return four_bar(crank=-0.4, closure="split")
    if name == "tree2":             # weld + ball, branch and across, every joint kind
        return random_closed_system(6, 2, seed=3)
    if name == "tree2_relabeled":
        return _relabeled(*random_closed_system(6, 2, seed=3), seed=3)
    if name == "chain2":            # a chain, a loop within the branch and one to the ground
        sys, q = random_closed_system(8, 2, seed=5, topology="chain", where=("branch", "ground"))
        return closed.ClosedSystem(scaled(sys.model, 10.0 ** np.linspace(-1.5, 1.5, 8)), sys.closures), q
    if name == "tree3":             # three closures: ball, revolute, ball
        return random_closed_system(8, 3, seed=0, kinds=("ball", "revolute", "ball"))
    raise AssertionError(name)


CASES = ["four_bar", "split", "tree2", "tree2_relabeled", "chain2", "tree3"]
H = 1e-4
CD = Tol(1e-6, "central differences, h = 1e-4: truncation h²|f‴|/6 ≈ 2e-9·|f‴|/|f′| and rounding "
         "≈ cond·ε|f|/h; an h sweep (1e-3 … 1e-6) while writing fell as h² to ≤ 5e-8 at h = 1e-4")


def _flow(sys, x, tau):
    N = sys.model.ndof
    return np.concatenate([x[N:], sys.forward(x[:N], x[N:], tau).qdd])


def _jt(sys, x, tau, T):
    """J T: the derivative of [θ̇; θ̈] (forward, index-1 equations) along T's columns by central
    differences (the points x ± hT leave the manifold by O(h²); forward is defined there)."""
    return np.stack([(_flow(sys, x + H * t, tau) - _flow(sys, x - H * t, tau)) / (2 * H) for t in T.T], 1)


@pytest.mark.verifies("H11", route="A vs central differences of forward along T (T⁺JT), JT = TA at an "
                      "equilibrium, B vs dense KKT columns (kkt), T tangent to {e = 0, G_cθ̇ = 0}")
@pytest.mark.parametrize("name", CASES)
def test_H11_against_differences_of_forward_and_the_kkt(name):
    sys, q = _case(name)
    N = sys.model.ndof
    rng = np.random.default_rng(CASES.index(name))
    G = sys.jacobian(q)
    Z = np.linalg.svd(G)[2][np.linalg.matrix_rank(G):].T
    qd = Z @ rng.normal(size=Z.shape[1])                    # moving, on the velocity manifold
    tau = rng.normal(size=N)
    passive = np.arange(N) % 3 == 1
    lin = linearize(sys, q, qd, tau, passive=passive)
    k = N - lin.rank
    assert lin.A.shape == (2 * k, 2 * k) and lin.B.shape == (2 * k, int((~passive).sum()))
    assert_close(lin.T_plus @ lin.T, np.eye(2 * k), Tol(1e-14, "orthonormal Z: ZᵀZ = I and ZᵀG_c⁺ = 0 to ε"),
                 "T⁺T = I")
    # T is tangent: G δθ = 0 and G δθ̇ + ∂(G_cθ̇)δθ = 0, the latter by central differences of jacobian
    Tq, Tv = lin.T[:N], lin.T[N:]
    D = np.stack([(sys.jacobian(q + H * e) @ qd - sys.jacobian(q - H * e) @ qd) / (2 * H) for e in Tq.T], 1)
    assert_close(G @ Tq, np.zeros_like(G @ Tq), Tol(1e-14, "G_c Z = 0 to ε‖G_c‖ (SVD)"), "G_c δθ = 0",
                 scale=np.linalg.norm(G))
    assert_close(G @ Tv + D, np.zeros_like(D), CD, "G_c δθ̇ + ∂(G_cθ̇)δθ = 0", scale=np.linalg.norm(D) + 1)
    # A = T⁺JT with JT by central differences of forward
    x = np.concatenate([q, qd])
    assert_close(lin.A, lin.T_plus @ _jt(sys, x, tau, lin.T), CD, "A vs T⁺ (central differences of forward) T")
    assert np.array_equal(lin.A[:k, :k], np.zeros((k, k))) and np.allclose(lin.A[:k, k:], np.eye(k), atol=1e-15)
    # B against the dense KKT: θ̈ is affine in T, so kkt(T + e_j) − kkt(T) is ℳ_c⁻¹e_j to rounding
    base = sys.kkt(q, qd, tau)[0]
    Mc = np.stack([sys.kkt(q, qd, tau + e)[0] - base for e in np.eye(N)[~passive]], 1)
    M = opalg.crba(sys.model, q)
    kkt = np.block([[M, G.T], [G, np.zeros((sys.m, sys.m))]])
    cond = np.linalg.cond(kkt)
    tolB = Tol(100 * cond * EPS * (1 + np.abs(base).max() / np.abs(Mc).max()),
               f"100·cond(KKT)·ε (cond = {cond:.1e}) of the differenced solves, relative to |θ̈|/|ℳ_c⁻¹|")
    assert_close(lin.B, lin.T_plus @ np.concatenate([np.zeros_like(Mc), Mc]), tolB,
                 "B vs T⁺[0; dense KKT columns]")
    # at an equilibrium (θ̇ = 0, T = gravity's C(θ, 0): θ̈ = 0, λ = 0) the tangent space is invariant
    tau_eq = opalg.bias(sys.model, q, np.zeros(N))
    lin0 = linearize(sys, q, np.zeros(N), tau_eq)
    assert_close(lin0.f0, np.zeros(2 * k), Tol(1e-12, "θ̈ = 0 to cond(KKT)·ε"), "f0 at equilibrium",
                 scale=np.abs(tau_eq).max())
    JT = _jt(sys, np.concatenate([q, np.zeros(N)]), tau_eq, lin0.T)
    assert_close(JT, lin0.T @ lin0.A, CD, "JT = TA at an equilibrium (J by central differences)")


def _chart_inverse(sys, qbar, qdbar, Z, xi):
    """x(ξ): the manifold point with Zᵀ(q − q̄) = a, e(q) = 0 (Newton on [e; Zᵀ(q − q̄) − a], square
    when G_c has full row rank) and G_cθ̇ = 0, Zᵀ(θ̇ − θ̇̄) = b — the chart's inverse, built here
    from e(q) and G_c alone."""
    k = Z.shape[1]
    a, b = xi[:k], xi[k:]
    q = qbar + Z @ a
    for _ in range(30):
        F = np.concatenate([sys.constraint_error(q), Z.T @ (q - qbar) - a])
        if np.abs(F).max() < 1e-15:
            break
        q = q - np.linalg.solve(np.vstack([sys.jacobian(q), Z.T]), F)
    qd = np.linalg.solve(np.vstack([sys.jacobian(q), Z.T]), np.concatenate([np.zeros(sys.m), Z.T @ qdbar + b]))
    return q, qd


@pytest.mark.verifies("H11", route="A vs central differences of the motion in the chart ξ = T⁺(x − x̄), "
                      "points on the manifold by Newton on e(q) (θ̇ ≠ 0)")
@pytest.mark.parametrize("name", ["four_bar", "tree2", "chain2"])
def test_H11_A_is_the_motion_in_the_chart(name):
    """F(ξ) = T⁺[θ̇; θ̈](x(ξ)) is the motion written in the chart (T⁺ read off the result: only Z is
    used); its Jacobian at 0 must be A.  This checks T (the −G_c⁺∂(G_cθ̇)Z block) and A together,
    off equilibrium.  Central differences in ξ with h = 1e-4: truncation h²|F‴|/6, Newton residual
    1e-15/h ≈ 1e-11; the tolerance CD as above (measured ≤ 3e-8)."""
    sys, q = _case(name)
    N = sys.model.ndof
    rng = np.random.default_rng(50 + CASES.index(name))
    k = N - sys.m
    qd = np.linalg.svd(sys.jacobian(q))[2][sys.m:].T @ rng.normal(size=k)
    tau = rng.normal(size=N)
    lin = linearize(sys, q, qd, tau)
    Z = lin.T_plus[:k, :N].T

    def F(xi):
        qq, vv = _chart_inverse(sys, q, qd, Z, xi)
        return lin.T_plus @ _flow(sys, np.concatenate([qq, vv]), tau)
    dF = np.stack([(F(H * e) - F(-H * e)) / (2 * H) for e in np.eye(2 * k)], 1)
    assert_close(lin.A, dF, CD, "A vs ∂/∂ξ of the motion in the chart")
    assert_close(lin.f0, F(np.zeros(2 * k)), Tol(1e-13, "x(0) = x̄ to Newton's 1e-15"), "f0 = F(0)",
                 scale=np.abs(lin.f0).max())


@pytest.mark.verifies("H11", route="four-bar closed by a 5-row revolute closure (rank 2 of 5) vs the "
                      "2-row planar closure: same A, B up to the sign of Z")
def test_H11_dependent_rows_give_the_same_linearization():
    """The revolute closure of a planar four-bar has three rows that vanish identically (H9's rank
    trap): linearize uses forward's rank (2), so T has 2(3 − 2) columns and A, B equal those of the
    2-row planar closure; Z = ±z, so A is the same and B flips with the sign."""
    sys_p, q = four_bar(closure="planar")
    sys_r, _ = four_bar(closure="revolute")
    rng = np.random.default_rng(7)
    z = np.linalg.svd(sys_p.jacobian(q))[2][-1]
    qd, tau = 0.7 * z, rng.normal(size=3)
    lp = linearize(sys_p, q, qd, tau)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", closed.RankDeficientWarning)
        lr = linearize(sys_r, q, qd, tau)
    assert lr.rank == 2 and lr.A.shape == (2, 2)
    sign = float(np.sign(lp.T[:3, 0] @ lr.T[:3, 0]))
    tol = Tol(1e-11, "two closure row sets of one constraint: each A, B to ≈ cond(KKT)·ε ≈ 1e-13")
    assert_close(lr.A, lp.A, tol, "A, revolute (5 rows) vs planar (2 rows)")
    assert_close(sign * lr.B, lp.B, tol, "B, revolute vs planar (sign of Z)")


# ----------------------------------------------------------------------------- LQR
@pytest.mark.verifies("H11", route="LQR on (A, B) holds the upside-down four-bar with the crank actuated "
                      "(closed.simulate, Baumgarte (10, 10)); the open loop falls")
def test_H11_lqr_holds_the_four_bar_upside_down():
    """At the V maximum the four-bar is unstable (λ = ±2.83 s⁻¹); only the crank is actuated.
    LQR with Q = I, R = 1 in the chart ξ = T⁺[q − q̄; θ̇], τ = S_a*(−Kξ).  From the manifold point
    at crank u* + 0.05 rad the linear closed loop gives |ξ(t)| ≤ ‖exp((A − BK)t)‖₂|ξ₀|; the
    nonlinear run must stay within 10× that plus the integration and Baumgarte error (1e-6), and
    end below 1e-3 of |ξ₀| after 5 s (poles ≈ −2.6, −3.1: e^{−2.6·5} ≈ 2e-6).  The same start
    without control leaves (|ξ| > 10|ξ₀| within 2 s): the test is not hollow.
    """
    _, (_, u_up) = _crank_equilibria()
    sys, qbar = four_bar(crank=u_up)
    passive = np.array([False, True, True])
    lin = linearize(sys, qbar, np.zeros(3), np.zeros(3), passive=passive)
    assert np.max(np.linalg.eigvals(lin.A).real) > 1.0
    P = solve_continuous_are(lin.A, lin.B, np.eye(2), np.eye(1))
    K = lin.B.T @ P
    Acl = lin.A - lin.B @ K
    assert np.all(np.linalg.eigvals(Acl).real < 0)

    def xi(q, v):
        return lin.T_plus @ np.concatenate([_wrap(q - qbar), v])

    def tau(t, q, v):
        out = np.zeros(3)
        out[~passive] = -K @ xi(q, v)
        return out

    q0 = four_bar(crank=u_up + 0.05)[1]
    x0 = np.linalg.norm(xi(q0, np.zeros(3)))
    t = np.linspace(0.0, 5.0, 26)
    run = closed.simulate(sys, q0, np.zeros(3), (0.0, 5.0), tau=tau, t_eval=t)
    assert run.status == "completed"
    xs = np.linalg.norm([xi(q, v) for q, v in zip(run.q, run.v)], axis=1)
    bound = np.array([10 * np.linalg.norm(expm(Acl * s), 2) * x0 + 1e-6 for s in t])
    assert np.all(xs <= bound), np.max(xs / bound)
    assert xs[-1] < 1e-3 * x0
    free = closed.simulate(sys, q0, np.zeros(3), (0.0, 2.0), t_eval=np.linspace(0.0, 2.0, 11))
    assert np.linalg.norm([xi(q, v) for q, v in zip(free.q, free.v)], axis=1).max() > 10 * x0


def test_linearize_bad_input():
    sys, q = four_bar()
    z3 = np.zeros(3)
    for call, err, msg in [
        (lambda: linearize("sys", q, z3, z3), opalg.ModelError, "system"),
        (lambda: linearize(sys, q[:2], z3, z3), opalg.StateError, r"\bq\b"),
        (lambda: linearize(sys, np.stack([q, q]), z3, z3), opalg.StateError, r"\bq\b.*one real state"),
        (lambda: linearize(sys, q, [np.nan, 0, 0], z3), opalg.StateError, r"\bqd\b"),
        (lambda: linearize(sys, q, z3, np.ones(4)), opalg.StateError, r"\btau\b"),
        (lambda: linearize(sys, q + 0.1, z3, z3), opalg.StateError, r"\bq\b is off .*max \|e\(q\)\| = "),
        (lambda: linearize(sys, q, np.ones(3), z3), opalg.StateError, r"\bqd\b violates .*max \|G_c qd\|"),
        (lambda: linearize(sys, q, z3, z3, passive=[True]), opalg.StateError, "passive"),
        (lambda: linearize(sys, q, z3, z3, tol=-1.0), opalg.StateError, "tol"),
    ]:
        with pytest.raises(err, match=msg):
            call()


def _jt_complex(sys, x, tau, T, dense=False):
    """J T by complex step of forward (or of the dense KKT solve) along T's columns:
    Im f(x + i h t) / h, h = 1e-30, exact to rounding (the compliance solve is complex symmetric)."""
    N = sys.model.ndof
    h = 1e-30
    cols = []
    for t in T.T:
        z = x + 1j * h * t
        qdd = sys.kkt(z[:N], z[N:], tau + 0j)[0] if dense else sys.forward(z[:N], z[N:], tau + 0j).qdd
        cols.append(np.concatenate([z[N:], qdd]).imag / h)
    return np.stack(cols, 1)


@pytest.mark.verifies("H11", "H5", route="A vs complex step of forward (tree passes, compliance solve) and of the "
                      "dense KKT LU solve along T")
@pytest.mark.parametrize("name", CASES)
def test_H11_against_complex_step_of_forward(name):
    """Two routes exact to rounding: linearize differentiates the KKT equations (E14 and complex
    steps of jacobian/drift), the complex step runs forward itself on a complex state.  Each solve
    amplifies rounding by at most cond(KKT), so the tolerance is 100·cond(KKT)·ε of |A| (k = 100 as
    for the ABA derivatives, E15; measured worst 0.08·cond·ε over these cases)."""
    sys, q = _case(name)
    N = sys.model.ndof
    rng = np.random.default_rng(40 + CASES.index(name))
    G = sys.jacobian(q)
    Z = np.linalg.svd(G)[2][np.linalg.matrix_rank(G):].T
    qd = Z @ rng.normal(size=Z.shape[1])
    tau = rng.normal(size=N)
    lin = linearize(sys, q, qd, tau)
    M = opalg.crba(sys.model, q)
    cond = np.linalg.cond(np.block([[M, G.T], [G, np.zeros((sys.m, sys.m))]]))
    JT = _jt_complex(sys, np.concatenate([q, qd]), tau, lin.T)
    tol = Tol(100 * cond * EPS, f"100·cond(KKT)·ε, cond = {cond:.1e}")
    assert_close(lin.A, lin.T_plus @ JT, tol, "A vs T⁺ (complex step of forward) T")
    JT_dense = _jt_complex(sys, np.concatenate([q, qd]), tau, lin.T, dense=True)
    assert_close(lin.A, lin.T_plus @ JT_dense, tol, "A vs T⁺ (complex step of the dense KKT LU solve) T")
