#!/usr/bin/env python
"""Build the static site ``build/html/`` from the committed notebooks: export only, offline.

Usage: ``python tools/build_site.py [--out DIR]`` (``make html``).

* Reads ``notebooks/*.ipynb`` as committed and never executes them; writes nothing but ``DIR``
  (``make reproduce`` stays the only writer of tracked files).
* Math renders with no network: MathJax 3 (its ``es5`` components, from the PyPI package
  ``django-static-mathjax``) is copied to ``DIR/mathjax/`` and loaded by a relative URL: TeX
  input with every package (it covers sympy's LaTeX), CommonHTML output with its own fonts,
  and the Safe extension.  (MathJax 2.7's HTML-CSS output took about four times as long to
  typeset the site in Chromium.)
* Pages: ``index.html`` (reading order, objectives, prerequisites and reading time, from
  ``notebooks/syllabus.toml``), one page per notebook, and the notation, reference, model-answer,
  notebook-standard and README pages rendered from markdown.  Every page links the index and its
  previous and next page.  Links to notebooks and rendered documents point to their pages; links
  to other repository files become plain text; image alt text is kept.
* The CSS all pages share (nbconvert's JupyterLab styles, pygments', the site's) is one file,
  ``DIR/static/notebook.css``, that every page links instead of inlining it (``site_css.py``).
"""
from __future__ import annotations

import argparse
import html
import math
import pathlib
import re
import shutil
import subprocess
import sys
import time
import tomllib
from dataclasses import dataclass, field

ROOT = pathlib.Path(__file__).resolve().parent.parent
sys.path.insert(0, str(pathlib.Path(__file__).resolve().parent))
from site_css import (PAGE_CONFIG, PAGE_TEMPLATE, PAGE_TEMPLATE_NAME, SHEET_TEMPLATE,  # noqa: E402
                      SHEET_TEMPLATE_NAME, STYLESHEET, stylesheet)
from site_pages import SiteError, page_template, postprocess  # noqa: E402

#: MathJax 3's combined component: TeX input with all packages, CommonHTML output, its fonts
#: (the page's configuration, in site_pages.py, adds the Safe extension).
MATHJAX_COMPONENT = "tex-chtml-full.js"
MATHJAX_URL = f"mathjax/{MATHJAX_COMPONENT}"
#: Reading-time rule, stated on the index page.
WORDS_PER_MINUTE = 150
MINUTES_PER_CODE_CELL = 0.5
#: Markdown documents rendered as pages: (repository path, page file name).
DOCUMENTS = [("docs/NOTATION.md", "notation.html"), ("docs/REFERENCE.md", "reference.html"),
             ("notebooks/README.md", "notebook-standard.html"), ("README.md", "readme.html"),
             # The verification ledger, when `make ledger` has written it (it is not committed).
             ("build/ledger/LEDGER.md", "ledger.html")]


@dataclass
class Page:
    """One HTML page of the site: where it comes from and where it goes."""

    source: str          # repository path (posix) of the notebook or markdown file; "" for the index
    out: str             # file name in the output directory
    title: str           # markdown (may contain $math$ and `code`)
    nb: object = None    # the nbformat node to export
    minutes: int = 0
    entry: dict = field(default_factory=dict)


def load_syllabus(path: pathlib.Path) -> dict:
    """Read ``notebooks/syllabus.toml`` (see its header for the fields)."""
    try:
        with open(path, "rb") as f:
            return tomllib.load(f)
    except FileNotFoundError:
        raise SiteError(f"{path}: the syllabus is missing") from None
    except tomllib.TOMLDecodeError as e:
        raise SiteError(f"{path}: not valid TOML: {e}") from None


def check_syllabus(syllabus: dict, notebooks_dir: pathlib.Path) -> list[dict]:
    """The syllabus entries in reading order, after checking them against ``notebooks_dir``.

    Raises :class:`SiteError` listing every problem: a notebook in ``notebooks_dir`` that the
    syllabus does not name, a name with no notebook, a duplicate, an entry without objectives,
    a prerequisite that is not an earlier entry.

    Examples
    --------
    >>> import pathlib, tempfile
    >>> d = pathlib.Path(tempfile.mkdtemp()); _ = (d / "01_a.ipynb").write_text("{}")
    >>> check_syllabus({"notebook": [{"file": "02_b.ipynb", "objectives": ["x"]}]}, d)
    Traceback (most recent call last):
    ...
    site_pages.SiteError: notebooks/syllabus.toml does not match the notebooks: 01_a.ipynb is not in the syllabus (add a [[notebook]] entry for it); the syllabus names 02_b.ipynb, which does not exist
    """
    entries = syllabus.get("notebook", [])
    names = [e.get("file", "") for e in entries]
    present = sorted(p.name for p in notebooks_dir.glob("*.ipynb"))
    problems = [f"{n} is not in the syllabus (add a [[notebook]] entry for it)"
                for n in present if n not in names]
    problems += [f"the syllabus names {n}, which does not exist" for n in names if n not in present]
    seen: set[str] = set()
    for e, n in zip(entries, names):
        if n in seen:
            problems.append(f"{n} is listed twice")
        if not e.get("objectives"):
            problems.append(f"{n}: no objectives")
        problems += [f"{n}: prerequisite {p} is not an earlier notebook of the syllabus"
                     for p in e.get("prerequisites", []) if p not in seen]
        seen.add(n)
    if problems:
        raise SiteError("notebooks/syllabus.toml does not match the notebooks: " + "; ".join(problems))
    return entries


