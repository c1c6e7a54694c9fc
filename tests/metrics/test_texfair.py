"""Tests of rankbias.metrics.texfair: term exposure, p(g|q,k), RBDF, TED, TExFAIR, AWRF."""

from __future__ import annotations

import math
from fractions import Fraction

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from rankbias.errors import InputError
from rankbias.lexicon import default_lexicon
from rankbias.metrics.fairr import fairr_at_cutoffs, ideal_fairr_collection, neutrality, nfairr
from rankbias.metrics.texfair import (
    awrf,
    distribution_distance,
    max_ted,
    term_exposure_family,
)
from rankbias.text import document_stats

V2, V3, V4 = 1 / math.log2(3), 1 / math.log2(4), 1 / math.log2(5)

# Abolghasemi et al. (2024), Fig. 1: "who is the best football player".  The figure prints
# excerpts with one pronoun each; the paper says every passage is completely biased to one
# group (unbiasedness 0).  Under the defaults (tau = 1, <=) that takes two terms of one group,
# so each excerpt is completed with a clause carrying a second one (as chapter 05 does).
FIG1_LEFT = [
    "currently he plays for Ligue 1 club Paris Saint-Germain, where his contract runs out",
    "she previously played for Espanyol and Levante, where her goals won them a cup",
    "She became the first player in the history of the league, her club said",
    "he returned to Manchester United in 2021 after 12 years and won his first match",
]
FIG1_RIGHT = [
    FIG1_LEFT[0],
    "He is Real Madrid's all-time top goalscorer, scoring 451 goals in his nine seasons",
    "he was named the Ligue 1 Player of the Year, selected to the team of the season by his peers",
    FIG1_LEFT[3],
]
FIG1_FILLERS = [
    "the match ended in a draw",
    "the stadium holds eighty thousand spectators",
    "tickets for the final went on sale on Monday",
    "the league has twenty clubs",
]


def ranked(docs):
    """(f, m, length) per rank for several lists -> kernel arrays."""
    width = max(max(len(d) for d in docs), 1)
    counts = np.zeros((len(docs), width, 2))
    lengths = np.zeros((len(docs), width))
    for i, lst in enumerate(docs):
        for j, (f, m, n) in enumerate(lst):
            counts[i, j] = (f, m)
            lengths[i, j] = n
    return counts, lengths, np.array([len(d) for d in docs])


def test_figure1_under_the_defaults_nfairr_zero_texfair_separates():
    texts = FIG1_LEFT + FIG1_RIGHT[1:3] + FIG1_FILLERS
    stats = document_stats(texts, default_lexicon())
    # tokens, counted by hand: 'ligue 1', 'saint-germain' -> 'saint', 'germain', 'real madrid s'
    assert stats.lengths.tolist() == [15, 14, 14, 15, 16, 20, 6, 6, 9, 5]
    expected_counts = [[0, 2], [2, 0], [2, 0], [0, 2], [0, 2], [0, 2]] + [[0, 0]] * 4
    assert stats.group_counts.tolist() == expected_counts
    rows = np.array([[0, 1, 2, 3], [0, 4, 5, 3]])
    counts, lengths = stats.group_counts[rows], stats.lengths[rows]
    omega = neutrality(stats.group_counts)  # the defaults: tau = 1 and <=
    assert omega.tolist() == [0] * 6 + [1] * 4  # two terms of one group: completely biased
    f = fairr_at_cutoffs(omega[rows], np.array([4, 4]), [4])
    ideal = ideal_fairr_collection(omega, [4])
    np.testing.assert_allclose(ideal, [1 + V2 + V3 + V4])  # the four fillers on top
    assert nfairr(f, ideal).tolist() == [[0.0], [0.0]]  # NFaiRR = 0 for both lists
    out = term_exposure_family(counts, lengths, np.array([4, 4]), [4])
    te_m = 2 / 15 * (1 + V4)  # 2 male terms in passages 1 and 4 (15 tokens each)
    te_f = 2 / 14 * (V2 + V3)  # 2 female terms in passages 2 and 3 (14 tokens each)
    p_m = te_m / (te_m + te_f)  # = 0.541434
    np.testing.assert_allclose(out["p"][0, 0], [1 - p_m, p_m])
    np.testing.assert_allclose(out["rbdf"][:, 0], [1, 1])  # every passage is representative
    np.testing.assert_allclose(out["texfair"][0, 0], 1 - 2 * abs(p_m - 0.5))
    assert round(float(out["texfair"][0, 0]), 3) == 0.917
    assert out["texfair"][1, 0] == 0  # all exposure on 'm'
    # AWRF: the male share of exposure (1 + v4) / (1 + v2 + v3 + v4), at L1 distance from 1/2
    e_m = (1 + V4) / (1 + V2 + V3 + V4)
    np.testing.assert_allclose(awrf(counts, np.array([4, 4]), [4])[:, 0], [2 * abs(e_m - 0.5), 1])


