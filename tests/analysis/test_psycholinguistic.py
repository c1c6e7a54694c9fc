"""Tests of rankbias.analysis.psycholinguistic: .dic parsing, category shares, correlations.

Expected values: shares counted by hand, correlations from SciPy, BH from statsmodels directly,
and the behaviour of the pipeline on generated data with a planted (or no) correlation.
"""

from __future__ import annotations

import math
import warnings

import numpy as np
import pandas as pd
import pytest
from scipy import stats
from statsmodels.stats.multitest import multipletests

from rankbias.analysis.psycholinguistic import (
    CategoryDictionary,
    category_shares,
    correlate,
    document_category_counts,
    empath_dictionary,
    open_dictionary,
    query_category_shares,
    read_dic,
    read_empath_tsv,
    top_categories,
)
from rankbias.errors import InputError
from rankbias.runs import Run

SMALL_DIC = """%
1\tposemo
2\taffect
3\tfuture
%
happy\t1\t2
happ*\t3
happi*\t1 2
hurt*\t2
will\t3
"""


def write(tmp_path, text, name="test.dic"):
    path = tmp_path / name
    path.write_text(text, encoding="utf-8")
    return path


# ---- parsing ----------------------------------------------------------------------------------
def test_dic_parsing_with_stems_and_several_categories_per_word(tmp_path):
    d = read_dic(write(tmp_path, SMALL_DIC))
    assert d.categories == ("posemo", "affect", "future")
    assert dict(d.words) == {"happy": (0, 1), "will": (2,)}
    assert dict(d.stems) == {"happ": (2,), "happi": (0, 1), "hurt": (1,)}
    # exact entry wins; otherwise the longest stem the token starts with
    assert d.categories_of("happy") == ("posemo", "affect")
    assert d.categories_of("happiness") == ("posemo", "affect")
    assert d.categories_of("happen") == ("future",)
    assert d.categories_of("hurts") == ("affect",)
    assert d.categories_of("hurt") == ("affect",)  # a stem matches the bare stem too
    assert d.categories_of("hap") == ()
    assert d.categories_of("unhappy") == ()


def test_from_mapping_words_match_exactly_and_stems_by_prefix():
    d = CategoryDictionary.from_mapping({"kin": ["She", "moth*"], "home": ["house"]})
    assert d.categories == ("kin", "home")
    assert d.categories_of("she") == ("kin",)  # lower-cased
    assert d.categories_of("shed") == ()  # a word without '*' is not a stem
    assert d.categories_of("houses") == ()
    assert d.categories_of("mother") == ("kin",)
    assert d.categories_of("moth") == ("kin",)
    assert d.categories_of("mot") == ()


def test_from_mapping_errors_name_the_source():
    with pytest.raises(InputError, match="^my-categories: found 'a\\*b'; expected '\\*' only"):
        CategoryDictionary.from_mapping({"x": ["a*b"]}, source="my-categories")
    with pytest.raises(InputError, match="^<memory>: found the entry ''"):
        CategoryDictionary.from_mapping({"x": [" "]})


def test_dic_accepts_space_separated_entries_and_blank_lines(tmp_path):
    d = read_dic(write(tmp_path, "\n%\n1 one\n\n2 two\n%\n\nAlpha 1 2\nbeta* 2\n"))
    assert d.categories == ("one", "two")
    assert d.categories_of("alpha") == ("one", "two")  # lower-cased
    assert d.categories_of("betas") == ("two",)


HEADER_EXPECTED = "expected 'id<TAB>name' (or a line holding '%' closing the header)"
SKIP = "; pass unsupported='skip' to leave it out"
BAD_DICS = [
    ("1\tposemo\n%\nhappy\t1\n", 1,
     "expected a line holding '%' to open the category header, found '1\\tposemo'"),
    ("\n\nfoo\n%\n", 3, "expected a line holding '%' to open the category header, found 'foo'"),
    ("\n \n", None, "expected a line holding '%' to open the category header, found no text"),
    ("%\n1\tposemo\n", None, "the category header is not closed by a line holding '%'"),
    ("%\n1\tposemo\nhappy\t1\n", 3,
     f"found 'happy\\t1' in the category header; {HEADER_EXPECTED}"),
    ("%\nx\tposemo\n%\n", 2, f"found 'x\\tposemo' in the category header; {HEADER_EXPECTED}"),
    ("%\n1\ta\n1\tb\n%\n", 3, "category id 1 declared again (first on line 2)"),
    ("%\n1\ta\n2\ta\n%\n", 3, "category name 'a' declared twice"),
    ("%\n%\n", 2, "the category header declares no categories"),
    ("%\n1\tposemo\n%\nhappy\t2\n", 4,
     "entry 'happy' names category id 2; the header declares ['1']"),
    ("%\n9\ta\n10\tb\n%\nhappy\t11\n", 5,
     "entry 'happy' names category id 11; the header declares ['9', '10']"),
    ("%\n1\ta\n%\nhappy\n", 4, "entry 'happy' lists no category ids; expected ≥ 1"),
    ("%\n1\ta\n%\nha*ppy\t1\n", 4,
     "found 'ha*ppy'; expected '*' only at the end of a word (a stem)"),
    ("%\n1\ta\n%\n*\t1\n", 4, "found the entry '*'; expected a word or a stem*"),
    ("%\n1\ta\n%\nx\t1\ny\t1\nx\t1\n", 6,
     "'x' is listed again (first on line 4); expected each word once, with all its categories"),
    ("%\n1\ta\n%\nkind\t(02 134)1/1\n", 4,
     "entry 'kind' has non-numeric (conditional?) category ids ['(02', '134)1/1']" + SKIP),
    ("%\n1\ta\n%\nkind of\t1\n", 4,
     "the multi-word entry 'kind of' cannot match a single token" + SKIP),
]  # fmt: skip


