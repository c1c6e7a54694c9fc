"""Opening input files: every reader turns a path or a stream into bytes here.

A path or an open file object (binary or text; pipes are read once, sequentially); gzip by its
magic bytes whatever the name (a ``.gz`` name on other content, a truncated or corrupt stream
refused); UTF-8 text, a leading byte-order mark dropped, ``\\n``, ``\\r\\n`` and ``\\r`` all end
lines.  A missing, unreadable or malformed input is an :class:`~rankbias.errors.InputError`
naming it and what was expected (``what``).  The readers' shared steps (``decode_line``,
``refuse_inner_bom``, ``iter_lines``, ``PrefixedStream``, ``source_name``) are not in
``__all__``.
"""

from __future__ import annotations

import contextlib
import gzip
import io
import os
import re
import stat
import zlib
from collections.abc import Iterator
from typing import IO, BinaryIO

from rankbias.errors import InputError, located

__all__ = [
    "Source",
    "open_binary",
    "read_bytes",
    "open_lines",
]

#: a path, or an open file object (binary or text)
Source = str | os.PathLike | IO

GZIP_MAGIC = b"\x1f\x8b"
BOM = b"\xef\xbb\xbf"
_CHUNK = 1 << 20
#: The longest line any input may have (a collection's is ``--max-line-bytes``): far above any
#: real passage, run line or web page, and a clear error for an endless input (``/dev/zero``,
#: a pipe or gzip stream without line ends) instead of reading it whole into memory.
MAX_LINE_BYTES = 1 << 26  # 64 MiB
#: a decimal number as data files write it (no '1_000', 'inf', ' 1', which float() accepts)
DECIMAL = re.compile(r"[+-]?([0-9]+\.?[0-9]*|\.[0-9]+)([eE][+-]?[0-9]+)?", re.ASCII)


def source_name(source: Source) -> str:
    """How messages name ``source``: the path as given, or a stream's ``name``."""
    if isinstance(source, str | os.PathLike):
        return os.fspath(source)
    name = getattr(source, "name", None)
    return str(name) if isinstance(name, str | int) and name != "" else "<stream>"


def _is_path(source: Source) -> bool:
    if isinstance(source, str | os.PathLike):
        return True
    if not callable(getattr(source, "read", None)):
        raise TypeError(
            f"source: expected a path (str or os.PathLike) or an open file, found "
            f"{type(source).__name__}"
            + (" (wrap bytes in io.BytesIO)" if isinstance(source, bytes | bytearray) else "")
        )
    return False


class PrefixedStream(io.RawIOBase):
    """A raw stream that first returns ``prefix`` and then the rest of ``stream`` (for
    sources whose first bytes were read to tell gzip from plain text without seeking)."""

    def __init__(self, prefix: bytes, stream):
        self._prefix = prefix
        self._stream = stream

    def readable(self) -> bool:
        return True

    def readinto(self, buffer) -> int:
        if self._prefix:
            n = min(len(buffer), len(self._prefix))
            buffer[:n] = self._prefix[:n]
            self._prefix = self._prefix[n:]
            return n
        data = self._stream.read(len(buffer))
        if not data:
            return 0
        if isinstance(data, str):  # a text stream without a buffer
            data = data.encode("utf-8")
            if len(data) > len(buffer):  # keep what does not fit for the next call
                self._prefix = data[len(buffer) :]
                data = data[: len(buffer)]
        buffer[: len(data)] = data
        return len(data)


class _Guarded(io.RawIOBase):
    """Turns the errors of reading a (decompressing) stream into :class:`InputError`."""

    def __init__(self, stream, name: str, what: str):
        self._stream = stream
        self._name = name
        self._what = what

    def readable(self) -> bool:
        return True

    def readinto(self, buffer) -> int:
        try:
            data = self._stream.read(len(buffer))
        except EOFError:
            raise located(
                self._name,
                None,
                f"the gzip data ends before its end marker (a truncated file); "
                f"expected a complete gzip-compressed {self._what}",
            ) from None
        except (gzip.BadGzipFile, zlib.error) as exc:
            raise located(
                self._name,
                None,
                f"corrupt gzip data ({exc}); expected a gzip-compressed {self._what}",
            ) from None
        except OSError as exc:
            raise _read_failed(self._name, self._what, exc) from None
        buffer[: len(data)] = data
        return len(data)

    def close(self) -> None:
        with contextlib.suppress(Exception):
            self._stream.close()
        super().close()


def _open_raw(path: str, what: str):
    try:
        return open(path, "rb")  # noqa: SIM115 - closed by the caller
    except FileNotFoundError:
        problem = "no such file"
    except IsADirectoryError:
        problem = "is a directory"
        what = f"{what} (a file)"
    except PermissionError:
        problem = "cannot be read (permission denied)"
    except OSError as exc:
        problem = f"cannot be opened ({exc.strerror or exc})"
    raise located(path, None, f"{problem}; expected a {what}")


