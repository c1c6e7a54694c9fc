r"""Which psycholinguistic categories do bias metrics track?  (Klasnja et al. (2022), RQ3,
Table 1.)

Per query, the share of its top-``k`` documents' tokens in each category of a dictionary, the
documents pooled as one text (as LIWC scores a text):

.. math::  s_c(q) = \sum_{d \in \mathrm{top}_k(q)} n_c(d) \,/\, \sum_{d \in \mathrm{top}_k(q)} |d| ;

then the Pearson correlation of each metric's per-query values with each category's shares, and
per metric the ``k`` categories of largest ``|r|`` significant at ``α`` (with and without
Benjamini–Hochberg control, per metric or over the whole table).

Dictionaries (:class:`CategoryDictionary`): the project's open ``resources/liwc_open.dic``
(:func:`open_dictionary`; an approximation of LIWC, see ``resources/LIWC_OPEN.md``), the Empath
lexicon (Fast et al., CHI 2016; :func:`empath_dictionary`) and a licensed LIWC ``.dic`` file
(:func:`read_dic`).  LIWC ``.dic`` format: between two lines holding ``%``, ``id<TAB>name`` per
category; then per line a word (lower-cased; a trailing ``*`` makes a stem) and its category
ids.  A token takes the categories of its exact entry, else of the **longest** stem it starts
with.  Entries no single token can match (LIWC2007 conditional ids, phrases) are an error, or
with ``unsupported="skip"`` left out and counted in :attr:`CategoryDictionary.skipped`.
"""

from __future__ import annotations

import os
import warnings
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from importlib import resources
from importlib.util import find_spec
from pathlib import Path
from types import MappingProxyType

import numpy as np
import pandas as pd
import scipy.sparse as sp
from scipy import stats
from statsmodels.stats.multitest import multipletests

from rankbias.errors import (
    InputError,
    expect_choice,
    expect_count,
    expect_flag,
    expect_fraction,
    expect_frame,
    expect_items,
    expect_type,
    located,
)
from rankbias.inputs import iter_lines, read_bytes
from rankbias.runs import Run
from rankbias.text import tokenize

__all__ = [
    "CategoryDictionary",
    "CategoryCounts",
    "read_dic",
    "open_dictionary",
    "open_dictionary_path",
    "read_empath_tsv",
    "empath_available",
    "empath_dictionary",
    "document_category_counts",
    "category_shares",
    "query_category_shares",
    "correlate",
    "top_categories",
]

UNSUPPORTED_POLICIES = ("error", "skip")
FAMILIES = ("metric", "all")


