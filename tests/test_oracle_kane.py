"""Oracle: Ider's (1990) planar 3-link arm derived with Kane's method (sympy.physics.mechanics).

Ider wrote the unconstrained dynamics of his redundant planar arm with Kane's equations.  Here the
same arm is derived from scratch with ``sympy.physics.mechanics.KanesMethod`` -- one
ReferenceFrame per link, Points for the joints and mass centres, RigidBody objects with inertia
dyadics about the mass centres, gravity as a force on each mass centre -- and compared with
opalg's spatial-operator recursions (CRBA, RNEA bias, and the operator product H phi M phi* H*).
The Kane route shares no code with opalg: it differentiates position vectors in frames, opalg
propagates 6-vectors through spatial transforms.

Model: revolute joints about z, motion in the x-y plane, relative joint angles q1, q2, q3
(absolute link angles are cumulative sums), generalized speeds u_i = dq_i/dt.  Link k has length
l_k, mass m_k, mass centre at distance c_k from its proximal joint along the link, and central
planar moment I_k.  Out-of-plane moments are I_k/2 (as in opalg.planar_arm);
test_out_of_plane_moments_do_not_enter shows they drop out of Kane's equations anyway.

Sign convention (the one decision this file has to make):
    KanesMethod gives Fr + Fr* = 0 arranged as  M(q) du/dt = F(q, u),  where ``forcing`` F holds
    the applied generalized forces (here gravity only; joint torques are NOT included as loads)
    MINUS the velocity-dependent inertia terms.  opalg's convention is  M(q) qdd + C(q, qd) = tau.
    With tau = 0 both describe the same free motion, so  M_opalg = M_kane  and  C = -F.

Ider's data: L = (1, 1, 1) m, m = (30, 18, 18) kg, I = (10, 8.64, 8.64) kg m^2, gravity off.  The
paper does not say where I_i is taken; both readings are checked:
    "com"   -- I_i is the central moment, mass centre at mid-link;
    "joint" -- I_i about the proximal joint, mass centre at mid-link: I_com = I_i - m_i (L_i/2)^2.
"""

from __future__ import annotations

import functools

import numpy as np
import pytest
import sympy as sp
from sympy.physics.mechanics import (KanesMethod, Point, ReferenceFrame, RigidBody,
                                     dynamicsymbols, inertia)

import opalg
from helpers import assert_close, cond_tol, measured, trig_identity_proved

# Numerical tolerance.  Both routes evaluate the same closed-form quantities in IEEE double
# precision with a few dozen flops per entry (lambdified sympy vs opalg's recursions).  Errors are
# normwise (helpers.rel_err), so entries that cancel to ~0 do not inflate the ratio.  Measured
# (was 1e-12, unmeasured); any wrong term (a missing m c^2, a flipped Coriolis sign, the other
# inertia reading) shows up at O(1e-2 .. 1).
SWEEP = "1,200 random states (both inertia readings, gravity on and off) under 3 BLAS/SIMD kernels"
RTOL = measured(1e-13, 1.9e-15, SWEEP)
#: The free-motion q̈ solves with ℳ on both sides: K·cond(ℳ)·ε (SWEEP: ≤ 1.7 cond(ℳ)·ε; was
#: RTOL·cond(ℳ), i.e. K = 4500).
K_SOLVE = 100

# Ider (1990), section 4.
IDER_L = (1.0, 1.0, 1.0)
IDER_M = (30.0, 18.0, 18.0)
IDER_I = (10.0, 8.64, 8.64)
IDER_Q0 = np.deg2rad([60.0, -10.0, -90.0])    # initial configuration of the paper
IDER_Y0 = np.array([0.386, 0.0, -0.9618])     # initial joint rates as printed (rounded)

# Plain symbols (opalg takes sympy symbols, not functions of time).
Q = sp.symbols("q1:4", real=True)
U = sp.symbols("u1:4", real=True)
L_S = sp.symbols("l1:4", positive=True)
C_S = sp.symbols("c1:4", positive=True)
M_S = sp.symbols("m1:4", positive=True)
I_S = sp.symbols("I1:4", positive=True)
G_S = sp.Symbol("g", real=True)
PARAMS = (*L_S, *C_S, *M_S, *I_S, G_S)
# A generic point (every symbol of the file, O(1) values) for is_zero's nonzero short cut.
_SAMPLE = {x: float(v) for x, v in zip([*Q, *U, *PARAMS], np.random.default_rng(1990).uniform(0.5, 1.5, 6 + len(PARAMS)))}


