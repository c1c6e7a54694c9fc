"""``rankbias stats`` on non-ASCII text against the same text in ASCII, and against ``awk``.

Run: ``python bench/unicode_bench.py [--docs N] [--repeats R]`` (or through ``bench/run.py``).

1. Generates (once, seeded) ``--docs`` passages of about 85 words as ``scale_bench`` does, then
   two variants of them into ``bench/out/`` (ignored by git): *non-ASCII*, with three words of
   real non-ASCII text inserted at random places in every passage (accents, a German ß, Greek
   and Cyrillic capitals, İ, curly quotes), and *ASCII*, the same passages with each of those
   words replaced by an ASCII word of the same number of bytes.  The word list is NFaiRR's
   326 terms (the packaged default list without the public data) plus five non-ASCII terms.
2. Times, ``--repeats`` times each and in the same run, whole processes (start-up included):
   ``rankbias stats`` on both files, and ``awk '{$0 = tolower($0); n += NF} END {print n}'``
   (a word count with lower-casing) on both, with the system's ``awk`` and, when installed,
   with GNU ``gawk`` in a UTF-8 locale (whose ``tolower`` lower-cases non-ASCII letters too,
   as ``rankbias`` does; ``mawk`` lower-cases ASCII only); prints the medians and the ratios.
3. Checks the non-ASCII file's table against a reference written here — ``re.findall(r"[^\\W_]+",
   text.rstrip().lower())`` and a ``Counter`` — on a seeded sample of 2,000 passages.
"""

from __future__ import annotations

import argparse
import os
import re
import shutil
import statistics
import subprocess
import sys
import time
from collections import Counter
from pathlib import Path

import numpy as np

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
import scale_bench  # noqa: E402  (a sibling module of the benchmarks)

OUT = HERE / "out"
SEED = 20261126
NON_ASCII_WORDS = (
    "Ärztin", "señora", "Bräutigam", "ΚΌΡΗΣ", "женщина", "İstanbul", "café", "naïve",
    "Müller", "déjà", "Straße", "“said”", "Ελένη", "Жуков", "garçon", "ﬁancée",
)  # fmt: skip
NON_ASCII_TERMS = {"ärztin": "f", "señora": "f", "bräutigam": "m", "женщина": "f", "garçon": "m"}
AWK = "{$0 = tolower($0); n += NF} END {print n}"


def ascii_twin(word: str) -> str:
    """``word`` with each non-ASCII character replaced by as many ``x`` as it has bytes."""
    return "".join(c if c.isascii() else "x" * len(c.encode()) for c in word)


def make_variants(base: Path, non_ascii: Path, ascii_: Path) -> None:
    rng = np.random.default_rng(SEED)
    twins = [ascii_twin(w) for w in NON_ASCII_WORDS]
    with (
        open(base, encoding="utf-8") as source,
        open(non_ascii.with_suffix(".partial"), "w", encoding="utf-8") as wide,
        open(ascii_.with_suffix(".partial"), "w", encoding="utf-8") as narrow,
    ):
        for line in source:
            docid, text = line.rstrip("\n").split("\t")
            words = text.split(" ")
            picks = rng.integers(0, len(NON_ASCII_WORDS), 3)
            places = np.sort(rng.integers(0, len(words) + 1, 3))[::-1]
            wide_words, narrow_words = list(words), list(words)
            for pick, place in zip(picks, places, strict=True):
                wide_words.insert(place, NON_ASCII_WORDS[pick])
                narrow_words.insert(place, twins[pick])
            wide.write(f"{docid}\t{' '.join(wide_words)}\n")
            narrow.write(f"{docid}\t{' '.join(narrow_words)}\n")
    non_ascii.with_suffix(".partial").rename(non_ascii)
    ascii_.with_suffix(".partial").rename(ascii_)


