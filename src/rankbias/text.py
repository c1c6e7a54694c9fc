"""Tokenisers and per-document group statistics, vectorised and streamed.

Tokenisers (``METRICS.md`` §0)
------------------------------
``default``
    Lower-case, then tokens are the maximal runs of Unicode letters and digits — the regular
    expression ``[^\\W_]+`` (``\\w`` without the underscore), i.e. runs of characters ``c`` with
    ``c.isalnum()``.
``whitespace``
    Lower-case, then ``text.split(" ")`` on single spaces, exactly as the reference code
    (CPJKU ``calculate_collection_docneutrality.py``) does; empty strings between consecutive
    spaces are tokens and count in the length ``|d|``, punctuation stays attached.

Statistics
----------
For every document: its length ``|d|`` (number of tokens), the group magnitudes
``M_g(d) = Σ_{t∈V_g} tf(t, d)`` and, when asked, the per-term counts ``tf(t, d)`` as a sparse
document × term matrix.  :func:`document_stats` computes them for a list of texts at once;
:func:`iter_collection_stats` streams a collection file ``docid<TAB>text`` (optionally gzipped)
in blocks of bounded size, processed by a pool of worker processes; :func:`read_collection_stats`
gathers the stream into one :class:`DocStats`.

How the vectorised counting works (no Python loop over tokens): a block of the collection
(about 1 MiB of whole lines) is decoded, lower-cased in one call and viewed as a NumPy array of
code units (bytes for ASCII text, UTF-32 code points otherwise).  Line breaks, the first tab of
each line and trailing white space are found with array operations; the docids become an Arrow
string array cut straight from the block's bytes.  A vectorised test marks token characters;
token boundaries are where that mask changes.  Each token's first eight bytes (one unaligned
64-bit load) and its length index a small bit table that lets through only tokens that may be
terms; those are read as a few 64-bit words, hashed, looked up among the terms' hashes and then
compared word by word, so the match is exact.  Lengths are counts of token starts (or of
spaces) per document span.  A block with a malformed line, or whose lower-casing changes its
length (a few Unicode characters do), goes through a per-line parser that is the reference for
error messages.  Blocks are processed by worker processes, each reading its own byte range.
In-memory texts (:func:`document_stats`) are joined by single spaces and go through the same
token machinery.
"""

from __future__ import annotations

import gzip
import os
import re
from collections import deque
from collections.abc import Iterable, Iterator
from concurrent.futures import ProcessPoolExecutor
from dataclasses import dataclass
from functools import cached_property
from multiprocessing import get_context
from pathlib import Path
from typing import NamedTuple

import numpy as np
import pandas as pd
import scipy.sparse as sp

from rankbias.errors import InputError, located
from rankbias.lexicon import Lexicon

__all__ = [
    "TOKENIZERS",
    "TOKEN_PATTERN",
    "tokenize",
    "DocStats",
    "document_stats",
    "iter_collection_stats",
    "read_collection_stats",
    "stats_from_pairs",
]

TOKENIZERS = ("default", "whitespace")
TOKEN_PATTERN = re.compile(r"[^\W_]+")
DEFAULT_BLOCK_BYTES = 1 << 20  # 1 MiB of collection text per work unit: arrays stay in cache

_MASK_BY_BYTES = np.array([(1 << (8 * n)) - 1 for n in range(8)] + [2**64 - 1], dtype=np.uint64)
_HASH_MULTIPLIERS = np.array(
    [0x9E3779B97F4A7C15, 0xC2B2AE3D27D4EB4F, 0x165667B19E3779F9, 0xD6E8FEB86659FD93,
     0xFF51AFD7ED558CCD, 0xC4CEB9FE1A85EC53, 0x94D049BB133111EB, 0xBF58476D1CE4E5B9],
    dtype=np.uint64,
)  # fmt: skip
_ASCII_ALNUM = np.array([chr(c).isalnum() for c in range(128)], dtype=bool)


def tokenize(text: str, tokenizer: str = "default") -> list[str]:
    """The tokens of one text under ``tokenizer`` (``"default"`` or ``"whitespace"``)."""
    if tokenizer == "default":
        return TOKEN_PATTERN.findall(text.lower())
    if tokenizer == "whitespace":
        return text.lower().split(" ")
    raise ValueError(f"unknown tokenizer {tokenizer!r}; expected one of {TOKENIZERS}")


