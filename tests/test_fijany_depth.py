"""The critical-path counter (I5): depths counted on the traced block operations.

The traced runs are real computations (their q̈ equals opalg.aba); the depths are then
compared with the structure of the tree, computed from the parent array alone.
"""

from __future__ import annotations

import numpy as np
import pytest

import opalg
from opalg.fijany import critical_path

from fijany_models import KINDS, model
from helpers import ancestors, assert_close, tree_depth


def _run(m, algorithm, seed=0):
    q, qd, tau = np.random.default_rng(seed).normal(size=(3, m.ndof))
    cp = critical_path(m, q, qd, tau, algorithm)
    # the traced run is the algorithm itself: its q̈ must be the dynamics (tolerance: cond(ℳ)·eps)
    tol = 100 * np.linalg.cond(opalg.crba(m, q)) * np.finfo(float).eps
    assert_close(cp.qdd, opalg.aba(m, q, qd, tau), tol, f"traced {algorithm} q̈ vs aba")
    return cp


@pytest.mark.parametrize("n", [2, 3, 4, 5, 7, 8, 9, 15, 16, 17, 31, 32, 33, 48, 64])
def test_chain_depths_aba_linear_cfa_logarithmic(n):
    m = opalg.random_model(n, "chain", seed=n, joints="all")
    aba, cfa = _run(m, "aba"), _run(m, "cfa")
    assert aba.depth == 2 * n
    L = int(np.ceil(np.log2(n)))
    # y and W y − B T (2 local steps), L reductions, the base solve, L back-substitutions, q̈
    assert cfa.depth == 2 * L + 4
    assert sum(cfa.width) == cfa.ops and sum(aba.width) == aba.ops == 2 * n


def test_cfa_depth_grows_like_log_n():
    depths = {n: _run(opalg.random_model(n, "chain", seed=1), "cfa").depth for n in (2, 4, 8, 16, 32, 64)}
    steps = [depths[2 * n] - depths[n] for n in (2, 4, 8, 16, 32)]
    assert steps == [2] * 5, depths          # doubling n adds one level down and one up


@pytest.mark.parametrize("kind", KINDS)
def test_tree_depths_follow_the_depth_levels(kind):
    m = model(kind, 18, 3)
    d = tree_depth(m.parents)
    aba, cfa = _run(m, "aba", 3), _run(m, "cfa", 3)
    assert aba.depth == 2 * d
    assert cfa.depth == 2 * int(np.ceil(np.log2(d))) + 4
    widest = max(sum(6 - m.joint_sizes[k] for k in range(m.n) if len(ancestors(m.parents, k)) == lev + 1)
                 for lev in range(d))
    assert cfa.max_block == widest          # the sibling fill-in: a whole level per block


def test_critical_path_bad_input():
    m = opalg.random_model(3, "chain", seed=0)
    z = np.zeros(m.ndof)
    with pytest.raises(ValueError, match="algorithm"):
        critical_path(m, z, z, z, "rnea")
    with pytest.raises(opalg.StateError, match="one state"):
        critical_path(m, np.zeros((2, m.ndof)), z, z)
    with pytest.raises(opalg.StateError, match="qd has shape"):
        critical_path(m, z, z[:1], z)