def check_sample(collection: Path, table: Path, terms: dict[str, str], size: int = 2000) -> int:
    """Passages of the sample whose counts differ from the reference (0 expected)."""
    import pandas as pd

    lines = collection.read_text(encoding="utf-8").splitlines()
    rows = np.random.default_rng(SEED).choice(len(lines), size=min(size, len(lines)), replace=False)
    got = pd.read_parquet(table).set_index("docid")
    groups = sorted(set(terms.values()))
    wrong = 0
    for row in rows.tolist():
        docid, text = lines[row].split("\t")
        tokens = re.findall(r"[^\W_]+", text.rstrip().lower())
        tf = Counter(tokens)
        want = [len(tokens)] + [sum(n for t, n in tf.items() if terms.get(t) == g) for g in groups]
        have = [int(got.at[docid, "length"])] + [int(got.at[docid, g]) for g in groups]
        wrong += want != have
    return wrong


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--docs", type=int, default=300_000)
    parser.add_argument("--repeats", type=int, default=3)
    args = parser.parse_args(argv or [])
    OUT.mkdir(parents=True, exist_ok=True)
    list_path, list_label = scale_bench.word_list()
    terms = {}
    for line in list_path.read_text(encoding="utf-8").splitlines():
        if line.strip():
            term, group = line.split(",")[:2]
            terms[term.strip().lower()] = group.strip()
    terms.update(NON_ASCII_TERMS)
    terms_path = OUT / "unicode_terms.csv"
    terms_path.write_text("".join(f"{t},{g}\n" for t, g in terms.items()), encoding="utf-8")
    base = OUT / f"unicode_base_{args.docs}_seed{SEED}.tsv"
    non_ascii = OUT / f"unicode_wide_{args.docs}_seed{SEED}.tsv"
    ascii_ = OUT / f"unicode_narrow_{args.docs}_seed{SEED}.tsv"
    if not (non_ascii.exists() and ascii_.exists()):
        started = time.perf_counter()
        if not base.exists():
            scale_bench.generate_collection(base, args.docs, 85, sorted(terms))
        make_variants(base, non_ascii, ascii_)
        print(f"generated the two collections in {time.perf_counter() - started:.1f} s")
    sizes = non_ascii.stat().st_size, ascii_.stat().st_size
    print(
        f"{args.docs:,} passages, {sizes[0] / 1e6:.0f} MB (non-ASCII) and {sizes[1] / 1e6:.0f} MB "
        f"(ASCII); word list: {list_label} + {len(NON_ASCII_TERMS)} non-ASCII terms; "
        f"{os.cpu_count()} cores; load average {os.getloadavg()[0]:.1f}"
    )
    if sizes[0] != sizes[1]:
        raise RuntimeError("the two collections differ in size; the twins are wrong")

    def stats(source: Path, out: str) -> list[str]:
        return scale_bench.rankbias(
            "stats",
            "--collection",
            str(source),
            "--terms",
            str(terms_path),
            "--out",
            str(OUT / out),
        )

    scale_bench.measure(stats(ascii_, "unicode_warm.parquet"))  # a warm kernel cache first
    cases = {
        "rankbias stats, non-ASCII text": stats(non_ascii, "unicode_wide.parquet"),
        "rankbias stats, ASCII twin": stats(ascii_, "unicode_narrow.parquet"),
        "awk word count with tolower, non-ASCII": ["awk", AWK, str(non_ascii)],
        "awk word count with tolower, ASCII twin": ["awk", AWK, str(ascii_)],
    }
    if shutil.which("gawk"):
        gawk = ["env", "LC_ALL=C.UTF-8", "gawk", AWK]
        cases["gawk (UTF-8) with tolower, non-ASCII"] = [*gawk, str(non_ascii)]
        cases["gawk (UTF-8) with tolower, ASCII twin"] = [*gawk, str(ascii_)]
    times: dict[str, list[float]] = {label: [] for label in cases}
    for _ in range(args.repeats):  # interleaved, so that a burst of load hits every case
        for label, command in cases.items():
            times[label].append(scale_bench.measure(command)["seconds"])
    median = {label: statistics.median(values) for label, values in times.items()}
    awk_version = subprocess.run(["awk", "-W", "version"], capture_output=True, text=True)
    awk_name = (awk_version.stdout or awk_version.stderr or "awk").splitlines()[0]
    print(f"\n{'command':42} {'median s':>9} {'runs (s)':>24}")
    for label, values in times.items():
        print(f"{label:42} {median[label]:9.2f} {' '.join(f'{v:.2f}' for v in values):>24}")
    labels = list(cases)
    print(
        f"\nnon-ASCII / ASCII, rankbias stats: {median[labels[0]] / median[labels[1]]:.2f}x\n"
        f"awk / rankbias stats, non-ASCII: {median[labels[2]] / median[labels[0]]:.2f}x; "
        f"ASCII: {median[labels[3]] / median[labels[1]]:.2f}x  (awk is {awk_name})"
    )
    if len(labels) > 4:
        wide, narrow = median[labels[4]] / median[labels[0]], median[labels[5]] / median[labels[1]]
        print(f"gawk (UTF-8) / rankbias stats, non-ASCII: {wide:.2f}x; ASCII: {narrow:.2f}x")
    wrong = check_sample(non_ascii, OUT / "unicode_wide.parquet", terms)
    print(f"sample of 2,000 non-ASCII passages against the reference: {wrong} differ")
    print(f"load average now {os.getloadavg()[0]:.1f}")
    return 0 if wrong == 0 else 1


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
