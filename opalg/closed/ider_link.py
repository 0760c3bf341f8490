r"""Ider's control-force model with geometrical constraints: two planar arms carrying a box (G5, H10).

The split of :mod:`opalg.algorithms.constrained` made physical.  Two planar 3R arms hold a box (one model,
the box merged into arm 0's tip, :func:`opalg.closed.forest.arms_as_forest`); y = θ̇ (N = 6).

* B_G θ̈ = h_G: the grasp closure, B_G = G_c (rows ω_z, v_x, v_y; H2), h_G = U (H3);
* B_K θ̈ = h_K: a prescribed box path in world-aligned rows x = (θ_z, x, y) of the box frame:
  ẋ = Π_K W J_o θ̇ with W = diag(R_o, R_o), so B_K = Π_K W J_o and
  h_K = ẍ_d(t) − Π_K W (J̇_o θ̇ + [0; ω_o × v_o])  (d/dt (R v) = R(v̇ + ω × v));
* Z = [B_G; A]: the grasp reactions stay normal to the closure, the path is realized by the
  motors A (unit rows e_j of the chosen joints); Z = B is the conventional model.

``path_rows=(3, 4)`` (box position only) leaves the system redundant, c = 5 < N = 6: the motion
depends on the choice of A.  ``path_rows=(2, 3, 4)`` makes c = N: B is square and θ̈ = B⁻¹h for
every feasible A; only the moments differ (H10).  The motor moments are τ_A = Aᵀμ (zero on
unmotorized joints); the grasp reactions v_G equal −λ of :class:`ClosedSystem` (H5's sign).
"""

from __future__ import annotations

import warnings
from types import SimpleNamespace
from typing import Sequence

import numpy as np

from opalg.algorithms import constrained as con
from opalg.algorithms.crba import crba
from opalg.algorithms.rnea import bias
from opalg.errors import InfeasibleDirections, StateError
from opalg.model.kinematics import body_poses
from opalg.algorithms.operational import frame_jacobian
from opalg.spatial.vectors import rotation_about
from opalg.closed.examples_arms import PLANAR_ROWS, X_world, box_path, two_planar_arms
from opalg.closed.forest import arms_as_forest
from opalg.closed.grasp import frame_drift, pose_of, solve_frame_pose
from opalg.simulate import Event, Trajectory, integrate
from opalg.simulate.compat import renamed

#: Default κ below which :func:`simulate` stops: the motors can no longer realize the path.
KAPPA_MIN = 1e-3


def two_arms_box(path_rows: Sequence[int] = (3, 4), **path) -> SimpleNamespace:
    r"""The task: two planar 3R arms holding a box, a box path, the rows of it that are prescribed.

    ``path`` goes to :func:`opalg.closed.examples_arms.box_path` (centre, amplitude, tilt,
    period); the start configuration is the closed one of
    :func:`~opalg.closed.examples_arms.two_planar_arms` (box level at the path's start) with
    the least-norm θ̇ that satisfies both constraints.

    Examples
    --------
    >>> from opalg.closed.ider_link import two_arms_box
    >>> task = two_arms_box()
    >>> task.n, task.n_geometric, len(task.path_rows)
    (6, 3, 2)
    """
    rows = [int(r) for r in path_rows]
    if not rows or any(r not in (2, 3, 4) for r in rows) or len(set(rows)) != len(rows):
        raise StateError(f"two_arms_box: path_rows must be distinct entries of (2, 3, 4) "
                         f"(θ_z, x, y of the box), got {list(path_rows)!r}")
    ex = two_planar_arms()
    f = arms_as_forest(ex.arms, ex.system.grasps, ex.object_inertia, ex.qs, rows=PLANAR_ROWS)
    task = SimpleNamespace(system=f.system, model=f.model, object_frame=f.object_frame, arms=ex,
                           path_rows=rows, path=dict(path), n=f.model.ndof, n_geometric=f.system.m)
    _, xd, _ = desired(task, 0.0)
    B = np.vstack([f.system.jacobian(f.q), _path_jacobian(task, f.q)[0]])
    task.q0 = f.q
    task.qd0 = np.linalg.lstsq(B, np.concatenate([np.zeros(task.n_geometric), xd]), rcond=None)[0]
    return task


