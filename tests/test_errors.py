"""Bad input is rejected at construction / entry with a ValueError that says what and where.

Every test builds one invalid input through the public API and asserts the exception
type (ValueError, or its subclasses opalg.ModelError / opalg.StateError) and, with
``match``, that the message names the body / joint / argument and the problem.
"""

from __future__ import annotations

import numpy as np
import pytest

import opalg
from opalg import Joint, Model, ModelError, StateError

E3, Z3 = np.eye(3), np.zeros(3)
JZ = Joint("R", [0.0, 0.0, 1.0])
BOX = (1.0, np.array([0.1, 0.0, 0.0]), np.diag([0.2, 0.3, 0.4]))


def model(parents=(-1, 0, 0), joints=None, placements=None, inertias=None, **kw):
    """A valid 3-body tree; any argument can be replaced by an invalid one."""
    n = len(parents)
    return Model(list(parents), joints if joints is not None else [JZ] * n,
                 placements if placements is not None else [(E3, Z3)] * n,
                 inertias if inertias is not None else [BOX] * n, **kw)


def with_inertia(k, inertia, n=3, **kw):
    return model(inertias=[inertia if i == k else BOX for i in range(n)], **kw)


def with_placement(k, placement, n=3):
    return model(placements=[placement if i == k else (E3, Z3) for i in range(n)])


@pytest.fixture(scope="module")
def tree():
    return opalg.random_model(5, "tree", seed=0, joints="mixed")


def test_valid_reference_model_builds():
    """Guard: the unmodified builder inputs are accepted, so each failure below is due to the one change."""
    m = model()
    assert m.n == 3 and m.ndof == 3
    assert opalg.crba(m, np.zeros(3)).shape == (3, 3)


# --------------------------------------------------------------------------- topology
@pytest.mark.parametrize("parents, match", [
    ([-1, 2, 3, 1], r"cycle through bodies 1 -> 2 -> 3 -> 1"),
    ([1, 0], r"cycle through bodies 0 -> 1 -> 0"),
    ([-1, 0, 4, 2, 3], r"cycle through bodies 2 -> 4 -> 3 -> 2"),
])
def test_parent_cycle(parents, match):
    """A cycle in the parent array is reported with the bodies on the cycle, in order."""
    with pytest.raises(ModelError, match=match):
        model(parents)


def test_self_parent():
    """A body that is its own parent is named."""
    with pytest.raises(ModelError, match=r"body 1 \(body1\) is its own parent"):
        model([-1, 1, 0])


@pytest.mark.parametrize("bad", [3, 7, -2])
def test_parent_out_of_range(bad):
    """A parent index outside -1..n-1 is reported with the body, the index and the valid range."""
    with pytest.raises(ModelError, match=rf"body 2 \(body2\): parent index {bad} out of range .*0\.\.2"):
        model([-1, 0, bad])


def test_parent_not_an_integer():
    """A fractional parent index is rejected rather than truncated."""
    with pytest.raises(ModelError, match=r"body 1.*parent.*0\.7"):
        model([-1, 0.7, 0])


# --------------------------------------------------------------------------- joints
def test_joint_axis_zero_length():
    """A zero axis names the joint and the axis."""
    with pytest.raises(ModelError, match=r"joint 'elbow': axis 0 has zero length"):
        Joint("R", [0, 0, 0], name="elbow")


def test_joint_axis_not_unit():
    """A non-unit axis names the axis and its norm."""
    with pytest.raises(ModelError, match=r"joint 'wrist': axis 1 is not a unit vector \(norm 2\)"):
        Joint(["R", "P"], [[0, 0, 1], [0, 2, 0]], name="wrist")


@pytest.mark.parametrize("kind", ["spherical", "fixed", ["R", "screw"], ["R", 3]])
def test_joint_type_unsupported(kind):
    """An unknown joint type is named and the supported types are listed."""
    with pytest.raises(ModelError, match=r"joint 'j': unsupported joint type .*'revolute' or 'prismatic'"):
        Joint(kind, [0, 0, 1], name="j")


