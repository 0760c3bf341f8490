r"""Hybrid dynamics with sympy entries (exact on a 2-link arm, against Spong's closed-form
Lagrangian) and with bad input (masks, massless passive axes, gimbal lock).
"""

from __future__ import annotations

import time

import numpy as np
import pytest

import opalg
from opalg import Joint, Model

from helpers import no_string_evaluated  # noqa: F401  (autouse fixture: no string is ever evaluated)
from helpers import EVIL, assert_close

G2_ROUTES = "hybrid recursion vs dense partitioned LU solve of crba/bias and vs the exact answer of drawn problems"
from hybrid_cases import spherical_chain, EPS, FWD_TOL, NRHS, check_problem


# ---------------------------------------------------------------------------
# 7. sympy: exact on a 2-link arm (Acrobot, Pendubot)
# ---------------------------------------------------------------------------
@pytest.mark.verifies("G2", "G3", route="sympy: hybrid and reduced_inertia vs Spong's Lagrangian, exactly zero")
@pytest.mark.parametrize("which", ["acrobot", "pendubot"])
def test_sympy_two_link_arm_exact(which):
    """A 2-link planar arm with symbolic lengths, masses, inertias, gravity, q, q̇, τ and q̈:
    opalg.hybrid with joint 1 passive (Acrobot) or joint 2 passive (Pendubot) equals the
    partitioned solve of the textbook Lagrangian (Spong: d11, d12, d22, h = −m2 l1 lc2 sin q2,
    the gravity terms φ1, φ2; lc = L/2, inertias about the mass centres) — simplified to exactly
    zero; crba/bias of the same model agree with the closed form too (a check of the reference),
    and so does the reduced inertia d_aa − d_ap²/d_pp.  Measured: 2.8 s (Acrobot), 0.6 s (Pendubot)."""
    import sympy as sp
    t0 = time.perf_counter()
    q1, q2, u1, u2, t1, t2, a1, a2 = sp.symbols("q1 q2 u1 u2 t1 t2 a1 a2")
    L1, L2, m1, m2, I1, I2, g = sp.symbols("L1 L2 m1 m2 I1 I2 g", positive=True)
    arm = opalg.planar_arm([L1, L2], [m1, m2], [I1, I2], gravity=(0, -g, 0))
    q, qd = np.array([q1, q2], dtype=object), np.array([u1, u2], dtype=object)
    tau, qdd = np.array([t1, t2], dtype=object), np.array([a1, a2], dtype=object)
    lc1, lc2 = L1 / 2, L2 / 2
    d11 = m1 * lc1 ** 2 + m2 * (L1 ** 2 + lc2 ** 2 + 2 * L1 * lc2 * sp.cos(q2)) + I1 + I2
    d12 = m2 * (lc2 ** 2 + L1 * lc2 * sp.cos(q2)) + I2
    d22 = m2 * lc2 ** 2 + I2
    h = -m2 * L1 * lc2 * sp.sin(q2)
    C1 = h * u2 ** 2 + 2 * h * u1 * u2 + (m1 * lc1 + m2 * L1) * g * sp.cos(q1) + m2 * lc2 * g * sp.cos(q1 + q2)
    C2 = -h * u1 ** 2 + m2 * lc2 * g * sp.cos(q1 + q2)

    s1, c1, s2, c2 = sp.symbols("s1 c1 s2 c2")

    def zero(e):
        """Exactly zero as a function of q: sin/cos of q1, q2 become s_i, c_i, and the numerator
        reduced modulo s_i² + c_i² − 1 (a basis of the coordinate ring: c_i^k, s_i c_i^k)
        must vanish identically — a decision procedure, unlike simplify()."""
        e = sp.sympify(e)
        # opalg's constant matrices are float arrays, so coefficients 1.0, 0.5, 0.25 appear:
        # replace each Float by the exact rational of its binary value (a rounded coefficient,
        # e.g. 1/3 as 0.333…, would then fail to cancel).
        e = e.xreplace({x: sp.Rational(float(x)) for x in e.atoms(sp.Float)})
        e = sp.expand_trig(e).subs({sp.sin(q1): s1, sp.cos(q1): c1, sp.sin(q2): s2, sp.cos(q2): c2})
        assert not e.has(sp.sin, sp.cos), e
        num = sp.expand(sp.fraction(sp.together(e))[0])
        for s, c in ((s1, c1), (s2, c2)):
            num = sp.rem(num, s ** 2 + c ** 2 - 1, s)
        return sp.expand(num) == 0

    # the decision procedure can say no: a Pythagorean zero is zero, a cos² term is not
    assert zero(m1 * (sp.sin(q1) ** 2 + sp.cos(q1) ** 2 - 1)) and not zero(g * sp.cos(q2) ** 2)

    Mq, C = opalg.crba(arm, q), opalg.bias(arm, q, qd)
    assert all(zero(x - y) for x, y in zip([Mq[0, 0], Mq[0, 1], Mq[1, 1], C[0], C[1]],
                                           [d11, d12, d22, C1, C2]))
    if which == "acrobot":
        p = np.array([True, False])
        x = (t1 - C1 - d12 * a2) / d11                     # θ̈_1
        ta = d12 * x + d22 * a2 + C2                       # τ_2
        given = (a2, t1)
    else:
        p = np.array([False, True])
        x = (t2 - C2 - d12 * a1) / d22                     # θ̈_2
        ta = d11 * a1 + d12 * x + C1                       # τ_1
        given = (a1, t2)
    qh, th = opalg.hybrid(arm, q, qd, tau, qdd, p)
    ip, ia = int(np.flatnonzero(p)[0]), int(np.flatnonzero(~p)[0])
    assert zero(qh[ip] - x), qh[ip]
    assert zero(th[ia] - ta), th[ia]
    assert sp.sympify(qh[ia]) == given[0] and sp.sympify(th[ip]) == given[1]
    # and the reduced inertia of the single actuator: d_aa − d_ap² / d_pp
    S = opalg.reduced_inertia(arm, q, p)
    ref = (d22 - d12 ** 2 / d11) if which == "acrobot" else (d11 - d12 ** 2 / d22)
    assert S.shape == (1, 1) and zero(S[0, 0] - ref)
    assert time.perf_counter() - t0 < 10, "the symbolic hybrid call (or the check) became slow"


