r"""The spatial operators of a model at a state: ``ops = opalg.operators(model, q, qd)``.

Notation (docs/REFERENCE.md §2; body coordinates, so ``φ(℘k,k) = (^kX_℘)^*``):

========== ============ ==================================================
attribute  size         meaning
========== ============ ==================================================
E_phi      6n x 6n      ℰφ, block (℘k,k) = φ(℘k,k)
phi        6n x 6n      φ = (I − ℰφ)⁻¹, applied as an inward recursion
H          N x 6n       diag H(k), H(k) = S(k)*
M          6n x 6n      diag M(k), spatial inertia about O_k
R          6n x 6n      composite inertias, R = M + ℰφ R ℰφ*
P, P_plus  6n x 6n      articulated inertias P and P⁺ = τ̄P
D, Dinv    N x N        diag H(k)P(k)H*(k) and its inverse
G          6n x N       diag P H* D⁻¹
tau_bar    6n x 6n      diag I − G H
K          6n x N       ℰφ G, block (℘k,k) = φ(℘k,k) G(k)
E_psi      6n x 6n      ℰψ = ℰφ τ̄
psi        6n x 6n      ψ = (I − ℰψ)⁻¹
Omega      6n x 6n      Ω = ψ* H* D⁻¹ H ψ (= φ* H* ℳ⁻¹ H φ, F1)
Upsilon    6n x 6n      diag Υ(k) = Ω(k,k) from the F2 recursion
mass_matrix N x N       ℳ = H φ M φ* H*
L, L_inv   N x N        I + HφK and I − HψK (E6, E7)
mass_matrix_inv N x N   (I − HψK)* D⁻¹ (I − HψK) (E8)
V, a, b    (..., 6n)    body velocities, Coriolis accelerations (with −g at
                        the roots), gyroscopic forces — only if qd is given
========== ============ ==================================================

**Hybrid operators (G1).**  ``operators(model, q, passive=mask)`` runs the
articulated-body quantities with the passive joint map H_p (one boolean per
dof): then ``P, P_plus, D, Dinv, G, tau_bar, K, E_psi, psi, L, L_inv, Omega,
Upsilon`` are the hybrid P_h, D_h, G_h, τ̄_h, K_h, ψ_h …, N is replaced by N_p in
their joint-space sizes, and

=================== ======== =============================================
H_p, H_a            N_p x 6n the passive and active rows of H
mass_matrix_pp      N_p x N_p ℳ_pp = H_p φ M φ* H_p*
mass_matrix_pp_inv  N_p x N_p (I − H_pψ_hK_h)* D_h⁻¹ (I − H_pψ_hK_h)
=================== ======== =============================================

(without ``passive`` every dof is passive: H_p = H, ℳ_pp = ℳ).
"""

from __future__ import annotations

from functools import cached_property

import numpy as np

from opalg import _backend as bk
from opalg.algebra.operators import BlockDiagonal, EdgeOperator, Identity, SPO
from opalg.algorithms.aba import upsilon
from opalg.algorithms.riccati import Articulated, _riccati, check_passive, columns_of, split_axes
from opalg.algorithms.crba import composite_inertias
from opalg.model.kinematics import body_kinematics, check_state, overflow_guard
from opalg.model.multibody import Model


