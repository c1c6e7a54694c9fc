"""Released-style loop, re-implemented: per-document neutrality of a collection, one line at a time.

Written for the benchmark from the published description of the released per-document script
(CPJKU FairnessRetrievalResults ``measurement/calculate_collection_docneutrality.py``): read a
line, ``split('\\t')``, lower-case the text, ``split(' ')``, count the words of each group with
a Python loop, compute the neutrality with threshold 1 and write ``docid<TAB>neutrality``.  It
is *not* that script; ``bench/stats_bench.py`` times the real one instead when
``RANKBIAS_RELEASED_SCRIPT`` names it.

Usage: ``python released_style_docneutrality.py COLLECTION WORDLIST OUT``
(``WORDLIST``: ``term,group`` lines).
"""

from __future__ import annotations

import sys
from collections import Counter

import numpy as np


def main(collection: str, wordlist: str, out: str) -> int:
    words: dict[str, set[str]] = {}
    with open(wordlist, encoding="utf-8") as handle:
        for line in handle:
            term, group = line.strip().split(",")
            words.setdefault(group, set()).add(term.lower())
    portion = {group: 1 / len(words) for group in words}
    with open(collection, encoding="utf-8") as handle, open(out, "w", encoding="utf-8") as sink:
        for line in handle:
            vals = line.strip().split("\t")
            tokens = vals[1].lower().split(" ")
            counts = Counter(tokens)
            magnitudes = {group: 0 for group in words}
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
    return 0


if __name__ == "__main__":
    sys.exit(main(*sys.argv[1:4]))
