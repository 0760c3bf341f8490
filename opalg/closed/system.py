r"""Closed-chain dynamics on a spanning tree plus loop closures (docs/REFERENCE.md H2–H5).

The tree's equations with the closures' reactions, and the closures' acceleration constraint:

.. math::
    ℳ\ddot θ + C = T + Σ_k J_k^* f_{ext}(k) − G_c^* λ,\qquad G_c \ddot θ = U,

solved by the tree operators on one Riccati factorization: the free ABA θ̈_f = ℳ⁻¹(T − C),
λ = Λ_c(G_cθ̈_f − U) and θ̈ = θ̈_f − ℳ⁻¹G_c*λ.  :meth:`ClosedSystem.forward` gets θ̈_f and the
columns ℳ⁻¹G_c* from one pair of passes on 1 + m right-hand sides (:mod:`.passes`), and
Λ_c⁻¹ = G_c(ℳ⁻¹G_c*) from the closure frames' accelerations of those columns;
:meth:`ClosedSystem.compliance` is the Ω route Λ_c⁻¹ = Π_c T_c (ℬ*Ωℬ) T_c* Π_c* (F3, F5), which
the tests hold the fast route against.
"""

from __future__ import annotations

import warnings
from typing import Sequence

import numpy as np

from opalg import _backend as bk
from opalg.model._checks import refuse_free
from opalg.algorithms.crba import crba
from opalg.algorithms.rnea import bias
from opalg.errors import StateError
from opalg.model.kinematics import body_kinematics, check_state, overflow_guard
from opalg.model.multibody import Model
from opalg.algorithms.operational import omega_frames
from opalg.algorithms.riccati import articulated
from opalg.algorithms.kkt import kkt_solve
from opalg.closed import geometry as geo
from opalg.closed.assembly import assemble, project
from opalg.closed.closure import LoopClosure
from opalg.closed.passes import forward_columns
from opalg.closed.solve import RCOND, solve_compliance

class RankDeficientWarning(UserWarning):
    """The closure rows are dependent at this state (Λ_c⁻¹ singular); λ is the least-norm solution."""


class ForwardResult(tuple):
    """``(qdd, lam)`` — unpacks like a pair — with the numerical rank of Λ_c⁻¹ as ``.rank``
    (an int array over the batch) and the number of rows as ``.m``."""

    def __new__(cls, qdd, lam, rank, m):
        self = super().__new__(cls, (qdd, lam))
        self.qdd, self.lam, self.rank, self.m = qdd, lam, rank, m
        return self


