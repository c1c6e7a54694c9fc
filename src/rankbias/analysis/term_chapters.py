"""Tables for the chapters "Gendered terms and document magnitudes" and "RaB and ARaB".

The chapters compute the metrics through :mod:`rankbias.text`, :mod:`rankbias.metrics.rab` and
:mod:`rankbias.scoring`; this module holds the few longer steps that only explain them:

- :func:`whitespace_misses` — the term occurrences that the ``default`` tokeniser counts and
  the ``whitespace`` tokeniser (the reference code's) does not, with the token that hid them;
- :func:`magnitude_frame` — the per-document group magnitudes of ``METRICS.md`` §1 (``tc``,
  ``tf``, ``bool``, ``tf_paper``) as one tidy table;
- :func:`restrict_stats` — the statistics of a collection under a smaller word list, from the
  per-term counts (no second pass over the text);
- :func:`subsample_coverage` — how much of the collection's gendered vocabulary survives a
  stratified subsample of the word list (:func:`rankbias.lexicon.subsample`).
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence

import numpy as np
import pandas as pd

from rankbias.analysis.sensitivity import subsample_stats
from rankbias.lexicon import Lexicon, subsample
from rankbias.metrics.rab import MAGNITUDES, document_magnitudes
from rankbias.text import DocStats

__all__ = [
    "MISS_KINDS",
    "miss_kind",
    "whitespace_misses",
    "magnitude_frame",
    "restrict_stats",
    "subsample_coverage",
]


def whitespace_misses(texts: Iterable[str], lexicon: Lexicon) -> pd.DataFrame:
    """Term occurrences found by the ``default`` tokeniser and missed by ``whitespace``.

    In a lower-cased text, an occurrence of a term as a ``default`` token (a maximal run of
    letters and digits) is missed by the ``whitespace`` tokeniser (split on single spaces)
    unless the characters on both sides of it are spaces or the ends of the text.  When every
    term is a single ``default`` token (true of the project's list), the number of rows for a
    document is exactly its ``default`` count minus its ``whitespace`` count.

    Returns one row per missed occurrence: ``doc`` (position of the text), ``form`` (the
    whitespace token that hid it, e.g. ``"him."``), ``term``, ``group`` and ``kind``
    (:func:`miss_kind`).  The loop runs over documents and matches, not tokens: this is for
    explaining the tokenisers, not a hot path.
    """
    alternatives = "|".join(re.escape(t) for t in sorted(lexicon.terms, key=len, reverse=True))
    pattern = re.compile(rf"(?<![^\W_])(?:{alternatives})(?![^\W_])")
    rows = []
    for doc, text in enumerate(texts):
        lowered = text.lower()
        for match in pattern.finditer(lowered):
            a, b = match.span()
            start = lowered.rfind(" ", 0, a) + 1
            end = lowered.find(" ", b)
            end = len(lowered) if end < 0 else end
            if start != a or end != b:
                rows.append((doc, lowered[start:end], match.group()))
    frame = pd.DataFrame(rows, columns=["doc", "form", "term"])
    frame["doc"] = frame["doc"].astype(np.int64)
    frame["group"] = frame["term"].map(lexicon.term_to_group)
    frame["kind"] = [miss_kind(f, t) for f, t in zip(frame["form"], frame["term"], strict=True)]
    return frame


MISS_KINDS = ("clitic ('s, 'd)", "joined (hyphen, dash, slash)", "punctuation attached")


def miss_kind(form: str, term: str) -> str:
    """Why a whitespace token ``form`` hides ``term`` (one of :data:`MISS_KINDS`).

    ``clitic`` when the term is followed by an apostrophe and a letter (``father's``,
    ``he'd``); ``joined`` when the token holds a hyphen, dash or slash (``half-brother``,
    ``he/she``); otherwise ``punctuation attached`` (``him.``, ``"woman``).
    """
    if re.search(rf"(?<![^\W_]){re.escape(term)}['’][^\W\d_]", form):
        return MISS_KINDS[0]
    if re.search(r"[-‐‑‒–—―/]", form):
        return MISS_KINDS[1]
    return MISS_KINDS[2]


def magnitude_frame(stats: DocStats, kinds: Sequence[str] = MAGNITUDES) -> pd.DataFrame:
    """Per-document magnitudes as a tidy table ``docid, magnitude, group, value``.

    ``tf_paper`` needs per-term counts (``per_term=True`` when the statistics were read).
    Rows come magnitude by magnitude, then group by group, each in collection order.
    """
    parts = []
    for kind in kinds:
        log_sums = stats.log_tf_sums() if kind == "tf_paper" else None
        values = document_magnitudes(stats.group_counts, kind, log_sums)
        for j, group in enumerate(stats.groups):
            parts.append(
                pd.DataFrame(
                    {
                        "docid": stats.docids,
                        "magnitude": kind,
                        "group": group,
                        "value": values[:, j],
                    }
                )  # fmt: skip
            )
    return pd.concat(parts, ignore_index=True)


def restrict_stats(stats: DocStats, lexicon: Lexicon) -> DocStats:
    """The statistics ``stats`` would have had under ``lexicon``, a sub-list of its terms.

    The column selection of :func:`rankbias.analysis.sensitivity.subsample_stats`, under the
    name the term chapters use; its errors are :class:`~rankbias.errors.InputError` (a
    ``ValueError``) naming the term or group that differs.
    """
    return subsample_stats(stats, lexicon)


def subsample_coverage(
    stats: DocStats,
    lexicon: Lexicon,
    fractions: Sequence[float],
    seeds: Sequence[int],
    stratified: bool = True,
) -> pd.DataFrame:
    """What a subsampled word list still sees of the collection, per fraction, seed and group.

    For each ``fraction`` and ``seed``, :func:`rankbias.lexicon.subsample` draws a sub-list;
    the result has one row per group with ``terms`` (kept), ``occurrences`` (of the kept terms
    in the collection), ``occurrence_share`` (of the full list's occurrences of that group)
    and ``documents`` (documents with at least one kept term of the group).
    """
    full = stats.group_counts.sum(axis=0)
    rows = []
    for fraction in fractions:
        for seed in seeds:
            sub = subsample(lexicon, fraction, seed, stratified=stratified)
            counts = restrict_stats(stats, sub).group_counts
            for j, group in enumerate(stats.groups):
                rows.append(
                    {
                        "fraction": float(fraction),
                        "seed": int(seed),
                        "group": group,
                        "terms": len(sub.terms_of(group)),
                        "occurrences": int(counts[:, j].sum()),
                        "occurrence_share": float(counts[:, j].sum() / full[j])
                        if full[j]
                        else float("nan"),
                        "documents": int((counts[:, j] > 0).sum()),
                    }
                )
    return pd.DataFrame(rows)
