"""``rankbias stats`` against the released per-document loop, ``awk`` and itself, whole processes.

Run: ``python bench/stats_bench.py [--sizes 300000,1200000] [--terms WORDLIST]`` (or through
``bench/run.py``, which calls :func:`main`).

1. Generates (once, seeded) passages of about 85 words — a Zipfian vocabulary of pseudo-words,
   capitals, punctuation and the word list's terms (3 % of the words) — into ``bench/out/``
   (ignored by git); the smaller sizes are prefixes of the largest file.
2. For every size, times in the same run and over the same file, each as a whole process
   (interpreter start-up, imports and output writing included), and prints seconds,
   documents/s, MB/s, the ratio to the released loop and the peak resident memory:

   a. the released script ``calculate_collection_docneutrality.py`` (CPJKU
      FairnessRetrievalResults) when ``RANKBIAS_RELEASED_SCRIPT`` names it, run with the
      arguments of ``RANKBIAS_RELEASED_ARGS`` (a template with ``{collection}``,
      ``{wordlist}`` and ``{out}``); otherwise the *released-style loop, re-implemented*
      (``bench/released_style_docneutrality.py``: our re-implementation of its per-document
      loop, not the script itself);
   b. ``awk '{n+=NF} END{print n}'`` — splitting every line into words, the physical
      reference;
   c. ``rankbias stats --out x.parquet`` with the default tokeniser on all cores, on one core,
      and with ``--tokenizer whitespace`` (whose neutralities must equal the released-style
      loop's, which is checked);
   d. at the first size, ``rankbias stats`` with an empty kernel cache (the first run after
      installing: it compiles the scanner).
3. With ``--scoring``: scoring 10 generated runs × 2,000 queries × top-1,000 for every
   registered metric at cutoffs 5, 10, 20 (in-memory part only).

The machine's load is printed: other processes (on a shared machine) slow every figure down,
and the parallel ones most.
"""

from __future__ import annotations

import argparse
import os
import shlex
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

HERE = Path(__file__).resolve().parent
REPO = HERE.parent
OUT = HERE / "out"
SEED = 20240917
WORDLIST_NAME = "wordlist_gender_representative.txt"
WORDLIST_CANDIDATES = (
    REPO / "../shared/data/public/cpjku_fairness_retrieval_results" / WORDLIST_NAME,
    Path("/work/shared/data/public/cpjku_fairness_retrieval_results") / WORDLIST_NAME,
)


def find_wordlist() -> Path:
    for candidate in WORDLIST_CANDIDATES:
        if candidate.exists():
            return candidate.resolve()
    raise SystemExit(
        f"the word list {WORDLIST_NAME} is not in ../shared/data/public; pass --terms PATH"
    )


def generate_collection(path: Path, terms: list[str], n_docs: int, words: int) -> None:
    """Write ``n_docs`` passages of about ``words`` words each, ``d<i><TAB>text`` per line."""
    rng = np.random.default_rng(SEED)
    letters = np.array(list("abcdefghijklmnopqrstuvwxyz"))
    vocab_size = 30_000
    lengths = rng.integers(2, 11, vocab_size)
    vocab = np.array(["".join(rng.choice(letters, n)) for n in lengths], dtype=object)
    zipf = 1.0 / np.arange(1, vocab_size + 1)
    zipf /= zipf.sum()
    terms = np.array(terms, dtype=object)
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


def collections(sizes: list[int], terms: Path, words: int) -> dict[int, Path]:
    """The generated files, the smaller ones as prefixes of the largest."""
    OUT.mkdir(parents=True, exist_ok=True)
    largest = max(sizes)
    files = {n: OUT / f"collection_{n}x{words}_{terms.stem}_seed{SEED}.tsv" for n in sizes}
    if not files[largest].exists():
        from rankbias.lexicon import read_lexicon

        started = time.perf_counter()
        partial = files[largest].with_suffix(".partial")
        generate_collection(partial, list(read_lexicon(terms).terms), largest, words)
        partial.rename(files[largest])
        print(f"generated {files[largest].name} in {time.perf_counter() - started:.0f} s")
    for n, path in files.items():
        if not path.exists():
            partial = path.with_suffix(".partial")
            with open(files[largest], "rb") as src, open(partial, "wb") as dst:
                for i, line in enumerate(src):
                    if i == n:
                        break
                    dst.write(line)
            partial.rename(path)
    return files


GNU_TIME = Path("/usr/bin/time")


