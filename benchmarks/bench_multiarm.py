#!/usr/bin/env python
"""Two Franka Pandas holding a box (``opalg.closed.MultiArm``, docs/REFERENCE.md H1, H7): time per state.

System: ``opalg.closed.examples_arms.two_pandas()`` (7 + 7 dof, the closed configuration of its
IK).  States: that configuration with S random consistent velocities (object twist ~ N(0, 0.3²),
plus a random self-motion of each arm) and torques ~ N(0, 5²) (seed 0).

Printed: ms per state of ``forward`` (H1) and ``augmented_object`` (H7) called one state at a
time (best of 3 loops over 50 states), of ``forward`` on the S states as one batch, and of the
dense oracle ``kkt`` one state at a time; and the worst relative error of forward's θ̈ and f
against kkt over the first 50 states, so that speed is never bought with accuracy.

Run: ``python benchmarks/bench_multiarm.py [--states 1000]`` (a few seconds).
"""
from __future__ import annotations

import argparse

from _timing import best_time  # first: it puts this checkout on sys.path

import numpy as np

from opalg.closed.examples_arms import consistent_velocities, two_pandas


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--states", type=int, default=1000)
    S = ap.parse_args().states
    ex = two_pandas()
    sys_, qs = ex.system, ex.qs
    rng = np.random.default_rng(0)
    qds = [consistent_velocities(sys_, qs, 0.3 * rng.normal(size=6), null=rng.normal(size=(2, 7)))
           for _ in range(S)]
    taus = [[5 * rng.normal(size=7) for _ in range(2)] for _ in range(S)]
    k = min(S, 50)

    def loop(method):
        return lambda: [method(qs, qds[i], taus[i]) for i in range(k)]

    t_h1 = best_time(loop(sys_.forward)) / k
    t_aug = best_time(loop(sys_.augmented_object)) / k
    t_kkt = best_time(loop(sys_.kkt)) / k
    qb = [np.broadcast_to(q, (S, 7)) for q in qs]
    qdb = [np.stack([qds[i][r] for i in range(S)]) for r in range(2)]
    tb = [np.stack([taus[i][r] for i in range(S)]) for r in range(2)]
    t_batch = best_time(lambda: sys_.forward(qb, qdb, tb)) / S
    err = 0.0
    for i in range(k):
        a, b = sys_.forward(qs, qds[i], taus[i]), sys_.kkt(qs, qds[i], taus[i])
        for x, y in ((a.qdd, b.qdd), (a.f, b.f)):
            x, y = np.concatenate(x), np.concatenate(y)
            err = max(err, np.linalg.norm(x - y) / np.linalg.norm(y))
    print(f"two Pandas holding a box (7 + 7 dof), {S} states")
    print(f"  forward (H1), one state per call      {1e3 * t_h1:8.3f} ms/state")
    print(f"  augmented_object (H7), one per call   {1e3 * t_aug:8.3f} ms/state")
    print(f"  forward (H1), {S} states in one batch  {1e3 * t_batch:8.3f} ms/state")
    print(f"  kkt (dense oracle), one per call      {1e3 * t_kkt:8.3f} ms/state")
    print(f"  max relative error forward vs kkt (θ̈, f), {k} states: {err:.1e}")


if __name__ == "__main__":
    main()
