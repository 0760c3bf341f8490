"""Ider's control-force model on a closed chain: two planar 3R arms carrying a box (G5, H10).

Independent routes: ClosedSystem.forward (tree passes, H5) with the motor moments as T gives
the same θ̈ and the grasp reactions (λ = −v_G); the path rows are checked by finite
differences of the box pose along q(t) = q + tθ̇ + t²θ̈/2; MultiArm (H1) vs the forest model.
"""

import numpy as np
import pytest

import opalg
import opalg.algorithms.constrained as con
from opalg.closed.examples_arms import PLANAR_ROWS, consistent_velocities, two_planar_arms
from opalg.closed.forest import arms_as_forest
from opalg.closed.ider_link import (box_pose, closed_at, desired, feasibility, ider_system, motor_rows,
                                    simulate, solve, two_arms_box)
from opalg.errors import InfeasibleDirections, StateError
from opalg.simulate import Trajectory

from helpers import assert_close, cond_tol, measured

# Tolerances: k·cond·ε with cond that of the matrix solved, computed in the test (the augmented
# matrix [[ℳ, −Zᵀ], [B, 0]]; for the forest and MultiArm, the forest's KKT matrix).  k measured in
# /tmp (not committed) over 200 random closed states of the (3, 4) task (box at θ 0..0.3, x 0.75..0.95,
# y 0.95..1.08, random θ̇ on the manifold, t, and the four motor choices) and 200 random θ̇, τ of
# the MultiArm example, and 200 states of the square (2, 3, 4) task, under the default, Sandybridge
# and Prescott kernels: worst 2.9 (θ̈ by the augmented vs the reduced method), residual 1.6, tree
# passes 0.82, square case 0.84, forest 0.21.
K_SOLVE = measured(100, 2.9, "err/(cond·ε) over 1,600 solves and 200 forest/MultiArm pairs under 3 kernels")


def augmented_cond(s, A) -> float:
    """cond of Ider's augmented matrix [[ℳ, −Zᵀ], [B, 0]] (the matrix both methods solve with)."""
    Z = con.force_directions(s.B, A, s.n_geometric)
    c = s.B.shape[0]
    return float(np.linalg.cond(np.block([[s.M, -Z.T], [s.B, np.zeros((c, c))]])))


def kkt_cond(system, q) -> float:
    M, G = opalg.crba(system.model, q), system.jacobian(q)
    m = G.shape[0]
    return float(np.linalg.cond(np.block([[M, G.T], [G, np.zeros((m, m))]])))


@pytest.fixture(scope="module")
def redundant():
    task = two_arms_box((3, 4))
    q = closed_at(task, 0.15, 0.85, 1.02)
    rng = np.random.default_rng(3)
    qd = np.linalg.svd(task.system.jacobian(q))[2][3:].T @ rng.normal(size=3)   # on the manifold
    return task, q, qd


@pytest.fixture(scope="module")
def square():
    task = two_arms_box((2, 3, 4))
    return task, task.q0, task.qd0


@pytest.mark.verifies("H10", route="forest model (box merged into arm 0) vs MultiArm forward")
def test_forest_equals_multiarm():
    """H10: the forest with the box merged into arm 0's tip = MultiArm's 6m grasp system (H1)."""
    ex = two_planar_arms()
    f = arms_as_forest(ex.arms, ex.system.grasps, ex.object_inertia, ex.qs, rows=PLANAR_ROWS)
    rng = np.random.default_rng(0)
    qds = consistent_velocities(ex.system, ex.qs, [0, 0, 0.3, 0.2, -0.1, 0])
    taus = [rng.normal(size=3) for _ in range(2)]
    a = np.concatenate(ex.system.forward(ex.qs, qds, taus).qdd)
    b = f.system.forward(f.q, np.concatenate(qds), np.concatenate(taus)).qdd
    assert_close(a, b, cond_tol(kkt_cond(f.system, f.q), K_SOLVE, "forest KKT"), "θ̈: MultiArm vs forest")


@pytest.mark.verifies("H10", route="augmented vs reduced solve; vs ClosedSystem.forward with T = Aᵀμ")
@pytest.mark.parametrize("motors", [None, (0, 3), (1, 5), (2, 4)])
def test_formulations_agree_and_match_tree_passes(redundant, motors):
    task, q, qd = redundant
    s = ider_system(task, 0.1, q, qd)
    A = None if motors is None else motor_rows(task, motors)
    aug, red = solve(s, A, "augmented"), solve(s, A, "reduced")
    tol = cond_tol(augmented_cond(s, A), K_SOLVE, "augmented")
    assert_close(aug.qdd, red.qdd, tol, "θ̈: augmented vs reduced")
    assert_close(aug.v, red.v, tol, "v: augmented vs reduced")
    assert_close(s.B @ aug.qdd, s.h, tol, "G_c θ̈ = U and the path rows")
    if motors is not None:
        off = np.setdiff1d(np.arange(task.n), motors)
        # exact: Aᵀμ with unit rows e_j puts μ on the motors and exact zeros elsewhere
        assert np.all(aug.tau_motor[off] == 0) and np.all(aug.tau_motor[list(motors)] == aug.mu)
        # Independent route: the tree passes with T = Aᵀμ give the same motion, λ = −v_G (H5).
        res = task.system.forward(q, qd, aug.tau_motor)
        both = cond_tol(max(augmented_cond(s, A), kkt_cond(task.system, q)), K_SOLVE, "augmented, KKT")
        assert_close(res.qdd, aug.qdd, both, "θ̈: tree passes vs augmented")
        assert_close(res.lam, -aug.reaction, both, "λ = −v_G")


