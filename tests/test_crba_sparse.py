"""The structure of ℳ: tree-sparse crba (D5), diag ℳ in O(n) (D6), the common-frame CRBA (D8).

Independent routes: ℳ = HφMφ*H* with φ a *dense inverse* of I − ℰφ (helpers.dense_soa),
the body-frame sweep (frame="body") and the textbook per-(body, ancestor) loop; the nonzero
pattern and its count from the parent array alone (helpers.ancestors), never from opalg's
dof tree.
"""

from __future__ import annotations

import numpy as np
import pytest

import opalg
from opalg import OpalgError, TreeSparse

from helpers import ancestors, assert_close, dense_soa, make_model, measured

KINDS = ["chain", "tree", "forest", "relabeled", "jain-chain", "jain-tree"]
# Forward evaluations of the same sums in different orders and frames, n <= 12 bodies (no
# solve; φ's dense inverse of the unit triangular I − ℰφ is exact up to its products).  Measured
# (issue 31) over 210 random models (the six KINDS, n = 10, every joint kind, 2 states each) and
# 35 trees with complex entries and with a massless body, under 3 BLAS/SIMD kernels: worst
# 2.0e-15 for ℳ, 1.7e-15 for the diagonal blocks, 4.9e-15 for the TreeSparse products.
RTOL = measured(1e-13, 4.9e-15, "210 random models and 70 trees under 3 kernels")


def nnz_from_parents(model) -> int:
    """Σ n_k² + 2 Σ n_k · (dofs of the strict ancestors of k), from the parent array."""
    sizes = model.joint_sizes
    return sum(sizes[k] ** 2 + 2 * sizes[k] * sum(sizes[a] for a in ancestors(model.parents, k)[1:])
               for k in range(model.n))


def mass_dense_route(model, q):
    """ℳ state by state from the dense SOA operators (φ by a dense inverse)."""
    q = np.asarray(q)
    out = np.empty(q.shape[:-1] + (model.ndof,) * 2)
    for idx in np.ndindex(*q.shape[:-1]):
        out[idx] = dense_soa(model, q[idx]).mass
    return out


@pytest.mark.verifies("D5", route="nnz and pattern of the sparse crba vs the parent array and HφMφ*H*")
@pytest.mark.parametrize("kind", KINDS)
@pytest.mark.parametrize("joints", ["single", "all"])
@pytest.mark.parametrize("seed", [0, 1])
def test_D5_nnz_and_pattern(kind, joints, seed):
    model = make_model(kind, 11, seed, joints=joints)
    q = np.random.default_rng(seed).normal(size=model.ndof)
    Ms = opalg.crba(model, q, layout="sparse")
    assert Ms.nnz == nnz_from_parents(model)
    if joints == "single":   # 1-dof joints: N + 2 Σ depth
        assert Ms.nnz == model.n + 2 * sum(len(ancestors(model.parents, k)) - 1 for k in range(model.n))
    # At a random q every entry on a path is nonzero and every other entry is 0.  The dense
    # route leaves ~1e-19 rounding where blocks cancel exactly, so "nonzero" is measured in units
    # of sqrt(ℳ_ii ℳ_jj) (|ℳ_ij| <= that): true entries at a random q are O(1) of it.  Not a
    # round-off tolerance but a classifier: over 420 random models under 3 kernels the pattern's
    # entries were >= 4.3e-6 of that unit and the rest <= 2.4e-15, so 1e-10 is 4e4 from both.
    ref = mass_dense_route(model, q)
    scale = np.sqrt(np.outer(np.diag(ref), np.diag(ref)))
    nonzero = np.abs(ref) > 1e-10 * scale
    assert Ms.nnz == int(np.count_nonzero(nonzero))
    assert np.array_equal(Ms.dense() != 0, nonzero)


