r"""Derivatives of the dynamics read off the differentiated factorizations (docs/REFERENCE.md E13–E15).

Every derivative with respect to the configuration is taken along the joint's own motion:
for an axis i of body k the configuration moves by ε along θ_{k,i}; for a free joint (K8) it
moves in the **tangent space**, d/dε f(integrate(model, q, ε e_i)) (the body-frame twist e_i,
angular first), so that the result has N = nv columns whatever nq is.  With that convention one
rule covers every joint kind (E13):

.. math::
    \frac{∂\,{}^kX_{℘}}{∂θ_{k,i}} = −\mathrm{crm}(S_i)\,{}^kX_{℘},\qquad
    \frac{∂ℰφ}{∂θ_{k,i}} = ℰφ\,\mathcal{C}_{k,i},\quad
    \mathcal{C}_{k,i} = \mathrm{crf}(S_i(k)) \text{ in block } (k, k),\qquad
    \frac{∂S_l}{∂θ_{k,i}} = −\mathrm{crm}(S_i) S_l\ (l < i),

S_i = H*_i(k) the axis in body-k coordinates (constant for a 1-dof and a free joint).
Differentiating T = Hφ(Mφ*(H*θ̈ + a) + b) with these gives the tangent Newton–Euler recursion
(E14), one outward and one inward pass that carry all 2N directions at once: O(n·N) per state.
Forward dynamics follows from it and the innovations factorization (E15):
∂θ̈ = −ℳ⁻¹ ∂T|_{θ̈ = ABA}, ∂θ̈/∂T = ℳ⁻¹, both through the passes of E9.
"""

from __future__ import annotations

import numpy as np

from opalg import _backend as bk
from opalg.algorithms.aba import innovations_passes
from opalg.algorithms.riccati import articulated
from opalg.model.kinematics import Kinematics, body_kinematics, broadcast_batch, chunked
from opalg.model.multibody import Model
from opalg.spatial.vectors import crf, cross_force, cross_motion, skew


#: Up to this many dofs aba_derivatives multiplies ℳ⁻¹ into −∂T (2N³ per state, faster in numpy for a
#: robot arm); above it the 2N columns go through the innovations passes, O(n·N) per state.
SMALL_N = 16


def _prefix(rows: np.ndarray) -> np.ndarray:
    """Exclusive prefix sums over axis -2: out[..., i, :] = Σ_{l<i} rows[..., l, :]."""
    out = bk.zeros(rows.shape, rows)
    for i in range(1, rows.shape[-2]):
        out[..., i, :] = out[..., i - 1, :] + rows[..., i - 1, :]
    return out


def _force_bar(f: np.ndarray) -> np.ndarray:
    """The 6×6 matrix B with x ×* f = B x (x a motion, f = [n; F] a force): [[−ñ, −F̃], [−F̃, 0]]."""
    n_, F_ = skew(f[..., :3]), skew(f[..., 3:])
    top = np.concatenate([-n_, -F_], -1)
    return np.concatenate([top, np.concatenate([-F_, bk.zeros(F_.shape, F_)], -1)], -2)


def _contiguous(m: np.ndarray) -> np.ndarray:
    """``m`` in C order (object arrays as they are): the right factor of a batched matmul."""
    return m if m.dtype == object else np.ascontiguousarray(m)


def _rows(x: np.ndarray) -> np.ndarray:
    """A vector (..., 6) as one row (..., 1, 6) that broadcasts against direction stacks."""
    return x[..., None, :]


