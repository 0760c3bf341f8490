r"""Joints: every primitive axis kind, its transform, subspace, c_J term and fast path.

A joint of body k is a sequence of primitive axes applied one after the other, like
Euler angles: axis i moves frame F_{i-1} to F_i (F_0 = the joint frame, F_m = the
body frame).  A primitive kind is defined by its local 6-vector s_i (constant in
F_i) and its motion transform :math:`^{F_i}X_{F_{i-1}}(q_i)`:

===========  ==============  ================================================
kind         s_i             :math:`^{F_i}X_{F_{i-1}}(q)` (``motion_transform(E, r)``)
===========  ==============  ================================================
R revolute   [s; 0]          E = R_s(q)*, r = 0
P prismatic  [0; s]          E = I,       r = q s
H helical    [s; h s]        E = R_s(q)*, r = h q s  (pitch h, metres per radian)
===========  ==============  ================================================

with R_s(q) the rotation by q about unit s (``spatial.rotation_about``).  Then
:math:`X_J = X_m \cdots X_1`, the subspace in the body frame is
:math:`S_i = X_m \cdots X_{i+1} s_i`, and because d/dt ^kX_{F_i} = -crm(Σ_{j>i} S_j q̇_j) ^kX_{F_i}
(s_i constant in F_i, true for R, P and H alike) the apparent derivative of S gives

.. math:: c_J = \dot S \dot q = \sum_{i<j} \mathrm{crm}(S_i \dot q_i)\, S_j \dot q_j .

For a 1-dof joint the whole ^kX_℘(q) = X_J(q) X_T is a constant combination
Σ_i f_i(q) C_i of a few scalar functions (R: 1, sin, cos; P: 1, q; H: 1, sin, cos,
q sin, q cos): :class:`TreeTransform`, the hot path of the batched recursions.

The primitive kinds themselves (their s, transform and fast-path coefficients) live
in :mod:`opalg.model.axes`: adding a kind touches that module only.  The free joint
(:class:`opalg.model.free_joint.FreeJoint`, docs/REFERENCE.md K8) is not a sequence of axes: 7
configuration coordinates (a quaternion) for 6 velocities, S = I₆ and c_J = 0; it lives in
its own module.  This module imports only ``axes``, ``spatial``, ``_backend``, ``opcount``
and ``errors``.
"""

from __future__ import annotations

import numbers
from typing import Sequence

import numpy as np

from opalg import _backend as bk
from opalg import opcount
from opalg.errors import ModelError
from opalg.model.axes import AXIS_KINDS, _SPELLINGS, AxisKind  # noqa: F401  (AxisKind re-exported)
from opalg.spatial.vectors import cross_motion

_AXIS_TOL = 1e-9


def _label(name) -> str:
    return f"joint {name!r}" if name else "joint"


def _kind_codes(kind, label: str) -> tuple[str, ...]:
    try:
        kinds = [kind] if isinstance(kind, str) else list(kind)
        return tuple(_SPELLINGS[k.lower()] for k in kinds)
    except (KeyError, AttributeError, TypeError):
        spelled = " or ".join(repr(k.names[0]) for k in AXIS_KINDS.values())
        raise ModelError(f"{label}: unsupported joint type {kind!r}; use {spelled} "
                         "(or a list of them for a multi-axis joint)") from None


def _check_pitch(label: str, i: int, p):
    """A pitch as stored: a finite real number (float) or a sympy expression."""
    if bk.is_symbolic(p) and bk.asarray(p).shape == ():
        p = bk.asarray(p)[()]
        if p.is_number and not (p.is_finite and p.is_extended_real):
            raise ModelError(f"{label}: axis {i} has pitch {p}; a pitch must be finite and real")
        return p
    if isinstance(p, np.ndarray) and p.shape == () and p.dtype.kind in "iuf":
        p = p.item()
    if not isinstance(p, numbers.Real) or isinstance(p, (bool, np.bool_)):
        raise ModelError(f"{label}: axis {i} has pitch {p!r}; a pitch must be a real number "
                         "(metres per radian) or a sympy expression")
    if not np.isfinite(p):
        raise ModelError(f"{label}: axis {i} has non-finite pitch {p}")
    return float(p)


