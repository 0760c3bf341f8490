r"""Articulated-body (innovations) recursions: Riccati, ABA, ℳ⁻¹, Υ and Λ⁻¹.

SOA_REFERENCE §7–8.  The inward Riccati recursion gives P, D, G, τ̄ (and K, ψ);
the innovations factorization ℳ = (I + HφK) D (I + HφK)* and its inverse
(I + HφK)⁻¹ = I − HψK turn forward dynamics, ℳ⁻¹ and the operational-space
inertia into O(n) inward/outward passes.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import cached_property

import numpy as np

from . import _backend as bk
from .errors import ModelError, StateError
from .kinematics import Kinematics, body_kinematics, check_state, chunked
from .model import Model, is_rotation
from .spatial import motion_transform


@dataclass
class Articulated:
    """Per-body articulated quantities (lists indexed by body label).

    ``P`` articulated inertia, ``P_plus = τ̄ P``, ``D = H P H*``, ``Dinv``,
    ``G = P H* D⁻¹``, ``tau_bar = I − G H``; ``kin`` the kinematics used.
    """

    P: list
    P_plus: list
    D: list
    Dinv: list
    G: list
    kin: Kinematics

    @cached_property
    def tau_bar(self) -> list:
        """τ̄(k) = I − G(k) H(k), formed only on request (ABA never needs it)."""
        return [bk.eye(6, G) - bk.mm(G, bk.mT(S)) for G, S in zip(self.G, self.kin.S)]


def articulated(model: Model, q, kin: Kinematics | None = None) -> Articulated:
    r"""The Riccati recursion of SOA_REFERENCE §7 ([E1]), inward:

    .. math::
        P(k) = M(k) + Σ_{c∈C(k)} φ(k,c) P^+(c) φ^*(k,c),\quad
        D = H P H^*,\ G = P H^* D^{-1},\ τ̄ = I − G H,\ P^+ = τ̄ P.

    Operator form (E2): ``P = M + ℰψ P ℰψ*``.

    Raises
    ------
    ModelError
        If some D(k) is not positive definite (a joint that moves no mass).

    Examples
    --------
    >>> import numpy as np, opalg
    >>> m = opalg.random_model(4, seed=0)
    >>> art = opalg.articulated(m, np.zeros(m.ndof))
    >>> bool(np.allclose(art.tau_bar[0] @ art.tau_bar[0], art.tau_bar[0]))
    True
    """
    if kin is None:
        q = check_state(model, q, "q")
        kin = body_kinematics(model, q, validate=False)
    n = model.n
    # Read-only broadcast views: P(k) starts as M(k) for every state without a copy.
    P = [np.broadcast_to(model.I_spatial[k], kin.batch + (6, 6)) for k in range(n)]
    Pp, D, Dinv, G = ([None] * n for _ in range(4))
    for k in reversed(model.order):
        S = kin.S[k]
        U = bk.mm(P[k], S)
        D[k] = bk.mm(bk.mT(S), U)
        _check_pivot(model, k, D[k])
        Dinv[k] = bk.inv(D[k])
        G[k] = bk.mm(U, Dinv[k])
        # τ̄P = P − G H P = P − G U* (P symmetric): an outer product, not a 6x6 product.
        Pp[k] = P[k] - bk.mm(G[k], bk.mT(U))
        p = model.parents[k]
        if p != -1:
            P[p] = P[p] + bk.mT(kin.Xup[k]) @ Pp[k] @ kin.Xup[k]
    return Articulated(P, Pp, D, Dinv, G, kin)


def _check_pivot(model: Model, k: int, D: np.ndarray) -> None:
    if D.dtype.kind != "f":
        return
    ev = D[..., 0, :] if D.shape[-1] == 1 else np.linalg.eigvalsh(D)
    if np.any(ev[..., 0] <= 1e-12 * np.maximum(1.0, np.abs(ev[..., -1]))):
        raise ModelError(
            f"body {k} ({model.names[k]}), joint {model.joint_names[k]}: articulated pivot D(k) "
            "is singular (the joint moves no mass, or its axes are dependent)"
        )


def _passes(model: Model, art: Articulated, T: np.ndarray, a=None, b=None):
    """Inward/outward passes of E9 for m right-hand sides T (..., N, m).

    Returns ``(qdd, z, alpha)`` with qdd (..., N, m).  ``a``/``b`` are the per-body
    Coriolis/gyroscopic lists (None: zero).
    """
    kin, n = art.kin, model.n

    def col(v):
        return v[..., None]

    z, zp, nu = [None] * n, [None] * n, [None] * n
    batch = np.broadcast_shapes(T.shape[:-2], kin.batch)
    for k in reversed(model.order):
        if a is not None:
            zk = col(bk.mv(art.P[k], a[k]) + b[k])
        else:
            zk = bk.zeros(batch + (6, T.shape[-1]), T, art.P[k])
        for c in model.children[k]:
            zk = zk + bk.mm(bk.mT(kin.Xup[c]), zp[c])
        eps = T[..., model.dof_slice[k], :] - bk.mm(bk.mT(kin.S[k]), zk)
        nu[k] = bk.mm(art.Dinv[k], eps)
        z[k], zp[k] = zk, zk + bk.mm(art.G[k], eps)
    qdd, alpha = [None] * n, [None] * n
    for k in model.order:
        p = model.parents[k]
        ap = bk.zeros(batch + (6, T.shape[-1]), T, art.P[k]) if p == -1 else bk.mm(kin.Xup[k], alpha[p])
        qdd[k] = nu[k] - bk.mm(bk.mT(art.G[k]), ap)
        alpha[k] = ap + bk.mm(kin.S[k], qdd[k]) + (0 if a is None else col(a[k]))
    return np.concatenate(qdd, -2), z, alpha


@chunked(3)
def aba(model: Model, q, qd, tau, gravity: bool = True) -> np.ndarray:
    r"""Forward dynamics ``q̈ = ℳ⁻¹(T − C)`` by the articulated body algorithm.

    Implements the operator expression (SOA_REFERENCE E9, from E7/E8)

    .. math:: \ddot q = (I − HψK)^* D^{-1}\left[T − Hψ(KT + Pa + b)\right] − K^*ψ^* a,

    as one inward pass (``z = ψ(KT + Pa + b)``, innovations ``ε = T − Hz``,
    ``ν = D⁻¹ε``) and one outward pass (``q̈(k) = ν(k) − G*(k) φ*(℘k,k) α(℘k)``).

    Parameters
    ----------
    model : Model
    q, qd, tau : array_like, shape (..., N)
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
    """
    kin = body_kinematics(model, q, qd, gravity, validate=False)
    art = articulated(model, q, kin)
    qdd, _, _ = _passes(model, art, tau[..., None], kin.a, kin.b)
    return qdd[..., 0]


@chunked(1)
def minv(model: Model, q) -> np.ndarray:
    r"""ℳ⁻¹ from the innovations inverse (E8), without a dense solve:

    .. math:: ℳ^{-1} = (I − HψK)^* D^{-1} (I − HψK),

    applied to the N unit vectors at once (the ABA passes with a = b = 0).

    Examples
    --------
    >>> import numpy as np, opalg
    >>> m = opalg.random_model(5, "tree", seed=3)
    >>> q = np.zeros(m.ndof)
    >>> bool(np.allclose(opalg.minv(m, q) @ opalg.crba(m, q), np.eye(m.ndof)))
    True
    """
    art = articulated(model, q, body_kinematics(model, q, validate=False))
    return _passes(model, art, bk.eye(model.ndof, q, *art.P))[0]


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
    art = articulated(model, q) if art is None else art
    kin = art.kin
    Y = [None] * model.n
    for k in model.order:
        S = kin.S[k]
        Y[k] = S @ art.Dinv[k] @ bk.mT(S)
        p = model.parents[k]
        if p != -1:
            psi = bk.mT(kin.Xup[k]) @ art.tau_bar[k]
            Y[k] = Y[k] + bk.mT(psi) @ Y[p] @ psi
    return Y


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
    Y = upsilon(model, q, art)
    out = []
    for k in range(model.n):
        p = model.parents[k]
        blk = art.Dinv[k]
        if p != -1:
            Kk = bk.mT(art.kin.Xup[k]) @ art.G[k]
            blk = blk + bk.mT(Kk) @ Y[p] @ Kk
        out.append(blk)
    return out


def _frame_X(model: Model, frame) -> tuple[int, np.ndarray]:
    """(body, ^eX_k) from a frame spec ``(body, p)`` or ``(body, R, p)``."""
    try:
        body, *rest = frame
        R, p = (np.eye(3), rest[0]) if len(rest) == 1 else rest
    except (TypeError, ValueError):
        raise StateError(f"frame {frame!r}: expected (body, p) or (body, R, p)") from None
    if isinstance(body, (bool, np.bool_)) or not isinstance(body, (int, np.integer)):
        raise StateError(f"frame {frame!r}: body index {body!r} is not an integer; "
                         "expected (body, p) or (body, R, p)")
    body = int(body)
    if not 0 <= body < model.n:
        raise StateError(f"frame on body {body}: no such body (model has {model.n})")
    R, p = bk.asarray(R), bk.asarray(p)
    if R.shape != (3, 3) or p.shape != (3,):
        raise StateError(f"frame on body {body}: R must be 3x3 and p a 3-vector")
    if R.dtype != object and not is_rotation(R):
        raise StateError(f"frame on body {body}: R is not a proper rotation matrix")
    if p.dtype != object and not np.all(np.isfinite(p)):
        raise StateError(f"frame on body {body}: origin p has non-finite entries {p}")
    return body, motion_transform(bk.mT(R), p)


@chunked(1)
def frame_jacobian(model: Model, q, frame) -> np.ndarray:
    r"""Spatial Jacobian of a body-fixed frame e, in e coordinates: ``J = B* φ* H*`` ([C8]).

    ``frame`` is ``(body, p)`` or ``(body, R, p)``: origin p and orientation R of e
    in the body frame.  The column block of joint j is ``^eX_j H*(j)`` for every j
    on the path from the body to its root (j ⪰ body), zero elsewhere.  Returns (..., 6, N).

    Examples
    --------
    >>> import numpy as np, opalg
    >>> arm = opalg.planar_arm([1.0, 1.0], [1.0, 1.0], [0.1, 0.1])
    >>> opalg.frame_jacobian(arm, [0.0, 0.0], (1, [1.0, 0, 0]))[[2, 4]]   # w_z and v_y of the tip
    array([[1., 1.],
           [2., 1.]])
    """
    body, Xe = _frame_X(model, frame)
    kin = body_kinematics(model, q, validate=False)
    J = bk.zeros(kin.batch + (6, model.ndof), q, Xe)
    X, k = Xe, body
    while k != -1:
        J[..., :, model.dof_slice[k]] = X @ kin.S[k]
        X = X @ kin.Xup[k]
        k = model.parents[k]
    return J


@chunked(1)
def lambda_inv(model: Model, q, frames) -> np.ndarray:
    r"""Inverse operational-space inertia Λ⁻¹ = J ℳ⁻¹ J* of body-fixed frames, in O(n).

    Uses F5 with the tree formula F3 (the serial-chain operator form F4 is false
    on branched trees, SOA_REFERENCE pitfall 4):

    .. math:: Λ^{-1}(e_r, e_s) = φ^*(k_r,e_r)\, ψ^*(c,k_r)\, Υ(c)\, ψ(c,k_s)\, φ(k_s,e_s),
              \quad c = k_r ∧ k_s,

    and 0 when k_r and k_s hang from different roots.

    Parameters
    ----------
    frames : sequence of (body, p) or (body, R, p)

    Returns
    -------
    ndarray, shape (..., 6m, 6m) for m frames, each in its own coordinates.

    Examples
    --------
    >>> import numpy as np, opalg
    >>> m = opalg.random_model(7, "tree", seed=5, joints="revolute")
    >>> q = np.zeros(m.ndof); fr = [(6, [0.1, 0, 0])]
    >>> J = opalg.frame_jacobian(m, q, fr[0])
    >>> bool(np.allclose(opalg.lambda_inv(m, q, fr), J @ np.linalg.solve(opalg.crba(m, q), J.T)))
    True
    """
    specs = [_frame_X(model, f) for f in frames]
    art = articulated(model, q, body_kinematics(model, q, validate=False))
    Y = upsilon(model, q, art)
    kin = art.kin
    psi_up = {k: bk.mT(kin.Xup[k]) @ art.tau_bar[k] for k in range(model.n)}

    def path_to(c, k):
        """ψ(c, k) as a product of ψ(℘,·) blocks (E4d), or None if c is not ⪰ k."""
        P = None
        while k != c:
            if k == -1:
                return None
            P = psi_up[k] if P is None else psi_up[k] @ P
            k = model.parents[k]
        return bk.eye(6, *art.P) + bk.zeros(kin.batch + (6, 6), *art.P) if P is None else P

    def ancestors(k):
        out = []
        while k != -1:
            out.append(k)
            k = model.parents[k]
        return out

    m = len(specs)
    out = bk.zeros(kin.batch + (6 * m, 6 * m), q, *art.P)
    for r, (kr, Xr) in enumerate(specs):
        anc_r = ancestors(kr)
        for s, (ks, Xs) in enumerate(specs):
            common = [a for a in ancestors(ks) if a in anc_r]
            if not common:
                continue
            c = common[0]
            blk = Xr @ bk.mT(path_to(c, kr)) @ Y[c] @ path_to(c, ks) @ bk.mT(Xs)
            out[..., 6 * r:6 * r + 6, 6 * s:6 * s + 6] = blk
    return out
