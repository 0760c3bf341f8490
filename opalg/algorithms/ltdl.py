r"""Featherstone's LTDL factorization of a tree-sparse ℳ, in the tree's order, without fill-in (D7).

Eliminating the dofs tips first (every dof after all of its descendants) factors

.. math:: ℳ = U\,\mathrm{diag}(d)\,U^*,\qquad U(i, j) \ne 0 \text{ only for } i ⪰ j,\ U(j, j) = 1,

inside ℳ's own pattern (the update of pivot k touches only pairs of k's ancestors, which
are entries of the pattern).  For 1-dof joints U is opalg's I + HφK and d its D (E6, E10c);
for a multi-axis joint the n_k×n_k block D(k) is factored further, ``D(k) = W_k diag(d_k) W_k*``
with W_k unit triangular, and ``I + HφK = U · blockdiag(W_k)⁻¹``.  In base-to-tip numbering
U* is Featherstone's unit lower triangular L of ℳ = LᵀDL (E10d).
"""

from __future__ import annotations

import numpy as np

from opalg import _backend as bk
from opalg.errors import SingularConfigurationError, StateError
from opalg.model import _validate
from opalg.algorithms.tree_sparse import TreeSparse


class LTDL:
    """The factors of :func:`ltdl`: ``d`` (..., N) and U's strict part in ℳ's pattern.

    ``values`` holds U(i, j) at the position of ℳ(i, j) (i ≻ j) and d(j) on the diagonal.

    Examples
    --------
    >>> import numpy as np, opalg
    >>> m = opalg.random_model(3, "chain", seed=0)
    >>> Ms = opalg.crba(m, np.zeros(m.ndof), layout="sparse")
    >>> F = opalg.ltdl(Ms)
    >>> U = F.unit_factor()
    >>> bool(np.allclose(U @ np.diag(F.d) @ U.T, Ms.dense()))
    True
    """

    def __init__(self, values: np.ndarray, parent: tuple[int, ...]):
        self.sparse = TreeSparse(values, parent)
        self.pattern = self.sparse.pattern
        self.values = self.sparse.values

    @property
    def d(self) -> np.ndarray:
        return self.sparse.diagonal()

    def unit_factor(self) -> np.ndarray:
        """U as a dense (..., N, N) array (unit diagonal, U(i, j) for i ≻ j)."""
        P = self.pattern
        U = bk.zeros(self.values.shape[:-1] + (P.N, P.N), self.values)
        U[..., P.rows[P.off], P.cols[P.off]] = self.values[..., P.off]
        U[..., np.arange(P.N), np.arange(P.N)] = 1
        return U

    def solve(self, b):
        """x = ℳ⁻¹ b (see :func:`ltdl_solve`)."""
        return ltdl_solve(self, b)


