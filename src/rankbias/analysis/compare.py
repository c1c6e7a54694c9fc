"""Is one system's bias really different from another's?  Paired comparisons over queries.

From the tidy table ``run, qid, metric, cutoff, value`` that :func:`rankbias.scoring.score_runs`
(and ``rankbias score``) gives, every measure and cut-off is compared for every pair of runs
(or every run against a baseline) over the queries both runs define: the means, the mean
paired difference ``diff = mean_a − mean_b`` with a paired bootstrap percentile interval, the
paired standardised mean difference :math:`d_z = \\bar d / s_d` as effect size, a two-sided
p-value — a paired randomisation (sign-flip) test by default, exact over all :math:`2^n` sign
patterns for :math:`n \\le 16` queries, else Monte Carlo with :math:`(1 + b) / (1 + B)`;
scipy's paired t-test or Wilcoxon signed-rank test on request — p-values adjusted over the
whole family of comparisons in the call (Holm by default; statsmodels' ``multipletests``),
``significant`` when the adjusted p-value is at most ``alpha``, and which run is fairer, read
from the measure's declared direction.  Queries whose value is undefined (NaN) in either run,
and queries one run lacks, are counted (``n_undefined``, ``n_only_a``, ``n_only_b``), never
dropped silently; system-level rows (``qid`` ``all``) have no per-query values and are listed
in ``attrs["system_level"]``.
"""

from __future__ import annotations

import csv
import math
import re
from collections.abc import Sequence

import numpy as np
import pandas as pd

from rankbias.errors import (
    InputError,
    expect_choice,
    expect_count,
    expect_fraction,
    expect_items,
    expect_seed,
    expect_type,
    located,
)
from rankbias.inputs import Source, open_lines, source_name
from rankbias.metrics.measures import HigherIs, higher_is, split_cutoff
from rankbias.metrics.validation import as_array, check_values

__all__ = [
    "COLUMNS",
    "TESTS",
    "CORRECTIONS",
    "compare",
    "sign_flip_test",
    "check_scores",
    "read_scores",
]

COLUMNS = ("run", "qid", "metric", "cutoff", "value")
TESTS = ("randomisation", "t", "wilcoxon")
CORRECTIONS = {"holm": "holm", "bonferroni": "bonferroni", "bh": "fdr_bh", "none": None}
EXACT_MAX_QUERIES = 16  # an exact sign-flip test enumerates at most 2**16 sign patterns
SYSTEM_LEVEL_QID = "all"
OUTPUT = tuple(
    "metric cutoff run_a run_b n_queries mean_a mean_b diff ci_low ci_high effect_size p_value "
    "p_adjusted significant fairer test n_undefined n_only_a n_only_b".split()
)


def check_scores(scores: pd.DataFrame, what: str = "scores") -> pd.DataFrame:
    """``scores`` with the columns of :data:`COLUMNS` checked and typed (``cutoff`` a nullable
    integer, ``value`` a float, NaN allowed); a :class:`ValueError` naming what is wrong."""
    expect_type(scores, what, pd.DataFrame, "a DataFrame")
    missing = [c for c in COLUMNS if c not in scores.columns]
    if missing:
        raise ValueError(
            f"{what}: no column(s) {', '.join(missing)}; expected {','.join(COLUMNS)} "
            "(the table rankbias score writes)"
        )
    frame = scores[list(COLUMNS)].copy()
    for column in ("run", "qid", "metric"):
        bad = frame[column].isna() | (frame[column].astype(str).str.strip() == "")
        if bad.any():
            raise ValueError(f"{what}: row {int(np.argmax(bad))}: empty {column}; expected an id")
        frame[column] = frame[column].astype(str)
    try:
        frame["cutoff"] = pd.to_numeric(frame["cutoff"]).astype("Int64")
        frame["value"] = pd.to_numeric(frame["value"]).astype(float)
    except (TypeError, ValueError) as exc:
        raise ValueError(f"{what}: {exc}; expected integer cutoffs and numeric values") from None
    if np.isinf(frame["value"]).any():
        row = int(np.argmax(np.isinf(frame["value"].to_numpy())))
        raise ValueError(f"{what}: row {row}: value {frame['value'].iloc[row]}; expected finite")
    duplicated = frame.duplicated(["run", "qid", "metric", "cutoff"])
    if duplicated.any():
        run, qid, metric, cutoff = frame.loc[
            duplicated.idxmax(), ["run", "qid", "metric", "cutoff"]
        ]
        raise ValueError(
            f"{what}: run {run}, query {qid}, {metric}@{cutoff} is given twice; expected once"
        )
    return frame


