"""The page template and the HTML post-processing of the static site (used by build_site.py).

The template extends nbconvert's ``lab`` template and removes everything it would fetch from a
CDN (require.js, the widget manager, mermaid, MathJax): MathJax 3 is the local copy (CommonHTML
output), configured to record its errors (TeX parse errors, math input/output errors, files it
could not load: ``window.opalgMath.errors``) and to flag the end of its first typesetting
(``data-mathjax="done"`` on ``<html>``), read by ``tests/test_browser_site.py``.  TeX errors are
not hidden (no ``noerrors``/``noundefined``): they render as ``mjx-merror`` elements.  The post-processing rewrites links to pages, keeps alt text,
and refuses anything that would leave the machine.
"""
from __future__ import annotations

import posixpath
import re
import shutil
from pathlib import Path
from urllib.parse import unquote, urlsplit


class SiteError(Exception):
    """The site cannot be built as asked (the message says what to change)."""


_TEMPLATE = r"""
{%- extends 'index.html.j2' -%}
{%- block html_head_js_requirejs -%}{%- endblock html_head_js_requirejs -%}
{% block jupyter_widgets %}{% endblock jupyter_widgets %}
{%- block html_head_js_mermaidjs -%}{%- endblock html_head_js_mermaidjs -%}
{%- block html_head_js_mathjax -%}
<script>
window.opalgMath = {errors: [], done: false, ms: null};
window.MathJax = {
  loader: {load: ["ui/safe"], failed: function (err) {
    opalgMath.errors.push("file load error: " + err.message);
    document.documentElement.setAttribute("data-mathjax", "done"); }},
  tex: {
    inlineMath: [["$", "$"], ["\\(", "\\)"]], displayMath: [["$$", "$$"], ["\\[", "\\]"]],
    processEscapes: true, processEnvironments: true, tags: "ams", useLabelIds: true,
    packages: {"[-]": ["noerrors", "noundefined"]},
    formatError: function (jax, err) {
      opalgMath.errors.push("TeX parse error: " + err.message);
      return jax.formatError(err); }
  },
  options: {
    compileError: function (doc, math, err) {
      opalgMath.errors.push("Math input error: " + err.message + " in " + math.math);
      doc.compileError(math, err); },
    typesetError: function (doc, math, err) {
      opalgMath.errors.push("Math output error: " + err.message + " in " + math.math);
      doc.typesetError(math, err); }
  },
  startup: {
    pageReady: function () {
      function done() {
        opalgMath.done = true; opalgMath.ms = performance.now();
        document.documentElement.setAttribute("data-mathjax", "done"); }
      return MathJax.startup.defaultPageReady().then(done, function (err) {
        opalgMath.errors.push("MathJax startup error: " + ((err && err.message) || err)); done(); });
    }
  }
};
</script>
<script src="{{ resources.mathjax_url }}" async></script>
{%- endblock html_head_js_mathjax -%}
{# nbconvert runs bleach over pygments' output, which it escapes already: 60 % of the build. #}
{% block input %}
<div class="jp-CodeMirrorEditor jp-Editor jp-InputArea-editor" data-type="inline">
     <div class="cm-editor cm-s-jupyter">
{{ cell.source | highlight_code(metadata=cell.metadata) }}
     </div>
</div>
{%- endblock input %}
{% block extra_css %}
<style type="text/css">
nav.opalg-nav { display: flex; justify-content: space-between; gap: 1em; margin: 0.5em 0 1em;
  padding: 0.5em 0; border-bottom: 1px solid #ddd; font-size: 0.95em; }
nav.opalg-nav:last-child { border-top: 1px solid #ddd; border-bottom: none; margin-top: 2em; }
nav.opalg-nav a { text-decoration: none; }
nav.opalg-nav a[rel=next] { text-align: right; }
.opalg-syllabus h3 { margin-bottom: 0.2em; }
.opalg-meta, .opalg-src, .opalg-rule { color: #555; }
.opalg-repo-path { font-family: var(--jp-code-font-family, monospace); }
/* matplotlib's animation player asks for Font Awesome from a CDN; these glyphs replace it. */
.anim-buttons i.fa { font-style: normal; display: inline-block; }
.anim-buttons i.fa-minus::before { content: "\2212"; }
.anim-buttons i.fa-plus::before { content: "+"; }
.anim-buttons i.fa-fast-backward::before { content: "|\25C0\25C0"; }
.anim-buttons i.fa-step-backward::before { content: "|\25C0"; }
.anim-buttons i.fa-play::before { content: "\25B6"; }
.anim-buttons i.fa-flip-horizontal { transform: scaleX(-1); }
.anim-buttons i.fa-pause::before { content: "\275A\275A"; }
.anim-buttons i.fa-step-forward::before { content: "\25B6|"; }
.anim-buttons i.fa-fast-forward::before { content: "\25B6\25B6|"; }
figure.opalg-animation figcaption { color: #555; font-size: 0.9em; }
</style>
{% endblock extra_css %}
{%- block body_header -%}
{{ super() }}
{{ resources.opalg_nav }}
{%- endblock body_header -%}
{% block body_footer %}
{{ resources.opalg_nav }}
{{ super() }}
{% endblock body_footer %}
{% block data_png scoped %}
{%- set alt = output | get_metadata('alt', 'image/png') -%}
{%- set width = output | get_metadata('width', 'image/png') -%}
{%- set height = output | get_metadata('height', 'image/png') -%}
<div class="jp-RenderedImage jp-OutputArea-output {{ extra_class }}">
<img src="data:image/png;base64,{{ output.data['image/png'] | escape_html }}"
{%- if alt %} alt="{{ alt | escape_html }}"{% endif %}
{%- if width is not none %} width="{{ width | escape_html }}"{% endif %}
{%- if height is not none %} height="{{ height | escape_html }}"{% endif %}>
</div>
{%- endblock data_png %}
"""


