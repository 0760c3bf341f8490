"""Joint kinds (opalg.model.joints): the helical axis, multi-axis sequences, the fast path, sympy.

Routes, each independent of the code it checks:

* Pinocchio 4.1 (C++), built joint by joint with ``addJoint`` (``build_pinocchio``:
  it maps kinds, axes, pitches, placements and inertias, and computes nothing):
  crba, rnea with gravity and aba on chains and trees with helical joints;
* complex-step derivatives of the body poses (``opalg.body_poses`` composes only
  the transforms X_J X_T, none of the velocity recursion): V, ℳ and the bias of
  models whose multi-axis joints mix R, P and H (this checks c_J and S(q));
* the generic product X_J(q) X_T of :func:`opalg.model.joints.joint_transform` against the
  1-dof fast path (coefficient matrices) for every kind;
* the registry itself: d/dq X_i(q) = −crm(s_i) X_i(q) for every kind, so the local
  6-vector and the transform of a kind describe the same screw;
* sympy entries (RP, PR, PPP, RH, HHR, and a symbolic pitch) against numbers.

Tolerances (relative, Frobenius norms; the constants below): bounds measured (throwaway scripts
in /tmp, not committed) by running these tests at 60 further random seeds each (models, axes,
pitches, placements, inertias and states all drawn from the seed; 20 seeds for the sympy tests,
seconds of sympy each) under three OpenBLAS/numpy kernels (default; Sandybridge and Prescott with
numpy's AVX2 dispatch off), each with >= 10x margin.  ABA solves with ℳ: K_ABA·cond(ℳ)·ε with
cond computed in the test.  Flipping the pitch signs of the helical chain changes ℳ by 0.6
relative, so every bound is far below a convention error.
"""

from __future__ import annotations

import numpy as np
import pinocchio as pin  # the oracle is required: a missing Pinocchio must fail, never skip
import pytest
import sympy as sp

import opalg
from opalg import Joint, ModelError
from opalg.spatial import vectors as spatial
from opalg.model.joints import AXIS_KINDS, TreeTransform, joint_transform
from opalg.model.kinematics import body_kinematics, up_transform
from opalg.pinocchio_bridge import build_pinocchio

from helpers import assert_close, cond_tol, evaluate_float, measured
from test_independent import H_CS, lagrangian_bias, mass_matrix_from_poses, pose_derivative, vee

OVER = "these tests at 60 further random seeds under 3 kernels"
#: ℳ and RNEA against Pinocchio (at most ~12 transforms, sums of positive inertias; RNEA relative
#: to max(|τ|, ‖ℳ‖|q̈|)): worst 3.8e-15 (was 1e-10).
RTOL_PIN = measured(1e-12, 3.8e-15, OVER)
#: k of k·cond(ℳ)·ε for ABA against Pinocchio's ABA (both backward stable): worst 0.30.
K_ABA = measured(100, 0.30, "err/(cond(ℳ)·ε), " + OVER)
#: Complex-step routes (no truncation or cancellation error): worst 7.7e-15 (was 1e-10).
RTOL_CS = measured(1e-12, 7.7e-15, OVER)
#: Fast path vs product: two evaluations of the same few O(1) terms (|q| ≤ 20 rad): worst 9.1e-16.
RTOL_FAST = measured(1e-13, 9.1e-16, OVER + " (15 joints each)")
#: sympy evaluated at numbers vs the numeric recursions (evaluate_float sums in its own order).
RTOL_SYM = measured(1e-12, 2.1e-15, "the sympy tests at 20 further random seeds under 3 kernels")
#: One screw joint's pose, Pinocchio vs the closed form pitch·q·axis, Rodrigues' rotation: the test's
#: screw gives 2.8e-16, 1,000 random screws (axis, pitch ±0.5, q ±π) up to 1.05e-15 (1e-15 was exceeded).
RTOL_POSE = measured(2e-14, 1.05e-15, "1,000 random screws under 3 kernels")


def unit(v):
    v = np.asarray(v, dtype=float)
    return v / np.linalg.norm(v)


def random_axis(rng):
    return unit(rng.normal(size=3))