def tangent_rnea(model: Model, kin: Kinematics, qd, qdd, f_ext=None, gravity: bool = True,
                 wrt_qd: bool = True) -> tuple[np.ndarray, np.ndarray | None]:
    r"""The tangent Newton–Euler recursion (E14): ∂T/∂θ and ∂T/∂θ̇ at (q, θ̇, θ̈), all directions at once.

    Directions are stacked as rows: δV(k), δα(k), δf(k) are (..., 2N, 6) (N θ-directions,
    then N θ̇-directions).  Outward, with y′ = ᵏX_℘ y and the own-axis terms only in the
    columns of body k's dofs (E13),

    .. math::
        δV(k) &= {}^kX_℘ δV(℘k) + [V′(℘k) × S_i + U_{<i} × S_i]_{θ_{k,i}} + [S_i]_{θ̇_{k,i}} \\
        δα(k) &= {}^kX_℘ δα(℘k) + δV(k) × v_J + [α′(℘k) × S_i + A_{<i} × S_i + V(k) × (U_{<i} × S_i)
                − S_i × c_{<i} − (S_i × U_{<i}) × U_{≥i}]_{θ_{k,i}} \\
              &\quad + [V(k) × S_i + S_i × U_{>i} + U_{<i} × S_i]_{θ̇_{k,i}}

    (U, A: partial sums of S_l θ̇_l, S_l θ̈_l over the joint's axes; c_{<i} the velocity product
    of the first i axes; α(℘k) = −g at the roots), then inward

    .. math::
        δf(k) &= M δα + δV ×^* MV + V ×^* M δV + Σ_c \left({}^cX_k^* δf(c)
                 + [{}^cX_k^*(S_i(c) ×^* f(c))]_{θ_{c,i}}\right) \\
        δT(k) &= H(k) δf(k) + [(S_l × S_i)\cdot f(k)]_{l<i,\ θ_{k,i}}.

    ``kin`` are the kinematics at q (``Xup``, ``S``; velocities are recomputed here).  Returns
    (dtau_dq, dtau_dqd), each (..., N, N); dtau_dqd is None if ``wrt_qd`` is False.

    Examples
    --------
    >>> import numpy as np, opalg
    >>> from opalg.algorithms.derivatives import tangent_rnea
    >>> from opalg.model.kinematics import body_kinematics
    >>> m = opalg.random_model(3, seed=0)
    >>> q, qd, qdd = np.random.default_rng(0).normal(size=(3, m.ndof))
    >>> dq, dqd = tangent_rnea(m, body_kinematics(m, q), qd, qdd)
    >>> dq.shape == dqd.shape == (m.ndof, m.ndof)
    True
    """
    n, N = model.n, model.ndof
    Dn = 2 * N if wrt_qd else N
    batch = broadcast_batch(model, qd=qd, qdd=qdd,
                            **({} if f_ext is None else {"f": f_ext[..., 0]}))
    batch = np.broadcast_shapes(batch, kin.batch)
    likes = (qd, qdd, model.I_spatial[0], kin.Xup[0], model.gravity) + (() if f_ext is None else (f_ext,))
    a0 = bk.zeros(batch + (6,), *likes)
    if gravity:
        a0 = a0 + np.concatenate([bk.zeros((3,), model.gravity), -model.gravity])
    V, al, f, dV, dal, df = ([None] * n for _ in range(6))
    for k in model.order:
        p, X, S, joint = model.parents[k], kin.Xup[k], kin.S[k], model.joints[k]
        sl = model.dof_slice[k]
        o, nk = sl.start, sl.stop - sl.start
        Sc = bk.mT(S)                                   # (..., n_k, 6): one axis per row
        qdk, qddk = qd[..., sl], qdd[..., sl]
        XVp = None if p == -1 else bk.mv(X, V[p])
        Xap = bk.mv(X, a0 if p == -1 else al[p])
        vJ, cJ = joint.velocity(S, qdk)
        V[k] = vJ + 0 * a0 if XVp is None else XVp + vJ
        al[k] = Xap + bk.mv(S, qddk) + cross_motion(V[k], vJ) + cJ
        # X δ(parent) for every direction (rows: δ @ Xᵀ), zero at the roots.  The product's right
        # factor is made contiguous once: numpy's batched matmul is several times slower on a view
        XT = None if p == -1 else _contiguous(bk.mT(X))
        dVk = bk.zeros(batch + (Dn, 6), *likes) if p == -1 else dV[p] @ XT
        dak = bk.zeros(batch + (Dn, 6), *likes) if p == -1 else dal[p] @ XT
        own_V = 0 if XVp is None else cross_motion(_rows(XVp), Sc)     # (X V(℘)) × S_i = −crm(S_i) X V(℘)
        own_a = cross_motion(_rows(Xap), Sc)
        rate_v = cross_motion(_rows(V[k]), Sc)                          # V × S_i (θ̇-directions)
        if nk > 1 and not joint.free:                                   # axes in sequence: S depends on q_k
            u, w = Sc * qdk[..., :, None], Sc * qddk[..., :, None]
            U_lo, A_lo = _prefix(u), _prefix(w)
            c_lo = bk.zeros(U_lo.shape, U_lo)
            for i in range(1, nk):
                c_lo[..., i, :] = c_lo[..., i - 1, :] + cross_motion(U_lo[..., i - 1, :], u[..., i - 1, :])
            U_ge = _rows(vJ) - U_lo
            dvJ = cross_motion(U_lo, Sc)                                # δv_J along θ_{k,i}
            own_V = own_V + dvJ
            own_a = (own_a + cross_motion(A_lo, Sc) + cross_motion(_rows(V[k]), dvJ)
                     - cross_motion(Sc, c_lo) - cross_motion(cross_motion(Sc, U_lo), U_ge))
            rate_v = rate_v + cross_motion(Sc, U_ge - u) + cross_motion(U_lo, Sc)
        dVk[..., o:o + nk, :] += own_V
        if wrt_qd:
            dVk[..., N + o:N + o + nk, :] += Sc
        dak = dak + dVk @ _contiguous(crf(vJ))                          # δV × v_J = −v_J × δV: rows times −crm(v_J)ᵀ = crf(v_J)
        dak[..., o:o + nk, :] += own_a
        if wrt_qd:
            dak[..., N + o:N + o + nk, :] += rate_v
        dV[k], dal[k] = dVk, dak
    for k in range(n):
        Mk = model.I_spatial[k]
        MV = bk.mv(Mk, V[k])
        f[k] = bk.mv(Mk, al[k]) + cross_force(V[k], MV)
        if f_ext is not None:
            f[k] = f[k] - f_ext[..., k, :]
        # δV ×* MV + V ×* MδV = W δV with W = B(MV) + crf(V) M: one 6×6 matrix per state, not 2N cross products
        W = _force_bar(MV) + crf(V[k]) @ Mk
        df[k] = dal[k] @ _contiguous(bk.mT(Mk)) + dV[k] @ _contiguous(bk.mT(W))
    rows = [None] * n
    for k in reversed(model.order):
        p, X, S, joint = model.parents[k], kin.Xup[k], kin.S[k], model.joints[k]
        sl = model.dof_slice[k]
        o, nk = sl.start, sl.stop - sl.start
        Sc = bk.mT(S)
        dT = bk.mT(df[k] @ S)                                           # (..., n_k, Dn)
        if nk > 1 and not joint.free:                                   # δS_l·f = (S_l × S_i)·f, l < i
            cr = cross_motion(Sc[..., :, None, :], Sc[..., None, :, :])  # [l, i] = S_l × S_i
            own = (cr * f[k][..., None, None, :]).sum(-1)
            own = own * np.triu(np.ones((nk, nk)), 1)
            dT[..., :, o:o + nk] += own
        rows[k] = dT
        if p != -1:
            f[p] = f[p] + bk.mv(bk.mT(X), f[k])
            df[p] = df[p] + df[k] @ X
            df[p][..., o:o + nk, :] += cross_force(Sc, _rows(f[k])) @ X
    out = rows[0] if n == 1 else np.concatenate([rows[k] for k in range(n)], -2)
    return out[..., :N], (out[..., N:] if wrt_qd else None)


