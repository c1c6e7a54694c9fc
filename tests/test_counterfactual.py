"""Tests of rankbias.counterfactual: substitution (casing, punctuation, the her/his rule, names),
the collection report, round trips, CRBO against hand computation and brute force, and the
counterfactual rerun of a tiny generated testbed."""

from __future__ import annotations

import json
import re
from pathlib import Path
from types import SimpleNamespace

import numpy as np
import pandas as pd
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from rankbias import counterfactual as cf
from rankbias.errors import InputError
from rankbias.lexicon import default_pairs_path, read_pairs
from rankbias.runs import Run, read_run, write_run
from rankbias.scoring import score_runs
from rankbias.text import tokenize

TERM_PAIRS = read_pairs(default_pairs_path())
NAME_PAIRS = read_pairs(cf.default_name_pairs_path())
PRONOUNS = {"her", "his", "him", "hers"}
# the counterpart of every term, read from the pair files here, independently of the module
COUNTERPART = {a: b for f, m in TERM_PAIRS + NAME_PAIRS for a, b in ((f, m), (m, f))}
UNAMBIGUOUS = sorted(set(COUNTERPART) - PRONOUNS)
NEUTRAL = ["the", "book", "of", "a", "doctor", "city", "was", "written", "in", "1921", "x2"]


def swap(text: str) -> str:
    return cf.substitute(text)[0]


# ---- substitution by hand ------------------------------------------------------------------
@pytest.mark.parametrize(
    "text, expected",
    [
        ("she", "he"),
        ("She", "He"),
        ("SHE", "HE"),
        ("Mother", "Father"),
        ("GRANDMOTHERS", "GRANDFATHERS"),
        ("mrs Smith, MRS Smith and Mrs Smith", "mr Smith, MR Smith and Mr Smith"),
        ("The King and the queen.", "The Queen and the king."),
        ("Mary", "James"),
        ("JOHN", "JENNIFER"),
        ("Elizabeth met John; john met elizabeth!", "David met Jennifer; jennifer met david!"),
    ],
)
def test_casing_pattern_is_kept(text, expected):
    assert swap(text) == expected


def test_non_token_characters_are_kept_exactly():
    text = "«Mother!»\t— said the son…  (his sister-in-law's\nbrother_in_law) “Mr.”"
    expected = "«Father!»\t— said the daughter…  (her brother-in-law's\nsister_in_law) “Mrs.”"
    # his + 'sister' (a noun) -> her; '_' separates tokens in the default tokeniser
    assert swap(text) == expected
    assert cf.substitute(text)[1] == 6  # Mother, son, his, sister, brother, Mr


def test_only_whole_tokens_are_swapped():
    # 'mothers' is a term of its own; 'motherboard', 'he2', '2she', 'sheep', 'theme' are not terms
    text = "motherboard he2 2she sheep theme shepherd Kingston Maryland johnson"
    assert swap(text) == text
    assert cf.substitute(text)[1] == 0


@pytest.mark.parametrize(
    "text, expected, n",
    [
        ("\u212aing", "Queen", 1),  # KELVIN SIGN lower-cases to 'k': the tokeniser sees 'king'
        ("ſhe", "ſhe", 0),  # long s: lower-cased it is not 's', so not the term 'she'
        # 'İ' lower-cases to two characters: the case-insensitive path gives the same answers
        ("İzmir: She thanked her.", "İzmir: He thanked him.", 2),
        ("ſhe İ SHE Mary's her book", "ſhe İ HE James's his book", 3),
    ],
)
def test_unicode_case_folding_agrees_with_the_tokeniser(text, expected, n):
    assert cf.substitute(text) == (expected, n)


