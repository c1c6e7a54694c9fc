r"""Duo: Discounted Uniformity of Opinions (Ziems et al., *Measuring and Addressing Indexical
Bias in Information Retrieval*, 2024: ``ziems2024indexical`` §4.2, Eq. 1, 2, 5, 6; App. A.2,
A.5).  Choices: the book's Conventions page, section "Duo".

Each ranked document has a polarisation score ``p_j``.  The utility of the prefix of length
``i`` is ``u(i) = (1/i) Σ_{j≤i} (p_j − c)²``, ``c`` the prefix's own mean (``variance="prefix"``,
default: ``numpy.var`` of the prefix, as ``batch[:, :k].var(axis=1)`` in the released
``src/metrics/duo.py`` of SALT-NLP/pair) or the mean of all ``n`` scores (``"global"``, Eq. 5).
``DCV = Σ_i u(i) / log2 i`` over the cut points ``i ∈ {s, 2s, …}``, ``2 ≤ i < n``
(:func:`cut_points`), and Duo is one minus the min–max normalised DCV over all orderings ``π``
(Eq. 2 and 6):

.. math::  \mathrm{Duo} = 1 - \frac{\mathrm{DCV} - \min_\pi \mathrm{DCV}}
                                  {\max_\pi \mathrm{DCV} - \min_\pi \mathrm{DCV}}

1 = the most biased order (low variance early), 0 = the most balanced; 0.5 when every ordering
gives the same DCV (0/0, undefined in the paper; the released code's convention).

The bounds are exact (the released code enumerates all ``n!`` orderings for ``n ≤ 8``, else
samples 40,320: :func:`duo_sampled`).  ``"prefix"``: ``u(i)`` depends only on the *set* of the
first ``i`` documents, so ``best(S) = w(|S|) u(S) + max_{j ∈ S} best(S \ {j})`` (``w(i) =
1/log2 i`` at cut points, else 0) is a DP over the ``2^n`` subsets, ``O(n 2^n)`` time, about
``17 · 2^n`` bytes (``bench/duo_bench.py``, one core: n = 20 ~0.3–0.4 s, n = 24 ~12 s and ~0.55
GB, the limit :data:`MAX_EXACT_N`).  ``"global"``: ``DCV = Σ_j q_{π(j)} c_j`` with ``q_j = (p_j
− p̄)²`` and ``c_j = Σ_{cut i ≥ j} w(i)/i``: the rearrangement inequality gives both extremes.

Signed Duo (App. A.2): ``sgn(A) = +1`` if more than half of ``A`` is positive, else ``−1`` (the
printed ``2·1[…] + 1`` has ``+1`` where ``−1`` is meant).  The direction is the sign of the raw
signed sum, ``sgn(Σ_i sgn({p_1..p_i}) u(i)/log2 i)`` (the released ``Duo_batch_`` computes that
sum but applies its sign only when max = min or under its Z-score normaliser, and otherwise
returns the unsigned Duo): one-sided prefixes (variance 0) count for nothing and a tied prefix
counts ``−1``, so negating all scores flips it only when no counted prefix is tied and no
score is 0.  The released SEME script instead multiplies Duo by the PCA
axis orientation (:func:`orientation_signed_duo`).

Polarisation scores (§4.2, App. A.5) and accuracy (§5.1, Table 2): a one-component PCA (NumPy
SVD of the centred fit set), its axis signed as scikit-learn's
``svd_flip(..., u_based_decision=False)``.
"""

from __future__ import annotations

import itertools
from collections.abc import Sequence
from typing import Literal

import numpy as np

from rankbias.errors import expect_choice, expect_count, expect_flag, expect_seed
from rankbias.metrics.validation import as_array

__all__ = [
    "MAX_EXACT_N", "RELEASED_EXHAUSTIVE_MAX_N", "RELEASED_N_SAMPLES", "cut_points", "dcv",
    "dcv_bounds", "duo", "duo_direction", "duo_sampled", "extreme_orderings",
    "orientation_signed_duo", "polarisation_accuracy", "polarisation_scores", "signed_duo",
    "spurious_direction",
]  # fmt: skip

