r"""A controlled run of an under-actuated arm: hybrid dynamics stepped by :func:`opalg.simulate.integrate`.

docs/REFERENCE.md G3, G4.  The controller chooses the active accelerations, the passive forces are
given, and each right-hand side is one :func:`opalg.hybrid` call: the passive accelerations (the
motion nobody commands) and the active torques the motors must apply.
"""

from __future__ import annotations

import warnings
from typing import Callable

import numpy as np

from opalg import _backend as bk
from opalg.algorithms.hybrid import hybrid
from opalg.algorithms.riccati import check_passive
from opalg.errors import StateError
from opalg.model._checks import refuse_free
from opalg.model.kinematics import check_state
from opalg.model.multibody import Model
from opalg.simulate import Trajectory, integrate
from opalg.simulate.compat import renamed

#: Output samples over (0, t_end) when the old ``t_end`` is given without ``t_eval`` (its old default).
OLD_SAMPLES = 401


def simulate(model: Model, passive, controller: Callable, q0=None, v0=None, t_span=None, t_eval=None,
             passive_force: Callable | None = None, method: str = "DOP853", rtol: float = 1e-10,
             atol: float = 1e-10, max_step: float = np.inf, max_steps: int = 100_000, wall_time: float | None = None, **old) -> Trajectory:
    r"""Integrate ``ℳq̈ + C = τ`` with θ̈_a = controller(t, q, v) and T_p = passive_force(t, q, v).

    Each right-hand side is one :func:`opalg.hybrid` call: it returns the passive accelerations
    (the motion nobody commands) and the active torques a motor must apply.  The run goes through
    :func:`opalg.simulate.integrate`: the controller and the passive force are checked at t0 (a
    StateError naming the one at fault and the size it must have); a run that cannot go on later
    keeps what it computed, ``status="failed"``, and the message says when and why.

    Parameters
    ----------
    model, passive
        E.g. ``*acrobot()``.
    controller : callable ``(t, q, v) -> (N_a,)``
        Desired active accelerations, one per active dof.
    q0, v0 : array_like, shape (N,)
        Initial joint angles and rates.
    t_span : (t0, t1)
    t_eval : array_like, optional
        Output times within t_span (default: the accepted steps).
    passive_force : callable ``(t, q, v) -> (N_p,)``, optional
        Default zero (frictionless passive joints).
    method, rtol, atol, max_step, max_steps, wall_time
        As in :func:`opalg.simulate.integrate` (over a budget, or stalled, a run ends "failed"
        with its steps).

    Returns
    -------
    Trajectory
        ``q``, ``v`` at ``t`` and the extras ``qdd`` (the accelerations) and ``tau`` (the joint
        forces; the passive entries are the given passive forces), by one batched
        :func:`opalg.hybrid` call on the samples (NaN rows at a sample where the controller or
        the passive force cannot be evaluated: only a failed run keeps such a sample).

    Notes
    -----
    The previous release's call ``simulate(model, passive, controller, x0, t_end[, t_eval[,
    passive_force]])``, x0 = [q0; v0], and the keywords ``x0`` and ``t_end`` still work, with a
    DeprecationWarning (t_span = (0, t_end), and without t_eval 401 samples as before).  A run
    that strays into an error no longer retries a smaller step (the old ``solve_ivp`` wrapper
    turned errors into NaN): the first error ends it.

    Examples
    --------
    >>> import numpy as np
    >>> from opalg import underactuated
    >>> arm = underactuated.acrobot()
    >>> run = underactuated.simulate(*arm, underactuated.swing_controller(*arm), [-1.5, 0], [0, 0], (0.0, 1.0))
    >>> run.status, bool(np.allclose(run.tau[:, 0], 0.0)), run.qdd.shape == run.v.shape
    ('completed', True, True)
    >>> underactuated.simulate(*arm, lambda t, q, v: [0.0, 0.0], [-1.5, 0], [0, 0], (0.0, 0.2))
    Traceback (most recent call last):
    ...
    opalg.errors.StateError: underactuated.simulate: controller(t, q, v) returned [0.0, 0.0] at t = 0: expected 1 finite number(s), one per active dof (passive = [True, False])
    """
    mask = check_passive(model, passive)
    N = model.ndof
    refuse_free(model, "underactuated.simulate", "its state is [θ; θ̇] with q̇ = θ̇; use opalg.floating.simulate")
    kw = renamed("underactuated.simulate", old, {"x0": "q0, v0", "t_end": "t_span"})
    x0, t_end = kw.get("q0, v0"), kw.get("t_span")
    if _is_number(v0) and np.size(q0) == 2 * N and x0 is None and t_end is None:
        warnings.warn("underactuated.simulate(model, passive, controller, x0, t_end, ...) is now (model, "
                      "passive, controller, q0, v0, t_span, ...); x0 = [q0; v0] and t_end (t_span = (0, t_end)) "
                      "are read as before until the next release", DeprecationWarning, stacklevel=2)
        x0, t_end, q0, v0 = q0, v0, None, None
        if t_span is not None:                 # the old order: (x0, t_end, t_eval, passive_force)
            if t_eval is not None:
                if not callable(t_eval) or passive_force is not None:
                    raise StateError("underactuated.simulate: in the old order (x0, t_end, t_eval, "
                                     "passive_force, …) give rtol and atol by name")
                passive_force = t_eval
            t_eval, t_span = t_span, None
    elif t_end is not None and x0 is None and v0 is None and q0 is not None and np.size(q0) == 2 * N:
        x0, q0 = q0, None                      # (…, x0, t_end=…): x0 given by position
    if x0 is not None:
        if q0 is not None or v0 is not None:
            raise StateError("underactuated.simulate: give q0 and v0 or the old x0 = [q0; v0], not both")
        x0 = check_state(model, x0, "x0", last=2 * N)
        if x0.shape != (2 * N,):
            raise StateError(f"underactuated.simulate: x0 must have shape ({2 * N},), got {x0.shape}")
        q0, v0 = x0[:N], x0[N:]
    if t_end is not None:
        if t_span is not None:
            raise StateError("underactuated.simulate: give t_span or the old t_end, not both")
        if not _is_number(t_end) or not np.isfinite(t_end) or t_end <= 0:
            raise StateError(f"underactuated.simulate: t_end must be a positive number, got {t_end!r}")
        t_span = (0.0, float(t_end))
        t_eval = np.linspace(0.0, float(t_end), OLD_SAMPLES) if t_eval is None else t_eval
    if q0 is None or v0 is None or t_span is None:
        raise StateError("underactuated.simulate: q0, v0 and t_span are required")
    q0, v0 = check_state(model, q0, "q0", config=True), check_state(model, v0, "v0")
    if q0.shape != (N,) or v0.shape != (N,) or q0.dtype.kind != "f" or v0.dtype.kind != "f":
        raise StateError(f"underactuated.simulate: q0 and v0 must be single real states of shape ({N},)")
    if not callable(controller):
        raise StateError(f"underactuated.simulate: controller must be callable, got {type(controller).__name__}")
    if passive_force is not None and not callable(passive_force):
        raise StateError("underactuated.simulate: passive_force must be None or callable, "
                         f"got {type(passive_force).__name__}")
    inputs = _Inputs(mask, controller, passive_force)
    try:
        t0 = float(t_span[0])
    except (TypeError, ValueError, IndexError):
        raise StateError(f"underactuated.simulate: t_span must be a pair (t0, t1), got {t_span!r}") from None
    try:                                       # the controller and the passive force at t0: a clear error
        inputs(t0, q0, v0)
    except StateError as e:
        raise StateError(f"underactuated.simulate: {e}") from None

    def rhs(t, x):
        q, v = x[:N], x[N:]
        return np.concatenate([v, hybrid(model, q, v, *inputs(t, q, v), mask)[0]])

    sol = integrate(rhs, np.concatenate([q0, v0]), t_span, t_eval=t_eval, method=method, rtol=rtol,
                    atol=atol, max_step=max_step, max_steps=max_steps, wall_time=wall_time, name="underactuated.simulate")
    q, v = sol.y[:, :N], sol.y[:, N:]
    tau_in, qdd_in = np.full((len(sol.t), N), np.nan), np.full((len(sol.t), N), np.nan)
    for i, t in enumerate(sol.t):
        try:
            tau_in[i], qdd_in[i] = inputs(t, q[i], v[i])
        except Exception:                      # only a failed run can keep such a sample
            pass
    good = np.all(np.isfinite(qdd_in), axis=1)
    qdd, tau = qdd_in.copy(), tau_in.copy()
    if np.any(good):
        qdd[good], tau[good] = hybrid(model, q[good], v[good], tau_in[good], qdd_in[good], mask)
    return Trajectory.from_solution(sol, N, N, qdd=qdd, tau=tau)


