r"""sympy's NumPy code printer on big cse-reduced expressions, minus its repeated work.

``sympy.lambdify(..., "numpy")`` prints each cse replacement and the reduced expression with
``NumPyPrinter``.  On the bias of a 10-DoF tree that printing costs about as much as the cse,
mostly in three places that do not print anything:

- ``precedence`` of a product asks ``could_extract_minus_sign``, which builds ``-expr`` (a new
  product, with an assumption query on its fresh coefficient) to compare it with ``expr``; a
  product's precedence is asked two or three times (by its parent and by ``_print_Mul``);
- ``Add.as_ordered_terms`` converts every term's coefficient with ``complex(coeff)`` (an
  ``evalf`` per term) and sorts the generators by ``default_sort_key``, recomputed per call;
- ``_print_Mul`` of a negative product rebuilds it without the sign (an evaluated ``Mul`` when
  the rest is one factor) and sorts the factors by ``sort_key``, recomputed per call.

:class:`NumPyPrinter` is sympy's printer with those answers computed once per node and the
sign of a plain product read from its coefficient (``-expr`` differs from ``expr`` whenever
the coefficient is a finite nonzero number).  Every printed string is sympy's: the methods
below are sympy 1.14's ``StrPrinter._print_Add``, ``StrPrinter.parenthesize`` and
``CodePrinter._print_Mul`` with those calls replaced by memoized equivalents, and any case
outside the plain ones (non-commutative factors, infinities, a coefficient that is not a
finite Float or a Rational, ...) asks sympy's own function.  ``tests/test_symbolic_printer.py``
checks the printed source byte for byte.  Under another sympy release :func:`printer` returns
``None`` (lambdify's own printer).

Adapted from SymPy 1.14's code (© 2006–2023 SymPy Development Team, BSD license): its
notice is in ``opalg/symbolic/SYMPY_LICENSE.txt``.
"""

from __future__ import annotations

from mpmath.libmp import finf, fnan, fninf
from sympy.core.add import Add
from sympy.core.basic import Basic
from sympy.core.expr import Expr
from sympy.core.function import Function
from sympy.core.mul import Mul, _keep_coeff
from sympy.core.numbers import Float, Integer, Rational
from sympy.core.power import Pow
from sympy.core.singleton import S
from sympy.functions.elementary.complexes import re as _re
from sympy.printing.numpy import NumPyPrinter as _SympyNumPyPrinter
from sympy.printing.precedence import PRECEDENCE, PRECEDENCE_FUNCTIONS, PRECEDENCE_VALUES, precedence

from .fastdiff import _SAME_SYMPY

_ADD, _MUL = PRECEDENCE["Add"], PRECEDENCE["Mul"]
_NOT_FINITE = (finf, fninf, fnan)
_DEFAULT_BASE_EXP = Expr.as_base_exp
_EXPR_SORT_KEY = Expr.sort_key


def _plain_number(c) -> bool:
    """A Rational or a finite Float (not nan, not ±oo): ``-c != c`` unless ``c == 0``."""
    return isinstance(c, Rational) or (isinstance(c, Float) and c._mpf_ not in _NOT_FINITE)


def _negative(c) -> bool:
    """``c < 0`` (= ``c.is_extended_negative``) of a :func:`_plain_number`, read from its
    numerator or its mpf's sign bit without sympy's comparison or assumption machinery."""
    if isinstance(c, Rational):
        return c.p < 0
    return c._mpf_[0] == 1 and c._mpf_[1] != 0


def _type_precedence(cls):
    """``precedence(item)`` for every instance of ``cls`` if it does not depend on the
    instance (the MRO reaches ``PRECEDENCE_VALUES`` or nothing), else None."""
    if hasattr(cls, "precedence"):
        return None
    for k in cls.mro():
        if k.__name__ in PRECEDENCE_FUNCTIONS:
            return None
        if k.__name__ in PRECEDENCE_VALUES:
            return PRECEDENCE_VALUES[k.__name__]
    return PRECEDENCE["Atom"]


