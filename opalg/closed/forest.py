r"""Several arms holding an object as ONE tree model plus loop closures (docs/REFERENCE.md H2, H10).

:class:`opalg.closed.MultiArm` keeps the arms apart and the object as a free body (H1, H7).
The same mechanism is also a :class:`~opalg.closed.ClosedSystem`: put the arms side by side in
one model (a forest, one root per arm), merge the object's inertia rigidly into the tip body of
one arm (the *holder*: its grasp is then part of the tree), and close every other grasp by a
weld (or selected rows) between that arm's grasp frame and the object's grasp frame, now a frame
on the holder's tip body.  Both formulations give the same θ̈ for the same T (H10).
"""

from __future__ import annotations

from types import SimpleNamespace
from typing import Sequence

import numpy as np

from opalg.errors import ModelError
from opalg.model.joints import Joint
from opalg.model.multibody import Inertia, Model
from opalg.spatial.vectors import spatial_inertia
from opalg.model.urdf import inertia_from_spatial
from opalg.closed.closure import LoopClosure
from opalg.closed.grasp import Grasp
from opalg.closed.system import ClosedSystem


def object_in_body(grasp: Grasp) -> tuple[np.ndarray, np.ndarray]:
    r"""(R_ko, p_ko): the object frame's pose in the grasping tip body k's coordinates.

    The grasp frame e sits at (R, p) in k and at (R_oe, p_oe) in the object, so
    R_ko = R R_oeᵀ and p_ko = p − R_ko p_oe.

    Examples
    --------
    >>> from opalg.closed import Grasp
    >>> from opalg.closed.forest import object_in_body
    >>> object_in_body(Grasp(2, p=[1.0, 0, 0], p_oe=[-0.2, 0, 0]))[1].tolist()
    [1.2, 0.0, 0.0]
    """
    R_ko = grasp.R @ grasp.R_oe.T
    return R_ko, grasp.p - R_ko @ grasp.p_oe


def arms_as_forest(arms: Sequence[Model], grasps: Sequence[Grasp], object_inertia: Inertia,
                   qs=None, rows=None, holder: int = 0) -> SimpleNamespace:
    r"""One model of all arms (a forest) with the object merged into the holder's tip body (H10).

    Arm r's bodies follow arm r−1's (body index offset by the bodies before it); names become
    ``arm{r}/name``.  The object's inertia is added to arm ``holder``'s tip body at the pose
    :func:`object_in_body`; every other grasp r becomes a :class:`LoopClosure` between arm r's
    grasp frame (frame 1) and the object's grasp frame r on the holder's tip body (frame 2),
    with Π_c = ``rows`` (default: the weld's six rows).

    Parameters
    ----------
    arms, grasps : sequences of Model and Grasp (as for :class:`opalg.closed.MultiArm`)
    object_inertia : Inertia
        In object coordinates (mass centre and inertia about it).
    qs : sequence of arrays, optional
        Per-arm joint values, concatenated into ``q``.
    rows, holder : as above.

    Returns
    -------
    SimpleNamespace
        ``system`` (ClosedSystem), ``model``, ``q`` (or None), ``offsets`` (first body of each
        arm), ``dofs`` (slice of each arm's coordinates in q), ``object_frame`` ((body, R, p)
        of the object frame on the holder's tip body).

    Examples
    --------
    >>> import numpy as np
    >>> from opalg.closed.examples_arms import two_planar_arms, PLANAR_ROWS
    >>> from opalg.closed.forest import arms_as_forest
    >>> ex = two_planar_arms()
    >>> f = arms_as_forest(ex.arms, ex.system.grasps, ex.object_inertia, ex.qs, rows=PLANAR_ROWS)
    >>> f.system.m, bool(np.abs(f.system.constraint_error(f.q)).max() < 1e-12)
    (3, True)
    """
    arms, grasps = list(arms), list(grasps)
    if len(arms) != len(grasps) or len(arms) < 2:
        raise ModelError(f"arms_as_forest: need >= 2 arms and one grasp per arm, got {len(arms)} arms "
                         f"and {len(grasps)} grasps")
    if not 0 <= holder < len(arms):
        raise ModelError(f"arms_as_forest: holder {holder} is not an arm index (0..{len(arms) - 1})")
    if not isinstance(object_inertia, Inertia):
        raise ModelError("arms_as_forest: object_inertia must be an opalg.Inertia")
    offsets = np.concatenate([[0], np.cumsum([a.n for a in arms])]).astype(int)
    parents, joints, places, inertias, names = [], [], [], [], []
    for r, arm in enumerate(arms):
        off = int(offsets[r])
        parents += [p if p == -1 else p + off for p in arm.parents]
        joints += [Joint(j.kinds, j.axes, name=f"arm{r}/{j.name or k}", pitch=list(j.pitches))
                   for k, j in enumerate(arm.joints)]
        places += list(arm.placements)
        inertias += list(arm.inertias)
        names += [f"arm{r}/{nm}" for nm in arm.names]
    R_ko, p_ko = object_in_body(grasps[holder])
    tip = int(offsets[holder]) + grasps[holder].body
    obj = Inertia(float(object_inertia.mass), p_ko + R_ko @ np.asarray(object_inertia.com, float),
                  R_ko @ np.asarray(object_inertia.I_com, float) @ R_ko.T)
    # Welded together: the spatial inertias about the tip body's origin add.
    inertias[tip] = inertia_from_spatial(sum(spatial_inertia(x.mass, x.com, x.I_com)
                                             for x in (inertias[tip], obj)))
    gravity = np.asarray(arms[holder].gravity, float)
    model = Model(parents, joints, places, inertias, gravity, names,
                  allow_massless=any(a.allow_massless for a in arms))
    closures = []
    for r, g in enumerate(grasps):
        if r == holder:
            continue
        frame2 = (tip, R_ko @ g.R_oe, p_ko + R_ko @ g.p_oe)
        closures.append(LoopClosure((int(offsets[r]) + g.body, g.R, g.p), frame2, rows=rows,
                                    name=f"grasp{r}"))
    dof_offsets = np.concatenate([[0], np.cumsum([a.ndof for a in arms])]).astype(int)
    return SimpleNamespace(
        system=ClosedSystem(model, closures), model=model,
        q=None if qs is None else np.concatenate([np.asarray(x, float) for x in qs]),
        offsets=offsets[:-1].tolist(),
        dofs=[slice(int(dof_offsets[r]), int(dof_offsets[r + 1])) for r in range(len(arms))],
        object_frame=(tip, R_ko, p_ko))


def two_pandas_closed(**kw) -> SimpleNamespace:
    r"""Two Franka Pandas holding a box as one ClosedSystem: 14 dofs, one 6-row weld (H10).

    The box (of :func:`opalg.closed.examples_arms.two_pandas`, whose keyword arguments ``kw``
    are passed on) is merged into Panda 0's hand body; Panda 1's grasp frame is welded to the
    box's second grasp frame.  ``q`` is the closed configuration of ``two_pandas()``'s IK;
    ``multiarm`` holds that example (the MultiArm formulation of the same mechanism).

    Examples
    --------
    >>> import numpy as np
    >>> from opalg.closed.forest import two_pandas_closed
    >>> f = two_pandas_closed()
    >>> f.model.ndof, f.system.m, bool(np.abs(f.system.constraint_error(f.q)).max() < 1e-10)
    (14, 6, True)
    """
    from opalg.closed.examples_arms import two_pandas

    ex = two_pandas(**kw)
    f = arms_as_forest(ex.arms, ex.system.grasps, ex.object_inertia, ex.qs)
    f.multiarm = ex
    return f
