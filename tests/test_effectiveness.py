"""Tests of rankbias.effectiveness (ir_measures behind a tidy table)."""

from __future__ import annotations

import math

import pandas as pd
import pytest

from rankbias.effectiveness import effectiveness, split_measure
from rankbias.runs import Run


def test_split_measure():
    assert split_measure("nDCG@10") == ("nDCG", 10)
    assert split_measure("AP") == ("AP", None)
    assert split_measure("P(rel=2)@5") == ("P(rel=2)", 5)
    # the cut-off is read by the one reader of @k, with its error
    with pytest.raises(ValueError, match="bad cut-off 'ten'"):
        split_measure("nDCG@ten")
    for bad in ("@10", "P(rel=2", "nDCG)@5", ""):
        with pytest.raises(ValueError, match="cannot read measure name"):
            split_measure(bad)


def test_values_by_hand_and_unretrieved_queries():
    run = Run.from_frame(
        pd.DataFrame(
            {"qid": ["1", "1", "1", "2"], "docid": ["a", "b", "c", "x"], "score": [3, 2, 1, 1]}
        ),
        name="r",
    )
    qrels = pd.DataFrame({"qid": ["1", "1", "3"], "docid": ["b", "c", "z"], "relevance": [1, 1, 1]})
    table = effectiveness(run, qrels, measures=("nDCG@10", "RR@10", "R@2"))
    values = table.set_index(["qid", "metric"])["value"]
    # query 1: relevant at ranks 2 and 3
    dcg = 1 / math.log2(3) + 1 / math.log2(4)
    idcg = 1 + 1 / math.log2(3)
    assert values[("1", "nDCG")] == pytest.approx(dcg / idcg)
    assert values[("1", "RR")] == pytest.approx(0.5)
    assert values[("1", "R")] == pytest.approx(0.5)
    # query 3 is judged but retrieved nothing: zero, and counted
    assert values[("3", "nDCG")] == 0.0
    assert table.attrs["unretrieved"] == {"r": 1}
    # query 2 has no judgements: not in the table
    assert set(table["qid"]) == {"1", "3"}


def test_arguments_ir_measures_would_misread_are_named():
    run = Run.from_frame(pd.DataFrame({"qid": ["1"], "docid": ["a"], "score": [1.0]}), "r")
    qrels = pd.DataFrame({"qid": ["1"], "docid": ["a"], "relevance": [1]})
    for call, error, message in [
        # ir_measures' NameError "measure not found: n": the string read letter by letter
        (lambda: effectiveness(run, qrels, measures="nDCG@10"), TypeError,
         "measures: expected a list of measures, found 'nDCG@10'"),
        (lambda: effectiveness(run, qrels, measures=["nDGC@10"]), ValueError,
         "measures: measure not found: nDGC; expected ir_measures names such as nDCG@10"),
        (lambda: effectiveness(run, qrels.rename(columns={"qid": "query"})), ValueError,
         "qrels: lacks column(s) ['qid']; expected qid, docid, relevance"),
        # the second run of the name replaced the first: its rows were lost
        (lambda: effectiveness([run, run], qrels), ValueError,
         "runs: two runs share a name in ['r', 'r']; expected distinct names"),
    ]:  # fmt: skip
        with pytest.raises(error) as info:
            call()
        assert type(info.value) is error and str(info.value) == message
