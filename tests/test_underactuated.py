"""Under-actuated arms (opalg.underactuated; docs/REFERENCE.md G3–G5).

Independent routes (none calls opalg.hybrid's passes to produce an expected value):
* the Acrobot's mass matrix in Spong's closed form, written out here;
* Ider's augmented system [[ℳ, −Zᵀ], [B, 0]] with Z = S_a, solved densely by
  opalg.algorithms.constrained.solve_augmented from crba and bias, and its feasibility measure
  opalg.algorithms.constrained.conditioning from the dense ℳ;
* ℳq̈ + C = τ checked at the samples of a run (a Trajectory from opalg.simulate.integrate) from
  crba and bias, and the work–energy balance E(t) − E(0) = ∫ τ·q̇ dt with E from ℳ and the
  mass-centre heights written out here;
* Ider's own simulation (opalg.ider.simulate), re-solved at its samples.

Tolerances (issue 31): K·cond·ε with the condition number computed in the test where a route
solves (K = 100: c(N)·cond·ε of a backward-stable solve, N <= 12; the worst measured ratio is in
each check's comment), bounds measured under 3 BLAS/SIMD kernels with >= 10x margin elsewhere,
and exact comparisons where the numbers are copied.
"""

from __future__ import annotations

import functools
import re

import numpy as np
import pytest
from scipy.integrate import simpson

import opalg
from opalg import ider, underactuated as ua
from opalg.algorithms.constrained import conditioning, solve_augmented
from opalg.simulate import Trajectory

from helpers import EPS, assert_close, cond_tol, make_model, measured

# Spong's Acrobot link: m = 1, l = 1, l_c = 0.5, I_c = 1/12.
M1 = M2 = 1.0
L1, LC1, LC2, I1, I2 = 1.0, 0.5, 0.5, 1 / 12, 1 / 12
G = 9.81

#: k of k·cond·ε (module docstring); K_GRAM for κ by the passes' Gram matrices against the dense
#: κ: measured worst 14.3 cond(K_aug)·ε over _ARMS (14x).
K, K_GRAM = 100, 200
_ARMS = "300 random arms of _random_arm's generator under 3 kernels"
#: crba and bias of the double pendulum vs Spong's closed forms (forward evaluations, relative):
#: measured over 600 random q under 3 kernels, ℳ 5.0e-16, gravity torques 2.0e-16.
SPONG = measured(1e-14, 5.0e-16, "600 random q (both builders) under 3 kernels")
GRAVITY = measured(1e-14, 2.0e-16, "300 random q under 3 kernels")
#: κ(ℳ, S_a, S_a) = 1 by the dense route (QR of one basis twice): measured 1.1e-15 over _ARMS.
KAPPA_ONE = measured(1e-12, 1.1e-15, _ARMS)
#: Ider's 'no motor at joint 1' re-solved by task_control at simulate's samples (the same 5x5
#: system, cond ~10): measured over 201 samples (t <= 2 s) under 3 kernels, absolute: q̈ 5.3e-15,
#: moments / max(1, |τ|) 7.6e-15, Ider's own τ₁ (a dense Mq̈ + Q) 6.2e-14; κ relative 2.9e-15.
_IDER = "201 samples of the run (t <= 2 s) under 3 kernels"
IDER_QDD = measured(1e-12, 5.3e-15, _IDER)
IDER_TAU = measured(1e-12, 7.6e-15, _IDER)
IDER_TAU1 = measured(1e-12, 6.2e-14, _IDER)
IDER_KAPPA = measured(1e-12, 2.9e-15, _IDER)
#: ℳq̈ + C − τ at the 601 samples of the two swing runs / (1 + |τ|): measured 1.6e-14 (3 kernels).
SWING_RES = measured(1e-12, 1.6e-14, "the 1,202 samples of both swing runs under 3 kernels")


