r"""Innovations passes read off the articulated-body factorization: ABA, ℳ⁻¹, Υ, diag ℳ⁻¹.

docs/REFERENCE.md E6–E9, F2, F6.  The Riccati recursion (:mod:`opalg.algorithms.riccati`)
gives P, D, G, τ̄ (and K, ψ); the innovations factorization
ℳ = (I + HφK) D (I + HφK)* and its inverse (I + HφK)⁻¹ = I − HψK turn forward
dynamics and ℳ⁻¹ into one inward and one outward O(n) pass —
:func:`innovations_passes`, the kernel that ABA, ℳ⁻¹, and the hybrid and
closed-chain algorithms are built on.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from opalg import _backend as bk
from opalg.errors import StateError
from opalg.model import _validate
from opalg.model.kinematics import body_kinematics, check_state, chunked, overflow_guard
from opalg.model.multibody import Model
from opalg.algorithms.riccati import Articulated, articulated


@dataclass
class Innovations:
    r"""Result of :func:`innovations_passes` (lists indexed by body label).

    ``qdd`` (..., N, r) always (in hybrid mode (..., N_p, r), the passive
    accelerations, and ``tau`` (..., N_a, r), the active forces); with
    ``keep=True`` also, per body, ``z`` and
    ``z_plus`` (..., 6, r) (z = ψ(KT + Pa + b), z⁺ = z + Gε), the innovations
    ``eps`` = T − Hz and ``nu`` = D⁻¹ε (..., n_k, r), ``alpha_plus`` = φ*α(℘k),
    ``alpha`` (the body accelerations, E9c) and the hinge forces
    ``f`` = P⁺α⁺ + z⁺ (E9d), each (..., 6, r).
    """

    qdd: np.ndarray
    z: list | None = None
    z_plus: list | None = None
    eps: list | None = None
    nu: list | None = None
    alpha_plus: list | None = None
    alpha: list | None = None
    f: list | None = None
    tau: np.ndarray | None = None


def innovations_passes(model: Model, art: Articulated, T, a=None, b=None,
                       keep: bool = False, qdd_a=None) -> Innovations:
    r"""The inward (filtering) and outward (smoothing) passes of E9, with given T, a and b.

    .. math::
        \text{inward:}\quad & z(k) = Σ_{c∈C(k)} φ(k,c) z^+(c) + P(k) a(k) + b(k),\
            ε(k) = T(k) − H(k) z(k),\ z^+(k) = z(k) + G(k) ε(k) \\
        \text{outward:}\quad & α^+(k) = φ^*(℘k,k) α(℘k),\
            \ddot θ(k) = D^{-1}(k) ε(k) − G^*(k) α^+(k),\
            α(k) = α^+(k) + H^*(k) \ddot θ(k) + a(k)

    so that θ̈ = (I − HψK)* D⁻¹ [T − Hψ(KT + Pa + b)] − K*ψ*a (E9): with the
    model's Coriolis terms a, b it is the ABA; with a = b = None it applies ℳ⁻¹
    (E8).  D⁻¹ and G are applied through the factored pivots of E11.

    **Hybrid mode (G2)**, when ``art`` was built with a ``passive`` mask: H, D, G
    are the passive H_p, D_h, G_h, ``T`` holds the passive forces T_p, ``qdd_a``
    the prescribed active accelerations, and a(k) becomes a′(k) = a(k) +
    H_a*(k)θ̈_a(k).  The outward pass also returns the active forces
    T_a(k) = H_a(k)[P_h(k)(α⁺(k) + H_p*(k)θ̈_p(k)) + z(k)].

    Parameters
    ----------
    model : Model
    art : Articulated
        From :func:`opalg.articulated` at the same configuration.
    T : ndarray, shape (..., N, r)
        r right-hand sides of generalized forces at once (hybrid: (..., N_p, r),
        the passive dofs in the model's dof order).
    a, b : list of (..., 6) arrays, optional
        Per-body accelerations and forces (None: zero).  An external force enters
        as b(k) − f_ext(k) (C9).
    keep : bool
        Keep every per-body intermediate (see :class:`Innovations`); otherwise
        each is released as soon as the passes no longer need it, so that
        memory stays O(n r) beyond the result.
    qdd_a : ndarray, shape (..., N_a, r), optional
        Hybrid mode only: the prescribed accelerations of the active dofs (None: 0).

    Returns
    -------
    Innovations

    Examples
    --------
    >>> import numpy as np, opalg
    >>> m = opalg.random_model(6, "tree", seed=2)
    >>> q = np.zeros(m.ndof)
    >>> art = opalg.articulated(m, q)
    >>> res = opalg.innovations_passes(m, art, np.eye(m.ndof))       # a = b = 0: ℳ⁻¹
    >>> bool(np.allclose(res.qdd @ opalg.crba(m, q), np.eye(m.ndof)))
    True
    >>> p = np.arange(m.ndof) % 2 == 0                              # hybrid mode: ℳ_pp⁻¹
    >>> res = opalg.innovations_passes(m, opalg.articulated(m, q, passive=p), np.eye(p.sum()))
    >>> bool(np.allclose(res.qdd @ opalg.crba(m, q)[np.ix_(p, p)], np.eye(p.sum())))
    True
    """
    if not isinstance(art, Articulated):
        _validate.model(model, "innovations_passes")
        raise StateError(f"innovations_passes: art must be the opalg.Articulated of opalg.articulated(model, q), "
                         f"got {_validate.describe(art)}")
    kin, n, order, parents = art.kin, model.n, model.order, model.parents
    hybrid = art.passive is not None
    rows_p, rows_a = art.rows if hybrid else (model.dof_slice, None)
    T = bk.asarray(T, "T", StateError)
    n_p = rows_p[-1].stop if hybrid else model.ndof
    if T.ndim < 2 or T.shape[-2] != n_p:
        raise StateError(f"T has shape {T.shape}: expected (..., {n_p}, r), the forces on the "
                         + ("passive dofs (hybrid mode)" if hybrid else "dofs") + " for r right-hand sides")
    r = T.shape[-1]
    if qdd_a is not None:
        if not hybrid:
            raise StateError("qdd_a needs an Articulated built with a passive mask (hybrid mode)")
        qdd_a = bk.asarray(qdd_a, "qdd_a", StateError)
        n_a = rows_a[-1].stop
        if qdd_a.ndim < 2 or qdd_a.shape[-2:] != (n_a, r):
            raise StateError(f"qdd_a has shape {qdd_a.shape}: expected (..., {n_a}, {r}), the active "
                             "accelerations for each of T's right-hand sides")
    batch = np.broadcast_shapes(T.shape[:-2], kin.batch, () if qdd_a is None else qdd_a.shape[:-2])
    likes = (T, art.P[order[0]]) + (() if qdd_a is None else (qdd_a,))
    # Bodies whose active forces are asked for (hybrid mode): they keep z(k) for the outward pass.
    act = [hybrid and rows_a[k].stop > rows_a[k].start for k in range(n)]

    def col(v):
        return v[..., None]

    res = Innovations(None)
    if keep:
        res.z, res.z_plus, res.alpha_plus, res.alpha, res.f = ([None] * n for _ in range(5))
    zp, epsl, zkeep, ap_ = [None] * n, [None] * n, [None] * n, [None] * n
    for k in reversed(order):
        # a′(k) = a(k) + H_a*(k) θ̈_a(k): the prescribed active accelerations join a (G1).
        ak = None if a is None else col(a[k])
        if act[k] and qdd_a is not None:
            ak = (0 if ak is None else ak) + bk.mm(art.S_active[k], qdd_a[..., rows_a[k], :])
        ap_[k] = ak
        # z(k) = P a′ + b + Σ_c φ(k,c) z⁺(c): the terms that are given, then the children's.
        if ak is None and b is None:
            zk = bk.zeros(batch + (6, r), *likes)
        else:   # a and b may carry more batch axes than T (e.g. a batch of external forces)
            own = (bk.mm(art.P[k], ak) if ak is not None else 0) + (col(b[k]) if b is not None else 0)
            zk = bk.broadcast_view(own, own.shape[:-1] + (r,)) if own.shape[-1] == 1 else own
        for c in model.children[k]:
            zk = zk + bk.mm(bk.mT(kin.Xup[c]), zp[c])
            if not keep:
                zp[c] = None            # consumed: release it
        zp[k], epsl[k] = art.pivot_inward(k, T[..., rows_p[k], :], zk)
        if keep:
            res.z[k], res.z_plus[k] = zk, zp[k]
        elif act[k]:
            zkeep[k] = zk
    qdd, alpha, tau = [None] * n, [None] * n, [None] * n
    pending = [len(c) for c in model.children]
    for k in order:
        p = parents[k]
        ap = bk.zeros(batch + (6, r), *likes) if p == -1 else bk.mm(kin.Xup[k], alpha[p])
        qdd[k], al = art.pivot_outward(k, epsl[k], ap)
        if act[k]:   # T_a(k) = H_a(k) [P_h(k)(α⁺ + H_p*θ̈_p) + z(k)], the hinge force's active rows
            zk = res.z[k] if keep else zkeep[k]
            tau[k] = bk.mm(bk.mT(art.S_active[k]), bk.mm(art.P[k], al) + zk)
            zkeep[k] = None
        alpha[k] = al if ap_[k] is None else al + ap_[k]
        ap_[k] = None
        if keep:
            res.alpha_plus[k], res.alpha[k] = ap, alpha[k]
            res.f[k] = bk.mm(art.P_plus[k], ap) + zp[k]
        else:
            epsl[k] = None
            if p != -1:
                pending[p] -= 1
                if pending[p] == 0:
                    alpha[p] = None     # every child has read it
    res.qdd = _cat(qdd, batch, r, T)
    if hybrid:
        res.tau = _cat([t for t in tau if t is not None], batch, r, T)
    if keep:
        S = art.S
        res.eps = [T[..., rows_p[k], :] - bk.mm(bk.mT(S[k]), res.z[k]) for k in range(n)]
        res.nu = [bk.mm(art.Dinv[k], res.eps[k]) for k in range(n)]
    return res


def _cat(parts: list, batch: tuple, r: int, like) -> np.ndarray:
    """Stack per-body (..., n_k, r) blocks in label order (an empty list: shape (..., 0, r))."""
    parts = [x for x in parts if x.shape[-2]] or [bk.zeros(batch + (0, r), like)]
    return parts[0] if len(parts) == 1 else np.concatenate(parts, -2)


@chunked(3, forces=("f_ext",))
def aba(model: Model, q, qd, tau, f_ext=None, gravity: bool = True) -> np.ndarray:
    r"""Forward dynamics ``q̈ = ℳ⁻¹(T + Σ J_k* f_ext(k) − C)`` by the articulated body algorithm.

    Implements the operator expression (docs/REFERENCE.md E9, from E7/E8)

    .. math:: \ddot q = (I − HψK)^* D^{-1}\left[T − Hψ(KT + Pa + b)\right] − K^*ψ^* a,

    as one inward pass (``z = ψ(KT + Pa + b)``, innovations ``ε = T − Hz``,
    ``ν = D⁻¹ε``) and one outward pass (``q̈(k) = ν(k) − G*(k) φ*(℘k,k) α(℘k)``),
    :func:`innovations_passes`.  External forces enter as b − f_ext (C9).

    Parameters
    ----------
    model : Model
    q, qd, tau : array_like, shape (..., N)
    f_ext : array_like, shape (..., n, 6), optional
        ``f_ext[..., k, :]`` is the spatial force the environment applies to body
        k, about the origin of body k's frame, in body-k coordinates, angular first.
    gravity : bool

    Returns
    -------
    ndarray, shape (..., N)

    Examples
    --------
    >>> import numpy as np, opalg
    >>> m = opalg.random_model(6, "tree", seed=4)
    >>> rng = np.random.default_rng(0)
    >>> q, qd, qdd = rng.normal(size=(3, m.ndof))
    >>> bool(np.allclose(opalg.aba(m, q, qd, opalg.rnea(m, q, qd, qdd)), qdd))
    True
    >>> f = rng.normal(size=(m.n, 6))                      # a push on every body
    >>> tau = opalg.rnea(m, q, qd, qdd, f_ext=f)
    >>> bool(np.allclose(opalg.aba(m, q, qd, tau, f_ext=f), qdd))
    True
    """
    kin = body_kinematics(model, q, qd, gravity, validate=False)
    art = articulated(model, q, kin)
    b = kin.b if f_ext is None else [kin.b[k] - f_ext[..., k, :] for k in range(model.n)]
    return innovations_passes(model, art, tau[..., None], kin.a, b).qdd[..., 0]


@chunked(1)
def minv(model: Model, q) -> np.ndarray:
    r"""ℳ⁻¹ from the innovations inverse (E8), without a dense solve:

    .. math:: ℳ^{-1} = (I − HψK)^* D^{-1} (I − HψK),

    applied to the N unit vectors at once (:func:`innovations_passes` with
    a = b = 0); beyond the N×N result it needs O(nN) memory.

    Examples
    --------
    >>> import numpy as np, opalg
    >>> m = opalg.random_model(5, "tree", seed=3)
    >>> q = np.zeros(m.ndof)
    >>> bool(np.allclose(opalg.minv(m, q) @ opalg.crba(m, q), np.eye(m.ndof)))
    True
    """
    art = articulated(model, q, body_kinematics(model, q, validate=False))
    return innovations_passes(model, art, bk.eye(model.ndof, q, *art.P)).qdd


def upsilon(model: Model, q, art: Articulated | None = None) -> list:
    r"""Υ(k) = Ω(k,k) by the outward recursion F2 (RJK91 eq. 20):

    .. math:: Υ(k) = ψ^*(℘k,k) Υ(℘k) ψ(℘k,k) + H^*(k) D^{-1}(k) H(k),\quad Υ = 0 above the roots,

    with ``ψ(℘k,k) = φ(℘k,k) τ̄(k)``.  Returns a list of (..., 6, 6) blocks.

    Examples
    --------
    >>> import numpy as np, opalg
    >>> m = opalg.random_model(5, "tree", seed=1)
    >>> ops = opalg.operators(m, np.zeros(m.ndof))
    >>> Y = opalg.upsilon(m, np.zeros(m.ndof))
    >>> bool(np.allclose(Y[4], ops.Omega.block(4, 4)))
    True
    """
    if art is None:  # a public call: validated, and an overflow is reported as one
        q = check_state(model, q, "q")
        return overflow_guard("upsilon", lambda: _upsilon(
            model, articulated(model, q, body_kinematics(model, q, validate=False))), {"q": q})
    return _upsilon(model, art)


def _upsilon(model: Model, art: Articulated) -> list:
    return upsilon_psi(model, art)[0]


def upsilon_psi(model: Model, art: Articulated, bodies=None) -> tuple[list, list]:
    r"""Υ(k) (F2) and ψ(℘k, k) = φ(℘k, k) τ̄(k) on an existing factorization ``art``.

    ``bodies``: a set of bodies closed under parents (e.g. the ancestors of a few frames), or
    None for every body; the other entries are None.  D⁻¹(k) and G(k) come from
    :meth:`Articulated.block`, so a subset costs only its own bodies.

    Examples
    --------
    >>> import numpy as np, opalg
    >>> from opalg.algorithms.aba import upsilon_psi
    >>> m = opalg.random_model(6, "tree", seed=3); q = np.zeros(m.ndof)
    >>> Y, _ = upsilon_psi(m, opalg.articulated(m, q), bodies={0, 1})
    >>> bool(np.allclose(Y[1], opalg.upsilon(m, q)[1])), Y[5] is None
    (True, True)
    """
    kin = art.kin
    Y, psi = [None] * model.n, [None] * model.n
    for k in model.order:
        if bodies is not None and k not in bodies:
            continue
        Dinv, G = art.block(k)
        S = art.S[k]    # the eliminated axes: all of H*(k), or H_p*(k) in hybrid mode
        psi[k] = bk.mT(kin.Xup[k]) @ (bk.eye(6, G) - bk.mm(G, bk.mT(S)))
        Y[k] = S @ Dinv @ bk.mT(S)
        p = model.parents[k]
        if p != -1:
            Y[k] = Y[k] + bk.mT(psi[k]) @ Y[p] @ psi[k]
    return Y, psi


@chunked(1)
def minv_diag(model: Model, q) -> list:
    r"""Diagonal blocks of ℳ⁻¹ in O(n) (F6):

    .. math:: ℳ^{-1}(k,k) = D^{-1}(k) + K^*(℘k,k) Υ(℘k) K(℘k,k),\quad K(℘k,k) = φ(℘k,k) G(k).

    Returns a list of (..., n_k, n_k) blocks, one per body.

    Examples
    --------
    >>> import numpy as np, opalg
    >>> m = opalg.random_model(5, "tree", seed=3)
    >>> q = np.zeros(m.ndof)
    >>> d = np.concatenate([np.diagonal(b, axis1=-2, axis2=-1) for b in opalg.minv_diag(m, q)])
    >>> bool(np.allclose(d, np.diag(np.linalg.inv(opalg.crba(m, q)))))
    True
    """
    art = articulated(model, q, body_kinematics(model, q, validate=False))
    Y = _upsilon(model, art)
    out = []
    for k in range(model.n):
        p = model.parents[k]
        blk = art.Dinv[k]
        if p != -1:
            Kk = bk.mT(art.kin.Xup[k]) @ art.G[k]
            blk = blk + bk.mT(Kk) @ Y[p] @ Kk
        out.append(blk)
    return out