@pytest.mark.parametrize(("text", "line", "message"), BAD_DICS)
def test_dic_errors_name_file_line_and_expectation(tmp_path, text, line, message):
    path = write(tmp_path, text)
    with pytest.raises(InputError) as info:
        read_dic(path)
    assert str(info.value) == (f"{path}:{line}: " if line else f"{path}: ") + message


def test_a_category_name_may_hold_spaces(tmp_path):
    d = read_dic(write(tmp_path, "%\n1\tpositive emotion\n%\nhappy\t1\nhapp*\t1\n"))
    assert d.categories == ("positive emotion",)
    assert dict(d.words) == {"happy": (0,)} and dict(d.stems) == {"happ": (0,)}
    assert d.source == str(tmp_path / "test.dic") and len(d) == 2


def test_a_dic_in_another_encoding_is_refused_unless_named(tmp_path):
    path = tmp_path / "latin.dic"
    path.write_bytes("%\n1\tafecto\n%\ncoraz\u00f3n\t1\n".encode("latin-1"))
    with pytest.raises(InputError, match="latin.dic: cannot decode as utf-8-sig .*encoding="):
        read_dic(path)
    assert read_dic(path, encoding="latin-1").categories_of("coraz\u00f3n") == ("afecto",)


def test_unsupported_entries_can_be_skipped_and_are_counted(tmp_path):
    text = "%\n1\ta\n%\nkind\t(02 134)1/1\nkind of\t1\nnice\t1\n"
    d = read_dic(write(tmp_path, text), unsupported="skip")
    assert d.skipped == 2
    assert dict(d.words) == {"nice": (0,)}


def test_membership_matrix_equals_the_token_by_token_rule(tmp_path):
    d = read_dic(write(tmp_path, SMALL_DIC))
    tokens = ["happy", "happiness", "happen", "hap", "hurtful", "will", "willing", "x", "happ"]
    matrix = d.membership(tokens).toarray()
    for row, token in zip(matrix, tokens, strict=True):
        expected = np.zeros(len(d.categories), dtype=int)
        for name in d.categories_of(token):
            expected[d.categories.index(name)] = 1
        assert row.tolist() == expected.tolist(), token
    assert matrix.sum() == 2 + 2 + 1 + 0 + 1 + 1 + 0 + 0 + 1


def test_open_dictionary_has_the_required_categories():
    d = open_dictionary()
    required = {
        "male_references", "female_references", "pronoun_i", "pronoun_we", "pronoun_you",
        "pronoun_shehe", "pronoun_they", "past_focus", "present_focus", "future_focus",
        "tentative", "certainty", "causation", "negation", "quantifiers", "family", "work",
        "achievement", "positive_affect", "negative_affect",
    }  # fmt: skip
    assert required <= set(d.categories)
    assert set(d.categories_of("he")) == {"male_references", "pronoun_shehe"}
    assert set(d.categories_of("mother")) == {"female_references", "family"}
    assert d.categories_of("happiness") == ("positive_affect",)
    assert "negation" in d.categories_of("never") and "certainty" in d.categories_of("never")
    sizes = {c: 0 for c in d.categories}
    for entries in (d.words, d.stems):
        for cats in entries.values():
            for c in cats:
                sizes[d.categories[c]] += 1
    open_classes = required - {c for c in required if c.startswith("pronoun_")}
    assert all(20 <= sizes[c] <= 80 for c in open_classes), sizes


def test_empath_is_read_from_its_tsv(tmp_path):
    path = write(tmp_path, "help\tassist\taid\thelp\nviolence\tkill\tfight\tgun_shot\n", "c.tsv")
    d = read_empath_tsv(path)
    assert d.categories == ("help", "violence")
    assert d.categories_of("aid") == ("help",)
    assert d.skipped == 1  # gun_shot cannot match one token
    with pytest.raises(InputError, match="c.tsv:2: term 'gun_shot'"):
        read_empath_tsv(path, unsupported="error")
    with pytest.raises(ValueError) as info:
        read_empath_tsv(path, unsupported="drop")
    assert str(info.value) == "unsupported: expected one of 'error', 'skip', found 'drop'"


