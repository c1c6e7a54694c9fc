"""Score runs with any registered measures: the tidy table every analysis consumes.

:func:`score_runs` takes one or more :class:`~rankbias.runs.Run` objects, the inputs the
requested measures declare (:class:`rankbias.metrics.measures.Input`: the collection's
:class:`~rankbias.text.DocStats` for the term statistics, relevance judgements, polarisation
scores, group membership, counterfactual runs), a list of measures — registered names or names
with parameters and cut-offs as :func:`rankbias.metrics.measures.parse_measure` reads them
(``texfair@10``, ``nfairr(tau=0)``) — and cut-offs, and returns one row per
``(run, qid, metric, cutoff)`` with a ``value`` column (``qid = "all"`` for a system-level
measure).  A measure given as ``name@k`` is computed at ``k`` only; the others at ``cutoffs``.

Per run, the documents of every query are gathered into one padded ``(n_queries, K)`` matrix
(:class:`RankedInputs`) and each measure's kernel is called once for all queries and cut-offs;
kernels of one family share their intermediate results.  ``K`` is the largest cut-off or the
longest list, whichever is smaller: a cut-off ``k`` reads position ``min(k, length)`` (the
book's "Conventions" page).  Each cut-off is used once (``5,5`` gives one row per query).

Nothing is dropped silently:

- a measure whose inputs were not supplied is an :class:`~rankbias.errors.InputError` naming
  the missing input;
- documents of a run that the collection lacks are an error naming the first few and the
  count; ``missing="neutral"`` reproduces the released code (such a document has no group
  terms and ``ω = 1``) and the count per run is reported in ``frame.attrs["missing_documents"]``;
  a ranked document without a polarisation score or group membership is an error;
- a query with an empty list is an error; ``empty="nan"`` scores it as NaN and lists it in
  ``frame.attrs["empty_queries"]``;
- a query absent from a background or counterfactual run is an error;
- undefined values (NaN, the undefined cases of the "Conventions" page) are counted per metric
  in ``frame.attrs["undefined_values"]``.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

import numpy as np
import pandas as pd

from rankbias.errors import InputError
from rankbias.metrics import rab as rab_family
from rankbias.metrics.measures import PARAMETERS, Input, MeasureRequest, parse_measure
from rankbias.metrics.ranked import pad_lists
from rankbias.runs import Run, arrow_docids
from rankbias.text import DocStats

__all__ = [
    "DEFAULT_MEASURES",
    "DEFAULT_CUTOFFS",
    "RankedInputs",
    "mean_per_system",
    "score_runs",
    "parse_metric_list",
    "required_inputs",
]

DEFAULT_CUTOFFS = (5, 10, 20)
DEFAULT_MEASURES = (
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
    """The system-level value of each measure: the mean of its per-query ``value`` per group of
    ``by`` (by default one row per run, measure and cut-off).

    The mean is over the defined values only (the book's Conventions page, section "Undefined
    values"); nothing is dropped silently.  Columns: the ``by`` columns, ``value`` (NaN when
    every value of the group is undefined), ``n_queries`` (the values averaged) and
    ``n_undefined`` (the NaN values left out).  Groups keep the order in which they first
    appear; a missing key (the ``<NA>`` cut-off of a measure without one) is a group of its own,
    and unused categories of a categorical column give no row.  A table lacking a column is an
    :class:`~rankbias.errors.InputError` naming it.
    """
    by = list(by)
    lacking = [c for c in [*by, "value"] if c not in table.columns]
    if lacking:
        raise InputError(
            f"mean_per_system: the table lacks column(s) {lacking}; found {list(table.columns)}"
        )
    values = table["value"].astype(np.float64)
    grouped = values.groupby([table[c] for c in by], dropna=False, sort=False, observed=True)
    counted = grouped.count()
    out = pd.DataFrame(
        {"value": grouped.mean(), "n_queries": counted, "n_undefined": grouped.size() - counted}
    )
    out["n_queries"] = out["n_queries"].astype(np.int64)
    out["n_undefined"] = out["n_undefined"].astype(np.int64)
    return out.reset_index()


def parse_metric_list(text: str | None) -> tuple[str, ...]:
    """``"rab_tc,nfairr(tau=0)@10"`` → the items, each checked by the parser; ``None`` → the
    defaults; ``"all"`` → every measure computable from term statistics alone (RaB/ARaB and
    their group parts with every magnitude, under their historical labels ``rab_tc`` …)."""
    from rankbias.metrics.measures import ALIASES, measures, split_measure_list

    if text is None or text.strip() == "":
        return DEFAULT_MEASURES
    if text.strip() == "all":
        names: list[str] = []
        for measure in measures():
            if measure.inputs != (Input.TERM_STATISTICS,):
                continue
            labels = [a for a, (target, _) in ALIASES.items() if target == measure.name]
            names += labels or [measure.name]
        return tuple(names)
    items = tuple(item for item in split_measure_list(text) if item)
    for item in items:
        parse_measure(item)
    return items


def _request(item: str | MeasureRequest) -> MeasureRequest:
    return item if isinstance(item, MeasureRequest) else parse_measure(item)


def required_inputs(metrics: Sequence[str | MeasureRequest]) -> dict[Input, list[str]]:
    """Input → the measures (as given) that need it."""
    needed: dict[Input, list[str]] = {}
    for item in metrics:
        for kind in _request(item).measure.inputs:
            needed.setdefault(kind, []).append(str(item))
    return needed


def _ranked_rows(
    run: Run, stats: DocStats, width: int, missing: str, role: str, known_rows=None
) -> tuple[np.ndarray, np.ndarray, int]:
    """``(n_queries, width)`` collection rows (``-1`` = padding or missing), lengths, n_missing.

    Every document of the run is looked up (missing ones are counted over the whole run, not
    only the part the cutoffs read), in one hash-table pass.
    """
    rows = stats.rows(run.docids) if known_rows is None else known_rows
    absent = np.flatnonzero(rows < 0)
    if len(absent) and missing == "error":
        ids = pd.unique(run.docids[absent])
        shown = _some_ids(ids)
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


class RankedInputs:
    """What a kernel reads for one run: the ranked lists as padded matrices, and the inputs.

    Every accessor gathers the per-document values of the first ``width`` documents of each
    list; a position beyond a list's length is padding.  ``cache`` is per run (results shared
    by the kernels of one family), ``collection_cache`` per collection (shared by all runs).
    """

    def __init__(self, run: Run, width: int, supplied: dict, options: dict, collection_cache):
        self.run = run
        self.width = max(width, 1)
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
            rows, _, n_missing = _ranked_rows(
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

    def ranked_magnitudes(self, kind: str) -> np.ndarray:
        """RaB/ARaB magnitudes of ``kind`` at every ranked position."""
        key = ("magnitudes", kind)
        if key not in self.collection_cache:
            log_sums = self.collection.log_tf_sums() if kind == "tf_paper" else None
            self.collection_cache[key] = rab_family.document_magnitudes(
                self.collection.group_counts, kind, log_sums
            )
        return self.ranked(self.collection_cache[key], 0.0)

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
        present = np.isin(run.qids, background.qids)
        if not present.all():
            lacking = run.qids[~present]
            raise InputError(
                f"background run {background.name!r} has no documents for {len(lacking)} "
                f"query(ies) of run {run.name!r}, e.g. {_some_ids(lacking)}; "
                "expected a background list for every scored query"
            )
        sub = background.restrict(run.qids)
        depth = int(sub.list_lengths.max()) if len(sub.qids) else 0
        rows, lengths, n_missing = _ranked_rows(
            sub, self.collection, depth, self.options["missing"], "background run"
        )
        self.missing_documents[f"{background.name} (background)"] = n_missing
        return _gather(per_document, rows, absent_value), lengths

    # ---- other inputs -------------------------------------------------------------------
    def _padded_docids(self) -> np.ndarray:
        return pad_lists(self.run.offsets, self.run.docids, self.width, fill=None)

    def _per_pair(self, kind: Input, table: pd.Series, what: str) -> np.ndarray:
        """Values of a (qid, docid)-indexed series at every ranked position (NaN = padding)."""
        qids = np.repeat(self.run.qids, self.run.list_lengths)
        keep = np.concatenate([np.arange(n) < self.width for n in self.run.list_lengths])
        index = pd.MultiIndex.from_arrays([qids[keep], self.run.docids[keep]])
        found = table.reindex(index)
        if found.isna().any():
            first = index[np.flatnonzero(found.isna().to_numpy())[0]]
            raise InputError(
                f"{kind.value}: run {self.run.name!r} ranks document {first[1]!r} for query "
                f"{first[0]!r}, which has no {what} ({int(found.isna().sum())} such position(s)"
                "); expected one for every ranked document within the cut-offs"
            )
        lengths = self.list_lengths
        offsets = np.concatenate([[0], np.cumsum(lengths)]).astype(np.int64)
        return pad_lists(offsets, found.to_numpy(dtype=np.float64), self.width, fill=np.nan)

    def polarisation(self) -> tuple[np.ndarray, np.ndarray]:
        """``(n_queries, K)`` polarisation scores in rank order, and the list lengths."""
        if "polarisation" not in self.cache:
            self.cache["polarisation"] = self._per_pair(
                Input.POLARISATION, self.supplied[Input.POLARISATION], "polarisation score"
            )
        return self.cache["polarisation"], self.list_lengths

    def membership(self) -> tuple[np.ndarray, np.ndarray]:
        """``(n_queries, K)`` protected flags in rank order, and the list lengths."""
        if "membership" not in self.cache:
            membership = self.supplied[Input.GROUP_MEMBERSHIP]
            docids = self._padded_docids()
            valid = np.arange(self.width)[None, :] < self.list_lengths[:, None]
            flags = np.zeros(docids.shape, dtype=bool)
            for i, j in zip(*np.nonzero(valid), strict=True):
                docid = docids[i, j]
                if docid not in membership:
                    raise InputError(
                        f"group_membership: run {self.run.name!r} ranks document {docid!r} "
                        f"(query {self.qids[i]!r}), which has no group membership; expected "
                        "one for every ranked document within the cut-offs"
                    )
                flags[i, j] = bool(membership[docid])
            self.cache["membership"] = flags
        return self.cache["membership"], self.list_lengths

    def relevance(self) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """``(n_queries, K)`` relevance (unjudged = not relevant), retrieval scores, lengths."""
        if "relevance" not in self.cache:
            qrels = self.supplied[Input.RELEVANCE]
            qids = np.repeat(self.run.qids, self.run.list_lengths)
            index = pd.MultiIndex.from_arrays([qids, self.run.docids])
            relevant = (qrels.reindex(index).fillna(0).to_numpy() > 0).astype(np.float64)
            self.cache["relevance"] = (
                pad_lists(self.run.offsets, relevant, self.width, fill=0.0) > 0,
                pad_lists(self.run.offsets, self.run.scores, self.width, fill=np.nan),
            )
        relevant, scores = self.cache["relevance"]
        return relevant, scores, self.list_lengths

    def counterfactual_lists(self) -> tuple[list[np.ndarray], list[np.ndarray]]:
        """Each query's list and its list on the counterfactual collection."""
        supplied = self.supplied[Input.COUNTERFACTUAL_RUN]
        other = supplied if isinstance(supplied, Run) else supplied.get(self.run.name)
        if other is None:
            raise InputError(
                f"counterfactual_run: no counterfactual run for run {self.run.name!r}; the "
                f"mapping has {sorted(supplied)}"
            )
        present = np.isin(self.run.qids, other.qids)
        if not present.all():
            lacking = self.run.qids[~present]
            raise InputError(
                f"counterfactual run {other.name!r} has no list for {len(lacking)} query(ies) "
                f"of run {self.run.name!r}, e.g. {_some_ids(lacking)}"
            )
        return [docs for _, docs, _ in self.run], [other.ranked(q) for q in self.run.qids]


