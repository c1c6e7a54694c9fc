"""``rankbias stats`` and ``rankbias score`` on a Dask cluster (``--engine dask``).

The engine partitions, ships and gathers; it computes nothing itself.

Statistics
    The collection file is cut into line-aligned byte ranges (*partitions*, a few per worker
    thread, at most :data:`MAX_PARTITION_BYTES`).  Each worker reads its range from a path it
    can see (a shared file system, or an ``fsspec`` URL) with the local engine's block counter,
    and the driver takes the results in file order: the local engine's rows, order and
    ``file:line`` errors.  A gzip file (told by its magic bytes) is one partition.  Docids used
    twice are found from every docid's 64-bit hash and confirmed on the text.  The file's
    identity is recorded at the start and checked by every partition and at the end: a file
    changed while it is read is an error, never a mixed table.

Scoring
    The measures are planned once, what they need from the whole collection (NFaiRR's ideal) is
    computed once by :func:`rankbias.scoring.collection_aggregates`, and each task runs
    :func:`rankbias.scoring.score_runs` on one part — a chunk of a run's queries for per-query
    measures, the whole run for system-level ones — with the rows and inputs that part reads.
    Input the local engine rejects as a whole (missing documents, empty lists) is rejected by
    the local engine itself, so the message is the same.

Without a scheduler address a :class:`distributed.LocalCluster` of single-threaded worker
processes is started and closed at the end.  A scheduler that does not answer, a cluster
without workers and a failed task end the command with one message, within the timeouts.
"""

from __future__ import annotations

import contextlib
import math
import os
import sys
from collections import deque
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, NamedTuple

from rankbias.errors import InputError, located

if TYPE_CHECKING:  # heavy imports stay lazy: `rankbias --help` imports this module
    import numpy as np
    import pandas as pd

    from rankbias.lexicon import Lexicon
    from rankbias.runs import Run
    from rankbias.text import DocStats

__all__ = [
    "dask_client",
    "plan_partitions",
    "iter_stats_on_dask",
    "collection_stats_on_dask",
    "score_runs_on_dask",
]

MAX_PARTITION_BYTES = 64 << 20  # 64 MiB of collection text per task
MIN_PARTITION_BYTES = 1 << 20
PARTITIONS_PER_THREAD = 4  # a few per worker thread, so that a slow worker does not hold all
CONNECT_TIMEOUT_S = 10.0  # --connect-timeout: a scheduler that does not answer in time is an error
WAIT_FOR_WORKERS_S = 30.0  # --worker-wait: how long a cluster may have no worker at all
MAX_LINE_BYTES = 1 << 26  # --max-line-bytes: the local engine's limit (collection.MAX_LINE_BYTES)
INSTALL_HINT = "install it with `pip install 'rankbias[dask]'`"


# ---- the cluster ---------------------------------------------------------------------------
def _distributed():
    try:
        import distributed
    except ModuleNotFoundError:
        raise InputError(
            f"--engine dask needs dask.distributed, which is not installed; {INSTALL_HINT}"
        ) from None
    return distributed


def _connect(distributed, scheduler: str, timeout: float):
    """A client of the scheduler at ``scheduler``, within ``timeout`` seconds whatever answers
    there: the connection is made on a daemon thread, abandoned (and the process free to end)
    when it does not finish in time — a server that is not a Dask scheduler never answers the
    handshake, and distributed's own timeout does not cover it."""
    import threading

    box: dict = {}

    def connect() -> None:
        try:
            box["client"] = distributed.Client(scheduler, timeout=timeout)
        except BaseException as exc:  # reported below, on the caller's thread
            box["error"] = exc

    thread = threading.Thread(target=connect, name="rankbias-connect", daemon=True)
    thread.start()
    thread.join(timeout + 1)
    if "client" in box:
        return box["client"]
    reason = f"{box['error']}" if "error" in box else f"no answer within {timeout:g} s"
    raise InputError(
        f"--scheduler {scheduler}: cannot connect ({reason}); expected the address of a "
        "running `dask scheduler`, e.g. tcp://HOST:8786 (--connect-timeout sets the wait)"
    )


