"""The fast route of ClosedSystem.forward (docs/REFERENCE.md H5), against independent routes.

* the column passes' Λ_c⁻¹ = G_c(ℳ⁻¹G_c*) against the Ω route (:meth:`ClosedSystem.compliance`,
  F3/F5) and the dense G_c ℳ⁻¹ G_cᵀ (crba + LU), on the random trees of tests/test_closed.py;
* :func:`solve_compliance`'s Cholesky fast path against a plain eigen-decomposition least-norm
  solve written here: same rank decision and λ, for well-conditioned, near-cut-off, singular and
  mixed batches;
* forward with Baumgarte terms against the dense KKT solve with U − 2αG_cθ̇ − β²e(q).

Tolerances as in tests/test_closed.py: K_SOLVE·cond·ε = 450·cond·ε of the matrix solved (a few
hundred ε of backward error times cond; cond computed in the test).  Measured over 155 random
closed systems under three BLAS/SIMD kernels: the column passes ≤ 0.27 cond(ℳ) ε, Baumgarte rows
≤ 1.4 cond(KKT) ε; the Cholesky fast path against the eigen route ≤ 1.7 cond ε over 400 random
spectra (relative to ‖A⁺‖‖r‖, see test_solve_compliance_fast_path_matches_eigen_route).
"""

from __future__ import annotations

import numpy as np
import pytest

import opalg
from opalg.closed import random_closed_system, solve_compliance
from opalg.closed.passes import column_compliance

from helpers import assert_close, cond_tol

#: k of k·cond·ε (tests/test_closed.py)
K_SOLVE = 450

CASES = [
    (8, "chain", ("branch",), ("weld",), 0),
    (8, "chain", ("ground",), ("revolute",), 1),
    (10, "tree", ("across",), ("ball",), 3),
    (12, "tree", ("branch", "across", "ground"), ("weld", "ball", "revolute"), 6),
]


def system(case, joints="all"):
    n, topo, where, kinds, seed = case
    n += 6 if joints == "revolute" else 0           # 1-dof joints: more bodies for 6-dof loop paths
    return random_closed_system(n, max(len(where), len(kinds)), seed, kinds=kinds, where=where,
                                topology=topo, joints=joints)


PAIRS = [(c, "all") for c in CASES] + [(c, "revolute") for c in CASES[:3]]


@pytest.mark.verifies("H4", "H5", route="Λ_c⁻¹ by the column passes vs the Ω route and dense G_c ℳ⁻¹ G_cᵀ")
@pytest.mark.parametrize("case, joints", PAIRS, ids=[f"{c[1]}-{'+'.join(c[2])}-{j}" for c, j in PAIRS])
def test_column_compliance_matches_omega_and_dense(case, joints):
    """joints="all" has multi-axis joints (the general pivot steps), "revolute" the inline 1-dof ones."""
    sys, q = system(case, joints)
    qs = np.stack([q, q + 0.2])
    G = sys.jacobian(qs)
    M = opalg.crba(sys.model, qs)
    dense = G @ np.linalg.solve(M, np.swapaxes(G, -1, -2))
    cond = max(np.linalg.cond(M[i]) for i in range(2))
    cols = column_compliance(sys.model, qs, system=sys)
    tol = cond_tol(cond, K_SOLVE, "ℳ")
    assert_close(cols, dense, tol, "Λ_c⁻¹ by the column passes vs G ℳ⁻¹ Gᵀ")
    assert_close(cols, sys.compliance(qs), tol, "Λ_c⁻¹ by the column passes vs the Ω route")


def eigen_least_norm(A, r, rcond):
    """The reference: eigenvalues ≤ rcond·max dropped, per state."""
    out, ranks = [], []
    for Ai, ri in zip(A.reshape((-1,) + A.shape[-2:]), r.reshape((-1, r.shape[-1]))):
        w, V = np.linalg.eigh(0.5 * (Ai + Ai.T))
        keep = w > rcond * w[-1]
        out.append(V[:, keep] @ ((V[:, keep].T @ ri) / w[keep]))
        ranks.append(int(keep.sum()))
    return np.array(out).reshape(r.shape), np.array(ranks).reshape(r.shape[:-1])


def spd(rng, eigs):
    Q, _ = np.linalg.qr(rng.normal(size=(len(eigs), len(eigs))))
    return (Q * np.asarray(eigs)) @ Q.T