def spong_mass_matrix(q2):
    """Spong (1995) for the double pendulum with relative angles, written out by hand."""
    c2 = np.cos(q2)
    m11 = M1 * LC1**2 + M2 * (L1**2 + LC2**2 + 2 * L1 * LC2 * c2) + I1 + I2
    m12 = M2 * (LC2**2 + L1 * LC2 * c2) + I2
    m22 = M2 * LC2**2 + I2
    return np.array([[m11, m12], [m12, m22]])


def selector(mask):
    """S_a: the rows of the identity at the active dofs."""
    return np.eye(mask.size)[~mask]


def test_acrobot_and_pendubot_are_spongs_double_pendulum():
    """Both builders give Spong's ℳ (to SPONG relative: a handful of roundings) and their masks."""
    for build, mask in ((ua.acrobot, [True, False]), (ua.pendubot, [False, True])):
        model, passive = build()
        assert passive.tolist() == mask
        for q2 in np.linspace(-3, 3, 7):
            M = opalg.crba(model, np.array([0.4, q2]))
            assert_close(M, spong_mass_matrix(q2), SPONG, f"ℳ vs Spong at q2 = {q2:g}")
    # gravity acts along −y: hanging straight down (q1 = −π/2) is an equilibrium, horizontal is not
    model, _ = ua.acrobot()
    g_torque = opalg.bias(model, np.zeros(2), np.zeros(2))
    assert_close(g_torque, [G * (M1 * LC1 + M2 * (L1 + LC2)), G * M2 * LC2], GRAVITY, "gravity torques")
    # 0 to GRAVITY of the horizontal torques (cos(−π/2) is 6e-17 in floats)
    hanging = opalg.bias(model, np.array([-np.pi / 2, 0.0]), np.zeros(2))
    assert_close(hanging, 0 * hanging, GRAVITY, "hanging equilibrium", scale=np.linalg.norm(g_torque))


def test_ider_arm_is_ider_without_motor_one():
    model, passive = ua.ider_arm()
    assert passive.tolist() == [True, False, False]
    q = ider.THETA0
    # exact: the same mechanism, built alike, evaluated by the same arithmetic
    assert np.array_equal(opalg.crba(model, q), opalg.crba(ider.arm(), q))


def _random_arm(seed, kind):
    model = make_model(kind, 5 + seed % 4, seed, "all")
    rng = np.random.default_rng(seed)
    passive = rng.random(model.ndof) < 0.4
    passive[rng.integers(model.ndof)] = False        # at least one motor
    return model, passive, rng


@pytest.mark.verifies("G4", route="task_control (hybrid passes) vs Ider's dense augmented solve, B=Z=S_a")
@pytest.mark.parametrize("kind", ["chain", "tree"])
@pytest.mark.parametrize("seed", range(4))
def test_collocated_task_is_hybrid_dynamics_and_always_feasible(kind, seed):
    """G4: with B = Z = S_a, Ider's dense augmented solve gives the hybrid motion, v = T_a, κ = 1."""
    model, passive, rng = _random_arm(seed, kind)
    q, qd = rng.normal(size=(2, model.ndof))
    S_a = selector(passive)
    h = rng.normal(size=S_a.shape[0])
    tau_p = rng.normal(size=int(passive.sum()))
    sol = ua.task_control(model, q, qd, passive, S_a, h, tau_p=tau_p)
    M, C = opalg.crba(model, q), opalg.bias(model, q, qd)
    F = np.zeros(model.ndof)
    F[passive] = tau_p
    dense = solve_augmented(M, C, F, S_a, h, S_a)
    # Both solve the same system: K·cond(K_aug)·ε (measured worst 1.5 for q̈, 2.2 for τ_a over _ARMS).
    tol = cond_tol(np.linalg.cond(np.block([[M, -S_a.T], [S_a, 0 * S_a @ S_a.T]])), K, "augmented")
    assert_close(sol.qdd, dense.ydot, tol, "q̈ vs the augmented solve")
    assert_close(sol.tau[~passive], dense.v, tol, "τ_a vs v")
    assert np.array_equal(sol.tau[passive], tau_p)   # exact: the given τ_p are copied
    # exact: C = S_aΘ = I and S_a θ̈⁰ = 0 exactly, so the solve returns h (so in _ARMS)
    assert np.array_equal(sol.qdd[~passive], h)
    # κ by passes (Gram matrices): 1 to K·cond(ℳ)·ε (measured worst 0.17 over _ARMS; an absolute
    # 1e-12 was exceeded there: 3.7e-12)
    assert abs(sol.kappa - 1.0) <= cond_tol(np.linalg.cond(M), K)
    assert abs(conditioning(M, S_a, S_a) - 1.0) <= KAPPA_ONE


