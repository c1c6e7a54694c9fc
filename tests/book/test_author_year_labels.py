"""The bibliography label style of book/_ext/author_year_labels.py, on hand-written entries."""

import sys
from pathlib import Path

import pytest
from pybtex.database import parse_string

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "book" / "_ext"))
import author_year_labels  # noqa: E402

author_year_labels.setup(app=None)

BIB = r"""
@misc{one, author = {J{\"a}rvelin, Kalervo}, title = {Cumulated gain}, year = {2002}}
@misc{two, author = {Rekabsaz, Navid and Schedl, Markus}, title = {Do neural}, year = {2020}}
@misc{three, author = {Abolghasemi, Amin and de Rijke, Maarten and Verberne, Suzan},
         title = {Bias}, year = {2024}}
@misc{von, author = {de Rijke, Maarten}, title = {Von part}, year = {2019}}
@misc{edited, editor = {Hall Maudslay, Rowan and Gonen, Hila and Teufel, Simone},
      title = {Edited}, year = {2019}}
@misc{twin-b, author = {Smith, Ann and Jones, Bo and Li, Cy}, title = {Beta}, year = {2020}}
@misc{twin-a, author = {Smith, Ann and Lee, Di and Ng, Ed}, title = {Alpha}, year = {2020}}
@misc{accented, author = {{\v R}eh{\r u}{\v r}ek, Radim}, title = {Gensim}, year = {2010}}
@misc{plain-r, author = {Reimers, Nils}, title = {SBERT}, year = {2019}}
"""


def labelled(bib: str) -> list[tuple[str, str]]:
    style = author_year_labels.AuthorYearLabelsStyle()
    entries = parse_string(bib, "bibtex").entries.values()
    return [(entry.key, entry.label) for entry in style.format_entries(entries)]


def test_labels_read_like_the_parenthetical_citations():
    labels = dict(labelled(BIB))
    assert labels["one"] == "Järvelin, 2002"
    assert labels["two"] == "Rekabsaz and Schedl, 2020"
    assert labels["three"] == "Abolghasemi et al., 2024"
    assert labels["von"] == "de Rijke, 2019"
    assert labels["edited"] == "Hall Maudslay et al., 2019"
    assert labels["accented"] == "Řehůřek, 2010"


def test_equal_labels_get_letters_in_title_order():
    labels = dict(labelled(BIB))
    assert labels["twin-a"] == "Smith et al., 2020a"  # "Alpha" sorts before "Beta"
    assert labels["twin-b"] == "Smith et al., 2020b"


def test_entries_sort_by_authors_as_read():
    keys = [key for key, _ in labelled(BIB)]
    assert keys == [
        "three",
        "von",
        "edited",
        "one",
        "accented",  # Řehůřek sorts as Rehurek: before Reimers
        "plain-r",
        "two",
        "twin-a",
        "twin-b",
    ]


def test_an_entry_without_author_editor_or_title_is_an_error_naming_it():
    with pytest.raises(ValueError, match="'anonymous' has no author, editor or title"):
        labelled("@misc{anonymous, year = {2001}}")
