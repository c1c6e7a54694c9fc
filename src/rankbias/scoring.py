"""Score runs against per-document statistics: the tidy table every analysis consumes.

:func:`score_runs` takes one or more :class:`~rankbias.runs.Run` objects, the
:class:`~rankbias.text.DocStats` of the collection, a list of metric names from
:mod:`rankbias.metrics.registry` and cutoffs, and returns one row per
``(run, qid, metric, cutoff)`` with a ``value`` column.  Per run, the documents of every query
are gathered into one padded ``(n_queries, K)`` matrix of collection rows and each metric
family is computed for all queries and cutoffs in one call.  ``K`` is the largest cutoff or the
longest list, whichever is smaller: a cutoff ``k`` reads position ``min(k, length)`` (the
book's "Conventions" page), so a cutoff beyond every list costs no memory.  Each cutoff is
used once (``5,5`` gives one row per query, not two).

Nothing is dropped silently:

- documents of a run that the collection lacks are an :class:`~rankbias.errors.InputError`
  naming the first few and the count; ``missing="neutral"`` reproduces the released code
  (such a document has no group terms and ``ω = 1``) and the count per run is reported in
  ``frame.attrs["missing_documents"]``;
- a query with an empty list is an error; ``empty="nan"`` scores it as NaN and lists it in
  ``frame.attrs["empty_queries"]``;
- a query absent from a background run is an error (the released code prints and skips it);
- undefined values (NaN) follow ``METRICS.md`` and are counted per metric in
  ``frame.attrs["undefined_values"]``.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import pandas as pd

from rankbias.errors import InputError
from rankbias.metrics import fairr as fairr_family
from rankbias.metrics import rab as rab_family
from rankbias.metrics import texfair as texfair_family
from rankbias.metrics.ranked import pad_lists
from rankbias.metrics.registry import METRICS, get_metric
from rankbias.runs import Run
from rankbias.text import DocStats

__all__ = ["DEFAULT_METRICS", "DEFAULT_CUTOFFS", "score_runs", "parse_metric_list"]

DEFAULT_CUTOFFS = (5, 10, 20)
DEFAULT_METRICS = (
    "rab_tc",
    "rab_tf",
    "rab_bool",
    "arab_tc",
    "arab_tf",
    "arab_bool",
    "fairr",
    "nfairr",
    "awrf",
    "rbdf",
    "ted",
    "texfair",
    "texfair_norbdf",
)
MISSING_POLICIES = ("error", "neutral")
SHOW_IDS = 5


def parse_metric_list(text: str | None) -> tuple[str, ...]:
    """``"rab_tc,nfairr"`` → names, each checked against the registry; ``None`` → defaults."""
    if text is None or text.strip() == "":
        return DEFAULT_METRICS
    if text.strip() == "all":
        return tuple(METRICS)
    names = tuple(n.strip() for n in text.split(",") if n.strip())
    for name in names:
        get_metric(name)
    return names


def _ranked_rows(
    run: Run, stats: DocStats, width: int, missing: str, role: str
) -> tuple[np.ndarray, np.ndarray, int]:
    """``(n_queries, width)`` collection rows (``-1`` = padding or missing), lengths, n_missing.

    Every document of the run is looked up (missing ones are counted over the whole run, not
    only the part the cutoffs read), in one hash-table pass.
    """
    rows = stats.rows(run.docids)
    absent = np.flatnonzero(rows < 0)
    if len(absent) and missing == "error":
        ids = pd.unique(run.docids[absent])
        shown = ", ".join(map(str, ids[:SHOW_IDS]))
        raise InputError(
            f"{role} {run.name!r} names {len(ids)} document(s) absent from the collection "
            f"({len(absent)} retrieved row(s)), e.g. {shown}; expected every docid in the "
            "collection (or missing='neutral' to count them as neutral, as the released code does)"
        )
    matrix = pad_lists(run.offsets, rows, max(width, 1), fill=-1)
    return matrix, np.minimum(run.list_lengths, max(width, 1)), len(absent)


def _gather(per_doc: np.ndarray, rows: np.ndarray, absent_value) -> np.ndarray:
    """Per-document values at the given rows; row ``-1`` (missing/padding) gets ``absent_value``."""
    extended = np.concatenate([per_doc, np.full((1,) + per_doc.shape[1:], absent_value)], axis=0)
    return extended[rows]


def score_runs(
    runs: Run | Sequence[Run],
    stats: DocStats,
    metrics: Sequence[str] = DEFAULT_METRICS,
    cutoffs: Sequence[int] = DEFAULT_CUTOFFS,
    background: Run | str = "collection",
    tau: float = 1.0,
    strict: bool = False,
    targets: Sequence[float] | None = None,
    distance: str = "l1",
    female: str = "f",
    male: str = "m",
    missing: str = "error",
    empty: str = "error",
) -> pd.DataFrame:
    """Per-query values of ``metrics`` at ``cutoffs`` for each run, as a tidy table.

    Parameters are those of the registry (:data:`rankbias.metrics.registry.PARAMETERS`);
    ``background`` is a :class:`Run` (its documents for each query form ``S_q``) or
    ``"collection"``.  Returns columns ``run, qid, metric, cutoff, value``; ``attrs`` holds
    ``missing_documents`` (run → count), ``empty_queries`` (run → qids) and
    ``undefined_values`` ((run, metric) → number of NaN values).
    """
    runs = [runs] if isinstance(runs, Run) else list(runs)
    metrics = tuple(dict.fromkeys(metrics))  # each metric once, in the order given
    for name in metrics:
        get_metric(name)
    if missing not in MISSING_POLICIES:
        raise ValueError(f"missing must be one of {MISSING_POLICIES}, found {missing!r}")
    if empty not in ("error", "nan"):
        raise ValueError(f"empty must be 'error' or 'nan', found {empty!r}")
    cutoffs = tuple(dict.fromkeys(int(k) for k in cutoffs))  # each cutoff once, in order
    if not cutoffs or min(cutoffs) < 1:
        raise ValueError(f"cutoffs must be positive integers, found {list(cutoffs)}")
    if not runs:
        raise ValueError("no runs to score")
    names = [r.name for r in runs]
    if len(set(names)) != len(names):
        raise InputError(f"two runs share a name in {names}; expected distinct run names")
    families = {get_metric(m).family for m in metrics}
    groups = stats.groups
    target = np.full(len(groups), 1.0 / len(groups)) if targets is None else np.asarray(targets)

    omega = None
    if "fairr" in families:
        omega = fairr_family.neutrality(stats.group_counts, tau, target, strict)
    if "rab" in families:
        for label in (female, male):
            if label not in groups:
                raise InputError(
                    f"RaB/ARaB need groups {female!r} and {male!r}; the word list has "
                    f"{list(groups)} (set female=/male=)"
                )
        if len(groups) != 2:
            raise InputError(f"RaB/ARaB need exactly two groups; the word list has {list(groups)}")

    if isinstance(background, str) and background != "collection":
        raise ValueError(f"background must be a Run or 'collection', found {background!r}")
    cache: dict = {}
    frames = []
    report_missing: dict[str, int] = {}
    report_empty: dict[str, list[str]] = {}
    for run in runs:
        lengths_all = run.list_lengths
        empty_q = run.qids[lengths_all == 0]
        if len(empty_q) and empty == "error":
            raise InputError(
                f"run {run.name!r}: {len(empty_q)} query(ies) have no retrieved documents, e.g. "
                f"{', '.join(map(str, empty_q[:SHOW_IDS]))}; expected at least one document "
                "per query (or empty='nan')"
            )
        report_empty[run.name] = [str(q) for q in empty_q]
        longest = int(lengths_all.max()) if len(lengths_all) else 0
        width = min(max(cutoffs), max(longest, 1))  # memory grows with the lists, not k
        rows, list_lengths, n_missing = _ranked_rows(run, stats, width, missing, "run")
        report_missing[run.name] = n_missing
        values: dict[str, np.ndarray] = {}
        if "rab" in families:
            _rab_values(values, metrics, stats, rows, list_lengths, cutoffs, female, male, cache)
        if "fairr" in families:
            _fairr_values(
                values, run, stats, omega, rows, list_lengths, cutoffs, background, missing,
                report_missing, cache,
            )  # fmt: skip
        if "texfair" in families:
            counts = _gather(stats.group_counts, rows, 0)
            doc_len = _gather(stats.lengths, rows, 0)
            family = texfair_family.term_exposure_family(
                counts, doc_len, list_lengths, cutoffs, target
            )
            values.update({k: family[k] for k in ("rbdf", "ted", "texfair", "texfair_norbdf")})
            if "awrf" in metrics:
                values["awrf"] = texfair_family.awrf(
                    counts, list_lengths, cutoffs, target, distance
                )
        frames.append(_tidy(run, metrics, cutoffs, values))
    out = pd.concat(frames, ignore_index=True)
    out.attrs["missing_documents"] = report_missing
    out.attrs["empty_queries"] = report_empty
    undefined = out[out["value"].isna()].groupby(["run", "metric"]).size()
    out.attrs["undefined_values"] = {k: int(v) for k, v in undefined.items()}
    return out


def _rab_values(values, metrics, stats, rows, list_lengths, cutoffs, female, male, cache):
    f_col, m_col = stats.groups.index(female), stats.groups.index(male)
    kinds = {get_metric(m).name.split("_", 1)[1].removesuffix("_f").removesuffix("_m")
             for m in metrics if get_metric(m).family == "rab"}  # fmt: skip
    for kind in sorted(kinds):
        if ("magnitudes", kind) not in cache:  # per collection, shared by all runs
            log_sums = stats.log_tf_sums() if kind == "tf_paper" else None
            cache["magnitudes", kind] = rab_family.document_magnitudes(
                stats.group_counts, kind, log_sums
            )
        mags = cache["magnitudes", kind]
        result = rab_family.rank_bias(_gather(mags, rows, 0.0), list_lengths, cutoffs, f_col, m_col)
        for key, array in result.items():  # rab, arab, rab_f, rab_m, arab_f, arab_m
            base, _, part = key.partition("_")
            values[f"{base}_{kind}" + (f"_{part}" if part else "")] = array


def _fairr_values(
    values,
    run,
    stats,
    omega,
    rows,
    list_lengths,
    cutoffs,
    background,
    missing,
    report_missing,
    cache,
):
    omega_ranked = _gather(omega, rows, 1.0)  # a missing document counts as neutral
    values["fairr"] = fairr_family.fairr_at_cutoffs(omega_ranked, list_lengths, cutoffs)
    if isinstance(background, str):
        if "ideal_collection" not in cache:
            cache["ideal_collection"] = fairr_family.ideal_fairr_collection(omega, cutoffs)
        ideal = cache["ideal_collection"]
        ideal = np.broadcast_to(ideal[None, :], values["fairr"].shape).copy()
    else:
        present = np.isin(run.qids, background.qids)
        if not present.all():
            lacking = run.qids[~present]
            raise InputError(
                f"background run {background.name!r} has no documents for {len(lacking)} "
                f"query(ies) of run {run.name!r}, e.g. {', '.join(map(str, lacking[:SHOW_IDS]))}; "
                "expected a background list for every scored query"
            )
        sub = background.restrict(run.qids)
        depth = int(sub.list_lengths.max()) if len(sub.qids) else 0
        bg_rows, bg_lengths, n_missing = _ranked_rows(sub, stats, depth, missing, "background run")
        report_missing[f"{background.name} (background)"] = n_missing
        ideal = fairr_family.ideal_fairr(_gather(omega, bg_rows, 1.0), bg_lengths, cutoffs)
    values["ifairr"] = ideal
    values["nfairr"] = fairr_family.nfairr(values["fairr"], ideal)


def _tidy(run: Run, metrics, cutoffs, values: dict[str, np.ndarray]) -> pd.DataFrame:
    """One block per run: metric-major, then cutoff, then query (in the run's qid order)."""
    n_q, n_c, n_m = len(run.qids), len(cutoffs), len(metrics)
    stacked = np.stack([values[name].T for name in metrics])  # (metric, cutoff, query)
    return pd.DataFrame(
        {
            "run": np.full(n_m * n_c * n_q, run.name, dtype=object),
            "qid": np.tile(run.qids.astype(object), n_m * n_c),
            "metric": np.repeat(np.asarray(metrics, dtype=object), n_c * n_q),
            "cutoff": np.tile(np.repeat(np.asarray(cutoffs, dtype=np.int64), n_q), n_m),
            "value": stacked.reshape(-1),
        }
    )
