"""Root pytest configuration: the hypothesis profile, nbval's sanitizer path, one execution per
notebook shared by every notebook check, and the grouping of tests for parallel workers.

One execution per notebook
--------------------------
Two checks need a fresh execution of each notebook: strict nbval (every output of every code
cell compared with the committed one, per cell) and ``tests/test_notebooks.py::
test_executor_is_deterministic`` (the project executor, ``tools/execute_notebooks.execute``,
rewrites the committed bytes exactly).  They used to execute every notebook twice.  Here the
notebook is executed once, *by the project executor* (so the byte check is about exactly what
``make reproduce`` writes), in a scratch copy whose directory is the kernel's cwd (so a notebook
that depends on, or writes into, ``notebooks/`` fails), and the result is cached for the session
(:func:`notebook_run`).  nbval's collector and cell items are kept (its options, cell markers,
sanitizers, comparison and failure report), with two methods replaced: the collector starts no
kernel, and a cell item compares its committed outputs with *that cell of the shared execution*
using nbval's own ``compare_outputs``, then also requires the cell's outputs and execution count
to be identical (nbval skips PNGs and metadata; the byte check would catch them, this says which
cell).  A cell that raised unexpectedly fails with its traceback; the cells after it fail as
"not executed" (nbclient stops at the first error, where nbval's kernel went on).

The kernel is forked from a warm process (``tools/warm_kernel.py``) that has imported what
every lecture notebook imports in its first cell (numpy, matplotlib, opalg ...): about 2 s of
CPU less per notebook.  A notebook that does not load all of that itself gets a fresh kernel,
and ``OPALG_FRESH_KERNELS=1`` gives every notebook one.

``pytest notebooks/NN.ipynb`` still tests one notebook cell by cell; ``-k NN`` with
``tests/test_notebooks.py`` adds the byte check, from the same execution.

Parallel workers (pytest-xdist, ``--dist loadgroup``)
-----------------------------------------------------
:func:`pytest_xdist_make_scheduler` hands out the work units of ``tests/xdist_units.py`` (a
notebook's cells with its byte check, the browser tests, the tests sharing a cached result),
longest first; that module's docstring explains the grouping.
"""
from __future__ import annotations

import copy
import difflib
import gc
import importlib.util
import json
import os
import pathlib
import shutil
import tempfile
import time
import warnings
from collections import OrderedDict, defaultdict
from dataclasses import dataclass

import nbformat
import pytest
from hypothesis import settings

ROOT = pathlib.Path(__file__).resolve().parent

# One BLAS thread per process, set before any worker, kernel or subprocess starts (they inherit
# it).  The suite already runs one worker per core, each with its notebook kernels; OpenBLAS's
# own pool (a thread per core) on top oversubscribes the cores, and its idle threads spin.  In
# paired whole-suite runs, tests/test_fijany_forward.py (dense solves of up to 64 blocks) took
# 3.5 s of test time with the pool and 1.5 s without; most tests' matrices are too small for it.
# `make reproduce` sets the same (tools/reproduce.py), so the committed outputs are computed
# as they are checked, whatever the machine's core count.
os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")

# Hypothesis: derandomized so that CI and a student's run try the same examples;
# no deadline (timing belongs in benchmarks/, not in tests).
settings.register_profile("opalg", derandomize=True, deadline=None, max_examples=25,
                          print_blob=True)
# Opt-in: `pytest tests/test_property.py --hypothesis-profile=thorough` (the flag comes from
# hypothesis' pytest plugin): >= 1,000 new random models per property test, not derandomized,
# so every run explores new models (print_blob gives the reproduction of a failure).
# Meant for tests/test_property.py only; the rest of the suite would run 1,000 examples too.
settings.register_profile("thorough", parent=settings.get_profile("opalg"), max_examples=1000,
                          derandomize=False)
settings.load_profile("opalg")


