"""Per-document annotation files: polarisation scores (Duo) and protected-group membership
(rND, rKL).

Both are small delimited tables with a header line that names the columns, comma- or
tab-separated (the header decides: a tab in it means TSV):

- polarisation scores: ``docid,score`` — one score per document, whatever the query — or
  ``qid,docid,score`` — one per query and document; a score is a finite decimal number;
- group membership: ``docid,protected`` with ``protected`` ``1`` (in the protected group) or
  ``0``.

The files are opened as every input of the package is (:mod:`rankbias.inputs`: paths or
streams, gzip by content, UTF-8, any line end, a byte-order mark dropped).  Every refusal is an
:class:`~rankbias.errors.InputError` naming the file and the line: a missing or unknown
column, a line with another number of fields, an empty id, a value that is not a number (or
not 0/1), an id given twice (both lines named), no data line.
"""

from __future__ import annotations

import math
import re

import pandas as pd

from rankbias.errors import located
from rankbias.inputs import Source, open_lines, source_name

__all__ = ["read_polarisation", "read_group_membership"]

_DECIMAL = re.compile(r"[+-]?([0-9]+\.?[0-9]*|\.[0-9]+)([eE][+-]?[0-9]+)?", re.ASCII)


def _read_table(source: Source, what: str, layouts: tuple[tuple[str, ...], ...], parse):
    """Rows of ``source`` under the first of ``layouts`` its header matches; ``parse(text,
    where, number)`` reads the value column."""
    name = source_name(source)
    lines = open_lines(source, what)
    header = next(lines, None)
    expected = " or ".join(",".join(layout) for layout in layouts)
    if header is None:
        raise located(name, None, f"the {what} is empty; expected a header line {expected}")
    number, text = header
    separator = "\t" if "\t" in text else ","
    columns = tuple(c.strip().lower() for c in text.split(separator))
    if columns not in layouts:
        raise located(name, number, f"header {text!r}: expected the columns {expected}")
    keys = columns[:-1]
    rows, seen = [], {}
    for number, text in lines:
        fields = text.split(separator)
        if len(fields) != len(columns):
            raise located(
                name,
                number,
                f"found {len(fields)} field(s) in {text[:80]!r}; expected {len(columns)} "
                f"({','.join(columns)}) separated by {'a tab' if separator == chr(9) else ','}",
            )
        key = tuple(f.strip() for f in fields[:-1])
        if any(not k for k in key):
            raise located(name, number, f"empty {'/'.join(keys)}; expected an id")
        if key in seen:
            raise located(
                name,
                number,
                f"{'/'.join(keys)} {', '.join(key)} is already given on line {seen[key]}; "
                "expected each once",
            )
        seen[key] = number
        rows.append((*key, parse(fields[-1].strip(), name, number)))
    if not rows:
        raise located(name, None, f"the {what} has a header but no data line")
    return pd.DataFrame(rows, columns=list(columns))


def _score(text: str, name: str, number: int) -> float:
    if not _DECIMAL.fullmatch(text) or not math.isfinite(float(text)):
        raise located(name, number, f"score {text!r}: expected a finite decimal number")
    return float(text)


def _protected(text: str, name: str, number: int) -> bool:
    if text not in ("0", "1"):
        raise located(name, number, f"protected {text!r}: expected 1 (protected) or 0")
    return text == "1"


def read_polarisation(source: Source) -> pd.DataFrame:
    """A polarisation-score file: columns ``docid, score`` or ``qid, docid, score``."""
    layouts = (("docid", "score"), ("qid", "docid", "score"))
    return _read_table(source, "polarisation file", layouts, _score)


def read_group_membership(source: Source) -> pd.DataFrame:
    """A group-membership file: columns ``docid, protected`` (``protected`` a bool)."""
    return _read_table(source, "group file", (("docid", "protected"),), _protected)
