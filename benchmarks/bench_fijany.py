#!/usr/bin/env python
"""Fijany's constraint-force algorithm (``opalg.fijany``, docs/REFERENCE.md I3–I5) against the ABA.

Models: ``random_model(n, "chain", seed=0, joints="single")`` for n = 4, 8, …, 256.
Inputs: a batch of S random states (q, q̇, τ ~ N(0, 1), seed 0; default S = 256).  Times are
the best of 3 calls after one warm-up.

Printed per n:
* the A-solve of the CFA alone, A built once: ``cyclic`` (block cyclic reduction, each of its
  ⌈log₂ n⌉ + 1 levels one batched numpy operation over all its blocks and all S states) and
  ``thomas`` (the sequential block sweep, batched over states only), in µs per state, and their
  ratio — numpy on 2 cores stands in for the O(n) processors, so this measures the per-level
  overhead, not a parallel speed-up;
* ``aba`` (sequential, batched over states) and ``fijany.forward`` (the whole CFA including the
  factor assembly, which is written as per-body Python loops) in µs per state;
* the critical path counted by ``fijany.critical_path`` (I5) for ABA and CFA, and their ratio;
* the largest |q̈_CFA − q̈_ABA| / |q̈_ABA| over the batch, so that speed is never bought with accuracy.

Run: ``python benchmarks/bench_fijany.py [--states 256]`` (about a minute).
"""
from __future__ import annotations

import argparse

from _timing import best_time  # first: it puts this checkout on sys.path

import numpy as np

import opalg
from opalg import fijany


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[1])
    ap.add_argument("--states", type=int, default=256)
    ap.add_argument("--sizes", type=int, nargs="*", default=[4, 8, 16, 32, 64, 128, 256])
    args = ap.parse_args()
    S = args.states
    print(f"numpy {np.__version__}, {S} states per call, µs per state")
    print(f"{'n':>4} {'levels':>6} {'cyclic':>8} {'thomas':>8} {'cyc/tho':>7} {'aba':>8} {'cfa':>8} "
          f"{'cfa/aba':>7} {'depth aba':>9} {'depth cfa':>9} {'ratio':>6} {'rel err':>8}")
    for n in args.sizes:
        m = opalg.random_model(n, "chain", seed=0, joints="single")
        rng = np.random.default_rng(0)
        q, qd, tau = rng.normal(size=(3, S, m.ndof))
        F = fijany.factors(m, q)
        rhs = rng.normal(size=(S, F.A.shape[0]))
        t_cyc = best_time(lambda: F.A.solve(rhs, "cyclic")) / S * 1e6
        t_tho = best_time(lambda: F.A.solve(rhs, "thomas")) / S * 1e6
        levels = F.A.solve(rhs[0], "cyclic", trace=True)[1].levels
        t_aba = best_time(lambda: opalg.aba(m, q, qd, tau)) / S * 1e6
        t_cfa = best_time(lambda: fijany.forward(m, q, qd, tau)) / S * 1e6
        ref = opalg.aba(m, q, qd, tau)
        err = float(np.max(np.linalg.norm(fijany.forward(m, q, qd, tau)[0] - ref, axis=-1)
                           / np.linalg.norm(ref, axis=-1)))
        d_aba = fijany.critical_path(m, q[0], qd[0], tau[0], "aba").depth
        d_cfa = fijany.critical_path(m, q[0], qd[0], tau[0], "cfa").depth
        print(f"{n:>4} {levels:>6} {t_cyc:>8.1f} {t_tho:>8.1f} {t_cyc / t_tho:>7.2f} {t_aba:>8.1f} "
              f"{t_cfa:>8.1f} {t_cfa / t_aba:>7.2f} {d_aba:>9} {d_cfa:>9} {d_aba / d_cfa:>6.1f} {err:>8.1e}")


if __name__ == "__main__":
    main()
