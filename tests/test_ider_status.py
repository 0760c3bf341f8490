"""How every Ider run ends: status, message, kept trajectory, the refined singular time, bad input.

Independent references (none calls opalg.ider's integration or its measures):
* the time the prescribed path leaves the arm's reach: the line x = x0 + v_A t, y = y0 meets the
  circle of radius L1 + L2 + L3 (closed form, exact initial tip from the hand formula);
* the time "no motor at joint 2/3" become singular: this file's own integration of the arm (the
  Kane closed form of ℳ and the bias, the hand-written tip Jacobian and h, its own KKT solve),
  followed down until |det(B ℳ⁻¹ Aᵀ)| has fallen 1e4-fold — no κ, no fit.  The time still left
  beyond the last crossing is the geometric tail Δ₂²/(Δ₁ − Δ₂) of the last two crossing gaps
  (they shrink 100x per decade for joint 3, ~23x for joint 2).

Runs are cached (the preset runs in test_ider.py's cache).  The two runs that end past a
singularity use rtol = 1e-6 instead of the panel's 1e-9 (the status logic does not depend on
it; the 10-s conventional run would take ~12 s instead of ~4 s), so the file stays at ~15 s.
"""

from __future__ import annotations

import functools
from unittest import mock

import numpy as np
import pytest
from scipy.integrate import solve_ivp

import opalg
from opalg import ider
from opalg.algorithms.constrained import singular as constrained_singular
from opalg.errors import StateError
from opalg.ider import panel
from opalg.simulate import integrate
from test_ider import run as preset_run  # its cache: the preset runs are shared with test_ider.py

from helpers import measured

#: t_singular at the reach (brentq on |path(t)| = 3 m, xtol 1e-14: within 2(xtol + 4ε t) ≈ 3e-14
#: of its root) against the closed form x0 + √(9 − y0²).
REACH_TIME_TOL = measured(1e-13, 2.8e-15, "358 random initial tips (TIP0 patched) under 3 BLAS/SIMD kernels")

L = np.array([1.0, 1.0, 1.0])
MASS = np.array([30.0, 18.0, 18.0])
I_JOINT = np.array([10.0, 8.64, 8.64])
THETA0 = np.deg2rad([60.0, -10.0, -90.0])
T101 = np.linspace(0.0, 1.0, 101)
NO_M1 = [[0.0, 1.0, 0.0], [0.0, 0.0, 1.0]]
DIRECTIONS = {"no motor at joint 3": np.array([[1.0, 0, 0], [0, 1.0, 0]]),
              "no motor at joint 2": np.array([[1.0, 0, 0], [0, 0, 1.0]])}


# ---------------------------------------------------------------------------------------------
# The independent arm
# ---------------------------------------------------------------------------------------------

def tip_B_h(q, qd):
    """Tip (x, y), its Jacobian B and h = −Ḃ q̇ written out for three links (absolute angles φ)."""
    phi, om = np.cumsum(q), np.cumsum(qd)
    s, c = L * np.sin(phi), L * np.cos(phi)
    B = np.array([[-(s[0] + s[1] + s[2]), -(s[1] + s[2]), -s[2]],
                  [c[0] + c[1] + c[2], c[1] + c[2], c[2]]])
    return np.array([c.sum(), s.sum()]), B, np.array([(c * om**2).sum(), (s * om**2).sum()])


def mass_and_bias(q, qd):
    """ℳ and the velocity terms of the arm (gravity off) by the Kane form Σ m JᵀJ + I_c wᵀw."""
    Ic = I_JOINT - MASS * (L / 2) ** 2                        # paper's I is about the joint
    phi, om = np.cumsum(q), np.cumsum(qd)
    e = np.stack([np.cos(phi), np.sin(phi)], 1)
    ep = np.stack([-np.sin(phi), np.cos(phi)], 1)
    M, C = np.zeros((3, 3)), np.zeros(3)
    for i in range(3):
        lever = np.array([L[j] for j in range(i)] + [L[i] / 2])   # mass centre at mid-link
        J = np.array([(lever[k:i + 1, None] * ep[k:i + 1]).sum(0) if k <= i else np.zeros(2)
                      for k in range(3)]).T
        w = (np.arange(3) <= i).astype(float)
        M += MASS[i] * J.T @ J + Ic[i] * np.outer(w, w)
        C += MASS[i] * J.T @ -(lever[:, None] * om[:i + 1, None] ** 2 * e[:i + 1]).sum(0)
    return M, C


