r"""A tree of flexible bodies: :class:`FlexModel` (docs/REFERENCE.md K3, K6).

Body k is an *enlarged node* of the spatial operator algebra: its node state is
𝒱(k) = [η̇_k; V_k] (m_k modal rates, then the spatial velocity of the body frame), its
generalized speeds are β(k) = [η̇_k; θ̇_k] and its joint map is ℋ(k) = diag(I_{m_k}, H(k)).
Body k's joint frame is placed (R_T, r_T) in the frame of node ``attach[k]`` of its
parent (``-1``: the parent's body frame; for a root, the inertial frame), so a child
moves with the deformation of the node it hangs from.

The coordinates x (and the rates v, accelerations, forces) have ``ndof`` = Σ (m_k + n_k)
entries, body by body: ``x[eta_slice[k]] = η_k``, ``x[theta_slice[k]] = θ_k``.
"""

from __future__ import annotations

from types import SimpleNamespace
from typing import Sequence

import numpy as np

from opalg import _backend as bk
from opalg.model._checks import refuse_free
from opalg.errors import ModelError, StateError
from opalg.model.kinematics import _double, _read
from opalg.model.multibody import Model
from opalg.spatial.vectors import motion_transform
from opalg.flex.body import FlexBody, rigid_inertia
__all__ = ["FlexModel"]


