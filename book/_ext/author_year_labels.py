"""Bibliography labels in the author-year form of the book's citations.

The book cites in the field's author-year form with round brackets: ``{cite:t}`` reads
"Abolghasemi et al. (2024)" and ``{cite:p}`` "(Abolghasemi et al., 2024)", each linked as a
whole to its entry.  sphinxcontrib-bibtex's ``author_year`` style writes square brackets and
links only the year of a textual citation; this extension registers the referencing style
``author_year_round`` (select it with ``bibtex_reference_style: author_year_round``).
pybtex's default ``alpha`` labels would head the entries in the bibliography with
"[AAA+24]".  This extension registers a pybtex label style that
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
from dataclasses import dataclass, field

import pybtex.plugin
import sphinxcontrib.bibtex.plugin
from pybtex.richtext import Text
from pybtex.style.formatting.unsrt import Style as UnsrtStyle
from pybtex.style.labels import BaseLabelStyle
from pybtex.style.sorting import BaseSortingStyle
from sphinxcontrib.bibtex.style.referencing import BracketStyle
from sphinxcontrib.bibtex.style.referencing.author_year import AuthorYearReferenceStyle
from sphinxcontrib.bibtex.style.referencing.basic_author_year import (
    BasicAuthorYearTextualReferenceStyle,
)
from sphinxcontrib.bibtex.style.template import join, join2, post_text, pre_text, reference, year

STYLE_NAME = "author_year_labels"
REFERENCE_STYLE_NAME = "author_year_round"


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


def _round() -> BracketStyle:
    return BracketStyle(left="(", right=")")


@dataclass
class WholeTextualReferenceStyle(BasicAuthorYearTextualReferenceStyle):
    """``{cite:t}``: "Author et al. (2024)", or "(2024, Eq. 2)" with a post-text, linked whole."""

    def inner(self, role_name: str):
        return reference[
            join(sep=self.text_reference_sep)[
                self.person.author_or_editor_or_title(full="s" in role_name),
                join[
                    self.bracket.left,
                    join2(sep1=self.pre_text_sep, sep2=self.post_text_sep)[
                        pre_text, year, post_text
                    ],
                    self.bracket.right,
                ],
            ]
        ]


@dataclass
class AuthorYearRoundReferenceStyle(AuthorYearReferenceStyle):
    """sphinxcontrib-bibtex's author-year citations with round brackets, textual ones linked
    whole."""

    bracket_textual: BracketStyle = field(default_factory=_round)
    bracket_parenthetical: BracketStyle = field(default_factory=_round)
    bracket_author: BracketStyle = field(default_factory=_round)
    bracket_label: BracketStyle = field(default_factory=_round)
    bracket_year: BracketStyle = field(default_factory=_round)

    def __post_init__(self):
        super().__post_init__()
        textual = WholeTextualReferenceStyle(
            bracket=self.bracket_textual,
            person=self.person,
            text_reference_sep=self.text_reference_sep,
            pre_text_sep=self.pre_text_sep,
            post_text_sep=self.post_text_sep,
        )
        self.styles[:] = [
            textual if isinstance(style, BasicAuthorYearTextualReferenceStyle) else style
            for style in self.styles
        ]
        self.role_style.update((role, textual) for role in textual.role_names())


def setup(app):
    sphinxcontrib.bibtex.plugin.register_plugin(
        "sphinxcontrib.bibtex.style.referencing",
        REFERENCE_STYLE_NAME,
        AuthorYearRoundReferenceStyle,
    )
    pybtex.plugin.register_plugin("pybtex.style.labels", STYLE_NAME, AuthorYearLabelStyle)
    pybtex.plugin.register_plugin("pybtex.style.sorting", STYLE_NAME, AuthorYearSortingStyle)
    pybtex.plugin.register_plugin("pybtex.style.formatting", STYLE_NAME, AuthorYearLabelsStyle)
    return {"parallel_read_safe": True, "parallel_write_safe": True}
