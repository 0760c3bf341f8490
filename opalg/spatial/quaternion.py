r"""Unit quaternions and the SE(3) exponential: the configuration space of a free joint.

A free joint (:class:`opalg.model.free_joint.FreeJoint`, docs/REFERENCE.md K8) stores 7
coordinates ``[p; x, y, z, w]``: the body origin ``p`` in the joint frame and the
body's orientation as a unit quaternion in **(x, y, z, w)** order (Pinocchio's
order, so Pinocchio's free-flyer q needs no reordering).  Its 6 velocities are
the body's spatial velocity in body coordinates, angular first, ``[ω; v]``.

* :func:`rotation` — R(ε, w) = I + (2/|q|²)(w ε̃ + ε̃²), the rotation of the body
  frame in the joint frame.  The formula divides by |q|², so it is an exact
  rotation for any non-zero quaternion (an explicit normalization); the state
  check still refuses a quaternion whose norm is off by more than
  :data:`UNIT_TOL` (opalg.model.kinematics.check_state).
* :func:`exp_free` — the configuration reached from ``[p; quat]`` with the
  constant body twist ``ξ = [ω; v]`` for unit time:
  R₁ = R₀ Exp(ω), p₁ = p₀ + R₀ V(ω) v, V(ω) = I + B ω̃ + C ω̃²
  (B = (1 − cos θ)/θ², C = (θ − sin θ)/θ³, θ = |ω|);
* :func:`log_free` — its inverse (the shortest rotation, θ ≤ π).

Every coefficient is written as a function of θ² (power series for small θ²),
so :func:`exp_free` is analytic in ξ and takes complex arrays (complex-step tests).
This module imports only ``_backend`` and ``spatial``.
"""

from __future__ import annotations

import numpy as np

from opalg import _backend as bk
from opalg.spatial.vectors import skew

#: Largest accepted | |quat| − 1 | of a free joint's quaternion in a state q.
#: A quaternion kept unit by :func:`opalg.integrate` stays within ~1e-15; 1e-6
#: still admits one stored in single precision (|δ| ≲ 6e-8 a component).
UNIT_TOL = 1e-6

# Power series in x = θ² (to x⁴; used for |x| < 1e-2, error < x⁵/11! ≈ 3e-18).
_SERIES = {
    "A": (1.0, -1 / 6, 1 / 120, -1 / 5040, 1 / 362880),         # sin θ / θ
    "B": (1 / 2, -1 / 24, 1 / 720, -1 / 40320, 1 / 3628800),    # (1 − cos θ) / θ²
    "C": (1 / 6, -1 / 120, 1 / 5040, -1 / 362880, 1 / 39916800),  # (θ − sin θ) / θ³
}
_SMALL = 1e-2


def _coeff(name: str, x):
    """sin θ/θ, (1 − cos θ)/θ² or (θ − sin θ)/θ³ as a function of x = θ² (analytic)."""
    x = np.asarray(x)
    small = np.abs(x) < _SMALL
    xs = np.where(small, 1.0, x)          # the closed form never sees θ = 0
    th = np.sqrt(xs.astype(complex)) if np.iscomplexobj(xs) or np.any(xs < 0) else np.sqrt(xs)
    closed = {"A": lambda: np.sin(th) / th, "B": lambda: (1 - np.cos(th)) / xs,
              "C": lambda: (th - np.sin(th)) / (xs * th)}[name]()
    series = sum(c * x ** i for i, c in enumerate(_SERIES[name]))
    out = np.where(small, series, closed)
    return out if np.iscomplexobj(x) else out.real


def _left_jacobian(w, x) -> np.ndarray:
    """V(ω) = I + B ω̃ + C ω̃² (x = θ² = |ω|²): p₁ = p₀ + R₀ V(ω) v in :func:`exp_free`."""
    W = skew(w)
    return np.eye(3) + _coeff("B", x)[..., None, None] * W + _coeff("C", x)[..., None, None] * (W @ W)


def rotation(quat) -> np.ndarray:
    r"""Rotation matrix of a quaternion (x, y, z, w): :math:`I + \frac{2}{|q|^2}(w\tilde\epsilon + \tilde\epsilon^2)`.

    ``quat`` has shape (..., 4); float, complex or sympy.  R maps body coordinates
    to joint-frame coordinates (docs/REFERENCE.md K8).

    Examples
    --------
    >>> import numpy as np
    >>> from opalg.spatial.quaternion import rotation
    >>> s = np.sqrt(0.5)
    >>> np.round(rotation([0, 0, s, s]), 12) + 0.0      # 90° about z
    array([[ 0., -1.,  0.],
           [ 1.,  0.,  0.],
           [ 0.,  0.,  1.]])
    """
    quat = bk.asarray(quat)
    e, w = quat[..., :3], quat[..., 3]
    n2 = np.sum(quat * quat, -1)
    E = skew(e)
    return bk.eye(3, quat) + (2 / n2)[..., None, None] * (w[..., None, None] * E + E @ E)


