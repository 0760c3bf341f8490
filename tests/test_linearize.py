"""opalg.linearize (docs/REFERENCE.md E20) against central differences of aba, and an LQR on it that
holds the Acrobot upright.

Central differences: f(x + h e) − f(x − h e) over 2h has truncation error h²|f‴|/6 and rounding
error ≈ ε|f|/h.  With h = 1e-5 on states of size 1 these are ≈ 2e-11 and ≈ 2e-11 relative (|f‴|
and |f| of the size of |f′| on these models, masses of one decade), so CD_TOL = 1e-7 leaves a
10³ margin for the larger third derivatives of long chains while any wrong term (a missing
Coriolis or a sign) shows at 1e-2 or more.
"""

from __future__ import annotations

import numpy as np
import pytest

import opalg
from opalg import underactuated as ua

from helpers import Tol, assert_close, make_model

H = 1e-5
CD_TOL = Tol(1e-7, "central difference h = 1e-5: truncation h²|f‴|/6 ≈ 2e-11, rounding ε|f|/h ≈ 2e-11")


def _f(m, q, v, tau):
    """ẋ's dynamics rows: q̈ = aba(q, v, τ)."""
    return opalg.aba(m, q, v, tau)


@pytest.mark.verifies("E20", route="A, B vs central differences of aba (integrate's tangent for free joints)")
@pytest.mark.parametrize("kind,seed,floating", [("chain", 0, False), ("tree", 1, False),
                                                 ("relabeled", 2, False), ("tree", 3, True)])
def test_E20_linearize_against_central_differences(kind, seed, floating):
    m = opalg.random_model(5, kind if kind != "relabeled" else "tree", seed=seed, joints="all",
                           floating=True) if floating else make_model(kind, 5, seed, joints="all")
    rng = np.random.default_rng(seed)
    q = opalg.integrate(m, opalg.neutral(m), rng.uniform(-1, 1, m.nv))
    v, tau = rng.normal(size=(2, m.nv))
    passive = np.arange(m.nv) % 3 == 0
    A, B = opalg.linearize(m, q, v, tau, passive=passive)
    N = m.nv
    E = np.eye(N)
    dq = np.stack([(_f(m, opalg.integrate(m, q, H * e), v, tau) - _f(m, opalg.integrate(m, q, -H * e), v, tau))
                   / (2 * H) for e in E], -1)
    dv = np.stack([(_f(m, q, v + H * e, tau) - _f(m, q, v - H * e, tau)) / (2 * H) for e in E], -1)
    du = np.stack([(_f(m, q, v, tau + H * e) - _f(m, q, v, tau - H * e)) / (2 * H) for e in E], -1)
    assert_close(A[N:, :N], dq, CD_TOL, "∂q̈/∂θ vs central differences")
    assert_close(A[N:, N:], dv, CD_TOL, "∂q̈/∂θ̇ vs central differences")
    assert_close(B[N:], du[:, ~passive], CD_TOL, "B (active columns) vs central differences")
    assert np.array_equal(B[:N], np.zeros((N, int((~passive).sum()))))
    assert np.array_equal(A[:N, N:], np.eye(N))
    # kinematic rows: η = difference(q̄(t), q(t)) with both moving at constant velocity for a
    # short t; ∂η̇/∂η by central differences in η and in t (nested: error ≈ h_t² + ε/(h·h_t))
    ht = 1e-4

    def eta_dot(eta):
        qa = opalg.integrate(m, q, eta)
        return (opalg.difference(m, opalg.integrate(m, q, v, ht), opalg.integrate(m, qa, v, ht))
                - opalg.difference(m, opalg.integrate(m, q, v, -ht), opalg.integrate(m, qa, v, -ht))) / (2 * ht)

    hq = 1e-4
    Aqq = np.stack([(eta_dot(hq * e) - eta_dot(-hq * e)) / (2 * hq) for e in E], -1)
    assert_close(A[:N, :N], Aqq, Tol(1e-5, "nested central differences, h = 1e-4: truncation ≈ h² "
                 "|v|³ ≈ 1e-7, rounding ε/h² ≈ 2e-8"), "A_θθ (−crm(v) of a free joint) vs differences",
                 scale=np.linalg.norm(v))


