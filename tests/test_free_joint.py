"""Free joint (docs/REFERENCE.md K8): nq ≠ nv, integrate/difference, and every recursion
on free-floating chains and trees against independent routes.

Independent routes: Rodrigues' formula for the quaternion's rotation; the one-parameter
group property of the exponential; the closed-form inertia of a single free body; complex
step of body poses along ``integrate(q, t v)`` for Jacobians; potential energy for gravity;
kinetic-energy rate and a dense Newton–Euler sum over frame Jacobians for the bias; dense
solves of ``crba`` for aba, minv and Λ⁻¹.  Tolerances (constants below): routes through a solve
with ℳ are bounded by k·cond(ℳ)·ε with cond computed in the test (k measured); products, recursions
without a solve and complex step (h = 1e-20, exact to rounding) by bounds measured over random
floating models (in /tmp, under three OpenBLAS/numpy kernels), each with >= 10x margin.
"""

from __future__ import annotations

import numpy as np
import pytest

import opalg
from opalg.errors import StateError
from opalg.spatial.quaternion import rotation
from opalg.spatial.vectors import rotation_about, spatial_inertia

from helpers import Tol, assert_close, cond_tol, measured, no_string_evaluated, rel_err  # noqa: F401

H = 1e-20   # complex step

#: Where the measured bounds come from (throwaway scripts in /tmp, not committed): these tests'
#: comparisons on random models and states, under the default, Sandybridge and Prescott
#: OpenBLAS kernels (numpy's AVX2 dispatch off for the latter two).
OVER = ("240 random floating chains and trees (n 4-8, every joint kind) and these tests at 50 further "
        "seeds each, under 3 kernels")
#: O(n) recursions against products of dense operators, complex-step derivatives of body poses,
#: the potential energy or another recursion: no solve, sizes ≤ 8 bodies (worst: crba vs rnea columns).
TOL_PRODUCT = measured(1e-12, 1.2e-14, OVER)
#: The quaternion's rotation against Rodrigues' formula (a few flops per entry).
TOL_ROTATION = measured(1e-12, 1.1e-15, "1,200 random axes and angles under 3 kernels")
#: A single free body's ℳ (crba's world-frame route, composite transforms) against its spatial inertia.
TOL_FREE_BODY = measured(1e-12, 4.7e-15, "240 random free bodies and configurations under 3 kernels")
#: The velocity bias by two routes through complex-step derivatives (energy rate, dense Newton–Euler).
TOL_BIAS = measured(1e-12, 1.1e-14, OVER)
#: k of k·cond(ℳ)·ε for aba, minv, Λ⁻¹ and hybrid (O(n) factorizations) against dense LU solves
#: (worst 6.6, hybrid's base reaction with cond(ℳ_bb)).
K_SOLVE = measured(100, 6.6, "err/(cond·ε), " + OVER)
#: k of k·cond·ε for difference∘integrate: difference recovers v·dt from two configurations of size
#: ‖q‖, so its relative error is cond·ε with cond = ‖q‖/‖v dt‖ (10³ at dt = 1e-3); worst 2.1.
K_DIFFERENCE = measured(100, 2.1, "err/(‖q‖/‖v dt‖·ε), " + OVER + ", dt 1e-3, 0.4, 1.3")
CASES = [("chain", 1, 5), ("chain", 2, 7), ("tree", 3, 6), ("tree", 4, 8)]


def floating(kind, seed, n):
    return opalg.random_model(n, kind, seed=seed, joints="all", floating=True)


def state(model, seed):
    """A random configuration (unit quaternions reached by integrate) and v, a (nv,)."""
    rng = np.random.default_rng(seed)
    q = opalg.integrate(model, opalg.neutral(model), rng.normal(size=model.nv) * 1.5)
    v, a = rng.normal(size=(2, model.nv))
    return q, v, a


def poses_along(model, q, v, t):
    """World rotation and origin of every body at integrate(q, t v) (t may be complex)."""
    return opalg.body_poses(model, opalg.integrate(model, q, v, t))


def body_twists_cs(model, q, v):
    """Body velocities [ω; v] in body coordinates, by complex step of the poses (K8)."""
    R0, p0 = opalg.body_poses(model, q)
    R1, p1 = poses_along(model, q, v, 1j * H)
    out = []
    for k in range(model.n):
        Rd, pd = R1[k].imag / H, p1[k].imag / H
        W = R0[k].T @ Rd
        out.append(np.concatenate([[W[2, 1], W[0, 2], W[1, 0]], R0[k].T @ pd]))
    return out


