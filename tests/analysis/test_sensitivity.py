"""Tests of rankbias.analysis.sensitivity: word-list subsampling by column selection.

Expected values: the full-list scores of :func:`rankbias.scoring.score_runs` (100% must reproduce
them exactly), statistics recomputed from the texts with the sub-list (an independent path
through the tokeniser), and hand-made study tables for the summaries.
"""

from __future__ import annotations

import warnings

import numpy as np
import pandas as pd
import pytest

from rankbias.analysis.sensitivity import (
    lexicon_of,
    subsample_coverage,
    subsample_stats,
    subsampling_study,
)
from rankbias.errors import InputError
from rankbias.lexicon import Lexicon, subsample
from rankbias.runs import Run
from rankbias.scoring import DEFAULT_MEASURES, score_runs
from rankbias.text import document_stats

FEMALE = ["she", "her", "woman", "mother", "girl", "queen", "aunt", "sister"]
MALE = ["he", "him", "man", "father", "boy", "king", "uncle", "brother"]
LEXICON = Lexicon.from_mapping({**{t: "f" for t in FEMALE}, **{t: "m" for t in MALE}})
FILLER = ["the", "river", "data", "music", "stone", "paper", "cloud", "table"]


@pytest.fixture(scope="module")
def testbed():
    rng = np.random.default_rng(0)
    vocabulary = FEMALE + MALE + FILLER * 4
    texts = [" ".join(rng.choice(vocabulary, size=rng.integers(5, 30))) for _ in range(120)]
    docids = [f"d{i:03d}" for i in range(120)]
    stats = document_stats(texts, LEXICON, docids=docids, per_term=True)
    runs = []
    for name in ("bm25", "dense"):
        rows = []
        for q in range(16):
            chosen = rng.choice(120, size=12, replace=False)
            rows.append(
                pd.DataFrame(
                    {
                        "qid": f"q{q:02d}",
                        "docid": [docids[i] for i in chosen],
                        "score": np.arange(12, 0, -1.0),
                    }
                )
            )
        runs.append(Run.from_frame(pd.concat(rows), name))
    return texts, docids, stats, runs


def test_the_full_list_gives_the_statistics_unchanged(testbed):
    _, _, stats, _ = testbed
    same = subsample_stats(stats, lexicon_of(stats))
    np.testing.assert_array_equal(same.group_counts, stats.group_counts)
    assert (same.term_counts != stats.term_counts).nnz == 0
    assert same.terms == stats.terms
    full = subsample_stats(stats, subsample(lexicon_of(stats), 1.0, seed=123))
    np.testing.assert_array_equal(full.group_counts, stats.group_counts)


def test_column_selection_equals_recounting_the_texts_with_the_sub_list(testbed):
    texts, docids, stats, _ = testbed
    for fraction, seed in ((0.25, 1), (0.5, 2), (0.75, 3)):
        sub = subsample(LEXICON, fraction, seed)
        selected = subsample_stats(stats, sub)
        recounted = document_stats(texts, sub, docids=docids, per_term=True)
        np.testing.assert_array_equal(selected.group_counts, recounted.group_counts)
        np.testing.assert_array_equal(selected.lengths, recounted.lengths)
        assert selected.terms == recounted.terms
        np.testing.assert_array_equal(selected.term_group, recounted.term_group)
        assert (selected.term_counts != recounted.term_counts).nnz == 0


def test_subsampling_at_100_percent_reproduces_the_full_list_values_exactly(testbed):
    _, _, stats, runs = testbed
    metrics = list(DEFAULT_MEASURES)
    full = score_runs(runs, stats, metrics, cutoffs=(5, 10))
    study = subsampling_study(
        runs, stats, metrics, cutoffs=(5, 10), fractions=(0.5, 1.0), seeds=range(3)
    )
    at_full = study[study["fraction"] == 1.0]
    assert at_full["seed"].unique().tolist() == [0]  # computed once
    left = full.set_index(["run", "qid", "metric", "cutoff"])["value"].sort_index()
    right = (
        at_full.astype({"run": str, "qid": str, "metric": str})
        .set_index(["run", "qid", "metric", "cutoff"])["value"]
        .sort_index()
    )
    assert left.index.equals(right.index)
    np.testing.assert_array_equal(left.to_numpy(), right.to_numpy())  # NaN where NaN