# ---- dictionaries -------------------------------------------------------------------------------
@dataclass(frozen=True, eq=False)
class CategoryDictionary:
    """Words and stems (``happ*`` → ``happ``), each mapped to category indices into
    ``categories`` (the file's order; stored sorted, without repeats); ``source`` names it in
    messages; ``skipped`` counts the entries left out because no single token can match them."""

    categories: tuple[str, ...]
    words: Mapping[str, tuple[int, ...]]
    stems: Mapping[str, tuple[int, ...]]
    source: str = "<memory>"
    skipped: int = 0

    def __post_init__(self) -> None:
        object.__setattr__(self, "categories", tuple(expect_items(self.categories, "categories")))
        for name in ("words", "stems"):
            expect_type(getattr(self, name), name, Mapping, "a mapping of entries to categories")
        if len(set(self.categories)) != len(self.categories):
            raise InputError(f"{self.source}: category names repeat in {list(self.categories)}")
        n = len(self.categories)
        for kind, entries in (("word", self.words), ("stem", self.stems)):
            for entry, cats in entries.items():
                if not cats or any(not 0 <= c < n for c in cats):
                    raise InputError(
                        f"{self.source}: {kind} {entry!r} has category indices {list(cats)}; "
                        f"expected at least one in 0..{n - 1}"
                    )
        for name in ("words", "stems"):
            entries = {e: tuple(sorted(set(c))) for e, c in getattr(self, name).items()}
            object.__setattr__(self, name, MappingProxyType(entries))
        lengths = sorted({len(s) for s in self.stems}, reverse=True)
        object.__setattr__(self, "_stem_lengths", tuple(lengths))

    @classmethod
    def from_mapping(
        cls, entries: Mapping[str, Iterable[str]], source: str = "<memory>"
    ) -> CategoryDictionary:
        """Build from ``{category: [word or stem*, …]}`` (categories in the mapping's order)."""
        categories = tuple(entries)
        words: dict[str, set[int]] = {}
        stems: dict[str, set[int]] = {}
        for index, name in enumerate(categories):
            for raw in expect_items(entries[name], f"entries[{name!r}]", "a list of words"):
                entry = str(raw).strip().lower()
                _check_entry(entry, source, None)
                target = stems if entry.endswith("*") else words
                target.setdefault(entry.rstrip("*"), set()).add(index)
        return cls(categories, words, stems, source)

    def categories_of(self, token: str) -> tuple[str, ...]:
        """The category names of one (lower-cased) token under the matching rule."""
        return tuple(self.categories[i] for i in self._match(token))

    def _match(self, token: str) -> tuple[int, ...]:
        found = self.words.get(token)
        if found is not None:
            return found
        for length in self._stem_lengths:  # longest stem first
            if length <= len(token):
                found = self.stems.get(token[:length])
                if found is not None:
                    return found
        return ()

    def membership(self, types: Sequence[str]) -> sp.csr_matrix:
        """Sparse 0/1 matrix ``(len(types), n_categories)``: each distinct type's categories."""
        rows, cols = [], []
        for row, token in enumerate(types):
            cats = self._match(token)
            rows.extend([row] * len(cats))
            cols.extend(cats)
        data = np.ones(len(rows), dtype=np.int64)
        return sp.csr_matrix((data, (rows, cols)), shape=(len(types), len(self.categories)))

    def restrict(self, categories: Iterable[str]) -> CategoryDictionary:
        """The dictionary with only the named categories (unknown names are a KeyError)."""
        keep = list(categories)
        unknown = [c for c in keep if c not in self.categories]
        if unknown:
            raise KeyError(f"no categor(ies) {unknown}; the categories are {list(self.categories)}")
        new_index = {self.categories.index(c): i for i, c in enumerate(keep)}

        def remap(entries):
            kept = {
                e: [new_index[c] for c in cats if c in new_index] for e, cats in entries.items()
            }
            return {entry: cats for entry, cats in kept.items() if cats}

        return CategoryDictionary(
            tuple(keep), remap(self.words), remap(self.stems), f"{self.source} (restricted)"
        )

    def __len__(self) -> int:
        return len(self.words) + len(self.stems)

    def __repr__(self) -> str:
        return (
            f"CategoryDictionary({len(self.categories)} categories, {len(self.words)} words, "
            f"{len(self.stems)} stems; from {self.source})"
        )


def _check_entry(entry: str, path, line: int | None) -> None:
    if entry in ("", "*"):
        raise located(path, line, f"found the entry {entry!r}; expected a word or a stem*")
    if "*" in entry[:-1]:
        raise located(
            path, line, f"found {entry!r}; expected '*' only at the end of a word (a stem)"
        )


