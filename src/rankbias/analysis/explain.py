"""Which documents make a list biased?  Each listed document's share of a measure's value.

Every value here comes from :func:`rankbias.scoring.score_runs` — on the list itself, on the
list cut shorter, or on the list with some documents made *neutral* (their group counts set to
0, their lengths kept) — so a share is always the measure as ``rankbias score`` computes it.
Three kinds, named in the ``kind`` column:

``exact``
    RaB and ARaB (any magnitude, either group's part): the value is linear in the documents'
    magnitudes and 0 on a list of neutral documents, so a document's share is the value of
    the list in which every other document is neutral.  FaiRR is a sum over ranks
    (:math:`\\sum_{i \\le k} \\omega(d_i) / \\log_2(i + 1)`), so the share of the document at
    rank :math:`i` is FaiRR@:math:`i` − FaiRR@:math:`(i-1)`; NFaiRR's is that divided by
    IFaiRR@:math:`k` under the same parameters.  The shares add up to the value.
``shapley``
    The exposure measures (AWRF, TED, TExFAIR, their variants and RBDF): the Shapley value of
    each document in the game whose worth of a set :math:`S` of documents is the measure on
    the list in which the documents outside :math:`S` are neutral — exact over all
    :math:`2^n` sets for :math:`n \\le` :data:`EXACT_MAX_DOCUMENTS` documents, else the mean
    over ``permutations`` random orders (``seed``).  The shares add up to the value minus
    ``baseline``, the measure on the all-neutral list.  These rows also give each document's
    exposure to each group as the measure weighs it, with :math:`v_r = 1/\\log_2(r+1)`:
    :math:`v_r M_g(d) / |d|` (TExFAIR's term exposure, Abolghasemi et al. (2024), Eq. 7–8; also
    for TED and RBDF) or :math:`v_r a_g(d)` (AWRF's association, Eq. 14).
"""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Sequence

import numpy as np
import pandas as pd

from rankbias.errors import (
    InputError,
    expect_count,
    expect_frame,
    expect_items,
    expect_seed,
    expect_type,
)
from rankbias.metrics.measures import get_measure
from rankbias.metrics.ranked import position_discount
from rankbias.runs import Run
from rankbias.scoring import plan_measures, score_runs
from rankbias.text import DocStats

__all__ = ["EXACT_MAX_DOCUMENTS", "explain", "top_terms", "strip_plot"]

EXACT_MAX_DOCUMENTS = 10
LINEAR = {"rab", "arab"}  # families of measures linear in the documents' magnitudes
SUMMED = {"fairr", "nfairr"}
SHAPLEY = {"awrf", "ted", "texfair", "rbdf"}
# TExFAIR without RBDF is undefined on a list without group terms: no worth for the empty set
NEUTRAL = "\x00neutral:"  # prefix of the neutral twin of a document (no real docid has it)


def _with_neutral_twins(stats: DocStats, docids: Sequence[str]) -> DocStats:
    """``stats`` of ``docids`` followed by a neutral twin of each (same length, no terms)."""
    rows = stats.rows(docids)
    if not len(rows):
        return stats
    term_counts = None
    if stats.term_counts is not None:
        import scipy.sparse as sp

        own = stats.term_counts[rows]
        term_counts = sp.vstack([own, sp.csr_matrix(own.shape)]).tocsr()
    return dataclasses.replace(
        stats,
        docids=np.array([*docids, *(NEUTRAL + d for d in docids)], dtype=object),
        lengths=np.concatenate([stats.lengths[rows], stats.lengths[rows]]),
        group_counts=np.vstack([stats.group_counts[rows], np.zeros_like(stats.group_counts[rows])]),
        term_counts=term_counts,
    )


def _variants(docids: list[str], keep: np.ndarray, request, stats: DocStats) -> np.ndarray:
    """The measure on each variant of the list: row ``j`` of ``keep`` says which documents
    keep their statistics (the others are replaced by their neutral twins)."""
    ids = np.where(
        keep, np.array(docids, dtype=object), np.array([NEUTRAL + d for d in docids], dtype=object)
    )
    n = len(docids)
    frame = pd.DataFrame(
        {
            "qid": np.repeat([f"v{j}" for j in range(len(keep))], n),
            "docid": ids.ravel(),
            "score": np.tile(np.arange(n, 0, -1, dtype=float), len(keep)),
        }
    )
    run = Run.from_frame(frame, "variants")
    scored = score_runs(run, stats, [request])  # at the request's own cut-off
    return scored.set_index("qid").loc[[f"v{j}" for j in range(len(keep))], "value"].to_numpy()


