"""URDF import/export: fixed-joint merging, inertial frames, q order, round trip, bad input.

Expected values are computed by hand here (explicit rotation matrices and the
3x3 parallel-axis theorem), never taken from opalg's own output.

Tolerances (relative, helpers.assert_close): measured bounds (worst seen, margin and sample in each
constant's ``why``), ``cond_tol`` for ℳ⁻¹, and exact equality where both sides are the same
operations or exact integers.
"""

from __future__ import annotations

import time

import numpy as np
import pytest

import opalg
from opalg.model.urdf import to_urdf

from helpers import assert_close, cond_tol, measured
from urdf_factory import random_urdf

_HAND = ("300 random URDFs of each hand-checked kind (welds, inertial rpy, prismatic, pendulum) "
         "under 3 BLAS/SIMD kernels")
#: A hand-computed mass, mass centre, frame or ℳ entry (a few products of O(1) numbers) vs
#: opalg's; frames and offsets relative to max(size, 1).  Measured.
TOL_HAND = measured(2e-14, 1.0e-15, _HAND)
#: A central inertia tensor: opalg recovers I_com = I_O + m S(c)², cancelling the parallel-axis
#: term (m|c|² ≫ |I_com| for a small body off the origin), and the hand route is R D Rᵀ.  Measured.
TOL_ICOM = measured(2e-13, 1.5e-14, _HAND)
_RT = "300 random URDFs and random_model trees (n 2-30, q in [-3, 3]) under 3 BLAS/SIMD kernels"
#: from_urdf(to_urdf(m)) vs m: the frames are re-derived from printed rpy, so ℳ and τ are
#: re-rounded.  Measured.
TOL_RT_CRBA = measured(2e-13, 8.8e-15, _RT)
TOL_RT_RNEA = measured(1e-12, 4.2e-14, _RT)
#: k of the round trip's ℳ⁻¹ tolerance k·cond(ℳ)·ε (worst seen over _RT: 1.2 cond(ℳ) ε).
K_MINV = 100


def _rx(a):
    c, s = np.cos(a), np.sin(a)
    return np.array([[1, 0, 0], [0, c, -s], [0, s, c]])


def _ry(a):
    c, s = np.cos(a), np.sin(a)
    return np.array([[c, 0, s], [0, 1, 0], [-s, 0, c]])


def _rz(a):
    c, s = np.cos(a), np.sin(a)
    return np.array([[c, -s, 0], [s, c, 0], [0, 0, 1]])


def _parallel_axis(I_com, m, r):
    """Inertia about a point at -r from the mass centre (r = com - point)."""
    r = np.asarray(r, float)
    return I_com + m * (r @ r * np.eye(3) - np.outer(r, r))


def _inertial(m, xyz="0 0 0", rpy="0 0 0", ixx=1.0, iyy=1.0, izz=1.0, ixy=0.0, ixz=0.0, iyz=0.0):
    return (f'<inertial><origin xyz="{xyz}" rpy="{rpy}"/><mass value="{m}"/>'
            f'<inertia ixx="{ixx}" iyy="{iyy}" izz="{izz}" ixy="{ixy}" ixz="{ixz}" iyz="{iyz}"/></inertial>')


def _robot(*items, name="t"):
    return f'<robot name="{name}">' + "".join(items) + "</robot>"


def _link(name, inertial=""):
    return f'<link name="{name}">{inertial}</link>'


def _joint(name, kind, parent, child, xyz="0 0 0", rpy="0 0 0", axis="0 0 1"):
    lim = '<limit lower="-3" upper="3" effort="1" velocity="1"/>' if kind in ("revolute", "prismatic") else ""
    ax = f'<axis xyz="{axis}"/>' if axis is not None else ""
    return (f'<joint name="{name}" type="{kind}"><parent link="{parent}"/><child link="{child}"/>'
            f'<origin xyz="{xyz}" rpy="{rpy}"/>{ax}{lim}</joint>')


# ---------------------------------------------------------------------------
# fixed-joint merging and inertial frames
# ---------------------------------------------------------------------------
WELD_URDF = _robot(
    _link("base"),
    _link("A", _inertial(2.0, xyz="0.1 0.2 -0.3", ixx=0.3, iyy=0.4, izz=0.5, ixy=0.01)),
    _link("B", _inertial(1.0, xyz="0.05 0 0.1", ixx=0.2, iyy=0.25, izz=0.3)),
    _link("C", _inertial(0.5, xyz="0 0 0.2", ixx=0.01, iyy=0.01, izz=0.01)),
    _joint("j1", "revolute", "base", "A", axis="0 0 1"),
    _joint("weld", "fixed", "A", "B", xyz="0.5 0 0", rpy=f"0 0 {np.pi / 2!r}", axis=None),
    _joint("j2", "revolute", "B", "C", xyz="0 0.3 0", rpy="0 0 0", axis="1 0 0"),
)