class ClosedSystem:
    r"""A tree model plus loop closures: G_c, U, Λ_c⁻¹, forward dynamics and the KKT oracle (H2–H6).

    Sign convention: ℳθ̈ + C = T + Σ J_k* f_ext(k) − G_c*λ and G_cθ̈ = U, so λ is the force the
    closure applies to frame e2's side as seen from e1 (a convention; G_c*λ is not).

    Parameters
    ----------
    model : Model
    closures : sequence of LoopClosure
    rcond : float
        Relative cut-off for the rank of Λ_c⁻¹ (see :func:`solve_compliance`).

    Examples
    --------
    >>> import numpy as np
    >>> from opalg.closed import four_bar
    >>> sys, q = four_bar()                      # a closed configuration
    >>> qdd, lam = sys.forward(q, np.zeros(3), np.zeros(3))
    >>> qdd_k, lam_k = sys.kkt(q, np.zeros(3), np.zeros(3))
    >>> bool(np.allclose(qdd, qdd_k)), bool(np.allclose(sys.jacobian(q) @ qdd, 0))
    (True, True)
    """

    def __init__(self, model: Model, closures: Sequence[LoopClosure], rcond: float = RCOND):
        if not isinstance(model, Model):
            raise StateError(f"ClosedSystem: model must be an opalg.Model, got {type(model).__name__}")
        refuse_free(model, "ClosedSystem", "its assembly and simulate advance q by q + θ̇ dt; "
                    "for a floating base without loops use opalg.floating")
        if isinstance(closures, LoopClosure):
            closures = [closures]
        closures = list(closures)
        if not closures:
            raise StateError("ClosedSystem: at least one LoopClosure is needed (without any, use opalg.aba)")
        for i, c in enumerate(closures):
            if not isinstance(c, LoopClosure):
                raise StateError(f"ClosedSystem: closure {i} is a {type(c).__name__}, not a LoopClosure")
            c.check(model, self._label(c, i))
        if not (isinstance(rcond, (float, int)) and 0 <= rcond < 1):
            raise StateError(f"ClosedSystem: rcond must be a number in [0, 1), got {rcond!r}")
        self.model, self.closures, self.rcond = model, closures, float(rcond)
        sizes = [c.m for c in closures]
        offs = np.concatenate([[0], np.cumsum(sizes)]).astype(int)
        self.row_slice = tuple(slice(int(offs[i]), int(offs[i + 1])) for i in range(len(closures)))
        self.m = int(offs[-1])

    @staticmethod
    def _label(c: LoopClosure, i: int) -> str:
        return f"closure {i}" + (f" ({c.name})" if c.name else "")

    def __repr__(self) -> str:
        return f"<ClosedSystem: {self.model.n} bodies, N={self.model.ndof}, {len(self.closures)} closures, m={self.m} rows>"

    # -- kinematics ---------------------------------------------------------------
    def _kin(self, q, qd=None, gravity: bool = False):
        q = check_state(self.model, q, "q")
        qd = None if qd is None else check_state(self.model, qd, "qd")
        kin = body_kinematics(self.model, q, qd, gravity, validate=False)
        return q, qd, kin, geo.closure_frames(self.model, kin, self.closures)

    def jacobian(self, q) -> np.ndarray:
        r"""Constraint Jacobian G_c = Π_c [J_e1 − X12 J_e2] (H2), shape (..., m, N).

        X12 = ^{e1}X_{e2}(q); J_e = :func:`opalg.frame_jacobian` of each frame (0 for the ground).

        Examples
        --------
        >>> from opalg.closed import four_bar
        >>> sys, q = four_bar()
        >>> sys.jacobian(q).shape
        (2, 3)
        """
        def run():
            _, _, kin, fr = self._kin(q)
            return geo.constraint_jacobian(self.model, kin, self.closures, fr)
        return overflow_guard("ClosedSystem.jacobian", run, {})

    def drift(self, q, qd) -> np.ndarray:
        r"""U = −Ġ_c θ̇ = −Π_c[α⁰_e1 − X12 α⁰_e2 + crm(V_rel) X12 V_e2] (H3), shape (..., m).

        α⁰ are the frames' body-frame accelerations at θ̈ = 0 with gravity off; the crm(V_rel)
        term (from d/dt X12 = −crm(V_rel) X12) is nonzero when the closure leaves directions free.

        Examples
        --------
        >>> import numpy as np
        >>> from opalg.closed import four_bar
        >>> sys, q = four_bar()
        >>> qd = np.linalg.svd(sys.jacobian(q))[2][-1]       # a velocity that keeps the loop closed
        >>> sys.drift(q, qd).shape
        (2,)
        """
        def run():
            _, _, kin, fr = self._kin(q, qd)
            return geo.drift(self.model, kin, self.closures, fr)
        return overflow_guard("ClosedSystem.drift", run, {})

    def constraint_error(self, q) -> np.ndarray:
        r"""Position error e(q) of every closure in its rows, stacked (..., m) (H6).

        Per closure e = Π_c [log(R₂ᵀR₁)^∨ ; R₁ᵀ(p₁ − p₂)] (revolute: b_j·((R₁ᵀR₂a) × a) for the
        two angular rows), so that ė = G_c θ̇ on the closed manifold.

        Examples
        --------
        >>> import numpy as np
        >>> from opalg.closed import four_bar
        >>> sys, q = four_bar()
        >>> bool(np.abs(sys.constraint_error(q)).max() < 1e-12)
        True
        """
        _, _, _, fr = self._kin(q)
        return geo.constraint_error(self.closures, fr)

    # -- compliance and dynamics -----------------------------------------------------
    def _compliance(self, art, fr) -> np.ndarray:
        r"""Π_c T_c (ℬ*Ωℬ) T_c* Π_c* from an existing factorization."""
        specs, where = [], []
        for c in self.closures:
            where.append(len(specs))
            specs.append((c.body1, c.X1))
            if not c.ground:
                specs.append((c.body2, c.X2))
        L = omega_frames(self.model, art, specs)
        T = bk.zeros(art.kin.batch + (self.m, 6 * len(specs)), L)
        for c, X12, j, rs in zip(self.closures, fr.X12, where, self.row_slice):
            T[..., rs, 6 * j:6 * j + 6] = c.Pi
            if not c.ground:
                T[..., rs, 6 * j + 6:6 * j + 12] = -(c.Pi @ X12)
        return T @ L @ bk.mT(T)

    def compliance(self, q) -> np.ndarray:
        r"""Λ_c⁻¹ = G_cℳ⁻¹G_c* = Π_c T_c (ℬ*Ωℬ) T_c* Π_c*, T_c = [I, −X12] (H4), shape (..., m, m).

        ℬ*Ωℬ of the closure frames comes from the Υ recursion with Ω(i, j) through the nearest
        common ancestor i ∧ j (F3, F5): no dense ℳ is formed.

        Examples
        --------
        >>> import numpy as np, opalg
        >>> from opalg.closed import four_bar
        >>> sys, q = four_bar()
        >>> G = sys.jacobian(q)
        >>> bool(np.allclose(sys.compliance(q), G @ np.linalg.solve(opalg.crba(sys.model, q), G.T)))
        True
        """
        def run():
            qq, _, kin, fr = self._kin(q)
            return self._compliance(articulated(self.model, qq, kin), fr)
        return overflow_guard("ClosedSystem.compliance", run, {})

    def forward(self, q, qd, tau, f_ext=None, baumgarte=None) -> ForwardResult:
        r"""Closed-chain forward dynamics (H5): ``(qdd, lam)`` with ``.rank``.

        .. math::
            \ddot θ_f = ℳ^{-1}(T + Σ J^*f_{ext} − C),\quad λ = Λ_c (G_c\ddot θ_f − U),\quad
            \ddot θ = \ddot θ_f − ℳ^{-1} G_c^* λ,

        on one Riccati factorization, by one inward and one outward pass (E9) on 1 + m columns
        at once (:func:`opalg.closed.passes.forward_columns`): the free ABA, and the m unit
        closure forces entering as body forces at the two frames, which give ℳ⁻¹G_c*.  The
        frames' accelerations of those columns give G_cθ̈_f − U (H3) and Λ_c⁻¹ = G_c(ℳ⁻¹G_c*)
        (H4; the Ω route of :meth:`compliance` is its cross-check), and the correction is the
        product (ℳ⁻¹G_c*)λ — no G_c, no dense ℳ and no third pass.  With
        ``baumgarte=(α, β)`` the constraint is G_cθ̈ = U − 2αG_cθ̇ − β²e(q) (H6).

        λ by a Cholesky factor of Λ_c⁻¹ where it certifies full rank, the eigen-decomposition
        otherwise.  Dependent rows: λ is the least-norm solution (:func:`solve_compliance`), a
        :class:`RankDeficientWarning` names the rank and the closures involved, and ``.rank``
        holds it per state; G_c*λ and θ̈ stay right.

        Parameters
        ----------
        q, qd, tau : array_like (..., N)
        f_ext : array_like (..., n, 6), optional
            As for :func:`opalg.aba` (C9).
        baumgarte : (float, float), optional

        Examples
        --------
        >>> import numpy as np
        >>> from opalg.closed import four_bar
        >>> sys, q = four_bar()
        >>> res = sys.forward(np.stack([q, q]), np.zeros(3), np.ones(3))   # batched over states
        >>> res.qdd.shape, res.lam.shape, res.rank.tolist()
        ((2, 3), (2, 2), [2, 2])
        """
        stab = _check_baumgarte(baumgarte)
        qdd, lam, rank = forward_columns(self.model, q, qd, tau, f_ext=f_ext, system=self, stab=stab)
        if np.any(rank < self.m):
            self._warn_rank(q, rank)
        return ForwardResult(qdd, lam, rank, self.m)

    def _warn_rank(self, q, rank) -> None:
        """A RankDeficientWarning naming the rank and the closures whose rows are dependent."""
        rank = np.asarray(rank)
        idx = tuple(int(i) for i in np.argwhere(rank < self.m)[0]) if rank.ndim else ()
        qa = np.broadcast_to(np.asarray(q), rank.shape + (self.model.ndof,))[idx]
        w, V = np.linalg.eigh(self.compliance(qa))
        null = V[:, w <= self.rcond * max(w[-1], np.finfo(float).tiny)]
        involved = [self._label(c, i) for i, (c, rs) in enumerate(zip(self.closures, self.row_slice))
                    if np.abs(null[rs]).max(initial=0) > 1e-8]
        where = f" at batch index {idx}" if idx else ""
        warnings.warn(RankDeficientWarning(
            f"closure rows are dependent{where}: Λ_c⁻¹ ({self.m}x{self.m}) has numerical rank "
            f"{int(rank[idx])} (rcond {self.rcond:g}); dependent rows in {', '.join(involved)}; "
            "λ is the least-norm solution (G_c*λ and θ̈ are unaffected)"), stacklevel=3)

    def kkt(self, q, qd, tau, f_ext=None) -> tuple[np.ndarray, np.ndarray]:
        r"""The dense oracle: solve [[ℳ, G_c*], [G_c, 0]] [θ̈; λ] = [T + ΣJ*f_ext − C; U] (H5).

        ℳ from :func:`opalg.crba`, C from :func:`opalg.bias`, the dense solve
        :func:`opalg.algorithms.kkt.kkt_solve` (an LU solve per state; when G_c has dependent
        rows, the least-squares minimum-norm solution).

        Examples
        --------
        >>> import numpy as np
        >>> from opalg.closed import four_bar
        >>> sys, q = four_bar()
        >>> qdd, lam = sys.kkt(q, np.zeros(3), np.zeros(3))
        >>> qdd.shape, lam.shape
        ((3,), (2,))
        """
        qq, qqd, kin, fr = self._kin(q, qd)
        tau = check_state(self.model, tau, "tau")
        G = geo.constraint_jacobian(self.model, kin, self.closures, fr)
        U = geo.drift(self.model, kin, self.closures, fr)
        M = crba(self.model, qq)
        C = bias(self.model, qq, qqd, f_ext=f_ext)
        return kkt_solve(M, G, tau - C, U, singular="lstsq", rcond=self.rcond)

    # -- assembly and projection (opalg.closed.assembly) -----------------------------
    def assemble(self, q0, tol: float = 1e-12, max_iter: int = 50):
        """Newton on e(q) = 0 from q0 (see :func:`opalg.closed.assembly.assemble`)."""
        return assemble(self, q0, tol, max_iter)

    def project(self, q, qd, metric: str = "mass") -> np.ndarray:
        """Closest velocity with G_cθ̇ = 0 (see :func:`opalg.closed.assembly.project`)."""
        return project(self, q, qd, metric)


def _check_baumgarte(baumgarte):
    if baumgarte is None:
        return None
    try:
        a, b = (float(x) for x in baumgarte)
    except (TypeError, ValueError):
        raise StateError(f"baumgarte must be a pair (alpha, beta) of numbers, got {baumgarte!r}") from None
    if not (np.isfinite(a) and np.isfinite(b) and a >= 0 and b >= 0):
        raise StateError(f"baumgarte (alpha, beta) must be finite and >= 0, got {baumgarte!r}")
    return a, b
