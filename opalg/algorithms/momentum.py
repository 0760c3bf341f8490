r"""The system's spatial momentum, its centre of mass, the centroidal momentum matrix and the mechanical energy.

docs/REFERENCE.md K10.  The momentum of the subtree of body k, in body-k coordinates, is
the k-th block of :math:`\phi M V` (:math:`V = \phi^* H^* v`): the inward sweep
:math:`h_k = M(k) V(k) + \sum_{c \in C(k)} {}^cX_k^{\,T} h_c` of the operator φ.  The
whole system's momentum about the inertial origin, in inertial coordinates, collects
the roots: :math:`h_0 = \sum_{r} ({}^rX_0)^T h_r`, i.e. :math:`h_0 = A_0 v` with
:math:`A_0 = \mathcal{B}_0^* \phi M \phi^* H^*` linear in v.  About the centre of mass
c (axes still inertial), :math:`h_G = [n_0 - c \times F;\ F]` and
:math:`A_G = X_G^* A_0`, the centroidal momentum matrix.  For a free root r
(S = I₆, K8) the root rows of ℳ are the same momentum in root coordinates:
:math:`h_r = ℳ_{r,:} v`.

Without gravity and external forces h_0 is conserved (K10).
"""

from __future__ import annotations

import numpy as np

from opalg import _backend as bk
from opalg.algorithms.crba import crba
from opalg.model.kinematics import body_kinematics, body_poses, check_state
from opalg.model.multibody import Model
from opalg.simulate._integrate import potential_energy


def subtree_momenta(model: Model, Xup, V) -> list:
    r"""h_k (..., 6), the momentum of the subtree of body k in body-k coordinates, for every k:
    the inward φ sweep :math:`h_k = M(k) V(k) + \sum_{c \in C(k)} {}^cX_k^{\,T} h_c` (K10),
    from the body transforms ``Xup`` and body velocities ``V`` of a kinematics pass.

    Examples
    --------
    >>> import numpy as np, opalg
    >>> from opalg.model.kinematics import body_kinematics
    >>> m = opalg.random_model(3, "chain", seed=0)
    >>> q, v = np.full(m.nv, 0.3), np.ones(m.nv)
    >>> kin = body_kinematics(m, q, v)
    >>> h = subtree_momenta(m, kin.Xup, kin.V)
    >>> k = m.order[0]                       # the root: its rows of ℳv are H(k) h_k
    >>> bool(np.allclose(kin.S[k].T @ h[k], (opalg.crba(m, q) @ v)[m.dof_slice[k]]))
    True
    """
    h = [bk.mv(model.I_spatial[k], V[k]) for k in range(model.n)]
    for k in reversed(model.order):          # inward: the φ sweep
        p = model.parents[k]
        if p != -1:
            h[p] = h[p] + bk.mv(bk.mT(Xup[k]), h[k])
    return h


def spatial_momentum(model: Model, q, v) -> np.ndarray:
    r"""Spatial momentum :math:`h_0 = [n_0; F]` (..., 6) of the whole system, about the
    inertial origin in inertial coordinates (moment first; docs/REFERENCE.md K10).

    ``q`` (..., nq), ``v`` (..., nv); computed by the φ sweep of the module docstring.

    Examples
    --------
    >>> import numpy as np, opalg
    >>> from opalg.algorithms.momentum import spatial_momentum
    >>> m = opalg.random_model(1, seed=0, floating=True)       # one free body
    >>> v = np.array([0, 0, 0, 1.0, 0, 0])                     # translating along its own x
    >>> h = spatial_momentum(m, opalg.neutral(m), v)
    >>> R = opalg.body_poses(m, opalg.neutral(m))[0][0]
    >>> bool(np.allclose(h[3:], m.inertias[0].mass * R[:, 0]))   # F = m ċ
    True
    """
    q = check_state(model, q, "q")
    v = check_state(model, v, "v")
    kin = body_kinematics(model, q, v, gravity=False, validate=False)
    h = subtree_momenta(model, kin.Xup, kin.V)
    roots = [k for k in range(model.n) if model.parents[k] == -1]
    return sum(bk.mv(bk.mT(kin.Xup[r]), h[r]) for r in roots)


def center_of_mass(model: Model, q) -> np.ndarray:
    """Centre of mass c (..., 3) of the system in inertial coordinates (docs/REFERENCE.md K10).

    Examples
    --------
    >>> import numpy as np, opalg
    >>> from opalg.algorithms.momentum import center_of_mass
    >>> arm = opalg.planar_arm([1.0, 1.0], [1.0, 3.0], [0.1, 0.1])
    >>> center_of_mass(arm, np.zeros(2)).tolist()           # (1·0.5 + 3·1.5) / 4
    [1.25, 0.0, 0.0]
    """
    R, p = body_poses(model, q)
    masses = [float(i.mass) for i in model.inertias]
    tot = sum(mk * (p[k] + bk.mv(R[k], np.asarray(model.inertias[k].com, float)))
              for k, mk in enumerate(masses))
    return tot / sum(masses)


def centroidal_momentum_matrix(model: Model, q) -> np.ndarray:
    r"""A_G (..., 6, nv): the momentum about the centre of mass, inertial axes, is h_G = A_G v (K10).

    Columns are :func:`spatial_momentum` of the unit velocities, moved from the
    inertial origin to the centre of mass: :math:`n_G = n_0 - c \times F`.

    Examples
    --------
    >>> import numpy as np, opalg
    >>> from opalg.algorithms.momentum import centroidal_momentum_matrix, center_of_mass
    >>> m = opalg.random_model(4, "tree", seed=2, floating=True)
    >>> q = opalg.neutral(m)
    >>> A = centroidal_momentum_matrix(m, q)
    >>> mass = sum(i.mass for i in m.inertias)
    >>> bool(np.allclose(A[3:, 3:6], mass * opalg.body_poses(m, q)[0][0]))   # F = m ċ for a base translation
    True
    """
    q = check_state(model, q, "q")
    eye = np.eye(model.nv)
    A0 = np.swapaxes(spatial_momentum(model, q[..., None, :], eye), -1, -2)     # (..., 6, nv)
    c = center_of_mass(model, q)
    n = A0[..., :3, :] - np.cross(c[..., None, :], np.swapaxes(A0[..., 3:, :], -1, -2)).swapaxes(-1, -2)
    return np.concatenate([n, A0[..., 3:, :]], -2)


def mechanical_energy(model: Model, q, qd) -> np.ndarray:
    r"""E = ½θ̇ᵀℳ(q)θ̇ − Σ_k m_k g·c_k(q): kinetic (ℳ by :func:`opalg.crba`, C3) plus gravitational,
    c_k the world mass centre of body k.  Batched over leading axes.

    Examples
    --------
    >>> import numpy as np, opalg
    >>> from opalg.algorithms.momentum import mechanical_energy
    >>> arm = opalg.planar_arm([1.0], [2.0], [0.1])          # g = (0, -9.81, 0)
    >>> round(float(mechanical_energy(arm, [np.pi / 2], [0.0])), 6)   # m g (L/2)
    9.81
    """
    q = check_state(model, q, "q")
    qd = check_state(model, qd, "qd")
    T = 0.5 * np.einsum("...i,...ij,...j->...", qd, crba(model, q), qd)
    return T + potential_energy(model, q)