def _quiet_logs(debug: bool) -> None:
    """Dask's own log lines (a failed task's "Compute Failed" and its traceback, connection
    notices) stay out of the user's terminal: the command reports the task's message itself.
    ``debug`` keeps them."""
    import logging

    level = logging.INFO if debug else logging.CRITICAL
    for name in ("distributed", "tornado", "asyncio"):
        logging.getLogger(name).setLevel(level)


@contextlib.contextmanager
def dask_client(
    scheduler: str | None = None,
    workers: int | None = None,
    connect_timeout: float = CONNECT_TIMEOUT_S,
    worker_wait: float = WAIT_FOR_WORKERS_S,
    debug: bool = False,
):
    """A ``distributed.Client``: connected to ``scheduler`` (within ``connect_timeout``
    seconds, and with a worker within ``worker_wait`` seconds), or to a new local cluster of
    ``workers`` single-threaded processes (default: one per core), closed on exit."""
    distributed = _distributed()
    _quiet_logs(debug)
    if scheduler:
        client = _connect(distributed, scheduler, connect_timeout)
        client.rankbias_worker_wait = worker_wait
        try:
            try:
                client.wait_for_workers(1, timeout=worker_wait)
            except TimeoutError:
                raise InputError(
                    f"--scheduler {scheduler}: 0 workers joined within {worker_wait:g} s; "
                    "expected at least one `dask worker` connected to it (--worker-wait sets "
                    "the wait)"
                ) from None
            yield client
        finally:
            with contextlib.suppress(Exception):
                client.close(timeout=5)
        return
    import logging

    import dask

    # Dask's nannies set MALLOC_TRIM_THRESHOLD_ for their workers, which turns off glibc's
    # adaptive mmap threshold: every large NumPy temporary then costs fresh page faults, and
    # the counting kernel needs about 1.5 times the CPU time (measured).  Leave it unset.
    with dask.config.set({"distributed.nanny.pre-spawn-environ.MALLOC_TRIM_THRESHOLD_": None}):
        cluster = distributed.LocalCluster(
            n_workers=workers or os.cpu_count() or 1,
            threads_per_worker=1,
            processes=True,
            dashboard_address=None,  # no dashboard, and its HTTP server on any free port:
            scheduler_kwargs={"dashboard_address": ":0"},
            silence_logs=logging.INFO if debug else logging.CRITICAL,
        )
    try:
        client = distributed.Client(cluster)
        client.rankbias_worker_wait = worker_wait
        try:
            yield client
        finally:
            client.close()
    finally:
        cluster.close()


def _total_threads(client) -> int:
    return max(1, sum(client.nthreads().values()))


class _Progress:
    """A tqdm bar on standard error when it is a terminal (and tqdm is installed)."""

    def __init__(self, total: int, label: str, unit: str, enabled: bool | None):
        self.bar = None
        if enabled is None:
            enabled = sys.stderr.isatty()
        if enabled:
            try:
                from tqdm import tqdm
            except ModuleNotFoundError:
                return
            self.bar = tqdm(total=total, desc=label, unit=unit, file=sys.stderr, leave=False)

    def step(self, _future=None) -> None:
        if self.bar is not None:
            self.bar.update(1)

    def close(self) -> None:
        if self.bar is not None:
            self.bar.close()


def _ordered_results(
    client, function: Callable, calls: Sequence[tuple], label: str, unit: str, progress
) -> Iterator:
    """``function(*call)`` for every call on the cluster, yielded in the order of ``calls``,
    with at most two tasks per worker thread in flight (bounded memory on both sides); the
    progress bar moves as tasks complete, in any order."""
    bar = _Progress(len(calls), label, unit, progress)
    pending: deque = deque()
    remaining = iter(calls)
    window = 2 * _total_threads(client)
    worker_wait = getattr(client, "rankbias_worker_wait", WAIT_FOR_WORKERS_S)

    def submit_next() -> None:
        call = next(remaining, None)
        if call is not None:
            future = client.submit(function, *call, pure=False)
            future.add_done_callback(bar.step)
            pending.append(future)

    try:
        for _ in range(window):
            submit_next()
        while pending:
            result = _result(client, pending.popleft(), worker_wait)
            submit_next()
            yield result
    finally:
        with contextlib.suppress(Exception):  # the client may be closed already
            client.cancel(list(pending))
        bar.close()


