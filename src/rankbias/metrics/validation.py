"""Checks of the array inputs of the metric kernels (padded matrices, :mod:`.ranked`).

A wrong shape, a list length outside ``0…width``, or a NaN, infinite or negative count at a real
position would give a number that looks valid (a NaN count read as "no group terms" is a fair
document), so it is an :class:`~rankbias.errors.InputError` (a ``ValueError``) naming the
argument, the position and what was expected.  Padding is not checked.  Undefined *results*
(an empty list, a zero normaliser) are not input errors: the kernels return NaN.
"""

from __future__ import annotations

import numbers
from collections.abc import Sequence

import numpy as np

from rankbias.errors import InputError, expect_count

__all__ = [
    "as_array", "as_integers", "check_ranked", "check_list_lengths", "check_values",
    "check_targets", "check_tau",
]  # fmt: skip


def as_array(values, name: str, ndim: int | None = None, dtype=np.float64) -> np.ndarray:
    """``values`` as an array of ``ndim`` dimensions (any if ``None``; an error names the
    argument and what it found; ``None`` is not read as NaN)."""
    if values is None:
        raise TypeError(f"{name}: expected numbers, found None")
    try:
        array = np.asarray(values, dtype=dtype)
    except (TypeError, ValueError) as exc:
        raise InputError(f"{name}: expected numbers; {exc}") from None
    if ndim is not None and array.ndim != ndim:
        raise InputError(f"{name}: expected a {ndim}-D array, found shape {array.shape}")
    return array


def as_integers(values, name: str, ndim: int | None = None, item: str = "position") -> np.ndarray:
    """``values`` as an ``int64`` array of ``ndim`` dimensions.  Whole floats (``3.0``) are
    integers; a fraction, NaN or infinity is an error naming the first and its ``item`` (its
    index, or indices), and so is an array of anything but numbers: none is truncated."""
    raw = as_array(values, name, ndim, dtype=None)
    if raw.dtype.kind == "f":
        bad = ~np.isfinite(raw) | (raw != np.round(raw))
        if bad.any():
            where = np.argwhere(bad)[0]
            at = int(where[0]) if raw.ndim == 1 else tuple(where.tolist())
            found = raw[tuple(where)]
            raise InputError(f"{name}: expected integers, found {found} for {item} {at}")
    elif raw.dtype.kind not in "iub":
        raise InputError(f"{name}: expected integers, found dtype {raw.dtype}")
    return raw.astype(np.int64)


def check_list_lengths(list_lengths, n_queries: int, width: int) -> np.ndarray:
    """``list_lengths`` as ``int64``: one per query, integers in ``0…width``."""
    raw = np.asarray(list_lengths)
    if raw.shape != (n_queries,):
        raise InputError(
            f"list_lengths: expected shape ({n_queries},) (one length per query), found {raw.shape}"
        )
    lengths = as_integers(raw, "list_lengths", item="query")
    outside = (lengths < 0) | (lengths > width)
    if outside.any():
        i = int(np.flatnonzero(outside)[0])
        raise InputError(
            f"list_lengths: query {i} has length {lengths[i]}; expected 0…{width} "
            f"(the matrix holds {width} position(s) per list)"
        )
    return lengths


def check_ranked(values, name: str, list_lengths, ndim: int, non_negative=False, within=None):
    """``(array, lengths, valid)`` of a padded ``(n_queries, K, …)`` input: ``ndim`` dimensions,
    list lengths in ``0…K``, finite (and ``non_negative``, or in the closed interval ``within``)
    values at the real positions."""
    array = as_array(values, name, ndim)
    lengths = check_list_lengths(list_lengths, array.shape[0], array.shape[1])
    valid = np.arange(array.shape[1])[None, :] < lengths[:, None]
    check_values(array, name, valid, non_negative=non_negative, within=within)
    return array, lengths, valid


def check_values(
    array: np.ndarray, name: str, valid: np.ndarray | None = None, non_negative=False, within=None
) -> None:
    """Refuse NaN/inf (and, with ``non_negative``, negative values; with ``within=(low, high)``,
    values outside it) at the ``valid`` positions, a boolean mask over the leading axes of
    ``array`` (``None``: every position)."""
    bad = ~np.isfinite(array := as_array(array, name))
    if non_negative:
        bad |= array < 0
    if within is not None:
        bad |= (array < within[0]) | (array > within[1])
    if not bad.any():
        return
    if valid is not None:
        mask = valid.reshape(valid.shape + (1,) * (array.ndim - valid.ndim))
        bad &= mask
        if not bad.any():
            return
    where = tuple(int(i) for i in np.argwhere(bad)[0])
    expected = "finite, non-negative numbers" if non_negative else "finite numbers"
    if within is not None:
        expected = f"numbers from {within[0]:g} to {within[1]:g}"
    raise InputError(
        f"{name}: found {array[where]} at index {where} ({int(bad.sum())} such value(s)); "
        f"expected {expected}"
    )


def check_targets(targets: Sequence[float] | None, n_groups: int, name: str = "targets"):
    """Target shares: ``n_groups`` finite non-negative numbers summing to 1 (uniform if None)."""
    if targets is None:
        return np.full(expect_count(n_groups, "n_groups", 1), 1.0 / n_groups)
    target = as_array(targets, name)
    if (
        target.shape != (n_groups,)
        or not np.isfinite(target).all()
        or (target < 0).any()
        or not np.isclose(target.sum(), 1.0)
    ):
        raise InputError(
            f"{name} must be {n_groups} non-negative shares summing to 1, found {target.tolist()}"
        )
    return target


def check_tau(tau: float) -> float:
    """The neutrality threshold ``τ``: a finite number ≥ 0 (not a string or a bool)."""
    if isinstance(tau, bool | np.bool_) or not isinstance(tau, numbers.Real):
        raise TypeError(f"tau: expected a finite number ≥ 0, found {tau!r}")
    value = float(tau)
    if not np.isfinite(value) or value < 0:
        raise InputError(f"tau: expected a finite number ≥ 0, found {tau!r}")
    return value
