"""A dataset is a folder: the book, the command line and a user's script read every input of
one study from it.

The layout (``book/extending.md``, "Your own data") asks for three things:

* ``collection.tsv`` — ``docid<TAB>text``, one passage a line (:mod:`rankbias.collection`);
* ``queries.tsv`` — ``qid<TAB>query``; with ``qrels.txt`` (TREC qrels, may be absent: then
  no effectiveness) the folder's one query set, called ``queries``;
* ``runs/*.run`` — TREC runs, one per system; the file's name without ``.run`` is the
  system's name.

Everything else is optional and declared in ``dataset.toml`` beside them (TOML, read with
the standard library's ``tomllib``; every path relative to the folder)::

    name = "my-study"                    # the folder's name otherwise
    description = "One paragraph (Markdown) shown where the book describes the data."
    metadata = "passages.tsv"            # docid + columns of your own (header line)
    rankers = "rankbias.retrieval"       # the runs are this module's systems (testbed only):
                                         # a chapter may rerun them on a changed collection

    [[systems]]                          # order and display names (all runs, if given)
    run = "bm25"                         # runs/bm25.run
    label = "BM25"
    description = "BM25, k1 = 0.9, b = 0.4"

    [[query_sets]]                       # replaces the default set when given
    name = "gender-neutral"
    queries = "queries.tsv"
    qrels = "qrels.txt"                  # optional
    [[query_sets]]
    name = "bias-sensitive"
    queries = "queries_sensitive.tsv"    # qid<TAB>query, or a QID<TAB>Query<TAB>… header
    qrels = "qrels_sensitive.txt"

    [word_lists]                         # the package's own list is always there, as "rankbias"
    default = "rekabsaz2021"             # the list the chapters use; "rankbias" otherwise
    rekabsaz2020 = "wordlists/gender_specific.txt"
    rekabsaz2021 = "wordlists/gender_representative.txt"

    [files]                              # inputs some chapters need (a missing one: the
    polarisation = "polarisation.tsv"    # chapter's section says what it would need)
    perspectives = "perspectives.tsv"
    responses = "responses.csv"
    counterfactual = "counterfactual"    # a folder: collection.tsv and runs/*.run

A query may be in several sets (MS MARCO's QS1 and QS2 share queries).  A set that no run
ranks is set aside with a note (``Dataset.notes``).  A folder that does not hold together — a
manifest naming a missing file, a run with queries in no query set — is refused by
:func:`load_dataset` with one :class:`~rankbias.errors.InputError` naming the file and what to
fix, before any chapter runs (``rankbias data check DIR`` says the same).
"""

from __future__ import annotations

import hashlib
import json
import os
import tomllib
from dataclasses import dataclass, field, replace
from functools import cached_property
from pathlib import Path

import numpy as np
import pandas as pd

from rankbias.errors import InputError

__all__ = [
    "MANIFEST",
    "BUILTIN_WORD_LIST",
    "FILE_ROLES",
    "Dataset",
    "QuerySet",
    "dataset_dir",
    "load_dataset",
]

MANIFEST = "dataset.toml"
#: The name under which every dataset offers the package's own female/male pair list.
BUILTIN_WORD_LIST = "rankbias"
#: The optional inputs a manifest's ``[files]`` may name, and what each is.
FILE_ROLES = {
    "polarisation": "polarisation scores of documents (qid, docid, score; TSV with a header)",
    "perspectives": "perspective documents per query (qid, docid, perspective; TSV with a header)",
    "responses": "study responses (CSV with a header)",
    "counterfactual": "a folder with the counterfactual collection.tsv and its runs/*.run",
    "groups": "document groups (docid, group; TSV with a header)",
    "embeddings": "document embeddings (.npy) with their docids (.txt, one per line) beside",
}
_TOP_KEYS = {
    "name",
    "description",
    "metadata",
    "rankers",
    "systems",
    "query_sets",
    "word_lists",
    "files",
}
#: What ``rankers`` may say: the runs are this module's systems on the folder's own collection
#: and queries, so a chapter may run them again on a changed collection (the testbed's case).
RANKERS = "rankbias.retrieval"
_DEFAULT_QUERY_SET = "queries"


