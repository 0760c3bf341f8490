"""Exercises of notebook 06 (forward dynamics read off ℳ⁻¹).  Model answers: docs/solutions/06_forward_dynamics.md.

Expected values are computed here by a route other than the one the exercise asks for: the
multiply-add counts of the notebook's §5 formulas (the notebook measures their CRBA and bias
terms with :mod:`opalg.opcount`; the ABA's and the Cholesky's are counted by hand), the dense operator form of the E9 bracket, the dense inverse, and ``opalg.aba``.
"""

from __future__ import annotations

__all__ = ["EXERCISES", "aba_count", "dense_count", "aba_inputs"]

import numpy as np

from opalg.course.exercises import Exercise, choice, close_arrays, function, integer, number
from opalg.course.exercises.nb05 import implement_cases


def aba_count(parents) -> int:
    """Multiply-adds of the ABA with 1-dof joints (notebook 06 §5, E9): 764 per body, 510 fewer per root.

    Examples
    --------
    >>> aba_count([-1, 0, 1])
    1782
    """
    n, r = len(parents), sum(p < 0 for p in parents)
    return 764 * n - 510 * r


def dense_count(parents) -> int:
    """Multiply-adds of bias + CRBA + Cholesky + two triangular solves, 1-dof joints (notebook 06 §5).

    bias 228n − 72r; CRBA 432(n − r) + 42n + 42 Σ depth(k) (D1–D4); Cholesky (n³ − n)/6 + n(n − 1)/2 + n;
    the two triangular solves n(n + 1).

    Examples
    --------
    >>> dense_count([-1, 0, 1])
    1750
    """
    n, r = len(parents), sum(p < 0 for p in parents)
    depth_sum = 0
    for k in range(n):
        j = k
        while parents[j] >= 0:
            depth_sum, j = depth_sum + 1, parents[j]
    bias, crba = 228 * n - 72 * r, 432 * (n - r) + 42 * n + 42 * depth_sum
    return bias + crba + (n**3 - n) // 6 + n * (n - 1) // 2 + n + n * (n + 1)


def _star_crossover() -> int:
    """Smallest n from which the ABA is cheaper than the dense route for every larger star too.

    Beyond n = 400 the dense route's n³/6 dominates every linear term, so the scan is complete."""
    star = lambda n: [-1] + [0] * (n - 1)  # noqa: E731
    cheaper = [aba_count(star(n)) < dense_count(star(n)) for n in range(1, 401)]
    return next(n for n in range(1, 401) if all(cheaper[n - 1:]))


def _nu_setup():
    """The 1-dof tree and state of Exercise 06.2 (the answer cell builds the same)."""
    import opalg

    m = opalg.random_model(8, "tree", seed=3, joints="single")
    q, qd, T = np.random.default_rng(2).normal(size=(3, m.ndof))
    return m, q, qd, T


def _nu_tip() -> float:
    """ν(7) from the dense inward pass: ν = D⁻¹(T − Hψ(KT + Pa + b)), E9's bracket (the student
    uses the outward identity ν = (I + HφK)*θ̈ + K*φ*a instead)."""
    import opalg

    m, q, qd, T = _nu_setup()
    ops = opalg.operators(m, q, qd)
    Dinv, H, psi, K, P = (getattr(ops, k).dense() for k in ("Dinv", "H", "psi", "K", "P"))
    nu = Dinv @ (T - H @ psi @ (K @ T + P @ ops.a + ops.b))
    return float(nu[m.dof_slice[7]][0])


