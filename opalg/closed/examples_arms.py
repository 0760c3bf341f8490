r"""Examples of several arms holding one object: two planar 3R arms, two Franka Pandas.

docs/REFERENCE.md §10, H1, H9.  Each example returns a :class:`opalg.closed.MultiArm` and a
closed configuration found by inverse kinematics of the grasp frames
(:func:`opalg.closed.grasp.solve_frame_pose`).  :func:`closed_inverse_dynamics` gives motor
torques for a prescribed object motion; :func:`planar_box_trajectory` runs it along a box path.
"""

from __future__ import annotations

import importlib.metadata
from types import SimpleNamespace

import numpy as np

from opalg.model.builders import planar_arm
from opalg.algorithms.rnea import rnea
from opalg.errors import ModelError
from opalg.model.multibody import Inertia, Model
from opalg.algorithms.operational import frame_jacobian
from opalg.spatial.vectors import motion_transform, rotation_about
from opalg.model.urdf import from_urdf
from opalg.closed.grasp import Grasp, frame_drift, solve_frame_pose
from opalg.closed.multiarm import MultiArm

PLANAR_ROWS = [2, 3, 4]     # ω_z, v_x, v_y


def placed(model: Model, R, p) -> Model:
    r"""The same model with its roots moved to the world pose (R, p): placements (R R_T, R r_T + p).

    Examples
    --------
    >>> import numpy as np, opalg
    >>> from opalg.closed.examples_arms import placed
    >>> arm = placed(opalg.planar_arm([1.0], [1.0], [0.1]), np.eye(3), [2.0, 0, 0])
    >>> opalg.body_poses(arm, [0.0])[1][0] + 0.0
    array([2., 0., 0.])
    """
    R, p = np.asarray(R, float), np.asarray(p, float)
    places = [(R @ Rt, R @ rt + p) if model.parents[k] == -1 else (Rt, rt)
              for k, (Rt, rt) in enumerate(model.placements)]
    frames = {nm: (b, R @ Rf, R @ pf + p) if b == -1 else (b, Rf, pf)
              for nm, (b, Rf, pf) in model.link_frames.items()}
    return Model(model.parents, model.joints, places, model.inertias, model.gravity, model.names,
                 model.allow_massless, frames, model.robot_name)


def box_inertia(mass: float, size) -> Inertia:
    """A uniform box of the given mass and edge lengths (a, b, c), mass centre at the origin.

    Examples
    --------
    >>> from opalg.closed.examples_arms import box_inertia
    >>> box_inertia(12.0, (1.0, 2.0, 2.0)).I_com.diagonal()
    array([8., 5., 5.])
    """
    a, b, c = size
    return Inertia(mass, np.zeros(3), mass / 12 * np.diag([b * b + c * c, a * a + c * c, a * a + b * b]))


def X_world(R, p) -> np.ndarray:
    """ᶠX_0 = X(Rᵀ, p) of a frame f with world orientation R and origin p (§3).

    Examples
    --------
    >>> import numpy as np
    >>> from opalg.closed.examples_arms import X_world
    >>> X_world(np.eye(3), [0.0, 0, 1.0]) @ [1.0, 0, 0, 0, 0, 0]   # ω_x at the origin moves f's origin along −y
    array([ 1.,  0.,  0.,  0., -1.,  0.])
    """
    return motion_transform(np.asarray(R, float).T, p)


def _grasp_targets(system: MultiArm, X_o0) -> list:
    return [g.X_eo @ X_o0 for g in system.grasps]


