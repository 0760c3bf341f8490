"""Accuracy of every recursion against the dense LU route, over >= 1,000 seeded random models.

Runs the generator and the criterion that ``tests/test_property.py`` defines (this script
uses those very functions, so the numbers are those the property tests judge) with a seeded numpy driver, and prints
per joint-kind category (revolute-only, prismatic, helical, multi-axis, spherical: the most
demanding joint a model has) and per recursion:

* models; states judged (not refused); states failing ``err <= 10 err_dense + floor``
  (err_dense: the largest error of the float64 dense routes at that state; floor: ACC eps, plus
  min(cond_eq(ℳ) eps, LOST) for the recursions that solve with ℳ, see ``tests/test_property.py``)
  or refused without justification (a refused call counts all its states);
* the worst err / (cond(ℳ) eps), the classical bound's share the recursion uses;
* the worst err / err_dense (err_dense floored at eps) and the worst err / (10 err_dense + floor)
  (the criterion's ratio: > 1 fails);
* refusals (OpalgError of a whole batched call): allowed (LU lost at some state of the
  call) / unjustified, with their reasons below the table.

Usage::

    .venv/bin/python tools/property_report.py              # 1,000 models, n <= 12, spherical chains <= 30
    .venv/bin/python tools/property_report.py --models 200 --max-n 8
    .venv/bin/python tools/property_report.py --show 228   # every verdict of one seed

A model of seed s is ``draw_case(NumpySource(s), max_n, max_chain)``; seeds that draw an
invalid joint are skipped (and counted).  Takes a few minutes on one core.
"""

from __future__ import annotations

import argparse
import collections
import pathlib
import sys
import time

ROOT = pathlib.Path(__file__).resolve().parents[1]
sys.path[:0] = [str(ROOT), str(ROOT / "tests")]

import numpy as np  # noqa: E402

import test_property as tp  # noqa: E402


CHAIN_BUCKETS = ((1, 5), (6, 10), (11, 15), (16, 20), (21, 25), (26, 30), (31, 10**6))


class Cell:
    """Aggregate of one (category, recursion)."""

    def __init__(self):
        self.models = set()
        self.states = 0
        self.fails = 0
        self.fail_seeds = []
        self.unjudged = 0
        self.by_cond = 0.0
        self.by_dense = 0.0
        self.crit = 0.0
        self.worst_err = 0.0
        self.worst_seed = None
        self.refusals = collections.Counter()   # (allowed, reason) -> calls

    def add(self, seed, recs):
        self.models.add(seed)
        if recs and recs[0].refused is not None:
            r = recs[0]
            self.refusals[(r.ok, tp.refusal_reason(r.refused))] += 1
            if not r.ok:
                self.fails += len(recs)
                self.fail_seeds.append(seed)
            return
        failed = False
        for r in recs:
            if not np.isfinite(r.err):
                if r.ok:
                    self.unjudged += 1
                else:
                    self.fails += 1
                    failed = True
                continue
            self.states += 1
            self.worst_err = max(self.worst_err, r.err)
            if not r.ok:
                self.fails += 1
                failed = True
            if np.isfinite(r.cond) and r.cond > 0:
                self.by_cond = max(self.by_cond, r.err / (r.cond * tp.EPS))
            self.by_dense = max(self.by_dense, r.err / max(r.err_dense, tp.EPS))
            if r.ratio > self.crit:
                self.crit, self.worst_seed = r.ratio, seed
        if failed:
            self.fail_seeds.append(seed)


