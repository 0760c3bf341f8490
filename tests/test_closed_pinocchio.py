"""Closed-chain forward dynamics (docs/REFERENCE.md H5) against Pinocchio's ``constraintDynamics``.

The same random tree is built in Pinocchio axis by axis (``opalg.pinocchio_bridge.build_pinocchio``,
which maps indices and never computes dynamics); each weld closure becomes a ``CONTACT_6D`` and
each ball closure a ``CONTACT_3D`` ``RigidConstraintModel`` between the two joints (or joint 1 and
the universe, for a closure to ground) with the frames' placements.  Pinocchio's frame and sign
conventions for the constraint rows differ from opalg's, so only convention-free quantities are
compared, at closed configurations with θ̇ = 0 (where neither side's drift or stabilization term
acts): θ̈, and the joint-space constraint force (Pinocchio: ℳθ̈ + C = τ + Jᵀλ, opalg:
ℳθ̈ + C = τ − G_cᵀλ, so G_cᵀλ = −Jᵀλ_pin).

Tolerance 450·cond(KKT)·ε (≈ 1e-13·cond, cond computed in the test): both sides solve the same KKT
system with backward-stable factorizations (measured ≤ 1.0·cond(KKT)·ε over these tests at 50
further random seeds under the default, Sandybridge and Prescott kernels).  The Delassus checks
are K_DELASSUS·cond(ℳ)·ε (below).  The proximal and lcaba comparisons are bounded by Pinocchio's
iteration accuracy, stated where they are used.
"""

from __future__ import annotations

import numpy as np
import pinocchio as pin  # the oracle is required: a missing Pinocchio must fail, never skip
import pytest

import opalg
from opalg.closed import ClosedSystem, LoopClosure, RankDeficientWarning, four_bar, random_closed_system
from opalg.closed.pinocchio_check import delassus_comparison, lcaba_qdd, pinocchio_constraints

from helpers import Tol, assert_close, cond_tol, measured

#: Delassus matrices (J ℳ⁻¹ Jᵀ by Pinocchio, by Υ, by a dense solve), largest entry difference
#: relative to the largest entry: k of k·cond(ℳ)·ε, worst 0.75 over 310 random weld loops (the
#: test's two kinds, seeds 0-199) under the default, Sandybridge and Prescott kernels (throwaway
#: script in /tmp, not committed).  It was 1e-10, from one measurement.
K_DELASSUS = measured(100, 0.75, "err/(cond(ℳ)·ε), 310 random weld loops under 3 kernels")

CASES = [   # (n, n_loops, seed, kinds, where)
    (12, 2, 6, ("weld", "ball"), ("across", "ground")),
    (10, 1, 2, ("weld",), ("across",)),
    (10, 1, 5, ("ball",), ("branch",)),
    (12, 2, 4, ("ball", "weld"), ("ground", "branch")),
]


def pin_constraint_dynamics(sys, q, tau, prox):
    # pinocchio_constraints only translates the closures into Pinocchio's constraint models
    # (no dynamics); a wrong frame or joint there would show as a θ̈ mismatch below.
    pc = pinocchio_constraints(sys)
    tw, cms, cds = pc.tw, pc.models, pc.datas
    pin.initConstraintDynamics(tw.model, tw.data, cms, cds)
    a = pin.constraintDynamics(tw.model, tw.data, tw.q(q), np.zeros(tw.model.nv), tw.v(tau), cms, cds, prox)
    J = pin.getConstraintsJacobian(tw.model, tw.data, cms, cds)
    return tw.from_v(a), tw.from_v(J.T @ tw.data.lambda_c)


def kkt_cond(sys, q):
    M, G = opalg.crba(sys.model, q), sys.jacobian(q)
    m = G.shape[0]
    return np.linalg.cond(np.block([[M, G.T], [G, np.zeros((m, m))]]))


@pytest.mark.verifies("H5", route="forward vs Pinocchio constraintDynamics (CONTACT_6D / CONTACT_3D, μ = 0)")
@pytest.mark.parametrize("case", CASES, ids=[f"{'+'.join(c[3])}-{'+'.join(c[4])}" for c in CASES])
def test_forward_matches_pinocchio_constraint_dynamics(case):
    n, loops, seed, kinds, where = case
    sys, q = random_closed_system(n, loops, seed, kinds=kinds, where=where)
    tau = np.random.default_rng(seed).normal(size=q.size)
    # μ = 0 and one iteration: Pinocchio's exact (unregularized) KKT solve.
    a_pin, JTl_pin = pin_constraint_dynamics(sys, q, tau, pin.ProximalSettings(1e-14, 0.0, 1))
    qdd, lam = sys.forward(q, np.zeros(q.size), tau)
    tol = cond_tol(kkt_cond(sys, q), 450, "KKT")
    assert_close(qdd, a_pin, tol, "θ̈ vs Pinocchio constraintDynamics")
    assert_close(sys.jacobian(q).T @ lam, -JTl_pin, tol, "G_cᵀλ vs −Jᵀλ of Pinocchio")


