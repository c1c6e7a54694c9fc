"""Progress bars of the commands: on a terminal only, never with ``--quiet``.

A bar (``tqdm``, on standard error) shows the items done, their rate and, when the total is
known or estimated, the time left.  When standard error is not a terminal (a pipe, a log file,
a test) nothing is printed.
"""

from __future__ import annotations

import os
import stat
import sys
from collections.abc import Callable, Iterable, Iterator

SAMPLE_BYTES = 1 << 20


def wanted(args) -> bool:
    """Whether to show progress: standard error is a terminal and ``--quiet`` was not given."""
    if getattr(args, "quiet", False):
        return False
    try:
        return sys.stderr.isatty()
    except (AttributeError, ValueError):
        return False


def estimate_lines(path) -> int | None:
    """Lines of an uncompressed regular file, estimated from its first MiB; ``None`` if unknown.

    Used only for the time left of a progress bar; the bar's total is corrected at the end.
    """
    try:
        info = os.stat(path)
        if not stat.S_ISREG(info.st_mode) or str(path).endswith(".gz"):
            return None
        with open(path, "rb") as handle:
            sample = handle.read(SAMPLE_BYTES)
    except OSError:
        return None
    lines = sample.count(b"\n")
    if not sample:
        return None
    if len(sample) == info.st_size or lines == 0:
        return max(lines, 1)
    return max(1, round(info.st_size * lines / len(sample)))


def progress(
    items: Iterable,
    show: bool,
    *,
    total: int | None = None,
    unit: str = "it",
    description: str | None = None,
    weight: Callable[[object], int] | None = None,
) -> Iterator:
    """Yield ``items``, advancing a bar by ``weight(item)`` (default 1) after each one."""
    if not show:
        yield from items
        return
    from tqdm import tqdm

    with tqdm(
        total=total,
        unit=unit,
        unit_scale=True,
        desc=description,
        file=sys.stderr,
        dynamic_ncols=True,
        leave=False,
    ) as bar:
        for item in items:
            yield item
            bar.update(weight(item) if weight else 1)
        bar.total = bar.n
        bar.refresh()


def byte_bar(show: bool, total: int | None, description: str):
    """A bar counting bytes (``update(n)``) or ``None`` when progress is not shown."""
    if not show:
        return None
    from tqdm import tqdm

    return tqdm(
        total=total,
        unit="B",
        unit_scale=True,
        unit_divisor=1024,
        desc=description,
        file=sys.stderr,
        dynamic_ncols=True,
        leave=False,
    )
