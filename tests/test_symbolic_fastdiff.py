"""opalg.symbolic.fastdiff against sympy's own routines: the same expressions, node for node.

``fastdiff`` repeats sympy's derivative formulas and its matrix-product loop without their
per-node overhead (it halves the symbolic derivations' time).  Its claim is structural
identity, so the check is ``srepr`` equality against ``Matrix.jacobian``, ``diff`` and ``*``
on the expressions the derivations really feed it: the partial velocities, velocities and
energies of random rooted trees (multi-axis hinges, slides, a moving root) and of the
deployable.  While a test runs, sympy's own routines are the only route to the expected
value: fastdiff is checked to take its own path (it must not fall back to them).
"""

from __future__ import annotations

import numpy as np
import pytest
import sympy as sp
from sympy.core.basic import Basic

from opalg.symbolic import Body, Hinge, RootMotion, TreeSystem, box_inertia, deployable_example, t
from opalg.symbolic import fastdiff as fd

pytestmark = pytest.mark.skipif(not fd._SAME_SYMPY, reason=(
    f"fastdiff repeats sympy {fd.SYMPY_VERSION}'s internals; under sympy {sp.__version__} it is "
    "sympy's own routines"))


def _tree(seed: int) -> TreeSystem:
    """A random rooted tree (3 bodies, 1-2 rotations and 0-1 slide per hinge along random axes,
    physically valid inertias); odd seeds ride on a spinning, translating root.  Small (N <= 9):
    sympy's own routines, the expected values, are the slow route being replaced."""
    from opalg.builders import random_rotation
    rng = np.random.default_rng(seed)
    T = [0, 1, 1] if seed % 3 else [0, 1, 2]
    hinges, bodies = [], []
    for _ in range(3):
        nr, nt = int(rng.integers(1, 3)), int(rng.integers(0, 2))
        axes = [v / np.linalg.norm(v) for v in rng.normal(size=(nt, 3))] if nt else None
        hinges.append(Hinge(nr, nt, axes, rng.normal(size=3)))
        m = rng.uniform(0.5, 3.0)
        R = random_rotation(rng)
        J = R @ np.diag(np.diag(box_inertia(m, *rng.uniform(0.1, 1.0, 3)))) @ R.T
        bodies.append(Body(m, rng.normal(size=3) * 0.3, (J + J.T) / 2))
    w = sp.Rational(3, 10)
    base = RootMotion(position=(sp.sin(t), t ** 2 / 2, 0), angles=(w * t, 0, 0)) if seed % 2 else "fixed"
    return TreeSystem(T, hinges, bodies, base=base, gravity=(0.2, -0.1, -9.81))


@pytest.fixture
def sympy_only(monkeypatch):
    """Counts fastdiff's fall-backs to sympy's own jacobian / diff / product while a test runs."""
    calls = {"jacobian": 0, "diff": 0}
    jac, dif = sp.MatrixBase.jacobian, sp.MatrixBase.diff

    def count(name, fn):
        def wrapped(self, *a, **k):
            calls[name] += 1
            return fn(self, *a, **k)
        return wrapped

    monkeypatch.setattr(sp.MatrixBase, "jacobian", count("jacobian", jac))
    monkeypatch.setattr(sp.MatrixBase, "diff", count("diff", dif))
    return calls, jac, dif


def _same(a, b) -> bool:
    """``srepr(a) == srepr(b)``, with a cheaper sufficient test first: the same tree.

    srepr of a node is a function of its type and arguments (for a matrix: its type, shape and
    entries), so two trees of the same node types and argument order whose leaves print alike
    print alike.  A node outside the types walked (Add, Mul, Pow, applied functions, Tuple) and
    every leaf is compared by srepr itself; if the walk finds any difference, the verdict is
    srepr's (it sorts every sum's terms, seconds per comparison on a bias).
    """
    return _same_tree(a, b, set()) or sp.srepr(a) == sp.srepr(b)


def _same_tree(a, b, done: set) -> bool:
    if a is b or (id(a), id(b)) in done:
        return True
    if type(a) is not type(b):
        return False
    if type(a) in (list, tuple):
        ok = len(a) == len(b) and all(_same_tree(x, y, done) for x, y in zip(a, b))
    elif isinstance(a, sp.MatrixBase):
        ok = a.shape == b.shape and _same_tree(list(a), list(b), done)
    elif isinstance(a, (sp.Add, sp.Mul, sp.Pow, sp.Tuple, sp.Function)) and a.args:
        ok = len(a.args) == len(b.args) and all(_same_tree(x, y, done) for x, y in zip(a.args, b.args))
    else:
        ok = sp.srepr(a) == sp.srepr(b)
    if ok and isinstance(a, Basic):    # sympy nodes live as long as a and b: their ids are safe
        done.add((id(a), id(b)))
    return ok


@pytest.mark.parametrize("seed", range(4))
def test_jacobian_diff_and_product_are_sympys_on_random_trees(seed, sympy_only):
    calls, jac, dif = sympy_only
    s = _tree(seed)
    kin = s.kinematics()
    vel = [F for j in range(1, s.n + 1) for F in s.velocities(j)]   # what the Kane bias differentiates
    before = dict(calls)
    for F in vel:
        got_jac, got_dt = fd.jacobian(F, s.q), fd.diff(F, t)
        assert calls == before, "fastdiff fell back to sympy's own routine"
        assert _same(got_jac, jac(F, sp.Matrix(s.q)))
        assert _same(got_dt, dif(F, t))
    for j in range(1, s.n + 1):                  # positions: what the energies differentiate
        assert _same(fd.diff(kin[j]["rC"], s.q[0]), dif(kin[j]["rC"], s.q[0]))
    for j in range(1, s.n + 1):   # the mass-matrix and Kane products
        Jv, Jw = kin[j]["Jv"], kin[j]["Jw"]
        I = s.bodies[j - 1].inertia
        for A, B in ((Jv.T, Jv), (Jw.T, I), (kin[j]["R"].T, s.gravity)):
            assert _same(fd.matmul(A, B), A * B)
    scalar = s.kinetic_energy()                  # the Lagrange route's scalar derivatives
    for x in s.q[:2]:
        assert _same(fd.diff(scalar, x), scalar.diff(x))


def test_deployable_velocity_jacobians_are_sympys(sympy_only):
    _, jac, _ = sympy_only
    s = deployable_example("deploy", gravity=(0.1, -0.2, -9.81))
    for j in (1, s.n):
        for F in s.velocities(j):
            assert _same(fd.jacobian(F, s.q), jac(F, sp.Matrix(s.q)))


def test_product_with_a_possible_infinity_is_sympys():
    """An operand that may hold an infinity takes sympy's product (0·oo = nan stays nan)."""
    a = sp.Symbol("a", real=True)
    A = sp.Matrix([[sp.sin(a), 0], [0, 1]])
    B = sp.Matrix([sp.oo, 1 / a])
    assert _same(fd.matmul(A, B), A * B)
    assert fd.matmul(sp.Matrix([[0, 1]]), sp.Matrix([sp.oo, 2])) == sp.Matrix([[sp.nan]])
