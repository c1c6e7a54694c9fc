"""Tests of rankbias.retrieval: RM3 weights, fusion, top-k, BM25 against a direct formula."""

from __future__ import annotations

import math

import numpy as np
import pandas as pd
import pytest

from rankbias import retrieval
from rankbias.runs import Run


def test_top_k_keeps_ties_at_the_boundary():
    scores = np.array([0.0, 3.0, 1.0, 2.0, 2.0, -1.0])
    assert sorted(retrieval.top_k(scores, 2, positive_only=True)) == [1, 3, 4]
    assert sorted(retrieval.top_k(scores, 10, positive_only=True)) == [1, 2, 3, 4]
    assert sorted(retrieval.top_k(scores, 5, positive_only=False)) == [0, 1, 2, 3, 4]


def test_rm3_weights_by_hand():
    docs = [["a", "b", "b", "c"], ["b", "d"]]
    # feedback scores 3 and 1 -> P(d|q) = 0.75, 0.25
    # P(t|R): a: .75/4 = .1875; b: .75*2/4 + .25/2 = .5; c: .1875; d: .125 (sum 1)
    weights = retrieval.rm3_weights(["a", "z"], np.array([0, 1]), np.array([3.0, 1.0]), docs)
    lam = retrieval.RM3_LAMBDA
    expected = {
        "a": lam * 0.5 + (1 - lam) * 0.1875,
        "z": lam * 0.5,
        "b": (1 - lam) * 0.5,
        "c": (1 - lam) * 0.1875,
        "d": (1 - lam) * 0.125,
    }
    assert weights.keys() == expected.keys()
    for term, value in expected.items():
        assert weights[term] == pytest.approx(value)


def test_reciprocal_rank_fusion_by_hand():
    a = Run.from_frame(
        pd.DataFrame({"qid": "q", "docid": ["x", "y", "z"], "score": [3.0, 2.0, 1.0]}), "a"
    )
    b = Run.from_frame(pd.DataFrame({"qid": "q", "docid": ["z", "x"], "score": [2.0, 1.0]}), "b")
    fused = retrieval.reciprocal_rank_fusion("f", [a, b], k=60)
    # x: 1/61 + 1/62 = 0.032522; z: 1/63 + 1/61 = 0.032266; y: 1/62 = 0.016129
    assert fused.ranked("q").tolist() == ["x", "z", "y"]
    np.testing.assert_allclose(fused.scores, [0.032522, 0.032266, 0.016129])


def test_bm25_matches_the_lucene_formula():
    docs = [["apple", "pie"], ["apple", "apple", "tart"], ["plum"]]
    index = retrieval.BM25Index(docs)
    n, avgdl = 3, 2.0
    k1, b = retrieval.BM25_K1, retrieval.BM25_B
    df_apple = 2
    idf = math.log(1 + (n - df_apple + 0.5) / (df_apple + 0.5))  # Lucene's idf

    def term(tf, dl):
        return idf * tf / (tf + k1 * (1 - b + b * dl / avgdl))

    expected = [term(1, 2), term(2, 3), 0.0]
    np.testing.assert_allclose(index.scores(["apple", "unknown"]), expected, rtol=1e-6)
    assert (index.scores(["unknown"]) == 0).all()
