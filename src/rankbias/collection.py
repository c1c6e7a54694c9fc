"""Collection files ``docid<TAB>text``: the one reader behind ``rankbias stats``, the library
and both engines.

Format (anything else is an :class:`~rankbias.errors.InputError` naming file and line): UTF-8,
one document per line, lines ending at ``\\n``, ``\\r\\n`` or a lone ``\\r``, a leading
byte-order mark skipped; exactly one tab; a unique, non-empty docid without white space or
byte-order mark (a run file could not name it); a text, right-stripped, not empty.

A regular file is read as line-aligned byte ranges, in parallel; gzip (told by content) and
streams sequentially; ``(docid, text)`` iterators (``ir_datasets``) follow the same rules.
Blocks of lines are counted by the compiled scanner of :mod:`rankbias.kernel` on threads (it
releases the GIL), non-ASCII text included (a line with a non-ASCII docid is scanned again
under an ASCII one); only a word list the scanner cannot take (built in Python with a control
character in a term: the word-list reader refuses them) is counted in Python.
Memory: a few blocks, plus 16 bytes per document for the duplicate-docid check.
The engines' shared steps (``count_block``, ``read_range``, ``checked_blocks``, …) are not in
``__all__``: only the package's code calls them, with arguments it has checked.
"""

from __future__ import annotations

import gzip
import io
import os
import stat
import zlib
from collections import deque
from collections.abc import Iterable, Iterator
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import NamedTuple

import numpy as np

from rankbias.errors import InputError, expect_count, expect_flag, expect_type, located
from rankbias.inputs import (
    BOM,
    GZIP_MAGIC,
    MAX_LINE_BYTES,
    PrefixedStream,
    check_gzip_name,
    complete_lines_end,
)
from rankbias.lexicon import Lexicon
from rankbias.text import DocStats, TermMatcher

__all__ = [
    "DEFAULT_BLOCK_BYTES",
    "Block",
    "BlockError",
    "iter_blocks",
    "iter_collection_stats",
    "read_collection_stats",
    "stats_from_pairs",
    "iter_documents",
    "document_text",
    "ir_datasets_corpus",
]

DEFAULT_BLOCK_BYTES = 1 << 22  # 4 MiB of collection text per work unit


def _check_line_lengths(data: bytes, offset: int, limit: int, label: str) -> None:
    """The first line of ``data`` longer than ``limit`` bytes is an error (free for blocks
    under it)."""
    if len(data) <= limit:
        return
    codes = np.frombuffer(data, dtype=np.uint8)
    bounds = np.concatenate([[-1], np.flatnonzero((codes == 10) | (codes == 13)), [len(data)]])
    over = np.flatnonzero(np.diff(bounds) - 1 > limit)
    if len(over):
        raise _line_too_long(label, offset + int(bounds[over[0]]) + 1, limit)


def _line_too_long(label: str, offset: int, limit: int) -> InputError:
    return InputError(
        f"{label}: the line that starts at byte {offset} runs for more than {limit} bytes "
        "without a line end; expected docid<TAB>text lines (--max-line-bytes sets the limit)"
    )


_EXPECTED = "expected 'docid<TAB>text' lines"


class BlockError(Exception):
    """A bad line of a block: ``line_in_block`` (0-based, from the block's start), ``message``
    (what was found and expected) and the absolute ``byte_offset`` of the line."""

    def __init__(self, line_in_block: int, message: str, byte_offset: int):
        super().__init__(line_in_block, message, byte_offset)  # in args: picklable
        self.line_in_block = line_in_block
        self.message = message
        self.byte_offset = byte_offset

    def __str__(self) -> str:
        return self.message


class Block(NamedTuple):
    """Statistics of one block of lines (docids stay an Arrow string array)."""

    docids: object  # pyarrow.StringArray
    lengths: np.ndarray
    group_counts: np.ndarray
    term_counts: object  # scipy.sparse.csr_matrix | None
    hashes: np.ndarray  # uint64 hash of each docid's UTF-8 bytes
    hashes2: np.ndarray  # a second, independent uint64 hash

    def stats(self, matcher: TermMatcher) -> DocStats:
        """The block as a :class:`DocStats` (docids kept in Arrow)."""
        return matcher.stats(self.docids, self.lengths, self.group_counts, self.term_counts)


