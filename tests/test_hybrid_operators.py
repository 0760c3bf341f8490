r"""The hybrid operators of ``opalg.operators(..., passive=)`` (docs/REFERENCE.md G1, pitfall 10) and
``opalg.reduced_inertia`` (G3), against dense matrices: ``.dense()`` of the operators, φ and ψ by a
dense inverse of I − ℰφ and I − ℰψ, the blocks of ``opalg.crba`` and their LAPACK inverses.
Cases and tolerances: tests/hybrid_cases.py, and PRODUCTS / INV_K below.
"""

from __future__ import annotations

import numpy as np
import pytest

import opalg

from helpers import no_string_evaluated  # noqa: F401  (autouse fixture: no string is ever evaluated)
from helpers import Tol, assert_close, cond_tol, make_model, measured, sblk
from hybrid_cases import FWD_TOL, build, masks, Dense, batch_tol, kappa_tol

#: The G1 identities that are products of the factors (no inverse of an ill-conditioned matrix):
#: measured worst 1.1e-14 relative (G_h = P_h H_p* D_h⁻¹, whose D_h⁻¹ carries cond(D_h)) over 220
#: random models (chains, trees, relabeled, tip-to-base, forests of 3-12 bodies, every joint
#: option, mass ratios to 1e6, the _ops_case masks), under the default kernels and under
#: OPENBLAS_CORETYPE=Sandybridge / Prescott with NPY_DISABLE_CPU_FEATURES=X86_V3.
PRODUCTS = measured(1e-12, 1.1e-14, "220 random models (3-12 bodies, every joint option, mass ratios "
                    "to 1e6) under 3 kernels")
#: Inverses against a LAPACK inverse of the crba block (and Ω_h, which holds one): INV_K·cond·ε,
#: cond-based.  The earlier 20 was exceeded by the same sweep (22.8 cond(ℳ_pp) ε, a 5-body
#: tip-to-base chain with mass ratios 1e4); 100 = 4x that, and a dense inverse of order N is
#: itself off by up to ~N·cond·ε.
INV_K = 100.0


# ---------------------------------------------------------------------------
# 4. G1 operator identities (dense)
# ---------------------------------------------------------------------------
IDENTITY_CASES = [("chain", 5, 30), ("relabeled", 7, 31), ("jain-tree", 6, 32), ("forest", 7, 33),
                  ("tree", 9, 34), ("chain", 8, 35), ("relabeled", 10, 36), ("jain-chain", 6, 37)]


def _subtrees(m):
    """{k: the set of bodies in the subtree of k} from the parent array."""
    sub = {k: {k} for k in range(m.n)}
    for k in reversed(m.order):
        if m.parents[k] != -1:
            sub[m.parents[k]] |= sub[k]
    return sub


def _ops_case(kind, n, seed):
    """A model, a state and a mask with (pitfall 10) a subtree of >= 2 bodies that is all
    active, and passive dofs elsewhere, one multi-axis joint split where there is one."""
    m = make_model(kind, n, seed, "all")
    rng = np.random.default_rng(seed)
    q, qd = rng.normal(size=(2, m.ndof))
    p = masks(m, rng, 1)[0]
    sub = _subtrees(m)
    k = next(k for k in rng.permutation(m.n) if 2 <= len(sub[k]) < m.n)
    for j in sub[k]:
        p[m.dof_slice[j]] = False
    if not p.any():   # make the first dof outside that subtree passive
        p[next(m.dof_slice[j].start for j in range(m.n) if j not in sub[k])] = True
    return m, q, qd, p


