r"""URDF import: ``opalg.from_urdf(path_or_xml) -> Model``.

What is read, and how it maps onto opalg's model (the conversion happens here,
at the edge; inside opalg everything stays angular-first in body frames):

* the root link (the one link that is no joint's child) is fixed to the inertial
  frame — a fixed-base robot, as in Pinocchio without a root joint;
* ``revolute``, ``continuous`` (both one angle, ``R``) and ``prismatic`` (``P``)
  joints become bodies, in depth-first document order; their axes are
  normalized (URDF semantics) and must be nonzero;
* ``fixed`` joints are merged: the child link is welded to its parent body,
  its inertia added about the body origin (parallel-axis theorem through the
  6x6 spatial inertias), its frame remembered in ``model.link_frames``;
* joint ``<origin xyz rpy>`` gives the joint frame in the parent link frame
  (``R = Rz(yaw) Ry(pitch) Rx(roll)``); the child link frame is the joint frame
  moved by the joint;
* ``<inertial>`` origin (xyz, rpy) and ``<inertia>`` are the mass centre and
  the central inertia tensor in the rotated inertial frame;
* a link without ``<inertial>`` is massless, accepted only where the joint
  above it still moves mass (see :class:`opalg.Model` ``allow_massless``);
* ``floating`` and ``planar`` joints, cycles, two roots and dangling link
  names are errors naming the element;
* ``<mimic>`` is ignored (the mimicking joint stays an independent dof, as in
  Pinocchio's plain URDF parser); visuals, collisions and limits are not read.

The XML is parsed with ``defusedxml`` (entity expansion and external
references disabled).
"""

from __future__ import annotations

import os
import pathlib
import re
from xml.sax.saxutils import quoteattr

import numpy as np
from defusedxml import ElementTree as ET
from defusedxml.common import DefusedXmlException

from .errors import ModelError, URDFError
from .model import Inertia, Joint, Model
from .spatial import rpy_to_matrix, skew, spatial_inertia

_MOVABLE = {"revolute": "R", "continuous": "R", "prismatic": "P"}
_UNSUPPORTED = {"floating", "planar"}


def _floats(text: str | None, n: int, where: str, default) -> np.ndarray:
    if text is None:
        return np.array(default, dtype=float)
    try:
        vals = np.array([float(t) for t in text.split()], dtype=float)
    except ValueError:
        raise URDFError(f"{where}: cannot read numbers from {text!r}") from None
    if vals.shape != (n,) or not np.all(np.isfinite(vals)):
        raise URDFError(f"{where}: expected {n} finite numbers, got {text!r}")
    return vals


def _origin(elem, where: str) -> tuple[np.ndarray, np.ndarray]:
    o = elem.find("origin") if elem is not None else None
    if o is None:
        return np.eye(3), np.zeros(3)
    xyz = _floats(o.get("xyz"), 3, f"{where} <origin xyz>", [0, 0, 0])
    rpy = _floats(o.get("rpy"), 3, f"{where} <origin rpy>", [0, 0, 0])
    return rpy_to_matrix(rpy), xyz


def _compose(a, b):
    """(R, p) of frame b given in frame a, composed with a given in the base."""
    return a[0] @ b[0], a[0] @ b[1] + a[1]


def inertia_from_spatial(Ms: np.ndarray) -> Inertia:
    """Recover (mass, com, I_com) from a 6x6 spatial inertia about the origin."""
    m = float(Ms[5, 5])
    if m <= 0:
        return Inertia(0.0, np.zeros(3), np.zeros((3, 3)))
    cx = Ms[:3, 3:] / m
    c = np.array([cx[2, 1], cx[0, 2], cx[1, 0]])
    I_com = Ms[:3, :3] + m * skew(c) @ skew(c)
    return Inertia(m, c, 0.5 * (I_com + I_com.T))


