r"""Ider's constrained dynamics through O(n) innovations passes: no dense ℳ (docs/REFERENCE.md E8, G5).

The Schur complement ``S = B ℳ⁻¹ Zᵀ`` of :mod:`opalg.algorithms.constrained`, its feasibility
measure and the solve, each from passes of :func:`opalg.innovations_passes` on the
columns of Bᵀ and Zᵀ (O(n) per column) on one Riccati factorization, instead of a dense
``crba`` and Cholesky: the route that scales to long chains and trees, and that
:func:`opalg.underactuated.task_control` uses for its measure.
"""

from __future__ import annotations

import numpy as np

from opalg.algorithms.constrained.dense import Solution, _check_feasible, _matrix, _row_scales, _unit_rows, _vector
from opalg.errors import InfeasibleDirections, StateError
from opalg.algorithms.aba import innovations_passes
from opalg.model.kinematics import body_kinematics, check_state
from opalg.algorithms.riccati import articulated

#: Smallest Cholesky pivot of the correlation matrix of a Gram matrix ``X ℳ⁻¹ Xᵀ`` (X = B or Z)
#: below which the rows of X count as dependent: the Gram matrix then has condition ≳ 1e14, so
#: cosines formed from it would carry errors ≳ 1e-2.
GRAM_TOL = 1e-7


def _operands(model, q, B, Z):
    q = check_state(model, q, "q")
    if q.ndim != 1:
        raise StateError(f"q must be one state of shape ({model.ndof},), got shape {q.shape}")
    return q, _matrix(B, "B", (None, model.ndof)), _matrix(Z, "Z", (None, model.ndof))


def _gram_factor(G: np.ndarray, name: str) -> np.ndarray:
    """Lower Cholesky factor of the Gram matrix G of the rows of ``name``, tested scale-free."""
    d = np.sqrt(np.diag(G))
    try:
        L = np.linalg.cholesky((G + G.T) / 2 / d / d[:, None]) if np.all(d > 0) else None
    except np.linalg.LinAlgError:
        L = None
    if L is None or np.diag(L).min() < GRAM_TOL:
        raise InfeasibleDirections(
            f"the rows of {name} are linearly dependent in the ℳ⁻¹ metric (smallest Cholesky pivot "
            f"of their Gram correlation matrix below {GRAM_TOL:g}): no principal angles exist")
    return L * d[:, None]


def _kappa_gram(G_BB, G_ZZ, G_BZ) -> float:
    # G_BZ = R_Bᵀ (Q_Bᵀ Q_Z) R_Z with G = RᵀR = L Lᵀ: the cosines are σ(L_B⁻¹ G_BZ L_Z⁻ᵀ).
    LB, LZ = _gram_factor(G_BB, "B"), _gram_factor(G_ZZ, "Z")
    X = np.linalg.solve(LZ, np.linalg.solve(LB, G_BZ).T).T
    return float(min(np.linalg.svd(X, compute_uv=False)[-1], 1.0))


def schur_columns(model, q, B, Z) -> np.ndarray:
    r"""The Schur complement ``S = B ℳ⁻¹ Zᵀ`` (c_B x c_Z) of ``model`` at ``q``, without ℳ.

    One inward and one outward innovations pass (:func:`opalg.innovations_passes`,
    a = b = 0) apply ℳ⁻¹ to the c_Z columns of Zᵀ at once: O(n c_Z).  B is (c_B, N),
    Z is (c_Z, N) and q is one state (N,).

    Examples
    --------
    >>> import numpy as np, opalg
    >>> from opalg.algorithms.constrained.passes import schur_columns
    >>> m = opalg.random_model(5, "tree", seed=0)
    >>> q, B = np.zeros(m.ndof), np.eye(m.ndof)[:2]
    >>> bool(np.allclose(schur_columns(m, q, B, B), np.linalg.inv(opalg.crba(m, q))[:2, :2]))
    True
    """
    q, B, Z = _operands(model, q, B, Z)
    return B @ innovations_passes(model, articulated(model, q), Z.T).qdd


