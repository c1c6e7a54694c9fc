"""RaB and ARaB: rank bias and average rank bias (Rekabsaz & Schedl 2020).

Klasnja et al. (2022), Eq. 1–3; choices: the book's Conventions page, sections "The sign of RaB
and ARaB" and "The TF magnitude of RaB".  Each document gets a per-group magnitude ``mag_g(d)``:
``tc`` ``M_g(d) = Σ_{t∈V_g} tf(t, d)`` (term count); ``tf`` ``ln(1 + M_g(d))`` (the authors'
released code); ``bool`` ``1[M_g(d) > 0]``; ``tf_paper`` ``Σ_{t∈V_g, tf(t,d)>0} ln tf(t, d)``
(Eq. 2 as printed, ``Σ_w log tf(w, d)``, without the undefined ``ln 0`` of absent terms; it
needs per-term counts).  For query ``q`` and cutoff ``t``, ``t' = min(t, len(list))``:
``RaB@t(q) = (1/t') Σ_{i≤t'} (mag_m(d_i) − mag_f(d_i))`` and ``ARaB@t(q) = (1/t') Σ_{x=1..t'}
RaB@x(q)``, with the group parts ``qRaB_g@t = (1/t') Σ_{i≤t'} mag_g(d_i)`` and their averages
``qARaB_g``.  The sign ``m − f`` (positive = male-leaning) is the book's; the papers and the
released notebooks differ on it, and swapping the groups flips it.  An empty list gives NaN.
"""

from __future__ import annotations

import functools
from collections.abc import Sequence

import numpy as np

from rankbias.errors import InputError
from rankbias.metrics.ranked import at_cutoffs, cutoff_positions
from rankbias.metrics.validation import as_array, check_list_lengths, check_values

__all__ = ["MAGNITUDES", "document_magnitudes", "rank_bias"]

MAGNITUDES = ("tc", "tf", "bool", "tf_paper")


def document_magnitudes(
    group_counts: np.ndarray, kind: str = "tc", log_tf_sums: np.ndarray | None = None
) -> np.ndarray:
    """Per-document group magnitudes ``(n_docs, n_groups)`` of the given ``kind`` from
    ``group_counts`` ``M_g(d)``; ``tf_paper`` reads ``log_tf_sums`` (``Σ ln tf`` per group,
    :meth:`rankbias.text.DocStats.log_tf_sums`).  Both must be finite and non-negative (an
    :class:`~rankbias.errors.InputError` names the document)."""
    counts = as_array(group_counts, "group_counts")  # element-wise: any shape
    check_values(counts, "group_counts", non_negative=True)
    if kind == "tc":
        return counts
    if kind == "tf":
        return np.log1p(counts)
    if kind == "bool":
        return (counts > 0).astype(np.float64)
    if kind == "tf_paper":
        if log_tf_sums is None:
            raise ValueError("the tf_paper magnitude needs per-term counts (log_tf_sums)")
        sums = np.asarray(log_tf_sums, dtype=np.float64)
        if sums.shape != counts.shape:
            raise InputError(
                f"log_tf_sums: expected the shape of group_counts {counts.shape}, "
                f"found {sums.shape}"
            )
        check_values(sums, "log_tf_sums", non_negative=True)
        return sums
    raise ValueError(f"unknown magnitude {kind!r}; expected one of {MAGNITUDES}")


