"""What a terminal gives a command, whatever the test run itself inherited.

A shell that starts a job in the background (``make test &``, ``nohup``, many CI runners)
starts it with SIGINT ignored, and a program rightly keeps an inherited "ignore"; a test that
sends SIGINT must therefore give its child, or its own process, the default disposition itself.
The tests that send signals are marked ``signals``; ``tests/test_cli.py`` runs them once more
from a background job.
"""

from __future__ import annotations

import contextlib
import signal


def default_signals() -> None:
    """In a child, before it starts (``preexec_fn``): SIGINT and SIGTERM do what they do for a
    user at a terminal."""
    signal.signal(signal.SIGINT, signal.SIG_DFL)
    signal.signal(signal.SIGTERM, signal.SIG_DFL)


@contextlib.contextmanager
def python_sigint():
    """In this process, while the block runs: SIGINT is Python's own handler (it raises
    ``KeyboardInterrupt``), as in an interpreter started at a terminal."""
    before = signal.signal(signal.SIGINT, signal.default_int_handler)
    try:
        yield
    finally:
        signal.signal(signal.SIGINT, before)
