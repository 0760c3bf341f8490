"""The sensitivities as operators (docs/REFERENCE.md E13, E16–E19): dense forms, recursions, complex step.

Three routes meet here: the operator objects of `opalg.algebra.sensitivity` (products of dense
`.dense()` blocks), the O(n·N) recursions of `opalg.algorithms.derivatives_inertia` and
`derivatives_riccati`, and complex step of `opalg.crba` / `opalg.articulated` /
`opalg.operators` (h = 1e-30; configuration directions through `opalg.integrate`, the tangent
space of a free joint).

Tolerances: every route is a product of at most depth transforms with inertias, rounded at the
size of its terms, so the agreement is a few ε of those sizes (measured: MEASURED).  The Riccati
factors carry D⁻¹, whose rounding is amplified by cond(D(k)) ≤ cond(ℳ) (E8): those comparisons
use k·cond(ℳ)·ε.
"""

from __future__ import annotations

import numpy as np
import pytest

import opalg
from opalg.algebra.sensitivity import Sensitivities
from opalg.algorithms.derivatives_inertia import christoffel, coriolis_matrix, mass_matrix_derivatives
from opalg.algorithms.derivatives_riccati import articulated_derivatives

from helpers import assert_close, cond_tol, make_model, measured
from hybrid_cases import scaled

H = 1e-30
SWEEP = "16 random chains, trees, relabelled and floating models, masses over 10^±2"
RTOL = measured(1e-12, 2.6e-15, SWEEP)
K_SOLVE = 100

MODELS = [("chain", 0, False), ("tree", 1, False), ("relabeled", 2, False), ("jain-tree", 3, False),
          ("chain", 4, True), ("tree", 5, True)]


def _model(kind, seed, floating):
    if floating:
        m = opalg.random_model(5, kind, seed=seed, joints="all", floating=True)
    else:
        m = make_model(kind, 5, seed, joints="all")
    return scaled(m, 10.0 ** np.random.default_rng(800 + seed).uniform(-2, 2, m.n))


def _q(m, seed):
    return opalg.integrate(m, opalg.neutral(m), np.random.default_rng(seed).uniform(-np.pi, np.pi, m.nv))


def _step(m, q, j):
    return opalg.integrate(m, q, 1j * H * np.eye(m.nv)[j])


@pytest.mark.verifies("E13", route="∂ℰφ, ∂H, ∂φ operator objects vs complex step of the operators")
@pytest.mark.parametrize("kind,seed,floating", MODELS)
def test_E13_dphi_and_dH_against_complex_step(kind, seed, floating):
    m = _model(kind, seed, floating)
    q = _q(m, seed)
    for j in range(m.nv):
        d = Sensitivities(m, q, j)
        ops_c = opalg.operators(m, _step(m, q, j))
        assert_close(d.E_phi.dense(), ops_c.E_phi.dense().imag / H, RTOL, "∂ℰφ (E13)")
        assert_close(d.H.dense(), ops_c.H.dense().imag / H, RTOL, "∂H (E13)", scale=1.0)
        phi = np.linalg.inv(np.eye(6 * m.n) - ops_c.E_phi.dense())       # dense inverse, not the SPO
        assert_close(d.phi.dense(), phi.imag / H, RTOL, "∂φ = φ ∂ℰφ φ (E13)")


@pytest.mark.verifies("E16", "E19", route="∂ℳ: operator form, factor form, column recursion and complex step of crba")
@pytest.mark.parametrize("kind,seed,floating", MODELS)
def test_E16_E19_dM_operator_forms_and_recursion(kind, seed, floating):
    m = _model(kind, seed, floating)
    q = _q(m, seed)
    dM = mass_matrix_derivatives(m, q)
    M = opalg.crba(m, q)
    tol, size = cond_tol(np.linalg.cond(M), K_SOLVE), np.linalg.norm(M)   # ∂ℳ/∂θ_j rounds at ‖ℳ‖
    for j in range(m.nv):   # (∂ℳ/∂θ_j = 0 exactly for the first joint of a chain: hence the scale)
        ref = opalg.crba(m, _step(m, q, j)).imag / H
        assert_close(dM[..., j], ref, RTOL, "∂ℳ recursion (E16)", scale=size)
        d = Sensitivities(m, q, j)
        assert_close(d.mass_matrix.dense(), ref, RTOL, "∂ℳ operator form (E16)", scale=size)
        assert_close(d.mass_matrix_from_factors.dense(), ref, tol, "∂ℳ from ∂L, ∂D (E19)", scale=size)


