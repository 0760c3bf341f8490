"""The verification ledger: what each test verified, recorded while the suite runs.

A test says which ids of ``docs/REFERENCE.md`` it verifies, and by which routes, with a mark::

    @pytest.mark.verifies("E9", route="ABA vs dense LU solve of ℳ")

(``pytestmark = pytest.mark.verifies(...)`` marks a whole module).  While a marked test runs,

* every :func:`helpers.assert_close` records the quantity, its error, the tolerance and the
  tolerance's derivation (a :class:`helpers.Tol` carries it; a bare float says "not stated");
* every :class:`opalg.model.multibody.Model` built, in the test's fixtures or its body, records its
  topology (chain, tree, forest), its size, its label order and its joints' kinds.

Nothing is recorded unless ``OPALG_LEDGER`` names a folder: each pytest process then writes its
records there as JSON lines (``<pid>.jsonl``), and ``tools/ledger.py`` turns the folder into the
ledger page (``make ledger``).  The records are the checks themselves, not a second copy of them.
"""
from __future__ import annotations

import contextlib
import json
import math
import os
import pathlib

#: The test being run, when it carries a ``verifies`` mark: its record, filled while it runs.
_current: dict | None = None


def start(nodeid: str, marks) -> None:
    """Open the record of test ``nodeid`` if it has ``verifies`` marks (``marks``: the marks)."""
    global _current
    ids, routes = [], []
    for mark in marks:
        ids += [str(i) for i in mark.args]
        if "route" in mark.kwargs:
            routes.append(str(mark.kwargs["route"]))
    _current = ({"test": nodeid, "ids": sorted(set(ids)), "routes": routes, "checks": [],
                 "models": []} if ids and os.environ.get("OPALG_LEDGER") else None)


def finish(outcome: str) -> None:
    """Close the current record with the test's outcome and append it to this process's file."""
    global _current
    if _current is None:
        return
    record, _current = _current, None
    record["outcome"] = outcome
    folder = pathlib.Path(os.environ["OPALG_LEDGER"])
    folder.mkdir(parents=True, exist_ok=True)
    with open(folder / f"{os.getpid()}.jsonl", "a", encoding="utf-8") as f:
        f.write(json.dumps(record, ensure_ascii=False) + "\n")


def check(what: str, err: float, tol: float) -> None:
    """Record one comparison of the current test (``tol`` may carry ``.why``)."""
    if _current is not None:
        err = float(err)
        _current["checks"].append({"what": str(what), "err": err if math.isfinite(err) else None,
                                   "tol": float(tol), "why": getattr(tol, "why", None)})


def _describe(model) -> dict:
    """Topology, size, label order and joint kinds of a model, from its parent array and joints."""
    parents = list(model.parents)
    roots = parents.count(-1)
    children = [0] * len(parents)
    for p in parents:
        if p >= 0:
            children[p] += 1
    topology = "forest" if roots > 1 else ("chain" if max(children, default=0) <= 1 else "tree")
    if all(p < k for k, p in enumerate(parents)):
        order = "base-to-tip"
    elif all(p == -1 or p > k for k, p in enumerate(parents)):
        order = "tip-to-base"
    else:
        order = "arbitrary"
    kinds = sorted({"".join(getattr(j, "kinds", ())) or type(j).__name__ for j in model.joints})
    return {"topology": topology, "n": len(parents), "order": order, "joints": kinds}


@contextlib.contextmanager
def watching_models():
    """Record every Model built inside the block into the current test's record."""
    if _current is None:
        yield
        return
    from opalg.model.multibody import Model

    init = Model.__init__

    def recording_init(self, *args, **kwargs):
        init(self, *args, **kwargs)
        if _current is not None:
            _current["models"].append(_describe(self))

    Model.__init__ = recording_init
    try:
        yield
    finally:
        Model.__init__ = init
