r"""Loop closures: which relative motions of two body-fixed frames a cut loop joint forbids.

A closure joins frame e1 on body k1 to frame e2 on body k2 (k2 = −1: a frame fixed in the
inertial frame, the ground).  With X12 = ^{e1}X_{e2}(q) the relative spatial velocity in e1
coordinates is V_rel = V_e1 − X12 V_e2, and the closure asks Π_c V_rel = 0 for a constant
selection Π_c (r×6, angular-first rows, docs/REFERENCE.md H2):

=============  ====  ====================================================================
kind           rows  Π_c
=============  ====  ====================================================================
``"weld"``     6     I₆
``"ball"``     3     the linear rows [0 I₃]
``"revolute"`` 5     two angular rows ⟂ ``axis`` (in e1) and the three linear rows
``rows=[..]``  r     the listed rows of I₆ (planar models: ``rows=[2, 3, 4]`` = ω_z, v_x, v_y)
=============  ====  ====================================================================
"""

from __future__ import annotations

from typing import Sequence

import numpy as np

from opalg import _backend as bk
from opalg.errors import StateError
from opalg.model.multibody import Model
from opalg.algorithms.operational import _frame_pose
from opalg.spatial.vectors import motion_transform
from opalg.closed._blocks import selection

KINDS = ("weld", "ball", "revolute")
#: |axis| must be 1 to this tolerance (a unit vector read from a file keeps ~1e-9 digits).
AXIS_TOL = 1e-9


def _rotation_and_origin(frame, where: str):
    """(body, R, p) from ``(body, p)`` or ``(body, R, p)`` with a clear error (real R and p)."""
    body, R, p = _frame_pose(frame, where)
    if R.dtype != float or p.dtype != float:
        raise StateError(f"{where}: R and p must be real numbers (got dtypes {R.dtype}, {p.dtype})")
    return body, R, p


def _axis_rows(axis) -> np.ndarray:
    """Two unit rows ⟂ axis, completing it to a right-handed orthonormal basis (b1, b2, axis)."""
    a = np.asarray(axis, dtype=float)
    t = np.eye(3)[int(np.argmin(np.abs(a)))]     # the coordinate axis least aligned with a
    b1 = np.cross(a, t)
    b1 /= np.linalg.norm(b1)
    return np.stack([b1, np.cross(a, b1)])


