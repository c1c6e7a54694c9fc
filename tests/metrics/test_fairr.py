"""Tests of rankbias.metrics.fairr: neutrality, FaiRR, IFaiRR, NFaiRR."""

from __future__ import annotations

import math
import warnings

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from rankbias.errors import InputError
from rankbias.metrics.fairr import (
    fairr_at_cutoffs,
    ideal_fairr,
    ideal_fairr_collection,
    neutrality,
    nfairr,
)

V2 = 1 / math.log2(3)  # position discount at rank 2
V3 = 1 / math.log2(4)  # = 0.5


def test_neutrality_by_hand():
    counts = np.array([[0, 0], [1, 0], [2, 1], [2, 2], [0, 3]])
    # Σ ≤ 1 -> 1; (2,1): 1 − (|2/3 − 1/2| + |1/3 − 1/2|) = 2/3; (2,2): 1; (0,3): 1 − 1 = 0
    np.testing.assert_allclose(neutrality(counts), [1, 1, 2 / 3, 1, 0])
    # strict '<': (1,0) has Σ = 1, not < 1 -> 1 − (|1 − 1/2| + |0 − 1/2|) = 0
    np.testing.assert_allclose(neutrality(counts, strict=True), [1, 0, 2 / 3, 1, 0])
    # τ = 3: (2,1) and (0,3) become neutral
    np.testing.assert_allclose(neutrality(counts, tau=3), [1, 1, 1, 1, 1])


@pytest.mark.filterwarnings("error")  # its shares 0/0 are no warning either
def test_a_document_without_group_terms_is_neutral_under_every_reading():
    # (0,0) has shares 0/0: neutral (1) also where Σ ≤ τ or Σ < τ would not say so, at τ = 0;
    # (1,0) at τ = 0 is not neutral: 1 − (|1 − 1/2| + |0 − 1/2|) = 0
    counts = np.array([[0, 0], [1, 0]])
    for strict in (False, True):
        np.testing.assert_array_equal(neutrality(counts, tau=0, strict=strict), [1, 0])


def test_group_counts_without_a_group_column_are_refused():
    with pytest.raises(
        InputError, match="^group_counts: expected at least one group column, found none$"
    ):
        neutrality(np.zeros((2, 0)))


def test_one_group_column_is_a_valid_input():
    # |G| = 1, J = (1): every document with terms has share 1 = J, so ω = 1 − 0 = 1 at any τ
    np.testing.assert_array_equal(neutrality(np.array([[3.0], [0.0], [1.0]]), tau=0), [1, 1, 1])


def test_neutrality_three_groups():
    # (3,0,0): 1 − (|1 − 1/3| + 1/3 + 1/3) = −1/3; (1,1,1): 1
    np.testing.assert_allclose(neutrality(np.array([[3, 0, 0], [1, 1, 1]])), [-1 / 3, 1])
    # custom targets J = (0.5, 0.25, 0.25): (2,1,1) matches exactly -> 1
    np.testing.assert_allclose(neutrality(np.array([[2, 1, 1]]), targets=[0.5, 0.25, 0.25]), [1])


def test_fairr_ideal_and_normalised_by_hand():
    omega = np.array([[1.0, 0.0, 0.5]])
    f = fairr_at_cutoffs(omega, np.array([3]), [1, 2, 3, 10])
    # @1 = 1; @2 = 1 + 0·v2; @3 = 1 + 0.5·v3 = 1.25; @10 uses the 3 documents
    np.testing.assert_allclose(f[0], [1, 1, 1.25, 1.25])
    background = np.array([[0.0, 0.5, 1.0, 1.0]])
    ideal = ideal_fairr(background, np.array([4]), [1, 2, 3, 10])
    # sorted 1, 1, 0.5, 0: @2 = 1 + v2; @3 = 1 + v2 + 0.25; @10 = same (0 at rank 4)
    np.testing.assert_allclose(ideal[0], [1, 1 + V2, 1 + V2 + 0.25, 1 + V2 + 0.25])
    np.testing.assert_allclose(nfairr(f, ideal)[0, 2], 1.25 / (1.25 + V2))


def test_ideal_over_collection_by_hand():
    omega = np.array([0.2, 1.0, 0.0, 0.7, 1.0])
    # the two most neutral: 1, 1 -> 1 + v2; three: + 0.7·0.5
    np.testing.assert_allclose(ideal_fairr_collection(omega, [2, 3]), [1 + V2, 1 + V2 + 0.35])
    np.testing.assert_allclose(
        ideal_fairr_collection(omega, [50])[0], 1 + V2 + 0.35 + 0.2 * 1 / math.log2(5)
    )


