"""J5 (ν̇, kinematic and dynamic forms, gravity both ways) and J7 (power balance).

The reference is d/dt[Lᵀ(q)θ̇] with L the unit factor of the dense tip-first LDLᵀ of crba:
Im(Lᵀ(q + ihθ̇))θ̇/h + Lᵀ(q)θ̈, θ̈ from opalg.aba — crba, a dense factorization and the
complex step, none of which is the J5/J6 code."""

from __future__ import annotations

import numpy as np
import pytest

import opalg
from opalg import quasi
from opalg.errors import StateError

from helpers import assert_close, make_model, no_string_evaluated  # noqa: F401
from quasi_dense import complex_step_dt, cond_tol, factor_at

# Every tolerance is quasi_dense.cond_tol, 100·cond(ℳ)·ε with cond(ℳ) of the state: the reference
# is built on a dense factor of ℳ (and θ̈ from aba).  SWEEP (quasi_dense) saw err/(cond(ℳ)·ε) up to
# 2.1 for ν̇ (all routes, f_ext, from q̈), 1.8 for the gravity correction (relative to |ν̇|) and
# 0.3 for the power balance (relative to its terms).  Fixed 1e-12 had been exceeded: 1.6e-11 for
# nu_dot_from_qdd on other models.
J5_ROUTES = "ν̇ (dynamic/kinematic, gravity at the bodies or the base) vs complex-step d/dt[Lᵀ(q)θ̇] + Lᵀθ̈(aba)"

VARIANTS = [("dynamic", "body"), ("dynamic", "base"), ("kinematic", "body")]


def nu_dot_reference(m, q, qd, qdd):
    """d/dt (Lᵀ(q) θ̇) = (d/dt Lᵀ) θ̇ + Lᵀ θ̈, the first term by the complex step."""
    L, _ = factor_at(m, q)
    return complex_step_dt(lambda x: factor_at(m, x)[0].T, q, qd) @ qd + L.T @ qdd


@pytest.mark.verifies("J5", "J4", route=J5_ROUTES)
@pytest.mark.parametrize("kind", ["chain", "tree", "relabeled", "jain-tree", "forest"])
@pytest.mark.parametrize("joints", ["single", "mixed", "all"])
@pytest.mark.parametrize("gravity", [False, True])
def test_J5_nu_dot_equals_complex_step_of_LT_qd(kind, joints, gravity):
    """All three routes (dynamic/body gravity, dynamic/base gravity + correction, kinematic) equal
    the reference to 100·cond(ℳ)·ε, the accuracy of the dense factor (cond up to 2e5 here)."""
    for seed in range(2):
        m = make_model(kind, 7, seed, joints)
        q, qd, tau = np.random.default_rng(seed).normal(size=(3, m.ndof))
        ref = nu_dot_reference(m, q, qd, opalg.aba(m, q, qd, tau, gravity=gravity))
        for form, gas in VARIANTS:
            got = quasi.nu_dot(m, q, qd, tau, gravity=gravity, form=form, gravity_as=gas)
            assert_close(got, ref, cond_tol(m, q), f"ν̇ {form}/{gas} {kind}/{joints}/g={gravity}/{seed}")


@pytest.mark.verifies("J5", route="the uncorrected dynamic form vs the reference: misses exactly G*(k)·ᵏX₀[0; g]")
def test_J5_gravity_caveat_the_correction_is_needed():
    """With gravity folded into the roots (opalg's ABA), D⁻¹ε + G*crm(V)H*θ̇ + Ġ*V⁺ misses exactly
    G*(k)·ᵏX₀[0; g] at every non-root body (and nothing at the roots); G(k) here is the
    block from articulated, ᵏX₀ from the body poses.  Errors relative to |ν̇|, the size of the
    reference whose rounding they carry."""
    m = make_model("tree", 7, 1, "mixed")
    q, qd, tau = np.random.default_rng(4).normal(size=(3, m.ndof))
    ref = nu_dot_reference(m, q, qd, opalg.aba(m, q, qd, tau))
    kin = opalg.model.kinematics.body_kinematics(m, q, qd)             # gravity folded, as aba
    art = opalg.articulated(m, q, kin)
    res = opalg.innovations_passes(m, art, tau[:, None], kin.a, kin.b, keep=True)
    rates = quasi.articulated_rates(m, q, qd)
    kin0 = opalg.model.kinematics.body_kinematics(m, q, qd, gravity=False)
    R, _ = opalg.body_poses(m, q)
    tol = cond_tol(m, q)
    for k, s in enumerate(m.dof_slice):
        vJ = kin0.S[k] @ qd[s]
        Vp = kin0.V[k] - vJ
        w = opalg.spatial.vectors.cross_motion(kin0.V[k], vJ)
        uncorrected = res.nu[k][:, 0] + art.G[k].T @ w + rates.G_dot[k].T @ Vp
        g_k = np.concatenate([np.zeros(3), R[k].T @ m.gravity])       # ᵏX₀[0; g]
        missing = ref[s] - uncorrected
        if m.parents[k] == -1:
            assert_close(missing, 0 * missing, tol, f"root {k}", scale=np.linalg.norm(ref))
        else:
            assert np.linalg.norm(missing) > 1e-3 * np.linalg.norm(ref), "the caveat is not exercised"
            # was 1e-11 relative to the correction itself (2.3e-10 seen on other models)
            assert_close(missing, art.G[k].T @ g_k, tol, f"correction at body {k}", scale=np.linalg.norm(ref))


