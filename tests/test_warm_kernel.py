"""The suite's warm notebook kernels (tools/warm_kernel.py): a forked kernel looks like a fresh
one to a notebook, preloads only what the notebook loads itself, and dies with its client."""

from __future__ import annotations

import asyncio
import importlib.util
import os
import pathlib
import time

import nbformat
import pytest
from nbformat.v4 import new_code_cell, new_notebook

ROOT = pathlib.Path(__file__).resolve().parent.parent


def _tool(name):
    spec = importlib.util.spec_from_file_location(f"_{name}", ROOT / "tools" / f"{name}.py")
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


warm = _tool("warm_kernel")
pre = _tool("kernel_preload")
executor = _tool("execute_notebooks")
_first_cell = pre.first_cell

LECTURES = sorted((ROOT / "notebooks").glob("*.ipynb"))
PRELOAD = pre.preload(ROOT)


@pytest.fixture(scope="module")
def zygote():
    z = warm.Zygote(PRELOAD)
    yield z
    z.close()


def test_loaded_modules_follow_the_projects_own_top_level_imports(tmp_path):
    """Named modules with their parents; a project module's top-level imports (also in try/if
    bodies, relative ones resolved, ``from . import x`` of a submodule), never the imports
    inside functions; ``from m import name`` of another package counts m only."""
    pkg = tmp_path / "pkg"
    (pkg / "deep").mkdir(parents=True)
    (pkg / "__init__.py").write_text("import json\n")
    (pkg / "sub.py").write_text("from . import other\ntry:\n    import numpy.linalg as la\n"
                                "except ImportError:\n    pass\nfrom scipy import optimize\n")
    (pkg / "other.py").write_text("def f():\n    import sympy\n")
    (pkg / "deep" / "__init__.py").write_text("")
    (pkg / "deep" / "leaf.py").write_text("if True:\n    from ..other import f\n")
    assert pre.loaded_modules("%matplotlib inline\nfrom pkg.sub import f\nimport pkg.deep.leaf",
                              tmp_path) == ["json", "numpy", "numpy.linalg", "pkg", "pkg.deep",
                                            "pkg.deep.leaf", "pkg.other", "pkg.sub", "scipy"]
    assert pre.loaded_modules("x = (", tmp_path) is None
    assert pre.common_imports(["import pkg.other", "from pkg import sub"], tmp_path) == ["json", "pkg", "pkg.other"]


def test_preload_is_what_every_lecture_notebook_loads_and_the_panel_runs_fresh(zygote):
    """The preload holds the heavy common imports, every lecture notebook loads all of it (so
    it is served warm), and the one-cell panel, which loads less, gets a fresh kernel."""
    assert {"numpy", "matplotlib.pyplot", "opalg", "opalg.display", "opalg.report"} <= set(PRELOAD)
    assert not {"sympy", "scipy", "matplotlib.animation", "opalg.symbolic"} & set(PRELOAD)
    for path in LECTURES:
        assert zygote.kernel_manager_class(pre.loaded_modules(_first_cell(path), ROOT)) is not None
    panel = ROOT / "notebooks" / "panels" / "ider_panel.ipynb"
    assert zygote.kernel_manager_class(pre.loaded_modules(_first_cell(panel), ROOT)) is None
    assert zygote.kernel_manager_class(None) is None       # not Python: fresh


PROBE = """\
import os, sys
import matplotlib, numpy as np
import matplotlib.pyplot as plt
print(os.getcwd() in sys.path, sys.path[-3:], os.path.basename(sys.argv[0]), sys.argv[1])
print(matplotlib.get_backend(), np.get_printoptions()["precision"])
print(sorted(k for k in ("sympy", "scipy", "matplotlib.animation", "tools") if k in sys.modules))
print(os.environ.get("OPALG_PROBE"), os.getpid() != int(os.environ["JPY_PARENT_PID"]))"""


def _run(tmp_path, source, kernel_manager_class, env=None):
    nb = new_notebook(cells=[new_code_cell(source)])
    nb.metadata["kernelspec"] = {"name": "python3", "display_name": "Python 3", "language": "python"}
    old = dict(os.environ)
    os.environ.update(env or {})
    try:
        executor.run(nb, tmp_path, timeout=60, kernel_manager_class=kernel_manager_class)
    finally:
        os.environ.clear()
        os.environ.update(old)
    return "".join(o.get("text", "") for o in nb.cells[0].outputs)


