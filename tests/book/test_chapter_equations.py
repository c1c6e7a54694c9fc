"""Per-chapter equation numbers (book/_ext/chapter_equations.py)."""

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "book" / "_ext"))
import chapter_equations  # noqa: E402


def test_the_chapter_number_comes_from_the_file_name():
    assert chapter_equations.chapter_number("notebooks/06_duo") == (6,)
    assert chapter_equations.chapter_number("notebooks/13_seme") == (13,)
    assert chapter_equations.chapter_number("book/conventions") == ()
    assert chapter_equations.chapter_number("book/intro") == ()


def test_a_page_numbers_its_equations_from_one_in_the_book_wide_order():
    # Sphinx's book-wide numbers of chapter 6's equations: 25, 26, 27 (ids in any order)
    numbers = {"equation-b": (26,), "equation-c": (27,), "equation-a": (25,)}
    assert chapter_equations.renumber(numbers, (6,)) == {
        "equation-a": (6, 1),
        "equation-b": (6, 2),
        "equation-c": (6, 3),
    }
    assert chapter_equations.renumber({"x": (40,), "y": (12,)}, ()) == {"y": (1,), "x": (2,)}


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
    assert chapter_equations._per_chapter(None, env) == []
    assert env.toc_fignumbers["notebooks/03_rab_arab"] == {
        "displaymath": {"e1": (3, 1), "e2": (3, 2)},
        "figure": {"f": (4,)},
    }
    assert env.toc_fignumbers["notebooks/06_duo"]["displaymath"] == {"e3": (6, 1)}
    assert env.toc_fignumbers["book/conventions"]["displaymath"] == {"e4": (1,)}