def _shapley(docids, request, stats, permutations, rng) -> tuple[np.ndarray, float, str]:
    n = len(docids)
    if n <= EXACT_MAX_DOCUMENTS:
        coalitions = ((np.arange(2**n)[:, None] >> np.arange(n)) & 1).astype(bool)
        worth = _variants(docids, coalitions, request, stats)
        index = coalitions @ (1 << np.arange(n))
        size = coalitions.sum(axis=1)
        weights = np.array(
            [math.factorial(s) * math.factorial(n - s - 1) / math.factorial(n) for s in range(n)]
        )
        phi = np.zeros(n)
        for i in range(n):
            without = ~coalitions[:, i]
            gain = worth[index[without] | (1 << i)] - worth[without]
            phi[i] = np.sum(weights[size[without]] * gain)
        return phi, float(worth[0]), f"shapley (exact over {2**n} sets)"
    orders = np.array([rng.permutation(n) for _ in range(permutations)])
    keep = np.zeros((permutations * (n + 1), n), dtype=bool)
    for p, order in enumerate(orders):
        for step in range(1, n + 1):
            keep[p * (n + 1) + step, order[:step]] = True
    worth = _variants(docids, keep, request, stats).reshape(permutations, n + 1)
    phi = np.zeros(n)
    for p, order in enumerate(orders):
        phi[order] += np.diff(worth[p])
    described = f"{permutations} orders" if permutations > 1 else "1 order"
    return phi / permutations, float(worth[0, 0]), f"shapley (mean of {described})"


def _check_inputs(run, stats) -> None:
    expect_type(run, "run", Run, "a Run (rankbias.runs.read_run)")
    expect_type(stats, "stats", DocStats, "the DocStats of the collection")


def explain(
    run: Run,
    stats: DocStats,
    qids: Sequence[str],
    metrics: Sequence[str],
    permutations: int = 1_000,
    seed: int = 0,
    background: Run | str = "collection",
) -> pd.DataFrame:
    """One row per document of each listed query's list, down to each measure's cut-off:
    ``qid, metric, cutoff, rank, docid``, the document's group counts (``count_<group>``),
    ``contribution``, ``kind``, the measure's ``value`` (as :func:`score_runs` gives it) and
    ``baseline``; exposures ``exposure_<group>`` for the exposure measures.  Measures are
    written with a cut-off (``nfairr@10``); see the module docstring for what a contribution
    is.  A query given twice is explained once; a measure given twice, however spelled, is a
    ValueError, as in :func:`score_runs`."""
    _check_inputs(run, stats)
    qids = list(dict.fromkeys([qids] if isinstance(qids, str) else expect_items(qids, "qids")))
    if isinstance(metrics, str):
        raise TypeError(f"metrics: expected a list of measures, found {metrics!r}")
    if not qids or not metrics:
        raise ValueError(f"{'metrics' if qids else 'qids'}: expected at least one, found none")
    expect_count(permutations, "permutations")
    known = set(run.qids)
    rng = expect_seed(seed)
    rows = []
    for request in (entry.request for entry in plan_measures(metrics)):
        text = str(request)
        if request.cutoff is None:
            raise ValueError(f"measure {text!r}: expected a cut-off, e.g. {text}@10")
        name = request.measure.name
        base = "rab" if name.startswith("rab") else "arab" if name.startswith("arab") else name
        if base not in LINEAR | SUMMED | SHAPLEY:
            raise InputError(
                f"measure {request.label}: explain covers RaB, ARaB (and their group parts), "
                "FaiRR, NFaiRR, AWRF, TED, TExFAIR and RBDF (not TExFAIR without RBDF: "
                "undefined on a list without group terms, it has no baseline for Shapley values)"
            )
        k = request.cutoff
        for qid in qids:
            if qid not in known:
                raise InputError(f"query {qid!r} is not in run {run.name!r}")
            docids = list(run.ranked(qid)[:k])
            one = run.restrict([qid])
            value = score_runs(one, stats, [request], [k], background=background)["value"].iloc[0]
            baseline = 0.0
            if base in LINEAR:
                twins = _with_neutral_twins(stats, docids)
                share = _variants(docids, np.eye(len(docids), dtype=bool), request, twins)
                kind = "exact"
            elif base in SUMMED:
                shared = {p: v for p, v in request.parameters().items() if p != "background"}
                depths = list(range(1, len(docids) + 1))
                partial = score_runs(one, stats, [get_measure("fairr")(**shared)], depths)
                share = np.diff(np.concatenate([[0.0], partial["value"].to_numpy()]))
                if base == "nfairr":
                    ideal = get_measure("ifairr")(k, **request.parameters())
                    scored = score_runs(one, stats, [ideal], [k], background=background)
                    share = share / scored["value"].iloc[0]
                kind = "exact"
            else:
                twins = _with_neutral_twins(stats, docids)
                share, baseline, kind = _shapley(docids, request, twins, permutations, rng)
            rows.append(_rows(qid, request, docids, stats, share, kind, value, baseline, base))
    return pd.concat(rows, ignore_index=True)


