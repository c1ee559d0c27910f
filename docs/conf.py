"""Sphinx configuration for skrl_like (MyST Markdown sources + autodoc).

Build (warnings are errors):
    .venv/bin/python -m sphinx -W --keep-going -b html docs docs/_build/html
"""

import inspect
import os
import sys

# autodoc imports both backends: keep them on one CPU thread and off any accelerator
os.environ.setdefault("OMP_NUM_THREADS", "1")
os.environ.setdefault("XLA_FLAGS", "--xla_cpu_multi_thread_eigen=false")
os.environ.setdefault("JAX_PLATFORMS", "cpu")
os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "3")

sys.path.insert(0, os.path.abspath(".."))

try:
    from skrl_like import __version__ as release
except Exception:  # the package is still being written; the docs must still say which version they describe
    release = "unknown"
version = release

project = "skrl_like"
author = "skrl_like contributors"
copyright = "skrl_like contributors"

extensions = [
    "myst_parser",
    "sphinx.ext.autodoc",
    "sphinx.ext.napoleon",
]

source_suffix = {".md": "markdown"}
root_doc = "index"
exclude_patterns = ["_build", "Thumbs.db", ".DS_Store"]
nitpicky = False

# MyST
myst_heading_anchors = 3

# autodoc / napoleon (docstrings follow skrl's reST field lists; Google/NumPy sections also accepted)
autodoc_member_order = "bysource"
autodoc_typehints = "signature"
autodoc_preserve_defaults = True
napoleon_google_docstring = True
napoleon_numpy_docstring = True


def _drop_builtin_type_docstrings(app, what, name, obj, options, lines):
    """A module-level dict/list without a doc comment would otherwise show ``dict.__doc__`` (invalid reST)."""
    if what not in ("data", "attribute") or type(obj).__module__ != "builtins" or not type(obj).__doc__:
        return
    type_doc = inspect.cleandoc(type(obj).__doc__).strip()
    if "\n".join(lines).strip() == type_doc or (lines and type_doc.startswith(lines[0].strip() or "\0")):
        lines[:] = []


def setup(app):
    app.connect("autodoc-process-docstring", _drop_builtin_type_docstrings)


# HTML
html_theme = "alabaster"
html_title = f"skrl_like {release}"
html_static_path = []
