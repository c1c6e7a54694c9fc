"""Tests of rankbias.metrics.validation: a public function given something that is not numbers
raises a ``ValueError`` that names the argument, never NumPy's bare message."""

from __future__ import annotations

import numpy as np
import pytest

from rankbias import metrics
from rankbias.errors import InputError
from rankbias.metrics.validation import check_targets, check_values

SCORES = [0.5, -0.2, 0.1]
CALLS = [
    ("male_magnitude", lambda bad: metrics.bias_labels(bad, [1.0])),
    ("female_magnitude", lambda bad: metrics.bias_labels([1.0], bad)),
    ("scores", lambda bad: metrics.dcv(bad)),
    ("scores", lambda bad: metrics.dcv_bounds(bad)),
    ("scores", lambda bad: metrics.duo_direction(bad)),
    ("scores", lambda bad: metrics.extreme_orderings(bad)),
    ("scores", lambda bad: metrics.signed_duo(bad)),
    ("perspective_one_scores", lambda bad: metrics.orientation_signed_duo(SCORES, bad)),
    ("scores", lambda bad: metrics.polarisation_accuracy(bad, [1, -1, 1])),
    ("embeddings", lambda bad: metrics.polarisation_scores(bad)),
    ("distractor_a", lambda bad: metrics.spurious_direction(bad, [[1.0, 0.0]])),
    ("group_counts", lambda bad: metrics.document_magnitudes(bad)),
    ("targets", lambda bad: metrics.max_ted(bad)),
    ("score", lambda bad: metrics.normalise_scores(["q", "q"], bad)),
    ("score", lambda bad: metrics.pairwise_ranking_fairness(["q"], bad, [True], [1])),
    ("nprf_m", lambda bad: metrics.pairwise_difference(bad, [0.5])),
    ("nprf_f", lambda bad: metrics.t_statistic_squared([0.5, 0.4], bad)),
    ("fairr_values", lambda bad: metrics.nfairr(bad, [1.0])),
    ("ideal_values", lambda bad: metrics.nfairr([0.5], bad)),
    ("omega", lambda bad: metrics.ideal_fairr_collection(bad, [10])),
]


CALL_IDS = [f"{i}-{name}" for i, (name, _) in enumerate(CALLS)]


@pytest.mark.parametrize("bad", ["x", ["1", "a"], [None, {}]], ids=["text", "strings", "objects"])
@pytest.mark.parametrize(("name", "call"), CALLS, ids=CALL_IDS)
def test_non_numbers_are_refused_naming_the_argument(name, call, bad):
    with pytest.raises(ValueError, match=rf"^{name}: expected numbers"):
        call(bad)


def test_nfairr_refuses_ideals_of_another_shape_and_no_cutoffs():
    with pytest.raises(ValueError, match=r"^ideal_values: shape \(3,\) does not broadcast"):
        metrics.nfairr(np.ones((2, 2)), [1.0, 2.0, 3.0])
    with pytest.raises(ValueError, match=r"^cutoffs must be positive integers, found \[\]"):
        metrics.ideal_fairr_collection([0.5, 1.0], [])


def test_list_lengths_may_be_whole_floats_and_nothing_else():
    from rankbias.metrics.validation import check_list_lengths

    lengths = check_list_lengths(np.array([2.0, 0.0, 3.0]), 3, 3)
    assert lengths.tolist() == [2, 0, 3] and lengths.dtype == np.int64
    for given, message in (
        ([2.0, 2.5], "list_lengths: expected integers, found 2.5 for query 1"),
        ([np.inf, 1.0], "list_lengths: expected integers, found inf for query 0"),
        (["2", "1"], "list_lengths: expected integers, found dtype <U1"),
    ):
        with pytest.raises(InputError) as info:
            check_list_lengths(np.array(given), 2, 3)
        assert str(info.value) == message


def test_integers_are_read_without_truncating_any():
    from rankbias.metrics.validation import as_integers

    for given, expected in (
        ([2.0, -1.0], [2, -1]),
        (np.array([3, 250], dtype=np.uint8), [3, 250]),
        ([True, False], [1, 0]),
        ([], []),
    ):
        out = as_integers(given, "x")
        assert out.dtype == np.int64 and out.tolist() == expected
    assert as_integers([[1.0], [4.0]], "x", 2).tolist() == [[1], [4]]
    for given, ndim, item, message in (
        ([0.5, 1.5], None, "query", "x: expected integers, found 0.5 for query 0"),
        ([2.0, np.nan], None, "position", "x: expected integers, found nan for position 1"),
        ([[1.0, 2.0], [3.0, np.inf]], 2, "cell", "x: expected integers, found inf for cell (1, 1)"),
        (["1"], None, "position", "x: expected integers, found dtype <U1"),
        ([None, 1], None, "position", "x: expected integers, found dtype object"),
        ([1, 2], 2, "position", "x: expected a 2-D array, found shape (2,)"),
    ):
        with pytest.raises(InputError) as info:
            as_integers(given, "x", ndim, item)
        assert str(info.value) == message


def test_target_shares_are_floats_summing_to_one_and_errors_name_them():
    assert check_targets(None, 4).tolist() == [0.25, 0.25, 0.25, 0.25]
    shares = check_targets([0, 1], 2)  # integers are shares too, held as floats
    assert shares.dtype == np.float64 and shares.tolist() == [0.0, 1.0]
    for call, kind, message in (
        (lambda: check_targets(None, 0), ValueError,
         "n_groups: expected a positive integer, found 0"),
        (lambda: check_targets(["a", "b"], 2, "omega"), InputError,
         "omega: expected numbers; could not convert string to float: 'a'"),
        (lambda: check_targets([0.5, 0.6], 2), InputError,
         "targets must be 2 non-negative shares summing to 1, found [0.5, 0.6]"),
    ):  # fmt: skip
        with pytest.raises(kind) as info:
            call()
        assert str(info.value) == message


@pytest.mark.parametrize(
    ("values", "options", "message"),
    [
        (["0.5", "a"], {}, "scores: expected numbers; could not convert string to float: 'a'"),
        ([0.5, -np.inf], {}, "scores: found -inf at index (1,) (1 such value(s)); expected finite "
         "numbers"),
        ([0.5, -1.0], {"non_negative": True}, "scores: found -1.0 at index (1,) (1 such "
         "value(s)); expected finite, non-negative numbers"),
    ],
)  # fmt: skip
def test_check_values_names_the_array_what_it_found_and_what_it_expected(values, options, message):
    with pytest.raises(InputError) as caught:
        check_values(values, "scores", **options)
    assert str(caught.value) == message
    check_values([0.5, -1.0], "scores")  # a negative number is finite: refused only on request
