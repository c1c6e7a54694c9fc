"""The ``rankbias`` command: assembles the sub-commands, each a module of
:mod:`rankbias.commands` with ``register(subparsers)`` that imports nothing heavy at module level
(so ``rankbias --help`` starts fast).

Exit status: 0 success; 2 a user or environment error (bad option or input, unwritable or full
output location, damaged gzip, out of memory), reported on one line ``rankbias <command>: error:
…``; 1 an internal error (a bug: one line too, the traceback with ``--debug``); 130 interrupted
with Ctrl-C; 143/129 terminated by ``SIGTERM``/``SIGHUP``.  A failing command leaves the previous
output, if any, as it was and no temporary file.
"""

from __future__ import annotations

import argparse
import errno
import importlib
import os
import sys

from rankbias.errors import InputError, PluginError

COMMAND_MODULES = (
    "rankbias.commands.data",
    "rankbias.commands.stats",
    "rankbias.commands.score",
    "rankbias.commands.metrics",
    "rankbias.commands.compare",
    "rankbias.commands.explain",
)

EXIT_USAGE = 2
EXIT_BUG = 1
EXIT_INTERRUPTED = 130


_LINE_BREAKS = "\n\r\x0b\x0c\x1c\x1d\x1e\x85\u2028\u2029"


def one_line(text: str) -> str:
    """``text`` with its line breaks escaped (``\\n``), so that a message stays one line even
    when it quotes a file name that contains one."""
    return "".join(repr(ch)[1:-1] if ch in _LINE_BREAKS else ch for ch in text)


class _StoreOnce(argparse.Action):
    """argparse's ``store``, except that an option given twice is an error: argparse keeps the
    last value, so ``explain --run a.run --run b.run`` explained ``b.run`` and said nothing."""

    def __call__(self, parser, namespace, values, option_string=None):
        if self.dest in parser.given:
            raise argparse.ArgumentError(
                self,
                f"given twice ({getattr(namespace, self.dest)!r}, then {values!r}); expected once",
            )
        parser.given.add(self.dest)
        setattr(namespace, self.dest, values)


class Parser(argparse.ArgumentParser):
    """An argument parser whose errors are one line: ``rankbias stats: error: …``, and whose
    single-valued options may be given once."""

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        self.register("action", None, _StoreOnce)
        self.register("action", "store", _StoreOnce)
        self.given: set[str] = set()

    def parse_known_args(self, args=None, namespace=None):
        self.given = set()
        return super().parse_known_args(args, namespace)

    def error(self, message: str):
        line = one_line(f"{self.prog}: error: {message} (see {self.prog} --help)")
        self.exit(EXIT_USAGE, line + "\n")


def _add_global_options(parser: argparse.ArgumentParser, top: bool) -> None:
    default = False if top else argparse.SUPPRESS
    for flags, text in (
        (("--quiet", "-q"), "no progress bars (they are shown only on a terminal anyway)"),
        (("--debug",), "show the Python traceback of an error"),
    ):
        parser.add_argument(*flags, action="store_true", default=default, help=text)


def _sub_parsers(parser: argparse.ArgumentParser):
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            for sub in dict.fromkeys(action.choices.values()):
                yield sub
                yield from _sub_parsers(sub)


def build_parser() -> argparse.ArgumentParser:
    parser = Parser(
        prog="rankbias", description="Measure gender and indexical bias in ranked lists."
    )
    _add_global_options(parser, top=True)
    from rankbias import __version__

    parser.add_argument("--version", action="version", version=f"rankbias {__version__}")
    sub = parser.add_subparsers(dest="command", required=True)
    for name in COMMAND_MODULES:
        importlib.import_module(name).register(sub)
    for subparser in _sub_parsers(parser):  # --quiet/--debug after the command name work too
        _add_global_options(subparser, top=False)
    return parser


