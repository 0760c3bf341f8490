"""opalg.flex on one link with one mode against a hand-written Lagrangian (docs/REFERENCE.md K3, K4, K5).

The Lagrangian of the same kinematics is written by hand with sympy (planar positions of the
hub mass centre and of the node's mass centre, the node translated by φη along y and turned by
ψη about z) and its Euler–Lagrange equations are formed symbolically: an independent route.

* Exactly: flex.crba and flex.rnea with sympy entries (θ, η, θ̇, η̇ and every mass, length,
  inertia, mode shape, stiffness, damping and g a symbol) minus the Lagrangian's ℳ and bias are
  identically zero.  The zero test is an exact normal form: after rewriting sin and cos as
  exponentials and expanding, both sides are sums of exp(i(jθ + lψη)) with polynomial
  coefficients, so the difference is 0 if and only if the identity holds (a 0 is a proof;
  sp.simplify reaches the same 0 but takes ~10 s).
* At 40 digits: double-precision flex.crba/rnea against the equations evaluated with mpmath;
  flex.aba with sympy entries, evaluated at 40 digits, against the 40-digit solve of the
  Lagrangian's equations.

Tolerances: ``TOL_40`` and ``TOL_POINT`` measured (SWEEP: random states, and for the all-numeric
routes random body parameters, ×0.5–1.5 of PAR), k·cond(ℳ)·ε where a double solve or inverse
enters, and exact zero tests for the symbolic identities.
"""
from __future__ import annotations

import numpy as np
import pytest
import sympy as sp

from opalg import flex
from opalg.errors import ModelError, StateError
from opalg.model.joints import Joint

from helpers import (  # noqa: F401 (autouse fixture)
    EVIL, assert_close, cond_tol, measured, no_string_evaluated)

SWEEP = "300 random states and body parameters under 3 BLAS/SIMD kernels"
#: double-precision flex.crba/rnea vs the Lagrangian at 40 digits (a few dozen flops of size-one operands).
TOL_40 = measured(1e-13, 6.2e-16, SWEEP)
#: flex with a sympy state on the numeric body, evaluated at a point at 30 digits, vs the double call
#: or the 40-digit Lagrangian: the body's double constants (0.35 is not 7/20) set the error.
TOL_POINT = measured(1e-13, 2.5e-16, "300 random states of the PAR body under 3 BLAS/SIMD kernels")
#: flex.aba with every entry symbolic, evaluated at 40 digits, vs the 40-digit solve: the 53-bit sympy
#: Floats in the expressions (the 1.0 of numeric rotation blocks) cap evalf's precision.
TOL_ABA_40 = measured(1e-14, 4.9e-16, "150 random states and body parameters under 3 BLAS/SIMD kernels")
#: k of k·cond(ℳ)·ε for the routes through a double solve or inverse (worst 2.1 cond(ℳ)·ε, SWEEP).
K_SOLVE = 100

# numbers of the test body: hub (mass, com x, I_zz about com), node at (ell, 0, 0) with mass,
# com x offset in node axes and I_zz; mode shape (φ along y, ψ about z), stiffness, damping, gravity
PAR = dict(m0=1.3, h=0.35, Jhub=0.07, ell=0.9, m1=0.6, c=0.12, Jnode=0.02, phi=0.8, psi=1.7, k=11.0, d=0.3, g=9.81)


def _flex_model(p):
    hub = (p["m0"], [p["h"], 0, 0], np.diag([0.03, 0.05, p["Jhub"]]))
    node = (p["m1"], [p["c"], 0, 0], np.diag([0.012, 0.015, p["Jnode"]]))
    body = flex.FlexBody(hub, [[p["ell"], 0, 0]], [node], Phi=[[[0.0], [p["phi"]], [0.0]]],
                         Psi=[[[0.0], [0.0], [p["psi"]]]], K=[[p["k"]]], D=[[p["d"]]])
    return flex.FlexModel([-1], [Joint("R", [0, 0, 1])], [(np.eye(3), np.zeros(3))], [body],
                          gravity=(0.0, -p["g"], 0.0))


