"""Array helpers that work for float, complex and sympy (object) entries.

Every per-body quantity in opalg is a numpy array whose *last* two axes are the
matrix axes and whose leading axes are batch axes.  Symbolic models use numpy
``object`` arrays holding sympy expressions, so the same recursion code runs
for numbers and for symbols; only the few non-polynomial operations below
(sin, cos, matrix inverse) need to know which case they are in.
"""

from __future__ import annotations

import numpy as np
import sympy as sp


def is_symbolic(*arrays) -> bool:
    """True if any argument is (or contains) a sympy expression."""
    for a in arrays:
        if isinstance(a, sp.Basic):
            return True
        if isinstance(a, np.ndarray) and a.dtype == object:
            return True
        if isinstance(a, (list, tuple)) and is_symbolic(*a):
            return True
    return False


def asarray(x) -> np.ndarray:
    """Convert to an array: float/complex stay numeric, sympy gives dtype object."""
    if type(x) is np.ndarray and x.dtype.kind in "fc":
        return x
    if isinstance(x, sp.MatrixBase):
        return np.array(x.tolist(), dtype=object)
    if is_symbolic(x):
        return np.array(x, dtype=object)
    a = np.asarray(x)
    if a.dtype.kind in "biu":
        a = a.astype(float)
    return a


def _elementwise(fn_num, fn_sym, x):
    x = asarray(x)
    if x.dtype == object:
        out = np.empty(x.shape, dtype=object)
        for idx in np.ndindex(x.shape):
            out[idx] = fn_sym(x[idx])
        return out
    return fn_num(x)


def sin(x):
    return _elementwise(np.sin, sp.sin, x)


def cos(x):
    return _elementwise(np.cos, sp.cos, x)


def zeros(shape, *likes) -> np.ndarray:
    """Zeros with the common dtype of ``likes`` (object zeros are sympy's 0)."""
    dtype = common_dtype(*likes) if likes else float
    if dtype == object:
        z = np.empty(shape, dtype=object)
        z.fill(sp.Integer(0))
        return z
    return np.zeros(shape, dtype=dtype)


def eye(n: int, *likes) -> np.ndarray:
    """Identity with the common dtype of ``likes``."""
    e = zeros((n, n), *likes)
    for i in range(n):
        e[i, i] = 1 if e.dtype != object else sp.Integer(1)
    return e


def common_dtype(*arrays):
    """Result dtype of mixing arrays (object wins, then complex, then float)."""
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
    out = np.empty(A.shape, dtype=object)
    for idx in np.ndindex(A.shape[:-2]):
        out[idx] = np.array(sp.Matrix(A[idx].tolist()).inv().tolist(), dtype=object)
    return out


def mT(A: np.ndarray) -> np.ndarray:
    """Transpose of the trailing two axes (the adjoint '*': never a conjugate)."""
    return np.swapaxes(A, -1, -2)


def _right_const(A: np.ndarray, C: np.ndarray) -> np.ndarray:
    """A (..., i, j) @ C (j, k) as one BLAS call on the flattened batch."""
    return (A.reshape(-1, A.shape[-1]) @ C).reshape(A.shape[:-1] + C.shape[-1:])


def mm(A: np.ndarray, B: np.ndarray) -> np.ndarray:
    """Batched A @ B for the small trailing matrices of the recursions.

    numpy's stacked matmul loops over tiny matrices slowly, so for float arrays
    a constant (unbatched) factor is applied as one BLAS call on the flattened
    batch, an inner size of 1 (outer products of 1-dof joints) is a broadcast
    multiply, and a single right-hand column uses einsum.
    """
    if A.dtype.kind == "f" and B.dtype.kind == "f":
        if B.ndim == 2 and A.ndim > 2:
            return _right_const(A, B)
        if A.ndim == 2 and B.ndim > 2:
            return np.swapaxes(_right_const(np.swapaxes(B, -1, -2), A.T), -1, -2)
        if A.shape[-1] == 1:
            return A * B
        if B.shape[-1] == 1:
            return np.einsum("...ij,...j->...i", A, B[..., 0])[..., None]
    return A @ B


def mv(A: np.ndarray, x: np.ndarray) -> np.ndarray:
    """Batched matrix-vector product A @ x over leading axes."""
    if A.dtype.kind == "f" and x.dtype.kind == "f":
        if A.ndim == 2:  # constant matrix, batch of vectors: one gemm
            return x @ A.T
        if x.ndim == 1:  # batch of matrices, constant vector: one gemv
            return (A.reshape(-1, A.shape[-1]) @ x).reshape(A.shape[:-1])
        # einsum beats matmul with a trailing unit axis by ~30% on large batches.
        return np.einsum("...ij,...j->...i", A, x)
    return (A @ x[..., None])[..., 0]


def simplify_array(A: np.ndarray) -> np.ndarray:
    """Apply ``sympy.simplify`` entrywise (object arrays only)."""
    A = asarray(A)
    if A.dtype != object:
        return A
    return np.frompyfunc(sp.simplify, 1, 1)(A).astype(object)