@pytest.mark.verifies("E20", route="LQR on linearize holds the Acrobot upright (underactuated.simulate, hybrid dynamics)")
def test_E20_lqr_holds_the_acrobot_upright():
    """The shoulder is passive; LQR on the elbow torque (Q = diag(10, 10, 1, 1), R = 1) catches a
    perturbation of 0.02 rad on both joints.

    Bound: the linear closed loop gives |x(T)| ≤ ‖exp((A − BK)T)‖₂ |x₀|; the nonlinear run must
    stay within 10× that (the quadratic terms of a 0.4 rad excursion are a fraction of the linear
    ones) plus the integration tolerance.  The basin is small: from 0.05 rad on the shoulder
    alone this LQR loses the arm (checked while writing the test), so the test is not hollow.
    """
    from scipy.linalg import expm

    model, passive = ua.acrobot()
    up = np.array([np.pi / 2, 0.0])
    ctl = ua.lqr(model, up, np.zeros(2), np.zeros(2), np.diag([10.0, 10.0, 1.0, 1.0]), np.eye(1), passive)
    assert np.all(ctl.poles.real < 0)
    x0 = np.array([0.02, -0.02, 0.0, 0.0])
    T = 5.0
    run = ua.simulate(model, passive, ua.lqr_controller(model, passive, ctl), up + x0[:2], np.zeros(2),
                      (0.0, T), t_eval=np.linspace(0.0, T, 51), rtol=1e-9, atol=1e-9)
    assert run.status == "completed"
    x = np.hstack([run.q - up, run.v])
    bound = 10 * np.linalg.norm(expm((ctl.A - ctl.B @ ctl.K) * T), 2) * np.linalg.norm(x0) + 1e-7
    assert np.linalg.norm(x[-1]) <= bound, (np.linalg.norm(x[-1]), bound)
    assert np.linalg.norm(x[-1]) < 1e-2 * np.linalg.norm(x0)        # converged: 100× smaller in 5 s
    assert np.abs(x[:, :2]).max() < 0.5                              # and never fell (peak ≈ 0.41 rad)
    # the torque the hybrid dynamics reports on the elbow is the LQR's −K x, the shoulder's 0
    assert_close(run.tau[:, 1], -(x @ ctl.K.T)[:, 0], Tol(1e-9, "two routes to the same torque: "
                 "ABA then hybrid (each ≈ cond(ℳ)ε ≈ 1e-14 of ‖ℳ‖|q̈|)"), "elbow torque = −Kx",
                 scale=np.abs(ctl.K).max() * np.linalg.norm(x0))
    assert np.all(run.tau[:, 0] == 0.0)


def test_lqr_controller_wraps_revolute_errors_only():
    """A cart (prismatic, active) carrying a pole (revolute, passive), balanced upright: a pole
    that has turned ±2π is at the same equilibrium and gets the same acceleration command, while
    the cart's translation is not periodic and 2π of it is a real error (the linear law's −K x)."""
    cart = opalg.Model([-1, 0], [opalg.Joint("P", [1, 0, 0]), opalg.Joint("R", [0, 0, 1])],
                       [(np.eye(3), np.zeros(3)), (np.eye(3), np.zeros(3))],
                       [(1.0, [0, 0, 0], np.eye(3) * 0.01), (0.5, [0.5, 0, 0], np.eye(3) * 0.02)],
                       gravity=(0, -9.81, 0))
    passive = np.array([False, True])
    up = np.array([0.0, np.pi / 2])
    ctl = ua.lqr(cart, up, np.zeros(2), np.zeros(2), np.eye(4), np.eye(1), passive)
    f = ua.lqr_controller(cart, passive, ctl)
    v = np.array([0.1, -0.2])
    q = up + np.array([0.05, 0.03])
    turn = np.array([0.0, 2 * np.pi])
    tol = Tol(1e-12, "the same arithmetic on angles that differ by 2π: rounding of 2π ≈ 1e-15 times |K|")
    for k in (-1, 1):
        assert_close(f(0.0, q + k * turn, v), f(0.0, q, v), tol, f"pole turned {k:+d}·2π")
    shifted = f(0.0, q + np.array([2 * np.pi, 0.0]), v)
    T = np.zeros(2)
    T[0] = -(ctl.K @ np.concatenate([q + np.array([2 * np.pi, 0.0]) - up, v]))[0]
    assert_close(shifted, opalg.aba(cart, q + np.array([2 * np.pi, 0.0]), v, T)[:1],
                 Tol(1e-12, "one ABA of the same torque, computed twice"), "cart shifted 2π: not wrapped")
    assert abs(shifted[0] - f(0.0, q, v)[0]) > 1.0


def test_linearize_bad_input():
    m, passive = ua.acrobot()
    with pytest.raises(opalg.StateError, match="passive"):
        opalg.linearize(m, np.zeros(2), np.zeros(2), np.zeros(2), passive=[True])
    with pytest.raises(opalg.StateError, match=r"Q must have shape \(4, 4\)"):
        ua.lqr(m, np.zeros(2), np.zeros(2), np.zeros(2), np.eye(3), np.eye(1), passive)
    with pytest.raises(opalg.StateError, match="Q is not positive semidefinite"):
        ua.lqr(m, np.zeros(2), np.zeros(2), np.zeros(2), -np.eye(4), np.eye(1), passive)
    with pytest.raises(opalg.StateError, match="R is not positive definite"):
        ua.lqr(m, np.zeros(2), np.zeros(2), np.zeros(2), np.eye(4), 0.0, passive)