# ---------------------------------------------------------------------------
# 8. errors
# ---------------------------------------------------------------------------
def _small():
    m = opalg.random_model(3, "chain", seed=0)        # dofs (1, 3, 1): a 3-axis joint in the middle
    assert m.ndof == 5
    return m


BAD_MASKS = [
    (np.ones(4, bool), r"passive has shape \(4,\), expected \(5,\)"),
    (np.ones(6, bool), r"passive has shape \(6,\), expected \(5,\)"),
    (np.ones((1, 5), bool), r"passive has shape \(1, 5\), expected \(5,\)"),
    ([[True]] * 5, r"passive has shape \(5, 1\), expected \(5,\)"),
    (np.array(True), r"passive has shape \(\), expected \(5,\)"),
    (None, r"passive has shape \(\), expected \(5,\)"),
    (np.ones(5), r"passive must hold booleans .*entry 0 is 1\.0"),
    ([1.0, 0.0, 1.0, 0.0, 1.0], r"passive must hold booleans .*entry 0 is 1\.0"),
    ([True, False, True, 0.0, True], r"passive must hold booleans .*entry 3 is 0\.0"),
    (np.ones(5, int), r"passive must hold booleans .*entry 0 is 1"),
    ([1, 0, 1, 0, 1], r"passive must hold booleans .*entry 0 is 1"),
    ([True, False, True, False, 2], r"passive must hold booleans .*entry 4 is 2"),
    ([True, False, True, False, None], r"passive must hold booleans .*entry 4 is None"),
    ("TFTFT", r"passive must be a boolean mask .*got the string 'TFTFT'"),
    (np.array(["True"] * 5), r"passive must be a boolean mask .*got the string"),
    (["True", "False", "True", "False", "True"], r"passive must hold booleans .*entry 0 is 'True'"),
    (EVIL, r"passive must be a boolean mask .*got the string"),
    ([EVIL] * 5, r"passive must hold booleans .*entry 0 is"),
]


