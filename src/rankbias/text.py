"""Tokenisers and per-document group statistics (the book's "Conventions" page).

Tokenisers: ``default`` lower-cases, then takes the maximal runs of Unicode letters and digits
(``[^\\W_]+``); ``whitespace`` lower-cases, then ``split(" ")`` exactly as the reference code
(CPJKU ``calculate_collection_docneutrality.py``): empty strings between spaces are tokens and
count in ``|d|``, punctuation stays attached.  :class:`DocStats` holds per document ``|d|``,
``M_g(d) = Σ_{t∈V_g} tf(t, d)`` and, when asked, the sparse ``tf(t, d)``; :class:`TermMatcher`
counts texts, vectorised (files are read by :mod:`rankbias.collection`).
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, replace
from functools import cached_property
from typing import TYPE_CHECKING

import numpy as np

from rankbias.lexicon import Lexicon

if TYPE_CHECKING:  # pandas and scipy are imported where used: `rankbias stats` needs neither
    import pandas as pd
    import scipy.sparse as sp

__all__ = [
    "TOKENIZERS",
    "TOKEN_PATTERN",
    "tokenize",
    "DocStats",
    "TermMatcher",
    "document_stats",
    "unmatchable_terms",
]

TOKENIZERS = ("default", "whitespace")
TOKEN_PATTERN = re.compile(r"[^\W_]+")

_MASK_BY_BYTES = np.array([(1 << (8 * n)) - 1 for n in range(8)] + [2**64 - 1], dtype=np.uint64)
_HASH_MULTIPLIERS = np.array(
    [0x9E3779B97F4A7C15, 0xC2B2AE3D27D4EB4F, 0x165667B19E3779F9, 0xD6E8FEB86659FD93,
     0xFF51AFD7ED558CCD, 0xC4CEB9FE1A85EC53, 0x94D049BB133111EB, 0xBF58476D1CE4E5B9],
    dtype=np.uint64,
)  # fmt: skip
_ASCII_ALNUM = np.array([chr(c).isalnum() for c in range(128)], dtype=bool)


def tokenize(text: str, tokenizer: str = "default") -> list[str]:
    """The tokens of one text under ``tokenizer`` (``"default"`` or ``"whitespace"``)."""
    if not isinstance(text, str):
        raise TypeError(f"text: expected a str, found {type(text).__name__}")
    if tokenizer == "default":
        return TOKEN_PATTERN.findall(text.lower())
    if tokenizer == "whitespace":
        return text.lower().split(" ")
    raise ValueError(f"unknown tokenizer {tokenizer!r}; expected one of {TOKENIZERS}")


# ---- results -----------------------------------------------------------------------------
LOOKUP_SLICE = 2_000_000  # docids per thread of DocStats.rows, at least


@dataclass(frozen=True, eq=False)
class DocStats:
    """Per-document statistics of a collection; row ``i`` is ``docids[i]``: ``lengths``
    ``|d|``, ``group_counts`` ``M_g(d)`` (columns as ``groups``) and ``term_counts`` (sparse
    ``tf(t, d)``, columns as ``terms``, whose groups are ``term_group``; ``None`` if not
    computed)."""

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
    def _arrow_docids(self):
        """The docids as an Arrow string array, the value set of :meth:`rows`."""
        import pyarrow as pa

        return pa.array(np.asarray(self.docids, dtype=object), type=pa.string())

    def rows(self, docids: Iterable[str]) -> np.ndarray:
        """Row of each docid (``int64``; ``docids`` may be an Arrow array), ``-1`` where the
        collection lacks it; slices of :data:`LOOKUP_SLICE` docids are looked up on threads."""
        import os
        from concurrent.futures import ThreadPoolExecutor

        import pyarrow as pa
        import pyarrow.compute as pc

        if isinstance(docids, pa.ChunkedArray | pa.Array):
            wanted = docids if docids.type == pa.string() else docids.cast(pa.string())
        else:
            if not isinstance(docids, np.ndarray):
                docids = list(docids)
            wanted = pa.array(np.asarray(docids, dtype=object), type=pa.string())
        n = len(wanted)
        threads = max(1, min(os.cpu_count() or 1, n // LOOKUP_SLICE))
        value_set = self._arrow_docids
        cuts = [n * i // threads for i in range(threads + 1)]

        def look_up(i: int) -> np.ndarray:
            part = wanted.slice(cuts[i], cuts[i + 1] - cuts[i])
            found = pc.index_in(part, value_set=value_set).fill_null(-1)
            return np.asarray(found.to_numpy(zero_copy_only=False), dtype=np.int64)

        if threads == 1:
            return look_up(0)
        with ThreadPoolExecutor(max_workers=threads, thread_name_prefix="rankbias-rows") as pool:
            return np.concatenate(list(pool.map(look_up, range(threads))))

    def rows_of_each(self, lists: Sequence) -> list[np.ndarray]:
        """:meth:`rows` of several docid arrays (the runs of one scoring) in one lookup: the
        collection's hash table is built once, not once per array."""
        import pyarrow as pa

        if not lists:
            return []
        chunks = [
            a if isinstance(a, pa.Array) else pa.array(np.asarray(a, dtype=object), pa.string())
            for a in lists
        ]
        found = self.rows(pa.chunked_array(chunks, type=pa.string()))
        return np.split(found, np.cumsum([len(c) for c in chunks])[:-1])

    def log_tf_sums(self) -> np.ndarray:
        """``(n_docs, n_groups)``: ``Σ_{t∈V_g, tf>0} ln tf(t, d)``, the TF magnitude of
        Klasnja et al. (2022), Eq. 2 (needs ``term_counts``)."""
        import scipy.sparse as sp

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
        import pandas as pd

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
            import scipy.sparse as sp  # only then: importing SciPy takes about 0.3 s

            term_counts = sp.vstack([p.term_counts for p in parts], format="csr")
        return replace(
            first,
            docids=np.concatenate([p.docids for p in parts]),
            lengths=np.concatenate([p.lengths for p in parts]),
            group_counts=np.concatenate([p.group_counts for p in parts]),
            term_counts=term_counts,
        )


