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


def test_exact_proves_trig_polynomial_zeros_without_simplify(monkeypatch, capsys):
    """The shortcut (sin² → 1 − cos², expand) proves these zeros alone: simplify is never
    called, and the printed line is the one simplify's proof prints."""
    x, y = sp.symbols("x y", real=True)

    def no_simplify(*args, **kwargs):
        raise AssertionError("sympy.simplify was called")

    monkeypatch.setattr(sp, "simplify", no_simplify)
    identities = [sp.sin(x) ** 2 + sp.cos(x) ** 2 - 1,
                  sp.Matrix([[sp.sin(x) ** 4 - (1 - sp.cos(x) ** 2) ** 2, 0],
                             [y * sp.sin(x) ** 3 - y * sp.sin(x) * (1 - sp.cos(x) ** 2), sp.S.Zero]]),
                  sp.expand((sp.sin(x) * sp.cos(y) + sp.cos(x) * sp.sin(y)) ** 2
                            + (sp.cos(x) * sp.cos(y) - sp.sin(x) * sp.sin(y)) ** 2 - 1)]
    for i, e in enumerate(identities):
        exact(f"identity {i}", e)
    assert capsys.readouterr().out.splitlines() == [f"identity {i}: exact (sympy)" for i in range(3)]


@pytest.mark.parametrize("residual, verdict", [
    (sp.sin(sp.Symbol("x")) ** 2 - sp.cos(sp.Symbol("x")) ** 2, False),          # not zero
    (sp.sin(2 * sp.Symbol("x")) - 2 * sp.sin(sp.Symbol("x")) * sp.cos(sp.Symbol("x")), False),  # zero, unproved
    (sp.Float(0.1) * sp.Symbol("x") + sp.Float(0.2) * sp.Symbol("x") - sp.Float(0.3) * sp.Symbol("x"), False),
    (sp.Matrix([sp.sin(sp.Symbol("x")) ** 2 + sp.cos(sp.Symbol("x")) ** 2 - 1, 1]), False),
    (sp.Matrix([sp.sin(sp.Symbol("x")) ** 2 + sp.cos(sp.Symbol("x")) ** 2 - 1, 0]), True),
    # the rewriting acts on the powers of sin as given: a square of a sum is left to simplify
    ((sp.sin(sp.Symbol("x")) + sp.cos(sp.Symbol("x"))) ** 2 - 2 * sp.sin(sp.Symbol("x")) * sp.cos(sp.Symbol("x")) - 1,
     False),
])
def test_the_shortcut_proves_only_exact_zeros(residual, verdict):
    """False for a nonzero entry, for a zero it cannot prove (simplify then decides) and for
    any entry holding a Float (round-off cancelling in an expansion is no exact proof)."""
    from opalg.report import _expands_to_zero

    assert _expands_to_zero(residual) is verdict


def test_exact_falls_back_to_simplify_when_the_shortcut_cannot_decide(monkeypatch):
    """A zero the shortcut cannot prove is simplify's to prove; a nonzero residual still fails
    with simplify's residual in the message."""
    x = sp.Symbol("x")
    calls = []
    original = sp.simplify
    monkeypatch.setattr(sp, "simplify", lambda e, *a, **k: calls.append(e) or original(e, *a, **k))
    exact("sin 2x", sp.sin(2 * x) - 2 * sp.sin(x) * sp.cos(x))
    with pytest.raises(AssertionError, match="not exactly zero"):
        exact("wrong", sp.sin(x) ** 2 - sp.cos(x) ** 2)
    assert len(calls) == 2


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
