"""opalg.symbolic.fastcse against sympy's own cse: the same replacements and reduced
expressions, node for node.

``fastcse`` repeats sympy's ``tree_cse`` with memoized ordering keys and builds the rebuilt
Adds and Muls of plain factors directly (what ``Mul.flatten`` / ``Add.flatten`` would return,
without their assumption queries on fresh Floats).  Its claim is structural identity, so the
check is ``srepr`` equality against ``sympy.cse`` on what the library feeds it: ℳ and the
bias of random rooted trees (multi-axis hinges, slides, a moving root) and of the deployable,
with fastcse shown to take its own path (no fall-back to sympy's cse, the fast builders used).
"""

from __future__ import annotations

import pytest
import sympy as sp

from opalg.symbolic import fastcse as fc
from opalg.symbolic import fastdiff as fd

from symbolic_shared import spinning_deploy
from test_symbolic_fastdiff import _same, _tree   # _same: srepr equality, the same tree first

pytestmark = pytest.mark.skipif(not fd._SAME_SYMPY, reason=(
    f"fastcse repeats sympy {fd.SYMPY_VERSION}'s internals; under sympy {sp.__version__} it is "
    "sympy's own cse"))


@pytest.fixture
def own_path(monkeypatch):
    """Counts fastcse's fall-backs to sympy's cse and its fast builds while a test runs;
    returns the counts and sympy's own cse (the expected values' route)."""
    calls = {"sympy": 0, "fast": 0}
    own, fast_mul, fast_add = sp.cse, fc._fast_mul, fc._fast_add

    def fallback(*a, **k):
        calls["sympy"] += 1
        return own(*a, **k)

    def counted(fn):
        def wrapped(args):
            r = fn(args)
            calls["fast"] += r is not None
            return r
        return wrapped

    monkeypatch.setattr(sp, "cse", fallback)
    monkeypatch.setattr(fc, "_fast_mul", counted(fast_mul))
    monkeypatch.setattr(fc, "_fast_add", counted(fast_add))
    return calls, own


def _check(system, calls, own):
    M, B = system.mass_matrix(), system.bias()
    for got, want in ((lambda: fc.cse([M, B]), lambda: own([M, B])),          # what TreeSystem.cse does
                      (lambda: fc.cse(M, list=False), lambda: own(M, list=False))):   # ... numeric
        before = calls["fast"]
        g = got()
        assert calls["sympy"] == 0, "fastcse fell back to sympy's cse"
        assert calls["fast"] > before, "fastcse built nothing itself"
        assert _same(g, want())


@pytest.mark.parametrize("seed", [1, 2])     # a moving and a fixed root (seeds 0, 3 cost 5x more)
def test_cse_is_sympys_on_random_trees(seed, own_path):
    _check(_tree(seed), *own_path)


def test_cse_is_sympys_on_the_deployable(own_path):
    _check(spinning_deploy(), *own_path)


def test_orderer_is_sympys_ordered():
    """Node counts (Floats count ½) and default_sort_key ties, as sympy.ordered."""
    x, y, z = sp.symbols("x y z", real=True)
    terms = [2.5 * x, x * y, y * x * 0.5, sp.sin(x), sp.cos(y), z, y, 3 * z ** 2, -x * sp.sin(y),
             sp.Float(0.25), sp.Rational(1, 3), x + y, sp.cos(x) ** 2, 1.5 * sp.cos(x) ** 2]
    for seq in (terms, terms[::-1], terms[3:] + terms[:3]):
        assert fc._Orderer().ordered(seq) == list(sp.ordered(seq))


def test_fast_builders_are_mul_and_add():
    """Each fast build is sympy's evaluated Mul / Add (srepr-equal); the cases whose flatten
    does more (equal bases, two numbers, a number times a lone Add, nested Adds) are declined."""
    x, y = sp.symbols("x y", real=True)
    a = sp.Symbol("a")
    s, c = sp.sin(x), sp.cos(y)
    muls = [(2.5, x, s), (sp.S.NegativeOne, sp.Mul(0.5, x, y)), (x, y + a), (sp.Rational(-2, 3), c ** 2, a),
            (sp.S.NegativeOne, sp.S.NegativeOne, x, a), (sp.S.NegativeOne, x), (a ** -1, x + y, s ** 3)]
    for args in muls:
        args = [sp.sympify(e) for e in args]
        got = fc._fast_mul(args)
        assert got is not None and _same(got, sp.Mul(*args)), args
    adds = [(x, 2.5 * a, s), (sp.Float(1.5), x * y, -c ** 2), (sp.Rational(1, 2), 0.5 * x * s), (a, -a * x)]
    for args in adds:
        args = [sp.sympify(e) for e in args]
        got = fc._fast_add(args)
        assert got is not None and _same(got, sp.Add(*args)), args
    for args in [(x, x ** 2), (sp.Float(2.0), sp.Float(3.0), x), (sp.Integer(2), x + y), (s, s), (x, sp.exp(x))]:
        assert fc._fast_mul([sp.sympify(e) for e in args]) is None, args
    for args in [(x, 2 * x), (x, y + a), (sp.Float(0.0), x), (x, sp.exp(x))]:
        assert fc._fast_add([sp.sympify(e) for e in args]) is None, args


def _uneval(v):
    """An opt_cse substitution value, comparable: sympy's Unevaluated has no equality."""
    from sympy.simplify.cse_main import Unevaluated
    if isinstance(v, Unevaluated):
        return ("Unevaluated", v.func.__name__, tuple(map(_uneval, v.args)))
    return v


@pytest.mark.parametrize("seed", [2])     # the full cse of seeds 1, 2 is checked above as well
def test_opt_cse_is_sympys(seed):
    """fastopt.opt_cse: sympy's substitutions, the same keys in the same order and the same
    values node for node, on ℳ and the Kane bias together (as TreeSystem.cse passes them)."""
    from sympy.simplify.cse_main import opt_cse
    from opalg.symbolic import fastopt
    s = _tree(seed)
    work = [sp.Tuple(*s.mass_matrix().flat()), sp.Tuple(*s.bias().flat())]
    got, want = fastopt.opt_cse(work), opt_cse(work, "canonical")
    assert _same(list(got), list(want))
    assert _same(list(map(_uneval, got.values())), list(map(_uneval, want.values())))
