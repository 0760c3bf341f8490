r"""``make faults``: plant every catalogued fault in a scratch copy and run the tests that must catch it.

For each :class:`~faults.catalogue.Fault` of :data:`~faults.catalogue.FAULTS`:

1. each worker gets a scratch folder holding the repository's files (tracked and untracked,
   not ignored), written once; the fault's snippet is replaced inside its target function there
   (:mod:`faults.anchor`: located by qualified name with ``ast``, exactly once, or the fault is
   *stale*: an error);
2. pytest runs the fault's test files in that copy (cwd = the copy, PYTHONPATH = the copy first,
   so Python loads its ``opalg``, not the editable install's), serially
   (``-n 0 -p no:cacheprovider``); each file stops at its first failure (:mod:`faults_plugin`),
   which *kills* the fault;
3. the original source is put back before the next fault.

A sanity step first checks, on unmodified copies, that ``import opalg`` resolves to the copy
and that every selected test file passes.  Then a kill matrix (fault × test file) and the first
failing test of each fault are printed; the exit status is 1 if any fault survived or is stale,
or if the sanity step failed.  Two workers (``--jobs``) share the 2-core machine.

Why not a mutation library for the catalogue: mutmut 3.8.1 has no way to state a mutation
of one's own (its operators are built in), runs each mutant through trampolines that it does not
put on decorated functions (every public recursion here is ``@chunked``), and selects tests by
coverage rather than by the identity that should fail.  cosmic-ray 8.7.0 accepts new operators
only as plugins registered by package entry points, one class per kind of change, addressed by
occurrence number (which moves with every edit), and applies them to the file in place.  A
named fault here is one exact snippet in one named function, which neither expresses; the
runner above is small.  cosmic-ray does serve the generic sweep, ``make mutants``
(:mod:`faults.mutants`).

Usage::

    .venv/bin/python tools/faults/run.py [--jobs 2] [--only NAME ...] [--list] [--json PATH]
"""

from __future__ import annotations

import argparse
import concurrent.futures as cf
import json
import os
import pathlib
import shutil
import subprocess
import sys
import time

HERE = pathlib.Path(__file__).resolve().parent
ROOT = HERE.parents[1]
sys.path.insert(0, str(HERE.parent))

from faults.anchor import StaleFault, mutated_text  # noqa: E402
from faults.catalogue import FAULTS, Fault  # noqa: E402

#: A fault whose tests run longer than this is counted as killed by a timeout (a hang is a
#: detected fault: CI would stop too), reported as such.
TIMEOUT = 300.0


def repo_files(root: pathlib.Path) -> list[str]:
    """Tracked and untracked-but-not-ignored files of the working tree (what the suite sees)."""
    out = subprocess.run(["git", "ls-files", "-co", "--exclude-standard", "-z"], cwd=root,
                         capture_output=True, check=True).stdout.decode()
    return [f for f in out.split("\0") if f and (root / f).is_file()]


def make_copy(root: pathlib.Path, files: list[str] | None, dest: pathlib.Path) -> None:
    """Copy ``files`` of the work tree into ``dest``; ``files=None``: the committed tree (HEAD)."""
    if files is None:
        dest.mkdir(parents=True, exist_ok=True)
        tar = subprocess.run(["git", "archive", "--format=tar", "HEAD"], cwd=root, capture_output=True,
                             check=True).stdout
        subprocess.run(["tar", "-x", "-C", str(dest)], input=tar, check=True)
        return
    for f in files:
        d = dest / f
        d.parent.mkdir(parents=True, exist_ok=True)
        shutil.copy2(root / f, d)


def pytest_env(copy: pathlib.Path, cache: pathlib.Path, report: pathlib.Path) -> dict:
    env = {k: v for k, v in os.environ.items()
           if k not in ("PYTHONDONTWRITEBYTECODE", "OPALG_LEDGER", "PYTEST_ADDOPTS", "PYTEST_XDIST_WORKER")}
    env["PYTHONPATH"] = os.pathsep.join([str(copy), str(HERE)])
    env["PYTHONPYCACHEPREFIX"] = str(cache)
    env["FAULTS_REPORT"] = str(report)
    env["MPLBACKEND"] = "Agg"
    return env


def pytest_args(files, jobs: int = 0) -> list[str]:
    return [sys.executable, "-m", "pytest", "-o", "addopts=", "--doctest-modules", "-p", "no:cacheprovider",
            "-p", "faults_plugin", "-n", str(jobs), "-q", "--no-header", "-rN", *files]