def _pitches(codes: tuple[str, ...], pitch, label: str) -> tuple:
    per_axis = isinstance(pitch, (list, tuple)) or (isinstance(pitch, np.ndarray) and pitch.ndim == 1)
    if not per_axis:
        if pitch is not None and len(codes) != 1:
            raise ModelError(f"{label}: a multi-axis joint takes one pitch per axis "
                             f"(None for non-helical axes), got {pitch!r}")
        pitch = [pitch] * len(codes)
    if len(pitch) != len(codes):
        raise ModelError(f"{label}: {len(pitch)} pitches for {len(codes)} axes")
    out = []
    for i, (c, p) in enumerate(zip(codes, pitch)):
        kind = AXIS_KINDS[c]
        if kind.pitched and p is None:
            raise ModelError(f"{label}: axis {i} is {kind.names[0]} and needs a pitch")
        if not kind.pitched and p is not None:
            takers = " or ".join(k.names[0] for k in AXIS_KINDS.values() if k.pitched)
            raise ModelError(f"{label}: axis {i} is {kind.names[0]}; only {takers} axes take a "
                             f"pitch (got {p!r})")
        out.append(None if p is None else _check_pitch(label, i, p))
    return tuple(out)


class Joint:
    r"""A joint of one or more primitive axes (revolute, prismatic, helical) in sequence.

    Parameters
    ----------
    kind : str or sequence of str
        ``"revolute"``/``"R"`` (also ``"continuous"``), ``"prismatic"``/``"P"`` or
        ``"helical"``/``"H"``, or one such entry per axis for a multi-dof joint.
    axis : array_like, shape (3,) or (n_k, 3)
        Unit axis (axes). Each axis is expressed in the frame produced by the
        previous axes, like an Euler-angle sequence.
    name : str, optional
    pitch : number, sympy expression or sequence, optional
        Helical pitch h (translation h q along the axis per rotation q, metres per
        radian). A scalar for a one-axis joint; for a multi-axis joint one entry per
        axis, ``None`` for the non-helical ones.

    Attributes
    ----------
    kinds : tuple of str
        One code per axis, ``"R"``, ``"P"`` or ``"H"``.
    axes : ndarray, shape (n_k, 3)
        Float, or object (sympy) if an axis or a pitch is symbolic.
    pitches : tuple
        Per axis: the pitch, or None for non-helical axes.

    Examples
    --------
    >>> from opalg import Joint
    >>> Joint("revolute", [0, 0, 1]).ndof
    1
    >>> Joint.spherical().kinds
    ('R', 'R', 'R')
    >>> Joint(["R", "H"], [[1, 0, 0], [0, 0, 1]], pitch=[None, 0.01]).motion_subspace_local()[1]
    array([0.  , 0.  , 1.  , 0.  , 0.  , 0.01])
    """

    def __init__(self, kind: str | Sequence[str], axis, name: str | None = None,
                 pitch: float | Sequence[float | None] | None = None):
        if name is not None and not isinstance(name, str):
            raise ModelError(f"Joint: name must be a str or None, got a {type(name).__name__} {name!r:.60}")
        label = _label(name)
        self.kinds = _kind_codes(kind, label)
        if not self.kinds:
            raise ModelError(f"{label}: a joint needs at least one axis")
        axes = bk.asarray(axis, f"{label}: axis", ModelError)
        given = axes.shape
        if axes.ndim == 1:
            axes = axes[None, :]
        if axes.shape != (len(self.kinds), 3):
            raise ModelError(f"{label}: axis has shape {given}, expected (3,) per axis "
                             f"for {len(self.kinds)} axis/axes")
        if axes.dtype.kind == "c":   # a cast to float would drop the imaginary part silently
            raise ModelError(f"{label}: axis must be real, got complex entries {axes.tolist()}")
        try:
            num = np.asarray(axes, dtype=float)
        except (TypeError, ValueError):  # sympy entries: numeric checks do not apply
            num = None
        if num is not None:
            for i, a in enumerate(num):
                nrm = float(np.linalg.norm(a))
                if not np.all(np.isfinite(a)):
                    raise ModelError(f"{label}: axis {i} has non-finite entries {a}")
                if nrm < _AXIS_TOL:
                    raise ModelError(f"{label}: axis {i} has zero length")
                if abs(nrm - 1.0) > _AXIS_TOL:
                    raise ModelError(f"{label}: axis {i} is not a unit vector (norm {nrm:.6g})")
            axes = num
        self.pitches = _pitches(self.kinds, pitch, label)
        if bk.is_symbolic(*self.pitches):
            # A symbolic pitch makes the joint's geometry symbolic: object axes carry that
            # dtype into every array built from them (s_local, X_J, Model.symbolic).
            axes = axes.astype(object)
        self.axes = axes
        self.name = name
        out = np.stack([AXIS_KINDS[c].local(a, h) for c, a, h in zip(self.kinds, axes, self.pitches)])
        out.setflags(write=False)  # shared by every call: never modified in place
        self._s_local = out
        if axes.dtype != object and self.ndof > 1:
            # Axes dependent at q = 0 make ℳ singular there; consecutive equal axes of one
            # kind are dependent for every q.  (Configuration-dependent singularities such
            # as gimbal lock are reported by the pivot check D(k).)
            S = joint_transform(self, np.zeros(self.ndof))[1]
            if np.linalg.matrix_rank(S, tol=1e-9) < self.ndof:
                raise ModelError(f"{label}: its axes are linearly dependent at q = 0 "
                                 f"(kinds {''.join(self.kinds)}, axes {num.tolist()})")

    #: True for :class:`opalg.model.free_joint.FreeJoint` (configuration ≠ velocity coordinates).
    free = False

    @property
    def ndof(self) -> int:
        """Number of degrees of freedom n_k (velocity coordinates)."""
        return len(self.kinds)

    @property
    def nq(self) -> int:
        """Number of configuration coordinates (= :attr:`ndof` except for a free joint)."""
        return self.ndof

    def velocity(self, S, qdk):
        """(v_J, c_J) for the subspace S (..., 6, n_k) at q and the rates qdk (K2).

        The axes act in sequence, so c_J = Σ_{i<j} crm(S_i q̇_i) S_j q̇_j (:func:`joint_velocity`);
        :class:`FreeJoint` overrides it.  Every caller asks the joint, so the rule lives here.
        """
        return joint_velocity(S, qdk)

    def subspace_rate(self, S, qdk):
        r"""Ṡ (..., 6, n_k) in body coordinates, or None where S is constant (one axis).

        For axes in sequence Ṡ_i = −crm(Σ_{j>i} S_j θ̇_j) S_i, so that Ṡθ̇ = c_J.

        Examples
        --------
        >>> import numpy as np
        >>> from opalg.model.joints import Joint, joint_transform
        >>> j = Joint(["R", "P"], [[0, 0, 1], [1, 0, 0]])
        >>> S, qd = joint_transform(j, np.zeros(2))[1], np.array([1.0, 1.0])
        >>> bool(np.allclose(j.subspace_rate(S, qd) @ qd, j.velocity(S, qd)[1]))   # Ṡθ̇ = c_J
        True
        >>> Joint("revolute", [0, 0, 1]).subspace_rate(S[:, :1], qd[:1]) is None
        True
        """
        if self.ndof == 1:
            return None
        nk = S.shape[-1]
        batch = np.broadcast_shapes(S.shape[:-2], qdk.shape[:-1])
        cols = [None] * nk
        later = bk.zeros(batch + (6,), S, qdk)          # Σ_{j>i} S_j θ̇_j
        for i in reversed(range(nk)):
            cols[i] = -cross_motion(later, np.broadcast_to(S[..., :, i], batch + (6,)))
            later = later + S[..., :, i] * qdk[..., i:i + 1]
        return np.stack(cols, -1)

    @classmethod
    def spherical(cls, name: str | None = None) -> "Joint":
        """Three revolute axes x, y, z in sequence (an XYZ Euler-angle joint)."""
        return cls(("R", "R", "R"), np.eye(3), name)

    @classmethod
    def planar(cls, name: str | None = None) -> "Joint":
        """Planar joint (docs/REFERENCE.md K8a): slides along x and y, then a rotation about z, q = (x, y, θ).

        The body frame is the joint frame moved by (x, y, 0) and turned by θ about z; nq = nv = 3.

        Examples
        --------
        >>> from opalg import Joint
        >>> j = Joint.planar("base")
        >>> j.kinds, j.ndof, j.nq
        (('P', 'P', 'R'), 3, 3)
        """
        return cls(("P", "P", "R"), np.eye(3), name)

    @classmethod
    def helical(cls, axis, pitch: float, name: str | None = None) -> "Joint":
        """A one-axis helical joint: rotation q about ``axis`` and translation ``pitch * q`` along it.

        Examples
        --------
        >>> from opalg import Joint
        >>> Joint.helical([0, 0, 1], 0.005, "screw").motion_subspace_local()
        array([[0.   , 0.   , 1.   , 0.   , 0.   , 0.005]])
        """
        return cls("H", axis, name, pitch=pitch)

    def motion_subspace_local(self) -> np.ndarray:
        """The axes as 6-vectors s_i (R ``[s;0]``, P ``[0;s]``, H ``[s;hs]``), shape (n_k, 6), read-only."""
        return self._s_local

    def __repr__(self) -> str:
        return f"Joint({''.join(self.kinds)}, name={self.name!r})"


