r"""The base's reaction to a prescribed arm motion at constant momentum (docs/REFERENCE.md K11).

The arm follows θ(t); the base carries no actuator, so the system's momentum h stays what it
was (zero when it starts from rest) and the base twist is the kinematic
:math:`v_b = ℳ_{bb}^{-1}(h_r − ℳ_{bm}\dot θ)` of :func:`opalg.floating.base_velocity` — a
first-order ODE for the base pose alone, with no dynamics integrated.

**Integrator.**  The base pose [p; quat] is integrated by its raw rate (ṗ = R v, the quaternion
rate ½ quat ⊗ (ω, 0); :func:`opalg.floating.simulate.config_rate`) with the quaternion
renormalized inside the right-hand side, by an adaptive scipy solver (DOP853 by default) stepped
by the one integrator seam, :func:`opalg.simulate.integrate`.  Chosen over a fixed-step Lie-group RK4 on
:func:`opalg.integrate` because the accuracy is then set by the error control (rtol, atol)
rather than by a step the caller has to pick, the samples come from the solver's dense output,
and a failure keeps the steps computed — the same machinery as :func:`opalg.floating.simulate`;
a plain RK4 with ``integrate`` in its stages is only second order on SO(3) without the
dexp⁻¹ corrections of Munthe-Kaas's scheme.
"""

from __future__ import annotations

from typing import Callable

import numpy as np

from opalg.simulate import Trajectory, integrate
from opalg.errors import StateError
from opalg.model.kinematics import check_state
from opalg.model.multibody import Model
from opalg.algorithms.momentum import spatial_momentum
from opalg.floating.base import _check_arm_rates, arm_dofs, base_velocity, free_root
from opalg.floating.simulate import config_rate, normalized