def test_fixed_joint_merges_child_inertia():
    """A fixed child's mass, mass centre and inertia are merged into the parent body (hand computation)."""
    m = opalg.from_urdf(WELD_URDF)
    assert m.n == 2 and m.joint_names == ("j1", "j2")
    mA, cA = 2.0, np.array([0.1, 0.2, -0.3])
    IA = np.array([[0.3, 0.01, 0], [0.01, 0.4, 0], [0, 0, 0.5]])
    mB = 1.0
    # weld: rotation of +90 deg about z, so B's (x, y) are A's (y, -x): a point (0.05, 0, 0.1)
    # of B sits at (0, 0.05, 0.1) + (0.5, 0, 0) in A, and B's ixx/iyy swap in A's axes.
    cB = np.array([0.5, 0.05, 0.1])
    IB = np.diag([0.25, 0.2, 0.3])
    mass = mA + mB
    com = (mA * cA + mB * cB) / mass
    I_com = _parallel_axis(IA, mA, cA - com) + _parallel_axis(IB, mB, cB - com)
    inr = m.inertias[0]
    assert_close(inr.mass, 3.0, TOL_HAND, "merged mass")
    assert_close(inr.com, [0.7 / 3, 0.15, -0.5 / 3], TOL_HAND, "merged com", scale=1.0)
    assert_close(inr.com, com, TOL_HAND, "merged com (hand)", scale=1.0)
    assert_close(inr.I_com, I_com, TOL_ICOM, "merged I_com")
    # ℳ of the first joint alone (about z through the origin): I_zz about the origin,
    # with the second joint's body C included as a rigid part at q = 0.
    body, R, p = m.link_frames["B"]
    assert body == 0
    assert_close(R, [[0, -1, 0], [1, 0, 0], [0, 0, 1]], TOL_HAND, "weld R", scale=1.0)   # cos(π/2) ≠ 0
    assert_close(p, [0.5, 0, 0], TOL_HAND, "weld p", scale=1.0)
    # C hangs from j2 whose origin (0, 0.3, 0) is in B: in A it is R (0, 0.3, 0) + (0.5, 0, 0).
    Rj, rj = m.placements[1]
    assert_close(Rj, R, TOL_HAND, "j2 R", scale=1.0)
    assert_close(rj, [0.2, 0, 0], TOL_HAND, "j2 origin", scale=1.0)
    cC = rj + Rj @ np.array([0, 0, 0.2])  # C's mass centre in A at q = 0
    Izz = (_parallel_axis(IA, mA, cA)[2, 2] + _parallel_axis(IB, mB, cB)[2, 2]
           + _parallel_axis(np.eye(3) * 0.01, 0.5, cC)[2, 2])
    assert_close(opalg.crba(m, [0.0, 0.0])[0, 0], Izz, TOL_HAND, "ℳ(0, 0)")


def test_inertial_rpy_rotates_inertia_tensor():
    """<inertial><origin rpy> rotates the central inertia tensor: I = R diag Rᵀ, R = Rz Ry Rx."""
    r, p, y = 0.3, -0.7, 1.1
    D = np.diag([0.1, 0.2, 0.25])
    xml = _robot(_link("base"),
                 _link("A", _inertial(1.5, xyz="0.1 -0.2 0.3", rpy=f"{r} {p} {y}",
                                      ixx=0.1, iyy=0.2, izz=0.25)),
                 _joint("j", "revolute", "base", "A", axis="0 0 1"))
    m = opalg.from_urdf(xml)
    R = _rz(y) @ _ry(p) @ _rx(r)
    assert_close(m.inertias[0].I_com, R @ D @ R.T, TOL_ICOM, "rotated I_com")
    assert_close(m.inertias[0].com, [0.1, -0.2, 0.3], TOL_HAND, "com", scale=1.0)
    # Quarter turns are checkable without matrices: roll 90° maps body y onto link z,
    # so the moment about z is iyy = 0.2 (plus m (x² + y²) of the mass centre).
    xml90 = _robot(_link("base"),
                   _link("A", _inertial(1.5, xyz="0.1 -0.2 0.3", rpy=f"{np.pi / 2!r} 0 0",
                                        ixx=0.1, iyy=0.2, izz=0.25)),
                   _joint("j", "revolute", "base", "A", axis="0 0 1"))
    m90 = opalg.from_urdf(xml90)
    assert_close(opalg.crba(m90, [0.4])[0, 0], 0.2 + 1.5 * (0.01 + 0.04), TOL_HAND, "ℳ (roll 90°)")
    assert_close(np.diag(m90.inertias[0].I_com), [0.1, 0.25, 0.2], TOL_ICOM, "I_com diagonal (roll 90°)")


