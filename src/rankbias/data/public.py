"""Readers for the file formats of the public resources.

Two formats carry the literature's query sets:

* the gender-annotated MS MARCO queries of Rekabsaz and Schedl (2020),
  ``queries_gender_annotated.csv``: ``qid,query text,label`` with no quoting, although the query
  text itself may contain commas — the qid is the first field, the label the last, the text
  everything between.  Labels: ``n`` non-gendered (the 1,765 queries of query set "QS1"),
  ``f`` female, ``m`` male, ``o`` other;
* the bias-sensitive query sets of Rekabsaz, Kopeinik and Schedl (2021),
  ``qid<TAB>query`` (``msmarco_passage.dev.fair.tsv``, "QS2"), and their ``FULL_ANNOTATION``
  variants, which add a header line and annotation columns and use CRLF line endings.

Both readers return a :class:`pandas.DataFrame` with string columns ``qid`` and ``query`` (plus
``label``, or the annotation columns), in file order.  Nothing is skipped: an empty line, a
missing field, an unknown label or a repeated qid raises :class:`~rankbias.errors.InputError`
whose message starts with ``file:line``.  Files are opened by :mod:`rankbias.inputs`: a path or
a stream, gzip recognised by content, UTF-8 (a byte-order mark is dropped), line ends ``\\n``,
``\\r\\n`` or ``\\r``; a final newline is optional.  A header line is recognised explicitly
(``qid,query,label`` for the annotated queries, a first field ``QID`` for the tab-separated
files) and skipped; any other first line is data.
"""

from __future__ import annotations

import re
from collections.abc import Iterator

import pandas as pd

from rankbias.errors import located
from rankbias.inputs import Source, open_lines, source_name

#: the labels of ``queries_gender_annotated.csv`` and what they mean
GENDER_LABELS = {
    "n": "non-gendered",
    "f": "female",
    "m": "male",
    "o": "other",
}


def _lines(source: Source, what: str) -> Iterator[tuple[int, str]]:
    """(line number, text without its line ending) for every line of ``source``."""
    return open_lines(source, what)


def _check_qid(path: str, number: int, qid: str, seen: dict[str, int]) -> None:
    if not qid or any(ch.isspace() for ch in qid):
        raise located(
            path, number, f"found qid {qid!r}; expected a non-empty identifier without spaces"
        )
    if qid in seen:
        raise located(path, number, f"qid {qid!r} repeats line {seen[qid]}; expected unique qids")
    seen[qid] = number


def read_gender_annotated_queries(path: Source) -> pd.DataFrame:
    """Read ``queries_gender_annotated.csv``: columns ``qid``, ``query``, ``label``.

    The qid is the text before the first comma, the label the text after the last comma
    (one of :data:`GENDER_LABELS`), and the query everything between, kept verbatim (commas
    and spaces included).  Query set QS1 is ``frame[frame.label == "n"]``.  The published file
    has no header; a first line ``qid,query,label`` (any case, surrounding spaces ignored) is
    recognised as one and skipped.
    """
    where = source_name(path)
    qids: list[str] = []
    queries: list[str] = []
    labels: list[str] = []
    seen: dict[str, int] = {}
    expected_labels = ", ".join(GENDER_LABELS)
    for number, line in _lines(path, "query file"):
        fields = line.split(",")
        if [f.strip().lower() for f in fields] == ["qid", "query", "label"]:
            if number == 1:
                continue
            raise located(
                where,
                number,
                f"found the header line {line!r} after line 1; expected a header only on the "
                "first line (were two query files joined?)",
            )
        if not line.strip():
            raise located(where, number, "found a blank line; expected qid,query text,label")
        if len(fields) < 3:
            raise located(
                where,
                number,
                f"found {len(fields)} comma-separated field(s) in {line!r}; "
                f"expected qid,query text,label",
            )
        qid, label, query = fields[0], fields[-1], ",".join(fields[1:-1])
        _check_qid(where, number, qid, seen)
        if label not in GENDER_LABELS:
            raise located(
                where,
                number,
                f"found label {label!r} for qid {qid}; expected one of {expected_labels}",
            )
        if not query.strip():
            raise located(where, number, f"found an empty query text for qid {qid}; expected text")
        qids.append(qid)
        queries.append(query)
        labels.append(label)
    if not qids:
        raise located(where, None, "the query file has no queries; expected qid,query text,label")
    return pd.DataFrame({"qid": qids, "query": queries, "label": labels})


def _column_name(header: str) -> str:
    return re.sub(r"[^0-9a-z]+", "_", header.strip().lower()).strip("_")


def read_query_tsv(path: Source) -> pd.DataFrame:
    """Read a tab-separated query file: columns ``qid``, ``query`` (and any annotation columns).

    Without a header every line is ``qid<TAB>query``.  A first line whose first field is
    ``QID`` (any case) is a header, as in the ``FULL_ANNOTATION`` files: every line then has as
    many fields as the header, and the further columns are named after it in lower case with
    non-alphanumerics as ``_`` (``Example/Description`` → ``example_description``).
    """
    where = source_name(path)
    columns: list[str] | None = None
    rows: list[list[str]] = []
    seen: dict[str, int] = {}
    for number, line in _lines(path, "query file"):
        if not line.strip():
            raise located(where, number, "found a blank line; expected qid<TAB>query")
        fields = line.split("\t")
        if number == 1 and fields[0].strip().lower() == "qid":
            if len(fields) < 2:
                raise located(where, number, f"found header {line!r}; expected QID<TAB>Query[…]")
            columns = ["qid", "query"] + [_column_name(name) for name in fields[2:]]
            if len(set(columns)) != len(columns):
                raise located(where, number, f"found repeated column names in header {line!r}")
            continue
        if fields[0].strip().lower() == "qid":
            raise located(
                where,
                number,
                f"found the header line {line!r} after line 1; expected a header only on the "
                "first line (were two query files joined?)",
            )
        width = len(columns) if columns is not None else 2
        if len(fields) != width:
            shape = "the header's " + str(width) if columns is not None else "2 (qid<TAB>query)"
            raise located(
                where,
                number,
                f"found {len(fields)} tab-separated field(s) in {line!r}; expected {shape}",
            )
        _check_qid(where, number, fields[0], seen)
        if not fields[1].strip():
            raise located(where, number, f"found an empty query for qid {fields[0]}; expected text")
        rows.append(fields)
    if not rows:
        raise located(where, None, "the query file has no queries; expected qid<TAB>query lines")
    names = columns if columns is not None else ["qid", "query"]
    return pd.DataFrame(rows, columns=names)