def read_dic(
    path: str | Path, unsupported: str = "error", encoding: str = "utf-8-sig"
) -> CategoryDictionary:
    """Read a dictionary in LIWC ``.dic`` format (module docstring); a malformed header or entry
    is an :class:`InputError` naming the file and line."""
    expect_choice(unsupported, "unsupported", UNSUPPORTED_POLICIES)
    path = Path(expect_type(path, "path", str | os.PathLike, "a file path"))
    try:
        text = path.read_text(encoding=encoding)
    except UnicodeDecodeError as error:
        raise InputError(
            f"{path}: cannot decode as {encoding} ({error}); pass encoding= (e.g. 'latin-1')"
        ) from None
    lines = text.splitlines()
    start = next((i for i, line in enumerate(lines) if line.strip()), len(lines))
    if start == len(lines) or lines[start].strip() != "%":
        found = f"found {lines[start].strip()!r}" if start < len(lines) else "found no text"
        line = start + 1 if start < len(lines) else None
        raise located(
            path, line, f"expected a line holding '%' to open the category header, {found}"
        )
    ids: dict[str, tuple[int, int]] = {}  # category id -> (index into names, line)
    names: list[str] = []
    for number in range(start + 2, len(lines) + 1):  # 1-based line numbers
        raw = lines[number - 1].strip()
        if raw == "%":
            break
        if not raw:
            continue
        parts = raw.split(None, 1)
        if len(parts) != 2 or not parts[0].isdigit():
            raise located(
                path,
                number,
                f"found {raw!r} in the category header; expected 'id<TAB>name' "
                "(or a line holding '%' closing the header)",
            )
        cat_id, name = str(int(parts[0])), parts[1].strip()
        if cat_id in ids:
            raise located(
                path,
                number,
                f"category id {cat_id} declared again (first on line {ids[cat_id][1]})",
            )
        if name in names:
            raise located(path, number, f"category name {name!r} declared twice")
        ids[cat_id] = (len(names), number)
        names.append(name)
    else:
        raise located(path, None, "the category header is not closed by a line holding '%'")
    if not names:
        raise located(path, number, "the category header declares no categories")
    words: dict[str, tuple[int, ...]] = {}
    stems: dict[str, tuple[int, ...]] = {}
    first_line: dict[str, int] = {}
    skipped = 0
    for offset, raw_line in enumerate(lines[number:]):
        line_no = number + offset + 1
        raw = raw_line.strip()
        if not raw:
            continue
        if "\t" in raw:
            word, _, rest = raw.partition("\t")
            word, fields = word.strip().lower(), rest.split()
        else:
            word, *fields = raw.lower().split()
        if not fields:
            raise located(path, line_no, f"entry {word!r} lists no category ids; expected ≥ 1")
        unusable = None
        if any(ch.isspace() for ch in word):
            unusable = f"the multi-word entry {word!r} cannot match a single token"
        elif not all(f.isdigit() for f in fields):
            unusable = f"entry {word!r} has non-numeric (conditional?) category ids {fields}"
        if unusable:
            if unsupported == "error":
                raise located(path, line_no, unusable + "; pass unsupported='skip' to leave it out")
            skipped += 1
            continue
        _check_entry(word, path, line_no)
        cats = []
        for field in fields:
            key = str(int(field))
            if key not in ids:
                raise located(
                    path, line_no, f"entry {word!r} names category id {field}; the header "
                    f"declares {sorted(ids, key=int)}"
                )  # fmt: skip
            cats.append(ids[key][0])
        if word in first_line:
            raise located(
                path, line_no, f"{word!r} is listed again (first on line {first_line[word]}); "
                "expected each word once, with all its categories"
            )  # fmt: skip
        first_line[word] = line_no
        target = stems if word.endswith("*") else words
        target[word.rstrip("*")] = cats
    return CategoryDictionary(tuple(names), words, stems, str(path), skipped)


def open_dictionary_path() -> Path:
    """Path of the project's open LIWC-format dictionary (``resources/liwc_open.dic``)."""
    return Path(str(resources.files("rankbias") / "resources" / "liwc_open.dic"))


def open_dictionary() -> CategoryDictionary:
    """The project's open dictionary (see ``resources/LIWC_OPEN.md``)."""
    return read_dic(open_dictionary_path())


def read_empath_tsv(path: str | Path, unsupported: str = "skip") -> CategoryDictionary:
    """Read Empath's ``categories.tsv`` (``category<TAB>term<TAB>term…`` per line; exact words);
    multi-word terms (a space or ``_``) are skipped and counted (``unsupported="error"``
    refuses them); a category without terms or named twice is an error."""
    expect_choice(unsupported, "unsupported", UNSUPPORTED_POLICIES)
    path = Path(expect_type(path, "path", str | os.PathLike, "a file path"))
    categories: list[str] = []
    words: dict[str, set[int]] = {}
    skipped = 0
    for line_no, raw in iter_lines(read_bytes(path, "category table in Empath's form"), str(path)):
        if not raw.strip():
            continue
        name, *terms = raw.split("\t")
        name = name.strip()
        terms = [t.strip().lower() for t in terms if t.strip()]
        if not name or not terms:
            raise located(path, line_no, "expected 'category<TAB>term<TAB>…' with ≥ 1 term")
        if name in categories:
            raise located(path, line_no, f"category {name!r} appears twice")
        index = len(categories)
        categories.append(name)
        for term in terms:
            if any(ch.isspace() for ch in term) or "_" in term or "*" in term:
                if unsupported == "error":
                    raise located(path, line_no, f"term {term!r} cannot match a single token")
                skipped += 1
                continue
            words.setdefault(term, set()).add(index)
    if not categories:
        raise located(path, None, "no categories found")
    return CategoryDictionary(tuple(categories), words, {}, str(path), skipped)


def empath_available() -> bool:
    """Whether the ``empath`` package (PyPI, 0.89) is installed."""
    return find_spec("empath") is not None