@pytest.mark.parametrize("bad, match", BAD_MASKS, ids=[f"mask{i}" for i in range(len(BAD_MASKS))])
def test_bad_masks_are_state_errors_naming_passive(bad, match):
    """Wrong length, 2-D, 0-d, floats, ints, None, strings (never evaluated: the autouse
    no_string_evaluated fixture): a StateError naming ``passive`` from every entry point."""
    m = _small()
    z = np.zeros(m.ndof)
    calls = [("hybrid", lambda: opalg.hybrid(m, z, z, z, z, bad)),
             ("reduced_inertia", lambda: opalg.reduced_inertia(m, z, bad)),
             ("operators", lambda: opalg.operators(m, z, passive=bad)),
             ("articulated", lambda: opalg.articulated(m, z, passive=bad))]
    for name, call in calls:
        if bad is None and name in ("operators", "articulated"):
            continue   # passive=None is their documented default (every dof passive)
        with pytest.raises(opalg.StateError, match=match):
            call()


def test_good_mask_spellings_are_accepted():
    """A tuple or list of bools, a bool object array and np.bool_ entries are the same mask."""
    m = _small()
    rng = np.random.default_rng(3)
    q, qd, qdd, tau = rng.normal(size=(4, m.ndof))
    p = np.array([True, False, True, True, False])
    ref = opalg.hybrid(m, q, qd, tau, qdd, p)
    for spelling in (tuple(p.tolist()), p.tolist(), p.astype(object), [np.bool_(x) for x in p]):
        out = opalg.hybrid(m, q, qd, tau, qdd, spelling)
        assert np.array_equal(out[0], ref[0]) and np.array_equal(out[1], ref[1])


E3, Z3 = np.eye(3), np.zeros(3)


def _spin_slide():
    """A massless body on a revolute z axis carrying a 2 kg point mass on a z slide: the spin
    axis passes through the only mass, so it moves no mass at any q (ℳ = diag(0, 2))."""
    return Model([-1, 0], [Joint("R", [0, 0, 1.0], name="spin"), Joint("P", [0, 0, 1.0], name="slide")],
                 [(E3, Z3)] * 2, [(0.0, Z3, np.zeros((3, 3))), (2.0, Z3, np.zeros((3, 3)))],
                 allow_massless=True)


def test_passive_axis_moving_no_mass_is_a_model_error():
    """ℳ_pp singular because a passive axis moves no mass: ModelError naming body, joint, axis.
    (A massless *tip* body cannot even be built: the constructor refuses a joint whose whole
    subtree is massless, naming the body.)"""
    m = _spin_slide()
    q, qd = np.array([0.4, 0.7]), np.array([0.3, -0.2])
    with pytest.raises(opalg.ModelError, match=r"body 0 \(body0\), joint spin, axis 0: moves no mass"):
        opalg.hybrid(m, q, qd, np.zeros(2), np.zeros(2), [True, False])
    with pytest.raises(opalg.ModelError, match=r"body 0 \(body0\), joint spin, axis 0: moves no mass"):
        opalg.reduced_inertia(m, q, [True, True])
    # the same on a body further out: a massive base link, then the spin / slide pair
    base = (1.0, np.array([0.1, 0.0, 0.0]), np.diag([0.1, 0.2, 0.25]))
    m3 = Model([-1, 0, 1], [Joint("R", [1.0, 0, 0], name="shoulder"), Joint("R", [0, 0, 1.0], name="spin"),
                            Joint("P", [0, 0, 1.0], name="slide")],
               [(E3, Z3), (E3, np.array([0.3, 0, 0])), (E3, Z3)],
               [base, (0.0, Z3, np.zeros((3, 3))), (2.0, Z3, np.zeros((3, 3)))], allow_massless=True)
    with pytest.raises(opalg.ModelError, match=r"body 1 \(body1\), joint spin, axis 0: moves no mass"):
        opalg.hybrid(m3, np.zeros(3), np.zeros(3), np.zeros(3), np.zeros(3), [False, True, True])
    with pytest.raises(opalg.ModelError, match=r"body 1 \(body1\).*subtree is massless"):
        Model([-1, 0], [Joint("R", [1.0, 0, 0]), Joint("R", [0, 0, 1.0])], [(E3, Z3)] * 2,
              [base, (0.0, Z3, np.zeros((3, 3)))], allow_massless=True)


