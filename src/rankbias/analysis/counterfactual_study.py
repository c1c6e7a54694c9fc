"""The studies of the chapter "Counterfactual rankings" (``notebooks/08_counterfactual.md``).

``METRICS.md`` §4; seed 003 §5(iii).  The substitution and CRBO themselves live in
:mod:`rankbias.counterfactual`; this module holds what the chapter needs around them:

- :func:`counterfactual_world`: the counterfactual runs of a testbed, rebuilt by
  :func:`rankbias.counterfactual.counterfactual_runs` only when its inputs changed (a stamp of
  the inputs is kept beside the runs);
- :func:`changed_sentences`: the sentences a substitution changed, before and after;
- :func:`pronoun_decisions`: every ``her``/``his`` of a collection with the counterpart the rule
  chose and what follows the word, so that the rule's decisions can be read and counted;
- :func:`top_k_overlap` and :func:`side_by_side`: how two runs' top ``k`` differ, per query
  and for one query;
- :func:`query_set_means`: a tidy table's means per run and metric, one column group per query
  set (the layout of seed 003 Table 2).
"""

from __future__ import annotations

import hashlib
import json
import re
from collections.abc import Callable, Iterable, Mapping, Sequence
from pathlib import Path

import numpy as np
import pandas as pd

from rankbias.counterfactual import (
    CounterfactualBuild,
    Substitution,
    counterfactual_runs,
    queries_with_terms,
    substitute,
    substitute_collection,
)
from rankbias.errors import InputError
from rankbias.outputs import write_text
from rankbias.runs import Run
from rankbias.text import TOKEN_PATTERN

__all__ = [
    "STAMP_FILE",
    "changed_sentences",
    "counterfactual_world",
    "pronoun_decisions",
    "query_set_means",
    "side_by_side",
    "top_k_overlap",
]

STAMP_FILE = "inputs.json"

# a sentence ends at '.', '!' or '?' followed by white space; the substitution keeps every
# character that is not part of a token, so both versions of a text split at the same places
_SENTENCE_END = re.compile(r"(?<=[.!?])\s+")
_QUOTES = "\"'“”‘’«»"


# ---- the counterfactual runs, rebuilt only when needed ----------------------------------------
def _inputs_digest(testbed, cf_texts: list[str], kept: pd.DataFrame) -> dict[str, str]:
    """sha256 of what the counterfactual runs depend on: texts, queries, original runs."""

    def sha(data: bytes) -> str:
        return hashlib.sha256(data).hexdigest()

    digest = {
        "counterfactual_collection": sha("\x1e".join(cf_texts).encode("utf-8")),
        "queries": sha(
            "\x1e".join(
                f"{q}\t{t}" for q, t in zip(kept["qid"], kept["query"], strict=True)
            ).encode("utf-8")
        ),
    }
    for system in testbed.systems:
        digest[f"run {system}"] = sha((testbed.path / "runs" / f"{system}.run").read_bytes())
    return digest


def counterfactual_world(
    testbed,
    out_dir: str | Path,
    cache_dir: str | Path | None = None,
    log: Callable[[str], None] = print,
    *,
    substitution: Substitution | None = None,
) -> CounterfactualBuild:
    """The testbed's counterfactual runs: reused from ``out_dir`` when still valid, else rebuilt.

    The runs are valid when ``out_dir`` holds a run file for every system of the testbed and a
    stamp (``inputs.json``) whose digests equal those of the current inputs: the substituted
    collection, the queries run, and the original run files.  Otherwise
    :func:`rankbias.counterfactual.counterfactual_runs` rebuilds them (``cache_dir`` is passed
    on) and the stamp is written.  A reused build has ``seconds == {}`` and
    ``passages_encoded == 0``; its report and query tables are recomputed (about a second).
    """
    from rankbias.counterfactual import default_substitution

    substitution = substitution or default_substitution()
    out = Path(out_dir)
    cf_collection, report = substitute_collection(
        testbed.collection[["docid", "text"]], substitution
    )
    queries = pd.concat(
        [testbed.queries[["qid", "query"]], testbed.queries_sensitive[["qid", "query"]]],
        ignore_index=True,
    )
    queries["qid"] = queries["qid"].astype(str)
    excluded = queries_with_terms(queries, substitution)
    kept = queries[~queries["qid"].isin(excluded["qid"])].reset_index(drop=True)
    digest = _inputs_digest(testbed, cf_collection["text"].tolist(), kept)
    stamp = out / STAMP_FILE
    systems = tuple(testbed.systems)
    present = stamp.exists() and all((out / f"{s}.run").exists() for s in systems)
    if present and json.loads(stamp.read_text(encoding="utf-8")) == digest:
        log(f"counterfactual runs reused from {out} (inputs unchanged)")
        return CounterfactualBuild(
            out_dir=out,
            report=report,
            queries=kept,
            excluded=excluded,
            passages_encoded=0,
            seconds={},
            systems=systems,
        )
    build = counterfactual_runs(testbed, out, cache_dir, log, substitution=substitution)
    write_text(stamp, json.dumps(digest, indent=1) + "\n")
    return build


