"""Duo: exact normalisation against brute force, hand-worked examples, invariances.

The brute force below is written from the definition (and the released code's loop
``for k in range(step, n + int(include_full), step): if k > 1: var(prefix)/log2(k)``), with
``numpy.var`` on every prefix of every ordering; it shares no code with the module.
"""

from __future__ import annotations

import functools
import itertools
import math

import numpy as np
import pytest

from rankbias.metrics.duo import (
    MAX_EXACT_N,
    dcv,
    dcv_bounds,
    duo,
    duo_direction,
    duo_sampled,
    extreme_orderings,
    orientation_signed_duo,
    signed_duo,
)

VARIANCES = ("prefix", "global")
STEPS = (1, 2, 3)


@functools.cache
def all_orderings(n: int) -> np.ndarray:
    return np.array(list(itertools.permutations(range(n))), dtype=int).reshape(-1, n)


def brute_force_dcv(scores, step, variance, include_full) -> np.ndarray:
    """DCV of every ordering of ``scores`` (rows in itertools.permutations order)."""
    scores = np.asarray(scores, dtype=float)
    return dcv_of_rows(scores[all_orderings(scores.size)], step, variance, include_full)


def dcv_of_rows(orderings, step, variance, include_full) -> np.ndarray:
    """DCV of each row of ``orderings`` (scores in rank order), from the definition."""
    n = orderings.shape[1]
    mean = orderings[0].mean()
    total = np.zeros(orderings.shape[0])
    for k in range(step, n + int(include_full), step):
        if k > 1:
            prefix = orderings[:, :k]
            if variance == "prefix":
                utility = np.var(prefix, axis=1)
            else:
                utility = np.mean((prefix - mean) ** 2, axis=1)
            total += utility / math.log2(k)
    return total


def brute_force_duo(scores, step, variance, include_full) -> float:
    """The released normalisation: min/max over all n! orderings, 0.5 when they coincide.

    "Coincide" up to round-off: when every ordering has mathematically the same DCV (e.g. the
    only cut point is i = n), the released exact comparison ``max - min == 0`` is decided by
    round-off in ``numpy.var`` and can return anything in [0, 1]; the meant value is 0.5.
    """
    values = brute_force_dcv(scores, step, variance, include_full)
    low, high = values.min(), values.max()
    own = values[0]  # permutations() yields the identity first
    if high - low <= 1e-12 * max(abs(high), abs(low)):
        return 0.5
    return 1.0 - (own - low) / (high - low)


def score_lists():
    """Lists of 1..8 scores: Gaussian, with ties, and two-valued (as Ziems et al. 2024, Fig. 1)."""
    rng = np.random.default_rng(20240401)
    lists = []
    for n in range(1, 9):
        lists.append(rng.normal(size=n))
        lists.append(rng.integers(-2, 3, size=n).astype(float))
    lists.append(np.array([1.0, 1.0, 1.0, -1.0, -1.0, -1.0]))
    lists.append(np.array([0.3, -0.2, 0.3, -0.2, 0.3, 5.0, -4.0, 0.0]))
    return lists


CASES = [
    pytest.param(
        scores,
        step,
        variance,
        include_full,
        id=f"n{scores.size}-{i}-s{step}-{variance}-{'full' if include_full else 'cut'}",
    )
    for i, scores in enumerate(score_lists())
    for step in STEPS
    for variance in VARIANCES
    for include_full in (False, True)
]


@pytest.mark.parametrize(("scores", "step", "variance", "include_full"), CASES)
def test_bounds_equal_brute_force(scores, step, variance, include_full):
    values = brute_force_dcv(scores, step, variance, include_full)
    low, high = dcv_bounds(scores, step=step, variance=variance, include_full=include_full)
    assert low == pytest.approx(values.min(), abs=1e-12)
    assert high == pytest.approx(values.max(), abs=1e-12)


@pytest.mark.parametrize(("scores", "step", "variance", "include_full"), CASES)
def test_subset_dp_equals_brute_force_for_both_variances(scores, step, variance, include_full):
    values = brute_force_dcv(scores, step, variance, include_full)
    low, high = dcv_bounds(
        scores, step=step, variance=variance, include_full=include_full, algorithm="subset_dp"
    )
    assert (low, high) == pytest.approx((values.min(), values.max()), abs=1e-12)


