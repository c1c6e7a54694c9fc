"""The compiled scanner behind the collection reader: tokenise, lower-case and count, one pass.

:func:`_scan_block` walks a block of ``docid<TAB>text`` lines without holding the GIL: per
line it finds docid and text, counts the tokens and looks each up in an open-addressing hash
table of the terms, 64 bytes at a time (bit masks and count-trailing-zeros, tokens compared as
8-byte words).  On ASCII the tokenisers are byte rules: ``default`` takes the maximal runs of
``[A-Za-z0-9]``; ``whitespace`` counts one token more than the spaces before the last
non-white-space byte (``str.rstrip`` strips ``\\t \\n \\v \\f \\r \\x1c-\\x1f`` and the space).
Bytes ≥ 0x80 belong to tokens (default) or pieces (whitespace), and a token that holds one is
decoded as UTF-8 and counted by :func:`_count_utf8`, with tables built from this Python's own
``str`` methods (:func:`unicode_tables`); only a line with a non-ASCII docid, or whose text is
not valid UTF-8 or is empty (both errors), is flagged for the exact path of
:mod:`rankbias.text`.  It stops at the first line that breaks the rules of
:mod:`rankbias.collection`, whose check writes the message.

Compilation (:func:`scanner`, once per process): numba's ``pycc`` builds an extension module in
:func:`cache_dir`, keyed by this file, the Python and NumPy versions and the processor (about
20 s once, with a C compiler and the Python headers); otherwise, or with
``RANKBIAS_KERNEL=jit``, ``numba.njit(nogil=True, cache=True)``.  Both give the same numbers.
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

FLAG_NON_ASCII = 1  # a non-ASCII docid, or text not UTF-8 or empty: for the exact str path

TOKENIZER_CODES = {"default": 0, "whitespace": 1}

_FNV_OFFSET = np.uint64(0xCBF29CE484222325)
_FNV_PRIME = np.uint64(0x100000001B3)
_GOLDEN = np.uint64(0x9E3779B97F4A7C15)

# byte classes (bits): ASCII letter or digit; white space as str.isspace sees it; line break;
# tab; a byte >= 0x80 (part of a non-ASCII character)
_ALNUM, _SPACE, _BREAK, _TAB, _HIGH = 1, 2, 4, 8, 16
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
_LOW8 = np.uint64(0x2020202020202020)  # | on 8 ASCII letters or digits: lower case
_HIGH8 = np.uint64(0x8080808080808080)
_FROM_A = np.uint64(0x3F3F3F3F3F3F3F3F)  # + on an ASCII byte: >= 0x80 from "A" (0x41) on
_PAST_Z = np.uint64(0x2525252525252525)  # + on an ASCII byte: >= 0x80 past "Z" (0x5A)
# the scanner's byte kinds: bit 0 marks tokens (default: a letter, a digit or a byte >= 0x80;
# whitespace: a space), bit 1 stops the text (line break, tab), bit 2 is a byte >= 0x80 (the
# token that holds it goes to _count_utf8); int64, not uint8: the mask loop ran 5-10 % faster
_KIND_DEFAULT = (
    ((_CLASS & (_ALNUM | _HIGH)) != 0)
    | (((_CLASS & (_BREAK | _TAB)) != 0) << 1)
    | (((_CLASS & _HIGH) != 0) << 2)
).astype(np.int64)
_KIND_WHITESPACE = _KIND_DEFAULT & 6
_KIND_WHITESPACE[32] |= 1
_BYTE_MASKS = np.array([(1 << (8 * r)) - 1 for r in range(8)] + [2**64 - 1], dtype=np.uint64)
_GATHER = np.uint64(0x0102040810204080)  # bit 0 of byte k of a word, times this: bit 56 + k
_BITS_BELOW = np.array([(1 << b) - 1 for b in range(64)] + [2**64 - 1], dtype=np.uint64)


# code point properties, bits of ``props`` (see :func:`unicode_tables`)
_P_ALNUM, _P_SPACE, _P_SKIP, _P_CASED = 1, 2, 4, 8
_CAPITAL_SIGMA, _SMALL_SIGMA, _FINAL_SIGMA = 0x3A3, 0x3C3, 0x3C2
_TABLES = None


def unicode_tables():
    """``(lower, props, expand)``, the compiled UTF-8 path's view of this Python's ``str``:
    ``lower[c]`` is ``str.lower`` of code point ``c``, or ``-1 - k`` when that is several code
    points, row ``k`` of ``expand`` (padded with -1; ``İ`` → ``i`` + U+0307); ``props[c]`` has
    bits for ``str.isalnum``, ``str.isspace`` and, for the final-sigma rule that ``str.lower``
    applies to Σ, whether ``c`` is case-ignorable (skipped) or else cased: found by lower-casing
    ``"AcΣ"`` (ς unless ``c`` is neither) and ``"AΣc"`` (σ only if ``c`` is cased and not
    case-ignorable).  Built from the running Python (about 1.5 s), so the compiled path agrees
    with ``str.lower()`` by construction; kept in :func:`cache_dir` per Python and Unicode
    version."""
    global _TABLES
    if _TABLES is not None:
        return _TABLES
    import sys
    import unicodedata

    directory = cache_dir()
    version = f"py{sys.version_info[0]}{sys.version_info[1]}_unicode{unicodedata.unidata_version}"
    path = None if directory is None else directory / f"unicode_tables_{version}.npz"
    if path is not None and path.exists():
        with np.load(path) as saved:
            _TABLES = (saved["lower"], saved["props"], saved["expand"])
        return _TABLES
    codes = np.arange(0x110000, dtype=np.uint32)
    chars = codes.view("<U1")
    lowered = np.strings.lower(chars.astype("<U4"))
    sizes = np.strings.str_len(lowered)
    sizes[0] = 1  # NumPy strings drop a trailing NUL; str.lower keeps "\0"
    lower = lowered.astype("<U1").view(np.uint32).astype(np.int32)
    multi = np.flatnonzero(sizes > 1)
    expand = np.full((max(len(multi), 1), 3), -1, dtype=np.int32)
    for k, code in enumerate(multi.tolist()):
        expand[k, : sizes[code]] = [ord(c) for c in chr(code).lower()]
        lower[code] = -1 - k
    props = np.strings.isalnum(chars) * _P_ALNUM | np.strings.isspace(chars) * _P_SPACE

    def probe(prefix: str, suffix: str, at: int) -> np.ndarray:
        """Character ``at`` of ``(prefix + c + suffix + " ").lower()`` for every ``c``."""
        width = len(prefix) + len(suffix) + 2
        text = np.full((len(codes), width), 32, dtype=np.uint32)
        text[:, : len(prefix)] = [ord(c) for c in prefix]
        text[:, len(prefix)] = np.where(sizes == 1, codes, 32)  # the few others: one by one
        text[:, len(prefix) + 1 : width - 1] = [ord(c) for c in suffix]
        joined = text.tobytes().decode("utf-32-le", "surrogatepass").lower()
        out = np.frombuffer(joined.encode("utf-32-le", "surrogatepass"), dtype=np.uint32)
        found = out.reshape(len(codes), width)[:, at].copy()
        for code in multi.tolist():
            found[code] = ord((prefix + chr(code) + suffix + " ").lower()[at])
        return found

    final_after = probe("A", "\u03a3", -2) == _FINAL_SIGMA  # case-ignorable or cased
    cased = probe("A\u03a3", "", 1) == _SMALL_SIGMA  # cased and not case-ignorable
    props |= (final_after & ~cased) * _P_SKIP | cased * _P_CASED
    _TABLES = (lower, props.astype(np.uint8), expand)
    if path is not None:
        partial = path.with_name(f".{path.name}.{os.getpid()}.partial")
        with open(partial, "wb") as handle:
            np.savez(handle, lower=lower, props=_TABLES[1], expand=expand)
        os.replace(partial, path)
    return _TABLES


def _lower_word(word, tokenizer):
    """Lower-case the ASCII bytes of an 8-byte word: ``| 0x20`` for letters and digits (the
    default tokeniser's tokens), else ``A``-``Z`` found by carry-free byte arithmetic (bytes
    past the token may be anything; their carries only reach later bytes, masked off after)."""
    if tokenizer == 0:
        return word | _LOW8
    upper = (word + _FROM_A) & ~(word + _PAST_Z) & _HIGH8
    return word | (upper >> np.uint64(2))


def _load8(buf, start):
    """The 8 bytes ``buf[start:start + 8]`` as a little-endian word (compiled: one unaligned
    load, see :func:`_intrinsics`)."""
    word = np.uint64(0)
    for i in range(8):
        word |= np.uint64(buf[start + i]) << np.uint64(8 * i)
    return word


def _tail_word(buf, start, n):
    """The bytes ``buf[start:n]`` (fewer than 8) as a little-endian word."""
    word = np.uint64(0)
    for i in range(min(8, n - start)):
        word |= np.uint64(buf[start + i]) << np.uint64(8 * i)
    return word


def _cttz(x):
    """The number of trailing zero bits of ``x`` (not 0) (compiled: one instruction)."""
    count = np.uint64(0)
    while (x & np.uint64(1)) == np.uint64(0):
        x >>= np.uint64(1)
        count += np.uint64(1)
    return count


def _key_table(term_bytes, term_offsets):
    """The terms for the default tokeniser: every term's bytes as little-endian words
    (``words[first[t]:first[t + 1]]``, zero-padded), its size, and an open-addressing table
    (entries: term + 1; first slot: the top bits of the word hash the scanner computes for a
    token; ``shift`` = 64 - the number of those bits)."""
    n_terms = term_offsets.shape[0] - 1
    first = np.zeros(n_terms + 1, dtype=np.int64)
    for t in range(n_terms):
        first[t + 1] = first[t] + (term_offsets[t + 1] - term_offsets[t] + 7) // 8
    words = np.zeros(max(first[n_terms], 1), dtype=np.uint64)
    sizes = np.zeros(n_terms, dtype=np.int64)
    bits = 6
    while (1 << bits) < 16 * n_terms:
        bits += 1
    table = np.zeros(1 << bits, dtype=np.int32)
    mask = np.uint64((1 << bits) - 1)
    shift = np.uint64(64 - bits)
    for t in range(n_terms):
        a = term_offsets[t]
        size = term_offsets[t + 1] - a
        sizes[t] = size
        if size == 0:
            continue
        for i in range(size):
            words[first[t] + i // 8] |= np.uint64(term_bytes[a + i]) << np.uint64(8 * (i % 8))
        h = (words[first[t]] ^ np.uint64(size)) * _GOLDEN
        for j in range(first[t] + 1, first[t + 1]):
            h = (h ^ words[j]) * _GOLDEN
        slot = h >> shift  # the top bits of a product depend on every bit of its factor
        while table[slot] != 0:
            slot = (slot + np.uint64(1)) & mask
        table[slot] = t + 1
    return table, words, first, sizes, shift


def _find_term(h, w0, size, token_words, key_table, key_words, key_first, key_size, key_shift):
    """The term whose bytes are the token's (first word ``w0``, the others in ``token_words[1:]``,
    ``size`` bytes, hash ``h``), or -1."""
    mask = np.uint64(key_table.shape[0] - 1)
    slot = h >> key_shift
    while True:
        entry = key_table[slot]
        if entry == 0:
            return -1
        term = entry - 1
        first_word = key_first[term]
        if key_words[first_word] == w0 and key_size[term] == size:
            same = True
            for j in range(1, (size + 7) >> 3):
                if key_words[first_word + j] != token_words[j]:
                    same = False
                    break
            if same:
                return term
        slot = (slot + np.uint64(1)) & mask


def _next_code(buf, k, end):
    """``(code point, next position)`` of the UTF-8 sequence at ``buf[k]`` (``k < end``), or
    ``(-1, k)`` where Python's strict decoder fails (overlong forms, surrogates, > U+10FFFF, cut).
    """
    b0 = np.int32(buf[k])
    if b0 < 0x80:
        return b0, k + 1
    if b0 < 0xC2 or b0 > 0xF4:
        return -1, k
    if b0 < 0xE0:
        if k + 1 >= end or buf[k + 1] & 0xC0 != 0x80:
            return -1, k
        return (b0 & 0x1F) << 6 | np.int32(buf[k + 1] & 0x3F), k + 2
    if b0 < 0xF0:
        low = 0xA0 if b0 == 0xE0 else 0x80
        high = 0x9F if b0 == 0xED else 0xBF
        if k + 2 >= end or not low <= buf[k + 1] <= high or buf[k + 2] & 0xC0 != 0x80:
            return -1, k
        return (b0 & 0x0F) << 12 | np.int32(buf[k + 1] & 0x3F) << 6 | (buf[k + 2] & 0x3F), k + 3
    low = 0x90 if b0 == 0xF0 else 0x80
    high = 0x8F if b0 == 0xF4 else 0xBF
    if (k + 3 >= end or not low <= buf[k + 1] <= high or buf[k + 2] & 0xC0 != 0x80
            or buf[k + 3] & 0xC0 != 0x80):  # fmt: skip
        return -1, k
    code = (b0 & 0x07) << 18 | np.int32(buf[k + 1] & 0x3F) << 12
    return code | np.int32(buf[k + 2] & 0x3F) << 6 | (buf[k + 3] & 0x3F), k + 4


def _previous_code(buf, k, start):
    """``(code point, its position)`` of the UTF-8 sequence that ends before ``buf[k]``
    (``k > start``), or ``(-1, position)`` if there is none."""
    j = k - 1
    while j > start and k - j < 4 and buf[j] & 0xC0 == 0x80:
        j -= 1
    code, after = _next_code(buf, j, k)
    return (code, j) if after == k else (-1, j)


def _sigma(buf, at, after, start, end, props):
    """``str.lower`` of the Σ at ``buf[at:after]`` in the text ``buf[start:end]``: final (ς)
    after a cased letter (case-ignorable ones skipped) not followed by one, else σ.  White space
    is neither, so the rule may read past a right-stripped end."""
    cased = False
    j = at
    while j > start:
        code, j = _previous_code(buf, j, start)
        if code < 0:
            break
        if not props[code] & _P_SKIP:
            cased = props[code] & _P_CASED != 0
            break
    if not cased:
        return _SMALL_SIGMA
    k = after
    while k < end:
        code, k = _next_code(buf, k, end)
        if code < 0 or not props[code] & _P_SKIP:
            return _SMALL_SIGMA if code >= 0 and props[code] & _P_CASED else _FINAL_SIGMA
    return _FINAL_SIGMA


def _count_utf8(buf, start, end, text_start, text_end, tokenizer, lower, props, expand,
                token_words, key_table, key_words, key_first, key_size, key_shift, max_term,
                term_group, counts, row, hits, n_hits, want_hits):  # fmt: skip
    """Count ``buf[start:end]``, a part of the text ``buf[text_start:text_end]`` that holds
    non-ASCII characters and that no token crosses, as the exact path would: decode (strict
    UTF-8), lower-case (``str.lower``, the final sigma by its context in the text), tokenise the
    lower-cased code points and look each token up by its UTF-8 bytes, adding the terms found
    to ``counts[row]`` (and ``hits``).  Returns ``(number of tokens, n_hits)``, or ``(-1,
    n_hits)`` when the bytes are not valid UTF-8 (the exact path words the error)."""
    n_tokens = 0
    size = 0  # bytes of the token so far (whitespace: of the piece)
    word = np.uint64(0)  # its bytes after the last whole 8-byte word, in token_words
    room = max_term + 8
    k = start
    while k <= end:
        if k == end:
            c = np.int32(32)  # a space after the part ends its last token
            k += 1
        else:
            at = k
            c, k = _next_code(buf, k, end)
            if c < 0:
                return -1, n_hits
        low = c
        if c < 128:
            if 65 <= c <= 90:
                low = c + 32
        elif c == _CAPITAL_SIGMA:
            low = _sigma(buf, at, k, text_start, text_end, props)
        else:
            low = lower[c]
        for part in range(1 if low >= 0 else expand.shape[1]):
            out = low if low >= 0 else expand[-1 - low, part]
            if out < 0:
                break
            if props[out] & _P_ALNUM if tokenizer == 0 else out != 32:
                # the token goes on: append the UTF-8 bytes of the lower-cased code point
                width = 1 if out < 0x80 else 2 if out < 0x800 else 3 if out < 0x10000 else 4
                for b in range(width):
                    if size < room:
                        if width == 1:
                            byte = out
                        elif b == 0:
                            byte = (0xF0 << (4 - width) & 0xFF) | out >> 6 * (width - 1)
                        else:
                            byte = 0x80 | (out >> 6 * (width - 1 - b)) & 0x3F
                        word |= np.uint64(byte) << np.uint64(8 * (size & 7))
                        if size & 7 == 7:
                            token_words[size >> 3] = word
                            word = np.uint64(0)
                    size += 1
                continue
            if tokenizer == 0 and size == 0:
                continue
            n_tokens += 1
            if 0 < size <= max_term:
                if size & 7:
                    token_words[size >> 3] = word
                w0 = token_words[0]
                h = (w0 ^ np.uint64(size)) * _GOLDEN
                for j in range(1, (size + 7) >> 3):
                    h = (h ^ token_words[j]) * _GOLDEN
                term = _find_term(h, w0, size, token_words, key_table, key_words, key_first,
                                  key_size, key_shift)  # fmt: skip
                if term >= 0:
                    counts[row, term_group[term]] += 1
                    if want_hits:
                        hits[n_hits, 0] = row
                        hits[n_hits, 1] = term
                        n_hits += 1
            size = 0
            word = np.uint64(0)
    return n_tokens, n_hits


def _scan_block(
    buf,
    tokenizer,
    term_bytes,
    term_offsets,
    term_group,
    n_groups,
    max_term,
    want_hits,
    lower,
    props,
    expand,
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
    n = buf.shape[0]
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
    key_table, key_words, key_first, key_size, key_shift = _key_table(term_bytes, term_offsets)
    token_words = np.zeros(max_term // 8 + 2, dtype=np.uint64)  # a token's words, see below
    status = STATUS_OK
    while pos < n:
        line_start = pos
        non_ascii = False
        line_high = False  # a byte >= 0x80 was seen in the text
        carried_high = False  # the token (piece) so far holds one in an earlier chunk
        invalid = False  # the text is not valid UTF-8: the exact path words the error
        stray_tab = False
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
                non_ascii = True  # the exact path checks the docid
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
        # 64 bytes at a time: a bit mask of the bytes that mark tokens (default: letters,
        # digits and bytes >= 0x80; whitespace: the spaces between pieces) and one of the bytes
        # that stop the text (line break, tab; the end of the block).  Token boundaries are the
        # bits of the first mask (default: its changes), visited in order with
        # count-trailing-zeros: no branch per byte or per token boundary is left to the branch
        # predictor.  A token is hashed and compared as lower-cased 8-byte words; one that
        # holds a byte >= 0x80 is decoded and counted by _count_utf8 instead.
        kinds = _KIND_DEFAULT if tokenizer == 0 else _KIND_WHITESPACE
        p = text_start
        in_token = np.uint64(0)
        tok_start = text_start
        piece_start = text_start
        spaces = 0
        end = n
        final_piece = False
        while True:
            marks = np.uint64(0)
            stops = np.uint64(0)
            seen = 0
            if p + 64 <= n:
                for i in range(64):
                    kind = kinds[buf[p + i]]
                    marks |= np.uint64(kind & 1) << np.uint64(i)
                    stops |= np.uint64(kind >> 1 & 1) << np.uint64(i)
                    seen |= kind
            else:  # the end of the block stops the text too
                for i in range(64):
                    if p + i < n:
                        kind = kinds[buf[p + i]]
                        marks |= np.uint64(kind & 1) << np.uint64(i)
                        stops |= np.uint64(kind >> 1 & 1) << np.uint64(i)
                        seen |= kind
                    else:
                        stops |= np.uint64(1) << np.uint64(i)
            highs = np.uint64(0)  # the bytes >= 0x80 of the chunk, if it has any
            if seen & 4:
                line_high = True
                if p + 64 <= n:  # 8 bytes at a time: their top bits gathered by a multiplication
                    for j in range(8):
                        top = (_load8(buf, p + 8 * j) & _HIGH8) >> np.uint64(7)
                        highs |= (top * _GATHER >> np.uint64(56)) << np.uint64(8 * j)
                else:
                    for i in range(n - p):
                        highs |= np.uint64(buf[p + i] >> 7) << np.uint64(i)
            if tokenizer == 0:
                edges = marks ^ ((marks << np.uint64(1)) | in_token)
            else:
                edges = marks
            stopped = stops != np.uint64(0)
            if stopped:
                first_stop = _cttz(stops)
                end = p + np.int64(first_stop)
                if tokenizer == 0:  # the stop ends the last token
                    edges &= (np.uint64(2) << first_stop) - np.uint64(1)
                else:
                    edges &= (np.uint64(1) << first_stop) - np.uint64(1)
                    # the last piece of the right-stripped text, unless a space follows it
                    # (then its edge looks it up) or the line goes on after a tab (an error)
                    if end == n or cls[buf[end]] & _BREAK:
                        solid = end
                        while solid > text_start and cls[buf[solid - 1]] & _SPACE:
                            solid -= 1
                        if solid > text_start and not (solid < end and buf[solid] == 32):
                            first = solid
                            while first > text_start and buf[first - 1] != 32:
                                first -= 1
                            final_piece = True
            while True:
                if edges != np.uint64(0):
                    q = p + np.int64(_cttz(edges))
                    edges &= edges - np.uint64(1)
                    if tokenizer == 0:
                        if in_token == np.uint64(0):
                            tok_start = q
                            in_token = np.uint64(1)
                            continue
                        in_token = np.uint64(0)
                        n_tokens += 1
                        size = q - tok_start
                        high = carried_high or highs & _BITS_BELOW[q - p] & ~_BITS_BELOW[
                            max(tok_start - p, 0)] != np.uint64(0)  # fmt: skip
                        carried_high = False
                    else:
                        spaces += 1
                        tok_start = piece_start
                        size = q - piece_start
                        piece_start = q + 1
                        high = carried_high or highs & _BITS_BELOW[q - p] & ~_BITS_BELOW[
                            max(tok_start - p, 0)] != np.uint64(0)  # fmt: skip
                        carried_high = False
                        if size == 0:
                            continue
                elif final_piece:
                    final_piece = False
                    tok_start = first
                    size = solid - first
                    high = False
                    if line_high:
                        for b in range(tok_start, tok_start + size):
                            high |= buf[b] >= 0x80
                else:
                    break
                if high:  # the token holds a byte >= 0x80
                    got, n_hits = _count_utf8(
                        buf, tok_start, tok_start + size, text_start, n, tokenizer, lower,
                        props, expand, token_words, key_table, key_words, key_first,
                        key_size, key_shift, max_term, term_group, counts, n_lines, hits,
                        n_hits, want_hits,
                    )  # fmt: skip
                    if got < 0:
                        invalid = True
                    elif tokenizer == 0:
                        n_tokens += got - 1  # the tokens of the part, not one
                    continue
                # a piece that ends in white space is no term (nor is a piece that holds it,
                # which the comparison finds)
                if size > max_term or tokenizer != 0 and cls[buf[tok_start + size - 1]] & _SPACE:
                    continue
                # the token's lower-cased bytes as little-endian words, hashed, then compared
                if tok_start + 8 <= n:
                    w0 = _load8(buf, tok_start)
                else:
                    w0 = _tail_word(buf, tok_start, n)
                w0 = _lower_word(w0, tokenizer) & _BYTE_MASKS[min(size, 8)]
                h = (w0 ^ np.uint64(size)) * _GOLDEN
                j = 8
                while j < size:  # the words after the first, kept for the comparison
                    if tok_start + j + 8 <= n:
                        w = _load8(buf, tok_start + j)
                    else:
                        w = _tail_word(buf, tok_start + j, n)
                    w = _lower_word(w, tokenizer) & _BYTE_MASKS[min(size - j, 8)]
                    token_words[j >> 3] = w
                    h = (h ^ w) * _GOLDEN
                    j += 8
                term = _find_term(h, w0, size, token_words, key_table, key_words, key_first,
                                  key_size, key_shift)  # fmt: skip
                if term >= 0:
                    counts[n_lines, term_group[term]] += 1
                    if want_hits:
                        hits[n_hits, 0] = n_lines
                        hits[n_hits, 1] = term
                        n_hits += 1
            if stopped:
                break
            # the token (piece) goes on into the next chunk: does it hold a byte >= 0x80 here?
            start_bit = max((tok_start if tokenizer == 0 else piece_start) - p, 0)
            if highs & ~_BITS_BELOW[min(start_bit, 64)] != np.uint64(0):
                carried_high = in_token != np.uint64(0) or tokenizer != 0
            p += 64
        k = end
        if k < n and cls[buf[k]] & _TAB:
            bad = True  # a second tab
            stray_tab = True
        if stray_tab:  # finish the line quickly: only its end and tabs matter now
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
        if tokenizer != 0:
            n_tokens = spaces - trailing_spaces + 1
        if line_high and not bad and last_solid > text_start and buf[last_solid - 1] >= 0x80:
            # str.rstrip also strips non-ASCII white space: then count the stripped text again
            stripped = last_solid
            while stripped > text_start:
                code, before = _previous_code(buf, stripped, text_start)
                if code < 0 or not props[code] & _P_SPACE:
                    break
                stripped = before
            if stripped < last_solid:
                for g in range(n_groups):
                    counts[n_lines, g] = 0
                while n_hits > 0 and hits[n_hits - 1, 0] == n_lines:
                    n_hits -= 1
                n_tokens, n_hits = _count_utf8(
                    buf, text_start, stripped, text_start, n, tokenizer, lower, props, expand,
                    token_words, key_table, key_words, key_first, key_size, key_shift,
                    max_term, term_group, counts, n_lines, hits, n_hits, want_hits,
                )  # fmt: skip
                invalid |= n_tokens < 0 or stripped == text_start  # no text: an error
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
        flags[n_lines] = FLAG_NON_ASCII if non_ascii or invalid else 0
        n_lines += 1
        pos = k
    return (status, n_lines, bounds, lengths, counts, flags, hashes, docid_data, docid_offsets,
            hits, n_hits)  # fmt: skip


def _hash_strings(data, offsets):
    """The 64-bit hash the scanner gives a docid (``hashes[:, 0]`` of :func:`_scan_block`: FNV-1a
    of the bytes, xor the length) of every string ``data[offsets[i]:offsets[i + 1]]``."""
    n = offsets.shape[0] - 1
    out = np.empty(n, dtype=np.uint64)
    for i in range(n):
        h = _FNV_OFFSET
        for j in range(offsets[i], offsets[i + 1]):
            h = (h ^ np.uint64(data[j])) * _FNV_PRIME
        out[i] = h ^ np.uint64(offsets[i + 1] - offsets[i])
    return out


# ---- compilation (module docstring) ----------------------------------------------------------
_HELPERS = ("_tail_word", "_key_table", "_lower_word", "_find_term", "_next_code",
            "_previous_code", "_sigma", "_count_utf8")  # fmt: skip
# inlined into the caller by Numba, as the token loop's code was before these helpers were
# split out of it (inlining or not measured the same on the benchmark's text: 0.30 s both ways)
_INLINE = ("_count_utf8", "_find_term", "_next_code", "_previous_code", "_sigma")
_INTRINSICS = ("_load8", "_cttz")
_SCANNER = None
_HASHER = None
_LOADING = threading.Lock()
KERNEL_KIND = None  # "aot" or "jit" once loaded


def _jit(fn, inline="never"):
    """``numba.njit(nogil=True)``, cached on disk when a cache location is writable."""
    import numba

    try:
        return numba.njit(cache=True, nogil=True, inline=inline)(fn)
    except RuntimeError:  # "cannot cache function ...: no locator available"
        return numba.njit(nogil=True, inline=inline)(fn)


def _intrinsics():
    """``_load8`` and ``_cttz`` as LLVM instructions: an unaligned 8-byte load and
    ``llvm.cttz.i64``."""
    from llvmlite import ir
    from numba.core import types
    from numba.extending import intrinsic

    i64 = ir.IntType(64)

    @intrinsic
    def load8(typingctx, array, start):
        def codegen(context, builder, signature, args):
            data = context.make_array(signature.args[0])(context, builder, args[0]).data
            pointer = builder.bitcast(builder.gep(data, [args[1]]), i64.as_pointer())
            return builder.load(pointer, align=1)

        return types.uint64(array, types.int64), codegen

    @intrinsic
    def cttz(typingctx, x):
        def codegen(context, builder, signature, args):
            kind = ir.FunctionType(i64, [i64, ir.IntType(1)])
            function = builder.module.declare_intrinsic("llvm.cttz", [i64], kind)
            return builder.call(function, [args[0], ir.Constant(ir.IntType(1), 1)])

        return types.uint64(types.uint64), codegen

    return {"_load8": load8, "_cttz": cttz}


def _jit_helpers() -> None:
    """Make the helpers numba functions, so that compiling ``_scan_block`` can call them."""
    namespace = globals()
    for name in _HELPERS:
        if not hasattr(namespace[name], "py_func"):
            namespace[name] = _jit(namespace[name], "always" if name in _INLINE else "never")
    if not all(hasattr(namespace[name], "_defn") for name in _INTRINSICS):
        namespace.update(_intrinsics())


def cache_dir() -> Path | None:
    """Where the ahead-of-time module is kept: ``$RANKBIAS_CACHE_DIR``, else
    ``$XDG_CACHE_HOME/rankbias`` (``~/.cache/rankbias``), else ``rankbias-<uid>`` in the
    temporary directory, the first owned by the user and writable by nobody else; else ``None``
    (just in time)."""
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


def _processor() -> str:
    """This machine's processor (model and flags from ``/proc/cpuinfo``, else :mod:`platform`),
    so a module compiled for one is not loaded on another sharing the cache."""
    import platform

    try:
        with open("/proc/cpuinfo", encoding="utf-8", errors="replace") as handle:
            lines = []
            for line in handle:
                if not line.strip():
                    break
                if line.split(":")[0].strip() in ("vendor_id", "model name", "flags", "Features"):
                    lines.append(line.strip())
        if lines:
            return "\n".join(lines)
    except OSError:
        pass
    return f"{platform.machine()}|{platform.processor()}|{platform.node()}"


def _module_name() -> str:
    """A name that changes with this file, the Python and NumPy versions and the processor."""
    import hashlib
    import sys

    key = hashlib.sha256()
    key.update(Path(__file__).read_bytes())
    key.update(f"{sys.version}|numpy {np.__version__}|{_processor()}".encode())
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


def _signatures():
    """The exported signatures of ``scan_block`` and ``hash_strings``."""
    from numba import types

    def array(dtype, ndim=1, readonly=False):
        return types.Array(dtype, ndim, "C", readonly=readonly)

    i64, u8 = types.int64, types.uint8
    result = types.Tuple(
        (i64, i64, array(i64, 2), array(i64), array(i64, 2), array(u8), array(types.uint64, 2),
         array(u8), array(types.int32), array(types.int32, 2), i64)
    )  # fmt: skip
    data = array(u8, readonly=True)
    i32 = types.int32
    scan = result(data, i64, data, array(i64), array(i64), i64, i64, types.boolean,
                  array(i32, readonly=True), data, array(i32, 2, readonly=True))  # fmt: skip
    return scan, array(types.uint64)(data, array(i64, readonly=True))


def _build_aot(directory: Path, name: str) -> None:
    """Compile ``_scan_block`` ahead of time into ``directory`` (atomically: built in a
    private directory, then renamed into place, so concurrent first runs are safe)."""
    import warnings

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        import numba.pycc.compiler as pycc_compiler
        from numba.core.codegen import AOTCPUCodegen
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
        original_features = AOTCPUCodegen._customize_tm_features
        pycc_compiler.Flags = _GilFreeFlags
        # for this machine's processor, as the just-in-time compiler does (pycc's default is a
        # generic x86-64, without the count-trailing-zeros instruction and about 30 % slower);
        # the module's name holds the processor's identity (see _module_name)
        AOTCPUCodegen._customize_tm_features = lambda codegen: codegen._get_host_cpu_features()
        try:
            cc = CC(name)
            cc.output_dir = str(build)
            cc.verbose = False
            cc.target_cpu = "host"
            scan, hash_strings = _signatures()
            cc.export("scan_block", scan)(_scan_block)
            cc.export("hash_strings", hash_strings)(_hash_strings)
            cc.compile()
            for built in build.iterdir():
                if built.name.startswith(name):
                    os.replace(built, directory / built.name)
        finally:
            pycc_compiler.Flags = original_flags
            AOTCPUCodegen._customize_tm_features = original_features
            shutil.rmtree(build, ignore_errors=True)


def scanner():
    """The compiled ``scan_block`` (:func:`_scan_block`), loaded or built on first use;
    ``RANKBIAS_KERNEL=jit`` skips the ahead-of-time module."""
    return _SCANNER if _SCANNER is not None else _load_once()[0]


def string_hasher():
    """The compiled ``hash_strings`` (see :func:`_hash_strings`), loaded with the scanner."""
    return _HASHER if _HASHER is not None else _load_once()[1]


def _load_once():
    """Load or build both functions, once: one thread does it, the others wait for it."""
    global _SCANNER, _HASHER, KERNEL_KIND
    with _LOADING:
        if _SCANNER is None and os.environ.get("RANKBIAS_KERNEL", "").lower() != "jit":
            directory = cache_dir()
            name = _module_name()
            try:
                if directory is None:
                    raise OSError("no private, writable cache directory")
                module = _import_aot(directory, name)
                if module is None:
                    _build_aot(directory, name)
                    module = _import_aot(directory, name)
            except Exception:  # noqa: BLE001 - no compiler, no headers, read-only cache: the JIT
                module = None
            if module is not None:
                _SCANNER, _HASHER, KERNEL_KIND = module.scan_block, module.hash_strings, "aot"
        if _SCANNER is None:
            _jit_helpers()
            _SCANNER, _HASHER, KERNEL_KIND = _jit(_scan_block), _jit(_hash_strings), "jit"
    return _SCANNER, _HASHER