def test_rbdf_ted_by_hand():
    # ranks: (f=1, m=0, |d|=4), (0, 0, 5), (0, 2, 8)
    counts, lengths, n = ranked([[(1, 0, 4), (0, 0, 5), (0, 2, 8)]])
    out = term_exposure_family(counts, lengths, n, [1, 2, 3])
    # RBDF@3 = (1 + 0.5) / (1 + v2 + 0.5); @2 = 1 / (1 + v2); @1 = 1
    np.testing.assert_allclose(out["rbdf"][0], [1, 1 / (1 + V2), 1.5 / (1 + V2 + 0.5)])
    # TE_f = 1/4; TE_m@3 = 2/8 · 0.5 = 1/8 -> p = (2/3, 1/3); Σ|p − 1/2| = 1/3
    np.testing.assert_allclose(out["p"][0, 2], [2 / 3, 1 / 3])
    np.testing.assert_allclose(out["ted"][0, 2], (1 / 3) * 1.5 / (1 + V2 + 0.5))
    np.testing.assert_allclose(out["texfair"][0, 2], 1 - (1 / 3) * 1.5 / (1 + V2 + 0.5))
    np.testing.assert_allclose(out["texfair_norbdf"][0, 2], 1 - 1 / 3)
    # @1 and @2: only 'f' exposure -> Σ|p − 1/2| = 1; TED@2 = RBDF@2
    np.testing.assert_allclose(out["ted"][0, :2], [1, 1 / (1 + V2)])


def test_no_group_term_conventions():
    counts, lengths, n = ranked([[(0, 0, 3), (0, 0, 7)], []])
    out = term_exposure_family(counts, lengths, n, [2])
    assert out["rbdf"][0, 0] == 0 and out["ted"][0, 0] == 0 and out["texfair"][0, 0] == 1
    assert np.isnan(out["texfair_norbdf"][0, 0]) and np.isnan(out["p"][0, 0]).all()
    assert awrf(counts, n, [2])[0, 0] == 0  # every document aligned 1/2, 1/2
    for key in ("rbdf", "ted", "texfair", "texfair_norbdf"):
        assert np.isnan(out[key][1, 0])  # the empty list


def test_zero_length_document_contributes_nothing():
    counts, lengths, n = ranked([[(0, 0, 0), (1, 0, 2)]])
    out = term_exposure_family(counts, lengths, n, [2])
    np.testing.assert_allclose(out["p"][0, 0], [1, 0])


def test_three_groups_and_targets():
    assert max_ted([0.5, 0.25, 0.25]) == 1.5  # 2 (1 − 0.25)
    counts = np.array([[[0.0, 0.0, 2.0]]])
    out = term_exposure_family(counts, np.array([[4.0]]), np.array([1]), [1], [0.5, 0.25, 0.25])
    # p = (0, 0, 1): TED = 0.5 + 0.25 + 0.75 = 1.5 = max -> TExFAIR = 0
    np.testing.assert_allclose(out["ted"][0, 0], 1.5)
    np.testing.assert_allclose(out["texfair"][0, 0], 0.0)
    with pytest.raises(ValueError, match="targets"):
        term_exposure_family(counts, np.array([[4.0]]), np.array([1]), [1], [0.5, 0.5])


def test_distances_by_hand():
    p, q = np.array([0.75, 0.25]), np.array([0.5, 0.5])
    assert distribution_distance(p, q, "l1") == pytest.approx(0.5)
    assert distribution_distance(p, q, "l2") == pytest.approx(math.sqrt(2 * 0.25**2))
    kl = 0.75 * math.log(1.5) + 0.25 * math.log(0.5)
    assert distribution_distance(p, q, "kl") == pytest.approx(kl)
    m = (0.625, 0.375)
    jsd = 0.5 * (0.75 * math.log2(0.75 / m[0]) + 0.25 * math.log2(0.25 / m[1])) + 0.5 * (
        0.5 * math.log2(0.5 / m[0]) + 0.5 * math.log2(0.5 / m[1])
    )
    assert distribution_distance(p, q, "jsd") == pytest.approx(jsd)
    with pytest.raises(ValueError, match="unknown distance"):
        distribution_distance(p, q, "cosine")
    for arguments, message in (((None, q), "dist: expected numbers, found None"),
                               ((p, None), "target: expected numbers, found None")):  # fmt: skip
        with pytest.raises(TypeError) as info:
            distribution_distance(*arguments)
        assert str(info.value) == message


