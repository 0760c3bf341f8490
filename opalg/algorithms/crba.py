r"""The composite-rigid-body algorithm: ℳ = HφMφ*H* as a sum over composite inertias (docs/REFERENCE.md §6).

Every function accepts joint-space arrays with leading batch axes, shape
(..., N), and runs each recursion once over the whole batch; the default route is the
common-frame one of :mod:`opalg.algorithms.crba_world`.
"""

from __future__ import annotations

import numpy as np

from opalg import _backend as bk
from opalg.algorithms import crba_world
from opalg.errors import OpalgError
from opalg.model.kinematics import body_kinematics, chunked
from opalg.model.multibody import Model
from opalg.algorithms.tree_sparse import TreeSparse, dof_parents, pattern




def composite_inertias(model: Model, q, kin=None) -> tuple[list, list]:
    """Composite-body inertias ``R(k)`` (D1: R = M + ℰφ R ℰφ*) and the kinematics used.

    Returns ``(R, kin)`` with ``R`` a list of (..., 6, 6) arrays.  R(k) is the
    spatial inertia of the subtree rooted at k, locked, about O_k.

    Examples
    --------
    >>> import numpy as np, opalg
    >>> arm = opalg.planar_arm([1.0, 1.0], [1.0, 2.0], [0.1, 0.1])
    >>> R, _ = opalg.composite_inertias(arm, [0.0, 0.0])
    >>> float(R[0][5, 5])   # total mass of the arm
    3.0
    """
    if kin is None:  # callers that already have the kinematics (crba, operators) pass them
        kin = body_kinematics(model, q)
    batch = kin.batch
    R = [model.I_spatial[k] + bk.zeros(batch + (6, 6), model.I_spatial[k], q) for k in range(model.n)]
    for k in reversed(model.order):
        p = model.parents[k]
        if p != -1:
            R[p] = R[p] + bk.mm(bk.mm(bk.mT(kin.Xup[k]), R[k]), kin.Xup[k])
    return R, kin


def _crba_layout(model: Model):
    """Depth-first (preorder) placement of the dof columns for :func:`crba`, cached on the model.

    Returns ``(start, stop, perm)``: the dofs of body k sit at positions
    ``start[k] : start[k] + n_k`` and its whole subtree at ``start[k] : stop[k]``
    (contiguous, because every subtree is a contiguous run of a preorder);
    ``perm[i]`` is the position of dof i (label order), or None if the preorder
    is the label order (e.g. a chain labelled base to tip).
    """
    cache = model._crba_layout
    if cache is not None:
        return cache
    n = model.n
    roots = [k for k in model.order if model.parents[k] == -1]
    pre, stack = [], roots[::-1]
    while stack:  # iterative: chains of 10^4 bodies exceed the recursion limit
        k = stack.pop()
        pre.append(k)
        stack.extend(reversed(model.children[k]))
    start, stop = [0] * n, [0] * n
    pos = 0
    for k in pre:
        start[k] = pos
        pos += model.joints[k].ndof
    for k in reversed(model.order):
        stop[k] = max([start[k] + model.joints[k].ndof] + [stop[c] for c in model.children[k]])
    perm = np.concatenate([np.arange(start[k], start[k] + model.joints[k].ndof) for k in range(n)]
                          + [np.zeros(0, dtype=int)])
    layout = (start, stop, None if np.array_equal(perm, np.arange(model.ndof)) else perm)
    model._crba_layout = layout
    return layout


def _crba_pairs(model: Model, R, kin, q) -> np.ndarray:
    """ℳ by one pass per (body, ancestor) pair: the symbolic (object) path of :func:`crba`.

    Keeps the expressions of the textbook loop (each column walked to its root).
    """
    N = model.ndof
    out = bk.zeros(kin.batch + (N, N), q, *R, *kin.S)
    for j in range(model.n):
        sj = model.dof_slice[j]
        F = bk.matmul(R[j], kin.S[j])
        out[..., sj, sj] = bk.matmul(bk.mT(kin.S[j]), F)
        k = j
        while model.parents[k] != -1:
            F = bk.matmul(bk.mT(kin.Xup[k]), F)
            k = model.parents[k]
            sk = model.dof_slice[k]
            blk = bk.matmul(bk.mT(kin.S[k]), F)
            out[..., sk, sj] = blk
            out[..., sj, sk] = bk.mT(blk)
    return out


