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


def queued_seconds(task: str) -> float:
    """How long the thread ``task`` (``"thread-self"``, or a pid for its main thread; an exited
    process not yet reaped too) has waited for a CPU while runnable: the second field of
    ``/proc/TASK/schedstat``, in nanoseconds."""
    with open(f"/proc/{task}/schedstat") as stats:
        return int(stats.read().split()[1]) / 1e9


def time_to_end(child, signum: int, timeout: float = 60) -> tuple[str, float]:
    """Send ``signum`` to ``child`` (a ``Popen`` with ``stderr`` piped, short) and return its
    standard error and the seconds it took to end, less the time it or this process waited for a
    CPU that other processes held: the command's own time, the same on a loaded machine as on an
    idle one (a wall clock alone measured 1.63 s for a command that ends in 0.3 s, beside two
    test suites on two cores).  ``child`` is killed after ``timeout`` seconds."""
    import os
    import threading
    import time

    killer = threading.Timer(timeout, child.kill)
    killer.start()
    try:
        queued = queued_seconds(str(child.pid))
        sent = time.monotonic()
        child.send_signal(signum)
        mine = queued_seconds("thread-self")
        # wait without reaping, so that the ended child's schedstat can still be read; this
        # thread sleeps until the child ends, then waits for a CPU (counted in ``mine``)
        os.waitid(os.P_PID, child.pid, os.WEXITED | os.WNOWAIT)
        took = time.monotonic() - sent
        mine = queued_seconds("thread-self") - mine
        queued = queued_seconds(str(child.pid)) - queued
        _, err = child.communicate()
    finally:
        killer.cancel()
    return err, took - queued - mine
