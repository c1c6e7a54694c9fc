"""TREC run and qrels files, validated, as arrays.

A *run* maps each query to a ranked list of documents.  On disk it is the TREC format, one
line per retrieved document::

    qid Q0 docid rank score tag

whitespace separated.  The order of a ranked list is **score descending, ties broken by docid
ascending** (METRICS.md §0); the rank column and the order of lines in the file are read and
validated but never trusted for ordering.

In memory a run is a :class:`Run`: the queries in ascending order and, in CSR style, one flat
array of document ids and one of scores, with ``offsets`` marking where each query's list
starts.  Cutting every list at ``k`` or turning the run into a tidy table is then a handful of
array operations, never a loop over documents.

Qrels use the TREC format ``qid iteration docid relevance``.
"""

from __future__ import annotations

import gzip
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pandas as pd

from rankbias.errors import InputError, located

__all__ = ["Run", "read_run", "write_run", "read_qrels", "write_qrels"]


def _open_text(path: Path):
    if path.suffix == ".gz":
        return gzip.open(path, "rt", encoding="utf-8", newline="")
    return open(path, encoding="utf-8", newline="")


@dataclass(frozen=True, eq=False)
class Run:
    """A ranked list per query.

    Attributes
    ----------
    name:
        The run's name (by default the file's stem), used as the ``run`` column of tidy tables.
    qids:
        Query ids, ascending (string order), shape ``(n_queries,)``.
    offsets:
        ``int64`` array of shape ``(n_queries + 1,)``; the list of query ``i`` occupies rows
        ``offsets[i]:offsets[i + 1]`` of ``docids`` and ``scores``.
    docids:
        Document ids (object array of ``str``), each query's list ordered by score descending
        and docid ascending.
    scores:
        ``float64`` retrieval scores aligned with ``docids``.
    """

    name: str
    qids: np.ndarray
    offsets: np.ndarray
    docids: np.ndarray
    scores: np.ndarray

    def __post_init__(self) -> None:
        n = len(self.qids)
        if self.offsets.shape != (n + 1,):
            raise ValueError(f"offsets must have shape ({n + 1},), found {self.offsets.shape}")
        if len(self.docids) != len(self.scores) or self.offsets[-1] != len(self.docids):
            raise ValueError("docids, scores and offsets[-1] must agree in length")

    # ---- construction ------------------------------------------------------------------
    @classmethod
    def from_frame(cls, frame: pd.DataFrame, name: str, order: str = "score") -> Run:
        """Build a run from a table with columns ``qid``, ``docid``, ``score``.

        ``order="score"`` (the default, METRICS.md §0): each query's list is sorted by score
        descending, then docid ascending, whatever the row order.  ``order="given"`` keeps the
        rows' own order within each query — what the released research scripts do with a run
        file's line order; use it only to reproduce them, and say so.  A docid repeated within
        a query is an error.
        """
        if order not in ("score", "given"):
            raise ValueError(f"order must be 'score' or 'given', found {order!r}")
        missing = {"qid", "docid", "score"} - set(frame.columns)
        if missing:
            raise InputError(f"run {name!r}: table lacks column(s) {sorted(missing)}")
        qid = frame["qid"].astype(str).to_numpy(dtype=object)
        docid = frame["docid"].astype(str).to_numpy(dtype=object)
        score = frame["score"].to_numpy(dtype=np.float64)
        if np.isnan(score).any():
            first = int(np.flatnonzero(np.isnan(score))[0])
            raise InputError(
                f"run {name!r}: query {qid[first]} document {docid[first]} has score NaN; "
                "expected a number"
            )
        if len(qid) == 0:
            empty = np.zeros(0, dtype=object)
            return cls(name, empty, np.zeros(1, dtype=np.int64), empty, np.zeros(0))
        # Sort keys as integer codes of the sorted unique ids: string order, integer speed.
        q_code, q_uniq = pd.factorize(qid, sort=True)
        d_code, _ = pd.factorize(docid, sort=True)
        if order == "score":
            # lexsort: last key is primary -> (qid asc, score desc, docid asc)
            rows = np.lexsort((d_code, -score, q_code))
        else:
            rows = np.argsort(q_code, kind="stable")  # queries grouped, row order kept
        qid, docid, score = qid[rows], docid[rows], score[rows]
        pair_key = pd.Series(q_code[rows].astype(np.int64) * (d_code.max() + 1) + d_code[rows])
        dup = pair_key.duplicated(keep=False).to_numpy()
        if dup.any():
            i = int(np.flatnonzero(dup)[0])
            count = int(pair_key.duplicated().sum())
            raise InputError(
                f"run {name!r}: document {docid[i]} appears more than once for query {qid[i]} "
                f"({count} duplicate row(s) in all); expected each document once per query"
            )
        counts = np.bincount(q_code, minlength=len(q_uniq))
        offsets = np.concatenate([[0], np.cumsum(counts)]).astype(np.int64)
        return cls(
            name=name,
            qids=np.asarray(q_uniq, dtype=object),
            offsets=offsets,
            docids=docid,
            scores=score,
        )

    # ---- access --------------------------------------------------------------------------
    def __len__(self) -> int:
        return len(self.qids)

    @property
    def list_lengths(self) -> np.ndarray:
        """Length of each query's ranked list."""
        return np.diff(self.offsets)

    def ranked(self, qid: str) -> np.ndarray:
        """The ranked docids of one query (a KeyError names the query if it is absent)."""
        i = np.searchsorted(self.qids, qid)
        if i == len(self.qids) or self.qids[i] != qid:
            raise KeyError(f"run {self.name!r} has no query {qid!r}")
        return self.docids[self.offsets[i] : self.offsets[i + 1]]

    def __iter__(self) -> Iterator[tuple[str, np.ndarray, np.ndarray]]:
        """Yield ``(qid, docids, scores)`` per query, in query order."""
        for i, q in enumerate(self.qids):
            a, b = self.offsets[i], self.offsets[i + 1]
            yield q, self.docids[a:b], self.scores[a:b]

    def ranks(self) -> np.ndarray:
        """1-based rank of every row, aligned with ``docids``."""
        counts = self.list_lengths
        starts = np.repeat(self.offsets[:-1], counts)
        return np.arange(len(self.docids), dtype=np.int64) - starts + 1

    def cut(self, k: int) -> Run:
        """The run with every list cut to its first ``k`` documents (shorter lists kept)."""
        if k < 1:
            raise ValueError(f"cutoff must be at least 1, found {k}")
        keep = self.ranks() <= k
        counts = np.minimum(self.list_lengths, k)
        offsets = np.concatenate([[0], np.cumsum(counts)]).astype(np.int64)
        return Run(self.name, self.qids, offsets, self.docids[keep], self.scores[keep])

    def restrict(self, qids) -> Run:
        """The run on a subset of its queries (queries it lacks are simply absent)."""
        wanted = np.isin(self.qids, np.asarray(list(qids), dtype=object))
        lengths = self.list_lengths[wanted]
        rows = np.repeat(wanted, self.list_lengths)
        offsets = np.concatenate([[0], np.cumsum(lengths)]).astype(np.int64)
        return Run(self.name, self.qids[wanted], offsets, self.docids[rows], self.scores[rows])

    def to_frame(self) -> pd.DataFrame:
        """Tidy table ``qid, docid, rank, score`` in ranked order."""
        return pd.DataFrame(
            {
                "qid": np.repeat(self.qids, self.list_lengths),
                "docid": self.docids,
                "rank": self.ranks(),
                "score": self.scores,
            }
        )

    def to_dict(self) -> dict[str, dict[str, float]]:
        """``{qid: {docid: score}}``, the shape ``ir_measures`` accepts."""
        return {q: dict(zip(d.tolist(), s.tolist(), strict=True)) for q, d, s in self}


