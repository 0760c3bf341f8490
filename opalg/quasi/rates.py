r"""Rates of the articulated quantities along the motion: Ṗ, Ṗ⁺, Ḋ, Ġ (docs/REFERENCE.md J6).

Differentiate the Riccati recursion (E1) along q(t) with q̇ = θ̇.  In body coordinates
M(k) is constant and the transform of child c moves as d/dt ᶜX_k = −crm(s_c) ᶜX_k with
s_c = H*(c)θ̇(c) (K2), so, inward,

.. math::
    \dot P(k) = Σ_{c∈C(k)} {}^cX_k^* \left[\dot P^+(c) − \mathrm{crm}(s_c)^* P^+(c)
                 − P^+(c)\,\mathrm{crm}(s_c)\right] {}^cX_k .

With S = H*(k) and Ṡ its rate in body coordinates, D = SᵀPS, G = PSD⁻¹, P⁺ = P − GDGᵀ:

.. math::
    \dot D &= S^*\dot P S + \dot S^* P S + S^* P \dot S,\\
    \dot G &= \bar τ(\dot P S + P\dot S) D^{-1} − G \dot S^* G,\\
    \dot P^+ &= \bar τ \dot P \bar τ^* − P^+\dot S G^* − G \dot S^* P^+ .

For a 1-dof joint S is constant (Ṡ = 0): Ġ = τ̄ṖH*D⁻¹, Ṗ⁺ = τ̄Ṗτ̄*.  A multi-axis joint
is a sequence of axes inside body k whose columns turn with the later axes (K2):
Ṡ_i = Σ_{j>i} crm(S_i) S_j θ̇_j — these are the extra Ḣ terms, kept here.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from opalg import _backend as bk
from opalg.model.kinematics import Kinematics, body_kinematics, check_state, overflow_guard, broadcast_batch
from opalg.model.multibody import Model
from opalg.algorithms.riccati import Articulated, articulated
from opalg.spatial.vectors import crm


@dataclass
class ArticulatedRates:
    """Per-body rates (lists indexed by body label) of :func:`articulated_rates`.

    Attributes
    ----------
    P_dot, P_plus_dot : list of (..., 6, 6)
    D_dot : list of (..., n_k, n_k)
    G_dot : list of (..., 6, n_k)
    S_dot : list of (..., 6, n_k)
        Rate of H*(k) in body coordinates (zero for 1-dof joints).
    art : Articulated
        The articulated quantities P, D, G, ... at the same configuration.
    """

    P_dot: list
    P_plus_dot: list
    D_dot: list
    G_dot: list
    S_dot: list
    art: Articulated


def rates_pass(model: Model, kin: Kinematics, art: Articulated, qd) -> ArticulatedRates:
    """The inward J6 recursion for an articulated ``art`` built on ``kin`` (checked inputs)."""
    n = model.n
    batch = np.broadcast_shapes(kin.batch, qd.shape[:-1])
    Pd = [bk.zeros(batch + (6, 6), art.P[0], qd) for _ in range(n)]
    Ppd, Dd, Gd, Sd = [None] * n, [None] * n, [None] * n, [None] * n
    for k in reversed(model.order):
        S, P, Pp, G, Dinv, tb = kin.S[k], art.P[k], art.P_plus[k], art.G[k], art.Dinv[k], art.tau_bar[k]
        qdk = qd[..., model.dof_slice[k]]
        W = Pd[k] @ S
        Dd[k] = bk.mT(S) @ W
        Ppd[k] = tb @ Pd[k] @ bk.mT(tb)
        Sd[k] = model.joints[k].subspace_rate(S, qdk)     # None where S is constant
        if Sd[k] is not None:    # the Ḣ terms of a multi-axis joint
            PSd = P @ Sd[k]
            W = W + PSd
            Dd[k] = Dd[k] + bk.mT(S) @ PSd + bk.mT(PSd) @ S
            GSdP = G @ bk.mT(Pp @ Sd[k])
            Gd[k] = tb @ W @ Dinv - G @ bk.mT(Sd[k]) @ G
            Ppd[k] = Ppd[k] - GSdP - bk.mT(GSdP)
        else:
            Sd[k] = bk.zeros(S.shape, S, qd)
            Gd[k] = tb @ W @ Dinv
        p = model.parents[k]
        if p != -1:
            C = crm(bk.mv(S, qdk))
            PpC = Pp @ C
            X = kin.Xup[k]
            Pd[p] = Pd[p] + bk.mT(X) @ (Ppd[k] - bk.mT(PpC) - PpC) @ X
    return ArticulatedRates(Pd, Ppd, Dd, Gd, Sd, art)


def articulated_rates(model: Model, q, qd) -> ArticulatedRates:
    r"""Ṗ, Ṗ⁺, Ḋ, Ġ of the articulated quantities along the motion (q, θ̇), by the inward recursion J6.

    .. math::
        \dot P(k) = Σ_c {}^cX_k^* [\dot P^+(c) − \mathrm{crm}(s_c)^*P^+(c) − P^+(c)\mathrm{crm}(s_c)] {}^cX_k,
        \quad \dot D = H\dot P H^*,\ \dot G = \bar τ \dot P H^* D^{-1},\ \dot P^+ = \bar τ\dot P\bar τ^*

    for 1-dof joints; multi-axis joints add the Ṡ terms of the module docstring.  O(n).

    Parameters
    ----------
    model : Model
    q, qd : array_like, shape (..., N)

    Returns
    -------
    ArticulatedRates

    Examples
    --------
    >>> import numpy as np, opalg
    >>> from opalg import quasi
    >>> m = opalg.random_model(5, "tree", seed=0)
    >>> q, qd = np.random.default_rng(0).normal(size=(2, m.ndof))
    >>> r = quasi.articulated_rates(m, q, qd)
    >>> h = 1e-6                                          # central difference of P(0)
    >>> fd = (opalg.articulated(m, q + h * qd).P[0] - opalg.articulated(m, q - h * qd).P[0]) / (2 * h)
    >>> bool(np.allclose(r.P_dot[0], fd, atol=1e-6 * abs(fd).max()))
    True
    """
    q = check_state(model, q, "q")
    qd = check_state(model, qd, "qd")
    broadcast_batch(model, q=q, qd=qd)

    def run():
        kin = body_kinematics(model, q, validate=False)
        return rates_pass(model, kin, articulated(model, q, kin), qd)

    return overflow_guard("articulated_rates", run, {"q": q, "qd": qd},
                          lambda r: [*r.P_dot, *r.D_dot, *r.G_dot])