def initial_state():
    _, B, _ = tip_B_h(THETA0, np.zeros(3))
    y13 = np.linalg.solve(B[:, [0, 2]], [-1.0, 0.0])          # y2 = 0, tip velocity (−1, 0)
    return np.concatenate([THETA0, [y13[0], 0.0, y13[1]]])


@functools.lru_cache(maxsize=None)
def reference_singular_time(preset):
    """(last crossing, tail) of |det(B ℳ⁻¹ Aᵀ)| / |det at t = 0| through 1e-2, 1e-3, 1e-4."""
    A = DIRECTIONS[preset]

    def det(q):
        M, _ = mass_and_bias(q, np.zeros(3))
        return np.linalg.det(tip_B_h(q, np.zeros(3))[1] @ np.linalg.solve(M, A.T))

    def rhs(t, x):
        M, C = mass_and_bias(x[:3], x[3:])
        _, B, h = tip_B_h(x[:3], x[3:])
        K = np.block([[M, -A.T], [B, np.zeros((2, 2))]])
        return np.concatenate([x[3:], np.linalg.solve(K, np.concatenate([-C, h]))[:3]])

    d0 = abs(det(THETA0))
    events = [lambda t, x, lev=lev: abs(det(x[:3])) / d0 - lev for lev in (1e-2, 1e-3, 1e-4)]
    events[-1].terminal = True
    sol = solve_ivp(rhs, (0.0, 1.0), initial_state(), method="DOP853", rtol=1e-12, atol=1e-12,
                    events=events)
    t1, t2, t3 = (float(te[0]) for te in sol.t_events)
    d1, d2 = t2 - t1, t3 - t2
    return t3, d2**2 / (d1 - d2)


def reach_time():
    """When the path (x0 − t, y0) reaches |tip| = L1 + L2 + L3 (the first root)."""
    (x0, y0), _, _ = tip_B_h(THETA0, np.zeros(3))
    return x0 + np.sqrt(L.sum() ** 2 - y0**2)


# ---------------------------------------------------------------------------------------------
# Runs (cached)
# ---------------------------------------------------------------------------------------------

def loosened(**extra):
    """ider.simulate with some settings overridden (the panel passes rtol = atol = 1e-9, refine=False)."""
    return lambda *args, **kwargs: ider.simulate(*args, **{**kwargs, **extra})


@functools.lru_cache(maxsize=None)
def past_the_reach():
    """The panel's conventional run for 10 s: the path leaves the reach at ≈ 4.741 s.

    refine=True: the panel skips the refinement for its time budget; at the reach it is a
    root of |path(t)| and costs nothing, so the run is shared with the t_singular check.
    """
    with mock.patch.object(panel, "simulate", loosened(rtol=1e-6, atol=1e-6, refine=True)):
        return panel.evaluate("conventional", t_end=10.0)


@functools.lru_cache(maxsize=None)
def integrator_gives_up():
    """The panel's 'no motor at joint 3' with stop_tol = 1e-10: the integrator fails first."""
    with mock.patch.object(panel, "simulate", loosened(rtol=1e-6, atol=1e-6, stop_tol=1e-10)):
        return panel.evaluate("no motor at joint 3")