# ---- term matching -----------------------------------------------------------------------
class TermMatcher:
    """The lexicon's terms prepared for exact matching against token spans in a code array;
    ``unmatchable``: the terms the tokeniser would split; :meth:`count` counts lower-cased texts.
    """

    def __init__(self, lexicon: Lexicon, tokenizer: str):
        if not isinstance(lexicon, Lexicon):
            raise TypeError(
                f"lexicon: expected a rankbias.lexicon.Lexicon (read_word_list, default_lexicon, "
                f"Lexicon.from_mapping), found {type(lexicon).__name__}"
            )
        if tokenizer not in TOKENIZERS:
            raise ValueError(f"unknown tokenizer {tokenizer!r}; expected one of {TOKENIZERS}")
        self.tokenizer = tokenizer
        self.groups = lexicon.groups
        self.terms = lexicon.terms
        self.term_group = lexicon.group_index()
        self.max_len = max(len(t) for t in self.terms)
        # A term the tokeniser would split can never be counted: report it, don't hide it.
        self.unmatchable = tuple(t for t in self.terms if tokenize(t, tokenizer) != [t])

    @cached_property
    def _arrays(self):
        """The prefilters and hash tables, built on first use."""
        # a bit table of hashes of (length, first, second, last character): no term rejected
        prefilter = np.zeros(1 << _PREFILTER_BITS, dtype=bool)
        for term in self.terms:
            codes = np.array([ord(c) for c in term], dtype=np.uint32)
            key = _prefilter_key(
                np.array([len(term)]), codes[[0]], codes[[min(1, len(term) - 1)]], codes[[-1]]
            )
            prefilter[key] = True
        # ASCII prefilter: (length, first eight bytes) read as one unaligned 64-bit word
        ascii_prefilter = np.zeros(1 << _PREFILTER_BITS, dtype=bool)
        for term in self.terms:
            if term.isascii():
                head = term.encode("ascii")[:8].ljust(8, b"\0")
                word = np.frombuffer(head, dtype="<u8")
                ascii_prefilter[_ascii_key(word, np.array([len(term)]))] = True
        tables = {1: self._table(1), 4: self._table(4)}
        return prefilter, ascii_prefilter, tables

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

    def match(self, codes: np.ndarray, starts: np.ndarray, ends: np.ndarray):
        """Indices of the tokens that are terms, and which term each is."""
        lengths = np.minimum(ends - starts, self.max_len + 1)
        width = codes.itemsize
        prefilter, ascii_prefilter, tables = self._arrays
        n_words, sorted_hashes, term_ids, term_words, term_bytes = tables[width]
        raw = codes.view(np.uint8)
        buffer = np.zeros(len(raw) + 8 * n_words + 8, dtype=np.uint8)
        buffer[: len(raw)] = raw
        if width == 1:
            heads = np.ndarray(shape=(len(raw),), dtype="<u8", buffer=buffer, strides=(1,))
            head = heads[starts] & _MASK_BY_BYTES[np.minimum(lengths, 8)]
            maybe = np.flatnonzero(ascii_prefilter[_ascii_key(head, lengths)])
        else:
            second = codes[np.minimum(starts + 1, ends - 1)]
            key = _prefilter_key(lengths, codes[starts], second, codes[ends - 1])
            maybe = np.flatnonzero(prefilter[key])
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

    def stats(self, docids, lengths, group_counts, term_counts=None) -> DocStats:
        """A :class:`DocStats` of these rows, with the matcher's groups, terms and tokeniser."""
        return DocStats(docids, lengths, group_counts, self.groups, self.terms, self.term_group,
                        term_counts, self.tokenizer)  # fmt: skip

    def count(self, texts: list[str], per_term: bool = False):
        """``(lengths, group_counts, term_counts)`` of lower-cased texts (``term_counts`` a
        sparse document × term matrix when ``per_term``, else ``None``)."""
        n_docs = len(texts)
        n_groups = len(self.groups)
        span_len = np.fromiter(map(len, texts), dtype=np.int64, count=n_docs)
        begins = np.zeros(n_docs, dtype=np.int64)
        np.cumsum(span_len[:-1] + 1, out=begins[1:])  # +1: the joining space
        ends_doc = begins + span_len
        joined = " ".join(texts)  # as code units: uint8 if ASCII, else uint32 code points
        if joined.isascii():
            codes = np.frombuffer(joined.encode("ascii"), dtype=np.uint8)
        else:
            codes = np.frombuffer(joined.encode("utf-32-le"), dtype=np.uint32)
        is_token = _token_mask(codes, self.tokenizer)
        starts, ends = _runs(is_token)
        if self.tokenizer == "default":
            lengths = np.searchsorted(starts, ends_doc) - np.searchsorted(starts, begins)
        else:
            spaces = np.flatnonzero(codes == 32)
            lengths = np.searchsorted(spaces, ends_doc) - np.searchsorted(spaces, begins) + 1
        token_idx, term_ids = self.match(codes, starts, ends)
        doc_of = np.searchsorted(begins, starts[token_idx], side="right") - 1
        group_of = self.term_group[term_ids]
        group_counts = np.bincount(
            doc_of * n_groups + group_of, minlength=n_docs * n_groups
        ).reshape(n_docs, n_groups)
        term_counts = None
        if per_term:
            import scipy.sparse as sp

            term_counts = sp.csr_matrix(
                (np.ones(len(doc_of), dtype=np.int64), (doc_of, term_ids)),
                shape=(n_docs, len(self.terms)),
            )
            term_counts.sum_duplicates()
        return lengths.astype(np.int64), group_counts.astype(np.int64), term_counts


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