@pytest.mark.parametrize(("scores", "step", "variance", "include_full"), CASES)
def test_duo_equals_released_normalisation(scores, step, variance, include_full):
    expected = brute_force_duo(scores, step, variance, include_full)
    options = {"step": step, "variance": variance, "include_full": include_full}
    assert duo(scores, **options) == pytest.approx(expected, abs=1e-9)
    assert duo_sampled(scores, seed=0, **options) == pytest.approx(expected, abs=1e-9)


@pytest.mark.parametrize(("scores", "step", "variance", "include_full"), CASES)
def test_dcv_of_given_order_equals_brute_force(scores, step, variance, include_full):
    expected = brute_force_dcv(scores, step, variance, include_full)[0]
    value = dcv(scores, step=step, variance=variance, include_full=include_full)
    assert value == pytest.approx(expected, abs=1e-12)


@pytest.mark.parametrize("variance", VARIANCES)
@pytest.mark.parametrize("step", STEPS)
def test_argmin_ordering_scores_exactly_one_and_argmax_exactly_zero(variance, step):
    rng = np.random.default_rng(7)
    for n in range(3, 9):
        scores = rng.normal(size=n)
        values = brute_force_dcv(scores, step, variance, False)
        if np.ptp(values) < 1e-9:
            continue
        orderings = all_orderings(n)
        most_biased = scores[orderings[np.argmin(values)]]
        most_balanced = scores[orderings[np.argmax(values)]]
        assert duo(most_biased, step=step, variance=variance) == 1.0
        assert duo(most_balanced, step=step, variance=variance) == 0.0


@pytest.mark.parametrize("variance", VARIANCES)
def test_extreme_orderings_attain_the_brute_force_bounds(variance):
    rng = np.random.default_rng(11)
    for n in range(2, 9):
        scores = rng.normal(size=n)
        values = brute_force_dcv(scores, 1, variance, False)
        biased, balanced = extreme_orderings(scores, variance=variance)
        assert sorted(biased.tolist()) == list(range(n))
        assert sorted(balanced.tolist()) == list(range(n))
        assert dcv(scores[biased], variance=variance) == pytest.approx(values.min(), abs=1e-12)
        assert dcv(scores[balanced], variance=variance) == pytest.approx(values.max(), abs=1e-12)


def test_global_extreme_orderings_break_ties_by_document_index():
    """Twenty scores of mean 0 whose squares tie in two classes (4 and 1): the most balanced
    order puts the squares of 4 first, each class in document order; the most biased is its
    reverse (numpy's default sort, unstable from 17 items on, orders these ties otherwise)."""
    scores = np.array([2.0, -2.0, 1.0, -1.0] * 5)
    fours = [i for i in range(20) if i % 4 < 2]
    ones = [i for i in range(20) if i % 4 >= 2]
    biased, balanced = extreme_orderings(scores, variance="global")
    assert balanced.tolist() == fours + ones
    assert biased.tolist() == (fours + ones)[::-1]


def test_hand_worked_four_documents_prefix_variance():
    # scores 0,1,2,3 in the order 0,2,1,3; cut points i = 2, 3 (i < n = 4).
    # u(2) = var{0,2} = 1, u(3) = var{0,2,1} = 2/3.  Over all orders: u(2) in [1/4, 9/4],
    # u(3) in [2/3, 14/9], both extremes attained together (0,1,2,.. and 0,3,..).
    log3 = math.log2(3)
    assert dcv([0, 2, 1, 3]) == pytest.approx(1 + 2 / (3 * log3), abs=1e-15)
    low, high = dcv_bounds([0, 2, 1, 3])
    assert low == pytest.approx(1 / 4 + 2 / (3 * log3), abs=1e-15)
    assert high == pytest.approx(9 / 4 + 14 / (9 * log3), abs=1e-15)
    expected = 1 - (3 / 4) / (2 + 8 / (9 * log3))
    assert duo([0, 2, 1, 3]) == pytest.approx(expected, abs=1e-15)
    assert expected == pytest.approx(0.7071248, abs=1e-6)


