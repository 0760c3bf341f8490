"""Free-floating systems (docs/REFERENCE.md K11, K12): base velocity at constant momentum, the
generalized Jacobian, the base's reaction to a prescribed arm motion, and simulation on the
configuration manifold.

Independent routes: the dense root rows of ``crba`` (ℳ_bb, ℳ_bm and a dense solve) for the
O(n) sweeps; the complex-step derivative of a body point's world pose along
``integrate(q, t [v_b; θ̇])`` for the generalized Jacobian; the full dynamics by ``opalg.hybrid``
(base passive with zero force, arm accelerations prescribed) against the momentum-route
kinematic integration; a plain ``solve_ivp`` of ``aba`` for a fixed base; conservation laws.
Models: seeded random floating chains and trees, every joint kind (``joints="all"``), body masses
and inertias scaled by factors 10^U(−2, 2) (mass ratios up to 10⁴).
"""

from __future__ import annotations

import numpy as np
import pytest

import opalg
from opalg.errors import ModelError, StateError
from opalg.floating import (arm_dofs, base_reaction, base_velocity, coupling_inertia,
                            generalized_jacobian, simulate)
from opalg.momentum import spatial_momentum

from helpers import assert_close, no_string_evaluated, rel_err  # noqa: F401

EPS = np.finfo(float).eps
H = 1e-20   # complex step: exact to rounding
CASES = [("chain", 1, 5), ("chain", 2, 7), ("tree", 3, 6), ("tree", 4, 8)]


def wide(model, seed):
    """The same mechanism with each body's mass and inertia scaled by 10^U(−2, 2)."""
    rng = np.random.default_rng(seed)
    inert = []
    for i in model.inertias:
        s = 10.0 ** rng.uniform(-2, 2)
        inert.append(opalg.Inertia(s * float(i.mass), i.com, s * np.asarray(i.I_com, float)))
    return opalg.Model(model.parents, model.joints, model.placements, inert, model.gravity)


def floating(kind, seed, n):
    return wide(opalg.random_model(n, kind, seed=seed, joints="all", floating=True), seed + 100)


def state(model, seed):
    rng = np.random.default_rng(seed)
    q = opalg.integrate(model, opalg.neutral(model), rng.normal(size=model.nv))
    return q, rng.normal(size=model.nv - 6), rng.normal(size=6)


def dense_blocks(model, q):
    M = opalg.crba(model, q)
    arm = arm_dofs(model, 0)
    return M[:6, :6], M[:6][:, arm], M


# --------------------------------------------------------------------------- base velocity
@pytest.mark.parametrize("kind, seed, n", CASES)
def test_base_velocity_gives_the_momentum(kind, seed, n):
    """h_0 of [v_b; θ̇] is h; v_b agrees with a dense solve of the root rows of crba.

    Tolerance: v_b solves ℳ_bb v_b = rhs with cond(ℳ_bb) up to ~1e5 here (mass ratios 1e4), so
    its relative error is ≲ cond·eps; 100·cond·eps bounds both routes' rounding.  The momentum
    is a product (no solve): 1e-12.
    """
    m = floating(kind, seed, n)
    q, qd, h = state(m, seed)
    Mbb, Mbm, M = dense_blocks(m, q)
    cond = np.linalg.cond(Mbb)
    tol = 100 * cond * EPS
    v = base_velocity(m, q, qd, h, full=True)
    assert_close(v[arm_dofs(m, 0)], qd, 0, "the arm rates are kept")
    hr = np.linalg.solve(opalg.kinematics.body_kinematics(m, q).Xup[0].T, h)
    assert_close(spatial_momentum(m, q, v), h, 1e-12 * cond, "h_0 of [v_b; θ̇]")
    assert_close(M[:6] @ v, hr, 1e-12 * cond, "root rows of crba times v")
    vb_dense = np.linalg.solve(Mbb, hr - Mbm @ qd)
    assert_close(base_velocity(m, q, qd, h), vb_dense, tol, "v_b vs dense solve")
    v0 = base_velocity(m, q, qd)                    # zero momentum by default
    assert_close(v0, np.linalg.solve(Mbb, -Mbm @ qd), tol, "v_b at h = 0")
    assert np.linalg.norm(spatial_momentum(m, q, base_velocity(m, q, qd, full=True))) \
        < 1e-12 * cond * np.linalg.norm(Mbm @ qd)
    # batched: two states at once
    q2, qd2, h2 = state(m, seed + 1)
    got = base_velocity(m, np.stack([q, q2]), np.stack([qd, qd2]), np.stack([h, h2]))
    assert_close(got[1], base_velocity(m, q2, qd2, h2), 1e-14, "batched v_b")


