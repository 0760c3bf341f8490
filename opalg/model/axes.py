r"""Primitive axis kinds of a joint: revolute, prismatic, helical — one class each.

Each kind is defined by its local 6-vector s (constant in the frame after the
axis) and its motion transform :math:`^{F_i}X_{F_{i-1}}(q)`
(``spatial.motion_transform(E, r)``), docs/REFERENCE.md K2:

===========  ==============  ================================================
kind         s               :math:`^{F_i}X_{F_{i-1}}(q)`
===========  ==============  ================================================
R revolute   [a; 0]          E = R_a(q)*, r = 0
P prismatic  [0; a]          E = I,       r = q a
H helical    [a; h a]        E = R_a(q)*, r = h q a  (pitch h, metres per radian)
===========  ==============  ================================================

and by its fast path: for a 1-dof joint the whole ^kX_℘(q) = X_J(q) X_T is a
constant combination Σ_i f_i(q) C_i of the kind's scalar basis functions (R: 1,
sin, cos; P: 1, q; H: 1, sin, cos, q sin, q cos), used by
:class:`opalg.model.joints.TreeTransform`.

**Adding a kind** means adding one :class:`AxisKind` subclass here, decorated with
``@_register``; nothing else in opalg changes (joint sequences, c_J and the
recursions are generic: :mod:`opalg.model.joints`).  This module imports only
``spatial`` and ``_backend``.
"""

from __future__ import annotations

import numpy as np

from opalg import _backend as bk
from opalg.spatial.vectors import motion_transform, rotation_about, skew


class AxisKind:
    """A primitive axis kind: local 6-vector, transform and fast-path coefficients.

    Subclasses set ``code`` (one letter), ``names`` (accepted spellings, the first
    used in messages) and ``pitched`` (whether an axis takes a pitch), and implement

    * ``local(s, h)``: the 6-vector s_i of the axis in its own frame F_i;
    * ``transform(s, h, q)``: ^{F_i}X_{F_{i-1}}(q), shape q.shape + (6, 6);
    * ``basis(q)``: the non-constant scalar functions f_1(q), ... of the fast path;
    * ``coefficients(s, h, R_T, r_T)``: 6x6 matrices C_0, C_1, ... with
      X(q) X_T = C_0 + Σ f_i(q) C_i for the placement (R_T, r_T).

    ``s`` is the unit axis (3,), ``h`` the pitch (None if unpitched).
    """

    code: str = ""
    names: tuple[str, ...] = ()
    pitched: bool = False


#: code ("R", "P", "H") -> the kind object
AXIS_KINDS: dict[str, AxisKind] = {}
_SPELLINGS: dict[str, str] = {}


def _register(cls):
    kind = cls()
    AXIS_KINDS[kind.code] = kind
    for nm in (kind.code, *kind.names):
        _SPELLINGS[nm.lower()] = kind.code
    return cls


def _rotation_parts(s, R_T):
    """(A0, B1, B2) with R_s(q)* R_T* = A0 + sin q B1 + cos q B2.

    Rodrigues: R_s(q)* = I − sin q s~ + (1 − cos q) s~², so A0 = (I + s~²)E_T,
    B1 = −s~E_T, B2 = −s~²E_T with E_T = R_T*.
    """
    E_T = bk.mT(R_T)
    S = skew(s)
    S2 = S @ S
    return E_T + S2 @ E_T, -(S @ E_T), -(S2 @ E_T)


def _lower(M) -> np.ndarray:
    """[[0, 0], [M, 0]]: the part of a motion transform that a translation adds."""
    out = bk.zeros((6, 6), M)
    out[3:, :3] = M
    return out


@_register
class Revolute(AxisKind):
    """Revolute axis: s_i = [s; 0], E = R_s(q)*, fast path on (1, sin q, cos q)."""

    code, names = "R", ("revolute", "continuous")

    def local(self, s, h):
        return np.concatenate([s, bk.zeros((3,), s)])

    def transform(self, s, h, q):
        return motion_transform(bk.mT(rotation_about(s, q)), bk.zeros(q.shape + (3,), q, s))

    def basis(self, q):
        return [bk.sin(q), bk.cos(q)]

    def coefficients(self, s, h, R_T, r_T):
        # motion_transform(E, r) is linear in E for fixed r: map each coefficient of E.
        return [motion_transform(E, r_T) for E in _rotation_parts(s, R_T)]


@_register
class Prismatic(AxisKind):
    """Prismatic axis: s_i = [0; s], r = q s, fast path on (1, q).

    The child origin is r_T + q R_T s in the parent, so −E r~ gains −q E_T (R_T s)~.
    """

    code, names = "P", ("prismatic",)

    def local(self, s, h):
        return np.concatenate([bk.zeros((3,), s), s])

    def transform(self, s, h, q):
        E = bk.eye(3, q, s) + bk.zeros(q.shape + (3, 3), q)
        return motion_transform(E, q[..., None] * s)

    def basis(self, q):
        return [q]

    def coefficients(self, s, h, R_T, r_T):
        E_T = bk.mT(R_T)
        return [motion_transform(E_T, r_T), _lower(-(E_T @ skew(R_T @ s)))]


@_register
class Helical(AxisKind):
    r"""Helical (screw) axis of pitch h: rotation q about s with translation h q along s.

    s_i = [s; h s].  With E = A0 + sin B1 + cos B2 (as for R) and r = r_T + h q R_T s,
    −E r~ = −E r_T~ − h q E w, w = (R_T s)~, so the fast path is on
    (1, sin, cos, q sin, q cos) with C = mt(A0), mt(B1), mt(B2), L(−h B1 w), L(−h B2 w).
    The q·1 term −h A0 w vanishes: E_T w = s~E_T (R_T a rotation) and
    (I + s~²)s~ = s~ + s~³ = 0 for unit s.
    """

    code, names, pitched = "H", ("helical",), True

    def local(self, s, h):
        return np.concatenate([s, s * h])

    def transform(self, s, h, q):
        return motion_transform(bk.mT(rotation_about(s, q)), q[..., None] * s * h)

    def basis(self, q):
        sn, c = bk.sin(q), bk.cos(q)
        return [sn, c, q * sn, q * c]

    def coefficients(self, s, h, R_T, r_T):
        A0, B1, B2 = _rotation_parts(s, R_T)
        w = skew(R_T @ s) * h
        return [motion_transform(A0, r_T), motion_transform(B1, r_T), motion_transform(B2, r_T),
                _lower(-(B1 @ w)), _lower(-(B2 @ w))]
