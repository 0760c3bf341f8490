#!/usr/bin/env python
"""Closed-chain forward dynamics (``opalg.closed``, docs/REFERENCE.md H5): speed and accuracy.

(a) A 14-dof system: ``random_closed_system(14, 1, seed=0, kinds=("weld",), where=("across",),
    joints="revolute")`` (a random tree, one weld between two branches).  10,000 random states
    near its closed configuration (q* + 0.1 N(0, 1), q̇, τ ~ N(0, 1), seed 0) as one batch:
    µs per state of ``ClosedSystem.forward`` (batched), of ``ClosedSystem.kkt`` (batched LU),
    of ``kkt`` looped over 200 single states, and of Pinocchio's ``constraintDynamics`` (the weld
    as a CONTACT_6D, μ = 0) looped over 2,000 states if Pinocchio is installed (target ≤ 3).
(b) Scaling: revolute chains n = 8, 16, 32, 64 with two ball closures (one to ground, one
    within the branch), 2,000 states: µs per state and time(64)/time(8) (target ≤ 10; 8 = linear).
(c) Accuracy on long chains (n = 16, 32, 64, one weld to ground, closed configuration): the
    relative error of θ̈ from ``forward`` and from the dense LU KKT solve, each against a
    reference from the same dense KKT data refined with residuals in extended precision
    (``np.longdouble``), with cond(KKT) — both routes at the same condition number.

(d) Two Pandas holding a box as one ClosedSystem (``opalg.closed.forest.two_pandas_closed``:
    14 dofs, one 6-row weld): 10,000 states near the closed configuration (q = assemble(q* +
    0.05 N(0, 1)) on the manifold, q̇ projected, τ ~ 5 N(0, 1)): µs per state of ``forward``
    (batched) against Pinocchio's ``constraintDynamics`` looped over the same states, the ratio
    in one run (target ≤ 3), the machine's load average, and the error of ``forward`` against
    the dense LU KKT solve.

Times are the best of 3 calls after one warm-up.  Run: ``python benchmarks/bench_closed.py``.
"""
from __future__ import annotations

import os
import sys
import warnings

from _timing import best_time  # first: it puts this checkout on sys.path

import numpy as np

import opalg
from opalg.closed import random_closed_system


def states(q, k, seed=0):
    rng = np.random.default_rng(seed)
    return q + 0.1 * rng.normal(size=(k, q.size)), rng.normal(size=(k, q.size)), rng.normal(size=(k, q.size))


def part_a(k=10_000):
    sys_, q = random_closed_system(14, 1, 0, kinds=("weld",), where=("across",), joints="revolute")
    qs, qd, tau = states(q, k)
    tf = best_time(lambda: sys_.forward(qs, qd, tau)) / k
    tk = best_time(lambda: sys_.kkt(qs, qd, tau)) / k
    tl = best_time(lambda: [sys_.kkt(qs[i], qd[i], tau[i]) for i in range(200)], 1) / 200
    a, _ = sys_.forward(qs[:100], qd[:100], tau[:100])
    b, _ = sys_.kkt(qs[:100], qd[:100], tau[:100])
    err = max(np.linalg.norm(a[i] - b[i]) / np.linalg.norm(b[i]) for i in range(100))
    print(f"(a) N = {sys_.model.ndof}, m = {sys_.m}, {k} states: forward {tf * 1e6:.1f} µs/state, "
          f"kkt batched {tk * 1e6:.1f} µs/state, kkt looped {tl * 1e6:.1f} µs/state; "
          f"max rel. diff forward vs kkt (100 states) {err:.1e}")
    tp = pinocchio_time(sys_, qs[:2000], qd[:2000], tau[:2000])
    if tp is not None:
        print(f"(a) Pinocchio constraintDynamics looped: {tp * 1e6:.1f} µs/state; "
              f"forward/Pinocchio = {tf / tp:.2f} (target ≤ 3){'' if tf / tp <= 3 else '  MISSED'}")


def pinocchio_time(sys_, qs, qd, tau):
    """Per-state time of Pinocchio's constraintDynamics (weld = CONTACT_6D) looped, or None."""
    try:
        import pinocchio as pin
        from opalg.closed.pinocchio_check import pinocchio_constraints
    except ImportError:
        print("(a) Pinocchio not installed: no comparison")
        return None
    pc = pinocchio_constraints(sys_)
    tw, cms, cds = pc.tw, pc.models, pc.datas
    pin.initConstraintDynamics(tw.model, tw.data, cms, cds)
    prox = pin.ProximalSettings(1e-12, 0.0, 1)
    Q = [tw.q(x) for x in qs]
    V = [tw.v(x) for x in qd]
    T = [tw.v(x) for x in tau]

    def run():
        for i in range(len(Q)):
            pin.constraintDynamics(tw.model, tw.data, Q[i], V[i], T[i], cms, cds, prox)
    return best_time(run) / len(Q)