def empath_dictionary() -> CategoryDictionary:
    """Empath's lexicon, from the ``data/categories.tsv`` of the installed package (an
    ImportError saying how to get it when ``empath`` is not installed)."""
    if not empath_available():
        raise ImportError(
            "the Empath lexicon needs the 'empath' package (pip install empath==0.89); "
            "the open dictionary (open_dictionary()) and read_dic(path) work without it"
        )
    path = Path(str(resources.files("empath") / "data" / "categories.tsv"))
    if not path.is_file():
        raise InputError(f"{path}: Empath's categories file is missing from the installed package")
    return read_empath_tsv(path)


# ---- counting -----------------------------------------------------------------------------------
@dataclass(frozen=True, eq=False)
class CategoryCounts:
    """Per-document token ``lengths`` and category ``counts`` (sparse ``(n_docs,
    n_categories)``, columns in the order of ``categories``); row ``i`` is ``docids[i]``."""

    docids: np.ndarray
    lengths: np.ndarray
    counts: sp.csr_matrix
    categories: tuple[str, ...]

    def rows(self, docids) -> np.ndarray:
        """Row of each docid, ``-1`` where absent."""
        return pd.Index(self.docids).get_indexer(docids)  # int64 (intp)


def document_category_counts(
    texts: Iterable[str],
    dictionary: CategoryDictionary,
    docids: Iterable[str] | None = None,
    tokenizer: str = "default",
) -> CategoryCounts:
    """Category counts and token lengths of each text (:func:`rankbias.text.tokenize`)."""
    texts = expect_items(texts, "texts", "texts (a list, not one string)")
    expect_type(dictionary, "dictionary", CategoryDictionary, "a CategoryDictionary (read_dic)")
    docids = range(len(texts)) if docids is None else expect_items(docids, "docids")
    docids = np.asarray([str(d) for d in docids], dtype=object)
    if len(docids) != len(texts):
        raise ValueError(f"{len(docids)} docids for {len(texts)} texts; expected one each")
    if len(pd.unique(docids)) != len(docids):
        raise InputError("docids repeat; expected one text per document id")
    tokens = [tokenize(t, tokenizer) for t in texts]
    lengths = np.fromiter((len(t) for t in tokens), dtype=np.int64, count=len(tokens))
    flat = np.fromiter((w for doc in tokens for w in doc), dtype=object, count=int(lengths.sum()))
    codes, types = pd.factorize(flat)
    doc_of = np.repeat(np.arange(len(texts)), lengths)
    by_type = sp.csr_matrix(
        (np.ones(len(codes), dtype=np.int64), (doc_of, codes)), shape=(len(texts), len(types))
    )
    counts = (by_type @ dictionary.membership(list(types))).tocsr()
    return CategoryCounts(docids, lengths, counts, dictionary.categories)


def category_shares(
    run: Run, counts: CategoryCounts, cutoff: int = 10, missing: str = "error"
) -> pd.DataFrame:
    """Per query of ``run``, the share of its top-``cutoff`` documents' tokens in each category,
    as ``run, qid, category, value``.  A document ``counts`` lacks is an error (``missing="skip"``:
    left out, counted in ``attrs["missing_documents"]``); a query without tokens gets NaN, listed
    in ``attrs["empty_queries"]``; ``attrs["tokens"]`` maps qid → pooled token count."""
    expect_choice(missing, "missing", ("error", "skip"))
    expect_type(run, "run", Run, "a Run (rankbias.runs.read_run)")
    expect_type(counts, "counts", CategoryCounts, "the CategoryCounts of document_category_counts")
    cut = run.cut(cutoff)
    rows = counts.rows(cut.docids)
    absent = rows < 0
    if absent.any() and missing == "error":
        ids = pd.unique(cut.docids[absent])
        raise InputError(
            f"run {run.name!r}: {len(ids)} document(s) of the top {cutoff} have no category "
            f"counts, e.g. {', '.join(map(str, ids[:5]))}; expected every document "
            "counted (or missing='skip')"
        )
    query_of = np.repeat(np.arange(len(cut.qids)), cut.list_lengths)
    frame, tokens = _pooled_shares(
        counts, cut.qids.astype(object), query_of[~absent], rows[~absent]
    )
    frame.insert(0, "run", run.name)
    frame.attrs["missing_documents"] = int(absent.sum())
    frame.attrs["empty_queries"] = [str(q) for q in cut.qids[tokens == 0]]
    frame.attrs["tokens"] = {str(q): int(t) for q, t in zip(cut.qids, tokens, strict=True)}
    return frame


