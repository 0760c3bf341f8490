r"""Block-sparse operators: :class:`BlockTridiagonal` (I2, I3) and :class:`BlockSparse`.

Both are :class:`opalg.algebra.operators.Operator` objects (``@``, ``.T``, ``.dense()``, composition).

* :class:`BlockTridiagonal` — the type of Fijany's A on a chain (docs/REFERENCE.md I2).
  Blocks of unequal sizes are stored padded to the largest size m with an identity
  diagonal (and zero couplings), so that every level of block cyclic reduction is one
  batched numpy operation over (..., n, m, m) arrays; the padding never shows in
  ``.dense()``, ``@`` or ``.solve()``.
* :class:`BlockSparse` — a dict of blocks {(i, j): array}: Q, B, C of the factorization and
  A on trees, where siblings fill in (I2).
"""

from __future__ import annotations

from typing import Sequence

import numpy as np

from opalg import _backend as bk
from opalg.algebra.operators import Operator, _join, _split
from opalg.errors import StateError
from opalg.model import _validate
from opalg.algebra.tridiag_solve import BCRTrace, cyclic, thomas


def _block(x, what: str, where: str) -> np.ndarray:
    """A block as an array of numbers (float, complex, or sympy objects), at least 2-D, finite."""
    bk.check_no_strings(x, f"{where}: {what}", StateError)
    a = np.asarray(x)
    if a.ndim < 2:
        raise StateError(f"{where}: {what} must be a matrix (..., rows, cols), got shape {a.shape}")
    bad = bk.first_nonfinite(a.astype(float) if a.dtype.kind in "biu" else a)
    if bad is not None:
        raise StateError(f"{where}: {what} has a non-finite entry {bad[1]} at index {bad[0]}")
    return a


