"""The project's notebook executor: the only thing that writes committed outputs.

Deterministic by construction: execute top to
bottom in a fresh kernel started in ``notebooks/``, then drop saved widget state,
per-cell execution metadata (timestamps) and widget-view outputs, and write with
a fixed JSON layout, so two runs give byte-identical files.
"""
from __future__ import annotations

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


def run(nb, cwd: pathlib.Path, timeout: int = 600) -> None:
    """Execute ``nb`` in place in a fresh kernel started in ``cwd``, then :func:`clean` it."""
    # store_widget_state=True during execution: False plus an Output widget raises KeyError.
    client = NotebookClient(nb, timeout=timeout, kernel_name="python3", store_widget_state=True,
                            resources={"metadata": {"path": str(cwd)}})
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
