r"""sympy's ``cse`` on big trigonometric expressions, minus the cost of its canonical ordering.

``sympy.cse`` (default options) finds optimization opportunities (``opt_cse``), marks repeated
subtrees and rebuilds the tree with the repeated ones replaced by symbols x0, x1, ...
(``tree_cse``).  To make the numbering independent of hashes, the rebuild visits the arguments
of every Add and Mul in the order of ``sympy.ordered``: by node count, ties broken by
``default_sort_key``.  Neither key is cached by sympy, and the node count walks the whole
subtree: every Add of a big bias recounts the nodes of all its terms, and the same terms are
counted again in every Add that holds them (for the bias of a 10-DoF tree, most of the time of
the cse).

The rebuild's other cost is sympy's evaluated ``Mul(*args)`` / ``Add(*args)``: each product
with a Float coefficient multiplies it by 1, a new (equal) Float whose first assumption query
(``is_zero``) runs a full deduction of its facts, about half of what is left.

:func:`cse` is ``sympy.cse`` with ``tree_cse`` repeated (sympy 1.14's code) around an
:func:`_Orderer` that memoizes both keys per node over one call, and with the rebuilt products
and sums of plain factors (symbols, sin, cos, sums and their integer powers, distinct bases)
built directly as ``flatten`` would leave them (:func:`_fast_mul`, :func:`_fast_add`; any other
case is sympy's constructor).  The keys are pure functions of the (immutable) node, so the
order, the numbering and every expression returned are sympy's own (srepr-equal;
``tests/test_symbolic_fastcse.py`` checks it).  ``opt_cse`` is sympy's, less two avoidable
costs (:mod:`opalg.symbolic.fastopt`).  Only the default call is repeated (no symbols, optimizations,
postprocess or ignore; ``order="canonical"``); anything else, or another sympy release, is
sympy's own ``cse``.

Adapted from SymPy 1.14's code (© 2006–2023 SymPy Development Team, BSD license): its
notice is in ``opalg/symbolic/SYMPY_LICENSE.txt``.
"""

from __future__ import annotations

import builtins
from collections import defaultdict

import sympy as sp
from mpmath.libmp import finf, fnan, fninf, fzero
from sympy.core.basic import Basic
from sympy.core.function import Derivative
from sympy.core.mul import _args_sortkey          # the key of Mul's and Add's canonical sort
from sympy.core.parameters import global_parameters
from sympy.core.power import Pow

from .fastdiff import _SAME_SYMPY

_S = sp.S


class _Orderer:
    """``sympy.ordered(seq)`` (default keys) with ``_nodes`` and ``default_sort_key`` memoized."""

    def __init__(self):
        self.count: dict = {}
        self.skey: dict = {}

    def nodes(self, e):
        """``sympy.core.sorting._nodes(e)``: the node count, each distinct subtree counted once
        per call (Floats count ½, as sympy's; sums of halves are exact, so the value is the same)."""
        if not isinstance(e, Basic) or isinstance(e, Derivative):
            from sympy.core.sorting import _nodes
            return _nodes(e)
        return self._count(e)

    def _count(self, e):
        if not e.args:
            return 0.5 if e.is_Float else 1
        try:
            return self.count[e]
        except KeyError:
            pass
        # sympy.core.sorting._node_count, with the children's counts memoized
        r = 0.5 if e.is_Float else 1 + sum(map(self._count, e.args))
        self.count[e] = r
        return r

    def sort_key(self, e):
        try:
            return self.skey[e]
        except KeyError:
            pass
        from sympy.core.sorting import default_sort_key
        r = self.skey[e] = default_sort_key(e)
        return r

    def ordered(self, seq):
        """``list(sympy.ordered(seq))``: grouped by node count, groups in increasing count, ties
        in increasing default_sort_key, remaining ties in input order (sympy's ``ordered`` at
        keys=None, default=True, warn=False, step by step)."""
        seq = list(seq)
        if len(seq) <= 1:
            return seq
        by_nodes = defaultdict(list)
        for a in seq:
            by_nodes[self.nodes(a)].append(a)
        out = []
        for _, value in sorted(by_nodes.items()):
            if len(value) > 1:
                # sympy groups the tie by key (a dict) and sorts the groups: the same order as
                # a stable sort on the key, without hashing the keys (deep tuples holding
                # Floats, whose hash is recomputed each time)
                value = sorted(value, key=self.sort_key)
            out.extend(value)
        return out


_FUNCS = (sp.sin, sp.cos)