EMPATH_EXPECTED = "expected 'category<TAB>term<TAB>…' with ≥ 1 term"


@pytest.mark.parametrize(
    ("raw", "line", "message"),
    [
        (b"pos\tgood\npos\tfine\n", 2, "category 'pos' appears twice"),
        (b"pos\tgood\nneg\t \n", 2, EMPATH_EXPECTED),  # no term
        (b"pos\tgood\n\tbad\n", 2, EMPATH_EXPECTED),  # no name
        (b"pos good\n", 1, EMPATH_EXPECTED),  # a space is not a tab
        (b"pos\tgo\xffod\n", 1, "byte 0xff at column 7 is not UTF-8 (invalid start byte); "
         "expected UTF-8 text"),
        (b"\n \n", None, "no categories found"),
    ],
)  # fmt: skip
def test_an_empath_table_is_refused_at_its_line(tmp_path, raw, line, message):
    path = tmp_path / "c.tsv"
    path.write_bytes(raw)
    with pytest.raises(InputError) as info:
        read_empath_tsv(path)
    assert str(info.value) == (f"{path}:{line}: " if line else f"{path}: ") + message


def test_an_empath_table_with_blank_lines_and_crlf_reads_every_category(tmp_path):
    path = tmp_path / "c.tsv"
    path.write_bytes(b"\xef\xbb\xbfpos\tGood\t fine \r\n\r\nneg\tbad\r\n")
    d = read_empath_tsv(path)
    assert d.categories == ("pos", "neg") and d.source == str(path) and d.skipped == 0
    assert dict(d.words) == {"good": (0,), "fine": (0,), "bad": (1,)}


def test_a_dictionary_checks_its_categories_and_indices():
    d = CategoryDictionary(["a", "b"], {"x": [1, 0, 1]}, {"y": [1]})
    assert d.categories == ("a", "b") and dict(d.words) == {"x": (0, 1)} and len(d) == 2
    assert d.membership(["x", "yes", "z"]).dtype == np.int64
    for words, stems, message in (
        (
            {"x": [2]},
            {},
            "<memory>: word 'x' has category indices [2]; expected at least one in 0..1",
        ),
        (
            {},
            {"y": []},
            "<memory>: stem 'y' has category indices []; expected at least one in 0..1",
        ),
        (
            {"x": [-1]},
            {},
            "<memory>: word 'x' has category indices [-1]; expected at least one in 0..1",
        ),
    ):
        with pytest.raises(InputError) as info:
            CategoryDictionary(["a", "b"], words, stems)
        assert str(info.value) == message
    with pytest.raises(InputError) as info:
        CategoryDictionary(["a", "b", "a"], {}, {}, source="mine.dic")
    assert str(info.value) == "mine.dic: category names repeat in ['a', 'b', 'a']"
    for arguments, message in (
        (("ab", {}, {}), "categories: expected a list, found str 'ab'"),
        ((["a"], [], {}), "words: expected a mapping of entries to categories, found list"),
        ((["a"], {}, ()), "stems: expected a mapping of entries to categories, found tuple"),
    ):
        with pytest.raises(TypeError) as info:
            CategoryDictionary(*arguments)
        assert str(info.value) == message


def test_from_mapping_keeps_its_source_and_restrict_says_so():
    d = CategoryDictionary.from_mapping({"a": ["x", "Happ*"], "b": ["x"]}, source="lists")
    assert d.source == "lists" and dict(d.stems) == {"happ": (0,)}
    only_b = d.restrict(["b"])
    assert only_b.source == "lists (restricted)" and only_b.categories == ("b",)
    with pytest.raises(KeyError) as info:
        d.restrict(["b", "c"])
    assert info.value.args == ("no categor(ies) ['c']; the categories are ['a', 'b']",)


def test_empath_dictionary_without_the_package_says_how_to_get_it(monkeypatch):
    import rankbias.analysis.psycholinguistic as module

    monkeypatch.setattr(module, "find_spec", lambda name: None)  # as if not installed
    assert not module.empath_available()
    with pytest.raises(ImportError) as error:
        empath_dictionary()
    assert str(error.value) == (
        "the Empath lexicon needs the 'empath' package (pip install empath==0.89); "
        "the open dictionary (open_dictionary()) and read_dic(path) work without it"
    )


def test_an_empath_install_without_its_lexicon_file_is_named(monkeypatch, tmp_path):
    import rankbias.analysis.psycholinguistic as module

    class Installed:  # an installed 'empath' whose data folder lacks categories.tsv
        @staticmethod
        def files(name):
            assert name == "empath"
            return tmp_path

    monkeypatch.setattr(module, "resources", Installed)
    with pytest.raises(InputError) as error:
        empath_dictionary()
    assert str(error.value) == (
        f"{tmp_path / 'data' / 'categories.tsv'}: "
        "Empath's categories file is missing from the installed package"
    )


def test_a_missing_empath_table_is_named(tmp_path):
    with pytest.raises(InputError) as error:
        read_empath_tsv(tmp_path / "categories.tsv")
    assert str(error.value) == (
        f"{tmp_path / 'categories.tsv'}: no such file; expected a category table in Empath's form"
    )


