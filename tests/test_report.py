"""opalg.report: the check printers assert as well as print, so a wrong result fails the cell."""

import numpy as np
import pytest
import sympy as sp

from opalg.report import bound, decade, exact, refute, rel, report


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
    assert rel([3.0], [1.0]) == 2.0 and rel([1e-3], [0.0]) == 1e-3     # relative to max(1, |y|)