@dataclass(frozen=True)
class QuerySet:
    """One query set: its queries (``qid``, ``query`` and any further columns) and, when the
    folder has them, its judgements (``qid``, ``docid``, ``relevance``)."""

    name: str
    queries: pd.DataFrame
    qrels: pd.DataFrame | None
    source: str  #: the queries file, as the manifest names it

    @property
    def qids(self) -> pd.Series:
        return self.queries["qid"]

    @property
    def judged(self) -> bool:
        return self.qrels is not None and len(self.qrels) > 0


@dataclass(frozen=True)
class Dataset:
    """A dataset folder, read and checked by :func:`load_dataset`."""

    path: Path
    name: str
    description: str
    systems: tuple[str, ...]  #: in display order
    labels: dict[str, str]  #: system → how the book names it
    system_descriptions: dict[str, str]
    query_sets: dict[str, QuerySet]  #: the sets some run ranks, in the manifest's order
    unranked_sets: dict[str, QuerySet]  #: sets no run ranks (each named in ``notes``)
    word_lists: dict[str, Path | None]  #: name → file (``None``: the package's own list)
    default_word_list: str
    files: dict[str, Path]  #: optional inputs by role (:data:`FILE_ROLES`)
    metadata_file: Path | None
    rankers: str | None = None  #: :data:`RANKERS` when the runs are the package's own systems
    manifest: dict = field(default_factory=dict)  #: the parsed dataset.toml ({} without one)
    notes: tuple[str, ...] = ()  #: what reading the folder noticed and counted

    # ---- files -------------------------------------------------------------------------
    @property
    def collection_file(self) -> Path:
        return self.path / "collection.tsv"

    def has(self, role: str) -> bool:
        """Whether the folder offers the optional input ``role`` (:data:`FILE_ROLES`)."""
        if role not in FILE_ROLES:
            raise ValueError(f"role: expected one of {', '.join(FILE_ROLES)}, found {role!r}")
        return role in self.files

    def file(self, role: str) -> Path:
        if not self.has(role):
            raise InputError(
                f"{self.path}: the dataset has no {role} input ({FILE_ROLES[role]}); name one "
                f"under [files] in {MANIFEST}"
            )
        return self.files[role]

    # ---- systems and runs ----------------------------------------------------------------
    def label(self, system: str) -> str:
        return self.labels.get(system, system)

    def run(self, system: str):
        from rankbias.runs import read_run

        if system not in self.systems:
            raise InputError(
                f"{self.path}: no system {system!r}; expected one of {', '.join(self.systems)}"
            )
        return read_run(self.path / "runs" / f"{system}.run", name=system)

    def runs(self) -> dict:
        """Every system's run, by name, in display order."""
        return {name: self.run(name) for name in self.systems}

    # ---- queries ---------------------------------------------------------------------------
    @property
    def queries(self) -> pd.DataFrame:
        """Every query of every set (``qid``, ``query``, ``query_set``; a query in two sets is
        two rows)."""
        return pd.concat(
            [
                s.queries[["qid", "query"]].assign(query_set=s.name)
                for s in self.query_sets.values()
            ],
            ignore_index=True,
        )

    @property
    def qrels(self) -> pd.DataFrame:
        """The judgements of every set (empty when the folder has none)."""
        parts = [s.qrels for s in self.query_sets.values() if s.qrels is not None]
        if not parts:
            return pd.DataFrame({"qid": [], "docid": [], "relevance": []})
        return pd.concat(parts, ignore_index=True)

    @property
    def judged_sets(self) -> list[str]:
        return [name for name, s in self.query_sets.items() if s.judged]

    # ---- documents ---------------------------------------------------------------------------
    @cached_property
    def collection(self) -> pd.DataFrame:
        """The whole collection in memory (``docid``, ``text``): for small folders; a chapter
        that needs a few passages of a large one uses :meth:`texts`."""
        return _read_collection(self.collection_file)

    @cached_property
    def metadata(self) -> pd.DataFrame | None:
        """The folder's document metadata (``docid`` and its own columns), or ``None``."""
        if self.metadata_file is None:
            return None
        return pd.read_csv(self.metadata_file, sep="\t", dtype=str, keep_default_na=False)

    def texts(self, docids) -> pd.Series:
        """The text of each docid asked for (a Series indexed by docid, in the order asked); a
        docid the collection lacks is an error.  A large collection is read once per folder:
        the texts of every run's first :data:`TEXT_DEPTH` documents, and of any other docid
        asked for, are kept in ``<folder>/cache/texts-*.parquet`` for every later call and
        chapter."""
        wanted = list(dict.fromkeys(docids))
        if "collection" in self.__dict__:
            found = self.collection.set_index("docid")["text"]
        else:
            found = _cached_texts(self.collection_file, wanted, self._ranked_docids)
        if missing := [d for d in wanted if d not in found.index]:
            raise InputError(
                f"{self.collection_file}: no document {missing[0]!r} ({len(missing)} docid(s) "
                "missing); expected every ranked document in the collection"
            )
        return found.loc[wanted]

    def _ranked_docids(self) -> set[str]:
        """The docids of every run's first :data:`TEXT_DEPTH` documents of each query."""
        ranked: set[str] = set()
        for run in self.runs().values():
            ranked.update(run.cut(TEXT_DEPTH).docids)
        return ranked

    # ---- word lists and statistics -----------------------------------------------------------
    def lexicon(self, name: str | None = None):
        """The word list ``name`` (default: the dataset's default list) as a Lexicon."""
        from rankbias.lexicon import default_lexicon, read_word_list

        name = self.default_word_list if name is None else name
        if name not in self.word_lists:
            raise InputError(
                f"{self.path}: no word list {name!r}; expected one of {', '.join(self.word_lists)}"
            )
        path = self.word_lists[name]
        return default_lexicon() if path is None else read_word_list(path)

    def stats(self, word_list: str | None = None, per_term: bool = False):
        """The collection's document statistics under a word list, counted once per folder,
        word list and tokenizer, and kept in ``<folder>/cache/stats`` (or in memory when the
        folder cannot be written) for every later call and chapter."""
        lexicon = self.lexicon(word_list)
        return _cached_stats(self.collection_file, lexicon, per_term)


