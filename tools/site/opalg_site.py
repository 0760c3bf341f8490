"""The site's Sphinx extension: two adjustments the theme and myst-nb do not offer as settings.

* MathJax on every page (``html_assets_policy = "always"``), not only on pages with math, so
  every page says when its typesetting is done (``mathjax_hooks.js``) and math in a notebook's
  HTML output is typeset too.
* Notebook HTML outputs may not load anything from the network: matplotlib's animation player
  (``to_jshtml``) links Font Awesome from a CDN; that ``<link>`` is dropped (the theme bundles
  Font Awesome, which draws the player's buttons).  Any other remote ``<script>``, ``<link>``
  or ``<img>`` in an output stops the build.
"""
import re

from docutils import nodes
from sphinx.errors import ExtensionError

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


def setup(app):
    app.set_html_assets_policy("always")
    app.connect("doctree-read", _offline_outputs)
    return {"parallel_read_safe": True, "parallel_write_safe": True}
