"""AWRF and TExFAIR: exposure-based fairness of group representation (Abolghasemi et al.).

Definitions (seed 003 Eq. 4–13; ``METRICS.md`` §3), with ``v_r = 1/log2(r+1)`` and the list
cut at ``k' = min(k, len)``:

- Term exposure (Eq. 7–8): ``TE@k(t, q) = Σ_{r≤k'} (tf(t, d_r) / |d_r|) · v_r``.  Summed over a
  group's terms this is ``Σ_r (M_g(d_r) / |d_r|) v_r``, so only the group magnitudes and the
  lengths are needed.  A document with no tokens contributes 0.
- Group representation (Eq. 9): ``p(g|q,k) = Σ_{t∈V_g} TE / Σ_x Σ_{t∈V_x} TE`` (undefined —
  NaN — when no group term occurs in the top ``k'``).
- RBDF (Eq. 11): ``Σ_{r≤k'} 1[d_r ∈ SR] v_r / Σ_{r≤k'} v_r``, ``SR`` = documents with at least
  one group term.  The log base cancels in ``p`` and in RBDF.
- TED (Eq. 12): ``Σ_g |p(g|q,k) − p̂_g| · RBDF`` (targets ``p̂``, uniform by default) and
  ``TExFAIR = max(TED) − TED`` (Eq. 13) with ``max(TED) = 2(1 − min_g p̂_g)`` (1 for two
  uniform groups).  No group term in the top ``k'``: ``RBDF = 0``, ``TED = 0`` and
  ``TExFAIR = max(TED)``.
- Without RBDF (seed 003 Fig. 2, "no proportionality"): ``TED_norbdf = Σ_g |p − p̂|`` and
  ``TExFAIR_norbdf = max(TED) − TED_norbdf``; NaN when no group term occurs (METRICS: reported
  as missing, never 0 or 1).
- AWRF (Eq. 4–6, Sapiezynski et al.): ``E = Σ_{r≤k'} v_r a(d_r)`` with
  ``a_g(d) = M_g(d) / Σ_x M_x(d)``, or ``1/|G|`` for documents without group terms;
  ``AWRF = Δ(E / ‖E‖₁, Ê)`` with ``Δ`` the L1 distance by default (``l2``, ``jsd`` —
  Jensen–Shannon divergence in bits — and ``kl`` — ``KL(E/‖E‖₁ ‖ Ê)`` in nats — selectable).
  Higher = further from the target = more biased.

An empty list gives NaN everywhere.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from rankbias.metrics.ranked import at_cutoffs, cutoff_positions, position_discount

__all__ = [
    "DISTANCES",
    "max_ted",
    "term_exposure",
    "term_exposure_family",
    "awrf",
    "distribution_distance",
]

DISTANCES = ("l1", "l2", "jsd", "kl")


def _targets(targets: Sequence[float] | None, n_groups: int) -> np.ndarray:
    target = np.full(n_groups, 1.0 / n_groups) if targets is None else np.asarray(targets, float)
    if target.shape != (n_groups,) or (target < 0).any() or not np.isclose(target.sum(), 1.0):
        raise ValueError(f"targets must be {n_groups} non-negative shares summing to 1")
    return target


def max_ted(targets: Sequence[float]) -> float:
    """``max(TED) = 2(1 − min_g p̂_g)``: all exposure on the least-targeted group."""
    return 2.0 * (1.0 - float(np.min(targets)))


def term_exposure(
    term_counts_ranked: np.ndarray,
    lengths_ranked: np.ndarray,
    list_lengths: np.ndarray,
    cutoffs: Sequence[int],
) -> np.ndarray:
    """``TE@k(t, q)`` (Eq. 8) for each term: ``(n_queries, n_cutoffs, n_terms)``.

    ``term_counts_ranked`` is ``(n_queries, K, n_terms)`` of ``tf(t, d_r)`` (a few terms at a
    time; summed over a group's terms this is the group exposure of
    :func:`term_exposure_family`).
    """
    tf = np.asarray(term_counts_ranked, dtype=np.float64)
    doc_len = np.asarray(lengths_ranked, dtype=np.float64)
    lengths = np.asarray(list_lengths, dtype=np.int64)
    width = tf.shape[1]
    valid = np.arange(width)[None, :] < lengths[:, None]
    with np.errstate(invalid="ignore", divide="ignore"):
        share = np.where(
            (doc_len > 0)[:, :, None] & valid[:, :, None], tf / doc_len[:, :, None], 0.0
        )
    running = np.cumsum(share * position_discount(width)[None, :, None], axis=1)
    return at_cutoffs(running, cutoff_positions(lengths, cutoffs))


def term_exposure_family(
    group_counts_ranked: np.ndarray,
    lengths_ranked: np.ndarray,
    list_lengths: np.ndarray,
    cutoffs: Sequence[int],
    targets: Sequence[float] | None = None,
) -> dict[str, np.ndarray]:
    """Group exposure, ``p(g|q,k)``, RBDF, TED and TExFAIR (with and without RBDF).

    Parameters
    ----------
    group_counts_ranked:
        ``(n_queries, K, n_groups)`` magnitudes ``M_g(d_r)`` of the document at each rank.
    lengths_ranked:
        ``(n_queries, K)`` document lengths ``|d_r|``.
    list_lengths:
        ``(n_queries,)`` number of real documents per list (later positions are padding).

    Returns
    -------
    ``"exposure"`` and ``"p"``: ``(n_queries, n_cutoffs, n_groups)``; ``"rbdf"``, ``"ted"``,
    ``"texfair"``, ``"ted_norbdf"``, ``"texfair_norbdf"``: ``(n_queries, n_cutoffs)``.
    """
    counts = np.asarray(group_counts_ranked, dtype=np.float64)
    doc_len = np.asarray(lengths_ranked, dtype=np.float64)
    lengths = np.asarray(list_lengths, dtype=np.int64)
    n_q, width, n_groups = counts.shape
    target = _targets(targets, n_groups)
    valid = np.arange(width)[None, :] < lengths[:, None]
    counts = np.where(valid[:, :, None], counts, 0.0)
    discount = position_discount(width)
    with np.errstate(invalid="ignore", divide="ignore"):
        share = np.where(doc_len[:, :, None] > 0, counts / doc_len[:, :, None], 0.0)
    exposure_running = np.cumsum(share * discount[None, :, None], axis=1)
    representative = (counts.sum(axis=2) > 0) & valid
    rbdf_num = np.cumsum(representative * discount[None, :], axis=1)
    rbdf_den = np.cumsum(valid * discount[None, :], axis=1)
    depth = cutoff_positions(lengths, cutoffs)
    exposure = at_cutoffs(exposure_running, depth)
    total = exposure.sum(axis=2)
    with np.errstate(invalid="ignore", divide="ignore"):
        p = np.where(total[:, :, None] > 0, exposure / total[:, :, None], np.nan)
        rbdf = at_cutoffs(rbdf_num, depth) / at_cutoffs(rbdf_den, depth)
    divergence = np.abs(p - target[None, None, :]).sum(axis=2)  # NaN without group terms
    divergence = np.where(total > 0, divergence, np.nan)
    ted = np.where(rbdf > 0, np.nan_to_num(divergence) * rbdf, 0.0)
    ted = np.where(depth == 0, np.nan, ted)
    top = max_ted(target)
    return {
        "exposure": exposure,
        "p": p,
        "rbdf": rbdf,
        "ted": ted,
        "texfair": top - ted,
        "ted_norbdf": divergence,
        "texfair_norbdf": top - divergence,
    }


def distribution_distance(dist: np.ndarray, target: np.ndarray, distance: str = "l1"):
    """Distance between distributions along the last axis (see module docstring)."""
    if distance == "l1":
        return np.abs(dist - target).sum(axis=-1)
    if distance == "l2":
        return np.sqrt(((dist - target) ** 2).sum(axis=-1))
    if distance == "kl":
        if (target <= 0).any():
            raise ValueError("the kl distance needs every target share > 0")
        with np.errstate(invalid="ignore", divide="ignore"):
            terms = np.where(dist > 0, dist * np.log(dist / target), 0.0)
        return terms.sum(axis=-1)
    if distance == "jsd":
        middle = 0.5 * (dist + target)
        with np.errstate(invalid="ignore", divide="ignore"):
            left = np.where(dist > 0, dist * np.log2(dist / middle), 0.0)
            right = np.where(target > 0, target * np.log2(target / middle), 0.0)
        return 0.5 * (left.sum(axis=-1) + right.sum(axis=-1))
    raise ValueError(f"unknown distance {distance!r}; expected one of {DISTANCES}")


def awrf(
    group_counts_ranked: np.ndarray,
    list_lengths: np.ndarray,
    cutoffs: Sequence[int],
    targets: Sequence[float] | None = None,
    distance: str = "l1",
) -> np.ndarray:
    """AWRF ``(n_queries, n_cutoffs)``: distance of the exposure distribution to the target."""
    counts = np.asarray(group_counts_ranked, dtype=np.float64)
    lengths = np.asarray(list_lengths, dtype=np.int64)
    n_q, width, n_groups = counts.shape
    target = _targets(targets, n_groups)
    valid = np.arange(width)[None, :] < lengths[:, None]
    total = counts.sum(axis=2, keepdims=True)
    with np.errstate(invalid="ignore", divide="ignore"):
        alignment = np.where(total > 0, counts / total, 1.0 / n_groups)
    alignment = np.where(valid[:, :, None], alignment, 0.0)
    running = np.cumsum(alignment * position_discount(width)[None, :, None], axis=1)
    exposure = at_cutoffs(running, cutoff_positions(lengths, cutoffs))
    normalised = exposure / exposure.sum(axis=2, keepdims=True)
    return distribution_distance(normalised, target[None, None, :], distance)
