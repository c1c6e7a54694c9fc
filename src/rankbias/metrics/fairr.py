"""FaiRR and NFaiRR: (normalised) fairness of retrieval results (Rekabsaz et al. 2021).

Abolghasemi et al. (2024), Eq. 1–3; choices: the book's Conventions page, sections "Neutrality:
the threshold τ and ≤" and "The background set of NFaiRR".  Neutrality of a document: ``ω(d) =
1`` if ``Σ_g M_g(d) ≤ τ`` (default ``τ = 1``; ``≤`` as the released code and Abolghasemi et al.
(2024), Klasnja et al. (2022) write ``< τ``: ``strict=True``), else ``ω(d) = 1 − Σ_g | M_g(d) /
Σ_x M_x(d) − J_g |``, ``J_g = 1/|G|`` by default; with more than two groups and uniform ``J`` it
can go below 0 (down to ``1 − 2(1 − 1/|G|)``).

``FaiRR@k(q) = Σ_{r≤k'} ω(d_r) v_r`` with ``v_r = 1/log2(r+1)``, ``k' = min(k, len)``;
``IFaiRR@k(q, S)`` is that sum over the ``min(k, |S_q|)`` most neutral documents of a background
set ``S_q``: the documents another run retrieved for ``q`` (as in the released code, without the
scored run's own, so NFaiRR can exceed 1) or the whole collection (Abolghasemi et al. (2024));
``NFaiRR = FaiRR / IFaiRR``, higher = fairer.  An empty list gives NaN, and so does
``IFaiRR = 0``.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from rankbias.errors import InputError, expect_flag
from rankbias.metrics.ranked import at_cutoffs, cutoff_positions, position_discount
from rankbias.metrics.validation import (
    as_array,
    check_ranked,
    check_targets,
    check_tau,
    check_values,
)

#: ω = 1 − Σ_g |share_g − J_g| and an L1 distance of two distributions is at most 2; ω < 0 where
#: a document leans further than the targets allow on the other side (three groups, J ≠ 1/2)
OMEGA_RANGE = (-1.0, 1.0)

__all__ = [
    "neutrality", "fairr_at_cutoffs", "ideal_fairr", "ideal_fairr_collection", "nfairr",
]  # fmt: skip


def neutrality(
    group_counts: np.ndarray,
    tau: float = 1.0,
    targets: Sequence[float] | None = None,
    strict: bool = False,
) -> np.ndarray:
    """``ω(d)`` for every document from its ``(n_docs, n_groups)`` magnitudes ``M_g(d)``.

    Neutral when ``Σ_g M_g ≤ τ`` (``strict=True``: ``< τ``); a document without any group term
    is neutral under both readings (also with ``τ = 0``, where its shares would be ``0/0``).
    ``targets``: the ``J_g`` (default ``1/|G|``; non-negative shares summing to 1).  A NaN or
    negative count, or ``τ`` not finite and ``≥ 0``, is an :class:`~rankbias.errors.InputError`
    naming the document and group.
    """
    counts = as_array(group_counts, "group_counts", 2)
    n_groups = counts.shape[1]
    if n_groups < 1:
        raise InputError("group_counts: expected at least one group column, found none")
    check_values(counts, "group_counts", non_negative=True)
    tau = check_tau(tau)
    strict = expect_flag(strict, "strict")
    target = check_targets(targets, n_groups)
    # column by column (a row of a few groups is slow to reduce): the same sums in the same
    # order as summing each row, a column's size of memory at a time
    total = counts[:, 0].copy()
    for j in range(1, n_groups):
        total += counts[:, j]
    # a document without group terms is neutral under every reading: its shares are 0/0
    neutral = (total < tau if strict else total <= tau) | (total == 0)
    gaps = np.zeros(len(counts))
    with np.errstate(invalid="ignore"):  # 0/0 only: a total of 0 is a row of zero counts
        for j in range(n_groups):
            gaps += np.abs(counts[:, j] / total - target[j])
    omega = 1.0 - gaps
    return np.where(neutral, 1.0, omega)


def fairr_at_cutoffs(
    omega_ranked: np.ndarray, list_lengths: np.ndarray, cutoffs: Sequence[int]
) -> np.ndarray:
    """``FaiRR@k`` ``(n_queries, n_cutoffs)`` from ``(n_queries, K)`` neutralities by rank,
    finite at the real positions (an :class:`~rankbias.errors.InputError` otherwise)."""
    omega, lengths, valid = check_ranked(
        omega_ranked, "omega_ranked", list_lengths, 2, within=OMEGA_RANGE
    )
    gains = np.where(valid, omega, 0.0) * position_discount(omega.shape[1])[None, :]
    return at_cutoffs(np.cumsum(gains, axis=1), cutoff_positions(lengths, cutoffs))


def ideal_fairr(
    background_omega: np.ndarray, background_lengths: np.ndarray, cutoffs: Sequence[int]
) -> np.ndarray:
    """``IFaiRR@k(q, S_q)`` ``(n_queries, n_cutoffs)``: the best FaiRR of each background set,
    row ``i`` of ``background_omega`` holding ``S_q``'s neutralities in its first
    ``background_lengths[i]`` positions (any order; checked as for :func:`fairr_at_cutoffs`)."""
    omega, lengths, valid = check_ranked(
        background_omega, "background_omega", background_lengths, 2, within=OMEGA_RANGE
    )
    best_first = -np.sort(np.where(valid, -omega, np.inf), axis=1)  # descending, padding last
    return fairr_at_cutoffs(best_first, lengths, cutoffs)


def ideal_fairr_collection(omega: np.ndarray, cutoffs: Sequence[int]) -> np.ndarray:
    """``IFaiRR@k`` over the whole collection from every document's (finite) neutrality
    ``omega``: one value per cutoff, the same for all queries."""
    omega = as_array(omega, "omega", 1)
    check_values(omega, "omega", within=OMEGA_RANGE)
    k_max = min(int(cutoff_positions(np.array([len(omega)]), cutoffs).max()), len(omega))
    if k_max and np.count_nonzero(omega == 1.0) >= k_max:  # ω ≤ 1: the top k are all 1
        top = np.ones(k_max)
    else:
        top = -np.sort(np.partition(-omega, k_max - 1)[:k_max]) if k_max else omega
    return ideal_fairr(top[None, :], np.array([len(top)]), cutoffs)[0]


def nfairr(fairr_values: np.ndarray, ideal_values: np.ndarray) -> np.ndarray:
    """``FaiRR / IFaiRR``, NaN where ``IFaiRR`` is 0 or undefined (NaN: an empty list)."""
    fairr_values = as_array(fairr_values, "fairr_values")
    ideal = as_array(ideal_values, "ideal_values")
    for name, values in (("fairr_values", fairr_values), ("ideal_values", ideal)):
        if np.isinf(values).any():
            raise InputError(
                f"{name}: found {values[np.isinf(values)][0]}; expected finite values (or NaN)"
            )
    try:
        ideal = np.broadcast_to(ideal, fairr_values.shape)
    except ValueError:
        raise InputError(
            f"ideal_values: shape {ideal.shape} does not broadcast to fairr_values' "
            f"{fairr_values.shape}; expected one ideal per value (or per cut-off)"
        ) from None
    return np.where(ideal > 0, fairr_values / np.where(ideal > 0, ideal, 1.0), np.nan)


# ---- measure declarations (rankbias.metrics.measures) -------------------------------------------

from rankbias.metrics.measures import HigherIs, Input, Measure, Parameter, register  # noqa: E402

_REFERENCE = "rekabsaz2021societal; abolghasemi2024texfair Eq. 1–3"
TAU = Parameter("tau", "float", 1.0, "neutrality threshold: ω = 1 when Σ_g M_g(d) ≤ τ", minimum=0.0)
STRICT = Parameter("strict", "bool", False, "use Σ_g M_g(d) < τ instead of ≤ τ")
TARGETS = Parameter("targets", "floats", None, "target share J_g per group (uniform if not given)")
BACKGROUND = Parameter(
    "background",
    "str",
    "collection",
    "the set S_q whose most neutral documents give IFaiRR: the whole collection, or the "
    "background run given to the scorer",
    allowed=("collection", "run"),
)
_NEUTRALITY = (TAU, STRICT, TARGETS)


def _neutrality_of_collection(inputs, tau, strict, targets):
    return inputs.per_collection(
        ("neutrality", tau, strict, targets),
        lambda: neutrality(inputs.collection.group_counts, tau, targets, strict),
    )


def collection_ideal(stats, cutoffs, tau, strict, targets, background):
    """The measures' aggregate: ``IFaiRR@k`` of the collection's most neutral documents under
    the measure's own τ, ``strict`` and targets, per cut-off; ``None`` for ``background=run``."""
    if background != "collection":
        return None
    return ideal_fairr_collection(neutrality(stats.group_counts, tau, targets, strict), cutoffs)


