r"""Constrained dynamics with control forces of chosen direction (Ider 1990).

A system ``M(q) ẏ + Q(q, y) = F + Zᵀ v`` with ``c`` constraints at acceleration
level ``B ẏ = h``.  The rows of ``B`` are split into ``c1`` geometrical
constraints ``B_G`` (closed loops, guides: realized by reaction forces normal to
the constraint surfaces) and ``c2`` kinematical constraints ``B_K`` (desired
motions, realized by actuators).  The generalized force that realizes them is
``Zᵀ v`` with

* the **conventional model**: ``Z = B`` (every constraint force normal to its
  constraint surface; Ider eqs. 6–7);
* the **control-force model**: ``Z = [B_G; A]``, the kinematical constraint
  forces ``B_Kᵀ λ_K`` replaced by control forces ``Aᵀ μ`` of chosen directions
  ``A`` (c2 x n; Ider eqs. 12–16).

Sign convention (stated once): ``v`` are the magnitudes of the forces **applied**
to the system, ``M ẏ + Q = F + Zᵀ v``, so the joint moments a motor must apply
are ``τ = M ẏ + Q − F = Zᵀ v``.  (Eq. 14 as printed has ``+ Zᵀ v`` on the left,
while eqs. 23 and 25 read ``Zᵀ v`` as the applied moment; this module follows
the latter, so its ``v`` is the negative of eq. 14's.)

Equations solved (re-derived, not copied from the scan):

* augmented (eq. 17): ``[[M, −Zᵀ], [B, 0]] [ẏ; v] = [F − Q; h]``;
* reduced (eqs. 18–19): with ``C`` an orthonormal basis of the null space of
  ``Z`` (n x (n − c), ``Z C = 0``), ``[CᵀM; B] ẏ = [Cᵀ(F − Q); h]`` and then
  ``v = (Z Zᵀ)⁻¹ Z (M ẏ + Q − F)``.

Existence: ``rank Z = c`` and the augmented matrix is nonsingular, which (M
SPD) holds iff the c x c Schur complement ``S = B M⁻¹ Zᵀ`` is nonsingular —
equivalently the row spaces of ``CᵀM`` and ``B`` meet only in 0.  The
scale-free measure used here (:func:`conditioning`) is the cosine of the largest
principal angle between the rows of B and of Z in the M⁻¹ metric.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from . import _backend as bk
from .errors import InfeasibleDirections, StateError  # noqa: F401  (InfeasibleDirections: the old home)


#: Default threshold of :func:`conditioning` below which a choice counts as singular.
SINGULAR_TOL = 1e-8


def _matrix(x, name: str, shape=None) -> np.ndarray:
    try:
        bk.check_no_strings(x, name, StateError)  # np.asarray(dtype=float) would parse "1.5"
        a = np.asarray(x, dtype=float)
    except (TypeError, ValueError):
        raise StateError(f"{name} must be a numeric matrix, got {x!r}") from None
    if a.ndim != 2:
        raise StateError(f"{name} must be 2-D, got shape {a.shape}")
    if shape is not None:
        for want, got, what in zip(shape, a.shape, ("rows", "columns")):
            if want is not None and want != got:
                raise StateError(f"{name} has shape {a.shape}: expected {want} {what}")
    if not np.all(np.isfinite(a)):
        raise StateError(f"{name} has non-finite entries")
    return a


def force_directions(B: np.ndarray, A=None, n_geometric: int = 0) -> np.ndarray:
    r"""Z of the conventional model (``A=None``: Z = B) or of the control-force model.

    Parameters
    ----------
    B : (c, n) array
        Constraint matrix, geometrical rows first.
    A : (c2, n) array_like, optional
        Control-force directions for the ``c2 = c − n_geometric`` kinematical rows.
    n_geometric : int
        Number ``c1`` of geometrical constraints (the first rows of B).

    Raises
    ------
    StateError
        A of the wrong shape or not finite (a ``ValueError``).
    InfeasibleDirections
        A rank-deficient, or rank Z < c.

    Examples
    --------
    >>> import numpy as np
    >>> from opalg.constrained import force_directions
    >>> B = np.array([[1.0, 2.0, 3.0], [0.0, 1.0, 1.0]])
    >>> force_directions(B, [[0, 1, 0], [0, 0, 1]])
    array([[0., 1., 0.],
           [0., 0., 1.]])
    """
    B = _matrix(B, "B")
    c, n = B.shape
    if not 0 <= n_geometric <= c:
        raise StateError(f"n_geometric = {n_geometric} must be between 0 and c = {c}")
    if A is None:
        Z = B
    else:
        A = _matrix(A, "A", (c - n_geometric, n))
        if np.linalg.matrix_rank(A) < A.shape[0]:
            raise InfeasibleDirections(
                f"A (shape {A.shape}) is rank deficient (rank {np.linalg.matrix_rank(A)}): fewer than "
                f"{A.shape[0]} independent control forces for {A.shape[0]} kinematical constraints")
        Z = np.vstack([B[:n_geometric], A])
    if np.linalg.matrix_rank(Z) < c:
        raise InfeasibleDirections(
            f"rank Z = {np.linalg.matrix_rank(Z)} < c = {c}: the control directions A repeat "
            "directions of the geometrical constraints")
    return Z


def conditioning(M: np.ndarray, B: np.ndarray, Z: np.ndarray) -> float:
    r"""How far a choice of directions is from infeasible: 1 = best, 0 = singular.

    The augmented matrix ``[[M, −Zᵀ], [B, 0]]`` is nonsingular iff the Schur
    complement ``S = B M⁻¹ Zᵀ`` is (M SPD).  With ``M = L Lᵀ``, ``S = (B L⁻ᵀ)(Z L⁻ᵀ)ᵀ``;
    orthonormal bases ``Q_B``, ``Q_Z`` of the row spaces of ``B L⁻ᵀ`` and
    ``Z L⁻ᵀ`` give ``S = R_Bᵀ (Q_Bᵀ Q_Z) R_Z`` with invertible ``R``, so the measure
    is ``σ_min(Q_Bᵀ Q_Z)``: the cosine of the largest principal angle between
    the constraint normals and the force directions in the M⁻¹ metric.  It is
    invariant under any invertible recombination or scaling of the rows of B and
    of Z (units included), equals 1 for the conventional model Z = B, and tends
    to 0 as the choice approaches singular — also for a single constraint, where a
    ratio of singular values of S would always be 1.

    Examples
    --------
    >>> import numpy as np
    >>> from opalg.constrained import conditioning
    >>> B = np.array([[1.0, 0.0]])
    >>> conditioning(np.eye(2), B, B), round(conditioning(np.eye(2), B, np.array([[0.0, 1.0]])), 12)
    (1.0, 0.0)
    """
    # numpy's LAPACK throughout: mixing in scipy's separate OpenBLAS thread pool for 3x3
    # solves was seen to stall under load.
    L = np.linalg.cholesky(np.asarray(M, dtype=float))
    X = np.linalg.solve(L, np.asarray(B, dtype=float).T)  # (B L⁻ᵀ)ᵀ
    Y = np.linalg.solve(L, np.asarray(Z, dtype=float).T)
    QB, QZ = np.linalg.qr(X)[0], np.linalg.qr(Y)[0]
    sv = np.linalg.svd(QB.T @ QZ, compute_uv=False)
    return float(min(sv[-1], 1.0))


def _check_feasible(M, B, Z, what: str) -> None:
    kappa = conditioning(M, B, Z)
    if kappa < SINGULAR_TOL:
        raise InfeasibleDirections(
            f"{what} is singular: conditioning (cosine of the largest principal angle between "
            f"B and Z in the M⁻¹ metric) = {kappa:.3g} < {SINGULAR_TOL:g} "
            "(the row spaces of CᵀM and B intersect)")


@dataclass
class Solution:
    """Accelerations ``ydot`` and applied force magnitudes ``v`` (τ = Zᵀ v)."""

    ydot: np.ndarray
    v: np.ndarray


def solve_augmented(M, Q, F, B, h, Z, check: bool = True) -> Solution:
    r"""Solve ``[[M, −Zᵀ], [B, 0]] [ẏ; v] = [F − Q; h]`` (Ider eq. 17, sign as in the module).

    ``check=False`` skips the feasibility measure (for integrators that watch it
    with an event instead); an exactly singular matrix still raises.

    Raises
    ------
    InfeasibleDirections
        If the augmented matrix is singular (:func:`conditioning` below
        :data:`SINGULAR_TOL`).

    Examples
    --------
    >>> import numpy as np
    >>> from opalg.constrained import solve_augmented
    >>> sol = solve_augmented(np.eye(2), np.zeros(2), np.zeros(2), np.array([[1.0, 1.0]]),
    ...                       np.array([2.0]), np.array([[1.0, 1.0]]))
    >>> sol.ydot, sol.v
    (array([1., 1.]), array([1.]))
    """
    M, B, Z = np.asarray(M, float), np.asarray(B, float), np.asarray(Z, float)
    c, n = B.shape
    if check:
        _check_feasible(M, B, Z, "augmented matrix")
    K = np.block([[M, -Z.T], [B, np.zeros((c, c))]])
    try:
        x = np.linalg.solve(K, np.concatenate([np.asarray(F, float) - Q, h]))
    except np.linalg.LinAlgError:
        raise InfeasibleDirections("augmented matrix is exactly singular") from None
    return Solution(x[:n], x[n:])


def null_complement(Z: np.ndarray) -> np.ndarray:
    """Orthonormal basis C (n x (n − rank Z)) of the null space of Z, so that Z C = 0."""
    import scipy.linalg  # here, not at module level: it doubles the time of `import opalg`

    return scipy.linalg.null_space(np.asarray(Z, float))


def solve_reduced(M, Q, F, B, h, Z, check: bool = True) -> Solution:
    r"""Solve ``[CᵀM; B] ẏ = [Cᵀ(F − Q); h]``, ``v = (Z Zᵀ)⁻¹ Z (M ẏ + Q − F)`` (eqs. 18–19).

    ``C`` spans the null space of ``Z``; premultiplying ``M ẏ + Q = F + Zᵀv`` by
    ``Cᵀ`` eliminates the unknown forces.

    Examples
    --------
    >>> import numpy as np
    >>> from opalg.constrained import solve_reduced
    >>> sol = solve_reduced(np.eye(2), np.zeros(2), np.zeros(2), np.array([[1.0, 1.0]]),
    ...                     np.array([2.0]), np.array([[1.0, 1.0]]))
    >>> np.round(sol.ydot, 12), np.round(sol.v, 12)
    (array([1., 1.]), array([1.]))
    """
    M, B, Z = np.asarray(M, float), np.asarray(B, float), np.asarray(Z, float)
    F, Q, h = np.asarray(F, float), np.asarray(Q, float), np.asarray(h, float)
    if check:
        _check_feasible(M, B, Z, "reduced system")
    C = null_complement(Z)
    try:
        ydot = np.linalg.solve(np.vstack([C.T @ M, B]), np.concatenate([C.T @ (F - Q), h]))
    except np.linalg.LinAlgError:
        raise InfeasibleDirections("reduced system is exactly singular") from None
    v = np.linalg.solve(Z @ Z.T, Z @ (M @ ydot + Q - F))
    return Solution(ydot, v)