@chunked(3, forces=("f_ext",))
def _rnea_derivatives(model: Model, q, qd, qdd, f_ext=None, gravity: bool = True) -> list:
    kin = body_kinematics(model, q, validate=False)
    return list(tangent_rnea(model, kin, qd, qdd, f_ext, gravity))


def rnea_derivatives(model: Model, q, qd, qdd, f_ext=None, gravity: bool = True) -> tuple[np.ndarray, np.ndarray]:
    r"""∂T/∂θ and ∂T/∂θ̇ of the inverse dynamics T = RNEA(q, θ̇, θ̈, f_ext), in O(n·N) per state.

    Differentiates the Newton–Euler factorization (C2) with the rule of E13,

    .. math::
        ∂T = ∂H\, f + Hφ\left(∂ℰφ\, f + M ∂α + ∂b\right),\qquad
        ∂α = φ^*\left(∂ℰφ^*\, α + ∂H^*\ddot θ + ∂a\right),\qquad ∂φ = φ\,∂ℰφ\,φ,

    evaluated as the tangent recursion of :func:`tangent_rnea` (docs/REFERENCE.md E14): one
    outward and one inward pass carrying all 2N directions.  f_ext (C9) is fixed in the body
    frames, so it enters through ∂ℰφ only.

    **Free joints:** the configuration derivative is taken in the tangent space, column i is
    d/dε T(integrate(model, q, ε e_i)) (the body-frame twist, angular first, K8); the result is
    (..., N, N) with N = nv.

    Parameters
    ----------
    model : Model
    q : array_like, shape (..., nq)
    qd, qdd : array_like, shape (..., N)
    f_ext : array_like, shape (..., n, 6), optional
        As in :func:`opalg.rnea`.
    gravity : bool

    Returns
    -------
    dtau_dq, dtau_dqd : ndarray, shape (..., N, N)
        Entry [i, j] is ∂T_i/∂θ_j (resp. ∂T_i/∂θ̇_j).  Float, complex (a complex state: the
        complex-step derivative of the result goes through) or sympy.

    Examples
    --------
    >>> import numpy as np, opalg
    >>> m = opalg.random_model(4, "tree", seed=1)
    >>> q, qd, qdd = np.random.default_rng(0).normal(size=(3, m.ndof))
    >>> dq, dqd = opalg.rnea_derivatives(m, q, qd, qdd)
    >>> h = 1e-30                                   # complex step along θ̇_2
    >>> bool(np.allclose(dqd[:, 2], opalg.rnea(m, q, qd + 1j * h * np.eye(m.ndof)[2], qdd).imag / h))
    True
    """
    return tuple(_rnea_derivatives(model, q, qd, qdd, f_ext, gravity))