def _fairr_kernel(inputs, cutoffs, tau, strict, targets):
    omega = _neutrality_of_collection(inputs, tau, strict, targets)
    return fairr_at_cutoffs(inputs.ranked(omega, 1.0), inputs.list_lengths, cutoffs)


def _ifairr_kernel(inputs, cutoffs, aggregate, tau, strict, targets, background):
    if background == "collection":
        return np.broadcast_to(aggregate[None, :], (inputs.n_queries, len(cutoffs))).copy()
    omega = _neutrality_of_collection(inputs, tau, strict, targets)
    background_omega, background_lengths = inputs.background_ranked(omega, 1.0)
    return ideal_fairr(background_omega, background_lengths, cutoffs)


def _nfairr_kernel(inputs, cutoffs, aggregate, tau, strict, targets, background):
    return nfairr(
        _fairr_kernel(inputs, cutoffs, tau, strict, targets),
        _ifairr_kernel(inputs, cutoffs, aggregate, tau, strict, targets, background),
    )


register(
    Measure(
        "fairr",
        "fairr",
        "FaiRR@k = Σ_{r≤k} ω(d_r) / log2(r+1); ω(d) = 1 if Σ_g M_g ≤ τ else "
        "1 − Σ_g |M_g/Σ_x M_x − J_g|",
        _REFERENCE,
        HigherIs.FAIRER,
        (Input.TERM_STATISTICS,),
        _fairr_kernel,
        _NEUTRALITY,
        display="FaiRR",
    )
)
register(
    Measure(
        "ifairr",
        "fairr",
        "IFaiRR@k(q,S) = FaiRR@k of the k most neutral documents of the background S_q "
        "(NFaiRR's normaliser)",
        _REFERENCE,
        HigherIs.NEITHER,
        (Input.TERM_STATISTICS,),
        _ifairr_kernel,
        _NEUTRALITY + (BACKGROUND,),
        display="IFaiRR",
        aggregate=collection_ideal,
    )
)
register(
    Measure(
        "nfairr",
        "fairr",
        "NFaiRR@k = FaiRR@k / IFaiRR@k(q,S); NaN when IFaiRR = 0",
        _REFERENCE,
        HigherIs.FAIRER,
        (Input.TERM_STATISTICS,),
        _nfairr_kernel,
        _NEUTRALITY + (BACKGROUND,),
        display="NFaiRR",
        aggregate=collection_ideal,
    )
)
