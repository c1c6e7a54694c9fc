"""rND/rKL: the two normalisations of rankbias.metrics.rank_fairness against brute force.

Expected values: a direct transcription of the definitions (the maximum as normaliser: Yang &
Stoyanovich 2017; min–max: Ziems et al. 2024 Eq. 2; the utilities: Ziems et al. 2024 Eq. 3–4
with Yang & Stoyanovich's absolute value) evaluated on every distinct ordering, and examples by
hand.
"""

from __future__ import annotations

import itertools
import math

import numpy as np
import pytest

from rankbias.metrics.rank_fairness import rkl, rnd


def brute_raw(flags, measure, step=1, discount="log2(i+1)"):
    n, total = len(flags), sum(flags)
    overall = total / n
    value = 0.0
    for i in range(step, n + 1, step):
        if discount == "log2(i)" and i == 1:
            continue
        share = sum(flags[:i]) / i
        if measure == "rnd":
            utility = abs(share - overall)
        else:
            utility = sum(
                a * math.log2(a / b) for a, b in ((share, overall), (1 - share, 1 - overall)) if a
            )
        value += utility / math.log2(i + 1 if discount == "log2(i+1)" else i)
    return value


def orderings(n, protected):
    return {perm for perm in itertools.permutations([1] * protected + [0] * (n - protected))}


def test_fairest_of_three_with_one_protected_by_hand():
    # P_N = 1/3.  Protected second: |0 − 1/3|/1 + |1/2 − 1/3|/log2 3; protected first (the
    # most unfair): |1 − 1/3|/1 + |1/2 − 1/3|/log2 3.  The fairest ordering is not 0.
    fairest = 1 / 3 + (1 / 6) / math.log2(3)
    unfair = 2 / 3 + (1 / 6) / math.log2(3)
    assert rnd([0, 1, 0]) == pytest.approx(fairest / unfair)
    assert round(rnd([0, 1, 0]), 3) == 0.568
    assert rnd([0, 1, 0], normalisation="min_max") == 0.0
    assert rnd([1, 0, 0], normalisation="min_max") == 1.0
    # protected last: in between
    last = 1 / 3 + (1 / 3) / math.log2(3)
    assert rnd([0, 0, 1], normalisation="min_max") == pytest.approx(
        (last - fairest) / (unfair - fairest)
    )


def test_fairest_of_three_with_one_protected_rkl_by_hand():
    # KL in bits of (share, 1 − share) from (1/3, 2/3): share 0 gives log2(3/2), share 1 log2 3,
    # share 1/2 gives (log2(3/2) + log2(3/4)) / 2.  Protected second: shares 0, 1/2, 1/3;
    # protected first (the most unfair): 1, 1/2, 1/3 (the last cut point adds 0).
    half = (math.log2(3 / 2) + math.log2(3 / 4)) / 2
    fairest = math.log2(3 / 2) + half / math.log2(3)
    unfair = math.log2(3) + half / math.log2(3)
    assert rkl([0, 1, 0]) == pytest.approx(fairest / unfair)
    assert round(rkl([0, 1, 0]), 3) == 0.390
    assert rkl([0, 1, 0], normalisation="min_max") == 0.0
    assert rkl([1, 0, 0]) == 1.0


@pytest.mark.parametrize("measure", ["rnd", "rkl"])
@pytest.mark.parametrize(("step", "discount"), [(1, "log2(i+1)"), (2, "log2(i+1)"), (1, "log2(i)")])
def test_min_max_normalisation_against_every_ordering(measure, step, discount):
    function = {"rnd": rnd, "rkl": rkl}[measure]
    for n in range(2, 8):
        for protected in range(1, n):
            options = {"step": step, "discount": discount}
            raws = {o: brute_raw(o, measure, step, discount) for o in orderings(n, protected)}
            low, high = min(raws.values()), max(raws.values())
            for ordering, raw in raws.items():
                got = function(list(ordering), normalisation="min_max", **options)
                if high - low <= 1e-12:
                    assert math.isnan(got)
                else:
                    assert got == pytest.approx((raw - low) / (high - low), abs=1e-9)
                    assert function(list(ordering), **options) == pytest.approx(raw / high)


