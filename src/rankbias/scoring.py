"""Score runs with any registered measures: the tidy table every analysis consumes.

:func:`score_runs` returns one row per ``(run, qid, metric, cutoff)`` (``qid = "all"`` for a
system-level measure).  Per run, the documents of every query form one padded ``(n_queries, K)``
matrix (:class:`RankedInputs`; ``K`` is the largest cut-off or the longest list, whichever is
smaller) and each measure's kernel is called once for all queries and cut-offs; a cut-off ``k``
reads position ``min(k, length)`` (the book's "Conventions" page).  Nothing is dropped silently:
a missing input, a document absent from the collection (unless ``missing="neutral"``, as the
released code), an empty list (unless ``empty="nan"``) or a query absent from a background or
counterfactual run is an :class:`~rankbias.errors.InputError`; what was tolerated and the
undefined values are counted in the frame's ``attrs``.  The engines' shared steps
(``collection_aggregates``, ``restrict_inputs``, ``tidy_table``) are not in ``__all__``.
"""

from __future__ import annotations

import os
from collections.abc import Mapping, Sequence
from typing import NamedTuple

import numpy as np
import pandas as pd

from rankbias.errors import (
    InputError,
    expect_choice,
    expect_count,
    expect_frame,
    expect_items,
    expect_type,
)
from rankbias.metrics.measures import Input, MeasureRequest, parse_measure
from rankbias.metrics.ranked import pad_lists
from rankbias.runs import Run
from rankbias.text import DocStats, arrow_docids

__all__ = [
    "DEFAULT_MEASURES",
    "DEFAULT_CUTOFFS",
    "RankedInputs",
    "mean_per_system",
    "score_runs",
    "plan_measures",
    "parse_metric_list",
    "required_inputs",
]

DEFAULT_CUTOFFS = (5, 10, 20)
DEFAULT_MEASURES = tuple(
    "rab_tc rab_tf rab_bool arab_tc arab_tf arab_bool fairr nfairr awrf rbdf ted texfair "
    "texfair_norbdf".split()
)
MISSING_POLICIES = ("error", "neutral")
SHOW_IDS = 5
SHOW_ID_CHARS = 40


def _some_ids(ids) -> str:
    """The first few ids for a message, each cut to ``SHOW_ID_CHARS`` characters."""
    shown = [str(i) for i in ids[:SHOW_IDS]]
    return ", ".join(i if len(i) <= SHOW_ID_CHARS else f"{i[:SHOW_ID_CHARS]}…" for i in shown)


SYSTEM_QID = "all"

#: How to supply each input to :func:`score_runs`.
INPUT_ARGUMENTS = {
    Input.TERM_STATISTICS: "stats (the collection's DocStats)",
    Input.RELEVANCE: "qrels (a table qid, docid, relevance)",
    Input.POLARISATION: "polarisation (a table qid, docid, score)",
    Input.GROUP_MEMBERSHIP: "group_membership (docid → protected, or a table docid, protected)",
    Input.COUNTERFACTUAL_RUN: "counterfactual (a Run, or run name → Run)",
}


def mean_per_system(
    table: pd.DataFrame, by: Sequence[str] = ("run", "metric", "cutoff")
) -> pd.DataFrame:
    """The system-level value of each measure: the mean of the defined per-query ``value``s of
    each group of ``by`` (the book's Conventions page, "Undefined values").

    Columns: the ``by`` columns, ``value`` (NaN when every value of the group is undefined),
    ``n_queries`` (the values averaged) and ``n_undefined`` (the NaN values left out).  Groups
    keep their first order; a missing key (the ``<NA>`` cut-off) is a group of its own; unused
    categories give no row.  A lacking column is an :class:`~rankbias.errors.InputError`.
    """
    by = expect_items(by, "by", "a list of column names")
    expect_frame(table, "table", expected="a tidy table of score_runs()")
    if lacking := [c for c in [*by, "value"] if c not in table.columns]:
        raise InputError(
            f"mean_per_system: the table lacks column(s) {lacking}; found {list(table.columns)}"
        )
    values = table["value"].astype(np.float64)
    grouped = values.groupby([table[c] for c in by], dropna=False, sort=False, observed=True)
    counted = grouped.count()
    out = pd.DataFrame(
        {"value": grouped.mean(), "n_queries": counted, "n_undefined": grouped.size() - counted}
    )
    return out.reset_index()


