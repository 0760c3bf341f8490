r"""Where constrained motion cannot go on: stop events on a feasibility measure, and the time t*
of the singularity beyond such a stop (Ider 1990).

A motion ``M(q) ẏ + Q = F + Zᵀ v``, ``B(q) ẏ = h`` exists while the Schur complement
``S = B ℳ⁻¹ Zᵀ`` is nonsingular.  Its feasibility measure κ(q)
(:func:`~opalg.algorithms.constrained.dense.conditioning`, 1 best, 0 singular) falls to 0 at an
impasse point, where the rates blow up and the trajectory ends; the forces grow like 1/κ on the
way.  A simulation therefore never integrates through it: it stops where a measure μ(q) (κ, or any
other measure of the same kind, such as σ_min/σ_max of B) has fallen to a threshold ``tol``
(:func:`stop_event`), and, if asked, locates the singularity itself beyond the stop
(:func:`singular_time`).

Everything here is generic in the state ``x = [q; q̇]`` (``nq`` configuration coordinates, by
default half the state), and every integration goes through :func:`opalg.simulate.integrate`.
:mod:`opalg.ider` (the 1990 arm) calls these.
"""

from __future__ import annotations

from typing import Callable

import numpy as np

from opalg.algorithms.constrained.dense import conditioning
from opalg.algorithms.constrained.passes import conditioning_passes
from opalg.algorithms.crba import crba
from opalg.errors import StateError
from opalg.model import _validate
from opalg.simulate.integrate import Event, integrate

__all__ = ["STOP_TOL", "feasibility_measure", "stop_event", "singular_time"]

#: Default threshold of a feasibility measure at which a run stops: the required forces grow like
#: 1/κ, so at 1e-3 a choice is already practically infeasible (hundreds to thousands of N·m on
#: Ider's arm) and the integrator would crawl to go further.
STOP_TOL = 1e-3


def feasibility_measure(model, jacobian: Callable, directions=None, *, passes: bool = False) -> Callable:
    r"""κ(q) of a model with constraints B(q) ẏ = h realized by forces of directions Z, as a function of q.

    κ = :func:`~opalg.algorithms.constrained.dense.conditioning` (ℳ(q), B(q), Z) with ℳ from
    :func:`~opalg.algorithms.crba.crba`, or, with ``passes=True``, without a dense ℳ
    (:func:`~opalg.algorithms.constrained.passes.conditioning_passes`).

    Parameters
    ----------
    model : opalg.Model
    jacobian : callable
        ``jacobian(q) -> B`` of shape (c, n).
    directions : None, (c, n) array_like, or callable
        The force directions Z: None is the conventional model Z = B(q) (κ ≡ 1); an array is a
        constant Z; a callable ``directions(q) -> Z``.
    passes : bool
        Evaluate by O(n) innovations passes instead of the dense route.

    Returns
    -------
    callable
        ``measure(q) -> float`` in [0, 1].

    Examples
    --------
    The absolute angle of link 2 prescribed (B = [1, 1]), realized by a motor at joint 2 only:

    >>> import numpy as np
    >>> from opalg import planar_arm
    >>> from opalg.algorithms.constrained import feasibility_measure
    >>> arm = planar_arm([1.0, 1.0], [1.0, 1.0], [1 / 12, 1 / 12])
    >>> B = lambda q: np.array([[1.0, 1.0]])
    >>> kappa = feasibility_measure(arm, B, [[0.0, 1.0]])
    >>> q = np.array([0.3, 0.4])
    >>> bool(0 < kappa(q) < 1), round(feasibility_measure(arm, B)(q), 12)       # Z = B: κ = 1
    (True, 1.0)
    """
    if not callable(jacobian):
        raise StateError(f"feasibility_measure: jacobian must be callable q -> B, got {type(jacobian).__name__}")
    if directions is None or callable(directions):
        Zf = directions
    else:
        Zc = np.asarray(directions, dtype=float)
        Zf = lambda q: Zc  # noqa: E731

    def measure(q) -> float:
        B = jacobian(q)
        Z = B if Zf is None else Zf(q)
        return conditioning_passes(model, q, B, Z) if passes else conditioning(crba(model, q), B, Z)

    return measure


