"""The whole book on a folder the size of MS MARCO's: time and peak memory per chapter.

Run: ``python bench/book_bench.py [--passages 8841823] [--words 60] [--keep-cache]`` (or
``make bench BENCH=book_bench``; ``make bench`` runs it last).

1. Generates once, seeded, into ``bench/out/`` (ignored by git) a collection of
   ``--passages`` passages of about ``--words`` words with MS MARCO's docids ``0 ..
   passages-1``: a Zipfian vocabulary of pseudo-words with capitals and punctuation, and the
   terms of the papers' two word lists as 3 % of the words. The text is synthetic (MS MARCO's
   is out of reach here); its size is MS MARCO's (8,841,823 passages, 3.1 GB).
2. Builds the dataset folder with ``rankbias data msmarco --collection <that file>``: the
   real queries (QS1, QS2), the ten released runs (215 queries x top-200, 425,480 lines) and
   the papers' word lists, from the public mirror (``../shared/data/public`` when present,
   else the pinned URLs). MS MARCO's dev judgements are out of reach too: generated ones stand
   in (one relevant passage per query, for half of QS2's queries one the BM25 run ranks), so
   that the effectiveness sections run as they would.
3. Builds the whole book on that folder as a user does (``make book DATA=<folder>``, i.e.
   ``book/_ext/build_book.py``) from nothing: no execution cache and no cached statistics
   (``--keep-cache`` keeps both, timing a rebuild). The build's log says when each chapter
   starts and ends; a sampler reads the resident memory of every process of the build
   (``/proc``, every 0.5 s) and keeps the peak per chapter. Prints seconds and peak memory
   per chapter, and the whole build against the budget (30 minutes, 8 GB), with ``wc -l`` over
   the collection as the physical reference of reading it once.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import shutil
import subprocess
import sys
import threading
import time
from pathlib import Path

import numpy as np

HERE = Path(__file__).resolve().parent
REPO = HERE.parent
OUT = HERE / "out"
SEED = 20261206
MSMARCO_PASSAGES = 8_841_823
PUBLIC_CANDIDATES = (REPO / "../shared/data/public", Path("/work/shared/data/public"))
BUDGET_SECONDS = 30 * 60
BUDGET_BYTES = 8 * 2**30


def testbed_words(testbed: Path) -> tuple[list[str], np.ndarray]:
    """The words of the embedded testbed's passages (English text extracted from a registry
    package, split at whitespace, capitals and punctuation kept) and their frequencies."""
    from collections import Counter

    counts: Counter = Counter()
    with open(testbed / "collection.tsv", encoding="utf-8") as handle:
        for line in handle:
            counts.update(line.rstrip("\n").split("\t", 1)[1].split())
    words = sorted(counts)
    return words, np.array([counts[w] for w in words], dtype=np.float64)


def generate_collection(path: Path, testbed: Path, n_docs: int, words: int) -> None:
    """``n_docs`` lines ``<i><TAB>text`` of ``words - 3 .. words + 3`` words each, drawn
    independently by their frequency in the testbed (so English words, of English lengths, the
    gendered terms among them as often as there), built as bytes by NumPy (1 GB in ~40 s)."""
    rng = np.random.default_rng(SEED)
    vocab, frequency = testbed_words(testbed)
    weights = frequency / frequency.sum()
    encoded = [(w + " ").encode() for w in vocab]
    lengths = np.array([len(w) for w in encoded], dtype=np.int64)
    starts = np.concatenate([[0], np.cumsum(lengths)[:-1]])
    flat = np.frombuffer(b"".join(encoded), dtype=np.uint8)
    block = 50_000
    with open(path, "wb") as handle:
        for first in range(0, n_docs, block):
            n = min(block, n_docs - first)
            count = words - 3 + rng.integers(0, 7, n)  # words-3 .. words+3 words
            ids = rng.choice(len(vocab), size=int(count.sum()), p=weights)
            heads = [f"{first + i}\t".encode() for i in range(n)]
            head_len = np.array([len(h) for h in heads], dtype=np.int64)
            head_flat = np.frombuffer(b"".join(heads), dtype=np.uint8)
            head_start = np.concatenate([[0], np.cumsum(head_len)[:-1]]) + len(flat)
            # tokens in order: each document's head, then its words
            doc_of_word = np.repeat(np.arange(n), count)
            position = np.arange(len(ids)) + doc_of_word + 1  # one head slot per document
            token_start = np.empty(len(ids) + n, dtype=np.int64)
            token_len = np.empty(len(ids) + n, dtype=np.int64)
            head_slot = np.concatenate([[0], np.cumsum(count + 1)[:-1]])
            token_start[head_slot], token_len[head_slot] = head_start, head_len
            token_start[position], token_len[position] = starts[ids], lengths[ids]
            source = np.concatenate([flat, head_flat])
            ends = np.cumsum(token_len)
            gather = np.repeat(token_start - (ends - token_len), token_len) + np.arange(ends[-1])
            text = source[gather]
            line_ends = ends[np.cumsum(count + 1) - 1] - 1
            text[line_ends] = ord("\n")  # the last word's space ends the line
            handle.write(text.tobytes())


def generated_qrels(path: Path, qids: list[str], bm25_run: Path, n_docs: int) -> None:
    """One relevant passage per query: for every other query the BM25 run ranks, one of its
    ranked passages (so that reciprocal ranks are not all zero), else any passage."""
    rng = np.random.default_rng(SEED + 1)
    ranked: dict[str, list[str]] = {}
    for line in bm25_run.read_text("utf-8").splitlines():
        qid, _, docid, *_ = line.split()
        ranked.setdefault(qid, []).append(docid)
    with open(path, "w", encoding="utf-8") as handle:
        for i, qid in enumerate(dict.fromkeys(qids)):
            if qid in ranked and i % 2 == 0:
                docid = ranked[qid][int(rng.integers(0, len(ranked[qid])))]
            else:
                docid = str(int(rng.integers(0, n_docs)))
            handle.write(f"{qid} 0 {docid} 1\n")


def testbed_dir() -> Path:
    """The embedded testbed (``make data``; ``make bench`` builds it first)."""
    testbed = Path(os.environ.get("RANKBIAS_TESTBED") or REPO / "data/build/wikisample")
    if not (testbed / "collection.tsv").is_file():
        raise SystemExit(f"book_bench: {testbed}/collection.tsv: absent; run `make data` first")
    return testbed


def build_folder(args, public: Path | None) -> Path:
    collection = OUT / f"msmarco-size-collection_{args.passages}x{args.words}_seed{SEED}.tsv"
    if not collection.exists():
        started = time.perf_counter()
        partial = collection.with_suffix(".partial")
        generate_collection(partial, testbed_dir(), args.passages, args.words)
        partial.rename(collection)
        print(f"generated {collection.name} in {time.perf_counter() - started:.0f} s", flush=True)
    folder = OUT / "msmarco-size"
    qrels = OUT / f"msmarco-size-qrels_seed{SEED}.txt"
    if not (folder / "dataset.toml").exists() or not qrels.exists():
        from rankbias.data.msmarco import QS1, QS2, public_files
        from rankbias.data.public import read_gender_annotated_queries, read_query_tsv

        files = public_files(OUT / "msmarco-mirror", str(public) if public else None, print)
        qids = [
            *read_gender_annotated_queries(files[QS1])["qid"],
            *read_query_tsv(files[QS2])["qid"],
        ]
        bm25 = files["cpjku/runs/msmarco_passage/BM25.run"]
        generated_qrels(qrels, qids, bm25, args.passages)
        argv = [sys.executable, "-m", "rankbias.cli", "data", "msmarco", "--out", str(folder),
                "--collection", str(collection), "--qrels", str(qrels)]  # fmt: skip
        if public:
            argv += ["--mirror", str(public)]
        subprocess.run(argv, check=True)
    return folder


# ---- memory of a process tree ----------------------------------------------------------------
PAGE = os.sysconf("SC_PAGE_SIZE")


def tree_rss(root: int) -> int:
    """Resident bytes of ``root`` and all its descendants (``/proc/<pid>/task/*/children``)."""
    total, todo = 0, [root]
    while todo:
        pid = todo.pop()
        try:
            with open(f"/proc/{pid}/statm", "rb") as handle:
                total += int(handle.read().split()[1]) * PAGE
            for task in os.listdir(f"/proc/{pid}/task"):
                with open(f"/proc/{pid}/task/{task}/children", "rb") as handle:
                    todo += [int(child) for child in handle.read().split()]
        except OSError:  # the process has ended meanwhile
            continue
    return total


CHAPTER = re.compile(r"(notebooks/\d\d_[\w-]+)\.md: Executing notebook")
EXECUTED = re.compile(r"Executed notebook in ([\d.]+) seconds")


def build_book(folder: Path, keep_cache: bool) -> dict:
    """``make book DATA=folder`` as one process tree; seconds and peak memory per chapter."""
    if not keep_cache:
        shutil.rmtree(folder / "cache", ignore_errors=True)
        shutil.rmtree(REPO / "_build" / folder.name, ignore_errors=True)
    argv = [sys.executable, str(REPO / "book" / "_ext" / "build_book.py"), str(folder)]
    started = time.perf_counter()
    process = subprocess.Popen(
        argv, cwd=REPO, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, bufsize=1
    )
    state = {"chapter": "(set-up and reading the pages)", "peak": {}, "done": False}

    def sample() -> None:
        while not state["done"]:
            rss = tree_rss(process.pid)
            chapter = state["chapter"]
            state["peak"][chapter] = max(state["peak"].get(chapter, 0), rss)
            time.sleep(0.5)

    sampler = threading.Thread(target=sample, daemon=True)
    sampler.start()
    rows: dict[str, dict] = {}
    log = []
    for line in process.stdout:
        log.append(line)
        if found := CHAPTER.search(line):
            state["chapter"] = found.group(1).split("/")[-1]
            rows[state["chapter"]] = {"started": time.perf_counter() - started}
        elif (found := EXECUTED.search(line)) and state["chapter"] in rows:
            chapter, seconds = state["chapter"], float(found.group(1))
            rows[chapter]["seconds"] = seconds
            state["chapter"] = "(writing the pages)"
            peak = state["peak"].get(chapter, 0) / 2**30
            print(f"  … {chapter}: {seconds:.1f} s, peak {peak:.2f} GB", flush=True)
    status = process.wait()
    state["done"] = True
    sampler.join()
    total = time.perf_counter() - started
    if status != 0:
        sys.stdout.writelines(log[-60:])
        raise SystemExit(f"book_bench: the build failed ({status})")
    for chapter, row in rows.items():
        row["peak_bytes"] = state["peak"].get(chapter, 0)
    return {
        "chapters": rows,
        "other": {k: v for k, v in state["peak"].items() if k not in rows},
        "seconds": total,
        "peak_bytes": max(state["peak"].values()),
    }


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--passages", type=int, default=MSMARCO_PASSAGES)
    parser.add_argument("--words", type=int, default=60)
    parser.add_argument("--keep-cache", action="store_true", help="time a rebuild")
    args = parser.parse_args(argv or [])
    OUT.mkdir(parents=True, exist_ok=True)
    public = next((p.resolve() for p in PUBLIC_CANDIDATES if p.is_dir()), None)
    folder = build_folder(args, public)
    collection = (folder / "collection.tsv").resolve()
    size = collection.stat().st_size
    started = time.perf_counter()
    subprocess.run(["wc", "-l", str(collection)], check=True, stdout=subprocess.DEVNULL)
    wc = time.perf_counter() - started
    print(
        f"{folder}: {args.passages:,} passages ({size / 1e9:.2f} GB), the ten released runs; "
        f"{os.cpu_count()} cores, load average {os.getloadavg()[0]:.1f} at the start; "
        f"`wc -l` over the collection: {wc:.1f} s",
        flush=True,
    )
    result = build_book(folder, args.keep_cache)
    print(f"\n  {'chapter':<28} {'seconds':>9} {'peak memory':>12}")
    for chapter, row in result["chapters"].items():
        seconds = row.get("seconds", float("nan"))
        print(f"  {chapter:<28} {seconds:9.1f} {row['peak_bytes'] / 2**30:9.2f} GB")
    for phase, peak in result["other"].items():
        print(f"  {phase:<28} {'':>9} {peak / 2**30:9.2f} GB")
    minutes, gb = result["seconds"] / 60, result["peak_bytes"] / 2**30
    verdict = (
        "within"
        if result["seconds"] <= BUDGET_SECONDS and result["peak_bytes"] <= BUDGET_BYTES
        else "OVER"
    )
    print(
        f"  {'whole build (make book DATA=)':<28} {result['seconds']:9.1f} {gb:9.2f} GB\n"
        f"  {minutes:.1f} min, peak {gb:.2f} GB: {verdict} the budget of 30 min and 8 GB; "
        f"{result['seconds'] / wc:.0f}x `wc -l`; load average {os.getloadavg()[0]:.1f} at the end"
    )
    record = OUT / "book_bench.json"
    record.write_text(json.dumps({"passages": args.passages, **result}, indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
