"""quasi.simulate: integration in (q, ν) against an independent (q, q̇) integration with aba; its
Trajectory (v = ν, extras qd, energy, power), the failures the integrator seam reports, and the
old keyword nu0."""

from __future__ import annotations

import numpy as np
import pytest
from scipy.integrate import simpson, solve_ivp

import opalg
from opalg import quasi
from opalg.closed.simulation import mechanical_energy
from opalg.errors import StateError

from helpers import Tol, assert_close, make_model, measured, no_string_evaluated  # noqa: F401
from quasi_dense import cond_tol


@pytest.mark.verifies("J5", route="integration in (q, ν) vs DOP853 on (q, q̇) with aba")
@pytest.mark.parametrize("kind,joints", [("chain", "single"), ("tree", "all"), ("relabeled", "mixed")])
def test_simulation_in_nu_matches_aba_simulation(kind, joints):
    """Same trajectory as solve_ivp on (q, q̇) with opalg.aba, both DOP853 at rtol 1e-10 /
    atol 1e-12: the global errors of both are ~1e-9 over 0.4 s, so 1e-7 relative."""
    m = make_model(kind, 5, 3, joints)
    rng = np.random.default_rng(0)
    q0, qd0 = 0.5 * rng.normal(size=(2, m.ndof))
    tau = rng.normal(size=m.ndof)
    t_eval = np.linspace(0.1, 0.4, 4)
    sim = quasi.simulate(m, q0, quasi.nu(m, q0, qd0), (0.0, 0.4), tau=tau, t_eval=t_eval)
    assert sim.status == "completed" and sim.t_stop == 0.4, sim.message
    N = m.ndof
    ref = solve_ivp(lambda t, y: np.concatenate([y[N:], opalg.aba(m, y[:N], y[N:], tau)]), (0.0, 0.4),
                    np.concatenate([q0, qd0]), method="DOP853", rtol=1e-10, atol=1e-12, t_eval=t_eval)
    assert_close(sim.t, ref.t, 0, "samples")                 # exact: both are t_eval
    assert_close(sim.q, ref.y[:N].T, 1e-7, "q(t)")            # not round-off: the integrators' errors
    assert_close(sim.qd, ref.y[N:].T, 1e-7, "q̇(t)")
    # sim.qd is θ̇(ν) (J3): a round trip through the pivots, SWEEP ≤ 0.03 cond(ℳ)·ε (was 1e-12)
    assert_close(sim.v, quasi.nu(m, sim.q, sim.qd), cond_tol(m, sim.q), "ν = Lᵀq̇ along the run")


@pytest.mark.verifies("J7", "J1", route="½νᵀDν + potential along a (q, ν) run: constant, and vs ½θ̇ᵀℳθ̇ of crba")
def test_energy_is_conserved_and_matches_crba_energy():
    """τ = 0 with gravity: ½νᵀDν + potential stays constant to the integrator's tolerance
    (1e-8 relative over 0.3 s at rtol 1e-10) and equals ½θ̇ᵀℳθ̇ + potential computed from crba."""
    m = make_model("tree", 6, 1, "all")
    rng = np.random.default_rng(2)
    q0, v0 = 0.5 * rng.normal(size=(2, m.ndof))
    sim = quasi.simulate(m, q0, v0, (0.0, 0.3))
    assert sim.ok, sim.message
    assert len(sim.t) > 10
    E = sim.energy
    assert np.ptp(E) < 1e-8 * np.abs(E).max(), f"energy drift {np.ptp(E):.2e}"
    # θ̇(ν) and the pivots vs crba: SWEEP ≤ 0.2 cond(ℳ)·ε for ½νᵀDν (was 1e-12)
    assert_close(E, mechanical_energy(m, sim.q, sim.qd), cond_tol(m, sim.q), "energy via crba")
    off = quasi.simulate(m, q0, v0, (0.0, 0.1), gravity=False)
    assert np.ptp(off.energy) < 1e-8 * np.abs(off.energy).max()


#: ΔE against Simpson's rule on the power, beyond the quadrature term |S_h − S_2h|, relative to
#: max|P|·T: the integration's error at rtol 1e-10 (not round-off).
TOL_WORK = measured(2e-8, 1.1e-9, "581 runs: 100 seeds x (chain, tree, relabelled tree; n 6; single, all, "
                                  "mixed joints) x gravity off/on, random constant T, 0.3 s, 401 samples "
                                  "(19 of 600 skipped: failed or over 4 s)")


