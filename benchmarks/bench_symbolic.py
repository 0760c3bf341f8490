#!/usr/bin/env python
"""Symbolic modelling of the 1998 deployable tree: derivation time and expression size.

For ``opalg.symbolic.deployable_example("rot3")`` (5 bodies, 15 DoF) and ``"full6"``
(30 DoF), in one run:

* the Lagrangian route: time to derive ℳ (partial velocities) and the bias, and
  ``count_ops`` of ℳ after common-subexpression elimination;
* the operator algebra with sympy entries: ``opalg.crba`` of ``system.to_model()`` at
  symbolic q (``--skip-operator`` to leave it out: it builds unsimplified products);
* numeric evaluation: the lambdified (cse) ℳ(q) per call against ``opalg.crba`` of the
  same model, single state and batched per state.

Run: ``python benchmarks/bench_symbolic.py [--dof rot3 full6] [--skip-operator]``.
"""
from __future__ import annotations

import argparse
import time
import timeit

import numpy as np
import sympy as sp

import opalg
from opalg.symbolic import deployable_example


def ops_after_cse(M: sp.Matrix) -> int:
    repl, reduced = sp.cse(list(M))
    return int(sum(sp.count_ops(e) for _, e in repl) + sum(sp.count_ops(e) for e in reduced))


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--dof", nargs="+", default=["rot3", "full6"])
    ap.add_argument("--skip-operator", action="store_true")
    args = ap.parse_args()
    rng = np.random.default_rng(0)
    print(f"{'case':>6} {'N':>3} {'M derive':>9} {'bias':>7} {'ops(M)':>7} {'op-alg M':>9} {'ops':>7}"
          f" {'lambdify':>9} {'M(q) us':>8} {'crba us':>8} {'crba batch us/st':>17}")
    for dof in args.dof:
        system = deployable_example(dof)
        N = len(system.q)
        t0 = time.perf_counter()
        M = system.mass_matrix()
        t_M = time.perf_counter() - t0
        t0 = time.perf_counter()
        system.bias()
        t_b = time.perf_counter() - t0
        n_ops = ops_after_cse(M)
        model = system.to_model()
        if args.skip_operator:
            t_op, n_op = float("nan"), -1
        else:
            t0 = time.perf_counter()
            Mop = sp.Matrix(opalg.crba(model, list(system.q)).tolist())
            t_op = time.perf_counter() - t0
            n_op = ops_after_cse(Mop)
        t0 = time.perf_counter()
        Mf, _ = system.lambdify()
        t_l = time.perf_counter() - t0
        q = rng.uniform(-1, 1, N)
        assert np.allclose(Mf(q), opalg.crba(model, q), rtol=1e-10, atol=1e-12)
        t_num = min(timeit.repeat(lambda: Mf(q), number=50, repeat=3)) / 50
        t_crba = min(timeit.repeat(lambda: opalg.crba(model, q), number=20, repeat=3)) / 20
        Q = rng.uniform(-1, 1, (4096, N))
        t_batch = min(timeit.repeat(lambda: opalg.crba(model, Q), number=1, repeat=3)) / len(Q)
        print(f"{dof:>6} {N:>3} {t_M:8.2f}s {t_b:6.2f}s {n_ops:7d} {t_op:8.2f}s {n_op:7d}"
              f" {t_l:8.2f}s {t_num * 1e6:8.1f} {t_crba * 1e6:8.1f} {t_batch * 1e6:17.2f}")


if __name__ == "__main__":
    main()
