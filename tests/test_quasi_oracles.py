"""Independent oracles for the quasi-velocities: Pinocchio's Cholesky factor and sympy exactness.

* Pinocchio ``cholesky.decompose`` factors ℳ = U D Uᵀ with U unit upper triangular in its
  (parents-first) order: U is I + HφK (E10) and its D the articulated pivots, on 1-dof trees
  (for multi-axis joints Pinocchio's D is per dof, not per hinge block).
* sympy: on a 2-link planar arm with symbolic lengths, masses, inertias and state, J1 and J2
  hold exactly (the difference simplifies to 0).
"""

from __future__ import annotations

import numpy as np
import pinocchio as pin  # the oracle is required: a missing Pinocchio must fail, never skip
import pytest
import sympy as sp

import opalg
from opalg import quasi
from opalg.pinocchio_bridge import to_pinocchio

from helpers import assert_close, cond_tol, make_model, no_string_evaluated  # noqa: F401

#: k of K·cond(ℳ)·ε for the factor comparisons: 300 random 1-dof chains, trees and relabelled
#: trees (n 5-10) under 3 BLAS/SIMD kernels gave err ≤ 0.6 cond(ℳ)·ε (ν, D and θ̇(ν)).
K = 100


@pytest.mark.verifies("J1", "J2", route="ν, D and θ̇(ν) vs U, D of Pinocchio's cholesky.decompose")
@pytest.mark.parametrize("kind", ["chain", "tree", "relabeled"])
def test_J1_J2_pinocchio_cholesky_factor(kind):
    """ν = Uᵀθ̇ and D = Pinocchio's D (1-dof joints); tolerance K·cond(ℳ)·ε (both factor ℳ with
    backward error O(depth·ε)); was 1e-12·cond(ℳ), i.e. K = 4500.
    The sympy comparisons in this module are exact (simplify to 0)."""
    for seed in range(3):
        m = make_model(kind, 8, seed, "single")
        tw = to_pinocchio(m, gravity=False)
        rng = np.random.default_rng(seed)
        q, qd = rng.normal(size=(2, m.ndof))
        pin.crba(tw.model, tw.data, tw.q(q))
        pin.cholesky.decompose(tw.model, tw.data)
        U, Dp = tw.from_vv(np.array(tw.data.U)), tw.from_v(np.array(tw.data.D))
        tol = cond_tol(np.linalg.cond(opalg.crba(m, q)), K)
        assert_close(quasi.nu(m, q, qd), U.T @ qd, tol, f"ν vs Uᵀθ̇ {kind}/{seed}")
        D = np.concatenate([d.ravel() for d in opalg.articulated(m, q).D])
        assert_close(D, Dp, tol, f"D vs Pinocchio {kind}/{seed}")
        assert_close(quasi.qd_from_nu(m, q, U.T @ qd), qd, tol, "θ̇ = U⁻ᵀν")


@pytest.mark.verifies("J1", "J2", route="sympy: ν, D and ½νᵀDν vs the symbolic tip-first LDLᵀ of crba, exactly")
def test_J1_J2_sympy_exact_two_link_arm():
    """ν(0) = θ̇₀, ν(1) = θ̇₁ + (ℳ₀₁/ℳ₁₁)θ̇₀ (the tip-first LDLᵀ of the symbolic 2×2 ℳ) and
    ½νᵀDν = ½θ̇ᵀℳθ̇, exactly."""
    L1, L2, m1, m2, I1, I2 = sp.symbols("L1 L2 m1 m2 I1 I2", positive=True)
    arm = opalg.planar_arm([L1, L2], [m1, m2], [I1, I2])
    q = np.array(sp.symbols("q0:2"), dtype=object)
    qd = np.array(sp.symbols("v0:2"), dtype=object)
    Mq = opalg.crba(arm, q)
    v = quasi.nu(arm, q, qd)
    assert sp.simplify(v[0] - qd[0]) == 0
    assert sp.simplify(v[1] - (qd[1] + Mq[0, 1] / Mq[1, 1] * qd[0])) == 0
    D = opalg.articulated(arm, q).D
    assert sp.simplify(D[1][0, 0] - Mq[1, 1]) == 0
    assert sp.simplify(D[0][0, 0] - (Mq[0, 0] - Mq[0, 1] ** 2 / Mq[1, 1])) == 0
    ke = (v[0] ** 2 * D[0][0, 0] + v[1] ** 2 * D[1][0, 0]) / 2
    assert sp.simplify(ke - (qd @ Mq @ qd) / 2) == 0
    back = quasi.qd_from_nu(arm, q, v)
    assert all(sp.simplify(b - x) == 0 for b, x in zip(back, qd))
