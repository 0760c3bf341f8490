"""Array helpers that work for float, complex and sympy (object) entries.

Every per-body quantity in opalg is a numpy array whose *last* two axes are the
matrix axes and whose leading axes are batch axes.  Symbolic models use numpy
``object`` arrays holding sympy expressions, so the same recursion code runs
for numbers and for symbols; only the few non-polynomial operations below
(sin, cos, matrix inverse) need to know which case they are in.
"""

from __future__ import annotations

import cmath
import numbers
import sys

import numpy as np

from opalg import opcount
from opalg.errors import OpalgError


def _sympy():
    """The sympy module, imported on first need: object arrays are the sympy path.

    Nothing here imports sympy at module level, so ``import opalg`` stays free of it;
    a sympy object can only exist once sympy is in ``sys.modules``.
    """
    import sympy

    return sympy


def is_symbolic(*arrays) -> bool:
    """True if any argument is (or contains) a sympy expression."""
    sp = sys.modules.get("sympy")
    for a in arrays:
        if sp is not None and isinstance(a, sp.Basic):
            return True
        if isinstance(a, np.ndarray) and a.dtype == object:
            return True
        if isinstance(a, (list, tuple)) and is_symbolic(*a):
            return True
    return False


def _short(v) -> str:
    r = repr(v)
    return r if len(r) <= 40 else r[:37] + "..."


def _bad_entry(v) -> str | None:
    """None if ``v`` is a number or a sympy expression, else what it is (for a message)."""
    sp = sys.modules.get("sympy")
    if sp is not None and isinstance(v, sp.Basic):
        return None if isinstance(v, sp.Expr) else f"a sympy {type(v).__name__} {_short(v)}"
    if isinstance(v, (numbers.Number, np.bool_)):
        return None
    return f"a {type(v).__name__} {_short(v)}"


def _leaves(x, idx=()):
    """(index, entry) of the scalars in nested lists, tuples, arrays and sympy matrices.

    The entries of an object array are yielded as they are: a sequence stored in one
    array cell is an entry (and a bad one), not a container.
    """
    sp = sys.modules.get("sympy")
    if sp is not None and isinstance(x, sp.MatrixBase):
        x = x.tolist()
    if isinstance(x, np.ndarray):
        if x.dtype.kind not in "biufc":
            for i, v in np.ndenumerate(x):
                yield idx + tuple(int(j) for j in i), v
    elif isinstance(x, (list, tuple)):
        for i, v in enumerate(x):
            yield from _leaves(v, idx + (i,))
    else:
        yield idx, x


def check_no_strings(x, what: str, error: type[Exception] = OpalgError) -> None:
    """Refuse entries that are neither numbers nor sympy expressions (strings above all).

    sympy *evaluates* strings (``sympify("...")`` runs the code in them), so every
    input that may reach sympy is checked here first, without converting anything.

    Parameters
    ----------
    x : object
        A scalar, or nested lists/tuples/arrays/sympy matrices of scalars.
    what : str
        Name of the argument (or body and field) for the message.
    error : exception class
        Raised on the first bad entry (``StateError`` for states, ``ModelError`` for model data).

    Examples
    --------
    >>> from opalg import _backend as bk
    >>> bk.check_no_strings([1.0, 2], "q")
    >>> bk.check_no_strings([1.0, "2"], "q")  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    opalg.errors.OpalgError: q has a non-numeric entry at index (1,): a str '2' (expected a number ...)
    """
    if isinstance(x, np.ndarray) and x.dtype.kind in "biufc":
        return
    for idx, v in _leaves(x):
        bad = _bad_entry(v)
        if bad is not None:
            where = f"{what} has a non-numeric entry at index {idx}: " if idx else f"{what} is not numeric: "
            raise error(where + bad + " (expected a number or a sympy expression; strings are never evaluated)")


def first_nonfinite(a: np.ndarray):
    """``(index, entry)`` of the first non-finite entry of ``a`` (nan, inf, sympy nan/zoo/oo), or None.

    Symbolic entries count as finite unless they contain nan, zoo or ±oo.
    """
    if a.dtype.kind in "fc":
        bad = ~np.isfinite(a)
        if not bad.any():
            return None
        idx = tuple(int(i) for i in np.argwhere(bad)[0])
        return idx, a[idx]
    if a.dtype != object:
        return None
    sp = sys.modules.get("sympy")
    for idx, v in np.ndenumerate(a):
        if sp is not None and isinstance(v, sp.Basic):
            if v.has(sp.nan, sp.zoo, sp.oo, -sp.oo):
                return tuple(int(i) for i in idx), v
        elif isinstance(v, (numbers.Number, np.bool_)) and not cmath.isfinite(complex(v)):
            return tuple(int(i) for i in idx), v
    return None


