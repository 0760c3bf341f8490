#!/usr/bin/env python
"""Time of one re-simulation of the Ider panel (opalg.ider.panel.evaluate) per preset.

The notebook's widget calls :func:`opalg.ider.panel.evaluate` on every change;
the target is ≤ 0.3 s per choice of A.  The panel caches its runs (choosing a
preset again reruns nothing), so each timing starts from empty caches: it is the
time of a first choice, with and without the ghost (conventional) run drawn beside it.
Also prints the verification-grade run (:func:`opalg.ider.simulate` defaults, rtol 1e-12).

Run: ``python benchmarks/bench_ider.py``.
"""
from __future__ import annotations

import timeit

from opalg import ider
from opalg.ider import panel
from opalg.ider.panel import evaluate


def _cold(name: str, ghost: bool):
    """evaluate(name) from empty caches (what a first choice of A costs)."""
    panel._cached_run.cache_clear()
    panel._conventional.cache_clear()
    return evaluate(name, ghost=ghost)


def main() -> None:
    print(f"{'preset':>22} {'panel [s]':>10} {'+ghost [s]':>11} {'simulate [s]':>13}  verdict")
    for name in ider.PRESETS:
        t_panel = min(timeit.repeat(lambda: _cold(name, False), number=1, repeat=3))
        t_ghost = min(timeit.repeat(lambda: _cold(name, True), number=1, repeat=3))
        t_full = min(timeit.repeat(lambda: ider.simulate(name), number=1, repeat=2))
        print(f"{name:>22} {t_panel:10.3f} {t_ghost:11.3f} {t_full:13.3f}  {evaluate(name).verdict[:60]}")


if __name__ == "__main__":
    main()
