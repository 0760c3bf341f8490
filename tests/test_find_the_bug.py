"""Notebook 18's suspects: each really is faulty, the fault is exactly the named term, and the
smallest failing tree is the smallest.

For every suspect the test states, from the parent array and the joint kinds alone, where its
fault must show: a prismatic joint below a moving body (18.1, the velocity term a(k) dropped),
a body with two or more children (18.2, the composite-inertia transport skipped at the second
child), a multi-axis joint below the root (18.3, τ̄ = I − GH skipped).  Where that structure is
present the suspect must differ from opalg's routine by O(1); where it is absent, or the term
vanishes (θ̇ = 0 for a(k)), it must agree to round-off.  That is what makes the hidden answer
"this term" and not another.
"""

from __future__ import annotations

import numpy as np
import pytest

import opalg
from opalg.course.exercises import grade
from opalg.course.exercises import nb18 as find_the_bug
from opalg.errors import ModelError

from helpers import Tol, make_model, random_state, rel_err

KINDS = ("chain", "tree", "relabeled", "forest", "jain-tree")
SEEDS = range(5)
#: Agreement: the suspects and opalg run the same products in another order; ~n 6×6 products of
#: O(1) entries on 7 bodies, round-off ~1e-14 (measured worst 2e-14); 1e-10 leaves 4 decades.
AGREE = Tol(1e-10, "round-off of ~n 6x6 products, n = 7 (worst seen 2e-14)")
#: A fault changes a term of the result: relative differences seen ≥ 9e-4 (a τ̄ fault seen
#: through a prismatic root), eight decades above the agreement's round-off.
DIFFER = Tol(1e-6, "a dropped term; smallest difference seen 9e-4, round-off ~1e-14")


def _ndof(j):
    return len(j.kinds)


def _rotates(m, k) -> bool:
    """Body k (or one of its ancestors) has a rotational axis: its angular velocity is generic."""
    while k >= 0:
        if any(kind in ("R", "H") for kind in m.joints[k].kinds):
            return True
        k = m.parents[k]
    return False


def _has_structure(key, m) -> bool:
    """Where the fault of ``key`` must show, read from the parents and the joint kinds.

    18.1: a prismatic joint under a rotating body (V ×ₘ V_J ≠ 0 needs the parent's ω ≠ 0);
    18.2: a branch point that rotates (a purely translating chain of ancestors sees only the
    mass of a composite inertia, which the transport does not change); 18.3: a multi-axis
    joint below a root.
    """
    kids = [sum(1 for p in m.parents if p == k) for k in range(m.n)]
    if key == "18.1":
        return any(tuple(m.joints[k].kinds) == ("P",) and _rotates(m, m.parents[k]) for k in range(m.n))
    if key == "18.2":
        return any(kids[k] >= 2 and _rotates(m, k) for k in range(m.n))
    return any(_ndof(m.joints[k]) > 1 and m.parents[k] >= 0 for k in range(m.n))


def _run(key, m, seed, still=False):
    q, qd, qdd, tau = random_state(m, seed)
    if still:
        qd = np.zeros(m.ndof)
    f = find_the_bug.suspect(key)
    if key == "18.1":
        return f(m, q, qd, qdd), opalg.rnea(m, q, qd, qdd), 1.0
    if key == "18.2":
        return f(m, q), opalg.crba(m, q), 1.0
    # forward dynamics: the solve's condition number scales the agreement tolerance
    return f(m, q, qd, tau), opalg.aba(m, q, qd, tau), np.linalg.cond(opalg.crba(m, q))


@pytest.mark.parametrize("key", ["18.1", "18.2", "18.3"])
@pytest.mark.parametrize("kind", KINDS)
def test_the_fault_shows_exactly_where_its_term_lives(key, kind):
    seen = {True: 0, False: 0}
    for seed in SEEDS:
        m = make_model(kind, 7, seed)
        got, want, cond = _run(key, m, 100 + seed)
        err = rel_err(got, want)
        if _has_structure(key, m):
            seen[True] += 1
            assert err > DIFFER, f"{key} on {kind} seed {seed}: the fault does not show ({err:.1e})"
        else:
            seen[False] += 1
            assert err < AGREE * max(cond, 1.0), f"{key} on {kind} seed {seed}: differs without the structure ({err:.1e})"
    if key == "18.2" and kind == "chain":
        assert seen[False] == len(SEEDS)          # no branch point on a chain: the suspect is right
    else:
        assert seen[True] >= 1, f"{key} on {kind}: no seed has the structure (the test would be hollow)"


