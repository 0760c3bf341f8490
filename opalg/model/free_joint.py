r"""The free joint: 7 configuration coordinates, 6 velocities, S = I₆ (docs/REFERENCE.md K8).

Not a sequence of axes like :class:`opalg.model.joints.Joint`'s other kinds: its configuration
``[p; x, y, z, w]`` has one coordinate more than its velocity ``[ω; v]`` (body frame), which
is why :func:`opalg.integrate` and :func:`opalg.difference` exist.
"""

from __future__ import annotations

import numpy as np

from opalg import _backend as bk
from opalg.errors import ModelError
from opalg.model.joints import Joint
from opalg.spatial.quaternion import rotation
from opalg.spatial.vectors import motion_transform


class FreeJoint(Joint):
    r"""A 6-dof free joint: configuration ``[p; x, y, z, w]`` (7), velocity ``[ω; v]`` (6).

    ``p`` is the body origin in the joint frame and (x, y, z, w) the unit quaternion
    of the body's orientation there (:mod:`opalg.spatial.quaternion`), so
    :math:`X_J = \mathrm{motion\_transform}(R^T, p)`.  The generalized velocity is the
    body's spatial velocity relative to the joint frame in **body coordinates, angular
    first**, so S = H*(k) = I₆ and c_J = 0 (S is constant in the body frame;
    docs/REFERENCE.md K8).  Advance q with :func:`opalg.integrate`, never q + v·dt.

    Examples
    --------
    >>> import numpy as np
    >>> from opalg.model.free_joint import FreeJoint
    >>> from opalg.model.joints import joint_transform
    >>> j = FreeJoint("base")
    >>> j.nq, j.ndof
    (7, 6)
    >>> X, S = joint_transform(j, np.array([1.0, 0, 0, 0, 0, 0, 1]))   # moved 1 along x
    >>> bool(np.array_equal(S, np.eye(6))), (X[4, :3] + 0.0).tolist()   # −E r~: v_y = (ω × r)_y = ω_z
    (True, [0.0, 0.0, 1.0])
    """

    free = True

    def __init__(self, name: str | None = None):
        if name is not None and not isinstance(name, str):
            raise ModelError(f"free joint: name must be a string, got {name!r}")
        self.kinds, self.pitches, self.name = ("F",), (None,), name
        self.axes = np.zeros((0, 3))
        eye = np.eye(6)
        eye.setflags(write=False)
        self._s_local = eye

    @property
    def ndof(self) -> int:
        """6: the body's spatial velocity [ω; v]."""
        return 6

    @property
    def nq(self) -> int:
        """7: the origin p (3) and the unit quaternion (x, y, z, w)."""
        return 7

    def velocity(self, S, qdk):
        """(v_J, c_J) = (v, 0): S = I₆ is constant in the body frame, so there is no c_J (K8)."""
        return qdk, 0

    def subspace_rate(self, S, qdk):
        """None: S = I₆ is constant (its six columns are not axes in sequence)."""
        return None

    def transform(self, qk) -> tuple[np.ndarray, np.ndarray]:
        """X_J (..., 6, 6) and S = I₆ for configurations ``qk`` (..., 7)."""
        R = rotation(qk[..., 3:])
        X = motion_transform(bk.mT(R), qk[..., :3])
        return X, bk.eye(6, qk) + bk.zeros(qk.shape[:-1] + (6, 6), qk)

    def __repr__(self) -> str:
        return f"FreeJoint(name={self.name!r})"