def two_planar_arms(distance: float = 1.6, box=(0.4, 0.2), box_mass: float = 1.0,
                    box_height: float = 1.0, gravity=(0.0, -9.81, 0.0)) -> SimpleNamespace:
    r"""Two planar 3R arms facing each other across ``distance`` hold a box between their tips.

    The arms move in the x–y plane (gravity −y); arm 1's base is turned by π about z. Each
    grasps the box at the middle of one side face (the box's x extent is ``box[0]``), so the
    grasp rows are Π = (ω_z, v_x, v_y) (H9).  The closed configuration puts the box centre at
    (distance/2, box_height), level; it is found by the grasp-frame IK of each arm.

    Returns
    -------
    SimpleNamespace
        ``system`` (MultiArm with rows [2, 3, 4]), ``arms``, ``qs`` (the closed configuration),
        ``X_o0`` (the box pose ᵒX_0), ``object_inertia`` (the box's :class:`opalg.Inertia`).

    Examples
    --------
    >>> import numpy as np
    >>> from opalg.closed.examples_arms import two_planar_arms
    >>> ex = two_planar_arms()
    >>> bool(np.abs(ex.system.grasp_error(ex.qs)).max() < 1e-12)
    True
    """
    L, m, I = [0.9, 0.7, 0.2], [2.0, 1.5, 0.5], [0.15, 0.08, 0.01]
    base = planar_arm(L, m, I, gravity=gravity)
    arms = [base, placed(base, rotation_about([0, 0, 1.0], np.pi), [distance, 0, 0])]
    w = box[0] / 2
    grasps = [Grasp(2, p=[L[2], 0, 0], p_oe=[-w, 0, 0]),
              Grasp(2, p=[L[2], 0, 0], R_oe=rotation_about([0, 0, 1.0], np.pi), p_oe=[w, 0, 0])]
    inertia = box_inertia(box_mass, (box[0], box[1], 0.1))
    system = MultiArm(arms, grasps, inertia, rows=PLANAR_ROWS)
    X_o0 = X_world(np.eye(3), [distance / 2, box_height, 0])
    guess = [np.array([1.2, -1.4, 0.2]), np.array([-1.2, 1.4, -0.2])]   # elbows up
    qs = [solve_frame_pose(arm, g.frame, X, q0, rows=PLANAR_ROWS, what=f"arm {r}")
          for r, (arm, g, X, q0) in enumerate(zip(arms, grasps, _grasp_targets(system, X_o0), guess))]
    return SimpleNamespace(system=system, arms=arms, qs=qs, X_o0=X_o0, object_inertia=inertia)


def box_path(t, center=(0.8, 1.0), amplitude=(0.15, 0.1), tilt: float = 0.3, period: float = 2.0):
    r"""A planar box path: ᵒX_0, V_o and α_o (object coordinates) at time t.

    The centre moves on an ellipse, p(t) = c + (a sin ωt, b (1 − cos ωt)), the box turns by
    θ(t) = tilt · sin ωt.  V_o = [θ̇ e_z; Rᵀṗ] and α_o = [θ̈ e_z; Rᵀp̈ − ω × Rᵀṗ] (the body-frame
    derivative of V_o).
    """
    w = 2 * np.pi / period
    s, c = np.sin(w * t), np.cos(w * t)
    p = np.array([center[0] + amplitude[0] * s, center[1] + amplitude[1] * (1 - c), 0.0])
    pd = np.array([amplitude[0] * w * c, amplitude[1] * w * s, 0.0])
    pdd = np.array([-amplitude[0] * w * w * s, amplitude[1] * w * w * c, 0.0])
    th, thd, thdd = tilt * s, tilt * w * c, -tilt * w * w * s
    R = rotation_about([0, 0, 1.0], th)
    om = np.array([0, 0, thd])
    v = R.T @ pd
    V_o = np.concatenate([om, v])
    alpha_o = np.concatenate([[0, 0, thdd], R.T @ pdd - np.cross(om, v)])
    return X_world(R, p), V_o, alpha_o


