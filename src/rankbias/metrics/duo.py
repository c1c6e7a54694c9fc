r"""Duo: Discounted Uniformity of Opinions (Ziems et al., *Measuring and Addressing Indexical
Bias in Information Retrieval*, 2024: ``ziems2024indexical`` §4.2, Eq. 1, 2, 5, 6; App. A.2,
A.5).  Choices: the book's Conventions page, section "Duo".

Definition
----------
Each ranked document carries a *polarisation score* ``p_j`` (its projection on the first
principal axis of the query's document embeddings, see :func:`polarisation_scores`).  The
utility of the prefix of length ``i`` is the variance of its scores,

.. math::  u(i) = \frac{1}{i} \sum_{j \le i} (p_j - c)^2

with two centres, both available through ``variance=``:

- ``"prefix"`` (default): ``c`` = the mean of ``p_1..p_i`` (``numpy.var`` of the prefix, i.e. the
  population variance).  This is what the authors' released code computes
  (``batch[:, :k].var(axis=1)`` in ``src/metrics/duo.py`` of SALT-NLP/pair).
- ``"global"``: ``c`` = the mean of all ``n`` scores, as printed in the paper's Eq. 5.

The discounted cumulative variance sums the utilities at the cut points
``i ∈ {s, 2s, 3s, …}`` (step ``s``, default 1) with ``2 ≤ i < n``,

.. math::  \mathrm{DCV} = \sum_{i} u(i) / \log_2 i .

``i = 1`` never counts (``1/log2 1`` is undefined; for ``"prefix"`` ``u(1) = 0`` anyway, for
``"global"`` it is not).  ``i = n`` is excluded by default, as in the released code
(``range(step, n + int(count_full_ranking), step)``); ``include_full=True`` adds it when ``n`` is a
multiple of ``s``.  For ``"prefix"`` ``u(n)`` is the same for every ordering, so it shifts DCV
without changing Duo; for ``"global"`` it is also order-free (the mean of all squared deviations).

Duo is one minus the min–max normalised DCV over all orderings ``π`` of the same documents
(paper Eq. 2 and 6):

.. math::  \mathrm{Duo} = 1 - \frac{\mathrm{DCV} - \min_\pi \mathrm{DCV}}
                                  {\max_\pi \mathrm{DCV} - \min_\pi \mathrm{DCV}}

so 1 = the most biased order (low variance early), 0 = the most balanced order, and 0.5 when
every ordering gives the same DCV: the fraction is then 0/0, which the paper leaves undefined,
and 0.5 is the released code's convention.

Exact normalisation
-------------------
The released code enumerates all ``n!`` orderings for ``n ≤ 8`` and otherwise takes the min and
max over 40,320 random orderings (an estimate that can leave Duo outside ``[0, 1]``; replicated by
:func:`duo_sampled`).  Here the bounds are exact:

- ``"prefix"``: ``u(i)`` depends only on the *set* of the first ``i`` documents, so the best DCV of
  an ordering whose first ``|S|`` documents are the set ``S`` is
  ``best(S) = w(|S|) u(S) + max_{j ∈ S} best(S \ {j})`` with ``w(i) = 1/log2 i`` at cut points and
  0 elsewhere.  A dynamic programme over the ``2^n`` subsets, one popcount layer at a time and
  vectorised with NumPy, costs ``O(n 2^n)`` time and about ``17 · 2^n`` bytes (two float64 tables
  and a popcount table) plus the largest layer's temporaries.  Measured on one CPU core
  (``bench/duo_bench.py``): n = 16 in ~0.02 s, n = 20 in ~0.3–0.4 s, n = 22 in ~2.5 s, n = 24 in
  ~12 s with a peak of ~0.55 GB.  The limit is :data:`MAX_EXACT_N` (24).
- ``"global"``: ``u(i) = (1/i) Σ_{j≤i} q_j`` with ``q_j = (p_j − p̄)^2`` fixed per document, so
  ``DCV = Σ_j q_{π(j)} c_j`` with position weights ``c_j = Σ_{cut i ≥ j} w(i)/i``.  By the
  rearrangement inequality the maximum pairs the largest ``q`` with the largest ``c`` and the
  minimum pairs them oppositely: exact in ``O(n log n)`` for any ``n``.  The subset DP gives the
  same numbers (``algorithm="subset_dp"``) and the tests check both against brute force.

Signed Duo (App. A.2)
---------------------
``sgn(A) = +1`` if more than half of the scores in ``A`` are positive, else ``−1`` (the printed
formula ``2·1[…] + 1`` has a ``+1`` where ``−1`` is meant; the released ``Duo.sign`` uses ``−1``).
The paper signs each prefix utility, ``u⁺(i) = sgn({p_1..p_i}) u(i)``, and gives Duo the sign of
the result; as the released code meant it (``sign(Duo_raw_batch(batch, use_sign=True))``) the
direction of a ranking is ``sgn`` of the single number ``DCV⁺ = Σ_i sgn({p_1..p_i}) u(i)/log2 i``
over the same cut points, and :func:`signed_duo` returns that direction times :func:`duo`.
Because ``u(i)`` weights the signs, a prefix made only of one side (variance 0) contributes
nothing to the direction; the direction is carried by the mixed prefixes that follow it.
A prefix with exactly half positive scores counts as ``−1`` (as printed), so negating all scores
flips the direction only when no counted prefix is tied and no score is exactly 0.

The released SEME script (``src/experiments/seme_experiment.py``) instead multiplies the unsigned
Duo by the *orientation of the PCA axis*: ``+1`` if at least half of the perspective-1 documents
of the fit set project positively, else ``−1``.  That is a property of the axis, not of the order,
and is available as :func:`orientation_signed_duo`.  (In the released ``Duo_batch_`` the sign only
reaches the output in the degenerate ``max = min`` branch.)

Polarisation scores (§4.2, App. A.5) and accuracy (§5.1, Table 2)
-----------------------------------------------------------------
:func:`polarisation_scores` fits a one-component PCA (NumPy SVD of the centred fit set) and
projects the ranked documents: ``p_j = (x_j − μ_fit) · v``.  The sign of a principal axis is
arbitrary; here the loading with the largest absolute value is made positive (first such loading
on ties), the convention of scikit-learn's ``svd_flip(..., u_based_decision=False)``.
:func:`spurious_direction` is the unit difference of the mean embeddings of two distractor sets;
``remove_direction=b`` replaces every embedding (fit and ranked) by ``x − ⟨x, b̂⟩ b̂`` before the
PCA.  :func:`polarisation_accuracy` is the best of the two sign assignments of the scores to the
two perspective labels.
"""

