"""Tests of rankbias.errors: the argument checks every public function shares.

A flag given as a string (``"no"``, ``"false"``) is true to Python: before these checks
``neutrality(strict="false")`` silently used the strict reading, ``subsample(stratified="no")``
stratified and ``dcv(include_full="no")`` added the last cut point.  A seed of ``None`` drew
fresh entropy (a different Duo estimate on every call).
"""

from __future__ import annotations

import dataclasses
import os
import re
import tempfile
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from rankbias.analysis.agreement import metric_correlation, paired_tests, split_label
from rankbias.analysis.compare import compare
from rankbias.analysis.consistency import bias_direction, bias_ranks, consistency_bins, rank_bins
from rankbias.analysis.explain import explain, strip_plot
from rankbias.analysis.psycholinguistic import (
    CategoryDictionary,
    category_shares,
    correlate,
    document_category_counts,
    query_category_shares,
    read_dic,
    read_empath_tsv,
    top_categories,
)
from rankbias.analysis.query_sets import label_query_sets
from rankbias.analysis.seme import (
    accuracy_by_question,
    attach_duo,
    fit_seme,
    polarisation_table,
    study_orderings,
    write_study_responses,
)
from rankbias.analysis.sensitivity import lexicon_of, subsample_stats, subsampling_study
from rankbias.collection import iter_documents, read_collection_stats
from rankbias.counterfactual import substitute_collection
from rankbias.data.catalog import select
from rankbias.data.fetch import fetch
from rankbias.distributed import score_runs_on_dask
from rankbias.effectiveness import effectiveness, split_measure
from rankbias.errors import InputError, expect_choice, expect_count, expect_flag, expect_items
from rankbias.inputs import read_bytes
from rankbias.lexicon import default_lexicon, subsample
from rankbias.metrics.duo import cut_points, dcv, duo_sampled, signed_duo
from rankbias.metrics.fairr import fairr_at_cutoffs, ideal_fairr_collection, neutrality, nfairr
from rankbias.metrics.prf import pairwise_ranking_fairness, t_statistic_squared
from rankbias.metrics.rank_fairness import rkl, rnd
from rankbias.metrics.ranked import position_discount
from rankbias.metrics.rbo import rbo
from rankbias.metrics.texfair import distribution_distance
from rankbias.models import embed_texts, load_sentence_encoder
from rankbias.outputs import atomic_open, check_output, write_table, write_text
from rankbias.plots import book_table
from rankbias.retrieval import reciprocal_rank_fusion, top_k
from rankbias.runs import Run, read_run
from rankbias.scoring import (
    mean_per_system,
    parse_metric_list,
    plan_measures,
    required_inputs,
    score_runs,
)
from rankbias.text import DocStats, TermMatcher, document_stats, tokenize


@pytest.mark.parametrize("value", [True, False, np.True_, np.False_])
def test_a_flag_is_a_bool(value):
    assert expect_flag(value, "f") is bool(value)


@pytest.mark.parametrize("value", ["no", "false", "", 0, 1, None, 1.0, [True]])
def test_anything_else_is_not_a_flag(value):
    with pytest.raises(TypeError) as info:
        expect_flag(value, "strict")
    assert str(info.value) == f"strict: expected True or False, found {value!r}"


@pytest.mark.parametrize(("value", "minimum"), [(1, 1), (7, 1), (np.int64(3), 1), (0, 0)])
def test_a_count_is_an_integer_at_least_its_minimum(value, minimum):
    assert expect_count(value, "n", minimum) == value
    assert type(expect_count(value, "n", minimum)) is int


@pytest.mark.parametrize(
    ("value", "minimum", "message"),
    [
        (0, 1, "n: expected a positive integer, found 0"),
        (-1, 0, "n: expected an integer ≥ 0, found -1"),
        (True, 0, "n: expected an integer ≥ 0, found True"),
        (np.True_, 1, "n: expected a positive integer, found np.True_"),
        (2.0, 1, "n: expected a positive integer, found 2.0"),
        ("5", 0, "n: expected an integer ≥ 0, found '5'"),
        (None, 1, "n: expected a positive integer, found None"),
    ],
)
def test_anything_else_is_not_a_count(value, minimum, message):
    with pytest.raises(ValueError) as info:
        expect_count(value, "n", minimum)
    assert str(info.value) == message


COUNTS = np.array([[1, 0], [0, 2], [2, 1]])
SCORES = [0.3, -0.2, 0.5, -0.4, 0.1]
CORRELATIONS = pd.DataFrame(
    {"metric": ["m"], "category": ["c"], "r": [0.5], "p": [0.01], "p_bh": [0.01],
     "significant": [True], "significant_bh": [True]}
)  # fmt: skip
RESPONSES = pd.DataFrame(
    {"corpus": ["a"] * 4, "prior": [1, 2, 3, 4], "posterior": [2, 2, 4, 5],
     "n_clicked": [1, 2, 1, 3], "signed_duo": [0.1, -0.2, 0.3, 0.0]}
)  # fmt: skip


