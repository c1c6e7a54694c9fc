r"""Pairwise ranking fairness of whole runs: from a run, judgements and document statistics to
per-query PRF/nPRF and the per-run disparity statistics (Li et al. (2022); choices:
the book's Conventions page, section "Scores in pairwise ranking fairness").

The kernels live in :mod:`rankbias.metrics.prf`; this module prepares their inputs and keeps
the books, so that every query is accounted for.

Clicks from judgements
----------------------
Li et al. (2022) use the clicks of the MS MARCO training data.  Here a retrieved document is
*clicked* when the judgements mark it relevant (``relevance > 0``) and *non-clicked* otherwise
— every other document of the run's top ``cutoff`` for that query, judged non-relevant or not
judged at all.  Relevant documents the run did not retrieve take no part.  The bias label of a
document is ``d = sign(M_m − M_f)`` from its group counts
(:func:`rankbias.metrics.prf.bias_labels`).

Every judged query appears in :func:`pairwise_fairness_table` for every run, including queries
the run retrieved nothing for (their rows have ``n_retrieved = 0`` and NaN values), so that
:func:`disparity_summary` can say how many queries each number rests on.
"""

from __future__ import annotations

import math

import numpy as np
import pandas as pd

from rankbias.errors import InputError
from rankbias.metrics.prf import (
    GROUP_LABELS,
    Normalisation,
    bias_labels,
    delta_a_prf,
    pairwise_difference,
    pairwise_ranking_fairness,
    t_statistic_squared,
)
from rankbias.runs import Run
from rankbias.text import DocStats

__all__ = [
    "disparity_summary",
    "paired_gaps",
    "pairwise_fairness_table",
    "pairwise_inputs",
]


def _group_column(stats: DocStats, group: str) -> int:
    if group not in stats.groups:
        raise InputError(
            f"document statistics: expected a group {group!r} among the groups {stats.groups}"
        )
    return stats.groups.index(group)


def pairwise_inputs(
    run: Run,
    qrels: pd.DataFrame,
    stats: DocStats,
    *,
    cutoff: int = 100,
    male: str = "m",
    female: str = "f",
) -> pd.DataFrame:
    """The inputs of PRF for one run: its top ``cutoff`` on the judged queries, with clicks and
    bias labels.

    Returns a table ``qid, docid, rank, score, clicked, label`` (label −1/0/+1, see the module
    docstring).  ``attrs["unretrieved"]`` lists the judged queries the run has no document for.
    A retrieved document missing from ``stats`` is an error (it is never counted as neutral).
    """
    missing_columns = {"qid", "docid", "relevance"} - set(qrels.columns)
    if missing_columns:
        raise InputError(
            f"qrels: expected columns qid, docid, relevance; missing {sorted(missing_columns)}"
        )
    judged = np.unique(qrels["qid"].astype(str).to_numpy())
    frame = run.cut(cutoff).restrict(judged).to_frame()
    relevant = qrels.loc[qrels["relevance"] > 0, ["qid", "docid"]].astype(str)
    clicked = pd.MultiIndex.from_frame(frame[["qid", "docid"]]).isin(
        pd.MultiIndex.from_frame(relevant)
    )
    rows = stats.rows(frame["docid"].to_numpy())
    absent = np.flatnonzero(rows < 0)
    if absent.size:
        examples = ", ".join(
            f"{frame['docid'].iat[i]} (query {frame['qid'].iat[i]})" for i in absent[:3]
        )
        raise InputError(
            f"run {run.name!r}: {absent.size} retrieved document(s) are not in the collection "
            f"statistics, e.g. {examples}; expected every retrieved docid in the collection"
        )
    counts = stats.group_counts[rows]
    frame["clicked"] = clicked
    frame["label"] = bias_labels(
        counts[:, _group_column(stats, male)], counts[:, _group_column(stats, female)]
    )
    frame.attrs["unretrieved"] = sorted(set(judged) - set(frame["qid"]))
    return frame


def pairwise_fairness_table(
    runs: dict[str, Run] | Run,
    qrels: pd.DataFrame,
    stats: DocStats,
    *,
    cutoff: int = 100,
    normalisation: Normalisation = "min_max",
) -> pd.DataFrame:
    """PRF_g and nPRF_g per (run, judged query, group).

    Columns: ``run, qid, cutoff, group, n_retrieved, n_clicked_all`` (relevant retrieved
    documents of any label), ``n_clicked`` (those labelled ``group``, ``n_1^g``),
    ``n_non_clicked`` (``n_0``), ``prf, nprf`` (NaN where undefined).  Every judged query has
    two rows per run, also when the run retrieved nothing for it.
    """
    if isinstance(runs, Run):
        runs = {runs.name: runs}
    judged = np.unique(qrels["qid"].astype(str).to_numpy())
    parts = []
    for name, run in runs.items():
        inputs = pairwise_inputs(run, qrels, stats, cutoff=cutoff)
        table = pairwise_ranking_fairness(
            inputs["qid"].to_numpy(),
            inputs["score"].to_numpy(),
            inputs["clicked"].to_numpy(),
            inputs["label"].to_numpy(),
            normalisation=normalisation,
        )
        per_query = inputs.groupby("qid").agg(
            n_retrieved=("docid", "size"), n_clicked_all=("clicked", "sum")
        )
        grid = pd.MultiIndex.from_product([judged, list(GROUP_LABELS)], names=["qid", "group"])
        table = table.set_index(["qid", "group"]).reindex(grid).reset_index()
        table = table.join(per_query, on="qid")
        count_columns = ["n_retrieved", "n_clicked_all", "n_clicked", "n_non_clicked"]
        table[count_columns] = table[count_columns].fillna(0).astype(np.int64)
        table.insert(0, "run", name)
        table.insert(2, "cutoff", cutoff)
        parts.append(table)
    columns = ["run", "qid", "cutoff", "group", "n_retrieved", "n_clicked_all", "n_clicked"]
    columns += ["n_non_clicked", "prf", "nprf"]
    return pd.concat(parts, ignore_index=True)[columns]


