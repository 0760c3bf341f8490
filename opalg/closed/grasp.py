r"""Grasps of a common object: the grasp frame, its pose in the object, and frame kinematics.

docs/REFERENCE.md §10, H1.  A grasp ties a frame e on an arm's tip body to a fixed pose in
the object: φ*(o, e) = ᵉX_o is constant in object coordinates.  This module holds the pieces
that :class:`opalg.closed.MultiArm` and its examples share: the :class:`Grasp` record, the
object's spatial inertia, world transforms of body-fixed frames, the drift J̇θ̇ of a frame
from the kinematic pass (the oracle's route, independent of the ABA), and a Newton
inverse-kinematics solve for a frame pose.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from opalg.errors import ModelError, StateError
from opalg.model import _validate
from opalg.model.kinematics import body_kinematics, _split_transform
from opalg.model.multibody import Inertia, Model, is_rotation
from opalg.algorithms.operational import _frame_X, frame_jacobian
from opalg.spatial.vectors import motion_transform, spatial_inertia
from opalg.closed.closure import rotation_log
from opalg.closed.geometry import body_bias_accelerations, world_transforms


@dataclass(frozen=True)
class Grasp:
    r"""A rigid grasp: frame e on ``body`` of an arm, held at pose (R_oe, p_oe) in the object.

    ``(body, R, p)`` is the grasp frame in the tip body's frame, as for
    :func:`opalg.frame_jacobian`; ``R_oe`` (e's axes in object coordinates) and ``p_oe``
    (e's origin in object coordinates) fix it in the object, so that
    φ*(o, e) = ᵉX_o = X(R_oeᵀ, p_oe) is constant (docs/REFERENCE.md H1).

    Examples
    --------
    >>> import numpy as np
    >>> from opalg.closed import Grasp
    >>> g = Grasp(2, p=[1.0, 0, 0], p_oe=[-0.5, 0, 0])
    >>> g.frame[0], g.X_eo.shape
    (2, (6, 6))
    """

    body: int
    R: np.ndarray = field(default_factory=lambda: np.eye(3))
    p: np.ndarray = field(default_factory=lambda: np.zeros(3))
    R_oe: np.ndarray = field(default_factory=lambda: np.eye(3))
    p_oe: np.ndarray = field(default_factory=lambda: np.zeros(3))

    def __post_init__(self):
        object.__setattr__(self, "body", _validate.integer(self.body, "body", "Grasp", lo=0, error=ModelError))
        for name in ("R", "p", "R_oe", "p_oe"):
            try:
                val = np.array(getattr(self, name), dtype=float)
            except (TypeError, ValueError):
                raise ModelError(f"Grasp on body {self.body}: {name} is not numeric") from None
            shape = (3, 3) if name.startswith("R") else (3,)
            if val.shape != shape or not np.all(np.isfinite(val)):
                raise ModelError(f"Grasp on body {self.body}: {name} must be a finite array of shape {shape}, "
                                 f"got shape {val.shape}")
            if shape == (3, 3) and not is_rotation(val):
                raise ModelError(f"Grasp on body {self.body}: {name} is not a proper rotation matrix")
            object.__setattr__(self, name, val)

    @property
    def frame(self) -> tuple:
        """``(body, R, p)``: the grasp frame on the tip body (frame_jacobian's spec)."""
        return (self.body, self.R, self.p)

    @property
    def X_eo(self) -> np.ndarray:
        """ᵉX_o = φ*(o, e), the constant motion transform from object to grasp coordinates."""
        return motion_transform(self.R_oe.T, self.p_oe)


def object_inertia(spec) -> np.ndarray:
    r"""The object's spatial inertia M_o (6×6, about the object frame origin, angular first).

    ``spec`` is an :class:`opalg.Inertia` (mass, mass centre, inertia about the mass centre,
    in object coordinates) or a symmetric positive definite 6×6 array.

    Examples
    --------
    >>> import numpy as np, opalg
    >>> from opalg.closed.grasp import object_inertia
    >>> float(object_inertia(opalg.Inertia(2.0, np.zeros(3), np.eye(3)))[5, 5])
    2.0
    """
    if isinstance(spec, Inertia):
        try:
            M = spatial_inertia(float(spec.mass), np.asarray(spec.com, float), np.asarray(spec.I_com, float))
        except (TypeError, ValueError):
            raise ModelError(f"object_inertia: {spec!r} is not numeric") from None
    else:
        try:
            M = np.array(spec, dtype=float)
        except (TypeError, ValueError):
            raise ModelError("object_inertia must be an opalg.Inertia or a 6x6 array") from None
    if M.shape != (6, 6) or not np.all(np.isfinite(M)):
        raise ModelError(f"object_inertia must be a finite 6x6 spatial inertia, got shape {M.shape}")
    if not np.allclose(M, M.T, rtol=1e-12, atol=1e-12 * np.abs(M).max()):
        raise ModelError("object_inertia is not symmetric")
    M = (M + M.T) / 2
    w = np.linalg.eigvalsh(M)
    if w[0] <= 1e-12 * w[-1]:
        raise ModelError(f"object_inertia is not positive definite (eigenvalues {w[0]:.3g} .. {w[-1]:.3g})")
    return M


def world_transform(model: Model, kin, body: int, X_ek: np.ndarray) -> np.ndarray:
    r"""ᵉX_0 = ᵉX_k ᵏX_℘(k) ⋯ of a frame e on ``body`` (ᵉX_k = ``X_ek``), composing ``kin.Xup`` (§5).

    Examples
    --------
    >>> import numpy as np, opalg
    >>> from opalg.closed.grasp import pose_of, world_transform
    >>> arm = opalg.planar_arm([1.0, 1.0], [1.0, 1.0], [0.1, 0.1])
    >>> kin = opalg.model.kinematics.body_kinematics(arm, [np.pi / 2, 0.0])
    >>> X = world_transform(arm, kin, 1, opalg.spatial.vectors.motion_transform(np.eye(3), [1.0, 0, 0]))
    >>> np.round(pose_of(X)[1], 12) + 0.0                  # the tip of the raised arm
    array([0., 2., 0.])
    """
    return X_ek @ world_transforms(model, kin, [body])[body]


def pose_of(X_e0: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    r"""(R_0e, p_0e): the world orientation and origin of frame e from ᵉX_0 = X(R_0eᵀ, p_0e) (§3).

    Examples
    --------
    >>> import numpy as np
    >>> from opalg.spatial.vectors import motion_transform
    >>> from opalg.closed.grasp import pose_of
    >>> pose_of(motion_transform(np.eye(3), [1.0, 2.0, 3.0]))[1]
    array([1., 2., 3.])
    """
    E, r = _split_transform(X_e0)
    return np.swapaxes(E, -1, -2), r


def pose_error(X_a0: np.ndarray, X_b0: np.ndarray) -> np.ndarray:
    r"""[rotation vector of R_aᵀR_b; R_aᵀ(p_b − p_a)]: frame b relative to frame a, in a's coordinates.

    The grasp violation of H1's closed configurations (:meth:`MultiArm.grasp_error`).

    Examples
    --------
    >>> import numpy as np
    >>> from opalg.spatial.vectors import motion_transform, rotation_about
    >>> from opalg.closed.grasp import pose_error
    >>> Xa = motion_transform(rotation_about([0, 0, 1.0], np.pi / 2).T, [1.0, 0, 0])
    >>> Xb = motion_transform(np.eye(3), [1.0, 1.0, 0])
    >>> np.round(pose_error(Xa, Xb), 12) + 0.0     # b is turned back by π/2 and 1 m along a's x
    array([ 0.        ,  0.        , -1.57079633,  1.        ,  0.        ,  0.        ])
    """
    Ra, pa = pose_of(X_a0)
    Rb, pb = pose_of(X_b0)
    dR = np.swapaxes(Ra, -1, -2) @ Rb
    dp = np.einsum("...ji,...j->...i", Ra, pb - pa)
    return np.concatenate([rotation_log(dR), dp], -1)


def frame_drift(model: Model, q, qd, frame) -> np.ndarray:
    r"""J̇θ̇ of a body-fixed frame e: its acceleration at θ̈ = 0 without gravity, in e coordinates.

    The outward kinematic pass α(k) = φ*(℘k, k) α(℘k) + a(k) with θ̈ = 0 and a(k) the
    Coriolis terms of C2 gives α(k) = J̇_k θ̇; then J̇_e θ̇ = ᵉX_k α(k) (the frame is rigid on
    body k).  This is the dense oracle's route; the ABA never calls it.

    Examples
    --------
    >>> import numpy as np, opalg
    >>> from opalg.closed.grasp import frame_drift
    >>> m = opalg.random_model(5, "chain", seed=1, joints="all")
    >>> q, qd = np.random.default_rng(0).normal(size=(2, m.ndof)); h = 1e-30
    >>> Jdot_qd = opalg.frame_jacobian(m, q + 1j * h * qd, (4, [0.1, 0, 0])).imag / h @ qd  # complex step
    >>> bool(np.allclose(frame_drift(m, q, qd, (4, [0.1, 0, 0])), Jdot_qd))
    True
    """
    body, X_ek = _frame_X(model, frame)
    alpha = body_bias_accelerations(model, body_kinematics(model, q, qd, gravity=False))
    return np.einsum("ij,...j->...i", X_ek, alpha[body])


def solve_frame_pose(model: Model, frame, X_e0_target: np.ndarray, q0, rows=None,
                     tol: float = 1e-13, max_iter: int = 100, what: str = "arm") -> np.ndarray:
    r"""Joint coordinates that put a body-fixed frame e at a target pose (Newton, least squares).

    Each step solves J δq = ε in the least-squares sense (a redundant arm also moves toward
    ``q0`` in the null space of J; the step length is capped at 0.5), with ε the pose error
    of the frame e of C8 (rotation vector and origin offset, in e coordinates) and
    J = :func:`opalg.frame_jacobian`; ``rows`` restricts ε and J to the
    selected components (planar arms).  ``X_e0_target`` is the target ᵉX_0.

    Raises
    ------
    StateError
        If the error does not fall below ``tol`` (scaled by the frame's distance from the
        world origin) within ``max_iter`` steps, naming ``what``.

    Examples
    --------
    >>> import numpy as np, opalg
    >>> from opalg.spatial.vectors import motion_transform, rotation_about
    >>> from opalg.closed.grasp import solve_frame_pose
    >>> arm = opalg.planar_arm([1.0, 1.0, 1.0], [1.0] * 3, [0.1] * 3)
    >>> target = motion_transform(rotation_about([0, 0, 1.0], 1.2).T, [0.5, 1.0, 0])  # ᵉX_0
    >>> q = solve_frame_pose(arm, (2, [1.0, 0, 0]), target, [0.3, 0.3, 0.3], rows=[2, 3, 4])
    >>> R, p = opalg.model.kinematics.body_poses(arm, q)
    >>> bool(np.allclose(p[2] + R[2] @ [1.0, 0, 0], [0.5, 1, 0]) and np.isclose(q.sum(), 1.2))
    True
    """
    body, X_ek = _frame_X(model, frame)
    q0 = np.array(q0, dtype=float)
    q = q0.copy()
    sel = slice(None) if rows is None else list(rows)
    scale = 1.0 + np.linalg.norm(pose_of(X_e0_target)[1])
    err = np.inf
    for _ in range(max_iter):
        X = world_transform(model, body_kinematics(model, q), body, X_ek)
        eps = pose_error(X, X_e0_target)[sel]
        err = float(np.linalg.norm(eps))
        if err <= tol * scale:
            return q
        J = frame_jacobian(model, q, frame)[sel]
        Jp = np.linalg.pinv(J, rcond=1e-10)
        # the pose correction, plus a pull toward q0 in J's null space (a redundant arm stays
        # near its initial guess); steps are capped so that a far guess cannot fling q around
        dq = Jp @ eps + 0.5 * (np.eye(q.size) - Jp @ J) @ (q0 - q)
        q = q + dq * min(1.0, 0.5 / max(float(np.linalg.norm(dq)), 1e-300))
    raise StateError(f"{what}: inverse kinematics of the grasp frame on body {body} did not converge "
                     f"(pose error {err:.3g} after {max_iter} Newton steps); try another initial guess")