@pytest.mark.verifies("G5", route="task_control (1 + N_a hybrid runs) vs Ider's dense augmented solve")
@pytest.mark.parametrize("kind", ["chain", "tree"])
@pytest.mark.parametrize("seed", range(4))
def test_non_collocated_task_matches_ider_dense_solve(kind, seed):
    """G5: any task B q̈ = h with motors S_a: q̈, τ_a, κ and BΘ = (Bℳ⁻¹S_aᵀ)R from dense ℳ."""
    model, passive, rng = _random_arm(seed + 10, kind)
    q, qd = rng.normal(size=(2, model.ndof))
    S_a = selector(passive)
    B = rng.normal(size=S_a.shape)
    h = rng.normal(size=S_a.shape[0])
    M, C = opalg.crba(model, q), opalg.bias(model, q, qd)
    kappa = conditioning(M, B, S_a)
    sol = ua.task_control(model, q, qd, passive, B, h)
    dense = solve_augmented(M, C, np.zeros(model.ndof), B, h, S_a)
    # The augmented system's condition grows like 1/κ: K·cond(K_aug)·ε, computed (measured worst
    # 1.2 for q̈, 1.6 for τ_a, 0.04 for B q̈ − h relative to |B||q̈| + |h|, over _ARMS).
    c_aug = np.linalg.cond(np.block([[M, -S_a.T], [B, 0 * B @ B.T]]))
    tol = cond_tol(c_aug, K, "augmented")
    assert_close(sol.qdd, dense.ydot, tol, "q̈ vs the augmented solve")
    assert_close(sol.tau[~passive], dense.v, tol, "τ_a vs v")
    assert_close(B @ sol.qdd, h, tol, "B q̈ = h", scale=np.linalg.norm(B, 2) * np.linalg.norm(sol.qdd))
    # κ by passes (Gram matrices, which square the bases' condition) vs dense: K_GRAM·cond(K_aug)·ε
    assert_close(sol.kappa, kappa, cond_tol(c_aug, K_GRAM, "augmented"), "κ passes vs dense", scale=1.0)
    p, a = passive, ~passive
    R = M[np.ix_(a, a)] - M[np.ix_(a, p)] @ np.linalg.solve(M[np.ix_(p, p)], M[np.ix_(p, a)])
    coupling = B @ np.linalg.solve(M, S_a.T) @ R
    # K·cond(ℳ)·ε (measured worst 1.5 over _ARMS)
    assert_close(sol.coupling, coupling, cond_tol(np.linalg.cond(M), K), "B Θ = (Bℳ⁻¹S_aᵀ) R")


