"""Option types of the ``rankbias`` commands (``argparse`` ``type=`` functions): each turns the
text of an option into its value or raises :class:`argparse.ArgumentTypeError` saying what was
found and what is expected.  Nothing heavy is imported, so ``rankbias --help`` stays fast.
"""

from __future__ import annotations

import argparse
import math
import os
import re

# The library's choices, written out so that the parser needs no numerical module (tests check
# that they agree).
TOKENIZERS = ("default", "whitespace")  # rankbias.text.TOKENIZERS
DISTANCES = ("l1", "l2", "jsd", "kl")  # rankbias.metrics.texfair.DISTANCES
DEFAULT_CUTOFFS = (5, 10, 20)  # rankbias.scoring.DEFAULT_CUTOFFS

#: the largest integer option value (larger values would overflow the 64-bit arrays)
MAX_INTEGER = 2**31 - 1

_DECIMAL = re.compile(r"[+-]?([0-9]+\.?[0-9]*|\.[0-9]+)([eE][+-]?[0-9]+)?", re.ASCII)
_SPECIAL_FLOATS = ("inf", "infinity", "nan")


def _integer(text: str, what: str) -> int:
    """ASCII decimal digits with an optional sign, at most :data:`MAX_INTEGER` in size."""
    cleaned = text.strip()
    if re.fullmatch(r"[+-]?[0-9]+", cleaned, flags=re.ASCII) is None:
        raise argparse.ArgumentTypeError(f"{text!r} is not an integer; expected {what}")
    value = int(cleaned)
    if abs(value) > MAX_INTEGER:
        raise argparse.ArgumentTypeError(
            f"{text!r} is too large (more than {MAX_INTEGER}); expected {what}"
        )
    return value


def positive_int(text: str) -> int:
    """An integer ≥ 1 (digits only: ``1_000`` and ``1e3`` are refused)."""
    value = _integer(text, "an integer ≥ 1")
    if value < 1:
        raise argparse.ArgumentTypeError(f"{text!r} is less than 1; expected an integer ≥ 1")
    return value


def cutoff_list(text: str) -> tuple[int, ...]:
    """``"5,10,20"`` → ``(5, 10, 20)``: integers ≥ 1, each once, in the order given."""
    parts = [part.strip() for part in text.split(",")]
    if not text.strip() or "" in parts:
        raise argparse.ArgumentTypeError(
            f"{text!r} has an empty item; expected comma-separated integers ≥ 1 like 5,10,20"
        )
    values = []
    for part in parts:
        value = _integer(part, "comma-separated integers ≥ 1 like 5,10,20")
        if value < 1:
            raise argparse.ArgumentTypeError(
                f"cutoff {part!r} is less than 1; expected comma-separated integers ≥ 1"
            )
        values.append(value)
    return tuple(dict.fromkeys(values))


def nonnegative_float(text: str) -> float:
    """A finite number ≥ 0 written in ASCII as a decimal number (``1``, ``0.5``, ``1e-3``;
    ``1_0``, ``0x1`` and non-ASCII digits are refused)."""
    cleaned = text.strip()
    if _DECIMAL.fullmatch(cleaned) is None and cleaned.lower().lstrip("+-") not in _SPECIAL_FLOATS:
        raise argparse.ArgumentTypeError(f"{text!r} is not a number; expected a number ≥ 0")
    value = float(cleaned)
    if not math.isfinite(value) or value < 0:
        raise argparse.ArgumentTypeError(f"{text!r}: expected a finite number ≥ 0")
    return value


def cpu_count() -> int:
    """The cores this process may use."""
    try:
        return len(os.sched_getaffinity(0)) or 1
    except AttributeError:  # not on Linux
        return os.cpu_count() or 1


def worker_count(text: str) -> int:
    """An integer between 1 and the number of cores."""
    cores = cpu_count()
    value = _integer(text, f"an integer between 1 and {cores} (the cores of this machine)")
    if not 1 <= value <= cores:
        raise argparse.ArgumentTypeError(
            f"{text!r} is out of range; expected an integer between 1 and {cores} "
            "(the cores of this machine)"
        )
    return value


def collection_source(text: str) -> str:
    """A collection file (a readable file, pipe or device when it names anything at all) or an
    ``ir_datasets`` id (kept as it is)."""
    if text == "":
        raise argparse.ArgumentTypeError("empty path; expected a file")
    if os.path.isdir(text):
        raise argparse.ArgumentTypeError(f"{text} is a directory; expected a file")
    if text.endswith(os.sep):  # "file.tsv/": the system refuses it, a path object drops the /
        raise argparse.ArgumentTypeError(f"{text} ends in /, naming a directory; expected a file")
    if os.path.exists(text) and not os.access(text, os.R_OK):
        raise argparse.ArgumentTypeError(f"{text}: permission denied; expected a readable file")
    return text


def input_file(text: str) -> str:
    """An existing, readable file, pipe or device (not a directory)."""
    collection_source(text)
    if not os.path.exists(text):
        raise argparse.ArgumentTypeError(f"{text}: no such file; expected an existing file")
    return text


def input_file_or(*keywords: str):
    """Like :func:`input_file`, but each of ``keywords`` is accepted as it is."""

    def check(text: str) -> str:
        if text in keywords and not os.path.exists(text):
            return text
        try:
            return input_file(text)
        except argparse.ArgumentTypeError as exc:
            raise argparse.ArgumentTypeError(f"{exc}, or one of: {', '.join(keywords)}") from None

    check.__name__ = "input file"
    return check


def seconds(text: str) -> float:
    """A finite number of seconds > 0."""
    try:
        value = nonnegative_float(text)
    except argparse.ArgumentTypeError:  # said as "≥ 0", which 0 is not
        value = 0.0
    if value <= 0:
        raise argparse.ArgumentTypeError(f"{text!r}: expected a number of seconds > 0")
    return value


def scheduler_address(text: str) -> str:
    """``tcp://HOST:PORT`` or ``HOST:PORT`` (``[IPv6]:PORT`` too), the port 1 to 65535: the one
    protocol the commands connect with (``tls://`` needs a security configuration they do not
    take, ``inproc://`` reaches only its own process)."""
    expected = "expected tcp://HOST:PORT, the address a `dask scheduler` prints"
    scheme, found, rest = text.strip().rpartition("://")
    if found and scheme != "tcp":
        raise argparse.ArgumentTypeError(f"{text!r}: protocol {scheme}:// is not used; {expected}")
    host, _, port = rest.rpartition(":")
    if not host.strip("[]") or re.fullmatch("[0-9]{1,5}", port, re.ASCII) is None:
        raise argparse.ArgumentTypeError(f"{text!r} is not HOST:PORT; {expected}")
    if not 1 <= int(port) <= 65535:
        raise argparse.ArgumentTypeError(f"{text!r}: port {port} is out of range 1 to 65535")
    return text.strip()
