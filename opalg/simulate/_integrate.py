r"""What the simulators share: argument checks, the potential energy, and ``step_through``.

Used by :func:`opalg.closed.simulate` (H6), :func:`opalg.quasi.simulate` (J3, J5) and
:func:`opalg.floating.simulate` (K12).  ``step_through`` is the old interface of
:func:`opalg.simulate.integrate` (the one place a solver is stepped), kept until they move to it.
"""

from __future__ import annotations

from typing import Callable

import numpy as np

from opalg.errors import StateError
from opalg.model.kinematics import body_poses, check_state
from opalg.simulate.integrate import METHODS, integrate


def check_span(t_span, method: str) -> tuple[float, float]:
    """(t0, t1) from ``t_span`` after checking it and the solver name; StateError otherwise.

    Examples
    --------
    >>> check_span((0, 1), "RK45")
    (0.0, 1.0)
    >>> check_span((1, 0), "RK45")
    Traceback (most recent call last):
    ...
    opalg.errors.StateError: simulate: t_span must be finite with t1 > t0, got (1, 0)
    """
    try:
        t0, t1 = (float(x) for x in t_span)
    except (TypeError, ValueError):
        raise StateError(f"simulate: t_span must be a pair (t0, t1), got {t_span!r}") from None
    if not (np.isfinite(t0) and np.isfinite(t1) and t1 > t0):
        raise StateError(f"simulate: t_span must be finite with t1 > t0, got {t_span!r}")
    if method not in METHODS:
        raise StateError(f"simulate: method must be one of {sorted(METHODS)}, got {method!r}")
    return t0, t1


def tau_function(model, tau) -> Callable:
    """``tau(t, q, qd)`` from None (zero), a constant array (N,) checked here, or a callable (kept).

    Examples
    --------
    >>> import opalg
    >>> arm = opalg.planar_arm([1.0, 1.0], [1.0, 1.0], [0.1, 0.1])
    >>> tau_function(arm, None)(0.0, None, None)
    array([0., 0.])
    """
    if callable(tau):
        return tau
    tau_c = np.zeros(model.ndof) if tau is None else check_state(model, tau, "tau")
    if tau_c.shape != (model.ndof,):
        raise StateError(f"simulate: tau must be None, an array of shape ({model.ndof},) or a callable")
    return lambda t, q, qd: tau_c


def tau_at(model, T, t: float) -> np.ndarray:
    """The value ``T`` of a user's ``tau(t, q, qd)`` checked: finite, shape (N,); StateError naming t.

    Examples
    --------
    >>> import numpy as np, opalg
    >>> arm = opalg.planar_arm([1.0, 1.0], [1.0, 1.0], [0.1, 0.1])
    >>> tau_at(arm, [1.0, np.nan], 0.25)
    Traceback (most recent call last):
    ...
    opalg.errors.StateError: simulate: tau(t, q, qd) at t = 0.25: tau has a non-finite entry at index (1,) (nan)
    """
    try:
        T = check_state(model, T, "tau")
    except StateError as e:
        raise StateError(f"simulate: tau(t, q, qd) at t = {t:.6g}: {e}") from None
    if T.shape != (model.ndof,):
        raise StateError(f"simulate: tau(t, q, qd) returned shape {T.shape} at t = {t:.6g}, "
                         f"expected ({model.ndof},)")
    return T


def step_through(rhs: Callable, y0: np.ndarray, t0: float, t1: float, method: str, rtol: float,
                 atol: float, max_step: float, t_eval=None) -> tuple[np.ndarray, np.ndarray, bool, str]:
    """Integrate ẏ = rhs(t, y) from y(t0) = y0 to t1 with :func:`opalg.simulate.integrate`.

    The interface of the simulators written before ``integrate`` (they will move to it): returns
    ``(t, Y, success, message)``, the accepted steps (with y0 first) or, given ``t_eval``, the
    dense-output samples reached.  A failure ends the run with ``success`` False and the message
    ``"stopped at t = …: why"``; the arguments are checked by ``integrate`` (StateError).

    Examples
    --------
    >>> import numpy as np
    >>> t, Y, ok, msg = step_through(lambda t, y: -y, np.ones(1), 0.0, 1.0, "DOP853", 1e-10, 1e-12,
    ...                              np.inf, t_eval=[0.5, 1.0])
    >>> ok, t.tolist(), bool(abs(Y[-1, 0] - np.exp(-1)) < 1e-9)
    (True, [0.5, 1.0], True)
    >>> def rhs(t, y):
    ...     if t > 0.5:
    ...         raise RuntimeError("fault")
    ...     return -y
    >>> t, Y, ok, msg = step_through(rhs, np.ones(1), 0.0, 1.0, "RK45", 1e-6, 1e-9, 0.1)
    >>> ok, msg.startswith("stopped at t = "), "RuntimeError: fault" in msg, len(t) == len(Y) > 1
    (False, True, True, True)
    """
    sol = integrate(rhs, y0, (t0, t1), t_eval=t_eval, method=method, rtol=rtol, atol=atol,
                    max_step=max_step)
    msg = "reached the end of t_span" if sol.ok else "stopped" + sol.message.removeprefix("failed")
    return sol.t, sol.y, sol.ok, msg


def potential_energy(model, q) -> np.ndarray:
    r"""Gravitational potential −Σ_k m_k g·c_k(q), c_k the world mass centre of body k.

    Examples
    --------
    >>> import numpy as np, opalg
    >>> arm = opalg.planar_arm([1.0], [2.0], [0.1])          # g = (0, -9.81, 0)
    >>> round(float(potential_energy(arm, np.array([np.pi / 2]))), 6)   # m g (L/2)
    9.81
    """
    R, p = body_poses(model, q)
    g = np.asarray(model.gravity, dtype=float)
    V = 0.0
    for k, inert in enumerate(model.inertias):
        c = p[k] + np.einsum("...ij,j->...i", R[k], np.asarray(inert.com, dtype=float))
        V = V - float(inert.mass) * (c @ g)
    return V
