r"""Spatial operators as composable objects.

An :class:`Operator` maps a stacked vector over the bodies of a tree (6 entries
per body in the spatial space, n_k in the joint space) to another.  Operators
compose with ``@``, ``+``, ``-`` and scalars, ``.T`` is the adjoint (the
transpose, never a conjugate), and ``.dense()`` gives the block matrix.  None
of them stores a dense matrix: each applies as the recursion its structure
implies, which is the central idea of the spatial operator algebra:

* :class:`BlockDiagonal` — H, M, P, D, G, τ̄: one block per body;
* :class:`EdgeOperator` — ℰφ, ℰψ, K: one block at (℘(k), k) per body, the
  block-weighted adjacency matrix of the tree (docs/REFERENCE.md §4);
* :class:`SPO` — φ = (I − ℰφ)⁻¹ and ψ = (I − ℰψ)⁻¹, applied as an inward
  recursion ``y(k) = x(k) + Σ_c E(k,c) y(c)`` (its adjoint outward), the
  identity that lets φ be used without ever forming the dense inverse.

Vectors have shape (..., dim) with leading batch axes; ``apply_matrix``
takes (..., dim, m) to apply to m columns at once.
"""

from __future__ import annotations

import functools
from typing import Sequence

import numpy as np

from opalg import _backend as bk
from opalg.errors import StateError
from opalg.model import _validate


@functools.lru_cache(maxsize=256)
def _offsets(sizes: tuple) -> tuple:
    """Block offsets 0, s0, s0 + s1, ... of a block structure (a few per model: cached)."""
    return tuple(int(o) for o in np.concatenate([[0], np.cumsum(sizes)]).astype(int))


def _split(X: np.ndarray, sizes: Sequence[int]) -> list:
    offs = _offsets(tuple(sizes))
    return [X[..., offs[i]:offs[i + 1], :] for i in range(len(sizes))]


def _join(parts: list) -> np.ndarray:
    first = parts[0].shape[:-2] if parts else None
    if parts and all(p.shape[:-2] == first for p in parts):   # one batch shape: no broadcast
        return np.concatenate(parts, -2)
    shape = np.broadcast_shapes(*[p.shape[:-2] for p in parts])
    return np.concatenate([np.broadcast_to(p, shape + p.shape[-2:]) for p in parts], -2)


def _batch(shapes: list) -> tuple:
    """``np.broadcast_shapes(*shapes)``, without its cost when the shapes are all equal."""
    if all(s == shapes[0] for s in shapes):
        return shapes[0]
    return np.broadcast_shapes(*shapes)


