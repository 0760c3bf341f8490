#!/usr/bin/env python
"""Model construction and URDF import time against the number of links (linear = O(n)).

For serial chains of n links this prints the wall time (and peak traced memory, with
``--memory``) of

* ``Model(...)``: building an n-body chain of revolute joints (random placements,
  inertias, axes built beforehand, so only the constructor is timed);
* ``from_urdf``: importing an n-link URDF chain (revolute joints, one ``fixed``
  joint in ten, every link with an ``<inertial>``);

and the ratio to the previous size: linear scaling gives the ratio of the sizes.

Run: ``python benchmarks/bench_size.py [--sizes 2000 16000] [--urdf-only 120000] [--memory]``.
"""
from __future__ import annotations

import argparse
import time
import tracemalloc

import numpy as np

import opalg
from opalg import Joint, Model


def chain_urdf(n: int, fixed_every: int = 10) -> str:
    """URDF text of an n-link chain: links L0..L(n-1), joints J1..J(n-1)."""
    inertial = ('<inertial><origin xyz="0.1 0 0" rpy="0 0 0"/><mass value="1.5"/>'
                '<inertia ixx="0.02" ixy="0" ixz="0" iyy="0.03" iyz="0" izz="0.04"/></inertial>')
    lines = ['<robot name="chain">'] + [f'  <link name="L{k}">{inertial}</link>' for k in range(n)]
    for k in range(1, n):
        kind = "fixed" if k % fixed_every == 0 else "revolute"
        axis = "" if kind == "fixed" else '<axis xyz="0 0.6 0.8"/>'
        lines.append(f'  <joint name="J{k}" type="{kind}"><parent link="L{k - 1}"/><child link="L{k}"/>'
                     f'<origin xyz="0.2 0 0.05" rpy="0.1 0 0.2"/>{axis}</joint>')
    lines.append("</robot>")
    return "\n".join(lines)


def chain_args(n: int):
    """Constructor arguments of an n-body revolute chain."""
    joints = [Joint("R", [0.0, 0.6, 0.8]) for _ in range(n)]
    placements = [(np.eye(3), np.array([0.2, 0.0, 0.05]))] * n
    inertias = [(1.5, np.array([0.1, 0.0, 0.0]), np.diag([0.02, 0.03, 0.04]))] * n
    return list(range(-1, n - 1)), joints, placements, inertias


def timed(fn, memory: bool):
    if memory:
        tracemalloc.start()
    t0 = time.perf_counter()
    out = fn()
    dt = time.perf_counter() - t0
    peak = tracemalloc.get_traced_memory()[1] if memory else 0
    if memory:
        tracemalloc.stop()
    return out, dt, peak


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--sizes", type=int, nargs="*", default=[2000, 16000])
    ap.add_argument("--urdf-only", type=int, nargs="*", default=[], help="sizes for from_urdf only")
    ap.add_argument("--memory", action="store_true", help="trace peak memory (slower)")
    args = ap.parse_args()
    for n in args.sizes:
        parents, joints, placements, inertias = chain_args(n)
        _, dt, peak = timed(lambda: Model(parents, joints, placements, inertias), args.memory)
        print(f"Model()    n={n:>7}: {dt:9.3f} s" + (f"  peak {peak / 2**20:8.1f} MiB" if args.memory else ""),
              flush=True)
    for n in args.sizes + args.urdf_only:
        xml = chain_urdf(n)
        m, dt, peak = timed(lambda: opalg.from_urdf(xml), args.memory)
        print(f"from_urdf  n={n:>7}: {dt:9.3f} s" + (f"  peak {peak / 2**20:8.1f} MiB" if args.memory else "")
              + f"  ({m.n} bodies)", flush=True)


if __name__ == "__main__":
    main()
