r"""X_J and S of a one-axis revolute joint at one float64 state, without per-call overhead.

An ODE right-hand side (a flexible arm's, for one) asks :func:`opalg.joints.joint_transform`
for one revolute joint at one state many thousands of times; there the generic code spends
its time building small arrays (the skew of the axis, its square, the identity, S), not in
arithmetic.  Those depend on the joint only and are kept per joint here.  The arithmetic is
``rotation_about`` and ``motion_transform``'s own on the same operands,
E = (I + sin q s~ + (1 − cos q) s~ s~)ᵀ, X_J = [E 0; −E 0~ E], so the result is bit for bit the
generic one (tests/test_batch.py compares the two byte for byte).
"""

from __future__ import annotations

import weakref

import numpy as np

from .spatial import skew

# Per joint, keyed by the bytes of its axis, so an edited axis is never stale.
_CONSTANTS: "weakref.WeakKeyDictionary" = weakref.WeakKeyDictionary()


def _constants(joint) -> dict | None:
    """s~, s~ s~, I, skew(0) and S of a float one-axis revolute joint (None for other joints)."""
    if joint.kinds != ("R",) or joint.free or type(joint.axes) is not np.ndarray \
            or joint.axes.dtype != np.float64:
        return None
    key = joint.axes.tobytes()
    c = _CONSTANTS.get(joint)
    if c is None or c["key"] != key:
        s = skew(joint.axes[0])
        c = {"key": key, "s": s, "ss": s @ s, "eye": np.eye(3), "zero_skew": skew(np.zeros(3)),
             "S": np.stack([joint.motion_subspace_local()[0] + np.zeros(6)], -1)}
        _CONSTANTS[joint] = c
    return c


def transform(joint, q: np.ndarray) -> tuple[np.ndarray, np.ndarray] | None:
    """(X_J (6, 6), S (6, 1)) of ``joint`` at the float64 state ``q`` of shape (1,), or None
    when this is not a one-axis revolute joint with float axes (the caller's generic code).

    Examples
    --------
    >>> import numpy as np
    >>> from opalg.joints import Joint
    >>> from opalg._revolute_single import transform
    >>> X, S = transform(Joint("R", [0.0, 0.0, 1.0]), np.array([np.pi / 2]))
    >>> X[:3, :3].round(12) + 0.0          # E = R*: the body frame turned by 90° about z
    array([[ 0.,  1.,  0.],
           [-1.,  0.,  0.],
           [ 0.,  0.,  1.]])
    >>> transform(Joint("P", [1.0, 0.0, 0.0]), np.array([0.3])) is None
    True
    """
    c = _constants(joint)
    if c is None:
        return None
    q0 = q[..., 0]
    cs, sn = np.cos(q0), np.sin(q0)
    E = (c["eye"] + sn * c["s"] + (1 - cs) * c["ss"]).T
    X = np.zeros((6, 6))
    X[:3, :3] = E
    X[3:, 3:] = E
    X[3:, :3] = -(E @ c["zero_skew"])
    return X, c["S"].copy()
