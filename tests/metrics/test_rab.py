"""Tests of rankbias.metrics.rab: magnitudes, RaB, ARaB and their group parts."""

from __future__ import annotations

import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from rankbias.errors import InputError
from rankbias.metrics.rab import document_magnitudes, rank_bias


def batch(lists):
    """Pad per-query lists of (f, m) magnitudes into the kernel's (n_q, K, 2) layout."""
    width = max(len(x) for x in lists)
    out = np.zeros((len(lists), max(width, 1), 2))
    for i, docs in enumerate(lists):
        for j, doc in enumerate(docs):
            out[i, j] = doc
    return out, np.array([len(x) for x in lists])


def test_magnitude_variants_by_hand():
    counts = np.array([[0, 3], [2, 0], [1, 1]])
    np.testing.assert_allclose(document_magnitudes(counts, "tc"), counts)
    np.testing.assert_allclose(
        document_magnitudes(counts, "tf"),
        [[0, math.log(4)], [math.log(3), 0], [math.log(2), math.log(2)]],
    )
    np.testing.assert_allclose(document_magnitudes(counts, "bool"), [[0, 1], [1, 0], [1, 1]])
    log_sums = np.array([[0.0, 1.5], [0.2, 0.0], [0.0, 0.0]])
    np.testing.assert_allclose(document_magnitudes(counts, "tf_paper", log_sums), log_sums)
    with pytest.raises(ValueError) as info:
        document_magnitudes(counts, "tf_paper")
    assert str(info.value) == "the tf_paper magnitude needs per-term counts (log_tf_sums)"
    np.testing.assert_array_equal(document_magnitudes(counts), counts)  # tc by default
    with pytest.raises(ValueError, match="unknown magnitude"):
        document_magnitudes(counts, "idf")


def test_rab_and_arab_by_hand():
    # one list of three documents with (f, m) magnitudes; m − f = 2, −1, 0
    mags, lengths = batch([[(0, 2), (1, 0), (1, 1)]])
    out = rank_bias(mags, lengths, cutoffs=[1, 2, 3, 5])
    # RaB@1 = 2; RaB@2 = (2 − 1)/2 = 0.5; RaB@3 = (2 − 1 + 0)/3 = 1/3; @5 uses t' = 3
    np.testing.assert_allclose(out["rab"][0], [2, 0.5, 1 / 3, 1 / 3])
    # ARaB@2 = (2 + 0.5)/2 = 1.25; ARaB@3 = (2 + 0.5 + 1/3)/3
    np.testing.assert_allclose(
        out["arab"][0], [2, 1.25, (2 + 0.5 + 1 / 3) / 3, (2 + 0.5 + 1 / 3) / 3]
    )
    # group parts: f = 0, 1, 1 -> qRaB_f@3 = 2/3; m = 2, 0, 1 -> qRaB_m@3 = 1
    np.testing.assert_allclose(out["rab_f"][0, 2], 2 / 3)
    np.testing.assert_allclose(out["rab_m"][0, 2], 1.0)
    # qARaB_f@3 = (0/1 + 1/2 + 2/3)/3
    np.testing.assert_allclose(out["arab_f"][0, 2], (0 + 0.5 + 2 / 3) / 3)
    np.testing.assert_allclose(out["arab_m"][0, 1], (2 + 1) / 2)  # (2/1 + 2/2)/2


def test_tf_variant_by_hand():
    counts = np.array([[0, 2], [1, 0]])
    mags = document_magnitudes(counts, "tf")[None]
    out = rank_bias(mags, np.array([2]), cutoffs=[2])
    # RaB@2 = ((ln 3 − 0) + (0 − ln 2)) / 2
    np.testing.assert_allclose(out["rab"][0, 0], (math.log(3) - math.log(2)) / 2)


def test_empty_list_is_nan_and_padding_ignored():
    mags, lengths = batch([[(0, 1)], []])
    mags[0, 0] = (0, 1)
    out = rank_bias(mags, lengths, cutoffs=[3])
    assert out["rab"][0, 0] == 1.0
    assert np.isnan(out["rab"][1, 0]) and np.isnan(out["arab"][1, 0])


def loop_rab(docs, t):
    """Plain loop of Klasnja et al. (2022) Eq. 1 with the Conventions page's sign (male minus
    female), written independently of the kernel."""
    tt = min(t, len(docs))
    rab_at = []
    for x in range(1, tt + 1):
        rab_at.append(sum(m - f for f, m in docs[:x]) / x)
    return rab_at[-1], sum(rab_at) / tt


doc_lists = st.lists(
    st.lists(st.tuples(st.integers(0, 5), st.integers(0, 5)), min_size=1, max_size=12),
    min_size=1,
    max_size=6,
)


@settings(max_examples=100, deadline=None)
@given(lists=doc_lists, cutoffs=st.lists(st.integers(1, 15), min_size=1, max_size=4))
def test_kernel_equals_loop_and_group_swap_flips_sign(lists, cutoffs):
    mags, lengths = batch(lists)
    out = rank_bias(mags, lengths, cutoffs)
    for i, docs in enumerate(lists):
        for j, t in enumerate(cutoffs):
            rab, arab = loop_rab(docs, t)
            assert out["rab"][i, j] == pytest.approx(rab, abs=1e-12)
            assert out["arab"][i, j] == pytest.approx(arab, abs=1e-12)
    swapped = rank_bias(mags[:, :, ::-1], lengths, cutoffs)
    np.testing.assert_allclose(swapped["rab"], -out["rab"], atol=1e-12)
    np.testing.assert_allclose(swapped["arab"], -out["arab"], atol=1e-12)
    np.testing.assert_allclose(swapped["rab_f"], out["rab_m"], atol=1e-12)
    # bounds: |RaB| ≤ max |m − f| over the list; the boolean variant lies in [−1, 1]
    bound = max(abs(m - f) for docs in lists for f, m in docs)
    assert np.all(np.abs(out["rab"]) <= bound + 1e-12)
    boolean = rank_bias(document_magnitudes(mags, "bool"), lengths, cutoffs)
    assert np.all(np.abs(boolean["arab"]) <= 1 + 1e-12)


