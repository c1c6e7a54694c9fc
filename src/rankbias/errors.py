"""Errors raised on bad input: every reader raises :class:`InputError` (a ``ValueError``) naming
the file, the line or id, what was found and what was expected; nothing is skipped silently.
The command line prints the message and exits with status 2."""

from __future__ import annotations

import numbers


class InputError(ValueError):
    """Bad input: a malformed file, an unknown id, an inconsistent parameter."""


class PluginError(ImportError):
    """An installed measure plugin (entry point group ``rankbias.measures``) that fails to load
    or gives no measure: the user's environment to mend, not a bug of rankbias."""


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


def expect_items(value, name: str, expected: str = "a list") -> list:
    """``value`` as a list if it is an iterable other than a string (whose characters would be
    taken one by one as items); else a ``TypeError`` naming ``name``."""
    if isinstance(value, str | bytes) or not hasattr(value, "__iter__"):
        raise TypeError(f"{name}: expected {expected}, found {type(value).__name__} {value!r:.40}")
    return list(value)


def expect_frame(value, name: str, columns=(), expected: str = "") -> None:
    """A ``TypeError`` naming ``name`` unless ``value`` is a pandas DataFrame (``expected``
    says which, in words), then an :class:`InputError` naming the ``columns`` it lacks."""
    import pandas as pd  # here: the command line imports this module before any numerical one

    expected = expected or f"a DataFrame with the columns {', '.join(columns)}"
    if not isinstance(value, pd.DataFrame):
        raise TypeError(f"{name}: expected {expected}, found {type(value).__name__}")
    if lacking := [c for c in columns if c not in value.columns]:
        raise InputError(f"{name}: lacks the column(s) {lacking}; expected {expected}")


def expect_choice(value, name: str, choices) -> str:
    """``value`` if it is one of the strings ``choices``; else a ``ValueError`` naming ``name``
    (a table or an array too, which ``in`` would compare element by element)."""
    if not isinstance(value, str) or value not in choices:
        allowed = ", ".join(repr(choice) for choice in choices)
        raise ValueError(f"{name}: expected one of {allowed}, found {value!r:.60}")
    return value


def expect_flag(value, name: str) -> bool:
    """``value`` if it is a bool (``numpy.bool_`` too); else a ``TypeError`` naming ``name``: a
    string such as ``"no"`` or ``"false"`` is true to Python, and would silently mean ``True``."""
    import numpy as np  # here: the command line imports this module before any numerical one

    if not isinstance(value, bool | np.bool_):
        raise TypeError(f"{name}: expected True or False, found {value!r}")
    return bool(value)


def expect_count(value, name: str, minimum: int = 1) -> int:
    """``value`` as an ``int`` if it is an integer (not a bool) of at least ``minimum``; else a
    ``ValueError`` naming ``name``."""
    if isinstance(value, bool) or not isinstance(value, numbers.Integral) or value < minimum:
        kind = "a positive integer" if minimum == 1 else f"an integer ≥ {minimum}"
        raise ValueError(f"{name}: expected {kind}, found {value!r}")
    return int(value)


def expect_fraction(value, name: str) -> float:
    """``value`` as a float if it is a number strictly between 0 and 1 (a level ``alpha``, a
    ``confidence``); else a ``ValueError`` naming ``name`` (a string or a bool too)."""
    if isinstance(value, bool) or not isinstance(value, numbers.Real) or not 0 < value < 1:
        raise ValueError(f"{name}: expected a number between 0 and 1, found {value!r}")
    return float(value)


def expect_seed(seed, name: str = "seed"):
    """``numpy.random.default_rng(seed)`` of an explicit seed: an integer ≥ 0, a sequence of
    them or a Generator.  ``None`` (fresh entropy: another result on every call), a bool and
    what numpy refuses are a ``TypeError`` naming ``name``."""
    import numpy as np

    rng = None
    if seed is not None and not isinstance(seed, bool):
        try:
            rng = np.random.default_rng(seed)
        except (TypeError, ValueError):
            pass
    if rng is None:
        raise TypeError(
            f"{name}: expected an integer ≥ 0, a sequence of them or a Generator, found {seed!r}"
        )
    return rng