def closed_inverse_dynamics(system: MultiArm, qs, qds, qdds, gravity: bool = True):
    r"""Motor torques for a given closed motion: least-norm grasp forces, then each arm's RNEA.

    The object's acceleration follows from arm 0, α_o = ᵒX_e (J_0 θ̈_0 + J̇_0 θ̇_0); the object
    needs the wrench w = M_o α_o + b_o = 𝒜 λ (H8's 𝒜), which fixes λ only up to the internal
    forces (the null space of 𝒜).  This chooses the least-norm λ = 𝒜⁺w (no internal
    squeeze; the norm mixes moments and forces in their SI units), then
    T_r = ℳ_r θ̈_r + C_r + J_rᵀ f_r by the RNEA with the object's push −f_r at e_r (C9).

    Returns
    -------
    (taus, lam) : per-arm torques and grasp-force rows λ_r

    Examples
    --------
    >>> import numpy as np
    >>> from opalg.closed.examples_arms import two_planar_arms, closed_inverse_dynamics
    >>> ex = two_planar_arms(); zero = [np.zeros(3)] * 2
    >>> taus, lam = closed_inverse_dynamics(ex.system, ex.qs, zero, zero)   # holding still
    >>> res = ex.system.forward(ex.qs, zero, taus)
    >>> bool(np.allclose(np.concatenate(res.qdd), 0) and np.allclose(res.alpha_o, 0))
    True
    """
    s = system._setup(qs, qds, None, None, gravity)
    g0 = system.grasps[0]
    a_e0 = frame_jacobian(system.arms[0], qs[0], g0.frame) @ qdds[0] + frame_drift(system.arms[0], qs[0],
                                                                                     qds[0], g0.frame)
    alpha_o = system.X_oe0 @ a_e0
    A = system.grasp_map()
    lam = np.split(np.linalg.pinv(A) @ (system.M_o @ alpha_o + s.b_o), system.m)
    taus = []
    for r, arm in enumerate(system.arms):
        f_ext = np.zeros((arm.n, 6))
        f_ext[system.tips[r]] = -system.X_ek[r].T @ (system.Pi.T @ lam[r])
        taus.append(rnea(arm, qs[r], qds[r], qdds[r], f_ext=f_ext, gravity=gravity))
    return taus, lam


def planar_box_trajectory(ex: SimpleNamespace, times, **path) -> SimpleNamespace:
    r"""The two planar arms carrying the box along :func:`box_path`: q, q̇, q̈, T, λ at each time.

    Per time: grasp-frame IK for the box pose (warm-started), q̇ and q̈ from the grasp rows
    Π J_r q̇_r = Π ᵉX_o V_o and Π J_r q̈_r = Π(ᵉX_o α_o − J̇_r q̇_r), then
    :func:`closed_inverse_dynamics`.

    Examples
    --------
    >>> import numpy as np
    >>> from opalg.closed.examples_arms import two_planar_arms, planar_box_trajectory
    >>> ex = two_planar_arms(); tr = planar_box_trajectory(ex, [0.0, 0.3])
    >>> res = ex.system.forward(tr.qs[1], tr.qds[1], tr.taus[1])
    >>> bool(np.allclose(res.alpha_o, tr.alpha_o[1]))
    True
    """
    system, Pi = ex.system, ex.system.Pi
    out = SimpleNamespace(times=np.asarray(times, float), qs=[], qds=[], qdds=[], taus=[], lam=[], alpha_o=[])
    q_prev = ex.qs
    for t in out.times:
        X_o0, V_o, alpha_o = box_path(t, **path)
        qs, qds, qdds = [], [], []
        for r, (arm, g) in enumerate(zip(system.arms, system.grasps)):
            q = solve_frame_pose(arm, g.frame, g.X_eo @ X_o0, q_prev[r], rows=PLANAR_ROWS, what=f"arm {r}")
            J = Pi @ frame_jacobian(arm, q, g.frame)
            qd = np.linalg.solve(J, Pi @ g.X_eo @ V_o)
            qdd = np.linalg.solve(J, Pi @ (g.X_eo @ alpha_o - frame_drift(arm, q, qd, g.frame)))
            qs.append(q), qds.append(qd), qdds.append(qdd)
        taus, lam = closed_inverse_dynamics(system, qs, qds, qdds)
        for name, val in (("qs", qs), ("qds", qds), ("qdds", qdds), ("taus", taus), ("lam", lam),
                          ("alpha_o", alpha_o)):
            getattr(out, name).append(val)
        q_prev = qs
    return out


def panda_urdf_path() -> str:
    """Path of example-robot-data's ``panda.urdf`` (ModelError if the package is missing).

    Examples
    --------
    >>> from opalg.closed.examples_arms import panda_urdf_path
    >>> panda_urdf_path().endswith("panda.urdf")
    True
    """
    try:
        files = importlib.metadata.files("example-robot-data") or []
    except importlib.metadata.PackageNotFoundError:
        raise ModelError("two_pandas needs the 'example-robot-data' distribution "
                         "(pip install 'opalg[oracle]')") from None
    hits = [f.locate() for f in files if f.name == "panda.urdf"]
    if not hits or not hits[0].is_file():
        raise ModelError("example-robot-data ships no readable panda.urdf")
    return str(hits[0])


