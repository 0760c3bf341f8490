"""Independent oracle for opalg.flex: node poses as 4x4 homogeneous matrices.

Nothing here uses opalg's transforms, joints or recursions: every element's world pose
(body hubs, nodes) is composed from rotation matrices, the node Jacobians come from a
complex step of those poses (body-frame velocity = (g⁻¹ ∂g/∂x_i)^∨), and

    ℳ = Σ_elements J_eᵀ M_e J_e,     U = −Σ_e m_e gᵀ(p_e + R_e c_e) + ½ Σ_k η_kᵀ K_k η_k.

Node kinematics (the modelling choice of opalg.flex.body): node j of body k is at
x_j + Φ_j η, turned by Rx(ψ1) Ry(ψ2) Rz(ψ3), ψ = Ψ_j η.
"""

from __future__ import annotations

import numpy as np

from opalg.course.exercises.nb14 import random_flex_tree
from opalg.flex import FlexModel

H_CS = 1e-30  # complex step: no subtraction, so any tiny step is exact to rounding


def _rot(axis, q):
    s = np.asarray(axis, float)
    S = np.array([[0, -s[2], s[1]], [s[2], 0, -s[0]], [-s[1], s[0], 0]])
    return np.eye(3) + np.sin(q) * S + (1 - np.cos(q)) * (S @ S)


def _g(R, p):
    g = np.zeros((4, 4), dtype=np.result_type(R, p))
    g[:3, :3], g[:3, 3], g[3, 3] = R, p, 1
    return g


def joint_pose(joint, q):
    """Pose of the body frame in the joint frame: axis after axis (R, P, H)."""
    g = np.eye(4, dtype=np.result_type(q, float))
    for kind, axis, h, qi in zip(joint.kinds, joint.axes, joint.pitches, q):
        if kind == "R":
            gi = _g(_rot(axis, qi), np.zeros(3))
        elif kind == "P":
            gi = _g(np.eye(3), qi * np.asarray(axis))
        else:
            gi = _g(_rot(axis, qi), h * qi * np.asarray(axis))
        g = g @ gi
    return g


def node_pose(body, j, eta):
    u, psi = body.Phi[j] @ eta, body.Psi[j] @ eta
    R = _rot([1, 0, 0], psi[0]) @ _rot([0, 1, 0], psi[1]) @ _rot([0, 0, 1], psi[2])
    return _g(np.eye(3), body.node_positions[j] + u) @ _g(R, np.zeros(3))


def element_poses(fm: FlexModel, x):
    """[(pose, M_6x6)] of every hub and node of the model at coordinates x."""
    gb = [None] * fm.n
    out = []
    for k in fm.order:
        p, a = fm.parents[k], fm.attach[k]
        R_T, r_T = fm.placements[k]
        base = np.eye(4) if p < 0 else gb[p] @ (np.eye(4) if a < 0 else node_pose(fm.bodies[p], a, x[fm.eta_slice[p]]))
        gb[k] = base @ _g(R_T, r_T) @ joint_pose(fm.joints[k], x[fm.theta_slice[k]])
        b = fm.bodies[k]
        out.append((gb[k], b.M_hub, b.hub))
        for j in range(b.p):
            out.append((gb[k] @ node_pose(b, j, x[fm.eta_slice[k]]), b.M_nodes[j], b.node_inertias[j]))
    return out


def jacobians(fm, x):
    """Body-frame Jacobians (6 x N) of every element by complex step, and the inertias."""
    x = np.asarray(x, float)
    base = element_poses(fm, x)
    J = [np.zeros((6, fm.ndof)) for _ in base]
    for i in range(fm.ndof):
        xp = x.astype(complex)
        xp[i] += 1j * H_CS
        for e, (g, _, _) in enumerate(element_poses(fm, xp)):
            dg = g.imag / H_CS
            g0 = base[e][0]
            W = np.linalg.inv(g0) @ dg
            J[e][:3, i] = [W[2, 1], W[0, 2], W[1, 0]]
            J[e][3:, i] = W[:3, 3]
    return J, [M for _, M, _ in base]


def mass_matrix(fm, x):
    J, M = jacobians(fm, x)
    return sum(Je.T @ Me @ Je for Je, Me in zip(J, M))


def potential(fm, x):
    """Gravity potential of every element plus the modal strain energy (complex-safe)."""
    U = 0
    for g, _, inert in element_poses(fm, x):
        c = g[:3, :3] @ np.asarray(inert.com, float) + g[:3, 3]
        U = U - float(inert.mass) * fm.gravity @ c
    for k, b in enumerate(fm.bodies):
        e = x[fm.eta_slice[k]]
        U = U + 0.5 * e @ b.K @ e
    return U


def grad_potential(fm, x):
    out = np.zeros(fm.ndof)
    for i in range(fm.ndof):
        xp = np.asarray(x, complex)
        xp[i] += 1j * H_CS
        out[i] = potential(fm, xp).imag / H_CS
    return out


def random_flex_model(n, topology, seed, max_modes=3, gravity=(0.0, 0.0, -9.81)):
    """Random flexible tree: opalg.course.exercises.nb14.random_flex_tree (topology, every joint kind
    and placements of opalg.random_model, random hubs, 1–4 nodes per body with node 0 sometimes
    massless, 0..max_modes modes, SPD stiffness, random attachment nodes), plus a random PSD
    damping on every body.  Only test data: no quantity checked here comes from it."""
    fm = random_flex_tree(n, topology, seed, max_modes, gravity)
    rng = np.random.default_rng([seed, 1])
    for b in fm.bodies:
        C = rng.normal(size=(b.m, b.m))
        b.D = 0.1 * C @ C.T
    return fm
