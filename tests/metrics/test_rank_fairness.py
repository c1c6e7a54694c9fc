"""rND and rKL: exact normalisers against brute force over all orderings, hand examples.

The brute force enumerates every placement of the protected items (all distinct orderings
of the group labels) and sums the utilities with plain ``math`` — no code shared with the
module.
"""

from __future__ import annotations

import itertools
import math

import pytest

from rankbias.metrics.rank_fairness import rkl, rkl_raw, rnd, rnd_raw


def brute_utility(measure, share, overall, smoothing="none"):
    if measure == "rND":
        return abs(share - overall)
    if smoothing == "fairrank":
        share = 0.001 if share in (0.0, 1.0) else share
    total = 0.0
    if share > 0:
        total += share * math.log2(share / overall)
    if share < 1:
        total += (1 - share) * math.log2((1 - share) / (1 - overall))
    return total


def brute_raw(measure, flags, step, discount, smoothing="none"):
    n, p = len(flags), sum(flags)
    total = 0.0
    for i in range(step, n + 1, step):
        if discount == "log2(i)":
            if i == 1:
                continue
            weight = 1 / math.log2(i)
        else:
            weight = 1 / math.log2(i + 1)
        total += brute_utility(measure, sum(flags[:i]) / i, p / n, smoothing) * weight
    return total


def arrangements(n, p):
    for positions in itertools.combinations(range(n), p):
        chosen = set(positions)
        yield [i in chosen for i in range(n)]


SETTINGS = [
    (n, p, step, discount)
    for n in range(2, 9)
    for p in range(1, n)
    for step in (1, 2, 3)
    for discount in ("log2(i+1)", "log2(i)")
]


@pytest.mark.parametrize(("n", "p", "step", "discount"), SETTINGS)
def test_exact_maximum_equals_brute_force_and_extremes_score_one_and_at_least_zero(
    n, p, step, discount
):
    for measure, raw, normalised in (("rND", rnd_raw, rnd), ("rKL", rkl_raw, rkl)):
        values = {
            tuple(flags): brute_raw(measure, flags, step, discount) for flags in arrangements(n, p)
        }
        best = max(values.values())
        for flags, value in values.items():
            assert raw(list(flags), step=step, discount=discount) == pytest.approx(value, abs=1e-12)
        if best == 0:
            for flags in values:
                assert math.isnan(normalised(list(flags), step=step, discount=discount))
            continue
        for flags, value in values.items():  # the exact maximum is the normaliser
            got = normalised(list(flags), step=step, discount=discount)
            assert got == pytest.approx(value / best, abs=1e-12)
        most_unfair = max(values, key=values.get)
        fairest = min(values, key=values.get)
        assert normalised(list(most_unfair), step=step, discount=discount) == 1.0
        assert normalised(list(fairest), step=step, discount=discount) >= 0.0
        assert all(
            0.0 <= normalised(list(flags), step=step, discount=discount) <= 1.0 for flags in values
        )


def test_fairrank_smoothing_maximum_equals_brute_force():
    for n in range(2, 8):
        for p in range(1, n):
            values = {
                tuple(flags): brute_raw("rKL", flags, 1, "log2(i+1)", "fairrank")
                for flags in arrangements(n, p)
            }
            best = max(values.values())
            for flags, value in values.items():
                got = rkl(list(flags), kl_smoothing="fairrank")
                assert got == pytest.approx(value / best, abs=1e-12)


def test_rnd_hand_example():
    # N = 4, P = 2, discount 1/log2(i+1).  [1,1,0,0]: |1-1/2|/1 + |1-1/2|/log2 3 + |2/3-1/2|/2
    # (i = 4 adds 0).  [1,0,1,0]: 1/2 + 0 + (1/6)/2.  [1,1,0,0] is the most unfair order.
    unfair = 0.5 + 0.5 / math.log2(3) + 1 / 12
    alternating = 0.5 + 1 / 12
    assert rnd_raw([1, 1, 0, 0]) == pytest.approx(unfair, abs=1e-15)
    assert rnd([1, 1, 0, 0]) == 1.0
    assert rnd([True, False, True, False]) == pytest.approx(alternating / unfair, abs=1e-15)
    assert rnd([False, False, True, True]) == 1.0
    # the paper's discount 1/log2(i) skips i = 1: [1,1,0,0] -> 1/2 + (1/6)/log2 3
    assert rnd_raw([1, 1, 0, 0], discount="log2(i)") == pytest.approx(
        0.5 + (1 / 6) / math.log2(3), abs=1e-15
    )
    # step 2: cut points 2 and 4 only
    assert rnd_raw([1, 0, 1, 0], step=2) == 0.0
    assert rnd([1, 0, 1, 0], step=2) == 0.0