def page_template() -> str:
    """The Jinja template of every page (extends nbconvert's ``lab/index.html.j2``)."""
    return _TEMPLATE


def _is_remote(url: str) -> bool:
    parts = urlsplit(url)
    return bool(parts.scheme in ("http", "https", "ftp") or parts.netloc or url.startswith("//"))


def github_slug(text: str) -> str:
    """The anchor GitHub gives a heading, so ``docs/REFERENCE.md#3-identities``-style links still work.

    Examples
    --------
    >>> github_slug("3. Operators of a tree (B1–B4)")
    '3-operators-of-a-tree-b1b4'
    """
    text = re.sub(r"[^\w\- ]", "", text.strip().lower())
    return text.replace(" ", "-")


_DATA_URI = re.compile(r"data:image/[\w+.-]+;base64,[A-Za-z0-9+/=]+")
_CODE_BLOCK = re.compile(r'<div class="(\s*highlight[^"]*)"><pre>(.*?</pre></div>)', re.S)
_PARKED = re.compile(r"opalg-parked:(\d+):")
_PARKED_BLOCK = re.compile(r"<div>opalg-parked:(\d+):</div>")
_FILE_TOKEN = re.compile(r"(?<![\w/.-])((?:\.\./)*(?:[\w-]+/)*[\w.-]+\.(?:ipynb|md))(?![\w/])")
_NO_AUTOLINK = {"a", "pre", "code", "script", "style", "nav", "textarea", "title"}


def _name_map(link_map: dict[str, str]) -> dict[str, str]:
    """File names a text may mention (``08_x.ipynb``, ``docs/REFERENCE.md``) -> page."""
    names: dict[str, str] = {}
    for source, page in link_map.items():
        names[source] = page
        if source.startswith("notebooks/") and source.endswith(".ipynb"):
            names[source.removeprefix("notebooks/")] = page
        elif source.startswith("docs/"):
            names[posixpath.basename(source)] = page
    return names


def _lookup(token: str, names: dict[str, str]) -> str | None:
    while token.startswith("../"):
        token = token[3:]
    return names.get(token)