def test_a_replicate_equals_scoring_the_recounted_collection(testbed):
    texts, docids, stats, runs = testbed
    study = subsampling_study(
        runs, stats, ["arab_tc", "nfairr", "texfair"], fractions=(0.5,), seeds=[7]
    )
    recounted = document_stats(texts, subsample(LEXICON, 0.5, 7), docids=docids, per_term=True)
    expected = score_runs(runs, recounted, ["arab_tc", "nfairr", "texfair"], cutoffs=(10,))
    np.testing.assert_allclose(study["value"].to_numpy(), expected["value"].to_numpy())
    assert study.attrs["terms_kept"][(0.5, 7)] == {"f": 4, "m": 4}


def test_study_shape_and_reproducibility(testbed):
    _, _, stats, runs = testbed
    kwargs = dict(metrics=["arab_tc"], fractions=(0.25, 1.0), seeds=range(4))
    first = subsampling_study(runs, stats, **kwargs)
    again = subsampling_study(runs, stats, **kwargs)
    # 2 runs × 16 queries × 1 metric × 1 cutoff: 4 seeds at 25%, once at 100%
    assert len(first) == 32 * (4 + 1)
    pd.testing.assert_frame_equal(first, again)
    seeds = first[first["fraction"] == 0.25].groupby("seed")["value"].apply(tuple)
    assert len(set(seeds)) > 1  # different seeds, different sub-lists


def test_errors_without_per_term_counts_or_with_foreign_terms(testbed):
    texts, docids, stats, _ = testbed
    plain = document_stats(texts, LEXICON, docids=docids)
    with pytest.raises(InputError, match="per_term=True"):
        subsample_stats(plain, LEXICON)
    other = Lexicon.from_mapping({"she": "f", "duke": "m"})
    with pytest.raises(InputError, match="not columns of the statistics"):
        subsample_stats(stats, other)
    moved = Lexicon.from_mapping({"she": "m", "he": "f"}, groups=("f", "m"))
    with pytest.raises(InputError, match="term 'he' is in group 'f'"):
        subsample_stats(stats, moved)


def test_subsample_coverage_equals_recounting_the_texts_with_each_sub_list(testbed):
    texts, docids, stats, _ = testbed
    table = subsample_coverage(stats, LEXICON, [0.25, 1.0], seeds=[0, 1])
    assert len(table) == 2 * 2 * 2
    full = table[table["fraction"] == 1.0]
    assert (full["occurrence_share"] == 1.0).all() and (full["terms"] == 8).all()
    totals = document_stats(texts, LEXICON).group_counts.sum(axis=0)
    for row in table.itertuples():
        sub = subsample(LEXICON, row.fraction, row.seed)
        counts = document_stats(texts, sub).group_counts[:, LEXICON.groups.index(row.group)]
        assert row.terms == len(sub.terms_of(row.group))
        assert row.occurrences == counts.sum()
        assert row.occurrence_share == counts.sum() / totals[LEXICON.groups.index(row.group)]
        assert row.documents == (counts > 0).sum()
    quarter = table[table["fraction"] == 0.25]
    assert (quarter["terms"] == 2).all() and (quarter["occurrence_share"] < 1).all()


@pytest.mark.parametrize("stratified", [True, False])
def test_subsample_coverage_draws_as_subsample_does_stratified_or_pooled(testbed, stratified):
    texts, docids, stats, _ = testbed
    table = subsample_coverage(stats, LEXICON, [0.5], seeds=range(6), stratified=stratified)
    terms = [
        len(subsample(LEXICON, 0.5, seed, stratified=stratified).terms_of(group))
        for seed in range(6)
        for group in LEXICON.groups
    ]
    assert table["terms"].tolist() == terms
    # pooled draws leave the groups unequal in some of these seeds, stratified ones never
    assert bool((table["terms"] == 4).all()) == stratified


def test_subsample_coverage_of_a_group_that_never_occurs_is_nan_without_a_warning():
    stats = document_stats(["she and her mother", "the river"], LEXICON, per_term=True)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        table = subsample_coverage(stats, LEXICON, [0.5], seeds=[3]).set_index("group")
    assert np.isnan(table.loc["m", "occurrence_share"])
    assert table.loc["m", "occurrences"] == 0 and table.loc["m", "documents"] == 0