# --------------------------------------------------------------------------- the joint itself
@pytest.mark.verifies("K8", route="sizes nq ≠ nv and H*(k) = I₆ (exact)")
def test_sizes_and_subspace():
    m = floating("tree", 0, 5)
    assert (m.nq, m.nv, m.ndof) == (sum(j.nq for j in m.joints), m.ndof, sum(j.ndof for j in m.joints))
    assert m.free_bodies == (0,) and m.nq == m.nv + 1
    assert m.q_slice[0] == slice(0, 7) and m.dof_slice[0] == slice(0, 6)
    kin = opalg.model.kinematics.body_kinematics(m, state(m, 0)[0])
    assert np.array_equal(kin.S[0], np.eye(6))    # exact: H*(k) = I₆ at the free root, a constant
    fixed = opalg.random_model(5, "tree", seed=0, joints="all")
    assert fixed.nq == fixed.nv == fixed.ndof and fixed.q_slice == fixed.dof_slice
    assert fixed.free_bodies == ()


@pytest.mark.verifies("K8", route="quaternion rotation vs Rodrigues' formula")
def test_quaternion_is_rodrigues():
    """rotation(x, y, z, w) equals the rotation by θ about u for (x, y, z) = sin(θ/2) u, w = cos(θ/2)."""
    rng = np.random.default_rng(1)
    for _ in range(5):
        u = rng.normal(size=3)
        u /= np.linalg.norm(u)
        th = rng.uniform(-np.pi, np.pi)
        quat = np.concatenate([np.sin(th / 2) * u, [np.cos(th / 2)]])
        assert_close(rotation(quat), rotation_about(u, th), TOL_ROTATION, "quaternion rotation")


@pytest.mark.verifies("K8", route="crba and bias of one free body vs its closed form")
def test_single_free_body_closed_form():
    """One free body: ℳ = its spatial inertia, bias = V ×* I V, for any q (body coordinates)."""
    m = floating("chain", 5, 1)
    q, v, a = state(m, 5)
    I = spatial_inertia(m.inertias[0].mass, m.inertias[0].com, m.inertias[0].I_com)
    assert_close(opalg.crba(m, q), I, TOL_FREE_BODY, "ℳ of a free body")
    w, u = v[:3], v[3:]
    hI = I @ v
    expect = np.concatenate([np.cross(w, hI[:3]) + np.cross(u, hI[3:]), np.cross(w, hI[3:])])
    g = m.gravity.astype(float)
    R = opalg.body_poses(m, q)[0][0]
    f_grav = I @ np.concatenate([np.zeros(3), -R.T @ g])  # gravity as a base acceleration −g
    assert_close(opalg.bias(m, q, v), expect + f_grav, TOL_PRODUCT, "bias of a free body")


# --------------------------------------------------------------------------- integrate / difference
@pytest.mark.verifies("K8", route="integrate/difference round trips and the one-parameter group property")
@pytest.mark.parametrize("kind, seed, n", CASES)
def test_integrate_difference_round_trip(kind, seed, n):
    m = floating(kind, seed, n)
    q, v, _ = state(m, seed)
    for dt in (1e-3, 0.4, 1.3):
        q1 = opalg.integrate(m, q, v, dt)
        if max(np.linalg.norm(v[m.dof_slice[k]][:3]) for k in m.free_bodies) * dt < np.pi:
            cond = np.linalg.norm(q1) / np.linalg.norm(v * dt)
            assert_close(opalg.difference(m, q, q1), v * dt, cond_tol(cond, K_DIFFERENCE, "‖q‖/‖v dt‖"),
                         f"difference ∘ integrate, dt={dt}")
        else:   # past half a turn, difference returns the shorter way round: the same poses below
            assert rel_err(opalg.difference(m, q, q1), v * dt) > 1e-3   # not round-off: O(1) apart
        q2 = opalg.integrate(m, q, opalg.difference(m, q, q1))
        R1, p1 = opalg.body_poses(m, q1)
        R2, p2 = opalg.body_poses(m, q2)
        assert_close(np.array(R2), np.array(R1), TOL_PRODUCT, "integrate ∘ difference (orientations)")
        assert_close(np.array(p2), np.array(p1), TOL_PRODUCT, "integrate ∘ difference (origins)")
    # the exponential is a one-parameter group: integrate(integrate(q, v, s), v, t) = integrate(q, v, s + t)
    assert_close(opalg.integrate(m, opalg.integrate(m, q, v, 0.3), v, 0.5), opalg.integrate(m, q, v, 0.8),
                 TOL_PRODUCT, "one-parameter group")
    fixed = opalg.random_model(n, kind, seed=seed, joints="all")
    qf, vf = np.random.default_rng(seed).normal(size=(2, fixed.ndof))
    assert np.array_equal(opalg.integrate(fixed, qf, vf, 0.5), qf + 0.5 * vf)   # exact: the same q + v dt