def _roots_choice() -> str:
    """Where ℳ⁻¹(k,k) = D⁻¹(k) in the forest of Exercise 06.3, from the dense inverse."""
    import opalg

    m = opalg.random_model(8, "tree", seed=5, n_roots=2)
    q = np.random.default_rng(3).normal(size=m.ndof)
    M = opalg.crba(m, q)
    Minv, Dinv = np.linalg.inv(M), opalg.operators(m, q).Dinv.dense()
    # Equal to the inverse's round-off: 100·cond(ℳ)·ε·max|ℳ⁻¹|, cond(ℳ) computed (under three BLAS
    # kernels the roots' blocks differ by <= 0.0021 cond(ℳ)·ε·max|ℳ⁻¹|, the others by >= 1e11 of it).
    tol = 100 * np.linalg.cond(M) * np.finfo(float).eps * np.abs(Minv).max()
    same = [k for k in range(m.n) for s in [m.dof_slice[k]] if np.abs(Minv[s, s] - Dinv[s, s]).max() <= tol]
    roots = [k for k in range(m.n) if m.parents[k] < 0]
    tips = [k for k in range(m.n) if not m.children[k]]
    return {tuple(roots): "a", tuple(tips): "b", tuple(range(m.n)): "c", (): "d"}.get(tuple(same), "?")


def aba_inputs(model, q, qd, T) -> tuple[list, list, list, list, list, list, list]:
    """The raw inputs of Exercise 06.4 (the ABA, E9): ``(parents, Xup, H, M, a, b, T)``.

    As :func:`opalg.course.exercises.nb05.riccati_inputs`, plus ``a[k]`` (6,), the Coriolis acceleration
    with the base acceleration −g folded in at the roots, ``b[k]`` (6,), the gyroscopic force
    (both from ``body_kinematics(model, q, qd)``), and ``T[k]`` (n_k,), the hinge forces of body k.

    Examples
    --------
    >>> import numpy as np, opalg
    >>> m = opalg.random_model(3, "chain", seed=1)
    >>> args = aba_inputs(m, *np.zeros((3, m.ndof)))
    >>> len(args), args[4][0].shape, [t.shape for t in args[6]] == [(nk,) for nk in m.joint_sizes]
    (7, (6,), True)
    """
    from opalg.model.kinematics import body_kinematics

    kin = body_kinematics(model, q, qd)
    return (list(model.parents), [np.array(X) for X in kin.Xup], [np.array(S.T) for S in kin.S],
            [np.array(Mk) for Mk in model.I_spatial], [np.array(x) for x in kin.a],
            [np.array(x) for x in kin.b], [np.array(T[s]) for s in model.dof_slice])


def _aba_cases():
    """θ̈ = opalg.aba(model, q, qd, T), with gravity, on chains, trees, a relabelled tree, a forest
    and the spherical-joint tree."""
    import opalg

    out = []
    rng = np.random.default_rng(660)
    for what, m, q in implement_cases(560):
        qd, T = rng.normal(size=(2, m.ndof))
        out.append((what, aba_inputs(m, q, qd, T), opalg.aba(m, q, qd, T)))
    return out


EXERCISES = {
    "06.1": Exercise("06.1", "value", "an integer (a number of bodies)",
                     integer(_star_crossover, "compare aba_count(star(n)) and dense_count(star(n)) "
                                              "for n = 1, 2, …, and check that it stays cheaper")),
    # Relative tolerance 1e-9: ν(7) is O(1..100); the dense bracket and the student's
    # (I + HφK)*θ̈ + K*φ*a agree to ~1e-13 relative; a sign slip changes it at O(1).
    "06.2": Exercise("06.2", "value", "a number (ν at the dof of body 7)",
                     number(_nu_tip, "ν = (I + HφK)*θ̈ + K*φ*a: check the sign of the K*φ*a term "
                                     "and take the dof of body 7", rtol=1e-9)),
    "06.3": Exercise("06.3", "value", 'a letter among "a", "b", "c", "d"',
                     lambda answer: choice(_roots_choice(), "abcd",
                                           "K(℘k, k) exists only when body k has a parent")(answer)),
    # Relative tolerance 1e-9 on θ̈: the student's passes and opalg's agree to the round-off of
    # O(n) 6x6 products and small solves (observed ~1e-13 relative); D(k) of random models has
    # condition numbers up to ~1e3, so 1e-9 leaves margin without accepting a wrong term.
    "06.4": Exercise("06.4", "function",
                     "a function aba_multi(parents, Xup, H, M, a, b, T) returning θ̈ as one array of "
                     "length N (the bodies' blocks in label order)",
                     function(_aba_cases, close_arrays(1e-9)), name="aba_multi"),
}
