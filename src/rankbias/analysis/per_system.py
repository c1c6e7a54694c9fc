"""Per-query score tables → query sets and per-system means.

The scorer (:func:`rankbias.scoring.score_runs`) returns one row per run, query, measure and
cut-off.  Two steps turn such a table into the system-level numbers the book reports:

- :func:`label_query_sets` — a categorical column naming the query set of each row (for
  example gender-neutral and bias-sensitive queries); a query in two sets or in none is an
  error, never a silent drop;
- :func:`system_means` — the mean of ``value`` per group of columns, over the defined values,
  with the number of queries it rests on and the number of undefined (NaN) values left out
  (see the book's Conventions page, "Undefined values").
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping

import numpy as np
import pandas as pd

__all__ = ["label_query_sets", "system_means"]


def label_query_sets(
    frame: pd.DataFrame,
    sets: Mapping[str, Iterable[str]],
    column: str = "query set",
) -> pd.DataFrame:
    """``frame`` (with a ``qid`` column) plus a categorical column naming each row's query set.

    ``sets`` maps a label to the qids of that set, in the order the labels should appear.  A
    qid in two sets, or a row whose qid is in no set, is a ValueError naming the qid(s).
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


def system_means(
    frame: pd.DataFrame, by: Iterable[str] = ("run", "metric", "cutoff")
) -> pd.DataFrame:
    """Mean ``value`` per group of ``by``, with ``queries`` (rows) and ``undefined`` (NaN rows).

    The mean is over the defined values only (NaN when there are none); ``undefined`` says how
    many were left out.  Groups keep the order in which they first appear.
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