def test_empath_dictionary_reads_the_installed_lexicon():
    # empath is a project dependency; its lexicon has 194 categories, among them these
    d = empath_dictionary()
    assert len(d.categories) == 194
    assert {"help", "violence", "family", "work"} <= set(d.categories)
    assert "family" in d.categories_of("mother")


# ---- shares -----------------------------------------------------------------------------------
def test_query_shares_by_hand(tmp_path):
    d = read_dic(write(tmp_path, SMALL_DIC))
    shares = query_category_shares(
        {"q1": ["Happy happy, he will!", "Hurting"], "q2": ["nothing here"], "q3": [""]}, d
    )
    wide = shares.pivot(index="qid", columns="category", values="value")
    # q1 tokens: happy happy he will hurting → 5; posemo 2, affect 3, future 1
    assert wide.loc["q1"].to_dict() == pytest.approx({"posemo": 0.4, "affect": 0.6, "future": 0.2})
    assert wide.loc["q2"].tolist() == [0.0, 0.0, 0.0]
    assert wide.loc["q3"].isna().all()
    assert shares.attrs["empty_queries"] == ["q3"]


def test_query_shares_of_a_last_query_without_texts_are_nan_without_a_warning(tmp_path):
    d = read_dic(write(tmp_path, SMALL_DIC))
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        shares = query_category_shares({"q1": ["happy day"], "q2": []}, d)
    wide = shares.pivot(index="qid", columns="category", values="value")
    assert wide.loc["q1"].to_dict() == {"posemo": 0.5, "affect": 0.5, "future": 0.0}
    assert wide.loc["q2"].isna().all()
    assert shares.attrs["empty_queries"] == ["q2"]


def test_query_shares_of_no_queries_are_an_empty_table(tmp_path):
    d = read_dic(write(tmp_path, SMALL_DIC))
    shares = query_category_shares({}, d)
    assert shares.empty and list(shares.columns) == ["qid", "category", "value"]
    # the same column types as a table with rows, so the two concatenate cleanly
    assert shares.dtypes.equals(query_category_shares({"q1": ["happy"]}, d).dtypes)
    assert shares.attrs["empty_queries"] == []


def test_query_shares_tokenise_with_the_tokenizer_asked_for(tmp_path):
    d = read_dic(write(tmp_path, SMALL_DIC))
    texts = {"q1": ["will, will"]}
    # default: will, will (2 tokens, future 2); whitespace: "will," and "will" (future 1)
    default = query_category_shares(texts, d).set_index("category")["value"]
    split = query_category_shares(texts, d, tokenizer="whitespace").set_index("category")["value"]
    assert default["future"] == 1.0 and split["future"] == 0.5


def test_category_shares_of_a_run_pool_the_top_k(tmp_path):
    d = read_dic(write(tmp_path, SMALL_DIC))
    counts = document_category_counts(
        ["happy day", "will hurt you", "happiness", "no match at all"],
        d,
        docids=["d1", "d2", "d3", "d4"],
    )
    assert counts.lengths.tolist() == [2, 3, 1, 4]
    run = Run.from_frame(
        pd.DataFrame(
            {
                "qid": ["a", "a", "a", "b"],
                "docid": ["d1", "d2", "d3", "d4"],
                "score": [3.0, 2.0, 1.0, 1.0],
            }
        ),
        name="sys",
    )
    shares = category_shares(run, counts, cutoff=2)
    wide = shares.pivot(index="qid", columns="category", values="value")
    # a, top 2 = d1 + d2: 5 tokens; posemo 1 (happy), affect 2 (happy, hurt), future 1 (will)
    assert wide.loc["a"].to_dict() == pytest.approx({"posemo": 0.2, "affect": 0.4, "future": 0.2})
    assert wide.loc["b"].tolist() == [0.0, 0.0, 0.0]
    assert shares.attrs["tokens"] == {"a": 5, "b": 4}
    assert set(shares["run"]) == {"sys"}


def test_a_document_without_counts_is_an_error_or_counted(tmp_path):
    d = read_dic(write(tmp_path, SMALL_DIC))
    counts = document_category_counts(["happy"], d, docids=["d1"])
    run = Run.from_frame(
        pd.DataFrame({"qid": ["a", "a"], "docid": ["d1", "dX"], "score": [2.0, 1.0]}), name="s"
    )
    with pytest.raises(InputError, match="dX"):
        category_shares(run, counts)
    shares = category_shares(run, counts, missing="skip")
    assert shares.attrs["missing_documents"] == 1
    assert shares.loc[shares["category"] == "posemo", "value"].item() == 1.0