class Operator:
    """Base class: a linear map between block spaces ``cols -> rows``.

    Subclasses implement :meth:`apply_matrix` and :meth:`_transpose`.
    """

    rows: tuple
    cols: tuple
    name: str = "?"
    # Make numpy defer ``ndarray @ op`` and ``ndarray * op`` to the operator.
    __array_ufunc__ = None

    # -- shape ----------------------------------------------------------
    @property
    def shape(self) -> tuple[int, int]:
        """(number of rows, number of columns) of the dense matrix."""
        return int(sum(self.rows)), int(sum(self.cols))

    # -- application ----------------------------------------------------
    def apply_matrix(self, X: np.ndarray) -> np.ndarray:  # pragma: no cover - abstract
        raise NotImplementedError

    def _check_input(self, x: np.ndarray, axis: int) -> None:
        if x.ndim < -axis or x.shape[axis] != self.shape[1]:
            raise StateError(
                f"operator {self.name} has {self.shape[1]} columns but the argument has shape "
                f"{x.shape}"
            )

    def __matmul__(self, other):
        if isinstance(other, Operator):
            return Product([self, other])
        x = bk.asarray(other)
        self._check_input(x, -1)
        return self.apply_matrix(x[..., None])[..., 0]

    def __rmatmul__(self, other):
        x = bk.asarray(other)
        return self.T @ x

    def dense(self) -> np.ndarray:
        """The block matrix, shape (..., rows, cols); object dtype for sympy entries."""
        return self.apply_matrix(bk.eye(self.shape[1], *self._likes()))

    def _likes(self) -> list:
        return []

    def block(self, i: int, j: int) -> np.ndarray:
        """Block (i, j): rows of body i, columns of body j (0 <= i, j < the number of blocks;
        a negative index is refused, not wrapped around)."""
        i = _validate.index(i, len(self.rows), "block row i", f"{self.name}.block")
        j = _validate.index(j, len(self.cols), "block column j", f"{self.name}.block")
        r0, c0 = int(sum(self.rows[:i])), int(sum(self.cols[:j]))
        return self.dense()[..., r0:r0 + self.rows[i], c0:c0 + self.cols[j]]

    # -- algebra --------------------------------------------------------
    @property
    def T(self) -> "Operator":
        """The adjoint ``*`` (transpose)."""
        return self._transpose()

    def _transpose(self) -> "Operator":  # pragma: no cover - abstract
        raise NotImplementedError

    def __add__(self, other):
        return Sum([self, other])

    def __sub__(self, other):
        if not isinstance(other, Operator):
            raise TypeError(f"cannot subtract a {type(other).__name__} from an operator")
        return Sum([self, Scaled(-1, other)], name=f"({self.name} - {other.name})")

    def __neg__(self):
        return Scaled(-1, self)

    def __mul__(self, c):
        if isinstance(c, Operator):
            raise TypeError("use @ to compose operators")
        return Scaled(c, self)

    __rmul__ = __mul__

    def inv(self) -> "Operator":
        """The inverse, where an identity of the algebra gives it without a dense solve."""
        raise NotImplementedError(f"no structural inverse for operator {self.name}")

    def __repr__(self) -> str:
        r, c = self.shape
        return f"<{type(self).__name__} {self.name}: {r}x{c}>"


class BlockDiagonal(Operator):
    """diag(B(1), ..., B(n)); the blocks are arrays (..., r_k, c_k).

    Examples
    --------
    >>> import numpy as np
    >>> from opalg.algebra.operators import BlockDiagonal
    >>> A = BlockDiagonal([np.eye(2), 2 * np.eye(1)], "A")
    >>> (A @ A.inv()).dense()
    array([[1., 0., 0.],
           [0., 1., 0.],
           [0., 0., 1.]])
    """

    def __init__(self, blocks: Sequence[np.ndarray], name: str = "?"):
        self.blocks = list(blocks)
        self.rows = tuple(b.shape[-2] for b in self.blocks)
        self.cols = tuple(b.shape[-1] for b in self.blocks)
        self.name = name

    def _likes(self):
        return self.blocks

    def apply_matrix(self, X):
        return _join([B @ x for B, x in zip(self.blocks, _split(X, self.cols))])

    def dense(self):
        batch = _batch([b.shape[:-2] for b in self.blocks])
        out = bk.zeros(batch + self.shape, *self.blocks)
        r = c = 0
        for B in self.blocks:
            out[..., r:r + B.shape[-2], c:c + B.shape[-1]] = B
            r, c = r + B.shape[-2], c + B.shape[-1]
        return out

    def _transpose(self):
        return BlockDiagonal([bk.mT(b) for b in self.blocks], f"{self.name}*")

    def inv(self):
        """Blockwise inverse (each block must be square and invertible)."""
        for k, b in enumerate(self.blocks):
            if b.shape[-1] != b.shape[-2]:
                raise StateError(f"operator {self.name} has a non-square block {k} "
                                 f"({b.shape[-2]}x{b.shape[-1]}): it has no inverse")
        try:
            return BlockDiagonal([bk.inv(b) for b in self.blocks], f"{self.name}^-1")
        except np.linalg.LinAlgError:
            raise StateError(f"operator {self.name} has a singular block: it has no inverse") from None


