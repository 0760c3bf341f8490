"""opalg.symbolic: prescribed root motion, simulation, energy balance, drawing helpers.

Independent routes (on the deployment model, a slides tree and seeded random trees with
shuffled labels, welded bodies and every NR, NT in 0..3):
* a prescribed root against opalg's RNEA/CRBA on ``to_model(with_root=True)``, whose six
  leading axes are driven with the prescribed q̈ (recursions vs sympy Lagrange/Kane);
* physics without opalg: a root in uniform translation changes nothing (Galilean
  invariance), a uniformly accelerated root acts like gravity −a;
* the symbolic simulation (through opalg.simulate.integrate) against a run of opalg's ABA on the
  same model integrated by scipy's solve_ivp (another stepper: not the seam);
* the energy balance T + U_springs + W_dampers − W_applied = const along the run.

Tolerances: algebraic agreements relative (helpers.assert_close), measured bounds (the constants'
``why``); trajectories 1e-7 (both integrations at rtol = atol = 1e-10 over a few seconds;
observed ~1e-9); energy drift 1e-8 (observed ~1e-11).
"""

from __future__ import annotations

import functools

import numpy as np
import pytest
import scipy.integrate
import sympy as sp

import opalg
from opalg.symbolic import (Body, Hinge, RootMotion, SingularConfiguration, TreeSystem, box_inertia,
                            box_outlines, carriers, deployable_example, deployment_setup, pose_function,
                            root_state, t)
from opalg.symbolic import numeric

from helpers import assert_close, measured, trig_zero
from symbolic_shared import spinning_deploy

_K3 = "under 3 BLAS/SIMD kernels"
#: Lambdified sympy ℳ and bias vs opalg's crba/rnea/bias, and sympy vs sympy (Lagrange/Kane,
#: moving vs equivalent fixed root): measured.
RTOL = measured(2e-13, 1.04e-14, "200 random states of the moving-root deploy and slides trees and of "
                f"each equivalent-root pair, 20 of each of 20 random trees (seeds 0-19) {_K3}")
#: Poses, mass centres and the root state (O(1) sizes, relative to max(size, 1)): measured.
TOL_POSE = measured(1e-14, 6.5e-16, f"200 random states and times of deploy and slides, 40 evalf'd centroids {_K3}")
#: A box outline's shoelace area (vertices metres off the origin: cancellation): measured.
TOL_AREA = measured(1e-12, 3.8e-14, f"200 random gimbal-zero top views of the 6 boxes and the test's side view {_K3}")


def _slides_tree(base="fixed", gravity=(0.2, -0.1, -9.81)):
    """3 bodies on a tree (T = 0, 1, 1) with slides and 1-3 Euler angles per hinge."""
    bodies = [Body(4.0, (0.1, 0.2, -0.1), [[1.0, 0.1, 0], [0.1, 0.8, 0.05], [0, 0.05, 0.6]]),
              Body(2.0, (0.5, 0, 0.1), np.diag([0.1, 0.3, 0.35])),
              Body(1.5, (0, 0.4, 0), np.diag([0.2, 0.05, 0.22]))]
    hinges = [Hinge(3, 1, [[0, 0.6, 0.8]], (0, 0, 0.5)), Hinge(2, 2, [[1, 0, 0], [0, 0, 1]], (0.4, 0, 0)),
              Hinge(1, 1, [[0, 1, 0]], (0, -0.3, 0.1))]
    return TreeSystem([0, 1, 1], hinges, bodies, gravity=gravity, base=base)


GENERAL_ROOT = RootMotion(position=(0.2 * sp.sin(t), 0.1 * t ** 2, -0.3 * sp.cos(2 * t)),
                          angles=(0.3 * t, 0.4 * sp.sin(t), 0.7 + 0.2 * t))


# A TreeSystem is a pure function of its arguments and caches its derivations and generated
# functions on itself: the systems several tests use are built once per process (the tests
# only read them), so each derivation and lambdify runs once.
@functools.cache
def _slides_general():
    return _slides_tree(GENERAL_ROOT)


