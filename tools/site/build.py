#!/usr/bin/env python
"""Build the course site with Sphinx, myst-nb and sphinx-book-theme (``make html``).

Usage: ``python tools/site/build.py [--instructor] [--out DIR]``.  The students' site goes to
``build/html/`` and has no model answers; ``--instructor`` (``make html-instructor``) adds the
pages of ``docs/solutions/`` and goes to ``build/html-instructor/``.

Sphinx does the work (configuration: ``tools/site/conf.py``).  This script does what it cannot:

* it lays out Sphinx's source tree next to the output, copies of the repository's files at
  their repository paths (``notebooks/*.ipynb`` and ``notebooks/README.md``, ``docs/``,
  ``figures/``, ``README.md``, ``CONTRIBUTING.md``, and
  ``build/ledger/LEDGER.md`` once ``make ledger`` has written it), so a relative link such as
  ``../docs/NOTATION.md`` in a notebook resolves to that page;
* it writes the landing page, ``index.md``: the reading order of ``notebooks/syllabus.toml``
  with objectives, prerequisites, background and reading times, and the table of contents in
  that order (the theme draws the sidebar and the previous/next links from it).

The notebooks are rendered as committed, never executed; nothing outside the output's folder
is written (the output goes under build/ or outside the repository).
"""
from __future__ import annotations

import argparse
import json
import math
import os
import pathlib
import shutil
import subprocess
import sys
import time
import tomllib

ROOT = pathlib.Path(__file__).resolve().parents[2]
CONF = pathlib.Path(__file__).resolve().parent
WORDS_PER_MINUTE = 150        # reading-time rule, stated on the landing page
MINUTES_PER_CODE_CELL = 0.5


class SiteError(Exception):
    """The site cannot be built as asked (the message says what to change)."""


def syllabus_entries(syllabus: dict, notebooks: list[str]) -> list[dict]:
    """The entries in reading order, checked against the notebooks' file names.

    >>> syllabus_entries({"notebook": [{"file": "02_b.ipynb", "objectives": ["x"]}]}, ["01_a.ipynb"])
    Traceback (most recent call last):
    ...
    build.SiteError: notebooks/syllabus.toml does not match the notebooks: 01_a.ipynb is not in the syllabus (add a [[notebook]] entry for it); the syllabus names 02_b.ipynb, which does not exist
    """
    entries = syllabus.get("notebook", [])
    names = [e.get("file", "") for e in entries]
    problems = [f"{n} is not in the syllabus (add a [[notebook]] entry for it)" for n in notebooks if n not in names]
    problems += [f"the syllabus names {n}, which does not exist" for n in names if n not in notebooks]
    seen: set[str] = set()
    for e, n in zip(entries, names):
        problems += [f"{n} is listed twice"] * (n in seen) + [f"{n}: no objectives"] * (not e.get("objectives"))
        problems += [f"{n}: prerequisite {p} is not an earlier notebook" for p in e.get("prerequisites", []) if p not in seen]
        seen.add(n)
    if problems:
        raise SiteError("notebooks/syllabus.toml does not match the notebooks: " + "; ".join(problems))
    return entries


def reading_minutes(nb: dict) -> int:
    """Markdown words at 150 a minute plus half a minute per code cell, rounded up.

    >>> reading_minutes({"cells": [{"cell_type": "markdown", "source": "w " * 300}, {"cell_type": "code", "source": "1"}]})
    3
    """
    text = lambda c: "".join(c["source"])  # noqa: E731 (nbformat: a string or a list of lines)
    words = sum(len(text(c).split()) for c in nb["cells"] if c["cell_type"] == "markdown")
    code = sum(1 for c in nb["cells"] if c["cell_type"] == "code" and text(c).strip())
    return max(1, math.ceil(words / WORDS_PER_MINUTE + MINUTES_PER_CODE_CELL * code))


