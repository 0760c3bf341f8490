"""Root pytest configuration: the hypothesis profiles, nbval's sanitizer path, and the hooks
that let tests record the verification ledger (``tests/ledger.py``, ``make ledger``).

The notebooks are tested by plain nbval (``--nbval`` in pyproject.toml): each one is executed
in a fresh kernel and every text output is compared with the committed one after the
sanitizers of ``tools/nbval_sanitize.cfg``; figures are not compared.
"""
from __future__ import annotations

import pathlib
import sys

import pytest
from hypothesis import settings

ROOT = pathlib.Path(__file__).resolve().parent
sys.path.insert(0, str(ROOT / "tests"))
import ledger  # noqa: E402  (tests/ledger.py: tests/ is not a package)

# Hypothesis: derandomized so that CI and a student's run try the same examples;
# no deadline (timing belongs in benchmarks/, not in tests).
settings.register_profile("opalg", derandomize=True, deadline=None, max_examples=25,
                          print_blob=True)
# Opt-in: `pytest tests/test_property.py --hypothesis-profile=thorough`: >= 1,000 new random
# models per property test, not derandomized, so every run explores new models.
settings.register_profile("thorough", parent=settings.get_profile("opalg"), max_examples=1000,
                          derandomize=False)
settings.load_profile("opalg")


def pytest_configure(config):
    config.addinivalue_line("markers", "verifies(*ids, route=...): the ids of docs/REFERENCE.md "
                            "a test verifies and the routes it compares (tests/ledger.py)")
    # nbval reads --nbval-sanitize-with relative to the cwd: make it absolute.
    if hasattr(config.option, "nbval_sanitize_with") and not config.option.nbval_sanitize_with:
        config.option.nbval_sanitize_with = str(ROOT / "tools" / "nbval_sanitize.cfg")


@pytest.hookimpl(wrapper=True)
def pytest_runtest_protocol(item, nextitem):
    """Record a ``verifies``-marked test's checks and models (only under ``OPALG_LEDGER``)."""
    ledger.start(item.nodeid, item.iter_markers("verifies"))
    item.ledger_outcome = "passed"
    with ledger.watching_models():
        result = yield
    ledger.finish(item.ledger_outcome)
    return result


@pytest.hookimpl(wrapper=True)
def pytest_runtest_makereport(item, call):
    report = yield
    if report.failed:
        item.ledger_outcome = "failed"
    elif report.skipped and call.when != "teardown":
        item.ledger_outcome = "skipped"
    return report