def _result(client, future, worker_wait: float):
    """The result of ``future``; the task's own error if it failed; an error when the cluster
    has had no worker for ``worker_wait`` seconds (the last worker died, and nobody restarts
    it) instead of waiting for ever."""
    import time

    alone_since = None
    while True:
        try:
            return future.result(timeout=0.5)
        except TimeoutError:
            pass
        if client.nthreads():
            alone_since = None
            continue
        alone_since = alone_since or time.monotonic()
        if time.monotonic() - alone_since > worker_wait:
            raise InputError(
                f"the Dask cluster has had no worker for {worker_wait:g} s (a worker died or "
                "was stopped, and none took its place); nothing was written; expected a "
                "cluster with running workers (--worker-wait sets the wait)"
            )


# ---- reading byte ranges (local paths and fsspec URLs) ------------------------------------
def _is_url(location: str) -> bool:
    return "://" in location


def _is_compressed(location: str) -> bool:
    """Gzip is told by its magic bytes, not by the name (as every reader of the package)."""
    with _open_raw(location) as handle:
        return handle.read(2) == b"\x1f\x8b"


def identity(location: str) -> tuple | None:
    """What identifies the file's content for the length of a command: device, inode, size
    and modification time (size and modification time of a URL, where the store says them).
    Recorded when the command starts and checked by every partition and at the end, so that a
    file replaced or changed while it is read is an error, never a mixed table."""
    if _is_url(location):
        import fsspec

        fs, path = fsspec.core.url_to_fs(location)
        info = fs.info(path)
        return (info.get("size"), str(info.get("mtime") or info.get("LastModified") or ""))
    from rankbias.inputs import file_identity

    return file_identity(location)


def _changed(label: str) -> InputError:
    return InputError(
        f"{label}: the file changed while it was read (replaced, rewritten or truncated); "
        "nothing was written; expected a collection that stays unchanged during the command"
    )


def _open_raw(location: str):
    """The file (not decompressed) as a binary, seekable handle."""
    if _is_url(location):
        try:
            import fsspec
        except ModuleNotFoundError:
            raise InputError(f"{location}: reading a URL needs fsspec; {INSTALL_HINT}") from None
        return fsspec.open(location, "rb").open()
    return open(location, "rb")


def _size_of(location: str) -> int:
    if _is_url(location):
        import fsspec

        fs, path = fsspec.core.url_to_fs(location)
        return int(fs.size(path))
    return os.path.getsize(location)


def _rest_of_line(handle, limit: int, location: str, offset: int) -> bytes:
    """The rest of the current line (with its line end), at most ``limit`` bytes long."""
    rest = handle.readline(limit + 1)
    if len(rest) > limit and not rest.endswith(b"\n"):
        raise InputError(
            f"{location}: the line that starts near byte {offset} runs for more than {limit} "
            "bytes without a line end; expected docid<TAB>text lines (--max-line-bytes sets "
            "the limit)"
        )
    return rest


def plan_partitions(
    location: str, target_bytes: int, max_line_bytes: int = MAX_LINE_BYTES
) -> list[tuple[int, int]]:
    """Line-aligned byte ranges ``[start, end)`` of about ``target_bytes`` covering the file.

    Each range ends just after a line break (or at the end of the file).  A compressed file is
    one range ``(0, -1)``: the whole decompressed stream.
    """
    if _is_compressed(location):
        return [(0, -1)]
    size = _size_of(location)
    target_bytes = max(1, int(target_bytes))
    ranges = []
    with _open_raw(location) as handle:
        start = 0
        while start < size:
            handle.seek(min(start + target_bytes, size))
            if handle.tell() < size:
                _rest_of_line(handle, max_line_bytes, location, handle.tell())
            end = handle.tell()
            ranges.append((start, end))
            start = end
    return ranges