# ---- results -----------------------------------------------------------------------------
@dataclass(frozen=True, eq=False)
class DocStats:
    """Per-document statistics of a collection.

    Attributes
    ----------
    docids:
        Document ids (object array of ``str``), in collection order; row ``i`` of every other
        array belongs to ``docids[i]``.
    lengths:
        ``int64`` number of tokens ``|d|``.
    group_counts:
        ``int64`` array ``(n_docs, n_groups)``: ``M_g(d)``, columns in the order of ``groups``.
    groups:
        Group labels.
    terms:
        The lexicon's terms, in the column order of ``term_counts``.
    term_group:
        For each term, the index of its group in ``groups``.
    term_counts:
        ``scipy.sparse.csr_matrix`` ``(n_docs, n_terms)`` of ``tf(t, d)``, or ``None`` when not
        computed.
    tokenizer:
        The tokeniser used.
    """

    docids: np.ndarray
    lengths: np.ndarray
    group_counts: np.ndarray
    groups: tuple[str, ...]
    terms: tuple[str, ...]
    term_group: np.ndarray
    term_counts: sp.csr_matrix | None = None
    tokenizer: str = "default"

    def __len__(self) -> int:
        return len(self.docids)

    @cached_property
    def _lookup(self):
        """docid → row hash table (pandas' object hash table; a plain Index as fallback)."""
        try:
            from pandas._libs.hashtable import PyObjectHashTable
        except ImportError:  # pragma: no cover - other pandas versions
            index = pd.Index(self.docids, dtype=object)
            return lambda wanted: index.get_indexer(wanted)
        table = PyObjectHashTable(len(self.docids))
        table.map_locations(np.asarray(self.docids, dtype=object))
        return table.lookup

    def rows(self, docids: Iterable[str]) -> np.ndarray:
        """Row of each docid (``int64``), ``-1`` where the collection lacks it."""
        wanted = docids if isinstance(docids, np.ndarray) else np.array(list(docids), dtype=object)
        return np.asarray(self._lookup(wanted.astype(object)), dtype=np.int64)

    def row_of(self, docid: str) -> int:
        """Row of one docid; a KeyError names it if the collection lacks it."""
        row = int(self.rows([docid])[0])
        if row < 0:
            raise KeyError(f"document {docid!r} is not in the collection")
        return row

    def log_tf_sums(self) -> np.ndarray:
        """``(n_docs, n_groups)``: ``Σ_{t∈V_g, tf>0} ln tf(t, d)`` (needs ``term_counts``).

        The TF magnitude as printed in seed 002 Eq. 2; terms absent from ``d`` are left out of
        the sum (``ln 0`` is undefined).
        """
        if self.term_counts is None:
            raise ValueError("per-term counts were not computed; pass per_term=True")
        logs = self.term_counts.astype(np.float64, copy=True)
        logs.data = np.log(logs.data)
        indicator = sp.csr_matrix(
            (np.ones(len(self.terms)), (np.arange(len(self.terms)), self.term_group)),
            shape=(len(self.terms), len(self.groups)),
        )
        return np.asarray((logs @ indicator).todense())

    def to_frame(self) -> pd.DataFrame:
        """Table ``docid, length, <one count column per group>``."""
        frame = pd.DataFrame({"docid": self.docids, "length": self.lengths})
        for j, group in enumerate(self.groups):
            frame[group] = self.group_counts[:, j]
        return frame

    @classmethod
    def concat(cls, parts: list[DocStats]) -> DocStats:
        """Stack statistics of consecutive blocks of one collection."""
        if not parts:
            raise ValueError("nothing to concatenate")
        first = parts[0]
        term_counts = None
        if first.term_counts is not None:
            term_counts = sp.vstack([p.term_counts for p in parts], format="csr")
        return cls(
            docids=np.concatenate([p.docids for p in parts]),
            lengths=np.concatenate([p.lengths for p in parts]),
            group_counts=np.concatenate([p.group_counts for p in parts]),
            groups=first.groups,
            terms=first.terms,
            term_group=first.term_group,
            term_counts=term_counts,
            tokenizer=first.tokenizer,
        )