@pytest.mark.parametrize(
    "text, expected",
    [
        # her -> his before a noun phrase
        ("She lost her book.", "He lost his book."),
        ("her own house", "his own house"),
        ("her 1943 novel", "his 1943 novel"),
        ("HER first album", "HIS first album"),
        ("Her well-being mattered", "His well-being mattered"),
        ("her so-called friends", "his so-called friends"),
        ("with Her Majesty", "with His Majesty"),
        # her -> him as an object: before punctuation, the end, or a function word
        ("He thanked her.", "She thanked him."),
        ("they followed her", "they followed him"),
        ("He told her that it rained", "She told him that it rained"),
        ("gave her the prize", "gave him the prize"),
        ("sent her to Paris", "sent him to Paris"),
        ("saw her, then left", "saw him, then left"),
        ("let her go", "let him go"),
        ("loved her very much", "loved him very much"),
        ("a gift for her (later)", "a gift for him (later)"),
        # his -> her before a noun phrase, -> hers otherwise
        ("his work", "her work"),
        ("His all-time best", "Her all-time best"),
        ("The choice was his.", "The choice was hers."),
        ("a friend of his and hers", "a friend of hers and his"),
        ("his is red", "hers is red"),
        # him -> her and hers -> his always
        ("She saw him leave", "He saw her leave"),
        ("The book is hers.", "The book is his."),
        ("hers book", "his book"),
        # documented misses of the rule (see the module docstring)
        ("made her cry", "made his cry"),
        ("gave her flowers", "gave his flowers"),
        ("her very own", "him very own"),
    ],
)
def test_rule_for_her_and_his(text, expected):
    assert swap(text) == expected


def test_rule_reads_the_original_text_not_the_swapped_one():
    # 'her his' -> her is an object before the determiner 'his'; his is then before 'name'
    assert swap("He told her his name.") == "She told him her name."
    assert swap("She told him her name.") == "He told her his name."


def test_realistic_passage():
    text = (
        "Ayn Rand's father was a pharmacist; her mother, Anna, taught her to read. "
        "She married Frank O'Connor in 1929 and he supported her career. "
        "Her husband's paintings were his own."
    )
    expected = (
        "Ayn Rand's mother was a pharmacist; his father, Stephen, taught him to read. "
        "He married Frank O'Connor in 1929 and she supported his career. "
        "His wife's paintings were her own."
    )
    assert swap(text) == expected
    assert cf.substitute(text)[1] == 11


def test_rule_can_be_turned_off():
    plain = cf.Substitution.from_pairs(TERM_PAIRS, contextual={})
    # the pair file says her,him and hers,his
    assert cf.substitute("her book is his", plain)[0] == "him book is hers"


# ---- substitution errors -------------------------------------------------------------------
def test_a_term_in_two_files_is_an_error(tmp_path):
    terms = tmp_path / "terms.csv"
    names = tmp_path / "names.csv"
    terms.write_text("female,male\nshe,he\nmary,john\n")
    names.write_text("female,male\nmary,james\n")
    with pytest.raises(InputError, match=r"names\.csv.*'mary'.*terms\.csv"):
        cf.Substitution.from_files(terms, names)


def test_bad_pairs_are_errors():
    with pytest.raises(InputError, match="repeats the term 'she'"):
        cf.Substitution.from_pairs([("she", "he"), ("she", "it")])
    with pytest.raises(InputError, match="'mother-in-law' is not a single lower-case token"):
        cf.Substitution.from_pairs([("mother-in-law", "father-in-law")])
    with pytest.raises(InputError, match="'Queen' is not a single lower-case token"):
        cf.Substitution.from_pairs([("Queen", "king")])
    with pytest.raises(InputError, match=r"rule for 'her'.*missing: \['his'\]"):
        cf.Substitution.from_pairs([("her", "him")], contextual={"her": ("his", "him")})


def test_default_substitution_covers_both_files():
    sub = cf.default_substitution()
    assert sub.terms == frozenset(COUNTERPART)
    assert len(NAME_PAIRS) >= 30 and len({n for p in NAME_PAIRS for n in p}) >= 60
    assert set(sub.contextual) == {"her", "his"}