def _lagrangian_equations():
    """(ℳ, h) of the hand-written Lagrangian: ℳ = ∂²T/∂q̇², h = d/dt ∂T/∂q̇ − ∂T/∂q + ∂U/∂q
    + dη̇ at q̈ = 0; q = (η, θ), all symbolic."""
    eta, th, ed, td = sp.symbols("eta theta etad thetad")
    s = {n: sp.Symbol(n) for n in PAR}
    t = sp.Symbol("t")
    E, Th = sp.Function("E")(t), sp.Function("Th")(t)

    def rot(a):
        return sp.Matrix([[sp.cos(a), -sp.sin(a)], [sp.sin(a), sp.cos(a)]])

    hub_c = rot(Th) * sp.Matrix([s["h"], 0])
    node_c = rot(Th) * sp.Matrix([s["ell"], s["phi"] * E]) + rot(Th + s["psi"] * E) * sp.Matrix([s["c"], 0])
    T = (s["m0"] * hub_c.diff(t).dot(hub_c.diff(t)) + s["Jhub"] * Th.diff(t) ** 2
         + s["m1"] * node_c.diff(t).dot(node_c.diff(t)) + s["Jnode"] * (Th.diff(t) + s["psi"] * E.diff(t)) ** 2) / 2
    U = s["g"] * (s["m0"] * hub_c[1] + s["m1"] * node_c[1]) + s["k"] * E ** 2 / 2
    L = T - U
    q, qd = [E, Th], [E.diff(t), Th.diff(t)]
    eqs = [sp.diff(L.diff(qdi), t) - L.diff(qi) for qi, qdi in zip(q, qd)]
    eqs[0] += s["d"] * E.diff(t)
    acc = [E.diff(t, 2), Th.diff(t, 2)]
    M = sp.Matrix(2, 2, lambda i, j: sp.expand(eqs[i]).coeff(acc[j]))
    h = sp.Matrix([e.subs({a: 0 for a in acc}) for e in eqs])
    plain = {E.diff(t): ed, Th.diff(t): td, E: eta, Th: th}
    sub = lambda X: X.subs(plain)                                          # noqa: E731
    return sub(M), sub(h), (eta, th, ed, td), s


@pytest.fixture(scope="module")
def lagrangian():
    return _lagrangian_equations()


def _at(expr, syms, s, x, v):
    vals = {**{s[n]: sp.Float(str(PAR[n]), 40) for n in PAR},
            **dict(zip(syms, [sp.Float(repr(float(z)), 40) for z in (*x, *v)]))}
    return np.array(expr.evalf(40, subs=vals).tolist(), dtype=object)


@pytest.mark.verifies("K3", "K4", route="double flex.crba/rnea vs the hand Lagrangian's equations at 40 digits")
@pytest.mark.parametrize("seed", range(4))
def test_one_link_one_mode_vs_lagrangian_40_digits(lagrangian, seed):
    """[K3, K4] ℳ and the bias C + ∇U + dη̇ of flex equal the hand Lagrangian's (40 digits)."""
    M_sym, h_sym, syms, s = lagrangian
    fm = _flex_model(PAR)
    x, v, a = np.random.default_rng(seed).normal(size=(3, 2)) * np.array([[0.4], [1.5], [1.0]])
    M_ref = _at(M_sym, syms, s, x, v).astype(float)
    h_ref = _at(h_sym, syms, s, x, v).astype(float).ravel()
    assert_close(flex.crba(fm, x), M_ref, TOL_40, "ℳ vs ∂²T/∂q̇²")
    assert_close(flex.rnea(fm, x, v, np.zeros(2)), h_ref, TOL_40, "bias vs Euler–Lagrange")
    assert_close(flex.rnea(fm, x, v, a), M_ref @ a + h_ref, TOL_40, "rnea vs ℳq̈ + h")


