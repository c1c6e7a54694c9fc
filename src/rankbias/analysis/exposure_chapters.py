"""What the chapters "FaiRR and NFaiRR" and "AWRF and TExFAIR" share beyond the metrics.

- :data:`FIGURE1_PASSAGES`, :func:`figure1_runs`: seed 003's Fig. 1 (Abolghasemi et al.), the two
  top-4 lists for "who is the best football player", with the passages as printed, and a few
  gender-free passages that stand in for the rest of the collection (so that the collection
  background of NFaiRR has at least four neutral documents, as MS MARCO has).
- :func:`replace_document`: a copy of a run in which one retrieved document is replaced by
  another docid, keeping its score — the way to make a run that names a document the
  collection lacks.
- :func:`label_query_sets`, :func:`system_means`: per-query tidy scores → a query-set column and
  the per-system means, with the number of queries each mean rests on and the number of
  undefined (NaN) values left out of it (never silently).
"""

from __future__ import annotations

from collections.abc import Iterable

import numpy as np
import pandas as pd

from rankbias.runs import Run

__all__ = [
    "FIGURE1_PASSAGES",
    "FIGURE1_LEFT",
    "FIGURE1_RIGHT",
    "FIGURE1_QUERY",
    "figure1_runs",
    "replace_document",
    "label_query_sets",
    "system_means",
]

FIGURE1_QUERY = "who is the best football player"

#: The passages of seed 003's Fig. 1 as printed (the paper shows excerpts between "…"), and
#: four gender-free passages written for the book, standing in for the rest of the collection.
FIGURE1_PASSAGES: dict[str, str] = {
    "p1": "currently he plays for Ligue 1 club Paris Saint-Germain",
    "p2": "she previously played for Espanyol and Levante",
    "p3": "She became the first player in the history of the league",
    "p4": "he returned to Manchester United in 2021 after 12 years",
    "p5": "He is Real Madrid's all-time top goalscorer, scoring 451",
    "p6": "he was named the Ligue 1 Player of the Year, selected to",
    "n1": "the match ended in a draw",
    "n2": "the stadium holds eighty thousand spectators",
    "n3": "tickets for the final went on sale on Monday",
    "n4": "the league has twenty clubs",
}

#: The left and right lists of Fig. 1, top to bottom.
FIGURE1_LEFT = ("p1", "p2", "p3", "p4")
FIGURE1_RIGHT = ("p1", "p5", "p6", "p4")


def _ranked_run(name: str, qid: str, docids: Iterable[str]) -> Run:
    docids = list(docids)
    scores = np.arange(len(docids), 0, -1, dtype=np.float64)  # rank 1 gets the highest score
    return Run.from_frame(pd.DataFrame({"qid": qid, "docid": docids, "score": scores}), name)


def figure1_runs(qid: str = "fig1") -> tuple[Run, Run]:
    """The two lists of seed 003's Fig. 1 as one-query runs named ``left`` and ``right``."""
    return _ranked_run("left", qid, FIGURE1_LEFT), _ranked_run("right", qid, FIGURE1_RIGHT)


def replace_document(run: Run, qid: str, rank: int, docid: str, name: str | None = None) -> Run:
    """A copy of ``run`` in which the document at ``rank`` (1-based) of ``qid`` is ``docid``.

    The replacement keeps the score of the document it replaces, so the list keeps its order
    (up to a tie with a neighbour of equal score, broken by docid as always).  An absent
    query, a rank beyond the list or a ``docid`` already in the list is a ValueError.
    """
    frame = run.to_frame()
    at = np.flatnonzero((frame["qid"] == qid).to_numpy() & (frame["rank"] == rank).to_numpy())
    if len(at) != 1:
        raise ValueError(f"run {run.name!r} has no rank {rank} for query {qid!r}")
    if (frame.loc[frame["qid"] == qid, "docid"] == docid).any():
        raise ValueError(f"document {docid!r} is already in the list of query {qid!r}")
    frame.loc[at[0], "docid"] = docid
    return Run.from_frame(frame[["qid", "docid", "score"]], name or run.name)


def label_query_sets(
    frame: pd.DataFrame,
    sets: dict[str, Iterable[str]],
    column: str = "query set",
) -> pd.DataFrame:
    """``frame`` (with a ``qid`` column) plus a categorical column naming each row's query set.

    ``sets`` maps a label to the qids of that set, in the order the labels should appear.  A
    qid in two sets, or a row whose qid is in no set, is a ValueError.
    """
    owner: dict[str, str] = {}
    for label, qids in sets.items():
        for q in qids:
            if q in owner:
                raise ValueError(f"query {q!r} is in both {owner[q]!r} and {label!r}")
            owner[q] = label
    labels = frame["qid"].map(owner)
    if labels.isna().any():
        lost = frame.loc[labels.isna(), "qid"].unique()
        raise ValueError(f"{len(lost)} qid(s) in no query set, e.g. {list(lost[:5])}")
    out = frame.copy()
    out[column] = pd.Categorical(labels, categories=list(sets))
    return out


def system_means(frame: pd.DataFrame, by: Iterable[str] = ("run", "metric", "cutoff")):
    """Mean ``value`` per group of ``by``, with ``queries`` (rows) and ``undefined`` (NaN rows).

    The mean is over the defined values only; ``undefined`` says how many were left out.
    """
    by = list(by)
    keys = [frame[c] for c in by]
    values = frame["value"]
    out = pd.DataFrame(
        {
            "mean": values.groupby(keys, observed=True, sort=False).mean(),
            "queries": values.groupby(keys, observed=True, sort=False).size(),
            "undefined": values.isna().groupby(keys, observed=True, sort=False).sum(),
        }
    )
    out["undefined"] = out["undefined"].astype(np.int64)
    return out.reset_index()