Variance = Literal["prefix", "global"]

#: Largest list length for the exact subset DP of the ``"prefix"`` variant.
MAX_EXACT_N = 24
#: The released code enumerates every ordering up to this many documents ...
RELEASED_EXHAUSTIVE_MAX_N = 8
#: ... and otherwise samples this many random orderings (8! = 40,320).
RELEASED_N_SAMPLES = 40_320

# Two DCV values closer than this (relative) are equal; the round-off of these sums is far smaller.
_RELATIVE_TOLERANCE = 1e-12


def _as_scores(scores, name: str = "scores") -> np.ndarray:
    array = as_array(scores, name)
    if array.ndim != 1:
        raise ValueError(f"{name}: expected a 1-D sequence of numbers, found shape {array.shape}")
    if array.size == 0:
        raise ValueError(f"{name}: expected at least one score, found an empty sequence")
    if not np.all(np.isfinite(array)):
        bad = np.flatnonzero(~np.isfinite(array)).tolist()
        raise ValueError(f"{name}: expected finite numbers, found NaN/inf at positions {bad}")
    return array


def _check_options(step: int, variance: str, include_full: bool) -> None:
    expect_count(step, "step")
    expect_choice(variance, "variance", ("prefix", "global"))
    expect_flag(include_full, "include_full")


def _prepared(scores, step: int, variance: str, include_full: bool):
    """The checked scores and their cut weights ``w[i]``, ``i = 0..n`` (0 off the cut points)."""
    _check_options(step, variance, include_full)
    array = _as_scores(scores)
    weights = np.zeros(array.size + 1)
    points = cut_points(array.size, step=step, include_full=include_full)
    weights[points] = 1.0 / np.log2(points)
    return array, weights


def cut_points(n: int, *, step: int = 1, include_full: bool = False) -> np.ndarray:
    """The prefix lengths ``i ∈ {step, 2·step, …}``, ``2 ≤ i < n`` (``≤ n`` with
    ``include_full``) that enter DCV: the released ``range(step, n + include_full, step)``."""
    _check_options(step, "prefix", include_full)
    n = expect_count(n, "n", 0)
    points = np.arange(step, n + 1 if include_full else n, step, dtype=np.int64)
    return points[points >= 2]


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
    return _prefix_utilities(orderings, variance, global_mean) @ weights[1:]


def dcv(
    scores: Sequence[float],
    *,
    step: int = 1,
    variance: Variance = "prefix",
    include_full: bool = False,
) -> float:
    """Discounted cumulative variance ``Σ_i u(i) / log2(i)`` of ``scores`` in the given (rank)
    order, over the cut points of :func:`cut_points`; ``u(i)`` is the population variance of the
    first ``i`` scores around the prefix mean (``"prefix"``) or the mean of all scores
    (``"global"``, paper Eq. 5)."""
    array, weights = _prepared(scores, step, variance, include_full)
    return float(_dcv_rows(array[None, :], weights, variance, float(array.mean()))[0])