@pytest.mark.parametrize("kind", KINDS)
def test_rnea_suspect_agrees_at_rest(kind):
    """θ̇ = 0 makes a(k) vanish (and b(k)): suspect 18.1 must agree, gravity included."""
    for seed in SEEDS:
        m = make_model(kind, 7, seed)
        got, want, _ = _run("18.1", m, 200 + seed, still=True)
        assert rel_err(got, want) < AGREE


@pytest.mark.parametrize("key", ["18.1", "18.3"])
def test_single_axis_revolute_models_hide_the_fault(key):
    """All-revolute models: no prismatic joint (18.1), no multi-axis joint (18.3)."""
    for kind in ("chain", "tree", "relabeled"):
        m = make_model(kind, 7, 3, joints="revolute")
        got, want, cond = _run(key, m, 300)
        assert rel_err(got, want) < AGREE * max(cond, 1.0)


@pytest.mark.parametrize("key", ["18.1", "18.2", "18.3"])
def test_smallest_failing_tree_is_smallest(key):
    m, args = find_the_bug.smallest_failing_tree(key)
    assert find_the_bug.shows(key, m, args) and _has_structure(key, m)
    smaller = [t for n in range(1, m.n) for t in find_the_bug.small_trees(n)]
    smaller += [t for t in find_the_bug.small_trees(m.n) if t.ndof < m.ndof]
    for t in smaller:
        for seed in range(3):
            got, want, cond = _run(key, t, 400 + seed)
            assert rel_err(got, want) < AGREE * max(cond, 1.0), (key, t.parents, [j.kinds for j in t.joints])
    expected_bodies = {"18.1": 2, "18.2": 3, "18.3": 2}[key]     # R–P, root with two children, R–RR
    assert m.n == expected_bodies


def test_wrong_answer_reveals_body_and_term():
    model, args = find_the_bug.exercise_model("18.1")
    fb = grade("18.1", (0, "b"))
    assert fb.correct is False and "first wrong body is" in fb.message and "'a'" in fb.message
    # the body named is the one a prefix search against opalg.rnea finds
    for j in range(1, model.n + 1):
        sub, sub_args, bodies = find_the_bug.prefix_model(model, j, args)
        if rel_err(find_the_bug.suspect("18.1")(sub, *sub_args), opalg.rnea(sub, *sub_args)) > DIFFER:
            break
    assert f"first wrong body is {bodies[-1]} " in fb.message
    assert grade("18.1", (bodies[-1], "b")).correct is False      # right body, wrong term
    assert grade("18.1", (bodies[-1], "a")).correct is True
    assert grade("18.1", (bodies[-1], find_the_bug.TERMS.index("a"))).correct is True


def test_bad_input_is_clear():
    m = opalg.random_model(3, "tree", seed=0)
    with pytest.raises(ModelError, match="j must be an integer in 1..3"):
        find_the_bug.prefix_model(m, 0)
    with pytest.raises(KeyError, match="no suspect '18.9'"):
        find_the_bug.suspect("18.9")
    assert "expected a pair" in grade("18.2", 3).message
    assert "term must be one of" in grade("18.2", (1, "coriolis")).message


def test_each_fault_narrows_a_catalogue_fault():
    """The FAULT TABLE cites faults that exist in the mutation catalogue (read as text: tools/
    is not importable from the package)."""
    import pathlib

    text = (pathlib.Path(__file__).resolve().parent.parent / "tools" / "faults" / "catalogue.py").read_text(encoding="utf-8")
    for key, fault in find_the_bug.FAULTS.items():
        assert f'Fault("{fault.catalogue}"' in text, f"{key}: no catalogue fault {fault.catalogue!r}"