def test_reference_is_not_trivial(lagrangian):
    """Guard on the reference: at η = 0 the mass matrix is the rigid one of hub + node
    (θθ entry = m0h² + Jhub + m1(ℓ + c)² + Jnode), and the modal-joint coupling is nonzero."""
    M_sym, _, syms, s = lagrangian
    p = PAR
    M0 = _at(M_sym, syms, s, [0.0, 0.3], [0.0, 0.0])
    r = {n: sp.Rational(str(p[n])) for n in p}                      # the decimals _at substitutes
    rigid = r["m0"] * r["h"] ** 2 + r["Jhub"] + r["m1"] * (r["ell"] + r["c"]) ** 2 + r["Jnode"]
    # exact rational vs 40-digit evaluation: not a double round-off tolerance (was rel 1e-15 in floats)
    assert abs(M0[1, 1] - rigid) <= sp.Rational(1, 10 ** 30) * rigid
    assert abs(float(M0[0, 1])) > 0.1


def _symbolic_model(s):
    """The test body with every parameter a sympy symbol (Ixx, Iyy: symbols the planar motion never sees)."""
    ax, ay, bx, by = sp.symbols("Ax Ay Bx By")
    hub = (s["m0"], [s["h"], 0, 0], np.diag(np.array([ax, ay, s["Jhub"]], dtype=object)))
    node = (s["m1"], [s["c"], 0, 0], np.diag(np.array([bx, by, s["Jnode"]], dtype=object)))
    body = flex.FlexBody(hub, [[s["ell"], 0, 0]], [node], Phi=[[[0], [s["phi"]], [0]]],
                         Psi=[[[0], [0], [s["psi"]]]], K=[[s["k"]]], D=[[s["d"]]])
    return flex.FlexModel([-1], [Joint("R", [0, 0, 1])], [(np.eye(3), np.zeros(3))], [body],
                          gravity=(0, -s["g"], 0))


def _is_zero(expr) -> bool:
    """Exact: sin/cos as exponentials, expanded — a normal form (module docstring)."""
    return all(sp.expand(e.rewrite(sp.exp)) == 0 for e in sp.Matrix(expr))


@pytest.mark.verifies("K3", "K4", route="flex.crba/rnea with all entries symbolic minus the hand Lagrangian: exact 0")
def test_one_link_one_mode_sympy_exact(lagrangian):
    """[K3, K4] flex.crba − ℳ_L, flex.rnea(x, v, 0) − h_L and flex.rnea(x, v, a) − (ℳ_L a + h_L)
    are identically zero, all parameters symbolic; the results are object arrays of sympy."""
    M_sym, h_sym, (eta, th, ed, td), s = lagrangian
    fm = _symbolic_model(s)
    a = sp.symbols("etadd thetadd")
    M = flex.crba(fm, [eta, th])
    h = flex.rnea(fm, [eta, th], [ed, td], [0, 0])
    T = flex.rnea(fm, [eta, th], [ed, td], list(a))
    assert M.dtype == object and M.shape == (2, 2) and h.shape == (2,)
    assert _is_zero(sp.Matrix(M) - M_sym)
    assert _is_zero(sp.Matrix(h) - h_sym)
    assert _is_zero(sp.Matrix(T) - (M_sym * sp.Matrix(a) + h_sym))
    # the zero test can fail: a wrong stiffness (2k) or a missing node inertia is detected
    assert not _is_zero(sp.Matrix(h) - h_sym.subs(s["k"], 2 * s["k"]))
    assert not _is_zero(sp.Matrix(M) - M_sym.subs(s["Jnode"], 0))


@pytest.mark.verifies("K3", "K4", route="flex with a sympy state, evaluated at a point, vs the double call and the Lagrangian")
def test_symbolic_state_numeric_body(lagrangian):
    """[K3, K4] Symbols in the state only (numeric body): crba/rnea evaluated at a point equal the
    double-precision call there (the same code, so rounding only) and the 40-digit Lagrangian."""
    M_sym, h_sym, syms, s = lagrangian
    fm = _flex_model(PAR)
    x, v = np.random.default_rng(7).normal(size=(2, 2)) * np.array([[0.4], [1.5]])
    M = flex.crba(fm, list(syms[:2]))
    h = flex.rnea(fm, list(syms[:2]), list(syms[2:]), [0, 0])
    at = dict(zip(syms, (*x, *v)))
    M_num = np.array(sp.Matrix(M).evalf(30, subs=at).tolist(), dtype=float)
    h_num = np.array(sp.Matrix(h).evalf(30, subs=at).tolist(), dtype=float).ravel()
    assert_close(M_num, flex.crba(fm, x), TOL_POINT, "symbolic crba at a point vs numeric")
    assert_close(h_num, _at(h_sym, syms, s, x, v).astype(float).ravel(), TOL_POINT, "symbolic rnea vs Lagrangian")
    assert_close(M_num, _at(M_sym, syms, s, x, v).astype(float), TOL_POINT, "symbolic crba vs Lagrangian")