@pytest.mark.parametrize("kind, seed, n", CASES[::2])
def test_coupling_inertia_is_the_root_rows_of_crba(kind, seed, n):
    """ℳ_bb = R(r), ℳ_bm blocks (ʲX_r)ᵀR(j)S(j) against crba: products of the same data, 1e-13."""
    m = floating(kind, seed, n)
    q = state(m, seed)[0]
    Mbb, Mbm, _ = dense_blocks(m, q)
    got_bb, got_bm = coupling_inertia(m, q)
    assert_close(got_bb, Mbb, 1e-13, "ℳ_bb")
    assert_close(got_bm, Mbm, 1e-13, "ℳ_bm")


# --------------------------------------------------------------------------- generalized Jacobian
def world_twist_cs(model, q, v, body, point):
    """(ω, ṗ) of a body point in world axes, by complex step of body_poses along integrate(q, t v)."""
    R0, p0 = opalg.body_poses(model, q)
    R1, p1 = opalg.body_poses(model, opalg.integrate(model, q, v, 1j * H))
    Rd = R1[body].imag / H
    pd = (p1[body] + R1[body] @ point).imag / H
    W = Rd @ R0[body].T
    return np.array([W[2, 1], W[0, 2], W[1, 0]]), pd


@pytest.mark.parametrize("kind, seed, n", CASES)
def test_generalized_jacobian_by_complex_step_and_dense(kind, seed, n):
    """J*θ̇ is the velocity of a body point when the base floats with zero momentum.

    Complex step is exact to rounding; the v_b in it and J* share the cond(ℳ_bb) of one solve, so
    the tolerance is 100·cond·eps as for base_velocity.  The dense route uses crba and a solve.
    """
    m = floating(kind, seed, n)
    rng = np.random.default_rng(seed + 7)
    q = state(m, seed)[0]
    Mbb, Mbm, _ = dense_blocks(m, q)
    tol = 100 * np.linalg.cond(Mbb) * EPS
    for body in (0, m.n - 1, int(rng.integers(1, m.n))):
        point = rng.uniform(-0.5, 0.5, size=3)
        Js = generalized_jacobian(m, q, body, point)
        J = opalg.frame_jacobian(m, q, (body, point))
        dense = J[:, arm_dofs(m, 0)] - J[:, :6] @ np.linalg.solve(Mbb, Mbm)
        assert_close(Js, dense, tol, f"J* vs dense (body {body})")
        R = opalg.body_poses(m, q)[0][body]
        for _ in range(2):
            qd = rng.normal(size=m.nv - 6)
            w, pd = world_twist_cs(m, q, base_velocity(m, q, qd, full=True), body, point)
            V = Js @ qd
            assert_close(np.concatenate([R @ V[:3], R @ V[3:]]), np.concatenate([w, pd]), tol,
                         f"J*θ̇ vs complex step (body {body})")
    assert generalized_jacobian(m, q, 2).shape == (6, m.nv - 6)
    Q = np.stack([q, state(m, seed + 1)[0]])
    assert_close(generalized_jacobian(m, Q, 2)[0], generalized_jacobian(m, q, 2), 1e-14, "batched J*")


# --------------------------------------------------------------------------- errors
def test_base_velocity_refuses_models_and_sizes():
    fixed = opalg.random_model(4, seed=0)
    with pytest.raises(ModelError, match="no free joint"):
        base_velocity(fixed, np.zeros(fixed.nq), np.zeros(fixed.nv - 6 if fixed.nv > 6 else 1))
    two = opalg.random_model(5, "tree", seed=1, n_roots=2, floating=True)
    with pytest.raises(ModelError, match="2 free joints"):
        generalized_jacobian(two, opalg.neutral(two), 3)
    base = opalg.random_model(3, seed=2, floating=True)
    below = opalg.Model([-1, 0, 1], [base.joints[1], opalg.FreeJoint("fj"), base.joints[2]],
                        base.placements, base.inertias)
    with pytest.raises(ModelError, match="not on a root"):
        base_velocity(below, opalg.neutral(below), np.zeros(below.nv - 6))
    forest = opalg.Model([-1, -1], [opalg.FreeJoint("a"), opalg.Joint("R", [0, 0, 1.0], "b")],
                         base.placements[:2], base.inertias[:2])
    with pytest.raises(ModelError, match="2 roots"):
        base_velocity(forest, opalg.neutral(forest), np.zeros(1))
    q = opalg.neutral(base)
    with pytest.raises(StateError, match="qd_joints has shape"):
        base_velocity(base, q, np.zeros(base.nv))
    with pytest.raises(StateError, match="h has shape"):
        base_velocity(base, q, np.zeros(base.nv - 6), h=np.zeros(3))
    with pytest.raises(StateError, match="quaternion"):
        generalized_jacobian(base, q * 2, 1)
    with pytest.raises(StateError, match="no such body"):
        generalized_jacobian(base, q, 7)
