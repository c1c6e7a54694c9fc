"""Every file ``rankbias`` writes goes through this module.

:func:`atomic_path` writes a temporary file ``.<name>.<pid>.<random>.tmp`` beside the target,
flushes it and renames it over the target, or on any error removes it and keeps the previous
output (:func:`handle_signals` turns ``SIGTERM``/``SIGHUP`` into an exception so this runs; a
killed writer's file is removed by the next write of the target).  :func:`check_output` checks
an output before the work.  Table formats follow the suffix: ``.csv``, ``.tsv``, ``.parquet``,
``.csv.gz``/``.tsv.gz`` (zero gzip time stamp: equal tables give equal bytes).
"""

from __future__ import annotations

import contextlib
import errno
import gzip
import io
import os
import re
import signal
import stat
import sys
import tempfile
import threading
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from pathlib import Path

from rankbias.errors import InputError, expect_choice, expect_type

__all__ = [
    "TABLE_SUFFIXES",
    "TableFormat",
    "Terminated",
    "TableWriter",
    "atomic_open",
    "atomic_path",
    "check_output",
    "check_output_dir",
    "handle_signals",
    "table_format",
    "write_table",
    "write_text",
]

TABLE_SUFFIXES = (".csv", ".tsv", ".parquet", ".csv.gz", ".tsv.gz")

# temporary files of this process that exist right now (removed by the signal handler too)
_LIVE_TEMPS: set[str] = set()
#: Signals received while :func:`handle_signals` was active: an exception a handler raises inside
#: a finaliser or an import can be swallowed by Python, and this record still ends the command.
PENDING_SIGNALS: list[int] = []
#: Set once the command line has said how the command ended (the grace timer then says nothing).
REPORTED = threading.Event()
GRACE_S = 0.5  # how long a command may take to end after a signal before it is ended at once


# ---- formats -------------------------------------------------------------------------------
@dataclass(frozen=True)
class TableFormat:
    """How a table is written: ``kind`` is ``csv``, ``tsv`` or ``parquet``; ``gzip`` compresses
    a text table."""

    kind: str
    gzip: bool = False


def table_format(path: str | os.PathLike[str], option: str = "--out") -> TableFormat:
    """The format named by the suffix of ``path``; an :class:`InputError` for any other."""
    name = Path(expect_type(path, option, str | os.PathLike, "a file path")).name.lower()
    for suffix in sorted(TABLE_SUFFIXES, key=len, reverse=True):
        if name.endswith(suffix) and len(name) > len(suffix):
            kind = suffix.lstrip(".").removesuffix(".gz")
            return TableFormat(kind, suffix.endswith(".gz"))
    found = "".join(Path(path).suffixes) or "no suffix"
    raise InputError(
        f"{option} {path}: unknown output format ({found}); expected a name ending in one of "
        + ", ".join(TABLE_SUFFIXES)
    )


# ---- checks before the work ------------------------------------------------------------------
def _existing_ancestor(path: Path) -> Path:
    for candidate in (path, *path.parents):
        if os.path.lexists(candidate):
            return candidate
    return Path(".")


def _check_parent(path: Path, option: str) -> None:
    ancestor = _existing_ancestor(path.parent)
    if not ancestor.is_dir():
        raise InputError(
            f"{option} {path}: {ancestor} is not a directory; expected a path inside a directory"
        )
    if not os.access(ancestor, os.W_OK | os.X_OK):
        raise InputError(
            f"{option} {path}: directory {ancestor} is not writable; expected a writable location"
        )


#: room for the temporary file's additions to the name: '.', '.<pid>.', 8 random, '.tmp'
_TEMP_EXTRA = 1 + 1 + 10 + 1 + 8 + 4


def _check_name_length(out: Path, option: str) -> None:
    """Refuse a name too long for the file system, counting the temporary file's additions."""
    try:
        limit = os.pathconf(_existing_ancestor(out.parent), "PC_NAME_MAX")
    except (OSError, ValueError, AttributeError):
        limit = 255
    size = len(os.fsencode(out.name))
    if size + _TEMP_EXTRA > limit:
        raise InputError(
            f"{option} {out}: the file name has {size} bytes; expected at most "
            f"{limit - _TEMP_EXTRA} (the file system allows {limit}, and the temporary file "
            "written first adds to the name)"
        )


