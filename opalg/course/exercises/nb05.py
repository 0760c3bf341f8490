"""Exercises of notebook 05 (articulated-body inertia, innovations factorization).

Model answers: docs/solutions/05_articulated_body.md.  Every expected value is computed here by a
route other than the one the exercise asks the student to take (a dense determinant, dense
operator matrices, opalg's own recursion), so the notebook shows no solution.
"""

from __future__ import annotations

__all__ = ["EXERCISES", "riccati_inputs", "implement_cases", "spherical_tree"]

import numpy as np

from opalg.course.exercises import Exercise, choice, close_arrays, function, integer, number


def _logdet_model():
    """The tree and state of Exercise 05.1 (the answer cell builds the same two)."""
    import opalg

    m = opalg.random_model(9, "tree", seed=7)
    return m, np.random.default_rng(51).normal(size=m.ndof)


def _logdet() -> float:
    """log det ℳ by a dense LU of the CRBA's ℳ: independent of the pivots D(k) the student uses."""
    import opalg

    m, q = _logdet_model()
    sign, value = np.linalg.slogdet(opalg.crba(m, q))
    assert sign > 0, "a mass matrix is positive definite"
    return float(value)


def spherical_tree():
    """The five-body tree of spherical, revolute and prismatic joints of notebook 05 §10, and its state.

    Returns ``(model, q)``; three hinges are spherical (3 dof), so D(k) has 3×3 blocks (pitfall 9).

    Examples
    --------
    >>> m, q = spherical_tree()
    >>> list(m.joint_sizes), q.shape
    ([3, 1, 3, 1, 3], (11,))
    """
    import opalg
    from opalg.model.builders import random_inertia, random_rotation

    rs = np.random.default_rng(9)
    joints = [opalg.Joint.spherical("shoulder"), opalg.Joint("R", [0.0, 0.0, 1.0], "elbow"),
              opalg.Joint.spherical("wrist"), opalg.Joint("P", [1.0, 0.0, 0.0], "slider"),
              opalg.Joint.spherical("hip")]
    parents = [-1, 0, 1, 1, 0]
    model = opalg.Model(parents, joints, [(random_rotation(rs), rs.uniform(-0.5, 0.5, 3)) for _ in parents],
                        [random_inertia(rs) for _ in parents])
    return model, rs.uniform(-1.0, 1.0, model.ndof)


def _nnz_D() -> int:
    """Nonzero entries of the dense N×N matrix D of the spherical tree, counted on opalg's D."""
    import opalg

    m, q = spherical_tree()
    return int(np.sum(np.abs(opalg.operators(m, q).D.dense()) > 0))


def _sign_choice() -> str:
    """Which of ψ = φ ∓ φKHψ holds, decided numerically with dense matrices on a chain: the sign
    whose residual is smaller (the other's is 2‖φKHψ‖, of the size of ψ; no round-off threshold)."""
    import opalg

    m = opalg.random_model(6, "chain", seed=11)
    ops = opalg.operators(m, np.random.default_rng(52).normal(size=m.ndof))
    phi, psi, K, H = (getattr(ops, k).dense() for k in ("phi", "psi", "K", "H"))
    res_a, res_b = (np.abs(phi + sign * phi @ K @ H @ psi - psi).max() for sign in (-1.0, 1.0))
    assert min(res_a, res_b) < 1e-6 * max(res_a, res_b), "neither sign holds"
    return "a" if res_a < res_b else "b"


