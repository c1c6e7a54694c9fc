"""The ClueWeb22-B projection of book/at_scale.md, redone from the inputs the page states.

Inputs, as the page gives them: about 200 million pages, about 43% of them English (the Lemur
Project's description of ClueWeb22); 300,000 passages of about 85 words in 183 MB, counted in
1.0 CPU second by the local engine and in 10.1 by the released-style loop (the page's
measurements); an assumed 1,000 words per page.  Each result is rounded as the page prints it
and looked up in the page's text.
"""

from pathlib import Path

import pytest

PAGE = Path(__file__).resolve().parents[2] / "book" / "at_scale.md"

PAGES = 200e6
ENGLISH = 0.43 * PAGES
WORDS_PER_PASSAGE = 85
PASSAGES_MEASURED = 300_000
BYTES_MEASURED = 183e6
CPU_SECONDS_ENGINE = 1.0
CPU_SECONDS_LOOP = 10.1
WORDS_PER_PAGE = 1_000


@pytest.fixture(scope="module")
def section() -> str:
    text = PAGE.read_text(encoding="utf-8")
    return text[text.index("## What ClueWeb22-B would cost, on paper") :]


def passages(pages: float, words_per_page: float = WORDS_PER_PAGE) -> float:
    return pages * words_per_page / WORDS_PER_PASSAGE


def engine_seconds(n_passages: float) -> float:
    return n_passages / (PASSAGES_MEASURED / CPU_SECONDS_ENGINE)


def test_the_page_counts_pages_not_passages(section):
    assert "200 million web *pages*" in section
    assert "about 43% (about 86 million) are in\nEnglish" in section
    assert round(ENGLISH / 1e6) == 86


def test_passages_per_page_and_in_total(section):
    assert round(WORDS_PER_PAGE / WORDS_PER_PASSAGE) == 12
    assert "a page makes about\n12 passages" in section
    assert f"{passages(PAGES) / 1e9:.2f}" == "2.35"
    assert f"{passages(ENGLISH) / 1e9:.2f}" == "1.01"
    assert "2.35 \\times 10^9" in section and "1.01 \\times 10^9" in section
    assert f"{BYTES_MEASURED / PASSAGES_MEASURED:.0f}" == "610"
    assert "about 610 bytes each" in section


def test_worker_hours(section):
    everything, english = engine_seconds(passages(PAGES)), engine_seconds(passages(ENGLISH))
    assert round(everything, -1) == 7_840 and f"{everything / 3600:.1f}" == "2.2"
    assert round(english, -1) == 3_370 and f"{english / 3600:.2f}" == "0.94"
    assert "7{,}840 \\text{ s} \\approx 2.2 \\text{ worker-hours}" in section
    assert "3,370 s ≈ 0.94 worker-hours" in section
    # 500- and 2,000-word pages
    half = [engine_seconds(passages(p, 500)) / 3600 for p in (PAGES, ENGLISH)]
    double = [engine_seconds(passages(p, 2_000)) / 3600 for p in (PAGES, ENGLISH)]
    assert [f"{half[0]:.1f}", f"{half[1]:.2f}"] == ["1.1", "0.47"]
    assert [f"{double[0]:.1f}", f"{double[1]:.1f}"] == ["4.4", "1.9"]
    assert "(1.1 and 0.47 worker-hours)" in section and "double it (4.4 and 1.9)" in section


def test_per_byte(section):
    per_tb = 1e12 / (BYTES_MEASURED / CPU_SECONDS_ENGINE)
    assert round(per_tb, -1) == 5_460 and f"{per_tb / 3600:.1f}" == "1.5"
    bytes_per_passage = BYTES_MEASURED / PASSAGES_MEASURED
    terabytes = [passages(p) * bytes_per_passage / 1e12 for p in (PAGES, ENGLISH)]
    assert [f"{terabytes[0]:.1f}", f"{terabytes[1]:.2f}"] == ["1.4", "0.62"]
    assert "about 1.4 TB of\ntext for ClueWeb22-B (0.62 TB" in section
    # the per-byte route gives the same hours as the per-passage one
    assert terabytes[0] * per_tb == pytest.approx(engine_seconds(passages(PAGES)))


def test_released_loop(section):
    loop = passages(PAGES) * CPU_SECONDS_LOOP / PASSAGES_MEASURED
    loop_english = passages(ENGLISH) * CPU_SECONDS_LOOP / PASSAGES_MEASURED
    assert round(loop, -2) == 79_200 and round(loop / 3600) == 22
    assert f"{loop_english / 3600:.1f}" == "9.5"
    assert "≈ 79,200 s ≈ 22 core-hours (9.5 for the English pages)" in section