# ---- correlation ------------------------------------------------------------------------------
def generated(n_queries=120, n_categories=12, n_metrics=3, seed=0, planted=0.6):
    """Metric m0 depends on category c0 (slope ``planted``); everything else independent."""
    rng = np.random.default_rng(seed)
    qids = [f"q{i:03d}" for i in range(n_queries)]
    shares = rng.random((n_queries, n_categories)) * 0.05
    metrics = rng.normal(size=(n_queries, n_metrics))
    metrics[:, 0] += planted * (shares[:, 0] - shares[:, 0].mean()) / shares[:, 0].std()
    metric_table = pd.DataFrame(
        {
            "run": "bm25",
            "qid": np.repeat(qids, n_metrics),
            "metric": np.tile([f"m{j}" for j in range(n_metrics)], n_queries),
            "cutoff": 10,
            "value": metrics.reshape(-1),
        }
    )
    share_table = pd.DataFrame(
        {
            "run": "bm25",
            "qid": np.repeat(qids, n_categories),
            "category": np.tile([f"c{j:02d}" for j in range(n_categories)], n_queries),
            "value": shares.reshape(-1),
        }
    )
    return metric_table, share_table, metrics, shares


def test_pearson_and_bh_match_scipy_and_statsmodels():
    metric_table, share_table, metrics, shares = generated(n_queries=40, seed=1)
    out = correlate(metric_table, share_table)
    for row in out.itertuples(index=False):
        j, c = int(row.metric[1:]), int(row.category[1:])
        ref = stats.pearsonr(metrics[:, j], shares[:, c])
        assert row.r == pytest.approx(ref.statistic, abs=1e-12)
        assert row.p == pytest.approx(ref.pvalue, rel=1e-9)
        assert row.n == 40
    for _, group in out.groupby("metric"):
        expected = multipletests(group["p"], method="fdr_bh")[1]
        np.testing.assert_allclose(group["p_bh"], expected)
    everything = correlate(metric_table, share_table, family="all")
    np.testing.assert_allclose(
        everything["p_bh"], multipletests(everything["p"], method="fdr_bh")[1]
    )


def test_a_planted_correlation_is_recovered_and_ranked_first():
    metric_table, share_table, *_ = generated(seed=2)
    out = correlate(metric_table, share_table)
    top = top_categories(out, k=5, adjust=True)
    m0 = top[top["metric"] == "m0"]
    assert m0["category"].iloc[0] == "c00"
    assert m0["r"].iloc[0] > 0.3
    planted = out[(out["metric"] == "m0") & (out["category"] == "c00")].iloc[0]
    assert planted["significant_bh"]


def test_no_correlation_where_none_was_planted_at_the_bh_level():
    # 200 metrics, none related to any of 20 categories; with family="metric" each metric is a
    # BH family of 20 independent null tests, so P(any BH rejection) = α exactly (Simes).
    n_metrics, alpha = 200, 0.05
    metric_table, share_table, *_ = generated(
        n_queries=80, n_categories=20, n_metrics=n_metrics, seed=3, planted=0.0
    )
    out = correlate(metric_table, share_table, alpha=alpha)
    families_with_a_rejection = out.groupby("metric")["significant_bh"].any().sum()
    sd = math.sqrt(n_metrics * alpha * (1 - alpha))
    assert families_with_a_rejection <= n_metrics * alpha + 4 * sd
    # unadjusted, about α of the 4000 null tests are "significant"
    share = out["significant"].mean()
    assert abs(share - alpha) < 4 * math.sqrt(alpha * (1 - alpha) / len(out))
    top = top_categories(out, adjust=True)
    assert len(top) == sum(min(5, n) for n in top.attrs["n_significant"].values())


def test_top_categories_orders_by_absolute_r_and_never_pads():
    corr = pd.DataFrame(
        {
            "metric": ["a"] * 4 + ["b"] * 2,
            "category": ["w", "x", "y", "z", "w", "x"],
            "n": 50,
            "r": [0.2, -0.5, 0.4, 0.5, 0.9, 0.1],
            "p": [0.01, 0.001, 0.002, 0.001, 1e-9, 0.5],
            "p_bh": [0.06, 0.002, 0.003, 0.002, 1e-9, 0.5],
            "significant": [True, True, True, True, True, False],
            "significant_bh": [False, True, True, True, True, False],
        }
    )
    raw = top_categories(corr, k=3, adjust=False)
    assert raw[raw["metric"] == "a"]["category"].tolist() == ["x", "z", "y"]  # |r| tie → name
    adjusted = top_categories(corr, k=5, adjust=True)
    assert adjusted[adjusted["metric"] == "a"]["category"].tolist() == ["x", "z", "y"]
    assert adjusted[adjusted["metric"] == "b"]["category"].tolist() == ["w"]
    assert adjusted.attrs["n_significant"] == {"a": 3, "b": 1}
    assert adjusted["rank"].tolist() == [1, 2, 3, 1]


