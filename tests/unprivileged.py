"""A call made as an unprivileged user, for the tests of unreadable files.

Root reads a file whatever its mode, and CI runs as root: the call is made in a forked child
that drops to user and group ``nobody`` first (as this user when not root).  The child
imports nothing (root's interpreter may lie where ``nobody`` cannot read): the modules the
call needs must be imported, and compiled code warmed up, by the caller."""

from __future__ import annotations

import contextlib
import os
import shutil
import tempfile
from collections.abc import Iterator
from pathlib import Path

NOBODY = 65534


@contextlib.contextmanager
def shared_folder() -> Iterator[Path]:
    """A new folder that ``nobody`` may enter, removed afterwards (pytest's ``tmp_path`` lies in
    a folder private to its user, which every pytest session makes private again)."""
    folder = Path(tempfile.mkdtemp(prefix="rankbias-unprivileged-"))
    try:
        folder.chmod(0o755)
        yield folder
    finally:
        shutil.rmtree(folder)


def raised_unprivileged(call) -> tuple[str, str] | None:
    """``(type name, message)`` of what ``call()`` raised in the child, ``None`` if nothing."""
    read_end, write_end = os.pipe()
    pid = os.fork()
    if pid == 0:  # the child: report through the pipe, never return into pytest
        status = 0
        try:
            os.close(read_end)
            if os.geteuid() == 0:
                os.setgroups([])
                os.setgid(NOBODY)
                os.setuid(NOBODY)
            try:
                call()
                report = ""
            except BaseException as exc:  # noqa: BLE001 - reported to the parent
                report = f"{type(exc).__name__}\n{exc}"
            view = memoryview(report.encode())
            while view:
                view = view[os.write(write_end, view) :]
        except BaseException:  # noqa: BLE001 - the parent sees the exit status
            status = 1
        finally:
            os._exit(status)
    os.close(write_end)
    with os.fdopen(read_end, "rb") as pipe:
        report = pipe.read().decode()
    _, status = os.waitpid(pid, 0)
    assert os.waitstatus_to_exitcode(status) == 0, "the unprivileged child failed"
    if not report:
        return None
    name, _, message = report.partition("\n")
    return name, message
