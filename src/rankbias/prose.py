"""The words of a computed sentence: the chapters write their comparative sentences from the
data (a dataset's systems, query sets and terms are not known in advance), and these helpers
put names, counts and lists into prose the same way in every chapter."""

from __future__ import annotations

import re
from collections.abc import Iterable

__all__ = ["number_in_words", "prose_list", "markdown_escape", "queries_of"]

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
