"""Dense, independent routes for the quasi-velocity tests (tests/test_quasi_*.py).

* ``ldl_tip_first``: the block LDLᵀ of a dense ℳ (from ``opalg.crba``) with the bodies
  eliminated children-before-parents; by E10 its factor is I + HφK and its pivots D(k);
* ``complex_step_dt``: d/dt f(q(t)) along q(t) = q + t q̇ by the complex step.

Neither uses opalg's Riccati recursion: ℳ comes from the CRBA and the factorization is a
textbook Schur-complement elimination written here.

``cond_tol``: k·cond(ℳ)·ε with cond(ℳ) of the test's state, k = 100.  SWEEP: the largest
err/(cond(ℳ)·ε) of each comparison that uses it, over 300 random models (chain, tree, forest,
relabelled, tip-to-base; n 5-8; single, mixed and all joint kinds) under 3 BLAS/SIMD kernels, was
3.4 (the pivots D(k)), 2.1 (ν̇), 0.9 (θ̇ from ν), 0.5 (ν), 0.4 (the rates of J6), 0.2 (½νᵀDν).
"""

from __future__ import annotations

import numpy as np

import opalg

import helpers

#: Complex-step size: no subtractive cancellation, so h can be tiny; the O(h²) truncation is nil.
H_CS = 1e-30


def ldl_tip_first(model, Mq):
    """(L, D) with ℳ = L D Lᵀ, L unit block triangular and D block diagonal (joint blocks),
    eliminating the bodies in reverse topological order (tips first).  Works on complex ℳ
    (plain transposes, never a conjugate)."""
    A = np.array(Mq, dtype=complex if np.iscomplexobj(Mq) else float)
    N = model.ndof
    L = np.eye(N, dtype=A.dtype)
    D = np.zeros_like(A)
    done = np.zeros(N, dtype=bool)
    for k in reversed(model.order):
        s = model.dof_slice[k]
        done[s] = True
        rest = ~done
        Dk = A[s, s].copy()
        D[s, s] = Dk
        Lk = np.linalg.solve(Dk.T, A[rest][:, s].T).T         # A[rest, s] Dk⁻¹
        L[rest, s] = Lk
        A[np.ix_(rest, rest)] -= Lk @ Dk @ Lk.T
    return L, D


def complex_step_dt(f, q, qd, h=H_CS):
    """d/dt f(q + t q̇) at t = 0 by the complex step (f must accept complex q)."""
    return np.imag(f(q + 1j * h * qd)) / h


def factor_at(model, q):
    """L(q), D(q) of the dense tip-first LDLᵀ of crba(q)."""
    return ldl_tip_first(model, opalg.crba(model, q))


#: k of cond_tol (module docstring; was 10 with a floor 1e-13 that no measurement set).
K_COND = 100

#: The sweep behind K_COND and the ratios quoted in the tests.
SWEEP = ("300 random models (chain, tree, forest, relabelled, tip-to-base; n 5-8; single, mixed, all "
         "joints) under 3 BLAS/SIMD kernels")


def cond_tol(model, q, k=K_COND) -> helpers.Tol:
    """k·cond(ℳ)·ε: the accuracy of a dense factor of ℳ, so of a reference built on one (a
    perturbation of relative size ε in ℳ moves L and D by up to cond·ε).  ``q`` may be a batch:
    the largest cond(ℳ) of its states."""
    return helpers.cond_tol(np.max(np.linalg.cond(opalg.crba(model, q))), k)