@functools.lru_cache(maxsize=None)
def kane_arm(out_of_plane: bool = False):
    """Kane's M and forcing F of the planar 3-link arm, in the plain symbols Q, U and PARAMS.

    ``out_of_plane=True`` gives each link independent symbols Jx_k, Jy_k for its xx and yy
    central moments instead of I_k/2 (used to show that they do not enter).
    Returns ``(M, F, extra_symbols)``.
    """
    q = dynamicsymbols("q1:4")
    u = dynamicsymbols("u1:4")
    jx = sp.symbols("Jx1:4", positive=True)
    jy = sp.symbols("Jy1:4", positive=True)
    N = ReferenceFrame("N")
    O = Point("O")
    O.set_vel(N, 0)
    bodies, loads = [], []
    parent, joint = N, O
    for k in range(3):
        A = parent.orientnew(f"A{k + 1}", "Axis", (q[k], parent.z))   # relative angle q_k
        A.set_ang_vel(parent, u[k] * parent.z)
        if k > 0:                                   # joint k+1 at the tip of link k
            prev = joint
            joint = prev.locatenew(f"P{k + 1}", L_S[k - 1] * parent.x)
            joint.v2pt_theory(prev, N, parent)
        G = joint.locatenew(f"G{k + 1}", C_S[k] * A.x)
        G.v2pt_theory(joint, N, A)
        Ixx, Iyy = (jx[k], jy[k]) if out_of_plane else (I_S[k] / 2, I_S[k] / 2)
        body = RigidBody(f"B{k + 1}", G, A, M_S[k], (inertia(A, Ixx, Iyy, I_S[k]), G))
        bodies.append(body)
        loads.append((G, -M_S[k] * G_S * N.y))      # gravity along -y on each mass centre
        parent = A
    kane = KanesMethod(N, q_ind=q, u_ind=u, kd_eqs=[q[k].diff() - u[k] for k in range(3)])
    kane.kanes_equations(bodies, loads)
    sub = {**dict(zip(u, U)), **dict(zip(q, Q))}
    M = kane.mass_matrix.xreplace(sub)
    F = kane.forcing.xreplace(sub)
    return M, F, (*jx, *jy)


def symbolic_arm(inertia_about="com"):
    """opalg's planar_arm with every parameter a sympy symbol (gravity (0, -g, 0))."""
    return opalg.planar_arm(list(L_S), list(M_S), list(I_S), com=list(C_S),
                            inertia_about=inertia_about, gravity=(0, -G_S, 0))


def is_zero(expr) -> bool:
    """Exact zero test: expand the trig of angle sums, then fall back on simplify.

    Two short cuts give the same answer without simplify's seconds per entry: a value far from
    0 at a sample point (simplify keeps values, so it could not return 0), and the exact proof
    of helpers.trig_zero (sin² + cos² = 1 alone, where simplify also finds 0).
    """
    e = sp.expand(sp.expand_trig(expr))
    if e == 0:
        return True
    # not a double round-off tolerance: a 30-digit value at O(1) data far from 0 proves nonzero
    if e.free_symbols <= _SAMPLE.keys() and abs(complex(e.evalf(30, subs=_SAMPLE))) > 1e-9:
        return False
    return trig_identity_proved(e) or sp.simplify(e) == 0


def assert_zero_matrix(D):
    bad = [(i, j) for i in range(D.rows) for j in range(D.cols) if not is_zero(D[i, j])]
    assert not bad, f"nonzero entries {bad}: {[sp.simplify(D[i, j]) for i, j in bad]}"


@functools.lru_cache(maxsize=None)
def kane_numeric():
    """Lambdified Kane M(q, params) and F(q, u, params)."""
    M, F, _ = kane_arm()
    fM = sp.lambdify((Q, PARAMS), M, "numpy")
    fF = sp.lambdify((Q, U, PARAMS), F, "numpy")
    return fM, fF


