#!/usr/bin/env python
"""Symbolic modelling of the 1998 deployable tree: derivation time and expression size.

For ``opalg.symbolic.deployable_example("rot3")`` (5 bodies, 15 DoF) and ``"full6"``
(30 DoF), in one run:

* the Lagrangian route: time to derive ℳ (partial velocities) and the bias, and
  ``count_ops`` of ℳ after common-subexpression elimination;
* the operator algebra with sympy entries: ``opalg.crba`` of ``system.to_model()`` at
  symbolic q (``--skip-operator`` to leave it out: it builds unsimplified products);
* numeric evaluation: the lambdified (cse) ℳ(q) per call against ``opalg.crba`` of the
  same model, single state and batched per state;
* simulation: the 6-DoF deployment (``"deploy"``, 30 s) integrated with the generated
  functions (``TreeSystem.simulate``) and with opalg's ABA on ``to_model()``, both through
  ``opalg.simulate.integrate`` (same solver and tolerances); time per right-hand side and in all,
  and their ratio.

Run: ``python benchmarks/bench_symbolic.py [--dof rot3 full6] [--skip-operator] [--skip-sim]``.
"""
from __future__ import annotations

import argparse
import time
import timeit

import numpy as np
import sympy as sp

import opalg
from opalg.simulate import integrate
from opalg.symbolic import deployable_example, deployment_setup


def ops_after_cse(M: sp.Matrix) -> int:
    repl, reduced = sp.cse(list(M))
    return int(sum(sp.count_ops(e) for _, e in repl) + sum(sp.count_ops(e) for e in reduced))


def bench_simulation() -> None:
    system = deployable_example("deploy")
    setup = deployment_setup(system)
    span, y0 = (0.0, 30.0), np.r_[setup.stowed, np.zeros(6)]
    t0 = time.perf_counter()
    system.lambdify()
    t_gen = time.perf_counter() - t0
    t0 = time.perf_counter()
    run = system.simulate(setup.stowed, np.zeros(6), span, springs=setup.springs, dampers=setup.dampers,
                          t_eval=[span[1]])
    t_sym = time.perf_counter() - t0
    assert run.ok, run.message
    model = system.to_model()

    def rhs(_, y):
        q, qd = y[:6], y[6:]
        return np.r_[qd, opalg.aba(model, q, qd, setup.torques(q, qd))]

    t0 = time.perf_counter()
    sol = integrate(rhs, y0, span, method="DOP853", rtol=1e-10, atol=1e-10, t_eval=[span[1]])
    t_aba = time.perf_counter() - t0
    assert sol.ok, sol.message
    assert np.abs(sol.y[-1, :6] - run.q[-1]).max() < 1e-6
    print(f"\ndeployment, 6 DoF, 30 s (DOP853, rtol = atol = 1e-10); generating M and bias took "
          f"{t_gen:.2f} s (cached on the system); the generated run's total includes lambdify of T, U, Q")
    print(f"{'route':>22} {'rhs evals':>9} {'total s':>8} {'us/rhs':>8}")
    print(f"{'generated (sympy)':>22} {run.nfev:9d} {t_sym:8.2f} {t_sym / run.nfev * 1e6:8.1f}")
    print(f"{'opalg aba':>22} {sol.nfev:9d} {t_aba:8.2f} {t_aba / sol.nfev * 1e6:8.1f}")
    print(f"ratio opalg / generated per rhs: {(t_aba / sol.nfev) / (t_sym / run.nfev):.2f}")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--dof", nargs="+", default=["rot3", "full6"])
    ap.add_argument("--skip-operator", action="store_true")
    ap.add_argument("--skip-sim", action="store_true")
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
    if not args.skip_sim:
        bench_simulation()


if __name__ == "__main__":
    main()