def joint_transform(joint: Joint, qk) -> tuple[np.ndarray, np.ndarray]:
    r"""Motion transform X_J (..., 6, 6) and subspace S (..., 6, n_k) of one joint.

    :math:`X_J = X_m(q_m)\cdots X_1(q_1)` and :math:`S_i = X_m \cdots X_{i+1} s_i`
    (module docstring).  ``qk`` has shape (..., n_k), float, complex or sympy.

    Examples
    --------
    >>> import numpy as np
    >>> from opalg.model.joints import Joint, joint_transform
    >>> X, S = joint_transform(Joint(["R", "P"], [[0, 0, 1], [1, 0, 0]]), np.array([np.pi / 2, 2.0]))
    >>> S[:, 0]     # the rotation axis seen from the frame slid 2 along x: v = z × 2x
    array([0., 0., 1., 0., 2., 0.])
    """
    qk = bk.asarray(qk)
    if joint.free:
        return joint.transform(qk)
    s_local = joint.motion_subspace_local()
    batch = qk.shape[:-1]
    # qk[..., i] (not iteration over np.moveaxis) keeps a 0-d array for a single sympy
    # state, so every kind can index q[..., None].
    Xs = [AXIS_KINDS[c].transform(a, h, qk[..., i])
          for i, (c, a, h) in enumerate(zip(joint.kinds, joint.axes, joint.pitches))]
    # Accumulate from the last axis: T = X_m ... X_{i+1} when column i is formed.
    T, cols = None, [None] * joint.ndof
    for i in reversed(range(joint.ndof)):
        si = s_local[i] + bk.zeros(batch + (6,), qk, s_local)
        cols[i] = si if T is None else bk.mv(T, si)
        T = Xs[i] if T is None else bk.matmul(T, Xs[i])
    return T, _stack_last(cols)