# ---- reading a folder -------------------------------------------------------------------------
def dataset_dir(path: str | os.PathLike | None = None) -> Path:
    """The dataset folder: ``path``, else ``$RANKBIAS_DATA``, else ``$RANKBIAS_TESTBED``, else
    ``data/build/wikisample`` under the current directory or a parent."""
    if path is None:
        path = os.environ.get("RANKBIAS_DATA") or os.environ.get("RANKBIAS_TESTBED")
    if path is not None:
        found = Path(path).expanduser()
    else:
        here = Path.cwd().resolve()
        candidates = [p / "data" / "build" / "wikisample" for p in (here, *here.parents)]
        found = next((c for c in candidates if c.exists()), candidates[0])
    if not found.is_dir():
        raise InputError(
            f"{found}: no such folder; expected a dataset folder (collection.tsv, queries.tsv, "
            "runs/*.run), or `make data` to build the embedded testbed"
        )
    return found


def _relative(root: Path, value, key: str, *, folder: bool = False) -> Path:
    if not isinstance(value, str) or not value.strip():
        raise InputError(f"{root / MANIFEST}: {key}: expected a path (a string), found {value!r}")
    path = (root / value).resolve()
    ok = path.is_dir() if folder else path.is_file()
    if not ok:
        kind = "folder" if folder else "file"
        raise InputError(
            f"{root / MANIFEST}: {key} names {value!r}, but {path} is no {kind}; "
            "expected a path relative to the dataset folder"
        )
    return path