def pytest_collection_finish(session):
    """After collection: make Python's cyclic garbage collector cheaper for the rest of the run.

    Everything imported and collected so far lives until the end, yet every full collection
    scanned it again; ``gc.freeze`` sets it aside.  And SymPy's derivations allocate containers
    by the million: a first generation of 50,000 instead of 700 objects runs the collector
    about 100 times less often (it frees the same cycles, later; memory is ample here).  Test
    outcomes cannot depend on it.  Measured on six sympy- and simulation-heavy modules, serial:
    1,224 collections taking 2.1 s of 82.6 s CPU before, 15 taking 0.75 s after.
    """
    gc.collect()
    gc.freeze()
    gc.set_threshold(50_000, 50, 100)


def pytest_configure(config):
    # nbval reads --nbval-sanitize-with relative to the cwd: make it absolute.
    if hasattr(config.option, "nbval_sanitize_with") and not config.option.nbval_sanitize_with:
        config.option.nbval_sanitize_with = str(ROOT / "tools" / "nbval_sanitize.cfg")


# --------------------------------------------------------------------------------------------
# One execution per notebook
# --------------------------------------------------------------------------------------------

def _tool(name: str, folder: str = "tools"):
    """``<folder>/<name>.py`` (tools/ and tests/ are not packages), loaded once by path."""
    key = f"{folder}/{name}"
    if key not in _TOOLS:
        spec = importlib.util.spec_from_file_location(name, ROOT / folder / f"{name}.py")
        _TOOLS[key] = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(_TOOLS[key])
    return _TOOLS[key]


_TOOLS: dict = {}


def _executor():
    """``tools/execute_notebooks``: the project executor."""
    return _tool("execute_notebooks")


def _kernel_manager_class(path: pathlib.Path):
    """Warm kernels (``tools/warm_kernel.py``): one zygote per pytest process, preloading what
    every lecture notebook loads in its first cell (``tools/kernel_preload.py``); a notebook
    that does not load all of it (the panel) gets a fresh kernel.  ``OPALG_FRESH_KERNELS=1``
    gives every notebook a fresh kernel, as ``make reproduce`` does."""
    global _ZYGOTE
    if os.environ.get("OPALG_FRESH_KERNELS"):
        return None
    pre = _tool("kernel_preload")
    if _ZYGOTE is None:
        try:
            _ZYGOTE = _tool("warm_kernel").Zygote(pre.preload(ROOT))
        except (OSError, RuntimeError) as exc:   # e.g. no Unix sockets here: say so, run fresh
            warnings.warn(f"warm notebook kernels unavailable, starting fresh ones: {exc}")
            _ZYGOTE = False
    if _ZYGOTE is False:
        return None
    return _ZYGOTE.kernel_manager_class(pre.loaded_modules(pre.first_cell(path), ROOT))


_ZYGOTE = None


@dataclass
class NotebookRun:
    """One execution of a committed notebook by the project executor, in a scratch directory.

    Attributes
    ----------
    path : pathlib.Path
        The committed notebook.
    data : bytes or None
        The file the executor wrote (None if execution stopped at an error).
    cells : list
        The executed notebook's code cells, cleaned as the executor cleans them (on an error:
        the cells run so far, the failing one with its error output).
    failed_at : int or None
        Index among the code cells (nbval's "Cell N") of the cell where execution stopped.
    error : str or None
        The executor's exception, if it raised.
    seconds : float
        Wall time of the execution.
    """

    path: pathlib.Path
    data: bytes | None
    cells: list
    failed_at: int | None
    error: str | None
    seconds: float


_RUNS: dict[pathlib.Path, NotebookRun] = {}


def notebook_run(path: pathlib.Path, timeout: int = 600) -> NotebookRun:
    """Execute the notebook at ``path`` once per session (cached) and return the result.

    The copy keeps its path relative to ``notebooks/`` (``panels/x.ipynb`` stays one folder
    down), so the kernel sees the same layout around it, minus every other file.
    """
    path = pathlib.Path(path).resolve()
    if path not in _RUNS:
        _RUNS[path] = _execute(path, timeout)
    return _RUNS[path]


