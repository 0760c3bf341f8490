"""The timing harness shared by the benchmark scripts (bench_hybrid, bench_fijany, bench_quasi, …).

Importing it puts the repository root first on ``sys.path``, so that a script run as
``python benchmarks/bench_X.py`` times this checkout's ``opalg`` rather than an installed one;
:func:`best_time` is the best-of-k wall clock every script reports.  A script imports it
before ``opalg``::

    from _timing import best_time  # noqa: E402  (also puts the checkout on sys.path)
"""
from __future__ import annotations

import os
import sys
import time
from typing import Callable

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
if sys.path[0] != ROOT:
    sys.path.insert(0, ROOT)


def best_time(fn: Callable[[], object], repeat: int = 3) -> float:
    """Seconds of the fastest of ``repeat`` calls of ``fn()``, after one untimed warm-up call.

    The minimum, not the mean: the noise of a shared machine only ever adds time.

    Parameters
    ----------
    fn : callable
        Called with no arguments; its result is discarded.
    repeat : int
        Number of timed calls.

    Returns
    -------
    float
        The smallest ``time.perf_counter`` difference over the timed calls.

    Examples
    --------
    >>> calls = []
    >>> t = best_time(lambda: calls.append(1), repeat=2)
    >>> len(calls), t >= 0.0
    (3, True)
    """
    fn()
    best = float("inf")
    for _ in range(repeat):
        t0 = time.perf_counter()
        fn()
        best = min(best, time.perf_counter() - t0)
    return best