def _subset_dp(array: np.ndarray, weights: np.ndarray, variance: str, *, record_choices: bool):
    """``(min, max, choice_min, choice_max)`` of DCV by DP over subsets; the choice tables (the
    document placed last in the best ordering of each set) only with ``record_choices``."""
    n = array.size
    if n > MAX_EXACT_N:
        needed = 33 * (1 << n) / 2**30  # measured peak: ~0.55 GB at n = 24
        raise ValueError(
            f"exact Duo bounds with variance='prefix': expected at most {MAX_EXACT_N} scores, "
            f"found {n}; the subset DP would need about {needed:.1f} GiB and O(n·2^n) = "
            f"{n * (1 << n):.2e} steps.  Use variance='global' (exact for any n) or "
            f"duo_sampled() for an estimate."
        )
    centred = array - float(array.mean())
    squared = centred**2
    size = 1 << n
    popcount = np.bitwise_count(np.arange(size, dtype=np.uint32)).astype(np.uint8)
    sides = ((np.less, np.inf), (np.greater, -np.inf))  # the minimum, then the maximum
    best = [np.zeros(size), np.zeros(size)]
    choices = [np.zeros(size, dtype=np.uint8) for _ in sides] if record_choices else [None, None]
    for layer in range(1, n + 1):
        masks = np.flatnonzero(popcount == layer)
        layer_best = [np.full(masks.size, start) for _, start in sides]
        layer_choices = [np.zeros(masks.size, dtype=np.uint8) for _ in sides]
        set_sum = np.zeros(masks.size)
        set_sumsq = np.zeros(masks.size)
        for j in range(n):
            bit = 1 << j
            has = (masks & bit) != 0
            set_sum += has * centred[j]
            set_sumsq += has * squared[j]
            without = masks[has] ^ bit
            positions = np.flatnonzero(has) if record_choices else None
            for side, (better_than, _) in enumerate(sides):
                previous, current = best[side][without], layer_best[side][has]
                better = better_than(previous, current)
                layer_best[side][has] = np.where(better, previous, current)
                if record_choices:
                    layer_choices[side][positions[better]] = j
        weight = weights[layer]
        if variance == "global":
            utility = set_sumsq / layer
        else:
            utility = np.maximum(set_sumsq / layer - (set_sum / layer) ** 2, 0.0)
        for side in (0, 1):
            if weight:
                layer_best[side] += weight * utility
            best[side][masks] = layer_best[side]
            if record_choices:
                choices[side][masks] = layer_choices[side]
    return float(best[0][size - 1]), float(best[1][size - 1]), choices[0], choices[1]


def _rearrangement_orders(array: np.ndarray):
    """Orderings of min and max DCV for the ``"global"`` variant: ``c_j`` never increases with
    ``j`` (a tail sum of non-negative terms), so the rearrangement inequality puts the largest
    ``q_j`` first for the max and last for the min (ties in ``q`` by document index)."""
    by_square_desc = np.argsort(-((array - array.mean()) ** 2), kind="stable")
    return by_square_desc[::-1].copy(), by_square_desc


def _backtrack(choices: np.ndarray, n: int) -> np.ndarray:
    order = np.empty(n, dtype=np.int64)
    mask = (1 << n) - 1
    for position in range(n - 1, -1, -1):
        j = int(choices[mask])
        order[position] = j
        mask ^= 1 << j
    return order


def dcv_bounds(
    scores: Sequence[float],
    *,
    step: int = 1,
    variance: Variance = "prefix",
    include_full: bool = False,
    algorithm: Literal["auto", "subset_dp", "rearrangement"] = "auto",
) -> tuple[float, float]:
    """``(min, max)`` of :func:`dcv` over all orderings of ``scores``, exactly: a DP over subsets
    for ``"prefix"`` (at most :data:`MAX_EXACT_N` scores), the rearrangement inequality for
    ``"global"`` (any ``n``; ``algorithm="subset_dp"`` forces the DP for it too)."""
    array, weights = _prepared(scores, step, variance, include_full)
    expect_choice(algorithm, "algorithm", ("auto", "subset_dp", "rearrangement"))
    if algorithm == "rearrangement" and variance != "global":
        raise ValueError(
            "algorithm='rearrangement' is exact only for variance='global' (fixed per-document "
            f"contributions); found variance={variance!r}"
        )
    if algorithm == "rearrangement" or (algorithm == "auto" and variance == "global"):
        order_min, order_max = _rearrangement_orders(array)
        mean = float(array.mean())
        values = _dcv_rows(np.stack([array[order_min], array[order_max]]), weights, "global", mean)
        return float(values[0]), float(values[1])
    low, high, _, _ = _subset_dp(array, weights, variance, record_choices=False)
    return low, high