def test_correlate_counts_excluded_queries_and_undefined_pairs():
    metric_table, share_table, *_ = generated(n_queries=30, n_categories=3, n_metrics=2, seed=4)
    metric_table.loc[(metric_table["metric"] == "m1") & (metric_table["qid"] == "q000"),
                     "value"] = np.nan  # fmt: skip
    share_table.loc[share_table["category"] == "c02", "value"] = 0.0  # constant category
    out = correlate(metric_table, share_table)
    assert out.attrs["excluded_queries"] == {"m0": 0, "m1": 1}
    assert out.loc[out["metric"] == "m1", "n"].unique().tolist() == [29]
    assert out.attrs["undefined"] == 2
    assert out.loc[out["category"] == "c02", ["r", "p", "p_bh"]].isna().all().all()
    assert not out.loc[out["category"] == "c02", "significant_bh"].any()


def test_correlate_refuses_several_runs():
    metric_table, share_table, *_ = generated(n_queries=10, seed=5)
    other = metric_table.assign(run="dense")
    with pytest.raises(InputError, match="pass run="):
        correlate(pd.concat([metric_table, other]), share_table)
    out = correlate(pd.concat([metric_table, other]), share_table, run="bm25")
    assert len(out) == 3 * 12


def test_dictionary_from_mapping_and_restrict():
    d = CategoryDictionary.from_mapping({"a": ["x", "y*"], "b": ["x"]})
    assert d.categories_of("x") == ("a", "b")
    assert d.categories_of("yes") == ("a",)
    only_b = d.restrict(["b"])
    assert only_b.categories_of("x") == ("b",)
    assert only_b.categories_of("yes") == ()


def test_document_counts_refusals_types_and_tokenizer(tmp_path):
    d = read_dic(write(tmp_path, SMALL_DIC))
    with pytest.raises(ValueError) as info:
        document_category_counts(["happy", "sad"], d, docids=["d1"])
    assert str(info.value) == "1 docids for 2 texts; expected one each"
    with pytest.raises(InputError) as info:
        document_category_counts(["happy", "sad"], d, docids=["d1", "d1"])
    assert str(info.value) == "docids repeat; expected one text per document id"
    # the default tokenizer splits "will-happy" in two; the whitespace one keeps one token
    default = document_category_counts(["will-happy now", ""], d, docids=[7, 8])
    spaces = document_category_counts(
        ["will-happy now", ""], d, docids=[7, 8], tokenizer="whitespace"
    )
    assert default.lengths.tolist() == [3, 0]
    assert spaces.lengths.tolist() == [2, 1]  # split(" "), as released: "" is one empty token
    assert default.counts.toarray().tolist() == [[1, 1, 1], [0, 0, 0]]
    assert spaces.counts.toarray().tolist() == [[0, 0, 0], [0, 0, 0]]
    assert default.docids.tolist() == ["7", "8"] and default.docids.dtype == object
    assert default.lengths.dtype == np.int64 and default.counts.dtype == np.int64
    assert default.rows(["8", "9", "7"]).tolist() == [1, -1, 0]
    nothing = document_category_counts(["", " "], d)
    assert nothing.counts.shape == (2, 3) and nothing.counts.nnz == 0


def test_category_shares_cut_at_ten_by_default_and_name_what_is_missing(tmp_path):
    d = read_dic(write(tmp_path, SMALL_DIC))
    texts = ["day"] * 10 + ["happy"]  # only the eleventh document holds a category word
    docids = [f"d{i:02d}" for i in range(11)] + ["e"]
    counts = document_category_counts([*texts, ""], d, docids=docids)
    run = Run.from_frame(
        pd.DataFrame({"qid": ["a"] * 11 + ["b"], "docid": docids, "score": [*range(11, 0, -1), 1]}),
        name="sys",
    )
    shares = category_shares(run, counts)
    assert list(shares.columns) == ["run", "qid", "category", "value"]
    assert shares["value"].dtype == np.float64
    assert shares[shares["qid"] == "a"]["value"].tolist() == [0.0, 0.0, 0.0]
    assert shares[shares["qid"] == "b"]["value"].isna().all()  # no token: undefined
    assert shares.attrs["empty_queries"] == ["b"] and shares.attrs["tokens"] == {"a": 10, "b": 0}
    others = Run.from_frame(
        pd.DataFrame(
            {"qid": ["q"] * 7, "docid": list("uvwxyz") + ["d00"], "score": range(7, 0, -1)}
        ),
        name="other",
    )
    with pytest.raises(InputError) as info:
        category_shares(others, counts)
    assert str(info.value) == (
        "run 'other': 6 document(s) of the top 10 have no category counts, e.g. u, v, w, x, y; "
        "expected every document counted (or missing='skip')"
    )
    with pytest.raises(ValueError) as info:
        category_shares(others, counts, missing="drop")
    assert str(info.value) == "missing: expected one of 'error', 'skip', found 'drop'"
    with pytest.raises(ValueError) as info:
        read_dic(write(tmp_path, SMALL_DIC), unsupported="drop")
    assert str(info.value) == "unsupported: expected one of 'error', 'skip', found 'drop'"
    with pytest.raises(ValueError) as info:  # `in` would compare a table element by element
        read_dic(write(tmp_path, SMALL_DIC), unsupported=pd.DataFrame({"x": ["skip"]}))
    assert str(info.value).startswith("unsupported: expected one of 'error', 'skip', found ")