@pytest.mark.verifies("G5", route="Bℳ⁻¹Zᵀ and κ (LU of crba; task_control) vs Spong's −ℳ₁₂/det ℳ")
def test_acrobot_non_collocated_coupling_is_spongs_inertial_coupling():
    """G5 for the Acrobot: Bℳ⁻¹Zᵀ = −ℳ₁₂/det ℳ; infeasible exactly where ℳ₁₂ = 0."""
    model, passive = ua.acrobot()
    B, Z = np.array([[1.0, 0.0]]), np.array([[0.0, 1.0]])
    for q2 in (-2.0, -0.5, 0.3, 1.7):
        q = np.array([-1.0, q2])
        Ms = spong_mass_matrix(q2)
        want = -Ms[0, 1] / np.linalg.det(Ms)
        M = opalg.crba(model, q)
        cM = np.linalg.cond(M)
        # a solve's forward error, K·cond(ℳ)·ε of ‖ℳ⁻¹‖ (measured worst 0.57 over 300 random
        # q2 under 3 kernels)
        assert_close((B @ np.linalg.solve(M, Z.T)).item(), want, cond_tol(cM, K),
                     "(ℳ⁻¹)₁₂ vs −ℳ₁₂/det ℳ", scale=np.linalg.norm(np.linalg.inv(Ms), 2))
        sol = ua.task_control(model, q, np.zeros(2), passive, B, [1.0])
        # κ for one row each: |ℳ⁻¹₁₂| / √(ℳ⁻¹₁₁ ℳ⁻¹₂₂) = |ℳ₁₂| / √(ℳ₁₁ℳ₂₂); absolute error
        # K·cond(K_aug)·ε as in test_constrained (measured worst 0.14 over the 300 random q2)
        K_aug = np.block([[M, -Z.T], [B, np.zeros((1, 1))]])
        assert_close(sol.kappa, abs(Ms[0, 1]) / np.sqrt(Ms[0, 0] * Ms[1, 1]),
                     cond_tol(np.linalg.cond(K_aug), K, "augmented"), "κ vs Spong", scale=1.0)
    # ℳ₁₂ = m₂(l_c2² + l₁l_c2 cos q₂) + I₂ = 0  ⇔  cos q₂ = −(I₂ + m₂l_c2²)/(m₂l₁l_c2) = −2/3
    q2_star = np.arccos(-(I2 + M2 * LC2**2) / (M2 * L1 * LC2))
    # exact: the argument rounds to the double −2/3 (IEEE operations, no BLAS), one arccos of it
    assert q2_star == np.arccos(-2 / 3)
    with pytest.raises(opalg.InfeasibleDirections, match="ℳ₁₂ = 0|coupling"):
        ua.task_control(model, np.array([-1.0, q2_star]), np.zeros(2), passive, B, [1.0])
    # just beside it the task is feasible, with a measure that grows linearly away from q₂*
    k1 = ua.task_control(model, np.array([-1.0, q2_star + 1e-3]), np.zeros(2), passive, B, [1.0]).kappa
    k2 = ua.task_control(model, np.array([-1.0, q2_star + 2e-3]), np.zeros(2), passive, B, [1.0]).kappa
    assert 1e-5 < k1 < 1e-3 and k2 / k1 == pytest.approx(2.0, rel=1e-2)
    # the collocated task at the same configuration is fine (G4): κ = 1 to round-off (exactly 1
    # at 300 random q2 under 3 kernels, but nothing makes the 1x1 Gram route exact)
    kappa_1 = ua.task_control(model, np.array([-1.0, q2_star]), np.zeros(2), passive, Z, [1.0]).kappa
    M_star = opalg.crba(model, np.array([-1.0, q2_star]))
    assert abs(kappa_1 - 1.0) <= cond_tol(np.linalg.cond(M_star), K)


@functools.lru_cache(maxsize=None)
def ider_run():
    return ider.simulate("no motor at joint 1", t_span=(0.0, 1.0), t_eval=np.linspace(0.0, 1.0, 21))


@pytest.mark.verifies("G5", route="task_control vs ider.simulate (dense augmented solve) at its samples")
def test_ider_arm_resolved_by_hybrid_route_reproduces_ider_simulate():
    """Ider's 'no motor at joint 1' is an under-actuated arm: the hybrid route at Ider's samples
    gives Ider's accelerations and moments to round-off (both are exact solves of the same 5×5
    system, ℳ's condition number is ~10): measured bounds IDER_*."""
    run = ider_run()
    assert run.ok
    model, passive = ua.ider_arm()
    for q, qd, qdd, tau in zip(run.q, run.v, run.qdd, run.tau):
        sol = ua.task_control(model, q, qd, passive, ider.tip_jacobian(q), ider.tip_bias(q, qd))
        assert np.abs(sol.qdd - qdd).max() <= IDER_QDD
        assert np.abs(sol.tau - tau).max() <= IDER_TAU * max(1.0, np.abs(tau).max())
        # exact: the passive τ₁ = 0 is copied; Ider's own is a dense ℳq̈ + Q, 0 to round-off
        assert sol.tau[0] == 0.0 and abs(tau[0]) <= IDER_TAU1
    kappas = [ua.task_control(model, q, qd, passive, ider.tip_jacobian(q), ider.tip_bias(q, qd)).kappa
              for q, qd in zip(run.q, run.v)]
    assert np.all(np.abs(np.array(kappas) - run.conditioning) <= IDER_KAPPA * run.conditioning)


