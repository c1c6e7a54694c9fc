"""AWRF and TExFAIR: exposure-based fairness of group representation (Abolghasemi et al.).

Abolghasemi et al. (2024), Eq. 4–13, with ``v_r = 1/log2(r+1)`` and ``k' = min(k, len)``:

- Term exposure (Eq. 7–8): ``TE@k(t, q) = Σ_{r≤k'} (tf(t, d_r) / |d_r|) · v_r``, over a group's
  terms ``Σ_r (M_g(d_r) / |d_r|) v_r`` (a document with no tokens contributes 0).
- ``p(g|q,k) = Σ_{t∈V_g} TE / Σ_x Σ_{t∈V_x} TE`` (Eq. 9; NaN when no group term occurs in the
  top ``k'``); RBDF (Eq. 11) ``= Σ_{r≤k'} 1[d_r ∈ SR] v_r / Σ_{r≤k'} v_r``, ``SR`` = documents
  with at least one group term.
- TED (Eq. 12) ``= Σ_g |p(g|q,k) − p̂_g| · RBDF`` (targets ``p̂``, uniform by default),
  ``TExFAIR = max(TED) − TED`` (Eq. 13), ``max(TED) = 2(1 − min_g p̂_g)``.  No group term in the
  top ``k'``: ``TED = 0`` and ``TExFAIR = max(TED)`` (a convention: Eq. 12 is then an undefined
  ``p`` times ``RBDF = 0``; ``TED ≤ max(TED) · RBDF`` makes 0 its limit).
- Without RBDF (Fig. 2, "no proportionality"): ``TExFAIR_norbdf = max(TED) − Σ_g |p − p̂|``, NaN
  when no group term occurs (the book's Conventions page, section "Undefined values").
- AWRF (Eq. 4–6, Sapiezynski et al.; the association of Eq. 14, §6): ``E = Σ_{r≤k'} v_r a(d_r)``
  with ``a_g(d) = M_g(d) / Σ_x M_x(d)``, or ``1/|G|`` for documents without group terms;
  ``AWRF = Δ(E / ‖E‖₁, Ê)``, ``Δ`` the L1 distance by default (``l2``, ``jsd`` — Jensen–Shannon
  in bits — or ``kl`` — ``KL(E/‖E‖₁ ‖ Ê)`` in nats); higher = more biased.

An empty list gives NaN everywhere.
"""

from __future__ import annotations

import functools
from collections.abc import Sequence

import numpy as np

from rankbias.errors import InputError
from rankbias.metrics.ranked import at_cutoffs, cutoff_positions, position_discount
from rankbias.metrics.validation import as_array, check_ranked, check_targets, check_values

__all__ = [
    "DISTANCES", "max_ted", "term_exposure_family", "awrf",
    "distribution_distance",
]  # fmt: skip

DISTANCES = ("l1", "l2", "jsd", "kl")


def _ranked_inputs(counts, name: str, list_lengths, doc_lengths):
    """Checked ``(counts, lengths, valid, doc_len)`` of a ``(n_queries, K, n)`` input."""
    counts, lengths, valid = check_ranked(counts, name, list_lengths, 3, non_negative=True)
    doc_len = as_array(doc_lengths, "lengths_ranked", 2)
    if doc_len.shape != counts.shape[:2]:
        raise InputError(
            f"lengths_ranked: expected shape {counts.shape[:2]} (one length per ranked document), "
            f"found {doc_len.shape}"
        )
    check_values(doc_len, "lengths_ranked", valid, non_negative=True)
    return counts, lengths, valid, doc_len


def _exposure(counts, doc_len, valid, depth):
    """``Σ_{r≤t'} (counts(d_r) / |d_r|) v_r`` at each depth ``t'``; padding and documents without
    tokens contribute 0."""
    with np.errstate(invalid="ignore", divide="ignore"):
        share = np.where((valid & (doc_len > 0))[:, :, None], counts / doc_len[:, :, None], 0.0)
    running = np.cumsum(share * position_discount(counts.shape[1])[None, :, None], axis=1)
    return at_cutoffs(running, depth)


def max_ted(targets: Sequence[float]) -> float:
    """``max(TED) = 2(1 − min_g p̂_g)``: all exposure on the least-targeted group."""
    target = as_array(targets, "targets")
    return 2.0 * (1.0 - float(np.min(check_targets(target, target.size))))


