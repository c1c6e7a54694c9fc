"""Which chapters must re-execute after a change to the package: their cached runs are dropped.

Jupyter Book caches each chapter's executed notebook (``_build/.jupyter_cache``) under a hash of
the chapter's own code cells, so it sees a change to the chapter's text but not to the package
the chapter imports.  This script closes that gap one chapter at a time.  A chapter's *inputs*
are

- every file of the package (``src/<package>/**.py``) that the chapter imports, directly or
  through the package's own imports, found with :mod:`ast`: ``import`` statements anywhere in
  a module (also inside functions), module names written as strings (lazy-import tables,
  ``importlib.import_module("rankbias.x")``), and every package above an imported module
  (importing ``a.b.c`` runs ``a/__init__.py`` and ``a/b/__init__.py``).  A module that imports
  modules by computed names (``import_module(f"...{name}")``, ``pkgutil.iter_modules``) is taken
  to import every module of its own package.  A package's lazy attributes (a module-level
  ``def __getattr__(name)`` with one ``if name == "x":`` branch per attribute, PEP 562) are not
  run by importing the package: a chapter reaches the modules of ``x``'s branch only when its
  code names ``package.x`` (or imports ``x`` from the package);
- the package's data files those modules can read, conservatively: a data file whose name
  (or stem) appears in a module's source, and every file of a data-only folder (no ``.py``
  files, e.g. ``resources/``) whose folder name appears in it;
- ``pyproject.toml`` and the dataset the chapters read: the testbed's ``.complete`` stamp
  (size, modification time and content), or, for a folder of one's own without a stamp
  (``RANKBIAS_DATA``; ``make book DATA=…``), the size and modification time of its files, those
  of its sub-folders (``runs/``, word lists, …) included, its ``cache/`` excepted.

``refresh`` hashes each chapter's inputs and compares them with the hashes recorded in
``_build/.chapter-inputs.json`` at the previous refresh.  For a chapter whose inputs changed (or
that has no record) it deletes the chapter's executed notebooks from the jupyter-cache (records
whose URI is the chapter's file) and sets the chapter file's modification time to now, so that
Sphinx reads the page again and myst-nb, finding no cached run, executes it.  The other chapters
keep their cached outputs and their pages.  The recorded hashes are updated only after the
cache records are deleted, so an interrupted build cannot leave a stale run marked fresh.

Run from the project's root (the Makefile does)::

    python book/_ext/chapter_cache.py refresh [--dry-run] [--chapter NB ...]
    python book/_ext/chapter_cache.py affected src/rankbias/metrics/rbo.py
    python book/_ext/chapter_cache.py inputs notebooks/04_fairr_nfairr.md

Not a Sphinx extension and not part of the package: build tooling the Makefile calls.
"""

from __future__ import annotations

import argparse
import ast
import hashlib
import json
import os
import re
import sys
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path

STATE_FILE = "_build/.chapter-inputs.json"
CACHE_DIR = "_build/.jupyter_cache"
TESTBED = "data/build/wikisample"
#: calls that import modules whose names the code computes
DYNAMIC_IMPORTERS = frozenset({"import_module", "__import__", "iter_modules", "walk_packages"})
NOTEBOOK_SUFFIXES = (".md", ".ipynb")


@dataclass
class Project:
    """Where things are.  ``shared`` are inputs of every chapter besides the package."""

    root: Path
    src: Path
    cache: Path
    state: Path
    shared: list[Path] = field(default_factory=list)

    @classmethod
    def at(cls, root: Path, testbed: Path | None = None, build: Path | None = None) -> Project:
        """The project at ``root`` reading the dataset ``testbed`` (default: ``$RANKBIAS_DATA``,
        ``$RANKBIAS_TESTBED``, the embedded testbed), its cache and state under ``build``
        (default: ``_build``; a dataset of one's own has its own, ``_build/<name>``)."""
        root = Path(os.path.abspath(root))
        if testbed is None:
            configured = os.environ.get("RANKBIAS_DATA") or os.environ.get("RANKBIAS_TESTBED")
            testbed = Path(configured) if configured else root / TESTBED
        build = root / "_build" if build is None else Path(os.path.abspath(build))
        return cls(
            root=root,
            src=root / "src",
            cache=build / Path(CACHE_DIR).name,
            state=build / Path(STATE_FILE).name,
            shared=[root / "pyproject.toml", *testbed_files(testbed)],
        )

    def name(self, path: Path) -> str:
        """``path`` as the messages and the state file write it: relative to the root (links
        not followed, so the testbed linked into ``data/build`` stays ``data/build/…``)."""
        absolute = Path(os.path.abspath(path))
        try:
            return absolute.relative_to(self.root).as_posix()
        except ValueError:
            return absolute.as_posix()


