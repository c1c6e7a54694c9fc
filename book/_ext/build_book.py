"""``make book DATA=path/to/folder``: the whole book executed on a dataset folder of one's own.

The folder (``rankbias.dataset``: ``collection.tsv``, ``queries.tsv``, ``qrels.txt``,
``runs/*.run``, an optional ``dataset.toml``) is checked first, as every chapter will read it:
a folder that does not hold together stops the build before any chapter runs, with one line
naming the file and what to fix.  Then the book is built by Jupyter Book's own Sphinx set-up
with the book's ``_config.yml``, every chapter reading the folder (``RANKBIAS_DATA``), into
``_build/<folder name>/html``, with its own execution cache (``_build/<folder name>/
.jupyter_cache``, refreshed as ``make book`` refreshes its own, by ``chapter_cache.py``) and its
own Sphinx environment: ``make book`` on the embedded testbed, its pages and its cache are left
as they are.  ``--strict`` makes every warning an error (``make test`` builds so).
"""

from __future__ import annotations

import os
import sys
import time
from pathlib import Path

import chapter_cache

#: names under ``_build`` that the default book and ``make chapter`` use
RESERVED = {"html", "_chapter", "jupyter_execute", ".doctrees", "screenshots", "notebooks"}


def output_folder(root: Path, data: Path) -> Path:
    """``_build/<folder name>``: refused when the name is one the default book uses."""
    name = data.name
    if name in RESERVED or name.startswith("."):
        raise SystemExit(
            f"make book: DATA={data}: a folder called {name!r} would build into _build/{name}, "
            "which the default book uses; rename the folder or link it under another name"
        )
    return root / "_build" / name


def check_data(given: str) -> Path:
    """The dataset folder, read and checked as the chapters will read it."""
    from rankbias.dataset import load_dataset
    from rankbias.errors import InputError

    if not given.strip():
        raise SystemExit("make book: DATA is empty; expected a dataset folder")
    try:
        data = load_dataset(given)
    except InputError as exc:
        raise SystemExit(f"make book: DATA={given}: {exc}") from None
    for note in data.notes:
        print(f"make book: note: {note}")
    return data.path


def sphinx_build(root: Path, out: Path, overrides: dict, strict: bool) -> int:
    """Jupyter Book's Sphinx set-up with the book's ``_config.yml`` and ``overrides``, into
    ``out/html`` with its environment in ``out/.doctrees`` (``make chapter`` builds so too)."""
    from jupyter_book.sphinx import build_sphinx

    return build_sphinx(
        root,
        out / "html",
        doctreedir=out / ".doctrees",
        noconfig=True,
        path_config=str(root / "_config.yml"),
        confoverrides=overrides,
        builder="html",
        warningiserror=strict,
        keep_going=strict,
    )


def build(root: Path, out: Path, strict: bool) -> int:
    overrides = {
        "external_toc_path": str(root / "_toc.yml"),
        "nb_execution_cache_path": str(out / chapter_cache.Path(chapter_cache.CACHE_DIR).name),
        "latex_individualpages": False,
    }
    return sphinx_build(root, out, overrides, strict)


def main(argv: list[str]) -> int:
    strict = "--strict" in argv
    argv = [a for a in argv if a != "--strict"]
    root = Path.cwd().resolve()
    data = check_data(argv[0] if argv else "")
    out = output_folder(root, data)
    os.environ["RANKBIAS_DATA"] = str(data)  # every chapter's kernel reads this folder
    started = time.perf_counter()
    project = chapter_cache.Project.at(root, testbed=data, build=out)
    chapters = chapter_cache.toc_chapters(root)
    stale = chapter_cache.refresh(project, chapters)
    print(chapter_cache.describe(stale, len(chapters), dry_run=False))
    status = build(root, out, strict)
    if status != 0:
        print(f"make book: the book on {data} failed", file=sys.stderr)
        return 1
    print(
        f"make book: the book on {data} built in {time.perf_counter() - started:.0f} s; "
        f"its pages are in {(out / 'html').relative_to(root)}"
    )
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
