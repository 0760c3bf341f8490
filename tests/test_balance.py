"""opalg.underactuated.swing_up_and_balance: the Acrobot swung up from notebook 10's start and caught by
the LQR of opalg.linearize (docs/REFERENCE.md G3, E20).

The swing-up is chaotic only while the energy is far from the top; the energy-shaping phase is a
contraction onto the upright orbit, so the catch time is insensitive to round-off (a 1e-6 rad change
of the start moves it by < 1e-5 s, checked while tuning).  The tests assert what is robust: the phase
sequence pump → energy shaping → LQR, a catch before CATCH_BY, and the LQR phase's decay bounded by the
closed loop's own rate.
"""

from __future__ import annotations

import numpy as np
import pytest
from scipy.linalg import expm

import opalg
from opalg import underactuated as ua
from opalg.errors import StateError

MODEL, PASSIVE = ua.acrobot()
UP = np.array([np.pi / 2, 0.0])
Q_W, R_W = np.diag([10.0, 10.0, 1.0, 1.0]), np.eye(1)
START = np.array([-np.pi / 2 + 0.1, 0.0])          # notebook 10's start: hanging, 0.1 rad off, at rest
T_END, CATCH_BY = 12.0, 10.5                         # caught at ≈ 8.7 s; 1.8 s margin (≈ one swing period)
RHO = 3.0                                            # the largest sampled level set of V that the LQR brings upright


def _wrap(a):
    return (a + np.pi) % (2 * np.pi) - np.pi


@pytest.fixture(scope="module")
def caught():
    ctl = ua.lqr(MODEL, UP, [0, 0], [0, 0], Q_W, R_W, PASSIVE)
    run = ua.swing_up_and_balance(MODEL, PASSIVE, START, [0.0, 0.0], (0.0, T_END), ctl, rho=RHO,
                                  t_eval=np.linspace(0.0, T_END, 6001), rtol=1e-8, atol=1e-8)
    return ctl, run


@pytest.mark.verifies("E20", route="LQR on linearize catches the Acrobot swung up by energy shaping (hybrid dynamics)")
def test_swing_up_is_caught_and_held(caught):
    ctl, run = caught
    assert run.status == "completed"
    assert run.phases.tolist() == [0, 1, 2]                       # pump, shaping, LQR: one catch, never lost
    t_c = run.t_switch[-1]
    assert t_c < CATCH_BY
    X = np.hstack([_wrap(run.q - UP), run.v])
    V = np.einsum("ti,ij,tj->t", X, ctl.S, X)
    lqr = run.t >= t_c
    assert np.all(run.phase[run.t > t_c] == 2) and np.all(run.phase[run.t < t_c] < 2)
    assert V[lqr][0] <= RHO * (1 + 1e-6)                          # the event fired at the level set
    # Linear closed loop ẋ = (A − BK)x: V̇ = −xᵀ(Q + KᵀRK)x ≤ −γV, γ the smallest generalized eigenvalue
    # of (Q + KᵀRK, S).  The nonlinear terms are O(|x|) relative inside V ≤ ρ; allow half the rate.
    W = Q_W + ctl.K.T @ R_W @ ctl.K
    gamma = np.linalg.eigvals(np.linalg.solve(ctl.S, W)).real.min()
    dt = run.t[lqr] - t_c
    assert np.all(V[lqr] <= V[lqr][0] * np.exp(-gamma / 2 * dt) * (1 + 1e-6))
    # Once V < ρ/100 the motion follows the linear closed loop x(t) = e^{(A−BK)(t−t₁)} x(t₁) up to the
    # second-order terms, a gap O(|x(t₁)|) relative to it (|x(t₁)| ≈ 0.16 here).  Its decay from there
    # (e^{−2.68 t} with the transient of the nearly repeated pole pair) is the upright tolerance.
    i1 = np.flatnonzero((run.t > t_c) & (V < RHO / 100))[0]
    M, x1 = ctl.A - ctl.B @ ctl.K, X[i1]
    idx = np.r_[np.arange(i1, len(run.t) - 1, 100), len(run.t) - 1]
    pred = np.array([expm(M * (run.t[i] - run.t[i1])) @ x1 for i in idx])
    gap = np.linalg.norm(X[idx] - pred, axis=1)
    assert np.all(gap <= np.linalg.norm(x1) * np.linalg.norm(pred, axis=1))
    assert np.linalg.norm(X[-1]) <= 2 * np.linalg.norm(pred[-1]) < 2e-3      # upright to 0.1°
    assert np.all(np.abs(run.tau[:, 0]) == 0.0)                   # the shoulder has no motor