def testbed_files(testbed: Path) -> list[Path]:
    """The files that stand for the testbed's state (see the module's docstring)."""
    stamp = testbed / ".complete"
    if stamp.is_file():
        return [stamp]
    if not testbed.is_dir():
        return [stamp]  # absent: its appearance changes the hash
    files = [p for p in sorted(testbed.iterdir()) if p.is_file()]
    folders = [p for p in sorted(testbed.iterdir()) if p.is_dir() and p.name != "cache"]
    return files + sorted(p for folder in folders for p in folder.glob("*") if p.is_file())


# ---- the package's modules and what they import -------------------------------------------
def package_modules(src: Path) -> dict[str, Path]:
    """``{dotted module name: file}`` of every module of the packages under ``src``."""
    modules: dict[str, Path] = {}
    for init in sorted(src.glob("*/__init__.py")):
        top = init.parent
        for path in sorted(top.rglob("*.py")):
            relative = path.relative_to(src).with_suffix("")
            parts = relative.parts[:-1] if relative.name == "__init__" else relative.parts
            # a folder without __init__.py is not a package: its modules cannot be imported
            if all(
                (src.joinpath(*parts[:i]) / "__init__.py").is_file() for i in range(1, len(parts))
            ):
                modules[".".join(parts)] = path
    return modules


def _is_package(name: str, modules: dict[str, Path]) -> bool:
    return modules[name].name == "__init__.py"


def _resolve(candidate: str, modules: dict[str, Path]) -> set[str]:
    """The modules that importing ``candidate`` runs: its longest prefix that is a module, and
    every package above it.  A name outside the package gives nothing."""
    parts = candidate.split(".")
    for end in range(len(parts), 0, -1):
        name = ".".join(parts[:end])
        if name in modules:
            return {".".join(parts[:i]) for i in range(1, end + 1)} & set(modules)
    return set()


def _dynamic(call: ast.Call) -> bool:
    func = call.func
    called = func.attr if isinstance(func, ast.Attribute) else getattr(func, "id", None)
    if called not in DYNAMIC_IMPORTERS:
        return False
    if called in ("iter_modules", "walk_packages"):
        return True
    first = call.args[0] if call.args else None
    return not (isinstance(first, ast.Constant) and isinstance(first.value, str))


def _without_lazy_attributes(tree: ast.AST) -> ast.AST:
    """``tree`` without its module-level ``__getattr__`` (run on attribute use, not import)."""
    if not isinstance(tree, ast.Module):
        return tree
    body = [
        node
        for node in tree.body
        if not (isinstance(node, ast.FunctionDef) and node.name == "__getattr__")
    ]
    return ast.Module(body=body, type_ignores=[])


def lazy_attributes(tree: ast.AST, modules: dict[str, Path], importer: str) -> dict[str, set[str]]:
    """``{attribute: modules its branch imports}`` of a module-level ``__getattr__`` written
    as ``if name == "attribute": …`` branches."""
    found: dict[str, set[str]] = {}
    for node in getattr(tree, "body", []):
        if not (isinstance(node, ast.FunctionDef) and node.name == "__getattr__"):
            continue
        for branch in ast.walk(node):
            test = getattr(branch, "test", None)
            if (
                isinstance(branch, ast.If)
                and isinstance(test, ast.Compare)
                and len(test.comparators) == 1
                and isinstance(test.ops[0], ast.Eq)
                and isinstance(test.comparators[0], ast.Constant)
            ):
                body = ast.Module(body=branch.body, type_ignores=[])
                found[test.comparators[0].value] = imported_modules(body, modules, importer)
    return found


def imported_modules(
    tree: ast.AST, modules: dict[str, Path], importer: str | None = None
) -> set[str]:
    """The package's modules that the code ``tree`` imports (``importer``: the dotted name of
    the module the code is, for relative imports and computed imports; ``None`` for a
    notebook, whose computed imports are taken to reach every module)."""
    if importer is None:
        package = None
    elif _is_package(importer, modules):
        package = importer
    else:
        package = importer.rpartition(".")[0]
    tops = {name.split(".")[0] for name in modules}
    string_name = re.compile(rf"^(?:{'|'.join(map(re.escape, sorted(tops)))})(?:\.\w+)*$")
    found: set[str] = set()
    for node in ast.walk(_without_lazy_attributes(tree)):
        if isinstance(node, ast.Import):
            for alias in node.names:
                found |= _resolve(alias.name, modules)
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                if package is None:
                    continue
                base_parts = package.split(".")[: len(package.split(".")) - node.level + 1]
                base = ".".join(base_parts + ([node.module] if node.module else []))
            else:
                base = node.module or ""
            found |= _resolve(base, modules)
            for alias in node.names:
                if alias.name != "*":
                    found |= _resolve(f"{base}.{alias.name}", modules)
        elif isinstance(node, ast.Constant) and isinstance(node.value, str):
            if string_name.match(node.value):
                found |= _resolve(node.value, modules)
        elif isinstance(node, ast.Call) and _dynamic(node):
            if package is None:
                found |= set(modules)
            else:
                prefix = package + "."
                found |= {
                    name
                    for name in modules
                    if name.startswith(prefix) and "." not in name[len(prefix) :]
                }
                found |= _resolve(package, modules)
    return found


