"""Exercises of notebook 12 (quasi-velocities).  Model answers: docs/solutions/12_quasi_velocities.md.

12.1 ("implement it", J2) is graded against :func:`opalg.quasi.nu` on seeded random chains, trees,
relabelled trees and forests with every joint kind (revolute, prismatic, helical, multi-axis).
12.2 counts the nonzeros of the CRBA's ℳ numerically (not from the formula the student uses);
12.3 is the gravity caveat of J5.
"""

from __future__ import annotations

__all__ = ["EXERCISES", "nu_cases", "nnz_model"]

import numpy as np

from opalg.course.exercises import Exercise, choice, close_arrays, function, integer


def nu_cases() -> list:
    """The models and states 12.1 is graded on: ``[(description, model, q, qd), ...]``.

    Examples
    --------
    >>> [(m.n, len(q)) for _, m, q, _ in nu_cases()][:2]
    [(7, 7), (10, 16)]
    """
    import opalg

    tree = opalg.random_model(10, "tree", seed=1202, joints="all")
    perm = [int(k) for k in np.random.default_rng(1203).permutation(tree.n)]
    models = [("a 7-body chain (all joint kinds)", opalg.random_model(7, "chain", seed=1201, joints="all")),
              ("a 10-body tree (all joint kinds)", tree),
              ("the same tree with shuffled labels (a parent may come after its child)", tree.relabeled(perm)),
              ("a 2-root forest of 9 bodies", opalg.random_model(9, "tree", seed=1204, joints="all", n_roots=2))]
    rng = np.random.default_rng(1205)
    return [(what, m, rng.uniform(-1.0, 1.0, m.ndof), rng.normal(size=m.ndof)) for what, m in models]


def _nu_cases():
    import opalg

    return [(what, (m, q, qd), np.asarray(opalg.quasi.nu(m, q, qd))) for what, m, q, qd in nu_cases()]


def nnz_model():
    """The 1-dof tree of Exercise 12.2 (the notebook builds the same one).

    Examples
    --------
    >>> nnz_model().n
    14
    """
    import opalg

    return opalg.random_model(14, "tree", seed=122, joints="single")


def _nnz() -> int:
    """Nonzero entries of the CRBA's ℳ of the 12.2 tree at a seeded generic configuration."""
    import opalg

    m = nnz_model()
    q = np.random.default_rng(1222).uniform(-np.pi, np.pi, m.ndof)
    return int(np.count_nonzero(opalg.crba(m, q)))


EXERCISES = {
    # Relative tolerance 1e-10: the student's pass and opalg's (E11 pivots, no D⁻¹ formed) differ by
    # the round-off of ~n 6x6 products (cond(ℳ) ≤ 1e3 here, ~1e-15 observed); a missing G* term,
    # G instead of G*, or the parent's V not transformed are O(1) errors.
    "12.1": Exercise("12.1", "function", "a function nu(model, q, qd) returning the N quasi-velocities",
                     function(_nu_cases, close_arrays(1e-10)), name="nu"),
    "12.2": Exercise("12.2", "value", "an integer",
                     integer(_nnz, "ℳ(i, j) ≠ 0 exactly when one of the two bodies is an ancestor of the other")),
    "12.3": Exercise("12.3", "value", "one letter: a, b, c or d",
                     choice("a", "abcd", "the ABA's accelerations are the true ones minus kX0[0; g]; "
                                         "at a root V+ = 0, so nothing is missing there")),
}
