"""The project's notebook executor: the only thing that writes committed outputs.

Deterministic by construction: execute top to
bottom in a fresh kernel started in ``notebooks/``, then drop saved widget state,
per-cell execution metadata (timestamps) and widget-view outputs, and write with
a fixed JSON layout, so two runs give byte-identical files.
"""
from __future__ import annotations

import functools
import pathlib

import nbformat
from nbclient import NotebookClient

WIDGET_VIEW = "application/vnd.jupyter.widget-view+json"


def coalesce_streams(outputs) -> list:
    """Merge consecutive stream outputs of the same name (stdout, stderr).

    How a cell's prints are split into stream messages depends on when the kernel
    flushes (timing), so without this two runs can store the same text in a
    different number of outputs.  nbval coalesces the same way before comparing.
    """
    merged = []
    for out in outputs:
        prev = merged[-1] if merged else None
        if (out.get("output_type") == "stream" and prev is not None
                and prev.get("output_type") == "stream" and prev.get("name") == out.get("name")):
            prev["text"] = prev["text"] + out["text"]
        else:
            merged.append(out)
    return merged


def clean(nb) -> None:
    """Remove everything that changes from run to run."""
    nb.metadata.pop("widgets", None)
    nb.metadata["kernelspec"] = {"display_name": "Python 3", "language": "python", "name": "python3"}
    for cell in nb.cells:
        cell.metadata.pop("execution", None)
        if cell.cell_type != "code":
            continue
        kept = []
        for out in cell.outputs:
            data = out.get("data")
            if data is not None:
                data.pop(WIDGET_VIEW, None)
                if not data:
                    continue
            kept.append(out)
        cell.outputs = coalesce_streams(kept)


def run(nb, cwd: pathlib.Path, timeout: int = 600, on_cell_start=None,
        kernel_manager_class=None) -> None:
    """Execute ``nb`` in place (kernel started in ``cwd``), then :func:`clean` it.

    ``on_cell_start(cell, cell_index)`` is nbclient's hook; the test suite uses it to say which
    cell was running when execution stopped.  On an error ``nb`` keeps the cells run so far.
    ``kernel_manager_class`` replaces nbclient's (the suite's warm kernels,
    ``tools/warm_kernel.py``); the default starts a fresh kernel, as ``make reproduce`` does.
    """
    # store_widget_state=True during execution: False plus an Output widget raises KeyError.
    extra = {} if kernel_manager_class is None else {"kernel_manager_class": kernel_manager_class}
    client = NotebookClient(nb, timeout=timeout, kernel_name="python3", store_widget_state=True,
                            resources={"metadata": {"path": str(cwd)}}, **extra)
    if on_cell_start is not None:
        client.on_cell_start = on_cell_start
    client.execute()
    clean(nb)


def execute(path: pathlib.Path, timeout: int = 600) -> None:
    """Execute the notebook file at ``path`` in its folder and write it back (the only writer)."""
    nb = nbformat.read(path, as_version=4)
    run(nb, path.parent, timeout)
    nbformat.write(nb, path)


def execute_all(paths) -> None:
    for p in paths:
        print(f"executing {p}", flush=True)
        execute(pathlib.Path(p))


#: Largest fraction of a figure's pixels that may differ by more than 1/8 of full scale between
#: two executions on different machines: none.  A figure of round-off-level values (3.1e-16 on
#: one CPU, 3.1003e-16 on another: vectorised reductions round differently) is drawn a fraction
#: of a pixel apart, which changes only antialiasing shades and the PNG's bytes; a moved marker,
#: another curve, label, tick or size changes whole pixels and is refused
#: (tests/test_notebooks.py::test_figure_comparison_accepts_round_off_and_refuses_changes).
PNG_TOLERANCE = 0.0


def png_mismatch(a: str, b: str) -> float:
    """Fraction of pixels of two base64 PNGs that differ by more than 1/8 of full scale in some
    channel; 1.0 when their sizes differ."""
    import base64
    import io

    import numpy as np
    from PIL import Image

    x, y = (np.asarray(Image.open(io.BytesIO(base64.b64decode("".join(s)))).convert("RGB"),
                       dtype=np.int16) for s in (a, b))
    if x.shape != y.shape:
        return 1.0
    return float((np.abs(x - y).max(axis=-1) > 32).mean())


@functools.lru_cache(maxsize=1)
def sanitizers() -> list:
    """(pattern, replacement) pairs of ``tools/nbval_sanitize.cfg``, the ones nbval applies.

    Among them the decade of a check's error (``opalg.report`` prints ``rel. error < 1e-12``):
    an error of 1.1e-13 on one CPU is 0.9e-13 on another, and the check itself is the assertion
    inside ``report``, which fails the cell on any machine."""
    import configparser
    import re

    cfg = configparser.ConfigParser(interpolation=None)
    cfg.read(pathlib.Path(__file__).with_name("nbval_sanitize.cfg"), encoding="utf8")
    return [(re.compile(cfg[s]["regex"]), cfg[s]["replace"]) for s in cfg.sections()]


def _sanitized(out: dict) -> dict:
    if out.get("output_type") != "stream":
        return out
    text = "".join(out.get("text", ""))
    for pattern, replace in sanitizers():
        text = pattern.sub(replace, text)
    return {**out, "text": text}


def outputs_match(committed, fresh, tol: float = PNG_TOLERANCE) -> tuple[bool, str]:
    """Whether a cell's fresh outputs equal its committed ones: exactly, except PNG figures,
    which may differ in at most ``tol`` of their pixels (see :data:`PNG_TOLERANCE`), and the
    patterns of :func:`sanitizers` in printed text.  Returns (match, what differs)."""
    committed = [_sanitized(dict(o)) for o in committed]
    fresh = [_sanitized(dict(o)) for o in fresh]
    if len(committed) != len(fresh):
        return False, f"{len(committed)} outputs committed, {len(fresh)} executed"
    for i, (c, f) in enumerate(zip(committed, fresh)):
        c, f = dict(c), dict(f)
        cd, fd = dict(c.pop("data", {})), dict(f.pop("data", {}))
        if c != f or cd.keys() != fd.keys():
            return False, f"output {i}: its type, text or metadata"
        for mime in cd:
            if mime == "image/png" and cd[mime] != fd[mime]:
                frac = png_mismatch(cd[mime], fd[mime])
                if frac > tol:
                    return False, f"output {i}: the figure differs in {frac:.2%} of its pixels (allowed {tol:.2%})"
            elif cd[mime] != fd[mime]:
                return False, f"output {i}: its {mime}"
    return True, ""
