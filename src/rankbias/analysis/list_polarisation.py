"""Polarisation scores of ranked lists, and Duo per (run, query) from them.  Ziems et al.
(2024) §4.2 fit Duo's principal axis on the query's perspective documents (``fit_sets``: query
→ docids); without them, each list's axis is fitted on its own top ``cutoff`` documents, the
book's alternative (the book's Conventions page, "Duo")."""

from __future__ import annotations

import hashlib
import warnings
from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path

import numpy as np
import pandas as pd

from rankbias.errors import expect_count, expect_items, expect_type
from rankbias.metrics.duo import polarisation_scores
from rankbias.metrics.validation import as_array
from rankbias.runs import Run
from rankbias.scoring import score_runs

__all__ = ["duo_per_query", "list_polarisation", "passage_embeddings", "run_polarisation"]


class _DenseModelOnDemand:
    """Stands in for the dense model; loads it only if something has to be encoded."""

    def encode(self, texts, **options):
        from rankbias.retrieval import load_dense_model

        with warnings.catch_warnings():  # no tqdm note that Jupyter lacks ipywidgets on stderr
            warnings.filterwarnings("ignore", message="IProgress not found")
            from transformers.utils import logging as transformers_logging

            shown = transformers_logging.is_progress_bar_enabled()
            transformers_logging.disable_progress_bar()  # nor a "Loading weights" bar
            try:
                model = load_dense_model()
                return model.encode(texts, **{"show_progress_bar": False, **options})
            finally:
                if shown:
                    transformers_logging.enable_progress_bar()


def passage_embeddings(data, docids: Iterable[str]) -> tuple[np.ndarray, pd.Index]:
    """``(embeddings, docids)`` of the documents ``docids`` of the dataset ``data``
    (a :class:`rankbias.dataset.Dataset`), each once, sorted by docid.

    With an ``embeddings`` input in the folder (``[files]`` of ``dataset.toml``: an ``.npy``
    table with its docids, one a line, in the ``.txt`` file of the same name beside it) the
    rows are read from it, memory-mapped.  Otherwise only these documents' texts are read
    (``data.texts``) and embedded by the dense system's model (all-MiniLM-L6-v2) as unit
    vectors, kept under ``<folder>/cache`` by text: the model is loaded only if the cache lacks
    some of them, and a collection of millions of passages is never embedded whole.
    """
    if not all(hasattr(data, name) for name in ("texts", "path", "has")):
        expected = "a dataset (rankbias.dataset.load_dataset)"
        raise TypeError(f"data: expected {expected}, found {data!r:.60}")
    if isinstance(docids, str):
        raise TypeError(f"docids: expected a list of docids, found the string {docids!r}")
    wanted = pd.Index(sorted(set(docids)), dtype=object)
    if data.has("embeddings"):
        return _stored_embeddings(data.file("embeddings"), wanted), wanted
    texts = data.texts(wanted).tolist()
    vectors = _stored_vectors(texts, data.path / "cache")
    return np.asarray(vectors, dtype=np.float64), wanted


def _stored_vectors(texts: list[str], cache_dir: Path) -> np.ndarray:
    """The unit vectors of ``texts`` from the folder's store of passage vectors
    (``<cache_dir>/passage-vectors-<model>.npz``: one row per distinct text, keyed by the
    text's sha256), shared by every chapter; the texts it lacks are encoded, once, and added."""
    from rankbias.outputs import atomic_open
    from rankbias.retrieval import DENSE_MODEL

    store = cache_dir / f"passage-vectors-{DENSE_MODEL}.npz"
    keys = [hashlib.sha256(text.encode("utf-8")).hexdigest() for text in texts]
    known_keys, known = np.empty(0, dtype="<U64"), None
    if store.exists():
        with np.load(store) as saved:
            known_keys, known = saved["keys"], saved["vectors"]
    positions = pd.Index(known_keys).get_indexer(keys)
    missing = dict.fromkeys(k for k, p in zip(keys, positions, strict=True) if p < 0)
    if missing:
        text_of = dict(zip(keys, texts, strict=True))
        new = (
            _DenseModelOnDemand()
            .encode(
                [text_of[k] for k in missing],
                batch_size=64,
                normalize_embeddings=True,
                convert_to_numpy=True,
            )
            .astype(np.float32)
        )
        known_keys = np.concatenate([known_keys, np.asarray(list(missing), dtype="<U64")])
        known = new if known is None else np.concatenate([known, new])
        cache_dir.mkdir(parents=True, exist_ok=True)
        with atomic_open(store, "wb") as handle:  # a unique temporary file, renamed into place
            np.savez(handle, keys=known_keys, vectors=known)
        positions = pd.Index(known_keys).get_indexer(keys)
    if known is None:  # no texts at all
        return np.empty((0, 0), dtype=np.float32)
    return known[positions]


