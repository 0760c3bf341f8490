#!/usr/bin/env python
"""The verification ledger: what the test suite proved, per id of ``docs/REFERENCE.md``.

Usage: ``python tools/ledger.py RECORDS [--out DIR]`` (``make ledger`` runs the tests marked
``verifies`` with ``OPALG_LEDGER=RECORDS`` first, then this, then the site build, which renders
``build/ledger/LEDGER.md`` as the page ``build/ledger/LEDGER.html`` of ``build/html/``).

``RECORDS`` holds the JSON lines that ``tests/ledger.py`` wrote while the tests ran: one record
per marked test, with its ids, routes, outcome, every comparison (error, tolerance and the
tolerance's derivation) and every model it built.  Nothing here re-checks anything: the page
only counts and summarises what the tests measured.  Writes ``DIR/LEDGER.md`` and
``DIR/ledger.json`` (default ``DIR``: ``build/ledger``, git-ignored).
"""
from __future__ import annotations

import argparse
import json
import pathlib
import re
from collections import defaultdict

ROOT = pathlib.Path(__file__).resolve().parent.parent
COND = re.compile(r", cond = ([-+0-9.e]+)$")
HEADING = re.compile(r"^#{3,4} ([A-K](?:[1-9][0-9]?|0)[a-z]?) — (.+)$", re.M)


def reference_ids(path: pathlib.Path = ROOT / "docs/REFERENCE.md") -> dict[str, str]:
    """The ids of docs/REFERENCE.md and their names, in the file's order."""
    return {m.group(1): m.group(2).strip() for m in HEADING.finditer(path.read_text("utf-8"))}


def load(records: pathlib.Path) -> list[dict]:
    """Every record of every ``*.jsonl`` file in ``records``."""
    out = []
    for f in sorted(records.glob("*.jsonl")):
        out += [json.loads(line) for line in f.read_text("utf-8").splitlines() if line.strip()]
    return out


def summarise(records: list[dict], ids: dict[str, str]) -> dict[str, dict]:
    """Per id: tests, outcomes, routes, models, checks, the worst error over its tolerance."""
    rows: dict[str, dict] = {}
    for rec in records:
        for i in rec["ids"]:
            row = rows.setdefault(i, {"tests": set(), "failed": set(), "skipped": set(),
                                      "routes": set(), "models": 0, "shapes": set(),
                                      "topologies": set(), "orders": set(), "joints": set(),
                                      "n": set(), "checks": 0, "worst": None, "tols": set(),
                                      "whys": defaultdict(int), "conds": defaultdict(list),
                                      "unstated": 0})
            row["tests"].add(rec["test"])
            if rec["outcome"] == "failed":
                row["failed"].add(rec["test"])
            if rec["outcome"] == "skipped":
                row["skipped"].add(rec["test"])
            row["routes"].update(rec["routes"])
            for m in rec["models"]:
                row["models"] += 1
                row["shapes"].add((m["topology"], m["n"], m["order"], tuple(m["joints"])))
                row["topologies"].add(m["topology"])
                row["orders"].add(m["order"])
                row["joints"].update(m["joints"])
                row["n"].add(m["n"])
            for c in rec["checks"]:
                row["checks"] += 1
                ratio = float("inf") if c["err"] is None else (
                    c["err"] / c["tol"] if c["tol"] > 0 else (0.0 if c["err"] == 0 else float("inf")))
                if row["worst"] is None or ratio > row["worst"][0]:
                    row["worst"] = (ratio, c["what"], rec["test"])
                row["tols"].add(c["tol"])
                if c["why"]:
                    # cond_tol's derivations differ only in the condition number: one line
                    # per rule, with the range of the condition numbers met.
                    m = COND.search(c["why"])
                    rule = c["why"][:m.start()] if m else c["why"]
                    row["whys"][rule] += 1
                    if m:
                        row["conds"][rule].append(float(m.group(1)))
                else:
                    row["unstated"] += 1
    unknown = sorted(set(rows) - set(ids))
    if unknown:
        raise SystemExit(f"ledger: tests are marked with ids that docs/REFERENCE.md lacks: {unknown}")
    return rows


def _joints(kinds: set) -> str:
    single = sorted(k for k in kinds if len(k) == 1)
    multi = sorted(k for k in kinds if 1 < len(k) <= 3 and k.isupper())
    other = sorted(kinds - set(single) - set(multi))
    parts = single + ([f"{len(multi)} multi-axis ({', '.join(multi[:4])}{', …' if len(multi) > 4 else ''})"]
                      if multi else []) + other
    return ", ".join(parts) or "—"


def _cell(text: str) -> str:
    return text.replace("|", "\\|").replace("\n", " ")


