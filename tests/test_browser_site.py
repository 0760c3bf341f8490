"""The course site (``make html``) in a real browser with the network blocked.

``tools/site/build.py`` builds the students' site (Sphinx + myst-nb, no model answers) into a
scratch directory; ``http.server`` serves it on 127.0.0.1 and Debian's Chromium (driven by
Playwright, never ``playwright install``) opens every page.  Every request that is not to the
local server is refused (a proxy that is not there, :func:`browser.loopback_only`) *and
recorded*: a page that asks for anything off the machine fails.  Per page: MathJax finished its
first typesetting (``data-mathjax="done"``, set by ``tools/site/mathjax_hooks.js``), no MathJax
error (none recorded by that configuration, no ``mjx-merror`` element), no TeX delimiter left
unrendered in the text (outside code and notebook outputs), every image loaded and has alt text
that is not its file name (an animation's frames: the figure's ``role="img"`` label), every
local link answers 200 and every ``#fragment`` exists on its page, no link to a model answer,
no JavaScript error, no local file answered with an HTTP error (a MathJax font or extension).
The previous/next links chain every page of the table of contents, notebooks in the syllabus's
order.  Every relative link written in a notebook is, on its page, a link to its target's page.
Then, in a second Chromium (clicks and typing): a search typed into the search dialog finds the
articulated-body notebook offline; an animation's player draws its buttons and steps a frame.
The students' build holds no answer page, no link to one, no answer in its search index.  The
checker is itself checked on copies of a page with one planted fault each (:data:`BROKEN`).
One Chromium page serves every page load of the checks.

Without Chromium or Playwright the test is skipped, except with ``CI=true``, where it fails
(``.ci/run`` installs Chromium).
"""

from __future__ import annotations

import functools
import http.server
import pathlib
import re
import subprocess
import sys
import threading
import tomllib
import urllib.error
import urllib.parse
import urllib.request

import pytest
from browser import launch, loopback_only, require_chromium_and_playwright

ROOT = pathlib.Path(__file__).resolve().parent.parent
PAGE_MS = 180_000   # generous: the slowest page typesets in a few seconds on a loaded machine

#: The renderer composites on its main thread for the page checks: those pages are loaded and
#: read, never scrolled, clicked or animated (Playwright's clicks time out without the compositor
#: thread, so the search and the animation player get a browser of their own).
STATIC_PAGE_ARGS = ["--disable-threaded-compositing"]

# What the checks read from a page, in one round trip once MathJax is done: its recorded
# errors, error elements, TeX left as text outside code and outputs, the images (loaded width,
# alt, src, whether a figure with role="img" labels them), the links, the previous/next links.
PAGE_FACTS = r"""() => {
  const skip = 'pre, code, script, style, mjx-container, .cell_output, .highlight';
  const walker = document.createTreeWalker(document.body, NodeFilter.SHOW_TEXT);
  const leftover = [];
  const re = /\$\$|\$[^\s$][^$]*\$|\\\(|\\\[|\\begin\{/;
  while (walker.nextNode()) {
    const n = walker.currentNode;
    if (n.parentElement && n.parentElement.closest(skip)) continue;
    if (re.test(n.nodeValue)) leftover.push(n.nodeValue.trim().slice(0, 80));
  }
  const rel = sel => { const a = document.querySelector(sel); return a ? a.getAttribute('href') : null; };
  return {
    mjErrors: window.opalgMath ? window.opalgMath.errors : ['no MathJax configuration on the page'],
    nErr: document.querySelectorAll('mjx-merror, [data-mjx-error]').length
      + (/Math (input|output|Processing) error/i.test(document.body.innerText) ? 1 : 0),
    leftover: leftover,
    images: [...document.images].map(i => [i.naturalWidth, i.alt || '', (i.getAttribute('src') || '').slice(0, 80),
                                         !!i.closest('figure[role=img][aria-label]')]),
    hrefs: [...document.querySelectorAll('a[href]')].map(a => a.getAttribute('href')),
    prev: rel('a.left-prev'), next: rel('a.right-next'),
  };
}"""
# The fragments (``#x`` links) that name no element of the page.
MISSING_TARGETS = "fs => fs.filter(f => !(document.getElementById(f) || document.getElementsByName(f).length))"
#: Pages Sphinx makes besides the documents (no previous/next links).
GENERATED = {"search.html", "genindex.html"}