def _stored_embeddings(path, wanted: pd.Index) -> np.ndarray:
    """The rows of the ``.npy`` table ``path`` for the docids ``wanted`` (its docids in the
    ``.txt`` beside it); a docid without a row is a ValueError naming the file."""
    listing = path.with_suffix(".txt")
    if not listing.is_file():
        raise ValueError(f"{path}: no {listing.name} beside it; expected its docids, one a line")
    table = np.load(path, mmap_mode="r")
    stored = pd.Index(listing.read_text("utf-8").split("\n")).str.strip()
    stored = stored[stored != ""]
    if not stored.is_unique:
        raise ValueError(f"{listing}: a docid is listed twice; expected each once")
    if table.ndim != 2 or len(table) != len(stored):
        raise ValueError(
            f"{path}: shape {table.shape} for {len(stored)} docids in {listing.name}; "
            "expected one row per docid"
        )
    positions = stored.get_indexer(wanted)
    if (positions < 0).any():
        missing = wanted[int(np.argmax(positions < 0))]
        raise ValueError(f"{listing}: no docid {missing!r}; expected every ranked document")
    return np.asarray(table[positions], dtype=np.float64)


def _positions(wanted: Sequence[str], docids: pd.Index, where: str) -> np.ndarray:
    positions = docids.get_indexer(wanted)
    if (positions < 0).any():
        missing = wanted[int(np.argmax(positions < 0))]
        raise ValueError(
            f"{where}: document {missing!r} has no embedding; "
            "expected every ranked document in the collection"
        )
    return positions


def list_polarisation(
    ranked: Sequence[str],
    embeddings: np.ndarray,
    docids: pd.Index,
    *,
    where: str = "list",
    fit: Sequence[str] | None = None,
) -> np.ndarray:
    """Polarisation scores of the documents ``ranked``, in rank order: one-component PCA fitted
    on the documents ``fit`` (the query's perspective documents, Ziems et al. (2024) §4.2) or,
    by default, on the list's own embeddings (``embeddings[i]`` embeds ``docids[i]``); a
    document without an embedding is a ValueError naming ``where``."""
    ranked = expect_items(ranked, where, "a list of docids")
    embeddings = as_array(embeddings, "embeddings", 2)
    expect_type(docids, "docids", pd.Index, "a pandas Index of the embeddings' docids")
    if len(set(ranked)) < len(ranked):
        raise ValueError(f"{where}: a document is ranked twice in {ranked}; expected each once")
    if len(embeddings) != len(docids):
        raise ValueError(
            f"embeddings: {len(embeddings)} rows for {len(docids)} docids; expected one each"
        )
    ranked_rows = embeddings[_positions(ranked, docids, where)]
    if fit is None:
        return polarisation_scores(ranked_rows)
    fit = expect_items(fit, "fit", "a list of docids")
    fit_rows = embeddings[_positions(fit, docids, f"{where} (fit set)")]
    return polarisation_scores(ranked_rows, fit_embeddings=fit_rows)