def _autolink(soup, codes: list, strings: list, names: dict[str, str]) -> list:
    """Link the mentions of notebooks and rendered documents in prose and inline code.

    ``codes`` are the ``<code>`` elements of ``<main>``, ``strings`` its plain strings that
    mention a file (both in document order); returns the links made.
    """
    made = []
    for code in codes:
        if code.find_parent(["a", "pre", "nav"]):
            continue
        page = _lookup(code.get_text().strip(), names)
        if page:
            made.append(soup.new_tag("a", href=page))
            code.wrap(made[-1])
    from bs4 import NavigableString

    for node in strings:
        if any(p.name in _NO_AUTOLINK for p in node.parents):
            continue
        text, pieces, last = str(node), [], 0
        for m in _FILE_TOKEN.finditer(text):
            page = _lookup(m.group(1), names)
            if page:
                pieces += [text[last:m.start(1)], (m.group(1), page)]
                last = m.end(1)
        if not pieces:
            continue
        pieces.append(text[last:])
        new = []
        for piece in pieces:
            if isinstance(piece, tuple):
                a = soup.new_tag("a", href=piece[1])
                a.string = piece[0]
                new.append(a)
                made.append(a)
            elif piece:
                new.append(NavigableString(piece))
        for item in new:
            node.insert_before(item)
        node.extract()
    return made


_HEADING = re.compile("^h[1-6]$")
_FOCUSABLE = {"jp-Cell-inputWrapper", "jp-OutputArea-output"}   # nbconvert gives them tabindex


def _collect(soup, main) -> dict[str, list]:
    """What :func:`postprocess` rewrites and checks, from one pass over the page and one over
    ``<main>`` (each list in document order), instead of a search of the whole tree per kind."""
    from bs4 import NavigableString, Tag

    found: dict[str, list] = {k: [] for k in (
        "link", "script", "img", "iframe", "source", "focusable", "figure", "a", "id",
        "main_a", "code", "heading", "strings")}
    for el in soup.descendants:
        if not isinstance(el, Tag):
            continue
        attrs, name = el.attrs, el.name
        if "id" in attrs:
            found["id"].append(el)
        if name == "a" or name == "link":
            if "href" in attrs:
                found[name].append(el)
        elif name in ("script", "img", "iframe", "source"):
            if "src" in attrs:
                found[name].append(el)
        elif name == "div":
            if not _FOCUSABLE.isdisjoint(attrs.get("class", ())):
                found["focusable"].append(el)
        elif name == "figure" and "opalg-animation" in attrs.get("class", ()):
            found["figure"].append(el)
    for el in main.descendants:
        if type(el) is NavigableString:
            if _FILE_TOKEN.search(el):
                found["strings"].append(el)
        elif isinstance(el, Tag):
            if el.name == "a" and "href" in el.attrs:
                found["main_a"].append(el)
            elif el.name == "code":
                found["code"].append(el)
            elif _HEADING.search(el.name):
                found["heading"].append(el)
    return found


def _rewrite_link(a, source_dir: str, link_map: dict[str, str], report: dict, page: str) -> None:
    href = a["href"]
    if href.startswith("#") or _is_remote(href) or href.startswith("mailto:"):
        return
    parts = urlsplit(href)
    target = posixpath.normpath(posixpath.join(source_dir, unquote(parts.path)))
    if target in link_map:
        a["href"] = link_map[target] + (f"#{parts.fragment}" if parts.fragment else "")
        return
    # A repository file that is not a page (source code, a test): plain text, no dead link.
    report["plain_links"].append(f"{page}: {href}")
    a.name = "span"
    a.attrs = {"class": "opalg-repo-path", "title": f"repository file {target}"}