def _supplied_inputs(stats, qrels, polarisation, group_membership, counterfactual) -> dict:
    supplied: dict = {}
    if stats is not None:
        supplied[Input.TERM_STATISTICS] = stats
    if qrels is not None:
        frame = pd.DataFrame(qrels)
        _require_columns(frame, ("qid", "docid", "relevance"), "qrels")
        supplied[Input.RELEVANCE] = frame.set_index(["qid", "docid"])["relevance"]
    if polarisation is not None:
        if isinstance(polarisation, pd.Series):
            supplied[Input.POLARISATION] = polarisation.astype(float)
        else:
            frame = pd.DataFrame(polarisation)
            _require_columns(frame, ("qid", "docid", "score"), "polarisation")
            supplied[Input.POLARISATION] = frame.set_index(["qid", "docid"])["score"].astype(float)
    if group_membership is not None:
        if isinstance(group_membership, pd.DataFrame):
            _require_columns(group_membership, ("docid", "protected"), "group_membership")
            group_membership = dict(
                zip(group_membership["docid"], group_membership["protected"], strict=True)
            )
        supplied[Input.GROUP_MEMBERSHIP] = group_membership
    if counterfactual is not None:
        supplied[Input.COUNTERFACTUAL_RUN] = counterfactual
    return supplied