def parse_metric_list(text: str | None) -> tuple[MeasureRequest, ...]:
    """``"rab_tc,nfairr(tau=0)@10"`` → the parsed measures; ``None`` → the defaults;
    ``"all"`` → every measure computable from term statistics alone (RaB/ARaB and their group
    parts with every magnitude, under their historical labels ``rab_tc`` …)."""
    from rankbias.metrics.measures import ALIASES, measures, parse_measures

    if text is None:
        return tuple(parse_measure(m) for m in DEFAULT_MEASURES)
    if expect_type(text, "text", str, "a comma-separated measure list").strip() == "all":
        names: list[str] = []
        for measure in (m for m in measures() if m.inputs == (Input.TERM_STATISTICS,)):
            labels = [a for a, (target, _) in ALIASES.items() if target == measure.name]
            names += labels or [measure.name]
        return tuple(parse_measure(name) for name in names)
    return tuple(parse_measures(text))


def required_inputs(metrics: Sequence[str | MeasureRequest]) -> dict[Input, list[str]]:
    """Input → the measures (as given) that need it."""
    needed: dict[Input, list[str]] = {}
    for item in _measure_items(metrics):
        for kind in parse_measure(item).measure.inputs:
            needed.setdefault(kind, []).append(str(item))
    return needed


def _measure_items(metrics) -> list:
    if isinstance(metrics, str | MeasureRequest) or not hasattr(metrics, "__iter__"):
        raise TypeError(f"metrics: expected a list of measures, found {metrics!r}")
    return list(metrics)


class PlannedMeasure(NamedTuple):
    """One measure of a scoring call: its request, all its parameter values and its cut-offs."""

    request: MeasureRequest
    parameters: dict
    cutoffs: tuple[int, ...]

    @property
    def label(self) -> str:
        return self.request.label


def plan_measures(
    metrics: Sequence[str | MeasureRequest],
    cutoffs: Sequence[int] = DEFAULT_CUTOFFS,
    spellings: Sequence[str] | None = None,
) -> list[PlannedMeasure]:
    """What :func:`score_runs` computes, in its order: each measure once (a measure with
    ``@k`` at ``k``, the others at every cut-off of ``cutoffs``, each cut-off once).  A measure
    requested twice at a cut-off, however spelled (``nfairr(tau=0)``, ``NFaiRR(tau=0.0)``), is
    a ValueError naming the spellings (``spellings``: the texts the measures were parsed from,
    if not ``metrics`` themselves)."""
    items = _measure_items(metrics)
    given = items if spellings is None else expect_items(spellings, "spellings")
    if len(given) != len(items):
        raise ValueError(f"spellings: found {len(given)}; expected one per measure ({len(items)})")
    requests = [parse_measure(item) for item in items]
    if not requests:
        raise ValueError("metrics: expected at least one measure, found none")
    cutoffs = _check_cutoffs(cutoffs)
    plan = [
        PlannedMeasure(r, r.parameters(), (r.cutoff,) if r.cutoff is not None else cutoffs)
        for r in requests
    ]
    labels = [(entry.label, k) for entry in plan for k in entry.cutoffs]
    if twice := sorted({x for x in labels if labels.count(x) > 1}):
        named = [
            repr(str(text))
            for text, entry in zip(given, plan, strict=True)
            if any((entry.label, k) in twice for k in entry.cutoffs)
        ]
        raise ValueError(
            f"metrics: {', '.join(f'{label}@{k}' for label, k in twice)} requested more than "
            f"once (by {', '.join(named)}); expected each measure once at each cut-off"
        )
    return plan


