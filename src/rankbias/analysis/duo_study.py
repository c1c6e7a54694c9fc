"""The studies of the chapter "Duo and indexical bias" (``notebooks/06_duo.md``).

Three pieces, each a tidy table in and out (METRICS.md §5; Ziems et al., seed 001 §4):

- :func:`normalisation_study`: exact Duo (:func:`rankbias.metrics.duo.duo`, subset DP) against
  the released code's sampled normalisation (:func:`rankbias.metrics.duo.duo_sampled`) on seeded
  random score lists, for a random ordering and for the most biased ordering of each list, with
  the wall-clock time of each computation.
- :func:`duo_table`: Duo per (run, query) on a testbed: the top-``k`` documents' embeddings →
  polarisation scores (one-component PCA fitted on those documents) → Duo for each variance
  variant, and the direction of signed Duo (App. A.2).
- :func:`random_order_duo`: the Duo a list would have in a random order (a baseline).
- :func:`mean_intervals`: per-group means with Student-t confidence intervals.

:func:`passage_embeddings` returns the testbed's cached passage embeddings, loading the encoder
only when the cache is missing.
"""

from __future__ import annotations

import time
from collections.abc import Iterable, Mapping, Sequence

import numpy as np
import pandas as pd
from scipy import stats

from rankbias.metrics.duo import (
    RELEASED_N_SAMPLES,
    dcv,
    dcv_bounds,
    duo,
    duo_direction,
    duo_sampled,
    extreme_orderings,
    polarisation_scores,
)

__all__ = [
    "duo_table",
    "list_polarisation",
    "mean_intervals",
    "normalisation_study",
    "passage_embeddings",
    "random_order_duo",
]


class _DenseModelOnDemand:
    """Stands in for the dense model; loads it only if something has to be encoded."""

    def encode(self, texts, **options):
        from rankbias.retrieval import load_dense_model

        return load_dense_model().encode(texts, **options)


def passage_embeddings(testbed) -> tuple[np.ndarray, pd.Index]:
    """``(embeddings, docids)``: row ``i`` of ``embeddings`` embeds passage ``docids[i]``.

    The vectors are the dense system's (all-MiniLM-L6-v2, unit length), read from the testbed's
    cache (``<testbed>/cache``); the model is loaded only when the cache lacks them.
    """
    from rankbias.retrieval import encode_cached

    texts = testbed.collection["text"].tolist()
    vectors = encode_cached(_DenseModelOnDemand(), texts, testbed.path / "cache", "passages")
    return np.asarray(vectors, dtype=np.float64), pd.Index(testbed.collection["docid"])


def normalisation_study(
    sizes: Iterable[int],
    lists_per_size: int,
    *,
    seed: int,
    n_samples: int = RELEASED_N_SAMPLES,
) -> pd.DataFrame:
    """Exact against sampled Duo on random lists (standard normal scores, ``seed``).

    For each size ``n`` and each of ``lists_per_size`` lists: the list in a random order and in
    its most biased order (exact Duo = 1).  Columns ``n, list, ordering, exact, sampled, error``
    (``sampled − exact``), ``seconds_exact, seconds_sampled``.  The sampled normalisation draws
    ``n_samples`` orderings from a generator seeded by ``(seed, n, list)``.
    """
    rng = np.random.default_rng(seed)
    rows = []
    for n in sizes:
        for index in range(lists_per_size):
            scores = rng.standard_normal(n)
            most_biased, _ = extreme_orderings(scores)
            orderings = {"random": rng.permutation(n), "most biased": most_biased}
            for name, order in orderings.items():
                ranked = scores[order]
                started = time.perf_counter()
                exact = duo(ranked)
                middle = time.perf_counter()
                sampled = duo_sampled(ranked, seed=[seed, n, index], n_samples=n_samples)
                ended = time.perf_counter()
                rows.append((n, index, name, exact, sampled, middle - started, ended - middle))
    table = pd.DataFrame(
        rows,
        columns=["n", "list", "ordering", "exact", "sampled", "seconds_exact", "seconds_sampled"],
    )
    table.insert(5, "error", table["sampled"] - table["exact"])
    return table


def list_polarisation(
    ranked: Sequence[str], embeddings: np.ndarray, docids: pd.Index, *, where: str = "list"
) -> np.ndarray:
    """Polarisation scores of the ranked documents ``ranked``, in rank order.

    One-component PCA fitted on the list's own embeddings (``embeddings[i]`` embeds
    ``docids[i]``); a document without an embedding is an error naming ``where``.
    """
    positions = docids.get_indexer(np.asarray(ranked, dtype=object))
    if (positions < 0).any():
        missing = np.asarray(ranked, dtype=object)[positions < 0][0]
        raise ValueError(
            f"{where}: document {missing!r} has no embedding; "
            "expected every ranked document in the collection"
        )
    return polarisation_scores(embeddings[positions])


