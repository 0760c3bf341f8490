r"""The sensitivity of the Riccati sweep and of the innovations factors (docs/REFERENCE.md E18, E19).

Differentiating E1 along θ_{j,i} with E13 (∂φ(℘k,k) = φ(℘k,k) crf(S_i) for the dofs of k, ∂S_l =
−crm(S_i) S_l for the earlier axes of a joint in sequence) and simplifying with E3 gives, inward,

.. math::
    ∂P(k) &= Σ_{c∈C(k)} φ(k,c)\left(∂P^+(c) + [\mathrm{crf}(S_i)P^+ + P^+\mathrm{crf}(S_i)^*]_{θ_{c,i}}\right)φ^*(k,c) \\
    ∂D &= ∂H\,P H^* + H\,∂P\,H^* + H P\,∂H^*,\qquad ∂G = (∂P H^* + P ∂H^* − G ∂D) D^{-1} \\
    ∂P^+ &= τ̄\,∂P\,τ̄^* − τ̄ P ∂H^* G^* − G ∂H P τ̄^*

— a Lyapunov recursion with the closed-loop ψ: ∂P = ℰψ ∂P ℰψ* + (sources of ∂ℰφ, ∂H).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from opalg import _backend as bk
from opalg.algorithms.riccati import articulated
from opalg.model.kinematics import body_kinematics, check_state, overflow_guard
from opalg.model.multibody import Model
from opalg.spatial.vectors import crf, cross_motion


@dataclass
class ArticulatedDerivatives:
    """∂P, ∂P⁺, ∂D, ∂G of :func:`opalg.articulated` along every dof (lists by body label).

    ``dP[k][..., j, :, :]`` is ∂P(k)/∂θ_j (6×6); likewise ``dP_plus`` (6×6), ``dD``
    (n_k×n_k) and ``dG`` (6×n_k).  ``art`` is the factorization they differentiate.
    """

    dP: list
    dP_plus: list
    dD: list
    dG: list
    art: object


def subspace_derivative(joint, S) -> np.ndarray | None:
    r"""∂S/∂θ_{k,i} of one joint (E13): (..., n_k, 6, n_k), [i][:, l] = −S_i × S_l for l < i, else 0.

    None for a joint whose subspace is constant in the body frame (one axis, or a free joint).

    Examples
    --------
    >>> import numpy as np
    >>> from opalg.model.joints import Joint, joint_transform
    >>> from opalg.algorithms.derivatives_riccati import subspace_derivative
    >>> j = Joint(["R", "R"], [[0, 0, 1], [1, 0, 0]])
    >>> q, h = np.array([0.3, -0.4]), 1e-30
    >>> dS = subspace_derivative(j, joint_transform(j, q)[1])
    >>> bool(np.allclose(dS[1], joint_transform(j, q + [0, 1j * h])[1].imag / h))
    True
    """
    nk = S.shape[-1]
    if nk == 1 or joint.free:
        return None
    Sc = bk.mT(S)
    cr = cross_motion(Sc[..., None, :, :], Sc[..., :, None, :])      # [i, l] = S_l × S_i = −S_i × S_l
    cr = cr * np.tril(np.ones((nk, nk)), -1)[:, :, None]           # only l < i
    return bk.mT(cr)                                                  # (..., i, 6, l)


def articulated_derivatives(model: Model, q) -> ArticulatedDerivatives:
    r"""The derivative of the Riccati sweep, ∂P, ∂P⁺, ∂D, ∂G along every dof, O(n·N) (E18, E19).

    .. math::
        ∂P = ℰψ\,∂P\,ℰψ^* + ∂ℰφ\,P^+ℰφ^* + ℰφ P^+ ∂ℰφ^* − ℰψ P ∂H^* K^* − K ∂H P ℰψ^*,

    evaluated inward body by body as in the module docstring, with ∂D, ∂G from ∂P.  Free joints:
    tangent-space derivative (K8).

    Parameters
    ----------
    model : Model
    q : array_like, shape (..., nq)

    Returns
    -------
    ArticulatedDerivatives

    Examples
    --------
    >>> import numpy as np, opalg
    >>> from opalg.algorithms.derivatives_riccati import articulated_derivatives
    >>> m = opalg.random_model(4, "tree", seed=0)
    >>> q, h = np.random.default_rng(0).normal(size=m.ndof), 1e-30
    >>> dA = articulated_derivatives(m, q)
    >>> P1 = opalg.articulated(m, q + 1j * h * np.eye(m.ndof)[2]).P
    >>> bool(all(np.allclose(dA.dP[k][..., 2, :, :], P1[k].imag / h) for k in range(m.n)))
    True
    """
    q = check_state(model, q, "q")
    return overflow_guard("articulated_derivatives", lambda: _sweep(model, q), {"q": q},
                          lambda d: d.dP + d.dD)


def _sweep(model: Model, q) -> ArticulatedDerivatives:
    n, N = model.n, model.ndof
    kin = body_kinematics(model, q, validate=False)
    art = articulated(model, q, kin)
    batch = kin.batch
    likes = (art.P[0], q)
    dP = [bk.zeros(batch + (N, 6, 6), *likes) for _ in range(n)]
    dPp, dD, dG = [None] * n, [None] * n, [None] * n
    for k in reversed(model.order):
        sl = model.dof_slice[k]
        o, nk = sl.start, sl.stop - sl.start
        S, P, Pp, X = kin.S[k], art.P[k], art.P_plus[k], kin.Xup[k]
        G, Dinv, tb = art.G[k], art.Dinv[k], art.tau_bar[k]
        Sb, Gb = S[..., None, :, :], G[..., None, :, :]             # broadcast over the directions
        dPk = dP[k]
        dDk = bk.mT(Sb) @ dPk @ Sb
        dS = subspace_derivative(model.joints[k], S)
        if dS is not None:
            own = bk.mT(dS) @ P[..., None, :, :] @ S[..., None, :, :]
            dDk[..., o:o + nk, :, :] += own + bk.mT(own)
        dGk = dPk @ Sb - Gb @ dDk
        if dS is not None:
            dGk[..., o:o + nk, :, :] += P[..., None, :, :] @ dS
        dGk = dGk @ Dinv[..., None, :, :]
        tbb = tb[..., None, :, :]
        dPpk = tbb @ dPk @ bk.mT(tbb)
        if dS is not None:
            corr = tbb @ P[..., None, :, :] @ dS @ bk.mT(G)[..., None, :, :]
            dPpk[..., o:o + nk, :, :] -= corr + bk.mT(corr)
        dPp[k], dD[k], dG[k] = dPpk, dDk, dGk
        p = model.parents[k]
        if p != -1:
            inner = dPpk + 0                                        # a copy: dP⁺(k) is returned
            C = crf(bk.mT(S))                                       # (..., n_k, 6, 6): crf(S_i)
            src = C @ Pp[..., None, :, :]
            inner[..., o:o + nk, :, :] += src + bk.mT(src)
            Xb = X[..., None, :, :]
            dP[p] = dP[p] + bk.mT(Xb) @ inner @ Xb
    return ArticulatedDerivatives(dP, dPp, dD, dG, art)
