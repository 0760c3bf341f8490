"""J1–J3: quasi-velocities ν = (I + HφK)*θ̇ against the dense tip-first LDLᵀ of crba (E10)."""

from __future__ import annotations

import numpy as np
import pytest

import opalg
from opalg import quasi
from opalg.errors import StateError

from helpers import assert_close, make_model, no_string_evaluated  # noqa: F401
from quasi_dense import SWEEP, cond_tol, factor_at
from helpers import measured

#: V of the J3 pass vs body_kinematics of the pass's own θ̇ (no solve between them), per body.
TOL_V = measured(1e-13, 2.3e-15, SWEEP)

KINDS = ["chain", "tree", "relabeled", "jain-tree", "forest"]
JOINTS = ["single", "mixed", "all"]


def _state(model, seed, batch=()):
    rng = np.random.default_rng(seed)
    return rng.normal(size=batch + (model.ndof,)), rng.normal(size=batch + (model.ndof,))


@pytest.mark.verifies("J2", route="ν by the recursion vs Lᵀθ̇, L from a dense tip-first LDLᵀ of crba")
@pytest.mark.parametrize("kind", KINDS)
@pytest.mark.parametrize("joints", JOINTS)
def test_J2_nu_equals_dense_LT_qd(kind, joints):
    """ν by the recursion equals Lᵀθ̇, L the unit factor of the dense LDLᵀ of crba eliminated
    tips first; tolerance 100·cond(ℳ)·ε, the accuracy of the dense factor (quasi_dense)."""
    for seed in range(3):
        m = make_model(kind, 7, seed, joints)
        q, qd = _state(m, seed)
        L, _ = factor_at(m, q)
        assert_close(quasi.nu(m, q, qd), L.T @ qd, cond_tol(m, q), f"ν {kind}/{joints}/{seed}")


@pytest.mark.verifies("J1", "E10c", route="½νᵀDν vs ½θ̇ᵀℳθ̇ of crba; Riccati D(k) vs dense tip-first LDLᵀ pivots")
@pytest.mark.parametrize("kind", KINDS)
@pytest.mark.parametrize("joints", JOINTS)
def test_J1_kinetic_energy_is_diagonal_in_nu(kind, joints):
    """½θ̇ᵀℳθ̇ = ½νᵀDν with D the dense LDLᵀ pivots, which also equal the Riccati D(k) (E10c)."""
    for seed in range(3):
        m = make_model(kind, 7, seed, joints)
        q, qd = _state(m, 10 + seed)
        Mq = opalg.crba(m, q)
        _, Dd = factor_at(m, q)
        v = quasi.nu(m, q, qd)
        assert_close(v @ Dd @ v / 2, qd @ Mq @ qd / 2, cond_tol(m, q), "kinetic energy")
        art = opalg.articulated(m, q)
        for k, s in enumerate(m.dof_slice):
            assert_close(art.D[k], Dd[s, s], cond_tol(m, q), f"D({k})")


@pytest.mark.verifies("J3", route="θ̇ from ν vs a dense triangular solve with Lᵀ; ν(θ̇(ν)) round trip")
@pytest.mark.parametrize("kind", KINDS)
@pytest.mark.parametrize("joints", JOINTS)
def test_J3_qd_from_nu_inverts_the_dense_factor(kind, joints):
    """θ̇ = L⁻ᵀν (dense triangular solve) and the round trip θ̇ → ν → θ̇."""
    for seed in range(3):
        m = make_model(kind, 7, seed, joints)
        q, v = _state(m, 20 + seed)
        L, _ = factor_at(m, q)
        qd = quasi.qd_from_nu(m, q, v)
        assert_close(qd, np.linalg.solve(L.T, v), cond_tol(m, q), "θ̇ from ν")
        assert_close(quasi.nu(m, q, qd), v, cond_tol(m, q), "round trip")   # SWEEP: ≤ 0.03 cond(ℳ)·ε


@pytest.mark.verifies("J3", route="V = ψ*H*ν of the J3 pass vs φ*H*θ̇ of body_kinematics")
def test_J3_body_velocities_from_nu():
    """V = ψ*H*ν: the J3 recursion's velocities equal φ*H*θ̇ of body_kinematics."""
    from opalg.quasi.velocities import qd_pass
    m = make_model("tree", 8, 3, "all")
    q, v = _state(m, 5)
    kin = opalg.model.kinematics.body_kinematics(m, q)
    qd_parts, V = qd_pass(m, kin, opalg.articulated(m, q), v)
    ref = opalg.model.kinematics.body_kinematics(m, q, np.concatenate(qd_parts)).V
    for k in range(m.n):
        assert_close(V[k], ref[k], TOL_V, f"V({k})")


@pytest.mark.verifies("J2", "J3", route="batched ν and θ̇(ν) vs per-state calls")
def test_batched_matches_per_state():
    """Batches (larger than one chunk, and broadcast q against qd) equal the per-state results:
    other BLAS kernels for stacked matrices, through the pivots D(k)⁻¹ (SWEEP: ≤ 0.08 cond(ℳ)·ε;
    the tolerances were 1e-14, and 1e-11 for the round trip)."""
    m = make_model("tree", 6, 1, "all")
    q, qd = _state(m, 7, (1100,))
    v = quasi.nu(m, q, qd)
    for i in (0, 517, 1099):
        assert_close(v[i], quasi.nu(m, q[i], qd[i]), cond_tol(m, q[i]), f"state {i}")
    back = quasi.qd_from_nu(m, q, v)
    assert_close(back, qd, cond_tol(m, q), "batched round trip")
    v2 = quasi.nu(m, q[0], qd[:3].reshape(3, 1, -1))
    assert v2.shape == (3, 1, m.ndof)
    assert_close(v2[2, 0], quasi.nu(m, q[0], qd[2]), cond_tol(m, q[0]), "broadcast")


def test_bad_input_is_a_state_error():
    m = make_model("chain", 3, 0)
    with pytest.raises(StateError, match="qd has shape"):
        quasi.nu(m, np.zeros(m.ndof), np.zeros(m.ndof + 1))
    with pytest.raises(StateError, match="nu has a non-finite entry"):
        quasi.qd_from_nu(m, np.zeros(m.ndof), np.full(m.ndof, np.nan))