class BlockTridiagonal(Operator):
    r"""A block tridiagonal operator: blocks D_i on the diagonal, L_i = A(i+1, i), U_i = A(i, i+1).

    Parameters
    ----------
    diag : sequence of arrays (..., s_i, s_i)
    lower : sequence of arrays (..., s_{i+1}, s_i), n − 1 of them
    upper : sequence of arrays (..., s_i, s_{i+1}), optional
        Default ``lower[i]*`` (a symmetric operator, as Fijany's A).
    name : str

    Examples
    --------
    >>> import numpy as np
    >>> from opalg.algebra.block_ops import BlockTridiagonal
    >>> A = BlockTridiagonal([4 * np.eye(2), 4 * np.eye(1), 4 * np.eye(2)],
    ...                      [np.ones((1, 2)), np.ones((2, 1))], name="A")
    >>> A.shape
    (5, 5)
    >>> b = np.arange(5.0)
    >>> x, tr = A.solve(b, method="cyclic", trace=True)
    >>> bool(np.allclose(A.dense() @ x, b)), tr.levels
    (True, 3)
    >>> bool(np.allclose(A.solve(b, method="thomas"), x))
    True
    """

    def __init__(self, diag: Sequence[np.ndarray], lower: Sequence[np.ndarray],
                 upper: Sequence[np.ndarray] | None = None, name: str = "?"):
        where = f"BlockTridiagonal {name}"
        diag = [_block(d, f"diagonal block {i}", where) for i, d in enumerate(diag)]
        lower = [_block(x, f"lower block {i}", where) for i, x in enumerate(lower)]
        upper = [np.swapaxes(x, -1, -2) for x in lower] if upper is None else \
            [_block(x, f"upper block {i}", where) for i, x in enumerate(upper)]
        n = len(diag)
        if n == 0 or len(lower) != n - 1 or len(upper) != n - 1:
            raise StateError(f"BlockTridiagonal {name}: need n >= 1 diagonal blocks and n − 1 lower "
                             f"and upper blocks, got {n}, {len(lower)}, {len(upper)}")
        sizes = tuple(d.shape[-1] for d in diag)
        for i, d in enumerate(diag):
            if d.ndim < 2 or d.shape[-2] != d.shape[-1]:
                raise StateError(f"BlockTridiagonal {name}: diagonal block {i} is not square ({d.shape})")
        for i in range(n - 1):
            if lower[i].shape[-2:] != (sizes[i + 1], sizes[i]) or upper[i].shape[-2:] != (sizes[i], sizes[i + 1]):
                raise StateError(f"BlockTridiagonal {name}: coupling blocks {i} have shapes "
                                 f"{lower[i].shape}, {upper[i].shape}; the diagonal sizes are {sizes}")
        self.rows = self.cols = sizes
        self.name = name
        self.batch = np.broadcast_shapes(*[x.shape[:-2] for x in diag + lower + upper])
        m = max(max(sizes), 1)
        dtype = np.result_type(*diag, *lower, *upper, np.float64)
        self.D = np.zeros(self.batch + (n, m, m), dtype)
        self.D[...] = np.eye(m)                     # the padding: identity, decoupled
        self.L = np.zeros(self.batch + (n - 1, m, m), dtype)
        self.U = np.zeros(self.batch + (n - 1, m, m), dtype)
        for i, d in enumerate(diag):
            self.D[..., i, :sizes[i], :sizes[i]] = d
        for i in range(n - 1):
            self.L[..., i, :sizes[i + 1], :sizes[i]] = lower[i]
            self.U[..., i, :sizes[i], :sizes[i + 1]] = upper[i]

    @property
    def n(self) -> int:
        """Number of diagonal blocks."""
        return len(self.rows)

    def _blocks_of(self, X: np.ndarray) -> np.ndarray:
        """(..., N, r) → padded (..., n, m, r)."""
        m = self.D.shape[-1]
        out = np.zeros(X.shape[:-2] + (self.n, m, X.shape[-1]), np.result_type(X, self.D))
        for i, x in enumerate(_split(X, self.cols)):
            out[..., i, :x.shape[-2], :] = x
        return out

    def _unblock(self, Y: np.ndarray) -> np.ndarray:
        return _join([Y[..., i, :s, :] for i, s in enumerate(self.rows)])

    def apply_matrix(self, X):
        Xb = self._blocks_of(X)
        Y = self.D @ Xb
        Y[..., 1:, :, :] += self.L @ Xb[..., :-1, :, :]
        Y[..., :-1, :, :] += self.U @ Xb[..., 1:, :, :]
        return self._unblock(Y)

    def dense(self):
        return self.apply_matrix(np.eye(self.shape[1]))

    def _transpose(self):
        mT = lambda a: np.swapaxes(a, -1, -2)  # noqa: E731
        L, U = self.coupling_blocks()
        return BlockTridiagonal([mT(d) for d in self.diag_blocks()], [mT(u) for u in U], [mT(x) for x in L],
                                f"{self.name}*")

    def diag_blocks(self) -> list:
        """The unpadded diagonal blocks D_i."""
        return [self.D[..., i, :s, :s] for i, s in enumerate(self.rows)]

    def coupling_blocks(self) -> tuple[list, list]:
        """The unpadded couplings ``(L, U)``: L_i = A(i+1, i) and U_i = A(i, i+1), n − 1 of each.

        Examples
        --------
        >>> import numpy as np
        >>> from opalg.algebra.block_ops import BlockTridiagonal
        >>> L, U = BlockTridiagonal([np.eye(2), np.eye(1)], [np.ones((1, 2))]).coupling_blocks()
        >>> L[0].shape, U[0].shape
        ((1, 2), (2, 1))
        """
        s = self.rows
        return ([self.L[..., i, :s[i + 1], :s[i]] for i in range(self.n - 1)],
                [self.U[..., i, :s[i], :s[i + 1]] for i in range(self.n - 1)])

    def solve(self, rhs, method: str = "cyclic", trace: bool = False):
        r"""Solve ``A x = rhs`` for a vector rhs of shape (..., N) (:meth:`solve_matrix` for columns).

        ``method="thomas"``: the sequential block LU sweep (2n dependent block steps);
        ``method="cyclic"``: block cyclic reduction, one batched operation per level (I3).
        With ``trace=True`` (cyclic only) returns ``(x, trace)``, a
        :class:`opalg.algebra.tridiag_solve.BCRTrace` with ``levels = ⌈log₂ n⌉ + 1``.
        """
        b = np.asarray(rhs)
        if b.ndim < 1 or b.shape[-1] != self.shape[0]:
            raise StateError(f"BlockTridiagonal {self.name}.solve: rhs has shape {b.shape}, "
                             f"expected (..., {self.shape[0]})")
        out = self.solve_matrix(b[..., None], method, trace)
        return (out[0][..., 0], out[1]) if trace else out[..., 0]

    def solve_matrix(self, rhs, method: str = "cyclic", trace: bool = False):
        """As :meth:`solve` for rhs of shape (..., N, r): r right-hand sides at once."""
        if method not in ("thomas", "cyclic"):
            raise StateError(f"BlockTridiagonal.solve: method must be 'thomas' or 'cyclic', got {method!r}")
        if trace and method != "cyclic":
            raise StateError("BlockTridiagonal.solve: trace=True needs method='cyclic' (levels of the reduction)")
        b = np.asarray(rhs)
        if b.ndim < 2 or b.shape[-2] != self.shape[0] or b.dtype.kind not in "fc":
            raise StateError(f"BlockTridiagonal {self.name}.solve: rhs has shape {b.shape} and dtype "
                             f"{b.dtype}, expected numbers of shape (..., {self.shape[0]}, r)")
        Bb = self._blocks_of(b)
        batch = np.broadcast_shapes(self.batch, Bb.shape[:-3])
        bc = lambda a: np.broadcast_to(a, batch + a.shape[-3:])  # noqa: E731
        tr = BCRTrace() if trace else None
        try:
            if method == "cyclic":
                X = cyclic(bc(self.D), bc(self.L), bc(self.U), bc(Bb), tr)
            else:
                X = thomas(bc(self.D), bc(self.L), bc(self.U), bc(Bb))
        except np.linalg.LinAlgError:
            raise StateError(f"BlockTridiagonal {self.name}.solve: a pivot block is singular "
                             f"(the operator is singular or needs pivoting across blocks)") from None
        x = self._unblock(X)
        return (x, tr) if trace else x