@pytest.fixture(scope="module")
def site(tmp_path_factory):
    require_chromium_and_playwright()
    out = tmp_path_factory.mktemp("site") / "html"
    build = subprocess.run([sys.executable, str(ROOT / "tools" / "site" / "build.py"), "--out", str(out)],
                           capture_output=True, text=True, timeout=900)
    assert build.returncode == 0, build.stdout + build.stderr
    handler = functools.partial(_QuietHandler, directory=str(out))
    server = _QuietServer(("127.0.0.1", 0), handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}/", out
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


def site_pages(out: pathlib.Path) -> list[str]:
    """Every HTML page of the built site (not the theme's and Sphinx's own folders)."""
    return sorted(p.relative_to(out).as_posix() for p in out.rglob("*.html")
                  if not p.relative_to(out).parts[0].startswith("_"))


@pytest.fixture(scope="module")
def playwright_offline(site):
    """Playwright, and Chromium arguments that refuse every off-machine request."""
    from playwright.sync_api import sync_playwright

    with sync_playwright() as p, loopback_only() as offline_args:
        yield p, offline_args


def _recorded_page(browser, base: str):
    """A page of a new context, with lists of its off-machine requests and of its errors."""
    context = browser.new_context(viewport={"width": 1280, "height": 900})
    offsite: list[str] = []
    errors: list[str] = []
    # Inline data (images) is not a request to anywhere.
    context.on("request", lambda r: r.url.startswith(base) or r.url.startswith(("data:", "blob:"))
               or offsite.append(r.url))
    page = context.new_page()
    page.on("pageerror", lambda exc: errors.append(str(exc)))
    # A local file the page asked for and did not get (a MathJax font or extension, ...);
    # the browser's own guess at a favicon is not the page's.
    page.on("response", lambda r: r.status >= 400 and r.url.startswith(base)
            and not r.url.endswith("/favicon.ico") and errors.append(f"HTTP {r.status} for {r.url[len(base):]}"))
    return page, offsite, errors


@pytest.fixture(scope="module")
def browser_page(site, playwright_offline):
    """One Chromium page for every page load of the module, composited on the main thread."""
    p, offline_args = playwright_offline
    browser = launch(p, offline_args + STATIC_PAGE_ARGS)
    try:
        yield _recorded_page(browser, site[0])
    finally:
        browser.close()


@pytest.fixture(scope="module")
def interactive_page(site, playwright_offline):
    """A Chromium page for clicks and typing (Playwright's clicks need the compositor thread)."""
    p, offline_args = playwright_offline
    browser = launch(p, offline_args)
    try:
        yield _recorded_page(browser, site[0])
    finally:
        browser.close()


def _ids(out: pathlib.Path, path: str, cache: dict[str, set[str]]) -> set[str]:
    """The ids of the built file ``path`` (a cross-page ``#fragment`` must be one)."""
    if path not in cache:
        f = out / path
        text = f.read_text(encoding="utf-8") if f.is_file() else ""
        cache[path] = set(re.findall(r'\sid="([^"]+)"', text))
    return cache[path]