@pytest.mark.parametrize(
    ("change", "kind", "message"),
    [
        ({"stats": {}}, TypeError, "stats: expected the DocStats of a collection, found dict"),
        ({"seeds": "3"}, TypeError, "seeds: expected a list of seeds, found str '3'"),
        ({"seeds": 3}, TypeError, "seeds: expected a list of seeds, found int 3"),
        ({"seeds": [1, -1]}, ValueError, "seeds: expected an integer ≥ 0, found -1"),
        ({"seeds": [1.0]}, ValueError, "seeds: expected an integer ≥ 0, found 1.0"),
        ({"fractions": "0.5"}, TypeError,
         "fractions: expected a list of fractions, found str '0.5'"),
        ({"fractions": 0.5}, TypeError,
         "fractions: expected a list of fractions, found float 0.5"),
    ],
)  # fmt: skip
def test_subsample_coverage_names_the_argument_it_refuses(testbed, change, kind, message):
    stats = testbed[2]
    arguments = {"stats": stats, "lexicon": LEXICON, "fractions": [0.5], "seeds": [0]} | change
    with pytest.raises(kind) as info:
        subsample_coverage(**arguments)
    assert str(info.value) == message


def test_subsample_stats_refusals_whole_and_counts_typed(testbed):
    texts, docids, stats, _ = testbed
    plain = document_stats(texts, LEXICON, docids=docids)
    with pytest.raises(InputError) as info:
        subsample_stats(plain, LEXICON)
    assert str(info.value) == (
        "the statistics have no per-term counts; compute them with per_term=True "
        "(rankbias.text.document_stats / read_collection_stats) to subsample the word list"
    )
    swapped = Lexicon.from_mapping({"she": "f", "he": "m"}, groups=("m", "f"))
    with pytest.raises(InputError) as info:
        subsample_stats(stats, swapped)
    assert str(info.value) == (
        "the word list has groups ['m', 'f'], the statistics ['f', 'm']; expected the same "
        "groups in the same order"
    )
    foreign = Lexicon.from_mapping({t: "f" for t in ["a1", "a2", "a3", "a4", "a5", "a6", "she"]}
                                   | {"he": "m"})  # fmt: skip
    with pytest.raises(InputError) as info:
        subsample_stats(stats, foreign)
    assert str(info.value) == (
        "6 term(s) of the word list are not columns of the statistics, e.g. ['a1', 'a2', 'a3', "
        "'a4', 'a5']; expected a sub-list of the terms the statistics were computed with"
    )
    moved = Lexicon.from_mapping({"she": "f", "her": "m", "him": "f"}, groups=("f", "m"))
    with pytest.raises(InputError) as info:
        subsample_stats(stats, moved)
    assert str(info.value) == (
        "term 'him' is in group 'f' in the word list but in another group, 'm', in the "
        "statistics; expected the same group"
    )
    kept = subsample_stats(stats, Lexicon.from_mapping({"she": "f", "king": "m"}))
    assert kept.group_counts.dtype == np.int64 and kept.group_counts.shape == (120, 2)
    assert (
        kept.terms == ("she", "king")
        and kept.term_group.dtype == np.asarray(stats.term_group).dtype
    )


def test_lexicon_of_gives_the_statistics_word_list():
    stats = document_stats(["he said", "she"], LEXICON, docids=["a", "b"], per_term=True)
    lexicon = lexicon_of(stats)
    assert lexicon.groups == ("f", "m") and lexicon.source == "<DocStats terms>"
    assert dict(lexicon.term_to_group) == dict(LEXICON.term_to_group)


def test_subsampling_study_takes_one_run_a_given_word_list_and_checks_its_arguments(testbed):
    _, _, stats, runs = testbed
    half = Lexicon.from_mapping({t: "f" for t in FEMALE[:4]} | {t: "m" for t in MALE[:4]})
    study = subsampling_study(runs[0], stats, metrics=["arab_tc"], fractions=(1.0,), lexicon=half)
    expected = score_runs(runs[0], subsample_stats(stats, half), ["arab_tc"], [10])
    assert study["value"].tolist() == expected["value"].tolist()
    # seeds 1.5 and 1.7 were both read as seed 1, and a seed given twice was drawn twice
    for seeds, message in [
        ([], "seeds: expected at least one, each once, found []"),
        ([3, 3], "seeds: expected at least one, each once, found [3, 3]"),
        ([1.5, 1.7], "seeds: expected an integer ≥ 0, found 1.5"),
        ([-1], "seeds: expected an integer ≥ 0, found -1"),
    ]:
        with pytest.raises(ValueError) as info:
            subsampling_study(runs, stats, seeds=seeds)
        assert str(info.value) == message
    for fractions in ([0.0], [1.5], []):
        with pytest.raises(ValueError) as info:
            subsampling_study(runs, stats, fractions=fractions)
        assert str(info.value) == f"fractions must be in (0, 1], found {fractions}"


