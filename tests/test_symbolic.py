"""opalg.symbolic (Lagrangian computer-algebra route of the 1998 seed) vs the operator algebra.

The symbolic route (partial velocities, Lagrange / Kane form) shares no code with opalg's
recursions: only the to_model() translation connects them, so agreement of M, bias and the
body poses checks the kinematics convention (G_j = Tz(H1) Tx(H3) Tz(H2), body-from-inner)
and both derivations.  Exact (sympy) where opalg runs on symbols; numeric agreements are relative
(helpers.assert_close) with bounds measured over random states (the constants' ``why``).
"""

from __future__ import annotations

import functools

import numpy as np
import pytest
import sympy as sp

import opalg
from opalg import symbolic
from opalg.symbolic import Body, Hinge, TreeSystem
from opalg.errors import ModelError

from helpers import assert_close, measured, trig_zero
from symbolic_shared import spinning_deploy

#: Lambdified sympy ℳ, bias, T (and Lagrange vs Kane) vs opalg's recursions: measured.
RTOL = measured(1e-13, 2.5e-15, "400 random states of each of rot3 (gravity), the three-body full6 "
                "and the welded system, under 3 BLAS/SIMD kernels")
#: A sympy subs/evalf route (cse back-substitution, poses of full6) vs a numeric one: measured
#: on fewer states (each evalf takes ~1 s).
TOL_EVALF = measured(2e-14, 8.5e-16, "40 random states of deploy (cse) and full6 (poses) under "
                     "3 BLAS/SIMD kernels")


def _zero(e):
    return trig_zero(e)


# A TreeSystem is a pure function of its arguments and caches its derivations and generated
# functions on itself: a system several tests read is built once per process.
@functools.cache
def _rot3_gravity():
    return symbolic.deployable_example("rot3", gravity=(0, 0, -9.81))


@functools.cache
def _full6():
    return symbolic.deployable_example("full6")


# ------------------------------------------------------------------ validation
@pytest.mark.parametrize("T, msg", [
    ([0, 3, 2], "cycle"),
    ([0, 1, 4], "out of range"),
    ([0, -1], "out of range"),
    ([2, 1], "root"),
    ([0, 2], "own inner body"),
    ([], "empty"),
])
def test_topology_errors(T, msg):
    n = len(T)
    with pytest.raises(ValueError, match=msg):
        TreeSystem(T, [Hinge(1)] * n, [Body(1.0)] * n)


@pytest.mark.parametrize("hinge, body, msg", [
    (Hinge(4), Body(1.0), "NR"),
    (Hinge(1, -1), Body(1.0), "NT"),
    (Hinge(1, 1, [[1, 1, 0]]), Body(1.0), "unit"),
    (Hinge(1, 2, [[1, 0, 0], [1, 0, 0]]), Body(1.0), "dependent"),
    (Hinge(1, offset=(0, 1)), Body(1.0), "offset"),
    (Hinge(1), Body(-2.0), "mass"),
    (Hinge(1), Body(1.0, com=(0, 0)), "mass centre"),
    (Hinge(1), Body(1.0, inertia=np.eye(2)), "inertia"),
    (Hinge(1), Body(1.0, inertia=[[1, 2, 0], [0, 1, 0], [0, 0, 1]]), "symmetric"),
    (Hinge(1), Body(1.0, inertia=-np.eye(3)), "not positive semidefinite"),
])
def test_bad_hinge_and_body_data(hinge, body, msg):
    with pytest.raises(ValueError, match=msg):
        TreeSystem([0], [hinge], [body])


def test_no_degree_of_freedom():
    with pytest.raises(ValueError, match="no degree of freedom"):
        TreeSystem([0, 1], [Hinge(0), Hinge(0, offset=(1, 0, 0))], [Body(1.0)] * 2)


def test_length_mismatch_and_base():
    with pytest.raises(ValueError, match="hinges"):
        TreeSystem([0, 1], [Hinge(1)], [Body(1.0)] * 2)
    with pytest.raises(ValueError, match="RootMotion"):
        TreeSystem([0], [Hinge(1)], [Body(1.0)], base="prescribed")


