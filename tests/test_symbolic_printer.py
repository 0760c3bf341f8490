"""opalg.symbolic.fastprint against sympy's own NumPyPrinter: the same generated source, byte
for byte.

``fastprint.NumPyPrinter`` is sympy's printer with precedences, sort keys and term orders kept
per node, and the sign of a plain product read from its coefficient.  Its claim is identical
output, so the check is the source lambdify generates with it against lambdify's own printer
on what the library prints: ℳ, the Kane and Lagrange biases and the body rotations of random
rooted trees (multi-axis hinges, slides, a moving root) and of the deployable, each
cse-reduced as ``numeric._lambdify`` does; the memoized route is shown to be taken.
"""

from __future__ import annotations

import functools
import inspect
import re

import pytest
import sympy as sp

from opalg.symbolic import RootMotion, deployable_example, t
from opalg.symbolic import fastcse as fc
from opalg.symbolic import fastdiff as fd
from opalg.symbolic import fastprint as fp
from opalg.symbolic import numeric

from test_symbolic_fastdiff import _tree

pytestmark = pytest.mark.skipif(not fd._SAME_SYMPY, reason=(
    f"fastprint repeats sympy {fd.SYMPY_VERSION}'s printer internals; under sympy "
    f"{sp.__version__} lambdify prints with its own printer"))


def _source(f) -> str:
    return re.sub(r"_Dummy_\d+", "_Dummy", inspect.getsource(f))


def _check(system, exprs):
    """Each (args, expr): lambdify's source with fastprint's printer == with sympy's, and the
    memoized route printed most products and sums."""
    for args, expr in exprs:
        reps, reduced = fc.cse(expr, list=False)
        printer = fp.printer()
        got = sp.lambdify(args, reduced, "numpy", cse=lambda _: (reps, reduced), printer=printer)
        want = sp.lambdify(args, reduced, "numpy", cse=lambda _: (reps, reduced))
        assert _source(got) == _source(want)
        assert printer.fast_nodes > 0, "fastprint printed nothing itself"


def _exprs(system, which):
    """The library's printed expressions named in ``which``: ℳ, the Kane bias, the Lagrange
    bias, the body rotations (what pose_function prints)."""
    q, qd = system.q, system.qd
    out = []
    for w in which:
        if w == "M":
            out.append(([q], system.mass_matrix()))
        elif w == "B":
            out.append(([q, qd, t], system.bias()))
        elif w == "L":
            out.append(([q, qd, t], system.bias("lagrange")))
        else:
            kin = system.kinematics()
            out.append(([q, t], [kin[j]["R"] for j in range(system.n + 1)]))
    return out


@functools.lru_cache(maxsize=None)
def _deploy():
    return deployable_example("deploy", base=RootMotion(angles=(0.2 * t, 0, 0)))


# sympy's printer, the expected route, is the slow part: each system prints what it adds (a
# moving root's Kane bias, a fixed root's Lagrange bias); the 10-DoF trees and rot3 were
# compared the same way while the printer was written
@pytest.mark.parametrize("seed, which", [(1, "MBR"), (2, "L")])   # a moving and a fixed root
def test_source_is_sympys_on_random_trees(seed, which):
    s = _tree(seed)
    _check(s, _exprs(s, which))


def test_source_is_sympys_on_the_deployable():
    s = _deploy()
    _check(s, _exprs(s, "MBR"))


def test_numeric_lambdify_takes_the_fast_printer(monkeypatch):
    """numeric._lambdify prints with fastprint (and its code is lambdify's own: see
    tests/test_symbolic.py::test_generated_functions_are_lambdifys_own_code)."""
    made = []

    def counted():
        p = fp.printer()
        made.append(p)
        return p

    monkeypatch.setattr(numeric, "_fast_printer", counted)
    s = _deploy()
    numeric._lambdify(s, [s.q], s.mass_matrix())
    assert len(made) == 1 and made[0].fast_nodes > 0


def test_printer_cases_are_sympys():
    """Products and sums with the signs, coefficients and factors that take either route
    (negative Float / Rational / -1 coefficients, a single factor, powers, reciprocals,
    sums inside products, exp, numbers in sums) print as sympy's printer prints them."""
    x, y, z = sp.symbols("x y z", real=True)
    s, c = sp.sin(x), sp.cos(y)
    exprs = [-2.5 * x, -x, -x * y, -1.0 * x, sp.Rational(-1, 3) * s, -2 * c ** 2, 2.5 * x / y,
             -x / (y * z), -x ** -2, -3 * x * (y + z), sp.Mul(-2, x + y, evaluate=False),
             -sp.exp(x) * 2, 1 - x, 2 - 3 * x, 0.5 - x * y, x * s - 2.5 * c ** 2 * y + 1.5,
             -(x + y) ** 2 * 0.25, x ** 2 * y + x * y ** 2 - 4, sp.sqrt(2) * x - y, -sp.pi * x,
             -sp.sqrt(x) * 3, x / (y + 1) - z, -s * c / (x * y) ** 2, sp.oo * x - y,
             sp.Float("-1.25", 30) * x + y, (x - y) * (y - z) - s,
             x * (y + sp.exp(z)) * (2 * x - y) ** 2 - (x + 1.5 * y) * s, sp.exp(2 * x) * y - z,
             sp.re(sp.Symbol("w")) * x - y, sp.Dummy("d") * x - 2.5 * (y + z) * sp.Dummy("d") ** 2]
    for e in exprs:
        got = fp.printer().doprint(e)
        want = sp.printing.numpy.NumPyPrinter(
            {"fully_qualified_modules": False, "inline": True, "allow_unknown_functions": True,
             "user_functions": {}}).doprint(e)
        assert got == want, e


def test_complex_of_a_float_coefficient_is_sympys():
    """The term order's coefficient conversion: complex(float(c)) is sympy's complex(c)."""
    import numpy as np
    rng = np.random.default_rng(0)
    values = [*rng.normal(size=200) * 10.0 ** rng.integers(-300, 300, 200), 0.0, 1.0, -1.0, 5e-324]
    p = fp.printer()
    for v in values:            # exact: both are conversions of the same stored binary value
        for f in (sp.Float(v), sp.Float(str(v), 30), sp.Float(v, 10)):
            assert p._complex(f) == complex(f), f
    for r in (sp.Rational(1, 3), sp.Rational(-7, 10), sp.Integer(3), sp.S.One):
        assert p._complex(r) == complex(r)
