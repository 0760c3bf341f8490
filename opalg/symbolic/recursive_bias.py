r"""The bias of a TreeSystem with the body accelerations built outward (``bias(method="recursive")``).

``method="kane"`` differentiates each body's whole velocity expression, ``ω̇_j = (∂ω_j/∂q) q̇``;
its cost grows with the depth of the tree times the size of the composed rotations (for the
deployable on a free 6-DoF truss hinge, ~80 % of the derivation).  Here the same velocity-product
accelerations (q̈ = 0) are built from the inner body's, in body coordinates, with only the
hinge's own terms differentiated (Ġ_j = −Ω̃_j G_j, Huang, Huang & Zhu 1998 §1.3–1.4)::

    ω_j = G ω_p + Ω_j                           ω̇_j = G ω̇_p − Ω_j × (G ω_p) + (∂Ω_j/∂q) q̇
    u_j = G (u_p + ω_p × ρ_j + K Ż)              u̇_j = −Ω_j × u_j + G (u̇_p + ω̇_p × ρ_j + ω_p × K Ż)
    v_Cj = u_j + ω_j × c_j                       v̇_Cj = u̇_j + ω̇_j × c_j

(p = inner body, ρ_j = d_j + K Z, K Ż = Σ k_js Ż_js; for B0 the prescribed ω_0^t, u_0^t and their
t-derivatives, or zero), then the same partial-velocity sum as Kane's
``Σ J_vjᵀ m_j (v̇_Cj + ω_j × v_Cj − R_jᵀ g) + J_ωjᵀ (I_j ω̇_j + ω_j × I_j ω_j)``.
"""

from __future__ import annotations

from operator import matmul as mm

import sympy as sp

from opalg.symbolic.data import hinge_terms, t


def recursive_bias(system) -> sp.Matrix:
    r"""bias(q, q̇, t) of ``system`` (sympy N x 1) with outward-built accelerations (module docstring).

    Equal to ``system.bias("kane")`` and ``system.bias("lagrange")`` as functions; cheaper to
    derive and to lambdify for deep trees.

    Examples
    --------
    >>> import sympy as sp
    >>> from opalg.symbolic import Body, Hinge, TreeSystem
    >>> from opalg.symbolic.recursive_bias import recursive_bias
    >>> g = sp.Symbol("g")
    >>> pend = TreeSystem([0], [Hinge(1)], [Body(2, (1, 0, 0), sp.eye(3))], gravity=(0, -g, 0))
    >>> recursive_bias(pend)
    Matrix([[2*g*cos(H1_1)]])
    """
    kin = system.kinematics()
    qd = sp.Matrix(system.qd)
    vel = {0: (kin[0]["wt"], kin[0]["ut"])}
    acc = {0: (kin[0]["wt"].diff(t), kin[0]["ut"].diff(t))}
    B = sp.zeros(system.N, 1)
    for j in system.order:
        h, b, k = system.hinges[j - 1], system.bodies[j - 1], kin[j]
        G, disp, Kc, Ec = hinge_terms(system.hinge_chain(j), lambda i: system.q[i])
        rho = h.offset + disp
        Om = sum((Ec[i] * system.qd[i] for i in Ec), sp.zeros(3, 1))
        Zd = sum((Kc[i] * system.qd[i] for i in Kc), sp.zeros(3, 1))
        (wp, up), (wdp, udp) = vel[system.T[j - 1]], acc[system.T[j - 1]]
        Gw = mm(G, wp)
        w, u = Gw + Om, mm(G, up + wp.cross(rho) + Zd)
        wd = mm(G, wdp) - Om.cross(Gw) + mm(Om.jacobian(system.q), qd)
        ud = -Om.cross(u) + mm(G, udp + wdp.cross(rho) + wp.cross(Zd))
        vel[j], acc[j] = (w, u), (wd, ud)
        v, vd = u + w.cross(b.com), ud + wd.cross(b.com)
        B += mm(k["Jv"].T, b.mass * (vd + w.cross(v) - mm(k["R"].T, system.gravity)))
        B += mm(k["Jw"].T, mm(b.inertia, wd) + w.cross(mm(b.inertia, w)))
    return B
