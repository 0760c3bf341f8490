r"""The recursive Newton–Euler algorithm read off ℳ = HφMφ*H* (docs/REFERENCE.md §5).

Every function accepts joint-space arrays with leading batch axes, shape
(..., N), and runs each recursion once over the whole batch.
"""

from __future__ import annotations

import numpy as np

from opalg import _backend as bk
from opalg.model.kinematics import body_kinematics, chunked
from opalg.model.multibody import Model


@chunked(3, forces=("f_ext",))
def rnea(model: Model, q, qd, qdd, f_ext=None, gravity: bool = True) -> np.ndarray:
    r"""Inverse dynamics ``T = ℳ(q) q̈ + C(q, q̇) − Σ_k J_k* f_ext(k)`` by the recursive Newton–Euler algorithm.

    Implements the operator expression (docs/REFERENCE.md §5, [C2]; RJK92)

    .. math:: T = H φ \left(M φ^* (H^* \ddot q + a) + b\right),

    i.e. ``α = φ*(H*q̈ + a)`` outward (``α(k) = φ*(℘k,k) α(℘k) + H*(k) q̈(k) + a(k)``)
    and ``f = φ(Mα + b)`` inward (``f(k) = Σ_c φ(k,c) f(c) + M(k)α(k) + b(k)``),
    ``T = H f``.  Gravity enters as the base acceleration ``-g`` of the roots; an
    external force as ``b(k) − f_ext(k)`` (docs/REFERENCE.md C9).

    Parameters
    ----------
    model : Model
    q, qd, qdd : array_like, shape (..., N)
    f_ext : array_like, shape (..., n, 6), optional
        ``f_ext[..., k, :]`` is the spatial force the environment applies to body
        k, about the origin of body k's frame, in body-k coordinates, angular
        first; then ℳq̈ + C = T + Σ_k J_k* f_ext(k) with
        ``J_k = frame_jacobian(model, q, (k, [0, 0, 0]))``.
    gravity : bool
        Include the model's gravity (default True).

    Returns
    -------
    ndarray, shape (..., N)

    Examples
    --------
    >>> import numpy as np, opalg
    >>> m = opalg.random_model(4, "tree", seed=0)
    >>> q, qd, qdd = np.zeros((3, m.ndof))
    >>> bool(np.allclose(opalg.rnea(m, q, qd, qdd), opalg.bias(m, q, qd)))
    True
    >>> f = np.zeros((m.n, 6)); f[3] = [0, 0, 0, 0, 0, 1.0]    # push body 3 along its z
    >>> J = opalg.frame_jacobian(m, q, (3, [0, 0, 0]))
    >>> bool(np.allclose(opalg.rnea(m, q, qd, qdd, f_ext=f), opalg.rnea(m, q, qd, qdd) - J.T @ f[3]))
    True
    """
    kin = body_kinematics(model, q, qd, gravity, validate=False)
    alpha, f = [None] * model.n, [None] * model.n
    for k in model.order:
        p = model.parents[k]
        acc = bk.mv(kin.S[k], qdd[..., model.dof_slice[k]]) + kin.a[k]
        alpha[k] = acc if p == -1 else bk.mv(kin.Xup[k], alpha[p]) + acc
        f[k] = bk.mv(model.I_spatial[k], alpha[k]) + kin.b[k]
        if f_ext is not None:
            f[k] = f[k] - f_ext[..., k, :]
    for k in reversed(model.order):
        p = model.parents[k]
        if p != -1:
            f[p] = f[p] + bk.mv(bk.mT(kin.Xup[k]), f[k])
    return np.concatenate([bk.mv(bk.mT(kin.S[k]), f[k]) for k in range(model.n)], -1)


@chunked(2, forces=("f_ext",))
def bias(model: Model, q, qd, f_ext=None, gravity: bool = True) -> np.ndarray:
    r"""Bias forces ``C(q, q̇) = Hφ(Mφ*a + b)`` (Coriolis, centrifugal and gravity).

    Equal to :func:`rnea` with ``q̈ = 0`` (docs/REFERENCE.md §5); with ``f_ext``
    (see :func:`rnea`) it is ``C − Σ_k J_k* f_ext(k)``.

    Examples
    --------
    >>> import numpy as np, opalg
    >>> arm = opalg.planar_arm([1.0], [2.0], [0.1])       # one link, gravity -y
    >>> float(opalg.bias(arm, [0.0], [0.0])[0])            # m g L/2
    9.81
    """
    return rnea.__wrapped__(model, q, qd, bk.zeros(qd.shape, qd, q), f_ext, gravity)
