"""opalg.simulate.integrate, the one integrator seam: numbers, events, argument checks, failures.

Reference solutions are closed forms: ẏ = −y gives e^{−t}; ÿ = −y from (1, 0) gives cos t, whose
falling zero is π/2; ẏ = y² from 1 blows up at t = 1.

Tolerances of the numbers: scipy's controller accepts a step when its estimated local error is
at most atol + rtol·|y| per component (an RMS norm, so at most √n times that on one component).
Both test systems propagate errors without growth (ẏ = −y contracts, ÿ = −y rotates), so the
global error is at most the sum of the local errors, nsteps·√n·(atol + rtol·max|y|).  The
estimate is asymptotic, and DOP853's dense output (t_eval, event location) is of lower order than
its steps; a factor 10 covers both (measured: worst error/bound 0.13, DOP853's t_eval samples).
"""

from __future__ import annotations

import sys
import time

import numpy as np
import pytest
from scipy.integrate import RK45

from opalg.errors import StateError
from opalg.simulate import Event, Solution, integrate

from helpers import EPS, Tol

METHODS = ["RK45", "DOP853", "Radau", "BDF", "LSODA"]
RTOL = ATOL = 1e-10
MODULE = sys.modules["opalg.simulate.integrate"]     # the attribute of the package is the function


def decay(t, y):
    return -y


def oscillator(t, y):
    return np.array([y[1], -y[0]])


def global_tol(sol: Solution, ymax: float = 1.0) -> Tol:
    """10·nsteps·√n·(atol + rtol·max|y|): the summed local-error bound of the module docstring."""
    n = sol.y.shape[1]
    tol = 10 * max(sol.nsteps, 1) * np.sqrt(n) * (ATOL + RTOL * ymax)
    return Tol(tol, f"10·nsteps·√n·(atol + rtol·max|y|), nsteps = {sol.nsteps}")


def assert_within(err: float, tol: Tol, what: str):
    assert err <= tol, f"{what}: error {err:.2e} > {float(tol):.2e} ({tol.why})"


# ---------------------------------------------------------------------------
# numbers
# ---------------------------------------------------------------------------
@pytest.mark.parametrize("method", METHODS)
def test_decay_steps_match_exp(method):
    sol = integrate(decay, [1.0], (0.0, 2.0), method=method, rtol=RTOL, atol=ATOL)
    assert sol.ok and sol.status == "completed" and sol.event is None
    assert sol.message == "reached t = 2 (end of t_span)"
    assert sol.t[0] == 0.0 and sol.t[-1] == 2.0 and sol.t_stop == 2.0
    assert np.all(np.diff(sol.t) > 0) and len(sol.t) == sol.nsteps + 1 and sol.nfev > sol.nsteps
    assert sol.y[0, 0] == 1.0 and np.array_equal(sol.y_stop, sol.y[-1])
    assert_within(np.abs(sol.y[:, 0] - np.exp(-sol.t)).max(), global_tol(sol), f"{method} steps")


@pytest.mark.parametrize("method", METHODS)
def test_decay_t_eval_samples_match_exp(method):
    te = np.linspace(0.0, 2.0, 41)
    sol = integrate(decay, [1.0], (0.0, 2.0), t_eval=te, method=method, rtol=RTOL, atol=ATOL)
    assert sol.ok and sol.t.tolist() == te.tolist()       # the requested times, t0 included
    assert_within(np.abs(sol.y[:, 0] - np.exp(-te)).max(), global_tol(sol), f"{method} t_eval")
    assert_within(abs(sol.y_stop[0] - np.exp(-2.0)), global_tol(sol), f"{method} y_stop")


def test_t_eval_without_t0_and_vector_atol():
    te = [0.5, 1.5]
    sol = integrate(oscillator, [1.0, 0.0], (0.0, 2.0), t_eval=te, atol=np.array([1e-10, 1e-10]))
    assert sol.t.tolist() == te and sol.y.shape == (2, 2)
    assert_within(np.abs(sol.y - np.c_[np.cos(te), -np.sin(te)]).max(), global_tol(sol), "samples")


