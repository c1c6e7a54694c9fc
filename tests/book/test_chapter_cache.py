"""book/_ext/chapter_cache.py: which chapters re-execute after a change, on a throwaway project
(a small package under src/, two or three MyST notebooks, a jupyter-cache), built in tmp_path."""

from __future__ import annotations

import os
import re
import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "book" / "_ext"))
import chapter_cache  # noqa: E402

FRONT = """---
jupytext:
  text_representation:
    extension: .md
    format_name: myst
    format_version: 0.13
kernelspec:
  display_name: Python 3
  language: python
  name: python3
---

# {title}

"""


def notebook(path: Path, *cells: str) -> Path:
    body = "".join(f"```{{code-cell}} ipython3\n{cell}\n```\n\n" for cell in cells)
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(FRONT.format(title=path.stem) + body, encoding="utf-8")
    return path


def write(path: Path, text: str) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")
    return path


@pytest.fixture
def project(tmp_path) -> chapter_cache.Project:
    """Package ``toy`` with two independent modules; chapter one imports alpha, two beta."""
    write(tmp_path / "src/toy/__init__.py", '"""A toy package."""\n')
    write(tmp_path / "src/toy/alpha.py", "def a():\n    return 1\n")
    write(tmp_path / "src/toy/beta.py", "def b():\n    return 2\n")
    notebook(tmp_path / "notebooks/01_one.md", "%matplotlib inline\nfrom toy.alpha import a", "a()")
    notebook(tmp_path / "notebooks/02_two.md", "import toy.beta as beta\nbeta.b()")
    write(tmp_path / "book/intro.md", "# Intro\n")
    write(
        tmp_path / "_toc.yml",
        "format: jb-book\nroot: book/intro\nparts:\n  - caption: Chapters\n    chapters:\n"
        "      - file: notebooks/01_one\n      - file: notebooks/02_two\n",
    )
    write(tmp_path / "pyproject.toml", "[project]\nname = 'toy'\n")
    write(tmp_path / "testbed/.complete", "built\n")
    return chapter_cache.Project.at(tmp_path, testbed=tmp_path / "testbed")


def refresh(project: chapter_cache.Project) -> dict[str, list[str]]:
    return chapter_cache.refresh(project, chapter_cache.toc_chapters(project.root))


ONE, TWO = "notebooks/01_one.md", "notebooks/02_two.md"


def test_the_toc_gives_the_notebooks_not_the_prose(project):
    chapters = chapter_cache.toc_chapters(project.root)
    assert [project.name(c) for c in chapters] == [ONE, TWO]


def test_only_the_chapter_that_imports_a_changed_module_is_stale(project):
    assert refresh(project) == {ONE: ["(no record)"], TWO: ["(no record)"]}
    assert refresh(project) == {}  # nothing changed
    write(project.src / "toy/beta.py", "def b():\n    return 3\n")
    assert refresh(project) == {TWO: ["src/toy/beta.py"]}
    write(project.src / "toy/alpha.py", "def a():\n    return 4\n")
    assert refresh(project) == {ONE: ["src/toy/alpha.py"]}
    # the package's __init__ runs for both; pyproject.toml and the testbed are everyone's
    write(project.src / "toy/__init__.py", '"""Changed."""\n')
    assert set(refresh(project)) == {ONE, TWO}
    write(project.root / "testbed/.complete", "built again\n")
    assert refresh(project) == {ONE: ["testbed/.complete"], TWO: ["testbed/.complete"]}


def test_a_dry_run_changes_nothing(project):
    refresh(project)
    write(project.src / "toy/beta.py", "def b():\n    return 3\n")
    chapters = chapter_cache.toc_chapters(project.root)
    assert chapter_cache.refresh(project, chapters, dry_run=True) == {TWO: ["src/toy/beta.py"]}
    assert refresh(project) == {TWO: ["src/toy/beta.py"]}


def test_imports_are_followed_through_the_package(project):
    # alpha imports gamma inside a function (relative), gamma names delta in a string (a lazy
    # import table), delta reads a data file of a data-only folder
    write(project.src / "toy/alpha.py", "def a():\n    from .gamma import g\n\n    return g()\n")
    write(project.src / "toy/gamma.py", 'LAZY = {"toy.delta": ("d",)}\n\ndef g():\n    return 1\n')
    write(project.src / "toy/delta.py", 'FILE = "words.csv"  # in resources/\n')
    write(project.src / "toy/resources/words.csv", "she,he\n")
    write(project.src / "toy/resources/other.tsv", "x\n")
    refresh(project)
    for changed in ("gamma.py", "delta.py", "resources/words.csv", "resources/other.tsv"):
        path = project.src / "toy" / changed
        write(path, path.read_text() + "# changed\n")
        assert refresh(project) == {ONE: [f"src/toy/{changed}"]}, changed


