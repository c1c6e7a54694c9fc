"""Ranked lists as padded matrices, position discounts and cut-off indexing.

Row ``i`` of a ``(n_queries, K)`` matrix holds the first ``K`` entries of query ``i``'s list
(document rows, or values gathered through them), ``list_lengths[i]`` of them real, the rest
padding.  A cutoff ``k`` keeps the first ``k`` documents, a shorter list is used as it is (the
book's Conventions page, section "Ranked lists and cut-offs"), so a measure at cutoff ``k``
reads position ``min(k, length) - 1`` of a cumulative sum: all cutoffs in one pass.
"""

from __future__ import annotations

import functools
from collections.abc import Sequence

import numpy as np

from rankbias.errors import InputError, expect_count, expect_items
from rankbias.metrics.validation import as_array, as_integers

__all__ = ["position_discount", "valid_mask", "cutoff_positions", "pad_lists", "at_cutoffs"]


def position_discount(n: int) -> np.ndarray:
    """``v_r = 1 / log2(r + 1)`` for ranks ``r = 1..n`` (the book's Conventions page, section
    "Position discount")."""
    return 1.0 / np.log2(np.arange(2, expect_count(n, "n", 0) + 2, dtype=np.float64))


def valid_mask(list_lengths: np.ndarray, width: int) -> np.ndarray:
    """``(n_queries, width)`` boolean: position ``j`` holds a real document of the list."""
    lengths = as_array(list_lengths, "list_lengths", 1, dtype=None)
    return np.arange(expect_count(width, "width", 0))[None, :] < lengths[:, None]


def cutoff_positions(list_lengths: np.ndarray, cutoffs: Sequence[int]) -> np.ndarray:
    """``(n_queries, n_cutoffs)`` effective depth ``t' = min(k, length)`` of each cutoff."""
    raw = np.asarray(cutoffs := expect_items(cutoffs, "cutoffs", "a list of cut-offs"))
    if raw.dtype.kind == "f" and not (np.isfinite(raw).all() and (raw == np.round(raw)).all()):
        raise ValueError(f"cutoffs must be positive integers, found {list(cutoffs)}")
    if raw.dtype.kind not in "iuf" and raw.size:
        raise ValueError(f"cutoffs must be positive integers, found {list(cutoffs)}")
    cut = raw.astype(np.int64)
    if cut.ndim != 1 or len(cut) == 0 or (cut < 1).any():
        raise ValueError(f"cutoffs must be positive integers, found {list(cutoffs)}")
    lengths = as_integers(list_lengths, "list_lengths", 1, "query")
    if (lengths < 0).any():
        i = int(np.flatnonzero(lengths < 0)[0])
        raise InputError(f"list_lengths: expected lengths ≥ 0, found {lengths[i]} for query {i}")
    return np.minimum(cut[None, :], lengths[:, None])


def at_cutoffs(cumulative: np.ndarray, depth: np.ndarray) -> np.ndarray:
    """A cumulative ``(n_queries, K, ...)`` array read at depth ``t'`` per query and cutoff:
    ``(n_queries, n_cutoffs, ...)``, NaN where ``t' = 0`` (empty lists)."""
    # read as given: only the entries read are converted to float
    cumulative = as_array(cumulative, "cumulative", dtype=None)
    depth = as_integers(depth, "depth", 2, "(query, cut-off)")
    if cumulative.dtype.kind not in "biuf" or cumulative.ndim < 2:
        raise InputError(
            f"cumulative: expected numbers of shape (n_queries, K, ...), found "
            f"{cumulative.dtype} of shape {cumulative.shape}"
        )
    n_q = cumulative.shape[0]
    if depth.shape[0] != n_q:
        raise InputError(f"depth: expected {n_q} rows (one per query), found {depth.shape[0]}")
    if (depth < 0).any():
        raise InputError(f"depth: expected depths ≥ 0, found {depth.min()}")
    if cumulative.shape[1] == 0:
        return np.full((n_q, depth.shape[1]) + cumulative.shape[2:], np.nan)
    index = np.clip(depth - 1, 0, cumulative.shape[1] - 1)
    out = cumulative[np.arange(n_q)[:, None], index].astype(np.float64)
    out[depth == 0] = np.nan
    return out


def pad_lists(offsets: np.ndarray, values: np.ndarray, width: int, fill=-1) -> np.ndarray:
    """Scatter flat per-list values (CSR ``offsets``) into ``(n_lists, width)``, padded; only
    the first ``width`` entries of each list are kept."""
    offsets, values = as_integers(offsets, "offsets", 1), as_array(values, "values", 1, None)
    lengths, width = np.diff(offsets), expect_count(width, "width", 0)
    if len(offsets) == 0 or offsets[0] != 0 or offsets[-1] != len(values) or (lengths < 0).any():
        raise InputError(
            f"offsets: expected 0 = o[0] ≤ o[1] ≤ … ≤ o[-1] = {len(values)} (the number of "
            f"values), found {offsets.tolist()[:8]}{' …' if len(offsets) > 8 else ''}"
        )
    n = len(lengths)
    out = np.full((n, width), fill, dtype=values.dtype)
    owner = np.repeat(np.arange(n), lengths)
    position = np.arange(len(values)) - np.repeat(offsets[:-1], lengths)
    keep = position < width
    out[owner[keep], position[keep]] = values[keep]
    return out


def per_list_kernel(accessor: str, function):
    """A measure kernel: ``function(values[i, :k'], **parameters)`` for every query ``i`` and
    cutoff ``k``, NaN for an empty list; ``inputs.<accessor>()`` gives ``(values, lengths)``."""
    return functools.partial(_per_list, accessor=accessor, function=function)


def _per_list(inputs, cutoffs, *, accessor, function, **parameters):
    values, lengths = getattr(inputs, accessor)()
    out = np.full((len(lengths), len(cutoffs)), np.nan)
    for i, length in enumerate(lengths):
        for j, k in enumerate(cutoffs):
            depth = min(int(k), int(length))
            if depth:
                out[i, j] = function(values[i, :depth], **parameters)
    return out