def _read_head(stream, name: str, what: str) -> bytes:
    """The first two bytes (fewer at the end of input), read without seeking."""
    head = b""
    try:
        while len(head) < 2:
            more = stream.read(2 - len(head))
            if not more:
                break
            if isinstance(more, str):
                more = more.encode("utf-8")
            head += more
    except IsADirectoryError:
        raise located(name, None, f"is a directory; expected a {what} (a file)") from None
    except OSError as exc:
        raise _read_failed(name, what, exc) from None
    return head


def _read_failed(name: str, what: str, exc: OSError) -> InputError:
    return located(name, None, f"reading failed ({exc.strerror or exc}); expected a {what}")


def check_gzip_name(name: str, head: bytes, what: str) -> None:
    """Refuse a name ending in ``.gz`` on content whose first bytes ``head`` are not gzip's."""
    if name.endswith(".gz") and head != GZIP_MAGIC:
        raise located(
            name,
            None,
            f"the name ends in '.gz' but the content is not gzip-compressed "
            f"(first bytes {head!r}); expected a gzip-compressed {what}, or rename the file",
        )


@contextlib.contextmanager
def open_binary(source: Source, what: str = "file") -> Iterator[BinaryIO]:
    """A binary stream of the decompressed content of ``source`` (a stream passed in is not
    closed); ``what`` names the expected input in messages ("run file", …)."""
    name = source_name(source)
    with contextlib.ExitStack() as stack:
        if _is_path(source):
            raw = stack.enter_context(_open_raw(name, what))
        else:
            raw = getattr(source, "buffer", source) if isinstance(source, io.TextIOBase) else source
        head = _read_head(raw, name, what)
        stream = io.BufferedReader(PrefixedStream(head, raw), _CHUNK)
        check_gzip_name(name, head, what)
        if head == GZIP_MAGIC:
            stream = gzip.GzipFile(fileobj=stream, mode="rb")
        yield io.BufferedReader(_Guarded(stream, name, what), _CHUNK)


def read_bytes(source: Source, what: str = "file", check=None) -> bytes:
    """The whole decompressed content of ``source``, a leading byte-order mark removed.  A
    regular file is read at once; a pipe, a device or gzip data is read in blocks, and a line
    longer than :data:`MAX_LINE_BYTES` there (``/dev/zero``) is an error, not all the memory.
    ``check`` (a reader's line parser) is called on the complete lines of the first 64 KiB of
    a pipe or device, so that an endless one of bad lines (``/dev/urandom``) ends there."""
    if check is not None and not callable(check):
        raise TypeError(f"check: expected a function of bytes or None, found {check!r:.40}")
    name = source_name(source)
    if _is_path(source):
        with _open_raw(name, what) as raw:
            try:
                regular = stat.S_ISREG(os.fstat(raw.fileno()).st_mode)
                data = raw.read() if regular else _read_bounded(raw, name, what, check)
                check = None if regular else check  # a file ends; a device need not
            except OSError as exc:
                raise _read_failed(name, what, exc) from None
        check_gzip_name(name, data[:2], what)
        if data[:2] != GZIP_MAGIC:
            return data.removeprefix(BOM)
        source = io.BytesIO(data)
        source.name = name  # messages name the file, not the in-memory copy
    with open_binary(source, what) as stream:
        return _read_bounded(stream, name, what, check).removeprefix(BOM)


def _read_bounded(stream, name: str, what: str, check=None) -> bytes:
    parts, since_break, size = [], 0, 0  # since_break: bytes after the last line break
    while chunk := stream.read(_CHUNK):
        parts.append(chunk)
        size += len(chunk)
        last = max(chunk.rfind(b"\n"), chunk.rfind(b"\r"))
        since_break = len(chunk) - 1 - last if last >= 0 else since_break + len(chunk)
        if since_break > MAX_LINE_BYTES:
            raise _endless(name, what, size - since_break)
        if check is not None and size >= 1 << 16:
            if (head := b"".join(parts)[: 1 << 16])[:2] != GZIP_MAGIC:  # gzip: once inflated
                check(head[: complete_lines_end(head)].removeprefix(BOM))
            check = None
    return b"".join(parts)


def _endless(name: str, what: str, start: int) -> InputError:
    return located(
        name,
        None,
        f"the line that starts at byte {start} runs for more than {MAX_LINE_BYTES} bytes "
        f"without a line end; expected a {what} of text lines",
    )


_INNER_BOM = (
    "a byte-order mark (bytes ef bb bf, U+FEFF) {where}; expected one only at the very start "
    "of the file (were two files joined?)"
)