def test_a_computed_import_reaches_every_module_of_its_package(project):
    write(
        project.src / "toy/beta.py",
        "import importlib\n\ndef load(name):\n    return importlib.import_module(f'toy.{name}')\n",
    )
    refresh(project)
    write(project.src / "toy/alpha.py", "def a():\n    return 5\n")
    assert refresh(project) == {ONE: ["src/toy/alpha.py"], TWO: ["src/toy/alpha.py"]}


def test_a_lazy_attribute_of_the_package_reaches_only_the_chapters_that_use_it(project):
    # toy/__init__.py offers toy.gamma_value lazily (PEP 562); chapter two uses it, chapter
    # one only imports the package (through toy.alpha)
    write(
        project.src / "toy/__init__.py",
        "def __getattr__(name):\n"
        "    if name == 'gamma_value':\n"
        "        from toy.gamma import g\n\n        return g\n"
        "    raise AttributeError(name)\n",
    )
    write(project.src / "toy/gamma.py", "def g():\n    return 3\n")
    notebook(project.root / "notebooks/02_two.md", "import toy\ntoy.gamma_value()")
    refresh(project)
    write(project.src / "toy/gamma.py", "def g():\n    return 4\n")
    assert refresh(project) == {TWO: ["src/toy/gamma.py"]}


def test_stale_chapters_lose_their_cached_runs_and_are_read_again(project):
    jupyter_cache = pytest.importorskip("jupyter_cache")
    nbformat = pytest.importorskip("nbformat")
    from jupyter_cache.base import CacheBundleIn

    refresh(project)
    cache = jupyter_cache.get_cache(str(project.cache))
    chapters = chapter_cache.toc_chapters(project.root)
    for chapter in chapters:
        executed = nbformat.v4.new_notebook(
            cells=[nbformat.v4.new_code_cell(f"print('{chapter.stem}')")]
        )
        bundle = CacheBundleIn(executed, str(chapter.resolve()))
        cache.cache_notebook_bundle(bundle, check_validity=False)
        os.utime(chapter, (1_000_000_000, 1_000_000_000))
    assert sorted(Path(r.uri).name for r in cache.list_cache_records()) == [
        "01_one.md",
        "02_two.md",
    ]
    write(project.src / "toy/beta.py", "def b():\n    return 3\n")
    assert refresh(project) == {TWO: ["src/toy/beta.py"]}
    assert [Path(r.uri).name for r in cache.list_cache_records()] == ["01_one.md"]
    one, two = chapters
    assert one.stat().st_mtime == 1_000_000_000  # untouched: Sphinx keeps its page
    assert two.stat().st_mtime > 1_000_000_000  # touched: Sphinx reads it again


def test_affected_names_the_import_chain(project):
    write(project.src / "toy/beta.py", "from toy import alpha\n")
    chapters = chapter_cache.toc_chapters(project.root)
    lines = chapter_cache.affected_chapters(project, chapters, [project.src / "toy/alpha.py"])
    assert lines == [f"{ONE}: toy.alpha", f"{TWO}: toy.beta -> toy.alpha"]


REPO = Path(__file__).resolve().parents[2]


def documented_reexecutions() -> list[tuple[list[str], str]]:
    """The rows of book/extending.md's table 'a change to … re-executes the chapters'."""
    text = (REPO / "book/extending.md").read_text(encoding="utf-8")
    start = text.index("| a change to (in `src/rankbias/`) | re-executes the chapters |")
    rows = []
    for line in text[start:].splitlines()[2:]:
        if not line.startswith("|"):
            break
        files, chapters = (cell.strip() for cell in line.strip("|").split("|"))
        rows.append((re.findall(r"`([^`]+)`", files), chapters))
    return rows


def test_the_table_of_extending_md_says_which_real_chapters_re_execute():
    pytest.importorskip("jupytext")
    project = chapter_cache.Project.at(REPO)
    chapters = chapter_cache.toc_chapters(REPO)
    graph = chapter_cache.ImportGraph(project.src)
    # the table describes the book's own chapters, 01-13; a chapter a reader adds by
    # following the page (14_my_topic.md) is not one of them and must not break this test
    described = {f"{number:02d}" for number in range(1, 14)}
    chapters = [c for c in chapters if c.name[:2] in described]
    inputs = {c.name[:2]: set(chapter_cache.chapter_inputs(c, project, graph)) for c in chapters}
    rows = documented_reexecutions()
    assert len(rows) >= 5
    for patterns, stated in rows:
        if stated == "none":
            expected = set()
        elif stated.startswith("all"):
            assert stated.startswith(f"all {len(chapters)} "), stated
            expected = set(inputs)
        else:
            expected = set(stated.split(", "))
        for pattern in patterns:
            files = sorted((REPO / "src/rankbias").glob(pattern))
            assert files, f"extending.md names {pattern}, which matches no file"
            for path in files:
                found = {number for number, needed in inputs.items() if path in needed}
                assert found == expected, f"{path.relative_to(REPO)}: {sorted(found)}"
