r"""Ider's constrained system in quasi-velocity coordinates y = ν (docs/REFERENCE.md J8).

Ider's formulation (:mod:`opalg.algorithms.constrained`) allows generalized speeds y with q̇ = T(q)y.
With y = ν, T = (I + HφK)^{-*} = L⁻* (J3), and the system's matrices become

.. math::
    M_y = T^*ℳT = L^{-1}ℳL^{-*} = D,\qquad B_y = B L^{-*},\qquad Z_y = Z L^{-*},

so the feasibility Schur complement is block-diagonal work,

.. math:: S_y = B_y D^{-1} Z_y^* = B L^{-*} D^{-1} L^{-1} Z^* = B ℳ^{-1} Z^* .

S, and the conditioning measure of :func:`opalg.algorithms.constrained.conditioning` (the principal
angles between B and Z in the M⁻¹ metric), are invariant under the change of speeds.
B_y* = L⁻¹B* = (I − HψK)B* (E7) is one inward innovations pass per row of B: the
innovations ε of the forces B* with a = b = 0.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from opalg.errors import StateError
from opalg.model.kinematics import body_kinematics, check_state
from opalg.model.multibody import Model
from opalg.algorithms.riccati import Articulated, articulated


@dataclass
class NuConstraints:
    """Result of :func:`schur_in_nu`.

    Attributes
    ----------
    B_y, Z_y : (c, N)
        B L⁻* and Z L⁻*: the constraint normals and force directions for the speeds ν.
    D : list of (n_k, n_k)
        The mass matrix in ν, block diagonal (M_y = D).
    S : (c, c)
        B_y D⁻¹ Z_y* (= B ℳ⁻¹ Z*).
    """

    B_y: np.ndarray
    Z_y: np.ndarray
    D: list
    S: np.ndarray

    def mass_matrix(self) -> np.ndarray:
        """M_y = D as a dense (N, N) block-diagonal matrix."""
        N = sum(d.shape[-1] for d in self.D)
        out, i = np.zeros((N, N)), 0
        for d in self.D:
            out[i:i + d.shape[-1], i:i + d.shape[-1]] = d
            i += d.shape[-1]
        return out


def innovations_of(model: Model, art: Articulated, F: np.ndarray) -> tuple[list, list]:
    """Per body the innovations ε(k) = F(k) − H(k)z(k) (n_k, r) of the generalized forces F (N, r)
    with a = b = 0 — the rows of (I − HψK)F = L⁻¹F (E7), by the inward pass of E9 — and D⁻¹(k)ε(k).

    (The per-axis innovations of the E11 pivots are those of D(k)'s own LDL* factor, not the
    block ε(k); they serve only to apply D⁻¹.)"""
    kin, zp, eps, Dinv_eps = art.kin, [None] * model.n, [None] * model.n, [None] * model.n
    for k in reversed(model.order):
        z = np.zeros((6, F.shape[-1]))
        for c in model.children[k]:
            z = z + kin.Xup[c].T @ zp[c]
        Fk = F[model.dof_slice[k], :]
        eps[k] = Fk - kin.S[k].T @ z
        zp[k], e = art.pivot_inward(k, Fk, z)
        Dinv_eps[k], _ = art.pivot_outward(k, e, np.zeros_like(z))
    return eps, Dinv_eps


def _rows(model: Model, X, name: str) -> np.ndarray:
    X = check_state(model, X, name)     # reads it (strings, ragged rows, nan refused), last axis N
    if X.ndim != 2 or X.dtype.kind != "f":
        raise StateError(f"{name} has shape {X.shape} and dtype {X.dtype}, expected real (c, {model.ndof}): "
                         "one row per constraint, one column per dof")
    return X


def schur_in_nu(model: Model, q, B, Z) -> NuConstraints:
    r"""Ider's B, Z and feasibility Schur complement in the speeds y = ν (J8).

    .. math:: B_y = BL^{-*},\quad Z_y = ZL^{-*},\quad M_y = D,\quad S_y = B_y D^{-1} Z_y^* = Bℳ^{-1}Z^*

    with L = I + HφK; O(n) per row of B and Z (inward passes), no dense ℳ.

    Parameters
    ----------
    model : Model
    q : array_like, shape (N,)
    B, Z : array_like, shape (c, N)
        Constraint normals and applied-force directions (Ider eq. 14; see
        :mod:`opalg.algorithms.constrained`).

    Returns
    -------
    NuConstraints

    Examples
    --------
    >>> import numpy as np, opalg
    >>> from opalg import quasi
    >>> m = opalg.random_model(5, "tree", seed=0)
    >>> rng = np.random.default_rng(0)
    >>> q, B, Z = rng.normal(size=m.ndof), rng.normal(size=(2, m.ndof)), rng.normal(size=(2, m.ndof))
    >>> r = quasi.schur_in_nu(m, q, B, Z)
    >>> bool(np.allclose(r.S, B @ np.linalg.solve(opalg.crba(m, q), Z.T)))
    True
    """
    q = check_state(model, q, "q")
    if q.shape != (model.ndof,) or q.dtype.kind != "f":
        raise StateError(f"schur_in_nu: q must be a single real state of shape ({model.ndof},)")
    B, Z = _rows(model, B, "B"), _rows(model, Z, "Z")
    art = articulated(model, q, body_kinematics(model, q, validate=False))
    eB, _ = innovations_of(model, art, B.T)
    eZ, DinvZ = innovations_of(model, art, Z.T)
    S = sum(eB[k].T @ DinvZ[k] for k in range(model.n))
    return NuConstraints(np.concatenate(eB, 0).T, np.concatenate(eZ, 0).T, list(art.D), S)
