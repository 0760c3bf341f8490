"""Exercises of notebook 14 (flexible bodies).  Model answers: docs/solutions/14_flexible_bodies.md.

14.1 ("implement it", K3) is graded against :func:`opalg.flex.kinematics.node_inertia` on seeded
random flexible bodies (hub with an offset mass centre, 1–5 nodes, some massless, translational
and rotational mode shapes, 1–3 modes) at random modal coordinates, and on a beam link of
:func:`opalg.flex.examples.two_link_arm`.  14.2 counts the coordinates of a flexible tree (the
expected value is ``FlexModel.ndof`` of the model built here); 14.3 is the ratio of the first two
clamped-free frequencies of the Euler–Bernoulli continuum, from the roots of cos x cosh x = −1.

:func:`random_flex_body` and :func:`random_flex_tree` also build the random models notebook 14
checks its identities on.
"""

from __future__ import annotations

__all__ = ["EXERCISES", "random_flex_body", "random_flex_tree", "node_mass_cases", "ndof_model"]

import numpy as np

from opalg.course.exercises import Exercise, close_arrays, function, integer, number


def random_flex_body(rng: np.random.Generator, max_modes: int = 3, min_modes: int = 0):
    """A random :class:`opalg.flex.FlexBody`: random hub, 1–4 nodes (node 0 sometimes massless),
    ``min_modes``–``max_modes`` modes with translational and rotational shapes, SPD stiffness.

    Examples
    --------
    >>> b = random_flex_body(np.random.default_rng(0), min_modes=1)
    >>> b.m >= 1, b.Q.shape[1]
    (True, 6)
    """
    from opalg.model.builders import random_inertia
    from opalg.flex import FlexBody

    p = int(rng.integers(1, 5))
    m = int(rng.integers(min_modes, max_modes + 1))
    pos = rng.uniform(-0.6, 0.6, size=(p, 3))
    inert = [(0.0, np.zeros(3), np.zeros((3, 3))) if (j == 0 and p > 1 and rng.random() < 0.3)
             else random_inertia(rng) for j in range(p)]
    Phi, Psi = 0.5 * rng.normal(size=(2, p, 3, m))
    B = rng.normal(size=(m, m))
    return FlexBody(random_inertia(rng), pos, inert, Phi, Psi, K=B @ B.T + m * np.eye(m))


def random_flex_tree(n: int, topology: str, seed: int, max_modes: int = 3, gravity=(0.0, 0.0, -9.81)):
    """A random undamped flexible tree: topology, joints (every kind) and placements of
    :func:`opalg.random_model`, bodies of :func:`random_flex_body`, each child hanging from a
    random node of its parent (or, one time in five, from the parent's body frame).

    Examples
    --------
    >>> fm = random_flex_tree(3, "tree", seed=1)
    >>> fm.n, fm.ndof == sum(fm.modes) + sum(fm.joint_sizes)
    (3, True)
    """
    import opalg
    from opalg.flex import FlexModel

    rng = np.random.default_rng(seed)
    rigid = opalg.random_model(n, topology, seed=rng, joints="all")
    bodies = [random_flex_body(rng, max_modes) for _ in range(n)]
    attach = []
    for k in range(n):
        p = rigid.parents[k]
        attach.append(-1 if p < 0 or rng.random() < 0.2 else int(rng.integers(0, bodies[p].p)))
    return FlexModel(rigid.parents, rigid.joints, rigid.placements, bodies, attach, gravity)


def node_mass_cases() -> list:
    """The bodies and modal coordinates 14.1 is graded on: ``[(description, body, eta), ...]``.

    Examples
    --------
    >>> [(b.p, b.m) for _, b, _ in node_mass_cases()][-1]
    (9, 2)
    """
    from opalg.flex import examples

    rng = np.random.default_rng(1401)
    out = []
    for i in range(4):
        b = random_flex_body(rng, max_modes=3, min_modes=1)
        out.append((f"random body {i + 1} ({b.p} nodes, {b.m} modes, rotational mode shapes)", b,
                    rng.uniform(-0.4, 0.4, b.m)))
    beam = examples.two_link_arm(modes=2).bodies[0]
    out.append(("a beam link of two_link_arm(modes=2)", beam, np.array([0.05, -0.02])))
    return out


def _node_mass_cases():
    from opalg.flex.kinematics import node_inertia

    return [(what, (b, eta), node_inertia(b, eta)) for what, b, eta in node_mass_cases()]


def ndof_model():
    """The flexible tree of Exercise 14.2 (the notebook builds the same one).

    Body 0 (3 modes) on a revolute joint; body 1 (no modes) on a 3-axis RRR joint hanging from
    body 0's node 1; body 2 (2 modes) on a prismatic joint from body 0's body frame; body 3
    (1 mode) on a helical joint from body 2's node 0.

    Examples
    --------
    >>> ndof_model().modes
    (3, 0, 2, 1)
    """
    from opalg.flex import FlexModel
    from opalg.model.joints import Joint

    rng = np.random.default_rng(1402)
    bodies = []
    for m in (3, 0, 2, 1):
        b = random_flex_body(rng, max_modes=m, min_modes=m)
        while b.p < 2:                      # body 0 must have a node 1
            b = random_flex_body(rng, max_modes=m, min_modes=m)
        bodies.append(b)
    joints = [Joint("R", [0, 0, 1.0]), Joint(["R", "R", "R"], np.eye(3)), Joint("P", [1.0, 0, 0]),
              Joint("H", [0, 1.0, 0], pitch=0.1)]
    places = [(np.eye(3), np.zeros(3))] * 4
    return FlexModel([-1, 0, 0, 2], joints, places, bodies, attach=[-1, 1, -1, 0])


def _ndof() -> int:
    return int(ndof_model().ndof)


def _ratio() -> float:
    from opalg.flex.examples import cantilever_roots

    b1, b2 = cantilever_roots(2)
    return float((b2 / b1) ** 2)


EXERCISES = {
    # Relative tolerance 1e-10: the student's Σ_j B_j* M_j B_j and opalg's einsum differ by the
    # round-off of a few 6x6 products; forgetting the hub, transposing B_j or dropping Π_j are O(1).
    "14.1": Exercise("14.1", "function", "a function node_mass(body, eta) returning the (m + 6)-square 𝓜(k)",
                     function(_node_mass_cases, close_arrays(1e-10)), name="node_mass"),
    "14.2": Exercise("14.2", "value", "an integer",
                     integer(_ndof, "each body contributes its modal coordinates and its joint's dof; "
                                    "attachment nodes add none")),
    # rtol 1e-4: (β₂/β₁)² = 6.2669…; the lumped-mass model's 6.21 or the string's 3 are refused.
    "14.3": Exercise("14.3", "value", "a number",
                     number(_ratio, "ω_i = (β_iL)² √(EI/(ρA L⁴)), β_iL the roots of cos x cosh x = −1", 1e-4)),
}