def _line_blocks(
    location: str,
    start: int,
    end: int,
    block_bytes: int,
    expected=None,
    max_line_bytes: int = MAX_LINE_BYTES,
):
    """``(offset, bytes)``: blocks of whole lines of the range ``[start, end)`` (``end == -1``:
    the whole decompressed stream of a compressed file); offsets count from the start of the
    (decompressed) file, as the local engine's do.  A byte-order mark at the start of the file
    is dropped.  ``expected``: the file's :func:`identity` when the command started; a file
    that is no longer that file raises :class:`FileChangedError`."""
    with contextlib.ExitStack() as stack:
        handle = stack.enter_context(_open_raw(location))
        if expected is not None and not _is_url(location):
            status = os.fstat(handle.fileno())
            found = (status.st_dev, status.st_ino, status.st_size, status.st_mtime_ns)
            if found != expected:
                raise FileChangedError(location)
        if end == -1:
            import gzip

            handle = stack.enter_context(gzip.GzipFile(fileobj=handle, mode="rb"))
        else:
            handle.seek(start)
        offset = start
        while end == -1 or offset < end:
            block = handle.read(block_bytes if end == -1 else min(block_bytes, end - offset))
            if not block:
                return
            if not block.endswith(b"\n") and (end == -1 or offset + len(block) < end):
                block += _rest_of_line(handle, max_line_bytes, location, offset)
            size = len(block)
            if offset == 0 and block.startswith(BOM):
                yield len(BOM), block[len(BOM) :]
            else:
                yield offset, block
            offset += size


BOM = b"\xef\xbb\xbf"


class FileChangedError(OSError):
    """The collection is not the file it was when the command started."""


# ---- the kernel adapter -------------------------------------------------------------------
class _PartitionCounts(NamedTuple):
    """What a worker sends back for one partition."""

    stats: DocStats | None  # None when the partition has no line or has an error
    docid_hashes: np.ndarray  # uint64 hash of each docid (the local engine's hash)
    n_lines: int  # lines read before the error, or all lines of the partition
    error_line: int | None  # 0-based line within the partition of the first bad line
    error_message: str | None


def count_byte_range(
    location: str,
    start: int,
    end: int,
    lexicon: Lexicon,
    tokenizer: str,
    per_term: bool,
    expected: tuple | None = None,
    max_line_bytes: int = MAX_LINE_BYTES,
) -> _PartitionCounts:
    """The statistics of the lines in ``[start, end)`` of a collection file, on a worker.

    Each block goes through the local engine's public block counter
    (:func:`rankbias.collection.count_block`); everything else in this module goes through
    this function.
    """
    import numpy as np

    from rankbias.collection import DEFAULT_BLOCK_BYTES, BlockError, count_block
    from rankbias.text import DocStats, TermMatcher

    matcher = TermMatcher(lexicon, tokenizer)
    parts, hashes, n_lines = [], [], 0
    blocks = _line_blocks(location, start, end, DEFAULT_BLOCK_BYTES, expected, max_line_bytes)
    for offset, block in blocks:
        try:
            raw = count_block(block, offset, matcher, per_term)
        except BlockError as exc:
            empty = np.zeros(0, dtype=np.uint64)
            return _PartitionCounts(None, empty, n_lines, n_lines + exc.line_in_block, exc.message)
        parts.append(raw.stats(matcher))
        hashes.append(raw.hashes)
        n_lines += len(raw.lengths)
    if not parts:
        return _PartitionCounts(None, np.zeros(0, dtype=np.uint64), 0, None, None)
    return _PartitionCounts(DocStats.concat(parts), np.concatenate(hashes), n_lines, None, None)