def reading_minutes(nb) -> int:
    """Reading time: markdown words at 150 a minute plus half a minute per code cell, rounded up.

    Examples
    --------
    >>> import nbformat.v4 as v4
    >>> reading_minutes(v4.new_notebook(cells=[v4.new_markdown_cell("w " * 300), v4.new_code_cell("1")]))
    3
    """
    words = sum(len(c.source.split()) for c in nb.cells if c.cell_type == "markdown")
    code = sum(1 for c in nb.cells if c.cell_type == "code" and c.source.strip())
    return max(1, math.ceil(words / WORDS_PER_MINUTE + MINUTES_PER_CODE_CELL * code))


def first_heading(text: str, fallback: str) -> str:
    """The text of the first ``#`` heading of a markdown text, or ``fallback``."""
    m = re.search(r"^#{1,6}\s+(.+?)\s*#*\s*$", text, re.M)
    return m.group(1) if m else fallback


def mathjax_static() -> pathlib.Path:
    """MathJax 3's ``es5`` tree (combined components, extensions, fonts) from ``django-static-mathjax``."""
    try:
        import mathjax
    except ImportError:
        raise SiteError("django-static-mathjax is not installed: "
                        "pip install -c constraints.txt -e '.[browser]' (make html does)") from None
    static = pathlib.Path(mathjax.__file__).parent / "static" / "mathjax" / "es5"
    if not (static / MATHJAX_COMPONENT).exists():
        raise SiteError(f"{static}: no {MATHJAX_COMPONENT} in django-static-mathjax")
    return static


def _safe_out(out: pathlib.Path, root: pathlib.Path) -> pathlib.Path:
    """Refuse an output directory that could hold tracked files (it is emptied first)."""
    out = out.resolve()
    if out.is_relative_to(root.resolve()) and not out.is_relative_to((root / "build").resolve()):
        raise SiteError(f"{out}: the site is written under build/ or outside the repository only")
    return out


def _markdown_page(source: str, out: str, root: pathlib.Path) -> Page:
    import nbformat

    text = (root / source).read_text(encoding="utf-8")
    # A fixed cell id (nbformat draws a random one): the same sources build the same pages.
    nb = nbformat.v4.new_notebook(cells=[nbformat.v4.new_markdown_cell(text, id=out[:-5])])
    return Page(source, out, first_heading(text, source), nb)


def collect_pages(root: pathlib.Path) -> list[Page]:
    """Every page in reading order: index, notebooks (syllabus order), documents, model answers."""
    import nbformat

    nbdir = root / "notebooks"
    syllabus = load_syllabus(nbdir / "syllabus.toml")
    pages = [Page("", "index.html", syllabus.get("title", "Contents"), entry=syllabus)]
    for e in check_syllabus(syllabus, nbdir):
        nb = nbformat.read(nbdir / e["file"], as_version=4)
        md = next((c.source for c in nb.cells if c.cell_type == "markdown"), "")
        title = first_heading(md, e["file"])
        num = e["file"].split("_")[0]
        if not title.startswith(num):
            title = f"{num} — {title}"
        pages.append(Page(f"notebooks/{e['file']}", e["file"].replace(".ipynb", ".html"), title,
                          nb, reading_minutes(nb), e))
    docs = [(s, o) for s, o in DOCUMENTS if (root / s).exists()]
    docs[2:2] = [(f"docs/solutions/{p.name}", f"solutions-{p.stem}.html")
                 for p in sorted((root / "docs" / "solutions").glob("*.md"))]
    pages += [_markdown_page(s, o, root) for s, o in docs]
    return pages


def _inline_md(text: str) -> str:
    """Markdown of one line (a title) as inline HTML, math left for MathJax."""
    from nbconvert.filters.markdown_mistune import markdown2html_mistune

    out = markdown2html_mistune(text).strip()
    return re.sub(r"^<p>(.*)</p>$", r"\1", out, flags=re.S)


