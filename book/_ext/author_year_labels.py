"""Bibliography labels in the author-year form of the book's citations.

The book cites with ``bibtex_reference_style: author_year``, so the text reads
"(Abolghasemi et al., 2024)", but pybtex's default ``alpha`` labels would head the same entry
in the bibliography with "[AAA+24]".  This extension registers a pybtex label style that
builds the label the way the parenthetical citation is written -- the prefixed last name
("de Rijke") of one author, "A and B" for two, "A et al." for three or more (editors when an
entry has no author), a comma and the year -- and a formatting style ``author_year_labels``
(pybtex's ``unsrt`` with that label style, sorted by the label's authors as read, year and
title).  Entries that
would get the same label ("Smith et al., 2020") get letters after the year in sorted order
("2020a", "2020b").  Select it with ``bibtex_default_style: author_year_labels``.
"""

import unicodedata
from collections import Counter

import pybtex.plugin
from pybtex.richtext import Text
from pybtex.style.formatting.unsrt import Style as UnsrtStyle
from pybtex.style.labels import BaseLabelStyle
from pybtex.style.sorting import BaseSortingStyle

STYLE_NAME = "author_year_labels"


def _plain(latex: str) -> str:
    """``J{\\"a}rvelin`` -> ``Järvelin``: TeX accents and braces as the reader sees them."""
    return Text.from_latex(latex).render_as("text")


def _last_name(person) -> str:
    return " ".join(_plain(part) for part in [*person.prelast_names, *person.last_names])


def _authors(entry) -> str:
    for role in ("author", "editor"):
        persons = entry.persons.get(role)
        if persons:
            names = [_last_name(person) for person in persons]
            if len(names) == 1:
                return names[0]
            if len(names) == 2:
                return f"{names[0]} and {names[1]}"
            return f"{names[0]} et al."
    # neither authors nor editors: the title names the work, as in the citation text
    title = entry.fields.get("title")
    if title:
        return _plain(title)
    raise ValueError(
        f"bibliography entry {entry.key!r} has no author, editor or title to label it by"
    )


class AuthorYearLabelStyle(BaseLabelStyle):
    """Labels "Author, year", "A and B, year" or "A et al., year", unique within a list."""

    def format_labels(self, sorted_entries):
        entries = list(sorted_entries)
        bases = [
            f"{_authors(entry)}, {_plain(entry.fields.get('year', 'n.d.'))}" for entry in entries
        ]
        repeated = {base for base, count in Counter(bases).items() if count > 1}
        seen: Counter[str] = Counter()
        for base in bases:
            if base in repeated:
                yield base + "abcdefghijklmnopqrstuvwxyz"[seen[base]]
                seen[base] += 1
            else:
                yield base


class AuthorYearSortingStyle(BaseSortingStyle):
    """Alphabetical by the label's authors as read ("Řehůřek" with the Rs), then year, title."""

    def sorting_key(self, entry):
        authors = unicodedata.normalize("NFKD", _authors(entry).casefold())
        authors = "".join(char for char in authors if not unicodedata.combining(char))
        return (authors, entry.fields.get("year", ""), _plain(entry.fields.get("title", "")))


class AuthorYearLabelsStyle(UnsrtStyle):
    """pybtex's ``unsrt`` entries, labelled and sorted by author and year."""

    default_label_style = STYLE_NAME
    default_sorting_style = STYLE_NAME


def setup(app):
    pybtex.plugin.register_plugin("pybtex.style.labels", STYLE_NAME, AuthorYearLabelStyle)
    pybtex.plugin.register_plugin("pybtex.style.sorting", STYLE_NAME, AuthorYearSortingStyle)
    pybtex.plugin.register_plugin("pybtex.style.formatting", STYLE_NAME, AuthorYearLabelsStyle)
    return {"parallel_read_safe": True, "parallel_write_safe": True}
