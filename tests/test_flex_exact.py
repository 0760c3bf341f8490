"""opalg.flex on one link with one mode against a hand-written Lagrangian (docs/REFERENCE.md K3, K4).

opalg.flex is numeric only (float, or complex for the complex step): a FlexModel's parameters
and states are float arrays, and sympy entries are refused with a ModelError / StateError
(checked below).  So the "exact" check is done the other way round: the Lagrangian of the same
kinematics is written by hand with sympy (planar positions of the hub mass centre and of the
node's mass centre, the node translated by φη along y and turned by ψη about z), the
Euler–Lagrange equations are formed symbolically, and they are evaluated with mpmath at 40
significant digits.  flex.crba and flex.rnea (double precision) must agree with them to
rounding: relative 1e-13 (a few dozen flops of size-one operands, each ~1e-16).
"""

from __future__ import annotations

import numpy as np
import pytest
import sympy as sp

from opalg import flex
from opalg.errors import ModelError, StateError
from opalg.joints import Joint

from helpers import assert_close

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


@pytest.mark.parametrize("seed", range(4))
def test_one_link_one_mode_vs_lagrangian_40_digits(lagrangian, seed):
    """[K3, K4] ℳ and the bias C + ∇U + dη̇ of flex equal the hand Lagrangian's (40 digits)."""
    M_sym, h_sym, syms, s = lagrangian
    fm = _flex_model(PAR)
    x, v, a = np.random.default_rng(seed).normal(size=(3, 2)) * np.array([[0.4], [1.5], [1.0]])
    M_ref = _at(M_sym, syms, s, x, v).astype(float)
    h_ref = _at(h_sym, syms, s, x, v).astype(float).ravel()
    assert_close(flex.crba(fm, x), M_ref, 1e-13, "ℳ vs ∂²T/∂q̇²")
    assert_close(flex.rnea(fm, x, v, np.zeros(2)), h_ref, 1e-13, "bias vs Euler–Lagrange")
    assert_close(flex.rnea(fm, x, v, a), M_ref @ a + h_ref, 1e-13, "rnea vs ℳq̈ + h")


def test_reference_is_not_trivial(lagrangian):
    """Guard on the reference: at η = 0 the mass matrix is the rigid one of hub + node
    (θθ entry = m0h² + Jhub + m1(ℓ + c)² + Jnode), and the modal-joint coupling is nonzero."""
    M_sym, _, syms, s = lagrangian
    p = PAR
    M0 = _at(M_sym, syms, s, [0.0, 0.3], [0.0, 0.0]).astype(float)
    rigid = p["m0"] * p["h"] ** 2 + p["Jhub"] + p["m1"] * (p["ell"] + p["c"]) ** 2 + p["Jnode"]
    assert M0[1, 1] == pytest.approx(rigid, rel=1e-15)
    assert abs(M0[0, 1]) > 0.1


def test_sympy_entries_are_refused():
    """opalg.flex is numeric: sympy states and parameters get a clear error, not a traceback."""
    fm = _flex_model(PAR)
    with pytest.raises(StateError, match="array of numbers"):
        flex.crba(fm, [sp.Symbol("eta"), 0])
    with pytest.raises(ModelError, match="array of numbers"):
        flex.FlexBody((1.0, np.zeros(3), np.eye(3)), [[1.0, 0, 0]], [(1.0, np.zeros(3), np.eye(3))],
                      Phi=[[[0.0], [sp.Symbol("phi")], [0.0]]])
