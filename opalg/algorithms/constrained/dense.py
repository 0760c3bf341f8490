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

Equations solved (each re-derived here; the scan's signs are not trusted):

* augmented (eq. 17): ``[[M, −Zᵀ], [B, 0]] [ẏ; v] = [F − Q; h]``;
* reduced (eqs. 18–19): with ``C`` an orthonormal basis of the null space of
  ``Z`` (n x (n − c), ``Z C = 0``), ``[CᵀM; B] ẏ = [Cᵀ(F − Q); h]`` and then
  ``v = (Z Zᵀ)⁻¹ Z (M ẏ + Q − F)``, computed as the least-squares solution of
  ``Zᵀ v = M ẏ + Q − F`` (no Z Zᵀ is formed).

Existence: ``rank Z = c`` and the augmented matrix is nonsingular, which (M
SPD) holds iff the c x c Schur complement ``S = B M⁻¹ Zᵀ`` is nonsingular —
equivalently the row spaces of ``CᵀM`` and ``B`` meet only in 0.  The
scale-free measure used here (:func:`conditioning`) is the cosine of the largest
principal angle between the rows of B and of Z in the M⁻¹ metric.

Without a dense ℳ (for an opalg :class:`~opalg.Model`): :mod:`opalg.algorithms.constrained.passes`
(``schur_columns``, ``conditioning_passes``, ``solve_passes``) applies ℳ⁻¹ to the columns of
Bᵀ and Zᵀ with one pair of O(n) innovations passes each (docs/REFERENCE.md E8–E9),
in agreement with the dense routes here.

Rank tests, null spaces, the reduced solve and the measures first scale each row
of B and Z to a largest |entry| of 1 (the row spaces, hence the answers, do not
change), so a choice is judged alike whatever the units or magnitude of its rows.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from opalg import _backend as bk
from opalg.algorithms.kkt import kkt_solve
from opalg.errors import InfeasibleDirections, SingularConfigurationError, StateError  # noqa: F401  (InfeasibleDirections: the old home)
from opalg.model import _validate


#: Default threshold of :func:`conditioning` below which a choice counts as singular.
SINGULAR_TOL = 1e-8


def _array(x, name: str, shape, what: str = "matrix") -> np.ndarray:
    """x as a finite float array of len(shape) dimensions (None in shape: any size)."""
    if isinstance(x, np.ndarray) and x.dtype == np.float64:
        a = x  # the integrators' path: nothing to convert
    else:
        try:
            bk.check_no_strings(x, name, StateError)  # np.asarray(dtype=float) would parse "1.5"
            a = np.asarray(x, dtype=float)
        except (TypeError, ValueError):
            raise StateError(f"{name} must be a numeric {what}, got {x!r}") from None
    if a.ndim != len(shape):
        raise StateError(f"{name} must be {len(shape)}-D, got shape {a.shape}")
    for want, got, unit in zip(shape, a.shape, ("rows", "columns") if a.ndim == 2 else ("entries",)):
        if want is not None and want != got:
            raise StateError(f"{name} has shape {a.shape}: expected {want} {unit}")
    if not np.isfinite(a).all():
        raise StateError(f"{name} has non-finite entries")
    return a


def _matrix(x, name: str, shape=(None, None)) -> np.ndarray:
    return _array(x, name, shape)


def _vector(x, name: str, size: int) -> np.ndarray:
    return _array(x, name, (size,), "vector")


def _mass(M, n: int) -> np.ndarray:
    """ℳ (n, n): finite, symmetric to 1e-10 of its largest entry, and positive definite
    (a StateError naming M, not LAPACK's LinAlgError or a triangle read silently)."""
    M = _matrix(M, "M", (n, n))
    return _validate.spd(M, "M")


def _system(M, Q, F, B, h, Z):
    """The arguments of the dense solvers, validated against the shape (c, n) of B."""
    B = _matrix(B, "B")
    c, n = B.shape
    return (_mass(M, n), _vector(Q, "Q", n), _vector(F, "F", n), B,
            _vector(h, "h", c), _matrix(Z, "Z", (c, n)))


def _row_scales(X: np.ndarray) -> np.ndarray:
    """Largest |entry| of each row of X (1 for a zero row, which stays zero)."""
    s = np.abs(X).max(axis=1, initial=0.0)
    return np.where(s > 0, s, 1.0)


def _unit_rows(X: np.ndarray) -> np.ndarray:
    return X / _row_scales(X)[:, None]


def _rank(X: np.ndarray) -> int:
    """Numerical rank of X judged on its rows scaled to a largest |entry| of 1.

    A rank tolerance relative to σ_max of X itself calls a row of 1e-20 next to a row
    of 1 "zero", and σ_max of entries near 1e308 overflows; the scaled rows are O(1).
    """
    if X.size == 0:
        return 0
    sv = np.linalg.svd(_unit_rows(X), compute_uv=False)
    return int((sv > max(X.shape) * np.finfo(float).eps * sv[0]).sum())


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
        A rank-deficient, or rank Z < c (both judged on rows scaled to a largest
        |entry| of 1, so neither the units nor the magnitude of a row matter).

    Examples
    --------
    >>> import numpy as np
    >>> from opalg.algorithms.constrained import force_directions
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
        rank = _rank(A)
        if rank < A.shape[0]:
            raise InfeasibleDirections(
                f"A (shape {A.shape}) is rank deficient (rank {rank}): fewer than "
                f"{A.shape[0]} independent control forces for {A.shape[0]} kinematical constraints")
        Z = np.vstack([B[:n_geometric], A])
    rank = _rank(Z)
    if rank < c:
        raise InfeasibleDirections(
            f"rank Z = {rank} < c = {c}: the control directions A repeat "
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
    >>> from opalg.algorithms.constrained import conditioning
    >>> B = np.array([[1.0, 0.0]])
    >>> conditioning(np.eye(2), B, B), round(conditioning(np.eye(2), B, np.array([[0.0, 1.0]])), 12)
    (1.0, 0.0)
    """
    B = _matrix(B, "B")
    Z = _matrix(Z, "Z", (None, B.shape[1]))
    return _conditioning(_mass(M, B.shape[1]), B, Z)


def _conditioning(M: np.ndarray, B: np.ndarray, Z: np.ndarray) -> float:
    """:func:`conditioning` of checked arrays."""
    # numpy's LAPACK throughout: mixing in scipy's separate OpenBLAS thread pool for 3x3
    # solves was seen to stall under load.
    L = np.linalg.cholesky(np.asarray(M, dtype=float))
    # Unit rows span the same spaces and keep rows near 1e308 (or 1e-300) from overflowing.
    X = np.linalg.solve(L, _unit_rows(np.asarray(B, dtype=float)).T)  # (B L⁻ᵀ)ᵀ
    Y = np.linalg.solve(L, _unit_rows(np.asarray(Z, dtype=float)).T)
    QB, QZ = np.linalg.qr(X)[0], np.linalg.qr(Y)[0]
    sv = np.linalg.svd(QB.T @ QZ, compute_uv=False)
    return float(min(sv[-1], 1.0))


def _check_feasible(M, B, Z, what: str, kappa: float | None = None) -> None:
    kappa = _conditioning(M, B, Z) if kappa is None else kappa
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
    >>> from opalg.algorithms.constrained import solve_augmented
    >>> sol = solve_augmented(np.eye(2), np.zeros(2), np.zeros(2), np.array([[1.0, 1.0]]),
    ...                       np.array([2.0]), np.array([[1.0, 1.0]]))
    >>> sol.ydot, sol.v
    (array([1., 1.]), array([1.]))
    """
    M, Q, F, B, h, Z = _system(M, Q, F, B, h, Z)
    if check:
        _check_feasible(M, B, Z, "augmented matrix")
    try:   # the events of a run watch κ, so only LU's exact zero pivot is tested here
        ydot, v = kkt_solve(M, B, F - Q, h, -Z, rcond=None)
    except SingularConfigurationError:
        raise InfeasibleDirections("augmented matrix is exactly singular") from None
    return Solution(ydot, v)


def null_complement(Z: np.ndarray) -> np.ndarray:
    """Orthonormal basis C (n x (n − rank Z)) of the null space of Z, so that Z C = 0.

    The rank is judged on the rows of Z scaled to a largest |entry| of 1 (the same
    null space): a valid row of 1e-20 next to rows of 1 is not taken for zero.

    Examples
    --------
    >>> import numpy as np
    >>> from opalg.algorithms.constrained import null_complement
    >>> null_complement([[1.0, 0.0, 0.0], [0.0, 1e-20, 0.0]]).ravel().tolist()
    [0.0, 0.0, 1.0]
    """
    import scipy.linalg  # here, not at module level: it doubles the time of `import opalg`

    return scipy.linalg.null_space(_unit_rows(_matrix(Z, "Z")))


def solve_reduced(M, Q, F, B, h, Z, check: bool = True) -> Solution:
    r"""Solve ``[CᵀM; B] ẏ = [Cᵀ(F − Q); h]``, then ``Zᵀ v = M ẏ + Q − F`` for v (eqs. 18–19).

    ``C`` spans the null space of ``Z``; premultiplying ``M ẏ + Q = F + Zᵀv`` by
    ``Cᵀ`` eliminates the unknown forces.  Eq. 19's ``v = (Z Zᵀ)⁻¹ Z (M ẏ + Q − F)``
    is computed as the least-squares solution of that consistent n x c system on
    the unit rows of Z: forming Z Zᵀ squares the condition number of Z and over- or
    underflows for rows near 1e±160, where the augmented solve still succeeds.

    Examples
    --------
    >>> import numpy as np
    >>> from opalg.algorithms.constrained import solve_reduced
    >>> sol = solve_reduced(np.eye(2), np.zeros(2), np.zeros(2), np.array([[1.0, 1.0]]),
    ...                     np.array([2.0]), np.array([[1.0, 1.0]]))
    >>> np.round(sol.ydot, 12), np.round(sol.v, 12)
    (array([1., 1.]), array([1.]))
    """
    M, Q, F, B, h, Z = _system(M, Q, F, B, h, Z)
    c, n = B.shape
    if check:
        _check_feasible(M, B, Z, "reduced system")
    sz = _row_scales(Z)
    C = null_complement(Z / sz[:, None])
    if C.shape[1] != n - c:
        raise InfeasibleDirections(f"rank Z = {n - C.shape[1]} < c = {c}: the reduced system is not square")
    K, rhs = np.vstack([C.T @ M, B]), np.concatenate([C.T @ (F - Q), h])
    s = _row_scales(K)  # equilibrated rows: partial pivoting is not misled by the scale of B
    try:
        ydot = np.linalg.solve(K / s[:, None], rhs / s)
    except np.linalg.LinAlgError:
        raise InfeasibleDirections("reduced system is exactly singular") from None
    w = np.linalg.lstsq((Z / sz[:, None]).T, M @ ydot + Q - F, rcond=None)[0]
    return Solution(ydot, w / sz)  # Zᵀ v = (Z/s)ᵀ w, so v = w / s
