"""rankbias.metrics.ranked: the helpers a measure's kernel (and a plugin's) uses on padded lists.

Expected values are written out by hand."""

from __future__ import annotations

import numpy as np
import pytest

from rankbias.errors import InputError
from rankbias.metrics.ranked import (
    at_cutoffs,
    cutoff_positions,
    pad_lists,
    per_list_kernel,
    valid_mask,
)


def test_valid_mask_marks_the_positions_of_each_lists_documents():
    mask = valid_mask(np.array([0, 2, 4]), 3)
    assert mask.tolist() == [
        [False, False, False],
        [True, True, False],
        [True, True, True],
    ]


def test_no_position_is_asked_for_a_width_of_zero():
    assert valid_mask(np.array([0, 2]), 0).shape == (2, 0)
    assert pad_lists(np.array([0, 2, 3]), np.array([7, 8, 9]), 0).shape == (2, 0)


def test_pad_lists_keeps_the_first_entries_of_each_list_in_their_own_type():
    out = pad_lists(np.array([0, 2, 3]), np.array([7, 8, 9], dtype=np.int8), 1)
    assert out.dtype == np.int8 and out.tolist() == [[7], [9]]


@pytest.mark.parametrize(
    ("call", "kind", "message"),
    [
        (lambda: valid_mask(None, 3), TypeError, "list_lengths: expected numbers, found None"),
        (lambda: valid_mask([[1, 2]], 3), InputError,
         "list_lengths: expected a 1-D array, found shape (1, 2)"),
        (lambda: valid_mask([1], -1), ValueError, "width: expected an integer ≥ 0, found -1"),
        (lambda: cutoff_positions(None, [1]), TypeError,
         "list_lengths: expected numbers, found None"),
        (lambda: cutoff_positions([[3]], [1]), InputError,
         "list_lengths: expected a 1-D array, found shape (1, 1)"),
        (lambda: cutoff_positions([3], "5"), TypeError,
         "cutoffs: expected a list of cut-offs, found str '5'"),
        (lambda: cutoff_positions([0, 3, -1], [2]), InputError,
         "list_lengths: expected lengths ≥ 0, found -1 for query 2"),  # an empty list is a list
        (lambda: at_cutoffs(None, [[1]]), TypeError, "cumulative: expected numbers, found None"),
        (lambda: at_cutoffs(np.ones((1, 3)), None), TypeError,
         "depth: expected numbers, found None"),
        (lambda: at_cutoffs(np.ones((2, 3)), [1, 2]), InputError,
         "depth: expected a 2-D array, found shape (2,)"),
        (lambda: pad_lists(None, [1], 2), TypeError, "offsets: expected numbers, found None"),
        (lambda: pad_lists([0, 1], None, 2), TypeError, "values: expected numbers, found None"),
        (lambda: pad_lists([[0, 1]], [5], 2), InputError,
         "offsets: expected a 1-D array, found shape (1, 2)"),
        (lambda: pad_lists([0, 1], [[5]], 2), InputError,
         "values: expected a 1-D array, found shape (1, 1)"),
        (lambda: pad_lists([0, 1], [5], -1), ValueError,
         "width: expected an integer ≥ 0, found -1"),
    ],
)  # fmt: skip
def test_the_helpers_name_the_argument_they_refuse(call, kind, message):
    with pytest.raises(kind) as info:
        call()
    assert str(info.value) == message


def test_a_per_list_kernel_applies_its_function_to_each_cut_list():
    class Inputs:  # what the scoring provider gives a kernel: padded values and list lengths
        @staticmethod
        def scores():
            values = np.array([[3.0, 1.0, 2.0], [5.0, np.nan, np.nan], [np.nan] * 3])
            return values, np.array([3, 1, 0])

    kernel = per_list_kernel("scores", lambda values, scale=1.0: scale * float(values.sum()))
    out = kernel(Inputs(), [1, 2, 5], scale=10.0)
    np.testing.assert_array_equal(
        out, [[30.0, 40.0, 60.0], [50.0, 50.0, 50.0], [np.nan, np.nan, np.nan]]
    )