def _execute(path: pathlib.Path, timeout: int) -> NotebookRun:
    ex = _executor()
    seen: list[int] = []  # indices (into nb.cells) of the cells nbclient started
    try:
        rel = path.relative_to(ROOT / "notebooks")
    except ValueError:
        rel = pathlib.Path(path.name)
    with tempfile.TemporaryDirectory(prefix="opalg-nb-") as tmp:
        copy_path = pathlib.Path(tmp) / rel
        copy_path.parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(path, copy_path)
        nb = nbformat.read(copy_path, as_version=4)
        start = time.perf_counter()
        try:
            # The executor's own run (tools/execute_notebooks.run), which `execute` writes back.
            ex.run(nb, copy_path.parent, timeout,
                   on_cell_start=lambda cell, cell_index: seen.append(cell_index),
                   kernel_manager_class=_kernel_manager_class(path))
        except Exception as exc:  # CellExecutionError, CellTimeoutError, DeadKernelError, ...
            seconds = time.perf_counter() - start
            ex.clean(nb)          # nb holds the cells run so far
            code_index = {i: k for k, i in enumerate(
                j for j, c in enumerate(nb.cells) if c.cell_type == "code")}
            code_started = [code_index[i] for i in seen if i in code_index]
            if not code_started:  # the kernel did not start: no cell ran
                return NotebookRun(path, None, [nbformat.v4.new_code_cell()], 0,
                                   f"{type(exc).__name__}: {exc}", seconds)
            failed_at = code_started[-1]
            cells = [c for c in nb.cells if c.cell_type == "code"][:failed_at + 1]
            return NotebookRun(path, None, cells, failed_at, f"{type(exc).__name__}: {exc}", seconds)
        seconds = time.perf_counter() - start
        nbformat.write(nb, copy_path)   # exactly as tools/execute_notebooks.execute writes it
        data = copy_path.read_bytes()
    nb = nbformat.reads(data.decode("utf-8"), as_version=4)
    return NotebookRun(path, data, [c for c in nb.cells if c.cell_type == "code"], None, None,
                       seconds)


@pytest.fixture
def notebook_execution(request):
    """``notebook_execution(path)`` -> the session's :class:`NotebookRun` of that notebook."""
    timeout = int(request.config.getoption("nbval_cell_timeout", 600) or 600)
    return lambda path: notebook_run(path, timeout)


def _outputs_diff(committed, fresh) -> str:
    """A unified diff of two cells' outputs as JSON, long base64 strings replaced by a hash."""
    from nbval.plugin import _trim_base64

    def lines(cell):
        outs = json.loads(json.dumps({"execution_count": cell.get("execution_count"),
                                      "outputs": cell.get("outputs", [])}))
        for out in outs["outputs"]:
            for mime, value in out.get("data", {}).items():
                text = "".join(value) if isinstance(value, list) else value
                if isinstance(text, str):
                    out["data"][mime] = _trim_base64(text)
        return json.dumps(outs, indent=1, sort_keys=True).splitlines()

    return "\n".join(difflib.unified_diff(lines(committed), lines(fresh), "committed", "executed",
                                          lineterm="", n=2))


try:
    from nbval.plugin import IPyNbCell, IPyNbFile, coalesce_streams
except ImportError:  # nbval is in the test extra; without it, no notebook is collected as cells
    IPyNbFile = None

