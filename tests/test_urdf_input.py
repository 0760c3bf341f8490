"""URDF edge cases: escaping on export, white space, byte-order marks and encodings on import,
missing values, huge axes; the URDF data declared on Model; structure of large chains."""

from __future__ import annotations

import numpy as np
import pytest

import opalg
from opalg import Joint, Model, ModelError, URDFError
from opalg.model.urdf import to_urdf

from helpers import assert_close, measured

E3, Z3 = np.eye(3), np.zeros(3)
BOX = (1.0, np.array([0.1, 0.0, 0.0]), np.diag([0.2, 0.3, 0.4]))
INERTIAL = ('<inertial><mass value="1"/><origin xyz="0 0 -0.5"/>'
            '<inertia ixx="0.1" iyy="0.1" izz="0.01" ixy="0" ixz="0" iyz="0"/></inertial>')


def pendulum(link="arm", axis="1 0 0", inertial=INERTIAL, decl=""):
    return (f'{decl}<robot name="pendulum"><link name="base"/><link name="{link}">{inertial}</link>'
            f'<joint name="hinge" type="revolute"><parent link="base"/><child link="{link}"/>'
            f'<axis xyz="{axis}"/></joint></robot>')


M00 = 0.35  # ℳ of the pendulum: 0.1 + 1 * 0.5²
#: crba of a pendulum vs ixx + m z² by hand.  Measured.
TOL_M00 = measured(1e-14, 5.3e-16, "300 random pendulums (m, ixx, com z, q) under 3 BLAS/SIMD kernels")
#: crba after to_urdf/from_urdf of a chain of z hinges (frames re-derived from printed numbers).  Measured.
TOL_RT = measured(1e-14, 7.1e-16, "300 random such chains (n 2-9, random masses, com, boxes, offsets) "
                  "under 3 BLAS/SIMD kernels")


def m00(model):
    return float(opalg.crba(model, [0.3])[0, 0])


# --------------------------------------------------------------------------- export escaping
NASTY = ['a&b', 'say "hi"', '<tag>', "it's", 'x" type="fixed', "amp;&amp;", "tab\tnew\nline"]


def test_names_round_trip_through_to_urdf():
    """Body, joint and robot names with & " < > ' (and an attribute injection) survive to_urdf/from_urdf."""
    n = len(NASTY)
    joints = [Joint("R", [0, 0, 1.0], name="J" + nm) for nm in NASTY]
    m = Model(list(range(-1, n - 1)), joints, [(E3, np.array([0.3, 0, 0]))] * n, [BOX] * n,
              names=["L" + nm for nm in NASTY], robot_name='r&"<>\'')
    m2 = opalg.from_urdf(to_urdf(m))
    assert m2.names == m.names
    assert m2.joint_names == m.joint_names
    assert m2.robot_name == m.robot_name
    assert [j.kinds for j in m2.joints] == [("R",)] * n      # no injected type="fixed"
    q = np.linspace(-1, 1, n)
    assert_close(opalg.crba(m2, q), opalg.crba(m, q), TOL_RT, "ℳ round trip")


def test_to_urdf_base_link_name_does_not_clash():
    """A body called 'base' does not collide with the inertial-frame link."""
    m = Model([-1, 0], [Joint("R", [0, 0, 1.0])] * 2, [(E3, Z3)] * 2, [BOX] * 2, names=["base", "tip"])
    m2 = opalg.from_urdf(to_urdf(m))
    assert m2.names == ("base", "tip") and m2.link_frames["base_"][0] == -1


# --------------------------------------------------------------------------- import: text
@pytest.mark.parametrize("lead", ["\n", "  \n\t", "\ufeff", "\ufeff\n  "], ids=["newline", "blanks", "bom", "bom+ws"])
def test_leading_whitespace_and_bom_in_a_string(lead):
    """White space or a byte-order mark before <?xml?> (or <robot>) is skipped, never read as a path."""
    for decl in ('<?xml version="1.0" encoding="utf-8"?>\n', ""):
        assert_close(m00(opalg.from_urdf(lead + pendulum(decl=decl))), M00, TOL_M00, "ℳ of the pendulum")


