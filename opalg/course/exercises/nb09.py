"""Exercises of notebook 09 (symbolic modelling of a rooted tree, 1998).

Model answers: docs/solutions/09_symbolic_tree_modelling.md.  The expected values are computed
here by :mod:`opalg.symbolic` (the topology check, the potential and kinetic energies, the
relative equilibrium of the spinning deployment), never in the notebook.
"""

from __future__ import annotations

import functools

import numpy as np

from opalg.course.exercises import Exercise, _StudentError, choice, close_arrays, function, number

# ----------------------------------------------------------------------------- 09.2


@functools.lru_cache(maxsize=1)
def _slide_gravity():
    """∂U/∂Z21 of the notebook's telescoping arm, lambdified in (m2, g, H_11)."""
    import sympy as sp

    from opalg.symbolic import Body, Hinge, TreeSystem

    m1, m2, l, c1, c2, g, I1, I2 = sp.symbols("m1 m2 l c1 c2 g I1 I2", positive=True)
    arm = TreeSystem(T=[0, 1],
                     hinges=[Hinge(nr=1), Hinge(nr=1, nt=1, axes=[[1, 0, 0]], offset=(l, 0, 0))],
                     bodies=[Body(m1, (c1, 0, 0), I1 * sp.eye(3)), Body(m2, (c2, 0, 0), I2 * sp.eye(3))],
                     gravity=(0, -g, 0))
    dU = sp.simplify(arm.potential_energy().diff(arm.q[1]))
    # The gravity term of the slide depends on m2, g and H_11 only: that is part of the lesson.
    assert dU.free_symbols <= {m2, g, arm.q[0]}, dU
    return sp.lambdify((m2, g, arm.q[0]), dU, "numpy")


def _slide_gravity_cases():
    f = _slide_gravity()
    out = []
    for m2, g, deg in ((2.0, 9.81, 90.0), (2.0, 9.81, 30.0), (0.7, 1.62, -120.0), (5.0, 3.7, 200.0)):
        h = np.radians(deg)
        out.append((f"m2 = {m2} kg, g = {g} m/s^2, H_11 = {deg:g} deg", (m2, g, h), float(f(m2, g, h))))
    return out


# ----------------------------------------------------------------------------- 09.3


@functools.lru_cache(maxsize=1)
def _boom_equilibrium_deg() -> float:
    """Boom angle H3_1 (degrees) at the relative equilibrium k_i q_i + C_i(q, 0) = 0 of the
    deployment on a root spinning at 0.2 rad/s, by the symbolic route (lambdified bias)."""
    import scipy.optimize

    from opalg.symbolic import RootMotion, deployable_example, deployment_setup, t

    system = deployable_example("deploy", base=RootMotion(angles=(0.2 * t, 0, 0)))
    setup = deployment_setup(system, k_hinge=(8.0, 4.0, 3.0, 6.0), c_hinge=(50.0, 8.0, 5.0, 15.0),
                             k_gimbal=400.0, c_gimbal=150.0)
    k = np.array([setup.springs[s][0] for s in system.q])
    _, C = system.lambdify()
    q_eq = scipy.optimize.fsolve(lambda q: k * q + C(q, np.zeros(system.N), 0.0), np.zeros(system.N), xtol=1e-13)
    residual = np.abs(k * q_eq + C(q_eq, np.zeros(system.N), 0.0)).max()
    assert residual < 1e-9, residual
    return float(np.degrees(q_eq[[str(s) for s in system.q].index("H3_1")]))


# ----------------------------------------------------------------------------- 09.4


def _order_cases():
    """Topology vectors t (paper labels 1..n, 0 = root) and opalg.symbolic's verdict on them:
    seeded random trees and chains with shuffled labels (so that t(j) < j does not hold), a
    forest of several bodies on the root, and vectors that are not rooted trees."""
    import opalg
    from opalg.errors import ModelError
    from opalg.symbolic.data import check_topology

    rng = np.random.default_rng(1998)
    vectors = []
    for what, n, kind, seed, roots in (("a 7-body tree", 7, "tree", 91, 1), ("a 6-body chain", 6, "chain", 92, 1),
                                       ("a 9-body tree on 3 root bodies", 9, "tree", 93, 3)):
        parents = opalg.random_model(n, kind, seed=seed, n_roots=roots).parents
        label = rng.permutation(n) + 1                  # body k of the model is B_label[k]
        t = [0] * n
        for k, p in enumerate(parents):
            t[label[k] - 1] = 0 if p < 0 else int(label[p])
        vectors.append((f"{what} with shuffled labels, t = {tuple(t)}", tuple(t)))
    vectors += [("t = (0, 3, 2): a cycle B2 -> B3 -> B2", (0, 3, 2)),
                ("t = (0, 2): body 2 on itself", (0, 2)),
                ("t = (0, 1, 5): an inner body out of range", (0, 1, 5)),
                ("t = (2, 1): no body on the root", (2, 1)),
                ("t = (0, 1, 4, 5, 3): a cycle away from the root", (0, 1, 4, 5, 3))]
    out = []
    for what, t in vectors:
        try:
            order = check_topology(t)[1]
        except ModelError:
            order = None
        out.append((what, (t,), (t, order)))
    return out


