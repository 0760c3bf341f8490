r"""Multibody model: bodies, joints, placements, inertias and a parent-array topology.

Topology is a parent array ``parents[k]`` (``-1`` = the body hangs from the
inertial frame), the ℘(k) of Rodriguez–Jain–Kreutz-Delgado and the T(j) of the
1998 seed.  Labels are arbitrary: recursions follow a topological order
computed here, never ``range(n)`` (docs/REFERENCE.md pitfall 3).  Joint coordinates
are stacked in body-label order: the dofs of body ``k`` are ``q[model.dof_slice[k]]``.

Each body ``k`` carries

* a joint (:mod:`opalg.model.joints`): one or more revolute, prismatic or helical
  axes applied in sequence; the joint map ``H(k)`` (n_k x 6) is the transpose
  of the motion subspace in the child frame;
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
from functools import cached_property
from typing import Sequence

import numpy as np

from opalg import _backend as bk
from opalg.model import _checks as chk
from opalg.model._checks import is_rotation  # noqa: F401  (public: opalg.model.multibody.is_rotation)
from opalg.errors import ModelError
from opalg.model.joints import Joint  # defined there; opalg.model.multibody.Joint stays importable
from opalg.model.joints import TreeTransform
from opalg.spatial.vectors import motion_transform, spatial_inertia


def _numeric(x) -> np.ndarray | None:
    """Float array of ``x`` if every entry is a number, else None."""
    try:
        return np.asarray(x, dtype=float)
    except (TypeError, ValueError):
        return None


@dataclass(frozen=True)
class Inertia:
    """Rigid-body inertia: mass, mass centre (body frame) and inertia about the mass centre."""

    mass: object
    com: object
    I_com: object


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


def _symmetric(A: np.ndarray) -> np.ndarray:
    """(A + Aᵀ)/2 over the last two axes for numbers; sympy matrices are left as they are."""
    return A if A.dtype == object else (A + np.swapaxes(A, -1, -2)) / 2


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
        Total number of degrees of freedom N = sum n_k: the size of every velocity,
        acceleration and generalized force (also :attr:`nv`).
    nq : int
        Size of the configuration q: N plus one per free joint (its quaternion;
        docs/REFERENCE.md K8).  ``nq == ndof`` for a model without free joints.
    dof_slice : tuple of slice
        Where the velocity coordinates of body ``k`` sit in v (= q̇ without free joints).
    q_slice : tuple of slice
        Where the configuration coordinates of body ``k`` sit in q.
    free_bodies : tuple of int
        The bodies on a :class:`opalg.model.free_joint.FreeJoint`.
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
        parents = [chk.parent_index(k, p) for k, p in enumerate(parents)]
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
        chk.check_unique(self.names, "body name")
        self.parents = tuple(parents)
        self.order = chk.topological_order(parents, self.names)
        self.children = tuple(map(tuple, chk.children(parents)))
        self.joints = tuple(joints)
        for k, j in enumerate(self.joints):
            if not isinstance(j, Joint):
                raise ModelError(f"body {k} ({self.names[k]}): joint must be a Joint, got {type(j).__name__}")
            if j.name is not None and not isinstance(j.name, str):
                raise ModelError(f"body {k} ({self.names[k]}): joint name must be a string, got {j.name!r}")
            if j.axes.dtype.kind not in "fc":
                chk.model_array(j.axes, f"body {k} ({self.names[k]}): joint axis")
        chk.check_unique(self.joint_names, "joint name",
                         lambda k: ", the default name of its unnamed joint" if self.joints[k].name is None else "")
        self.link_frames = chk.check_link_frames(link_frames, n)
        if not isinstance(robot_name, str):
            raise ModelError(f"robot_name must be a string, got {robot_name!r}")
        self.robot_name = robot_name
        self.inertias = tuple(_as_inertia(k, self.names[k], i) for k, i in enumerate(inertias))
        self.allow_massless = allow_massless
        # Numeric data is validated in a few batched calls; the per-body checks run for
        # symbolic data, or to name the first bad body when the batched check fails.
        try:
            R_all = chk.stack([pl[0] for pl in placements], (3, 3))
            r_all = chk.stack([pl[1] for pl in placements], (3,))
        except (TypeError, IndexError, KeyError):
            R_all = r_all = None
        m_all = chk.stack([i.mass for i in self.inertias], ())
        c_all = None if m_all is None else chk.stack([i.com for i in self.inertias], (3,))
        J_all = None if c_all is None else chk.stack([i.I_com for i in self.inertias], (3, 3))
        if J_all is None or not chk.inertias_ok(m_all, c_all, J_all, allow_massless):
            m_all = None
            for k, i in enumerate(self.inertias):
                chk.check_inertia(k, self.names[k], i, allow_massless)
        if allow_massless:
            carries = [not chk.is_massless(i) for i in self.inertias]
            for k in reversed(self.order):
                if self.parents[k] != -1:
                    carries[self.parents[k]] |= carries[k]
            for k in range(n):
                if not carries[k]:
                    raise ModelError(
                        f"body {k} ({self.names[k]}): joint {self.joints[k].name or k!r} moves no mass "
                        "(its whole subtree is massless), so the mass matrix would be singular"
                    )
        if R_all is not None and r_all is not None and chk.placements_ok(R_all, r_all):
            self.placements = tuple((bk.asarray(pl[0]), bk.asarray(pl[1])) for pl in placements)
        else:
            R_all = None
            self.placements = tuple(chk.check_placement(k, self.names[k], pl) for k, pl in enumerate(placements))
        self.gravity = chk.check_gravity(gravity)
        sizes = [j.ndof for j in self.joints]
        offs = np.concatenate([[0], np.cumsum(sizes)]).astype(int)
        self.dof_slice = tuple(slice(int(offs[k]), int(offs[k + 1])) for k in range(n))
        self.ndof = int(offs[-1])
        # Configuration coordinates: a free joint has one more (its quaternion) than dofs.
        qoffs = np.concatenate([[0], np.cumsum([j.nq for j in self.joints])]).astype(int)
        self.q_slice = tuple(slice(int(qoffs[k]), int(qoffs[k + 1])) for k in range(n))
        self.nq = int(qoffs[-1])
        self.free_bodies = tuple(k for k, j in enumerate(self.joints) if j.free)
        self.n = n
        # Constant per-body data, computed once: Featherstone tree transform X_T
        # (parent -> joint frame) and the spatial inertia about the body origin
        # (batched for numeric data: the same arithmetic, one call for all bodies).
        if R_all is not None:
            self.X_tree = tuple(motion_transform(bk.mT(R_all), r_all))
        else:
            self.X_tree = tuple(motion_transform(bk.mT(R), r) for R, r in self.placements)
        # Symmetrized: the validated I_com is symmetric only to a tolerance, and the Riccati
        # downdates preserve P's symmetry exactly only if M(k) is exactly symmetric.
        if m_all is not None:
            self.I_spatial = tuple(_symmetric(spatial_inertia(m_all, c_all, J_all)))
        else:
            self.I_spatial = tuple(_symmetric(spatial_inertia(i.mass, i.com, i.I_com)) for i in self.inertias)
        self._up_cache: dict = {}  # body k -> joints.TreeTransform, filled by _tree_transform
        self._crba_layout = None   # (start, stop, perm) column layout, filled by algorithms.crba.crba
        self._crba_world = None    # crba_world._Plan (levels, masks, inertia parameters)
        self.symbolic = bk.is_symbolic(*self.X_tree, *self.I_spatial, self.gravity,
                                       *[j.axes for j in self.joints])

    def _tree_transform(self, k: int) -> TreeTransform:
        """Body k's :class:`opalg.model.joints.TreeTransform` (a 1-dof joint's ^kX_℘ with X_T, as a
        constant combination of scalar functions of q_k), built on first use and kept."""
        fast = self._up_cache.get(k)
        if fast is None:
            fast = self._up_cache[k] = TreeTransform(self.joints[k], *self.placements[k])
        return fast

    @cached_property
    def joint_sizes(self) -> tuple[int, ...]:
        """n_k for every body."""
        return tuple(j.ndof for j in self.joints)

    @cached_property
    def joint_names(self) -> tuple[str, ...]:
        """Joint names in q order (one entry per joint; multi-dof joints appear once).

        Computed once (the joints never change): recursions name joints in messages."""
        return tuple(j.name or f"joint{k}" for k, j in enumerate(self.joints))

    @property
    def nv(self) -> int:
        """Size of a velocity (= :attr:`ndof`; docs/REFERENCE.md K8)."""
        return self.ndof

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

    def config_permutation(self, perm: Sequence[int]) -> np.ndarray:
        """Index array ``idx`` with ``q_new = q_old[idx]`` for configurations (size nq) under
        :meth:`relabeled` (perm); :meth:`dof_permutation` maps velocities."""
        return np.concatenate([np.arange(self.q_slice[o].start, self.q_slice[o].stop) for o in perm])

    def __repr__(self) -> str:
        kind = "chain" if all(len(c) <= 1 for c in self.children) and self.parents.count(-1) == 1 else "tree"
        nq = f", nq={self.nq}" if self.nq != self.ndof else ""
        return f"<opalg.Model: {self.n} bodies, N={self.ndof} dof{nq}, {kind}, parents={list(self.parents)}>"