@pytest.mark.verifies("K5", route="flex.aba with all entries symbolic, at 40 digits, vs the 40-digit solve of the Lagrangian")
def test_aba_symbolic_vs_lagrangian_solve(lagrangian):
    """[K5] flex.aba with sympy state and torques, evaluated at 40 digits, equals the 40-digit
    solution of ℳ_L ẍ = τ − h_L (independent route).  TOL_ABA_40: flex's expressions hold exact
    constants as 53-bit sympy Floats (the 1.0 of numeric rotation blocks), which cap evalf's tracked
    precision near double (2e-18 relative here, up to 4.9e-16 at other states and parameters)."""
    M_sym, h_sym, syms, s = lagrangian
    fm = _symbolic_model(s)
    tau = sp.symbols("tau0 tau1")
    acc = flex.aba(fm, list(syms[:2]), list(syms[2:]), list(tau))
    x, v, t = np.random.default_rng(3).normal(size=(3, 2)) * np.array([[0.4], [1.5], [2.0]])
    vals = {**{s[n]: sp.Float(str(PAR[n]), 40) for n in PAR}, **{sp.Symbol(n): 0 for n in ("Ax", "Ay", "Bx", "By")},
            **dict(zip((*syms, *tau), [sp.Float(repr(float(z)), 40) for z in (*x, *v, *t)]))}
    ref = (M_sym.evalf(40, subs=vals)).LUsolve(sp.Matrix(t) - h_sym.evalf(40, subs=vals))
    got = sp.Matrix(acc).evalf(40, subs=vals)
    # the difference is taken at 40 digits, then rounded (was max|diff| < 1e-14·max(1, |ref|))
    diff = np.array([float(got[i] - ref[i]) for i in range(2)])
    assert_close(diff, 0 * diff, TOL_ABA_40, "symbolic aba at 40 digits vs 40-digit solve",
                 scale=float(sp.sqrt(ref[0] ** 2 + ref[1] ** 2)))
    cond = np.linalg.cond(np.array(M_sym.evalf(40, subs=vals).tolist(), dtype=float))
    assert_close(np.array(got.tolist(), dtype=float).ravel(), flex.aba(_flex_model(PAR), x, v, t),
                 cond_tol(cond, K_SOLVE), "symbolic aba vs numeric aba")


def test_strings_are_refused_never_evaluated():
    """A string anywhere (state, torques, body data) is refused with StateError / ModelError
    naming the argument, and never evaluated (the autouse fixture checks EVIL did not run)."""
    fm = _flex_model(PAR)
    z = np.zeros(2)
    with pytest.raises(StateError, match="x has a non-numeric entry"):
        flex.crba(fm, [EVIL, 0])
    with pytest.raises(StateError, match="v has a non-numeric entry"):
        flex.rnea(fm, z, [0, EVIL], z)
    with pytest.raises(StateError, match="tau has a non-numeric entry"):
        flex.aba(fm, z, z, [EVIL, sp.Symbol("t")])
    with pytest.raises(StateError, match="theta_dd has a non-numeric entry"):
        flex.hybrid(fm, z, z, [EVIL])
    hub, node = (1.0, np.zeros(3), np.eye(3)), (1.0, np.zeros(3), np.eye(3))
    with pytest.raises(ModelError, match="Phi"):
        flex.FlexBody(hub, [[1.0, 0, 0]], [node], Phi=[[[0.0], [EVIL], [0.0]]])
    with pytest.raises(ModelError, match="node_positions"):
        flex.FlexBody(hub, [[EVIL, 0, 0]], [node])
    with pytest.raises(ModelError, match="mass"):
        flex.FlexBody((EVIL, np.zeros(3), np.eye(3)), [[1.0, 0, 0]], [node])
    with pytest.raises(ModelError, match="K"):
        flex.FlexBody(hub, [[1.0, 0, 0]], [node], Phi=[[[0.0], [1.0], [0.0]]], K=[[EVIL]])


