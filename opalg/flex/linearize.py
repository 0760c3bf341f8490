r"""Linearization of a flexible model's state equation (docs/REFERENCE.md K14, after E15 and E20).

x = [coordinates; rates] of a :class:`~opalg.flex.FlexModel`: the joint coordinates θ and the modal
amplitudes η, body by body as in ``fm.eta_slice`` / ``fm.theta_slice``.  The dynamics rows come
from differentiating the identity flex.rnea(x, v, flex.aba(x, v, T)) = T (E15 on enlarged nodes),
with ∂T/∂x and ∂T/∂v by complex step of :func:`opalg.flex.rnea`.
"""

from __future__ import annotations

import numpy as np

from opalg.algorithms.riccati import check_passive
from opalg.errors import ModelError, SingularConfigurationError, StateError
from opalg.flex.dynamics import _public, aba, crba, rnea
from opalg.model import _validate
from opalg.model.kinematics import _check_result

__all__ = ["linearize"]

# The recursions without their public wrappers: an overflow inside is then reported by
# flex.linearize's own guard, naming it and its inputs.
_aba, _crba, _rnea = aba.__wrapped__, crba.__wrapped__, rnea.__wrapped__

#: Complex step: ∂f/∂x_j = Im f(x + i h e_j) / h − O(h²) with no subtraction, so any tiny h is
#: exact to rounding; 1e-30 keeps h²·|f‴| far below ε for any state and stiffness of interest.
H_CS = 1e-30


def _real_state(fm, a, name: str) -> np.ndarray:
    """A real numeric state of ``fm`` (ndof,): the complex step needs the imaginary part free."""
    a = fm.check_state(a, name)
    if a.dtype == object:
        raise StateError(f"flex.linearize: {name} holds sympy expressions; it differentiates numerically "
                         "(complex step), so give numbers")
    if np.iscomplexobj(a):
        if np.any(a.imag != 0):
            raise StateError(f"flex.linearize: {name} must be real (the imaginary part is the complex step's)")
        a = a.real
    return np.asarray(a, float)


