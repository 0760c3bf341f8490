#!/usr/bin/env python
"""Regenerate everything a reader sees: execute notebooks in place, rebuild figures/.

Usage: ``python tools/reproduce.py [NOTEBOOK ...]`` (``make reproduce``; the static site is
``make html``, tools/site/build.py, which never executes).  Notebooks are executed by :mod:`tools.execute_notebooks` (the
project's only writer of committed outputs); figure scripts are the modules listed
in ``FIGURE_SCRIPTS`` run as ``python -m``.
"""
from __future__ import annotations

import argparse
import pathlib
import subprocess
import sys

ROOT = pathlib.Path(__file__).resolve().parent.parent
# Modules whose ``__main__`` writes PNG/CSV figures; here into the committed figures/ (run by
# hand, they write to a git-ignored build/figures/: only `make reproduce` rewrites committed files).
FIGURE_SCRIPTS: list[str] = ["opalg.ider", "opalg.symbolic"]


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("notebooks", nargs="*", type=pathlib.Path)
    args = ap.parse_args(argv)
    sys.path.insert(0, str(ROOT / "tools"))
    from execute_notebooks import execute_all

    # The lecture notebooks and the dashboards served by `make panel` (notebooks/panels/).
    nbs = args.notebooks or sorted(p for p in (ROOT / "notebooks").rglob("*.ipynb")
                                  if ".ipynb_checkpoints" not in p.parts)
    execute_all(nbs)
    for mod in FIGURE_SCRIPTS:
        subprocess.run([sys.executable, "-m", mod, "--outdir", "figures"], cwd=ROOT, check=True)
    print(f"reproduce: {len(nbs)} notebook(s), {len(FIGURE_SCRIPTS)} figure script(s)")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
