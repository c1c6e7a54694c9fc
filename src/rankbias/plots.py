"""The book's figure style, the figure helpers the chapters share, and its table style.

Figures are drawn at the width they are shown at (``FIGURE_WIDTH`` inches at ``CSS_DPI`` fill
the content column one to one; PNGs at twice that resolution), so that with the font sizes of
:func:`use_book_style` the smallest text is at least ``MIN_TEXT_PX`` high on the page, which
:func:`smallest_text_px` measures.  A chapter calls :func:`use_book_style` once, after its
imports.
"""

from __future__ import annotations

import io
import warnings

import matplotlib as mpl
import seaborn as sns
from matplotlib.figure import Figure
from matplotlib.text import Text

#: CSS pixels for a figure: the content column of a 1280 px window (676 px) less the 8 px
#: padding on each side of a figure, measured in headless Chromium.
CONTENT_WIDTH_PX = 660
#: Figure pixels per inch at which a figure is shown one to one on the page.
CSS_DPI = 100
#: Margin around the tight bounding box of a saved figure.
SAVE_PAD_INCHES = 0.04
#: Width in inches of a figure that, with its margins, fills the content column.
FIGURE_WIDTH = CONTENT_WIDTH_PX / CSS_DPI - 2 * SAVE_PAD_INCHES
#: Smallest acceptable height of figure text on the page, in CSS pixels (body text is 16 px).
MIN_TEXT_PX = 15.0

#: Font sizes of the book style, in points; at ``CSS_DPI`` the smallest (11 pt) is 15.3 px.
FONT_SIZES_PT = {
    "font.size": 11.5,
    "axes.titlesize": 12.0,
    "axes.labelsize": 12.0,
    "xtick.labelsize": 11.0,
    "ytick.labelsize": 11.0,
    "legend.fontsize": 11.0,
    "legend.title_fontsize": 11.5,
    "figure.titlesize": 12.5,
}


def use_book_style() -> None:
    """Set the book's theme for the session: whitegrid, :data:`FONT_SIZES_PT`, figures
    ``FIGURE_WIDTH`` wide, constrained layout (seaborn's switch to tight layout not reported);
    in IPython, figures shown by :func:`figure_png`."""
    sns.set_theme(style="whitegrid", context="notebook")
    mpl.rcParams.update(FONT_SIZES_PT)
    mpl.rcParams.update(
        {
            "figure.figsize": (FIGURE_WIDTH, 0.55 * FIGURE_WIDTH),
            "figure.dpi": CSS_DPI,
            "savefig.dpi": 2 * CSS_DPI,
            "savefig.bbox": "tight",
            "savefig.pad_inches": SAVE_PAD_INCHES,
            "figure.constrained_layout.use": True,
            "legend.frameon": False,
            "axes.titlepad": 6.0,
        }
    )
    warnings.filterwarnings("ignore", message="The figure layout has changed to tight")
    _register_png_formatter()