@functools.cache
def _slides_fixed():
    return _slides_tree()


@functools.cache
def _deploy():
    return deployable_example("deploy")


@functools.cache
def _deploy_poses():
    return pose_function(_deploy())


def _root_check(system, n_states=3, seed=0, lagrange=False):
    Mf, Bf = system.lambdify()
    fl = system.lambdify(method="lagrange")[1] if lagrange else None
    model = system.to_model(with_root=True)
    assert model.ndof == system.N + 6
    rng = np.random.default_rng(seed)
    for _ in range(n_states):
        q, qd = rng.normal(size=(2, system.N))
        time = rng.uniform(0, 5)
        qb, qbd, qbdd = root_state(system, time)
        Q, QD = np.r_[qb, q], np.r_[qbd, qd]
        tau = opalg.rnea(model, Q, QD, np.r_[qbdd, np.zeros(system.N)])[6:]
        b = Bf(q, qd, time)
        assert_close(b, tau, RTOL, "bias vs rnea (prescribed root)")
        assert_close(Mf(q), opalg.crba(model, Q)[6:, 6:], RTOL, "ℳ vs crba (prescribed root)")
        if fl is not None:
            assert_close(fl(q, qd, time), b, RTOL, "bias Lagrange vs Kane")


# ------------------------------------------------------------------ prescribed root
@pytest.mark.parametrize("make, lagrange", [
    (lambda b: deployable_example("deploy", gravity=(0.1, -0.2, -9.81), base=b), True),
    (lambda b: _slides_general(), False),        # b is GENERAL_ROOT; the literal Lagrange form costs 15 s here
], ids=["deploy", "slides-tree"])
def test_prescribed_root_against_rnea(make, lagrange):
    _root_check(make(GENERAL_ROOT), lagrange=lagrange)


def test_prescribed_root_exact_single_body():
    """One body on a 2-angle hinge under a spinning, translating root: symbolic bias equals
    opalg's RNEA with sympy entries, exactly."""
    w, a = sp.symbols("w a", real=True)
    base = RootMotion(position=(a * t ** 2 / 2, 0, 0), angles=(w * t, 0, 0))
    m, c, A, B, C = sp.symbols("m c A B C", positive=True)
    s = TreeSystem([0], [Hinge(2, 0, None, (0, c, 0))], [Body(m, (c, 0, 0), sp.diag(A, B, C))], base=base)
    model = s.to_model(with_root=True)
    vals = sp.Matrix(list(base.position) + list(base.angles))
    Q = np.array(list(vals) + s.q, dtype=object)
    QD = np.array(list(vals.diff(t)) + s.qd, dtype=object)
    QDD = np.array(list(vals.diff(t, 2)) + [0, 0], dtype=object)
    tau = sp.Matrix(opalg.rnea(model, Q, QD, QDD)[6:].tolist())
    for method in ("kane", "lagrange"):
        assert all(trig_zero(e) for e in s.bias(method) - tau), method


def _same_bias(a, b, seed):
    """a's bias (at random times) equals b's (a fixed root) on random states.

    Only the bias functions are generated (``lambdify()`` would also print M, unused here)."""
    Ba, Bb = (numeric._bias_function(s, None, "kane") for s in (a, b))
    rng = np.random.default_rng(seed)
    for _ in range(3):
        q, qd = rng.normal(size=(2, a.N))
        assert_close(Ba(q, qd, rng.uniform(0, 9)), Bb(q, qd), RTOL, "bias, moving vs equivalent root")


def test_root_in_uniform_translation_changes_nothing():
    """Galilean invariance: B0 moving at constant velocity gives the fixed-root equations."""
    _same_bias(_slides_tree(RootMotion(position=(0.7 * t, -0.2 * t, 1.5 + 0.4 * t))), _slides_fixed(), seed=2)


