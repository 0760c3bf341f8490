"""Input holes: strings never evaluated, object states validated like float ones, empty and
ambiguous models, the gravity flag, float32 states, overflow, and linear-size construction.

Each test checks the message, so that a failure to refuse (or a refusal for another
reason) fails the test.
"""

from __future__ import annotations

import builtins

import numpy as np
import pytest
import sympy as sp

import opalg
from opalg import Joint, Model, ModelError, StateError

from helpers import (  # noqa: F401  (autouse fixture)
    EPS, EVIL, FLAG, Tol, assert_close, measured, no_string_evaluated)

E3, Z3 = np.eye(3), np.zeros(3)
BOX = (1.0, np.array([0.1, 0.0, 0.0]), np.diag([0.2, 0.3, 0.4]))
#: crba with an object q (Python-float/sympy arithmetic entry by entry) vs the float64 route.  Measured.
TOL_OBJECT = measured(1e-13, 1.9e-15, "300 random single-axis trees (n 2-6, q in [-1, 1], one Rational "
                      "entry) under 3 BLAS/SIMD kernels")


@pytest.fixture(scope="module")
def tree():
    return opalg.random_model(5, "tree", seed=0, joints="mixed")


def test_the_flag_detects_evaluation():
    """Guard: sympify of EVIL really sets the flag, so the fixture can see an evaluation."""
    assert sp.sympify(EVIL) == 1 and hasattr(builtins, FLAG)
    delattr(builtins, FLAG)


def test_strict_sympify_refuses_strings_without_evaluating():
    """sympify(strict=True), which opalg.symbolic uses for scalars, refuses strings unevaluated."""
    with pytest.raises(sp.SympifyError):
        sp.sympify(EVIL, strict=True)


# --------------------------------------------------------------------------- states
def _calls(model, q, qd, x):
    return {"rnea": lambda: opalg.rnea(model, q, qd, x), "aba": lambda: opalg.aba(model, q, qd, x),
            "crba": lambda: opalg.crba(model, q), "bias": lambda: opalg.bias(model, q, qd),
            "operators": lambda: opalg.operators(model, q, qd), "minv": lambda: opalg.minv(model, q),
            "body_poses": lambda: opalg.body_poses(model, q)}


_ARG = {"q": 0, "qd": 1, "qdd": 2, "tau": 2}
_CASES = [("rnea", "q"), ("rnea", "qd"), ("rnea", "qdd"), ("aba", "tau"), ("aba", "qd"), ("crba", "q"),
          ("bias", "qd"), ("operators", "q"), ("minv", "q"), ("body_poses", "q")]


def _state_args(tree, name, bad):
    """Object-dtype states (symbols, so they go down the sympy path) with ``bad`` at index 2."""
    x = sp.Symbol("x")
    args = [np.array([x] + [0] * (tree.ndof - 1), dtype=object) for _ in range(3)]
    args[_ARG[name]][2] = bad
    return args


@pytest.mark.parametrize("fn, name", _CASES)
def test_string_in_object_state_is_refused_unevaluated(tree, fn, name):
    """A string inside an object-dtype state is a StateError naming the argument and index;
    it never reaches sympy (the fixture fails if it was evaluated)."""
    with pytest.raises(StateError, match=rf"^{name} has a non-numeric entry at index \(2,\): a str "
                                         r"\"__import__.*strings are never evaluated"):
        _calls(tree, *_state_args(tree, name, EVIL))[fn]()


@pytest.mark.parametrize("bad, kind", [(None, "NoneType"), (b"1", "bytes"), ([1.0], "list"),
                                       (sp.Symbol("x") > 0, "sympy StrictGreaterThan")])
def test_non_numeric_object_in_state_is_refused(tree, bad, kind):
    """Other non-numbers in an object state (None, bytes, a nested list, a sympy relation) are named."""
    with pytest.raises(StateError, match=rf"^qd has a non-numeric entry at index \(2,\)(: a {kind}|, )"):
        opalg.bias(tree, *_state_args(tree, "qd", bad)[:2])


def test_string_state_lists_are_refused(tree):
    """A plain list of strings (numeric-looking or not) is refused too, naming the first entry."""
    with pytest.raises(StateError, match=r"^q has a non-numeric entry at index \(0,\): a str '0.5'"):
        opalg.crba(tree, ["0.5"] * tree.ndof)


