"""The site's shared stylesheet: the CSS every page has in common, written once and linked.

nbconvert's ``lab`` template inlines about 260 kB of CSS into the head of every page, in this
order: the ``extra_css`` block (the site's own rules, ``site_pages.py``), the pygments rules of
``CSSHTMLHeaderPreprocessor`` (``resources.inlining.css``) and the ``notebook_css`` block
(JupyterLab's ``index.css`` and ``theme-light.css`` and nbconvert's own rules).  None of it
depends on the page.  nbconvert has no switch to link rather than inline it, but every piece is
a template block or a preprocessor it lets a template or its configuration replace:

* :data:`SHEET_TEMPLATE` renders the three pieces, in that order and nothing else, once per
  build; :func:`stylesheet` turns them into the file :data:`STYLESHEET`;
* :data:`PAGE_TEMPLATE` puts one ``<link>`` to that file where the first piece was and leaves
  the other two out, and :data:`PAGE_CONFIG` turns the pygments preprocessor off for pages.

The link stands where the inline rules began, so the cascade order is unchanged (MathJax adds
its own styles at the end of the head later, as before).
"""
from __future__ import annotations

import re

from site_pages import SiteError

#: The shared stylesheet, relative to the output directory (every page is at its top level).
STYLESHEET = "static/notebook.css"
#: Names of the two templates in the exporter's loader.
PAGE_TEMPLATE_NAME = "opalg_site_linked.html.j2"
SHEET_TEMPLATE_NAME = "opalg_site_sheet.css.j2"

PAGE_TEMPLATE = r"""{%- extends 'opalg_site.html.j2' -%}
{% block extra_css %}
<link rel="stylesheet" href="{{ resources.opalg_stylesheet }}">
{% endblock extra_css %}
{% block notebook_css %}{% endblock notebook_css %}
"""

# The page shell's header, body and footer (nbconvert's base template) replaced by the CSS the
# head would hold.
SHEET_TEMPLATE = r"""{%- extends 'opalg_site.html.j2' -%}
{%- block header -%}
{{ self.extra_css() }}
{% for css in resources.inlining.css -%}
<style type="text/css">
{{ css }}
</style>
{% endfor %}
{{ self.notebook_css() }}
{%- endblock header -%}
{%- block body -%}{%- endblock body -%}
{%- block footer -%}{%- endblock footer -%}
"""

#: Exporter configuration for pages: their pygments rules are in the stylesheet.
PAGE_CONFIG = {"CSSHTMLHeaderPreprocessor": {"enabled": False}}

_STYLE = re.compile(r'<style type="text/css">\n?(.*?)</style>', re.S)


def stylesheet(rendered: str) -> str:
    r"""The stylesheet file from :data:`SHEET_TEMPLATE`'s output: the ``<style>`` elements' CSS.

    The file states its encoding (JupyterLab's CSS has a non-ASCII character), which the inline
    rules took from their page.

    Examples
    --------
    >>> stylesheet('<style type="text/css">\na { color: red; }\n</style>\n')
    '@charset "utf-8";\na { color: red; }\n'
    """
    pieces, last = [], 0
    for m in _STYLE.finditer(rendered):
        if rendered[last:m.start()].strip():
            raise SiteError(f"the stylesheet template left markup outside <style>: "
                            f"{rendered[last:m.start()].strip()[:80]!r}")
        pieces.append(m.group(1))
        last = m.end()
    if rendered[last:].strip() or not pieces:
        raise SiteError(f"the stylesheet template gave no CSS or stray markup: {rendered[last:][:80]!r}")
    return '@charset "utf-8";\n' + "".join(pieces)
