"""The compiled scanner behind the collection reader: tokenise, lower-case and count, one pass.

:func:`_scan_block` (compiled: :func:`scanner`) walks a block of ``docid<TAB>text`` lines byte
by byte without holding the GIL (threads run it in parallel) and, for every line, finds the
docid and the text, counts the tokens and looks each token up in an open-addressing hash table
of the terms.  It handles exactly what it can handle exactly — lines made of ASCII bytes — and
marks the others (any byte ≥ 0x80) for the exact NumPy/``str`` path of :mod:`rankbias.text`
(Unicode letters, lower-casing that changes length, Unicode white space are decided there).

On ASCII text both tokenisers of :mod:`rankbias.text` reduce to byte rules:

``default`` (``[^\\W_]+`` on lower-cased text)
    tokens are the maximal runs of ``[A-Za-z0-9]``, lower-cased byte by byte;
``whitespace`` (``text.lower().split(" ")`` on the right-stripped text)
    tokens are separated by single spaces; their number is one more than the number of spaces
    before the last non-white-space byte (``str.rstrip`` strips ``\\t \\n \\v \\f \\r
    \\x1c-\\x1f`` and the space).

Line rules (the reader's error messages are produced by the per-line reference check in
:mod:`rankbias.collection`; the scanner only stops at the first line that breaks a rule): a line
ends at ``\\n``, ``\\r\\n`` or a lone ``\\r`` (Python's universal newlines); it holds exactly one
tab; the docid (before the tab) is non-empty and has no white space; the text (after the tab)
is not empty once trailing white space is removed.

Compilation (:func:`scanner`, once per process): numba's ``pycc`` compiles the scanner ahead
of time into a small extension module kept in :func:`cache_dir` (``$RANKBIAS_CACHE_DIR``, else
``~/.cache/rankbias``), keyed by this file, the Python and NumPy versions and the platform.
The first run builds it (about 20 s, once; it needs a C compiler and the Python headers);
later processes import it in about a millisecond, without importing numba.  Where it cannot be
built, the scanner is compiled just in time (``numba.njit(nogil=True, cache=True)``: about a
second of CPU per process to import numba and load its cache); ``RANKBIAS_KERNEL=jit`` forces
that path.  Both give the same numbers (tested).
"""

from __future__ import annotations

import os
import shutil
import tempfile
import threading
from pathlib import Path

import numpy as np

STATUS_OK = 0
STATUS_BAD_LINE = 1

FLAG_NON_ASCII = 1  # the line holds a byte >= 0x80: the exact str path decides it

TOKENIZER_CODES = {"default": 0, "whitespace": 1}

_FNV_OFFSET = np.uint64(0xCBF29CE484222325)
_FNV_PRIME = np.uint64(0x100000001B3)
_GOLDEN = np.uint64(0x9E3779B97F4A7C15)

# byte classes (bits): ASCII letter or digit; white space as str.isspace sees it; line break;
# tab; a byte >= 0x80 (part of a non-ASCII character)
_ALNUM, _SPACE, _BREAK, _TAB, _HIGH = 1, 2, 4, 8, 16
_SPECIAL = _BREAK | _TAB | _HIGH
_CLASS = np.zeros(256, dtype=np.uint8)
for _c in range(256):
    if _c >= 128:
        _CLASS[_c] = _HIGH
        continue
    if chr(_c).isalnum():
        _CLASS[_c] |= _ALNUM
    if chr(_c).isspace():
        _CLASS[_c] |= _SPACE
_CLASS[[10, 13]] |= _BREAK
_CLASS[9] |= _TAB
_LOWER = np.arange(256, dtype=np.uint8)
_LOWER[ord("A") : ord("Z") + 1] += 32


# Token hash: a rotate-and-xor per byte (one cycle, no multiply chain), mixed by one multiply
# when a slot is needed; the terms are hashed the same way (rankbias.collection._token_hash).
def _term_hash(data, start, end, lower):
    h = np.uint64(0)
    for i in range(start, end):
        h = ((h << np.uint64(5)) | (h >> np.uint64(59))) ^ np.uint64(lower[data[i]])
    return h


