"""Exercises of notebook 18 (find the bug): three recursions, each with one fault hidden in it.

Model answers: docs/solutions/18_find_the_bug.md.  Each suspect is built from a FAULT TABLE
entry by one generic recursion (RNEA, CRBA or ABA, written here from T = Hφ(Mφ*(H*θ̈ + a) + b),
ℳ = HφMφ*H* and the Riccati recursion E1), with the faulty step switched on for the bodies the
entry's rule selects.  The notebook only calls :func:`suspect`, so the fault is not visible
there.  The expected answer, the first wrong body in the recursion's visiting order and the
faulty term, is found by running the recursion twice, with and without the fault, and comparing
what each body's step produces.
"""

from __future__ import annotations

__all__ = ["EXERCISES", "TERMS", "suspect", "exercise_model", "prefix_model", "small_trees", "shows",
           "smallest_failing_tree"]

import itertools
from dataclasses import dataclass
from typing import Callable

import numpy as np

from opalg.course.exercises import Exercise, _StudentError

#: The terms a fault may sit in; an answer names one by its name or its index here.
TERMS = ("a", "b", "gravity", "transport", "tau_bar", "D_inv")
_TERM_TEXT = {"a": "the velocity-dependent acceleration a(k) = V(k) ×ₘ V_J(k) + c_J(k)",
              "b": "the gyroscopic force b(k) = V(k) ×f M(k)V(k)",
              "gravity": "the base acceleration −g",
              "transport": "the transport φ(℘k, k) ⋯ φ*(℘k, k) of a child's inertia to its parent",
              "tau_bar": "the projection τ̄(k) = I − G(k)H(k) of P(k) before it is passed to ℘(k)",
              "D_inv": "the pivot inverse D(k)⁻¹"}

# A fault differs from the correct recursion by O(1) on these O(1) models; the correct routes
# agree to ~1e-13 (cond(ℳ) ≤ 1e4 times ε).  1e-8 relative separates the two by decades.
DIFF_TOL = 1e-8


@dataclass(frozen=True)
class _Fault:
    routine: str                                    # "rnea", "crba" or "aba"
    term: str                                       # an entry of TERMS
    rule: Callable                                  # rule(model, k) -> True where the step is faulty
    seed: int                                       # the seeded tree of the exercise
    n: int
    catalogue: str                                  # the tools/faults/catalogue.py fault it narrows


def _prismatic(model, k) -> bool:
    return tuple(model.joints[k].kinds) == ("P",)


def _later_sibling(model, k) -> bool:
    p = model.parents[k]
    return p >= 0 and [c for c in model.order if model.parents[c] == p].index(k) > 0


def _multi_axis(model, k) -> bool:
    return len(model.joints[k].kinds) > 1


# The FAULT TABLE: one hidden fault per exercise, a fault of the mutation catalogue narrowed to
# one kind of body (so that it hides on the examples one tries first).
FAULTS = {"18.1": _Fault("rnea", "a", _prismatic, seed=119, n=7, catalogue="coriolis_a_dropped"),
          "18.2": _Fault("crba", "transport", _later_sibling, seed=140, n=7,
                         catalogue="composite_inertia_phi_star"),
          "18.3": _Fault("aba", "tau_bar", _multi_axis, seed=114, n=7, catalogue="riccati_P_not_P_plus")}


def _kin(model, q, qd):
    from opalg.model.kinematics import body_kinematics

    return body_kinematics(model, np.asarray(q, float), None if qd is None else np.asarray(qd, float),
                           gravity=False)


def _a0(model, gravity: bool) -> np.ndarray:
    g = np.asarray(model.gravity, float)
    return np.concatenate([np.zeros(3), -g]) if gravity else np.zeros(6)