@pytest.mark.parametrize("fn, name", _CASES)
@pytest.mark.parametrize("bad", [float("nan"), np.inf, sp.nan, sp.zoo, sp.oo, -sp.oo, sp.Symbol("y") + sp.oo],
                         ids=["nan", "inf", "sp.nan", "zoo", "oo", "-oo", "y+oo"])
def test_nonfinite_in_object_state_is_refused(tree, fn, name, bad):
    """NaN/inf in an object-dtype q, qd, qdd or tau (float or sympy) is refused like in a float array."""
    with pytest.raises(StateError, match=rf"^{name} has a non-finite entry at index \(2,\)"):
        _calls(tree, *_state_args(tree, name, bad))[fn]()


def test_nonfinite_object_state_batched_index(tree):
    """The index of a bad entry in a batched object state is the full index."""
    q = np.zeros((2, tree.ndof), dtype=object)
    q[1, 3] = sp.nan
    with pytest.raises(StateError, match=r"^q has a non-finite entry at index \(1, 3\) \(nan\)"):
        opalg.crba(tree, q)


def test_valid_object_states_still_work():
    """Guard: object states of numbers and sympy numbers are accepted and agree with the float route.
    (Single-axis joints: an unbatched object q on a multi-axis P joint fails in joint_transform,
    a separate, known problem.)"""
    m = opalg.random_model(5, "tree", seed=0, joints="single")
    q = np.linspace(-1, 1, m.ndof)
    qo = q.astype(object)
    qo[0] = sp.Rational(-1)
    M = opalg.crba(m, qo)
    assert M.dtype == object
    assert_close(np.array(M, dtype=float), opalg.crba(m, q), TOL_OBJECT, "ℳ object vs float route")


# --------------------------------------------------------------------------- model data
def _sym_model(**change):
    """A 2-body model with a symbolic length; ``change`` replaces one field of body 1."""
    L = sp.Symbol("L", positive=True)
    inertia = dict(mass=1.0, com=np.array([L, 0, 0], dtype=object), I_com=np.diag([0.2, 0.3, 0.4]))
    place = dict(R=E3, r=np.array([L, 0, 0], dtype=object))
    gravity = change.pop("gravity", np.array([0, 0, -sp.Symbol("g")], dtype=object))
    for k, v in change.items():
        (inertia if k in inertia else place)[k] = v
    return Model([-1, 0], [Joint("R", [0, 0, 1.0])] * 2, [(E3, Z3), (place["R"], place["r"])],
                 [BOX, (inertia["mass"], inertia["com"], inertia["I_com"])], gravity=gravity)


def _with_string(shape):
    a = np.zeros(shape, dtype=object)
    a.flat[0] = sp.Symbol("L")
    a.flat[-1] = EVIL
    return a


@pytest.mark.parametrize("field, value, match", [
    ("mass", EVIL, r"body 1 \(body1\): mass is not numeric: a str"),
    ("com", _with_string(3), r"body 1 \(body1\): mass centre has a non-numeric entry at index \(2,\): a str"),
    ("I_com", _with_string((3, 3)), r"body 1 \(body1\): inertia tensor has a non-numeric entry at index \(2, 2\)"),
    ("R", _with_string((3, 3)), r"body 1 \(body1\): placement rotation has a non-numeric entry at index \(2, 2\)"),
    ("r", _with_string(3), r"body 1 \(body1\): placement origin has a non-numeric entry at index \(2,\)"),
    ("gravity", _with_string(3), r"gravity has a non-numeric entry at index \(2,\): a str"),
])
def test_string_in_model_data_is_refused_unevaluated(field, value, match):
    """A string in any model array is a ModelError naming body and field; it is never evaluated."""
    _sym_model()  # guard: the unchanged symbolic model builds
    with pytest.raises(ModelError, match=match):
        _sym_model(**{field: value})


@pytest.mark.parametrize("field, shape", [("com", 3), ("r", 3), ("gravity", 3), ("I_com", (3, 3))])
def test_sympy_nonfinite_in_model_data_is_refused(field, shape):
    """sympy nan/zoo in a symbolic model array (not caught by the numeric checks) is refused."""
    a = np.zeros(shape, dtype=object)
    a.flat[0], a.flat[-1] = sp.Symbol("L"), sp.zoo
    with pytest.raises(ModelError, match=r"has a non-finite entry zoo at index"):
        _sym_model(**{field: a})


