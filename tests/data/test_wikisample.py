"""Tests of the wikisample builder's pieces and of the built testbed itself.

The built testbed is made by ``make data`` before ``make test`` runs the tests; the tests of
the built files fail (they do not skip) when it is missing.
"""

from __future__ import annotations

import re

import numpy as np
import pandas as pd
import pytest

from rankbias.data import wikisample as ws
from rankbias.dataset import dataset_dir
from rankbias.errors import InputError
from rankbias.runs import read_qrels, read_run


def test_sentences_and_chunks():
    text = "First one here. Second (with a dot.) Third? Yes! 4 is a digit. lower case stays."
    sentences = ws.split_sentences(text)
    assert sentences == [
        "First one here.",
        "Second (with a dot.)",
        "Third?",
        "Yes!",
        "4 is a digit. lower case stays.",
    ]
    # sentences of 30 words: a passage closes at the first sentence end past 100 words
    sentence = " ".join(["word"] * 30) + "."
    chunks = ws.chunk_sentences([sentence] * 9)
    assert [len(c.split()) for c in chunks] == [120, 120, 30]
    # a remainder under 20 words joins the previous passage
    chunks = ws.chunk_sentences([sentence] * 4 + ["Short tail here."])
    assert [len(c.split()) for c in chunks] == [123]


def test_sections_follow_heading_levels():
    wikitext = (
        "Lead text.\n== History ==\nh\n=== Early ===\ne\n=== Late <!-- c --> ===\nl\n"
        "== [[Economy of X|Economy]] ==\nx\n"
    )
    sections = ws.wiki_sections("X", wikitext)
    assert [path for path, _ in sections] == [
        (),
        ("History",),
        ("History", "Early"),
        ("History", "Late"),
        ("Economy",),
    ]
    assert sections[2][1].strip() == "e"


def test_clean_markup_drops_captions_and_keeps_prose():
    wikitext = (
        "'''Albedo''' is the [[reflection|reflectivity]] of a surface, measured from zero to "
        "one.\nthumb|A short caption\n* a list item that is not prose at all.\n"
    )
    assert ws.clean_markup(wikitext) == (
        "Albedo is the reflectivity of a surface, measured from zero to one."
    )


def passage(docid, article, *section):
    return ws.Passage(docid, "text", "wiki", article, tuple(section))


def test_car_queries_exclude_gendered_and_duplicates():
    passages = [
        passage("a", "Autism"),
        passage("b", "Autism", "Causes"),
        passage("c", "Autism", "Causes"),
        passage("d", "Aristotle", "Views on women"),
        passage("e", "Apollo", "Births"),
        passage("f", "Apollo", "births"),  # same query text, other case
    ]
    queries, qrels, excluded = ws.car_queries(
        passages, frozenset({"women", "he"}), lambda s: re.findall(r"[^\W_]+", s.lower())
    )
    assert queries["query"].tolist() == ["Autism", "Autism Causes", "Apollo Births"]
    assert qrels.groupby("qid")["docid"].apply(list).to_dict() == {
        "q0001": ["a"],
        "q0002": ["b", "c"],
        "q0003": ["e"],
    }
    assert excluded.to_dict("list") == {
        "query": ["Aristotle Views on women", "Apollo births"],
        "reason": ["women", "(duplicate query text)"],
    }