def joint_model(parents, specs, seed):
    """A model with the given parents and joints ``specs`` = [(kinds, pitches), ...].

    Axes, placements and inertias are seeded random; pitches in m/rad.
    """
    rng = np.random.default_rng(seed)
    joints = [Joint(kinds, np.array([random_axis(rng) for _ in kinds]), name=f"j{k}", pitch=pitch)
              for k, (kinds, pitch) in enumerate(specs)]
    places = [(opalg.model.builders.random_rotation(rng), rng.uniform(-0.5, 0.5, 3)) for _ in specs]
    inert = [opalg.model.builders.random_inertia(rng) for _ in specs]
    return opalg.Model(parents, joints, places, inert)


# Mixed multi-axis joints: every ordered pair of R, P, H appears in some sequence.
MIXED_SPECS = [(["R", "H"], [None, 0.15]), (["H", "P", "R"], [-0.1, None, None]), (["P", "H"], [None, 0.3]),
               (["H", "H", "R"], [0.05, -0.2, None]), ("H", 0.12), (["R", "P", "H"], [None, None, -0.07]),
               (["H", "R"], [0.5, None])]


def helical_chain(seed):
    """Every joint helical, pitches of both signs, one large (0.5 m/rad)."""
    pitches = [0.1, -0.2, 0.5, 0.03, -0.15, 0.2]
    return joint_model(list(range(-1, 5)), [("H", h) for h in pitches], seed)


CASES = {
    "helical-chain": lambda: helical_chain(0),
    "mixed-chain": lambda: joint_model(list(range(-1, 6)), MIXED_SPECS, 1),
    "mixed-tree": lambda: joint_model([-1, 0, 0, 1, 1, 2, -1], MIXED_SPECS, 2),
    "all-tree-s3": lambda: opalg.random_model(10, "tree", seed=3, joints="all"),
    "all-chain-s4": lambda: opalg.random_model(8, "chain", seed=4, joints="all"),
}


def test_cases_have_helical_axes():
    """Guard: each case has helical axes; the random ones also multi-axis and spherical joints."""
    for name, make in CASES.items():
        m = make()
        assert any("H" in j.kinds for j in m.joints), name
    m = CASES["all-tree-s3"]()
    assert any(j.ndof > 1 and "H" in j.kinds for j in CASES["mixed-tree"]().joints)
    assert any(j.kinds == ("R", "R", "R") for j in m.joints)
    assert max(len(c) for c in m.children) >= 2


# --------------------------------------------------------------------------- Pinocchio
@pytest.mark.verifies("K2", route="helical joint pose: Pinocchio and opalg vs pitch·q·axis and Rodrigues")
def test_pinocchio_pitch_convention():
    """Pinocchio's helical joint translates pitch·q along its axis, as opalg's (forward kinematics)."""
    axis, pitch, q = unit([1.0, -2.0, 0.5]), 0.3, 1.7
    pm = pin.Model()
    jid = pm.addJoint(0, pin.JointModelHelicalUnaligned(axis, pitch), pin.SE3.Identity(), "screw")
    pd = pm.createData()
    pin.forwardKinematics(pm, pd, np.array([q]))
    assert_close(pd.oMi[jid].translation, pitch * q * axis, RTOL_POSE, "Pinocchio translation")
    assert_close(pd.oMi[jid].rotation, spatial.rotation_about(axis, q), RTOL_POSE, "Pinocchio rotation")
    m = opalg.Model([-1], [Joint.helical(axis, pitch)], [(np.eye(3), np.zeros(3))],
                    [(1.0, np.zeros(3), np.eye(3))])
    R, p = opalg.body_poses(m, np.array([q]))
    assert_close(p[0], pitch * q * axis, RTOL_POSE, "opalg translation")
    assert_close(R[0], pd.oMi[jid].rotation, RTOL_POSE, "opalg rotation")


@pytest.mark.verifies("K2", "C3", "C2", "E9",
                      route="crba, rnea, aba vs Pinocchio built joint by joint (helical and multi-axis joints)")