def check_page(browser_page, base: str, name: str, out: pathlib.Path, checked: dict) -> tuple[list[str], dict]:
    """Load ``base + name`` and return its problems (empty if none) and the facts read."""
    page, offsite, errors = browser_page
    offsite.clear(), errors.clear()
    problems: list[str] = []
    where = f"{name}:"
    page.goto(base + name, timeout=PAGE_MS)
    # MathJax's first typesetting is over (or a file it needed failed to load).
    page.wait_for_function("() => document.documentElement.dataset.mathjax === 'done'", timeout=PAGE_MS)
    facts = page.evaluate(PAGE_FACTS)
    mj_errors, n_err = facts["mjErrors"], facts["nErr"]
    if mj_errors or n_err:
        problems.append(f"{where} {max(n_err, len(mj_errors))} MathJax error(s): {mj_errors[:3]}")
    if facts["leftover"]:
        problems.append(f"{where} unrendered TeX, e.g. {facts['leftover'][:3]}")
    for w, alt, src, labelled in facts["images"]:
        if w == 0:
            problems.append(f"{where} an image did not load ({src})")
        if not labelled and (not alt.strip() or alt.rsplit("/", 1)[-1] == src.rsplit("/", 1)[-1]):
            problems.append(f"{where} an image without alt text ({src})")
    fragments = []   # (as written, as looked up) for the links within the page
    for href in facts["hrefs"]:
        if href.startswith(("http://", "https://", "mailto:")) and not href.startswith(base):
            continue   # external references are links to click, never loaded by the page
        target, _, frag = href.partition("#")
        if "solutions/" in target:
            problems.append(f"{where} links a model answer: {href}")
        if not target:
            if frag:
                fragments.append((frag, urllib.parse.unquote(frag)))
            continue
        url = urllib.parse.urljoin(base + name, target)
        if url not in checked["links"]:
            checked["links"][url] = _status(url)
        if checked["links"][url] != 200:
            problems.append(f"{where} dead link {href}")
        elif frag and url.startswith(base):
            path = urllib.parse.unquote(urllib.parse.urlsplit(url).path).lstrip("/")
            if urllib.parse.unquote(frag) not in _ids(out, path, checked["ids"]):
                problems.append(f"{where} link {href}: no #{frag} on that page")
    if fragments:
        missing = set(page.evaluate(MISSING_TARGETS, sorted({f for _, f in fragments})))
        problems += [f"{where} link #{frag} has no target" for frag, f in fragments if f in missing]
    if name not in GENERATED and not (facts["prev"] or facts["next"]):
        problems.append(f"{where} no previous/next links")
    if offsite:
        problems.append(f"{where} asked for off-machine resources: {sorted(set(offsite))[:3]}")
    if errors:
        problems.append(f"{where} JavaScript or HTTP errors: {errors[:2]}")
    return problems, facts


def test_every_page_renders_offline(site, browser_page):
    base, out = site
    pages = site_pages(out)
    problems: list[str] = []
    checked: dict = {"links": {}, "ids": {}}
    chain: dict[str, tuple[str | None, str | None]] = {}
    for name in pages:
        found, facts = check_page(browser_page, base, name, out, checked)
        problems += found
        join = lambda h: h and posix_join(name, h)  # noqa: E731
        chain[name] = (join(facts["prev"]), join(facts["next"]))
    assert not problems, "\n".join(problems)
    # The next links run from the landing page through every page, each page's previous link
    # pointing back; the notebooks come in the syllabus's order.
    order, name = [], "index.html"
    while name and name not in order:
        order.append(name)
        nxt = chain[name][1]
        assert nxt is None or chain[nxt][0] == name, (name, nxt, chain.get(nxt))
        name = nxt
    assert sorted(order) == sorted(set(pages) - GENERATED), (order, pages)
    with open(ROOT / "notebooks" / "syllabus.toml", "rb") as f:
        syllabus = [f"notebooks/{e['file'][:-6]}.html" for e in tomllib.load(f)["notebook"]]
    assert [p for p in order if p in syllabus] == syllabus, order
    for doc in ("docs/NOTATION.html", "docs/REFERENCE.html", "docs/ARCHITECTURE.html", "README.html"):
        assert doc in order, order


def posix_join(page: str, href: str) -> str:
    """The site path a relative ``href`` of ``page`` names (fragment dropped)."""
    import posixpath

    return posixpath.normpath(posixpath.join(posixpath.dirname(page), href.partition("#")[0]))


def test_students_site_has_no_answers(site):
    base, out = site
    answers = sorted(p.stem for p in (ROOT / "docs" / "solutions").glob("*.md"))
    assert answers, "docs/solutions/ holds the model answers"
    assert not (out / "docs" / "solutions").exists()
    assert not [p for p in out.rglob("*") if "solutions" in p.relative_to(out).parts]
    # Nor in the search index (its document names) or any page's links.
    index = (out / "searchindex.js").read_text(encoding="utf-8")
    assert "docs/solutions" not in index
    assert not [p for p in site_pages(out) if re.search(r'href="[^"]*solutions/', (out / p).read_text("utf-8"))]