class ImportGraph:
    """The package's modules and, read once each, the modules each one imports."""

    def __init__(self, src: Path):
        self.src = src
        self.modules = package_modules(src)
        self._imports: dict[str, set[str]] = {}
        self._lazy: dict[str, dict[str, set[str]]] = {}

    def lazy(self, package: str) -> dict[str, set[str]]:
        """The lazy attributes of ``package`` (see :func:`lazy_attributes`)."""
        if package not in self._lazy:
            path = self.modules.get(package)
            tree = ast.parse(path.read_text(encoding="utf-8")) if path else None
            self._lazy[package] = lazy_attributes(tree, self.modules, package) if tree else {}
        return self._lazy[package]

    def imports(self, name: str) -> set[str]:
        if name not in self._imports:
            path = self.modules[name]
            tree = ast.parse(path.read_text(encoding="utf-8"), str(path))
            self._imports[name] = imported_modules(tree, self.modules, importer=name) - {name}
        return self._imports[name]

    def closure(self, start: Iterable[str]) -> dict[str, str | None]:
        """``start`` and everything it imports, transitively: ``{module: the module that
        first imported it}`` (``None`` for the modules of ``start``)."""
        reached: dict[str, str | None] = dict.fromkeys(sorted(start))
        todo = list(reached)
        while todo:
            name = todo.pop(0)
            for imported in sorted(self.imports(name)):
                if imported not in reached:
                    reached[imported] = name
                    todo.append(imported)
        return reached


def import_chain(reached: dict[str, str | None], module: str) -> list[str]:
    """How ``module`` was reached: the chain of imports from a module the chapter imports."""
    chain = [module]
    while reached[chain[-1]] is not None:
        chain.append(reached[chain[-1]])
    return chain[::-1]


def data_files(module: Path, src: Path) -> set[Path]:
    """The package's data files that ``module`` may read (the rule of the module docstring)."""
    text = module.read_text(encoding="utf-8")
    top = src / module.relative_to(src).parts[0]
    found: set[Path] = set()
    for path in top.rglob("*"):
        if not path.is_file() or path.suffix in (".py", ".pyc") or "__pycache__" in path.parts:
            continue
        if path.name in text or path.stem in text:
            found.add(path)
            continue
        folder = path.parent
        while folder != top:
            data_only = not any(folder.glob("*.py"))
            if data_only and re.search(rf"\b{re.escape(folder.name)}\b", text):
                found.add(path)
                break
            folder = folder.parent
    return found


# ---- chapters -------------------------------------------------------------------------------
def is_notebook(path: Path) -> bool:
    """An ``.ipynb``, or a MyST-Markdown file whose front matter has a ``kernelspec``."""
    if path.suffix == ".ipynb":
        return True
    if path.suffix != ".md" or not path.is_file():
        return False
    text = path.read_text(encoding="utf-8")
    if not text.startswith("---"):
        return False
    front = text[3:].split("\n---", 1)[0]
    return re.search(r"^kernelspec:", front, re.M) is not None


def toc_chapters(root: Path) -> list[Path]:
    """The notebooks that ``_toc.yml`` lists, in its order."""
    return [path for path in toc_files(root) if is_notebook(path)]


def toc_files(root: Path) -> list[Path]:
    """The files that ``_toc.yml`` lists (pages and notebooks), in its order."""
    import yaml

    toc = yaml.safe_load((root / "_toc.yml").read_text(encoding="utf-8"))
    names: list[str] = []

    def walk(node) -> None:
        if isinstance(node, dict):
            for key in ("root", "file"):
                if isinstance(node.get(key), str):
                    names.append(node[key])
            for value in node.values():
                if isinstance(value, list | dict):
                    walk(value)
        elif isinstance(node, list):
            for item in node:
                walk(item)

    walk(toc)
    files = []
    for name in dict.fromkeys(names):
        base = root / name
        for path in [base, *(base.with_name(base.name + s) for s in NOTEBOOK_SUFFIXES)]:
            if path.is_file():
                files.append(path)
                break
    return files


