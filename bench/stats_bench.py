"""Per-document statistics and scoring speed: ``rankbias stats`` against a per-document loop.

Run: ``python bench/stats_bench.py`` (or through ``bench/run.py``, which calls :func:`main`).

1. Generates (once, seeded) a collection of 500,000 passages of about 60 words — a Zipfian
   vocabulary of pseudo-words, capitals, punctuation and the project's gendered terms — into
   ``bench/out/`` (ignored by git), plus a 100,000-passage prefix.
2. Times, in the same run and over the same file, the ``rankbias stats`` command (streamed,
   all cores, writing Parquet) and a straightforward per-document ``collections.Counter`` loop
   (the released code's approach, with the same tokeniser, writing a TSV), checks that both
   give the same numbers, and prints documents per second for both and the ratio; then the
   same for the released script's own loop (split on single spaces, ``np.sum`` per document)
   against ``rankbias stats --tokenizer whitespace``.  CPU seconds are printed too: on a busy
   machine the wall-clock speed-up of two worker processes shrinks.
3. Prints the peak resident memory of the command (its process and its largest worker) on the
   100k prefix and on the full file: it should not grow with the collection.
4. Times scoring 10 generated runs × 2,000 queries × top-1,000 for every registered metric at
   cutoffs 5, 10, 20 (background: the whole collection).
"""

from __future__ import annotations

import argparse
import json
import os
import re
import subprocess
import sys
import time
from collections import Counter
from pathlib import Path

import numpy as np
import pandas as pd

from rankbias.lexicon import default_lexicon
from rankbias.metrics.registry import METRICS
from rankbias.runs import Run
from rankbias.scoring import score_runs
from rankbias.text import read_collection_stats

HERE = Path(__file__).resolve().parent
OUT = HERE / "out"
SEED = 20240917
TOKEN = re.compile(r"[^\W_]+")


def generate_collection(path: Path, n_docs: int, words: int, seed: int = SEED) -> None:
    """Write ``n_docs`` passages of about ``words`` words each, ``d<i><TAB>text`` per line."""
    rng = np.random.default_rng(seed)
    letters = np.array(list("abcdefghijklmnopqrstuvwxyz"))
    vocab_size = 30_000
    lengths = rng.integers(2, 11, vocab_size)
    vocab = np.array(["".join(rng.choice(letters, n)) for n in lengths], dtype=object)
    zipf = 1.0 / np.arange(1, vocab_size + 1)
    zipf /= zipf.sum()
    terms = np.array(default_lexicon().terms, dtype=object)
    decorated = np.concatenate([terms, [t.capitalize() for t in terms], [t + "," for t in terms]])
    block = 20_000
    with open(path, "w", encoding="utf-8") as handle:
        for start in range(0, n_docs, block):
            n = min(block, n_docs - start)
            width = words + 3  # passages have words-3 .. words+3 words
            picks = vocab[rng.choice(vocab_size, size=(n, width), p=zipf)]
            gendered = rng.random((n, width)) < 0.03
            picks[gendered] = decorated[rng.integers(0, len(decorated), gendered.sum())]
            capital = rng.random((n, width)) < 0.05
            picks[capital] = [w.capitalize() for w in picks[capital]]
            stop = rng.random((n, width)) < 0.06
            picks[stop] = [w + "." for w in picks[stop]]
            keep = words - 3 + rng.integers(0, 7, n)
            lines = [f"d{start + i}\t{' '.join(row[: keep[i]])}\n" for i, row in enumerate(picks)]
            handle.writelines(lines)


def counter_loop(path: Path, out: Path) -> tuple[float, float, pd.DataFrame]:
    """The straightforward per-document loop; returns (seconds, CPU seconds, its table)."""
    lexicon = default_lexicon()
    group_sets = {g: set(lexicon.terms_of(g)) for g in lexicon.groups}
    started = time.perf_counter()
    cpu_started = time.process_time()
    rows = []
    with open(path, encoding="utf-8") as handle, open(out, "w", encoding="utf-8") as sink:
        for line in handle:
            docid, text = line.rstrip("\n").split("\t", 1)
            tokens = TOKEN.findall(text.rstrip().lower())
            counts = Counter(tokens)
            magnitudes = {g: 0 for g in group_sets}
            for word, count in counts.items():
                for group, words in group_sets.items():
                    if word in words:
                        magnitudes[group] += count
            rows.append((docid, len(tokens), magnitudes["f"], magnitudes["m"]))
            sink.write(f"{docid}\t{len(tokens)}\t{magnitudes['f']}\t{magnitudes['m']}\n")
    seconds = time.perf_counter() - started
    cpu = time.process_time() - cpu_started
    return seconds, cpu, pd.DataFrame(rows, columns=["docid", "length", "f", "m"])