def _rnea(model, q, qd, qdd, gravity=True, fault=None):
    """T and the per-body log [(k, A(k)) outward, then (k, f(k)) inward]."""
    kin, qdd, log = _kin(model, q, qd), np.asarray(qdd, float), []
    A, f = [None] * model.n, [None] * model.n
    for k in model.order:
        p, s = model.parents[k], model.dof_slice[k]
        a = np.zeros(6) if fault is not None and fault(model, k) else kin.a[k]
        A[k] = kin.Xup[k] @ (_a0(model, gravity) if p < 0 else A[p]) + kin.S[k] @ qdd[s] + a
        f[k] = model.I_spatial[k] @ A[k] + kin.b[k]
        log.append((k, A[k]))
    T = np.zeros(model.ndof)
    for k in reversed(model.order):
        p = model.parents[k]
        T[model.dof_slice[k]] = kin.S[k].T @ f[k]
        log.append((k, f[k].copy()))
        if p >= 0:
            f[p] = f[p] + kin.Xup[k].T @ f[k]
    return T, log


def _crba(model, q, fault=None):
    """ℳ and the log [(k, contribution of k's composite inertia to ℘(k))]."""
    kin, log = _kin(model, q, None), []
    Ic = [np.array(Mk, float) for Mk in model.I_spatial]
    for k in reversed(model.order):
        p = model.parents[k]
        if p >= 0:
            add = Ic[k] if fault is not None and fault(model, k) else kin.Xup[k].T @ Ic[k] @ kin.Xup[k]
            Ic[p] = Ic[p] + add
            log.append((k, add))
    Mm = np.zeros((model.ndof, model.ndof))
    for k in model.order:
        F, j = Ic[k] @ kin.S[k], k
        Mm[model.dof_slice[k], model.dof_slice[k]] = kin.S[k].T @ F
        while model.parents[j] >= 0:
            F, j = kin.Xup[j].T @ F, model.parents[j]
            Mm[model.dof_slice[j], model.dof_slice[k]] = kin.S[j].T @ F
            Mm[model.dof_slice[k], model.dof_slice[j]] = (kin.S[j].T @ F).T
    return Mm, log


def _aba(model, q, qd, tau, gravity=True, fault=None):
    """θ̈ and the log [(k, P⁺(k)) inward, then (k, α(k)) outward]."""
    kin, tau, log = _kin(model, q, qd), np.asarray(tau, float), []
    IA = [np.array(Mk, float) for Mk in model.I_spatial]
    pA = [np.array(b, float) for b in kin.b]
    U, Dinv, u = [None] * model.n, [None] * model.n, [None] * model.n
    for k in reversed(model.order):
        p, S = model.parents[k], kin.S[k]
        U[k] = IA[k] @ S
        Dinv[k] = np.linalg.inv(S.T @ U[k])
        u[k] = tau[model.dof_slice[k]] - S.T @ pA[k]
        if p >= 0:
            G = U[k] @ Dinv[k]
            Pplus = IA[k] if fault is not None and fault(model, k) else IA[k] - G @ U[k].T
            log.append((k, Pplus))
            IA[p] = IA[p] + kin.Xup[k].T @ Pplus @ kin.Xup[k]
            pA[p] = pA[p] + kin.Xup[k].T @ (pA[k] + Pplus @ kin.a[k] + G @ u[k])
    acc, qdd = [None] * model.n, np.zeros(model.ndof)
    for k in model.order:
        p = model.parents[k]
        a = kin.Xup[k] @ (_a0(model, gravity) if p < 0 else acc[p]) + kin.a[k]
        qdd[model.dof_slice[k]] = Dinv[k] @ (u[k] - U[k].T @ a)
        acc[k] = a + kin.S[k] @ qdd[model.dof_slice[k]]
        log.append((k, acc[k]))
    return qdd, log


_ROUTINES = {"rnea": _rnea, "crba": _crba, "aba": _aba}
_SIGNATURES = {"rnea": "suspect(model, q, qd, qdd, gravity=True) -> T",
               "crba": "suspect(model, q) -> ℳ",
               "aba": "suspect(model, q, qd, tau, gravity=True) -> θ̈"}


def _fault(key: str) -> _Fault:
    if key not in FAULTS:
        raise KeyError(f"no suspect {key!r}; notebook 18 has {sorted(FAULTS)}")
    return FAULTS[key]


