#!/usr/bin/env python
"""Time of one re-simulation of the Ider panel (opalg.ider.panel.evaluate) per preset.

The notebook's widget calls :func:`opalg.ider.panel.evaluate` on every change;
the target is ≤ 0.3 s per choice of A.  Also prints the verification-grade run
(:func:`opalg.ider.simulate` defaults, rtol 1e-12) for comparison.

Run: ``python benchmarks/bench_ider.py``.
"""
from __future__ import annotations

import timeit

from opalg import ider
from opalg.ider.panel import evaluate


def main() -> None:
    print(f"{'preset':>22} {'panel [s]':>10} {'simulate [s]':>13}  verdict")
    for name in ider.PRESETS:
        t_panel = min(timeit.repeat(lambda: evaluate(name), number=1, repeat=3))
        t_full = min(timeit.repeat(lambda: ider.simulate(name), number=1, repeat=2))
        print(f"{name:>22} {t_panel:10.3f} {t_full:13.3f}  {evaluate(name).verdict[:70]}")


if __name__ == "__main__":
    main()
