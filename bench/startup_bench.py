"""Start-up: ``rankbias --help`` in a fresh process, against the interpreter alone.

Times, in the same run and in fresh processes each time, ``python -c pass`` (the floor),
``rankbias --help``, ``rankbias score --help`` and ``python -c "import pandas"`` (what an eager
import of the numerical stack alone would cost).  Prints the median and the minimum wall time
and the median CPU time (user + system) of each; on a busy machine the CPU time and the minimum
are the steadier figures.  Target of the project: ``rankbias --help`` in at most 0.3 s.
"""

from __future__ import annotations

import os
import statistics
import subprocess
import sys
import time
from pathlib import Path

RUNS = 20
SRC = Path(__file__).resolve().parents[1] / "src"


def timed(command: list[str]) -> tuple[float, float]:
    """Wall and CPU seconds of one run of ``command`` (children's CPU from ``os.times``)."""
    env = {**os.environ, "PYTHONPATH": str(SRC)}
    before = os.times()
    started = time.perf_counter()
    subprocess.run(command, env=env, check=True, stdout=subprocess.DEVNULL)
    wall = time.perf_counter() - started
    after = os.times()
    cpu = (after.children_user - before.children_user) + (
        after.children_system - before.children_system
    )
    return wall, cpu


def main() -> None:
    script = "import sys; from rankbias.cli import main; sys.exit(main())"
    cases = {
        "python -c pass": [sys.executable, "-c", "pass"],
        "rankbias --help": [sys.executable, "-c", script, "--help"],
        "rankbias score --help": [sys.executable, "-c", script, "score", "--help"],
        "python -c 'import pandas'": [sys.executable, "-c", "import pandas"],
    }
    for command in cases.values():  # warm the file cache
        timed(command)
    print(f"{'command':<28} {'median':>9} {'min':>9} {'CPU':>9}   ({RUNS} fresh processes)")
    for name, command in cases.items():
        walls, cpus = zip(*(timed(command) for _ in range(RUNS)), strict=True)
        print(
            f"{name:<28} {statistics.median(walls):8.3f}s {min(walls):8.3f}s "
            f"{statistics.median(cpus):8.3f}s"
        )


if __name__ == "__main__":
    main()