# ---- input validation --------------------------------------------------------------------------
def test_list_lengths_beyond_the_matrix_width_are_refused():
    # two positions held, but the list claims 5 documents: sums over 2 would be divided by 5
    with pytest.raises(InputError, match=r"query 0 has length 5; expected 0…2"):
        rank_bias(np.ones((1, 2, 2)), np.array([5]), [10])


@pytest.mark.parametrize(
    ("call", "fragment"),
    [
        (lambda: rank_bias(np.ones((1, 2, 2)), [1, 1], [1]), "expected shape (1,)"),
        (
            lambda: rank_bias(np.ones((2, 2)), [1, 1], [1]),
            "magnitudes_ranked: expected a 3-D array, found shape (2, 2)",
        ),
        (
            lambda: rank_bias(np.ones((1, 1, 2)), [1], [1], female="f"),
            "female: expected a column index, found 'f'",
        ),
        (
            lambda: rank_bias(np.ones((1, 1, 2)), [1], [1], male=True),
            "male: expected a column index, found True",
        ),
        (
            lambda: rank_bias(np.array([[[1.0, np.nan]]]), [1], [1]),
            "magnitudes_ranked: found nan at index (0, 0, 1)",
        ),
        (lambda: rank_bias(-np.ones((1, 1, 2)), [1], [1]), "found -1.0"),
        (
            lambda: rank_bias(np.ones((1, 1, 2)), [1], [1], female=0, male=2),
            "male: column 2 is outside 0…1",
        ),
        (lambda: rank_bias(np.ones((1, 1, 2)), [1], [1], female=1, male=1), "different columns"),
        (lambda: document_magnitudes(np.array([[1.0, np.nan]])), "group_counts: found nan"),
        (lambda: document_magnitudes(np.array([[1.0, -2.0]]), "tf"), "found -2.0"),
        (
            lambda: document_magnitudes(np.ones((2, 2)), "tf_paper", np.ones((2, 3))),
            "log_tf_sums: expected the shape",
        ),
        (
            lambda: document_magnitudes(np.ones((2, 2)), "tf_paper", [[0.0, -0.5], [0.0, 0.0]]),
            "log_tf_sums: found -0.5 at index (0, 1) (1 such value(s)); expected finite, "
            "non-negative numbers",
        ),
    ],
)
def test_bad_inputs_are_refused(call, fragment):
    with pytest.raises(InputError) as info:
        call()
    assert fragment in str(info.value), info.value


def test_nan_in_padding_is_ignored_and_empty_lists_are_nan():
    mags = np.array([[[0.0, 2.0], [np.nan, np.nan]], [[np.nan, np.nan], [np.nan, np.nan]]])
    out = rank_bias(mags, np.array([1, 0]), [1, 5])
    np.testing.assert_allclose(out["rab"][0], [2.0, 2.0])  # by hand: m − f of the one document
    assert np.isnan(out["rab"][1]).all() and np.isnan(out["arab"][1]).all()


def released_notebook_values(lists, t):
    """The three stages of the released GenderBias_IR notebooks, re-stated on (f, m) counts
    (the book's Conventions page, section "The sign of RaB and ARaB"): stage 1 stores per
    document ``(f − m, f, m)``; stage 2 averages each element over the top ``t`` (RaB) and
    over ``x = 1..t`` of those averages (ARaB), per query; stage 3 prints, per system, the mean
    over queries of (male part − female part)."""
    per_query = []
    for docs in lists:
        stage1 = [(f - m, f, m) for f, m in docs]
        depth = min(t, len(stage1))
        rab_at = [[sum(doc[e] for doc in stage1[:x]) / x for e in range(3)] for x in
                  range(1, depth + 1)]  # fmt: skip
        rab = rab_at[-1]
        arab = [sum(values[e] for values in rab_at) / depth for e in range(3)]
        per_query.append((rab, arab))
    system = [
        sum(q[which][2] - q[which][1] for q in per_query) / len(per_query) for which in (0, 1)
    ]
    return per_query, system


@settings(max_examples=50, deadline=None)
@given(lists=doc_lists, t=st.integers(1, 15))
def test_sign_against_the_released_notebooks(lists, t):
    # The statement of the Conventions page: per query, the package is the negative of the
    # notebooks' stored value; per system, it equals the printed value; the parts agree.
    mags, lengths = batch(lists)
    out = rank_bias(mags, lengths, [t])
    per_query, system = released_notebook_values(lists, t)
    for i, (rab, arab) in enumerate(per_query):
        assert out["rab"][i, 0] == pytest.approx(-rab[0], abs=1e-12)
        assert out["arab"][i, 0] == pytest.approx(-arab[0], abs=1e-12)
        assert (out["rab_f"][i, 0], out["rab_m"][i, 0]) == pytest.approx(rab[1:], abs=1e-12)
        assert (out["arab_f"][i, 0], out["arab_m"][i, 0]) == pytest.approx(arab[1:], abs=1e-12)
    assert out["rab"][:, 0].mean() == pytest.approx(system[0], abs=1e-12)
    assert out["arab"][:, 0].mean() == pytest.approx(system[1], abs=1e-12)