def test_empath_terms_no_token_can_match_are_each_counted(tmp_path):
    path = write(tmp_path, "pos\tgood day\tst*\tx_y\tfine\nneg\tbad\n", "c.tsv")
    d = read_empath_tsv(path)
    assert d.skipped == 3 and dict(d.words) == {"fine": (0,), "bad": (1,)}


def test_correlate_refuses_bad_arguments_and_tables_in_whole_messages():
    metric_table, share_table, *_ = generated(n_queries=10, n_categories=2, n_metrics=2, seed=6)
    with pytest.raises(ValueError) as error:
        correlate(metric_table, share_table, family="query")
    assert str(error.value) == "family: expected one of 'metric', 'all', found 'query'"
    with pytest.raises(ValueError) as error:  # `in` would compare an array element by element
        correlate(metric_table, share_table, family=np.array(["metric"]))
    assert str(error.value).startswith("family: expected one of 'metric', 'all', found array(")
    for alpha in (0.0, 1.0, 1.5, -0.1):
        with pytest.raises(ValueError) as error:
            correlate(metric_table, share_table, alpha=alpha)
        assert str(error.value) == f"alpha: expected a number between 0 and 1, found {alpha!r}"
    with pytest.raises(InputError) as error:
        correlate(metric_table.drop(columns=["value"]), share_table)
    assert str(error.value) == "the metric table lacks column(s) ['value']"
    with pytest.raises(InputError) as error:
        correlate(metric_table, share_table.rename(columns={"category": "c", "qid": "q"}))
    assert str(error.value) == "the shares table lacks column(s) ['category', 'qid']"
    with pytest.raises(TypeError) as error:
        correlate(dict(metric_table), share_table)
    assert str(error.value) == (
        "per_query_metric: expected a table with the columns qid, metric, value, found dict"
    )
    with pytest.raises(TypeError) as error:
        correlate(metric_table, [share_table])
    assert str(error.value) == (
        "shares: expected a table with the columns qid, category, value, found list"
    )
    with pytest.raises(InputError) as error:
        correlate(metric_table, share_table, metrics=["m1", "nfairr", "m0", "arab"])
    assert str(error.value) == "the metric table has no rows for ['nfairr', 'arab']"
    with pytest.raises(InputError) as error:
        correlate(metric_table, share_table, run="dense")
    assert str(error.value) == ("nothing to correlate: the metric or the shares table is empty")
    with pytest.raises(InputError) as error:
        correlate(metric_table, share_table.assign(run="dense"), run="bm25")
    assert str(error.value) == ("nothing to correlate: the metric or the shares table is empty")


def test_correlate_selects_run_cutoff_and_metrics_in_the_order_asked():
    metric_table, share_table, metrics, shares = generated(
        n_queries=12, n_categories=2, n_metrics=2, seed=7
    )
    deeper = metric_table.assign(cutoff=20, value=metric_table["value"] + 100.0 * np.arange(24))
    both = pd.concat([metric_table, deeper], ignore_index=True)
    with pytest.raises(InputError) as error:
        correlate(both, share_table)
    assert str(error.value) == (
        "the metric table holds 2 values of 'cutoff' (10, 20); expected one: pass cutoff="
    )
    two_runs = pd.concat([share_table, share_table.assign(run="dense", value=0.5)])
    with pytest.raises(InputError) as error:
        correlate(metric_table, two_runs)
    assert str(error.value) == (
        "the shares table holds 2 values of 'run' ('bm25', 'dense'); expected one: pass run="
    )
    with pytest.raises(InputError) as error:  # two pairs repeated, one with another value
        correlate(metric_table, pd.concat([share_table, share_table.head(2).iloc[::-1]
                                           .assign(value=0.3)]))  # fmt: skip
    assert str(error.value) == (
        "the shares table has several rows for qid 'q000' and category 'c00'; "
        "expected one per (qid, category)"
    )
    seven = pd.concat([metric_table.assign(cutoff=k) for k in range(1, 8)])
    with pytest.raises(InputError) as error:
        correlate(seven, share_table)
    assert str(error.value) == (  # the first five values named
        "the metric table holds 7 values of 'cutoff' (1, 2, 3, 4, 5); expected one: pass cutoff="
    )
    out = correlate(both, two_runs, cutoff=10, run="bm25", metrics=["m1", "m0"])
    assert out["metric"].tolist() == ["m1", "m1", "m0", "m0"]
    assert out.columns.tolist() == [
        "metric",
        "category",
        "n",
        "r",
        "p",
        "p_bh",
        "significant",
        "significant_bh",
    ]
    for row in out.itertuples(index=False):
        j, c = int(row.metric[1:]), int(row.category[1:])
        assert row.r == pytest.approx(stats.pearsonr(metrics[:, j], shares[:, c]).statistic)
    only = correlate(metric_table, share_table, metrics=["m1"])
    assert only["metric"].unique().tolist() == ["m1"]