@pytest.mark.parametrize(("measure", "smoothing"), [("rnd", None), ("rkl", "none"),
                                                   ("rkl", "fairrank")])  # fmt: skip
@pytest.mark.parametrize("step", [1, 2, 3])
def test_the_fairest_and_most_unfair_orderings_score_exactly_0_and_1(measure, smoothing, step):
    """The exact DP bounds and the direct sum add in other orders: on n = 4, P = 2 the fairest
    ordering's raw value lies 1.1e-16 above the DP's minimum.  Within a relative 1e-12 of a bound
    the value is exactly 0 or 1 (the docstring's promise), and where every ordering ties up to
    that round-off (n = 4, P = 2, step 3: 2.8e-17 apart) min–max is undefined."""
    function = rnd if smoothing is None else lambda o, **k: rkl(o, kl_smoothing=smoothing, **k)
    for n in range(2, 8):
        for protected in range(1, n):
            values = {
                o: (
                    function(list(o), step=step),
                    function(list(o), step=step, normalisation="min_max"),
                )
                for o in orderings(n, protected)
            }
            for scores in zip(*values.values(), strict=True):  # max, then min–max
                if all(map(math.isnan, scores)):
                    continue  # no cut point, or every ordering ties: undefined for all
                assert not any(map(math.isnan, scores))
                assert min(scores) >= 0.0 and max(scores) == 1.0
            fair = [v for _, v in values.values() if not math.isnan(v)]
            assert not fair or min(fair) == 0.0
            if smoothing == "fairrank" or not fair:
                continue
            raws = {o: brute_raw(o, measure, step) for o in values}
            low, high = min(raws.values()), max(raws.values())
            for ordering, raw in raws.items():  # every ordering at a bound, not only one
                if raw - low <= 1e-12:
                    assert values[ordering][1] == 0.0
                if high - raw <= 1e-12:
                    assert values[ordering] == (1.0, 1.0)
    tie = [function(list(o), step=3, normalisation="min_max") for o in orderings(4, 2)]
    assert step != 3 or all(map(math.isnan, tie))


def test_the_normalisation_is_checked():
    with pytest.raises(ValueError, match="normalisation: expected one of 'max', 'min_max'"):
        rnd([0, 1], normalisation="minmax")
    assert np.isnan(rkl([1, 1, 1], normalisation="min_max"))


@pytest.mark.parametrize("measure", ["rnd", "rkl"])
def test_fairest_of_three_is_not_zero_under_max_but_zero_under_min_max(measure):
    # Every ordering of three items with one protected, scored by the transcription above; the
    # fairest one is found by brute force, not taken from the code under test.
    function = {"rnd": rnd, "rkl": rkl}[measure]
    raws = {o: brute_raw(o, measure) for o in orderings(3, 1)}
    assert len(raws) == 3
    fairest = min(raws, key=raws.get)
    assert fairest == (0, 1, 0)
    brute_max_normalised = raws[fairest] / max(raws.values())
    assert brute_max_normalised > 0.3  # "0 = fair" would be wrong under the default
    assert function(list(fairest)) == pytest.approx(brute_max_normalised, abs=1e-12)
    assert function(list(fairest), normalisation="min_max") == 0.0
    assert function(list(max(raws, key=raws.get)), normalisation="min_max") == 1.0
    if measure == "rnd":
        assert round(brute_max_normalised, 3) == 0.568


@pytest.mark.parametrize("measure", ["rnd", "rkl"])
def test_the_bounds_default_to_every_cut_point_and_the_log2_i_plus_1_discount(measure):
    function = {"rnd": rnd, "rkl": rkl}[measure]
    raws = {o: brute_raw(o, measure) for o in orderings(7, 3)}
    low, high = min(raws.values()), max(raws.values())
    for ordering, raw in raws.items():
        got = function(list(ordering), normalisation="min_max")
        assert got == pytest.approx((raw - low) / (high - low), abs=1e-9)
        assert function(list(ordering)) == pytest.approx(raw / high, abs=1e-9)
    stepped = [brute_raw(o, measure, step=2) for o in raws]
    assert min(stepped) != pytest.approx(low) and max(stepped) != pytest.approx(high)