class FlexModel:
    r"""A tree of flexible bodies (docs/REFERENCE.md K3).

    Parameters
    ----------
    parents : sequence of int
        ``parents[k]``: parent body of body k, -1 for the inertial frame.
    joints : sequence of opalg.Joint
    placements : sequence of (R_T, r_T)
        Joint frame of body k in the frame of its attachment node (rotation, origin).
    bodies : sequence of FlexBody
    attach : sequence of int, optional
        ``attach[k]``: the node of the parent that body k hangs from, -1 (default) for the
        parent's body frame.  Roots must use -1.
    gravity : array_like (3,)
    names : sequence of str, optional

    Attributes
    ----------
    n, ndof : int
        Bodies and coordinates N = Σ (m_k + n_k).
    modes, joint_sizes : tuple of int
        m_k and n_k.
    eta_slice, theta_slice : tuple of slice
        Where η_k and θ_k sit in x.
    order, children : as :class:`opalg.Model`.
    X_tree : tuple of (6, 6)
        ^{J_k}X_{n}: attachment-node frame to joint frame of body k.

    Examples
    --------
    >>> from opalg.flex import examples
    >>> fm = examples.two_link_arm(modes=2)
    >>> fm.ndof, fm.modes, fm.eta_slice[1]
    (6, (2, 2), slice(3, 5, None))
    """

    def __init__(self, parents, joints, placements, bodies: Sequence[FlexBody], attach=None,
                 gravity=(0.0, 0.0, -9.81), names=None):
        n = len(parents)
        if len(bodies) != n:
            raise ModelError(f"bodies has {len(bodies)} entries but the parent array has {n} bodies")
        for k, b in enumerate(bodies):
            if not isinstance(b, FlexBody):
                raise ModelError(f"body {k}: must be a FlexBody, got {type(b).__name__}")
        attach = [-1] * n if attach is None else list(attach)
        if len(attach) != n:
            raise ModelError(f"attach has {len(attach)} entries but the parent array has {n} bodies")
        refuse_free(SimpleNamespace(joints=list(joints)), "flex.FlexModel", "a flexible model's joints are sequences of "
                    "R, P and H axes (its node kinematics take nq = nv)")
        self.bodies = tuple(bodies)
        # The rigid model with the same topology validates parents, joints, placements, names.
        self._rigid_args = (parents, joints, placements, gravity, names)
        rigid = self._rigid_model(attach, check_only=True)
        self.parents, self.order, self.children = rigid.parents, rigid.order, rigid.children
        self.joints, self.names, self.gravity = rigid.joints, rigid.names, rigid.gravity
        self.placements = tuple((np.asarray(R, float), np.asarray(r, float)) for R, r in placements)
        for k, a in enumerate(attach):
            p = self.parents[k]
            if not isinstance(a, (int, np.integer)) or isinstance(a, bool):
                raise ModelError(f"body {k} ({self.names[k]}): attach must be an int, got {a!r}")
            if p == -1 and a != -1:
                raise ModelError(f"body {k} ({self.names[k]}) is a root: attach must be -1, got {a}")
            if p >= 0 and not -1 <= a < self.bodies[p].p:
                raise ModelError(f"body {k} ({self.names[k]}): attach node {a} does not exist on parent "
                                 f"{p} ({self.names[p]}), which has {self.bodies[p].p} nodes")
        self.attach = tuple(int(a) for a in attach)
        self.n = n
        self.modes = tuple(b.m for b in self.bodies)
        self.joint_sizes = tuple(j.ndof for j in self.joints)
        sl, th, off = [], [], 0
        for m, nj in zip(self.modes, self.joint_sizes):
            sl.append(slice(off, off + m))
            th.append(slice(off + m, off + m + nj))
            off += m + nj
        self.eta_slice, self.theta_slice, self.ndof = tuple(sl), tuple(th), off
        self.sizes = tuple(m + 6 for m in self.modes)   # node-state sizes m_k + 6
        self.X_tree = tuple(motion_transform(R.T, r) for R, r in self.placements)
        self._check_mass()

    def _rigid_model(self, attach, check_only=False) -> Model:
        parents, joints, placements, gravity, names = self._rigid_args
        pl = []
        for k, (R, r) in enumerate(placements):
            p, a = parents[k], attach[k]
            ok = (not check_only and p >= 0 and a >= 0)
            pl.append((R, (np.asarray(r, float) + self.bodies[p].node_positions[a]) if ok else r))
        inert = [rigid_inertia(b) for b in self.bodies]
        return Model(parents, joints, pl, inert, gravity, names, allow_massless=True)

    def _check_mass(self) -> None:
        """𝓜(k) at η = 0 must be positive definite: every mode and the hub move some mass."""
        from opalg.flex.kinematics import node_inertia
        for k, b in enumerate(self.bodies):
            if b.symbolic:
                continue                          # definiteness cannot be decided for symbols
            Mk = node_inertia(b, np.zeros(b.m))
            try:
                np.linalg.cholesky(Mk[:b.m, :b.m] if b.m else np.eye(1))
            except np.linalg.LinAlgError:
                raise ModelError(f"body {k} ({self.names[k]}): its modes move no mass (the modal block "
                                 "of the node inertia is singular); check Phi, Psi and the node masses") from None

    def rigidify(self) -> Model:
        r"""The rigid :class:`opalg.Model` with every η held at 0 (docs/REFERENCE.md K6).

        Each body becomes one rigid body (hub plus nodes at their undeformed positions) and a
        child's joint frame moves to its attachment node's undeformed position.  For a model
        without modes its crba/rnea/aba equal :func:`opalg.flex.crba` etc.

        Examples
        --------
        >>> import numpy as np, opalg
        >>> from opalg.flex import examples, crba
        >>> fm = examples.two_link_arm(modes=0)
        >>> bool(np.allclose(opalg.crba(fm.rigidify(), [0.3, -0.2]), crba(fm, [0.3, -0.2])))
        True
        """
        return self._rigid_model(self.attach)

    @property
    def symbolic(self) -> bool:
        """True if a body's data or the gravity vector holds sympy expressions."""
        return bk.is_symbolic(self.gravity) or any(b.symbolic for b in self.bodies)

    def check_state(self, x, name: str) -> np.ndarray:
        """One state vector (ndof,): real, complex (complex step) or sympy, finite; else StateError.

        Numbers become a float (complex) array, sympy entries an object array; a string is
        refused, never evaluated (:func:`opalg._backend.asarray`), and so are nan, inf and
        sympy's nan, zoo, ±oo.
        """
        a = _read(x, name)
        if a.shape != (self.ndof,):
            raise StateError(f"{name} has shape {a.shape}, expected ({self.ndof},) "
                             "(each body's modal coordinates, then its joint coordinates)")
        a, bad = _double(a)
        if bad is not None:
            raise StateError(f"{name} has a non-finite entry at index {bad[0][0]} ({bad[1]})")
        return a

    def __repr__(self) -> str:
        return f"<opalg.flex.FlexModel: {self.n} bodies, modes={list(self.modes)}, N={self.ndof}>"