class LoopClosure:
    r"""A loop-closure constraint Π_c V_rel = 0 between two body-fixed frames (H2).

    .. math:: V_{rel} = V_{e1} − {}^{e1}X_{e2}(q)\, V_{e2},\qquad Π_c V_{rel} = 0,

    with V_e the frame's spatial velocity in its own coordinates (angular first).

    Parameters
    ----------
    frame1, frame2 : tuple
        ``(body, p)`` or ``(body, R, p)``: origin p and orientation R of the frame in the body's
        coordinates, as for :func:`opalg.frame_jacobian`.  ``frame2``'s body may be ``-1``: the
        frame is then fixed in the inertial frame (R, p in world coordinates), e.g. the ground
        pivot of a four-bar.
    kind : {"weld", "ball", "revolute"}
        Ignored when ``rows`` is given.
    axis : array_like (3,), optional
        Unit axis of a ``"revolute"`` closure in e1 coordinates (required for that kind only).
    rows : sequence of int, optional
        An explicit selection of rows of the angular-first 6-vector V_rel (distinct, in 0..5).
    name : str, optional
        Used in messages (default ``"closure"``; :class:`ClosedSystem` numbers unnamed closures).

    Attributes
    ----------
    Pi : ndarray (r, 6)
        The constant selection Π_c in e1 coordinates.
    kind : str
        ``"weld"``, ``"ball"``, ``"revolute"`` or ``"rows"``.

    Examples
    --------
    >>> import numpy as np
    >>> from opalg.closed import LoopClosure
    >>> c = LoopClosure((2, [1.0, 0, 0]), (-1, [2.0, 0, 0]), "revolute", axis=[0, 0, 1.0])
    >>> c.Pi.shape, c.ground
    ((5, 6), True)
    >>> LoopClosure((2, [1.0, 0, 0]), (-1, [2.0, 0, 0]), rows=[2, 3, 4]).Pi[0]
    array([0., 0., 1., 0., 0., 0.])
    """

    def __init__(self, frame1, frame2, kind: str = "weld", axis=None, rows: Sequence[int] | None = None,
                 name: str | None = None):
        self.name = name
        who = f"closure {name!r}" if name else "LoopClosure"
        self.body1, self.R1, self.p1 = _rotation_and_origin(frame1, f"{who}: frame1")
        self.body2, self.R2, self.p2 = _rotation_and_origin(frame2, f"{who}: frame2")
        if self.body1 < 0:
            raise StateError(f"{who}: frame1 is on body {self.body1}; frame1 must be on a body of the "
                             "model (only frame2 may be the ground, body -1)")
        if self.body2 < -1:
            raise StateError(f"{who}: frame2 is on body {self.body2}; use -1 for the ground")
        self.axis = None
        if rows is not None:
            self.kind = "rows"
            self.Pi = selection(rows, who, StateError)
            self.rows = tuple(int(i) for i in np.argmax(self.Pi, 1))
        elif kind == "weld":
            self.kind, self.Pi = kind, np.eye(6)
        elif kind == "ball":
            self.kind, self.Pi = kind, np.eye(6)[3:]
        elif kind == "revolute":
            self.kind = kind
            if axis is None:
                raise StateError(f"{who}: a revolute closure needs axis= (a unit 3-vector in frame-1 coordinates)")
            try:
                a = np.asarray(axis, dtype=float)
            except (TypeError, ValueError):
                raise StateError(f"{who}: axis must be a numeric 3-vector, got {axis!r}") from None
            if a.shape != (3,) or not np.all(np.isfinite(a)):
                raise StateError(f"{who}: axis must be a finite 3-vector, got {axis!r}")
            if abs(np.linalg.norm(a) - 1.0) > AXIS_TOL:
                raise StateError(f"{who}: axis {a.tolist()} is not a unit vector (norm {np.linalg.norm(a):.6g})")
            self.axis = a
            self.Pi = np.zeros((5, 6))
            self.Pi[:2, :3] = _axis_rows(a)
            self.Pi[2:, 3:] = np.eye(3)
        else:
            raise StateError(f"{who}: unknown kind {kind!r}; expected one of {KINDS} or rows=[...]")
        if axis is not None and self.kind != "revolute":
            raise StateError(f"{who}: axis= is only used by a revolute closure (kind is {self.kind!r})")
        # ^{e}X_{body} (or ^{e2}X_0 for a ground frame): constant motion transforms.
        self.X1 = motion_transform(self.R1.T, self.p1)
        self.X2 = motion_transform(self.R2.T, self.p2)

    @property
    def ground(self) -> bool:
        """True if frame 2 is fixed in the inertial frame."""
        return self.body2 == -1

    @property
    def m(self) -> int:
        """Number of rows r of Π_c."""
        return self.Pi.shape[0]

    def check(self, model: Model, label: str) -> None:
        """Raise StateError if a frame sits on a body the model does not have."""
        for which, b in (("frame1", self.body1), ("frame2", self.body2)):
            if b >= model.n:
                raise StateError(f"{label}: {which} is on body {b}, but the model has bodies "
                                 f"0..{model.n - 1} (and -1, the ground, for frame2)")

    def error(self, Ea, ra, Eb, rb) -> np.ndarray:
        r"""Position error of the closure from the frames' poses (rows of Π_c).

        ``Ea``, ``Eb`` = ^{e1}R_0, ^{e2}R_0 and ``ra``, ``rb`` = the origins of e1, e2 in world coordinates.  The full
        6-vector is e = [log(R₂ᵀR₁)^∨ ; R₁ᵀ(p₁ − p₂)] (the pose of e1 relative to e2), whose
        derivative on the closed manifold is V_rel; a revolute closure replaces the angular
        part with b_j·((R₁ᵀR₂ a) × a), j = 1, 2, zero for any rotation about a.
        """
        lin = bk.mv(Ea, ra - rb)
        if self.kind == "revolute":
            R12a = bk.mv(Ea @ bk.mT(Eb), np.broadcast_to(self.axis, lin.shape))
            ang = np.cross(R12a, self.axis) @ self.Pi[:2, :3].T
            return np.concatenate([ang, lin], -1)
        full = np.concatenate([rotation_log(Eb @ bk.mT(Ea)), lin], -1)
        return full @ self.Pi.T

    def __repr__(self) -> str:
        extra = f", axis={self.axis.tolist()}" if self.axis is not None else ""
        extra += f", rows={list(self.rows)}" if self.kind == "rows" else ""
        nm = f" {self.name!r}" if self.name else ""
        return f"<LoopClosure{nm} {self.kind}: body {self.body1} -> body {self.body2}{extra}>"


def rotation_log(R) -> np.ndarray:
    r"""The rotation vector θ s = log(R)^∨ of rotation matrices (..., 3, 3), θ ∈ [0, π).

    Uses θ = atan2(|w|, (tr R − 1)/2) with w = (R − Rᵀ)^∨/2 = sin θ s, accurate near θ = 0;
    undefined at θ = π (a closure assembled half a turn away, which no Newton step starts from).

    Examples
    --------
    >>> import numpy as np
    >>> from opalg.spatial.vectors import rotation_about
    >>> from opalg.closed.closure import rotation_log
    >>> np.round(rotation_log(rotation_about([0, 0, 1.0], 0.3)), 12) + 0.0
    array([0. , 0. , 0.3])
    """
    w = 0.5 * np.stack([R[..., 2, 1] - R[..., 1, 2], R[..., 0, 2] - R[..., 2, 0],
                        R[..., 1, 0] - R[..., 0, 1]], -1)
    s = np.linalg.norm(w, axis=-1)
    c = 0.5 * (np.trace(R, axis1=-2, axis2=-1) - 1.0)
    th = np.arctan2(s, c)
    small = s < 1e-8
    fac = np.where(small, 1.0 + th ** 2 / 6.0, th / np.where(small, 1.0, s))
    return fac[..., None] * w