def test_run_past_the_reach_stops_there_with_time_reason_and_trajectory():
    """simulate(None, t_span=(0, 10)): status 'event' (event 'reach') at the reach, never 'completed' nor a
    RuntimeError; t_singular = reach time."""
    out = past_the_reach()
    r, t_reach = out.result, reach_time()
    assert r.status == "event" and r.event == "reach" and not r.ok
    # The reach event stops at σ_min/σ_max(B) = 1e-3, ~1.5e-5 s before the reach itself.
    assert 4.7 < r.t_stop < t_reach < r.t_stop + 1e-4
    # t_singular solves |path(t)| = 3 m by brentq (xtol 1e-14); the closed form rounds at ~1e-15.
    assert abs(r.t_singular - t_reach) <= REACH_TIME_TOL
    assert r.message.startswith(f"stopped at t = {r.t_stop:.4f} s: the path leaves the arm's reach")
    assert f"at t = {t_reach:.5f} s" in r.message
    # The trajectory up to the stop is kept: every requested sample before it, on the path
    # (rtol = atol = 1e-6 over 4.7 s leaves ~1e-6 m of drift; 1e-5 m has margin).
    te = np.linspace(0.0, 10.0, 101)
    np.testing.assert_array_equal(r.t, te[te <= r.t_stop])
    for f in ("q", "v", "qdd", "tau", "forces", "tip", "tip_error", "conditioning"):
        assert len(getattr(r, f)) == len(r.t) == 48, f
    tips = np.array([tip_B_h(q, np.zeros(3))[0] for q in r.q])
    assert np.abs(tips - np.stack([tips[0, 0] - r.t, np.full(48, tips[0, 1])], 1)).max() <= 1e-5
    # The reason is true: at the stop the path point is within 3e-5 m of the 3 m reach, so the arm
    # must be stretched out almost straight (B nearly rank 1).
    (x0, y0), _, _ = tip_B_h(THETA0, np.zeros(3))
    assert 0 < L.sum() - np.hypot(x0 - r.t_stop, y0) < 3e-5
    assert not out.feasible
    assert out.verdict.startswith(f"infeasible: stopped at t = {r.t_stop:.4f} s: the path leaves")


def test_failed_integration_is_a_status_with_time_reason_and_trajectory():
    """The integrator giving up is status 'failed' with the time and the reason, and a verdict."""
    out = integrator_gives_up()
    r = out.result
    t_last, tail = reference_singular_time("no motor at joint 3")
    assert r.status == "failed" and not r.ok and r.event is None and r.t_singular is None
    # The solver gives up at the singularity: within the rtol = 1e-6 integration error of it.
    assert abs(r.t_stop - (t_last + tail)) <= 1e-6
    assert r.message.startswith(f"integration failed at t = {r.t_stop:.4f} s: the DOP853 solver failed: "
                                "Required step size")
    assert "likely reason: the control directions become singular" in r.message
    # Every sample asked for up to the last time reached is kept, with its extras.
    np.testing.assert_array_equal(r.t, T101[T101 <= r.t_stop])
    assert len(r.q) == len(r.v) == len(r.tau) == len(r.forces) == len(r.t) == 27 and r.tip_error.max() <= 1e-5
    assert not out.feasible and out.verdict.startswith(f"failed: integration failed at t = {r.t_stop:.4f} s")


def test_an_exception_inside_the_rhs_ends_the_run_as_failed(monkeypatch):
    """A numerical error raised by the solve from t = 0.1 on: status 'failed', named, samples kept.

    The seam (opalg.simulate.integrate) ends the run at the first raise, in whichever trial stage of
    a step it comes: t_stop is the last accepted time before it, and the message also names the
    time of the raise (beyond 0.1).
    """
    real = ider._dynamics

    def broken(model, Zc, formulation, stab, t, *args, **kw):
        if t > 0.1:
            raise np.linalg.LinAlgError("injected for the test")
        return real(model, Zc, formulation, stab, t, *args, **kw)

    monkeypatch.setattr(ider, "_dynamics", broken)
    te = np.linspace(0.0, 0.3, 31)
    r = ider.simulate(NO_M1, t_span=(0.0, 0.3), t_eval=te, rtol=1e-9, atol=1e-9)
    assert r.status == "failed" and r.event is None and 0.0 < r.t_stop <= 0.1
    assert f"integration failed at t = {r.t_stop:.4f} s: the right-hand side raised LinAlgError: " \
           "injected for the test (at t = " in r.message
    t_raise = float(r.message.split("(at t = ")[1].split(")")[0])
    assert t_raise > 0.1 and t_raise > r.t_stop
    assert len(r.t) >= 2 and r.t[-1] <= r.t_stop
    np.testing.assert_array_equal(r.t, te[te <= r.t_stop])
    assert len(r.tau) == len(r.t) and r.tip_error.max() <= 1e-9     # the samples before it, intact
    # An error already at t = 0 (a bug, not a numerical failure) propagates before any integration.
    monkeypatch.setattr(ider, "_dynamics", lambda *a, **k: (_ for _ in ()).throw(TypeError("bug")))
    with pytest.raises(TypeError, match="bug"):
        ider.simulate(NO_M1, t_span=(0.0, 0.3))