def energy(model, q, qd):
    """Kinetic energy from ℳ, potential from the mass-centre heights of the two links (y up)."""
    M = opalg.crba(model, q)
    kinetic = 0.5 * np.einsum("...i,...ij,...j->...", qd, M, qd)
    y1 = LC1 * np.sin(q[..., 0])
    y2 = L1 * np.sin(q[..., 0]) + LC2 * np.sin(q[..., 0] + q[..., 1])
    return kinetic + G * (M1 * y1 + M2 * y2)


@functools.lru_cache(maxsize=None)
def swing_run(friction=0.0):
    arm = ua.acrobot()
    force = None if friction == 0 else (lambda t, q, qd: [-friction * qd[0]])
    return ua.simulate(*arm, ua.swing_controller(*arm), [-np.pi / 2 + 0.1, 0], [0, 0], (0.0, 3.0),
                       t_eval=np.linspace(0.0, 3.0, 601), passive_force=force, rtol=1e-9, atol=1e-9)


def test_pfl_swing_obeys_the_equations_of_motion_and_pumps_energy():
    """The passive shoulder is never driven (τ₁ ≡ 0); every sample satisfies ℳq̈ + C = τ
    (crba, bias); the elbow follows the commanded acceleration; energy grows by the motor's work."""
    model, passive = ua.acrobot()
    run = swing_run()
    assert isinstance(run, Trajectory) and run.ok and run.t[-1] == run.t_stop == 3.0
    assert np.all(run.tau[:, 0] == 0.0)          # exact: the passive τ₁ = 0 is copied
    ctrl = ua.swing_controller(model, passive)
    for i in range(0, len(run.t), 40):
        q, qd = run.q[i], run.v[i]
        res = opalg.crba(model, q) @ run.qdd[i] + opalg.bias(model, q, qd) - run.tau[i]
        assert np.abs(res).max() <= SWING_RES * (1 + np.abs(run.tau[i]).max())
        # exact: the controller's q̈₂ is copied (the same call on the same sample)
        assert run.qdd[i, 1] == ctrl(run.t[i], q, qd)[0]
    E = energy(model, run.q, run.v)
    work = simpson(run.tau[:, 1] * run.v[:, 1], x=run.t)
    # Simpson's rule at 5 ms steps is measured to err by 8e-6 J here (2.5 ms steps: 3e-7 J, the
    # fourth order), the integration at rtol = atol = 1e-9 by < 1e-6 J (1e-11 moves it by 2e-7 J):
    # 3e-5 J out of a 14 J exchange.
    assert E[-1] - E[0] == pytest.approx(work, abs=3e-5)
    assert E[-1] - E[0] > 5.0            # the swing pumps several joules into the passive arm


def test_passive_friction_dissipates_what_the_motor_does_not_supply():
    model, _ = ua.acrobot()
    b = 0.5
    run = swing_run(b)
    assert run.ok
    assert np.array_equal(run.tau[:, 0], -b * run.v[:, 0])    # exact: the force's own product, copied
    E = energy(model, run.q, run.v)
    work = simpson(run.tau[:, 1] * run.v[:, 1] + run.tau[:, 0] * run.v[:, 0], x=run.t)
    assert E[-1] - E[0] == pytest.approx(work, abs=3e-5)     # as in the frictionless run
    assert simpson(run.tau[:, 0] * run.v[:, 0], x=run.t) < -0.1    # friction removed energy