def _rows(qid, request, docids, stats, share, kind, value, baseline, base) -> pd.DataFrame:
    where = stats.rows(docids)
    frame = pd.DataFrame(
        {
            "qid": qid,
            "metric": request.label,
            "cutoff": request.cutoff,
            "rank": np.arange(1, len(docids) + 1),
            "docid": docids,
        }
    )
    for g, group in enumerate(stats.groups):
        frame[f"count_{group}"] = stats.group_counts[where, g]
    frame["contribution"] = share
    frame["kind"] = kind
    frame["value"] = value
    frame["baseline"] = baseline
    if base in SHAPLEY:
        counts = stats.group_counts[where].astype(float)
        if base == "awrf":  # AWRF's association a_g(d): shares of the terms, 1/|G| without any
            total = counts.sum(axis=1, keepdims=True)
            share_of = np.where(
                total > 0, counts / np.where(total > 0, total, 1), 1 / counts.shape[1]
            )
        else:  # TExFAIR's term exposure, M_g(d) / |d|
            share_of = counts / np.maximum(stats.lengths[where], 1)[:, None]
        exposure = position_discount(len(docids))[:, None] * share_of
        for g, group in enumerate(stats.groups):
            frame[f"exposure_{group}"] = exposure[:, g]
    return frame


def top_terms(run: Run, stats: DocStats, qid: str, cutoff: int, n: int = 10) -> pd.DataFrame:
    """The ``n`` terms of the word list with the most rank-discounted occurrences in the top
    ``cutoff`` of ``qid``'s list: ``term, group, occurrences, weight`` where ``weight`` is
    :math:`\\sum_r v_r\\,\\mathrm{tf}(t, d_r)`.  Needs per-term counts."""
    _check_inputs(run, stats)
    if stats.term_counts is None:
        raise ValueError("top_terms needs per-term counts: read the statistics with per_term=True")
    docids = list(run.ranked(qid)[:cutoff])
    counts = stats.term_counts[stats.rows(docids)].toarray()
    weight = position_discount(len(docids)) @ counts
    table = pd.DataFrame(
        {
            "term": stats.terms,
            "group": [stats.groups[g] for g in stats.term_group],
            "occurrences": counts.sum(axis=0),
            "weight": weight,
        }
    )
    return table[table["occurrences"] > 0].nlargest(n, "weight").reset_index(drop=True)


def strip_plot(table: pd.DataFrame, path=None):
    """Each list of :func:`explain`'s table as a strip of its documents by rank, coloured by
    contribution (blue below 0, red above; one colour scale per row), saved to ``path``
    (``.png``/``.svg``) when given.  Returns the figure."""
    columns = ("qid", "metric", "cutoff", "rank", "contribution")
    expect_frame(table, "table", columns, "the DataFrame of explain()")
    import matplotlib

    if path is not None:
        matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    from rankbias.metrics.measures import display_name

    lists = list(table.groupby(["qid", "metric", "cutoff"], sort=False))
    width = int(table["rank"].max())
    figure, axes = plt.subplots(len(lists), 1, figsize=(7, 0.3 + 0.55 * len(lists)), squeeze=False)
    for axis, ((qid, metric, cutoff), rows) in zip(axes[:, 0], lists, strict=True):
        values = np.full(width, np.nan)
        values[rows["rank"].to_numpy() - 1] = rows["contribution"].to_numpy()
        scale = np.nanmax(np.abs(values)) or 1.0
        axis.imshow(values[None, :], cmap="coolwarm", vmin=-scale, vmax=scale, aspect="auto")
        axis.set_yticks([0], [f"{qid}: {display_name(f'{metric}@{cutoff}')}"])
        axis.set_xticks(
            range(width), [str(r) if r % 5 == 0 or r == 1 else "" for r in range(1, width + 1)]
        )
    axes[-1, 0].set_xlabel("rank (colour: contribution, blue < 0 < red)")
    figure.tight_layout()
    if path is not None:
        figure.savefig(path, dpi=150, bbox_inches="tight")
        plt.close(figure)
    return figure
