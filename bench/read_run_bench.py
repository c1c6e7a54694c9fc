"""Reading run files: :func:`rankbias.runs.read_run` against a plain ``pyarrow.csv.read_csv``.

Run: ``python bench/read_run_bench.py`` (or through ``bench/run.py``, which calls :func:`main`).

1. Generates (once, seeded) a TREC run of 2,000 queries × 1,000 documents — 2,000,000 lines,
   MS MARCO-like numeric docids, scores with two decimals (so many ties) — into ``bench/out/``
   (ignored by git).
2. Times, alternating in the same process, ``read_run`` (strict validation: six fields, integer
   non-negative ranks, finite decimal scores, no repeated (qid, docid) or (qid, rank); ordered
   by score then docid, a :class:`~rankbias.runs.Run` with Python-string docids) and a plain
   ``pyarrow.csv.read_csv`` of the same file (no validation, no ordering), and prints the best
   of three of each and the ratio; the target is a ratio ≤ 3.
3. Times the same two as whole processes (interpreter start and imports included).
"""

from __future__ import annotations

import subprocess
import sys
import time
from pathlib import Path

import numpy as np

HERE = Path(__file__).resolve().parent
OUT = HERE / "out"
SEED = 20240917
N_QUERIES = 2_000
DEPTH = 1_000


def generate_run(path: Path, n_queries: int = N_QUERIES, depth: int = DEPTH) -> None:
    """Write a run of ``n_queries`` × ``depth`` lines, ranked by score, ties by file order."""
    rng = np.random.default_rng(SEED)
    qids = rng.choice(np.arange(100_000, 1_000_000), size=n_queries, replace=False)
    with open(path, "w", encoding="utf-8") as handle:
        for qid in qids:
            docs = rng.choice(8_841_823, size=depth, replace=False)
            scores = np.sort(np.round(rng.normal(10.0, 3.0, size=depth), 2))[::-1]
            handle.write(
                "".join(
                    f"{qid} Q0 {doc} {rank} {score:.6f} bench\n"
                    for rank, (doc, score) in enumerate(zip(docs, scores, strict=True), start=1)
                )
            )


def _best_of(function, repeats: int = 3) -> float:
    times = []
    for _ in range(repeats):
        started = time.perf_counter()
        function()
        times.append(time.perf_counter() - started)
    return min(times)


def _process_seconds(code: str, path: Path) -> float:
    started = time.perf_counter()
    subprocess.run([sys.executable, "-c", code, str(path)], check=True)
    return time.perf_counter() - started


def main() -> None:
    import pyarrow.csv as pa_csv

    from rankbias.runs import read_run

    OUT.mkdir(exist_ok=True)
    path = OUT / f"run_{N_QUERIES}x{DEPTH}.run"
    if not path.exists():
        print(f"generating {path.name} …", flush=True)
        generate_run(path)
    size = path.stat().st_size / 1e6
    print(f"run file: {N_QUERIES * DEPTH:,} lines, {size:.0f} MB")

    def plain():
        return pa_csv.read_csv(
            path,
            read_options=pa_csv.ReadOptions(autogenerate_column_names=True),
            parse_options=pa_csv.ParseOptions(delimiter=" "),
        )

    run = read_run(path)
    assert len(run.docids) == N_QUERIES * DEPTH and len(run) == N_QUERIES
    arrow_s, ours_s, file_order_s = [], [], []
    for _ in range(3):  # alternate, so that load on the machine hits both alike
        arrow_s.append(_best_of(plain, 1))
        ours_s.append(_best_of(lambda: read_run(path), 1))
        file_order_s.append(_best_of(lambda: read_run(path, order="file"), 1))
    arrow, ours, file_order = min(arrow_s), min(ours_s), min(file_order_s)
    print(f"pyarrow.csv.read_csv (no validation)   {arrow:6.2f} s")
    print(f"read_run (validated, score order)      {ours:6.2f} s   ratio {ours / arrow:.2f}")
    ratio = file_order / arrow
    print(f"read_run (validated, file order)       {file_order:6.2f} s   ratio {ratio:.2f}")

    arrow_code = (
        "import sys, pyarrow.csv as c; c.read_csv(sys.argv[1], "
        "read_options=c.ReadOptions(autogenerate_column_names=True), "
        "parse_options=c.ParseOptions(delimiter=' '))"
    )
    ours_code = "import sys; from rankbias.runs import read_run; read_run(sys.argv[1])"
    arrow_p = min(_process_seconds(arrow_code, path) for _ in range(2))
    ours_p = min(_process_seconds(ours_code, path) for _ in range(2))
    ratio = ours_p / arrow_p
    print(f"whole process: pyarrow {arrow_p:.2f} s, read_run {ours_p:.2f} s, ratio {ratio:.2f}")


if __name__ == "__main__":
    main()
