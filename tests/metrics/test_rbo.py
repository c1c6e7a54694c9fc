"""RBO against the defining infinite sum (truncated far out), hand values and invariants.

The brute force builds the continuation of the two lists that each variant assumes beyond the
observed depth, computes every overlap ``X_d`` by set intersection and sums
``(1 - p) Σ_d p^(d-1) X_d / d`` to a depth where ``p^d`` is below 1e-16.
"""

from __future__ import annotations

import math

import numpy as np
import pytest

from rankbias.metrics.rbo import rbo


def far_depth(p: float) -> int:
    return int(math.ceil(math.log(1e-17) / math.log(p)))


def set_overlap(first, second, d):
    return len(set(first[:d]) & set(second[:d]))


def rbo_of_extensions(first, second, p):
    """(1 - p) Σ p^(d-1) X_d/d over explicit (long) lists."""
    depth = min(len(first), len(second))
    return (1 - p) * sum(
        p ** (d - 1) * set_overlap(first, second, d) / d for d in range(1, depth + 1)
    )


def brute_min(first, second, p):
    """No unseen item ever matches: continue both lists with fresh, distinct items."""
    depth = far_depth(p)
    extended_first = list(first) + [("first", i) for i in range(depth)]
    extended_second = list(second) + [("second", i) for i in range(depth)]
    return rbo_of_extensions(extended_first[:depth], extended_second[:depth], p)


def brute_max(first, second, p):
    """Unseen positions match as early as possible: each list continues with the other's
    unmatched items, then both with the same fresh items."""
    depth = far_depth(p)
    unmatched_second = [x for x in second if x not in set(first)]
    unmatched_first = [x for x in first if x not in set(second)]
    common = [("common", i) for i in range(depth)]
    extended_first = list(first) + unmatched_second + common
    extended_second = list(second) + unmatched_first + common
    return rbo_of_extensions(extended_first[:depth], extended_second[:depth], p)


def brute_ext(first, second, p):
    """Extrapolation of Webber Eq. 32: A_d observed up to s; for s < d <= l the short list's
    unseen items match at the rate X_s/s; beyond l the agreement stays at A_l."""
    if len(first) > len(second):
        first, second = second, first
    s, longest = len(first), len(second)
    x_s = set_overlap(first, second, s)

    def agreement(d):
        if d <= s:
            return set_overlap(first, second, d) / d
        if d <= longest:
            return (set_overlap(first, second, d) + (d - s) * x_s / s) / d
        return agreement(longest)

    return (1 - p) * sum(p ** (d - 1) * agreement(d) for d in range(1, far_depth(p) + 1))


def random_lists(rng, size_first, size_second, universe):
    items = [f"d{i}" for i in range(universe)]
    first = list(rng.choice(items, size=size_first, replace=False))
    second = list(rng.choice(items, size=size_second, replace=False))
    return first, second


@pytest.mark.parametrize("p", (0.5, 0.9, 0.95))
def test_all_variants_equal_the_brute_force_sums(p):
    rng = np.random.default_rng(int(p * 100))
    for _ in range(30):
        k = int(rng.integers(1, 12))
        first, second = random_lists(rng, k, k, universe=int(rng.integers(k, 3 * k + 2)))
        low = brute_min(first, second, p)
        assert rbo(first, second, p=p, variant="min") == pytest.approx(low, abs=1e-12)
        residual = brute_max(first, second, p) - low
        assert rbo(first, second, p=p, variant="res") == pytest.approx(residual, abs=1e-12)
        assert rbo(first, second, p=p) == pytest.approx(brute_ext(first, second, p), abs=1e-12)


@pytest.mark.parametrize("p", (0.5, 0.9))
def test_uneven_lengths_equal_the_brute_force_extrapolation(p):
    rng = np.random.default_rng(17)
    for _ in range(40):
        sizes = rng.integers(1, 12, size=2)
        first, second = random_lists(rng, int(sizes[0]), int(sizes[1]), universe=15)
        expected = brute_ext(first, second, p)
        assert rbo(first, second, p=p) == pytest.approx(expected, abs=1e-12)
        assert rbo(second, first, p=p) == pytest.approx(expected, abs=1e-12)


