"""Exercises of notebook 07 (operational-space inertia via Ω and Υ).  Model answers: docs/solutions/07_operational_space.md.

Expected values come from the dense route (frame Jacobians from ``opalg.frame_jacobian``, ℳ from
the CRBA, a dense solve), the student's from the O(n) one (``opalg.lambda_inv``, F3); the
"implement it" exercise is graded against ``opalg.upsilon``.
"""

from __future__ import annotations

__all__ = ["EXERCISES", "upsilon_inputs", "planar_arm_setup", "effective_mass_setup"]

import numpy as np

from opalg.course.exercises import Exercise, close_arrays, function, integer, number
from opalg.course.exercises.nb05 import implement_cases


def _dense_lambda_inv(model, q, frames):
    import opalg

    J = np.vstack([opalg.frame_jacobian(model, q, fr) for fr in frames])
    return J @ np.linalg.solve(opalg.crba(model, q), J.T)


def planar_arm_setup():
    """The two-link planar arm, state and tip frame of Exercise 07.1: ``(arm, q, tip)``.

    Examples
    --------
    >>> arm, q, tip = planar_arm_setup()
    >>> arm.ndof, tip[0]
    (2, 1)
    """
    import opalg

    arm = opalg.planar_arm([1.0, 0.8], [2.0, 1.0], [0.2, 0.05], gravity=(0.0, 0.0, 0.0))
    return arm, np.array([0.3, 1.0]), (1, np.eye(3), np.array([0.8, 0.0, 0.0]))


def _lambda_xy_00() -> float:
    """Λ_xy(0, 0): invert the 2×2 linear x-y block of the dense J ℳ⁻¹ J*."""
    arm, q, tip = planar_arm_setup()
    return float(np.linalg.inv(_dense_lambda_inv(arm, q, [tip])[3:5, 3:5])[0, 0])


def effective_mass_setup():
    """The tree, state and frame of Exercise 07.2: ``(tree, q, frame)``, the frame on body 7.

    Examples
    --------
    >>> tree, q, frame = effective_mass_setup()
    >>> tree.n, frame[0]
    (8, 7)
    """
    import opalg

    tree = opalg.random_model(8, "tree", seed=3)
    return tree, np.random.default_rng(72).normal(size=tree.ndof), (7, np.eye(3), np.array([0.1, 0.0, 0.05]))


def _effective_mass() -> float:
    """1/(u* J ℳ⁻¹ J* u) with the dense route, u the unit force along the frame's x axis."""
    tree, q, frame = effective_mass_setup()
    u = np.array([0, 0, 0, 1.0, 0, 0])
    return float(1.0 / (u @ _dense_lambda_inv(tree, q, [frame]) @ u))


def _zero_pairs() -> int:
    """Pairs i < j with Ω(i, j) = 0 in the forest of Exercise 07.3, Ω = φ*H*ℳ⁻¹Hφ densely.

    exact: uncoupled blocks are exact zeros (the LU of a permuted block-diagonal ℳ never mixes the
    blocks, and the products sum exact zeros), coupled ones are >= 0.03 of max|Ω|."""
    import opalg

    m = opalg.random_model(8, "tree", seed=5, n_roots=2)
    q = np.random.default_rng(73).normal(size=m.ndof)
    ops = opalg.operators(m, q)
    Hphi = ops.H.dense() @ ops.phi.dense()
    Om = Hphi.T @ np.linalg.solve(opalg.crba(m, q), Hphi)
    return sum(1 for i in range(m.n) for j in range(i + 1, m.n)
               if not np.any(Om[6 * i:6 * i + 6, 6 * j:6 * j + 6]))


def upsilon_inputs(model, q) -> tuple[list, list, list, list]:
    """The raw inputs of Exercise 07.4 (the Υ recursion F2): ``(parents, Xup, H, P)``.

    ``parents``, ``Xup`` (6×6, φ(℘k,k) = ``Xup[k].T``) and ``H`` (n_k×6) as in Exercise 05.4, and
    ``P[k]`` the 6×6 articulated-body inertia ``opalg.articulated(model, q).P[k]``.

    Examples
    --------
    >>> import numpy as np, opalg
    >>> m = opalg.random_model(3, "tree", seed=1)
    >>> parents, Xup, H, P = upsilon_inputs(m, np.zeros(m.ndof))
    >>> len(P), P[0].shape
    (3, (6, 6))
    """
    import opalg
    from opalg.model.kinematics import body_kinematics

    kin = body_kinematics(model, q)
    return (list(model.parents), [np.array(X) for X in kin.Xup], [np.array(S.T) for S in kin.S],
            [np.array(P) for P in opalg.articulated(model, q, kin=kin).P])


def _upsilon_cases():
    import opalg

    return [(what, upsilon_inputs(m, q), np.array(opalg.upsilon(m, q))) for what, m, q in implement_cases(570)]


EXERCISES = {
    # Relative tolerance 1e-9: Λ_xy is the inverse of a well-conditioned 2x2 block (condition
    # number 6.6 at q = (0.3, 1.0)); the O(n) and dense routes agree to ~1e-15, while 1/Λ⁻¹_xx
    # (2.09) or the pseudo-inverse of the 6x6 matrix (1.44) differ from Λ_xy[0, 0] (2.12) at O(1).
    "07.1": Exercise("07.1", "value", "a number (the entry Λ_xy[0, 0], in kg)",
                     number(_lambda_xy_00, "pick rows and columns 3:5 of lambda_inv first, then invert "
                                           "that 2×2 block", rtol=1e-9)),
    # Relative tolerance 1e-9: a scalar 1/(u*Λ⁻¹u), both routes exact to round-off (~1e-14).
    "07.2": Exercise("07.2", "value", "a number (the effective mass, in kg)",
                     number(_effective_mass, "u*Λ⁻¹u is the inverse of the effective mass; u = (0,0,0,1,0,0) "
                                             "picks the linear x component", rtol=1e-9)),
    "07.3": Exercise("07.3", "value", "an integer",
                     integer(_zero_pairs, "which pairs of bodies have no common ancestor?")),
    # Relative tolerance 1e-10 on the stacked Υ(k): the recursions agree to the round-off of O(n)
    # 6x6 congruences (observed ~1e-15); a missing ψ*(℘k,k)Υ(℘k)ψ(℘k,k) term is O(1).
    "07.4": Exercise("07.4", "function",
                     "a function upsilon_blocks(parents, Xup, H, P) returning the n blocks Υ(k) as an "
                     "(n, 6, 6) array",
                     function(_upsilon_cases, close_arrays(1e-10)), name="upsilon_blocks"),
}