def test_ideal_over_a_large_collection_takes_exactly_the_k_most_neutral():
    """Many distinct neutralities in no order: the ideal sums the k largest, best first (a
    partial sort that keeps the wrong k-th document would change it), and a collection of no
    document has no ideal."""
    omega = np.random.default_rng(7).permutation(np.linspace(0.0, 1.0, 1001))
    best = np.sort(omega)[::-1]
    for k in (1, 2, 10, 300):
        expected = sum(best[i] / math.log2(i + 2) for i in range(k))
        np.testing.assert_allclose(ideal_fairr_collection(omega, [k])[0], expected)
    assert np.isnan(ideal_fairr_collection(np.array([]), [5])).all()
    with pytest.raises(ValueError, match=r"^omega: expected a 1-D array, found shape \(2, 3\)"):
        ideal_fairr_collection(np.ones((2, 3)), [2])


def test_nfairr_undefined_is_nan():
    out = nfairr(np.array([[0.0, 1.0]]), np.array([[0.0, 2.0]]))
    assert np.isnan(out[0, 0]) and out[0, 1] == 0.5


def test_nfairr_divides_by_any_positive_ideal_without_a_warning_and_names_an_infinite_input():
    """An ideal below 1 (one document at k = 1: ω₁ ≤ 1) divides like any other; an ideal of 0
    or NaN gives NaN without a RuntimeWarning (no division by zero is ever made)."""
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        out = nfairr(
            np.array([0.25, 0.5, 0.0, np.nan, 0.3]), np.array([0.5, 0.0, 0.0, 1.0, np.nan])
        )
    np.testing.assert_array_equal(out, [0.5, np.nan, np.nan, np.nan, np.nan])
    with pytest.raises(InputError) as info:
        nfairr(np.array([0.1, np.inf]), np.array([1.0, 1.0]))
    assert str(info.value) == "fairr_values: found inf; expected finite values (or NaN)"
    with pytest.raises(InputError) as info:
        nfairr(np.array([0.1, 0.2]), np.array([1.0, -np.inf]))
    assert str(info.value) == "ideal_values: found -inf; expected finite values (or NaN)"


def test_ideal_fairr_refuses_a_background_that_is_not_a_matrix_of_neutralities():
    with pytest.raises(InputError) as info:
        ideal_fairr(np.array([0.5, 1.0]), np.array([2]), [2])
    assert str(info.value).startswith("background_omega: expected a 2-D array, found shape (2,)")
    with pytest.raises(InputError) as info:
        ideal_fairr(np.array([[0.5, 1.5]]), np.array([2]), [2])
    assert str(info.value) == (
        "background_omega: found 1.5 at index (0, 1) (1 such value(s)); "
        "expected numbers from -1 to 1"
    )


def test_empty_list_is_nan():
    f = fairr_at_cutoffs(np.zeros((1, 3)), np.array([0]), [2])
    assert np.isnan(f[0, 0])


def loop_nfairr(list_omega, background_omega, k):
    """The released code's computation, written as plain loops."""
    th = min(len(list_omega), k)
    fairr = sum(list_omega[r] / math.log2(r + 2) for r in range(th))
    best = sorted(background_omega, reverse=True)
    th_b = min(len(best), k)
    ideal = sum(best[r] / math.log2(r + 2) for r in range(th_b))
    return fairr, ideal


omega_values = st.sampled_from([0.0, 0.25, 0.5, 2 / 3, 1.0])


@settings(max_examples=100, deadline=None)
@given(
    lists=st.lists(st.lists(omega_values, min_size=1, max_size=10), min_size=1, max_size=5),
    extra=st.lists(omega_values, max_size=6),
    cutoffs=st.lists(st.integers(1, 12), min_size=1, max_size=3),
)
def test_kernels_equal_loop_and_bounds(lists, extra, cutoffs):
    width = max(map(len, lists))
    omega = np.zeros((len(lists), width))
    bg = np.zeros((len(lists), width + len(extra)))
    for i, x in enumerate(lists):
        omega[i, : len(x)] = x
        bg[i, : len(x) + len(extra)] = x + extra  # background ⊇ the list
    lengths = np.array([len(x) for x in lists])
    f = fairr_at_cutoffs(omega, lengths, cutoffs)
    ideal = ideal_fairr(bg, lengths + len(extra), cutoffs)
    for i, x in enumerate(lists):
        for j, k in enumerate(cutoffs):
            exp_f, exp_i = loop_nfairr(x, x + extra, k)
            assert f[i, j] == pytest.approx(exp_f, abs=1e-12)
            assert ideal[i, j] == pytest.approx(exp_i, abs=1e-12)
    n = nfairr(f, ideal)
    defined = ~np.isnan(n)
    assert np.all((n[defined] >= -1e-12) & (n[defined] <= 1 + 1e-12))
    # permuting the background changes nothing (it is a set): reverse each row's real part
    reversed_bg = np.zeros_like(bg)
    for i, x in enumerate(lists):
        reversed_bg[i, : len(x) + len(extra)] = (x + extra)[::-1]
    np.testing.assert_allclose(ideal_fairr(reversed_bg, lengths + len(extra), cutoffs), ideal)