def _read_manifest(root: Path) -> dict:
    path = root / MANIFEST
    if not path.exists():
        return {}
    try:
        manifest = tomllib.loads(path.read_text("utf-8"))
    except (tomllib.TOMLDecodeError, UnicodeDecodeError) as exc:
        raise InputError(
            f"{path}: not valid TOML ({exc}); expected the format of "
            "rankbias.dataset's documentation"
        ) from None
    if unknown := sorted(set(manifest) - _TOP_KEYS):
        raise InputError(
            f"{path}: unknown key(s) {', '.join(unknown)}; expected some of "
            f"{', '.join(sorted(_TOP_KEYS))}"
        )
    return manifest


def _table(value, key: str, where: Path) -> dict:
    if not isinstance(value, dict):
        raise InputError(f"{where}: {key}: expected a table, found {type(value).__name__}")
    return value


def _list_of_tables(value, key: str, where: Path) -> list[dict]:
    if not isinstance(value, list) or not all(isinstance(v, dict) for v in value):
        raise InputError(f"{where}: {key}: expected an array of tables ([[{key}]])")
    return value


def _read_queries(path: Path):
    from rankbias.data.public import read_query_tsv

    return read_query_tsv(path)


def _query_sets(root: Path, manifest: dict) -> dict[str, QuerySet]:
    from rankbias.runs import read_qrels

    where = root / MANIFEST
    if "query_sets" in manifest:
        declared = _list_of_tables(manifest["query_sets"], "query_sets", where)
    else:
        if not (root / "queries.tsv").is_file():
            raise InputError(f"{root}: queries.tsv missing; expected qid<TAB>query lines")
        declared = [{"name": _DEFAULT_QUERY_SET, "queries": "queries.tsv"}]
        if (root / "qrels.txt").is_file():
            declared[0]["qrels"] = "qrels.txt"
    if not declared:
        raise InputError(f"{where}: query_sets is empty; expected at least one query set")
    sets: dict[str, QuerySet] = {}
    for i, item in enumerate(declared, 1):
        if unknown := sorted(set(item) - {"name", "queries", "qrels"}):
            raise InputError(
                f"{where}: query set {i}: unknown key(s) {', '.join(unknown)}; "
                "expected name, queries, qrels"
            )
        name = item.get("name")
        if not isinstance(name, str) or not name.strip() or name in sets:
            raise InputError(
                f"{where}: query set {i}: expected a new, non-empty name, found {name!r}"
            )
        queries = _read_queries(_relative(root, item.get("queries"), f"query set {name!r} queries"))
        qrels = None
        if "qrels" in item:
            qrels_path = _relative(root, item["qrels"], f"query set {name!r} qrels")
            qrels = read_qrels(qrels_path)
            qrels = qrels[qrels["qid"].isin(set(queries["qid"]))].reset_index(drop=True)
        sets[name] = QuerySet(name, queries, qrels, str(item.get("queries")))
    return sets


def _systems(root: Path, manifest: dict) -> tuple[tuple[str, ...], dict, dict]:
    runs_dir = root / "runs"
    found = (
        sorted(p.name.removesuffix(".run") for p in runs_dir.glob("*.run"))
        if runs_dir.is_dir()
        else []
    )
    if not found:
        raise InputError(f"{runs_dir}: no run files; expected runs/<system>.run (TREC run format)")
    labels: dict[str, str] = {}
    descriptions: dict[str, str] = {}
    order: list[str] = []
    where = root / MANIFEST
    for i, item in enumerate(_list_of_tables(manifest.get("systems", []), "systems", where), 1):
        if unknown := sorted(set(item) - {"run", "label", "description"}):
            raise InputError(
                f"{where}: system {i}: unknown key(s) {', '.join(unknown)}; "
                "expected run, label, description"
            )
        run = item.get("run")
        if run not in found:
            raise InputError(
                f"{where}: system {i} names run {run!r}, but runs/{run}.run does not exist; "
                f"expected one of {', '.join(found)}"
            )
        if run in order:
            raise InputError(f"{where}: system {run!r} is listed twice; expected each once")
        order.append(run)
        labels[run] = str(item.get("label", run))
        descriptions[run] = str(item.get("description", ""))
    if order and (unlisted := [s for s in found if s not in order]):
        raise InputError(
            f"{where}: [[systems]] lists {len(order)} run(s) but runs/ also holds "
            f"{', '.join(unlisted)}; expected every run listed (or no [[systems]] at all)"
        )
    return tuple(order or found), labels, descriptions