def notebook_code(path: Path) -> list[str]:
    """The source of each code cell of a notebook, IPython magics and shell lines blanked."""
    import jupytext

    notebook = jupytext.read(path)
    cells = []
    for cell in notebook.cells:
        if cell.cell_type != "code":
            continue
        lines = [
            "" if line.lstrip().startswith(("%", "!")) else line
            for line in cell.source.splitlines()
        ]
        cells.append("\n".join(lines))
    return cells


def chapter_modules(path: Path, graph: ImportGraph) -> dict[str, str | None]:
    """The package's modules a chapter runs, transitively (as :meth:`ImportGraph.closure`)."""
    direct: set[str] = set()
    for number, code in enumerate(notebook_code(path), start=1):
        try:
            tree = ast.parse(code, f"{path} (code cell {number})")
        except SyntaxError as error:
            print(
                f"chapter cache: {path}: code cell {number} is not Python ({error.msg}); the "
                "chapter is taken to import every module of the package",
                file=sys.stderr,
            )
            return dict.fromkeys(graph.modules)
        direct |= imported_modules(tree, graph.modules)
        for node in ast.walk(tree):  # package.x, or from package import x, of a lazy x
            if isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name):
                direct |= graph.lazy(node.value.id).get(node.attr, set())
            elif isinstance(node, ast.ImportFrom) and node.module and not node.level:
                for alias in node.names:
                    direct |= graph.lazy(node.module).get(alias.name, set())
    return graph.closure(direct)


def chapter_inputs(path: Path, project: Project, graph: ImportGraph) -> list[Path]:
    """Every file whose change re-executes the chapter (package files sorted, then the shared
    inputs)."""
    files = {graph.modules[name] for name in chapter_modules(path, graph)}
    for module in list(files):
        files |= data_files(module, project.src)
    return sorted(files) + list(project.shared)


def file_hash(path: Path, with_time: bool = False) -> str:
    if not path.exists():
        return "absent"
    digest = hashlib.sha256()
    stat = path.stat()
    if with_time:
        digest.update(f"{stat.st_size}:{stat.st_mtime_ns}:".encode())
    if not with_time or stat.st_size < (1 << 20):
        digest.update(path.read_bytes())
    return digest.hexdigest()


def fingerprints(chapters: Iterable[Path], project: Project) -> dict[str, dict[str, str]]:
    """``{chapter: {input: hash}}`` for every chapter (testbed files hashed with their time)."""
    graph = ImportGraph(project.src)
    timed = {p.resolve() for p in project.shared if p.name != "pyproject.toml"}
    memo: dict[Path, str] = {}
    result = {}
    for chapter in chapters:
        inputs = {}
        for path in chapter_inputs(chapter, project, graph):
            if path not in memo:
                memo[path] = file_hash(path, with_time=path.resolve() in timed)
            inputs[project.name(path)] = memo[path]
        result[project.name(chapter)] = inputs
    return result


# ---- comparing with the last refresh, and dropping cached runs ------------------------------
def changed_inputs(
    current: dict[str, dict[str, str]], recorded: dict[str, dict[str, str]]
) -> dict[str, list[str]]:
    """``{chapter: [the inputs whose hash changed, appeared or went]}`` for stale chapters; a
    chapter without a record is stale with the list ``["(no record)"]``."""
    stale = {}
    for chapter, inputs in current.items():
        before = recorded.get(chapter)
        if before is None:
            stale[chapter] = ["(no record)"]
            continue
        changed = sorted(k for k in inputs.keys() | before.keys() if inputs.get(k) != before.get(k))
        if changed:
            stale[chapter] = changed
    return stale


def read_state(project: Project) -> dict[str, dict[str, str]]:
    try:
        return json.loads(project.state.read_text(encoding="utf-8"))
    except FileNotFoundError:
        return {}
    except (json.JSONDecodeError, UnicodeDecodeError):
        return {}  # damaged: every chapter is stale


def write_state(project: Project, state: dict[str, dict[str, str]]) -> None:
    project.state.parent.mkdir(parents=True, exist_ok=True)
    temporary = project.state.with_suffix(".tmp")
    temporary.write_text(json.dumps(state, indent=1, sort_keys=True) + "\n", encoding="utf-8")
    temporary.replace(project.state)