# ---- the per-line reference check ------------------------------------------------------------
def _line_problem(raw: bytes, line_offset: int, where: str) -> str | None:
    """What is wrong with one line (without its line break), or ``None``: the reference for
    every message (the compiled scanner only finds *which* line is bad)."""
    try:
        line = raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        return (
            f"byte {raw[exc.start]:#04x} at byte offset {line_offset + exc.start} of {where} "
            f"(byte {exc.start + 1} of the line) is not valid UTF-8; expected UTF-8 text"
        )
    if not line.strip():
        return f"found an empty collection line; {_EXPECTED}"
    tabs = line.count("\t")
    if tabs == 0:
        return f"found no tab in {line[:60]!r}; expected 'docid<TAB>text'"
    if tabs > 1:
        return (
            f"found {tabs} tabs in {line[:60]!r}; expected exactly one tab, between the docid "
            "and the text"
        )
    docid, _, text = line.partition("\t")
    if not docid:
        return "found an empty docid; expected 'docid<TAB>text'"
    if any(c.isspace() for c in docid):
        return (
            f"docid {docid!r} contains white space, which a run file cannot name; expected a "
            "docid without white space"
        )
    if "\ufeff" in docid:
        return (
            f"docid {docid!r} contains a byte-order mark (U+FEFF); expected one only at the very "
            "start of the file"
        )
    if not text.rstrip():
        return (
            f"document {docid!r} has no text (an empty collection line); "
            "expected 'docid<TAB>text' with non-empty text"
        )
    return None


# ---- the kernel's view of the lexicon --------------------------------------------------------
class _KernelTerms(NamedTuple):
    term_bytes: np.ndarray  # uint8, the terms' UTF-8 bytes concatenated
    term_offsets: np.ndarray  # int64, len(terms) + 1
    term_group: np.ndarray  # int64
    max_term: int
    tokenizer_code: int
    exact: bool  # False: every line goes through the str path


def _kernel_terms(matcher: TermMatcher) -> _KernelTerms:
    """The terms as the scanner takes them (cached on the matcher)."""
    cached = getattr(matcher, "_kernel_terms", None)
    if cached is not None:
        return cached
    from rankbias.kernel import TOKENIZER_CODES

    raws = [t.encode("utf-8", "surrogatepass") for t in matcher.terms]
    offsets = np.zeros(len(raws) + 1, dtype=np.int64)
    np.cumsum([len(r) for r in raws], out=offsets[1:])
    # In whitespace mode a token may hold \v \f \x1c-\x1f inside; the scanner assumes terms
    # don't (true of every real word list), so a lexicon that has them takes the exact path.
    odd = set(b"\x0b\x0c\x1c\x1d\x1e\x1f")
    exact = not (matcher.tokenizer == "whitespace" and any(odd & set(r) for r in raws))
    if not exact:
        import warnings

        warnings.warn(
            "a term holds \\v, \\f or \\x1c-\\x1f: under the whitespace tokenizer every line is "
            "counted in Python, not by the compiled scanner (the same numbers, more slowly)",
            stacklevel=2,
        )
    result = _KernelTerms(
        term_bytes=np.frombuffer(b"".join(raws) or b"\0", dtype=np.uint8),
        term_offsets=offsets,
        term_group=np.asarray(matcher.term_group, dtype=np.int64),
        max_term=max((len(r) for r in raws), default=0),
        tokenizer_code=TOKENIZER_CODES[matcher.tokenizer],
        exact=exact,
    )
    matcher._kernel_terms = result
    return result