def _word_lists(root: Path, manifest: dict) -> tuple[dict[str, Path | None], str]:
    where = root / MANIFEST
    lists: dict[str, Path | None] = {BUILTIN_WORD_LIST: None}
    declared = dict(_table(manifest.get("word_lists", {}), "word_lists", where))
    default = declared.pop("default", BUILTIN_WORD_LIST)
    for name, value in declared.items():
        if name == BUILTIN_WORD_LIST:
            raise InputError(
                f"{where}: word_lists: {name!r} is the package's own list; give yours another name"
            )
        lists[name] = _relative(root, value, f"word_lists.{name}")
    if default not in lists:
        raise InputError(
            f"{where}: word_lists.default is {default!r}; expected one of {', '.join(lists)}"
        )
    return lists, default


def _files(root: Path, manifest: dict) -> dict[str, Path]:
    where = root / MANIFEST
    files = {}
    for role, value in _table(manifest.get("files", {}), "files", where).items():
        if role not in FILE_ROLES:
            raise InputError(
                f"{where}: files: unknown input {role!r}; expected some of {', '.join(FILE_ROLES)}"
            )
        files[role] = _relative(root, value, f"files.{role}", folder=role == "counterfactual")
    return files


def _run_queries(root: Path, systems, sets: dict[str, QuerySet]) -> dict[str, set[str]]:
    """The queries each run ranks, each of them in a query set."""
    from rankbias.runs import read_run

    known = {qid for s in sets.values() for qid in s.qids}
    ranked = {}
    for system in systems:
        path = root / "runs" / f"{system}.run"
        qids = set(read_run(path, name=system).qids)
        if stray := sorted(qids - known):
            shown = ", ".join(stray[:5]) + (", …" if len(stray) > 5 else "")
            raise InputError(
                f"{path}: {len(stray)} quer{'y' if len(stray) == 1 else 'ies'} in no query set "
                f"({shown}); expected every query of a run in one of the query sets "
                f"({', '.join(s.source for s in sets.values())}): add them there or remove "
                "them from the run"
            )
        ranked[system] = qids
    return ranked


def _studied(sets: dict[str, QuerySet], ranked: dict[str, set[str]]):
    """The query sets some run ranks, those no run ranks, and notes: each set set aside, and
    each run's count of the studied queries it ranks nothing for."""
    every = set().union(*ranked.values())
    studied, aside, notes = {}, {}, []
    for name, query_set in sets.items():
        if every.isdisjoint(query_set.qids):
            aside[name] = query_set
            notes.append(
                f"query set {name!r} ({len(query_set.queries):,} queries): no run ranks "
                "any of its queries; the chapters study the other sets"
            )
        else:
            studied[name] = query_set
    if not studied:
        raise InputError(
            "the runs rank no query of any query set; expected runs of the folder's queries"
        )
    known = {qid for s in studied.values() for qid in s.qids}
    for system, qids in ranked.items():
        if lacking := len(known - qids):
            notes.append(
                f"runs/{system}.run: retrieves nothing for {lacking:,} of {len(known):,} queries"
            )
    return studied, aside, notes