def drop_cached_runs(project: Project, chapters: Iterable[Path]) -> dict[str, int]:
    """Delete the jupyter-cache records of ``chapters`` (by URI); ``{chapter: records}``."""
    wanted = {Path(c).resolve(): project.name(c) for c in chapters}
    dropped = dict.fromkeys(wanted.values(), 0)
    if not (project.cache / "global.db").is_file():
        return dropped  # no cache yet: nothing to drop (and none is created)
    from jupyter_cache import get_cache

    cache = get_cache(str(project.cache))
    for record in cache.list_cache_records():
        name = wanted.get(Path(record.uri).resolve()) if record.uri else None
        if name is not None:
            try:
                cache.remove_cache(record.pk)
            except KeyError:  # its notebook folder is gone already: drop the record alone
                from jupyter_cache.cache.db import NbCacheRecord

                NbCacheRecord.remove_records([record.pk], cache.db)
            dropped[name] += 1
    return dropped


def refresh(project: Project, chapters: list[Path], dry_run: bool = False) -> dict[str, list[str]]:
    """Drop the cached runs of the chapters whose inputs changed; returns those chapters."""
    current = fingerprints(chapters, project)
    recorded = read_state(project)
    stale = changed_inputs(current, recorded)
    if dry_run or not stale:
        return stale
    by_name = {project.name(c): c for c in chapters}
    drop_cached_runs(project, [by_name[name] for name in stale])
    for name in stale:
        os.utime(by_name[name])  # Sphinx reads the page again
    write_state(project, recorded | current)
    return stale


def describe(stale: dict[str, list[str]], total: int, dry_run: bool) -> str:
    if not stale:
        return f"chapter cache: the inputs of all {total} chapters are unchanged"
    verb = "would drop" if dry_run else "dropped"
    lines = [
        f"chapter cache: {verb} the cached runs of {len(stale)} of {total} chapter(s), whose "
        "inputs changed (each executes when it is next built):"
    ]
    for chapter, changed in stale.items():
        shown = ", ".join(changed[:4]) + (
            f" and {len(changed) - 4} more" if len(changed) > 4 else ""
        )
        lines.append(f"  {chapter}: {shown}")
    return "\n".join(lines)


def affected_chapters(project: Project, chapters: list[Path], files: list[Path]) -> list[str]:
    """One line per chapter that depends on one of ``files``, saying through which import."""
    graph = ImportGraph(project.src)
    targets = {project.name(f) for f in files}
    lines = []
    for chapter in chapters:
        reached = chapter_modules(chapter, graph)
        names = {project.name(p): p for p in chapter_inputs(chapter, project, graph)}
        hits = sorted(targets & names.keys())
        if not hits:
            continue
        reasons = []
        for hit in hits:
            module = next((m for m, p in graph.modules.items() if p == names[hit]), None)
            if module in reached:
                reasons.append(" -> ".join(import_chain(reached, module)))
            else:
                reasons.append(f"{hit} (read by a module it imports, or shared by all chapters)")
        lines.append(f"{project.name(chapter)}: {'; '.join(reasons)}")
    return lines


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="chapter_cache.py", description=__doc__.split("\n")[0])
    parser.add_argument("--root", type=Path, default=Path("."), help="the project (default: .)")
    sub = parser.add_subparsers(dest="command", required=True)
    refresh_parser = sub.add_parser("refresh", help="drop the cached runs of changed chapters")
    refresh_parser.add_argument("--dry-run", action="store_true", help="only say which")
    refresh_parser.add_argument(
        "--chapter", action="append", type=Path, default=[], help="a notebook outside the toc"
    )
    affected = sub.add_parser("affected", help="the chapters that depend on the given files")
    affected.add_argument("files", nargs="+", type=Path)
    inputs = sub.add_parser("inputs", help="the inputs of one chapter")
    inputs.add_argument("chapter", type=Path)
    args = parser.parse_args(argv)

    project = Project.at(args.root)
    if args.command == "inputs":
        for path in chapter_inputs(args.chapter, project, ImportGraph(project.src)):
            print(project.name(path))
        return 0
    chapters = toc_chapters(project.root)
    if args.command == "affected":
        for line in affected_chapters(project, chapters, args.files):
            print(line)
        return 0
    for extra in args.chapter:
        if not is_notebook(extra):
            parser.error(f"{extra}: not a notebook (.ipynb, or .md with a kernelspec)")
        if extra.resolve() not in {c.resolve() for c in chapters}:
            chapters.append(extra)
    stale = refresh(project, chapters, dry_run=args.dry_run)
    print(describe(stale, len(chapters), args.dry_run))
    return 0


if __name__ == "__main__":
    sys.exit(main())
