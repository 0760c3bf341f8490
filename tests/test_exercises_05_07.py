"""The "implement it" graders of notebooks 05–07 refuse the mistakes students make.

tests/test_exercises.py checks that each model answer is accepted and that two generic wrong
answers are refused; here each grader must refuse a *plausible* wrong recursion — one that is
right on some models — and say on which case it failed.  That is what makes the seeded cases
(relabelled trees, forests, multi-axis joints) worth having.
"""

from __future__ import annotations

import numpy as np
import pytest

from opalg.course import exercises
from opalg.course.exercises import nb05, nb06, nb07


def _label_order_riccati(parents, Xup, H, M):
    """E1 visiting bodies by decreasing label: right only when every parent has a smaller label."""
    P = [np.array(m, dtype=float) for m in M]
    for k in reversed(range(len(parents))):
        D = H[k] @ P[k] @ H[k].T
        G = np.linalg.solve(D, H[k] @ P[k]).T
        if parents[k] >= 0:
            P[parents[k]] += Xup[k].T @ (P[k] - G @ H[k] @ P[k]) @ Xup[k]
    return np.array(P)


def _composite_not_articulated(parents, Xup, H, M):
    """No projection (P+ = P): the composite inertias R(k) of notebook 04, not P(k)."""
    order = sorted(range(len(parents)), key=lambda k: -_depth(parents, k))
    P = [np.array(m, dtype=float) for m in M]
    for k in order:
        if parents[k] >= 0:
            P[parents[k]] += Xup[k].T @ P[k] @ Xup[k]
    return np.array(P)


def _depth(parents, k):
    d = 0
    while parents[k] >= 0:
        k, d = parents[k], d + 1
    return d


def _scalar_aba(parents, Xup, H, M, a, b, T):
    """The 1-dof ABA of notebook 06 §3 with H(k) taken as a 6-vector: fails on multi-axis joints."""
    n = len(parents)
    order = sorted(range(n), key=lambda k: -_depth(parents, k))
    P, zc = [np.array(m, dtype=float) for m in M], [np.zeros(6) for _ in range(n)]
    G, nu = [None] * n, [None] * n
    for k in order:
        s = H[k].reshape(6)                      # raises for n_k > 1
        z = P[k] @ a[k] + b[k] + zc[k]
        U = P[k] @ s
        G[k], eps = U / (s @ U), float(T[k][0]) - s @ z
        nu[k] = eps / (s @ U)
        if parents[k] >= 0:
            P[parents[k]] += Xup[k].T @ (P[k] - np.outer(G[k], U)) @ Xup[k]
            zc[parents[k]] += Xup[k].T @ (z + G[k] * eps)
    qdd, alpha = [None] * n, [None] * n
    for k in reversed(order):
        ap = Xup[k] @ alpha[parents[k]] if parents[k] >= 0 else np.zeros(6)
        qdd[k] = np.array([nu[k] - G[k] @ ap])
        alpha[k] = ap + H[k].T @ qdd[k] + a[k]
    return np.concatenate(qdd)


def _upsilon_without_propagation(parents, Xup, H, P):
    """Only the local term H*D⁻¹H: Υ(k) of a root, wrong below it."""
    return np.array([H[k].T @ np.linalg.solve(H[k] @ P[k] @ H[k].T, H[k]) for k in range(len(parents))])


def _upsilon_with_phi(parents, Xup, H, P):
    """F2 with φ(℘k,k) in place of ψ(℘k,k) (the projection forgotten)."""
    Y = [None] * len(parents)
    for k in sorted(range(len(parents)), key=lambda k: _depth(parents, k)):
        Y[k] = H[k].T @ np.linalg.solve(H[k] @ P[k] @ H[k].T, H[k])
        if parents[k] >= 0:
            phi = Xup[k].T
            Y[k] = Y[k] + phi.T @ Y[parents[k]] @ phi
    return np.array(Y)


@pytest.mark.parametrize("key, wrong, where", [
    ("05.4", _label_order_riccati, "shuffled labels"),
    ("05.4", _composite_not_articulated, "6-body chain"),
    ("06.4", _scalar_aba, "raised"),
    ("07.4", _upsilon_without_propagation, "6-body chain"),
    ("07.4", _upsilon_with_phi, "6-body chain"),
], ids=["05.4-label-order", "05.4-no-projection", "06.4-scalar-D", "07.4-no-propagation", "07.4-phi-for-psi"])
def test_plausible_mistakes_are_refused_with_the_failing_case(key, wrong, where):
    fb = exercises.grade(key, wrong)
    assert fb.correct is False, f"{key} accepted {wrong.__name__}: {fb.message}"
    assert where in fb.message, fb.message


def test_the_label_order_recursion_is_right_on_topological_labels():
    """The label-order mistake of 05.4 is only caught by the relabelled case: on the others it agrees."""
    cases = nb05._riccati_cases()
    for what, args, want in cases:
        got = _label_order_riccati(*args)
        err = np.abs(got - want).max() / np.abs(want).max()
        assert (err < 1e-10) == ("shuffled" not in what), f"{what}: {err:.1e}"


def test_the_cases_cover_multi_axis_and_prismatic_joints_chains_trees_and_forests():
    kinds = set()
    for _, m, _ in nb05.implement_cases(550):
        kinds |= {"".join(j.kinds) for j in m.joints}
        assert m.ndof > m.n or any(len(j.kinds) == 1 for j in m.joints)
    assert "P" in kinds and any(len(k) >= 2 for k in kinds), kinds
    models = [m for _, m, _ in nb05.implement_cases(550)]
    assert sum(p < 0 for p in models[3].parents) == 2                          # a forest
    assert any(p > k for k, p in enumerate(models[2].parents))                  # a parent after its child
    assert all(p == k - 1 for k, p in enumerate(models[0].parents))             # a chain


def test_expected_values_of_the_value_exercises():
    """Literal answers derived by hand in docs/solutions (not computed by the checker)."""
    assert nb05._nnz_D() == 3 * 3 + 1 + 3 * 3 + 1 + 3 * 3
    assert nb06._star_crossover() == 9
    assert nb07._zero_pairs() == 3 * 5
    assert nb06._roots_choice() == "a" and nb05._sign_choice() == "a"


def test_operation_count_formulas_on_small_cases():
    """764n − 510r and the dense count, by hand for one body (254 = 114 + 85 + 49 + 6, 201 = 156 + 42 + 3)."""
    assert nb06.aba_count([-1]) == 254
    assert nb06.dense_count([-1]) == 156 + 42 + 0 + 0 + 1 + 2
