"""hybrid_derivatives (docs/REFERENCE.md G6) against complex step of opalg.hybrid and the dense blocks.

Complex step: every column is Im hybrid(x + i h e_j) / h with h = 1e-30 (configuration columns
through ``opalg.integrate(model, q, i h e_j)``, the tangent space of a free joint), which runs only
``opalg.hybrid`` on complex states — a route that never forms a derivative.  The dense route builds
ℳ by the CRBA and solves with ℳ_pp by LU.

Tolerances: those of hybrid dynamics itself (tests/hybrid_cases.py), k = 100 as for the ABA
derivatives (docs/REFERENCE.md E15).  The θ̈ outputs go through ℳ_pp⁻¹: k·cond(ℳ_pp)·ε relative.
The T outputs add ∂R_a/∂x to ℳ_ap ∂θ̈_p/∂x, two terms that may nearly cancel, so their error is
bounded relative to the sum of the terms' norms (as FWD_TOL bounds T_a), times the cond(ℳ_pp) that
∂θ̈_p carries: k·cond(ℳ_pp)·ε·(‖∂R_a‖ + ‖ℳ_ap‖₂‖∂θ̈_p‖).  Relative to ‖∂T_a‖ alone a near
cancellation reached 72·cond(ℳ_pp)·ε (∂T_a/∂θ̇ of a floating chain, masses over 10^±3); against
the terms it is 6e-4.  Measured over these cases: 0.69·cond(ℳ_pp)·ε for θ̈, 0.24 for T.
"""

from __future__ import annotations

import numpy as np
import pytest

import opalg

from helpers import assert_close, cond_tol
from hybrid_cases import FWD_TOL
from test_derivatives import CASES, _model      # the ABA derivatives' models: every joint kind, free roots, 10^±3

H = 1e-30
K_SOLVE = 100


def _state(m, seed):
    rng = np.random.default_rng(seed)
    q = opalg.integrate(m, opalg.neutral(m), rng.uniform(-np.pi, np.pi, m.nv))
    M = opalg.crba(m, q)
    scale = np.linalg.norm(M, 2)
    return q, rng.normal(size=m.nv), scale * rng.normal(size=m.nv), rng.normal(size=m.nv), rng.normal(size=(m.n, 6))


def _mask(m, seed):
    """Random per-dof mask with at least one passive and one active dof; it splits multi-axis joints."""
    rng = np.random.default_rng(900 + seed)
    p = rng.random(m.nv) < 0.5
    p[0], p[-1] = True, False
    return p


def _tol(m, q, p):
    """k·cond(ℳ_pp)·ε, cond computed here."""
    return cond_tol(np.linalg.cond(opalg.crba(m, q)[np.ix_(p, p)]), K_SOLVE, "ℳ_pp")


def _terms(m, q, qd, tau, qdd, p, fe=None):
    """Per input w, ‖∂R_a/∂w‖ + ‖ℳ_ap‖₂‖∂θ̈_p/∂w‖: the size of the terms of ∂T_a/∂w, from the dense
    ℳ, an LU solve with ℳ_pp and the RNEA derivatives at the hybrid solution's θ̈."""
    a = ~p
    M = opalg.crba(m, q)
    Mpp, Map = M[np.ix_(p, p)], M[np.ix_(a, p)]
    dR, dRd = opalg.rnea_derivatives(m, q, qd, opalg.hybrid(m, q, qd, tau, qdd, p, f_ext=fe)[0], f_ext=fe)
    dqdd_p = {"q": -np.linalg.solve(Mpp, dR[p]), "qd": -np.linalg.solve(Mpp, dRd[p]),
              "tau": np.linalg.inv(Mpp), "qdd": -np.linalg.solve(Mpp, M[np.ix_(p, a)])}
    dR_a = {"q": dR[a], "qd": dRd[a], "tau": 0.0, "qdd": M[a]}
    return {w: np.linalg.norm(dR_a[w]) + np.linalg.norm(Map, 2) * np.linalg.norm(dqdd_p[w]) for w in dqdd_p}