def suspect(key: str) -> Callable:
    """The recursion of exercise ``key`` ("18.1"–"18.3"), with its hidden fault.

    18.1 is an inverse dynamics ``suspect(model, q, qd, qdd, gravity=True)`` (T, like
    ``opalg.rnea``), 18.2 a mass matrix ``suspect(model, q)`` (ℳ, like ``opalg.crba``), 18.3 a
    forward dynamics ``suspect(model, q, qd, tau, gravity=True)`` (θ̈, like ``opalg.aba``).

    Examples
    --------
    >>> import numpy as np, opalg
    >>> m = opalg.random_model(1, "chain", seed=0)
    >>> f = suspect("18.2")
    >>> bool(np.allclose(f(m, np.zeros(m.ndof)), opalg.crba(m, np.zeros(m.ndof))))
    True
    """
    fault = _fault(key)
    routine = _ROUTINES[fault.routine]

    def run(*args, **kw):
        return routine(*args, **kw, fault=fault.rule)[0]

    run.__name__, run.__doc__ = f"suspect_{key.replace('.', '_')}", _SIGNATURES[fault.routine]
    return run


def _state(model, routine: str, seed: int) -> tuple:
    rng = np.random.default_rng(seed)
    q = rng.uniform(-1.0, 1.0, model.ndof)
    if routine == "crba":
        return (q,)
    return (q, rng.uniform(-1.0, 1.0, model.ndof), rng.uniform(-1.0, 1.0, model.ndof))


def exercise_model(key: str) -> tuple:
    """The seeded tree of exercise ``key`` and the state to run its suspect at.

    Returns ``(model, args)``: ``suspect(key)(model, *args)`` is the suspect's answer there.

    Examples
    --------
    >>> m, args = exercise_model("18.2")
    >>> m.n, len(args)
    (7, 1)
    """
    import opalg

    fault = _fault(key)
    m = opalg.random_model(fault.n, "tree", seed=fault.seed)
    return m, _state(m, fault.routine, fault.seed + 1)


def _differs(x, y) -> bool:
    x, y = np.asarray(x, float), np.asarray(y, float)
    return float(np.abs(x - y).max()) > DIFF_TOL * max(float(np.abs(y).max()), 1.0)


def _first_wrong(key: str, model, args) -> int | None:
    """The first body, in the recursion's visiting order, whose step departs from the correct one."""
    fault = _fault(key)
    routine = _ROUTINES[fault.routine]
    good, bad = routine(model, *args)[1], routine(model, *args, fault=fault.rule)[1]
    for (k, x), (_, y) in zip(bad, good):
        if _differs(x, y):
            return k
    return None


def prefix_model(model, j: int, args=()) -> tuple:
    """The tree made of the first ``j`` bodies of ``model.order`` (a parent is visited before its
    children, so a prefix is a tree), with the same joints, placements and inertias, relabelled
    0..j−1 in that order, and the state ``args`` (arrays over the dofs of ``model``) cut to it.

    Returns ``(sub, sub_args, bodies)``: ``bodies[i]`` is the label in ``model`` of body ``i``
    of ``sub``.

    Examples
    --------
    >>> import numpy as np, opalg
    >>> m = opalg.random_model(5, "tree", seed=3)
    >>> sub, (q,), bodies = prefix_model(m, 3, (np.zeros(m.ndof),))
    >>> sub.n, q.shape == (sub.ndof,), len(bodies)
    (3, True, 3)
    """
    import opalg
    from opalg.errors import ModelError

    if isinstance(j, bool) or not isinstance(j, (int, np.integer)) or not 1 <= j <= model.n:
        raise ModelError(f"prefix_model: j must be an integer in 1..{model.n}, got {j!r}")
    bodies = list(model.order[:j])
    where = {k: i for i, k in enumerate(bodies)}
    sub = opalg.Model([-1 if model.parents[k] < 0 else where[model.parents[k]] for k in bodies],
                      [model.joints[k] for k in bodies], [model.placements[k] for k in bodies],
                      [model.inertias[k] for k in bodies], gravity=model.gravity)
    dofs = np.concatenate([np.arange(model.ndof)[model.dof_slice[k]] for k in bodies])
    return sub, tuple(np.asarray(x, float)[dofs] for x in args), bodies