def _check_cutoffs(cutoffs: Sequence[int]) -> tuple[int, ...]:
    """Each cut-off once, in order; every one an integer ≥ 1 (``2.7`` is refused)."""
    from rankbias.metrics.measures import CUTOFF

    if isinstance(cutoffs, str | bytes) or not isinstance(cutoffs, Sequence | np.ndarray):
        raise TypeError(f"cutoffs: expected a sequence of integers ≥ 1, found {cutoffs!r}")
    try:
        checked = tuple(dict.fromkeys(CUTOFF.check(k) for k in cutoffs))
    except (TypeError, ValueError) as exc:
        raise type(exc)(f"cutoffs: {exc}") from None
    if None in checked:  # the cut-off parameter's "none" (the scorer's cut-offs) is no cut-off
        raise TypeError(f"cutoffs: expected integers ≥ 1, found None in {list(cutoffs)}")
    if not checked:
        raise ValueError("cutoffs: expected at least one integer ≥ 1, found none")
    return checked


def collection_aggregates(plan: Sequence[PlannedMeasure], stats: DocStats | None) -> dict:
    """``{(label, cutoffs): value}``: what the measures of ``plan`` need from the whole
    collection (a measure's ``aggregate``, such as NFaiRR's ideal under its τ), from ``stats``;
    every engine computes them here and hands them to the scoring of each part."""
    out = {}
    for entry in plan:
        measure = entry.request.measure
        if measure.aggregate is not None and stats is not None:  # else: a missing input
            out[entry.label, entry.cutoffs] = measure.aggregate(
                stats, entry.cutoffs, **entry.parameters
            )
    return out


def _ranked_rows(
    run: Run, stats: DocStats, width: int, missing: str, role: str, known_rows=None
) -> tuple[np.ndarray, int]:
    """``(n_queries, width)`` collection rows (``-1`` = padding or missing) and the number of
    missing documents over the whole run (not only the part the cut-offs read)."""
    rows = stats.rows(arrow_docids(run)) if known_rows is None else known_rows
    absent = np.flatnonzero(rows < 0)
    if len(absent) and missing == "error":
        ids = pd.unique(run.docids[absent])
        raise InputError(
            f"{role} {run.name!r} names {len(ids)} document(s) absent from the collection "
            f"({len(absent)} retrieved row(s)), e.g. {_some_ids(ids)}; expected every docid in the "
            "collection, or missing='neutral' (--missing neutral) to count them as neutral"
        )
    matrix = pad_lists(run.offsets, rows, max(width, 1), fill=-1)
    return matrix, len(absent)


def _gather(per_doc: np.ndarray, rows: np.ndarray, absent_value) -> np.ndarray:
    """Per-document values at the given rows; row ``-1`` (missing/padding) gets ``absent_value``
    (in the type both share). Only the gathered rows are copied, never ``per_doc`` (one row
    per document of the collection)."""
    absent = rows < 0
    dtype = np.result_type(per_doc.dtype, np.full(1, absent_value).dtype)
    if not len(per_doc):  # an empty collection: every row is absent
        return np.full(rows.shape + per_doc.shape[1:], absent_value, dtype=dtype)
    out = per_doc.take(np.where(absent, 0, rows), axis=0).astype(dtype, copy=False)
    out[absent] = absent_value
    return out