from __future__ import annotations

import itertools
from collections.abc import Sequence
from typing import Literal

import numpy as np

__all__ = [
    "MAX_EXACT_N",
    "RELEASED_EXHAUSTIVE_MAX_N",
    "RELEASED_N_SAMPLES",
    "cut_points",
    "dcv",
    "dcv_bounds",
    "duo",
    "duo_direction",
    "duo_sampled",
    "extreme_orderings",
    "orientation_signed_duo",
    "polarisation_accuracy",
    "polarisation_scores",
    "signed_duo",
    "spurious_direction",
]

Variance = Literal["prefix", "global"]

#: Largest list length for the exact subset DP of the ``"prefix"`` variant.
MAX_EXACT_N = 24
#: The released code enumerates every ordering up to this many documents ...
RELEASED_EXHAUSTIVE_MAX_N = 8
#: ... and otherwise samples this many random orderings (8! = 40,320).
RELEASED_N_SAMPLES = 40_320

# Relative tolerance below which two DCV values are treated as equal (the floating-point
# round-off of these sums is several orders of magnitude smaller for lists of practical length).
_RELATIVE_TOLERANCE = 1e-12


# --------------------------------------------------------------------------------------------
# input checks and the discounted sum of one ordering
# --------------------------------------------------------------------------------------------


def _as_scores(scores, name: str = "scores") -> np.ndarray:
    array = np.asarray(scores, dtype=float)
    if array.ndim != 1:
        raise ValueError(f"{name}: expected a 1-D sequence of numbers, found shape {array.shape}")
    if array.size == 0:
        raise ValueError(f"{name}: expected at least one score, found an empty sequence")
    if not np.all(np.isfinite(array)):
        bad = np.flatnonzero(~np.isfinite(array)).tolist()
        raise ValueError(f"{name}: expected finite numbers, found NaN/inf at positions {bad}")
    return array