def test_hand_worked_four_documents_global_variance():
    # mean 1.5; squared deviations q(0) = q(3) = 9/4, q(1) = q(2) = 1/4.
    # order 0,2,1,3: u(2) = (9/4 + 1/4)/2 = 5/4, u(3) = (9/4 + 1/4 + 1/4)/3 = 11/12.
    log3 = math.log2(3)
    assert dcv([0, 2, 1, 3], variance="global") == pytest.approx(5 / 4 + 11 / (12 * log3))
    low, high = dcv_bounds([0, 2, 1, 3], variance="global")
    assert low == pytest.approx(1 / 4 + 11 / (12 * log3), abs=1e-15)
    assert high == pytest.approx(9 / 4 + 19 / (12 * log3), abs=1e-15)
    expected = 1 - 1 / (2 + 2 / (3 * log3))
    assert duo([0, 2, 1, 3], variance="global") == pytest.approx(expected, abs=1e-15)


def test_seed_figure_one_orders():
    # Ziems et al. (2024), Fig. 1: three documents of each side.  Grouped = most biased (Duo = 1);
    # alternating maximises every prefix variance at once (Duo = 0).
    assert duo([1, 1, 1, -1, -1, -1]) == 1.0
    assert duo([1, -1, 1, -1, 1, -1]) == 0.0
    # a middle order lies strictly between
    assert 0.0 < duo([1, 1, -1, 1, -1, -1]) < 1.0


def test_degenerate_lists_score_one_half():
    assert duo([0.7]) == 0.5
    assert duo([0.7, -0.2]) == 0.5  # no cut point 2 <= i < 2
    assert duo([2.0, 2.0, 2.0, 2.0]) == 0.5
    # global variance with all |p - mean| equal: every order has the same DCV
    assert duo([-1.0, 1.0, -1.0, 1.0], variance="global") == 0.5
    assert duo([3.0, 1.0, 2.0], step=3) == 0.5  # the only cut point would be i = 3 = n


@pytest.mark.parametrize("variance", VARIANCES)
@pytest.mark.parametrize("step", (1, 2))
def test_shift_and_scale_leave_duo_unchanged(variance, step):
    rng = np.random.default_rng(3)
    for n in (5, 8, 12):
        scores = rng.normal(size=n)
        reference = duo(scores, step=step, variance=variance)
        for scale, shift in ((3.5, -2.0), (0.01, 100.0), (-2.0, 0.5)):
            moved = duo(scale * scores + shift, step=step, variance=variance)
            assert moved == pytest.approx(reference, abs=1e-10)


def _tied_prefix(scores, step):
    positives = np.cumsum(np.asarray(scores) > 0)
    return any(2 * positives[i - 1] == i for i in range(max(step, 2), len(scores), step))


@pytest.mark.parametrize("variance", VARIANCES)
def test_negation_keeps_unsigned_duo_and_flips_signed_duo(variance):
    rng = np.random.default_rng(5)
    checked = 0
    for _ in range(200):
        n = int(rng.integers(3, 11))
        scores = rng.normal(size=n) + rng.normal()
        if _tied_prefix(scores, 1):
            continue
        assert duo(-scores, variance=variance) == pytest.approx(
            duo(scores, variance=variance), abs=1e-12
        )
        assert signed_duo(-scores, variance=variance) == pytest.approx(
            -signed_duo(scores, variance=variance), abs=1e-12
        )
        checked += 1
    assert checked > 50


def test_direction_hand_example():
    # prefixes (i = 2..5) of [3, 2, -1, 1, -2, -3]: 2/2, 2/3, 3/4, 3/5 positive -> all +1,
    # and variances are positive from i = 3 on, so DCV+ > 0: direction +1.
    scores = [3.0, 2.0, -1.0, 1.0, -2.0, -3.0]
    assert duo_direction(scores) == 1
    assert signed_duo(scores) == pytest.approx(duo(scores))
    # prefixes of [-3, -2, 1, -1, 2, 3] have no positive majority: direction -1
    assert duo_direction([-s for s in scores]) == -1
    # a half-positive prefix counts as -1 (as printed): [1, -1, 5] with cut point 2 only
    assert duo_direction([1.0, -1.0, 5.0]) == -1
    assert duo_direction([-1.0, 1.0, 5.0]) == -1
    # DCV⁺ = 0 (every prefix variance 0) gives -1
    assert duo_direction([2.0, 2.0, 2.0, 2.0]) == -1