@pytest.mark.parametrize("kind, axis, shape", [
    ("R", [0, 1], r"\(2,\)"),
    ("R", [[0, 0, 1], [1, 0, 0]], r"\(2, 3\)"),
    (["R", "R"], [0, 0, 1], r"\(3,\)"),
    (["R", "P", "R"], np.eye(4)[:3], r"\(3, 4\)"),
])
def test_joint_axis_wrong_shape(kind, axis, shape):
    """An axis array of the wrong shape is reported with its shape and the number of axes expected."""
    with pytest.raises(ModelError, match=rf"joint 'j': axis has shape {shape}, expected \(3,\) per axis"):
        Joint(kind, axis, name="j")


@pytest.mark.parametrize("bad", [np.nan, np.inf])
def test_joint_axis_not_finite(bad):
    """A NaN/inf axis is reported as non-finite, not as 'zero length'."""
    with pytest.raises(ModelError, match=r"joint 'j': axis 0 .*(finite|nan|inf)"):
        Joint("R", [bad, 0, 1], name="j")


@pytest.mark.parametrize("kind", [None, 3])
def test_joint_type_not_a_string(kind):
    """A joint type that is not a string (or list of strings) is a ModelError naming the problem."""
    with pytest.raises(ModelError, match=r"unsupported joint type"):
        Joint(kind, [0, 0, 1])


def test_joint_without_axes():
    """A joint with zero axes is rejected at construction."""
    with pytest.raises(ModelError, match=r"joint.*(at least one|no axes|zero axes)"):
        Joint([], np.zeros((0, 3)), name="weld")


def test_joint_with_repeated_axis():
    """An R-R (or P-P) joint about the same axis twice is rejected at construction as dependent."""
    with pytest.raises(ModelError, match=r"joint 'j'.*dependent"):
        Joint(["R", "R"], [[0, 0, 1], [0, 0, 1]], name="j")


def test_joint_not_a_joint_object():
    """A joint entry that is not a Joint names the body and the type given."""
    with pytest.raises(ModelError, match=r"body 1 \(body1\): joint must be a Joint, got str"):
        model(joints=[JZ, "R", JZ])


# --------------------------------------------------------------------------- inertia
@pytest.mark.parametrize("mass, shown", [(0.0, "0"), (-1.5, "-1.5"), (np.nan, "nan"), (-np.inf, "-inf")])
def test_mass_not_positive(mass, shown):
    """Mass ≤ 0 (or non-finite) names the body and the value."""
    with pytest.raises(ModelError, match=rf"body 2 \(body2\): mass must be > 0, got {shown}"):
        with_inertia(2, (mass, Z3, E3))


def test_zero_mass_hints_at_allow_massless():
    """A massless body without allow_massless says how to allow it."""
    with pytest.raises(ModelError, match=r"body 1 \(body1\): mass must be > 0, got 0 .*allow_massless=True"):
        with_inertia(1, (0.0, Z3, np.zeros((3, 3))))


@pytest.mark.parametrize("mass", [0.0, -1.0])
def test_mass_not_positive_with_allow_massless(mass):
    """With allow_massless, zero mass with nonzero inertia, or negative mass, is still rejected."""
    with pytest.raises(ModelError, match=r"body 1 \(body1\): mass must be > 0"):
        with_inertia(1, (mass, Z3, E3), allow_massless=True)


def test_massless_subtree():
    """A joint whose whole subtree is massless names the body and the joint."""
    with pytest.raises(ModelError, match=r"body 2 \(body2\): joint 'tip' moves no mass"):
        model(joints=[JZ, JZ, Joint("R", [1.0, 0, 0], name="tip")],
              inertias=[BOX, BOX, (0.0, Z3, np.zeros((3, 3)))], allow_massless=True)


@pytest.mark.parametrize("mass", [np.array([1.0, 2.0]), "heavy"])
def test_mass_not_a_scalar(mass):
    """A mass that is not a scalar number names the body."""
    with pytest.raises(ModelError, match=r"body 0 \(body0\): mass"):
        with_inertia(0, (mass, Z3, E3))


def test_inertia_not_symmetric():
    """A non-symmetric inertia tensor names the body."""
    J = np.diag([0.2, 0.3, 0.4])
    J[0, 1] = 0.05
    with pytest.raises(ModelError, match=r"body 1 \(body1\): inertia tensor is not symmetric"):
        with_inertia(1, (1.0, Z3, J))


@pytest.mark.parametrize("diag", [(1.0, 1.0, -1.0), (1.0, 1.0, 0.0), (-1.0, -1.0, -1.0)])
def test_inertia_not_positive_definite(diag):
    """A non-SPD inertia tensor names the body and gives the eigenvalues."""
    with pytest.raises(ModelError, match=r"body 0 \(body0\): inertia tensor is not positive definite \(eigenvalues"):
        with_inertia(0, (1.0, Z3, np.diag(diag)))