def postprocess(body: str, *, page: str, source: str, link_map: dict[str, str], root: Path,
                out: Path, report: dict, main_html: str | None = None) -> str:
    """Rewrite one exported page: links, alt text, local images, heading anchors, no remote load.

    ``link_map`` maps repository paths (``notebooks/05_x.ipynb``, ``docs/NOTATION.md``) to page
    names; ``source`` is the page's own repository path (links resolve relative to it);
    ``main_html`` is inserted after the top navigation (the index page's content).
    """
    from bs4 import BeautifulSoup

    # Base64 images (most of the bytes) and pygments' highlighted code (most of the tags) need
    # no rewriting, and html.parser crawls through them: park them while the rest is rewritten.
    parked: list[str] = []

    def park(m: re.Match) -> str:
        if m.re is _DATA_URI:
            parked.append(m.group(0))
            return f"opalg-parked:{len(parked) - 1}:"
        # The class list as BeautifulSoup writes it (nbconvert's cells say class=" highlight ...").
        parked.append(f'<div class="{" ".join(m.group(1).split())}"><pre>{m.group(2)}')
        return f"<div>opalg-parked:{len(parked) - 1}:</div>"

    body = _CODE_BLOCK.sub(park, _DATA_URI.sub(park, body))
    soup = BeautifulSoup(body, "html.parser")
    main = soup.find("main")
    if main_html is not None:
        nav = main.find("nav")
        wrapper = BeautifulSoup('<div class="jp-Cell jp-MarkdownCell"><div class="jp-RenderedHTMLCommon '
                                f'jp-RenderedMarkdown jp-MarkdownOutput">{main_html}</div></div>',
                                "html.parser")
        nav.insert_after(wrapper)
    found = _collect(soup, main)
    for link in found["link"]:
        if _is_remote(link["href"]):   # matplotlib's Font Awesome: replaced by CSS glyphs
            link.decompose()
    for tag in ("script", "img", "iframe", "source"):
        for el in found[tag]:
            if _is_remote(el["src"]):
                raise SiteError(f"{page}: <{tag} src={el['src']!r}> would load from the network")
    for el in found["focusable"]:
        el["tabindex"] = "0"   # keyboard focus, as nbconvert's HTMLExporter sets it
    for fig in found["figure"]:
        for img in fig.find_all("img"):
            if not img.get("alt"):
                img["alt"] = fig.get("aria-label", "")
    source_dir = posixpath.dirname(source) if source else "notebooks"
    for img in found["img"]:
        src = img["src"]
        if not src.startswith(("data:", "opalg-parked:")):
            target = (root / posixpath.normpath(posixpath.join(source_dir, unquote(src)))).resolve()
            if not target.is_file():
                raise SiteError(f"{page}: image {src!r} not found ({target})")
            (out / "assets").mkdir(exist_ok=True)
            shutil.copy2(target, out / "assets" / target.name)
            img["src"] = f"assets/{target.name}"
        if not img.get("alt", "").strip():
            report["missing_alt"].append(f"{page}: <img> in {img.find_parent(['div', 'figure']).get('class')}")
    built = set(link_map.values())   # the index's own content links pages by their file names
    for a in found["main_a"]:
        if not a.find_parent("nav") and not (main_html is not None and a["href"] in built):
            _rewrite_link(a, source_dir, link_map, report, page)
    made = _autolink(soup, found["code"], found["strings"], _name_map(link_map))
    # After the rewriting: a link made plain text keeps no id, a removed <link> none either.
    ids = {el["id"] for el in found["id"] if el.get("id") is not None and not el.decomposed}
    for h in found["heading"]:
        slug = github_slug(h.get_text().replace("¶", ""))
        if slug and slug not in ids:
            h.insert(0, soup.new_tag("span", id=slug))
            ids.add(slug)
    pages = set(link_map.values()) | {"index.html"}
    for a in found["a"] + made:
        if a.name != "a" or a.get("href") is None:
            continue   # made plain text by _rewrite_link
        href = a["href"]
        if href.startswith("#") or _is_remote(href) or href.startswith("mailto:"):
            continue
        path = urlsplit(href).path
        if path not in pages and not (out / path).exists():
            raise SiteError(f"{page}: dead link {href!r}")
    text = _PARKED_BLOCK.sub(lambda m: parked[int(m.group(1))], str(soup))
    return _PARKED.sub(lambda m: parked[int(m.group(1))], text)