def timed(argv: list[str], env: dict | None = None, stdout=None) -> dict:
    """Run a whole process; wall seconds, its own peak RSS (MiB), exit status.

    The peak RSS comes from GNU ``time`` (``%M``) when it is installed: a child of this
    process would otherwise inherit this process's high-water mark (Linux keeps it across
    ``exec``).  Without GNU ``time`` the figure is ``os.wait4``'s, marked ``≥``.
    """
    exact_rss = GNU_TIME.exists()
    command = [str(GNU_TIME), "-f", "RSS_KB=%M CPU_S=%U %S", *argv] if exact_rss else argv
    started = time.perf_counter()
    sink = stdout if stdout is not None else subprocess.DEVNULL
    with tempfile.TemporaryFile() as errors:
        process = subprocess.Popen(command, stdout=sink, stderr=errors, env=env)
        _, status, usage = os.wait4(process.pid, 0)
        seconds = time.perf_counter() - started
        process.returncode = os.waitstatus_to_exitcode(status)
        errors.seek(0)
        message = errors.read().decode(errors="replace")
    if process.returncode != 0:
        raise RuntimeError(f"{shlex.join(argv)} failed ({process.returncode}):\n{message}")
    rss_kb, cpu = usage.ru_maxrss, usage.ru_utime + usage.ru_stime
    if exact_rss:
        rss_kb = int(message.rsplit("RSS_KB=", 1)[1].split()[0])
        cpu = sum(float(x) for x in message.rsplit("CPU_S=", 1)[1].split()[:2])
    return {"seconds": seconds, "rss_mib": rss_kb / 1024, "rss_exact": exact_rss, "cpu": cpu}


def machine() -> str:
    """The processor, Python and NumPy: the released loop's speed is the interpreter's (on
    2026-11-23 the same loop over the same file took 39.2 s, on 2026-12-06 27.1-29.2 s)."""
    import platform

    model = "unknown processor"
    try:
        with open("/proc/cpuinfo", encoding="utf-8") as handle:
            model = next(line.split(":", 1)[1].strip() for line in handle if "model name" in line)
    except (OSError, StopIteration):
        pass
    return f"{model}; Python {platform.python_version()}, NumPy {np.__version__}"


def _own_rss_mib() -> float:
    import resource

    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def stats_argv(collection: Path, terms: Path, out: Path, workers: int, tokenizer: str):
    return [
        sys.executable, "-m", "rankbias.cli", "stats", "--collection", str(collection),
        "--terms", str(terms), "--out", str(out), "--workers", str(workers),
        "--tokenizer", tokenizer,
    ]  # fmt: skip


def released_argv(collection: Path, terms: Path, out: Path) -> tuple[list[str], str]:
    script = os.environ.get("RANKBIAS_RELEASED_SCRIPT")
    if script:
        template = os.environ.get(
            "RANKBIAS_RELEASED_ARGS", "{collection} {wordlist} {out}"
        )  # the released script's own argument order, if it differs, goes here
        args = shlex.split(template.format(collection=collection, wordlist=terms, out=out))
        return [sys.executable, script, *args], f"released script ({Path(script).name})"
    script = HERE / "released_style_docneutrality.py"
    return (
        [sys.executable, str(script), str(collection), str(terms), str(out)],
        "released-style loop, re-implemented",
    )


def same_neutrality(released_out: Path, ours: Path) -> bool | None:
    """Whether ``docid<TAB>neutrality`` lines equal our output (``None``: not comparable)."""
    import pyarrow.parquet as pq

    table = pq.read_table(ours, columns=["docid", "neutrality"])
    try:
        with open(released_out, encoding="utf-8") as handle:
            rows = [line.rstrip("\n").split("\t") for line in handle]
        docids = [r[0] for r in rows]
        values = [r[1] for r in rows]
    except (IndexError, UnicodeDecodeError):
        return None
    mine = [f"{v:f}" for v in table.column("neutrality").to_pylist()]
    return docids == table.column("docid").to_pylist() and values == mine


def row(label: str, report: dict, n_docs: int, size_mb: float, reference: float | None) -> str:
    seconds = report["seconds"]
    ratio = f"{reference / seconds:6.1f}x" if reference else "     - "
    rss = f"{'' if report['rss_exact'] else '≥'}{report['rss_mib']:7.0f}"
    return (
        f"  {label:<44} {seconds:8.2f} s {report['cpu']:7.2f} cpu-s {n_docs / seconds:11,.0f} "
        f"docs/s {size_mb / seconds:6.0f} MB/s {ratio}  {rss} MiB"
    )