# ---- TREC run files ----------------------------------------------------------------------
def read_run(path: str | Path, name: str | None = None, order: str = "score") -> Run:
    """Read a TREC run file (optionally gzipped) into a :class:`Run`.

    ``order="score"`` (default) orders each query's list by score descending, ties by docid
    ascending; ``order="file"`` keeps the file's line order, as the released NFaiRR and ARaB
    scripts do (the public neural runs have thousands of tied scores, so the two orders give
    different values at a cutoff).

    Each line must have six whitespace-separated fields ``qid Q0 docid rank score tag`` with
    an integer rank and a finite numeric score.  A malformed line, or a document listed twice
    for the same query, raises :class:`~rankbias.errors.InputError` naming the file and line.
    Blank lines are errors too: a run file has none, and one usually means a truncated file.

    Well-formed files are parsed in one vectorised pass; only when that pass finds a problem
    is the file re-read line by line to name the first offending line exactly.
    """
    path = Path(path)
    name = name or path.name.removesuffix(".gz").rsplit(".", 1)[0]
    frame = _parse_run_fast(path)
    if frame is None:
        frame = _parse_run_lines(path)  # raises with the file and line of the first problem
    if frame.empty:
        raise located(path, None, "the run file is empty; expected TREC run lines")
    if order not in ("score", "file"):
        raise ValueError(f"order must be 'score' or 'file', found {order!r}")
    return Run.from_frame(frame, name=name, order="score" if order == "score" else "given")