_CHILD = """
import json, resource, sys, time
import pyarrow.parquet
from rankbias.cli import build_parser, main
build_parser()  # import every command module before the clock starts
started = time.perf_counter()
code = main(sys.argv[1:])
seconds = time.perf_counter() - started
own = resource.getrusage(resource.RUSAGE_SELF)
kids = resource.getrusage(resource.RUSAGE_CHILDREN)
cpu = own.ru_utime + own.ru_stime + kids.ru_utime + kids.ru_stime
print(json.dumps({"code": code, "seconds": seconds, "main_kb": own.ru_maxrss,
                  "worker_kb": kids.ru_maxrss, "cpu_seconds": cpu}))
"""


def released_style_loop(path: Path, out: Path) -> tuple[float, float]:
    """The released script's loop (CPJKU ``calculate_collection_docneutrality.py``): split on
    single spaces, ``Counter``, per-group membership, ``np.sum``, one output line per document."""
    lexicon = default_lexicon()
    words = {g: set(lexicon.terms_of(g)) for g in lexicon.groups}
    portion = {g: 1 / len(words) for g in words}
    started = time.perf_counter()
    cpu_started = time.process_time()
    with open(path, encoding="utf-8") as handle, open(out, "w", encoding="utf-8") as sink:
        for line in handle:
            vals = line.strip().split("\t")
            tokens = vals[1].lower().split(" ")
            counts = Counter(tokens)
            magnitudes = {g: 0 for g in words}
            for word in counts:
                for group in words:
                    if word in words[group]:
                        magnitudes[group] += counts[word]
            total = np.sum(list(magnitudes.values()))
            neutrality = 1
            if total > 1:
                for group in words:
                    neutrality -= np.abs(magnitudes[group] / float(total) - portion[group])
            sink.write(f"{vals[0]}\t{neutrality:f}\n")
    return time.perf_counter() - started, time.process_time() - cpu_started


def run_stats_command(
    collection: Path, out: Path, workers: int, tokenizer: str = "default"
) -> dict:
    """``rankbias stats`` in a fresh process, so its peak memory is its own."""
    argv = ["stats", "--collection", str(collection), "--terms", "default", "--out", str(out)]
    argv += ["--workers", str(workers), "--tokenizer", tokenizer]
    started = time.perf_counter()
    done = subprocess.run(
        [sys.executable, "-c", _CHILD, *argv], capture_output=True, text=True, check=False
    )
    wall = time.perf_counter() - started
    if done.returncode != 0:
        raise RuntimeError(f"rankbias stats failed:\n{done.stderr}")
    report = json.loads(done.stdout.strip().splitlines()[-1])
    report["wall_with_startup"] = wall
    return report


def _burn(_: int) -> float:
    started = time.perf_counter()
    total = 0
    for i in range(3_000_000):
        total += i * i
    return time.perf_counter() - started


def parallel_capacity(workers: int) -> float:
    """How many cores this process can use right now: ``workers`` copies of a CPU-bound task
    run at once, compared with one copy alone (2.0 on an idle two-core machine)."""
    import multiprocessing

    alone = _burn(0)
    context = multiprocessing.get_context("fork")  # fork: the task is not pickled
    processes = [context.Process(target=_burn, args=(i,)) for i in range(workers)]
    started = time.perf_counter()
    for process in processes:
        process.start()
    for process in processes:
        process.join()
    together = time.perf_counter() - started
    return workers * alone / together