def test_a_stop_before_the_end_is_an_event_never_completed():
    """t_span ends 0.04 s after the singular stop of "no motor at joint 3": status "event", the time in
    the message, no sample beyond it; a stop before the first sample asked for keeps none (shapes kept)."""
    r = ider.simulate("no motor at joint 3", t_span=(0.0, 0.3), t_eval=np.linspace(0.0, 0.3, 31), refine=False,
                      rtol=1e-9, atol=1e-9)
    assert (r.status, r.event, r.ok) == ("event", "singular", False)
    assert 0.25 < r.t_stop < 0.26 and f"stopped at t = {r.t_stop:.4f} s" in r.message
    assert r.t[-1] <= r.t_stop and len(r.t) == 26
    late = ider.simulate("no motor at joint 3", t_span=(0.0, 0.3), t_eval=[0.27, 0.3], refine=False,
                         rtol=1e-9, atol=1e-9)
    assert late.status == "event" and late.t_stop == r.t_stop and late.t.shape == (0,)
    assert late.q.shape == late.v.shape == late.qdd.shape == late.tau.shape == (0, 3)
    assert late.forces.shape == late.tip.shape == (0, 2) and late.conditioning.shape == late.tip_error.shape == (0,)


# ---------------------------------------------------------------------------------------------
# The singular time beyond the stop
# ---------------------------------------------------------------------------------------------

@pytest.mark.parametrize("preset,tol", [("no motor at joint 3", 2e-8), ("no motor at joint 2", 3e-7)])
def test_t_singular_matches_where_the_determinant_vanishes(preset, tol):
    """t_singular agrees with the independent |det(B ℳ⁻¹ Aᵀ)| → 0 time; the stop comes before it.

    Tolerances: against 7-decade continuations the fit erred by 5e-9 (joint 3) and 9e-8 (joint 2,
    whose gaps shrink ~23x per decade, so its fit exponent is 1.39, not 2); the reference's own
    tail estimate was good to ~1e-12 and ~5e-9.  About 3-4x margin; a wrong law (the exponent
    fixed at 2) was off by 1.7e-5 for joint 2.
    """
    r = preset_run(preset)
    t_last, tail = reference_singular_time(preset)
    assert (r.status, r.event) == ("event", "singular") and r.t_stop < t_last < r.t_singular + tol
    assert abs(r.t_singular - (t_last + tail)) <= tol
    assert f"become singular (κ → 0) at t = {r.t_singular:.5f} s" in r.message
    if preset == "no motor at joint 3":
        assert f"{r.t_singular:.5f}" == "0.26403"           # the value, 5.5 ms after the stop
        assert 5e-3 < r.t_singular - r.t_stop < 6e-3


def test_t_singular_is_none_without_a_singularity_or_refinement():
    """Completed runs and refine=False report no singular time."""
    r = ider.simulate(NO_M1, t_span=(0.0, 0.2), t_eval=[0.0, 0.2])
    assert r.ok and r.t_singular is None and r.t_stop == 0.2 and r.event is None
    r = ider.simulate("no motor at joint 3", t_eval=[0.0, 0.1], refine=False, rtol=1e-9, atol=1e-9)
    assert r.status == "event" and r.t_singular is None and "κ → 0" not in r.message


#: singular_time on μ = (t* − t)^(1/p), whose law t = t* − μᵖ is the fit's first term: its error is
#: that of the stop time the integration locates (rtol = atol = 1e-12), relative to t*.
TOY_TOL = measured(1e-11, 4.4e-13, "200 random p in [1.2, 3], t* in [0.05, 3] under 3 kernels")