def _check_options(step: int, variance: str) -> None:
    if isinstance(step, bool) or not isinstance(step, int | np.integer) or step < 1:
        raise ValueError(f"step: expected a positive integer, found {step!r}")
    if variance not in ("prefix", "global"):
        raise ValueError(f"variance: expected 'prefix' or 'global', found {variance!r}")


def cut_points(n: int, *, step: int = 1, include_full: bool = False) -> np.ndarray:
    """The prefix lengths ``i`` that enter DCV for a list of ``n`` documents.

    ``i ∈ {step, 2·step, …}`` with ``2 ≤ i < n``, plus ``i = n`` when ``include_full`` and ``n``
    is a multiple of ``step`` (the released code's ``range(step, n + include_full, step)`` with
    ``k > 1``).
    """
    _check_options(step, "prefix")
    stop = n + 1 if include_full else n
    points = np.arange(step, stop, step, dtype=np.int64)
    return points[points >= 2]


def _cut_weights(n: int, step: int, include_full: bool) -> np.ndarray:
    """``w[i]`` for ``i = 0..n``: ``1/log2(i)`` at cut points, 0 elsewhere."""
    weights = np.zeros(n + 1)
    points = cut_points(n, step=step, include_full=include_full)
    weights[points] = 1.0 / np.log2(points)
    return weights


def _prefix_utilities(orderings: np.ndarray, variance: str, global_mean: float) -> np.ndarray:
    """``u(i)`` for ``i = 1..n`` of each row of ``orderings`` (shape ``(m, n)``)."""
    centred = orderings - global_mean
    lengths = np.arange(1, orderings.shape[1] + 1, dtype=float)
    if variance == "global":
        return np.cumsum(centred**2, axis=1) / lengths
    prefix_mean = np.cumsum(centred, axis=1) / lengths
    prefix_mean_sq = np.cumsum(centred**2, axis=1) / lengths
    return np.maximum(prefix_mean_sq - prefix_mean**2, 0.0)


def _dcv_rows(orderings: np.ndarray, weights: np.ndarray, variance: str, global_mean: float):
    utilities = _prefix_utilities(orderings, variance, global_mean)
    return utilities @ weights[1:]


def dcv(
    scores: Sequence[float],
    *,
    step: int = 1,
    variance: Variance = "prefix",
    include_full: bool = False,
) -> float:
    """Discounted cumulative variance of ``scores`` in the given (rank) order.

    ``DCV = Σ_i u(i) / log2(i)`` over the cut points of :func:`cut_points`; ``u(i)`` is the
    population variance of the first ``i`` scores around the prefix mean (``"prefix"``) or
    around the mean of all scores (``"global"``, paper Eq. 5).
    """
    _check_options(step, variance)
    array = _as_scores(scores)
    weights = _cut_weights(array.size, step, include_full)
    mean = float(array.mean())
    return float(_dcv_rows(array[None, :], weights, variance, mean)[0])


# --------------------------------------------------------------------------------------------
# exact bounds
# --------------------------------------------------------------------------------------------


def _popcounts(n: int) -> np.ndarray:
    masks = np.arange(1 << n, dtype=np.uint32)
    return np.bitwise_count(masks).astype(np.uint8)


