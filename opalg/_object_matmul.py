"""``A @ B`` for object (sympy) arrays, as numpy forms it, without sympy's cost for zero products.

The symbolic recursions (crba, joint and tree transforms, flex crba) multiply matrices whose
entries mix exact zeros, numbers and sympy expressions.  numpy's object matmul forms each
entry as ``((a0*b0 + a1*b1) + a2*b2) + ...``; for ``0.0 * expr`` sympy returns its 0, but
only after asking whether ``expr`` is finite, a full assumption query on every new expression,
which was over half the time of a symbolic recursion.  :func:`object_matmul` forms the same
sums in the same order and takes such a product as sympy's 0 directly, so its entries are
numpy's (``tests/test_object_matmul.py`` compares them by ``srepr``).
"""

from __future__ import annotations

import sys

import numpy as np


def _zero_or_symbol(v, Basic, Expr) -> int:
    """1 for an exact numeric zero, 2 for a sympy expression that is not a number, else 0
    (``Basic`` and ``Expr``: sympy's classes)."""
    t = type(v)
    if t is float or t is int:
        return 1 if v == 0 else 0
    if isinstance(v, Basic):
        if v.is_Number:
            return 1 if v.is_zero else 0
        return 2 if isinstance(v, Expr) else 0
    if isinstance(v, (np.floating, np.integer)):
        return 1 if v == 0 else 0
    return 0


def object_matmul(A: np.ndarray, B: np.ndarray) -> np.ndarray:
    """``A @ B`` with object (sympy) entries: numpy's object matmul, term by term, with a
    product of an exact numeric zero and a sympy expression taken as sympy's 0.

    The result is the expression numpy's ``A @ B`` gives, with one difference: a non-number
    expression sympy knows to be infinite (a symbol declared so; ``oo`` is a number and keeps
    sympy's nan), times 0, gives 0 here and nan in sympy (the recursions have none).  Operands
    numpy would refuse (shapes, 1-D) go to numpy's own ``A @ B``.

    Examples
    --------
    >>> import numpy as np, sympy as sp
    >>> x = sp.Symbol("x")
    >>> A = np.array([[0.0, x], [1, 0]], dtype=object)
    >>> object_matmul(A, A)
    array([[x, 0],
           [0.0, x]], dtype=object)
    """
    sp = sys.modules.get("sympy")
    if sp is None or A.ndim < 2 or B.ndim < 2 or A.shape[-1] == 0 or A.shape[-1] != B.shape[-2]:
        return A @ B   # numpy's own result (or its error)
    batch = np.broadcast_shapes(A.shape[:-2], B.shape[:-2])
    m, n, p = A.shape[-2], A.shape[-1], B.shape[-1]
    A, B = np.broadcast_to(A, batch + (m, n)), np.broadcast_to(B, batch + (n, p))
    out = np.empty(batch + (m, p), dtype=object)
    zero, Basic, Expr = sp.S.Zero, sp.Basic, sp.Expr
    for idx in np.ndindex(batch):
        a, b = A[idx].tolist(), B[idx].tolist()   # (float entries become Python floats, as in numpy)
        ka = [[_zero_or_symbol(v, Basic, Expr) for v in row] for row in a]
        kb = [[_zero_or_symbol(v, Basic, Expr) for v in row] for row in b]
        o = out[idx]
        for i in range(m):
            ai, kai = a[i], ka[i]
            for j in range(p):
                # kinds 1 and 2 together: a zero times a symbolic expression
                acc = zero if kai[0] | kb[0][j] == 3 else ai[0] * b[0][j]
                for k in range(1, n):
                    acc = acc + (zero if kai[k] | kb[k][j] == 3 else ai[k] * b[k][j])
                o[i, j] = acc
    return out