# ---- one block -------------------------------------------------------------------------------
def count_block(
    data, offset: int, matcher: TermMatcher, per_term: bool, where: str = "the file"
) -> Block:
    """Statistics of a block of whole lines (``bytes``, or a buffer such as a ``memoryview``
    the caller may reuse afterwards: nothing returned refers to it) starting at byte
    ``offset`` of the source (``where`` names what offsets count in messages);
    :class:`BlockError` at the first bad line.
    """
    import pyarrow as pa

    from rankbias import kernel

    terms = _kernel_terms(matcher)
    n_groups = len(matcher.groups)
    buf = np.frombuffer(data, dtype=np.uint8)
    (status, n, bounds, lengths, counts, flags, hashes, docid_data, docid_offsets, hits,
     n_hits) = kernel.scanner()(
        buf, terms.tokenizer_code, terms.term_bytes, terms.term_offsets,
        terms.term_group, n_groups, terms.max_term, per_term, *kernel.unicode_tables(),
    )  # fmt: skip
    lengths = lengths[:n]
    counts = counts[:n]
    flags = flags[:n]
    exact_rows = np.flatnonzero(flags) if terms.exact else np.arange(n)
    exact_term_counts = None
    if len(exact_rows):  # lines the scanner left (checked in line order), counted again
        texts = []
        for row, (start, end) in zip(
            exact_rows.tolist(), bounds[exact_rows][:, [0, 3]].tolist(), strict=True
        ):
            raw = bytes(data[start:end])
            problem = _line_problem(raw, offset + start, where)
            if problem is not None:
                raise BlockError(row, problem, offset + start)
            texts.append(raw.partition(b"\t")[2])
        if terms.exact:  # a non-ASCII docid: the scanner counts the text under another docid
            again = count_block(b"".join(b"-\t" + t + b"\n" for t in texts), 0, matcher, per_term)
            exact_lengths, exact_counts = again.lengths, again.group_counts
            exact_term_counts = again.term_counts
        else:  # a term with \v, \f or \x1c-\x1f (whitespace tokeniser): counted in Python
            decoded = [t.decode("utf-8").rstrip() for t in texts]  # tokenize lower-cases
            exact_lengths, exact_counts, exact_term_counts = matcher.count(decoded, per_term)
        lengths[exact_rows] = exact_lengths
        counts[exact_rows] = exact_counts
    if status != kernel.STATUS_OK:
        start, end = int(bounds[n, 0]), int(bounds[n, 3])
        raw = bytes(data[start:end])
        problem = _line_problem(raw, offset + start, where)
        if problem is None:  # pragma: no cover - the scanner and the reference disagree
            raise RuntimeError(f"the scanner refused line {raw!r}, the check did not")
        raise BlockError(n, problem, offset + start)
    term_counts = None
    if per_term:
        import scipy.sparse as sp

        hits = hits[:n_hits]
        if len(exact_rows):
            hits = hits[flags[hits[:, 0]] == 0] if terms.exact else hits[:0]
        rows, cols = hits[:, 0], hits[:, 1]
        values = np.ones(len(rows), dtype=np.int64)
        if exact_term_counts is not None:
            coo = exact_term_counts.tocoo()
            rows = np.concatenate([rows, exact_rows[coo.row]])
            cols = np.concatenate([cols, coo.col])
            values = np.concatenate([values, coo.data.astype(np.int64)])
        term_counts = sp.csr_matrix((values, (rows, cols)), shape=(n, len(matcher.terms)))
        term_counts.sum_duplicates()
    docids = pa.StringArray.from_buffers(
        n,
        pa.py_buffer(docid_offsets[: n + 1]),
        pa.py_buffer(docid_data[: int(docid_offsets[n])].copy()),  # not the whole block buffer
    )
    return Block(docids, lengths, counts, term_counts, hashes[:n, 0].copy(), hashes[:n, 1].copy())


# ---- sources ---------------------------------------------------------------------------------
class _Source(NamedTuple):
    label: str
    path: Path
    kind: str  # "ranges" (regular, uncompressed), "gzip" or "stream"
    start: int  # first byte after a byte-order mark (ranges only)
    handle: object  # an open binary file (closed by the caller)
    head: bytes  # bytes already read from a stream