def duo_table(
    runs: Mapping[str, object],
    qids: Sequence[str],
    embeddings: np.ndarray,
    docids: pd.Index,
    *,
    cutoff: int = 10,
    variances: Sequence[str] = ("prefix", "global"),
    min_docs: int = 3,
    shuffles: int = 0,
    seed: int = 0,
) -> pd.DataFrame:
    """Duo and its direction for each run and query, from the top ``cutoff`` documents.

    ``runs``: name → :class:`rankbias.runs.Run`; ``embeddings[i]`` embeds ``docids[i]``.  The
    polarisation scores of a list come from a one-component PCA fitted on the list's own
    embeddings (:func:`~rankbias.metrics.duo.polarisation_scores` without a fit set).  Returns the
    tidy columns ``run, qid, metric, variance, cutoff, n_docs, value`` with ``metric`` ∈
    {``"Duo"``, ``"direction"``}, and ``"Duo, random order"`` (:func:`random_order_duo` of the
    same scores, ``shuffles`` orderings from ``numpy.random.default_rng(seed)``) when
    ``shuffles > 0``.  Lists with fewer than ``min_docs`` documents (Duo is 0.5 for every
    ordering) and queries a run lacks are not scored; they are listed in ``attrs["skipped"]``,
    a list of records with keys ``run, qid, n_docs, reason``.  A ranked docid absent from
    ``docids`` is an error.
    """
    if cutoff < 1:
        raise ValueError(f"cutoff: expected a positive integer, found {cutoff}")
    rows, skipped = [], []
    rng = np.random.default_rng(seed)
    for name, run in runs.items():
        present = set(run.qids.tolist())
        for qid in qids:
            if qid not in present:
                skipped.append((name, qid, 0, "no ranked list"))
                continue
            ranked = run.ranked(qid)[:cutoff]
            if ranked.size < min_docs:
                skipped.append((name, qid, int(ranked.size), f"fewer than {min_docs} documents"))
                continue
            scores = list_polarisation(
                ranked, embeddings, docids, where=f"run {name!r}, query {qid}"
            )
            for variance in variances:
                common = (name, qid, variance, cutoff, int(ranked.size))
                rows.append(("Duo", *common, duo(scores, variance=variance)))
                rows.append(("direction", *common, float(duo_direction(scores, variance=variance))))
                if shuffles:
                    baseline = random_order_duo(
                        scores, shuffles=shuffles, rng=rng, variance=variance
                    )
                    rows.append(("Duo, random order", *common, baseline))
    table = pd.DataFrame(
        rows, columns=["metric", "run", "qid", "variance", "cutoff", "n_docs", "value"]
    )
    table = table[["run", "qid", "metric", "variance", "cutoff", "n_docs", "value"]]
    table.attrs["skipped"] = [
        {"run": run, "qid": qid, "n_docs": n_docs, "reason": reason}
        for run, qid, n_docs, reason in skipped
    ]
    return table


def random_order_duo(
    scores: Sequence[float], *, shuffles: int, rng: np.random.Generator, variance: str = "prefix"
) -> float:
    """Mean Duo of the same ``scores`` over ``shuffles`` uniformly random orderings.

    The exact bounds (:func:`~rankbias.metrics.duo.dcv_bounds`) are computed once; 0.5 when every
    ordering has the same DCV.  It estimates the Duo a ranking would have if its order carried no
    information about the scores.
    """
    if shuffles < 1:
        raise ValueError(f"shuffles: expected a positive integer, found {shuffles}")
    array = np.asarray(scores, dtype=float)
    low, high = dcv_bounds(array, variance=variance)
    if high - low <= 1e-12 * max(abs(low), abs(high)):
        return 0.5
    values = [dcv(array[rng.permutation(array.size)], variance=variance) for _ in range(shuffles)]
    return float(np.mean(1.0 - (np.asarray(values) - low) / (high - low)))


def mean_intervals(
    table: pd.DataFrame, by: Sequence[str], *, value: str = "value", confidence: float = 0.95
) -> pd.DataFrame:
    """Mean of ``value`` per group with a Student-t interval: columns ``by, n, mean, low, high``.

    ``mean ± t_{(1+confidence)/2, n−1} · s/√n`` with ``s`` the sample standard deviation; a
    group of one value has an undefined (NaN) interval.
    """
    if not 0 < confidence < 1:
        raise ValueError(f"confidence: expected a number in (0, 1), found {confidence}")
    grouped = table.groupby(list(by), sort=True)[value]
    summary = grouped.agg(n="size", mean="mean", sd="std").reset_index()
    quantile = stats.t.ppf((1 + confidence) / 2, summary["n"] - 1)
    half = quantile * summary["sd"] / np.sqrt(summary["n"])
    summary["low"] = summary["mean"] - half
    summary["high"] = summary["mean"] + half
    return summary.drop(columns="sd")
