r"""Time integration in the quasi-velocity coordinates (q, ν) (docs/REFERENCE.md J3, J5).

The state is (q, ν) with ν = (I + HφK)*θ̇; each right-hand side is

.. math:: \dot q = (I + HφK)^{-*} ν \ \text{(J3)},\qquad \dot ν \ \text{(J5, dynamic form)},

from one Riccati recursion (P, D, G), one outward pass (θ̇ and V from ν), the rate
recursion (Ġ, J6) and one inward pass (ε) — no outward acceleration pass.  The run is stepped
by :func:`opalg.simulate.integrate` and returned as a :class:`~opalg.simulate.Trajectory` whose
generalized velocities ``v`` are ν.
"""

from __future__ import annotations

import numpy as np

from opalg import _backend as bk
from opalg.model._checks import refuse_free
from opalg.simulate import Trajectory, integrate
from opalg.simulate._integrate import potential_energy, tau_at, tau_function
from opalg.simulate.compat import renamed
from opalg.errors import StateError
from opalg.model import _validate
from opalg.model.kinematics import Kinematics, body_kinematics, check_state
from opalg.model.multibody import Model
from opalg.algorithms.riccati import articulated
from opalg.spatial.vectors import cross_force, cross_motion
from opalg.quasi.accel import dynamic_pass
from opalg.quasi.rates import rates_pass
from opalg.quasi.velocities import qd_pass, stack


def nu_rhs(model: Model, q, nu, tau, f_ext=None, gravity: bool = True) -> tuple[np.ndarray, np.ndarray]:
    """(q̇, ν̇) at the state (q, ν) for checked arrays (one state or a batch); ``tau`` is an array
    or a callable of θ̇ (evaluated once θ̇ is known from ν)."""
    kin = body_kinematics(model, q, validate=False)
    art = articulated(model, q, kin)
    parts, V = qd_pass(model, kin, art, nu)
    qd = stack(parts)
    _complete(model, kin, qd, V)
    rates = rates_pass(model, kin, art, qd)
    T = tau(qd) if callable(tau) else tau
    return qd, stack(dynamic_pass(model, kin, rates, T, f_ext, gravity, "body"))


def _complete(model: Model, kin: Kinematics, qd, V: list) -> None:
    """Fill the gravity-free V, vJ, a, b of ``kin`` from θ̇ and the velocities of the J3 pass."""
    kin.V, kin.vJ, kin.a, kin.b = V, [None] * model.n, [None] * model.n, [None] * model.n
    for k in range(model.n):
        vJ, cJ = model.joints[k].velocity(kin.S[k], qd[..., model.dof_slice[k]])
        kin.vJ[k] = bk.broadcast_view(vJ, V[k].shape)
        kin.a[k] = cross_motion(V[k], kin.vJ[k]) + cJ
        kin.b[k] = cross_force(V[k], bk.mv(model.I_spatial[k], V[k]))


