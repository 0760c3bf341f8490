"""crba (one inward sweep of all columns, per body) against the textbook per-(body, ancestor) loop.

The reference below is the loop opalg.crba used before: every column F = R(j) H*(j) is
walked to its root one ancestor at a time.  It is kept here, verbatim, as the
straightforward implementation the batched sweep must reproduce to round-off.
"""

from __future__ import annotations

import numpy as np
import pytest

import opalg
from opalg import _backend as bk
from opalg.algorithms.crba import _crba_pairs, composite_inertias
from opalg.model.kinematics import body_kinematics

from helpers import assert_close, make_model, measured

#: crba (common frame) vs the body-frame per-pair loop: forward evaluations of the same sums in
#: other frames and orders.  Measured (issue 31) over 240 random models (the six KINDS, n = 11,
#: mixed joints, 4 states each), the 6-dof tree at 160 states and four 60-link complex chains,
#: under 3 BLAS/SIMD kernels: worst 2.3e-15 (n = 11), 4.2e-15 (60 links).
RTOL = measured(1e-13, 4.2e-15, "240 random models, the 6-dof tree and 60-link chains under 3 kernels")

pytestmark = pytest.mark.verifies("D8", route="crba (common-frame sweep) vs the body-frame per-pair loop")


def crba_reference(model, q):
    """ℳ(k,k) = H R H*, ℳ(i,j) = H(i) φ(i,j) R(j) H*(j): one pass per (body, ancestor) pair —
    the textbook loop, which opalg keeps for sympy entries (``crba._crba_pairs``) and which
    shares nothing with the per-body sweep of ``crba`` beyond the composite inertias."""
    q = bk.asarray(q)
    R, kin = composite_inertias(model, q, body_kinematics(model, q))
    return _crba_pairs(model, R, kin, q)


def six_dof_tree():
    """A small tree with a 6-dof (PPPRRR) joint, a 3-dof and a 2-dof joint and non-topological labels."""
    rng = np.random.default_rng(5)
    joints = [
        opalg.Joint("R", [0.0, 0.0, 1.0]),
        opalg.Joint(["P", "P", "P", "R", "R", "R"], np.vstack([np.eye(3), np.eye(3)])),
        opalg.Joint.spherical(),
        opalg.Joint(["R", "P"], [[1.0, 0.0, 0.0], [0.0, 1.0, 0.0]]),
        opalg.Joint("P", [0.0, 1.0, 0.0]),
    ]
    parents = [2, -1, 1, 2, 0]   # 1 is the root; labels are not in topological order
    placements = [(opalg.model.builders.random_rotation(rng), rng.uniform(-0.5, 0.5, 3)) for _ in joints]
    inertias = [opalg.model.builders.random_inertia(rng) for _ in joints]
    return opalg.Model(parents, joints, placements, inertias)


KINDS = ["chain", "tree", "forest", "relabeled", "jain-chain", "jain-tree"]


@pytest.mark.parametrize("kind", KINDS)
@pytest.mark.parametrize("seed", [0, 1, 2])
@pytest.mark.parametrize("batch", [(), (4,), (2, 3)], ids=["single", "B4", "B2x3"])
def test_crba_equals_reference(kind, seed, batch):
    model = make_model(kind, 11, seed, joints="mixed")
    q = np.random.default_rng(seed).normal(size=batch + (model.ndof,))
    M = opalg.crba(model, q)
    assert M.shape == batch + (model.ndof, model.ndof)
    assert_close(M, crba_reference(model, q), RTOL, f"crba vs reference ({kind}, seed {seed}, batch {batch})")
    # Off-diagonal blocks are written as exact transposes; the n_k x n_k diagonal blocks
    # H R H* are symmetric to round-off (as in the reference).
    assert_close(M, np.swapaxes(M, -1, -2), RTOL, "crba symmetric")


@pytest.mark.parametrize("batch", [(), (4,), (2, 3)], ids=["single", "B4", "B2x3"])
def test_crba_six_dof_joint_and_relabelled_tree(batch):
    model = six_dof_tree()
    q = np.random.default_rng(1).uniform(-1, 1, size=batch + (model.ndof,))
    assert_close(opalg.crba(model, q), crba_reference(model, q), RTOL, "crba with a 6-dof joint")


def test_crba_complex_step_and_long_chain():
    """Complex entries (the complex-step tests use them) and a chain deeper than a few bodies."""
    model = opalg.random_model(60, "chain", seed=3, joints="mixed")
    rng = np.random.default_rng(3)
    q = rng.normal(size=model.ndof) + 1e-20j * rng.normal(size=model.ndof)
    M = opalg.crba(model, q)
    assert M.dtype.kind == "c"
    assert_close(M, crba_reference(model, q), RTOL, "complex crba")


def test_crba_symbolic_path():
    """Sympy (object) entries take the per-pair loop and give the reference's expressions."""
    import sympy as sp

    model = opalg.planar_arm([1.0, sp.Symbol("L")], [1.0, 2.0], [0.1, 0.2])
    q = list(sp.symbols("q1 q2"))
    M, ref = opalg.crba(model, q), crba_reference(model, q)
    assert M.dtype == object
    assert all(sp.simplify(a - b) == 0 for a, b in zip(M.ravel(), ref.ravel()))   # exact (sympy)