def _same_file(a: Path, b: Path) -> bool:
    if os.path.realpath(a) == os.path.realpath(b):
        return True
    try:
        return os.path.samefile(a, b)
    except OSError:
        return False


def check_output(
    path: str | os.PathLike[str],
    inputs: Iterable[str | os.PathLike[str] | None] = (),
    option: str = "--out",
    table: bool = True,
) -> Path:
    """Validate an output file before any work; return it as a :class:`Path`.

    Refused with an :class:`InputError` naming ``option``: a suffix not in
    :data:`TABLE_SUFFIXES` (when ``table``), a name too long, a path in the package's resources,
    one that is or resolves to an existing path of ``inputs``, a directory or other non-regular
    file, a parent that is a file or not writable.
    """
    out = Path(expect_type(path, option, str | os.PathLike, "a file path"))
    text = os.fspath(path)
    if text == "" or out.name in ("", ".", "..") or text.endswith(("/", os.sep)):
        raise InputError(f"{option} {text!r}: expected a file name (not a directory)")
    _check_name_length(out, option)
    resources = os.path.realpath(Path(__file__).parent / "resources")
    if os.path.realpath(out).startswith(resources + os.sep):
        raise InputError(
            f"{option} {out}: is inside the package's own resources ({resources}), which hold "
            "inputs such as the default word list (--terms default); expected a path elsewhere"
        )
    for source in inputs:
        if source and os.path.exists(source) and _same_file(out, Path(source)):
            raise InputError(
                f"{option} {out}: is the input file {source}; writing there would destroy it, "
                "expected a different output path"
            )
    if table:
        table_format(out, option)
    if os.path.lexists(out):
        if out.is_dir():
            raise InputError(f"{option} {out}: is a directory; expected a file name")
        if out.exists() and not stat.S_ISREG(out.stat().st_mode):
            raise InputError(
                f"{option} {out}: is not a regular file (a device, pipe or socket); expected a "
                "file name (outputs are written beside the target and renamed into place)"
            )
    _check_parent(out, option)
    return out


def check_output_dir(path: str | os.PathLike[str], option: str = "--out") -> Path:
    """Validate an output directory before any work: named, not a file, creatable and writable
    (``""`` is refused: ``Path("")`` is the current directory)."""
    if os.fspath(expect_type(path, option, str | os.PathLike, "a directory path")) == "":
        raise InputError(f"{option} '': expected a directory name")
    out = Path(path)
    if os.path.lexists(out) and not out.is_dir():
        raise InputError(f"{option} {out}: is a file; expected a directory")
    if out.is_dir():
        if not os.access(out, os.W_OK | os.X_OK):
            raise InputError(f"{option} {out}: directory is not writable")
    else:
        _check_parent(out, option)
    return out


# ---- temporary files ---------------------------------------------------------------------------
def _pid_alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:  # exists, owned by someone else
        pass
    return True


def remove_stale_temps(target: str | os.PathLike[str]) -> list[Path]:
    """Remove (and return) the temporary files of ``target`` whose process no longer runs."""
    target = Path(target)
    pattern = re.compile(rf"\.{re.escape(target.name)}\.(\d+)\.[^.]+\.tmp")
    removed = []
    try:
        entries = list(os.scandir(target.parent))
    except OSError:
        return removed
    for entry in entries:
        match = pattern.fullmatch(entry.name)
        if match and not _pid_alive(int(match.group(1))):
            with contextlib.suppress(FileNotFoundError):
                os.unlink(entry.path)
                removed.append(Path(entry.path))
    return removed