class RankedInputs:
    """What a kernel reads for one run: the first ``width`` documents of each list as padded
    matrices, and the inputs.  ``cache`` is per run (results shared by the kernels of one
    family), ``collection_cache`` per collection (shared by all runs)."""

    def __init__(self, run: Run, width: int, supplied: dict, options: dict, collection_cache):
        self.run = expect_type(run, "run", Run, "a Run")
        self.width = max(expect_count(width, "width", 0), 1)
        self.qids = run.qids
        self.n_queries = len(run.qids)
        self.list_lengths = np.minimum(run.list_lengths, self.width)
        self.supplied = supplied
        self.options = options
        self.cache: dict = {}
        self.collection_cache = collection_cache
        self.missing_documents: dict[str, int] = {}

    # ---- term statistics ---------------------------------------------------------------
    @property
    def collection(self) -> DocStats:
        return self.supplied[Input.TERM_STATISTICS]

    def _rows(self) -> np.ndarray:
        if "rows" not in self.cache:
            rows, n_missing = _ranked_rows(
                self.run,
                self.collection,
                self.width,
                self.options["missing"],
                "run",
                self.collection_cache.get("rows", {}).get(self.run.name),
            )
            self.cache["rows"] = rows
            self.missing_documents[self.run.name] = n_missing
        return self.cache["rows"]

    def ranked(self, per_document: np.ndarray, absent_value) -> np.ndarray:
        """``per_document`` values (first axis = collection rows) at every ranked position."""
        return _gather(per_document, self._rows(), absent_value)

    def ranked_group_counts(self) -> tuple[np.ndarray, np.ndarray]:
        """``(n_queries, K, n_groups)`` magnitudes ``M_g(d_r)`` and ``(n_queries, K)`` lengths."""
        if "group_counts" not in self.cache:
            self.cache["group_counts"] = (
                self.ranked(self.collection.group_counts, 0),
                self.ranked(self.collection.lengths, 0),
            )
        return self.cache["group_counts"]

    def per_collection(self, key, compute):
        """``compute()`` once per collection (shared by the runs of one call), under ``key``."""
        if key not in self.collection_cache:
            self.collection_cache[key] = compute()
        return self.collection_cache[key]

    def group_column(self, label: str) -> int:
        groups = self.collection.groups
        if label not in groups:
            raise InputError(
                f"group {label!r} is not in the word list, which has groups {list(groups)} "
                "(set female=/male=)"
            )
        return groups.index(label)

    def background_ranked(self, per_document: np.ndarray, absent_value):
        """Values of the background run's documents for each query, and the list lengths."""
        background = self.options["background"]
        if not isinstance(background, Run):
            raise InputError(
                "background=run needs a background run; expected score_runs(background=<Run>)"
            )
        run = self.run
        lacking = run.qids[~np.isin(run.qids, background.qids)]
        if len(lacking):
            raise InputError(
                f"background: run {background.name!r} has no documents for {len(lacking)} "
                f"query(ies) of run {run.name!r}, e.g. {_some_ids(lacking)}; "
                "expected a background list for every scored query"
            )
        sub = background.restrict(run.qids)
        depth = int(sub.list_lengths.max()) if len(sub.qids) else 0
        rows, n_missing = _ranked_rows(
            sub, self.collection, depth, self.options["missing"], "background: run"
        )
        self.missing_documents[f"{background.name} (background of {run.name})"] = n_missing
        return _gather(per_document, rows, absent_value), sub.list_lengths

    # ---- other inputs -------------------------------------------------------------------
    def _per_pair(self, kind: Input, what: str) -> np.ndarray:
        """Values of the supplied ``kind`` (a series by (qid, docid) or by docid) at every ranked
        position (NaN = padding), computed once per run."""
        if kind in self.cache:
            return self.cache[kind]
        table = self.supplied[kind]
        qids = np.repeat(self.run.qids, self.run.list_lengths)
        keep = np.concatenate([np.arange(n) < self.width for n in self.run.list_lengths])
        qids, docids = qids[keep], self.run.docids[keep]
        if table.index.nlevels == 1:  # one score per document, whatever the query
            found = table.reindex(pd.Index(docids))
        else:
            found = table.reindex(pd.MultiIndex.from_arrays([qids, docids]))
        if found.isna().any():
            first, argument = np.flatnonzero(found.isna())[0], INPUT_ARGUMENTS[kind].split()[0]
            raise InputError(
                f"{argument}: run {self.run.name!r} ranks document {docids[first]!r} for query "
                f"{qids[first]!r}, which has no {what} ({int(found.isna().sum())} such "
                "position(s)); expected one for every ranked document within the cut-offs"
            )
        offsets = np.concatenate([[0], np.cumsum(self.list_lengths)])
        values = pad_lists(offsets, found.to_numpy(), self.width, fill=np.nan)  # floats
        self.cache[kind] = values
        return values

    def polarisation(self) -> tuple[np.ndarray, np.ndarray]:
        """``(n_queries, K)`` polarisation scores in rank order (NaN past a list's end), and
        the list lengths."""
        return self._per_pair(Input.POLARISATION, "polarisation score"), self.list_lengths

    def membership(self) -> tuple[np.ndarray, np.ndarray]:
        """``(n_queries, K)`` protected flags in rank order (False past a list's end), and the
        list lengths."""
        return self._per_pair(Input.GROUP_MEMBERSHIP, "group membership") == 1.0, self.list_lengths

    def relevance(self) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """``(n_queries, K)`` relevance (a grade > 0; unjudged = not relevant) and retrieval
        scores in rank order (False and NaN past a list's end), and the list lengths."""
        if Input.RELEVANCE not in self.cache:
            qrels = self.supplied[Input.RELEVANCE]
            qids = np.repeat(self.run.qids, self.run.list_lengths)
            index = pd.MultiIndex.from_arrays([qids, self.run.docids])
            relevant = qrels.reindex(index).to_numpy() > 0  # unjudged: NaN > 0 is False
            self.cache[Input.RELEVANCE] = (
                pad_lists(self.run.offsets, relevant, self.width, fill=False),
                pad_lists(self.run.offsets, self.run.scores, self.width, fill=np.nan),
            )
        relevant, scores = self.cache[Input.RELEVANCE]
        return relevant, scores, self.list_lengths

    def counterfactual_lists(self) -> tuple[list[np.ndarray], list[np.ndarray]]:
        """Each query's list and its list on the counterfactual collection."""
        supplied = self.supplied[Input.COUNTERFACTUAL_RUN]
        other = supplied if isinstance(supplied, Run) else supplied.get(self.run.name)
        if other is None:
            raise InputError(
                f"counterfactual: no counterfactual run for run {self.run.name!r}; the "
                f"mapping has {sorted(supplied)}"
            )
        lacking = self.run.qids[~np.isin(self.run.qids, other.qids)]
        if len(lacking):
            raise InputError(
                f"counterfactual: run {other.name!r} has no list for {len(lacking)} query(ies) "
                f"of run {self.run.name!r}, e.g. {_some_ids(lacking)}"
            )
        return [docs for _, docs, _ in self.run], [other.ranked(q) for q in self.run.qids]