def _compare_order(got, want):
    t, order = want
    n = len(t)
    if order is None:
        if got is None:
            return None
        return f"this t is not a rooted tree (follow t from every body), but your function returned {got!r}, not None"
    if got is None:
        return "this t is a rooted tree, but your function returned None"
    try:
        got = [int(j) for j in got]
    except (TypeError, ValueError):
        return f"expected a sequence of body labels, got {got!r}"
    if sorted(got) != list(range(1, n + 1)):
        return f"{got} is not an ordering of the bodies 1..{n}"
    seen = {0}
    for j in got:
        if t[j - 1] not in seen:
            return f"body {j} comes before its inner body {t[j - 1]} in {got}"
        seen.add(j)
    return None


# ----------------------------------------------------------------------------- 09.5


def _kinetic_cases():
    """One free body on the root with random mass data and hinges of 3, 4 and 6 coordinates;
    expected: opalg.symbolic's kinetic energy at a random state; the arguments are the body's
    ω and origin velocity u (body coordinates) at that state."""
    import sympy as sp

    from opalg.symbolic import Body, Hinge, TreeSystem, box_inertia

    rng = np.random.default_rng(9)
    out = []
    for what, hinge in (("a spherical hinge (NR = 3)", Hinge(3, 0, offset=(0.3, -0.2, 0.5))),
                        ("a slide and two angles (NT = 1, NR = 2)", Hinge(2, 1, axes=[[0.6, 0.0, 0.8]], offset=(1, 0, 0))),
                        ("a free hinge (NT = 3, NR = 3)", Hinge(3, 3, offset=(0.0, 0.4, 0.0)))):
        m = float(rng.uniform(0.5, 3.0))
        c = rng.normal(size=3)
        # a box's principal moments (a real mass distribution), turned by a random rotation
        R, _ = np.linalg.qr(rng.normal(size=(3, 3)))
        inertia = R @ np.array(box_inertia(m, *rng.uniform(0.2, 2.0, size=3))) @ R.T
        inertia = (inertia + inertia.T) / 2        # symmetric to the last bit (the body check is exact)
        system = TreeSystem([0], [hinge], [Body(m, c, inertia)])
        q, qd = rng.normal(size=(2, system.N))
        at = dict(zip(system.q + system.qd, [*q, *qd]))
        kin = system.kinematics()[1]
        qd_col = sp.Matrix(system.qd)
        omega = np.array((kin["Jw"] * qd_col).subs(at).evalf(), dtype=float).ravel()
        u = np.array((kin["Ju"] * qd_col).subs(at).evalf(), dtype=float).ravel()
        want = float(system.kinetic_energy().subs(at).evalf())
        out.append((what, (m, c.copy(), inertia.copy(), omega, u), want))
    return out


def _kinetic_compare(rtol: float):
    arrays = close_arrays(rtol)

    def compare(got, want):
        try:
            value = complex(got)
        except (TypeError, ValueError):
            raise _StudentError(f"expected a number (the kinetic energy), got {type(got).__name__}") from None
        if abs(value.imag) > 0:
            return f"the result {got!r} is not real"
        return arrays(value.real, want)

    return compare


EXERCISES = {
    "09.1": Exercise("09.1", "value", "one letter among a, b, c, d",
                     choice("c", "abcd", "t(j) is the label of the inner body of B_j, 0 for a body on the root")),
    # Relative tolerance 1e-12, exact: the model answer evaluates the lambdified product itself
    # (bit-identical on 300 random inputs under three BLAS kernels); another order of the product
    # or sin as cos(H − π/2) differs by a few ulps at these four angles.
    "09.2": Exercise("09.2", "function", "a function dU_dZ21(m2, g, H_11) returning ∂U/∂Z21 as a number",
                     function(_slide_gravity_cases, close_arrays(1e-12)), name="dU_dZ21"),
    # Relative tolerance 1e-4 (4 significant digits, 3e-4 deg): fsolve converges to 1e-13 and the
    # symbolic and operator routes agree to 1e-15, so only the student's rounding matters.
    "09.3": Exercise("09.3", "value", "a number (degrees, with its sign)",
                     number(_boom_equilibrium_deg, "solve k_i q_i + C_i(q, 0) = 0 for the root spinning at "
                                                   "0.2 rad/s, as in section 7, and convert to degrees", rtol=1e-4)),
    "09.4": Exercise("09.4", "function", "a function base_to_tip(t) returning the bodies in a base-to-tip "
                                         "order, or None when t is not a rooted tree",
                     function(_order_cases, _compare_order), name="base_to_tip"),
    # Relative tolerance 1e-12: a dozen products of O(1) numbers, which opalg.symbolic evaluates in
    # another order; measured: the model answer was within 8.2e-16 over 300 random bodies (the
    # three hinges) under three BLAS kernels.
    "09.5": Exercise("09.5", "function", "a function kinetic_energy(m, c, I, omega, u) returning a number",
                     function(_kinetic_cases, _kinetic_compare(1e-12)), name="kinetic_energy"),
}
