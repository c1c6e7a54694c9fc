"""The words of a computed sentence: the chapters write their comparative sentences from the
data (a dataset's systems, query sets and terms are not known in advance), and these helpers
put names, counts and lists into prose the same way in every chapter."""

from __future__ import annotations

import math
import re
from collections.abc import Iterable

__all__ = [
    "number_in_words",
    "prose_list",
    "markdown_escape",
    "queries_of",
    "compared",
    "extremes",
]

NUMBER_WORDS = "no one two three four five six seven eight nine ten eleven twelve".split()
_MARKDOWN = re.compile(r"([\\`*_{}\[\]<>$#|~])")


def number_in_words(n: int) -> str:
    """A count as prose writes it: ``no``, ``one`` … ``twelve``, then digits with thousands
    separators (``1,634``)."""
    import numbers

    if isinstance(n, bool) or not isinstance(n, numbers.Real) or not float(n).is_integer():
        raise ValueError(f"n: expected a whole count, found {n!r}")
    n = int(n)
    return NUMBER_WORDS[n] if 0 <= n < len(NUMBER_WORDS) else f"{n:,}"


def prose_list(
    items: Iterable, *, mark: str = "", conjunction: str = "and", empty: str = "none"
) -> str:
    """Items joined as prose, each between ``mark`` (``*`` for italics): ``a``; ``a and b``;
    ``a, b and c``; ``empty`` for none."""
    if isinstance(items, str) or not isinstance(items, Iterable):
        raise TypeError(f"items: expected a list of items, found {type(items).__name__} {items!r}")
    words = [f"{mark}{item}{mark}" for item in items]
    if not words:
        return empty
    if len(words) == 1:
        return words[0]
    return ", ".join(words[:-1]) + f" {conjunction} " + words[-1]


def markdown_escape(text) -> str:
    """``text`` shown literally inside Markdown (a run called ``bert_L2``, a query with ``*``):
    Markdown's punctuation escaped with a backslash."""
    if text is None:
        raise TypeError("text: expected a name or a number to show, found None")
    return _MARKDOWN.sub(r"\\\1", str(text))


def queries_of(name: str) -> str:
    """How prose names the queries of a query set: ``gender-neutral queries``, and a set
    whose name ends in "queries" by its name alone."""
    if not isinstance(name, str) or not name.strip():
        raise ValueError(f"name: expected a query set's name, found {name!r}")
    return name if name.split()[-1].lower() == "queries" else f"{name} queries"


def _label(metric: str, cutoff) -> str:
    import pandas as pd

    from rankbias.metrics.measures import display_name

    return display_name(metric) + (f"@{int(cutoff)}" if not pd.isna(cutoff) else "")


def _comparisons(table):
    import pandas as pd

    from rankbias.errors import expect_type

    expect_type(table, "table", pd.DataFrame, "the table rankbias.compare gives")
    missing = {"metric", "cutoff", "run_a", "run_b", "mean_a", "fairer"} - set(table.columns)
    if missing:
        raise ValueError(f"table: no column(s) {', '.join(sorted(missing))}; expected the table "
                         "rankbias.compare gives")  # fmt: skip
    return table


def _row(table, metric: str, run_a: str, run_b: str, cutoff=None):
    """The row of ``table`` (:func:`rankbias.compare`'s) comparing the two runs, either way
    round, and whether it had them the other way."""
    from rankbias.errors import expect_type

    for value, name in ((metric, "metric"), (run_a, "run_a"), (run_b, "run_b")):
        expect_type(value, name, str, "a name in the table")
    rows = _comparisons(table)
    rows = rows[rows["metric"] == metric]
    if cutoff is not None:
        rows = rows[rows["cutoff"] == cutoff]
    for a, b, swapped in ((run_a, run_b, False), (run_b, run_a, True)):
        found = rows[(rows["run_a"] == a) & (rows["run_b"] == b)]
        if len(found) == 1:
            return found.iloc[0], swapped
    at = f"@{cutoff}" if cutoff is not None else ""
    raise ValueError(
        f"no comparison of {run_a} and {run_b} on {metric}{at} in the table; expected two of its "
        f"runs ({', '.join(sorted(set(table['run_a']) | set(table['run_b'])))}) and a measure "
        f"it compares"
    )


