r"""The integrator seam: ẏ = rhs(t, y) stepped by hand with one of scipy's solver classes.

This is the only place in opalg that drives an ODE solver.  Each accepted step is kept; events
are located on the step's dense output with ``brentq``; and whatever stops a run (an exception
raised by ``rhs`` or an event, a non-finite value, the solver's own step-size failure, a step or
wall-clock budget, Ctrl-C) ends it with the steps computed so far and a sentence saying when and
why.  A run that did not reach ``t1`` is never reported as completed.
"""

from __future__ import annotations

import math
import time
from dataclasses import dataclass, field
from typing import Callable

import numpy as np
from scipy.integrate import BDF, DOP853, LSODA, RK45, Radau
from scipy.optimize import brentq

from opalg.errors import StateError

#: The solver classes ``integrate`` steps, by name.
METHODS = {"RK45": RK45, "DOP853": DOP853, "Radau": Radau, "BDF": BDF, "LSODA": LSODA}
_EPS = float(np.finfo(float).eps)
#: Steps per check of the pace: a run whose last ``_WINDOW`` steps project beyond 100 times the
#: remaining step budget is stopped as stalled (a crawl at h ≈ 1e-13 would otherwise spend the
#: whole budget, minutes of an expensive rhs, before failing anyway).
_WINDOW = 1000


class Event:
    """An event g(t, y) = 0, located between accepted steps; terminal ones end the run.

    Parameters
    ----------
    fun : callable
        ``fun(t, y) -> float``; the event is a sign change of its value over a step.
    terminal : bool or int
        True (or 1) ends the run at the first crossing, an int k ≥ 1 at the k-th; False records only.
    direction : float
        As scipy: > 0 rising crossings only (− to +), < 0 falling only, 0 both.
    name : str, optional
        The key of the crossings in :class:`Solution` (default ``fun.__name__``).

    Examples
    --------
    >>> ev = Event(lambda t, y: y[0] - 1.0, direction=1, name="reaches one")
    >>> ev.name, ev.terminal, ev.direction, ev(0.0, [3.0])
    ('reaches one', True, 1, 2.0)
    """

    def __init__(self, fun: Callable, terminal: bool | int = True, direction: float = 0, name=None):
        if not callable(fun):
            raise StateError(f"Event: fun must be callable, got {type(fun).__name__}")
        self.fun, self.terminal, self.direction = fun, terminal, direction
        self.name = str(name) if name is not None else getattr(fun, "__name__", type(fun).__name__)

    def __call__(self, t, y):
        return self.fun(t, y)

    def __repr__(self):
        return f"Event({self.name!r}, terminal={self.terminal!r}, direction={self.direction!r})"


@dataclass
class Solution:
    """What :func:`integrate` returns: the steps (or samples) reached, and how the run ended.

    ``status`` is ``"completed"`` (reached t1), ``"event"`` (a terminal event, at ``t_stop``) or
    ``"failed"`` (``t_stop`` the last accepted time; ``message`` says why).  ``t_events`` and
    ``y_events`` hold every crossing found, per event name (empty arrays if none).  ``nfev``
    counts the calls of rhs (the check at t0 included), ``nsteps`` the accepted steps.

    Examples
    --------
    >>> import numpy as np
    >>> sol = integrate(lambda t, y: -y, [1.0], (0.0, 1.0))
    >>> sol.ok, sol.status, sol.message, sol.y.shape[1]
    (True, 'completed', 'reached t = 1 (end of t_span)', 1)
    """

    t: np.ndarray
    y: np.ndarray
    status: str
    message: str
    t_stop: float
    y_stop: np.ndarray
    event: str | None = None
    t_events: dict = field(default_factory=dict)
    y_events: dict = field(default_factory=dict)
    nfev: int = 0
    nsteps: int = 0

    @property
    def ok(self) -> bool:
        """True if the run reached the end of t_span."""
        return self.status == "completed"

    def __repr__(self):
        return (f"Solution(status={self.status!r}, message={self.message!r}, {len(self.t)} samples "
                f"of {self.y.shape[-1] if self.y.ndim == 2 else '?'} states, nsteps={self.nsteps})")


class _Stop(Exception):
    """Raised inside a step by the checked rhs or an event: the run ends, ``why`` says why."""


def _finite_real(x, what: str, shape=None) -> np.ndarray:
    a = np.asarray(x)
    if a.dtype.kind not in "biuf":
        raise StateError(f"integrate: {what} must be real numbers, got dtype {a.dtype}")
    a = a.astype(float)
    if shape is not None and a.shape not in shape:
        raise StateError(f"integrate: {what} must have shape {' or '.join(map(str, shape))}, got {a.shape}")
    if not np.all(np.isfinite(a)):
        raise StateError(f"integrate: {what} must be finite, got {x!r}")
    return a