@pytest.mark.verifies("K8", route="integrate vs the complex-step body twist of its poses")
def test_integrate_holds_the_body_twist():
    """Along integrate(q, t v) every free body's body-frame velocity stays v (complex step at t ≠ 0)."""
    m = floating("tree", 7, 4)
    q, v, _ = state(m, 7)
    for t in (0.0, 0.7):
        qt = opalg.integrate(m, q, v, t)
        assert_close(body_twists_cs(m, qt, v)[0], v[m.dof_slice[0]], TOL_PRODUCT, f"root twist at t={t}")


# --------------------------------------------------------------------------- bad input
@pytest.mark.verifies("K8", route="the state check refuses non-unit quaternions and wrong sizes")
def test_bad_configurations_refused():
    m = floating("chain", 0, 3)
    q, v, _ = state(m, 0)
    bad = q.copy()
    bad[3:7] *= 1.01
    with pytest.raises(StateError, match=r"quaternion \(x, y, z, w\) of free joint 'joint0' \(body 0"):
        opalg.crba(m, bad)
    with pytest.raises(StateError, match="unit quaternion"):
        opalg.integrate(m, q + 0.1, v, 0.1)
    with pytest.raises(StateError, match=rf"expected \(\.\.\., {m.nq}\).*nq={m.nq}"):
        opalg.rnea(m, q[:m.nv], v, v)                     # a velocity-sized q
    with pytest.raises(StateError, match=rf"qd has shape \({m.nq},\), expected \(\.\.\., {m.nv}\)"):
        opalg.rnea(m, q, q, v)                            # a configuration-sized velocity
    with pytest.raises(StateError, match="dt must be a finite number"):
        opalg.integrate(m, q, v, np.nan)
    q[3:7] = 0
    with pytest.raises(StateError, match="has norm 0"):
        opalg.aba(m, q, v, v)


# --------------------------------------------------------------------------- recursions vs dense routes
@pytest.mark.verifies("K8", route="crba vs rnea columns, aba∘rnea, minv and Λ⁻¹ vs dense LU solves of crba, "
                                  "A1 from the operators")
@pytest.mark.parametrize("kind, seed, n", CASES)
def test_dynamics_against_dense_routes(kind, seed, n):
    m = floating(kind, seed, n)
    q, v, a = state(m, seed + 10)
    M = opalg.crba(m, q)
    solve = cond_tol(np.linalg.cond(M), K_SOLVE)
    # ℳ column j is rnea(q, 0, e_j) − rnea(q, 0, 0)
    g = opalg.rnea(m, q, np.zeros(m.nv), np.zeros(m.nv))
    cols = np.stack([opalg.rnea(m, q, np.zeros(m.nv), e) - g for e in np.eye(m.nv)], 1)
    assert_close(M, cols, TOL_PRODUCT, "crba vs rnea columns")
    assert_close(opalg.crba(m, q, frame="body"), M, TOL_PRODUCT, "crba body vs world frame")
    tau = opalg.rnea(m, q, v, a)
    assert_close(opalg.aba(m, q, v, tau), a, solve, "aba ∘ rnea")
    assert_close(M @ a + opalg.bias(m, q, v), tau, TOL_PRODUCT, "ℳ a + bias = rnea")
    assert_close(opalg.minv(m, q), np.linalg.inv(M), solve, "minv vs inv(crba)")
    ops = opalg.operators(m, q, v)
    assert_close((ops.H @ ops.phi @ ops.M @ ops.phi.T @ ops.H.T).dense(), M, TOL_PRODUCT, "Hφ M φ*H* (A1)")
    frames = [(n - 1, [0.1, -0.2, 0.3]), (0, np.eye(3), [0.0, 0.1, 0.0])]
    J = np.concatenate([opalg.frame_jacobian(m, q, f) for f in frames], 0)
    assert_close(opalg.lambda_inv(m, q, frames), J @ np.linalg.solve(M, J.T), solve, "Λ⁻¹ = J ℳ⁻¹ J*")


