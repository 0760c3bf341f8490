#!/usr/bin/env python
"""Regenerate everything a reader sees: execute notebooks in place, rebuild figures/.

Usage: ``python tools/reproduce.py [--html] [NOTEBOOK ...]`` (``make reproduce`` /
``make html``).  Notebooks are executed by :mod:`tools.execute_notebooks` (the
project's only writer of committed outputs); figure scripts are the modules listed
in ``FIGURE_SCRIPTS`` run as ``python -m``.
"""
from __future__ import annotations

import argparse
import pathlib
import subprocess
import sys

ROOT = pathlib.Path(__file__).resolve().parent.parent
# Modules whose ``__main__`` regenerates PNG/CSV files in figures/ (added by later issues).
FIGURE_SCRIPTS: list[str] = ["opalg.ider", "opalg.symbolic"]


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--html", action="store_true", help="also export notebooks to static HTML")
    ap.add_argument("notebooks", nargs="*", type=pathlib.Path)
    args = ap.parse_args(argv)
    sys.path.insert(0, str(ROOT / "tools"))
    from execute_notebooks import execute_all, export_html

    nbs = args.notebooks or sorted((ROOT / "notebooks").glob("*.ipynb"))
    execute_all(nbs)
    for mod in FIGURE_SCRIPTS:
        subprocess.run([sys.executable, "-m", mod], cwd=ROOT, check=True)
    if args.html:
        export_html(nbs, ROOT / "build" / "html")
    print(f"reproduce: {len(nbs)} notebook(s), {len(FIGURE_SCRIPTS)} figure script(s)")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
