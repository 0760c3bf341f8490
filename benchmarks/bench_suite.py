"""Wall time of the test suite (``make test``'s pytest command), by phase.

Runs ``python -m pytest`` (what ``make test`` runs, with the addopts of ``pyproject.toml``:
parallel workers, one execution per notebook) in a subprocess from the repository root,
timestamps every line it prints, and reads a JUnit XML report of the same run.  Prints:

- the suite's speed target: the wall time against it (``make test`` in at most
  180 s on the 2-core machine), and its ratio to the reference (546 s: the serial suite, before
  one execution per notebook and parallel workers, on a quiet 2-core machine);
- CPU: user + system seconds of pytest and every process it waited for (workers, kernels,
  subprocesses; Chromium's renderers are not among them), and of the whole machine over the
  run from ``/proc/stat`` (everything: the suite, Chromium, and any other load), with the load
  average before and after: a busy machine inflates the wall time, so say which it was;
- collection: wall time until pytest reports what it collected (with xdist: until the workers
  report their items);
- tests: wall time after that;
- the summed per-test durations (setup + call + teardown) of the notebook tests (nbval cells
  and tests parametrized by a notebook, whose first one includes the notebook's execution),
  the browser tests and the rest: on N workers they add up to about N x the tests' wall time;
- the costliest test modules and notebooks, and the slowest tests;
- a calibration loop timed before and after the run: the speed of this machine kind changes
  by up to 2x from one minute to the next, so compare runs only with it in view.

Usage::

    python benchmarks/bench_suite.py                  # the whole suite, as `make test`
    python benchmarks/bench_suite.py --make           # `make test` itself (venv check too)
    python benchmarks/bench_suite.py -- -n 0 tests/test_ider.py   # extra pytest arguments
    make bench-suite

The machine's load inflates every figure; compare runs made in the same conditions.
"""
from __future__ import annotations

import argparse
import json
import os
import re
import resource
import subprocess
import sys
import tempfile
import time
import xml.etree.ElementTree as ET
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
REFERENCE_SECONDS = 546.0  # serial `make test`'s pytest, quiet 2-core machine, 1,881 tests
TARGET_SECONDS = 180.0     # the target: `make test` in at most 3 min on the 2-core machine
# pytest's line once collection is complete: "collected 1881 items" or, with xdist,
# "2 workers [1881 items]".
COLLECTED = re.compile(r"^(collected \d+ items?|\d+ workers? \[\d+ items?\])")
SUMMARY = re.compile(r"=+ (.*(passed|failed|error|skipped).*) in [\d.]+s")


def classify(classname: str, name: str) -> str:
    """'notebooks', 'browser' or 'rest' for one JUnit test case."""
    if ".ipynb" in classname or ".ipynb]" in name:
        return "notebooks"
    if "test_browser" in classname:
        return "browser"
    return "rest"


def read_junit(path: Path) -> list[tuple[str, str, float]]:
    """(category, test id, seconds) for every test case of a JUnit XML report."""
    cases = []
    for case in ET.parse(path).getroot().iter("testcase"):
        classname, name = case.get("classname", ""), case.get("name", "")
        cases.append((classify(classname, name), f"{classname}::{name}",
                      float(case.get("time", 0.0))))
    return cases


def machine_cpu() -> float | None:
    """Busy CPU seconds of the whole machine since boot (all cores; ``/proc/stat``), or None."""
    try:
        fields = [int(x) for x in open("/proc/stat").readline().split()[1:]]
    except (OSError, ValueError):
        return None
    idle = fields[3] + (fields[4] if len(fields) > 4 else 0)   # idle + iowait
    return (sum(fields[:8]) - idle) / os.sysconf("SC_CLK_TCK")


def calibration() -> float:
    """CPU seconds of a fixed workload (a pure-Python loop and 300x300 matrix products).

    The same machine kind has run the same suite at 430 and 616 CPU seconds an hour apart
    (the host's other load changes the speed of every instruction, not the steal time): the
    loop timed before and after a run says how fast the machine was while it ran.
    """
    import numpy as np

    start = time.process_time()
    x = 0
    for i in range(3_000_000):
        x += i * i
    a = np.random.default_rng(0).random((300, 300))
    for _ in range(200):
        a @ a
    return time.process_time() - start


def load_average() -> str:
    try:
        return " ".join(f"{x:.2f}" for x in os.getloadavg())
    except OSError:
        return "n/a"


def by_module(cases: list[tuple[str, str, float]], top: int = 20) -> list[tuple[float, int, str]]:
    """(summed seconds, tests, module) of the ``top`` costliest test modules or notebooks.

    ``cases`` as :func:`read_junit` gives them.

    A notebook's cells count under the notebook, and a test parametrized by a notebook (its
    byte check, which includes the one execution) under that notebook too: one line per
    notebook says what executing and checking it costs.

    >>> by_module([("rest", "tests.test_a::t[1]", 2.0), ("rest", "tests.test_a::t[2]", 1.0),
    ...            ("rest", "tests.test_n::t[08_x.ipynb]", 5.0),
    ...            ("notebooks", "notebooks.08_x.ipynb::Cell 1", 0.5)])
    [(5.5, 2, '08_x.ipynb'), (3.0, 2, 'tests.test_a')]
    """
    sums: dict[str, list] = {}
    for _, test_id, t in cases:
        classname, _, name = test_id.rpartition("::")
        m = re.search(r"([\w./-]+\.ipynb)", name if ".ipynb]" in name else classname)
        key = m.group(1).rsplit("/", 1)[-1].removeprefix("notebooks.") if m else classname
        entry = sums.setdefault(key, [0.0, 0])
        entry[0] += t
        entry[1] += 1
    rows = sorted(((round(t, 6), n, k) for k, (t, n) in sums.items()), reverse=True)
    return rows[:top]


