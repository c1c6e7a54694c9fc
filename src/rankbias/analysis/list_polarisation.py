"""Polarisation scores of ranked lists, and Duo per (run, query) from them: without perspective
documents to fit Duo's principal axis on (Ziems et al. (2024) §4.2), each list's axis is fitted
on its own top ``cutoff`` documents (the book's Conventions page, "Duo")."""

from __future__ import annotations

from collections.abc import Mapping, Sequence

import numpy as np
import pandas as pd

from rankbias.errors import expect_count, expect_items, expect_type
from rankbias.metrics.duo import polarisation_scores
from rankbias.metrics.validation import as_array
from rankbias.runs import Run
from rankbias.scoring import score_runs

__all__ = ["duo_per_query", "list_polarisation", "passage_embeddings", "run_polarisation"]


class _DenseModelOnDemand:
    """Stands in for the dense model; loads it only if something has to be encoded."""

    def encode(self, texts, **options):
        from rankbias.retrieval import load_dense_model

        return load_dense_model().encode(texts, **options)


def passage_embeddings(testbed) -> tuple[np.ndarray, pd.Index]:
    """``(embeddings, docids)`` of the testbed's passages: the dense system's unit vectors
    (all-MiniLM-L6-v2) from ``<testbed>/cache``, the model loaded only if the cache lacks them."""
    from rankbias.retrieval import encode_cached

    if not hasattr(testbed, "collection"):
        expected = "a testbed (rankbias.data.wikisample.load_testbed)"
        raise TypeError(f"testbed: expected {expected}, found {testbed!r:.60}")
    texts = testbed.collection["text"].tolist()
    vectors = encode_cached(_DenseModelOnDemand(), texts, testbed.path / "cache", "passages")
    return np.asarray(vectors, dtype=np.float64), pd.Index(testbed.collection["docid"])


def list_polarisation(
    ranked: Sequence[str], embeddings: np.ndarray, docids: pd.Index, *, where: str = "list"
) -> np.ndarray:
    """Polarisation scores of the documents ``ranked``, in rank order: one-component PCA of the
    list's own embeddings (``embeddings[i]`` embeds ``docids[i]``); a document without an
    embedding is a ValueError naming ``where``."""
    ranked = expect_items(ranked, where, "a list of docids")
    embeddings = as_array(embeddings, "embeddings", 2)
    expect_type(docids, "docids", pd.Index, "a pandas Index of the embeddings' docids")
    if len(set(ranked)) < len(ranked):
        raise ValueError(f"{where}: a document is ranked twice in {ranked}; expected each once")
    if len(embeddings) != len(docids):
        raise ValueError(
            f"embeddings: {len(embeddings)} rows for {len(docids)} docids; expected one each"
        )
    positions = docids.get_indexer(ranked)
    if (positions < 0).any():
        missing = ranked[int(np.argmax(positions < 0))]
        raise ValueError(
            f"{where}: document {missing!r} has no embedding; "
            "expected every ranked document in the collection"
        )
    return polarisation_scores(embeddings[positions])


def run_polarisation(
    run: Run,
    qids: Sequence[str],
    embeddings: np.ndarray,
    docids: pd.Index,
    *,
    cutoff: int,
    min_docs: int = 3,
) -> pd.DataFrame:
    """Polarisation scores ``qid, docid, score`` of the top ``cutoff`` documents of each of
    ``run``'s lists, one PCA per list.  A query the run lacks, or whose list has fewer than
    ``min_docs`` documents (with one or two, Duo is 0/0), is not scored but listed in
    ``attrs["skipped"]`` as a record ``run, qid, n_docs, reason``."""
    expect_count(cutoff, "cutoff")
    expect_count(min_docs, "min_docs")
    if isinstance(qids, str):
        raise TypeError(f"qids: expected a list of query ids, found the string {qids!r}")
    present = set(run.qids.tolist())
    frames, skipped = [], []
    for qid in qids:
        ranked = run.ranked(qid)[:cutoff] if qid in present else ()
        if qid not in present or len(ranked) < min_docs:
            reason = "no ranked list" if qid not in present else f"fewer than {min_docs} documents"
            skipped.append({"run": run.name, "qid": qid, "n_docs": len(ranked), "reason": reason})
            continue
        scores = list_polarisation(
            ranked, embeddings, docids, where=f"run {run.name!r}, query {qid}"
        )
        frames.append(pd.DataFrame({"qid": qid, "docid": ranked, "score": scores}))
    columns = ["qid", "docid", "score"]
    table = pd.concat(frames, ignore_index=True) if frames else pd.DataFrame(columns=columns)
    table.attrs["skipped"] = skipped
    return table


def duo_per_query(
    runs: Mapping[str, Run],
    qids: Sequence[str],
    embeddings: np.ndarray,
    docids: pd.Index,
    *,
    cutoff: int = 10,
    metrics: Sequence[str] = ("duo",),
    min_docs: int = 3,
) -> pd.DataFrame:
    """Duo-family ``metrics`` (e.g. ``"duo(variance=global)"``) at ``cutoff`` of each run (name
    → :class:`~rankbias.runs.Run`) and query, on :func:`run_polarisation`'s scores, as
    ``score_runs``' tidy table; queries not scored are in ``attrs["skipped"]``."""
    expect_type(runs, "runs", Mapping, "a mapping name -> Run")
    if isinstance(metrics, str):
        raise TypeError(f"metrics: expected a list of measures, found {metrics!r}")
    frames, skipped = [], []
    for name, run in runs.items():
        polarisation = run_polarisation(
            run, qids, embeddings, docids, cutoff=cutoff, min_docs=min_docs
        )
        skipped.extend(polarisation.attrs["skipped"])
        scored = list(dict.fromkeys(polarisation["qid"]))
        if not scored:
            continue
        frames.append(
            score_runs(
                run.restrict(scored).cut(cutoff),
                metrics=list(metrics),
                cutoffs=[cutoff],
                polarisation=polarisation,
            ).assign(run=name)
        )
    columns = ["run", "qid", "metric", "cutoff", "value"]
    table = pd.concat(frames, ignore_index=True) if frames else pd.DataFrame(columns=columns)
    table.attrs = {"skipped": skipped}
    return table
