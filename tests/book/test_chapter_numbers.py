"""Per-chapter equation and table numbers (book/_ext/chapter_numbers.py)."""

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "book" / "_ext"))
import chapter_numbers  # noqa: E402
from docutils import nodes  # noqa: E402


def test_the_chapter_number_comes_from_the_file_name():
    assert chapter_numbers.chapter_number("notebooks/06_duo") == (6,)
    assert chapter_numbers.chapter_number("notebooks/13_seme") == (13,)
    assert chapter_numbers.chapter_number("book/conventions") == ()
    assert chapter_numbers.chapter_number("book/intro") == ()


def test_a_page_numbers_its_equations_from_one_in_the_book_wide_order():
    # Sphinx's book-wide numbers of chapter 6's equations: 25, 26, 27 (ids in any order)
    numbers = {"equation-b": (26,), "equation-c": (27,), "equation-a": (25,)}
    assert chapter_numbers.renumber(numbers, (6,)) == {
        "equation-a": (6, 1),
        "equation-b": (6, 2),
        "equation-c": (6, 3),
    }
    assert chapter_numbers.renumber({"x": (40,), "y": (12,)}, ()) == {"y": (1,), "x": (2,)}


class _Env:
    def __init__(self, toc_fignumbers):
        self.toc_fignumbers = toc_fignumbers


def test_every_page_restarts_and_other_figure_types_are_left_alone():
    env = _Env(
        {
            "notebooks/03_rab_arab": {
                "displaymath": {"e1": (8,), "e2": (9,)},
                "figure": {"f": (4,)},
            },
            "notebooks/06_duo": {"displaymath": {"e3": (25,)}},
            "book/conventions": {"displaymath": {"e4": (40,)}},
            "book/intro": {},
        }
    )
    assert chapter_numbers._per_chapter(None, env) == []
    assert env.toc_fignumbers["notebooks/03_rab_arab"] == {
        "displaymath": {"e1": (3, 1), "e2": (3, 2)},
        "figure": {"f": (4,)},
    }
    assert env.toc_fignumbers["notebooks/06_duo"]["displaymath"] == {"e3": (6, 1)}
    assert env.toc_fignumbers["book/conventions"]["displaymath"] == {"e4": (1,)}


def test_html_table_captions_get_the_chapters_numbers_in_order():
    html = (
        '<style></style><table id="T_1">\n  <caption>gender-neutral queries</caption><tr></tr>'
        '</table><table id="T_2"><thead></thead></table>'
        '<table class="x"><caption class="c">second</caption></table>'
    )
    numbered, following = chapter_numbers.number_html_tables(html, (5,), 3)
    assert following == 5
    assert '<caption><span class="caption-number">Table 5.3 </span>gender-neutral' in numbered
    assert '<caption class="c"><span class="caption-number">Table 5.4 </span>second' in numbered
    assert '<table id="T_2"><thead>' in numbered  # no caption: left as it is


class _App:
    def __init__(self):
        self.env = _Env({})


def test_markdown_and_output_tables_share_one_counter_per_page():
    doctree = nodes.section()
    first = nodes.table("", nodes.title("", "A Markdown table"), ids=["table-a"])
    output = nodes.raw("", "<table><caption>an output</caption></table>", format="html")
    uncaptioned = nodes.table("", ids=["table-b"])  # no title: not numbered
    last = nodes.table("", nodes.title("", "Another"), ids=["table-c"])
    doctree += [first, output, uncaptioned, last]
    app = _App()
    chapter_numbers._tables(app, doctree, "notebooks/07_pairwise_fairness")
    assert app.env.toc_fignumbers["notebooks/07_pairwise_fairness"]["table"] == {
        "table-a": (7, 1),
        "table-c": (7, 3),
    }
    html = [n.astext() for n in doctree.findall(nodes.raw)]
    assert html == [
        '<table><caption><span class="caption-number">Table 7.2 </span>an output</caption></table>'
    ]