def notebook_links(nb_path: pathlib.Path) -> list[str]:
    """The relative links written in a notebook's markdown cells (markdown and HTML links)."""
    import json

    links = []
    for cell in json.loads(nb_path.read_text(encoding="utf-8"))["cells"]:
        if cell["cell_type"] == "markdown":
            text = "".join(cell["source"])
            links += re.findall(r"\]\(([^)\s]+)\)", text) + re.findall(r"""href=["']([^"']+)["']""", text)
    return [h for h in links if not re.match(r"[a-z]+:", h) and not h.startswith("#")]


def test_notebook_links_reach_their_pages(site):
    """Every relative link of every notebook is a link, on the notebook's page, to the page of
    its target (a notebook or a markdown document; its #fragment on that page); a link to a
    model answer is plain text in the students' site, never a link."""
    import posixpath

    _, out = site
    problems, followed = [], 0
    for nb in sorted((ROOT / "notebooks").glob("*.ipynb")):
        page = f"notebooks/{nb.stem}.html"
        hrefs = set(re.findall(r'<a [^>]*href="([^"]+)"', (out / page).read_text(encoding="utf-8")))
        for link in notebook_links(nb):
            path, _, frag = link.partition("#")
            target = posixpath.normpath(posixpath.join("notebooks", path))
            if target.startswith("docs/solutions/"):
                if [h for h in hrefs if "solutions/" in h]:
                    problems.append(f"{page}: links a model answer ({link})")
                continue
            stem, ext = posixpath.splitext(path)
            if ext not in (".md", ".ipynb"):
                continue   # a repository file that is not a page: plain text on the site
            want = stem + ".html" + (f"#{frag}" if frag else "")
            if want not in hrefs:
                problems.append(f"{page}: the notebook's link {link} is not a link to {want}")
            elif not (out / posixpath.splitext(target)[0]).with_suffix(".html").is_file():
                problems.append(f"{page}: {want} was not built")
            elif frag and frag not in _ids(out, posixpath.splitext(target)[0] + ".html", {}):
                problems.append(f"{page}: no #{frag} on {want}")
            followed += 1
    assert not problems, "\n".join(problems)
    assert followed >= 16, followed   # every notebook links the notation table at least


def test_search_works_offline(site, interactive_page):
    """Typed into the theme's search dialog (opened by its button), a query lists the pages
    that hold it."""
    base, _ = site
    page, offsite, errors = interactive_page
    page.goto(base + "index.html", timeout=PAGE_MS)
    page.get_by_role("button", name="Search").first.click()
    page.keyboard.type("innovations factorization")
    page.keyboard.press("Enter")
    page.wait_for_selector("#search-results li a", timeout=PAGE_MS)
    assert page.url.startswith(base + "search.html?q=innovations"), page.url
    hits = page.evaluate("() => [...document.querySelectorAll('#search-results li a')].map(a => a.getAttribute('href'))")
    assert any(h.startswith("notebooks/05_articulated_body.html") for h in hits), hits
    assert not offsite and not errors, (offsite, errors)


def test_animation_player_steps(site, interactive_page):
    """A notebook's JavaScript animation (matplotlib's player): buttons drawn, one frame step."""
    base, out = site
    name = next(p for p in site_pages(out) if 'class="animation"' in (out / p).read_text("utf-8"))
    page, offsite, errors = interactive_page
    page.goto(base + name, timeout=PAGE_MS)
    # Font Awesome (the theme's) turns the player's <i class="fa ..."> into drawn <svg> icons.
    page.wait_for_function("() => document.querySelectorAll('.animation .anim-buttons svg').length >= 9",
                           timeout=PAGE_MS)
    player = page.locator(".animation").first
    state = "a => [a.querySelector('input.anim-slider').value, a.querySelector('img').src]"
    frame0, src0 = player.evaluate(state)
    assert frame0 == "0" and src0.startswith("data:image/png;base64,"), (frame0, src0[:40])
    # The theme's bundled Font Awesome draws every button's icon (matplotlib's CDN link is gone).
    icons = player.evaluate("a => [...a.querySelectorAll('.anim-buttons button')].map("
                            "b => b.querySelector('svg') ? b.querySelector('svg').getBoundingClientRect().width : 0)")
    assert len(icons) == 9 and min(icons) > 0, icons
    player.locator('button[title="Next frame"]').click()
    frame1, src1 = player.evaluate(state)
    assert frame1 == "1" and src1 != src0 and src1.startswith("data:image/png;base64,"), frame1
    assert not offsite and not errors, (offsite, errors)