@pytest.mark.parametrize(
    ("call", "error", "message"),
    [
        (lambda: neutrality(COUNTS, strict="false"), TypeError,
         "strict: expected True or False, found 'false'"),
        (lambda: neutrality(COUNTS, tau="1"), TypeError,
         "tau: expected a finite number ≥ 0, found '1'"),
        (lambda: neutrality(COUNTS, tau=True), TypeError,
         "tau: expected a finite number ≥ 0, found True"),
        (lambda: dcv(SCORES, include_full="no"), TypeError,
         "include_full: expected True or False, found 'no'"),
        (lambda: signed_duo(SCORES, include_full=1), TypeError,
         "include_full: expected True or False, found 1"),
        (lambda: cut_points(-3), ValueError, "n: expected an integer ≥ 0, found -3"),
        (lambda: cut_points(4.0), ValueError, "n: expected an integer ≥ 0, found 4.0"),
        (lambda: position_discount("5"), ValueError, "n: expected an integer ≥ 0, found '5'"),
        (lambda: position_discount(-1), ValueError, "n: expected an integer ≥ 0, found -1"),
        (lambda: duo_sampled(SCORES * 2, seed=None), TypeError,
         "seed: expected an integer ≥ 0, a sequence of them or a Generator, found None"),
        (lambda: duo_sampled(SCORES * 2, seed=1.5), TypeError,
         "seed: expected an integer ≥ 0, a sequence of them or a Generator, found 1.5"),
        (lambda: duo_sampled(SCORES, seed=True), TypeError,
         "seed: expected an integer ≥ 0, a sequence of them or a Generator, found True"),
        (lambda: duo_sampled(SCORES * 2, seed=1, n_samples=10.5), ValueError,
         "n_samples: expected a positive integer, found 10.5"),
        (lambda: duo_sampled(SCORES, seed=1, exhaustive_max_n=-1), ValueError,
         "exhaustive_max_n: expected an integer ≥ 0, found -1"),
        (lambda: subsample(default_lexicon(), 0.5, 1, stratified="no"), TypeError,
         "stratified: expected True or False, found 'no'"),
        (lambda: document_stats(["he"], default_lexicon(), per_term="no"), TypeError,
         "per_term: expected True or False, found 'no'"),
        (lambda: top_categories(CORRELATIONS, adjust="no"), TypeError,
         "adjust: expected True or False, found 'no'"),
        (lambda: fit_seme(RESPONSES, robust="yes"), TypeError,
         "robust: expected True or False, found 'yes'"),
        (lambda: fit_seme(RESPONSES, combined=None), TypeError,
         "combined: expected True or False, found None"),
        (lambda: fit_seme(RESPONSES, alpha=1), ValueError,
         "alpha: expected a number between 0 and 1, found 1"),
        (lambda: t_statistic_squared([0.1, 0.2], [0.3, 0.5], ddof=-1), ValueError,
         "ddof: expected an integer ≥ 0, found -1"),
        (lambda: pairwise_ranking_fairness([1, None], [0.5, 0.2], [1, 0], [1, -1]), TypeError,
         "qid: expected query ids of one sortable type, found ['NoneType', 'int']"),
        (lambda: compare(pd.DataFrame(), bootstrap=2.0), ValueError,
         "bootstrap: expected a positive integer, found 2.0"),
        # compare and explain drew from fresh entropy (another table on every call) with
        # seed=None, and named nothing with seed=1.5 (numpy's SeedSequence message)
        (lambda: compare(pd.DataFrame(), seed=None), TypeError,
         "seed: expected an integer ≥ 0, a sequence of them or a Generator, found None"),
        (lambda: compare(pd.DataFrame(), seed=-1), TypeError,
         "seed: expected an integer ≥ 0, a sequence of them or a Generator, found -1"),
        (lambda: compare(pd.DataFrame(), confidence="0.9"), ValueError,
         "confidence: expected a number between 0 and 1, found '0.9'"),
        # a string was read character by character: "metric(s) a, f, i, n, r not in the scores"
        (lambda: compare(pd.DataFrame(), metrics="nfairr"), TypeError,
         "metrics: expected a list of measure names, found 'nfairr'"),
        (lambda: consistency_bins(pd.DataFrame(), ["a", "b"], seed=None), TypeError,
         "seed: expected an integer ≥ 0, a sequence of them or a Generator, found None"),
    ],
)  # fmt: skip
def test_public_functions_refuse_what_python_would_read_otherwise(call, error, message):
    with pytest.raises(error) as info:
        call()
    assert type(info.value) is error and str(info.value) == message


