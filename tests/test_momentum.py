"""Spatial momentum, centre of mass and centroidal momentum matrix (docs/REFERENCE.md K10).

Independent routes: a per-body sum in inertial coordinates from body poses and the
complex-step body twists (no recursion), the root rows of ℳ for a free root, Pinocchio's
``ccrba`` and ``centerOfMass``, and conservation along a free-floating simulation without
gravity (scipy RK45 on the raw quaternion ODE, rtol 1e-11: the momentum drifts at that
order; 1e-8 leaves room for the step count).
"""

from __future__ import annotations

import numpy as np
import pinocchio as pin  # the oracle is required
import pytest
from scipy.integrate import solve_ivp

import opalg
from opalg.algorithms.momentum import center_of_mass, centroidal_momentum_matrix, spatial_momentum
from opalg.pinocchio_bridge import build_pinocchio, motion_to_opalg
from opalg.spatial.quaternion import multiply, rotation

from helpers import Tol, assert_close, measured, no_string_evaluated  # noqa: F401
from test_free_joint import body_twists_cs, floating, state

CASES = [("chain", 1, 5), ("tree", 3, 6), ("tree", 4, 8)]

#: Where the measured bounds come from (throwaway scripts in /tmp, not committed): these tests'
#: comparisons under the default, Sandybridge and Prescott OpenBLAS kernels (numpy's AVX2 off).
OVER = ("240 random floating and fixed-base chains and trees (n 3-8, every joint kind) and these tests "
        "at 40 further seeds each, under 3 kernels")
#: h_0, A_G and the centre of mass against per-body sums, ℳ's root rows and Pinocchio: products and
#: O(n) sweeps, no solve (worst: h_0 against the per-body sum, Sandybridge).
TOL_MOMENTUM = measured(1e-12, 2.9e-14, OVER)
#: The same A_G batched over two states or for one (two BLAS paths through the same products).
TOL_BATCH = measured(1e-12, 8.5e-16, OVER)
#: Conservation along an ODE solution: the integrator's error, not round-off.
TOL_CONSERVED = Tol(1e-8, "integrator error: RK45 at rtol 1e-11 over 0.6 s (observed ~1e-11)")


def momentum_by_bodies(model, q, v):
    """Σ_k [c_k × m_k ċ_k + R_k I_k ω_k; m_k ċ_k], twists by complex step of the poses."""
    R, p = opalg.body_poses(model, q)
    h = np.zeros(6)
    for k, V in enumerate(body_twists_cs(model, q, v)):
        m, com, Ic = (np.asarray(x, float) for x in (model.inertias[k].mass, model.inertias[k].com,
                                                      model.inertias[k].I_com))
        c = p[k] + R[k] @ com
        cdot = R[k] @ (V[3:] + np.cross(V[:3], com))
        h += np.concatenate([np.cross(c, m * cdot) + R[k] @ Ic @ V[:3], m * cdot])
    return h


@pytest.mark.verifies("K10", route="spatial_momentum vs a per-body sum from body poses and complex-step twists, "
                                   "and vs ℳ's root rows")
@pytest.mark.parametrize("kind, seed, n", CASES)
def test_momentum_against_body_sum_and_mass_matrix(kind, seed, n):
    m = floating(kind, seed, n)
    q, v, _ = state(m, seed + 50)
    h = spatial_momentum(m, q, v)
    assert_close(h, momentum_by_bodies(m, q, v), TOL_MOMENTUM, "h_0 vs per-body sum")
    # a free root: ℳ's root rows are the momentum in root coordinates, h_0 = (⁰X_r)* ℳ_r,: v
    X0r = opalg.model.kinematics.body_kinematics(m, q).Xup[0]
    assert_close(h, X0r.T @ (opalg.crba(m, q)[:6] @ v), TOL_MOMENTUM, "h_0 vs the root rows of ℳ")
    # fixed-base models too (no free joint): the per-body sum
    fixed = opalg.random_model(n, kind, seed=seed, joints="all")
    qf, vf = np.random.default_rng(seed).normal(size=(2, fixed.nv))
    assert_close(spatial_momentum(fixed, qf, vf), momentum_by_bodies(fixed, qf, vf), TOL_MOMENTUM, "fixed-base h_0")