# ---- term matching -----------------------------------------------------------------------
class _TermMatcher:
    """The lexicon's terms prepared for exact matching against token spans in a code array."""

    def __init__(self, lexicon: Lexicon, tokenizer: str):
        if tokenizer not in TOKENIZERS:
            raise ValueError(f"unknown tokenizer {tokenizer!r}; expected one of {TOKENIZERS}")
        self.tokenizer = tokenizer
        self.groups = lexicon.groups
        self.terms = lexicon.terms
        self.term_group = lexicon.group_index()
        lengths = np.array([len(t) for t in self.terms], dtype=np.int64)
        self.max_len = int(lengths.max())
        # Cheap prefilter: a bit table indexed by a hash of (length, first, second, last
        # character); every term sets its bit, so the filter never rejects a term, and few
        # other tokens pass it.
        self.prefilter = np.zeros(1 << _PREFILTER_BITS, dtype=bool)
        for term in self.terms:
            codes = np.array([ord(c) for c in term], dtype=np.uint32)
            key = _prefilter_key(
                np.array([len(term)]), codes[[0]], codes[[min(1, len(term) - 1)]], codes[[-1]]
            )
            self.prefilter[key] = True
        # ASCII prefilter: (length, first eight bytes) read as one unaligned 64-bit word
        self.ascii_prefilter = np.zeros(1 << _PREFILTER_BITS, dtype=bool)
        for term in self.terms:
            if term.isascii():
                head = term.encode("ascii")[:8].ljust(8, b"\0")
                word = np.frombuffer(head, dtype="<u8")
                self.ascii_prefilter[_ascii_key(word, np.array([len(term)]))] = True
        # A term the tokeniser would split can never be counted: report it, don't hide it.
        self.unmatchable = tuple(t for t in self.terms if tokenize(t, tokenizer) != [t])
        self.tables = {1: self._table(1), 4: self._table(4)}
        self.pad_bytes = 8 * self.tables[4][0] + 8  # zero bytes a padded code buffer needs

    def _table(self, width: int):
        """Hash table of the terms encoded with ``width`` bytes per character."""
        n_words = -(-self.max_len * width // 8)
        words = np.zeros((len(self.terms), n_words), dtype=np.uint64)
        byte_lengths = np.zeros(len(self.terms), dtype=np.uint64)
        encodable = np.ones(len(self.terms), dtype=bool)
        for i, term in enumerate(self.terms):
            try:
                raw = term.encode("ascii") if width == 1 else term.encode("utf-32-le")
            except UnicodeEncodeError:
                encodable[i] = False
                continue
            padded = raw + b"\0" * (8 * n_words - len(raw))
            words[i] = np.frombuffer(padded, dtype="<u8")
            byte_lengths[i] = len(raw)
        hashes = _combine(words, byte_lengths)
        hashes[~encodable] = 0
        ok = np.flatnonzero(encodable)
        if len(np.unique(hashes[ok])) != len(ok):
            raise RuntimeError("two terms share a hash; change _HASH_MULTIPLIERS")
        order = ok[np.argsort(hashes[ok])]
        return n_words, hashes[order], order, words[order], byte_lengths[order]

    def match(self, codes: np.ndarray, starts: np.ndarray, ends: np.ndarray, padded=None):
        """Indices of the tokens that are terms, and which term each is.

        ``padded``, if given, is ``codes``' bytes followed by at least ``PAD_BYTES`` zero bytes
        (saves a copy); otherwise one is made.
        """
        lengths = np.minimum(ends - starts, self.max_len + 1)
        width = codes.itemsize
        n_words, sorted_hashes, term_ids, term_words, term_bytes = self.tables[width]
        raw = codes.view(np.uint8)
        if padded is not None and len(padded) >= len(raw) + 8 * n_words + 8:
            buffer = padded
        else:
            buffer = np.zeros(len(raw) + 8 * n_words + 8, dtype=np.uint8)
            buffer[: len(raw)] = raw
        if width == 1:
            heads = np.ndarray(shape=(len(raw),), dtype="<u8", buffer=buffer, strides=(1,))
            head = heads[starts] & _MASK_BY_BYTES[np.minimum(lengths, 8)]
            maybe = np.flatnonzero(self.ascii_prefilter[_ascii_key(head, lengths)])
        else:
            second = codes[np.minimum(starts + 1, ends - 1)]
            key = _prefilter_key(lengths, codes[starts], second, codes[ends - 1])
            maybe = np.flatnonzero(self.prefilter[key])
        if len(maybe) == 0 or len(sorted_hashes) == 0:
            return maybe[:0], maybe[:0]
        unaligned = np.ndarray(
            shape=(len(raw) + 8 * n_words,), dtype="<u8", buffer=buffer, strides=(1,)
        )
        byte_start = starts[maybe] * width
        byte_len = (lengths[maybe] * width).astype(np.int64)
        words = np.empty((len(maybe), n_words), dtype=np.uint64)
        for j in range(n_words):
            remaining = np.clip(byte_len - 8 * j, 0, 8)
            words[:, j] = unaligned[byte_start + 8 * j] & _MASK_BY_BYTES[remaining]
        hashes = _combine(words, byte_len.astype(np.uint64))
        slot = np.minimum(np.searchsorted(sorted_hashes, hashes), len(sorted_hashes) - 1)
        hit = sorted_hashes[slot] == hashes
        slot_hit = slot[hit]
        exact = (words[hit] == term_words[slot_hit]).all(axis=1) & (
            byte_len[hit].astype(np.uint64) == term_bytes[slot_hit]
        )
        return maybe[hit][exact], term_ids[slot_hit[exact]]


_PREFILTER_BITS = 16  # a 64 KiB table stays in cache


def _prefilter_key(lengths, first, second, last) -> np.ndarray:
    """A ``_PREFILTER_BITS``-bit hash of token length and first, second and last code."""
    with np.errstate(over="ignore"):
        key = lengths.astype(np.uint32) * np.uint32(0x9E3779B1)
        key ^= first.astype(np.uint32) * np.uint32(0x85EBCA77)
        key ^= second.astype(np.uint32) * np.uint32(0xC2B2AE3D)
        key ^= last.astype(np.uint32) * np.uint32(0x27D4EB2F)
        key *= np.uint32(0x165667B1)
    return key >> np.uint32(32 - _PREFILTER_BITS)


def _ascii_key(head: np.ndarray, lengths: np.ndarray) -> np.ndarray:
    """Prefilter slot of an ASCII token from its first eight bytes and its length."""
    with np.errstate(over="ignore"):
        key = (head ^ (lengths.astype(np.uint64) << np.uint64(58))) * np.uint64(0x9E3779B97F4A7C15)
    return (key >> np.uint64(64 - _PREFILTER_BITS)).astype(np.intp)


def _combine(words: np.ndarray, byte_lengths: np.ndarray) -> np.ndarray:
    """A 64-bit hash of fixed-width words plus the byte length (wrapping arithmetic)."""
    with np.errstate(over="ignore"):
        acc = byte_lengths.astype(np.uint64) * np.uint64(0x2545F4914F6CDD1D)
        for j in range(words.shape[1]):
            mixed = (words[:, j] ^ (words[:, j] >> np.uint64(29))) * _HASH_MULTIPLIERS[j % 8]
            acc = (acc ^ mixed) * np.uint64(0x9E3779B97F4A7C15)
    return acc


def _codes_of(joined: str) -> np.ndarray:
    """The string as an array of code units: ``uint8`` if ASCII, else ``uint32`` code points."""
    if joined.isascii():
        return np.frombuffer(joined.encode("ascii"), dtype=np.uint8)
    return np.frombuffer(joined.encode("utf-32-le"), dtype=np.uint32)


def _token_mask(codes: np.ndarray, tokenizer: str) -> np.ndarray:
    if tokenizer == "whitespace":
        return codes != 32
    if codes.dtype == np.uint8:  # lower-cased ASCII: a-z and 0-9 (uint8 arithmetic wraps)
        return ((codes - np.uint8(97)) < 26) | ((codes - np.uint8(48)) < 10)
    mask = np.zeros(len(codes), dtype=bool)
    ascii_pos = codes < 128
    mask[ascii_pos] = _ASCII_ALNUM[codes[ascii_pos]]
    wide = codes[~ascii_pos]
    if len(wide):
        distinct, inverse = np.unique(wide, return_inverse=True)
        alnum = np.array([chr(c).isalnum() for c in distinct.tolist()], dtype=bool)
        mask[~ascii_pos] = alnum[inverse]
    return mask


def _stats_of_lowered(texts: list[str], matcher: _TermMatcher, per_term: bool):
    """Lengths, group counts and (optionally) per-term counts of lower-cased texts."""
    n_docs = len(texts)
    n_groups = len(matcher.groups)
    span_len = np.fromiter(map(len, texts), dtype=np.int64, count=n_docs)
    begins = np.zeros(n_docs, dtype=np.int64)
    np.cumsum(span_len[:-1] + 1, out=begins[1:])  # +1: the joining space
    ends_doc = begins + span_len
    codes = _codes_of(" ".join(texts))
    is_token = _token_mask(codes, matcher.tokenizer)
    starts, ends = _runs(is_token)
    if matcher.tokenizer == "default":
        lengths = np.searchsorted(starts, ends_doc) - np.searchsorted(starts, begins)
    else:
        spaces = np.flatnonzero(codes == 32)
        lengths = np.searchsorted(spaces, ends_doc) - np.searchsorted(spaces, begins) + 1
    token_idx, term_ids = matcher.match(codes, starts, ends)
    doc_of = np.searchsorted(begins, starts[token_idx], side="right") - 1
    group_of = matcher.term_group[term_ids]
    group_counts = np.bincount(doc_of * n_groups + group_of, minlength=n_docs * n_groups).reshape(
        n_docs, n_groups
    )
    term_counts = None
    if per_term:
        term_counts = sp.csr_matrix(
            (np.ones(len(doc_of), dtype=np.int64), (doc_of, term_ids)),
            shape=(n_docs, len(matcher.terms)),
        )
        term_counts.sum_duplicates()
    return lengths.astype(np.int64), group_counts.astype(np.int64), term_counts


def document_stats(
    texts: Iterable[str],
    lexicon: Lexicon,
    tokenizer: str = "default",
    docids: Iterable[str] | None = None,
    per_term: bool = False,
) -> DocStats:
    """Statistics of in-memory texts, all at once (no per-document Python loop over tokens).

    ``docids`` default to ``"0", "1", …``.  Texts may contain any characters; each is
    lower-cased on its own and tokenised with ``tokenizer``.
    """
    matcher = _TermMatcher(lexicon, tokenizer)
    lowered = [t.lower() for t in texts]
    ids = (
        np.array([str(i) for i in range(len(lowered))], dtype=object)
        if docids is None
        else np.array(list(docids), dtype=object)
    )
    if len(ids) != len(lowered):
        raise ValueError(f"{len(ids)} docids for {len(lowered)} texts")
    if len(lowered) == 0:
        lengths = np.zeros(0, dtype=np.int64)
        counts = np.zeros((0, len(lexicon.groups)), dtype=np.int64)
        term_counts = sp.csr_matrix((0, len(lexicon.terms)), dtype=np.int64) if per_term else None
    else:
        lengths, counts, term_counts = _stats_of_lowered(lowered, matcher, per_term)
    return DocStats(
        docids=ids,
        lengths=lengths,
        group_counts=counts,
        groups=lexicon.groups,
        terms=lexicon.terms,
        term_group=lexicon.group_index(),
        term_counts=term_counts,
        tokenizer=tokenizer,
    )


# ---- collection files --------------------------------------------------------------------
def _open_binary(path: Path):
    if path.suffix == ".gz":
        return gzip.open(path, "rb")
    return open(path, "rb")


# A work unit is a block of whole lines: either ("file", path, start, end), read by the worker
# itself from an uncompressed file, or ("bytes", block, start) for gzip files and iterators.
def _units(path: Path, block_bytes: int) -> Iterator[tuple]:
    """Cut a collection file into blocks of whole lines of about ``block_bytes``."""
    if path.suffix == ".gz":
        offset = 0
        with _open_binary(path) as handle:
            while True:
                block = handle.read(block_bytes)
                if not block:
                    return
                if not block.endswith(b"\n"):
                    block += handle.readline()
                yield ("bytes", block, offset)
                offset += len(block)
    size = path.stat().st_size
    with open(path, "rb") as handle:
        start = 0
        while start < size:
            handle.seek(min(start + block_bytes, size))
            if handle.tell() < size:
                handle.readline()
            end = handle.tell()
            yield ("file", str(path), start, end)
            start = end


class _BlockError(Exception):
    """An input error at a line counted from the start of its block (made absolute later)."""

    def __init__(self, line_in_block: int, message: str):
        # both arguments in ``args``, so the error survives pickling back from a worker process
        super().__init__(line_in_block, message)
        self.line_in_block = line_in_block
        self.message = message

    def __str__(self) -> str:
        return self.message


def _split_lines_slowly(text: str):
    """Per-line parsing: the reference for errors and for text whose lower-casing changes
    length.  Returns docids and lower-cased texts, or raises :class:`_BlockError`."""
    lines = text.split("\n")
    if lines[-1] == "":
        lines.pop()
    parts = [line.partition("\t") for line in lines]
    texts = [p[2].rstrip() for p in parts]
    for i, (docid, tab, _) in enumerate(parts):
        if not lines[i].strip():
            raise _BlockError(i, "found an empty collection line; expected 'docid<TAB>text'")
        if not tab:
            raise _BlockError(i, f"found no tab in {lines[i][:60]!r}; expected 'docid<TAB>text'")
        if not docid:
            raise _BlockError(i, "found an empty docid; expected 'docid<TAB>text'")
        if not texts[i]:
            raise _BlockError(
                i,
                f"document {docid!r} has no text (an empty collection line); "
                "expected 'docid<TAB>text' with non-empty text",
            )
    return [p[0] for p in parts], [t.lower() for t in texts]


_ASCII_SPACE = np.array([chr(c).isspace() for c in range(128)], dtype=bool)


def _space_mask(codes: np.ndarray) -> np.ndarray:
    if codes.dtype == np.uint8:
        return _ASCII_SPACE[codes]
    mask = np.zeros(len(codes), dtype=bool)
    narrow = codes < 128
    mask[narrow] = _ASCII_SPACE[codes[narrow]]
    wide = codes[~narrow]
    if len(wide):
        distinct, inverse = np.unique(wide, return_inverse=True)
        mask[~narrow] = np.array([chr(c).isspace() for c in distinct.tolist()])[inverse]
    return mask


def _runs(mask: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Start and end (exclusive) of every maximal run of ``True`` in ``mask``."""
    change = np.flatnonzero(mask[1:] != mask[:-1]) + 1
    if len(mask) and mask[0]:
        change = np.concatenate([[0], change])
    if len(mask) and mask[-1]:
        change = np.concatenate([change, [len(mask)]])
    return np.ascontiguousarray(change[0::2]), np.ascontiguousarray(change[1::2])


def _spans(begins: np.ndarray, ends: np.ndarray) -> np.ndarray:
    """All positions of the half-open spans ``[begins[i], ends[i])``, concatenated."""
    sizes = ends - begins
    total = int(sizes.sum())
    if total == 0:
        return np.zeros(0, dtype=np.int64)
    step = np.ones(total, dtype=np.int64)
    firsts = np.cumsum(sizes)[:-1]
    nonempty = sizes > 0
    starts_at = np.concatenate([[0], firsts])[nonempty]
    step[starts_at] = begins[nonempty] - np.concatenate([[0], (ends - 1)[nonempty][:-1]])
    step[0] = begins[nonempty][0]
    return np.cumsum(step)


class _Block(NamedTuple):
    """Statistics of one block of lines, as workers return them (docids stay in Arrow)."""

    docids: object  # pyarrow.StringArray
    lengths: np.ndarray
    group_counts: np.ndarray
    term_counts: sp.csr_matrix | None
    hashes: np.ndarray  # uint64 hash of each docid's UTF-8 bytes


def _hash_strings(docids) -> np.ndarray:
    """A 64-bit hash of each string of an Arrow string array, from its UTF-8 buffers."""
    import pyarrow as pa

    docids = docids.cast(pa.large_string()) if docids.type != pa.large_string() else docids
    _, offsets_buf, data_buf = docids.buffers()
    offsets = np.frombuffer(offsets_buf, dtype=np.int64)[
        docids.offset : docids.offset + len(docids) + 1
    ]
    data = np.frombuffer(data_buf, dtype=np.uint8)[offsets[0] : offsets[-1]]
    offsets = offsets - offsets[0]
    sizes = np.diff(offsets)
    local = np.arange(len(data)) - np.repeat(offsets[:-1], sizes)
    powers = np.ones(int(sizes.max()) if len(sizes) else 1, dtype=np.uint64)
    with np.errstate(over="ignore"):
        for i in range(1, len(powers)):
            powers[i] = powers[i - 1] * np.uint64(0x100000001B3)
        terms = (data.astype(np.uint64) + np.uint64(1)) * powers[local]
        sums = np.add.reduceat(terms, offsets[:-1]) if len(data) else np.zeros(0, np.uint64)
        sums = np.where(sizes > 0, sums, np.uint64(0))
        return (sums ^ (sizes.astype(np.uint64) * np.uint64(0x9E3779B97F4A7C15))) * np.uint64(
            0xBF58476D1CE4E5B9
        )


def _process_block(block: bytes, offset: int, matcher: _TermMatcher, per_term: bool) -> _Block:
    """Statistics of one block of lines.

    Lines are found with array operations on the lower-cased block; the text of a line is
    what follows its first tab, trailing white space excluded.  Any malformed line sends the
    block through :func:`_split_lines_slowly`, which raises the precise error.
    """
    import pyarrow as pa

    if block.isascii():  # valid UTF-8 already; bytes.lower() is the ASCII lower-casing
        lowered_bytes = block.lower()
        padded = np.frombuffer(lowered_bytes + bytes(matcher.pad_bytes), dtype=np.uint8)
        codes = padded[: len(block)]
        result = _fast_block_stats(
            block, block, lowered_bytes, codes, matcher, per_term, padded=padded
        )
        if result is not None:
            return _Block(*result, _hash_strings(result[0]))
    try:
        text = block.decode("utf-8")
    except UnicodeDecodeError as exc:
        line = block.count(b"\n", 0, exc.start)
        line_start = block.rfind(b"\n", 0, exc.start) + 1
        raise _BlockError(
            line,
            f"byte {block[exc.start]:#04x} at byte offset {offset + exc.start} of the file "
            f"(byte {exc.start - line_start + 1} of the line) is not valid UTF-8; "
            "expected UTF-8 text",
        ) from None
    lowered = text.lower()
    result = None
    if len(lowered) == len(text):
        codes = _codes_of(lowered)
        result = _fast_block_stats(block, text, lowered, codes, matcher, per_term)
    if result is None:  # a malformed line, or lower-casing changed the length
        docids, texts = _split_lines_slowly(text)
        lengths, counts, term_counts = _stats_of_lowered(texts, matcher, per_term)
        result = (pa.array(docids, type=pa.string()), lengths, counts, term_counts)
    return _Block(*result, _hash_strings(result[0]))


def _fast_block_stats(
    block: bytes, text, lowered, codes, matcher: _TermMatcher, per_term, padded=None
):
    """Array-based statistics of a block (``text``/``lowered`` are ``str``, or the block's
    bytes when it is ASCII; ``codes`` the lowered code units); ``None`` if a line is
    malformed, so that the per-line parser can report it."""
    import pyarrow as pa

    n_codes = len(codes)
    controls = np.flatnonzero(codes <= 10)  # tabs and line breaks in one pass
    control_codes = codes[controls]
    newlines = controls[control_codes == 10]
    line_ends = newlines if n_codes and codes[-1] == 10 else np.append(newlines, n_codes)
    line_starts = np.concatenate([[0], line_ends[:-1] + 1])
    n_docs = len(line_ends)
    if n_docs == 0:
        return None
    tabs = controls[control_codes == 9]
    k = np.searchsorted(tabs, line_starts)
    first_tab = np.append(tabs, n_codes)[k]
    if (first_tab >= line_ends).any() or (first_tab == line_starts).any():
        return None
    text_begin = first_tab + 1
    # rstrip: almost every line ends in a non-space character; scan back only where not
    text_end = line_ends.copy()
    trailing = np.flatnonzero(_space_mask(codes[np.maximum(line_ends - 1, 0)]))
    for i in trailing.tolist():
        end = int(line_ends[i])
        while end > text_begin[i]:
            char = lowered[end - 1]  # an int for bytes: compare as str.isspace does
            if not (chr(char) if isinstance(char, int) else char).isspace():
                break
            end -= 1
        text_end[i] = end
    if (text_end <= text_begin).any():
        return None
    # token characters: not in a docid, not in trailing white space, not a line break
    is_token = _token_mask(codes, matcher.tokenizer)
    is_token[_spans(line_starts, text_begin)] = False
    is_token[_spans(text_end, line_ends + 1)[: None if n_codes and codes[-1] == 10 else -1]] = False
    starts, ends = _runs(is_token)
    if matcher.tokenizer == "default":
        lengths = np.searchsorted(starts, text_end) - np.searchsorted(starts, text_begin)
    else:
        spaces = np.flatnonzero(codes == 32)
        lengths = np.searchsorted(spaces, text_end) - np.searchsorted(spaces, text_begin) + 1
    token_idx, term_ids = matcher.match(codes, starts, ends, padded)
    doc_of = np.searchsorted(line_starts, starts[token_idx], side="right") - 1
    n_groups = len(matcher.groups)
    counts = np.bincount(
        doc_of * n_groups + matcher.term_group[term_ids], minlength=n_docs * n_groups
    ).reshape(n_docs, n_groups)
    term_counts = None
    if per_term:
        term_counts = sp.csr_matrix(
            (np.ones(len(doc_of), dtype=np.int64), (doc_of, term_ids)),
            shape=(n_docs, len(matcher.terms)),
        )
        term_counts.sum_duplicates()
    if codes.dtype == np.uint8:  # ASCII: code positions are byte positions of the block
        sizes = first_tab - line_starts
        offsets = np.concatenate([[0], np.cumsum(sizes)]).astype(np.int32)
        data = np.frombuffer(block, dtype=np.uint8)[_spans(line_starts, first_tab)]
        docids = pa.StringArray.from_buffers(
            n_docs, pa.py_buffer(offsets.tobytes()), pa.py_buffer(data.tobytes())
        )
    else:
        starts_list, tabs_list = line_starts.tolist(), first_tab.tolist()
        docids = pa.array([text[a:b] for a, b in zip(starts_list, tabs_list, strict=True)])
    # (an ASCII block's ``text`` is bytes, but its docids take the branch above)
    return docids, lengths.astype(np.int64), counts.astype(np.int64), term_counts


def _run_unit(unit: tuple, matcher: _TermMatcher, per_term: bool):
    if unit[0] == "file":
        _, path, start, end = unit
        with open(path, "rb") as handle:
            handle.seek(start)
            block = handle.read(end - start)
    else:
        _, block, start = unit
    return _process_block(block, start, matcher, per_term)


_WORKER_STATE: dict = {}


def _worker_init(matcher: _TermMatcher, per_term: bool) -> None:
    _WORKER_STATE["matcher"] = matcher
    _WORKER_STATE["per_term"] = per_term


def _worker_run(unit: tuple):
    return _run_unit(unit, _WORKER_STATE["matcher"], _WORKER_STATE["per_term"])


def _pool_context():
    """``fork`` where the platform has it (workers start at once), else the default."""
    from multiprocessing import get_all_start_methods

    return get_context("fork" if "fork" in get_all_start_methods() else None)


def _map_units(units, label, matcher, per_term, workers) -> Iterator[_Block]:
    """Process units in order, at most ``2 * workers`` in flight (bounded memory); turn
    block-relative errors into ``file:line`` errors."""
    lines_before = 0
    if workers <= 1:
        results = (_run_unit(unit, matcher, per_term) for unit in units)
    else:
        results = _parallel(units, matcher, per_term, workers)
    try:
        for block in results:
            yield block
            lines_before += len(block.lengths)
    except _BlockError as exc:
        raise located(label, lines_before + exc.line_in_block + 1, exc.message) from None


def _block_stats(block: _Block, matcher: _TermMatcher) -> DocStats:
    """A worker's block as a :class:`DocStats` (docids as Python strings)."""
    return DocStats(
        docids=block.docids.to_numpy(zero_copy_only=False).astype(object),
        lengths=block.lengths,
        group_counts=block.group_counts,
        groups=matcher.groups,
        terms=matcher.terms,
        term_group=matcher.term_group,
        term_counts=block.term_counts,
        tokenizer=matcher.tokenizer,
    )


def _parallel(units, matcher, per_term, workers):
    with ProcessPoolExecutor(
        max_workers=workers,
        mp_context=_pool_context(),
        initializer=_worker_init,
        initargs=(matcher, per_term),
    ) as pool:
        pending: deque = deque()
        for unit in units:
            pending.append(pool.submit(_worker_run, unit))
            if len(pending) >= 2 * workers:
                yield pending.popleft().result()
        while pending:
            yield pending.popleft().result()


def _check_unique(hash_parts: list[np.ndarray], label: str, docid_at) -> None:
    """Raise on a docid listed twice; ``docid_at(i)`` recovers the docid of document ``i``."""
    hashes = np.concatenate(hash_parts) if hash_parts else np.zeros(0, dtype=np.uint64)
    order = np.argsort(hashes, kind="stable")
    same = np.flatnonzero(hashes[order][1:] == hashes[order][:-1])
    for k in same:
        first, second = sorted((int(order[k]), int(order[k + 1])))
        a, b = docid_at([first, second])
        if a == b:
            raise located(
                label,
                second + 1,
                f"docid {b!r} is already used on line {first + 1}; expected each docid once",
            )


def _iter_blocks(path, lexicon, tokenizer, per_term, workers, block_bytes):
    """``(matcher, blocks)``: the raw worker blocks of a collection file, checked for
    duplicate docids when the stream ends."""
    path = Path(path)
    matcher = _TermMatcher(lexicon, tokenizer)
    workers = workers or os.cpu_count() or 1

    def blocks():
        hashes: list[np.ndarray] = []
        for block in _map_units(_units(path, block_bytes), str(path), matcher, per_term, workers):
            hashes.append(block.hashes)
            yield block
        _check_unique(hashes, str(path), lambda indices: _docids_at_lines(path, indices))

    return matcher, blocks()


def _docids_at_lines(path: Path, indices: list[int]) -> list[str]:
    """The docids of documents ``indices`` (0-based line numbers), re-read from the file."""
    wanted: dict[int, str | None] = {i + 1: None for i in indices}
    with _open_binary(path) as handle:
        for number, raw in enumerate(handle, start=1):
            if number in wanted:
                wanted[number] = raw.decode("utf-8").partition("\t")[0]
            if number >= max(wanted):
                break
    return [wanted[i + 1] for i in indices]


def iter_collection_stats(
    path: str | Path,
    lexicon: Lexicon,
    tokenizer: str = "default",
    per_term: bool = False,
    workers: int | None = None,
    block_bytes: int = DEFAULT_BLOCK_BYTES,
) -> Iterator[DocStats]:
    """Stream the statistics of a collection file, one :class:`DocStats` per block.

    The file has one document per line, ``docid<TAB>text`` (UTF-8, optionally ``.gz``); the
    text is everything after the first tab, with trailing white space removed (the reference
    code strips its lines too).  Blocks of about ``block_bytes`` are processed by ``workers``
    processes (default: all cores) — each reads its own byte range of an uncompressed file —
    with at most two blocks per worker in flight, so memory does not grow with the
    collection.  Errors name the file and line: a line without a tab, an empty docid, an empty
    text or empty line, a byte that is not UTF-8 (with its byte offset), a docid used twice
    (checked when the stream ends, from 8 bytes per document).
    """
    matcher, blocks = _iter_blocks(path, lexicon, tokenizer, per_term, workers, block_bytes)
    for block in blocks:
        yield _block_stats(block, matcher)


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
    if not parts:
        raise located(path, None, "the collection is empty; expected 'docid<TAB>text' lines")
    return DocStats.concat(parts)


def _pair_units(pairs: Iterable[tuple[str, str]], block_bytes: int):
    """Encode ``(docid, text)`` pairs as collection lines, in blocks."""
    buffer: list[bytes] = []
    size = 0
    offset = 0
    for docid, text in pairs:
        clean = text.replace("\t", " ").replace("\n", " ").replace("\r", " ")
        raw = f"{docid}\t{clean}\n".encode()
        buffer.append(raw)
        size += len(raw)
        if size >= block_bytes:
            yield ("bytes", b"".join(buffer), offset)
            offset += size
            buffer, size = [], 0
    if buffer:
        yield ("bytes", b"".join(buffer), offset)


def stats_from_pairs(
    pairs: Iterable[tuple[str, str]],
    lexicon: Lexicon,
    label: str,
    tokenizer: str = "default",
    per_term: bool = False,
    workers: int | None = None,
    block_bytes: int = DEFAULT_BLOCK_BYTES,
) -> DocStats:
    """Statistics of ``(docid, text)`` pairs from any iterator (e.g. an ``ir_datasets`` corpus).

    Tabs and line breaks inside a text become spaces; "line" in error messages is the
    1-based position of the document in the iterator, and ``label`` names the source.
    """
    matcher = _TermMatcher(lexicon, tokenizer)
    workers = workers or os.cpu_count() or 1
    results = list(_map_units(_pair_units(pairs, block_bytes), label, matcher, per_term, workers))
    if not results:
        raise InputError(f"{label}: the collection is empty")
    stats = DocStats.concat([_block_stats(r, matcher) for r in results])
    _check_unique([r.hashes for r in results], label, lambda idx: [stats.docids[i] for i in idx])
    return stats


def unmatchable_terms(lexicon: Lexicon, tokenizer: str = "default") -> tuple[str, ...]:
    """Terms the tokeniser would split (e.g. ``mother-in-law``), which can never be counted."""
    return _TermMatcher(lexicon, tokenizer).unmatchable


def collection_stats(
    source: str | Path,
    lexicon: Lexicon,
    tokenizer: str = "default",
    per_term: bool = False,
    workers: int | None = None,
) -> DocStats:
    """Statistics of a collection given as a file path or an ``ir_datasets`` id.

    A path that exists is read as ``docid<TAB>text`` (optionally ``.gz``).  Otherwise
    ``source`` is taken as an ``ir_datasets`` id (e.g. ``msmarco-passage``), imported lazily;
    if ``ir_datasets`` is not installed, or the id is unknown, the error says so.
    """
    path = Path(source)
    if path.exists():
        return read_collection_stats(path, lexicon, tokenizer, per_term, workers)
    corpus = _ir_datasets_corpus(str(source))
    pairs = ((doc.doc_id, document_text(doc)) for doc in corpus.docs_iter())
    return stats_from_pairs(pairs, lexicon, str(source), tokenizer, per_term, workers)


def document_text(doc) -> str:
    """The text of an ``ir_datasets`` document (``default_text()`` where it exists)."""
    if hasattr(doc, "default_text"):
        return doc.default_text()
    return doc.text


def _ir_datasets_corpus(dataset_id: str):
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
    return corpus
