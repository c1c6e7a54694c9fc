r"""rND and rKL: normalised discounted group-fairness measures of a ranking (Yang & Stoyanovich,
*Measuring Fairness in Ranked Outputs*, SSDBM 2017, ``yang2017measuring``, who divide by the
maximum; restated with a min–max normaliser in Ziems et al. (2024), Eq. 1–4).

``protected`` marks, in rank order, which of the ``N`` items are protected (in Ziems et al.
(2024): the documents of one perspective), ``P`` of them.  At the cut points ``i ∈ {s, 2s, …},
i ≤ N`` (Yang & Stoyanovich use ``s = 10``, the Pair code ``s = 1``), with ``P_i`` the protected
share of the top ``i`` and ``P_N = P/N``, the utility is ``|P_i − P_N|`` for rND (Ziems et al.
(2024) Eq. 3 lacks the absolute value bars of the original and the released code) and
``KL((P_i, 1−P_i) ‖ (P_N, 1−P_N)) = P_i log2(P_i/P_N) + (1−P_i) log2((1−P_i)/(1−P_N))`` for rKL
(Ziems et al. (2024) Eq. 4, whose second term is wrong as printed: ``−(1 − P_i log(…))``
where ``−(1 − P_i) log(…)`` is meant), ``0 · log 0 = 0``;
``kl_smoothing="fairrank"`` replaces a share of exactly 0 *or 1* by 0.001 as FairRank's
``calculaterKL`` (used by Pair) does.

The raw value ``Σ_i u(i) · d(i)`` is normalised over all orderings with the same ``N`` and ``P``
(the book's Conventions page, section "rND and rKL: normalisation"): ``"max"`` (default; Yang &
Stoyanovich's normaliser ``Z`` and code) gives ``raw / Z``, 1 = the most unfair ordering, 0 only
when every cut point's share equals ``P_N``, so **0 does not mean "the fairest ordering"** (of 3
items with 1 protected, the fairest scores ``0.568`` in rND and ``0.390`` in rKL); ``"min_max"``
gives ``(raw − min) / (max − min)`` (Ziems et al. (2024) Eq. 2, applied in Eq. 3–4), 0 = a
fairest ordering, NaN when every ordering has the same raw value.  Both are exact: the raw value
depends only on the lattice path of prefix protected counts from ``(0, 0)`` to ``(N, P)``, whose
longest and shortest paths a DP finds in ``O(N · P)``.  Ziems et al. (2024) do not say how ``Z``
is obtained.  FairRank (and Pair, a modified copy) reads it from ``normalizer.txt`` or else calls
``calculateNormalizer``, which generates random "unfair" rankings with fairness probability 0
and with 0.98, takes the mean raw value of each batch (10 rankings per batch in FairRank, 20 in
Pair) and returns the larger of the two means: an estimate never above the true maximum.
``P = 0`` or ``P = N``: NaN.

Discount: the paper's ``1/log2 i`` is undefined at ``i = 1``; the default ``log2(i+1)`` is
FairRank ``calculateNDFairness``'s and the book's position discount; ``discount="log2(i)"``
skips ``i = 1`` (as Duo).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Literal

import numpy as np

from rankbias.errors import expect_choice, expect_count

__all__ = ["rkl", "rkl_raw", "rnd", "rnd_raw"]

Discount = Literal["log2(i+1)", "log2(i)"]
Smoothing = Literal["none", "fairrank"]
Normalisation = Literal["max", "min_max"]

_FAIRRANK_EPSILON = 0.001


def _as_protected(protected) -> np.ndarray:
    array = np.asarray(protected)
    if array.ndim != 1 or array.size == 0:
        raise ValueError(
            f"protected: expected a non-empty 1-D sequence of booleans, found shape {array.shape}"
        )
    if array.dtype != bool:
        if not np.all(np.isin(array, (0, 1))):
            found = sorted({repr(v) for v in array.tolist()} - {"0", "1", "True", "False"})
            raise ValueError(f"protected: expected booleans (or 0/1), found {found[:5]}")
        array = array.astype(bool)
    return array


def _check(step: int, discount: str) -> None:
    expect_count(step, "step")
    expect_choice(discount, "discount", ("log2(i+1)", "log2(i)"))


def _cut_discounts(n_items: int, step: int, discount: str) -> np.ndarray:
    """``d[i]`` for ``i = 0..N``: the discount at cut points, 0 elsewhere."""
    weights = np.zeros(n_items + 1)
    points = np.arange(step, n_items + 1, step)
    if discount == "log2(i)":
        points = points[points >= 2]
        weights[points] = 1.0 / np.log2(points)
    else:
        weights[points] = 1.0 / np.log2(points + 1.0)
    return weights


def _nd(share, overall, smoothing):
    """rND's ``u`` of the protected share ``P_i`` at a cut point and overall ``P_N``."""
    return np.abs(share - overall)