def test_inertia_triangle_inequality():
    """Principal moments violating I3 ≤ I1 + I2 are reported with the moments (also when rotated)."""
    R = opalg.model.builders.random_rotation(np.random.default_rng(0))
    with pytest.raises(ModelError, match=r"body 2 \(body2\): principal moments .* violate the triangle "
                                         r"inequality \(3 > 1 \+ 1\.5\)"):
        with_inertia(2, (1.0, Z3, R @ np.diag([1.0, 1.5, 3.0]) @ R.T))


@pytest.mark.parametrize("com, shape", [([0.0, 0.1], r"\(2,\)"), (np.zeros((3, 1)), r"\(3, 1\)"), (0.1, r"\(\)")])
def test_mass_centre_wrong_shape(com, shape):
    """A mass centre of the wrong shape names the body and the shape."""
    with pytest.raises(ModelError, match=rf"body 1 \(body1\): mass centre has shape {shape}, expected \(3,\)"):
        with_inertia(1, (1.0, com, E3))


def test_inertia_tensor_wrong_shape():
    """An inertia tensor of the wrong shape names the body and the shape."""
    with pytest.raises(ModelError, match=r"body 0 \(body0\): inertia tensor has shape \(2, 2\), expected \(3, 3\)"):
        with_inertia(0, (1.0, Z3, np.eye(2)))


def test_mass_centre_not_finite():
    """A NaN mass centre is rejected, naming the body."""
    with pytest.raises(ModelError, match=r"body 1 \(body1\): mass centre .*(finite|nan)"):
        with_inertia(1, (1.0, [np.nan, 0.0, 0.0], E3))


def test_inertia_tensor_not_finite():
    """A NaN inertia tensor is reported as non-finite."""
    J = np.diag([0.2, 0.3, np.nan])
    with pytest.raises(ModelError, match=r"body 1 \(body1\): inertia tensor .*(finite|nan)"):
        with_inertia(1, (1.0, Z3, J))


def test_inertia_tuple_wrong_length():
    """An inertia given as a tuple of the wrong length names the body."""
    with pytest.raises(ModelError, match=r"body 1 \(body1\).*inertia"):
        with_inertia(1, (1.0, Z3))


# --------------------------------------------------------------------------- placements
@pytest.mark.parametrize("R", [2 * E3, np.diag([1.0, 1.0, -1.0]), np.array([[1.0, 0.1, 0], [0, 1, 0], [0, 0, 1]])],
                         ids=["scaled", "reflection", "sheared"])
def test_placement_not_a_rotation(R):
    """A placement matrix that is not a proper rotation names the body."""
    with pytest.raises(ModelError, match=r"body 2 \(body2\): placement rotation is not a proper rotation"):
        with_placement(2, (R, Z3))


@pytest.mark.parametrize("pl", [(np.eye(2), Z3), (E3, [0.0, 1.0]), (E3, np.zeros((3, 1)))])
def test_placement_wrong_shape(pl):
    """A placement of the wrong shape names the body and the expected shapes."""
    with pytest.raises(ModelError, match=r"body 1 \(body1\): placement must be \(3x3 rotation, 3-vector\)"):
        with_placement(1, pl)


def test_placement_offset_not_finite():
    """A NaN joint-frame origin is rejected, naming the body."""
    with pytest.raises(ModelError, match=r"body 1 \(body1\): placement .*(finite|nan)"):
        with_placement(1, (E3, [np.nan, 0.0, 0.0]))


# --------------------------------------------------------------------------- lengths, gravity
@pytest.mark.parametrize("what", ["joints", "placements", "inertias", "names"])
@pytest.mark.parametrize("count", [2, 4])
def test_list_lengths_mismatch(what, count):
    """A per-body list of the wrong length names the list and both counts."""
    kw = dict(joints=[JZ] * 3, placements=[(E3, Z3)] * 3, inertias=[BOX] * 3, names=["a", "b", "c"])
    kw[what] = (kw[what] * 2)[:count]
    with pytest.raises(ModelError, match=rf"{what} has {count} entries but the parent array has 3 bodies"):
        Model([-1, 0, 0], **kw)