def test_failed_run_keeps_its_samples_and_names_the_time():
    """A controller that breaks after t = 0.5 s: status 'failed', the steps before it kept, the
    message names the last accepted time and the call that failed (at its own time)."""
    arm = ua.acrobot()

    def controller(t, q, qd):
        return [np.nan] if t > 0.5 else [1.0]

    run = ua.simulate(*arm, controller, [-1.5, 0], [0, 0], (0.0, 2.0), t_eval=np.linspace(0, 2, 41))
    assert run.status == "failed" and not run.ok and run.event is None
    # the first error ends the run: t_stop is the last accepted step, before the stage past 0.5 s
    assert 0.0 < run.t_stop <= 0.5 and run.t[-1] <= run.t_stop
    assert f"failed at t = {run.t_stop:.6g}: " in run.message
    stage = float(re.search(r"controller\(t, q, v\) returned \[nan\] at t = ([0-9.]+)", run.message).group(1))
    assert 0.5 < stage and "expected 1 finite number(s), one per active dof" in run.message
    assert len(run.t) > 1 and np.all(np.isfinite(run.q)) and np.all(np.isfinite(run.qdd))
    # the kept samples are the true motion: constant elbow acceleration 1 from rest (1e-8: far above
    # the integrator's error on this quadratic, which DOP853 integrates exactly up to round-off)
    assert np.allclose(run.q[:, 1], 0.5 * run.t**2, rtol=0, atol=1e-8)


def test_wrong_size_controller_is_refused_at_t0():
    """Bad run: a controller returning 2 numbers for the Acrobot's one motor became NaN at t = 0
    and scipy never returned; now a StateError at t0 naming the controller and the size."""
    arm = ua.acrobot()
    with pytest.raises(opalg.StateError, match=r"controller\(t, q, v\) returned \[0.0, 0.0\] at t = 0: "
                                               r"expected 1 finite number\(s\), one per active dof"):
        ua.simulate(*arm, lambda t, q, qd: [0.0, 0.0], [-1.5, 0], [0, 0], (0.0, 0.2))
    with pytest.warns(DeprecationWarning), pytest.raises(opalg.StateError, match=r"controller\(t, q, v\)"):
        ua.simulate(*arm, lambda t, q, qd: [0.0, 0.0], [-1.5, 0, 0, 0], 0.2)     # the call as reported
    with pytest.raises(opalg.StateError, match=r"passive_force\(t, q, v\) returned \[\] at t = 0: "
                                               r"expected 1 finite number\(s\), one per passive dof"):
        ua.simulate(*arm, lambda t, q, qd: [0.0], [-1.5, 0], [0, 0], (0.0, 0.2), passive_force=lambda *a: [])


@pytest.mark.parametrize("kwargs, match", [
    (dict(t_span=(0.0, np.nan)), "t_span"),
    (dict(t_span=(1.0, 0.0)), "t_span"),
    (dict(t_span=(0.0, 1.0), rtol=True), "rtol"),
    (dict(t_span=(0.0, 1.0), t_eval=[0.0, np.nan]), "t_eval"),
    (dict(t_span=(0.0, 1.0), t_eval=[0.0, 2.0]), "t_eval"),
    (dict(t_span=(0.0, 1.0), method="Euler"), "method"),
])
def test_simulate_refuses_bad_arguments_before_integrating(kwargs, match):
    arm = ua.acrobot()
    with pytest.raises(opalg.StateError, match=match):
        ua.simulate(*arm, ua.swing_controller(*arm), [-1.5, 0], [0, 0], **kwargs)


@pytest.mark.parametrize("kwargs, match", [
    (dict(t_end="1.0"), "t_end"),
    (dict(t_end=np.nan), "t_end"),
    (dict(t_end=1.0, t_span=(0.0, 1.0)), "not both"),
    (dict(x0=[-1.5, 0, 0, 0], q0=[-1.5, 0], t_end=1.0), "not both"),
])
def test_old_arguments_are_checked_too(kwargs, match):
    arm = ua.acrobot()
    with pytest.raises(opalg.StateError, match=match), pytest.warns(DeprecationWarning):
        ua.simulate(*arm, ua.swing_controller(*arm), **({"x0": [-1.5, 0, 0, 0]} | kwargs))


