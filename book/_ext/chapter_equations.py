"""Equations numbered per chapter: "(6.3)" is the third numbered equation of chapter 6.

With ``numfig`` and ``math_numfig`` Sphinx numbers displayed equations with one counter for
the whole book (the chapters are not numbered sections), so chapter 6 starts at (25).  After
Sphinx assigns the numbers (on ``env-get-updated``), this extension renumbers each page's
equations from 1 in their order on the page, prefixed by the chapter's number, taken from the
file name (``notebooks/06_duo`` → 6).  The other pages (Conventions, …) number theirs from 1
without a prefix.  ``{eq}`` references read the same table, so they follow.
"""

import re

_CHAPTER = re.compile(r"(?:^|/)(\d+)_[^/]*$")


def chapter_number(docname: str) -> tuple[int, ...]:
    """``(6,)`` for ``notebooks/06_duo``; ``()`` for a page that is not a numbered chapter."""
    match = _CHAPTER.search(docname)
    return (int(match.group(1)),) if match else ()


def renumber(numbers: dict[str, tuple[int, ...]], prefix: tuple[int, ...]) -> dict:
    """The page's equations, in the order Sphinx numbered them, as ``(*prefix, 1)``, …"""
    ordered = sorted(numbers, key=lambda node_id: numbers[node_id])
    return {node_id: (*prefix, index) for index, node_id in enumerate(ordered, start=1)}


def _per_chapter(app, env):
    for docname, numbers in env.toc_fignumbers.items():
        if numbers.get("displaymath"):
            numbers["displaymath"] = renumber(numbers["displaymath"], chapter_number(docname))
    return []


def setup(app):
    # after sphinx's TocTreeCollector (priority 500), which assigns the book-wide numbers
    app.connect("env-get-updated", _per_chapter, priority=900)
    return {"parallel_read_safe": True, "parallel_write_safe": True}