def test_prismatic_and_axis_normalization():
    """A prismatic joint moves the total welded mass; a non-unit axis is normalized."""
    xml = _robot(_link("base"), _link("A", _inertial(2.0)), _link("B", _inertial(0.5, xyz="1 2 3")),
                 _joint("slide", "prismatic", "base", "A", axis="0 3 4"),
                 _joint("w", "fixed", "A", "B", xyz="0.1 0.2 0.3", rpy="0.4 0.5 0.6", axis=None))
    m = opalg.from_urdf(xml)
    # exact: (0, 3, 4)/4 = (0, 0.75, 1) has norm √1.5625 = 1.25, and 0.75/1.25, 1/1.25 round as 0.6, 0.8 do
    np.testing.assert_array_equal(m.joints[0].axes[0], [0, 0.6, 0.8])
    assert_close(opalg.crba(m, [0.7])[0, 0], 2.5, TOL_HAND, "ℳ (prismatic)")
    # gravity (0, 0, -9.81) along the unit axis (0, 0.6, 0.8): T = m g 0.8
    assert_close(opalg.rnea(m, [0.0], [0.0], [0.0])[0], 2.5 * 9.81 * 0.8, TOL_HAND, "τ (prismatic)")


def test_continuous_and_revolute_have_same_dynamics():
    """Swapping continuous <-> revolute changes nothing in crba, rnea or aba."""
    xml = random_urdf(10, "tree", seed=5)
    assert 'type="continuous"' in xml and 'type="revolute"' in xml
    swapped = xml.replace('type="continuous"', 'type="TMP"').replace('type="revolute"', 'type="continuous"') \
                 .replace('type="TMP"', 'type="revolute"')
    a, b = opalg.from_urdf(xml), opalg.from_urdf(swapped)
    assert a.joint_names == b.joint_names
    assert [j.kinds for j in a.joints] == [j.kinds for j in b.joints]
    rng = np.random.default_rng(0)
    q, qd, qdd = rng.normal(size=(3, a.ndof))
    # exact: the same joint kinds and frames, so the same operations
    np.testing.assert_array_equal(opalg.crba(a, q), opalg.crba(b, q))
    np.testing.assert_array_equal(opalg.rnea(a, q, qd, qdd), opalg.rnea(b, q, qd, qdd))
    np.testing.assert_array_equal(opalg.aba(a, q, qd, qdd), opalg.aba(b, q, qd, qdd))


BRANCHED_PRISMATIC = _robot(
    # Prismatic joints along z moving distinct masses: ℳ(i,i) = mass of joint i's subtree.
    _link("base"), _link("A", _inertial(1.0)), _link("B", _inertial(10.0)),
    _link("A2", _inertial(100.0)), _link("B2", _inertial(1000.0)),
    _joint("j_a", "prismatic", "base", "A", axis="0 0 1"),
    _joint("j_b", "prismatic", "base", "B", axis="0 0 1"),
    _joint("j_b2", "prismatic", "B", "B2", axis="0 0 1"),
    _joint("j_a2", "prismatic", "A", "A2", axis="0 0 1"),
)


def test_joint_names_in_q_order():
    """joint_names[i] is the joint of q[i]: ℳ's diagonal is each named joint's subtree mass."""
    m = opalg.from_urdf(BRANCHED_PRISMATIC)
    assert sorted(m.joint_names) == ["j_a", "j_a2", "j_b", "j_b2"]
    subtree_mass = {"j_a": 101.0, "j_a2": 100.0, "j_b": 1010.0, "j_b2": 1000.0}
    diag = np.diag(opalg.crba(m, np.zeros(4)))
    # exact: integer masses, identity frames, z axes: every operation is on small integers and zeros
    np.testing.assert_array_equal(diag, [subtree_mass[nm] for nm in m.joint_names])
    idx = m.joint_dofs(["j_b2", "j_a"])
    np.testing.assert_array_equal(diag[idx], [1000.0, 101.0])
    for k, p in enumerate(m.parents):
        assert p < k  # parents before children
    assert [m.joints[k].name for k in range(m.n)] == list(m.joint_names)


def test_q_order_is_depth_first_document_order():
    """from_urdf's q order is depth-first in document order, as its docstring says (and Pinocchio does)."""
    m = opalg.from_urdf(BRANCHED_PRISMATIC)
    assert m.joint_names == ("j_a", "j_a2", "j_b", "j_b2")


