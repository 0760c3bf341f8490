"""opalg.symbolic.simulate on the integrator seam: the result type, bad runs, the old keyword names.

The physics of the runs (against opalg's ABA, the energy balance) is checked in
test_symbolic_motion.py; here, on a small two-link tree with gravity, a spring and a damper:

* the result is the one :class:`opalg.simulate.Trajectory`, with the energies as extras;
* a load that turns infinite midway ends the run "failed" with the steps computed before it
  kept (they are the motion without the load, by opalg's ABA integrated with scipy's solve_ivp,
  and still close the energy balance) and a message naming the time and the load;
* ``qd0`` and ``Q``, the previous release's names, still work with a DeprecationWarning.

Tolerances: trajectories 1e-7 (two runs at rtol = atol = 1e-10 over 1 s, as in
test_symbolic_motion.py; observed 8e-10); energy drift 1e-8 (the notebook's bound; observed 3e-11).
"""

from __future__ import annotations

import functools

import numpy as np
import pytest
import scipy.integrate
import sympy as sp

import opalg
import opalg.simulate
from opalg.errors import StateError
from opalg.symbolic import Body, Hinge, Trajectory, TreeSystem, numeric, t

#: Piecewise: 0 before t = 1, +∞ from t = 1 on (lambdify prints it as numpy's select).
INFINITE_FROM_1 = sp.Piecewise((0, t < 1), (sp.oo, True))


@functools.cache
def _arm():
    """Two links on z hinges under gravity along −y, a spring on the first hinge, a damper on the second."""
    system = TreeSystem([0, 1], [Hinge(1), Hinge(1, offset=(1, 0, 0))],
                        [Body(2.0, (0.5, 0, 0), np.diag([0.01, 0.2, 0.2])),
                         Body(1.0, (0.4, 0, 0), np.diag([0.01, 0.1, 0.1]))], gravity=(0, -9.81, 0))
    return system, {system.q[0]: (30.0, 0.2)}, {system.q[1]: 0.5}


Q0, V0 = np.array([0.3, -0.4]), np.array([0.0, 1.0])


def _aba_run(system, t_eval):
    """The unloaded arm by another route: opalg's ABA on ``to_model()`` (gravity included), the
    spring and damper torques written out, integrated by scipy's solve_ivp (not the seam)."""
    model = system.to_model()

    def rhs(_, y):
        q, v = y[:2], y[2:]
        return np.r_[v, opalg.aba(model, q, v, np.array([-30.0 * (q[0] - 0.2), -0.5 * v[1]]))]

    sol = scipy.integrate.solve_ivp(rhs, (0.0, float(t_eval[-1])), np.r_[Q0, V0], method="DOP853",
                                    rtol=1e-10, atol=1e-10, t_eval=t_eval)
    return sol.y[:2].T, sol.y[2:].T


def test_simulate_returns_the_one_trajectory_with_the_energies_as_extras():
    system, springs, dampers = _arm()
    run = system.simulate(Q0, V0, (0.0, 1.0), springs=springs, dampers=dampers, t_eval=[0.0, 0.5, 1.0])
    assert Trajectory is opalg.simulate.Trajectory and isinstance(run, Trajectory)
    assert (run.status, run.message, run.t_stop, run.event) == ("completed", "reached t = 1 (end of t_span)",
                                                                 1.0, None)
    assert run.t.tolist() == [0.0, 0.5, 1.0] and run.q.shape == run.v.shape == (3, 2)
    assert np.array_equal(run.q[0], Q0) and np.array_equal(run.v[0], V0)        # exact: y0 is copied
    assert set(run.extras) == {"kinetic", "potential", "spring", "dissipated", "applied", "energy",
                               "energy_error", "nfev"}
    assert run.dissipated[-1] > 0 and run.applied.tolist() == [0.0, 0.0, 0.0]    # no applied load: W_a ≡ 0
    E = run.kinetic + run.potential + run.spring + run.dissipated
    assert np.array_equal(run.energy, E)         # exact: the same sum (W_a = 0), in the same order
    assert run.energy_error < 1e-8 and isinstance(run.nfev, int) and run.nfev > 0