def _supplied_inputs(stats, qrels, polarisation, group_membership, counterfactual) -> dict:
    supplied: dict = {}
    if stats is not None:
        supplied[Input.TERM_STATISTICS] = expect_type(stats, "stats", DocStats, "a DocStats")
    if qrels is not None:
        supplied[Input.RELEVANCE] = _keyed_numbers(qrels, "relevance", "qrels", ["qid", "docid"])
    if polarisation is not None:
        supplied[Input.POLARISATION] = _keyed_numbers(polarisation, "score", "polarisation")
    if group_membership is not None:
        supplied[Input.GROUP_MEMBERSHIP] = _protected_flags(group_membership)
    if counterfactual is not None:
        kinds = counterfactual.values() if isinstance(counterfactual, Mapping) else [counterfactual]
        for run in kinds:
            expect_type(run, "counterfactual", Run, "a Run, or a mapping run name -> Run")
        supplied[Input.COUNTERFACTUAL_RUN] = counterfactual
    return supplied


def _keyed_numbers(given, column: str, what: str, keys=None) -> pd.Series:
    """``given`` by docid or (qid, docid) (a mapping, a series, or a table of ``keys`` and
    ``column``) as floats; a key given twice or a value not a number is refused, naming it."""
    if isinstance(given, str | bytes | os.PathLike):
        raise TypeError(
            f"{what}: expected a table, a Series or a mapping, found the {type(given).__name__} "
            f"{given!r:.60} (a file is read first: rankbias.runs.read_qrels, "
            "rankbias.annotations.read_polarisation)"
        )
    if not isinstance(given, Mapping | pd.Series):
        frame = pd.DataFrame(given)
        keys = keys or (["qid", "docid"] if "qid" in frame.columns else ["docid"])
        _require_columns(frame, (*keys, column), what)
        given = frame.set_index(keys)[column]
    given = pd.Series(given)
    numbers = pd.to_numeric(given, errors="coerce").astype(float)
    for wrong, found in (
        (given.index.duplicated(), "is given twice; expected each once"),
        (numbers.isna() & given.notna(), "has {column} {value!r}; expected a number"),
    ):
        if wrong.any():
            key, value = given.index[wrong][0], given[wrong].iloc[0]
            raise InputError(f"{what}: {key!r} " + found.format(column=column, value=value))
    return numbers