# ---- statistics on the cluster -------------------------------------------------------------
def _collection_location(collection: str | Path) -> tuple[str, str]:
    """``(location workers open, label for messages)``; the label is the local engine's."""
    collection = str(collection)
    if _is_url(collection):
        return collection, collection
    path = Path(collection)
    if not path.is_file():
        raise InputError(
            f"collection {collection!r}: no such file; --engine dask reads a docid<TAB>text "
            "file (optionally .gz) that the workers can see, or an fsspec URL; for an "
            "ir_datasets id use --engine local"
        )
    return str(path.resolve()), str(path)


def _partition_bytes(location: str, client) -> int:
    size = 0 if _is_compressed(location) else _size_of(location)
    per_partition = math.ceil(size / (PARTITIONS_PER_THREAD * _total_threads(client)))
    return min(MAX_PARTITION_BYTES, max(MIN_PARTITION_BYTES, per_partition))


@dataclass
class _StreamState:
    """What the driver keeps while partitions stream by: 8 bytes per document, not the text."""

    label: str
    location: str
    ranges: list[tuple[int, int]]
    line_counts: list[int]
    hashes: list


def iter_stats_on_dask(
    client,
    collection: str | Path,
    lexicon: Lexicon,
    tokenizer: str = "default",
    per_term: bool = False,
    partition_bytes: int | None = None,
    progress: bool | None = None,
    max_line_bytes: int = MAX_LINE_BYTES,
) -> Iterator[DocStats]:
    """Stream the statistics of a collection file computed on the cluster of ``client``, one
    :class:`~rankbias.text.DocStats` per partition, in file order.

    The documents, numbers and errors are those of
    :func:`rankbias.text.iter_collection_stats` (the local engine); only the block sizes
    differ.  ``partition_bytes`` defaults to a few partitions per worker thread, at most
    :data:`MAX_PARTITION_BYTES`.
    """
    location, label = _collection_location(collection)
    started = identity(location)
    target = partition_bytes or _partition_bytes(location, client)
    ranges = plan_partitions(location, target, max_line_bytes)
    state = _StreamState(label, location, ranges, [], [])
    calls = [
        (location, a, b, lexicon, tokenizer, per_term, started, max_line_bytes) for a, b in ranges
    ]
    try:
        with contextlib.closing(
            _ordered_results(client, count_byte_range, calls, "partitions", "partition", progress)
        ) as results:
            for result in results:
                if result.error_line is not None:
                    line = sum(state.line_counts) + result.error_line + 1
                    raise located(label, line, result.error_message)
                state.line_counts.append(result.n_lines)
                state.hashes.append(result.docid_hashes)
                if result.stats is not None:
                    yield result.stats
        if identity(location) != started:
            raise FileChangedError(location)
    except FileChangedError:
        raise _changed(label) from None
    except OSError as exc:
        raise InputError(
            f"{label}: a worker could not read the collection ({exc}); expected a path every "
            "worker can see (a shared file system) or an fsspec URL"
        ) from None
    _check_unique_docids(state)


def _check_unique_docids(state: _StreamState) -> None:
    """The local engine's duplicate check: equal hashes, confirmed on the docids' text, the
    first confirmed pair in hash order reported with both line numbers."""
    import numpy as np

    hashes = np.concatenate(state.hashes) if state.hashes else np.zeros(0, dtype=np.uint64)
    order = np.argsort(hashes, kind="stable")
    same = np.flatnonzero(hashes[order][1:] == hashes[order][:-1])
    for k in same:
        first, second = sorted((int(order[k]), int(order[k + 1])))
        a, b = _docids_at_lines(state, [first, second])
        if a == b:
            raise located(
                state.label,
                second + 1,
                f"docid {b!r} is already used on line {first + 1}; expected each docid once",
            )


