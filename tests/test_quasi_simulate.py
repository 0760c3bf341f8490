"""quasi.simulate: integration in (q, ν) against an independent (q, q̇) integration with aba."""

from __future__ import annotations

import numpy as np
import pytest
from scipy.integrate import solve_ivp

import opalg
from opalg import quasi
from opalg.closed.simulation import mechanical_energy
from opalg.errors import StateError

from helpers import assert_close, make_model, no_string_evaluated  # noqa: F401
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
    assert sim.success, sim.message
    N = m.ndof
    ref = solve_ivp(lambda t, y: np.concatenate([y[N:], opalg.aba(m, y[:N], y[N:], tau)]), (0.0, 0.4),
                    np.concatenate([q0, qd0]), method="DOP853", rtol=1e-10, atol=1e-12, t_eval=t_eval)
    assert_close(sim.t, ref.t, 0, "samples")                 # exact: both are t_eval
    assert_close(sim.q, ref.y[:N].T, 1e-7, "q(t)")            # not round-off: the integrators' errors
    assert_close(sim.qd, ref.y[N:].T, 1e-7, "q̇(t)")
    # sim.qd is θ̇(ν) (J3): a round trip through the pivots, SWEEP ≤ 0.03 cond(ℳ)·ε (was 1e-12)
    assert_close(sim.nu, quasi.nu(m, sim.q, sim.qd), cond_tol(m, sim.q), "ν = Lᵀq̇ along the run")


@pytest.mark.verifies("J7", "J1", route="½νᵀDν + potential along a (q, ν) run: constant, and vs ½θ̇ᵀℳθ̇ of crba")
def test_energy_is_conserved_and_matches_crba_energy():
    """τ = 0 with gravity: ½νᵀDν + potential stays constant to the integrator's tolerance
    (1e-8 relative over 0.3 s at rtol 1e-10) and equals ½θ̇ᵀℳθ̇ + potential computed from crba."""
    m = make_model("tree", 6, 1, "all")
    rng = np.random.default_rng(2)
    q0, v0 = 0.5 * rng.normal(size=(2, m.ndof))
    sim = quasi.simulate(m, q0, v0, (0.0, 0.3))
    assert sim.success, sim.message
    assert len(sim.t) > 10
    E = sim.energy
    assert np.ptp(E) < 1e-8 * np.abs(E).max(), f"energy drift {np.ptp(E):.2e}"
    # θ̇(ν) and the pivots vs crba: SWEEP ≤ 0.2 cond(ℳ)·ε for ½νᵀDν (was 1e-12)
    assert_close(E, mechanical_energy(m, sim.q, sim.qd), cond_tol(m, sim.q), "energy via crba")
    off = quasi.simulate(m, q0, v0, (0.0, 0.1), gravity=False)
    assert np.ptp(off.energy) < 1e-8 * np.abs(off.energy).max()


def test_a_failing_run_keeps_its_steps_and_says_when_and_why():
    m = make_model("chain", 3, 0)

    def tau(t, q, qd):
        if t > 0.05:
            raise RuntimeError("actuator fault")
        return np.zeros(m.ndof)

    sim = quasi.simulate(m, np.zeros(m.ndof), np.zeros(m.ndof), (0.0, 1.0), tau=tau)
    assert not sim.success
    assert "actuator fault" in sim.message and "stopped at t = " in sim.message
    # exact: a kept step ended at a time where tau ran without the fault (t <= 0.05)
    assert len(sim.t) >= 2 and sim.t[-1] <= 0.05
    assert sim.q.shape == (len(sim.t), m.ndof) and np.isfinite(sim.energy).all()
    late = quasi.simulate(m, np.zeros(m.ndof), np.zeros(m.ndof), (0.0, 1.0),
                          tau=lambda t, q, qd: np.zeros(m.ndof) if t < 0.02 else [1.0])
    assert not late.success and "tau(t, q, qd) at t = " in late.message and "tau has shape" in late.message
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