def two_pandas(distance: float = 1.1, box=(0.5, 0.2, 0.2), box_mass: float = 2.0,
               box_height: float = 0.35, grip: float = 0.15, tcp: float = 0.1034) -> SimpleNamespace:
    r"""Two Franka Panda arms (7 dof, fingers locked) facing each other, holding a box from above.

    Arm 1 stands at x = ``distance``, turned by π about z.  Each grasp frame is the
    panda_hand frame moved ``tcp`` along its z axis (between the fingers), pointing down onto
    the box's top face at x = ∓``grip`` from its centre, the hand's x axis along the box's ±x.
    The closed configuration (box centre at (distance/2, 0, box_height), level) comes from
    Newton least-squares IK on each arm's grasp error, started from the Panda's "ready" pose.

    Returns
    -------
    SimpleNamespace
        ``system`` (MultiArm, all six grasp rows), ``arms``, ``qs``, ``X_o0``, ``object_inertia``.

    Examples
    --------
    >>> import numpy as np
    >>> from opalg.closed.examples_arms import two_pandas
    >>> ex = two_pandas()
    >>> [arm.ndof for arm in ex.arms], bool(np.abs(ex.system.grasp_error(ex.qs)).max() < 1e-12)
    ([7, 7], True)
    """
    base = from_urdf(panda_urdf_path(), locked=("panda_finger_joint1", "panda_finger_joint2"))
    arms = [base, placed(base, rotation_about([0, 0, 1.0], np.pi), [distance, 0, 0])]
    body, R_h, p_h = base.link_frames["panda_hand"]
    p_e = np.asarray(p_h, float) + np.asarray(R_h, float) @ [0, 0, tcp]
    down = rotation_about([1.0, 0, 0], np.pi)             # e's z axis along the object's −z
    top = box[2] / 2
    grasps = [Grasp(body, R_h, p_e, R_oe=down, p_oe=[-grip, 0, top]),
              Grasp(body, R_h, p_e, R_oe=rotation_about([0, 0, 1.0], np.pi) @ down, p_oe=[grip, 0, top])]
    inertia = box_inertia(box_mass, box)
    system = MultiArm(arms, grasps, inertia)
    X_o0 = X_world(np.eye(3), [distance / 2, 0, box_height])
    ready = np.array([0.0, -0.785, 0.0, -2.356, 0.0, 1.571, 0.785])
    qs = [solve_frame_pose(arm, g.frame, X, ready, what=f"Panda {r}")
          for r, (arm, g, X) in enumerate(zip(arms, grasps, _grasp_targets(system, X_o0)))]
    return SimpleNamespace(system=system, arms=arms, qs=qs, X_o0=X_o0, object_inertia=inertia)


def consistent_velocities(system: MultiArm, qs, V_o, null=None) -> list:
    r"""Joint rates that move every grasp with the object: J_r q̇_r = ᵉX_o V_o (least norm, + ``null``).

    ``null[r]`` (optional) is added after projection onto the null space of J_r (self-motion
    of a redundant arm).  With ``system.rows`` only the selected rows are imposed (H1, H9).

    Examples
    --------
    >>> import numpy as np
    >>> from opalg.closed.examples_arms import consistent_velocities, two_planar_arms
    >>> ex = two_planar_arms()
    >>> qds = consistent_velocities(ex.system, ex.qs, [0, 0, 0.2, 0.1, 0, 0])
    >>> bool(np.abs(ex.system.grasp_error(ex.qs, qds)).max() < 1e-12)
    True
    """
    out = []
    for r, (arm, g) in enumerate(zip(system.arms, system.grasps)):
        J = system.Pi @ frame_jacobian(arm, qs[r], g.frame)
        qd = np.linalg.lstsq(J, system.Pi @ g.X_eo @ np.asarray(V_o, float), rcond=None)[0]
        if null is not None:
            qd = qd + null[r] - np.linalg.pinv(J) @ (J @ null[r])
        out.append(qd)
    return out
