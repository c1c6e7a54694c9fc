r"""Do bias metrics agree on which queries are biased?  (Klasnja et al. (2022), RQ1, Fig. 1.)

A metric's value ``v`` becomes a *bias level* (higher = more biased) by its direction
(:data:`DIRECTIONS`): ``1 − v`` if higher is fairer (fairr, nfairr, texfair…), ``v`` if higher
is more biased (awrf, ted), ``|v|`` if signed (rab_*, arab_*); registry entries that are not
fairness scores are refused, and a metric outside the registry needs e.g.
``directions={"duo": "biased"}``.  Per run and cutoff each metric orders the ``n`` queries from
most to least biased (ties by ``qid``) and puts position ``i`` in bin ``⌊i · n_bins / n⌋ + 1``;
the overlap of metrics ``a``, ``b`` in bin ``k`` is

.. math::  O_k(a, b) = |A_k \cap B_k| \,/\, |A_k| ,

``|A_k| / n`` by chance.  Intervals are bootstrap percentiles (queries resampled ``n_boot``
times with ``numpy.random.default_rng(seed)``, each replicate binned anew, copies in qid order).

Input: the tidy ``run, qid, metric, cutoff, value`` of :func:`rankbias.scoring.score_runs`, one
run and cutoff (``run=``/``cutoff=``) or each (``by=("run", "cutoff")``).  A query with a NaN or
absent value is left out and counted in ``attrs`` (``undefined_values``, ``absent_values``,
``excluded_queries``, ``n_queries``; per group with ``by``), or with ``undefined="error"`` an
:class:`~rankbias.errors.InputError`.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from itertools import combinations
from typing import NamedTuple

import numpy as np
import pandas as pd

from rankbias.errors import (
    InputError,
    expect_choice,
    expect_count,
    expect_fraction,
    expect_frame,
    expect_items,
    expect_seed,
    expect_type,
)
from rankbias.metrics.measures import HigherIs, higher_is

__all__ = [
    "DIRECTIONS",
    "bias_direction",
    "bias_levels",
    "bias_ranks",
    "rank_bins",
    "query_bins",
    "consistency_bins",
]

#: the kinds of direction a metric can have, and how each maps a value to a bias level
DIRECTIONS: dict[str, Callable[[np.ndarray], np.ndarray]] = {
    "fairer": lambda v: 1.0 - v,
    "biased": lambda v: v,
    "signed": np.abs,
}
_FROM_REGISTRY = {
    HigherIs.FAIRER: "fairer",
    HigherIs.MORE_BIASED: "biased",
    HigherIs.SIGNED: "signed",
}
_COLUMNS = ("run", "qid", "metric", "cutoff", "value")
_UNDEFINED_POLICIES = ("exclude", "error")
_CHUNK_CELLS = 4_000_000  # bootstrap replicates are processed in chunks of about this many values


def bias_direction(metric: str, directions: Mapping[str, str] | None = None) -> str:
    """``"fairer"``, ``"biased"`` or ``"signed"`` for a metric: ``directions`` first, then the
    registry; a registry metric that is not a fairness score, or an unknown metric without a
    given direction, is a ValueError saying why."""
    if directions is not None:
        expect_type(directions, "directions", Mapping, "a mapping metric → direction")
    if directions and metric in directions:
        return expect_choice(directions[metric], f"directions[{metric!r}]", tuple(DIRECTIONS))
    direction = higher_is(metric)
    if direction is None:
        raise ValueError(
            f"metric {metric!r} is not in the registry; give its direction, e.g. "
            f"directions={{{metric!r}: 'biased'}} (one of {list(DIRECTIONS)})"
        )
    if direction not in _FROM_REGISTRY:
        raise ValueError(
            f"metric {metric!r} has no bias level: its registry direction is "
            f"{direction.value!r}; expected a fairness score (higher is fairer, more biased, "
            "or signed)"
        )
    return _FROM_REGISTRY[direction]


def bias_levels(
    per_query: pd.DataFrame,
    metrics: Sequence[str],
    directions: Mapping[str, str] | None = None,
) -> pd.DataFrame:
    """The rows of ``per_query`` for ``metrics`` (every run and cutoff) with a ``bias`` column,
    the bias level of the module docstring (NaN stays NaN)."""
    _check_columns(per_query)
    metrics = _check_metrics(metrics, directions, minimum=1)
    rows = per_query[per_query["metric"].isin(metrics)].copy()
    _check_present(rows, metrics)
    values = rows["value"].to_numpy(dtype=np.float64)
    bias = np.empty_like(values)
    for metric in metrics:
        mask = (rows["metric"] == metric).to_numpy()
        bias[mask] = DIRECTIONS[bias_direction(metric, directions)](values[mask])
    rows["bias"] = bias
    return rows.reset_index(drop=True)


def query_bins(
    per_query: pd.DataFrame,
    metrics: Sequence[str],
    n_bins: int = 4,
    run: str | None = None,
    cutoff: int | None = None,
    by: Sequence[str] | None = None,
    directions: Mapping[str, str] | None = None,
    undefined: str = "exclude",
) -> pd.DataFrame:
    """Each query's bias level, rank (1 = most biased) and bin (1 … ``n_bins``) per metric, as
    ``[by…,] qid, metric, bias, rank, bin``; ``attrs`` as in the module docstring."""

    def one(table: _BiasTable) -> pd.DataFrame:
        ranks = bias_ranks(table.bias)
        n, m = table.bias.shape
        return pd.DataFrame(
            {
                "qid": np.repeat(table.qids, m),
                "metric": np.tile(table.metrics, n),
                "bias": table.bias.ravel(),
                "rank": ranks.ravel() + 1,
                "bin": rank_bins(ranks, n_bins).ravel() + 1,
            }
        )

    return _analyse(per_query, metrics, run, cutoff, by, directions, undefined, 1, n_bins, one)


def consistency_bins(
    per_query: pd.DataFrame,
    metrics: Sequence[str],
    n_bins: int = 4,
    seed: int = 0,
    n_boot: int = 1000,
    confidence: float = 0.95,
    run: str | None = None,
    cutoff: int | None = None,
    by: Sequence[str] | None = None,
    directions: Mapping[str, str] | None = None,
    undefined: str = "exclude",
) -> pd.DataFrame:
    """The overlap ``O_k`` of each unordered pair of ``metrics`` in each bin, as ``[by…,]
    metric_a, metric_b, bin, n_in_bin, overlap, overlap_low, overlap_high, chance`` (the
    interval at ``confidence``, NaN when ``n_boot = 0``)."""
    n_boot = expect_count(n_boot, "n_boot", 0)
    expect_fraction(confidence, "confidence")
    if n_boot:
        expect_seed(seed)  # each table's replicates are drawn with default_rng(seed)

    def one(table: _BiasTable) -> pd.DataFrame:
        n, m = table.bias.shape
        pairs = list(combinations(range(m), 2))
        sizes = np.bincount(np.arange(n) * n_bins // n, minlength=n_bins)
        point = _overlaps(rank_bins(bias_ranks(table.bias), n_bins)[None], pairs, n_bins)[0] / sizes
        low = high = np.full_like(point, np.nan)
        if n_boot:
            rng = np.random.default_rng(seed)
            replicates = []
            for sample in _bootstrap_samples(table.bias, n_boot, rng):
                counts = _overlaps(rank_bins(bias_ranks(sample), n_bins), pairs, n_bins)
                replicates.append(counts / sizes)
            alpha = 1.0 - confidence
            low, high = np.quantile(np.concatenate(replicates), [alpha / 2, 1 - alpha / 2], axis=0)
        return pd.DataFrame(
            {
                "metric_a": np.repeat([table.metrics[a] for a, _ in pairs], n_bins),
                "metric_b": np.repeat([table.metrics[b] for _, b in pairs], n_bins),
                "bin": np.tile(np.arange(1, n_bins + 1), len(pairs)),
                "n_in_bin": np.tile(sizes, len(pairs)),
                "overlap": point.ravel(),
                "overlap_low": low.ravel(),
                "overlap_high": high.ravel(),
                "chance": np.tile(sizes / n, len(pairs)),
            }
        )

    return _analyse(per_query, metrics, run, cutoff, by, directions, undefined, 2, n_bins, one)


def bias_ranks(bias: np.ndarray) -> np.ndarray:
    """0-based rank of each bias level along axis ``-2`` (0 = most biased); the rows must be in
    qid order, so that the stable sort breaks ties by qid (the module docstring's binning)."""
    bias = _queries_by_metrics(bias, "bias")
    if np.isnan(bias).any():
        raise ValueError("bias: expected bias levels, found NaN (leave such queries out first)")
    order = np.argsort(-bias, axis=-2, kind="stable")
    ranks = np.empty_like(order)
    positions = np.arange(bias.shape[-2])[:, None]
    np.put_along_axis(ranks, order, np.broadcast_to(positions, order.shape), axis=-2)
    return ranks


def rank_bins(ranks: np.ndarray, n_bins: int) -> np.ndarray:
    """0-based bin of each 0-based rank along axis ``-2`` (:func:`bias_ranks`):
    ``⌊rank · n_bins / n⌋``."""
    expect_count(n_bins, "n_bins")
    ranks = _queries_by_metrics(ranks, "ranks")
    return ranks * n_bins // ranks.shape[-2]


def _queries_by_metrics(values, name: str) -> np.ndarray:
    values = np.asarray(values)
    if values.ndim < 2 or values.shape[-2] == 0:
        raise ValueError(f"{name}: expected an array of queries × metrics, found {values.shape}")
    return values


# ---- the shared machinery ---------------------------------------------------------------------
class _BiasTable(NamedTuple):
    """Bias levels of one (run, cutoff): rows = queries in qid order, columns = metrics."""

    qids: np.ndarray
    metrics: tuple[str, ...]
    bias: np.ndarray
    report: dict


def _check_columns(per_query: pd.DataFrame) -> None:
    expect_frame(per_query, "per_query", expected="a tidy table of score_runs()")
    missing = [c for c in _COLUMNS if c not in per_query.columns]
    if missing:
        raise InputError(
            f"per-query table lacks column(s) {missing}; expected the tidy columns "
            f"{list(_COLUMNS)} (as rankbias.scoring.score_runs returns)"
        )


def _check_metrics(metrics, directions, minimum: int) -> tuple[str, ...]:
    if isinstance(metrics, str):
        raise TypeError(f"metrics must be a sequence of names, found the string {metrics!r}")
    metrics = tuple(expect_items(metrics, "metrics", "a list of measure names"))
    if len(set(metrics)) != len(metrics):
        raise ValueError(f"metrics repeat in {list(metrics)}; expected distinct names")
    if len(metrics) < minimum:
        raise ValueError(f"expected at least {minimum} metric(s), found {list(metrics)}")
    for metric in metrics:
        bias_direction(metric, directions)
    return metrics


def _check_present(rows: pd.DataFrame, metrics: tuple[str, ...], where: str = "") -> None:
    present = set(rows["metric"].unique())
    lacking = [m for m in metrics if m not in present]
    if lacking:
        raise InputError(
            f"per-query table{where} has no rows for metric(s) {lacking}; it holds "
            f"{sorted(present) or 'none of the requested metrics'}"
        )


def _bias_table(rows, metrics, directions, undefined, n_bins: int, where: str) -> _BiasTable:
    """The checked bias table of one group's rows."""
    _check_present(rows, metrics, where)
    combos = rows[["run", "cutoff"]].drop_duplicates()
    if len(combos) > 1:
        shown = ", ".join(f"({r!r}, {c})" for r, c in combos.head(6).itertuples(index=False))
        raise InputError(
            f"per-query table{where} holds {len(combos)} (run, cutoff) combinations, e.g. "
            f"{shown}; expected one: pass run= and cutoff=, or by=('run', 'cutoff')"
        )
    duplicated = rows.duplicated(["qid", "metric"], keep=False)
    if duplicated.any():
        first = rows[duplicated].iloc[0]
        raise InputError(
            f"per-query table{where} has {int(duplicated.sum())} rows sharing (qid, metric), "
            f"e.g. qid {first['qid']!r} metric {first['metric']!r}; expected one row each"
        )
    wide = rows.pivot(index="qid", columns="metric", values="value")
    wide.index = wide.index.astype(str)
    wide = wide.sort_index().reindex(columns=list(metrics))
    present = pd.crosstab(rows["qid"].astype(str), rows["metric"]).reindex(
        index=wide.index, columns=list(metrics), fill_value=0
    )
    absent = present.to_numpy() == 0
    values = wide.to_numpy(dtype=np.float64)
    nan = np.isnan(values) & ~absent
    bad = np.isnan(values).any(axis=1)
    qids = wide.index.to_numpy(dtype=object)
    report = {
        "undefined_values": {m: int(c) for m, c in zip(metrics, nan.sum(axis=0), strict=True)},
        "absent_values": {m: int(c) for m, c in zip(metrics, absent.sum(axis=0), strict=True)},
        "excluded_queries": [str(q) for q in qids[bad]],
        "n_queries": int((~bad).sum()),
    }
    if bad.any() and undefined == "error":
        raise InputError(
            f"per-query table{where}: {int(bad.sum())} query(ies) have an undefined (NaN) or "
            f"absent value for some of {list(metrics)}, e.g. {', '.join(qids[bad][:5])}; "
            "expected a value for every query and metric (or undefined='exclude')"
        )
    if (~bad).sum() < max(n_bins, 2):
        raise InputError(
            f"per-query table{where}: {int((~bad).sum())} query(ies) have a value for every "
            f"metric of {list(metrics)}; expected at least {max(n_bins, 2)}"
        )
    values = values[~bad]
    bias = np.column_stack(
        [DIRECTIONS[bias_direction(m, directions)](values[:, j]) for j, m in enumerate(metrics)]
    )
    return _BiasTable(qids[~bad], metrics, bias, report)


def _analyse(per_query, metrics, run, cutoff, by, directions, undefined, minimum, n_bins, one):
    """Select, check, build the bias table(s), apply ``one`` per group, gather ``attrs``."""
    expect_count(n_bins, "n_bins")
    expect_choice(undefined, "undefined", _UNDEFINED_POLICIES)
    _check_columns(per_query)
    metrics = _check_metrics(metrics, directions, minimum)
    rows = per_query[per_query["metric"].isin(metrics)]
    if run is not None and not isinstance(run, str):
        raise TypeError(f"run: expected a run name or None, found {type(run).__name__}")
    if run is not None:
        rows = rows[rows["run"] == run]
    if cutoff is not None:
        rows = rows[rows["cutoff"] == cutoff]
    # plain columns, without the input's attrs (pandas deep-copies attrs on every operation)
    rows = pd.DataFrame({c: rows[c].to_numpy() for c in rows.columns})
    if rows.empty and (run is not None or cutoff is not None):
        raise InputError(
            f"per-query table has no rows for run={run!r}, cutoff={cutoff!r} and metrics "
            f"{list(metrics)}; runs: {sorted(map(str, pd.unique(per_query['run'])))}, cutoffs: "
            f"{sorted(pd.unique(per_query['cutoff']).tolist())}"
        )

    def apply(group: pd.DataFrame, where: str) -> pd.DataFrame:
        table = _bias_table(group, metrics, directions, undefined, n_bins, where)
        out = one(table)
        out.attrs = {**out.attrs, **table.report}
        return out

    if not by:
        return apply(rows, "")
    by = [by] if isinstance(by, str) else list(by)
    unknown = [c for c in by if c not in per_query.columns]
    if unknown:
        raise InputError(f"by names column(s) {unknown} the per-query table lacks")
    _check_present(rows, metrics)
    parts, reports = [], {}
    for key, group in rows.groupby(by, sort=True):
        where = " (" + ", ".join(f"{c}={k!r}" for c, k in zip(by, key, strict=True)) + ")"
        part = apply(group, where)
        reports[key], part.attrs = part.attrs, {}
        for c, k in reversed(list(zip(by, key, strict=True))):
            part.insert(0, c, k)
        parts.append(part)
    out = pd.concat(parts, ignore_index=True)
    out.attrs = reports
    return out


def _overlaps(bins: np.ndarray, pairs, n_bins: int) -> np.ndarray:
    """``(replicates, pairs, n_bins)`` counts of queries both metrics of a pair put in a bin."""
    n_rep = bins.shape[0]
    out = np.empty((n_rep, len(pairs), n_bins), dtype=np.int64)
    offset = (np.arange(n_rep) * n_bins)[:, None]
    for j, (a, b) in enumerate(pairs):
        same = bins[..., a] == bins[..., b]
        keys = (bins[..., a] + offset)[same]
        out[:, j, :] = np.bincount(keys, minlength=n_rep * n_bins).reshape(n_rep, n_bins)
    return out


def _bootstrap_samples(bias: np.ndarray, n_boot: int, rng: np.random.Generator):
    """Chunks ``(c, n, m)`` of resampled bias tables; indices sorted so copies stay in qid order."""
    n, m = bias.shape
    chunk = max(1, _CHUNK_CELLS // (n * m))
    for done in range(0, int(n_boot), chunk):
        index = np.sort(rng.integers(n, size=(min(chunk, int(n_boot) - done), n)))  # each row
        yield bias[index]
