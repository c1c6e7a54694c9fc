r"""Rank-biased overlap (Webber, Moffat & Zobel, *A Similarity Measure for Indefinite Rankings*,
ACM TOIS 28(4), 2010; ``webber2010rbo``), used for CRBO (Abolghasemi et al. (2024),
§5(iii)).

For rankings ``S`` and ``T`` (items unique within each), the overlap at depth ``d`` is
``X_d = |S_{:d} ∩ T_{:d}|``, the agreement ``A_d = X_d / d``, and
``RBO(S, T, p) = (1 − p) Σ_{d≥1} p^{d−1} A_d`` on infinite rankings.  On finite prefixes
(``variant=``):

- ``"ext"`` (default; Webber Eq. 32, Eq. 30 for equal lengths): the extrapolation that assumes
  the agreement seen so far continues; for lists of lengths ``s < l`` the unseen items of the
  short list match at the rate ``X_s / s``:

  .. math::  \mathrm{RBO_{ext}} = \frac{1-p}{p}\Big(\sum_{d=1}^{l} \frac{X_d}{d} p^d
       + \sum_{d=s+1}^{l} \frac{X_s (d-s)}{s\,d} p^d\Big)
       + \Big(\frac{X_l - X_s}{l} + \frac{X_s}{s}\Big) p^l

  Identical lists give exactly 1, disjoint lists 0.
- ``"min"`` (Eq. 11): the lower bound, no unseen item ever matches; ``"res"`` (Eq. 13): the
  residual, the width of ``[min, min + res]`` in which the full RBO lies.  Both need lists
  evaluated to the same depth (pass ``depth=`` no larger than the shorter list).
"""

from __future__ import annotations

import math
import numbers
from collections.abc import Hashable, Sequence
from typing import Literal

import numpy as np

from rankbias.errors import expect_choice, expect_count, expect_items

__all__ = ["rbo"]

Variant = Literal["ext", "min", "res"]


def _check_list(items: Sequence[Hashable], name: str) -> list:
    values = expect_items(items, name, "a sequence of items")
    seen: dict = {}
    for position, item in enumerate(values):
        if item in seen:
            raise ValueError(
                f"{name}: expected unique items, found {item!r} at positions {seen[item]} "
                f"and {position}"
            )
        seen[item] = position
    return values


def _overlaps(first: list, second: list, depth: int) -> np.ndarray:
    """``X_d`` for ``d = 1..depth``; a list that has ended contributes no new items.  Each new
    item of ``first`` matches an earlier one of ``second``; each new item of ``second`` matches
    one of ``first`` up to and including depth ``d`` (so ``a[d] == b[d]`` counts once)."""
    seen_first: set = set()
    seen_second: set = set()
    overlap = 0
    result = np.zeros(depth, dtype=np.int64)
    for d in range(depth):
        if d < len(first):
            overlap += first[d] in seen_second
            seen_first.add(first[d])
        if d < len(second):
            overlap += second[d] in seen_first
            seen_second.add(second[d])
        result[d] = overlap
    return result


def rbo(
    a: Sequence[Hashable],
    b: Sequence[Hashable],
    *,
    p: float = 0.9,
    depth: int | None = None,
    variant: Variant = "ext",
) -> float:
    """Rank-biased overlap of rankings ``a`` and ``b`` (best item first).

    ``p``: persistence in ``(0, 1)``.  ``depth``: evaluate on the first ``depth`` items of each
    list (default: all).  ``variant``: ``"ext"`` (extrapolated, point estimate; lists may differ
    in length), ``"min"`` (lower bound) or ``"res"`` (residual); see the module docstring.
    Two empty lists: NaN.
    """
    if isinstance(p, bool) or not (isinstance(p, numbers.Real) and 0.0 < p < 1.0):
        raise ValueError(f"p: expected a persistence strictly between 0 and 1, found {p!r}")
    expect_choice(variant, "variant", ("ext", "min", "res"))
    first, second = _check_list(a, "a"), _check_list(b, "b")
    if depth is not None:
        expect_count(depth, "depth")
        first, second = first[: int(depth)], second[: int(depth)]
    if len(first) > len(second):
        first, second = second, first
    p = float(p)
    short, long = len(first), len(second)
    if long == 0:
        return float("nan")
    overlaps = _overlaps(first, second, long).astype(float)
    depths = np.arange(1, long + 1, dtype=float)
    powers = p**depths
    if variant == "ext":
        if short == 0:
            return 0.0
        x_s, x_l = overlaps[short - 1], overlaps[long - 1]
        beyond = depths > short
        seen = np.sum(overlaps / depths * powers)
        extrapolated = np.sum((x_s * (depths - short) / (short * depths) * powers)[beyond])
        tail = ((x_l - x_s) / long + x_s / short) * p**long
        return float((1 - p) / p * (seen + extrapolated) + tail)
    if short != long:
        raise ValueError(
            f"variant={variant!r} is implemented for lists evaluated to the same depth; found "
            f"lengths {short} and {long}.  Pass depth={short} (or use variant='ext', which "
            "handles different lengths)."
        )
    k = long
    x_k = overlaps[-1]
    if variant == "min":
        head = np.sum((overlaps - x_k) / depths * powers)
        return float((1 - p) / p * (head - x_k * math.log1p(-p)))
    # residual: every unseen position matches as early as possible.  X_d = X_k + 2(d − k) until
    # it reaches d at d = f = 2k − X_k; beyond f the lists agree fully.
    f = int(2 * k - x_k)
    upper_head = sum(p ** (d - 1) * (2.0 - 2.0 * k / d) for d in range(k + 1, f + 1))
    full_tail = p**f / (1 - p)
    tail_inverse = -math.log1p(-p) - sum(p**d / d for d in range(1, f + 1))  # Σ_{d > f} p^d / d
    lower_tail = x_k / p * tail_inverse
    return float((1 - p) * (upper_head + full_tail - lower_tail))


# ---- measure declarations (rankbias.metrics.measures) -------------------------------------------

from rankbias.metrics.measures import HigherIs, Input, Measure, Parameter, register  # noqa: E402

P = Parameter(
    "p",
    "float",
    0.9,
    "RBO persistence, strictly between 0 and 1",
    minimum=0.0,
    exclusive_minimum=True,
    maximum=1.0,
)


def _rbo_kernel(inputs, cutoffs, p):
    originals, counterfactuals = inputs.counterfactual_lists()
    out = np.empty((len(originals), len(cutoffs)))  # every cell is written below
    for i, (original, counterfactual) in enumerate(zip(originals, counterfactuals, strict=True)):
        for j, k in enumerate(cutoffs):
            out[i, j] = rbo(list(original), list(counterfactual), p=p, depth=int(k))
    return out


def _crbo_kernel(inputs, cutoffs, p):
    return np.nanmean(_rbo_kernel(inputs, cutoffs, p), axis=0)


register(
    Measure(
        "rbo",
        "rbo",
        "RBO@k (extrapolated) between a query's list on the original collection and on the "
        "counterfactual collection",
        "webber2010rbo Eq. 32; abolghasemi2024texfair §5(iii)",
        HigherIs.FAIRER,
        (Input.COUNTERFACTUAL_RUN,),
        _rbo_kernel,
        (P,),
        display="RBO",
    )
)
register(
    Measure(
        "crbo",
        "rbo",
        "CRBO@k = mean over queries of RBO@k(original list, counterfactual list)",
        "abolghasemi2024texfair §5(iii)",
        HigherIs.FAIRER,
        (Input.COUNTERFACTUAL_RUN,),
        _crbo_kernel,
        (P,),
        display="CRBO",
        level="system",
    )
)