def closed_at(task, theta: float, x: float, y: float, q_start=None) -> np.ndarray:
    r"""A closed configuration with the box at (θ_z, x, y): grasp-frame IK of each arm (H6).

    Examples
    --------
    >>> import numpy as np
    >>> from opalg.closed.ider_link import closed_at, two_arms_box
    >>> task = two_arms_box()
    >>> q = closed_at(task, 0.1, 0.8, 1.0)
    >>> bool(np.abs(task.system.constraint_error(q)).max() < 1e-10)
    True
    """
    ex = task.arms
    X_o0 = X_world(rotation_about([0, 0, 1.0], theta), [x, y, 0.0])
    q_start = ex.qs if q_start is None else np.split(np.asarray(q_start, float), 2)
    return np.concatenate([solve_frame_pose(arm, g.frame, g.X_eo @ X_o0, q0, rows=PLANAR_ROWS, what=f"arm {r}")
                           for r, (arm, g, q0) in enumerate(zip(ex.arms, ex.system.grasps, q_start))])


def desired(task: SimpleNamespace, t: float):
    r"""x_d, ẋ_d, ẍ_d at time t in the task's rows of (θ_z, x, y) (world-aligned, from box_path).

    Examples
    --------
    >>> from opalg.closed.ider_link import desired, two_arms_box
    >>> desired(two_arms_box(), 0.0)[0].round(12).tolist()
    [0.8, 1.0]
    """
    X, V, a = box_path(t, **task.path)
    R, p = pose_of(X)
    w, v = V[:3], V[3:]
    full = [np.r_[0, 0, np.arctan2(R[1, 0], R[0, 0]), p],
            np.r_[R @ w, R @ v], np.r_[R @ a[:3], R @ (a[3:] + np.cross(w, v))]]
    return tuple(x[task.path_rows] for x in full)


def _path_jacobian(task, q, qd=None):
    """B_K = Π_K W J_o and (with qd) the velocity-product part Π_K W (J̇θ̇ + [0; ω × v])."""
    body, R_ko, _ = task.object_frame
    Rk = body_poses(task.model, q)[0][body]
    W = np.kron(np.eye(2), Rk @ R_ko)
    J = frame_jacobian(task.model, q, task.object_frame)
    BK = (W @ J)[task.path_rows]
    if qd is None:
        return BK, None
    V = J @ qd
    acc = frame_drift(task.model, q, qd, task.object_frame) + np.r_[np.zeros(3), np.cross(V[:3], V[3:])]
    return BK, (W @ acc)[task.path_rows]


def box_pose(task, q) -> np.ndarray:
    """The box's (θ_z, x, y) in the task's rows at q (for the tracking error).

    Examples
    --------
    >>> from opalg.closed.ider_link import box_pose, two_arms_box
    >>> task = two_arms_box()
    >>> box_pose(task, task.q0).round(12).tolist()
    [0.8, 1.0]
    """
    body, R_ko, p_ko = task.object_frame
    R, p = body_poses(task.model, q)
    Ro = R[body] @ R_ko
    return np.r_[0, 0, np.arctan2(Ro[1, 0], Ro[0, 0]), p[body] + R[body] @ p_ko][task.path_rows]


def ider_system(task, t: float, q, qd, baumgarte=None) -> SimpleNamespace:
    r"""(M, Q, F, B, h, n_geometric) of ``M θ̈ + Q = F + Zᵀv``, ``B θ̈ = h`` at (t, q, θ̇) (G5, H10).

    M = ℳ (CRBA), Q = C (bias forces with gravity), F = 0, B = [G_c; B_K], h = [U; h_K].
    ``baumgarte=(a, b)`` adds −2a G_cθ̇ − b²e(q) to h_G and 2a(ẋ_d − ẋ) + b²(x_d − x) to h_K.

    Examples
    --------
    >>> from opalg.closed.ider_link import ider_system, two_arms_box
    >>> task = two_arms_box()
    >>> s = ider_system(task, 0.0, task.q0, task.qd0)
    >>> s.B.shape, s.n_geometric
    ((5, 6), 3)
    """
    sys = task.system
    G, U = sys.jacobian(q), sys.drift(q, qd)
    BK, acc = _path_jacobian(task, q, qd)
    x_d, xd_d, xdd_d = desired(task, t)
    hK = xdd_d - acc
    if baumgarte is not None:
        a, b = baumgarte
        U = U - 2 * a * G @ qd - b * b * sys.constraint_error(q)
        hK = hK + 2 * a * (xd_d - BK @ qd) + b * b * (x_d - box_pose(task, q))
    return SimpleNamespace(M=crba(task.model, q), Q=bias(task.model, q, qd), F=np.zeros(task.n),
                           B=np.vstack([G, BK]), h=np.concatenate([U, hK]), n_geometric=sys.m)


