r"""LQR on :func:`opalg.linearize` (docs/REFERENCE.md E20): balance an under-actuated arm at an equilibrium.

With (A, B) of ẋ = f(x, u) at (x̄, ū) and weights Q, R, the algebraic Riccati equation
AᵀS + SA − SBR⁻¹BᵀS + Q = 0 (scipy's ``solve_continuous_are``) gives the gain K = R⁻¹BᵀS of
u = ū − K (x − x̄), x − x̄ = [difference(q̄, q); θ̇ − θ̄̇].
"""

from __future__ import annotations

from typing import Callable, NamedTuple

import numpy as np

from opalg.algorithms.aba import aba
from opalg.algorithms.linearize import linearize
from opalg.algorithms.riccati import check_passive
from opalg.errors import StateError
from opalg.model import _validate
from opalg.model.configuration import difference
from opalg.model.multibody import Model


class LQR(NamedTuple):
    """Gain ``K`` (N_a, 2N), Riccati solution ``S``, the linearization ``A``, ``B`` and the
    closed-loop poles (eigenvalues of A − BK), with the operating point ``q``, ``qd``, ``tau``."""

    K: np.ndarray
    S: np.ndarray
    A: np.ndarray
    B: np.ndarray
    poles: np.ndarray
    q: np.ndarray
    qd: np.ndarray
    tau: np.ndarray


def lqr(model: Model, q, qd, tau, Q, R, passive=None) -> LQR:
    r"""The infinite-horizon LQR of the linearization at (q, θ̇, T) (E20).

    .. math:: A^*S + SA − SBR^{-1}B^*S + Q = 0,\qquad K = R^{-1}B^*S,\qquad u = ū − K(x − x̄).

    Parameters
    ----------
    model : Model
    q, qd, tau : array_like
        The operating point (one state); ``tau`` the forces of every dof there.
    Q : array_like, shape (2N, 2N)
        Symmetric positive semidefinite state weight.
    R : array_like, shape (N_a, N_a)
        Symmetric positive definite input weight (N_a active dofs).
    passive : array_like of bool, shape (N,), optional

    Raises
    ------
    StateError
        A weight of the wrong shape, non-finite, not symmetric or not (semi)definite, naming it.

    Examples
    --------
    >>> import numpy as np
    >>> from opalg import underactuated
    >>> arm = underactuated.acrobot()
    >>> ctl = underactuated.lqr(*arm[:1], [np.pi / 2, 0], [0, 0], [0, 0], np.eye(4), np.eye(1), arm.passive)
    >>> ctl.K.shape, bool(np.all(ctl.poles.real < 0))
    ((1, 4), True)
    """
    from scipy.linalg import solve_continuous_are

    A, B = linearize(model, q, qd, tau, passive=passive)
    if A.ndim != 2:
        raise StateError("lqr takes one operating point (q, qd, tau without batch axes)")
    n2, m = B.shape
    Q = _validate.spd(Q, "Q", "lqr", size=n2, semidefinite=True, what="an LQR state weight")
    if isinstance(R, (int, float, np.floating, np.integer)) and not isinstance(R, bool):
        R = [[R]]                                       # one input: a number is its 1×1 weight
    R = _validate.spd(R, "R", "lqr", size=m, what="an LQR input weight")
    S = solve_continuous_are(A, B, Q, R)
    K = np.linalg.solve(R, B.T @ S)
    return LQR(K, S, A, B, np.linalg.eigvals(A - B @ K), np.asarray(q, float), np.asarray(qd, float),
               np.asarray(tau, float))


def state_error(model: Model, ctl: LQR) -> Callable:
    r"""``error(q, v) -> x̃ = [difference(q̄, q); v − v̄]`` about the operating point of ``ctl`` (E20),
    with the error of every revolute axis wrapped to [−π, π): an arm that has turned a full
    revolution is at the same equilibrium.  Prismatic and helical axes are not periodic and are not
    wrapped; a free joint's difference is already its tangent.  The LQR acts on x̃ (u = ū − Kx̃) and
    its cost-to-go is x̃ᵀSx̃.

    Examples
    --------
    >>> import numpy as np
    >>> from opalg import underactuated as ua
    >>> model, passive = ua.acrobot()
    >>> ctl = ua.lqr(model, [np.pi / 2, 0], [0, 0], [0, 0], np.eye(4), np.eye(1), passive)
    >>> err = ua.state_error(model, ctl)
    >>> err(np.array([np.pi / 2 + 2 * np.pi + 0.1, 0.0]), np.zeros(2)).round(12)
    array([0.1, 0. , 0. , 0. ])
    """
    if not isinstance(ctl, LQR):
        raise StateError(f"state_error: ctl must be the LQR that opalg.underactuated.lqr returns, "
                         f"got {type(ctl).__name__}")
    periodic = np.zeros(model.ndof, bool)
    for k, joint in enumerate(model.joints):
        if not joint.free:
            periodic[model.dof_slice[k]] = [kind == "R" for kind in joint.kinds]

    def error(q, v) -> np.ndarray:
        dq = difference(model, ctl.q, q)
        dq[..., periodic] = (dq[..., periodic] + np.pi) % (2 * np.pi) - np.pi
        return np.concatenate([dq, np.asarray(v) - ctl.qd])

    return error


def lqr_controller(model: Model, passive, ctl: LQR) -> Callable:
    r"""``controller(t, q, v) -> θ̈_a`` for :func:`opalg.underactuated.simulate` from an :class:`LQR`.

    The torque u = ū − K[difference(q̄, q); v − v̄] on the active dofs (the passive ones keep ū)
    is turned into the active accelerations it produces, θ̈ = ABA(q, v, T) (E9); the simulation's
    hybrid dynamics then returns the same torque in its ``tau``.  The error is that of
    :func:`state_error`: revolute axes wrapped to [−π, π), so a full turn is no error.

    Examples
    --------
    >>> import numpy as np
    >>> from opalg import underactuated
    >>> model, passive = underactuated.acrobot()
    >>> ctl = underactuated.lqr(model, [np.pi / 2, 0], [0, 0], [0, 0], np.eye(4), np.eye(1), passive)
    >>> f = underactuated.lqr_controller(model, passive, ctl)
    >>> bool(abs(f(0.0, np.array([np.pi / 2, 0.0]), np.zeros(2))[0]) < 1e-12)   # at the equilibrium: θ̈ = 0
    True
    >>> bool(abs(f(0.0, np.array([np.pi / 2 + 2 * np.pi, -2 * np.pi]), np.zeros(2))[0]) < 1e-9)  # a turn later
    True
    """
    mask = check_passive(model, passive)
    if not isinstance(ctl, LQR):
        raise StateError(f"lqr_controller: ctl must be the LQR that opalg.underactuated.lqr returns, "
                         f"got {type(ctl).__name__}")
    if ctl.K.shape != (int((~mask).sum()), 2 * model.ndof):
        raise StateError(f"lqr_controller: ctl.K has shape {ctl.K.shape}, expected ({int((~mask).sum())}, "
                         f"{2 * model.ndof}) for this model and passive mask")

    error = state_error(model, ctl)

    def controller(t, q, v):
        x = error(q, v)
        T = ctl.tau.copy()
        T[~mask] = T[~mask] - ctl.K @ x
        return aba(model, q, v, T)[~mask]

    return controller