def _cannot_read(label: str, exc: OSError) -> InputError:
    reason = exc.strerror or type(exc).__name__
    return InputError(
        f"{label}: cannot be read ({reason}); expected a readable docid<TAB>text file"
    )


def _open_source(path: str | Path) -> _Source:
    """Open a collection file and find out how to read it (regular or stream, gzip or not)."""
    path = Path(expect_type(path, "path", str | os.PathLike, "a collection file's path"))
    label = str(path)
    try:
        info = os.stat(path)
    except FileNotFoundError:
        raise InputError(f"{label}: no such file; expected a docid<TAB>text file") from None
    except OSError as exc:
        raise _cannot_read(label, exc) from None
    if stat.S_ISDIR(info.st_mode):
        raise InputError(f"{label}: is a directory; expected a docid<TAB>text file")
    try:
        handle = open(path, "rb")  # noqa: SIM115 - closed by the caller
    except OSError as exc:
        raise _cannot_read(label, exc) from None
    regular = stat.S_ISREG(info.st_mode)
    try:
        try:
            # a pipe or device is read, never seeked
            head = os.pread(handle.fileno(), 3, 0) if regular else handle.read(3)
        except OSError as exc:
            raise _cannot_read(label, exc) from None
        check_gzip_name(label, head[:2], "collection")  # the rule of every other reader
    except InputError:
        handle.close()
        raise
    if head[:2] == GZIP_MAGIC:
        return _Source(label, path, "gzip", 0, handle, b"" if regular else head)
    if regular:
        return _Source(label, path, "ranges", 3 if head == BOM else 0, handle, b"")
    return _Source(label, path, "stream", 0, handle, head)


def stream_blocks(
    raw, label: str, gzipped: bool, block_bytes: int, max_line_bytes: int = MAX_LINE_BYTES
) -> Iterator[tuple[bytes, int, str]]:
    """``(block, offset, where)`` of whole lines of a binary stream ``raw`` (gzip-compressed if
    ``gzipped``), read in order; ``where`` names what offsets count (the file or its
    decompressed bytes).  A byte-order mark at the start is dropped; a truncated gzip stream,
    a read error or a line longer than ``max_line_bytes`` is an :class:`InputError`."""
    if gzipped:
        reader = gzip.GzipFile(fileobj=raw, mode="rb")
        where = "the decompressed file"
    else:
        reader = io.BufferedReader(raw, 1 << 16)
        where = "the file"
    offset = 0
    carry = b""
    first = True
    while True:
        try:
            chunk = reader.read(block_bytes)
        except (EOFError, gzip.BadGzipFile, zlib.error) as exc:
            raise InputError(
                f"{label}: the gzip data is truncated or corrupt after {offset} "
                f"decompressed bytes ({exc}); expected a complete gzip file"
            ) from None
        except OSError as exc:
            raise _cannot_read(label, exc) from None
        if not chunk:
            if carry:
                yield carry, offset, where
            return
        if first:
            first = False
            if chunk.startswith(BOM):
                chunk, offset = chunk[3:], 3
        data = carry + chunk if carry else chunk
        cut = complete_lines_end(data)
        if cut == 0:
            if len(data) > max_line_bytes:
                raise _line_too_long(label, offset, max_line_bytes)
            carry = data
            continue
        _check_line_lengths(data[:cut], offset, max_line_bytes, label)
        yield data[:cut], offset, where
        offset += cut
        carry = data[cut:]


def _next_cut(read_at, pos: int, end: int, limit: int, label: str) -> int:
    """The first position ≥ ``pos`` just after a complete line break (``end`` if none); no
    break within ``limit`` bytes is an error."""
    started = pos
    while pos < end:
        if pos - started > limit:  # named where it starts, as the local engine names it
            raise _line_too_long(label, _line_start(read_at, started), limit)
        window = read_at(pos, min(1 << 16, end - pos))
        if not window:
            return end
        hits = [i for i in (window.find(b"\n"), window.find(b"\r")) if i >= 0]
        if not hits:
            pos += len(window)
            continue
        i = min(hits)
        if window[i] == 13:  # \r\n counts as one break
            following = window[i + 1 : i + 2] or read_at(pos + i + 1, 1)
            return min(end, pos + i + (2 if following == b"\n" else 1))
        return pos + i + 1
    return end


