r"""sympy's jacobian, diff and matrix product on big trigonometric expressions, minus their overhead.

The derivation of a TreeSystem (kinematics, ℳ, the Kane and recursive bias) is matrix products
and Jacobians of expressions with tens of thousands of operations.  Two sympy costs dominate it,
neither of which shapes the result:

* ``Matrix.jacobian`` calls ``expr.diff(q_i)`` per entry and coordinate, and sympy's ``diff``
  enters ``Derivative.__new__`` at *every* node of the tree: each computes the node's
  ``free_symbols`` (a walk of the subtree), asks ``is_zero`` of the result (an assumption query
  that, on the real coordinates, recurses through the sign of every term) and rebuilds the
  result looking for unevaluated Derivatives;
* the matrix product forms ``0 * entry`` of its operands to catch ``0 * oo`` (see :func:`matmul`).

:func:`jacobian` and :func:`diff` return the same expressions (the same tree, ``srepr``-equal)
as sympy's: for the node types they know (Add, Mul, Pow, and functions whose derivative is
``Function._eval_derivative``, e.g. sin, cos) each derivative is built with *sympy's own formula
for that node* (the code of ``Add._eval_derivative``, ``Mul._eval_derivative_n_times``,
``Pow._eval_derivative`` and ``Function._eval_derivative`` at n = 1, sympy 1.14) from the
children's derivatives; a subtree free of ``x`` gives ``S.Zero``, as sympy's quick exit does.
Derivatives of shared subtrees are memoized per variable, so each distinct node is visited once.
Any other node type (Derivative, Subs, Piecewise, ...) goes to sympy's ``diff`` unchanged.

Adapted from SymPy 1.14's code (© 2006–2023 SymPy Development Team, BSD license): its
notice is in ``opalg/symbolic/SYMPY_LICENSE.txt``.
"""

from __future__ import annotations

import sympy as sp
from sympy.core.add import Add
from sympy.core.basic import Basic
from sympy.core.function import Function
from sympy.core.mul import Mul
from sympy.core.power import Pow
from sympy.ntheory.multinomial import multinomial_coefficients_iterator

_S = sp.S

#: The sympy release whose node formulas and product loop this module repeats (constraints.txt
#: pins it).  Under any other release every function here is sympy's own routine: a copy of
#: internals that may have changed is never trusted unchecked.
SYMPY_VERSION = "1.14.0"
_SAME_SYMPY = sp.__version__ == SYMPY_VERSION


def _standard_function(e) -> bool:
    """A function node whose derivative is Function._eval_derivative's chain rule."""
    cls = type(e)
    return (isinstance(e, Function) and cls._eval_derivative is Function._eval_derivative
            and cls._eval_derivative_n_times is Basic._eval_derivative_n_times
            and cls.fdiff is not Function.fdiff)


class _Differentiator:
    """d(e)/dx for one symbol x, memoized over the distinct nodes of the expressions seen."""

    def __init__(self, x: sp.Symbol):
        self.x = x
        self.dep: dict = {}       # node -> does it contain x (sympy's free-symbol quick exit)
        self.der: dict = {}       # node -> its derivative

    def depends(self, e) -> bool:
        try:
            return self.dep[e]
        except KeyError:
            pass
        if e.is_Atom:
            r = self.x in e.free_symbols
        elif isinstance(e, (Add, Mul, Pow)) or _standard_function(e):
            r = any(self.depends(a) for a in e.args)
        else:
            r = self.x in e.free_symbols
        self.dep[e] = r
        return r

    def __call__(self, e):
        if not self.depends(e):
            return _S.Zero                      # Derivative.__new__'s quick exit
        try:
            return self.der[e]
        except KeyError:
            pass
        if e.is_Symbol and type(e)._eval_derivative is sp.Symbol._eval_derivative:
            r = _S.One if e == self.x else _S.Zero
        elif type(e) is Add:
            # Add._eval_derivative
            r = e.func(*[self(a) for a in e.args])
        elif type(e) is Mul:
            # Mul._eval_derivative_n_times(s, 1): the Leibniz rule over the multinomial iterator
            args = e.args
            terms = []
            for kvals, c in multinomial_coefficients_iterator(len(args), 1):
                p = Mul(*[self(arg) if k else arg for k, arg in zip(kvals, args)])
                terms.append(c * p)
            r = Add(*terms)
        elif type(e) is Pow:
            # Pow._eval_derivative
            dbase, dexp = self(e.base), self(e.exp)
            r = e * (dexp * sp.log(e.base) + dbase * e.exp / e.base)
        elif _standard_function(e):
            # Function._eval_derivative
            terms = []
            for i, a in enumerate(e.args, 1):
                da = self(a)
                if da.is_zero:
                    continue
                terms.append(e.fdiff(i) * da)
            r = Add(*terms)
        else:
            r = e.diff(self.x)
        self.der[e] = r
        return r


def jacobian(F: sp.Matrix, xs) -> sp.Matrix:
    """``F.jacobian(xs)`` for a column ``F`` and symbols ``xs`` (module docstring: the same
    expressions, each distinct node differentiated once per symbol).

    Examples
    --------
    >>> import sympy as sp
    >>> from opalg.symbolic.fastdiff import jacobian
    >>> a, b = sp.symbols("a b", real=True)
    >>> F = sp.Matrix([sp.sin(a) * sp.cos(b) ** 2, a * b + sp.cos(a + b)])
    >>> jacobian(F, [a, b]) == F.jacobian([a, b])
    True
    """
    xs = list(xs)
    if not _SAME_SYMPY or not all(isinstance(x, sp.Symbol) for x in xs) or F.shape[1] != 1:
        return F.jacobian(xs)
    cols = [diff(F, x) for x in xs]
    return sp.Matrix(F.shape[0], len(xs), lambda i, j: cols[j][i])


