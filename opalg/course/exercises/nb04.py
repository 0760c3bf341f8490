"""Exercises of notebook 04 (the Newton–Euler factorization).  Model answers:
docs/solutions/04_newton_euler.md.

The "implement it" exercises (04.4 composite inertias, 04.5 the RNEA as two sweeps) are graded
on seeded random chains, trees and forests with multi-axis and prismatic joints, some with
shuffled labels (a child may have a smaller label than its parent), against opalg.
"""

from __future__ import annotations

import numpy as np

from opalg.course.exercises import Exercise, close_arrays, function, integer, number

# The 2-link planar arm of notebook 04 §11, with numbers (SI units).
ARM = dict(lengths=[1.0, 0.8], masses=[2.0, 1.5], inertias=[0.2, 0.1], com=[0.5, 0.35], g=9.81)


def _zeros_of_mass_matrix() -> int:
    """Exact zeros of ℳ for random_model(8, "tree", seed=5), from the ancestor relation (D3):
    ℳ(i, j) = 0 exactly when neither body is an ancestor of the other — n_i n_j entries each."""
    import opalg

    m = opalg.random_model(8, "tree", seed=5)

    def ancestors_or_self(k):
        out = {k}
        while m.parents[k] >= 0:
            k = m.parents[k]
            out.add(k)
        return out

    anc = [ancestors_or_self(k) for k in range(m.n)]
    return sum(m.joint_sizes[i] * m.joint_sizes[j] for i in range(m.n) for j in range(m.n)
               if i not in anc[j] and j not in anc[i])


def _kinetic_energy() -> float:
    """½ V*MV summed over the bodies (V from the velocity recursion): the body route, not ℳ."""
    import opalg
    from opalg.model.kinematics import body_kinematics

    m = opalg.random_model(6, "chain", seed=4)
    q, qd = np.random.default_rng(41).normal(size=(2, m.ndof))
    kin = body_kinematics(m, q, qd)
    return float(sum(0.5 * V @ M @ V for V, M in zip(kin.V, m.I_spatial)))


def _arm():
    import opalg

    return opalg.planar_arm(ARM["lengths"], ARM["masses"], ARM["inertias"], com=ARM["com"],
                            gravity=(0, -ARM["g"], 0))


def _gravity_cases():
    import opalg

    arm, rng = _arm(), np.random.default_rng(43)
    out = []
    for q in [np.zeros(2), np.array([np.pi / 2, 0.0]), *rng.uniform(-np.pi, np.pi, size=(4, 2))]:
        out.append((f"q = ({q[0]:.3f}, {q[1]:.3f})", (float(q[0]), float(q[1])),
                    float(opalg.bias(arm, q, np.zeros(2))[1])))
    return out


def _models():
    """Seeded chains, trees and forests with mixed joints (R, P, 2-3 axis R/P sequences);
    the last two relabelled by a random permutation (children before parents somewhere)."""
    import opalg

    rng = np.random.default_rng(44)
    tree = opalg.random_model(9, "tree", seed=45, joints="mixed")
    forest = opalg.random_model(8, "tree", seed=46, n_roots=2, joints="mixed")
    shuffled = tree.relabeled([int(i) for i in rng.permutation(tree.n)])
    assert any(p > k for k, p in enumerate(shuffled.parents)), "relabelled tree is still base-to-tip"
    models = [("a 6-body chain", opalg.random_model(6, "chain", seed=47, joints="mixed")),
              ("a 9-body tree", tree),
              ("a 2-root forest of 8 bodies", forest),
              ("the 9-body tree with shuffled labels", shuffled)]
    for what, m in models:
        if any(j.ndof > 1 for j in m.joints):
            continue
        raise AssertionError(f"{what} has no multi-axis joint: the grader would not test c_J")
    return models, rng


def _composite_cases():
    import opalg
    from opalg.model.kinematics import body_kinematics

    models, rng = _models()
    out = []
    for what, m in models:
        q = rng.normal(size=m.ndof)
        Xup = [np.array(X) for X in body_kinematics(m, q).Xup]
        R, _ = opalg.composite_inertias(m, q)
        out.append((what, (list(m.parents), Xup, [np.array(M) for M in m.I_spatial]), np.array(R)))
    return out


def _rnea_cases():
    import opalg
    from opalg.model.kinematics import body_kinematics

    models, rng = _models()
    out = []
    for what, m in models:
        q, qd, qdd = rng.normal(size=(3, m.ndof))
        kin = body_kinematics(m, q)
        per_body = lambda x: [np.array(x[m.dof_slice[k]]) for k in range(m.n)]  # noqa: E731
        args = (list(m.parents), [np.array(X) for X in kin.Xup], [np.array(S) for S in kin.S],
                [np.array(M) for M in m.I_spatial], per_body(qd), per_body(qdd))
        out.append((what, args, opalg.rnea(m, q, qd, qdd, gravity=False)))
    return out


EXERCISES = {
    "04.1": Exercise("04.1", "value", "an integer",
                     integer(_zeros_of_mass_matrix, "ℳ(i, j) = 0 for bodies on different branches (D3); "
                                                    "each such pair of bodies gives n_i n_j zero entries")),
    # 1e-9: the two routes (½ θ̇*ℳθ̇ and ½ Σ V*MV) agree to ~1e-15; give the number in full precision.
    "04.2": Exercise("04.2", "value", "a number (joules)",
                     number(_kinetic_energy, "½ θ̇ᵀ ℳ(θ) θ̇ with ℳ = opalg.crba(model, q)", rtol=1e-9)),
    # 1e-10: a closed form and the recursion differ by the round-off of a few products (~1e-15).
    "04.3": Exercise("04.3", "function", "a function gravity_2(q1, q2) returning a number (N m)",
                     function(_gravity_cases, close_arrays(1e-10)), name="gravity_2"),
    # 1e-12: one sweep of 6x6 congruences, no solve; measured: the model answer was within 4.3e-16
    # of opalg over 240 random chains, trees, forests and relabelled trees under three BLAS kernels.
    "04.4": Exercise("04.4", "function",
                     "a function composite_inertias(parents, Xup, Ms) returning an (n, 6, 6) array",
                     function(_composite_cases, close_arrays(1e-12)), name="composite_inertias"),
    # 1e-11: two sweeps over ≤ 9 bodies with O(1) data; round-off ~1e-14 relative (observed).
    "04.5": Exercise("04.5", "function",
                     "a function rnea(parents, Xup, S, Ms, qd, qdd) returning T as an (N,) array",
                     function(_rnea_cases, close_arrays(1e-11)), name="rnea"),
}
