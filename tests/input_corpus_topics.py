"""The bad-input corpus, part 2: the topic packages, simulate and constrained (see input_corpus_core).

Small models only; every bad call is refused before any integration or lambdify starts.
"""

from __future__ import annotations

import warnings

import numpy as np
import sympy as sp

import opalg
from opalg import InfeasibleDirections, ModelError, OpalgError, StateError  # noqa: F401
from opalg import closed, fijany, flex, floating, ider, quasi, simulate, symbolic as sy, underactuated as ua
from opalg.algorithms import constrained as co
from opalg.closed.examples_arms import two_planar_arms
from opalg.ider import panel  # noqa: F401
from opalg.symbolic import Body, Hinge, RootMotion, TreeSystem

from input_corpus_core import CONST, EXC, NAN, INF, RESULT, Bad, Exempt, Good, same_as, complex_step

M3 = opalg.random_model(3, seed=0)
N3 = M3.ndof
Z = np.zeros(N3)
FM = flex.examples.two_link_arm(modes=1)
FZ = np.zeros(FM.ndof)
SYS4, Q4 = closed.four_bar()
EX = two_planar_arms()
ZS = [np.zeros(3)] * 2
ARM = opalg.planar_arm([1.0, 1.0], [1.0, 1.0], [0.1, 0.1])
A2 = np.zeros(2)
FL = opalg.random_model(3, seed=0, floating=True)
QF = opalg.neutral(FL)
ZJ = np.zeros(FL.nv - 6)
SYS1 = TreeSystem([0], [Hinge(1)], [Body(1, (0.5, 0, 0), np.eye(3) * 0.1)])
MASS = sp.Symbol("m", positive=True)
SYSM = TreeSystem([0], [Hinge(1)], [Body(MASS, (1, 0, 0))])
ACRO = ua.acrobot()


def ACRO_LQR():
    """The LQR of the upright Acrobot (for the swing_up_and_balance cases)."""
    return ua.lqr(ACRO.model, [np.pi / 2, 0.0], A2, A2, np.eye(4), np.eye(1), ACRO.passive)
BC = np.ones((1, 3))
I3 = np.eye(3)
NONSYM = np.triu(np.ones((3, 3))) + np.eye(3)
SPAN = (0.0, 0.01)
Z3 = np.zeros(3)
V4 = np.zeros(len(Q4))