# ---- what the substitution did -----------------------------------------------------------------
def changed_sentences(original: pd.DataFrame, counterfactual: pd.DataFrame) -> pd.DataFrame:
    """The sentences that differ between two versions of a collection (columns docid, text).

    Both tables must list the same documents in the same order.  Sentences end at ``.``, ``!``
    or ``?`` followed by white space.  Returns ``docid, sentence`` (0-based position in the
    passage), ``before``, ``after`` and ``swaps`` (tokens that differ), in collection order.
    """
    if original["docid"].tolist() != counterfactual["docid"].tolist():
        raise InputError(
            "the two collections list different documents (or in a different order); expected "
            "the same docids in the same order"
        )
    rows = []
    for docid, before, after in zip(
        original["docid"], original["text"], counterfactual["text"], strict=True
    ):
        if before == after:
            continue
        first, second = _SENTENCE_END.split(before), _SENTENCE_END.split(after)
        if len(first) != len(second):
            raise InputError(
                f"document {docid}: {len(first)} sentences before and {len(second)} after the "
                "substitution; expected the same sentence boundaries (did the substitution "
                "change characters outside tokens?)"
            )
        for position, (a, b) in enumerate(zip(first, second, strict=True)):
            if a == b:
                continue
            tokens_a = TOKEN_PATTERN.findall(a.lower())
            tokens_b = TOKEN_PATTERN.findall(b.lower())
            swaps = sum(x != y for x, y in zip(tokens_a, tokens_b, strict=False))
            swaps += abs(len(tokens_a) - len(tokens_b))
            rows.append((docid, position, a, b, swaps))
    return pd.DataFrame(rows, columns=["docid", "sentence", "before", "after", "swaps"]).astype(
        {"sentence": "int64", "swaps": "int64"}
    )


def _following_kind(after: str) -> str:
    """What follows a word: ``token``, ``quotation mark``, ``punctuation`` or ``end of text``."""
    stripped = after.lstrip()
    if not stripped:
        return "end of text"
    if stripped == after:  # no white space before it
        return "punctuation" if not TOKEN_PATTERN.match(after) else "token"
    if TOKEN_PATTERN.match(stripped):
        return "token"
    return "quotation mark" if stripped[0] in _QUOTES else "punctuation"


def pronoun_decisions(
    collection: pd.DataFrame,
    substitution: Substitution | None = None,
    terms: Iterable[str] = ("her", "his"),
    width: int = 40,
) -> pd.DataFrame:
    """Every occurrence of the context-dependent ``terms`` and the counterpart chosen for it.

    Returns ``docid, term, counterpart, following, next, context``: ``following`` is what comes
    after the word (``token``, ``quotation mark``, ``punctuation`` or ``end of text``), ``next``
    the following white-space-delimited chunk, ``context`` up to ``width`` characters of the
    original text either side.  The counterpart is the one :func:`rankbias.counterfactual.
    substitute` writes, read from the substitution of the word and the chunk after it (the
    rule looks at nothing further).
    """
    words = sorted({t.lower() for t in terms})
    pattern = re.compile(rf"(?<![^\W_])(?:{'|'.join(map(re.escape, words))})(?![^\W_])", re.I)
    chunk = re.compile(r"\s*\S*")
    rows = []
    for docid, text in zip(collection["docid"], collection["text"], strict=True):
        for match in pattern.finditer(text):
            start, end = match.span()
            following = chunk.match(text, end)
            swapped, _ = substitute(text[start : following.end()], substitution)
            counterpart = TOKEN_PATTERN.match(swapped).group().lower()
            context = text[max(0, start - width) : following.end() + width]
            rows.append(
                (
                    docid,
                    match.group().lower(),
                    counterpart,
                    _following_kind(text[end : following.end()]),
                    following.group().strip(),
                    " ".join(context.split()),
                )
            )
    columns = ["docid", "term", "counterpart", "following", "next", "context"]
    return pd.DataFrame(rows, columns=columns)


