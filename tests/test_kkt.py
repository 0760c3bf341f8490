"""The dense KKT solve (opalg.algorithms.kkt) against the range-space (Schur complement) formula.

Independent route: λ = (B ℳ⁻¹ Z*)⁻¹ (B ℳ⁻¹ r − h), x = ℳ⁻¹ (r − Z* λ), with ℳ⁻¹ applied by
scipy's Cholesky (``cho_solve``), never by the LU of the saddle-point matrix under test.
Both are backward-stable solves of the same system, so they agree to k·cond(K)·ε with
cond(K) computed in the test.
"""

from __future__ import annotations

import numpy as np
import pytest
from scipy.linalg import cho_factor, cho_solve

from opalg.algorithms.kkt import kkt_matrix, kkt_solve
from opalg.errors import SingularConfigurationError

from helpers import assert_close, cond_tol


def random_system(rng, n, c, batch=(), spread=1.0):
    """SPD ℳ with eigenvalues over ``spread`` decades, full-rank B and Z, and right-hand sides."""
    Q = np.linalg.qr(rng.normal(size=batch + (n, n)))[0]
    ev = np.logspace(0, spread, n)
    M = Q @ (ev[:, None] * np.swapaxes(Q, -1, -2))
    M = (M + np.swapaxes(M, -1, -2)) / 2
    B, Z = rng.normal(size=(2,) + batch + (c, n))
    r, h = rng.normal(size=batch + (n,)), rng.normal(size=batch + (c,))
    return M, B, Z, r, h


def range_space(M, B, Z, r, h):
    f = cho_factor(M)
    Minv_r, Minv_Zt = cho_solve(f, r), cho_solve(f, Z.T)
    lam = np.linalg.solve(B @ Minv_Zt, B @ Minv_r - h)
    return Minv_r - Minv_Zt @ lam, lam


@pytest.mark.parametrize("seed", range(20))
@pytest.mark.parametrize("symmetric", [True, False])
def test_kkt_solve_equals_the_range_space_formula(seed, symmetric):
    rng = np.random.default_rng(seed)
    n = int(rng.integers(2, 9))
    c = int(rng.integers(1, n + 1))
    M, B, Z, r, h = random_system(rng, n, c, spread=float(rng.uniform(0, 6)))
    Z = B if symmetric else Z
    x, lam = kkt_solve(M, B, r, h, None if symmetric else Z)
    x_ref, lam_ref = range_space(M, B, Z, r, h)
    tol = cond_tol(np.linalg.cond(kkt_matrix(M, B, Z)), k=100, what="K")
    scale = np.linalg.norm(np.concatenate([x_ref, lam_ref]))
    assert_close(np.concatenate([x, lam]), np.concatenate([x_ref, lam_ref]), tol, "[x; λ] vs range space",
                 scale=scale)
    # the defining equations, to the same bound
    assert_close(M @ x + Z.T @ lam, r, tol, "ℳx + Z*λ = r", scale=np.linalg.norm(M) * scale + np.linalg.norm(r))
    assert_close(B @ x, h, tol, "Bx = h", scale=np.linalg.norm(B) * scale + np.linalg.norm(h))


def test_batched_equals_per_state():
    rng = np.random.default_rng(7)
    M, B, Z, r, h = random_system(rng, 5, 2, batch=(3, 4), spread=3.0)
    x, lam = kkt_solve(M, B, r, h, Z)
    for i in np.ndindex(3, 4):
        xi, li = kkt_solve(M[i], B[i], r[i], h[i], Z[i])
        tol = cond_tol(np.linalg.cond(kkt_matrix(M[i], B[i], Z[i])), k=100, what="K")
        assert_close(np.concatenate([x[i], lam[i]]), np.concatenate([xi, li]), tol, f"batch entry {i}")


def test_dependent_rows():
    """B with a repeated row: 'raise' names the singularity; 'lstsq' gives the unique x (that of
    the independent rows alone) and multipliers whose sum matches."""
    rng = np.random.default_rng(3)
    M, B, _, r, h = random_system(rng, 5, 2, spread=2.0)
    B2, h2 = np.vstack([B, 2 * B[:1]]), np.concatenate([h, 2 * h[:1]])
    with pytest.raises(SingularConfigurationError, match="KKT matrix is singular"):
        kkt_solve(M, B2, r, h2)
    x, lam = kkt_solve(M, B2, r, h2, singular="lstsq")
    x_ref, lam_ref = range_space(M, B, B, r, h)
    tol = cond_tol(np.linalg.cond(kkt_matrix(M, B)), k=1000, what="K of the independent rows")
    assert_close(x, x_ref, tol, "x with a dependent row vs without it")
    assert_close(B2.T @ lam, B.T @ lam_ref, tol, "the constraint force B*λ", scale=np.linalg.norm(B.T @ lam_ref))


def test_exactly_singular_without_rank_test():
    """rcond=None skips the SVD; an exactly singular matrix is still refused, by LU's zero pivot."""
    B = np.array([[1.0, 0.0, 0.0], [1.0, 0.0, 0.0]])
    with pytest.raises(SingularConfigurationError, match="exactly singular"):
        kkt_solve(np.eye(3), B, np.zeros(3), np.zeros(2), rcond=None)
    with pytest.raises(ValueError, match="singular must be"):
        kkt_solve(np.eye(3), B, np.zeros(3), np.zeros(2), singular="ignore")