@pytest.mark.verifies("G1", route="hybrid operators (.dense()) vs crba blocks, LAPACK inverses and dense φ, ψ")
@pytest.mark.parametrize("kind, n, seed", IDENTITY_CASES)
def test_G1_operator_identities(kind, n, seed):
    """G1 with dense matrices: ℳ_pp (crba block) = L D_h L* = mass_matrix_pp; ℳ_pp⁻¹ (LAPACK
    inverse of the crba block) = L⁻¹* D_h⁻¹ L⁻¹ = mass_matrix_pp_inv; L_inv = L⁻¹; ψ_h (the SPO)
    = (I − ℰφ τ̄_h)⁻¹ (dense inverse) with ℰψ_h = ℰφ τ̄_h; P_h = M + ℰφ τ̄_h P_h ℰφ*; D_h = H_p P_h H_p*;
    D_h⁻¹ and G_h (from the one-axis-at-a-time pivots) = inv(D_h) and P_h H_p* D_h⁻¹; τ̄_h a
    projector with H_p τ̄_h = 0; P_h⁺ = τ̄_h P_h; K_h = ℰφ G_h.

    Tolerance PRODUCTS (1e-12 relative) for the products (O(n) 6x6 products of O(1) entries;
    measured ≤ 1.1e-14 over 220 random models under three kernels), INV_K cond(ℳ_pp) ε for the
    inverses (a dense inverse is itself off by ≈ cond·ε; measured ≤ 23 cond ε) and 20 cond(D_h) ε
    for D_h⁻¹ against inv(D_h) (measured ≤ 2.1 cond ε)."""
    m, q, qd, p = _ops_case(kind, n, seed)
    ops = opalg.operators(m, q, qd, passive=p)
    I6, Np = np.eye(6 * m.n), int(p.sum())
    E_phi, M, Hp, Ha = (getattr(ops, nm).dense() for nm in ("E_phi", "M", "H_p", "H_a"))
    P, Pp, D, Dinv, G, tb, K, E_psi, psi, L, Linv = (getattr(ops, nm).dense() for nm in (
        "P", "P_plus", "D", "Dinv", "G", "tau_bar", "K", "E_psi", "psi", "L", "L_inv"))
    H = opalg.operators(m, q).H.dense()
    assert np.array_equal(Hp, H[p]) and np.array_equal(Ha, H[~p])    # exact: row selections
    Mq = opalg.crba(m, q)
    Mpp = Mq[np.ix_(p, p)]
    cond = np.linalg.cond(Mpp)
    tol_inv = cond_tol(cond, INV_K, "ℳ_pp")
    assert_close(L @ D @ L.T, Mpp, PRODUCTS, "ℳ_pp = L D_h L*")
    assert_close(ops.mass_matrix_pp.dense(), Mpp, PRODUCTS, "mass_matrix_pp = crba_pp")
    Mpp_inv = np.linalg.inv(Mpp)
    assert_close(Linv.T @ Dinv @ Linv, Mpp_inv, tol_inv, "ℳ_pp⁻¹ = L⁻¹* D_h⁻¹ L⁻¹")
    assert_close(ops.mass_matrix_pp_inv.dense(), Mpp_inv, tol_inv, "mass_matrix_pp_inv")
    assert_close(Linv @ L, np.eye(Np), PRODUCTS, "L_inv L = I", scale=1.0)
    assert_close(psi, np.linalg.inv(I6 - E_phi @ tb), PRODUCTS, "ψ_h = (I − ℰφ τ̄_h)⁻¹")
    assert_close(E_psi, E_phi @ tb, PRODUCTS, "ℰψ_h = ℰφ τ̄_h")
    assert_close(P, M + E_phi @ tb @ P @ E_phi.T, PRODUCTS, "P_h = M + ℰφ τ̄_h P_h ℰφ*")
    assert_close(D, Hp @ P @ Hp.T, PRODUCTS, "D_h = H_p P_h H_p*")
    assert_close(Dinv, np.linalg.inv(D), cond_tol(np.linalg.cond(D), 20, "D_h"), "D_h⁻¹")
    assert_close(G, P @ Hp.T @ np.linalg.inv(D), PRODUCTS, "G_h = P_h H_p* D_h⁻¹")
    assert_close(tb @ tb, tb, PRODUCTS, "τ̄_h² = τ̄_h")
    assert_close(Hp @ tb, 0 * Hp, PRODUCTS, "H_p τ̄_h = 0", scale=np.linalg.norm(Hp) * np.linalg.norm(tb))
    assert_close(Pp, tb @ P, PRODUCTS, "P_h⁺ = τ̄_h P_h")
    assert_close(K, E_phi @ G, PRODUCTS, "K_h = ℰφ G_h")
    with pytest.raises(AttributeError, match="mass_matrix_pp_inv"):
        ops.mass_matrix_inv