@pytest.mark.verifies("K10", route="centroidal_momentum_matrix and center_of_mass vs Pinocchio's ccrba")
@pytest.mark.parametrize("kind, seed, n", CASES)
def test_centroidal_against_pinocchio(kind, seed, n):
    m = floating(kind, seed, n)
    tw = build_pinocchio(m)
    q, v, _ = state(m, seed + 60)
    Ag = pin.ccrba(tw.model, tw.data, tw.q(q), tw.v(v))
    assert_close(center_of_mass(m, q), np.asarray(tw.data.com[0]), TOL_MOMENTUM, "centre of mass")
    A = centroidal_momentum_matrix(m, q)
    assert_close(A, motion_to_opalg(np.asarray(Ag))[:, tw.v_idx], TOL_MOMENTUM, "A_G vs pin.ccrba")
    Q = np.stack([q, state(m, seed + 61)[0]])
    assert_close(centroidal_momentum_matrix(m, Q)[0], A, TOL_BATCH, "batched A_G")


def _rates(model, q, v):
    """q̇ of the raw coordinates: ṗ = R v, quaternion ½ quat ⊗ (ω, 0); q̇ = v elsewhere."""
    qd = np.zeros(model.nq)
    for k in range(model.n):
        qs, vs = model.q_slice[k], model.dof_slice[k]
        if model.joints[k].free:
            quat, w, u = q[qs][3:], v[vs][:3], v[vs][3:]
            qd[qs] = np.concatenate([rotation(quat) @ u, 0.5 * multiply(quat, np.append(w, 0.0))])
        else:
            qd[qs] = v[vs]
    return qd


@pytest.mark.verifies("K10", route="h_0 and the kinetic energy along a free flight (scipy RK45 of aba) vs "
                                   "their initial values")
@pytest.mark.parametrize("kind, seed, n", [("chain", 2, 3), ("tree", 3, 4)])
def test_momentum_conserved_in_free_flight(kind, seed, n):
    """No gravity, no force: h_0 (and the kinetic energy) stay constant along the motion."""
    m0 = floating(kind, seed, n)
    m = opalg.Model(m0.parents, m0.joints, m0.placements, m0.inertias, (0.0, 0.0, 0.0))
    q0, v0, _ = state(m, seed + 70)

    def unit(q):
        """The raw ODE keeps |quat| = 1, RK45's stages only to their step's error: renormalize."""
        q = q.copy()
        for k in m.free_bodies:
            sl = slice(m.q_slice[k].start + 3, m.q_slice[k].stop)
            q[sl] /= np.linalg.norm(q[sl])
        return q

    def f(t, x):
        q, v = unit(x[:m.nq]), x[m.nq:]
        return np.concatenate([_rates(m, q, v), opalg.aba(m, q, v, np.zeros(m.nv))])

    sol = solve_ivp(f, (0.0, 0.6), np.concatenate([q0, v0]), rtol=1e-11, atol=1e-12, t_eval=[0.3, 0.6])
    assert sol.success
    h0 = spatial_momentum(m, q0, v0)
    energy0 = 0.5 * v0 @ opalg.crba(m, q0) @ v0
    moved = 0.0
    for x in sol.y.T:
        q, v = unit(x[:m.nq]), x[m.nq:]
        moved = max(moved, float(np.linalg.norm(v - v0)))
        assert_close(spatial_momentum(m, q, v), h0, TOL_CONSERVED, "momentum conservation")
        assert_close(0.5 * v @ opalg.crba(m, q) @ v, energy0, TOL_CONSERVED, "kinetic energy")
    assert moved > 1e-2   # the system did move (the check is not vacuous)
