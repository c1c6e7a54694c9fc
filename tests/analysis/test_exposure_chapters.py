import math

import numpy as np
import pandas as pd
import pytest

from rankbias.analysis.exposure_chapters import (
    FIGURE1_LEFT,
    FIGURE1_PASSAGES,
    FIGURE1_RIGHT,
    figure1_runs,
    label_query_sets,
    replace_document,
    system_means,
)
from rankbias.lexicon import default_lexicon
from rankbias.runs import Run
from rankbias.scoring import score_runs
from rankbias.text import document_stats


def small_run() -> Run:
    frame = pd.DataFrame(
        {
            "qid": ["q1", "q1", "q1", "q2", "q2"],
            "docid": ["a", "b", "c", "a", "d"],
            "score": [3.0, 2.0, 1.0, 5.0, 4.0],
        }
    )
    return Run.from_frame(frame, "small")


def test_figure1_runs_are_the_printed_lists():
    left, right = figure1_runs()
    assert (left.name, right.name) == ("left", "right")
    assert left.ranked("fig1").tolist() == ["p1", "p2", "p3", "p4"]
    assert right.ranked("fig1").tolist() == ["p1", "p5", "p6", "p4"]
    assert (
        tuple(left.ranked("fig1")) == FIGURE1_LEFT and tuple(right.ranked("fig1")) == FIGURE1_RIGHT
    )
    assert "he returned to Manchester United" in FIGURE1_PASSAGES["p4"]


def test_figure1_passages_are_one_sided_and_fillers_gender_free():
    stats = document_stats(FIGURE1_PASSAGES.values(), default_lexicon(), docids=FIGURE1_PASSAGES)
    counts = dict(zip(stats.docids, stats.group_counts.tolist(), strict=True))
    # one 'he'/'she' per printed excerpt (groups are ordered f, m)
    assert counts["p1"] == counts["p4"] == counts["p5"] == counts["p6"] == [0, 1]
    assert counts["p2"] == counts["p3"] == [1, 0]
    assert all(counts[d] == [0, 0] for d in ("n1", "n2", "n3", "n4"))


def test_figure1_scores_by_hand():
    stats = document_stats(FIGURE1_PASSAGES.values(), default_lexicon(), docids=FIGURE1_PASSAGES)
    frame = score_runs(list(figure1_runs()), stats, ["nfairr", "texfair"], [4], tau=0)
    value = frame.set_index(["run", "metric"])["value"]
    assert value["left", "nfairr"] == 0 and value["right", "nfairr"] == 0
    v2, v3, v4 = 1 / math.log2(3), 0.5, 1 / math.log2(5)
    te_m, te_f = 1 / 10 + v4 / 10, v2 / 7 + v3 / 11  # lengths 10, 7, 11, 10
    assert value["left", "texfair"] == pytest.approx(1 - 2 * abs(te_m / (te_m + te_f) - 0.5))
    assert value["right", "texfair"] == 0


def test_replace_document_keeps_order_and_other_queries():
    run = small_run()
    out = replace_document(run, "q1", 2, "zz")
    assert out.name == "small"
    assert out.ranked("q1").tolist() == ["a", "zz", "c"]
    assert out.ranked("q2").tolist() == ["a", "d"]
    assert out.scores.tolist() == [3.0, 2.0, 1.0, 5.0, 4.0]
    assert run.ranked("q1").tolist() == ["a", "b", "c"]  # the original is untouched
    assert replace_document(run, "q2", 1, "x", name="other").name == "other"


def test_replace_document_rejects_bad_positions():
    run = small_run()
    with pytest.raises(ValueError, match="no rank 4"):
        replace_document(run, "q1", 4, "zz")
    with pytest.raises(ValueError, match="no rank 1 for query 'q9'"):
        replace_document(run, "q9", 1, "zz")
    with pytest.raises(ValueError, match="already in the list"):
        replace_document(run, "q1", 1, "c")


def test_label_query_sets():
    frame = pd.DataFrame({"qid": ["s1", "q1", "q2", "s1"], "value": [1.0, 2.0, 3.0, 4.0]})
    out = label_query_sets(frame, {"neutral": ["q1", "q2"], "sensitive": ["s1"]})
    assert out["query set"].tolist() == ["sensitive", "neutral", "neutral", "sensitive"]
    assert list(out["query set"].cat.categories) == ["neutral", "sensitive"]
    assert "query set" not in frame.columns
    with pytest.raises(ValueError, match="in both"):
        label_query_sets(frame, {"a": ["q1", "s1"], "b": ["s1", "q2"]})
    with pytest.raises(ValueError, match="1 qid"):
        label_query_sets(frame, {"a": ["q1", "q2"]})


def test_system_means_counts_undefined_values():
    frame = pd.DataFrame(
        {
            "run": ["x", "x", "x", "y", "y"],
            "metric": ["m"] * 5,
            "cutoff": [10] * 5,
            "value": [0.2, np.nan, 0.6, np.nan, np.nan],
        }
    )
    out = system_means(frame).set_index("run")
    assert out.loc["x", "mean"] == pytest.approx(0.4)
    assert out.loc["x", "queries"] == 3 and out.loc["x", "undefined"] == 1
    assert np.isnan(out.loc["y", "mean"])
    assert out.loc["y", "queries"] == 2 and out.loc["y", "undefined"] == 2
