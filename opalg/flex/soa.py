r"""The spatial operators of a flexible model on its enlarged nodes (docs/REFERENCE.md K7).

``ops = opalg.flex.operators(fm, x, v)``: the operators of :mod:`opalg.algebra.soa` with node k of
size d_k = m_k + 6 (state 𝒱(k) = [η̇_k; V_k]) and m_k + n_k generalized speeds:

=============== =================== ==================================================
attribute       size                meaning
=============== =================== ==================================================
E_phi           Σd × Σd             ℰΦ, block (℘k,k) = Φ(℘k,k) (d_℘ × d_k, rectangular)
phi             Σd × Σd             Φ = (I − ℰΦ)⁻¹, applied as an inward recursion
H               N × Σd              diag ℋ(k) = diag(I_{m_k}, H(k))
M               Σd × Σd             diag 𝓜(k) (K3)
R               Σd × Σd             composite inertias R = 𝓜 + ℰΦ R ℰΦ*
P, P_plus       Σd × Σd             articulated inertias P and P⁺ = τ̄P
D, Dinv         N × N               diag ℋPℋ* and its inverse
G, tau_bar      Σd × N, Σd × Σd     diag Pℋ*D⁻¹ and diag I − Gℋ
K               Σd × N              ℰΦG, block (℘k,k) = Φ(℘k,k)G(k)
E_psi, psi      Σd × Σd             ℰψ = ℰΦτ̄ and ψ = (I − ℰψ)⁻¹
mass_matrix     N × N               ℳ = ℋΦ𝓜Φ*ℋ*
L, L_inv        N × N               I + ℋΦK and I − ℋψK (E6, E7)
mass_matrix_inv N × N               (I − ℋψK)* D⁻¹ (I − ℋψK) (E8)
V, a, b         (Σd,)               𝒱(k) = [η̇_k; V_k], a(k), b(k) of K4 — only with v
=============== =================== ==================================================

With ``passive=mask`` (one boolean per entry of x) the articulated quantities use the
passive rows ℋ_p of ℋ (G1): ``P, D, G, tau_bar, K, psi, L, L_inv`` are the hybrid factors,
``mass_matrix_pp`` = ℋ_pΦ𝓜Φ*ℋ_p* and ``mass_matrix_pp_inv`` its inverse from them.  A mask
that makes the modal rows passive and the joint rows active is :func:`opalg.flex.hybrid`'s.
"""

from __future__ import annotations

from functools import cached_property

import numpy as np

from opalg.algebra.operators import BlockDiagonal, EdgeOperator
from opalg.algorithms.riccati import check_passive, split_axes
from opalg.algebra.soa import DerivedOperators
from opalg.flex.dynamics import _composite, _gain
from opalg.flex.kinematics import _eye, _zeros, flex_kinematics

__all__ = ["FlexOperators", "operators"]


