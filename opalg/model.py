r"""Multibody model: bodies, joints, placements, inertias and a parent-array topology.

Topology is a parent array ``parents[k]`` (``-1`` = the body hangs from the
inertial frame), the ℘(k) of Rodriguez–Jain–Kreutz-Delgado and the T(j) of the
1998 seed.  Labels are arbitrary: recursions follow a topological order
computed here, never ``range(n)`` (SOA_REFERENCE pitfall 3).  Joint coordinates
are stacked in body-label order: the dofs of body ``k`` are ``q[model.dof_slice[k]]``.

Each body ``k`` carries

* a joint: one or more revolute/prismatic axes applied in sequence; the
  joint map ``H(k)`` (n_k x 6) is the transpose of the motion subspace in the
  child frame;
* a placement ``(R_T, r_T)``: the joint frame in the parent body frame
  (``R_T`` = orientation of the joint frame in parent coordinates, ``r_T`` its
  origin in parent coordinates); the child body frame is the joint frame moved
  by the joint;
* an inertia ``(mass, com, I_com)`` in the child body frame.

Symbolic (sympy) parameters are accepted; numeric validity checks are then
applied only to entries that are numbers.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Sequence

import numpy as np

from . import _backend as bk
from .errors import ModelError
from .spatial import motion_transform, spatial_inertia

_KINDS = {"revolute": "R", "r": "R", "continuous": "R", "prismatic": "P", "p": "P"}
_AXIS_TOL = 1e-9


def _numeric(x) -> np.ndarray | None:
    """Float array of ``x`` if every entry is a number, else None."""
    try:
        return np.asarray(x, dtype=float)
    except (TypeError, ValueError):
        return None


class Joint:
    r"""A joint of one or more revolute (R) or prismatic (P) axes applied in sequence.

    Parameters
    ----------
    kind : str or sequence of str
        ``"revolute"``/``"R"`` or ``"prismatic"``/``"P"``, or one such entry per axis
        for a multi-dof joint (e.g. a spherical joint as three revolute axes).
    axis : array_like, shape (3,) or (n_k, 3)
        Unit axis (axes) in the joint frame. Each axis is expressed in the frame
        produced by the previous axes, like an Euler-angle sequence.
    name : str, optional

    Examples
    --------
    >>> from opalg import Joint
    >>> Joint("revolute", [0, 0, 1]).ndof
    1
    >>> Joint.spherical().kinds
    ('R', 'R', 'R')
    """

    def __init__(self, kind: str | Sequence[str], axis, name: str | None = None):
        label = f"joint {name!r}" if name else "joint"
        try:
            kinds = [kind] if isinstance(kind, str) else list(kind)
            self.kinds = tuple(_KINDS[k.lower()] for k in kinds)
        except (KeyError, AttributeError, TypeError):
            raise ModelError(
                f"{label}: unsupported joint type {kind!r}; use 'revolute' or 'prismatic' "
                "(or a list of them for a multi-axis joint)"
            ) from None
        if not self.kinds:
            raise ModelError(f"{label}: a joint needs at least one axis")
        axes = bk.asarray(axis)
        if axes.ndim == 1:
            axes = axes[None, :]
        if axes.shape != (len(self.kinds), 3):
            raise ModelError(
                f"{label}: axis has shape {bk.asarray(axis).shape}, expected (3,) per axis "
                f"for {len(self.kinds)} axis/axes"
            )
        num = _numeric(axes)
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
        self.axes = axes
        self.name = name
        if num is not None and self.ndof > 1:
            # Axes that are dependent at q = 0 make ℳ singular there; consecutive equal
            # axes of one kind are dependent for every q.  (Configuration-dependent
            # singularities such as gimbal lock are reported by the pivot check D(k).)
            from .kinematics import joint_transform

            S = joint_transform(self, np.zeros(self.ndof))[1]
            if np.linalg.matrix_rank(S, tol=1e-9) < self.ndof:
                raise ModelError(f"{label}: its axes are linearly dependent at q = 0 "
                                 f"(kinds {''.join(self.kinds)}, axes {num.tolist()})")

    @property
    def ndof(self) -> int:
        """Number of degrees of freedom n_k."""
        return len(self.kinds)

    @classmethod
    def spherical(cls, name: str | None = None) -> "Joint":
        """Three revolute axes x, y, z in sequence (an XYZ Euler-angle joint)."""
        return cls(("R", "R", "R"), np.eye(3), name)

    def motion_subspace_local(self) -> np.ndarray:
        """The axes as 6-vectors ``s_i`` (revolute ``[s;0]``, prismatic ``[0;s]``), shape (n_k, 6)."""
        if getattr(self, "_s_local", None) is not None:
            return self._s_local
        out = bk.zeros((self.ndof, 6), self.axes)
        for i, (k, a) in enumerate(zip(self.kinds, self.axes)):
            if k == "R":
                out[i, :3] = a
            else:
                out[i, 3:] = a
        out.setflags(write=False)  # cached and shared: never modified in place
        self._s_local = out
        return out

    def __repr__(self) -> str:
        return f"Joint({''.join(self.kinds)}, name={self.name!r})"


@dataclass(frozen=True)
class Inertia:
    """Rigid-body inertia: mass, mass centre (body frame) and inertia about the mass centre."""

    mass: object
    com: object
    I_com: object


def _parent_index(k: int, p) -> int:
    """An integer parent index (floats only if integral, as from a numpy float array)."""
    if isinstance(p, (int, np.integer)) and not isinstance(p, (bool, np.bool_)):
        return int(p)
    if isinstance(p, (float, np.floating)) and float(p).is_integer():
        return int(p)
    raise ModelError(f"body {k}: parent index {p!r} is not an integer")


def is_rotation(R: np.ndarray, tol: float = 1e-9) -> bool:
    """True if the numeric 3x3 ``R`` is finite, orthonormal to ``tol`` and has det +1."""
    return bool(np.all(np.isfinite(R)) and np.allclose(R.T @ R, np.eye(3), atol=tol)
                and np.linalg.det(R) > 0)


def _as_inertia(k: int, name: str, spec) -> Inertia:
    if isinstance(spec, Inertia):
        return spec
    try:
        if isinstance(spec, (str, bytes)):
            raise TypeError
        mass, com, I_com = spec
    except (TypeError, ValueError):
        raise ModelError(f"body {k} ({name}): inertia must be an Inertia or (mass, com, I_com), "
                         f"got {spec!r}") from None
    return Inertia(mass, com, I_com)


def _is_massless(inertia: Inertia) -> bool:
    m, J = _numeric(inertia.mass), _numeric(inertia.I_com)
    return m is not None and J is not None and m == 0 and not np.any(J)


def _model_array(x, what: str) -> np.ndarray:
    """``x`` as an array of numbers or sympy expressions, else a ModelError naming ``what``
    (strings are refused before anything can evaluate them, and so are sympy nan, zoo, ±oo)."""
    a = bk.asarray(x, what, ModelError)
    if a.dtype == object:
        bad = bk.first_nonfinite(a)
        if bad is not None:
            raise ModelError(f"{what} has a non-finite entry {bad[1]} at index {bad[0]}")
    return a


def _check_inertia(k: int, name: str, inertia: Inertia, allow_massless: bool) -> None:
    for what, x in (("mass", inertia.mass), ("mass centre", inertia.com), ("inertia tensor", inertia.I_com)):
        _model_array(x, f"body {k} ({name}): {what}")
    if bk.asarray(inertia.mass).shape != ():
        raise ModelError(f"body {k} ({name}): mass must be a scalar, got {inertia.mass!r}")
    m = _numeric(inertia.mass)
    if m is None and not bk.is_symbolic(inertia.mass):
        raise ModelError(f"body {k} ({name}): mass must be a number or a sympy expression, "
                         f"got {inertia.mass!r}")
    if allow_massless and _is_massless(inertia):
        return
    if m is not None and (not np.isfinite(m) or m <= 0):
        hint = "" if allow_massless else " (massless bodies need allow_massless=True)"
        raise ModelError(f"body {k} ({name}): mass must be > 0, got {float(m):g}{hint}")
    c = bk.asarray(inertia.com)
    if c.shape != (3,):
        raise ModelError(f"body {k} ({name}): mass centre has shape {c.shape}, expected (3,)")
    cn = _numeric(c)
    if cn is not None and not np.all(np.isfinite(cn)):
        raise ModelError(f"body {k} ({name}): mass centre has non-finite entries {cn}")
    J = bk.asarray(inertia.I_com)
    if J.shape != (3, 3):
        raise ModelError(f"body {k} ({name}): inertia tensor has shape {J.shape}, expected (3, 3)")
    Jn = _numeric(J)
    if Jn is None:
        return
    if not np.all(np.isfinite(Jn)):
        raise ModelError(f"body {k} ({name}): inertia tensor has non-finite entries")
    scale = max(1.0, float(np.abs(Jn).max()))
    if not np.allclose(Jn, Jn.T, atol=1e-12 * scale):
        raise ModelError(f"body {k} ({name}): inertia tensor is not symmetric")
    ev = np.linalg.eigvalsh(Jn)
    # Degenerate (point-mass, rod) tensors are accepted only with allow_massless,
    # as for URDF imports; a joint that then moves no inertia fails at its pivot D(k).
    if allow_massless:
        not_definite = ev[0] < -1e-12 * scale
    else:
        not_definite = ev[0] <= 0
    if not_definite:
        raise ModelError(
            f"body {k} ({name}): inertia tensor is not positive definite (eigenvalues {ev})"
        )
    if ev[2] > ev[0] + ev[1] + 1e-12 * scale:
        raise ModelError(
            f"body {k} ({name}): principal moments {ev} violate the triangle inequality "
            f"({ev[2]:.6g} > {ev[0]:.6g} + {ev[1]:.6g})"
        )


def _topological_order(parents: Sequence[int], names: Sequence[str]) -> tuple[int, ...]:
    """Bodies sorted by (depth, label), in O(n); a cycle is reported with its bodies in order."""
    n = len(parents)
    for k, p in enumerate(parents):
        if p == k:
            raise ModelError(f"body {k} ({names[k]}) is its own parent")
        if not (-1 <= p < n):
            raise ModelError(
                f"body {k} ({names[k]}): parent index {p} out of range (-1 for the inertial frame, "
                f"0..{n - 1} for bodies)"
            )
    kids = _children(parents)
    depth = [-1] * n
    level = [k for k in range(n) if parents[k] == -1]
    by_depth = []
    while level:
        by_depth.append(level)
        for k in level:
            depth[k] = len(by_depth) - 1
        level = [c for k in level for c in kids[k]]
    if sum(map(len, by_depth)) < n:
        # The smallest body not reached from a root walks up into a cycle.
        j, pos, path = depth.index(-1), {}, []
        while j not in pos:
            pos[j] = len(path)
            path.append(j)
            j = parents[j]
        cyc = path[pos[j]:] + [j]
        raise ModelError("parent array has a cycle through bodies " + " -> ".join(map(str, cyc)))
    return tuple(k for level in by_depth for k in sorted(level))


def _children(parents: Sequence[int]) -> list[list[int]]:
    """Children of every body in ascending label order, in one pass (O(n))."""
    kids: list[list[int]] = [[] for _ in parents]
    for c, p in enumerate(parents):
        if p >= 0:
            kids[p].append(c)
    return kids


def _check_unique(names: Sequence[str], what: str, hint=lambda k: "") -> None:
    """Refuse a name used twice, naming it and both bodies."""
    first: dict[str, int] = {}
    for k, nm in enumerate(names):
        if nm in first:
            raise ModelError(f"{what} {nm!r} is used twice (bodies {first[nm]} and {k}{hint(k)}): "
                             "names must be unique")
        first[nm] = k


class Model:
    r"""A tree of rigid bodies given by a parent array.

    Parameters
    ----------
    parents : sequence of int
        ``parents[k]`` is the parent body of body ``k``, ``-1`` for the inertial frame.
    joints : sequence of Joint
    placements : sequence of (R_T, r_T)
        Joint frame of body ``k`` in the parent frame: rotation (3x3) and origin (3,).
    inertias : sequence of Inertia or (mass, com, I_com)
    gravity : array_like, shape (3,)
        Uniform gravitational acceleration in the inertial frame.
    names : sequence of str, optional
        Body names (default ``"body0"``, ...).
    allow_massless : bool
        Accept bodies of zero mass and zero inertia (e.g. intermediate frames of a
        URDF or of an Euler-angle hinge), provided every joint still carries mass:
        a joint whose whole subtree is massless raises ``ModelError``.
    link_frames : dict, optional
        Named frames welded to bodies, ``{name: (body, R, p)}`` (body ``-1``: the
        fixed base); :func:`opalg.from_urdf` records every URDF link here.
    robot_name : str
        Name of the mechanism (the URDF ``<robot name>``), default ``""``.

    Entries of the arrays are numbers or sympy expressions; strings are refused
    (never evaluated), as are duplicate body or joint names and an empty parent array.

    Attributes
    ----------
    n : int
        Number of bodies.
    ndof : int
        Total number of degrees of freedom N = sum n_k.
    dof_slice : tuple of slice
        Where the coordinates of body ``k`` sit in q.
    order : tuple of int
        Bodies in topological (base-to-tip, "outward") order.
    children : tuple of tuple of int
        ``children[k]``: the bodies whose parent is ``k``, ascending.
    link_frames : dict
        ``{name: (body, R, p)}``, as given (empty unless the model came from a URDF).
    robot_name : str
        As given.

    Examples
    --------
    >>> import numpy as np
    >>> from opalg import Model, Joint
    >>> m = Model([-1, 0, 0], [Joint("R", [0, 0, 1.])] * 3, [(np.eye(3), np.zeros(3))] * 3,
    ...           [(1.0, np.zeros(3), np.eye(3))] * 3)
    >>> m.ndof, m.children[0]
    (3, (1, 2))
    """

    def __init__(self, parents, joints, placements, inertias, gravity=(0.0, 0.0, -9.81), names=None,
                 allow_massless: bool = False, link_frames: dict | None = None, robot_name: str = ""):
        parents = [_parent_index(k, p) for k, p in enumerate(parents)]
        n = len(parents)
        if n == 0:
            raise ModelError("the parent array is empty: a model needs at least one body")
        self.names = tuple(names) if names is not None else tuple(f"body{k}" for k in range(n))
        for what, seq in (("joints", joints), ("placements", placements), ("inertias", inertias),
                          ("names", self.names)):
            if len(seq) != n:
                raise ModelError(f"{what} has {len(seq)} entries but the parent array has {n} bodies")
        for k, nm in enumerate(self.names):
            if not isinstance(nm, str):
                raise ModelError(f"body {k}: name must be a string, got {nm!r}")
        _check_unique(self.names, "body name")
        self.parents = tuple(parents)
        self.order = _topological_order(parents, self.names)
        self.children = tuple(map(tuple, _children(parents)))
        self.joints = tuple(joints)
        for k, j in enumerate(self.joints):
            if not isinstance(j, Joint):
                raise ModelError(f"body {k} ({self.names[k]}): joint must be a Joint, got {type(j).__name__}")
            if j.name is not None and not isinstance(j.name, str):
                raise ModelError(f"body {k} ({self.names[k]}): joint name must be a string, got {j.name!r}")
            _model_array(j.axes, f"body {k} ({self.names[k]}): joint axis")
        _check_unique(self.joint_names, "joint name",
                      lambda k: ", the default name of its unnamed joint" if self.joints[k].name is None else "")
        self.link_frames = {} if link_frames is None else dict(link_frames)
        for nm, fr in self.link_frames.items():
            if not (isinstance(fr, tuple) and len(fr) == 3 and isinstance(fr[0], (int, np.integer))
                    and -1 <= fr[0] < n):
                raise ModelError(f"link frame {nm!r}: expected (body in -1..{n - 1}, R, p), got {fr!r}")
        if not isinstance(robot_name, str):
            raise ModelError(f"robot_name must be a string, got {robot_name!r}")
        self.robot_name = robot_name
        self.inertias = tuple(_as_inertia(k, self.names[k], i) for k, i in enumerate(inertias))
        for k, i in enumerate(self.inertias):
            _check_inertia(k, self.names[k], i, allow_massless)
        self.allow_massless = allow_massless
        if allow_massless:
            carries = [not _is_massless(i) for i in self.inertias]
            for k in reversed(self.order):
                if self.parents[k] != -1:
                    carries[self.parents[k]] |= carries[k]
            for k in range(n):
                if not carries[k]:
                    raise ModelError(
                        f"body {k} ({self.names[k]}): joint {self.joints[k].name or k!r} moves no mass "
                        "(its whole subtree is massless), so the mass matrix would be singular"
                    )
        self.placements = []
        for k, pl in enumerate(placements):
            try:
                R, r = pl[0], pl[1]
            except (TypeError, IndexError, KeyError):
                raise ModelError(f"body {k} ({self.names[k]}): placement must be (3x3 rotation, 3-vector), "
                                 f"got {pl!r}") from None
            R = _model_array(R, f"body {k} ({self.names[k]}): placement rotation")
            r = _model_array(r, f"body {k} ({self.names[k]}): placement origin")
            if R.shape != (3, 3) or r.shape != (3,):
                raise ModelError(f"body {k} ({self.names[k]}): placement must be (3x3 rotation, 3-vector)")
            Rn = _numeric(R)
            if Rn is not None and not is_rotation(Rn):
                raise ModelError(f"body {k} ({self.names[k]}): placement rotation is not a proper rotation")
            rn = _numeric(r)
            if rn is not None and not np.all(np.isfinite(rn)):
                raise ModelError(f"body {k} ({self.names[k]}): placement origin has non-finite entries {rn}")
            self.placements.append((R, r))
        self.placements = tuple(self.placements)
        g = _model_array(gravity, "gravity")
        if g.shape != (3,):
            raise ModelError(f"gravity has shape {g.shape}, expected (3,)")
        gn = _numeric(g)
        if gn is not None and not np.all(np.isfinite(gn)):
            raise ModelError(f"gravity has non-finite entries {gn}")
        self.gravity = g
        sizes = [j.ndof for j in self.joints]
        offs = np.concatenate([[0], np.cumsum(sizes)]).astype(int)
        self.dof_slice = tuple(slice(int(offs[k]), int(offs[k + 1])) for k in range(n))
        self.ndof = int(offs[-1])
        self.n = n
        # Constant per-body data, computed once: Featherstone tree transform X_T
        # (parent -> joint frame) and the spatial inertia about the body origin.
        self.X_tree = tuple(motion_transform(bk.mT(R), r) for R, r in self.placements)
        self.I_spatial = tuple(spatial_inertia(i.mass, i.com, i.I_com) for i in self.inertias)
        self.symbolic = bk.is_symbolic(*self.X_tree, *self.I_spatial, self.gravity,
                                       *[j.axes for j in self.joints])

    @property
    def joint_sizes(self) -> tuple[int, ...]:
        """n_k for every body."""
        return tuple(j.ndof for j in self.joints)

    @property
    def joint_names(self) -> tuple[str, ...]:
        """Joint names in q order (one entry per joint; multi-dof joints appear once)."""
        return tuple(j.name or f"joint{k}" for k, j in enumerate(self.joints))

    def joint_dofs(self, joint_names: Sequence[str]) -> np.ndarray:
        """Indices into q of the named joints' coordinates, in the given order.

        ``q_self[model.joint_dofs(other.joint_names)]`` reorders q to another
        model's joint order (both with the same joints, e.g. after a URDF round trip).
        """
        where = {nm: k for k, nm in enumerate(self.joint_names)}
        missing = [nm for nm in joint_names if nm not in where]
        if missing:
            raise ModelError(f"no joint named {missing[0]!r} in this model")
        return np.concatenate([np.arange(self.dof_slice[where[nm]].start,
                                         self.dof_slice[where[nm]].stop) for nm in joint_names])

    def relabeled(self, perm: Sequence[int]) -> "Model":
        """The same mechanism with body ``i`` of the new model = body ``perm[i]`` of this one.

        Joint coordinates move with their bodies; use :meth:`dof_permutation`
        to map q vectors.  ``link_frames`` follow their bodies; ``robot_name`` is kept.
        """
        perm = list(perm)
        if sorted(perm) != list(range(self.n)):
            raise ModelError(f"relabeling {perm} is not a permutation of 0..{self.n - 1}")
        inv = {old: new for new, old in enumerate(perm)}
        parents = [-1 if self.parents[o] == -1 else inv[self.parents[o]] for o in perm]
        frames = {nm: (-1 if b == -1 else inv[b], R, p) for nm, (b, R, p) in self.link_frames.items()}
        return Model(parents, [self.joints[o] for o in perm], [self.placements[o] for o in perm],
                     [self.inertias[o] for o in perm], self.gravity, [self.names[o] for o in perm],
                     self.allow_massless, frames, self.robot_name)

    def dof_permutation(self, perm: Sequence[int]) -> np.ndarray:
        """Index array ``idx`` with ``q_new = q_old[idx]`` for :meth:`relabeled` (perm)."""
        return np.concatenate([np.arange(self.dof_slice[o].start, self.dof_slice[o].stop) for o in perm])

    def __repr__(self) -> str:
        kind = "chain" if all(len(c) <= 1 for c in self.children) and self.parents.count(-1) == 1 else "tree"
        return f"<opalg.Model: {self.n} bodies, N={self.ndof} dof, {kind}, parents={list(self.parents)}>"