class EdgeOperator(Operator):
    """Block-weighted adjacency operator: block (℘(k), k) = ``blocks[k]``, zero elsewhere.

    ``rows[i]``/``cols[k]`` are the block sizes of the row and column spaces.
    With ``transposed=True`` it is the adjoint: block (k, ℘(k)) = ``blocks[k]^*``.

    Examples
    --------
    >>> import numpy as np
    >>> from opalg.algebra.operators import EdgeOperator
    >>> E = EdgeOperator([np.ones((1, 1)), 2 * np.ones((1, 1)), 3 * np.ones((1, 1))],
    ...                  parents=[-1, 0, 0], order=[0, 1, 2], rows=(1, 1, 1), cols=(1, 1, 1))
    >>> E.dense()              # node 0 has children 1 and 2
    array([[0., 2., 3.],
           [0., 0., 0.],
           [0., 0., 0.]])
    """

    def __init__(self, blocks, parents, order, rows, cols, name="?", transposed=False):
        self.blocks, self.parents, self.order = list(blocks), tuple(parents), tuple(order)
        self._rows, self._cols = tuple(rows), tuple(cols)
        self.transposed = transposed
        self.rows, self.cols = (self._cols, self._rows) if transposed else (self._rows, self._cols)
        self.name = name

    def _likes(self):
        return self.blocks

    def _zero(self, size, X):
        batch = _batch([X.shape[:-2], *[b.shape[:-2] for b in self.blocks]])
        return bk.zeros(batch + (size, X.shape[-1]), X, *self.blocks)

    def apply_matrix(self, X):
        xs = _split(X, self.cols)
        ys = [self._zero(s, X) for s in self.rows]
        for k, p in enumerate(self.parents):
            if p < 0:
                continue
            if self.transposed:  # y(k) = E(p,k)^* x(p)
                ys[k] = ys[k] + bk.mT(self.blocks[k]) @ xs[p]
            else:  # y(p) += E(p,k) x(k)
                ys[p] = ys[p] + self.blocks[k] @ xs[k]
        return _join(ys)

    def dense(self):
        return self.apply_matrix(bk.eye(self.shape[1], *self.blocks))

    def _transpose(self):
        name = self.name[:-1] if self.name.endswith("*") else self.name + "*"
        return EdgeOperator(self.blocks, self.parents, self.order, self._rows, self._cols,
                            name, not self.transposed)


class SPO(Operator):
    r"""The spatial propagation operator (I − E)⁻¹ of a square edge operator E.

    Applied as a recursion (docs/REFERENCE.md B1/B2): inward
    ``y(k) = x(k) + Σ_{c ∈ C(k)} E(k,c) y(c)`` for (I − E)⁻¹, outward
    ``y(k) = x(k) + E(℘k,k)^* y(℘k)`` for its adjoint.  O(n) per column.

    Examples
    --------
    >>> import numpy as np
    >>> from opalg.algebra.operators import EdgeOperator, SPO
    >>> E = EdgeOperator([np.ones((1, 1)), 2 * np.ones((1, 1)), 3 * np.ones((1, 1))],
    ...                  parents=[-1, 0, 1], order=[0, 1, 2], rows=(1, 1, 1), cols=(1, 1, 1))
    >>> phi = SPO(E, "phi")
    >>> phi.dense()            # path products E(0,1) E(1,2) = 2 * 3 above the diagonal
    array([[1., 2., 6.],
           [0., 1., 3.],
           [0., 0., 1.]])
    >>> bool(np.allclose(phi.dense(), np.linalg.inv(np.eye(3) - E.dense())))
    True
    """

    def __init__(self, edge: EdgeOperator, name="?", transposed=False):
        if edge.transposed or edge.rows != edge.cols:
            raise StateError("SPO needs a square, untransposed edge operator")
        self.edge, self.transposed, self.name = edge, transposed, name
        self.rows = self.cols = edge.rows

    def _likes(self):
        return self.edge.blocks

    def apply_matrix(self, X):
        e = self.edge
        ys = _split(X, self.cols)
        if self.transposed:
            for k in e.order:
                p = e.parents[k]
                if p >= 0:
                    ys[k] = ys[k] + bk.mT(e.blocks[k]) @ ys[p]
        else:
            for k in reversed(e.order):
                p = e.parents[k]
                if p >= 0:
                    ys[p] = ys[p] + e.blocks[k] @ ys[k]
        return _join(ys)

    def _transpose(self):
        name = self.name[:-1] if self.name.endswith("*") else self.name + "*"
        return SPO(self.edge, name, not self.transposed)

    def inv(self):
        """``I − E`` (or its adjoint): the inverse of an SPO is bidiagonal."""
        E = self.edge.T if self.transposed else self.edge
        return Identity(self.rows) - E

    def path_block(self, i: int, j: int) -> np.ndarray:
        """Block (i, j) as the path product E(i,·)⋯E(·,j) if i ⪰ j, else 0 (B2)."""
        if self.transposed:
            return bk.mT(SPO(self.edge).path_block(j, i))
        e = self.edge
        k, P = j, None
        while k != i:
            if k < 0:
                return bk.zeros((self.rows[i], self.cols[j]), *e.blocks)
            P = e.blocks[k] if P is None else e.blocks[k] @ P
            k = e.parents[k]
        return bk.eye(self.rows[i], *e.blocks) if P is None else P


