"""Exercises of notebook 08 (Ider 1990, control forces).  Model answers: docs/solutions/08_ider_control_forces.md."""

from __future__ import annotations

import functools

import numpy as np

from opalg.course.exercises import Exercise, _StudentError, choice, close_arrays, function


def _absolute(expected, tol: float, unit: str, hint: str):
    """A grader for a real number within an absolute tolerance ``tol`` (in ``unit``)."""

    def grader(answer):
        try:
            value = float(answer)
        except (TypeError, ValueError):
            raise _StudentError(f"expected a number ({unit}), got {answer!r}") from None
        if not np.isfinite(value):
            raise _StudentError(f"expected a finite number ({unit}), got {answer!r}")
        return abs(value - expected()) <= tol, hint

    return grader


@functools.lru_cache(maxsize=1)   # a simulation or a scan: once per process
def _stop_time_joint3() -> float:
    """The stop time of "no motor at joint 3" under gravity g = 9.81 m/s² (the notebook prints
    the run without gravity, 0.259 s, before the exercise; this one it never shows)."""
    from opalg import ider

    return float(ider.simulate("no motor at joint 3", gravity=9.81, t_eval=[0.0]).t_stop)


@functools.lru_cache(maxsize=1)   # a simulation or a scan: once per process
def _work_motor2() -> float:
    """∫ T_2 θ̇_2 dt over the paper's control-force run, by 40-node Gauss–Legendre quadrature
    (the power is smooth in t: exact to round-off, as notebook 08 section 4 shows)."""
    from scipy.special import roots_legendre

    from opalg import ider

    x, w = roots_legendre(40)
    t, w = 0.5 * (x + 1.0), 0.5 * w
    r = ider.simulate([[0.0, 1.0, 0.0], [0.0, 0.0, 1.0]], t_eval=t)
    return float(w @ (r.tau[:, 1] * r.v[:, 1]))


@functools.lru_cache(maxsize=1)   # a simulation or a scan: once per process
def _best_alpha() -> float:
    """argmax over α ∈ [0, π] of κ(ℳ0, B0, A(α)): a grid, then a bounded 1-D refinement."""
    from scipy.optimize import minimize_scalar

    import opalg
    from opalg.algorithms import constrained as cs
    from opalg import ider

    M0, B0 = opalg.crba(ider.arm(), ider.THETA0), ider.tip_jacobian(ider.THETA0)

    def kappa(a):
        return cs.conditioning(M0, B0, ider.sweep_directions(a))

    grid = np.linspace(0.0, np.pi, 721)
    i = int(np.argmax([kappa(a) for a in grid]))
    lo, hi = grid[max(i - 1, 0)], grid[min(i + 1, len(grid) - 1)]
    return float(minimize_scalar(lambda a: -kappa(a), bounds=(lo, hi), method="bounded",
                                 options={"xatol": 1e-9}).x)


def _magnitude_cases():
    """(ℳ, C, B, h, Z) on seeded random trees and a chain with multi-axis and prismatic joints,
    B the linear rows of a body frame's Jacobian (a point held on a path), and Ider's own arm;
    expected v from opalg.algorithms.constrained.solve_augmented (the dense augmented system, eq. 17)."""
    import opalg
    from opalg.algorithms import constrained as cs
    from opalg import ider

    out = []
    rng = np.random.default_rng(1990)
    for what, m, body, rows in (("a 6-body tree, 2 constraints", opalg.random_model(6, "tree", seed=81), 5, [3, 4]),
                                ("a 7-body tree, 3 constraints", opalg.random_model(7, "tree", seed=82), 6, [3, 4, 5]),
                                ("a 5-body chain, 3 constraints", opalg.random_model(5, "chain", seed=83), 4, [0, 3, 4])):
        q, qd = rng.normal(size=m.ndof), rng.normal(size=m.ndof)
        Mq, Cq = opalg.crba(m, q), opalg.bias(m, q, qd)
        B = opalg.frame_jacobian(m, q, (body, rng.normal(size=3)))[rows]
        h = rng.normal(size=len(rows))
        Z = rng.normal(size=B.shape)
        assert cs.conditioning(Mq, B, Z) > 1e-3, what  # a feasible case: v is well defined
        out.append((f"{what} (N = {m.ndof})", (Mq, Cq, B, h, Z),
                    cs.solve_augmented(Mq, Cq, np.zeros(m.ndof), B, h, Z).v))
    q, y = ider.THETA0, ider.initial_speeds()
    Mq, Cq = opalg.crba(ider.arm(), q), opalg.bias(ider.arm(), q, y)
    B, h, Z = ider.tip_jacobian(q), ider.tip_bias(q, y), np.array(ider.PRESETS["no motor at joint 1"])
    out.append(("Ider's arm at t = 0, no motor at joint 1", (Mq, Cq, B, h, Z),
                cs.solve_augmented(Mq, Cq, np.zeros(3), B, h, Z).v))
    return out


EXERCISES = {
    # 5e-4 s: the stop time at rtol 1e-9 and at 1e-12 agree to ~1e-10 s (notebook section 5.3),
    # so any careful run is far inside it; a 0.1 % slip (the test's wrong answer) is not.
    "08.1": Exercise("08.1", "value", "a time in seconds",
                     _absolute(_stop_time_joint3, 5e-4, "s",
                               "run ider.simulate with that preset and gravity, and read its t_stop")),
    # 1e-3 J: quadrature error of the trapezoidal rule on 201 samples of this smooth power is
    # ~1e-5 J; the work itself is ~0.35 J.
    "08.2": Exercise("08.2", "value", "a work in joules",
                     _absolute(_work_motor2, 1e-3, "J",
                               "integrate T_2(t) θ̇_2(t) over [0, 1] s of the paper's control-force run")),
    # 1e-3 rad: κ(α) is flat at its maximum (κ drops by ~1e-3 at ±0.01 rad), so a grid of step
    # π/1800 (~1.7e-3 rad) already lands within 9e-4 rad of the argmax.
    "08.3": Exercise("08.3", "value", "an angle in radians",
                     _absolute(_best_alpha, 1e-3, "rad",
                               "scan α on a grid finer than 2e-3 rad and take the argmax of κ")),
    "08.4": Exercise("08.4", "value", "one letter among a, b, c, d",
                     choice("c", "abcd", "compare κ(0) of the two choices with the stop threshold, "
                                         "and recall how the paper chose A")),
    # 1e-9 relative: the Schur complement and the augmented LU solve differ by round-off
    # amplified by cond(ℳ)·cond(S) (≲ 1e5 on these cases; observed ≤ 1e-13).
    "08.5": Exercise("08.5", "function",
                     "a function control_magnitudes(M, C, B, h, Z) returning v, shape (m,)",
                     function(_magnitude_cases, close_arrays(1e-9)), name="control_magnitudes"),
}
