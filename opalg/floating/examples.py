r"""A satellite with an arm: the free-floating example of notebook 15, and a drawing of it.

:func:`satellite_with_arm` builds a box-shaped spacecraft (body 0, on a
:class:`opalg.FreeJoint`, docs/REFERENCE.md K8) carrying a four-dof arm on its top face: a
turret (yaw about the body z axis), then shoulder, elbow and wrist pitch joints (about y), with
slender links along their body x axes.  Gravity is off (free flight).  The numbers are
illustrative (a 500 kg, 1.5 m box and 6–25 kg links), not those of a real spacecraft.

:func:`draw_satellite` projects the box's edges and the arm's polyline on the inertial x–z plane
(the plane of the pitch joints at the neutral attitude) and returns the matplotlib artists, so an
animation can update them with :func:`update_satellite`.
"""

from __future__ import annotations

__all__ = ["satellite_with_arm", "arm_points", "box_corners", "draw_satellite", "update_satellite"]

from typing import Sequence

import numpy as np

from opalg.errors import ModelError
from opalg.model.free_joint import FreeJoint
from opalg.model.kinematics import body_poses
from opalg.model.multibody import Inertia, Joint, Model

#: Box edges as pairs of corner indices (corners numbered by the bits of (x, y, z)).
_EDGES = [(a, b) for a in range(8) for b in range(8) if a < b and bin(a ^ b).count("1") == 1]


def _rod(mass: float, length: float) -> Inertia:
    """A slender rod along its body x axis from the origin: mass centre at L/2, I = mL²/12."""
    I_c = mass * length**2 / 12.0
    return Inertia(mass, np.array([length / 2, 0.0, 0.0]), np.diag([1e-3 * I_c, I_c, I_c]))


def satellite_with_arm(base_mass: float = 500.0, side: float = 1.5,
                       link_masses: Sequence[float] = (10.0, 25.0, 20.0, 6.0),
                       link_lengths: Sequence[float] = (0.25, 1.2, 1.0, 0.4),
                       mount: Sequence[float] = (0.35, 0.0, 0.75)) -> Model:
    r"""A free-floating box (body 0) with a four-dof arm (bodies 1–4), gravity off.

    Body 0 is a uniform cube of mass ``base_mass`` and edge ``side`` (its inertia
    :math:`\tfrac16 m s^2 I_3` about its centre, the body origin) on a free joint ``"base"``.
    Body 1 (turret, yaw about z) sits at ``mount`` on the base; bodies 2–4 (shoulder, elbow,
    wrist, pitch about y) are slender rods of the given masses and lengths along their x axes,
    each hanging at the end of the previous one (the turret is a short rod along z).  The tool
    point is at ``(link_lengths[3], 0, 0)`` of body 4 (see :func:`arm_points`).

    Examples
    --------
    >>> import opalg
    >>> from opalg.floating.examples import satellite_with_arm
    >>> m = satellite_with_arm()
    >>> m.nq, m.nv, m.free_bodies, round(sum(i.mass for i in m.inertias), 1)
    (11, 10, (0,), 561.0)
    """
    masses, lengths = [float(x) for x in link_masses], [float(x) for x in link_lengths]
    if len(masses) != 4 or len(lengths) != 4:
        raise ModelError(f"satellite_with_arm: link_masses and link_lengths need 4 entries each, "
                         f"got {len(masses)} and {len(lengths)}")
    for what, xs in (("link_masses", masses), ("link_lengths", lengths), ("base_mass", [base_mass]),
                     ("side", [side])):
        if not all(np.isfinite(x) and x > 0 for x in xs):
            raise ModelError(f"satellite_with_arm: {what} must be positive numbers, got {xs}")
    base = Inertia(float(base_mass), np.zeros(3), float(base_mass) * side**2 / 6.0 * np.eye(3))
    turret_I = masses[0] * lengths[0] ** 2 / 12.0
    turret = Inertia(masses[0], np.array([0.0, 0.0, lengths[0] / 2]), np.diag([turret_I, turret_I, 1e-3 * turret_I]))
    joints = [FreeJoint("base"), Joint("R", [0, 0, 1.0], name="turret"), Joint("R", [0, 1.0, 0], name="shoulder"),
              Joint("R", [0, 1.0, 0], name="elbow"), Joint("R", [0, 1.0, 0], name="wrist")]
    eye = np.eye(3)
    placements = [(eye, np.zeros(3)), (eye, np.asarray(mount, float)), (eye, np.array([0.0, 0.0, lengths[0]])),
                  (eye, np.array([lengths[1], 0.0, 0.0])), (eye, np.array([lengths[2], 0.0, 0.0]))]
    inertias = [base, turret, _rod(masses[1], lengths[1]), _rod(masses[2], lengths[2]), _rod(masses[3], lengths[3])]
    return Model([-1, 0, 1, 2, 3], joints, placements, inertias, gravity=(0.0, 0.0, 0.0),
                 names=["satellite", "turret", "upper_arm", "forearm", "hand"])


