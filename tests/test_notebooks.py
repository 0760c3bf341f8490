"""Hygiene of the committed notebooks (strict nbval checks their outputs; this checks the rest).

nbval has holes these tests close: a cleared notebook
(``execution_count: null``) passes strict nbval while checking nothing, saved widget state
churns, and outputs can leak machine-specific paths.  The last test re-executes every
notebook with the project's executor in a scratch directory and requires a byte-identical
file, so the committed outputs are exactly what ``tools/reproduce.py`` writes.  That execution is
the one strict nbval compares cell by cell (``conftest.notebook_run``: each notebook is executed
once per session, by the project executor, in a scratch directory), so the two checks cost one
run.  Every ``.ipynb`` under ``notebooks/`` is picked up, subfolders (``panels/``) included.

A code cell may legitimately print nothing (imports, an exercise's answer cell): tag it
``silent`` in the cell metadata; every other code cell must have outputs.
"""

from __future__ import annotations

import json
import sys
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


def _executor():
    sys.path.insert(0, str(ROOT / "tools"))
    try:
        import execute_notebooks
    finally:
        sys.path.pop(0)
    return execute_notebooks


def _same_but_figure_pixels(saved: dict, fresh: dict) -> bool:
    """The two notebooks are equal but for PNG figures that differ in few pixels: the same
    cells, sources, metadata and text outputs (tools/execute_notebooks.outputs_match).  A
    figure of round-off-level values is drawn a few pixels apart on another CPU."""
    strip = [{**c, "outputs": []} for c in saved["cells"]], [{**c, "outputs": []} for c in fresh["cells"]]
    if strip[0] != strip[1] or {k: v for k, v in saved.items() if k != "cells"} != \
            {k: v for k, v in fresh.items() if k != "cells"}:
        return False
    match = _executor().outputs_match
    return all(match(a.get("outputs", []), b.get("outputs", []))[0]
               for a, b in zip(saved["cells"], fresh["cells"]))


@pytest.mark.parametrize("nb_path", NOTEBOOKS, ids=IDS)
def test_executor_is_deterministic(nb_path, notebook_execution):
    """Re-executing a notebook elsewhere (kernel cwd = a scratch dir) gives the committed bytes,
    or the committed notebook but for figures of round-off-level values drawn a few pixels
    apart on another CPU (tools/execute_notebooks.PNG_TOLERANCE; text outputs stay exact).

    The execution is the session's shared one (``conftest.notebook_run``); under pytest-xdist
    this test and the notebook's nbval cells are in one ``xdist_group``, so it runs once.
    """
    run = notebook_execution(nb_path)
    rerun = f"run `python tools/reproduce.py {nb_path.relative_to(ROOT)}`"
    if run.data is None:
        pytest.fail(f"executing {nb_path.name} stopped at code cell {run.failed_at} "
                    f"(nbval's 'Cell {run.failed_at}'): {run.error}")
    committed = nb_path.read_bytes()
    if run.data != committed:
        fresh, saved = json.loads(run.data), _load(nb_path)
        if _same_but_figure_pixels(saved, fresh):
            return      # only PNG figures differ, each in ≤ PNG_TOLERANCE of its pixels
        cells = [k for k, (x, y) in enumerate(zip(_code_cells(fresh), _code_cells(saved))) if x != y]
        where = (f"code cells {cells} (nbval's 'Cell N' items report what differs)" if cells else
                 "its metadata, markdown cells or JSON layout")
        pytest.fail(f"{nb_path.name}: the re-executed notebook differs from the committed one in "
                    f"{where} ({rerun}); execution took {run.seconds:.0f} s")


# --- the shared-execution plugin itself (conftest.py), on planted notebooks -----------------

_PLUGIN_FILES = ("conftest.py", "tests/xdist_units.py", "tools/execute_notebooks.py", "tools/warm_kernel.py",
                 "tools/kernel_preload.py", "tools/nbval_sanitize.cfg")