def test_mass_without_value():
    """<mass/> without value is a URDFError naming the link (it used to be an IndexError)."""
    with pytest.raises(URDFError, match=r"link 'arm' <inertial> <mass>: missing value attribute"):
        opalg.from_urdf(pendulum(inertial="<inertial><mass/></inertial>"))


@pytest.mark.parametrize("axis", ["1e200 0 0", "1e308 1e308 0", "-3e300 0 0", "1e-11 0 0"])
def test_huge_or_tiny_axis_is_normalized(axis):
    """An axis of 1e200 is normalized by scaling first (its norm used to overflow to 'zero length')."""
    m = opalg.from_urdf(pendulum(axis=axis))
    a = np.array([float(t) for t in axis.split()])
    # exact: a/max|a| is ±1 and 0, its norm √count, and both sides divide by that same rounded root
    np.testing.assert_array_equal(m.joints[0].axes[0], np.sign(a) / np.sqrt(np.count_nonzero(a)))


@pytest.mark.parametrize("axis", ["0 0 0", "1e-13 0 0", "1e-200 0 1e-200"])
def test_zero_axis_still_refused(axis):
    """Guard: a zero (or below 1e-12) axis is still refused, the scaling does not hide it."""
    with pytest.raises(URDFError, match=r"joint 'hinge': axis has zero length \(norm < 1e-12\)"):
        opalg.from_urdf(pendulum(axis=axis))


# --------------------------------------------------------------------------- import: files
def test_iso_8859_1_file_with_declaration(tmp_path):
    """A Latin-1 file whose XML declaration says so is decoded as declared."""
    f = tmp_path / "latin.urdf"
    f.write_bytes(pendulum(link="bras_é", decl='<?xml version="1.0" encoding="ISO-8859-1"?>\n').encode("latin-1"))
    m = opalg.from_urdf(f)
    assert m.names == ("bras_é",)
    assert_close(m00(m), M00, TOL_M00, "ℳ of the pendulum")
    assert opalg.from_urdf(f.read_bytes()).names == ("bras_é",)      # bytes are decoded the same way


def test_latin_1_file_without_declaration(tmp_path):
    """Non-UTF-8 bytes without a declaration are a URDFError naming the file, byte and offset."""
    f = tmp_path / "latin.urdf"
    text = pendulum(link="bras_é")
    f.write_bytes(text.encode("latin-1"))
    with pytest.raises(URDFError, match=rf"URDF file '.*latin.urdf': byte 0xe9 at offset {text.index('é')} "
                                        r"is not valid utf-8 \(UTF-8, and no XML declaration"):
        opalg.from_urdf(f)


def test_unknown_declared_encoding(tmp_path):
    f = tmp_path / "odd.urdf"
    f.write_bytes(pendulum(decl='<?xml version="1.0" encoding="klingon-8"?>').encode())
    with pytest.raises(URDFError, match=r"names an unknown encoding 'klingon-8'"):
        opalg.from_urdf(f)


@pytest.mark.parametrize("encoding", ["utf-8-sig", "utf-16"])
def test_file_with_bom_and_leading_newline(tmp_path, encoding):
    """A file with a byte-order mark (UTF-8 or UTF-16) and a newline before <?xml?> is read."""
    f = tmp_path / "bom.urdf"
    f.write_bytes(("\n" + pendulum(link="arm_ü", decl='<?xml version="1.0"?>')).encode(encoding))
    m = opalg.from_urdf(f)
    assert m.names == ("arm_ü",)
    assert_close(m00(m), M00, TOL_M00, "ℳ of the pendulum")


