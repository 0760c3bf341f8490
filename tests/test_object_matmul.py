"""opalg._object_matmul.object_matmul against numpy's own object ``A @ B``, entry by entry.

The symbolic recursions multiply through it, so it must give numpy's expression tree (same
terms, same order, same kinds of zero), not merely an equal value: ``sympy.srepr`` of every
entry is compared.  Entries are drawn from every kind a recursion meets: Python and numpy
floats and ints (zeros of each, signed zero), sympy's exact and Float zeros, numbers, symbols,
sums, products and functions of symbols; shapes include batches, broadcasting and empty sums.
"""

from __future__ import annotations

import numpy as np
import pytest
import sympy as sp

from opalg import _backend as bk
from opalg._object_matmul import object_matmul

x, y, z = sp.symbols("x y z")
ENTRIES = [0, 0.0, -0.0, np.float64(0.0), np.int64(0), sp.S.Zero, sp.Float(0.0),
           1, -2.5, np.float64(0.75), sp.Rational(1, 3), sp.Float(1.5),
           x, -y, x + 2 * y, x * y, sp.sin(x), sp.cos(z) - 1.0, 0.5 * z]


def _draw(rng, shape):
    out = np.empty(shape, dtype=object)
    for idx in np.ndindex(shape):
        out[idx] = ENTRIES[rng.integers(len(ENTRIES))]
    return out


def _srepr(a):
    return [sp.srepr(sp.sympify(v)) + type(v).__name__ for v in np.asarray(a, dtype=object).ravel()]


SHAPES = [((3, 3), (3, 3)), ((6, 6), (6, 1)), ((1, 4), (4, 2)), ((2, 3, 4), (4, 5)),
          ((2, 1, 3, 3), (4, 3, 2)), ((3, 0), (0, 2))]


@pytest.mark.parametrize("shapes", SHAPES, ids=[f"{a}@{b}" for a, b in SHAPES])
@pytest.mark.parametrize("seed", range(6))
def test_entries_are_numpys(shapes, seed):
    rng = np.random.default_rng(seed)
    A, B = _draw(rng, shapes[0]), _draw(rng, shapes[1])
    expected = A @ B
    got = object_matmul(A, B)
    assert got.shape == expected.shape and got.dtype == object
    assert _srepr(got) == _srepr(expected)
    # bk.matmul and bk.mm route object operands through it, float ones through numpy.
    assert _srepr(bk.matmul(A, B)) == _srepr(expected)


def test_zero_times_expression_is_sympys_zero_without_asking():
    """The shortcut: 0.0 * x is sympy's exact 0 in numpy's result, and in ours, whatever the
    order; an all-zero row gives the same kind of zero numpy gives."""
    A = np.array([[0.0, x], [sp.S.Zero, 0]], dtype=object)
    B = np.array([[y, 0.0], [0, sp.cos(x)]], dtype=object)
    assert _srepr(object_matmul(A, B)) == _srepr(A @ B)
    assert object_matmul(A, B)[1, 0] == 0 and object_matmul(A, B)[0, 1] == x * sp.cos(x)


def test_known_infinity_times_zero():
    """sympy's infinities are numbers, so 0 * oo is sympy's nan as in numpy; a symbol declared
    infinite is the documented difference (0 here, nan in numpy; no recursion has one)."""
    A = np.array([[0.0]], dtype=object)
    B = np.array([[sp.oo]], dtype=object)
    assert (A @ B)[0, 0] is sp.nan and object_matmul(A, B)[0, 0] is sp.nan
    w = np.array([[sp.Symbol("w", infinite=True)]], dtype=object)
    assert (A @ w)[0, 0] is sp.nan and object_matmul(A, w)[0, 0] == 0


def test_operands_numpy_refuses_get_numpys_error():
    A = _draw(np.random.default_rng(0), (2, 3))
    with pytest.raises(ValueError) as ours:
        object_matmul(A, A)
    with pytest.raises(ValueError) as numpys:
        A @ A
    assert str(ours.value) == str(numpys.value)


def test_float_operands_are_numpys_matmul():
    """Float operands stay on numpy's matmul: a float64 result with its very bytes (an object
    array of equal values, as a detour through object_matmul would give, fails)."""
    rng = np.random.default_rng(1)
    A, B = rng.normal(size=(4, 6, 6)), rng.normal(size=(6, 3))
    got = bk.matmul(A, B)
    assert got.dtype == np.float64 and got.tobytes() == (A @ B).tobytes()