@pytest.mark.verifies("J5", route="ν̇ with f_ext, batched and from q̈ vs the complex-step reference")
def test_J5_external_forces_and_batches():
    """f_ext enters as b − f_ext in both forms; batched (one chunk and more) equals per state."""
    m = make_model("tree", 6, 2, "all")
    rng = np.random.default_rng(1)
    q, qd, tau = rng.normal(size=(3, 1030, m.ndof))
    f = rng.normal(size=(1030, m.n, 6))
    got = quasi.nu_dot(m, q, qd, tau, f_ext=f)
    for i in (0, 1029):
        ref = nu_dot_reference(m, q[i], qd[i], opalg.aba(m, q[i], qd[i], tau[i], f_ext=f[i]))
        assert_close(got[i], ref, cond_tol(m, q[i]), f"f_ext, state {i}")
        assert_close(quasi.nu_dot(m, q[i], qd[i], tau[i], f_ext=f[i], form="kinematic"), ref, cond_tol(m, q[i]),
                     "kinematic f_ext")
    qdd = rng.normal(size=m.ndof)
    assert_close(quasi.nu_dot_from_qdd(m, q[0], qd[0], qdd), nu_dot_reference(m, q[0], qd[0], qdd),
                 cond_tol(m, q[0]), "nu_dot_from_qdd")


@pytest.mark.verifies("J7", route="νᵀDν̇ + ½νᵀḊν from nu, nu_dot, articulated_rates vs θ̇ᵀT")
@pytest.mark.parametrize("kind", ["chain", "tree", "relabeled"])
@pytest.mark.parametrize("joints", ["single", "all"])
def test_J7_power_balance(kind, joints):
    """νᵀDν̇ + ½νᵀḊν = θ̇ᵀT (gravity off): d/dt of the kinetic energy ½νᵀDν is the input power.
    Relative to |θ̇||T| + the size of the terms; 100·cond(ℳ)·ε (was 1e-12: 1.2e-13 seen)."""
    for seed in range(3):
        m = make_model(kind, 8, seed, joints)
        q, qd, tau = np.random.default_rng(seed).normal(size=(3, m.ndof))
        v = quasi.nu(m, q, qd)
        vd = quasi.nu_dot(m, q, qd, tau, gravity=False)
        r = quasi.articulated_rates(m, q, qd)
        terms = [v[s] @ r.art.D[k] @ vd[s] + v[s] @ r.D_dot[k] @ v[s] / 2 for k, s in enumerate(m.dof_slice)]
        scale = sum(abs(t) for t in terms) + np.linalg.norm(qd) * np.linalg.norm(tau)
        assert_close(sum(terms), qd @ tau, cond_tol(m, q), f"power {kind}/{joints}/{seed}", scale=scale)


def test_options_are_checked():
    m = make_model("chain", 3, 0)
    z = np.zeros(m.ndof)
    with pytest.raises(StateError, match="form must be one of"):
        quasi.nu_dot(m, z, z, z, form="fast")
    with pytest.raises(StateError, match="gravity_as must be one of"):
        quasi.nu_dot(m, z, z, z, gravity_as="up")
    with pytest.raises(StateError, match="f_ext has shape"):
        quasi.nu_dot(m, z, z, z, f_ext=np.zeros((m.n, 3)))


@pytest.mark.verifies("J5", route="ν̇ with a free joint below the root vs complex step along integrate(q, t v)")
def test_J5_free_joint_below_the_root():
    """A free joint in the middle of a chain (K8): S = I₆ is constant in the body frame, so its
    six columns must not be read as axes in sequence (no c_J, no Ṡ).  Reference: d/dt[Lᵀ(q(t)) v]
    along q(t) = integrate(q, t v) by the complex step, plus Lᵀ v̇ with v̇ from opalg.aba — crba, a
    dense factor and the configuration map, none of them the J5/J6 code.  (Reading S = I₆ as six
    axes made ν̇ wrong by O(1) here, while a free root hid it.)"""
    base = opalg.random_model(4, "chain", seed=11, joints="all")
    joints = list(base.joints)
    joints[1] = opalg.FreeJoint("middle")
    m = opalg.Model(base.parents, joints, base.placements, base.inertias, base.gravity)
    rng = np.random.default_rng(5)
    q = opalg.integrate(m, opalg.neutral(m), rng.normal(size=m.nv))
    v, tau = rng.normal(size=(2, m.nv))
    for gravity in (False, True):
        a = opalg.aba(m, q, v, tau, gravity=gravity)
        h = 1e-20
        dLT = (factor_at(m, opalg.integrate(m, q, v, 1j * h))[0].T).imag / h
        ref = dLT @ v + factor_at(m, q)[0].T @ a
        for form, gas in VARIANTS:
            got = quasi.nu_dot(m, q, v, tau, gravity=gravity, form=form, gravity_as=gas)
            assert_close(got, ref, cond_tol(m, q), f"ν̇ {form}/{gas}, free joint at body 1, g={gravity}")