def _kl(share, overall, smoothing):
    """rKL's ``u``: ``KL(P_i ‖ P_N)`` in bits, FairRank's smoothing optional (arrays broadcast)."""
    if smoothing == "fairrank":
        share = np.where((share == 0) | (share == 1), _FAIRRANK_EPSILON, share)
        if overall in (0.0, 1.0):
            overall = _FAIRRANK_EPSILON
    with np.errstate(divide="ignore", invalid="ignore"):
        first = np.where(share > 0, share * np.log2(share / overall), 0.0)
        second = np.where(share < 1, (1 - share) * np.log2((1 - share) / (1 - overall)), 0.0)
    return first + second


def _raw(u, protected, step, discount, smoothing) -> float:
    expect_choice(smoothing, "kl_smoothing", ("none", "fairrank"))
    flags = _as_protected(protected)
    _check(step, discount)
    n_items, n_protected = flags.size, int(flags.sum())
    shares = np.cumsum(flags) / np.arange(1, n_items + 1)
    utilities = u(shares, n_protected / n_items, smoothing)
    return float(np.sum(utilities * _cut_discounts(n_items, step, discount)[1:]))


def _extreme(u, n_items, n_protected, step, discount, smoothing, largest: bool) -> float:
    """The raw value of the most unfair (``largest``) or the fairest ordering of ``n_items >= 1``
    with ``0 <= n_protected <= n_items``: the longest or shortest path through the lattice of
    prefix counts."""
    expect_choice(smoothing, "kl_smoothing", ("none", "fairrank"))
    _check(step, discount)
    if n_protected in (0, n_items) and smoothing == "none":
        return 0.0
    pick, worst = (np.maximum, -np.inf) if largest else (np.minimum, np.inf)
    weights = _cut_discounts(n_items, step, discount)
    counts = np.arange(n_protected + 1)
    # best[c] = the best raw sum over prefixes of the current length with c protected items
    best = np.full(n_protected + 1, worst)
    best[0] = 0.0
    for length in range(1, n_items + 1):
        extended = best.copy()
        extended[1:] = pick(best[1:], best[:-1])
        # feasible counts: at most `length` protected, at least length − (N − P)
        feasible = (counts <= length) & (length - counts <= n_items - n_protected)
        extended[~feasible] = worst
        if weights[length]:
            utility = u(counts / length, n_protected / n_items, smoothing)
            extended = np.where(feasible, extended + weights[length] * utility, worst)
        best = extended
    return float(best[n_protected])


def rnd_raw(protected: Sequence[bool], *, step: int = 1, discount: Discount = "log2(i+1)") -> float:
    """Unnormalised rND: ``Σ_{cut i} |P_i − P_N| · discount(i)``."""
    return _raw(_nd, protected, step, discount, "none")


def rkl_raw(
    protected: Sequence[bool],
    *,
    step: int = 1,
    discount: Discount = "log2(i+1)",
    kl_smoothing: Smoothing = "none",
) -> float:
    """Unnormalised rKL: ``Σ_{cut i} KL(P_i ‖ P_N) · discount(i)`` (log base 2)."""
    return _raw(_kl, protected, step, discount, kl_smoothing)


def _normalised(u, protected, step, discount, smoothing, normalisation) -> float:
    """The raw value over its exact maximum (``"max"``) or ``(raw − min) / (max − min)``
    (``"min_max"``, NaN when every ordering scores alike); NaN when ``P`` is 0 or ``N``.  Within
    a relative 1e-12 of a bound (round-off between the DP's and the direct sum's order of
    additions) the value is reported as exactly 0 or 1."""
    expect_choice(normalisation, "normalisation", ("max", "min_max"))
    flags = _as_protected(protected)
    n_items, n_protected = flags.size, int(flags.sum())
    high = _extreme(u, n_items, n_protected, step, discount, smoothing, True)
    if n_protected in (0, n_items):
        return float("nan")
    raw = _raw(u, flags, step, discount, smoothing)
    if normalisation == "max":
        if high <= 0.0:
            return float("nan")
        if abs(high - raw) <= 1e-12 * high:
            return 1.0
        return min(raw / high, 1.0)
    low = _extreme(u, n_items, n_protected, step, discount, smoothing, False)
    scale = max(abs(low), abs(high))
    if high - low <= 1e-12 * scale or high <= low:
        return float("nan")
    if raw - low <= 1e-12 * scale:
        return 0.0
    if high - raw <= 1e-12 * scale:
        return 1.0
    return float(min(1.0, max(0.0, (raw - low) / (high - low))))