@settings(max_examples=50, deadline=None)
@given(counts=st.lists(st.tuples(st.integers(0, 6), st.integers(0, 6)), min_size=1, max_size=20))
def test_neutrality_symmetric_in_groups_and_bounded(counts):
    arr = np.array(counts)
    omega = neutrality(arr)
    np.testing.assert_allclose(omega, neutrality(arr[:, ::-1]))
    assert np.all((omega >= 0) & (omega <= 1))


# ---- input validation: wrong input refused, never turned into a valid-looking number ----------
@pytest.mark.parametrize(
    ("call", "fragment"),
    [
        (lambda: neutrality([[np.nan, 1.0]]), "group_counts: found nan at index (0, 0)"),
        (lambda: neutrality([[1.0, 2.0], [-1.0, 3.0]]), "found -1.0 at index (1, 0)"),
        (lambda: neutrality([[np.inf, 0.0]]), "found inf"),
        (lambda: neutrality([1.0, 2.0]), "group_counts: expected a 2-D array, found shape (2,)"),
        (lambda: neutrality([[1.0, 2.0]], tau=-1), "tau: expected a finite number ≥ 0"),
        (lambda: neutrality([[1.0, 2.0]], tau=float("nan")), "tau: expected a finite number"),
        (lambda: neutrality([[1.0, 2.0]], targets=[0.5, 0.6]), "summing to 1"),
        (lambda: neutrality([[1.0, 2.0]], targets=[1.5, -0.5]), "non-negative shares"),
        (lambda: neutrality([[1.0, 2.0]], targets=[1.0]), "2 non-negative shares"),
        (
            lambda: fairr_at_cutoffs(np.ones((2, 3)), [3, 4], [5]),
            "list_lengths: query 1 has length 4; expected 0…3",
        ),
        (lambda: fairr_at_cutoffs(np.ones((2, 3)), [3], [5]), "expected shape (2,)"),
        (
            lambda: fairr_at_cutoffs(np.ones(3), [3], [5]),
            "omega_ranked: expected a 2-D array, found shape (3,)",
        ),
        (lambda: fairr_at_cutoffs(np.ones((1, 3)), [-1], [5]), "has length -1"),
        (lambda: fairr_at_cutoffs(np.ones((1, 3)), [1.5], [5]), "expected integers"),
        (
            lambda: fairr_at_cutoffs(np.array([[1.0, np.nan, 0.5]]), [3], [5]),
            "omega_ranked: found nan at index (0, 1)",
        ),
        (lambda: ideal_fairr(np.ones((1, 2)), [3], [1]), "has length 3; expected 0…2"),
        (lambda: ideal_fairr(np.array([[np.nan, 1.0]]), [2], [1]), "background_omega: found nan"),
        (lambda: ideal_fairr_collection(np.array([1.0, np.nan]), [1]), "omega: found nan"),
    ],
)
def test_bad_inputs_are_refused(call, fragment):
    with pytest.raises(InputError) as info:
        call()
    assert fragment in str(info.value), info.value


@pytest.mark.parametrize("cutoffs", [[1.5], [float("nan")], [0], [], ["5"]])
def test_cutoffs_must_be_positive_integers(cutoffs):
    with pytest.raises(ValueError, match="cutoffs must be positive integers"):
        fairr_at_cutoffs(np.ones((1, 3)), [3], cutoffs)


def test_padding_is_not_checked_and_empty_lists_stay_nan():
    # NaN in padding (position 3 of a 2-document list) is allowed: it is never read
    omega = np.array([[1.0, 0.5, np.nan], [np.nan, np.nan, np.nan]])
    values = fairr_at_cutoffs(omega, [2, 0], [1, 2])
    np.testing.assert_allclose(values[0], [1.0, 1.0 + 0.5 * V2])  # by hand
    assert np.isnan(values[1]).all()  # an empty list: undefined, never 0