def describe_error(exc: BaseException) -> str | None:
    """The one-line message for an error the user can act on; ``None`` for a bug."""
    import gzip
    import zlib

    if isinstance(exc, InputError | PluginError):
        return str(exc)
    if isinstance(exc, gzip.BadGzipFile):
        return f"not a valid gzip file ({exc}); expected a complete .gz file or an uncompressed one"
    if isinstance(exc, EOFError):
        return f"a compressed file ends early ({exc}); expected a complete .gz file"
    if isinstance(exc, zlib.error):
        return f"damaged compressed data ({exc}); expected a complete .gz file"
    if isinstance(exc, UnicodeDecodeError):
        return (
            f"byte {exc.object[exc.start : exc.start + 1]!r} at byte offset {exc.start} of a "
            f"block of input is not valid {exc.encoding}; expected UTF-8 text"
        )
    if isinstance(exc, MemoryError):
        return "out of memory; expected a smaller input, fewer workers or more memory"
    if type(exc).__name__ == "KilledWorker":  # dask gave up on a task after its workers died
        return (
            f"every dask worker that ran task {getattr(exc, 'task', '?')!r} ended abruptly "
            "(killed by a signal, often the system's out-of-memory killer); nothing was written; "
            "expected fewer workers (--workers), smaller blocks or more memory"
        )
    if isinstance(exc, OSError):
        where = f"{exc.filename}: " if exc.filename is not None else ""
        reason = exc.strerror or str(exc)
        if exc.errno in (errno.ENOSPC, errno.EDQUOT):
            return (
                f"{where}{reason}: no space left for the output; nothing was written and the "
                "previous output, if any, is unchanged"
            )
        if exc.errno in (errno.EACCES, errno.EPERM):
            return f"{where}{reason}; expected a readable input and a writable output location"
        if exc.errno == errno.EISDIR:
            return f"{where}is a directory; expected a file"
        if exc.errno == errno.ENOENT:
            return f"{where}no such file or directory"
        return f"{where}{reason}"
    if isinstance(exc, ValueError):
        return str(exc)
    return None


def main(argv: list[str] | None = None) -> int:
    parser = build_parser()
    try:
        args = parser.parse_args(argv)
    except SystemExit as exc:  # --help, or a bad option (already reported on one line)
        return exc.code if isinstance(exc.code, int) else EXIT_USAGE
    name = f"rankbias {args.command}"
    from rankbias.outputs import (
        PENDING_SIGNALS,
        REPORTED,
        Terminated,
        handle_signals,
        workers_die_with_parent,
    )

    try:
        with handle_signals(command=name), workers_die_with_parent():
            return int(args.func(args) or 0)
    except KeyboardInterrupt:
        if args.debug:
            raise
        print(f"{name}: interrupted; no output was written", file=sys.stderr)
        REPORTED.set()
        return EXIT_INTERRUPTED
    except Terminated as exc:
        signum = exc.signum
    except BrokenPipeError:  # e.g. `rankbias data fetch --list | head`
        sys.stdout = open(os.devnull, "w")  # noqa: SIM115 - silence the flush at exit
        return EXIT_USAGE
    except Exception as exc:
        if args.debug:
            raise
        if PENDING_SIGNALS:  # the signal's Terminated was swallowed; this error follows from it
            signum = PENDING_SIGNALS[0]
        elif (message := describe_error(exc)) is not None:
            print(one_line(f"{name}: error: {message}"), file=sys.stderr)
            return EXIT_USAGE
        else:
            print(
                one_line(
                    f"{name}: internal error: {type(exc).__name__}: {exc} (a bug: please report "
                    "it; --debug shows the traceback)"
                ),
                file=sys.stderr,
            )
            return EXIT_BUG
    print(f"{name}: {Terminated(signum)}; no output was written", file=sys.stderr)
    REPORTED.set()
    return 128 + signum


def entry() -> None:
    """The installed ``rankbias`` command: :func:`main`, its output flushed, then the process
    ends at once, skipping the interpreter's teardown.  Every file the command writes is closed
    by then; what the teardown would add is joining idle native thread pools (Arrow's), where a
    pool thread still finishing a task abandoned by a failed read aborts the whole process after
    the command's own message ("terminate called without an active exception", exit 134; seen
    once in about 300 refused runs on a loaded machine; apache/arrow#34314)."""
    code = main()
    for stream in (sys.stdout, sys.stderr):
        try:
            stream.flush()
        except (OSError, ValueError):  # a reader that closed the pipe early, a closed stream
            pass
    os._exit(code)


if __name__ == "__main__":
    sys.exit(main())