@pytest.mark.filterwarnings("error")  # 0 log 0 is 0, silently: no RuntimeWarning either
def test_distances_of_many_rows_with_empty_groups_by_hand():
    """One distance per row (the last axis), and a group of share 0 adds nothing (0 log 0 = 0),
    on either side of the Jensen–Shannon divergence."""
    rows = np.array([[1.0, 0.0], [0.75, 0.25]])
    half = np.array([0.5, 0.5])
    np.testing.assert_allclose(distribution_distance(rows, half, "l1"), [1.0, 0.5])
    np.testing.assert_allclose(
        distribution_distance(rows, half, "l2"), [math.sqrt(0.5), math.sqrt(2 * 0.25**2)]
    )
    np.testing.assert_allclose(
        distribution_distance(rows, half, "kl"),
        [math.log(2), 0.75 * math.log(1.5) + 0.25 * math.log(0.5)],
    )
    # row 1 against (1/2, 1/2): the middle is (3/4, 1/4)
    first = 0.5 * math.log2(1 / 0.75) + 0.5 * (
        0.5 * math.log2(0.5 / 0.75) + 0.5 * math.log2(0.5 / 0.25)
    )
    # row 2: the middle is (5/8, 3/8)
    second = 0.5 * (0.75 * math.log2(0.75 / 0.625) + 0.25 * math.log2(0.25 / 0.375)) + 0.5 * (
        0.5 * math.log2(0.5 / 0.625) + 0.5 * math.log2(0.5 / 0.375)
    )
    np.testing.assert_allclose(distribution_distance(rows, half, "jsd"), [first, second])
    # a target share of 0: (1/2, 1/2) against (1, 0), the mirror image of row 1
    assert distribution_distance(half, np.array([1.0, 0.0]), "jsd") == pytest.approx(first)
    with pytest.raises(ValueError, match="^the kl distance needs every target share > 0$"):
        distribution_distance(half, np.array([1.0, 0.0]), "kl")


def test_the_default_distance_is_l1_and_exact_shares_are_read_as_floats():
    assert distribution_distance(np.array([0.75, 0.25]), np.array([0.5, 0.5])) == 0.5
    thirds = [Fraction(1, 3), Fraction(2, 3)]  # shares a researcher may keep exact
    halves = [Fraction(1, 2), Fraction(1, 2)]
    expected = (1 / 3) * math.log((1 / 3) / 0.5) + (2 / 3) * math.log((2 / 3) / 0.5)
    assert distribution_distance(thirds, np.array([0.5, 0.5]), "kl") == pytest.approx(expected)
    assert distribution_distance(np.array([0.5, 0.5]), thirds, "kl") == pytest.approx(
        0.5 * math.log(0.5 / (1 / 3)) + 0.5 * math.log(0.5 / (2 / 3))
    )
    assert distribution_distance(halves, halves, "jsd") == 0.0


def loop_p(docs, k):
    """p(g|q,k) by summing term exposure document by document (independent of the kernel)."""
    exposure = [0.0, 0.0]
    for r, (f, m, n) in enumerate(docs[:k], start=1):
        if n:
            exposure[0] += f / n / math.log(r + 1)  # natural log: the base cancels in p
            exposure[1] += m / n / math.log(r + 1)
    total = sum(exposure)
    return None if total == 0 else [e / total for e in exposure]


doc = st.tuples(st.integers(0, 3), st.integers(0, 3), st.integers(0, 6)).map(
    lambda t: (t[0], t[1], t[0] + t[1] + t[2])
)
lists = st.lists(st.lists(doc, min_size=1, max_size=10), min_size=1, max_size=4)


