r"""Time integration in the quasi-velocity coordinates (q, ν) (docs/REFERENCE.md J3, J5).

The state is (q, ν) with ν = (I + HφK)*θ̇; each right-hand side is

.. math:: \dot q = (I + HφK)^{-*} ν \ \text{(J3)},\qquad \dot ν \ \text{(J5, dynamic form)},

from one Riccati recursion (P, D, G), one outward pass (θ̇ and V from ν), the rate
recursion (Ġ, J6) and one inward pass (ε) — no outward acceleration pass.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from opalg import _backend as bk
from opalg.model._checks import refuse_free
from opalg.simulate._integrate import check_span, potential_energy, step_through, tau_at, tau_function
from opalg.errors import StateError
from opalg.model.kinematics import Kinematics, body_kinematics, check_state
from opalg.model.multibody import Model
from opalg.algorithms.riccati import articulated
from opalg.spatial.vectors import cross_force, cross_motion
from opalg.quasi.accel import dynamic_pass
from opalg.quasi.rates import rates_pass
from opalg.quasi.velocities import qd_pass, stack


@dataclass
class QuasiSimulation:
    """Result of :func:`simulate`.

    Attributes
    ----------
    t : (K,) ; q, nu, qd : (K, N)
        The accepted steps (or the ``t_eval`` samples reached); ``qd`` = (I + HφK)^{-*}ν.
    energy : (K,)
        ½νᵀDν plus the gravitational potential −Σ m_k g·c_k (½νᵀDν = ½θ̇ᵀℳθ̇, J1).
    success : bool ; message : str
        False with the time and reason if the run stopped early (what was computed is kept).
    """

    t: np.ndarray
    q: np.ndarray
    nu: np.ndarray
    qd: np.ndarray
    energy: np.ndarray
    success: bool
    message: str


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


def simulate(model: Model, q0, nu0, t_span, tau=None, gravity: bool = True, method: str = "DOP853",
             rtol: float = 1e-10, atol: float = 1e-12, t_eval=None,
             max_step: float = np.inf) -> QuasiSimulation:
    r"""Integrate the motion in (q, ν): q̇ = (I + HφK)^{-*}ν (J3), ν̇ by the dynamic form of J5.

    ``tau`` is None (zero), an array (N,) held constant, or a callable ``tau(t, q, qd)``.
    A scipy ``OdeSolver`` (``method``: "DOP853", "RK45", "Radau") is stepped by hand so
    that a failure (a singular configuration, an error in ``tau``, a step size collapse)
    keeps every accepted step and reports when and why.

    Examples
    --------
    >>> import numpy as np, opalg
    >>> from opalg import quasi
    >>> arm = opalg.planar_arm([1.0, 1.0], [1.0, 1.0], [0.1, 0.1])
    >>> sim = quasi.simulate(arm, [0.3, 0.2], [0.0, 0.0], (0.0, 1.0))
    >>> sim.success, bool(np.ptp(sim.energy) < 1e-7 * abs(sim.energy).max())
    (True, True)
    """
    N = model.ndof
    refuse_free(model, "quasi.simulate", "it advances q by q̇ = (I + HφK)^{-*}ν; integrate a floating "
                "model with opalg.floating.simulate")
    q0 = check_state(model, q0, "q0", config=True)
    nu0 = check_state(model, nu0, "nu0")
    if q0.shape != (N,) or nu0.shape != (N,) or q0.dtype.kind != "f" or nu0.dtype.kind != "f":
        raise StateError(f"simulate: q0 and nu0 must be single real states of shape ({N},)")
    t0, t1 = check_span(t_span, method)
    tau_fn = tau_function(model, tau)
    tau_c = None if callable(tau) else tau_fn(t0, q0, None)

    def rhs(t, y):
        q, v = y[:N], y[N:]
        T = (lambda qd: tau_at(model, tau_fn(t, q, qd), t)) if callable(tau) else tau_c
        with np.errstate(over="ignore", invalid="ignore"):
            qd, vd = nu_rhs(model, q, v, T, None, gravity)
        return np.concatenate([qd, vd])

    t, Y, ok, msg = step_through(rhs, np.concatenate([q0, nu0]), t0, t1, method, rtol, atol, max_step, t_eval)
    q, v = Y[:, :N], Y[:, N:]
    return QuasiSimulation(t, q, v, _qd_of(model, q, v), _energy(model, q, v, gravity), ok, msg)


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