def _subset_dp(
    array: np.ndarray,
    weights: np.ndarray,
    variance: str,
    record_choices: bool = False,
):
    """Min and max DCV over all orderings by DP over subsets (see the module docstring).

    Returns ``(min, max, choice_min, choice_max)``; the choice tables (the document placed last
    in the best ordering of each set) are ``None`` unless ``record_choices``.
    """
    n = array.size
    if n > MAX_EXACT_N:
        needed = 33 * (1 << n) / 2**30  # measured peak: ~0.55 GB at n = 24
        raise ValueError(
            f"exact Duo bounds with variance='prefix': expected at most {MAX_EXACT_N} scores, "
            f"found {n}; the subset DP would need about {needed:.1f} GiB and O(n·2^n) = "
            f"{n * (1 << n):.2e} steps.  Use variance='global' (exact for any n) or "
            f"duo_sampled() for an estimate."
        )
    mean = float(array.mean())
    centred = array - mean
    squared = centred**2
    size = 1 << n
    popcount = _popcounts(n)
    best_min = np.zeros(size)
    best_max = np.zeros(size)
    choice_min = np.zeros(size, dtype=np.uint8) if record_choices else None
    choice_max = np.zeros(size, dtype=np.uint8) if record_choices else None
    for layer in range(1, n + 1):
        masks = np.flatnonzero(popcount == layer)
        layer_min = np.full(masks.size, np.inf)
        layer_max = np.full(masks.size, -np.inf)
        set_sum = np.zeros(masks.size)
        set_sumsq = np.zeros(masks.size)
        arg_min = np.zeros(masks.size, dtype=np.uint8) if record_choices else None
        arg_max = np.zeros(masks.size, dtype=np.uint8) if record_choices else None
        for j in range(n):
            bit = 1 << j
            has = (masks & bit) != 0
            set_sum += has * centred[j]
            set_sumsq += has * squared[j]
            without = masks[has] ^ bit
            previous_min = best_min[without]
            previous_max = best_max[without]
            current_min = layer_min[has]
            current_max = layer_max[has]
            better_min = previous_min < current_min
            better_max = previous_max > current_max
            layer_min[has] = np.where(better_min, previous_min, current_min)
            layer_max[has] = np.where(better_max, previous_max, current_max)
            if record_choices:
                positions = np.flatnonzero(has)
                arg_min[positions[better_min]] = j
                arg_max[positions[better_max]] = j
        weight = weights[layer]
        if weight:
            if variance == "global":
                utility = set_sumsq / layer
            else:
                utility = np.maximum(set_sumsq / layer - (set_sum / layer) ** 2, 0.0)
            layer_min += weight * utility
            layer_max += weight * utility
        best_min[masks] = layer_min
        best_max[masks] = layer_max
        if record_choices:
            choice_min[masks] = arg_min
            choice_max[masks] = arg_max
    return float(best_min[size - 1]), float(best_max[size - 1]), choice_min, choice_max


def _position_weights(weights: np.ndarray) -> np.ndarray:
    """``c_j = Σ_{cut i ≥ j} w(i)/i`` for positions ``j = 1..n``."""
    n = weights.size - 1
    per_cut = weights[1:] / np.arange(1, n + 1)
    return np.cumsum(per_cut[::-1])[::-1]


def _rearrangement_orders(array: np.ndarray, weights: np.ndarray):
    """Orderings of min and max DCV for the ``"global"`` variant (rearrangement inequality)."""
    squared = (array - array.mean()) ** 2
    positions_by_weight = np.argsort(-_position_weights(weights), kind="stable")
    by_square_desc = np.argsort(-squared, kind="stable")
    by_square_asc = by_square_desc[::-1]
    order_max = np.empty(array.size, dtype=np.int64)
    order_min = np.empty(array.size, dtype=np.int64)
    order_max[positions_by_weight] = by_square_desc
    order_min[positions_by_weight] = by_square_asc
    return order_min, order_max


def _backtrack(choices: np.ndarray, n: int) -> np.ndarray:
    order = np.empty(n, dtype=np.int64)
    mask = (1 << n) - 1
    for position in range(n - 1, -1, -1):
        j = int(choices[mask])
        order[position] = j
        mask ^= 1 << j
    return order


def _resolve_algorithm(variance: str, algorithm: str) -> str:
    if algorithm not in ("auto", "subset_dp", "rearrangement"):
        raise ValueError(
            f"algorithm: expected 'auto', 'subset_dp' or 'rearrangement', found {algorithm!r}"
        )
    if algorithm == "rearrangement" and variance != "global":
        raise ValueError(
            "algorithm='rearrangement' is exact only for variance='global' (fixed per-document "
            f"contributions); found variance={variance!r}"
        )
    if algorithm == "auto":
        return "rearrangement" if variance == "global" else "subset_dp"
    return algorithm