def index_html(pages: list[Page]) -> str:
    """The body of ``index.html``: the reading order with objectives, prerequisites, time."""
    from nbconvert.filters.markdown_mistune import markdown2html_mistune

    syllabus = pages[0].entry
    by_file = {p.entry.get("file"): p for p in pages if p.entry.get("file")}
    nbs = [p for p in pages if p.source.endswith(".ipynb")]
    esc = html.escape
    parts = [f"<h1 id=\"contents\">{esc(syllabus.get('title', 'Contents'))}</h1>",
             markdown2html_mistune(syllabus.get("intro", "")),
             f"<p class=\"opalg-rule\"><strong>Reading time</strong> is estimated from each notebook: "
             f"its markdown words at {WORDS_PER_MINUTE} words a minute (technical text) plus "
             f"{MINUTES_PER_CODE_CELL:g} minute per code cell, rounded up to the minute. "
             f"In all, about {sum(p.minutes for p in nbs)} minutes for {len(nbs)} notebooks.</p>",
             "<h2 id=\"reading-order\">Reading order</h2>", "<ol class=\"opalg-syllabus\">"]
    for p in nbs:
        e = p.entry
        pre = [f'<a href="{by_file[f].out}">{_inline_md(by_file[f].title)}</a>'
               for f in e.get("prerequisites", [])]
        req = ", ".join(pre) if pre else "none"
        if e.get("background"):
            req += f". Background: {esc(e['background'])}"
        objectives = "".join(f"<li>{esc(o)}</li>" for o in e["objectives"])
        parts.append(f'<li id="{esc(p.out[:-5])}"><h3><a href="{p.out}">{_inline_md(p.title)}</a></h3>'
                     f'<p class="opalg-meta">About {p.minutes} min · <em>Prerequisites:</em> {req}</p>'
                     f"<p>After it you can:</p><ul>{objectives}</ul></li>")
    parts.append("</ol><h2 id=\"reference-pages\">Reference pages</h2><ul>")
    parts += [f'<li><a href="{p.out}">{_inline_md(p.title)}</a> <span class="opalg-src">'
              f"({esc(p.source)})</span></li>" for p in pages if p.source.endswith(".md")]
    parts.append("</ul>")
    return "\n".join(parts)


def _exporter(template_file: str, config: dict | None = None):
    """The site's exporter for one of the templates of :mod:`site_css` (pages or stylesheet)."""
    import jinja2
    from traitlets.config import Config
    from nbconvert import HTMLExporter, TemplateExporter
    from nbconvert.filters.highlight import Highlight2HTML, _pygments_highlight
    from pygments.formatters import HtmlFormatter
    from nbconvert.filters.widgetsdatatypefilter import WidgetsDataTypeFilter

    formatters: dict = {}   # (language, options) -> HtmlFormatter, for every page of this build

    class SiteHighlight(Highlight2HTML):
        """nbconvert's code highlighter with one pygments formatter per language.

        nbconvert builds a new ``HtmlFormatter`` (and its style sheet) for every code cell; a
        formatter keeps no state between ``format`` calls, so one per CSS class gives the same
        HTML for a tenth of that cost.
        """

        def __call__(self, source, language=None, metadata=None):
            language = language or self.pygments_lexer
            key = (language, repr(self.extra_formatter_options))
            if key not in formatters:
                formatters[key] = HtmlFormatter(cssclass=html.escape(f" highlight hl-{language}"),
                                                **self.extra_formatter_options)
            formatter = formatters[key]
            return _pygments_highlight(source if len(source) > 0 else " ", formatter, language, metadata)

    class SiteExporter(HTMLExporter):
        """HTMLExporter without its final BeautifulSoup pass (nbconvert 7.17).

        That pass writes alt="No description has been provided for this image" on every image
        without alt text, which would hide a missing alt from the browser test, and it takes
        half the build; postprocess() does its other job (tabindex on cells) itself.
        """

        def from_notebook_node(self, nb, resources=None, **kw):
            lang = nb.metadata.get("language_info", {})
            self.register_filter("highlight_code", self.filters.get("highlight_code", SiteHighlight(
                pygments_lexer=lang.get("pygments_lexer", lang.get("name")), parent=self)))
            resources = self._init_resources(resources)
            self.register_filter("filter_data_type", WidgetsDataTypeFilter(
                notebook_metadata=self._nb_metadata, parent=self, resources=resources))
            return TemplateExporter.from_notebook_node(self, nb, resources, **kw)

    templates = {"opalg_site.html.j2": page_template(), PAGE_TEMPLATE_NAME: PAGE_TEMPLATE,
                 SHEET_TEMPLATE_NAME: SHEET_TEMPLATE}
    return SiteExporter(config=Config(config or {}), template_name="lab", template_file=template_file,
                        extra_loaders=[jinja2.DictLoader(templates)],
                        mathjax_url=MATHJAX_URL, require_js_url="", sanitize_html=False,
                        # The notebook is validated once, after the preprocessors, not after
                        # each of the eleven (ten of them disabled): same pages, 1/12 the checks.
                        optimistic_validation=True)