#: The dtypes of the fast paths below, compared by identity (``a.dtype is _F64``): an equal
#: but distinct dtype object (a non-native byte order, say) just takes the generic path.
_F64, _C128 = np.dtype(np.float64), np.dtype(np.complex128)


def asarray(x, what: str = "array", error: type[Exception] = OpalgError) -> np.ndarray:
    """Convert to an array: float/complex stay numeric, sympy gives dtype object.

    Strings and other non-numeric entries are refused with ``error`` naming ``what``
    (see :func:`check_no_strings`): nothing that reaches sympy is ever a string.
    """
    if type(x) is np.ndarray and x.dtype.kind in "fc":
        return x
    sp = sys.modules.get("sympy")
    if sp is not None and isinstance(x, sp.MatrixBase):
        a = np.array(x.tolist(), dtype=object)
    elif is_symbolic(x):
        a = np.array(x, dtype=object)
    else:
        a = np.asarray(x)
        if a.dtype.kind in "biu":
            a = a.astype(float)
    if a.dtype.kind not in "fc":
        check_no_strings(x, what, error)
    return a


def broadcast_view(a: np.ndarray, shape: tuple) -> np.ndarray:
    """``np.broadcast_to(a, shape)``, a read-only view; a plain read-only view, without
    broadcast_to's cost, when ``a`` already has ``shape`` (a single state).

    Examples
    --------
    >>> import numpy as np
    >>> v = broadcast_view(np.eye(2), (2, 2))
    >>> v.flags.writeable, broadcast_view(np.eye(2), (3, 2, 2)).shape
    (False, (3, 2, 2))
    """
    if type(a) is np.ndarray and a.shape == shape:
        v = a.view()
        v.flags.writeable = False
        return v
    return np.broadcast_to(a, shape)


def _elementwise(fn_num, fn_sym, x):
    if type(x) is np.ndarray and x.dtype.kind in "fc":   # asarray's own fast case
        return fn_num(x)
    x = asarray(x)
    if x.dtype == object:
        out = np.empty(x.shape, dtype=object)
        for idx in np.ndindex(x.shape):
            out[idx] = fn_sym(x[idx])
        return out
    return fn_num(x)


def sin(x):
    return _elementwise(np.sin, lambda v: _sympy().sin(v), x)


def cos(x):
    return _elementwise(np.cos, lambda v: _sympy().cos(v), x)


def zeros(shape, *likes) -> np.ndarray:
    """Zeros with the common dtype of ``likes`` (object zeros are sympy's 0)."""
    dtype = common_dtype(*likes) if likes else float
    if dtype == object:
        z = np.empty(shape, dtype=object)
        z.fill(_sympy().Integer(0))
        return z
    return np.zeros(shape, dtype=dtype)


def eye(n: int, *likes) -> np.ndarray:
    """Identity with the common dtype of ``likes`` (object: sympy's 0 and 1)."""
    dtype = common_dtype(*likes) if likes else float
    if dtype != object:
        return np.eye(n, dtype=dtype)
    e = zeros((n, n), *likes)
    for i in range(n):
        e[i, i] = _sympy().Integer(1)
    return e


def common_dtype(*arrays):
    """Result dtype of mixing arrays (object wins, then complex, then float)."""
    for a in arrays:   # all float64 arrays (the numeric hot path), without generators
        if type(a) is not np.ndarray or a.dtype is not _F64:
            break
    else:
        return np.float64
    if all(type(a) is np.ndarray and a.dtype.kind == "f" for a in arrays):
        return np.float64 if all(a.dtype == np.float64 for a in arrays) else np.result_type(float, *arrays)
    arrs = [asarray(a) for a in arrays]
    if any(a.dtype == object for a in arrs):
        return object
    return np.result_type(float, *[a.dtype for a in arrs])


def inv(A: np.ndarray) -> np.ndarray:
    """Batched inverse of the trailing square matrices of ``A``.

    Used only for the small hinge blocks D(k) (n_k x n_k), never for a mass
    matrix: the point of the operator algebra is that no large inverse is formed.
    """
    A = asarray(A)
    if A.shape[-1] != A.shape[-2]:
        raise ValueError(f"cannot invert non-square {A.shape[-2]}x{A.shape[-1]} blocks")
    if A.dtype != object:
        if A.shape[-1] == 1:
            return 1.0 / A
        return np.linalg.inv(A)
    sp = _sympy()
    out = np.empty(A.shape, dtype=object)
    for idx in np.ndindex(A.shape[:-2]):
        out[idx] = np.array(sp.Matrix(A[idx].tolist()).inv().tolist(), dtype=object)
    return out