def _assert_outputs(d, ref, m, q, qd, tau, qdd, p, fe, label):
    """Every field of ``d`` against ``ref`` (a mapping of the same names) on the module's yardsticks."""
    tol, terms = _tol(m, q, p), _terms(m, q, qd, tau, qdd, p, fe)
    for name in d._fields:
        wrt = name.split("_d")[1]
        scale = terms[wrt] if name.startswith("dtau") else None
        assert_close(getattr(d, name), ref[name], tol, f"{label} {name}", scale=scale)


def _complex_step(m, q, qd, tau, qdd, p, fe):
    """The eight derivatives of hybrid's outputs by complex step, in HybridDerivatives' order."""
    eye = np.eye(m.nv)
    cols = {"q": [opalg.hybrid(m, opalg.integrate(m, q, 1j * H * e), qd, tau, qdd, p, f_ext=fe) for e in eye],
            "qd": [opalg.hybrid(m, q, qd + 1j * H * e, tau, qdd, p, f_ext=fe) for e in eye],
            "tau": [opalg.hybrid(m, q, qd, tau + 1j * H * e, qdd, p, f_ext=fe) for e in eye],
            "qdd": [opalg.hybrid(m, q, qd, tau, qdd + 1j * H * e, p, f_ext=fe) for e in eye]}
    out = {}
    for which, o in (("qdd", 0), ("tau", 1)):
        for wrt, runs in cols.items():
            out[f"d{which}_d{wrt}"] = np.stack([r[o].imag / H for r in runs], -1)
    return out


@pytest.mark.verifies("G6", route="hybrid passes on 3N right-hand sides vs complex step of opalg.hybrid "
                      "(integrate's body twist for free joints)")
@pytest.mark.parametrize("kind,seed,floating,ratio", CASES)
def test_G6_hybrid_derivatives_against_complex_step(kind, seed, floating, ratio):
    m = _model(kind, seed, floating, ratio)
    q, qd, tau, qdd, fe = _state(m, seed)
    p = _mask(m, seed)
    d = opalg.hybrid_derivatives(m, q, qd, tau, qdd, p, f_ext=fe)
    _assert_outputs(d, _complex_step(m, q, qd, tau, qdd, p, fe), m, q, qd, tau, qdd, p, fe, kind)


@pytest.mark.verifies("G6", "G3", route="the blocks of G6 from the dense ℳ (CRBA) and an LU solve with ℳ_pp")
@pytest.mark.parametrize("kind", ["chain", "tree", "relabeled"])
def test_G6_blocks_against_dense_solve(kind):
    m = _model(kind, 5, False, 2.0)
    q, qd, tau, qdd, _ = _state(m, 5)
    p = _mask(m, 5)
    a = ~p
    tol, terms = _tol(m, q, p), _terms(m, q, qd, tau, qdd, p)
    d = opalg.hybrid_derivatives(m, q, qd, tau, qdd, p)
    M = opalg.crba(m, q)
    Mpp, Mpa, Map, Maa = M[np.ix_(p, p)], M[np.ix_(p, a)], M[np.ix_(a, p)], M[np.ix_(a, a)]
    assert_close(d.dqdd_dtau[np.ix_(p, p)], np.linalg.inv(Mpp), tol, "∂θ̈_p/∂T_p = ℳ_pp⁻¹")
    assert_close(d.dtau_dtau[np.ix_(a, p)], Map @ np.linalg.inv(Mpp), tol, "∂T_a/∂T_p = ℳ_apℳ_pp⁻¹",
                 scale=terms["tau"])
    assert_close(d.dqdd_dqdd[np.ix_(p, a)], -np.linalg.solve(Mpp, Mpa), tol, "∂θ̈_p/∂θ̈_a")
    assert_close(d.dtau_dqdd[np.ix_(a, a)], Maa - Map @ np.linalg.solve(Mpp, Mpa), tol, "Schur complement",
                 scale=terms["qdd"])
    # the configuration rows: −ℳ_pp⁻¹ ∂R_p, with ∂R at the hybrid solution's θ̈ (E14) and a dense solve
    qdd_h, _ = opalg.hybrid(m, q, qd, tau, qdd, p)
    dR, dRd = opalg.rnea_derivatives(m, q, qd, qdd_h)
    x_p = -np.linalg.solve(Mpp, np.concatenate([dR[p], dRd[p]], -1))
    assert_close(np.concatenate([d.dqdd_dq[p], d.dqdd_dqd[p]], -1), x_p, tol, "∂θ̈_p/∂x by LU")
    assert_close(np.concatenate([d.dtau_dq[a], d.dtau_dqd[a]], -1),
                 np.concatenate([dR[a], dRd[a]], -1) + Map @ x_p, tol, "∂T_a/∂x by LU",
                 scale=terms["q"] + terms["qd"])
    # the entries hybrid copies or ignores
    assert np.array_equal(d.dqdd_dqdd[np.ix_(a, a)], np.eye(a.sum()))
    assert np.array_equal(d.dtau_dtau[np.ix_(p, p)], np.eye(p.sum()))
    assert not d.dqdd_dtau[:, a].any() and not d.dtau_dqdd[:, p].any()
    assert not d.dqdd_dq[a].any() and not d.dtau_dq[p].any()