class FlexOperators(DerivedOperators):
    """Operators of a :class:`~opalg.flex.FlexModel` at ``(x, v)``; see the module table.

    Everything is computed lazily, as in :class:`opalg.algebra.soa.SpatialOperators`; φ, ψ, ℳ, L, L⁻¹,
    ℳ⁻¹ and the Riccati factors come from :class:`opalg.algebra.soa.DerivedOperators`.
    """

    _PHI = "Phi"
    _CALL = "operators(fm, x)"

    def __init__(self, fm, x, v=None, gravity: bool = True, passive=None):
        self.model = fm
        self.passive = None if passive is None else check_passive(fm, passive)
        self.x = fm.check_state(x, "x")
        self.v = None if v is None else fm.check_state(v, "v")
        self.kin = flex_kinematics(fm, self.x, self.v, gravity)
        self._nodes = fm.sizes
        self._speeds = tuple(m + nk for m, nk in zip(fm.modes, fm.joint_sizes))
        self._axes = split_axes(self._speeds, self.passive)
        self._joint = tuple(len(ax) for ax in self._axes[0])

    def _edge(self, blocks, cols, name):
        fm = self.model
        blocks = [_zeros((self._nodes[k], cols[k]), self.kin.dtype) if b is None else b for k, b in enumerate(blocks)]
        return EdgeOperator(blocks, fm.parents, fm.order, self._nodes, cols, name)

    def _rows(self, axes, name):
        return BlockDiagonal([H.T[list(ax)] for H, ax in zip(self.kin.Hs, axes)], name)

    # -- Newton–Euler -----------------------------------------------------
    @cached_property
    def E_phi(self) -> EdgeOperator:
        return self._edge([None if Ps is None else Ps.T for Ps in self.kin.Phi_star], self._nodes, "E_Phi")

    @cached_property
    def H(self) -> BlockDiagonal:
        return BlockDiagonal([Hs.T for Hs in self.kin.Hs], "H")

    @cached_property
    def H_p(self) -> BlockDiagonal:
        """The passive rows of ℋ (all of ℋ without a ``passive`` mask)."""
        return self.H if self.passive is None else self._rows(self._axes[0], "H_p")

    @cached_property
    def H_a(self) -> BlockDiagonal:
        """The active rows of ℋ (none without a ``passive`` mask)."""
        return self._rows(self._axes[1], "H_a")

    @cached_property
    def M(self) -> BlockDiagonal:
        return BlockDiagonal(self.kin.Mcal, "M")

    @cached_property
    def R(self) -> BlockDiagonal:
        return BlockDiagonal(_composite(self.model, self.kin), "R")

    # -- articulated body / innovations --------------------------------------
    @cached_property
    def _riccati(self) -> dict:
        """P(k) = 𝓜(k) + Σ_c Φ(k,c)P⁺(c)Φ*(k,c), D = ℋ_pPℋ_p* (and D⁻¹), G = Pℋ_p*D⁻¹, τ̄ = I − Gℋ_p, P⁺ = τ̄P."""
        fm, kin = self.model, self.kin
        n = fm.n
        P = [Mk.copy() for Mk in kin.Mcal]
        Pp, D, G, tau = [None] * n, [None] * n, [None] * n, [None] * n
        Hp = self.H_p.blocks
        sym = kin.dtype is object          # sympy entries: D(k)⁻¹ by adjugate, no pivot test
        Dinv = [None] * n
        for k in reversed(fm.order):
            U = P[k] @ Hp[k].T
            D[k] = Hp[k] @ U
            G[k], Dinv[k] = _gain(fm, k, D[k], U, sym)
            tau[k] = _eye(self._nodes[k], kin.dtype) - G[k] @ Hp[k]
            Pp[k] = tau[k] @ P[k]
            if not sym:
                Pp[k] = (Pp[k] + Pp[k].T) / 2                             # symmetric by E11; keep it so
            p = fm.parents[k]
            if p >= 0:
                P[p] = P[p] + kin.Phi_star[k].T @ Pp[k] @ kin.Phi_star[k]
        if not sym:
            Dinv = [np.linalg.inv(d) if d.size else d for d in D]
        return {"P": P, "P_plus": Pp, "D": D, "Dinv": Dinv, "G": G, "tau_bar": tau}

    def _factor(self, name: str):
        return self._riccati[name]

    @cached_property
    def K(self) -> EdgeOperator:
        blocks = [None if Ps is None else Ps.T @ G for Ps, G in zip(self.kin.Phi_star, self._riccati["G"])]
        return self._edge(blocks, self._joint, "K")

    @cached_property
    def E_psi(self) -> EdgeOperator:
        blocks = [None if Ps is None else Ps.T @ t for Ps, t in zip(self.kin.Phi_star, self._riccati["tau_bar"])]
        return self._edge(blocks, self._nodes, "E_psi")

    def _stack(self, parts):
        if parts is None:
            raise AttributeError("velocity-dependent quantities need v: opalg.flex.operators(fm, x, v)")
        return np.concatenate(parts)

    @property
    def V(self) -> np.ndarray:
        fm = self.model
        return self._stack(None if self.kin.V is None else
                           [np.concatenate([self.v[fm.eta_slice[k]], self.kin.V[k]]) for k in range(fm.n)])


def operators(fm, x, v=None, gravity: bool = True, passive=None) -> FlexOperators:
    r"""The spatial operators of a flexible model on its enlarged nodes (docs/REFERENCE.md K7).

    .. math::
        ℳ = ℋΦ𝓜Φ^*ℋ^* = (I + ℋΦK)\,D\,(I + ℋΦK)^*,\qquad
        ℳ^{-1} = (I − ℋψK)^* D^{-1} (I − ℋψK)

    (E6, E8 with rectangular Φ blocks; with ``passive`` the hybrid G1 on ℋ_p).

    Parameters
    ----------
    fm : FlexModel
    x : array_like (ndof,)
    v : array_like (ndof,), optional
        Needed only for ``V``, ``a``, ``b``.
    gravity : bool
        Fold the base acceleration −g into ``a`` of the roots (default True).
    passive : array_like of bool (ndof,), optional
        Hybrid operators (G1): the articulated quantities of the rows of ℋ marked True.

    Returns
    -------
    FlexOperators

    Examples
    --------
    >>> import numpy as np
    >>> from opalg import flex
    >>> fm = flex.examples.two_link_arm(modes=2)
    >>> x = np.full(fm.ndof, 0.1)
    >>> ops = flex.operators(fm, x)
    >>> ops.E_phi.block(0, 1).shape                          # Φ(℘k, k): rectangular in general
    (8, 8)
    >>> bool(np.allclose((ops.L @ ops.D @ ops.L.T).dense(), flex.crba(fm, x)))
    True
    >>> bool(np.allclose(ops.mass_matrix_inv.dense() @ flex.crba(fm, x), np.eye(fm.ndof)))
    True
    """
    return FlexOperators(fm, x, v, gravity, passive)
