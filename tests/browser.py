"""Shared pieces of the real-browser tests (tests/test_browser_*.py): Debian's Chromium driven
by Playwright (never ``playwright install``), and the skip-locally / fail-on-CI rule."""

from __future__ import annotations

import contextlib
import os
import socket
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


def launch(playwright, extra_args: list[str] = ()):
    """Debian's Chromium, headless, with :data:`CHROMIUM_ARGS` and ``extra_args``."""
    return playwright.chromium.launch(executable_path=str(CHROMIUM),
                                      args=CHROMIUM_ARGS + list(extra_args))


@contextlib.contextmanager
def loopback_only():
    """Chromium arguments that let only loopback requests reach the network.

    Every other request is sent to a proxy at a loopback port that is bound and never
    listened on, so it is refused at once (net::ERR_PROXY_CONNECTION_FAILED); loopback
    addresses bypass the proxy (Chromium's implicit rule).  Unlike Playwright's request
    routing, which turns the browser's HTTP cache off, this keeps the cache: a file many
    pages load (MathJax's 1.3 MB script, its fonts) is fetched and compiled once.
    """
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind(("127.0.0.1", 0))   # held, not listening: connections to it are refused
        yield [f"--proxy-server=http://127.0.0.1:{s.getsockname()[1]}"]
