"""The deployable with a free-floating truss: the symbolic Euler route against the operator route.

docs/REFERENCE.md K13.  Independent routes:
* ℳ and the bias of the sympy TreeSystem (the truss on a 6-DoF hinge: slides and z-x-z angles)
  against opalg's crba/rnea of ``free_root_model`` (the truss on a FreeJoint), mapped through
  the Euler-rate Jacobian J: ℳ_euler = Jᵀ ℳ_v J, bias_euler = Jᵀ (bias_v + ℳ_v J̇ q̇), with J̇ q̇
  by complex step of J (not by the module's formulas); on the deployable and on seeded random
  chains and trees with free bodies at and below the root, slides, 1-3 angle hinges, welded
  bodies and masses over four decades;
* the state map against the symbolic kinematics (poses and body twists from sympy);
* a deployment integrated in Euler coordinates (sympy equations) and on the operator route's
  configuration space (quaternion, body twist, opalg ABA): truss pose and hinge angles;
* momentum: h_0 (opalg.algorithms.momentum) and the truss rows of the symbolic ℳ q̇ (the momenta conjugate
  to the truss coordinates, sympy) both stay zero; the truss really turns.

Tolerances.  Algebraic (helpers.assert_close, relative): RTOL, measured over random states (its
``why``); no solve enters (J has cond ≤ ~1/sin H3 ≤ 4 at the sampled angles, ℳ_v entries span
~1e-2..1e3).  Trajectories: 1e-7 (both runs at rtol = atol = 1e-10 over 1.5 s; observed ~2e-10).
Momentum: 1e-8 of the largest body momentum (the integrators' error; observed ~1e-11).
"""

from __future__ import annotations

import numpy as np
import pytest
import sympy as sp

import opalg
from opalg.errors import ModelError, StateError
from opalg.algorithms.momentum import spatial_momentum
from opalg.symbolic import (Body, Hinge, RootMotion, TreeSystem, box_outlines, deployable_example,
                            deployment_setup, euler_jacobian, free_bodies, free_deployment, free_root_model,
                            free_state, pose_function, root_state, t)

from helpers import assert_close, measured

#: sympy's ℳ, bias, poses and twists vs the operator route's (products through J, no solve).
RTOL = measured(2e-13, 7.7e-15, "400 random states of the free deployable, 100 of each of 12 random "
                "free-body chains and trees (seeds 0-11, the test's two included), 400 of the "
                "prescribed-root system, under 3 BLAS/SIMD kernels")
#: |‖quat‖ − 1| of a renormalized quaternion (a division by its computed norm).
TOL_UNIT = measured(1e-14, 3.3e-16, "1e5 random quaternions (scales 1e-3..1e3) through "
                    "floating.simulate.normalized under 3 BLAS/SIMD kernels")
#: The truss's top-view extent (poses of the operator route) vs its 0.5 m x 0.5 m footprint.
TOL_EXTENT = measured(2e-14, 8.5e-16, "400 random truss positions and hinge angles at the run's first "
                      "attitude under 3 BLAS/SIMD kernels")


@pytest.fixture(scope="module")
def free():
    """The free deployable, its derived equations (lambdified once) and a 1.5 s run of both routes."""
    system = deployable_example("deploy", base="free")
    run = free_deployment(t_end=1.5, n_out=7, system=system)
    Mf, Bf = system.lambdify(method="recursive")
    return system, run, Mf, Bf


def _mapped(system, model, q, qd):
    """(ℳ_euler, bias_euler) from opalg's crba/rnea on the free-joint model (module docstring)."""
    q_op, v_op = free_state(system, q, qd)
    J = euler_jacobian(system, q)
    h = 1e-30                          # complex step (a step, not a tolerance): J̇ q̇ = d/ds J(q + s q̇) q̇
    Jdqd = (euler_jacobian(system, q + 1j * h * qd) @ qd).imag / h
    Mv = opalg.crba(model, q_op)
    bv = opalg.rnea(model, q_op, v_op, np.zeros(model.nv))
    return J.T @ Mv @ J, J.T @ (bv + Mv @ Jdqd)


def _states(system, rng, n):
    """Random states with every z-x-z middle angle H_j3 in [0.3, π − 0.3] (chart regular)."""
    mid = [system.q.index(system.coordinate(j, "H", 3)) for j in free_bodies(system)]
    for _ in range(n):
        q, qd = rng.normal(size=(2, system.N))
        q[mid] = rng.uniform(0.3, np.pi - 0.3, len(mid))
        yield q, qd