def ider_params(reading, g=0.0):
    """Kane parameter vector (l, c, m, I_com, g) for Ider's data under one inertia reading."""
    L, m, I = map(np.array, (IDER_L, IDER_M, IDER_I))
    c = L / 2
    I_com = I if reading == "com" else I - m * c**2
    return (*L, *c, *m, *I_com, g)


def ider_arm(reading, g=0.0):
    return opalg.planar_arm(list(IDER_L), list(IDER_M), list(IDER_I), inertia_about=reading,
                            gravity=(0.0, -g, 0.0))


def rel_err(a, b):
    """Normwise relative error of a against the reference b (for the "can fail" checks)."""
    a, b = np.asarray(a, dtype=float), np.asarray(b, dtype=float)
    return float(np.abs(a - b).max() / max(np.abs(b).max(), 1e-300))


def states():
    """Seeded random (q, u) states plus the paper's initial state."""
    rng = np.random.default_rng(19900)
    out = [(rng.uniform(-np.pi, np.pi, 3), rng.normal(scale=2.0, size=3)) for _ in range(6)]
    out.append((IDER_Q0, IDER_Y0))
    return out


STATES = states()
STATE_IDS = [f"rand{k}" for k in range(len(STATES) - 1)] + ["ider-initial"]


# ---------------------------------------------------------------------------------------------
# 1. Symbolic, exact
# ---------------------------------------------------------------------------------------------

def test_kane_derivation_is_nontrivial():
    """Kane's M is symmetric, depends on q2, q3 only; F carries gravity and Coriolis terms."""
    M, F, _ = kane_arm()
    assert_zero_matrix(M - M.T)
    assert M.free_symbols & set(Q) == {Q[1], Q[2]}
    assert G_S in F.free_symbols and set(U) <= F.free_symbols
    assert all(not is_zero(M[i, j]) for i in range(3) for j in range(3))


def test_out_of_plane_moments_do_not_enter():
    """With independent xx, yy moments Kane's M and F equal those with I/2: they never enter."""
    M1, F1, extra = kane_arm(out_of_plane=True)
    M0, F0, _ = kane_arm()
    assert not (M1.free_symbols | F1.free_symbols) & set(extra)
    assert_zero_matrix(M1 - M0)
    assert_zero_matrix(F1 - F0)


def test_symbolic_mass_matrix_crba_equals_kane():
    """opalg.crba with symbolic l, c, m, I equals Kane's mass matrix exactly."""
    M_kane, _, _ = kane_arm()
    M_opalg = sp.Matrix(opalg.crba(symbolic_arm(), list(Q)))
    assert_zero_matrix(M_opalg - M_kane)


def test_symbolic_mass_matrix_operators_equals_kane():
    """The operator product H phi M phi* H* (operators(...).mass_matrix.dense()) equals Kane's M."""
    M_kane, _, _ = kane_arm()
    M_ops = sp.Matrix(opalg.operators(symbolic_arm(), list(Q)).mass_matrix.dense())
    assert_zero_matrix(M_ops - M_kane)


def test_symbolic_bias_equals_minus_kane_forcing():
    """opalg.bias (Coriolis + centrifugal + gravity) equals -forcing of Kane exactly."""
    _, F_kane, _ = kane_arm()
    C_opalg = sp.Matrix(opalg.bias(symbolic_arm(), list(Q), list(U)))
    assert_zero_matrix(C_opalg + F_kane)


def test_symbolic_joint_reading_equals_kane_with_parallel_axis():
    """planar_arm(inertia_about="joint") equals Kane with I_com = I_O - m c^2 substituted."""
    M_kane, _, _ = kane_arm()
    M_kane_joint = M_kane.xreplace({I_S[k]: I_S[k] - M_S[k] * C_S[k]**2 for k in range(3)})
    M_opalg = sp.Matrix(opalg.crba(symbolic_arm("joint"), list(Q)))
    assert_zero_matrix(M_opalg - M_kane_joint)


# ---------------------------------------------------------------------------------------------
# 2. Numerical, Ider's data, both inertia readings
# ---------------------------------------------------------------------------------------------

