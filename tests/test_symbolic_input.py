"""opalg.symbolic never evaluates a string and raises the opalg error hierarchy; one errors
module; ``import opalg`` without sympy (in a subprocess)."""

from __future__ import annotations

import pathlib
import subprocess
import sys
import textwrap

import numpy as np
import pytest
import sympy as sp

import opalg
from opalg import ModelError, OpalgError, SingularConfigurationError, StateError
from opalg.symbolic import Body, Hinge, RootMotion, TreeSystem, deployable_example

from helpers import EVIL, FLAG, measured, no_string_evaluated  # noqa: F401  (autouse fixture)

ROOT = pathlib.Path(__file__).resolve().parent.parent
#: max |Δℳ| of a planar arm's crba with symbolic lengths (subs, evalf) vs the float crba.
TOL_ARM = measured(1e-13, 3.6e-15, "300 random (q, L1, L2 in [0.2, 2]) under 3 BLAS/SIMD kernels")


def build(hinge=None, body=None, gravity=(0, 0, -9.81), base="fixed", T=(0,)):
    return TreeSystem(list(T), [hinge or Hinge(1, 1)], [body or Body(1.0, (0.5, 0, 0))], gravity, base)


def test_reference_system_builds():
    """Guard: the unchanged inputs are accepted."""
    assert build().N == 2


@pytest.mark.parametrize("kw, match", [
    (dict(body=Body(EVIL)), r"body 1: mass: expected a number or a sympy expression, got a str"),
    (dict(body=Body(1.0, (0, 0, EVIL))), r"body 1 mass centre entry 2: expected a number .* got a str"),
    (dict(body=Body(1.0, inertia=[[1, 0, 0], [0, 1, 0], [0, 0, EVIL]])),
     r"body 1 inertia tensor entry \(2, 2\): .*got a str"),
    (dict(body=Body(1.0, inertia=EVIL)), r"body 1 inertia tensor: cannot read"),
    (dict(hinge=Hinge(1, 0, offset=(EVIL, 0, 0))), r"hinge 1 offset entry 0: .*got a str"),
    (dict(hinge=Hinge(1, 1, axes=[[EVIL, 0, 0]])), r"hinge 1 translation axes entry \(0, 0\): .*got a str"),
    (dict(gravity=(0, 0, EVIL)), r"gravity entry 2: .*got a str"),
    (dict(gravity=np.array([0, 0, EVIL], dtype=object)), r"gravity entry 2: .*got a str"),
    (dict(base=RootMotion(position=(EVIL, 0, 0))), r"root position entry 0: .*got a str"),
    (dict(base=RootMotion(angles=(0, 0, EVIL))), r"root angles entry 2: .*got a str"),
    (dict(T=("0",)), r"topology vector T must hold integers"),
])
def test_string_model_data_is_refused_unevaluated(kw, match):
    """Strings in masses, mass centres, inertias, offsets, axes, gravity, root motion and T are
    ModelErrors naming the field, raised before sympify could run them."""
    with pytest.raises(ModelError, match=match):
        build(**kw)


@pytest.mark.parametrize("call, match", [
    (lambda s: s.generalized_forces(forces={1: (EVIL, 0, 0)}), r"force on body 1 entry 0: .*got a str"),
    (lambda s: s.generalized_forces(moments={1: [0, 0, EVIL]}), r"moment on body 1 entry 2"),
    (lambda s: s.generalized_forces(springs={s.q[0]: (EVIL, 0)}), r"spring on Z1_1: k: .*got a str"),
    (lambda s: s.generalized_forces(springs={s.q[0]: (1, EVIL)}), r"spring on Z1_1: q0: .*got a str"),
    (lambda s: s.generalized_forces(dampers={s.q[0]: EVIL}), r"damper on Z1_1: .*got a str"),
    (lambda s: s.equations_of_motion(Q=[EVIL, 0]), r"Q entry 0: .*got a str"),
    (lambda s: s.cse(Q=[0, EVIL]), r"Q entry 1: .*got a str"),
    (lambda s: s.lambdify(subs={sp.Symbol("m"): EVIL}), r"subs\[m\]: .*got a str"),
    (lambda s: s.lambdify(subs={EVIL: 1.0}), r"subs key .* is not a sympy symbol"),
    (lambda s: s.simulate([0, 0], [0, 0], (0, 1), dampers={s.q[0]: EVIL}), r"damper on Z1_1"),
    (lambda s: s.simulate([EVIL, 0], [0, 0], (0, 1)), r"q0 has a non-numeric entry at index \(0,\)"),
    (lambda s: opalg.symbolic.pose_function(s)(["0.5", 0]), r"q has a non-numeric entry at index \(0,\)"),
    (lambda s: opalg.symbolic.Tz(EVIL), r"Tz angle: .*got a str"),
])
def test_string_arguments_are_refused_unevaluated(call, match):
    """Strings in loads, springs, dampers, Q, subs, states and angles are StateErrors."""
    with pytest.raises(StateError, match=match):
        call(build())


def test_root_state_time_string():
    s = build(base=RootMotion(position=(opalg.symbolic.t ** 2, 0, 0)))
    with pytest.raises(StateError, match=r"time: expected a number or a sympy expression, got a str"):
        opalg.symbolic.root_state(s, EVIL)