@pytest.mark.verifies("K13", route="sympy ℳ/bias (z-x-z truss) vs opalg crba/rnea of the free-joint model through J")
def test_mass_matrix_and_bias_against_the_operator_route(free):
    system, run, Mf, Bf = free
    for q, qd in _states(system, np.random.default_rng(1), 4):
        M, b = _mapped(system, run.model, q, qd)
        assert_close(Mf(q), M, RTOL, "ℳ_euler")
        assert_close(Bf(q, qd), b, RTOL, "bias_euler")


def _random_system(kind, seed):
    """One free body (at the root of a chain, below a slide-hinge in a tree), 1-3 angle hinges, a
    slide along a random axis, a welded body, masses 0.05..500 kg, gravity."""
    rng = np.random.default_rng(seed)

    def body():
        m = 10 ** rng.uniform(-1.3, 2.7)
        a, b, c = rng.uniform(0.2, 2.0, 3)
        return Body(m, rng.normal(scale=0.3, size=3), np.diag([m * (b * b + c * c), m * (a * a + c * c),
                                                                m * (a * a + b * b)]) / 12)

    def off():
        return rng.normal(scale=0.5, size=3)

    ax = rng.normal(size=3)
    slide = Hinge(1, 1, [ax / np.linalg.norm(ax)], off())
    if kind == "chain":      # free root, a two-angle hinge, a welded tip
        T, hinges = [0, 1, 2], [Hinge(3, 3, offset=off()), Hinge(2, 0, offset=off()), Hinge(0, 0, offset=off())]
    else:                    # a slide-hinge at the root carrying a free body and a one-angle hinge
        T, hinges = [0, 1, 1, 2], [slide, Hinge(3, 3, offset=off()), Hinge(1, 0, offset=off()),
                                   Hinge(0, 0, offset=off())]
    return TreeSystem(T, hinges, [body() for _ in T], gravity=(0.3, -0.2, -9.81))


@pytest.mark.verifies("K13", route="sympy ℳ/bias vs opalg crba/rnea of the free-joint model through J")
@pytest.mark.parametrize("kind, seed", [("chain", 0), ("tree", 1)])
def test_random_trees_against_the_operator_route(kind, seed):
    system = _random_system(kind, seed)
    model = free_root_model(system)
    assert len(model.free_bodies) == 1 and model.nq == system.N + 1
    Mf, Bf = system.lambdify(method="recursive")
    for q, qd in _states(system, np.random.default_rng(seed + 10), 2):
        M, b = _mapped(system, model, q, qd)
        assert_close(Mf(q), M, RTOL, f"ℳ_euler ({kind})")
        assert_close(Bf(q, qd), b, RTOL, f"bias_euler ({kind})")


@pytest.mark.verifies("K13", route="sympy recursive bias vs opalg rnea (prescribed root)")
def test_recursive_bias_with_a_prescribed_root_against_rnea():
    """The outward-built accelerations with a moving root, slides and gravity (the root's six
    axes of to_model(with_root=True) driven with the prescribed q̈)."""
    root = RootMotion(position=(0.2 * sp.sin(t), 0.1 * t ** 2, 0), angles=(0.3 * t, 0.4 * sp.sin(t), 0.7))
    system = TreeSystem([0, 1, 1], [Hinge(1, 1, [[0, 0.6, 0.8]], (0, 0, 0.5)), Hinge(1, 1, None, (0.4, 0, 0)),
                                    Hinge(2, 0, None, (0, -0.3, 0.1))],
                        [Body(4.0, (0.1, 0.2, -0.1)), Body(2.0, (0.5, 0, 0.1)), Body(1.5, (0, 0.4, 0))],
                        gravity=(0.2, -0.1, -9.81), base=root)
    fr = system.lambdify(method="recursive")[1]
    model = system.to_model(with_root=True)
    for q, qd in np.random.default_rng(3).normal(size=(2, 2, system.N)):
        qb, qbd, qbdd = root_state(system, 1.7)
        tau = opalg.rnea(model, np.r_[qb, q], np.r_[qbd, qd], np.r_[qbdd, np.zeros(system.N)])[6:]
        assert_close(fr(q, qd, 1.7), tau, RTOL, "recursive bias vs rnea")