@pytest.mark.verifies("E18", "E19", route="∂P, ∂P⁺, ∂D, ∂G, ∂K recursion vs complex step of articulated")
@pytest.mark.parametrize("kind,seed,floating", MODELS)
def test_E18_E19_riccati_sensitivity_against_complex_step(kind, seed, floating):
    m = _model(kind, seed, floating)
    q = _q(m, seed)
    dA = articulated_derivatives(m, q)
    tol = cond_tol(np.linalg.cond(opalg.crba(m, q)), K_SOLVE)
    for j in range(m.nv):
        art = opalg.articulated(m, _step(m, q, j))
        for k in range(m.n):
            # ∂P(k) gathers the children's ∂P⁺, which carry D⁻¹: the cond(ℳ) bound
            assert_close(dA.dP[k][j], art.P[k].imag / H, tol, "∂P (E18)", scale=np.linalg.norm(art.P[k].real))
            assert_close(dA.dP_plus[k][j], art.P_plus[k].imag / H, tol, "∂P⁺ (E18)",
                         scale=np.linalg.norm(art.P[k].real))     # P⁺ = 0 behind a free joint: P's size
            assert_close(dA.dD[k][j], art.D[k].imag / H, tol, "∂D (E19)", scale=np.linalg.norm(art.D[k].real))
            assert_close(dA.dG[k][j], art.G[k].imag / H, tol, "∂G (E19)", scale=np.linalg.norm(art.G[k].real))
        ops_c = opalg.operators(m, _step(m, q, j))
        assert_close(Sensitivities(m, q, j).K.dense(), ops_c.K.dense().imag / H, tol, "∂K (E19)",
                     scale=np.linalg.norm(ops_c.K.dense().real))


@pytest.mark.verifies("E17", route="Christoffel symbols: C θ̇ = bias at g = 0, ℳ̇ − 2C skew (ℳ̇ by complex step)")
@pytest.mark.parametrize("kind,seed", [("chain", 0), ("tree", 1), ("relabeled", 2)])
def test_E17_christoffel_and_coriolis_matrix(kind, seed):
    m = _model(kind, seed, False)
    rng = np.random.default_rng(seed)
    q, qd = rng.uniform(-np.pi, np.pi, m.nv), rng.normal(size=m.nv)
    C = coriolis_matrix(m, q, qd)
    bias = opalg.bias(m, q, qd, gravity=False)
    assert_close(C @ qd, bias, RTOL, "C(θ, θ̇) θ̇ = bias|g=0 (E17)",
                 scale=np.linalg.norm(opalg.crba(m, q)) * np.linalg.norm(qd) ** 2)
    Mdot = opalg.crba(m, q + 1j * H * qd).imag / H
    N = Mdot - 2 * C
    assert_close(N, -N.T, RTOL, "ℳ̇ − 2C skew (E17)", scale=np.linalg.norm(Mdot))
    G = christoffel(m, q)
    assert_close(G, np.swapaxes(G, -1, -2), RTOL, "Γ_ijk = Γ_ikj (E17)")


def test_christoffel_refuses_free_joints_and_bad_dof():
    m = opalg.random_model(3, seed=0, floating=True)
    with pytest.raises(opalg.ModelError, match="christoffel"):
        christoffel(m, opalg.neutral(m))
    with pytest.raises(opalg.StateError, match="dof index"):
        Sensitivities(m, opalg.neutral(m), m.nv)