def _is_number(x) -> bool:
    """A real number (not a string, which float() would parse, nor a bool)."""
    return isinstance(x, (int, float, np.integer, np.floating)) and not isinstance(x, (bool, np.bool_))


def _check_args(y0, t_span, t_eval, method, rtol, atol, max_step, max_steps, wall_time, events):
    """Every argument checked before any work; StateError naming the one at fault."""
    try:
        t0, t1 = t_span
    except (TypeError, ValueError):
        raise StateError(f"integrate: t_span must be a pair (t0, t1), got {t_span!r}") from None
    if not (_is_number(t0) and _is_number(t1)):
        raise StateError(f"integrate: t_span must be a pair of numbers (t0, t1), got {t_span!r}")
    t0, t1 = float(t0), float(t1)
    if not (math.isfinite(t0) and math.isfinite(t1) and t1 > t0):
        raise StateError(f"integrate: t_span must be finite with t1 > t0, got {t_span!r}")
    y = np.asarray(y0)
    if y.ndim != 1 or y.size == 0:
        raise StateError(f"integrate: y0 must be a non-empty 1-D array, got shape {y.shape}")
    y = _finite_real(y, "y0")
    if method not in METHODS:
        raise StateError(f"integrate: method must be one of {sorted(METHODS)}, got {method!r}")
    if not _is_number(rtol):
        raise StateError(f"integrate: rtol must be a number in (0, 1), got {rtol!r}")
    rtol = float(rtol)
    if not 0.0 < rtol < 1.0:
        raise StateError(f"integrate: rtol must be a number in (0, 1), got {rtol!r}")
    rtol = max(rtol, 100 * _EPS)                # scipy's floor, without its warning
    at = _finite_real(atol, "atol", shape=((), y.shape))
    if not np.all(at > 0):
        raise StateError(f"integrate: atol must be > 0, got {atol!r}")
    if not (_is_number(max_step) and max_step > 0):
        raise StateError(f"integrate: max_step must be > 0, got {max_step!r}")
    if isinstance(max_steps, bool) or not isinstance(max_steps, (int, np.integer)) or max_steps < 1:
        raise StateError(f"integrate: max_steps must be an int >= 1, got {max_steps!r}")
    if wall_time is not None and not (_is_number(wall_time) and wall_time > 0):
        raise StateError(f"integrate: wall_time must be None or > 0 seconds, got {wall_time!r}")
    te = None
    if t_eval is not None:
        te = np.asarray(t_eval)
        te = _finite_real(te.reshape(-1) if te.ndim == 0 else te, "t_eval")
        if te.ndim != 1:
            raise StateError(f"integrate: t_eval must be 1-D, got shape {te.shape}")
        if np.any(np.diff(te) <= 0):
            raise StateError("integrate: t_eval must be sorted in strictly ascending order")
        if te.size and (te[0] < t0 or te[-1] > t1):
            raise StateError(f"integrate: t_eval must lie within t_span = ({t0:g}, {t1:g}), "
                             f"got samples from {te[0]:g} to {te[-1]:g}")
    if callable(events) or isinstance(events, Event):
        events = (events,)
    evs, names = [], set()
    for k, ev in enumerate(events):
        if not callable(ev):
            raise StateError(f"integrate: events[{k}] must be callable, got {type(ev).__name__}")
        term = getattr(ev, "terminal", False)
        d = getattr(ev, "direction", 0)
        if isinstance(term, bool) or term is None:
            term = int(bool(term))
        if not isinstance(term, (int, np.integer)) or term < 0:
            raise StateError(f"integrate: events[{k}].terminal must be a bool or an int >= 0, got {term!r}")
        if not isinstance(d, (int, float, np.integer, np.floating)) or not math.isfinite(d):
            raise StateError(f"integrate: events[{k}].direction must be a finite number, got {d!r}")
        name = getattr(ev, "name", None) or getattr(ev, "__name__", None) or f"event{k}"
        name = name if name not in names else f"{name}#{k}"
        names.add(name)
        evs.append((ev, int(term), float(np.sign(d)), name))
    return y, t0, t1, te, rtol, at, float(max_step), evs