@pytest.mark.verifies("H10", route="path rows B_K θ̈ = h_K vs central differences of the box pose")
def test_path_rows_by_finite_differences(redundant):
    """B_K θ̈ = h_K means the box pose along q(t) = q + tθ̇ + t²θ̈/2 has ẍ = ẍ_d(t) at t = 0."""
    task, q, qd = redundant
    t0 = 0.1
    qdd = solve(ider_system(task, t0, q, qd), motor_rows(task, (0, 3))).qdd
    err = []
    for h in (1e-3, 1e-4):
        x = [box_pose(task, q + dt * qd + dt * dt / 2 * qdd) for dt in (-h, 0.0, h)]
        err.append(np.abs((x[0] - 2 * x[1] + x[2]) / h ** 2 - desired(task, t0)[2]).max())
    # central difference: truncation ~ h²|x''''|/12 falls 100x from h = 1e-3 to 1e-4 (round-off
    # eps/h² ~ 2e-8 stays below); a wrong h_K would leave an h-independent error
    assert err[1] < 1e-5 and err[1] < err[0] / 30


@pytest.mark.verifies("H10", route="c = N: θ̈ for every A vs the square solve B⁻¹h")
def test_square_case_motion_independent_of_A(square):
    """c = N: B is square, θ̈ = B⁻¹h for every feasible A; the moments depend on A (H10)."""
    task, q, qd = square
    s = ider_system(task, 0.0, q, qd)
    As = [None] + [motor_rows(task, m) for m in [(0, 1, 2), (0, 3, 5), (1, 2, 4)]]
    sols = [solve(s, A) for A in As]
    ref = np.linalg.solve(s.B, s.h)                                   # independent: the square solve
    conds = [max(augmented_cond(s, A), np.linalg.cond(s.B)) for A in As]
    for r, c in zip(sols, conds):
        assert_close(r.qdd, ref, cond_tol(c, K_SOLVE, "augmented, B"), "θ̈ vs B⁻¹h")
    # Mθ̈ + Q = Zᵀv is then the same too; its split into motor moments and grasp reactions is not
    for r, c in zip(sols[1:], conds[1:]):
        assert_close(r.tau, sols[0].tau, cond_tol(max(c, conds[0]), K_SOLVE, "augmented, B"), "τ = Zᵀv")
    motor = np.array([r.tau_motor for r in sols[1:]])
    assert np.abs(motor[0] - motor[1]).max() > 1e-2 * np.abs(motor).max()


@pytest.mark.verifies("H10", route="c < N: conventional vs chosen motors, both satisfying B θ̈ = h")
def test_redundant_case_motion_depends_on_A(redundant):
    """c < N: conventional and chosen motors satisfy the same constraints, yet move differently."""
    task, q, qd = redundant
    s = ider_system(task, 0.1, q, qd)
    conv, chosen = solve(s, None), solve(s, motor_rows(task, (0, 3)))
    for r, A in ((conv, None), (chosen, motor_rows(task, (0, 3)))):
        assert_close(s.B @ r.qdd, s.h, cond_tol(augmented_cond(s, A), K_SOLVE, "augmented"), "B θ̈ = h")
    assert np.abs(conv.qdd - chosen.qdd).max() > 1e-3 * np.abs(conv.qdd).max()
    assert np.abs(conv.tau - chosen.tau).max() > 1e-3 * np.abs(conv.tau).max()
    # the conventional "moments" act on every joint; the chosen ones only on joints 0 and 3
    # (1e-12 is a threshold for "nonzero", not round-off: the third largest is >= 12 in the sweep)
    assert np.count_nonzero(np.abs(conv.tau_motor) > 1e-12) > 2


