r"""A free-floating body of a TreeSystem as an opalg free joint, and the state map between them.

docs/REFERENCE.md K13.  In the symbolic route a floating body B_j is an ordinary body on a
6-DoF hinge (``Hinge(3, 3)``: slides Z_j1..Z_j3 along the x, y, z axes of its inner frame, then
the z-x-z angles H_j1, H_j2, H_j3, so ``G_j = Tz(H1) Tx(H3) Tz(H2)``).  In the operator route
the same body sits on :class:`opalg.FreeJoint` (K8): ``q = [p; x, y, z, w]``, ``v = [ω; v]``
in body coordinates.  The state map (every other coordinate is copied)::

    p = (Z_j1, Z_j2, Z_j3)                       R = G_jᵀ = Rz(H2) Rx(H3) Rz(H1)
    quat = qz(H2) ⊗ qx(H3) ⊗ qz(H1),  qz(a) = (0, 0, sin a/2, cos a/2), qx(a) = (sin a/2, 0, 0, cos a/2)
    ω = E(H) Ḣ,  E = [[0, s3 s1, c1], [0, s3 c1, −s1], [1, c3, 0]]   (columns H1, H2, H3; the paper's Ω_j)
    v = Rᵀ ṗ = G_j Ż

so ``v_op = J(q) q̇`` with J = :func:`euler_jacobian` (det E = −sin H3: the chart is singular
at H3 = 0 mod π).  Power is the same in both routes, hence ``ℳ_euler = Jᵀ ℳ_v J`` and
``bias_euler = Jᵀ (bias_v + ℳ_v J̇ q̇)``.
"""

from __future__ import annotations

import numpy as np

from opalg.errors import ModelError, StateError
from opalg.symbolic.data import check_system, is_free_hinge
from opalg.symbolic.model_route import to_model

#: Roles and fill colours of the free-truss deployable's bodies (the truss is body 1 there).
FREE_ROLES = {1: "truss B1", 2: "platform B2", 3: "inner panel B3", 4: "boom B4", 5: "radiator B5",
              6: "outer panel B6"}
FREE_COLOURS = {1: "0.55", 2: "0.75", 3: "C0", 4: "C3", 5: "C2", 6: "C9"}


def free_bodies(system) -> tuple[int, ...]:
    """Bodies j of ``system`` on a 6-DoF hinge ``Hinge(3, 3)`` with slides along x, y, z: the
    ones :func:`free_root_model` puts on a free joint.

    Examples
    --------
    >>> from opalg.symbolic import deployable_example
    >>> from opalg.symbolic.free_root import free_bodies
    >>> free_bodies(deployable_example("deploy", base="free")), free_bodies(deployable_example("deploy"))
    ((1,), ())
    """
    check_system(system, "free_bodies")
    return tuple(j for j in system.order if is_free_hinge(system.hinges[j - 1]))


def _layout(system):
    """(free bodies, kept q indices = old labels of to_model, {carrier label: j}, first-axis
    label of each free body); a ModelError if no body is free."""
    free = free_bodies(system)
    if not free:
        raise ModelError("no body of this system is on a free 6-DoF hinge (Hinge(3, 3) with slides "
                         "along x, y, z): nothing to put on an opalg FreeJoint")
    drop, carrier, first = set(), {}, {}
    for j in free:
        idx = [i for *_, i in system.hinge_chain(j)]
        carrier[idx[-1]], first[j] = j, idx[0]
        drop |= set(idx[:-1])
    return free, [k for k in range(system.N) if k not in drop], carrier, first


def free_root_model(system):
    """opalg Model of ``system`` with each free body (:func:`free_bodies`) on a FreeJoint.

    The other hinges become single-axis bodies as in :func:`~opalg.symbolic.model_route.to_model`;
    the model's bodies follow the q order of ``system`` with each free hinge's six coordinates
    collapsed into one free body (named ``B{j}``), so ``q_op`` and ``v_op`` of
    :func:`free_state` line up with ``model.q_slice`` / ``model.dof_slice``.

    Examples
    --------
    >>> import numpy as np, opalg
    >>> from opalg.symbolic import Body, Hinge, TreeSystem
    >>> from opalg.symbolic.free_root import free_root_model
    >>> s = TreeSystem([0, 1], [Hinge(3, 3), Hinge(1, offset=(1, 0, 0))], [Body(5, (0, 0, 0.1)), Body(1, (0.5, 0, 0))])
    >>> model = free_root_model(s)
    >>> model.names, model.nq, model.nv, model.free_bodies
    (('B1', 'H2_1'), 8, 7, (0,))
    """
    check_system(system, "free_root_model")
    from opalg.model.free_joint import FreeJoint
    from opalg.model.multibody import Model

    free, keep, carrier, first = _layout(system)
    base = to_model(system)
    new = {k: n for n, k in enumerate(keep)}

    def up(k):
        return -1 if k == -1 else new[k]

    parents, joints, places, names = [], [], [], []
    for k in keep:
        if k in carrier:
            j = carrier[k]
            parents.append(up(base.parents[first[j]]))
            joints.append(FreeJoint(f"free{j}"))
            places.append(base.placements[first[j]])
            names.append(f"B{j}")
        else:
            parents.append(up(base.parents[k]))
            joints.append(base.joints[k])
            places.append(base.placements[k])
            names.append(base.names[k])
    return Model(parents, joints, places, [base.inertias[k] for k in keep], gravity=base.gravity,
                 names=names, allow_massless=True)