@pytest.mark.verifies("G6", "E14", "E15", route="all passive = aba_derivatives, all active = rnea_derivatives and ℳ")
def test_G6_limits():
    m = _model("tree", 3, True, 1.0)
    q, qd, tau, qdd, fe = _state(m, 3)
    N = m.nv
    tol = cond_tol(np.linalg.cond(opalg.crba(m, q)), K_SOLVE)
    d = opalg.hybrid_derivatives(m, q, qd, tau, qdd, np.ones(N, bool), f_ext=fe)
    for got, want, name in zip((d.dqdd_dq, d.dqdd_dqd, d.dqdd_dtau), opalg.aba_derivatives(m, q, qd, tau, f_ext=fe),
                               ("dq", "dqd", "dtau")):
        assert_close(got, want, tol, f"all passive: {name}")
    d = opalg.hybrid_derivatives(m, q, qd, tau, qdd, np.zeros(N, bool), f_ext=fe)
    dq, dqd = opalg.rnea_derivatives(m, q, qd, qdd, f_ext=fe)
    # no solve when every dof is active: the forward evaluation's yardstick of hybrid dynamics
    assert_close(d.dtau_dq, dq, FWD_TOL, "all active: dtau_dq")
    assert_close(d.dtau_dqd, dqd, FWD_TOL, "all active: dtau_dqd")
    assert_close(d.dtau_dqdd, opalg.crba(m, q), FWD_TOL, "all active: ∂T/∂θ̈ = ℳ")


@pytest.mark.verifies("G6", route="batched call vs one call per state")
def test_G6_batched():
    m = opalg.random_model(4, "tree", seed=6, joints="all")
    rng = np.random.default_rng(6)
    q, qd, tau, qdd = rng.normal(size=(4, 3, m.ndof))
    p = _mask(m, 6)
    batch = opalg.hybrid_derivatives(m, q, qd, tau, qdd, p)
    for i in range(3):
        one = opalg.hybrid_derivatives(m, q[i], qd[i], tau[i], qdd[i], p)
        _assert_outputs(type(one)(*(x[i] for x in batch)), one._asdict(), m, q[i], qd[i], tau[i], qdd[i], p,
                        None, "batched")


def test_bad_input_is_named():
    m = opalg.random_model(3, seed=0)
    z = np.zeros(m.ndof)
    with pytest.raises(opalg.StateError, match="passive"):
        opalg.hybrid_derivatives(m, z, z, z, z, [True])
    with pytest.raises(opalg.StateError, match=r"\bqdd\b"):
        opalg.hybrid_derivatives(m, z, z, z, np.full(m.ndof, np.nan), np.ones(m.ndof, bool))