def extreme_orderings(
    scores: Sequence[float],
    *,
    step: int = 1,
    variance: Variance = "prefix",
    include_full: bool = False,
) -> tuple[np.ndarray, np.ndarray]:
    """Index orderings ``(most_biased, most_balanced)`` of ``scores``: minimum DCV (Duo = 1) and
    maximum DCV (Duo = 0), the two orders the SEME study showed its participants; ties are
    broken deterministically (lowest document index first found)."""
    array, weights = _prepared(scores, step, variance, include_full)
    if variance == "global":
        return _rearrangement_orders(array)
    _, _, choice_min, choice_max = _subset_dp(array, weights, variance, record_choices=True)
    return _backtrack(choice_min, array.size), _backtrack(choice_max, array.size)


def duo(
    scores: Sequence[float],
    *,
    step: int = 1,
    variance: Variance = "prefix",
    include_full: bool = False,
) -> float:
    """Duo of ``scores`` (polarisation scores in rank order), exactly normalised over all
    orderings: 1 = most biased, 0 = most balanced, 0.5 when every ordering has the same DCV
    (e.g. fewer than three documents without ``include_full``).  Within a relative ``1e-12`` of
    a bound (round-off between the DP's and the direct sum's additions): exactly 1 or 0."""
    options = {"step": step, "variance": variance, "include_full": include_full}
    low, high = dcv_bounds(scores, **options)
    value = dcv(scores, **options)
    tolerance = _RELATIVE_TOLERANCE * max(abs(low), abs(high))
    if high - low <= tolerance:
        return 0.5
    if value - low <= tolerance:
        return 1.0
    if high - value <= tolerance:
        return 0.0
    return float(min(1.0, max(0.0, 1.0 - (value - low) / (high - low))))


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
    """Duo normalised as the authors' released code does it (``Duo.update_Z``).

    Every ordering for ``n ≤ exhaustive_max_n`` (equal to :func:`duo` up to round-off), else
    the min and max of ``n_samples`` random orderings drawn with replacement: the value may lie
    outside ``[0, 1]`` (not clipped, as released).  0.5 when the sampled max equals the min up
    to a relative ``1e-12`` (the released code compares exactly).  Draws come from
    ``numpy.random.default_rng(seed)``, not the released global ``np.random`` state.
    """
    array, weights = _prepared(scores, step, variance, include_full)
    n_samples = expect_count(n_samples, "n_samples")
    exhaustive_max_n = expect_count(exhaustive_max_n, "exhaustive_max_n", 0)
    rng = expect_seed(seed)
    n = array.size
    mean = float(array.mean())
    if n <= exhaustive_max_n:
        permutations = np.array(list(itertools.permutations(range(n))))
    else:
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


def duo_direction(
    scores: Sequence[float],
    *,
    step: int = 1,
    variance: Variance = "prefix",
    include_full: bool = False,
) -> int:
    """Direction (+1 / −1) of a ranking's bias, App. A.2: ``sgn`` of
    ``DCV⁺ = Σ_i sgn({p_1..p_i}) u(i)/log2(i)`` over the cut points, ``sgn(A) = +1`` iff more
    than half of ``A`` is positive; ``DCV⁺ ≤ 0`` gives −1 (see the module docstring)."""
    array, weights = _prepared(scores, step, variance, include_full)
    utilities = _prefix_utilities(array[None, :], variance, float(array.mean()))[0]
    share_positive = np.cumsum(array > 0) / np.arange(1, array.size + 1)
    signs = np.where(share_positive > 0.5, 1.0, -1.0)  # App. A.2 sgn of each prefix
    return 1 if float(np.sum(signs * utilities * weights[1:])) > 0 else -1


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
    """The released SEME script's signed Duo: unsigned Duo times the PCA axis orientation, −1
    if fewer than half of ``perspective_one_scores`` (the fit set's perspective-1 documents on
    the same axis) are positive, else +1 (``seme_experiment.py``:
    ``sign = -1 if sum(gt)/len(gt) < 0.5``): where perspective 1 lies, not which perspective the
    ranking favours (compare :func:`signed_duo`)."""
    reference = _as_scores(perspective_one_scores, "perspective_one_scores")
    orientation = -1 if np.mean(reference > 0) < 0.5 else 1
    return orientation * duo(scores, step=step, variance=variance, include_full=include_full)


