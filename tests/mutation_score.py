"""Print the mutation score of the last ``mutmut run`` per area (``make mutation``).

Reads mutmut's per-file records ``mutants/src/**/*.py.meta`` (mutant → test exit code) and
prints, for each area (``metrics/``, ``analysis/`` and each other mutated module), the killed
mutants over the mutants tested, then the survivors, time-outs and mutants no test reaches.
A mutant is killed when a test fails on it (exit code 1, or 3 for an error inside pytest, or
the tests' process crashes).  The score is killed over every mutant checked: a time-out (the
tests ran out of their CPU-time budget) and a mutant no test reaches count against it; mutants
not checked yet (a run filtered to some areas, or interrupted) are listed apart and left out.

Equivalent mutants: a surviving mutant listed in ``mutation_equivalents.tsv`` (beside this file)
with the change it makes and why no test can tell it from the code (``"UTF-8"`` for
``"utf-8"``, a buffer size, an argument equal to its default) is counted as equivalent and
left out of the score, which is then killed over the mutants checked that are not
equivalent (the usual definition).  ``make mutation`` runs no test on a listed mutant
(``conftest.py`` deselects them; mutmut records "no tests"): it would only run every test that
reaches it, and survive again.  The raw score, with them, is printed too.  A listed
mutant whose change is no longer the one recorded (mutmut renumbers a function's mutants when
its code changes) is not counted as equivalent, and is reported as stale.
Not a test module: pytest collects only ``test_*.py``.
"""

from __future__ import annotations

import ast
import difflib
import json
import sys
from collections import Counter
from pathlib import Path

#: mutmut 3's exit codes (mutmut.stats.status_by_exit_code) folded into the reported classes
#: plus -11: the tests' process crashed (SIGSEGV: a mutant that hands the compiled scanner a bad
#: array), which detects the mutant as surely as a failing test
STATUS = {1: "killed", 3: "killed", -11: "killed", 0: "survived", 5: "no tests", 33: "no tests",
          34: "skipped", 36: "timeout", -24: "timeout", 24: "timeout", 152: "timeout",
          255: "timeout", None: "not checked"}  # fmt: skip
COLUMNS = ("killed", "survived", "equivalent", "timeout", "no tests", "not checked", "other")
EQUIVALENTS = Path(__file__).with_name("mutation_equivalents.tsv")


def area(meta: Path, root: Path) -> str:
    parts = meta.relative_to(root).parts  # e.g. ("metrics", "rab.py.meta")
    return f"{parts[0]}/" if len(parts) > 1 else parts[0].removesuffix(".meta")


def bodies(path: Path) -> dict[str, list[str]]:
    """The body lines of every function of mutmut's rewritten module ``path``: the original of
    each function (``…__mutmut_orig``) and its mutants (``…__mutmut_<n>``)."""
    if not path.exists():
        return {}
    source = path.read_text(encoding="utf-8")
    lines = source.splitlines()
    return {
        node.name: lines[node.lineno : node.end_lineno]
        for node in ast.walk(ast.parse(source))
        if isinstance(node, ast.FunctionDef) and "__mutmut_" in node.name
    }


def change(functions: dict[str, list[str]], mutant: str) -> str:
    """The change ``mutant`` makes to the code: its removed and added lines, stripped, joined by
    `` | ``."""
    original = functions.get(mutant.rsplit("__mutmut_", 1)[0] + "__mutmut_orig")
    if original is None or mutant not in functions:
        return ""
    diff = list(difflib.unified_diff(original, functions[mutant], lineterm="", n=0))[2:]
    return " | ".join(line[0] + line[1:].strip() for line in diff if line[:1] in "+-")


def equivalents(root: Path) -> tuple[set[str], list[str]]:
    """The listed equivalent mutants whose change is still the one recorded, and the stale."""
    if not EQUIVALENTS.exists():
        return set(), []
    current, stale, modules = set(), [], {}
    for line in EQUIVALENTS.read_text(encoding="utf-8").splitlines()[1:]:
        name, recorded, _reason = line.split("\t")
        module, function = name.rsplit(".", 1)
        path = root.parent / (module.replace(".", "/") + ".py")
        if not path.exists():  # a function of a package: its __init__.py
            path = path.with_suffix("") / "__init__.py"
        if path not in modules:
            modules[path] = bodies(path)
        (current.add if change(modules[path], function) == recorded else stale.append)(name)
    return current, stale


def main(root: Path = Path("mutants/src/rankbias")) -> int:
    metas = sorted(root.rglob("*.py.meta"))
    if not metas:
        print(f"no mutmut results under {root}; run `mutmut run` first", file=sys.stderr)
        return 2
    equivalent, stale = equivalents(root)
    counts: dict[str, Counter] = {}
    for meta in metas:
        codes = json.loads(meta.read_text(encoding="utf-8"))["exit_code_by_key"]
        tally = counts.setdefault(area(meta, root), Counter())
        for name, code in codes.items():
            status = STATUS.get(code, "other")
            # a recorded equivalent runs no test (tests/conftest.py): mutmut says "no tests"
            recorded = status in ("survived", "no tests") and name in equivalent
            tally["equivalent" if recorded else status] += 1
    counts["all"] = sum(counts.values(), Counter())
    print(f"{'area':<14} {'score':>16} {'raw':>7} " + " ".join(f"{c:>11}" for c in COLUMNS))
    for name, tally in counts.items():
        tested = sum(tally.values()) - tally["not checked"]
        scored = tested - tally["equivalent"]
        score = f"{tally['killed']}/{scored}" + (
            f" {100 * tally['killed'] / scored:.1f}%" if scored else ""
        )
        raw = f"{100 * tally['killed'] / tested:.1f}%" if tested else ""
        print(f"{name:<14} {score:>16} {raw:>7} " + " ".join(f"{tally[c]:>11}" for c in COLUMNS))
    for name in stale:
        print(f"stale: {name} no longer makes the change recorded in {EQUIVALENTS.name}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