@pytest.mark.verifies("D8", route="crba common frame, body frame and sparse layout vs HφMφ*H* (dense φ)")
@pytest.mark.parametrize("kind", KINDS)
@pytest.mark.parametrize("seed", [0, 1, 2])
@pytest.mark.parametrize("batch", [(), (3,), (2, 2)], ids=["single", "B3", "B2x2"])
def test_D8_sparse_and_world_frame_equal_dense_route(kind, seed, batch):
    model = make_model(kind, 10, seed, joints="all")
    q = np.random.default_rng(seed).normal(size=batch + (model.ndof,))
    ref = mass_dense_route(model, q)
    world, body = opalg.crba(model, q), opalg.crba(model, q, frame="body")
    Ms = opalg.crba(model, q, layout="sparse")
    assert Ms.shape == world.shape == batch + (model.ndof,) * 2
    assert_close(world, ref, RTOL, "common-frame crba vs HφMφ*H*")
    assert_close(body, ref, RTOL, "body-frame crba vs HφMφ*H*")
    assert_close(Ms.dense(), ref, RTOL, "sparse crba vs HφMφ*H*")
    assert_close(opalg.crba(model, q, layout="sparse", frame="body").dense(), ref, RTOL, "sparse body frame")
    assert_close(Ms.diagonal(), np.diagonal(ref, axis1=-2, axis2=-1), RTOL, "TreeSparse.diagonal")


@pytest.mark.verifies("D8", route="64-link chain: crba in both frames vs the body-frame route in long double")
def test_D8_long_chain_against_extended_precision():
    """The common frame has lever arms of the whole chain's length: its rounding grows with
    (extent / link)², here up to ~64² eps = 9e-13; measured against the body-frame route in long
    double over 40 random 64-link chains under 3 kernels: worst 5.4e-15 (body frame 1.6e-15),
    the ratio of the two at most 5.7 (the 100 below: 18x)."""
    model = opalg.random_model(64, "chain", seed=3, joints="all")
    q = np.random.default_rng(3).normal(size=(2, model.ndof))
    ref = np.asarray(opalg.crba(model, q.astype(np.longdouble), frame="body"), dtype=float)
    if np.finfo(np.longdouble).eps > 1e-18:
        pytest.skip("np.longdouble is not extended here")
    tol = measured(1e-12, 5.4e-15, "40 random 64-link chains under 3 kernels")
    e_world = assert_close(opalg.crba(model, q), ref, tol, "64-link chain, common frame")
    e_body = assert_close(opalg.crba(model, q, frame="body"), ref, tol, "64-link chain, body frame")
    assert e_world < 100 * max(e_body, 1e-16)    # 1e-16 (~ε/2): a floor for an e_body of 0


def test_complex_step_entries():
    """Complex q (the complex-step tests): both frames agree, and d/dq by complex step matches
    a central difference of the real matrix."""
    model = opalg.random_model(8, "tree", seed=5, joints="all")
    rng = np.random.default_rng(5)
    q, dq = rng.normal(size=(2, model.ndof))
    h = 1e-20
    Mc = opalg.crba(model, q + 1j * h * dq)
    assert_close(Mc, opalg.crba(model, q + 1j * h * dq, frame="body"), RTOL, "complex crba, world vs body")
    d_cs = Mc.imag / h
    eps = 1e-6
    d_fd = (opalg.crba(model, q + eps * dq) - opalg.crba(model, q - eps * dq)) / (2 * eps)
    # not round-off: the central difference's truncation (~eps²) and rounding (~ε/eps ~ 1e-10)
    assert_close(d_cs, d_fd, 1e-7, "dℳ/dq by complex step vs central difference (error ~eps²·ℳ''')")


@pytest.mark.parametrize("kind", ["chain", "relabeled", "forest"])
def test_tree_sparse_products(kind):
    model = make_model(kind, 9, 4, joints="all")
    rng = np.random.default_rng(4)
    N = model.ndof
    q = rng.normal(size=(3, N))
    Ms, Md = opalg.crba(model, q, layout="sparse"), mass_dense_route(model, q)
    x, X, XB = rng.normal(size=N), rng.normal(size=(N, 2)), rng.normal(size=(3, N, 4))
    assert_close(Ms @ x, Md @ x, RTOL, "batched matvec")
    assert_close(Ms @ X, Md @ X, RTOL, "batched matmat, shared right-hand sides")
    assert_close(Ms @ XB, Md @ XB, RTOL, "batched matmat, per-state right-hand sides")
    one = opalg.crba(model, q[0], layout="sparse")
    assert_close(one @ XB, Md[0] @ XB, RTOL, "one matrix, a batch of right-hand sides")
    assert (Ms @ x).shape == (3, N) and (one @ x).shape == (N,)


