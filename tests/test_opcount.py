"""The operation counter (opalg.opcount) against operation counts derived by hand.

* the body-frame CRBA against notebook 06's count 432(n − r) + 42n + 42Σdepth (1-dof joints);
* the common-frame CRBA (D8) against 6·(N + Σdepth) for the entries plus its per-body
  constant, listed term by term below from the algorithm (not read off the counter);
* the ABA (E9) and ℳ⁻¹ (E8) against their counts derived term by term from
  opalg.algorithms.riccati and opalg.algorithms.aba (and compared with notebook 06's table), for 1-dof
  and for multi-axis joints.
"""

from __future__ import annotations

import numpy as np
import pytest

import opalg
from opalg import _backend as bk
from opalg import opcount

from helpers import ancestors, make_model


def depth_sum(parents) -> int:
    return sum(len(ancestors(parents, k)) - 1 for k in range(len(parents)))


def counted(fn):
    with opcount.counting() as c:
        fn()
    return c


def cases(kinds, sizes):
    """(kind, n) pairs; a forest needs two bodies, so the one-body forest is not drawn."""
    return [(k, n) for n in sizes for k in kinds if not (k == "forest" and n < 2)]


@pytest.mark.parametrize("kind, n", cases(["chain", "tree", "forest", "relabeled"], [1, 4, 9]))
def test_body_frame_crba_matches_notebook_06(kind, n):
    model = make_model(kind, n, 3, joints="single")
    r = sum(p == -1 for p in model.parents)
    c = counted(lambda: opalg.crba(model, np.zeros(n), frame="body"))
    assert c.total == 432 * (n - r) + 42 * n + 42 * depth_sum(model.parents)


# Per body of the common-frame route (1-dof joints), from the code of crba_world:
#   [A, p]_k = [A, p]_℘ [[Eᵀ, r], [0, 1]]: a (3×4)(4×4) product, 48 (non-roots only);
#   c⁰ = p + Eᵀc: 9;  h⁰ = m c⁰: 3;  Eᵀ(J_c E): 27 + 27;  m c⁰c⁰ᵀ: 9;
#   w = A s_a: 9;  v = A s_l + p × w: 9 (skipped if every s_l = 0) + 6;
#   J⁰w + h⁰ × v: 9 + 6;  m v − h⁰ × w: 3 + 6.
# (r(q) = r0 + r1 q of a 1-dof joint and E(q) are part of forming ᵏX_℘, not counted.)
PER_BODY = 9 + 3 + 27 + 27 + 9 + 9 + 6 + 9 + 6 + 3 + 6
PER_LINEAR_AXIS = 9
PER_NON_ROOT = 48


@pytest.mark.parametrize("kind", ["chain", "tree", "forest", "jain-tree"])
@pytest.mark.parametrize("n", [2, 5, 12])
def test_common_frame_crba_is_six_per_entry(kind, n):
    model = make_model(kind, n, 1, joints="single")
    r = sum(p == -1 for p in model.parents)
    nnz_lower = n + depth_sum(model.parents)
    linear = PER_LINEAR_AXIS * n if any(j.kinds != ("R",) for j in model.joints) else 0
    c = counted(lambda: opalg.crba(model, np.ones(n), layout="sparse"))
    assert c.by_kind["world-entries"] == 6 * nnz_lower        # one 6-vector dot per stored entry
    assert c.total == 6 * nnz_lower + PER_BODY * n + linear + PER_NON_ROOT * (n - r)
    c = counted(lambda: opalg.crba(model, np.ones(n)))        # dense: one (N×6)(6×N) product
    assert c.total == 6 * n * n + PER_BODY * n + linear + PER_NON_ROOT * (n - r)


