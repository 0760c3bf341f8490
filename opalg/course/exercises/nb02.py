"""Exercises of notebook 02 (spatial vectors).  Model answers: docs/solutions/02_spatial_vectors.md."""

from __future__ import annotations

import numpy as np

from opalg.course.exercises import Exercise, choice, close_arrays, function, number

# 02.1: the moment about the origin of F = (0, 0, -10) N at y = (1, 2, 0) m.  The options are
# the right one, l x F with l = y - x, and the three sign/order slips it is confused with.
_MOMENT_OPTIONS = {"a": (20.0, -10.0, 0.0),    # F x l: the factors swapped
                   "b": (-20.0, 10.0, 0.0),    # l x F
                   "c": (-10.0, 20.0, 0.0),    # components swapped
                   "d": (0.0, 0.0, 0.0)}       # "no moment at y, so none anywhere"


def _moment_letter() -> str:
    from opalg.spatial import vectors as sv

    n_x = (sv.phi_free(np.array([1.0, 2.0, 0.0])) @ np.array([0, 0, 0, 0, 0, -10.0]))[:3]
    # exact: sums of products of small integers, so n_x is one of the options to the last bit.
    (letter,) = [k for k, v in _MOMENT_OPTIONS.items() if np.array_equal(v, n_x)]
    return letter


def _kinetic_energy() -> float:
    from opalg.spatial import vectors as sv

    V = np.array([0, 0, 1.0, 1.0, 0, 0])
    return float(0.5 * V @ sv.spatial_inertia(2.0, np.array([0.1, 0, 0]), np.diag([0.1, 0.2, 0.3])) @ V)


def _rest_distance() -> float:
    """Distance from the origin of the point at rest: solve v + ω × y = 0 in the plane
    by least squares (an independent route from the formula ω × v / |ω|² of the notebook)."""
    from opalg.spatial import vectors as sv

    w, v = np.array([0, 0, 2.0]), np.array([1.0, 0, 0])
    # v(y) = v + skew(ω) y with y = (y1, y2, 0): two equations for the in-plane components
    A = sv.skew(w)[:2, :2]
    y = np.linalg.solve(A, -v[:2])
    return float(np.hypot(*y))


def _crf_cases():
    """crf(V) for seeded random twists (and a zero one), compared with opalg.spatial.vectors.crf."""
    from opalg.spatial import vectors as sv

    rng = np.random.default_rng(201)
    out = [("V = 0", (np.zeros(6),), np.zeros((6, 6)))]
    for i in range(4):
        V = rng.normal(size=6) * rng.uniform(0.1, 10.0)
        out.append((f"random twist {i + 1}", (V.copy(),), sv.crf(V)))
    out.append(("a pure rotation V = [0, 0, 1, 0, 0, 0]", (np.array([0, 0, 1.0, 0, 0, 0]),),
                sv.crf(np.array([0, 0, 1.0, 0, 0, 0]))))
    out.append(("a pure translation V = [0, 0, 0, 1, 2, 3]", (np.array([0, 0, 0, 1.0, 2, 3]),),
                sv.crf(np.array([0, 0, 0, 1.0, 2, 3]))))
    return out


def _phi_cases():
    """φ(x, y) for seeded random points; expected from the moment/velocity rules directly:
    column j of φ(x, y) is φ(x, y) e_j, with n(x) = n(y) + (y − x) × F."""
    rng = np.random.default_rng(202)
    out = []
    for i in range(5):
        x, y = rng.normal(size=(2, 3))
        want = np.eye(6)
        for j in range(3, 6):               # a unit force F = e_j at y: moment (y - x) x e_j at x
            want[:3, j] = np.cross(y - x, np.eye(3)[j - 3])
        out.append((f"random points {i + 1}", (x.copy(), y.copy()), want))
    out.append(("x = y", (np.ones(3), np.ones(3)), np.eye(6)))
    return out


EXERCISES = {
    "02.1": Exercise("02.1", "value", "one letter, a, b, c or d",
                     choice(_moment_letter(), "abcd", "the moment about x of a force F at y is l(x, y) × F, "
                                                     "with l(x, y) the vector from x to y")),
    # 1e-9: the energy is a short sum of products of numbers given to 2 digits (exact ~1e-16).
    "02.2": Exercise("02.2", "value", "a number (joules)",
                     number(_kinetic_energy, "½ m |v + ω × p|² + ½ ωᵀ J_cm ω, or ½ Vᵀ M V with spatial_inertia",
                            rtol=1e-9)),
    "02.3": Exercise("02.3", "value", "a number (metres)",
                     number(_rest_distance, "solve v + ω × y = 0 for y in the plane", rtol=1e-9)),
    # 1e-14 relative, exact: crf and φ only copy and negate entries (φ those of y − x), so a
    # correct answer is the expected one to the last bit (the model answers are, on 300 random
    # twists and point pairs under three BLAS kernels); products with the 0/±1 entries of a
    # product-based construction are exact too.  The tolerance only forgives the sign of zero.
    "02.4": Exercise("02.4", "function", "a function crf(V) returning the 6×6 force cross-product matrix",
                     function(_crf_cases, close_arrays(1e-14)), name="crf"),
    "02.5": Exercise("02.5", "function", "a function phi(x, y) returning the 6×6 matrix φ(x, y)",
                     function(_phi_cases, close_arrays(1e-14)), name="phi"),
}