def test_uniformly_accelerated_root_acts_like_gravity():
    """B0 accelerating at a (inertial) is, for the tree, gravity g − a (equivalence principle)."""
    g, acc = np.array([0.2, -0.1, -9.81]), np.array([1.5, -0.5, 2.0])
    root = RootMotion(position=tuple(sp.Rational(1, 2) * sp.nsimplify(x) * t ** 2 for x in acc))
    _same_bias(_slides_tree(root, gravity=g), _slides_tree(gravity=g - acc), seed=3)


def test_root_state_and_errors():
    s = _slides_general()
    qb, qbd, qbdd = root_state(s, 0.5)
    for got, want in ((qb, [0.2 * np.sin(0.5), 0.025, -0.3 * np.cos(1.0), 0.15, 0.4 * np.sin(0.5), 0.8]),
                      (qbd, [0.2 * np.cos(0.5), 0.1, 0.6 * np.sin(1.0), 0.3, 0.4 * np.cos(0.5), 0.2]),
                      (qbdd, [-0.2 * np.sin(0.5), 0.2, 1.2 * np.cos(1.0), 0, -0.4 * np.sin(0.5), 0])):
        assert_close(got, want, TOL_POSE, "root state", scale=1.0)
    with pytest.raises(ValueError, match="fixed"):
        root_state(_slides_fixed(), 0.0)
    with pytest.raises(ValueError, match="with_root"):
        _slides_fixed().to_model(with_root=True)
    w = sp.Symbol("w")
    spin = _slides_tree(RootMotion(angles=(w * t, 0, 0)))
    with pytest.raises(ValueError, match="w"):
        root_state(spin, 1.0)
    assert np.allclose(root_state(spin, 2.0, subs={w: 0.5})[0][3], 1.0)


@pytest.mark.parametrize("base, msg", [
    ("prescribed", "RootMotion"),
    (42, "RootMotion"),
    (RootMotion(position=(sp.Function("f")(t), 0, 0)), "explicit function of t"),
    (RootMotion(angles=(sp.Derivative(sp.Function("f")(t), t), 0, 0)), "explicit function of t"),
    (RootMotion(position=(0, 0)), "root position"),
    (RootMotion(angles=(sp.Symbol("H1_1", real=True), 0, 0)), "coordinates"),
])
def test_bad_root_motion(base, msg):
    with pytest.raises(ValueError, match=msg):
        TreeSystem([0], [Hinge(1)], [Body(1.0)], base=base)


# ------------------------------------------------------------------ poses and drawing
def test_pose_function_against_opalg_body_poses():
    for system, with_root in ((_deploy(), False), (_slides_general(), True)):
        poses = _deploy_poses() if system is _deploy() else pose_function(system)
        model = system.to_model(with_root=with_root)
        rng = np.random.default_rng(5)
        q, time = rng.normal(size=system.N), 1.3
        qfull = np.r_[root_state(system, time)[0], q] if with_root else q
        R, p = poses(q, time)
        Rs, ps = opalg.body_poses(model, qfull)
        assert not with_root or carriers(system, with_root)[0] == 3   # B0: after the root's last axis, z(H01)
        for j in range(0 if with_root else 1, system.n + 1):
            k = carriers(system, with_root)[j]
            assert_close(R[j], Rs[k], TOL_POSE, "R_j", scale=1.0)
            assert_close(p[j], ps[k], TOL_POSE, "origin of B_j", scale=1.0)


def _area(poly):
    x, y = poly[:, 0], poly[:, 1]
    return 0.5 * abs(np.dot(x, np.roll(y, -1)) - np.dot(y, np.roll(x, -1)))


