"""Small helpers of :mod:`opalg.closed`: the row selection Π, block diagonals, the H1 rank check."""

from __future__ import annotations

import numpy as np

from opalg.errors import ModelError, SingularConfigurationError, StateError

#: A grasp-force system whose condition number exceeds this is reported as singular: beyond
#: it, a double-precision solve loses all but ~4 digits and the forces are statically
#: indeterminate in practice (the planar trap H9 sits at ~1e17).
COND_MAX = 1e12


def selection(rows, who: str = "MultiArm", error: type = ModelError) -> np.ndarray:
    """Π: the rows of I₆ picked by ``rows`` (all six if None), else ``error`` naming ``who``.

    The one check of a row selection, for :class:`MultiArm` (ModelError) and
    :class:`opalg.closed.LoopClosure` (StateError).
    """
    if rows is None:
        return np.eye(6)
    if isinstance(rows, (str, bytes)):
        raise error(f"{who}: rows must be a sequence of integers in 0..5, got {rows!r}")
    try:
        idx = [int(r) for r in rows if not isinstance(r, (bool, np.bool_)) and r == int(r)]
    except (TypeError, ValueError):
        raise error(f"{who}: rows must be a sequence of integers in 0..5, got {rows!r}") from None
    if len(idx) != len(list(rows)) or not idx or len(set(idx)) != len(idx) or not all(0 <= i < 6 for i in idx):
        raise error(f"{who}: rows must be distinct integers in 0..5 (angular-first: 0-2 = ω, 3-5 = v), "
                    f"at least one, e.g. [2, 3, 4] for planar models; got {list(rows)!r}")
    return np.eye(6)[idx]


def vector6(x, name: str) -> np.ndarray:
    try:
        a = np.asarray(x, dtype=float)
    except (TypeError, ValueError):
        raise StateError(f"{name} must be a numeric spatial force [moment; force] of shape (..., 6)") from None
    if a.ndim == 0 or a.shape[-1] != 6 or not np.all(np.isfinite(a)):
        raise StateError(f"{name} must be a finite array of shape (..., 6), got shape {a.shape}")
    return a


def blkdiag(blocks: list, batch: tuple) -> np.ndarray:
    sizes = [b.shape[-1] for b in blocks]
    out = np.zeros(batch + (sum(sizes), sum(sizes)))
    i = 0
    for b, k in zip(blocks, sizes):
        out[..., i:i + k, i:i + k] = b
        i += k
    return out


def check_h1(H: np.ndarray) -> None:
    """SingularConfigurationError (with the rank) if the H1 matrix is singular (H9)."""
    w = np.linalg.eigvalsh(H)
    bad = w[..., 0] <= w[..., -1] / COND_MAX
    if np.any(bad):
        rank = int(np.min(np.sum(w > w[..., -1:] / COND_MAX, -1)))
        cond = float(np.max(w[..., -1] / np.maximum(np.abs(w[..., 0]), np.finfo(float).tiny)))
        raise SingularConfigurationError(
            f"MultiArm: the H1 grasp-force matrix ({H.shape[-1]}x{H.shape[-1]}) is singular, rank {rank} "
            f"(cond {cond:.1e}): some grasp forces are statically indeterminate (an internal force no arm "
            "can resist, e.g. out-of-plane forces of planar arms); pass rows=[2, 3, 4] for planar arms")