_DECIMAL = re.compile(r"[+-]?([0-9]+\.?[0-9]*|\.[0-9]+)([eE][+-]?[0-9]+)?", re.ASCII)


def _field(text: str, name: str, number: int, column: str):
    text = text.strip()
    if column == "cutoff":
        if text and not re.fullmatch(r"[0-9]+", text):  # [0-9]: ASCII digits only
            raise located(name, number, f"cutoff {text!r}: expected a whole number or nothing")
        return int(text) if text else None
    if text in ("", "nan", "NaN"):
        return math.nan  # how rankbias score writes an undefined value
    if not _DECIMAL.fullmatch(text) or not math.isfinite(float(text)):
        raise located(name, number, f"value {text!r}: expected a finite decimal number or nothing")
    return float(text)


def read_scores(source: Source) -> pd.DataFrame:
    """A scores table as ``rankbias score`` writes it (CSV, TSV, optionally gzip, or Parquet),
    checked: a header with the columns of :data:`COLUMNS` (others are ignored), a whole
    cut-off, a finite value or nothing (NaN), each (run, query, measure, cut-off) once; bad
    input names the file and line."""
    name = source_name(source)
    if name.lower().endswith(".parquet"):
        try:
            frame = pd.read_parquet(source)
        except (OSError, ValueError) as exc:
            raise located(name, None, f"not readable as Parquet ({exc})") from None
        try:
            return check_scores(frame, what=name)
        except ValueError as exc:
            raise InputError(str(exc)) from None
    lines = open_lines(source, "scores table")
    first = next(lines, None)
    if first is None:
        raise located(name, None, f"the file is empty; expected a header {','.join(COLUMNS)}")
    separator = "\t" if "\t" in first[1] else ","
    header = [c.strip() for c in next(csv.reader([first[1]], delimiter=separator))]
    if any(c not in header for c in COLUMNS):
        expected = f"{','.join(COLUMNS)} (the table rankbias score writes)"
        raise located(name, 1, f"header {first[1][:120]!r}: expected the columns {expected}")
    where = [header.index(c) for c in COLUMNS]
    rows, seen = [], {}
    for number, text in lines:
        fields = next(csv.reader([text], delimiter=separator))
        if len(fields) != len(header):
            raise located(name, number, f"found {len(fields)} field(s); expected {len(header)}")
        run, qid, metric, cutoff, value = (fields[i] for i in where)
        if not (run.strip() and qid.strip() and metric.strip()):
            raise located(name, number, "empty run, qid or metric; expected an id")
        key = (run, qid, metric, _field(cutoff, name, number, "cutoff"))
        if key in seen:
            again = f"{run}, {qid}, {metric}@{key[3]} is already given on line {seen[key]}"
            raise located(name, number, f"{again}; expected each once")
        seen[key] = number
        rows.append((*key, _field(value, name, number, "value")))
    if not rows:
        raise located(name, None, "the table has a header but no data line")
    frame = pd.DataFrame(rows, columns=list(COLUMNS))
    frame["cutoff"] = frame["cutoff"].astype("Int64")
    return frame


