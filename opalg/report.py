"""How the notebooks print a check: what was compared, the error to its decade, the tolerance and why.

The notebook standard (``notebooks/README.md``) asks every check cell for an output that says what
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
    label states what was compared, e.g. ``'simplify(ℳ − ℳᵀ) = 0'``.

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

        r = sympy.simplify(residual) if simplify else residual
        entries = list(r) if isinstance(r, sympy.MatrixBase) else [r]
        zero = all(e == 0 for e in entries)
        how = how or "sympy"
    else:
        r = np.asarray(residual, dtype=float)
        zero = not np.any(r != 0)    # NaN != 0 is True: a NaN is refused
        how = how or "bitwise"
    if not zero:
        raise AssertionError(f"{label}: the residual is not exactly zero: {r}")
    print(f"{label}: exact ({how})")