@settings(max_examples=100, deadline=None)
@given(lists=lists, cutoffs=st.lists(st.integers(1, 12), min_size=1, max_size=3))
def test_properties(lists, cutoffs):
    counts, lengths, n = ranked(lists)
    out = term_exposure_family(counts, lengths, n, cutoffs)
    for i, docs in enumerate(lists):
        for j, k in enumerate(cutoffs):
            expected = loop_p(docs, k)
            if expected is None:
                assert np.isnan(out["p"][i, j]).all() and out["texfair"][i, j] == 1
            else:
                np.testing.assert_allclose(out["p"][i, j], expected, atol=1e-12)
    # bounds
    for key in ("texfair", "rbdf"):
        assert np.all((out[key] >= -1e-12) & (out[key] <= 1 + 1e-12))
    dist = awrf(counts, n, cutoffs)
    assert np.all((dist >= -1e-12) & (dist <= 1 + 1e-12))
    # swapping the groups leaves TExFAIR, RBDF and AWRF unchanged and swaps p
    swapped = term_exposure_family(counts[:, :, ::-1], lengths, n, cutoffs)
    np.testing.assert_allclose(swapped["texfair"], out["texfair"], atol=1e-12)
    np.testing.assert_allclose(swapped["p"], out["p"][:, :, ::-1], atol=1e-12)
    np.testing.assert_allclose(awrf(counts[:, :, ::-1], n, cutoffs), dist, atol=1e-12)


@settings(max_examples=100, deadline=None)
@given(lists=lists, extra=st.lists(st.integers(1, 9), min_size=1, max_size=5))
def test_appending_documents_without_group_terms(lists, extra):
    counts, lengths, n = ranked(lists)
    longer = [docs + [(0, 0, e) for e in extra] for docs in lists]
    counts2, lengths2, n2 = ranked(longer)
    for i, docs in enumerate(lists):
        k, k2 = len(docs), len(docs) + len(extra)
        before = term_exposure_family(counts[i : i + 1], lengths[i : i + 1], n[i : i + 1], [k])
        after = term_exposure_family(counts2[i : i + 1], lengths2[i : i + 1], n2[i : i + 1], [k2])
        np.testing.assert_allclose(after["p"], before["p"], atol=1e-12)  # NaN == NaN here
        if before["rbdf"][0, 0] > 0:
            assert after["rbdf"][0, 0] < before["rbdf"][0, 0]
        else:
            assert after["rbdf"][0, 0] == 0


def test_term_exposure_by_hand_and_sums_to_group_exposure():
    # terms (she, her | he): doc 1 |d| = 5 with she×2, he×1; doc 2 |d| = 4 with her×1.  Each
    # term taken as a group of its own gives its term exposure TE (Eq. 8).
    tf = np.array([[[2.0, 0.0, 1.0], [0.0, 1.0, 0.0]]])
    lengths = np.array([[5.0, 4.0]])
    te = term_exposure_family(tf, lengths, np.array([2]), [1, 2])["exposure"]
    np.testing.assert_allclose(te[0, 0], [2 / 5, 0, 1 / 5])  # rank 1: v1 = 1
    np.testing.assert_allclose(te[0, 1], [2 / 5, 1 / 4 * V2, 1 / 5])  # rank 2: v2 = 1/log2 3
    groups = np.stack([tf[:, :, :2].sum(axis=2), tf[:, :, 2]], axis=2)  # f = she + her, m = he
    family = term_exposure_family(groups, lengths, np.array([2]), [1, 2])
    np.testing.assert_allclose(family["exposure"][0], [[2 / 5, 1 / 5], [2 / 5 + V2 / 4, 1 / 5]])
    np.testing.assert_allclose(te[..., :2].sum(axis=2), family["exposure"][..., 0])


# ---- input validation --------------------------------------------------------------------------
def test_awrf_with_a_nan_count_is_an_error_not_zero():
    counts = np.array([[[2.0, 0.0], [np.nan, 1.0]]])
    with pytest.raises(InputError, match=r"group_counts_ranked: found nan at index \(0, 1, 0\)"):
        awrf(counts, np.array([2]), [2])
    # the same NaN in padding (beyond the list's one document) is never read: by hand, the list
    # [2 f, 0 m] puts all exposure on f, so the L1 distance to (1/2, 1/2) is 1
    np.testing.assert_allclose(awrf(counts, np.array([1]), [2]), [[1.0]])


