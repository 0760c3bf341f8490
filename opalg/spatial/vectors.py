r"""Spatial vector algebra, angular-first.

Conventions (stated once for the whole package, see ``docs/REFERENCE.md`` §1):

* spatial motion vectors are ``V = [omega; v]``, spatial forces ``f = [n; F]``
  (moment first);
* ``*`` is the transpose (the real adjoint), never a conjugate nor an inverse;
* ``phi(x, y)`` maps a force at point ``y`` to the equivalent force at ``x``:
  ``f(x) = phi(x, y) f(y)``, and its adjoint maps velocities outward:
  ``V(y) = phi(x, y)^* V(x)``;
* in body coordinates ``phi(p, k) = (^k X_p)^*`` where ``^k X_p`` is
  Featherstone's motion transform from frame ``p`` to frame ``k``.

All functions accept leading batch axes and sympy (object) entries.
"""

from __future__ import annotations

import numpy as np

from opalg import _backend as bk
from opalg import opcount


def skew(x) -> np.ndarray:
    r"""Cross-product matrix :math:`\tilde x`, so that ``skew(x) @ y == cross(x, y)``.

    Parameters
    ----------
    x : array_like, shape (..., 3)

    Returns
    -------
    ndarray, shape (..., 3, 3)

    Examples
    --------
    >>> import numpy as np
    >>> from opalg.spatial.vectors import skew
    >>> bool(np.allclose(skew([1., 2., 3.]) @ [4., 5., 6.], np.cross([1, 2, 3], [4, 5, 6])))
    True
    """
    x = bk.asarray(x)
    if x.shape == (3,) and x.dtype is bk._F64:
        # One float vector (an axis, an offset): the same negations in Python floats, without
        # the per-slice numpy calls below (-0.0, nan and inf negate alike).
        x0, x1, x2 = x.tolist()
        return np.array([[0.0, -x2, x1], [x2, 0.0, -x0], [-x1, x0, 0.0]])
    if x.dtype is bk._F64 or x.dtype is bk._C128:   # what bk.zeros gives, without its dtype work
        out = np.zeros(x.shape[:-1] + (3, 3), x.dtype)
    else:
        out = bk.zeros(x.shape[:-1] + (3, 3), x)
    x0, x1, x2 = x[..., 0], x[..., 1], x[..., 2]
    out[..., 0, 1], out[..., 0, 2] = -x2, x1
    out[..., 1, 0], out[..., 1, 2] = x2, -x0
    out[..., 2, 0], out[..., 2, 1] = -x1, x0
    return out


def crm(V) -> np.ndarray:
    r"""Motion cross-product matrix ``crm(V) = [[w~, 0], [v~, w~]]`` (``V x`` on motions).

    Featherstone, *Rigid Body Dynamics Algorithms* (2008), eq. 2.31, angular-first.

    Examples
    --------
    >>> import numpy as np
    >>> from opalg.spatial.vectors import crm
    >>> V = np.arange(6.0)
    >>> bool(np.allclose(crm(V) @ V, 0))
    True
    """
    V = bk.asarray(V)
    w, v = skew(V[..., :3]), skew(V[..., 3:])
    out = bk.zeros(V.shape[:-1] + (6, 6), V)
    out[..., :3, :3] = out[..., 3:, 3:] = w
    out[..., 3:, :3] = v
    return out


# Index arrays (not lists: numpy would convert a list on every call) for a x b in one pass.
_I1, _I2 = np.array([1, 2, 0]), np.array([2, 0, 1])
# Index maps for w x (both 3-vector halves of a 6-vector) in one elementwise pass.
_W1, _W2 = np.array([1, 2, 0, 1, 2, 0]), np.array([2, 0, 1, 2, 0, 1])
_U1, _U2 = np.array([1, 2, 0, 4, 5, 3]), np.array([2, 0, 1, 5, 3, 4])


def _cross(a, b) -> np.ndarray:
    # Cyclic-index formula: np.cross spends most of its time normalizing axes.
    return a[..., _I1] * b[..., _I2] - a[..., _I2] * b[..., _I1]