def rank_bias(
    magnitudes_ranked: np.ndarray,
    list_lengths: np.ndarray,
    cutoffs: Sequence[int],
    female: int = 0,
    male: int = 1,
) -> dict[str, np.ndarray]:
    """RaB, ARaB and their group parts ``{"rab", "arab", "rab_f", "rab_m", "arab_f", "arab_m"}``,
    each ``(n_queries, n_cutoffs)``.

    ``magnitudes_ranked``: ``(n_queries, K, n_groups)`` magnitudes by rank, finite and
    non-negative up to each list's length (padding after).  ``list_lengths`` must lie in
    ``0…K`` (a longer list would mix denominators); ``female``, ``male``: the groups' column
    indices.  Anything else is an :class:`~rankbias.errors.InputError`.
    """
    mags = as_array(magnitudes_ranked, "magnitudes_ranked", 3)
    n_q, width, n_groups = mags.shape
    lengths = check_list_lengths(list_lengths, n_q, width)
    for label, column in (("female", female), ("male", male)):
        if isinstance(column, bool) or not isinstance(column, int | np.integer):
            raise InputError(f"{label}: expected a column index, found {column!r}")
        if not 0 <= column < n_groups:
            raise InputError(f"{label}: column {column} is outside 0…{n_groups - 1}")
    if female == male:
        raise InputError(f"female and male must be different columns, found {female} for both")
    valid = np.arange(width)[None, :] < lengths[:, None]
    check_values(mags, "magnitudes_ranked", valid, non_negative=True)
    series = np.stack([mags[:, :, male] - mags[:, :, female], mags[:, :, female], mags[:, :, male]])
    # RaB@x; padding after a list's end is never read: the depths stop at its length
    rab_at = np.cumsum(series, axis=2) / np.arange(1, width + 1, dtype=np.float64)
    arab_sum = np.cumsum(rab_at, axis=2)  # Σ_{x≤t'} RaB@x
    depth = cutoff_positions(lengths, cutoffs)
    safe_depth = np.where(depth == 0, 1, depth)
    out = {}
    for j, suffix in enumerate(("", "_f", "_m")):
        out["rab" + suffix] = at_cutoffs(rab_at[j], depth)
        out["arab" + suffix] = at_cutoffs(arab_sum[j], depth) / safe_depth
    return out


# ---- measure declarations (rankbias.metrics.measures) -------------------------------------------

from rankbias.metrics.measures import HigherIs, Input, Measure, Parameter, register  # noqa: E402

MAGNITUDE = Parameter(
    "magnitude",
    "str",
    "tc",
    "per-document group magnitude: term count, ln(1 + count) (released code), "
    "1[count > 0], or Σ ln tf (Klasnja et al. 2022 Eq. 2 as printed)",
    allowed=("tc", "tf", "bool", "tf_paper"),
)
FEMALE = Parameter("female", "str", "f", "label of the female group in the word list")
MALE = Parameter("male", "str", "m", "label of the male group in the word list")

_REFERENCE = "rekabsaz2020neural; klasnja2022characteristics Eq. 1–3"
_PARTS = {"": None, "_f": "female", "_m": "male"}


def _rank_bias_kernel(inputs, cutoffs, magnitude, female, male, *, key):
    """The kernel of one output of :func:`rank_bias` (``rab``, ``arab_f``, …)."""
    cache_key = ("rank_bias", magnitude, female, male, tuple(cutoffs))
    if cache_key not in inputs.cache:
        groups = inputs.collection.groups
        if len(groups) != 2:
            raise InputError(f"RaB/ARaB need exactly two groups; the word list has {list(groups)}")
        collection = inputs.collection
        per_document = inputs.per_collection(
            ("magnitudes", magnitude),
            lambda: document_magnitudes(
                collection.group_counts,
                magnitude,
                collection.log_tf_sums() if magnitude == "tf_paper" else None,
            ),
        )
        magnitudes = inputs.ranked(per_document, 0.0)
        inputs.cache[cache_key] = rank_bias(
            magnitudes,
            inputs.list_lengths,
            cutoffs,
            inputs.group_column(female),
            inputs.group_column(male),
        )
    return inputs.cache[cache_key][key]


def _label(params: dict, *, base: str, suffix: str) -> str:
    """``rab_tc``, ``arab_bool_f``: the label names the magnitude (a function of the module, so
    that a measure pickles by reference, as the Dask engine ships it)."""
    return f"{base}_{params['magnitude']}{suffix}"


for _base, _text in (
    ("rab", "RaB@t = (1/t') Σ_{i≤t'} (mag_m(d_i) − mag_f(d_i))"),
    ("arab", "ARaB@t = (1/t') Σ_{x≤t'} RaB@x"),
):
    for _suffix, _group in _PARTS.items():
        _name = _base + _suffix
        register(
            Measure(
                name=_name,
                family="rab",
                definition=_text
                if not _group
                else f"the {_group} part of {_base.upper()}: (1/t') Σ mag_{_suffix[1]}",
                reference=_REFERENCE,
                higher_is=HigherIs.SIGNED if not _group else HigherIs.NEITHER,
                inputs=(Input.TERM_STATISTICS,),
                kernel=functools.partial(_rank_bias_kernel, key=_name),
                parameters=(MAGNITUDE, FEMALE, MALE),
                display={"rab": "RaB", "arab": "ARaB"}[_base] + _suffix,
                label=functools.partial(_label, base=_base, suffix=_suffix),
                label_parameters=("magnitude",),
            ),
            aliases={f"{_base}_{kind}{_suffix}": {"magnitude": kind} for kind in MAGNITUDES},
        )