def check_import_path(copy: pathlib.Path, cache: pathlib.Path) -> None:
    """``import opalg`` in the pytest environment must load the copy's package."""
    env = pytest_env(copy, cache, copy / "unused.json")
    got = subprocess.run([sys.executable, "-c", "import opalg; print(opalg.__file__)"], cwd=copy, env=env,
                         capture_output=True, text=True, check=True).stdout.strip()
    if not pathlib.Path(got).resolve().is_relative_to(copy.resolve()):
        raise SystemExit(f"sanity: `import opalg` loads {got}, not the scratch copy {copy}: the faults "
                         "would not be tested")


def run_tests(copy: pathlib.Path, cache: pathlib.Path, files, jobs: int = 0, timeout: float = TIMEOUT):
    """(verdicts per file, seconds, timed out, pytest output tail)."""
    report = copy / f".faults-report-{os.getpid()}-{time.monotonic_ns()}.json"
    t0 = time.perf_counter()
    try:
        proc = subprocess.run(pytest_args(files, jobs), cwd=copy, env=pytest_env(copy, cache, report),
                              capture_output=True, text=True, timeout=timeout)
        timed_out, tail = False, (proc.stdout + proc.stderr)[-3000:]
    except subprocess.TimeoutExpired as e:
        timed_out, tail = True, str(e)
    dt = time.perf_counter() - t0
    data = json.loads(report.read_text()) if report.exists() else {}
    report.unlink(missing_ok=True)
    return data.get("files", {}), dt, data.get("cpu", float("nan")), timed_out, tail


def apply_fault(copy: pathlib.Path, fault: Fault, serial: int):
    """Write the faulty source into ``copy``; returns a function that restores it."""
    path, text, out = mutated_text(copy, fault.target, fault.old, fault.new)
    st = path.stat()
    path.write_text(out, encoding="utf-8")
    # A distinct mtime per fault: a cached .pyc of another version is never taken for this one.
    os.utime(path, ns=(st.st_atime_ns, st.st_mtime_ns + (serial + 1) * 1_000_000_000))

    def restore():
        path.write_text(text, encoding="utf-8")
        os.utime(path, ns=(st.st_atime_ns, st.st_mtime_ns))

    return restore


def file_of(test: str) -> str:
    """The test file of a selection entry (a file, or a node id ``file::test``)."""
    return test.split("::", 1)[0]


def run_fault(fault: Fault, serial: int, copy: pathlib.Path, cache: pathlib.Path) -> dict:
    res = {"name": fault.name, "area": fault.area, "tests": list(dict.fromkeys(map(file_of, fault.tests)))}
    try:
        restore = apply_fault(copy, fault, serial)
    except StaleFault as e:
        return {**res, "status": "stale", "detail": str(e), "seconds": 0.0, "cpu": 0.0, "files": {}}
    try:
        verdicts, dt, cpu, timed_out, tail = run_tests(copy, cache, fault.tests)
    finally:
        restore()
    killers = [f for f in dict.fromkeys(map(file_of, fault.tests)) if verdicts.get(f, {}).get("first_failure")]
    if timed_out:
        status, first = "killed", f"(timeout after {TIMEOUT:.0f} s)"
    elif killers:
        status, first = "killed", verdicts[killers[0]]["first_failure"]
    elif not verdicts or not any(v.get("passed") for v in verdicts.values()):
        status, first = "error", "pytest ran no test: " + tail[-500:]
    else:
        status, first = "survived", None
    return {**res, "status": status, "first_failure": first, "seconds": round(dt, 1), "cpu": round(cpu, 1), "files": verdicts,
            "reason": verdicts[killers[0]].get("reason") if killers and not timed_out else None}