class BlockSparse(Operator):
    """An operator given by a dict of blocks ``{(i, j): array (..., rows[i], cols[j])}``.

    Examples
    --------
    >>> import numpy as np
    >>> from opalg.algebra.block_ops import BlockSparse
    >>> S = BlockSparse({(0, 1): np.ones((1, 2))}, rows=(1, 1), cols=(1, 2), name="S")
    >>> S.dense()
    array([[0., 1., 1.],
           [0., 0., 0.]])
    >>> sorted(S.T.blocks)
    [(1, 0)]
    """

    def __init__(self, blocks: dict, rows: Sequence[int], cols: Sequence[int], name: str = "?"):
        where = f"BlockSparse {name}"
        if not isinstance(blocks, dict):
            raise StateError(f"{where}: blocks must be a dict {{(i, j): array}}, got {type(blocks).__name__}")
        self.rows = tuple(_validate.integer(r, "rows entry", where, lo=0) for r in rows)
        self.cols = tuple(_validate.integer(c, "cols entry", where, lo=0) for c in cols)
        self.name = name
        self.blocks = {}
        for key, b in blocks.items():
            if not (isinstance(key, tuple) and len(key) == 2):
                raise StateError(f"{where}: block key {key!r} must be a pair (i, j)")
            i = _validate.index(key[0], len(self.rows), "block row i", where)
            j = _validate.index(key[1], len(self.cols), "block column j", where)
            self.blocks[i, j] = _block(b, f"block ({i}, {j})", where)
        for (i, j), b in self.blocks.items():
            if b.shape[-2:] != (self.rows[i], self.cols[j]):
                raise StateError(f"BlockSparse {name}: block ({i}, {j}) has shape {b.shape}, "
                                 f"expected (..., {self.rows[i]}, {self.cols[j]})")

    def _likes(self):
        return list(self.blocks.values())

    def apply_matrix(self, X):
        xs = _split(X, self.cols)
        batch = np.broadcast_shapes(X.shape[:-2], *[b.shape[:-2] for b in self.blocks.values()])
        dtype = np.result_type(X, *self.blocks.values())
        ys = [np.zeros(batch + (r, X.shape[-1]), dtype) for r in self.rows]
        for (i, j), b in self.blocks.items():
            ys[i] = ys[i] + b @ xs[j]
        return _join(ys) if ys else np.zeros(batch + (0, X.shape[-1]), dtype)

    def _transpose(self):
        return BlockSparse({(j, i): np.swapaxes(b, -1, -2) for (i, j), b in self.blocks.items()},
                           self.cols, self.rows, f"{self.name}*")

    def pattern(self, tol: float = 0.0) -> np.ndarray:
        """Boolean (len(rows), len(cols)) matrix: True where a block is stored and not all ≤ tol."""
        out = np.zeros((len(self.rows), len(self.cols)), bool)
        for (i, j), b in self.blocks.items():
            out[i, j] = bool(np.any(np.abs(b) > tol))
        return out