def _reference(routine: str) -> Callable:
    import opalg

    return {"rnea": opalg.rnea, "crba": opalg.crba, "aba": opalg.aba}[routine]


def _small_joints():
    import opalg

    return [opalg.Joint("R", [0.0, 0.0, 1.0]), opalg.Joint("P", [1.0, 0.0, 0.0]),
            opalg.Joint(["R", "R"], [[0.0, 0.0, 1.0], [0.0, 1.0, 0.0]])]


def small_trees(n: int):
    """Every tree of ``n`` bodies labelled base to tip (℘(k) < k) with joints from R, P and a
    2-axis RR joint, in a fixed order, with seeded placements and inertias.

    Examples
    --------
    >>> [sum(1 for _ in small_trees(n)) for n in (1, 2, 3)]
    [3, 9, 54]
    """
    import opalg
    from opalg.model.builders import random_inertia, random_rotation

    joints = _small_joints()
    for parents in itertools.product(*[range(k) for k in range(1, n)]):
        for kinds in itertools.product(range(len(joints)), repeat=n):
            rs = np.random.default_rng([n, *parents, *kinds])
            yield opalg.Model([-1, *parents], [joints[i] for i in kinds],
                              [(random_rotation(rs), rs.uniform(-0.5, 0.5, 3)) for _ in range(n)],
                              [random_inertia(rs) for _ in range(n)])


def shows(key: str, model, args) -> bool:
    """True when the suspect of ``key`` differs from opalg's routine on ``model`` at ``args``.

    Examples
    --------
    >>> m, args = exercise_model("18.1")
    >>> shows("18.1", m, args)
    True
    """
    fault = _fault(key)
    return _differs(suspect(key)(model, *args), _reference(fault.routine)(model, *args))


def smallest_failing_tree(key: str, max_bodies: int = 4) -> tuple:
    """The smallest tree on which the fault of ``key`` shows: a deterministic search over
    :func:`small_trees` with n = 1, 2, … bodies, fewest degrees of freedom first, each at a
    seeded state.  Returns ``(model, args)``.

    Examples
    --------
    >>> m, args = smallest_failing_tree("18.1")
    >>> m.n, [tuple(j.kinds) for j in m.joints]
    (2, [('R',), ('P',)])
    """
    fault = _fault(key)
    for n in range(1, max_bodies + 1):
        for m in sorted(small_trees(n), key=lambda m: m.ndof):
            args = _state(m, fault.routine, 18)
            if shows(key, m, args):
                return m, args
    raise ValueError(f"the fault of {key} shows on no tree of up to {max_bodies} bodies")


def _grader(key: str):
    fault = _fault(key)

    def grader(answer):
        if not isinstance(answer, (tuple, list)) or len(answer) != 2:
            raise _StudentError(f"expected a pair (body, term), got {answer!r}")
        body, term = answer
        if isinstance(term, (int, np.integer)) and not isinstance(term, bool) and 0 <= term < len(TERMS):
            term = TERMS[int(term)]
        if term not in TERMS:
            raise _StudentError(f"the term must be one of {TERMS} or its index, got {term!r}")
        if isinstance(body, bool) or not isinstance(body, (int, np.integer)):
            raise _StudentError(f"the body must be an integer label, got {body!r}")
        model, args = exercise_model(key)
        want = _first_wrong(key, model, args)
        ok = int(body) == want and term == fault.term
        return ok, (f"the first wrong body is {want} (the first body, in the order the {fault.routine.upper()} "
                    f"visits them, whose step departs from the correct one); the term is {fault.term!r}: "
                    f"{_TERM_TEXT[fault.term]}")

    return grader


EXERCISES = {key: Exercise(key, "value", "a pair (body, term): a body label and a term of TERMS (name or index)",
                           _grader(key)) for key in FAULTS}