@pytest.mark.parametrize(
    ("call", "message"),
    [
        # ω = 1 − (an L1 distance of two distributions, at most 2) lies in [−1, 1]: 2 gave
        # FaiRR@2 = 3.26, above any ideal
        (lambda: fairr_at_cutoffs(np.full((1, 3), 2.0), np.array([3]), [2]),
         "omega_ranked: found 2.0 at index (0, 0) (3 such value(s)); expected numbers from -1 "
         "to 1"),
        (lambda: fairr_at_cutoffs(np.array([[1.0, -1.5, 0.0]]), np.array([2]), [2]),
         "omega_ranked: found -1.5 at index (0, 1) (1 such value(s)); expected numbers from -1 "
         "to 1"),
        (lambda: ideal_fairr_collection(np.array([0.5, 1.5]), [1]),
         "omega: found 1.5 at index (1,) (1 such value(s)); expected numbers from -1 to 1"),
        (lambda: nfairr(np.array([[1.0]]), np.array([[np.inf]])),
         "ideal_values: found inf; expected finite values (or NaN)"),
    ],
)  # fmt: skip
def test_fairr_refuses_values_outside_their_range(call, message):
    with pytest.raises(ValueError) as info:
        call()
    assert str(info.value) == message


def test_a_neutrality_below_zero_is_a_neutrality():
    # three groups, or targets other than 1/2: a document all of one group is further from the
    # targets than 1; ω = 1 − (2/3 + 1/3 + 1/3) = −1/3, and targets (0, 1) give ω = −1 for a
    # document all of the first group
    np.testing.assert_allclose(neutrality(np.array([[3, 0, 0]])), [-1 / 3])
    np.testing.assert_allclose(neutrality(np.array([[2, 0]]), targets=[0.0, 1.0]), [-1.0])
    omega = np.array([[-1.0, 1.0]])
    np.testing.assert_allclose(fairr_at_cutoffs(omega, np.array([2]), [2]), [[-1 + 1 / np.log2(3)]])
    np.testing.assert_allclose(nfairr(np.array([[-0.5]]), np.array([[1.0]])), [[-0.5]])


def test_padding_and_undefined_values_are_still_accepted():
    # padding past a list's length is not checked; an empty list's FaiRR is NaN, and so is its
    # NFaiRR; numpy's own bools and integers are flags and counts
    padded = np.array([[1.0, 0.5, 9.0]])
    assert fairr_at_cutoffs(padded, np.array([2]), [3])[0, 0] == pytest.approx(
        1.0 + 0.5 / np.log2(3)
    )
    assert np.isnan(nfairr(np.array([[np.nan]]), np.array([[1.0]]))[0, 0])
    np.testing.assert_array_equal(
        neutrality(COUNTS, strict=np.True_), neutrality(COUNTS, strict=True)
    )
    np.testing.assert_array_equal(cut_points(np.int64(5)), [2, 3, 4])
    assert duo_sampled(SCORES * 2, seed=[3, 1]) == duo_sampled(SCORES * 2, seed=[3, 1])


@pytest.mark.parametrize(
    ("options", "message"),
    [
        # block_bytes=0 read the file in one block; -1 reached os.pread as "Invalid argument"
        ({"block_bytes": 0}, "block_bytes: expected a positive integer, found 0"),
        ({"block_bytes": -1}, "block_bytes: expected a positive integer, found -1"),
        ({"block_bytes": "10"}, "block_bytes: expected a positive integer, found '10'"),
        ({"workers": 1.0}, "workers: expected a positive integer, found 1.0"),
        ({"workers": -1}, "workers: expected a positive integer, found -1"),
        ({"per_term": "no"}, "per_term: expected True or False, found 'no'"),
    ],
)
def test_the_collection_reader_checks_its_arguments_before_reading(tmp_path, options, message):
    from rankbias.collection import read_collection_stats

    path = tmp_path / "c.tsv"
    path.write_text("d1\the she him\nd2\tfoo bar\n", encoding="utf-8")
    with pytest.raises((TypeError, ValueError)) as info:
        read_collection_stats(path, default_lexicon(), **options)
    assert str(info.value) == message
    assert read_collection_stats(path, default_lexicon(), workers=1).group_counts.tolist() == [
        [1, 2],
        [0, 0],
    ]


@pytest.mark.parametrize("limit", [0, -5, "9"])
def test_a_line_limit_is_a_positive_integer(tmp_path, limit):
    # 0 and -5 blamed the file's first line ("runs for more than -5 bytes"); "9" leaked a
    # TypeError from a comparison
    from rankbias.collection import iter_collection_stats

    path = tmp_path / "c.tsv"
    path.write_text("d1\the\n", encoding="utf-8")
    with pytest.raises(ValueError) as info:
        list(iter_collection_stats(path, default_lexicon(), max_line_bytes=limit))
    assert str(info.value) == f"max_line_bytes: expected a positive integer, found {limit!r}"


# ---- lists given as one string, objects of the wrong kind, tables without their columns ----
@pytest.mark.parametrize("value", [["a", "b"], ("a",), np.array(["a"]), {"a": 1}, range(2)])
def test_items_are_any_iterable_but_a_string(value):
    assert expect_items(value, "ids") == list(value)
    assert expect_items(iter(["a", "b"]), "ids") == ["a", "b"]


@pytest.mark.parametrize(
    ("value", "message"),
    [
        ("ab", "ids: expected a list, found str 'ab'"),
        (b"ab", "ids: expected a list, found bytes b'ab'"),
        (5, "ids: expected a list, found int 5"),
        (None, "ids: expected a list, found NoneType None"),
    ],
)
def test_a_string_or_a_scalar_is_not_a_list_of_items(value, message):
    with pytest.raises(TypeError) as info:
        expect_items(value, "ids")
    assert str(info.value) == message


