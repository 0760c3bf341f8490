r"""Ider (1990): the redundant planar 3-link arm with a prescribed end-effector path.

S. K. Ider, "Modeling of control forces for kinematical constraints in the
dynamics of multibody systems — a new approach", NASA workshop proceedings,
pp. 382–393 (section 4).  The arm is an opalg model (so ℳ and the bias come
from the operator core); the constrained dynamics are :mod:`opalg.algorithms.constrained`.

Decisions on the paper's open points:

* **inertia reading**: ``inertia="joint"`` (default) reads I_i as the moment of
  inertia about the proximal joint with the mass centre at mid-link (10 = 30·1²/3
  is exactly a uniform rod about its end); ``"com"`` reads it as the central moment;
* **gravity** is off by default (the figures' scales say the arm moves in a
  horizontal plane); ``gravity=9.81`` puts it in a vertical plane (gravity −y);
* **path** (eq. 20): the tip moves along x at ``v_A = −1 m/s`` from its exact
  initial position at θ0 = (60°, −10°, −90°) (the paper prints it rounded);
* **initial speeds**: y2 = 0 and (y1, y3) solved from B(θ0) y = (v_A, 0), which
  gives the paper's rounded (0.386, 0, −0.9618) rad/s;
* **sign of v**: applied forces, τ = Zᵀ v (see :mod:`opalg.algorithms.constrained`).

Modules: :mod:`opalg.ider.geometry` (the arm, its tip path and the constraint B, h,
re-derived), this one (the simulation: Ider's method of :mod:`opalg.algorithms.constrained`,
its stop events and the singular time of :mod:`opalg.algorithms.constrained.singular`, stepped
by :func:`opalg.simulate.integrate`), :mod:`opalg.ider.singular` (this arm's reach time, and the
likely reason a run failed), :mod:`opalg.ider.feasibility` (κ(t) and the reach measure along a
run, and the display rule that clips the moments at a stop), :mod:`opalg.ider.panel` and
:mod:`opalg.ider.panel_plots` (the notebook's widget panel and its pictures).
"""

from __future__ import annotations

import warnings

import numpy as np

from opalg.algorithms.crba import crba
from opalg.algorithms.rnea import bias
from opalg.algorithms.constrained import (
    InfeasibleDirections, conditioning, feasibility_measure, force_directions, singular_time, solve_augmented,
    solve_reduced, stop_event)
from opalg.algorithms.constrained.passes import conditioning_passes, solve_passes  # noqa: F401
from opalg.errors import StateError
from opalg.ider._inputs import _real, _settings, _time_span
# The arm's parameters and kinematics (opalg.ider.geometry) are public names of opalg.ider too.
from opalg.ider.geometry import _tip_terms
from opalg.ider.geometry import (
    INERTIAS, LENGTHS, MASSES, THETA0, TIP0, V_A, arm, initial_speeds, joint_points, path, reach_measure, tip,
    tip_bias, tip_jacobian)
from opalg.ider.singular import STOP_TOL, _diagnosis, _reach_time
# Why a run stops, as series to plot (the panel's κ(t) axis).
from opalg.ider.feasibility import FeasibilitySeries, display_limits, kappa_series  # noqa: F401
from opalg.simulate import Trajectory, integrate
from opalg.simulate.compat import renamed
from opalg.simulate.integrate import METHODS


#: Control-force directions of the widget presets (None: the conventional model Z = B).
PRESETS = {
    "conventional": None,
    "no motor at joint 1": [[0.0, 1.0, 0.0], [0.0, 0.0, 1.0]],
    "no motor at joint 2": [[1.0, 0.0, 0.0], [0.0, 0.0, 1.0]],
    "no motor at joint 3": [[1.0, 0.0, 0.0], [0.0, 1.0, 0.0]],
}



def _is_conventional(A) -> bool:
    if A is None:
        return True
    if isinstance(A, str):
        return A == "conventional" or (A in PRESETS and PRESETS[A] is None)
    return False


def directions(A, q) -> np.ndarray:
    """Z at configuration q: B(q) for the conventional model, else the validated A.

    Examples
    --------
    >>> import numpy as np
    >>> from opalg import ider
    >>> ider.directions("no motor at joint 1", ider.THETA0)
    array([[0., 1., 0.],
           [0., 0., 1.]])
    >>> bool(np.array_equal(ider.directions(None, ider.THETA0), ider.tip_jacobian(ider.THETA0)))
    True
    """
    B = tip_jacobian(q)
    if A is None or (isinstance(A, str) and A == "conventional"):
        return B
    if isinstance(A, str):
        if A not in PRESETS:
            raise StateError(f"A: unknown preset {A!r:.80}; choose one of {list(PRESETS)}")
        return directions(PRESETS[A], q)
    return force_directions(B, A)