def integrate(rhs: Callable, y0, t_span, *, events=(), t_eval=None, method: str = "DOP853",
              rtol: float = 1e-10, atol=1e-10, max_step: float = np.inf, max_steps: int = 100_000,
              wall_time: float | None = None, name: str | None = None) -> Solution:
    r"""Integrate ẏ = rhs(t, y) from y(t0) = y0 over t_span, stepping a scipy solver by hand.

    Parameters
    ----------
    rhs : callable
        ``rhs(t, y) -> (n,)``; called once at t0 first (StateError if it raises, or returns a wrong
        shape or a non-finite value).
    y0 : array_like (n,)
    t_span : (t0, t1), t1 > t0
    events : Event or callable, or a sequence of them
        Plain callables may carry scipy's ``terminal``/``direction`` attributes (default: record
        only, both directions).  A crossing is a sign change of g over an accepted step (an exact
        zero at the step's end counts; one at t0 does not); two crossings within one step cancel
        (a smaller ``max_step`` resolves them).  Repeated names get ``#k`` appended.
    t_eval : array_like, optional
        Strictly ascending times within t_span: the result holds the dense-output samples reached
        instead of the accepted steps.  A terminal event keeps the samples up to its time; its
        state is ``y_stop``.
    method : {"DOP853", "RK45", "Radau", "BDF", "LSODA"}
    rtol, atol : float
        Error tolerances (rtol in (0, 1), raised to scipy's floor 100·ε; atol > 0, scalar or (n,)).
    max_step : float
        Largest step size (> 0).
    max_steps, wall_time : int, float or None
        Budgets: accepted steps, and seconds of ``time.monotonic`` (None: no limit).  Exceeding
        one ends the run as "failed".  So does a stall: every 1,000 steps the pace is checked, and
        a run that would need more than 100 times its remaining step budget at that pace to reach
        t1 stops at once (the factor leaves room for steps that grow again after a transient).
    name : str, optional
        How messages name rhs (default ``rhs.__qualname__``).

    Returns
    -------
    Solution
        The accepted steps with y0 first (or the ``t_eval`` samples reached) and, for a terminal
        event, the state at the event time appended.  Failures (see the module) return the part
        computed, ``status="failed"``; Ctrl-C returns it too, with "interrupted by the user".

    Examples
    --------
    >>> import numpy as np
    >>> sol = integrate(lambda t, y: -y, [1.0], (0.0, 2.0), t_eval=[0.5, 1.0])
    >>> sol.status, sol.t.tolist(), bool(abs(sol.y[-1, 0] - np.exp(-1.0)) < 1e-9)
    ('completed', [0.5, 1.0], True)
    >>> def ground(t, y):
    ...     return y[0]
    >>> fall = integrate(lambda t, y: [y[1], -9.81], [1.0, 0.0], (0.0, 5.0), events=Event(ground))
    >>> fall.status, fall.message, bool(abs(fall.t_stop - np.sqrt(2 / 9.81)) < 1e-9)
    ('event', "event 'ground' at t = 0.451524", True)
    >>> integrate(lambda t, y: [t, t], [1.0], (0.0, 1.0), name="controller")
    Traceback (most recent call last):
    ...
    opalg.errors.StateError: integrate: controller returned shape (2,) at t = 0, expected (1,)
    """
    y0, t0, t1, te, rtol, atol, max_step, evs = _check_args(
        y0, t_span, t_eval, method, rtol, atol, max_step, max_steps, wall_time, events)
    if not callable(rhs):
        raise StateError(f"integrate: rhs must be callable, got {type(rhs).__name__}")
    label = name or getattr(rhs, "__qualname__", None) or type(rhs).__name__
    n, nfev = y0.size, [0]

    def f(t, y):
        nfev[0] += 1
        try:
            out = np.asarray(rhs(t, y))
        except Exception as e:
            raise _Stop(f"{label} raised {type(e).__name__}: {e} (at t = {t:.6g})") from e
        if out.shape != (n,) or out.dtype.kind not in "biuf":
            raise _Stop(f"{label} returned {out.dtype} of shape {out.shape} at t = {t:.6g}, expected ({n},)"
                        if out.dtype.kind not in "biuf" else
                        f"{label} returned shape {out.shape} at t = {t:.6g}, expected ({n},)")
        if not np.all(np.isfinite(out)):
            bad = int(np.flatnonzero(~np.isfinite(out))[0])
            raise _Stop(f"{label} returned a non-finite derivative at t = {t:.6g} ({out[bad]} at index {bad})")
        return out.astype(float, copy=False)

    def g(i, t, y):
        ev, _, _, ev_name = evs[i]
        try:
            v = np.asarray(ev(t, y))
        except Exception as e:
            raise _Stop(f"event '{ev_name}' raised {type(e).__name__}: {e} (at t = {t:.6g})") from e
        if v.size != 1 or v.dtype.kind not in "biuf" or not np.isfinite(v).all():
            raise _Stop(f"event '{ev_name}' returned {v!r} at t = {t:.6g}, expected a finite real number")
        return float(v.reshape(()))

    try:                                           # the checks at t0 raise: nothing was computed yet
        f(t0, y0.copy())
        g_prev = [g(i, t0, y0) for i in range(len(evs))]
    except _Stop as e:
        raise StateError(f"integrate: {e}") from e.__cause__

    k = int(np.searchsorted(te, t0, side="right")) if te is not None else 0   # samples taken
    samples = [(t0, y0.copy())] if te is None or k else []   # (t, y) pairs: one append each (Ctrl-C safe)
    hits = {ev[3]: [] for ev in evs}
    counts = [0] * len(evs)
    last = (t0, y0.copy())
    status, why, stop_event = "failed", "", None
    start, nsteps, t_window = time.monotonic(), 0, t0
    try:
        solver = METHODS[method](f, t0, y0, t1, rtol=rtol, atol=atol, max_step=max_step)
        while solver.status == "running":
            if nsteps >= max_steps:
                why = f"step budget of {max_steps} steps exhausted"
                break
            if wall_time is not None and time.monotonic() - start > wall_time:
                why = f"wall-clock budget of {wall_time:g} s exhausted"
                break
            t_prev = solver.t
            out = solver.step()
            if solver.status == "failed" or out is not None:
                why = f"the {method} solver failed: {out}"
                break
            t_new, y_new = float(solver.t), solver.y.copy()
            if not np.all(np.isfinite(y_new)):
                why = f"the state became non-finite at t = {t_new:.6g}"
                break
            nsteps += 1
            dense = None
            t_end, y_end = t_new, y_new
            if evs:
                g_new = [g(i, t_new, y_new) for i in range(len(evs))]
                found = []
                for i, (_, _, d, _) in enumerate(evs):
                    a, b = g_prev[i], g_new[i]
                    if not ((a < 0 <= b and d >= 0) or (a > 0 >= b and d <= 0)):
                        continue
                    if b == 0:
                        found.append((t_new, i))
                        continue
                    dense = dense or solver.dense_output()
                    ends = {t_prev: a, t_new: b}

                    def h(s, i=i, ends=ends):
                        return ends[s] if s in ends else g(i, s, dense(s))

                    found.append((brentq(h, t_prev, t_new, xtol=4 * _EPS, rtol=4 * _EPS), i))
                for t_root, i in sorted(found):
                    y_root = y_new if t_root == t_new else dense(t_root)
                    hits[evs[i][3]].append((t_root, y_root))
                    counts[i] += 1
                    if evs[i][1] and counts[i] >= evs[i][1]:
                        t_end, y_end, stop_event = t_root, y_root, evs[i][3]
                        break
                g_prev = g_new
            if te is None:
                samples.append((t_end, y_end))
            else:
                j = int(np.searchsorted(te, t_end, side="right"))
                if j > k:
                    dense = dense or solver.dense_output()
                    for s in te[k:j]:
                        samples.append((float(s), y_end if s == t_end else dense(s)))
                    k = j
            last = (t_end, y_end)
            if stop_event is not None:
                status, why = "event", ""
                break
            if nsteps % _WINDOW == 0:
                pace = (t_new - t_window) / _WINDOW          # time per step over the window
                if (t1 - t_new) > pace * 100 * (max_steps - nsteps):
                    why = (f"the run stalled: its last {_WINDOW} steps advanced t by {t_new - t_window:.3g} "
                           f"(mean step {pace:.3g}); at that pace t1 = {t1:g} is beyond 100 times the "
                           f"remaining step budget ({max_steps - nsteps} steps)")
                    break
                t_window = t_new
        else:
            status = "completed"
    except _Stop as e:
        why = str(e)
    except KeyboardInterrupt:
        why = "interrupted by the user"
    except Exception as e:                         # the solver's own (e.g. a singular Newton matrix)
        why = f"the {method} solver raised {type(e).__name__}: {e}"
    t_stop, y_stop = last
    if status == "completed" and not t_stop >= t1:    # never "completed" short of t1
        status, why = "failed", f"the {method} solver stopped before t1 = {t1:g} without saying why"
    message = {"completed": f"reached t = {t1:.6g} (end of t_span)",
               "event": f"event '{stop_event}' at t = {t_stop:.6g}"}.get(status, f"failed at t = {t_stop:.6g}: {why}")
    t_out = np.array([s[0] for s in samples], dtype=float)
    y_out = np.array([s[1] for s in samples], dtype=float).reshape(len(samples), n)
    t_ev = {nm: np.array([p[0] for p in v], dtype=float) for nm, v in hits.items()}
    y_ev = {nm: np.array([p[1] for p in v], dtype=float).reshape(len(v), n) for nm, v in hits.items()}
    return Solution(t_out, y_out, status, message, float(t_stop), np.array(y_stop, dtype=float),
                    stop_event if status == "event" else None, t_ev, y_ev, nfev[0], nsteps)
