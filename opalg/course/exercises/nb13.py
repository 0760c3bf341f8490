"""Exercises of notebook 13 (Fijany's Schur complement).  Model answers: docs/solutions/13_fijany_schur.md.

13.1 ("implement it", I3) is one level of block cyclic reduction, graded on the A = WQW* of seeded
random chains (revolute, prismatic, helical and multi-axis joints, so the blocks have unequal sizes
3…5) against the dense Schur complement of A onto its even blocks.  13.2 counts the levels of
opalg's cyclic reduction on a 100-block system (from its trace, not from the formula); 13.3 counts
the CFA's critical path with :func:`opalg.fijany.critical_path`.
"""

from __future__ import annotations

__all__ = ["EXERCISES", "bcr_cases"]

import numpy as np

from opalg.course.exercises import Exercise, function, integer


def bcr_cases() -> list:
    """The systems 13.1 is graded on: ``[(description, D, L, U, b), ...]`` (lists of blocks).

    ``L[i] = A(i+1, i)``, ``U[i] = A(i, i+1)``, ``b[i]`` a vector of the size of block i.

    Examples
    --------
    >>> [len(D) for _, D, _, _, _ in bcr_cases()]
    [5, 8, 7, 2]
    """
    import opalg
    from opalg import fijany

    rng = np.random.default_rng(1301)
    out = []
    for n, seed in ((5, 1302), (8, 1303), (7, 1304), (2, 1305)):
        m = opalg.random_model(n, "chain", seed=seed, joints="all")
        A = fijany.factors(m, rng.uniform(-1.0, 1.0, m.ndof)).A
        D, (L, U) = A.diag_blocks(), A.coupling_blocks()
        b = [rng.normal(size=s) for s in A.rows]
        out.append((f"A of a {n}-body chain (block sizes {list(A.rows)})", D, L, U, b))
    return out


def _schur_on_evens(D, L, U, b):
    """The dense Schur complement of A onto its even-indexed blocks, and the reduced right side."""
    from opalg.algebra.block_ops import BlockTridiagonal

    A = BlockTridiagonal(D, L, U).dense()
    offs = np.concatenate([[0], np.cumsum([d.shape[0] for d in D])]).astype(int)
    idx = lambda blocks: np.concatenate([np.arange(offs[i], offs[i + 1]) for i in blocks])  # noqa: E731
    e, o = idx(range(0, len(D), 2)), idx(range(1, len(D), 2))
    X = np.linalg.solve(A[np.ix_(o, o)], np.concatenate([A[np.ix_(o, e)], np.concatenate(b)[o, None]], 1))
    S = A[np.ix_(e, e)] - A[np.ix_(e, o)] @ X[:, :-1]
    return S, np.concatenate(b)[e] - A[np.ix_(e, o)] @ X[:, -1]


def _bcr_cases():
    return [(what, (D, L, U, b), _schur_on_evens(D, L, U, b)) for what, D, L, U, b in bcr_cases()]


def _compare_level(got, want):
    from opalg.algebra.block_ops import BlockTridiagonal

    try:
        D2, L2, U2, b2 = got
        S = BlockTridiagonal([np.asarray(d, float) for d in D2], [np.asarray(x, float) for x in L2],
                             [np.asarray(x, float) for x in U2]).dense()
        rhs = np.concatenate([np.asarray(x, float).reshape(-1) for x in b2])
    except (TypeError, ValueError) as e:
        return f"expected (D2, L2, U2, b2), lists of blocks of a block tridiagonal system on the evens ({e})"
    S_want, b_want = want
    if S.shape != S_want.shape or rhs.shape != b_want.shape:
        return f"the reduced system has size {S.shape[0]} and right side {rhs.shape[0]}, expected {S_want.shape[0]}"
    # Tolerance 1e-9 relative: the reduced blocks come from solves with 3x3…5x5 blocks of A (cond ≲ 1e4
    # here), so round-off is ~1e-12; a missing neighbour term or a sign error is O(1).
    for what, x, y in (("the reduced matrix", S, S_want), ("the reduced right side", rhs, b_want)):
        err = float(np.abs(x - y).max()) / max(float(np.abs(y).max()), 1e-300)
        if not err <= 1e-9:
            return f"{what} differs from the Schur complement of A on the even blocks (relative error {err:.1e})"
    return None


def _levels_100() -> int:
    """Levels of opalg's block cyclic reduction on a 100-block tridiagonal system (its trace)."""
    from opalg.algebra.block_ops import BlockTridiagonal

    n = 100
    A = BlockTridiagonal([np.array([[4.0]])] * n, [np.array([[1.0]])] * (n - 1))
    return int(A.solve(np.ones(n), method="cyclic", trace=True)[1].levels)


def _cfa_depth_40() -> int:
    """The CFA's critical path on the 40-body chain of 13.3, counted by fijany.critical_path."""
    import opalg
    from opalg import fijany

    m = opalg.random_model(40, "chain", seed=1333, joints="single")
    z = np.zeros(m.ndof)
    return int(fijany.critical_path(m, z, z, z, "cfa").depth)


EXERCISES = {
    "13.1": Exercise("13.1", "function", "a function bcr_level(D, L, U, b) returning (D2, L2, U2, b2)",
                     function(_bcr_cases, _compare_level), name="bcr_level"),
    "13.2": Exercise("13.2", "value", "an integer",
                     integer(_levels_100, "each level halves the blocks (rounding up), and the last one is the "
                                          "solve of a single block")),
    "13.3": Exercise("13.3", "value", "an integer",
                     integer(_cfa_depth_40, "two local steps before the reduction, one per level down and one "
                                            "per level back up, one local step after it")),
}