def multiply(a, b) -> np.ndarray:
    """Hamilton product a ⊗ b of quaternions (x, y, z, w): rotation(a ⊗ b) = rotation(a) rotation(b).

    Examples
    --------
    >>> import numpy as np
    >>> from opalg.spatial.quaternion import multiply, rotation
    >>> a, b = np.array([0.1, 0.2, 0.3, 0.9]), np.array([-0.5, 0.1, 0.2, 0.8])
    >>> bool(np.allclose(rotation(multiply(a, b)), rotation(a) @ rotation(b)))
    True
    """
    a, b = np.asarray(a), np.asarray(b)
    ea, wa, eb, wb = a[..., :3], a[..., 3:], b[..., :3], b[..., 3:]
    return np.concatenate([wa * eb + wb * ea + np.cross(ea, eb), wa * wb - np.sum(ea * eb, -1, keepdims=True)], -1)


def exp_free(qf, xi) -> np.ndarray:
    r"""Free-joint configuration ``[p; quat]`` moved by the body twist ``ξ = [ω; v]`` for unit time.

    :math:`R_1 = R_0\,\mathrm{Exp}(\omega)`, :math:`p_1 = p_0 + R_0 V(\omega) v` (module
    docstring; docs/REFERENCE.md K8).  Shapes (..., 7) and (..., 6); analytic in ξ.

    Examples
    --------
    >>> import numpy as np
    >>> from opalg.spatial.quaternion import exp_free
    >>> q0 = np.array([0, 0, 0, 0, 0, 0, 1.0])           # at the origin, unrotated
    >>> np.round(exp_free(q0, [0, 0, np.pi, 1, 0, 0]), 12) + 0.0   # half a turn while moving along x
    array([0.        , 0.63661977, 0.        , 0.        , 0.        ,
           1.        , 0.        ])
    """
    qf, xi = np.asarray(qf), np.asarray(xi)
    w, v = xi[..., :3], xi[..., 3:]
    x = np.sum(w * w, -1)
    half = np.concatenate([(_coeff("A", x / 4) / 2)[..., None] * w,
                           (1 - x / 4 * _coeff("B", x / 4))[..., None]], -1)   # Exp(ω) as a quaternion
    R0 = rotation(qf[..., 3:])
    p1 = qf[..., :3] + np.einsum("...ij,...jk,...k->...i", R0, _left_jacobian(w, x), v)
    return np.concatenate([p1, multiply(qf[..., 3:], half)], -1)


def log_free(q0, q1) -> np.ndarray:
    r"""The body twist ξ = [ω; v] with ``exp_free(q0, ξ) == q1`` (the shortest rotation, θ ≤ π).

    Real arrays (..., 7); the inverse of :func:`exp_free` (docs/REFERENCE.md K8).

    Examples
    --------
    >>> import numpy as np
    >>> from opalg.spatial.quaternion import exp_free, log_free
    >>> q0 = np.array([1.0, 2, 3, 0.1, 0.2, 0.3, 0.9]); q0[3:] /= np.linalg.norm(q0[3:])
    >>> xi = np.array([0.3, -1.0, 0.5, 2.0, 0.0, -1.0])
    >>> bool(np.allclose(log_free(q0, exp_free(q0, xi)), xi))
    True
    """
    q0, q1 = np.asarray(q0, dtype=float), np.asarray(q1, dtype=float)
    a = q0[..., 3:] / np.linalg.norm(q0[..., 3:], axis=-1, keepdims=True)
    b = q1[..., 3:] / np.linalg.norm(q1[..., 3:], axis=-1, keepdims=True)
    d = multiply(a * np.array([-1, -1, -1, 1.0]), b)          # conj(a) ⊗ b: R₀ᵀR₁
    d = np.where(d[..., 3:] < 0, -d, d)                         # the same rotation, θ ≤ π
    s = np.linalg.norm(d[..., :3], axis=-1)
    ratio = np.where(s < 1e-8, 2 / d[..., 3], 2 * np.arctan2(s, d[..., 3]) / np.where(s < 1e-8, 1, s))
    w = ratio[..., None] * d[..., :3]
    dp = np.einsum("...ji,...j->...i", rotation(a), q1[..., :3] - q0[..., :3])
    V = _left_jacobian(w, np.sum(w * w, -1))
    return np.concatenate([w, np.linalg.solve(V, dp[..., None])[..., 0]], -1)