def _single_factor(e) -> bool:
    """``e`` is a factor that ``Mul(number, e)`` keeps as it is (no exponent gathering with a
    numeric base, no distribution over a sum, no ``exp`` rewritten as a power of E)."""
    if e.is_Symbol:
        return True
    if e.is_Pow:
        b = e.base
        return (b.is_Symbol or b.is_Add or _plain_function(b)) and (e.exp.is_Rational or e.exp.is_Symbol)
    return _plain_function(e)


def _plain_function(e) -> bool:
    """An applied function whose ``as_base_exp`` is ``(e, 1)`` (sin, cos; not exp)."""
    return isinstance(e, Function) and type(e).as_base_exp is _DEFAULT_BASE_EXP


class NumPyPrinter(_SympyNumPyPrinter):
    """sympy's ``NumPyPrinter`` with precedences, sort keys and term orders kept per node (one
    printer prints one lambdify's code; see the module docstring)."""

    def __init__(self, settings=None):
        super().__init__(settings)
        self._prec_memo: dict = {}
        self._type_prec: dict = {}
        self._terms_memo: dict = {}
        self._has_re_memo: dict = {}
        self._skey_memo: dict = {}
        self._complex_memo: dict = {}
        self.fast_nodes = 0           # products and sums taken by the memoized route (tests)

    # -- memoized answers -------------------------------------------------------------------
    def _precedence(self, item):
        """``sympy.printing.precedence.precedence(item)``."""
        cls = type(item)
        try:
            r = self._type_prec[cls]
        except KeyError:
            r = self._type_prec[cls] = _type_precedence(cls)
        if r is not None:
            return r
        if cls is Float or cls is Rational or cls is Integer:      # precedence_Float/_Rational/_Integer
            if _plain_number(item):
                return _ADD if _negative(item) else (_MUL if cls is Rational else PRECEDENCE["Atom"])
            return precedence(item)
        if cls is not Mul:
            return precedence(item)
        try:
            return self._prec_memo[item]
        except KeyError:
            pass
        args = item.args
        c = args[0]
        # precedence_Mul: a Function child with its own precedence below Mul's decides first
        if any(hasattr(a, "precedence") and isinstance(a, Function) and a.precedence < _MUL
               for a in args):
            r = _MUL
        elif (not c.is_Number or _plain_number(c)) and not any(a.is_Number for a in args[1:]):
            # could_extract_minus_sign: ``expr == -expr`` is False (the coefficient of -expr
            # is -c, or -1 where expr has none), so it is "c is a negative number"
            r = _ADD if (c.is_Number and _negative(c)) else _MUL
        else:
            r = precedence(item)
        self._prec_memo[item] = r
        return r

    def _sort_key(self, e):
        """``e.sort_key()`` (= ``default_sort_key(e)`` for an expression): ``Expr.sort_key``
        repeated with its arguments' keys and its sum's term order memoized."""
        try:
            return self._skey_memo[e]
        except KeyError:
            pass
        r = None
        if isinstance(e, Expr) and type(e).sort_key is _EXPR_SORT_KEY:
            coeff, ex = e.as_coeff_Mul()
            exp = S.One
            if ex.is_Pow:
                base, exp = ex.as_base_exp()
                ex = None if base is S.Exp1 else base      # E**x sorts as exp(x): sympy's
            if ex is not None and not ex.is_Dummy and not ex.is_Atom:
                if ex.is_Add:
                    args = self._ordered_terms(ex) if type(ex) is Add else ex.as_ordered_terms()
                elif ex.is_Mul:
                    cpart, ncpart = ex.args_cnc()
                    args = sorted(cpart, key=self._sort_key) + ncpart
                else:
                    args = ex.args
                if all(isinstance(a, Basic) for a in args):
                    keys = tuple([self._sort_key(a) for a in args])
                    r = ex.class_key(), (len(keys), keys), self._sort_key(exp), coeff
        if r is None:
            r = e.sort_key()
        self._skey_memo[e] = r
        return r

    def _complex(self, c):
        """``complex(c)`` of a Number coefficient.  A finite Float's is ``complex(float(c))``
        (both round its mpf once to 53 bits); anything else is sympy's, memoized."""
        if type(c) is Float and c._mpf_ not in _NOT_FINITE:
            return complex(float(c))
        key = (type(c), c)
        try:
            return self._complex_memo[key]
        except KeyError:
            r = self._complex_memo[key] = complex(c)
            return r

    def _ordered_terms(self, expr):
        """``Expr.as_ordered_terms(expr)`` (order None) with ``as_terms``' coefficient
        conversion and generator sort keys memoized, once per node."""
        try:
            return self._terms_memo[expr]
        except KeyError:
            r = self._terms_memo[expr] = self._ordered_terms_of(expr)
            return r

    def _ordered_terms_of(self, expr):
        from sympy.core.exprtools import decompose_power
        from sympy.core.numbers import Number, NumberSymbol

        # the special case of Add(Number, Mul(Number, expr)), as sympy's
        key = lambda x: not isinstance(x, (Number, NumberSymbol))  # noqa: E731
        add_args = sorted(Add.make_args(expr), key=key)
        if (len(add_args) == 2 and isinstance(add_args[0], (Number, NumberSymbol))
                and isinstance(add_args[1], Mul)):
            mul_args = sorted(Mul.make_args(add_args[1]), key=key)
            if (len(mul_args) == 2 and isinstance(mul_args[0], Number)
                    and add_args[0].is_positive and mul_args[0].is_negative):
                return add_args

        # Expr.as_terms
        gens, terms = set(), []
        for term in Add.make_args(expr):
            coeff, _term = term.as_coeff_Mul()
            coeff = self._complex(coeff) if coeff.is_Number else complex(coeff)
            cpart, ncpart = {}, []
            if _term is not S.One:
                for factor in Mul.make_args(_term):
                    if factor.is_number:
                        try:
                            coeff *= complex(factor)
                        except (TypeError, ValueError):
                            pass
                        else:
                            continue
                    if factor.is_commutative:
                        base, exp = decompose_power(factor)
                        cpart[base] = exp
                        gens.add(base)
                    else:
                        ncpart.append(factor)
            terms.append((term, ((coeff.real, coeff.imag), cpart, tuple(ncpart))))
        gens = sorted(gens, key=self._sort_key)
        k, indices = len(gens), {g: i for i, g in enumerate(gens)}
        result = []
        for term, (coeff, cpart, ncpart) in terms:
            monom = [0] * k
            for base, exp in cpart.items():
                monom[indices[base]] = exp
            result.append((term, (coeff, tuple(monom), ncpart)))

        # Expr.as_ordered_terms with _parse_order(None)'s key (lex: the monomial itself)
        skey = self._sort_key

        def order_key(item):
            _, ((re, im), monom, ncpart) = item
            return (tuple(-m for m in monom), tuple(skey(e) for e in ncpart),
                    ((bool(im), im), (re, im)))

        if any(term.is_Order for term, _ in result):
            return expr.as_ordered_terms()
        return [term for term, _ in sorted(result, key=order_key)]

    def _has_re(self, e) -> bool:
        """Whether ``e`` may hold an ``re(...)`` node (a non-Basic argument counts as may)."""
        try:
            return self._has_re_memo[e]
        except KeyError:
            pass
        r = isinstance(e, _re) or any(not isinstance(a, Basic) or self._has_re(a) for a in e.args)
        self._has_re_memo[e] = r
        return r

    # -- sympy's methods, with the memoized answers ---------------------------------------------
    def _handle_UnevaluatedExpr(self, expr):
        """``CodePrinter._handle_UnevaluatedExpr``: ``expr.replace(re, ...)``, which returns
        ``expr`` itself when it holds no ``re``."""
        if isinstance(expr, Basic) and not self._has_re(expr):
            return expr
        return super()._handle_UnevaluatedExpr(expr)

    def parenthesize(self, item, level, strict=False):
        """``StrPrinter.parenthesize``."""
        p = self._precedence(item)
        if (p < level) or ((not strict) and p <= level):
            return "(%s)" % self._print(item)
        return self._print(item)

    def _print_Add(self, expr, order=None):
        """``StrPrinter._print_Add``."""
        if (order or self.order) is not None or type(expr) is not Add:
            return super()._print_Add(expr, order=order)
        self.fast_nodes += 1
        terms = self._ordered_terms(expr)
        prec = self._precedence(expr)
        out = []
        for term in terms:
            t = self._print(term)
            if t.startswith("-") and not term.is_Add:
                sign = "-"
                t = t[1:]
            else:
                sign = "+"
            if self._precedence(term) < prec or term.is_Add:
                out.extend([sign, "(%s)" % t])
            else:
                out.extend([sign, t])
        sign = out.pop(0)
        if sign == "+":
            sign = ""
        return sign + " ".join(out)

    def _ordered_factors(self, expr):
        """``_print_Mul``'s ``(sign, factors)``: the sign of its coefficient and
        ``expr.as_ordered_factors()`` (of ``-expr`` if negative), or None (sympy's route)."""
        args = expr.args
        if not all(a.is_commutative for a in args) or any(a.is_Number for a in args[1:]):
            return None
        c = args[0]
        if not c.is_Number:
            return "", sorted(args, key=self._sort_key)
        if not _plain_number(c):
            return None
        if not _negative(c):
            # args_cnc(split_1=True) splits a negative coefficient only; c >= 0 here
            return "", sorted(args, key=self._sort_key)
        nc = -c                                # _keep_coeff(-c, e), e = expr.as_coeff_Mul()[1]
        rest = args[1:]
        if nc is S.One:                        # _keep_coeff returns e itself
            if len(rest) == 1 and rest[0].is_Mul:
                return None
            factors = list(rest)
        elif len(rest) > 1 or rest[0].is_Add or _single_factor(rest[0]):
            # Mul._from_args([-c, *rest]), Mul(-c, e, evaluate=False), or Mul(-c, e) that
            # flatten leaves as (-c, e)
            factors = [nc, *rest]
        else:
            return None
        return "-", sorted(factors, key=self._sort_key)

    def _print_Mul(self, expr):
        """``CodePrinter._print_Mul``."""
        if self.order is not None or type(expr) is not Mul:
            return super()._print_Mul(expr)
        got = self._ordered_factors(expr)
        if got is None:
            return super()._print_Mul(expr)
        self.fast_nodes += 1
        sign, args = got
        prec = self._precedence(expr)

        a, b, pow_paren = [], [], []
        for item in args:
            if item.is_commutative and item.is_Pow and item.exp.is_Rational and item.exp.is_negative:
                if item.exp != -1:
                    b.append(Pow(item.base, -item.exp, evaluate=False))
                else:
                    if len(item.args[0].args) != 1 and isinstance(item.base, Mul):
                        pow_paren.append(item)
                    b.append(Pow(item.base, -item.exp))
            else:
                a.append(item)
        a = a or [S.One]
        if len(a) == 1 and sign == "-":
            a_str = [self.parenthesize(a[0], 0.5 * (PRECEDENCE["Pow"] + PRECEDENCE["Mul"]))]
        else:
            a_str = [self.parenthesize(x, prec) for x in a]
        b_str = [self.parenthesize(x, prec) for x in b]
        for item in pow_paren:
            if item.base in b:
                b_str[b.index(item.base)] = "(%s)" % b_str[b.index(item.base)]
        if not b:
            return sign + "*".join(a_str)
        if len(b) == 1:
            return sign + "*".join(a_str) + "/" + b_str[0]
        return sign + "*".join(a_str) + "/(%s)" % "*".join(b_str)


def printer():
    """A fresh :class:`NumPyPrinter` with the settings ``lambdify(..., "numpy")`` gives its own
    (no user functions: the caller takes the plain call for implemented functions), or None
    under a sympy release other than the one it repeats (lambdify's own printer)."""
    if not _SAME_SYMPY:
        return None
    return NumPyPrinter({"fully_qualified_modules": False, "inline": True,
                         "allow_unknown_functions": True, "user_functions": {}})