def test_energy_balance_of_the_run(caught):
    """E(t) − E(0) = ∫ τ₂θ̇₂ dt (only the elbow motor does work): the energy from the link inertias
    against the power of the torques the hybrid dynamics returned, by the trapezoid rule; at a switch
    the interval after it uses the new law's torque there (the torque jumps).  Trapezoid error
    Σ h³|f''|/12 over the intervals, f'' by second differences within each phase."""
    ctl, run = caught
    E = np.array([ua.mechanical_energy(MODEL, q, v) for q, v in zip(run.q, run.v)])
    E_top = ua.mechanical_energy(MODEL, UP, [0.0, 0.0])
    P = run.tau[:, 1] * run.v[:, 1]
    left = P[:-1].copy()                                          # power at the left end of each interval
    shaping = ua.energy_swing_controller(MODEL, PASSIVE, E_top)
    for s in np.flatnonzero(np.diff(run.phase)):
        q, v = run.q[s], run.v[s]
        if run.phase[s + 1] == 1:
            tau2 = opalg.hybrid(MODEL, q, v, np.zeros(2), np.r_[0.0, shaping(0.0, q, v)], PASSIVE)[1][1]
        else:
            tau2 = -float(ctl.K[0] @ np.r_[_wrap(q - UP), v])
        left[s] = tau2 * v[1]
    dt = np.diff(run.t)
    work = np.r_[0.0, np.cumsum(dt * (left + P[1:]) / 2)]
    err = 0.0
    edges = np.r_[0, np.flatnonzero(np.diff(run.phase)) + 1, len(run.t)]
    for a, b in zip(edges[:-1], edges[1:]):
        f, t = P[a:b], run.t[a:b]
        h1, h2 = np.diff(t)[:-1], np.diff(t)[1:]                   # second differences on the uneven grid
        f2 = 2 * ((f[2:] - f[1:-1]) / h2 - (f[1:-1] - f[:-2]) / h1) / (h1 + h2)
        err += np.sum(np.maximum(h1, h2) ** 3 * np.abs(f2)) / 12  # Σ h³|f''|/12 over the intervals
    # The rtol = 1e-8 run adds ~1e-8 relative per unit time to E: far below the quadrature bound.
    assert np.abs(E - E[0] - work).max() <= 2 * err
    assert err < 0.2                                              # resolves 0.5 % of the 39 J put in
    assert E[0] < -19.0 and abs(E[-1] - E_top) < 1e-3             # from hanging to upright


def test_bad_input():
    ctl = ua.lqr(MODEL, UP, [0, 0], [0, 0], Q_W, R_W, PASSIVE)
    with pytest.raises(StateError, match="rho_out"):
        ua.swing_up_and_balance(MODEL, PASSIVE, START, [0, 0], (0, 1), ctl, rho=5.0, rho_out=2.0)
    with pytest.raises(StateError, match="passive"):
        ua.swing_up_and_balance(MODEL, [False, True], START, [0, 0], (0, 1), ctl)
    with pytest.raises(StateError, match="t_span"):
        ua.swing_up_and_balance(MODEL, PASSIVE, START, [0, 0], (1, 0), ctl)
    with pytest.raises(StateError, match="pump_until"):
        ua.swing_up_and_balance(MODEL, PASSIVE, START, [0, 0], (0, 1), ctl, pump_until=-1.0)
    with pytest.raises(StateError, match="k1"):
        ua.energy_swing_controller(MODEL, PASSIVE, 19.62, k1=0.0)
