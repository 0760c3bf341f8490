r"""Time integration of a closed system with Baumgarte stabilization (docs/REFERENCE.md H6).

The acceleration constraint G_cθ̈ = U alone lets the position error e(q) drift (it only fixes
ë = 0, so rounding and truncation errors grow linearly); Baumgarte's form

.. math:: G_c\ddot θ = U − 2α\, G_c\dot θ − β^2 e(q)

makes the error obey ë + 2αė + β²e ≈ 0, which decays for α, β > 0 (critically damped at α = β).
The run goes through :func:`opalg.simulate.integrate` and returns a
:class:`~opalg.simulate.Trajectory`.
"""

from __future__ import annotations

import warnings

import numpy as np

from opalg.algorithms.momentum import mechanical_energy
from opalg.errors import ModelError, StateError
from opalg.model import _validate
from opalg.model.kinematics import check_state
from opalg.simulate import Trajectory, integrate
from opalg.simulate._integrate import tau_at, tau_function
from opalg.simulate.compat import renamed


def simulate(system, q0, v0=None, t_span=None, tau=None, baumgarte=(10.0, 10.0), method: str = "DOP853",
             rtol: float = 1e-9, atol: float = 1e-11, t_eval=None, max_step: float = np.inf,
             max_steps: int = 100_000, wall_time: float | None = None, **old) -> Trajectory:
    r"""Integrate the closed system's motion from (q0, θ̇0 = v0) over ``t_span`` (H6).

    Each right-hand side is :meth:`ClosedSystem.forward` with ``baumgarte=(α, β)``; ``None`` or
    (0, 0) integrates G_cθ̈ = U unstabilized.  The run goes through
    :func:`opalg.simulate.integrate`: a failure (a singular configuration, an error in ``tau``, a
    step-size collapse, a non-finite state) keeps every accepted step, ``status="failed"``, and
    the message says when and why.

    Parameters
    ----------
    system : ClosedSystem
    q0, v0 : array_like, shape (N,)
        Initial configuration and joint rates θ̇ (``qd0`` is the old name of ``v0``).
    t_span : (t0, t1)
    tau : None, array (N,) or callable ``tau(t, q, v)``
        Joint forces: zero, held constant, or a function (checked at every call).
    baumgarte : (α, β) or None
    method, rtol, atol, max_step, max_steps, wall_time
        As in :func:`opalg.simulate.integrate` (over a budget, or stalled, a run ends "failed"
        with its steps).
    t_eval : array_like, optional
        Output times within ``t_span`` (default: the accepted steps).

    Returns
    -------
    Trajectory
        ``q``, ``v`` (= θ̇) at ``t`` and the extras ``position_error`` (max |e(q)|) and
        ``velocity_error`` (max |G_cθ̇|), the constraint drift; ``energy`` (½θ̇ᵀℳθ̇ plus the
        gravitational potential); ``multipliers`` (the closure forces λ of
        :meth:`ClosedSystem.forward` at each sample, under the run's Baumgarte terms; NaN rows
        where a sample cannot be evaluated); ``rank_drops`` (a list of (t, rank) where the
        rank of the closure rows fell below m during the run).

    Examples
    --------
    >>> import numpy as np
    >>> from opalg.closed import four_bar, simulate
    >>> sys, q = four_bar()
    >>> sim = simulate(sys, q, np.zeros(3), (0.0, 0.5))
    >>> sim.status, bool(sim.position_error.max() < 1e-8), sim.multipliers.shape[1] == sys.m
    ('completed', True, True)
    """
    if not (hasattr(system, "model") and hasattr(system, "closures")):
        raise ModelError(f"closed.simulate: system must be an opalg.closed.ClosedSystem, got "
                         f"{_validate.describe(system)}")
    v0 = renamed("closed.simulate", old, {"qd0": "v0"}, v0=v0).get("v0")
    if v0 is None or t_span is None:
        raise StateError("closed.simulate: q0, v0 and t_span are required")
    model, N = system.model, system.model.ndof
    q0 = check_state(model, q0, "q0", config=True)
    v0 = check_state(model, v0, "v0")
    if q0.shape != (N,) or v0.shape != (N,):
        raise StateError(f"closed.simulate: q0 and v0 must be single states of shape ({N},)")
    stab = None if baumgarte is None or tuple(baumgarte) == (0, 0) else baumgarte
    tau_fn = tau_function(model, tau)
    ranks = []

    def forces(t, q, v):
        return tau_at(model, tau_fn(t, q, v), t) if callable(tau) else tau_fn(t, q, v)

    def rhs(t, y):
        q, v = y[:N], y[N:]
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")        # the rank is recorded instead of warned at every call
            res = system.forward(q, v, forces(t, q, v), baumgarte=stab)
        if int(res.rank) < system.m and (not ranks or ranks[-1][1] != int(res.rank)):
            ranks.append((float(t), int(res.rank)))
        return np.concatenate([v, res.qdd])

    sol = integrate(rhs, np.concatenate([q0, v0]), t_span, t_eval=t_eval, method=method, rtol=rtol,
                    atol=atol, max_step=max_step, max_steps=max_steps, wall_time=wall_time,
                    name="closed.simulate's right-hand side")
    q, v = sol.y[:, :N], sol.y[:, N:]
    K = len(sol.t)
    pos = np.abs(system.constraint_error(q)).max(-1) if K else np.zeros(0)
    vel = np.abs(np.einsum("kij,kj->ki", system.jacobian(q), v)).max(-1) if K else np.zeros(0)
    energy = mechanical_energy(model, q, v) if K else np.zeros(0)
    return Trajectory.from_solution(sol, N, N, position_error=pos, velocity_error=vel, energy=energy,
                                    multipliers=_multipliers(system, sol.t, q, v, forces, stab),
                                    rank_drops=ranks)


def _multipliers(system, t, q, v, forces, stab) -> np.ndarray:
    """λ at each sample, by one batched forward call; a sample whose tau cannot be evaluated (only a
    failed run can keep one) gets a NaN row."""
    lam = np.full((len(t), system.m), np.nan)
    T = np.full(q.shape, np.nan)
    for i in range(len(t)):
        try:
            T[i] = forces(t[i], q[i], v[i])
        except Exception:    # the run's message says why it stopped
            pass
    good = np.all(np.isfinite(T), axis=1)
    if np.any(good):
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")        # dependent rows: the least-norm λ, as in the run
            lam[good] = system.forward(q[good], v[good], T[good], baumgarte=stab).lam
    return lam