def quiet(f, *args, **kw):
    """f(*args, **kw) with its DeprecationWarning (an old keyword) silenced."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", DeprecationWarning)
        return f(*args, **kw)


def solve_args(M=I3, Q=np.zeros(3), F=np.zeros(3), B=BC, h=(0.0,), Z=BC):
    return M, Q, F, B, h, Z


def fb(**kw):
    """A one-node flexible body with one mode, with ``kw`` replacing an argument."""
    args = dict(hub=(1.0, np.zeros(3), np.eye(3)), node_positions=[[1.0, 0, 0]],
                node_inertias=[(0.2, np.zeros(3), 0.01 * np.eye(3))], Phi=np.ones((1, 3, 1)), K=[[1.0]])
    args.update(kw)
    return flex.FlexBody(**args)


FZ32 = FZ.astype(np.float32)
FXC = FZ + 0j
FXC[-1] += 1e-20j

TOPICS = {
    # ---------------------------------------------------------------- flex
    "opalg.flex.linearize": [
        Bad(lambda: flex.linearize(M3, Z, Z, Z), ModelError, r"\bfm\b.*FlexModel"),
        Bad(lambda: flex.linearize(FM, FZ[:-1], FZ, FZ), StateError, r"\bx\b.*shape"),
        Bad(lambda: flex.linearize(FM, FZ, FZ, np.full(FM.ndof, NAN)), StateError, r"\btau\b"),
        Bad(lambda: flex.linearize(FM, FZ, FXC, FZ), StateError, r"\bv\b.*real"),
        Bad(lambda: flex.linearize(FM, sp.symbols("a0:4"), FZ, FZ), StateError, r"\bx\b.*sympy"),
        Bad(lambda: flex.linearize(FM, FZ, np.full(FM.ndof, 1e200), FZ), StateError, r"flex\.linearize.*overflow.*\bv\b"),
        Bad(lambda: flex.linearize(FM, FZ, FZ, FZ, passive=[True]), StateError, "passive"),
        Bad(lambda: flex.linearize(FM, FZ, FZ, FZ, passive=[1, 0, 1, 0]), StateError, "passive"),
        Bad(lambda: flex.linearize(FM, FZ, FZ, FZ, gravity="no"), StateError, "gravity"),
        Good(lambda: np.hstack(flex.linearize(FM, FZ32, FZ, FZ)),
             same_as(lambda *a: np.hstack(flex.linearize(*a)), FM, FZ, FZ, FZ)),
    ],
    "opalg.flex.crba": [
        Bad(lambda: flex.crba("x", FZ), ModelError, r"\bfm\b.*FlexModel"),
        Bad(lambda: flex.crba(FM, FZ[:-1]), StateError, r"\bx\b"),
        Bad(lambda: flex.crba(FM, ["a"] * FM.ndof), StateError, r"\bx\b"),
        Good(lambda: flex.crba(FM, FZ32), same_as(flex.crba, FM, FZ)),
    ],
    "opalg.flex.rnea": [
        Bad(lambda: flex.rnea(FM, FZ, FZ, FZ, gravity="no"), StateError, "gravity"),
        Bad(lambda: flex.rnea(FM, FZ, np.full(FM.ndof, NAN), FZ), StateError, r"\bv\b"),
        Good(lambda: flex.rnea(FM, FXC, FZ, FZ), complex_step(lambda x: flex.rnea(FM, x, FZ, FZ), FZ, FM.ndof - 1)),
    ],
    "opalg.flex.aba": [
        Bad(lambda: flex.aba(FM, FZ, np.full(FM.ndof, 1e200), FZ), StateError, "flex.aba.*overflow.*v"),
        Bad(lambda: flex.aba(FM, 0, 1e200, 0), StateError, r"\bx\b"),
        Bad(lambda: flex.aba(FM, FZ, FZ, FZ, gravity=None), StateError, "gravity"),
        Bad(lambda: flex.aba(None, FZ, FZ, FZ), ModelError, r"\bfm\b"),
    ],
    "opalg.flex.hybrid": [
        Bad(lambda: flex.hybrid(FM, FZ, FZ, [0.0, 0.0], gravity="no"), StateError, "gravity"),
        Bad(lambda: flex.hybrid(FM, FZ, FZ, [NAN, 0.0]), StateError, "theta_dd"),
        Bad(lambda: flex.hybrid(FM, FZ, FZ, [0.0, 0.0], tau_eta="x"), StateError, "tau_eta"),
    ],
    "opalg.flex.operators": [Bad(lambda: flex.operators(FM, FZ, passive=[99]), StateError, "passive"),
                             Bad(lambda: flex.operators(FM, np.full(FM.ndof, INF)), StateError, r"\bx\b")],
    "opalg.flex.FlexOperators": [Bad(lambda: flex.FlexOperators(FM, FZ, gravity="yes"), StateError, "gravity")],
    "opalg.flex.FlexBody": [
        Bad(lambda: fb(Phi=np.full((1, 3, 1), 1j)), ModelError, "Phi.*real"),
        Bad(lambda: fb(hub=(NAN, np.zeros(3), np.eye(3))), ModelError, "hub.*mass"),
        Bad(lambda: fb(node_positions=[[NAN, 0, 0]]), ModelError, "node_positions"),
        Bad(lambda: fb(K=[[-1.0]]), ModelError, r"\bK\b"),
        Bad(lambda: fb(name=1), ModelError, "name"),
        Bad(lambda: fb(Phi="abc"), ModelError, "Phi"),
    ],
    "opalg.flex.FlexModel": [
        Bad(lambda: flex.FlexModel([-1], [opalg.Joint("R", [0, 0, 1.0])], [(np.eye(3), np.zeros(3))], ["x"]),
            ModelError, "bod"),
        Bad(lambda: flex.FlexModel([-1], [opalg.Joint("R", [0, 0, 1.0])], [(np.eye(3), np.zeros(3))], [fb()],
                                   gravity=(0, 0, NAN)), ModelError, "gravity"),
    ],
    "opalg.flex.examples": Exempt("a module of example models (its functions are covered by test_flex*)"),
    # ---------------------------------------------------------------- fijany
    "opalg.fijany.forward": [
        Bad(lambda: fijany.forward("panda", Z, Z, Z), ModelError, "model"),
        Bad(lambda: fijany.forward(M3, Z, Z, Z, gravity="no"), StateError, "gravity"),
        Bad(lambda: fijany.forward(M3, Z, Z, Z, method="bogus"), StateError, "method"),
        Bad(lambda: fijany.forward(M3, Z, np.full(N3, 1e200), Z), StateError, "overflow"),
        Bad(lambda: fijany.forward(M3, Z + 1e-20j, Z, Z), StateError, "real"),
    ],
    "opalg.fijany.constraint_directions": [
        Bad(lambda: fijany.constraint_directions(np.ones((6, 7))), StateError, r"\bS\b.*shape"),
        Bad(lambda: fijany.constraint_directions(np.zeros((6, 1))), StateError, r"\bS\b.*rank"),
        Bad(lambda: fijany.constraint_directions(np.full((6, 1), NAN)), StateError, r"\bS\b"),
        Bad(lambda: fijany.constraint_directions("abc"), StateError, r"\bS\b"),
        Bad(lambda: fijany.constraint_directions(np.full((6, 1), 1j)), StateError, r"\bS\b.*real"),
    ],
    "opalg.fijany.factors": [Bad(lambda: fijany.factors("x", Z), ModelError, "model"),
                             Bad(lambda: fijany.factors(M3, np.full(N3, NAN)), StateError, r"\bq\b")],
    "opalg.fijany.depth_levels": [Bad(lambda: fijany.depth_levels("x"), ModelError, "model")],
    "opalg.fijany.critical_path": [
        Bad(lambda: fijany.critical_path(M3, Z, Z, Z, algorithm="bogus"), StateError, "algorithm"),
        Bad(lambda: fijany.critical_path(M3, ["a"] * N3, Z, Z), StateError, r"\bq\b")],
    "opalg.fijany.CriticalPath": RESULT, "opalg.fijany.Factors": RESULT,
    # ---------------------------------------------------------------- closed
    "opalg.closed.four_bar": [
        Bad(lambda: closed.four_bar(lengths=(NAN, 3, 2, 2.5)), StateError, "lengths"),
        Bad(lambda: closed.four_bar(masses=(1, -2, 1)), StateError, "masses"),
        Bad(lambda: closed.four_bar(crank="a"), StateError, "crank"),
        Bad(lambda: closed.four_bar(closure="bogus"), StateError, "closure"),
        Bad(lambda: closed.four_bar(lengths=(1, 100, 1, 1)), OpalgError, "assembl|close|crank|reach|four"),
    ],
    "opalg.closed.random_closed_system": [
        Bad(lambda: closed.random_closed_system(2.5, 1, seed=0), ModelError, r"\bn\b"),
        Bad(lambda: closed.random_closed_system(4, 1, seed=0, kinds=("x",)), StateError, "kinds"),
        Bad(lambda: closed.random_closed_system(4, 1, seed="0"), StateError, "seed"),
        Bad(lambda: closed.random_closed_system(4, "1", seed=0), StateError, "n_loops"),
    ],
    "opalg.closed.ClosedSystem": [
        Bad(lambda: closed.ClosedSystem("x", []), OpalgError, "model"),
        Bad(lambda: closed.ClosedSystem(SYS4.model, SYS4.closures, rcond=-1), OpalgError, "rcond"),
        Bad(lambda: closed.ClosedSystem(SYS4.model, ["x"]), OpalgError, "closure"),
        Bad(lambda: SYS4.jacobian(np.full(len(Q4), NAN)), StateError, r"\bq\b"),
        Bad(lambda: SYS4.forward(Q4, np.zeros(1), np.zeros(len(Q4))), StateError, r"\bqd\b"),
    ],
    "opalg.closed.LoopClosure": [
        Bad(lambda: closed.LoopClosure((0, Z3), (1, Z3), kind="bogus"), OpalgError, "kind"),
        Bad(lambda: closed.LoopClosure((0, Z3), (1, Z3), rows=[9]), OpalgError, "rows"),
        Bad(lambda: closed.LoopClosure("nope", (1, Z3)), OpalgError, "frame1"),
        Bad(lambda: closed.LoopClosure((0, [NAN, 0, 0]), (1, Z3)), OpalgError, "frame1|origin"),
    ],
    "opalg.closed.solve_compliance": [
        Bad(lambda: closed.solve_compliance(np.full((2, 2), NAN), np.ones(2)), StateError, r"\bA\b"),
        Bad(lambda: closed.solve_compliance(np.eye(2), np.ones(3)), StateError, r"\br\b"),
        Bad(lambda: closed.solve_compliance(np.eye(2), np.ones(2), rcond="x"), StateError, "rcond"),
        Bad(lambda: closed.solve_compliance("A", np.ones(2)), StateError, r"\bA\b"),
    ],
    "opalg.closed.linearize": [
        Bad(lambda: closed.linearize("sys", Q4, V4, V4), ModelError, "system"),
        Bad(lambda: closed.linearize(SYS4, Q4[:2], V4, V4), StateError, r"\bq\b"),
        Bad(lambda: closed.linearize(SYS4, np.stack([Q4, Q4]), V4, V4), StateError, r"\bq\b"),
        Bad(lambda: closed.linearize(SYS4, Q4, np.full(len(Q4), NAN), V4), StateError, r"\bqd\b"),
        Bad(lambda: closed.linearize(SYS4, Q4, V4, np.full(len(Q4), INF)), StateError, r"\btau\b"),
        Bad(lambda: closed.linearize(SYS4, Q4, V4, ["a"] * len(Q4)), StateError, r"\btau\b"),
        Bad(lambda: closed.linearize(SYS4, Q4 + 0.1, V4, V4), StateError, r"\bq\b.*e\(q\)"),
        Bad(lambda: closed.linearize(SYS4, Q4, np.ones(len(Q4)), V4), StateError, r"\bqd\b.*G_c"),
        Bad(lambda: closed.linearize(SYS4, Q4, V4, V4, passive=[True]), StateError, "passive"),
        Bad(lambda: closed.linearize(SYS4, Q4, V4, V4, passive="abc"), StateError, "passive"),
        Bad(lambda: closed.linearize(SYS4, Q4, V4, V4, tol=NAN), StateError, "tol"),
    ],
    "opalg.closed.ClosedLinearization": RESULT,
    "opalg.closed.simulate": [
        Bad(lambda: closed.simulate(SYS4, Q4, V4, t_span=(0, NAN)), StateError, "t_span"),
        Bad(lambda: closed.simulate(SYS4, ["a"] * len(Q4), V4, t_span=SPAN), StateError, "q0"),
        Bad(lambda: closed.simulate(SYS4, Q4, V4, t_span=SPAN, atol=NAN), StateError, "atol"),
        Bad(lambda: closed.simulate("x", Q4, V4, t_span=SPAN), OpalgError, "system"),
    ],
    "opalg.closed.Grasp": [
        Bad(lambda: closed.Grasp(body="x"), ModelError, "body"),
        Bad(lambda: closed.Grasp(body=1.5), ModelError, "body"),
        Bad(lambda: closed.Grasp(body=0, R=np.full((3, 3), NAN)), ModelError, r"\bR\b"),
    ],
    "opalg.closed.MultiArm": [
        Bad(lambda: EX.system.forward(EX.qs, ZS, ZS, tol=-1), StateError, "tol"),
        Bad(lambda: EX.system.forward(EX.qs, ZS, ZS, gravity="no"), StateError, "gravity"),
        Bad(lambda: EX.system.forward(EX.qs[:1], ZS, ZS), StateError, "qs"),
        Bad(lambda: closed.MultiArm(EX.arms, [closed.Grasp(body=0)], 1.0), ModelError, "grasp"),
        Bad(lambda: closed.MultiArm(EX.arms, EX.system.grasps, NAN), ModelError, "object"),
    ],
    "opalg.closed.Assembly": RESULT, "opalg.closed.ForwardResult": RESULT, "opalg.closed.MultiArmResult": RESULT,
    "opalg.closed.RankDeficientWarning": Exempt("a warning class: issued, not called with user input"),
    # ---------------------------------------------------------------- quasi
    "opalg.quasi.simulate": [
        Bad(lambda: quasi.simulate(ARM, A2, A2, t_span=SPAN, gravity="no"), StateError, "gravity"),
        Bad(lambda: quasi.simulate(ARM, [NAN, 0], A2, t_span=SPAN), StateError, "q0"),
        Bad(lambda: quasi.simulate(ARM, A2, A2, t_span="abc"), StateError, "t_span"),
        Bad(lambda: quasi.simulate(ARM, A2, A2, t_span=SPAN, atol=NAN), StateError, "atol"),
        Bad(lambda: quasi.simulate(ARM, A2, A2, t_span=SPAN, method="x"), StateError, "method"),
        Bad(lambda: quasi.simulate("arm", A2, A2, t_span=SPAN), ModelError, "model"),
    ],
    "opalg.quasi.nu": [Bad(lambda: quasi.nu(ARM, A2[:1], A2), StateError, r"\bq\b"),
                       Bad(lambda: quasi.nu("x", A2, A2), ModelError, "model"),
                       Good(lambda: quasi.nu(ARM, A2.astype(np.float32) + 0.5, A2 + 1), same_as(quasi.nu, ARM, A2 + 0.5, A2 + 1))],
    "opalg.quasi.nu_dot": [
        Bad(lambda: quasi.nu_dot(ARM, A2, A2, A2, gravity="no"), StateError, "gravity"),
        Bad(lambda: quasi.nu_dot(ARM, A2, A2, A2, form="bogus"), StateError, "form"),
        Bad(lambda: quasi.nu_dot(ARM, A2, A2, A2, gravity_as="bogus"), StateError, "gravity_as"),
        Bad(lambda: quasi.nu_dot(ARM, A2, np.full(2, 1e200), A2), StateError, "overflow"),
    ],
    "opalg.quasi.qd_from_nu": [Bad(lambda: quasi.qd_from_nu(ARM, A2, [NAN, 0]), StateError, r"\bnu\b")],
    "opalg.quasi.nu_dot_from_qdd": [Bad(lambda: quasi.nu_dot_from_qdd(ARM, A2, A2, ["a", "b"]), StateError, r"\bqdd\b")],
    "opalg.quasi.articulated_rates": [Bad(lambda: quasi.articulated_rates(ARM, A2, [INF, 0]), StateError, r"\bqd\b")],
    "opalg.quasi.schur_in_nu": [
        Bad(lambda: quasi.schur_in_nu(ARM, A2, np.ones((1, 5)), np.ones((1, 2))), StateError, r"\bB\b"),
        Bad(lambda: quasi.schur_in_nu(ARM, A2, np.full((1, 2), NAN), np.ones((1, 2))), StateError, r"\bB\b"),
    ],
    "opalg.quasi.ArticulatedRates": RESULT, "opalg.quasi.NuConstraints": RESULT,
    # ---------------------------------------------------------------- floating
    "opalg.floating.arm_dofs": [
        Bad(lambda: floating.arm_dofs(FL, 99), StateError, r"\br\b"),
        Bad(lambda: floating.arm_dofs(FL, "a"), StateError, r"\br\b"),
        Bad(lambda: floating.arm_dofs(FL, -1), StateError, r"\br\b"),
        Bad(lambda: floating.arm_dofs(FL, 1), ModelError, r"\br\b"),
        Bad(lambda: floating.arm_dofs(FL, 0, config="yes"), StateError, "config"),
    ],
    "opalg.floating.coupling_inertia": [Bad(lambda: floating.coupling_inertia(FL, QF, r=99), ModelError, r"\br\b"),
                                        Bad(lambda: floating.coupling_inertia(FL, QF, r="a"), StateError, r"\br\b"),
                                        Bad(lambda: floating.coupling_inertia(FL, 2 * QF), StateError, "quaternion")],
    "opalg.floating.base_velocity": [
        Bad(lambda: floating.base_velocity(FL, QF, ZJ, full="yes"), StateError, "full"),
        Bad(lambda: floating.base_velocity(FL, QF, ZJ, h=np.full(6, NAN)), StateError, r"\bh\b"),
        Bad(lambda: floating.base_velocity(FL, QF, np.zeros(1)), StateError, "qd_joints"),
        Bad(lambda: floating.base_velocity(M3, Z, Z), ModelError, "free joint"),
    ],
    "opalg.floating.generalized_jacobian": [
        Bad(lambda: floating.generalized_jacobian(FL, QF, 99), OpalgError, "body"),
        Bad(lambda: floating.generalized_jacobian(FL, QF, "a"), OpalgError, "body"),
        Bad(lambda: floating.generalized_jacobian(FL, QF, 1, point=[NAN, 0, 0]), OpalgError, "point"),
    ],
    "opalg.floating.simulate": [
        Bad(lambda: floating.simulate(FL, QF, np.zeros(FL.nv), SPAN, gravity="no"), StateError, "gravity"),
        Bad(lambda: floating.simulate(FL, QF, np.full(FL.nv, NAN), SPAN), StateError, "v0"),
        Bad(lambda: floating.simulate(FL, 2 * QF, np.zeros(FL.nv), SPAN), StateError, "quaternion"),
    ],
    "opalg.floating.base_reaction": [
        Bad(lambda: floating.base_reaction(FL, QF, "abc", [0, 0.1]), StateError, "joint_path"),
        Bad(lambda: floating.base_reaction(FL, QF, lambda t: (ZJ,) * 3, [0, NAN]), StateError, r"\bt\b"),
    ],
    # ---------------------------------------------------------------- symbolic
    "opalg.symbolic.TreeSystem": [
        Bad(lambda: TreeSystem([0], [Hinge(1)], [Body(NAN)]), ModelError, "body 1: mass"),
        Bad(lambda: TreeSystem([0], [Hinge(1)], [Body(sp.oo)]), ModelError, "body 1: mass"),
        Bad(lambda: TreeSystem([0], [Hinge(1)], [Body(1, (NAN, 0, 0))]), ModelError, "body 1 mass centre"),
        Bad(lambda: TreeSystem([0], [Hinge(1)], [Body(1, (0, 0, 0), np.full((3, 3), NAN))]), ModelError, "inertia"),
        Bad(lambda: TreeSystem([0], [Hinge(1, offset=(sp.zoo, 0, 0))], [Body(1)]), ModelError, "hinge 1 offset"),
        Bad(lambda: TreeSystem([0], [Hinge(0, 1, axes=[[NAN, 0, 0]])], [Body(1)]), ModelError, "hinge 1 translation axes"),
        Bad(lambda: TreeSystem([0], [Hinge(1)], [Body(1)], gravity=(0, INF, 0)), ModelError, "gravity"),
        Bad(lambda: TreeSystem([0], [Hinge(True)], [Body(1)]), ModelError, "hinge 1: NR"),
        Bad(lambda: TreeSystem([0], [Hinge(1)], [Body("1")]), ModelError, "body 1: mass"),
        Bad(lambda: TreeSystem([0, 5], [Hinge(1)] * 2, [Body(1)] * 2), ModelError, r"T\(2\)"),
        Bad(lambda: SYSM.lambdify(subs={MASS: -1.0}), ModelError, "body 1: mass"),
        Bad(lambda: SYSM.lambdify(subs={MASS: NAN}), StateError, "subs"),
        Bad(lambda: SYS1.lambdify(subs={"m": 1}), StateError, "subs key"),
        Bad(lambda: SYS1.lambdify(with_bias="yes"), ModelError, "with_bias"),
    ],
    "opalg.symbolic.simulate": [
        Bad(lambda: sy.simulate(SYS1, [NAN], [0.0], t_span=SPAN), StateError, "q0"),
        Bad(lambda: sy.simulate(SYS1, [0.0], [0.0], t_span=(0, -1)), StateError, "t_span"),
        Bad(lambda: sy.simulate(SYS1, [0.0], [0.0], t_span=SPAN, springs="x"), StateError, "springs"),
        Bad(lambda: sy.simulate(SYSM, [0.0], [0.0], t_span=SPAN, subs={MASS: -2}), ModelError, "body 1: mass"),
        Bad(lambda: sy.simulate("x", [0.0], [0.0], t_span=SPAN), ModelError, "system"),
        Bad(lambda: sy.simulate(SYS1, [0.0], [0.0], t_span=SPAN, bias_method="x"), StateError, "bias_method"),
    ],
    "opalg.symbolic.Body": [Bad(lambda: TreeSystem([0], [Hinge(1)], [Body(-1)]), ModelError, "body 1: mass")],
    "opalg.symbolic.Hinge": [Bad(lambda: TreeSystem([0], [Hinge(4)], [Body(1)]), ModelError, "hinge 1: NR")],
    "opalg.symbolic.RootMotion": [
        Bad(lambda: TreeSystem([0], [Hinge(1)], [Body(1)], base=RootMotion(position=(NAN, 0, 0))), ModelError,
            "root position"),
        Bad(lambda: TreeSystem([0], [Hinge(1)], [Body(1)], base="moving"), ModelError, "base")],
    "opalg.symbolic.Tx": [Bad(lambda: sy.Tx("__import__('os')"), StateError, "angle|expected a number")],
    "opalg.symbolic.Tz": [Bad(lambda: sy.Tz(NAN), StateError, "angle|finite")],
    "opalg.symbolic.box_inertia": [Bad(lambda: sy.box_inertia(NAN, 1, 1, 1), ModelError, r"\bm\b"),
                                   Bad(lambda: sy.box_inertia(1, -1, 1, 1), ModelError, r"\ba\b"),
                                   Bad(lambda: sy.box_inertia(1, 1, "b", 1), ModelError, r"\bb\b")],
    "opalg.symbolic.deployable_example": [Bad(lambda: sy.deployable_example("bogus"), OpalgError, "dof"),
                                          Bad(lambda: sy.deployable_example(gravity=(0, NAN, 0)), ModelError, "gravity")],
    "opalg.symbolic.deployment_setup": [Bad(lambda: sy.deployment_setup("x"), ModelError, "system")],
    "opalg.symbolic.root_state": [Bad(lambda: sy.root_state(SYS1, NAN), OpalgError, "time|fixed"),
                                  Bad(lambda: sy.root_state("x", 0.0), ModelError, "system")],
    "opalg.symbolic.to_model": [Bad(lambda: sy.to_model("x"), ModelError, "system"),
                                Bad(lambda: sy.to_model(SYS1, with_root="yes"), OpalgError, "with_root|root")],
    "opalg.symbolic.carriers": [Bad(lambda: sy.carriers(None), ModelError, "system")],
    "opalg.symbolic.euler_jacobian": [Bad(lambda: sy.euler_jacobian("x", [0]), ModelError, "system")],
    "opalg.symbolic.free_bodies": [Bad(lambda: sy.free_bodies(1), ModelError, "system")],
    "opalg.symbolic.free_root_model": [Bad(lambda: sy.free_root_model("x"), ModelError, "system")],
    "opalg.symbolic.free_state": [Bad(lambda: sy.free_state("x", [0], [0]), ModelError, "system")],
    "opalg.symbolic.operator_poses": [Bad(lambda: sy.operator_poses("x"), ModelError, "system")],
    "opalg.symbolic.pose_function": [Bad(lambda: sy.pose_function("x"), ModelError, "system"),
                                     Bad(lambda: sy.pose_function(SYS1, subs=[1]), StateError, "subs")],
    "opalg.symbolic.free_deployment": [Bad(lambda: sy.free_deployment(n_out=0), StateError, "n_out"),
                                       Bad(lambda: sy.free_deployment(t_end=NAN), StateError, "t_end")],
    "opalg.symbolic.box_outlines": [Bad(lambda: sy.box_outlines(None, [0.0], {}, view="side"), OpalgError, "view")],
    "opalg.symbolic.draw_outlines": [Bad(lambda: sy.draw_outlines(None, "x"), StateError, "outlines")],
    "opalg.symbolic.COLOURS": CONST, "opalg.symbolic.FREE_COLOURS": CONST, "opalg.symbolic.FREE_ROLES": CONST,
    "opalg.symbolic.ROLES": CONST, "opalg.symbolic.ROOT_NAMES": CONST,
    "opalg.symbolic.t": Exempt("the time symbol t of sympy expressions (a constant)"),
    "opalg.symbolic.DeploymentSetup": RESULT, "opalg.symbolic.FreeDeployment": RESULT,
    "opalg.symbolic.SingularConfiguration": EXC,
    # ---------------------------------------------------------------- simulate (the seam: checked there)
    "opalg.simulate.integrate": [
        Bad(lambda: simulate.integrate(lambda t, y: -y, [1.0], (0, NAN)), StateError, "t_span"),
        Bad(lambda: simulate.integrate(lambda t, y: -y, [1.0], SPAN, atol=NAN), StateError, "atol"),
        Bad(lambda: simulate.integrate(lambda t, y: -y, ["a"], SPAN), StateError, "y0"),
        Bad(lambda: simulate.integrate(lambda t, y: -y, [1.0], SPAN, method="Euler"), StateError, "method"),
    ],
    "opalg.simulate.Event": [Bad(lambda: simulate.Event("x"), StateError, "fun")],
    "opalg.simulate.Solution": RESULT, "opalg.simulate.Trajectory": RESULT,
    # ---------------------------------------------------------------- constrained (Ider's solver API)
    "opalg.algorithms.constrained.solve_augmented": [
        Bad(lambda: co.solve_augmented(*solve_args(M=-I3)), StateError, r"\bM\b.*positive definite"),
        Bad(lambda: co.solve_augmented(*solve_args(M=np.full((3, 3), NAN))), StateError, r"\bM\b"),
        Bad(lambda: co.solve_augmented(*solve_args(M=NONSYM)), StateError, r"\bM\b.*symmetric"),
        Bad(lambda: co.solve_augmented(*solve_args(M="M")), StateError, r"\bM\b"),
        Bad(lambda: co.solve_augmented(*solve_args(M=np.eye(2))), StateError, r"\bM\b"),
        Bad(lambda: co.solve_augmented(*solve_args(h=(NAN,))), StateError, r"\bh\b"),
    ],
    "opalg.algorithms.constrained.solve_reduced": [
        Bad(lambda: co.solve_reduced(*solve_args(M=-I3)), StateError, r"\bM\b.*positive definite"),
        Bad(lambda: co.solve_reduced(*solve_args(M=NONSYM)), StateError, r"\bM\b.*symmetric"),
        Bad(lambda: co.solve_reduced(*solve_args(Z=np.ones((1, 2)))), StateError, r"\bZ\b"),
    ],
    "opalg.algorithms.constrained.conditioning": [
        Bad(lambda: co.conditioning(-I3, BC, BC), StateError, r"\bM\b"),
        Bad(lambda: co.conditioning(np.full((3, 3), NAN), BC, BC), StateError, r"\bM\b"),
        Bad(lambda: co.conditioning(NONSYM, BC, BC), StateError, r"\bM\b"),
        Bad(lambda: co.conditioning(I3, BC, np.ones((1, 2))), StateError, r"\bZ\b"),
    ],
    "opalg.algorithms.constrained.force_directions": [
        Bad(lambda: co.force_directions(np.full((1, 3), NAN)), StateError, r"\bB\b"),
        Bad(lambda: co.force_directions(BC, n_geometric=5), StateError, "n_geometric")],
    "opalg.algorithms.constrained.null_complement": [Bad(lambda: co.null_complement(np.full((1, 3), NAN)), StateError, r"\bZ\b"),
                                                     Bad(lambda: co.null_complement("x"), StateError, r"\bZ\b")],
    "opalg.algorithms.constrained.stop_event": [Bad(lambda: co.stop_event(lambda q: 1.0, tol=-1), StateError, "tol"),
                                                Bad(lambda: co.stop_event("x"), StateError, "measure")],
    "opalg.algorithms.constrained.solve_passes": [
        Bad(lambda: co.solve_passes("x", Z, Z, BC, [0.0], BC), ModelError, "model"),
        Bad(lambda: co.solve_passes(M3, Z, Z, np.ones((1, 7)), [0.0], BC), StateError, r"\bB\b")],
    "opalg.algorithms.constrained.schur_columns": [Bad(lambda: co.schur_columns(M3, Z, np.ones((1, 7)), BC), StateError, r"\bB\b")],
    "opalg.algorithms.constrained.conditioning_passes": [
        Bad(lambda: co.conditioning_passes(M3, Z, np.full((1, 3), NAN), BC), StateError, r"\bB\b"),
        Bad(lambda: co.conditioning_passes("x", Z, BC, BC), ModelError, "model")],
    "opalg.algorithms.constrained.feasibility_measure": [Bad(lambda: co.feasibility_measure(M3, "x"), StateError, "jacobian")],
    "opalg.algorithms.constrained.singular_time": [
        Bad(lambda: co.singular_time("x", lambda q: 1.0, 0.0, [0.0, 0.0], nq=1), StateError, "rhs"),
        Bad(lambda: co.singular_time(lambda t, x: x, lambda q: 1.0, NAN, [0.0, 0.0], nq=1), StateError, "t_stop"),
        Bad(lambda: co.singular_time(lambda t, x: x, lambda q: 1.0, 0.0, [0.0]), StateError, "x_stop")],
    "opalg.algorithms.constrained.Solution": RESULT,
    "opalg.algorithms.constrained.SINGULAR_TOL": CONST, "opalg.algorithms.constrained.GRAM_TOL": CONST,
    "opalg.algorithms.constrained.STOP_TOL": CONST,
    # ---------------------------------------------------------------- ider
    "opalg.ider.simulate": [
        Bad(lambda: ider.simulate(inertia="bogus"), StateError, "inertia"),
        Bad(lambda: ider.simulate(gravity="g"), StateError, "gravity"),
        Bad(lambda: ider.simulate(gravity=NAN), StateError, "gravity"),
        Bad(lambda: ider.simulate(A=[[NAN, 0, 0], [0, 1, 0]], t_span=SPAN), StateError, r"\bA\b"),
        Bad(lambda: ider.simulate(formulation="bogus"), StateError, "formulation"),
        Bad(lambda: ider.simulate(t_span=(0, NAN)), StateError, "t_span"),
    ],
    "opalg.ider.directions": [Bad(lambda: ider.directions("bogus", ider.THETA0), StateError, "preset"),
                              Bad(lambda: ider.directions(None, [NAN, 0, 0]), StateError, r"\bq\b")],
    "opalg.ider.tip": [Bad(lambda: ider.tip([0.0]), StateError, r"\bq\b"),
                       Good(lambda: ider.tip(np.float32([0.1, 0.2, 0.3])), same_as(ider.tip, np.float32([0.1, 0.2, 0.3]).astype(float)))],
    "opalg.ider.tip_jacobian": [Bad(lambda: ider.tip_jacobian("abc"), StateError, r"\bq\b")],
    "opalg.ider.tip_bias": [Bad(lambda: ider.tip_bias([INF, 0, 0], [0, 0, 0]), StateError, r"\bq\b")],
    "opalg.ider.joint_points": [Bad(lambda: ider.joint_points(None), StateError, r"\bq\b")],
    "opalg.ider.reach_measure": [Bad(lambda: ider.reach_measure([NAN, 0, 0]), StateError, r"\bq\b")],
    "opalg.ider.path": [Bad(lambda: ider.path(NAN), StateError, r"\bt\b"), Bad(lambda: ider.path("t"), StateError, r"\bt\b")],
    "opalg.ider.arm": [Bad(lambda: ider.arm(inertia="bogus"), StateError, "inertia"),
                       Bad(lambda: ider.arm(gravity=INF), StateError, "gravity")],
    "opalg.ider.sweep_directions": [Bad(lambda: ider.sweep_directions(NAN), StateError, "alpha")],
    "opalg.ider.feasibility_sweep": [Bad(lambda: ider.feasibility_sweep("abc"), StateError, "alphas")],
    "opalg.ider.initial_speeds": [Bad(lambda: ider.initial_speeds(v_A=NAN), StateError, "v_A"),
                                  Bad(lambda: ider.initial_speeds(q0=[0.0]), StateError, r"\bq\b")],
    "opalg.ider.display_limits": [Bad(lambda: ider.display_limits([0, 1], [0, 1], tail=-1), StateError, "tail")],
    "opalg.ider.kappa_series": [Bad(lambda: ider.kappa_series("x"), StateError, "kappa_series")],
    "opalg.ider.renamed": [Bad(lambda: quiet(ider.renamed, "f", {"old": 1}, {"old": "new"}, new=2), StateError, "old|new")],
    "opalg.ider.FeasibilitySeries": RESULT,
    "opalg.ider.INERTIAS": CONST, "opalg.ider.LENGTHS": CONST, "opalg.ider.MASSES": CONST, "opalg.ider.METHODS": CONST,
    "opalg.ider.PRESETS": CONST, "opalg.ider.THETA0": CONST, "opalg.ider.TIP0": CONST, "opalg.ider.V_A": CONST,
    # ---------------------------------------------------------------- underactuated
    "opalg.underactuated.task_control": [
        Bad(lambda: ua.task_control(ACRO.model, A2, A2, ACRO.passive, np.ones((1, 2)), [0.0], tol=-1), StateError, "tol"),
        Bad(lambda: ua.task_control(ACRO.model, A2, A2, ACRO.passive, np.ones((1, 2)), [0.0], tol=NAN), StateError, "tol"),
        Bad(lambda: ua.task_control(ACRO.model, A2, A2, ACRO.passive, np.full((1, 2), NAN), [0.0]), StateError, r"\bB\b"),
        Bad(lambda: ua.task_control(ACRO.model, A2, A2, ACRO.passive, np.ones((1, 2)), [0.0], gravity="no"),
            StateError, "gravity"),
    ],
    "opalg.underactuated.acrobot": [Bad(lambda: ua.acrobot("g"), StateError, "gravity"),
                                    Bad(lambda: ua.acrobot(NAN), StateError, "gravity")],
    "opalg.underactuated.pendubot": [Bad(lambda: ua.pendubot(INF), StateError, "gravity")],
    "opalg.underactuated.ider_arm": [Bad(lambda: ua.ider_arm("bogus"), StateError, "inertia")],
    "opalg.underactuated.swing_controller": [Bad(lambda: ua.swing_controller(ACRO.model, ACRO.passive, kp=NAN), StateError, "kp"),
                                             Bad(lambda: ua.swing_controller(ACRO.model, [9]), StateError, "passive")],
    "opalg.underactuated.simulate": [
        Bad(lambda: ua.simulate(ACRO.model, ACRO.passive, "x", A2, A2, t_span=SPAN), StateError, "controller"),
        Bad(lambda: ua.simulate(ACRO.model, ACRO.passive, lambda t, q, v: [0.0], q0=[NAN, 0], v0=A2, t_span=SPAN),
            StateError, "q0")],
    "opalg.underactuated.lqr": [
        Bad(lambda: ua.lqr(ACRO.model, A2, A2, A2, np.eye(4), [[NAN]], passive=ACRO.passive), StateError, r"\bR\b"),
        Bad(lambda: ua.lqr("acrobot", A2, A2, A2, np.eye(4), [[1.0]], passive=ACRO.passive), ModelError, "model")],
    "opalg.underactuated.mechanical_energy": [Bad(lambda: ua.mechanical_energy(ACRO.model, [NAN, 0.0], A2), StateError, r"\bq\b")],
    "opalg.underactuated.energy_swing_controller": [
        Bad(lambda: ua.energy_swing_controller(ACRO.model, ACRO.passive, 19.62, k3=-1.0), StateError, "k3"),
        Bad(lambda: ua.energy_swing_controller(ACRO.model, [False, True], 19.62), StateError, "passive")],
    "opalg.underactuated.swing_up_and_balance": [
        Bad(lambda: ua.swing_up_and_balance(ACRO.model, ACRO.passive, A2, A2, SPAN, "ctl"), StateError, "ctl"),
        Bad(lambda: ua.swing_up_and_balance(ACRO.model, ACRO.passive, A2, A2, SPAN, ACRO_LQR(), rho=5.0, rho_out=1.0),
            StateError, "rho_out")],
    "opalg.underactuated.lqr_controller": [Bad(lambda: ua.lqr_controller(ACRO.model, ACRO.passive, "ctl"), StateError, "ctl")],
    "opalg.underactuated.state_error": [Bad(lambda: ua.state_error(ACRO.model, "ctl"), StateError, "ctl")],
    "opalg.underactuated.check_state": [Bad(lambda: ua.check_state(M3, [NAN] * N3, "q"), StateError, r"\bq\b")],
    "opalg.underactuated.check_forces": [Bad(lambda: ua.check_forces(M3, np.zeros((2, 6)), "f_ext"), StateError, "f_ext")],
    "opalg.underactuated.check_passive": [Bad(lambda: ua.check_passive(M3, "abc"), StateError, "passive")],
    "opalg.underactuated.body_kinematics": [Bad(lambda: ua.body_kinematics(M3, Z, gravity="no"), StateError, "gravity")],
    "opalg.underactuated.overflow_guard": [Bad(lambda: ua.overflow_guard("f", lambda: np.array([INF]), {}), StateError,
                                               "f: the result overflowed")],
    "opalg.underactuated.hybrid_on": [Bad(lambda: ua.hybrid_on(M3, None, None, Z, Z), StateError, r"\bart\b")],
    "opalg.underactuated.unit_response": [Bad(lambda: ua.unit_response(M3, None), StateError, r"\bart\b")],
    "opalg.underactuated.refuse_free": [Bad(lambda: ua.refuse_free("x", "w"), ModelError, "model"),
                                        Bad(lambda: ua.refuse_free(opalg.random_model(2, seed=0, floating=True), "w"),
                                            ModelError, "free joint")],
    "opalg.underactuated.TaskSolution": RESULT, "opalg.underactuated.UnderactuatedArm": RESULT,
    "opalg.underactuated.LQR": RESULT, "opalg.underactuated.SPONG": CONST,
}