def toy(p, t_star):
    """A state [μ, s, μ̇, ṡ, clock] (nq = 2, one more entry) with μ = (t* − t)^(1/p), ṡ = 1: the rates
    grow like μ^(1−p) as μ → 0 at t*.  |μ| in the rhs keeps a trial stage beyond t* finite."""
    def rhs(t, x):
        return [x[2], x[3], (p - 1) / p * x[2] * abs(x[0]) ** (-p), 0.0, 1.0]
    mu0 = t_star ** (1 / p)
    return rhs, np.array([mu0, 0.0, -mu0 ** (1 - p) / p, 1.0, 0.0])


@pytest.mark.parametrize("p,t_star", [(2.0, 1.0), (1.39, 0.37), (3.0, 2.5)])
def test_singular_time_finds_the_end_of_a_known_law(p, t_star):
    """Generic in the state (nq = 2 of 5 entries): stop_event stops at μ = tol, singular_time finds t*."""
    rhs, x0 = toy(p, t_star)
    mu = lambda q: q[0]  # noqa: E731
    ev = constrained_singular.stop_event(mu, 1e-3, nq=2, name="mu")
    run = integrate(rhs, x0, (0.0, 2 * t_star), events=ev, rtol=1e-12, atol=1e-12)
    assert (run.status, run.event) == ("event", "mu")
    assert abs(run.t_stop - (t_star - 1e-3**p)) <= TOY_TOL * t_star         # the stop: μ = tol
    t_found = constrained_singular.singular_time(rhs, mu, run.t_stop, run.y_stop, 1e-3, nq=2)
    assert abs(t_found - t_star) <= TOY_TOL * t_star


def test_singular_time_is_none_where_no_singularity_lies_ahead():
    """μ rising at the stop, or levelling off above tol/10: None (no law is forced onto them)."""
    mu = lambda q: q[0]  # noqa: E731
    rising = lambda t, x: [x[1], 0.0]  # noqa: E731
    assert constrained_singular.singular_time(rising, mu, 0.0, [1e-3, 1.0], 1e-3) is None
    settles = lambda t, x: [x[1], -x[1]]  # μ̇ = −(μ − tol/2): μ → 5e-4 > tol/10  # noqa: E731
    assert constrained_singular.singular_time(settles, mu, 0.0, [1e-3, -5e-4], 1e-3) is None
    with pytest.raises(StateError, match=r"x_stop must be a state \[q; q̇; …\] with nq = 3"):
        constrained_singular.singular_time(rising, mu, 0.0, [1e-3, 1.0], 1e-3, nq=3)
    with pytest.raises(StateError, match=r"tol must be a number in \(0, 1\), got 0"):
        constrained_singular.stop_event(mu, 0)
    with pytest.raises(StateError, match=r"measure must be callable"):
        constrained_singular.stop_event(1e-3)


def test_feasibility_measure_is_conditioning_of_the_arm():
    """κ(q) of feasibility_measure = conditioning(crba, B, Z) (the same operations), dense and by passes."""
    model, q = ider.arm(), ider.THETA0 + np.array([0.1, -0.2, 0.3])
    B = ider.tip_jacobian(q)
    for Z, directions in ((B, None), (np.array(NO_M1), NO_M1), (np.array(NO_M1), lambda q: np.array(NO_M1))):
        kappa = constrained_singular.feasibility_measure(model, ider.tip_jacobian, directions)
        assert kappa(q) == ider.conditioning(opalg.crba(model, q), B, Z)
        passes = constrained_singular.feasibility_measure(model, ider.tip_jacobian, directions, passes=True)
        assert passes(q) == ider.conditioning_passes(model, q, B, Z)


# ---------------------------------------------------------------------------------------------
# Input validation: a named StateError (a ValueError) before any integration
# ---------------------------------------------------------------------------------------------