def load_dataset(path: str | os.PathLike | None = None, *, check_runs: bool = True) -> Dataset:
    """Read and check the dataset folder (found by :func:`dataset_dir`)."""
    root = dataset_dir(path).resolve()
    if not (root / "collection.tsv").is_file():
        raise InputError(f"{root}: collection.tsv missing; expected docid<TAB>text lines")
    manifest = _read_manifest(root)
    where = root / MANIFEST
    sets = _query_sets(root, manifest)
    systems, labels, descriptions = _systems(root, manifest)
    word_lists, default = _word_lists(root, manifest)
    files = _files(root, manifest)
    metadata = _relative(root, manifest["metadata"], "metadata") if "metadata" in manifest else None
    notes: list[str] = []
    aside: dict[str, QuerySet] = {}
    if check_runs:
        sets, aside, notes = _studied(sets, _run_queries(root, systems, sets))
    rankers = manifest.get("rankers")
    if rankers is not None:
        from rankbias.retrieval import SYSTEMS

        if rankers != RANKERS:
            raise InputError(f"{where}: rankers is {rankers!r}; expected {RANKERS!r} or no key")
        if others := [s for s in systems if s not in SYSTEMS]:
            raise InputError(
                f"{where}: rankers = {RANKERS!r}, but runs {', '.join(others)} are not its "
                f"systems ({', '.join(SYSTEMS)}); expected its runs only, or no rankers key"
            )
    for key in ("name", "description"):
        if key in manifest and not isinstance(manifest[key], str):
            raise InputError(f"{where}: {key}: expected a string, found {manifest[key]!r}")
    return Dataset(
        path=root,
        name=manifest.get("name", root.name),
        description=manifest.get("description", ""),
        systems=systems,
        labels={s: labels.get(s, s) for s in systems},
        system_descriptions={s: descriptions.get(s, "") for s in systems},
        query_sets=sets,
        unranked_sets=aside,
        word_lists=word_lists,
        default_word_list=default,
        files=files,
        metadata_file=metadata,
        rankers=rankers,
        manifest=manifest,
        notes=tuple(notes),
    )


# ---- the collection in memory, and its statistics cached --------------------------------------
def _read_collection(path: Path) -> pd.DataFrame:
    from rankbias.collection import iter_documents

    docids, texts = [], []
    for docid, text in iter_documents(path):
        docids.append(docid)
        texts.append(text)
    return pd.DataFrame({"docid": docids, "text": texts})


_MEMORY: dict[str, object] = {}
#: the depth of every run whose documents' texts :meth:`Dataset.texts` keeps (the chapters
#: show and embed lists to rank 20 at most)
TEXT_DEPTH = 20


