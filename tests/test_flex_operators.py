"""opalg.flex.operators: E6, E8, G1 and the Newton–Euler form on enlarged nodes (docs/REFERENCE.md K7).

Every operator identity is evaluated densely (``.dense()`` of the operator products) and
compared with routes that share no operator code: ℳ from the element assembly Σ J_eᵀ M_e J_e
of tests/flex_oracle.py (complex-step Jacobians of 4x4 poses), its dense inverse
(np.linalg.inv), and Φ from a dense inverse of I − ℰΦ.  Random flexible chains and trees of
1–5 bodies, every joint kind, 0–3 modes per body (so Φ(℘k, k) is rectangular whenever parent
and child have different mode counts).

Tolerances: ``PRODUCTS`` measured over SWEEP where no solve enters; k·cond·ε with the condition
number (of ℳ, ℳ_pp or I − ℰΦ) computed in the test where one side inverts or goes through D⁻¹
(SWEEP: err ≤ 2.2 cond(ℳ)·ε for E6/E8, ≤ 6.5 cond(ℳ_pp)·ε for G1, 0.05 for E7, 0.04
cond(I − ℰΦ)·ε for Φ).  They were 1e-12 and max(1e-12, cond·1e-15).
"""

from __future__ import annotations

import numpy as np
import pytest

from opalg import flex
from opalg.errors import StateError

from flex_oracle import mass_matrix, random_flex_model
from helpers import assert_close, cond_tol, measured

SWEEP = ("300 random flexible models (chains and trees of 1-5 bodies, every joint kind, 0-3 modes, "
         "random and modal passive masks) under 3 BLAS/SIMD kernels")
#: Products and sums of operator blocks vs the element assembly or each other, no solve.
PRODUCTS = measured(1e-13, 1.8e-15, SWEEP)
#: k of k·cond·ε (module docstring).
K_SOLVE = 100

CASES = [(n, topo, seed) for seed in range(3) for n, topo in ((1, "chain"), (3, "chain"), (5, "tree"))]


def _state(fm, seed, scale=0.3):
    return np.random.default_rng(200 + seed).normal(size=(3, fm.ndof)) * scale


def _inv_tol(M):
    """K_SOLVE·cond(ℳ)·ε: a dense inversion of ℳ, or the pivots D⁻¹ (cond(D(k)) ≤ cond(ℳ))."""
    return cond_tol(np.linalg.cond(M), K_SOLVE)


def test_cases_have_rectangular_edges():
    """The random cases do exercise rectangular Φ blocks (m_℘ ≠ m_k on some edge)."""
    rect = 0
    for n, topo, seed in CASES:
        fm = random_flex_model(n, topo, seed)
        rect += sum(fm.modes[k] != fm.modes[p] for k, p in enumerate(fm.parents) if p >= 0)
    assert rect > 0


@pytest.mark.verifies("K7", route="Φ vs dense inv(I − ℰΦ); ℋΦ𝓜Φ*ℋ* vs Σ J_eᵀM_eJ_e; R vs diag blocks of Φ𝓜Φ*")
@pytest.mark.parametrize("n,topo,seed", CASES)
def test_phi_and_mass_matrix_product(n, topo, seed):
    """[K7] Φ = (I − ℰΦ)⁻¹ (recursion vs dense inverse) and ℋΦ𝓜Φ*ℋ* = element assembly."""
    fm = random_flex_model(n, topo, seed)
    x = _state(fm, seed)[0]
    ops = flex.operators(fm, x)
    IE = np.eye(ops.E_phi.shape[0]) - ops.E_phi.dense()
    assert_close(ops.phi.dense(), np.linalg.inv(IE), cond_tol(np.linalg.cond(IE), K_SOLVE, "I − ℰΦ"),
                 "Φ vs (I − ℰΦ)⁻¹")
    assert_close(ops.mass_matrix.dense(), mass_matrix(fm, x), PRODUCTS, "ℋΦ𝓜Φ*ℋ* vs Σ JᵀMJ")
    # R = 𝓜 + ℰΦRℰΦ* (composite inertias), diag blocks of Φ𝓜Φ*
    PMP = (ops.phi @ ops.M @ ops.phi.T).dense()
    offs = np.concatenate([[0], np.cumsum(fm.sizes)])
    for k in range(fm.n):
        s = slice(offs[k], offs[k + 1])
        assert_close(ops.R.blocks[k], PMP[s, s], PRODUCTS, f"R({k}) vs (Φ𝓜Φ*)(k,k)")