@pytest.mark.parametrize("case", list(CASES))
def test_dynamics_against_pinocchio(case):
    """crba, rnea (gravity on) and aba vs Pinocchio at seeded states; q up to ±π."""
    model = CASES[case]()
    tw = build_pinocchio(model)
    rng = np.random.default_rng(7)
    for _ in range(3):
        q = rng.uniform(-np.pi, np.pi, model.ndof)
        qd, qdd = rng.normal(size=(2, model.ndof))
        Mp = np.asarray(pin.crba(tw.model, tw.data, tw.q(q)))
        Mp = tw.from_vv(np.triu(Mp) + np.triu(Mp, 1).T)  # Pinocchio fills the upper triangle
        assert_close(opalg.crba(model, q), Mp, RTOL_PIN, f"{case}: crba")
        tau_p = tw.from_v(pin.rnea(tw.model, tw.data, tw.q(q), tw.v(qd), tw.v(qdd)))
        scale = max(np.linalg.norm(tau_p), np.linalg.norm(Mp, 2) * np.linalg.norm(qdd))
        assert_close(opalg.rnea(model, q, qd, qdd), tau_p, RTOL_PIN, f"{case}: rnea", scale)
        tau = rng.normal(size=model.ndof) * 10
        qdd_p = tw.from_v(pin.aba(tw.model, tw.data, tw.q(q), tw.v(qd), tw.v(tau)))
        assert_close(opalg.aba(model, q, qd, tau), qdd_p, cond_tol(np.linalg.cond(Mp), K_ABA), f"{case}: aba")


@pytest.mark.verifies("K2", "C2", route="batched rnea of a helical chain vs Pinocchio state by state")
def test_batched_helical_against_pinocchio():
    """A batch of states through the fast path (gemm route, B > 1) vs Pinocchio state by state."""
    model = helical_chain(5)
    tw = build_pinocchio(model)
    Q, QD, QDD = np.random.default_rng(8).uniform(-3, 3, size=(3, 6, model.ndof))
    tau = opalg.rnea(model, Q, QD, QDD)
    for q, qd, qdd, t in zip(Q, QD, QDD, tau):
        tp = tw.from_v(pin.rnea(tw.model, tw.data, tw.q(q), tw.v(qd), tw.v(qdd)))
        assert_close(t, tp, RTOL_PIN, "batched rnea")


# --------------------------------------------------------------------------- complex-step poses
MIXED_POSE_CASES = ["mixed-chain", "mixed-tree", "all-tree-s3"]


@pytest.mark.verifies("K2", "C1b", route="V vs complex-step pose rates on R/P/H multi-axis joints")
@pytest.mark.parametrize("case", MIXED_POSE_CASES)
def test_body_velocity_is_pose_rate(case):
    """V from the kinematics recursion = [Rᵀ vee(ṘRᵀ); Rᵀṗ], the complex-step pose rate along q̇."""
    model = CASES[case]()
    q, qd = np.random.default_rng(11).normal(size=(2, model.ndof))
    V = body_kinematics(model, q, qd).V
    R, _, Rd, pd = pose_derivative(model, q, qd)
    for k in range(model.n):
        V_ref = np.concatenate([R[k].T @ vee(Rd[k] @ R[k].T), R[k].T @ pd[k]])
        assert_close(V[k], V_ref, RTOL_CS, f"{case}: V of body {k} ({model.joints[k]})")


@pytest.mark.verifies("K2", "C3", "C4",
                      route="crba and bias vs pose Hessian and complex-step Lagrangian terms (R/P/H axes)")
@pytest.mark.parametrize("case", MIXED_POSE_CASES)
def test_mass_matrix_and_bias_from_poses(case):
    """crba = kinetic-energy Hessian from pose Jacobians; bias = Lagrangian terms (checks c_J of R/P/H)."""
    model = CASES[case]()
    q, qd = np.random.default_rng(12).normal(size=(2, model.ndof))
    assert_close(opalg.crba(model, q), mass_matrix_from_poses(model, q), RTOL_CS, f"{case}: crba")
    assert_close(opalg.bias(model, q, qd, gravity=False), lagrangian_bias(model, q, qd, gravity=False),
                 RTOL_CS, f"{case}: Coriolis bias")
    assert_close(opalg.bias(model, q, qd), lagrangian_bias(model, q, qd), RTOL_CS, f"{case}: bias")


# --------------------------------------------------------------------------- registry, fast path
@pytest.mark.verifies("K2", route="dX/dq by complex step vs −crm(s)X for every axis kind")
@pytest.mark.parametrize("code", sorted(AXIS_KINDS))
def test_kind_transform_generated_by_its_axis(code):
    """d/dq X_i(q) = −crm(s_i) X_i(q) (complex step): s_i and X_i(q) describe one screw, every kind."""
    rng = np.random.default_rng(3)
    kind, s, h = AXIS_KINDS[code], random_axis(rng), (0.37 if AXIS_KINDS[code].pitched else None)
    q = np.array([-2.0, 0.3, 4.0])
    X = kind.transform(s, h, q + 1j * H_CS)
    dX = np.imag(X) / H_CS
    assert_close(dX, -spatial.crm(kind.local(s, h)) @ np.real(X), RTOL_CS, f"{code}: generator")


