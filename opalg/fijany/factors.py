r"""Fijany's Schur-complement factorization of ℳ⁻¹ (I0–I2) and the constraint-force algorithm (I4).

Body-frame blocks (``φ(℘k,k) = Xup[k]*``, docs/REFERENCE.md A2)::

    Q = (I − ℰφ)* M⁻¹ (I − ℰφ)                                              (I0: Q⁻¹ = φMφ*)
    Q(k,k) = M⁻¹(k) + Xup[k] M⁻¹(℘k) Xup[k]*,   Q(k,℘k) = −Xup[k] M⁻¹(℘k),
    Q(i,j) = Xup[i] M⁻¹(p) Xup[j]*  for siblings i ≠ j of parent p          (I2)
    A = W Q W*,   B = W Q Ĥ*,   C = Ĥ Q Ĥ*,   ℳ⁻¹ = C − B* A⁻¹ B              (I1)

W(k) spans the (6 − n_k) constraint-force directions of hinge k (orthonormal rows, H(k)W*(k) = 0)
and Ĥ(k) = (H(k)H*(k))⁻¹H(k).  The constraint space (the rows of A and B) is ordered by *depth
level*: the bodies at depth 0 (the roots), then depth 1, …  Parent–child pairs sit in adjacent
levels and siblings in the same level, so A is block tridiagonal over the levels on every tree
(:class:`~opalg.algebra.block_ops.BlockTridiagonal`): one body per level on a chain, and on a tree the
sibling fill-in makes the level blocks wider (they hold the whole level).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from opalg import _backend as bk
from opalg.algebra.operators import BlockDiagonal
from opalg.algebra.block_ops import BlockSparse, BlockTridiagonal
from opalg.errors import ModelError, StateError
from opalg.model import _validate
from opalg.model.kinematics import body_kinematics, chunked, check_state
from opalg.model.multibody import Model


def constraint_directions(S: np.ndarray) -> np.ndarray:
    r"""W(k): the (6 − n_k)×6 orthonormal rows with H(k) W*(k) = 0, from S = H*(k) (..., 6, n_k).

    The left singular vectors of S beyond its rank span the orthogonal complement of the
    joint's motion subspace (I1).

    Examples
    --------
    >>> import numpy as np
    >>> from opalg.fijany.factors import constraint_directions
    >>> S = np.array([[0, 0, 1.0, 0, 0, 0.1]]).T            # a helical joint about z
    >>> W = constraint_directions(S)
    >>> W.shape, bool(np.allclose(W @ S, 0)), bool(np.allclose(W @ W.T, np.eye(5)))
    ((5, 6), True, True)
    """
    where = "fijany.constraint_directions"
    if isinstance(S, (str, bytes)):
        raise StateError(f"{where}: S must be a (..., 6, n_k) array of numbers, got {_validate.describe(S)}")
    S = np.asarray(S)
    if S.ndim < 2 or S.shape[-2] != 6 or not 1 <= S.shape[-1] <= 6:
        raise StateError(f"{where}: S must have shape (..., 6, n_k) with 1 <= n_k <= 6 (a joint's motion "
                         f"subspace H*(k)), got shape {S.shape}")
    S = _validate.array(S, "S", where)
    sv = np.linalg.svd(S, compute_uv=False)
    if not np.all(sv[..., -1] > 1e-12 * np.maximum(sv[..., 0], 1e-300)):
        raise StateError(f"{where}: S must have full column rank n_k = {S.shape[-1]} (independent joint axes), "
                         f"got singular values {np.round(sv.reshape(-1, sv.shape[-1])[0], 12).tolist()}")
    return _constraint_directions(S)


def _constraint_directions(S: np.ndarray) -> np.ndarray:
    U = np.linalg.svd(S, full_matrices=True)[0]
    return np.swapaxes(U[..., :, S.shape[-1]:], -1, -2)


def _inverse_inertias(model: Model) -> list:
    """M⁻¹(k) for every body; ModelError naming the first body whose M(k) is singular (I0)."""
    out = []
    for k, M in enumerate(model.I_spatial):
        M = np.asarray(M)
        if M.dtype.kind not in "fc":
            raise ModelError(f"opalg.fijany needs numeric inertias; body {k} ({model.names[k]}) has "
                             f"symbolic entries")
        ev = np.linalg.eigvalsh(M)
        if not ev[0] > 1e-12 * max(abs(ev[-1]), 1e-300):
            raise ModelError(f"body {k} ({model.names[k]}): its spatial inertia M(k) is singular "
                             f"(smallest eigenvalue {ev[0]:.3g}; massless or degenerate), so M⁻¹(k) "
                             f"and Fijany's Q = (I − ℰφ)* M⁻¹ (I − ℰφ) are undefined")
        out.append(np.linalg.inv(M))
    return out


def depth_levels(model: Model) -> list:
    """Bodies grouped by depth (roots: level 0), siblings adjacent within a level."""
    _validate.model(model, "fijany.depth_levels")
    depth = [0] * model.n
    for k in model.order:
        p = model.parents[k]
        depth[k] = 0 if p < 0 else depth[p] + 1
    levels = [[] for _ in range(max(depth) + 1)]
    for k in sorted(range(model.n), key=lambda k: (depth[k], model.parents[k], k)):
        levels[depth[k]].append(k)
    return levels


@dataclass
class Factors:
    """The blocks of Fijany's factorization at one configuration (see :func:`factors`).

    Attributes
    ----------
    Q : BlockSparse            6n×6n, body blocks in label order (I0, I2)
    W, H_hat : BlockDiagonal   (6 − n_k)×6 and n_k×6 blocks in label order
    A : BlockTridiagonal       constraint space, one diagonal block per depth level
    A_bodies : BlockSparse     the same A with one block per body (level order)
    B : BlockSparse            rows: constraint blocks (level order), columns: joints (label order)
    C : BlockSparse            N×N, label order
    levels : list              the bodies of each depth level
    cf_order : list            the bodies in constraint-space (level) order
    cf_rows : ndarray          row r of the level order is row cf_rows[r] of the label order
    Minv : list                M⁻¹(k)
    """

    model: Model
    Q: BlockSparse
    W: BlockDiagonal
    H_hat: BlockDiagonal
    A: BlockTridiagonal
    A_bodies: BlockSparse
    B: BlockSparse
    C: BlockSparse
    levels: list
    cf_order: list
    cf_rows: np.ndarray
    Minv: list
    Xup: list

    def mass_matrix_inv(self, method: str = "cyclic") -> np.ndarray:
        """ℳ⁻¹ = C − B* A⁻¹ B (I1), with the A-solve by ``method`` ("cyclic" or "thomas")."""
        Bd = self.B.dense()
        return self.C.dense() - np.swapaxes(Bd, -1, -2) @ self.A.solve_matrix(Bd, method)

    def to_labels(self, F: np.ndarray) -> np.ndarray:
        """A constraint-space vector (..., Σ(6 − n_k)) from level order to label order."""
        out = np.empty_like(F)
        out[..., self.cf_rows] = F
        return out


def _q_blocks(model: Model, Xup: list, Minv: list) -> dict:
    """The nonzero 6×6 blocks of Q (I0/I2): diagonal, parent–child, siblings."""
    Q = {}
    for k in range(model.n):
        p = model.parents[k]
        Q[k, k] = Minv[k] + (0 if p < 0 else Xup[k] @ Minv[p] @ bk.mT(Xup[k]))
        if p >= 0:
            Q[k, p] = -(Xup[k] @ Minv[p])
            Q[p, k] = bk.mT(Q[k, p])
            for j in model.children[p]:
                if j != k:
                    Q[k, j] = Xup[k] @ Minv[p] @ bk.mT(Xup[j])
    return Q


def _factors(model: Model, q: np.ndarray, kin) -> Factors:
    Minv = _inverse_inertias(model)
    W = [_constraint_directions(S) for S in kin.S]
    Hh = [bk.mT(np.linalg.solve(bk.mT(S) @ S, bk.mT(S))) for S in kin.S]  # Ĥ* = H*(HH*)⁻¹
    Qb = _q_blocks(model, kin.Xup, Minv)
    levels = depth_levels(model)
    order = [k for lev in levels for k in lev]
    pos = {k: i for i, k in enumerate(order)}
    nc = [6 - model.joints[k].ndof for k in order]
    offs = np.concatenate([[0], np.cumsum([6 - s for s in model.joint_sizes])]).astype(int)
    cf_rows = np.concatenate([np.arange(offs[k], offs[k + 1]) for k in order]).astype(int)
    Ab = {(pos[i], pos[j]): W[i] @ Qij @ bk.mT(W[j]) for (i, j), Qij in Qb.items()}
    Bb = {(pos[i], j): W[i] @ Qij @ Hh[j] for (i, j), Qij in Qb.items()}
    Cb = {(i, j): bk.mT(Hh[i]) @ Qij @ Hh[j] for (i, j), Qij in Qb.items()}
    sizes = model.joint_sizes
    A_bodies = BlockSparse(Ab, nc, nc, "A")
    return Factors(model, BlockSparse(Qb, (6,) * model.n, (6,) * model.n, "Q"),
                   BlockDiagonal(W, "W"), BlockDiagonal([bk.mT(h) for h in Hh], "H_hat"),
                   _level_tridiagonal(A_bodies, levels, pos, kin.batch), A_bodies,
                   BlockSparse(Bb, nc, sizes, "B"), BlockSparse(Cb, sizes, sizes, "C"),
                   levels, order, cf_rows, Minv, kin.Xup)


def _level_tridiagonal(Ab: BlockSparse, levels, pos, batch) -> BlockTridiagonal:
    """A over depth levels: each body block of A placed once into its (level, level) block."""
    level = {pos[k]: d for d, lev in enumerate(levels) for k in lev}
    starts = np.concatenate([[0], np.cumsum(Ab.rows)]).astype(int)
    first = [starts[pos[lev[0]]] for lev in levels] + [starts[-1]]   # level d: rows first[d]:first[d+1]
    out = {}
    for (i, j), blk in Ab.blocks.items():
        a, b = level[i], level[j]
        if (a, b) not in out:
            out[a, b] = np.zeros(batch + (first[a + 1] - first[a], first[b + 1] - first[b]))
        out[a, b][..., starts[i] - first[a]:starts[i + 1] - first[a],
                  starts[j] - first[b]:starts[j + 1] - first[b]] = blk
    d = len(levels)
    return BlockTridiagonal([out[a, a] for a in range(d)], [out[a + 1, a] for a in range(d - 1)],
                            [out[a, a + 1] for a in range(d - 1)], "A")


def factors(model: Model, q) -> Factors:
    r"""Fijany's factors Q, W, Ĥ, A, B, C of ℳ⁻¹ = C − B* A⁻¹ B at configuration q (I0, I1, I2).

    Parameters
    ----------
    model : Model
        Every body needs an invertible spatial inertia (no massless bodies).
    q : array_like, shape (..., N)

    Returns
    -------
    Factors

    Raises
    ------
    ModelError
        Naming the first body whose M(k) is singular (M⁻¹ undefined).

    Examples
    --------
    >>> import numpy as np, opalg
    >>> from opalg import fijany
    >>> m = opalg.random_model(6, "chain", seed=1, joints="all")
    >>> q = np.random.default_rng(0).normal(size=m.ndof)
    >>> F = fijany.factors(m, q)
    >>> type(F.A).__name__, F.A.n                      # one block per body on a chain
    ('BlockTridiagonal', 6)
    >>> bool(np.allclose(F.mass_matrix_inv() @ opalg.crba(m, q), np.eye(m.ndof)))
    True
    """
    q = check_state(model, q, "q")
    if q.dtype.kind != "f":
        raise StateError(f"opalg.fijany.factors needs a real numeric q, got dtype {q.dtype}")
    return _factors(model, q, body_kinematics(model, q))


def forward(model: Model, q, qd, tau, f_ext=None, gravity: bool = True,
            method: str = "cyclic") -> tuple[np.ndarray, np.ndarray]:
    r"""Forward dynamics by the constraint-force algorithm (I4): returns ``(q̈, F_c)``.

    .. math:: y = a + (I − ℰφ^*) M^{-1} b,\quad F_c = A^{-1}(W y − B T),\quad
              \ddot q = C T + B^* F_c − \hat H y

    (``b − f_ext`` with external forces, gravity folded into a of the roots).  ``F_c = W f``:
    the constraint components of the hinge forces f, in label order, body k's 6 − n_k entries
    after those of bodies 0 … k−1.  ``method`` chooses the A-solve: "cyclic" (block cyclic
    reduction, I3) or "thomas".

    Examples
    --------
    >>> import numpy as np, opalg
    >>> from opalg import fijany
    >>> m = opalg.random_model(5, "tree", seed=3, joints="all")
    >>> q, qd, tau = np.random.default_rng(1).normal(size=(3, m.ndof))
    >>> qdd, Fc = fijany.forward(m, q, qd, tau)
    >>> bool(np.allclose(qdd, opalg.aba(m, q, qd, tau))), Fc.shape == (6 * m.n - m.ndof,)
    (True, True)
    """
    _validate.choice(method, ("cyclic", "thomas"), "method", "fijany.forward")
    _validate.flag(gravity, "gravity", "fijany.forward")
    qdd, Fc = _forward(model, q, qd, tau, f_ext, gravity=gravity, method=method)
    return qdd, Fc


@chunked(3, forces=("f_ext",))
def _forward(model: Model, q, qd, tau, f_ext=None, gravity: bool = True, method: str = "cyclic") -> list:
    if q.dtype.kind != "f" or qd.dtype.kind != "f" or tau.dtype.kind != "f":
        raise StateError("opalg.fijany.forward needs real numeric q, qd, tau")
    kin = body_kinematics(model, q, qd, gravity, validate=False)
    F = _factors(model, q, kin)
    b = kin.b if f_ext is None else [kin.b[k] - f_ext[..., k, :] for k in range(model.n)]
    Mb = [bk.mv(F.Minv[k], b[k]) for k in range(model.n)]
    y = [kin.a[k] + Mb[k] - (0 if model.parents[k] < 0 else bk.mv(kin.Xup[k], Mb[model.parents[k]]))
         for k in range(model.n)]                                   # y = a + (I − ℰφ*) M⁻¹ b
    y = np.concatenate(np.broadcast_arrays(*y), -1)
    rhs = (F.W @ y)[..., F.cf_rows]                                  # label → level order
    Fc = F.A.solve(rhs - F.B @ tau, method)                          # level order
    qdd = F.C @ tau + F.B.T @ Fc - F.H_hat @ y
    return [qdd, F.to_labels(Fc)]
