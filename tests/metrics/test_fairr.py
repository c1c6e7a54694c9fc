"""Tests of rankbias.metrics.fairr: neutrality, FaiRR, IFaiRR, NFaiRR."""

from __future__ import annotations

import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

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


def test_nfairr_undefined_is_nan():
    out = nfairr(np.array([[0.0, 1.0]]), np.array([[0.0, 2.0]]))
    assert np.isnan(out[0, 0]) and out[0, 1] == 0.5


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
