"""The static site (``make html``) in a real browser with the network blocked.

``tools/build_site.py`` exports the committed notebooks and documents to a scratch directory;
``http.server`` serves it on 127.0.0.1 and Debian's Chromium (driven by Playwright, never
``playwright install``) opens every page.  Every request that is not to the local server is
refused (a proxy that is not there, :func:`browser.loopback_only`) *and recorded*: a page
that asks for anything off the machine fails.  Per page: MathJax
finished its first typesetting (``data-mathjax="done"``, set by the page's configuration in
``tools/site_pages.py``), no MathJax error (none recorded by that configuration, no
``mjx-merror`` element), no TeX delimiter left unrendered in the text (outside code and
preformatted outputs), every image loaded and has alt text, every local link answers 200 and
every ``#fragment`` exists, no JavaScript error, no local file answered with an HTTP error
(a MathJax font or extension), the page links the index, its previous and its next page, and
it links the site's one shared stylesheet (:data:`STYLESHEET`), which loaded and styles it, and
inlines none of its CSS; the index page links every page.  One Chromium page serves every page
load.  The checker is itself checked on copies of the index page with one planted fault each
(:data:`BROKEN`).

Without Chromium or Playwright the test is skipped, except with ``CI=true``, where it fails
(``.ci/run`` installs Chromium).
"""

from __future__ import annotations

import functools
import http.server
import pathlib
import re
import sys
import threading
import urllib.error
import urllib.parse
import urllib.request

import pytest
from browser import launch, loopback_only, require_chromium_and_playwright

ROOT = pathlib.Path(__file__).resolve().parent.parent
PAGE_MS = 180_000   # generous: the slowest page typesets in a few seconds on a loaded machine
#: The CSS every page links (nbconvert's JupyterLab styles, pygments', the site's own).
STYLESHEET = "static/notebook.css"
#: What only the shared stylesheet holds: JupyterLab's classes and variables, pygments' class,
#: the site's classes.  A page's own ``<style>`` (matplotlib's animation player) has none.
SHARED_CSS_MARKERS = ("jp-", ".highlight", "opalg-")

#: The renderer composites on its main thread: these pages are loaded and read, never scrolled,
#: clicked or animated, and the hand-offs to a compositor thread cost 13-24 % of Chromium's CPU
#: over the site's pages (two browsers loading the same pages side by side); parsing, layout,
#: MathJax and image decoding are unchanged.  (Not for the widget test: Playwright's clicks
#: time out without the compositor thread.)
STATIC_PAGE_ARGS = ["--disable-threaded-compositing"]

# What the checks read from a page, in one round trip once MathJax is done: its recorded
# errors, error elements, TeX left as text outside code, outputs and rendered math, the images,
# the links (nbconvert's pilcrow self-links on headings, a.anchor-link, are not navigation) and
# the navigation's rel values, the stylesheets linked (href, rules parsed; -1: none) and two
# computed styles only the shared stylesheet gives (a JupyterLab theme variable, the site's nav).
PAGE_FACTS = r"""() => {
  const skip = 'pre, code, script, style, mjx-container, .jp-OutputArea-output, .output_area';
  const walker = document.createTreeWalker(document.body, NodeFilter.SHOW_TEXT);
  const leftover = [];
  const re = /\$\$|\$[^\s$][^$]*\$|\\\(|\\\[|\\begin\{/;
  while (walker.nextNode()) {
    const n = walker.currentNode;
    if (n.parentElement && n.parentElement.closest(skip)) continue;
    if (re.test(n.nodeValue)) leftover.push(n.nodeValue.trim().slice(0, 80));
  }
  return {
    mjErrors: window.opalgMath.errors,
    nErr: document.querySelectorAll('mjx-merror, [data-mjx-error]').length
      + (/Math (input|output|Processing) error/i.test(document.body.innerText) ? 1 : 0),
    leftover: leftover,
    images: [...document.images].map(i => [i.naturalWidth, i.alt || '', i.src.slice(0, 60)]),
    hrefs: [...document.querySelectorAll('a[href]:not(.anchor-link)')].map(a => a.getAttribute('href')),
    rels: [...document.querySelectorAll('nav.opalg-nav a')].map(a => a.rel),
    sheets: [...document.querySelectorAll('link[rel=stylesheet]')].map(
      l => [l.getAttribute('href'), l.sheet ? l.sheet.cssRules.length : -1]),
    styled: [getComputedStyle(document.body).getPropertyValue('--jp-layout-color0').trim(),
             [...document.querySelectorAll('nav.opalg-nav')].map(n => getComputedStyle(n).display)],
  };
}"""
# The fragments (``#x`` links) that name no element of the page.
MISSING_TARGETS = "fs => fs.filter(f => !(document.getElementById(f) || document.getElementsByName(f).length))"


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
    server = _QuietServer(("127.0.0.1", 0), handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}/", report, out
    finally:
        server.shutdown()