RUN = Run.from_frame(
    pd.DataFrame({"qid": ["1", "1", "2"], "docid": ["a", "b", "a"], "score": [2.0, 1.0, 1.0]}),
    name="r",
)
STATS = document_stats(["he is", "she is"], default_lexicon(), docids=["a", "b"])
DICTIONARY = CategoryDictionary.from_mapping({"pronoun": ["he", "she"], "verb": ["is"]})
COUNTS_OF = document_category_counts(["he is", "she"], DICTIONARY, docids=["a", "b"])
SHARES = category_shares(RUN, COUNTS_OF, cutoff=2)
WRITE_TO = Path(tempfile.gettempdir()) / f"rankbias-test-errors-{os.getpid()}.csv"
TABLE = score_runs([RUN, dataclasses.replace(RUN, name="other")], STATS, ["rab_tc", "nfairr"], [2])
PER_QUERY = pd.DataFrame({"qid": ["1", "2"], "metric": ["m", "m"], "value": [0.5, 0.2]})


@pytest.mark.parametrize(
    ("call", "error", "message"),
    [
        # each of these read a string character by character: 11 documents from "hello world",
        # the queries "1" and "2" from "12", the words "h" and "e" from "he"
        (lambda: document_category_counts("hello world", DICTIONARY), TypeError,
         "texts: expected texts (a list, not one string), found str 'hello world'"),
        (lambda: document_category_counts(["he"], DICTIONARY, docids="a"), TypeError,
         "docids: expected a list, found str 'a'"),
        (lambda: query_category_shares({"1": "he is"}, DICTIONARY), TypeError,
         "texts_by_query['1']: expected a list of document texts, found str 'he is'"),
        (lambda: CategoryDictionary.from_mapping({"pronoun": "he"}), TypeError,
         "entries['pronoun']: expected a list of words, found str 'he'"),
        (lambda: correlate(PER_QUERY, SHARES, metrics="m"), TypeError,
         "metrics: expected a list of metrics (not one string), found str 'm'"),
        (lambda: RUN.restrict("12"), TypeError,
         "qids: expected query ids (a list, not one string), found str '12'"),
        (lambda: document_stats(["he", "she"], default_lexicon(), docids="ab"), TypeError,
         "docids: expected a list, found str 'ab'"),
        (lambda: STATS.rows("ab"), TypeError,
         "docids: expected docids (a list, not one string), found str 'ab'"),
        (lambda: required_inputs("nfairr"), TypeError,
         "metrics: expected a list of measures, found 'nfairr'"),
        # a cut-off of 2.5 was taken as 2 and True as 1; "5" and 1 ended in a raw TypeError
        (lambda: RUN.cut(2.5), ValueError, "cutoff: expected a positive integer, found 2.5"),
        (lambda: RUN.cut(True), ValueError, "cutoff: expected a positive integer, found True"),
        (lambda: category_shares(RUN, COUNTS_OF, cutoff="5"), ValueError,
         "cutoff: expected a positive integer, found '5'"),
        (lambda: RUN.ranked(1), TypeError, "qid: expected a query id (str), found int"),
        (lambda: parse_metric_list(5), TypeError,
         "text: expected a comma-separated measure list, found int"),
        # AttributeError, KeyError or IndexError before, naming nothing
        (lambda: document_category_counts(["he"], None), TypeError,
         "dictionary: expected a CategoryDictionary (read_dic), found NoneType"),
        (lambda: category_shares(None, COUNTS_OF), TypeError,
         "run: expected a Run (rankbias.runs.read_run), found NoneType"),
        (lambda: category_shares(RUN, DICTIONARY), TypeError,
         "counts: expected the CategoryCounts of document_category_counts, "
         "found CategoryDictionary"),
        (lambda: query_category_shares([["he"]], DICTIONARY), TypeError,
         "texts_by_query: expected a mapping qid → [document text, …], found list"),
        (lambda: top_categories(pd.DataFrame()), InputError,
         "correlations: lacks column(s) ['category', 'metric', 'p_bh', 'r', 'significant_bh']; "
         "expected correlate()'s"),
        (lambda: DocStats.concat([STATS, None]), TypeError,
         "parts: expected DocStats of consecutive blocks, found NoneType"),
        (lambda: substitute_collection([("a", "he")]), TypeError,
         "collection: expected a DataFrame with columns docid, text, found list"),
        (lambda: attach_duo(pd.DataFrame({"participant_id": []}), pd.DataFrame()), InputError,
         "responses: lacks the column(s) ['question_id', 'shown']; expected a DataFrame with the "
         "columns participant_id, question_id, shown"),
        (lambda: book_table([1, 2], "A table."), TypeError,
         "frame: expected a DataFrame, found list"),
        (lambda: rank_bins(np.arange(3), 2), ValueError,
         "ranks: expected an array of queries × metrics, found (3,)"),
        (lambda: bias_ranks(np.arange(3.0)), ValueError,
         "bias: expected an array of queries × metrics, found (3,)"),
        (lambda: attach_duo(pd.DataFrame({"participant_id": [], "question_id": [], "shown": []}),
                            pd.DataFrame({"doc_id": []})), InputError,
         "table: lacks the column(s) ['question_id', 'perspective', 'score']; expected a "
         "DataFrame with the columns question_id, doc_id, perspective, score"),
        # a table that is no DataFrame at all: the argument named, not an AttributeError
        (lambda: score_runs(None), TypeError, "runs: expected a Run or a list of them, found "
         "NoneType None"),
        (lambda: mean_per_system(None), TypeError,
         "table: expected a tidy table of score_runs(), found NoneType"),
        (lambda: consistency_bins(None, ["rab"]), TypeError,
         "per_query: expected a tidy table of score_runs(), found NoneType"),
        (lambda: subsampling_study(None, STATS), TypeError,
         "runs: expected a Run or a list of them, found NoneType None"),
        (lambda: accuracy_by_question([]), TypeError, "table: expected a DataFrame with the "
         "columns question_id, perspective, score, found list"),
        (lambda: study_orderings(pd.DataFrame({"question_id": []})), InputError,
         "table: lacks the column(s) ['doc_id', 'perspective', 'score']; expected a DataFrame "
         "with the columns question_id, doc_id, perspective, score"),
        (lambda: polarisation_table(None, np.zeros((0, 2))), TypeError, "perspectives: expected "
         "a DataFrame with the columns question_id, doc_id, perspective, found NoneType"),
        (lambda: fit_seme(None), TypeError,
         "responses: expected the responses of attach_duo(), found NoneType"),
        (lambda: write_study_responses(None, WRITE_TO), TypeError, "responses: expected a "
         "DataFrame with the columns participant_id, corpus, question_id, prior, posterior, "
         "shown, clicked, found NoneType"),
        (lambda: read_dic(None), TypeError, "path: expected a file path, found NoneType"),
        (lambda: read_empath_tsv(None), TypeError, "path: expected a file path, found NoneType"),
        (lambda: correlate(pd.DataFrame({"qid": [], "metric": [], "value": []}), None),
         TypeError, "shares: expected a table with the columns qid, category, value, found "
         "NoneType"),
        (lambda: top_categories(None), TypeError,
         "correlations: expected the table of correlate(), found NoneType"),
        # a later argument of the wrong kind: named, not a comparison or iteration failing inside
        (lambda: score_runs(RUN, STATS, ["rab_tc"], [None]), TypeError,
         "cutoffs: expected integers ≥ 1, found None in [None]"),
        (lambda: mean_per_system(TABLE, None), TypeError,
         "by: expected a list of column names, found NoneType None"),
        (lambda: consistency_bins(TABLE, None), TypeError,
         "metrics: expected a list of measure names, found NoneType None"),
        (lambda: consistency_bins(TABLE, ["rab_tc", "nfairr"], run={}), TypeError,
         "run: expected a run name or None, found dict"),
        (lambda: consistency_bins(TABLE, ["rab_tc", "nfairr"], directions=0.5), TypeError,
         "directions: expected a mapping metric → direction, found float"),
        (lambda: compare(TABLE, metrics=[]), ValueError,
         "metrics: expected at least one measure name, found none"),
        (lambda: explain(RUN, STATS, None, ["rab_tc@2"]), TypeError,
         "qids: expected a list, found NoneType None"),
        (lambda: rank_bins(np.zeros((3, 2), dtype=int), 0), ValueError,
         "n_bins: expected a positive integer, found 0"),
        (lambda: reciprocal_rank_fusion("fused", []), ValueError,
         "runs: expected at least one Run to fuse, found none"),
        (lambda: reciprocal_rank_fusion("fused", [RUN], k=-60), ValueError,
         "k: expected a number ≥ 0 (default 60), found -60"),
        (lambda: top_k(np.array([1.0, 2.0]), -1, True), ValueError,
         "k: expected a positive integer, found -1"),
        (lambda: distribution_distance(np.array([0.5, 0.5, 0.0]), np.array([0.5, 0.5])),
         ValueError, "dist, target: expected shares of the same groups, found (3,) and (2,)"),
        # pandas' "DataFrame constructor not properly called!", Python's "expected str, bytes
        # or os.PathLike object, not int", and AttributeErrors naming nothing
        (lambda: score_runs([RUN], STATS, ["prf_m"], [2], qrels="qrels.txt"), TypeError,
         "qrels: expected a table, a Series or a mapping, found the str 'qrels.txt' (a file is "
         "read first: rankbias.runs.read_qrels, rankbias.annotations.read_polarisation)"),
        (lambda: plan_measures(["awrf@5"], [5], ["awrf@5", "AWRF@5"]), ValueError,
         "spellings: found 2; expected one per measure (1)"),
        (lambda: read_bytes(__file__, "run file", check="strict"), TypeError,
         "check: expected a function of bytes or None, found 'strict'"),
        (lambda: plan_measures(["awrf@5", "rnd@5"], [5], ["awrf@5"]), ValueError,
         "spellings: found 1; expected one per measure (2)"),
        (lambda: plan_measures(["awrf@5"], [5], "awrf@5"), TypeError,
         "spellings: expected a list, found str 'awrf@5'"),
        (lambda: read_collection_stats(5, default_lexicon()), TypeError,
         "path: expected a collection file's path, found int"),
        (lambda: list(iter_documents(None)), TypeError,
         "source: expected a collection file's path or a dataset id, found NoneType"),
        (lambda: effectiveness("bm25.run", pd.DataFrame()), TypeError,
         "runs: expected a Run, a list of Runs or a mapping name -> Run, found str 'bm25.run'"),
        (lambda: effectiveness({"a": "bm25.run"}, pd.DataFrame()), TypeError,
         "runs: expected a Run, a list of Runs or a mapping name -> Run, found str"),
        (lambda: split_measure(10), TypeError,
         "measure label: expected a str such as 'nDCG@10', found 10"),
        (lambda: split_label(5), TypeError,
         "measure label: expected a str such as 'nDCG@10', found 5"),
        (lambda: metric_correlation(None), TypeError,
         "per_query: expected a tidy table of score_runs() or a list of them, found NoneType "
         "None"),
        (lambda: paired_tests(["scores.csv"]), TypeError,
         "tables[0]: expected a tidy table of score_runs() or a list of them, found str"),
        (lambda: label_query_sets(None, {}), TypeError,
         "frame: expected a DataFrame with a qid column, found NoneType"),
        (lambda: label_query_sets(pd.DataFrame({"qid": ["1"]}), [["1"]]), TypeError,
         "sets: expected a mapping label -> qids, found list"),
        (lambda: write_table(WRITE_TO, [1, 2]), TypeError,
         "table: expected a pandas DataFrame or a pyarrow Table, found list"),
        (lambda: write_table(None, pd.DataFrame({"a": [1]})), TypeError,
         "--out: expected a file path, found NoneType"),
        (lambda: check_output(None), TypeError, "--out: expected a file path, found NoneType"),
        (lambda: write_text(WRITE_TO, b"bytes"), TypeError, "text: expected a str, found bytes"),
        (lambda: select(None), TypeError,
         "names_or_bundles: expected names (a list), found NoneType None"),
        (lambda: fetch(["cpjku/LICENSE"], None), TypeError,
         "dest: expected a directory path, found NoneType"),
        (lambda: embed_texts(["a text"], batch_size="8"), ValueError,
         "batch_size: expected a positive integer, found '8'"),
        (lambda: lexicon_of(None), TypeError,
         "stats: expected the DocStats of a collection, found NoneType"),
        (lambda: subsample_stats(None, default_lexicon()), TypeError,
         "stats: expected the DocStats of a collection, found NoneType"),
        (lambda: subsample_stats(STATS, "he,she"), TypeError,
         "lexicon: expected a Lexicon (a sub-list of the statistics' terms), found str"),
        # numpy's "expected non-negative integer", naming nothing
        (lambda: subsample(default_lexicon(), 0.5, -1), TypeError,
         "seed: expected an integer ≥ 0 (explicit, for a reproducible draw), found -1"),
        # a table of other columns failed in pandas' groupby with KeyError: 'qid'; run names
        # given for runs failed with "'str' object has no attribute 'name'"
        (lambda: strip_plot(pd.DataFrame({"qid": ["1"], "rank": [1]})), InputError,
         "table: lacks the column(s) ['metric', 'cutoff', 'contribution']; "
         "expected the DataFrame of explain()"),
        (lambda: score_runs_on_dask(None, ["bm25.run"]), TypeError,
         "runs: expected a Run or a list of them, found str"),
    ],
)  # fmt: skip
def test_public_functions_refuse_a_string_for_a_list_and_objects_of_the_wrong_kind(
    call, error, message
):
    with pytest.raises(error) as info:
        call()
    assert type(info.value) is error and str(info.value) == message