def dcv_bounds(
    scores: Sequence[float],
    *,
    step: int = 1,
    variance: Variance = "prefix",
    include_full: bool = False,
    algorithm: Literal["auto", "subset_dp", "rearrangement"] = "auto",
) -> tuple[float, float]:
    """``(min, max)`` of :func:`dcv` over all orderings of ``scores``, computed exactly.

    ``"prefix"``: dynamic programme over the ``2^n`` subsets (``O(n·2^n)``; at most
    :data:`MAX_EXACT_N` scores).  ``"global"``: rearrangement inequality (``O(n log n)``, any
    ``n``); ``algorithm="subset_dp"`` forces the DP for it too.
    """
    _check_options(step, variance)
    array = _as_scores(scores)
    weights = _cut_weights(array.size, step, include_full)
    if _resolve_algorithm(variance, algorithm) == "rearrangement":
        order_min, order_max = _rearrangement_orders(array, weights)
        mean = float(array.mean())
        values = _dcv_rows(np.stack([array[order_min], array[order_max]]), weights, "global", mean)
        return float(values[0]), float(values[1])
    low, high, _, _ = _subset_dp(array, weights, variance)
    return low, high


def extreme_orderings(
    scores: Sequence[float],
    *,
    step: int = 1,
    variance: Variance = "prefix",
    include_full: bool = False,
) -> tuple[np.ndarray, np.ndarray]:
    """Index orderings ``(most_biased, most_balanced)`` of ``scores``.

    ``scores[most_biased]`` attains the minimum DCV (Duo = 1) and ``scores[most_balanced]`` the
    maximum DCV (Duo = 0) — the two orders the SEME study showed its participants.  Ties between
    equally good orderings are broken deterministically (lowest document index first found).
    """
    _check_options(step, variance)
    array = _as_scores(scores)
    weights = _cut_weights(array.size, step, include_full)
    if variance == "global":
        return _rearrangement_orders(array, weights)
    _, _, choice_min, choice_max = _subset_dp(array, weights, variance, record_choices=True)
    return _backtrack(choice_min, array.size), _backtrack(choice_max, array.size)


def _normalise(value: float, low: float, high: float) -> float:
    scale = max(abs(low), abs(high))
    if high - low <= _RELATIVE_TOLERANCE * scale:
        return 0.5
    tolerance = _RELATIVE_TOLERANCE * scale
    if value - low <= tolerance:
        return 1.0
    if high - value <= tolerance:
        return 0.0
    return float(min(1.0, max(0.0, 1.0 - (value - low) / (high - low))))


def duo(
    scores: Sequence[float],
    *,
    step: int = 1,
    variance: Variance = "prefix",
    include_full: bool = False,
) -> float:
    """Duo of ``scores`` (polarisation scores in rank order), exactly normalised.

    ``1 − (DCV − min DCV)/(max DCV − min DCV)`` over all orderings of the same scores;
    1 = most biased order, 0 = most balanced, 0.5 when every ordering has the same DCV (e.g.
    fewer than three documents with ``include_full=False``).  Values within a relative
    ``1e-12`` of a bound are reported as exactly 1 or 0 (round-off between the DP's and the
    direct sum's order of additions).
    """
    _check_options(step, variance)
    array = _as_scores(scores)
    low, high = dcv_bounds(array, step=step, variance=variance, include_full=include_full)
    value = dcv(array, step=step, variance=variance, include_full=include_full)
    return _normalise(value, low, high)


# --------------------------------------------------------------------------------------------
# the released (sampled) normalisation, for comparison
# --------------------------------------------------------------------------------------------


def _all_permutations(n: int) -> np.ndarray:
    return np.array(list(itertools.permutations(range(n))), dtype=np.int64).reshape(-1, n)