@pytest.mark.verifies("K8", route="frame_jacobian and the velocity recursion vs the complex-step twist of body "
                                  "poses along integrate")
@pytest.mark.parametrize("kind, seed, n", CASES)
def test_jacobians_by_complex_step(kind, seed, n):
    """J_k v equals the body twist from d/dt of body k's pose along integrate(q, t v)."""
    m = floating(kind, seed, n)
    q, v, _ = state(m, seed + 20)
    twists = body_twists_cs(m, q, v)
    for k in range(m.n):
        J = opalg.frame_jacobian(m, q, (k, np.zeros(3)))
        assert_close(J @ v, twists[k], TOL_PRODUCT, f"J v of body {k}")
    kin = opalg.model.kinematics.body_kinematics(m, q, v)
    assert_close(np.array(kin.V), np.array(twists), TOL_PRODUCT, "V from the recursion")


@pytest.mark.verifies("K8", route="rnea(q, 0, 0) vs the complex-step gradient of the potential energy")
@pytest.mark.parametrize("kind, seed, n", CASES)
def test_gravity_is_the_potential_gradient(kind, seed, n):
    """g_j = rnea(q, 0, 0)_j = dU/dt along integrate(q, t e_j), U = −Σ m_k gravity·c_k."""
    m = floating(kind, seed, n)
    q = state(m, seed + 30)[0]
    g = opalg.rnea(m, q, np.zeros(m.nv), np.zeros(m.nv))
    grav = m.gravity.astype(float)

    def U(qq):
        R, p = opalg.body_poses(m, qq)
        return -sum(float(m.inertias[k].mass) * grav @ (p[k] + R[k] @ m.inertias[k].com) for k in range(m.n))

    dU = np.array([U(opalg.integrate(m, q, e, 1j * H)).imag / H for e in np.eye(m.nv)])
    assert_close(g, dU, TOL_PRODUCT, "gravity vs potential energy")


@pytest.mark.verifies("K8", route="bias vs the kinetic-energy rate ½vᵀℳ̇v and a dense Newton–Euler sum over "
                                  "Jacobians (complex step along integrate)")
@pytest.mark.parametrize("kind, seed, n", CASES)
def test_bias_lagrangian_and_newton_euler(kind, seed, n):
    """Velocity bias (gravity off) by two routes along the path q(t) = integrate(q, t v), on which
    the generalized velocity stays v:

    * energy: vᵀ b = ½ vᵀ (dℳ/dt) v (Lagrangian rate of kinetic energy), dℳ/dt by complex step;
    * Newton–Euler over dense Jacobians: b = Σ_k J_kᵀ (I_k α_k + V_k ×* I_k V_k), with
      V_k = J_k v and α_k = (dJ_k/dt) v by complex step (body-frame derivative).
    """
    m0 = floating(kind, seed, n)
    m = opalg.Model(m0.parents, m0.joints, m0.placements, m0.inertias, (0.0, 0.0, 0.0))
    q, v, _ = state(m, seed + 40)
    b = opalg.bias(m, q, v)
    qc = opalg.integrate(m, q, v, 1j * H)
    Mdot = opalg.crba(m, qc).imag / H
    assert_close(v @ b, 0.5 * v @ Mdot @ v, TOL_BIAS, "vᵀb = ½ vᵀℳ̇v", scale=np.abs(v) @ np.abs(Mdot) @ np.abs(v))
    total = np.zeros(m.nv)
    for k in range(m.n):
        J = opalg.frame_jacobian(m, q, (k, np.zeros(3)))
        Jdot = opalg.frame_jacobian(m, qc, (k, np.zeros(3))).imag / H
        I, V = m.I_spatial[k], J @ v
        h = I @ V
        f = I @ (Jdot @ v) + np.concatenate([np.cross(V[:3], h[:3]) + np.cross(V[3:], h[3:]),
                                             np.cross(V[:3], h[3:])])
        total += J.T @ f
    assert_close(b, total, TOL_BIAS, "bias vs dense Newton–Euler")


