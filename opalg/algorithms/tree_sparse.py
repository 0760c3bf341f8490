r"""Tree-sparse symmetric matrices: ℳ stored as its nonzeros along the dof tree (D5).

Expand the body tree over the dofs: the first dof of body k hangs from the last dof of
℘(k) (−1 for a root), each further dof of a multi-axis joint from the previous one
(:func:`dof_parents`).  Then ℳ(i, j) ≠ 0 only if i is an ancestor-or-self of j in this dof
tree or j of i, so column j is stored along its path to the root,
``ℳ(j, j), ℳ(λ(j), j), ℳ(λ(λ(j)), j), …``, and

.. math:: \mathrm{nnz}(ℳ) = \sum_k n_k^2 + 2\sum_k n_k\,(\text{dofs of the strict ancestors of } k)
          = N + 2\sum_i \mathrm{depth}(i).
"""

from __future__ import annotations

from functools import lru_cache

import numpy as np

from opalg import _backend as bk
from opalg.errors import OpalgError
from opalg.model.multibody import Model


def dof_parents(model: Model) -> tuple[int, ...]:
    """The dof parent array λ (Featherstone's expanded parent array), in dof label order.

    Examples
    --------
    >>> import opalg
    >>> from opalg.algorithms.tree_sparse import dof_parents
    >>> m = opalg.random_model(4, "tree", seed=0, joints="all")
    >>> m.parents, m.joint_sizes
    ((-1, 0, 1, 1), (1, 3, 1, 1))
    >>> dof_parents(m)          # dofs 1, 2, 3: body 1's three axes; bodies 2, 3 hang from dof 3
    (-1, 0, 1, 2, 3, 3)
    """
    lam = [-1] * model.ndof
    for k in range(model.n):
        sl, p = model.dof_slice[k], model.parents[k]
        first = -1 if p == -1 else model.dof_slice[p].stop - 1
        for i in range(sl.start, sl.stop):
            lam[i] = first if i == sl.start else i - 1
    return tuple(lam)


class _Pattern:
    """Depths, column pointers and the (row, col) of every stored entry of a dof tree."""

    def __init__(self, parent: tuple[int, ...]):
        N = len(parent)
        depth = [-1] * N
        for j in range(N):   # iterative: a 10^4-dof chain exceeds the recursion limit
            path, i = [], j
            while i != -1 and depth[i] == -1:
                path.append(i)
                i = parent[i]
                if len(path) > N:
                    raise OpalgError(f"the dof parent array {parent} has a cycle")
            d = -1 if i == -1 else depth[i]
            for i in reversed(path):
                d += 1
                depth[i] = d
        self.N, self.parent, self.depth = N, parent, np.array(depth, dtype=int)
        self.ptr = np.concatenate([[0], np.cumsum(self.depth + 1)]).astype(int)
        rows, cols = [], []
        for j in range(N):
            i = j
            while i != -1:
                rows.append(i)
                cols.append(j)
                i = parent[i]
        self.rows, self.cols = np.array(rows, dtype=int), np.array(cols, dtype=int)
        self.diag = self.ptr[:-1]
        off = np.ones(len(rows), bool)
        off[self.diag] = False
        self.off = np.flatnonzero(off)
        #: dofs tips first (decreasing depth): every dof after all of its descendants
        self.tips_first = np.argsort(-self.depth, kind="stable")

    def ancestors(self, j: int) -> np.ndarray:
        """Rows of column j's strict ancestors, nearest first (value slice ptr[j]+1 : ptr[j+1])."""
        return self.rows[self.ptr[j] + 1:self.ptr[j + 1]]


@lru_cache(maxsize=64)
def pattern(parent: tuple[int, ...]) -> _Pattern:
    """The cached :class:`_Pattern` of a dof parent array.

    Examples
    --------
    >>> from opalg.algorithms.tree_sparse import pattern
    >>> P = pattern((-1, 0, 0))          # dof 0 with two children
    >>> P.rows.tolist(), P.cols.tolist(), P.ptr.tolist()
    ([0, 1, 0, 2, 0], [0, 1, 1, 2, 2], [0, 1, 3, 5])
    """
    return _Pattern(parent)


