"""opalg.fijany.factors: I0 (Q⁻¹ = φMφ*), I1 (ℳ⁻¹ = C − B*A⁻¹B), I2 (sparsity), W and Ĥ, errors.

Independent routes: the dense inverse of φMφ* (φ = inv(I − ℰφ), helpers.dense_soa), inv(crba),
opalg.minv (innovations factorization E8), and sparsity patterns from the parent array alone.

Tolerances: k·cond·ε with the condition number computed in the test wherever an inverse or solve
enters (the k are stated below with the ratio err/(cond·ε) seen); ``PRODUCTS`` and ``ORTHO``
measured (SWEEP); 0 and structural-zero tests where both sides are the same numbers.
"""

from __future__ import annotations

import numpy as np
import pytest

import opalg
from opalg import fijany
from opalg.model.multibody import Inertia

from fijany_models import KINDS, model, rebuild
from helpers import ancestors, assert_close, cond_tol, dense_soa, measured, tree_depth

SEEDS = range(3)
#: The sweep behind the measured bounds and the err/(cond·ε) ratios quoted below.
SWEEP = ("200 random models (chain, branched, tree, relabelled, jain-chain; n 9-11, all joint kinds) "
         "under 3 BLAS/SIMD kernels")
#: A = WQW*, B = WQĤ*, C = ĤQĤ* vs the dense products: products only, no solve.
PRODUCTS = measured(1e-13, 2.4e-16, SWEEP)
#: W(k) from an SVD: W W* = I, and H W* = 0 relative to 1 (was 1e-14 for both; 1.2e-15 seen for H W*).
ORTHO = measured(1e-14, 4.7e-16, SWEEP + ", every body")
NULL = measured(2e-14, 1.2e-15, SWEEP + ", every body")


def _q(m, seed):
    return np.random.default_rng(100 + seed).normal(size=m.ndof)


@pytest.mark.verifies("I0", route="Fijany's sparse Q vs the dense inverse of φMφ* (φ = inv(I − ℰφ))")
@pytest.mark.parametrize("kind", KINDS)
@pytest.mark.parametrize("seed", SEEDS)
def test_I0_Q_is_the_inverse_of_phi_M_phi_star(kind, seed):
    m = model(kind, 9, seed)
    q = _q(m, seed)
    d = dense_soa(m, q)
    X = d.phi @ d.M @ d.phi.T
    # inverting X loses cond(X)·ε: k = 10 (SWEEP: err ≤ 0.2 cond(X)·ε)
    assert_close(fijany.factors(m, q).Q.dense(), np.linalg.inv(X), cond_tol(np.linalg.cond(X), 10, "φMφ*"),
                 "Q vs inv(φMφ*)")


@pytest.mark.verifies("I1", route="C − B*A⁻¹B (cyclic and Thomas A-solve) vs inv(crba) and vs minv (E8)")
@pytest.mark.parametrize("kind", KINDS)
@pytest.mark.parametrize("seed", SEEDS)
@pytest.mark.parametrize("method", ["cyclic", "thomas"])
def test_I1_schur_complement_is_the_mass_matrix_inverse(kind, seed, method):
    m = model(kind, 10, seed)
    q = _q(m, seed)
    Mq = opalg.crba(m, q)
    Mi = fijany.factors(m, q).mass_matrix_inv(method)
    # two inversions of matrices with cond ≈ cond(ℳ): k = 100 (SWEEP: err ≤ 2.1 cond(ℳ)·ε)
    tol = cond_tol(np.linalg.cond(Mq), 100)
    assert_close(Mi, np.linalg.inv(Mq), tol, "C − B*A⁻¹B vs inv(crba)")
    assert_close(Mi, opalg.minv(m, q), tol, "C − B*A⁻¹B vs minv")