def run_polarisation(
    run: Run,
    qids: Sequence[str],
    embeddings: np.ndarray,
    docids: pd.Index,
    *,
    cutoff: int,
    min_docs: int = 3,
    fit_sets: Mapping[str, Sequence[str]] | None = None,
) -> pd.DataFrame:
    """Polarisation scores ``qid, docid, score`` of the top ``cutoff`` documents of each of
    ``run``'s lists, one PCA per list: fitted on ``fit_sets[qid]`` (the query's perspective
    documents) or, without ``fit_sets``, on the list itself.  A query the run lacks, whose list
    has fewer than ``min_docs`` documents (with one or two, Duo is 0/0), or that has no fit set
    when ``fit_sets`` is given, is not scored but listed in ``attrs["skipped"]`` as a record
    ``run, qid, n_docs, reason``."""
    expect_count(cutoff, "cutoff")
    expect_count(min_docs, "min_docs")
    if isinstance(qids, str):
        raise TypeError(f"qids: expected a list of query ids, found the string {qids!r}")
    if fit_sets is not None:
        expect_type(fit_sets, "fit_sets", Mapping, "a mapping query id -> perspective docids")
    present = set(run.qids.tolist())
    frames, skipped = [], []
    for qid in qids:
        ranked = run.ranked(qid)[:cutoff] if qid in present else ()
        reason = None
        if qid not in present:
            reason = "no ranked list"
        elif len(ranked) < min_docs:
            reason = f"fewer than {min_docs} documents"
        elif fit_sets is not None and not len(fit_sets.get(qid, ())):
            reason = "no perspective documents"
        if reason:
            skipped.append({"run": run.name, "qid": qid, "n_docs": len(ranked), "reason": reason})
            continue
        scores = list_polarisation(
            ranked,
            embeddings,
            docids,
            where=f"run {run.name!r}, query {qid}",
            fit=None if fit_sets is None else list(fit_sets[qid]),
        )
        frames.append(pd.DataFrame({"qid": qid, "docid": ranked, "score": scores}))
    columns = ["qid", "docid", "score"]
    table = pd.concat(frames, ignore_index=True) if frames else pd.DataFrame(columns=columns)
    table.attrs["skipped"] = skipped
    return table


def duo_per_query(
    runs: Mapping[str, Run],
    qids: Sequence[str],
    embeddings: np.ndarray,
    docids: pd.Index,
    *,
    cutoff: int = 10,
    metrics: Sequence[str] = ("duo",),
    min_docs: int = 3,
    fit_sets: Mapping[str, Sequence[str]] | None = None,
) -> pd.DataFrame:
    """Duo-family ``metrics`` (e.g. ``"duo(variance=global)"``) at ``cutoff`` of each run (name
    → :class:`~rankbias.runs.Run`) and query, on :func:`run_polarisation`'s scores (axis fitted
    on ``fit_sets[qid]``, the paper's way, or on each list), as ``score_runs``' tidy table;
    queries not scored are in ``attrs["skipped"]``."""
    expect_type(runs, "runs", Mapping, "a mapping name -> Run")
    if isinstance(metrics, str):
        raise TypeError(f"metrics: expected a list of measures, found {metrics!r}")
    frames, skipped = [], []
    for name, run in runs.items():
        polarisation = run_polarisation(
            run, qids, embeddings, docids, cutoff=cutoff, min_docs=min_docs, fit_sets=fit_sets
        )
        skipped.extend(polarisation.attrs["skipped"])
        scored = list(dict.fromkeys(polarisation["qid"]))
        if not scored:
            continue
        frames.append(
            score_runs(
                run.restrict(scored).cut(cutoff),
                metrics=list(metrics),
                cutoffs=[cutoff],
                polarisation=polarisation,
            ).assign(run=name)
        )
    columns = ["run", "qid", "metric", "cutoff", "value"]
    table = pd.concat(frames, ignore_index=True) if frames else pd.DataFrame(columns=columns)
    table.attrs = {"skipped": skipped}
    return table