def range_cuts(read_at, start, end, target, limit, label) -> Iterator[tuple[int, int]]:
    """Line-aligned ranges ``[a, b)`` of about ``target`` bytes covering ``[start, end)`` of a
    file read by ``read_at(position, size)``; a line longer than ``limit`` is an error."""
    while start < end:
        stop = _next_cut(read_at, start + target, end, limit, label)  # end if past it
        yield start, stop
        start = stop


def _line_start(read_at, pos: int) -> int:
    """The position of the first byte of the line that holds ``pos``."""
    while pos > 0:
        base = max(0, pos - (1 << 16))
        window = read_at(base, pos - base)
        if (hit := max(window.rfind(b"\n"), window.rfind(b"\r"))) >= 0:
            return base + hit + 1
        pos = base
    return 0


def read_range(read_at, start: int, end: int, limit: int, label: str) -> bytes:
    """The bytes ``[start, end)`` of a cut of :func:`range_cuts`, checked for over-long lines."""
    data = read_at(start, end - start)
    _check_line_lengths(data, start, limit, label)
    return data


# ---- the local engine ------------------------------------------------------------------------
def _ordered(fn, tasks: Iterable, workers: int) -> Iterator:
    """``fn(*task)`` for each of ``tasks`` on ``workers`` threads, results in task order, at
    most ``2 * workers`` tasks in flight (bounded memory)."""
    from rankbias import kernel

    kernel.scanner()  # load (or build) the scanner and its tables once, before the threads
    kernel.unicode_tables()
    if workers <= 1:
        for task in tasks:
            yield fn(*task)
        return
    pool = ThreadPoolExecutor(max_workers=workers, thread_name_prefix="rankbias-scan")
    try:
        pending: deque = deque()
        for task in tasks:
            pending.append(pool.submit(fn, *task))
            if len(pending) >= 2 * workers:
                yield pending.popleft().result()
        while pending:
            yield pending.popleft().result()
    finally:
        pool.shutdown(wait=True, cancel_futures=True)


def _block_counter(matcher: TermMatcher, per_term: bool):
    """:func:`count_block` of a ``(bytes, offset, where)`` task."""

    def run(data, offset, where):
        return count_block(data, offset, matcher, per_term, where)

    return run


def checked_blocks(blocks: Iterable[Block], label: str, docid_at) -> Iterator[Block]:
    """``blocks`` of one collection, in order, a :class:`BlockError` turned into a ``file:line``
    error, then checked for repeated docids (:func:`check_unique`, ``docid_at`` as there)."""
    lines_before, hashes = 0, []  # 16 bytes per document, not the text
    try:
        for block in blocks:
            hashes.append((block.hashes, block.hashes2))
            yield block
            lines_before += len(block.lengths)
    except BlockError as exc:
        raise located(label, lines_before + exc.line_in_block + 1, exc.message) from None
    check_unique(hashes, label, docid_at)


