"""pytest plugin of ``make faults``: per test file, stop at its first failure and record it.

Loaded with ``-p faults_plugin`` (this folder on PYTHONPATH).  Once a test of a file fails (or
the file fails to collect), the file's remaining tests are skipped: the file has *killed* the
fault, and the next file is tried, so the kill matrix shows every listed file's verdict at the
cost of one failing test per killing file.  The verdicts go, as JSON, to the file named by FAULTS_REPORT.
"""

from __future__ import annotations

import json
import os
import resource

import pytest

_files: dict = {}


def _file_of(nodeid: str) -> str:
    return nodeid.split("::", 1)[0]


def _entry(f: str) -> dict:
    return _files.setdefault(f, {"passed": 0, "failed": 0, "skipped": 0, "first_failure": None})


def pytest_collectreport(report):
    if report.failed:
        e = _entry(_file_of(report.nodeid) or "?")
        e["failed"] += 1
        e["first_failure"] = e["first_failure"] or f"{report.nodeid} (collection error)"


def pytest_collection_modifyitems(session, config, items):
    for it in items:
        _entry(_file_of(it.nodeid))


def pytest_runtest_setup(item):
    e = _files.get(_file_of(item.nodeid))
    if e is not None and e["first_failure"] is not None:
        pytest.skip("this file already caught the fault")


def pytest_runtest_logreport(report):
    e = _entry(_file_of(report.nodeid))
    if report.failed:
        if e["first_failure"] is None:
            e["first_failure"] = report.nodeid
            # The first line of the failure, to tell an assertion from a crash.
            text = str(report.longrepr).strip().splitlines()
            e["reason"] = next((ln.strip() for ln in reversed(text) if ln.strip().startswith("E ")), text[-1] if text else "")[:200]
        e["failed"] += 1
    elif report.when == "call" and report.passed:
        e["passed"] += 1
    elif report.skipped and report.when in ("setup", "call"):
        e["skipped"] += 1


def pytest_sessionfinish(session, exitstatus):
    out = os.environ.get("FAULTS_REPORT")
    if out:
        ru = resource.getrusage(resource.RUSAGE_SELF)   # CPU time: a measure the machine's load leaves alone
        with open(out, "w", encoding="utf-8") as fh:
            json.dump({"cpu": ru.ru_utime + ru.ru_stime, "files": _files}, fh, indent=1)