def __getattr__(name):
    # IderResult, the result class of the previous release: every run is now a Trajectory.
    if name == "IderResult":
        warnings.warn("opalg.ider.IderResult is now opalg.simulate.Trajectory (qd is v, v is forces, t_fail is "
                      "t_stop, status 'singular' is 'event'); the name goes in the next release",
                      DeprecationWarning, stacklevel=2)
        return Trajectory
    raise AttributeError(f"module 'opalg.ider' has no attribute {name!r}")


def _dynamics(model, Zc, formulation, stab, t, q, y, check=True):
    """(solution, M, Q, B, Z) at one state (M = Q = None for "passes", which forms no ℳ)."""
    B, h = _tip_terms(q, y)
    if stab is not None:  # Baumgarte: drive Φ̈ + 2α Φ̇ + β² Φ = 0
        alpha, beta = stab
        h = h - 2 * alpha * (B @ y - np.array([V_A, 0.0])) - beta**2 * (tip(q) - path(t))
    Z = B if Zc is None else Zc
    if formulation == "passes":
        return solve_passes(model, q, y, B, h, Z, check=check), None, None, B, Z
    Mq, Qv = crba(model, q), bias(model, q, y)
    solve = solve_augmented if formulation == "augmented" else solve_reduced
    return solve(Mq, Qv, np.zeros(3), B, h, Z, check=check), Mq, Qv, B, Z


#: The default time span of :func:`simulate` (the paper's 1-s motion).
_SPAN = (0.0, 1.0)