def _stack_last(cols: list) -> np.ndarray:
    """``np.stack(cols, -1)``; float64 columns of one shape are copied into place without
    np.stack's dispatch and checks (the same values)."""
    shape, dt = cols[0].shape, cols[0].dtype
    if dt is bk._F64 and all(type(c) is np.ndarray and c.dtype is dt and c.shape == shape for c in cols):
        out = np.empty(shape + (len(cols),))
        for i, c in enumerate(cols):
            out[..., i] = c
        return out
    return np.stack(cols, -1)


def joint_velocity(S: np.ndarray, qdk: np.ndarray) -> tuple[np.ndarray, np.ndarray | int]:
    r"""Joint velocity v_J = S q̇ and velocity-product term c_J of one joint.

    .. math:: c_J = \sum_{i<j} \mathrm{crm}(S_i \dot q_i)\, S_j \dot q_j

    (0 for a one-axis joint, whose S is constant in the body frame).  ``S`` is
    (..., 6, n_k) from :func:`joint_transform` (or the constant (6, 1) of a 1-dof
    joint), ``qdk`` (..., n_k).

    Examples
    --------
    >>> import numpy as np
    >>> from opalg.model.joints import Joint, joint_transform, joint_velocity
    >>> S = joint_transform(Joint(["R", "P"], [[0, 0, 1], [1, 0, 0]]), np.zeros(2))[1]
    >>> vJ, cJ = joint_velocity(S, np.array([1.0, 1.0]))
    >>> cJ                                  # ω × v: the sliding velocity turns with the joint
    array([0., 0., 0., 0., 1., 0.])
    """
    if opcount._ACTIVE:  # S q̇: 6 per axis
        opcount.tally(6 * S.shape[-1], "mv")
    if S.shape[-1] == 1:   # one axis: no product term (the loop below, without its overhead)
        return S[..., :, 0] * qdk[..., 0:1], 0
    cols = [S[..., :, i] * qdk[..., i:i + 1] for i in range(S.shape[-1])]
    vJ = sum(cols[1:], cols[0])
    cJ = 0
    for i in range(len(cols)):
        for j in range(i + 1, len(cols)):
            cJ = cJ + cross_motion(cols[i], cols[j])
    return vJ, cJ


