"""The operation counter (opalg.opcount) against operation counts derived by hand.

* the body-frame CRBA against notebook 06's count 432(n − r) + 42n + 42Σdepth (1-dof joints);
* the common-frame CRBA (D8) against 6·(N + Σdepth) for the entries plus its per-body
  constant, listed term by term below from the algorithm (not read off the counter).
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


@pytest.mark.parametrize("kind", ["chain", "tree", "forest", "relabeled"])
@pytest.mark.parametrize("n", [1, 4, 9])
def test_body_frame_crba_matches_notebook_06(kind, n):
    if kind == "forest" and n < 2:
        pytest.skip("a forest needs two bodies")
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
    assert opcount._ACTIVE == []
    before = counted(lambda: None).total
    bk.mm(np.ones((6, 6)), np.ones((6, 6)))   # outside any context: nothing is counted
    assert before == 0


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