def test_counts_are_per_state_and_nest():
    model = opalg.random_model(6, "tree", seed=2, joints="single")
    one = counted(lambda: opalg.crba(model, np.zeros(6), frame="body")).total
    with opcount.counting() as outer:
        with opcount.counting() as inner:
            opalg.crba(model, np.zeros((5, 6)), frame="body")
        opalg.mass_matrix_diag(model, np.zeros(6))
    assert inner.total == one
    # mass_matrix_diag: 432 per non-root (composite inertias) + 36 (R S) + 6 (Sᵀ R S) per body
    assert outer.total == one + 432 * 5 + 42 * 6
    bk.mm(np.ones((6, 6)), np.ones((6, 6)))   # outside any context: a closed counter stays put
    assert inner.total == one and outer.total == one + 432 * 5 + 42 * 6


@pytest.mark.parametrize("kind", ["chain", "tree", "forest"])
@pytest.mark.parametrize("n", [2, 6, 11])
def test_bias_matches_notebook_06(kind, n):
    """Notebook 06's bias count 228n − 72r, plus the 6n of H*q̈ that opalg's bias performs
    with q̈ = 0 (it is the RNEA with zero accelerations), which the notebook leaves out."""
    model = make_model(kind, n, 5, joints="single")
    r = sum(p == -1 for p in model.parents)
    q = np.random.default_rng(5).normal(size=(2, n))
    c = counted(lambda: opalg.bias(model, q[0], q[1]))
    assert c.total == 228 * n - 72 * r + 6 * n
    assert c.by_kind["cross"] == 36 * n      # crm(V) H*q̇ and crf(V) M V, 18 each
    assert counted(lambda: opalg.rnea(model, q[0], q[1], q[0])).total == c.total


def test_counts_do_not_depend_on_the_batch_size():
    """Batches larger than the recursions' passes (kinematics.CHUNK, crba_world.SUBCHUNK)
    still count what one state costs."""
    model = opalg.random_model(5, "tree", seed=4, joints="single")
    for frame in ("world", "body"):
        one = counted(lambda: opalg.crba(model, np.zeros(5), frame=frame)).total
        many = counted(lambda: opalg.crba(model, np.zeros((1500, 5)), frame=frame)).total
        assert many == one


# The ABA, term by term from the code (opalg.model.kinematics, opalg.algorithms.riccati, opalg.algorithms.aba),
# per body k with n_k axes; a division counts one, as in notebook 06.
#   kinematics (velocity terms): V = X V_℘ (36; root: X a₀, 36) + S q̇ (6 n_k),
#     a = V × S q̇ (18) + c_J (18 per pair of axes), b = V ×* (M V) (18 + 36):   108 + 6n_k + 18·C(n_k, 2);
#     a multi-axis S(q) is formed column by column, S_i = (X_m…X_{i+1}) s_i: 36(n_k − 1).
#   Riccati, per axis: u = P s (36), d = sᵀu (6), the outer product u uᵀ (36) and its
#     36 divisions by d (the symmetric downdate; notebook 06 forms G = U D⁻¹ instead);
#     per non-root: Xᵀ P⁺ X (216 + 216).                                            114 n_k + 432
#   inward: P a (36); per axis ε = T − sᵀz (6), ε/d (1), z⁺ = z + u·ε/d (6);
#     per non-root: φ z⁺ into the parent (36).                                      36 + 13 n_k, + 36
#   outward: α⁺ = X α_℘ (36, non-roots; zero at a root, whose pivot step still runs);
#     per axis θ̈ = (ε − uᵀα⁺)/d (6 + 1), α += s θ̈ (6).                             13 n_k, + 36
# Per body 108 + 36, per axis 6 + 114 + 13 + 13, per non-root 432 + 36 + 36 (the ", + 36" terms).
ABA_PER_BODY, ABA_PER_AXIS, ABA_PER_NON_ROOT = 108 + 36, 6 + 114 + 13 + 13, 432 + 36 + 36


