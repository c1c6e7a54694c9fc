"""``rankbias score`` end to end against the time it takes to read its inputs, whole processes.

Run: ``python bench/score_bench.py [--passages 1200000] [--runs 4] [--queries 2000]
[--depth 1000]`` (or through ``bench/run.py``, which calls :func:`main`).

1. Reuses the generated collection of ``stats_bench`` (seeded passages of about 85 words,
   ``bench/out/``) and generates, once and seeded, ``--runs`` TREC run files of ``--queries``
   queries × ``--depth`` documents drawn from that collection (distinct per query, scores
   descending, ranks 1..depth).
2. Times, in the same run and each as a whole process (interpreter start-up, imports and
   output writing included):

   a. ``rankbias stats`` on the collection (what any measure needs first: the per-document
      term counts);
   b. ``pyarrow.csv.read_csv`` of every run file, in a fresh interpreter — the physical
      reference for reading the runs (no validation, no ordering);
   c. ``rankbias score`` of all runs against the collection, every default measure at the
      default cut-offs, into Parquet.

   and prints ``c / (a + b)``, the budget being 3, with each command's peak resident memory.

The machine's load is printed: other processes (on a shared machine) slow every figure down.
"""

from __future__ import annotations

import argparse
import os
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

import stats_bench  # noqa: E402  (the sibling benchmark: generated collection, timing)

SEED = 20241123
BUDGET = 3.0


def generate_runs(n_passages: int, runs: int, queries: int, depth: int) -> list[Path]:
    """``runs`` run files over documents ``d0 .. d{n_passages-1}``, generated once."""
    stats_bench.OUT.mkdir(parents=True, exist_ok=True)
    paths = [
        stats_bench.OUT / f"run{i}_{queries}x{depth}_of_{n_passages}_seed{SEED}.run"
        for i in range(runs)
    ]
    rng = np.random.default_rng(SEED)
    ranks = np.arange(1, depth + 1)
    for i, path in enumerate(paths):
        seeds = rng.integers(0, 2**32, queries)  # drawn whether or not the file exists
        if path.exists():
            continue
        started = time.perf_counter()
        partial = path.with_suffix(".partial")
        with open(partial, "w", encoding="ascii") as handle:
            for q, query_seed in enumerate(seeds):
                query_rng = np.random.default_rng(query_seed)
                docs = query_rng.choice(n_passages, size=depth, replace=False)
                scores = np.sort(query_rng.random(depth) * 30.0)[::-1]
                handle.writelines(
                    f"q{q} Q0 d{d} {r} {s:.6f} sys{i}\n"
                    for d, r, s in zip(docs.tolist(), ranks.tolist(), scores.tolist(), strict=True)
                )
        partial.rename(path)
        print(f"generated {path.name} in {time.perf_counter() - started:.0f} s", flush=True)
    return paths


PYARROW_READ = """
import sys
import pyarrow.csv as csv
rows = 0
for path in sys.argv[1:]:
    table = csv.read_csv(
        path,
        read_options=csv.ReadOptions(column_names=["qid", "q0", "docid", "rank", "score", "tag"]),
        parse_options=csv.ParseOptions(delimiter=" "),
    )
    rows += table.num_rows
print(rows)
"""


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--passages", type=int, default=1_200_000)
    parser.add_argument("--words", type=int, default=85)
    parser.add_argument("--runs", type=int, default=4)
    parser.add_argument("--queries", type=int, default=2_000)
    parser.add_argument("--depth", type=int, default=1_000)
    parser.add_argument("--terms", type=Path, default=None, help="term,group word list")
    args = parser.parse_args(argv or [])
    terms = (args.terms or stats_bench.find_wordlist()).resolve()
    collection = stats_bench.collections([args.passages], terms, args.words)[args.passages]
    runs = generate_runs(args.passages, args.runs, args.queries, args.depth)
    run_lines = args.runs * args.queries * args.depth
    print(
        f"{args.passages:,} passages ({collection.stat().st_size / 1e6:.0f} MB); {args.runs} runs"
        f" × {args.queries:,} queries × {args.depth:,} documents ({run_lines:,} lines, "
        f"{sum(p.stat().st_size for p in runs) / 1e6:.0f} MB); {os.cpu_count()} cores; "
        f"load average {os.getloadavg()[0]:.1f} at the start",
        flush=True,
    )
    with tempfile.TemporaryDirectory() as tmp:
        out = Path(tmp)
        stats = stats_bench.timed(
            [sys.executable, "-m", "rankbias.cli", "stats", "--collection", str(collection),
             "--terms", str(terms), "--out", str(out / "stats.parquet")]
        )  # fmt: skip
        read = stats_bench.timed([sys.executable, "-c", PYARROW_READ, *map(str, runs)])
        argv = [sys.executable, "-m", "rankbias.cli", "score", "--collection", str(collection),
                "--terms", str(terms), "--out", str(out / "score.parquet")]  # fmt: skip
        for run in runs:
            argv += ["--run", str(run)]
        score = stats_bench.timed(argv)
        import pyarrow.parquet as pq

        rows = pq.read_metadata(out / "score.parquet").num_rows
    budget = stats["seconds"] + read["seconds"]
    for label, report in (
        ("a. rankbias stats (collection)", stats),
        ("b. pyarrow.csv read of the runs", read),
        ("c. rankbias score (all runs)", score),
    ):
        rss = f"{'' if report['rss_exact'] else '≥'}{report['rss_mib']:.0f}"
        print(f"  {label:<36} {report['seconds']:8.2f} s   peak {rss:>6} MiB")
    ratio = score["seconds"] / budget
    print(
        f"  score / (stats + pyarrow read) = {ratio:.2f} (budget {BUDGET:g}; "
        f"{'within' if ratio <= BUDGET else 'OVER'}); {rows:,} rows written; load average "
        f"{os.getloadavg()[0]:.1f} at the end"
    )
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