# ---- how runs differ -----------------------------------------------------------------------
def top_k_overlap(
    original: Run, counterfactual: Run, k: int = 10, qids: Iterable[str] | None = None
) -> pd.DataFrame:
    """Per query, how many documents the two runs' top ``k`` share (``qid, overlap``).

    ``qids`` defaults to the queries of ``original``; a query a run lacks has an empty list.
    """
    if k < 1:
        raise ValueError(f"k must be at least 1, found {k}")
    wanted = list(original.qids) if qids is None else [str(q) for q in qids]
    in_original, in_counterfactual = set(original.qids), set(counterfactual.qids)
    overlap = np.zeros(len(wanted), dtype=np.int64)
    for i, qid in enumerate(wanted):
        first = original.ranked(qid)[:k] if qid in in_original else []
        second = counterfactual.ranked(qid)[:k] if qid in in_counterfactual else []
        overlap[i] = len(set(first) & set(second))
    return pd.DataFrame({"qid": pd.Series(wanted, dtype=object), "overlap": overlap})


def side_by_side(original: Run, counterfactual: Run, qid: str, k: int = 10) -> pd.DataFrame:
    """The two runs' top ``k`` for one query, and where each document went in the other run.

    One row per rank ``1..k`` (shorter lists leave missing cells): ``original``,
    ``rank in counterfactual``, ``counterfactual``, ``rank in original``; a rank is missing when
    the document is not in the other run's list at all.
    """
    first = list(original.ranked(qid))
    second = list(counterfactual.ranked(qid))
    rank_first = {d: r for r, d in enumerate(first, start=1)}
    rank_second = {d: r for r, d in enumerate(second, start=1)}
    rows = []
    for position in range(k):
        a = first[position] if position < len(first) else None
        b = second[position] if position < len(second) else None
        rows.append((a, rank_second.get(a), b, rank_first.get(b)))
    table = pd.DataFrame(
        rows, columns=["original", "rank in counterfactual", "counterfactual", "rank in original"]
    )
    table.index = pd.RangeIndex(1, k + 1, name="rank")
    return table.astype({"rank in counterfactual": "Int64", "rank in original": "Int64"})


def query_set_means(
    table: pd.DataFrame,
    query_sets: Mapping[str, Iterable[str]],
    metric_names: Mapping[str, str],
    runs: Sequence[str] | None = None,
) -> pd.DataFrame:
    """Means of a tidy table (``run, qid, metric, value``) per run, by query set and metric.

    Columns are ``(query set, displayed metric name)`` in the order of ``query_sets`` and
    ``metric_names`` (``{metric: displayed name}``); rows are ``runs`` (default: the runs in
    order of appearance).  Undefined values (NaN) are left out of each mean; a metric without
    any value for a query set is an error naming both.
    """
    runs = list(dict.fromkeys(table["run"])) if runs is None else list(runs)
    parts = {}
    for name, members in query_sets.items():
        chosen = table[table["qid"].isin(set(members)) & table["metric"].isin(metric_names)]
        means = chosen.groupby(["run", "metric"])["value"].mean().unstack()
        absent = [m for m in metric_names if m not in means.columns]
        if absent:
            raise InputError(
                f"query set {name!r}: no values of metric(s) {absent}; expected every metric "
                "for every query set"
            )
        parts[name] = means[list(metric_names)].rename(columns=dict(metric_names))
    result = pd.concat(parts, axis=1).reindex(runs)
    result.columns.names = ["query set", "metric"]
    return result
