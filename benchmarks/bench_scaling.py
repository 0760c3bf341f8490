#!/usr/bin/env python
"""Scaling of the O(n) recursions against the dense routes, in one run.

For random serial chains (revolute joints) with n bodies this prints the time per
call of

* ``rnea``, ``aba``, ``crba`` (the recursions),
* ``dense FD``: forward dynamics by forming ℳ with crba and solving (``np.linalg.solve``),
* ``dense ops``: ℳ = HφMφ*H* from dense operator matrices with φ = inv(I − ℰφ),
  then a solve (the O(n³) route the operator algebra avoids),

and the ratio time(n=64) / time(n=8) per algorithm: linear scaling gives about 8,
quadratic 64, cubic 512.  Timings are the best of several repeats (``timeit``).

Run: ``make bench`` or ``python benchmarks/bench_scaling.py [--quick]``.
"""
from __future__ import annotations

import argparse
import timeit

import numpy as np

import opalg

SIZES = (3, 7, 8, 16, 32, 64)


def dense_ops_fd(model, q, qd, tau):
    ops = opalg.operators(model, q)
    E = ops.E_phi.dense()
    phi = np.linalg.inv(np.eye(E.shape[0]) - E)
    H, M = ops.H.dense(), ops.M.dense()
    Mq = H @ phi @ M @ phi.T @ H.T
    return np.linalg.solve(Mq, tau - opalg.bias(model, q, qd))


def crba_fd(model, q, qd, tau):
    return np.linalg.solve(opalg.crba(model, q), tau - opalg.bias(model, q, qd))


def best_time(fn, repeat: int) -> float:
    t = timeit.Timer(fn)
    number, _ = t.autorange()
    number = max(1, number // 4)
    return min(t.repeat(repeat=repeat, number=number)) / number


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--quick", action="store_true", help="fewer repeats (smoke run)")
    args = ap.parse_args()
    repeat = 2 if args.quick else 5
    rng = np.random.default_rng(0)
    algos = {
        "rnea": lambda m, q, qd, x: opalg.rnea(m, q, qd, x),
        "aba": lambda m, q, qd, x: opalg.aba(m, q, qd, x),
        "crba": lambda m, q, qd, x: opalg.crba(m, q),
        "dense FD": crba_fd,
        "dense ops": dense_ops_fd,
    }
    times = {a: {} for a in algos}
    for n in SIZES:
        model = opalg.random_model(n, "chain", seed=n, joints="revolute")
        q, qd, x = rng.normal(size=(3, model.ndof))
        for name, fn in algos.items():
            times[name][n] = best_time(lambda: fn(model, q, qd, x), repeat)
    head = f"{'n':>4} " + " ".join(f"{a:>11}" for a in algos)
    print("time per call [ms], random revolute serial chains, single state")
    print(head)
    for n in SIZES:
        print(f"{n:>4} " + " ".join(f"{times[a][n] * 1e3:11.3f}" for a in algos))
    print(f"{'64/8':>4} " + " ".join(f"{times[a][64] / times[a][8]:11.1f}" for a in algos))
    print("ratio 64/8: ~8 linear, ~64 quadratic, ~512 cubic")


if __name__ == "__main__":
    main()