@pytest.mark.verifies("G1", route="hybrid P_h of all-active subtrees vs the composite inertia R (D1)")
@pytest.mark.parametrize("kind, n, seed", IDENTITY_CASES)
def test_pitfall_10_bodies_without_passive_dofs(kind, n, seed):
    """A body with no passive dof: τ̄_h(k) = I, G_h(k) empty, P_h⁺(k) = P_h(k) — its articulated
    inertia passes inward unprojected; if its whole subtree is active, P_h(k) is the composite
    inertia R(k) (D1: R = M + ℰφ R ℰφ*, from the CRBA's operators), the body moves rigidly with
    its prescribed joints.  Bodies with a passive dof have τ̄_h(k) ≠ I."""
    m, q, qd, p = _ops_case(kind, n, seed)
    ops = opalg.operators(m, q, passive=p)
    art = opalg.articulated(m, q, passive=p)
    R = opalg.operators(m, q).R
    sub = _subtrees(m)
    seen_none = seen_rigid = False
    for k, sl in enumerate(m.dof_slice):
        assert art.axes[k] == tuple(i for i in range(sl.stop - sl.start) if p[sl.start + i])
        tb, P, Pp = ops.tau_bar.block(k, k), ops.P.block(k, k), ops.P_plus.block(k, k)
        if p[sl].any():
            assert not np.allclose(tb, np.eye(6))
            continue
        seen_none = True
        # exact: no passive axis, so no projection is computed
        assert np.array_equal(tb, np.eye(6)), k
        assert np.array_equal(Pp, P), k
        assert art.G[k].shape[-1] == 0 and art.D[k].shape[-1] == 0
        if not any(p[m.dof_slice[j]].any() for j in sub[k]):
            seen_rigid = True
            assert_close(P, R.block(k, k), PRODUCTS, f"P_h({k}) = R({k}) for an all-active subtree")
    assert seen_none and seen_rigid


@pytest.mark.verifies("G1", route="hybrid Ω_h and Υ_h vs φ*H_p*ℳ_pp⁻¹H_pφ (dense φ, LAPACK inverse)")
@pytest.mark.parametrize("kind, n, seed", IDENTITY_CASES)
def test_hybrid_Omega_and_Upsilon(kind, n, seed):
    """Ω_h = ψ_h* H_p* D_h⁻¹ H_p ψ_h (dense ψ_h) = φ* H_p* ℳ_pp⁻¹ H_p φ (the F1 analogue, with φ a
    dense inverse of I − ℰφ and ℳ_pp⁻¹ a LAPACK inverse of the crba block); Υ_h(k) = Ω_h(k, k)
    (the F2 recursion with H_p).  Tolerance INV_K cond(ℳ_pp) ε relative to ‖Ω_h‖ (ℳ_pp⁻¹ inside;
    measured ≤ 23 cond ε over 220 random models under three kernels)."""
    m, q, qd, p = _ops_case(kind, n, seed)
    ops = opalg.operators(m, q, passive=p)
    I6 = np.eye(6 * m.n)
    phi = np.linalg.inv(I6 - ops.E_phi.dense())
    psi = np.linalg.inv(I6 - ops.E_psi.dense())
    Hp, Dinv = ops.H_p.dense(), ops.Dinv.dense()
    Mpp = opalg.crba(m, q)[np.ix_(p, p)]
    tol = cond_tol(np.linalg.cond(Mpp), INV_K, "ℳ_pp")
    Om_f1 = phi.T @ Hp.T @ np.linalg.inv(Mpp) @ Hp @ phi
    Om = psi.T @ Hp.T @ Dinv @ Hp @ psi
    assert_close(Om, Om_f1, tol, "ψ_h*H_p*D_h⁻¹H_pψ_h = φ*H_p*ℳ_pp⁻¹H_pφ")
    assert_close(ops.Omega.dense(), Om_f1, tol, "ops.Omega (hybrid)")
    Y = ops.Upsilon.dense()
    for k in range(m.n):
        s = slice(6 * k, 6 * k + 6)
        assert_close(Y[s, s], Om_f1[s, s], tol, f"Υ_h({k}) = Ω_h({k},{k})", scale=np.linalg.norm(Om_f1))