def show(seed, args):
    case = tp.draw_case(tp.NumpySource(seed), args.max_n, args.max_chain)
    print(repr(case))
    print(f"frames: {[f[0] for f in case.frames]}")
    sts = tp.states(case)
    for name in tp.RECURSIONS:
        for r in tp.evaluate(case, name, sts):
            verdict = "ok  " if r.ok else "FAIL"
            print(f"{name:15s} {str(r.state):8s} {verdict} err {r.err:9.2e}  err_dense {r.err_dense:9.2e}  "
                  f"cond {r.cond:9.2e}  cond_eq {r.cond_eq:9.2e}  LU lost {str(r.lost):5s} {r.refused or ''} {r.why}")


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--models", type=int, default=1000, help="random models to evaluate (default 1000)")
    ap.add_argument("--seed", type=int, default=0, help="first seed (default 0)")
    ap.add_argument("--max-n", type=int, default=12, help="largest number of bodies (default 12)")
    ap.add_argument("--max-chain", type=int, default=30,
                    help="longest chain of spherical joints (default 30)")
    ap.add_argument("--show", type=int, default=None, metavar="SEED", help="print every verdict of one seed")
    args = ap.parse_args(argv)
    if args.show is not None:
        show(args.show, args)
        return 0

    import opalg
    t0 = time.perf_counter()
    cells = collections.defaultdict(Cell)
    chains = collections.defaultdict(Cell)
    per_cat = collections.Counter()
    rejected, seed, done = 0, args.seed, 0
    while done < args.models:
        try:
            case = tp.draw_case(tp.NumpySource(seed), args.max_n, args.max_chain)
        except tp.Rejected:
            rejected += 1
            seed += 1
            continue
        per_cat[case.category] += 1
        sts = tp.states(case)
        for name in tp.RECURSIONS:
            if name in tp.REFERENCE_BASED and not tp.EXTENDED:
                continue
            recs = tp.evaluate(case, name, sts)
            cells[(case.category, name)].add(seed, recs)
            drift = case.info["palette"] == "spherical-chain" and "gimbal" not in case.info
            if name == "aba" and drift:
                n = case.model.n
                bucket = next(b for b in CHAIN_BUCKETS if b[0] <= n <= b[1])
                chains[bucket].add(seed, recs)
        done += 1
        seed += 1
    dt = time.perf_counter() - t0

    print(f"opalg {opalg.__version__} from {pathlib.Path(opalg.__file__).parent}")
    print(f"{done} models (seeds {args.seed}..{seed - 1}, {rejected} draws rejected), n <= {args.max_n}, "
          f"spherical chains <= {args.max_chain} bodies, {dt:.0f} s")
    print(f"helical joints: {'yes' if tp.HELICAL else 'not in opalg yet'}; "
          f"builder joints={tp.BUILDER_JOINTS!r}; "
          f"extended reference: {'yes' if tp.EXTENDED else 'NO (reference-based rows skipped)'}")
    print("criterion: err <= %g err_dense + %g eps [+ min(cond_eq eps, %g) for %s]; refusal allowed only "
          "where LU is lost (rel. error > %g)" % (tp.FACTOR, tp.ACC, tp.LOST, ", ".join(tp.SOLVES), tp.LOST))
    print("models per category: " + ", ".join(f"{c} {per_cat[c]}" for c in tp.CATEGORIES))
    print()
    head = (f"{'category':14s} {'recursion':15s} {'models':>6s} {'judged':>6s} {'fail':>5s} "
            f"{'err/(cond eps)':>14s} {'err/dense':>10s} {'crit':>8s} {'refused ok/bad':>14s}  worst seed")
    print(head)
    print("-" * len(head))
    reasons = collections.Counter()
    for cat in tp.CATEGORIES:
        for name in tp.RECURSIONS:
            c = cells.get((cat, name))
            if c is None:
                continue
            ok = sum(v for (a, _), v in c.refusals.items() if a)
            bad = sum(v for (a, _), v in c.refusals.items() if not a)
            for (a, why), v in c.refusals.items():
                reasons[(cat, "allowed" if a else "UNJUSTIFIED", why)] += v
            print(f"{cat:14s} {name:15s} {len(c.models):6d} {c.states:6d} {c.fails:5d} "
                  f"{c.by_cond:14.2e} {c.by_dense:10.2e} {c.crit:8.2f} {ok:>6d}/{bad:<6d}  "
                  f"{c.worst_seed if c.worst_seed is not None else '-'}")
        print()
    if chains:
        print("ABA on chains of spherical joints only, by length (random q, no gimbal-near draws):")
        print(f"  {'n':>7s} {'models':>6s} {'judged':>6s} {'fail':>5s} {'worst err':>10s} "
              f"{'err/dense':>10s} {'refused ok/bad':>14s}")
        for b in CHAIN_BUCKETS:
            c = chains.get(b)
            if c is None:
                continue
            ok = sum(v for (a, _), v in c.refusals.items() if a)
            bad = sum(v for (a, _), v in c.refusals.items() if not a)
            print(f"  {b[0]:>3d}-{b[1]:<3d} {len(c.models):6d} {c.states:6d} {c.fails:5d} "
                  f"{c.worst_err:10.2e} "
                  f"{c.by_dense:10.2e} {ok:>6d}/{bad:<6d}")
        print()
    if reasons:
        print("refusals (calls, summed over recursions) by category and reason:")
        for (cat, kind, why), v in sorted(reasons.items()):
            print(f"  {cat:14s} {kind:11s} {v:5d}  {why}")
    fails = sorted({s for c in cells.values() for s in c.fail_seeds})
    print(f"\nseeds with a failing verdict ({len(fails)}): {fails[:40]}{' ...' if len(fails) > 40 else ''}")
    print("reproduce one: tools/property_report.py --show SEED")
    return 0


if __name__ == "__main__":
    sys.exit(main())