@pytest.mark.verifies("K13", route="free_state vs sympy pose and partial velocities of the truss")
def test_state_map_against_the_symbolic_kinematics(free):
    """free_state's (q_op, v_op) against sympy's pose and partial velocities of the truss."""
    system, run, _, _ = free
    kin = system.kinematics()[1]
    f = sp.lambdify([system.q, system.qd], [kin["R"], kin["rO"], kin["Jw"] * sp.Matrix(system.qd),
                                            kin["Ju"] * sp.Matrix(system.qd)])
    for q, qd in _states(system, np.random.default_rng(2), 3):
        R, p, w, u = (np.array(x, float) for x in f(q, qd))
        q_op, v_op = free_state(system, q, qd)
        assert_close(opalg.spatial.quaternion.rotation(q_op[3:7]), R, RTOL, "truss R")
        assert_close(q_op[:3], p[:, 0], RTOL, "truss origin")
        assert_close(v_op[:6], np.r_[w[:, 0], u[:, 0]], RTOL, "truss body twist")
        assert np.array_equal(q_op[7:], q[6:]) and np.array_equal(v_op[6:], qd[6:])   # exact: copies


@pytest.mark.verifies("K13", route="Euler-route run (sympy) vs operator-route run (quaternion, opalg ABA)")
def test_trajectories_of_the_two_routes_agree(free):
    system, run, _, _ = free
    R_e, p_e = zip(*(pose_function(system)(q) for q in run.euler.q))
    R_o, p_o = zip(*(run.poses()(q) for q in run.q))
    assert np.abs(np.array(R_e) - np.array(R_o)).max() < 1e-7          # every body, truss included
    assert np.abs(np.array(p_e) - np.array(p_o)).max() < 1e-7
    assert np.abs(run.q[:, 7:] - run.euler.q[:, 6:]).max() < 1e-7      # hinge angles
    assert run.euler.energy_error < 1e-8
    # the drawing helpers take the operator route's poses: the same outlines, the truss seen from above
    a = box_outlines(run.poses(), run.q[-1], run.setup.boxes, view="xz")
    b = box_outlines(pose_function(system), run.euler.q[-1], run.setup.boxes, view="xz")
    for j in a:          # the same hull; its first vertex may differ, so compare the sorted vertices
        pa, pb = a[j][np.lexsort(a[j].round(6).T)], b[j][np.lexsort(b[j].round(6).T)]
        assert pa.shape == pb.shape and np.abs(pa - pb).max() < 1e-7
    top = box_outlines(run.poses(), run.q[0], {1: run.setup.boxes[1]}, view="xz")[1]
    assert_close(np.ptp(top, 0), [0.5, 0.5], TOL_EXTENT, "truss top-view extent")


@pytest.mark.verifies("K13", route="h_0 (opalg.algorithms.momentum) and sympy's truss rows of ℳq̇ vs zero")
def test_momentum_stays_zero_and_the_truss_turns(free):
    system, run, Mf, _ = free
    model = run.model
    # scale: the momentum of the hinge motions alone (truss held still), which the truss's motion cancels
    scale = max(np.abs(spatial_momentum(model, q, np.r_[np.zeros(6), v[6:]])).max() for q, v in zip(run.q, run.v))
    assert scale > 1.0
    assert np.abs(run.momentum).max() < 1e-8 * scale
    conj = np.array([Mf(q)[:6] @ qd for q, qd in zip(run.euler.q, run.euler.v)])   # ∂T/∂(truss rates)
    assert np.abs(conj).max() < 1e-8 * scale
    assert run.truss_angle[-1] > 1e-2                         # the truss really turns ...
    assert np.linalg.norm(run.q[-1, :3]) > 1e-3               # ... and moves
    assert np.abs(np.linalg.norm(run.q[:, 3:7], axis=1) - 1.0).max() <= TOL_UNIT


def test_errors_name_the_free_root():
    system = deployable_example("deploy", base="free")
    with pytest.raises(StateError, match="floats freely"):
        root_state(system, 0.0)
    with pytest.raises(StateError, match="floats freely"):
        system.to_model(with_root=True)
    with pytest.raises(ModelError, match="dof='deploy' only"):
        deployable_example("rot3", base="free")
    with pytest.raises(ModelError, match="free-floating root"):
        TreeSystem([0], [Hinge(1)], [Body(1)], base="free")
    with pytest.raises(ModelError, match="no body of this system is on a free"):
        free_root_model(deployable_example("deploy"))
    with pytest.raises(StateError, match=r"shape \(12,\)"):
        free_state(system, np.zeros(11), np.zeros(12))
    with pytest.raises(StateError, match="non-finite"):
        euler_jacobian(system, np.r_[np.nan, np.zeros(11)])
    with pytest.raises(StateError, match="base='free'"):
        free_deployment(system=deployable_example("deploy"), euler=False)
    with pytest.raises(StateError, match="t_end"):
        free_deployment(t_end=-1.0)
    with pytest.raises(StateError, match="bias_method"):
        system.simulate(deployment_setup(system).stowed, np.zeros(12), (0, 1), bias_method="newton")
