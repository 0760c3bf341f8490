r"""The m×m solve of closed-chain dynamics: λ = Λ_c r with the numerical rank (docs/REFERENCE.md H5)."""

from __future__ import annotations

import numpy as np

from opalg import _backend as bk
from opalg.errors import StateError
from opalg.model import _validate

#: Default relative cut-off of the rank decision: eigenvalues of Λ_c⁻¹ below RCOND·max are
#: treated as zero.  Structurally dependent rows (a planar loop closed with 6 rows) give
#: eigenvalues ~1e-16 of the largest; independent ones of a well-posed mechanism stay far above
#: 1e-10 except within ~1e-5 rad of a kinematic singularity.
RCOND = 1e-10


def solve_compliance(A, r, rcond: float = RCOND):
    r"""λ = Λ_c r for the compliance A = Λ_c⁻¹ (..., m, m), and the numerical rank (H5).

    The rank contract is that of a symmetric eigen-decomposition A = V diag(w) Vᵀ with the
    eigenvalues w ≤ rcond·max w dropped: λ = Σ_{w_i > tol} v_i v_iᵀ r / w_i, the μ → 0 limit of
    the damped (proximal) solve (A + μI)λ = r restricted to range(A).  It is the least-norm λ;
    because null(A) = null(G_c*), the dropped components do not change G_c*λ, so θ̈ stays right
    when the rows are dependent but consistent.

    Fast path: a Cholesky factor A = LLᵀ and L⁻¹ certify full rank without the eigenvalues,
    since λ_min = 1/‖L⁻¹‖₂² ≥ 1/‖L⁻¹‖_F² and λ_max ≤ tr A: a state with
    2·rcond·tr(A)·‖L⁻¹‖_F² < 1 has every eigenvalue above the cut-off (the factor 2 covers
    the rounding of L⁻¹), and λ = L⁻ᵀL⁻¹r.  Only the states this test cannot certify (rank
    deficient, or within a factor ~12 of the cut-off) take the eigen-decomposition, so the
    decision and the least-norm λ are exactly those of the eigen route.

    Complex entries (a complex step, A = A₀ + i h Ȧ) are solved as complex *symmetric*, with the
    rank decided on A₀: λ = V_k(V_kᵀAV_k)⁻¹V_kᵀr, V_k the kept eigenvectors of A₀, so that Im λ / h
    is the derivative (a Hermitian eigen-solve would conjugate and return a wrong one).

    Examples
    --------
    >>> import numpy as np
    >>> from opalg.closed.system import solve_compliance
    >>> lam, rank = solve_compliance(np.diag([2.0, 0.0]), np.array([1.0, 0.0]))
    >>> lam, int(rank)
    (array([0.5, 0. ]), 1)
    >>> lam, rank = solve_compliance(np.diag([2.0, 4.0]), np.array([1.0, 1.0]))   # Cholesky path
    >>> lam, int(rank)
    (array([0.5 , 0.25]), 2)
    """
    where = "solve_compliance"
    A = _validate.array(A, "A", where, complex_ok=True)
    r = _validate.array(r, "r", where, complex_ok=True)
    if A.ndim < 2 or A.shape[-1] != A.shape[-2] or r.ndim < 1 or r.shape[-1] != A.shape[-1]:
        raise StateError(f"{where}: A must be (..., m, m) and r (..., m), got shapes {A.shape} and {r.shape}")
    try:
        np.broadcast_shapes(A.shape[:-2], r.shape[:-1])
    except ValueError:
        raise StateError(f"{where}: the batch shapes of A {A.shape} and r {r.shape} do not broadcast") from None
    rcond = _validate.real(rcond, "rcond", where, positive=True)
    if rcond >= 1:
        raise StateError(f"{where}: rcond must be in (0, 1), got {rcond!r}")
    return _solve_compliance(A, r, rcond)


def _solve_compliance(A, r, rcond: float = RCOND):
    """:func:`solve_compliance` on checked arrays (the closed systems' inner solve)."""
    A = 0.5 * (A + bk.mT(A))
    if A.dtype.kind == "c":
        return _solve_complex(A, r, rcond)
    m = A.shape[-1]
    batch = np.broadcast_shapes(A.shape[:-2], r.shape[:-1])
    lam = np.zeros(batch + (m,))
    rank = np.full(batch, m)
    ok = np.zeros(A.shape[:-2], bool)
    if A.dtype.kind == "f" and np.all(np.isfinite(A)):
        try:
            Linv = np.linalg.inv(np.linalg.cholesky(A))
        except np.linalg.LinAlgError:     # some state is not positive definite: eigen route for all
            Linv = None
        if Linv is not None:
            trace = np.trace(A, axis1=-2, axis2=-1)
            ok = 2 * rcond * trace * np.sum(Linv * Linv, (-2, -1)) < 1
            lam_c = bk.mv(bk.mT(Linv), bk.mv(Linv, r))
            lam = np.where(np.broadcast_to(ok, batch)[..., None], lam_c, lam)
    okb = np.broadcast_to(ok, batch)
    if not np.all(okb):
        rest = ~okb
        Ab = np.broadcast_to(A, batch + (m, m))[rest]
        rb = np.broadcast_to(r, batch + (m,))[rest]
        w, V = np.linalg.eigh(Ab)
        tol = rcond * np.maximum(w[..., -1:], np.finfo(float).tiny)
        keep = w > tol
        winv = np.where(keep, 1.0 / np.where(keep, w, 1.0), 0.0)
        lam = lam.astype(np.result_type(lam, V, rb))
        lam[rest] = bk.mv(V, winv * bk.mv(bk.mT(V), rb))
        rank[rest] = keep.sum(-1)
    return lam, rank


def _solve_complex(A, r, rcond: float):
    """The solve of a complex step: A = A₀ + i h A₁ is complex *symmetric*, not Hermitian.

    The Hermitian eigen-decomposition would conjugate, which is not analytic, and a complex step
    through it returns a wrong derivative.  The rank is decided on the real part A₀ (the step is
    infinitesimal) and λ = V_k (V_kᵀ A V_k)⁻¹ V_kᵀ r with V_k the kept eigenvectors of A₀: transposes
    only, so analytic; with full rank it is A⁻¹r.  A dependent row of A₀ (H9) has the same null
    space at every nearby state, which V_k leaves out.
    """
    m = A.shape[-1]
    batch = np.broadcast_shapes(A.shape[:-2], r.shape[:-1])
    Ab, rb = np.broadcast_to(A, batch + (m, m)), np.broadcast_to(r, batch + (m,))
    w, V = np.linalg.eigh(Ab.real)
    keep = w > rcond * np.maximum(w[..., -1:], np.finfo(float).tiny)
    both = keep[..., :, None] & keep[..., None, :]
    W = np.where(both, bk.mT(V) @ Ab @ V, np.eye(m))          # dropped directions: identity rows
    y = np.linalg.solve(W, np.where(keep, bk.mv(bk.mT(V), rb), 0)[..., None])[..., 0]
    return bk.mv(V, y), keep.sum(-1)