def test_inertia_given_as_a_string():
    """An inertia spec that is a string is not unpacked character by character."""
    with pytest.raises(ModelError, match=r"body 0 \(body0\): inertia must be an Inertia or \(mass, com, I_com\)"):
        Model([-1], [Joint("R", [0, 0, 1.0])], [(E3, Z3)], ["abc"])


def test_gravity_none():
    """gravity=None is refused as not numeric."""
    with pytest.raises(ModelError, match=r"gravity is not numeric: a NoneType None"):
        Model([-1], [Joint("R", [0, 0, 1.0])], [(E3, Z3)], [BOX], gravity=None)


# --------------------------------------------------------------------------- empty, names
def test_empty_model():
    """A model without bodies is refused at construction (it used to fail later with IndexError)."""
    with pytest.raises(ModelError, match=r"parent array is empty: a model needs at least one body"):
        Model([], [], [], [])


def _chain(n, joint_names=None, names=None):
    joint_names = joint_names or [None] * n
    return Model(list(range(-1, n - 1)), [Joint("R", [0, 0, 1.0], name=j) for j in joint_names],
                 [(E3, Z3)] * n, [BOX] * n, names=names)


def test_duplicate_joint_names():
    """Two joints with the same name are refused, naming the name and both bodies."""
    _chain(3, ["a", "b", "c"])  # guard
    with pytest.raises(ModelError, match=r"joint name 'hip' is used twice \(bodies 0 and 2\)"):
        _chain(3, ["hip", "knee", "hip"])


def test_explicit_joint_name_equal_to_a_default_name():
    """An explicit name equal to another joint's default name would make joint_dofs ambiguous."""
    with pytest.raises(ModelError, match=r"joint name 'joint2' is used twice \(bodies 0 and 2, the default "
                                         r"name of its unnamed joint\)"):
        _chain(3, ["joint2", "b", None])


def test_unnamed_joints_are_not_duplicates():
    """Guard: unnamed joints get distinct default names, and joint_dofs finds each."""
    m = _chain(3)
    assert m.joint_names == ("joint0", "joint1", "joint2")
    assert m.joint_dofs(["joint2", "joint0"]).tolist() == [2, 0]


def test_duplicate_body_names():
    """Two bodies with the same name are refused, naming the name and both bodies."""
    with pytest.raises(ModelError, match=r"body name 'link' is used twice \(bodies 1 and 2\)"):
        _chain(3, names=["base", "link", "link"])


def test_body_name_not_a_string():
    with pytest.raises(ModelError, match=r"body 1: name must be a string, got 7"):
        _chain(2, names=["a", 7])


# --------------------------------------------------------------------------- gravity flag
@pytest.mark.parametrize("fn", ["rnea", "aba", "bias", "operators"])
@pytest.mark.parametrize("flag", ["no", 0, 1.0, None, np.array([True])])
def test_gravity_flag_must_be_a_bool(tree, fn, flag):
    """gravity= must be a real bool ("no" used to turn gravity on); the argument is named."""
    N = tree.ndof
    z = np.zeros(N)
    call = {"rnea": lambda: opalg.rnea(tree, z, z, z, gravity=flag),
            "aba": lambda: opalg.aba(tree, z, z, z, gravity=flag),
            "bias": lambda: opalg.bias(tree, z, z, gravity=flag),
            "operators": lambda: opalg.operators(tree, z, z, gravity=flag)}[fn]
    with pytest.raises(StateError, match=r"^gravity must be True or False, got"):
        call()


def test_gravity_flag_numpy_bool(tree):
    """Guard: numpy booleans are bools; gravity=np.False_ equals gravity=False."""
    z = np.zeros(tree.ndof)
    assert np.array_equal(opalg.bias(tree, z, z, gravity=np.False_), opalg.bias(tree, z, z, gravity=False))
    assert not np.allclose(opalg.bias(tree, z, z, gravity=np.True_), 0)


# --------------------------------------------------------------------------- precision, overflow
@pytest.mark.parametrize("dtype", [np.float16, np.float32])
def test_low_precision_states_are_computed_in_float64(tree, dtype):
    """float16/32 states give float64-accurate results: bitwise equal to the float64 call on the
    same, rounded, inputs (sin/cos used to be taken in float32)."""
    rng = np.random.default_rng(1)
    q, qd, qdd = (rng.uniform(-1, 1, size=(3, tree.ndof)).astype(dtype) for _ in range(3))
    got = opalg.rnea(tree, q, qd, qdd)
    want = opalg.rnea(tree, q.astype(float), qd.astype(float), qdd.astype(float))
    assert got.dtype == np.float64
    # exact: the inputs are widened to float64 first (exactly), then both calls do the same operations
    np.testing.assert_array_equal(got, want)
    np.testing.assert_array_equal(opalg.crba(tree, q), opalg.crba(tree, q.astype(float)))


