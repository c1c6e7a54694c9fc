"""TREC run files (``qid Q0 docid rank score tag``) and qrels (``qid iteration docid
relevance``), validated, as arrays.

A ranked list is ordered **score descending, ties by docid ascending** (the book's Conventions
page, "Ranked lists and cut-offs"); the rank column and the line order are validated, never
trusted for ordering.  A :class:`Run` holds its lists in CSR style, so cutting and tidying are
array operations.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pandas as pd

from rankbias.errors import (
    InputError,
    expect_choice,
    expect_count,
    expect_items,
    expect_type,
    located,
)
from rankbias.inputs import DECIMAL, Source, iter_lines, read_bytes, refuse_inner_bom, source_name
from rankbias.text import DocidField, in_arrow
from rankbias.text import arrow_docids as arrow_docids  # a run's, for its callers

__all__ = ["Run", "read_run", "write_run", "read_qrels", "write_qrels"]


@dataclass(frozen=True, eq=False)
class Run:
    """A ranked list per query: ``qids`` ascending (string order); the list of query ``i`` is
    rows ``offsets[i]:offsets[i + 1]`` of ``docids`` and ``scores`` (``float64``).  ``name``
    (default: the file's stem) is the ``run`` column of tidy tables.  ``docids`` may be given
    as an Arrow string array: it is made an object array of ``str`` when first read."""

    name: str
    qids: np.ndarray
    offsets: np.ndarray
    docids: np.ndarray = DocidField()
    scores: np.ndarray

    def __post_init__(self) -> None:
        for name in ("qids", "offsets", "docids", "scores"):
            value = self.__dict__[name]  # docids as given, not made Python strings
            if not (name == "docids" and in_arrow(value)):
                expect_type(value, name, np.ndarray, "an array (Run.from_frame builds them)")
        n, n_docids = len(self.qids), len(self.__dict__["docids"])
        if self.offsets.shape != (n + 1,):
            raise ValueError(f"offsets must have shape ({n + 1},), found {self.offsets.shape}")
        if n_docids != len(self.scores) or self.offsets[-1] != n_docids:
            raise ValueError("docids, scores and offsets[-1] must agree in length")

    def _docids_where(self, keep: np.ndarray):
        """``docids[keep]`` (a boolean mask), still in Arrow if the run holds them so."""
        docids = self.__dict__["docids"]
        if not in_arrow(docids):
            return docids[keep]
        import pyarrow as pa

        return docids.filter(pa.array(keep))

    # ---- construction ------------------------------------------------------------------
    @classmethod
    def from_frame(cls, frame: pd.DataFrame, name: str, order: str = "score") -> Run:
        """A run from a table ``qid, docid, score``; a docid repeated within a query is an error.

        ``order="score"`` sorts each list by the convention; ``order="given"`` keeps the rows'
        order within each query, as the released research scripts do (only to reproduce them).
        """
        expect_choice(order, "order", ("score", "given"))
        expect_type(frame, "frame", pd.DataFrame, "a DataFrame qid, docid, score")
        if not isinstance(name, str) or not name.strip():
            raise TypeError(f"name: expected the run's name, a non-empty str, found {name!r}")
        twice = sorted({c for c in frame.columns[frame.columns.duplicated()]})
        if twice:
            raise InputError(f"run {name!r}: the table has column(s) {twice} twice; expected once")
        missing = {"qid", "docid", "score"} - set(frame.columns)
        if missing:
            raise InputError(f"run {name!r}: table lacks column(s) {sorted(missing)}")
        for column in ("qid", "docid"):
            values = frame[column]
            bad = values.isna() | (values.astype(str).str.strip() == "")
            if bad.any():
                row = int(np.flatnonzero(bad.to_numpy())[0])
                raise InputError(
                    f"run {name!r}: row {row} has {column} {values.iloc[row]!r}; expected a "
                    "non-empty id"
                )
        qid = frame["qid"].astype(str).to_numpy()  # object arrays of str
        docid = frame["docid"].astype(str).to_numpy()
        try:
            score = frame["score"].to_numpy(dtype=np.float64)
        except (TypeError, ValueError) as exc:
            raise InputError(f"run {name!r}: column score holds a non-number ({exc})") from None
        if not np.isfinite(score).all():
            first = int(np.flatnonzero(~np.isfinite(score))[0])
            raise InputError(
                f"run {name!r}: query {qid[first]} document {docid[first]} has score "
                f"{score[first]}; expected a finite number"
            )
        if len(qid) == 0:
            empty = np.zeros(0, dtype=object)
            return cls(name, empty, np.zeros(1, dtype=np.int64), empty, np.zeros(0))
        q_code, q_uniq = pd.factorize(qid, sort=True)
        d_code, _ = pd.factorize(docid, sort=True)
        if order == "score":
            # lexsort: last key is primary -> (qid asc, score desc, docid asc)
            rows = np.lexsort((d_code, -score, q_code))
        else:
            rows = np.argsort(q_code, kind="stable")  # queries grouped, row order kept
        qid, docid, score = qid[rows], docid[rows], score[rows]
        pair_key = pd.Series(q_code[rows].astype(np.int64) * (d_code.max() + 1) + d_code[rows])
        dup = pair_key.duplicated(keep=False).to_numpy()
        if dup.any():
            i = int(np.flatnonzero(dup)[0])
            count = int(pair_key.duplicated().sum())
            raise InputError(
                f"run {name!r}: document {docid[i]} appears more than once for query {qid[i]} "
                f"({count} duplicate row(s) in all); expected each document once per query"
            )
        return cls(name, q_uniq, _offsets(np.bincount(q_code)), docid, score)

    # ---- access --------------------------------------------------------------------------
    def __len__(self) -> int:
        return len(self.qids)

    @property
    def list_lengths(self) -> np.ndarray:
        """Length of each query's ranked list."""
        return np.diff(self.offsets)

    def ranked(self, qid: str) -> np.ndarray:
        """The ranked docids of one query (a KeyError names the query if it is absent)."""
        expect_type(qid, "qid", str, "a query id (str)")
        i = np.searchsorted(self.qids, qid)
        if i == len(self.qids) or self.qids[i] != qid:
            raise KeyError(f"run {self.name!r} has no query {qid!r}")
        return self.docids[self.offsets[i] : self.offsets[i + 1]]

    def __iter__(self) -> Iterator[tuple[str, np.ndarray, np.ndarray]]:
        """Yield ``(qid, docids, scores)`` per query, in query order."""
        for i, q in enumerate(self.qids):
            a, b = self.offsets[i], self.offsets[i + 1]
            yield q, self.docids[a:b], self.scores[a:b]

    def ranks(self) -> np.ndarray:
        """1-based rank of every row, aligned with ``docids``."""
        starts = np.repeat(self.offsets[:-1], self.list_lengths)
        return np.arange(len(self.docids)) - starts + 1  # int64, as offsets

    def cut(self, k: int) -> Run:
        """The run with every list cut to its first ``k`` documents (shorter lists kept)."""
        k = expect_count(k, "cutoff")
        keep = self.ranks() <= k
        offsets = _offsets(np.minimum(self.list_lengths, k))
        return Run(self.name, self.qids, offsets, self._docids_where(keep), self.scores[keep])

    def restrict(self, qids) -> Run:
        """The run on a subset of its queries (queries it lacks are simply absent)."""
        qids = expect_items(qids, "qids", "query ids (a list, not one string)")
        for i, qid in enumerate(qids):  # an integer 2 would silently match no query '2'
            if not isinstance(qid, str):
                raise TypeError(
                    f"qids: expected query ids as strings (as a run holds them), "
                    f"found {type(qid).__name__} {qid!r} at position {i}"
                )
        wanted = np.isin(self.qids, np.asarray(qids, dtype=object))
        rows = np.repeat(wanted, self.list_lengths)
        offsets = _offsets(self.list_lengths[wanted])
        docids = self._docids_where(rows)
        return Run(self.name, self.qids[wanted], offsets, docids, self.scores[rows])

    def to_frame(self) -> pd.DataFrame:
        """Tidy table ``qid, docid, rank, score`` in ranked order."""
        return pd.DataFrame(
            {
                "qid": np.repeat(self.qids, self.list_lengths),
                "docid": self.docids,
                "rank": self.ranks(),
                "score": self.scores,
            }
        )


def _offsets(counts: np.ndarray) -> np.ndarray:
    return np.concatenate([[0], np.cumsum(counts)]).astype(np.int64)


# ---- TREC run files ----------------------------------------------------------------------
RUN_FIELDS = ("qid", "Q0", "docid", "rank", "score", "tag")
QRELS_FIELDS = ("qid", "iteration", "docid", "relevance")

# Numbers are matched before int() or float(), which accept more ('1_000', ' 1', 'infinity').
_INTEGER = re.compile(r"[+-]?[0-9]+")
_NOT_FINITE = re.compile(r"[+-]?(nan|inf|infinity)", re.IGNORECASE)
_FIELD_SEPARATOR = re.compile(r"[ \t]+")
_INT64_MIN, _INT64_MAX = -(2**63), 2**63 - 1


def run_name(where: str) -> str:
    """The file's stem, non-UTF-8 bytes written as ``\\xff`` escapes."""
    base = where.replace("\\", "/").rsplit("/", 1)[-1].removesuffix(".gz")
    base = base.encode("utf-8", "surrogateescape").decode("utf-8", "backslashreplace")
    return base.rsplit(".", 1)[0] if "." in base.lstrip(".") else base


def read_run(source: Source, name: str | None = None, order: str = "score") -> Run:
    """Read a TREC run file (a path or a stream, opened by :mod:`rankbias.inputs`).

    ``order="file"`` keeps the file's line order within each query, as the released NFaiRR and
    ARaB scripts do (tied scores then order differently).  Refused, as an
    :class:`~rankbias.errors.InputError` naming file and line: not six fields separated by
    spaces or tabs (a blank line included), a rank that is not ASCII digits with an optional
    sign or is negative, a score that is not a finite decimal number (``1_000``, ``0x10``,
    ``nan``), a rank or document repeated within a query, an empty file.
    """
    expect_choice(order, "order", ("score", "file"))
    where = source_name(source)
    if name is not None and (not isinstance(name, str) or not name.strip()):
        raise TypeError(f"name: expected None (the file's stem) or a non-empty str, found {name!r}")
    name = name or run_name(where)
    data = read_bytes(source, "run file", check=lambda head: _parse_run_lines(head, where))
    refuse_inner_bom(data, where)
    run = _read_run_fast(data, name, order)
    if run is None:
        frame = _parse_run_lines(data, where)  # raises with the file and line of the problem
        if frame.empty:
            expected = "expected lines 'qid Q0 docid rank score tag'"
            raise located(where, None, f"the run file is empty; {expected}")
        run = Run.from_frame(frame, name=name, order="score" if order == "score" else "given")
    return run


def _arrow_table(data: bytes, names: tuple[str, ...], types: dict):
    """``data`` parsed by Arrow's CSV reader with strict options, or ``None`` if it fails."""
    import pyarrow as pa
    import pyarrow.csv as pa_csv

    tab = b"\t" in data
    if not data or (tab and b" " in data):  # one field separator only, a space or a tab
        return None
    try:
        table = pa_csv.read_csv(
            pa.py_buffer(data),
            read_options=pa_csv.ReadOptions(column_names=list(names)),
            parse_options=pa_csv.ParseOptions(
                delimiter="\t" if tab else " ",
                quote_char=False,
                double_quote=False,
                escape_char=False,
                newlines_in_values=False,
                ignore_empty_lines=False,
            ),
            convert_options=pa_csv.ConvertOptions(
                column_types=types,
                null_values=[],
                strings_can_be_null=False,
                quoted_strings_can_be_null=False,
            ),
        )
    except (pa.ArrowException, ValueError, OverflowError):
        return None
    if table.num_rows == 0 or any(table[c].null_count for c in table.column_names):
        return None
    return table


def _codes_in_string_order(column) -> tuple[np.ndarray, np.ndarray]:
    """Dictionary codes renumbered so that code order is string order, and the sorted values."""
    import pyarrow as pa
    import pyarrow.compute as pc

    encoded = pa.chunked_array(column.unify_dictionaries().chunks, type=column.type)
    encoded = encoded.combine_chunks()
    values = encoded.dictionary
    order = pc.sort_indices(values).to_numpy()
    position = np.empty(len(order), dtype=np.int64)
    position[order] = np.arange(len(order))
    codes = position[encoded.indices.to_numpy(zero_copy_only=False)]
    return codes, np.asarray(values.take(pa.array(order)).to_pylist(), dtype=object)


def _nonempty(table, columns) -> bool:
    import pyarrow.compute as pc

    return all(pc.min(pc.binary_length(table[c])).as_py() > 0 for c in columns)


def _string_hashes(strings) -> np.ndarray:
    """A 64-bit hash of every string of an Arrow string array (the compiled scanner's docid
    hash)."""
    from rankbias import kernel

    buffers = strings.buffers()
    start = strings.offset
    offsets = np.frombuffer(buffers[1], dtype=np.int32)[start : start + len(strings) + 1]
    data = np.zeros(1, np.uint8) if buffers[2] is None else np.frombuffer(buffers[2], np.uint8)
    return kernel.string_hasher()(data, offsets.astype(np.int64))


def _pairs_may_repeat(codes: np.ndarray, strings) -> bool:
    """``False`` if no (code, string) pair repeats; ``True`` if one may (equal hashes: a
    repeat, or, rarely, two strings with one hash; the caller then takes the exact path)."""
    keys = _string_hashes(strings) ^ (codes.astype(np.uint64) * np.uint64(0xC2B2AE3D27D4EB4F))
    keys.sort()
    return bool((keys[1:] == keys[:-1]).any())


def _by_score(q_codes: np.ndarray, score: np.ndarray, docid) -> np.ndarray:
    """Rows ordered by query, score descending, docid ascending: a numeric sort, then the
    docids compared only within runs of equal (query, score)."""
    import pyarrow as pa
    import pyarrow.compute as pc

    rows = pc.sort_indices(
        pa.table({"q": q_codes, "s": score}), sort_keys=[("q", "ascending"), ("s", "descending")]
    ).to_numpy()
    q, s = q_codes[rows], score[rows]
    tie = (q[1:] == q[:-1]) & (s[1:] == s[:-1])
    if tie.any():
        in_tie = np.zeros(len(rows), dtype=bool)
        in_tie[1:] |= tie
        in_tie[:-1] |= tie
        at = np.flatnonzero(in_tie)
        tied = rows[at]
        order = pc.sort_indices(
            pa.table({"q": q_codes[tied], "s": score[tied], "d": docid.take(pa.array(tied))}),
            sort_keys=[("q", "ascending"), ("s", "descending"), ("d", "ascending")],
        ).to_numpy()
        rows = rows.copy()  # Arrow's buffer is read-only
        rows[at] = tied[order]  # every tie group keeps its place, sorted by docid inside
    return rows


def _repeats(q_codes: np.ndarray, values: np.ndarray) -> bool:
    """Whether any (query, integer value) pair repeats (values are non-negative)."""
    top = int(values.max()) + 1
    if top * (int(q_codes.max()) + 1) <= 4 * len(values) + 1024:
        return bool((np.bincount(q_codes * top + values) > 1).any())
    return bool(pd.DataFrame({"q": q_codes, "v": values}).duplicated().any())


def _read_run_fast(data: bytes, name: str, order: str) -> Run | None:
    """The :class:`Run` of a well-formed file, or ``None`` if anything looks unusual."""
    import pyarrow as pa
    import pyarrow.compute as pc

    types = dict.fromkeys(RUN_FIELDS, pa.string())
    types |= {"qid": pa.dictionary(pa.int32(), pa.string()), "score": pa.float64()}
    table = _arrow_table(data, RUN_FIELDS, types)
    if table is None or not _nonempty(table, ("Q0", "docid", "tag")):
        return None
    if not pc.all(pc.ascii_is_decimal(table["rank"])).as_py():  # no sign, no '', no '1.5'
        return None
    try:
        rank = pc.cast(table["rank"], pa.int64()).to_numpy()
    except (pa.ArrowException, ValueError, OverflowError):
        return None
    score = table["score"].to_numpy()
    if not np.isfinite(score).all():
        return None
    q_codes, qids = _codes_in_string_order(table["qid"])
    if (qids == "").any():
        return None  # a blank line
    try:
        docid = table["docid"].combine_chunks()
    except (pa.ArrowException, ValueError, OverflowError):
        return None
    del table  # the columns left are all that is kept: the others' memory goes now
    if _pairs_may_repeat(q_codes, docid) or _repeats(q_codes, rank):
        return None
    if order == "score":
        rows = _by_score(q_codes, score, docid)
    else:
        rows = np.argsort(q_codes, kind="stable")  # queries grouped, line order kept
    offsets = _offsets(np.bincount(q_codes, minlength=len(qids)))
    return Run(name, qids, offsets, docid.take(pa.array(rows)), score[rows])


def _fields(line: str, where: str, lineno: int, names: tuple[str, ...]) -> list[str]:
    """The fields of ``line``, refused unless there is one for each of ``names``."""
    text = line.strip(" \t")
    fields = _FIELD_SEPARATOR.split(text) if text else []
    if len(fields) == len(names):
        return fields
    expected = f"expected {len(names)} fields: {' '.join(names)} separated by spaces or tabs"
    if not fields:
        raise located(where, lineno, f"found a blank line; {expected}")
    shown = repr(line[:80] + ("…" if len(line) > 80 else ""))
    raise located(where, lineno, f"found {len(fields)} field(s) in {shown}; {expected}")


def _integer(text: str, where: str, lineno: int, what: str) -> int:
    if not _INTEGER.fullmatch(text):
        expected = "expected ASCII digits with an optional sign, e.g. '1'"
        raise located(where, lineno, f"{what} {text!r} is not an integer; {expected}")
    return int(text)


def _score(text: str, where: str, lineno: int) -> float:
    if _NOT_FINITE.fullmatch(text):
        problem = "is not finite; expected a finite number"
    elif not DECIMAL.fullmatch(text):
        problem = "is not a number; expected a decimal number, e.g. '12.5' or '-1.2e-3'"
    elif not np.isfinite(float(text)):
        problem = "overflows a 64-bit float; expected a finite number"
    else:
        return float(text)
    raise located(where, lineno, f"score {text!r} {problem}")


def _once(seen: dict, key: tuple, where: str, lineno: int, found: str, each: str) -> None:
    """Refuse ``key`` (``(qid, ...)``) if an earlier line, of the same query, already used it."""
    if (first := seen.setdefault(key, lineno)) != lineno:
        expected = (
            "one judgement per pair" if each == "judgement" else f"each {each} once per query"
        )
        raise located(
            where, lineno, f"{found} for query {key[0]} on line {first}; expected {expected}"
        )


def _parse_run_lines(data: bytes, where: str) -> pd.DataFrame:
    """The line-by-line reader: slow, but names the first bad line precisely."""
    rows: list[tuple[str, str, float]] = []
    doc_line: dict[tuple[str, str], int] = {}
    rank_line: dict[tuple[str, int], int] = {}
    for lineno, line in iter_lines(data, where):
        qid, _, docid, rank_text, score_text, _ = _fields(line, where, lineno, RUN_FIELDS)
        rank = _integer(rank_text, where, lineno, "rank")
        if rank < 0:
            raise located(
                where, lineno, f"rank {rank_text!r} is negative; expected a rank ≥ 0 (usually 1…n)"
            )
        value = _score(score_text, where, lineno)
        _once(doc_line, (qid, docid), where, lineno, f"document {docid} already listed", "document")
        _once(rank_line, (qid, rank), where, lineno, f"rank {rank} already used", "rank")
        rows.append((qid, docid, value))
    return pd.DataFrame(rows, columns=["qid", "docid", "score"])


def _check_fields(columns: dict, what: str) -> None:
    """Fields of a TREC file: a value that is empty or holds a space, a tab or a line break
    would make a line of another number of fields, which the readers refuse."""
    for column, values in columns.items():
        text = pd.Series(values, dtype=object).astype(str)
        bad = text[(text == "") | text.str.contains(r"[ \t\n\r]", regex=True)]
        if len(bad):
            hint = " (pass tag=)" if column == "tag" else ""
            raise ValueError(
                f"{what}: {column} {bad.iloc[0]!r} is empty or holds white space; expected "
                f"a value without white space{hint}, or the file could not be read back"
            )


def write_run(path: str | Path, run: Run, tag: str | None = None) -> None:
    """Write a run in TREC format, ranks 1..n in the run's order, scores to 6 decimals
    (a ValueError where rounding would change the order)."""
    from rankbias.outputs import write_text

    expect_type(run, "run", Run, "a Run")
    tag = run.name if tag is None else tag
    _check_fields({"qid": run.qids, "docid": run.docids, "tag": [tag]}, f"run {run.name!r}")
    qids, docs, scores = np.repeat(run.qids, run.list_lengths), run.docids, run.scores
    rounded = np.round(scores, 6)
    collapsed = (rounded[1:] == rounded[:-1]) & (scores[1:] != scores[:-1])
    reordered = (qids[1:] == qids[:-1]) & collapsed & (docs[1:] < docs[:-1])
    if reordered.any():
        i = int(np.flatnonzero(reordered)[0])
        raise ValueError(
            f"run {run.name!r}: scores of {docs[i]} and {docs[i + 1]} (query "
            f"{qids[i]}) differ below 1e-6; writing them would change the order"
        )
    rows = zip(qids, docs, run.ranks().tolist(), rounded.tolist(), strict=True)
    lines = [f"{q} Q0 {d} {r} {s:.6f} {tag}" for q, d, r, s in rows]
    write_text(path, "\n".join(lines) + "\n")  # atomic: a temporary file renamed into place


# ---- qrels -------------------------------------------------------------------------------
def read_qrels(source: Source) -> pd.DataFrame:
    """Read TREC qrels (opened as for :func:`read_run`) into ``qid, docid, relevance``
    (``int64``; negative grades kept) in file order.

    Refused as for :func:`read_run`: not four fields, a relevance that is not an integer
    (``1.0``, ``1_0``), a pair judged twice, a blank line, an empty file.
    """
    where = source_name(source)
    data = read_bytes(source, "qrels file", check=lambda head: _parse_qrels_lines(head, where))
    refuse_inner_bom(data, where)
    frame = _read_qrels_fast(data)
    if frame is None:
        frame = _parse_qrels_lines(data, where)
    if frame.empty:
        expected = "expected lines 'qid iteration docid relevance'"
        raise located(where, None, f"the qrels file is empty; {expected}")
    return frame


def _read_qrels_fast(data: bytes) -> pd.DataFrame | None:
    import pyarrow as pa
    import pyarrow.compute as pc

    table = _arrow_table(data, QRELS_FIELDS, dict.fromkeys(QRELS_FIELDS, pa.string()))
    if table is None or not _nonempty(table, QRELS_FIELDS):
        return None
    relevance = table["relevance"]
    if not pc.all(pc.match_substring_regex(relevance, r"^[+-]?[0-9]+$")).as_py():
        return None
    try:
        values = pc.cast(relevance, pa.int64()).to_numpy()
    except (pa.ArrowException, ValueError, OverflowError):
        return None
    qid = table["qid"].combine_chunks()
    q_codes = pc.dictionary_encode(qid).indices.to_numpy()  # no nulls: _arrow_table
    if _pairs_may_repeat(q_codes, table["docid"].combine_chunks()):
        return None
    qids = qid.to_numpy(zero_copy_only=False).astype(object)
    docids = table["docid"].to_numpy().astype(object)
    return pd.DataFrame({"qid": qids, "docid": docids, "relevance": values.astype(np.int64)})


def _parse_qrels_lines(data: bytes, where: str) -> pd.DataFrame:
    rows: list[tuple[str, str, int]] = []
    seen: dict[tuple[str, str], int] = {}
    for lineno, line in iter_lines(data, where):
        qid, _, docid, rel = _fields(line, where, lineno, QRELS_FIELDS)
        relevance = _integer(rel, where, lineno, "relevance")
        if not _INT64_MIN <= relevance <= _INT64_MAX:
            expected = f"expected a grade between {_INT64_MIN} and {_INT64_MAX} (usually 0…4)"
            raise located(where, lineno, f"relevance {rel!r} is out of range; {expected}")
        _once(seen, (qid, docid), where, lineno, f"document {docid} already judged", "judgement")
        rows.append((qid, docid, relevance))
    return pd.DataFrame(rows, columns=["qid", "docid", "relevance"])  # Python ints: int64


def write_qrels(path: str | Path, qrels: pd.DataFrame) -> None:
    """Write a ``qid, docid, relevance`` table as TREC qrels (iteration column ``0``)."""
    from rankbias.outputs import write_text

    expect_type(qrels, "qrels", pd.DataFrame, "a DataFrame with columns qid, docid, relevance")
    if missing := [c for c in ("qid", "docid", "relevance") if c not in qrels.columns]:
        raise ValueError(f"qrels: expected the columns qid, docid, relevance; missing {missing}")
    _check_fields({"qid": qrels["qid"], "docid": qrels["docid"]}, "qrels")
    rows = zip(qrels["qid"], qrels["docid"], qrels["relevance"].astype(int), strict=True)
    lines = [f"{q} 0 {d} {r}" for q, d, r in rows]
    write_text(path, "\n".join(lines) + "\n")  # atomic: a temporary file renamed into place