def _pooled_shares(counts: CategoryCounts, qids, query_of, rows) -> tuple[pd.DataFrame, np.ndarray]:
    """``qid, category, value`` shares of the documents (``rows`` of ``counts``) pooled per query
    (``query_of``, positions in ``qids``), and each query's token count."""
    pool = sp.csr_matrix(
        (np.ones(len(rows)), (query_of, rows)), shape=(len(qids), len(counts.docids))
    )
    totals = np.asarray((pool @ counts.counts).todense())
    tokens = pool @ counts.lengths
    with np.errstate(invalid="ignore"):  # a query without tokens: 0 / 0 is NaN
        shares = totals / tokens[:, None]
    frame = pd.DataFrame(
        {
            "qid": np.repeat(np.asarray(qids, dtype=str), len(counts.categories)),
            "category": np.tile(counts.categories, len(qids)),
            "value": shares.ravel(),
        }
    )
    return frame, tokens


def query_category_shares(
    texts_by_query: Mapping[str, Sequence[str]],
    dictionary: CategoryDictionary,
    tokenizer: str = "default",
) -> pd.DataFrame:
    """``qid, category, value`` shares for queries given as ``{qid: [document text, …]}`` (already
    cut); a query without tokens gets NaN and is listed in ``attrs["empty_queries"]``."""
    expect_type(texts_by_query, "texts_by_query", Mapping, "a mapping qid → [document text, …]")
    lists = {
        str(q): expect_items(docs, f"texts_by_query[{q!r}]", "a list of document texts")
        for q, docs in texts_by_query.items()
    }
    qids = list(lists)
    texts = [t for docs in lists.values() for t in docs]
    sizes = np.array([len(docs) for docs in lists.values()], dtype=np.int64)
    counts = document_category_counts(texts, dictionary, tokenizer=tokenizer)
    query_of = np.repeat(np.arange(len(qids)), sizes)
    frame, tokens = _pooled_shares(counts, qids, query_of, np.arange(len(texts)))
    frame.attrs["empty_queries"] = [q for q, t in zip(qids, tokens, strict=True) if t == 0]
    return frame


# ---- correlation --------------------------------------------------------------------------------
def _one_per(frame: pd.DataFrame, key: str, what: str, run, cutoff) -> pd.DataFrame:
    """Select ``run``/``cutoff`` where the columns exist; refuse several combinations."""
    for column, value in (("run", run), ("cutoff", cutoff)):
        if column in frame.columns:
            if value is not None:
                frame = frame[frame[column] == value]
            present = frame[column].drop_duplicates()
            if len(present) > 1:
                raise InputError(
                    f"the {what} table holds {len(present)} values of {column!r} "
                    f"({', '.join(map(repr, present.head(5)))}); expected one: pass {column}="
                )
    duplicated = frame.duplicated(["qid", key], keep=False)
    if duplicated.any():
        first = frame[duplicated].iloc[0]
        raise InputError(
            f"the {what} table has several rows for qid {first['qid']!r} and {key} "
            f"{first[key]!r}; expected one per (qid, {key})"
        )
    return frame


