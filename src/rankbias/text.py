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
class DocidField:
    """The ``docids`` of :class:`DocStats` and :class:`~rankbias.runs.Run`: an object array of
    ``str``, or an Arrow string array (what the readers parse), made the object array only when
    first read.  The collection lookup takes the Arrow array (:func:`arrow_docids`): 8 million
    docids of 7 characters are 0.5 GB as Python strings, 90 MB in Arrow."""

    def __get__(self, record, owner=None):
        if record is None:
            raise AttributeError("docids")  # the dataclass field has no default
        given = record.__dict__["docids"]
        if isinstance(given, np.ndarray):
            return given
        if "_docid_strs" not in record.__dict__:
            record.__dict__["_docid_strs"] = given.to_numpy(zero_copy_only=False)
        return record.__dict__["_docid_strs"]

    def __set__(self, record, docids) -> None:
        record.__dict__["docids"] = docids


def in_arrow(values) -> bool:
    """Whether ``values`` is an Arrow string array (pyarrow imported only for a non-array)."""
    if isinstance(values, np.ndarray):
        return False
    import pyarrow as pa

    return isinstance(values, pa.StringArray)


def arrow_docids(record):
    """The docids of a :class:`DocStats` or a :class:`~rankbias.runs.Run` as an Arrow string
    array: the one it holds, else converted."""
    import pyarrow as pa

    given = record.__dict__["docids"]
    return given if in_arrow(given) else pa.array(np.asarray(given, dtype=object), pa.string())


@dataclass(frozen=True, eq=False)
class DocStats:
    """Per-document statistics of a collection; row ``i`` is ``docids[i]``: ``lengths``
    ``|d|``, ``group_counts`` ``M_g(d)`` (columns as ``groups``) and ``term_counts`` (sparse
    ``tf(t, d)``, columns as ``terms``, whose groups are ``term_group``; ``None`` if not
    computed)."""

    docids: np.ndarray = DocidField()
    lengths: np.ndarray
    group_counts: np.ndarray
    groups: tuple[str, ...]
    terms: tuple[str, ...]
    term_group: np.ndarray
    term_counts: sp.csr_matrix | None = None
    tokenizer: str = "default"

    def __post_init__(self) -> None:
        for name in ("docids", "lengths", "group_counts", "term_group"):
            value = self.__dict__[name]  # docids as given, not made Python strings
            if not (name == "docids" and in_arrow(value)):
                expect_type(value, name, np.ndarray, "an array (document_stats builds them)")

    def __len__(self) -> int:
        return len(self.__dict__["docids"])

    def take(self, rows: np.ndarray) -> DocStats:
        """The statistics of the documents at ``rows`` (positions, in that order)."""
        given = self.__dict__["docids"]
        return replace(
            self,
            docids=given.take(rows) if in_arrow(given) else given[rows],
            lengths=self.lengths[rows],
            group_counts=self.group_counts[rows],
            term_counts=None if self.term_counts is None else self.term_counts[rows],
        )

    @cached_property
    def _arrow_docids(self):
        """The docids as an Arrow string array, the value set of :meth:`rows`."""
        return arrow_docids(self)

    def rows(self, docids: Iterable[str]) -> np.ndarray:
        """Row of each docid (``int64``; ``docids`` may be an Arrow array), ``-1`` where the
        collection lacks it (the first row of a docid the collection repeats).  One lookup on
        one thread, with a hash table of the smaller side: of the collection's docids (80 MB
        for 1.2M) for as many docids as a collection, else of the docids asked for, against
        which the collection is scanned (0.3 s for 400,000 of 8.8M docids, not 4 s)."""
        import pyarrow as pa
        import pyarrow.compute as pc

        if isinstance(docids, pa.ChunkedArray | pa.Array):
            wanted = docids if docids.type == pa.string() else docids.cast(pa.string())
        else:
            if not isinstance(docids, np.ndarray):
                docids = expect_items(docids, "docids", "docids (a list, not one string)")
            wanted = pa.array(np.asarray(docids, dtype=object), type=pa.string())
        collection = self._arrow_docids
        if len(wanted) >= len(collection):
            found = pc.index_in(wanted, value_set=collection).fill_null(-1)
            return found.to_numpy(zero_copy_only=False).astype(np.int64)
        encoded = wanted.dictionary_encode()  # each docid asked for once
        if isinstance(encoded, pa.ChunkedArray):  # the runs of one scoring: one dictionary
            encoded = encoded.unify_dictionaries()
            chunks = [chunk.indices for chunk in encoded.chunks]
            unique = encoded.chunk(0).dictionary if chunks else pa.array([], pa.string())
            codes = pa.chunked_array(chunks, type=encoded.type.index_type)
        else:
            unique, codes = encoded.dictionary, encoded.indices
        position = pc.index_in(collection, value_set=unique)  # per collection row, or null
        rows = np.flatnonzero(position.is_valid().to_numpy(zero_copy_only=False))
        positions = position.drop_null().to_numpy(zero_copy_only=False)
        at = np.full(len(unique) + 1, -1, dtype=np.int64)  # the last: a null docid asked for
        _, first = np.unique(positions, return_index=True)  # a repeated docid: its first row
        at[positions[first]] = rows[first]
        return at[codes.fill_null(len(unique)).to_numpy(zero_copy_only=False)]

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
        if all(in_arrow(p.__dict__["docids"]) for p in parts):  # the blocks' Arrow docids
            import pyarrow as pa

            docids = pa.concat_arrays([p.__dict__["docids"] for p in parts])
        else:
            docids = np.concatenate([p.docids for p in parts])
        return replace(
            first,
            docids=docids,
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
