"""``make chapter NB=notebooks/NN_topic.md``: execute one chapter and build its page alone.

The page is built by Jupyter Book's own Sphinx set-up with the book's ``_config.yml``, as a
book of one page (a table of contents holding only the chapter), so the chapter is read with
the book's extensions, bibliography and styles.  It differs from ``make book`` in three ways:

- the chapter's cached run is the book's: the jupyter-cache of ``make book``
  (``_build/.jupyter_cache``), after the same ``chapter_cache.py refresh`` (a chapter whose
  package inputs changed loses its cached run).  A chapter ``make book`` has executed is shown
  from the cache at once; one executed here is not executed again by ``make book``;
- the Sphinx environment and the HTML are its own (``_build/_chapter/``), so the book's pages
  and ``_build/html`` are left as they are;
- ``--data=DIR`` (``make chapter DATA=DIR NB=…``) executes it on that dataset folder, with the
  cache of ``make book DATA=DIR`` (``_build/<folder name>/``), into
  ``_build/<folder name>/_chapter/``;
- references to other pages of the book (``{ref}``, ``{doc}``, ``{numref}`` of another chapter)
  cannot be resolved in a book of one page: each is one warning, and the reference is shown as
  text.  ``make book`` resolves them.

``--strict`` makes every warning an error (``make book-strict`` builds the template so).
A chapter outside ``_toc.yml`` works too (the template, ``book/chapter_template.md``): a pattern
of ``exclude_patterns`` that names the chapter is lifted for this build only.
"""

from __future__ import annotations

import fnmatch
import sys
import time
from pathlib import Path

import build_book
import chapter_cache

OUT = "_build/_chapter"


def chapter_path(root: Path, given: str) -> Path:
    """The chapter's file, checked: it exists, inside the project, and is a notebook."""
    if not given.strip():
        raise SystemExit(
            "make chapter: no chapter given; say which, e.g. "
            "make chapter NB=notebooks/04_fairr_nfairr.md"
        )
    path = (root / given).resolve()
    if not path.is_file():
        chapters = ", ".join(root_name(root, c) for c in chapter_cache.toc_chapters(root))
        raise SystemExit(f"make chapter: {given}: no such file; the chapters are {chapters}")
    try:
        path.relative_to(root)
    except ValueError:
        raise SystemExit(f"make chapter: {given}: not inside the project {root}") from None
    if not chapter_cache.is_notebook(path):
        raise SystemExit(
            f"make chapter: {given}: not a chapter (expected a .ipynb, or a .md whose front "
            "matter has a kernelspec, as notebooks/*.md have)"
        )
    return path


def root_name(root: Path, path: Path) -> str:
    return path.resolve().relative_to(root).as_posix()


def build(
    root: Path, chapter: Path, strict: bool = False, project: chapter_cache.Project | None = None
) -> tuple[int, Path]:
    """Build ``chapter``'s page; returns Sphinx's exit status and the page's path."""
    import yaml

    name = root_name(root, chapter)
    project = project or chapter_cache.Project.at(root)
    out = project.cache.parent / Path(OUT).name
    out.mkdir(parents=True, exist_ok=True)
    # the chapter, and the page that holds the bibliography, so that citations resolve
    pages = [
        root_name(root, page)
        for page in chapter_cache.toc_files(root)
        if page.suffix == ".md" and "{bibliography}" in page.read_text(encoding="utf-8")
    ]
    toc = out / "_toc.yml"
    lines = ["format: jb-book", f"root: {Path(name).with_suffix('').as_posix()}"]
    if pages:
        lines += ["chapters:"] + [f"  - file: {Path(p).with_suffix('').as_posix()}" for p in pages]
    toc.write_text("\n".join(lines) + "\n", encoding="utf-8")
    config = yaml.safe_load((root / "_config.yml").read_text(encoding="utf-8"))
    excluded = [p for p in config.get("exclude_patterns", []) if not fnmatch.fnmatch(name, p)]
    overrides = {
        "external_toc_path": toc.as_posix(),
        "nb_execution_cache_path": str(project.cache),
        "exclude_patterns": excluded,
        "latex_individualpages": False,
    }
    status = build_book.sphinx_build(root, out, overrides, strict)
    return status, out / "html" / Path(name).with_suffix(".html")


def main(argv: list[str]) -> int:
    strict = "--strict" in argv  # warnings are errors (make book-strict, for the template)
    argv = [a for a in argv if a != "--strict"]
    data = None
    if argv and argv[0].startswith("--data="):  # make chapter DATA=…: that folder's cache
        data = argv.pop(0).removeprefix("--data=")
    root = Path.cwd().resolve()
    chapter = chapter_path(root, argv[0] if argv else "")
    started = time.perf_counter()
    if data:
        import os

        folder = build_book.check_data(data)
        os.environ["RANKBIAS_DATA"] = str(folder)
        project = chapter_cache.Project.at(
            root, testbed=folder, build=build_book.output_folder(root, folder)
        )
    else:
        project = chapter_cache.Project.at(root)
    chapters = chapter_cache.toc_chapters(root)
    if chapter not in {c.resolve() for c in chapters}:
        chapters.append(chapter)
    stale = chapter_cache.refresh(project, chapters)
    print(chapter_cache.describe(stale, len(chapters), dry_run=False))
    status, page = build(root, chapter, strict, project)
    seconds = time.perf_counter() - started
    if status != 0:
        print(f"make chapter: the build of {root_name(root, chapter)} failed", file=sys.stderr)
        return 1
    print(
        f"make chapter: {root_name(root, chapter)} built in {seconds:.0f} s (references to "
        "other pages of the book are 'undefined label' warnings here; make book resolves "
        f"them); its page is\n  {page.relative_to(root)}"
    )
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
