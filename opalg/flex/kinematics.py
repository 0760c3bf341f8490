r"""Kinematics of the enlarged nodes: Φ* blocks, 𝓜(k), a(k), b(k) (docs/REFERENCE.md K3, K4).

**Node j of body k** is reached from the body frame by a six-axis "joint" PPPRRR (x, y, z
translations, then XYZ rotations) with coordinates q_j = Q_j η = [Φ_j η; Ψ_j η], after the
constant offset x_j.  So, with :func:`opalg.model.joints.joint_transform` of that joint,

.. math::
    ^jX_k(η) = X_J(q_j)\,X_T(x_j),\qquad Π_j(η) = S_j(q_j)\,Q_j,\qquad
    V_j = {}^jX_k V_k + Π_j η̇_k ,

Π_j the *modal spatial influence vector* of node j (m columns, node axes), and
B_j = [Π_j, ^jX_k] maps 𝒱(k) = [η̇_k; V_k] to V_j.  The body-frame derivative of V_j is
α_j = B_j 𝒜(k) + c_j with c_j = V_j × Π_jη̇ + c_J(q_j, q̇_j) (K2's velocity-product term).

**Enlarged node k** (hub + nodes):

.. math::
    𝓜(k) = \mathrm{diag}(0, M_{hub}) + Σ_j B_j^* M_j B_j ,\qquad
    b(k) = [0; V_k ×^* M_{hub} V_k] + Σ_j B_j^*(M_j c_j + V_j ×^* M_j V_j).

**Edge (℘, k)**, body k hanging from node n of ℘ (X_n = ^kX_n = X_J(θ_k) X_T(k)):

.. math::
    Φ^*(℘,k) = \begin{bmatrix}0 & 0\\ X_n Π_n & X_n\,{}^nX_℘\end{bmatrix},\qquad
    a(k) = [0;\ X_n c_n + V_k × H^*θ̇_k + c_J(θ_k, θ̇_k)],

and ℋ*(k) = diag(I_{m_k}, H*(k)).  Roots get the base acceleration −g in a(k) (pitfall 6).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from opalg import _backend as bk
from opalg.model import _validate
from opalg.model.joints import Joint, joint_transform, joint_velocity
from opalg.spatial.vectors import cross_force, cross_motion, motion_transform
from opalg.flex.body import FlexBody

#: The joint of a node relative to its undeformed place: three translations, then three
#: small rotations, about the body axes x, y, z (docs/REFERENCE.md K3).
NODE_JOINT = Joint(["P", "P", "P", "R", "R", "R"], np.vstack([np.eye(3), np.eye(3)]), name="node")

def _dtype(*arrays):
    """object if any argument holds sympy expressions, else complex or float (complex step)."""
    if bk.is_symbolic(*[a for a in arrays if a is not None]):
        return object
    return complex if any(np.iscomplexobj(a) for a in arrays if a is not None) else float


def _zeros(shape, dt) -> np.ndarray:
    """Zeros of dtype ``dt``; sympy's 0 in an object array (not the int 0 numpy would put)."""
    return bk.zeros(shape, np.empty(0, dt)) if dt is object else np.zeros(shape, dt)


def _eye(n: int, dt) -> np.ndarray:
    return bk.eye(n, np.empty(0, dt)) if dt is object else np.eye(n, dtype=dt)


def _offsets(body: FlexBody) -> np.ndarray:
    """X_T(x_j) = motion_transform(I, x_j) of every node (p, 6, 6): constant, so cached on the body.

    Keyed by the bytes of the (float) node positions, so a body whose positions are replaced
    or edited in place never sees a stale value; symbolic positions are not cached.
    """
    pos = body.node_positions
    if pos.dtype != np.float64:
        return motion_transform(np.eye(3), pos)
    key = pos.tobytes()
    cached = body.__dict__.get("_node_offsets")
    if cached is None or cached[0] != key:
        X = motion_transform(np.eye(3), pos)
        X.setflags(write=False)
        cached = body.__dict__["_node_offsets"] = (key, X)
    return cached[1]


