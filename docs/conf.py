"""Sphinx configuration of clmbench's documentation site: MyST markdown, the furo theme, the Python API by autodoc.

Built by tools/docs.sh (python3 -m sphinx -W --keep-going: every warning, a broken internal link included, fails
the build) and by the DocsSite test. It needs no build of clmbench: the compiled module clmbench._clmbench is
mocked, and the Python layer (python/clmbench/*.py) is read from the source tree.
"""
import os
import sys

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), ".."))
# The source tree's package first, whatever PYTHONPATH holds, so the API pages do not depend on a build.
sys.path.insert(0, os.path.join(ROOT, "python"))
sys.path.insert(0, os.path.join(os.path.dirname(__file__), "_ext"))

project = "clmbench"
author = "the clmbench authors"
copyright = "the clmbench authors"

# notebook_page (docs/_ext): the tutorial notebook as a page, read with nbformat (no kernel, no pandoc).
extensions = ["myst_parser", "sphinx.ext.autodoc", "notebook_page"]
source_suffix = {".md": "markdown", ".ipynb": "jupyter_notebook"}
root_doc = "index"
# docs/README.md is the folder's index for readers of the repository; the site's is index.md.
exclude_patterns = ["_build", "README.md", "**.ipynb_checkpoints", "tutorials/*.nbconvert.ipynb"]

# Headings up to ### get anchors, so `page.md#a-heading` links resolve (and are checked: a wrong one is a warning).
myst_heading_anchors = 3
myst_enable_extensions = ["colon_fence", "deflist"]
# Every link without a scheme is an internal one that Sphinx must resolve (a page, a heading, a file it copies).
myst_all_links_external = False

# Strictness: a reference Sphinx cannot resolve is a warning (an error under -W).
nitpicky = True
# Names in signatures that are not documented classes (numpy, sympy and the like).
nitpick_ignore_regex = [(r"py:.*", r"(numpy|np|sympy|h5py)\..*")]

autodoc_mock_imports = ["clmbench._clmbench"]
autodoc_member_order = "bysource"
autodoc_default_options = {"members": False, "undoc-members": False}
autodoc_typehints = "none"


def _plain_docstring(app, what, name, obj, options, lines):
    """The package's docstrings are plain text (written for help() and the notebook), not reStructuredText: every
    character that would start markup (`*`, a backquote, `_`, `|`, a backslash) is escaped, so each reads as
    written; paragraphs wrap, and an indented example stays a block of its own."""
    special = {"\\": "\\\\", "*": "\\*", "`": "\\`", "_": "\\_", "|": "\\|"}
    lines[:] = ["".join(special.get(ch, ch) for ch in line) for line in lines]


def setup(app):
    app.connect("autodoc-process-docstring", _plain_docstring)


html_theme = "furo"
html_title = "clmbench"
html_static_path = ["_static"]
html_css_files = ["clmbench.css"]
html_show_sourcelink = False
# Offline: nothing is fetched from the network at build or view time.
html_theme_options = {"navigation_with_keys": True}

# Text as written: "--set" stays two hyphens, quotes stay straight (flags and keys are quoted in prose).
smartquotes = False

# Formulas (a notebook's sympy output) typeset by MathJax 2 from Debian's libjs-mathjax, which tools/docs.sh copies into
# _static/mathjax: the site needs no network (Sphinx's default loads MathJax 3 from a CDN).
mathjax_path = "mathjax/MathJax.js?config=TeX-AMS_CHTML"