def test_correlate_aligns_shares_by_query_and_leaves_out_queries_without_them():
    metric_table, share_table, metrics, shares = generated(
        n_queries=30, n_categories=3, n_metrics=2, seed=8
    )
    extra = share_table.head(3).assign(qid="q999", value=[0.9, 0.1, 0.5])
    without_q007 = share_table[share_table["qid"] != "q007"]
    reordered = pd.concat([extra, without_q007.iloc[::-1]], ignore_index=True)
    out = correlate(metric_table, reordered)
    keep = np.arange(30) != 7
    assert out.attrs["excluded_queries"] == {"m0": 1, "m1": 1}
    assert out["n"].unique().tolist() == [29]
    for row in out.itertuples(index=False):
        j, c = int(row.metric[1:]), int(row.category[1:])
        ref = stats.pearsonr(metrics[keep, j], shares[keep, c])
        assert row.r == pytest.approx(ref.statistic, abs=1e-12)


def test_significance_is_strictly_below_alpha_and_the_attrs_say_how_it_was_tested():
    metric_table, share_table, *_ = generated(n_queries=40, n_categories=4, n_metrics=2, seed=9)
    first = correlate(metric_table, share_table)
    # alpha equal to a row's own p (then p_bh): that row is not significant, and below it is
    p, p_bh = float(first["p"].iloc[0]), float(first["p_bh"].iloc[0])
    at_p = correlate(metric_table, share_table, alpha=p)
    assert not at_p["significant"].iloc[0]
    assert correlate(metric_table, share_table, alpha=p * (1 + 1e-9))["significant"].iloc[0]
    at_bh = correlate(metric_table, share_table, alpha=p_bh, family="all")
    at_bh_p = float(at_bh["p_bh"].iloc[0])
    at_own = correlate(metric_table, share_table, alpha=at_bh_p, family="all")
    assert not at_own["significant_bh"].iloc[0]
    assert at_own.attrs == {
        "excluded_queries": {"m0": 0, "m1": 0},
        "undefined": 0,
        "alpha": at_bh_p,
        "family": "all",
    }


def test_top_categories_whole_table_with_its_defaults_and_metric_order():
    # metric "b" comes first in the table; it has six categories significant after BH (one
    # more than the default k=5) and one significant only before adjustment
    names = ["u", "v", "w", "x", "y", "z", "t"]
    corr = pd.DataFrame(
        {
            "metric": ["b"] * 7 + ["a"] * 2,
            "category": names + ["u", "v"],
            "r": [0.1, -0.7, 0.6, 0.5, -0.4, 0.3, 0.95, 0.2, 0.8],
            "p": [0.001, 1e-6, 1e-5, 1e-4, 1e-3, 0.002, 0.03, 0.01, 1e-7],
            "p_bh": [0.002, 1e-5, 1e-4, 1e-3, 0.002, 0.003, 0.09, 0.02, 1e-6],
            "significant": [True] * 9,
            "significant_bh": [True] * 6 + [False] + [True, True],
        }
    )
    out = top_categories(corr)
    expected = pd.DataFrame(
        {
            "metric": ["b"] * 5 + ["a"] * 2,
            "rank": [1, 2, 3, 4, 5, 1, 2],
            "category": ["v", "w", "x", "y", "z", "v", "u"],
            "r": [-0.7, 0.6, 0.5, -0.4, 0.3, 0.8, 0.2],
            "p": [1e-5, 1e-4, 1e-3, 0.002, 0.003, 1e-6, 0.02],
        }
    ).astype({"metric": object})
    pd.testing.assert_frame_equal(out, expected)
    assert out.attrs == {"n_significant": {"b": 6, "a": 2}, "adjusted": True}
    assert list(out.attrs["n_significant"]) == ["b", "a"]  # the table's order, as the rows
    raw = top_categories(corr, k=1, adjust=False)
    assert raw[["metric", "category", "p"]].values.tolist() == [["b", "t", 0.03], ["a", "v", 1e-7]]
    assert raw.attrs == {"n_significant": {"b": 7, "a": 2}, "adjusted": False}
    with pytest.raises(ValueError) as error:
        top_categories(corr, k=0)
    assert str(error.value) == "k: expected a positive integer, found 0"


def test_three_queries_give_a_correlation_and_two_do_not():
    metric_table, share_table, metrics, shares = generated(
        n_queries=3, n_categories=2, n_metrics=1, seed=10
    )
    out = correlate(metric_table, share_table)
    ref = stats.pearsonr(metrics[:, 0], shares[:, 1])
    assert out["r"].iloc[1] == pytest.approx(ref.statistic, abs=1e-12)
    assert out["p"].iloc[1] == pytest.approx(ref.pvalue, rel=1e-9)
    assert out.attrs["undefined"] == 0
    two = correlate(metric_table[metric_table["qid"] != "q002"], share_table)
    assert two["n"].tolist() == [2, 2]
    assert two[["r", "p", "p_bh"]].isna().all().all()
    assert two.attrs["undefined"] == 2