def test_known_values():
    assert rbo(list("abcdefgh"), list("abcdefgh")) == pytest.approx(1.0, abs=1e-15)
    assert rbo(list("abc"), list("xyz")) == 0.0
    assert rbo(list("abc"), list("xyz"), variant="min") == 0.0
    # [a, b] vs [b, a]: A_1 = 0, A_2 = 1 -> (1 - p)(0 + p) + 1 * p^2 = p at any p
    assert rbo(["a", "b"], ["b", "a"], p=0.9) == pytest.approx(0.9, abs=1e-15)
    assert rbo(["a", "b"], ["b", "a"], p=0.6) == pytest.approx(0.6, abs=1e-15)
    # uneven: [a] vs [a, b] extrapolates full agreement; [a] vs [b, a] gives p/2
    assert rbo(["a"], ["a", "b"], p=0.9) == pytest.approx(1.0, abs=1e-15)
    assert rbo(["a"], ["b", "a"], p=0.9) == pytest.approx(0.45, abs=1e-15)
    # residual of a depth-3 evaluation with full overlap, p = 0.9; the same number is printed
    # in the README of dlukes/rbo for a depth-3 example whose overlap is complete
    assert rbo(list("abc"), list("abc"), variant="res") == pytest.approx(
        0.47747163566865164, abs=1e-15
    )
    # identical lists: min + res = 1 (the maximum is 1)
    assert rbo(list("abcd"), list("abcd"), variant="min") + rbo(
        list("abcd"), list("abcd"), variant="res"
    ) == pytest.approx(1.0, abs=1e-14)


def test_bounds_bracket_the_extrapolation_and_symmetry():
    rng = np.random.default_rng(23)
    for _ in range(100):
        k = int(rng.integers(1, 15))
        first, second = random_lists(rng, k, k, universe=20)
        low = rbo(first, second, variant="min")
        residual = rbo(first, second, variant="res")
        point = rbo(first, second)
        assert 0.0 <= low <= point + 1e-12
        assert point <= low + residual + 1e-12
        assert low + residual <= 1.0 + 1e-12
        assert rbo(second, first) == pytest.approx(point, abs=1e-15)


def test_depth_truncates_both_lists():
    assert rbo(list("abcx"), list("abcy"), depth=3) == pytest.approx(1.0, abs=1e-15)
    assert rbo(list("abcx"), list("abcy")) < 1.0


def test_bad_input():
    with pytest.raises(ValueError, match="unique"):
        rbo(["a", "b", "a"], ["a"])
    with pytest.raises(ValueError, match="persistence"):
        rbo(["a"], ["a"], p=1.0)
    with pytest.raises(ValueError) as info:
        rbo(["a", "b"], ["a", "b", "c"], variant="min")
    assert str(info.value) == (
        "variant='min' is implemented for lists evaluated to the same depth; found lengths 2 "
        "and 3.  Pass depth=2 (or use variant='ext', which handles different lengths)."
    )
    with pytest.raises(ValueError, match="variant"):
        rbo(["a"], ["a"], variant="max")


def test_a_list_that_is_not_a_ranking_is_refused_naming_it():
    with pytest.raises(TypeError) as info:
        rbo("abc", ["a", "b"])
    assert str(info.value) == "a: expected a sequence of items, found str 'abc'"
    for value, shown in ((None, "NoneType None"), (5, "int 5")):
        with pytest.raises(TypeError) as info:
            rbo(["a"], value)
        assert str(info.value) == f"b: expected a sequence of items, found {shown}"
    with pytest.raises(ValueError) as info:
        rbo(["a", "b"], ["c", "d", "e", "d"])
    assert str(info.value) == "b: expected unique items, found 'd' at positions 1 and 3"


@pytest.mark.parametrize(
    ("options", "message"),
    [
        ({"p": 0.0}, "p: expected a persistence strictly between 0 and 1, found 0.0"),
        ({"p": 1}, "p: expected a persistence strictly between 0 and 1, found 1"),
        ({"variant": "max"}, "variant: expected one of 'ext', 'min', 'res', found 'max'"),
        ({"depth": 0}, "depth: expected a positive integer, found 0"),
        ({"depth": True}, "depth: expected a positive integer, found True"),
        ({"depth": 2.0}, "depth: expected a positive integer, found 2.0"),
    ],
)
def test_parameters_out_of_their_range_are_refused_naming_them(options, message):
    with pytest.raises(ValueError) as info:
        rbo(["a"], ["b"], **options)
    assert str(info.value) == message


def test_two_empty_lists_have_no_rbo():
    assert math.isnan(rbo([], []))


def test_depth_cuts_both_lists_before_anything_else():
    # The first two items of each list share nothing: at depth 2 both the point estimate and
    # the lower bound are 0 (by hand), although b's third item is a's first.
    a, b = ["x", "y", "z"], ["u", "v", "x"]
    assert rbo(a, b, depth=2) == 0.0
    assert rbo(a, b, depth=2, variant="min") == 0.0
    assert rbo(b, a, depth=2) == 0.0
    assert rbo(a, b, depth=3) > 0.0


def test_an_empty_list_shares_nothing_with_a_non_empty_one():
    assert rbo([], ["d1"]) == 0.0 and rbo(["d1"], []) == 0.0
    assert math.isnan(rbo([], []))