def _parse_run_fast(path: Path) -> pd.DataFrame | None:
    """``qid, docid, score`` of a well-formed run, or ``None`` if anything looks wrong."""
    if path.stat().st_size == 0:
        return pd.DataFrame(columns=["qid", "docid", "score"])
    try:
        table = pd.read_csv(
            path,
            sep=r"\s+",
            header=None,
            names=["qid", "q0", "docid", "rank", "score", "tag"],
            dtype=str,
            skip_blank_lines=False,
            keep_default_na=False,
            na_values=[],
            quoting=3,
            encoding="utf-8",
        )
    except (pd.errors.ParserError, UnicodeDecodeError, ValueError):
        return None
    if (table == "").to_numpy().any() or table.isna().to_numpy().any():
        return None  # a short or blank line
    rank = pd.to_numeric(table["rank"], errors="coerce")
    score = pd.to_numeric(table["score"], errors="coerce").to_numpy(dtype=np.float64)
    integral = rank.notna() & ~table["rank"].str.contains(r"[.eE]", regex=True)
    if not integral.all() or not np.isfinite(score).all():
        return None
    if table.duplicated(["qid", "docid"]).any():
        return None
    return pd.DataFrame({"qid": table["qid"], "docid": table["docid"], "score": score})


def _parse_run_lines(path: Path) -> pd.DataFrame:
    """The line-by-line reader: slow, but names the first bad line precisely."""
    qids: list[str] = []
    docids: list[str] = []
    scores: list[float] = []
    first_line: dict[tuple[str, str], int] = {}
    with _open_text(path) as handle:
        for lineno, line in enumerate(handle, start=1):
            fields = line.split()
            if len(fields) != 6:
                raise located(
                    path,
                    lineno,
                    f"found {len(fields)} field(s) {line.strip()[:80]!r}; expected 6: "
                    "qid Q0 docid rank score tag",
                )
            qid, _, docid, rank, score, _ = fields
            try:
                int(rank)
            except ValueError:
                raise located(
                    path, lineno, f"rank {rank!r} is not an integer; expected e.g. '1'"
                ) from None
            try:
                value = float(score)
            except ValueError:
                raise located(
                    path, lineno, f"score {score!r} is not a number; expected e.g. '12.5'"
                ) from None
            if not np.isfinite(value):
                raise located(path, lineno, f"score {score!r} is not finite; expected a number")
            key = (qid, docid)
            if key in first_line:
                raise located(
                    path,
                    lineno,
                    f"document {docid} already listed for query {qid} on line "
                    f"{first_line[key]}; expected each document once per query",
                )
            first_line[key] = lineno
            qids.append(qid)
            docids.append(docid)
            scores.append(value)
    return pd.DataFrame({"qid": qids, "docid": docids, "score": scores})