def _cross_single(V: list, u: list, motion: bool) -> np.ndarray:
    """``V × u`` (motion) or ``V ×* u`` (force) of one pair of float 6-vectors, in Python floats.

    The single-state recursions (an ODE right-hand side) call the cross products a few times
    per body, where numpy's per-call overhead is ~10x the 18 products; the same products and
    sums as the array code below.
    """
    w0, w1, w2, v0, v1, v2 = V
    a0, a1, a2, b0, b1, b2 = u
    top = [w1 * a2 - w2 * a1, w2 * a0 - w0 * a2, w0 * a1 - w1 * a0]
    low = [w1 * b2 - w2 * b1, w2 * b0 - w0 * b2, w0 * b1 - w1 * b0]
    if motion:   # ω × u_v + v × u_ω on the lower half
        low = [low[0] + (v1 * a2 - v2 * a1), low[1] + (v2 * a0 - v0 * a2), low[2] + (v0 * a1 - v1 * a0)]
    else:        # ω × n + v × f on the upper half
        top = [top[0] + (v1 * b2 - v2 * b1), top[1] + (v2 * b0 - v0 * b2), top[2] + (v0 * b1 - v1 * b0)]
    return np.array(top + low)


def cross_motion(V, u) -> np.ndarray:
    r"""``V × u = crm(V) u`` for motion vectors, without forming the matrix.

    Examples
    --------
    >>> import numpy as np
    >>> from opalg.spatial.vectors import crm, cross_motion
    >>> V, u = np.arange(6.0), np.ones(6)
    >>> bool(np.allclose(cross_motion(V, u), crm(V) @ u))
    True
    """
    V, u = bk.asarray(V), bk.asarray(u)
    if opcount._ACTIVE:  # ω × u_ω, ω × u_v, v × u_ω: 6 each
        opcount.tally(18, "cross")
    if V.shape == u.shape == (6,) and V.dtype == u.dtype == np.float64:
        return _cross_single(V.tolist(), u.tolist(), motion=True)
    # w x [u_w; u_v] in one pass over 6 components, then v x u_w on the lower half.
    out = V[..., _W1] * u[..., _U2] - V[..., _W2] * u[..., _U1]
    out[..., 3:] += _cross(V[..., 3:], u[..., :3])
    return out


def cross_force(V, f) -> np.ndarray:
    r"""``V ×* f = crf(V) f`` for a force vector f, without forming the matrix.

    Examples
    --------
    >>> import numpy as np
    >>> from opalg.spatial.vectors import crf, cross_force
    >>> V, f = np.arange(6.0), np.ones(6)
    >>> bool(np.allclose(cross_force(V, f), crf(V) @ f))
    True
    """
    V, f = bk.asarray(V), bk.asarray(f)
    if opcount._ACTIVE:  # ω × n, ω × f, v × f: 6 each
        opcount.tally(18, "cross")
    if V.shape == f.shape == (6,) and V.dtype == f.dtype == np.float64:
        return _cross_single(V.tolist(), f.tolist(), motion=False)
    out = V[..., _W1] * f[..., _U2] - V[..., _W2] * f[..., _U1]
    out[..., :3] += _cross(V[..., 3:], f[..., 3:])
    return out


def crf(V) -> np.ndarray:
    r"""Force cross-product matrix ``crf(V) = -crm(V)^*`` (``V x*`` on forces).

    Examples
    --------
    >>> import numpy as np
    >>> from opalg.spatial.vectors import crf, crm
    >>> V = np.arange(6.0)
    >>> bool(np.allclose(crf(V), -crm(V).T))
    True
    """
    return -bk.mT(crm(V))


def phi_free(l) -> np.ndarray:
    r"""Frame-free rigid body transformation ``phi(x, y) = [[I, l~], [0, I]]``.

    ``l`` is the vector from ``x`` to ``y`` (docs/REFERENCE.md A1; Jain 2011, eq. 1.13).
    Then ``phi(x, y) @ phi(y, z) == phi(x, z)`` and ``inv(phi(x, y)) == phi(y, x)``.

    Examples
    --------
    >>> import numpy as np
    >>> from opalg.spatial.vectors import phi_free
    >>> a, b = np.array([1., 0, 0]), np.array([0., 2, 0])
    >>> bool(np.allclose(phi_free(a) @ phi_free(b), phi_free(a + b)))
    True
    """
    l = bk.asarray(l)
    z = bk.zeros(l.shape[:-1] + (3, 3), l)
    eye = bk.eye(3, l) + z
    return np.concatenate(
        [np.concatenate([eye, skew(l)], -1), np.concatenate([z, eye], -1)], -2
    )