def test_cutoff_positions_are_integers_even_from_whole_float_lengths():
    # the positions bound slices (values[i, :k']): a float would not
    depth = cutoff_positions(np.array([3.0, 0.0, 7.0]), [1, 5])
    assert depth.dtype == np.int64 and depth.tolist() == [[1, 3], [0, 0], [1, 5]]
    for lengths, message in (
        ([2.5], "list_lengths: expected integers, found 2.5 for query 0"),
        ([3, -1], "list_lengths: expected lengths ≥ 0, found -1 for query 1"),
    ):
        with pytest.raises(InputError) as info:
            cutoff_positions(lengths, [1])
        assert str(info.value) == message


def test_at_cutoffs_reads_the_cumulative_value_at_each_depth():
    cumulative = np.array([[1, 3, 6], [2, 2, 2]])  # integers: the result is float (NaN)
    # a depth past the end of the matrix reads its end; a depth of 0 (empty list) is NaN
    out = at_cutoffs(cumulative, np.array([[5, 3, 4, 0], [1.0, 2.0, 0.0, 3.0]]))
    assert out.dtype == np.float64
    np.testing.assert_array_equal(out, [[6, 6, 6, np.nan], [2, 2, np.nan, 2]])
    # no position at all: NaN, with the trailing axes of the cumulative array kept
    empty = at_cutoffs(np.zeros((2, 0, 3)), [[0, 0], [0, 0]])
    assert empty.shape == (2, 2, 3) and np.isnan(empty).all()


@pytest.mark.parametrize(
    ("cumulative", "depth", "message"),
    [
        (np.ones((1, 3)), [[1.5]],
         "depth: expected integers, found 1.5 for (query, cut-off) (0, 0)"),
        (np.ones((1, 3)), [[2, -1]], "depth: expected depths ≥ 0, found -1"),
        (np.ones((2, 3)), [[1]], "depth: expected 2 rows (one per query), found 1"),
        (np.ones((2, 3)), np.ones((3, 2), int), "depth: expected 2 rows (one per query), found 3"),
        (np.array([["a", "b"]]), [[1]],
         "cumulative: expected numbers of shape (n_queries, K, ...), found <U1 of shape (1, 2)"),
        (np.ones(3), [[1]],
         "cumulative: expected numbers of shape (n_queries, K, ...), found float64 of shape (3,)"),
    ],
)  # fmt: skip
def test_at_cutoffs_refuses_depths_and_arrays_it_cannot_read(cumulative, depth, message):
    with pytest.raises(InputError) as info:
        at_cutoffs(cumulative, depth)
    assert str(info.value) == message


def test_pad_lists_takes_whole_float_offsets_and_refuses_offsets_that_do_not_cover_the_values():
    out = pad_lists(np.array([0.0, 2.0, 3.0]), np.array([7, 8, 9]), 2)
    assert out.tolist() == [[7, 8], [9, -1]]
    expected = "offsets: expected 0 = o[0] ≤ o[1] ≤ … ≤ o[-1] = {} (the number of values), found {}"
    for offsets, n_values, found in (
        ([1, 3], 2, "[1, 3]"),  # the first list would start inside the values
        ([0, 3], 2, "[0, 3]"),
        ([0, 2, 1, 2], 2, "[0, 2, 1, 2]"),  # a list of length -1
        ([], 0, "[]"),
        ([0, 1, 2, 3, 4, 5, 6, 8], 7, "[0, 1, 2, 3, 4, 5, 6, 8]"),
        ([0, 1, 2, 3, 4, 5, 6, 7, 8, 10], 9, "[0, 1, 2, 3, 4, 5, 6, 7] …"),
        ([0, 1, 2, 3, 4, 5, 6, 7, 9], 8, "[0, 1, 2, 3, 4, 5, 6, 7] …"),  # nine: one not shown
    ):
        with pytest.raises(InputError) as info:
            pad_lists(offsets, np.arange(n_values), 2)
        assert str(info.value) == expected.format(n_values, found)
    with pytest.raises(InputError) as info:
        pad_lists([0, 1.5, 2], [7, 8], 2)
    assert str(info.value) == "offsets: expected integers, found 1.5 for position 1"
