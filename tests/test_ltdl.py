"""LTDL of the tree-sparse ℳ in the tree's order (D7): equal to I + HφK and D (E6, E10c),
equal to a dense Cholesky in the same elimination order, and its solve against LAPACK.

The dof tree, depths and elimination order are rebuilt here from the parent array and the
joint sizes (not from opalg.algorithms.tree_sparse); the factors are compared with opalg's innovations
operators (the Riccati route) and with numpy's Cholesky.
"""

from __future__ import annotations

import numpy as np
import pytest

import opalg
from opalg import SingularConfigurationError, TreeSparse, ltdl, ltdl_solve

from helpers import EPS, ancestors, assert_close, cond_tol, make_model, measured

KINDS = ["chain", "tree", "forest", "relabeled", "jain-chain", "jain-tree"]
# Factors from two different eliminations (LTDL on ℳ vs the Riccati recursion, or vs LAPACK's
# Cholesky), and two solves: K·cond(ℳ)·ε with cond(ℳ) computed (issue 31).  Over 210 random
# models of each test's generator (the six KINDS, 9-11 bodies) under 3 BLAS/SIMD kernels the
# worst was 0.58 cond(ℳ)·ε (U blockdiag(W)⁻¹), 0.51 for the solves: K = 10 keeps 17x.  The old
# RTOL = 1e-11 assumed cond(ℳ) <~ 1e3; the sweep reached 2.6e3.
K = 10

pytestmark = pytest.mark.verifies("D7", route="ltdl of the sparse crba vs I + HφK, D (Riccati), dense Cholesky, LAPACK solve")


def rtol(model, q):
    return cond_tol(np.linalg.cond(opalg.crba(model, q)), K)


def dof_tree_order(model) -> np.ndarray:
    """Dofs base to tip: bodies by depth (parent array only), each body's axes in order."""
    depth = [len(ancestors(model.parents, k)) for k in range(model.n)]
    bodies = sorted(range(model.n), key=lambda k: depth[k])
    offs = np.concatenate([[0], np.cumsum(model.joint_sizes)])
    return np.concatenate([np.arange(offs[k], offs[k + 1]) for k in bodies])


@pytest.mark.parametrize("kind", KINDS)
@pytest.mark.parametrize("seed", [0, 1, 2])
def test_D7_factors_equal_innovations_one_dof(kind, seed):
    model = make_model(kind, 11, seed, joints="single")
    q = np.random.default_rng(seed).normal(size=model.ndof)
    F = ltdl(opalg.crba(model, q, layout="sparse"))
    ops = opalg.operators(model, q)
    assert_close(F.unit_factor(), ops.L.dense(), rtol(model, q), "U vs I + HφK")
    assert_close(F.d, np.diag(ops.D.dense()), rtol(model, q), "d vs D")


@pytest.mark.parametrize("kind", KINDS)
@pytest.mark.parametrize("seed", [0, 1])
def test_D7_multi_axis_blocks(kind, seed):
    """With multi-axis joints: D(k) = W_k diag(d_k) W_k* and I + HφK = U · blockdiag(W_k)⁻¹."""
    model = make_model(kind, 9, seed, joints="all")
    assert max(model.joint_sizes) > 1
    q = np.random.default_rng(seed).normal(size=model.ndof)
    F = ltdl(opalg.crba(model, q, layout="sparse"))
    U = F.unit_factor()
    ops = opalg.operators(model, q)
    W = np.zeros_like(U)
    D = ops.D.dense()
    for k in range(model.n):
        sl = model.dof_slice[k]
        W[sl, sl] = U[sl, sl]
        assert_close(U[sl, sl] @ np.diag(F.d[sl]) @ U[sl, sl].T, D[sl, sl], rtol(model, q), f"D({k}) = W d Wᵀ")
    assert_close(U @ np.linalg.inv(W), ops.L.dense(), rtol(model, q), "U blockdiag(W)⁻¹ vs I + HφK")


@pytest.mark.parametrize("kind", KINDS)
@pytest.mark.parametrize("joints", ["single", "all"])
def test_D7_equals_dense_cholesky_in_tree_order(kind, joints):
    """Reverse Cholesky (last dof first) of ℳ permuted base to tip: no fill-in, same U and d."""
    model = make_model(kind, 10, 3, joints=joints)
    q = np.random.default_rng(3).normal(size=model.ndof)
    F = ltdl(opalg.crba(model, q, layout="sparse"))
    p = dof_tree_order(model)
    A = opalg.crba(model, q)[np.ix_(p, p)]
    C = np.linalg.cholesky(A[::-1, ::-1])            # eliminates the last (tip) dofs first
    d = np.diag(C) ** 2
    U = (C / np.diag(C))[::-1, ::-1]                  # unit upper: A = U diag(d[::-1]) Uᵀ
    assert_close(F.unit_factor()[np.ix_(p, p)], U, rtol(model, q), "LTDL U vs dense Cholesky")
    assert_close(F.d[p], d[::-1], rtol(model, q), "LTDL d vs dense Cholesky pivots")


@pytest.mark.parametrize("kind", KINDS)
def test_D7_solve_batched(kind):
    model = make_model(kind, 10, 7, joints="all")
    rng = np.random.default_rng(7)
    N = model.ndof
    q = rng.normal(size=(3, N))
    Md = opalg.crba(model, q)
    F = ltdl(opalg.crba(model, q, layout="sparse"))
    B1, B2 = rng.normal(size=(N, 2)), rng.normal(size=(3, N, 4))
    # Two backward-stable solves differ by up to ~cond(ℳ)·eps in the forward error.
    tol = cond_tol(float(np.max(np.linalg.cond(Md))), K)
    assert_close(ltdl_solve(F, B1), np.linalg.solve(Md, np.broadcast_to(B1, (3, N, 2))), tol, "shared rhs")
    assert_close(F.solve(B2), np.linalg.solve(Md, B2), tol, "per-state rhs")
    one = ltdl(opalg.crba(model, q[0], layout="sparse"))
    x = rng.normal(size=N)
    assert_close(ltdl_solve(one, x), np.linalg.solve(Md[0], x), tol, "vector rhs")
    # and the backward error (residual) is at the rounding level whatever cond(ℳ) is
    y = F.solve(B2)
    res = np.linalg.norm(Md @ y - B2) / (np.linalg.norm(Md) * np.linalg.norm(y))
    assert res < measured(1e-14, 0.31 * EPS, "210 random models under 3 kernels")
    assert ltdl_solve(one, x).shape == (N,)


def test_D7_not_positive_definite():
    # [[1, 2], [2, 1]] on the 2-dof chain (-1, 0): stored column 1 = (ℳ11, ℳ01) = (1, 2).
    M = TreeSparse(np.array([1.0, 1.0, 2.0]), (-1, 0))
    assert np.array_equal(M.dense(), [[1.0, 2.0], [2.0, 1.0]])     # exact: stored values
    with pytest.raises(SingularConfigurationError, match="not positive definite"):
        ltdl(M)