BAD = [
    (dict(stop_tol=0.0), r"stop_tol must be a number in \(0, 1\), got 0.0"),
    (dict(stop_tol=1.0), r"stop_tol must be a number in \(0, 1\)"),
    (dict(stop_tol=np.nan), r"stop_tol must be a number in \(0, 1\), got nan"),
    (dict(stop_tol="1e-3"), r"stop_tol must be .*got '1e-3' \(a str; strings are never parsed\)"),
    (dict(stop_tol=True), r"stop_tol must be .*got True \(a bool"),
    (dict(t_span=(0.0, "1.0")), r"t_span\[1\] must be a positive number of seconds .*got '1.0' \(a str"),
    (dict(t_span=(0.0, True)), r"t_span\[1\] must be .*got True"),
    (dict(t_span=(0.0, None)), r"t_span\[1\] must be .*got None"),
    (dict(t_span=(0.5, 1.0)), r"t_span\[0\] must be 0 \(the arm starts on the path at t = 0\), got 0.5"),
    (dict(t_span=None), r"t_span must be a pair \(0, t_end\) of seconds, got None"),
    (dict(t_span="01"), r"t_span must be a pair \(0, t_end\) of seconds, got '01'"),
    (dict(t_span=(0.0, 0.5, 1.0)), r"t_span must be a pair"),
    (dict(method="Euler"), r"method must be one of \['BDF', 'DOP853', 'LSODA', 'RK45', 'Radau'\], got 'Euler'"),
    (dict(gravity="9.81"), r"gravity must be a finite number .*got '9.81' \(a str"),
    (dict(gravity=False), r"gravity must be .*got False"),
    (dict(gravity=np.inf), r"gravity must be a finite number"),
    (dict(rtol="1e-9"), r"rtol must be a number in \(0, 1\), got '1e-9'"),
    (dict(rtol=0.0), r"rtol must be a number in \(0, 1\), got 0.0"),
    (dict(rtol=np.nan), r"rtol must be"),
    (dict(atol=-1e-9), r"atol must be a positive number, got -1e-09"),
    (dict(atol=[1e-9]), r"atol must be a positive number, got \[1e-09\] \(a list"),
    (dict(t_eval=[0.0, np.nan, 1.0]), r"t_eval has non-finite entries"),
    (dict(t_eval=[0.0, "0.5"]), r"t_eval has a non-numeric entry at index \(1,\)"),
    (dict(t_eval=[False, True]), r"t_eval must be numeric times"),
    (dict(stabilization=(np.nan, 1.0)), r"stabilization\[0\] must be a finite gain >= 0"),
    (dict(stabilization=(1.0,)), r"stabilization must be None or two finite gains .*got \(1.0,\)"),
    (dict(stabilization=(1.0, 2.0, 3.0)), r"stabilization must be None or two"),
    (dict(stabilization="55"), r"stabilization must be None or two .*got '55'"),
    (dict(stabilization=("5", "5")), r"stabilization\[0\] must be .*got '5' \(a str"),
    (dict(stabilization=(-1.0, 2.0)), r"stabilization\[0\] must be a finite gain >= 0"),
    (dict(stabilization=5.0), r"stabilization must be None or two"),
    (dict(refine="yes"), r"refine must be True or False"),
    (dict(formulation="dense"), r"formulation must be 'augmented', 'reduced' or 'passes'"),
    (dict(inertia=["joint"]), r"inertia must be 'joint' or 'com'"),
]


@pytest.fixture
def no_integration(monkeypatch):
    """Fail the test if the integrator seam is reached (validation must come first)."""
    def refuse(*a, **k):
        raise AssertionError("integration started before the bad argument was refused")
    monkeypatch.setattr(ider, "integrate", refuse)
    monkeypatch.setattr(constrained_singular, "integrate", refuse)


@pytest.mark.parametrize("kwargs,match", BAD, ids=[f"{k}={v!r}" for kw, _ in BAD for k, v in kw.items()])
def test_simulate_refuses_bad_settings_before_integrating(kwargs, match, no_integration):
    with pytest.raises(StateError, match=match):
        ider.simulate(NO_M1, **kwargs)


