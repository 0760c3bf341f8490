"""Exercises of notebook 11 (closed chains and multiple arms).  Model answers: docs/solutions/11_closed_chains.md.

The "implement it" exercises are graded against :class:`opalg.closed.ClosedSystem` on seeded random
closed trees (:func:`opalg.closed.random_closed_system`: every joint kind, loops within a branch,
across branches and to the ground, weld, ball and revolute closures): 11.1 against
``ClosedSystem.compliance`` (Λ_c⁻¹ from Ω, H4) and 11.2 against ``ClosedSystem.forward`` (H5).
The counting questions are answered by rank computations here, not by literals, and 11.6 (the
worst motor pair of the two-arm box task, H10) by κ of every pair.
"""

from __future__ import annotations

__all__ = ["EXERCISES", "relative_transforms", "correction_inputs"]

import numpy as np

from opalg.course.exercises import Exercise, _StudentError, choice, close_arrays, function, integer

#: (n, topology, n_loops, seed, kinds, where) of the graded closed systems.
_CASES = [
    (8, "chain", 1, 1, ("revolute",), ("ground",)),
    (10, "tree", 1, 4, ("revolute",), ("across",)),
    (10, "tree", 1, 5, ("ball",), ("branch",)),
    (12, "tree", 3, 6, ("weld", "ball", "revolute"), ("branch", "across", "ground")),
    (12, "tree", 2, 7, ("revolute", "ball"), ("ground", "across")),
]


def _describe(case) -> str:
    n, topo, loops, _, kinds, where = case
    return f"a {n}-body {topo} with {loops} closure(s) ({', '.join(f'{k} {w}' for k, w in zip(kinds, where))})"


def relative_transforms(system, q) -> list:
    """X12 = ^{e1}X_{e2}(q) of every closure of ``system`` (6×6 each), the input of Exercise 11.1.

    Examples
    --------
    >>> import numpy as np
    >>> from opalg.closed import four_bar
    >>> sys, q = four_bar()
    >>> len(relative_transforms(sys, q)), relative_transforms(sys, q)[0].shape
    (1, (6, 6))
    """
    from opalg.closed.geometry import closure_frames
    from opalg.model.kinematics import body_kinematics

    fr = closure_frames(system.model, body_kinematics(system.model, q), system.closures)
    return [np.array(X) for X in fr.X12]


def _systems():
    from opalg.closed import random_closed_system

    return [(_describe(c), *random_closed_system(c[0], c[2], c[3], kinds=c[4], where=c[5], topology=c[1]))
            for c in _CASES]


def _compliance_cases():
    return [(what, (sys, q), np.array(sys.compliance(q))) for what, sys, q in _systems()]


def correction_inputs(system, q, qd, tau) -> tuple:
    """The inputs of Exercise 11.2: ``(qdd_f, G, Minv_GT, compliance, U)``.

    ``qdd_f`` = ABA(q, qd, tau) of the tree (loops cut), ``G`` = G_c (m×N), ``Minv_GT`` = ℳ⁻¹G_c*
    (N×m, by a dense solve), ``compliance`` = Λ_c⁻¹ (m×m) and ``U`` the drift (m).

    Examples
    --------
    >>> import numpy as np
    >>> from opalg.closed import four_bar
    >>> sys, q = four_bar()
    >>> [np.shape(x) for x in correction_inputs(sys, q, np.zeros(3), np.zeros(3))]
    [(3,), (2, 3), (3, 2), (2, 2), (2,)]
    """
    import opalg

    G = system.jacobian(q)
    return (opalg.aba(system.model, q, qd, tau), G, np.linalg.solve(opalg.crba(system.model, q), G.T),
            system.compliance(q), system.drift(q, qd))


def _correction_cases():
    out = []
    for i, (what, sys, q) in enumerate(_systems()):
        rng = np.random.default_rng(1100 + i)
        qd = sys.project(q, rng.normal(size=q.size))
        tau = rng.normal(size=q.size)
        qdd, lam = sys.forward(q, qd, tau)
        out.append((f"{what}, qd != 0, gravity on", correction_inputs(sys, q, qd, tau), (np.array(qdd), np.array(lam))))
    return out