FAST_BATCHES = [(), (5,), (2, 3)]


@pytest.mark.verifies("K2", route="fast-path transform vs the generic product X_J(q) X_T")
@pytest.mark.parametrize("code", sorted(AXIS_KINDS))
@pytest.mark.parametrize("batch", FAST_BATCHES, ids=[str(b) for b in FAST_BATCHES])
def test_fast_path_equals_product(code, batch):
    """TreeTransform (Σ f_i(q) C_i) = joint_transform(q) X_T, float and complex, batched."""
    rng = np.random.default_rng(4)
    for trial in range(5):
        j = Joint(code, random_axis(rng), pitch=rng.uniform(-0.5, 0.5) if code == "H" else None)
        R_T, r_T = opalg.model.builders.random_rotation(rng), rng.uniform(-1, 1, 3)
        X_T = spatial.motion_transform(R_T.T, r_T)
        q = rng.uniform(-20, 20, batch)
        fast = TreeTransform(j, R_T, r_T)
        assert_close(fast(q), joint_transform(j, q[..., None])[0] @ X_T, RTOL_FAST, f"{code} float")
        qc = q + 1e-3j * rng.normal(size=batch)  # the complex route (no gemm): same formula
        assert_close(fast(qc), joint_transform(j, qc[..., None])[0] @ X_T, RTOL_FAST, f"{code} complex")


def _rational_rotation(v):
    """An exactly orthogonal rational matrix: the Cayley transform (I − A)⁻¹(I + A), A = v~."""
    A = sp.Matrix([[0, -v[2], v[1]], [v[2], 0, -v[0]], [-v[1], v[0], 0]])
    return np.array(((sp.eye(3) - A).inv() * (sp.eye(3) + A)).tolist(), dtype=object)


@pytest.mark.verifies("K2", route="fast-path coefficients vs the product, exactly in sympy")
@pytest.mark.parametrize("code", sorted(AXIS_KINDS))
def test_fast_path_coefficients_sympy_exact(code):
    """C_0 + Σ f_i(q) C_i − X_i(q) X_T expands to exactly 0 for symbolic q, pitch and offset.

    At the kind level (``coefficients``, ``basis``, ``transform``), because Joint turns
    all-number axes into floats; the axis (2, 1, −2)/3 and the Cayley rotation are exact
    rational unit/orthogonal data, so every identity the derivation uses holds exactly.
    """
    q, h, x = sp.symbols("q h x")
    kind = AXIS_KINDS[code]
    s = np.array([sp.Rational(2, 3), sp.Rational(1, 3), -sp.Rational(2, 3)], dtype=object)
    R_T = _rational_rotation([sp.Rational(1, 2), -sp.Rational(1, 3), sp.Rational(1, 4)])
    r_T = np.array([x, sp.Rational(1, 5), -1], dtype=object)
    pitch = h if kind.pitched else None
    C = kind.coefficients(s, pitch, R_T, r_T)
    f = kind.basis(np.array(q, dtype=object))
    assert len(C) == len(f) + 1
    fast = C[0] + sum(fi * Ci for fi, Ci in zip(f, C[1:]))
    product = kind.transform(s, pitch, np.array(q, dtype=object)) @ spatial.motion_transform(R_T.T, r_T)
    assert all(sp.expand(e) == 0 for e in (fast - product).ravel())   # exact: rational sympy


@pytest.mark.parametrize("code", sorted(AXIS_KINDS))
def test_fast_path_sympy_q_float_geometry(code):
    """sympy q with float axes and placement: up_transform's fast path, evaluated, = the numeric one."""
    model = joint_model([-1], [(code, 0.21 if code == "H" else None)], 9)
    q = sp.Symbol("q")
    X, S = up_transform(model, 0, np.array([q], dtype=object))
    Xn = np.array([[float(e.subs(q, 0.8)) for e in row] for row in X])
    assert_close(Xn, up_transform(model, 0, np.array([0.8]))[0], RTOL_SYM, f"{code}: sympy fast path")