if IPyNbFile is not None:
    from nbval.plugin import find_comment_markers, find_metadata_tags

    class SharedRunNotebook(IPyNbFile):
        """nbval's notebook collector, without a kernel of its own: cells read the shared run."""

        def setup(self):
            self.setup_sanitize_files()

        def teardown(self):
            pass

        def collect(self):
            # nbval's IPyNbFile.collect, yielding SharedRunCell (its markers and defaults).
            self.nb = nbformat.read(str(self.path), as_version=4)
            cells = [c for c in self.nb.cells if c.cell_type == "code"]
            for num, cell in enumerate(cells):
                options = defaultdict(bool, find_metadata_tags(cell.metadata))
                options.update(dict(find_comment_markers(cell.source)))
                options.setdefault("check", self.compare_outputs)
                yield SharedRunCell.from_parent(self, name=f"Cell {num}", cell_num=num, cell=cell,
                                                options=options)

    class SharedRunCell(IPyNbCell):
        """One code cell, checked against the same cell of the notebook's shared execution."""

        def runtest(self):
            if self.options["skip"]:
                pytest.skip()
            timeout = int(self.config.option.nbval_cell_timeout)
            run = notebook_run(self.path, timeout)
            if run.failed_at is not None and self.cell_num > run.failed_at:
                self.raise_cell_error(f"Not executed: execution stopped at Cell {run.failed_at}")
            fresh = run.cells[self.cell_num]
            if run.failed_at == self.cell_num:
                errors = [o for o in fresh.outputs if o.output_type == "error"]
                tb = "\n" + "\n".join(errors[-1].traceback) if errors else run.error
                self.raise_cell_error("Cell execution caused an exception"
                                      if errors else "Cell execution failed", tb)
            if self.cell.execution_count is None:  # nbval: an unrun reference is not compared
                if self.cell.outputs:
                    self.raise_cell_error("Unrun reference cell has outputs")
                return
            if not self.options["check"]:
                return
            # nbval's comparison (sanitizers, streams coalesced; no PNGs or metadata) ...
            test = coalesce_streams(copy.deepcopy(fresh.outputs))
            ref = coalesce_streams(copy.deepcopy(self.cell.outputs))
            if not self.compare_outputs(test, ref):
                self.raise_cell_error("Cell outputs differ", "\n".join(self.comparison_traceback))
            # ... and then everything the committed file stores for this cell.
            same, what = _executor().outputs_match(self.cell.outputs, fresh.outputs)
            if not same or fresh.execution_count != self.cell.execution_count:
                self.raise_cell_error(
                    "Cell outputs differ from the committed ones in what nbval does not compare "
                    f"(images, output metadata, execution count): {what or 'execution count'}",
                    _outputs_diff(self.cell, fresh))

    @pytest.hookimpl(wrapper=True)
    def pytest_collect_file(file_path, parent):
        """Replace nbval's collector (which starts a kernel per notebook) by SharedRunNotebook."""
        result = yield
        return [SharedRunNotebook.from_parent(parent, path=file_path)
                if type(c) is IPyNbFile else c for c in result]


# --------------------------------------------------------------------------------------------
# Grouping for pytest-xdist
# --------------------------------------------------------------------------------------------

# The work units and their estimated seconds: plain tables and functions, kept (and doctested)
# in tests/xdist_units.py; only the hook below must live here, where pytest finds it.
_UNITS = _tool("xdist_units", "tests")
xdist_scope, unit_seconds = _UNITS.xdist_scope, _UNITS.unit_seconds


@pytest.hookimpl(optionalhook=True)
def pytest_xdist_make_scheduler(config, log):
    """``--dist loadgroup`` with the work units of :func:`xdist_scope`, longest first.

    xdist's own loadgroup reads ``xdist_group`` marks by rewriting ``item._nodeid``, which
    pytest 9 no longer uses for the node id, so marks would be silently ignored; the units are
    derived from the node ids instead (the controller sees only those).  xdist hands the
    units out in the order of its work queue (collection order); it is sorted once by
    :func:`unit_seconds`, descending and stable (longest-processing-time first).
    """
    if config.getvalue("dist") != "loadgroup":
        return None
    from xdist.scheduler import LoadGroupScheduling

    class NotebookGroups(LoadGroupScheduling):
        _sorted = False

        def _split_scope(self, nodeid: str) -> str:
            return xdist_scope(nodeid)

        def _assign_work_unit(self, node) -> None:
            # The first call comes once the queue holds every unit (schedule() fills it, then
            # assigns): sort it there.
            if not self._sorted:
                self._sorted = True
                self.workqueue = OrderedDict(sorted(self.workqueue.items(),
                                                    key=lambda unit: -unit_seconds(unit[0])))
            super()._assign_work_unit(node)

    return NotebookGroups(config, log)