# --------------------------------------------------------------------------- data on Model
def test_urdf_data_is_declared_on_model():
    """link_frames and robot_name are constructor arguments with defaults, carried by relabeled."""
    m = Model([-1, 0], [Joint("R", [0, 0, 1.0])] * 2, [(E3, Z3)] * 2, [BOX] * 2)
    assert m.link_frames == {} and m.robot_name == ""
    xml = ('<robot name="two"><link name="b"/>'
           + "".join(f'<link name="l{i}">{INERTIAL}</link>' for i in range(3))
           + '<joint name="j0" type="revolute"><parent link="b"/><child link="l0"/><axis xyz="0 0 1"/></joint>'
           + '<joint name="j1" type="revolute"><parent link="l0"/><child link="l1"/><axis xyz="0 1 0"/></joint>'
           + '<joint name="w" type="fixed"><parent link="l1"/><child link="l2"/><origin xyz="0 0 1"/></joint>'
           + "</robot>")
    u = opalg.from_urdf(xml)
    assert u.robot_name == "two" and u.link_frames["l2"][0] == 1
    r = u.relabeled([1, 0])
    assert r.robot_name == "two"
    assert {nm: fr[0] for nm, fr in r.link_frames.items()} == {"b": -1, "l0": 1, "l1": 0, "l2": 0}
    np.testing.assert_array_equal(r.link_frames["l2"][2], [0, 0, 1])


@pytest.mark.parametrize("frames", [{"x": (5, E3, Z3)}, {"x": "body0"}, {"x": (0.5, E3, Z3)}])
def test_bad_link_frames(frames):
    with pytest.raises(ModelError, match=r"link frame 'x': expected \(body in -1\.\.1, R, p\)"):
        Model([-1, 0], [Joint("R", [0, 0, 1.0])] * 2, [(E3, Z3)] * 2, [BOX] * 2, link_frames=frames)


# --------------------------------------------------------------------------- large models
def chain_urdf(n: int) -> str:
    """n links in a chain, a fixed joint every 7th link (so bodies != links)."""
    lines = ['<robot name="chain">'] + [f'<link name="L{k}">{INERTIAL}</link>' for k in range(n)]
    for k in range(1, n):
        kind = "fixed" if k % 7 == 0 else "revolute"
        lines.append(f'<joint name="J{k}" type="{kind}"><parent link="L{k - 1}"/><child link="L{k}"/>'
                     f'<origin xyz="0.1 0 0"/><axis xyz="0 0 1"/></joint>')
    return "\n".join(lines + ["</robot>"])


def reference_structure(parents):
    """Brute force: children by scanning, order by walking up to the root."""
    n = len(parents)
    children = tuple(tuple(c for c in range(n) if parents[c] == k) for k in range(n))

    def depth(k):
        d = 0
        while parents[k] != -1:
            k, d = parents[k], d + 1
        return d

    return children, tuple(sorted(range(n), key=lambda k: (depth(k), k)))


def test_long_chain_structure():
    """A 5,000-body chain: children, order and dof slices are those of a chain."""
    n = 5000
    m = Model(list(range(-1, n - 1)), [Joint("R", [0, 0, 1.0])] * n, [(E3, Z3)] * n, [BOX] * n)
    assert m.order == tuple(range(n))
    assert m.children == tuple((k + 1,) for k in range(n - 1)) + ((),)
    assert m.dof_slice[-1] == slice(n - 1, n)


@pytest.mark.parametrize("seed", range(4))
def test_random_tree_structure_matches_brute_force(seed):
    """Relabeled random forests: children and order equal the brute-force reference."""
    m = opalg.random_model(300, "tree", seed=seed, joints="single", n_roots=1 + seed)
    perm = np.random.default_rng(seed).permutation(m.n)
    r = m.relabeled(perm)
    assert (r.children, r.order) == reference_structure(r.parents)
    assert (m.children, m.order) == reference_structure(m.parents)


def test_long_urdf_chain():
    """from_urdf of a 3,000-link chain with fixed joints: bodies, parents and welded frames."""
    n = 3000
    m = opalg.from_urdf(chain_urdf(n))
    movable = [k for k in range(1, n) if k % 7]
    assert m.n == len(movable) and m.names == tuple(f"L{k}" for k in movable)
    assert m.parents == tuple(range(-1, m.n - 1))
    assert m.link_frames["L7"][0] == m.names.index("L6")
    np.testing.assert_allclose(m.link_frames["L7"][2], [0.1, 0, 0])
