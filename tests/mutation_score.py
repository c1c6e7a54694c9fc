"""Print the mutation score of the last ``mutmut run`` per area (``make mutation``).

Reads mutmut's per-file records ``mutants/src/**/*.py.meta`` (mutant → test exit code) and
prints, for each area (``metrics/``, ``analysis/`` and each other mutated module), the killed
mutants over the mutants tested, then the survivors, time-outs and mutants no test reaches.
A mutant is killed when a test fails on it (exit code 1, or 3 for an error inside pytest).  The
score is killed over every mutant checked: a time-out (the tests ran out of their CPU-time
budget) and a mutant no test reaches count against it; mutants not checked yet (a run filtered
to some areas, or interrupted) are listed apart and left out.
Not a test module: pytest collects only ``test_*.py``.
"""

from __future__ import annotations

import json
import sys
from collections import Counter
from pathlib import Path

#: mutmut 3's exit codes (mutmut.stats.status_by_exit_code) folded into the reported classes
STATUS = {1: "killed", 3: "killed", 0: "survived", 5: "no tests", 33: "no tests", 34: "skipped",
          36: "timeout", -24: "timeout", 24: "timeout", 152: "timeout", 255: "timeout",
          None: "not checked"}  # fmt: skip
COLUMNS = ("killed", "survived", "timeout", "no tests", "not checked", "other")


def area(meta: Path, root: Path) -> str:
    parts = meta.relative_to(root).parts  # e.g. ("metrics", "rab.py.meta")
    return f"{parts[0]}/" if len(parts) > 1 else parts[0].removesuffix(".meta")


def main(root: Path = Path("mutants/src/rankbias")) -> int:
    metas = sorted(root.rglob("*.py.meta"))
    if not metas:
        print(f"no mutmut results under {root}; run `mutmut run` first", file=sys.stderr)
        return 2
    counts: dict[str, Counter] = {}
    for meta in metas:
        codes = json.loads(meta.read_text(encoding="utf-8"))["exit_code_by_key"]
        tally = counts.setdefault(area(meta, root), Counter())
        for code in codes.values():
            tally[STATUS.get(code, "other")] += 1
    counts["all"] = sum(counts.values(), Counter())
    print(f"{'area':<14} {'score':>16} " + " ".join(f"{c:>11}" for c in COLUMNS))
    for name, tally in counts.items():
        tested = sum(tally.values()) - tally["not checked"]
        score = f"{tally['killed']}/{tested}" + (
            f" {100 * tally['killed'] / tested:.1f}%" if tested else ""
        )
        print(f"{name:<14} {score:>16} " + " ".join(f"{tally[c]:>11}" for c in COLUMNS))
    return 0


if __name__ == "__main__":
    sys.exit(main())