def test_box_outlines_top_view_areas():
    """With the gimbal at zero every hinge turns about the vertical, so each box's top view is
    an a x b rectangle whatever the fold angles; its centre is the body's mass centre."""
    system = _deploy()
    setup = deployment_setup(system)
    poses = _deploy_poses()
    kin = system.kinematics()
    for q in (setup.stowed, setup.open, np.array([0, 0, 0.3, -1.0, 2.0, -0.7])):
        polys = box_outlines(poses, q, setup.boxes, view="xy")
        sub = dict(zip(system.q, q))
        for j, (c, e) in setup.boxes.items():
            assert_close(_area(polys[j]), e[0] * e[1], TOL_AREA, "top-view area")
            if j:
                rC = np.array(kin[j]["rC"].subs(sub).evalf().tolist(), float)[:2, 0]
                assert_close(polys[j].mean(0), rC, TOL_POSE, "outline centre", scale=1.0)
    side = box_outlines(poses, setup.open, setup.boxes, view="xz")
    assert_close(_area(side[2]), 2.0 * 1.2, TOL_AREA, "side-view area")
    with pytest.raises(ValueError, match="view"):
        box_outlines(poses, setup.open, setup.boxes, view="top")


# ------------------------------------------------------------------ simulation
def _opalg_run(system, setup, t_end, t_eval):
    """The same deployment integrated with opalg's ABA (hinge torques −k q − c q̇): (q, q̇) samples."""
    model = system.to_model()

    def rhs(_, y):
        q, qd = y[:6], y[6:]
        return np.r_[qd, opalg.aba(model, q, qd, setup.torques(q, qd))]

    sol = scipy.integrate.solve_ivp(rhs, (0, t_end), np.r_[setup.stowed, np.zeros(6)], method="DOP853",
                                    rtol=1e-10, atol=1e-10, t_eval=t_eval)
    return sol.y[:6].T, sol.y[6:].T


def test_deployment_matches_opalg_aba_and_conserves_energy():
    system = _deploy()
    setup = deployment_setup(system)
    t_eval = np.linspace(0, 4, 9)
    run = system.simulate(setup.stowed, np.zeros(6), (0, 4), springs=setup.springs, dampers=setup.dampers,
                          t_eval=t_eval)
    assert run.status == "completed" and run.q.shape == run.v.shape == (9, 6) and np.allclose(run.t, t_eval)
    q_ref, v_ref = _opalg_run(system, setup, 4, t_eval)
    assert np.abs(run.q - q_ref).max() < 1e-7
    assert np.abs(run.v - v_ref).max() < 1e-7
    assert run.energy_error < 1e-8
    # energy flows from the springs to motion and into the dampers
    assert run.spring[0] > 10 * run.spring[-1] and run.dissipated[-1] > 0
    assert np.all(np.diff(run.dissipated) >= 0)


def test_deployment_reaches_the_open_pose():
    system = _deploy()
    setup = deployment_setup(system)
    run = system.simulate(setup.stowed, np.zeros(6), (0, 60), springs=setup.springs, dampers=setup.dampers,
                          t_eval=[60.0])
    assert np.degrees(np.abs(run.q[-1] - setup.open)).max() < 1.0
    assert run.energy_error < 1e-8


def test_applied_work_enters_the_balance():
    """A force on the outer panel and a torque on the platform: W_applied closes the balance."""
    system = _deploy()
    setup = deployment_setup(system)
    H = system.q
    run = system.simulate(setup.stowed, np.zeros(6), (0, 3), springs=setup.springs, dampers=setup.dampers,
                          forces={5: (0, 2.0, 0.5)}, moments={1: (0, 0, 5 * sp.sin(t))},
                          tau=sp.Matrix([0, 0, 0, -0.3 * H[3], 0, 0]), t_eval=np.linspace(0, 3, 7))
    assert abs(run.applied[-1]) > 1e-2 * run.kinetic.max()       # the loads do work ...
    assert run.energy_error < 1e-8                               # ... and the balance counts it


