"""Sphinx configuration of the course site (``make html``, ``make html-instructor``).

``tools/site/build.py`` lays out the source tree (the notebooks, docs/, the README, the ledger,
and the landing page it writes from ``notebooks/syllabus.toml``) under build/ and runs Sphinx
with this directory as the configuration directory.  The committed notebooks are rendered as
they stand (myst-nb, nothing executed); math is typeset in the browser by the MathJax 3 copy of
the PyPI package django-static-mathjax, served from the site itself.
"""
import pathlib

import mathjax   # django-static-mathjax: MathJax 3's es5 tree as package data

project = "opalg"
author = "the opalg authors"
copyright = "the opalg authors, BSD-3-Clause"
extensions = ["myst_nb", "opalg_site"]   # opalg_site: this directory (build.py puts it on the path)

root_doc = "index"
opalg_repository = str(pathlib.Path(__file__).resolve().parents[2])   # for opalg_site's links
# Model answers only in the instructors' build (`-t instructor`, make html-instructor).
exclude_patterns = [] if tags.has("instructor") else ["docs/solutions/**"]  # noqa: F821 (Sphinx's)

# myst-nb: the notebooks as committed, never executed.
nb_execution_mode = "off"
nb_merge_streams = True
myst_enable_extensions = ["dollarmath", "amsmath", "colon_fence"]
myst_heading_anchors = 4   # GitHub's heading slugs, so links like docs/REFERENCE.md#3-identities resolve
myst_dmath_double_inline = True

# Offline math: MathJax 3 (TeX input with every package, CommonHTML output with its own fonts,
# the Safe extension) copied into _static/mathjax/es5/ and loaded from there.  TeX errors are
# shown (noerrors and noundefined off) and recorded by mathjax_hooks.js for the browser test.
html_static_path = [str(pathlib.Path(mathjax.__file__).parent / "static")]
mathjax_path = "mathjax/es5/tex-chtml-full.js"
mathjax3_config = {
    "loader": {"load": ["ui/safe"]},
    "tex": {"inlineMath": [["$", "$"], ["\\(", "\\)"]], "displayMath": [["$$", "$$"], ["\\[", "\\]"]],
            "processEscapes": True, "processEnvironments": True, "tags": "ams", "useLabelIds": True,
            "packages": {"[-]": ["noerrors", "noundefined"]}},
}
mathjax_config_path = "mathjax_hooks.js"

html_theme = "sphinx_book_theme"
html_title = "opalg"
html_copy_source = False
html_theme_options = {
    "home_page_in_toc": True,
    "show_navbar_depth": 1,
    "use_download_button": True,
    "use_fullscreen_button": False,
}
html_last_updated_fmt = None
html_context = {"default_mode": "light"}