def check_unique(blocks: list[tuple], label: str, docid_at) -> None:
    """Raise on the first line whose docid an earlier line already used, from the ``(hashes,
    hashes2)`` of consecutive blocks; ``docid_at(lines)`` gives the docids of 0-based lines to
    confirm a match (``None``: the source cannot be re-read; the 128-bit match is reported)."""
    if not blocks:
        return
    # memory: 8 bytes per document beside the blocks' 16 (sorted in place, no index array)
    ordered = np.concatenate([b[0] for b in blocks])
    ordered.sort()
    repeated = ordered[1:][ordered[1:] == ordered[:-1]]  # sorted: each value once below
    shared = repeated[np.concatenate([[True], repeated[1:] != repeated[:-1]])[: len(repeated)]]
    del ordered  # (np.unique would import numpy.ma, 10 ms of every command's start-up)
    if len(shared) == 0:
        return
    # the rare lines whose first hash is shared: compare both hashes, in line order
    h1 = np.concatenate([b[0] for b in blocks])
    candidates = np.flatnonzero(np.isin(h1, shared))
    h1 = h1[candidates]
    h2 = np.concatenate([b[1] for b in blocks])[candidates]
    order = np.lexsort((candidates, h2, h1))
    h1, h2, order = h1[order], h2[order], candidates[order]
    same = np.flatnonzero((h1[1:] == h1[:-1]) & (h2[1:] == h2[:-1]))
    pairs = sorted((int(order[k + 1]), int(order[k])) for k in same)  # (later, earlier)
    for later, earlier in pairs:
        if docid_at is None:
            raise located(
                label,
                later + 1,
                f"the docid repeats the one on line {earlier + 1} (found by hashing; a stream "
                "cannot be re-read to show it); expected each docid once",
            )
        a, b = docid_at([earlier, later])
        if a == b:
            raise located(
                label,
                later + 1,
                f"docid {b!r} is already used on line {earlier + 1}; expected each docid once",
            )


def docids_at_lines(raw, indices: list[int]) -> list[str]:
    """The docids of 0-based lines ``indices``, re-read from ``raw``, an open, seekable binary
    handle of the (possibly gzip) file, closed at the end."""
    wanted = {i + 1: None for i in indices}
    last = max(wanted)
    with raw:
        binary = gzip.GzipFile(fileobj=raw) if raw.read(2) == GZIP_MAGIC else raw
        raw.seek(0)
        with io.TextIOWrapper(binary, encoding="utf-8-sig", newline=None) as text:
            for number, line in enumerate(text, start=1):
                if number in wanted:
                    wanted[number] = line.partition("\t")[0]
                if number >= last:
                    break
    return [wanted[i + 1] for i in indices]


def iter_blocks(
    path,
    lexicon,
    tokenizer,
    per_term,
    workers,
    block_bytes=DEFAULT_BLOCK_BYTES,
    max_line_bytes=MAX_LINE_BYTES,
):
    """``(matcher, blocks)``: the raw blocks of a collection file, in order, checked for
    repeated docids when the stream ends; a line longer than ``max_line_bytes`` is an error."""
    matcher = TermMatcher(lexicon, tokenizer)
    expect_flag(per_term, "per_term")
    workers = os.cpu_count() or 1 if workers is None else expect_count(workers, "workers")
    block_bytes = expect_count(block_bytes, "block_bytes")
    max_line_bytes = expect_count(max_line_bytes, "max_line_bytes")
    source = _open_source(path)

    label = source.label
    if source.kind == "ranges":  # line-aligned byte ranges, read and counted on the threads
        fd = source.handle.fileno()

        def read_at(position, size):
            return os.pread(fd, size, position)

        def run(start, end):
            data = read_range(read_at, start, end, max_line_bytes, label)
            return count_block(data, start, matcher, per_term)

        size = os.fstat(fd).st_size
        tasks = range_cuts(read_at, source.start, size, block_bytes, max_line_bytes, label)
    else:
        raw = PrefixedStream(source.head, source.handle) if source.head else source.handle
        tasks = stream_blocks(raw, label, source.kind == "gzip", block_bytes, max_line_bytes)
        run = _block_counter(matcher, per_term)

    def docid_at(lines):
        return docids_at_lines(open(source.path, "rb"), lines)

    rereadable = stat.S_ISREG(os.fstat(source.handle.fileno()).st_mode)  # not a pipe

    def blocks():
        with source.handle:
            counted = _ordered(run, tasks, workers)
            yield from checked_blocks(counted, label, docid_at if rereadable else None)

    return matcher, blocks()


