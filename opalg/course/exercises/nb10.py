"""Exercises of notebook 10 (hybrid dynamics, under-actuated arms).  Model answers: docs/solutions/10_hybrid_underactuated.md."""

from __future__ import annotations

import numpy as np

from opalg.course.exercises import Exercise, choice, close_arrays, function, integer, number

Q_EX = np.array([0.4, 1.1])     # the state of exercises 10.1 and 10.2 (rad)


def _pendubot_felt() -> float:
    """G3: the Pendubot's shoulder motor feels ((ℳ⁻¹)_aa)⁻¹ = ℳ11 − ℳ12²/ℳ22 (by the hybrid passes)."""
    from opalg import reduced_inertia, underactuated as ua

    pend, p_pend = ua.pendubot()
    return float(reduced_inertia(pend, Q_EX, p_pend)[0, 0])


def _larger_or_smaller(answer) -> tuple[bool, str]:
    from opalg import reduced_inertia, underactuated as ua

    acro, p_acro = ua.acrobot()
    acro_felt = float(reduced_inertia(acro, Q_EX, p_acro)[0, 0])
    expected = "a" if _pendubot_felt() > acro_felt else "b"
    return choice(expected, "ab", "which motor carries the whole arm?")(answer)


def _q2_uncoupled() -> float:
    """The zero of ℳ12(θ2) in (0, π), by bisection on opalg.crba (the closed form is the model answer)."""
    from scipy.optimize import brentq

    import opalg
    from opalg import underactuated as ua

    acro, _ = ua.acrobot()
    return float(brentq(lambda x: opalg.crba(acro, np.array([1.0, x]))[0, 1], 0.1, np.pi - 0.1, xtol=1e-14))


def _unprojected_count() -> int:
    """Pitfall 10: bodies whose P_h⁺ = P_h (no passive dof in the mask), read off articulated(passive=)."""
    import opalg

    m = opalg.random_model(8, "tree", seed=7, joints="all")
    mask = np.arange(m.ndof) % 3 == 0
    art = opalg.articulated(m, np.zeros(m.ndof), passive=mask)
    return sum(1 for k in range(m.n) if np.array_equal(art.P_plus[k], art.P[k]))


def _reduced_cases():
    """(ℳ, passive) on chains and trees with mixed joints and split multi-axis joints; expected by the passes."""
    import opalg

    rng = np.random.default_rng(1006)
    out = []
    for what, m in [("a 6-body chain", opalg.random_model(6, "chain", seed=101, joints="mixed")),
                    ("a 9-body tree", opalg.random_model(9, "tree", seed=102, joints="mixed")),
                    ("a 7-body tree with every joint kind", opalg.random_model(7, "tree", seed=5, joints="all"))]:
        q = rng.normal(size=m.ndof)
        passive = rng.random(m.ndof) < 0.5
        passive[0], passive[-1] = True, False          # at least one dof of each kind
        Mq = opalg.crba(m, q)
        out.append((f"{what} ({int(passive.sum())} of {m.ndof} dofs passive)", (Mq.copy(), passive.copy()),
                    opalg.reduced_inertia(m, q, passive)))
    return out


EXERCISES = {
    # rtol 1e-10: ℳ of the double pendulum has entries of order 1 and cond ≈ 10; a Schur complement
    # by hand and by the passes agree to ~1e-15.  A wrong formula (ℳ11 alone, or ℳ22 − ℳ12²/ℳ11)
    # is off by more than 10 %.
    "10.1": Exercise("10.1", "value", "a number (kg m²)",
                     number(_pendubot_felt, "the Schur complement of ℳ22 (the passive elbow) in ℳ", rtol=1e-10)),
    "10.2": Exercise("10.2", "value", "a letter: a or b", _larger_or_smaller),
    # rtol 1e-7 (≈ 2e-7 rad at θ2 ≈ 2.3 rad, the notebook's 1e-6 rad): the bisection is converged to
    # 1e-14; a root of the wrong entry (ℳ11 or det ℳ) lies elsewhere.
    "10.3": Exercise("10.3", "value", "a number (rad)",
                     number(_q2_uncoupled, "find the zero of ℳ12(θ2) in (0, π)", rtol=1e-7)),
    "10.4": Exercise("10.4", "value", "a letter: a, b or c",
                     choice("b", "abc", "what changes in the motion if the whole arm is turned about the "
                                        "shoulder axis?")),
    "10.5": Exercise("10.5", "value", "an integer",
                     integer(_unprojected_count, "which bodies have no passive dof in the mask? "
                                                 "(model.dof_slice[k] gives body k's dofs)")),
    # rtol 1e-9: a dense solve with ℳ_pp against the G2 passes; cond(ℳ) ≤ 1e5 on these cases, so
    # they differ by ≤ 1e-12·cond at worst (observed ~1e-15).  Forgetting the Schur term (ℳ_aa) or
    # swapping p and a is off by order 1.
    "10.6": Exercise("10.6", "function",
                     "a function reduced_inertia(Mq, passive) returning the N_a x N_a matrix",
                     function(_reduced_cases, close_arrays(1e-9)), name="reduced_inertia"),
}