# --------------------------------------------------------------------------- hierarchy
@pytest.mark.parametrize("make, error, match", [
    (lambda: TreeSystem([0, 3], [Hinge(1)] * 2, [Body(1.0)] * 2), ModelError, "out of range"),
    (lambda: TreeSystem([0], [Hinge(4)], [Body(1.0)]), ModelError, "NR"),
    (lambda: TreeSystem([0], [Hinge(1)], [Body(-1.0)]), ModelError, "mass must be > 0"),
    (lambda: TreeSystem([0, 1], [Hinge(1)], [Body(1.0)] * 2), ModelError, "hinges has 1 entries"),
    (lambda: TreeSystem([0], [Hinge(0)], [Body(1.0)]), ModelError, "no degree of freedom"),
    (lambda: TreeSystem([0], [Hinge(1)], [Body(1.0)], base="moving"), ModelError, "RootMotion"),
    (lambda: build().coordinate(1, "H", 3), StateError, "no coordinate H1_3"),
    (lambda: build().rate(sp.Symbol("x")), StateError, "not a generalized coordinate"),
    (lambda: build().bias("newton"), StateError, "method must be 'kane', 'lagrange' or 'recursive'"),
    (lambda: build().to_model(with_root=True), StateError, "with_root=True needs a prescribed root"),
    (lambda: build(body=Body(sp.Symbol("m"))).lambdify(), ModelError, r"unset symbolic parameters \['m'\]"),
    (lambda: deployable_example("nope"), StateError, "'rot3', 'full6' or 'deploy'"),
])
def test_symbolic_errors_use_the_hierarchy(make, error, match):
    """Model data errors are ModelError, argument errors StateError (both still ValueErrors)."""
    with pytest.raises(error, match=match):
        make()


def test_singular_configuration_is_the_core_error():
    """opalg.symbolic.SingularConfiguration is SingularConfigurationError, with body and q set."""
    assert opalg.symbolic.SingularConfiguration is SingularConfigurationError
    system = TreeSystem([0], [Hinge(3)], [Body(1.0, (0.3, 0, 0), np.diag([0.1, 0.2, 0.25]))])
    with pytest.raises(SingularConfigurationError, match=r"singular at t = 0: .*hinge\(s\) \[1\]") as e:
        system.simulate(np.zeros(3), np.zeros(3), (0, 0.1))
    assert e.value.body == 1 and e.value.q.tolist() == [0.0, 0.0, 0.0]


def test_one_errors_module():
    """Every exception class lives in opalg.errors, is exported by opalg, and derives from OpalgError;
    the old homes still give the same classes."""
    import opalg.algorithms.constrained
    import opalg.errors as errors
    names = ["OpalgError", "ModelError", "URDFError", "StateError", "SingularConfigurationError",
             "InfeasibleDirections"]
    for nm in names:
        cls = getattr(errors, nm)
        assert getattr(opalg, nm) is cls and issubclass(cls, OpalgError) and issubclass(cls, ValueError)
        assert nm in opalg.__all__
    assert opalg.algorithms.constrained.InfeasibleDirections is errors.InfeasibleDirections
    with pytest.raises(errors.InfeasibleDirections, match="rank deficient"):
        opalg.algorithms.constrained.force_directions(np.eye(2, 3), [[1.0, 0, 0], [2.0, 0, 0]])


def test_constrained_refuses_string_matrices():
    """force_directions used to parse ["1", "0"] as numbers: now a StateError naming A."""
    with pytest.raises(StateError, match=r"A must be a numeric matrix"):
        opalg.algorithms.constrained.force_directions(np.eye(1, 2), [["1", "0"]])


# --------------------------------------------------------------------------- import opalg
def run_python(code: str) -> str:
    """Run ``code`` in a fresh interpreter that imports this checkout's opalg (cwd first on sys.path)."""
    out = subprocess.run([sys.executable, "-c", "import opalg, sys; assert opalg.__file__.startswith("
                          f"{str(ROOT)!r}), opalg.__file__; del opalg, sys\n" + textwrap.dedent(code)],
                         capture_output=True, text=True, timeout=300, cwd=ROOT)
    assert out.returncode == 0, out.stderr
    return out.stdout


def test_import_opalg_does_not_import_sympy():
    """`import opalg` (and a numeric model's recursions) load neither sympy nor opalg.symbolic/ider."""
    out = run_python("""
        import sys, numpy as np, opalg
        m = opalg.random_model(4, "tree", seed=0)
        opalg.aba(m, np.zeros(m.ndof), np.zeros(m.ndof), np.zeros(m.ndof))
        opalg.from_urdf(opalg.model.urdf.to_urdf(m))
        print(sorted(k for k in ("sympy", "opalg.symbolic", "opalg.ider", "scipy") if k in sys.modules))
    """)
    assert out.strip() == "[]"


def test_lazy_subpackages_and_symbolic_models_after_import():
    """opalg.symbolic loads on access; a sympy planar arm's crba equals the numeric one after subs."""
    out = run_python("""
        import sys, numpy as np, opalg
        assert "sympy" not in sys.modules
        import sympy as sp
        L1, L2 = sp.symbols("L1 L2", positive=True)
        q = [0.3, -0.7]
        M = opalg.crba(opalg.planar_arm([L1, L2], [1.0, 2.0], [0.1, 0.2]), np.array(q, dtype=object))
        M = np.array(sp.Matrix(M.tolist()).subs({L1: 1.5, L2: 0.8}).evalf(), dtype=float)
        print(float(np.abs(M - opalg.crba(opalg.planar_arm([1.5, 0.8], [1.0, 2.0], [0.1, 0.2]), q)).max()))
        print(opalg.symbolic.TreeSystem.__name__, "opalg.symbolic" in sys.modules, "symbolic" in dir(opalg))
    """)
    err, line = out.split("\n")[:2]
    assert float(err) <= TOL_ARM
    assert line == "TreeSystem True True"