def test_orientation_signed_duo_uses_the_axis_orientation_only():
    scores = [3.0, 2.0, -1.0, 1.0, -2.0, -3.0]
    unsigned = duo(scores)
    assert orientation_signed_duo(scores, [0.5, 0.2, -0.1]) == pytest.approx(unsigned)
    assert orientation_signed_duo(scores, [0.5, -0.2, -0.1]) == pytest.approx(-unsigned)
    assert orientation_signed_duo(scores, [0.5, -0.2]) == pytest.approx(unsigned)  # half: +1


@pytest.mark.parametrize("n", (12, 16))
def test_larger_lists_bounds_bracket_random_orders(n):
    rng = np.random.default_rng(n)
    scores = rng.normal(size=n)
    low, high = dcv_bounds(scores)
    orders = np.argsort(rng.random((2000, n)), axis=1)
    values = np.array([dcv(scores[o]) for o in orders[:300]])
    assert values.min() >= low - 1e-12
    assert values.max() <= high + 1e-12
    biased, balanced = extreme_orderings(scores)
    assert dcv(scores[biased]) == pytest.approx(low, abs=1e-12)
    assert dcv(scores[balanced]) == pytest.approx(high, abs=1e-12)
    assert duo(scores[biased]) == 1.0
    assert duo(scores[balanced]) == 0.0
    # a local search from the best of the random orders cannot beat the exact bound
    best = orders[np.argmax(values)]
    for i, j in itertools.combinations(range(n), 2):
        swapped = best.copy()
        swapped[[i, j]] = swapped[[j, i]]
        assert dcv(scores[swapped]) <= high + 1e-12


def test_sampled_normalisation_above_eight_is_reproducible_and_approximate():
    rng = np.random.default_rng(9)
    scores = rng.normal(size=11)
    first = duo_sampled(scores, seed=1)
    assert first == duo_sampled(scores, seed=1)
    assert first != duo_sampled(scores, seed=2)
    # the exact bounds contain any sample's bounds, so the sampled Duo of the most biased
    # order is >= 1 and of the most balanced order <= 0
    biased, balanced = extreme_orderings(scores)
    assert duo_sampled(scores[biased], seed=3) >= 1.0
    assert duo_sampled(scores[balanced], seed=3) <= 0.0


def test_bad_input_is_rejected_with_a_clear_message():
    with pytest.raises(ValueError, match="at least one score"):
        duo([])
    with pytest.raises(ValueError, match="finite"):
        duo([1.0, float("nan"), 2.0])
    with pytest.raises(ValueError, match="step"):
        duo([1.0, 2.0, 3.0], step=0)
    with pytest.raises(ValueError, match="variance"):
        duo([1.0, 2.0, 3.0], variance="sample")
    with pytest.raises(ValueError, match=f"at most {MAX_EXACT_N} scores, found 25.*GiB"):
        dcv_bounds(np.arange(25.0))
    with pytest.raises(ValueError, match="rearrangement"):
        dcv_bounds([1.0, 2.0, 3.0], algorithm="rearrangement")


@pytest.mark.parametrize("variance", ["prefix", "global"])
def test_every_ordering_at_a_bound_scores_exactly_1_or_0(variance):
    """The DP's bounds and the direct DCV add in other orders (here 2.2e-16 and 2.8e-17 apart);
    within a relative 1e-12 of a bound Duo is exactly 1 (the least varied) or 0."""
    sets = [
        [-0.46, -0.918, -0.967, 0.627, 0.826, 0.213],
        [0.459, 0.087, 0.87, 0.632, -0.995],
        [0.083, -0.401, -0.155, -0.943, -0.751, 0.341],
        [-1.071, -1.143, 0.049, 0.191, 0.724, -2.167],  # global: 2.2e-16 off its minimum
    ]
    for scores in map(np.array, sets):
        low, high = dcv_bounds(scores, variance=variance)
        ends = 0
        for order in itertools.permutations(range(scores.size)):
            ordered = scores[list(order)]
            value = dcv(ordered, variance=variance)
            if value - low <= 1e-12 * high:
                assert duo(ordered, variance=variance) == 1.0
                ends += 1
            elif high - value <= 1e-12 * high:
                assert duo(ordered, variance=variance) == 0.0
                ends += 1
            else:
                assert 0.0 < duo(ordered, variance=variance) < 1.0
        assert ends >= 2


