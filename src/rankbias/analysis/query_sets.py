"""Query sets (e.g. gender-neutral and bias-sensitive queries) as a column of a per-query table;
the means per set are then :func:`rankbias.scoring.mean_per_system` with the column in ``by``."""

from __future__ import annotations

from collections.abc import Iterable, Mapping

import pandas as pd

from rankbias.errors import expect_type

__all__ = ["label_query_sets"]


def label_query_sets(
    frame: pd.DataFrame,
    sets: Mapping[str, Iterable[str]],
    column: str = "query set",
) -> pd.DataFrame:
    """``frame`` (with a ``qid`` column) plus a categorical column naming each row's query set;
    ``sets`` maps a label to its qids, in the labels' order.  A row whose qid is in several sets
    (MS MARCO's QS1 and QS2 share queries) is repeated once per set, in the labels' order, so
    each set's analysis sees it; a row whose qid is in no set is a ValueError naming the
    qid(s) (never a silent drop)."""
    expect_type(frame, "frame", pd.DataFrame, "a DataFrame with a qid column")
    expect_type(sets, "sets", Mapping, "a mapping label -> qids")
    if column in frame.columns:
        raise ValueError(f"column: {column!r} is in the table already; expected a new name")
    owners: dict[str, list[str]] = {}
    for label, qids in sets.items():
        if isinstance(qids, str):  # its letters would be read as qids
            raise TypeError(f"sets: query set {label!r} is the string {qids!r}; expected qids")
        for q in dict.fromkeys(qids):
            owners.setdefault(q, []).append(label)
    labels = frame["qid"].map(owners)
    if labels.isna().any():
        lost = frame.loc[labels.isna(), "qid"].unique()
        raise ValueError(f"{len(lost)} qid(s) in no query set, e.g. {list(lost[:5])}")
    out = frame.assign(**{column: labels}).explode(column)
    if len(out) == len(frame):
        out.index = frame.index  # no query in two sets: the rows as they were
    else:
        out = out.reset_index(drop=True)
    out[column] = pd.Categorical(out[column], categories=list(sets))
    return out
