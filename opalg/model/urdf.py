r"""URDF import: ``opalg.from_urdf(path_or_xml) -> Model``.

What is read, and how it maps onto opalg's model (the conversion happens here,
at the edge; inside opalg everything stays angular-first in body frames):

* the root link (the one link that is no joint's child) is fixed to the inertial
  frame — a fixed-base robot, as in Pinocchio without a root joint; with
  ``floating=True`` it is body 0 on a free joint named ``"root_joint"``
  (:class:`opalg.model.free_joint.FreeJoint`, as Pinocchio's ``JointModelFreeFlyer`` root;
  docs/REFERENCE.md K8);
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
* ``floating`` (a free joint below the root) and ``planar`` joints, cycles, two roots and dangling link
  names are errors naming the element;
* ``<mimic>`` is ignored (the mimicking joint stays an independent dof, as in
  Pinocchio's plain URDF parser); visuals, collisions and limits are not read.

The XML is parsed with ``defusedxml`` (entity expansion and external
references disabled).
"""

from __future__ import annotations

import math
import os
import pathlib
import re

import numpy as np
from defusedxml import ElementTree as ET
from defusedxml.common import DefusedXmlException

from opalg.errors import ModelError, URDFError
from opalg.model import _validate
from opalg.model.free_joint import FreeJoint
from opalg.model.multibody import Inertia, Joint, Model
from opalg.spatial.vectors import skew, spatial_inertia
from opalg.model.urdf_write import matrix_to_rpy, to_urdf  # noqa: F401  (the writer, importable from here)

_MOVABLE = {"revolute": "R", "continuous": "R", "prismatic": "P"}
_UNSUPPORTED = {"floating", "planar"}


def _floats(text: str | None, n: int, where: str, default) -> np.ndarray:
    if text is None:
        return np.array(default, dtype=float)
    try:
        vals = [float(t) for t in text.split()]
    except ValueError:
        raise URDFError(f"{where}: cannot read numbers from {text!r}") from None
    if len(vals) != n or not all(map(math.isfinite, vals)):
        raise URDFError(f"{where}: expected {n} finite numbers, got {text!r}")
    return np.array(vals)


def _rpy_matrix(rpy) -> np.ndarray:
    """URDF ``R = Rz(yaw) Ry(pitch) Rx(roll)`` in closed form (equal to
    :func:`opalg.spatial.vectors.rpy_to_matrix` to rounding, ~50x faster for one frame)."""
    r, p, y = (float(v) for v in rpy)
    if not (r or p or y):
        return np.eye(3)
    cr, sr, cp, sp, cy, sy = math.cos(r), math.sin(r), math.cos(p), math.sin(p), math.cos(y), math.sin(y)
    return np.array([[cy * cp, cy * sp * sr - sy * cr, cy * sp * cr + sy * sr],
                     [sy * cp, sy * sp * sr + cy * cr, sy * sp * cr - cy * sr],
                     [-sp, cp * sr, cp * cr]])


def _origin(elem, where: str) -> tuple[np.ndarray, np.ndarray]:
    o = elem.find("origin") if elem is not None else None
    if o is None:
        return np.eye(3), np.zeros(3)
    xyz = _floats(o.get("xyz"), 3, f"{where} <origin xyz>", [0, 0, 0])
    rpy = _floats(o.get("rpy"), 3, f"{where} <origin rpy>", [0, 0, 0])
    return _rpy_matrix(rpy), xyz


def _compose(a, b):
    """(R, p) of frame b given in frame a, composed with a given in the base."""
    return a[0] @ b[0], a[0] @ b[1] + a[1]


def inertia_from_spatial(Ms: np.ndarray) -> Inertia:
    """Recover (mass, com, I_com) from a 6x6 spatial inertia about the origin."""
    return _inertias_from_spatial(np.asarray(Ms, dtype=float)[None])[0]


def _inertias_from_spatial(Ms: np.ndarray) -> list[Inertia]:
    """:func:`inertia_from_spatial` of a stack (n, 6, 6), batched (zero inertia where m <= 0)."""
    m = Ms[:, 5, 5].copy()
    pos = m > 0
    cx = Ms[:, :3, 3:] / np.where(pos, m, 1.0)[:, None, None]
    c = np.stack([cx[:, 2, 1], cx[:, 0, 2], cx[:, 1, 0]], -1)
    S = skew(c)
    I_com = Ms[:, :3, :3] + m[:, None, None] * S @ S
    I_com = 0.5 * (I_com + np.swapaxes(I_com, -1, -2))
    m[~pos], c[~pos], I_com[~pos] = 0.0, 0.0, 0.0
    return [Inertia(float(m[k]), c[k], I_com[k]) for k in range(len(m))]


def _link_inertia(link, where: str) -> tuple[float, np.ndarray, np.ndarray]:
    """(mass, mass centre, inertia tensor about it) of a link in its own frame (zeros if no <inertial>)."""
    inertial = link.find("inertial")
    if inertial is None:
        return 0.0, np.zeros(3), np.zeros((3, 3))
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
    return mass, c, R @ J @ R.T