def _docids_at_lines(state: _StreamState, lines: list[int]) -> list[str]:
    """The docids on 0-based ``lines`` of the collection, re-read from their partitions."""
    import numpy as np

    ends = np.cumsum(state.line_counts)
    found = []
    for line in lines:
        k = int(np.searchsorted(ends, line, side="right"))
        skip = line - (int(ends[k - 1]) if k else 0)
        start, end = state.ranges[k]
        for _, block in _line_blocks(state.location, start, end, 1 << 20):
            lines = block.splitlines()  # \n, \r\n and a lone \r end lines, as for the scanner
            if skip < len(lines):
                found.append(lines[skip].decode("utf-8").partition("\t")[0])
                break
            skip -= len(lines)
    return found


def collection_stats_on_dask(
    client,
    collection: str | Path,
    lexicon: Lexicon,
    tokenizer: str = "default",
    per_term: bool = False,
    partition_bytes: int | None = None,
    progress: bool | None = None,
) -> DocStats:
    """The statistics of a whole collection file as one :class:`DocStats` (see the stream)."""
    from rankbias.text import DocStats

    parts = list(
        iter_stats_on_dask(
            client, collection, lexicon, tokenizer, per_term, partition_bytes, progress
        )
    )
    if not parts:
        _, label = _collection_location(collection)
        raise located(label, None, "the collection is empty; expected 'docid<TAB>text' lines")
    return DocStats.concat(parts)


# ---- scoring on the cluster ----------------------------------------------------------------
def _score_part(run: Run, stats: DocStats | None, plan_requests, cutoffs, options: dict):
    """One task: :func:`rankbias.scoring.score_runs` of one part of one run; ``(table, attrs)``."""
    from rankbias.scoring import score_runs

    frame = score_runs([run], stats, plan_requests, cutoffs, **options)
    return frame, dict(frame.attrs)


def _subset(stats: DocStats, rows: np.ndarray) -> DocStats:
    """The statistics of the given (sorted, unique) rows only."""
    from rankbias.text import DocStats

    return DocStats(
        docids=stats.docids[rows],
        lengths=stats.lengths[rows],
        group_counts=stats.group_counts[rows],
        groups=stats.groups,
        terms=stats.terms,
        term_group=stats.term_group,
        term_counts=None if stats.term_counts is None else stats.term_counts[rows],
        tokenizer=stats.tokenizer,
    )


def _rejected_by_local_engine(runs, stats, background, missing: str, empty: str) -> bool:
    """Whether ``score_runs`` would stop with a message that depends on whole runs."""
    import numpy as np

    names = [r.name for r in runs]
    if len(set(names)) != len(names):
        return True
    for run in runs:
        if empty == "error" and (run.list_lengths == 0).any():
            return True
        if stats is not None and missing == "error" and (stats.rows(run.docids) < 0).any():
            return True
        if not isinstance(background, str):
            if not np.isin(run.qids, background.qids).all():
                return True
            sub = background.restrict(run.qids)
            if stats is not None and missing == "error" and (stats.rows(sub.docids) < 0).any():
                return True
    return False


