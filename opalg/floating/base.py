r"""A free-floating base: the base twist that keeps the momentum, and the generalized Jacobian.

docs/REFERENCE.md K11.  For a model whose root r is on a free joint (S = I₆, K8), split the
velocity v into the base twist v_b (the root's six entries, body frame, angular first) and the
joint rates θ̇ of the arm (every other entry, in v order).  The root rows of ℳ are the
momentum of the whole system in root coordinates (K10), h_r = ℳ_{r,:} v = ℳ_bb v_b + ℳ_bm θ̇, so

.. math:: v_b = ℳ_{bb}^{-1}\,(h_r − ℳ_{bm}\dot θ),\qquad
          ℳ_{bb} = R(r),\quad ℳ_{bm}\dot θ = h_r\big|_{v = [0;\ \dot θ]},

with R(r) the composite inertia of the root (D1) and ℳ_bm θ̇ the momentum sweep of
:mod:`opalg.algorithms.momentum` run with v = [0; θ̇] — two O(n) sweeps, ℳ is never formed.  A body-fixed
frame e then moves, at constant momentum h = 0, with

.. math:: V_e = J^*\dot θ,\qquad J^* = J_m − J_b\,ℳ_{bb}^{-1}ℳ_{bm},

Umetani and Yoshida's generalized Jacobian, with J = [J_b  J_m] the frame Jacobian (C8) split
into its base and arm columns.  The column block of ℳ_bm for joint j is
:math:`(^jX_r)^T R(j) S(j)`, one outward sweep over the composite inertias.
"""

from __future__ import annotations

import numpy as np

from opalg import _backend as bk
from opalg.algorithms.crba import composite_inertias
from opalg.errors import ModelError, StateError
from opalg.model import _validate
from opalg.model.kinematics import body_kinematics, check_state, overflow_guard
from opalg.model.multibody import Model
from opalg.algorithms.momentum import subtree_momenta
from opalg.algorithms.operational import frame_columns, _frame_X


def free_root(model: Model, where: str) -> int:
    """The free root body r; ModelError unless it is the model's only free joint and only root.

    Examples
    --------
    >>> import opalg
    >>> free_root(opalg.random_model(3, "tree", seed=0, floating=True), "base_velocity")
    0
    """
    if not isinstance(model, Model):
        raise ModelError(f"{where}: model must be an opalg.Model, got {type(model).__name__}")
    free = model.free_bodies
    roots = [k for k in range(model.n) if model.parents[k] == -1]
    if not free:
        raise ModelError(f"{where}: the model has no free joint; a floating base needs its root on "
                         "opalg.FreeJoint (random_model(..., floating=True), from_urdf(..., floating=True))")
    if len(free) > 1:
        names = ", ".join(f"body {k} (joint {model.joint_names[k]!r})" for k in free)
        raise ModelError(f"{where}: the model has {len(free)} free joints ({names}); "
                         "a floating base takes exactly one, on the root")
    r = free[0]
    if model.parents[r] != -1:
        raise ModelError(f"{where}: the free joint {model.joint_names[r]!r} of body {r} is not on a root "
                         f"(its parent is body {model.parents[r]}); the floating base must be the root")
    if len(roots) > 1:
        raise ModelError(f"{where}: the model has {len(roots)} roots (bodies {roots}); a floating base "
                         f"needs the free body {r} to be the only root")
    return r


def arm_dofs(model: Model, r: int, config: bool = False) -> np.ndarray:
    """Indices into v of the arm's joint rates θ̇: every dof but the free root's six, in v order
    (``config=True``: into q, every coordinate but the root's seven)."""
    _validate.model(model, "arm_dofs")
    r = _validate.index(r, model.n, "r (the free root body)", "arm_dofs")
    if r not in model.free_bodies:
        raise ModelError(f"arm_dofs: r = {r} must be a body on a free joint (free bodies: "
                         f"{list(model.free_bodies)})")
    config = _validate.flag(config, "config", "arm_dofs")
    keep = np.ones(model.nq if config else model.nv, bool)
    keep[(model.q_slice if config else model.dof_slice)[r]] = False
    return np.flatnonzero(keep)


