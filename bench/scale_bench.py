"""Whole-command throughput of ``rankbias stats``: local engine, Dask engine, ``awk``.

Run: ``python bench/scale_bench.py [--docs N]`` (or through ``bench/run.py``).

1. Generates (once, seeded) ``--docs`` passages of about 85 words into ``bench/out/`` (ignored
   by git): a Zipfian vocabulary of pseudo-words with 3 % of words drawn from the word list —
   the 326-term list of NFaiRR (``wordlist_gender_representative.txt`` of the public CPJKU
   release) when ``../shared/data/public`` holds it, else the packaged default list.
2. Times, one after the other on the same file, each as a fresh process (interpreter start,
   imports and cluster start included): ``rankbias stats`` with the local engine and
   ``--workers 1`` and ``2``; with ``--engine dask`` on a LocalCluster of 1 and 2 worker
   processes; the released per-document loop (CPJKU ``calculate_collection_docneutrality.py``,
   as in ``stats_bench``); and ``awk '{n+=NF} END{print n}'``, which only splits every line into
   words.  The engines are also timed on a one-line file, which measures their start-up alone.
3. Prints seconds, documents/s and MB/s (1 MB = 10^6 bytes of the file), the CPU seconds of
   all the command's processes (less sensitive than wall time to other load), the peak resident
   memory of the largest process and (sampled every 0.1 s) of the whole process tree, and
   checks that both engines wrote the same table.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import time
from pathlib import Path

import numpy as np
import pandas as pd

HERE = Path(__file__).resolve().parent
REPO = HERE.parent
OUT = HERE / "out"
SEED = 20251123
WORD_LIST = "cpjku_fairness_retrieval_results/wordlist_gender_representative.txt"

# Runs one command, prints its wall time and the peak RSS of its largest process (getrusage of
# the waited-for descendants) and of the whole process tree (psutil, sampled every 0.1 s).
_MEASURE = """
import json, resource, subprocess, sys, time
try:
    import psutil
except ModuleNotFoundError:
    psutil = None
