r"""sympy's ``opt_cse`` (the first pass of ``cse``), minus its avoidable rebuilds and queries.

``opt_cse`` walks the expressions once and records substitutions that help the elimination:
a term with a leading minus sign becomes ``-1 * (negated term)``, and the commutative part of
every product is rebuilt and handed, with the sums, to ``match_common_args``.  On the
expressions of a TreeSystem (ℳ, the biases: sums of products of sin, cos, symbols and Float
coefficients) two steps cost most of its time without shaping its result:

* the rebuild ``Mul(*commutative args)`` of every product: ``Mul.flatten`` multiplies the Float
  coefficient by 1, a new equal Float whose first assumption query runs a full deduction of
  its facts;
* ``Mul.could_extract_minus_sign``: it forms ``-m`` to compare it with ``m`` (to catch
  ``zoo``) and then asks ``is_extended_negative`` of the coefficient (again a deduction).

:func:`opt_cse` is sympy 1.14's ``opt_cse(exprs, "canonical")`` with those two steps taken
directly where the answer is plain: a product's rebuild by :func:`opalg.symbolic.fastcse._build`
(``Mul`` built as ``flatten`` leaves it, checked srepr-equal in
``tests/test_symbolic_fastcse.py``; any other product is sympy's ``Mul``), and the sign of a
product whose coefficient is a finite nonzero Rational or Float read from the number itself
(such a product is never equal to its negation, and its coefficient is extended-negative
exactly when its sign is; the same reading serves ``args_cnc``'s split of a negative
coefficient).  Sums and every other node keep sympy's own
``could_extract_minus_sign``; ``match_common_args`` is sympy's algorithm on plain integer
sets (:func:`opalg.symbolic.fastmatch.match_common_args`).  The substitutions returned are
sympy's: equal keys, equal values node for node.

Only for what :func:`opalg.symbolic.fastcse.cse` passes (no matrix expressions, sympy 1.14).

Adapted from SymPy 1.14's code (© 2006–2023 SymPy Development Team, BSD license): its
notice is in ``opalg/symbolic/SYMPY_LICENSE.txt``.
"""

from __future__ import annotations

from mpmath.libmp import finf, fnan, fninf, fzero
from sympy.core.add import Add
from sympy.core.basic import Basic
from sympy.core.mul import Mul
from sympy.core.power import Pow
from sympy.core.singleton import S

from .fastcse import _build
from .fastmatch import match_common_args


def _negative(c):
    """``c.is_extended_negative`` for a finite nonzero Rational or Float (read from the number,
    no assumption query), else None."""
    if c.is_Rational:
        return None if c is S.Zero else c.p < 0
    if c.is_Float and c._mpf_ not in (fzero, finf, fninf, fnan):
        return c._mpf_[0] == 1                   # the sign bit of a finite nonzero mpf
    return None


def _minus(expr) -> bool:
    """``expr.could_extract_minus_sign()``: read from the coefficient of a plain product,
    counted over the terms of a sum, sympy's own method for anything else."""
    t = type(expr)
    if t is Mul:
        c = expr.args[0]
        if not c.is_Number:
            return False                         # sympy: c.is_Number is False either way
        negative = _negative(c)
        return expr.could_extract_minus_sign() if negative is None else negative
    if t is Add:
        # Add.could_extract_minus_sign (sympy.core.add._could_extract_minus_sign)
        negative = sum(1 for a in expr.args if _minus(a))
        positive = len(expr.args) - negative
        if positive != negative:
            return positive < negative
        return bool(expr.sort_key() < (-expr).sort_key())
    return expr.could_extract_minus_sign()


def _args_cnc(m):
    """``m.args_cnc(cset=False)`` for a Mul, the sign of its leading number read by
    :func:`_negative` where it can be."""
    args = list(m.args)
    for i, mi in enumerate(args):
        if not mi.is_commutative:
            c, nc = args[:i], args[i:]
            break
    else:
        c, nc = args, []
    if c and c[0].is_Number and c[0] is not S.NegativeOne:
        negative = _negative(c[0])
        if negative is None:
            negative = c[0].is_extended_negative
        if negative:
            c[:1] = [S.NegativeOne, -c[0]]
    return c, nc


def opt_cse(exprs):
    """``sympy.simplify.cse_main.opt_cse(exprs, "canonical")`` (module docstring): the same
    substitutions, for expressions free of matrix expressions.

    Examples
    --------
    >>> import sympy as sp
    >>> from sympy.simplify.cse_main import opt_cse as sympys
    >>> from opalg.symbolic.fastopt import opt_cse
    >>> x, y = sp.symbols("x y", real=True)
    >>> e = [-2.5 * x * sp.sin(y) + x * y, 1 / (x * y) - 0.5 * x * sp.sin(y)]
    >>> got, want = opt_cse(e), sympys(e)
    >>> list(got) == list(want), list(map(str, got.values())) == list(map(str, want.values()))
    (True, True)
    """
    from sympy.core.containers import OrderedSet
    from sympy.simplify.cse_main import Unevaluated
    from sympy.utilities.iterables import iterable, topological_sort

    opt_subs = {}
    adds, muls = OrderedSet(), OrderedSet()
    seen_subexp, collapsible_subexp = set(), set()

    def _find_opts(expr):
        if not isinstance(expr, (Basic, Unevaluated)):
            return
        if expr.is_Atom or expr.is_Order:
            return
        if iterable(expr):
            list(map(_find_opts, expr))
            return
        if expr in seen_subexp:
            return expr
        seen_subexp.add(expr)
        list(map(_find_opts, expr.args))
        if _minus(expr):
            if isinstance(expr, Add):
                neg_expr = Add(*(-i for i in expr.args))
            else:
                neg_expr = -expr
            if not neg_expr.is_Atom:
                opt_subs[expr] = Unevaluated(Mul, (S.NegativeOne, neg_expr))
                seen_subexp.add(neg_expr)
                expr = neg_expr
        if isinstance(expr, Mul):
            if len(expr.args) == 1:
                collapsible_subexp.add(expr)
            else:
                muls.add(expr)
        elif isinstance(expr, Add):
            if len(expr.args) == 1:
                collapsible_subexp.add(expr)
            else:
                adds.add(expr)
        elif isinstance(expr, Pow):
            base, exp = expr.base, expr.exp
            if exp.could_extract_minus_sign():
                opt_subs[expr] = Unevaluated(Pow, (Pow(base, -exp), -1))

    for e in exprs:
        if isinstance(e, (Basic, Unevaluated)):
            _find_opts(e)

    # collapsing of multinary operations with single arguments
    edges = [(s, s.args[0]) for s in collapsible_subexp if s.args[0] in collapsible_subexp]
    for e in reversed(topological_sort((collapsible_subexp, edges))):
        opt_subs[e] = opt_subs.get(e.args[0], e.args[0])

    # split muls into commutative
    commutative_muls = OrderedSet()
    for m in muls:
        c, nc = _args_cnc(m)                    # m.args_cnc(cset=False)
        if c:
            c_mul = _build(m.func, c)
            if nc:
                if c_mul == 1:
                    new_obj = m.func(*nc)
                else:
                    new_obj = m.func(c_mul, m.func(*nc), evaluate=False)
                opt_subs[m] = new_obj
            if len(c) > 1:
                commutative_muls.add(c_mul)

    match_common_args(Add, adds, opt_subs)
    match_common_args(Mul, commutative_muls, opt_subs)
    return opt_subs
