r"""The paper's 5-body rooted tree T = (0, 1, 1, 1, 2) as ready-made TreeSystems.

What the scan of the 1998 paper holds of its example is the topology alone: the vector
T = (0, 1, 1, 1, 2) of its Table 1 (Fig. 1 did not survive the OCR), and an introduction that
names the deployable mechanisms of a space station (solar panels, large antennas, manipulator
arms) as the motivation.  Everything else here is **the suite's own illustrative choice**: the
roles of the bodies (:data:`ROLES`: a payload platform B1 on a gimbal under a truss B0, an inner
solar panel B2 carrying an outer panel B5, an antenna boom B3, a radiator B4), their masses,
sizes and hinge offsets, the hinges, the springs and the dampers.  Three hinge choices:

* ``"rot3"``: 3 Euler angles per hinge (15 DoF), the paper's ideal spherical hinges of §1.2;
* ``"full6"``: 3 slides + 3 angles per hinge (30 DoF), the paper's general hinge of §1.2;
* ``"deploy"``: a deployment mechanism (6 DoF, the suite's own) — a 2-axis gimbal (NR = 2,
  azimuth H1_1 and elevation H1_3, held by servo springs) and one-axis spring hinges (NR = 1)
  that swing the appendages from stowed (folded against the platform) to open.  NR = 3 would be
  singular in the stowed pose: z-x-z angles lose a DoF at H3 = 0, where H1 and H2 turn about
  the same axis.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from opalg.errors import ModelError, StateError
from opalg.symbolic.data import Body, Hinge, check_system, scalar
from opalg.symbolic.tree import TreeSystem

#: Roles of the bodies of the 5-body example (0 = the root B0).  The suite's own illustrative
#: choice: the 1998 scan gives only the topology T = (0, 1, 1, 1, 2), not what the bodies are.
ROLES = {0: "truss B0", 1: "platform B1", 2: "inner panel B2", 3: "boom B3", 4: "radiator B4",
         5: "outer panel B5"}
#: Fill colours of the bodies in the suite's drawings (matplotlib colour specs).
COLOURS = {0: "0.55", 1: "0.75", 2: "C0", 3: "C3", 4: "C2", 5: "C9"}


def box_inertia(m: float, a: float, b: float, c: float) -> list:
    """Inertia tensor of a uniform a x b x c box (edges along x, y, z) about its centre.

    Numbers or sympy expressions; a number must be finite, the mass > 0 and the edges >= 0."""
    for nm, x in (("m", m), ("a", a), ("b", b), ("c", c)):
        e = scalar(x, f"box_inertia: {nm}")
        if e.is_number and not (float(e) > 0 if nm == "m" else float(e) >= 0):
            raise ModelError(f"box_inertia: {nm} must be {'> 0' if nm == 'm' else '>= 0'}, got {e}")
    return [[m * (b * b + c * c) / 12, 0, 0], [0, m * (a * a + c * c) / 12, 0], [0, 0, m * (a * a + b * b) / 12]]


#: Deployment mechanism (the suite's illustrative choice, not the paper's data): (body, hinge
#: offset in the inner frame, box centre = mass centre in the body frame, box edges (x, y, z),
#: mass).  Platform 1.6 m cube-ish, panels 2.0 x 1.2 m.
_DEPLOY = [
    (1, (0.0, 0.0, 0.5), (0.0, 0.0, 0.3), (1.6, 1.6, 0.6), 150.0),    # platform on the gimbal
    (2, (0.8, -0.8, 0.3), (1.0, 0.0, 0.0), (2.0, 0.03, 1.2), 20.0),  # inner panel, opens to +x
    (3, (-0.8, 0.8, 0.3), (-1.0, 0.0, 0.0), (2.0, 0.08, 0.08), 6.0),  # antenna boom, opens to -x
    (4, (-0.8, -0.8, 0.3), (0.0, -0.6, 0.0), (0.03, 1.2, 1.0), 10.0),  # radiator, opens to -y
    (5, (2.0, 0.0, 0.0), (1.0, 0.0, 0.0), (2.0, 0.03, 1.2), 18.0),   # outer panel on the inner one
]


#: The truss when it floats freely (``base="free"``; the suite's illustrative choice, not the
#: paper's data): (box centre = mass centre in the truss frame, box edges, mass).  The box is the
#: one drawn for the fixed truss B0 (0.5 x 0.5 x 2 m column), its mass a lumped 400 kg of
#: structure and equipment, so I = diag(141.7, 141.7, 16.7) kg·m² about the mass centre.
_TRUSS = ((0.0, 0.0, -0.6), (0.5, 0.5, 2.0), 400.0)
#: Coordinates of the two deployment systems, in q order.
_DEPLOY_Q = ["H1_1", "H1_3", "H2_1", "H3_1", "H4_1", "H5_1"]
_FREE_Q = ["Z1_1", "Z1_2", "Z1_3", "H1_1", "H1_2", "H1_3", "H2_1", "H2_3", "H3_1", "H4_1", "H5_1", "H6_1"]
#: The free truss's starting Euler angles (H1_1, H1_2, H1_3): H1_3 = π/2 keeps the z-x-z chart
#: away from its singularity sin H1_3 = 0 (the truss frame is turned +90° about the inertial x).
FREE_TRUSS_ANGLES = (0.0, 0.0, np.pi / 2)


@dataclass
class DeploymentSetup:
    """Stowed and open poses, hinge springs and dampers, and drawing boxes of the
    ``"deploy"`` example.  ``boxes[j] = (centre, edges)`` in body-j coordinates (j = 0: the
    truss B0)."""

    stowed: np.ndarray
    open: np.ndarray
    springs: dict
    dampers: dict
    boxes: dict
    coordinates: tuple = ()

    def torques(self, q, qd) -> np.ndarray:
        """The hinge torques ``−k (q − q0) − c q̇`` of the springs and dampers as numbers, in
        the order of ``coordinates`` (the system's q), e.g. for integrating with opalg's ABA."""
        q, qd = np.asarray(q, float), np.asarray(qd, float)
        tau = np.zeros(len(self.coordinates))
        for i, s in enumerate(self.coordinates):
            k, q0 = self.springs.get(s, (0.0, 0.0))
            tau[i] = -k * (q[i] - q0) - self.dampers.get(s, 0.0) * qd[i]
        return tau


def deployable_example(dof: str = "rot3", gravity=(0, 0, 0), base="fixed") -> TreeSystem:
    """The paper's 5-body tree T = (0, 1, 1, 1, 2) with illustrative bodies and hinges.

    Only the topology vector T is the paper's (its Table 1); the masses, inertias, hinge
    offsets and the hinge types of ``"deploy"`` are the suite's own illustrative choice (see
    :data:`ROLES` for the roles the suite gives the bodies).

    Parameters
    ----------
    dof : {"rot3", "full6", "deploy"}
        "rot3": three Euler angles per hinge (15 DoF); "full6": three slides and three angles
        per hinge (30 DoF); "deploy": the suite's 6-DoF deployment mechanism (a two-axis gimbal
        and one-axis appendage hinges, see :func:`deployment_setup`).
    gravity : 3-vector
        Uniform gravity in the inertial frame (zero in orbit).
    base : "fixed", RootMotion or "free"
        The root B0 (the truss) fixed, or moving as prescribed; ``"free"`` (``dof="deploy"``
        only): the truss has mass (:data:`_TRUSS`) and floats, as body B1 on a 6-DoF hinge
        from the inertial frame B0 (slides Z1_1..Z1_3 along the inertial x, y, z, then z-x-z
        angles H1_1, H1_2, H1_3), and the deployment bodies hang below it,
        T = (0, 1, 2, 2, 2, 3) (see :mod:`opalg.symbolic.free_root`).

    Returns
    -------
    TreeSystem

    Examples
    --------
    >>> from opalg.symbolic import deployable_example
    >>> s = deployable_example("rot3")
    >>> s.T, s.N
    ((0, 1, 1, 1, 2), 15)
    >>> [str(x) for x in deployable_example("deploy").q]
    ['H1_1', 'H1_3', 'H2_1', 'H3_1', 'H4_1', 'H5_1']
    >>> free = deployable_example("deploy", base="free")
    >>> free.T, free.N
    ((0, 1, 2, 2, 2, 3), 12)
    """
    if dof not in ("rot3", "full6", "deploy"):
        raise StateError(f"dof must be 'rot3', 'full6' or 'deploy', got {dof!r}")
    if isinstance(base, str) and base == "free":
        if dof != "deploy":
            raise ModelError(f"base='free' is provided for dof='deploy' only, got dof={dof!r}")
        c, e, m = _TRUSS
        hinges = [Hinge(3, 3)] + [Hinge(2 if j == 1 else 1, 0, None, off) for j, off, *_ in _DEPLOY]
        bodies = [Body(m, c, box_inertia(m, *e))] + [Body(m, c, box_inertia(m, *e)) for _, _, c, e, m in _DEPLOY]
        return TreeSystem([0, 1, 2, 2, 2, 3], hinges, bodies, gravity=gravity)
    T = [0, 1, 1, 1, 2]
    if dof == "deploy":
        hinges = [Hinge(2 if j == 1 else 1, 0, None, off) for j, off, *_ in _DEPLOY]
        bodies = [Body(m, c, box_inertia(m, *e)) for _, _, c, e, m in _DEPLOY]
        return TreeSystem(T, hinges, bodies, gravity=gravity, base=base)
    nt = 3 if dof == "full6" else 0
    offsets = [(0, 0, 1.0), (0.8, 0, 0.2), (0, 0.6, 0.5), (-0.8, 0, 0), (2.0, 0, 0)]
    bodies = [Body(200.0, (0.0, 0.0, 0.1), [[40.0, 1.0, 0], [1.0, 36.0, 0], [0, 0, 30.0]]),
              Body(20.0, (1.0, 0.0, 0.0), box_inertia(20.0, 2.0, 1.2, 0.03)),
              Body(8.0, (0.0, 1.0, 0.05), box_inertia(8.0, 0.1, 2.0, 0.1)),
              Body(10.0, (-0.5, 0.0, 0.0), box_inertia(10.0, 1.0, 0.8, 0.05)),
              Body(18.0, (1.0, 0.0, 0.0), box_inertia(18.0, 2.0, 1.2, 0.03))]
    hinges = [Hinge(3, nt, None, o) for o in offsets]
    return TreeSystem(T, hinges, bodies, gravity=gravity, base=base)


def deployment_setup(system: TreeSystem, k_hinge=(8.0, 4.0, 3.0, 6.0), c_hinge=(50.0, 8.0, 5.0, 15.0),
                     k_gimbal: float = 400.0, c_gimbal: float = 150.0) -> DeploymentSetup:
    """Springs, dampers and poses of the ``"deploy"`` example (all the suite's illustrative
    choice: the 1998 scan holds no deployment data).

    Stowed: inner panel, boom and radiator turned +90° against the platform faces, the outer
    panel −180° back onto the inner one; open: all angles 0, which is where the hinge springs
    (stiffness ``k_hinge`` for B2, B3, B4, B5 in N·m/rad; viscous dampers ``c_hinge`` in
    N·m·s/rad) relax.  The default dampers are 0.6–0.7 of critical at the open pose,
    ζ_i = c_i / (2 √(k_i M_ii)) with M_ii the inertia about hinge i of the appendage and its
    outboard bodies; the inner panel, carrying the folded outer panel, starts at ζ = 1.24.  The gimbal
    servo is a spring-damper ``k_gimbal``, ``c_gimbal`` on both gimbal angles.

    For the free-truss system (``deployable_example("deploy", base="free")``) the same springs
    and dampers act on the same hinges (now bodies 2..6), the truss's six coordinates have none,
    the poses start with the truss at the origin turned by :data:`FREE_TRUSS_ANGLES`, and
    ``boxes`` holds the truss as body 1 (no box for the inertial frame B0).

    Examples
    --------
    >>> import numpy as np
    >>> from opalg.symbolic import deployable_example, deployment_setup
    >>> setup = deployment_setup(deployable_example("deploy"))
    >>> np.degrees(setup.stowed).round(1).tolist()
    [0.0, 0.0, 90.0, 90.0, 90.0, -180.0]
    >>> (setup.torques(setup.stowed, np.zeros(6)).round(3) + 0).tolist()   # −k q: springs push to open
    [0.0, 0.0, -12.566, -6.283, -4.712, 18.85]
    >>> free = deployment_setup(deployable_example("deploy", base="free"))
    >>> np.degrees(free.stowed).round(1).tolist(), sorted(free.boxes)
    ([0.0, 0.0, 0.0, 0.0, 0.0, 90.0, 0.0, 0.0, 90.0, 90.0, 90.0, -180.0], [1, 2, 3, 4, 5, 6])
    """
    check_system(system, "deployment_setup")
    names = [str(x) for x in system.q]
    if names not in (_DEPLOY_Q, _FREE_Q):
        raise StateError("deployment_setup needs deployable_example('deploy') (coordinates "
                         "H1_1, H1_3, H2_1, H3_1, H4_1, H5_1) or deployable_example('deploy', base='free')")
    free = names == _FREE_Q             # the free truss is body 1: every deployment body one up
    q = system.q[6:] if free else system.q
    springs = {q[0]: (k_gimbal, 0.0), q[1]: (k_gimbal, 0.0)}
    springs.update({s: (float(k), 0.0) for s, k in zip(q[2:], k_hinge)})
    dampers = {q[0]: c_gimbal, q[1]: c_gimbal}
    dampers.update({s: float(c) for s, c in zip(q[2:], np.broadcast_to(c_hinge, 4)) if c})
    boxes = {int(free): _TRUSS[:2] if free else ((0.0, 0.0, -0.6), (0.5, 0.5, 2.0))}
    boxes.update({j + free: (c, e) for j, _, c, e, _ in _DEPLOY})
    stowed = np.array([0.0, 0.0, np.pi / 2, np.pi / 2, np.pi / 2, -np.pi])
    if free:        # the truss: at the origin, turned by FREE_TRUSS_ANGLES; no spring, no damper
        truss = np.r_[0.0, 0.0, 0.0, FREE_TRUSS_ANGLES]
        return DeploymentSetup(np.r_[truss, stowed], np.r_[truss, np.zeros(6)], springs, dampers, boxes,
                               tuple(system.q))
    return DeploymentSetup(stowed, np.zeros(6), springs, dampers, boxes, tuple(q))


def draw_outlines(ax, outlines: dict, colours: dict | None = None, labels: dict | None = None,
                  lw: float = 1.5) -> list:
    """Fill the 2-D body outlines of :func:`box_outlines` on a matplotlib axis; return the patches.

    Each body is drawn in ``colours[j]`` (default :data:`COLOURS`) with its edge in the same
    colour, so that a thin panel seen edge-on is still a visible line in its colour; ``labels``
    (e.g. :data:`ROLES`) become the patches' legend labels.  The axis keeps equal aspect.

    Examples
    --------
    >>> import matplotlib; matplotlib.use("Agg")
    >>> import matplotlib.pyplot as plt, numpy as np
    >>> fig, ax = plt.subplots()
    >>> patches = draw_outlines(ax, {1: np.array([[0, 0], [1, 0], [1, 1]])}, labels=ROLES)
    >>> patches[0].get_label()
    'platform B1'
    >>> plt.close(fig)
    """
    if not isinstance(outlines, dict) or (colours is not None and not isinstance(colours, dict)):
        raise StateError(f"draw_outlines: outlines (and colours) must be dicts {{body: ...}} as box_outlines gives, "
                         f"got {type(outlines).__name__}")
    from matplotlib.patches import Polygon

    colours = COLOURS if colours is None else colours
    out = []
    for j, poly in sorted(outlines.items()):
        colour = colours.get(j, "k")
        label = labels.get(j, f"B{j}") if labels is not None else None
        out.append(ax.add_patch(Polygon(poly, closed=True, facecolor=colour, edgecolor=colour, lw=lw,
                                        label=label)))
    ax.set_aspect("equal")
    return out


def box_outlines(poses, q, boxes: dict, view: str = "xy", t: float = 0.0) -> dict:
    """2-D outlines (convex hull of the projected corners) of each body's box at ``q``.

    ``poses`` = :func:`opalg.symbolic.numeric.pose_function` of the system; ``view`` = the two
    inertial axes to keep ("xy" top view, "xz", "yz").  Returns ``{j: (k, 2) polygon}``.

    Examples
    --------
    >>> import numpy as np
    >>> from opalg.symbolic import Body, Hinge, TreeSystem, box_outlines, pose_function
    >>> s = TreeSystem([0], [Hinge(1)], [Body(1, (1, 0, 0))])
    >>> box = {1: ((1.0, 0, 0), (2.0, 0.2, 0.5))}            # a 2 m bar along body x
    >>> poly = box_outlines(pose_function(s), [np.pi / 2], box)[1]
    >>> (poly.min(0).round(12) + 0).tolist(), (poly.max(0).round(12) + 0).tolist()   # now along y
    ([-0.1, 0.0], [0.1, 2.0])
    """
    from scipy.spatial import ConvexHull

    axes = {"xy": (0, 1), "xz": (0, 2), "yz": (1, 2)}
    if view not in axes:
        raise StateError(f"view must be one of {sorted(axes)}, got {view!r}")
    R, p = poses(q, t)
    signs = np.array([[sx, sy, sz] for sx in (-1, 1) for sy in (-1, 1) for sz in (-1, 1)]) / 2
    out = {}
    for j, (c, e) in boxes.items():
        corners = np.asarray(c) + signs * np.asarray(e)
        world = p[j] + corners @ R[j].T
        pts = world[:, axes[view]]
        out[j] = pts[ConvexHull(pts).vertices]
    return out