def _planted_project(tmp_path: pathlib.Path) -> pathlib.Path:
    """A scratch project with this repo's conftest and executor, and two small notebooks.

    ``good.ipynb`` is written by the executor (so it must pass) and counts its executions in
    ``$NB_COUNT``; ``bad.ipynb`` has a wrong stream, wrong output metadata (which nbval's own
    comparison ignores), an unexpected exception and a cell after it.
    """
    import shutil
    import sys

    import nbformat
    from nbformat.v4 import new_code_cell, new_markdown_cell, new_notebook, new_output

    for rel in _PLUGIN_FILES:
        (tmp_path / rel).parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(ROOT / rel, tmp_path / rel)
    (tmp_path / "pytest.ini").write_text(
        "[pytest]\naddopts = --nbval --nbval-current-env -p no:cacheprovider\n")
    nbs = tmp_path / "notebooks"
    nbs.mkdir()
    good = new_notebook(cells=[
        new_markdown_cell("# good"),
        new_code_cell("import os\nwith open(os.environ.get('NB_COUNT', os.devnull), 'a') as f:\n    f.write('x')"),
        new_code_cell("print('hello')"),
        new_code_cell("6 * 7")])
    nbformat.write(good, nbs / "good.ipynb")
    sys.path.insert(0, str(tmp_path / "tools"))
    try:
        from execute_notebooks import execute
    finally:
        sys.path.remove(str(tmp_path / "tools"))
    execute(nbs / "good.ipynb")

    def stream(text):
        return new_output("stream", name="stdout", text=text)

    bad = new_notebook(cells=[
        new_code_cell("print('hello')", execution_count=1, outputs=[stream("hello\n")]),
        new_code_cell("print(2)", execution_count=2, outputs=[stream("3\n")]),
        new_code_cell("from IPython.display import display\n"
                      "display({'text/plain': 'x'}, raw=True, metadata={'k': 1})",
                      execution_count=3,
                      outputs=[new_output("display_data", data={"text/plain": "x"},
                                          metadata={"k": 2})]),
        new_code_cell("raise ValueError('boom')", execution_count=4, outputs=[]),
        new_code_cell("print('after')", execution_count=5, outputs=[stream("after\n")])])
    bad.metadata["kernelspec"] = {"display_name": "Python 3", "language": "python",
                                  "name": "python3"}
    nbformat.write(bad, nbs / "bad.ipynb")
    # The ids are the notebooks' file names, as in tests/test_notebooks.py: tests/xdist_units.py's
    # xdist_scope groups a test with a notebook's cells by "[<name>.ipynb]" (a bare stem left
    # the byte check to whichever worker came free, and good.ipynb then ran twice).
    (tmp_path / "test_bytes.py").write_text(
        "import pathlib, pytest\n"
        "NBS = sorted(pathlib.Path(__file__).parent.glob('notebooks/*.ipynb'))\n"
        "@pytest.mark.parametrize('nb_path', NBS, ids=[p.name for p in NBS])\n"
        "def test_bytes(nb_path, notebook_execution):\n"
        "    assert notebook_execution(nb_path).data == nb_path.read_bytes()\n")
    return tmp_path