def print_matrix(results: list[dict], out=sys.stdout) -> None:
    files = sorted({f for r in results for f in r["tests"]})
    col = {f: i + 1 for i, f in enumerate(files)}
    print("\nTest files:", file=out)
    for f in files:
        print(f"  [{col[f]:2d}] {f}", file=out)
    w = max(len(r["name"]) for r in results)
    head = " ".join(f"{col[f]:>2d}" for f in files)
    print(f"\n{'fault':<{w}}  {head}   status    s    first failing test", file=out)
    for r in results:
        cells = []
        for f in files:
            v = r["files"].get(f)
            if f not in r["tests"]:
                cells.append("  ")
            elif v is None:
                cells.append(" -")
            elif v.get("first_failure"):
                cells.append(" K")
            else:
                cells.append(" .")
        first = r.get("first_failure") or r.get("detail") or ""
        print(f"{r['name']:<{w}}  {' '.join(cells)}   {r['status']:<8} {r['seconds']:5.1f}  {first}", file=out)
    print("\nK: the file caught the fault (its first failing test is shown for the first such file); "
          ".: the file passed with the fault in place; -: not run; blank: not selected", file=out)


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--jobs", type=int, default=2, help="faults run at once (default 2)")
    ap.add_argument("--only", nargs="*", help="run only these faults (names)")
    ap.add_argument("--list", action="store_true", help="list the catalogue and exit")
    ap.add_argument("--json", type=pathlib.Path, default=ROOT / "build" / "faults" / "report.json")
    ap.add_argument("--no-sanity", action="store_true", help="skip the unmodified-copy run (development only)")
    ap.add_argument("--source", choices=("worktree", "head"), default="worktree",
                    help="copy the work tree as it is (default; a fresh clone in CI) or the last commit "
                         "(leaves others' uncommitted edits out)")
    args = ap.parse_args(argv)
    faults = [f for f in FAULTS if not args.only or f.name in args.only]
    if args.only and len(faults) != len(set(args.only)):
        raise SystemExit(f"unknown fault names: {sorted(set(args.only) - {f.name for f in faults})}")
    if args.list:
        for f in faults:
            print(f"{f.name:<36} {f.area:<10} {f.identity:<40.40} {f.target}")
        return 0
    t_start = time.perf_counter()
    files = repo_files(ROOT) if args.source == "worktree" else None
    status = 0
    # Fixed scratch folders (git-ignored build/), refreshed each run, and the venv's bytecode
    # cache (as `make test`): the copies' own .pyc files are then reused from run to run.
    work = ROOT / "build" / "faults"
    cache = pathlib.Path(os.environ.get("PYTHONPYCACHEPREFIX") or ROOT / ".venv" / "pycache")
    copies = [work / f"copy{i}" for i in range(max(1, args.jobs))]
    for c in copies:
        shutil.rmtree(c, ignore_errors=True)
        make_copy(ROOT, files, c)
    if True:
        check_import_path(copies[0], cache)
        # Stale anchors first: every fault must apply (an error, not a survivor).
        stale = []
        for f in faults:
            try:
                mutated_text(copies[0], f.target, f.old, f.new)
            except StaleFault as e:
                stale.append((f.name, str(e)))
        for name, msg in stale:
            print(f"STALE {name}: {msg}")
        if not args.no_sanity:
            union = sorted({t for f in faults for t in f.tests})
            verdicts, dt, _, timed_out, tail = run_tests(copies[0], cache, union, jobs=max(1, args.jobs),
                                                      timeout=2 * TIMEOUT)
            bad = {f: v["first_failure"] for f, v in verdicts.items() if v.get("first_failure")}
            missing = sorted({file_of(f) for f in union} - set(verdicts))
            print(f"sanity: opalg loads from the scratch copy; {len(union)} test files on the unmodified "
                  f"copy in {dt:.0f} s: " + ("all pass" if not (bad or missing or timed_out) else "FAILED"))
            if bad or missing or timed_out:
                for f, first in bad.items():
                    print(f"  {f}: {first}")
                for f in missing:
                    print(f"  {f}: not collected")
                print(tail[-2000:])
                return 2
        results: list = [None] * len(faults)
        free = list(copies)
        with cf.ThreadPoolExecutor(max_workers=len(copies)) as pool:
            futs = {}
            pending = list(enumerate(faults))
            while pending or futs:
                while pending and free:
                    i, f = pending.pop(0)
                    c = free.pop()
                    futs[pool.submit(run_fault, f, i, c, cache)] = (i, c)
                done, _ = cf.wait(futs, return_when=cf.FIRST_COMPLETED)
                for fu in done:
                    i, c = futs.pop(fu)
                    free.append(c)
                    results[i] = fu.result()
                    r = results[i]
                    print(f"  {r['name']:<36} {r['status']:<8} {r['seconds']:6.1f} s ({r['cpu']:.1f} s CPU)", flush=True)
    print_matrix(results)
    counts = {s: sum(r["status"] == s for r in results) for s in ("killed", "survived", "stale", "error")}
    total = time.perf_counter() - t_start
    cpu = sum(r["cpu"] for r in results)
    print(f"\n{len(results)} faults: {counts['killed']} killed, {counts['survived']} survived, "
          f"{counts['stale']} stale, {counts['error']} errors; {total:.0f} s wall, {cpu:.0f} s CPU in the "
          f"fault runs ({os.cpu_count()} CPUs, load average {os.getloadavg()[0]:.1f})")
    for r in results:
        if r["status"] != "killed":
            print(f"  {r['status'].upper()}: {r['name']} ({r['area']}): {r.get('detail') or ''}")
    args.json.parent.mkdir(parents=True, exist_ok=True)
    args.json.write_text(json.dumps({"seconds": round(total, 1), "counts": counts, "faults": results},
                                    indent=1, ensure_ascii=False), encoding="utf-8")
    if counts["killed"] != len(results):
        status = 1
    return status


if __name__ == "__main__":
    sys.exit(main())