@pytest.mark.parametrize("g, shape", [((0.0, -9.81), r"\(2,\)"), (np.zeros((3, 1)), r"\(3, 1\)"),
                                      (9.81, r"\(\)")])
def test_gravity_wrong_shape(g, shape):
    """Gravity of the wrong shape is named with its shape."""
    with pytest.raises(ModelError, match=rf"gravity has shape {shape}, expected \(3,\)"):
        model(gravity=g)


def test_gravity_not_finite():
    """A NaN gravity vector is rejected."""
    with pytest.raises(ModelError, match=r"gravity .*(finite|nan)"):
        model(gravity=(0.0, 0.0, np.nan))


def test_relabeled_not_a_permutation(tree):
    """Model.relabeled with a non-permutation names the list."""
    with pytest.raises(ModelError, match=r"relabeling \[0, 0, 1, 2, 3\] is not a permutation of 0\.\.4"):
        tree.relabeled([0, 0, 1, 2, 3])


# --------------------------------------------------------------------------- states
def _call(fn, model, args):
    q, qd, x = args["q"], args["qd"], args["x"]
    return {
        "rnea": lambda: opalg.rnea(model, q, qd, x),
        "aba": lambda: opalg.aba(model, q, qd, x),
        "crba": lambda: opalg.crba(model, q),
        "bias": lambda: opalg.bias(model, q, qd),
        "operators": lambda: opalg.operators(model, q, qd),
        "minv": lambda: opalg.minv(model, q),
    }[fn]()


_ARGS = {"rnea": ("q", "qd", "qdd"), "aba": ("q", "qd", "tau"), "crba": ("q",), "bias": ("q", "qd"),
         "operators": ("q", "qd"), "minv": ("q",)}
_CASES = [(fn, i, name) for fn, names in _ARGS.items() for i, name in enumerate(names)]


@pytest.mark.parametrize("fn, pos, name", _CASES, ids=[f"{f}-{n}" for f, _, n in _CASES])
@pytest.mark.parametrize("bad_size", [-1, +2])
def test_state_wrong_trailing_size(tree, fn, pos, name, bad_size):
    """q/qd/qdd/tau with the wrong trailing size: the argument, its shape and N are named."""
    N = tree.ndof
    args = {"q": np.zeros(N), "qd": np.zeros(N), "x": np.zeros(N)}
    key = ("q", "qd", "x")[pos]
    args[key] = np.zeros((2, N + bad_size))
    with pytest.raises(StateError, match=rf"^{name} has shape \(2, {N + bad_size}\), expected \(\.\.\., {N}\) "
                                         rf"for a model with N={N} dof"):
        _call(fn, tree, args)


@pytest.mark.parametrize("fn", ["rnea", "aba", "crba", "bias", "operators", "minv"])
def test_state_scalar(tree, fn):
    """A 0-d q is rejected with its shape ()."""
    N = tree.ndof
    with pytest.raises(StateError, match=r"^q has shape \(\), expected"):
        _call(fn, tree, {"q": 0.0, "qd": np.zeros(N), "x": np.zeros(N)})


@pytest.mark.parametrize("fn", ["rnea", "aba", "bias", "operators"])
def test_batch_shapes_do_not_broadcast(tree, fn):
    """Batch axes that do not broadcast are reported with every argument's batch shape."""
    N = tree.ndof
    args = {"q": np.zeros((2, N)), "qd": np.zeros((3, N)), "x": np.zeros(N)}
    with pytest.raises(StateError, match=r"batch shapes do not broadcast \(q: \(2,\), qd: \(3,\)"):
        _call(fn, tree, args)


def test_batch_shapes_do_not_broadcast_third_argument(tree):
    """A non-broadcasting qdd/tau is caught even when q and qd agree."""
    N = tree.ndof
    with pytest.raises(StateError, match=r"batch shapes do not broadcast .*qdd: \(4, 3\)"):
        opalg.rnea(tree, np.zeros((2, 1, N)), np.zeros((5, N)), np.zeros((4, 3, N)))
    with pytest.raises(StateError, match=r"batch shapes do not broadcast .*tau: \(3,\)"):
        opalg.aba(tree, np.zeros((2, N)), np.zeros(N), np.zeros((3, N)))


@pytest.mark.parametrize("fn, key, name", [("rnea", "q", "q"), ("rnea", "qd", "qd"), ("rnea", "x", "qdd"),
                                           ("aba", "x", "tau"), ("crba", "q", "q"), ("bias", "qd", "qd"),
                                           ("operators", "q", "q"), ("minv", "q", "q")])