@pytest.mark.parametrize("kind", KINDS)
def test_factor_blocks_equal_the_dense_products(kind):
    """A = WQW*, B = WQĤ*, C = ĤQĤ* as dense products; A over levels = A over bodies."""
    m = model(kind, 9, 4)
    F = fijany.factors(m, _q(m, 4))
    W, Q, Hh = F.W.dense(), F.Q.dense(), F.H_hat.dense()
    perm = np.concatenate([np.arange(6 * k - sum(m.joint_sizes[:k]), 6 * (k + 1) - sum(m.joint_sizes[:k + 1]))
                           for k in F.cf_order]).astype(int)           # label → level order rows
    assert_close(F.A.dense(), (W @ Q @ W.T)[np.ix_(perm, perm)], PRODUCTS, "A")
    # exact: the same blocks, placed per level or per body
    assert_close(F.A_bodies.dense(), F.A.dense(), 0.0, "A over levels vs bodies")
    assert_close(F.B.dense(), (W @ Q @ Hh.T)[perm], PRODUCTS, "B")
    assert_close(F.C.dense(), Hh @ Q @ Hh.T, PRODUCTS, "C")
    x = np.arange(F.A.shape[0], dtype=float)
    # exact: a permutation of integers
    assert_close(F.to_labels(x), np.argsort(perm).astype(float), 0.0, "to_labels is the inverse permutation")


def _related(parents, i, j):
    pi, pj = parents[i], parents[j]
    return i == j or pi == j or pj == i or (pi == pj and pi >= 0)


@pytest.mark.verifies("I2", route="block pattern of Q and A vs parent-child and sibling pairs of the parent array")
@pytest.mark.parametrize("kind", KINDS)
@pytest.mark.parametrize("seed", SEEDS)
def test_I2_sparsity_parent_child_and_siblings(kind, seed):
    m = model(kind, 10, seed)
    F = fijany.factors(m, _q(m, seed))
    P = m.parents
    expected = np.array([[_related(P, i, j) for j in range(m.n)] for i in range(m.n)])
    Q = F.Q.dense()
    # exact: a block outside the pattern is never computed (a structural zero), one inside is not 0
    Qpat = np.array([[np.abs(Q[6 * i:6 * i + 6, 6 * j:6 * j + 6]).max() > 0 for j in range(m.n)]
                     for i in range(m.n)])
    assert (Qpat == expected).all()
    # A over bodies (level order): the same pattern, permuted
    o = F.cf_order
    assert (F.A_bodies.pattern() == expected[np.ix_(o, o)]).all()
    # on trees the level blocks hold the siblings: A is block tridiagonal over the depth levels
    assert F.A.n == tree_depth(P)
    assert [sorted(lev) for lev in F.levels] == [sorted(k for k in range(m.n) if len(ancestors(P, k)) == d + 1)
                                                  for d in range(tree_depth(P))]


@pytest.mark.verifies("I2", route="block structure of A and the nonzero pattern of C on a chain")
def test_I2_chain_is_block_tridiagonal_with_5x5_blocks():
    m = opalg.random_model(8, "chain", seed=0, joints="revolute")
    F = fijany.factors(m, _q(m, 0))
    assert isinstance(F.A, opalg.algebra.block_ops.BlockTridiagonal)
    assert F.A.rows == (5,) * 8
    Cd = F.C.dense()
    assert np.count_nonzero(np.triu(Cd, 2)) == 0 and np.count_nonzero(np.diag(Cd, 1)) == 7   # C tridiagonal


@pytest.mark.verifies("I2", route="the level block of a star's siblings is full")
def test_sibling_fill_in_widens_the_level_blocks():
    """A star (one root, 5 children): siblings couple, so the level block is a full 25×25."""
    base = opalg.random_model(6, "chain", seed=1, joints="revolute")
    star = rebuild(base, [-1, 0, 0, 0, 0, 0])
    F = fijany.factors(star, np.zeros(6))
    assert F.A.rows == (5, 25)
    D1 = F.A.diag_blocks()[1]
    assert all(np.abs(D1[5 * i:5 * i + 5, 5 * j:5 * j + 5]).max() > 0 for i in range(5) for j in range(5))