class DerivedOperators:
    """The operators that follow from ℰφ, H, H_p, M, K, ℰψ and the Riccati factors alone.

    Shared by :class:`SpatialOperators` and :class:`opalg.flex.FlexOperators`, whose nodes differ
    (6 × 6 blocks, or the enlarged d_k = m_k + 6 of a flexible body) but whose algebra does not:
    φ = (I − ℰφ)⁻¹, ψ = (I − ℰψ)⁻¹, ℳ = HφMφ*H*, L = I + H_pφK (E6), L⁻¹ = I − H_pψK (E7),
    ℳ_pp⁻¹ = L⁻* D⁻¹ L⁻¹ (E8, G1).  A subclass provides ``model``, ``passive``, ``E_phi``,
    ``E_psi``, ``H``, ``H_p``, ``M``, ``K``, ``kin`` (with ``a``, ``b``), the block sizes
    ``_nodes`` (spatial side) and ``_joint`` (joint side), ``_factor(name)`` (the blocks of the
    Riccati factor ``name``: "P", "P_plus", "D", "Dinv", "G", "tau_bar") and ``_stack``.

    Examples
    --------
    >>> import numpy as np, opalg
    >>> m = opalg.random_model(4, "chain", seed=1)
    >>> ops = opalg.operators(m, np.zeros(m.ndof))
    >>> isinstance(ops, DerivedOperators)
    True
    >>> bool(np.allclose((ops.L @ ops.L_inv).dense(), np.eye(m.ndof)))     # E7
    True
    """

    _PHI = "phi"                                   # display name of φ
    _CALL = "operators(model, q)"                  # how to build the operators without passive

    @cached_property
    def phi(self) -> SPO:
        """φ = (I − ℰφ)⁻¹, applied as an inward recursion."""
        return SPO(self.E_phi, self._PHI)

    @cached_property
    def mass_matrix(self):
        """ℳ = HφMφ*H*."""
        return self.H @ self.phi @ self.M @ self.phi.T @ self.H.T

    @cached_property
    def P(self) -> BlockDiagonal:
        return BlockDiagonal(self._factor("P"), "P")

    @cached_property
    def P_plus(self) -> BlockDiagonal:
        return BlockDiagonal(self._factor("P_plus"), "P+")

    @cached_property
    def D(self) -> BlockDiagonal:
        return BlockDiagonal(self._factor("D"), "D")

    @cached_property
    def Dinv(self) -> BlockDiagonal:
        return BlockDiagonal(self._factor("Dinv"), "D^-1")

    @cached_property
    def G(self) -> BlockDiagonal:
        return BlockDiagonal(self._factor("G"), "G")

    @cached_property
    def tau_bar(self) -> BlockDiagonal:
        return BlockDiagonal(self._factor("tau_bar"), "tau_bar")

    @cached_property
    def psi(self) -> SPO:
        """ψ = (I − ℰψ)⁻¹."""
        return SPO(self.E_psi, "psi")

    @cached_property
    def L(self):
        """I + H_pφK (E6)."""
        return self.I_joint + self.H_p @ self.phi @ self.K

    @cached_property
    def L_inv(self):
        """I − H_pψK = (I + H_pφK)⁻¹ (E7)."""
        return self.I_joint - self.H_p @ self.psi @ self.K

    @cached_property
    def mass_matrix_pp(self):
        """ℳ_pp = H_pφMφ*H_p* (ℳ without a ``passive`` mask)."""
        return self.H_p @ self.phi @ self.M @ self.phi.T @ self.H_p.T

    @cached_property
    def mass_matrix_pp_inv(self):
        """(I − H_pψK)* D⁻¹ (I − H_pψK) (E8; G1 with a ``passive`` mask)."""
        return self.L_inv.T @ self.Dinv @ self.L_inv

    @property
    def mass_matrix_inv(self):
        """ℳ⁻¹ = (I − HψK)* D⁻¹ (I − HψK) (E8); an AttributeError for hybrid operators."""
        if self.passive is not None:
            raise AttributeError("these operators were built with passive=...: their factors invert "
                                 f"ℳ_pp (mass_matrix_pp_inv); for ℳ⁻¹ use {self._CALL} without passive")
        return self.mass_matrix_pp_inv

    # -- identities and state vectors ----------------------------------------
    @cached_property
    def I_spatial(self) -> Identity:
        return Identity(self._nodes, "I")

    @cached_property
    def I_joint(self) -> Identity:
        return Identity(self._joint, "I")

    @property
    def a(self) -> np.ndarray:
        return self._stack(self.kin.a)

    @property
    def b(self) -> np.ndarray:
        return self._stack(self.kin.b)

    def __repr__(self) -> str:
        return f"<{type(self).__name__} of {self.model!r}>"