def test_prescribed_root_simulation():
    """A spinning root: no energy balance (the root does work), but the run is the opalg ABA
    of the with-root model with the root axes' accelerations prescribed."""
    system = spinning_deploy()                    # the root spins at 0.2 rad/s
    setup = deployment_setup(system)
    run = system.simulate(setup.stowed, np.zeros(6), (0, 2), springs=setup.springs, dampers=setup.dampers,
                          t_eval=[0.0, 1.0, 2.0])
    assert not {"energy", "energy_error"} & set(run.extras)     # no balance to report
    with pytest.raises(AttributeError, match="energy_error"):
        run.energy_error
    model = system.to_model(with_root=True)

    def rhs(time, y):
        q, qd = y[:6], y[6:]
        qb, qbd, qbdd = root_state(system, time)
        Q, QD = np.r_[qb, q], np.r_[qbd, qd]
        M = opalg.crba(model, Q)
        b = opalg.rnea(model, Q, QD, np.r_[qbdd, np.zeros(6)])[6:]
        return np.r_[qd, np.linalg.solve(M[6:, 6:], setup.torques(q, qd) - b)]

    sol = scipy.integrate.solve_ivp(rhs, (0, 2), np.r_[setup.stowed, np.zeros(6)], method="DOP853",
                                    rtol=1e-10, atol=1e-10, t_eval=[0.0, 1.0, 2.0])
    assert np.abs(run.q - sol.y[:6].T).max() < 1e-7


def test_singular_stowed_pose_is_refused_before_integrating():
    """z-x-z angles at H3 = 0 make M singular: a clear error naming the hinges, at t0."""
    system = deployable_example("rot3")
    with pytest.raises(SingularConfiguration, match=r"t = 0.*hinge\(s\) \[1, 2, 3, 4, 5\].*H_j3"):
        system.simulate(np.zeros(15), np.zeros(15), (0, 1))


@pytest.mark.parametrize("kwargs, msg", [
    (dict(q0=np.zeros(5)), r"q0 must have shape \(6,\)"),
    (dict(v0=[0, 0, 0, 0, 0, np.nan]), "v0 has non-finite entries at indices \\[5\\]"),
    (dict(springs={sp.Symbol("x"): (1.0, 0.0)}), "not a generalized coordinate"),
    (dict(dampers={sp.Symbol("H9_1", real=True): 1.0}), "not a generalized coordinate"),
    (dict(forces={7: (1, 0, 0)}), "force on body 7: no such body"),
    (dict(moments={0: (1, 0, 0)}), "moment on body 0: no such body"),
    (dict(forces={2: (1, 0)}), "force on body 2"),
    (dict(tau=sp.Matrix([sp.Symbol("F"), 0, 0, 0, 0, 0])), "unset symbolic parameters \\['F'\\]"),
    (dict(tau=sp.Matrix([0, 0, 0])), r"tau.*\(6, 1\)"),
    (dict(t_span=(1, 1)), r"t_span must be finite with t1 > t0"),
    (dict(t_span="ab"), r"t_span must be a pair of numbers"),
    (dict(t_span=(0, 1, 2)), r"t_span must be a pair \(t0, t1\)"),
    (dict(method="Euler"), r"integrate: method must be one of"),
    (dict(rtol=0.0), r"integrate: rtol must be a number in \(0, 1\)"),
])
def test_simulate_bad_input(kwargs, msg):
    system = _deploy()
    args = dict(q0=deployment_setup(system).stowed, v0=np.zeros(6), t_span=(0, 1))
    args.update(kwargs)
    q0, v0, span = args.pop("q0"), args.pop("v0"), args.pop("t_span")
    with pytest.raises(ValueError, match=msg):
        system.simulate(q0, v0, span, **args)


def test_setup_torques():
    """The numeric hinge torques are the spring and damper generalized forces."""
    system = _deploy()
    setup = deployment_setup(system)
    rng = np.random.default_rng(8)
    q, qd = rng.normal(size=(2, 6))
    Q = system.generalized_forces(springs=setup.springs, dampers=setup.dampers)
    Qnum = np.array(Q.subs({**dict(zip(system.q, q)), **dict(zip(system.qd, qd))}), dtype=float).ravel()
    # exact: q0 = 0, so both are −k q − c q̇, each product and the sum correctly rounded (numpy
    # doubles; sympy's 53-bit Floats)
    np.testing.assert_array_equal(setup.torques(q, qd), Qnum)