def arm_points(model: Model, q) -> np.ndarray:
    """World positions (5, 3) of the arm's polyline: the mount, the joints 2–4 and the tool point.

    The tool point is at ``(L_4, 0, 0)`` of body 4, ``L_4`` read off the hand's mass centre
    (twice its x offset, a rod of :func:`satellite_with_arm`).

    Examples
    --------
    >>> import opalg
    >>> from opalg.floating.examples import satellite_with_arm, arm_points
    >>> m = satellite_with_arm()
    >>> arm_points(m, opalg.neutral(m))[-1].round(3).tolist()      # mount + turret + 1.2 + 1.0 + 0.4 along x
    [2.95, 0.0, 1.0]
    """
    R, p = body_poses(model, np.asarray(q, float))
    tool = p[4] + R[4] @ np.array([2 * float(model.inertias[4].com[0]), 0.0, 0.0])
    return np.array([p[1], p[2], p[3], p[4], tool])


def box_corners(model: Model, q, side: float = 1.5) -> np.ndarray:
    """World positions (8, 3) of the base box's corners (corner i has the bits of i as its signs).

    Examples
    --------
    >>> import opalg
    >>> from opalg.floating.examples import satellite_with_arm, box_corners
    >>> m = satellite_with_arm()
    >>> box_corners(m, opalg.neutral(m))[7].tolist()
    [0.75, 0.75, 0.75]
    """
    R, p = body_poses(model, np.asarray(q, float))
    signs = np.array([[(i >> b & 1) * 2 - 1 for b in range(3)] for i in range(8)], float)
    return p[0] + (side / 2 * signs) @ R[0].T


def draw_satellite(ax, model: Model, q, side: float = 1.5, color: str = "C0", box_color: str = "0.35",
                   alpha: float = 1.0) -> list:
    """Draw the box's edges (``box_color``) and the arm (``color``) on ``ax`` in the x–z projection.

    Returns the line artists (the twelve edges, then the arm), for :func:`update_satellite`.

    Examples
    --------
    >>> import matplotlib; matplotlib.use("Agg")
    >>> import matplotlib.pyplot as plt, opalg
    >>> from opalg.floating.examples import satellite_with_arm, draw_satellite
    >>> m = satellite_with_arm(); fig, ax = plt.subplots()
    >>> len(draw_satellite(ax, m, opalg.neutral(m)))                 # 12 edges and the arm
    13
    >>> plt.close(fig)
    """
    lines = [ax.plot([], [], color=box_color, lw=1.0, alpha=alpha)[0] for _ in _EDGES]
    lines.append(ax.plot([], [], "o-", color=color, lw=2.2, ms=3.5, alpha=alpha)[0])
    update_satellite(lines, model, q, side)
    return lines


def update_satellite(lines: list, model: Model, q, side: float = 1.5) -> list:
    """Move the artists of :func:`draw_satellite` to configuration ``q``; returns them.

    Examples
    --------
    >>> import matplotlib; matplotlib.use("Agg")
    >>> import matplotlib.pyplot as plt, opalg
    >>> from opalg.floating.examples import satellite_with_arm, draw_satellite, update_satellite
    >>> m = satellite_with_arm(); fig, ax = plt.subplots()
    >>> lines = draw_satellite(ax, m, opalg.neutral(m))
    >>> q = opalg.neutral(m); q[0] = 1.0                              # the whole system moved 1 m along x
    >>> float(update_satellite(lines, m, q)[-1].get_xdata()[0])       # the mount: 0.35 + 1
    1.35
    >>> plt.close(fig)
    """
    C = box_corners(model, q, side)
    for line, (a, b) in zip(lines, _EDGES):
        line.set_data([C[a, 0], C[b, 0]], [C[a, 2], C[b, 2]])
    P = arm_points(model, q)
    lines[-1].set_data(P[:, 0], P[:, 2])
    return lines