@pytest.mark.parametrize("method", METHODS)
def test_terminal_event_at_the_zero_of_cos(method):
    ev = Event(lambda t, y: y[0], direction=-1, name="zero")
    sol = integrate(oscillator, [1.0, 0.0], (0.0, 3.0), events=ev, method=method, rtol=RTOL, atol=ATOL)
    assert sol.status == "event" and sol.event == "zero" and not sol.ok
    assert sol.message == f"event 'zero' at t = {sol.t_stop:.6g}"
    # |ẏ₀| = sin(π/2) = 1 at the crossing: the time error is the state error, plus brentq's 4ε·t.
    tol = Tol(global_tol(sol) + 8 * EPS * np.pi, "state error bound / |ẏ₀| + brentq's xtol")
    assert_within(abs(sol.t_stop - np.pi / 2), tol, f"{method} event time")
    assert sol.t[-1] == sol.t_stop and np.array_equal(sol.y[-1], sol.y_stop)   # the event sample appended
    assert sol.t_events["zero"].tolist() == [sol.t_stop] and sol.y_events["zero"].shape == (1, 2)


def test_event_directions_counts_and_recording():
    """Non-terminal events are recorded only; direction picks rising or falling zeros of cos t."""
    t1 = 3 * np.pi                                        # zeros of cos at π/2 (↓), 3π/2 (↑), 5π/2 (↓)

    def cos_zero(t, y):
        return y[0]
    cos_zero.direction = 0                                # a plain callable: recorded, both ways

    rising = Event(lambda t, y: y[0], terminal=False, direction=1, name="up")
    falling = Event(lambda t, y: y[0], terminal=False, direction=-1, name="down")
    sol = integrate(oscillator, [1.0, 0.0], (0.0, t1), events=[cos_zero, rising, falling])
    assert sol.ok and sol.event is None
    tol = Tol(global_tol(sol) + 8 * EPS * t1, "state error bound / |ẏ₀| (= 1) + brentq's xtol")
    for name, zeros in (("cos_zero", [0.5, 1.5, 2.5]), ("up", [1.5]), ("down", [0.5, 2.5])):
        assert len(sol.t_events[name]) == len(zeros), name
        assert_within(np.abs(sol.t_events[name] - np.pi * np.array(zeros)).max(), tol, name)
        assert_within(np.abs(sol.y_events[name][:, 0]).max(), global_tol(sol), f"{name}: y₀ = 0 there")
    second = integrate(oscillator, [1.0, 0.0], (0.0, t1), events=Event(cos_zero, terminal=2))
    assert second.status == "event" and len(second.t_events["cos_zero"]) == 2
    assert_within(abs(second.t_stop - 1.5 * np.pi), tol, "terminal at the 2nd crossing")
    twins = integrate(oscillator, [1.0, 0.0], (0.0, 1.0), events=[lambda t, y: y[0], lambda t, y: y[1]])
    assert sorted(twins.t_events) == ["<lambda>", "<lambda>#1"]


def test_terminal_event_with_t_eval_keeps_samples_up_to_it():
    te = np.linspace(0.0, 3.0, 31)
    ev = Event(lambda t, y: y[0], direction=-1, name="zero")
    sol = integrate(oscillator, [1.0, 0.0], (0.0, 3.0), events=ev, t_eval=te)
    assert sol.status == "event" and sol.t.tolist() == te[te <= sol.t_stop].tolist()
    assert_within(np.abs(sol.y_stop - [0.0, -1.0]).max(), global_tol(sol), "event state y_stop")
    assert_within(np.abs(sol.y[:, 0] - np.cos(sol.t)).max(), global_tol(sol), "samples before it")


