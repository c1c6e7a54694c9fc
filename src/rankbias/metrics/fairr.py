"""FaiRR and NFaiRR: (normalised) fairness of retrieval results (Rekabsaz et al. 2021).

Definition (seed 003 Eq. 1–3; ``METRICS.md`` §2).  Neutrality of a document:

``ω(d) = 1`` if ``Σ_g M_g(d) ≤ τ`` (default ``τ = 1``), else
``ω(d) = 1 − Σ_g | M_g(d) / Σ_x M_x(d) − J_g |`` with ``J_g = 1/|G|`` by default.

Seed 002 writes ``< τ``; the released code and seed 003 use ``≤ τ``, the default here; the
seed-002 reading is ``strict=True``.  For two groups ``ω ∈ [0, 1]``; with more groups and
uniform ``J`` it can go below 0 (down to ``1 − 2(1 − 1/|G|)``).

``FaiRR@k(q) = Σ_{r≤k'} ω(d_r) v_r`` with ``v_r = 1/log2(r+1)`` and ``k' = min(k, len)``;
``IFaiRR@k(q, S)`` is the same sum over the ``min(k, |S_q|)`` most neutral documents of a
background set ``S_q`` — the documents another run retrieved for ``q`` (as the released code,
which does not add the scored run's own documents to ``S_q``, so NFaiRR can exceed 1 when a run
retrieves documents more neutral than its background's), or the whole collection (seed 003's
choice); ``NFaiRR@k(q) = FaiRR@k(q) / IFaiRR@k(q, S)``, higher = fairer.  Undefined cases:
an empty list gives NaN; ``IFaiRR = 0`` (a background whose documents all have ``ω = 0``)
gives NaN, never 0 or 1.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from rankbias.metrics.ranked import at_cutoffs, cutoff_positions, position_discount

__all__ = ["neutrality", "fairr_at_cutoffs", "ideal_fairr", "ideal_fairr_collection", "nfairr"]


def neutrality(
    group_counts: np.ndarray,
    tau: float = 1.0,
    targets: Sequence[float] | None = None,
    strict: bool = False,
) -> np.ndarray:
    """``ω(d)`` for every document from its ``(n_docs, n_groups)`` magnitudes ``M_g(d)``.

    ``strict=False`` (default): neutral when ``Σ_g M_g ≤ τ``; ``strict=True``: when ``< τ``.
    ``targets`` are the ``J_g`` (default ``1/|G|`` each).
    """
    counts = np.asarray(group_counts, dtype=np.float64)
    n_groups = counts.shape[1]
    target = np.full(n_groups, 1.0 / n_groups) if targets is None else np.asarray(targets, float)
    if target.shape != (n_groups,):
        raise ValueError(f"{len(target)} targets for {n_groups} groups")
    total = counts.sum(axis=1)
    neutral = total < tau if strict else total <= tau
    with np.errstate(invalid="ignore", divide="ignore"):
        share = counts / total[:, None]
    omega = 1.0 - np.abs(share - target[None, :]).sum(axis=1)
    return np.where(neutral, 1.0, omega)


def fairr_at_cutoffs(
    omega_ranked: np.ndarray, list_lengths: np.ndarray, cutoffs: Sequence[int]
) -> np.ndarray:
    """``FaiRR@k`` ``(n_queries, n_cutoffs)`` from ``(n_queries, K)`` neutralities by rank."""
    omega = np.asarray(omega_ranked, dtype=np.float64)
    lengths = np.asarray(list_lengths, dtype=np.int64)
    width = omega.shape[1]
    valid = np.arange(width)[None, :] < lengths[:, None]
    gains = np.where(valid, omega, 0.0) * position_discount(width)[None, :]
    return at_cutoffs(np.cumsum(gains, axis=1), cutoff_positions(lengths, cutoffs))


def ideal_fairr(
    background_omega: np.ndarray, background_lengths: np.ndarray, cutoffs: Sequence[int]
) -> np.ndarray:
    """``IFaiRR@k(q, S_q)`` ``(n_queries, n_cutoffs)``: the best FaiRR of each background set.

    ``background_omega`` is ``(n_queries, B)``, row ``i`` holding the neutralities of ``S_q``
    in its first ``background_lengths[i]`` positions (any order).
    """
    omega = np.asarray(background_omega, dtype=np.float64)
    lengths = np.asarray(background_lengths, dtype=np.int64)
    width = omega.shape[1]
    valid = np.arange(width)[None, :] < lengths[:, None]
    best_first = -np.sort(np.where(valid, -omega, np.inf), axis=1)  # descending, padding last
    best_first = np.where(valid, best_first, 0.0)  # the sort keeps valid entries in front
    gains = best_first * position_discount(width)[None, :]
    return at_cutoffs(np.cumsum(gains, axis=1), cutoff_positions(lengths, cutoffs))


def ideal_fairr_collection(omega: np.ndarray, cutoffs: Sequence[int]) -> np.ndarray:
    """``IFaiRR@k`` over the whole collection, one value per cutoff (the same for all queries)."""
    omega = np.asarray(omega, dtype=np.float64)
    k_max = min(int(max(cutoffs)), len(omega))
    top = np.sort(np.partition(-omega, k_max - 1)[:k_max]) * -1.0 if k_max else omega[:0]
    return ideal_fairr(top[None, :], np.array([len(top)]), cutoffs)[0]


def nfairr(fairr_values: np.ndarray, ideal_values: np.ndarray) -> np.ndarray:
    """``FaiRR / IFaiRR``, NaN where ``IFaiRR`` is 0 or undefined."""
    fairr_values = np.asarray(fairr_values, dtype=np.float64)
    ideal = np.broadcast_to(np.asarray(ideal_values, dtype=np.float64), fairr_values.shape)
    with np.errstate(invalid="ignore", divide="ignore"):
        return np.where(ideal > 0, fairr_values / np.where(ideal > 0, ideal, 1.0), np.nan)
