r"""The articulated-body Riccati recursion, with exact pivots for every joint kind.

docs/REFERENCE.md E1–E3, E11, E12.  Inward over the tree,

.. math::
    P(k) = M(k) + Σ_{c∈C(k)} φ(k,c) P^+(c) φ^*(k,c),\qquad
    D = H P H^*,\ G = P H^* D^{-1},\ τ̄ = I − G H,\ P^+ = τ̄ P.

**How the pivot D(k) is handled (E11).**  A joint of n_k axes is eliminated one
axis at a time, tip-most axis first, inside body k's frame: with S = H*(k) =
[S_1 … S_{n_k}] and P^{(n_k)} = P(k),

.. math::
    U_i = P^{(i)} S_i,\quad d_i = S_i^* U_i,\quad P^{(i-1)} = P^{(i)} − U_i U_i^* / d_i,
    \qquad P^+(k) = P^{(0)}.

This is the block update P⁺ = P − P S D⁻¹ S* P computed as a symmetric rank-one
downdate per axis (the quotient property of Schur complements), so that

* P⁺ stays symmetric to rounding — the block form P − G U*, which assumes P
  exactly symmetric, doubled P's antisymmetric part at every multi-axis joint;
* the d_i are the pivots of an LDL* factorization of D(k) (a symmetric
  factorization: no n_k×n_k inverse is ever formed);
* it is exactly the articulated-body algorithm of the same chain written with
  1-dof joints (massless intermediate frames), so a multi-axis joint near a
  gimbal lock is as accurate as handling its axes one at a time.

The passes of :mod:`opalg.algorithms.aba` apply D⁻¹ and G through the same factors.
The block quantities D, D⁻¹, G and τ̄ of the operator algebra are formed from
them only on request (:class:`Articulated` properties).

Each axis passes the scale-free singularity tests of :mod:`opalg.algorithms.pivots` (E12)
before its pivot is used.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import cached_property

import numpy as np

from opalg import _backend as bk
from opalg import opcount
from opalg.errors import StateError
from opalg.model import _validate
from opalg.model.kinematics import Kinematics, body_kinematics, check_state, overflow_guard
from opalg.model.multibody import Model
# The E12 tests; PIVOT_TOL stays importable from opalg.algorithms.riccati.
from opalg.algorithms.pivots import PIVOT_TOL, _check_axis, _mass_scale  # noqa: F401


@dataclass
class Articulated:
    """Per-body articulated quantities (lists indexed by body label).

    Attributes
    ----------
    P, P_plus : list of (..., 6, 6)
        Articulated inertia P(k) and post-hinge inertia P⁺(k) = τ̄(k)P(k).
    U, d : list of lists
        The E11 factors: ``U[k][i]`` (..., 6, 1) and ``d[k][i]`` (..., 1, 1) for
        axis i of body k (see the module docstring).
    kin : Kinematics
        The kinematics (transforms ``Xup``, subspaces ``S``) the recursion used.
    passive : ndarray of bool, shape (N,), or None
        Hybrid dynamics (G1): only the axes where ``passive`` is True were
        eliminated (joint map H_p); None means every axis (the ordinary ABA).
    axes : list of tuples
        ``axes[k]``: the local indices of body k's eliminated axes.

    The block quantities ``D``, ``Dinv``, ``G``, ``tau_bar`` are properties,
    formed from the factors on first use (forward dynamics never needs them).
    With ``passive`` they are the hybrid D_h, G_h, τ̄_h of the eliminated axes;
    a body with none has D_h(k) empty, G_h(k) = 0 and τ̄_h(k) = I (pitfall 10).
    """

    P: list
    P_plus: list
    U: list
    d: list
    kin: Kinematics
    passive: np.ndarray | None
    axes: list

    @cached_property
    def S(self) -> list:
        """Per body, the (..., 6, n_pk) columns of the eliminated axes (H_p*(k); all of H* without ``passive``)."""
        return columns_of(self.kin.S, self.axes)

    @cached_property
    def rows(self) -> tuple[list, list]:
        """Per body, the slices of its eliminated (passive) and of its kept (active) dofs in the
        vectors T_p (..., N_p) and θ̈_a (..., N_a) of :func:`opalg.hybrid` (each kind, taken in
        the model's dof order, is contiguous per body)."""
        out, ends = ([], []), [0, 0]
        for S_, ax in zip(self.kin.S, self.axes):
            for j, n_j in enumerate((len(ax), S_.shape[-1] - len(ax))):
                out[j].append(slice(ends[j], ends[j] + n_j))
                ends[j] += n_j
        return out

    @cached_property
    def S_active(self) -> list:
        """Per body, the (..., 6, n_ak) columns of the axes that were not eliminated (H_a*(k))."""
        # the complement of the eliminated axes: no second split of the mask
        active = [tuple(i for i in range(S.shape[-1]) if i not in ax) for S, ax in zip(self.kin.S, self.axes)]
        return columns_of(self.kin.S, active)

    def columns(self, k: int) -> list:
        """The eliminated axes S_i of body k as (..., 6, 1) columns (views of H*(k))."""
        S = self.kin.S[k]
        return [S[..., :, i:i + 1] for i in self.axes[k]]

    def pivot_inward(self, k: int, T_k: np.ndarray, z: np.ndarray) -> tuple[np.ndarray, list]:
        r"""Eliminate the axes of body k from the inward pass (E11).

        With the axes processed tip-most first, ε_i = T_i − S_i^* z^{(i)} and
        z^{(i−1)} = z^{(i)} + U_i ε_i / d_i; returns z⁺(k) = z^{(0)} and the ε_i.
        ``T_k`` (..., n_k, r) holds the forces on the eliminated axes (the passive
        ones in hybrid dynamics) and ``z`` is (..., 6, r).  Mathematically
        z⁺ = z + G(k)(T(k) − H(k)z).
        """
        S, eps = self.columns(k), [None] * len(self.U[k])
        for i in reversed(range(len(eps))):
            eps[i] = T_k[..., i:i + 1, :] - bk.mm(bk.mT(S[i]), z)
            z = z + bk.mm(self.U[k][i], bk.div(eps[i], self.d[k][i]))
        return z, eps

    def pivot_outward(self, k: int, eps: list, alpha: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        r"""The outward half: θ̈_i = (ε_i − U_i^* α^{(i−1)}) / d_i, α^{(i)} = α^{(i−1)} + S_i θ̈_i.

        Starting from α^{(0)} = α⁺(k) (..., 6, r); returns θ̈(k) (..., n_k, r) and
        α^{(n_k)} = α⁺(k) + H*(k)θ̈(k).  Mathematically θ̈(k) = D⁻¹ε − G*α⁺.
        """
        S, out = self.columns(k), []
        for i in range(len(eps)):
            qi = bk.div(eps[i] - bk.mm(bk.mT(self.U[k][i]), alpha), self.d[k][i])
            alpha = alpha + bk.mm(S[i], qi)
            out.append(qi)
        if not out:   # a body with no eliminated axis (hybrid): nothing to solve for
            return bk.zeros(alpha.shape[:-2] + (0, alpha.shape[-1]), alpha), alpha
        return (out[0] if len(out) == 1 else np.concatenate(out, -2)), alpha

    # -- block quantities of the operator algebra, on request -------------------
    def _unit_solve(self, k: int):
        """(D⁻¹(k), G(k)) from the factors: the pivot passes applied to the unit vectors."""
        nk = len(self.U[k])
        like = [self.P[k]]
        E = bk.eye(nk, *like) + bk.zeros(self.P[k].shape[:-2] + (nk, nk), *like)
        zp, eps = self.pivot_inward(k, E, bk.zeros(self.P[k].shape[:-2] + (6, nk), *like))
        Dinv, _ = self.pivot_outward(k, eps, bk.zeros(zp.shape, *like))
        return Dinv, zp

    @cached_property
    def _blocks(self):
        return [self._unit_solve(k) for k in range(len(self.P))]

    def block(self, k: int):
        """(D⁻¹(k), G(k)) of one body: from the full lists if they were formed, else for k alone
        (a caller that needs a few bodies of a large tree, e.g. Υ on the frames' ancestors)."""
        return self._blocks[k] if "_blocks" in self.__dict__ else self._unit_solve(k)

    @cached_property
    def D(self) -> list:
        """D(k) = H(k) P(k) H*(k), symmetrized."""
        out = []
        for k, S in enumerate(self.S):
            Dk = bk.mm(bk.mm(bk.mT(S), self.P[k]), S)
            out.append((Dk + bk.mT(Dk)) / 2 if Dk.dtype != object else Dk)
        return out

    @cached_property
    def Dinv(self) -> list:
        """D⁻¹(k), from the LDL* pivots (never an n_k×n_k inverse)."""
        return [b[0] for b in self._blocks]

    @cached_property
    def G(self) -> list:
        """G(k) = P(k) H*(k) D⁻¹(k)."""
        return [b[1] for b in self._blocks]

    @cached_property
    def tau_bar(self) -> list:
        """τ̄(k) = I − G(k) H(k)."""
        return [bk.eye(6, G) - bk.mm(G, bk.mT(S)) for G, S in zip(self.G, self.S)]


def articulated(model: Model, q, kin: Kinematics | None = None, passive=None) -> Articulated:
    r"""The Riccati recursion (docs/REFERENCE.md E1, E11), inward:

    .. math::
        P(k) = M(k) + Σ_{c∈C(k)} φ(k,c) P^+(c) φ^*(k,c),\quad
        P^+(k) = P(k) − Σ_i U_i U_i^*/d_i \ \text{(one axis at a time)}.

    Operator form (E2): ``P = M + ℰψ P ℰψ*``.

    With ``passive`` (a boolean mask, one entry per dof) only the passive axes
    are eliminated: the hybrid recursion G1 of the joint map H_p, whose P_h, D_h,
    G_h factor ℳ_pp = H_p φ M φ* H_p* (a body with no passive axis passes P_h
    through unprojected, P_h⁺ = P_h).

    Raises
    ------
    ModelError
        If an axis moves no mass at this configuration (E12: D_ii within c·ε of
        its scale), e.g. a joint whose subtree is massless or a point mass on a
        revolute axis.
    SingularConfigurationError
        If the axes of a multi-axis joint are dependent at q (E12: an LDL* pivot
        within c·ε of its diagonal), e.g. an Euler-angle joint in gimbal lock.

    Examples
    --------
    >>> import numpy as np, opalg
    >>> m = opalg.random_model(4, seed=0)
    >>> art = opalg.articulated(m, np.zeros(m.ndof))
    >>> bool(np.allclose(art.tau_bar[0] @ art.tau_bar[0], art.tau_bar[0]))
    True
    >>> bool(np.allclose(art.P_plus[1], art.P_plus[1].T, rtol=0, atol=1e-15 * abs(art.P_plus[1]).max()))
    True
    """
    mask = None if passive is None else check_passive(model, passive)
    if kin is None:  # a public call: validated, and an overflow is reported as one
        q = check_state(model, q, "q")
        return overflow_guard("articulated", lambda: _riccati(
            model, q, body_kinematics(model, q, validate=False), mask), {"q": q}, lambda art: art.P + art.P_plus)
    return _riccati(model, q, kin, mask)


def check_passive(model: Model, passive) -> np.ndarray:
    """Validate a passive-dof mask: booleans, one per dof (shape (N,)); returns a bool array.

    Raises
    ------
    StateError
        Naming the argument, its shape or the first entry that is not a boolean.
    """
    if not hasattr(model, "ndof"):   # (a FlexModel is checked here too: it has ndof)
        _validate.model(model, "")
    if isinstance(passive, str) or (isinstance(passive, np.ndarray) and passive.dtype.kind in "US"):
        raise StateError(f"passive must be a boolean mask (one entry per dof), got the string {passive!r}")
    try:
        a = np.asarray(passive, dtype=object) if not isinstance(passive, np.ndarray) else passive
    except ValueError:   # ragged nesting
        raise StateError(f"passive must be a flat boolean mask of length {model.ndof}, got {passive!r}") from None
    if a.shape != (model.ndof,):
        raise StateError(f"passive has shape {np.shape(a)}, expected ({model.ndof},): one boolean per dof "
                         f"of the model (N = {model.ndof})")
    if a.dtype != bool:
        bad = [i for i, x in enumerate(a.tolist()) if not isinstance(x, (bool, np.bool_))]
        if bad:
            raise StateError(f"passive must hold booleans (True: passive, given force; False: active, given "
                             f"acceleration); entry {bad[0]} is {a.tolist()[bad[0]]!r} of type "
                             f"{type(a.tolist()[bad[0]]).__name__}")
    return np.array(a, dtype=bool)


def split_axes(sizes, passive) -> tuple[list, list]:
    """Per body (joint sizes ``sizes``), the local indices of its passive and of its active axes;
    without a mask (``passive=None``) every axis is passive (eliminated)."""
    offs = np.concatenate([[0], np.cumsum(sizes)]).astype(int)
    if passive is None:
        return [tuple(range(n)) for n in sizes], [()] * len(sizes)
    parts = [passive[offs[k]:offs[k + 1]] for k in range(len(sizes))]
    return ([tuple(int(i) for i in np.flatnonzero(m)) for m in parts],
            [tuple(int(i) for i in np.flatnonzero(~m)) for m in parts])


def columns_of(S: list, axes: list) -> list:
    """Per body, the columns ``axes[k]`` of S[k] (..., 6, n_k) (S[k] itself when all are kept)."""
    return [S_ if len(ax) == S_.shape[-1] else S_[..., :, list(ax)] for S_, ax in zip(S, axes)]


def _riccati(model: Model, q, kin: Kinematics, passive: np.ndarray | None = None) -> Articulated:
    n = model.n
    # Read-only broadcast views: P(k) starts as M(k) for every state without a copy.
    P = [bk.broadcast_view(model.I_spatial[k], kin.batch + (6, 6)) for k in range(n)]
    Pp, U, d = [None] * n, [None] * n, [None] * n
    axes = split_axes(model.joint_sizes, passive)[0]
    for k in reversed(model.order):
        S, Pk = kin.S[k], P[k]
        Uk, dk = [], []
        check = Pk.dtype.kind == "f" and S.dtype.kind == "f"
        scale = _mass_scale(Pk) if check else None
        for i in reversed(axes[k]):
            s = S[..., :, i:i + 1]
            u = bk.mm(Pk, s)
            di = bk.mm(bk.mT(s), u)
            if check:
                _check_axis(model, k, i, s, di, P[k], scale, kin, q, i == axes[k][-1])
            # Outer product U Uᵀ (exactly symmetric) then the division: a symmetric downdate.
            # (A broadcast product, not bk.mm, so that complex and object entries keep the
            # exact symmetry too; counted here as the (6×1)(1×6) product it is.)
            if opcount._ACTIVE:
                opcount.tally(u.shape[-2] ** 2, "mm")
            Pk = Pk - bk.div(u * bk.mT(u), di)
            Uk.append(u)
            dk.append(di)
        U[k], d[k], Pp[k] = Uk[::-1], dk[::-1], Pk
        p = model.parents[k]
        if p != -1:
            if opcount._ACTIVE:   # two 6×6 products; plain @ keeps the uncounted path lean
                opcount.tally(2 * 216, "mm")
            P[p] = P[p] + bk.mT(kin.Xup[k]) @ Pk @ kin.Xup[k]
    return Articulated(P, Pp, U, d, kin, passive=passive, axes=axes)
