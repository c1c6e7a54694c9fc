"""Tests of rankbias.analysis.duo_study; expected values are worked out by hand in comments."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from rankbias.analysis.duo_study import (
    duo_table,
    list_polarisation,
    mean_intervals,
    normalisation_study,
    random_order_duo,
)
from rankbias.runs import Run

# Three documents whose embeddings lie on the x axis at 3, 0 and -3: the PCA axis is (1, 0)
# (largest loading made positive), the centre is (0, 0), so the scores are 3, 0 and -3.
DOCIDS = pd.Index(["a", "b", "c", "d", "e"])
EMBEDDINGS = np.array([[3.0, 0.0], [0.0, 0.0], [-3.0, 0.0], [1.0, 1.0], [2.0, 2.0]])


def make_run(name: str, lists: dict[str, list[str]]) -> Run:
    rows = [
        (qid, docid, float(len(docids) - rank))
        for qid, docids in lists.items()
        for rank, docid in enumerate(docids)
    ]
    return Run.from_frame(pd.DataFrame(rows, columns=["qid", "docid", "score"]), name)


def test_duo_table_hand_example():
    # n = 3: the only cut point is i = 2, so DCV = u(2), the variance of the first two scores.
    # Pairs: {3, 0} -> 2.25, {0, -3} -> 2.25, {3, -3} -> 9 (prefix variance).  Ranking a, b, c
    # has u(2) = 2.25 = min -> Duo 1; ranking a, c, b has u(2) = 9 = max -> Duo 0.
    # Global variant (mean 0): u(2) = mean of squares: {3,0} 4.5, {0,-3} 4.5, {3,-3} 9 -> same.
    run = make_run("sys", {"q1": ["a", "b", "c"], "q2": ["a", "c", "b"]})
    table = duo_table({"sys": run}, ["q1", "q2"], EMBEDDINGS, DOCIDS)
    duo_values = table[table["metric"] == "Duo"].set_index(["qid", "variance"])["value"]
    assert duo_values[("q1", "prefix")] == pytest.approx(1.0)
    assert duo_values[("q2", "prefix")] == pytest.approx(0.0)
    assert duo_values[("q1", "global")] == pytest.approx(1.0)
    assert duo_values[("q2", "global")] == pytest.approx(0.0)
    assert list(table.columns) == ["run", "qid", "metric", "variance", "cutoff", "n_docs", "value"]
    assert set(table["n_docs"]) == {3}
    # direction: prefix {3, 0} has one positive score of two, not more than half -> -1, and
    # DCV+ = -u(2) < 0 -> -1.  For a, c, b: {3, -3} also one of two -> -1.
    directions = table[table["metric"] == "direction"]["value"]
    assert set(directions) == {-1.0}
    assert table.attrs["skipped"] == []


def test_duo_table_cutoff_and_skips():
    run = make_run("sys", {"q1": ["a", "c", "b", "d"], "short": ["a", "b"]})
    table = duo_table({"sys": run}, ["q1", "short", "absent"], EMBEDDINGS, DOCIDS, cutoff=3)
    assert set(table["qid"]) == {"q1"}
    # the cut list is a, c, b: Duo 0 as in the hand example above
    prefix = table[(table["metric"] == "Duo") & (table["variance"] == "prefix")]
    assert prefix["value"].tolist() == pytest.approx([0.0])
    skipped = pd.DataFrame(table.attrs["skipped"]).set_index("qid")
    assert skipped.loc["short", "n_docs"] == 2
    assert "fewer than 3" in skipped.loc["short", "reason"]
    assert skipped.loc["absent", "reason"] == "no ranked list"


def test_duo_table_unknown_document_is_an_error():
    run = make_run("sys", {"q1": ["a", "b", "zzz"]})
    with pytest.raises(ValueError, match="zzz"):
        duo_table({"sys": run}, ["q1"], EMBEDDINGS, DOCIDS)


def test_random_order_duo_hand_example():
    # scores 0, 1, 3; DCV = variance of the first two: {0,1} 0.25, {0,3} 2.25, {1,3} 1.
    # Duo per first pair: 1, 0, 1 - 0.75/2 = 0.625; each pair leads 2 of the 6 orderings,
    # so the mean over uniformly random orderings is (1 + 0 + 0.625) / 3 = 0.541667.
    rng = np.random.default_rng(0)
    value = random_order_duo([0.0, 1.0, 3.0], shuffles=20_000, rng=rng)
    assert value == pytest.approx(0.541667, abs=0.01)


def test_random_order_duo_ties_give_half():
    # scores +-1 with mean 0: every squared deviation is 1, so the global u(i) = 1 for every
    # prefix and every ordering has the same DCV -> 0.5
    rng = np.random.default_rng(0)
    scores = [1.0, -1.0, 1.0, -1.0]
    assert random_order_duo(scores, shuffles=5, rng=rng, variance="global") == 0.5


def test_normalisation_study_invariants():
    table = normalisation_study([5, 8, 12], 2, seed=3, n_samples=10)
    assert len(table) == 3 * 2 * 2
    # up to 8 documents the released code enumerates every ordering: no error
    small = table[table["n"] <= 8]
    assert np.allclose(small["error"], 0.0, atol=1e-9)
    # the most biased ordering has exact Duo 1; sampled bounds lie inside the exact ones, so the
    # sampled value is at least 1, and with 10 of 12! orderings strictly above 1
    biased = table[table["ordering"] == "most biased"]
    assert np.allclose(biased["exact"], 1.0)
    assert (biased["sampled"] >= 1.0 - 1e-12).all()
    assert (biased.loc[biased["n"] == 12, "sampled"] > 1.0).all()
    assert (table[["seconds_exact", "seconds_sampled"]] > 0).all().all()
    # seeded: the same call gives the same values
    again = normalisation_study([5, 8, 12], 2, seed=3, n_samples=10)
    pd.testing.assert_series_equal(table["sampled"], again["sampled"])


def test_mean_intervals_hand_values():
    # values 1, 2, 3: mean 2, s = 1, t(0.975, 2) = 4.302653 (tables) -> 2 ± 4.302653/sqrt(3)
    table = pd.DataFrame({"g": ["x", "x", "x", "y"], "value": [1.0, 2.0, 3.0, 5.0]})
    summary = mean_intervals(table, ["g"]).set_index("g")
    assert summary.loc["x", "n"] == 3
    assert summary.loc["x", "mean"] == pytest.approx(2.0)
    assert summary.loc["x", "low"] == pytest.approx(2.0 - 2.484138, abs=1e-6)
    assert summary.loc["x", "high"] == pytest.approx(2.0 + 2.484138, abs=1e-6)
    assert np.isnan(summary.loc["y", "low"])
    with pytest.raises(ValueError, match="confidence"):
        mean_intervals(table, ["g"], confidence=1.5)


def test_list_polarisation_hand_scores():
    # x coordinates 3, 0, -3 around their mean 0 on the axis (1, 0): the scores themselves
    assert list_polarisation(["a", "b", "c"], EMBEDDINGS, DOCIDS) == pytest.approx([3, 0, -3])
    assert list_polarisation(["c", "b", "a"], EMBEDDINGS, DOCIDS) == pytest.approx([-3, 0, 3])
    with pytest.raises(ValueError, match="my list: document 'x'"):
        list_polarisation(["a", "x"], EMBEDDINGS, DOCIDS, where="my list")