def crba(model: Model, q, layout: str = "dense", frame: str = "world"):
    r"""Joint-space mass matrix ℳ(q) by the composite rigid body algorithm.

    Implements ``ℳ = H φ M φ* H* = H (R + φ̃R + Rφ̃*) H*`` (docs/REFERENCE.md D2–D4):
    ``ℳ(k,k) = H(k) R(k) H*(k)`` and ``ℳ(i,j) = H(i) φ(i,j) R(j) H*(j)`` for i ≻ j,
    with the composite inertias ``R = M + ℰφ R ℰφ*`` computed inward.

    ``frame="world"`` (numeric entries) is the common-frame variant (D8): subspaces and
    composite inertias in the ground frame, one 6-vector dot product per entry, loops
    over the tree's depth levels (:mod:`opalg.algorithms.crba_world`).  ``frame="body"`` is the
    body-frame sweep: the columns ``F_j = R(j) H*(j)`` are walked inward together, at
    body k ``ℳ(k, subtree) = H(k) F`` is one product and one transform
    ``φ(℘k,k) = Xup*`` moves them all to the parent (432 per body for R, 42 per body
    and 42 per ancestor step: notebook 06's count).  Both are Θ(nnz ℳ) = Θ(Σ depth),
    output-optimal (D5).  sympy entries always take the textbook per-(body, ancestor)
    loop in body frames.

    Parameters
    ----------
    model : Model
    q : array_like, shape (..., N)
    layout : {"dense", "sparse"}
        ``"sparse"`` returns a :class:`~opalg.algorithms.tree_sparse.TreeSparse` (values along the
        dof tree, D5) instead of the dense matrix.
    frame : {"world", "body"}

    Returns
    -------
    ndarray, shape (..., N, N), symmetric positive definite; or TreeSparse.

    Examples
    --------
    >>> import numpy as np, opalg
    >>> m = opalg.random_model(5, "tree", seed=2)
    >>> Mq = opalg.crba(m, np.zeros(m.ndof))
    >>> bool(np.allclose(Mq, Mq.T)), bool(np.all(np.linalg.eigvalsh(Mq) > 0))
    (True, True)
    >>> bool(np.allclose(opalg.crba(m, np.zeros(m.ndof), frame="body"), Mq))
    True
    """
    if layout not in ("dense", "sparse"):
        raise OpalgError(f"crba: layout must be 'dense' or 'sparse', got {layout!r}")
    if frame not in ("world", "body"):
        raise OpalgError(f"crba: frame must be 'world' or 'body', got {frame!r}")
    if layout == "dense":
        return _crba(model, q, frame, None)
    P = pattern(dof_parents(model))
    return TreeSparse(_crba(model, q, frame, (P.rows, P.cols)), P.parent)


def _crba(model: Model, q, frame: str, entries):
    """ℳ dense (entries None) or its stored entries ℳ(rows, cols) (entries = (rows, cols))."""
    batch, N = q.shape[:-1], model.nq
    q = q.reshape(-1, N)       # one flat batch axis: the state-last arrays of crba_world need it
    if frame == "world" and q.dtype != object and crba_world.plan(model).numeric:
        out = crba_world.mass_matrix(model, q, entries)
    else:
        out = _crba_body(model, q, body_kinematics(model, q, validate=False))
        out = out if entries is None else out[..., entries[0], entries[1]]
    return out.reshape(batch + out.shape[1:])


_crba.__name__ = "crba"   # chunked names the function in its overflow message: the public name
_crba = chunked(1)(_crba)


def _crba_body(model: Model, q, kin) -> np.ndarray:
    """The body-frame sweep of :func:`crba` (and the symbolic pairs loop)."""
    R, kin = composite_inertias(model, q, kin)
    dtype = bk.common_dtype(q, *R, *kin.S)  # S: a symbolic axis or pitch may enter only there
    if dtype == object:
        return _crba_pairs(model, R, kin, q)
    start, stop, perm = _crba_layout(model)
    N = model.ndof
    # Rows and columns of W and out are in the preorder layout of _crba_layout (perm maps back).
    # W[..., c, :] = column c of the composite force F_c = φ(k, j) R(j) H*(j) (as a row),
    # expressed in the frame of the body k the inward sweep has carried it to.
    W = np.empty(kin.batch + (N, 6), dtype)
    out = np.zeros(kin.batch + (N, N), dtype)  # blocks of unrelated bodies (other branches) stay 0
    for k in reversed(model.order):
        a, b, e = start[k], start[k] + model.joints[k].ndof, stop[k]
        S = kin.S[k]
        W[..., a:b, :] = bk.mT(bk.mm(R[k], S))
        for c in model.children[k]:  # subtree of c: frame c -> frame k (F <- Xup* F, as rows)
            sc, ec = start[c], stop[c]
            W[..., sc:ec, :] = bk.mm(W[..., sc:ec, :], kin.Xup[c])
        blk = bk.mm(W[..., a:e, :], S)        # ℳ(subtree(k), k) = F* H*(k)
        out[..., a:e, a:b] = blk
        out[..., a:b, a:e] = bk.mT(blk)
    if perm is not None:
        out = out[..., perm[:, None], perm]
    return out


@chunked(1)
def mass_matrix_diag(model: Model, q) -> list:
    r"""Diagonal blocks of ℳ in O(n) (D6), the dual of :func:`~opalg.minv_diag`:

    .. math:: ℳ(k,k) = H(k) R(k) H^*(k),\qquad R = M + ℰφ R ℰφ^* \ \text{(D1, D3)}.

    One inward pass for the composite inertias and one n_k×n_k product per body: no
    off-diagonal block is formed (those are what make ℳ itself Θ(Σ depth)).  A multi-axis
    joint's block is the full n_k×n_k ``H(k)R(k)H*(k)``, whose diagonal is that of ℳ.

    Returns a list of (..., n_k, n_k) blocks, one per body.

    Examples
    --------
    >>> import numpy as np, opalg
    >>> m = opalg.random_model(5, "tree", seed=3, joints="all")
    >>> q = np.random.default_rng(0).normal(size=m.ndof)
    >>> d = np.concatenate([np.diagonal(b, axis1=-2, axis2=-1) for b in opalg.mass_matrix_diag(m, q)])
    >>> bool(np.allclose(d, np.diag(opalg.crba(m, q))))
    True
    """
    R, kin = composite_inertias(model, q, body_kinematics(model, q, validate=False))
    return [bk.mm(bk.mT(kin.S[k]), bk.mm(R[k], kin.S[k])) for k in range(model.n)]