# ---- the collection report -----------------------------------------------------------------
def test_substitute_collection_report_counts_by_hand():
    collection = pd.DataFrame(
        {
            "docid": ["d1", "d2", "d3", "d4"],
            "text": [
                "She thanked her mother.",  # she->he, her->his, mother->father
                "The river is long.",  # unchanged
                "Mary saw her. Mary left.",  # mary->james x2, her->him
                "hE met HiM",  # irregular casing twice: he->she, him->her
            ],
            "extra": [1, 2, 3, 4],
        }
    )
    result, report = cf.substitute_collection(collection)
    assert result["text"].tolist() == [
        "He thanked his father.",
        "The river is long.",
        "James saw him. James left.",
        "she met Her",
    ]
    assert result["docid"].tolist() == ["d1", "d2", "d3", "d4"]
    assert result["extra"].tolist() == [1, 2, 3, 4]
    assert collection["text"].iloc[0] == "She thanked her mother."  # input untouched
    assert (report.n_passages, report.n_changed, report.n_swaps) == (4, 3, 8)
    assert report.swaps_per_passage.tolist() == [3, 0, 3, 2]
    assert report.irregular_case == 2
    counts = {(s, t): c for s, t, c in report.swaps.itertuples(index=False)}
    assert counts == {
        ("she", "he"): 1,
        ("her", "his"): 1,
        ("mother", "father"): 1,
        ("mary", "james"): 2,
        ("her", "him"): 1,
        ("he", "she"): 1,
        ("him", "her"): 1,
    }
    assert report.swaps["count"].iloc[0] == 2
    assert report.by_term()["her"] == 2


def test_substitute_collection_errors_name_the_problem():
    with pytest.raises(InputError, match=r"lacks column\(s\) \['text'\]"):
        cf.substitute_collection(pd.DataFrame({"docid": ["a"], "body": ["she"]}))
    bad = pd.DataFrame({"docid": ["a", "b"], "text": ["she", None]})
    with pytest.raises(InputError, match="document 'b' .*expected a string"):
        cf.substitute_collection(bad)


# ---- properties ----------------------------------------------------------------------------
CASINGS = [str.lower, str.title, str.upper]
SEPARATORS = st.text(
    alphabet=st.sampled_from(list(" \t\n.,;:!?'\"()-–—«»…_/&*#%")), min_size=1, max_size=4
)
UNAMBIGUOUS_WORDS = st.tuples(st.sampled_from(UNAMBIGUOUS + NEUTRAL), st.sampled_from(CASINGS)).map(
    lambda pair: pair[1](pair[0])
)


@st.composite
def unambiguous_texts(draw):
    words = draw(st.lists(UNAMBIGUOUS_WORDS, min_size=1, max_size=12))
    seps = draw(st.lists(SEPARATORS, min_size=len(words) + 1, max_size=len(words) + 1))
    return seps[0] + "".join(w + s for w, s in zip(words, seps[1:], strict=True))


@settings(max_examples=300, deadline=None)
@given(unambiguous_texts())
def test_round_trip_restores_unambiguous_text(text):
    once, n_once = cf.substitute(text)
    twice, n_twice = cf.substitute(once)
    assert twice == text
    assert n_once == n_twice == sum(t in COUNTERPART for t in tokenize(text))


@settings(max_examples=300, deadline=None)
@given(unambiguous_texts())
def test_tokens_become_their_counterparts(text):
    expected = [COUNTERPART.get(t, t) for t in tokenize(text)]
    assert tokenize(swap(text)) == expected


@settings(max_examples=300, deadline=None)
@given(
    st.lists(
        st.one_of(st.sampled_from(sorted(COUNTERPART) + NEUTRAL), st.text(max_size=5)),
        max_size=15,
    ).map(" ".join)
)
def test_any_text_keeps_its_skeleton_and_group_flips(text):
    new, n = cf.substitute(text)
    pattern = re.compile(r"[^\W_]+")
    assert pattern.split(new) == pattern.split(text)  # every non-token character kept
    old_tokens, new_tokens = pattern.findall(text.lower()), pattern.findall(new.lower())
    assert len(old_tokens) == len(new_tokens)
    changed = 0
    female = {f for f, _ in TERM_PAIRS + NAME_PAIRS}
    for old, now in zip(old_tokens, new_tokens, strict=True):
        if old in COUNTERPART:
            changed += 1
            assert now in COUNTERPART and (now in female) != (old in female)
            if old not in PRONOUNS:
                assert now == COUNTERPART[old]
        else:
            assert now == old
    assert n == changed