def motor_rows(task, motors: Sequence[int]) -> np.ndarray:
    """A: one unit row e_j per motorized joint j (as many as prescribed path rows).

    Examples
    --------
    >>> from opalg.closed.ider_link import motor_rows, two_arms_box
    >>> motor_rows(two_arms_box(), [0, 3])[1].tolist()
    [0.0, 0.0, 0.0, 1.0, 0.0, 0.0]
    """
    motors = list(motors)
    if len(motors) != len(task.path_rows):
        raise StateError(f"motor_rows: {len(task.path_rows)} path rows need as many motors, got {motors!r}")
    if len(set(motors)) != len(motors) or any(not 0 <= int(j) < task.n for j in motors):
        raise StateError(f"motor_rows: motors must be distinct joint indices in 0..{task.n - 1}, got {motors!r}")
    return np.eye(task.n)[[int(j) for j in motors]]


def feasibility(s: SimpleNamespace, A=None) -> float:
    r"""κ = :func:`opalg.algorithms.constrained.conditioning` (M, B, Z) with Z = [B_G; A] (Z = B if A is None).

    Examples
    --------
    >>> from opalg.closed.ider_link import feasibility, ider_system, motor_rows, two_arms_box
    >>> task = two_arms_box(); s = ider_system(task, 0.0, task.q0, task.qd0)
    >>> abs(feasibility(s) - 1.0) < 1e-12, 0 < feasibility(s, motor_rows(task, [0, 3])) < 1
    (True, True)
    """
    return con.conditioning(s.M, s.B, con.force_directions(s.B, A, s.n_geometric))


def solve(s: SimpleNamespace, A=None, method: str = "augmented", check: bool = True) -> SimpleNamespace:
    r"""θ̈ and the forces: ``v = [v_G; μ]``, τ = Zᵀv, motor moments Aᵀμ, grasp reactions v_G.

    ``method`` is ``"augmented"`` (:func:`~opalg.algorithms.constrained.solve_augmented`) or ``"reduced"``
    (:func:`~opalg.algorithms.constrained.solve_reduced`).  A = None: the conventional model Z = B, whose
    "motor moments" B_Kᵀμ are the path's own constraint forces.

    Examples
    --------
    >>> import numpy as np
    >>> from opalg.closed.ider_link import ider_system, motor_rows, solve, two_arms_box
    >>> task = two_arms_box(); s = ider_system(task, 0.0, task.q0, task.qd0)
    >>> r = solve(s, motor_rows(task, [0, 3]))
    >>> bool(np.allclose(s.B @ r.qdd, s.h)), np.flatnonzero(r.tau_motor).tolist()
    (True, [0, 3])
    """
    Z = con.force_directions(s.B, A, s.n_geometric)
    try:
        fn = {"augmented": con.solve_augmented, "reduced": con.solve_reduced}[method]
    except KeyError:
        raise StateError(f"solve: method must be 'augmented' or 'reduced', got {method!r}") from None
    sol = fn(s.M, s.Q, s.F, s.B, s.h, Z, check=check)
    c1 = s.n_geometric
    return SimpleNamespace(qdd=sol.ydot, v=sol.v, tau=Z.T @ sol.v, reaction=sol.v[:c1],
                           mu=sol.v[c1:], tau_motor=Z[c1:].T @ sol.v[c1:])


