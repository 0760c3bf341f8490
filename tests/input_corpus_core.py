"""The bad-input corpus, part 1: opalg's top-level API (layers 0-4), as a table.

Each public name maps to a list of cases: ``Bad(call, error, names)`` — the call must raise
``error`` (an opalg.errors class) with a message matching the regex ``names`` (the argument,
body or joint at fault) — or ``Good(call, check)`` — a legitimate input (float32, complex
step) whose result ``check`` verifies; or to ``Exempt(reason)`` for a class, constant or
exception that takes no input of its own.  tests/test_input_corpus.py runs the table and
fails for a public name without an entry.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Callable

import numpy as np

import opalg
from opalg import InfeasibleDirections, ModelError, StateError, URDFError  # noqa: F401
from opalg.algebra.block_ops import BlockSparse, BlockTridiagonal, cyclic, thomas
from opalg.model.urdf import to_urdf

NAN, INF = float("nan"), float("inf")


@dataclass
class Bad:
    """``call()`` raises ``error`` and its message matches the regex ``names``."""

    call: Callable
    error: type
    names: str


    #: A known defect outside this issue's files: the case is expected to fail (strict xfail), so
    #: it turns into an error the day the defect is fixed and this marker must go.
    known: str = ""


@dataclass
class Good:
    """``check(call())`` holds: a legitimate input gets the right result."""

    call: Callable
    check: Callable


@dataclass
class Exempt:
    """A name without inputs of its own to refuse (a class of results, a constant, an exception)."""

    reason: str


EXC = Exempt("an exception class: raised, not called with user input")
RESULT = Exempt("a result type that opalg builds and returns (its fields are not user input)")
CONST = Exempt("a constant (data, not an entry point)")

M3 = opalg.random_model(3, seed=0)                       # N = 3? (mixed joints: read ndof)
N3 = M3.ndof
Z = np.zeros(N3)
NANV = np.full(N3, NAN)
FL = opalg.random_model(3, seed=0, floating=True)
QF = opalg.neutral(FL)
ZV = np.zeros(FL.nv)
SPARSE = opalg.crba(M3, Z, layout="sparse")
PENDULUM = to_urdf(opalg.random_model(2, seed=1, joints="single"))

#: Tolerance of a float32 state against the float64 result at the same (float32-rounded) values:
#: check_state casts float32 to float64 exactly, so the two runs do the same arithmetic.
EXACT = 0.0


def same_as(f, *args):
    """A check: the result equals f(*args) (float64 inputs holding the same values)."""
    ref = f(*args)
    return lambda out: np.testing.assert_array_equal(np.asarray(out), np.asarray(ref))


def complex_step(f, x0, i, *rest, h=1e-20):
    """A check of a complex-step call f(x0 + ih e_i, *rest): its real part is f(x0) to rounding and
    its imaginary part / h the central difference of f along e_i (step 1e-6: error O(1e-12) for
    these O(1) functions, plus rounding 1e-16/1e-6 = 1e-10; bound 1e-7)."""
    e = np.zeros_like(x0)
    e[i] = 1.0
    fd = (f(x0 + 1e-6 * e, *rest) - f(x0 - 1e-6 * e, *rest)) / 2e-6
    ref = f(x0, *rest)

    def check(out):
        np.testing.assert_allclose(out.real, ref, rtol=0, atol=1e-14 * (1 + np.abs(ref).max()))
        np.testing.assert_allclose(out.imag / h, fd, rtol=0, atol=1e-7 * (1 + np.abs(fd).max()))
    return check


def bad_model(f, *args, **kw):
    return [Bad(lambda: f("panda", *args, **kw), ModelError, "model"),
            Bad(lambda: f(None, *args, **kw), ModelError, "model")]


Z32 = Z.astype(np.float32)
QC = Z + 0j
QC[0] += 1e-20j

CORE = {
    "opalg.rnea": [
        *bad_model(opalg.rnea, Z, Z, Z),
        Bad(lambda: opalg.rnea(M3, NANV, Z, Z), StateError, r"\bq\b"),
        Bad(lambda: opalg.rnea(M3, Z, Z[:-1], Z), StateError, r"\bqd\b"),
        Bad(lambda: opalg.rnea(M3, Z, Z, ["a"] * N3), StateError, r"\bqdd\b"),
        Bad(lambda: opalg.rnea(M3, Z, Z, Z, gravity="no"), StateError, "gravity"),
        Bad(lambda: opalg.rnea(M3, Z, np.full(N3, 1e200), Z), StateError, "rnea.*overflow"),
        Good(lambda: opalg.rnea(M3, Z32, Z32, Z32), same_as(opalg.rnea, M3, Z, Z, Z)),
        Good(lambda: opalg.rnea(M3, QC, Z, Z), complex_step(lambda q: opalg.rnea(M3, q, Z, Z), Z, 0)),
    ],
    "opalg.aba": [
        *bad_model(opalg.aba, Z, Z, Z),
        Bad(lambda: opalg.aba(M3, Z, Z, np.full(N3, INF)), StateError, r"\btau\b"),
        Bad(lambda: opalg.aba(M3, Z, Z, Z, f_ext=np.zeros((2, 6))), StateError, "f_ext"),
        Bad(lambda: opalg.aba(M3, Z, np.full(N3, 1e200), Z), StateError, "aba.*overflow"),
        Good(lambda: opalg.aba(M3, Z32, Z32, Z32), same_as(opalg.aba, M3, Z, Z, Z)),
    ],
    "opalg.bias": [*bad_model(opalg.bias, Z, Z), Bad(lambda: opalg.bias(M3, Z, "qd"), StateError, r"\bqd\b")],
    "opalg.crba": [
        *bad_model(opalg.crba, Z),
        Bad(lambda: opalg.crba(M3, Z[:1]), StateError, r"\bq\b"),
        Bad(lambda: opalg.crba(M3, Z, layout="bogus"), opalg.OpalgError, "layout"),
        Bad(lambda: opalg.crba(M3, Z, frame="bogus"), opalg.OpalgError, "frame"),
        Good(lambda: opalg.crba(M3, Z32), same_as(opalg.crba, M3, Z)),
    ],
    "opalg.minv": [*bad_model(opalg.minv, Z), Bad(lambda: opalg.minv(M3, NANV), StateError, r"\bq\b")],
    "opalg.minv_diag": [*bad_model(opalg.minv_diag, Z), Bad(lambda: opalg.minv_diag(M3, "q"), StateError, r"\bq\b")],
    "opalg.mass_matrix_diag": [*bad_model(opalg.mass_matrix_diag, Z),
                               Bad(lambda: opalg.mass_matrix_diag(M3, "q"), StateError, r"\bq\b")],
    "opalg.upsilon": [*bad_model(opalg.upsilon, Z), Bad(lambda: opalg.upsilon(M3, NANV), StateError, r"\bq\b")],
    "opalg.articulated": [*bad_model(opalg.articulated, Z),
                          Bad(lambda: opalg.articulated(M3, Z, passive=[99]), StateError, "passive")],
    "opalg.innovations_passes": [
        Bad(lambda: opalg.innovations_passes(M3, None, np.eye(N3)), StateError, r"\bart\b"),
        Bad(lambda: opalg.innovations_passes("x", None, np.eye(N3)), ModelError, "model"),
        Bad(lambda: opalg.innovations_passes(M3, opalg.articulated(M3, Z), np.eye(2)), StateError, r"\bT\b"),
    ],
    "opalg.composite_inertias": [*bad_model(opalg.composite_inertias, Z),
                                 Bad(lambda: opalg.composite_inertias(M3, NANV), StateError, r"\bq\b")],
    "opalg.body_poses": [*bad_model(opalg.body_poses, Z), Bad(lambda: opalg.body_poses(M3, Z[:2]), StateError, r"\bq\b")],
    "opalg.frame_jacobian": [
        *bad_model(opalg.frame_jacobian, Z, 0),
        Bad(lambda: opalg.frame_jacobian(M3, Z, 99), StateError, "frame"),
        Bad(lambda: opalg.frame_jacobian(M3, Z, (99, np.zeros(3))), opalg.OpalgError, "body|frame"),
        Bad(lambda: opalg.frame_jacobian(M3, Z, "nope"), StateError, "frame"),
    ],
    "opalg.lambda_inv": [*bad_model(opalg.lambda_inv, Z, [0]),
                         Bad(lambda: opalg.lambda_inv(M3, Z, [99]), StateError, "frame")],
    "opalg.operators": [
        *bad_model(opalg.operators, Z),
        Bad(lambda: opalg.operators(M3, Z, Z, gravity="no"), StateError, "gravity"),
        Bad(lambda: opalg.operators(M3, Z, passive=[99]), StateError, "passive"),
        Bad(lambda: opalg.operators(M3, Z).phi.block(99, 0), StateError, "block row i"),
        Bad(lambda: opalg.operators(M3, Z).M.block(-1, -1), StateError, "block row i"),
        Bad(lambda: opalg.operators(M3, Z).H.block(0, 0.5), StateError, "block column j"),
    ],
    "opalg.SpatialOperators": [Bad(lambda: opalg.SpatialOperators("x", Z), ModelError, "model"),
                               Bad(lambda: opalg.SpatialOperators(M3, NANV), StateError, r"\bq\b")],
    "opalg.hybrid": [*bad_model(opalg.hybrid, Z, Z, Z, Z, [True] + [False] * (N3 - 1)),
                     Bad(lambda: opalg.hybrid(M3, Z, Z, Z, Z, "a"), StateError, "passive")],
    "opalg.hybrid_derivatives": [
        *bad_model(opalg.hybrid_derivatives, Z, Z, Z, Z, [True] + [False] * (N3 - 1)),
        Bad(lambda: opalg.hybrid_derivatives(M3, Z, Z, Z, Z, "a"), StateError, "passive"),
        Bad(lambda: opalg.hybrid_derivatives(M3, Z, NANV, Z, Z, [True] * N3), StateError, r"\bqd\b"),
        Bad(lambda: opalg.hybrid_derivatives(M3, Z, Z, Z, Z, [True] * N3, f_ext=np.zeros((1, 6))), StateError,
            "f_ext")],
    "opalg.HybridDerivatives": RESULT,
    "opalg.reduced_inertia": [*bad_model(opalg.reduced_inertia, Z, [True] + [False] * (N3 - 1)),
                              Bad(lambda: opalg.reduced_inertia(M3, Z, [9]), StateError, "passive")],
    "opalg.random_model": [
        Bad(lambda: opalg.random_model(2.5), ModelError, r"\bn\b"),
        Bad(lambda: opalg.random_model("3"), ModelError, r"\bn\b"),
        Bad(lambda: opalg.random_model(0), ModelError, r"\bn\b"),
        Bad(lambda: opalg.random_model(3, "star"), ModelError, "topology"),
        Bad(lambda: opalg.random_model(3, joints="bogus"), ModelError, "joints"),
        Bad(lambda: opalg.random_model(3, "tree", n_roots=0), ModelError, "n_roots"),
        Bad(lambda: opalg.random_model(3, floating="yes"), ModelError, "floating"),
        Bad(lambda: opalg.random_model(3, seed="x"), ModelError, "seed"),
        Bad(lambda: opalg.random_model(3, gravity=(0, 0, NAN)), ModelError, "gravity"),
    ],
    "opalg.planar_arm": [
        Bad(lambda: opalg.planar_arm([NAN], [1.0], [0.1]), ModelError, "placement|non-finite"),
        Bad(lambda: opalg.planar_arm([1.0, 1.0], [1.0], [0.1]), ModelError, "masses"),
        Bad(lambda: opalg.planar_arm(["1"], [1.0], [0.1]), ModelError, "lengths"),
        Bad(lambda: opalg.planar_arm(1.0, [1.0], [0.1]), ModelError, "lengths"),
        Bad(lambda: opalg.planar_arm([1.0], [1.0], [0.1], inertia_about="x"), ModelError, "inertia_about"),
    ],
    "opalg.serial_chain": [
        Bad(lambda: opalg.serial_chain([opalg.Joint("R", [0, 0, 1.0])], [(np.eye(3), [NAN, 0, 0])],
                                       [(1.0, np.zeros(3), np.eye(3))]), ModelError, "placement origin"),
        Bad(lambda: opalg.serial_chain([opalg.Joint("R", [0, 0, 1.0])], [(np.eye(3), np.zeros(3))],
                                       [("1", np.zeros(3), np.eye(3))]), ModelError, "mass"),
    ],
    "opalg.Model": [
        Bad(lambda: opalg.Model([-1], [opalg.Joint("R", [0, 0, 1.0])], [(np.eye(3), np.zeros(3))],
                                [(NAN, np.zeros(3), np.eye(3))]), ModelError, "body 0.*mass"),
        Bad(lambda: opalg.Model([-1], [opalg.Joint("R", [0, 0, 1.0])], [(np.eye(3), np.zeros(3))],
                                [(1.0, np.zeros(3), np.eye(3))], gravity="down"), ModelError, "gravity"),
        Bad(lambda: opalg.Model([5], [opalg.Joint("R", [0, 0, 1.0])], [(np.eye(3), np.zeros(3))],
                                [(1.0, np.zeros(3), np.eye(3))]), ModelError, "parent"),
    ],
    "opalg.Joint": [
        Bad(lambda: opalg.Joint("bogus", [0, 0, 1]), ModelError, "kind|joint"),
        Bad(lambda: opalg.Joint("R", [NAN, 0, 1]), ModelError, "axis"),
        Bad(lambda: opalg.Joint("R", [1j, 0, 1]), ModelError, "axis"),
        Bad(lambda: opalg.Joint("R", [0, 0, 1], name=123), ModelError, "name"),
        Bad(lambda: opalg.Joint("R", "0 0 1"), ModelError, "axis"),
    ],
    "opalg.FreeJoint": [Bad(lambda: opalg.FreeJoint(name=1), ModelError, "name")],
    "opalg.Inertia": [Bad(lambda: opalg.Model([-1], [opalg.Joint("R", [0, 0, 1.0])], [(np.eye(3), np.zeros(3))],
                                              [opalg.Inertia(1.0, [0, 0, INF], np.eye(3))]), ModelError,
                          "mass centre")],
    "opalg.from_urdf": [
        Bad(lambda: opalg.from_urdf(""), URDFError, "source is empty"),
        Bad(lambda: opalg.from_urdf('<robot name="r"/>'), URDFError, "no <link>"),
        Bad(lambda: opalg.from_urdf(None), URDFError, "source"),
        Bad(lambda: opalg.from_urdf(123), URDFError, "source"),
        Bad(lambda: opalg.from_urdf("<robot"), URDFError, "malformed"),
        Bad(lambda: opalg.from_urdf(PENDULUM, floating="yes"), URDFError, "floating"),
        Bad(lambda: opalg.from_urdf(PENDULUM, locked=5), URDFError, "locked"),
        Bad(lambda: opalg.from_urdf(PENDULUM, locked="joint0"), URDFError, "locked"),
        Bad(lambda: opalg.from_urdf(PENDULUM, gravity=(0, 0, NAN)), URDFError, "gravity"),
        Bad(lambda: opalg.from_urdf("/nonexistent/robot.urdf"), URDFError, "not found"),
    ],
    "opalg.TreeSparse": [Bad(lambda: opalg.TreeSparse(np.ones(3), (0, 5, 1)), opalg.OpalgError, "parent|cycle")],
    "opalg.ltdl": [
        Bad(lambda: opalg.ltdl(np.eye(3)), StateError, r"\bM\b.*TreeSparse"),
        Bad(lambda: opalg.ltdl(None), StateError, r"\bM\b"),
        Bad(lambda: opalg.ltdl(opalg.TreeSparse(np.array([NAN, 1.0, 1.0]), (-1, 0))), opalg.OpalgError, "pivot"),
    ],
    "opalg.ltdl_solve": [
        Bad(lambda: opalg.ltdl_solve(np.eye(3), np.ones(3)), StateError, r"\bF\b"),
        Bad(lambda: opalg.ltdl_solve(opalg.ltdl(SPARSE), np.ones(N3 + 1)), StateError, r"\bb\b"),
        Bad(lambda: opalg.ltdl_solve(opalg.ltdl(SPARSE), np.full(N3, NAN)), StateError, r"\bb\b"),
        Bad(lambda: opalg.ltdl_solve(opalg.ltdl(SPARSE), ["x"] * N3), StateError, r"\bb\b"),
    ],
    "opalg.integrate": [*bad_model(opalg.integrate, QF, ZV),
                        Bad(lambda: opalg.integrate(FL, QF, ZV, dt=NAN), StateError, r"\bdt\b"),
                        Bad(lambda: opalg.integrate(FL, QF, ZV, dt="1"), StateError, r"\bdt\b"),
                        Bad(lambda: opalg.integrate(FL, 2 * QF, ZV), StateError, "quaternion")],
    "opalg.difference": [*bad_model(opalg.difference, QF, QF),
                         Bad(lambda: opalg.difference(FL, QF, QF[:-1]), StateError, "q1")],
    "opalg.neutral": [*bad_model(opalg.neutral)],
    "opalg.rnea_derivatives": [*bad_model(opalg.rnea_derivatives, Z, Z, Z),
                               Bad(lambda: opalg.rnea_derivatives(M3, NANV, Z, Z), StateError, r"\bq\b")],
    "opalg.aba_derivatives": [*bad_model(opalg.aba_derivatives, Z, Z, Z),
                              Bad(lambda: opalg.aba_derivatives(M3, Z, Z, "tau"), StateError, r"\btau\b")],
    "opalg.linearize": [*bad_model(lambda m, *a: opalg.linearize(m, *a), Z, Z, Z),
                        Bad(lambda: opalg.linearize(M3, Z, NANV, Z), StateError, r"\bqd\b")],
    # the block operators of opalg.algebra.block_ops (Fijany's A, Q, B, C)
    "opalg.algebra.block_ops.BlockTridiagonal": [
        Bad(lambda: BlockTridiagonal([np.eye(2), np.eye(2)], [np.ones((3, 3))], name="A"), StateError,
            "BlockTridiagonal A: coupling blocks 0"),
        Bad(lambda: BlockTridiagonal([np.full((2, 2), NAN)], []), StateError, "diagonal block 0.*non-finite"),
        Bad(lambda: BlockTridiagonal([np.array([["a"]])], []), StateError, "diagonal block 0"),
        Bad(lambda: BlockTridiagonal([np.ones(2)], []), StateError, "diagonal block 0"),
        Bad(lambda: BlockTridiagonal([], []), StateError, "diagonal blocks"),
        Bad(lambda: BlockTridiagonal([np.eye(2)], []).solve(np.ones(2), method="x"), StateError, "method"),
        Bad(lambda: BlockTridiagonal([np.eye(2)], []).solve(np.ones(3)), StateError, "columns|shape"),
    ],
    "opalg.algebra.block_ops.BlockSparse": [
        Bad(lambda: BlockSparse({(0, 0): np.ones((2, 2))}, [1], [1], name="Q"), StateError, r"BlockSparse Q: block \(0, 0\)"),
        Bad(lambda: BlockSparse({(5, 0): np.ones((1, 1))}, [1], [1]), StateError, "block row i"),
        Bad(lambda: BlockSparse({(0, 0): [[NAN]]}, [1], [1]), StateError, "non-finite"),
        Bad(lambda: BlockSparse([np.eye(2)], [2], [2]), StateError, "blocks"),
        Bad(lambda: BlockSparse({}, [1], [1]).block(0, -1), StateError, "block column j"),
    ],
    "opalg.algebra.block_ops.cyclic": [
        Bad(lambda: cyclic(np.ones((3, 2, 2)), np.ones((3, 2, 2)), np.ones((2, 2, 2)), np.ones((3, 2, 1))),
            StateError, r"cyclic: L has shape"),
        Bad(lambda: cyclic(np.eye(2), None, None, None), StateError, r"cyclic: D")],
    "opalg.algebra.block_ops.thomas": [
        Bad(lambda: thomas(np.ones((3, 2, 2)), np.ones((2, 2, 2)), np.ones((2, 2, 2)), np.ones((3, 1, 1))),
            StateError, r"thomas: b has shape")],
    "opalg.algebra.block_ops.Operator": Exempt("the abstract base of the operator objects: built by opalg; its "
                                               "block access is covered under opalg.operators"),
    "opalg.algebra.block_ops.BCRTrace": RESULT,
    # classes and exceptions
    "opalg.Articulated": RESULT, "opalg.Innovations": RESULT, "opalg.LTDL": RESULT,
    "opalg.ModelError": EXC, "opalg.StateError": EXC, "opalg.URDFError": EXC, "opalg.OpalgError": EXC,
    "opalg.SingularConfigurationError": EXC, "opalg.InfeasibleDirections": EXC,
}