def test_the_undefined_values_of_each_sub_list_are_counted():
    # q2's documents hold "she" and "he" only: a sub-list without both leaves TExFAIR without
    # RBDF undefined there
    lexicon = Lexicon.from_mapping({"she": "f", "her": "f", "he": "m", "him": "m"})
    texts = ["her and him", "him, her", "she said", "he said"]
    stats = document_stats(texts, lexicon, docids=["a", "b", "c", "d"], per_term=True)
    run = Run.from_frame(
        pd.DataFrame({"qid": ["q1", "q1", "q2", "q2"], "docid": ["a", "b", "c", "d"],
                      "score": [2.0, 1.0, 2.0, 1.0]}), "s",
    )  # fmt: skip
    study = subsampling_study(run, stats, ["texfair_norbdf"], fractions=[0.5], seeds=range(4))
    counts = []
    for seed in range(4):
        sub = subsample(lexicon, 0.5, seed)
        expected = score_runs([run], subsample_stats(stats, sub), ["texfair_norbdf"], [10])
        counts.append(study.attrs["undefined_values"][(0.5, seed)])
        assert counts[-1] == expected.attrs["undefined_values"]
    assert {("s", "texfair_norbdf"): 1} in counts and {} in counts


def test_the_study_passes_its_options_and_draw_to_every_replicate(testbed):
    _, _, stats, runs = testbed
    lexicon = lexicon_of(stats)
    study = subsampling_study(
        runs[:1], stats, ["nfairr(background=run)", "arab_tc"], fractions=(0.5, 1.0), seeds=[3],
        background=runs[1],
    )  # fmt: skip
    for fraction in (0.5, 1.0):
        sub = subsample(lexicon, 0.5, 3) if fraction < 1 else lexicon
        expected = score_runs(
            runs[:1],
            subsample_stats(stats, sub),
            ["nfairr(background=run)", "arab_tc"],
            [10],
            background=runs[1],
        )
        got = study[study["fraction"] == fraction]
        np.testing.assert_array_equal(got["value"].to_numpy(), expected["value"].to_numpy())
        assert study.attrs["undefined_values"][(fraction, 3 if fraction < 1 else 0)] == dict(
            expected.attrs["undefined_values"]
        )
    plain = subsampling_study(runs[:1], stats, ["nfairr"], fractions=(0.5, 1.0), seeds=[3])
    assert not np.array_equal(  # the background run changes NFaiRR's ideal
        plain["value"].to_numpy(), study[study["metric"] != "arab_tc"]["value"].to_numpy()
    )
    assert set(study.attrs) == {"undefined_values", "terms_kept", "stratified"}
    assert study.attrs["stratified"] is True
    assert study.dtypes.astype(str).to_dict() == {
        "fraction": "float64", "seed": "int32", "run": "category", "qid": "category",
        "metric": "category", "cutoff": "category", "value": "float64",
    }  # fmt: skip


def test_a_pooled_draw_that_empties_a_group_is_named_with_its_fraction_and_seed(testbed):
    _, _, stats, runs = testbed
    with pytest.raises(InputError) as expected:  # one term of sixteen: one group is left empty
        subsample(lexicon_of(stats), 0.05, 0, stratified=False)
    with pytest.raises(InputError) as error:
        subsampling_study(runs, stats, ["arab_tc"], fractions=(0.05,), seeds=[0], stratified=False)
    assert str(error.value) == f"fraction 0.05, seed 0: {expected.value}"
    pooled = subsampling_study(
        runs, stats, ["arab_tc"], fractions=(0.5,), seeds=range(4), stratified=False
    )
    assert pooled.attrs["stratified"] is False
    for seed in range(4):
        sub = subsample(lexicon_of(stats), 0.5, seed, stratified=False)
        assert pooled.attrs["terms_kept"][(0.5, seed)] == {
            g: len(sub.terms_of(g)) for g in ("f", "m")
        }
    assert {tuple(k.values()) for k in pooled.attrs["terms_kept"].values()} != {(4, 4)}


def test_the_word_list_of_statistics_keeps_their_group_order(testbed):
    texts, docids, _, _ = testbed
    reordered = Lexicon.from_mapping({"she": "f", "her": "f", "he": "m"}, groups=("m", "f"))
    stats = document_stats(texts, reordered, docids=docids, per_term=True)
    assert lexicon_of(stats).groups == ("m", "f")
    sub = subsample_stats(stats, Lexicon.from_mapping({"she": "f", "he": "m"}, groups=("m", "f")))
    words = [t.split() for t in texts]
    np.testing.assert_array_equal(
        sub.group_counts, [[w.count("he"), w.count("she")] for w in words]
    )
