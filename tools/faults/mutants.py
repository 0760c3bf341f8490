r"""``make mutants``: cosmic-ray's generic mutation operators over the core recursions, in a time budget.

The fault catalogue (:mod:`faults.catalogue`, ``make faults``) plants the mistakes people make
with the spatial operator algebra; this sweep complements it with the blind ones a mutation
library makes (``+`` → ``-``, ``0`` → ``1``, ``<`` → ``<=``, a loop that never runs …) over

    opalg/algorithms/{rnea,crba,aba,riccati}.py, opalg/spatial/vectors.py,
    opalg/model/kinematics.py

It is not part of CI: thousands of mutants, most of them meaningless, would take hours.

How it runs
-----------
* cosmic-ray 8.7.0 (``pip install -e ".[mutation]"``, pinned in constraints.txt) enumerates
  the mutants into its work database (``build/mutants/session.sqlite``), applies each one
  (:func:`cosmic_ray.mutating.mutate_and_test`) and classifies the test run; ``cr-report`` and
  ``cr-rate`` read the same database afterwards.
* Mutants are applied in scratch copies of the repository (one per worker, never in the work
  tree: colleagues' test runs must not see them), with the copy first on PYTHONPATH.
* The mutants are taken in a seeded random order until the budget (``--minutes``, default 15)
  runs out, so a partial run is a uniform sample; the rest stay pending in the database, and a
  second run (``--resume``) continues with them; ``--recheck`` runs the survivors again (after a
  test was added), ``--report`` only summarizes.
* Each mutant runs the core test files below with ``-x``: a survivor is a mutant that none of
  them catches.

Why cosmic-ray and not mutmut 3: mutmut 3 never mutates a decorated function (its trampolines
cannot wrap one), and every public recursion here is decorated (``@chunked``: rnea, bias, aba,
minv, minv_diag, mass_matrix_diag …), so rnea.py would get no mutant at all.  cosmic-ray
rewrites the source file itself, so every function is mutated, at the price of one pytest
process per mutant.
"""

from __future__ import annotations

import argparse
import collections
import concurrent.futures as cf
import multiprocessing as mp
import os
import pathlib
import random
import shutil
import sys
import time

HERE = pathlib.Path(__file__).resolve().parent
ROOT = HERE.parents[1]
sys.path.insert(0, str(HERE.parent))

from faults.run import make_copy, repo_files  # noqa: E402

MODULES = ("opalg/algorithms/rnea.py", "opalg/algorithms/crba.py", "opalg/algorithms/aba.py",
           "opalg/algorithms/riccati.py", "opalg/spatial/vectors.py", "opalg/model/kinematics.py")
#: Cheapest-first, each run with -x: the identities, the independent routes, the reference values,
#: the input checks and the operation counts of the recursions.
TESTS = ("tests/test_core_values.py", "tests/test_identities.py", "tests/test_independent.py",
         "tests/test_errors.py", "tests/test_input.py", "tests/test_batch.py", "tests/test_opcount.py",
         "tests/test_faults_findings.py", "tests/test_free_joint.py", "tests/test_urdf.py",
         "tests/test_oracle_pinocchio.py", "tests/test_crba_sparse.py", "tests/test_hybrid.py")
WORK = ROOT / "build" / "mutants"
TIMEOUT = 120.0


def test_command(tests=TESTS) -> str:
    return " ".join([sys.executable, "-m", "pytest", "-o", "addopts=", "-x", "-q", "-p", "no:cacheprovider",
                     "-n", "0", "--no-header", "-rN", *tests])


_queue = None


def _init_worker(queue) -> None:
    copy = queue.get()
    os.chdir(copy)
    os.environ["PYTHONPATH"] = str(copy)
    os.environ["PYTHONPYCACHEPREFIX"] = str(ROOT / ".venv" / "pycache")
    os.environ["MPLBACKEND"] = "Agg"
    for k in ("OPALG_LEDGER", "PYTEST_ADDOPTS"):
        os.environ.pop(k, None)


def _run_one(job_id, mutations, command):
    from cosmic_ray.mutating import mutate_and_test

    return job_id, mutate_and_test(mutations, command, TIMEOUT)


