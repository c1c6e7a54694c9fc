"""The book's figure style and the few figure helpers the chapters share.

Figures are drawn at the width they are shown at: the book's content column is
``CONTENT_WIDTH_PX`` CSS pixels wide (a 1280 px window), a figure of ``FIGURE_WIDTH`` inches
at ``figure.dpi = 100`` fills it one to one, and the PNG is rendered at twice that resolution
for high-density screens.  With the font sizes of :func:`use_book_style`, the smallest text in
a figure (tick labels, legend entries, heatmap cell numbers) is at least ``MIN_TEXT_PX`` pixels
high on the page, the size of the body text of the book's theme.

A chapter calls :func:`use_book_style` once, after its imports, and draws every figure at
``FIGURE_WIDTH`` (:func:`figure_size`, :func:`facet_height`).  :func:`smallest_text_px` measures
a finished figure as the reader will see it, so that a chapter can assert its figures are
legible.
"""

from __future__ import annotations

import io
import warnings

import matplotlib as mpl
import seaborn as sns
from matplotlib.figure import Figure
from matplotlib.text import Text

CONTENT_WIDTH_PX = 660
"""Width available to a figure in CSS pixels: the content column of a 1280 px wide window
(676 px) less the 8 px padding on each side of a figure, measured in headless Chromium."""

CSS_DPI = 100
"""Figure pixels per inch at which a figure is shown one to one on the page."""

SAVE_PAD_INCHES = 0.04
"""Margin around the tight bounding box of a saved figure."""

FIGURE_WIDTH = CONTENT_WIDTH_PX / CSS_DPI - 2 * SAVE_PAD_INCHES
"""Width in inches of a figure that, with its margins, fills the content column."""

MIN_TEXT_PX = 15.0
"""Smallest acceptable height of figure text on the page, in CSS pixels (the theme's body text
is 16 px; text set in points is 100/72 of its size in pixels at ``CSS_DPI``)."""

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
"""Font sizes of the book style, in points; at ``CSS_DPI`` the smallest (11 pt) is 15.3 px."""


def use_book_style() -> None:
    """Set the book's seaborn theme and matplotlib parameters for the rest of the session.

    Whitegrid theme, font sizes :data:`FONT_SIZES_PT`, figures ``FIGURE_WIDTH`` inches wide,
    ``figure.dpi`` of ``CSS_DPI`` and PNGs at twice that, constrained layout (so that the axes
    fill the width; seaborn's grids switch to a tight layout, which is as good, and the notice
    matplotlib gives about the switch is silenced).  Inside IPython (a notebook), figures are
    displayed as high-resolution PNGs that carry their width in CSS pixels, so that the
    book shows them at the size they were drawn for.
    """
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
    """The figure as a PNG at twice ``CSS_DPI``, with its width in CSS pixels as metadata.

    Only the width is given, so that a narrower column scales the image down with its
    aspect ratio kept.
    """
    buffer = io.BytesIO()
    fig.savefig(buffer, format="png", dpi=2 * CSS_DPI, bbox_inches="tight")
    data = buffer.getvalue()
    width_px = int.from_bytes(data[16:20], "big")  # IHDR width of the PNG
    return data, {"width": width_px // 2}


def _register_png_formatter() -> None:
    """Display matplotlib figures with :func:`figure_png` in the running IPython shell."""
    try:
        from IPython import get_ipython
    except ImportError:  # plain Python: nothing to register
        return
    shell = get_ipython()
    if shell is None:
        return
    # Loading the inline backend (on the first figure) resets the figure formatters, so load it
    # now, before registering ours.
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
    """Height in inches of one facet so that ``columns`` facets of ``aspect`` fill the column.

    ``margin`` inches are left for the y-axis label and tick labels of the first column (and a
    legend is expected below the grid, not beside it).  For seaborn's ``height=`` argument.
    """
    if columns < 1:
        raise ValueError(f"columns must be at least 1, got {columns}")
    if aspect <= 0:
        raise ValueError(f"aspect must be positive, got {aspect}")
    usable = FIGURE_WIDTH - margin
    if usable <= 0:
        raise ValueError(f"margin {margin} leaves no room in a {FIGURE_WIDTH} in figure")
    return usable / columns / aspect


def legend_outside(obj, columns: int | None = None, title: str | None = None) -> None:
    """Move the legend of an Axes or a seaborn grid outside the data.

    An Axes gets its legend above the plot area (clear of the x-axis label), a seaborn grid
    below the whole grid.  ``columns`` is the number of legend columns (by default all entries
    on one row); ``title`` replaces the legend's title (``""`` removes it).
    """
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


def include_in_ylim(ax, low, high, pad: float = 0.04) -> None:
    """Widen the y-limits of ``ax`` so that every value in ``low`` … ``high`` is inside.

    For error bars drawn outside the data that set the limits (or limits set by a facet grid).
    """
    lo = min(float(min(low)), ax.get_ylim()[0])
    hi = max(float(max(high)), ax.get_ylim()[1])
    span = hi - lo
    ax.set_ylim(lo - pad * span, hi + pad * span)


def smallest_text_px(fig: Figure, column_px: float = CONTENT_WIDTH_PX) -> float:
    """Height in CSS pixels of the smallest visible text of ``fig`` as the book shows it.

    The figure is shown at its tight bounding box's width in ``CSS_DPI`` pixels, scaled down to
    ``column_px`` when wider; a text of ``s`` points is ``s / 72 * CSS_DPI`` pixels before
    that scaling.  Empty and invisible texts are ignored.
    """
    fig.canvas.draw()
    renderer = fig.canvas.get_renderer()
    bbox = fig.get_tightbbox(renderer)  # in inches
    shown_px = bbox.width * CSS_DPI
    scale = min(1.0, column_px / shown_px)
    sizes = [
        text.get_fontsize()
        for text in fig.findobj(Text)
        if text.get_visible() and text.get_text().strip()
    ]
    if not sizes:
        raise ValueError("smallest_text_px: the figure has no visible text")
    return min(sizes) / 72 * CSS_DPI * scale