def _cached_texts(collection: Path, wanted: list[str], ranked) -> pd.Series:
    """Texts by docid from the folder's store, read from the collection (once for the runs'
    documents, ``ranked()``, and again only for a docid the store lacks)."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    from rankbias.collection import iter_documents

    key = _collection_key(collection, "texts")
    store = collection.parent / "cache" / f"texts-{key}.parquet"
    found = _MEMORY.get(key)
    if found is None and store.exists():
        table = pq.read_table(store)
        found = pd.Series(table["text"].to_pylist(), index=table["docid"].to_pylist(), dtype=object)
    if found is None:
        found = pd.Series(dtype=object)
    missing = set(wanted) - set(found.index)
    if missing:
        keep = missing | (set() if len(found) else ranked())
        read = {docid: text for docid, text in iter_documents(collection) if docid in keep}
        found = pd.concat([found, pd.Series(read, dtype=object)])
        table = pa.table({"docid": list(found.index), "text": list(found.to_numpy())})

        _keep(store, lambda handle: pq.write_table(table, handle), "texts not cached", "read")
    _MEMORY[key] = found
    return found


def _collection_key(collection: Path, *what) -> str:
    """A cache key of the collection file as it stands (path, size, time) and ``what``."""
    info = collection.stat()
    text = "|".join(map(str, (collection.resolve(), info.st_size, info.st_mtime_ns, *what)))
    return hashlib.sha256(text.encode("utf-8")).hexdigest()[:20]


def _keep(path: Path, write, what: str, again: str) -> None:
    """``write(handle)`` into ``path`` atomically; a folder we may not write is a warning (the
    result stays in this process's memory)."""
    from rankbias.outputs import atomic_open

    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        with atomic_open(path, "wb") as handle:
            write(handle)
    except OSError as exc:
        import warnings

        warnings.warn(
            f"{path}: {what} ({exc.strerror}); they are {again} again in the next process",
            stacklevel=4,
        )


def _stats_key(collection: Path, lexicon, per_term: bool) -> str:
    terms = json.dumps(sorted(lexicon.term_to_group.items()) + [list(lexicon.groups)])
    return _collection_key(collection, terms, per_term, "v2")


def _stats_arrays(stats) -> dict:
    """The arrays of ``stats`` as the folder's cache stores them (``np.savez``)."""
    import pyarrow as pa

    from rankbias.text import arrow_docids

    docids = arrow_docids(stats).cast(pa.large_string())  # as UTF-8 bytes and offsets
    offsets = np.frombuffer(docids.buffers()[1], dtype=np.int64)[
        docids.offset : docids.offset + len(docids) + 1
    ]
    arrays = {
        "docid_bytes": np.frombuffer(docids.buffers()[2], np.uint8)[offsets[0] : offsets[-1]],
        "docid_offsets": offsets - offsets[0],
        "lengths": stats.lengths,
        "group_counts": stats.group_counts,
        "groups": np.asarray(stats.groups, dtype=str),
        "terms": np.asarray(stats.terms, dtype=str),
        "term_group": stats.term_group,
        "tokenizer": np.asarray(stats.tokenizer),
    }
    if stats.term_counts is not None:
        counts = stats.term_counts.tocsr()
        arrays |= {
            "tc_data": counts.data,
            "tc_indices": counts.indices,
            "tc_indptr": counts.indptr,
            "tc_shape": np.asarray(counts.shape),
        }
    return arrays


def _load_stats(path: Path):
    import pyarrow as pa
    import scipy.sparse as sp

    from rankbias.text import DocStats

    with np.load(path, allow_pickle=False) as raw:
        offsets = raw["docid_offsets"]
        docids = pa.LargeStringArray.from_buffers(
            len(offsets) - 1, pa.py_buffer(offsets), pa.py_buffer(raw["docid_bytes"])
        ).cast(pa.string())  # the collection's docids, made Python strings only if read
        counts = None
        if "tc_data" in raw:
            counts = sp.csr_matrix(
                (raw["tc_data"], raw["tc_indices"], raw["tc_indptr"]),
                shape=tuple(int(n) for n in raw["tc_shape"]),
            )
        return DocStats(
            docids=docids,
            lengths=raw["lengths"],
            group_counts=raw["group_counts"],
            groups=tuple(str(g) for g in raw["groups"]),
            terms=tuple(str(t) for t in raw["terms"]),
            term_group=raw["term_group"],
            term_counts=counts,
            tokenizer=str(raw["tokenizer"]),
        )


def _cached_stats(collection: Path, lexicon, per_term: bool):
    from rankbias.collection import read_collection_stats

    if not per_term:  # the per-term statistics hold these: no second count
        key = _stats_key(collection, lexicon, True)
        cache = collection.parent / "cache" / "stats" / f"{key}.npz"
        if key in _MEMORY or cache.exists():
            return replace(_cached_stats(collection, lexicon, True), term_counts=None)
    key = _stats_key(collection, lexicon, per_term)
    if key in _MEMORY:
        return _MEMORY[key]
    cache = collection.parent / "cache" / "stats" / f"{key}.npz"
    if cache.exists():
        stats = _load_stats(cache)
    else:
        stats = read_collection_stats(collection, lexicon, per_term=per_term)
        arrays = _stats_arrays(stats)
        _keep(cache, lambda handle: np.savez(handle, **arrays), "statistics not cached", "counted")
    _MEMORY[key] = stats
    return stats