def _body_inertias(links: dict, link_frames: dict, n_bodies: int) -> np.ndarray:
    """(n_bodies, 6, 6): every link's spatial inertia added to the body it is welded to,
    about that body's origin, in a few batched calls (links of the fixed base never move)."""
    welded = [(ln, fr) for ln, fr in link_frames.items() if fr[0] >= 0]
    acc = np.zeros((n_bodies, 6, 6))
    if not welded:
        return acc
    parts = [_link_inertia(links[ln], f"link {ln!r}") for ln, _ in welded]
    Ml = spatial_inertia(np.array([p[0] for p in parts]), np.array([p[1] for p in parts]),
                         np.array([p[2] for p in parts]))
    R, p = np.array([fr[1] for _, fr in welded]), np.array([fr[2] for _, fr in welded])
    # Force transform link -> body: n_b = R n_l + p x (R F_l), F_b = R F_l.
    X = np.zeros((len(welded), 6, 6))
    X[:, :3, :3], X[:, 3:, 3:], X[:, :3, 3:] = R, R, skew(p) @ R
    np.add.at(acc, np.array([fr[0] for _, fr in welded]), X @ Ml @ np.swapaxes(X, -1, -2))
    return acc


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
    if not isinstance(source, (str, bytes, os.PathLike)):
        raise URDFError(f"from_urdf: source must be a file path, the XML text or bytes, got "
                        f"{_validate.describe(source)}")
    if not (source.strip(_BLANK.encode() if isinstance(source, bytes) else _BLANK)
            if isinstance(source, (str, bytes)) else str(source)):
        raise URDFError("from_urdf: source is empty (expected a file path or the XML text of a <robot>)")
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


def from_urdf(source, gravity=(0.0, 0.0, -9.81), locked=(), floating: bool = False) -> Model:
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
    floating : bool
        Put the root link on a free joint ``"root_joint"`` (body 0; q gains its
        7 coordinates [p; x, y, z, w] and v its 6 [ω; v], docs/REFERENCE.md K8).

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
    floating = _validate.flag(floating, "floating", "from_urdf", URDFError)
    if isinstance(locked, (str, bytes)) or not hasattr(locked, "__iter__"):
        raise URDFError(f"from_urdf: locked must be a sequence of joint names, got {_validate.describe(locked)}"
                        + (f" (write locked=[{locked!r}])" if isinstance(locked, str) else ""))
    locked = tuple(locked)
    for jn in locked:
        _validate.text(jn, "locked joint name", "from_urdf", URDFError)
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
        if kind == "floating":
            raise URDFError(f"{where}: unsupported joint type 'floating' below the root link (opalg "
                            "models revolute, continuous, prismatic and fixed joints; "
                            "from_urdf(..., floating=True) puts the root link on a free joint)")
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
    if not links:
        raise URDFError(f"URDF robot {root.get('name', '')!r} has no <link>: nothing to model")
    roots = [ln for ln in links if ln not in child_of]
    if len(roots) != 1:
        if not roots:
            raise URDFError("the joints form a cycle: every link is some joint's child")
        raise URDFError(f"URDF has {len(roots)} root links {roots}: expected exactly one")
    kids = {ln: [] for ln in links}
    for name, el in joints.items():
        kids[el.find("parent").get("link")].append(name)

    # Depth-first from the root in document order: parents before children.
    bodies = []  # (name, joint, parent_body, placement (R, r))
    link_frames = {roots[0]: (-1, np.eye(3), np.zeros(3))}
    if floating:
        bodies.append((roots[0], FreeJoint("root_joint"), -1, (np.eye(3), np.zeros(3))))
        link_frames[roots[0]] = (0, np.eye(3), np.zeros(3))
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
            bodies.append((child, Joint(_MOVABLE[kind], unit / np.linalg.norm(unit), name=jname), body,
                           (Rc, pc)))
            link_frames[child] = (len(bodies) - 1, np.eye(3), np.zeros(3))
        seen.add(child)
        stack.extend(reversed(kids[child]))
    unreached = set(links) - seen
    if unreached:
        # Each unreached link has exactly one parent joint, so walking up must loop.
        ln, pos, path = min(unreached), {}, []
        while ln not in pos:
            pos[ln] = len(path)
            path.append(ln)
            ln = joints[child_of[ln]].find("parent").get("link")
        cyc = path[pos[ln]:] + [ln]
        raise URDFError("the joints form a cycle through links " + " -> ".join(map(repr, cyc)))
    if not bodies:
        raise URDFError("URDF has no movable joints")
    inertias = _inertias_from_spatial(_body_inertias(links, link_frames, len(bodies)))
    robot_name = root.get("name", "")
    del root, links, joints, kids, child_of  # the element tree is not needed any more: free it
    try:
        return Model(
            parents=[b[2] for b in bodies],
            joints=[b[1] for b in bodies],
            placements=[b[3] for b in bodies],
            inertias=inertias,
            gravity=gravity,
            names=[b[0] for b in bodies],
            allow_massless=True,
            link_frames=link_frames,
            robot_name=robot_name,
        )
    except URDFError:
        raise
    except ModelError as e:  # e.g. a massless leaf link on a movable joint
        raise URDFError(f"URDF describes an invalid model: {e}") from None
