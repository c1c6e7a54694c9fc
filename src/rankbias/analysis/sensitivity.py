r"""How much do the metrics depend on the word list?  (Klasnja et al. (2022), RQ2, Fig. 3.)

Keep a fraction ``f`` of the word list's terms, with a seed (:func:`rankbias.lexicon.subsample`,
stratified by group by default), and rescore every run; with per-term counts
(``per_term=True``) a sub-list is a column selection, no new read of the collection:

.. math::  M_g^{V'}(d) = \sum_{t \in V_g \cap V'} \mathrm{tf}(t, d)
           = \big(\mathrm{tf}_{:, V'} \, \mathbf{1}_{V' \to g}\big)_{d, g} .
"""

from __future__ import annotations

import dataclasses
from collections.abc import Iterable, Sequence

import numpy as np
import pandas as pd
import scipy.sparse as sp

from rankbias.errors import InputError, expect_count, expect_items, expect_type
from rankbias.lexicon import Lexicon, subsample
from rankbias.runs import Run, arrow_docids
from rankbias.scoring import DEFAULT_MEASURES, collection_aggregates, plan_measures, score_runs
from rankbias.text import DocStats

__all__ = [
    "DEFAULT_FRACTIONS",
    "lexicon_of",
    "subsample_stats",
    "subsampling_study",
    "subsample_coverage",
]

DEFAULT_FRACTIONS = (0.25, 0.5, 0.75, 1.0)


def lexicon_of(stats: DocStats) -> Lexicon:
    """The word list the statistics were computed with (terms, groups), as a :class:`Lexicon`."""
    expect_type(stats, "stats", DocStats, "the DocStats of a collection")
    mapping = {t: stats.groups[g] for t, g in zip(stats.terms, stats.term_group, strict=True)}
    return Lexicon.from_mapping(mapping, groups=stats.groups, source="<DocStats terms>")


def subsample_stats(stats: DocStats, lexicon: Lexicon) -> DocStats:
    """The statistics ``lexicon`` (a sub-list of ``stats``' terms) would give, by column selection;
    an :class:`InputError` without ``stats.term_counts``, for other groups, and for a term that
    ``stats`` lacks or puts in another group."""
    expect_type(stats, "stats", DocStats, "the DocStats of a collection")
    expect_type(lexicon, "lexicon", Lexicon, "a Lexicon (a sub-list of the statistics' terms)")
    return _Columns(stats).stats_of(lexicon)