def stop_event(measure: Callable, tol: float = STOP_TOL, *, nq: int | None = None,
               name: str = "singular") -> Event:
    r"""A terminal :class:`~opalg.simulate.Event` that ends a run where μ(q) falls to ``tol``.

    The event function is μ(x[:nq]) − tol, watched on falling crossings only (direction −1), so a
    run that starts above ``tol`` stops at the first time the measure reaches it.

    Parameters
    ----------
    measure : callable
        ``measure(q) -> float``, e.g. :func:`feasibility_measure`'s κ.
    tol : float
        Threshold in (0, 1).
    nq : int, optional
        Number of configuration coordinates at the front of the state (default: half of it).
    name : str
        The event's name: :class:`~opalg.simulate.Solution` reports ``event == name``.

    Examples
    --------
    >>> import numpy as np
    >>> from opalg.simulate import integrate
    >>> from opalg.algorithms.constrained import stop_event
    >>> ev = stop_event(lambda q: q[0], 0.25, name="small")       # μ = q falls like 1 − t
    >>> sol = integrate(lambda t, x: [x[1], 0.0], [1.0, -1.0], (0.0, 2.0), events=ev)
    >>> sol.status, sol.event, round(sol.t_stop, 12)
    ('event', 'small', 0.75)
    """
    if not callable(measure):
        raise StateError(f"stop_event: measure must be callable q -> float, got {type(measure).__name__}")
    if not (isinstance(tol, (int, float, np.integer, np.floating)) and not isinstance(tol, bool) and 0 < tol < 1):
        raise StateError(f"stop_event: tol must be a number in (0, 1), got {tol!r}")

    def g(t, x):
        return measure(x[: len(x) // 2 if nq is None else nq]) - tol

    return Event(g, terminal=True, direction=-1, name=name)


def singular_time(rhs: Callable, measure: Callable, t_stop: float, x_stop, tol: float = STOP_TOL, *,
                  nq: int | None = None, method: str = "DOP853", rtol: float = 1e-12,
                  atol: float = 1e-12) -> float | None:
    r"""The time t* at which μ reaches 0 beyond a stop at μ = ``tol``, or None if no law fits.

    At such singularities (impasse points) the rates blow up and the trajectory ends at t*, so no
    sign change can be bracketed beyond it; instead t* − t ∝ μᵖ (p = 2 where the rates grow like
    1/μ; on Ider's arm p ≈ 1.39 for "no motor at joint 2").  The run goes on from the stop
    (:func:`opalg.simulate.integrate`) to μ = tol/10, and

        t(μ) = t* − c₁ μᵖ − c₂ μ^(2p−1) − c₃ μ^(3p−2)

    is fitted, p free, to the crossings of tol, tol/√10, tol/10 and to the rates dμ/dt there
    (linear least squares for each p; the rate rows times μ, so every row is in seconds).  dμ/dt
    = ∇μ·q̇ by a central difference along q̇ over 10⁻³ μ.  The fit is returned only if it holds:
    t* beyond the last crossing and every row met to 10⁻³ of t* − t_stop.

    Parameters
    ----------
    rhs : callable
        ``rhs(t, x) -> ẋ`` of the state ``x = [q; q̇; …]`` (q̇ right after q).
    measure : callable
        ``measure(q) -> float``, the measure that stopped the run.
    t_stop, x_stop : float, (n,) array_like
        Where the run stopped (μ(q) = tol, falling).
    tol : float
        The threshold it stopped at, in (0, 1).
    nq : int, optional
        Number of configuration coordinates at the front of the state (default: half of it).
    method, rtol, atol
        Of the continuation (:func:`opalg.simulate.integrate`).

    Returns
    -------
    float or None
        t*; None if μ is not falling at the stop, the continuation did not reach tol/10 (it
        failed, or μ turned back), or the law does not fit.

    Examples
    --------
    A measure that meets 0 at t* = 1 with rate ∝ 1/μ: μ = √(1 − t), so q̇ = −1/(2q).

    >>> import numpy as np
    >>> from opalg.simulate import integrate
    >>> from opalg.algorithms.constrained import singular_time, stop_event
    >>> rhs = lambda t, x: [x[1], x[1] / (2 * x[0] ** 2)]         # x = [q, q̇], q̈ = d/dt(−1/(2q))
    >>> mu = lambda q: q[0]
    >>> run = integrate(rhs, [1.0, -0.5], (0.0, 2.0), events=stop_event(mu, 1e-3), rtol=1e-12, atol=1e-12)
    >>> run.status, round(run.t_stop, 9)
    ('event', 0.999999)
    >>> t_star = singular_time(rhs, mu, run.t_stop, run.y_stop, 1e-3)
    >>> bool(abs(t_star - 1.0) < 1e-9)
    True
    """
    from scipy.optimize import minimize_scalar

    where = "singular_time"
    for nm, f in (("rhs", rhs), ("measure", measure)):
        if not callable(f):
            raise StateError(f"{where}: {nm} must be callable, got {_validate.describe(f)}")
    t_stop = _validate.real(t_stop, "t_stop", where)
    tol = _validate.real(tol, "tol", where, positive=True)
    x_s = _validate.array(x_stop, "x_stop", where)
    if nq is not None:
        nq = _validate.integer(nq, "nq", where, lo=1)
    k = len(x_s) // 2 if nq is None else nq
    if x_s.ndim != 1 or not 0 < k or 2 * k > len(x_s):
        raise StateError(f"singular_time: x_stop must be a state [q; q̇; …] with nq = {k} configuration "
                         f"coordinates, got shape {x_s.shape}")

    def rate(x):  # dμ/dt = ∇μ·q̇, central difference along q̇ over 1e-3 μ
        q, qd = x[:k], x[k:2 * k]
        h, speed = 1e-3 * measure(q), np.linalg.norm(qd)
        u = qd / speed
        return speed * (measure(q + h * u) - measure(q - h * u)) / (2 * h)

    if not (r_s := rate(x_s)) < 0:
        return None
    mu = tol * np.array([1.0, 10 ** -0.5, 0.1])
    levels = [Event(lambda t, x, lev=lev: measure(x[:k]) - lev, terminal=last, direction=-1, name=name)
              for lev, last, name in ((mu[1], False, "tol/sqrt(10)"), (mu[2], True, "tol/10"))]
    t_max = t_stop - 10 * tol / r_s  # 20x the square-root-law estimate μ / (2|μ̇|) of the time left
    sol = integrate(rhs, x_s, (t_stop, t_max), events=levels, method=method, rtol=rtol, atol=atol,
                    name="singular_time's rhs")
    if sol.status != "event" or not all(len(sol.t_events[ev.name]) for ev in levels):
        return None
    ts = np.array([t_stop] + [sol.t_events[ev.name][0] for ev in levels])
    dtdmu = 1 / np.array([r_s] + [rate(sol.y_events[ev.name][0]) for ev in levels])

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
    return float(t_star) if ts[-1] < t_star <= t_max and resid <= 1e-3 * (t_star - t_stop) else None