def _runs(mask: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Start and end (exclusive) of every maximal run of ``True`` in ``mask``."""
    change = np.flatnonzero(mask[1:] != mask[:-1]) + 1
    if len(mask) and mask[0]:
        change = np.concatenate([[0], change])
    if len(mask) and mask[-1]:
        change = np.concatenate([change, [len(mask)]])
    return np.ascontiguousarray(change[0::2]), np.ascontiguousarray(change[1::2])


def document_stats(
    texts: Iterable[str],
    lexicon: Lexicon,
    tokenizer: str = "default",
    docids: Iterable[str] | None = None,
    per_term: bool = False,
) -> DocStats:
    """Statistics of in-memory texts, all at once; ``docids`` default to ``"0", "1", …``."""
    matcher = TermMatcher(lexicon, tokenizer)
    if isinstance(texts, str):
        raise TypeError("texts: expected an iterable of texts, found one str")
    lowered = []
    for position, text in enumerate(texts):
        if not isinstance(text, str):
            raise TypeError(f"texts: expected str, found {type(text).__name__} at {position}")
        lowered.append(text.lower())
    ids = [str(i) for i in range(len(lowered))] if docids is None else list(docids)
    ids = np.array(ids, dtype=object)
    if len(ids) != len(lowered):
        raise ValueError(f"docids: {len(ids)} docids for {len(lowered)} texts; expected one each")
    seen: set[str] = set()
    for position, docid in enumerate(ids):
        if not isinstance(docid, str) or docid in seen:
            found = "used twice" if docid in seen else f"a {type(docid).__name__}"
            raise ValueError(
                f"docids: {docid!r} at position {position} is {found}; expected distinct strings"
            )
        seen.add(docid)
    return matcher.stats(ids, *matcher.count(lowered, per_term))


def unmatchable_terms(lexicon: Lexicon, tokenizer: str = "default") -> tuple[str, ...]:
    """Terms the tokeniser would split (e.g. ``mother-in-law``), which can never be counted."""
    return TermMatcher(lexicon, tokenizer).unmatchable