def _protected_flags(membership) -> pd.Series:
    """``group_membership`` (docid → protected, or a table ``docid, protected``) as a float
    series by docid: 1 protected, 0 not.  Only booleans and the integers 0 and 1 are flags
    (NaN, ``"no"``, ``2`` are refused, naming the docid); a docid given twice is refused."""
    if isinstance(membership, pd.DataFrame):
        _require_columns(membership, ("docid", "protected"), "group_membership")
        docids, values = list(membership["docid"]), list(membership["protected"])
    elif isinstance(membership, Mapping):
        docids, values = list(membership), list(membership.values())
    else:
        raise TypeError(
            "group_membership: expected a mapping docid -> protected or a table with columns "
            f"docid, protected; found {type(membership).__name__}"
        )
    for docid, value in zip(docids, values, strict=True):
        if not (isinstance(value, int | np.integer | np.bool_) and value in (0, 1)):
            raise InputError(
                f"group_membership: document {docid!r} has protected = {value!r}; expected "
                "True/False or 1/0"
            )
    flags = pd.Series(np.asarray(values, dtype=np.float64), index=pd.Index(docids))
    if flags.index.has_duplicates:
        twice = flags.index[flags.index.duplicated()][0]
        raise InputError(f"group_membership: document {twice!r} is given twice; expected once")
    return flags


def _require_columns(frame: pd.DataFrame, columns, what: str) -> None:
    """``frame`` (a table: each caller has made or checked it) has ``columns``, or the error."""
    if lacking := [c for c in columns if c not in frame.columns]:
        raise InputError(
            f"{what}: lacks column(s) {lacking}; expected columns {list(columns)}, found "
            f"{list(frame.columns)}"
        )


