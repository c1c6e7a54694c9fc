"""Progress bars of the commands (``tqdm``, on standard error): on a terminal only, never with
``--quiet``."""

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
    """Lines of an uncompressed regular file, estimated from its first MiB (for the time left of
    a bar, whose total is corrected at the end); ``None`` if unknown."""
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


def _bar(**settings):
    from tqdm import tqdm

    return tqdm(unit_scale=True, file=sys.stderr, dynamic_ncols=True, leave=False, **settings)


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
    with _bar(total=total, unit=unit, desc=description) as bar:
        for item in items:
            yield item
            bar.update(weight(item) if weight else 1)
        bar.total = bar.n
        bar.refresh()


def byte_bar(show: bool, total: int | None, description: str):
    """A bar counting bytes (``update(n)``) or ``None`` when progress is not shown."""
    if not show:
        return None
    return _bar(total=total, unit="B", unit_divisor=1024, desc=description)
