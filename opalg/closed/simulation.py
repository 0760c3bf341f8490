r"""Time integration of a closed system with Baumgarte stabilization (docs/REFERENCE.md H6).

The acceleration constraint G_cθ̈ = U alone lets the position error e(q) drift (it only fixes
ë = 0, so rounding and truncation errors grow linearly); Baumgarte's form

.. math:: G_c\ddot θ = U − 2α\, G_c\dot θ − β^2 e(q)

makes the error obey ë + 2αė + β²e ≈ 0, which decays for α, β > 0 (critically damped at α = β).
"""

from __future__ import annotations

import warnings
from dataclasses import dataclass, field

import numpy as np

from opalg.simulate._integrate import check_span, potential_energy, step_through, tau_function
from opalg.algorithms.crba import crba
from opalg.errors import StateError
from opalg.model.kinematics import check_state


@dataclass
class Simulation:
    """Result of :func:`simulate`.

    Attributes
    ----------
    t : (K,) ; q, qd : (K, N)
        The accepted steps (or the ``t_eval`` samples reached).
    position_error, velocity_error : (K,)
        max |e(q)| and max |G_c θ̇| at each sample: the constraint drift.
    energy : (K,)
        Kinetic plus gravitational potential energy ½θ̇ᵀℳθ̇ − Σ m_k g·c_k.
    success : bool ; message : str
        False with the time and reason if the run stopped early (what was computed is kept).
    """

    t: np.ndarray
    q: np.ndarray
    qd: np.ndarray
    position_error: np.ndarray
    velocity_error: np.ndarray
    energy: np.ndarray
    success: bool
    message: str
    rank: list = field(default_factory=list)


def mechanical_energy(model, q, qd) -> np.ndarray:
    r"""½θ̇ᵀℳ(q)θ̇ − Σ_k m_k g·c_k(q), c_k the world mass centre of body k (C3 for ℳ).

    Examples
    --------
    >>> import numpy as np, opalg
    >>> from opalg.closed.simulation import mechanical_energy
    >>> arm = opalg.planar_arm([1.0], [2.0], [0.1])          # g = (0, -9.81, 0)
    >>> round(float(mechanical_energy(arm, [np.pi / 2], [0.0])), 6)   # m g (L/2)
    9.81
    """
    q = check_state(model, q, "q")
    qd = check_state(model, qd, "qd")
    T = 0.5 * np.einsum("...i,...ij,...j->...", qd, crba(model, q), qd)
    return T + potential_energy(model, q)


def simulate(system, q0, qd0, t_span, tau=None, baumgarte=(10.0, 10.0), method: str = "DOP853",
             rtol: float = 1e-9, atol: float = 1e-11, t_eval=None, max_step: float = np.inf) -> Simulation:
    r"""Integrate the closed system's motion from (q0, θ̇0) over ``t_span`` (H6).

    Each right-hand side is :meth:`ClosedSystem.forward` with ``baumgarte=(α, β)``; ``None`` or
    (0, 0) integrates G_cθ̈ = U unstabilized.  ``tau`` is None (zero), an array (N,) held
    constant, or a callable ``tau(t, q, qd)``.  A scipy ``OdeSolver`` (``method``: "DOP853",
    "RK45", "Radau") is stepped by hand so that a failure (a singular configuration, an error in
    ``tau``, a step size collapse, a non-finite state) keeps every accepted step and reports when
    and why.

    Examples
    --------
    >>> import numpy as np
    >>> from opalg.closed import four_bar, simulate
    >>> sys, q = four_bar()
    >>> sim = simulate(sys, q, np.zeros(3), (0.0, 0.5))
    >>> sim.success, bool(sim.position_error.max() < 1e-8)
    (True, True)
    """
    model, N = system.model, system.model.ndof
    q0 = check_state(model, q0, "q0", config=True)
    qd0 = check_state(model, qd0, "qd0")
    if q0.shape != (N,) or qd0.shape != (N,):
        raise StateError(f"simulate: q0 and qd0 must be single states of shape ({N},)")
    t0, t1 = check_span(t_span, method)
    stab = None if baumgarte is None or tuple(baumgarte) == (0, 0) else baumgarte
    tau_fn = tau_function(model, tau)

    ranks = []

    def rhs(t, y):
        q, qd = y[:N], y[N:]
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")        # the rank is recorded instead of warned at every call
            res = system.forward(q, qd, tau_fn(t, q, qd), baumgarte=stab)
        if int(res.rank) < system.m and (not ranks or ranks[-1][1] != int(res.rank)):
            ranks.append((t, int(res.rank)))
        return np.concatenate([qd, res.qdd])

    t, Y, ok, msg = step_through(rhs, np.concatenate([q0, qd0]), t0, t1, method, rtol, atol, max_step, t_eval)
    q, qd = Y[:, :N], Y[:, N:]
    pos = np.abs(system.constraint_error(q)).max(-1)
    vel = np.abs(np.einsum("kij,kj->ki", system.jacobian(q), qd)).max(-1)
    return Simulation(t, q, qd, pos, vel, mechanical_energy(model, q, qd), ok, msg, ranks)