def base_reaction(model: Model, q0, joint_path: Callable, t, h=None, method: str = "DOP853",
                  rtol: float = 1e-10, atol: float = 1e-12, max_step: float = np.inf,
                  max_steps: int = 100_000, wall_time: float | None = None) -> Trajectory:
    r"""The base pose history while the arm follows ``joint_path`` at constant momentum h (K11).

    Integrates the base pose with :math:`v_b(q, \dot θ)` of :func:`base_velocity` (module
    docstring: the integrator and why).

    Parameters
    ----------
    model : Model
        Its only root on :class:`opalg.FreeJoint`, the only free joint.
    q0 : array_like, shape (nq,)
        The initial configuration: its base pose is the start; its arm coordinates must equal
        θ(t[0]) (to 1e-9, relative to their size).
    joint_path : callable
        ``joint_path(t) -> (theta, theta_dot)``, each of shape (nv − 6,): the arm's coordinates
        and rates, in q (and v) order without the root's entries.
    t : array_like, shape (K,)
        Increasing sample times; the run starts at t[0].
    h : array_like, shape (6,), optional
        The momentum about the inertial origin, inertial axes (default 0: free flight from rest).
    method, rtol, atol, max_step, max_steps, wall_time
        As :func:`opalg.floating.simulate`.

    Returns
    -------
    Trajectory
        At the samples of ``t`` reached: ``q``, the base pose integrated (unit quaternion) and the
        arm's θ(t) from the path; ``v`` = [v_b; θ̇] with v_b from :func:`base_velocity`; the extra
        ``momentum`` (K, 6), h_0 at every sample (K10: the requested h, up to round-off).  A run
        that stops early (``joint_path`` raising or returning non-finite values, a step-size
        collapse) keeps the samples reached, ``status="failed"``, and the message says when and
        why; a sample where ``joint_path`` cannot be evaluated after such a stop has NaN arm
        coordinates, v and momentum.

    Examples
    --------
    >>> import numpy as np, opalg
    >>> from opalg.floating import base_reaction
    >>> m = opalg.random_model(3, "chain", seed=0, joints="revolute", floating=True)
    >>> path = lambda t: (np.full(2, 1 - np.cos(t)), np.full(2, np.sin(t)))
    >>> res = base_reaction(m, opalg.neutral(m), path, np.linspace(0, 1, 5))
    >>> res.status, res.q.shape, bool(np.abs(res.momentum).max() < 1e-12)
    ('completed', (5, 9), True)
    >>> bool(np.linalg.norm(res.q[-1, :3]) > 1e-3)            # the base moved
    True
    """
    r = free_root(model, "base_reaction")
    q0 = check_state(model, q0, "q0", config=True)
    if q0.shape != (model.nq,) or q0.dtype.kind != "f":
        raise StateError(f"base_reaction: q0 must be a single real configuration of shape ({model.nq},)")
    if not callable(joint_path):
        raise StateError(f"base_reaction: joint_path must be a callable t -> (theta, theta_dot), "
                         f"got {type(joint_path).__name__}")
    ts = np.asarray(t, dtype=float)
    if ts.ndim != 1 or ts.size < 2 or not np.all(np.isfinite(ts)) or np.any(np.diff(ts) <= 0):
        raise StateError(f"base_reaction: t must be an increasing 1-d array of at least two finite times, got {t!r}")
    h0 = np.zeros(6) if h is None else check_state(model, h, "h", last=6)
    if h0.shape != (6,):
        raise StateError(f"base_reaction: h must have shape (6,), got {h0.shape}")
    qs_arm, qs_b = arm_dofs(model, r, config=True), model.q_slice[r]

    def path(tt):
        try:
            th, thd = joint_path(tt)
            th = _check_arm_rates(model, th, r, "base_reaction", "theta").astype(float)
            thd = _check_arm_rates(model, thd, r, "base_reaction", "theta_dot").astype(float)
        except StateError as e:
            raise StateError(f"base_reaction: joint_path({tt:.6g}): {e}") from None
        except (TypeError, ValueError):
            raise StateError(f"base_reaction: joint_path({tt:.6g}) must return (theta, theta_dot)") from None
        if th.shape != (model.nv - 6,) or thd.shape != (model.nv - 6,):
            raise StateError(f"base_reaction: joint_path({tt:.6g}) returned shapes {th.shape}, {thd.shape}; "
                             f"expected ({model.nv - 6},) each")
        return th, thd

    th0, _ = path(float(ts[0]))
    if np.abs(q0[qs_arm] - th0).max(initial=0) > 1e-9 * (1 + np.abs(th0).max(initial=0)):
        raise StateError("base_reaction: the arm coordinates of q0 differ from joint_path(t[0])[0] "
                         f"(max |diff| = {np.abs(q0[qs_arm] - th0).max():.3g})")

    def config(yb, th):
        q = np.empty(model.nq)
        q[qs_b], q[qs_arm] = yb, th
        return normalized(model, q)

    def rhs(tt, yb):
        th, thd = path(tt)
        q = config(yb, th)
        v = base_velocity(model, q, thd, h0, full=True)
        return config_rate(model, q, v)[qs_b]

    sol = integrate(rhs, q0[qs_b], (ts[0], ts[-1]), t_eval=ts, method=method, rtol=rtol, atol=atol,
                    max_step=max_step, max_steps=max_steps, wall_time=wall_time,
                    name="base_reaction's right-hand side")
    K = len(sol.t)
    q, v, mom = np.full((K, model.nq), np.nan), np.full((K, model.nv), np.nan), np.full((K, 6), np.nan)
    for i in range(K):
        try:
            th, thd = path(float(sol.t[i]))
        except StateError:
            if sol.ok:
                raise
            q[i, qs_b] = sol.y[i]           # a failed run: its message says why the path failed
            q[i, qs_b.start + 3:qs_b.stop] /= np.linalg.norm(sol.y[i, 3:])
            continue
        q[i] = config(sol.y[i], th)
        v[i] = base_velocity(model, q[i], thd, h0, full=True)
    done = np.isfinite(v).all(axis=1)
    if done.any():
        mom[done] = spatial_momentum(model, q[done], v[done])
    return Trajectory(sol.t, q, v, sol.status, sol.message, sol.t_stop, {"momentum": mom}, sol.event)