def iter_collection_stats(
    path: str | Path,
    lexicon: Lexicon,
    tokenizer: str = "default",
    per_term: bool = False,
    workers: int | None = None,
    block_bytes: int = DEFAULT_BLOCK_BYTES,
    max_line_bytes: int = MAX_LINE_BYTES,
) -> Iterator[DocStats]:
    """Stream the statistics of a collection file (module docstring), one :class:`DocStats` per
    block of about ``block_bytes``, on ``workers`` threads (default: all cores); a repeated
    docid is found when the stream ends."""
    matcher, blocks = iter_blocks(
        path, lexicon, tokenizer, per_term, workers, block_bytes, max_line_bytes
    )
    for block in blocks:
        yield block.stats(matcher)


def read_collection_stats(
    path: str | Path,
    lexicon: Lexicon,
    tokenizer: str = "default",
    per_term: bool = False,
    workers: int | None = None,
    block_bytes: int = DEFAULT_BLOCK_BYTES,
) -> DocStats:
    """The statistics of a whole collection file as one :class:`DocStats` (see the stream)."""
    parts = list(iter_collection_stats(path, lexicon, tokenizer, per_term, workers, block_bytes))
    return concat_stats(parts, path)


def concat_stats(parts: list[DocStats], label) -> DocStats:
    """The blocks' statistics as one :class:`DocStats`; none is an error naming ``label``."""
    if not parts:
        raise located(label, None, f"the collection is empty; {_EXPECTED}")
    return DocStats.concat(parts)


# ---- iterators -------------------------------------------------------------------------------
def _pair_blocks(pairs: Iterable[tuple[str, str]], label: str, block_bytes: int):
    """Encode ``(docid, text)`` pairs as collection lines, in blocks ``(bytes, offset, where)``."""
    buffer: list[bytes] = []
    size = 0
    offset = 0
    for position, (docid, text) in enumerate(pairs, start=1):
        if "\t" in docid or "\n" in docid or "\r" in docid:
            raise located(
                label, position, f"docid {docid!r} contains a tab or a line break; expected none"
            )
        clean = text.replace("\t", " ").replace("\n", " ").replace("\r", " ")
        raw = f"{docid}\t{clean}\n".encode("utf-8", "surrogatepass")
        buffer.append(raw)
        size += len(raw)
        if size >= block_bytes:
            yield b"".join(buffer), offset, "the documents"
            offset += size
            buffer, size = [], 0
    if buffer:
        yield b"".join(buffer), offset, "the documents"


def stats_from_pairs(
    pairs: Iterable[tuple[str, str]],
    lexicon: Lexicon,
    label: str,
    tokenizer: str = "default",
    per_term: bool = False,
    workers: int | None = None,
    block_bytes: int = DEFAULT_BLOCK_BYTES,
) -> DocStats:
    """Statistics of ``(docid, text)`` pairs from any iterator (e.g. an ``ir_datasets`` corpus):
    tabs and line breaks in a text become spaces, docid rules as for files; messages name
    ``label`` and the document's 1-based position as its line."""
    matcher = TermMatcher(lexicon, tokenizer)
    tasks = _pair_blocks(pairs, label, block_bytes)
    counted = _ordered(_block_counter(matcher, per_term), tasks, workers or os.cpu_count() or 1)
    parts: list[DocStats] = []

    def docid_at(lines):  # only on a repeat: the documents are all counted by then
        return DocStats.concat(parts).docids[lines].tolist()

    for block in checked_blocks(counted, label, docid_at):
        parts.append(block.stats(matcher))
    if not parts:
        raise InputError(f"{label}: the collection is empty")
    return DocStats.concat(parts)