def test_infeasible_directions(redundant):
    """A 'motor' along a grasp normal is absorbed by the grasp (rank Z < c): a clear error.

    κ depends on the row space of Z only, so it stays put along A(t) = [e0; (1 − t)e3 + t b]
    for t < 1 and the choice fails only at t = 1; κ → 0 continuously is a matter of the
    configuration (the simulation test below).
    """
    task, q, qd = redundant
    s = ider_system(task, 0.1, q, qd)
    b = s.B[0] / np.abs(s.B[0]).max()
    e0, e3 = np.eye(task.n)[[0, 3]]
    kappas = [feasibility(s, np.array([e0, (1 - t) * e3 + t * b])) for t in (0.0, 0.9, 0.999)]
    assert np.ptp(kappas) < 1e-9
    with pytest.raises(InfeasibleDirections, match="rank Z"):
        solve(s, np.array([e0, b]))
    with pytest.raises(InfeasibleDirections, match="rank deficient"):
        solve(s, np.array([e0, e0]))
    assert feasibility(s, motor_rows(task, (0, 3))) > 0.1           # a feasible choice


def test_simulation_tracks_then_stops_when_infeasible():
    task = two_arms_box((3, 4))
    ok = simulate(task, (0, 3), t_span=(0.0, 0.2), n_out=5, rtol=1e-10, atol=1e-12)
    assert isinstance(ok, Trajectory) and ok.status == "completed" and ok.kappa.min() > 0.5
    # acceleration-level constraints integrated without stabilization: drift ~ rtol·t
    assert np.abs(ok.tracking_error).max() < 1e-7 and np.abs(ok.closure_error).max() < 1e-7
    assert np.all(ok.tau_motor[:, [1, 2, 4, 5]] == 0) and ok.reaction.shape == (5, 3)   # exact: Aᵀμ
    # the box's rotation is not prescribed: its (unstable) free motion drives arm 1 to its
    # stretched pose, where the two motors lose the path — the run stops with a message
    bad = simulate(task, (0, 3), t_span=(0.0, 0.6), n_out=7, kappa_min=1e-2)
    assert bad.status == "event" and bad.event == "kappa_min" and not bad.ok
    assert f"turn infeasible at t = {bad.t_stop:.4g} s" in bad.message
    assert bad.t[-1] <= bad.t_stop < 0.6 and bad.kappa[-1] < bad.kappa[0] / 3
    # the event's own state: κ = kappa_min there, to brentq's tolerance on t times |dκ/dt|
    # (|dκ/dt| < 1e3 s⁻¹ near the stop: 1e-9 is far above 4ε·1e3)
    y = bad.y_events["kappa_min"][0]
    k_stop = feasibility(ider_system(task, bad.t_stop, y[:task.n], y[task.n:]), motor_rows(task, (0, 3)))
    assert abs(k_stop - 1e-2) < 1e-9


def test_run_past_the_singularity_says_it_failed_and_why():
    """Bad run: with kappa_min = 1e-14 the event never fires; the solver's step size collapses at
    t ≈ 0.37 s, where the motors lose the path.  It returned status 'ok', an empty message and
    samples ending at 0.36 s of 1 s; now 'failed', the time and the reason, with κ there, and the
    samples reached kept."""
    task = two_arms_box((3, 4))
    run = simulate(task, (0, 3), t_span=(0.0, 1.0), kappa_min=1e-14, rtol=1e-6, atol=1e-8)
    assert run.status == "failed" and not run.ok and run.event is None
    assert f"failed at t = {run.t_stop:.6g}: " in run.message and "step size" in run.message
    assert "κ = " in run.message
    assert 0.3 < run.t_stop < 1.0 and run.t[-1] <= run.t_stop
    assert len(run.t) == len(run.kappa) == len(run.tau_motor) > 1 and np.all(np.isfinite(run.q))


def test_old_t_end_still_runs_with_a_deprecation_warning():
    task = two_arms_box((3, 4))
    new = simulate(task, (0, 3), t_span=(0.0, 0.05), n_out=3)
    with pytest.warns(DeprecationWarning, match="t_end is now t_span"):
        by_name = simulate(task, (0, 3), t_end=0.05, n_out=3)
    with pytest.warns(DeprecationWarning, match="a number is read as the old t_end"):
        by_position = simulate(task, (0, 3), 0.05, n_out=3)
    for old in (by_name, by_position):       # exact: the same call on the same numbers
        assert np.array_equal(old.t, new.t) and np.array_equal(old.q, new.q) and old.ok
    with pytest.raises(StateError, match="not both"), pytest.warns(DeprecationWarning):
        simulate(task, (0, 3), t_span=(0.0, 0.05), t_end=0.05)
    with pytest.raises(StateError, match="t_end"), pytest.warns(DeprecationWarning):
        simulate(task, (0, 3), t_end="0.05")


def test_bad_input():
    task = two_arms_box()
    with pytest.raises(StateError, match="path rows need as many motors"):
        motor_rows(task, [0])
    with pytest.raises(StateError, match="distinct joint indices"):
        motor_rows(task, [0, 9])
    with pytest.raises(StateError, match="path_rows"):
        two_arms_box((1, 3))
    s = ider_system(task, 0.0, task.q0, task.qd0)
    with pytest.raises(StateError, match="method"):
        solve(s, None, method="dense")