def duo_sampled(
    scores: Sequence[float],
    *,
    seed: int | np.random.Generator,
    n_samples: int = RELEASED_N_SAMPLES,
    exhaustive_max_n: int = RELEASED_EXHAUSTIVE_MAX_N,
    step: int = 1,
    variance: Variance = "prefix",
    include_full: bool = False,
) -> float:
    """Duo normalised the way the authors' released code does it (``Duo.update_Z``).

    For ``n ≤ exhaustive_max_n`` (8) every ordering is enumerated (``itertools.permutations``),
    so the value equals :func:`duo` up to round-off.  Above that, ``n_samples`` (40,320) random
    orderings, drawn independently with replacement, give the min and max; the ranking's own
    DCV may fall outside them, and then the value lies outside ``[0, 1]`` (not clipped, as in
    the released code).  0.5 when the sampled max equals the sampled min up to a relative
    ``1e-12`` (the released code compares exactly, so where every ordering has mathematically
    the same DCV its value is decided by round-off).  The random stream is
    ``numpy.random.default_rng(seed)``, not the released code's global ``np.random`` state, so
    individual draws differ while the procedure is the same.
    """
    _check_options(step, variance)
    array = _as_scores(scores)
    if n_samples < 1:
        raise ValueError(f"n_samples: expected a positive integer, found {n_samples!r}")
    n = array.size
    weights = _cut_weights(n, step, include_full)
    mean = float(array.mean())
    if n <= exhaustive_max_n:
        permutations = _all_permutations(n)
    else:
        rng = np.random.default_rng(seed)
        permutations = np.argsort(rng.random((n_samples, n)), axis=1)
    low, high = np.inf, -np.inf
    for start in range(0, permutations.shape[0], RELEASED_N_SAMPLES):
        block = array[permutations[start : start + RELEASED_N_SAMPLES]]
        values = _dcv_rows(block, weights, variance, mean)
        low, high = min(low, float(values.min())), max(high, float(values.max()))
    value = float(_dcv_rows(array[None, :], weights, variance, mean)[0])
    if high - low <= _RELATIVE_TOLERANCE * max(abs(high), abs(low)):
        return 0.5
    return 1.0 - (value - low) / (high - low)


# --------------------------------------------------------------------------------------------
# signed Duo
# --------------------------------------------------------------------------------------------


def _majority_sign(positive_count: np.ndarray, size: np.ndarray) -> np.ndarray:
    """App. A.2 ``sgn(A)``: +1 if more than half of ``A`` is positive, else −1."""
    return np.where(positive_count / size > 0.5, 1.0, -1.0)


def duo_direction(
    scores: Sequence[float],
    *,
    step: int = 1,
    variance: Variance = "prefix",
    include_full: bool = False,
) -> int:
    """Direction (+1 / −1) of a ranking's bias, App. A.2.

    ``sgn`` of ``DCV⁺ = Σ_i sgn({p_1..p_i}) u(i)/log2(i)`` over the cut points, with
    ``sgn(A) = +1`` iff more than half of ``A`` is positive; ``DCV⁺ ≤ 0`` gives −1 (the set
    ``{DCV⁺}`` has no positive majority).  See the module docstring for what this cannot see.
    """
    _check_options(step, variance)
    array = _as_scores(scores)
    n = array.size
    weights = _cut_weights(n, step, include_full)
    utilities = _prefix_utilities(array[None, :], variance, float(array.mean()))[0]
    positive_counts = np.cumsum(array > 0)
    signs = _majority_sign(positive_counts, np.arange(1, n + 1))
    signed_dcv = float(np.sum(signs * utilities * weights[1:]))
    return 1 if signed_dcv > 0 else -1


def signed_duo(
    scores: Sequence[float],
    *,
    step: int = 1,
    variance: Variance = "prefix",
    include_full: bool = False,
) -> float:
    """Signed Duo ``μ⁺ = direction · Duo`` (App. A.2): :func:`duo_direction` times :func:`duo`."""
    options = {"step": step, "variance": variance, "include_full": include_full}
    return duo_direction(scores, **options) * duo(scores, **options)


def orientation_signed_duo(
    scores: Sequence[float],
    perspective_one_scores: Sequence[float],
    *,
    step: int = 1,
    variance: Variance = "prefix",
    include_full: bool = False,
) -> float:
    """The released SEME script's signed Duo: unsigned Duo times the PCA axis orientation.

    ``perspective_one_scores`` are the scores, on the same axis, of the fit set's documents
    labelled perspective 1.  Orientation = −1 if fewer than half of them are positive, else +1
    (``seme_experiment.py``: ``sign = -1 if sum(gt)/len(gt) < 0.5``).  It says which end of the
    axis perspective 1 lies on, not which perspective the ranking favours; compare
    :func:`signed_duo`.
    """
    reference = _as_scores(perspective_one_scores, "perspective_one_scores")
    orientation = -1 if np.mean(reference > 0) < 0.5 else 1
    return orientation * duo(scores, step=step, variance=variance, include_full=include_full)