def sign_flip_test(
    differences: np.ndarray, permutations: int = 10_000, rng: np.random.Generator | None = None
) -> tuple[float, bool]:
    """Two-sided p-value of a paired randomisation test of mean difference 0, and whether it
    is exact: over all :math:`2^n` sign patterns when :math:`n \\le 16`, else over
    ``permutations`` random ones as :math:`(1 + b) / (1 + B)`."""
    d = as_array(differences, "differences", 1)
    check_values(d, "differences")
    if len(d) == 0:
        raise ValueError("differences: expected at least one paired difference, found none")
    observed = abs(d.mean())
    tolerance = 1e-12 * max(1.0, float(np.abs(d).max(initial=0.0)))
    if len(d) <= EXACT_MAX_QUERIES:
        patterns = (np.arange(2 ** len(d))[:, None] >> np.arange(len(d))) & 1
        means = np.abs(((1 - 2 * patterns) * d).mean(axis=1))
        return float(np.mean(means >= observed - tolerance)), True
    rng = np.random.default_rng(0) if rng is None else rng
    hits, done = 0, 0
    while done < permutations:  # in blocks: at most ~16 MB of signs at a time
        block = min(permutations - done, max(1, 2_000_000 // len(d)))
        signs = rng.integers(0, 2, (block, len(d)), dtype=np.int8) * 2 - 1
        hits += int(np.sum(np.abs(signs @ d) / len(d) >= observed - tolerance))
        done += block
    return (1 + hits) / (1 + permutations), False


def _bootstrap_interval(d, confidence, resamples, rng) -> tuple[float, float]:
    means = np.empty(resamples)
    step = max(1, 2_000_000 // len(d))
    for start in range(0, resamples, step):
        stop = min(resamples, start + step)
        means[start:stop] = d[rng.integers(0, len(d), (stop - start, len(d)))].mean(axis=1)
    tail = (1 - confidence) / 2
    low, high = np.quantile(means, [tail, 1 - tail])
    return float(low), float(high)


def _p_value(test, a, b, permutations, rng) -> tuple[float, str]:
    d = a - b
    if not np.any(d):
        return 1.0, {"randomisation": "randomisation (exact)", "t": "paired t"}.get(test, test)
    if test == "randomisation":
        p, exact = sign_flip_test(d, permutations, rng)
        return p, "randomisation (exact)" if exact else f"randomisation ({permutations} sign flips)"
    from scipy import stats

    if test == "t":
        return float(stats.ttest_rel(a, b).pvalue), "paired t"
    return float(stats.wilcoxon(a, b).pvalue), "wilcoxon"


def _fairer(metric: str, run_a: str, run_b: str, diff: float) -> str:
    direction = higher_is(metric)
    if direction is None:
        return "unknown direction"
    if direction == HigherIs.SIGNED:
        return "signed measure: compare |value|"
    if direction == HigherIs.NEITHER:
        return "not a fairness score"
    if not diff or math.isnan(diff):
        return "neither"
    higher = run_a if diff > 0 else run_b
    lower = run_b if diff > 0 else run_a
    return higher if direction == HigherIs.FAIRER else lower


def _pairs(runs: list[str], baseline: str | None) -> list[tuple[str, str]]:
    if len(runs) < 2:
        held = f"{len(runs)} run(s) ({', '.join(runs)})"
        raise InputError(f"the scores hold {held}; expected two or more runs to compare")
    if baseline is None:
        return [(a, b) for i, a in enumerate(runs) for b in runs[i + 1 :]]
    if baseline not in runs:
        expected = ", ".join(runs)
        raise InputError(
            f"baseline {baseline!r} is not a run of the scores; expected one of {expected}"
        )
    return [(run, baseline) for run in runs if run != baseline]


def compare(
    scores: pd.DataFrame,
    baseline: str | None = None,
    test: str = "randomisation",
    permutations: int = 10_000,
    bootstrap: int = 10_000,
    confidence: float = 0.95,
    correction: str = "holm",
    alpha: float = 0.05,
    seed: int = 0,
    metrics: Sequence[str] | None = None,
) -> pd.DataFrame:
    """One row per measure, cut-off and pair of runs (columns :data:`OUTPUT`; see the module
    docstring).  ``baseline`` compares every other run with it (``run_a`` the run, ``run_b``
    the baseline); ``metrics`` keeps only those measures (``nfairr`` at every cut-off,
    ``nfairr@10`` at 10).  Seeded by ``seed``: the same
    call gives the same table."""
    expect_choice(test, "test", TESTS)
    expect_choice(correction, "correction", tuple(CORRECTIONS))
    expect_count(permutations, "permutations")
    expect_count(bootstrap, "bootstrap")
    rng = expect_seed(seed)
    if isinstance(metrics, str):
        raise TypeError(f"metrics: expected a list of measure names, found {metrics!r}")
    expect_fraction(confidence, "confidence")
    expect_fraction(alpha, "alpha")
    frame = check_scores(scores)
    if metrics is not None:  # a name at all its cut-offs, name@k at one, or 'P@10' as a name
        if not (metrics := expect_items(metrics, "metrics", "a list of measure names")):
            raise ValueError("metrics: expected at least one measure name, found none")
        wanted = [(m, *split_cutoff(m)) for m in metrics]
        keep = {m: ((frame["metric"] == name) & (frame["cutoff"] == k if k else True))
                | (frame["metric"] == m) for m, name, k in wanted}  # fmt: skip
        if unknown := sorted(m for m, rows in keep.items() if not rows.any()):
            known = ", ".join(sorted(set(frame["metric"])))
            raise InputError(
                f"metric(s) {', '.join(unknown)} not in the scores; expected {known} (name@k: "
                "at the cut-off k only)"
            )
        frame = frame[np.logical_or.reduce(list(keep.values()))]
    system = frame["qid"] == SYSTEM_LEVEL_QID
    system_level = sorted(set(frame.loc[system, "metric"]))
    frame = frame[~system]
    pairs = _pairs(list(dict.fromkeys(frame["run"])), baseline)
    rows = []
    for (metric, cutoff), group in frame.groupby(["metric", "cutoff"], sort=False, dropna=False):
        wide = group.pivot(index="qid", columns="run", values="value")
        present = group.groupby("run")["qid"].agg(set)
        for run_a, run_b in pairs:
            has_a, has_b = present.get(run_a, set()), present.get(run_b, set())
            both = wide.reindex(index=sorted(has_a & has_b), columns=[run_a, run_b])
            defined = both.dropna()
            a, b = (defined[run].to_numpy(dtype=float) for run in (run_a, run_b))
            row = dict.fromkeys(OUTPUT, np.nan)
            row.update(metric=metric, cutoff=cutoff, run_a=run_a, run_b=run_b, n_queries=len(a))
            row.update(n_undefined=len(both) - len(a), n_only_a=len(has_a - has_b))
            row.update(n_only_b=len(has_b - has_a), fairer="", test="")
            if len(a):
                d = a - b
                row.update(mean_a=a.mean(), mean_b=b.mean(), diff=d.mean())
                row["fairer"] = _fairer(metric, run_a, run_b, row["diff"])
            if len(a) >= 2:
                row["ci_low"], row["ci_high"] = _bootstrap_interval(d, confidence, bootstrap, rng)
                spread = d.std(ddof=1)
                row["effect_size"] = d.mean() / spread if spread > 0 else np.nan
                row["p_value"], row["test"] = _p_value(test, a, b, permutations, rng)
            rows.append(row)
    table = pd.DataFrame(rows, columns=list(OUTPUT))
    tested = table["p_value"].notna()
    if CORRECTIONS[correction] is None or not tested.any():
        table["p_adjusted"] = table["p_value"]
    else:
        from statsmodels.stats.multitest import multipletests

        adjusted = multipletests(table.loc[tested, "p_value"], method=CORRECTIONS[correction])
        table.loc[tested, "p_adjusted"] = adjusted[1]
    table["significant"] = (table["p_adjusted"] <= alpha).astype(bool)  # as multipletests' reject
    table["cutoff"] = table["cutoff"].astype("Int64")
    table.attrs = dict(system_level=system_level, test=test, correction=correction, alpha=alpha)
    table.attrs.update(confidence=confidence, seed=seed)
    return table


def forest_plot(table: pd.DataFrame, path=None):
    """A forest plot of :func:`compare`'s table: one row per measure, cut-off and pair (named
    by the run alone when all share one baseline), the mean difference (filled where
    significant after adjustment) with its interval; saved to
    ``path`` (``.png`` or ``.svg``) when given.  Returns the figure."""
    import matplotlib

    if path is not None:
        matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    from rankbias.metrics.measures import display_name

    rows = table.dropna(subset=["diff"]).iloc[::-1]
    baseline = rows["run_b"].iloc[0] if rows["run_b"].nunique() == 1 else None
    labels = [
        f"{display_name(f'{r.metric}@{r.cutoff}' if pd.notna(r.cutoff) else r.metric)}: "
        + (r.run_a if baseline is not None else f"{r.run_a} − {r.run_b}")
        for r in rows.itertuples()
    ]
    figure, axis = plt.subplots(figsize=(6.5, 0.9 + 0.3 * len(rows)))
    y = np.arange(len(rows))
    axis.errorbar(
        rows["diff"],
        y,
        xerr=[rows["diff"] - rows["ci_low"], rows["ci_high"] - rows["diff"]],
        fmt="none",
        ecolor="0.35",
        capsize=2,
    )
    significant = rows["significant"].to_numpy(dtype=bool)
    for shown, face, label in [
        (significant, "C0", "significant (adjusted)"),
        (~significant, "white", "not significant"),
    ]:
        axis.scatter(
            rows["diff"][shown], y[shown], facecolor=face, edgecolor="C0", zorder=3, label=label
        )
    axis.axvline(0, color="0.5", lw=0.8, ls=":")
    axis.xaxis.set_major_locator(plt.MaxNLocator(5))
    axis.set_yticks(y, labels)
    confidence = table.attrs.get("confidence", 0.95)
    against = f"from {baseline}" if baseline is not None else "(run a − run b)"
    axis.set_xlabel(f"mean paired difference {against}, {confidence:.0%} interval")
    axis.legend(loc="lower left", bbox_to_anchor=(0, 1), ncol=2, frameon=False)
    figure.tight_layout()
    if path is not None:
        figure.savefig(path, dpi=150, bbox_inches="tight")
        plt.close(figure)
    return figure