class _QuietServer(http.server.ThreadingHTTPServer):
    def handle_error(self, request, client_address):
        # Chromium drops the connections of a page it leaves (fonts, images still loading).
        if not isinstance(sys.exc_info()[1], ConnectionError):
            super().handle_error(request, client_address)


class _QuietHandler(http.server.SimpleHTTPRequestHandler):
    def log_message(self, *args):  # keep pytest's output clean
        pass


def _status(url: str) -> int:
    try:
        with urllib.request.urlopen(url, timeout=10) as r:
            return r.status
    except urllib.error.HTTPError as e:
        return e.code


@pytest.fixture(scope="module")
def browser_page(site):
    """One Chromium page for the module, every off-machine request refused and recorded."""
    base = site[0]
    from playwright.sync_api import sync_playwright

    with sync_playwright() as p, loopback_only() as offline_args:
        browser = launch(p, offline_args + STATIC_PAGE_ARGS)
        context = browser.new_context(viewport={"width": 1280, "height": 900})
        offsite: list[str] = []
        errors: list[str] = []
        # Inline data (images) is not a request to anywhere.
        context.on("request", lambda r: r.url.startswith(base) or r.url.startswith(("data:", "blob:"))
                   or offsite.append(r.url))
        page = context.new_page()
        page.on("pageerror", lambda exc: errors.append(str(exc)))
        # A local file the page asked for and did not get (a MathJax font or extension, ...).
        page.on("response", lambda r: r.status >= 400 and r.url.startswith(base)
                and errors.append(f"HTTP {r.status} for {r.url[len(base):]}"))
        try:
            yield page, offsite, errors
        finally:
            browser.close()


def check_page(browser_page, base: str, name: str, checked_links: set[str], out: pathlib.Path) -> list[str]:
    """Load ``base + name`` (the file ``out / name``) and return its problems (empty if none)."""
    page, offsite, errors = browser_page
    offsite.clear(), errors.clear()
    problems: list[str] = []
    where = f"{name}:"
    page.goto(base + name, timeout=PAGE_MS)
    # MathJax's first typesetting is over (or a file it needed failed to load).
    page.wait_for_function("() => document.documentElement.dataset.mathjax === 'done'",
                           timeout=PAGE_MS)
    facts = page.evaluate(PAGE_FACTS)
    mj_errors, n_err = facts["mjErrors"], facts["nErr"]
    if mj_errors or n_err:
        problems.append(f"{where} {max(n_err, len(mj_errors))} MathJax error(s): {mj_errors[:3]}")
    if facts["leftover"]:
        problems.append(f"{where} unrendered TeX, e.g. {facts['leftover'][:3]}")
    for w, alt, src in facts["images"]:
        if w == 0:
            problems.append(f"{where} an image did not load ({src})")
        if not alt.strip():
            problems.append(f"{where} an image without alt text ({src})")
    rels = facts["rels"]
    if not {"prev", "next", "index"} <= set(rels):
        problems.append(f"{where} navigation links {rels}")
    sheets = facts["sheets"]
    if [h for h, _ in sheets] != [STYLESHEET] or sheets[0][1] <= 0:
        problems.append(f"{where} does not link the shared stylesheet {STYLESHEET} (loaded): {sheets}")
    theme_var, nav_display = facts["styled"]
    if not theme_var or set(nav_display) != {"flex"}:
        problems.append(f"{where} not styled by the shared stylesheet: {facts['styled']}")
    # The file as served (cheaper than asking Chromium for the response body).
    inline = re.findall(r"<style\b[^>]*>(.*?)</style>", (out / name).read_text(encoding="utf-8"),
                        re.S | re.I)
    if any(m in css for css in inline for m in SHARED_CSS_MARKERS) or sum(map(len, inline)) > 4096:
        problems.append(f"{where} inlines shared CSS: <style> elements of {[len(c) for c in inline]} chars")
    fragments = []   # (as written, as looked up) for the links within the page
    for href in facts["hrefs"]:
        if href.startswith(("http://", "https://", "mailto:")) and not href.startswith(base):
            continue   # external references are links to click, never loaded by the page
        target, _, frag = href.partition("#")
        if not target:
            if frag:
                fragments.append((frag, urllib.parse.unquote(frag)))
            continue
        url = urllib.parse.urljoin(base + name, target)
        if url not in checked_links:
            checked_links.add(url)
            if _status(url) != 200:
                problems.append(f"{where} dead link {href}")
    if fragments:
        missing = set(page.evaluate(MISSING_TARGETS, sorted({f for _, f in fragments})))
        problems += [f"{where} link #{frag} has no target" for frag, f in fragments if f in missing]
    if offsite:
        problems.append(f"{where} asked for off-machine resources: {sorted(set(offsite))[:3]}")
    if errors:
        problems.append(f"{where} JavaScript or HTTP errors: {errors[:2]}")
    return problems