# ------------------------------------------------------------------ exact small case
def _small_symbolic():
    """2 bodies: B1 one Euler angle (z) + one slide along x; B2 two angles (z, x) on B1."""
    m1, m2, a, l, c1, c2, g = sp.symbols("m1 m2 a l c1 c2 g", positive=True)
    A1, B1, C1, A2, B2, C2, D2 = sp.symbols("A1 B1 C1 A2 B2 C2 D2", positive=True)
    bodies = [Body(m1, (c1, 0, 0), sp.diag(A1, B1, C1)),
              Body(m2, (0, c2, 0), sp.Matrix([[A2, D2, 0], [D2, B2, 0], [0, 0, C2]]))]
    hinges = [Hinge(1, 1, [[1, 0, 0]], (0, 0, a)), Hinge(2, 0, None, (l, 0, 0))]
    return TreeSystem([0, 1], hinges, bodies, gravity=(0, -g, 0))


def test_small_case_exact():
    sysm = _small_symbolic()
    model = sysm.to_model()
    q = np.array(sysm.q, dtype=object)
    qd = np.array(sysm.qd, dtype=object)
    M = sysm.mass_matrix()
    Mo = sp.Matrix(opalg.crba(model, q).tolist())
    assert all(_zero(e) for e in (M - Mo)), "mass matrix"
    Bo = sp.Matrix(opalg.bias(model, q, qd).tolist())
    for method in ("lagrange", "kane"):
        B = sysm.bias(method)
        assert all(_zero(e) for e in (B - Bo)), ("bias", method)
    # Hessian of T in q̇ equals the partial-velocity M; energy ½ q̇ᵀ M q̇ = T
    T = sysm.kinetic_energy()
    assert all(_zero(e) for e in (sp.hessian(T, sysm.qd) - M))
    qdv = sp.Matrix(sysm.qd)
    assert _zero((qdv.T * M * qdv)[0] / 2 - T)


def test_generalized_forces_small():
    """Power balance: Q·q̇ = F·v_C + L·ω − k(q−q0)q̇ − c q̇²."""
    sysm = _small_symbolic()
    F, L = sp.Matrix(sp.symbols("F1:4")), sp.Matrix(sp.symbols("L1:4"))
    k, c, q0 = sp.symbols("k c q0")
    s = sysm.q[-1]
    Q = sysm.generalized_forces({2: F}, {2: L}, springs={s: (k, q0)}, dampers={s: c})
    kin, qd = sysm.kinematics(), sp.Matrix(sysm.qd)
    power = ((F.T * kin[2]["Jv"] * qd)[0] + (L.T * kin[2]["Jw"] * qd)[0]
             - k * (s - q0) * sysm.qd[-1] - c * sysm.qd[-1] ** 2)
    assert _zero((Q.T * qd)[0] - power)


def test_q_order_and_names():
    sysm = _full6()
    assert sysm.N == 30
    assert [str(x) for x in sysm.q[:6]] == ["Z1_1", "Z1_2", "Z1_3", "H1_1", "H1_2", "H1_3"]
    model = sysm.to_model()
    assert model.ndof == 30 and model.names == tuple(str(x) for x in sysm.q)


# ------------------------------------------------------------------ numeric agreement
def _numeric_check(sysm, n_states=4, seed=0):
    Mf, Bf = sysm.lambdify()
    model = sysm.to_model()
    rng = np.random.default_rng(seed)
    for _ in range(n_states):
        q, qd = rng.normal(size=(2, sysm.N))
        assert_close(Mf(q), opalg.crba(model, q), RTOL, "ℳ sympy vs crba")
        assert_close(Bf(q, qd), opalg.bias(model, q, qd), RTOL, "bias sympy vs opalg.bias")


def test_deployable_rot3_numeric():
    sysm = _rot3_gravity()
    assert sysm.N == 15 and sysm.T == (0, 1, 1, 1, 2)
    _numeric_check(sysm)