def _plain_factor(o) -> bool:
    """A commutative Symbol, sin, cos or Add, or an integer power of one: a factor that
    ``Mul.flatten`` passes through unchanged (up to an equal copy) when its base occurs once
    (and, for an Add, when it is not alone with a number: that product is distributed)."""
    t = type(o)
    if t is Pow:
        if not o.exp.is_Integer:
            return False
        o = o.base
        t = type(o)
    return (t is sp.Symbol or t is sp.Add or t in _FUNCS) and o.is_commutative is True


def _coefficient(o) -> bool:
    """A finite, nonzero Rational or Float: ``1 * o`` and ``0 + o`` are equal copies of it."""
    if o.is_Rational:
        return o is not _S.Zero
    return o.is_Float and o._mpf_ not in (fzero, finf, fninf, fnan)


def _fast_mul(args):
    """``Mul(*args)`` for numbers (−1 any number of times and at most one other finite nonzero
    number), plain factors with distinct bases and products of them; or None.

    Mul.flatten would splice in the arguments of the products, multiply the numbers (−1 only
    flips the sign: exact in any order) starting from 1 (a new Float equal to the old one,
    whose first assumption query, ``is_zero``, costs a full deduction of its facts), leave each
    factor as it is, sort the factors by ``_args_sortkey`` and put the coefficient first: done
    here, without the queries."""
    if len(args) < 2:
        return None
    seq = []
    for o in args:
        if type(o) is sp.Mul:
            if o.is_commutative is not True:
                return None
            seq.extend(o.args)
        else:
            seq.append(o)
    number, negative, factors, bases = None, False, [], set()
    for o in seq:
        if o is _S.NegativeOne:
            negative = not negative
        elif o.is_Number:
            if number is not None or o is _S.One or not _coefficient(o):
                return None
            number = o
        elif _plain_factor(o):
            b = o.base if type(o) is Pow else o
            if b in bases:
                return None
            bases.add(b)
            factors.append(o)
        else:
            return None
    coeff = _S.NegativeOne if negative else None
    if number is not None:
        coeff = -number if negative else number
    if not factors or (coeff is not None and len(factors) == 1 and type(factors[0]) is sp.Add):
        return None
    factors.sort(key=_args_sortkey)
    return sp.Mul._from_args(factors if coeff is None else [coeff, *factors], True)


def _fast_add(args):
    """``Add(*args)`` for a number (optional) plus terms that are plain factors or products of
    a coefficient and plain factors, no two with the same non-numeric part; or None.
    Add.flatten would split each term into coefficient and rest, rebuild the same term from
    them (an equal copy), sort the terms by ``_args_sortkey`` and put the number first."""
    coeff, terms, rests = None, [], set()
    for o in args:
        if o.is_Number:
            if coeff is not None or not _coefficient(o):
                return None
            coeff = o
            continue
        if type(o) is sp.Mul:
            a = o.args
            if a[0].is_Number:
                if not _coefficient(a[0]):
                    return None
                a = a[1:]
            if not (o.is_commutative is True and all(_plain_factor(f) for f in a)):
                return None
            rest = a[0] if len(a) == 1 else (sp.Mul, a)
        elif type(o) is not sp.Add and _plain_factor(o):
            rest = o
        else:
            return None
        if rest in rests:
            return None
        rests.add(rest)
        terms.append(o)
    if len(args) < 2 or not terms:
        return None
    terms.sort(key=_args_sortkey)
    return sp.Add._from_args(terms if coeff is None else [coeff, *terms], True)


def _build(func, args):
    """``func(*args)``: by :func:`_fast_mul` / :func:`_fast_add` where they apply."""
    if global_parameters.evaluate and global_parameters.distribute:
        if func is sp.Mul:
            r = _fast_mul(args)
        elif func is sp.Add:
            r = _fast_add(args)
        else:
            r = None
        if r is not None:
            return r
    return func(*args)