def test_every_page_renders_offline(site, browser_page):
    base, report, out = site
    problems: list[str] = []
    checked_links: set[str] = set()
    # The shared stylesheet is served whole (its rules counted in each page as well).
    assert report["stylesheet"] == STYLESHEET, report["stylesheet"]
    with urllib.request.urlopen(base + STYLESHEET, timeout=10) as r:
        assert r.status == 200 and r.headers.get_content_type() == "text/css", (r.status, r.headers)
        assert len(r.read()) > 100_000
    for name in report["pages"]:
        problems += check_page(browser_page, base, name, checked_links, out)
    assert len(report["pages"]) >= 12, report["pages"]
    # The contents page links every other page (its reading order and reference list).
    index = (out / "index.html").read_text(encoding="utf-8")
    assert not [p for p in report["pages"][1:] if f'href="{p}"' not in index], report["plain_links"]
    assert not problems, "\n".join(problems)


#: Planted faults, one of each kind the page check must report.
BROKEN = {
    "parse": r"<p>A TeX parse error: $x^2^3$.</p>",
    "undefined": r"<p>An undefined macro: $\notamacro x$.</p>",
    "leftover": r'<p class="tex2jax_ignore mathjax_ignore">Left as text: $a + b$.</p>',
    "image": '<p><img src="no-such-image.png" alt="missing"></p>',
    "link": '<p><a href="no-such-page.html">dead</a> <a href="#no-such-anchor">no target</a></p>',
    "offsite": '<p><img src="https://example.invalid/x.png" alt="remote"></p>',
}


def test_page_check_reports_planted_faults(site, browser_page):
    """The checker itself: a copy of the index page with faults planted is reported for each."""
    base, _, out = site
    index = urllib.request.urlopen(base + "index.html", timeout=10).read().decode("utf-8")
    assert "<main" in index
    problems = {}
    for kind, html in BROKEN.items():
        name = f"broken-{kind}.html"
        (out / name).write_text(index.replace("<main>", "<main>" + html, 1),
                                           encoding="utf-8")
        problems[kind] = "\n".join(check_page(browser_page, base, name, set(), out))
    assert "MathJax error" in problems["parse"] and "Double exponent" in problems["parse"], problems
    assert "MathJax error" in problems["undefined"] and "notamacro" in problems["undefined"], problems
    assert "unrendered TeX" in problems["leftover"] and "a + b" in problems["leftover"], problems
    assert "did not load" in problems["image"] and "HTTP 404" in problems["image"], problems
    assert "dead link no-such-page.html" in problems["link"], problems
    assert "#no-such-anchor has no target" in problems["link"], problems
    assert "off-machine" in problems["offsite"], problems
    # Each planted page reports its own fault only (the rest of the index page is clean).
    assert "MathJax error" not in problems["image"] + problems["link"], problems
    # The stylesheet: inlined again instead of linked (styled the same), or linked but missing.
    link = re.search(r'<link href="([^"]+)" rel="stylesheet"/>\n', index)
    assert link and link.group(1) == STYLESHEET, link
    css = urllib.request.urlopen(base + STYLESHEET, timeout=10).read().decode("utf-8")
    css = css.removeprefix('@charset "utf-8";\n')   # the page's own encoding holds inline
    for kind, tag in [("inlined", f'<style type="text/css">\n{css}</style>\n'),
                      ("unlinked", link.group(0).replace(STYLESHEET, "static/no-such.css"))]:
        (out / f"broken-{kind}.html").write_text(index.replace(link.group(0), tag, 1), encoding="utf-8")
        problems[kind] = "\n".join(check_page(browser_page, base, f"broken-{kind}.html", set(), out))
    assert "inlines shared CSS" in problems["inlined"], problems
    assert "does not link the shared stylesheet" in problems["inlined"], problems
    assert "not styled" not in problems["inlined"], problems
    assert "not styled by the shared stylesheet" in problems["unlinked"], problems
    assert "HTTP 404" in problems["unlinked"], problems
    assert "inlines" not in problems["unlinked"] + problems["image"], problems