def test_active_axis_moving_no_mass_is_fine():
    """The same spin axis *active* (prescribed): ℳ_pp = [2] is regular, the spin torque is 0
    for any prescribed spin acceleration and rate, and the point mass falls freely along its
    slide: q̈_slide = τ_slide / 2 − 9.81 (closed form).  ABA refuses this model (ℳ singular);
    the reduced inertia of the spin is [[0]]; all active gives the RNEA."""
    m = _spin_slide()
    rng = np.random.default_rng(4)
    for _ in range(3):
        q, qd, qdd, tau = rng.normal(size=(4, 2))
        qh, th = opalg.hybrid(m, q, qd, tau, qdd, [False, True])
        assert th[0] == 0.0
        assert qh[0] == qdd[0] and th[1] == tau[1]
        # A priori (cond 1: no cancellation is amplified): the closed form is a division by the
        # mass and a subtraction, the recursion a handful more roundings of the same two terms;
        # 4 ε of the terms' sum bounds both.
        assert abs(qh[1] - (tau[1] / 2 - 9.81)) <= 4 * EPS * (abs(tau[1]) + 9.81)
        qh, th = opalg.hybrid(m, q, qd, tau, qdd, [False, False])
        assert_close(th, opalg.rnea(m, q, qd, qdd), FWD_TOL, "all active")
        assert th[0] == 0.0 and abs(th[1] - 2 * (qdd[1] + 9.81)) <= 4 * EPS * abs(th[1])   # as above
    assert np.array_equal(opalg.reduced_inertia(m, q, [False, True]), np.zeros((1, 1)))
    with pytest.raises(opalg.ModelError):
        opalg.aba(m, q, qd, tau)


@pytest.mark.verifies("G2", route=G2_ROUTES)
def test_massless_intermediate_body_on_a_passive_joint():
    """A massless body on a passive joint whose only mass lies beyond an active joint is fine
    (ℳ_pp = the inertia of the outer body about the passive axis, with the active joint rigid):
    equal to the dense solve."""
    outer = (1.5, np.array([0.2, 0.1, 0.0]), np.diag([0.02, 0.03, 0.04]))
    m = Model([-1, 0], [Joint("R", [0, 0, 1.0], name="free"), Joint("R", [0, 1.0, 0], name="motor")],
              [(E3, Z3), (E3, np.array([0.25, 0, 0]))], [(0.0, Z3, np.zeros((3, 3))), outer],
              allow_massless=True)
    rng = np.random.default_rng(5)
    q, qd = rng.normal(size=(2, 2))
    check_problem(m, q, qd, rng.normal(size=(NRHS, 2)), np.array([True, False]), label="massless intermediate")


@pytest.mark.verifies("G2", route=G2_ROUTES)
def test_gimbal_lock_with_all_axes_passive_is_refused():
    """A spherical joint exactly at gimbal lock (q_y = π/2): with all three axes passive (or x and
    z, which coincide there) ℳ_pp is singular — SingularConfigurationError naming the joint;
    with one axis passive, or x and y, or y and z, the others prescribed, ℳ_pp is regular and the
    result equals the dense solve (to C_COND κ_p ε, and 10x LU + C_COND κ_p ε)."""
    m = spherical_chain(2)
    rng = np.random.default_rng(6)
    q, qd = rng.uniform(-1, 1, (2, m.ndof))
    q[1] = np.pi / 2
    z = np.zeros(m.ndof)
    for sel in ([0, 1, 2], [0, 2]):
        p = np.zeros(m.ndof, bool)
        p[sel] = True
        with pytest.raises(opalg.SingularConfigurationError, match=r"body 0 \(body0\), joint ball0: singular"):
            opalg.hybrid(m, q, qd, z, z, p)
        with pytest.raises(opalg.SingularConfigurationError, match=r"at batch index \(1,\)"):
            opalg.hybrid(m, np.stack([q + [0, 0.2, 0, 0, 0, 0], q]), qd, z, z, p)   # one locked state of two
        opalg.hybrid(m, q + [0, 0.2, 0, 0, 0, 0], qd, z, z, p)                    # away from the lock: fine
    for sel in ([0], [1], [2], [0, 1], [1, 2], [0, 3, 4, 5], [2, 4]):
        p = np.zeros(m.ndof, bool)
        p[sel] = True
        check_problem(m, q, qd, rng.uniform(-1, 1, (NRHS, m.ndof)), p, label=f"lock, passive {sel}")