@pytest.mark.parametrize("bad", [np.nan, np.inf])
def test_state_not_finite(tree, fn, key, name, bad):
    """A NaN/inf entry is reported with the argument and the index of the first bad entry."""
    N = tree.ndof
    args = {"q": np.zeros(N), "qd": np.zeros(N), "x": np.zeros(N)}
    args[key] = np.zeros((2, N))
    args[key][1, 3] = bad
    args[key][1, 4] = bad
    with pytest.raises(StateError, match=rf"^{name} has a non-finite entry at index \(1, 3\)"):
        _call(fn, tree, args)


def test_state_nan_single_index(tree):
    """For an unbatched q the index is a 1-tuple."""
    q = np.zeros(tree.ndof)
    q[2] = np.nan
    with pytest.raises(StateError, match=r"^q has a non-finite entry at index \(2,\)"):
        opalg.crba(tree, q)


def test_state_not_numeric(tree):
    """A q that is not numeric is a StateError naming q."""
    with pytest.raises(StateError, match=r"^q"):
        opalg.crba(tree, ["a"] * tree.ndof)


def test_state_errors_name_the_bad_argument(tree):
    """Entry validation: a state of the wrong shape, or batches that do not broadcast, are a
    StateError naming the argument (not an error from inside the recursions)."""
    N = tree.ndof
    good, bad = np.zeros(N), np.zeros(N + 1)
    for fn, args, name in [
        (opalg.rnea, (good, good, bad), "qdd"), (opalg.aba, (good, good, bad), "tau"),
        (opalg.crba, (bad,), "q"), (opalg.bias, (good, bad), "qd"), (opalg.operators, (good, bad), "qd"),
        (opalg.minv, (bad,), "q"), (opalg.frame_jacobian, (bad, (0, Z3)), "q"),
        (opalg.lambda_inv, (bad, [(0, Z3)]), "q"),
    ]:
        with pytest.raises(StateError, match=rf"^{name} has shape"):
            fn(tree, *args)
    for fn, args in [(opalg.rnea, (np.zeros((2, N)), np.zeros((3, N)), good)),
                     (opalg.aba, (good, np.zeros((2, N)), np.zeros((3, N))))]:
        with pytest.raises(StateError, match=r"batch shapes do not broadcast"):
            fn(tree, *args)
    with pytest.raises(StateError, match=r"frame on body 9"):
        opalg.lambda_inv(tree, good, [(9, Z3)])


# --------------------------------------------------------------------------- frames
@pytest.mark.parametrize("fn", ["frame_jacobian", "lambda_inv"])
@pytest.mark.parametrize("body", [5, 17, -1])
def test_frame_on_missing_body(tree, fn, body):
    """A frame on a nonexistent body names the body and the number of bodies."""
    q = np.zeros(tree.ndof)
    with pytest.raises(StateError, match=rf"frame on body {body}: no such body \(model has 5\)"):
        if fn == "frame_jacobian":
            opalg.frame_jacobian(tree, q, (body, Z3))
        else:
            opalg.lambda_inv(tree, q, [(1, Z3), (body, E3, Z3)])


@pytest.mark.parametrize("frame", [3, "tip", (None, Z3)])
def test_frame_spec_malformed(tree, frame):
    """A frame that is not (body, p) or (body, R, p) is reported with the expected forms."""
    with pytest.raises(StateError, match=r"expected \(body, p\) or \(body, R, p\)"):
        opalg.frame_jacobian(tree, np.zeros(tree.ndof), frame)


@pytest.mark.parametrize("frame", [(2, [0.0, 1.0]), (2, np.eye(2), Z3), (2, E3, np.zeros(4))])
def test_frame_wrong_shapes(tree, frame):
    """A frame with a wrong-shaped R or p names the body."""
    with pytest.raises(StateError, match=r"frame on body 2: R must be 3x3 and p a 3-vector"):
        opalg.lambda_inv(tree, np.zeros(tree.ndof), [frame])


@pytest.mark.parametrize("fn", ["frame_jacobian", "lambda_inv"])
def test_frame_orientation_not_a_rotation(tree, fn):
    """A frame orientation that is not a proper rotation is rejected."""
    q, frame = np.zeros(tree.ndof), (2, 2 * E3, Z3)
    with pytest.raises(StateError, match=r"frame on body 2: .*rotation"):
        opalg.frame_jacobian(tree, q, frame) if fn == "frame_jacobian" else opalg.lambda_inv(tree, q, [frame])


