"""What the chapters "Do the measures agree?" and "TExFAIR, NFaiRR and effectiveness across
systems" (``notebooks/09_consistency.md``, ``notebooks/12_agreement.md``) need beyond
:mod:`rankbias.analysis.consistency` and :mod:`rankbias.analysis.agreement`.

- :func:`duo_per_query`: the table of :func:`rankbias.analysis.duo_study.duo_table` → the tidy
  ``run, qid, metric, cutoff, value`` rows of one Duo variant, so that Duo joins the term-based
  metrics in the consistency analysis.
- :func:`tied_least_biased`: per run and metric, the share of queries whose bias level equals
  the metric's lowest level in that run — the block of ties that the binning orders by ``qid``.
- :func:`chance_rank_difference`: the mean absolute rank difference of two independent random
  orderings of ``n`` queries, ``(n² − 1) / (3n)``.
- :func:`correlation_by_cutoff`: :func:`rankbias.analysis.agreement.metric_correlation` at many
  cutoffs, optionally restricted to the lists whose RBDF reaches a threshold.
- :func:`overlap_figure`: seed 002's Fig. 1 as a seaborn grid: the per-bin overlap with its
  bootstrap interval, one panel per pair of metrics, and the overlap expected by chance.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence

import numpy as np
import pandas as pd

from rankbias.analysis.agreement import metric_correlation
from rankbias.analysis.consistency import bias_levels

__all__ = [
    "METRIC_NAMES",
    "duo_per_query",
    "tied_least_biased",
    "chance_rank_difference",
    "correlation_by_cutoff",
    "pair_labels",
    "overlap_figure",
]

#: how the chapters print the metrics
METRIC_NAMES = {
    "arab_tc": "ARaB tc",
    "arab_tf": "ARaB tf",
    "arab_bool": "ARaB bool",
    "nfairr": "NFaiRR",
    "texfair": "TExFAIR",
    "texfair_norbdf": "TExFAIR (no RBDF)",
    "awrf": "AWRF",
    "duo": "Duo",
}


def duo_per_query(table: pd.DataFrame, variance: str = "prefix", name: str = "duo") -> pd.DataFrame:
    """The Duo rows of ``duo_table`` for one variance variant as ``run, qid, metric, cutoff,
    value`` with ``metric = name``; a ValueError when the table has no such rows."""
    rows = table[(table["metric"] == "Duo") & (table["variance"] == variance)]
    if rows.empty:
        found = sorted(table.loc[table["metric"] == "Duo", "variance"].unique())
        raise ValueError(f"no Duo rows with variance {variance!r}; the table holds {found}")
    out = rows[["run", "qid", "cutoff", "value"]].assign(metric=name)
    return out[["run", "qid", "metric", "cutoff", "value"]].reset_index(drop=True)


def tied_least_biased(
    per_query: pd.DataFrame,
    metrics: Sequence[str],
    directions: Mapping[str, str] | None = None,
    by: Sequence[str] = ("run",),
) -> pd.DataFrame:
    """Share of queries at each metric's lowest bias level, per ``by`` group and metric.

    Columns ``[by…,] metric, queries`` (with a defined value), ``tied`` (at the lowest level),
    ``share``.  Undefined (NaN) values are left out of both counts.
    """
    levels = bias_levels(per_query, metrics, directions).dropna(subset=["bias"])
    keys = [*by, "metric"]
    lowest = levels.groupby(keys)["bias"].transform("min")
    levels = levels.assign(at_lowest=levels["bias"] == lowest)
    out = levels.groupby(keys, sort=False).agg(queries=("bias", "size"), tied=("at_lowest", "sum"))
    out["share"] = out["tied"] / out["queries"]
    return out.reset_index()


def chance_rank_difference(n: int) -> float:
    """``E|R_a − R_b|`` for two independent uniform random rankings of ``n`` items."""
    if n < 1:
        raise ValueError(f"n: expected a positive integer, found {n}")
    return (n * n - 1) / (3 * n)


def correlation_by_cutoff(
    per_query: pd.DataFrame,
    first: str,
    second: str,
    cutoffs: Iterable[int],
    qids: Iterable[str] | None = None,
    min_rbdf: float | None = None,
) -> pd.DataFrame:
    """Per run and cutoff, Pearson ``r`` of ``first`` and ``second`` over the queries.

    The columns of :func:`~rankbias.analysis.agreement.metric_correlation`, one block per cutoff.
    With ``min_rbdf``, only the (run, query) lists whose ``rbdf`` at the same cutoff is at least
    ``min_rbdf`` enter (``per_query`` must then hold ``rbdf`` rows); the others are counted in
    ``n_below_rbdf``.
    """
    qids = None if qids is None else {str(q) for q in qids}
    parts = []
    for cutoff in cutoffs:
        rows = per_query[per_query["cutoff"] == cutoff]
        if qids is not None:
            rows = rows[rows["qid"].astype(str).isin(qids)]
        below = pd.Series(dtype=int)
        if min_rbdf is not None:
            rbdf = rows[rows["metric"] == "rbdf"].set_index(["run", "qid"])["value"]
            if rbdf.empty:
                raise ValueError(f"min_rbdf given but the table has no rbdf rows at k = {cutoff}")
            keep = rbdf[rbdf >= min_rbdf].index
            below = (rbdf < min_rbdf).groupby(level="run").sum()
            rows = rows[pd.MultiIndex.from_frame(rows[["run", "qid"]]).isin(keep)]
        result = metric_correlation(rows, first, second, cutoff=cutoff)
        if min_rbdf is not None:
            result["n_below_rbdf"] = result["run"].map(below).fillna(0).astype(int)
        parts.append(result)
    return pd.concat(parts, ignore_index=True)


def pair_labels(frame: pd.DataFrame, names: Mapping[str, str] = METRIC_NAMES) -> pd.Series:
    """``"A – B"`` for the ``metric_a`` and ``metric_b`` columns, with display names."""
    a = frame["metric_a"].map(lambda m: names.get(m, m))
    b = frame["metric_b"].map(lambda m: names.get(m, m))
    return a + " – " + b


def overlap_figure(bins: pd.DataFrame, hue: str = "run", col_wrap: int = 3, height: float = 2.4):
    """Seed 002 Fig. 1: overlap per bin, one panel per pair, one colour per ``hue`` value.

    ``bins`` from :func:`~rankbias.analysis.consistency.consistency_bins` (with ``by`` including
    ``hue``) and a ``pair`` column; error bars are the bootstrap intervals, the dashed line the
    overlap expected by chance.  Returns the :class:`seaborn.FacetGrid`.
    """
    import matplotlib.pyplot as plt
    import seaborn as sns

    levels = list(dict.fromkeys(bins[hue]))
    palette = dict(zip(levels, sns.color_palette(n_colors=len(levels)), strict=True))
    width = 0.8 / len(levels)

    def draw(data, **_):
        ax = plt.gca()
        for i, level in enumerate(levels):
            part = data[data[hue] == level].sort_values("bin")
            x = part["bin"].to_numpy() + (i - (len(levels) - 1) / 2) * width
            y = part["overlap"].to_numpy()
            err = np.vstack([y - part["overlap_low"], part["overlap_high"] - y])
            ax.bar(x, y, width=width, color=palette[level], label=level)
            ax.errorbar(x, y, yerr=err, fmt="none", ecolor="0.2", elinewidth=0.8, capsize=1.5)
        for b, chance in data.groupby("bin")["chance"].mean().items():
            ax.hlines(chance, b - 0.45, b + 0.45, colors="0.1", linestyles="--", linewidth=1)

    grid = sns.FacetGrid(
        bins, col="pair", col_wrap=col_wrap, height=height, aspect=1.25, ylim=(0, 1)
    )
    grid.map_dataframe(draw)
    grid.set_titles("{col_name}", size=9)
    grid.set_axis_labels("bin (1 = most biased)", "same-bin share")
    for ax in grid.axes.flat:
        ax.set_xticks(sorted(bins["bin"].unique()))
    handles = [plt.Rectangle((0, 0), 1, 1, color=palette[level]) for level in levels]
    handles.append(plt.Line2D([], [], color="0.1", linestyle="--"))
    grid.figure.legend(
        handles,
        [*levels, "chance"],
        loc="upper center",
        ncol=len(levels) + 1,
        frameon=False,
        bbox_to_anchor=(0.5, 1.05),
    )
    return grid
