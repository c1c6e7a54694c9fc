"""Duo normalisation: exact subset DP against enumerating every ordering, and the released
40,320-sample estimate against the exact value.

Run: ``python bench/duo_bench.py`` (or through ``bench/run.py``, which calls :func:`main`).

Three tables:

1. n = 6 … 10: time of the exact bounds (:func:`rankbias.metrics.dcv_bounds`) against a
   vectorised enumeration of all ``n!`` orderings (chunks of 8! = 40,320 orderings, prefix
   variances by cumulative sums), their ratio, and the largest difference between the two
   bounds (a correctness check, expected ~1e-15).
2. n = 12, 16, 20, 22: time of the exact bounds alone (enumeration is out of reach: 16! ≈ 2e13).
3. n = 9 … 16: the released normalisation (40,320 random orderings) — its time and its error
   against the exact Duo over several random score lists and orderings.
"""

from __future__ import annotations

import itertools
import math
import time

import numpy as np

from rankbias.metrics.duo import dcv_bounds, duo, duo_sampled, extreme_orderings

SEED = 20240601
CHUNK_TAIL = 8  # orderings are enumerated as (all prefixes of n-8 items) x (8! tails)


def _dcv_of_rows(orderings: np.ndarray, weights: np.ndarray) -> np.ndarray:
    """DCV (prefix variance) of each row, by cumulative sums on centred scores."""
    lengths = np.arange(1, orderings.shape[1] + 1)
    mean = np.cumsum(orderings, axis=1) / lengths
    mean_sq = np.cumsum(orderings**2, axis=1) / lengths
    return (mean_sq - mean**2) @ weights


def _cut_weights(n: int, step: int = 1) -> np.ndarray:
    weights = np.zeros(n)
    for i in range(step, n, step):
        if i > 1:
            weights[i - 1] = 1.0 / math.log2(i)
    return weights


def enumerate_bounds(scores: np.ndarray, step: int = 1) -> tuple[float, float]:
    """Min and max DCV over all n! orderings, enumerated in chunks of at most 8! rows."""
    n = scores.size
    centred = scores - scores.mean()
    weights = _cut_weights(n, step)
    tail = min(n, CHUNK_TAIL)
    tail_orders = np.array(list(itertools.permutations(range(tail))), dtype=np.int64)
    low, high = np.inf, -np.inf
    chunk = np.empty((tail_orders.shape[0], n))
    for head in itertools.permutations(range(n), n - tail):
        rest = np.array([i for i in range(n) if i not in head], dtype=np.int64)
        chunk[:, : n - tail] = centred[list(head)]
        chunk[:, n - tail :] = centred[rest[tail_orders]]
        values = _dcv_of_rows(chunk, weights)
        low, high = min(low, values.min()), max(high, values.max())
    return float(low), float(high)


def _best_time(function, repeats: int) -> tuple[float, object]:
    best, result = math.inf, None
    for _ in range(repeats):
        start = time.perf_counter()
        result = function()
        best = min(best, time.perf_counter() - start)
    return best, result


def exact_vs_enumeration(rng: np.random.Generator) -> None:
    print("Exact Duo bounds (subset DP) vs enumerating all n! orderings (prefix variance, step 1)")
    print(
        f"{'n':>3} {'n!':>10} {'exact s':>10} {'enumerate s':>12} {'ratio':>9} {'max |diff|':>11}"
    )
    for n in range(6, 11):
        scores = rng.normal(size=n)
        exact_time, exact = _best_time(lambda s=scores: dcv_bounds(s), 5)
        repeats = 3 if n <= 9 else 1
        enum_time, enumerated = _best_time(lambda s=scores: enumerate_bounds(s), repeats)
        difference = max(abs(exact[0] - enumerated[0]), abs(exact[1] - enumerated[1]))
        print(
            f"{n:>3} {math.factorial(n):>10} {exact_time:>10.5f} {enum_time:>12.4f} "
            f"{enum_time / exact_time:>9.1f} {difference:>11.1e}"
        )


def exact_large(rng: np.random.Generator) -> None:
    print()
    print("Exact Duo bounds for longer lists (prefix variance; O(n 2^n))")
    print(f"{'n':>3} {'exact s':>10}")
    for n in (12, 16, 20, 22):
        scores = rng.normal(size=n)
        repeats = 3 if n <= 20 else 1
        exact_time, _ = _best_time(lambda s=scores: dcv_bounds(s), repeats)
        print(f"{n:>3} {exact_time:>10.4f}")


def sampled_error(rng: np.random.Generator, lists_per_n: int = 5) -> None:
    print()
    print("Released normalisation (40,320 random orderings) vs exact Duo")
    print("  random order: |sampled - exact| for a random ordering of random scores")
    print(
        "  most biased / most balanced: sampled Duo of the exact extreme orderings (exact: 1 / 0)"
    )
    print(
        f"{'n':>3} {'sampled s':>10} {'exact s':>9} {'random mean|err|':>17} "
        f"{'max|err|':>9} {'most biased':>12} {'most balanced':>14}"
    )
    for n in range(9, 17):
        errors, sampled_times, exact_times, at_biased, at_balanced = [], [], [], [], []
        for _ in range(lists_per_n):
            scores = rng.normal(size=n)
            start = time.perf_counter()
            estimate = duo_sampled(scores, seed=rng)
            sampled_times.append(time.perf_counter() - start)
            start = time.perf_counter()
            exact = duo(scores)
            exact_times.append(time.perf_counter() - start)
            errors.append(abs(estimate - exact))
            biased, balanced = extreme_orderings(scores)
            at_biased.append(duo_sampled(scores[biased], seed=rng))
            at_balanced.append(duo_sampled(scores[balanced], seed=rng))
        print(
            f"{n:>3} {np.mean(sampled_times):>10.4f} {np.mean(exact_times):>9.4f} "
            f"{np.mean(errors):>17.4f} {np.max(errors):>9.4f} {np.mean(at_biased):>12.3f} "
            f"{np.mean(at_balanced):>14.3f}"
        )


def main() -> None:
    """Print the three Duo benchmark tables."""
    rng = np.random.default_rng(SEED)
    exact_vs_enumeration(rng)
    exact_large(rng)
    sampled_error(rng)


if __name__ == "__main__":
    main()
