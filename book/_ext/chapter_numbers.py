"""Equations and tables numbered per chapter: "(6.3)" is the third numbered equation of
chapter 6, "Table 6.2" its second table.

With ``numfig`` and ``math_numfig`` Sphinx numbers displayed equations with one counter for
the whole book (the chapters are not numbered sections), so chapter 6 starts at (25).  After
Sphinx assigns the numbers (on ``env-get-updated``), this extension renumbers each page's
equations from 1 in their order on the page, prefixed by the chapter's number, taken from the
file name (``notebooks/06_duo`` → 6); ``{eq}`` references read the same table, so they follow.

Tables are numbered when a page is written (``doctree-resolved``), in their order on the
page: a Markdown table given a caption by the ``{table}`` directive, and a table a code cell
shows with a caption (pandas' ``Styler.set_caption``, which writes an HTML ``<caption>``), whose
caption gets the same "Table 6.2" prefix.  The book does not ``{numref}`` tables.  The other
pages (Conventions, …) number theirs from 1 without a prefix.
"""

import re

from docutils import nodes

_CHAPTER = re.compile(r"(?:^|/)(\d+)_[^/]*$")
_HTML_CAPTION = re.compile(r"(<table\b[^>]*>\s*<caption[^>]*>)", re.I)


def chapter_number(docname: str) -> tuple[int, ...]:
    """``(6,)`` for ``notebooks/06_duo``; ``()`` for a page that is not a numbered chapter."""
    match = _CHAPTER.search(docname)
    return (int(match.group(1)),) if match else ()


def renumber(numbers: dict[str, tuple[int, ...]], prefix: tuple[int, ...]) -> dict:
    """The page's equations, in the order Sphinx numbered them, as ``(*prefix, 1)``, …"""
    ordered = sorted(numbers, key=lambda node_id: numbers[node_id])
    return {node_id: (*prefix, index) for index, node_id in enumerate(ordered, start=1)}


def label(number: tuple[int, ...]) -> str:
    return ".".join(str(part) for part in number)


def number_html_tables(html: str, prefix: tuple[int, ...], start: int) -> tuple[str, int]:
    """``html`` with "Table N.M" put before the text of each table caption, counting from
    ``start``; and the next number."""
    count = start

    def numbered(match) -> str:
        nonlocal count
        text = f'<span class="caption-number">Table {label((*prefix, count))} </span>'
        count += 1
        return match.group(1) + text

    return _HTML_CAPTION.sub(numbered, html), count


def _per_chapter(app, env):
    for docname, numbers in env.toc_fignumbers.items():
        if numbers.get("displaymath"):
            numbers["displaymath"] = renumber(numbers["displaymath"], chapter_number(docname))
    return []


def _tables(app, doctree, docname):
    prefix, count = chapter_number(docname), 1
    numbers = app.env.toc_fignumbers.setdefault(docname, {})
    for node in doctree.findall(lambda n: isinstance(n, nodes.table | nodes.raw)):
        if isinstance(node, nodes.table):
            if node["ids"] and any(isinstance(child, nodes.title) for child in node.children):
                numbers.setdefault("table", {})[node["ids"][0]] = (*prefix, count)
                count += 1
        elif "html" in node.get("format", "").split() and "<caption" in node.astext():
            html, count = number_html_tables(node.astext(), prefix, count)
            node.replace_self(nodes.raw("", html, format=node["format"]))


def setup(app):
    # after sphinx's TocTreeCollector (priority 500), which assigns the book-wide numbers
    app.connect("env-get-updated", _per_chapter, priority=900)
    app.connect("doctree-resolved", _tables)
    return {"parallel_read_safe": True, "parallel_write_safe": True}
