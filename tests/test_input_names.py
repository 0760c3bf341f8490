"""Nothing a user names is ever run, and URDF round trips hold (issue 36, items 2 and 3).

Code is planted in every name a user chooses — sympy symbol and function names, body and joint
names, URDF link, joint and robot names, a flexible body's and a loop closure's name, the ider
preset and direction text, a state's entries — as two payloads: one sets a flag on ``builtins``
(helpers.EVIL, watched by the autouse fixture ``no_string_evaluated``), one creates a file.  Each
test asserts that neither happened, whether the name was accepted (a name is only a label) or
refused before any code generation.

``from_urdf(to_urdf(m))`` is checked on random models whose body and joint names are drawn by
hypothesis from hostile text (quotes, markup, entities, white space, control characters,
non-ASCII): either the same model comes back (names, and ℳ in the re-imported dof order), or
to_urdf refuses with a ModelError naming the name at fault.
"""

from __future__ import annotations

import re

import numpy as np
import pytest
import sympy as sp
from hypothesis import given, settings
from hypothesis import strategies as st

import opalg
from opalg import ModelError, StateError
from opalg.model.urdf import to_urdf
from opalg.ider import panel
from opalg.symbolic import Body, Hinge, TreeSystem, t

from helpers import EVIL, no_string_evaluated  # noqa: F401  (autouse: fails if EVIL ran)


@pytest.fixture
def touch(tmp_path):
    """A payload that creates a file, and a check that it was not created."""
    target = tmp_path / "planted"
    payload = f"__import__('pathlib').Path({str(target)!r}).touch()"
    yield payload
    assert not target.exists(), "planted code ran: it created a file"


def payloads(touch_payload):
    return [EVIL, touch_payload, f"x);{touch_payload};(", f"a\n{touch_payload}"]


def pendulum(gravity_y):
    return TreeSystem([0], [Hinge(1)], [Body(1, (1, 0, 0))], gravity=(0, gravity_y, 0))


# --------------------------------------------------------------------------- sympy names
def test_symbol_names_never_run(touch):
    """A symbol named with code: unset, lambdify refuses it; substituted, it never reaches lambdify."""
    for code in payloads(touch):
        g = sp.Symbol(code)
        with pytest.raises(ModelError, match="unset symbolic parameters"):
            pendulum(g).lambdify()
        M, bias = pendulum(g).lambdify(subs={g: -9.81})
        # mass 1 at 1 m on a z hinge, I_zz = 1 about the mass centre: ℳ = 1 + 1·1² = 2; the
        # potential −m g·r_C = 9.81 sin q gives the bias ∂U/∂q = 9.81 cos q (gravity along −y)
        assert float(M([0.2])[0, 0]) == pytest.approx(2.0, abs=1e-14)
        assert float(bias([0.2], [0.0])[0]) == pytest.approx(9.81 * np.cos(0.2), abs=1e-12)


def test_function_names_never_run(touch):
    """An undefined function named with code, or a Function subclass of any name, is refused
    before lambdify (TreeSystem.lambdify and symbolic.simulate's loads)."""
    for code in payloads(touch):
        f = sp.Function(code)(t)
        with pytest.raises(ModelError, match="undefined functions"):
            pendulum(f).lambdify()
        with pytest.raises(ModelError, match="undefined functions"):
            opalg.symbolic.simulate(pendulum(-9.81), [0.1], [0.0], (0.0, 0.01), tau=sp.Matrix([f]))
        own = type(code, (sp.Function,), {})(t)            # a subclass: not AppliedUndef
        with pytest.raises(ModelError, match="not one of sympy's"):
            pendulum(own).lambdify()


def test_strings_as_values_never_run(touch):
    """A string where a number or expression belongs is refused unparsed (mass, gravity, subs, q)."""
    for code in payloads(touch):
        with pytest.raises(ModelError, match="strings are never evaluated"):
            TreeSystem([0], [Hinge(1)], [Body(code)])
        with pytest.raises(ModelError):
            pendulum(code)
        with pytest.raises(StateError, match="subs key"):
            pendulum(-9.81).lambdify(subs={code: 1.0})
        with pytest.raises(StateError):
            opalg.rnea(opalg.random_model(2, seed=0), [code, 0.0], [0.0, 0.0], [0.0, 0.0])
        with pytest.raises(StateError):
            panel.parse_directions(code)
        with pytest.raises(StateError, match="unknown preset"):
            opalg.ider.directions(code, opalg.ider.THETA0)


# --------------------------------------------------------------------------- model and URDF names
def named_model(body_names, joint_names, seed=0):
    """A random single-axis model (revolute and prismatic) with the given names."""
    m = opalg.random_model(len(body_names), "tree", seed=seed, joints="single")
    joints = [opalg.Joint(j.kinds, j.axes, name=nm) for j, nm in zip(m.joints, joint_names)]
    return opalg.Model(m.parents, joints, m.placements, m.inertias, m.gravity, names=list(body_names))


