"""Sphinx configuration of the zigzag-flow documentation (MyST Markdown pages, furo theme).

Build: ``.venv/bin/pip install -e ".[docs]" && .venv/bin/sphinx-build -W -b html docs docs/_build/html``
"""

project = "zigzag-flow"
author = "zigzag-flow contributors"
copyright = "2026, zigzag-flow contributors"

extensions = [
    "myst_parser",
    "sphinx.ext.autodoc",
    "sphinx.ext.napoleon",
    "sphinxarg.ext",
]
source_suffix = {".md": "markdown"}
exclude_patterns = ["_build", "Thumbs.db", ".DS_Store"]
myst_heading_anchors = 3
myst_enable_extensions = ["colon_fence"]
html_theme = "furo"
html_title = "zigzag-flow"
html_static_path = ["_static"]
autodoc_member_order = "bysource"
autodoc_typehints = "description"
napoleon_google_docstring = True
napoleon_numpy_docstring = False
nitpicky = False
