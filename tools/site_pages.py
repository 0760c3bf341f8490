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
_CODE_BLOCK = re.compile(r'<div class="highlight[^"]*"><pre>.*?</pre></div>', re.S)
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


def _autolink(soup, main, names: dict[str, str]) -> None:
    """Link the mentions of notebooks and rendered documents in prose and inline code."""
    for code in main.find_all("code"):
        if code.find_parent(["a", "pre", "nav"]):
            continue
        page = _lookup(code.get_text().strip(), names)
        if page:
            code.wrap(soup.new_tag("a", href=page))
    from bs4 import NavigableString

    for node in list(main.find_all(string=_FILE_TOKEN)):
        if type(node) is not NavigableString or any(p.name in _NO_AUTOLINK for p in node.parents):
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
            elif piece:
                new.append(NavigableString(piece))
        for item in new:
            node.insert_before(item)
        node.extract()


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
        parked.append(m.group(0))
        return f"opalg-parked:{len(parked) - 1}:" if m.re is _DATA_URI else \
            f"<div>opalg-parked:{len(parked) - 1}:</div>"

    body = _CODE_BLOCK.sub(park, _DATA_URI.sub(park, body))
    soup = BeautifulSoup(body, "html.parser")
    main = soup.find("main")
    if main_html is not None:
        nav = main.find("nav")
        wrapper = BeautifulSoup('<div class="jp-Cell jp-MarkdownCell"><div class="jp-RenderedHTMLCommon '
                                f'jp-RenderedMarkdown jp-MarkdownOutput">{main_html}</div></div>',
                                "html.parser")
        nav.insert_after(wrapper)
    for link in soup.find_all("link", href=True):
        if _is_remote(link["href"]):   # matplotlib's Font Awesome: replaced by CSS glyphs
            link.decompose()
    for tag, attr in (("script", "src"), ("img", "src"), ("iframe", "src"), ("source", "src")):
        for el in soup.find_all(tag, **{attr: True}):
            if _is_remote(el[attr]):
                raise SiteError(f"{page}: <{tag} {attr}={el[attr]!r}> would load from the network")
    for el in soup.select("div.jp-Cell-inputWrapper, div.jp-OutputArea-output"):
        el["tabindex"] = "0"   # keyboard focus, as nbconvert's HTMLExporter sets it
    for fig in soup.select("figure.opalg-animation"):
        for img in fig.find_all("img"):
            if not img.get("alt"):
                img["alt"] = fig.get("aria-label", "")
    source_dir = posixpath.dirname(source) if source else "notebooks"
    for img in soup.find_all("img", src=True):
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
    for a in main.find_all("a", href=True):
        if not a.find_parent("nav"):
            _rewrite_link(a, source_dir, link_map, report, page)
    _autolink(soup, main, _name_map(link_map))
    ids = {el["id"] for el in soup.find_all(id=True)}
    for h in main.find_all(re.compile("^h[1-6]$")):
        slug = github_slug(h.get_text().replace("¶", ""))
        if slug and slug not in ids:
            h.insert(0, soup.new_tag("span", id=slug))
            ids.add(slug)
    pages = set(link_map.values()) | {"index.html"}
    for a in soup.find_all("a", href=True):
        href = a["href"]
        if href.startswith("#") or _is_remote(href) or href.startswith("mailto:"):
            continue
        path = urlsplit(href).path
        if path not in pages and not (out / path).exists():
            raise SiteError(f"{page}: dead link {href!r}")
    text = _PARKED_BLOCK.sub(lambda m: parked[int(m.group(1))], str(soup))
    return _PARKED.sub(lambda m: parked[int(m.group(1))], text)