def _vector(x, n, name):
    if isinstance(x, (str, bytes)):
        raise StateError(f"{name} must hold numbers, got a string")
    try:
        x = np.asarray(x)
        ok = x.dtype.kind in "iufc"
    except (TypeError, ValueError):
        ok = False
    if not ok:
        raise StateError(f"{name} must hold numbers, got {x!r:.60}")
    if x.shape != (n,):
        raise StateError(f"{name} must have shape ({n},) (one entry per generalized coordinate), got {x.shape}")
    if not np.all(np.isfinite(x)):
        raise StateError(f"{name} has non-finite entries at indices {np.flatnonzero(~np.isfinite(x)).tolist()}")
    return x.astype(complex if x.dtype.kind == "c" else float)


def _angles(system, j, q):
    """(Z indices, H1, H2, H3 indices) of free body j and the values of its three angles."""
    Z = [system.coordinate(j, "Z", s) for s in (1, 2, 3)]
    H = [system.coordinate(j, "H", i) for i in (1, 2, 3)]
    iz, ih = [system.q.index(z) for z in Z], [system.q.index(h) for h in H]
    return iz, ih, q[ih]


def _G(h1, h2, h3):
    """G = Tz(H1) Tx(H3) Tz(H2) as numbers (complex allowed)."""
    def tz(a):
        c, s = np.cos(a), np.sin(a)
        return np.array([[c, s, 0 * a], [-s, c, 0 * a], [0 * a, 0 * a, 1 + 0 * a]])

    c, s = np.cos(h3), np.sin(h3)
    tx = np.array([[1 + 0 * h3, 0 * h3, 0 * h3], [0 * h3, c, s], [0 * h3, -s, c]])
    return tz(h1) @ tx @ tz(h2)


def euler_jacobian(system, q) -> np.ndarray:
    r"""J(q) (nv x N) with ``v_op = J(q) q̇`` (docs/REFERENCE.md K13): per free body
    ``ω = E(H) Ḣ`` and ``v = G_j Ż`` (module docstring), identity rows for the other coordinates.

    ``q`` may be complex (the map is analytic: complex-step derivatives give J̇ q̇).

    Examples
    --------
    >>> import numpy as np
    >>> from opalg.symbolic import Body, Hinge, TreeSystem
    >>> from opalg.symbolic.free_root import euler_jacobian
    >>> s = TreeSystem([0], [Hinge(3, 3)], [Body(1)])
    >>> J = euler_jacobian(s, np.array([0, 0, 0, 0.0, 0.0, np.pi / 2]))
    >>> J[:3, 3:].round(12) + 0.0                 # E at H = (0, 0, π/2): ω = (Ḣ3, Ḣ2, Ḣ1)
    array([[0., 0., 1.],
           [0., 1., 0.],
           [1., 0., 0.]])
    """
    check_system(system, "euler_jacobian")
    free, keep, carrier, _ = _layout(system)
    q = _vector(q, system.N, "q")
    rows = []
    for k in keep:
        if k in carrier:
            iz, ih, (h1, h2, h3) = _angles(system, carrier[k], q)
            s1, c1, s3, c3 = np.sin(h1), np.cos(h1), np.sin(h3), np.cos(h3)
            block = np.zeros((6, system.N), dtype=q.dtype)
            block[:3, ih] = np.array([[0 * h1, s3 * s1, c1], [0 * h1, s3 * c1, -s1], [1 + 0 * h1, c3, 0 * h1]])
            block[3:, iz] = _G(h1, h2, h3)
            rows.append(block)
        else:
            row = np.zeros((1, system.N), dtype=q.dtype)
            row[0, k] = 1
            rows.append(row)
    return np.concatenate(rows)