def _three_body_full6():
    bodies = [Body(5.0, (0.1, 0.2, -0.1), [[1.0, 0.1, 0], [0.1, 0.8, 0.05], [0, 0.05, 0.6]]),
              Body(2.0, (0.5, 0, 0.1), np.diag([0.1, 0.3, 0.35])),
              Body(1.5, (0, 0.4, 0), np.diag([0.2, 0.05, 0.22]))]
    axes = [[0, 0, 1.0], [1.0, 0, 0], [0, 0.6, 0.8]]
    hinges = [Hinge(3, 3, axes, (0, 0, 0.5)), Hinge(3, 2, axes[:2], (0.4, 0, 0)),
              Hinge(2, 1, [axes[2]], (0, -0.3, 0.1))]
    return TreeSystem([0, 1, 1], hinges, bodies, gravity=(0.3, 0, -9.81))


def test_full6_small_numeric():
    sysm = _three_body_full6()
    assert sysm.N == 14
    _numeric_check(sysm)


def test_welded_body_merged():
    """A body with no DoF (NR = NT = 0) is welded to its inner body in to_model."""
    bodies = [Body(3.0, (0.2, 0, 0), np.diag([0.3, 0.2, 0.4])), Body(1.0, (0, 0.3, 0), np.diag([0.1, 0.1, 0.1])),
              Body(0.7, (0.1, 0, 0), np.diag([0.05, 0.06, 0.07]))]
    hinges = [Hinge(3, 0, None, (0, 0, 0.2)), Hinge(0, 0, None, (0.5, 0, 0)), Hinge(1, 0, None, (0, 0.2, 0))]
    sysm = TreeSystem([0, 1, 2], hinges, bodies, gravity=(0, 0, -9.81))
    _numeric_check(sysm)
    # the two bias derivations agree (Lagrange's equations vs their partial-velocity form)
    fl = sp.lambdify([sysm.q, sysm.qd], sysm.bias("lagrange"), "numpy", cse=True)
    q, qd = np.random.default_rng(3).normal(size=(2, sysm.N))
    _, Bf = sysm.lambdify()
    assert_close(np.ravel(fl(q, qd)), Bf(q, qd), RTOL, "bias Lagrange vs Kane")


# ------------------------------------------------------------------ convention and energy
def test_euler_convention_matches_body_poses():
    sysm = _full6()
    model = sysm.to_model()
    rng = np.random.default_rng(7)
    q = rng.normal(size=sysm.N)
    Rs, ps = opalg.body_poses(model, q)
    sub = dict(zip(sysm.q, q))
    kin = sysm.kinematics()
    for j in range(1, sysm.n + 1):
        k, p = symbolic.carriers(sysm)[j], sysm.T[j - 1]
        R_inner = np.eye(3) if p == 0 else Rs[symbolic.carriers(sysm)[p]]
        G_pose = Rs[k].T @ R_inner                       # body-j coordinates from inner coordinates
        H1, H2, H3 = (q[sysm.q.index(sp.Symbol(f"H{j}_{i}", real=True))] for i in (1, 2, 3))
        G_paper = np.array((symbolic.Tz(H1) * symbolic.Tx(H3) * symbolic.Tz(H2)).evalf().tolist(), float)
        G_sys = np.array(sysm.relative_dcm(j).subs(sub).evalf().tolist(), float)
        assert_close(G_pose, G_paper, TOL_EVALF, "G_j from body_poses")
        assert_close(G_sys, G_paper, TOL_EVALF, "G_j of relative_dcm")
        # origin of B_j = hinge O_j displaced by Σ k_js Z_js, and the inertial DCM R_j = A_jᵀ
        rO = np.array(kin[j]["rO"].subs(sub).evalf().tolist(), float)[:, 0]
        assert_close(rO, ps[k], TOL_EVALF, "origin of B_j", scale=1.0)
        assert_close(np.array(kin[j]["R"].subs(sub).evalf().tolist(), float), Rs[k], TOL_EVALF, "R_j")