def aba_count(sizes, n_roots: int) -> int:
    """Multiply-adds (and divisions) of opalg.aba for joints of ``sizes`` axes (derived above)."""
    n = len(sizes)
    per_body = sum(ABA_PER_BODY + ABA_PER_AXIS * nk + 18 * nk * (nk - 1) // 2 + 36 * (nk - 1) for nk in sizes)
    return per_body + ABA_PER_NON_ROOT * (n - n_roots)


def minv_count(sizes, n_roots: int) -> int:
    """opalg.minv: the Riccati recursion (114 per axis, 432 per non-root, the S(q) columns),
    then the passes with a = b = 0 on N right-hand sides at once: per axis 13 + 13 per column,
    per non-root φ z⁺ and X α (36 + 36) per column; no velocity terms."""
    n, N = len(sizes), sum(sizes)
    riccati = 114 * N + 432 * (n - n_roots) + sum(36 * (nk - 1) for nk in sizes)
    return riccati + N * (26 * N + 72 * (n - n_roots))


def test_aba_count_formula_for_one_dof_joints():
    """For 1-dof joints the derivation above is 794n − 504r, against notebook 06's 764n − 510r:
    +29 per body in the Riccati step (u uᵀ 36 and 36 divisions, where the notebook has
    D⁻¹ 1, G = U D⁻¹ 6 and G Uᵀ 36), +1 per body in the outward pass (θ̈ divides by d, where
    the notebook reuses ν = D⁻¹ε from the inward pass), +6 per root (uᵀα⁺ on the root's zero α⁺)."""
    assert all(aba_count([1] * n, r) == 794 * n - 504 * r for n in range(1, 65) for r in range(1, n + 1))
    assert all(794 * n - 504 * r - (764 * n - 510 * r) == 30 * n + 6 * r for n in (1, 9) for r in (1, 2))


@pytest.mark.parametrize("joints", ["revolute", "single"])
@pytest.mark.parametrize("kind, n", cases(["chain", "tree", "forest", "relabeled"], [1, 2, 3, 7, 14, 33, 64]))
def test_aba_and_minv_counts_one_dof(kind, n, joints):
    model = make_model(kind, n, 40 + n, joints=joints)
    r = sum(p == -1 for p in model.parents)
    q, qd, tau = np.random.default_rng(n).normal(size=(3, n))
    c = counted(lambda: opalg.aba(model, q, qd, tau))
    assert c.total == 794 * n - 504 * r
    assert c.by_kind["div"] == 38 * n          # 36 (downdate) + 1 (inward) + 1 (outward) per axis
    assert c.by_kind["cross"] == 36 * n        # a and b of the velocity terms
    assert counted(lambda: opalg.minv(model, q)).total == minv_count([1] * n, r)


@pytest.mark.parametrize("kind, n", cases(["chain", "tree", "forest"], [1, 4, 12]))
def test_aba_and_minv_counts_multi_axis(kind, n):
    """joints="all": multi-axis joints (up to 3 axes), prismatic and helical ones."""
    model = make_model(kind, n, 70 + n, joints="all")
    sizes, r = list(model.joint_sizes), sum(p == -1 for p in model.parents)
    assert max(sizes) > 1 or n == 1      # the formula's multi-axis terms are exercised
    q, qd, tau = np.random.default_rng(n).normal(size=(3, model.ndof))
    assert counted(lambda: opalg.aba(model, q, qd, tau)).total == aba_count(sizes, r)
    assert counted(lambda: opalg.minv(model, q)).total == minv_count(sizes, r)


def test_aba_and_minv_counts_do_not_depend_on_the_batch_size():
    """One state, a batch, and a batch larger than kinematics.CHUNK count the same (per state)."""
    model = opalg.random_model(6, "tree", seed=8, joints="all")
    rng = np.random.default_rng(8)
    counts = {}
    for shape in [(), (3,), (1500,)]:
        q, qd, tau = rng.normal(size=(3,) + shape + (model.ndof,))
        counts[shape] = (counted(lambda: opalg.aba(model, q, qd, tau)).total,
                         counted(lambda: opalg.minv(model, q)).total)
    assert counts[()] == counts[(3,)] == counts[(1500,)]
    assert counts[()][0] == aba_count(list(model.joint_sizes), 1)
