"""Hygiene of the committed notebooks (strict nbval checks their outputs; this checks the rest).

nbval has holes these tests close: a cleared notebook
(``execution_count: null``) passes strict nbval while checking nothing, saved widget state
churns, and outputs can leak machine-specific paths.  The last test re-executes every
notebook with the project's executor in a scratch directory and requires a byte-identical
file, so the committed outputs are exactly what ``tools/reproduce.py`` writes.

A code cell may legitimately print nothing (imports, an exercise's answer cell): tag it
``silent`` in the cell metadata; every other code cell must have outputs.
"""

from __future__ import annotations

import json
import pathlib
import re
import shutil
import sys
import time

import pytest

ROOT = pathlib.Path(__file__).resolve().parent.parent
NOTEBOOKS = sorted((ROOT / "notebooks").glob("*.ipynb"))
IDER = ROOT / "notebooks" / "08_ider_control_forces.ipynb"
WIDGET_VIEW = "application/vnd.jupyter.widget-view+json"
MAX_BYTES = 2_000_000
# Machine-specific absolute paths that must not appear in committed outputs.
ABSOLUTE_PATH = re.compile(r"/work/|/tmp/|/root\b|/home/")
TEXT_MIMES = ("text/plain", "text/html", "text/latex", "text/markdown", "application/json")


def _load(path: pathlib.Path) -> dict:
    return json.loads(path.read_text(encoding="utf-8"))


def _code_cells(nb: dict) -> list[dict]:
    return [c for c in nb["cells"] if c["cell_type"] == "code"]


def _text(value) -> str:
    return "".join(value) if isinstance(value, list) else str(value)


def _output_texts(out: dict):
    """The human-readable text of one output (never base64 image data)."""
    if out["output_type"] == "stream":
        yield _text(out["text"])
    elif out["output_type"] == "error":
        yield out.get("ename", "") + ": " + out.get("evalue", "")
        yield "\n".join(out.get("traceback", []))
    for mime in TEXT_MIMES:
        if mime in out.get("data", {}):
            yield _text(out["data"][mime]) if mime != "application/json" else json.dumps(out["data"][mime])


def test_there_are_notebooks():
    assert IDER in NOTEBOOKS, f"{IDER.name} is missing"


@pytest.fixture(params=NOTEBOOKS, ids=[p.name for p in NOTEBOOKS])
def notebook(request):
    return request.param, _load(request.param)


def test_execution_counts_are_1_to_n(notebook):
    """Executed top to bottom in one fresh kernel; a cleared notebook (null counts) fails."""
    path, nb = notebook
    counts = [c.get("execution_count") for c in _code_cells(nb)]
    assert counts == list(range(1, len(counts) + 1)), f"{path.name}: execution counts {counts}"


def test_kernelspec_is_python3(notebook):
    path, nb = notebook
    assert nb["metadata"].get("kernelspec", {}).get("name") == "python3", path.name


def test_no_errors_outside_raises_exception_cells(notebook):
    path, nb = notebook
    for i, cell in enumerate(_code_cells(nb), 1):
        if "raises-exception" in cell.get("metadata", {}).get("tags", []):
            continue
        errors = [o for o in cell["outputs"] if o["output_type"] == "error"]
        assert not errors, f"{path.name}, code cell {i}: {errors[0].get('ename')}: {errors[0].get('evalue')}"


def test_no_saved_widget_state(notebook):
    path, nb = notebook
    assert "widgets" not in nb["metadata"], f"{path.name}: saved widget state in metadata"
    for i, cell in enumerate(_code_cells(nb), 1):
        for out in cell["outputs"]:
            assert WIDGET_VIEW not in out.get("data", {}), f"{path.name}, code cell {i}: widget view output"


def test_no_absolute_paths_in_outputs(notebook):
    path, nb = notebook
    for i, cell in enumerate(_code_cells(nb), 1):
        for out in cell["outputs"]:
            for text in _output_texts(out):
                m = ABSOLUTE_PATH.search(text)
                assert m is None, f"{path.name}, code cell {i}: absolute path {text[max(0, m.start() - 30):m.end() + 30]!r}"


def test_size_cap(notebook):
    path, _ = notebook
    size = path.stat().st_size
    assert size <= MAX_BYTES, f"{path.name} is {size} bytes (cap {MAX_BYTES}): lower dpi or figsize"


def test_outputs_present(notebook):
    """The notebook is not cleared: every code cell not tagged `silent` has outputs."""
    path, nb = notebook
    cells = _code_cells(nb)
    assert any(c["outputs"] for c in cells), f"{path.name} has no outputs at all"
    for i, cell in enumerate(cells, 1):
        if "silent" in cell.get("metadata", {}).get("tags", []):
            continue
        assert cell["outputs"], f"{path.name}, code cell {i} has no output (tag it 'silent' if intended)"


def test_png_figures_only(notebook):
    """Inline figures are PNG (SVG carries dates and random ids)."""
    path, nb = notebook
    for i, cell in enumerate(_code_cells(nb), 1):
        for out in cell["outputs"]:
            assert "image/svg+xml" not in out.get("data", {}), f"{path.name}, code cell {i}: SVG output"


@pytest.mark.parametrize("nb_path", NOTEBOOKS, ids=[p.name for p in NOTEBOOKS])
def test_executor_is_deterministic(tmp_path, nb_path):
    """Re-executing a notebook elsewhere (kernel cwd = a scratch dir) gives the committed bytes."""
    sys.path.insert(0, str(ROOT / "tools"))
    try:
        from execute_notebooks import execute
    finally:
        sys.path.remove(str(ROOT / "tools"))
    copy = tmp_path / nb_path.name
    shutil.copyfile(nb_path, copy)
    start = time.perf_counter()
    execute(copy)
    elapsed = time.perf_counter() - start
    fresh, committed = copy.read_bytes(), nb_path.read_bytes()
    if fresh != committed:
        a, b = _load(copy), _load(nb_path)
        diff = [i for i, (x, y) in enumerate(zip(a["cells"], b["cells"])) if x != y]
        pytest.fail(f"re-executed notebook differs from the committed one in cells {diff} "
                    f"(run `python tools/reproduce.py {nb_path.relative_to(ROOT)}`); took {elapsed:.0f} s")
