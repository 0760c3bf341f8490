"""opalg.course.report: the check printers assert as well as print, so a wrong result fails the cell."""

import numpy as np
import pytest
import sympy as sp

from opalg.course.report import bound, decade, exact, refute, rel, report


def test_exact_accepts_true_identities(capsys):
    x = sp.Symbol("x")
    exact("simplify(sin(2x) - 2 sin x cos x) = 0", sp.sin(2 * x) - 2 * sp.sin(x) * sp.cos(x))
    exact("a matrix", sp.Matrix([[sp.cos(x) ** 2 + sp.sin(x) ** 2 - 1, 0]]))
    exact("numbers", np.zeros((2, 3)))
    assert capsys.readouterr().out.splitlines() == [
        "simplify(sin(2x) - 2 sin x cos x) = 0: exact (sympy)", "a matrix: exact (sympy)", "numbers: exact (bitwise)"]


@pytest.mark.parametrize("residual", [sp.Symbol("x") - 1, sp.Matrix([0, sp.Symbol("y")]), [0.0, 1e-300], [np.nan]])
def test_exact_refuses_a_nonzero_residual(residual):
    with pytest.raises(AssertionError, match="not exactly zero"):
        exact("wrong", residual)


def test_exact_without_simplify_sees_only_structural_zeros():
    x = sp.Symbol("x")
    with pytest.raises(AssertionError):
        exact("unsimplified", sp.sin(x) ** 2 + sp.cos(x) ** 2 - 1, simplify=False)


def test_exact_proves_trig_polynomial_zeros(capsys):
    """Identities of sin and cos polynomials are exact zeros, printed as sympy's proof."""
    x, y = sp.symbols("x y", real=True)
    identities = [sp.sin(x) ** 2 + sp.cos(x) ** 2 - 1,
                  sp.Matrix([[sp.sin(x) ** 4 - (1 - sp.cos(x) ** 2) ** 2, 0],
                             [y * sp.sin(x) ** 3 - y * sp.sin(x) * (1 - sp.cos(x) ** 2), sp.S.Zero]]),
                  sp.expand((sp.sin(x) * sp.cos(y) + sp.cos(x) * sp.sin(y)) ** 2
                            + (sp.cos(x) * sp.cos(y) - sp.sin(x) * sp.sin(y)) ** 2 - 1)]
    for i, e in enumerate(identities):
        exact(f"identity {i}", e)
    assert capsys.readouterr().out.splitlines() == [f"identity {i}: exact (sympy)" for i in range(3)]


@pytest.mark.parametrize("residual, zero", [
    (sp.sin(sp.Symbol("x")) ** 2 - sp.cos(sp.Symbol("x")) ** 2, False),
    (sp.sin(2 * sp.Symbol("x")) - 2 * sp.sin(sp.Symbol("x")) * sp.cos(sp.Symbol("x")), True),   # a double angle
    # Floats: 0.1x + 0.2x − 0.3x is 5.6e-17·x, round-off that is no exact zero
    (sp.Float(0.1) * sp.Symbol("x") + sp.Float(0.2) * sp.Symbol("x") - sp.Float(0.3) * sp.Symbol("x"), False),
    (sp.Matrix([sp.sin(sp.Symbol("x")) ** 2 + sp.cos(sp.Symbol("x")) ** 2 - 1, 1]), False),
    (sp.Matrix([sp.sin(sp.Symbol("x")) ** 2 + sp.cos(sp.Symbol("x")) ** 2 - 1, 0]), True),
    ((sp.sin(sp.Symbol("x")) + sp.cos(sp.Symbol("x"))) ** 2 - 2 * sp.sin(sp.Symbol("x")) * sp.cos(sp.Symbol("x")) - 1,
     True),   # a square of a sum
])
def test_exact_accepts_exactly_the_zero_residuals(residual, zero, capsys):
    """exact passes an identically zero residual, whatever form it is in, and refuses any other
    with the residual in the message."""
    if zero:
        exact("zero", residual)
        assert capsys.readouterr().out == "zero: exact (sympy)\n"
    else:
        with pytest.raises(AssertionError, match="not exactly zero"):
            exact("not zero", residual)


def test_the_others_refuse_what_they_must():
    with pytest.raises(AssertionError):
        report("too large", 1e-9, 1e-12)
    with pytest.raises(AssertionError):
        report("NaN", float("nan"))
    with pytest.raises(AssertionError):
        refute("true after all", 1e-14)
    with pytest.raises(AssertionError):
        bound("over the limit", -2e-8, 1e-8)
    with pytest.raises(ValueError):
        decade(float("inf"))
    # relative to max(1, |y|); exact: one subtraction of exact numbers, divided by 1
    assert rel([3.0], [1.0]) == 2.0 and rel([1e-3], [0.0]) == 1e-3