def test_path_and_string_give_same_model(tmp_path):
    """A URDF file path and the same XML text give identical models."""
    f = tmp_path / "weld.urdf"
    f.write_text(WELD_URDF, encoding="utf-8")
    a, b = opalg.from_urdf(str(f)), opalg.from_urdf(WELD_URDF)
    c = opalg.from_urdf(f)  # pathlib.Path
    q = [0.3, -0.4]
    for other in (b, c):
        np.testing.assert_array_equal(opalg.crba(a, q), opalg.crba(other, q))
    assert a.robot_name == "t"


@pytest.mark.parametrize("topo,n,seed", [("chain", 8, 1), ("tree", 15, 2), ("tree", 30, 3)])
def test_round_trip_preserves_dynamics(topo, n, seed):
    """from_urdf(to_urdf(model)) has the same ℳ and RNEA up to the q reordering joint_dofs gives."""
    m = opalg.from_urdf(random_urdf(n, topo, seed=seed))
    rng = np.random.default_rng(seed)
    q, qd, qdd = rng.uniform(-3, 3, size=(3, m.ndof))
    for continuous in (False, True):
        m2 = opalg.from_urdf(to_urdf(m, continuous=continuous))
        assert sorted(m2.joint_names) == sorted(m.joint_names)
        i = m.joint_dofs(m2.joint_names)
        assert_close(opalg.crba(m2, q[i]), opalg.crba(m, q)[np.ix_(i, i)], TOL_RT_CRBA, "ℳ round trip")
        assert_close(opalg.rnea(m2, q[i], qd[i], qdd[i]), opalg.rnea(m, q, qd, qdd)[i], TOL_RT_RNEA,
                     "τ round trip")


def test_round_trip_random_model_is_reordered():
    """A random_model tree round-trips; its q order changes (depth-first) and joint_dofs maps it."""
    m = opalg.random_model(12, "tree", seed=4, joints="single")
    m2 = opalg.from_urdf(to_urdf(m))
    i = m.joint_dofs(m2.joint_names)
    assert sorted(i) == list(range(m.ndof))
    q = np.random.default_rng(1).normal(size=m.ndof)
    Mq = opalg.crba(m, q)
    assert_close(opalg.crba(m2, q[i]), Mq[np.ix_(i, i)], TOL_RT_CRBA, "ℳ round trip")
    assert_close(opalg.minv(m2, q[i]), opalg.minv(m, q)[np.ix_(i, i)], cond_tol(np.linalg.cond(Mq), K_MINV),
                 "ℳ⁻¹ round trip")


# ---------------------------------------------------------------------------
# bad input
# ---------------------------------------------------------------------------
def _one_joint(kind="revolute", axis="0 0 1", xyz="0 0 0", parent="base", child="A"):
    return _robot(_link("base"), _link("A", _inertial(1.0)),
                  _joint("j1", kind, parent, child, xyz=xyz, axis=axis))


def test_urdf_error_is_value_error():
    """URDFError is a ModelError and hence a ValueError."""
    assert issubclass(opalg.URDFError, opalg.ModelError)
    assert issubclass(opalg.URDFError, ValueError)


