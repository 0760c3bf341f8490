r"""Fast paths of :mod:`opalg.flex.kinematics`: the node joint PPPRRR.

Every node of every flexible body goes through :func:`opalg.joints.joint_transform` and
:func:`opalg.joints.joint_velocity` of the node joint at every state.  With few nodes the
generic code spends its time in per-call numpy overhead (a dozen small arrays per axis), not in arithmetic.  The functions
here build the same arrays with fewer numpy calls:

* the three prismatic and the three revolute axis transforms of the node joint are each
  built in one batch (axis first, so that the transform of axis i is a contiguous
  (p, 6, 6) block, like the generic one), from constants that depend only on the number
  of nodes p (cached);
* the 15 cross products of the node joint's c_J are formed in one stacked call.

Bit-identical to the generic code, not just close: every rounded operation is the same
one on the same operands (elementwise products and sums are correctly rounded whatever the
array layout; each matrix product is the same BLAS call on the same contiguous or
transposed 3 × 3 or 6 × 6 blocks, in the same order), and the exact ones (products with
the 0 and 1 entries of the constants) are kept where they could change the sign of a zero.
Only float64 states take this path (complex steps and sympy use the generic code), and
only while :mod:`opalg.opcount` is not counting (so the counts stay those of the generic
code).
"""

from __future__ import annotations

import numpy as np

from .. import _backend as bk
from .. import opcount
from ..joints import Joint, joint_transform, joint_velocity
from ..spatial import cross_motion, skew

NODE_JOINT = Joint(["P", "P", "P", "R", "R", "R"], np.vstack([np.eye(3), np.eye(3)]), name="node")

_AXES = np.eye(3)
_SKEW = np.stack([skew(a) for a in _AXES])                       # s~ of x, y, z (3, 3, 3)
_SKEW2 = np.stack([s @ s for s in _SKEW])                        # s~ s~, as rotation_about forms it
_EYE3 = np.eye(3)
# skew(x) writes six entries of a zero 3 × 3 in this order: (0,1)=-x2, (0,2)=x1, (1,0)=x2,
# (1,2)=-x0, (2,0)=-x1, (2,1)=x0 (flat positions and sources below).
_SKEW_AT = np.array([1, 2, 3, 5, 6, 7])
_SKEW_FROM = np.array([2, 1, 2, 0, 1, 0])
_SKEW_SIGN = np.array([-1.0, 1.0, 1.0, -1.0, -1.0, 1.0])
# The 15 pairs (i < j) of c_J = Σ_{i<j} crm(S_i q̇_i) S_j q̇_j, in joint_velocity's order.
_PAIR_I, _PAIR_J = (np.array(ix) for ix in zip(*[(i, j) for i in range(6) for j in range(i + 1, 6)]))
_CONST: dict = {}


def _constants(p: int) -> dict:
    """Arrays that depend only on the number of nodes p (built once per p, never written)."""
    c = _CONST.get(p)
    if c is None:
        eye_p = np.eye(3) + np.zeros((3, p, 3, 3))                   # Prismatic: eye(3) + zeros
        x_p = np.zeros((3, p, 6, 6))
        x_p[..., :3, :3] = eye_p
        x_p[..., 3:, 3:] = eye_p
        s_local = NODE_JOINT.motion_subspace_local()
        c = {"eye": eye_p, "x_prismatic": x_p,
             "zero_skew": skew(np.zeros((3, p, 3))),                 # Revolute: motion_transform(E, 0)
             "s": [s_local[i] + np.zeros((p, 6)) for i in range(6)]}
        for a in c.values():
            for arr in (a if isinstance(a, list) else [a]):
                arr.setflags(write=False)
        _CONST[p] = c
    return c


def _fast(*arrays) -> bool:
    return not opcount._ACTIVE and all(type(a) is np.ndarray and a.dtype == np.float64 for a in arrays)


def node_joint_transform(q: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """``joint_transform(NODE_JOINT, q)`` for node coordinates q (p, 6): X_J (p, 6, 6), S (p, 6, 6).

    Examples
    --------
    >>> import numpy as np
    >>> from opalg.joints import joint_transform
    >>> from opalg.flex._fastpath import NODE_JOINT, node_joint_transform
    >>> q = np.random.default_rng(0).normal(size=(4, 6))
    >>> all(a.tobytes() == b.tobytes() for a, b in zip(node_joint_transform(q), joint_transform(NODE_JOINT, q)))
    True
    """
    if not (_fast(q) and q.ndim == 2 and q.shape[-1] == 6):
        return joint_transform(NODE_JOINT, q)
    p = q.shape[0]
    c = _constants(p)
    # Prismatic x, y, z: E = I, r = q s, lower block -(E r~) (motion_transform).
    r = q.T[:3, :, None] * _AXES[:, None, :]                          # (3, p, 3): q_i s_i
    rs = np.zeros((3, p, 9))
    rs[..., _SKEW_AT] = r[..., _SKEW_FROM] * _SKEW_SIGN
    Xp = c["x_prismatic"].copy()
    Xp[..., 3:, :3] = -(c["eye"] @ rs.reshape(3, p, 3, 3))
    # Revolute x, y, z: E = R_s(q)* with R = I + sin q s~ + (1 - cos q) s~ s~, r = 0.
    cs = np.stack([np.cos(q[:, i]) for i in range(3, 6)])[..., None, None]
    sn = np.stack([np.sin(q[:, i]) for i in range(3, 6)])[..., None, None]
    E = np.swapaxes(_EYE3 + sn * _SKEW[:, None] + (1 - cs) * _SKEW2[:, None], -1, -2)
    Xr = np.zeros((3, p, 6, 6))
    Xr[..., :3, :3] = E
    Xr[..., 3:, 3:] = E
    Xr[..., 3:, :3] = -(E @ c["zero_skew"])
    Xs = [Xp[0], Xp[1], Xp[2], Xr[0], Xr[1], Xr[2]]
    # The generic accumulation from the last axis: T = X_6 ... X_{i+1} when column i is formed.
    T, cols = None, [None] * 6
    for i in reversed(range(6)):
        si = c["s"][i]
        cols[i] = si if T is None else bk.mv(T, si)
        T = Xs[i] if T is None else T @ Xs[i]
    return T, np.stack(cols, -1)


def node_joint_velocity(S: np.ndarray, qd: np.ndarray):
    """``joint_velocity(S, qd)`` of the node joint: v_J and c_J (p, 6), the 15 products stacked.

    Examples
    --------
    >>> import numpy as np
    >>> from opalg.joints import joint_transform, joint_velocity
    >>> from opalg.flex._fastpath import NODE_JOINT, node_joint_velocity
    >>> q, qd = np.random.default_rng(0).normal(size=(2, 4, 6))
    >>> S = joint_transform(NODE_JOINT, q)[1]
    >>> all(a.tobytes() == b.tobytes() for a, b in zip(node_joint_velocity(S, qd), joint_velocity(S, qd)))
    True
    """
    if not (_fast(S, qd) and S.ndim == 3 and S.shape[1:] == (6, 6) and qd.shape == S.shape[:1] + (6,)):
        return joint_velocity(S, qd)
    cols = np.moveaxis(S * qd[:, None, :], -1, 0)                      # cols[i] = S_i q̇_i
    vJ = cols[0]
    for i in range(1, 6):
        vJ = vJ + cols[i]
    prods = cross_motion(cols[_PAIR_I], cols[_PAIR_J])               # (15, p, 6)
    cJ = 0 + prods[0]
    for k in range(1, 15):
        cJ = cJ + prods[k]
    return vJ, cJ
