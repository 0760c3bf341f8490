r"""Bridge to Pinocchio (PyPI ``pin``), used as an independent oracle.

Pinocchio's conventions differ from opalg's, and every difference is converted
here, at the edge, never inside opalg:

* spatial vectors are **linear first** ``[v; ω]`` (opalg: ``[ω; v]``) — the
  similarity Π = [[0, I], [I, 0]] (docs/REFERENCE.md A7);
* ``continuous`` joints have two configuration entries ``(cos θ, sin θ)`` and
  one velocity;
* the q order is Pinocchio's own (depth-first, siblings in its parser's
  order), so vectors are mapped by joint name;
* gravity is on by default, ``(0, 0, -9.81)``; here it is set from the model;
* its helical joint advances ``pitch * q`` along the axis per rotation q, as
  opalg's (checked in tests/test_joints.py).
* a free joint (:class:`opalg.model.free_joint.FreeJoint`) is ``JointModelFreeFlyer``:
  the same configuration ``[p; x, y, z, w]`` (opalg chose Pinocchio's quaternion
  order), and the velocity in the body frame, Pinocchio's ``[v; ω]`` against
  opalg's ``[ω; v]`` — the halves are swapped by ``v_idx`` (docs/REFERENCE.md K9).

:func:`to_pinocchio` goes through URDF (revolute and prismatic axes only);
:func:`build_pinocchio` builds the Pinocchio model joint by joint and so also
takes helical axes.

Pinocchio is an optional dependency (``pip install opalg[oracle]``).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from opalg.model.multibody import Model
from opalg.model.urdf import to_urdf


def _pin():
    try:
        import pinocchio
    except ImportError as e:  # pragma: no cover - exercised only without the extra
        raise ImportError("the Pinocchio oracle needs the 'oracle' extra: pip install 'opalg[oracle]'") from e
    return pinocchio


@dataclass
class PinocchioTwin:
    """A Pinocchio model of the same mechanism, with the index maps between the two.

    ``v_idx[i]`` is the Pinocchio velocity index of opalg dof ``i`` (N entries);
    ``q_idx[i]`` the Pinocchio configuration index of opalg configuration
    coordinate ``i`` and ``continuous[i]`` whether it is stored as (cos, sin)
    (nq entries: a free joint's 7 coordinates map one to one, K9).
    """

    model: object
    data: object
    v_idx: np.ndarray
    q_idx: np.ndarray
    continuous: np.ndarray

    def q(self, q) -> np.ndarray:
        """opalg q (nq,) -> Pinocchio configuration (Pinocchio's nq,)."""
        q = np.asarray(q, dtype=float)
        out = np.array(_pin().neutral(self.model), dtype=float)
        c = self.continuous
        out[self.q_idx[~c]] = q[~c]
        out[self.q_idx[c]] = np.cos(q[c])
        out[self.q_idx[c] + 1] = np.sin(q[c])
        return out

    def v(self, x) -> np.ndarray:
        """opalg joint-space vector (N,) -> Pinocchio tangent vector (nv,)."""
        out = np.zeros(self.model.nv)
        out[self.v_idx] = x
        return out

    def from_v(self, xp) -> np.ndarray:
        """Pinocchio tangent vector (nv,) -> opalg order (N,)."""
        return np.asarray(xp)[self.v_idx]

    def from_vv(self, Ap) -> np.ndarray:
        """Pinocchio (nv, nv) matrix -> opalg order."""
        return np.asarray(Ap)[np.ix_(self.v_idx, self.v_idx)]


def motion_to_opalg(x) -> np.ndarray:
    """Reorder linear-first 6-rows ``[v; ω]`` (Pinocchio) to angular-first ``[ω; v]``."""
    x = np.asarray(x)
    return np.concatenate([x[3:6], x[0:3]], axis=0)


def twin_from_urdf(model: Model, urdf: str, gravity: bool = True, floating: bool = False) -> PinocchioTwin:
    """Pinocchio model parsed from ``urdf`` (the same mechanism as ``model``).

    ``floating``: the root on ``JointModelFreeFlyer`` (named ``"root_joint"``, as
    ``opalg.from_urdf(..., floating=True)`` names it; docs/REFERENCE.md K9)."""
    pin = _pin()
    pm = pin.buildModelFromXML(urdf, pin.JointModelFreeFlyer()) if floating else pin.buildModelFromXML(urdf)
    pm.gravity.linear = np.asarray(model.gravity, dtype=float) if gravity else np.zeros(3)
    return twin_from_pin(model, pm)


def twin_from_pin(model: Model, pm) -> PinocchioTwin:
    """Pair an opalg model with a Pinocchio model of the same mechanism, by joint name.

    Multi-axis opalg joint ``j`` is matched with Pinocchio joints ``j_0, j_1, ...``
    (the names :func:`opalg.model.urdf.to_urdf` writes).  Gravity is left as ``pm`` has it.
    """
    names = []
    for k, j in enumerate(model.joints):
        jn = j.name or f"joint{k}"
        names += [(jn, j.free)] if j.ndof == 1 or j.free else [(f"{jn}_{i}", False) for i in range(j.ndof)]
    v_idx, q_idx, cont = [], [], []
    for nm, free in names:
        if not pm.existJointName(nm):
            raise ValueError(f"Pinocchio model has no joint named {nm!r}")
        jm = pm.joints[pm.getJointId(nm)]
        if free:
            if jm.shortname() != "JointModelFreeFlyer":
                raise ValueError(f"opalg's free joint {nm!r} is a {jm.shortname()} in Pinocchio")
            # opalg [ω; v] <- Pinocchio [v; ω] (both in the body frame); q identical (K9).
            v_idx += [jm.idx_v + i for i in (3, 4, 5, 0, 1, 2)]
            q_idx += [jm.idx_q + i for i in range(7)]
            cont += [False] * 7
            continue
        v_idx.append(jm.idx_v)
        q_idx.append(jm.idx_q)
        cont.append(jm.nq == 2)
    return PinocchioTwin(pm, pm.createData(), np.array(v_idx), np.array(q_idx), np.array(cont))


def to_pinocchio(model: Model, gravity: bool = True, continuous: bool = False) -> PinocchioTwin:
    """Export ``model`` to URDF and let Pinocchio parse it.

    Examples
    --------
    >>> import numpy as np, opalg
    >>> from opalg.pinocchio_bridge import to_pinocchio
    >>> import pinocchio as pin
    >>> m = opalg.random_model(5, "tree", seed=1, joints="single")
    >>> tw = to_pinocchio(m)
    >>> q = np.linspace(-1, 1, m.ndof)
    >>> Mp = pin.crba(tw.model, tw.data, tw.q(q))
    >>> Mp = np.triu(Mp) + np.triu(Mp, 1).T      # Pinocchio fills the upper triangle
    >>> bool(np.allclose(tw.from_vv(Mp), opalg.crba(m, q)))
    True
    """
    return twin_from_urdf(model, to_urdf(model, continuous=continuous), gravity)


def _pin_joint(kind: str, axis, pitch):
    """Pinocchio joint model of one opalg primitive axis (the kinds of opalg.model.joints)."""
    pin = _pin()
    axis = np.asarray(axis, dtype=float)
    if kind == "R":
        return pin.JointModelRevoluteUnaligned(axis)
    if kind == "P":
        return pin.JointModelPrismaticUnaligned(axis)
    if kind == "H":
        return pin.JointModelHelicalUnaligned(axis, float(pitch))
    raise ValueError(f"no Pinocchio joint for axis kind {kind!r}")


def build_pinocchio(model: Model, gravity: bool = True) -> PinocchioTwin:
    """Build the Pinocchio model of a numeric ``model`` with ``addJoint``, axis by axis.

    Bodies are added depth-first (siblings in label order).  Body k's placement
    (R_T, r_T) is the parent-to-joint ``SE3(R_T, r_T)`` of its
    first axis; further axes of a multi-axis joint are joints ``<name>_<i>`` at the
    identity placement, the body's inertia (about its mass centre, in the body
    frame) is appended to the last one.  Every axis kind is supported, helical too,
    and the free joint (``JointModelFreeFlyer``, docs/REFERENCE.md K9).

    Examples
    --------
    >>> import numpy as np, opalg
    >>> import pinocchio as pin
    >>> from opalg.pinocchio_bridge import build_pinocchio
    >>> m = opalg.random_model(5, "tree", seed=2, joints="all")
    >>> tw = build_pinocchio(m)
    >>> q, v, a = np.random.default_rng(0).normal(size=(3, m.ndof))
    >>> tau = pin.rnea(tw.model, tw.data, tw.q(q), tw.v(v), tw.v(a))
    >>> bool(np.allclose(tw.from_v(tau), opalg.rnea(m, q, v, a)))
    True
    """
    pin = _pin()
    if model.symbolic:
        raise ValueError("build_pinocchio needs a numeric model (this one has sympy entries)")
    pm = pin.Model()
    pm.gravity.linear = np.asarray(model.gravity, dtype=float) if gravity else np.zeros(3)
    last = {-1: 0}  # opalg body -> Pinocchio id of its last axis (0 = universe)
    # Depth-first: Pinocchio's algorithms (crba's nvSubtree ranges) need every subtree
    # to occupy a contiguous block of joint ids, which a breadth-first order breaks.
    stack, dfs = [k for k in reversed(range(model.n)) if model.parents[k] == -1], []
    while stack:
        dfs.append(stack.pop())
        stack += reversed(model.children[dfs[-1]])
    for k in dfs:
        joint, (R, r) = model.joints[k], model.placements[k]
        jn = model.joint_names[k]
        parent = last[model.parents[k]]
        if joint.free:   # the same q = [p; x, y, z, w]; velocity halves swapped by the twin (K9)
            parent = pm.addJoint(parent, pin.JointModelFreeFlyer(),
                                 pin.SE3(np.asarray(R, dtype=float), np.asarray(r, dtype=float)), jn)
        else:
            for i, (kind, axis, pitch) in enumerate(zip(joint.kinds, joint.axes, joint.pitches)):
                place = pin.SE3(np.asarray(R, dtype=float), np.asarray(r, dtype=float)) if i == 0 \
                    else pin.SE3.Identity()
                parent = pm.addJoint(parent, _pin_joint(kind, axis, pitch), place,
                                     jn if joint.ndof == 1 else f"{jn}_{i}")
        inr = model.inertias[k]
        pm.appendBodyToJoint(parent, pin.Inertia(float(inr.mass), np.asarray(inr.com, dtype=float),
                                                 np.asarray(inr.I_com, dtype=float)), pin.SE3.Identity())
        last[k] = parent
    return twin_from_pin(model, pm)