def correlate(
    per_query_metric: pd.DataFrame,
    shares: pd.DataFrame,
    alpha: float = 0.05,
    family: str = "metric",
    metrics: Sequence[str] | None = None,
    run: str | None = None,
    cutoff: int | None = None,
) -> pd.DataFrame:
    """Pearson ``r`` and p between each metric's per-query values (tidy ``qid, metric, value``)
    and each category's shares (:func:`category_shares`); ``run``/``cutoff`` select when those
    columns hold several values.  A query without shares or with a NaN is left out of that
    metric's tests, counted in ``attrs["excluded_queries"]``.  Returns ``metric, category, n, r,
    p, p_bh, significant, significant_bh`` (``p_bh`` adjusted within ``family``);
    ``attrs["undefined"]`` counts the pairs without a correlation."""
    expect_choice(family, "family", FAMILIES)
    expect_fraction(alpha, "alpha")
    for frame, key, what in (
        (per_query_metric, "metric", "metric"),
        (shares, "category", "shares"),
    ):
        name = "per_query_metric" if key == "metric" else "shares"
        expect_frame(frame, name, expected=f"a table with the columns qid, {key}, value")
        lacking = {"qid", key, "value"} - set(frame.columns)
        if lacking:
            raise InputError(f"the {what} table lacks column(s) {sorted(lacking)}")
    table = pd.DataFrame({c: per_query_metric[c].to_numpy() for c in per_query_metric.columns})
    shares = pd.DataFrame({c: shares[c].to_numpy() for c in shares.columns})  # drop attrs
    if metrics is not None:
        metrics = expect_items(metrics, "metrics", "a list of metrics (not one string)")
        table = table[table["metric"].isin(metrics)]
        absent = [m for m in metrics if m not in set(table["metric"])]
        if absent:
            raise InputError(f"the metric table has no rows for {absent}")
    table = _one_per(table, "metric", "metric", run, cutoff)
    shares = _one_per(shares, "category", "shares", run, None)
    if table.empty or shares.empty:
        raise InputError("nothing to correlate: the metric or the shares table is empty")
    x_wide = table.pivot(index="qid", columns="metric", values="value")
    x_wide.index = x_wide.index.astype(str)
    if metrics is not None:
        x_wide = x_wide[list(metrics)]
    y_wide = shares.pivot(index="qid", columns="category", values="value")
    y_wide.index = y_wide.index.astype(str)
    y_wide = y_wide.reindex(x_wide.index)
    categories = list(y_wide.columns)
    y_all = y_wide.to_numpy(dtype=np.float64)
    rows, excluded, undefined = [], {}, 0
    for metric in x_wide.columns:
        x = x_wide[metric].to_numpy(dtype=np.float64)
        ok = np.isfinite(x) & np.isfinite(y_all).all(axis=1)
        excluded[metric] = int((~ok).sum())
        r, p = _pearson_columns(x[ok], y_all[ok])
        undefined += int(np.isnan(r).sum())
        n = int(ok.sum())
        rows.append(
            pd.DataFrame({"metric": metric, "category": categories, "n": n, "r": r, "p": p})
        )
    out = pd.concat(rows, ignore_index=True)
    out["p_bh"] = np.nan
    tested = out[np.isfinite(out["p"].to_numpy(dtype=np.float64))]
    keys = np.zeros(len(tested)) if family == "all" else tested["metric"]
    for _, group in tested.groupby(keys, sort=False):
        out.loc[group.index, "p_bh"] = multipletests(group["p"], alpha=alpha, method="fdr_bh")[1]
    out["significant"] = out["p"] < alpha
    out["significant_bh"] = out["p_bh"] < alpha
    out.attrs.update(excluded_queries=excluded, undefined=undefined, alpha=alpha, family=family)
    return out


def _pearson_columns(x: np.ndarray, y: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Pearson r and two-sided p of ``x`` (n,) with each column of ``y`` (n, c); NaN for fewer
    than 3 values or a constant column."""
    if len(x) < 3:
        nan = np.full(y.shape[1], np.nan)
        return nan, nan.copy()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", stats.DegenerateDataWarning)
        result = stats.pearsonr(np.broadcast_to(x[:, None], y.shape), y, axis=0)
    return result.statistic, result.pvalue


def top_categories(correlations: pd.DataFrame, k: int = 5, adjust: bool = True) -> pd.DataFrame:
    """Per metric, the (at most) ``k`` significant categories (``significant_bh`` if ``adjust``,
    else ``significant``) of largest ``|r|``, ties by name, as ``metric, rank, category, r, p``;
    ``attrs["n_significant"]`` counts each metric's significant categories."""
    column = "significant_bh" if expect_flag(adjust, "adjust") else "significant"
    p_column = "p_bh" if adjust else "p"
    expect_count(k, "k")
    expect_frame(correlations, "correlations", expected="the table of correlate()")
    lacking = {"metric", "category", "r", p_column, column} - set(correlations.columns)
    if lacking:
        raise InputError(f"correlations: lacks column(s) {sorted(lacking)}; expected correlate()'s")
    table = pd.DataFrame(
        {c: correlations[c].to_numpy() for c in ("metric", "category", "r", p_column, column)}
    )  # plain columns: no attrs copied along the way
    metric_order = list(dict.fromkeys(table["metric"]))
    counts = {m: int(n) for m, n in table.groupby("metric", sort=False)[column].sum().items()}
    picked = table[table[column].astype(bool)].assign(abs_r=lambda f: f["r"].abs())
    picked["metric"] = pd.Categorical(picked["metric"], categories=metric_order)
    picked = picked.sort_values(["metric", "abs_r", "category"], ascending=[True, False, True])
    picked["rank"] = picked.groupby("metric", observed=True).cumcount() + 1
    picked = picked[picked["rank"] <= k]
    out = picked[["metric", "rank", "category", "r", p_column]].reset_index(drop=True)
    out = out.rename(columns={p_column: "p"}).astype({"metric": object})
    out.attrs.update(n_significant=counts, adjusted=adjust)
    return out
