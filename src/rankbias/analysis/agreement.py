r"""Effectiveness, fairness and metric agreement across systems (Abolghasemi et al. (2024),
Table 1), from tidy ``run, qid, metric, cutoff, value`` tables (of
:func:`rankbias.effectiveness.effectiveness` or :func:`rankbias.scoring.score_runs`; a measure
is named ``metric@cutoff``).

Per system: the mean of each measure and a two-sided paired t-test against a baseline over the
queries both define, Bonferroni-corrected per measure (``min(1, m·p)``, ``m`` non-baseline
systems; :func:`paired_tests`); per run, Pearson's ``r`` of two metrics
(:func:`metric_correlation`).  "Better" is higher for effectiveness and *higher = fairer*
metrics, lower for *higher = more biased*, undefined for signed ones (``higher_is_better``
overrides it).  ``qids=`` restricts every statistic to a query set; queries left out are counted
in ``n_excluded``.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence

import numpy as np
import pandas as pd
from scipy import stats

from rankbias.errors import InputError, expect_fraction, expect_items, expect_type
from rankbias.metrics.measures import HigherIs, higher_is, split_cutoff

__all__ = ["DEFAULT_MEASURES", "split_label", "paired_tests", "metric_correlation"]

DEFAULT_MEASURES = ("nDCG@10", "RR@10", "nfairr@10", "texfair@10")
_COLUMNS = ("run", "qid", "metric", "cutoff", "value")


def split_label(label: str) -> tuple[str, int | None]:
    """``"nDCG@10"`` → ``("nDCG", 10)``; ``"AP"`` → ``("AP", None)``; ``"@10"`` is refused."""
    metric, cutoff = split_cutoff(label)
    if not metric:
        raise ValueError(f"measure {label!r}: no name before '@'; expected e.g. 'nDCG@10'")
    return metric, cutoff


def _higher_is_better(metric: str, overrides: Mapping[str, bool] | None, label: str):
    """True / False, or None for a signed metric (no better direction)."""
    for key in (label, metric):
        if overrides and key in overrides:
            return bool(overrides[key])
    direction = higher_is(metric)  # None for effectiveness measures: higher is better
    return {None: True, HigherIs.FAIRER: True, HigherIs.MORE_BIASED: False}.get(direction)


def _combine(tables, name: str) -> pd.DataFrame:
    expected = "a tidy table of score_runs() or a list of them"
    tables = [tables] if isinstance(tables, pd.DataFrame) else expect_items(tables, name, expected)
    for i, table in enumerate(tables):
        expect_type(table, f"{name}[{i}]", pd.DataFrame, expected)
        if lacking := [c for c in _COLUMNS if c not in table.columns]:
            raise InputError(
                f"table {i} lacks column(s) {lacking}; expected the tidy columns {list(_COLUMNS)}"
            )
    frames = [pd.DataFrame({c: t[c].to_numpy() for c in _COLUMNS}) for t in tables]
    frame = pd.concat([f.astype({"cutoff": "Int64"}) for f in frames])
    frame["qid"] = frame["qid"].astype(str)
    return frame


def _measure_wide(frame: pd.DataFrame, label: str, qids) -> pd.DataFrame:
    """qid × run values of one measure (NaN where a run lacks a query)."""
    metric, cutoff = split_label(label)
    rows = frame[frame["metric"] == metric]
    rows = rows[rows["cutoff"].isna()] if cutoff is None else rows[rows["cutoff"] == cutoff]
    if rows.empty:
        known = sorted(
            {f"{m}@{c}" if pd.notna(c) else m for m, c in frame[["metric", "cutoff"]].values}
        )
        raise InputError(f"no rows for measure {label!r}; the tables hold {known[:20]}")
    if qids is not None:
        rows = rows[rows["qid"].isin(qids)]
    duplicated = rows.duplicated(["run", "qid"], keep=False)
    if duplicated.any():
        first = rows[duplicated].iloc[0]
        raise InputError(
            f"measure {label!r}: run {first['run']!r} has several rows for query "
            f"{first['qid']!r}; expected one"
        )
    return rows.pivot(index="qid", columns="run", values="value").astype(float)


def paired_tests(
    tables: pd.DataFrame | Sequence[pd.DataFrame],
    measures: Sequence[str] = DEFAULT_MEASURES,
    baseline: str = "bm25",
    alpha: float = 0.05,
    qids: Iterable[str] | None = None,
    runs: Sequence[str] | None = None,
    higher_is_better: Mapping[str, bool] | None = None,
) -> pd.DataFrame:
    """Per system and measure: mean, and a paired t-test against ``baseline`` (module docstring)
    over one tidy table or several; ``runs``: the systems in order (default: baseline first, then
    in order of appearance).  Returns ``run, measure, n, mean, difference, t, p, p_bonferroni,
    significant, better, n_excluded`` (``difference`` system − baseline over the paired queries;
    the baseline's test columns NaN, its ``better`` None)."""
    expect_fraction(alpha, "alpha")
    if isinstance(measures, str):
        raise TypeError(f"measures: expected a list of measure labels, found {measures!r}")
    frame = _combine(tables, "tables")
    qids = None if qids is None else {str(q) for q in qids}
    all_runs = list(dict.fromkeys(frame["run"]))
    if baseline not in all_runs:
        raise InputError(f"baseline run {baseline!r} is not in the tables; runs: {all_runs}")
    runs = [baseline] + [r for r in all_runs if r != baseline] if runs is None else list(runs)
    if unknown := [r for r in runs if r not in all_runs]:
        raise InputError(f"run(s) {unknown} are not in the tables; runs: {all_runs}")
    if baseline not in runs:
        runs = [baseline] + runs
    compared = [r for r in runs if r != baseline]
    rows = []
    for label in measures:
        wide = _measure_wide(frame, label, qids)
        base = wide.get(baseline, pd.Series(dtype=float))
        for run in runs:
            values = wide.get(run, pd.Series(dtype=float))
            defined = values.dropna()
            mean = float(defined.mean())  # NaN without values
            difference = t = p = np.nan
            n_excluded = int(values.isna().sum())
            if run != baseline:
                paired = pd.concat([values, base], axis=1, keys=["s", "b"]).dropna()
                n_excluded = int(len(wide) - len(paired))
                if len(paired) >= 2:
                    diff = paired["s"].to_numpy() - paired["b"].to_numpy()
                    difference = float(diff.mean())
                    if np.ptp(diff) > 0:
                        result = stats.ttest_rel(paired["s"], paired["b"])
                        t, p = float(result.statistic), float(result.pvalue)
                    elif difference:  # a constant non-zero difference: t is infinite
                        t, p = float(np.sign(difference) * np.inf), 0.0
                    else:
                        t, p = 0.0, 1.0
            rows.append((run, label, len(defined), mean, difference, t, p, n_excluded))
    columns = ["run", "measure", "n", "mean", "difference", "t", "p", "n_excluded"]
    out = pd.DataFrame(rows, columns=columns)
    tested = out["run"] != baseline
    out.insert(7, "p_bonferroni", np.minimum(1.0, out["p"] * len(compared)).where(tested))
    out.insert(8, "significant", out["p_bonferroni"] < alpha)  # NaN (the baseline): False
    better = []
    for label, diff, run in zip(out["measure"], out["difference"], out["run"], strict=True):
        orientation = _higher_is_better(split_label(label)[0], higher_is_better, label)
        if run == baseline or orientation is None or not np.isfinite(diff) or diff == 0:
            better.append(None)
        else:
            better.append(bool((diff > 0) == orientation))
    out.insert(9, "better", better)
    out.attrs.update(alpha=alpha, baseline=baseline, comparisons=len(compared))
    return out


def metric_correlation(
    per_query: pd.DataFrame,
    first: str = "texfair",
    second: str = "nfairr",
    cutoff: int = 10,
    alpha: float = 0.05,
    qids: Iterable[str] | None = None,
    runs: Sequence[str] | None = None,
) -> pd.DataFrame:
    """Per run, Pearson ``r`` and p of two metrics' per-query values at ``cutoff``, as ``run, first,
    second, cutoff, n, r, p, significant, n_excluded`` (queries where either value is NaN or
    absent); fewer than 3 queries, or a constant metric, give NaN."""
    expect_fraction(alpha, "alpha")
    frame = _combine(per_query, "per_query")
    qids = None if qids is None else {str(q) for q in qids}
    a = _measure_wide(frame, f"{first}@{cutoff}", qids)
    b = _measure_wide(frame, f"{second}@{cutoff}", qids)
    runs = list(dict.fromkeys(frame["run"])) if runs is None else list(runs)
    rows = []
    for run in runs:
        x, y = a.get(run, pd.Series(dtype=float)), b.get(run, pd.Series(dtype=float))
        both = pd.concat([x, y], axis=1, keys=["x", "y"])
        paired, r, p = both.dropna(), np.nan, np.nan
        if len(paired) >= 3 and np.ptp(paired["x"]) > 0 and np.ptp(paired["y"]) > 0:
            result = stats.pearsonr(paired["x"], paired["y"])
            r, p = float(result.statistic), float(result.pvalue)
        significant = bool(p < alpha)  # False for NaN
        n_excluded = int(len(both) - len(paired))
        rows.append((run, first, second, cutoff, len(paired), r, p, significant, n_excluded))
    columns = ["run", "first", "second", "cutoff", "n", "r", "p", "significant", "n_excluded"]
    out = pd.DataFrame(rows, columns=columns)
    out.attrs["alpha"] = alpha
    return out