# --------------------------------------------------------------------------------------------
# polarisation scores
# --------------------------------------------------------------------------------------------


def _as_matrix(values, name: str) -> np.ndarray:
    matrix = np.asarray(values, dtype=float)
    if matrix.ndim != 2 or matrix.shape[0] == 0:
        raise ValueError(
            f"{name}: expected a 2-D array (documents × dimensions), found shape {matrix.shape}"
        )
    if not np.all(np.isfinite(matrix)):
        raise ValueError(f"{name}: expected finite numbers, found NaN or inf")
    return matrix


def spurious_direction(distractor_a, distractor_b) -> np.ndarray:
    """Unit axis of spurious correlation, App. A.5: ``b = mean(a) − mean(b)``, normalised.

    ``distractor_a`` / ``distractor_b`` are the embeddings (rows) of the distractor documents
    written in the style of perspective 1 / 2.  The released code L2-normalises each distractor
    embedding before averaging and does not normalise ``b`` (so its ``x − ⟨x,b⟩b`` is a
    projection only when ``|b| = 1``); pass normalised embeddings to follow the first habit.
    """
    first = _as_matrix(distractor_a, "distractor_a")
    second = _as_matrix(distractor_b, "distractor_b")
    if first.shape[1] != second.shape[1]:
        raise ValueError(
            f"distractor_a has {first.shape[1]} dimensions, distractor_b {second.shape[1]}; "
            "expected the same embedding space"
        )
    direction = first.mean(axis=0) - second.mean(axis=0)
    norm = float(np.linalg.norm(direction))
    if norm == 0.0:
        raise ValueError("distractor sets have identical mean embeddings: no spurious direction")
    return direction / norm


def _remove(matrix: np.ndarray, unit_direction: np.ndarray) -> np.ndarray:
    return matrix - np.outer(matrix @ unit_direction, unit_direction)


def polarisation_scores(embeddings, fit_embeddings=None, remove_direction=None) -> np.ndarray:
    """Polarisation scores of the ranked documents: projection on a 1-component PCA axis.

    ``embeddings``: ``(n, d)`` embeddings of the ranked documents, in rank order.
    ``fit_embeddings``: ``(m, d)`` embeddings the PCA is fitted on (the query's perspective
    documents); default: ``embeddings`` themselves.  ``remove_direction``: a ``(d,)`` vector
    (normalised here) whose component is removed from every embedding before the fit (App. A.5,
    see :func:`spurious_direction`).

    Returns ``p_j = (x_j − μ_fit) · v`` with ``v`` the first right singular vector of the centred
    fit set, signed so that its largest-magnitude loading is positive.
    """
    ranked = _as_matrix(embeddings, "embeddings")
    fit = ranked if fit_embeddings is None else _as_matrix(fit_embeddings, "fit_embeddings")
    if fit.shape[1] != ranked.shape[1]:
        raise ValueError(
            f"fit_embeddings have {fit.shape[1]} dimensions, embeddings {ranked.shape[1]}; "
            "expected the same embedding space"
        )
    if remove_direction is not None:
        direction = np.asarray(remove_direction, dtype=float).ravel()
        if direction.size != ranked.shape[1]:
            raise ValueError(
                f"remove_direction has {direction.size} dimensions, embeddings "
                f"{ranked.shape[1]}; expected the same"
            )
        norm = float(np.linalg.norm(direction))
        if norm == 0.0:
            raise ValueError("remove_direction is the zero vector; expected a direction")
        direction = direction / norm
        ranked = _remove(ranked, direction)
        fit = _remove(fit, direction)
    if fit.shape[0] < 2:
        raise ValueError(f"fit set: expected at least 2 documents for PCA, found {fit.shape[0]}")
    centre = fit.mean(axis=0)
    _, singular_values, right = np.linalg.svd(fit - centre, full_matrices=False)
    if singular_values[0] == 0.0:
        raise ValueError("fit set: all embeddings are identical, the principal axis is undefined")
    axis = right[0]
    if axis[np.argmax(np.abs(axis))] < 0:
        axis = -axis
    return (ranked - centre) @ axis