def _slot_of(h, mask):
    mixed = h * _GOLDEN
    return np.int64((mixed ^ (mixed >> np.uint64(32))) & mask)


def _lookup(buf, start, end, h, table, mask, term_bytes, term_offsets, lower):
    """Term id of the lower-cased bytes ``buf[start:end]`` (hash ``h``), or -1."""
    slot = _slot_of(h, mask)
    size = end - start
    while True:
        entry = table[slot]
        if entry == 0:
            return -1
        term = entry - 1
        a = term_offsets[term]
        if term_offsets[term + 1] - a == size:
            same = True
            for i in range(size):
                if lower[buf[start + i]] != term_bytes[a + i]:
                    same = False
                    break
            if same:
                return term
        slot = (slot + 1) & np.int64(mask)


def _record(counts, hits, n_hits, want_hits, line, term, term_group):
    counts[line, term_group[term]] += 1
    if want_hits:
        hits[n_hits, 0] = line
        hits[n_hits, 1] = term
        return n_hits + 1
    return n_hits


def _scan_block(
    buf, tokenizer, table, term_bytes, term_offsets, term_group, n_groups, max_term, want_hits
):
    """Scan a block of whole lines; see the module docstring.

    Returns ``(status, n_lines, bounds, lengths, counts, flags, hashes, docid_data,
    docid_offsets, hits, n_hits)``: ``n_lines`` lines were read (``status`` says whether line
    ``n_lines`` breaks a rule); ``bounds[i]`` = line start, tab, end of the right-stripped
    text, end before the line break; ``hashes[i]`` two 64-bit hashes of the docid bytes;
    the docids' bytes concatenated with ``int32`` offsets (an Arrow string array's buffers);
    ``hits[:n_hits]`` = (line, term) of every term occurrence when ``want_hits``.
    """
    cls = _CLASS
    lower = _LOWER
    n = buf.shape[0]
    mask = np.uint64(table.shape[0] - 1)
    # Lines are at most the line-break bytes plus one: exact sizes keep memory flat (a loose
    # bound leaves the allocator with large, partly used blocks).
    breaks = 0
    for i in range(n):
        breaks += (buf[i] == 10) | (buf[i] == 13)
    cap = breaks + 2
    bounds = np.empty((cap, 4), dtype=np.int64)
    lengths = np.empty(cap, dtype=np.int64)
    counts = np.empty((cap, n_groups), dtype=np.int64)
    flags = np.empty(cap, dtype=np.uint8)
    hashes = np.empty((cap, 2), dtype=np.uint64)
    docid_data = np.empty(n, dtype=np.uint8)
    docid_offsets = np.empty(cap + 1, dtype=np.int32)
    docid_offsets[0] = 0
    # every token has a byte and a separator: at most n // 2 + 1 occurrences
    hits = np.empty((n // 2 + 1 if want_hits else 1, 2), dtype=np.int32)
    n_hits = 0
    n_lines = 0
    pos = 0
    status = STATUS_OK
    while pos < n:
        line_start = pos
        non_ascii = False
        bad = False
        for g in range(n_groups):
            counts[n_lines, g] = 0
        # ---- docid: up to the first tab
        h1 = _FNV_OFFSET
        h2 = _GOLDEN
        out = docid_offsets[n_lines]
        k = pos
        while k < n:
            c = buf[k]
            cc = cls[c]
            if cc & (_BREAK | _TAB):
                break
            if cc & _HIGH:
                non_ascii = True
            elif cc & _SPACE:
                bad = True  # white space in the docid
            h1 = (h1 ^ np.uint64(c)) * _FNV_PRIME
            h2 = (h2 + np.uint64(c) + np.uint64(1)) * _GOLDEN
            h2 ^= h2 >> np.uint64(29)
            docid_data[out] = c
            out += 1
            k += 1
        tab = k
        has_tab = k < n and buf[k] == 9
        if not has_tab or k == line_start:
            bad = True  # no tab, or an empty docid
        docid_offsets[n_lines + 1] = out
        hashes[n_lines, 0] = h1 ^ np.uint64(k - line_start)
        hashes[n_lines, 1] = h2
        # ---- text: up to the line break
        text_start = k + 1 if has_tab else k
        k = text_start
        n_tokens = 0
        if tokenizer == 0:
            tok_start = -1
            th = np.uint64(0)
            while k < n:
                c = buf[k]
                cc = cls[c]
                if cc & _ALNUM:
                    if tok_start < 0:
                        tok_start = k
                        th = np.uint64(0)
                    th = ((th << np.uint64(5)) | (th >> np.uint64(59))) ^ np.uint64(lower[c])
                else:
                    if tok_start >= 0:
                        n_tokens += 1
                        if k - tok_start <= max_term:
                            term = _lookup(
                                buf, tok_start, k, th, table, mask, term_bytes, term_offsets,
                                lower,
                            )  # fmt: skip
                            if term >= 0:
                                n_hits = _record(
                                    counts, hits, n_hits, want_hits, n_lines, term, term_group
                                )
                        tok_start = -1
                    if cc & _SPECIAL:
                        if cc & _BREAK:
                            break
                        if cc & _TAB:
                            bad = True  # a second tab
                        else:
                            non_ascii = True
                            break
                k += 1
            if k == n and tok_start >= 0:  # a token at the very end of the block
                n_tokens += 1
                if k - tok_start <= max_term:
                    term = _lookup(
                        buf, tok_start, k, th, table, mask, term_bytes, term_offsets, lower
                    )
                    if term >= 0:
                        n_hits = _record(counts, hits, n_hits, want_hits, n_lines, term, term_group)
        else:
            spaces = 0
            piece_start = text_start
            while k < n:
                c = buf[k]
                if c == 32:
                    spaces += 1
                    # a piece ending in a non-white-space byte is a token whatever follows
                    if (
                        k > piece_start
                        and k - piece_start <= max_term
                        and (cls[buf[k - 1]] & _SPACE) == 0
                    ):
                        th = _term_hash(buf, piece_start, k, lower)
                        term = _lookup(
                            buf, piece_start, k, th, table, mask, term_bytes, term_offsets, lower
                        )
                        if term >= 0:
                            n_hits = _record(
                                counts, hits, n_hits, want_hits, n_lines, term, term_group
                            )
                    piece_start = k + 1
                else:
                    cc = cls[c]
                    if cc & _SPECIAL:
                        if cc & _BREAK:
                            break
                        if cc & _TAB:
                            bad = True
                        else:
                            non_ascii = True
                            break
                k += 1
        if non_ascii:  # finish the line quickly: only its end and its tabs matter now
            while k < n:
                cc = cls[buf[k]]
                if cc & _BREAK:
                    break
                if cc & _TAB:
                    bad = True
                k += 1
        line_end = k
        # ---- the text without trailing white space
        last_solid = line_end
        trailing_spaces = 0
        while last_solid > text_start and cls[buf[last_solid - 1]] & _SPACE:
            if buf[last_solid - 1] == 32:
                trailing_spaces += 1
            last_solid -= 1
        if tokenizer != 0 and not non_ascii:
            n_tokens = spaces - trailing_spaces + 1
            # the last token of the stripped text, unless the loop looked it up whole (it is
            # followed by a space) or it is too long to be a term
            if last_solid > text_start and not (last_solid < line_end and buf[last_solid] == 32):
                first = last_solid - 1
                while (
                    first > text_start and buf[first - 1] != 32 and last_solid - first <= max_term
                ):
                    first -= 1
                if (first == text_start or buf[first - 1] == 32) and last_solid - first <= max_term:
                    th = _term_hash(buf, first, last_solid, lower)
                    term = _lookup(
                        buf, first, last_solid, th, table, mask, term_bytes, term_offsets, lower
                    )
                    if term >= 0:
                        n_hits = _record(counts, hits, n_hits, want_hits, n_lines, term, term_group)
        if last_solid <= text_start and not non_ascii:
            bad = True  # no text once trailing white space is removed
        # ---- line break: \n, \r\n or a lone \r
        if k < n:
            if buf[k] == 13 and k + 1 < n and buf[k + 1] == 10:
                k += 2
            else:
                k += 1
        bounds[n_lines, 0] = line_start
        bounds[n_lines, 1] = tab
        bounds[n_lines, 2] = last_solid
        bounds[n_lines, 3] = line_end
        if bad:
            status = STATUS_BAD_LINE
            while n_hits > 0 and hits[n_hits - 1, 0] == n_lines:  # this line's hits
                n_hits -= 1
            break
        lengths[n_lines] = n_tokens
        flags[n_lines] = FLAG_NON_ASCII if non_ascii else 0
        n_lines += 1
        pos = k
    return (
        status,
        n_lines,
        bounds,
        lengths,
        counts,
        flags,
        hashes,
        docid_data,
        docid_offsets,
        hits,
        n_hits,
    )


# ---- compilation -----------------------------------------------------------------------------
# Two ways to run _scan_block, tried in this order:
# 1. ahead of time: numba's pycc compiles it once into a small extension module in a cache
#    directory (needs a C compiler and the Python headers at that moment); later processes
#    import that module in a millisecond, without importing numba at all.  Its wrapper releases
#    the GIL, so threads scan in parallel.
# 2. just in time: numba.njit(nogil=True, cache=True) (numba's own on-disk cache), when the
#    ahead-of-time build is not possible.  Importing numba and loading its cache costs about a
#    second of CPU per process.
_HELPERS = ("_term_hash", "_slot_of", "_lookup", "_record")
_SCANNER = None
_LOADING = threading.Lock()
KERNEL_KIND = None  # "aot" or "jit" once loaded


def _jit(fn):
    """``numba.njit(nogil=True)``, cached on disk when a cache location is writable."""
    import numba

    try:
        return numba.njit(cache=True, nogil=True)(fn)
    except RuntimeError:  # "cannot cache function ...: no locator available"
        return numba.njit(nogil=True)(fn)


def _jit_helpers() -> None:
    """Make the helpers numba functions, so that compiling ``_scan_block`` can call them."""
    namespace = globals()
    for name in _HELPERS:
        if not hasattr(namespace[name], "py_func"):
            namespace[name] = _jit(namespace[name])


def cache_dir() -> Path | None:
    """Where the ahead-of-time module is kept: ``$RANKBIAS_CACHE_DIR``, else
    ``$XDG_CACHE_HOME/rankbias`` (default ``~/.cache/rankbias``), else a private per-user
    directory in the temporary directory; ``None`` if none is usable (the scanner is then
    compiled just in time).  Compiled code is only ever loaded from a directory that belongs to
    the user and that nobody else can write to."""
    explicit = os.environ.get("RANKBIAS_CACHE_DIR")
    if explicit:
        candidates = [Path(explicit)]
    else:
        base = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
        uid = os.getuid() if hasattr(os, "getuid") else 0
        candidates = [Path(base) / "rankbias", Path(tempfile.gettempdir()) / f"rankbias-{uid}"]
    for candidate in candidates:
        try:
            candidate.mkdir(mode=0o700, parents=True, exist_ok=True)
            info = candidate.stat()
        except OSError:
            continue
        private = not hasattr(os, "getuid") or (
            info.st_uid == os.getuid() and info.st_mode & 0o022 == 0
        )
        if private and os.access(candidate, os.W_OK | os.X_OK):
            return candidate
    return None


def _module_name() -> str:
    """A name that changes with this file, the Python and NumPy versions and the platform."""
    import hashlib
    import platform
    import sys

    key = hashlib.sha256()
    key.update(Path(__file__).read_bytes())
    key.update(f"{sys.version}|{platform.machine()}|numpy {np.__version__}".encode())
    return f"_rankbias_scan_{key.hexdigest()[:16]}"


def _import_aot(directory: Path, name: str):
    import importlib.machinery
    import importlib.util

    for suffix in importlib.machinery.EXTENSION_SUFFIXES:
        candidate = directory / (name + suffix)
        if candidate.exists():
            spec = importlib.util.spec_from_file_location(name, candidate)
            module = importlib.util.module_from_spec(spec)
            spec.loader.exec_module(module)
            return module
    return None


def _scan_signature():
    from numba import types

    readonly_bytes = types.Array(types.uint8, 1, "C", readonly=True)
    int64_1d = types.Array(types.int64, 1, "C")
    int64_2d = types.Array(types.int64, 2, "C")
    result = types.Tuple(
        (
            types.int64,
            types.int64,
            int64_2d,
            int64_1d,
            int64_2d,
            types.Array(types.uint8, 1, "C"),
            types.Array(types.uint64, 2, "C"),
            types.Array(types.uint8, 1, "C"),
            types.Array(types.int32, 1, "C"),
            types.Array(types.int32, 2, "C"),
            types.int64,
        )
    )
    return result(
        readonly_bytes,
        types.int64,
        types.Array(types.int32, 1, "C"),
        readonly_bytes,
        int64_1d,
        int64_1d,
        types.int64,
        types.int64,
        types.boolean,
    )


def _build_aot(directory: Path, name: str) -> None:
    """Compile ``_scan_block`` ahead of time into ``directory`` (atomically: built in a
    private directory, then renamed into place, so concurrent first runs are safe)."""
    import warnings

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        import numba.pycc.compiler as pycc_compiler
        from numba.core.compiler import Flags
        from numba.pycc import CC

        class _GilFreeFlags(Flags):  # the exported wrapper releases the GIL, as nogil=True does
            def __init__(self, *args, **kwargs):
                super().__init__(*args, **kwargs)
                self.release_gil = True

        _jit_helpers()
        directory.mkdir(parents=True, exist_ok=True)
        build = Path(tempfile.mkdtemp(prefix=".build-", dir=directory))
        original_flags = pycc_compiler.Flags
        pycc_compiler.Flags = _GilFreeFlags
        try:
            cc = CC(name)
            cc.output_dir = str(build)
            cc.verbose = False
            cc.export("scan_block", _scan_signature())(_scan_block)
            cc.compile()
            for built in build.iterdir():
                if built.name.startswith(name):
                    os.replace(built, directory / built.name)
        finally:
            pycc_compiler.Flags = original_flags
            shutil.rmtree(build, ignore_errors=True)


def scanner():
    """The compiled ``scan_block`` (see :func:`_scan_block`), loaded or built on first use.

    ``RANKBIAS_KERNEL=jit`` skips the ahead-of-time module.
    """
    if _SCANNER is not None:
        return _SCANNER
    with _LOADING:  # one thread loads or builds; the others wait for it
        return _scanner_once()


def _scanner_once():
    global _SCANNER, KERNEL_KIND
    if _SCANNER is not None:
        return _SCANNER
    if os.environ.get("RANKBIAS_KERNEL", "").lower() != "jit":
        directory = cache_dir()
        name = _module_name()
        try:
            if directory is None:
                raise OSError("no private, writable cache directory")
            module = _import_aot(directory, name)
            if module is None:
                _build_aot(directory, name)
                module = _import_aot(directory, name)
        except Exception:  # noqa: BLE001 - no compiler, no headers, read-only cache: use the JIT
            module = None
        if module is not None:
            _SCANNER, KERNEL_KIND = module.scan_block, "aot"
            return _SCANNER
    _jit_helpers()
    _SCANNER, KERNEL_KIND = _jit(_scan_block), "jit"
    return _SCANNER