def test_paper_angular_velocity_formula():
    """Ω_j of the paper's §1.3 (NR = 3), in body coordinates."""
    sysm = TreeSystem([0], [Hinge(3)], [Body(1.0)])
    H1, H2, H3 = sysm.q
    d1, d2, d3 = sysm.qd
    paper = sp.Matrix([d2 * sp.sin(H3) * sp.sin(H1) + d3 * sp.cos(H1),
                       d2 * sp.sin(H3) * sp.cos(H1) - d3 * sp.sin(H1),
                       d1 + d2 * sp.cos(H3)])
    w = sysm.kinematics()[1]["Jw"] * sp.Matrix(sysm.qd)
    assert all(_zero(e) for e in (w - paper))


def test_energy_consistency_numeric():
    sysm = _rot3_gravity()
    Mf = sysm.lambdify(with_bias=False)
    Tf = sp.lambdify([sysm.q, sysm.qd], sysm.kinetic_energy(), "numpy", cse=True)
    rng = np.random.default_rng(11)
    for _ in range(3):
        q, qd = rng.normal(size=(2, sysm.N))
        assert_close(0.5 * qd @ Mf(q) @ qd, Tf(q, qd), RTOL, "½ q̇ᵀℳq̇ vs T")


def test_inertia_triangle_inequality():
    """Principal moments (1, 1, 3) belong to no mass distribution (I1 + I2 < I3)."""
    with pytest.raises(ValueError, match="body 1: principal moments .* triangle inequality"):
        TreeSystem([0], [Hinge(1)], [Body(1.0, inertia=np.diag([1.0, 1.0, 3.0]))])
    TreeSystem([0], [Hinge(1)], [Body(1.0, inertia=np.diag([1.0, 1.0, 2.0]))])   # a thin disc: the limit


def test_cse_reconstructs_M_and_bias():
    system = symbolic.deployable_example("deploy")
    reps, Mr, Br = system.cse()
    assert len(reps) > 10
    back = dict()
    for x, e in reps:
        back[x] = e.xreplace(back)
    rng = np.random.default_rng(4)
    q, qd = rng.normal(size=(2, system.N))
    sub = {**dict(zip(system.q, q)), **dict(zip(system.qd, qd))}
    Mf, Bf = system.lambdify()
    M_cse = np.array(Mr.xreplace(back).xreplace(sub).evalf(), dtype=float)
    B_cse = np.array(Br.xreplace(back).xreplace(sub).evalf(), dtype=float).ravel()
    assert_close(M_cse, Mf(q), TOL_EVALF, "ℳ from cse")
    assert_close(B_cse, Bf(q, qd), TOL_EVALF, "bias from cse")


def test_generated_functions_equal_lambdifys():
    """numeric._lambdify (one cse with order='none', the free-symbol check on the reduced form)
    gives the values of ``sympy.lambdify(..., cse=True)`` at random states (RTOL: the same
    expressions, only the order of the rounded operations may differ); undefined functions
    (implemented or with code as their name) are refused, not printed into the generated code."""
    from sympy.utilities.lambdify import implemented_function

    from opalg.symbolic import numeric, t

    system = spinning_deploy()
    kin = system.kinematics()
    rng = np.random.default_rng(5)
    for args, expr in (([system.q], system.mass_matrix()), ([system.q, system.qd, t], system.bias()),
                       ([system.q, t], [kin[j]["R"] for j in range(system.n + 1)])):
        ours, plain = numeric._lambdify(system, args, expr), sp.lambdify(args, expr, "numpy", cse=True)
        for _ in range(3):
            vals = [rng.normal(size=len(a)) if isinstance(a, (list, tuple, sp.Matrix)) else rng.normal()
                    for a in args]
            assert_close(np.asarray(ours(*vals), dtype=float), np.asarray(plain(*vals), dtype=float), RTOL,
                         "numeric._lambdify vs sympy.lambdify(cse=True)")
    q0 = system.q[0]
    for f in (implemented_function("f", lambda x: x + 1.0), sp.Function("__import__('os')")):
        with pytest.raises(ModelError, match="undefined functions"):   # named, never printed into code
            numeric._lambdify(system, [system.q], sp.Matrix([f(q0) * sp.sin(q0), sp.sin(q0)]))
    with pytest.raises(ValueError, match=r"unset symbolic parameters \['k'\]"):
        numeric._lambdify(system, [system.q], sp.Matrix([sp.Symbol("k") * sp.sin(q0) + sp.sin(q0)]))