class _Inputs:
    """``(t, q, v) -> (τ, q̈)`` with the passive forces in τ and the commanded accelerations in q̈."""

    def __init__(self, mask, controller, passive_force):
        self.mask, self.controller, self.passive_force = mask, controller, passive_force
        self.sizes = int(np.count_nonzero(~mask)), int(np.count_nonzero(mask))

    def __call__(self, t, q, v):
        tau, qdd = np.zeros(self.mask.size), np.zeros(self.mask.size)
        qdd[~self.mask] = self._call(self.controller, "controller", "active", t, q, v, self.sizes[0])
        if self.passive_force is not None:
            tau[self.mask] = self._call(self.passive_force, "passive_force", "passive", t, q, v, self.sizes[1])
        return tau, qdd

    def _call(self, fn, name, kind, t, q, v, size):
        raw = fn(t, q, v)
        try:
            bk.check_no_strings(raw, name, StateError)
            out = np.asarray(raw, dtype=float).reshape(-1)
        except (TypeError, ValueError) as e:
            if isinstance(e, StateError):
                raise
            raise StateError(f"{name}(t, q, v) returned {raw!r} at t = {t:.6g}: expected numbers") from None
        if out.shape != (size,) or not np.all(np.isfinite(out)):
            raise StateError(f"{name}(t, q, v) returned {out.tolist()} at t = {t:.6g}: expected {size} finite "
                             f"number(s), one per {kind} dof (passive = {self.mask.tolist()})")
        return out


def _is_number(x) -> bool:
    return isinstance(x, (int, float, np.integer, np.floating)) and not isinstance(x, bool)