def test_joint_reading_gives_positive_central_inertias():
    """Under the "joint" reading Ider's data give I_com = I - m (L/2)^2 = (2.5, 4.14, 4.14) > 0."""
    I_com = np.array(ider_params("joint")[9:12])
    # exact: m·(L/2)² = 7.5, 4.5 are exact, so both sides are the same correctly rounded subtraction
    assert np.array_equal(I_com, [10 - 30 * 0.25, 8.64 - 18 * 0.25, 8.64 - 18 * 0.25])
    assert np.all(I_com > 0)


@pytest.mark.parametrize("g", [0.0, 9.81], ids=["gravity-off", "gravity-on"])
@pytest.mark.parametrize("reading", ["com", "joint"])
@pytest.mark.parametrize("q, u", STATES, ids=STATE_IDS)
def test_numeric_ider_arm_matches_kane(q, u, reading, g):
    """crba, the operator mass matrix and bias match lambdified Kane on Ider's data (RTOL)."""
    fM, fF = kane_numeric()
    p = ider_params(reading, g)
    M_kane = np.array(fM(q, p), dtype=float)
    F_kane = np.array(fF(q, u, p), dtype=float).ravel()
    arm = ider_arm(reading, g)
    assert_close(opalg.crba(arm, q), M_kane, RTOL, "crba vs Kane M")
    assert_close(opalg.operators(arm, q).mass_matrix.dense(), M_kane, RTOL, "H phi M phi* H* vs Kane M")
    assert_close(opalg.bias(arm, q, u), -F_kane, RTOL, "bias vs -Kane forcing")
    # tau = 0 free motion: both give the same joint accelerations
    qdd_opalg = np.linalg.solve(opalg.crba(arm, q), -opalg.bias(arm, q, u))
    # (the solve amplifies the round-off by at most cond(M))
    qdd_kane = np.linalg.solve(M_kane, F_kane)
    assert_close(qdd_opalg, qdd_kane, cond_tol(np.linalg.cond(M_kane), K_SOLVE), "free-motion qdd")


# ---------------------------------------------------------------------------------------------
# 3. The comparison can fail
# ---------------------------------------------------------------------------------------------

def test_comparison_is_not_vacuous():
    """Swapping the inertia reading or flipping the forcing sign breaks the match by O(0.1..1)."""
    fM, fF = kane_numeric()
    q, u = IDER_Q0, IDER_Y0
    M_com_kane = np.array(fM(q, ider_params("com")), dtype=float)
    M_joint_opalg = opalg.crba(ider_arm("joint"), q)
    M_com_opalg = opalg.crba(ider_arm("com"), q)
    # The readings differ by dI_k = m_k (L_k/2)^2 = (7.5, 4.5, 4.5) in I_com; a link's moment
    # enters every M[i, j] with i, j <= k, so M_com - M_joint = [[sum dI_k for k >= max(i, j)]]
    # at every q -- about 11 % of max|M| at the paper's initial state, 1e12 x RTOL.
    dI = np.array(IDER_M) * (np.array(IDER_L) / 2) ** 2
    dM = np.array([[dI[max(i, j):].sum() for j in range(3)] for i in range(3)])
    # two crba outputs subtracted (was elementwise rtol 1e-12)
    assert_close(M_com_opalg - M_joint_opalg, dM, measured(1e-13, 1.4e-15, "300 random q under 3 BLAS/SIMD kernels"),
                 "M_com - M_joint vs the parallel-axis shifts")
    assert rel_err(M_joint_opalg, M_com_kane) > 0.05
    assert rel_err(M_joint_opalg, M_com_opalg) > 0.05
    # the wrong sign convention C = +F fails too (u != 0, so F has Coriolis terms)
    F = np.array(fF(q, u, ider_params("com", 9.81)), dtype=float).ravel()
    C = opalg.bias(ider_arm("com", 9.81), q, u)
    assert rel_err(C, F) > 0.5
    # and the symbolic check catches a dropped parallel-axis term
    M_kane, _, _ = kane_arm()
    M_wrong = M_kane.xreplace({C_S[2]: 0})
    M_opalg = sp.Matrix(opalg.crba(symbolic_arm(), list(Q)))
    assert not is_zero((M_opalg - M_wrong)[2, 2])