def _require_columns(frame: pd.DataFrame, columns, what: str) -> None:
    lacking = [c for c in columns if c not in frame.columns]
    if lacking:
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
    tau: float = 1.0,
    strict: bool = False,
    targets: Sequence[float] | None = None,
    distance: str = "l1",
    female: str = "f",
    male: str = "m",
    missing: str = "error",
    empty: str = "error",
    *,
    qrels: pd.DataFrame | None = None,
    polarisation: pd.DataFrame | pd.Series | None = None,
    group_membership: Mapping[str, bool] | pd.DataFrame | None = None,
    counterfactual: Run | Mapping[str, Run] | None = None,
) -> pd.DataFrame:
    """Per-query values of ``metrics`` for each run, as a tidy table.

    ``metrics``: names or ``name(param=value,…)@k`` strings (or parsed
    :class:`~rankbias.metrics.measures.MeasureRequest`); a measure with ``@k`` is computed at
    ``k``, the others at every cut-off of ``cutoffs``.  The keyword options ``tau``,
    ``strict``, ``targets``, ``distance``, ``female``, ``male`` set the default of the
    parameter of that name for every measure that declares it (the ``metric`` label stays the
    measure's name); parameters given in a measure's name override them and appear in its
    label.  ``background`` is a :class:`Run` (its documents for each query form ``S_q`` of
    IFaiRR/NFaiRR) or ``"collection"``.  The inputs: ``stats`` (term statistics), ``qrels``,
    ``polarisation``, ``group_membership``, ``counterfactual`` — only those the measures
    declare are needed, and a missing one is an :class:`~rankbias.errors.InputError` naming it.

    Returns columns ``run, qid, metric, cutoff, value``; ``attrs`` holds ``missing_documents``
    (run → count), ``empty_queries`` (run → qids) and ``undefined_values``
    ((run, metric) → number of NaN values).
    """
    runs = [runs] if isinstance(runs, Run) else list(runs)
    requests = [_request(item) for item in dict.fromkeys(metrics)]
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
    if isinstance(background, str) and background != "collection":
        raise ValueError(f"background must be a Run or 'collection', found {background!r}")
    supplied = _supplied_inputs(stats, qrels, polarisation, group_membership, counterfactual)
    for request in requests:
        for kind in request.measure.inputs:
            if kind not in supplied:
                raise InputError(
                    f"measure {request} needs the input {kind.value}, which was not supplied; "
                    f"expected {INPUT_ARGUMENTS[kind]}"
                )
    options = {
        "tau": tau,
        "strict": strict,
        "targets": None if targets is None else tuple(float(t) for t in targets),
        "distance": distance,
        "female": female,
        "male": male,
        "background": "run" if isinstance(background, Run) else "collection",
    }
    plan = []  # (label, measure, parameters, cutoffs)
    for request in requests:
        parameters = request.parameters(options)
        for name, value in parameters.items():
            PARAMETERS[name].check(value)
        wanted = (request.cutoff,) if request.cutoff is not None else cutoffs
        plan.append((request.label, request.measure, parameters, wanted))
    labels = [(label, k) for label, _, _, wanted in plan for k in wanted]
    if len(set(labels)) != len(labels):
        seen = {x for x in labels if labels.count(x) > 1}
        raise ValueError(f"measures {sorted(seen)} are requested twice (same label and cut-off)")
    widest = max(k for *_, wanted in plan for k in wanted)
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
                f"{_some_ids(empty_q)}; expected at least one document "
                "per query (or empty='nan')"
            )
        report_empty[run.name] = [str(q) for q in empty_q]
        longest = int(lengths_all.max()) if len(lengths_all) else 0
        width = min(widest, max(longest, 1))  # memory grows with the lists, not k
        inputs = RankedInputs(run, width, supplied, runner_options, collection_cache)
        if Input.TERM_STATISTICS in supplied:
            inputs.ranked_group_counts()  # every retrieved document is looked up once
        blocks = []
        for label, measure, parameters, wanted in plan:
            values = np.asarray(measure.kernel(inputs, wanted, **parameters), dtype=np.float64)
            blocks.append(_block(run, label, measure.level, wanted, values))
        report_missing.update(inputs.missing_documents)
        frames.append(pd.concat(blocks, ignore_index=True))
    out = pd.concat(frames, ignore_index=True)
    out.attrs["missing_documents"] = report_missing
    out.attrs["empty_queries"] = report_empty
    undefined = out[out["value"].isna()].groupby(["run", "metric"]).size()
    out.attrs["undefined_values"] = {k: int(v) for k, v in undefined.items()}
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