@pytest.mark.parametrize("fn, big", [("rnea", "qd"), ("bias", "qd"), ("aba", "qd"), ("rnea", "qdd"),
                                     ("crba", "q"), ("minv", "q"), ("minv_diag", "q")])
@pytest.mark.parametrize("batch", [(), (2 * opalg.model.kinematics.CHUNK + 1,)], ids=["single", "chunked"])
def test_overflow_is_a_state_error_without_warnings(tree, fn, big, batch, recwarn):
    """Finite inputs whose result overflows (qd = 1e200: V×V) raise StateError naming the function
    and the large input, and no RuntimeWarning leaks."""
    N = tree.ndof
    args = {nm: np.zeros(batch + (N,)) for nm in ("q", "qd", "x")}
    args["x" if big == "qdd" else big][..., :] = 1e200 if big != "qdd" else 1e308
    call = {"rnea": lambda: opalg.rnea(tree, args["q"], args["qd"], args["x"]),
            "bias": lambda: opalg.bias(tree, args["q"], args["qd"]),
            "aba": lambda: opalg.aba(tree, args["q"], args["qd"], args["x"]),
            "crba": lambda: opalg.crba(tree, args["q"]), "minv": lambda: opalg.minv(tree, args["q"]),
            "minv_diag": lambda: opalg.minv_diag(tree, args["q"])}[fn]
    with pytest.raises(StateError, match=rf"^{fn}: .*overflowed double precision .*max \|{big}\| = 1e\+(200|308)"):
        call()
    assert not [w for w in recwarn if issubclass(w.category, RuntimeWarning)]


# --------------------------------------------------------------------------- batched model checks
def test_model_data_are_the_per_body_formulas():
    """A numeric model's X_tree / I_spatial (formed for all bodies at once) are motion_transform(Rᵀ, r)
    and spatial_inertia(m, c, J) of each body to round-off, I_spatial exactly symmetric (the
    Riccati downdates keep P exactly symmetric only then)."""
    from opalg.spatial.vectors import motion_transform, spatial_inertia
    # Entries are sums of at most 3 products of 2-3 factors (E r~, m p~p~): two evaluations of
    # them differ by at most 2·γ_6 ≈ 6ε of the terms' size, ≤ ‖X‖ (‖M‖) here; 20ε covers it.
    tol = Tol(20 * EPS, "2·γ_6 of sums of 3 products of ≤ 3 factors, with margin")
    m = opalg.random_model(40, "tree", seed=3)
    for X, (R, r) in zip(m.X_tree, m.placements):
        assert_close(X, motion_transform(R.T, r), tol, "X_tree")
    for Ms, i in zip(m.I_spatial, m.inertias):
        assert_close(Ms, spatial_inertia(i.mass, i.com, i.I_com), tol, "I_spatial")
        assert np.array_equal(Ms, Ms.T)   # exact: stored as (M + Mᵀ)/2


@pytest.mark.parametrize("field, bad, match", [
    ("inertia", (1.0, Z3, np.diag([1.0, 1.0, 3.0])), r"body 700 \(body700\): principal moments"),
    ("inertia", (-1.0, Z3, E3), r"body 700 \(body700\): mass must be > 0, got -1"),
    ("placement", (2 * E3, Z3), r"body 700 \(body700\): placement rotation is not a proper rotation"),
    ("placement", (E3, [0, np.inf, 0]), r"body 700 \(body700\): placement origin has non-finite"),
])
def test_batched_check_names_the_first_bad_body(field, bad, match):
    """In a long numeric chain one bad body fails the batched check, and the per-body
    check then names it (the first of two bad ones)."""
    n = 1000
    inertias, placements = [BOX] * n, [(E3, Z3)] * n
    seq = inertias if field == "inertia" else placements
    seq[700] = seq[900] = bad
    with pytest.raises(ModelError, match=match):
        Model(list(range(-1, n - 1)), [Joint("R", [0, 0, 1.0])] * n, placements, inertias)
