r"""Linearization of the state equation ẋ = f(x, u), x = [θ; θ̇] (docs/REFERENCE.md E20).

The dynamics rows are the forward-dynamics derivatives of E15; the kinematic rows are the
identity, except for a free joint, whose configuration error η = difference(q̄, q) (the tangent
space of K8) obeys η̇ = δv − crm(v̄) η to first order.
"""

from __future__ import annotations

import numpy as np

from opalg import _backend as bk
from opalg.algorithms.derivatives import aba_derivatives
from opalg.algorithms.riccati import check_passive
from opalg.model.kinematics import check_state
from opalg.model.multibody import Model
from opalg.spatial.vectors import crm


def linearize(model: Model, q, qd, tau, passive=None, f_ext=None,
              gravity: bool = True) -> tuple[np.ndarray, np.ndarray]:
    r"""(A, B) of ẋ = f(x, u) at (q, θ̇, T): x = [θ; θ̇] (2N), u = T or its active rows (E20).

    .. math::
        A = \begin{bmatrix} A_{θθ} & I \\ ∂\ddot θ/∂θ & ∂\ddot θ/∂\dot θ \end{bmatrix},\qquad
        B = \begin{bmatrix} 0 \\ ℳ^{-1} S_a^* \end{bmatrix},

    with the derivatives of :func:`opalg.aba_derivatives` (E15, O(n·N) per state).  A_θθ = 0,
    except for a free joint k, whose block is −crm(v_k): its coordinates are the tangent space,
    δq = η with q = q̄ exp(η) (``opalg.integrate(model, q̄, η)``), and η̇ = δv − crm(v̄) η.

    Parameters
    ----------
    model : Model
    q : array_like, shape (..., nq)
    qd, tau : array_like, shape (..., N)
        The operating point; ``tau`` holds the forces of every dof (with ``passive``, the passive
        entries are the forces held there, e.g. 0).
    passive : array_like of bool, shape (N,), optional
        Under-actuated model: B keeps the columns of the active dofs (``passive`` False) only.
    f_ext : array_like, shape (..., n, 6), optional
        External forces held constant (C9).
    gravity : bool

    Returns
    -------
    A : ndarray, shape (..., 2N, 2N)
    B : ndarray, shape (..., 2N, N_a)
        N_a = N without ``passive``.

    Examples
    --------
    >>> import numpy as np, opalg
    >>> from opalg import underactuated
    >>> model, passive = underactuated.acrobot()
    >>> up = np.array([np.pi / 2, 0.0])                         # upright, at rest: τ = 0
    >>> A, B = opalg.linearize(model, up, np.zeros(2), np.zeros(2), passive=passive)
    >>> A.shape, B.shape
    ((4, 4), (4, 1))
    >>> bool(np.max(np.linalg.eigvals(A).real) > 0)               # unstable without control
    True
    """
    mask = None if passive is None else check_passive(model, passive)
    qd = check_state(model, qd, "qd")
    dq, dqd, Minv = aba_derivatives(model, q, qd, tau, f_ext=f_ext, gravity=gravity)
    N = model.ndof
    batch = dq.shape[:-2]
    top = bk.zeros(batch + (N, 2 * N), dq)
    top[..., :, N:] = bk.eye(N, dq)
    for k in model.free_bodies:
        sl = model.dof_slice[k]
        top[..., sl, sl] = -crm(np.broadcast_to(qd[..., sl], batch + (6,)))
    A = np.concatenate([top, np.concatenate([dq, dqd], -1)], -2)
    cols = Minv if mask is None else Minv[..., :, ~mask]
    B = np.concatenate([bk.zeros(cols.shape, cols), cols], -2)
    return A, B
