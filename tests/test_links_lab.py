"""Every relative link of every notebook reaches its target in JupyterLab, as `make lab` serves it.

`make lab` roots the Jupyter server at the repository.  JupyterLab opens a relative link of a
rendered notebook by resolving it against the notebook's own path and asking the server's
contents API for the file; so this test starts the server with the root `make lab` gives
(read from the Makefile's recipe, ``make -n lab``), resolves each link the same way and asks
``/api/contents/<path>`` for it: 200, a file or a notebook.  (Voilà and the site are checked by
tests/test_browser_ider.py and tests/test_browser_site.py.)
"""

from __future__ import annotations

import json
import re
import socket
import subprocess
import sys
import time
import urllib.error
import urllib.parse
import urllib.request
from pathlib import Path, PurePosixPath

import pytest
from helpers import relative_links

ROOT = Path(__file__).resolve().parent.parent
TOKEN = "opalg-links-test"


def lab_root() -> Path:
    """The server root of `make lab`: its --ServerApp.root_dir, read from the recipe."""
    recipe = subprocess.run(["make", "-n", "-s", "lab"], cwd=ROOT, capture_output=True, text=True,
                            check=True).stdout
    m = re.search(r"jupyter lab .*--ServerApp\.root_dir=(\S+)", recipe)
    assert m, f"`make lab` sets no --ServerApp.root_dir: {recipe!r}"
    return Path(m.group(1)).resolve()


@pytest.fixture(scope="module")
def server():
    root = lab_root()
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    proc = subprocess.Popen([sys.executable, "-m", "jupyter_server", f"--ServerApp.root_dir={root}",
                             f"--port={port}", "--ServerApp.port_retries=0", "--ServerApp.ip=127.0.0.1",
                             "--no-browser", "--allow-root", f"--IdentityProvider.token={TOKEN}"],
                            cwd=ROOT, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    base = f"http://127.0.0.1:{port}"
    try:
        deadline = time.monotonic() + 60
        while True:
            try:
                with urllib.request.urlopen(f"{base}/api/status?token={TOKEN}", timeout=2):
                    break
            except (urllib.error.URLError, OSError):
                if proc.poll() is not None or time.monotonic() > deadline:
                    pytest.fail(f"jupyter_server did not start: {proc.stderr.read().decode()[-2000:]}")
                time.sleep(0.25)
        yield base, root
    finally:
        proc.terminate()
        proc.wait(timeout=20)


def test_every_notebook_link_opens_in_lab(server):
    base, root = server
    assert root == ROOT, f"`make lab` roots the server at {root}, not the repository {ROOT}"
    notebooks = sorted(ROOT.glob("notebooks/*.ipynb")) + sorted(ROOT.glob("notebooks/panels/*.ipynb"))
    checked, bad = 0, []
    for nb in notebooks:
        here = PurePosixPath(nb.relative_to(root).as_posix()).parent
        for link in relative_links(nb):
            parts = []
            for part in (here / urllib.parse.unquote(link)).parts:    # resolve .. as Lab does
                if part == "..":
                    if not parts:
                        bad.append(f"{nb.name}: {link} leaves the server root")
                        break
                    parts.pop()
                elif part != ".":
                    parts.append(part)
            else:
                path = "/".join(parts)
                url = f"{base}/api/contents/{urllib.parse.quote(path)}?content=0&token={TOKEN}"
                try:
                    with urllib.request.urlopen(url, timeout=30) as r:
                        kind = json.load(r)["type"]
                    if kind not in ("file", "notebook"):
                        bad.append(f"{nb.name}: {link} -> {path} is a {kind}")
                except urllib.error.HTTPError as e:
                    bad.append(f"{nb.name}: {link} -> {path}: HTTP {e.code}")
                checked += 1
    assert checked >= 20, f"only {checked} relative links found: is the link pattern right?"
    assert not bad, "links that do not open in JupyterLab:\n" + "\n".join(bad)