# ---------------------------------------------------------------------------
# argument checks, before any work
# ---------------------------------------------------------------------------
BAD = [
    ({"t_span": (1.0, 0.0)}, "t_span"), ({"t_span": (0.0, np.inf)}, "t_span"), ({"t_span": (0.0,)}, "t_span"),
    ({"t_span": "ab"}, "t_span"), ({"t_eval": [0.5, 0.2]}, "t_eval"), ({"t_eval": [0.0, 3.0]}, "t_eval"),
    ({"t_eval": [-0.1, 1.0]}, "t_eval"), ({"t_eval": [np.nan]}, "t_eval"), ({"rtol": 0.0}, "rtol"),
    ({"rtol": 1.0}, "rtol"), ({"rtol": np.nan}, "rtol"), ({"rtol": -1e-6}, "rtol"), ({"atol": 0.0}, "atol"),
    ({"atol": -1.0}, "atol"), ({"atol": np.inf}, "atol"), ({"atol": np.ones(3)}, "atol"),
    ({"max_step": 0.0}, "max_step"), ({"max_step": np.nan}, "max_step"), ({"max_steps": 0}, "max_steps"),
    ({"max_steps": 1.5}, "max_steps"), ({"max_steps": True}, "max_steps"), ({"wall_time": 0.0}, "wall_time"),
    ({"wall_time": -1.0}, "wall_time"), ({"method": "Euler"}, "method"), ({"y0": np.ones((1, 1))}, "y0"),
    ({"y0": [np.nan]}, "y0"), ({"y0": [1j]}, "y0"), ({"y0": []}, "y0"), ({"events": [1.0]}, "events"),
    ({"events": [Event(lambda t, y: 0.0, terminal=-1)]}, "terminal"),
    ({"t_span": ("0", "1.0")}, "t_span"), ({"t_span": (False, True)}, "t_span"), ({"rtol": "1e-6"}, "rtol"),
    ({"max_step": "0.1"}, "max_step"), ({"wall_time": "5"}, "wall_time"),   # strings are not parsed
]


@pytest.mark.parametrize("kwargs, arg", BAD, ids=[f"{a}-{i}" for i, (_, a) in enumerate(BAD)])
def test_bad_arguments_raise_naming_them_before_any_call(kwargs, arg):
    calls = []

    def rhs(t, y):
        calls.append(t)
        return -y

    args = {"y0": [1.0], "t_span": (0.0, 2.0), **kwargs}
    with pytest.raises(StateError, match=arg):
        integrate(rhs, args.pop("y0"), args.pop("t_span"), **args)
    assert calls == []


@pytest.mark.parametrize("rhs, why", [
    (lambda t, y: np.ones(2), "returned shape (2,) at t = 0, expected (1,)"),
    (lambda t, y: np.array([np.nan]), "non-finite derivative at t = 0"),
    (lambda t, y: 1 / 0, "raised ZeroDivisionError: division by zero"),
    (lambda t, y: np.array(["a"]), "returned <U1"),
])
def test_rhs_checked_at_t0_names_the_callable(rhs, why):
    with pytest.raises(StateError, match="controller") as info:
        integrate(rhs, [1.0], (0.0, 1.0), name="controller")
    assert why in str(info.value)
    with pytest.raises(StateError, match="lambda"):           # default: rhs.__qualname__
        integrate(rhs, [1.0], (0.0, 1.0))


def test_event_checked_at_t0():
    with pytest.raises(StateError, match="event 'bad' raised KeyError"):
        integrate(decay, [1.0], (0.0, 1.0), events=Event(lambda t, y: {}["x"], name="bad"))
    with pytest.raises(StateError, match="event 'vec' returned"):
        integrate(decay, [1.0], (0.0, 1.0), events=Event(lambda t, y: [1.0, 2.0], name="vec"))


# ---------------------------------------------------------------------------
# failures after t0: keep what was computed, say when and why
# ---------------------------------------------------------------------------
def assert_failed_short(sol: Solution, t1: float):
    assert sol.status == "failed" and not sol.ok and sol.event is None
    assert sol.t_stop < t1 and sol.message.startswith(f"failed at t = {sol.t_stop:.6g}: ")
    assert len(sol.t) == len(sol.y)


