"""rnea_derivatives and aba_derivatives (docs/REFERENCE.md E13–E15) against complex step and sympy.

Complex step: f(x + i h e) = f(x) + i h f′(x)·e + O(h²), so Im f / h with h = 1e-30 is the
derivative to rounding, with no subtractive cancellation — an independent route that only runs
`opalg.rnea` / `opalg.aba` on complex states.  Configuration directions go through
`opalg.integrate(model, q, i h e_j)`, which for a free joint is the tangent-space (body twist)
derivative that the functions document, and q + i h e_j for every other joint.

Tolerances.  The tangent recursion and the complex-step RNEA sum the same kind of terms (products
of ≤ depth transforms with inertias and rates), so they agree to a few ε of the size of those terms:
RTOL_ID is measured (module constant).  The forward-dynamics derivatives multiply by ℳ⁻¹, so their
bound is k·cond(ℳ)·ε (``cond_tol``), cond(ℳ) computed in the test.
"""

from __future__ import annotations

import numpy as np
import pytest

import opalg

from helpers import Tol, assert_close, cond_tol, make_model, measured, trig_zero
from hybrid_cases import scaled

H = 1e-30
SWEEP = "96 random states: chains, trees, relabelled trees, floating roots, masses over 10^±3"
#: measured worst 1.1e-15 (relative Frobenius) over SWEEP under the default kernel
RTOL_ID = measured(1e-12, 1.1e-15, SWEEP)
#: k of k·cond(ℳ)·ε for ∂q̈ (measured ≤ 0.37 cond(ℳ)·ε over SWEEP, the dense inverse included)
K_SOLVE = 100


def _model(kind: str, seed: int, floating: bool, ratio: float):
    m = make_model(kind, 6, seed, joints="all")
    if floating:     # the same tree on a free root (K8): rebuild with the root's joint replaced
        m = opalg.random_model(6, "tree" if kind != "chain" else "chain", seed=seed, joints="all", floating=True)
    if ratio:
        m = scaled(m, 10.0 ** np.random.default_rng(700 + seed).uniform(-ratio, ratio, m.n))
    return m


def _state(m, seed):
    rng = np.random.default_rng(seed)
    q = opalg.integrate(m, opalg.neutral(m), rng.uniform(-np.pi, np.pi, m.nv))
    return q, rng.normal(size=m.nv), rng.normal(size=m.nv), rng.normal(size=(m.n, 6))


def _cs_q(f, m, q):
    """Columns d/dε f(integrate(q, ε e_j)) by complex step."""
    return np.stack([f(opalg.integrate(m, q, 1j * H * e)).imag / H for e in np.eye(m.nv)], -1)


def _cs(f, x):
    return np.stack([f(x + 1j * H * e).imag / H for e in np.eye(x.size)], -1)


CASES = [(kind, seed, fl, ratio) for kind in ("chain", "tree", "relabeled") for seed in range(2)
         for fl in (False, True) for ratio in (0.0, 3.0) if not (fl and kind == "relabeled")]


@pytest.mark.verifies("E13", "E14", route="tangent Newton–Euler recursion vs complex step of rnea "
                      "(integrate's body twist for free joints)")
@pytest.mark.parametrize("kind,seed,floating,ratio", CASES)
def test_E14_rnea_derivatives_against_complex_step(kind, seed, floating, ratio):
    m = _model(kind, seed, floating, ratio)
    q, qd, qdd, fe = _state(m, seed)
    for f_ext in (None, fe):
        dq, dqd = opalg.rnea_derivatives(m, q, qd, qdd, f_ext=f_ext)
        ref_q = _cs_q(lambda x: opalg.rnea(m, x, qd, qdd, f_ext=f_ext), m, q)
        ref_qd = _cs(lambda x: opalg.rnea(m, q, x, qdd, f_ext=f_ext), qd)
        assert_close(dq, ref_q, RTOL_ID, f"{kind} dtau_dq")
        assert_close(dqd, ref_qd, RTOL_ID, f"{kind} dtau_dqd")


@pytest.mark.verifies("E15", route="ABA derivatives through the innovations passes vs complex step of aba")
@pytest.mark.parametrize("kind,seed,floating,ratio", CASES)
def test_E15_aba_derivatives_against_complex_step(kind, seed, floating, ratio):
    m = _model(kind, seed, floating, ratio)
    q, qd, _, fe = _state(m, seed)
    M = opalg.crba(m, q)
    tol = cond_tol(np.linalg.cond(M), K_SOLVE)
    tau = np.linalg.norm(M, 2) * np.random.default_rng(seed).normal(size=m.nv)
    dq, dqd, dtau = opalg.aba_derivatives(m, q, qd, tau, f_ext=fe)
    assert_close(dq, _cs_q(lambda x: opalg.aba(m, x, qd, tau, f_ext=fe), m, q), tol, f"{kind} dqdd_dq")
    assert_close(dqd, _cs(lambda x: opalg.aba(m, q, x, tau, f_ext=fe), qd), tol, f"{kind} dqdd_dqd")
    assert_close(dtau, _cs(lambda x: opalg.aba(m, q, qd, x, f_ext=fe), tau), tol, f"{kind} dqdd_dtau")
    assert_close(dtau, np.linalg.inv(M), tol, f"{kind} dqdd_dtau vs dense inverse")