@pytest.mark.verifies("H5", route="solve_compliance's Cholesky path vs an eigen-decomposition least-norm solve")
@pytest.mark.parametrize("kind", ["well", "near_cutoff", "singular", "mixed"])
def test_solve_compliance_fast_path_matches_eigen_route(kind):
    """Same rank and λ.  λ to 45 cond ε relative to ‖A⁺‖‖r‖ = ‖r‖/λ_min (the least-norm
    solution's own size scale: a λ nearly orthogonal to the kept eigenvectors has no relative
    yardstick of its own — 90 cond ε relative to ‖λ‖ was seen on a random 2×2 of rank 1); measured
    ≤ 1.7 cond ε over 400 random spectra under three kernels."""
    rng = np.random.default_rng(11)
    rcond = 1e-10
    spectra = {
        "well": [[1.0, 2.0, 3.0, 5.0, 8.0, 13.0]] * 4,
        # within the fast test's margin of the cut-off: certified by the eigen route only
        "near_cutoff": [[3e-10, 1, 1, 1, 1, 1], [5e-11, 1, 1, 1, 1, 1], [2e-9, 1, 2, 3, 4, 5]],
        "singular": [[0.0, 0.0, 1.0, 2.0, 3.0, 4.0]] * 2,
        "mixed": [[1.0, 2.0, 3.0, 4.0, 5.0, 6.0], [0.0, 1.0, 1.0, 2.0, 2.0, 3.0], [1e-3, 1, 1, 1, 1, 1e3]],
    }[kind]
    A = np.stack([spd(rng, s) for s in spectra])
    r = rng.normal(size=(len(spectra), 6))
    lam, rank = solve_compliance(A, r, rcond)
    ref, rank_ref = eigen_least_norm(A, r, rcond)
    assert rank.tolist() == rank_ref.tolist()
    for i, s in enumerate(spectra):
        kept = min(x for x in s if x > rcond * max(s))
        cond = max(s) / kept
        assert_close(lam[i], ref[i], cond_tol(cond, 45, "Λ_c⁻¹ kept"), f"λ of state {i} vs eigen route",
                     scale=np.linalg.norm(r[i]) / kept)


@pytest.mark.verifies("H5", route="complex step of solve_compliance vs the derivative −A⁺ Ȧ A⁺ r of the "
                      "least-norm solve (fixed range), by a dense pseudo-inverse")
@pytest.mark.parametrize("kind", ["well", "singular"])
def test_solve_compliance_carries_a_complex_step(kind):
    """A complex step through the closed-chain solve must be the derivative: A = A₀ + i h Ȧ is
    complex symmetric, and a Hermitian eigen-solve (which conjugates) returned a wrong one.  With
    Ȧ = P Ȧ' P (P the projector on range A₀: the range is fixed, as for dependent closure rows
    whose null space is structural) d(A⁺r) = −A₀⁺ Ȧ A₀⁺ r.  Tolerance 100·cond·ε relative to
    ‖Ȧ‖‖r‖/λ_min² (the derivative's own size scale), cond of the kept part of A₀."""
    rng = np.random.default_rng(12)
    eigs = [1.0, 2.0, 3.0, 5.0, 8.0, 13.0] if kind == "well" else [0.0, 0.0, 1.0, 2.0, 3.0, 4.0]
    A0 = spd(rng, eigs)
    P = A0 @ np.linalg.pinv(A0)
    B = rng.normal(size=(6, 6))
    dA = P @ (B + B.T) @ P
    r = rng.normal(size=6)
    h = 1e-30
    lam, rank = solve_compliance(A0 + 1j * h * dA, r + 0j)
    assert int(rank) == sum(e > 0 for e in eigs)
    Ap = np.linalg.pinv(A0)
    kept = min(e for e in eigs if e > 0)
    tol = cond_tol(max(eigs) / kept, 100, "A₀ kept")
    assert_close(lam.real, Ap @ r, tol, "real part = the real solve", scale=np.linalg.norm(r) / kept)
    assert_close(lam.imag / h, -Ap @ dA @ Ap @ r, tol, "Im λ / h = −A⁺ Ȧ A⁺ r",
                 scale=np.linalg.norm(dA, 2) * np.linalg.norm(r) / kept ** 2)


@pytest.mark.verifies("H5", "H6", route="forward with Baumgarte rows vs the dense KKT LU solve")
def test_forward_with_baumgarte_matches_dense_kkt():
    """Off the manifold (e ≠ 0, G_cθ̇ ≠ 0): the stabilized constraint row, dense KKT built here."""
    sys, q0 = system(CASES[3])
    rng = np.random.default_rng(5)
    q = q0 + 0.05 * rng.normal(size=q0.size)
    qd, tau = rng.normal(size=(2, q.size))
    a, b = 3.0, 4.0
    qdd, lam = sys.forward(q, qd, tau, baumgarte=(a, b))
    M, C = opalg.crba(sys.model, q), opalg.bias(sys.model, q, qd)
    G = sys.jacobian(q)
    U = sys.drift(q, qd) - 2 * a * G @ qd - b ** 2 * sys.constraint_error(q)
    N, m = q.size, sys.m
    K = np.block([[M, G.T], [G, np.zeros((m, m))]])
    x = np.linalg.solve(K, np.concatenate([tau - C, U]))
    assert np.linalg.norm(sys.constraint_error(q)) > 1e-3        # the β² term does enter
    assert_close(qdd, x[:N], cond_tol(np.linalg.cond(K), K_SOLVE, "KKT"), "θ̈ with Baumgarte vs dense KKT")
