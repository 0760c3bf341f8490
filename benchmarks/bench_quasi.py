#!/usr/bin/env python
"""Quasi-velocities (``opalg.quasi``, docs/REFERENCE.md J2, J5, J6) against the ABA, batched.

Models: the 7-dof Franka Panda (example-robot-data's panda.urdf, fingers locked) when it is
installed, else a 7-link revolute chain of ``random_model``; and ``random_model(64, "chain",
joints="single")``.  Inputs: 10,000 random states (q, q̇, τ ~ N(0, 1), seed 0) passed as one
batch (the functions chunk it in 1,024-state blocks).  Times are the best of 3 calls after one
warm-up.

Printed per model: µs per state of ``aba``, ``quasi.nu`` (J2: one Riccati recursion and one
outward pass), ``quasi.nu_dot`` (J5 dynamic form: Riccati, the rate recursion J6 and one
inward pass) and ``articulated_rates``, with each one's ratio to aba; and the accuracy of
ν̇ against the kinematic form (a different route: aba's θ̈ and an outward pass) on the
first 100 states, so that speed is never bought with accuracy.

Run: ``python benchmarks/bench_quasi.py [--states 10000]`` (about a minute).
"""
from __future__ import annotations

import argparse
import importlib.metadata as md

from _timing import best_time  # first: it puts this checkout on sys.path

import numpy as np

import opalg
from opalg import quasi


def panda_or_chain():
    try:
        for f in md.files("example-robot-data") or []:
            if f.name == "panda.urdf":
                return "panda", opalg.from_urdf(str(f.locate()),
                                                locked=("panda_finger_joint1", "panda_finger_joint2"))
    except md.PackageNotFoundError:
        pass
    return "chain n=7 (no panda.urdf)", opalg.random_model(7, "chain", seed=7, joints="single")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--states", type=int, default=10_000)
    args = ap.parse_args()
    cases = [panda_or_chain(), ("chain n=64", opalg.random_model(64, "chain", seed=64, joints="single"))]
    print(f"{args.states} states per call, best of 3; µs per state (ratio to aba)")
    for name, m in cases:
        rng = np.random.default_rng(0)
        q, qd, tau = rng.normal(size=(3, args.states, m.ndof))
        t = {
            "aba": best_time(lambda: opalg.aba(m, q, qd, tau)),
            "nu": best_time(lambda: quasi.nu(m, q, qd)),
            "nu_dot": best_time(lambda: quasi.nu_dot(m, q, qd, tau)),
            "articulated_rates": best_time(lambda: quasi.articulated_rates(m, q[:1024], qd[:1024]), 2)
            * args.states / 1024,
        }
        us = {k: 1e6 * v / args.states for k, v in t.items()}
        row = "  ".join(f"{k} {v:7.1f}" + ("" if k == "aba" else f" ({v / us['aba']:.2f}x)")
                        for k, v in us.items())
        a = quasi.nu_dot(m, q[:100], qd[:100], tau[:100])
        b = quasi.nu_dot(m, q[:100], qd[:100], tau[:100], form="kinematic")
        err = np.max(np.linalg.norm(a - b, axis=-1) / np.linalg.norm(b, axis=-1))
        print(f"{name:28s} {row}   ν̇ dynamic vs kinematic: {err:.1e}")


if __name__ == "__main__":
    main()