def term_exposure_family(
    group_counts_ranked: np.ndarray,
    lengths_ranked: np.ndarray,
    list_lengths: np.ndarray,
    cutoffs: Sequence[int],
    targets: Sequence[float] | None = None,
) -> dict[str, np.ndarray]:
    """Group exposure and ``p(g|q,k)`` ``(n_queries, n_cutoffs, n_groups)``; ``"rbdf"``,
    ``"ted"``, ``"texfair"``, ``"ted_norbdf"``, ``"texfair_norbdf"`` ``(n_queries, n_cutoffs)``,
    from the ``(n_queries, K, n_groups)`` magnitudes ``M_g(d_r)`` and ``(n_queries, K)`` lengths
    ``|d_r|`` by rank.  A list length outside ``0…K``, or a count or length that is not finite and
    non-negative at a real position, is an :class:`~rankbias.errors.InputError` (a NaN would
    read as no group terms)."""
    counts, lengths, valid, doc_len = _ranked_inputs(
        group_counts_ranked, "group_counts_ranked", list_lengths, lengths_ranked
    )
    target = check_targets(targets, counts.shape[2])
    discount = position_discount(counts.shape[1])
    representative = (counts.sum(axis=2) > 0) & valid
    rbdf_num = np.cumsum(representative * discount[None, :], axis=1)
    rbdf_den = np.cumsum(valid * discount[None, :], axis=1)
    depth = cutoff_positions(lengths, cutoffs)
    exposure = _exposure(counts, doc_len, valid, depth)
    total = exposure.sum(axis=2)
    with np.errstate(invalid="ignore"):  # 0/0: no group terms (exposure ≥ 0 sums to 0)
        p = exposure / total[:, :, None]
    rbdf = at_cutoffs(rbdf_num, depth) / at_cutoffs(rbdf_den, depth)  # NaN for an empty list
    divergence = np.abs(p - target[None, None, :]).sum(axis=2)  # NaN without group terms
    ted = np.nan_to_num(divergence) * rbdf  # 0 without group terms (rbdf = 0), NaN if empty
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
    dist, target = as_array(dist, "dist"), as_array(target, "target")
    if dist.shape[-1:] != target.shape[-1:]:
        raise ValueError(
            f"dist, target: expected shares of the same groups, found {dist.shape} and "
            f"{target.shape}"
        )
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
    """AWRF ``(n_queries, n_cutoffs)``: distance of the exposure distribution to the target.

    ``group_counts_ranked`` is ``(n_queries, K, n_groups)``; counts at the real positions must be
    finite and non-negative (an :class:`~rankbias.errors.InputError` otherwise: a NaN read as a
    document without group terms would pull AWRF towards 0).  An empty list gives NaN.
    """
    counts, lengths, valid = check_ranked(
        group_counts_ranked, "group_counts_ranked", list_lengths, 3, non_negative=True
    )
    n_q, width, n_groups = counts.shape
    target = check_targets(targets, n_groups)
    total = counts.sum(axis=2, keepdims=True)
    with np.errstate(invalid="ignore", divide="ignore"):
        alignment = np.where(total > 0, counts / total, 1.0 / n_groups)
    # positions past a list's end enter only sums past it, which no cut-off reads (t' ≤ length)
    running = np.cumsum(alignment * position_discount(width)[None, :, None], axis=1)
    exposure = at_cutoffs(running, cutoff_positions(lengths, cutoffs))
    normalised = exposure / exposure.sum(axis=2, keepdims=True)
    return distribution_distance(normalised, target[None, None, :], distance)


# ---- measure declarations (rankbias.metrics.measures) -------------------------------------------

from rankbias.metrics.measures import HigherIs, Input, Measure, Parameter, register  # noqa: E402

TARGETS = Parameter("targets", "floats", None, "target share p̂_g per group (uniform if not given)")
DISTANCE = Parameter(
    "distance",
    "str",
    "l1",
    "AWRF distance to the target: L1, L2, Jensen–Shannon (bits), KL (nats)",
    allowed=DISTANCES,
)


def _family_kernel(inputs, cutoffs, targets=None, *, key):  # rbdf takes no targets
    cache_key = ("term_exposure_family", targets, tuple(cutoffs))
    if cache_key not in inputs.cache:
        counts, doc_lengths = inputs.ranked_group_counts()
        inputs.cache[cache_key] = term_exposure_family(
            counts, doc_lengths, inputs.list_lengths, cutoffs, targets
        )
    return inputs.cache[cache_key][key]


def _awrf_kernel(inputs, cutoffs, targets, distance):
    counts, _ = inputs.ranked_group_counts()
    return awrf(counts, inputs.list_lengths, cutoffs, targets, distance)


register(
    Measure(
        "awrf",
        "texfair",
        "AWRF@k = Δ(E/‖E‖₁, Ê), E = Σ_{r≤k} v_r a(d_r), a_g(d) = M_g/Σ_x M_x (1/|G| if none)",
        "sapiezynski2019awrf; abolghasemi2024texfair Eq. 4–6 with the association of Eq. 14",
        HigherIs.MORE_BIASED,
        (Input.TERM_STATISTICS,),
        _awrf_kernel,
        (TARGETS, DISTANCE),
        display="AWRF",
    )
)
for _name, _display, _definition, _reference, _higher in (
    (
        "rbdf",
        "RBDF",
        "RBDF@k = Σ_{r≤k} 1[d_r has a group term] v_r / Σ_{r≤k} v_r",
        "abolghasemi2024texfair Eq. 11",
        HigherIs.NEITHER,
    ),
    (
        "ted",
        "TED",
        "TED@k = Σ_g |p(g|q,k) − p̂_g| · RBDF@k, p(g|q,k) from term exposure",
        "abolghasemi2024texfair Eq. 12",
        HigherIs.MORE_BIASED,
    ),
    (
        "texfair",
        "TExFAIR",
        "TExFAIR@k = max(TED) − TED@k, max(TED) = 2(1 − min_g p̂_g)",
        "abolghasemi2024texfair Eq. 13",
        HigherIs.FAIRER,
    ),
    (
        "texfair_norbdf",
        "TExFAIR (no RBDF)",
        "max(TED) − Σ_g |p(g|q,k) − p̂_g| (no RBDF); NaN when the top k has no group term",
        "abolghasemi2024texfair Fig. 2 ('no proportionality')",
        HigherIs.FAIRER,
    ),
):
    register(
        Measure(
            _name,
            "texfair",
            _definition,
            _reference,
            _higher,
            (Input.TERM_STATISTICS,),
            functools.partial(_family_kernel, key=_name),
            () if _name == "rbdf" else (TARGETS,),
            display=_display,
            undefined="NaN when the top k holds no group term; texfair, weighted by RBDF, is "
            "defined there"
            if _name == "texfair_norbdf"
            else "",
        )
    )