def test_shared_execution_reports_each_cell_and_runs_once(tmp_path):
    """Strict nbval semantics on the shared run: a wrong output, an output metadata difference
    and an unexpected exception each fail their own cell with what differs, the cells after the
    exception fail as not executed, and under two xdist workers a notebook whose cells and byte
    check all pass was executed exactly once."""
    import os
    import subprocess
    import sys

    project = _planted_project(tmp_path)
    count = tmp_path / "count.txt"
    count.write_text("")
    env = dict(os.environ, NB_COUNT=str(count), PYTHONPATH=str(ROOT))
    proc = subprocess.run([sys.executable, "-m", "pytest", "-n", "2", "--dist", "loadgroup",
                           "-rA", "-p", "no:randomly", "notebooks", "test_bytes.py"],
                          cwd=project, env=env, capture_output=True, text=True, timeout=300)
    out = proc.stdout
    assert proc.returncode == 1, out + proc.stderr
    assert count.read_text() == "x", f"good.ipynb executed {len(count.read_text())} times\n{out}"
    for passed in ("notebooks/good.ipynb::Cell 0", "notebooks/good.ipynb::Cell 1",
                   "notebooks/good.ipynb::Cell 2", "test_bytes.py::test_bytes[good.ipynb]",
                   "notebooks/bad.ipynb::Cell 0"):
        assert f"PASSED {passed}" in out, f"{passed} did not pass\n{out}"
    for failed in ("notebooks/bad.ipynb::Cell 1", "notebooks/bad.ipynb::Cell 2",
                   "notebooks/bad.ipynb::Cell 3", "notebooks/bad.ipynb::Cell 4",
                   "test_bytes.py::test_bytes[bad.ipynb]"):
        assert f"FAILED {failed}" in out, f"{failed} did not fail\n{out}"
    # Each failing cell's report says what differs (nbval's report format).
    assert "Cell 1: Cell outputs differ" in out and "'3\\n' == '2\\n'" in out, out
    assert "Cell 2: Cell outputs differ from the committed ones in what nbval does not" in out, out
    assert '-    "k": 2' in out and '+    "k": 1' in out, out
    assert "Cell 3: Cell execution caused an exception" in out and "ValueError" in out, out
    assert "Cell 4: Not executed: execution stopped at Cell 3" in out, out


# --- the figure comparison that lets a notebook run on another CPU ---------------------------

def _png(draw, size=(5.0, 3.2)) -> str:
    import base64
    import io

    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots(figsize=size)
    draw(ax)
    buf = io.BytesIO()
    fig.savefig(buf, format="png", dpi=120)
    plt.close(fig)
    return base64.b64encode(buf.getvalue()).decode()


def _error_plot(last_error, label="error", extra=False):
    def draw(ax):
        import numpy as np
        s = np.logspace(0, 4, 9)
        err = 1e-16 * s**2
        err[0] = last_error
        ax.loglog(s, err, "o-", label=label)
        if extra:
            ax.loglog(s, 1e-15 * s, "k:")
        ax.legend(loc="lower right")
    return draw


@pytest.mark.parametrize("change, accepted", [
    ({}, True),                                   # the same figure
    ({"last_error": 3.1003e-16}, True),           # a round-off point drawn a fraction of a pixel away
    ({"last_error": 3.3e-16}, False),             # ... but not a marker moved by pixels
    ({"label": "another error"}, False),          # a changed legend
    ({"extra": True}, False),                     # one more curve
    ({"size": (5.0, 3.0)}, False),                # another size
])
def test_figure_comparison_accepts_round_off_and_refuses_changes(change, accepted):
    ex = _executor()
    ref = {"output_type": "display_data", "metadata": {}, "data": {
        "image/png": _png(_error_plot(3.1e-16)), "text/plain": "<Figure>"}}
    size = change.pop("size", (5.0, 3.2))
    new = {**ref, "data": {**ref["data"], "image/png": _png(_error_plot(**{"last_error": 3.1e-16, **change}), size)}}
    same, what = ex.outputs_match([ref], [new])
    assert same is accepted, what
    # text outputs are never given a tolerance
    assert not ex.outputs_match([ref], [{**new, "data": {**new["data"], "text/plain": "<Fig>"}}])[0]


def test_printed_decade_is_sanitized_but_the_rest_of_a_check_line_is_not():
    """A check's error decade moves with the CPU (report asserts the tolerance itself); the
    label and the tolerance it prints are compared exactly."""
    ex = _executor()

    def line(text):
        return [{"output_type": "stream", "name": "stdout", "text": text}]

    a = "M vs dense: rel. error < 1e-12 (tolerance 1e-10: cond eps)\n"
    assert ex.outputs_match(line(a), line(a.replace("< 1e-12", "≤ 1e-13")))[0]
    assert not ex.outputs_match(line(a), line(a.replace("tolerance 1e-10", "tolerance 1e-09")))[0]
    assert not ex.outputs_match(line(a), line(a.replace("M vs", "ℳ vs")))[0]
