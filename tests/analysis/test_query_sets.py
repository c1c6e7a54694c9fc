"""Tests of rankbias.analysis.query_sets: hand-made tables."""

from __future__ import annotations

import pandas as pd
import pytest

from rankbias.analysis.query_sets import label_query_sets


def test_label_query_sets():
    frame = pd.DataFrame({"qid": ["s1", "q1", "q2", "s1"], "value": [1.0, 2.0, 3.0, 4.0]})
    out = label_query_sets(frame, {"neutral": ["q1", "q2"], "sensitive": ["s1"]})
    assert out["query set"].tolist() == ["sensitive", "neutral", "neutral", "sensitive"]
    assert list(out["query set"].cat.categories) == ["neutral", "sensitive"]
    assert "query set" not in frame.columns
    assert label_query_sets(frame, {"all": ["s1", "q1", "q2"]}, column="set")["set"].nunique() == 1


def test_a_query_in_two_sets_counts_in_both_and_a_query_in_none_is_refused():
    frame = pd.DataFrame({"qid": ["s1", "q1", "q2", "s1"], "value": [1.0, 2.0, 3.0, 4.0]})
    out = label_query_sets(frame, {"a": ["q1", "s1"], "b": ["s1", "q2"]})
    assert list(zip(out["qid"], out["value"], out["query set"], strict=True)) == [
        ("s1", 1.0, "a"),
        ("s1", 1.0, "b"),
        ("q1", 2.0, "a"),
        ("q2", 3.0, "b"),
        ("s1", 4.0, "a"),
        ("s1", 4.0, "b"),
    ]
    assert out.groupby("query set", observed=True)["value"].mean().tolist() == [7 / 3, 8 / 3]
    with pytest.raises(ValueError, match=r"1 qid\(s\) in no query set, e.g. \['s1'\]"):
        label_query_sets(frame, {"a": ["q1", "q2"]})


def test_label_query_sets_names_five_lost_queries_and_keeps_the_labels_order():
    frame = pd.DataFrame({"qid": [f"x{i}" for i in range(7)] + ["q1"], "value": range(8)})
    with pytest.raises(ValueError) as error:
        label_query_sets(frame, {"b": ["q1"]})
    assert str(error.value) == "7 qid(s) in no query set, e.g. ['x0', 'x1', 'x2', 'x3', 'x4']"
    out = label_query_sets(frame.tail(1), {"z": ["q2"], "b": ["q1"]})
    assert list(out["query set"].cat.categories) == ["z", "b"]  # the labels' order, even unused


def test_a_set_given_as_one_string_or_a_column_taken_already_is_refused():
    frame = pd.DataFrame({"qid": ["q1", "q2"], "value": [1.0, 2.0]})
    # the letters of "q1" were read as qids ("2 qid(s) in no query set")
    with pytest.raises(TypeError) as error:
        label_query_sets(frame, {"a": "q1", "b": ["q2"]})
    assert str(error.value) == "sets: query set 'a' is the string 'q1'; expected qids"
    # column="value" replaced the values with the labels
    with pytest.raises(ValueError) as error:
        label_query_sets(frame, {"a": ["q1", "q2"]}, column="value")
    assert str(error.value) == "column: 'value' is in the table already; expected a new name"