@pytest.mark.parametrize(
    ("call", "message"),
    [
        # a CSV with two columns of one name (a parquet file: pyarrow's own message)
        (lambda: write_table(WRITE_TO, pd.DataFrame([[1, 2, 3]], columns=["a", "b", "a"])),
         "table: column(s) ['a'] appear twice; expected each once"),
        # nothing verified or fetched, silently
        (lambda: select([]), "names_or_bundles: expected at least one name (or 'all'), found none"),
        # undefined bias levels sorted last, as the least biased queries
        (lambda: bias_ranks(np.array([[0.2, 0.1], [np.nan, 0.3]])),
         "bias: expected bias levels, found NaN (leave such queries out first)"),
        # a NaN score was kept in the top k (the testbed's rankers)
        (lambda: top_k(np.array([np.nan, 2.0, 1.0]), 1, False),
         "scores: expected numbers, found NaN at 1 row(s), e.g. [0]"),
        # a digit count of −1 formatted floats to none; an empty caption left a table unnamed
        (lambda: book_table(pd.DataFrame({"a": [1.0]}), "A table.", digits=-1),
         "digits: expected an integer ≥ 0, found -1"),
        (lambda: book_table(pd.DataFrame({"a": [1.0]}), " "),
         "caption: expected the table's caption, found an empty one"),
        (lambda: book_table(pd.DataFrame({"a": [1.0]}), "A table.", precise={"b": 4}),
         "precise: no column ['b']; found ['a']"),
    ],
)  # fmt: skip
def test_undefined_or_impossible_values_are_refused(call, message):
    with pytest.raises(ValueError) as info:
        call()
    assert str(info.value) == message
    assert not WRITE_TO.exists()