class TreeSparse:
    r"""A symmetric N×N matrix with the sparsity of a dof tree, e.g. ℳ (docs/REFERENCE.md D5).

    ``values[..., ptr[j] + t]`` is entry (λᵗ(j), j) (t = 0 the diagonal), for every j and
    every ancestor λᵗ(j); the upper part is implied by symmetry.  Leading axes of
    ``values`` are batch axes.

    Attributes
    ----------
    values : ndarray, shape (..., N + Σ depth)
    parent : tuple of int
        The dof parent array λ (:func:`dof_parents`).
    rows, cols : ndarray
        Row (the ancestor) and column of each stored value.
    nnz : int
        Nonzeros of the full symmetric matrix, N + 2 Σ depth (D5).

    Examples
    --------
    >>> import numpy as np, opalg
    >>> m = opalg.random_model(5, "chain", seed=1, joints="revolute")
    >>> Ms = opalg.crba(m, np.zeros(5), layout="sparse")
    >>> Ms.nnz == 5 + 2 * (0 + 1 + 2 + 3 + 4), bool(np.allclose(Ms.dense(), opalg.crba(m, np.zeros(5))))
    (True, True)
    >>> x = np.arange(5.0)
    >>> bool(np.allclose(Ms @ x, Ms.dense() @ x)), bool(np.allclose(Ms.diagonal(), np.diag(Ms.dense())))
    (True, True)
    """

    def __init__(self, values, parent):
        self.parent = tuple(int(p) for p in parent)
        self.pattern = pattern(self.parent)
        self.values = bk.asarray(values, "values")
        if self.values.ndim == 0 or self.values.shape[-1] != len(self.pattern.rows):
            raise OpalgError(f"TreeSparse values have shape {self.values.shape}, expected "
                             f"(..., {len(self.pattern.rows)}) for the dof parent array {self.parent}")

    @property
    def N(self) -> int:
        return self.pattern.N

    @property
    def shape(self) -> tuple:
        return self.values.shape[:-1] + (self.N, self.N)

    @property
    def rows(self) -> np.ndarray:
        return self.pattern.rows

    @property
    def cols(self) -> np.ndarray:
        return self.pattern.cols

    @property
    def nnz(self) -> int:
        return 2 * len(self.pattern.rows) - self.N

    def diagonal(self) -> np.ndarray:
        """The diagonal entries, shape (..., N)."""
        return self.values[..., self.pattern.diag]

    def dense(self) -> np.ndarray:
        """The full symmetric matrix, shape (..., N, N) (zeros where no path joins i and j)."""
        P = self.pattern
        out = bk.zeros(self.shape, self.values)
        out[..., P.rows, P.cols] = self.values
        out[..., P.cols[P.off], P.rows[P.off]] = self.values[..., P.off]
        return out

    def __matmul__(self, x):
        """``A @ x`` with numpy's rules: x (N,) is a vector, x (..., N, r) a stack of matrices.

        Work O(nnz) per right-hand side; batches of ``values`` and ``x`` broadcast.
        """
        x = bk.asarray(x, "x")
        if x.ndim == 0 or x.shape[-1 if x.ndim == 1 else -2] != self.N:
            raise OpalgError(f"TreeSparse @ x: x has shape {x.shape}, expected ({self.N},) or (..., {self.N}, r)")
        vec = x.ndim == 1
        X = x[:, None] if vec else x
        P = self.pattern
        v = self.values[..., P.off][..., None]
        r, c = P.rows[P.off], P.cols[P.off]
        batch = np.broadcast_shapes(self.values.shape[:-1], X.shape[:-2])
        y = self.diagonal()[..., None] * X
        y = np.array(np.broadcast_to(y, batch + y.shape[-2:]))   # a writable copy
        into_r, into_c = v * X[..., c, :], v * X[..., r, :]
        yt = np.moveaxis(y, -2, 0)   # a view: add.at scatters along the dof axis into y
        np.add.at(yt, r, np.moveaxis(into_r, -2, 0))
        np.add.at(yt, c, np.moveaxis(into_c, -2, 0))
        return y[..., 0] if vec else y

    def __repr__(self) -> str:
        return f"TreeSparse(N={self.N}, nnz={self.nnz}, batch={self.values.shape[:-1]})"