class _Columns:
    """The per-term counts of ``stats`` by column, converted once: every sub-list's statistics
    are a column selection from them (a study of many sub-lists converts the matrix once)."""

    def __init__(self, stats: DocStats) -> None:
        expect_type(stats, "stats", DocStats, "the DocStats of a collection")
        if stats.term_counts is None:
            raise InputError(
                "the statistics have no per-term counts; compute them with per_term=True "
                "(rankbias.text.document_stats / read_collection_stats) to subsample the word list"
            )
        self.stats = stats
        self.by_column = sp.csc_matrix(stats.term_counts)
        self.column = {t: j for j, t in enumerate(stats.terms)}

    def select(self, lexicon: Lexicon) -> tuple[sp.csc_matrix, np.ndarray, np.ndarray]:
        """``(tf of the kept terms by column, their groups, M_g(d) per document and group)``."""
        stats = self.stats
        expect_type(lexicon, "lexicon", Lexicon, "a Lexicon (a sub-list of the statistics' terms)")
        if tuple(lexicon.groups) != tuple(stats.groups):
            raise InputError(
                f"the word list has groups {list(lexicon.groups)}, the statistics "
                f"{list(stats.groups)}; expected the same groups in the same order"
            )
        unknown = [t for t in lexicon.terms if t not in self.column]
        if unknown:
            raise InputError(
                f"{len(unknown)} term(s) of the word list are not columns of the statistics, e.g. "
                f"{unknown[:5]}; expected a sub-list of the terms the statistics were computed with"
            )
        kept = np.array([self.column[t] for t in lexicon.terms], dtype=np.int64)
        group_of = np.asarray(stats.term_group)[kept]
        moved = np.flatnonzero(group_of != lexicon.group_index())
        if len(moved):
            t = lexicon.terms[moved[0]]
            raise InputError(
                f"term {t!r} is in group {lexicon.term_to_group[t]!r} in the word list but in "
                f"another group, {stats.groups[group_of[moved[0]]]!r}, in the statistics; "
                "expected the same group"
            )
        counts = self.by_column[:, kept]
        n_docs, n_groups = counts.shape[0], len(stats.groups)
        group_counts = np.zeros((n_docs, n_groups), dtype=np.int64)
        group_of_entry = np.repeat(group_of, np.diff(counts.indptr))
        for g in range(n_groups):  # M_g(d): the counts of the group's kept terms, summed
            mine = group_of_entry == g
            group_counts[:, g] = np.bincount(
                counts.indices[mine], weights=counts.data[mine], minlength=n_docs
            )
        return counts, group_of, group_counts

    def stats_of(self, lexicon: Lexicon, row_major: bool = True) -> DocStats:
        """The statistics of the sub-list ``lexicon`` (``term_counts`` by column unless
        ``row_major``, which costs a conversion of the whole matrix)."""
        counts, group_of, group_counts = self.select(lexicon)
        return dataclasses.replace(
            self.stats,
            group_counts=group_counts,
            terms=tuple(lexicon.terms),
            term_group=group_of,
            term_counts=counts.tocsr() if row_major else counts,
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
    """Every metric of every run rescored (:func:`rankbias.scoring.score_runs` with ``metrics``,
    ``cutoffs``, ``options``) on ``subsample(lexicon, fraction, seed, stratified)`` per fraction
    and seed (``lexicon``: default the terms of ``stats``; fraction 1 is scored once, as seed 0),
    as ``fraction, seed, run, qid, metric, cutoff, value`` (categorical ids);
    ``attrs["undefined_values"]``/``attrs["terms_kept"]`` map ``(fraction, seed)`` to the NaN
    counts and the terms kept per group."""
    runs = (
        [runs] if isinstance(runs, Run) else expect_items(runs, "runs", "a Run or a list of them")
    )
    lexicon = lexicon_of(stats) if lexicon is None else lexicon
    seeds = [expect_count(s, "seeds", 0) for s in seeds]  # 1.7 was read as 1
    fractions = [float(f) for f in fractions]
    if not seeds or len(set(seeds)) < len(seeds):
        raise ValueError(f"seeds: expected at least one, each once, found {seeds}")
    bad = [f for f in fractions if not 0.0 < f <= 1.0]
    if bad or not fractions:
        raise ValueError(f"fractions must be in (0, 1], found {fractions}")
    columns = _Columns(stats)
    full = score_runs(runs, columns.stats_of(lexicon), metrics, cutoffs, **options)
    width = max(int(k) for k in cutoffs)
    cut_runs = [run.cut(width) for run in runs]
    # Each sub-list is scored on the rows the runs read (their documents and background),
    # with what a measure needs of the whole collection (its aggregate) computed on all rows:
    # the same values as scoring the whole collection, without a lookup of every document.
    plan = plan_measures(metrics, cutoffs)
    read = [arrow_docids(run) for run in cut_runs]
    if isinstance(options.get("background"), Run):
        read.append(arrow_docids(options["background"]))
    rows = np.unique(np.concatenate([np.empty(0, np.int64), *stats.rows_of_each(read)]))
    ranked = _Columns(stats.take(rows[rows >= 0]))
    layout = {c: pd.Categorical(full[c].to_numpy()) for c in ("run", "qid", "metric", "cutoff")}
    values, labels, undefined, kept = [], [], {}, {}
    for fraction in fractions:
        for seed in seeds if fraction < 1.0 else [0]:
            if fraction < 1.0:
                try:
                    sub = subsample(lexicon, fraction, seed, stratified)
                except InputError as error:
                    raise InputError(f"fraction {fraction}, seed {seed}: {error}") from None
                whole = columns.stats_of(sub, row_major=False)
                scored = score_runs(
                    cut_runs,
                    ranked.stats_of(sub),
                    metrics,
                    cutoffs,
                    aggregates=collection_aggregates(plan, whole),
                    **options,
                )
                if len(scored) != len(full):
                    raise AssertionError("score_runs changed its row layout between sub-lists")
            else:
                sub, scored = lexicon, full
            undefined[(fraction, seed)] = dict(scored.attrs["undefined_values"])
            kept[(fraction, seed)] = {g: len(sub.terms_of(g)) for g in sub.groups}
            values.append(scored["value"].to_numpy())
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


def subsample_coverage(
    stats: DocStats,
    lexicon: Lexicon,
    fractions: Sequence[float],
    seeds: Iterable[int],
    stratified: bool = True,
) -> pd.DataFrame:
    """What the sub-lists of :func:`subsampling_study` still see, per fraction, seed and group:
    ``terms`` kept, their ``occurrences``, the ``occurrence_share`` of the full list's (NaN if
    none) and the ``documents`` holding one."""
    expect_type(stats, "stats", DocStats, "the DocStats of a collection")
    seeds = [expect_count(s, "seeds", 0) for s in expect_items(seeds, "seeds", "a list of seeds")]
    fractions = expect_items(fractions, "fractions", "a list of fractions")
    full = stats.group_counts.sum(axis=0)
    columns = _Columns(stats)
    rows = []
    for fraction in fractions:
        for seed in seeds:
            sub = subsample(lexicon, fraction, seed, stratified=stratified)
            counts = columns.select(sub)[2]
            for j, group in enumerate(stats.groups):
                kept = int(counts[:, j].sum())
                share = kept / full[j] if full[j] else np.nan
                documents = int((counts[:, j] > 0).sum())
                terms = len(sub.terms_of(group))
                rows.append((float(fraction), int(seed), group, terms, kept, share, documents))
    columns = ["fraction", "seed", "group", "terms", "occurrences", "occurrence_share", "documents"]
    return pd.DataFrame(rows, columns=columns)
