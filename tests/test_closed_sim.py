"""opalg.closed.simulate (docs/REFERENCE.md H6): Baumgarte stabilization, energy, failure reports.

Independent routes: the energy is ½θ̇ᵀℳθ̇ (crba) plus the potential of the mass centres from
``body_poses``; the constraint drift is measured with the pose-based error e(q) and G_cθ̇; the
closure forces λ against the dense KKT solve (``ClosedSystem.kkt``).  The run goes through
``opalg.simulate.integrate`` and returns a ``Trajectory``.
"""

from __future__ import annotations

import numpy as np
import pytest

import opalg
from opalg.closed import four_bar, random_closed_system, simulate
from opalg.closed.simulation import mechanical_energy
from opalg.errors import StateError
from opalg.simulate import Trajectory

from helpers import assert_close, cond_tol, measured

#: mechanical_energy of one rod against ½(I_cm + m(L/2)²)θ̇² + m g (L/2) sin θ, relative to T + |V|:
#: worst 4.8e-16 over 1,000 random pendulums (L, m, I_cm, θ, θ̇) under the default, Sandybridge and
#: Prescott kernels (throwaway script in /tmp, not committed); the test's two states give 0.
TOL_ENERGY = measured(1e-13, 4.8e-16, "1,000 random pendulums under 3 kernels")
#: λ and θ̈ of the tree passes against the dense KKT solve: the k of tests/test_closed.py (K_SOLVE,
#: measured there ≤ 0.6 cond(KKT) ε for θ̈ and G_cᵀλ over 155 random closed systems under 3 kernels).
K_SOLVE = 450


def kkt_cond(sys, q) -> float:
    M, G = opalg.crba(sys.model, q), sys.jacobian(q)
    m = G.shape[0]
    return float(np.linalg.cond(np.block([[M, G.T], [G, np.zeros((m, m))]])))


@pytest.mark.verifies("H6", route="simulate with and without Baumgarte terms vs the pose-based error e(q)")
def test_baumgarte_drift_decays_and_without_it_does_not():
    sys, q = four_bar()
    q0 = q + np.array([0.02, 0.0, 0.0])              # off the manifold: |e| ≈ 2e-2
    e0 = np.abs(sys.constraint_error(q0)).max()
    on = simulate(sys, q0, np.zeros(3), (0.0, 2.0), baumgarte=(10.0, 10.0))
    off = simulate(sys, q0, np.zeros(3), (0.0, 2.0), baumgarte=None)
    assert isinstance(on, Trajectory) and on.ok and off.ok and on.t_stop == off.t_stop == 2.0
    # Critically damped at α = β = 10 s⁻¹: e(t) ~ (1 + 10t) e^{−10t} e0 ≈ 4e-8 e0 at t = 2.
    assert on.position_error[-1] < 1e-5 * e0
    # Without stabilization G_cθ̈ = U only keeps ë = 0: the initial error stays.
    assert off.position_error[-1] > 0.3 * e0
    assert on.velocity_error[-1] < 1e-5 * e0


@pytest.mark.verifies("H6", route="simulate (DOP853) vs conservation of ½θ̇ᵀℳθ̇ + potential")
@pytest.mark.parametrize("which", ["four_bar", "random"])
def test_energy_is_conserved_without_damping_or_torque(which):
    if which == "four_bar":
        sys, q = four_bar()
    else:
        sys, q = random_closed_system(8, 1, 4, kinds=("revolute",), where=("across",), topology="tree")
    qd = sys.project(q, np.random.default_rng(0).normal(size=q.size))
    sim = simulate(sys, q, qd, (0.0, 0.5), baumgarte=None, rtol=1e-10, atol=1e-12)
    assert sim.ok
    E = sim.energy
    scale = np.abs(E).max() + 0.5 * np.abs(qd).max() ** 2
    # DOP853 at rtol 1e-10 over 0.5 s: the local error per step is ~1e-10 of the state
    # (measured: energy drift ~3e-12 (random tree) to 1e-9 (four-bar) relative; constraint drift ~1e-11).
    assert np.ptp(E) < 1e-7 * scale, np.ptp(E) / scale
    assert sim.position_error.max() < 1e-7


def test_energy_changes_with_torque():
    """The energy check can fail: a constant torque does work on the four-bar."""
    sys, q = four_bar()
    sim = simulate(sys, q, np.zeros(3), (0.0, 0.5), tau=np.array([3.0, 0.0, 0.0]), baumgarte=None)
    assert np.ptp(sim.energy) > 1e-2