started = time.perf_counter()
child = subprocess.Popen(sys.argv[1:], stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
tree_peak = 0
while child.poll() is None:
    if psutil is not None:
        try:
            root = psutil.Process(child.pid)
            procs = [root] + root.children(recursive=True)
            total = 0
            for p in procs:
                try:
                    total += p.memory_info().rss
                except psutil.Error:
                    pass
            tree_peak = max(tree_peak, total)
        except psutil.Error:
            pass
    try:  # returns as soon as the command ends: the time is not rounded up to the 0.1 s polls
        child.wait(timeout=0.1)
    except subprocess.TimeoutExpired:
        pass
seconds = time.perf_counter() - started
err = child.stderr.read().decode()
kids = resource.getrusage(resource.RUSAGE_CHILDREN)
print(json.dumps({"code": child.returncode, "seconds": seconds, "largest_kb": kids.ru_maxrss,
                  "tree_bytes": tree_peak, "cpu": kids.ru_utime + kids.ru_stime,
                  "stderr": err[-2000:]}))
"""


def word_list() -> tuple[Path, str]:
    """The 326-term NFaiRR list when the public data is present, else the packaged list."""
    for shared in (REPO.parent / "shared", REPO.parents[1] / "shared"):
        path = shared / "data/public" / WORD_LIST
        if path.exists():
            return path, "NFaiRR's 326-term list"
    from rankbias.lexicon import default_lexicon

    path = OUT / "default_terms.csv"
    lexicon = default_lexicon()
    groups = [lexicon.groups[g] for g in lexicon.group_index()]
    path.write_text("".join(f"{t},{g}\n" for t, g in zip(lexicon.terms, groups, strict=True)))
    return path, f"the packaged default list ({len(lexicon.terms)} terms)"


def generate_collection(path: Path, n_docs: int, words: int, terms: list[str]) -> None:
    """``n_docs`` passages of ``words - 3 .. words + 3`` words, ``p<i><TAB>text`` per line."""
    rng = np.random.default_rng(SEED)
    letters = np.array(list("abcdefghijklmnopqrstuvwxyz"))
    vocab_size = 30_000
    vocab = np.array(
        ["".join(rng.choice(letters, n)) for n in rng.integers(2, 11, vocab_size)], dtype=object
    )
    zipf = 1.0 / np.arange(1, vocab_size + 1)
    zipf /= zipf.sum()
    decorated = np.array(terms + [t.capitalize() for t in terms] + [t + "," for t in terms])
    block = 20_000
    partial = path.with_suffix(".partial")
    with open(partial, "w", encoding="utf-8") as handle:
        for start in range(0, n_docs, block):
            n = min(block, n_docs - start)
            width = words + 3
            picks = vocab[rng.choice(vocab_size, size=(n, width), p=zipf)]
            gendered = rng.random((n, width)) < 0.03
            picks[gendered] = decorated[rng.integers(0, len(decorated), gendered.sum())]
            stop = rng.random((n, width)) < 0.06
            picks[stop] = [w + "." for w in picks[stop]]
            keep = words - 3 + rng.integers(0, 7, n)
            handle.writelines(
                f"p{start + i}\t{' '.join(row[: keep[i]])}\n" for i, row in enumerate(picks)
            )
    partial.rename(path)


def measure(command: list[str]) -> dict:
    done = subprocess.run(
        [sys.executable, "-c", _MEASURE, *command], capture_output=True, text=True, check=False
    )
    if done.returncode != 0:
        raise RuntimeError(f"measuring {command} failed:\n{done.stderr}")
    report = json.loads(done.stdout.strip().splitlines()[-1])
    if report["code"] != 0:
        raise RuntimeError(f"{' '.join(command)} failed:\n{report['stderr']}")
    return report


def rankbias(*args: str) -> list[str]:
    return [sys.executable, "-m", "rankbias.cli", *args]


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--docs", type=int, default=300_000)
    parser.add_argument("--words", type=int, default=85)
    args = parser.parse_args(argv or [])
    OUT.mkdir(parents=True, exist_ok=True)
    terms_path, terms_label = word_list()
    terms = [
        line.split(",")[0].strip().lower()
        for line in terms_path.read_text().splitlines()
        if line.strip()
    ]
    collection = OUT / f"scale_{args.docs}x{args.words}_{len(terms)}terms_seed{SEED}.tsv"
    if not collection.exists():
        started = time.perf_counter()
        generate_collection(collection, args.docs, args.words, terms)
        print(f"generated {collection.name} in {time.perf_counter() - started:.1f} s")
    one_line = OUT / "one_line.tsv"
    one_line.write_text("p0\tthe queen spoke\n")
    size = collection.stat().st_size
    print(
        f"collection: {args.docs:,} passages of ~{args.words} words, {size / 1e6:.0f} MB; "
        f"word list: {terms_label}; {os.cpu_count()} cores; load average "
        f"{os.getloadavg()[0]:.1f} before the first command"
    )

    def stats(source: Path, out: str, *extra: str) -> list[str]:
        common = ["stats", "--collection", str(source), "--terms", str(terms_path)]
        return rankbias(*common, "--out", str(OUT / out), *extra)

    cases = [
        ("rankbias stats, local, --workers 1", ["--workers", "1"]),
        ("rankbias stats, local, --workers 2", ["--workers", "2"]),
        ("rankbias stats, dask, 1 worker", ["--engine", "dask", "--workers", "1"]),
        ("rankbias stats, dask, 2 workers", ["--engine", "dask", "--workers", "2"]),
    ]
    rows = []
    for label, extra in cases:
        startup = measure(stats(one_line, "one_line.parquet", *extra))
        report = measure(stats(collection, f"scale_{len(rows)}.parquet", *extra))
        rows.append((label, report, startup["seconds"]))
    released = measure(
        [
            sys.executable,
            str(HERE / "released_style_docneutrality.py"),
            str(collection),
            str(terms_path),
            str(OUT / "released.tsv"),
        ]
    )
    rows.append(("released-style loop, re-implemented", released, None))
    awk = measure(["awk", "{n+=NF} END{print n}", str(collection)])
    rows.append(("awk '{n+=NF} END{print n}'", awk, None))

    print(
        f"\n{'command':38} {'seconds':>8} {'docs/s':>10} {'MB/s':>7} {'start-up s':>10} "
        f"{'docs/s w/o start-up':>19} {'CPU s':>6} {'largest RSS MiB':>15} {'tree RSS MiB':>12}"
    )
    for label, report, startup in rows:
        seconds = report["seconds"]
        net = (
            f"{args.docs / (seconds - startup):19,.0f}"
            if startup is not None and seconds > startup
            else f"{'':19}"
        )
        print(
            f"{label:38} {seconds:8.2f} {args.docs / seconds:10,.0f} {size / 1e6 / seconds:7.1f} "
            f"{'' if startup is None else f'{startup:.2f}':>10} {net} {report['cpu']:6.1f} "
            f"{report['largest_kb'] / 1024:15.0f} {report['tree_bytes'] / 2**20:12.0f}"
        )
    tables = [pd.read_parquet(OUT / f"scale_{i}.parquet") for i in range(len(cases))]
    same = all(t.equals(tables[0]) for t in tables[1:])
    print(f"\nall four stats outputs identical: {same}; load average now {os.getloadavg()[0]:.1f}")
    return 0 if same else 1


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
