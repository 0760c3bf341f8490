"""Shared pieces of the real-browser tests (tests/test_browser_*.py): Debian's Chromium driven
by Playwright (never ``playwright install``), and the skip-locally / fail-on-CI rule."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

CHROMIUM = Path("/usr/bin/chromium")
#: Headless as root, with Chromium's own background traffic off: on this machine's closed
#: network those connections are refused many at a time.
CHROMIUM_ARGS = ["--no-sandbox", "--disable-gpu", "--disable-background-networking",
                 "--disable-component-update", "--disable-sync", "--no-first-run",
                 "--disable-quic"]
MISSING_CHROMIUM = "Chromium is not installed: sudo apt-get install chromium (Debian)"


def unavailable(reason: str):
    """Skip locally; on CI (CI=true) a missing piece is an error, not a skip."""
    if os.environ.get("CI") == "true":
        pytest.fail(reason, pytrace=False)
    pytest.skip(reason)


def require_chromium_and_playwright(extra_hint: str = "pip install -e '.[browser]' (make test does)"):
    """Chromium at :data:`CHROMIUM` and Playwright importable, else :func:`unavailable`."""
    if not CHROMIUM.exists():
        unavailable(MISSING_CHROMIUM)
    try:
        import playwright.sync_api  # noqa: F401
    except ImportError as e:
        unavailable(f"Playwright is not installed: {extra_hint} ({e})")


def launch(playwright):
    """Debian's Chromium, headless, with :data:`CHROMIUM_ARGS`."""
    return playwright.chromium.launch(executable_path=str(CHROMIUM), args=CHROMIUM_ARGS)
