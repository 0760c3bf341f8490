"""How the notebooks print a check: what was compared, the error to its decade, the tolerance and why.

The notebook standard (``CONTRIBUTING.md``) asks every check cell for an output that says what
was compared and how close, never a bare ``True``.  The printed error is its *decade*
(``< 1e-11``; round-off level prints as ``≤ 1e-13``), not its digits: the last digits of round-off differ between machines and BLAS
builds, and strict nbval compares the text.  Each function asserts as well as prints, so a wrong
result fails the cell (and the test suite) instead of printing a large number.

One copy for every notebook: notebooks import these instead of defining their own.
"""

from __future__ import annotations

import math

import numpy as np

__all__ = ["decade", "rel", "report", "refute", "bound", "exact"]


def rel(x, y) -> float:
    """``max |x − y| / max(1, max |y|)``: the error relative to the size of the reference y.

    Mixed absolute/relative (the floor 1 keeps a reference near zero from inflating it).

    Examples
    --------
    >>> rel([1.0, 2.0 + 1e-13], [1.0, 2.0]) < 1e-12
    True
    """
    x, y = np.asarray(x, dtype=float), np.asarray(y, dtype=float)
    return float(np.abs(x - y).max() / max(1.0, np.abs(y).max()))


#: Errors at or below this print as ``'≤ 1e-13'``: round-off of a few hundred operations, whose
#: exact decade (1e-16, 1e-15, 1e-14, or an exact 0) moves with the BLAS build, the machine and
#: any reordering of the same arithmetic — a printed digit that strict nbval would compare.
ROUND_OFF_FLOOR = 1e-13


def decade(err: float, floor: float = ROUND_OFF_FLOOR) -> str:
    """The error to its decade (``'< 1e-11'``), or ``'≤ 1e-13'`` at round-off level (0 included).

    Examples
    --------
    >>> decade(3.2e-16), decade(0.0), decade(1e-12), decade(4e-13)
    ('≤ 1e-13', '≤ 1e-13', '< 1e-11', '< 1e-12')
    """
    err = float(err)
    if not math.isfinite(err) or err < 0:
        raise ValueError(f"decade: the error must be finite and >= 0, got {err!r}")
    if err <= floor:
        return f"≤ {floor:g}"
    return f"< 1e{math.floor(math.log10(err)) + 1}"


def report(label: str, err: float, tol: float = 1e-12, why: str = "round-off of the recursions") -> None:
    """Assert ``err <= tol``; print ``label: rel. error < 1eK (tolerance tol: why)``.

    Examples
    --------
    >>> report("ℳ by CRBA vs dense HφMφ*H*", 2.2e-16, 1e-12, "cond(ℳ)·eps with cond ~ 1e3")
    ℳ by CRBA vs dense HφMφ*H*: rel. error ≤ 1e-13 (tolerance 1e-12: cond(ℳ)·eps with cond ~ 1e3)
    """
    err = float(err)
    if not err <= tol:          # also refuses NaN
        raise AssertionError(f"{label}: relative error {err:.3e} is not below the tolerance {tol:g}")
    # A tolerance below the round-off floor is its own floor, so the line never reads "≤ 1e-13 (tolerance 1e-14)".
    print(f"{label}: rel. error {decade(err, min(ROUND_OFF_FLOOR, tol))} (tolerance {tol:g}: {why})")


def refute(label: str, err: float, floor: float = 1e-2) -> None:
    """Assert ``err > floor``: a *wrong* statement, shown wrong by a residual above the floor.

    Examples
    --------
    >>> refute("Ω serial form on a tree", 0.3)
    Ω serial form on a tree: fails, rel. residual > 0.01 (a true identity gives < 1e-12)
    """
    err = float(err)
    if not err > floor:
        raise AssertionError(f"{label}: residual {err:.2e} is not above {floor:g}")
    print(f"{label}: fails, rel. residual > {floor:g} (a true identity gives < 1e-12)")


def bound(label: str, value: float, limit: float, unit: str = "", why: str = "") -> None:
    """Assert ``|value| <= limit``; print ``label: < limit unit (why)`` (e.g. a drift, a residual).

    Examples
    --------
    >>> bound("constraint drift after 2 s", 3e-10, 1e-8, "m", "Baumgarte, rtol 1e-10")
    constraint drift after 2 s: < 1e-08 m (Baumgarte, rtol 1e-10)
    """
    value = float(value)
    if not abs(value) <= limit:
        raise AssertionError(f"{label}: |{value:.3e}| is above the limit {limit:g} {unit}".rstrip())
    text = f"{label}: < {limit:g}" + (f" {unit}" if unit else "") + (f" ({why})" if why else "")
    print(text)