def simulate(task, motors: Sequence[int] | None, t_span=None, t_eval=None, n_out: int = 51,
             baumgarte=None, kappa_min: float = KAPPA_MIN, method: str = "DOP853", rtol: float = 1e-9,
             atol: float = 1e-11, max_step: float = np.inf, max_steps: int = 100_000, wall_time: float | None = None, **old) -> Trajectory:
    r"""Carry the box along the path with motors ``motors`` (None: conventional Z = B).

    θ̈ from the augmented form at every right-hand side, integrated by
    :func:`opalg.simulate.integrate` from the task's closed start (task.q0, task.qd0) at t0.  A
    terminal event stops the run when κ falls below ``kappa_min`` (``status="event"``, the message
    says when: the motors can no longer realize the path); a run that cannot go on (the solver's
    step size collapses, a singular solve) ends ``status="failed"`` with the time and the reason.

    Parameters
    ----------
    task : SimpleNamespace
        From :func:`two_arms_box`.
    motors : sequence of int or None
    t_span : (t0, t1)
        Times on the box path, default (0, 1) (``t_end`` is the old name of t1, with t0 = 0).
    t_eval : array_like, optional
        Output times within t_span; default ``n_out`` evenly spaced ones.
    baumgarte : (a, b), optional
        As in :func:`ider_system`.
    kappa_min : float
    method, rtol, atol, max_step, max_steps, wall_time
        As in :func:`opalg.simulate.integrate` (over a budget, or stalled, a run ends "failed"
        with its steps).

    Returns
    -------
    Trajectory
        q, v (= θ̇) at the output times reached, and the extras ``kappa`` (κ), ``tau_motor`` (the
        motor moments Aᵀμ), ``reaction`` (the grasp reactions v_G), ``tracking_error`` (x − x_d)
        and ``closure_error`` (e(q)), one row per sample.

    Examples
    --------
    >>> from opalg.closed.ider_link import simulate, two_arms_box
    >>> out = simulate(two_arms_box(), [0, 3], t_span=(0.0, 0.2), n_out=3)
    >>> out.status, out.kappa.shape, bool(abs(out.tracking_error).max() < 1e-6)
    ('completed', (3,), True)
    """
    if isinstance(t_span, (int, float, np.integer, np.floating)) and not isinstance(t_span, bool):
        warnings.warn("ider_link.simulate: the third argument is now t_span = (t0, t1); a number is read "
                      "as the old t_end, t_span = (0, t_end), until the next release",
                      DeprecationWarning, stacklevel=2)
        t_span = (0.0, t_span)
    given = t_span
    t_span = renamed("ider_link.simulate", old, {"t_end": "t_span"}, t_span=t_span).get("t_span", (0.0, 1.0))
    if given is None and "t_end" in old:
        t_span = _old_t_end(t_span)
    A = None if motors is None else motor_rows(task, motors)
    who = "conventional Z = B" if motors is None else f"motors {list(motors)}"
    try:
        t0, t1 = (float(x) for x in t_span)
    except (TypeError, ValueError):
        raise StateError(f"ider_link.simulate: t_span must be a pair (t0, t1), got {t_span!r}") from None
    if t_eval is None:
        if isinstance(n_out, bool) or not isinstance(n_out, (int, np.integer)) or n_out < 2:
            raise StateError(f"ider_link.simulate: n_out must be an int >= 2, got {n_out!r}")
        t_eval = np.linspace(t0, t1, n_out)
    n = task.n
    y0 = np.concatenate([task.q0, task.qd0])
    try:      # κ at the start: infeasible motors are an error (the event does not count at t0)
        feasibility(ider_system(task, t0, task.q0, task.qd0), A)
    except InfeasibleDirections as exc:
        raise InfeasibleDirections(f"ider_link.simulate: {who}: {exc}") from None

    def rhs(t, x):
        s = ider_system(task, t, x[:n], x[n:], baumgarte)
        return np.concatenate([x[n:], solve(s, A, check=False).qdd])

    def kappa_event(t, x):
        return feasibility(ider_system(task, t, x[:n], x[n:]), A) - kappa_min

    sol = integrate(rhs, y0, (t0, t1), events=Event(kappa_event, direction=-1, name="kappa_min"),
                    t_eval=t_eval, method=method, rtol=rtol, atol=atol, max_step=max_step,
                    max_steps=max_steps, wall_time=wall_time, name="ider_link.simulate")
    rows = []
    for t, q, qd in zip(sol.t, sol.y[:, :n], sol.y[:, n:]):
        s = ider_system(task, t, q, qd)
        r = solve(s, A, check=False)
        rows.append((feasibility(s, A), r.tau_motor, r.reaction, box_pose(task, q) - desired(task, t)[0],
                     task.system.constraint_error(q)))
    shapes = [(), (n,), (task.n_geometric,), (len(task.path_rows),), (task.system.m,)]
    extras = {name: np.array([r[i] for r in rows]).reshape((len(rows),) + shape)
              for i, (name, shape) in enumerate(zip(("kappa", "tau_motor", "reaction", "tracking_error",
                                                     "closure_error"), shapes))}
    traj = Trajectory.from_solution(sol, n, n, **extras)
    if traj.status == "event":
        traj.message = (f"{sol.message}: {who} turn infeasible at t = {sol.t_stop:.4g} s, κ < {kappa_min:g} "
                        "(the motors can no longer realize the box path)")
    elif traj.status == "failed":        # say how close to infeasible the motors were where it stopped
        try:
            k = feasibility(ider_system(task, sol.t_stop, sol.y_stop[:n], sol.y_stop[n:]), A)
            traj.message += f" (κ = {k:.2g} there, kappa_min = {kappa_min:g})"
        except Exception:                # the state where it stopped may not be evaluable
            pass
    return traj


def _old_t_end(t_end):
    """(0, t_end) from the old ``t_end`` (a positive number; StateError otherwise)."""
    if isinstance(t_end, (bool, str)) or not isinstance(t_end, (int, float, np.integer, np.floating)) \
            or not np.isfinite(t_end) or t_end <= 0:
        raise StateError(f"ider_link.simulate: t_end must be a positive number, got {t_end!r}")
    return (0.0, float(t_end))