def test_a_device_torch_does_not_know_is_named():
    # torch's RuntimeError; torch's own list of device types follows in brackets
    with pytest.raises(ValueError) as info:
        load_sentence_encoder(device="tpu")
    assert str(info.value).startswith("device: 'tpu' is not a torch device (Expected one of cpu")


def test_a_collection_to_substitute_needs_one_row_per_docid():
    frame = pd.DataFrame({"docid": ["a", None, "a", "b"], "text": ["he", "she", "him", "her"]})
    with pytest.raises(InputError) as info:
        substitute_collection(frame)
    assert str(info.value) == (
        "collection: row 1 has no docid (2 such row(s) in all); expected one row per document, "
        "each with its docid"
    )
    with pytest.raises(InputError, match=r"row 1 has docid 'a' again \(1 such"):
        substitute_collection(frame.iloc[[0, 2, 3]].reset_index(drop=True))


@pytest.mark.parametrize(
    ("column", "value", "shown", "dtype"),
    [
        ("prior", np.nan, "nan", object),
        ("signed_duo", "high", "'high'", object),
        ("n_clicked", np.inf, "inf", object),
        ("prior", np.nan, "nan", float),  # a numpy float64: shown as the number, not its type
    ],
)
def test_the_seme_regression_names_a_value_it_cannot_fit(column, value, shown, dtype):
    # NaN ended in numpy's "SVD did not converge"; a string in "could not convert ... to float"
    responses = RESPONSES.astype({column: dtype})
    responses.loc[2, column] = value
    with pytest.raises(InputError) as info:
        fit_seme(responses)
    assert str(info.value) == (
        f"responses: column {column!r} holds {shown} at row 2 (1 such row(s)); expected finite "
        "numbers (read_study_responses skips and counts a response without an answer)"
    )


