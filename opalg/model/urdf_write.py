r"""URDF export: ``opalg.model.urdf.to_urdf(model) -> str`` (for Pinocchio and other tools).

The inverse of :func:`opalg.from_urdf` up to the numbering of bodies (URDF import numbers
them depth first) and the splitting of multi-axis joints into 1-dof joints.  Every name is
written as an escaped XML attribute value.
"""

from __future__ import annotations

from xml.sax.saxutils import quoteattr

import numpy as np

from opalg.model import _validate
from opalg.errors import ModelError
from opalg.model.multibody import Model


def matrix_to_rpy(R) -> np.ndarray:
    """URDF roll-pitch-yaw of a rotation, the inverse of :func:`opalg.spatial.vectors.rpy_to_matrix`.

    Examples
    --------
    >>> import numpy as np
    >>> from opalg.spatial.vectors import rpy_to_matrix
    >>> from opalg.model.urdf import matrix_to_rpy
    >>> bool(np.allclose(matrix_to_rpy(rpy_to_matrix([0.1, -0.2, 0.3])), [0.1, -0.2, 0.3]))
    True
    """
    R = np.asarray(R, dtype=float)
    pitch = np.arcsin(np.clip(-R[2, 0], -1.0, 1.0))
    return np.array([np.arctan2(R[2, 1], R[2, 2]), pitch, np.arctan2(R[1, 0], R[0, 0])])


def _num(x) -> str:
    return " ".join(repr(float(v)) for v in np.atleast_1d(x))


def _check_names(model: Model) -> set:
    """ModelError naming the body or joint whose name a URDF file cannot hold (control characters,
    empty), or whose generated link/joint name (``<name>_axis<i>``, ``<joint>_<i>``) collides."""
    links, joints = {}, {}
    for k in model.order:
        ln, jn, nd = model.names[k], model.joint_names[k], model.joints[k].ndof
        for what, s in (("body name", ln), ("joint name", jn)):
            _validate.xml_text(s, f"body {k}: {what}", "to_urdf")
            if not s:
                raise ModelError(f"to_urdf: body {k}: the {what} {s!r} is empty, and URDF needs a name")
        for i in range(nd):
            written = [(links, ln if i == nd - 1 else f"{ln}_axis{i}", "link"),
                       (joints, jn if nd == 1 else f"{jn}_{i}", "joint")]
            for seen, s, what in written:
                if s in seen:
                    raise ModelError(f"to_urdf: body {k} ({ln}, joint {jn!r}) writes the {what} name {s!r}, "
                                     f"which body {seen[s]} also writes (a multi-axis joint's generated "
                                     f"names are <body>_axis<i> and <joint>_<i>): rename one of them")
                seen[s] = k
    return set(links)


def to_urdf(model: Model, name: str | None = None, continuous: bool = False) -> str:
    """Write a numeric model as URDF text (for Pinocchio and other tools).

    Body k becomes link ``body{k}`` (or its name) hanging from joint
    ``joint{k}`` (or the joint's name); the inertial frame is the link ``base``
    (``base_``, ... if a body already has that name).  A multi-axis joint becomes a
    chain of 1-dof joints through massless links ``<name>_axis<i>``, so it re-imports
    as several bodies.  Revolute joints are written as ``revolute`` with wide limits,
    or ``continuous`` if asked.  URDF has no helical joint, so a model with a helical
    axis raises ``ModelError``.  The robot is called ``name``, else
    ``model.robot_name``, else ``opalg_model``.  Every name is written as an escaped
    XML attribute, so any string round-trips.

    Examples
    --------
    >>> import numpy as np, opalg
    >>> m = opalg.random_model(4, "tree", seed=0, joints="single")
    >>> m2 = opalg.from_urdf(opalg.model.urdf.to_urdf(m))
    >>> q = np.linspace(-1, 1, m.ndof)
    >>> i = m.joint_dofs(m2.joint_names)          # q order of m2 (depth-first) in m
    >>> bool(np.allclose(opalg.crba(m2, q[i]), opalg.crba(m, q)[np.ix_(i, i)]))
    True
    """
    _validate.model(model, "to_urdf")
    if name is not None:
        _validate.xml_text(name, "name", "to_urdf")
    _validate.flag(continuous, "continuous", "to_urdf", ModelError)
    if model.symbolic:
        raise ModelError("to_urdf needs a numeric model (this one has sympy entries)")
    for k, joint in enumerate(model.joints):
        if joint.free:   # a URDF 'floating' joint has no agreed configuration order: not written
            raise ModelError(f"to_urdf: body {k} ({model.names[k]}): joint {model.joint_names[k]!r} is a "
                             "free joint; write the fixed-base part and load it with "
                             "from_urdf(..., floating=True) instead")
        if "H" in joint.kinds:
            raise ModelError(f"to_urdf: body {k} ({model.names[k]}): joint {model.joint_names[k]!r} has "
                             "a helical axis, and URDF has no helical joint type")
    taken = _check_names(model)   # every link name written, generated ones included
    a = quoteattr  # an attribute value with its quotes, & < > " escaped
    base = "base"
    while base in taken:
        base += "_"
    robot = name if name is not None else (model.robot_name or "opalg_model")
    lines = [f"<robot name={a(robot)}>", f"  <link name={a(base)}/>"]
    link, jnames = {-1: base}, model.joint_names
    for k in model.order:
        jn = jnames[k]
        ln = model.names[k]
        parent = link[model.parents[k]]
        R, r = model.placements[k]
        for i, (kind, axis) in enumerate(zip(model.joints[k].kinds, model.joints[k].axes)):
            last = i == model.joints[k].ndof - 1
            child = ln if last else f"{ln}_axis{i}"
            jname = jn if model.joints[k].ndof == 1 else f"{jn}_{i}"
            if last:
                inr = model.inertias[k]
                J = np.asarray(inr.I_com, dtype=float)
                lines.append(
                    f'  <link name={a(child)}><inertial><origin xyz="{_num(inr.com)}" rpy="0 0 0"/>'
                    f'<mass value="{_num(inr.mass)}"/><inertia ixx="{_num(J[0, 0])}" ixy="{_num(J[0, 1])}" '
                    f'ixz="{_num(J[0, 2])}" iyy="{_num(J[1, 1])}" iyz="{_num(J[1, 2])}" izz="{_num(J[2, 2])}"/>'
                    "</inertial></link>")
            else:
                lines.append(f"  <link name={a(child)}/>")
            urdf_kind = {"R": "continuous" if continuous else "revolute", "P": "prismatic"}[kind]
            origin = (f'<origin xyz="{_num(r)}" rpy="{_num(matrix_to_rpy(R))}"/>' if i == 0
                      else '<origin xyz="0 0 0" rpy="0 0 0"/>')
            limit = "" if urdf_kind == "continuous" else \
                '<limit lower="-1e6" upper="1e6" effort="1e6" velocity="1e6"/>'
            lines.append(
                f'  <joint name={a(jname)} type="{urdf_kind}"><parent link={a(parent)}/>'
                f'<child link={a(child)}/>{origin}<axis xyz="{_num(axis)}"/>{limit}</joint>')
            parent = child
        link[k] = ln
    lines.append("</robot>")
    return "\n".join(lines)