def _tree_cse(exprs, symbols, opt_subs):
    """``sympy.simplify.cse_main.tree_cse(exprs, symbols, opt_subs, "canonical", ())``
    (sympy 1.14's code, less its branches for matrix expressions, which the callers here
    exclude), with the argument order of Adds and Muls from :class:`_Orderer`."""
    from sympy.simplify.cse_main import Unevaluated
    from sympy.utilities.iterables import iterable

    order = _Orderer()
    to_eliminate, seen_subexp, excluded_symbols = set(), set(), set()

    def _find_repeated(expr):
        if not isinstance(expr, (Basic, Unevaluated)):
            return
        if isinstance(expr, Basic) and (expr.is_Atom or expr.is_Order):
            if expr.is_Symbol:
                excluded_symbols.add(expr.name)
            return
        if iterable(expr):
            args = expr
        else:
            if expr in seen_subexp:
                to_eliminate.add(expr)
                return
            seen_subexp.add(expr)
            if expr in opt_subs:
                expr = opt_subs[expr]
            args = expr.args
        list(map(_find_repeated, args))

    for e in exprs:
        if isinstance(e, Basic):
            _find_repeated(e)

    # symbols that would clash with names in the expressions are skipped
    symbols = (_ for _ in symbols if _.name not in excluded_symbols)
    replacements, subs = [], {}

    def _rebuild(expr):
        if not isinstance(expr, (Basic, Unevaluated)):
            return expr
        if not expr.args:
            return expr
        if iterable(expr):
            return expr.func(*[_rebuild(arg) for arg in expr.args])
        if expr in subs:
            return subs[expr]
        orig_expr = expr
        if expr in opt_subs:
            expr = opt_subs[expr]
        # Adds and Muls in canonical order: the numbering does not depend on hashes
        if isinstance(expr, sp.Mul):
            c, nc = expr.args_cnc()
            args = nc if c == [1] else order.ordered(c) + nc
        elif isinstance(expr, sp.Add):
            args = order.ordered(expr.args)
        else:
            args = expr.args
        new_args = list(map(_rebuild, args))
        if isinstance(expr, Unevaluated) or new_args != args:
            new_expr = _build(expr.func, new_args)
        else:
            new_expr = expr
        if orig_expr in to_eliminate:
            sym = next(symbols)
            subs[orig_expr] = sym
            replacements.append((sym, new_expr))
            return sym
        return new_expr

    reduced = [_rebuild(e) if isinstance(e, Basic) else e for e in exprs]
    return replacements, reduced


def _plain_nodes(exprs) -> bool:
    """No node of ``exprs`` (distinct subtrees walked once) is a matrix expression or a RootOf:
    the node types whose branches of sympy's tree_cse :func:`_tree_cse` leaves out."""
    from sympy.matrices.expressions import MatrixExpr
    from sympy.matrices.expressions.matexpr import MatrixElement
    from sympy.polys.rootoftools import RootOf

    seen, stack = set(), list(exprs)
    while stack:
        e = stack.pop()
        if e in seen:
            continue
        seen.add(e)
        if not isinstance(e, sp.Expr) or isinstance(e, (MatrixExpr, MatrixElement, RootOf)):
            return False
        stack.extend(e.args)
    return True


def cse(exprs, list=True):     # noqa: A002 (sympy's keyword; builtins.list below)
    """``sympy.cse(exprs, list=list)`` (default options): the same replacements and reduced
    expressions, srepr for srepr, for an expression, a dense Matrix, or a list or tuple of
    them (module docstring); any other input is sympy's own cse.

    Examples
    --------
    >>> import sympy as sp
    >>> from opalg.symbolic.fastcse import cse
    >>> x, y = sp.symbols("x y", real=True)
    >>> e = [sp.sin(x + y) ** 2 + sp.cos(x + y), (x + y) * sp.sin(x + y)]
    >>> cse(e) == sp.cse(e), cse(sp.Matrix(e), list=False) == sp.cse(sp.Matrix(e), list=False)
    (True, True)
    """
    from sympy.utilities.iterables import numbered_symbols

    from .fastopt import opt_cse

    container = isinstance(exprs, (builtins.list, tuple))
    seq = builtins.list(exprs) if container else [exprs]
    dense = (sp.Matrix, sp.ImmutableMatrix)
    flat = [e.flat() if isinstance(e, dense) else [e] for e in seq]
    if (not _SAME_SYMPY or not seq
            or not all(isinstance(e, dense) or isinstance(e, sp.Expr) for e in seq)
            or not _plain_nodes([x for f in flat for x in f])):
        return sp.cse(exprs, list=list)
    # sympy's cse: a dense matrix is cse'd as the Tuple of its entries
    work = [sp.Tuple(*e.flat()) if isinstance(e, dense) else e for e in seq]
    opt_subs = opt_cse(work)                   # sympy's opt_cse(work, "canonical")
    replacements, reduced = _tree_cse(work, numbered_symbols(cls=sp.Symbol), opt_subs)
    for i, e in enumerate(seq):
        if isinstance(e, dense):
            reduced[i] = sp.Matrix(e.rows, e.cols, reduced[i])
            if isinstance(e, sp.ImmutableMatrix):
                reduced[i] = reduced[i].as_immutable()
    if list:
        return replacements, reduced
    # sympy's _cse_homogeneous: the input's own container, or the single expression
    if container:
        return replacements, type(exprs)(reduced)
    return replacements, reduced[0]