def test_a_choice_is_one_of_its_strings():
    assert expect_choice("b", "name", ("a", "b")) == "b"
    for value in ["c", "A", "", None, 1, ["a"], np.array(["a"]), pd.DataFrame({"a": ["a"]})]:
        with pytest.raises(ValueError, match=r"^name: expected one of 'a', 'b', found "):
            expect_choice(value, "name", ("a", "b"))


# a table or an array where a choice is expected: `in` compared it element by element and
# failed with "The truth value of a DataFrame is ambiguous"
TABLE_AS_CHOICE = pd.DataFrame({"value": ["a"]})
NO_PERSPECTIVES = pd.DataFrame(columns=["question_id", "doc_id", "perspective"])


@pytest.mark.parametrize(
    ("call", "name", "choices"),
    [
        (lambda x: Run.from_frame(PER_QUERY.assign(docid="d", score=1.0), "r", order=x), "order",
         "'score', 'given'"),
        (lambda x: read_run(WRITE_TO, order=x), "order", "'score', 'file'"),
        (lambda x: atomic_open(WRITE_TO, x).__enter__(), "mode", "'w', 'wb'"),
        (lambda x: tokenize("he", x), "tokenizer", "'default', 'whitespace'"),
        (lambda x: TermMatcher(default_lexicon(), x), "tokenizer", "'default', 'whitespace'"),
        (lambda x: score_runs([RUN], STATS, ["nfairr"], [2], missing=x), "missing",
         "'error', 'neutral'"),
        (lambda x: score_runs([RUN], STATS, ["nfairr"], [2], empty=x), "empty", "'error', 'nan'"),
        (lambda x: bias_direction("duo", {"duo": x}), r"directions\['duo'\]",
         "'fairer', 'biased', 'signed'"),
        (lambda x: consistency_bins(TABLE, ["rab_tc@2", "nfairr@2"], undefined=x), "undefined",
         "'exclude', 'error'"),
        (lambda x: compare(TABLE, test=x), "test", "'randomisation', 't', 'wilcoxon'"),
        (lambda x: compare(TABLE, correction=x), "correction",
         "'holm', 'bonferroni', 'bh', 'none'"),
        (lambda x: polarisation_table(NO_PERSPECTIVES, np.zeros((0, 2)), removal=x), "removal",
         "'none', 'pooled', 'per_question'"),
        (lambda x: category_shares(RUN, COUNTS_OF, 2, missing=x), "missing", "'error', 'skip'"),
        # the measures' own choices
        (lambda x: rbo(["a"], ["a"], variant=x), "variant", "'ext', 'min', 'res'"),
        (lambda x: dcv(np.zeros((4, 2)), variance=x), "variance", "'prefix', 'global'"),
        (lambda x: rnd([1, 0], discount=x), "discount", r"'log2\(i\+1\)', 'log2\(i\)'"),
        (lambda x: rkl([1, 0], kl_smoothing=x), "kl_smoothing", "'none', 'fairrank'"),
        (lambda x: t_statistic_squared([1.0, 2.0], [1.0, 3.0], form=x), "form",
         "'standard', 'printed'"),
    ],
)  # fmt: skip
@pytest.mark.parametrize("value", [TABLE_AS_CHOICE, np.array(["a", "b"]), 1, "neither"])
def test_every_choice_argument_names_itself_whatever_it_is_given(call, name, choices, value):
    with pytest.raises(ValueError, match=rf"^{name}: expected one of {choices}, found "):
        call(value)
    assert not WRITE_TO.exists()