@pytest.mark.parametrize("method", METHODS)
def test_exception_in_rhs_keeps_the_steps(method):
    def rhs(t, y):
        if t > 0.5:
            raise RuntimeError("motor driver fault")
        return -y
    sol = integrate(rhs, [1.0], (0.0, 1.0), method=method, max_step=0.05)
    assert_failed_short(sol, 1.0)
    assert "rhs raised RuntimeError: motor driver fault (at t = 0.5" in sol.message
    assert 0.4 <= sol.t_stop <= 0.5 and sol.t[-1] == sol.t_stop and len(sol.t) > 8
    assert_within(np.abs(sol.y[:, 0] - np.exp(-sol.t)).max(), global_tol(sol), "steps kept")


def test_exception_in_event_and_t_eval_samples_kept():
    def ev(t, y):
        if t > 0.5:
            raise ValueError("sensor")
        return 1.0
    te = np.linspace(0.0, 1.0, 11)
    sol = integrate(decay, [1.0], (0.0, 1.0), events=ev, t_eval=te, max_step=0.05)
    assert_failed_short(sol, 1.0)
    assert "event 'ev' raised ValueError: sensor" in sol.message
    assert sol.t.tolist() == te[te <= sol.t_stop].tolist() and len(sol.t) >= 5


@pytest.mark.parametrize("method", METHODS)
def test_nan_derivative_ends_the_run_promptly(method):
    def rhs(t, y):
        return -y if t <= 0.3 else np.full(1, np.nan)
    sol = integrate(rhs, [1.0], (0.0, 2.0), method=method)
    assert_failed_short(sol, 2.0)
    assert "returned a non-finite derivative" in sol.message and sol.t_stop <= 0.3
    # at most a few dozen steps (measured 1-38): a crawl towards 0.3 would take thousands
    assert sol.nsteps < 200


@pytest.mark.parametrize("method", METHODS)
def test_finite_time_blow_up_ends_quickly(method):
    """ẏ = y², y(0) = 1: y = 1/(1 − t).  The run ends near t = 1 with what it computed."""
    with np.errstate(over="ignore"):
        sol = integrate(lambda t, y: y ** 2, [1.0], (0.0, 2.0), method=method)
    assert_failed_short(sol, 2.0)
    assert ("solver failed: Required step size" in sol.message       # the solver's own failure
            or "non-finite derivative" in sol.message                 # y² overflowed to inf
            or "the run stalled" in sol.message)                      # Radau, LSODA: steps of 1e-8 .. 1e-14
    # near the blow-up (the numerical solution's own blow-up time may pass 1 by its error, 1e-11)
    assert abs(sol.t_stop - 1.0) < 1e-3 and sol.t[-1] == sol.t_stop
    early = sol.t < 0.5                                               # y ≤ 2 there
    assert_within(np.abs(sol.y[early, 0] - 1 / (1 - sol.t[early])).max(), global_tol(sol, 2.0), "early part")
    # ended by the solver, not by the budget of 100,000 steps (measured: Radau ~6,000 implicit
    # steps, the explicit methods a few hundred): counted in steps, so on any machine
    assert sol.nsteps < 20_000, sol.nsteps


def test_step_budget():
    full = integrate(decay, [1.0], (0.0, 2.0), max_step=0.1)
    assert full.ok and full.nsteps >= 20                               # max_step = 0.1 over 2
    exact = integrate(decay, [1.0], (0.0, 2.0), max_step=0.1, max_steps=full.nsteps)
    assert exact.ok and exact.nsteps == full.nsteps                   # the last allowed step finishes
    one_less = integrate(decay, [1.0], (0.0, 2.0), max_step=0.1, max_steps=full.nsteps - 1)
    assert_failed_short(one_less, 2.0)
    short = integrate(decay, [1.0], (0.0, 2.0), max_step=0.1, max_steps=5)
    assert_failed_short(short, 2.0)
    assert short.message.endswith("step budget of 5 steps exhausted") and short.nsteps == 5
    assert len(short.t) == 6 and short.t_stop == short.t[-1]