@pytest.mark.parametrize("seed", SEEDS)
def test_W_and_H_hat_of_multi_dof_helical_prismatic_joints(seed):
    m = opalg.random_model(12, "tree", seed=seed, joints="all")
    F = fijany.factors(m, _q(m, seed))
    d = dense_soa(m, _q(m, seed))
    seen_not_orthonormal = False
    for k, (Wk, Hk) in enumerate(zip(F.W.blocks, F.H_hat.blocks)):
        S = d.H[sum(m.joint_sizes[:k]):sum(m.joint_sizes[:k + 1]), 6 * k:6 * k + 6]   # H(k)
        nk = m.joint_sizes[k]
        assert Wk.shape == (6 - nk, 6)
        assert_close(Wk @ Wk.T, np.eye(6 - nk), ORTHO, f"W({k}) W*({k})")
        assert_close(S @ Wk.T, np.zeros((nk, 6 - nk)), NULL, f"H({k}) W*({k})", scale=1.0)
        # Ĥ = (HH*)⁻¹H: a solve with HH* (SWEEP: err ≤ 2 cond(HH*)·ε, cond up to 4e4 on helical joints)
        assert_close(S @ Hk.T, np.eye(nk), cond_tol(np.linalg.cond(S @ S.T), 100, "HH*"), f"H({k}) Ĥ*({k})")
        if not np.allclose(S @ S.T, np.eye(nk)):        # not round-off: is H(k) far from orthonormal?
            seen_not_orthonormal = True
            assert not np.allclose(Hk, S), f"Ĥ({k}) should differ from H({k})"
    assert seen_not_orthonormal, "the model should have a joint with non-orthonormal H rows"


@pytest.mark.verifies("I1", route="C built from H instead of Ĥ vs inv(crba): must differ")
def test_using_H_instead_of_H_hat_breaks_I1():
    """A helical joint has a non-unit H row: C built from H (not Ĥ) is wrong."""
    m = opalg.random_model(6, "chain", seed=2, joints="all")
    q = _q(m, 2)
    F = fijany.factors(m, q)
    d = dense_soa(m, q)
    assert not np.allclose(F.H_hat.dense(), d.H)
    W, Q, H = F.W.dense(), F.Q.dense(), d.H
    A, B, C = W @ Q @ W.T, W @ Q @ H.T, H @ Q @ H.T
    wrong = C - B.T @ np.linalg.solve(A, B)
    assert not np.allclose(wrong, np.linalg.inv(opalg.crba(m, q)), rtol=1e-3)


def test_massless_body_is_refused_naming_it():
    base = opalg.random_model(5, "chain", seed=0)
    ins = list(base.inertias)
    ins[2] = Inertia(0.0, np.zeros(3), np.zeros((3, 3)))
    m = rebuild(base, base.parents, ins, allow_massless=True)
    z = np.zeros(m.ndof)
    assert np.isfinite(opalg.aba(m, z, z, z)).all()                  # the ABA copes ...
    with pytest.raises(opalg.ModelError, match=r"body 2 .*singular"):   # ... Fijany's Q does not
        fijany.factors(m, z)
    with pytest.raises(opalg.ModelError, match=r"body 2"):
        fijany.forward(m, z, z, z)


def test_bad_input():
    m = opalg.random_model(4, "chain", seed=0)
    with pytest.raises(opalg.StateError, match="q has shape"):
        fijany.factors(m, np.zeros(m.ndof + 1))
    with pytest.raises(opalg.StateError, match="non-finite"):
        fijany.factors(m, np.full(m.ndof, np.nan))
    with pytest.raises(opalg.StateError, match="real numeric"):
        fijany.factors(m, np.zeros(m.ndof) + 0j)
    with pytest.raises(opalg.StateError, match="tau has shape"):
        fijany.forward(m, np.zeros(m.ndof), np.zeros(m.ndof), np.zeros(2))
    with pytest.raises(ValueError, match="method"):
        fijany.forward(m, np.zeros(m.ndof), np.zeros(m.ndof), np.zeros(m.ndof), method="lu")