class TreeTransform:
    r"""The fast path of a 1-dof body: :math:`^kX_℘(q) = C_0 + \sum_i f_i(q) C_i`.

    Built once per body (cached by :func:`opalg.model.kinematics.up_transform`); includes
    the constant tree placement X_T.  ``S`` is the constant subspace (6, 1).

    Examples
    --------
    >>> import numpy as np
    >>> from opalg.model.joints import Joint, TreeTransform, joint_transform
    >>> from opalg.spatial.vectors import motion_transform
    >>> j, R_T, r_T = Joint.helical([0, 0, 1], 0.1), np.eye(3), np.array([1.0, 0, 0])
    >>> fast = TreeTransform(j, R_T, r_T)
    >>> q = np.array([0.3, -2.0])                     # a batch of two states
    >>> slow = joint_transform(j, q[:, None])[0] @ motion_transform(R_T.T, r_T)
    >>> bool(np.allclose(fast(q), slow))
    True
    """

    __slots__ = ("kind", "mats", "stacked", "S")

    def __init__(self, joint: Joint, R_T: np.ndarray, r_T: np.ndarray):
        if joint.ndof != 1:
            raise ValueError(f"TreeTransform needs a 1-dof joint, got {joint!r}")
        self.kind = AXIS_KINDS[joint.kinds[0]]
        self.mats = self.kind.coefficients(joint.axes[0], joint.pitches[0], bk.asarray(R_T),
                                           bk.asarray(r_T))
        numeric = all(m.dtype.kind == "f" for m in self.mats)
        # Rows of length 36: the (…, m) @ (m, 36) gemm operand of __call__.
        self.stacked = np.stack([m.reshape(36) for m in self.mats]) if numeric else None
        self.S = bk.mT(joint.motion_subspace_local())

    def __call__(self, q) -> np.ndarray:
        """^kX_℘ at joint coordinate(s) ``q`` of shape (...), -> (..., 6, 6)."""
        q = bk.asarray(q)
        f = self.kind.basis(q)
        if q.dtype.kind == "f" and self.stacked is not None:
            if q.ndim == 0:   # one state: the same product, without np.stack's overhead
                return (np.array([1.0, *f]) @ self.stacked).reshape(6, 6)
            # One small gemm: much faster than broadcasting sums of 6x6 arrays.
            return (np.stack([np.ones_like(q), *f], -1) @ self.stacked).reshape(q.shape + (6, 6))
        X = self.mats[0]
        for fi, C in zip(f, self.mats[1:]):
            X = X + bk.asarray(fi)[..., None, None] * C
        return X