def generate_runs(docids: np.ndarray, n_runs: int, n_queries: int, depth: int) -> list[Run]:
    rng = np.random.default_rng(SEED + 1)
    qids = np.array([f"q{i:05d}" for i in range(n_queries)], dtype=object)
    offsets = np.arange(0, (n_queries + 1) * depth, depth, dtype=np.int64)
    runs = []
    for r in range(n_runs):
        rows = np.concatenate([rng.choice(len(docids), depth, replace=False) for _ in qids])
        scores = np.tile(np.arange(depth, 0, -1, dtype=np.float64), n_queries)
        runs.append(Run(f"system{r}", qids, offsets, docids[rows], scores))
    return runs


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--docs", type=int, default=500_000)
    parser.add_argument("--words", type=int, default=60)
    parser.add_argument("--workers", type=int, default=os.cpu_count() or 1)
    parser.add_argument("--runs", type=int, default=10)
    parser.add_argument("--queries", type=int, default=2_000)
    parser.add_argument("--depth", type=int, default=1_000)
    args = parser.parse_args(argv or [])
    OUT.mkdir(parents=True, exist_ok=True)
    full = OUT / f"collection_{args.docs}x{args.words}_seed{SEED}.tsv"
    small_n = max(1, args.docs // 5)
    small = OUT / f"collection_{small_n}x{args.words}_seed{SEED}.tsv"
    if not full.exists():
        started = time.perf_counter()
        partial = full.with_suffix(".partial")
        generate_collection(partial, args.docs, args.words)
        partial.rename(full)
        print(f"generated {full.name} in {time.perf_counter() - started:.1f} s")
    if not small.exists():
        with open(full, encoding="utf-8") as src, open(small, "w", encoding="utf-8") as dst:
            for i, line in enumerate(src):
                if i == small_n:
                    break
                dst.write(line)
    size_mb = full.stat().st_size / 2**20
    print(f"collection: {args.docs:,} passages, {size_mb:.0f} MiB; {args.workers} worker(s)")
    print(
        f"usable cores right now: {parallel_capacity(args.workers):.1f} of {args.workers} "
        "(other load on the machine lowers it, and with it the speed-up below)"
    )

    # 1. the command vs the loop, same file, same run
    loop_seconds, loop_cpu, loop_table = counter_loop(full, OUT / "counter_loop.tsv")
    command = run_stats_command(full, OUT / "stats.parquet", args.workers)
    ours = pd.read_parquet(OUT / "stats.parquet")
    same = ours["docid"].tolist() == loop_table["docid"].tolist() and np.array_equal(
        ours[["length", "f", "m"]].to_numpy(), loop_table[["length", "f", "m"]]
    )
    loop_rate = args.docs / loop_seconds
    ours_rate = args.docs / command["seconds"]
    print(f"Counter loop        : {loop_seconds:7.2f} s  {loop_rate:12,.0f} docs/s")
    print(
        f"rankbias stats      : {command['seconds']:7.2f} s  {ours_rate:12,.0f} docs/s "
        f"(process incl. interpreter start: {command['wall_with_startup']:.2f} s)"
    )
    print(f"ratio               : {ours_rate / loop_rate:7.1f}x   identical results: {same}")
    print(
        f"CPU seconds         : loop {loop_cpu:.2f}, rankbias stats {command['cpu_seconds']:.2f} "
        f"(all processes; ratio {loop_cpu / command['cpu_seconds']:.1f}x); load average now "
        f"{os.getloadavg()[0]:.1f} on {os.cpu_count()} cores (a busy machine lowers the parallel "
        "speed-up)"
    )

    # 1b. the released script's loop (whitespace tokeniser) vs the command with that tokeniser
    released_seconds, released_cpu = released_style_loop(full, OUT / "released_loop.tsv")
    white = run_stats_command(full, OUT / "stats_whitespace.parquet", args.workers, "whitespace")
    released_rate = args.docs / released_seconds
    white_rate = args.docs / white["seconds"]
    print(f"released-style loop : {released_seconds:7.2f} s  {released_rate:12,.0f} docs/s")
    print(f"stats --tokenizer whitespace: {white['seconds']:.2f} s  {white_rate:,.0f} docs/s")
    print(
        f"ratio (whitespace)  : {white_rate / released_rate:7.1f}x   CPU seconds: loop "
        f"{released_cpu:.2f}, rankbias stats {white['cpu_seconds']:.2f}"
    )

    # 2. peak memory against collection size
    small_report = run_stats_command(small, OUT / "stats_small.parquet", args.workers)
    for label, report in ((f"{small_n:,} docs", small_report), (f"{args.docs:,} docs", command)):
        print(
            f"peak RSS, {label:>12}: main {report['main_kb'] / 1024:6.0f} MiB, "
            f"largest worker {report['worker_kb'] / 1024:6.0f} MiB"
        )

    # 3. scoring
    started = time.perf_counter()
    stats = read_collection_stats(full, default_lexicon(), per_term=True, workers=args.workers)
    print(
        "collection stats with per-term counts (for tf_paper): "
        f"{time.perf_counter() - started:.2f} s"
    )
    runs = generate_runs(stats.docids, args.runs, args.queries, args.depth)
    metrics = list(METRICS)
    started = time.perf_counter()
    frame = score_runs(runs, stats, metrics, cutoffs=(5, 10, 20), background="collection")
    seconds = time.perf_counter() - started
    print(
        f"scoring {args.runs} runs x {args.queries:,} queries x top-{args.depth:,}, "
        f"{len(metrics)} metrics x 3 cutoffs: {seconds:.2f} s ({len(frame):,} values)"
    )
    return 0 if same else 1


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
