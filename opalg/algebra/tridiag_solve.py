r"""Block tridiagonal solves: the sequential Thomas algorithm and block cyclic reduction (I3).

The system has n unknown blocks x_0 … x_{n−1} of equal size m (callers pad smaller blocks
with identity, see :class:`opalg.algebra.block_ops.BlockTridiagonal`)::

    L_{i−1} x_{i−1} + D_i x_i + U_i x_{i+1} = b_i,     L_i = A(i+1, i),  U_i = A(i, i+1)

Arrays: ``D`` (..., n, m, m), ``L`` and ``U`` (..., n−1, m, m), ``b`` (..., n, m, r).

* :func:`thomas` — block LU without pivoting between blocks: one forward and one backward
  sweep, 2n dependent block steps.
* :func:`cyclic` — block cyclic (odd–even) reduction (docs/REFERENCE.md I3).  Each level
  eliminates every odd-indexed block at once: one batched ``np.linalg.solve`` over all odd
  blocks and a fixed number of batched products for the even ones; the evens form a block
  tridiagonal system of ⌈n/2⌉ blocks, so ⌈log₂ n⌉ reductions plus the base solve:
  ⌈log₂ n⌉ + 1 levels.  Back substitution runs the levels in reverse, again one batched
  operation per level.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from opalg.errors import StateError


@dataclass
class BCRTrace:
    """What :func:`cyclic` did, level by level.

    Attributes
    ----------
    levels : int
        Number of levels: the reductions plus the base solve (⌈log₂ n⌉ + 1).
    blocks : list of int
        Unknown blocks of the system at each level (n, ⌈n/2⌉, …, 1).
    eliminated : list of int
        Independent odd-block eliminations at each level (the last level: the base solve, 1).
    updated : list of int
        Independent even-block updates at each level (0 at the base level).
    """

    levels: int = 0
    blocks: list = field(default_factory=list)
    eliminated: list = field(default_factory=list)
    updated: list = field(default_factory=list)

    @property
    def ops_per_level(self) -> list:
        """Independent block operations per level (eliminations + updates)."""
        return [e + u for e, u in zip(self.eliminated, self.updated)]


def _pad_odd(D, L, U, b):
    """Append a decoupled identity block so that the number of blocks is odd."""
    m = D.shape[-1]
    eye = np.broadcast_to(np.eye(m, dtype=D.dtype), D.shape[:-3] + (1, m, m))
    zero = np.zeros(L.shape[:-3] + (1, m, m), L.dtype)
    return (np.concatenate([D, eye], -3), np.concatenate([L, zero], -3),
            np.concatenate([U, np.zeros(U.shape[:-3] + (1, m, m), U.dtype)], -3),
            np.concatenate([b, np.zeros(b.shape[:-3] + (1,) + b.shape[-2:], b.dtype)], -3))


def _check(D, L, U, b, where: str) -> None:
    """StateError unless D (..., n, m, m), L and U (..., n−1, m, m) and b (..., n, m, r) fit."""
    arrs = {"D": D, "L": L, "U": U, "b": b}
    for nm, a in arrs.items():
        if not isinstance(a, np.ndarray) or a.ndim < 3:
            raise StateError(f"{where}: {nm} must be an array (..., n, m, ·), got {type(a).__name__} "
                             f"{getattr(a, 'shape', '')}")
    n, m = D.shape[-3], D.shape[-1]
    want = {"D": (n, m, m), "L": (max(n - 1, 0), m, m), "U": (max(n - 1, 0), m, m), "b": (n, m)}
    for nm, a in arrs.items():
        if a.shape[-3:-1] + ((a.shape[-1],) if nm != "b" else ()) != want[nm]:
            raise StateError(f"{where}: {nm} has shape {a.shape}, expected (..., {', '.join(map(str, want[nm]))}"
                             f"{', r' if nm == 'b' else ''}) for n = {n} blocks of size m = {m}")


def cyclic(D, L, U, b, trace: BCRTrace | None = None) -> np.ndarray:
    r"""Solve the block tridiagonal system by block cyclic reduction (I3).

    For odd s (block 2s+1) with ``X = D_{2s+1}⁻¹ [L_{2s}, U_{2s+1}, b_{2s+1}]`` (one batched
    solve for all s), the even block t (block 2t) becomes

    .. math:: D'_t = D_{2t} − L_{2t−1} D_{2t−1}^{-1} U_{2t−1} − U_{2t} D_{2t+1}^{-1} L_{2t},\quad
              L'_t = −L_{2t+1} D_{2t+1}^{-1} L_{2t},\quad U'_t = −U_{2t} D_{2t+1}^{-1} U_{2t+1},

    and the same for b'.  After the evens are solved, ``x_{2s+1} = D⁻¹(b − L x_{2s} − U x_{2s+2})``.

    Examples
    --------
    >>> import numpy as np
    >>> from opalg.algebra.tridiag_solve import cyclic, BCRTrace
    >>> n, m = 5, 2
    >>> D = np.tile(4 * np.eye(m), (n, 1, 1)); L = np.tile(np.eye(m), (n - 1, 1, 1))
    >>> b = np.ones((n, m, 1)); tr = BCRTrace()
    >>> x = cyclic(D, L, np.swapaxes(L, -1, -2), b, tr)
    >>> A = np.kron(np.diag([4.0] * n) + np.diag([1.0] * (n - 1), 1) + np.diag([1.0] * (n - 1), -1), np.eye(m))
    >>> bool(np.allclose(A @ x.reshape(-1), np.ones(n * m))), tr.levels, tr.blocks
    (True, 4, [5, 3, 2, 1])
    """
    _check(D, L, U, b, "cyclic")
    n = D.shape[-3]
    if trace is not None:
        trace.levels += 1
        trace.blocks.append(n)
    if n == 1:
        if trace is not None:
            trace.eliminated.append(1)
            trace.updated.append(0)
        return np.linalg.solve(D, b)
    even = n % 2 == 0
    if even:
        D, L, U, b = _pad_odd(D, L, U, b)
    h = D.shape[-3] // 2                         # odd blocks 2s+1, s < h; even blocks 2t, t ≤ h
    m, r = D.shape[-1], b.shape[-1]
    Le, Lo, Ue, Uo = L[..., 0::2, :, :], L[..., 1::2, :, :], U[..., 0::2, :, :], U[..., 1::2, :, :]
    rhs = np.concatenate([Le, Uo, b[..., 1::2, :, :]], -1)
    X = np.linalg.solve(D[..., 1::2, :, :], rhs)  # all odd blocks in one batched solve
    XL, XU, xb = X[..., :m], X[..., m:2 * m], X[..., 2 * m:]
    D2, b2 = D[..., 0::2, :, :].copy(), b[..., 0::2, :, :].copy()
    D2[..., 1:, :, :] -= Lo @ XU                 # from the odd block on the left (t ≥ 1)
    b2[..., 1:, :, :] -= Lo @ xb
    D2[..., :-1, :, :] -= Ue @ XL                # from the odd block on the right (t < h)
    b2[..., :-1, :, :] -= Ue @ xb
    L2, U2 = -(Lo @ XL), -(Ue @ XU)
    if even:  # the appended block is decoupled (its couplings are 0): drop it from the evens
        D2, b2, L2, U2 = D2[..., :-1, :, :], b2[..., :-1, :, :], L2[..., :-1, :, :], U2[..., :-1, :, :]
    if trace is not None:
        trace.eliminated.append(h)
        trace.updated.append(D2.shape[-3])
    x2 = cyclic(D2, L2, U2, b2, trace)
    if even:
        x2 = np.concatenate([x2, np.zeros_like(x2[..., :1, :, :])], -3)
    xo = xb - XL @ x2[..., :-1, :, :] - XU @ x2[..., 1:, :, :]
    x = np.empty(D.shape[:-3] + (2 * h + 1, m, r), np.result_type(x2, xo))
    x[..., 0::2, :, :], x[..., 1::2, :, :] = x2, xo
    return x[..., :n, :, :]


def thomas(D, L, U, b) -> np.ndarray:
    r"""Solve the block tridiagonal system by the block Thomas algorithm (sequential).

    Forward: ``D̃_0 = D_0``, ``D̃_i = D_i − L_{i−1} D̃_{i−1}⁻¹ U_{i−1}``, ``b̃_i = b_i − L_{i−1} D̃_{i−1}⁻¹ b̃_{i−1}``;
    backward: ``x_i = D̃_i⁻¹ (b̃_i − U_i x_{i+1})``.

    Examples
    --------
    >>> import numpy as np
    >>> from opalg.algebra.tridiag_solve import thomas
    >>> D = np.array([[[2.0]], [[2.0]], [[2.0]]]); L = np.array([[[-1.0]], [[-1.0]]])
    >>> thomas(D, L, L, np.array([[[1.0]], [[0.0]], [[1.0]]]))[..., 0, 0]
    array([1., 1., 1.])
    """
    _check(D, L, U, b, "thomas")
    n = D.shape[-3]
    Dt, bt = [D[..., 0, :, :]], [b[..., 0, :, :]]
    for i in range(1, n):
        G = np.linalg.solve(Dt[-1], np.concatenate([U[..., i - 1, :, :], bt[-1]], -1))
        m = D.shape[-1]
        Dt.append(D[..., i, :, :] - L[..., i - 1, :, :] @ G[..., :m])
        bt.append(b[..., i, :, :] - L[..., i - 1, :, :] @ G[..., m:])
    x = [None] * n
    x[n - 1] = np.linalg.solve(Dt[n - 1], bt[n - 1])
    for i in range(n - 2, -1, -1):
        x[i] = np.linalg.solve(Dt[i], bt[i] - U[..., i, :, :] @ x[i + 1])
    return np.stack(x, -3)
