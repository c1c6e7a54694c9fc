"""Tests of rankbias.analysis.counterfactual_study; expected values are written out by hand from
the substitution rules of rankbias.counterfactual's docstring (never computed by the code)."""

from __future__ import annotations

from pathlib import Path
from types import SimpleNamespace

import pandas as pd
import pytest

from rankbias.analysis import counterfactual_study as study
from rankbias.counterfactual import CounterfactualBuild, substitute_collection
from rankbias.errors import InputError
from rankbias.runs import Run, write_run


def make_run(name: str, lists: dict[str, list[str]]) -> Run:
    rows = [
        (qid, docid, float(len(docids) - rank))
        for qid, docids in lists.items()
        for rank, docid in enumerate(docids)
    ]
    return Run.from_frame(pd.DataFrame(rows, columns=["qid", "docid", "score"]), name)


COLLECTION = pd.DataFrame(
    {
        "docid": ["d1", "d2", "d3"],
        "text": [
            "She met him in Paris. The sky was blue! He left with his brother.",
            "A city of bridges. Nothing gendered here.",
            "Mary wrote a book? It was hers.",
        ],
    }
)


# ---- changed_sentences -------------------------------------------------------------------------
def test_changed_sentences_by_hand():
    counterfactual, _ = substitute_collection(COLLECTION)
    table = study.changed_sentences(COLLECTION, counterfactual)
    expected = pd.DataFrame(
        {
            "docid": ["d1", "d1", "d3", "d3"],
            "sentence": [0, 2, 0, 1],
            "before": [
                "She met him in Paris.",
                "He left with his brother.",
                "Mary wrote a book?",
                "It was hers.",
            ],
            # him -> her (always); his + noun -> her; brother -> sister; Mary -> James;
            # hers -> his (always)
            "after": [
                "He met her in Paris.",
                "She left with her sister.",
                "James wrote a book?",
                "It was his.",
            ],
            "swaps": [2, 3, 1, 1],
        }
    )
    pd.testing.assert_frame_equal(table, expected)


def test_changed_sentences_refuses_different_documents():
    other = COLLECTION.iloc[::-1].reset_index(drop=True)
    with pytest.raises(InputError, match="different documents"):
        study.changed_sentences(COLLECTION, other)


def test_changed_sentences_refuses_moved_sentence_boundaries():
    edited = COLLECTION.copy()
    edited.loc[0, "text"] = "She met him in Paris and the sky was blue! He left."
    with pytest.raises(InputError, match="d1: 3 sentences before and 2 after"):
        study.changed_sentences(COLLECTION, edited)


# ---- pronoun_decisions --------------------------------------------------------------------------
def test_pronoun_decisions_by_hand():
    collection = pd.DataFrame(
        {
            "docid": ["a", "b"],
            "text": [
                'She gave her book to him. He saw her. His "great" work',
                "his or her breath; the gun was his",
            ],
        }
    )
    table = study.pronoun_decisions(collection, width=5)
    # the rule: her -> his / his -> her before a token that is not a function word,
    # otherwise her -> him and his -> hers
    assert table["docid"].tolist() == ["a", "a", "a", "b", "b", "b"]
    assert table["term"].tolist() == ["her", "her", "his", "his", "her", "his"]
    assert table["counterpart"].tolist() == ["his", "him", "hers", "hers", "his", "hers"]
    assert table["following"].tolist() == [
        "token",
        "punctuation",
        "quotation mark",
        "token",
        "token",
        "end of text",
    ]
    assert table["next"].tolist() == ["book", ".", '"great"', "or", "breath;", ""]
    # five characters either side of the word and the chunk after it
    assert table["context"].iloc[0] == "gave her book to h"


def test_pronoun_decisions_no_occurrence():
    collection = pd.DataFrame({"docid": ["x"], "text": ["The herald and his-"]})
    table = study.pronoun_decisions(collection, terms=["her"])
    assert table.empty
    assert list(table.columns) == ["docid", "term", "counterpart", "following", "next", "context"]


# ---- top_k_overlap and side_by_side ------------------------------------------------------------
def test_top_k_overlap_by_hand():
    original = make_run("o", {"q1": ["a", "b", "c", "d"], "q2": ["a", "b"]})
    counterfactual = make_run("c", {"q1": ["b", "e", "a", "d"], "q2": ["c", "d"]})
    table = study.top_k_overlap(original, counterfactual, k=3, qids=["q1", "q2", "q3"])
    # q1 top 3: {a, b, c} and {b, e, a} share a, b; q2 nothing; q3 absent from both
    assert table["qid"].tolist() == ["q1", "q2", "q3"]
    assert table["overlap"].tolist() == [2, 0, 0]
    with pytest.raises(ValueError):
        study.top_k_overlap(original, counterfactual, k=0)


def test_side_by_side_by_hand():
    original = make_run("o", {"q1": ["a", "b", "c"]})
    counterfactual = make_run("c", {"q1": ["b", "e"]})
    table = study.side_by_side(original, counterfactual, "q1", k=3)
    assert table.index.tolist() == [1, 2, 3]
    assert table["original"].tolist() == ["a", "b", "c"]
    assert table["rank in counterfactual"].tolist() == [pd.NA, 1, pd.NA]
    assert table["counterfactual"].iloc[:2].tolist() == ["b", "e"]
    assert table["counterfactual"].isna().tolist() == [False, False, True]
    assert table["rank in original"].tolist() == [2, pd.NA, pd.NA]