# ---- CRBO ----------------------------------------------------------------------------------
def brute_force_rbo_ext(first, second, p):
    """Webber et al. Eq. 30 for two lists of the same length k, sets built one by one."""
    k = len(first)
    assert len(second) == k
    agreement = [len(set(first[:d]) & set(second[:d])) / d for d in range(1, k + 1)]
    head = sum(agreement[d - 1] * p**d for d in range(1, k + 1))
    return agreement[-1] * p**k + (1 - p) / p * head


def make_run(name, lists):
    rows = [
        (qid, docid, float(len(docs) - i))
        for qid, docs in lists.items()
        for i, docid in enumerate(docs)
    ]
    return Run.from_frame(pd.DataFrame(rows, columns=["qid", "docid", "score"]), name)


def rbo_per_query(original, counterfactual, k, p=0.9):
    """The per-query RBO@k of the scorer (its mean over queries is CRBO)."""
    table = score_runs(original, None, [f"rbo(p={p})@{k}"], counterfactual=counterfactual)
    return table.set_index("qid")["value"]


def test_crbo_identical_and_disjoint_runs():
    a = make_run("bm25", {"q1": list("abcdef"), "q2": list("xyz")})
    b = make_run("bm25", {"q1": list("ghijkl"), "q2": list("uvw")})
    assert rbo_per_query(a, a, 6).to_numpy() == pytest.approx([1.0, 1.0], abs=1e-12)
    assert rbo_per_query(a, b, 6).tolist() == [0.0, 0.0]


def test_crbo_small_case_by_hand():
    original = make_run("dense", {"q1": ["a", "b", "c", "d"], "q2": ["a", "b"]})
    counterfactual = make_run("dense", {"q1": ["b", "a", "c", "e"], "q2": ["a", "b"]})
    values = rbo_per_query(original, counterfactual, 4)
    # q1: X = 0, 2, 3, 3 -> A = 0, 1, 1, .75
    # RBO_ext = .75 * .9^4 + (.1/.9) (0 * .9 + 1 * .81 + 1 * .729 + .75 * .6561) = 0.71775
    assert values["q1"] == pytest.approx(0.71775, abs=1e-12)
    assert values["q1"] == pytest.approx(
        brute_force_rbo_ext(list("abcd"), list("bace"), 0.9), abs=1e-12
    )
    assert values["q2"] == pytest.approx(1.0, abs=1e-12)
    # depth 2: [a, b] vs [b, a]: X = 0, 2 -> .81 + (.1/.9)(.81) = 0.9; CRBO = (0.9 + 1) / 2
    assert rbo_per_query(original, counterfactual, 2)["q1"] == pytest.approx(0.9, abs=1e-12)
    crbo = score_runs(original, None, ["crbo@2"], counterfactual=counterfactual)["value"]
    assert crbo.tolist() == pytest.approx([(0.9 + 1.0) / 2], abs=1e-12)


@settings(max_examples=100, deadline=None)
@given(
    st.permutations(list("abcdefghij")),
    st.permutations(list("abcdefghijklmnop")),
    st.integers(min_value=1, max_value=10),
    st.floats(min_value=0.05, max_value=0.95),
)
def test_crbo_equals_brute_force(first, pool, k, p):
    first, second = list(first[:k]), list(pool[:k])
    value = rbo_per_query(make_run("r", {"q": first}), make_run("r", {"q": second}), k, p)["q"]
    assert value == pytest.approx(brute_force_rbo_ext(first, second, p), abs=1e-12)


# ---- the counterfactual testbed --------------------------------------------------------------
SUBJECTS = [
    ("The nurse said she would check her chart", True),
    ("A farmer explained that his wheat grew quickly", True),
    ("Mary Smith trained as an engineer before her promotion", True),
    ("The committee approved the budget for the bridge", False),
    ("Volcanic soil holds water and supports vineyards", False),
    ("The king and his daughter visited the observatory", True),
    ("Glaciers carve valleys over thousands of years", False),
    ("John taught his students algebra and geometry", True),
    ("The library lends maps, atlases and old newspapers", False),
]
TOPICS = ["farming", "astronomy", "medicine", "geology"]


