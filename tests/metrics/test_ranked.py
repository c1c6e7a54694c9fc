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
