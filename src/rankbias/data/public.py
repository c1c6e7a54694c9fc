"""Readers for the file formats of the public resources.

The gender-annotated MS MARCO queries of Rekabsaz and Schedl (2020) (query set "QS1" is label
``n``) and the bias-sensitive query sets of Rekabsaz, Kopeinik and Schedl (2021) ("QS2", and
their ``FULL_ANNOTATION`` variants), read (:mod:`rankbias.inputs`) into string columns ``qid``,
``query`` and the rest, in file order.  Nothing is skipped: an empty line, a missing field, an
unknown label, a repeated qid or a second header is an :class:`~rankbias.errors.InputError`
naming ``file:line``.
"""

from __future__ import annotations

import re

import pandas as pd

from rankbias.errors import InputError, located
from rankbias.inputs import Source, open_lines, source_name

#: the labels of ``queries_gender_annotated.csv`` and what they mean
GENDER_LABELS = {"n": "non-gendered", "f": "female", "m": "male", "o": "other"}


def _check_qid(path: str, number: int, qid: str, seen: dict[str, int]) -> None:
    if not qid or any(ch.isspace() for ch in qid):
        raise located(
            path, number, f"found qid {qid!r}; expected a non-empty identifier without spaces"
        )
    if qid in seen:
        raise located(path, number, f"qid {qid!r} repeats line {seen[qid]}; expected unique qids")
    seen[qid] = number


def _late_header(path: str, number: int, line: str) -> InputError:
    return located(
        path,
        number,
        f"found the header line {line!r} after line 1; expected a header only on the first "
        "line (were two query files joined?)",
    )


def read_gender_annotated_queries(path: Source) -> pd.DataFrame:
    """Read ``queries_gender_annotated.csv`` (unquoted ``qid,query text,label``): the qid is
    before the first comma, the label (:data:`GENDER_LABELS`) after the last, the query verbatim
    between; a first line ``qid,query,label`` is a header, skipped."""
    where = source_name(path)
    rows: list[tuple[str, str, str]] = []
    seen: dict[str, int] = {}
    expected_labels = ", ".join(GENDER_LABELS)
    for number, line in open_lines(path, "query file"):
        fields = line.split(",")
        if [f.strip().lower() for f in fields] == ["qid", "query", "label"]:
            if number == 1:
                continue
            raise _late_header(where, number, line)
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
        rows.append((qid, query, label))
    if not rows:
        raise located(where, None, "the query file has no queries; expected qid,query text,label")
    return pd.DataFrame(rows, columns=["qid", "query", "label"])


def _column_name(header: str) -> str:
    return re.sub(r"[^0-9a-z]+", "_", header.strip().lower()).strip("_")


def read_query_tsv(path: Source) -> pd.DataFrame:
    """Read ``qid<TAB>query`` lines, or, after a header whose first field is ``QID`` (the
    ``FULL_ANNOTATION`` files), as many fields as it names (``Example/Description`` →
    ``example_description``)."""
    where = source_name(path)
    columns: list[str] | None = None
    rows: list[list[str]] = []
    seen: dict[str, int] = {}
    for number, line in open_lines(path, "query file"):
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
            raise _late_header(where, number, line)
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
