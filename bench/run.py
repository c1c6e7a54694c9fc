"""`make bench`: every benchmark of the project, one after the other.

Each benchmark compares the package against a straightforward implementation of the same
computation in the same run and prints times and ratios.  Speed is measured here, never
asserted in tests.
"""

from __future__ import annotations

import importlib.util
import sys
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
BENCHMARKS = (
    "startup_bench",
    "read_run_bench",
    "stats_bench",
    "score_bench",
    "scale_bench",
    "unicode_bench",
    "cluster_bench",
    "duo_bench",
    "book_bench",  # last: half an hour (the whole book on a folder of MS MARCO's size)
)


def load(name: str):
    spec = importlib.util.spec_from_file_location(name, HERE / f"{name}.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def compile_package() -> None:
    """Write the package's bytecode first, as ``pip install`` does: with
    ``PYTHONDONTWRITEBYTECODE`` set (or a fresh edit of an editable install), every timed
    process would otherwise compile the changed modules again (about 0.15 s each)."""
    import compileall

    import rankbias

    compileall.compile_dir(Path(rankbias.__file__).parent, quiet=1)


def main(argv: list[str]) -> int:
    wanted = argv or list(BENCHMARKS)
    compile_package()
    for name in wanted:
        if not (HERE / f"{name}.py").exists():
            print(f"== {name}: no such benchmark in {HERE}", file=sys.stderr)
            return 2
        print(f"\n== {name}", flush=True)
        started = time.perf_counter()
        load(name).main()
        print(f"== {name}: {time.perf_counter() - started:.1f} s", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
