"""The course site's own layer (tools/site/build.py), without Sphinx or a browser: the syllabus
matches the notebooks, the landing page it writes, and what each build's source tree holds (the
students' none of the model answers, the instructors' all of them).  The built site itself is
checked in a real browser by tests/test_browser_site.py."""

from __future__ import annotations

import importlib.util
import pathlib
import re
import tomllib

import pytest

ROOT = pathlib.Path(__file__).resolve().parent.parent
_spec = importlib.util.spec_from_file_location("site_build", ROOT / "tools" / "site" / "build.py")
build = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(build)
_spec = importlib.util.spec_from_file_location("opalg_site", ROOT / "tools" / "site" / "opalg_site.py")
extension = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(extension)


def test_syllabus_names_every_notebook_once():
    with open(ROOT / "notebooks" / "syllabus.toml", "rb") as f:
        syllabus = tomllib.load(f)
    notebooks = sorted(p.name for p in (ROOT / "notebooks").glob("*.ipynb"))
    entries = build.syllabus_entries(syllabus, notebooks)
    assert sorted(e["file"] for e in entries) == notebooks


@pytest.mark.parametrize("syllabus, notebooks, message", [
    ({"notebook": [{"file": "a.ipynb", "objectives": ["x"]}]}, ["a.ipynb", "b.ipynb"],
     "b.ipynb is not in the syllabus"),
    ({"notebook": [{"file": "a.ipynb", "objectives": ["x"]}, {"file": "c.ipynb", "objectives": ["y"]}]},
     ["a.ipynb"], "the syllabus names c.ipynb, which does not exist"),
    ({"notebook": [{"file": "a.ipynb", "objectives": ["x"]}, {"file": "a.ipynb", "objectives": ["x"]}]},
     ["a.ipynb"], "a.ipynb is listed twice"),
    ({"notebook": [{"file": "a.ipynb"}]}, ["a.ipynb"], "a.ipynb: no objectives"),
    ({"notebook": [{"file": "a.ipynb", "objectives": ["x"], "prerequisites": ["b.ipynb"]},
                   {"file": "b.ipynb", "objectives": ["y"]}]}, ["a.ipynb", "b.ipynb"],
     "a.ipynb: prerequisite b.ipynb is not an earlier notebook"),
])
def test_syllabus_mismatch_is_refused(syllabus, notebooks, message):
    with pytest.raises(build.SiteError, match=re.escape(message)):
        build.syllabus_entries(syllabus, notebooks)


def test_reading_minutes_rule():
    """150 markdown words a minute plus half a minute per non-empty code cell, rounded up."""
    md = lambda n: {"cell_type": "markdown", "source": ["w " * n]}  # noqa: E731
    code = lambda s: {"cell_type": "code", "source": s}  # noqa: E731
    assert build.reading_minutes({"cells": [md(300)]}) == 2
    assert build.reading_minutes({"cells": [md(301)]}) == 3
    assert build.reading_minutes({"cells": [md(150), code("x"), code("y"), code("  ")]}) == 2
    assert build.reading_minutes({"cells": []}) == 1


@pytest.mark.parametrize("instructor", [False, True])
def test_source_tree_and_landing_page(tmp_path, instructor):
    src = tmp_path / "src"
    build.stage(ROOT, src, instructor)
    answers = sorted(p.name for p in (ROOT / "docs" / "solutions").glob("*.md"))
    assert answers
    staged = sorted(p.name for p in (src / "docs" / "solutions").glob("*.md"))
    assert staged == (answers if instructor else [])
    index = (src / "index.md").read_text(encoding="utf-8")
    with open(ROOT / "notebooks" / "syllabus.toml", "rb") as f:
        entries = tomllib.load(f)["notebook"]
    # Reading order: one item per notebook, in the syllabus's order, with its time and objectives.
    items = re.findall(r"^\d+\. \*\*\[\]\(notebooks/(\S+)\)\*\*", index, re.M)
    assert items == [e["file"] for e in entries]
    assert len(re.findall(r"^   About \d+ min · \*Prerequisites:\*", index, re.M)) == len(entries)
    for e in entries:
        for objective in e["objectives"]:
            assert f"   - {objective}\n" in index
    # The course's table of contents in the same order; the answers' only in the instructors' build.
    course = re.search(r":caption: Course\n\n(.*?)```", index, re.S).group(1).split()
    assert [c for c in course if c != "notebooks/README"] == [f"notebooks/{e['file'][:-6]}" for e in entries]
    assert ("docs/solutions/" in index) == instructor
    reference = re.search(r":caption: Reference\n\n(.*?)```", index, re.S).group(1).split()
    assert {"docs/NOTATION", "docs/REFERENCE", "docs/ARCHITECTURE", "README"} <= set(reference)
    assert not [r for r in reference if r.startswith("docs/solutions")]
    # Every markdown page of docs/ (but the answers) is a page of the site.
    docs = {str(p.relative_to(ROOT))[:-3] for p in (ROOT / "docs").rglob("*.md")
            if "solutions" not in p.parts}
    assert docs <= set(reference)


def test_output_outside_build_is_refused(tmp_path, capsys):
    assert build.main(["--out", str(ROOT / "docs" / "site")]) == 2
    assert "under build/ or outside the repository" in capsys.readouterr().err
    assert not (ROOT / "docs" / "site").exists()


def _html_output(html: str):
    """A doctree holding one notebook HTML output, and a stand-in for Sphinx's app."""
    from types import SimpleNamespace

    from docutils import nodes
    from docutils.utils import new_document

    doctree = new_document("page")
    doctree += nodes.raw("", html, format="html")
    return doctree, SimpleNamespace(env=SimpleNamespace(docname="notebooks/09_x"))


def test_animation_player_loses_its_cdn_link_only():
    player = ('<link rel="stylesheet" href="https://cdnjs.cloudflare.com/ajax/libs/font-awesome/4.4.0/css/'
              'font-awesome.min.css">\n<script language="javascript">var a = 1;</script>\n'
              '<div class="animation"><img id="_anim_img"></div>')
    doctree, app = _html_output(player)
    extension._offline_outputs(app, doctree)
    kept = doctree.children[0].astext()
    assert "font-awesome" not in kept and "cdnjs" not in kept
    assert kept.endswith('<img id="_anim_img"></div>')
    assert '<script language="javascript">var a = 1;</script>' in kept


@pytest.mark.parametrize("html", ['<script src="https://cdn.example.org/x.js"></script>',
                                  '<img src="//example.org/x.png" alt="x">',
                                  "<link rel='stylesheet' href='http://example.org/style.css'>"])
def test_output_loading_from_the_network_stops_the_build(html):
    from sphinx.errors import ExtensionError

    doctree, app = _html_output("<p>output</p>" + html)
    with pytest.raises(ExtensionError, match="notebooks/09_x: an output would load from the network"):
        extension._offline_outputs(app, doctree)