def test_old_call_still_runs_with_a_deprecation_warning():
    """(x0, t_end) by position or by name: the same run as (q0, v0, t_span) with the old default
    of 401 samples over (0, t_end)."""
    arm = ua.acrobot()
    ctrl = ua.swing_controller(*arm)
    new = ua.simulate(*arm, ctrl, [-1.5, 0], [0, 0], (0.0, 0.5), t_eval=np.linspace(0.0, 0.5, 401))
    with pytest.warns(DeprecationWarning, match=r"x0, t_end, \.\.\.\) is now"):
        by_position = ua.simulate(*arm, ctrl, [-1.5, 0, 0, 0], 0.5)
    with pytest.warns(DeprecationWarning, match="x0 is now q0, v0"), \
            pytest.warns(DeprecationWarning, match="t_end is now t_span"):
        by_name = ua.simulate(*arm, ctrl, x0=[-1.5, 0, 0, 0], t_end=0.5)
    with pytest.warns(DeprecationWarning, match="t_end is now t_span"):
        mixed = ua.simulate(*arm, ctrl, [-1.5, 0, 0, 0], t_end=0.5)
    force = lambda t, q, qd: [-0.1 * qd[0]]     # noqa: E731
    with pytest.warns(DeprecationWarning):       # the old order went on with t_eval, passive_force
        shifted = ua.simulate(*arm, ctrl, [-1.5, 0, 0, 0], 0.5, np.linspace(0.0, 0.5, 401), force)
    with_force = ua.simulate(*arm, ctrl, [-1.5, 0], [0, 0], (0.0, 0.5), np.linspace(0.0, 0.5, 401), force)
    # exact: the same calls on the same numbers
    for old, ref in ((by_position, new), (by_name, new), (mixed, new), (shifted, with_force)):
        assert old.ok and np.array_equal(old.t, ref.t) and np.array_equal(old.q, ref.q)
        assert np.array_equal(old.tau, ref.tau)
    assert not np.array_equal(with_force.q, new.q)


def test_old_result_class_name_is_an_alias():
    with pytest.warns(DeprecationWarning, match="Run is now opalg.simulate.Trajectory"):
        assert ua.Run is Trajectory


def test_task_control_refuses_bad_arguments():
    model, passive = ua.acrobot()
    q = np.zeros(2)
    with pytest.raises(opalg.StateError, match="B has shape"):
        ua.task_control(model, q, q, passive, [[1.0, 0.0], [0.0, 1.0]], [1.0, 1.0])
    with pytest.raises(opalg.StateError, match="passive"):
        ua.task_control(model, q, q, [1, 0], [[1.0, 0.0]], [1.0])
    with pytest.raises(opalg.StateError, match="active dof"):
        ua.task_control(model, q, q, [True, True], np.zeros((0, 2)), np.zeros(0))
    with pytest.raises(opalg.StateError, match="gravity"):
        ua.acrobot(gravity="9.81")
    with pytest.raises(opalg.StateError, match="Acrobot"):
        ua.swing_controller(*ua.pendubot())


def test_controller_returning_text_fails_the_run_without_evaluating_it():
    """A string from a controller is a StateError at that time (never parsed): the run ends
    'failed' at the last step accepted before the stage past t = 0.2 s, with the samples before
    it; a genuine bug (TypeError) at t0 propagates as it is."""
    arm = ua.acrobot()
    run = ua.simulate(*arm, lambda t, q, qd: "1.0" if t > 0.2 else [0.0], [-1.5, 0], [0, 0], (0.0, 1.0),
                      t_eval=np.linspace(0, 1, 11))
    assert run.status == "failed" and run.t_stop <= 0.2 and run.t[-1] <= run.t_stop
    assert "controller is not numeric: a str '1.0'" in run.message and "StateError" in run.message

    def buggy(t, q, qd):
        raise TypeError("a bug in the controller")

    with pytest.raises(TypeError, match="a bug"):
        ua.simulate(*arm, buggy, [-1.5, 0], [0, 0], (0.0, 1.0))