def simulate(A=None, t_span=_SPAN, inertia: str = "joint", gravity: float = 0.0,
             formulation: str = "augmented", t_eval=None, stabilization=None, method: str = "DOP853",
             rtol: float = 1e-12, atol: float = 1e-12, stop_tol: float = STOP_TOL, refine: bool = True,
             max_step: float = np.inf, max_steps: int = 100_000, wall_time: float | None = None, **old) -> Trajectory:
    r"""Simulate the arm with its tip on the path of eq. 20, conventional or with control forces A.

    The initial state is the paper's (θ0 at t = 0, :func:`initial_speeds`); every run ends with a
    status and a message naming the time and the reason, and returns the trajectory computed
    until then.

    Parameters
    ----------
    A : None, "conventional", a preset name of :data:`PRESETS`, or (2, 3) array_like
        Control-force directions; None is the conventional model (Z = B).
    t_span : (0, t_end)
        Time span (s); it starts at 0, where the tip is on the path.  (The previous release's
        ``t_end``, a keyword or a number as the second argument, is accepted with a
        DeprecationWarning.)
    inertia : {"joint", "com"}
        Reading of the paper's I_i (see the module docstring).
    gravity : float
        Magnitude (m/s²) of gravity along −y; 0 (default) is a horizontal plane.
    formulation : {"augmented", "reduced", "passes"}
        Eq. 17, eqs. 18–19, or the Schur complement from O(n) innovations passes, no
        dense ℳ (:func:`~opalg.algorithms.constrained.passes.solve_passes`, :func:`~opalg.algorithms.constrained.passes.conditioning_passes`).
    t_eval : array_like, optional
        Output times (default 201 points over t_span).
    stabilization : None or (alpha, beta)
        Baumgarte constraint stabilization gains (1/s, ≥ 0).
    method : {"DOP853", "RK45", "Radau", "BDF", "LSODA"}
        The solver :func:`opalg.simulate.integrate` steps.
    rtol, atol : float
        Integrator tolerances (0 < rtol < 1, atol > 0).
    max_step, max_steps, wall_time
        As in :func:`opalg.simulate.integrate` (over a budget, or stalled, a run ends "failed"
        with its steps).
    stop_tol : float
        In (0, 1): the run stops (:func:`~opalg.algorithms.constrained.stop_event`) when the
        feasibility measure :func:`opalg.algorithms.constrained.conditioning` or
        :func:`reach_measure` falls to it, so it never integrates through a singularity.
    refine : bool
        After such a stop, locate the singularity itself (``t_singular``,
        :func:`~opalg.algorithms.constrained.singular_time`; ~1 s more).

    Returns
    -------
    opalg.simulate.Trajectory
        Sampled at ``t`` (s) up to where the run ended: ``q`` (rad) and ``v`` (rad/s) the
        relative joint angles and rates; extras ``qdd`` (rad/s²); ``tau`` (N·m), the joint
        moments a motor applies, τ = M ẏ + Q − F = Zᵀ v; ``forces``, the applied force
        magnitudes v (λ for the conventional model, μ for control forces); ``tip`` (m) and
        ``tip_error`` (m, distance from the path); ``conditioning``
        (:func:`opalg.algorithms.constrained.conditioning`, 1 best, 0 singular); ``settings``;
        ``t_singular``.  ``status``: "completed"; "event" (stopped at a singularity:
        ``event`` "singular" for the control directions, "reach" where the path leaves the
        arm's reach and B loses rank), ``t_stop`` the stop and ``t_singular`` the singularity
        itself (None without ``refine``); or "failed" (the integrator gave up, ``t_stop`` the last
        time reached).  ``message`` names the time and the reason.

    Raises
    ------
    ValueError
        (:class:`opalg.StateError`) any argument of the wrong type or value, named, before
        any integration; strings are never parsed as numbers.
    InfeasibleDirections
        A rank-deficient, or singular already at t = 0.

    Examples
    --------
    >>> from opalg import ider
    >>> r = ider.simulate([[0, 1, 0], [0, 0, 1]], t_span=(0, 0.2), t_eval=[0.0, 0.1, 0.2])
    >>> r.status, bool(abs(r.tau[:, 0]).max() < 1e-10)
    ('completed', True)
    >>> s = ider.simulate("no motor at joint 3", t_eval=[0.0, 0.1, 0.2], refine=False)
    >>> s.status, s.event, s.message[:58]
    ('event', 'singular', 'stopped at t = 0.2585 s: the control directions became sin')
    """
    t_end = _time_span("ider.simulate", t_span, _SPAN, renamed("ider.simulate", old, {"t_end": "t_span"}))
    if formulation not in ("augmented", "reduced", "passes"):
        raise StateError(f"formulation must be 'augmented', 'reduced' or 'passes', got {formulation!r}")
    te, gains = _settings(t_end, t_eval, stabilization)
    if not isinstance(method, str) or method not in METHODS:
        raise StateError(f"method must be one of {sorted(METHODS)}, got {method!r}")
    rtol = _real(rtol, "rtol", "a number in (0, 1)", lambda v: 0 < v < 1)
    atol = _real(atol, "atol", "a positive number", lambda v: v > 0)
    stop_tol = _real(stop_tol, "stop_tol", "a number in (0, 1)", lambda v: 0 < v < 1)
    if not isinstance(refine, (bool, np.bool_)):
        raise StateError(f"refine must be True or False, got {refine!r}")
    model = arm(inertia, gravity)
    q0, y0 = THETA0.copy(), initial_speeds()
    Z0 = directions(A, q0)  # validates A before any work
    Zc = None if _is_conventional(A) else Z0  # constant control directions, or Z = B(q)
    kappa = feasibility_measure(model, tip_jacobian, Zc, passes=formulation == "passes")
    if (k0 := kappa(q0)) <= stop_tol:
        raise InfeasibleDirections(
            f"the directions A = {np.asarray(Z0).tolist()} cannot realize the path at t = 0: "
            f"feasibility measure (cosine of the largest principal angle between B and Z in the "
            f"M⁻¹ metric) = {k0:.3g} ≤ {stop_tol:g}")
    x0 = np.concatenate([q0, y0])
    _dynamics(model, Zc, formulation, gains, 0.0, q0, y0)  # the start is solved outside the run

    def rhs(t, x):  # the stop events watch feasibility, so the solves skip their own check
        return np.concatenate([x[3:], _dynamics(model, Zc, formulation, gains, t, x[:3], x[3:], check=False)[0].ydot])

    measures = {"reach": reach_measure} if Zc is None else {"singular": kappa, "reach": reach_measure}  # κ ≡ 1 for Z = B
    events = [stop_event(m, stop_tol, nq=3, name=name) for name, m in measures.items()]
    sol = integrate(rhs, x0, (0.0, t_end), events=events, t_eval=te, method=method, rtol=rtol, atol=atol,
                    max_step=max_step, max_steps=max_steps, wall_time=wall_time, name="the right-hand side")
    rows = []
    for t, x in zip(sol.t, sol.y):
        s, Mq, Qv, B, Z = _dynamics(model, Zc, formulation, gains, t, x[:3], x[3:], check=False)
        tau, kap = (Z.T @ s.v, kappa(x[:3])) if Mq is None else (Mq @ s.ydot + Qv, conditioning(Mq, B, Z))
        rows.append((x[:3], x[3:], s.ydot, tau, s.v, kap))
    q, qd, qdd, tau, v, kap = ((np.array(c) for c in zip(*rows)) if rows else
                               [np.zeros((0, 3))] * 3 + [np.zeros((0, 3)), np.zeros((0, 2)), np.zeros(0)])
    tp = tip(q) if len(q) else np.zeros((0, 2))
    err = np.linalg.norm(tp - path(sol.t), axis=-1) if len(q) else np.zeros(0)
    t_stop, t_sing = sol.t_stop, None
    if sol.status == "failed":
        why = sol.message.partition(": ")[2]   # the seam's "failed at t = …: <why>"
        msg = f"integration failed at t = {t_stop:.4f} s: {why} ({_diagnosis(model, Zc, sol.y_stop)})"
    elif sol.status == "event":
        x_stop = sol.y_stop
        r_tip = np.linalg.norm(tip(x_stop[:3]))
        stretched = sol.event == "reach" and r_tip > 0.99 * sum(LENGTHS)
        if refine:  # at full stretch B loses rank exactly where the path leaves the disc
            t_sing = _reach_time(t_stop) if stretched else singular_time(
                rhs, measures[sol.event], t_stop, x_stop, stop_tol, nq=3, method=method, rtol=rtol, atol=atol)
        if sol.event == "singular":
            msg = (f"stopped at t = {t_stop:.4f} s: the control directions became singular "
                   f"(the feasibility measure fell to {stop_tol:g}; the row spaces of CᵀM and B "
                   "intersect, so these directions cannot keep the tip on the path)")
            what = "the directions become singular (κ → 0)"
        else:
            msg = (f"stopped at t = {t_stop:.4f} s: the path leaves the arm's reach (the tip Jacobian B loses "
                   f"rank: σ_min/σ_max fell to {stop_tol:g} with the tip {r_tip:.5f} m from the base, reach "
                   f"{sum(LENGTHS):g} m)")
            what = "the path leaves the disc the arm can reach" if stretched else "B becomes singular"
        if t_sing is not None:
            msg += f"; continued beyond the stop, {what} at t = {t_sing:.5f} s"
    else:
        msg = f"completed {t_end:g} s"
    settings = dict(A=None if A is None else (A if isinstance(A, str) else np.asarray(A).tolist()),
                    t_span=(0.0, t_end), inertia=inertia, gravity=gravity, formulation=formulation,
                    stabilization=gains, method=method, rtol=rtol, atol=atol, stop_tol=stop_tol)
    extras = dict(qdd=qdd, tau=tau, forces=v, tip=tp, tip_error=err, conditioning=kap, settings=settings,
                  t_singular=t_sing)
    return Trajectory(np.asarray(sol.t), q, qd, sol.status, msg, t_stop, extras, sol.event)