def test_the_subset_dp_takes_max_exact_n_scores_and_names_its_cost_beyond(monkeypatch):
    import rankbias.metrics.duo as module

    with pytest.raises(ValueError) as info:
        dcv_bounds(np.arange(25.0))
    assert str(info.value) == (
        f"exact Duo bounds with variance='prefix': expected at most {MAX_EXACT_N} scores, found "
        "25; the subset DP would need about 1.0 GiB and O(n·2^n) = 8.39e+08 steps.  Use "
        "variance='global' (exact for any n) or duo_sampled() for an estimate."
    )
    monkeypatch.setattr(module, "MAX_EXACT_N", 4)  # the limit itself is exact: 4 scores go
    scores = np.array([0.3, -1.2, 0.8, 2.0])
    each = [dcv(scores[list(order)]) for order in itertools.permutations(range(4))]
    np.testing.assert_allclose(dcv_bounds(scores), (min(each), max(each)), rtol=1e-12)
    with pytest.raises(ValueError, match="expected at most 4 scores, found 5; .* about 0.0 GiB"):
        dcv_bounds(np.arange(5.0))


def test_global_variance_is_exact_beyond_the_subset_dp_limit():
    scores = np.linspace(-1.0, 2.0, 40) ** 3
    low, high = dcv_bounds(scores, variance="global")
    biased, balanced = extreme_orderings(scores, variance="global")
    assert dcv(scores[biased], variance="global") == pytest.approx(low, abs=1e-12)
    assert dcv(scores[balanced], variance="global") == pytest.approx(high, abs=1e-12)
    rng = np.random.default_rng(0)
    for _ in range(200):
        value = dcv(scores[rng.permutation(40)], variance="global")
        assert low - 1e-12 <= value <= high + 1e-12


def test_sampled_normalisation_over_more_than_one_block_of_draws():
    # 50,000 draws: more than the released 40,320 per block, so the min and max must be
    # taken over both blocks; the draws are numpy's default_rng(seed) argsort of uniforms
    rng = np.random.default_rng(4)
    scores = rng.normal(size=10)
    value = duo_sampled(scores, seed=5, n_samples=50_000)
    draws = np.argsort(np.random.default_rng(5).random((50_000, 10)), axis=1)
    values = dcv_of_rows(scores[draws], 1, "prefix", False)
    own = dcv_of_rows(scores[None, :], 1, "prefix", False)[0]
    expected = 1.0 - (own - values.min()) / (values.max() - values.min())
    assert value == pytest.approx(expected, abs=1e-12)
    assert values[40_320:].min() < values[:40_320].min()  # the second block matters here
    # two draws: the bounds are theirs, the first draw included
    draws = np.argsort(np.random.default_rng(5).random((2, 10)), axis=1)
    two = dcv_of_rows(scores[draws], 1, "prefix", False)
    assert duo_sampled(scores, seed=5, n_samples=2) == pytest.approx(
        1.0 - (own - two.min()) / (two.max() - two.min()), abs=1e-12
    )
    # one draw is allowed: min = max, so 0.5; none is refused
    assert duo_sampled(scores, seed=5, n_samples=1) == 0.5
    with pytest.raises(ValueError) as error:
        duo_sampled(scores, seed=5, n_samples=0)
    assert str(error.value) == "n_samples: expected a positive integer, found 0"