def write_run(path: str | Path, run: Run, tag: str | None = None) -> None:
    """Write a run in TREC format, ranks 1..n in the run's order, scores to 6 decimals.

    Scores are written with enough precision (``%.6f``) that re-reading gives the same order
    except where two scores differ by less than 5e-7; the writer refuses that case rather
    than let the order change silently.
    """
    path = Path(path)
    tag = tag or run.name
    frame = run.to_frame()
    rounded = np.round(frame["score"].to_numpy(), 6)
    same_q = frame["qid"].to_numpy()[1:] == frame["qid"].to_numpy()[:-1]
    collapsed = (
        same_q
        & (rounded[1:] == rounded[:-1])
        & (frame["score"].to_numpy()[1:] != frame["score"].to_numpy()[:-1])
    )
    docs = frame["docid"].to_numpy()
    reordered = collapsed & (docs[1:] < docs[:-1])
    if reordered.any():
        i = int(np.flatnonzero(reordered)[0])
        raise ValueError(
            f"run {run.name!r}: scores of {docs[i]} and {docs[i + 1]} (query "
            f"{frame['qid'].iloc[i]}) differ below 1e-6; writing them would change the order"
        )
    lines = (
        frame["qid"].astype(str)
        + " Q0 "
        + frame["docid"].astype(str)
        + " "
        + frame["rank"].astype(str)
        + " "
        + pd.Series(rounded).map(lambda v: f"{v:.6f}")
        + f" {tag}"
    )
    from rankbias.outputs import write_text

    write_text(path, "\n".join(lines) + "\n")  # atomic: a temporary file renamed into place


# ---- qrels -------------------------------------------------------------------------------
def read_qrels(path: str | Path) -> pd.DataFrame:
    """Read TREC qrels ``qid iteration docid relevance`` into a table.

    Returns columns ``qid, docid, relevance`` (relevance an integer).  A malformed line or a
    (qid, docid) pair judged twice raises :class:`~rankbias.errors.InputError` naming the line.
    """
    path = Path(path)
    rows: list[tuple[str, str, int]] = []
    seen: dict[tuple[str, str], int] = {}
    with _open_text(path) as handle:
        for lineno, line in enumerate(handle, start=1):
            fields = line.split()
            if len(fields) != 4:
                raise located(
                    path,
                    lineno,
                    f"found {len(fields)} field(s); expected 4: qid iteration docid relevance",
                )
            qid, _, docid, rel = fields
            try:
                relevance = int(rel)
            except ValueError:
                raise located(
                    path, lineno, f"relevance {rel!r} is not an integer; expected e.g. '1'"
                ) from None
            if (qid, docid) in seen:
                raise located(
                    path,
                    lineno,
                    f"document {docid} already judged for query {qid} on line "
                    f"{seen[(qid, docid)]}; expected one judgement per pair",
                )
            seen[(qid, docid)] = lineno
            rows.append((qid, docid, relevance))
    return pd.DataFrame(rows, columns=["qid", "docid", "relevance"])


def write_qrels(path: str | Path, qrels: pd.DataFrame) -> None:
    """Write a ``qid, docid, relevance`` table as TREC qrels (iteration column ``0``)."""
    from rankbias.outputs import write_text

    path = Path(path)
    lines = (
        qrels["qid"].astype(str)
        + " 0 "
        + qrels["docid"].astype(str)
        + " "
        + qrels["relevance"].astype(int).astype(str)
    )
    write_text(path, "\n".join(lines) + "\n")  # atomic: a temporary file renamed into place