def exact(label: str, residual, how: str | None = None, simplify: bool = True) -> None:
    """Assert ``residual`` is exactly zero; print ``label: exact (how)``.

    For an identity that holds with no round-off: a sympy expression or matrix (simplified with
    ``sympy.simplify`` unless ``simplify=False``; ``how`` defaults to ``'sympy'``), or numbers
    compared bit for bit (every entry must be 0.0; ``how`` defaults to ``'bitwise'``).  The
    label states what was compared, e.g. ``'simplify(ℳ − ℳᵀ) = 0'``.  A sympy residual that
    exact rewriting already reduces to 0 (``sin²a → 1 − cos²a``, then ``expand``) skips the
    simplify, which would prove the same zero in seconds instead of milliseconds; the printed
    line is the same (:func:`_expands_to_zero`).

    Examples
    --------
    >>> import sympy as sp
    >>> x = sp.Symbol("x")
    >>> exact("simplify(sin²x + cos²x − 1) = 0", sp.sin(x)**2 + sp.cos(x)**2 - 1)
    simplify(sin²x + cos²x − 1) = 0: exact (sympy)
    >>> exact("crf(V) + crm(V)ᵀ = 0", [0.0, -0.0])
    crf(V) + crm(V)ᵀ = 0: exact (bitwise)
    """
    if type(residual).__module__.startswith("sympy"):
        import sympy                 # only when given a sympy object: importing it is slow

        how = how or "sympy"
        if simplify and _expands_to_zero(residual):
            print(f"{label}: exact ({how})")
            return
        r = sympy.simplify(residual) if simplify else residual
        entries = list(r) if isinstance(r, sympy.MatrixBase) else [r]
        zero = all(e == 0 for e in entries)
    else:
        r = np.asarray(residual, dtype=float)
        zero = not np.any(r != 0)    # NaN != 0 is True: a NaN is refused
        how = how or "bitwise"
    if not zero:
        raise AssertionError(f"{label}: the residual is not exactly zero: {r}")
    print(f"{label}: exact ({how})")


def _sin_squares_out(e):
    """``e`` with every ``sin(a)**n`` (integer n >= 2) written ``sin(a)**(n % 2) (1 - cos(a)**2)**(n // 2)``."""
    import sympy

    def rewrite(p):
        a, n = p.base.args[0], int(p.exp)
        return sympy.sin(a) ** (n % 2) * (1 - sympy.cos(a) ** 2) ** (n // 2)

    return e.replace(lambda p: (p.is_Pow and isinstance(p.base, sympy.sin) and p.exp.is_Integer
                                and p.exp >= 2), rewrite)


def _expands_to_zero(residual) -> bool:
    """True if every entry of the sympy ``residual`` is proved zero by exact rewriting alone:
    already 0, or 0 once each ``sin²a`` is replaced by ``1 − cos²a`` and the products expanded.

    Why: :func:`exact` asks ``sympy.simplify`` for a residual that is zero, and simplify spends
    seconds per entry on trigonometric polynomials (its trigsimp and factor passes) that this
    rewriting reduces to 0 in milliseconds.  Both steps are identities, so a True here is a
    proof; the printed line is the same.  False is no verdict: :func:`exact` then simplifies as
    before (and its error message shows simplify's residual).  An entry holding a Float is
    never taken here (float cancellation in the expansion is not an exact proof): only the
    structural 0, or simplify, accepts it.
    """
    import sympy
    from sympy.matrices.expressions import MatrixExpr

    if isinstance(residual, sympy.MatrixBase):
        entries = list(residual)
    elif isinstance(residual, sympy.Expr) and not isinstance(residual, MatrixExpr):
        entries = [residual]
    else:
        return False
    for e in entries:
        if e is sympy.S.Zero:
            continue
        if not isinstance(e, sympy.Expr) or isinstance(e, MatrixExpr) or e.has(sympy.Float):
            return False
        if sympy.expand(_sin_squares_out(e)) is not sympy.S.Zero:
            return False
    return True
