r"""How much do the metrics depend on the word list?  (Klasnja et al. (2022), RQ2,
Fig. 3.)

Subsampling
-----------
Keep a fraction ``f`` of the terms of the word list — of each group's terms by default
(:func:`rankbias.lexicon.subsample`, ``stratified=True``), or of the pooled list — with a seed,
and recompute every metric for every query of every run.  The collection is not read again: the
per-term counts ``tf(t, d)`` (:attr:`rankbias.text.DocStats.term_counts`, a sparse document ×
term matrix, from ``per_term=True``) make a sub-list a *column selection*,

.. math::  M_g^{V'}(d) = \sum_{t \in V_g \cap V'} \mathrm{tf}(t, d)
           = \big(\mathrm{tf}_{:, V'} \, \mathbf{1}_{V' \to g}\big)_{d, g} ,

which :func:`subsample_stats` turns into the :class:`~rankbias.text.DocStats` the sub-list would
have given (group counts, kept terms, their counts; document lengths do not depend on the list),
and :func:`subsampling_study` scores with :func:`rankbias.scoring.score_runs` for every fraction
and seed.  Keeping every term (``f = 1``) gives the full-list statistics exactly, whatever the
seed, so that fraction is computed once and stored with seed 0.

Summaries
---------
- :func:`distribution_summary` — per run, metric, cutoff and fraction, the box-plot numbers of
  the per-query values pooled over seeds (mean, median, quartiles, min, max; Fig. 3), the mean
  over seeds of each replicate's range and IQR, and their ratio to the full list's (the
  *shrinkage* of the range: < 1 when fewer terms squeeze the queries together).
- :func:`rank_stability` — per replicate, Spearman ρ between the queries' bias levels under the
  sub-list and under the full list, and the share of queries that stay in the same quartile bin
  (bins as in :mod:`rankbias.analysis.consistency`: most biased first, ties by qid).  Bias levels
  follow that module's mapping; a metric without one (``rbdf``, group parts) is ranked by its
  value.
- :func:`top_category_stability` — how often each psycholinguistic category is among a metric's
  top ``k`` (:func:`rankbias.analysis.psycholinguistic.top_categories`) across the seeds of each
  fraction: the paper's remark that the characteristics depend on the list, measured.

Undefined values (NaN) are never dropped silently: the summaries count them (``n_undefined``,
``n_excluded``).
"""

from __future__ import annotations

import dataclasses
import warnings
from collections.abc import Iterable, Mapping, Sequence
from contextlib import contextmanager

import numpy as np
import pandas as pd
import scipy.sparse as sp
from scipy import stats as sps

from rankbias.analysis.consistency import DIRECTIONS, _bins, _ranks, bias_direction
from rankbias.analysis.psycholinguistic import correlate, top_categories
from rankbias.errors import InputError
from rankbias.lexicon import Lexicon, subsample
from rankbias.runs import Run
from rankbias.scoring import DEFAULT_MEASURES, score_runs
from rankbias.text import DocStats

__all__ = [
    "DEFAULT_FRACTIONS",
    "lexicon_of",
    "subsample_stats",
    "subsampling_study",
    "distribution_summary",
    "rank_stability",
    "top_category_stability",
    "subsample_coverage",
]

DEFAULT_FRACTIONS = (0.25, 0.5, 0.75, 1.0)
_KEYS = ["run", "metric", "cutoff"]


def lexicon_of(stats: DocStats) -> Lexicon:
    """The word list the statistics were computed with (terms, groups), as a :class:`Lexicon`."""
    mapping = {t: stats.groups[g] for t, g in zip(stats.terms, stats.term_group, strict=True)}
    return Lexicon.from_mapping(mapping, groups=stats.groups, source="<DocStats terms>")


