"""The book's figure style: sizes on the page, legends outside the data, limits, PNG output."""

import matplotlib

matplotlib.use("Agg")

import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402
import pandas as pd  # noqa: E402
import pytest  # noqa: E402
import seaborn as sns  # noqa: E402

from rankbias import plots  # noqa: E402


@pytest.fixture(autouse=True)
def book_style():
    with matplotlib.rc_context():
        plots.use_book_style()
        yield
    plt.close("all")


def test_figure_width_fills_the_content_column_one_to_one():
    # 660 CSS px at 100 px per inch is 6.6 in, less a margin of 0.04 in on each side.
    assert plots.FIGURE_WIDTH == pytest.approx(6.52)
    assert matplotlib.rcParams["figure.figsize"][0] == pytest.approx(6.52)
    assert matplotlib.rcParams["figure.dpi"] == 100


def test_every_font_size_of_the_style_is_at_least_the_minimum_on_the_page():
    # 11 pt at 100 px per inch is 11 * 100 / 72 = 15.28 px.
    smallest_pt = min(matplotlib.rcParams[key] for key in plots.FONT_SIZES_PT)
    assert smallest_pt == 11.0
    assert smallest_pt / 72 * 100 >= plots.MIN_TEXT_PX


def test_smallest_text_of_a_column_wide_figure_is_its_tick_label_size():
    fig, ax = plt.subplots(figsize=plots.figure_size())
    ax.plot([0, 1], [0, 1])
    ax.set(xlabel="x", ylabel="y", title="t")
    assert plots.smallest_text_px(fig) == pytest.approx(11.0 / 72 * 100)


def test_a_figure_wider_than_the_column_is_scaled_down_and_its_text_shrinks():
    # Twice the column width: shown at half size, so 11 pt text is 7.6 px on the page.
    fig, ax = plt.subplots(figsize=(2 * plots.FIGURE_WIDTH, 3))
    ax.plot([0, 1], [0, 1])
    ax.set(xlabel="x", ylabel="y")
    shown = plots.smallest_text_px(fig)
    assert shown < plots.MIN_TEXT_PX
    assert shown == pytest.approx(11.0 / 72 * 100 / 2, rel=0.1)


def test_small_annotation_text_is_found():
    fig, ax = plt.subplots(figsize=plots.figure_size())
    ax.plot([0, 1], [0, 1])
    ax.text(0.5, 0.5, "0.12", fontsize=5)
    assert plots.smallest_text_px(fig) == pytest.approx(5 / 72 * 100)


def test_figure_without_text_is_an_error():
    fig = plt.figure()
    with pytest.raises(ValueError, match="no visible text"):
        plots.smallest_text_px(fig)


def test_facet_height_fills_the_width():
    # 3 facets of aspect 1.2 in 6.52 - 0.9 = 5.62 in: 5.62 / 3 / 1.2 in high.
    assert plots.facet_height(3, aspect=1.2) == pytest.approx(5.62 / 3 / 1.2)
    with pytest.raises(ValueError, match="columns"):
        plots.facet_height(0)
    with pytest.raises(ValueError, match="aspect"):
        plots.facet_height(2, aspect=0)


def test_figure_size_rejects_non_positive_ratio():
    assert plots.figure_size(0.5) == pytest.approx((6.52, 3.26))
    with pytest.raises(ValueError, match="height_ratio"):
        plots.figure_size(0)


def _overlaps(a, b):
    return a.x0 < b.x1 and b.x0 < a.x1 and a.y0 < b.y1 and b.y0 < a.y1


def test_legend_outside_takes_the_legend_off_the_data():
    frame = pd.DataFrame(
        {"x": np.tile(np.arange(10), 3), "y": np.arange(30.0), "g": np.repeat(list("abc"), 10)}
    )
    fig, ax = plt.subplots(figsize=plots.figure_size())
    sns.lineplot(data=frame, x="x", y="y", hue="g", ax=ax)
    plots.legend_outside(ax)
    fig.canvas.draw()
    renderer = fig.canvas.get_renderer()
    legend = ax.get_legend()
    assert legend is not None
    assert [t.get_text() for t in legend.get_texts()] == ["a", "b", "c"]
    assert not _overlaps(legend.get_window_extent(renderer), ax.get_window_extent(renderer))


def test_legend_outside_on_a_facet_grid():
    frame = pd.DataFrame(
        {
            "x": np.tile(np.arange(5), 4),
            "y": np.arange(20.0),
            "g": np.tile(np.repeat(list("ab"), 5), 2),
            "c": np.repeat(["left", "right"], 10),
        }
    )
    grid = sns.relplot(data=frame, x="x", y="y", hue="g", col="c", kind="line", height=2)
    plots.legend_outside(grid)
    grid.figure.canvas.draw()
    renderer = grid.figure.canvas.get_renderer()
    legend_box = grid.legend.get_window_extent(renderer)
    for ax in grid.axes.flat:
        assert not _overlaps(legend_box, ax.get_window_extent(renderer))


def test_legend_outside_without_legend_is_an_error():
    fig, ax = plt.subplots()
    ax.plot([0, 1], [0, 1])
    with pytest.raises(ValueError, match="no legend"):
        plots.legend_outside(ax)


def test_figure_png_is_twice_the_resolution_and_reports_css_width():
    fig, ax = plt.subplots(figsize=plots.figure_size())
    ax.plot([0, 1], [0, 1])
    data, metadata = plots.figure_png(fig)
    assert data[:8] == b"\x89PNG\r\n\x1a\n"
    pixel_width = int.from_bytes(data[16:20], "big")
    assert metadata == {"width": pixel_width // 2}
    # A column-wide figure in constrained layout, with its margins, fills the column (its tight
    # box trims a few pixels of white) and is never wider, so it is shown one to one.
    assert 0.97 * plots.CONTENT_WIDTH_PX <= metadata["width"] <= plots.CONTENT_WIDTH_PX


def _cells(styler) -> list[str]:
    import re

    return re.findall(r">([^<>]+)</td>", styler.to_html())


def test_book_table_words_rounding_and_no_row_numbers():
    import numpy as np
    import pandas as pd

    from rankbias.plots import book_table

    frame = pd.DataFrame(
        {
            "run": ["bm25", "dense"],
            "nfairr@10": [0.831174, np.nan],
            "n_queries": [1673, 16720],
            "p": [0.0001234, 0.5],
        }
    )
    styler = book_table(
        frame, "Means per system", headers={"n_queries": "queries"}, precise={"p": 5}
    )
    html = styler.to_html()
    assert "<caption>Means per system</caption>" in html
    assert ">NFaiRR@10</th>" in html and ">queries</th>" in html and ">run</th>" in html
    assert _cells(styler) == [
        "bm25",
        "0.831",
        "1,673",
        "0.00012",
        "dense",
        "–",
        "16,720",
        "0.50000",
    ]
    assert "row_heading" not in html  # a RangeIndex is row numbers: hidden
    labelled = book_table(frame.set_index("run"), "By system", headers={"run": "system"})
    assert "row_heading" in labelled.to_html() and ">system</th>" in labelled.to_html()
    assert "row_heading" not in book_table(frame.set_index("run"), "x", index=False).to_html()