def score_runs_on_dask(
    client,
    runs: Run | Sequence[Run],
    stats: DocStats | None = None,
    metrics=None,
    cutoffs=None,
    *,
    queries_per_task: int | None = None,
    progress: bool | None = None,
    **options,
) -> pd.DataFrame:
    """:func:`rankbias.scoring.score_runs` computed on the cluster of ``client``.

    The engine only partitions, ships and gathers: the measures are planned once
    (:func:`rankbias.scoring.plan_measures`), what they need from the whole collection is
    computed once by the provider (:func:`rankbias.scoring.collection_aggregates`), and each
    task runs ``score_runs`` on one part — a chunk of a run's queries for the per-query
    measures, the whole run for the system-level ones — with the rows of the statistics and
    the inputs that part reads.  ``options`` are those of ``score_runs`` (``background``,
    ``missing``, ``empty``, ``qrels``, ``polarisation``, ``group_membership``,
    ``counterfactual``); the table (rows, order, values) and its ``attrs`` are the same.
    ``queries_per_task`` defaults to a few tasks per worker thread and run.
    """
    import numpy as np

    from rankbias.runs import Run
    from rankbias.scoring import (
        DEFAULT_CUTOFFS,
        DEFAULT_MEASURES,
        collection_aggregates,
        plan_measures,
        restrict_inputs,
        score_runs,
    )

    metrics = DEFAULT_MEASURES if metrics is None else metrics
    cutoffs = DEFAULT_CUTOFFS if cutoffs is None else cutoffs
    runs = [runs] if isinstance(runs, Run) else list(runs)
    background = options.get("background", "collection")
    if not runs or _rejected_by_local_engine(
        runs, stats, background, options.get("missing", "error"), options.get("empty", "error")
    ):
        return score_runs(runs, stats, metrics, cutoffs, **options)  # the local engine's message
    plan = plan_measures(metrics, cutoffs)
    aggregates = collection_aggregates(plan, stats)
    levels = {
        level: [entry.request for entry in plan if entry.request.measure.level == level]
        for level in ("query", "system")
    }
    threads = _total_threads(client)
    calls, parts = [], []
    for run_index, run in enumerate(runs):
        size = queries_per_task or max(
            1, math.ceil(len(run.qids) / (PARTITIONS_PER_THREAD * threads))
        )
        pieces = (
            [
                ("query", run.restrict(run.qids[first : first + size]))
                for first in range(0, len(run.qids), size)
            ]
            if levels["query"]
            else []
        )
        if levels["system"]:
            pieces.append(("system", run))
        for level, piece in pieces:
            inputs = restrict_inputs(piece, options)
            piece_stats = None
            if stats is not None:
                needed = [stats.rows(piece.docids)]
                if isinstance(inputs.get("background"), Run):
                    needed.append(stats.rows(inputs["background"].docids))
                rows = np.unique(np.concatenate(needed))
                piece_stats = _subset(stats, rows[rows >= 0])
            inputs["aggregates"] = aggregates
            calls.append((piece, piece_stats, levels[level], cutoffs, inputs))
            parts.append((run_index, level))
    results = list(_ordered_results(client, _score_part, calls, "query chunks", "chunk", progress))
    return _reassemble(runs, plan, results, parts)


def _reassemble(runs, plan, results, parts) -> pd.DataFrame:
    """The parts back in the local engine's order — per run, measure by measure as planned,
    then cut-off, then query in the run's order — with ``attrs`` counted as the local engine
    counts them (the documents of a run once, from its per-query parts if it has any)."""
    import numpy as np
    import pandas as pd

    block = {key: i for i, key in enumerate((e.label, k) for e in plan for k in e.cutoffs)}
    frames, missing, empty = [], {}, {}
    for run_index, run in enumerate(runs):
        mine = [res for res, (ri, _) in zip(results, parts, strict=True) if ri == run_index]
        levels = [level for ri, level in parts if ri == run_index]
        joined = pd.concat([frame for frame, _ in mine], ignore_index=True)
        position = pd.Series(np.arange(len(run.qids)), index=pd.Index(run.qids, dtype=object))
        keys = np.lexsort(
            (
                position.reindex(joined["qid"].astype(object)).fillna(0).to_numpy(),
                [block[m, k] for m, k in zip(joined["metric"], joined["cutoff"], strict=True)],
            )
        )
        frames.append(joined.take(keys))
        counted = "query" if "query" in levels else "system"
        totals: dict[str, int] = {}
        for (_, attrs), level in zip(mine, levels, strict=True):
            if level != counted:
                continue
            for key, count in attrs["missing_documents"].items():
                totals[key] = totals.get(key, 0) + count
            empty.setdefault(run.name, []).extend(attrs["empty_queries"][run.name])
        missing.update(totals)  # a background's count is the last run's, as in score_runs
    out = pd.concat(frames, ignore_index=True)
    out.attrs["missing_documents"] = missing
    out.attrs["empty_queries"] = empty
    undefined = out[out["value"].isna()].groupby(["run", "metric"]).size()
    out.attrs["undefined_values"] = {k: int(v) for k, v in undefined.items()}
    return out
