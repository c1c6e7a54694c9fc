"""Tests of rankbias.analysis.per_system: hand-made tables, hand-computed means."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from rankbias.analysis.per_system import label_query_sets, system_means


def test_label_query_sets():
    frame = pd.DataFrame({"qid": ["s1", "q1", "q2", "s1"], "value": [1.0, 2.0, 3.0, 4.0]})
    out = label_query_sets(frame, {"neutral": ["q1", "q2"], "sensitive": ["s1"]})
    assert out["query set"].tolist() == ["sensitive", "neutral", "neutral", "sensitive"]
    assert list(out["query set"].cat.categories) == ["neutral", "sensitive"]
    assert "query set" not in frame.columns
    assert label_query_sets(frame, {"all": ["s1", "q1", "q2"]}, column="set")["set"].nunique() == 1


def test_label_query_sets_refuses_overlapping_sets_and_unlabelled_queries():
    frame = pd.DataFrame({"qid": ["s1", "q1", "q2", "s1"], "value": [1.0, 2.0, 3.0, 4.0]})
    with pytest.raises(ValueError, match="'s1' is in both 'a' and 'b'"):
        label_query_sets(frame, {"a": ["q1", "s1"], "b": ["s1", "q2"]})
    with pytest.raises(ValueError, match=r"1 qid\(s\) in no query set, e.g. \['s1'\]"):
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


def test_system_means_by_other_columns_keeps_first_appearance_order():
    frame = pd.DataFrame(
        {
            "set": ["b", "a", "b", "a"],
            "run": ["r", "r", "s", "s"],
            "value": [1.0, 2.0, 4.0, 8.0],
        }
    )
    out = system_means(frame, ["set"])
    assert out["set"].tolist() == ["b", "a"]
    assert out["mean"].tolist() == [2.5, 5.0]
    assert out["queries"].tolist() == [2, 2] and out["undefined"].tolist() == [0, 0]