@pytest.mark.parametrize("n", [6, 8])
def test_sampled_normalisation_is_exhaustive_up_to_its_limit_and_sees_the_identity(n):
    rng = np.random.default_rng(n)
    scores = rng.normal(size=n)
    biased, _ = extreme_orderings(scores)
    # the most biased order itself: exhaustive enumeration starts with the identity, which is
    # the minimum here (Duo exactly 1), with any number of samples allowed
    assert duo_sampled(scores[biased], seed=0, n_samples=3, exhaustive_max_n=n) == (
        pytest.approx(1.0, abs=1e-12)
    )
    assert duo_sampled(scores, seed=0, n_samples=3, exhaustive_max_n=n) == pytest.approx(
        brute_force_duo(scores, 1, "prefix", False), abs=1e-12
    )


def test_sampled_normalisation_defaults_are_step_one_without_the_full_list():
    scores = np.array([0.3, -1.2, 2.0, 0.1, -0.4, 1.1])
    assert duo_sampled(scores, seed=0) == pytest.approx(
        brute_force_duo(scores, 1, "prefix", False), abs=1e-12
    )
    assert duo_sampled(scores, seed=0, step=2, include_full=True) == pytest.approx(
        brute_force_duo(scores, 2, "prefix", True), abs=1e-12
    )
    assert brute_force_duo(scores, 2, "prefix", False) != pytest.approx(
        brute_force_duo(scores, 1, "prefix", False)
    )
    # the whole list's own term is the same for every ordering, so include_full leaves
    # Duo unchanged (it shifts DCV only): its default cannot be seen in Duo
    assert brute_force_duo(scores, 1, "prefix", True) == pytest.approx(
        brute_force_duo(scores, 1, "prefix", False), abs=1e-12
    )


def brute_force_direction(scores, step, variance) -> int:
    """App. A.2 from the definition: the sign of Σ sgn(prefix) · u(prefix) / log2(i) over the
    cut points, sgn = +1 iff more than half of the prefix is positive (0 is not)."""
    scores = np.asarray(scores, dtype=float)
    total = 0.0
    for k in range(step, scores.size, step):
        if k > 1:
            prefix = scores[:k]
            if variance == "prefix":
                utility = np.var(prefix)
            else:
                utility = np.mean((prefix - scores.mean()) ** 2)
            sign = 1.0 if np.sum(prefix > 0) > k / 2 else -1.0
            total += sign * utility / math.log2(k)
    return 1 if total > 0 else -1


def test_direction_and_signed_duo_follow_the_definition_under_their_options():
    rng = np.random.default_rng(11)
    lists = rng.choice([-2.0, -1.0, -0.5, 0.0, 0.0, 0.5, 1.0, 2.0], size=(300, 6))
    seen = {"step": 0, "variance": 0, "zero": 0}
    for scores in lists:
        assert duo_direction(scores) == brute_force_direction(scores, 1, "prefix")  # defaults
        for step, variance in itertools.product((1, 2), ("prefix", "global")):
            expected = brute_force_direction(scores, step, variance)
            assert duo_direction(scores, step=step, variance=variance) == expected
            assert signed_duo(scores, step=step, variance=variance) == pytest.approx(
                expected * brute_force_duo(scores, step, variance, False), abs=1e-12
            )
        seen["step"] += brute_force_direction(scores, 2, "prefix") != brute_force_direction(
            scores, 1, "prefix"
        )
        seen["variance"] += brute_force_direction(scores, 1, "global") != brute_force_direction(
            scores, 1, "prefix"
        )
        seen["zero"] += brute_force_direction(scores, 1, "prefix") != brute_force_direction(
            np.where(scores == 0, 1e-9, scores), 1, "prefix"
        )
    assert min(seen.values()) > 0, seen  # each option changes some direction


def test_orientation_signed_duo_passes_its_options_and_reads_zero_as_not_positive():
    scores = np.array([0.3, -1.2, 2.0, 0.1, -0.4, 1.1])
    for options in ({}, {"step": 2}, {"variance": "global"}, {"include_full": True}):
        step = options.get("step", 1)
        variance = options.get("variance", "prefix")
        full = options.get("include_full", False)
        expected = brute_force_duo(scores, step, variance, full)
        assert orientation_signed_duo(scores, [1.0, 2.0], **options) == pytest.approx(expected)
        assert orientation_signed_duo(scores, [-1.0, 2.0], **options) == pytest.approx(expected)
    # a reference score of 0 is not positive: one of three positive is fewer than half
    assert orientation_signed_duo(scores, [0.0, 0.0, 1.0]) == pytest.approx(
        -brute_force_duo(scores, 1, "prefix", False)
    )