def test_frame_body_not_an_integer(tree):
    """A fractional body index in a frame is rejected rather than truncated."""
    with pytest.raises(StateError, match=r"frame.*1\.5"):
        opalg.frame_jacobian(tree, np.zeros(tree.ndof), (1.5, Z3))


def test_frame_offset_not_finite(tree):
    """A NaN frame origin is rejected, naming the body."""
    with pytest.raises(StateError, match=r"frame on body 2: .*(finite|nan)"):
        opalg.frame_jacobian(tree, np.zeros(tree.ndof), (2, [np.nan, 0.0, 0.0]))


# --------------------------------------------------------------------------- operators
@pytest.fixture(scope="module")
def ops(tree):
    return opalg.operators(tree, np.zeros(tree.ndof))


@pytest.mark.parametrize("expr, match", [
    (lambda o: o.H @ o.H, r"cannot compose H .* with H .*: inner block structures differ"),
    (lambda o: o.phi @ o.K.T, r"cannot compose phi .* with K\* "),
    (lambda o: o.H.T @ o.M, r"cannot compose H\* .* with M "),
    (lambda o: (o.M + o.R) @ o.H, r"cannot compose \(M \+ R\) .* with H "),
    (lambda o: o.M @ o.phi @ o.G.T, r"cannot compose phi .* with G\* "),
])
def test_operator_composition_mismatch(ops, expr, match):
    """Composing operators with mismatched inner block structures names both operators."""
    with pytest.raises(ValueError, match=match):
        expr(ops)


@pytest.mark.parametrize("expr, match", [
    (lambda o: o.H + o.M, r"cannot add H \(\({N}, {n6}\)\) and M \(\({n6}, {n6}\)\): block structures differ"),
    (lambda o: o.M - o.H, r"cannot add M .* and -1\*H "),
    (lambda o: o.phi + o.K, r"cannot add phi .* and K "),
    (lambda o: o.mass_matrix + o.M, r"cannot add H phi M phi\* H\* .* and M "),
])
def test_operator_addition_mismatch(ops, expr, match):
    """Adding operators with different block structures names both operators and their shapes."""
    with pytest.raises(ValueError, match=match.format(N=ops.model.ndof, n6=6 * ops.model.n)):
        expr(ops)


def test_operator_applied_to_wrong_vector(ops):
    """Applying an operator to a vector of the wrong length names the operator and the shape."""
    n6 = 6 * ops.model.n
    with pytest.raises(ValueError, match=rf"operator M has {n6} columns but the argument has shape \(7,\)"):
        ops.M @ np.ones(7)
    with pytest.raises(ValueError, match=rf"operator H has {n6} columns but the argument has shape \(2, 6\)"):
        ops.H @ np.ones((2, 6))


# --------------------------------------------------------------------------- singular pivots
def test_singular_pivot_gimbal_lock():
    """A spherical (XYZ) joint at gimbal lock (q_y = π/2) is a singular *configuration*
    (E12): SingularConfigurationError naming body, joint and q, with those as attributes."""
    m = opalg.serial_chain([Joint.spherical(name="ball")], [(E3, Z3)], [BOX])
    q = np.array([0.3, np.pi / 2, -0.2])
    z = np.zeros(3)
    opalg.aba(m, q + [0, 0.2, 0], z, z)  # away from the lock the same model is fine
    match = (r"body 0 \(body0\), joint ball: singular configuration, q\[0:3\] = "
             r"\[0\.3, 1\.570796326795, -0\.2\]: its axes are dependent")
    for call in (lambda: opalg.aba(m, q, z, z), lambda: opalg.minv(m, q),
                 lambda: opalg.minv_diag(m, q), lambda: opalg.articulated(m, q)):
        with pytest.raises(opalg.SingularConfigurationError, match=match) as info:
            call()
        assert info.value.body == 0 and info.value.joint == "ball"
        assert np.allclose(info.value.q, q)
    # not a model fault
    with pytest.raises(opalg.SingularConfigurationError) as info:
        opalg.aba(m, q, z, z)
    assert not isinstance(info.value, ModelError)
    # one singular state inside a batch is enough, and the message says which
    with pytest.raises(opalg.SingularConfigurationError, match=r"at batch index \(1,\)"):
        opalg.aba(m, np.stack([q + [0, 0.2, 0], q]), z, z)