def run(pytest_args: list[str], use_make: bool, keep_junit: Path | None = None) -> dict:
    """Run the suite once; return the phase figures (``keep_junit``: copy the JUnit report there)."""
    with tempfile.TemporaryDirectory(prefix="bench-suite-") as tmp:
        junit = Path(tmp) / "junit.xml"
        extra = [f"--junitxml={junit}", "-o", "junit_duration_report=total"]
        if use_make:
            # PYTEST_ADDOPTS reaches the pytest that `make test` starts.
            env = dict(os.environ, PYTEST_ADDOPTS=" ".join([*extra, *pytest_args]))
            cmd = ["make", "test"]
        else:
            env = dict(os.environ)
            cmd = [sys.executable, "-m", "pytest", *extra, *pytest_args]
        calib_before = calibration()
        load_before, busy_before = load_average(), machine_cpu()
        ru = resource.getrusage(resource.RUSAGE_CHILDREN)
        cpu_before = ru.ru_utime + ru.ru_stime
        start = time.perf_counter()
        collected_at, summary = None, ""
        with subprocess.Popen(cmd, cwd=ROOT, env=env, stdout=subprocess.PIPE,
                              stderr=subprocess.STDOUT, text=True, bufsize=1) as proc:
            for line in proc.stdout:
                sys.stdout.write(line)
                if collected_at is None and COLLECTED.match(line.strip()):
                    collected_at = time.perf_counter() - start
                if m := SUMMARY.search(line):
                    summary = m.group(1)
        wall = time.perf_counter() - start
        ru = resource.getrusage(resource.RUSAGE_CHILDREN)
        cpu = ru.ru_utime + ru.ru_stime - cpu_before
        busy_after = machine_cpu()
        busy = None if busy_before is None or busy_after is None else busy_after - busy_before
        cases = read_junit(junit) if junit.exists() else []
        if keep_junit is not None and junit.exists():
            keep_junit.write_bytes(junit.read_bytes())
        calib_after = calibration()
    sums = {k: sum(t for c, _, t in cases if c == k) for k in ("notebooks", "browser", "rest")}
    return {"command": " ".join(cmd), "returncode": proc.returncode, "summary": summary,
            "tests": len(cases), "wall_s": wall, "cpu_s": cpu, "machine_cpu_s": busy,
            "cores": os.cpu_count(), "load_before": load_before, "load_after": load_average(),
            "calibration_s": (calib_before, calib_after),
            "collection_s": collected_at, "after_collection_s": wall - (collected_at or 0.0),
            "summed_durations_s": sums, "by_module": by_module(cases),
            "slowest": sorted(((t, name) for _, name, t in cases), reverse=True)[:15]}


def report(r: dict, reference: float) -> str:
    coll = r["collection_s"]
    verdict = "within" if r["wall_s"] <= TARGET_SECONDS else "OVER"
    machine = (f"{r['machine_cpu_s']:.0f} s on {r['cores']} cores "
               f"({r['machine_cpu_s'] / r['wall_s'] / r['cores']:.0%} busy)"
               if r.get("machine_cpu_s") is not None else "n/a")
    lines = [
        f"command          : {r['command']}  (exit {r['returncode']}: {r['summary']})",
        f"tests            : {r['tests']}",
        f"wall             : {r['wall_s']:.1f} s  ({verdict} the {TARGET_SECONDS:.0f} s target; "
        f"{r['wall_s'] / reference:.2f} x the {reference:.0f} s serial reference)",
        f"  collection     : {coll:.1f} s" if coll is not None else "  collection     : (not seen)",
        f"  tests          : {r['after_collection_s']:.1f} s",
        f"cpu              : {r['cpu_s']:.0f} s user+sys of pytest and the processes it waited "
        f"for (not Chromium's renderers)",
        f"machine cpu      : {machine} over the run, all processes",
        f"load average     : {r['load_before']} before, {r['load_after']} after",
        f"machine speed    : calibration loop {r['calibration_s'][0]:.2f} s before, "
        f"{r['calibration_s'][1]:.2f} s after (smaller is faster; 0.68-1.9 s on the idle 2-core machine of 2026-12-03)",
        "summed test durations (all workers):",
        *(f"  {k:<14} : {v:.1f} s" for k, v in r["summed_durations_s"].items()),
        "costliest modules and notebooks (summed durations, tests):",
        *(f"  {t:7.1f} s  {n:5d}  {k}" for t, n, k in r["by_module"]),
        "slowest tests:",
        *(f"  {t:7.1f} s  {name}" for t, name in r["slowest"]),
    ]
    return "\n".join(lines)


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--make", action="store_true", help="run `make test` instead of pytest")
    parser.add_argument("--reference", type=float, default=REFERENCE_SECONDS,
                        help="seconds to compare with (default: %(default)s)")
    parser.add_argument("--json", type=Path, help="also write the figures to this file")
    parser.add_argument("--keep-junit", type=Path, help="keep the run's JUnit XML report (every test's duration) here")
    parser.add_argument("pytest_args", nargs="*", help="extra pytest arguments (after --)")
    args = parser.parse_args(argv)
    r = run(args.pytest_args, args.make, args.keep_junit)
    print("\n" + report(r, args.reference))
    if args.json:
        args.json.write_text(json.dumps(r, indent=1))
    return r["returncode"]


if __name__ == "__main__":
    sys.exit(main())