def score_runs(
    runs: Run | Sequence[Run],
    stats: DocStats | None = None,
    metrics: Sequence[str | MeasureRequest] = DEFAULT_MEASURES,
    cutoffs: Sequence[int] = DEFAULT_CUTOFFS,
    background: Run | str = "collection",
    missing: str = "error",
    empty: str = "error",
    *,
    qrels: pd.DataFrame | None = None,
    polarisation: pd.DataFrame | pd.Series | None = None,
    group_membership: Mapping[str, bool] | pd.DataFrame | None = None,
    counterfactual: Run | Mapping[str, Run] | None = None,
    aggregates: Mapping | None = None,
) -> pd.DataFrame:
    """Per-query values of ``metrics`` for each run, as a tidy table.

    ``metrics``: names or ``name(param=value,…)@k`` strings, or parsed
    :class:`~rankbias.metrics.measures.MeasureRequest` values; a measure with ``@k`` is computed
    at ``k``, the others at every cut-off of ``cutoffs``.  ``background`` is a :class:`Run` (its
    documents for each query form ``S_q`` of IFaiRR/NFaiRR with ``background=run``) or
    ``"collection"``.  Inputs: ``stats`` (term statistics), ``qrels``, ``polarisation`` (a table
    ``qid, docid, score``, or ``docid, score`` for query-independent scores),
    ``group_membership``, ``counterfactual``; only those the measures declare are needed, and a
    missing one is an :class:`~rankbias.errors.InputError` naming it.  ``aggregates``: for
    engines that score in parts, :func:`collection_aggregates` of the whole collection
    (default: computed from ``stats``).

    Returns columns ``run, qid, metric, cutoff, value``; ``attrs`` holds ``missing_documents``
    (run, and ``"<background> (background of <run>)"``, → count), ``empty_queries`` (run →
    qids) and ``undefined_values`` ((run, metric) → number of NaN values).
    """
    runs = (
        [runs] if isinstance(runs, Run) else expect_items(runs, "runs", "a Run or a list of them")
    )
    expect_choice(missing, "missing", MISSING_POLICIES)
    expect_choice(empty, "empty", ("error", "nan"))
    plan = plan_measures(metrics, cutoffs)
    if not runs:
        raise ValueError("runs: expected at least one Run, found none")
    if bad := [type(r).__name__ for r in runs if not isinstance(r, Run)]:
        raise TypeError(f"runs: expected Run objects, found {bad[0]}")
    names = [r.name for r in runs]
    if len(set(names)) != len(names):
        raise InputError(f"two runs share a name in {names}; expected distinct run names")
    if isinstance(background, str) and background != "collection":
        raise ValueError(f"background: expected a Run or 'collection', found {background!r}")
    if not isinstance(background, str | Run):
        raise TypeError(f"background: expected a Run or 'collection', found {background!r}")
    supplied = _supplied_inputs(stats, qrels, polarisation, group_membership, counterfactual)
    for entry in plan:
        for kind in entry.request.measure.inputs:
            if kind not in supplied:
                raise InputError(
                    f"measure {entry.request} needs the input {kind.value}, which was not "
                    f"supplied; expected {INPUT_ARGUMENTS[kind]}"
                )
        if entry.parameters.get("background") == "run" and not isinstance(background, Run):
            raise InputError(
                f"measure {entry.request} reads a background run, which was not supplied; "
                "expected background=<Run> (--background RUN)"
            )
    if aggregates is None:
        aggregates = collection_aggregates(plan, stats)
    widest = max(k for entry in plan for k in entry.cutoffs)
    collection_cache: dict = {}
    if Input.TERM_STATISTICS in supplied and len(runs) > 1:  # one lookup for every run
        looked_up = supplied[Input.TERM_STATISTICS].rows_of_each([arrow_docids(r) for r in runs])
        collection_cache["rows"] = dict(zip(names, looked_up, strict=True))
    frames = []
    report_missing: dict[str, int] = {}
    report_empty: dict[str, list[str]] = {}
    runner_options = {"missing": missing, "background": background}
    for run in runs:
        lengths_all = run.list_lengths
        empty_q = run.qids[lengths_all == 0]
        if len(empty_q) and empty == "error":
            raise InputError(
                f"run {run.name!r}: {len(empty_q)} query(ies) have no retrieved documents, e.g. "
                f"{_some_ids(empty_q)}; expected at least one document per query (or empty='nan')"
            )
        report_empty[run.name] = [str(q) for q in empty_q]
        longest = int(lengths_all.max()) if len(lengths_all) else 0
        width = min(widest, max(longest, 1))  # memory grows with the lists, not k
        inputs = RankedInputs(run, width, supplied, runner_options, collection_cache)
        if Input.TERM_STATISTICS in supplied:
            inputs.ranked_group_counts()  # every retrieved document is looked up once
        for entry in plan:
            measure = entry.request.measure
            extra = {}
            if measure.aggregate is not None:
                if (entry.label, entry.cutoffs) not in aggregates:
                    raise ValueError(
                        f"aggregates: nothing for {entry.label} at cut-offs {entry.cutoffs}; "
                        "expected collection_aggregates() of the same measures and cut-offs"
                    )
                extra["aggregate"] = aggregates[entry.label, entry.cutoffs]
            values = measure.kernel(inputs, entry.cutoffs, **extra, **entry.parameters)
            values = np.asarray(values, dtype=np.float64)
            frames.append(_block(run, entry.label, measure.level, entry.cutoffs, values))
        report_missing.update(inputs.missing_documents)
    return tidy_table(frames, report_missing, report_empty)