@pytest.mark.verifies("J7", route="E(t1) − E(0) of a (q, ν) run vs Simpson's rule on its power θ̇ᵀT")
@pytest.mark.parametrize("gravity", [False, True])
def test_energy_changes_by_the_work_of_the_hinge_forces(gravity):
    """dE/dt = θ̇ᵀT (J7) along a run with constant hinge forces: the energy extra (½νᵀDν, plus the
    potential with gravity) changes by the integral of the power extra.  The quadrature error of
    Simpson's rule on 401 samples is bounded by |S_h − S_2h| (Richardson: 15x its h⁴ estimate)."""
    m = make_model("tree", 6, 1, "all")
    rng = np.random.default_rng(3)
    q0, v0, tau = 0.5 * rng.normal(size=(3, m.ndof))
    t = np.linspace(0.0, 0.3, 401)
    sim = quasi.simulate(m, q0, v0, (0.0, 0.3), tau=tau, gravity=gravity, t_eval=t)
    assert sim.ok, sim.message
    # the power extra is θ̇ᵀT at each sample (exact: the same dot product per sample)
    assert_close(sim.power, [qd @ tau for qd in sim.qd], 0, "power = θ̇ᵀT")
    S_h, S_2h = simpson(sim.power, x=t), simpson(sim.power[::2], x=t[::2])
    scale = np.abs(sim.power).max() * 0.3
    assert abs(S_h) > 0.1 * scale                         # the forces do work: the check can fail
    assert_close(sim.energy[-1] - sim.energy[0], S_h, Tol(abs(S_h - S_2h) / scale + TOL_WORK,
                 f"|S_h - S_2h| (quadrature) + {TOL_WORK.why}"), "ΔE = ∫ θ̇ᵀT dt", scale=scale)


def test_a_failing_run_keeps_its_steps_and_says_when_and_why():
    m = make_model("chain", 3, 0)

    def tau(t, q, qd):
        if t > 0.05:
            raise RuntimeError("actuator fault")
        return np.zeros(m.ndof)

    sim = quasi.simulate(m, np.zeros(m.ndof), np.zeros(m.ndof), (0.0, 1.0), tau=tau)
    assert sim.status == "failed" and not sim.ok
    assert sim.message.startswith(f"failed at t = {sim.t_stop:.6g}: ") and "actuator fault" in sim.message
    # exact: a kept step ended at a time where tau ran without the fault (t <= 0.05)
    assert len(sim.t) >= 2 and sim.t[-1] == sim.t_stop <= 0.05
    assert sim.q.shape == (len(sim.t), m.ndof) and np.isfinite(sim.energy).all()
    assert np.isfinite(sim.power).all()                    # tau ran without the fault at every kept step
    late = quasi.simulate(m, np.zeros(m.ndof), np.zeros(m.ndof), (0.0, 1.0),
                          tau=lambda t, q, qd: np.zeros(m.ndof) if t < 0.02 else [1.0])
    assert late.status == "failed" and "tau(t, q, qd) at t = " in late.message and "tau has shape" in late.message
    assert late.t_stop < 0.02 + 1e-12                      # a margin on a time, not round-off
    with pytest.raises(StateError, match=r"tau\(t, q, qd\) at t = 0:"):    # nothing computed yet
        quasi.simulate(m, np.zeros(m.ndof), np.zeros(m.ndof), (0.0, 1.0), tau=lambda t, q, qd: [1.0])


def test_bad_arguments():
    m = make_model("chain", 3, 0)
    z = np.zeros(m.ndof)
    with pytest.raises(StateError, match="t_span"):
        quasi.simulate(m, z, z, (1.0, 0.0))
    with pytest.raises(StateError, match="method"):
        quasi.simulate(m, z, z, (0.0, 1.0), method="Euler")
    with pytest.raises(StateError, match="single real states"):
        quasi.simulate(m, np.zeros((2, m.ndof)), z, (0.0, 1.0))
    with pytest.raises(StateError, match="tau has shape"):
        quasi.simulate(m, z, z, (0.0, 1.0), tau=np.zeros(m.ndof + 1))
    with pytest.raises(StateError, match="required"):
        quasi.simulate(m, z, t_span=(0.0, 1.0))
    with pytest.raises(TypeError, match="unexpected keyword"):
        quasi.simulate(m, z, z, (0.0, 1.0), x0=z)


@pytest.mark.parametrize("atol", [np.nan, np.inf, 0.0, -1e-12])
def test_bad_atol_is_refused_before_any_step(atol):
    """The bad run of issue 33: atol=nan never returned.  The seam refuses it, naming atol, before
    any work: tau (called in every right-hand side) is never called."""
    m = make_model("chain", 3, 0)
    calls = []

    def tau(t, q, qd):
        calls.append(t)
        return np.zeros(m.ndof)

    with pytest.raises(StateError, match="atol"):
        quasi.simulate(m, np.zeros(m.ndof), np.zeros(m.ndof), (0.0, 1.0), tau=tau, atol=atol)
    assert calls == []


def test_nu0_is_the_old_name_of_v0():
    m = make_model("chain", 3, 0)
    rng = np.random.default_rng(5)
    q0, v0 = rng.normal(size=(2, m.ndof))
    new = quasi.simulate(m, q0, v0, (0.0, 0.1), t_eval=[0.05, 0.1])
    with pytest.warns(DeprecationWarning, match="the keyword nu0 is now v0"):
        old = quasi.simulate(m, q0, nu0=v0, t_span=(0.0, 0.1), t_eval=[0.05, 0.1])
    # exact: the same call (the value only moves to its new name)
    assert_close(np.hstack([old.q, old.v]), np.hstack([new.q, new.v]), 0, "nu0= vs v0=")
    with pytest.warns(DeprecationWarning), pytest.raises(StateError, match="not both"):
        quasi.simulate(m, q0, v0, (0.0, 0.1), nu0=v0)
    with pytest.warns(DeprecationWarning, match="QuasiSimulation is now opalg.simulate.Trajectory"):
        assert quasi.QuasiSimulation is opalg.simulate.Trajectory
