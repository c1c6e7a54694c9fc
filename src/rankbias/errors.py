"""Errors raised on bad input: every reader raises :class:`InputError` (a ``ValueError``) naming
the file, the line or id, what was found and what was expected; nothing is skipped silently.
The command line prints the message and exits with status 2."""

from __future__ import annotations


class InputError(ValueError):
    """Bad input: a malformed file, an unknown id, an inconsistent parameter."""


def located(path, line: int | None, message: str) -> InputError:
    """An :class:`InputError` whose message starts with ``path:line:``."""
    where = f"{path}:{line}" if line is not None else f"{path}"
    return InputError(f"{where}: {message}")


def expect_type(value, name: str, kind: type | tuple[type, ...], expected: str):
    """``value`` if it is a ``kind``; else a ``TypeError`` naming the argument ``name``, what
    was ``expected`` (in words) and the type found."""
    if not isinstance(value, kind):
        raise TypeError(f"{name}: expected {expected}, found {type(value).__name__}")
    return value
