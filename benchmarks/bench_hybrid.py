#!/usr/bin/env python
"""Hybrid dynamics (``opalg.hybrid``, docs/REFERENCE.md G2) against the ABA, in one run.

Models: ``random_model(n, "chain", seed=n, joints=...)`` and the same as a tree: (a)
``joints="mixed"`` (multi-axis and prismatic joints too) at n = 7 and 64, (b) revolute joints
(N = n, so that the size ratio is the dof ratio) at n = 8 and 64; per dof a passive mask drawn with probability 1/2 (seed 0).  Inputs: 10,000 random
states (q, q̇, τ, q̈ ~ N(0, 1), seed 2; with seed 1 state 7,158 puts the 3-axis joint of body 1
of the n = 7 tree within σ_min(S) = 1.6e-9 of its singularity, which aba rightly refuses, E12)
passed as one batch (the functions chunk it in
1,024-state blocks).  Times are the best of 3 calls after one warm-up.

Printed: (a) per model, µs per state of ``aba`` and of ``hybrid``, and hybrid/aba; (b) the
hybrid's time(n = 64)/time(n = 8) (8 would be linear in n).  The issue's targets: hybrid/aba
≤ 1.5 at n = 7 and 64, and time(64)/time(8) ≤ 10; a target missed is marked ``MISSED``.
Also the accuracy of both against the dense solve at the first 100 states (relative error of
q̈ against ``np.linalg.solve(crba, τ − bias)`` for aba and of the passive q̈ against the
partitioned dense solve for hybrid), so that speed is never bought with accuracy.

Run: ``python benchmarks/bench_hybrid.py [--states 10000]`` (about a minute).
"""
from __future__ import annotations

import argparse

from _timing import best_time  # first: it puts this checkout on sys.path

import numpy as np

import opalg


def dense_errors(model, q, qd, tau, qdd, passive, k: int = 100):
    """Worst relative error of aba and hybrid against the dense solves over the first k states."""
    e_aba = e_hyb = 0.0
    qdd_aba = opalg.aba(model, q[:k], qd[:k], tau[:k])
    qdd_h, _ = opalg.hybrid(model, q[:k], qd[:k], tau[:k], qdd[:k], passive)
    p, a = passive, ~passive
    for i in range(k):
        M, C = opalg.crba(model, q[i]), opalg.bias(model, q[i], qd[i])
        ref = np.linalg.solve(M, tau[i] - C)
        e_aba = max(e_aba, np.linalg.norm(qdd_aba[i] - ref) / np.linalg.norm(ref))
        rhs = tau[i, p] - C[p] - M[np.ix_(p, a)] @ qdd[i, a]
        ref_p = np.linalg.solve(M[np.ix_(p, p)], rhs)
        e_hyb = max(e_hyb, np.linalg.norm(qdd_h[i, p] - ref_p) / np.linalg.norm(ref_p))
    return e_aba, e_hyb


def row(topo: str, n: int, joints: str, S: int):
    model = opalg.random_model(n, topo, seed=n, joints=joints)
    N = model.ndof
    passive = np.random.default_rng(0).random(N) < 0.5
    q, qd, tau, qdd = np.random.default_rng(2).normal(size=(4, S, N))
    t_aba = best_time(lambda: opalg.aba(model, q, qd, tau))
    t_hyb = best_time(lambda: opalg.hybrid(model, q, qd, tau, qdd, passive))
    cond = max(np.linalg.cond(opalg.crba(model, q[i])) for i in range(100))
    return model, passive, t_aba, t_hyb, cond, dense_errors(model, q, qd, tau, qdd, passive)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--states", type=int, default=10_000)
    args = ap.parse_args()
    S = args.states
    missed = []
    print(f"(a) hybrid vs aba, joints='mixed', {S} states per call (best of 3)\n")
    print(f"{'model':>12} {'N':>4} {'N_p':>4} {'aba µs/state':>13} {'hybrid µs/state':>16} {'hybrid/aba':>11}"
          f" {'max cond ℳ':>11} {'err aba':>9} {'err hybrid':>11}")
    for topo in ("chain", "tree"):
        for n in (7, 64):
            model, passive, t_aba, t_hyb, cond, (e_aba, e_hyb) = row(topo, n, "mixed", S)
            ratio = t_hyb / t_aba
            flag = ""
            if ratio > 1.5:
                flag = "  MISSED (≤ 1.5)"
                missed.append(f"{topo} n={n}: hybrid/aba = {ratio:.2f}")
            print(f"{topo + ' n=' + str(n):>12} {model.ndof:>4} {int(passive.sum()):>4} {1e6 * t_aba / S:>13.1f} "
                  f"{1e6 * t_hyb / S:>16.1f} {ratio:>11.2f} {cond:>11.1e} {e_aba:>9.1e} {e_hyb:>11.1e}{flag}")
    print("\n(err: relative difference from the dense LU solve; both routes carry ~cond·ε.)")
    print(f"\n(b) size scaling of hybrid, joints='revolute' (N = n), {S} states\n")
    for topo in ("chain", "tree"):
        t = {n: row(topo, n, "revolute", S)[3] for n in (8, 64)}
        r = t[64] / t[8]
        flag = "" if r <= 10 else "  MISSED (≤ 10)"
        if flag:
            missed.append(f"{topo}: time(64)/time(8) = {r:.2f}")
        print(f"{topo:>6}: {1e6 * t[8] / S:.1f} → {1e6 * t[64] / S:.1f} µs/state, time(n=64)/time(n=8) = {r:.2f}"
              f"  (8 = linear){flag}")
    print("\nall targets met" if not missed else "\ntargets missed: " + "; ".join(missed))


if __name__ == "__main__":
    main()