def subsample_stats(stats: DocStats, lexicon: Lexicon) -> DocStats:
    """The statistics ``lexicon`` (a sub-list of ``stats``' terms) would give, by column selection.

    Needs ``stats.term_counts`` (``per_term=True``).  A term of ``lexicon`` that ``stats`` lacks,
    or assigned to another group, is an :class:`InputError`; ``lexicon.groups`` must be
    ``stats.groups``.
    """
    if stats.term_counts is None:
        raise InputError(
            "the statistics have no per-term counts; compute them with per_term=True "
            "(rankbias.text.document_stats / read_collection_stats) to subsample the word list"
        )
    if tuple(lexicon.groups) != tuple(stats.groups):
        raise InputError(
            f"the word list has groups {list(lexicon.groups)}, the statistics "
            f"{list(stats.groups)}; expected the same groups in the same order"
        )
    column = {t: j for j, t in enumerate(stats.terms)}
    kept_terms = lexicon.terms
    unknown = [t for t in kept_terms if t not in column]
    if unknown:
        raise InputError(
            f"{len(unknown)} term(s) of the word list are not columns of the statistics, e.g. "
            f"{unknown[:5]}; expected a sub-list of the terms the statistics were computed with"
        )
    kept = np.array([column[t] for t in kept_terms], dtype=np.int64)
    group_of = np.asarray(stats.term_group)[kept]
    expected = lexicon.group_index()
    moved = np.flatnonzero(group_of != expected)
    if len(moved):
        t = kept_terms[moved[0]]
        raise InputError(
            f"term {t!r} is in group {lexicon.term_to_group[t]!r} in the word list but in "
            f"another group, {stats.groups[group_of[moved[0]]]!r}, in the statistics; expected "
            "the same group"
        )
    counts = stats.term_counts.tocsc()[:, kept].tocsr()
    indicator = sp.csr_matrix(
        (np.ones(len(kept), dtype=np.int64), (np.arange(len(kept)), group_of)),
        shape=(len(kept), len(stats.groups)),
    )
    group_counts = np.asarray((counts @ indicator).todense(), dtype=np.int64)
    return dataclasses.replace(
        stats,
        group_counts=group_counts,
        terms=tuple(kept_terms),
        term_group=group_of.astype(np.asarray(stats.term_group).dtype),
        term_counts=counts,
    )


def subsampling_study(
    runs: Run | Sequence[Run],
    stats: DocStats,
    metrics: Sequence[str] = DEFAULT_MEASURES,
    cutoffs: Sequence[int] = (10,),
    fractions: Sequence[float] = DEFAULT_FRACTIONS,
    seeds: Iterable[int] = range(50),
    stratified: bool = True,
    lexicon: Lexicon | None = None,
    **options,
) -> pd.DataFrame:
    """Every metric of every run, recomputed on sub-lists of the word list.

    For each fraction in ``fractions`` and each seed in ``seeds``, the sub-list
    ``subsample(lexicon, fraction, seed, stratified)`` (``lexicon`` defaults to the terms of
    ``stats``, :func:`lexicon_of`), its statistics by :func:`subsample_stats`, and
    :func:`rankbias.scoring.score_runs` with ``metrics``, ``cutoffs`` and ``options`` (``tau``,
    ``background``, ``missing``, …).  Fraction 1 is scored once (seed 0), with the runs as given
    (so score_runs checks every retrieved document); the sub-lists score the runs cut to the
    largest cutoff, which reads the same documents and gives the same values.

    Returns columns ``fraction, seed, run, qid, metric, cutoff, value`` (``run``, ``qid``,
    ``metric`` and ``cutoff`` categorical, rows of every replicate in score_runs' order);
    ``attrs["undefined_values"]`` maps ``(fraction, seed)`` to score_runs' NaN counts,
    ``attrs["terms_kept"]`` to the number of terms kept per group.
    """
    runs = [runs] if isinstance(runs, Run) else list(runs)
    lexicon = lexicon_of(stats) if lexicon is None else lexicon
    seeds = [int(s) for s in seeds]
    fractions = [float(f) for f in fractions]
    if not seeds:
        raise ValueError("no seeds; expected at least one")
    bad = [f for f in fractions if not 0.0 < f <= 1.0]
    if bad or not fractions:
        raise ValueError(f"fractions must be in (0, 1], found {fractions}")
    full = score_runs(runs, subsample_stats(stats, lexicon), metrics, cutoffs, **options)
    width = max(int(k) for k in cutoffs)
    cut_runs = [run.cut(width) for run in runs]
    layout = {c: pd.Categorical(full[c].to_numpy()) for c in ("run", "qid", "metric", "cutoff")}
    values, labels, undefined, kept = [], [], {}, {}
    for fraction in fractions:
        for seed in seeds if fraction < 1.0 else [0]:
            if fraction < 1.0:
                try:
                    sub = subsample(lexicon, fraction, seed, stratified)
                except InputError as error:
                    raise InputError(f"fraction {fraction}, seed {seed}: {error}") from None
                scored = score_runs(
                    cut_runs, subsample_stats(stats, sub), metrics, cutoffs, **options
                )
                if len(scored) != len(full):
                    raise AssertionError("score_runs changed its row layout between sub-lists")
            else:
                sub, scored = lexicon, full
            undefined[(fraction, seed)] = dict(scored.attrs.get("undefined_values", {}))
            kept[(fraction, seed)] = {g: len(sub.terms_of(g)) for g in sub.groups}
            values.append(scored["value"].to_numpy(dtype=np.float64))
            labels.append((fraction, seed))
    n_rows, n_rep = len(full), len(values)
    study = pd.DataFrame(
        {
            "fraction": np.repeat([f for f, _ in labels], n_rows),
            "seed": np.repeat(np.array([s for _, s in labels], dtype=np.int32), n_rows),
            **{
                c: pd.Categorical.from_codes(np.tile(cat.codes, n_rep), cat.categories)
                for c, cat in layout.items()
            },
            "value": np.concatenate(values),
        }
    )
    study.attrs = {"undefined_values": undefined, "terms_kept": kept, "stratified": stratified}
    return study


