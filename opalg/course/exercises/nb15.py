r"""Exercises of notebook 15 (free-floating systems).  Model answers: docs/solutions/15_free_floating.md.

15.1 ("implement it", K10/K11) and 15.2 ("implement it", K12) are graded on seeded random
floating chains and trees (:func:`opalg.random_model` with ``floating=True`` and
``joints="all"``: multi-axis, prismatic, helical and spherical joints; the root, body 0, on a free
joint, its velocity in v[0:6]), one with its masses spread over four decades, and on the
satellite of :func:`opalg.floating.examples.satellite_with_arm`.  The expected values come from an
independent route: the momentum matrix :math:`A_0` of :func:`opalg.algorithms.momentum.spatial_momentum` (the
φ sweep, not the CRBA), :math:`v_b = -A_{0,b}^{-1}A_{0,m}\dot\theta` (zero momentum), and for the
Jacobian :math:`J^* = J_m + J_b\,(-A_{0,b}^{-1}A_{0,m})`.  15.3 integrates the base's rotation
for a one-joint motion of the satellite (a quadrature, computed here with scipy); 15.4 is a
multiple choice (path dependence) whose reasoning is in the solutions.
"""

from __future__ import annotations

__all__ = ["EXERCISES", "floating_cases", "shoulder_turn"]

import numpy as np

from opalg.course.exercises import Exercise, choice, close_arrays, function, number


def floating_cases() -> list:
    """The models and states 15.1 and 15.2 are graded on: ``[(description, model, q, θ̇, frame), ...]``.

    Random floating chains and trees of 2–7 bodies (every joint kind), one tree with masses
    scaled by 10^U(-2, 2), and the satellite; ``frame`` is a random body-fixed point on a
    random non-root body.

    Examples
    --------
    >>> cases = floating_cases()
    >>> len(cases), all(m.free_bodies == (0,) for _, m, _, _, _ in cases)
    (6, True)
    """
    import opalg
    from opalg.floating.examples import satellite_with_arm
    from opalg.model.multibody import Model

    rng = np.random.default_rng(1501)
    models = [("a floating chain of 2 bodies", opalg.random_model(2, "chain", seed=1502, joints="all", floating=True)),
              ("a floating chain of 5 bodies", opalg.random_model(5, "chain", seed=1503, joints="all", floating=True)),
              ("a floating tree of 6 bodies", opalg.random_model(6, "tree", seed=1504, joints="all", floating=True)),
              ("a floating tree of 7 bodies", opalg.random_model(7, "tree", seed=1505, joints="mixed", floating=True))]
    m = opalg.random_model(6, "tree", seed=1506, joints="all", floating=True)
    scale = 10.0 ** rng.uniform(-2, 2, m.n)
    wide = Model(m.parents, m.joints, m.placements,
                 [(s * i.mass, i.com, s * np.asarray(i.I_com)) for s, i in zip(scale, m.inertias)], m.gravity)
    models.append(("a floating tree of 6 bodies, masses over four decades", wide))
    models.append(("the satellite with an arm", satellite_with_arm()))
    out = []
    for what, model in models:
        q = opalg.integrate(model, opalg.neutral(model), rng.normal(size=model.nv))
        body = int(rng.integers(1, model.n))
        out.append((what, model, q, rng.normal(size=model.nv - 6), (body, rng.uniform(-0.5, 0.5, 3))))
    return out


def _momentum_split(model, q):
    # A_0 (6 x nv) by the φ sweep, columns = momentum of the unit velocities; -A_b^-1 A_m
    from opalg.algorithms.momentum import spatial_momentum

    A0 = spatial_momentum(model, np.broadcast_to(q, (model.nv, model.nq)), np.eye(model.nv)).T
    return -np.linalg.solve(A0[:, :6], A0[:, 6:])


def _base_velocity_cases():
    return [(what, (model, q, thd), _momentum_split(model, q) @ thd) for what, model, q, thd, _ in floating_cases()]


def _jacobian_cases():
    import opalg

    out = []
    for what, model, q, _, frame in floating_cases():
        J = opalg.frame_jacobian(model, q, frame)
        out.append((f"{what}, a point on body {frame[0]}", (model, q, frame),
                    J[:, 6:] + J[:, :6] @ _momentum_split(model, q)))
    return out


def shoulder_turn() -> float:
    r"""The satellite's rotation (rad, about y) when the shoulder turns from 0 to −π/2, all else at 0.

    Every joint but the shoulder stays at zero, so the motion is planar (x–z) and the base turns
    about y only, at :math:`\omega_y = f(\theta_2)\dot\theta_2` with :math:`f` the (ω_y, shoulder)
    entry of :math:`-\mathcal M_{bb}^{-1}\mathcal M_{bm}` (independent of the base's pose); so the
    turn is :math:`\int_0^{-\pi/2} f\,d\theta_2`, by adaptive quadrature.

    Examples
    --------
    >>> round(float(np.degrees(shoulder_turn())), 1)
    30.0
    """
    import opalg
    from scipy.integrate import quad

    from opalg.floating.examples import satellite_with_arm

    sat = satellite_with_arm()

    def f(th):
        q = opalg.neutral(sat)
        q[8] = th
        M = opalg.crba(sat, q)
        return -np.linalg.solve(M[:6, :6], M[:6, 7])[1]

    return float(quad(f, 0.0, -np.pi / 2, epsabs=1e-13, epsrel=1e-11)[0])


EXERCISES = {
    # rtol 1e-9: a solve with ℳ_bb (cond up to ~1e5 with the four-decade masses) against one with A_0,b:
    # cond·eps ~ 1e-11; a sign error, a transposed block or the fixed-base answer (0) are O(1).
    "15.1": Exercise("15.1", "function", "a function base_velocity(model, q, theta_dot) returning the 6-vector v_b",
                     function(_base_velocity_cases, close_arrays(1e-9)), name="base_velocity"),
    "15.2": Exercise("15.2", "function",
                     "a function generalized_jacobian(model, q, frame) returning the 6 x (nv - 6) matrix Ĵ",
                     function(_jacobian_cases, close_arrays(1e-9)), name="generalized_jacobian"),
    # rtol 1e-6: the quadrature is good to ~1e-11; a forward-Euler integration with 1000 steps (~1e-4), the
    # degree value, the opposite sign or the fixed-base answer (0) are refused.
    "15.3": Exercise("15.3", "value", "a number (radians)",
                     number(shoulder_turn, "ω_y = f(θ₂) θ̇₂ with f from the root rows of ℳ; integrate f over θ₂", 1e-6)),
    "15.4": Exercise("15.4", "value", "one letter: a, b, c or d",
                     choice("c", "abcd", "which of the two momentum constraints is the derivative of a function of "
                                         "the configuration?")),
}