def join_velocity(model: Model, r: int, v_b, qd_joints) -> np.ndarray:
    """The full velocity v (..., nv) from the base twist v_b (..., 6) and the arm rates θ̇."""
    batch = np.broadcast_shapes(np.shape(v_b)[:-1], np.shape(qd_joints)[:-1])
    v = np.zeros(batch + (model.nv,), dtype=np.result_type(v_b, qd_joints))
    v[..., model.dof_slice[r]] = v_b
    v[..., arm_dofs(model, r)] = qd_joints
    return v


def _check_arm_rates(model: Model, qd_joints, r: int, where: str, name: str = "qd_joints") -> np.ndarray:
    """The arm's rates θ̇ (or, named ``theta``, its coordinates: nq − 7 = nv − 6 for one free joint)."""
    a = check_state(model, qd_joints, name, last=model.nv - 6)
    if a.dtype == object:
        raise StateError(f"{where}: {name} must be numeric (float or complex)")
    return a


def _root_blocks(model: Model, q, qd_joints, r: int):
    """(R(r), ℳ_bm θ̇, ^rX_0, kin) by the composite-inertia and momentum sweeps (checked input)."""
    v = join_velocity(model, r, np.zeros(qd_joints.shape[:-1] + (6,)), qd_joints)
    kin = body_kinematics(model, q, validate=False)
    V = [None] * model.n                     # outward: V = φ*H*v (C1), the base at rest
    for k in model.order:
        p = model.parents[k]
        vJ = bk.mv(kin.S[k], v[..., model.dof_slice[k]])
        V[k] = vJ if p == -1 else bk.mv(kin.Xup[k], V[p]) + vJ
    R, _ = composite_inertias(model, q, kin)
    return R[r], subtree_momenta(model, kin.Xup, V)[r], kin


def base_velocity(model: Model, q, qd_joints, h=None, full: bool = False) -> np.ndarray:
    r"""The base twist v_b that gives the system the momentum h, for given arm rates (K11).

    .. math:: v_b = ℳ_{bb}^{-1}\left(({}^0X_r)^{-T} h − ℳ_{bm}\dot θ\right),

    ℳ_bb = R(r) the root's composite inertia and ℳ_bm θ̇ the momentum sweep with the base at
    rest — O(n), ℳ is never formed (module docstring).

    Parameters
    ----------
    model : Model
        Its only root on :class:`opalg.FreeJoint`, the only free joint.
    q : array_like, shape (..., nq)
    qd_joints : array_like, shape (..., nv − 6)
        The arm's joint rates θ̇: v without the root's six entries, in v order.
    h : array_like, shape (..., 6), optional
        The system's spatial momentum [moment; force] about the inertial origin in inertial
        coordinates, as :func:`opalg.algorithms.momentum.spatial_momentum` returns it (default 0).
    full : bool
        Return the whole velocity v (..., nv) = [v_b; θ̇] in v order instead of v_b.

    Returns
    -------
    ndarray, shape (..., 6)
        v_b = [ω; v] of the root in root (body) coordinates, its free joint's velocity (K8).

    Raises
    ------
    ModelError
        No free joint, several, or not on the only root.
    StateError
        Wrong sizes or non-finite entries of q, qd_joints or h.

    Examples
    --------
    >>> import numpy as np, opalg
    >>> from opalg.floating import base_velocity
    >>> from opalg.algorithms.momentum import spatial_momentum
    >>> m = opalg.random_model(4, "tree", seed=1, floating=True)
    >>> q, qd = opalg.neutral(m), np.ones(m.nv - 6)
    >>> v = base_velocity(m, q, qd, full=True)
    >>> bool(np.allclose(spatial_momentum(m, q, v), 0))
    True
    """
    r = free_root(model, "base_velocity")
    full = _validate.flag(full, "full", "base_velocity")
    q = check_state(model, q, "q")
    qd_joints = _check_arm_rates(model, qd_joints, r, "base_velocity")
    if q.dtype == object:
        raise StateError("base_velocity: q must be numeric (float or complex)")
    h0 = None if h is None else check_state(model, h, "h", last=6)

    def compute():
        Rr, hm, kin = _root_blocks(model, q, qd_joints, r)
        rhs = -hm
        if h0 is not None:     # h_0 = (ʳX_0)ᵀ h_r (K10), so h_r = (ʳX_0)^{-T} h_0
            rhs = rhs + np.linalg.solve(bk.mT(kin.Xup[r]), h0[..., None])[..., 0]
        vb = np.linalg.solve(Rr, rhs[..., None])[..., 0]
        return join_velocity(model, r, vb, qd_joints) if full else vb

    return overflow_guard("base_velocity", compute, {"q": q, "qd_joints": qd_joints, "h": h0})


