#!/usr/bin/env python
"""Floating base (``opalg.floating``, docs/REFERENCE.md K11): the O(n) sweeps against the dense route.

Models: random floating chains and trees (``opalg.random_model(n, topology, seed=n,
joints="mixed", floating=True)``) of n = 8, 32, 128 bodies.  Inputs: a configuration
``integrate(neutral, v)`` with v ~ N(0, 1) and arm rates θ̇ ~ N(0, 1) (seed 0); one state per call.

Printed per model: N (velocity size), ms per call of

* ``base_velocity`` (composite inertia R(r) and the momentum sweep with the base at rest, then a
  6×6 solve) and of the dense route ``crba`` + ``solve(ℳ_bb, −ℳ_bm θ̇)`` (ℳ formed, its root rows
  read), their ratio dense/sweep (> 1: the sweeps are faster);
* ``generalized_jacobian`` of the last body (frame Jacobian, ℳ_bb and ℳ_bm by one outward sweep
  over the composite inertias) and the dense route ``crba`` + ``frame_jacobian`` + solve, ratio;
* the relative difference of the two routes (both must agree to round-off).

Best of 3 after one warm-up (benchmarks/_timing.py).  Measured on a shared 2-core machine: v_b 0.4–7.5 ms, about
as fast as the dense route (ratio 0.97–1.6: crba's common-frame path D8 is vectorized and the body
transforms dominate both), J* 1.8–2.3× faster than crba + solve.  At small n interpreter overhead dominates;
the dense routes cost O(n²) (crba) and the sweeps O(n) — O(n·N) for J*, whose output is 6 × (N − 6).

Run: ``python benchmarks/bench_floating.py [--quick]`` (a few seconds; --quick: n = 8, 32 only).
"""
from __future__ import annotations

import argparse

from _timing import best_time  # first: it puts this checkout on sys.path

import numpy as np

import opalg
from opalg.floating import arm_dofs, base_velocity, generalized_jacobian


def dense_vb(m, q, qd):
    M = opalg.crba(m, q)
    arm = arm_dofs(m, 0)
    return np.linalg.solve(M[:6, :6], -M[:6, arm] @ qd)


def dense_js(m, q, body):
    M = opalg.crba(m, q)
    arm = arm_dofs(m, 0)
    J = opalg.frame_jacobian(m, q, (body, np.zeros(3)))
    return J[:, arm] - J[:, :6] @ np.linalg.solve(M[:6, :6], M[:6, arm])


def rel(a, b) -> float:
    return float(np.linalg.norm(a - b) / max(np.linalg.norm(b), 1e-300))


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[1])
    ap.add_argument("--quick", action="store_true")
    args = ap.parse_args()
    sizes = (8, 32) if args.quick else (8, 32, 128)
    print(f"{'model':>12} {'N':>5} | {'v_b ms':>8} {'dense ms':>9} {'ratio':>6} | "
          f"{'J* ms':>8} {'dense ms':>9} {'ratio':>6} | {'rel diff':>8}")
    for topo in ("chain", "tree"):
        for n in sizes:
            m = opalg.random_model(n, topo, seed=n, joints="mixed", floating=True)
            rng = np.random.default_rng(0)
            q = opalg.integrate(m, opalg.neutral(m), rng.normal(size=m.nv))
            qd = rng.normal(size=m.nv - 6)
            body = m.n - 1
            ms = lambda f: 1e3 * best_time(f, 3)  # noqa: E731
            t_vb, t_vd = ms(lambda: base_velocity(m, q, qd)), ms(lambda: dense_vb(m, q, qd))
            t_js, t_jd = ms(lambda: generalized_jacobian(m, q, body)), ms(lambda: dense_js(m, q, body))
            err = max(rel(base_velocity(m, q, qd), dense_vb(m, q, qd)),
                      rel(generalized_jacobian(m, q, body), dense_js(m, q, body)))
            print(f"{topo + ' ' + str(n):>12} {m.nv:>5} | {t_vb:8.3f} {t_vd:9.3f} {t_vd / t_vb:6.2f} | "
                  f"{t_js:8.3f} {t_jd:9.3f} {t_jd / t_js:6.2f} | {err:8.1e}")


if __name__ == "__main__":
    main()