def markdown(rows: dict[str, dict], ids: dict[str, str]) -> str:
    """The ledger page: a summary table, then per id its routes, tests and tolerances."""
    covered = [i for i in ids if i in rows]
    missing = [i for i in ids if i not in rows]
    failed = sum(bool(rows[i]["failed"]) for i in covered)
    lines = [
        "# Verification ledger",
        "",
        "What the test suite verified, per identity and algorithm of the reference "
        "(`docs/REFERENCE.md`), built by `make ledger` from what the tests recorded while they "
        "ran: the routes each test compares, the models it built, and every comparison's error, "
        "tolerance and the tolerance's derivation. **worst err/tol** is the largest ratio of an "
        "error to its tolerance over all the comparisons recorded for the id (below 1 means every "
        "check passed; a ratio near 1 is a tight tolerance, a ratio of 1e-3 a margin of 1000).",
        "",
        f"{len(covered)} of {len(ids)} ids are verified by recorded tests"
        + (f"; **{failed} with a failing test**" if failed else "") + ".",
        "",
        "| id | name | tests | models (kinds) | checks | worst err/tol | tolerances |",
        "|---|---|---|---|---|---|---|",
    ]
    for i in covered:
        r = rows[i]
        worst = "—" if r["worst"] is None else f"{r['worst'][0]:.1e}"
        tol = "—" if not r["tols"] else (f"{min(r['tols']):.0e}" if len(r["tols"]) == 1 else
                                         f"{min(r['tols']):.0e} … {max(r['tols']):.0e}")
        tests = f"{len(r['tests'])}" + (f" ({len(r['failed'])} failed)" if r["failed"] else "")
        models = (f"{r['models']}: {len(r['shapes'])} distinct, {', '.join(sorted(r['topologies']))}"
                  if r["models"] else "—")
        lines.append(f"| {i} | {_cell(ids[i])} | {tests} | {models} | {r['checks']} | {worst} | {tol} |")
    lines += ["", "## Ids with no recorded test", ""]
    lines += ([f"- {i} — {ids[i]}" for i in missing] or ["None."])
    lines += ["", "## Per id", ""]
    for i in covered:
        r = rows[i]
        lines += [f"### {i} — {ids[i]}", ""]
        lines += [f"- **Routes compared:** {'; '.join(sorted(r['routes'])) or 'not stated'}."]
        if r["models"]:
            lines += [f"- **Models:** {r['models']} built ({len(r['shapes'])} distinct), "
                      f"topologies {', '.join(sorted(r['topologies']))}; label orders "
                      f"{', '.join(sorted(r['orders']))}; {min(r['n'])}–{max(r['n'])} bodies; "
                      f"joints {_joints(r['joints'])}."]
        if r["worst"] is not None:
            ratio, what, test = r["worst"]
            lines += [f"- **Worst error / tolerance:** {ratio:.2e} ({_cell(what)}, in `{test}`), "
                      f"over {r['checks']} comparisons."]
        whys = sorted(r["whys"].items(), key=lambda kv: -kv[1])
        for why, count in whys[:6]:
            conds = r["conds"].get(why)
            span = (f", cond {min(conds):.0e} … {max(conds):.0e}" if conds and min(conds) != max(conds)
                    else f", cond {conds[0]:.0e}" if conds else "")
            lines += [f"- **Tolerance** ({count} comparisons): {_cell(why)}{span}."]
        if len(whys) > 6:
            lines += [f"- … and {len(whys) - 6} other derivations."]
        if r["unstated"]:
            lines += [f"- {r['unstated']} comparisons whose tolerance records no derivation."]
        lines += ["- **Tests:** " + ", ".join(f"`{t}`" + (" (failed)" if t in r["failed"] else "")
                                             for t in sorted(r["tests"])), ""]
    return "\n".join(lines) + "\n"


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("records", type=pathlib.Path, help="the folder OPALG_LEDGER named")
    ap.add_argument("--out", type=pathlib.Path, default=ROOT / "build" / "ledger")
    args = ap.parse_args(argv)
    records = load(args.records)
    if not records:
        print(f"ledger: no records in {args.records} (run the tests with OPALG_LEDGER={args.records})")
        return 1
    ids = reference_ids()
    rows = summarise(records, ids)
    args.out.mkdir(parents=True, exist_ok=True)
    (args.out / "LEDGER.md").write_text(markdown(rows, ids), encoding="utf-8")
    plain = {i: {**{k: sorted(v) if isinstance(v, set) else v for k, v in r.items() if k not in ("whys", "conds")},
                 "whys": dict(r["whys"]), "conds": dict(r["conds"])} for i, r in rows.items()}
    (args.out / "ledger.json").write_text(json.dumps(plain, indent=1, default=list), encoding="utf-8")
    print(f"ledger: {len(records)} test records, {len(rows)} of {len(ids)} ids covered; "
          f"wrote {args.out / 'LEDGER.md'}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