def test_what_the_checks_let_through_still_works():
    # a list of lists, an array, a set, a generator; a display name in precise; headers naming
    # columns a table lacks (one mapping serves several tables)
    assert list(RUN.restrict(np.array(["2"])).qids) == ["2"]
    assert list(RUN.restrict({"1"}).qids) == ["1"]
    assert list(RUN.cut(np.int64(1)).docids) == ["a", "a"]
    assert STATS.rows(q for q in ["b", "z"]).tolist() == [1, -1]
    table = book_table(pd.DataFrame({"nfairr@10": [0.123456]}), "A table.",
                       headers={"absent": "x"}, precise={"NFaiRR@10": 5})  # fmt: skip
    assert "0.12346" in table.to_html()
    assert reciprocal_rank_fusion("fused", [RUN], k=0).scores.tolist() == [1.0, 0.5, 1.0]


# ---- every public callable, given None ---------------------------------------------------
#: Exported names that take None, or whose None is not an argument error: enumerations (Python
#: says "None is not a valid Input"), records the package builds and hands out, and a default.
TAKES_NONE = {
    "rankbias.metrics.measures.HigherIs": "an enumeration",
    "rankbias.metrics.measures.Input": "an enumeration",
    "rankbias.analysis.psycholinguistic.CategoryCounts": "a record document_category_counts builds",
    "rankbias.collection.Block": "a record the readers yield",
    "rankbias.collection.BlockError": "a record the readers yield",
    "rankbias.counterfactual.SubstitutionReport": "a record substitute_collection returns",
    "rankbias.dataset.Dataset": "a record load_dataset builds",
    "rankbias.dataset.QuerySet": "a record load_dataset builds",
    "rankbias.outputs.TableFormat": "a record table_format returns",
    "rankbias.outputs.Terminated": "an exception the signal handler raises",
    "rankbias.scoring.parse_metric_list": "None is the default measures",
}


def public_callables() -> list[tuple[str, object]]:
    """``(module.name, callable)`` of every name in a module's ``__all__`` that is defined there
    and takes a required argument."""
    import importlib
    import inspect
    import pkgutil

    import rankbias

    found = []
    for info in pkgutil.walk_packages(rankbias.__path__, "rankbias."):
        module = importlib.import_module(info.name)
        for name in getattr(module, "__all__", ()):
            value = getattr(module, name)
            if not callable(value) or getattr(value, "__module__", None) != info.name:
                continue
            parameters = inspect.signature(value).parameters.values()
            if any(p.default is p.empty and p.kind not in (p.VAR_POSITIONAL, p.VAR_KEYWORD)
                   for p in parameters):  # fmt: skip
                found.append((f"{info.name}.{name}", value))
    return found


def test_the_sweep_sees_the_package():
    names = {name for name, _ in public_callables()}
    assert len(names) > 120
    assert {"rankbias.metrics.rbo.rbo", "rankbias.runs.Run", "rankbias.text.DocStats"} <= names
    assert set(TAKES_NONE) <= names  # an exemption of a name gone goes too


@pytest.mark.parametrize(
    ("name", "function"),
    [pytest.param(n, f, id=n.removeprefix("rankbias.")) for n, f in public_callables()
     if n not in TAKES_NONE],
)  # fmt: skip
def test_every_public_callable_refuses_none_naming_what_it_expected(name, function):
    """None for every required argument: a TypeError or ValueError raised by the package's own
    check, saying what it expected and naming an argument (a measure's hook, a generator and a
    context manager are entered: that is where they start)."""
    import inspect

    parameters = inspect.signature(function).parameters.values()
    positional = [p for p in parameters if p.default is p.empty
                  and p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD)]  # fmt: skip
    keywords = {p.name: None for p in parameters if p.default is p.empty
                and p.kind is p.KEYWORD_ONLY}  # fmt: skip
    with pytest.raises((TypeError, ValueError)) as info:
        result = function(*[None] * len(positional), **keywords)
        if inspect.isgenerator(result):
            next(result)
        elif hasattr(result, "__enter__"):
            with result:
                pass
    message = str(info.value)
    raised_in = info.traceback[-1].path
    assert "/rankbias/" in str(raised_in), f"{name}: {message!r} raised in {raised_in}"
    assert "expected" in message, f"{name}: {message!r}"
    names = [p.name for p in parameters] + ["--"]
    assert any(n in message for n in names) or re.match(r"[\w .\[\]']{1,30}: ", message), (
        f"{name}: {message!r} names no argument of {names}, nor starts with what it is about"
    )