class Identity(Operator):
    """The identity on a block space."""

    def __init__(self, sizes, name="I"):
        self.rows = self.cols = tuple(sizes)
        self.name = name

    def apply_matrix(self, X):
        return X

    def _transpose(self):
        return self

    def inv(self):
        return self


class Scaled(Operator):
    """c · A for a scalar c (number or sympy expression)."""

    def __init__(self, c, op: Operator):
        self.c, self.op = c, op
        self.rows, self.cols = op.rows, op.cols
        self.name = f"{c}*{op.name}"

    def _likes(self):
        return self.op._likes() + [bk.asarray(self.c)]

    def apply_matrix(self, X):
        return self.c * self.op.apply_matrix(X)

    def _transpose(self):
        return Scaled(self.c, self.op.T)


class Sum(Operator):
    """A + B + ...; all terms must map the same spaces."""

    def __init__(self, terms: Sequence[Operator], name: str | None = None):
        terms = list(terms)
        for t in terms:
            if not isinstance(t, Operator):
                raise TypeError(f"cannot add an operator and a {type(t).__name__}")
            if (t.rows, t.cols) != (terms[0].rows, terms[0].cols):
                raise StateError(
                    f"cannot add {terms[0].name} ({terms[0].shape}) and {t.name} ({t.shape}): "
                    "block structures differ"
                )
        self.terms = terms
        self.rows, self.cols = terms[0].rows, terms[0].cols
        self.name = name or "(" + " + ".join(t.name for t in terms) + ")"

    def _likes(self):
        return [b for t in self.terms for b in t._likes()]

    def apply_matrix(self, X):
        out = self.terms[0].apply_matrix(X)
        for t in self.terms[1:]:
            out = out + t.apply_matrix(X)
        return out

    def _transpose(self):
        return Sum([t.T for t in self.terms], name=f"{self.name}*")


class Product(Operator):
    """A B ...; applied right to left, so each factor keeps its O(n) recursion."""

    def __init__(self, factors: Sequence[Operator]):
        flat = []
        for f in factors:
            flat.extend(f.factors if isinstance(f, Product) else [f])
        for a, b in zip(flat, flat[1:]):
            if a.cols != b.rows:
                raise StateError(
                    f"cannot compose {a.name} ({a.shape}) with {b.name} ({b.shape}): "
                    "inner block structures differ"
                )
        self.factors = flat
        self.rows, self.cols = flat[0].rows, flat[-1].cols
        self.name = " ".join(f.name for f in flat)

    def _likes(self):
        return [b for f in self.factors for b in f._likes()]

    def apply_matrix(self, X):
        for f in reversed(self.factors):
            X = f.apply_matrix(X)
        return X

    def _transpose(self):
        return Product([f.T for f in reversed(self.factors)])

    def inv(self):
        return Product([f.inv() for f in reversed(self.factors)])