@pytest.mark.verifies("G1", "G2", route="hybrid vs the G1/G2 operator expression with dense φ, M, H_p, H_a")
@pytest.mark.parametrize("kind, n, seed", IDENTITY_CASES)
@pytest.mark.parametrize("forces", [False, True])
def test_hybrid_output_equals_the_operator_expression(kind, n, seed, forces):
    """θ̈_p = ℳ_pp⁻¹[T_p − H_pφ(Mφ*a′ + b)], a′ = a + H_a*θ̈_a and T_a = H_aφ(Mα + b),
    α = φ*(H_p*θ̈_p + a′) (G1/G2 in operator form; b − f_ext with external forces), with dense φ,
    M, H_p, H_a, the a and b of ops (with qd) and a LAPACK solve with the crba block.
    Tolerances: θ̈_p C_COND κ_p ε; T_a FWD_TOL × (‖H_aφ‖(‖M‖‖α‖ + ‖b‖)) + ‖ℳ_ap‖ × the θ̈_p
    allowance."""
    m, q, qd, p = _ops_case(kind, n, seed)
    rng = np.random.default_rng(seed + 1)
    qdd, tau = rng.normal(size=(2, m.ndof))
    f = rng.normal(size=(m.n, 6)) if forces else None
    ops = opalg.operators(m, q, qd, passive=p)
    I6 = np.eye(6 * m.n)
    phi = np.linalg.inv(I6 - ops.E_phi.dense())
    M, Hp, Ha = ops.M.dense(), ops.H_p.dense(), ops.H_a.dense()
    b = ops.b - (0 if f is None else f.ravel())
    a_prime = ops.a + Ha.T @ qdd[~p]
    Mpp = opalg.crba(m, q)[np.ix_(p, p)]
    x = np.linalg.solve(Mpp, tau[p] - Hp @ phi @ (M @ phi.T @ a_prime + b))
    alpha = phi.T @ (Hp.T @ x + a_prime)
    Ta = Ha @ phi @ (M @ alpha + b)
    qh, th = opalg.hybrid(m, q, qd, tau, qdd, p, f_ext=f)
    dn = Dense(m, q, qd, f)
    kappa = dn.kappa_p(p, tau, qdd)
    assert_close(qh[p], x, kappa_tol(kappa), "θ̈_p vs the operator expression")
    scale = np.linalg.norm(Ha @ phi, 2) * (np.linalg.norm(M, 2) * np.linalg.norm(alpha) + np.linalg.norm(b))
    # T_a also inherits the difference of the two θ̈_p through ℳ_ap = H_aφMφ*H_p*
    Map = Ha @ phi @ M @ phi.T @ Hp.T
    allow = FWD_TOL * scale + np.linalg.norm(Map, 2) * kappa_tol(kappa) * np.linalg.norm(x)
    # scale (the sum of the norms of T_a's terms) >= ‖T_a‖: assert_close measures against it
    assert_close(th[~p], Ta, Tol(allow / scale, f"FWD_TOL + ‖ℳ_ap‖ × the θ̈_p allowance ({FWD_TOL.why})"),
                 "T_a vs the operator expression", scale=scale)


@pytest.mark.verifies("G2", route="innovations_passes hybrid mode (3 columns) vs dense crba blocks")
@pytest.mark.parametrize("kind, n, seed", IDENTITY_CASES[:4])
def test_innovations_passes_hybrid_mode_columns(kind, n, seed):
    """innovations_passes in hybrid mode with r = 3 right-hand sides at once and a = b = 0:
    θ̈_p = ℳ_pp⁻¹(T_p − ℳ_pa θ̈_a), T_a = ℳ_ap θ̈_p + ℳ_aa θ̈_a (dense crba blocks) per column;
    keep=True returns the same bits as keep=False, and its hinge forces f(k) (E9d) give the
    active forces in their active rows, H_a(k) f(k) = T_a(k), and the given forces in their
    passive rows, H_p(k) f(k) = T_p(k).  Tolerances: θ̈_p C_COND ε κ_p (the κ_p of Dense without
    Coriolis terms), T_a FWD_TOL × the norms of its terms, the hinge-force rows FWD_TOL ‖f‖
    (measured ≤ 2.3e-16 ‖f‖)."""
    m, q, qd, p = _ops_case(kind, n, seed)
    rng = np.random.default_rng(seed + 2)
    a = ~p
    Tp = rng.normal(size=(int(p.sum()), 3))
    qa = rng.normal(size=(int(a.sum()), 3))
    art = opalg.articulated(m, q, passive=p)
    res = opalg.innovations_passes(m, art, Tp, qdd_a=qa)
    kept = opalg.innovations_passes(m, art, Tp, keep=True, qdd_a=qa)
    # exact: keep=True stores intermediates, the arithmetic is the same
    assert np.array_equal(res.qdd, kept.qdd) and np.array_equal(res.tau, kept.tau)
    assert res.qdd.shape == (p.sum(), 3) and res.tau.shape == (a.sum(), 3)
    Mq = opalg.crba(m, q)
    Mpp, Mpa, Maa = Mq[np.ix_(p, p)], Mq[np.ix_(p, a)], Mq[np.ix_(a, a)]
    x = np.linalg.solve(Mpp, Tp - Mpa @ qa)
    terms = (np.linalg.norm(Tp) + np.linalg.norm(Mpa, 2) * np.linalg.norm(qa)
             + np.linalg.norm(Mpp, 2) * np.linalg.norm(x))
    kappa = np.linalg.norm(np.linalg.inv(Mpp), 2) * terms / np.linalg.norm(x)   # κ_p, all columns at once
    assert_close(res.qdd, x, kappa_tol(kappa), "θ̈_p columns vs dense solve")
    Ta = Mpa.T @ res.qdd + Maa @ qa
    scale = np.linalg.norm(Mpa, 2) * np.linalg.norm(res.qdd) + np.linalg.norm(Maa, 2) * np.linalg.norm(qa)
    assert_close(res.tau, Ta, FWD_TOL, "T_a columns vs ℳ_apθ̈_p + ℳ_aaθ̈_a", scale=scale)
    S = opalg.operators(m, q).H.dense().T          # columns: every axis, in dof order
    fs = np.concatenate([kept.f[k] for k in range(m.n)])     # (6n, 3), label order
    T_all = np.concatenate([S[sblk(k), m.dof_slice[k]].T @ fs[sblk(k)] for k in range(m.n)])
    assert_close(T_all[a], res.tau, FWD_TOL, "H_a(k) f(k) = T_a(k)", scale=np.linalg.norm(fs))
    assert_close(T_all[p], Tp, FWD_TOL, "H_p(k) f(k) = T_p(k)", scale=np.linalg.norm(fs))