def coupling_inertia(model: Model, q, kin=None, r: int | None = None):
    r"""(ℳ_bb, ℳ_bm) (..., 6, 6), (..., 6, nv − 6) in O(n): R(r) and the blocks (^jX_r)ᵀ R(j) S(j) (K11).

    Examples
    --------
    >>> import numpy as np, opalg
    >>> from opalg.floating import coupling_inertia, arm_dofs
    >>> m = opalg.random_model(5, "chain", seed=2, floating=True)
    >>> q = opalg.integrate(m, opalg.neutral(m), np.ones(m.nv))
    >>> Mbb, Mbm = coupling_inertia(m, q)
    >>> M = opalg.crba(m, q)
    >>> bool(np.allclose(Mbb, M[:6, :6]) and np.allclose(Mbm, M[:6, arm_dofs(m, 0)]))
    True
    """
    root = free_root(model, "coupling_inertia")
    if r is not None and _validate.integer(r, "r", "coupling_inertia") != root:
        raise ModelError(f"coupling_inertia: r = {r!r} must be the free root body {root} (or None)")
    r = root
    if kin is None:
        q = check_state(model, q, "q")
        kin = body_kinematics(model, q, validate=False)
    R, _ = composite_inertias(model, q, kin)
    cols = bk.zeros(kin.batch + (6, model.nv), *R)
    Xr = {r: None}                        # ^jX_r, outward from the root
    for k in model.order:
        p = model.parents[k]
        if k == r:
            continue
        Xr[k] = kin.Xup[k] if Xr[p] is None else kin.Xup[k] @ Xr[p]
        cols[..., :, model.dof_slice[k]] = bk.mT(Xr[k]) @ (R[k] @ kin.S[k])
    return R[r], cols[..., :, arm_dofs(model, r)]


def generalized_jacobian(model: Model, q, body: int, point=None) -> np.ndarray:
    r"""Umetani–Yoshida's generalized Jacobian J* (..., 6, nv − 6) of a body point at zero momentum (K11).

    .. math:: J^* = J_m − J_b\,ℳ_{bb}^{-1}ℳ_{bm},

    with J = [J_b J_m] the frame Jacobian (C8, :func:`opalg.frame_jacobian`) of the frame e at
    ``point`` on ``body`` with the body's axes, and ℳ_bb, ℳ_bm from :func:`coupling_inertia`.
    **Output frame:** as :func:`opalg.frame_jacobian`, J*θ̇ = [ω; v] of e in e's (the body's)
    coordinates, angular first, v the velocity of the point; rotate by the body's world
    orientation R (``opalg.body_poses``) for world axes.  Columns: the arm's rates θ̇ in v
    order (:func:`arm_dofs`).  Valid when the momentum is zero (free flight from rest).

    Parameters
    ----------
    body : int
        The body carrying the point (the root itself is allowed).
    point : array_like, shape (3,), optional
        The point in body coordinates (default the body's origin).

    Examples
    --------
    >>> import numpy as np, opalg
    >>> from opalg.floating import base_velocity, generalized_jacobian
    >>> m = opalg.random_model(4, "chain", seed=3, floating=True)
    >>> q, qd = opalg.neutral(m), np.random.default_rng(0).normal(size=m.nv - 6)
    >>> Js = generalized_jacobian(m, q, 3, [0.1, 0, 0])
    >>> J = opalg.frame_jacobian(m, q, (3, [0.1, 0, 0]))
    >>> bool(np.allclose(Js @ qd, J @ base_velocity(m, q, qd, full=True)))
    True
    """
    r = free_root(model, "generalized_jacobian")
    q = check_state(model, q, "q")
    if q.dtype == object:
        raise StateError("generalized_jacobian: q must be numeric (float or complex)")
    point = np.zeros(3) if point is None else _validate.array(point, "point", "generalized_jacobian", (3,))
    b, Xe = _frame_X(model, (body, point))

    def compute():
        kin = body_kinematics(model, q, validate=False)
        Mbb, Mbm = coupling_inertia(model, q, kin, r)
        J = frame_columns(model, kin, b, Xe)
        return J[..., :, arm_dofs(model, r)] - J[..., :, model.dof_slice[r]] @ np.linalg.solve(Mbb, Mbm)

    return overflow_guard("generalized_jacobian", compute, {"q": q})
