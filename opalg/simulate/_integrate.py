r"""What the model-based simulators share besides the seam: the joint-force argument ``tau``
(None, a constant, or a callable) checked, and the gravitational potential energy.

Used by :func:`opalg.closed.simulate` (H6), :func:`opalg.quasi.simulate` (J3, J5) and
:func:`opalg.floating.simulate` (K12); they step time through :func:`opalg.simulate.integrate`.
"""

from __future__ import annotations

from typing import Callable

import numpy as np

from opalg.errors import StateError
from opalg.model.kinematics import body_poses, check_state


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