def _compare_pair(got, want):
    """(qdd, lam) against (qdd, lam): shapes, then 1e-9 relative on each."""
    try:
        qdd, lam = got
    except (TypeError, ValueError):
        return f"expected a pair (qdd, lam), got {type(got).__name__}"
    cmp = close_arrays(1e-9)
    for name, g, w in (("qdd", qdd, want[0]), ("lam", lam, want[1])):
        problem = cmp(g, w)
        if problem is not None:
            return f"{name}: {problem}"
    return None


def _planar_independent_rows() -> int:
    """Rank of the 6-row weld closure of the planar four-bar cut in the rocker (in-plane rows only move)."""
    from opalg.closed import ClosedSystem, LoopClosure, four_bar

    split, q = four_bar(closure="split")
    c = split.closures[0]
    weld = ClosedSystem(split.model, [LoopClosure((c.body1, c.R1, c.p1), (c.body2, c.R2, c.p2), kind="weld")])
    G = weld.jacobian(q)
    return int(np.linalg.matrix_rank(G, tol=1e-10 * np.abs(G).max()))


def _h1_rank() -> int:
    """Rank of the unprojected 12×12 H1 matrix of the two planar 3R arms (H9)."""
    from opalg.closed import MultiArm
    from opalg.closed.examples_arms import two_planar_arms

    ex = two_planar_arms()
    H = MultiArm(ex.arms, ex.system.grasps, ex.system.M_o).h1_matrix(ex.qs)
    return int(np.linalg.matrix_rank(H, tol=1e-10 * np.abs(H).max()))


def _worst_motor_pair() -> tuple[int, int]:
    """The motor pair (j1 < j2) of least κ at the start of the redundant two-arm box task (H10, G5)."""
    from itertools import combinations

    from opalg.closed.ider_link import feasibility, ider_system, motor_rows, two_arms_box

    task = two_arms_box((3, 4))
    s = ider_system(task, 0.0, task.q0, task.qd0)
    kappa = {p: feasibility(s, motor_rows(task, p)) for p in combinations(range(task.n), 2)}
    return min(kappa, key=kappa.get)


def _joint_pair(expected, hint: str):
    """A grader for an unordered pair of distinct joint indices (a tuple or list of two integers)."""

    def grader(answer):
        try:
            pair = [int(j) for j in answer]
        except (TypeError, ValueError):
            raise _StudentError(f"expected two joint indices such as (0, 3), got {answer!r}") from None
        if len(pair) != 2 or pair[0] == pair[1] or any(p != a for p, a in zip(pair, answer)):
            raise _StudentError(f"expected two distinct integer joint indices such as (0, 3), got {answer!r}")
        return sorted(pair) == sorted(expected()), hint

    return grader


EXERCISES = {
    # Relative tolerance 1e-10: Λ_c⁻¹ from lambda_inv blocks and X12 agrees with ClosedSystem.compliance
    # to the round-off of 6x6 congruences (cond(ℳ) ≤ 1e3 on these trees: ~1e-14 observed); a missing
    # −X12 block, a transposed X12, or the serial Ω form across branches are O(1) off.
    "11.1": Exercise("11.1", "function",
                     "a function compliance(system, q) returning Λ_c⁻¹ (m×m) of a ClosedSystem at q",
                     function(_compliance_cases, close_arrays(1e-10)), name="compliance"),
    # Relative tolerance 1e-9 on θ̈ and λ: the KKT systems here have cond ≤ 1e4, and the dense inputs
    # (ℳ⁻¹G_c* by LU) differ from forward's passes by ~1e-13; a sign error in λ or U is O(1).
    "11.2": Exercise("11.2", "function",
                     "a function correct(qdd_f, G, Minv_GT, compliance, U) returning the pair (qdd, lam)",
                     function(_correction_cases, _compare_pair), name="correct"),
    "11.3": Exercise("11.3", "value", "an integer",
                     integer(_planar_independent_rows,
                             "which components of a planar body's spatial velocity can be non-zero?")),
    "11.4": Exercise("11.4", "value", "one letter: a, b, c or d",
                     choice("c", "abcd", "the cut changes the coordinates and the multipliers, not the motion")),
    "11.5": Exercise("11.5", "value", "an integer",
                     integer(_h1_rank, "each planar arm's Λ_r⁻¹ has rank 3; count what the object adds")),
    "11.6": Exercise("11.6", "value", "a pair of joint indices, e.g. (0, 3)",
                     _joint_pair(_worst_motor_pair, "compute feasibility(s7, motor_rows(task7, pair)) for all 15 "
                                                    "pairs of joints 0..5 and take the smallest")),
}