# ---------------------------------------------------------------------------
# 5. reduced inertia
# ---------------------------------------------------------------------------
#: reduced_inertia with every dof active (the composite inertias of the G2 passes) against crba:
#: two forward evaluations of ℳ, measured worst 3.3e-15 relative over 300 random models under 3 kernels.
REDUCED_ALL_ACTIVE = measured(1e-13, 3.3e-15, "300 random models (2-30 bodies, every joint option, "
                              "mass ratios to 1e6) under 3 kernels")
# ---------------------------------------------------------------------------
@pytest.mark.verifies("G3", route="reduced_inertia vs dense Schur complement of crba and inv((ℳ⁻¹)_aa)")
@pytest.mark.parametrize("kind, n, seed, ratio", [("chain", 8, 40, 0), ("relabeled", 12, 41, 3),
                                                  ("tree", 20, 42, 0), ("jain-tree", 9, 43, 3)])
def test_reduced_inertia(kind, n, seed, ratio):
    """((ℳ⁻¹)_aa)⁻¹ = ℳ_aa − ℳ_apℳ_pp⁻¹ℳ_pa: against the dense Schur complement of crba
    (tolerance INV_K cond(ℳ_pp) ε relative: the Schur complement's own rounding; measured ≤ 21
    cond ε over 300 random models under three kernels) and against inv((ℳ⁻¹)_aa) (INV_K cond(ℳ) ε;
    measured ≤ 1.6); exactly symmetric and positive definite; a (4, 3) batch equals the per-state
    calls (C_BATCH cond(ℳ_pp) ε, see test_batch_equals_loop; measured ≤ 3.3); all active: ℳ (the
    crba, to REDUCED_ALL_ACTIVE); all passive: an empty (0, 0) matrix."""
    m = build(kind, n, seed, "all", ratio)
    rng = np.random.default_rng(seed)
    qs = rng.normal(size=(4, 3, m.ndof))
    for p in masks(m, rng, 3):
        if p.all():
            continue
        a = ~p
        S = opalg.reduced_inertia(m, qs, p)
        assert S.shape == (4, 3, a.sum(), a.sum())
        for i in range(4):
            for j in range(3):
                Mq = opalg.crba(m, qs[i, j])
                Mpp = Mq[np.ix_(p, p)]
                schur = Mq[np.ix_(a, a)] - Mq[np.ix_(a, p)] @ np.linalg.solve(Mpp, Mq[np.ix_(p, a)])
                assert_close(S[i, j], schur, cond_tol(np.linalg.cond(Mpp), INV_K, "ℳ_pp"), "Schur complement")
                alt = np.linalg.inv(np.linalg.inv(Mq)[np.ix_(a, a)])
                assert_close(S[i, j], alt, cond_tol(np.linalg.cond(Mq), INV_K, "ℳ"), "inv((ℳ⁻¹)_aa)")
                assert np.array_equal(S[i, j], S[i, j].T)     # exact: returned as (T + Tᵀ)/2
                assert np.linalg.eigvalsh(S[i, j]).min() > 0
                assert_close(opalg.reduced_inertia(m, qs[i, j], p), S[i, j], batch_tol(m, qs[i, j], p),
                             "batch vs single")
    q = qs[0, 0]
    assert_close(opalg.reduced_inertia(m, q, np.zeros(m.ndof, bool)), opalg.crba(m, q), REDUCED_ALL_ACTIVE,
                 "all active vs crba")
    assert opalg.reduced_inertia(m, q, np.ones(m.ndof, bool)).shape == (0, 0)