def test_model_and_urdf_names_never_run(touch):
    """Body, joint and robot names holding code: the model computes, round-trips through URDF
    (names kept exactly), and nothing runs; so for a flexible body's and a loop closure's name."""
    for code in payloads(touch):
        m = named_model([code, "b", "c"], ["j", code, "k"])
        q = np.linspace(-1, 1, m.ndof)
        M = opalg.crba(m, q)
        back = opalg.from_urdf(to_urdf(m, name=code))
        assert back.robot_name == code and sorted(back.names) == sorted(m.names)
        i = m.joint_dofs(back.joint_names)
        np.testing.assert_allclose(opalg.crba(back, q[i]), M[np.ix_(i, i)], rtol=0, atol=1e-13 * abs(M).max())
        fb = opalg.flex.FlexBody((1.0, np.zeros(3), np.eye(3)), [[1.0, 0, 0]], [(0.2, np.zeros(3), 0.01 * np.eye(3))],
                                 name=code)
        assert fb.name == code
        lc = opalg.closed.LoopClosure((0, np.zeros(3)), (1, np.zeros(3)), name=code)
        assert lc.name == code


def test_to_urdf_refuses_names_xml_cannot_hold():
    """Control characters and lone surrogates cannot be written to XML 1.0: to_urdf refuses them,
    naming the body and the name (from_urdf would refuse the file)."""
    for bad in ["a\x01b", "x\x7f", "s\ud800", "\x00"]:
        with pytest.raises(ModelError, match=r"body \d: body name " + re.escape(repr(bad))):
            to_urdf(named_model([bad, "b"], ["j0", "j1"]))
        with pytest.raises(ModelError, match=r"joint name " + re.escape(repr(bad))):
            to_urdf(named_model(["a", "b"], ["j0", bad]))
    with pytest.raises(ModelError, match="to_urdf: name"):
        to_urdf(named_model(["a", "b"], ["j0", "j1"]), name="r\x02")


def test_to_urdf_refuses_generated_names_that_collide():
    """A multi-axis joint writes links <body>_axis<i> and joints <joint>_<i>: a body or joint already
    called that is refused by name, not written as a file from_urdf cannot read."""
    E3, Z3, box = np.eye(3), np.zeros(3), (1.0, np.zeros(3), np.eye(3))
    two = opalg.Joint(("R", "R"), [[0, 0, 1.0], [0, 1.0, 0]], name="a")
    m = opalg.Model([-1, 0], [two, opalg.Joint("R", [0, 0, 1.0], name="b")], [(E3, Z3)] * 2, [box] * 2,
                    names=["a", "a_axis0"])
    with pytest.raises(ModelError, match=r"link name 'a_axis0'.*body 0"):
        to_urdf(m)
    m = opalg.Model([-1, 0], [two, opalg.Joint("R", [0, 0, 1.0], name="a_1")], [(E3, Z3)] * 2, [box] * 2,
                    names=["x", "y"])
    with pytest.raises(ModelError, match=r"joint name 'a_1'"):
        to_urdf(m)


HOSTILE = st.text(alphabet=st.characters(blacklist_categories=("Cs",)), min_size=0, max_size=6) | st.sampled_from(
    ['"', "'", "<", ">", "&", "&amp;", "]]>", "<!--", "base", "a_axis0", " lead", "trail ", "\t", "\n", "\r",
     "\x01", "\x7f", "\x85", "é", "名前", "\u2028", EVIL])


@settings(max_examples=40)
@given(n=st.integers(1, 4), seed=st.integers(0, 10_000),
       names=st.lists(HOSTILE, min_size=8, max_size=8, unique=True))
def test_urdf_round_trip_with_hostile_names(n, seed, names):
    """from_urdf(to_urdf(m)) gives back m (names; ℳ in the re-imported dof order, to 1e-13 of
    its largest entry: the numbers are printed with repr, exact, and the frames recomposed), or
    to_urdf refuses naming the name at fault."""
    body, joint = names[:n], names[4:4 + n]
    try:
        m = named_model(body, joint, seed)
    except ModelError:
        return                                  # the Model itself refused (e.g. an empty name)
    try:
        text = to_urdf(m)
    except ModelError as e:
        assert any(repr(s) in str(e) for s in body + joint), f"to_urdf refused without naming the name: {e}"
        return
    back = opalg.from_urdf(text)
    assert sorted(back.names) == sorted(m.names) and sorted(back.joint_names) == sorted(m.joint_names)
    q = np.linspace(-1, 1, m.ndof)
    i = m.joint_dofs(back.joint_names)
    M = opalg.crba(m, q)
    np.testing.assert_allclose(opalg.crba(back, q[i]), M[np.ix_(i, i)], rtol=0, atol=1e-13 * abs(M).max())