def index_md(root: pathlib.Path, pages: list[str], instructor: bool) -> str:
    """The landing page (MyST markdown): reading order from the syllabus, then the tables of contents."""
    with open(root / "notebooks" / "syllabus.toml", "rb") as f:
        syllabus = tomllib.load(f)
    entries = syllabus_entries(syllabus, sorted(p.name for p in (root / "notebooks").glob("*.ipynb")))
    minutes = {e["file"]: reading_minutes(json.loads((root / "notebooks" / e["file"]).read_text("utf-8")))
               for e in entries}
    out = [f"# {syllabus.get('title', 'Contents')}", "", syllabus.get("intro", "").strip(), "",
           f"**Reading time** is estimated from each notebook: its markdown words at {WORDS_PER_MINUTE} "
           f"words a minute (technical text) plus {MINUTES_PER_CODE_CELL:g} minute per code cell, rounded "
           f"up to the minute. In all, about {sum(minutes.values())} minutes for {len(entries)} notebooks.",
           "", "## Reading order", ""]
    if (root / "notebooks" / "README.md").exists():
        out[-2:-2] = ["**How to work through the course**, do the exercises and check your answers: "
                      "[](/notebooks/README).", ""]
    for i, e in enumerate(entries, 1):
        pre = ", ".join(f"[](notebooks/{p})" for p in e.get("prerequisites", [])) or "none"
        pre += f". Background: {e['background']}" if e.get("background") else ""
        out += [f"{i}. **[](notebooks/{e['file']})**", "",
                f"   About {minutes[e['file']]} min · *Prerequisites:* {pre}", "", "   After it you can:", ""]
        out += [f"   - {o}" for o in e["objectives"]] + [""]
    guide = ["notebooks/README"] if (root / "notebooks" / "README.md").exists() else []   # the students' guide
    toc = [("Course", guide + [f"notebooks/{e['file'][:-6]}" for e in entries]), ("Reference", pages)]
    out += ["## Reference pages", ""] + [f"- [](/{p})" for p in pages] + [""]
    if instructor:   # the lecturers' build only
        answers = [f"docs/solutions/{p.stem}" for p in sorted((root / "docs/solutions").glob("*.md"))]
        toc.append(("Model answers", answers))
        out += ["## Model answers", ""] + [f"- [](/{p})" for p in answers] + [""]
    for caption, docs in toc:
        out += ["```{toctree}", ":hidden:", f":caption: {caption}", "", *docs, "```", ""]
    return "\n".join(out)


def stage(root: pathlib.Path, src: pathlib.Path, instructor: bool) -> None:
    """Sphinx's source tree ``src``: copies of the repository's pages and the landing page.

    Copies, not links: MyST resolves a relative link from the real path of its page.
    """
    answers = root / "docs" / "solutions"
    files = [*(root / "notebooks").glob("*.ipynb"), *(root / "notebooks").glob("README.md"),
             *(p for p in (root / "figures").glob("*") if p.suffix != ".md"),
             *(p for p in (root / "docs").rglob("*") if p.is_file() and (instructor or not p.is_relative_to(answers))),
             *(root / n for n in ("README.md", "CONTRIBUTING.md", "build/ledger/LEDGER.md") if (root / n).exists())]
    for f in files:
        (src / f.relative_to(root)).parent.mkdir(parents=True, exist_ok=True)
        shutil.copy2(f, src / f.relative_to(root))
    # The README, every markdown page of docs/ but the answers (a folder after its parent's pages,
    # its index first), the contributors' page, the ledger.
    docs = sorted((p.relative_to(root) for p in (root / "docs").rglob("*.md") if not p.is_relative_to(answers)),
                  key=lambda p: (p.parts[:-1], p.stem != "index", p.stem))
    pages = [n[:-3] for n in ("README.md", *map(str, docs), "CONTRIBUTING.md", "build/ledger/LEDGER.md")
             if (root / n).exists()]
    (src / "index.md").write_text(index_md(root, pages, instructor), encoding="utf-8")


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--instructor", action="store_true", help="add the model answers (docs/solutions/)")
    ap.add_argument("--out", type=pathlib.Path, help="default: build/html, or build/html-instructor")
    ap.add_argument("--root", type=pathlib.Path, default=ROOT, help="the repository (default: this one)")
    args = ap.parse_args(argv)
    root = args.root.resolve()
    out = (args.out or root / "build" / ("html-instructor" if args.instructor else "html")).resolve()
    if out.is_relative_to(root) and not out.is_relative_to(root / "build"):
        print(f"build.py: {out}: the site is written under build/ or outside the repository only", file=sys.stderr)
        return 2
    # Sphinx's source tree and cache, made anew each time: an incremental build would keep
    # pages (the sidebar, a resolved link) written against an older tree.
    work = out.with_name(out.name + "-sphinx")
    for old, mark in ((out, "objects.inv"), (work, "src")):
        if old.exists() and any(old.iterdir()) and not (old / mark).exists():
            print(f"build.py: {old} exists and is not a site this script built: not replaced", file=sys.stderr)
            return 2
        if old.exists():
            shutil.rmtree(old)
    try:
        stage(root, work / "src", args.instructor)
    except SiteError as e:
        print(f"build.py: {e}", file=sys.stderr)
        return 1
    # Any warning fails the build (a dead link, a page outside the table of contents, bad math
    # markup); --keep-going reports them all first.
    cmd = [sys.executable, "-m", "sphinx", "-b", "html", "-q", "-W", "--keep-going", "-c", str(CONF),
           "-d", str(work / "doctrees"), *(["-t", "instructor"] if args.instructor else []),
           str(work / "src"), str(out)]
    t0 = time.perf_counter()
    status = subprocess.run(cmd, env={**os.environ, "PYTHONPATH": str(CONF)}).returncode
    if status == 0:
        pages = sum(1 for p in out.rglob("*.html") if not p.relative_to(out).parts[0].startswith("_"))
        print(f"build.py: {pages} pages in {time.perf_counter() - t0:.0f} s; open {out / 'index.html'}"
              f"{' (with the model answers)' if args.instructor else ''}")
    return status


if __name__ == "__main__":
    raise SystemExit(main())