def riccati_inputs(model, q) -> tuple[list, list, list, list]:
    """The raw inputs of Exercise 05.4 (the Riccati recursion E1): ``(parents, Xup, H, M)``.

    ``parents[k]`` is ℘(k) (−1 at a root), ``Xup[k]`` the 6×6 motion transform ${}^kX_{℘k}$ (so
    φ(℘k, k) = ``Xup[k].T``), ``H[k]`` the n_k×6 joint map (``body_kinematics(...).S[k].T``),
    ``M[k]`` the 6×6 spatial inertia.  Plain lists of numpy arrays: no opalg object.

    Parameters
    ----------
    model : opalg.Model
    q : array_like, shape (N,)

    Examples
    --------
    >>> import numpy as np, opalg
    >>> m = opalg.random_model(3, "chain", seed=1)
    >>> parents, Xup, H, M = riccati_inputs(m, np.zeros(m.ndof))
    >>> parents, Xup[0].shape, M[0].shape, all(h.shape == (nk, 6) for h, nk in zip(H, m.joint_sizes))
    ([-1, 0, 1], (6, 6), (6, 6), True)
    """
    from opalg.model.kinematics import body_kinematics

    kin = body_kinematics(model, q)
    return (list(model.parents), [np.array(X) for X in kin.Xup], [np.array(S.T) for S in kin.S],
            [np.array(Mk) for Mk in model.I_spatial])


def implement_cases(key_seed: int) -> list:
    """The models an "implement it" exercise of notebooks 05–07 is graded on, with states.

    Returns ``[(description, model, q), ...]``: a 6-body chain and a 9-body tree with mixed joints
    (revolute, prismatic, 2-3 axis), the same tree relabelled so that a parent may carry a larger
    label than its child, a 2-root forest, and the spherical-joint tree of notebook 05 §10.

    Examples
    --------
    >>> [m.n for _, m, _ in implement_cases(550)]
    [6, 9, 9, 8, 5]
    """
    import opalg

    rng = np.random.default_rng(key_seed)
    tree = opalg.random_model(9, "tree", seed=key_seed + 2)
    shuffled = tree.relabeled(list(np.random.default_rng(key_seed + 3).permutation(tree.n)))
    models = [("a 6-body chain (mixed joints)", opalg.random_model(6, "chain", seed=key_seed + 1)),
              ("a 9-body tree (mixed joints)", tree),
              ("the same tree with shuffled labels (a parent may come after its child)", shuffled),
              ("a 2-root forest of 8 bodies", opalg.random_model(8, "tree", seed=key_seed + 4, n_roots=2)),
              ("the spherical-joint tree of section 10", spherical_tree()[0])]
    return [(what, m, rng.uniform(-1.0, 1.0, m.ndof)) for what, m in models]


def _riccati_cases():
    """P(k) from opalg.articulated (its own recursion, one axis at a time, E11)."""
    import opalg

    out = []
    for what, m, q in implement_cases(550):
        want = np.array(opalg.articulated(m, q).P)
        out.append((what, riccati_inputs(m, q), want))
    return out


EXERCISES = {
    # Relative tolerance 1e-9 on log det ℳ ~ O(1..10): the pivots and the dense LU agree to
    # round-off (~1e-14); 1e-9 also accepts a sum of log|det D(k)| written with slogdet or log(det).
    "05.1": Exercise("05.1", "value", "a number (log det of the mass matrix)",
                     number(_logdet, "det of a block unit triangular factor is 1: "
                                     "log det ℳ = Σ_k log det D(k)", rtol=1e-9)),
    "05.2": Exercise("05.2", "value", 'a letter, "a" or "b"',
                     lambda answer: choice(_sign_choice(), "ab", "multiply ψ⁻¹ − φ⁻¹ = +KH by φ on the left "
                                                                 "and ψ on the right")(answer)),
    "05.3": Exercise("05.3", "value", "an integer",
                     integer(_nnz_D, "D(k) is a full n_k×n_k block; D is block diagonal")),
    # Relative tolerance 1e-10 on the stacked P(k): the student's recursion and opalg's (one
    # axis at a time) differ by the round-off of ~n 6x6 congruences with inverses of D(k)
    # (observed ~1e-15); a wrong projection or a missing child is an O(1) error.
    "05.4": Exercise("05.4", "function",
                     "a function articulated_inertias(parents, Xup, H, M) returning the n articulated "
                     "inertias P(k) as an (n, 6, 6) array",
                     function(_riccati_cases, close_arrays(1e-10)), name="articulated_inertias"),
}
