"""The site's Sphinx extension: four adjustments the theme and myst-nb do not offer as settings.

* MathJax on every page (``html_assets_policy = "always"``), not only on pages with math, so
  every page says when its typesetting is done (``mathjax_hooks.js``) and math in a notebook's
  HTML output is typeset too.
* Notebook HTML outputs may not load anything from the network: matplotlib's animation player
  (``to_jshtml``) links Font Awesome from a CDN; that ``<link>`` is dropped (the theme bundles
  Font Awesome, which draws the player's buttons).  Any other remote ``<script>``, ``<link>``
  or ``<img>`` in an output stops the build.
* A link to a repository file or folder that is not a page of the site (source code, a
  benchmark; in the students' site, a model answer) becomes plain text, marked as a repository
  path, instead of MyST's dead ``#path`` link.  A link to a file the repository does not have stays an error.
* A notebook image keeps the alt text of its output's metadata (``{"image/png": {"alt": ...}}``,
  the notebook standard), which myst-nb reads only for the width and height.
"""
import base64
import hashlib
import json
import pathlib
import posixpath
import re

from docutils import nodes
from sphinx import addnodes
from sphinx.errors import ExtensionError
from sphinx.transforms.post_transforms import SphinxPostTransform

_REMOTE = re.compile(r"""<(script|link|img|iframe)\b[^>]*?\b(?:src|href)=["']?(?:https?:)?//[^>]*>""", re.I)
_FONT_AWESOME = re.compile(r"font-awesome|fontawesome", re.I)


def _offline_outputs(app, doctree):
    for raw in doctree.findall(nodes.raw):
        if "html" not in raw.get("format", ""):
            continue
        html = raw.astext()
        for m in _REMOTE.finditer(html):
            if not (m.group(1).lower() == "link" and _FONT_AWESOME.search(m.group(0))):
                raise ExtensionError(f"{app.env.docname}: an output would load from the network: "
                                     f"{m.group(0)[:120]}")
        if _REMOTE.search(html):
            raw.children[0] = nodes.Text(_REMOTE.sub("", html))


def _output_alt_text(app, doctree):
    path = pathlib.Path(app.env.doc2path(app.env.docname))
    if path.suffix != ".ipynb":
        return
    alts = {}   # myst-nb names an image file by the SHA-256 of its bytes
    for cell in json.loads(path.read_text(encoding="utf-8"))["cells"]:
        for out in cell.get("outputs", []):
            for mime, meta in out.get("metadata", {}).items():
                if mime in ("image/png", "image/jpeg", "image/gif") and mime in out.get("data", {}) \
                        and isinstance(meta, dict) and meta.get("alt"):
                    alts[hashlib.sha256(base64.b64decode(out["data"][mime])).hexdigest()] = meta["alt"]
    for image in doctree.findall(nodes.image):
        alt = alts.get(pathlib.PurePosixPath(image["uri"]).stem)
        if alt and not image.get("alt"):
            image["alt"] = alt


class RepositoryFileLinks(SphinxPostTransform):
    """Links to repository files that are not pages: plain text (before MyST resolves links)."""

    default_priority = 8   # MyST's resolver: 9

    def run(self, **kwargs):
        root = pathlib.Path(self.config.opalg_repository)
        here = posixpath.dirname(self.env.docname)
        for node in list(self.document.findall(addnodes.pending_xref)):
            if node.get("reftype") != "myst" or node.get("refdomain") == "doc":
                continue
            target = node["reftarget"].partition("#")[0]
            path = posixpath.normpath(posixpath.join(here, target)) if target and "://" not in target else ""
            if not path or path.startswith("../") or not (root / path).exists():
                continue
            if posixpath.splitext(path)[0] in self.env.found_docs:
                continue
            node.replace_self(nodes.inline("", "", *node.children, classes=["repository-file"]))


def setup(app):
    app.add_config_value("opalg_repository", "", "env")
    app.add_post_transform(RepositoryFileLinks)
    app.set_html_assets_policy("always")
    app.connect("doctree-read", _offline_outputs)
    app.connect("doctree-read", _output_alt_text)
    return {"parallel_read_safe": True, "parallel_write_safe": True}
