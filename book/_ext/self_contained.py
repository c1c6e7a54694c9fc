"""Make the HTML book self-contained: it must read the same offline, over ``file://``.

Three things a reader's browser would otherwise fetch from elsewhere, or miss:

* **MathJax.**  Sphinx points ``mathjax_path`` at a CDN.  This extension takes MathJax 3.2.2
  from the ``sphinx-mathjax-offline`` package on the package index (pinned in the ``book``
  extra of ``pyproject.toml``) and copies its single-file SVG bundle ``tex-svg.js`` -- TeX
  input with the AMS environments, SVG output, so no web fonts are needed, which matters over
  ``file://`` -- plus the TeX extensions, accessibility and menu files it loads on demand into
  ``_build/html/_static/mathjax``, and sets ``mathjax_path`` to that copy.
* **Thebe.**  ``sphinx_thebe`` (always loaded by Jupyter Book) declares ``THEBE_JS_URL`` in an
  inline script that ends up twice on a page (a console error) and would load Thebe from a
  CDN to reach a Binder server.  The book runs no kernel server, so the extension disconnects
  ``sphinx_thebe``'s handlers and stylesheet: no Thebe script or configuration on any page.
* **Notebook downloads.**  The book theme's download menu offers the page's source (the MyST
  ``.md`` copied to ``_sources``) but offers the executed ``.ipynb`` only when a launch
  service is configured.  For every chapter this extension writes the executed notebook
  into ``_sources`` next to the ``.md`` and adds it to the menu.  The notebook myst-nb leaves
  in ``_build/jupyter_execute`` has no outputs when they come from the execution cache
  (myst-nb writes the notebook it read, not the one merged with the cache), so the outputs
  are merged in here from that cache (``_build/.jupyter_cache``), and stderr streams are
  dropped as the pages drop them (``execute.stderr_output: remove``).
"""

import importlib.util
import shutil
from pathlib import Path

import nbformat
from jupyter_cache import get_cache
from sphinx.errors import ExtensionError

MATHJAX_PACKAGE = "sphinx-mathjax-offline"  # the import name of the package, hyphens and all
MATHJAX_BUNDLE = "tex-svg.js"
# what tex-svg.js may load after start-up: \require'd TeX packages, the accessibility
# explorer (speech rule engine and its maps) and the contextual menu
MATHJAX_ON_DEMAND = ("input/tex/extensions", "a11y", "sre", "ui")
MATHJAX_TARGET = "mathjax"  # under _static


def mathjax_source() -> Path:
    """The folder of MathJax files that ``sphinx-mathjax-offline`` ships."""
    spec = importlib.util.find_spec(MATHJAX_PACKAGE)
    if spec is None or not spec.submodule_search_locations:
        raise ExtensionError(
            f"the book serves MathJax from the {MATHJAX_PACKAGE!r} package, which is not "
            "installed; install the book's dependencies: pip install -e '.[book]'"
        )
    source = Path(next(iter(spec.submodule_search_locations))) / "static" / "mathjax"
    missing = [
        name for name in (MATHJAX_BUNDLE, *MATHJAX_ON_DEMAND) if not (source / name).exists()
    ]
    if missing:
        raise ExtensionError(
            f"{source} lacks {', '.join(missing)}; expected the MathJax 3 files of "
            f"{MATHJAX_PACKAGE}==0.0.2"
        )
    return source


def use_local_mathjax(app, config):
    mathjax_source()  # fail at the start of the build, not at its end
    config.mathjax_path = f"{MATHJAX_TARGET}/{MATHJAX_BUNDLE}"


def copy_mathjax(app, exception):
    if app.builder.format != "html" or exception is not None:
        return
    source = mathjax_source()
    target = Path(app.outdir) / "_static" / MATHJAX_TARGET
    target.mkdir(parents=True, exist_ok=True)
    shutil.copy2(source / MATHJAX_BUNDLE, target / MATHJAX_BUNDLE)
    for folder in MATHJAX_ON_DEMAND:
        shutil.copytree(source / folder, target / folder, dirs_exist_ok=True)


def switch_off_thebe(app, config):
    for listeners in app.events.listeners.values():
        listeners[:] = [
            listener
            for listener in listeners
            if getattr(listener.handler, "__module__", "") != "sphinx_thebe"
        ]
    app.registry.css_files[:] = [
        (filename, attributes)
        for filename, attributes in app.registry.css_files
        if filename != "sphinx-thebe.css"
    ]


def executed_notebook(app, pagename: str) -> nbformat.NotebookNode:
    """The page's notebook with the outputs its HTML page shows."""
    written = Path(app.outdir).parent / "jupyter_execute" / f"{pagename}.ipynb"
    if not written.is_file():
        raise ExtensionError(f"{pagename} is a notebook but myst-nb wrote no {written}")
    notebook = nbformat.read(written, as_version=4)
    config = app.env.mystnb_config
    if config.execution_mode == "cache":
        cache_path = config.execution_cache_path or Path(app.outdir).parent / ".jupyter_cache"
        try:
            _, notebook = get_cache(str(cache_path)).merge_match_into_notebook(notebook)
        except KeyError as error:
            raise ExtensionError(
                f"{pagename}: no executed copy of {written.name} in the execution cache "
                f"{cache_path}; the page was built from it, so the cache changed since"
            ) from error
    if config.output_stderr == "remove":
        for cell in notebook.cells:
            if cell.cell_type == "code":
                cell.outputs = [
                    output
                    for output in cell.get("outputs", [])
                    if not (
                        output.get("output_type") == "stream" and output.get("name") == "stderr"
                    )
                ]
    return notebook


def offer_executed_notebook(app, pagename, templatename, context, doctree):
    """Write the page's executed notebook into ``_sources`` and list it in the download menu.

    Runs before the theme builds its download menu (priority 501), which reads
    ``ipynb_source``.
    """
    if app.builder.format != "html" or doctree is None:
        return
    if "kernelspec" not in app.env.metadata.get(pagename, {}):
        return
    target = Path(app.outdir) / "_sources" / f"{pagename}.ipynb"
    target.parent.mkdir(parents=True, exist_ok=True)
    nbformat.write(executed_notebook(app, pagename), target)
    context["ipynb_source"] = f"{pagename}.ipynb"


# Opened from disk (file://) the browser refuses the search page's fetch of each result's page
# (for its summary): one console error and an uncaught TypeError per result.  There the results
# are listed without summaries; over http they keep them.
NO_SUMMARY_FROM_DISK = (
    'if (location.protocol === "file:") DOCUMENTATION_OPTIONS.SHOW_SEARCH_SUMMARY = false;'
)


def setup(app):
    app.add_js_file(None, body=NO_SUMMARY_FROM_DISK, priority=210)
    app.connect("config-inited", use_local_mathjax)
    app.connect("config-inited", switch_off_thebe)
    app.connect("html-page-context", offer_executed_notebook, priority=500)
    app.connect("build-finished", copy_mathjax)
    return {"parallel_read_safe": True, "parallel_write_safe": True}