def bench_size(n_docs: int, path: Path, terms: Path, workers: int, first: bool) -> None:
    size_mb = path.stat().st_size / 1e6
    print(f"\n{n_docs:,} passages, {size_mb:,.0f} MB ({path.name})")
    print(f"  {'':<44} {'wall':>10} {'CPU':>9} {'':>18} {'':>11} {'vs released':>7}  peak RSS*")
    work = Path(tempfile.mkdtemp(prefix="stats-bench-", dir=OUT))
    try:
        argv, released_label = released_argv(path, terms, work / "released.tsv")
        released = timed(argv)
        print(row(released_label, released, n_docs, size_mb, released["seconds"]), flush=True)
        with open(work / "awk.txt", "w") as sink:
            awk = timed(["awk", "{n+=NF} END{print n}", str(path)], stdout=sink)
        print(row("awk '{n+=NF} END{print n}'", awk, n_docs, size_mb, released["seconds"]))
        runs = [
            (f"rankbias stats, {workers} threads", workers, "default", None),
            ("rankbias stats, 1 thread", 1, "default", None),
            (f"rankbias stats --tokenizer whitespace, {workers}", workers, "whitespace", None),
        ]
        if first:
            runs.append(("rankbias stats, empty kernel cache", workers, "default", "cold"))
        results, results_seconds = {}, {}
        for label, n_workers, tokenizer, mode in runs:
            env = dict(os.environ)
            env["PYTHONPATH"] = os.pathsep.join([str(REPO / "src"), env.get("PYTHONPATH", "")])
            if mode == "cold":
                env["RANKBIAS_CACHE_DIR"] = str(work / "empty-cache")
            out = work / f"{tokenizer}-{n_workers}-{mode}.parquet"
            report = timed(stats_argv(path, terms, out, n_workers, tokenizer), env=env)
            results[(tokenizer, n_workers, mode)] = out
            results_seconds[(tokenizer, n_workers, mode)] = report["seconds"]
            print(row(label, report, n_docs, size_mb, released["seconds"]), flush=True)
        awk_words = int((work / "awk.txt").read_text().split()[0])
        ours = results_seconds[("default", workers, None)]
        print(
            f"  rankbias stats ({workers} threads) takes {ours / awk['seconds']:.2f}x awk's time "
            "(awk: a machine-neutral reference; the released loop's speed is the interpreter's)"
        )
        load = os.getloadavg()[0]
        print(
            f"  (awk counted {awk_words:,} fields; load average now {load:.1f} on "
            f"{os.cpu_count()} cores: other processes slow these figures down)\n"
            "  * peak RSS of each whole process (GNU time %M; '≥': from os.wait4, which counts "
            f"the ~{_own_rss_mib():.0f} MiB of this benchmark process too)"
        )
        same = same_neutrality(work / "released.tsv", results[("whitespace", workers, None)])
        verdict = {True: "identical", False: "DIFFERENT", None: "not comparable"}[same]
        print(f"  neutralities of --tokenizer whitespace vs the {released_label}: {verdict}")
    finally:
        shutil.rmtree(work, ignore_errors=True)


def bench_scoring(path: Path, terms: Path, workers: int, n_runs, n_queries, depth) -> None:
    from rankbias.collection import read_collection_stats
    from rankbias.lexicon import read_lexicon
    from rankbias.runs import Run
    from rankbias.scoring import parse_metric_list, score_runs

    stats = read_collection_stats(path, read_lexicon(terms), per_term=True, workers=workers)
    rng = np.random.default_rng(SEED + 1)
    qids = np.array([f"q{i:05d}" for i in range(n_queries)], dtype=object)
    offsets = np.arange(0, (n_queries + 1) * depth, depth, dtype=np.int64)
    runs = []
    for r in range(n_runs):
        rows = np.concatenate([rng.choice(len(stats), depth, replace=False) for _ in qids])
        scores = np.tile(np.arange(depth, 0, -1, dtype=np.float64), n_queries)
        runs.append(Run(f"system{r}", qids, offsets, stats.docids[rows], scores))
    measures = parse_metric_list("all")  # every term-based measure, every magnitude
    started = time.perf_counter()
    frame = score_runs(runs, stats, measures, cutoffs=(5, 10, 20), background="collection")
    print(
        f"\nscoring {n_runs} runs x {n_queries:,} queries x top-{depth:,}, {len(measures)} "
        f"metrics x 3 cutoffs (in memory): {time.perf_counter() - started:.2f} s "
        f"({len(frame):,} values)"
    )


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", default="300000,1200000")
    parser.add_argument("--words", type=int, default=85)
    parser.add_argument("--terms", type=Path, default=None, help="term,group word list")
    parser.add_argument("--workers", type=int, default=os.cpu_count() or 1)
    parser.add_argument("--scoring", action="store_true", help="also time scoring")
    parser.add_argument("--runs", type=int, default=10)
    parser.add_argument("--queries", type=int, default=2_000)
    parser.add_argument("--depth", type=int, default=1_000)
    args = parser.parse_args(argv or [])
    terms = (args.terms or find_wordlist()).resolve()
    sizes = sorted(int(s) for s in args.sizes.split(","))
    files = collections(sizes, terms, args.words)
    print(f"word list: {terms.name}; {os.cpu_count()} cores ({machine()}); load average "
          f"{os.getloadavg()[0]:.1f} at the start")  # fmt: skip
    for i, n_docs in enumerate(sizes):
        bench_size(n_docs, files[n_docs], terms, args.workers, first=i == 0)
    if args.scoring:
        bench_scoring(files[sizes[0]], terms, args.workers, args.runs, args.queries, args.depth)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