class SpatialOperators(DerivedOperators):
    """Operators of ``model`` at configuration ``q`` (and rates ``qd``); see the module table.

    Everything is computed lazily: asking for ``ops.mass_matrix`` never runs the
    Riccati recursion, which matters for sympy entries.
    """

    def __init__(self, model: Model, q, qd=None, gravity: bool = True, passive=None):
        self.model = model
        self.passive = None if passive is None else check_passive(model, passive)
        self.q = check_state(model, q, "q")
        self.qd = None if qd is None else check_state(model, qd, "qd")
        self.kin = body_kinematics(model, self.q, self.qd, gravity)
        self._nodes = (6,) * model.n
        # The joint space of the articulated quantities: the passive dofs (all without a mask).
        self._axes = split_axes(model.joint_sizes, self.passive)
        self._joint = tuple(len(ax) for ax in self._axes[0])

    def _factor(self, name: str):
        return getattr(self.art, name)

    def _edge(self, blocks, cols, name):
        m = self.model
        return EdgeOperator(blocks, m.parents, m.order, self._nodes, cols, name)

    # -- Newton–Euler -----------------------------------------------------
    @cached_property
    def E_phi(self) -> EdgeOperator:
        return self._edge([bk.mT(X) for X in self.kin.Xup], self._nodes, "E_phi")

    @cached_property
    def H(self) -> BlockDiagonal:
        return BlockDiagonal([bk.mT(S) for S in self.kin.S], "H")

    @cached_property
    def H_p(self) -> BlockDiagonal:
        """The passive rows of H (all of H without a ``passive`` mask)."""
        if self.passive is None:
            return self.H
        return BlockDiagonal([bk.mT(S) for S in columns_of(self.kin.S, self._axes[0])], "H_p")

    @cached_property
    def H_a(self) -> BlockDiagonal:
        """The active rows of H (none without a ``passive`` mask)."""
        return BlockDiagonal([bk.mT(S) for S in columns_of(self.kin.S, self._axes[1])], "H_a")

    @cached_property
    def M(self) -> BlockDiagonal:
        return BlockDiagonal(list(self.model.I_spatial), "M")

    @cached_property
    def R(self) -> BlockDiagonal:
        return BlockDiagonal(composite_inertias(self.model, self.q, self.kin)[0], "R")

    # -- articulated body / innovations --------------------------------------
    @cached_property
    def art(self) -> Articulated:
        return overflow_guard("operators(...).art",
                              lambda: _riccati(self.model, self.q, self.kin, self.passive),
                              {"q": self.q, "qd": self.qd}, lambda art: art.P + art.P_plus)

    @cached_property
    def K(self) -> EdgeOperator:
        return self._edge([bk.mT(X) @ G for X, G in zip(self.kin.Xup, self.art.G)], self._joint, "K")

    @cached_property
    def E_psi(self) -> EdgeOperator:
        return self._edge([bk.mT(X) @ t for X, t in zip(self.kin.Xup, self.art.tau_bar)],
                          self._nodes, "E_psi")

    @cached_property
    def Omega(self):
        return self.psi.T @ self.H_p.T @ self.Dinv @ self.H_p @ self.psi

    @cached_property
    def Upsilon(self) -> BlockDiagonal:
        return BlockDiagonal(upsilon(self.model, self.q, self.art), "Upsilon")

    def _stack(self, parts):
        if parts is None:
            raise AttributeError("velocity-dependent quantities need qd: operators(model, q, qd)")
        return np.concatenate(parts, -1)

    @property
    def V(self) -> np.ndarray:
        return self._stack(self.kin.V)


def operators(model: Model, q, qd=None, gravity: bool = True, passive=None) -> SpatialOperators:
    r"""The spatial operators of ``model`` at ``(q, qd)`` as composable objects.

    Parameters
    ----------
    model : Model
    q : array_like, shape (..., N)
    qd : array_like, shape (..., N), optional
        Needed only for ``V``, ``a``, ``b``.
    gravity : bool
        Fold the base acceleration −g into ``a`` of the roots (default True).
    passive : array_like of bool, shape (N,), optional
        Hybrid operators (G1): the articulated quantities of the joint map H_p of
        the dofs marked True (see the module docstring).

    Examples
    --------
    >>> import numpy as np, opalg
    >>> m = opalg.random_model(5, "tree", seed=0)
    >>> ops = opalg.operators(m, np.zeros(m.ndof))
    >>> I = np.eye(6 * m.n)
    >>> bool(np.allclose(ops.phi.dense(), np.linalg.inv(I - ops.E_phi.dense())))
    True
    >>> bool(np.allclose((ops.L @ ops.D @ ops.L.T).dense(), opalg.crba(m, np.zeros(m.ndof))))
    True
    >>> p = np.arange(m.ndof) % 3 == 0                     # a hybrid split, G1
    >>> h = opalg.operators(m, np.zeros(m.ndof), passive=p)
    >>> bool(np.allclose((h.L @ h.D @ h.L.T).dense(), opalg.crba(m, np.zeros(m.ndof))[np.ix_(p, p)]))
    True
    """
    return SpatialOperators(model, q, qd, gravity, passive)