@pytest.mark.verifies("D6", route="mass_matrix_diag vs the diagonal blocks of HφMφ*H* (dense φ)")
@pytest.mark.parametrize("kind", KINDS)
@pytest.mark.parametrize("batch", [(), (4,)], ids=["single", "B4"])
def test_D6_mass_matrix_diag(kind, batch):
    model = make_model(kind, 11, 2, joints="all")
    q = np.random.default_rng(2).normal(size=batch + (model.ndof,))
    ref = mass_dense_route(model, q)
    blocks = opalg.mass_matrix_diag(model, q)
    assert len(blocks) == model.n
    for k, blk in enumerate(blocks):
        sl = model.dof_slice[k]
        assert blk.shape == batch + (model.joint_sizes[k],) * 2
        assert_close(blk, ref[..., sl, sl], RTOL, f"ℳ({k},{k}) in O(n)")


def test_symbolic_entries_keep_the_pairs_path():
    sp = pytest.importorskip("sympy")
    arm = opalg.planar_arm([1.0, 0.7], [2.0, 1.0], [0.1, 0.1])
    q = np.array(sp.symbols("q0 q1"), dtype=object)
    M = opalg.crba(arm, q)
    Ms = opalg.crba(arm, q, layout="sparse")
    assert M.dtype == object and Ms.values.dtype == object
    diff = Ms.dense() - M
    assert all(sp.simplify(v) == 0 for v in diff.ravel())      # exact (sympy)
    num = np.array([0.3, -1.2])      # at a point: to RTOL (measured 4.1e-16 over 200 points)
    sub = np.array([[float(v.subs({q[0]: num[0], q[1]: num[1]})) for v in row] for row in M])
    assert_close(sub, mass_dense_route(arm, num), RTOL, "sympy crba at a point vs dense route")


def test_bad_input():
    model = opalg.random_model(3, "chain", seed=0)
    q = np.zeros(model.ndof)
    with pytest.raises(OpalgError, match="layout"):
        opalg.crba(model, q, layout="csr")
    with pytest.raises(OpalgError, match="frame"):
        opalg.crba(model, q, frame="inertial")
    Ms = opalg.crba(model, q, layout="sparse")
    with pytest.raises(OpalgError, match=r"expected \(\.\.\., 6\)"):
        TreeSparse(np.zeros(5), (-1, 0, 1))
    with pytest.raises(OpalgError, match="x has shape"):
        Ms @ np.zeros(model.ndof + 1)
    with pytest.raises(OpalgError, match="cycle"):
        TreeSparse(np.zeros(4), (1, 0))


def test_D8_massless_body():
    """A massless body (allowed when its subtree moves mass): no mass centre to divide by."""
    base = opalg.random_model(5, "tree", seed=2, joints="all")
    assert base.parents[2] == 1
    inertias = list(base.inertias)
    inertias[1] = (0.0, np.zeros(3), np.zeros((3, 3)))
    model = opalg.Model(base.parents, base.joints, base.placements, inertias, allow_massless=True)
    q = np.random.default_rng(0).normal(size=(3, model.ndof))
    assert_close(opalg.crba(model, q), mass_dense_route(model, q), RTOL, "crba with a massless body")


def test_D8_large_batches_cross_the_passes():
    """1500 states: two passes of kinematics.CHUNK, several of crba_world.SUBCHUNK, a partial last one."""
    model = opalg.random_model(6, "tree", seed=8, joints="all")
    q = np.random.default_rng(8).normal(size=(1500, model.ndof))
    M = opalg.crba(model, q)
    assert_close(M, opalg.crba(model, q, frame="body"), RTOL, "batched world vs body frame")
    Ms = opalg.crba(model, q, layout="sparse")
    for i in (0, 255, 256, 1023, 1024, 1499):
        assert_close(M[i], mass_dense_route(model, q[i]), RTOL, f"state {i} vs dense route")
        assert_close(Ms.values[i], opalg.crba(model, q[i], layout="sparse").values, RTOL, f"sparse state {i}")
