"""Sphinx configuration of the rankstats documentation.

Build with warnings as errors: ``python -m sphinx -W -b html docs docs/_build/html``.
The metrics table, the command-line help and the null-distribution figure are generated at build
time from the code itself, by the local extension in ``_ext/rankstats_docs.py``.
"""

from __future__ import annotations

import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE / "_ext"))

import rankstats  # noqa: E402  (installed: pip install -e ".[docs]")

project = "rankstats"
author = "The rankstats developers"
copyright = "the rankstats developers"
version = release = rankstats.__version__

extensions = [
    "sphinx.ext.autodoc",
    "sphinx.ext.napoleon",
    "sphinx.ext.mathjax",
    "sphinx.ext.viewcode",
    "rankstats_docs",
]

root_doc = "index"
exclude_patterns = ["_build", "_generated/*.rst"]
templates_path: list[str] = []
html_theme = "alabaster"
html_title = f"rankstats {release}"
html_theme_options = {
    "description": "Rank-based evaluation metrics with exact null models",
    "fixed_sidebar": True,
}

# the API reference: numpy-style docstrings, signatures without the noise of full type paths
autodoc_member_order = "bysource"
autodoc_typehints = "signature"
autodoc_typehints_format = "short"
autodoc_default_options = {"members": True, "show-inheritance": True}
napoleon_google_docstring = False
napoleon_numpy_docstring = True
# parameter types such as "array-like of shape (n,)" are prose, not cross-references
napoleon_use_param = False
napoleon_use_rtype = False