def summarize(db_path: pathlib.Path, out=sys.stdout) -> dict:
    """Counts per module and operator, the survival rate, and the survivors' diffs (a file)."""
    from cosmic_ray.work_db import WorkDB, use_db
    from cosmic_ray.work_item import TestOutcome

    per_mod = collections.defaultdict(collections.Counter)
    per_op = collections.defaultdict(collections.Counter)
    survivors = []
    with use_db(str(db_path), WorkDB.Mode.open) as db:
        total = db.num_work_items
        for item, result in db.completed_work_items:
            m = item.mutations[0]
            outcome = result.test_outcome.value if result.test_outcome is not None else result.worker_outcome.value
            per_mod[str(m.module_path)][outcome] += 1
            per_op[m.operator_name][outcome] += 1
            if result.test_outcome == TestOutcome.SURVIVED:
                survivors.append((str(m.module_path), m.start_pos[0], m.operator_name, m.definition_name, result.diff))
    done = sum(sum(c.values()) for c in per_mod.values())
    killed = sum(c["killed"] for c in per_mod.values())
    surv = sum(c["survived"] for c in per_mod.values())
    print(f"\n{total} mutants enumerated, {done} run ({100 * done / max(total, 1):.0f} %, a seeded random "
          f"sample): {killed} killed, {surv} survived, {done - killed - surv} incompetent/other", file=out)
    rate = surv / max(killed + surv, 1)
    print(f"survival rate {100 * rate:.1f} % of the competent mutants run", file=out)
    print("\nper module (killed / survived / other):", file=out)
    for mod, c in sorted(per_mod.items()):
        print(f"  {mod:<32} {c['killed']:5d} {c['survived']:5d} {sum(c.values()) - c['killed'] - c['survived']:5d}",
              file=out)
    print("\nper operator (killed / survived / other):", file=out)
    for op, c in sorted(per_op.items(), key=lambda x: -x[1]["survived"]):
        print(f"  {op:<52} {c['killed']:5d} {c['survived']:5d} {sum(c.values()) - c['killed'] - c['survived']:5d}",
              file=out)
    lines = [f"# Surviving mutants ({len(survivors)})\n"]
    for mod, line, op, where, diff in sorted(survivors):
        lines.append(f"## {mod}:{line} in {where} ({op})\n\n```diff\n{diff.strip()}\n```\n")
    (db_path.parent / "survivors.md").write_text("\n".join(lines), encoding="utf-8")
    print(f"\nsurvivors' diffs: {db_path.parent / 'survivors.md'}", file=out)
    return {"total": total, "run": done, "killed": killed, "survived": surv, "rate": rate}


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--minutes", type=float, default=15.0, help="time budget (default 15)")
    ap.add_argument("--jobs", type=int, default=2)
    ap.add_argument("--resume", action="store_true", help="continue the pending mutants of the last session")
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--source", choices=("worktree", "head"), default="worktree",
                    help="mutate a copy of the work tree (default) or of the last commit")
    ap.add_argument("--report", action="store_true", help="only summarize the last session")
    ap.add_argument("--recheck", action="store_true",
                    help="run the last session's survivors again (after tests were added or TESTS grew)")
    args = ap.parse_args(argv)
    from cosmic_ray.commands import init
    from cosmic_ray.work_db import WorkDB, use_db

    db_path = WORK / "session.sqlite"
    if args.report:
        summarize(db_path)
        return 0
    t0 = time.perf_counter()
    copies = [WORK / f"copy{i}" for i in range(max(1, args.jobs))]
    files = repo_files(ROOT) if args.source == "worktree" else None
    for c in copies:
        shutil.rmtree(c, ignore_errors=True)
        make_copy(ROOT, files, c)
    if not (args.resume or args.recheck):
        db_path.unlink(missing_ok=True)
        cwd = os.getcwd()
        os.chdir(copies[0])          # mutation specs hold paths relative to the copy
        try:
            with use_db(str(db_path), WorkDB.Mode.create) as db:
                init([pathlib.Path(m) for m in MODULES], db, {})
        finally:
            os.chdir(cwd)
    command = test_command()
    # The unmutated copy must pass (it also fills the bytecode cache the mutant runs read).
    import subprocess

    env = {**os.environ, "PYTHONPATH": str(copies[0]), "PYTHONPYCACHEPREFIX": str(ROOT / ".venv" / "pycache"),
           "MPLBACKEND": "Agg"}
    env.pop("PYTHONDONTWRITEBYTECODE", None)
    base = subprocess.run(command.split(), cwd=copies[0], env=env, capture_output=True, text=True)
    if base.returncode != 0:
        print(base.stdout[-3000:], base.stderr[-2000:])
        raise SystemExit("the unmutated copy fails the mutants' tests")
    with use_db(str(db_path), WorkDB.Mode.open) as db:
        if args.recheck:
            from cosmic_ray.work_item import TestOutcome

            pending = [item for item, result in db.completed_work_items
                       if result.test_outcome == TestOutcome.SURVIVED]
        else:
            pending = list(db.pending_work_items)
    random.Random(args.seed).shuffle(pending)
    print(f"{len(pending)} mutants pending; budget {args.minutes:g} min on {len(copies)} workers", flush=True)
    deadline = t0 + 60 * args.minutes
    queue = mp.get_context("fork").Queue()
    for c in copies:
        queue.put(c)
    n_done = 0
    with cf.ProcessPoolExecutor(len(copies), mp_context=mp.get_context("fork"), initializer=_init_worker,
                                initargs=(queue,)) as pool, use_db(str(db_path), WorkDB.Mode.open) as db:
        futs = set()
        it = iter(pending)
        while True:
            while len(futs) < 2 * len(copies) and time.perf_counter() < deadline:
                item = next(it, None)
                if item is None:
                    break
                futs.add(pool.submit(_run_one, item.job_id, item.mutations, command))
            if not futs:
                break
            done, futs = cf.wait(futs, return_when=cf.FIRST_COMPLETED)
            for fu in done:
                job_id, result = fu.result()
                db.set_result(job_id, result)
                n_done += 1
                if n_done % 25 == 0:
                    print(f"  {n_done} mutants run, {time.perf_counter() - t0:.0f} s", flush=True)
    print(f"{n_done} mutants run in {time.perf_counter() - t0:.0f} s")
    summarize(db_path)
    return 0


if __name__ == "__main__":
    sys.exit(main())
