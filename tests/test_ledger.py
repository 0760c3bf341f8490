"""The verification ledger: marks name real ids, and what a marked test compares is what the page
reports (tests/ledger.py records, conftest.py's hooks drive it, tools/ledger.py summarises)."""
from __future__ import annotations

import importlib.util
import os
import pathlib
import re
import shutil
import subprocess
import sys

ROOT = pathlib.Path(__file__).resolve().parent.parent


def _tool():
    spec = importlib.util.spec_from_file_location("ledger_tool", ROOT / "tools" / "ledger.py")
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def test_every_mark_names_an_id_of_the_reference():
    ids = _tool().reference_ids()
    assert len(ids) > 80 and "E9" in ids and ids["A1"] == "group property of φ"
    marked = set()
    for path in (ROOT / "tests").glob("*.py"):
        for args in re.findall(r"mark\.verifies\(([^)]*)\)", path.read_text("utf-8")):
            marked.update(re.findall(r"""["']([A-K][0-9]+[a-z]?)["']""", args.split("route=")[0]))
    assert marked, "no test carries a verifies mark"
    assert marked <= set(ids), f"marks name ids that docs/REFERENCE.md lacks: {sorted(marked - set(ids))}"


PLANTED = '''
import numpy as np
import pytest
import opalg
from helpers import Tol, assert_close

@pytest.mark.verifies("C3", route="crba vs itself transposed")
def test_good():
    m = opalg.random_model(4, "tree", seed=1, joints="all")
    M = opalg.crba(m, np.zeros(m.nq))
    assert_close(M, M.T, Tol(1e-12, "symmetric by construction"), "M symmetric")
    assert_close(np.ones(3), np.ones(3) + 1e-13, Tol(1e-11, "planted"), "one ratio 1e-2")

@pytest.mark.verifies("C3", "E9", route="a planted failure")
def test_bad():
    opalg.random_model(3, "chain", seed=2)
    assert_close(np.ones(3), 2 * np.ones(3), 1e-12, "off by a factor 2")

def test_unmarked():
    assert_close(np.ones(3), np.ones(3), 1e-12, "not recorded")
'''


def test_a_marked_tests_comparisons_and_models_reach_the_page(tmp_path):
    for rel in ("conftest.py", "tests/ledger.py", "tests/helpers.py"):
        (tmp_path / rel).parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(ROOT / rel, tmp_path / rel)
    (tmp_path / "tests" / "test_planted.py").write_text(PLANTED, encoding="utf-8")
    (tmp_path / "pytest.ini").write_text("[pytest]\naddopts = -p no:cacheprovider\n")
    records = tmp_path / "records"
    env = {**os.environ, "OPALG_LEDGER": str(records)}
    run = subprocess.run([sys.executable, "-m", "pytest", "-q", "tests/test_planted.py"],
                         cwd=tmp_path, env=env, capture_output=True, text=True, timeout=300)
    assert "1 failed, 2 passed" in run.stdout, run.stdout + run.stderr

    tool = _tool()
    recs = tool.load(records)
    assert sorted(r["test"].split("::")[1] for r in recs) == ["test_bad", "test_good"]
    good = next(r for r in recs if r["test"].endswith("test_good"))
    assert good["outcome"] == "passed" and good["ids"] == ["C3"]
    assert [c["what"] for c in good["checks"]] == ["M symmetric", "one ratio 1e-2"]
    assert good["checks"][1]["why"] == "planted"
    assert good["models"] == [{"topology": "tree", "n": 4, "order": "base-to-tip",
                               "joints": good["models"][0]["joints"]}]

    rows = tool.summarise(recs, tool.reference_ids())
    assert set(rows) == {"C3", "E9"}
    assert rows["C3"]["failed"] and rows["C3"]["checks"] == 3 and rows["C3"]["models"] == 2
    ratio, what, _ = rows["C3"]["worst"]
    assert what == "off by a factor 2" and ratio > 1e11     # err 0.5 over tolerance 1e-12
    page = tool.markdown(rows, tool.reference_ids())
    assert "| C3 | mass matrix | 2 (1 failed) |" in page
    assert "- A1 — group property of φ" in page                      # listed as not verified
    assert "**Tolerance** (1 comparisons): planted." in page