def rnd(
    protected: Sequence[bool],
    *,
    step: int = 1,
    discount: Discount = "log2(i+1)",
    normalisation: Normalisation = "max",
) -> float:
    """rND of ``protected`` (booleans in rank order), normalised over all orderings: 1 = the
    most unfair; ``"max"``: :func:`rnd_raw` over its exact maximum (the fairest ordering scores
    0 only if it matches ``P_N`` at every cut point), ``"min_max"``: 0 = the fairest.  NaN when
    all or none of the items are protected, and for ``"min_max"`` when all orderings tie."""
    return _normalised(_nd, protected, step, discount, "none", normalisation)


def rkl(
    protected: Sequence[bool],
    *,
    step: int = 1,
    discount: Discount = "log2(i+1)",
    kl_smoothing: Smoothing = "none",
    normalisation: Normalisation = "max",
) -> float:
    """rKL of ``protected`` (booleans in rank order), normalised over all orderings as for
    :func:`rnd` (1 = the most unfair); NaN in the same cases."""
    return _normalised(_kl, protected, step, discount, kl_smoothing, normalisation)


# ---- measure declarations (rankbias.metrics.measures) -------------------------------------------

from rankbias.metrics.measures import HigherIs, Input, Measure, Parameter, register  # noqa: E402
from rankbias.metrics.ranked import per_list_kernel  # noqa: E402

STEP = Parameter("step", "int", 1, "distance s between cut points i = s, 2s, …", minimum=1)
DISCOUNT = Parameter(
    "discount",
    "str",
    "log2(i+1)",
    "cut-point discount: 1/log2(i+1) (FairRank code) or 1/log2(i) (Yang & Stoyanovich 2017, "
    "skips i = 1)",
    allowed=("log2(i+1)", "log2(i)"),
)
NORMALISATION = Parameter(
    "normalisation",
    "str",
    "max",
    "normaliser over all orderings: raw / max (Yang & Stoyanovich 2017, FairRank), or "
    "(raw − min) / (max − min) (Ziems et al. 2024 Eq. 2)",
    allowed=("max", "min_max"),
)
KL_SMOOTHING = Parameter(
    "kl_smoothing",
    "str",
    "none",
    "rKL: 0·log 0 = 0, or FairRank's replacement of shares 0 and 1 by 0.001",
    allowed=("none", "fairrank"),
)


UNDEFINED = (
    "NaN when the top k holds one group only (no protected document, or nothing else): every "
    "ordering is alike; a deeper list, e.g. {name}(step=10)@20, is defined on more queries"
)

register(
    Measure(
        "rnd",
        "rank_fairness",
        "rND@k = Σ_{cut i} |P_i − P_N| d(i), normalised over all orderings of the top k "
        "(by the maximum, or min–max)",
        "yang2017measuring (rND, divided by the maximum); ziems2024indexical Eq. 1–3 (min–max: "
        "Eq. 2)",
        HigherIs.MORE_BIASED,
        (Input.GROUP_MEMBERSHIP,),
        per_list_kernel("membership", rnd),
        (STEP, DISCOUNT, NORMALISATION),
        display="rND",
        undefined=UNDEFINED.format(name="rnd"),
    )
)
register(
    Measure(
        "rkl",
        "rank_fairness",
        "rKL@k = Σ_{cut i} KL((P_i, 1−P_i) ‖ (P_N, 1−P_N)) d(i), normalised over all orderings "
        "of the top k (by the maximum, or min–max)",
        "yang2017measuring (rKL, divided by the maximum); ziems2024indexical Eq. 1, 2, 4 "
        "(min–max: Eq. 2)",
        HigherIs.MORE_BIASED,
        (Input.GROUP_MEMBERSHIP,),
        per_list_kernel("membership", rkl),
        (STEP, DISCOUNT, NORMALISATION, KL_SMOOTHING),
        display="rKL",
        undefined=UNDEFINED.format(name="rkl"),
    )
)