def conditioning_passes(model, q, B, Z) -> float:
    r""":func:`~opalg.algorithms.constrained.conditioning` of ``(ℳ(q), B, Z)`` from O(n) passes instead of a dense ℳ.

    ``W = ℳ⁻¹[Bᵀ Zᵀ]`` (one pair of passes, unit rows) gives the Gram matrices of the
    rows in the ℳ⁻¹ metric, ``G_BB = B W_B``, ``G_ZZ = Z W_Z``, ``G_BZ = B W_Z``; with
    ``G = RᵀR`` (Cholesky) the cosines of the principal angles are the singular values of
    ``R_B⁻ᵀ G_BZ R_Z⁻¹``.  Scale-free like :func:`~opalg.algorithms.constrained.conditioning`, and equal to it within
    ~ε cond(ℳ) (cond G_BB + cond G_ZZ): Gram matrices square the condition of the bases
    (~1e-15 apart on the Ider arm).

    Raises
    ------
    InfeasibleDirections
        If the rows of B or of Z are dependent in the ℳ⁻¹ metric (:data:`GRAM_TOL`).

    Examples
    --------
    >>> import numpy as np, opalg
    >>> from opalg.algorithms.constrained import conditioning
    >>> from opalg.algorithms.constrained.passes import conditioning_passes
    >>> m = opalg.random_model(6, "chain", seed=1)
    >>> q = np.random.default_rng(0).normal(size=m.ndof)
    >>> B, Z = np.random.default_rng(1).normal(size=(2, 2, m.ndof))
    >>> bool(abs(conditioning_passes(m, q, B, Z) - conditioning(opalg.crba(m, q), B, Z)) < 1e-10)
    True
    """
    q, B, Z = _operands(model, q, B, Z)
    B, Z = _unit_rows(B), _unit_rows(Z)
    W = innovations_passes(model, articulated(model, q), np.hstack([B.T, Z.T])).qdd
    return _kappa_gram(B @ W[:, :len(B)], Z @ W[:, len(B):], B @ W[:, len(B):])


def solve_passes(model, q, qd, B, h, Z, F=None, check: bool = True) -> Solution:
    r"""Solve ``ℳ ẏ + C = F + Zᵀ v``, ``B ẏ = h`` by innovations passes, without ℳ.

    On one Riccati factorization at q: the free motion ``ẏ₀ = ℳ⁻¹(F − C)`` (the ABA)
    and ``W = ℳ⁻¹Zᵀ`` (passes on the c columns of Zᵀ); then ``S = B W``,
    ``v = S⁻¹(h − B ẏ₀)``, ``ẏ = ẏ₀ + W v``, so ``ℳ ẏ + C − F = Zᵀv``: v are applied
    force magnitudes as in :func:`~opalg.algorithms.constrained.solve_augmented`.  O(n c) beyond the c x c solve.

    Parameters
    ----------
    model : opalg.Model
        Its gravity is part of C, as in :func:`opalg.bias`.
    q, qd : (N,) array_like
    B, Z : (c, N) array_like
    h : (c,) array_like
    F : (N,) array_like, optional
        Applied generalized forces (default 0).
    check : bool
        Test the feasibility measure (:func:`conditioning_passes`) first.

    Raises
    ------
    InfeasibleDirections
        S singular (the measure below :data:`~opalg.algorithms.constrained.SINGULAR_TOL`, or exactly).

    Examples
    --------
    >>> import numpy as np, opalg
    >>> from opalg.algorithms.constrained import solve_augmented
    >>> from opalg.algorithms.constrained.passes import solve_passes
    >>> m = opalg.random_model(5, "tree", seed=3)
    >>> rng = np.random.default_rng(0)
    >>> q, qd = rng.normal(size=(2, m.ndof))
    >>> B, Z, h = rng.normal(size=(1, m.ndof)), rng.normal(size=(1, m.ndof)), rng.normal(size=1)
    >>> s = solve_passes(m, q, qd, B, h, Z)
    >>> d = solve_augmented(opalg.crba(m, q), opalg.bias(m, q, qd), np.zeros(m.ndof), B, h, Z)
    >>> bool(np.allclose(s.ydot, d.ydot) and np.allclose(s.v, d.v))
    True
    """
    q, B, Z = _operands(model, q, B, Z)
    c, N = B.shape
    Z, h = _matrix(Z, "Z", (c, N)), _vector(h, "h", c)
    F = np.zeros(N) if F is None else _vector(F, "F", N)
    kin = body_kinematics(model, q, qd)  # validates qd; ABA and the ℳ⁻¹ columns share it
    art = articulated(model, q, kin)
    y0 = innovations_passes(model, art, F[:, None], kin.a, kin.b).qdd[:, 0]
    sB, sZ = _row_scales(B), _row_scales(Z)
    Bn, Zn = B / sB[:, None], Z / sZ[:, None]
    W = innovations_passes(model, art, np.hstack([Bn.T, Zn.T]) if check else Zn.T).qdd
    WZ = W[:, -c:]
    if check:
        _check_feasible(None, B, Z, "Schur complement B ℳ⁻¹ Zᵀ", _kappa_gram(Bn @ W[:, :c], Zn @ WZ, Bn @ WZ))
    try:
        w = np.linalg.solve(Bn @ WZ, (h - B @ y0) / sB)
    except np.linalg.LinAlgError:
        raise InfeasibleDirections("Schur complement B ℳ⁻¹ Zᵀ is exactly singular") from None
    return Solution(y0 + WZ @ w, w / sZ)  # Zᵀ v = Znᵀ w