@pytest.mark.parametrize(("step", "include_full"), [(1, True), (2, False), (3, True)])
def test_extreme_orderings_attain_the_bounds_under_every_option(step, include_full):
    rng = np.random.default_rng(12)
    for n in range(3, 8):
        scores = rng.normal(size=n)
        values = brute_force_dcv(scores, step, "prefix", include_full)
        biased, balanced = extreme_orderings(scores, step=step, include_full=include_full)
        got = dcv_of_rows(scores[np.stack([biased, balanced])], step, "prefix", include_full)
        assert got == pytest.approx([values.min(), values.max()], abs=1e-12)


@pytest.mark.parametrize("last", [-0.5, 2.0])
def test_a_constant_prefix_has_variance_zero_never_below(last):
    # The cut points 2 and 3 of [0.3, 0.3, 0.3, last] see three equal scores: each prefix
    # variance is 0 by hand.  Computed as E[x²] − E[x]² around the global mean it can come out
    # a few 1e-18 below 0 in floating point; a variance is never negative.
    value = dcv([0.3, 0.3, 0.3, last])
    assert 0.0 <= value < 1e-15


def test_the_whole_list_adds_the_same_term_to_every_ordering():
    # include_full adds the cut point i = n, whose prefix is the whole list whatever the order:
    # u(n) is the population variance of all scores (prefix and global variance alike), so DCV
    # grows by var/log2(n) and Duo, normalised between the orderings' extremes, does not move.
    scores = [0.9, -0.8, 0.1, 0.5, -0.3]
    var = float(np.var(scores))
    for variance in VARIANCES:
        grown = dcv(scores, variance=variance, include_full=True) - dcv(scores, variance=variance)
        assert grown == pytest.approx(var / math.log2(5), rel=1e-12)
        assert dcv(scores, variance=variance) == dcv(scores, variance=variance, include_full=False)
        assert duo(scores, variance=variance, include_full=True) == pytest.approx(
            duo(scores, variance=variance), abs=1e-12
        )


def test_the_options_are_named_exactly_in_their_messages():
    scores = [0.1, 0.2, 0.3]
    for call, message in (
        (
            lambda: dcv(scores, variance="x"),
            "variance: expected one of 'prefix', 'global', found 'x'",
        ),
        (
            lambda: dcv_bounds(scores, algorithm="x"),
            "algorithm: expected one of 'auto', 'subset_dp', 'rearrangement', found 'x'",
        ),
        (
            lambda: dcv_bounds(scores, algorithm="rearrangement"),
            "algorithm='rearrangement' is exact only for variance='global' (fixed per-document "
            "contributions); found variance='prefix'",
        ),
    ):
        with pytest.raises(ValueError) as caught:
            call()
        assert str(caught.value) == message
    assert dcv_bounds(scores, algorithm="rearrangement", variance="global") == pytest.approx(
        dcv_bounds(scores, algorithm="subset_dp", variance="global"), abs=1e-12
    )
    # the rearrangement is asked for by name beyond the DP's limit, where "auto" would pick it
    many = np.random.default_rng(3).uniform(0, 1, MAX_EXACT_N + 6)
    assert dcv_bounds(many, algorithm="rearrangement", variance="global") == dcv_bounds(
        many, variance="global"
    )


def test_bad_scores_and_steps_are_named_exactly():
    from rankbias.metrics.duo import cut_points

    for call, message in (
        (
            lambda: dcv([[0.1, 0.2]]),
            "scores: expected a 1-D sequence of numbers, found shape (1, 2)",
        ),
        (
            lambda: dcv([0.1, math.nan, math.inf]),
            "scores: expected finite numbers, found NaN/inf at positions [1, 2]",
        ),
        (lambda: dcv([0.1, 0.2, 0.3], step=True), "step: expected a positive integer, found True"),
    ):
        with pytest.raises(ValueError) as caught:
            call()
        assert str(caught.value) == message
    # the defaults: every position from 2, the whole list left out (range(1, n, 1), i >= 2)
    np.testing.assert_array_equal(cut_points(5), [2, 3, 4])