@pytest.mark.verifies("H6", route="mechanical_energy vs the closed-form energy of a rod")
def test_mechanical_energy_pendulum():
    import opalg
    arm = opalg.planar_arm([2.0], [3.0], [0.5])       # g = (0, −9.81, 0), com at L/2
    # θ = 0: the rod lies along x (V = 0); θ̇ = 2: T = ½ (I_cm + m (L/2)²) θ̇² = ½ (0.5 + 3) 4 = 7
    assert_close(float(mechanical_energy(arm, [0.0], [2.0])), 7.0, TOL_ENERGY, "kinetic energy")
    assert_close(float(mechanical_energy(arm, [-np.pi / 2], [0.0])), -3.0 * 9.81 * 1.0, TOL_ENERGY, "potential energy")


def test_failing_run_keeps_what_it_computed():
    sys, q = four_bar()

    def tau(t, q, qd):
        if t > 0.2:
            raise RuntimeError("motor driver fault")
        return np.zeros(3)

    sim = simulate(sys, q, np.zeros(3), (0.0, 1.0), tau=tau)
    assert sim.status == "failed" and not sim.ok
    assert "motor driver fault" in sim.message and f"failed at t = {sim.t_stop:.6g}:" in sim.message
    # 1e-12: a margin on a time (the steps kept end at or before the failing call), not round-off
    assert 0.0 < sim.t[-1] == sim.t_stop <= 0.2 + 1e-12
    assert len(sim.t) == len(sim.q) == len(sim.v) == len(sim.energy) == len(sim.multipliers) > 1
    assert np.all(np.isfinite(sim.multipliers))       # tau was fine at every kept step


def test_t_eval_outside_t_span_is_refused_not_reported_as_success():
    """Bad run: t_eval = [5, 6] over t_span (0, 0.2) reported success with no samples; now a
    StateError naming t_eval, before any work."""
    sys, q = four_bar()
    with pytest.raises(StateError, match=r"t_eval must lie within t_span = \(0, 0.2\)"):
        simulate(sys, q, np.zeros(3), t_span=(0, .2), t_eval=[5., 6.])


@pytest.mark.verifies("H6", route="simulate's multipliers vs the dense KKT solve at its samples")
def test_multipliers_are_the_closure_forces_at_the_samples():
    """The extra ``multipliers`` is λ of the run's dynamics at each sample: without Baumgarte terms
    it is the KKT multiplier of [[ℳ, G_c*], [G_c, 0]] (compared as G_c*λ, which dependent rows
    leave unique)."""
    sys, q = four_bar()
    qd = sys.project(q, np.array([2.0, 0.0, 0.0]))
    tau = np.array([1.0, 0.0, 0.0])
    sim = simulate(sys, q, qd, (0.0, 0.3), tau=tau, baumgarte=None, t_eval=np.linspace(0.0, 0.3, 4))
    assert sim.ok and sim.multipliers.shape == (4, sys.m)
    for qi, vi, lam in zip(sim.q, sim.v, sim.multipliers):
        G = sys.jacobian(qi)
        lam_k = sys.kkt(qi, vi, tau)[1]
        assert_close(G.T @ lam, G.T @ lam_k, cond_tol(kkt_cond(sys, qi), K_SOLVE, "KKT"), "G_cᵀλ: run vs KKT")


def test_old_keyword_qd0_still_runs_with_a_deprecation_warning():
    sys, q = four_bar()
    new = simulate(sys, q, np.zeros(3), (0.0, 0.1))
    with pytest.warns(DeprecationWarning, match="qd0 is now v0"):
        old = simulate(sys, q, qd0=np.zeros(3), t_span=(0.0, 0.1))
    # exact: the same call on the same numbers
    assert np.array_equal(old.t, new.t) and np.array_equal(old.v, new.v)
    with pytest.raises(StateError, match="not both"), pytest.warns(DeprecationWarning):
        simulate(sys, q, np.zeros(3), (0.0, 0.1), qd0=np.zeros(3))


def test_t_eval_and_callable_torque():
    sys, q = four_bar()
    te = np.linspace(0.0, 0.3, 7)
    sim = simulate(sys, q, np.zeros(3), (0.0, 0.3), tau=lambda t, q, qd: np.array([np.sin(t), 0.0, 0.0]),
                   t_eval=te)
    assert np.array_equal(sim.t, te)          # exact: the samples are taken at the given times
    assert sim.q.shape == sim.v.shape == (7, 3) and sim.ok


@pytest.mark.parametrize("kw, match", [
    (dict(t_span=(1.0, 0.0)), "t1 > t0"),
    (dict(t_span=3.0), "pair"),
    (dict(method="Euler"), "method"),
    (dict(tau=np.zeros(4)), "tau"),
])
def test_simulate_rejects_bad_input(kw, match):
    sys, q = four_bar()
    args = dict(t_span=(0.0, 0.1))
    args.update(kw)
    with pytest.raises(StateError, match=match):
        simulate(sys, q, np.zeros(3), **args)


def test_old_result_class_name_is_an_alias():
    import opalg.closed
    with pytest.warns(DeprecationWarning, match="Simulation is now opalg.simulate.Trajectory"):
        assert opalg.closed.Simulation is Trajectory