def _as_matrix(values, name: str) -> np.ndarray:
    matrix = as_array(values, name)
    if matrix.ndim != 2 or matrix.shape[0] == 0:
        raise ValueError(
            f"{name}: expected a 2-D array (documents × dimensions), found shape {matrix.shape}"
        )
    if not np.all(np.isfinite(matrix)):
        raise ValueError(f"{name}: expected finite numbers, found NaN or inf")
    return matrix


def spurious_direction(distractor_a, distractor_b) -> np.ndarray:
    """Unit axis of spurious correlation, App. A.5: ``b = mean(a) − mean(b)``, normalised, from
    the embeddings (rows) of distractor documents in the style of perspective 1 / 2.  The
    released code L2-normalises each distractor embedding first (pass normalised embeddings to
    follow it) and not ``b`` (so its ``x − ⟨x,b⟩b`` is a projection only when ``|b| = 1``)."""
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


def polarisation_scores(embeddings, fit_embeddings=None, remove_direction=None) -> np.ndarray:
    """Polarisation scores ``p_j = (x_j − μ_fit) · v`` of the ranked documents' ``(n, d)``
    ``embeddings``, ``v`` the first right singular vector of the centred fit set, signed so
    that its largest-magnitude loading is positive.  ``fit_embeddings``: ``(m, d)`` (the
    query's perspective documents; default the ``embeddings``); ``remove_direction``: a
    ``(d,)`` vector removed from the fit set first (App. A.5; ``v`` is then orthogonal to it)."""
    ranked = _as_matrix(embeddings, "embeddings")
    fit = ranked if fit_embeddings is None else _as_matrix(fit_embeddings, "fit_embeddings")
    if fit.shape[1] != ranked.shape[1]:
        raise ValueError(
            f"fit_embeddings have {fit.shape[1]} dimensions, embeddings {ranked.shape[1]}; "
            "expected the same embedding space"
        )
    if remove_direction is not None:
        direction = np.ravel(remove_direction)
        if direction.size != ranked.shape[1]:
            raise ValueError(
                f"remove_direction has {direction.size} dimensions, embeddings "
                f"{ranked.shape[1]}; expected the same"
            )
        norm = float(np.linalg.norm(direction))
        if norm == 0.0:
            raise ValueError("remove_direction is the zero vector; expected a direction")
        direction = direction / norm
        fit = fit - np.outer(fit @ direction, direction)
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
    Table 2); ``labels``: at most two distinct values.  ``"best_sign"`` (default; the book's
    Conventions page, section "Duo"): the better of "positive = first label" and its swap (a
    score of 0 is right under neither); ``"per_group_majority"``: the released
    ``metric_validation.py``, each group counting ``max(#positive, #negative)`` separately
    (never below ``"best_sign"``)."""
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
    expect_choice(method, "method", ("best_sign", "per_group_majority"))
    first = label_array == classes[0]
    assignment = np.sum(positive & first) + np.sum(negative & ~first)
    swapped = np.sum(negative & first) + np.sum(positive & ~first)
    return float(max(assignment, swapped)) / values.size


# ---- measure declarations (rankbias.metrics.measures) -------------------------------------------

from rankbias.metrics.measures import HigherIs, Input, Measure, Parameter, register  # noqa: E402
from rankbias.metrics.ranked import per_list_kernel  # noqa: E402

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
        per_list_kernel("polarisation", duo),
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
        per_list_kernel("polarisation", signed_duo),
        _DUO_PARAMETERS,
        display="signed Duo",
    )
)