def test_sensitive_queries_are_checked(tmp_path):
    passages = [passage("a", "Autism", "Management", "Cost"), passage("b", "Autism")]
    tok = str.split
    good = tmp_path / "good.tsv"
    good.write_text(
        "qid\tquery\tcategory\trelevant\n"
        "s1\tcost of care\tchild care\tAutism > Management > Cost; autism\n"
        "s2\tunanswered\tcareer\t\n"
    )
    queries, qrels = ws.sensitive_queries(passages, good, frozenset({"she"}), tok)
    assert queries["qid"].tolist() == ["s1", "s2"]
    assert sorted(qrels["docid"]) == ["a", "b"]
    bad = tmp_path / "bad.tsv"
    bad.write_text("qid\tquery\tcategory\trelevant\ns1\tx\tc\tAutism > Nowhere\n")
    with pytest.raises(InputError, match=r"bad.tsv:2: section 'Autism > Nowhere'"):
        ws.sensitive_queries(passages, bad, frozenset(), tok)
    gendered = tmp_path / "gendered.tsv"
    gendered.write_text("qid\tquery\tcategory\trelevant\ns1\twhat she said\tc\t\n")
    with pytest.raises(InputError, match=r"gendered.tsv:2: .*gendered term\(s\) \['she'\]"):
        ws.sensitive_queries(passages, gendered, frozenset({"she"}), tok)


def test_missing_testbed_says_how_to_build(tmp_path, monkeypatch):
    monkeypatch.delenv("RANKBIAS_DATA", raising=False)
    monkeypatch.delenv("RANKBIAS_TESTBED", raising=False)
    monkeypatch.chdir(tmp_path)  # no data/build/wikisample here or above
    with pytest.raises(InputError, match="make data"):
        dataset_dir()


# ---- the built testbed ---------------------------------------------------------------------
@pytest.fixture(scope="module")
def built():
    return dataset_dir()


def test_built_collection_sizes(built):
    lines = (built / "collection.tsv").read_text(encoding="utf-8").splitlines()
    assert len(lines) >= 4000
    fields = [line.split("\t") for line in lines]
    assert all(len(f) == 2 and f[0] and f[1] for f in fields)
    docids = [f[0] for f in fields]
    assert len(set(docids)) == len(docids)
    words = np.array([len(f[1].split()) for f in fields])
    assert 90 <= np.median(words) <= 130  # "passages of about 100 words"


def test_built_queries_and_judgements(built):
    queries = pd.read_csv(built / "queries.tsv", sep="\t", header=None, names=["qid", "query"])
    assert len(queries) >= 500
    qrels = read_qrels(built / "qrels.txt")
    assert set(qrels["qid"]) == set(queries["qid"])
    docids = {line.split("\t", 1)[0] for line in open(built / "collection.tsv", encoding="utf-8")}
    assert set(qrels["docid"]) <= docids
    # no query contains a term of the gendered list
    from rankbias.lexicon import default_lexicon

    gendered = set(default_lexicon().term_to_group)
    tokens = queries["query"].str.lower().str.findall(r"[^\W_]+")
    assert not any(set(t) & gendered for t in tokens)
    sens = pd.read_csv(built / "queries_sensitive.tsv", sep="\t", header=None, names=["qid", "q"])
    assert len(sens) >= 30
    assert not any(set(t) & gendered for t in sens["q"].str.lower().str.findall(r"[^\W_]+"))


def test_built_runs(built):
    queries = pd.read_csv(built / "queries.tsv", sep="\t", header=None, names=["qid", "query"])
    sens = pd.read_csv(built / "queries_sensitive.tsv", sep="\t", header=None, names=["qid", "q"])
    expected = set(queries["qid"]) | set(sens["qid"])
    names = sorted(p.stem for p in (built / "runs").glob("*.run"))
    assert names == ["bm25", "bm25_rm3", "dense", "hybrid", "rerank"]
    for name in names:
        run = read_run(built / "runs" / f"{name}.run")
        assert run.list_lengths.max() == 100
        # dense retrieval ranks every passage, so every query has a full list
        if name in ("dense", "hybrid"):
            assert set(run.qids) == expected
            assert (run.list_lengths == 100).all()
        else:
            assert set(run.qids) <= expected
    # the re-ranker permutes BM25's documents, nothing more
    bm25, rerank = read_run(built / "runs" / "bm25.run"), read_run(built / "runs" / "rerank.run")
    for q in bm25.qids[:50]:
        assert sorted(bm25.ranked(q)) == sorted(rerank.ranked(q))