def _chi2_one_sf(value: float) -> float:
    """``P(χ²₁ > value)``, the large-sample p-value of a squared t-statistic."""
    if not math.isfinite(value):
        return float("nan") if math.isnan(value) else 0.0
    return math.erfc(math.sqrt(value / 2.0))


def disparity_summary(table: pd.DataFrame, *, ddof: int = 0) -> pd.DataFrame:
    """One row per run of a :func:`pairwise_fairness_table`: how many queries each statistic
    rests on, and the statistics.

    Counts: ``queries`` (judged), ``unretrieved`` (no document retrieved),
    ``no_relevant_retrieved`` (no relevant document in the top k), ``only_neutral_relevant``
    (relevant documents retrieved, all labelled 0), ``no_non_clicked`` (every retrieved
    document relevant), ``n_m`` and ``n_f`` (``|T_m|``, ``|T_f|``: queries where PRF_g is
    defined) and ``n_both`` (queries in both).
    Statistics: mean ``prf_m``, ``prf_f`` over ``T_m``, ``T_f``; ``delta_a_prf``; mean
    ``nprf_m``, ``nprf_f``; ``pd``; its parts ``mean_gap_sq = (μ_m − μ_f)²`` and
    ``var_sum = var_m + var_f`` of the nPRF values (population variances, so
    ``pd = mean_gap_sq + var_sum``); ``ts`` (standard form) and ``ts_p``, ``P(χ²₁ > ts)``, its
    large-sample p-value.  ``ddof=0`` uses the population variances of Li et al. (2022) in ``ts``;
    ``ddof=1`` gives the usual (Welch) sample-variance statistic.  Statistics of a group without
    queries are NaN; so is ``ts`` when a group has fewer than two queries.
    """
    rows = []
    for name, run_rows in table.groupby("run", sort=False):
        male = run_rows[run_rows["group"] == "m"].set_index("qid")
        female = run_rows[run_rows["group"] == "f"].set_index("qid").reindex(male.index)
        retrieved = male["n_retrieved"] > 0
        relevant = male["n_clicked_all"] > 0
        labelled = (male["n_clicked"] > 0) | (female["n_clicked"] > 0)
        in_m, in_f = male["prf"].notna(), female["prf"].notna()
        nprf_m = male.loc[in_m, "nprf"].to_numpy(dtype=float)
        nprf_f = female.loc[in_f, "nprf"].to_numpy(dtype=float)
        both = nprf_m.size > 0 and nprf_f.size > 0
        enough = nprf_m.size >= 2 and nprf_f.size >= 2
        nan = float("nan")
        row = {
            "run": name,
            "queries": len(male),
            "unretrieved": int((~retrieved).sum()),
            "no_relevant_retrieved": int((retrieved & ~relevant).sum()),
            "only_neutral_relevant": int((relevant & ~labelled).sum()),
            "no_non_clicked": int((retrieved & (male["n_non_clicked"] == 0)).sum()),
            "n_m": int(in_m.sum()),
            "n_f": int(in_f.sum()),
            "n_both": int((in_m & in_f).sum()),
            "prf_m": float(male["prf"].mean()),
            "prf_f": float(female["prf"].mean()),
            "delta_a_prf": delta_a_prf(run_rows),
            "nprf_m": float(nprf_m.mean()) if nprf_m.size else nan,
            "nprf_f": float(nprf_f.mean()) if nprf_f.size else nan,
            "pd": pairwise_difference(nprf_m, nprf_f) if both else nan,
            "mean_gap_sq": float((nprf_m.mean() - nprf_f.mean()) ** 2) if both else nan,
            "var_sum": float(nprf_m.var() + nprf_f.var()) if both else nan,
            "ts": t_statistic_squared(nprf_m, nprf_f, ddof=ddof) if enough else nan,
        }
        row["ts_p"] = _chi2_one_sf(row["ts"])
        rows.append(row)
    return pd.DataFrame(rows).set_index("run")


def paired_gaps(table: pd.DataFrame) -> pd.DataFrame:
    """Within-query gaps on the queries in both ``T_m`` and ``T_f``, one row per run:
    ``n_both``, mean ``prf_gap = PRF_m − PRF_f`` and mean ``nprf_gap = nPRF_m − nPRF_f``
    (NaN when no query has relevant documents of both groups)."""
    wide = table.set_index(["run", "qid", "group"])[["prf", "nprf"]].unstack("group")
    wide = wide[wide[("prf", "m")].notna() & wide[("prf", "f")].notna()]
    gaps = pd.DataFrame(
        {
            "prf_gap": wide[("prf", "m")] - wide[("prf", "f")],
            "nprf_gap": wide[("nprf", "m")] - wide[("nprf", "f")],
        }
    )
    summary = gaps.groupby(level="run").agg(
        n_both=("prf_gap", "size"), prf_gap=("prf_gap", "mean"), nprf_gap=("nprf_gap", "mean")
    )
    summary = summary.reindex(pd.Index(table["run"].unique(), name="run"))
    summary["n_both"] = summary["n_both"].fillna(0).astype(np.int64)
    return summary