def mT(A: np.ndarray) -> np.ndarray:
    """Transpose of the trailing two axes (the adjoint '*': never a conjugate)."""
    if type(A) is np.ndarray:   # the method: the same view without np.swapaxes' dispatch
        return A.swapaxes(-1, -2)
    return np.swapaxes(A, -1, -2)


def _right_const(A: np.ndarray, C: np.ndarray) -> np.ndarray:
    """A (..., i, j) @ C (j, k) as one BLAS call on the flattened batch."""
    return (A.reshape(-1, A.shape[-1]) @ C).reshape(A.shape[:-1] + C.shape[-1:])


def matmul(A: np.ndarray, B: np.ndarray) -> np.ndarray:
    """``A @ B`` (uncounted), for float and object (sympy) entries alike."""
    return A @ B


def mm(A: np.ndarray, B: np.ndarray) -> np.ndarray:
    """Batched A @ B for the small trailing matrices of the recursions.

    numpy's stacked matmul loops over tiny matrices slowly, so for float arrays
    a constant (unbatched) factor is applied as one BLAS call on the flattened
    batch, an inner size of 1 (outer products of 1-dof joints) is a broadcast
    multiply, and a single right-hand column uses einsum.  Inside
    :func:`opalg.opcount.counting` each call counts m·k·n multiply-adds per state.
    """
    if opcount._ACTIVE:
        opcount.tally(A.shape[-2] * A.shape[-1] * B.shape[-1], "mm")
    if A.dtype is _F64 and B.dtype is _F64 and A.ndim == 2 and B.ndim == 2:
        # One state (the common single-trajectory case): the outer product of a 1-dof joint
        # as a broadcast multiply, else matmul (for one matrix it beats einsum's column path).
        return A * B if A.shape[1] == 1 else A @ B
    if A.dtype.kind == "f" and B.dtype.kind == "f":
        if B.ndim == 2 and A.ndim > 2:
            return _right_const(A, B)
        if A.ndim == 2 and B.ndim > 2:
            return np.swapaxes(_right_const(np.swapaxes(B, -1, -2), A.T), -1, -2)
        if A.shape[-1] == 1:
            return A * B
        if B.shape[-1] == 1:
            return np.einsum("...ij,...j->...i", A, B[..., 0])[..., None]
    return matmul(A, B)


def mv(A: np.ndarray, x: np.ndarray) -> np.ndarray:
    """Batched matrix-vector product A @ x over leading axes (counted as m·k, see :func:`mm`)."""
    if opcount._ACTIVE:
        opcount.tally(A.shape[-2] * A.shape[-1], "mv")
    if A.dtype.kind == "f" and x.dtype.kind == "f":
        if A.ndim == 2:  # constant matrix, batch of vectors: one gemm (one gemv for one state)
            return x @ A.T
        if x.ndim == 1:  # batch of matrices, constant vector: one gemv
            return (A.reshape(-1, A.shape[-1]) @ x).reshape(A.shape[:-1])
        # einsum beats matmul with a trailing unit axis by ~30% on large batches.
        return np.einsum("...ij,...j->...i", A, x)
    return matmul(A, x[..., None])[..., 0]


def div(A: np.ndarray, d: np.ndarray) -> np.ndarray:
    """A / d for a (..., 1, 1) pivot d (or any divisor that broadcasts), counted as one
    division per entry of the trailing matrix of the result (see :mod:`opalg.opcount`).

    Examples
    --------
    >>> import numpy as np
    >>> from opalg import _backend as bk, opcount
    >>> with opcount.counting() as c:
    ...     x = bk.div(np.ones((6, 6)), np.full((1, 1), 2.0))
    >>> float(x[0, 0]), dict(c.by_kind)
    (0.5, {'div': 36})
    """
    out = A / d
    if opcount._ACTIVE:
        opcount.tally(out.shape[-2] * out.shape[-1], "div")
    return out


def simplify_array(A: np.ndarray) -> np.ndarray:
    """Apply ``sympy.simplify`` entrywise (object arrays only)."""
    A = asarray(A)
    if A.dtype != object:
        return A
    return np.frompyfunc(_sympy().simplify, 1, 1)(A).astype(object)
