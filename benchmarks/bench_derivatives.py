#!/usr/bin/env python
"""Derivatives of the dynamics: opalg's batched O(n·N) recursions against Pinocchio, and their scaling.

docs/REFERENCE.md E14, E15.

1. The Franka Panda (example-robot-data's panda.urdf, fingers locked: 7 dof), B = 10,000 random
   states: ``opalg.aba_derivatives`` (and ``rnea_derivatives``) on the whole batch in one call
   against Pinocchio's ``computeABADerivatives`` (``computeRNEADerivatives``) called once per
   state from a Python loop; the ratio opalg/Pinocchio per state.
2. time(n = 64)/time(n = 8) of ``aba_derivatives`` on random revolute chains (a batch of states
   each): O(n·N) = O(n²) on a chain predicts 64; finite differences (N + 1 ABA calls of O(n))
   predict the same n², complex step too, and a dense route O(n³) 512.

What limits the ratio: numpy's one pass over memory per array operation.  Per body and chunk of
1,024 states the tangent recursion makes about ten batched 6×6 products of the 2N×6 direction
block and twenty small array operations (cross-product matrices, the own-axis rows), each a
separate sweep through memory and a Python call, where Pinocchio keeps a body's block in registers;
the forward-dynamics derivatives add a Riccati sweep, the ABA passes and ℳ⁻¹ on N unit vectors.
The ABA alone is about 2× Pinocchio's loop, so the derivatives' 3–4× is that ratio times the
extra passes over 2N-row blocks.  The right factor of every batched product of the tangent
recursion is C-contiguous: numpy's stacked matmul with a transposed view as that factor ran about
4× slower, which had aba_derivatives at 25.6 µs (4.2×).  Measured on the 2-core machine, three runs
at load ≈ 1: aba_derivatives 20.9–22.3 against 6.1–6.6 µs/state (3.4×), rnea_derivatives 12.3–14.0
against 4.6–4.7 (2.7–3.0×), aba 1.7–1.9×; time(64)/time(8) = 47 (the fixed cost per call weighs
more at n = 8).  What is left is the ABA's own 1.7–1.9× times the extra sweeps: the Riccati sweep
and the passes for θ̈ and ℳ⁻¹ cost 8–9 µs of the 21, where a batched 6×6 by 6×6 product costs
numpy about 0.35 µs per state.

Run: ``python benchmarks/bench_derivatives.py [--batch B] [--quick]``.
"""
from __future__ import annotations

import argparse

import numpy as np

from _timing import best_time  # noqa: E402  (also puts the checkout on sys.path)

import pinocchio as pin  # noqa: E402

import opalg  # noqa: E402
from bench_pinocchio import panda  # noqa: E402


def versus_pinocchio(B: int, repeat: int) -> None:
    model, tw = panda()
    rng = np.random.default_rng(0)
    Q, QD, X = rng.uniform(-1, 1, size=(3, B, model.ndof))
    Qp = [tw.q(q) for q in Q]
    Vp = [tw.v(v) for v in QD]
    Xp = [tw.v(x) for x in X]
    pm, pd = tw.model, tw.data
    rows = [
        ("aba_derivatives", lambda: opalg.aba_derivatives(model, Q, QD, X),
         lambda: [pin.computeABADerivatives(pm, pd, Qp[i], Vp[i], Xp[i]) for i in range(B)]),
        ("rnea_derivatives", lambda: opalg.rnea_derivatives(model, Q, QD, X),
         lambda: [pin.computeRNEADerivatives(pm, pd, Qp[i], Vp[i], Xp[i]) for i in range(B)]),
        ("aba (for scale)", lambda: opalg.aba(model, Q, QD, X),
         lambda: [pin.aba(pm, pd, Qp[i], Vp[i], Xp[i]) for i in range(B)]),
    ]
    print(f"Panda, {model.ndof} dof, {B} states (opalg: one batched call; Pinocchio {pin.__version__}: a Python loop)")
    print(f"{'':18s} {'opalg µs/state':>15s} {'Pinocchio µs/state':>19s} {'ratio':>7s}")
    for name, ours, theirs in rows:
        t_o, t_p = best_time(ours, repeat) / B, best_time(theirs, repeat) / B
        print(f"{name:18s} {1e6 * t_o:15.2f} {1e6 * t_p:19.2f} {t_o / t_p:7.2f}")


def scaling(B: int, repeat: int) -> None:
    print(f"\naba_derivatives on random revolute chains, {B} states per call")
    times = {}
    for n in (8, 16, 32, 64):
        m = opalg.random_model(n, "chain", seed=n, joints="revolute")
        rng = np.random.default_rng(n)
        Q, QD, X = rng.uniform(-1, 1, size=(3, B, m.ndof))
        times[n] = best_time(lambda: opalg.aba_derivatives(m, Q, QD, X), repeat) / B
        print(f"  n = {n:3d}: {1e6 * times[n]:9.1f} µs/state")
    print(f"time(64)/time(8) = {times[64] / times[8]:.1f}   (O(n·N) on a chain: 64; a dense O(n³) route: 512)")
    print("What limits the ratio to Pinocchio: one numpy pass over memory per array operation on the 2N-row "
          "direction blocks (see the module docstring)")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--batch", type=int, default=10_000)
    ap.add_argument("--quick", action="store_true", help="1,000 states, one repeat")
    a = ap.parse_args()
    B, repeat = (1000, 1) if a.quick else (a.batch, 3)
    versus_pinocchio(B, repeat)
    scaling(max(B // 50, 20), repeat)


if __name__ == "__main__":
    main()
