#!/usr/bin/env python
"""opalg batched recursions against Pinocchio called in a Python loop, in one run.

For the Franka Panda arm (example-robot-data's panda.urdf with the two finger
joints locked: 7 dof; both libraries parse the same URDF, Pinocchio's side
reduced with buildReducedModel) and random revolute chains n = 3..64, this
prints the time per state of

* opalg with a batch of B states (one call, numpy broadcasting over the batch),
* Pinocchio (C++) called once per state from a Python loop over the same states,

and their ratio opalg/Pinocchio for rnea, aba and crba; plus single-call times
(one state) for both.  A ratio below 1 means opalg's batch is faster per state.

Run: ``python benchmarks/bench_pinocchio.py [--batch B] [--quick]``.
"""
from __future__ import annotations

import argparse
import importlib.metadata as md
import time
import timeit

import numpy as np
import pinocchio as pin

import opalg
from opalg.pinocchio_bridge import to_pinocchio, twin_from_pin


FINGERS = ("panda_finger_joint1", "panda_finger_joint2")


def panda():
    """The 7-dof Panda arm as an opalg model and its Pinocchio twin."""
    for f in md.files("example-robot-data") or []:
        if f.name == "panda.urdf":
            path = str(f.locate())
            model = opalg.from_urdf(path, locked=FINGERS)
            full = pin.buildModelFromUrdf(path)
            reduced = pin.buildReducedModel(full, [full.getJointId(j) for j in FINGERS], pin.neutral(full))
            reduced.gravity.linear = np.asarray(model.gravity, dtype=float)
            return model, twin_from_pin(model, reduced)
    raise SystemExit("example-robot-data's panda.urdf not found (pip install 'opalg[oracle]')")


def best(fn, repeat):
    return min(timeit.repeat(fn, number=1, repeat=repeat))


def bench(model, twin, B, repeat, rng):
    N = model.ndof
    Q, QD, X = rng.uniform(-1, 1, size=(3, B, N))
    Qp = np.array([twin.q(q) for q in Q])
    Vp = np.array([twin.v(v) for v in QD])
    Xp = np.array([twin.v(v) for v in X])
    pm, pd = twin.model, twin.data
    ours = {
        "rnea": lambda q, v, x: opalg.rnea(model, q, v, x),
        "aba": lambda q, v, x: opalg.aba(model, q, v, x),
        "crba": lambda q, v, x: opalg.crba(model, q),
    }
    theirs = {
        "rnea": lambda i: pin.rnea(pm, pd, Qp[i], Vp[i], Xp[i]),
        "aba": lambda i: pin.aba(pm, pd, Qp[i], Vp[i], Xp[i]),
        "crba": lambda i: pin.crba(pm, pd, Qp[i]),
    }
    row = {}
    for name in ours:
        t_batch = best(lambda: ours[name](Q, QD, X), repeat) / B
        t_loop = best(lambda: [theirs[name](i) for i in range(B)], repeat) / B
        n1 = 200
        t_one = best(lambda: [ours[name](Q[0], QD[0], X[0]) for _ in range(n1)], repeat) / n1
        t_pin1 = best(lambda: [theirs[name](0) for _ in range(n1)], repeat) / n1
        row[name] = (t_batch, t_loop, t_one, t_pin1)
    return row


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--batch", type=int, default=10_000)
    ap.add_argument("--quick", action="store_true", help="fewer sizes and repeats")
    args = ap.parse_args()
    repeat = 2 if args.quick else 3
    rng = np.random.default_rng(0)
    cases = [("panda", *panda())]
    for n in ((3, 7, 16) if args.quick else (3, 7, 16, 32, 64)):
        m = opalg.random_model(n, "chain", seed=n, joints="revolute")
        cases.append((f"chain{n}", m, to_pinocchio(m)))
    t0 = time.perf_counter()
    print(f"time per state [us]; opalg batched over B={args.batch} states vs Pinocchio in a Python loop")
    print(f"{'model':>8} {'N':>3} {'algo':>5} {'opalg':>8} {'pin':>8} {'ratio':>6}"
          f" | single call [us]: {'opalg':>8} {'pin':>8}")
    for label, model, twin in cases:
        row = bench(model, twin, args.batch, repeat, rng)
        for name, (tb, tl, t1, tp1) in row.items():
            print(f"{label:>8} {model.ndof:>3} {name:>5} {tb * 1e6:8.2f} {tl * 1e6:8.2f} {tb / tl:6.2f}"
                  f" |                   {t1 * 1e6:8.1f} {tp1 * 1e6:8.2f}")
    print(f"(total {time.perf_counter() - t0:.0f} s)")


if __name__ == "__main__":
    main()
