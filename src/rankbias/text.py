"""Tokenisers and per-document group statistics (the book's "Conventions" page).

Tokenisers: ``default`` lower-cases, then takes the maximal runs of Unicode letters and digits
(``[^\\W_]+``); ``whitespace`` lower-cases, then ``split(" ")`` exactly as the reference code
(CPJKU ``calculate_collection_docneutrality.py``): empty strings between spaces are tokens and
count in ``|d|``, punctuation stays attached.  :class:`DocStats` holds per document ``|d|``,
``M_g(d) = Σ_{t∈V_g} tf(t, d)`` and, when asked, the sparse ``tf(t, d)``; :class:`TermMatcher`
counts texts in Python, the reference (files are read by :mod:`rankbias.collection`, whose
compiled scanner counts them the same way).
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, replace
from functools import cached_property
from typing import TYPE_CHECKING

import numpy as np

from rankbias.errors import expect_choice, expect_flag, expect_items, expect_type
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


def tokenize(text: str, tokenizer: str = "default") -> list[str]:
    """The tokens of one text under ``tokenizer`` (``"default"`` or ``"whitespace"``)."""
    expect_type(text, "text", str, "a str")
    expect_choice(tokenizer, "tokenizer", TOKENIZERS)
    if tokenizer == "default":
        return TOKEN_PATTERN.findall(text.lower())
    return text.lower().split(" ")  # "whitespace"


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

    def __post_init__(self) -> None:
        for name in ("docids", "lengths", "group_counts", "term_group"):
            expect_type(
                getattr(self, name), name, np.ndarray, "an array (document_stats builds them)"
            )

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
                docids = expect_items(docids, "docids", "docids (a list, not one string)")
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

        lists = expect_items(lists, "lists", "docid arrays, one per run")
        if not lists:
            return []
        chunks = pa.chunked_array(lists, type=pa.string())  # Arrow arrays, lists or ndarrays
        return np.split(self.rows(chunks), np.cumsum([len(c) for c in chunks.chunks])[:-1])

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
        for part in parts:
            expect_type(part, "parts", DocStats, "DocStats of consecutive blocks")
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
    """A lexicon's terms under a tokeniser; ``unmatchable``: the terms the tokeniser would split;
    :meth:`count` counts lower-cased texts."""

    def __init__(self, lexicon: Lexicon, tokenizer: str):
        if not isinstance(lexicon, Lexicon):
            raise TypeError(
                f"lexicon: expected a rankbias.lexicon.Lexicon (read_word_list, default_lexicon, "
                f"Lexicon.from_mapping), found {type(lexicon).__name__}"
            )
        expect_choice(tokenizer, "tokenizer", TOKENIZERS)
        self.tokenizer = tokenizer
        self.groups = lexicon.groups
        self.terms = lexicon.terms
        self.term_group = lexicon.group_index()
        # A term the tokeniser would split can never be counted: report it, don't hide it.
        self.unmatchable = tuple(t for t in self.terms if tokenize(t, tokenizer) != [t])

    def stats(self, docids, lengths, group_counts, term_counts=None) -> DocStats:
        """A :class:`DocStats` of these rows, with the matcher's groups, terms and tokeniser."""
        return DocStats(docids, lengths, group_counts, self.groups, self.terms, self.term_group,
                        term_counts, self.tokenizer)  # fmt: skip

    def count(self, texts: list[str], per_term: bool):
        """``(lengths, group_counts, term_counts)`` of texts (lower-cased by :func:`tokenize`),
        counted in Python (``term_counts`` a sparse document × term matrix when ``per_term``,
        else ``None``): the reference behind in-memory texts and the few collection lines the
        compiled scanner of :mod:`rankbias.collection` leaves."""
        column = {term: i for i, term in enumerate(self.terms)}
        lengths = np.zeros(len(texts), dtype=np.int64)
        rows, cols = [], []
        for row, text in enumerate(texts):
            tokens = tokenize(text, self.tokenizer)
            lengths[row] = len(tokens)
            for token in tokens:
                if token in column:
                    rows.append(row)
                    cols.append(column[token])
        rows, cols = np.array(rows, dtype=np.int64), np.array(cols, dtype=np.int64)
        group_counts = np.zeros((len(texts), len(self.groups)), dtype=np.int64)
        np.add.at(group_counts, (rows, self.term_group[cols]), 1)
        term_counts = None
        if per_term:
            import scipy.sparse as sp

            ones = np.ones(len(rows), dtype=np.int64)
            term_counts = sp.csr_matrix((ones, (rows, cols)), shape=(len(texts), len(self.terms)))
            term_counts.sum_duplicates()
        return lengths, group_counts, term_counts


def document_stats(
    texts: Iterable[str],
    lexicon: Lexicon,
    tokenizer: str = "default",
    docids: Iterable[str] | None = None,
    per_term: bool = False,
) -> DocStats:
    """Statistics of in-memory texts, all at once; ``docids`` default to ``"0", "1", …``."""
    matcher = TermMatcher(lexicon, tokenizer)
    expect_flag(per_term, "per_term")
    if isinstance(texts, str):
        raise TypeError("texts: expected an iterable of texts, found one str")
    texts = list(texts)
    for position, text in enumerate(texts):
        if not isinstance(text, str):
            raise TypeError(f"texts: expected str, found {type(text).__name__} at {position}")
    ids = [str(i) for i in range(len(texts))] if docids is None else expect_items(docids, "docids")
    ids = np.array(ids, dtype=object)
    if len(ids) != len(texts):
        raise ValueError(f"docids: {len(ids)} docids for {len(texts)} texts; expected one each")
    seen: set[str] = set()
    for position, docid in enumerate(ids):
        if not isinstance(docid, str) or docid in seen:
            found = "used twice" if docid in seen else f"a {type(docid).__name__}"
            raise ValueError(
                f"docids: {docid!r} at position {position} is {found}; expected distinct strings"
            )
        seen.add(docid)
    return matcher.stats(ids, *matcher.count(texts, per_term))


def unmatchable_terms(lexicon: Lexicon, tokenizer: str = "default") -> tuple[str, ...]:
    """Terms the tokeniser would split (e.g. ``mother-in-law``), which can never be counted."""
    return TermMatcher(lexicon, tokenizer).unmatchable