def test_bad_symbolic_entries():
    """sympy nan/zoo/oo in the state or the body data, and a structurally asymmetric symbolic K,
    are refused with a message naming them."""
    fm = _flex_model(PAR)
    with pytest.raises(StateError, match="non-finite"):
        flex.crba(fm, [sp.zoo, 0])
    a, b = sp.symbols("a b")
    hub, node = (1.0, np.zeros(3), np.eye(3)), (1.0, np.zeros(3), np.eye(3))
    Phi = [[[0.0, 0.0], [1.0, 0.0], [0.0, 1.0]]]
    with pytest.raises(ModelError, match="non-finite"):
        flex.FlexBody(hub, [[1.0, 0, 0]], [node], Phi=[[[0.0], [sp.oo], [0.0]]])
    with pytest.raises(ModelError, match="symmetric"):
        flex.FlexBody(hub, [[1.0, 0, 0]], [node], Phi=Phi, K=[[a, b], [a, a]])
    assert flex.FlexBody(hub, [[1.0, 0, 0]], [node], Phi=Phi, K=[[a, b], [b, a]]).symbolic


@pytest.mark.verifies("K7", route="flex.operators with a sympy state, at a point: E8 ℳ⁻¹ and E6 L D L* vs the 40-digit ℳ_L")
def test_operators_symbolic_state(lagrangian):
    """[K7] flex.operators with a sympy state: E8's ℳ⁻¹ (adjugate pivots, unsimplified) and E6's
    L D L*, evaluated at a point, against the 40-digit Lagrangian ℳ_L.  The double constants of the
    numeric body perturb ℳ by O(ε) and the inverse amplifies that by cond(ℳ): K_SOLVE·cond(ℳ)·ε
    (was 1e-13; 300 random states under 3 kernels: ≤ 0.39 cond(ℳ)·ε for E8, 0.07 for E6)."""
    M_sym, _, syms, s = lagrangian
    fm = _flex_model(PAR)
    ops = flex.operators(fm, list(syms[:2]))
    x = np.array([0.3, -0.7])
    at = dict(zip(syms[:2], x))
    M_ref = _at(M_sym, syms, s, x, [0.0, 0.0]).astype(float)
    num = lambda A: np.array(sp.Matrix(A).evalf(30, subs=at).tolist(), dtype=float)   # noqa: E731
    tol = cond_tol(np.linalg.cond(M_ref), K_SOLVE)
    assert_close(num(ops.mass_matrix_inv.dense()) @ M_ref, np.eye(2), tol, "E8 ℳ⁻¹ℳ_L")
    assert_close(num((ops.L @ ops.D @ ops.L.T).dense()), M_ref, tol, "E6 L D L*")


def test_symbolic_hub_numeric_nodes():
    """[K3] Only the hub mass symbolic (numeric nodes, mode shapes, state): crba with the symbol
    substituted equals the all-numeric model's (same code, rounding only; measured)."""
    m0 = sp.Symbol("m0")
    num, sym = _flex_model(PAR), _flex_model({**PAR, "m0": m0})
    x = np.array([0.2, -0.5])
    M = flex.crba(sym, x)
    assert M.dtype == object and M[1, 1].has(m0)
    got = np.array(sp.Matrix(M).subs(m0, PAR["m0"]).evalf(30).tolist(), dtype=float)
    assert_close(got, flex.crba(num, x), measured(1e-14, 1.6e-16, "275 random states under 3 BLAS/SIMD kernels"),
                 "symbolic hub mass")