@pytest.mark.verifies("K8", route="crba and aba of a relabelled floating tree vs the original's")
def test_relabeled_floating_tree():
    """A relabelled floating tree: the same ℳ and ABA after mapping q (nq) and v (nv)."""
    m = floating("tree", 9, 6)
    perm = [3, 0, 5, 1, 4, 2]
    r = m.relabeled(perm)
    q, v, a = state(m, 9)
    qi, vi = m.config_permutation(perm), m.dof_permutation(perm)
    assert r.free_bodies == (perm.index(0),)
    M = opalg.crba(m, q)
    assert_close(opalg.crba(r, q[qi]), M[np.ix_(vi, vi)], TOL_PRODUCT, "relabelled ℳ")
    tau = opalg.rnea(m, q, v, a)
    assert_close(opalg.aba(r, q[qi], v[vi], tau[vi]), a[vi], cond_tol(np.linalg.cond(M), K_SOLVE), "relabelled aba")


@pytest.mark.verifies("K8", route="to_urdf refuses a free joint")
def test_to_urdf_refuses_a_free_joint():
    from opalg.errors import ModelError
    with pytest.raises(ModelError, match=r"body 0 \(body0\): joint 'joint0' is a free joint"):
        opalg.model.urdf.to_urdf(floating("chain", 0, 2))


@pytest.mark.verifies("K8", route="from_urdf(floating=True): the joint block of ℳ vs the fixed-base crba")
def test_urdf_floating_root_round_trip():
    """from_urdf(floating=True) of a written fixed-base model = that model under a free root body."""
    fixed = opalg.random_model(4, "tree", seed=6, joints="single")
    m = opalg.from_urdf(opalg.model.urdf.to_urdf(fixed), floating=True)
    assert m.joint_names[0] == "root_joint" and m.nq == fixed.nq + 7 and m.nv == fixed.nv + 6
    assert float(m.inertias[0].mass) == 0          # exact: the written base link is massless (mass 0)
    qf = np.linspace(-1, 1, fixed.nq)
    i = fixed.joint_dofs(m.joint_names[1:])        # m's joint order (depth-first) in fixed
    q = np.concatenate([opalg.neutral(m)[:7], qf[i]])
    # with the base held (v_root = 0, a_root = 0), the joint block of ℳ is the fixed-base ℳ
    M = opalg.crba(m, q)
    assert_close(M[6:, 6:], opalg.crba(fixed, qf)[np.ix_(i, i)], TOL_PRODUCT, "joint block of the floating ℳ")


@pytest.mark.verifies("K8", "G2", route="hybrid with a passive free base vs the dense partitioned LU solve of crba")
@pytest.mark.parametrize("kind, seed, n", CASES[:3])
def test_hybrid_free_base_reaction(kind, seed, n):
    """A passive free base (no force on it) and prescribed joint accelerations: the base's
    reaction from hybrid() equals the dense solve ℳ_bb a_b = −ℳ_ba a_a − bias_b (G1 on a floating tree)."""
    m = floating(kind, seed, n)
    q, v, a = state(m, seed + 80)
    passive = np.zeros(m.nv, bool)
    passive[m.dof_slice[0]] = True
    tau_in = np.zeros(m.nv)
    qdd, tau = opalg.hybrid(m, q, v, tau_in, a, passive)
    M, b = opalg.crba(m, q), opalg.bias(m, q, v)
    p, act = passive, ~passive
    a_base = np.linalg.solve(M[np.ix_(p, p)], -M[np.ix_(p, act)] @ a[act] - b[p])
    assert_close(qdd[p], a_base, cond_tol(np.linalg.cond(M[np.ix_(p, p)]), K_SOLVE, "ℳ_bb"), "base reaction")
    # the torques returned, with zero force on the base, are those that produce qdd (rows of ℳ qdd + bias)
    assert_close(tau, M @ qdd + b, TOL_PRODUCT, "joint torques", scale=np.linalg.norm(M) * np.linalg.norm(qdd))