def simulate(model: Model, q0, v0=None, t_span=None, tau=None, gravity: bool = True, method: str = "DOP853",
             rtol: float = 1e-10, atol: float = 1e-12, t_eval=None, max_step: float = np.inf,
             max_steps: int = 100_000, wall_time: float | None = None, **old) -> Trajectory:
    r"""Integrate the motion in (q, ν): q̇ = (I + HφK)^{-*}ν (J3), ν̇ by the dynamic form of J5.

    The generalized velocities of this simulator are the quasi-velocities: ``v0`` is ν₀ and the
    result's ``v`` is ν(t).  The run goes through :func:`opalg.simulate.integrate`: a failure (a
    singular configuration, an error in ``tau``, a step-size collapse, a non-finite state) keeps
    every accepted step, ``status="failed"``, and the message says when and why.

    Parameters
    ----------
    model : Model
        Without free joints (:func:`opalg.floating.simulate` integrates those).
    q0 : array_like, shape (N,)
    v0 : array_like, shape (N,)
        The initial quasi-velocities ν₀ = (I + HφK)*θ̇₀ (:func:`opalg.quasi.nu`); ``nu0`` is its old
        name (accepted with a DeprecationWarning).
    t_span : (t0, t1)
    tau : None, array (N,) or callable ``tau(t, q, qd)``
        Hinge forces T: zero, held constant, or a function of the joint rates θ̇ (not of ν),
        checked at every call.
    gravity : bool
    method, rtol, atol, max_step, max_steps, wall_time
        As in :func:`opalg.simulate.integrate` (over a budget, or stalled, a run ends "failed"
        with its steps).
    t_eval : array_like, optional
        Output times within ``t_span`` (default: the accepted steps).

    Returns
    -------
    Trajectory
        ``q`` and ``v`` = ν at ``t``, and the extras ``qd``, the joint rates θ̇ = (I + HφK)^{-*}ν
        (J3); ``energy``, ½νᵀDν (= ½θ̇ᵀℳθ̇, J1) plus, with gravity, the potential
        −Σ_k m_k g·c_k; ``power``, θ̇ᵀT, the power of the hinge forces, so that
        dE/dt = ``power`` (J7; NaN where ``tau`` cannot be evaluated at a sample of a failed run).
        A ``tau`` that fails only at a sample of a completed run (never at a time the solver
        evaluated) raises its error.

    Examples
    --------
    >>> import numpy as np, opalg
    >>> from opalg import quasi
    >>> arm = opalg.planar_arm([1.0, 1.0], [1.0, 1.0], [0.1, 0.1])
    >>> sim = quasi.simulate(arm, [0.3, 0.2], [0.0, 0.0], (0.0, 1.0))
    >>> sim.status, bool(np.ptp(sim.energy) < 1e-7 * abs(sim.energy).max()), sim.qd.shape == sim.v.shape
    ('completed', True, True)
    """
    v0 = renamed("quasi.simulate", old, {"nu0": "v0"}, v0=v0).get("v0")
    if v0 is None or t_span is None:
        raise StateError("quasi.simulate: q0, v0 and t_span are required")
    _validate.model(model, "quasi.simulate")
    _validate.flag(gravity, "gravity", "quasi.simulate")
    N = model.ndof
    refuse_free(model, "quasi.simulate", "it advances q by q̇ = (I + HφK)^{-*}ν; integrate a floating "
                "model with opalg.floating.simulate")
    q0 = check_state(model, q0, "q0", config=True)
    v0 = check_state(model, v0, "v0")
    if q0.shape != (N,) or v0.shape != (N,) or q0.dtype.kind != "f" or v0.dtype.kind != "f":
        raise StateError(f"quasi.simulate: q0 and v0 must be single real states of shape ({N},)")
    tau_fn = tau_function(model, tau)
    tau_c = None if callable(tau) else tau_fn(0.0, q0, None)

    def forces(t, q, qd):
        return tau_at(model, tau_fn(t, q, qd), t) if callable(tau) else tau_c

    def rhs(t, y):
        q, v = y[:N], y[N:]
        T = (lambda qd: forces(t, q, qd)) if callable(tau) else tau_c
        with np.errstate(over="ignore", invalid="ignore"):
            qd, vd = nu_rhs(model, q, v, T, None, gravity)
        return np.concatenate([qd, vd])

    sol = integrate(rhs, np.concatenate([q0, v0]), t_span, t_eval=t_eval, method=method, rtol=rtol,
                    atol=atol, max_step=max_step, max_steps=max_steps, wall_time=wall_time,
                    name="quasi.simulate's right-hand side")
    q, v = sol.y[:, :N], sol.y[:, N:]
    qd = _qd_of(model, q, v)
    return Trajectory.from_solution(sol, N, N, qd=qd, energy=_energy(model, q, v, gravity),
                                    power=_power(sol, q, qd, forces))


def _qd_of(model: Model, q, v) -> np.ndarray:
    if not len(q):
        return np.zeros_like(v)
    kin = body_kinematics(model, q, validate=False)
    return stack(qd_pass(model, kin, articulated(model, q, kin), v)[0])


def _energy(model: Model, q, v, gravity: bool) -> np.ndarray:
    """½νᵀDν − Σ_k m_k g·c_k(q) for each sample."""
    if not len(q):
        return np.zeros(0)
    art = articulated(model, q)
    kinetic = sum(np.einsum("...i,...ij,...j->...", v[..., s], art.D[k], v[..., s])
                  for k, s in enumerate(model.dof_slice)) / 2
    return kinetic + potential_energy(model, q) if gravity else kinetic


def _power(sol, q, qd, forces) -> np.ndarray:
    """θ̇ᵀT at each sample.  Where ``tau`` cannot be evaluated, a completed run raises its error and a
    failed one (whose message says why tau failed) gets NaN."""
    out = np.full(len(sol.t), np.nan)
    for i, t in enumerate(sol.t):
        try:
            out[i] = qd[i] @ forces(float(t), q[i], qd[i])
        except Exception:
            if sol.ok:
                raise
    return out