def ltdl(M: TreeSparse) -> LTDL:
    r"""Factor a tree-sparse symmetric positive definite ℳ = U diag(d) U* in place (D7).

    For each dof k, tips first: ``d(k) = ℳ(k, k)``; for ancestors i ⪰ j of k,
    ``ℳ(j, i) −= ℳ(i, k) ℳ(j, k) / d(k)``; then ``U(i, k) = ℳ(i, k) / d(k)``.  The cost is
    Σ_k depth(k)² / 2 multiply-adds, no fill-in.

    Raises
    ------
    SingularConfigurationError
        If a (real) pivot d(k) is not positive: the matrix is not positive definite.

    Examples
    --------
    >>> import numpy as np, opalg
    >>> from opalg.algorithms.ltdl import ltdl
    >>> m = opalg.random_model(6, "tree", seed=4, joints="revolute")
    >>> q = np.random.default_rng(0).normal(size=6)
    >>> F = ltdl(opalg.crba(m, q, layout="sparse"))
    >>> ops = opalg.operators(m, q)
    >>> bool(np.allclose(F.unit_factor(), ops.L.dense())), bool(np.allclose(F.d, np.diag(ops.D.dense())))
    (True, True)
    """
    if not isinstance(M, TreeSparse):
        hint = " (a dense matrix: wrap it as opalg.TreeSparse, or use opalg.crba(model, q, layout='sparse'))" \
            if isinstance(M, np.ndarray) else ""
        raise StateError(f"ltdl: M must be an opalg.TreeSparse, got {_validate.describe(M)}{hint}")
    P = M.pattern
    V = M.values.copy() if M.values.dtype != object else np.array(M.values, dtype=object)
    real = V.dtype.kind == "f"
    for k in P.tips_first:
        dk = V[..., P.ptr[k]]
        if real and not np.all(dk > 0):
            raise SingularConfigurationError(
                f"ltdl: pivot d({k}) = {float(np.min(dk)):.3g} is not positive: the matrix is not "
                f"positive definite (dof {k}, eliminated tips first)")
        a, e = P.ptr[k] + 1, P.ptr[k + 1]
        if a == e:
            continue
        anc = P.rows[a:e]          # ancestors of k, nearest first
        c = V[..., a:e]
        u = c / dk[..., None]
        # pairs (t <= s): i = anc[t], j = anc[s] ⪰ i; the entry (j, i) sits at ptr[i] + (s − t)
        for t, i in enumerate(anc):
            V[..., P.ptr[i]:P.ptr[i] + len(anc) - t] -= u[..., t:t + 1] * c[..., t:]
        V[..., a:e] = u
    return LTDL(V, M.parent)


def ltdl_solve(F: LTDL, b):
    r"""Solve ℳx = b with the factors of :func:`ltdl`: U y = b (tips first), z = y/d, U* x = z (base first).

    ``b`` follows numpy's rules: (N,) a vector, (..., N, r) a stack of right-hand sides.
    Work O(nnz) per right-hand side (D7).

    Examples
    --------
    >>> import numpy as np, opalg
    >>> from opalg.algorithms.ltdl import ltdl, ltdl_solve
    >>> m = opalg.random_model(5, "tree", seed=1, joints="all")
    >>> q, tau = np.random.default_rng(1).normal(size=(2, m.ndof))
    >>> x = ltdl_solve(ltdl(opalg.crba(m, q, layout="sparse")), tau)
    >>> bool(np.allclose(opalg.crba(m, q) @ x, tau))
    True
    """
    if not isinstance(F, LTDL):
        raise StateError(f"ltdl_solve: F must be the opalg.LTDL factors of opalg.ltdl, got {_validate.describe(F)}")
    P = F.pattern
    b = bk.asarray(b, "ltdl_solve: b", StateError)
    if b.ndim == 0 or b.shape[-1 if b.ndim == 1 else -2] != P.N:
        raise StateError(f"ltdl_solve: b must have shape ({P.N},) or (..., {P.N}, r), got shape {b.shape}")
    first = bk.first_nonfinite(b)
    if first is not None:
        raise StateError(f"ltdl_solve: b has a non-finite entry {first[1]} at index {first[0]}")
    vec = b.ndim == 1
    Y = b[:, None] if vec else b
    shape = np.broadcast_shapes(F.values.shape[:-1] + (P.N, 1), Y.shape)
    Y = bk.zeros(shape, F.values, Y) + Y
    for k in P.tips_first:             # U y = b
        a, e = P.ptr[k] + 1, P.ptr[k + 1]
        if a < e:
            Y[..., P.rows[a:e], :] -= F.values[..., a:e, None] * Y[..., k:k + 1, :]
    Y = Y / F.d[..., None]
    for k in P.tips_first[::-1]:       # U* x = z
        a, e = P.ptr[k] + 1, P.ptr[k + 1]
        if a < e:
            Y[..., k, :] -= (F.values[..., a:e, None] * Y[..., P.rows[a:e], :]).sum(-2)
    return Y[..., 0] if vec else Y