#: Planted faults, one of each kind the page check must report (inside the page's content,
#: where MyST's pages have MathJax typeset only the math it marked).
BROKEN = {
    "parse": r'<p>A TeX parse error: <span class="math notranslate nohighlight">\(x^2^3\)</span>.</p>',
    "undefined": r'<p>An undefined macro: <span class="math notranslate nohighlight">\(\notamacro x\)</span>.</p>',
    "leftover": r"<p>Left as text: $a + b$.</p>",
    "image": '<p><img src="no-such-image.png" alt="missing"></p>',
    "link": '<p><a href="no-such-page.html">dead</a> <a href="#no-such-anchor">no target</a> '
            '<a href="REFERENCE.html#no-such-section">no section</a></p>',
    "answer": '<p><a href="solutions/05_articulated_body.html">answer</a></p>',
    "offsite": '<p><img src="https://example.invalid/x.png" alt="remote"></p>',
}


def test_page_check_reports_planted_faults(site, browser_page):
    """The checker itself: copies of a page with one fault planted each, each reported."""
    base, out = site
    original = (out / "docs" / "NOTATION.html").read_text(encoding="utf-8")
    anchor = re.search(r'<section[^>]*class="[^"]*tex2jax_ignore[^"]*"[^>]*>', original)
    assert anchor, "MyST marks its pages' sections for MathJax to skip"
    # An image that loads, with Sphinx's stand-in for a missing alt: its own file name.
    png = next((out / "_images").glob("*.png")).name
    planted = {**BROKEN, "alt": f'<p><img src="../_images/{png}" alt="../_images/{png}"></p>'}
    problems = {}
    checked: dict = {"links": {}, "ids": {}}
    for kind, html in planted.items():
        name = f"docs/broken-{kind}.html"
        (out / name).write_text(original.replace(anchor.group(0), anchor.group(0) + html, 1), encoding="utf-8")
        problems[kind] = "\n".join(check_page(browser_page, base, name, out, checked)[0])
    # The same page without its previous/next links.
    bare = re.sub(r'<a class="(left-prev|right-next)"', r'<a class="\1-gone"', original)
    (out / "docs" / "broken-nav.html").write_text(bare, encoding="utf-8")
    problems["nav"] = "\n".join(check_page(browser_page, base, "docs/broken-nav.html", out, checked)[0])
    assert "MathJax error" in problems["parse"] and "Double exponent" in problems["parse"], problems
    assert "MathJax error" in problems["undefined"] and "notamacro" in problems["undefined"], problems
    assert "unrendered TeX" in problems["leftover"] and "a + b" in problems["leftover"], problems
    assert "did not load" in problems["image"] and "HTTP 404" in problems["image"], problems
    assert "without alt text" in problems["alt"], problems
    assert "dead link no-such-page.html" in problems["link"], problems
    assert "#no-such-anchor has no target" in problems["link"], problems
    assert "REFERENCE.html#no-such-section: no #no-such-section" in problems["link"], problems
    assert "links a model answer" in problems["answer"], problems
    assert "off-machine" in problems["offsite"], problems
    assert "no previous/next links" in problems["nav"], problems
    # Each planted page reports its own fault only (the rest of the page is clean).
    for kind in ("parse", "undefined", "leftover", "alt", "nav"):
        assert problems[kind].count("\n") == 0, problems[kind]
