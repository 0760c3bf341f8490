"""How a run of :func:`opalg.ider.simulate` ends when it cannot go on: the time of the
singularity beyond a stop, the time the path leaves the arm's reach, and the likely reason
an integration failed, read off the last state it reached."""

from __future__ import annotations

import numpy as np
from scipy.integrate import solve_ivp

from opalg.algorithms.crba import crba
from opalg.algorithms.constrained import conditioning
from opalg.errors import OpalgError
from opalg.ider.geometry import LENGTHS, path, reach_measure, tip, tip_jacobian


#: Default threshold of the feasibility measure (:func:`opalg.algorithms.constrained.conditioning`) at
#: which a run stops as singular: the
#: required forces grow like 1/κ, so at 1e-3 a choice is already practically infeasible
#: (hundreds to thousands of N·m here) and the integrator would crawl to go further.
STOP_TOL = 1e-3

#: Errors of one right-hand-side evaluation that make the solver reject the step and retry
#: smaller (a trial stage beyond a singularity); a run that cannot recover reports them.
_NUMERICAL = (OpalgError, np.linalg.LinAlgError, ArithmeticError)


def _singular_time(rhs, measure, t_s, x_s, tol, rtol, atol):
    """Time t* where ``measure`` μ reaches 0 beyond a stop at μ = tol, or None.

    At these singularities (impasse points) the rates blow up and the trajectory ends at
    t*, so no determinant can be bracketed beyond it; instead t* − t ∝ μᵖ with p = 2 for
    "no motor at joint 3" (rates ∝ 1/μ) but p ≈ 1.39 for joint 2.  So the run goes on to
    μ = tol/10, and t(μ) = t* − c₁μᵖ − c₂μ^(2p−1) − c₃μ^(3p−2) is fitted, p free, to the
    crossings of tol, tol/√10, tol/10 and the rates dμ/dt there (linear least squares for
    each p; rate rows times μ so every row is in seconds).
    """
    from scipy.optimize import minimize_scalar

    def rate(x):  # dμ/dt = ∇μ·q̇, central difference along q̇ over 1e-3 μ rad
        h, u = 1e-3 * measure(x[:3]), x[3:] / np.linalg.norm(x[3:])
        return np.linalg.norm(x[3:]) * (measure(x[:3] + h * u) - measure(x[:3] - h * u)) / (2 * h)

    if not (r_s := rate(x_s)) < 0:
        return None
    mu = tol * np.array([1.0, 10 ** -0.5, 0.1])
    events = [lambda t, x, lev=lev: measure(x[:3]) - lev for lev in mu[1:]]
    for ev in events:
        ev.direction = -1
    events[-1].terminal = True
    t_max = t_s - 10 * tol / r_s  # 20x the square-root-law estimate μ / (2|μ̇|) of the time left
    ivp = solve_ivp(rhs, (t_s, t_max), x_s, method="DOP853", events=events, rtol=rtol, atol=atol)
    if not ivp.t_events[-1].size:
        return None
    ts = np.array([t_s, ivp.t_events[0][0], ivp.t_events[1][0]])
    dtdmu = 1 / np.array([r_s, rate(ivp.y_events[0][0]), rate(ivp.y_events[1][0])])

    def fit(p):
        pw = p + np.arange(3) * (p - 1)
        A = np.vstack([np.column_stack([np.ones(3)] + [-mu**e for e in pw]),
                       np.column_stack([np.zeros(3)] + [-e * mu**e for e in pw])])
        b = np.concatenate([ts, mu * dtdmu])
        x = np.linalg.lstsq(A, b, rcond=None)[0]
        return x[0], float(np.linalg.norm(A @ x - b))

    grid = np.linspace(1.05, 5.0, 80)
    p0 = grid[np.argmin([fit(p)[1] for p in grid])]
    p = minimize_scalar(lambda p: fit(p)[1], bounds=(max(1.01, p0 - 0.05), p0 + 0.05), method="bounded",
                        options={"xatol": 1e-10}).x
    t_star, resid = fit(p)
    # Only a law that holds: t* beyond the last crossing, every row met to 1e-3 of the gap.
    return float(t_star) if ts[-1] < t_star <= t_max and resid <= 1e-3 * (t_star - t_s) else None


def _reach_time(t0: float) -> float | None:
    """First time after t0 at which the path itself leaves the disc of radius L1 + L2 + L3."""
    from scipy.optimize import brentq

    g = lambda t: float(np.linalg.norm(path(t))) - sum(LENGTHS)  # noqa: E731
    span = next((s for s in 2.0 ** np.arange(11) if g(t0 + s) > 0), None)  # up to ~1000 s on
    return None if span is None else brentq(g, t0, t0 + span, xtol=1e-14)


def _diagnosis(model, Zc, x, trouble, t_fail) -> str:
    """The likely reason an integration failed, read off the last state it reached."""
    q, B = x[:3], tip_jacobian(x[:3])
    kappa, mu = conditioning(crba(model, q), B, B if Zc is None else Zc), reach_measure(q)
    rates = f"joint rates up to {np.abs(x[3:]).max():.3g} rad/s"
    text = ""
    if trouble and trouble[0][0] >= t_fail:  # raised in the step the solver could not complete
        text = f"the right-hand side raised {type(trouble[0][1]).__name__}: {trouble[0][1]}; "
    if mu <= min(kappa, 1e-2):
        return text + (f"likely reason: the path left the arm's reach — the tip Jacobian B is nearly rank "
                       f"deficient there (σ_min/σ_max = {mu:.2g}, tip {np.linalg.norm(tip(q)):.6f} m from "
                       f"the base, reach {sum(LENGTHS):g} m): the augmented matrix became singular; {rates}")
    if kappa <= 1e-2:
        return text + (f"likely reason: the control directions become singular (feasibility measure "
                       f"κ = {kappa:.2g}): the accelerations and forces grow like 1/κ; {rates}")
    return text + f"the state is regular (κ = {kappa:.2g}, σ_min/σ_max(B) = {mu:.2g}, {rates}): try other tolerances"