def _link_inertia(link, where: str) -> np.ndarray:
    """Spatial inertia of a link about its own frame origin (zeros if no <inertial>)."""
    inertial = link.find("inertial")
    if inertial is None:
        return np.zeros((6, 6))
    R, c = _origin(inertial, f"{where} <inertial>")
    mass_el = inertial.find("mass")
    if mass_el is None:
        raise URDFError(f"{where} <inertial>: missing <mass>")
    if mass_el.get("value") is None:
        raise URDFError(f"{where} <inertial> <mass>: missing value attribute")
    mass = _floats(mass_el.get("value"), 1, f"{where} <mass value>", None)[0]
    if mass < 0:
        raise URDFError(f"{where}: negative mass {mass:g}")
    ie = inertial.find("inertia")
    keys = ("ixx", "ixy", "ixz", "iyy", "iyz", "izz")
    vals = {k: 0.0 for k in keys}
    if ie is not None:
        for k in keys:
            vals[k] = _floats(ie.get(k), 1, f"{where} <inertia {k}>", [0.0])[0]
    J = np.array([[vals["ixx"], vals["ixy"], vals["ixz"]],
                  [vals["ixy"], vals["iyy"], vals["iyz"]],
                  [vals["ixz"], vals["iyz"], vals["izz"]]])
    return spatial_inertia(mass, c, R @ J @ R.T)


_DECLARED = re.compile(rb"""^\s*<\?xml[^>]*?encoding\s*=\s*["']([A-Za-z0-9._-]+)["']""")
_BLANK = "\ufeff \t\r\n"  # a byte-order mark and XML white space before the first '<'


def _decode(data: bytes, where: str) -> str:
    """Text of a URDF file: BOM, else the encoding its XML declaration names, else UTF-8."""
    for bom, enc in ((b"\xef\xbb\xbf", "utf-8-sig"), (b"\xff\xfe", "utf-16"), (b"\xfe\xff", "utf-16")):
        if data.startswith(bom):
            break
    else:
        m = _DECLARED.match(data[:400])
        enc = m.group(1).decode("ascii") if m else "utf-8"
    try:
        return data.decode(enc)
    except LookupError:
        raise URDFError(f"{where}: the XML declaration names an unknown encoding {enc!r}") from None
    except UnicodeDecodeError as e:
        how = "the encoding its XML declaration names" if enc != "utf-8" else \
            "UTF-8, and no XML declaration (<?xml version='1.0' encoding='...'?>) names another encoding"
        raise URDFError(f"{where}: byte {data[e.start]:#04x} at offset {e.start} is not valid {enc} "
                        f"({how})") from None


def _parse(source) -> "ET.Element":
    if isinstance(source, bytes):
        text = _decode(source, "URDF bytes")
    elif isinstance(source, (str, os.PathLike)) and not str(source).lstrip(_BLANK).startswith("<"):
        path = pathlib.Path(source)
        if not path.is_file():
            raise URDFError(f"URDF file not found: {path}")
        text = _decode(path.read_bytes(), f"URDF file {str(path)!r}")
    else:
        text = str(source)
    try:
        root = ET.fromstring(text.lstrip(_BLANK), forbid_dtd=False, forbid_entities=True,
                             forbid_external=True)
    except DefusedXmlException as e:
        raise URDFError(f"URDF rejected: {e}") from None
    except ET.ParseError as e:
        raise URDFError(f"malformed URDF XML: {e}") from None
    except ValueError as e:  # e.g. an encoding expat does not support
        raise URDFError(f"URDF cannot be read: {e}") from None
    if root.tag != "robot":
        raise URDFError(f"URDF root element is <{root.tag}>, expected <robot>")
    return root