def _fsync(path: str | Path) -> None:
    fd = os.open(path, os.O_RDONLY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


@contextlib.contextmanager
def atomic_path(target: str | os.PathLike[str]) -> Iterator[Path]:
    """Yield a fresh temporary path beside ``target``, to write in any way; when the block ends
    it is flushed and renamed over ``target`` (a symbolic link's file), or on error removed."""
    target = Path(expect_type(target, "target", str | os.PathLike, "a file path"))
    if target.is_symlink():  # the file it points to is replaced, the link kept
        target = Path(os.path.realpath(target))
    target.parent.mkdir(parents=True, exist_ok=True)
    remove_stale_temps(target)
    prefix = f".{target.name}.{os.getpid()}."
    try:
        fd, name = tempfile.mkstemp(dir=target.parent, prefix=prefix, suffix=".tmp")
    except OSError as exc:  # named by its temporary file, which the user never chose
        raise InputError(
            f"{target}: cannot create a file in {target.parent} ({exc.strerror}); expected a "
            "writable location"
        ) from None
    os.close(fd)
    _LIVE_TEMPS.add(name)
    try:
        yield Path(name)
        if PENDING_SIGNALS:  # a Terminated the interpreter swallowed: end as terminated
            raise Terminated(PENDING_SIGNALS[0])
        _fsync(name)
        try:
            mode = stat.S_IMODE(os.stat(target).st_mode)
        except FileNotFoundError:
            mask = os.umask(0)  # a new file's default mode
            os.umask(mask)
            mode = 0o666 & ~mask
        os.chmod(name, mode)
        os.replace(name, target)
        with contextlib.suppress(OSError):  # the rename is durable where directories sync
            _fsync(target.parent)
    except BaseException as exc:
        with contextlib.suppress(FileNotFoundError):
            os.unlink(name)
        if isinstance(exc, OSError) and PENDING_SIGNALS:
            raise Terminated(PENDING_SIGNALS[0]) from None
        if isinstance(exc, OSError) and exc.filename in (None, name):
            exc.filename = str(target)  # the user's file, never the hidden temporary one
        raise
    finally:
        _LIVE_TEMPS.discard(name)


@contextlib.contextmanager
def atomic_open(
    target: str | os.PathLike[str],
    mode: str = "w",
    encoding: str | None = "utf-8",
    newline: str | None = "",
):
    """:func:`atomic_path` opened for writing: ``mode`` ``"w"`` (text, line ends as given) or
    ``"wb"``."""
    expect_choice(mode, "mode", ("w", "wb"))
    text = {} if mode == "wb" else {"encoding": encoding, "newline": newline}
    with atomic_path(target) as temporary, open(temporary, mode, **text) as handle:
        yield handle


def write_text(target: str | os.PathLike[str], text: str, encoding: str = "utf-8") -> Path:
    """Write ``text`` to ``target`` atomically (no newline translation)."""
    expect_type(text, "text", str, "a str")
    with atomic_open(target, "w", encoding=encoding, newline="") as handle:
        handle.write(text)
    return Path(target)


# ---- tables ----------------------------------------------------------------------------------
class TableWriter:
    """A context manager writing a table block by block (pandas or pyarrow) into ``target``
    (format from the suffix), atomically; ``rows`` counts the rows written."""

    def __init__(self, target: str | os.PathLike[str], option: str = "--out") -> None:
        self.format = table_format(target, option)
        self.target = Path(target)
        self.rows = 0
        self._parquet = None

    def __enter__(self) -> TableWriter:
        self._context = atomic_path(self.target)
        self._temporary = self._context.__enter__()
        if self.format.kind != "parquet":
            self._raw = binary = open(self._temporary, "wb")
            if self.format.gzip:
                binary = gzip.GzipFile(filename="", mode="wb", fileobj=self._raw, mtime=0)
            self._handle = io.TextIOWrapper(binary, encoding="utf-8", newline="")
        return self

    def write(self, block) -> None:
        """Append a pandas DataFrame or a pyarrow Table (same columns every time)."""
        if hasattr(block, "to_csv") or hasattr(block, "column_names"):  # pandas, pyarrow
            names = list(block.columns if hasattr(block, "to_csv") else block.column_names)
        else:
            found = type(block).__name__
            raise TypeError(f"table: expected a pandas DataFrame or a pyarrow Table, found {found}")
        if twice := sorted({str(c) for c in names if names.count(c) > 1}):
            raise ValueError(f"table: column(s) {twice} appear twice; expected each once")
        if self.format.kind == "parquet":
            import pyarrow as pa
            import pyarrow.parquet as pq

            if isinstance(block, pa.Table):
                table = block
            else:  # the table only: pandas ``attrs`` (run reports) are not part of it
                frame = block.copy(deep=False)
                frame.attrs = {}
                table = pa.Table.from_pandas(frame, preserve_index=False)
            if self._parquet is None:
                self._parquet = pq.ParquetWriter(self._temporary, table.schema)
            self._parquet.write_table(table)
            self.rows += table.num_rows
            return
        frame = block if hasattr(block, "to_csv") else block.to_pandas()
        separator = "\t" if self.format.kind == "tsv" else ","
        frame.to_csv(self._handle, sep=separator, index=False, header=self.rows == 0)
        self.rows += len(frame)

    def _close(self) -> None:
        if self.format.kind == "parquet":
            if self._parquet is not None:
                self._parquet.close()
            return
        try:
            self._handle.close()  # also ends the gzip stream, which leaves the file open
        finally:
            self._raw.close()

    def __exit__(self, kind, value, traceback) -> bool:
        if kind is not None:
            with contextlib.suppress(Exception):  # the exception raised is the one to report
                self._close()
            return bool(self._context.__exit__(kind, value, traceback))
        try:
            self._close()
            if self.format.kind == "parquet" and self._parquet is None:
                raise InputError(f"{self.target}: no table was written; expected at least one")
        except BaseException as exc:
            self._context.__exit__(type(exc), exc, exc.__traceback__)
            raise
        return bool(self._context.__exit__(None, None, None))


def write_table(target: str | os.PathLike[str], table, option: str = "--out") -> Path:
    """Write a pandas DataFrame or pyarrow Table to ``target`` in the format of its suffix."""
    with TableWriter(target, option) as writer:
        writer.write(table)
    return Path(target)


# ---- signals ---------------------------------------------------------------------------------
class Terminated(BaseException):
    """The process received ``SIGTERM`` or ``SIGHUP`` (raised so that clean-up code runs), or a
    signal whose own exception Python swallowed (``SIGINT``: "interrupted")."""

    def __init__(self, signum: int) -> None:
        super().__init__(signum)
        self.signum = signum

    def __str__(self) -> str:
        if self.signum == signal.SIGINT:
            return "interrupted"
        return f"terminated by {signal.Signals(self.signum).name}"


def _end_now(command: str, signum: int) -> None:
    """End the process as a signal's default would, but cleanly: temporaries removed, child
    processes killed (with psutil, where installed), one line said, exit status 128 + signal.
    The children are all stopped, and the line written, before any is killed: a thread of this
    process that saw a child die (a Dask nanny's) could start another, or a new resource
    tracker of multiprocessing whose tracebacks would follow the line."""
    for name in list(_LIVE_TEMPS):
        with contextlib.suppress(OSError):
            os.unlink(name)
    stopped = set()
    with contextlib.suppress(ImportError):  # imported already: psutil comes with distributed
        import psutil

        for _ in range(2):  # twice: a child started while the others were being stopped
            with contextlib.suppress(psutil.Error):
                for child in psutil.Process().children(recursive=True):
                    with contextlib.suppress(OSError):
                        os.kill(child.pid, signal.SIGSTOP)
                        stopped.add(child.pid)
    if not REPORTED.is_set():
        os.write(2, f"{command}: {Terminated(signum)}; no output was written\n".encode())
    for pid in stopped:  # os.kill, not psutil: no file is read between two kills
        with contextlib.suppress(OSError):
            os.kill(pid, signal.SIGKILL)
    os._exit(128 + signum)


@contextlib.contextmanager
def handle_signals(
    signals: tuple[str, ...] = ("SIGTERM", "SIGHUP"), at_once: str = "", command: str = ""
):
    """While the block runs (in the main thread), ``SIGTERM``/``SIGHUP`` remove this process's
    temporary files and raise :class:`Terminated` (a forked child dies of the signal), ``SIGINT``
    (if Python's own handler is in place) raises ``KeyboardInterrupt`` as before; each is
    recorded in :data:`PENDING_SIGNALS`.  A signal ignored on entry (``nohup``) stays ignored.
    With ``at_once`` (a command's name), the process ends at once, running no clean-up code:
    child processes killed, ``NAME: interrupted|terminated by …; no output was written``
    printed, exit status 128 + signal.  For a Dask cluster, which an exception raised anywhere
    leaves slow or unable to close cleanly.  With ``command`` (its name), a block the signal's
    exception has not left within :data:`GRACE_S` seconds (Python swallowed the exception) ends
    so too."""
    owner, timers = os.getpid(), []

    def on_signal(signum, frame):
        if os.getpid() != owner:
            signal.signal(signum, signal.SIG_DFL)
            os.kill(os.getpid(), signum)
            return
        PENDING_SIGNALS.append(signum)
        if at_once:
            _end_now(at_once, signum)
        for name in list(_LIVE_TEMPS):
            with contextlib.suppress(OSError):
                os.unlink(name)
        if command and not timers:
            timers.append(threading.Timer(GRACE_S, _end_now, [command, signum]))
            timers[0].daemon = True  # an exit in time is not delayed by it
            timers[0].start()
        raise KeyboardInterrupt if signum == signal.SIGINT else Terminated(signum)

    if at_once:  # imported now: an import inside the handler could meet a half-imported module
        import psutil  # noqa: F401 - a dependency of distributed
    previous = {}
    for name in (*signals, "SIGINT"):
        number = getattr(signal, name, None)
        if number is None or signal.getsignal(number) == signal.SIG_IGN:
            continue
        if name == "SIGINT" and not (
            at_once or signal.getsignal(number) is signal.default_int_handler
        ):
            continue  # a handler of someone else's (a notebook's kernel)
        try:
            previous[number] = signal.signal(number, on_signal)
        except ValueError:  # not the main thread
            break
    try:
        yield
    finally:
        for timer in timers:  # the block has ended: the exception is on its way out
            timer.cancel()
        for number, handler in previous.items():
            signal.signal(number, handler)


# ---- worker processes ----------------------------------------------------------------------
_PR_SET_PDEATHSIG = 1  # from <sys/prctl.h>
_DIE_WITH_PARENT: dict[str, object] = {"parent": None, "prctl": None, "registered": False}


def _load_prctl():
    """``prctl`` of the C library on Linux, else ``None`` (loaded in the parent, before forks)."""
    if not sys.platform.startswith("linux"):
        return None
    try:
        import ctypes

        return ctypes.CDLL(None, use_errno=True).prctl
    except (OSError, AttributeError):
        return None


def _after_fork_in_child() -> None:
    parent = _DIE_WITH_PARENT["parent"]
    if parent is None:  # outside ``workers_die_with_parent``
        return
    prctl = _DIE_WITH_PARENT["prctl"]
    if prctl is not None:
        prctl(_PR_SET_PDEATHSIG, signal.SIGKILL, 0, 0, 0)
    if os.getppid() != parent:  # the parent died before the line above took effect
        os._exit(1)
    _DIE_WITH_PARENT["parent"] = os.getpid()  # for the forks of this process, in turn


@contextlib.contextmanager
def workers_die_with_parent():
    """While the block runs, processes forked by this one are killed by the kernel when it ends,
    even by ``kill -9`` (Linux ``PR_SET_PDEATHSIG``; elsewhere nothing changes)."""
    if not _DIE_WITH_PARENT["registered"] and hasattr(os, "register_at_fork"):
        _DIE_WITH_PARENT["prctl"] = _load_prctl()
        os.register_at_fork(after_in_child=_after_fork_in_child)
        _DIE_WITH_PARENT["registered"] = True
    previous = _DIE_WITH_PARENT["parent"]
    _DIE_WITH_PARENT["parent"] = os.getpid()
    try:
        yield
    finally:
        _DIE_WITH_PARENT["parent"] = previous


def is_disk_full(exc: BaseException) -> bool:
    """Whether ``exc`` says the device has no space left."""
    return isinstance(exc, OSError) and exc.errno in (errno.ENOSPC, errno.EDQUOT)
