"""J6: the Ṗ, Ṗ⁺, Ḋ, Ġ recursion against the complex-step d/dt of opalg.articulated along q + tθ̇."""

from __future__ import annotations

import numpy as np
import pytest

import opalg
from opalg import quasi
from opalg.errors import StateError

from helpers import assert_close, make_model, measured, no_string_evaluated  # noqa: F401
from quasi_dense import SWEEP, complex_step_dt, cond_tol

#: Ṡ of a multi-axis joint vs the complex step of joint_transform: products of rotations, no solve.
TOL_S_DOT = measured(1e-13, 1.1e-15, "1,200 random joints (RRR, RP, HRP, PR, RR, HHR; random axes) "
                     "under 3 BLAS/SIMD kernels")

FIELDS = [("P", "P_dot"), ("P_plus", "P_plus_dot"), ("D", "D_dot"), ("G", "G_dot")]


@pytest.mark.verifies("J6", route="Ṗ, Ṗ⁺, Ḋ, Ġ recursion vs complex-step d/dt of articulated along q + tθ̇")
@pytest.mark.parametrize("kind", ["chain", "tree", "relabeled", "jain-chain"])
@pytest.mark.parametrize("joints", ["single", "mixed", "all"])
def test_J6_rates_equal_complex_step_of_riccati(kind, joints):
    """Each rate equals Im(X(q + ihθ̇))/h with h = 1e-30 (no cancellation: the reference is as
    accurate as X itself), relative to the size of X's rate scaled by |X|·|θ̇| (a leaf has Ṗ = 0).
    The error grows with the conditioning of the pivots; max cond(D(k)) did not bound it (16
    cond(D)·ε seen at cond(D) = 1, where the old floor 1e-13 carried it), cond(ℳ) ≥ cond(D(k))
    does: SWEEP saw ≤ 0.36 cond(ℳ)·ε, so the tolerance is 100·cond(ℳ)·ε."""
    for seed in range(2):
        m = make_model(kind, 7, seed, joints)
        rng = np.random.default_rng(seed)
        q, qd = rng.normal(size=(2, m.ndof))
        r = quasi.articulated_rates(m, q, qd)
        arts = opalg.articulated(m, q + 1j * 1e-30 * qd)
        tol = cond_tol(m, q)
        for name, attr in FIELDS:
            for k in range(m.n):
                ref = np.imag(np.asarray(getattr(arts, name)[k])) / 1e-30
                scale = np.linalg.norm(getattr(r.art, name)[k]) * np.linalg.norm(qd)
                assert_close(getattr(r, attr)[k], ref, tol, f"{attr}({k}) {kind}/{joints}/{seed}",
                             scale=scale)


@pytest.mark.verifies("J6", route="Ṡ vs complex-step d/dt of joint_transform's S")
def test_J6_subspace_rate_is_complex_step_of_S():
    """Ṡ of a multi-axis joint equals d/dt S(q(t)) from joint_transform (complex step)."""
    from opalg.model.joints import Joint, joint_transform
    rng = np.random.default_rng(3)
    for kinds in (["R", "R", "R"], ["R", "P"], ["H", "R", "P"], ["P", "R"]):
        j = Joint(kinds, np.linalg.qr(rng.normal(size=(3, 3)))[0][:len(kinds)],
                  pitch=[0.3 if c == "H" else None for c in kinds])
        q, qd = rng.normal(size=(2, j.ndof))
        ref = complex_step_dt(lambda x: joint_transform(j, x)[1], q, qd)
        assert_close(j.subspace_rate(joint_transform(j, q)[1], qd), ref, TOL_S_DOT, f"Ṡ {kinds}")


@pytest.mark.verifies("J6", route="batched Ġ vs a per-state call")
def test_rates_batched_and_errors():
    m = make_model("tree", 5, 4, "all")
    rng = np.random.default_rng(0)
    q, qd = rng.normal(size=(2, 4, m.ndof))
    r = quasi.articulated_rates(m, q, qd)
    one = quasi.articulated_rates(m, q[2], qd[2])
    # stacked-matrix kernels, through D(k)⁻¹: SWEEP saw ≤ 4.7 cond(ℳ)·ε per block (8e-8 at
    # cond 8e7; the old 1e-14 held on this model only)
    for k in range(m.n):
        assert_close(r.G_dot[k][2], one.G_dot[k], cond_tol(m, q[2]), "batched Ġ")
    with pytest.raises(StateError, match="batch shapes do not broadcast"):
        quasi.articulated_rates(m, q, qd[:3])