def from_urdf(source, gravity=(0.0, 0.0, -9.81), locked=()) -> Model:
    """Build a :class:`opalg.Model` from a URDF file path or XML string.

    Parameters
    ----------
    source : str, bytes or path-like
        A file path, or the XML text itself (a string starting with ``<`` after
        white space or a byte-order mark, or bytes).  A file is decoded by its byte-order
        mark, else by the encoding its XML declaration names, else as UTF-8.
    gravity : array_like, shape (3,)
    locked : sequence of str
        Movable joints to weld at q = 0 (like Pinocchio's ``buildReducedModel``),
        e.g. the two finger joints of the Franka Panda to get its 7-dof arm.

    Returns
    -------
    Model
        With ``model.joint_names`` the movable joints in q order, body names the
        child link names, and ``model.link_frames`` mapping every link name to
        ``(body, R, p)`` — its frame in the body it is welded to (body ``-1``: the
        fixed base).

    Raises
    ------
    URDFError
        Malformed XML, a joint naming a missing link, two roots, a cycle, an
        unsupported joint type, a zero axis — naming the element.

    Examples
    --------
    >>> import opalg
    >>> xml = '''<robot name="pendulum">
    ...   <link name="base"/>
    ...   <link name="arm"><inertial><mass value="1"/><origin xyz="0 0 -0.5"/>
    ...     <inertia ixx="0.1" iyy="0.1" izz="0.01" ixy="0" ixz="0" iyz="0"/></inertial></link>
    ...   <joint name="hinge" type="revolute"><parent link="base"/><child link="arm"/>
    ...     <axis xyz="1 0 0"/></joint>
    ... </robot>'''
    >>> m = opalg.from_urdf(xml)
    >>> m.joint_names, round(float(opalg.crba(m, [0.0])[0, 0]), 12)
    (('hinge',), 0.35)
    """
    root = _parse(source)
    links = {}
    for el in root.findall("link"):
        name = el.get("name")
        if not name:
            raise URDFError("a <link> has no name")
        if name in links:
            raise URDFError(f"link {name!r} is defined twice")
        links[name] = el
    joints, child_of = {}, {}
    for el in root.findall("joint"):
        name, kind = el.get("name"), el.get("type")
        if not name:
            raise URDFError("a <joint> has no name")
        if name in joints:
            raise URDFError(f"joint {name!r} is defined twice")
        where = f"joint {name!r}"
        if kind in _UNSUPPORTED:
            raise URDFError(f"{where}: unsupported joint type {kind!r} (opalg models revolute, "
                            "continuous, prismatic and fixed joints)")
        if kind not in _MOVABLE and kind != "fixed":
            raise URDFError(f"{where}: unknown joint type {kind!r}")
        pe, ce = el.find("parent"), el.find("child")
        if pe is None or ce is None:
            raise URDFError(f"{where}: needs <parent link=...> and <child link=...>")
        parent, child = pe.get("link"), ce.get("link")
        for role, ln in (("parent", parent), ("child", child)):
            if ln not in links:
                raise URDFError(f"{where}: {role} link {ln!r} does not exist")
        if child in child_of:
            raise URDFError(f"link {child!r} is the child of two joints "
                            f"({child_of[child]!r} and {name!r}): URDF trees cannot close loops")
        child_of[child] = name
        joints[name] = el
    for jn in locked:
        if jn not in joints:
            raise URDFError(f"locked joint {jn!r} does not exist")
        if joints[jn].get("type") == "fixed":
            raise URDFError(f"locked joint {jn!r} is already fixed")
    roots = [ln for ln in links if ln not in child_of]
    if len(roots) != 1:
        if not roots:
            raise URDFError("the joints form a cycle: every link is some joint's child")
        raise URDFError(f"URDF has {len(roots)} root links {roots}: expected exactly one")
    kids = {ln: [] for ln in links}
    for name, el in joints.items():
        kids[el.find("parent").get("link")].append(name)

    # Depth-first from the root in document order: parents before children.
    bodies = []  # (name, joint, parent_body, placement (R, r), spatial inertia)
    link_frames = {roots[0]: (-1, np.eye(3), np.zeros(3))}
    # A stack of joints, so each subtree is numbered completely before its next sibling
    # (pre-order, siblings in document order — the order Pinocchio's parser uses too).
    stack = list(reversed(kids[roots[0]]))
    seen = {roots[0]}
    while stack:
        jname = stack.pop()
        el = joints[jname]
        ln, child = el.find("parent").get("link"), el.find("child").get("link")
        body, Rb, pb = link_frames[ln]
        Rc, pc = _compose((Rb, pb), _origin(el, f"joint {jname!r}"))
        kind = el.get("type")
        if kind == "fixed" or jname in locked:
            link_frames[child] = (body, Rc, pc)
        else:
            ax_el = el.find("axis")
            axis = _floats(None if ax_el is None else ax_el.get("xyz"), 3,
                           f"joint {jname!r} <axis xyz>", [1, 0, 0])
            big = np.abs(axis).max()  # scale first: the norm of (1e200, 0, 0) overflows
            if big * np.linalg.norm(axis / (big or 1.0)) < 1e-12:
                raise URDFError(f"joint {jname!r}: axis has zero length (norm < 1e-12)")
            unit = axis / big
            bodies.append([child, Joint(_MOVABLE[kind], unit / np.linalg.norm(unit), name=jname), body,
                           (Rc, pc), np.zeros((6, 6))])
            link_frames[child] = (len(bodies) - 1, np.eye(3), np.zeros(3))
        seen.add(child)
        stack.extend(reversed(kids[child]))
    unreached = set(links) - seen
    if unreached:
        # Each unreached link has exactly one parent joint, so walking up must loop.
        ln, path = sorted(unreached)[0], []
        while ln not in path:
            path.append(ln)
            ln = joints[child_of[ln]].find("parent").get("link")
        cyc = path[path.index(ln):] + [ln]
        raise URDFError("the joints form a cycle through links " + " -> ".join(map(repr, cyc)))
    # Add every link's inertia to the body it is welded to, about that body's origin.
    for ln, (body, R, p) in link_frames.items():
        if body < 0:
            continue  # welded to the fixed base: its inertia never moves
        Ml = _link_inertia(links[ln], f"link {ln!r}")
        # Force transform link -> body: n_b = R n_l + p x (R F_l), F_b = R F_l.
        X = np.block([[R, skew(p) @ R], [np.zeros((3, 3)), R]])
        bodies[body][4] = bodies[body][4] + X @ Ml @ X.T
    if not bodies:
        raise URDFError("URDF has no movable joints")
    try:
        return Model(
            parents=[b[2] for b in bodies],
            joints=[b[1] for b in bodies],
            placements=[b[3] for b in bodies],
            inertias=[inertia_from_spatial(b[4]) for b in bodies],
            gravity=gravity,
            names=[b[0] for b in bodies],
            allow_massless=True,
            link_frames=link_frames,
            robot_name=root.get("name", ""),
        )
    except URDFError:
        raise
    except ModelError as e:  # e.g. a massless leaf link on a movable joint
        raise URDFError(f"URDF describes an invalid model: {e}") from None


