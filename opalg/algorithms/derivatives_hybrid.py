r"""Derivatives of hybrid dynamics through the hybrid passes (docs/REFERENCE.md G6).

Hybrid dynamics (G2) solves RNEA(q, θ̇, θ̈) = T for θ̈_p (T_p given) and T_a (θ̈_a given).
Differentiating that equation at the solution,

.. math::
    ℳ\,δ\ddot θ − δT = −\frac{∂\,\mathrm{RNEA}}{∂θ}\Big|_{\ddot θ} δθ − \frac{∂\,\mathrm{RNEA}}{∂\dot θ}\Big|_{\ddot θ} δ\dot θ,

is again a hybrid problem, with no Coriolis terms: its passive forces are δT_p − ∂T_p δx, its
active accelerations δθ̈_a, and it returns δθ̈_p and δT_a − ∂T_a δx.  So one pair of hybrid
passes (G2 with a = b = 0) on 3N right-hand sides gives every derivative, O(n·N) per state, with
the tangent Newton–Euler recursion (E14) for ∂T.  All passive, it is E15 (the ABA derivatives);
all active, the RNEA derivatives.
"""

from __future__ import annotations

from typing import NamedTuple

import numpy as np

from opalg import _backend as bk
from opalg.algorithms.aba import innovations_passes
from opalg.algorithms.derivatives import tangent_rnea
from opalg.algorithms.hybrid import hybrid_on
from opalg.algorithms.riccati import _riccati, check_passive
from opalg.model.kinematics import body_kinematics, chunked
from opalg.model.multibody import Model


class HybridDerivatives(NamedTuple):
    """The derivatives of :func:`opalg.hybrid`'s outputs (θ̈, T) with respect to its inputs
    (q, θ̇, T, θ̈), each (..., N, N): entry [i, j] of ``dqdd_dtau`` is ∂θ̈_i/∂T_j, and so on.
    The columns of the inputs hybrid ignores (T of an active dof, θ̈ of a passive one) are 0;
    the rows of the entries it copies (θ̈ of an active dof, T of a passive one) are those of the
    identity map."""

    dqdd_dq: np.ndarray
    dqdd_dqd: np.ndarray
    dqdd_dtau: np.ndarray
    dqdd_dqdd: np.ndarray
    dtau_dq: np.ndarray
    dtau_dqd: np.ndarray
    dtau_dtau: np.ndarray
    dtau_dqdd: np.ndarray


def hybrid_derivatives(model: Model, q, qd, tau, qdd, passive, f_ext=None,
                       gravity: bool = True) -> HybridDerivatives:
    r"""Derivatives of hybrid dynamics (G2) with respect to q, θ̇ and the given T_p and θ̈_a (G6).

    With R = RNEA, evaluated at the hybrid solution (θ̈, T), and p, a the passive and active dofs:

    .. math::
        \frac{∂\ddot θ_p}{∂x} = −ℳ_{pp}^{-1}\frac{∂R_p}{∂x},\qquad
        \frac{∂T_a}{∂x} = \frac{∂R_a}{∂x} + ℳ_{ap}\frac{∂\ddot θ_p}{∂x}\qquad (x = θ, \dot θ),

    .. math::
        \frac{∂\ddot θ_p}{∂T_p} = ℳ_{pp}^{-1},\quad
        \frac{∂T_a}{∂T_p} = ℳ_{ap}ℳ_{pp}^{-1},\quad
        \frac{∂\ddot θ_p}{∂\ddot θ_a} = −ℳ_{pp}^{-1}ℳ_{pa},\quad
        \frac{∂T_a}{∂\ddot θ_a} = ℳ_{aa} − ℳ_{ap}ℳ_{pp}^{-1}ℳ_{pa}.

    None of these blocks is formed: ∂R comes from the tangent recursion (E14) and the 3N
    right-hand sides [−∂R_p/∂θ, −∂R_p/∂θ̇, I_p | 0, 0, 0, I_a] go through one pair of hybrid
    passes (G2 with a = b = 0, on the factors P_h, D_h, G_h of G1): O(n·N) per state.  With every
    dof passive this is :func:`opalg.aba_derivatives` (E15); with none, the RNEA derivatives
    (E14) and ℳ.

    **Free joints:** the configuration derivative is taken in the tangent space (column i is
    d/dε of the result at ``opalg.integrate(model, q, ε e_i)``, the body-frame twist, K8).

    Parameters
    ----------
    model : Model
    q : array_like, shape (..., nq)
    qd, tau, qdd : array_like, shape (..., N)
        As in :func:`opalg.hybrid`: ``tau`` is read on the passive dofs, ``qdd`` on the active ones.
    passive : array_like of bool, shape (N,)
    f_ext : array_like, shape (..., n, 6), optional
        External forces, fixed in the body frames (C9).
    gravity : bool

    Returns
    -------
    HybridDerivatives
        Eight (..., N, N) arrays: ``dqdd_dq``, ``dqdd_dqd``, ``dqdd_dtau``, ``dqdd_dqdd``,
        ``dtau_dq``, ``dtau_dqd``, ``dtau_dtau``, ``dtau_dqdd``.

    Examples
    --------
    >>> import numpy as np, opalg
    >>> m = opalg.random_model(4, "tree", seed=1)
    >>> rng = np.random.default_rng(0)
    >>> q, qd, tau, qdd = rng.normal(size=(4, m.ndof))
    >>> passive = np.arange(m.ndof) % 2 == 0
    >>> d = opalg.hybrid_derivatives(m, q, qd, tau, qdd, passive)
    >>> h = 1e-30                                   # complex step along θ_1
    >>> qdd_c, tau_c = opalg.hybrid(m, q + 1j * h * np.eye(m.ndof)[1], qd, tau, qdd, passive)
    >>> bool(np.allclose(d.dqdd_dq[:, 1], qdd_c.imag / h) and np.allclose(d.dtau_dq[:, 1], tau_c.imag / h))
    True
    >>> a = ~passive                                # the inertia the actuators feel (G3)
    >>> bool(np.allclose(d.dtau_dqdd[np.ix_(a, a)], opalg.reduced_inertia(m, q, passive)))
    True
    """
    mask = check_passive(model, passive)
    return HybridDerivatives(*_hybrid_derivatives(model, q, qd, tau, qdd, mask, f_ext, gravity))


