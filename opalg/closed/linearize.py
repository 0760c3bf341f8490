r"""Linearization of a closed system's motion on its constraint manifold (docs/REFERENCE.md H11).

The state x = [θ; θ̇] of a :class:`~opalg.closed.ClosedSystem` lives on the manifold
{e(θ) = 0, G_c(θ)θ̇ = 0}, of dimension 2(N − r) with r = rank G_c.  The linearization is written
in the chart ξ = T⁺(x − x̄), T⁺ = diag(Zᵀ, Zᵀ), whose tangent basis T has the columns

.. math::
    δθ = Z a,\qquad δ\dot θ = Z b − G_c^+\, ∂_θ(G_c\dot{\bar θ})\, Z a,

Z an orthonormal basis of null G_c.  The derivatives of θ̈ along T's columns come from
differentiating the KKT equations (H5) about (θ̈̄, λ̄): the tree's residual by the tangent
Newton–Euler recursion (E14, :func:`opalg.rnea_derivatives`), the closure terms ∂(G_c*λ̄),
∂(G_cθ̈̄) and ∂U by complex steps of :meth:`ClosedSystem.jacobian` and
:meth:`ClosedSystem.drift`, and one solve by the tree passes of
:meth:`ClosedSystem.forward` with the closure's correction (E15 extended by the closures).
"""

from __future__ import annotations

import warnings
from typing import NamedTuple

import numpy as np

from opalg.algorithms.derivatives import rnea_derivatives
from opalg.algorithms.riccati import check_passive
from opalg.algorithms.rnea import rnea
from opalg.errors import ModelError, StateError
from opalg.model import _validate
from opalg.model.kinematics import check_state
from opalg.closed.system import ClosedSystem

#: Complex step: the imaginary part of f(x + ihd)/h is the derivative along d to rounding
#: (no subtraction), for any h far below √ε; 1e-20 keeps the O(h²) real-part change below 1e-40.
_H = 1e-20


class ClosedLinearization(NamedTuple):
    r"""Result of :func:`linearize`: ξ̇ ≈ f0 + A ξ + B δu in the chart ξ = T_plus @ (x − x̄) (H11).

    A : (2(N − r), 2(N − r)), of the form [[0, I], [∂b/∂a, ∂b/∂b]]
    B : (2(N − r), N_a)
    T : (2N, 2(N − r)), the tangent basis of the state manifold at x̄ (T_plus @ T = I)
    T_plus : (2(N − r), 2N), diag(Zᵀ, Zᵀ), the chart's left inverse of T
    f0 : (2(N − r),), T_plus @ [θ̇; θ̈] at the point (0 at an equilibrium)
    rank : int, r = the numerical rank of the closure rows (as :meth:`ClosedSystem.forward`)
    """

    A: np.ndarray
    B: np.ndarray
    T: np.ndarray
    T_plus: np.ndarray
    f0: np.ndarray
    rank: int