def test_rkl_hand_example():
    # [1, 0]: i = 1 has share 1 against 1/2: KL = 1*log2(1/(1/2)) + 0 = 1, discount 1/log2 2.
    assert rkl_raw([1, 0]) == pytest.approx(1.0, abs=1e-15)
    assert rkl([True, False]) == 1.0
    # FairRank smoothing turns the share 1 into 0.001
    smoothed = 0.001 * math.log2(0.001 / 0.5) + 0.999 * math.log2(0.999 / 0.5)
    assert rkl_raw([1, 0], kl_smoothing="fairrank") == pytest.approx(smoothed, abs=1e-15)
    # [1,0,0]: P_N = 1/3; i = 1: KL(1 || 1/3) = log2 3; i = 2: KL(1/2 || 1/3)
    kl_half = 0.5 * math.log2(0.5 / (1 / 3)) + 0.5 * math.log2(0.5 / (2 / 3))
    expected = math.log2(3) + kl_half / math.log2(3)
    assert rkl_raw([1, 0, 0]) == pytest.approx(expected, abs=1e-15)


def test_undefined_when_group_membership_is_constant():
    assert math.isnan(rnd([True, True, True]))
    assert math.isnan(rkl([False, False]))


def test_bad_input():
    with pytest.raises(ValueError, match="booleans"):
        rnd([0, 2, 1])
    with pytest.raises(ValueError, match="non-empty"):
        rkl([])
    with pytest.raises(ValueError, match="step"):
        rnd([1, 0], step=0)
    with pytest.raises(ValueError, match="discount"):
        rnd([1, 0], discount="log10")
    with pytest.raises(ValueError, match="kl_smoothing"):
        rkl([1, 0], kl_smoothing="laplace")


def test_step_must_be_a_positive_integer_and_one_item_is_a_list():
    for step in (True, 1.5, 0):
        with pytest.raises(ValueError, match="step: expected a positive integer"):
            rnd_raw([True, False], step=step)
    # one item: its only prefix is the whole list, so P_1 = P_N and every term is 0
    assert rnd_raw([True]) == 0.0 and rkl_raw([False]) == 0.0
    assert math.isnan(rnd([True])) and math.isnan(rkl([False]))


def test_a_step_longer_than_the_list_leaves_no_cut_point_and_no_value():
    # step 5 on three items: no cut point i = 5, 10, … ≤ 3, every ordering has raw value 0, so
    # neither normaliser is defined
    for function in (rnd, rkl):
        for normalisation in ("max", "min_max"):
            assert math.isnan(function([1, 0, 0], step=5, normalisation=normalisation))
    assert rnd_raw([1, 0, 0], step=5) == 0.0


def test_the_choices_are_named_exactly_in_their_messages():
    for call, message in (
        (
            lambda: rkl_raw([1, 0], kl_smoothing="x"),
            "kl_smoothing: expected one of 'none', 'fairrank'",
        ),
        (lambda: rkl([1, 0], kl_smoothing="x"), "kl_smoothing: expected one of 'none', 'fairrank'"),
        (lambda: rnd([1, 0], discount="x"), "discount: expected one of 'log2(i+1)', 'log2(i)'"),
    ):
        with pytest.raises(ValueError) as caught:
            call()
        assert str(caught.value).startswith(message)


def test_what_is_not_a_boolean_is_named_and_at_most_five_of_them():
    for values, found in (
        ([True, False, 0, 1, None, 2.5], "['2.5', 'None']"),
        ([2, 3, 4, 5, 6, 7], "['2', '3', '4', '5', '6']"),
    ):
        with pytest.raises(ValueError) as caught:
            rnd(values)
        assert str(caught.value) == f"protected: expected booleans (or 0/1), found {found}"


def test_fairrank_smoothing_also_moves_a_share_of_0_or_1_of_the_whole_list():
    # all or none protected: FairRank replaces P_N = 0 or 1 by 0.001 as it does the prefix
    # shares, so every term is KL(0.001 ‖ 0.001) = 0 (without that, log2(x / 0) is infinite)
    assert rkl_raw([0, 0, 0], kl_smoothing="fairrank") == 0.0
    assert rkl_raw([1, 1, 1], kl_smoothing="fairrank") == 0.0