@chunked(4, forces=("f_ext",))
def _hybrid_derivatives(model: Model, q, qd, tau, qdd, passive, f_ext=None, gravity: bool = True) -> list:
    N = model.ndof
    p, a = passive, ~passive
    Np, Na = int(p.sum()), N - int(p.sum())
    kin = body_kinematics(model, q, qd, gravity, validate=False)
    art = _riccati(model, q, kin, passive)
    qdd_full, _ = hybrid_on(model, kin, art, tau, qdd, f_ext)
    dq, dqd = tangent_rnea(model, kin, qd, qdd_full, f_ext, gravity)
    dR = np.concatenate([dq, dqd], -1)                          # (..., N, 2N): ∂R/∂[θ, θ̇] at the solution
    batch = dR.shape[:-2]
    like = (dR, *art.P)
    # right-hand sides: [−∂R_p/∂x | I_p | 0] as passive forces, [0 | 0 | I_a] as active accelerations
    T_rhs = np.concatenate([-dR[..., p, :], bk.eye(Np, *like) + bk.zeros(batch + (Np, Np), *like),
                            bk.zeros(batch + (Np, Na), *like)], -1)
    A_rhs = np.concatenate([bk.zeros(batch + (Na, 2 * N + Np), *like),
                            bk.eye(Na, *like) + bk.zeros(batch + (Na, Na), *like)], -1)
    res = innovations_passes(model, art, T_rhs, qdd_a=A_rhs)
    out_p, out_a = res.qdd, res.tau                             # (..., N_p, 3N), (..., N_a, 3N)
    pi, ai = np.flatnonzero(p), np.flatnonzero(a)
    dtype = bk.common_dtype(out_p, out_a, dR)
    qdd_d = [np.zeros(batch + (N, N), dtype=dtype) for _ in range(4)]
    tau_d = [np.zeros(batch + (N, N), dtype=dtype) for _ in range(4)]
    for j, cols in enumerate((slice(0, N), slice(N, 2 * N))):   # ∂/∂θ, ∂/∂θ̇
        qdd_d[j][..., pi, :] = out_p[..., :, cols]
        tau_d[j][..., ai, :] = out_a[..., :, cols] + dR[..., a, cols]
    given_p, given_a = slice(2 * N, 2 * N + Np), slice(2 * N + Np, 3 * N)
    qdd_d[2][..., pi[:, None], pi] = out_p[..., :, given_p]     # ∂θ̈_p/∂T_p = ℳ_pp⁻¹
    tau_d[2][..., ai[:, None], pi] = out_a[..., :, given_p]     # ∂T_a/∂T_p = ℳ_apℳ_pp⁻¹
    tau_d[2][..., pi, pi] = 1                                   # T_p is copied
    qdd_d[3][..., pi[:, None], ai] = out_p[..., :, given_a]     # −ℳ_pp⁻¹ℳ_pa
    tau_d[3][..., ai[:, None], ai] = out_a[..., :, given_a]     # ℳ_aa − ℳ_apℳ_pp⁻¹ℳ_pa
    qdd_d[3][..., ai, ai] = 1                                   # θ̈_a is copied
    return qdd_d + tau_d