@_public
def linearize(fm, x, v, tau, passive=None, gravity: bool = True) -> tuple[np.ndarray, np.ndarray]:
    r"""(A, B) of ẋ = f(x, u) for a flexible model at (x, v, T) (docs/REFERENCE.md K14, E15, E20).

    .. math::
        A = \begin{bmatrix} 0 & I \\ ∂\ddot x/∂x & ∂\ddot x/∂\dot x \end{bmatrix},\qquad
        B = \begin{bmatrix} 0 \\ ℳ^{-1} S_a^* \end{bmatrix},\qquad
        [∂\ddot x/∂x,\ ∂\ddot x/∂\dot x] = −ℳ^{-1}\,[∂T/∂x,\ ∂T/∂\dot x]\big|_{\ddot x = \mathrm{aba}},

    the state being [x; ẋ] (2N, N = ``fm.ndof``: joint coordinates θ and modal amplitudes η).  Differentiating
    flex.rnea(x, ẋ, flex.aba(x, ẋ, T)) = T gives the dynamics rows; T = flex.rnea includes the modal
    stiffness and damping 𝒦x + 𝒟ẋ, so ∂ẍ/∂x contains −ℳ⁻¹𝒦 and ∂ẍ/∂ẋ contains −ℳ⁻¹𝒟.  ℳ = flex.crba
    (K3), factored by Cholesky.  ∂T/∂x and ∂T/∂ẋ are taken by complex step of flex.rnea at
    ẍ = flex.aba(x, ẋ, T): exact to rounding, at the cost of 2N RNEA calls, O(n·N²) per state.  This
    is not the O(n·N) tangent recursion of E14: that one does not yet cover enlarged nodes.

    Parameters
    ----------
    fm : FlexModel
        Numeric body data (the complex step needs numbers).
    x, v, tau : array_like, shape (N,)
        One state (the flex recursions take one state per call; loop over states): coordinates,
        rates and the generalized forces of every coordinate (with ``passive``, the passive entries
        are the forces held there, e.g. 0 on the modes).  Real and finite.
    passive : array_like of bool, shape (N,), optional
        B keeps the columns of the coordinates with ``passive`` False.  Default None: every
        coordinate gets a column, the modal ones included (an applied modal force), as in
        :func:`opalg.linearize`.  The modes are naturally passive: pass True on ``fm.eta_slice``
        to keep the joint torques only.
    gravity : bool

    Returns
    -------
    A : ndarray, shape (2N, 2N)
    B : ndarray, shape (2N, N_a)
        N_a = N without ``passive``, else the number of False entries.

    Raises
    ------
    ModelError
        ``fm`` is not a FlexModel, or holds sympy data.
    StateError
        A state of the wrong shape, not finite, complex or symbolic; a bad ``passive`` mask;
        ``gravity`` not a bool.
    SingularConfigurationError
        ℳ is not positive definite at ``x``.

    Examples
    --------
    One flexible link on a locked joint vibrates at ±iω: hold θ̈ = 0 with the joint torque
    u = −(A_θ x)/B_θ and read the modal block of the closed loop.

    >>> import numpy as np
    >>> from opalg import flex
    >>> fm = flex.examples.two_link_arm(modes=1, nodes=100)
    >>> fm = flex.FlexModel([-1], fm.joints[:1], fm.placements[:1], fm.bodies[:1], gravity=(0, 0, 0))
    >>> passive = np.array([True, False])                       # [η, θ]: the torque only
    >>> A, B = flex.linearize(fm, np.zeros(2), np.zeros(2), np.zeros(2), passive=passive)
    >>> A.shape, B.shape
    ((4, 4), (4, 1))
    >>> Acl = A - B @ A[3:4] / B[3, 0]                          # θ̈ = 0
    >>> w = np.linalg.eigvals(Acl[np.ix_([0, 2], [0, 2])]).imag.max()
    >>> exact = flex.examples.cantilever_roots(1)[0] ** 2 * np.sqrt(20.0)   # (β₁L)²√(EI/ρAL⁴)
    >>> floor = (flex.examples.cantilever_roots(1)[0] / 100) ** 2 / 24 + 1e-6   # lumping, (β₁Δs)²/24
    >>> bool(abs(w / exact - 1) < floor)
    True
    """
    gravity = _validate.flag(gravity, "gravity", "flex.linearize")
    if fm.symbolic:
        raise ModelError("flex.linearize: fm holds sympy body data; it differentiates numerically "
                         "(complex step), so give numbers")
    x, v, tau = _real_state(fm, x, "x"), _real_state(fm, v, "v"), _real_state(fm, tau, "tau")
    mask = None if passive is None else check_passive(fm, passive)
    N = fm.ndof
    with np.errstate(over="ignore", invalid="ignore", divide="ignore"):
        xdd = _aba(fm, x, v, tau, gravity)
    _check_result("flex.linearize", xdd, {"x": x, "v": v, "tau": tau})   # ẍ overflowed: say so here
    try:
        L = np.linalg.cholesky(_crba(fm, x))
    except np.linalg.LinAlgError:
        raise SingularConfigurationError("flex.linearize: the mass matrix is not positive definite at x") from None
    E = 1j * H_CS * np.eye(N)
    dT = np.empty((N, 2 * N))
    for j in range(N):
        dT[:, j] = _rnea(fm, x + E[j], v, xdd, gravity).imag / H_CS                   # ∂T/∂x_j
        dT[:, N + j] = _rnea(fm, x, v + E[j], xdd, gravity).imag / H_CS               # ∂T/∂ẋ_j
    rhs = np.concatenate([-dT, np.eye(N)], axis=1)
    sol = np.linalg.solve(L.T, np.linalg.solve(L, rhs))                             # ℳ⁻¹[−∂T, I]
    A = np.zeros((2 * N, 2 * N))
    A[:N, N:] = np.eye(N)
    A[N:] = sol[:, :2 * N]
    Minv = sol[:, 2 * N:]
    cols = Minv if mask is None else Minv[:, ~mask]
    B = np.concatenate([np.zeros(cols.shape), cols], axis=0)
    return A, B
