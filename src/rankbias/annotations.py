"""Per-document annotation files: polarisation scores (Duo) and protected-group membership
(rND, rKL).

CSV or TSV (a tab in the header) with a header naming the columns: ``docid,score`` (any query)
or ``qid,docid,score``, a finite decimal; ``docid,protected``, ``1`` or ``0``.  Refused, naming
file and line: another header, another number of fields, an empty id, a bad value, an id given
twice, no data line.
"""

from __future__ import annotations

import math

import pandas as pd

from rankbias.errors import located
from rankbias.inputs import DECIMAL, Source, open_lines, source_name

__all__ = ["read_polarisation", "read_group_membership"]


def _read_table(source: Source, what: str, layouts: tuple[tuple[str, ...], ...], parse):
    """Rows of ``source`` under the one of ``layouts`` its header names; ``parse(text, where,
    number)`` reads the value column."""
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
    keys = "/".join(columns[:-1])
    shape = f"{len(columns)} ({','.join(columns)}) separated by "
    shape += "a tab" if separator == "\t" else ","
    rows, seen = [], {}
    for number, text in lines:
        fields = text.split(separator)
        if len(fields) != len(columns):
            found = f"found {len(fields)} field(s) in {text[:80]!r}"
            raise located(name, number, f"{found}; expected {shape}")
        key = tuple(f.strip() for f in fields[:-1])
        if any(not k for k in key):
            raise located(name, number, f"empty {keys}; expected an id")
        if (first := seen.setdefault(key, number)) != number:
            raise located(
                name,
                number,
                f"{keys} {', '.join(key)} is already given on line {first}; expected each once",
            )
        rows.append((*key, parse(fields[-1].strip(), name, number)))
    if not rows:
        raise located(name, None, f"the {what} has a header but no data line")
    return pd.DataFrame(rows, columns=list(columns))


def _score(text: str, name: str, number: int) -> float:
    if not DECIMAL.fullmatch(text) or not math.isfinite(float(text)):
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