# --------------------------------------------------------------------------- sympy dynamics
SYMPY_JOINTS = {
    "RP": (["R", "P"], None),
    "PR": (["P", "R"], None),
    "PPP": (["P", "P", "P"], None),
    "RH": (["R", "H"], [None, 0.2]),
    "HHR": (["H", "H", "R"], [0.1, -0.3, None]),
}


def _two_body(kinds, pitch, seed):
    """The multi-axis joint on body 0 and a revolute body 1 hanging from it."""
    return joint_model([-1, 0], [(kinds, pitch), ("R", None)], seed)


def _evaluate(A, subs):
    # sympy's expressions, evaluated at the numbers (each shared subexpression once)
    return evaluate_float(A, subs)


def _symbols_and_numbers(N, seed):
    """sympy q, q̇, q̈ (object arrays), numbers for them, and the substitution dict."""
    syms = [np.array(sp.symbols(f"{c}0:{N}"), dtype=object) for c in ("q", "v", "a")]
    nums = np.random.default_rng(seed).normal(size=(3, N))
    subs = {x: sp.Float(v) for S, n in zip(syms, nums) for x, v in zip(S, n)}
    return syms, nums, subs


@pytest.mark.verifies("K2", "C3", "C2",
                      route="sympy crba and rnea evaluated at numbers vs the numeric recursions")
@pytest.mark.parametrize("name", list(SYMPY_JOINTS))
def test_sympy_crba_rnea_multi_axis(name):
    """crba and rnea with sympy q, q̇, q̈ equal the numeric results after substituting numbers.

    crba on the two-body model (the joint's S(q) seen by a child); rnea (gravity on, so
    c_J, the bias and the base acceleration all enter) on the joint's body alone: the
    unsimplified two-body RNEA of HHR has ~10⁶ operations and takes a minute to evaluate.
    """
    kinds, pitch = SYMPY_JOINTS[name]
    model = _two_body(kinds, pitch, seed=21)
    (q, _, _), (nq, _, _), subs = _symbols_and_numbers(model.ndof, 22)
    assert_close(_evaluate(opalg.crba(model, q), subs), opalg.crba(model, nq), RTOL_SYM, f"{name}: crba")
    one = joint_model([-1], [(kinds, pitch)], 21)
    (q, qd, qdd), (nq, nqd, nqdd), subs = _symbols_and_numbers(one.ndof, 23)
    assert_close(_evaluate(opalg.rnea(one, q, qd, qdd), subs), opalg.rnea(one, nq, nqd, nqdd),
                 RTOL_SYM, f"{name}: rnea")


def test_sympy_pitch_and_axis():
    """A symbolic pitch h and a symbolic axis (c, s, 0): rnea and crba (numeric states) evaluate,
    with h, c = cos θ, s = sin θ substituted, to those of the numeric model."""
    h, c, s = sp.symbols("h c s")
    num = _two_body(["R", "H"], [None, 0.25], seed=23)
    a1 = num.joints[0].axes[1]
    pitch_only = Joint(["R", "H"], [[1.0, 0, 0], a1], pitch=[None, h])
    assert pitch_only.axes.dtype == object and pitch_only.pitches == (None, h)
    assert opalg.Model(num.parents, [pitch_only, num.joints[1]], num.placements, num.inertias).symbolic
    theta = 0.7
    j = Joint(["R", "H"], np.array([[c, s, 0], list(a1)], dtype=object), name="j0", pitch=[None, h])
    sym = opalg.Model(num.parents, [j, num.joints[1]], num.placements, num.inertias)
    ref = opalg.Model(num.parents, [Joint(["R", "H"], [[np.cos(theta), np.sin(theta), 0.0], a1],
                                          pitch=[None, 0.25]), num.joints[1]], num.placements, num.inertias)
    x = np.random.default_rng(24).normal(size=(3, sym.ndof))
    subs = {h: sp.Float(0.25), c: sp.Float(np.cos(theta)), s: sp.Float(np.sin(theta))}
    assert_close(_evaluate(opalg.rnea(sym, *x), subs), opalg.rnea(ref, *x), RTOL_SYM, "rnea")
    # crba's output takes its dtype from S too: the symbolic axis enters ℳ only through S
    assert_close(_evaluate(opalg.crba(sym, x[0]), subs), opalg.crba(ref, x[0]), RTOL_SYM, "crba")


