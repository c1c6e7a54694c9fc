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
:func:`subsample_coverage` says what a sub-list still sees of the collection (terms,
occurrences and documents per group).  The summaries of a study table — box-plot numbers,
range shrinkage, rank stability (chapter "How much do the measures depend on the word list?")
and the stability of the top psycholinguistic categories (chapter "Psycholinguistic
characteristics") — are computed in those chapters from the tidy table
:func:`subsampling_study` returns.

Undefined values (NaN) are never dropped silently: :func:`subsampling_study` counts them per
replicate (``attrs["undefined_values"]``).
"""

from __future__ import annotations

import dataclasses
from collections.abc import Iterable, Sequence

import numpy as np
import pandas as pd
import scipy.sparse as sp

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
    "subsample_coverage",
]

DEFAULT_FRACTIONS = (0.25, 0.5, 0.75, 1.0)


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
    :func:`rankbias.scoring.score_runs` with ``metrics``, ``cutoffs`` and ``options``
    (``background``, ``missing``, …; a measure's own parameters are given in its name).
    Fraction 1 is scored once (seed 0), with the runs as given (so score_runs checks every
    retrieved document); the sub-lists score the runs cut to the largest cutoff, which reads
    the same documents and gives the same values.

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
