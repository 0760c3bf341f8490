r"""Quasi-velocities ν = (I + HφK)* θ̇ and back, by O(n) recursions (docs/REFERENCE.md J1–J3).

The innovations factorization ℳ = (I + HφK) D (I + HφK)* (E6) read as a change of
velocity variables: with ν := (I + HφK)* θ̇ the kinetic energy is block diagonal,
½θ̇*ℳθ̇ = ½ν*Dν (J1).  Row k of (I + HφK)* θ̇ needs only the parent's velocity,

.. math::
    ν(k) = \dot θ(k) + G^*(k) V^+(k),\qquad V^+(k) = φ^*(℘k,k) V(℘k)      \quad (J2)

and the map is undone outward with the same V⁺ (J3):
θ̇(k) = ν(k) − G*(k)V⁺(k), V(k) = V⁺(k) + H*(k)θ̇(k) = ψ*(℘k,k)V(℘k) + H*(k)ν(k).

G*(k)V⁺ is applied through the factored pivots of E11
(:meth:`opalg.Articulated.pivot_outward` with ε = 0 returns −G*V⁺), so no block
D⁻¹(k) or G(k) is formed.  Multi-axis joints need nothing extra here: D(k) and
ν(k) are n_k-blocks.
"""

from __future__ import annotations

import numpy as np

from opalg import _backend as bk
from opalg.model.kinematics import Kinematics, body_kinematics, chunked
from opalg.model.multibody import Model
from opalg.algorithms.riccati import Articulated, articulated


def minus_G_star(art: Articulated, k: int, x: np.ndarray) -> np.ndarray:
    """−G*(k) x for x of shape (..., 6): the E11 outward pivot step with zero innovations."""
    out, _ = art.pivot_outward(k, [0] * len(art.U[k]), x[..., None])
    return out[..., 0]


def nu_pass(model: Model, kin: Kinematics, art: Articulated, qd) -> tuple[list, list]:
    """Per body ν(k) (..., n_k) and V(k) (..., 6) from θ̇ (J2), outward."""
    V, out = [None] * model.n, [None] * model.n
    for k in model.order:
        p, qdk = model.parents[k], qd[..., model.dof_slice[k]]
        vJ = bk.mv(kin.S[k], qdk)
        if p == -1:                     # V⁺ = 0 at a root: ν = θ̇
            out[k], V[k] = qdk, vJ
        else:
            Vp = bk.mv(kin.Xup[k], V[p])
            out[k], V[k] = qdk - minus_G_star(art, k, Vp), Vp + vJ
    return out, V


def qd_pass(model: Model, kin: Kinematics, art: Articulated, nu) -> tuple[list, list]:
    """Per body θ̇(k) (..., n_k) and V(k) (..., 6) from ν (J3), outward."""
    V, out = [None] * model.n, [None] * model.n
    for k in model.order:
        p, nuk = model.parents[k], nu[..., model.dof_slice[k]]
        if p == -1:
            out[k] = nuk
            V[k] = bk.mv(kin.S[k], nuk)
        else:
            Vp = bk.mv(kin.Xup[k], V[p])
            out[k] = nuk + minus_G_star(art, k, Vp)
            V[k] = Vp + bk.mv(kin.S[k], out[k])
    return out, V


def stack(parts: list) -> np.ndarray:
    """Per-body (..., n_k) blocks in label order as one (..., N) array."""
    if all(type(p) is np.ndarray and p.ndim == 1 for p in parts):   # one state: nothing to broadcast
        return np.concatenate(parts, -1)
    batch = np.broadcast_shapes(*(p.shape[:-1] for p in parts))
    return np.concatenate([np.broadcast_to(p, batch + p.shape[-1:]) for p in parts], -1)


@chunked(2)
def nu(model: Model, q, qd) -> np.ndarray:
    r"""Quasi-velocities ν = (I + HφK)* θ̇ by the O(n) recursion J2.

    .. math:: ν(k) = \dot θ(k) + G^*(k) φ^*(℘k,k) V(℘k)

    so that ½θ̇*ℳθ̇ = ½ν*Dν (J1) with D the articulated pivots (E6).

    Parameters
    ----------
    model : Model
    q, qd : array_like, shape (..., N)

    Returns
    -------
    ndarray, shape (..., N)

    Examples
    --------
    >>> import numpy as np, opalg
    >>> from opalg import quasi
    >>> m = opalg.random_model(5, "tree", seed=1)
    >>> q, qd = np.random.default_rng(0).normal(size=(2, m.ndof))
    >>> v = quasi.nu(m, q, qd)
    >>> D = opalg.articulated(m, q).D                  # kinetic energy diagonal in ν (J1)
    >>> ke = sum(v[s] @ D[k] @ v[s] for k, s in enumerate(m.dof_slice)) / 2
    >>> bool(np.isclose(ke, qd @ opalg.crba(m, q) @ qd / 2))
    True
    """
    kin = body_kinematics(model, q, validate=False)
    art = articulated(model, q, kin)
    return stack(nu_pass(model, kin, art, qd)[0])


@chunked(2)
def qd_from_nu(model: Model, q, nu) -> np.ndarray:
    r"""Joint rates from quasi-velocities, θ̇ = (I + HφK)^{-*} ν = (I − HψK)* ν, by the recursion J3.

    .. math::
        \dot θ(k) = ν(k) − G^*(k) V^+(k),\quad V^+(k) = φ^*(℘k,k) V(℘k),\quad
        V(k) = V^+(k) + H^*(k) \dot θ(k)

    Parameters
    ----------
    model : Model
    q, nu : array_like, shape (..., N)

    Returns
    -------
    ndarray, shape (..., N)

    Examples
    --------
    >>> import numpy as np, opalg
    >>> from opalg import quasi
    >>> m = opalg.random_model(6, "chain", seed=2, joints="all")
    >>> q, qd = np.random.default_rng(1).normal(size=(2, m.ndof))
    >>> bool(np.allclose(quasi.qd_from_nu(m, q, quasi.nu(m, q, qd)), qd))
    True
    """
    kin = body_kinematics(model, q, validate=False)
    art = articulated(model, q, kin)
    return stack(qd_pass(model, kin, art, nu)[0])