def node_transforms(body: FlexBody, eta, etad=None):
    """^jX_k (p, 6, 6), Π_j (p, 6, m) and, with ``etad``, V_rel = Π_j η̇ and c_J (p, 6) of every node.

    Examples
    --------
    >>> import numpy as np
    >>> from opalg.flex import examples
    >>> from opalg.flex.kinematics import node_transforms
    >>> b = examples.two_link_arm(modes=1).bodies[0]
    >>> X, Pi = node_transforms(b, np.zeros(1))[:2]
    >>> bool(np.allclose(Pi[-1][3:], b.Phi[-1]))      # at η = 0, Π = [Ψ; Φ] (angular first)
    True
    """
    p = body.p
    dt = _dtype(body.Q, eta, etad)
    if p == 0:
        z = _zeros((0, 6), dt)
        return _zeros((0, 6, 6), dt), _zeros((0, 6, body.m), dt), z, z
    q = body.Q @ np.asarray(eta, dt)                                   # (p, 6)
    XJ, S = joint_transform(NODE_JOINT, q)
    X = XJ @ _offsets(body)
    Pi = S @ body.Q
    if etad is None:
        return X, Pi, None, None
    vJ, cJ = joint_velocity(S, body.Q @ np.asarray(etad, dt))
    return X, Pi, vJ, cJ + _zeros(vJ.shape, dt)


def node_inertia(body: FlexBody, eta) -> np.ndarray:
    """𝓜(k) = diag(0, M_hub) + Σ_j B_j* M_j B_j, shape (m + 6, m + 6) (docs/REFERENCE.md K3).

    Examples
    --------
    >>> import numpy as np
    >>> from opalg.flex import examples
    >>> from opalg.flex.kinematics import node_inertia
    >>> M = node_inertia(examples.two_link_arm(modes=2).bodies[0], np.zeros(2))
    >>> M.shape, bool(np.all(np.linalg.eigvalsh(M) > 0))
    ((8, 8), True)
    """
    return _node_inertia(body, *node_transforms(body, eta)[:2])


def _node_inertia(body: FlexBody, X: np.ndarray, Pi: np.ndarray) -> np.ndarray:
    """:func:`node_inertia` from the node transforms ^jX_k and Π_j already computed."""
    B = np.concatenate([Pi, X], axis=-1)                                # (p, 6, m + 6)
    if B.dtype.kind == "f" and body.M_nodes.dtype.kind == "f":
        # Σ_j B_j* (M_j B_j) as one (m+6, 6p) @ (6p, m+6) product: np.einsum's three-operand
        # loop over all five indices costs ~15x more at p = 9 nodes.
        Bf = B.reshape(-1, B.shape[-1])
        out = Bf.T @ (body.M_nodes @ B).reshape(Bf.shape)
    else:
        out = np.einsum("jai,jab,jbk->ik", B, body.M_nodes, B)
    if body.M_hub.dtype == object and out.dtype != object:
        out = out.astype(object)                                        # symbolic hub, numeric nodes
    out[body.m:, body.m:] += body.M_hub
    return out


@dataclass
class FlexKinematics:
    """Per-body arrays of one state (lists indexed by body).

    ``Phi_star[k]``: Φ*(℘,k) ((m_k+6) × (m_℘+6)), None for roots; ``X_root[k]``: ^kX_0
    for roots; ``Hs[k]``: ℋ*(k) ((m_k+6) × (m_k+n_k)); ``Mcal[k]``: 𝓜(k); with rates
    ``V[k]`` (body velocity), ``a[k]``, ``b[k]`` (length m_k + 6).
    """

    Phi_star: list
    X_root: list
    Hs: list
    Mcal: list
    V: list | None = None
    dtype: type = float
    a: list | None = None
    b: list | None = None