def _evidence(row, swapped: bool, confidence: float) -> str:
    sign = -1 if swapped else 1
    low, high = sorted((sign * row["ci_low"] + 0.0, sign * row["ci_high"] + 0.0))  # no -0
    said = (
        f"difference {sign * row['diff'] + 0.0:.3g}, {confidence:.0%} interval of this comparison "
        f"[{low:.3g}, {high:.3g}]"
    )
    if row["effect_size"] == row["effect_size"]:  # not NaN
        said += f", $d_z$ = {sign * row['effect_size'] + 0.0:.2f}"
    return said + f", adjusted p = {row['p_adjusted']:.2g}"


def compared(table, metric: str, run_a: str, run_b: str, cutoff=None) -> str:
    """What :func:`rankbias.compare`'s ``table`` says of ``run_a`` against ``run_b`` on
    ``metric`` (at ``cutoff``), as a clause: which is fairer (or higher, for a measure without
    a direction) only when the difference is significant after the table's correction, else
    that there is no detectable difference, with the difference, its interval, the effect size
    and the adjusted p-value; or why the two cannot be compared.  Run names in italics."""
    row, swapped = _row(table, metric, run_a, run_b, cutoff)
    a, b = (f"*{markdown_escape(run)}*" for run in (run_a, run_b))
    label = _label(metric, row["cutoff"])
    if row["scale"] == "|value|":
        label = f"|{label}|"
    confidence = table.attrs.get("confidence", 0.95)
    if row["fairer"] == "undetermined" or not row["settled"]:
        return f"{a} and {b} cannot be compared by {label}: {markdown_escape(row['why'])}"
    if row["n_queries"] < 2 or row["p_adjusted"] != row["p_adjusted"]:
        return f"{a} and {b} cannot be compared by {label}: too few queries"
    evidence = _evidence(row, swapped, confidence)
    if not row["significant"]:
        return f"{a} and {b} show no detectable difference by {label} ({evidence})"
    mean_a, mean_b = (row["mean_b"], row["mean_a"]) if swapped else (row["mean_a"], row["mean_b"])
    if row["fairer"] in (run_a, run_b):
        first, second = (a, b) if row["fairer"] == run_a else (b, a)
        evidence = _evidence(row, row["fairer"] != row["run_a"], confidence)
        return f"{first} is fairer than {second} by {label} ({evidence})"
    word = "higher" if mean_a > mean_b else "lower"
    return f"{a} has a {word} {label} than {b} ({evidence})"


def extremes(table, metric: str, cutoff=None) -> str:
    """The runs with the highest and the lowest mean ``metric`` in :func:`rankbias.compare`'s
    all-pairs ``table`` and whether they differ (:func:`compared`), then, with more than one
    pair, how many of the pairs differ significantly: a sentence."""
    rows = _comparisons(table)
    rows = rows[rows["metric"] == metric]
    if cutoff is not None:
        rows = rows[rows["cutoff"] == cutoff]
    means = {}
    for row in rows.itertuples():
        means.setdefault(row.run_a, row.mean_a)
        means.setdefault(row.run_b, row.mean_b)
    if len(means) < 2:
        raise ValueError(f"{metric}: expected comparisons of two or more runs in the table")
    high = max(means, key=means.get)  # ties: the first in the table's order
    low = min((run for run in means if run != high), key=means.get)
    label = _label(metric, rows["cutoff"].iloc[0])
    different = int((rows["significant"] & (rows["fairer"] != "undetermined")).sum())
    shown = _decimals(means[high], means[low])
    pairs = f"of the {number_in_words(len(rows))} pairs of runs"
    counted = {0: f"None {pairs} differs", 1: f"One {pairs} differs"}.get(
        different, f"{number_in_words(different).capitalize()} {pairs} differ"
    )
    said = (
        f"The highest mean {label} is *{markdown_escape(high)}*'s ({shown(means[high])}) and the "
        f"lowest *{markdown_escape(low)}*'s ({shown(means[low])}): "
        f"{compared(table, metric, high, low, cutoff)}."
    )
    return said if len(rows) == 1 else f"{said}  {counted} significantly by {label}."


def _decimals(*values: float):
    """A formatter that shows ``values`` with one number of decimals, enough for three
    significant digits of the smallest non-zero magnitude among them (at most 6)."""
    magnitudes = [abs(v) for v in values if v]
    smallest = min(magnitudes, default=1.0)
    decimals = min(6, max(0, 2 - math.floor(math.log10(smallest))))
    return lambda value: f"{value:.{decimals}f}"
