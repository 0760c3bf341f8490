#!/usr/bin/env python
"""Copy the notebooks into ``student/`` (git-ignored), a workspace for answering the exercises.

Usage: ``python tools/student.py [--force]`` (``make student``).  A notebook already in
``student/`` is kept, because it may hold the student's answers; ``--force`` replaces them all
(the old copies are moved to ``student/.previous/`` first, never deleted).  The committed
notebooks under ``notebooks/`` stay as ``make test`` expects them.
"""
from __future__ import annotations

import argparse
import pathlib
import shutil
import sys

ROOT = pathlib.Path(__file__).resolve().parent.parent


def main(argv: list[str] | None = None, root: pathlib.Path = ROOT) -> int:
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--force", action="store_true", help="replace existing copies (kept in student/.previous/)")
    args = ap.parse_args(argv)
    src, dst = root / "notebooks", root / "student"
    dst.mkdir(exist_ok=True)
    copied, kept = [], []
    for nb in sorted(src.glob("*.ipynb")):
        target = dst / nb.name
        if target.exists() and not args.force:
            kept.append(nb.name)
            continue
        if target.exists():
            (dst / ".previous").mkdir(exist_ok=True)
            shutil.move(target, dst / ".previous" / nb.name)
        shutil.copyfile(nb, target)
        copied.append(nb.name)
    print(f"student/: copied {len(copied)} notebook(s)" + (f", kept {len(kept)} with your work "
          f"(--force to replace them)" if kept else ""))
    print("Open them with: .venv/bin/jupyter lab student")
    return 0


if __name__ == "__main__":
    sys.exit(main())