# --------------------------------------------------------------------------- API and errors
def test_helical_constructors_agree():
    """Joint.helical = Joint("helical", pitch=); Joint is one class under every module path that names it."""
    assert opalg.Joint is opalg.model.multibody.Joint is opalg.model.joints.Joint is Joint
    a = Joint.helical([0, 0, 1.0], 0.02, "nut")
    b = Joint("helical", [0, 0, 1.0], "nut", pitch=0.02)
    assert a.kinds == b.kinds == ("H",) and a.pitches == b.pitches == (0.02,) and a.name == "nut"
    assert np.array_equal(a.motion_subspace_local(), [[0, 0, 1, 0, 0, 0.02]])   # exact: the axis and pitch as given
    assert Joint("R", [0, 0, 1.0]).pitches == (None,)
    with pytest.raises(ValueError):  # the cached subspace is shared: read-only
        a.motion_subspace_local()[0, 0] = 2.0


@pytest.mark.parametrize("kind, pitch, msg", [
    ("H", None, r"joint 'j': axis 0 is helical and needs a pitch"),
    (["R", "H"], [None, None], r"joint 'j': axis 1 is helical and needs a pitch"),
    ("R", 0.1, r"joint 'j': axis 0 is revolute; only helical axes take a pitch"),
    ("P", 0.0, r"joint 'j': axis 0 is prismatic; only helical axes take a pitch"),
    (["R", "H"], [0.1, 0.1], r"joint 'j': axis 0 is revolute; only helical"),
    ("H", np.nan, r"joint 'j': axis 0 has non-finite pitch nan"),
    ("H", np.inf, r"joint 'j': axis 0 has non-finite pitch inf"),
    ("H", "0.1", r"joint 'j': axis 0 has pitch '0.1'; a pitch must be a real number"),
    ("H", 1j, r"joint 'j': axis 0 has pitch 1j; a pitch must be a real number"),
    ("H", True, r"joint 'j': axis 0 has pitch True; a pitch must be a real number"),
    ("H", sp.oo, r"joint 'j': axis 0 has pitch oo; a pitch must be finite and real"),
    ("H", sp.I, r"joint 'j': axis 0 has pitch I; a pitch must be finite and real"),
    (["H", "R"], 0.1, r"joint 'j': a multi-axis joint takes one pitch per axis"),
    (["H", "R"], [0.1], r"joint 'j': 1 pitches for 2 axes"),
])
def test_pitch_errors(kind, pitch, msg):
    axes = [0, 0, 1.0] if isinstance(kind, str) else [[0, 0, 1.0], [1.0, 0, 0]]
    with pytest.raises(ModelError, match=msg):
        Joint(kind, axes, name="j", pitch=pitch)


def test_helical_dependence_at_zero():
    """Two helical axes of equal axis and pitch are dependent; H and R about one axis are not."""
    z = [0, 0, 1.0]
    with pytest.raises(ModelError, match=r"joint 'j'.*dependent.*kinds HH"):
        Joint(["H", "H"], [z, z], name="j", pitch=[0.1, 0.1])
    assert Joint(["H", "R"], [z, z], pitch=[0.1, None]).ndof == 2
    assert Joint(["H", "H"], [z, z], pitch=[0.1, -0.1]).ndof == 2


def test_to_urdf_refuses_helical():
    model = CASES["mixed-chain"]()
    with pytest.raises(ModelError, match=r"to_urdf: body 0 \(body0\): joint 'j0' has a helical axis"):
        opalg.model.urdf.to_urdf(model)


def test_random_model_all_kinds():
    """joints="all" draws every kind (helical pitch in [-0.2, 0.2]) and is reproducible."""
    seen, pitches = set(), []
    for seed in range(6):
        m = opalg.random_model(10, "tree", seed=seed, joints="all")
        seen |= {"".join(j.kinds) for j in m.joints}
        pitches += [p for j in m.joints for p in j.pitches if p is not None]
    assert {"R", "P", "H", "RRR"} <= seen and any(len(k) > 1 and "H" in k for k in seen)
    assert pitches and max(abs(p) for p in pitches) <= 0.2
    a, b = (opalg.random_model(7, "chain", seed=9, joints="all") for _ in range(2))
    q = np.linspace(-1, 1, a.ndof)
    assert np.array_equal(opalg.crba(a, q), opalg.crba(b, q))   # exact: the same model, the same operations
    with pytest.raises(ValueError, match="'all'"):
        opalg.random_model(3, joints="every")