def iter_documents(source: str | Path) -> Iterator[tuple[str, str]]:
    """``(docid, text)`` of every document of a collection, in order: a ``docid<TAB>text`` file
    read as the engines read it (gzip told by its content, a byte-order mark dropped, ``\\n``,
    ``\\r\\n`` or ``\\r`` line ends; the text as it stands, without its line break; a bad line
    is an :class:`InputError` naming file and line), else an ``ir_datasets`` id.  Every document
    is yielded, a repeated docid too: the engines refuse those when they count a collection."""
    expect_type(source, "source", str | os.PathLike, "a collection file's path or a dataset id")
    if not Path(source).exists():
        corpus = ir_datasets_corpus(str(source))
        return ((str(doc.doc_id), document_text(doc)) for doc in corpus.docs_iter())
    return _file_documents(_open_source(source))


def _file_documents(source: _Source) -> Iterator[tuple[str, str]]:
    with source.handle:
        raw = PrefixedStream(source.head, source.handle) if source.head else source.handle
        number = 0
        for data, offset, where in stream_blocks(
            raw, source.label, source.kind == "gzip", DEFAULT_BLOCK_BYTES
        ):
            for line in data.splitlines(keepends=True):
                number += 1
                text = line.rstrip(b"\r\n")
                problem = _line_problem(text, offset, where)
                if problem is not None:
                    raise located(source.label, number, problem)
                offset += len(line)
                docid, _, text = text.decode("utf-8").partition("\t")
                yield docid, text


def document_text(doc) -> str:
    """The text of an ``ir_datasets`` document (``default_text()`` where it exists)."""
    if hasattr(doc, "default_text"):
        return doc.default_text()
    if not hasattr(doc, "text"):
        raise TypeError(f"doc: expected an ir_datasets document, found {type(doc).__name__}")
    return doc.text


_DOWNLOAD_ERRORS = (OSError, EOFError, zlib.error, RuntimeError, ValueError)


class _OfflineSafeCorpus:
    """An ``ir_datasets`` corpus whose calls and document iterator turn a failed download (no
    network, a missing mirror, an unreadable cache) into an :class:`InputError`."""

    def __init__(self, dataset_id: str, corpus):
        self._id = dataset_id
        self._corpus = corpus

    def _unavailable(self, exc: BaseException) -> InputError:
        text = " ".join(str(exc).split())
        text = text if len(text) <= 160 else text[:159] + "…"
        return InputError(
            f"ir_datasets id {self._id!r}: its documents could not be read or downloaded "
            f"({type(exc).__name__}: {text}); expected the data in the "
            "ir_datasets cache (~/.ir_datasets or $IR_DATASETS_HOME) or a network connection; "
            "or pass a docid<TAB>text file"
        )

    def __getattr__(self, name):
        attribute = getattr(self._corpus, name)
        if not callable(attribute):
            return attribute

        def guarded(*args, **kwargs):
            try:
                return attribute(*args, **kwargs)
            except InputError:
                raise
            except _DOWNLOAD_ERRORS as exc:
                raise self._unavailable(exc) from None

        return guarded

    def docs_iter(self):
        try:
            yield from self._corpus.docs_iter()
        except InputError:
            raise
        except _DOWNLOAD_ERRORS as exc:
            raise self._unavailable(exc) from None


def ir_datasets_corpus(dataset_id: str):
    """The ``ir_datasets`` corpus ``dataset_id``; not installed, unknown, without documents or
    (on use) not downloadable is an :class:`InputError` saying so."""
    expect_type(dataset_id, "dataset_id", str, "an ir_datasets id such as 'msmarco-passage'")
    try:
        import ir_datasets
    except ModuleNotFoundError:
        raise InputError(
            f"collection {dataset_id!r}: no such file, and ir_datasets (needed to read it as an "
            "ir_datasets id) is not installed; install it with `pip install 'rankbias[msmarco]'` "
            "or pass a docid<TAB>text file"
        ) from None
    try:
        corpus = ir_datasets.load(dataset_id)
    except KeyError:
        raise InputError(
            f"collection {dataset_id!r}: no such file and not a known ir_datasets id; expected "
            "a docid<TAB>text file or an id such as msmarco-passage"
        ) from None
    if not corpus.has_docs():
        raise InputError(f"ir_datasets id {dataset_id!r} has no documents")
    return _OfflineSafeCorpus(dataset_id, corpus)
