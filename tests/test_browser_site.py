"""The static site (``make html``) in a real browser with the network blocked.

``tools/build_site.py`` exports the committed notebooks and documents to a scratch directory;
``http.server`` serves it on 127.0.0.1 and Debian's Chromium (driven by Playwright, never
``playwright install``) opens every page.  Every request that is not to the local server is
aborted *and recorded*: a page that asks for anything off the machine fails.  Per page: MathJax
finished its first typesetting (its ``End`` startup hook), no MathJax error, no TeX delimiter left
unrendered in the text (outside code and preformatted outputs), every image loaded and has alt
text, every local link answers 200 and every ``#fragment`` exists, and the page links the index,
its previous and its next page.

Without Chromium or Playwright the test is skipped, except with ``CI=true``, where it fails
(``.ci/run`` installs Chromium).
"""

from __future__ import annotations

import functools
import http.server
import pathlib
import sys
import threading
import urllib.error
import urllib.parse
import urllib.request

import pytest
from browser import launch, require_chromium_and_playwright

ROOT = pathlib.Path(__file__).resolve().parent.parent
PAGE_MS = 180_000   # the largest page (the reference) typesets a few thousand formulas

# Text left in the page outside code, outputs and rendered math: TeX that MathJax did not take.
LEFTOVER_TEX = r"""() => {
  const skip = 'pre, code, script, style, .MathJax, .MathJax_Display, .MathJax_Preview, .jp-OutputArea-output, .output_area, .MJX_Assistive_MathML, .MathJax_CHTML, .mjx-chtml';
  const walker = document.createTreeWalker(document.body, NodeFilter.SHOW_TEXT);
  const bad = [];
  const re = /\$\$|\$[^\s$][^$]*\$|\\\(|\\\[|\\begin\{/;
  while (walker.nextNode()) {
    const n = walker.currentNode;
    if (n.parentElement && n.parentElement.closest(skip)) continue;
    if (re.test(n.nodeValue)) bad.push(n.nodeValue.trim().slice(0, 80));
  }
  return bad;
}"""


@pytest.fixture(scope="module")
def site(tmp_path_factory):
    require_chromium_and_playwright()
    sys.path.insert(0, str(ROOT / "tools"))
    try:
        from build_site import build_site
    finally:
        sys.path.remove(str(ROOT / "tools"))
    out = tmp_path_factory.mktemp("site") / "html"
    report = build_site(out, ROOT)
    handler = functools.partial(_QuietHandler, directory=str(out))
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}/", report
    finally:
        server.shutdown()


class _QuietHandler(http.server.SimpleHTTPRequestHandler):
    def log_message(self, *args):  # keep pytest's output clean
        pass


def _status(url: str) -> int:
    try:
        with urllib.request.urlopen(url, timeout=10) as r:
            return r.status
    except urllib.error.HTTPError as e:
        return e.code


def test_every_page_renders_offline(site):
    base, report = site
    from playwright.sync_api import sync_playwright

    problems: list[str] = []
    with sync_playwright() as p:
        browser = launch(p)
        context = browser.new_context(viewport={"width": 1280, "height": 900})
        offsite: list[str] = []

        def route(r):
            if r.request.url.startswith(base):
                r.continue_()
            else:
                offsite.append(r.request.url)
                r.abort()

        context.route("**/*", route)
        page = context.new_page()
        errors: list[str] = []
        page.on("pageerror", lambda exc: errors.append(str(exc)))
        checked_links: set[str] = set()
        for name in report["pages"]:
            offsite.clear(), errors.clear()
            page.goto(base + name, timeout=PAGE_MS)
            page.wait_for_function("() => window.MathJax && MathJax.Hub && MathJax.Hub.Register",
                                   timeout=PAGE_MS)
            page.evaluate("() => new Promise(r => MathJax.Hub.Register.StartupHook('End', () => r(true)))")
            page.evaluate("() => new Promise(r => MathJax.Hub.Queue(() => r(true)))")
            where = f"{name}:"
            n_err = page.evaluate("() => document.querySelectorAll('.merror, .noError, .MathJax_Error').length"
                                  " + (document.body.innerText.includes('Math Processing Error') ? 1 : 0)")
            if n_err:
                problems.append(f"{where} {n_err} MathJax error(s)")
            leftover = page.evaluate(LEFTOVER_TEX)
            if leftover:
                problems.append(f"{where} unrendered TeX, e.g. {leftover[:3]}")
            images = page.evaluate("() => [...document.images].map(i => [i.naturalWidth, i.alt || '', i.src.slice(0, 60)])")
            for w, alt, src in images:
                if w == 0:
                    problems.append(f"{where} an image did not load ({src})")
                if not alt.strip():
                    problems.append(f"{where} an image without alt text ({src})")
            # nbconvert's pilcrow self-links on headings (a.anchor-link) are not navigation.
            hrefs = page.evaluate("() => [...document.querySelectorAll('a[href]:not(.anchor-link)')].map(a => a.getAttribute('href'))")
            rels = page.evaluate("() => [...document.querySelectorAll('nav.opalg-nav a')].map(a => a.rel)")
            if not {"prev", "next", "index"} <= set(rels):
                problems.append(f"{where} navigation links {rels}")
            for href in hrefs:
                if href.startswith(("http://", "https://", "mailto:")) and not href.startswith(base):
                    continue   # external references are links to click, never loaded by the page
                target, _, frag = href.partition("#")
                if not target:
                    if frag and not page.evaluate(
                            "f => !!(document.getElementById(f) || document.getElementsByName(f).length)",
                            urllib.parse.unquote(frag)):
                        problems.append(f"{where} link #{frag} has no target")
                    continue
                url = urllib.parse.urljoin(base + name, target)
                if url not in checked_links:
                    checked_links.add(url)
                    if _status(url) != 200:
                        problems.append(f"{where} dead link {href}")
            if offsite:
                problems.append(f"{where} asked for off-machine resources: {sorted(set(offsite))[:3]}")
            if errors:
                problems.append(f"{where} JavaScript errors: {errors[:2]}")
        browser.close()
    assert len(report["pages"]) >= 12, report["pages"]
    assert not problems, "\n".join(problems)