@chunked(3, forces=("f_ext",))
def _aba_derivatives(model: Model, q, qd, tau, f_ext=None, gravity: bool = True) -> list:
    N = model.ndof
    kin = body_kinematics(model, q, qd, gravity, validate=False)
    art = articulated(model, q, kin)
    b = kin.b if f_ext is None else [kin.b[k] - f_ext[..., k, :] for k in range(model.n)]
    qdd = innovations_passes(model, art, tau[..., None], kin.a, b).qdd[..., 0]
    dq, dqd = tangent_rnea(model, kin, qd, qdd, f_ext, gravity)
    like = (dq, *art.P)
    eye = bk.eye(N, *like) + bk.zeros(dq.shape[:-2] + (N, N), *like)
    if N > SMALL_N:       # O(n·N): the 3N right-hand sides [−∂T/∂θ, −∂T/∂θ̇, I] through the passes (E8)
        sol = innovations_passes(model, art, np.concatenate([-dq, -dqd, eye], -1)).qdd
        return [sol[..., :N], sol[..., N:2 * N], sol[..., 2 * N:]]
    # Small N: ℳ⁻¹ from the passes on the N unit vectors, then one N×N by N×2N product per state,
    # cheaper in numpy than 2N more right-hand sides through the passes (a 6×6 by 6×r product per body)
    Minv = innovations_passes(model, art, eye).qdd
    rest = Minv @ -np.concatenate([dq, dqd], -1)
    return [rest[..., :N], rest[..., N:], Minv]


def aba_derivatives(model: Model, q, qd, tau, f_ext=None,
                    gravity: bool = True) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    r"""∂θ̈/∂θ, ∂θ̈/∂θ̇ and ∂θ̈/∂T of the forward dynamics θ̈ = ABA(q, θ̇, T, f_ext), O(n·N) per state.

    From ℳ(θ) θ̈ + C(θ, θ̇) = T + Σ J_k* f_ext(k): differentiating at fixed T (docs/REFERENCE.md E15),

    .. math::
        \frac{∂\ddot θ}{∂θ} = −ℳ^{-1}\frac{∂\,\mathrm{RNEA}}{∂θ}\Big|_{\ddot θ},\qquad
        \frac{∂\ddot θ}{∂\dot θ} = −ℳ^{-1}\frac{∂\,\mathrm{RNEA}}{∂\dot θ}\Big|_{\ddot θ},\qquad
        \frac{∂\ddot θ}{∂T} = ℳ^{-1} = (I − HψK)^* D^{-1}(I − HψK),

    with θ̈ from the ABA, the RNEA derivatives from the tangent recursion (E14) and ℳ⁻¹ applied
    by the innovations passes of E8/E9 (no ℳ is formed or solved): to all 3N right-hand sides
    (O(n·N)), or, up to :data:`SMALL_N` dofs, to the N unit vectors and then multiplied into the
    2N columns of −∂T (2N³ per state, faster in numpy for an arm).

    **Free joints:** the configuration derivative is taken in the tangent space (column i is
    d/dε θ̈(integrate(model, q, ε e_i)), the body-frame twist, K8).

    Parameters
    ----------
    model : Model
    q : array_like, shape (..., nq)
    qd, tau : array_like, shape (..., N)
    f_ext : array_like, shape (..., n, 6), optional
    gravity : bool

    Returns
    -------
    dqdd_dq, dqdd_dqd, dqdd_dtau : ndarray, shape (..., N, N)

    Examples
    --------
    >>> import numpy as np, opalg
    >>> m = opalg.random_model(5, "chain", seed=2)
    >>> q, qd, tau = np.random.default_rng(1).normal(size=(3, m.ndof))
    >>> dq, dqd, Minv = opalg.aba_derivatives(m, q, qd, tau)
    >>> bool(np.allclose(Minv, opalg.minv(m, q)))
    True
    >>> h = 1e-30                                   # complex step along θ_0
    >>> bool(np.allclose(dq[:, 0], opalg.aba(m, q + 1j * h * np.eye(m.ndof)[0], qd, tau).imag / h))
    True
    """
    return tuple(_aba_derivatives(model, q, qd, tau, f_ext, gravity))