def sweep_directions(alpha) -> np.ndarray:
    """The family A(α) = [[cos α, sin α, 0], [0, 0, 1]] used by :func:`feasibility_sweep`.

    α = 0 is "no motor at joint 2", α = π/2 is the paper's "no motor at joint 1".

    Examples
    --------
    >>> from opalg import ider
    >>> ider.sweep_directions(0.0)
    array([[1., 0., 0.],
           [0., 0., 1.]])
    """
    alpha = _real(alpha, "alpha", "a finite angle (rad)")
    return np.array([[np.cos(alpha), np.sin(alpha), 0.0], [0.0, 0.0, 1.0]])


def feasibility_sweep(alphas, t_span=_SPAN, inertia: str = "joint", gravity: float = 0.0,
                      rtol: float = 1e-9, **old) -> dict:
    """Feasibility of the family A(α) (:func:`sweep_directions`) over t_span (default 1 s).

    Returns a dict of arrays over ``alphas``: ``t_stop`` (s; ``nan`` where the run completed, 0
    where singular at the start), ``kappa_min`` (smallest feasibility measure seen) and
    ``feasible`` (bool).  The arguments are validated as by :func:`simulate`, before any
    integration (``t_end`` is accepted for t_span with a DeprecationWarning, as there).

    Examples
    --------
    >>> import numpy as np
    >>> from opalg import ider
    >>> sw = ider.feasibility_sweep([0.0, np.pi / 2], t_span=(0, 0.5))
    >>> sw["feasible"].tolist(), round(float(sw["t_stop"][0]), 4)
    ([False, True], 0.1709)
    """
    t_end = _time_span("ider.feasibility_sweep", t_span, _SPAN,
                       renamed("ider.feasibility_sweep", old, {"t_end": "t_span"}))
    alphas = np.array([_real(a, f"alphas[{i}]", "a finite angle (rad)")
                       for i, a in enumerate(np.ravel(np.asarray(alphas, dtype=object)))], dtype=float)
    t_stop, kmin = np.full(alphas.shape, np.nan), np.zeros(alphas.shape)
    for i, a in enumerate(alphas):
        try:  # refine=False: the stop time is what the sweep reports (and ~1 s saved per member)
            r = simulate(sweep_directions(a), t_span=(0.0, t_end), inertia=inertia, gravity=gravity,
                         t_eval=np.linspace(0.0, t_end, 51), rtol=rtol, atol=rtol, refine=False)
        except InfeasibleDirections:
            t_stop[i] = 0.0
            continue
        kmin[i] = r.conditioning.min()
        if not r.ok:
            t_stop[i] = r.t_stop
    return {"alpha": alphas, "t_stop": t_stop, "kappa_min": kmin, "feasible": np.isnan(t_stop)}