def diff(F, x):
    """``F.diff(x)`` for a sympy expression or matrix ``F`` and a symbol ``x`` (the same
    expressions as sympy's; shared subtrees of all entries differentiated once).

    Examples
    --------
    >>> import sympy as sp
    >>> from opalg.symbolic.fastdiff import diff
    >>> a = sp.Symbol("a", real=True)
    >>> diff(sp.sin(a) ** 2, a), diff(sp.Matrix([a ** 2, sp.cos(a)]), a).T
    (2*sin(a)*cos(a), Matrix([[2*a, -sin(a)]]))
    """
    if not _SAME_SYMPY or not isinstance(x, sp.Symbol):
        return F.diff(x)
    d = _Differentiator(x)
    if isinstance(F, sp.MatrixBase):
        return F.applyfunc(d)
    return d(sp.sympify(F))


# ------------------------------------------------------------------ matrix product
#: Node types whose value cannot be infinite when their arguments are finite or unknown (see
#: :func:`_surely_finite`), and the functions among them that are bounded on real arguments.
_FINITE_FUNCS = (sp.sin, sp.cos)


def _surely_finite(entries, seen: set) -> bool:
    """True if no node of ``entries`` can be known infinite (``is_finite == False``): every node
    an Add, a Mul, a Pow with a positive integer exponent, sin or cos, over finite numbers and
    symbols not assumed infinite or zero.  Conservative: anything else answers False."""
    stack = [e for e in entries if e not in seen]
    while stack:
        e = stack.pop()
        if e in seen:
            continue
        seen.add(e)
        if e.is_Atom:
            if e.is_Symbol:
                if e.is_finite is False or e.is_zero is True:
                    return False
            elif not (e.is_Number and e.is_finite):
                return False
            continue
        if type(e) is Pow:
            if not (e.exp.is_Integer and e.exp > 0):
                return False
        elif not (type(e) in (Add, Mul) or isinstance(e, _FINITE_FUNCS)):
            return False
        stack.extend(a for a in e.args if a not in seen)
    return True


def matmul(A: sp.Matrix, B: sp.Matrix) -> sp.Matrix:
    """``A * B`` for sympy matrices of big expressions: the same matrix as sympy's product.

    Why: sympy multiplies expression matrices with ``sdm_matmul_exraw``, which first forms
    ``0 * A_ik`` for every nonzero pair and ``0 * B_kj`` for every entry of B, to catch
    ``0 * oo = nan``; each such product asks ``is_finite`` of a new big expression, a query that
    recurses through every term (most of a Kane bias's matrix products).  Here the operands are
    checked once, structurally (:func:`_surely_finite`), to hold nothing that can be infinite;
    then that check would pass for every entry, and the product is the main loop of
    ``sdm_matmul_exraw`` (sympy 1.14) on the very same sparse representations: the same terms,
    summed by ``Add`` in the same order, so Float coefficients round alike.  Any other case
    (dense or non-expression domains, another matrix class, an operand that might hold an
    infinity) is sympy's own ``A * B``.

    Examples
    --------
    >>> import sympy as sp
    >>> from opalg.symbolic.fastdiff import matmul
    >>> a, b = sp.symbols("a b", real=True)
    >>> A = sp.Matrix([[sp.sin(a), 0.5 * b], [0, sp.cos(a) ** 2]])
    >>> B = sp.Matrix([a * b, sp.cos(b) + 1.25])
    >>> matmul(A, B) == A * B, matmul(A, sp.Matrix([0, sp.oo])) == A * sp.Matrix([0, sp.oo])
    (True, True)
    """
    from sympy.polys.domains import EXRAW
    from sympy.polys.matrices.sdm import SDM

    if not _SAME_SYMPY or not (type(A) is type(B) is sp.MutableDenseMatrix) or A.shape[1] != B.shape[0]:
        return A * B
    from sympy.matrices.utilities import _get_intermediate_simp_bool
    if _get_intermediate_simp_bool(False, None):
        return A * B
    Ad, Bd = A._rep.unify(B._rep, fmt="dense")
    if Ad.domain != EXRAW or not (isinstance(Ad.rep, SDM) and isinstance(Bd.rep, SDM)):
        return A * B
    Ar, Br = Ad.rep, Bd.rep
    seen: set = set()
    if not (_surely_finite([e for row in Ar.values() for e in row.values()], seen)
            and _surely_finite([e for row in Br.values() for e in row.values()], seen)):
        return A * B
    # sdm_matmul_exraw's main loop (its 0 * entry checks all pass: see above)
    m, o = A.shape[0], B.shape[1]
    C = {}
    B_knz = set(Br)
    for i, Ai in Ar.items():
        Ci_list: dict = {}
        Ai_knz = set(Ai)
        for k in Ai_knz & B_knz:
            Aik = Ai[k]
            for j, Bkj in Br[k].items():
                Ci_list.setdefault(j, []).append(Aik * Bkj)
        Ci = {}
        for j, Cij_list in Ci_list.items():
            Cij = EXRAW.sum(Cij_list)
            if Cij:
                Ci[j] = Cij
        if Ci:
            C[i] = Ci
    return sp.MutableDenseMatrix._fromrep(Ad.from_rep(Ar.new(C, (m, o), EXRAW)))
