r"""The dense saddle-point (KKT) solve that every constrained route is checked against.

.. math::
    \begin{bmatrix} ℳ & Z^* \\ B & 0 \end{bmatrix}
    \begin{bmatrix} x \\ λ \end{bmatrix} = \begin{bmatrix} r \\ h \end{bmatrix}

with Z = B for the symmetric KKT system of a closed chain (docs/REFERENCE.md H5) or of several
arms holding one object (H1), and Z = −(force directions) for Ider's augmented form (E8).
One LU solve per state (``numpy.linalg.solve``, batched over leading axes); the O(n) routes of
the package (hybrid passes, Λ_c⁻¹ from Ω, the constraint-force algorithm) are compared with it.
"""

from __future__ import annotations

import numpy as np

from opalg import _backend as bk
from opalg.errors import SingularConfigurationError, StateError


def kkt_matrix(M, B, Z=None) -> np.ndarray:
    """The matrix [[ℳ, Z*], [B, 0]] (..., n + c, n + c); Z = B when not given.

    Examples
    --------
    >>> import numpy as np
    >>> kkt_matrix(np.eye(2), np.array([[1.0, 1.0]]))
    array([[1., 0., 1.],
           [0., 1., 1.],
           [1., 1., 0.]])
    """
    # complex entries pass through (a complex step differentiates the solve); anything else is real
    dt = np.result_type(float, *(np.asarray(x).dtype for x in (M, B) + (() if Z is None else (Z,))))
    M, B = np.asarray(M, dtype=dt), np.asarray(B, dtype=dt)
    Z = B if Z is None else np.asarray(Z, dtype=dt)
    n, c = M.shape[-1], B.shape[-2]
    batch = np.broadcast_shapes(M.shape[:-2], B.shape[:-2], Z.shape[:-2])
    K = np.zeros(batch + (n + c, n + c), dtype=dt)
    K[..., :n, :n] = M
    K[..., :n, n:] = bk.mT(Z)
    K[..., n:, :n] = B
    return K


def kkt_solve(M, B, r, h, Z=None, *, singular: str = "raise", rcond: float | None = 1e-12):
    r"""Solve [[ℳ, Z*], [B, 0]] [x; λ] = [r; h] densely: ``(x, λ)``, shapes (..., n) and (..., c).

    Parameters
    ----------
    M : (..., n, n) array
    B : (..., c, n) array
        The constraint rows (a Jacobian); Z (..., c, n) the force directions (default B).
    r, h : (..., n) and (..., c) arrays
    singular : {"raise", "lstsq"}
        What a rank-deficient system gets: :class:`~opalg.errors.SingularConfigurationError`
        (when numpy's LU meets an exactly zero pivot, or B has dependent rows: σ_min(B) ≤
        rcond σ_max(B)), or the least-squares minimum-norm solution of every state
        (``numpy.linalg.lstsq``: λ is not unique when B has dependent rows, x is).
    rcond : float or None
        The relative singular-value threshold of the rank test of B; None: no rank test, only
        LU's exact zero pivot (the cheapest call, for an integrator's right-hand side whose
        events watch the conditioning themselves).

    Examples
    --------
    >>> import numpy as np
    >>> x, lam = kkt_solve(np.eye(2), np.array([[1.0, 1.0]]), np.zeros(2), np.array([2.0]))
    >>> x, lam        # x₁ + x₂ = 2 at least kinetic energy: the force splits evenly
    (array([1., 1.]), array([-1.]))
    >>> kkt_solve(np.eye(2), np.array([[1.0, 1.0], [2.0, 2.0]]), np.zeros(2), np.array([2.0, 4.0]),
    ...           singular="lstsq")[0]
    array([1., 1.])
    """
    if singular not in ("raise", "lstsq"):
        raise ValueError(f"singular must be 'raise' or 'lstsq', got {singular!r}")
    K = kkt_matrix(M, B, Z)
    B = np.asarray(B, dtype=K.dtype)
    n, c = K.shape[-1] - B.shape[-2], B.shape[-2]
    rhs = np.concatenate([np.broadcast_to(r, K.shape[:-2] + (n,)), np.broadcast_to(h, K.shape[:-2] + (c,))], -1)
    if rcond is None or not c:
        full = np.ones(B.shape[:-2], bool)
    else:
        sv = np.linalg.svd(B, compute_uv=False)
        full = (sv[..., -1] > rcond * sv[..., 0]) if c <= n else np.zeros(B.shape[:-2], bool)
    if np.all(full):
        try:
            x = np.linalg.solve(K, rhs[..., None])[..., 0]
            return x[..., :n], x[..., n:]
        except np.linalg.LinAlgError:
            if singular == "raise":
                raise SingularConfigurationError("the KKT matrix is exactly singular") from None
    elif singular == "raise":
        raise SingularConfigurationError(
            f"the KKT matrix is singular: the constraint rows B are dependent (σ_min/σ_max = {np.min(sv[..., -1] / sv[..., 0]):.2g} "
            f"≤ rcond = {rcond:g}): the multipliers are not unique")
    if np.iscomplexobj(K) or np.iscomplexobj(rhs):
        # lstsq minimizes |K x − rhs| with conjugates: not analytic, so a complex step through it
        # would return a wrong derivative rather than fail
        raise StateError("kkt_solve: the least-squares route (singular='lstsq' on dependent rows) does not take "
                         "complex entries: numpy's lstsq conjugates, so a complex step through it is wrong")
    Kf, rf = K.reshape((-1,) + K.shape[-2:]), rhs.reshape((-1, n + c))
    x = np.stack([np.linalg.lstsq(Kf[i], rf[i], rcond=None)[0] for i in range(len(Kf))]).reshape(rhs.shape)
    return x[..., :n], x[..., n:]