def test_a_warm_kernel_shows_a_notebook_what_a_fresh_one_does(zygote, tmp_path):
    """sys.path (the working directory not on it), launcher name, the inline backend, print options, no
    module beyond the preload, the environment of this process at launch: all as fresh."""
    kmc = zygote.kernel_manager_class(sorted(PRELOAD))
    env = {"OPALG_PROBE": "seen"}
    fresh = _run(tmp_path, PROBE, None, env)
    warm_out = _run(tmp_path, PROBE, kmc, env)
    assert warm_out == fresh, (warm_out, fresh)
    assert fresh.splitlines()[0].startswith("False [") and "ipykernel_launcher.py -f" in fresh
    assert "matplotlib_inline" in fresh and "seen True" in fresh


def test_a_forgotten_import_fails_as_in_a_fresh_kernel(zygote, tmp_path):
    """matplotlib.animation is not preloaded: reaching it without importing it fails (in a
    fresh kernel too: nothing imports it along with matplotlib.pyplot)."""
    kmc = zygote.kernel_manager_class(sorted(PRELOAD))
    with pytest.raises(Exception, match="has no attribute 'animation'"):
        _run(tmp_path, "import matplotlib.pyplot\nmatplotlib.animation.FuncAnimation", kmc)


def _kernels(zygote) -> set[int]:
    """The zygote's live children (its kernels)."""
    out = set()
    for d in os.listdir("/proc"):
        if d.isdigit():
            try:
                stat = pathlib.Path(f"/proc/{d}/stat").read_text()
            except OSError:
                continue
            fields = stat.rsplit(")", 1)[1].split()
            if fields[1] == str(zygote.process.pid) and fields[0] != "Z":
                out.add(int(d))
    return out


def _wait_until(predicate, seconds=15.0):
    end = time.monotonic() + seconds
    while time.monotonic() < end:
        if predicate():
            return True
        time.sleep(0.05)
    return predicate()


def test_a_timed_out_cell_is_interrupted_and_the_kernel_shut_down(zygote, tmp_path):
    """nbclient's timeout interrupts the kernel through the client (SIGINT forwarded), and
    its shutdown leaves no kernel behind."""
    kmc = zygote.kernel_manager_class(sorted(PRELOAD))
    nb = new_notebook(cells=[new_code_cell("import time\ntime.sleep(60)")])
    start = time.monotonic()
    with pytest.raises(Exception, match="(?i)timed out|timeout"):
        executor.run(nb, tmp_path, timeout=2, kernel_manager_class=kmc)
    assert time.monotonic() - start < 30
    assert _wait_until(lambda: not _kernels(zygote)), _kernels(zygote)


def test_a_killed_client_takes_its_kernel_along(zygote):
    """jupyter_client kills the process it launched (the client): the zygote kills the kernel."""
    kmc = zygote.kernel_manager_class(sorted(PRELOAD))

    async def scenario():
        km = kmc(kernel_name="python3")
        await km.start_kernel()
        try:
            assert _wait_until(lambda: len(_kernels(zygote)) == 1)
            (kernel,) = _kernels(zygote)
            await km.shutdown_kernel(now=True)     # SIGKILL to the client's process group
            assert _wait_until(lambda: kernel not in _kernels(zygote)), "the kernel outlived its client"
        finally:
            await km.cleanup_resources()

    asyncio.run(scenario())


def test_closing_the_zygote_stops_its_kernels():
    """When the pytest process is done (the zygote's stdin closes), no kernel survives it."""
    z = warm.Zygote([])
    kmc = z.kernel_manager_class([])

    async def start():
        km = kmc(kernel_name="python3")
        await km.start_kernel()
        return km

    km = asyncio.run(start())
    assert _wait_until(lambda: len(_kernels(z)) == 1)
    (kernel,) = _kernels(z)
    z.close()
    assert z.process.returncode == 0
    assert _wait_until(lambda: not _alive(kernel)), f"kernel {kernel} outlived the zygote"
    asyncio.run(km.cleanup_resources())


def _alive(pid: int) -> bool:
    try:
        state = pathlib.Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except OSError:
        return False
    return state != "Z"