@pytest.mark.verifies("H5", route="rank-deficient forward vs Pinocchio's proximal solve")
def test_planar_four_bar_rank_deficient_matches_pinocchio_proximal():
    """A ball (CONTACT_3D) closing a planar four-bar has a dependent row; Pinocchio's proximal
    solve (μ > 0, iterated) and opalg's least-norm solve give the same θ̈ and G_cᵀλ."""
    sys, q = four_bar(closure="revolute")
    c = sys.closures[0]
    ball = ClosedSystem(sys.model, [LoopClosure((c.body1, c.p1), (-1, c.p2), kind="ball")])
    tau = np.array([1.0, -0.5, 0.3])
    a_pin, JTl_pin = pin_constraint_dynamics(ball, q, tau, pin.ProximalSettings(1e-14, 1e-8, 200))
    with pytest.warns(RankDeficientWarning, match="rank 2"):
        qdd, lam = ball.forward(q, np.zeros(3), tau)
    # The proximal iteration converges to the least-norm solution to its accuracy 1e-14·scale;
    # cond of the in-plane KKT system is ~1e2, so 1e-10 is a loose bound.
    prox = Tol(1e-10, "Pinocchio's proximal accuracy 1e-14·scale amplified by cond(in-plane KKT) ~ 1e2")
    assert_close(qdd, a_pin, prox, "θ̈ (rank-deficient) vs Pinocchio proximal")
    assert_close(ball.jacobian(q).T @ lam, -JTl_pin, prox, "G_cᵀλ (rank-deficient) vs Pinocchio")


# -- lcaba and the Delassus matrix (opalg.closed.pinocchio_check) ---------------------------------


@pytest.mark.verifies("H5", route="forward vs Pinocchio lcaba (proximal, 100 iterations)")
@pytest.mark.parametrize("case", CASES, ids=lambda c: f"n{c[0]}-{'+'.join(c[3])}-{'+'.join(c[4])}")
def test_forward_matches_pinocchio_lcaba(case):
    """lcaba (loop constraints between two joints or to the universe) at v = 0, closed q (H5)."""
    n, loops, seed, kinds, where = case
    sys, q = random_closed_system(n, loops, seed, kinds=kinds, where=where)
    tau = np.random.default_rng(seed).normal(size=q.size)
    qdd = sys.forward(q, np.zeros_like(q), tau).qdd
    # 100 proximal iterations at μ = 1e-6 converge to ~1e-9 relative (measured ≤ 5e-9)
    assert_close(lcaba_qdd(sys, q, np.zeros_like(q), tau), qdd,
                 Tol(1e-7, "lcaba's proximal iterations converge to ~1e-9 relative (measured ≤ 5e-9)"),
                 "θ̈ vs Pinocchio lcaba")


def test_pinocchio_4_1_0_delassus_ignores_joint2_of_a_loop():
    """A fact about Pinocchio 4.1.0: computeDelassusMatrix of a two-joint CONTACT_6D is J₁ℳ⁻¹J₁ᵀ.

    Anchored (joint 2 = universe): Pinocchio = opalg's Λ_c⁻¹ (H4) = J₁ℳ⁻¹J₁ᵀ.  Two-joint loop:
    Pinocchio = J₁ℳ⁻¹J₁ᵀ (LOCAL, linear-first, from opalg's frame Jacobian and crba) ≠ Λ_c⁻¹,
    which the KKT θ̈ confirms (forward vs Pinocchio's own constraintDynamics above).  If this
    test fails on the two-joint part with a newer Pinocchio, its Delassus matrix was fixed.
    """
    assert pin.__version__ == "4.1.0", f"the Delassus fact is pinned to Pinocchio 4.1.0, found {pin.__version__}"
    sys, q = random_closed_system(6, 1, seed=1, kinds=("weld",), where=("ground",))
    d = delassus_comparison(sys, q)
    scale = np.abs(d.opalg).max()
    tol = cond_tol(np.linalg.cond(opalg.crba(sys.model, q)), K_DELASSUS)
    assert np.abs(d.pinocchio - d.opalg).max() < tol * scale
    assert np.abs(d.j1 - d.opalg).max() < tol * scale
    sys, q = random_closed_system(10, 1, seed=2, kinds=("weld",), where=("across",))
    d = delassus_comparison(sys, q)
    scale = np.abs(d.opalg).max()
    M = opalg.crba(sys.model, q)
    tol = cond_tol(np.linalg.cond(M), K_DELASSUS)
    G = sys.jacobian(q)
    P = np.roll(np.eye(6), 3, axis=1)                                  # angular-first → linear-first
    assert np.abs(P @ G @ np.linalg.solve(M, G.T) @ P.T - d.opalg).max() < tol * scale
    assert np.abs(d.pinocchio - d.j1).max() < tol * scale              # joint 2 ignored
    # not round-off: joint 2's share of the loop's Λ_c⁻¹ (fixed data; down to 1.04e-2 at other seeds)
    assert np.abs(d.pinocchio - d.opalg).max() > 1e-2 * scale         # ≠ the loop's Λ_c⁻¹
