r"""∂ℳ/∂θ, the Christoffel symbols and C(θ, θ̇) from the tangent Newton–Euler recursion (docs/REFERENCE.md E16, E17).

ℳ e_j is the RNEA with θ̇ = 0, θ̈ = e_j and no gravity (C3), so its tangent recursion (E14)
along the N θ-directions gives the column ∂ℳ e_j/∂θ; N columns cost O(n·N²) per state, the size
of the output's N³ entries over n.
"""

from __future__ import annotations

import numpy as np

from opalg import _backend as bk
from opalg.algorithms.derivatives import tangent_rnea
from opalg.model._checks import refuse_free
from opalg.model.kinematics import body_kinematics, check_state, chunked
from opalg.model.multibody import Model


@chunked(1)
def mass_matrix_derivatives(model: Model, q) -> np.ndarray:
    r"""∂ℳ/∂θ as an array ``dM[..., i, j, k] = ∂ℳ_ij/∂θ_k`` (docs/REFERENCE.md E16).

    Differentiates ℳ = HφMφ*H* (C3) by E13:

    .. math::
        \frac{∂ℳ}{∂θ_k} = ∂H\,φMφ^*H^* + H\,φ\,∂ℰφ\,φ\,Mφ^*H^* + (\,\cdot\,)^*,

    evaluated column by column as the tangent recursion of the RNEA at θ̇ = 0, θ̈ = e_j, without
    gravity.  Free joints: tangent-space derivative, d/dε ℳ(integrate(model, q, ε e_k)) (K8).

    Parameters
    ----------
    model : Model
    q : array_like, shape (..., nq)

    Returns
    -------
    ndarray, shape (..., N, N, N)

    Examples
    --------
    >>> import numpy as np, opalg
    >>> from opalg.algorithms.derivatives_inertia import mass_matrix_derivatives
    >>> m = opalg.random_model(4, seed=0)
    >>> q = np.random.default_rng(0).normal(size=m.ndof)
    >>> dM = mass_matrix_derivatives(m, q)
    >>> h = 1e-30
    >>> bool(np.allclose(dM[..., 1], opalg.crba(m, q + 1j * h * np.eye(m.ndof)[1]).imag / h))
    True
    """
    N = model.ndof
    qb = q[..., None, :]                                      # one copy per column j of ℳ
    kin = body_kinematics(model, qb, validate=False)
    eye = bk.eye(N, q)
    dq, _ = tangent_rnea(model, kin, bk.zeros((N,), q), eye, None, False, wrt_qd=False)
    return np.swapaxes(dq, -3, -2)                            # [..., j, i, k] -> [..., i, j, k]


def christoffel(model: Model, q) -> np.ndarray:
    r"""Christoffel symbols of the first kind ``Γ[..., i, j, k]`` of ℳ (docs/REFERENCE.md E17).

    .. math::
        Γ_{ijk} = \tfrac12\left(\frac{∂ℳ_{ij}}{∂θ_k} + \frac{∂ℳ_{ik}}{∂θ_j} − \frac{∂ℳ_{jk}}{∂θ_i}\right),
        \qquad C(θ, θ̇)_{ij} = Σ_k Γ_{ijk}\,\dot θ_k,\qquad C(θ, θ̇)\,\dot θ = \mathrm{bias}|_{g=0},

    from :func:`mass_matrix_derivatives`.  The symmetric form needs ∂/∂θ_j and ∂/∂θ_k to commute,
    which fails for the tangent coordinates of a free joint: models with free joints are refused.

    Raises
    ------
    ModelError
        If the model has a free joint.

    Examples
    --------
    >>> import numpy as np, opalg
    >>> from opalg.algorithms.derivatives_inertia import christoffel
    >>> m = opalg.random_model(3, seed=1)
    >>> G = christoffel(m, np.zeros(m.ndof))
    >>> bool(np.allclose(G, np.swapaxes(G, -1, -2)))       # Γ_ijk = Γ_ikj
    True
    """
    refuse_free(model, "christoffel", "the tangent derivatives of a free joint do not commute")
    dM = mass_matrix_derivatives(model, q)
    return (dM + np.swapaxes(dM, -1, -2) - np.moveaxis(dM, -1, -3)) / 2


def coriolis_matrix(model: Model, q, qd) -> np.ndarray:
    r"""C(θ, θ̇) = Σ_k Γ_{ijk} θ̇_k, the Coriolis matrix of the Christoffel symbols (E17).

    C θ̇ is the velocity part of the bias, and ℳ̇ − 2C is skew-symmetric.

    Examples
    --------
    >>> import numpy as np, opalg
    >>> from opalg.algorithms.derivatives_inertia import coriolis_matrix
    >>> m = opalg.random_model(4, "tree", seed=2)
    >>> q, qd = np.random.default_rng(0).normal(size=(2, m.ndof))
    >>> bool(np.allclose(coriolis_matrix(m, q, qd) @ qd, opalg.bias(m, q, qd, gravity=False)))
    True
    """
    qd = check_state(model, qd, "qd")
    G = christoffel(model, q)
    return (G * qd[..., None, None, :]).sum(-1)