def flex_kinematics(fm, x, v=None, gravity: bool = True) -> FlexKinematics:
    """Φ*, ℋ*, 𝓜 and (with ``v``) V, a, b of every enlarged node (module docstring).

    Examples
    --------
    >>> import numpy as np
    >>> from opalg.flex import examples
    >>> from opalg.flex.kinematics import flex_kinematics
    >>> fm = examples.two_link_arm(modes=2)
    >>> kin = flex_kinematics(fm, np.zeros(fm.ndof))
    >>> kin.Phi_star[1].shape, kin.Hs[1].shape
    ((8, 8), (8, 3))
    """
    _validate.flag(gravity, "gravity", "opalg.flex")
    n = fm.n
    dt = object if fm.symbolic else _dtype(x, v)
    nodes = [node_transforms(b, x[fm.eta_slice[k]], None if v is None else v[fm.eta_slice[k]])
             for k, b in enumerate(fm.bodies)]
    Phi_star, X_root, Hs, Mcal = [None] * n, [None] * n, [None] * n, [None] * n
    V, a, b = [None] * n, [None] * n, [None] * n
    a0 = _zeros(6, dt)
    if gravity:
        a0[3:] = -fm.gravity
    for k in fm.order:
        body, p, nd = fm.bodies[k], fm.parents[k], fm.attach[k]
        m = body.m
        XJ, S = joint_transform(fm.joints[k], np.asarray(x[fm.theta_slice[k]], dt))
        Xn = XJ @ fm.X_tree[k]                                           # ^kX_n (n: attach frame)
        Hk = _zeros((m + 6, m + fm.joint_sizes[k]), dt)
        Hk[:m, :m] = _eye(m, dt)
        Hk[m:, m:] = S
        Hs[k] = Hk
        X, Pi, vJn, cJn = nodes[k]
        Mcal[k] = _node_inertia(body, X, Pi)                              # the node transforms once
        if p == -1:
            X_root[k] = Xn
        else:
            mp = fm.bodies[p].m
            Xpn, Pin = (_eye(6, dt), _zeros((6, mp), dt)) if nd < 0 else (nodes[p][0][nd], nodes[p][1][nd])
            Ps = _zeros((m + 6, mp + 6), dt)
            Ps[m:, :mp] = Xn @ Pin
            Ps[m:, mp:] = Xn @ Xpn
            Phi_star[k] = Ps
        if v is None:
            continue
        vJ, cJ = joint_velocity(S, np.asarray(v[fm.theta_slice[k]], dt))
        if p == -1:
            V[k] = vJ
            acc = Xn @ a0
        else:
            Vn = Phi_star[k][m:] @ np.concatenate([v[fm.eta_slice[p]], V[p]])   # ^kX_n V_n
            V[k] = Vn + vJ
            if nd >= 0:
                Vnode = nodes[p][0][nd] @ V[p] + nodes[p][2][nd]
                acc = Xn @ (cross_motion(Vnode, nodes[p][2][nd]) + nodes[p][3][nd])
            else:
                acc = _zeros(6, dt)
        a[k] = np.concatenate([_zeros(m, dt), acc + cross_motion(V[k], vJ) + cJ])
        # b(k): hub gyroscopic force plus each node's, projected by B_j*.
        bk_ = _zeros(m + 6, dt)
        bk_[m:] = cross_force(V[k], body.M_hub @ V[k])
        if body.p:
            Vj = X @ V[k] + vJn                                          # (p, 6)
            cj = cross_motion(Vj, vJn) + cJn
            Mj = body.M_nodes
            fj = np.einsum("jab,jb->ja", Mj, cj) + cross_force(Vj, np.einsum("jab,jb->ja", Mj, Vj))
            bk_[:m] += np.einsum("jai,ja->i", Pi, fj)
            bk_[m:] += np.einsum("jai,ja->i", X, fj)
        b[k] = bk_
    kin = FlexKinematics(Phi_star, X_root, Hs, Mcal, dtype=dt)
    if v is not None:
        kin.V, kin.a, kin.b = V, a, b
    return kin