def motion_transform(E, r) -> np.ndarray:
    r"""Featherstone motion transform ``^B X_A = [[E, 0], [-E r~, E]]``.

    ``E`` rotates A-coordinates into B-coordinates (``E = ^B R_A``) and ``r`` is
    the origin of B expressed in A coordinates (RBDA eq. 2.24).  In opalg's
    notation ``phi(A, B) = motion_transform(E, r)^*``.

    Examples
    --------
    >>> import numpy as np
    >>> from opalg.spatial.vectors import motion_transform
    >>> X = motion_transform(np.eye(3), np.array([1., 0, 0]))
    >>> X @ np.array([0, 0, 1., 0, 0, 0])   # w = z at A: the point B = A + x moves along +y
    array([0., 0., 1., 0., 1., 0.])
    """
    E, r = bk.asarray(E), bk.asarray(r)
    if E.shape == (3, 3) and r.shape == (3,) and E.dtype is bk._F64 and r.dtype is bk._F64:
        # One float transform (a joint at one state): the assembly below without its dtype
        # and broadcast work.  E @ r~ stays a product: its signed zeros (and nan) depend on E.
        out = np.zeros((6, 6))
        out[:3, :3] = E
        out[3:, 3:] = E
        out[3:, :3] = -(E @ skew(r))
        return out
    batch = E.shape[:-2]
    if r.shape[:-1] != batch:   # (equal batches, the usual case, need no broadcast_shapes)
        batch = np.broadcast_shapes(batch, r.shape[:-1])
    out = bk.zeros(batch + (6, 6), E, r)
    out[..., :3, :3] = E
    out[..., 3:, 3:] = E
    out[..., 3:, :3] = -bk.matmul(E, skew(r))
    return out


def rotation_about(axis, angle) -> np.ndarray:
    r"""Rotation matrix ``R = I + sin(a) s~ + (1 - cos(a)) s~ s~`` (Rodrigues).

    ``R`` maps vectors of the rotated frame into the original frame: a frame
    turned by ``angle`` about unit ``axis`` has ``^p R_c = R`` and ``^c R_p = R^*``.

    Parameters
    ----------
    axis : array_like, shape (3,)
        Unit vector.
    angle : array_like, shape (...)

    Examples
    --------
    >>> import numpy as np
    >>> from opalg.spatial.vectors import rotation_about
    >>> np.round(rotation_about([0, 0, 1.], np.pi / 2) @ [1., 0, 0], 12) + 0.0
    array([0., 1., 0.])
    """
    angle = bk.asarray(angle)
    s = skew(axis)
    c, sn = bk.cos(angle), bk.sin(angle)
    c, sn = c[..., None, None], sn[..., None, None]
    return bk.eye(3, s) + sn * s + (1 - c) * (s @ s)


def rpy_to_matrix(rpy) -> np.ndarray:
    r"""URDF roll-pitch-yaw to rotation, ``R = Rz(yaw) Ry(pitch) Rx(roll)``.

    Examples
    --------
    >>> import numpy as np
    >>> from opalg.spatial.vectors import rpy_to_matrix
    >>> bool(np.allclose(rpy_to_matrix([0, 0, 0]), np.eye(3)))
    True
    """
    r, p, y = (bk.asarray(rpy)[..., i] for i in range(3))
    return (
        rotation_about([0, 0, 1.0], y) @ rotation_about([0, 1.0, 0], p) @ rotation_about([1.0, 0, 0], r)
    )


def spatial_inertia(mass, com, I_com) -> np.ndarray:
    r"""Spatial inertia about the frame origin O from (m, p, J_cm), angular-first.

    .. math:: M = \begin{bmatrix} J_{cm} - m\tilde p\tilde p & m\tilde p \\
              -m\tilde p & m I\end{bmatrix}

    with ``p`` the vector O -> mass centre (docs/REFERENCE.md notation table and
    pitfall 7; RBDA eq. 2.63).

    Examples
    --------
    >>> import numpy as np
    >>> from opalg.spatial.vectors import spatial_inertia
    >>> M = spatial_inertia(2.0, [1., 0, 0], np.eye(3))
    >>> float(M[2, 2])   # J_zz about O = 1 + 2 * 1**2
    3.0
    """
    mass, com, I_com = bk.asarray(mass), bk.asarray(com), bk.asarray(I_com)
    px = skew(com)
    m = mass[..., None, None]
    J = I_com - m * (px @ px)
    eye = bk.eye(3, px) + bk.zeros(J.shape, J)
    return np.concatenate(
        [np.concatenate([J, m * px], -1), np.concatenate([-m * px, m * eye], -1)], -2
    )