def decode_line(raw: bytes, name: str, number: int) -> str:
    """``raw`` decoded as UTF-8, or an :class:`InputError` naming the line, column and byte; a
    line starting with a byte-order mark (a second file joined on) is refused too."""
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        column = len(raw[: exc.start].decode("utf-8")) + 1
        raise located(
            name,
            number,
            f"byte {raw[exc.start]:#04x} at column {column} is not UTF-8 ({exc.reason}); "
            "expected UTF-8 text",
        ) from None
    if text.startswith("\ufeff"):
        raise located(name, number, _INNER_BOM.format(where="starts the line"))
    return text


def refuse_inner_bom(data: bytes, name: str) -> None:
    """Refuse, naming the line, a byte-order mark anywhere in ``data`` (its leading mark already
    dropped): inside an identifier it would never match."""
    position = data.find(BOM)
    if position < 0:
        return
    before = data[:position]
    number = before.count(b"\n") + before.count(b"\r") - before.count(b"\r\n") + 1
    line_start = max(before.rfind(b"\n"), before.rfind(b"\r")) + 1
    column = len(before[line_start:].decode("utf-8", errors="replace")) + 1
    raise located(name, number, _INNER_BOM.format(where=f"at column {column}"))


def complete_lines_end(data: bytes) -> int:
    """Length of the longest prefix of ``data`` that ends with a complete line break (a final
    ``\\r`` may be the start of ``\\r\\n``: the line it ends is not complete yet)."""
    last = max(data.rfind(b"\n"), data.rfind(b"\r"))
    if last < 0:
        return 0
    if data[last] == 13 and last == len(data) - 1:
        earlier = max(data.rfind(b"\n", 0, last), data.rfind(b"\r", 0, last))
        return earlier + 1
    return last + 1


def _split_chunks(chunks, name: str, what: str = "file") -> Iterator[tuple[int, str]]:
    number, carry, first, offset = 0, b"", True, 0  # offset: of carry's first byte
    for chunk in chunks:
        if len(carry) > MAX_LINE_BYTES:
            raise _endless(name, what, offset)
        data = carry + chunk
        if first:
            if len(data) < len(BOM) and BOM.startswith(data):
                carry = data  # too short to tell; wait for more
                continue
            data = data.removeprefix(BOM)
            first = False
        cut = complete_lines_end(data)
        if cut == 0:
            carry = data
            continue
        complete, carry = data[:cut], data[cut:]
        offset += cut
        for raw in complete.splitlines():
            number += 1
            yield number, decode_line(raw, name, number)
    if first and carry.startswith(BOM):
        carry = carry[len(BOM) :]
    if carry:
        for raw in carry.splitlines():  # at most a '...\r' or one line without a line end
            number += 1
            yield number, decode_line(raw, name, number)


def iter_lines(data: bytes, name: str) -> Iterator[tuple[int, str]]:
    """``(line_number, text)`` for each line of in-memory ``data`` (rules as :func:`open_lines`)."""
    return _split_chunks([data], name)


def open_lines(source: Source, what: str = "file") -> Iterator[tuple[int, str]]:
    """``(line_number, text)`` for each line of ``source`` (from 1, line ends removed; no empty
    line after a final line end), read in blocks."""
    name = source_name(source)
    with open_binary(source, what) as stream:
        yield from _split_chunks(iter(lambda: stream.read(_CHUNK), b""), name, what)


def file_identity(path: str | os.PathLike | int) -> tuple | None:
    """What identifies a regular file's content (``path``, or an open file's descriptor) for
    the length of a command: device, inode, size and modification time; ``None`` for anything
    else (a pipe, a device), which is read once as a stream anyway."""
    status = os.stat(path)
    if not stat.S_ISREG(status.st_mode):
        return None
    return (status.st_dev, status.st_ino, status.st_size, status.st_mtime_ns)


def same_file(identity, path, started: tuple) -> bool:
    """Whether ``identity(path)`` is still ``started`` (a removed file is not)."""
    try:
        return identity(path) == started
    except FileNotFoundError:
        return False


def check_unchanged(path: str | os.PathLike, started: tuple | None) -> None:
    """An :class:`InputError` naming ``path`` if it is no longer the file it was when
    :func:`file_identity` gave ``started`` (removed, replaced, rewritten or truncated)."""
    if started is not None and not same_file(file_identity, path, started):
        raise InputError(
            f"{path}: the file changed while it was read (removed, replaced, rewritten or "
            "truncated); nothing was written; expected a file that stays unchanged during the "
            "command"
        )


def sha256_of(path: str | os.PathLike) -> str:
    """Hex sha256 of the file at ``path``, read in 1 MiB chunks."""
    import hashlib

    digest = hashlib.sha256()
    with open(path, "rb") as handle:
        while chunk := handle.read(1 << 20):
            digest.update(chunk)
    return digest.hexdigest()
