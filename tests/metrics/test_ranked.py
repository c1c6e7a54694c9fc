"""rankbias.metrics.ranked: the helpers a measure's kernel (and a plugin's) uses on padded lists.

Expected values are written out by hand."""

from __future__ import annotations

import numpy as np

from rankbias.metrics.ranked import per_list_kernel, valid_mask


def test_valid_mask_marks_the_positions_of_each_lists_documents():
    mask = valid_mask(np.array([0, 2, 4]), 3)
    assert mask.tolist() == [
        [False, False, False],
        [True, True, False],
        [True, True, True],
    ]


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