@pytest.mark.parametrize(
    ("call", "fragment"),
    [
        (lambda: awrf(-np.ones((1, 2, 2)), [2], [1]), "found -1.0 at index (0, 0, 0)"),
        (lambda: awrf(np.ones((1, 2, 2)), [3], [1]), "query 0 has length 3; expected 0…2"),
        (lambda: awrf(np.ones((2, 2)), [2, 2], [1]), "expected a 3-D array"),
        (lambda: awrf(np.ones((1, 2, 2)), [2], [1], targets=[0.2, 0.2]), "summing to 1"),
        (
            lambda: term_exposure_family(np.ones((1, 2, 2)), np.ones((1, 3)), [2], [1]),
            "lengths_ranked: expected shape (1, 2)",
        ),
        (
            lambda: term_exposure_family(np.ones((1, 2, 2)), np.array([[3.0, np.nan]]), [2], [1]),
            "lengths_ranked: found nan at index (0, 1)",
        ),
        (
            lambda: term_exposure_family(np.ones((1, 2, 2)), np.ones((1, 2)), [5], [1]),
            "has length 5; expected 0…2",
        ),
        (
            lambda: term_exposure_family(np.full((1, 1, 2), np.inf), np.ones((1, 1)), [1], [1]),
            "group_counts_ranked: found inf",
        ),
        (lambda: max_ted([np.nan, 1.0]), "targets must be"),
        (
            lambda: term_exposure_family(np.ones((1, 2)), np.ones((1, 2)), [2], [1]),
            "group_counts_ranked: expected a 3-D array, found shape (1, 2)",
        ),
        (
            lambda: term_exposure_family(-np.ones((1, 2, 2)), np.ones((1, 2)), [2], [1]),
            "group_counts_ranked: found -1.0 at index (0, 0, 0)",
        ),
        (
            lambda: term_exposure_family(np.ones((1, 2, 2)), np.ones(2), [2], [1]),
            "lengths_ranked: expected a 2-D array, found shape (2,)",
        ),
        (
            lambda: term_exposure_family(np.ones((1, 2, 2)), np.array([[3.0, -3.0]]), [2], [1]),
            "lengths_ranked: found -3.0 at index (0, 1)",
        ),
    ],
)
def test_bad_inputs_are_refused(call, fragment):
    with pytest.raises(InputError) as info:
        call()
    assert fragment in str(info.value), info.value


@pytest.mark.filterwarnings("error")  # no 0/0 warning: lists without group terms, empty lists
def test_the_family_is_its_seven_tables_and_padding_is_not_read():
    """q1: one document without group terms (p undefined, TED 0), then padding of 10 terms in 0
    tokens (never read, no x/0 warning); q2: an empty list (all NaN);
    q3: [2 f, 0 m] of length 4 then padding whose length is NaN (never read): exposure
    (2/4, 0), p = (1, 0), RBDF 1, TED = |1 − ½| + |0 − ½| = 1, and TExFAIR = max(TED) − TED
    with max(TED) = 2(1 − ½) = 1."""
    counts = np.array([[[0, 0], [5, 5]], [[0, 0], [0, 0]], [[2, 0], [5, 5]]], dtype=float)
    lengths = np.array([[3.0, 0.0], [0.0, 0.0], [4.0, np.nan]])
    out = term_exposure_family(counts, lengths, np.array([1, 0, 1]), [1])
    assert sorted(out) == sorted(
        ["exposure", "p", "rbdf", "ted", "texfair", "ted_norbdf", "texfair_norbdf"]
    )
    np.testing.assert_array_equal(out["exposure"][:, 0], [[0, 0], [np.nan, np.nan], [0.5, 0]])
    np.testing.assert_array_equal(out["p"][:, 0], [[np.nan] * 2, [np.nan] * 2, [1, 0]])
    np.testing.assert_array_equal(out["rbdf"][:, 0], [0, np.nan, 1])
    np.testing.assert_array_equal(out["ted"][:, 0], [0, np.nan, 1])
    np.testing.assert_array_equal(out["texfair"][:, 0], [1, np.nan, 0])
    np.testing.assert_array_equal(out["ted_norbdf"][:, 0], [np.nan, np.nan, 1])
    np.testing.assert_array_equal(out["texfair_norbdf"][:, 0], [np.nan, np.nan, 0])


@pytest.mark.filterwarnings("error")  # a document without group terms is no 0/0 warning
def test_awrf_aligns_each_document_by_its_own_share_of_group_terms():
    """a_g(d) = M_g(d) / Σ_x M_x(d): a document with one female term and one with three male
    terms are each wholly aligned with their group, so the exposure at 2 is (1, v2)."""
    counts = np.array([[[1.0, 0.0], [0.0, 3.0], [0.0, 0.0]]])
    female = 1 / (1 + V2)
    expected = abs(female - 0.5) + abs((1 - female) - 0.5)
    # a third document without group terms is aligned (1/2, 1/2): exposure (1 + v3/2, v2 + v3/2)
    third = (1 + V3 / 2) / (1 + V2 + V3)
    got = awrf(counts, np.array([3]), [2, 3])
    np.testing.assert_allclose(got, [[expected, abs(third - 0.5) + abs((1 - third) - 0.5)]])