@pytest.mark.parametrize("t_eval", [None, np.linspace(0.0, 2.0, 9)], ids=["steps", "t_eval"])
def test_an_infinite_load_midway_fails_and_keeps_the_steps(t_eval):
    """Before the seam, solve_ivp rejected step after step at the infinite load and
    simulate raised RuntimeError, discarding the run."""
    system, springs, dampers = _arm()
    load = sp.Matrix([0, INFINITE_FROM_1])
    run = system.simulate(Q0, V0, (0.0, 2.0), springs=springs, dampers=dampers, tau=load, t_eval=t_eval)
    assert run.status == "failed" and not run.ok and run.event is None
    assert run.message.startswith(f"failed at t = {run.t_stop:.6g}: ")
    assert "the equations of motion raised StateError: the applied load is not finite (inf on H2_1)" in run.message
    t_bad = float(run.message.rsplit("(at t = ", 1)[1].rstrip(")"))     # the call that saw the load
    assert run.t_stop < 1.0 <= t_bad
    # the steps (or samples) before the load are kept: at least half a second of motion
    assert len(run.t) > 2 and run.t[-1] <= run.t_stop and run.t[-1] > 0.5
    if t_eval is not None:
        assert np.array_equal(run.t, t_eval[t_eval <= run.t_stop])        # exact: the samples reached
    # ... and they are the unloaded motion (the load is zero before t = 1), closing the balance
    q_ref, v_ref = _aba_run(system, run.t)
    assert np.abs(run.q - q_ref).max() < 1e-7 and np.abs(run.v - v_ref).max() < 1e-7
    assert run.energy_error < 1e-8 and len(run.energy) == len(run.t)


def test_an_infinite_load_at_t0_is_refused_before_any_step():
    system, _, _ = _arm()
    with pytest.raises(StateError, match=r"integrate: the equations of motion raised StateError: the applied "
                                         r"load is not finite \(inf on H1_1\) \(at t = 1\)"):
        system.simulate(Q0, V0, (1.0, 2.0), tau=sp.Matrix([INFINITE_FROM_1, 0]))


def test_a_failed_run_before_the_first_sample_has_no_samples():
    """t_eval starting after the failure: nothing to keep, and the drift is NaN (nothing measured)."""
    system, _, _ = _arm()
    run = system.simulate(Q0, V0, (0.0, 2.0), tau=sp.Matrix([0, INFINITE_FROM_1]), t_eval=[1.5, 2.0])
    assert run.status == "failed" and run.t.shape == (0,) and run.q.shape == run.v.shape == (0, 2)
    assert run.kinetic.shape == run.energy.shape == (0,) and np.isnan(run.energy_error)


def test_a_prescribed_root_run_has_no_energy_balance():
    from opalg.symbolic import RootMotion
    system = TreeSystem([0], [Hinge(1)], [Body(1.0, (1, 0, 0), np.diag([0.1, 0.1, 0.1]))],
                        base=RootMotion(angles=(0.5 * t, 0, 0)))
    run = system.simulate([0.1], [0.0], (0.0, 0.5))
    assert run.status == "completed" and not {"energy", "energy_error"} & set(run.extras)
    assert {"kinetic", "potential", "spring", "dissipated", "applied", "nfev"} <= set(run.extras)


@pytest.mark.parametrize("call", ["TreeSystem.simulate", "opalg.symbolic.simulate"])
def test_old_keyword_names_still_work_with_a_deprecation_warning(call):
    system, springs, dampers = _arm()
    sim = system.simulate if call == "TreeSystem.simulate" else functools.partial(numeric.simulate, system)
    load = sp.Matrix([0.5 * sp.sin(t), 0])
    new = sim(Q0, V0, (0.0, 0.5), springs=springs, dampers=dampers, tau=load)
    with pytest.warns(DeprecationWarning) as rec:
        old = sim(Q0, qd0=V0, t_span=(0.0, 0.5), springs=springs, dampers=dampers, Q=load)
    assert sorted(str(w.message) for w in rec) == [
        f"{call}: the keyword {a} is now {b} ({a} is accepted until the next release)"
        for a, b in (("Q", "tau"), ("qd0", "v0"))]
    # exact: the same computation under either name
    assert np.array_equal(old.t, new.t) and np.array_equal(old.q, new.q) and np.array_equal(old.v, new.v)
    assert np.array_equal(old.applied, new.applied) and old.applied[-1] != 0
    # the old positional order is the new one (qd0 → v0 and Q → tau kept their places)
    pos = sim(Q0, V0, (0.0, 0.5), springs, dampers, None, None, load)
    assert np.array_equal(pos.q, new.q)


@pytest.mark.parametrize("kwargs, error, match", [
    (dict(v0=V0, qd0=V0, t_span=(0, 1)), StateError, "give v0 or its old name qd0, not both"),
    (dict(v0=V0, t_span=(0, 1), tau=sp.zeros(2, 1), Q=sp.zeros(2, 1)), StateError, "give tau or its old name Q"),
    (dict(v0=V0, t_span=(0, 1), dt=0.1), TypeError, r"unexpected keyword arguments \['dt'\]"),
    (dict(t_span=(0, 1)), TypeError, "missing required argument 'v0'"),
    (dict(v0=V0), TypeError, "missing required argument 't_span'"),
])
def test_argument_mistakes_are_named(kwargs, error, match):
    """Refused before anything is renamed or computed (no DeprecationWarning for a refused call)."""
    system, _, _ = _arm()
    with pytest.raises(error, match=match):
        system.simulate(Q0, **kwargs)
