"""Hygiene of the committed notebooks (strict nbval checks their outputs; this checks the rest).

nbval has holes these tests close: a cleared notebook
(``execution_count: null``) passes strict nbval while checking nothing, saved widget state
churns, and outputs can leak machine-specific paths.  Every ``.ipynb`` under ``notebooks/`` is
picked up, subfolders (``panels/``) included.

A code cell may legitimately print nothing (imports, an exercise's answer cell): tag it
``silent`` in the cell metadata; every other code cell must have outputs.
"""

from __future__ import annotations

import json
import pathlib
import re

import pytest

ROOT = pathlib.Path(__file__).resolve().parent.parent
NOTEBOOKS = sorted(p for p in (ROOT / "notebooks").rglob("*.ipynb")
                   if ".ipynb_checkpoints" not in p.parts)
# Test ids: the path below notebooks/ ("08_ider_control_forces.ipynb", "panels/x.ipynb").
IDS = [p.relative_to(ROOT / "notebooks").as_posix() for p in NOTEBOOKS]
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


@pytest.fixture(params=NOTEBOOKS, ids=IDS)
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


def _sanitize(text: str) -> str:
    """``text`` after the sanitizers of tools/nbval_sanitize.cfg, read and applied as nbval does
    (each section's ``regex`` replaced by its ``replace``, in file order)."""
    import configparser

    cfg = configparser.ConfigParser(interpolation=None)
    cfg.read(ROOT / "tools" / "nbval_sanitize.cfg", encoding="utf8")
    for section in cfg.sections():
        text = re.sub(cfg[section]["regex"], cfg[section]["replace"], text)
    return text


def test_printed_decade_is_sanitized_but_the_rest_of_a_check_line_is_not():
    """A check's error decade moves with the CPU (``opalg.course.report`` asserts the tolerance itself,
    on every machine); the label and the tolerance it prints are compared exactly."""
    a = "M vs dense: rel. error < 1e-12 (tolerance 1e-10: cond eps)\n"
    assert _sanitize(a) == _sanitize(a.replace("< 1e-12", "≤ 1e-13"))
    assert _sanitize(a) != _sanitize(a.replace("tolerance 1e-10", "tolerance 1e-09"))
    assert _sanitize(a) != _sanitize(a.replace("M vs", "ℳ vs"))
