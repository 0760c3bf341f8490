"""Checks moved out of the lecture flow of notebooks 05–07, run on more models than the notebooks.

Notebook 05 §9 reads the articulated-body recursion as a Kalman filter and smoother and checks, in
the notebook, only its central row (P(k) is a conditional covariance) and the smoother's θ̈.  The
other rows of its table are checked here, by dense Gaussian conditioning on the stochastic model
x = φw (Cov w = M), y = Hx, whose measurement covariance is the mass matrix:

* R(k) = Cov(x(k)), P(k) = Cov(x(k) | y of the strict descendants), P⁺(k) = Cov(x(k) | y of k and
  its descendants);
* the filter's estimates z(k), z⁺(k) are the conditional means E[x(k) | the same measurements];
* the innovations ε = T − Hz = (I − HψK)T are white: (I − HψK) ℳ (I − HψK)* = D;
* the smoother gives θ̈ = ℳ⁻¹T, and its smoothed estimates E[x | all y] = z⁺ + P⁺α⁺ are the hinge
  forces f = φMφ*H*θ̈ of inverse dynamics.

The filter and smoother checked are opalg's own passes (``innovations_passes`` with a = b = 0),
compared with the dense conditioning, which shares nothing with them but the model's blocks.

Tolerances (relative, Frobenius): ``TOL_PRODUCTS`` (measured) for R(k), which only multiplies
dense matrices; ``K·cond(ℳ)·ε`` with cond(ℳ) of the case's state wherever a solve with ℳ or a
principal block ℳ_YY (cond(ℳ_YY) ≤ cond(ℳ)) or the pivots D⁻¹ enter.  Over SWEEP the largest
err/(cond(ℳ)·ε) was 1.5 (z, z⁺, q̈, the smoothed estimates) and 0.4 (P, P⁺, the whiteness of ε);
the fixed 1e-9 and 1e-12 they replace were exceeded there (4.9e-9 for z, 9.6e-11 for
(I − HψK)ℳ(I − HψK)* = D), although not on the five models below.
"""

from __future__ import annotations

import numpy as np
import pytest

import opalg
from opalg.algorithms.aba import innovations_passes
from tests.helpers import assert_close, cond_tol, dense_soa, is_ancestor, make_model, measured, sblk

SWEEP = ("240 random chains, trees, forests and relabelled trees (n 6-12, mixed joints) under 3 "
         "BLAS/SIMD kernels")
TOL_PRODUCTS = measured(1e-13, 8.3e-16, SWEEP)
K = 100

MODELS = [("chain", 6, 11), ("tree", 9, 7), ("forest", 8, 5), ("relabeled", 9, 3), ("tree", 12, 21)]
IDS = [f"{kind}-{n}-{seed}" for kind, n, seed in MODELS]


def _dofs(model, bodies):
    return [i for j in bodies for i in range(model.dof_slice[j].start, model.dof_slice[j].stop)]


class Gaussian:
    """x = φw with Cov(w) = M, y = Hx: dense conditional covariances and means of x(k)."""

    def __init__(self, model, q):
        self.model, self.d = model, dense_soa(model, q)
        self.Sigma = self.d.phi @ self.d.M @ self.d.phi.T           # Cov(x)
        self.SxY = self.Sigma @ self.d.H.T                          # Cov(x, y)
        self.Myy = opalg.crba(model, q)                             # Cov(y)

    def below(self, k, strict):
        """Bodies j with k ⪰ j (j = k included unless strict)."""
        return [j for j in range(self.model.n) if is_ancestor(self.model.parents, k, j) and not (strict and j == k)]

    def condition(self, k, bodies, y):
        """Cov(x(k) | y_Y) and E[x(k) | y_Y] for the dofs Y of the given bodies."""
        Y, Skk = _dofs(self.model, bodies), self.Sigma[sblk(k), sblk(k)]
        if not Y:
            return Skk, np.zeros(6)
        SkY = self.SxY[sblk(k)][:, Y]
        W = np.linalg.solve(self.Myy[np.ix_(Y, Y)], SkY.T).T        # Σ_kY Σ_YY⁻¹
        return Skk - W @ SkY.T, W @ y[Y]


@pytest.fixture(params=MODELS, ids=IDS)
def case(request):
    kind, n, seed = request.param
    m = make_model(kind, n, seed)
    rng = np.random.default_rng(500 + seed)
    q, T = rng.normal(size=(2, m.ndof))
    ops = opalg.operators(m, q)
    passes = innovations_passes(m, opalg.articulated(m, q), T[:, None], keep=True)
    g = Gaussian(m, q)
    g.tol = cond_tol(np.linalg.cond(g.Myy), K)                    # K·cond(ℳ)·ε of this state
    return m, q, T, ops, g, passes


def test_composite_inertia_is_the_unconditioned_covariance(case):
    m, q, T, ops, g, _ = case
    for k in range(m.n):
        assert_close(g.Sigma[sblk(k), sblk(k)], ops.R.blocks[k], TOL_PRODUCTS, f"R({k}) vs Cov(x({k}))")


def test_articulated_inertias_are_conditional_covariances(case):
    m, q, T, ops, g, _ = case
    for k in range(m.n):
        assert_close(g.condition(k, g.below(k, True), T)[0], ops.P.blocks[k], g.tol,
                     f"P({k}) vs Cov(x({k}) | y of the strict descendants)")
        assert_close(g.condition(k, g.below(k, False), T)[0], ops.P_plus.blocks[k], g.tol,
                     f"P+({k}) vs Cov(x({k}) | y of {k} and its descendants)", scale=np.linalg.norm(ops.P.blocks[k]))


def test_filter_estimates_are_conditional_means(case):
    m, q, T, ops, g, passes = case
    for k in range(m.n):
        assert_close(passes.z[k][:, 0], g.condition(k, g.below(k, True), T)[1], g.tol,
                     f"z({k}) vs E[x({k}) | y of the strict descendants]", scale=1.0)
        assert_close(passes.z_plus[k][:, 0], g.condition(k, g.below(k, False), T)[1], g.tol,
                     f"z+({k}) vs E[x({k}) | y of {k} and its descendants]", scale=1.0)


def test_innovations_are_white_with_covariance_D(case):
    m, q, T, ops, g, passes = case
    d = g.d
    eps = np.concatenate([e[:, 0] for e in passes.eps])
    assert_close(eps, d.Linv @ T, g.tol, "innovations eps vs (I - H psi K) T")
    assert_close(d.Linv @ g.Myy @ d.Linv.T, d.D, g.tol, "(I - H psi K) M (I - H psi K)* vs D")


def test_smoother_solves_and_its_estimates_are_the_hinge_forces(case):
    m, q, T, ops, g, passes = case
    d = g.d
    qdd = passes.qdd[:, 0]
    assert_close(qdd, np.linalg.solve(g.Myy, T), g.tol, "smoother qdd vs solve(M, T)")
    assert_close(qdd, opalg.aba(m, q, np.zeros(m.ndof), T, gravity=False), g.tol, "smoother qdd vs opalg.aba")
    x_smooth = g.SxY @ np.linalg.solve(g.Myy, T)                   # E[x | all y]
    f = np.concatenate([passes.z_plus[k][:, 0] + ops.P_plus.blocks[k] @ passes.alpha_plus[k][:, 0]
                        for k in range(m.n)])
    assert_close(f, x_smooth, g.tol, "z+ + P+ alpha+ vs E[x | all y]")
    assert_close(d.phi @ d.M @ d.phi.T @ d.H.T @ qdd, x_smooth, g.tol, "hinge forces phi M phi* H* qdd vs E[x | all y]")