def test_sweep_and_panel_inherit_the_validation(no_integration):
    """feasibility_sweep and panel.evaluate refuse the same values (strings never parsed)."""
    for alphas, match in ((["0.5"], r"alphas\[0\] must be a finite angle"), ([0.1, True], r"alphas\[1\]"),
                          ([np.nan], r"alphas\[0\] must be a finite angle \(rad\), got nan")):
        with pytest.raises(StateError, match=match):
            ider.feasibility_sweep(alphas)
    with pytest.raises(StateError, match=r"rtol must be a number in \(0, 1\), got '1e-9'"):
        ider.feasibility_sweep([0.0], rtol="1e-9")
    with pytest.raises(StateError, match=r"t_end must be a positive number of seconds, got '1.0'"):
        panel.evaluate("no motor at joint 1", t_end="1.0")
    for n in (True, 1, 2.5, "101"):
        with pytest.raises(StateError, match=r"n_points must be an integer >= 2"):
            panel.evaluate("no motor at joint 1", n_points=n)
    with pytest.raises(StateError, match=r"gravity must be a finite number .*'9.81'"):
        panel.evaluate("no motor at joint 1", gravity="9.81")
    with pytest.raises(ValueError, match=r"A must be given as text"):
        panel.evaluate(panel.CUSTOM, custom=[[0, 1, 0], [0, 0, 1]])
    with pytest.raises(ValueError, match=r"unknown choice \['conventional'\]"):
        panel.evaluate(["conventional"])
    with pytest.raises(StateError, match=r"gravity must be a finite number .*'1.0'"):
        ider.arm(gravity="1.0")


# ---------------------------------------------------------------------------------------------
# The previous release's names, for one release
# ---------------------------------------------------------------------------------------------

def test_old_t_end_is_accepted_with_a_deprecation_warning():
    """t_end= (and a number as the second argument) runs t_span = (0, t_end), warning at the caller."""
    te = [0.0, 0.1, 0.2]
    new = ider.simulate(NO_M1, t_span=(0.0, 0.2), t_eval=te)
    with pytest.warns(DeprecationWarning, match=r"ider.simulate: the keyword t_end is now t_span") as w:
        old = ider.simulate(NO_M1, t_end=0.2, t_eval=te)
    assert w[0].filename == __file__                      # it points at the call, not into opalg
    with pytest.warns(DeprecationWarning, match=r"a number as the second argument is the old t_end") as w:
        pos = ider.simulate(NO_M1, 0.2, t_eval=te)
    assert w[0].filename == __file__
    for r in (old, pos):
        assert r.ok and r.settings["t_span"] == (0.0, 0.2) and r.t_stop == 0.2
        assert np.array_equal(r.q, new.q) and np.array_equal(r.forces, new.forces)
    with pytest.warns(DeprecationWarning, match="t_end"):
        sw = ider.feasibility_sweep([np.pi / 2], t_end=0.2)
    assert sw["feasible"].tolist() == [True] and np.isnan(sw["t_stop"]).all()


@pytest.mark.filterwarnings("ignore::DeprecationWarning")
def test_old_t_end_keeps_its_checks(no_integration):
    """The old name's values are refused as before, naming t_end; both names, or an unknown one, too."""
    for bad, match in (("1.0", r"t_end must be a positive number of seconds, got '1.0' \(a str"),
                       (True, r"t_end must be .*got True"), (None, r"t_end must be .*got None"),
                       (-1.0, r"t_end must be a positive number of seconds, got -1.0")):
        with pytest.raises(StateError, match=match):
            ider.simulate(NO_M1, t_end=bad)
    with pytest.raises(StateError, match=r"give t_span or its old name t_end, not both"):
        ider.simulate(NO_M1, t_span=(0.0, 0.2), t_end=0.2)
    with pytest.raises(TypeError, match=r"unexpected keyword arguments \['tend'\]"):
        ider.simulate(NO_M1, tend=0.2)


def test_ider_result_is_a_deprecated_name_of_trajectory():
    from opalg.simulate import Trajectory

    with pytest.warns(DeprecationWarning, match=r"IderResult is now opalg.simulate.Trajectory"):
        assert ider.IderResult is Trajectory
    r = ider.simulate(NO_M1, t_span=(0.0, 0.1), t_eval=[0.0, 0.1])
    assert isinstance(r, Trajectory) and r.qdd.shape == (2, 3)
    with pytest.raises(AttributeError, match="no attribute 'nothing'"):
        ider.nothing  # noqa: B018