def test_side_by_side_beyond_both_lists_leaves_missing_cells():
    original = make_run("o", {"q1": ["a", "b"]})
    counterfactual = make_run("c", {"q1": ["b"]})
    table = study.side_by_side(original, counterfactual, "q1", k=4)
    assert table.index.tolist() == [1, 2, 3, 4]
    assert table["original"].isna().tolist() == [False, False, True, True]
    assert table["counterfactual"].isna().tolist() == [False, True, True, True]
    assert table["rank in counterfactual"].tolist() == [pd.NA, 1, pd.NA, pd.NA]
    assert table["rank in original"].tolist() == [2, pd.NA, pd.NA, pd.NA]


# ---- counterfactual_world: rebuilt only when its inputs change ---------------------------------
def fake_testbed(root: Path) -> SimpleNamespace:
    (root / "runs").mkdir(parents=True)
    write_run(root / "runs" / "bm25.run", make_run("bm25", {"q1": ["d1", "d2"]}))
    return SimpleNamespace(
        path=root,
        collection=COLLECTION,
        queries=pd.DataFrame({"qid": ["q1", "q2"], "query": ["city bridges", "John Smith"]}),
        queries_sensitive=pd.DataFrame({"qid": ["s1"], "query": ["nurse"]}),
        systems=("bm25",),
    )


def test_counterfactual_world_rebuilds_only_when_inputs_change(tmp_path, monkeypatch):
    testbed = fake_testbed(tmp_path / "testbed")
    out = tmp_path / "cf"
    calls = []

    def fake_build(testbed, out_dir, cache_dir, log, *, substitution):
        calls.append(cache_dir)
        Path(out_dir).mkdir(parents=True, exist_ok=True)
        write_run(Path(out_dir) / "bm25.run", make_run("bm25", {"q1": ["d2", "d1"]}))
        return CounterfactualBuild(Path(out_dir), None, None, None, 7, {"bm25": 1.0}, ("bm25",))

    monkeypatch.setattr(study, "counterfactual_runs", fake_build)
    first = study.counterfactual_world(testbed, out, "cache", log=lambda s: None)
    assert calls == ["cache"] and first.passages_encoded == 7
    assert (out / study.STAMP_FILE).exists()

    second = study.counterfactual_world(testbed, out, "cache", log=lambda s: None)
    assert len(calls) == 1  # reused
    assert second.seconds == {} and second.systems == ("bm25",)
    # q2 names John, a substituted name: excluded; q1 and s1 kept
    assert second.excluded["qid"].tolist() == ["q2"]
    assert second.queries["qid"].tolist() == ["q1", "s1"]
    assert second.report.n_changed == 2
    assert second.runs()["bm25"].ranked("q1").tolist() == ["d2", "d1"]

    # an original run changes -> rebuilt
    write_run(testbed.path / "runs" / "bm25.run", make_run("bm25", {"q1": ["d1", "d3"]}))
    study.counterfactual_world(testbed, out, "cache", log=lambda s: None)
    assert len(calls) == 2

    # a run file of the counterfactual world is missing -> rebuilt
    (out / "bm25.run").unlink()
    study.counterfactual_world(testbed, out, "cache", log=lambda s: None)
    assert len(calls) == 3

    # the collection changes -> rebuilt
    testbed.collection = COLLECTION.assign(text=COLLECTION["text"].str.replace("Mary", "Linda"))
    study.counterfactual_world(testbed, out, "cache", log=lambda s: None)
    assert len(calls) == 4


# ---- query_set_means ---------------------------------------------------------------------------
def test_query_set_means_by_hand():
    table = pd.DataFrame(
        {
            "run": ["A"] * 6 + ["B"] * 2,
            "qid": ["q1", "q2", "s1", "q1", "q2", "s1", "q1", "s1"],
            "metric": ["crbo"] * 3 + ["texfair"] * 3 + ["crbo"] * 2,
            "value": [1.0, 0.5, float("nan"), 0.2, 0.4, 0.9, 0.8, 0.6],
            "cutoff": 10,
        }
    )
    means = study.query_set_means(
        table[table["run"] == "A"],
        {"neutral": ["q1", "q2"], "sensitive": ["s1"]},
        {"crbo": "CRBO", "texfair": "TExFAIR"},
    )
    # A, neutral: crbo (1 + 0.5)/2 = 0.75, texfair (0.2 + 0.4)/2 = 0.3
    # A, sensitive: crbo NaN only -> NaN, texfair 0.9
    assert means.columns.tolist() == [
        ("neutral", "CRBO"),
        ("neutral", "TExFAIR"),
        ("sensitive", "CRBO"),
        ("sensitive", "TExFAIR"),
    ]
    assert means.loc["A", ("neutral", "CRBO")] == pytest.approx(0.75)
    assert means.loc["A", ("neutral", "TExFAIR")] == pytest.approx(0.3)
    assert pd.isna(means.loc["A", ("sensitive", "CRBO")])
    assert means.loc["A", ("sensitive", "TExFAIR")] == pytest.approx(0.9)
    # run order chosen by the caller; B has no texfair at all -> error naming the metric
    with pytest.raises(InputError, match="texfair"):
        study.query_set_means(table[table["run"] == "B"], {"neutral": ["q1"]}, {"texfair": "T"})
    both = study.query_set_means(table, {"neutral": ["q1"]}, {"crbo": "C"}, runs=["B", "A"])
    assert both.index.tolist() == ["B", "A"]
    assert both[("neutral", "C")].tolist() == pytest.approx([0.8, 1.0])