def write_testbed(root):
    """A tiny testbed folder in the layout :func:`load_testbed` reads."""
    root.mkdir()
    rows, changed = [], []
    for t, topic in enumerate(TOPICS):
        for s, (sentence, gendered) in enumerate(SUBJECTS):
            docid = f"p{t}{s}"
            rows.append((docid, f"{sentence} while studying {topic} in the valley."))
            if gendered:
                changed.append(docid)
    collection = pd.DataFrame(rows, columns=["docid", "text"])
    (root / "collection.tsv").write_text("".join(f"{d}\t{t}\n" for d, t in rows), encoding="utf-8")
    pd.DataFrame(
        {"docid": collection["docid"], "source": "wiki", "article": "A", "section": "B"}
    ).to_csv(root / "passages.tsv", sep="\t", index=False)
    queries = [
        ("q1", "farming wheat"),
        ("q2", "astronomy observatory"),
        ("q3", "medicine chart check"),
        ("q4", "geology valleys glaciers"),
        ("q5", "John Galt engineer"),  # names a person: excluded, not substituted
    ]
    (root / "queries.tsv").write_text("".join(f"{q}\t{t}\n" for q, t in queries))
    pd.DataFrame(
        {
            "qid": ["s1", "s2"],
            "query": ["who trains engineers", "budget of libraries"],
            "category": ["work", "money"],
        }
    ).to_csv(root / "queries_sensitive_meta.tsv", sep="\t", index=False)
    (root / "qrels.txt").write_text("q1 0 p00 1\n")
    (root / "qrels_sensitive.txt").write_text("s1 0 p02 1\n")
    (root / "manifest.json").write_text(json.dumps({"passages": len(rows)}))
    all_queries = pd.DataFrame(
        queries + [("s1", "who trains engineers"), ("s2", "budget of libraries")],
        columns=["qid", "query"],
    )
    return collection, all_queries, changed


@pytest.fixture(scope="module")
def dense_model():
    from rankbias import retrieval

    return retrieval.load_dense_model()


def test_counterfactual_runs_on_a_tiny_testbed(tmp_path, monkeypatch, dense_model):
    from bm25s.stopwords import STOPWORDS_EN

    from rankbias import retrieval
    from rankbias.data.wikisample import load_testbed

    encoded: list[str] = []

    class Spy:
        def encode(self, texts, **kw):
            encoded.extend(texts)
            return dense_model.encode(texts, **kw)

    monkeypatch.setattr(retrieval, "load_dense_model", lambda device="cpu": Spy())
    root = tmp_path / "testbed"
    collection, all_queries, changed = write_testbed(root)
    retrieval.build_runs(
        collection, all_queries, root / "runs", cache_dir=root / "cache", log=lambda m: None
    )
    encoded.clear()
    testbed = load_testbed(root)
    out = tmp_path / "cf"
    build = cf.counterfactual_runs(testbed, out, log=lambda m: None)

    # queries: the one naming John is excluded, the others run unchanged
    assert build.excluded[["qid", "terms"]].values.tolist() == [["q5", "john"]]
    expected_queries = all_queries[all_queries["qid"] != "q5"]
    assert build.queries.values.tolist() == expected_queries.values.tolist()
    written = pd.read_csv(out / "queries.tsv", sep="\t", header=None, names=["qid", "query"])
    assert written.values.tolist() == expected_queries.values.tolist()

    # the counterfactual collection, checked by hand on three passages
    cf_text = dict(
        line.split("\t", 1) for line in (out / "collection.tsv").read_text().splitlines()
    )
    assert cf_text["p00"] == (
        "The nurse said he would check his chart while studying farming in the valley."
    )
    assert cf_text["p12"] == (
        "James Smith trained as an engineer before his promotion while studying astronomy "
        "in the valley."
    )
    assert cf_text["p35"] == (
        "The queen and her son visited the observatory while studying geology in the valley."
    )
    assert cf_text["p23"] == collection.set_index("docid").loc["p23", "text"]
    assert build.report.n_changed == len(changed) == 20

    # only the changed passages were encoded; the originals and the queries came from the cache
    assert sorted(encoded) == sorted(cf_text[d] for d in changed)
    assert build.passages_encoded == len(changed)
    cached = retrieval.encode_cached(
        Spy(), [cf_text[d] for d in collection["docid"]], out / "cache", "passages"
    )
    fresh = dense_model.encode([cf_text[d] for d in collection["docid"]], normalize_embeddings=True)
    np.testing.assert_allclose(cached, fresh, atol=2e-5)

    # five runs on the kept queries
    assert build.systems == ("bm25", "bm25_rm3", "dense", "hybrid", "rerank")
    runs = build.runs()
    original = testbed.runs()
    kept = expected_queries["qid"].tolist()
    for system, run in runs.items():
        assert sorted(run.qids.tolist()) == sorted(
            q for q in kept if q in set(original[system].qids)
        )

    # BM25 cannot see gender here: neutral queries, swaps token for token, no gendered stopword
    assert not set(STOPWORDS_EN) & set(COUNTERPART)
    bm25_o = original["bm25"].restrict(kept).to_frame()
    bm25_c = runs["bm25"].to_frame()
    pd.testing.assert_frame_equal(bm25_o, bm25_c)
    bm25_crbo = rbo_per_query(original["bm25"].restrict(kept), runs["bm25"], 100).to_numpy()
    np.testing.assert_allclose(bm25_crbo, 1.0, atol=1e-12)

    # dense: unchanged passages keep their exact scores, changed ones move
    dense_o = original["dense"].restrict(kept).to_frame().set_index(["qid", "docid"])["score"]
    dense_c = runs["dense"].to_frame().set_index(["qid", "docid"])["score"]
    assert len(dense_o) == len(dense_c) == len(kept) * len(collection)
    joined = pd.concat([dense_o.rename("o"), dense_c.rename("c")], axis=1)
    is_changed = joined.index.get_level_values("docid").isin(changed)
    assert (joined.loc[~is_changed, "o"] == joined.loc[~is_changed, "c"]).all()
    assert (joined.loc[is_changed, "o"] != joined.loc[is_changed, "c"]).any()
    assert read_run(out / "hybrid.run").name == "hybrid"


