r"""Ider (1990): the redundant planar 3-link arm with a prescribed end-effector path.

S. K. Ider, "Modeling of control forces for kinematical constraints in the
dynamics of multibody systems — a new approach", NASA workshop proceedings,
pp. 382–393 (section 4).  The arm is an opalg model (so ℳ and the bias come
from the operator core); the constrained dynamics are :mod:`opalg.constrained`.

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
* **sign of v**: applied forces, τ = Zᵀ v (see :mod:`opalg.constrained`).

Constraint (re-derived): Φ(q, t) = tip(q) − (x0 + v_A t, y0) = 0, so
B = ∂tip/∂q (the tip Jacobian) and h = −Ḃ y; with absolute angles
φ_i = θ1 + … + θi and rates ω_i = y1 + … + yi,
B = [[−Σ_{i≥j} L_i sin φ_i], [Σ_{i≥j} L_i cos φ_i]] and
h = [Σ_i L_i cos φ_i ω_i², Σ_i L_i sin φ_i ω_i²].
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np
from scipy.integrate import solve_ivp

from .. import builders, dynamics
from ..constrained import (InfeasibleDirections, conditioning, force_directions, solve_augmented,
                           solve_reduced)

LENGTHS = (1.0, 1.0, 1.0)
MASSES = (30.0, 18.0, 18.0)
INERTIAS = (10.0, 8.64, 8.64)
THETA0 = np.deg2rad([60.0, -10.0, -90.0])
V_A = -1.0

#: Control-force directions of the widget presets (None: the conventional model Z = B).
PRESETS = {
    "conventional": None,
    "no motor at joint 1": [[0.0, 1.0, 0.0], [0.0, 0.0, 1.0]],
    "no motor at joint 2": [[1.0, 0.0, 0.0], [0.0, 0.0, 1.0]],
    "no motor at joint 3": [[1.0, 0.0, 0.0], [0.0, 1.0, 0.0]],
}

#: Default threshold of the feasibility measure (:func:`opalg.constrained.conditioning`) at
#: which a run stops as singular: the
#: required forces grow like 1/κ, so at 1e-3 a choice is already practically infeasible
#: (hundreds to thousands of N·m here) and the integrator would crawl to go further.
STOP_TOL = 1e-3


def arm(inertia: str = "joint", gravity: float = 0.0):
    """The paper's arm as an :class:`opalg.Model` (joint axes z, motion in the x–y plane).

    Examples
    --------
    >>> from opalg import ider, crba
    >>> M = crba(ider.arm(), ider.THETA0)
    >>> round(float(M[2, 2]), 12)      # I3 about joint 3
    8.64
    """
    if inertia not in ("joint", "com"):
        raise ValueError(f"inertia must be 'joint' or 'com', got {inertia!r}")
    g = float(gravity)
    if not np.isfinite(g):
        raise ValueError(f"gravity must be a finite number, got {gravity!r}")
    return builders.planar_arm(LENGTHS, MASSES, INERTIAS, inertia_about=inertia, gravity=(0.0, -g, 0.0))


def _abs_angles(q):
    q = np.asarray(q)
    return np.cumsum(q if q.dtype.kind in "fc" else q.astype(float), axis=-1)


def tip(q) -> np.ndarray:
    """Tip position (x, y) in metres, shape (..., 2)."""
    phi = _abs_angles(q)
    L = np.asarray(LENGTHS)
    return np.stack([(L * np.cos(phi)).sum(-1), (L * np.sin(phi)).sum(-1)], -1)


def tip_jacobian(q) -> np.ndarray:
    """B(q) = ∂tip/∂q, shape (2, 3)."""
    phi = _abs_angles(q)
    L = np.asarray(LENGTHS)
    # Column j sums the links i >= j: reversed cumulative sums.
    sx = np.cumsum((L * np.sin(phi))[::-1])[::-1]
    cx = np.cumsum((L * np.cos(phi))[::-1])[::-1]
    return np.stack([-sx, cx])


def tip_bias(q, y) -> np.ndarray:
    """h = −Ḃ y, so that the tip acceleration is B ẏ − h."""
    phi, w = _abs_angles(q), np.cumsum(np.asarray(y, dtype=float))
    L = np.asarray(LENGTHS)
    return np.array([(L * np.cos(phi) * w**2).sum(), (L * np.sin(phi) * w**2).sum()])


TIP0 = tip(THETA0)


def joint_points(q) -> np.ndarray:
    """Base, elbow, wrist and tip positions (4, 2) of configuration q (for drawings)."""
    phi = _abs_angles(q)
    L = np.asarray(LENGTHS)
    steps = np.stack([L * np.cos(phi), L * np.sin(phi)], -1)
    return np.vstack([np.zeros(2), np.cumsum(steps, axis=0)])


def path(t) -> np.ndarray:
    """Desired tip position at time t (eq. 20 with the exact initial tip)."""
    t = np.asarray(t, dtype=float)
    return np.stack([TIP0[0] + V_A * t, np.full_like(t, TIP0[1])], -1)


def initial_speeds(q0=THETA0, v_A: float = V_A) -> np.ndarray:
    """Joint rates with y2 = 0 that give the tip velocity (v_A, 0): B(q0)[:, (0, 2)] (y1, y3) = (v_A, 0)."""
    B = tip_jacobian(q0)
    y13 = np.linalg.solve(B[:, [0, 2]], [v_A, 0.0])
    return np.array([y13[0], 0.0, y13[1]])


def _is_conventional(A) -> bool:
    if A is None:
        return True
    if isinstance(A, str):
        return A == "conventional" or (A in PRESETS and PRESETS[A] is None)
    return False


def directions(A, q) -> np.ndarray:
    """Z at configuration q: B(q) for the conventional model, else the validated A."""
    B = tip_jacobian(q)
    if A is None or (isinstance(A, str) and A == "conventional"):
        return B
    if isinstance(A, str):
        if A not in PRESETS:
            raise ValueError(f"unknown preset {A!r}; choose one of {list(PRESETS)}")
        return directions(PRESETS[A], q)
    return force_directions(B, A)


@dataclass
class IderResult:
    """Simulation output; arrays are sampled at ``t`` (s).

    ``q`` (rad), ``qd`` (rad/s), ``qdd`` (rad/s²): relative joint angles and rates;
    ``tau`` (N·m): joint moments a motor applies, τ = M ẏ + Q − F = Zᵀ v;
    ``v``: applied force magnitudes (λ for the conventional model, μ for control forces);
    ``tip`` (m) and ``tip_error`` (m, distance from the path); ``conditioning``:
    :func:`opalg.constrained.conditioning` (1 best, 0 singular); ``status`` is ``"completed"`` or ``"singular"``, with
    ``t_fail`` and ``message`` when the run stopped at a singular choice of A.
    """

    t: np.ndarray
    q: np.ndarray
    qd: np.ndarray
    qdd: np.ndarray
    tau: np.ndarray
    v: np.ndarray
    tip: np.ndarray
    tip_error: np.ndarray
    conditioning: np.ndarray
    status: str
    message: str
    t_fail: float | None = None
    settings: dict = field(default_factory=dict)

    @property
    def ok(self) -> bool:
        return self.status == "completed"


def _dynamics(model, Zc, formulation, stab, t, q, y, check=True):
    """(solution, M, Q, B, Z) at one state; ``Zc`` is the validated constant A or None (Z = B)."""
    Mq = dynamics.crba(model, q)
    Qv = dynamics.bias(model, q, y)
    B, h = tip_jacobian(q), tip_bias(q, y)
    if stab is not None:  # Baumgarte: drive Φ̈ + 2α Φ̇ + β² Φ = 0
        alpha, beta = stab
        err = tip(q) - path(t)
        derr = B @ y - np.array([V_A, 0.0])
        h = h - 2 * alpha * derr - beta**2 * err
    Z = B if Zc is None else Zc
    solve = solve_augmented if formulation == "augmented" else solve_reduced
    return solve(Mq, Qv, np.zeros(3), B, h, Z, check=check), Mq, Qv, B, Z


def simulate(A=None, t_end: float = 1.0, inertia: str = "joint", gravity: float = 0.0,
             formulation: str = "augmented", t_eval=None, stabilization=None,
             rtol: float = 1e-12, atol: float = 1e-12, stop_tol: float = STOP_TOL) -> IderResult:
    r"""Simulate the arm with its tip on the path of eq. 20, conventional or with control forces A.

    Parameters
    ----------
    A : None, "conventional", a preset name of :data:`PRESETS`, or (2, 3) array_like
        Control-force directions; None is the conventional model (Z = B).
    t_end : float
        Duration (s).
    inertia : {"joint", "com"}
        Reading of the paper's I_i (see the module docstring).
    gravity : float
        Magnitude (m/s²) of gravity along −y; 0 (default) is a horizontal plane.
    formulation : {"augmented", "reduced"}
        Eq. 17 or eqs. 18–19.
    t_eval : array_like, optional
        Output times (default 201 points over [0, t_end]).
    stabilization : None or (alpha, beta)
        Baumgarte constraint stabilization gains (1/s).
    stop_tol : float
        The run stops (a terminal ``solve_ivp`` event) when the feasibility
        measure :func:`opalg.constrained.conditioning` falls to this value: it never integrates through a singularity.

    Returns
    -------
    IderResult

    Raises
    ------
    ValueError
        Bad A shape, formulation, inertia reading, t_end or t_eval.
    InfeasibleDirections
        A rank-deficient, or singular already at t = 0.

    Examples
    --------
    >>> from opalg import ider
    >>> r = ider.simulate([[0, 1, 0], [0, 0, 1]], t_end=0.2, t_eval=[0.0, 0.1, 0.2])
    >>> r.status, bool(abs(r.tau[:, 0]).max() < 1e-10)
    ('completed', True)
    """
    if formulation not in ("augmented", "reduced"):
        raise ValueError(f"formulation must be 'augmented' or 'reduced', got {formulation!r}")
    if not (np.isfinite(t_end) and t_end > 0):
        raise ValueError(f"t_end must be a positive number of seconds, got {t_end!r}")
    t_eval = np.linspace(0.0, t_end, 201) if t_eval is None else np.asarray(t_eval, dtype=float)
    if t_eval.ndim != 1 or t_eval.size == 0 or t_eval[0] < 0 or t_eval[-1] > t_end \
            or np.any(np.diff(t_eval) <= 0):
        raise ValueError("t_eval must be increasing times within [0, t_end]")
    if stabilization is not None:
        alpha, beta = (float(x) for x in stabilization)
        stabilization = (alpha, beta)
    model = arm(inertia, gravity)
    q0, y0 = THETA0.copy(), initial_speeds()
    Z0 = directions(A, q0)  # validates A before any work
    Zc = None if _is_conventional(A) else Z0  # constant control directions, or Z = B(q)
    kappa0 = conditioning(dynamics.crba(model, q0), tip_jacobian(q0), Z0)
    if kappa0 <= stop_tol:
        raise InfeasibleDirections(
            f"the directions A = {np.asarray(Z0).tolist()} cannot realize the path at t = 0: "
            f"feasibility measure (cosine of the largest principal angle between B and Z in the "
            f"M⁻¹ metric) = {kappa0:.3g} ≤ {stop_tol:g}")

    def rhs(t, x):
        q, y = x[:3], x[3:]
        # The event below watches feasibility, so the solve skips its own check.
        sol = _dynamics(model, Zc, formulation, stabilization, t, q, y, check=False)[0]
        return np.concatenate([y, sol.ydot])

    def singular(t, x):
        q = x[:3]
        B = tip_jacobian(q)
        return conditioning(dynamics.crba(model, q), B, B if Zc is None else Zc) - stop_tol

    singular.terminal, singular.direction = True, -1
    ivp = solve_ivp(rhs, (0.0, t_end), np.concatenate([q0, y0]), method="DOP853",
                    t_eval=t_eval, events=singular, rtol=rtol, atol=atol)
    if ivp.status == -1:
        raise RuntimeError(f"integration failed: {ivp.message}")
    t_fail = float(ivp.t_events[0][0]) if ivp.t_events[0].size else None
    rows = []
    for t, x in zip(ivp.t, ivp.y.T):
        sol, Mq, Qv, B, Z = _dynamics(model, Zc, formulation, stabilization, t, x[:3], x[3:], check=False)
        rows.append((x[:3], x[3:], sol.ydot, Mq @ sol.ydot + Qv, sol.v, conditioning(Mq, B, Z)))
    q, qd, qdd, tau, v, kap = (np.array(c) for c in zip(*rows)) if rows else [np.zeros((0, 3))] * 6
    tp = tip(q) if len(q) else np.zeros((0, 2))
    err = np.linalg.norm(tp - path(ivp.t), axis=-1) if len(q) else np.zeros(0)
    if t_fail is None:
        status, msg = "completed", f"completed {t_end:g} s"
    else:
        status = "singular"
        msg = (f"stopped at t = {t_fail:.4f} s: the control directions became singular "
               f"(the feasibility measure fell to {stop_tol:g}; the row spaces of CᵀM and B "
               "intersect, so these directions cannot keep the tip on the path)")
    settings = dict(A=None if A is None else (A if isinstance(A, str) else np.asarray(A).tolist()),
                    t_end=t_end, inertia=inertia, gravity=gravity, formulation=formulation,
                    stabilization=stabilization)
    return IderResult(np.asarray(ivp.t), q, qd, qdd, tau, v, tp, err, kap, status, msg, t_fail, settings)


def sweep_directions(alpha) -> np.ndarray:
    """The family A(α) = [[cos α, sin α, 0], [0, 0, 1]] used by :func:`feasibility_sweep`.

    α = 0 is "no motor at joint 2", α = π/2 is the paper's "no motor at joint 1".
    """
    return np.array([[np.cos(alpha), np.sin(alpha), 0.0], [0.0, 0.0, 1.0]])


def feasibility_sweep(alphas, t_end: float = 1.0, inertia: str = "joint", gravity: float = 0.0,
                      rtol: float = 1e-9) -> dict:
    """Feasibility of the family A(α) (:func:`sweep_directions`) over a 1-s run.

    Returns a dict of arrays over ``alphas``: ``t_fail`` (s; ``nan`` where the
    run completed, 0 where singular at the start), ``kappa_min`` (smallest
    feasibility measure seen) and ``feasible`` (bool).

    Examples
    --------
    >>> import numpy as np
    >>> from opalg import ider
    >>> sw = ider.feasibility_sweep([0.0, np.pi / 2], t_end=0.5)
    >>> sw["feasible"].tolist()
    [False, True]
    """
    alphas = np.atleast_1d(np.asarray(alphas, dtype=float))
    t_fail, kmin = np.full(alphas.shape, np.nan), np.zeros(alphas.shape)
    for i, a in enumerate(alphas):
        try:
            r = simulate(sweep_directions(a), t_end=t_end, inertia=inertia, gravity=gravity,
                         t_eval=np.linspace(0.0, t_end, 51), rtol=rtol, atol=rtol)
        except InfeasibleDirections:
            t_fail[i] = 0.0
            continue
        kmin[i] = r.conditioning.min()
        if not r.ok:
            t_fail[i] = r.t_fail
    return {"alpha": alphas, "t_fail": t_fail, "kappa_min": kmin, "feasible": np.isnan(t_fail)}