def tidy_table(frames: Sequence[pd.DataFrame], missing: dict, empty: dict) -> pd.DataFrame:
    """``frames`` as one table with the ``attrs`` of :func:`score_runs`: ``missing`` and
    ``empty`` as given, and the NaN values counted per (run, metric)."""
    out = pd.concat(frames, ignore_index=True)
    out.attrs["missing_documents"] = missing
    out.attrs["empty_queries"] = empty
    undefined = out[out["value"].isna()].groupby(["run", "metric"]).size()
    out.attrs["undefined_values"] = {k: int(v) for k, v in undefined.items()}
    return out


def restrict_inputs(run: Run, inputs: Mapping[str, object]) -> dict:
    """The part of :func:`score_runs`' keyword inputs (``qrels``, ``polarisation``,
    ``group_membership``, ``counterfactual``, ``background``) that scoring ``run`` — one part of
    a larger run — reads: engines ship only that with each part."""
    out = dict(inputs)
    qids = pd.Index(run.qids)
    docids = pd.Index(pd.unique(run.docids))
    qrels = out.get("qrels")
    if qrels is not None:
        frame = pd.DataFrame(qrels)
        if "qid" in frame.columns:
            out["qrels"] = frame[frame["qid"].isin(qids)]
    polarisation = out.get("polarisation")
    if isinstance(polarisation, pd.DataFrame):
        key = "qid" if "qid" in polarisation.columns else "docid"
        if key in polarisation.columns:
            wanted = qids if key == "qid" else docids
            out["polarisation"] = polarisation[polarisation[key].isin(wanted)]
    membership = out.get("group_membership")
    if isinstance(membership, pd.DataFrame) and "docid" in membership.columns:
        out["group_membership"] = membership[membership["docid"].isin(docids)]
    elif isinstance(membership, Mapping):
        out["group_membership"] = {d: membership[d] for d in docids if d in membership}
    counterfactual = out.get("counterfactual")
    if isinstance(counterfactual, Run):
        out["counterfactual"] = counterfactual.restrict(run.qids)
    elif isinstance(counterfactual, Mapping) and run.name in counterfactual:
        out["counterfactual"] = {run.name: counterfactual[run.name].restrict(run.qids)}
    background = out.get("background")
    if isinstance(background, Run):
        out["background"] = background.restrict(run.qids)
    return out


def _block(run: Run, label: str, level: str, cutoffs, values: np.ndarray) -> pd.DataFrame:
    """Rows of one measure for one run: cut-off-major, then query (in the run's qid order)."""
    if level == "system":
        qids = np.array([SYSTEM_QID], dtype=object)
        values = values.reshape(1, len(cutoffs))
    else:
        qids = run.qids.astype(object)
    n_q, n_c = len(qids), len(cutoffs)
    if values.shape != (n_q, n_c):
        raise AssertionError(
            f"kernel of {label} returned shape {values.shape}; expected {(n_q, n_c)}"
        )
    return pd.DataFrame(
        {
            "run": np.full(n_q * n_c, run.name, dtype=object),
            "qid": np.tile(qids, n_c),
            "metric": np.full(n_q * n_c, label, dtype=object),
            "cutoff": np.repeat(np.asarray(cutoffs, dtype=np.int64), n_q),
            "value": values.T.reshape(-1),
        }
    )
