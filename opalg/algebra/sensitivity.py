r"""The derivatives of the operators along one dof, as operator objects (docs/REFERENCE.md E13, E16, E19).

``d = sensitivities(model, q, j)`` holds ∂X/∂θ_j for the operators of ``opalg.operators(model, q)``:

========== =====================================================================
E_phi      ∂ℰφ = ℰφ 𝒞, 𝒞 = crf(H*_i(k)) in block (k, k) of the dof's body k (E13)
H          ∂H: rows −(S_i × S_l)* for the earlier axes l < i of a joint in sequence
phi        ∂φ = φ ∂ℰφ φ
mass_matrix ∂ℳ = ∂H φMφ*H* + H ∂φ Mφ*H* + (·)* (E16)
P, D, G    ∂P, ∂D, ∂G of the Riccati sweep (E18, E19)
K          ∂K = ∂ℰφ G + ℰφ ∂G
L          ∂(I + HφK) = ∂H φK + H ∂φ K + Hφ ∂K;  ∂ℳ = ∂L D L* + L ∂D L* + L D ∂L* (E19)
========== =====================================================================

Each is an :class:`~opalg.algebra.operators.Operator`: ``.dense()``, ``@``, ``.T``.  Free joints:
tangent-space derivative (K8).
"""

from __future__ import annotations

from functools import cached_property

from opalg import _backend as bk
from opalg.algebra.operators import BlockDiagonal, EdgeOperator
from opalg.algebra.soa import SpatialOperators
from opalg.algorithms.derivatives_riccati import articulated_derivatives, subspace_derivative
from opalg.errors import StateError
from opalg.model.multibody import Model
from opalg.spatial.vectors import crf


class Sensitivities:
    """The operators of :mod:`opalg.algebra.soa` differentiated along dof ``j`` (module table).

    Examples
    --------
    >>> import numpy as np, opalg
    >>> from opalg.algebra.sensitivity import Sensitivities
    >>> m = opalg.random_model(4, "tree", seed=1)
    >>> q, h = np.random.default_rng(0).normal(size=m.ndof), 1e-30
    >>> d = Sensitivities(m, q, 2)
    >>> ref = opalg.crba(m, q + 1j * h * np.eye(m.ndof)[2]).imag / h
    >>> bool(np.allclose(d.mass_matrix.dense(), ref)), bool(np.allclose(d.mass_matrix_from_factors.dense(), ref))
    (True, True)
    """

    def __init__(self, model: Model, q, j: int):
        if not isinstance(j, int) or not 0 <= j < model.ndof:
            raise StateError(f"j must be a dof index in 0..{model.ndof - 1}, got {j!r}")
        self.model, self.j = model, j
        self.ops = SpatialOperators(model, q)
        self.k = next(k for k in range(model.n) if model.dof_slice[k].start <= j < model.dof_slice[k].stop)
        self.i = j - model.dof_slice[self.k].start

    def _zero_like(self, A):
        return bk.zeros(A.shape, A)

    @cached_property
    def E_phi(self) -> EdgeOperator:
        kin, m = self.ops.kin, self.model
        blocks = [self._zero_like(bk.mT(X)) for X in kin.Xup]
        S_i = kin.S[self.k][..., :, self.i]
        blocks[self.k] = bk.mT(kin.Xup[self.k]) @ crf(S_i)
        return EdgeOperator(blocks, m.parents, m.order, (6,) * m.n, (6,) * m.n, "dE_phi")

    @cached_property
    def H(self) -> BlockDiagonal:
        kin = self.ops.kin
        blocks = [self._zero_like(bk.mT(S)) for S in kin.S]
        dS = subspace_derivative(self.model.joints[self.k], kin.S[self.k])
        if dS is not None:
            blocks[self.k] = bk.mT(dS[..., self.i, :, :])
        return BlockDiagonal(blocks, "dH")

    @cached_property
    def phi(self):
        return self.ops.phi @ self.E_phi @ self.ops.phi

    @cached_property
    def mass_matrix(self):
        o = self.ops
        half = self.H @ o.phi @ o.M @ o.phi.T @ o.H.T + o.H @ self.phi @ o.M @ o.phi.T @ o.H.T
        return half + half.T

    @cached_property
    def _riccati(self):
        return articulated_derivatives(self.model, self.ops.q)

    def _block(self, name: str) -> BlockDiagonal:
        return BlockDiagonal([B[..., self.j, :, :] for B in getattr(self._riccati, name)], "d" + name)

    @cached_property
    def P(self) -> BlockDiagonal:
        return self._block("dP")

    @cached_property
    def D(self) -> BlockDiagonal:
        return self._block("dD")

    @cached_property
    def G(self) -> BlockDiagonal:
        return self._block("dG")

    @cached_property
    def K(self):
        return self.E_phi @ self.ops.G + self.ops.E_phi @ self.G

    @cached_property
    def L(self):
        o = self.ops
        return self.H @ o.phi @ o.K + o.H @ self.phi @ o.K + o.H @ o.phi @ self.K

    @cached_property
    def mass_matrix_from_factors(self):
        """∂ℳ = ∂L D L* + L ∂D L* + L D ∂L* (E19): the derivative read off the factorization."""
        o = self.ops
        half = self.L @ o.D @ o.L.T
        return half + half.T + o.L @ self.D @ o.L.T


def sensitivities(model: Model, q, j: int) -> Sensitivities:
    """:class:`Sensitivities` of ``model`` at ``q`` along dof ``j`` (E13, E16, E19).

    Examples
    --------
    >>> import numpy as np, opalg
    >>> from opalg.algebra.sensitivity import sensitivities
    >>> m = opalg.random_model(3, seed=0)
    >>> sensitivities(m, np.zeros(m.ndof), 0).phi.dense().shape == (6 * m.n, 6 * m.n)
    True
    """
    return Sensitivities(model, q, j)