def _check_study(study: pd.DataFrame) -> None:
    lacking = [c for c in ("fraction", "seed", *_KEYS, "qid", "value") if c not in study.columns]
    if lacking:
        raise InputError(
            f"the study table lacks column(s) {lacking}; expected the output of subsampling_study"
        )


def _codes(column: pd.Series) -> tuple[np.ndarray, np.ndarray]:
    """Integer codes (order of first appearance, or the categories' order) and their labels."""
    if isinstance(column.dtype, pd.CategoricalDtype):
        return np.asarray(column.cat.codes, dtype=np.int64), np.asarray(column.cat.categories)
    codes, labels = pd.factorize(column.to_numpy(), sort=False)
    return codes.astype(np.int64), np.asarray(labels)


def _dense_codes(codes: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """``np.unique(codes, return_inverse=True)`` for small non-negative integers, in O(n)."""
    if len(codes) == 0:
        return codes, codes
    seen = np.zeros(int(codes.max()) + 1, dtype=bool)
    seen[codes] = True
    rank = np.cumsum(seen) - 1
    return np.flatnonzero(seen), rank[codes]


def _replicate_matrices(study: pd.DataFrame):
    """Per (run, metric, cutoff): the replicates (fraction, seed), the qids in string order,
    the ``(replicates, queries)`` values (NaN where undefined or absent) and a presence mask.

    Groups come in the order of the study's categories (score_runs' order for a study from
    :func:`subsampling_study`), else of first appearance."""
    _check_study(study)
    key_codes, key_labels = zip(*(_codes(study[c]) for c in _KEYS), strict=True)
    group = np.zeros(len(study), dtype=np.int64)
    for codes, labels in zip(key_codes, key_labels, strict=True):
        group = group * len(labels) + codes
    q_codes, q_labels = _codes(study["qid"])
    q_labels = q_labels.astype(str)
    order = np.argsort(q_labels, kind="stable")  # qids in string order: ties broken by qid
    q_rank = np.empty(len(order), dtype=np.int64)
    q_rank[order] = np.arange(len(order))
    q_sorted = q_rank[q_codes]
    f_labels, f_codes = np.unique(study["fraction"].to_numpy(dtype=np.float64), return_inverse=True)
    s_labels, s_codes = np.unique(study["seed"].to_numpy(), return_inverse=True)
    replicate = f_codes * len(s_labels) + s_codes
    value = study["value"].to_numpy(dtype=np.float64)
    _, inverse = _dense_codes(group)
    # a stable radix sort when the group codes fit in 16 bits
    small = inverse.astype(np.uint16) if inverse.max(initial=0) < 2**16 else inverse
    by_group = np.argsort(small, kind="stable")
    bounds = np.flatnonzero(np.diff(inverse[by_group])) + 1
    for positions in np.split(by_group, bounds):
        first = positions[0]
        key = tuple(
            labels[codes[first]] for codes, labels in zip(key_codes, key_labels, strict=True)
        )
        reps, rep_inv = _dense_codes(replicate[positions])
        qids, q_inv = _dense_codes(q_sorted[positions])
        cells = np.bincount(rep_inv * len(qids) + q_inv, minlength=len(reps) * len(qids))
        if cells.max(initial=0) > 1:
            raise InputError(
                f"the study has several values for one query of {key} in one replicate; "
                "expected one per (fraction, seed, run, qid, metric, cutoff)"
            )
        matrix = np.full((len(reps), len(qids)), np.nan)
        present = np.zeros(matrix.shape, dtype=bool)
        matrix[rep_inv, q_inv] = value[positions]
        present[rep_inv, q_inv] = True
        replicates = pd.DataFrame(
            {"fraction": f_labels[reps // len(s_labels)], "seed": s_labels[reps % len(s_labels)]}
        )
        yield key, replicates, q_labels[order][qids], matrix, present


def distribution_summary(study: pd.DataFrame) -> pd.DataFrame:
    """Box-plot numbers and range / IQR shrinkage per run, metric, cutoff and fraction.

    Columns ``run, metric, cutoff, fraction, n_values`` (defined values pooled over seeds),
    ``n_undefined`` (NaN values of the table), ``n_absent`` (cells of a query the table has for
    other replicates of the same run, metric and cut-off but not for this one: counted, not
    filled), ``mean, median, q1, q3, min, max`` (pooled; linear quantiles),
    ``range_mean, iqr_mean`` (the mean over seeds of each replicate's max − min and q3 − q1)
    and ``range_ratio, iqr_ratio`` (those means divided by the full list's range and IQR; NaN
    without a fraction-1 row or when the full list's is 0).
    """
    rows = []
    for key, replicates, _, matrix, present in _replicate_matrices(study):
        fractions = replicates["fraction"].to_numpy()
        finite = np.isfinite(matrix)
        lo, hi, q1, q3 = _row_spread(matrix, finite)
        for fraction in np.unique(fractions):
            reps = fractions == fraction
            pooled = matrix[reps][finite[reps]]
            record = dict(zip(_KEYS, key, strict=True), fraction=float(fraction))
            record["n_values"] = int(pooled.size)
            record["n_undefined"] = int((present[reps] & ~finite[reps]).sum())
            record["n_absent"] = int((~present[reps]).sum())
            if pooled.size:
                p25, p50, p75 = np.quantile(pooled, [0.25, 0.5, 0.75])
                record.update(mean=pooled.mean(), median=p50, q1=p25, q3=p75)
                record.update(min=pooled.min(), max=pooled.max())
            else:
                record.update(mean=np.nan, median=np.nan, q1=np.nan, q3=np.nan)
                record.update(min=np.nan, max=np.nan)
            with _quiet():
                record["range_mean"] = float(np.nanmean((hi - lo)[reps]))
                record["iqr_mean"] = float(np.nanmean((q3 - q1)[reps]))
            rows.append(record)
    out = pd.DataFrame(rows)
    full = out[out["fraction"] == 1.0].set_index(_KEYS)[["range_mean", "iqr_mean"]]
    reference = full.reindex(pd.MultiIndex.from_frame(out[_KEYS])).to_numpy()
    with np.errstate(invalid="ignore", divide="ignore"):
        ratios = out[["range_mean", "iqr_mean"]].to_numpy() / np.where(
            reference == 0, np.nan, reference
        )
    out["range_ratio"] = ratios[:, 0]
    out["iqr_ratio"] = ratios[:, 1]
    return out


@contextmanager
def _quiet():
    """Silence NumPy's "all-NaN slice" warnings: an all-undefined replicate gives NaN, counted."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        yield


def _row_spread(matrix: np.ndarray, finite: np.ndarray):
    """Per row: min, max, first and third quartile (linear) of the finite values; NaN if none."""
    lo, hi, q1, q3 = (np.full(len(matrix), np.nan) for _ in range(4))
    complete = finite.all(axis=1)
    if complete.any() and matrix.shape[1]:
        block = matrix[complete]
        lo[complete], hi[complete] = block.min(axis=1), block.max(axis=1)
        q1[complete], q3[complete] = np.quantile(block, [0.25, 0.75], axis=1)
    for i in np.flatnonzero(~complete):
        row = matrix[i, finite[i]]
        if row.size:
            lo[i], hi[i] = row.min(), row.max()
            q1[i], q3[i] = np.quantile(row, [0.25, 0.75])
    return lo, hi, q1, q3


def _level(metric: str, values: np.ndarray, directions) -> np.ndarray:
    try:
        return DIRECTIONS[bias_direction(metric, directions)](values)
    except ValueError:
        return values  # not a fairness score (rbdf, group parts): ranked by value


def rank_stability(
    study: pd.DataFrame, n_bins: int = 4, directions: Mapping[str, str] | None = None
) -> pd.DataFrame:
    """Per replicate, agreement of the query ranking with the full list's.

    Columns ``run, metric, cutoff, fraction, seed, n`` (queries defined under both lists),
    ``n_excluded`` (queries of the run undefined under either), ``spearman_rho`` (bias levels;
    NaN when either is constant) and ``bin_agreement`` (share of the ``n`` queries whose bin,
    of ``n_bins``, is the same under both lists; bins recomputed on those ``n`` queries, ties
    broken by qid).  Needs the fraction-1 row of every (run, metric, cutoff).
    """
    parts = []
    for key, replicates, _, matrix, _ in _replicate_matrices(study):
        fractions = replicates["fraction"].to_numpy()
        if not (fractions == 1.0).any():
            raise InputError(
                f"no fraction-1 row for {key}; rank stability compares with the full list"
            )
        levels = _level(key[1], matrix, directions)
        reference = levels[np.flatnonzero(fractions == 1.0)[0]]
        rho, agreement, n, excluded = _stability(levels, reference, n_bins)
        part = replicates.copy()
        for column, value in zip(_KEYS, key, strict=True):
            part.insert(_KEYS.index(column), column, value)
        part["n"], part["n_excluded"] = n, excluded
        part["spearman_rho"], part["bin_agreement"] = rho, agreement
        parts.append(part)
    return pd.concat(parts, ignore_index=True)


def _stability(levels: np.ndarray, reference: np.ndarray, n_bins: int):
    """Spearman ρ and bin agreement of each row of ``levels`` with ``reference``."""
    n_rep, n_q = levels.shape
    ok = np.isfinite(levels) & np.isfinite(reference)[None, :]
    n = ok.sum(axis=1)
    rho = np.full(n_rep, np.nan)
    agreement = np.full(n_rep, np.nan)
    complete = ok.all(axis=1)
    if complete.any() and n_q >= 2:  # every query defined: all rows at once
        block = levels[complete]
        ranks = sps.rankdata(block, axis=1)
        ref_rank = sps.rankdata(reference)
        centred = ranks - ranks.mean(axis=1, keepdims=True)
        ref_centred = ref_rank - ref_rank.mean()
        with np.errstate(invalid="ignore", divide="ignore"):
            rho[complete] = (centred @ ref_centred) / (
                np.sqrt((centred**2).sum(axis=1)) * np.sqrt((ref_centred**2).sum())
            )
        if n_q >= n_bins:
            bins = _bins(_ranks(np.column_stack([reference, block.T])), n_bins)
            agreement[complete] = (bins[:, 1:] == bins[:, :1]).mean(axis=0)
    for i in np.flatnonzero(~complete):
        a, b = reference[ok[i]], levels[i, ok[i]]
        if len(a) >= 2 and np.ptp(a) > 0 and np.ptp(b) > 0:
            rho[i] = sps.spearmanr(a, b).statistic
        if len(a) >= max(n_bins, 2):
            bins = _bins(_ranks(np.column_stack([a, b])), n_bins)
            agreement[i] = np.mean(bins[:, 0] == bins[:, 1])
    return rho, agreement, n, n_q - n


def top_category_stability(
    study: pd.DataFrame,
    shares: pd.DataFrame,
    run: str,
    cutoff: int = 10,
    metrics: Sequence[str] | None = None,
    k: int = 5,
    adjust: bool = True,
    alpha: float = 0.05,
    family: str = "metric",
) -> pd.DataFrame:
    """How often each category is among a metric's top ``k`` across the seeds of each fraction.

    ``shares``: the run's category shares
    (:func:`~rankbias.analysis.psycholinguistic.category_shares`; they do not depend on the
    word list).  For each (fraction, seed), :func:`correlate` and
    :func:`top_categories` on the run's per-query values.  Columns ``metric, fraction, category,
    n_seeds, in_top`` (share of the seeds where the category is in the top ``k``) and
    ``mean_rank`` (over those seeds), sorted by metric, fraction and ``in_top`` descending.
    """
    _check_study(study)
    rows = study[(study["run"] == run) & (study["cutoff"] == cutoff)]
    if metrics is not None:
        rows = rows[rows["metric"].isin(list(metrics))]
    if rows.empty:
        raise InputError(f"the study has no rows for run {run!r} at cutoff {cutoff}")
    frame = pd.DataFrame(
        {c: rows[c].to_numpy() for c in ("fraction", "seed", "qid", "metric", "value")}
    )
    share_rows = shares[shares["run"] == run] if "run" in shares.columns else shares
    share_rows = share_rows[["qid", "category", "value"]]
    found = []
    n_seeds = {}
    for (fraction, seed), replicate in frame.groupby(["fraction", "seed"], sort=True):
        corr = correlate(
            replicate[["qid", "metric", "value"]], share_rows, alpha=alpha, family=family
        )
        top = top_categories(corr, k=k, adjust=adjust)
        n_seeds[fraction] = n_seeds.get(fraction, 0) + 1
        found.append(top.assign(fraction=fraction, seed=seed))
    tops = pd.concat(found, ignore_index=True)
    if tops.empty:
        return pd.DataFrame(
            columns=["metric", "fraction", "category", "n_seeds", "in_top", "mean_rank"]
        )
    out = (
        tops.groupby(["metric", "fraction", "category"], sort=True)
        .agg(times=("rank", "size"), mean_rank=("rank", "mean"))
        .reset_index()
    )
    out["n_seeds"] = out["fraction"].map(n_seeds)
    out["in_top"] = out["times"] / out["n_seeds"]
    out = out.sort_values(["metric", "fraction", "in_top", "category"],
                          ascending=[True, True, False, True])  # fmt: skip
    return out[["metric", "fraction", "category", "n_seeds", "in_top", "mean_rank"]].reset_index(
        drop=True
    )


def subsample_coverage(
    stats: DocStats,
    lexicon: Lexicon,
    fractions: Sequence[float],
    seeds: Iterable[int],
    stratified: bool = True,
) -> pd.DataFrame:
    """What a sub-list still sees of the collection, per fraction, seed and group.

    For each ``fraction`` and ``seed``, :func:`rankbias.lexicon.subsample` draws a sub-list (the
    draw of :func:`subsampling_study`), and :func:`subsample_stats` gives its counts.  One row
    per fraction, seed and group: ``terms`` (kept), ``occurrences`` (of the kept terms in the
    collection), ``occurrence_share`` (of the full list's occurrences of that group; NaN when
    the group never occurs) and ``documents`` (documents with at least one kept term of the
    group).  ``stats`` needs per-term counts (``per_term=True``).
    """
    seeds = list(seeds)
    full = stats.group_counts.sum(axis=0)
    rows = []
    for fraction in fractions:
        for seed in seeds:
            sub = subsample(lexicon, fraction, seed, stratified=stratified)
            counts = subsample_stats(stats, sub).group_counts
            for j, group in enumerate(stats.groups):
                kept = int(counts[:, j].sum())
                rows.append(
                    {
                        "fraction": float(fraction),
                        "seed": int(seed),
                        "group": group,
                        "terms": len(sub.terms_of(group)),
                        "occurrences": kept,
                        "occurrence_share": kept / full[j] if full[j] else float("nan"),
                        "documents": int((counts[:, j] > 0).sum()),
                    }
                )
    return pd.DataFrame(rows)