BAD = {
    "malformed XML": ('<robot name="x"><link name="a"></robot>', r"malformed URDF XML"),
    "root not robot": ('<sdf><link name="a"/></sdf>', r"root element is <sdf>, expected <robot>"),
    "missing parent": (_one_joint(parent="nope"), r"joint 'j1': parent link 'nope' does not exist"),
    "missing child": (_one_joint(child="ghost"), r"joint 'j1': child link 'ghost' does not exist"),
    "two roots": (_robot(_link("base"), _link("A", _inertial(1.0)), _link("stray", _inertial(1.0)),
                         _joint("j1", "revolute", "base", "A")), r"2 root links \['base', 'stray'\]"),
    "cycle, no root": (_robot(_link("A", _inertial(1.0)), _link("B", _inertial(1.0)),
                              _joint("j1", "revolute", "A", "B"), _joint("j2", "revolute", "B", "A")),
                       r"cycle"),
    "cycle beside a root": (_robot(_link("base"), _link("A", _inertial(1.0)), _link("B", _inertial(1.0)),
                                   _link("C", _inertial(1.0)), _joint("j0", "revolute", "base", "C"),
                                   _joint("j1", "revolute", "A", "B"), _joint("j2", "revolute", "B", "A")),
                            r"cycle through links 'A' -> 'B' -> 'A'"),
    "child of two joints": (_robot(_link("base"), _link("A", _inertial(1.0)), _link("B", _inertial(1.0)),
                                   _joint("j1", "revolute", "base", "A"), _joint("j2", "revolute", "base", "B"),
                                   _joint("j3", "revolute", "A", "B")),
                            r"link 'B' is the child of two joints \('j2' and 'j3'\)"),
    "floating": (_one_joint("floating", axis=None), r"joint 'j1': unsupported joint type 'floating'"),
    "planar": (_one_joint("planar"), r"joint 'j1': unsupported joint type 'planar'"),
    "unknown type": (_one_joint("ball"), r"joint 'j1': unknown joint type 'ball'"),
    "zero axis": (_one_joint(axis="0 0 0"), r"joint 'j1': axis has zero length"),
    "bad number in xyz": (_one_joint(xyz="0.1 zero 0"), r"joint 'j1' <origin xyz>: cannot read numbers"),
    "two numbers in xyz": (_one_joint(xyz="0.1 0.2"), r"joint 'j1' <origin xyz>: expected 3 finite numbers"),
    "nan in xyz": (_one_joint(xyz="0.1 nan 0"), r"joint 'j1' <origin xyz>: expected 3 finite numbers"),
    "bad axis": (_one_joint(axis="1 0"), r"joint 'j1' <axis xyz>: expected 3 finite numbers"),
    "negative mass": (_robot(_link("base"), _link("A", _inertial(-1.0)), _joint("j1", "revolute", "base", "A")),
                      r"link 'A': negative mass"),
    "duplicate link": (_robot(_link("base"), _link("A", _inertial(1.0)), _link("A"),
                              _joint("j1", "revolute", "base", "A")), r"link 'A' is defined twice"),
    "no movable joint": (_robot(_link("base"), _link("A", _inertial(1.0)),
                                _joint("w", "fixed", "base", "A", axis=None)), r"no movable joints"),
}


@pytest.mark.parametrize("case", list(BAD))
def test_bad_urdf_raises_clear_error(case):
    """Each malformed or unsupported URDF raises URDFError naming the element at fault."""
    xml, match = BAD[case]
    with pytest.raises(opalg.URDFError, match=match):
        opalg.from_urdf(xml)


def test_massless_leaf_on_movable_joint():
    """A movable joint whose child (a leaf) has no <inertial> is a ModelError: it moves no mass."""
    xml = _robot(_link("base"), _link("A", _inertial(1.0)), _link("tip"),
                 _joint("j1", "revolute", "base", "A"), _joint("j_tip", "revolute", "A", "tip", axis="1 0 0"))
    with pytest.raises(opalg.ModelError, match=r"joint 'j_tip' moves no mass"):
        opalg.from_urdf(xml)
    # The same massless link is fine as an intermediate link carrying a massive child.
    ok = _robot(_link("base"), _link("mid"), _link("A", _inertial(1.0)),
                _joint("j1", "revolute", "base", "mid"), _joint("j2", "revolute", "mid", "A", axis="1 0 0"))
    assert opalg.from_urdf(ok).ndof == 2


def test_entity_expansion_rejected():
    """A billion-laughs entity bomb is rejected quickly with URDFError, never expanded."""
    ents = ['<!ENTITY lol "lol">'] + [
        f'<!ENTITY lol{i} "{("&lol" + (str(i - 1) if i > 1 else "") + ";") * 10}">' for i in range(1, 10)]
    bomb = ('<?xml version="1.0"?><!DOCTYPE robot [' + "".join(ents) + ']>'
            '<robot name="&lol9;"><link name="base"/></robot>')
    t0 = time.perf_counter()
    with pytest.raises(opalg.URDFError, match=r"URDF rejected"):
        opalg.from_urdf(bomb)
    assert time.perf_counter() - t0 < 1.0
    # An external entity is rejected too.
    ext = ('<?xml version="1.0"?><!DOCTYPE robot [<!ENTITY x SYSTEM "file:///etc/passwd">]>'
           '<robot name="&x;"><link name="base"/></robot>')
    with pytest.raises(opalg.URDFError, match=r"URDF rejected"):
        opalg.from_urdf(ext)


def test_file_not_found(tmp_path):
    """A path to a missing file raises URDFError naming the path."""
    missing = tmp_path / "no_such_robot.urdf"
    with pytest.raises(opalg.URDFError, match=r"URDF file not found: .*no_such_robot\.urdf"):
        opalg.from_urdf(str(missing))


def test_locked_joint_errors():
    """locked= names must be existing movable joints."""
    with pytest.raises(opalg.URDFError, match=r"locked joint 'nope' does not exist"):
        opalg.from_urdf(BRANCHED_PRISMATIC, locked=["nope"])