def test_a_crawl_stops_as_stalled():
    """ẏ = −10¹³ (y − cos t) is stiff: an explicit method's stable step is ~3/10¹³, so reaching
    t = 1 would take ~10¹² steps.  The pace check stops it after its first window of 1,000 steps,
    with the steps kept; an implicit method (Radau) finishes the same problem in a few steps."""
    def stiff(t, y):
        return -1e13 * (y - np.cos(t))
    sol = integrate(stiff, [1.0], (0.0, 1.0))
    assert_failed_short(sol, 1.0)
    assert "the run stalled: its last 1000 steps" in sol.message
    assert sol.nsteps == 1000 and len(sol.t) == 1001 and sol.t_stop == sol.t[-1]
    assert_within(np.abs(sol.y[:, 0] - 1.0).max(), Tol(1e-9, "cos t = 1 − t²/2 ≈ 1 − 1e-16 for t < 1e-7; "
                  "the relaxation from y0 = 1 adds the rtol 1e-10"), "y stays at cos t ≈ 1")
    sampled = integrate(stiff, [1.0], (0.0, 1.0), t_eval=[0.0, 0.5, 1.0])     # only t = 0 reached
    assert sampled.status == "failed" and sampled.t.tolist() == [0.0] and "stalled" in sampled.message
    radau = integrate(stiff, [1.0], (0.0, 1.0), method="Radau")
    assert radau.ok and radau.nsteps < 100
    assert_within(abs(radau.y[-1, 0] - np.cos(1.0) - np.sin(1.0) * 1e-13), global_tol(radau),
                  "y(1) = cos 1 + sin 1/10¹³ (the slow manifold) to the integrator's error")
    # a run whose pace is fine is never stopped by the check: 1,000-step windows at max_step 1e-4
    # project exactly the budget needed (1e4 steps), far below 100 times it
    ok = integrate(decay, [1.0], (0.0, 1.0), max_step=1e-4)
    assert ok.ok and ok.nsteps >= 10_000


def test_wall_time_budget():
    def slow(t, y):
        time.sleep(0.005)
        return -y
    sol = integrate(slow, [1.0], (0.0, 100.0), wall_time=0.05)
    assert_failed_short(sol, 100.0)
    assert sol.message.endswith("wall-clock budget of 0.05 s exhausted") and sol.nsteps >= 1
    # the budget is checked after every step: a step of 12 calls of ≥ 5 ms each takes ≥ 0.06 s, so
    # the run stops within a few steps of the budget (not counted in seconds: that depends on the machine)
    assert sol.nsteps <= 5, sol.nsteps


def test_keyboard_interrupt_returns_the_partial_run():
    def rhs(t, y):
        if t > 0.5:
            raise KeyboardInterrupt
        return -y
    sol = integrate(rhs, [1.0], (0.0, 1.0), max_step=0.05)
    assert_failed_short(sol, 1.0)
    assert sol.message.endswith("interrupted by the user") and 0.4 <= sol.t_stop <= 0.5


class _QuitsEarly(RK45):
    """A solver that says "finished" at the first step, short of t_bound."""

    def step(self):
        out = super().step()
        self.status = "finished"
        return out


class _Overflows(RK45):
    """A solver whose second step returns an infinite state without complaint."""

    def step(self):
        out = super().step()
        if self.t > 0.2:
            self.y = np.full_like(self.y, np.inf)
        return out


def test_never_completed_short_of_t1_nor_with_an_infinite_state(monkeypatch):
    monkeypatch.setitem(MODULE.METHODS, "RK45", _QuitsEarly)
    sol = integrate(decay, [1.0], (0.0, 1.0), method="RK45", max_step=0.1)
    assert_failed_short(sol, 1.0)
    assert "stopped before t1 = 1 without saying why" in sol.message
    monkeypatch.setitem(MODULE.METHODS, "RK45", _Overflows)
    sol = integrate(decay, [1.0], (0.0, 1.0), method="RK45", max_step=0.1)
    assert_failed_short(sol, 1.0)
    assert "the state became non-finite" in sol.message and np.all(np.isfinite(sol.y))