def matrix_to_rpy(R) -> np.ndarray:
    """URDF roll-pitch-yaw of a rotation, the inverse of :func:`opalg.spatial.rpy_to_matrix`.

    Examples
    --------
    >>> import numpy as np
    >>> from opalg.spatial import rpy_to_matrix
    >>> from opalg.urdf import matrix_to_rpy
    >>> bool(np.allclose(matrix_to_rpy(rpy_to_matrix([0.1, -0.2, 0.3])), [0.1, -0.2, 0.3]))
    True
    """
    R = np.asarray(R, dtype=float)
    pitch = np.arcsin(np.clip(-R[2, 0], -1.0, 1.0))
    return np.array([np.arctan2(R[2, 1], R[2, 2]), pitch, np.arctan2(R[1, 0], R[0, 0])])


def _num(x) -> str:
    return " ".join(repr(float(v)) for v in np.atleast_1d(x))


def to_urdf(model: Model, name: str | None = None, continuous: bool = False) -> str:
    """Write a numeric model as URDF text (for Pinocchio and other tools).

    Body k becomes link ``body{k}`` (or its name) hanging from joint
    ``joint{k}`` (or the joint's name); the inertial frame is the link ``base``
    (``base_``, ... if a body already has that name).  A multi-axis joint becomes a
    chain of 1-dof joints through massless links ``<name>_axis<i>``, so it re-imports
    as several bodies.  Revolute joints are written as ``revolute`` with wide limits,
    or ``continuous`` if asked.  The robot is called ``name``, else
    ``model.robot_name``, else ``opalg_model``.  Every name is written as an escaped
    XML attribute, so any string round-trips.

    Examples
    --------
    >>> import numpy as np, opalg
    >>> m = opalg.random_model(4, "tree", seed=0, joints="single")
    >>> m2 = opalg.from_urdf(opalg.urdf.to_urdf(m))
    >>> q = np.linspace(-1, 1, m.ndof)
    >>> i = m.joint_dofs(m2.joint_names)          # q order of m2 (depth-first) in m
    >>> bool(np.allclose(opalg.crba(m2, q[i]), opalg.crba(m, q)[np.ix_(i, i)]))
    True
    """
    if model.symbolic:
        raise ModelError("to_urdf needs a numeric model (this one has sympy entries)")
    a = quoteattr  # an attribute value with its quotes, & < > " escaped
    base, taken = "base", set(model.names)
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