def figure_png(fig: Figure) -> tuple[bytes, dict[str, int]]:
    """The figure as a PNG at twice ``CSS_DPI``, with (only) its width in CSS pixels as
    metadata, so a narrower column scales it down."""
    buffer = io.BytesIO()
    fig.savefig(buffer, format="png", dpi=2 * CSS_DPI, bbox_inches="tight")
    data = buffer.getvalue()
    return data, {"width": int.from_bytes(data[16:20], "big") // 2}  # IHDR width of the PNG


def _register_png_formatter() -> None:
    """Display matplotlib figures with :func:`figure_png` in the running IPython shell."""
    try:
        from IPython import get_ipython
    except ImportError:
        return
    shell = get_ipython()
    if shell is None:  # plain Python: nothing to register
        return
    # loading the inline backend resets the formatters: load it before registering ours
    import matplotlib.pyplot as plt

    plt.close(plt.figure())
    formatters = shell.display_formatter.formatters
    formatters["image/png"].for_type(Figure, figure_png)
    for mime in ("image/svg+xml", "application/pdf", "image/jpeg"):
        formatters[mime].pop(Figure, None)


def figure_size(height_ratio: float = 0.55) -> tuple[float, float]:
    """``(width, height)`` in inches of a figure as wide as the content column."""
    if height_ratio <= 0:
        raise ValueError(f"height_ratio must be positive, got {height_ratio}")
    return FIGURE_WIDTH, FIGURE_WIDTH * height_ratio


def facet_height(columns: int, aspect: float = 1.0, margin: float = 0.9) -> float:
    """Seaborn's ``height=`` for ``columns`` facets of ``aspect`` to fill the column, leaving
    ``margin`` inches for the y-axis labels (a legend goes below the grid)."""
    if columns < 1:
        raise ValueError(f"columns must be at least 1, got {columns}")
    if aspect <= 0:
        raise ValueError(f"aspect must be positive, got {aspect}")
    usable = FIGURE_WIDTH - margin
    if usable <= 0:
        raise ValueError(f"margin {margin} leaves no room in a {FIGURE_WIDTH} in figure")
    return usable / columns / aspect


def legend_outside(obj, columns: int | None = None, title: str | None = None) -> None:
    """Move the legend of an Axes above it, or of a seaborn grid below it; ``columns`` legend
    columns (default: one row), ``title`` replaces the title (``""`` removes it)."""
    is_axes = isinstance(obj, mpl.axes.Axes)
    legend = obj.get_legend() if is_axes else getattr(obj, "legend", None)
    if legend is None:
        raise ValueError("legend_outside: the plot has no legend to move")
    entries = len(legend.get_texts())
    if title is None:
        title = legend.get_title().get_text()
    sns.move_legend(
        obj,
        "lower center" if is_axes else "upper center",
        bbox_to_anchor=(0.5, 1.0) if is_axes else (0.5, 0.0),
        ncol=columns or entries,
        title=title or None,
        frameon=False,
    )


def smallest_text_px(fig: Figure, column_px: float = CONTENT_WIDTH_PX) -> float:
    """Height in CSS pixels of the smallest visible text of ``fig`` as the book shows it
    (``s`` points are ``s / 72 * CSS_DPI`` pixels, scaled down to ``column_px`` if wider)."""
    fig.canvas.draw()
    bbox = fig.get_tightbbox(fig.canvas.get_renderer())  # in inches
    scale = min(1.0, column_px / (bbox.width * CSS_DPI))
    sizes = [
        text.get_fontsize()
        for text in fig.findobj(Text)
        if text.get_visible() and text.get_text().strip()
    ]
    if not sizes:
        raise ValueError("smallest_text_px: the figure has no visible text")
    return min(sizes) / 72 * CSS_DPI * scale


def book_table(
    frame,
    caption: str,
    *,
    headers: dict | None = None,
    digits: int = 3,
    precise: dict | None = None,
    index: bool | None = None,
):
    """``frame`` as the book shows a table: a caption (numbered "Table 6.2" per chapter when
    the page is built), headers in words (``headers`` renames the columns and index levels it
    names that ``frame`` has, so that one mapping serves several tables; other
    measure labels get their display names, ``nfairr@10`` → ``NFaiRR@10``), floats to
    ``digits`` decimals (``precise`` maps a column to more; say so in the caption), integers
    with thousands separators, undefined values as "–", and no row numbers: the index is
    shown only when it holds labels (``index`` forces either).  Returns a pandas Styler."""
    import pandas as pd

    from rankbias.errors import expect_count, expect_type
    from rankbias.metrics.measures import display_name

    expect_type(frame, "frame", pd.DataFrame, "a DataFrame")
    if not expect_type(caption, "caption", str, "a str").strip():
        raise ValueError("caption: expected the table's caption, found an empty one")
    expect_count(digits, "digits", 0)
    headers = dict(headers or {})
    precise = dict(precise or {})
    shown = frame.rename(
        columns=lambda c: headers.get(c, display_name(c) if isinstance(c, str) else c)
    )
    if unknown := [key for key in precise if key not in {*frame.columns, *shown.columns}]:
        raise ValueError(f"precise: no column {unknown}; found {list(frame.columns)}")
    for key, places in precise.items():
        expect_count(places, f"precise[{key!r}]", 0)
    shown = shown.rename_axis(index=[headers.get(n, n) for n in shown.index.names])
    named = {headers.get(c, c): d for c, d in precise.items()}
    formats = {}
    for column, original in zip(shown.columns, frame.columns, strict=True):
        kind = frame[original].dtype
        if pd.api.types.is_bool_dtype(kind):
            continue
        if pd.api.types.is_integer_dtype(kind):
            formats[column] = "{:,}"
        elif pd.api.types.is_float_dtype(kind):
            places = named.get(column, precise.get(original, digits))
            formats[column] = f"{{:,.{places}f}}"
    styler = shown.style.format(formats, na_rep="–").set_caption(caption)
    if index is None:
        index = not isinstance(frame.index, pd.RangeIndex)
    return styler if index else styler.hide(axis="index")


#: The title of the note a chapter shows where it steps aside (the tests list these notes).
SKIPPED_TITLE = "Not on this dataset"


def skipped_section(section: str, needs: str):
    """The visible note a chapter shows instead of a section whose inputs the dataset lacks:
    what the section would show and what it needs (a Markdown admonition; the book renders
    Markdown outputs as MyST)."""
    from IPython.display import Markdown

    for name, value in (("section", section), ("needs", needs)):
        if not isinstance(value, str) or not value.strip():
            raise ValueError(f"{name}: expected a sentence, found {value!r}")
    return Markdown(
        f":::{{admonition}} {SKIPPED_TITLE}\n:class: note skipped-section\n\n"
        f"{section.strip()} needs {needs.strip()}, which this dataset does not have; "
        "the section is skipped.\n:::\n"
    )