WORLD_COLLECTION = pd.DataFrame(
    {
        "docid": ["d1", "d2", "d3"],
        "text": [
            "She met him in Paris. The sky was blue! He left with his brother.",
            "A city of bridges. Nothing gendered here.",
            "Mary wrote a book? It was hers.",
        ],
    }
)


# ---- counterfactual_world: rebuilt only when its inputs change ---------------------------------
def fake_testbed(root: Path) -> SimpleNamespace:
    (root / "runs").mkdir(parents=True)
    write_run(root / "runs" / "bm25.run", make_run("bm25", {"q1": ["d1", "d2"]}))
    return SimpleNamespace(
        path=root,
        collection=WORLD_COLLECTION,
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
        return cf.CounterfactualBuild(Path(out_dir), None, None, None, 7, {"bm25": 1.0}, ("bm25",))

    monkeypatch.setattr(cf, "counterfactual_runs", fake_build)
    first = cf.counterfactual_world(testbed, out, "cache", log=lambda s: None)
    assert calls == ["cache"] and first.passages_encoded == 7
    assert (out / cf.STAMP_FILE).exists()

    second = cf.counterfactual_world(testbed, out, "cache", log=lambda s: None)
    assert len(calls) == 1  # reused
    assert second.seconds == {} and second.systems == ("bm25",)
    # q2 names John, a substituted name: excluded; q1 and s1 kept
    assert second.excluded["qid"].tolist() == ["q2"]
    assert second.queries["qid"].tolist() == ["q1", "s1"]
    assert second.report.n_changed == 2
    assert second.runs()["bm25"].ranked("q1").tolist() == ["d2", "d1"]

    # an original run changes -> rebuilt
    write_run(testbed.path / "runs" / "bm25.run", make_run("bm25", {"q1": ["d1", "d3"]}))
    cf.counterfactual_world(testbed, out, "cache", log=lambda s: None)
    assert len(calls) == 2

    # a run file of the counterfactual world is missing -> rebuilt
    (out / "bm25.run").unlink()
    cf.counterfactual_world(testbed, out, "cache", log=lambda s: None)
    assert len(calls) == 3

    # the collection changes -> rebuilt
    testbed.collection = WORLD_COLLECTION.assign(
        text=WORLD_COLLECTION["text"].str.replace("Mary", "Linda")
    )
    cf.counterfactual_world(testbed, out, "cache", log=lambda s: None)
    assert len(calls) == 4