@pytest.mark.verifies("E14", "E15", route="batched call vs one call per state; complex states pass through")
def test_batched_and_complex_states():
    m = opalg.random_model(5, "tree", seed=4, joints="all")
    rng = np.random.default_rng(4)
    q, qd, tau = rng.normal(size=(3, 2, 3, m.ndof))
    batch = opalg.aba_derivatives(m, q, qd, tau)
    for idx in np.ndindex(2, 3):
        one = opalg.aba_derivatives(m, q[idx], qd[idx], tau[idx])
        cond = np.linalg.cond(opalg.crba(m, q[idx]))
        for a, b in zip(batch, one):
            assert_close(a[idx], b, cond_tol(cond, K_SOLVE), "batched aba_derivatives")
    # the second derivative by complex step through the first: d/dθ̇_0 of ∂T/∂θ̇ (= ∂²T/∂θ̇²)
    dq_c, dqd_c = opalg.rnea_derivatives(m, q[0, 0], qd[0, 0] + 1j * H * np.eye(m.ndof)[0], tau[0, 0])
    h2 = 1e-6       # central difference of the real result: error O(h2²·|∂³T|) ≈ 1e-12 relative
    up = opalg.rnea_derivatives(m, q[0, 0], qd[0, 0] + h2 * np.eye(m.ndof)[0], tau[0, 0])[1]
    dn = opalg.rnea_derivatives(m, q[0, 0], qd[0, 0] - h2 * np.eye(m.ndof)[0], tau[0, 0])[1]
    assert_close(dqd_c.imag / H, (up - dn) / (2 * h2), Tol(1e-8, "central difference, h = 1e-6: "
                 "truncation h²·|∂³T| ≈ 1e-12 plus rounding ε/h ≈ 2e-10"), "∂²T/∂θ̇² complex vs central")


@pytest.mark.verifies("E14", route="sympy differentiation of the symbolic rnea, exactly")
def test_E14_sympy_exact():
    import sympy as sp

    arm = opalg.Model([-1, 0], [opalg.Joint("R", [0, 0, 1]), opalg.Joint(["P", "R"], [[1, 0, 0], [0, 1, 0]])],
                      [(np.eye(3), np.zeros(3)), (np.eye(3), np.array([1.0, 0.0, 0.0]))],
                      [(1.0, [0.5, 0, 0], np.diag([1, 2, 3])),
                       (2.0, [0, sp.Rational(1, 3), 0], np.diag([2, 1, 1]))],
                      gravity=(0, -9.81, 0))
    th, thd, thdd = (np.array(sp.symbols(f"{c}1:4"), dtype=object) for c in "qva")
    tau = opalg.rnea(arm, th, thd, thdd)
    dq, dqd = opalg.rnea_derivatives(arm, th, thd, thdd)
    for i in range(3):
        for j in range(3):     # expand alone, or the exact trig proof of helpers.trig_zero
            diff_q = sp.diff(tau[i], th[j]) - dq[i, j]
            assert sp.expand(diff_q) == 0 or trig_zero(diff_q), (i, j)
            assert sp.expand(sp.diff(tau[i], thd[j]) - dqd[i, j]) == 0, (i, j)


def test_bad_input_is_named():
    m = opalg.random_model(3, seed=0)
    with pytest.raises(opalg.StateError, match="qd"):
        opalg.rnea_derivatives(m, np.zeros(m.ndof), np.zeros(m.ndof + 1), np.zeros(m.ndof))
    with pytest.raises(opalg.StateError, match="f_ext"):
        opalg.aba_derivatives(m, np.zeros(m.ndof), np.zeros(m.ndof), np.zeros(m.ndof), f_ext=np.zeros((2, 6)))


@pytest.mark.verifies("E15", route="the O(n·N) branch (3N right-hand sides through the passes) vs complex step of aba")
def test_E15_large_model_branch():
    from opalg.algorithms.derivatives import SMALL_N

    m = opalg.random_model(12, "tree", seed=12, joints="all")   # N = 24
    assert m.ndof > SMALL_N
    q, qd, _, fe = _state(m, 9)
    tau = np.random.default_rng(9).normal(size=m.ndof)
    M = opalg.crba(m, q)
    tol = cond_tol(np.linalg.cond(M), K_SOLVE)
    dq, dqd, dtau = opalg.aba_derivatives(m, q, qd, tau, f_ext=fe)
    assert_close(dq, _cs_q(lambda x: opalg.aba(m, x, qd, tau, f_ext=fe), m, q), tol, "large dqdd_dq")
    assert_close(dqd, _cs(lambda x: opalg.aba(m, q, x, tau, f_ext=fe), qd), tol, "large dqdd_dqd")
    assert_close(dtau, np.linalg.inv(M), tol, "large dqdd_dtau vs dense inverse")