def free_state(system, q, qd) -> tuple[np.ndarray, np.ndarray]:
    r"""The operator route's state (``q_op`` (nq), ``v_op`` (nv)) of the symbolic state (q, q̇).

    Per free body: ``p = Z``, ``quat = qz(H2) ⊗ qx(H3) ⊗ qz(H1)`` (so that
    ``rotation(quat) = G_jᵀ``), ``[ω; v] = [E(H) Ḣ; G_j Ż]`` (module docstring, K13); every
    other coordinate and rate is copied.  Order: the bodies of :func:`free_root_model`.

    Examples
    --------
    >>> import numpy as np
    >>> from opalg.symbolic import Body, Hinge, TreeSystem
    >>> from opalg.symbolic.free_root import free_state
    >>> s = TreeSystem([0], [Hinge(3, 3)], [Body(1)])
    >>> q, v = free_state(s, [1, 2, 3, 0, 0, np.pi / 2], [0, 0, 1.0, 0, 0, 0])   # truss turned +90° about x
    >>> q.round(6).tolist(), (v.round(12) + 0.0).tolist()          # ṗ = e_z is the body's +y
    ([1.0, 2.0, 3.0, 0.707107, 0.0, 0.0, 0.707107], [0.0, 0.0, 0.0, 0.0, 1.0, 0.0])
    """
    check_system(system, "free_state")
    from opalg.spatial.quaternion import multiply

    free, keep, carrier, _ = _layout(system)
    q, qd = _vector(q, system.N, "q").real, _vector(qd, system.N, "qd").real
    qs = []
    for k in keep:
        if k in carrier:
            iz, _, (h1, h2, h3) = _angles(system, carrier[k], q)
            half = np.array([h2, h3, h1]) / 2
            qz2, qx3, qz1 = ([0, 0, np.sin(half[0]), np.cos(half[0])], [np.sin(half[1]), 0, 0, np.cos(half[1])],
                             [0, 0, np.sin(half[2]), np.cos(half[2])])
            qs.append(np.r_[q[iz], multiply(multiply(qz2, qx3), qz1)])
        else:
            qs.append(q[[k]])
    return np.concatenate(qs), euler_jacobian(system, q) @ qd


def operator_poses(system, model=None):
    """Callable ``poses(q_op, t=0.0) -> (R, p)`` of the operator route, indexed like
    :func:`~opalg.symbolic.numeric.pose_function` (B0 = the inertial frame, then B1..Bn), so
    that :func:`~opalg.symbolic.examples.box_outlines` draws operator-route states.

    Examples
    --------
    >>> import numpy as np
    >>> from opalg.symbolic import Body, Hinge, TreeSystem, pose_function
    >>> from opalg.symbolic.free_root import free_state, operator_poses
    >>> s = TreeSystem([0, 1], [Hinge(3, 3), Hinge(1, offset=(1, 0, 0))], [Body(5), Body(1, (0.5, 0, 0))])
    >>> q = np.array([0.1, 0.2, 0.3, 0.4, 0.5, 1.2, -0.7])
    >>> Ro, po = operator_poses(s)(free_state(s, q, np.zeros(7))[0])
    >>> Rs, ps = pose_function(s)(q)
    >>> bool(np.allclose(Ro, Rs, atol=1e-14) and np.allclose(po, ps, atol=1e-14))
    True
    """
    check_system(system, "operator_poses")
    from opalg.model.kinematics import body_poses

    model = free_root_model(system) if model is None else model
    _, keep, carrier, _ = _layout(system)
    new = {k: n for n, k in enumerate(keep)}
    frame = {0: (-1, np.zeros(3))}                # B_j = (model body, origin offset in it)
    for j in system.order:
        chain = system.hinge_chain(j)
        if chain:
            frame[j] = (new[chain[-1][2]], np.zeros(3))
        else:                                      # welded: the inner frame, moved by the offset
            pl, off = frame[system.T[j - 1]]
            frame[j] = (pl, off + np.array(system.hinges[j - 1].offset.tolist(), float)[:, 0])

    def poses(q, t=0.0):
        R, p = body_poses(model, q)
        Rs, ps = np.zeros((system.n + 1, 3, 3)), np.zeros((system.n + 1, 3))
        for j, (k, off) in frame.items():
            Rk, pk = (np.eye(3), np.zeros(3)) if k == -1 else (np.asarray(R[k], float), np.asarray(p[k], float))
            Rs[j], ps[j] = Rk, pk + Rk @ off
        return Rs, ps

    return poses