@pytest.mark.verifies("K7", route="E6 (I + ℋΦK)D(I + ℋΦK)* vs element assembly, E8 vs its dense inverse, E7")
@pytest.mark.parametrize("n,topo,seed", CASES)
def test_E6_E8_on_enlarged_nodes(n, topo, seed):
    """[K7, E6, E8] ℳ = (I + ℋΦK)D(I + ℋΦK)* against the element assembly and
    ℳ⁻¹ = (I − ℋψK)*D⁻¹(I − ℋψK) against np.linalg.inv of it; all through D⁻¹: _inv_tol."""
    fm = random_flex_model(n, topo, seed)
    x = _state(fm, seed)[0]
    ops = flex.operators(fm, x)
    M = mass_matrix(fm, x)
    assert_close((ops.L @ ops.D @ ops.L.T).dense(), M, _inv_tol(M), "E6 (I + ℋΦK)D(I + ℋΦK)*")
    assert_close(ops.mass_matrix_inv.dense(), np.linalg.inv(M), _inv_tol(M), "E8 ℳ⁻¹")
    assert_close((ops.L @ ops.L_inv).dense(), np.eye(fm.ndof), _inv_tol(M), "E7 (I + ℋΦK)⁻¹ = I − ℋψK")


def _masks(fm, seed):
    """A random per-row mask (some bodies fully active: pitfall 10) and hybrid()'s mask
    (modal rows passive, joint rows active)."""
    rng = np.random.default_rng(seed)
    rand = rng.random(fm.ndof) < 0.6
    rand[rng.integers(fm.ndof)] = True
    modal = np.zeros(fm.ndof, bool)
    for s in fm.eta_slice:
        modal[s] = True
    return [rand] + ([modal] if modal.any() else [])


@pytest.mark.verifies("K7", route="G1 factors of ℳ_pp and ℳ_pp⁻¹ vs the passive block of the element assembly and its inverse")
@pytest.mark.parametrize("n,topo,seed", CASES)
def test_G1_hybrid_factorization_on_enlarged_nodes(n, topo, seed):
    """[K7, G1] ℳ_pp = (I + ℋ_pΦK_h)D_h(I + ℋ_pΦK_h)* and ℳ_pp⁻¹ = (I − ℋ_pψ_hK_h)*D_h⁻¹(…)
    against the passive block of the element-assembled ℳ and its dense inverse."""
    fm = random_flex_model(n, topo, seed)
    x = _state(fm, seed)[0]
    M = mass_matrix(fm, x)
    for p in _masks(fm, seed):
        ops = flex.operators(fm, x, passive=p)
        Mpp = M[np.ix_(p, p)]
        assert_close((ops.L @ ops.D @ ops.L.T).dense(), Mpp, _inv_tol(Mpp), "G1 ℳ_pp")
        assert_close(ops.mass_matrix_pp.dense(), Mpp, PRODUCTS, "ℋ_pΦ𝓜Φ*ℋ_p*")
        assert_close(ops.mass_matrix_pp_inv.dense(), np.linalg.inv(Mpp), _inv_tol(Mpp), "G1 ℳ_pp⁻¹")
        with pytest.raises(AttributeError, match="mass_matrix_pp_inv"):
            ops.mass_matrix_inv


@pytest.mark.verifies("K7", route="ℋΦ(𝓜Φ*(ℋ*ẍ + a) + b) + 𝒦x + 𝒟ẋ from the operator objects vs flex.rnea; 𝒱 = Φ*ℋ*ẋ")
@pytest.mark.parametrize("n,topo,seed", CASES)
def test_newton_euler_operator_form(n, topo, seed):
    """[K7, K4] T = ℋΦ(𝓜Φ*(ℋ*ẍ + a) + b) + 𝒦x + 𝒟ẋ from the operator objects and ops.a, ops.b,
    against flex.rnea (itself checked against the Lagrangian in test_flex.py), and
    𝒱 = Φ*ℋ*ẋ (node velocities).  Rounding: PRODUCTS."""
    fm = random_flex_model(n, topo, seed)
    x, v, xdd = _state(fm, seed)
    ops = flex.operators(fm, x, v)
    Phi, H = ops.phi, ops.H
    stiff = np.zeros(fm.ndof)
    for k, b in enumerate(fm.bodies):
        s = fm.eta_slice[k]
        stiff[s] = b.K @ x[s] + b.D @ v[s]
    T = H @ (Phi @ (ops.M @ (Phi.T @ (H.T @ xdd + ops.a)) + ops.b)) + stiff
    assert_close(T, flex.rnea(fm, x, v, xdd), PRODUCTS, "ℋΦ(𝓜Φ*(ℋ*ẍ + a) + b) + 𝒦x + 𝒟ẋ")
    assert_close(ops.V, Phi.T @ (H.T @ v), PRODUCTS, "𝒱 = Φ*ℋ*ẋ")


def test_operator_errors():
    """Bad input: StateError for the state and the mask; velocity terms need v."""
    fm = flex.examples.two_link_arm(modes=1)
    with pytest.raises(StateError, match="shape"):
        flex.operators(fm, np.zeros(3))
    with pytest.raises(StateError, match="passive"):
        flex.operators(fm, np.zeros(fm.ndof), passive=[True])
    with pytest.raises(AttributeError, match="need v"):
        flex.operators(fm, np.zeros(fm.ndof)).a