def chain_system(n, kinds, where, seed):
    return random_closed_system(n, len(kinds), seed, kinds=kinds, where=where, joints="revolute",
                                topology="chain")


def part_b(k=2_000):
    times = {}
    for n in (8, 16, 32, 64):
        sys_, q = chain_system(n, ("ball", "ball"), ("ground", "branch"), seed=n)
        qs, qd, tau = states(q, k, seed=1)
        times[n] = best_time(lambda: sys_.forward(qs, qd, tau)) / k
        print(f"(b) n = {n:2d}, m = {sys_.m}: forward {times[n] * 1e6:.1f} µs/state")
    r = times[64] / times[8]
    print(f"(b) time(64)/time(8) = {r:.2f} (target ≤ 10){'' if r <= 10 else '  MISSED'}")


def refined_kkt(K, rhs, steps=3):
    """LU solve plus iterative refinement with residuals in extended precision."""
    x = np.linalg.solve(K, rhs)
    Kl, rl = K.astype(np.longdouble), rhs.astype(np.longdouble)
    for _ in range(steps):
        r = rl - Kl @ x.astype(np.longdouble)
        x = x + np.linalg.solve(K, r.astype(float))
    return x


def part_c():
    for n in (16, 32, 64):
        sys_, q = chain_system(n, ("weld",), ("ground",), seed=100 + n)
        rng = np.random.default_rng(2)
        qd = sys_.project(q, rng.normal(size=q.size))
        tau = rng.normal(size=q.size)
        M, C = opalg.crba(sys_.model, q), opalg.bias(sys_.model, q, qd)
        G, U = sys_.jacobian(q), sys_.drift(q, qd)
        N, m = q.size, sys_.m
        K = np.block([[M, G.T], [G, np.zeros((m, m))]])
        rhs = np.concatenate([tau - C, U])
        ref = refined_kkt(K, rhs)[:N]
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            a = sys_.forward(q, qd, tau).qdd
        b = np.linalg.solve(K, rhs)[:N]
        e = lambda x: np.linalg.norm(x - ref) / np.linalg.norm(ref)   # noqa: E731
        print(f"(c) chain n = {n:2d}: cond(KKT) = {np.linalg.cond(K):.1e}, cond(ℳ) = {np.linalg.cond(M):.1e}; "
              f"rel. error of θ̈: forward {e(a):.1e}, dense LU {e(b):.1e}")


def part_d(k=10_000):
    try:
        from opalg.closed.forest import two_pandas_closed
        f = two_pandas_closed()
    except opalg.errors.ModelError as exc:
        print(f"(d) skipped: {exc}")
        return
    sys_, rng = f.system, np.random.default_rng(5)
    base = [sys_.assemble(f.q + 0.05 * rng.normal(size=f.q.size)).q for _ in range(50)]
    qs = np.array([base[i % 50] for i in range(k)])
    qd = sys_.project(qs, rng.normal(size=qs.shape))
    tau = 5 * rng.normal(size=qs.shape)
    load = os.getloadavg()[0]
    tf = best_time(lambda: sys_.forward(qs, qd, tau)) / k
    tp = pinocchio_time(sys_, qs, qd, tau)
    a, _ = sys_.forward(qs[:50], qd[:50], tau[:50])
    b, _ = sys_.kkt(qs[:50], qd[:50], tau[:50])
    err = max(np.linalg.norm(a[i] - b[i]) / np.linalg.norm(b[i]) for i in range(50))
    print(f"(d) two Pandas + box, N = {sys_.model.ndof}, m = {sys_.m}, {k} states (load avg {load:.2f} on "
          f"{os.cpu_count()} cores): forward {tf * 1e6:.1f} µs/state; max rel. diff vs dense LU KKT {err:.1e}")
    if tp is not None:
        print(f"(d) Pinocchio constraintDynamics looped: {tp * 1e6:.1f} µs/state; "
              f"forward/Pinocchio = {tf / tp:.2f} (target ≤ 3){'' if tf / tp <= 3 else '  MISSED'}")


if __name__ == "__main__":
    if sys.argv[1:] == ["pandas"]:
        part_d()
        sys.exit()
    part_a()
    part_b()
    part_c()
    part_d()
