r"""Computer-algebra (sympy) Lagrangian modelling of rooted-tree multi-rigid-body systems.

Re-derivation of Huang, Huang & Zhu (1998, J. National Univ. of Defense Technology 20(2)) with sympy.

Topology
    ``T[j-1]`` is the inner body of body ``B_j`` (paper labels: bodies 1..n, 0 = root B0).
    B0 is fixed (its frame is the inertial frame) or moves as prescribed (see below).
Hinge ``O_j`` (all vectors of the hinge in the *inner* body frame)
    ``offset`` d_j: position of O_j in the inner frame (from the inner body's origin);
    ``NT`` translations Z_js along unit vectors k_js, ``NR`` Euler angles.
    The body frame origin is O_j + Σ k_js Z_js; the body frame is then rotated.
Euler convention (checked against the paper's Ω_j formula)
    ``G_j = Tz(H_j1) Tx(H_j3) Tz(H_j2)`` with the *passive* matrices
    ``Tz(a) = [[c, s, 0], [-s, c, 0], [0, 0, 1]]``, ``Tx(a) = [[1, 0, 0], [0, c, s], [0, -s, c]]``:
    G_j maps inner-body coordinates to body-j coordinates (``x_j = G_j x_inner``), i.e.
    ``G_j = (^innerR_j)^T``.  Read from the inner frame, the body is turned first about z by
    H_j2, then about the new x by H_j3, then about the new z by H_j1.  With NR = 2 the
    hinge is ``G = Tz(H_j1) Tx(H_j3)``, with NR = 1 ``G = Tz(H_j1)``.
    Relative angular velocity (body coords, NR = 3):
    ``Ω_j = [H2' sH3 sH1 + H3' cH1, H2' sH3 cH1 − H3' sH1, H1' + H2' cH3]`` (the paper's 1.3).
q order
    bodies j = 1..n in label order; per body ``Z_j1..Z_jNT`` then ``H_j1, H_j2, H_j3``
    (those present).  :meth:`TreeSystem.to_model` builds one single-axis opalg body per
    coordinate, *label = q index*, chained in application order (prismatic axes, then z(H2),
    x(H3), z(H1)); the intermediate frames are massless, the last one carries B_j's inertia.
Equations
    ``M(q) q̈ + bias(q, q̇, t) = Q`` with ``bias = d/dt(∂T/∂q̇) − ∂T/∂q − M q̈ + ∂U/∂q`` (Lagrange),
    ``M = Σ m_j J_vjᵀ J_vj + J_ωjᵀ I_j J_ωj`` from the partial velocities (= ∂²T/∂q̇²).

Prescribed root
    ``TreeSystem(..., base=RootMotion(position=r0(t), angles=(H01, H02, H03)(t)))`` moves B0
    along explicit functions of the symbol :data:`t`; its direction cosine matrix is
    ``G0 = Tz(H01) Tx(H03) Tz(H02)``, so ``A_j = G_j ⋯ G_1 G0``.  M(q) is unchanged, the bias
    gains the root's velocity and acceleration terms and depends on t.

Modules: :mod:`~opalg.symbolic.data` (input data and its checks), :mod:`~opalg.symbolic.tree`
(TreeSystem: kinematics, energies, Lagrange's equations), :mod:`~opalg.symbolic.numeric`
(lambdify; the simulation through :func:`opalg.simulate.integrate`, an
:class:`opalg.simulate.Trajectory` with the energy balance), :mod:`~opalg.symbolic.recursive_bias`
(the bias with outward-built accelerations), :mod:`~opalg.symbolic.model_route` (the
same system as an opalg Model), :mod:`~opalg.symbolic.free_root` and
:mod:`~opalg.symbolic.free_run` (a free-floating body on an opalg FreeJoint, the state map, and
the deployment with a free truss: docs/REFERENCE.md K13), :mod:`~opalg.symbolic.examples` (the paper's 5-body topology
T = (0, 1, 1, 1, 2) with the suite's own illustrative bodies, hinges, springs and dampers, and
the drawing helpers).
"""

from opalg.symbolic.data import Body, Hinge, RootMotion, Tx, Tz, t
from opalg.symbolic.examples import (
    COLOURS, ROLES, DeploymentSetup, box_inertia, box_outlines, deployable_example, deployment_setup,
    draw_outlines)
from opalg.symbolic.model_route import ROOT_NAMES, carriers, root_state, to_model
from opalg.symbolic.free_root import (
    FREE_COLOURS, FREE_ROLES, euler_jacobian, free_bodies, free_root_model, free_state, operator_poses)
from opalg.symbolic.free_run import FreeDeployment, free_deployment
from opalg.symbolic.numeric import SingularConfiguration, pose_function, simulate
from opalg.simulate import Trajectory     # what simulate returns (the one result type; this address kept)
from opalg.symbolic.tree import TreeSystem

__all__ = ["COLOURS", "Body", "DeploymentSetup", "FREE_COLOURS", "FREE_ROLES", "FreeDeployment", "Hinge",
           "ROLES", "ROOT_NAMES", "RootMotion", "SingularConfiguration", "Trajectory", "TreeSystem", "Tx", "Tz",
           "box_inertia", "box_outlines", "carriers", "deployable_example", "deployment_setup", "draw_outlines",
           "euler_jacobian", "free_bodies", "free_deployment", "free_root_model", "free_state", "operator_poses",
           "pose_function", "root_state", "simulate", "t", "to_model"]
