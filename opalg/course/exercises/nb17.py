"""Exercises of notebook 17 (derivatives, linearization, LQR).  Model answers: docs/solutions/17_derivatives_lqr.md."""

from __future__ import annotations

import numpy as np

from opalg.course.exercises import Exercise, choice, close_arrays, function, number


def _acrobot_unstable_rate() -> float:
    """The largest real part of the eigenvalues of A at the Acrobot's upright rest (E20)."""
    import opalg
    from opalg import underactuated as ua

    model, passive = ua.acrobot()
    A, _ = opalg.linearize(model, [np.pi / 2, 0.0], np.zeros(2), np.zeros(2), passive=passive)
    return float(np.linalg.eigvals(A).real.max())


def _velocity_jacobian_cases():
    """(model, q) -> ∂V/∂θ̇ = φ*H* (6n × N, bodies stacked in label order) on chains and trees (C1, E14)."""
    import opalg

    rng = np.random.default_rng(1702)
    cases = []
    for what, m in [("a 5-body chain with multi-axis and prismatic joints", opalg.random_model(5, "chain", seed=171,
                                                                                                joints="all")),
                    ("a 7-body tree with mixed joints", opalg.random_model(7, "tree", seed=172, joints="mixed")),
                    ("a relabelled 6-body tree", opalg.random_model(6, "tree", seed=173, joints="all").relabeled(
                        [3, 0, 5, 1, 4, 2]))]:
        q = rng.normal(size=m.ndof)
        ops = opalg.operators(m, q)
        cases.append((what, (m, q), (ops.phi.T @ ops.H.T).dense()))
    return cases


def _four_bar_upside_down_rate() -> float:
    """The positive eigenvalue of the four-bar's A (H11) at rest at the maximum of its potential energy
    along the crank angle: V'(u) = 0 by brentq on a central difference, from a 5° grid."""
    from scipy.optimize import brentq

    from opalg import closed
    from opalg import underactuated as ua

    def V(u):
        sys_u, q_u = closed.four_bar(crank=u)
        return ua.mechanical_energy(sys_u.model, q_u, np.zeros(3))

    us = np.linspace(-np.pi, np.pi, 73)
    u0 = us[int(np.argmax([V(u) for u in us]))]
    u_top = brentq(lambda u: (V(u + 1e-4) - V(u - 1e-4)) / 2e-4, u0 - 0.1, u0 + 0.1, xtol=1e-13)
    sys_t, q_t = closed.four_bar(crank=u_top)
    lin = closed.linearize(sys_t, q_t, np.zeros(3), np.zeros(3))
    return float(np.linalg.eigvals(lin.A).real.max())


EXERCISES = {
    # rtol 1e-9: an eigenvalue of a 4×4 matrix built from a 2×2 solve (cond ≈ 20); a wrong sign of
    # gravity, the hanging pose or a missing ℳ⁻¹ changes it by far more.
    "17.1": Exercise("17.1", "value", "a number (1/s)",
                     number(_acrobot_unstable_rate, "linearize at θ = (π/2, 0), θ̇ = 0, T = 0 and take the "
                                                    "eigenvalue of A with the largest real part", rtol=1e-9)),
    # rtol 1e-10: products of at most 7 transforms with the axes, no solve.
    "17.2": Exercise("17.2", "function",
                     "a function velocity_jacobian(model, q) returning the 6n × N matrix ∂V/∂θ̇",
                     function(_velocity_jacobian_cases, close_arrays(1e-10)), name="velocity_jacobian"),
    "17.3": Exercise("17.3", "value", "a letter: a, b or c",
                     choice("a", "abc", "build [B, AB, A²B, A³B] from opalg.linearize and look at its rank")),
    # rtol 1e-5: λ = 2.83 /s moves with the crank angle by |dλ/du| ≈ 0.06 /s per rad (measured by
    # central differences), so a maximum of V found within 5e-4 rad passes; the hanging pose (a pure
    # oscillation, real parts 0) or a sign error in gravity are far outside.
    "17.4": Exercise("17.4", "value", "a number (1/s)",
                     number(_four_bar_upside_down_rate, "find the crank angle where the four-bar's potential "
                            "energy is largest (closed.four_bar(crank=u) assembles it; ua.mechanical_energy at rest "
                            "is V), linearize there with closed.linearize and take the positive eigenvalue of A",
                            rtol=1e-5)),
}