def test_unset_parameters_and_setup_errors():
    m = sp.Symbol("m", positive=True)
    s = TreeSystem([0], [Hinge(1)], [Body(m, (1, 0, 0))])
    with pytest.raises(ValueError, match=r"unset symbolic parameters \['m'\]"):
        s.lambdify()
    Mf, _ = s.lambdify(subs={m: 2.0})
    assert np.allclose(Mf([0.3]), [[2.0 + 1.0]])          # m c² + I_zz
    with pytest.raises(ValueError, match="deploy"):
        deployment_setup(deployable_example("rot3"))
    with pytest.raises(ValueError, match="'rot3', 'full6' or 'deploy'"):
        deployable_example("rot2")
    deploy = _deploy()
    with pytest.raises(ValueError, match="no coordinate H1_2"):
        deploy.coordinate(1, "H", 2)
    assert deploy.rate(deploy.coordinate(1, "H", 3)) == sp.Symbol("Hd1_3", real=True)
    with pytest.raises(ValueError, match="not a generalized coordinate"):
        deploy.rate(sp.Symbol("x"))


# ------------------------------------------------------------------ random trees
def _random_tree(seed):
    """A random rooted tree: 2-4 bodies with shuffled labels (T need not be sorted), every
    hinge with random NR, NT in 0..3 (total N in 1..10), random unit slide axes, offsets and
    physically valid inertias (rotated boxes); every other seed has a random moving root."""
    from opalg.model.builders import random_rotation
    rng = np.random.default_rng(seed)
    n = int(rng.integers(2, 5))
    while True:
        labels = rng.permutation(n) + 1                 # labels[k] = label of the k-th body built
        T = [0] * n
        for k in range(1, n):
            T[labels[k] - 1] = int(labels[rng.integers(0, k)])
        nr, nt = rng.integers(0, 4, n), rng.integers(0, 4, n)
        if 1 <= (nr + nt).sum() <= 10:
            break
    hinges, bodies = [], []
    for j in range(n):
        axes = [v / np.linalg.norm(v) for v in rng.normal(size=(3, 3))]
        while nt[j] > 1 and np.linalg.matrix_rank(np.array(axes[:nt[j]]), 1e-6) < nt[j]:
            axes = [v / np.linalg.norm(v) for v in rng.normal(size=(3, 3))]
        hinges.append(Hinge(int(nr[j]), int(nt[j]), axes[:nt[j]] if nt[j] else None, rng.normal(size=3)))
        m = rng.uniform(0.5, 3.0)
        R = random_rotation(rng)
        J = R @ np.diag(np.diag(box_inertia(m, *rng.uniform(0.1, 1.0, 3)))) @ R.T
        bodies.append(Body(m, rng.normal(size=3) * 0.3, (J + J.T) / 2))
    base = GENERAL_ROOT if seed % 2 else "fixed"
    return TreeSystem(T, hinges, bodies, gravity=rng.normal(size=3), base=base)


@pytest.mark.parametrize("seed", range(6))
def test_random_trees_against_opalg(seed):
    """Random topology vectors and hinge choices: M and bias against CRBA/RNEA of to_model
    (with the root axes when the root moves)."""
    system = _random_tree(seed)
    if system.prescribed:
        _root_check(system, n_states=2, seed=seed)
        return
    Mf, Bf = system.lambdify()
    model = system.to_model()
    rng = np.random.default_rng(100 + seed)
    for _ in range(2):
        q, qd = rng.normal(size=(2, system.N))
        assert_close(Mf(q), opalg.crba(model, q), RTOL, "ℳ vs crba")
        assert_close(Bf(q, qd), opalg.bias(model, q, qd), RTOL, "bias vs opalg.bias")