def test_singular_pivot_joint_moving_only_a_point_on_its_axis():
    """allow_massless: a massless body whose revolute axis passes through the only (point) mass
    of its subtree has D(k) = 0 for every q; aba names the joint and axis (E12 mass test), for
    one state and for a batch alike."""
    m = Model([-1, 0], [Joint("R", [0, 0, 1.0], name="spin"), Joint("P", [0, 0, 1.0], name="slide")],
              [(E3, Z3)] * 2, [(0.0, Z3, np.zeros((3, 3))), (2.0, Z3, np.zeros((3, 3)))],
              allow_massless=True)
    q = np.array([0.4, 0.7])
    match = r"body 0 \(body0\), joint spin, axis 0: moves no mass at this configuration"
    with pytest.raises(ModelError, match=match):
        opalg.aba(m, q, np.zeros(2), np.zeros(2))
    with pytest.raises(ModelError, match=match):
        opalg.aba(m, np.stack([q, -q]), np.zeros(2), np.zeros(2))
    with pytest.raises(ModelError, match=match):
        opalg.lambda_inv(m, q, [(1, Z3)])


# --------------------------------------------------------------------------- builders
@pytest.mark.parametrize("topology", ["star", "Chain", "", None])
def test_random_model_bad_topology(topology):
    """random_model with an unknown topology string names the argument and the choices."""
    with pytest.raises(ValueError, match=r"topology must be 'chain' or 'tree', got"):
        opalg.random_model(4, topology, seed=0)


def test_random_model_bad_joints_and_sizes():
    """random_model: bad joints string, n < 1 and n_roots out of range are named."""
    with pytest.raises(ValueError, match=r"joints must be 'mixed', 'revolute', 'single' or 'all', got 'spherical'"):
        opalg.random_model(4, "tree", seed=0, joints="spherical")
    with pytest.raises(ValueError, match=r"need n >= 1 .*got n=0"):
        opalg.random_model(0, seed=0)
    with pytest.raises(ValueError, match=r"n_roots <= n .*n_roots=6"):
        opalg.random_model(5, "tree", seed=0, n_roots=6)


def test_random_model_chain_with_several_roots():
    """n_roots != 1 for a chain is rejected rather than ignored."""
    with pytest.raises(ValueError, match=r"n_roots"):
        opalg.random_model(5, "chain", seed=0, n_roots=3)


@pytest.mark.parametrize("kw", [
    dict(lengths=[1, 1], masses=[1], inertias=[0.1, 0.1]),
    dict(lengths=[1, 1], masses=[1, 1], inertias=[0.1, 0.1, 0.1]),
    dict(lengths=[1], masses=[1, 1], inertias=[0.1, 0.1]),
    dict(lengths=[1, 1], masses=[1, 1], inertias=[0.1, 0.1], com=[0.5]),
])
def test_planar_arm_inconsistent_lengths(kw):
    """planar_arm with lists of different lengths names the lists."""
    with pytest.raises(ValueError, match=r"lengths, masses, inertias \(and com\) must have the same length"):
        opalg.planar_arm(**kw)


def test_planar_arm_bad_options():
    """planar_arm: unknown inertia_about and a non-positive link mass (named by link) are rejected."""
    with pytest.raises(ValueError, match=r"inertia_about must be 'com' or 'joint', got 'tip'"):
        opalg.planar_arm([1.0], [1.0], [0.1], inertia_about="tip")
    with pytest.raises(ModelError, match=r"body 1 \(link2\): mass must be > 0, got -1"):
        opalg.planar_arm([1.0, 1.0], [1.0, -1.0], [0.1, 0.1])
    # about the joint, I_O < m c² gives a negative I_cm
    with pytest.raises(ModelError, match=r"body 0 \(link1\): inertia tensor is not positive definite"):
        opalg.planar_arm([1.0], [1.0], [0.1], inertia_about="joint")


def test_all_errors_are_value_errors():
    """Guard: ModelError and StateError are ValueError subclasses, so one except clause catches bad input."""
    assert issubclass(ModelError, ValueError) and issubclass(StateError, ValueError)
    assert not issubclass(ModelError, StateError) and not issubclass(StateError, ModelError)