def linearize(system: ClosedSystem, q, qd, tau, passive=None, tol: float = 1e-8) -> ClosedLinearization:
    r"""Linearize ℳθ̈ + C = T − G_c*λ, G_cθ̈ = U about (θ, θ̇) on the constraint manifold (H11).

    .. math::
        T = \begin{bmatrix} Z & 0 \\ −G_c^+ D Z & Z\end{bmatrix},\quad D = ∂_θ(G_c\dot{\bar θ}),\qquad
        A = T^+ J T = \begin{bmatrix} 0 & I \\ Z^T ∂\ddot θ\, T_{:,a} & Z^T ∂\ddot θ\, T_{:,b}
        \end{bmatrix},\qquad B = \begin{bmatrix} 0 \\ Z^T ℳ_c^{-1} S_a^* \end{bmatrix},

    with Z an orthonormal basis of null G_c (SVD), T⁺ = diag(Zᵀ, Zᵀ) (T⁺T = I, since ZᵀG_c⁺ = 0),
    J the Jacobian of [θ̇; θ̈] and ℳ_c⁻¹ = ℳ⁻¹ − ℳ⁻¹G_c*Λ_cG_cℳ⁻¹ = ∂θ̈/∂T.  The derivative of θ̈
    along a direction δx = (δθ, δθ̇) differentiates the KKT equations at (θ̈̄, λ̄):

    .. math::
        r_1 = −∂(\mathrm{RNEA}(θ, \dot θ, \bar{\ddot θ}) + G_c^*\bar λ)\,δx,\quad
        r_2 = −∂(G_c\bar{\ddot θ} − U)\,δx,\qquad
        δ\ddot θ = y + ℳ_c^{-1}(r_1 − ℳ y),\quad y = G_c^+ r_2,

    ∂RNEA by :func:`opalg.rnea_derivatives` (E14), the closure terms by complex steps of
    :meth:`~ClosedSystem.jacobian` and :meth:`~ClosedSystem.drift` along the 2(N − r) tangent
    directions (batched: O(N) evaluations of O(n·m) each, not an O(n·N) tangent recursion of the
    closures), ℳy by :func:`opalg.rnea` without gravity, and ℳ_c⁻¹w as the imaginary part of
    :meth:`~ClosedSystem.forward` at T + iw (exact: θ̈ is affine in T), one batched call for the
    2(N − r) + N_a columns.  The chart ξ = T⁺(x − x̄) maps the manifold near x̄ one-to-one, so A
    and B are the exact linearization of the motion in ξ at any point of the manifold, and at an
    equilibrium (θ̇ = 0, θ̈ = 0) J T = T A: the tangent space is invariant.

    Parameters
    ----------
    system : ClosedSystem
    q, qd, tau : array_like, shape (N,)
        One operating point with max |e(q)| ≤ tol and max |G_c θ̇| ≤ tol·max(1, ‖G_c‖₂|θ̇|);
        ``tau`` holds every dof's force (with ``passive``, the passive entries are held, e.g. 0).
    passive : array_like of bool, shape (N,), optional
        B keeps the columns of the active dofs (``passive`` False) only.
    tol : float
        The manifold tolerance (lengths in the model's units, angles in radians).

    Returns
    -------
    ClosedLinearization
        ``(A, B, T, T_plus, f0, rank)``.

    Raises
    ------
    StateError
        Bad shapes, non-finite entries, a bad ``passive`` mask or ``tol``, or a point off the
        manifold (the message names q or qd and the size of the error).
    ModelError
        If ``system`` is not a ClosedSystem.

    Examples
    --------
    >>> import numpy as np
    >>> from opalg.closed import four_bar, linearize
    >>> sys, q = four_bar()                                   # 3 joints, 2 closure rows: 1 dof
    >>> lin = linearize(sys, q, np.zeros(3), np.zeros(3), passive=[False, True, True])
    >>> lin.A.shape, lin.B.shape, lin.T.shape, lin.rank
    ((2, 2), (2, 1), (6, 2), 2)
    >>> bool(np.allclose(lin.T_plus @ lin.T, np.eye(2)))
    True
    """
    if not isinstance(system, ClosedSystem):
        raise ModelError(f"closed.linearize: system must be an opalg.closed.ClosedSystem, got "
                         f"{_validate.describe(system)}")
    model, N = system.model, system.model.ndof
    q, qd, tau = (check_state(model, x, nm) for x, nm in ((q, "q"), (qd, "qd"), (tau, "tau")))
    for x, nm in ((q, "q"), (qd, "qd"), (tau, "tau")):
        if x.shape != (N,) or x.dtype.kind != "f":
            raise StateError(f"closed.linearize: {nm} must be one real state of shape ({N},), got "
                             f"shape {x.shape} and dtype {x.dtype}")
    tol = _validate.real(tol, "tol", "closed.linearize", positive=True)
    mask = np.zeros(N, bool) if passive is None else check_passive(model, passive)
    e = float(np.abs(system.constraint_error(q)).max())
    if not e <= tol:
        raise StateError(f"closed.linearize: q is off the constraint manifold: max |e(q)| = {e:.3e} > tol "
                         f"{tol:g} (assemble it first: system.assemble(q))")
    G = system.jacobian(q)
    w = float(np.abs(G @ qd).max())
    if not w <= tol * max(1.0, np.linalg.norm(G, 2) * np.linalg.norm(qd)):
        raise StateError(f"closed.linearize: qd violates the velocity constraint: max |G_c qd| = {w:.3e} > "
                         f"tol {tol:g} (relative to ‖G_c‖|qd|; project it first: system.project(q, qd))")
    res = system.forward(q, qd, tau)                    # warns when the closure rows are dependent
    qdd, lam, r = res.qdd, res.lam, int(res.rank)
    U_, s, Vt = np.linalg.svd(G)
    Z = Vt[r:].T                                        # (N, N − r), orthonormal, G_c Z ≈ 0
    Gp = Vt[:r].T @ ((U_[:, :r] / s[:r]).T)             # G_c⁺ of the rank-r part
    k = N - r
    if k == 0:                                          # no motion left: a 0-dimensional manifold
        return ClosedLinearization(np.zeros((0, 0)), np.zeros((0, int((~mask).sum()))), np.zeros((2 * N, 0)),
                                   np.zeros((0, 2 * N)), np.zeros(0), r)
    # complex steps of G_c along Z: D Z = ∂(G_c θ̇̄) Z, and the closure terms of r1, r2
    dG = system.jacobian(q + 1j * _H * Z.T).imag / _H   # (k, m, N)
    Tq = np.concatenate([Z, np.zeros((N, k))], 1)       # δθ of T's columns
    Tv = np.concatenate([-Gp @ np.einsum("kmn,n->mk", dG, qd), Z], 1)
    dU = (system.drift(q + 1j * _H * Tq.T, qd + 1j * _H * Tv.T).imag / _H).T     # (m, 2k)
    dGq = np.concatenate([dG, np.zeros((k,) + G.shape)], 0)                      # (2k, m, N)
    dtau_dq, dtau_dqd = rnea_derivatives(model, q, qd, qdd)
    r1 = -(dtau_dq @ Tq + dtau_dqd @ Tv + np.einsum("kmn,m->nk", dGq, lam))
    r2 = -(np.einsum("kmn,n->mk", dGq, qdd) - dU)
    y = Gp @ r2
    rhs = np.concatenate([r1 - rnea(model, q, np.zeros(N), y.T, gravity=False).T, np.eye(N)[:, ~mask]], 1)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")                 # already warned above
        cols = system.forward(q, qd, tau + 1j * rhs.T).qdd.imag.T     # ℳ_c⁻¹ rhs, (N, 2k + N_a)
    dqdd = y + cols[:, :2 * k]
    Tm = np.concatenate([Tq, Tv], 0)
    Tp = np.zeros((2 * k, 2 * N))
    Tp[:k, :N], Tp[k:, N:] = Z.T, Z.T
    top = np.concatenate([np.zeros((k, k)), np.eye(k)], 1)   # Zᵀδθ̇ of T's columns: ZᵀG_c⁺ = 0, ZᵀZ = I
    A = np.concatenate([top, Z.T @ dqdd], 0)
    B = np.concatenate([np.zeros((k, cols.shape[1] - 2 * k)), Z.T @ cols[:, 2 * k:]], 0)
    f0 = Tp @ np.concatenate([qd, qdd])
    return ClosedLinearization(A, B, Tm, Tp, f0, r)