def _git_status(root: pathlib.Path) -> str | None:
    try:
        return subprocess.run(["git", "status", "--porcelain", "--untracked-files=no"], cwd=root,
                              capture_output=True, text=True, check=True).stdout
    except (OSError, subprocess.CalledProcessError):
        return None


def build_site(out: pathlib.Path | None = None, root: pathlib.Path = ROOT) -> dict:
    """Export the committed notebooks and documents of ``root`` into ``out`` (never executes).

    Returns a report: ``pages`` (file names in reading order), ``stylesheet`` (the CSS file every
    page links), ``seconds``, ``bytes`` (size of ``out``), ``plain_links`` (repository links
    made plain text), ``missing_alt`` (images without alt text, as ``page: what``).  Raises
    :class:`SiteError` on a syllabus mismatch, a dead local link or a remote script.

    Examples
    --------
    >>> import tempfile, pathlib
    >>> report = build_site(pathlib.Path(tempfile.mkdtemp()) / "html")   # doctest: +SKIP
    >>> report["pages"][0]                                                 # doctest: +SKIP
    'index.html'
    """
    t0 = time.perf_counter()
    out = _safe_out(out if out is not None else root / "build" / "html", root)
    pages = collect_pages(root)
    if out.exists():
        shutil.rmtree(out)
    shutil.copytree(mathjax_static(), out / "mathjax")
    link_map = {p.source: p.out for p in pages if p.source}
    import nbformat

    # The CSS every page has in common, rendered once, in one file that every page links.
    sheet, _ = _exporter(SHEET_TEMPLATE_NAME).from_notebook_node(
        nbformat.v4.new_notebook(), resources={"metadata": {"name": "notebook"}})
    (out / STYLESHEET).parent.mkdir()
    (out / STYLESHEET).write_text(stylesheet(sheet), encoding="utf-8")
    exporter = _exporter(PAGE_TEMPLATE_NAME, PAGE_CONFIG)
    report = {"pages": [p.out for p in pages], "plain_links": [], "missing_alt": [],
              "stylesheet": STYLESHEET}
    for i, p in enumerate(pages):
        prev, nxt = pages[i - 1], pages[(i + 1) % len(pages)]
        nav = (f'<nav class="opalg-nav" aria-label="Pages">'
               f'<a rel="prev" href="{prev.out}">← {_inline_md(prev.title)}</a>'
               f'<a rel="index" href="index.html">Contents</a>'
               f'<a rel="next" href="{nxt.out}">{_inline_md(nxt.title)} →</a></nav>')
        nb = p.nb
        if nb is None:   # the index: an empty notebook as the page shell
            nb = nbformat.v4.new_notebook()
        nb.metadata["title"] = re.sub(r"[$`*\\]", "", p.title)
        body, _ = exporter.from_notebook_node(
            # "inlining": what the template inlines; empty, as the pygments preprocessor that
            # fills it is off for pages (PAGE_CONFIG: its rules are in the stylesheet).
            nb, resources={"opalg_nav": nav, "opalg_stylesheet": STYLESHEET, "inlining": {"css": []},
                           "metadata": {"name": p.out[:-5], "path": str(root / "notebooks")}})
        body = postprocess(body, page=p.out, source=p.source, link_map=link_map, root=root,
                           out=out, report=report, main_html=index_html(pages) if not p.source else None)
        (out / p.out).write_text(body, encoding="utf-8")
    report["seconds"] = time.perf_counter() - t0
    report["bytes"] = sum(f.stat().st_size for f in out.rglob("*") if f.is_file())
    return report


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--root", type=pathlib.Path, default=ROOT,
                    help="the repository to read (default: this one)")
    ap.add_argument("--out", type=pathlib.Path, default=None, help="default: ROOT/build/html")
    args = ap.parse_args(argv)
    args.out = args.out or args.root / "build" / "html"
    before = _git_status(args.root)
    try:
        report = build_site(args.out, args.root)
    except SiteError as e:
        print(f"build_site: {e}", file=sys.stderr)
        return 1
    if before is not None and _git_status(args.root) != before:
        print("build_site: a tracked file changed during the build (a bug)", file=sys.stderr)
        return 1
    for what in report["missing_alt"]:
        print(f"build_site: warning: image without alt text: {what}", file=sys.stderr)
    print(f"build_site: {len(report['pages'])} pages in {args.out} "
          f"({report['bytes'] / 1e6:.1f} MB, {report['seconds']:.1f} s); "
          f"{len(report['plain_links'])} repository link(s) made plain text")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