def polarisation_accuracy(
    scores: Sequence[float],
    labels: Sequence,
    *,
    method: Literal["best_sign", "per_group_majority"] = "best_sign",
) -> float:
    """Share of documents whose score sign matches their perspective label (Ziems et al. (2024),
    Table 2).

    ``labels``: one of at most two distinct values per document. ``"best_sign"`` (default; the
    book's Conventions page, section "Duo"): the better of "positive = first label, negative =
    second" and its swap; a score of exactly 0 is right under neither.
    ``"per_group_majority"``: the released ``metric_validation.py`` — each label group counts
    ``max(#positive, #negative)`` separately, so both groups may claim the same side; it is never
    below ``"best_sign"``.
    """
    values = _as_scores(scores)
    label_array = np.asarray(labels)
    if label_array.shape != values.shape:
        raise ValueError(
            f"labels: expected one label per score ({values.size}), found shape {label_array.shape}"
        )
    classes = np.unique(label_array)
    if classes.size > 2:
        raise ValueError(
            f"labels: expected at most two perspectives, found {classes.size}: {classes.tolist()}"
        )
    positive, negative = values > 0, values < 0
    if method == "per_group_majority":
        hits = sum(
            max(int(np.sum(positive[label_array == c])), int(np.sum(negative[label_array == c])))
            for c in classes
        )
        return hits / values.size
    if method != "best_sign":
        raise ValueError(f"method: expected 'best_sign' or 'per_group_majority', found {method!r}")
    first = label_array == classes[0]
    second = ~first
    assignment = np.sum(positive & first) + np.sum(negative & second)
    swapped = np.sum(negative & first) + np.sum(positive & second)
    return float(max(assignment, swapped)) / values.size


# ---- measure declarations (rankbias.metrics.measures) -------------------------------------------

from rankbias.metrics.measures import HigherIs, Input, Measure, Parameter, register  # noqa: E402

VARIANCE = Parameter(
    "variance",
    "str",
    "prefix",
    "centre of the prefix variance: the prefix's own mean (released code) or the mean of all "
    "scores (Ziems et al. 2024 Eq. 5)",
    allowed=("prefix", "global"),
)
STEP = Parameter("step", "int", 1, "distance s between cut points i = s, 2s, …", minimum=1)
INCLUDE_FULL = Parameter("include_full", "bool", False, "count the cut point i = n too")
_DUO_PARAMETERS = (VARIANCE, STEP, INCLUDE_FULL)


def _per_list_kernel(function):
    """Apply ``function(scores of the top k')`` to every query and cut-off."""

    def kernel(inputs, cutoffs, variance="prefix", step=1, include_full=False):
        scores, lengths = inputs.polarisation()
        out = np.full((len(lengths), len(cutoffs)), np.nan)
        for i, length in enumerate(lengths):
            for j, k in enumerate(cutoffs):
                depth = min(int(k), int(length))
                if depth:
                    out[i, j] = function(
                        scores[i, :depth], step=step, variance=variance, include_full=include_full
                    )
        return out

    return kernel


register(
    Measure(
        "duo",
        "duo",
        "Duo@k = 1 − (DCV − min_π DCV)/(max_π DCV − min_π DCV), DCV = Σ_i u(i)/log2 i over the "
        "top k's polarisation scores; exact bounds; 0.5 when max = min (0/0, undefined in the "
        "paper; the released code's convention)",
        "ziems2024indexical Eq. 2, 5, 6",
        HigherIs.MORE_BIASED,
        (Input.POLARISATION,),
        _per_list_kernel(duo),
        _DUO_PARAMETERS,
        display="Duo",
    )
)
register(
    Measure(
        "signed_duo",
        "duo",
        "direction · Duo@k, direction = sgn(Σ_i sgn({p_1..p_i}) u(i)/log2 i) "
        "(+1: the top k leans to the positive end of the axis)",
        "ziems2024indexical App. A.2",
        HigherIs.SIGNED,
        (Input.POLARISATION,),
        _per_list_kernel(signed_duo),
        _DUO_PARAMETERS,
        display="signed Duo",
    )
)
