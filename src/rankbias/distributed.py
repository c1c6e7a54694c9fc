"""``rankbias stats`` and ``rankbias score`` on a Dask cluster (``--engine dask``).

The engine partitions, ships and gathers; it computes nothing itself.  Statistics: workers
count line-aligned byte ranges of a file they can see (a shared file system or an ``fsspec``
URL; a gzip file is one range) with the reader and counter of :mod:`rankbias.collection`, and
the driver takes them in file order, so rows, numbers and ``file:line`` errors are the local
engine's; a file changed while it is read is an error.  Scoring: the measures are planned and
the collection aggregates computed once, and each task runs :func:`rankbias.scoring.score_runs`
on a chunk of a run's queries (or a whole run, for system-level measures).

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
from pathlib import Path
from typing import TYPE_CHECKING

from rankbias.errors import InputError, expect_count, expect_flag, expect_items, expect_type
from rankbias.inputs import BOM, GZIP_MAGIC, MAX_LINE_BYTES, file_identity

if TYPE_CHECKING:  # heavy imports stay lazy: `rankbias --help` imports this module
    import pandas as pd

    from rankbias.collection import Block
    from rankbias.lexicon import Lexicon
    from rankbias.runs import Run
    from rankbias.text import DocStats

__all__ = [
    "dask_client",
    "iter_blocks_on_dask",
    "collection_stats_on_dask",
    "score_runs_on_dask",
]

MAX_PARTITION_BYTES = 64 << 20  # 64 MiB of collection text per task
MIN_PARTITION_BYTES = 1 << 20
PARTITIONS_PER_THREAD = 4  # a few per worker thread, so that a slow worker does not hold all
CONNECT_TIMEOUT_S = 10.0  # --connect-timeout: a scheduler that does not answer in time is an error
WAIT_FOR_WORKERS_S = 30.0  # --worker-wait: how long a cluster may have no worker at all
INSTALL_HINT = "install it with `pip install 'rankbias[dask]'`"


# ---- the cluster ---------------------------------------------------------------------------
def _connect(distributed, scheduler: str, timeout: float):
    """A client of the scheduler at ``scheduler``, within ``timeout`` seconds whatever answers
    there (a daemon thread, abandoned on time-out: a server that is not a Dask scheduler never
    answers the handshake, and distributed's own timeout does not cover it)."""
    import socket
    import threading

    host, _, port = scheduler.rpartition("://")[2].rpartition(":")
    try:  # nothing listens there: said at once (distributed retries until its time-out)
        socket.create_connection((host.strip("[]"), int(port)), timeout=timeout).close()
    except ValueError:
        pass  # not HOST:PORT: distributed names it
    except OSError as exc:
        raise InputError(
            f"--scheduler {scheduler}: cannot connect ({exc.strerror or exc}); expected the "
            "address of a running `dask scheduler`, e.g. tcp://HOST:8786"
        ) from None
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
    if not isinstance(box.get("error", OSError()), OSError):  # bytes read as Dask's frames
        reason = "a server answers there, but not as a Dask scheduler"
    raise InputError(
        f"--scheduler {scheduler}: cannot connect ({reason}); expected the address of a "
        "running `dask scheduler`, e.g. tcp://HOST:8786 (--connect-timeout sets the wait)"
    )


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
    try:
        import distributed
    except ModuleNotFoundError:
        raise InputError(
            f"--engine dask needs dask.distributed, which is not installed; {INSTALL_HINT}"
        ) from None
    import logging

    # Dask's own log lines (a failed task's "Compute Failed" and its traceback, connection
    # notices) stay out of the terminal (unless --debug): the command reports the message itself
    for name in ["tornado", "asyncio", *logging.root.manager.loggerDict]:  # set or inherited
        if name.partition(".")[0] in ("distributed", "tornado", "asyncio"):
            logging.getLogger(name).setLevel(logging.INFO if debug else logging.CRITICAL)
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
            _check_workers(client, scheduler)
            yield client
        except Exception:
            if client.status == "running":
                raise
            raise InputError(  # whatever distributed raised where it noticed (a read, a submit)
                f"--scheduler {scheduler}: the connection to the scheduler was lost during the "
                "work; nothing was written; expected a scheduler that runs for the length of "
                "the command"
            ) from None
        finally:
            with contextlib.suppress(Exception):
                client.close(timeout=5)
        return
    import dask

    # Dask's nannies set MALLOC_TRIM_THRESHOLD_ for their workers, which turns off glibc's
    # adaptive mmap threshold: every large NumPy temporary then costs fresh page faults, and
    # the counting kernel needs about 1.5 times the CPU time (measured).  Leave it unset.  A
    # worker that stops answering (stopped, hung) is replaced after 15–34 s, not 5–10 minutes.
    trim, ttl = "distributed.nanny.pre-spawn-environ.MALLOC_TRIM_THRESHOLD_", "15s"
    with dask.config.set({trim: None, "distributed.scheduler.worker-ttl": ttl}):
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


def _check_workers(client, scheduler: str) -> None:
    """Every worker of a cluster started elsewhere imports this version of the package: one
    that cannot dies on its first task, and the command then waits --worker-wait for nothing
    (seen: a worker whose rankbias was broken).  ``eval`` travels by reference, so the check
    itself needs nothing on the worker."""
    from rankbias import __version__

    probe = "__import__('importlib').import_module('rankbias.distributed') and "
    found = client.run(eval, probe + "__import__('rankbias').__version__", on_error="return")
    for worker, result in sorted(found.items()):
        if result != __version__:
            what = (
                f"{type(result).__name__}: {result}"
                if isinstance(result, BaseException)
                else (f"rankbias {result}")
            )
            raise InputError(
                f"--scheduler {scheduler}: worker {worker} cannot run this command's tasks "
                f"({what}); expected rankbias {__version__} installed on every worker"
            )


def _total_threads(client) -> int:
    if not hasattr(client, "nthreads"):
        raise TypeError(f"client: expected a dask.distributed Client, found {client!r:.60}")
    return max(1, sum(client.nthreads().values()))


def _ordered_results(
    client, function: Callable, calls: Sequence[tuple], label: str, unit: str, progress
) -> Iterator:
    """``function(*call)`` for every call on the cluster, yielded in the order of ``calls``,
    with at most two tasks per worker thread in flight (bounded memory on both sides); the
    progress bar (on a terminal, or as ``progress`` says; with tqdm) moves as tasks complete."""
    bar = None
    if sys.stderr.isatty() if progress is None else progress:
        with contextlib.suppress(ModuleNotFoundError):
            from tqdm import tqdm

            bar = tqdm(total=len(calls), desc=label, unit=unit, file=sys.stderr, leave=False)
    pending: deque = deque()
    remaining = iter(calls)
    window = 2 * _total_threads(client)
    worker_wait = getattr(client, "rankbias_worker_wait", WAIT_FOR_WORKERS_S)

    def submit_next() -> None:
        call = next(remaining, None)
        if call is not None:
            future = client.submit(function, *call, pure=False)
            if bar is not None:
                future.add_done_callback(lambda _: bar.update(1))
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
        if bar is not None:
            bar.close()


def _result(client, future, worker_wait: float):
    """The result of ``future``; the task's own error if it failed; an error when the cluster
    has had no worker for ``worker_wait`` seconds (the last worker died, and nobody restarts
    it) instead of waiting for ever.  The future is polled (``done()`` asks the client, not
    the scheduler) and read only once done: ``future.result(timeout=…)`` races its own
    timeout inside distributed and can fail with "cannot access local variable 'result'"."""
    import time

    alone_since, checked = None, time.monotonic()
    while not future.done():
        time.sleep(0.02)
        if time.monotonic() - checked < 0.5:
            continue
        checked = time.monotonic()
        if client.nthreads():
            alone_since = None
            continue
        alone_since = alone_since or checked
        if checked - alone_since > worker_wait:
            raise InputError(
                f"the Dask cluster has had no worker for {worker_wait:g} s (a worker died or "
                "was stopped, and none took its place); nothing was written; expected a "
                "cluster with running workers (--worker-wait sets the wait)"
            )
    return future.result()


# ---- reading byte ranges (local paths and fsspec URLs) ------------------------------------
def _is_url(location: str) -> bool:
    return "://" in location


def identity(location: str) -> tuple | None:
    """What identifies the file's content for the length of a command: device, inode, size
    and modification time (size and modification time of a URL, where the store says them)."""
    if _is_url(location):
        import fsspec

        try:
            fs, path = fsspec.core.url_to_fs(location)
            info = fs.info(path)
        except (ImportError, ValueError, OSError) as exc:  # a store missing, unknown or failing
            what = "no such file" if isinstance(exc, FileNotFoundError) else str(exc) or repr(exc)
            raise InputError(
                f"{location}: {what}; expected a file at a URL whose fsspec store is installed "
                "and reachable"
            ) from None
        return (info.get("size"), str(info.get("mtime") or info.get("LastModified") or ""))
    return file_identity(location)


class FileChangedError(OSError):
    """The collection is not the file it was when the command started."""


def _unchanged(location: str, started: tuple | None) -> bool:
    """Whether the collection is still the file it was (one removed, locally or at its URL,
    is not)."""
    try:
        return identity(location) == started
    except (InputError, OSError):
        return False


def _open_raw(location: str):
    """The file (not decompressed) as a binary, seekable handle."""
    if _is_url(location):
        try:
            import fsspec
        except ModuleNotFoundError:
            raise InputError(f"{location}: reading a URL needs fsspec; {INSTALL_HINT}") from None
        return fsspec.open(location, "rb").open()
    return open(location, "rb")


def _read_at(handle) -> Callable[[int, int], bytes]:
    def read_at(position: int, size: int) -> bytes:
        handle.seek(position)
        return handle.read(size)

    return read_at


def _read_into(handle) -> Callable[[int, int], memoryview]:
    """Like :func:`_read_at`, into one buffer reused from call to call: the view it returns
    is valid until the next call.  The nannies of hand-started ``dask worker`` processes set
    ``MALLOC_TRIM_THRESHOLD_``, which fixes glibc's mmap threshold at 128 KiB, so a fresh
    4 MiB ``bytes`` per block is a fresh mapping whose every page faults in (about a tenth
    of the workers' CPU time, as measured in the book's "At scale" chapter)."""
    buffer = bytearray()

    def read_into(position: int, size: int) -> memoryview:
        nonlocal buffer
        if size > len(buffer):
            buffer = bytearray(size)
        view = memoryview(buffer)[:size]
        handle.seek(position)
        done = 0
        while done < size:
            got = handle.readinto(view[done:])
            if not got:
                break
            done += got
        return view[:done]

    return read_into


def plan_partitions(
    location: str,
    target_bytes: int | None,
    max_line_bytes: int = MAX_LINE_BYTES,
    label: str = "",
    threads: int = 1,
) -> list[tuple[int, int]]:
    """Line-aligned byte ranges ``[start, end)`` of about ``target_bytes`` covering the file
    (:func:`rankbias.collection.range_cuts`); a compressed file (told by its magic bytes) is one
    range ``(0, -1)``, the whole decompressed stream.  ``target_bytes`` ``None``: a few ranges
    per each of ``threads`` worker threads, within the bounds.  ``label`` names the file in
    messages (default: ``location``)."""
    from rankbias.collection import range_cuts

    with _open_raw(location) as handle:
        if handle.read(2) == GZIP_MAGIC:
            return [(0, -1)]
        size = handle.seek(0, os.SEEK_END)
        if not target_bytes:
            target_bytes = math.ceil(size / (PARTITIONS_PER_THREAD * threads))
            target_bytes = min(MAX_PARTITION_BYTES, max(MIN_PARTITION_BYTES, target_bytes))
        target = max(1, int(target_bytes))
        return list(
            range_cuts(_read_at(handle), 0, size, target, max_line_bytes, label or location)
        )


def count_byte_range(
    location: str,
    start: int,
    end: int,
    lexicon: Lexicon,
    tokenizer: str,
    per_term: bool,
    expected: tuple | None = None,
    max_line_bytes: int = MAX_LINE_BYTES,
    label: str = "",
) -> list[Block]:
    """On a worker: the :class:`~rankbias.collection.Block` of each block of the lines in
    ``[start, end)`` (``end == -1``: the whole decompressed stream), read and counted as the
    local engine does; the docids stay an Arrow array, which the driver writes as it is.

    A local file that is no longer ``expected`` (its :func:`identity`) raises
    :class:`FileChangedError`; a bad line a :class:`~rankbias.collection.BlockError` with its
    line counted from ``start``; messages name ``label`` (default: ``location``).
    """
    from rankbias import collection as c
    from rankbias.text import TermMatcher

    matcher = TermMatcher(lexicon, tokenizer)
    label = label or location
    size = c.DEFAULT_BLOCK_BYTES
    blocks, n_lines = [], 0
    with _open_raw(location) as handle:
        if expected is not None:  # a local file: the file opened, not the path; a URL: as now
            url = _is_url(location)
            if (identity(location) if url else file_identity(handle.fileno())) != expected:
                raise FileChangedError(location)
        if end == -1:
            tasks = c.stream_blocks(handle, label, True, size, max_line_bytes)
        else:
            read_at, read_block = _read_at(handle), _read_into(handle)
            start = 3 if start == 0 and read_at(0, 3) == BOM else start
            cuts = c.range_cuts(read_at, start, end, size, max_line_bytes, label)
            tasks = ((c.read_range(read_block, *cut, max_line_bytes, label), cut[0], "the file")
                     for cut in cuts)  # fmt: skip
        for data, offset, where in tasks:
            try:
                blocks.append(c.count_block(data, offset, matcher, per_term, where))
            except c.BlockError as exc:
                line = n_lines + exc.line_in_block
                raise c.BlockError(line, exc.message, exc.byte_offset) from None
            n_lines += len(blocks[-1].lengths)
    return blocks


# ---- statistics on the cluster -------------------------------------------------------------
def _collection_location(collection: str | Path) -> tuple[str, str]:
    """``(location workers open, label for messages)``; the label is the local engine's."""
    collection = str(expect_type(collection, "collection", str | os.PathLike, "a path or a URL"))
    if _is_url(collection):
        return collection, collection
    path = Path(collection)
    if not path.is_file():  # a pipe or a device has no byte ranges for the workers to read
        found = (
            "not a regular file (a pipe, device or directory)" if path.exists() else "no such file"
        )
        raise InputError(
            f"collection {collection!r}: {found}; --engine dask reads a docid<TAB>text "
            "file (optionally .gz) that the workers can see, or an fsspec URL; for a pipe or "
            "an ir_datasets id use --engine local"
        )
    return str(path.resolve()), str(path)


def iter_blocks_on_dask(
    client,
    collection: str | Path,
    lexicon: Lexicon,
    tokenizer: str = "default",
    per_term: bool = False,
    partition_bytes: int | None = None,
    progress: bool | None = None,
    max_line_bytes: int = MAX_LINE_BYTES,
) -> Iterator[Block]:
    """Stream the :class:`~rankbias.collection.Block` of a collection file counted on the
    cluster of ``client``, in file order: the documents, numbers and errors of the blocks of
    :func:`rankbias.collection.iter_blocks`.  ``partition_bytes`` defaults
    to a few partitions per worker thread, at most :data:`MAX_PARTITION_BYTES`.
    """
    from rankbias.collection import checked_blocks, docids_at_lines

    expect_flag(per_term, "per_term")
    max_line_bytes = expect_count(max_line_bytes, "max_line_bytes")
    if partition_bytes is not None:
        expect_count(partition_bytes, "partition_bytes")
    location, label = _collection_location(collection)
    started = identity(location)
    threads = _total_threads(client)
    calls = [
        (location, a, b, lexicon, tokenizer, per_term, started, max_line_bytes, label)
        for a, b in plan_partitions(location, partition_bytes, max_line_bytes, label, threads)
    ]

    def counted() -> Iterator[Block]:
        with contextlib.closing(
            _ordered_results(client, count_byte_range, calls, "partitions", "partition", progress)
        ) as results:
            for blocks in results:
                yield from blocks
        if not _unchanged(location, started):  # before repeated docids are confirmed
            raise FileChangedError(location)

    def docid_at(lines):
        return docids_at_lines(_open_raw(location), lines)

    try:
        yield from checked_blocks(counted(), label, docid_at)
    except (OSError, InputError) as exc:  # a bad line may be a file changed under the reader
        if isinstance(exc, FileChangedError) or not _unchanged(location, started):
            raise InputError(
                f"{label}: the file changed while it was read (removed, replaced, rewritten or "
                "truncated); nothing was written; expected a collection that stays unchanged "
                "during the command"
            ) from None
        if isinstance(exc, InputError):
            raise
        raise InputError(
            f"{label}: a worker could not read the collection ({exc}); expected a path every "
            "worker can see (a shared file system) or an fsspec URL"
        ) from None


def collection_stats_on_dask(
    client,
    collection: str | Path,
    lexicon: Lexicon,
    tokenizer: str = "default",
    per_term: bool = False,
    partition_bytes: int | None = None,
    progress: bool | None = None,
    max_line_bytes: int = MAX_LINE_BYTES,
) -> DocStats:
    """The statistics of a whole collection file as one :class:`DocStats` (see the stream)."""
    from rankbias.collection import concat_stats
    from rankbias.text import TermMatcher

    matcher = TermMatcher(lexicon, tokenizer)
    blocks = iter_blocks_on_dask(
        client, collection, lexicon, tokenizer, per_term, partition_bytes, progress, max_line_bytes
    )
    parts = [block.stats(matcher) for block in blocks]
    return concat_stats(parts, _collection_location(collection)[1])


# ---- scoring on the cluster ----------------------------------------------------------------
def _score_part(run: Run, stats: DocStats | None, plan_requests, cutoffs, options: dict):
    """One task: :func:`rankbias.scoring.score_runs` of one part of one run; ``(table, attrs)``."""
    from rankbias.scoring import score_runs

    frame = score_runs([run], stats, plan_requests, cutoffs, **options)
    return frame, dict(frame.attrs)


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
    """:func:`rankbias.scoring.score_runs` computed on the cluster of ``client`` (module
    docstring): ``options`` are ``score_runs``'s, and the table (rows, order, values) and its
    ``attrs`` are the same; input ``score_runs`` rejects as a whole is left to it, for the same
    message.  ``queries_per_task`` defaults to a few tasks per worker thread and run.
    """
    import numpy as np

    from rankbias import scoring
    from rankbias.runs import Run

    metrics = scoring.DEFAULT_MEASURES if metrics is None else metrics
    cutoffs = scoring.DEFAULT_CUTOFFS if cutoffs is None else cutoffs
    kind = "a Run or a list of them"
    runs = [runs] if isinstance(runs, Run) else expect_items(runs, "runs", kind)
    runs = [expect_type(run, "runs", Run, kind) for run in runs]
    background = options.get("background", "collection")
    if not runs or _rejected_by_local_engine(
        runs, stats, background, options.get("missing", "error"), options.get("empty", "error")
    ):  # the local engine's message
        return scoring.score_runs(runs, stats, metrics, cutoffs, **options)
    plan = scoring.plan_measures(metrics, cutoffs)
    aggregates = scoring.collection_aggregates(plan, stats)
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
        pieces = []
        if levels["query"]:
            chunks = [run.qids[first : first + size] for first in range(0, len(run.qids), size)]
            pieces = [("query", run.restrict(chunk)) for chunk in chunks]
        if levels["system"]:
            pieces.append(("system", run))
        for level, piece in pieces:
            inputs = scoring.restrict_inputs(piece, options)
            piece_stats = None
            if stats is not None:
                needed = [stats.rows(piece.docids)]
                if isinstance(inputs.get("background"), Run):
                    needed.append(stats.rows(inputs["background"].docids))
                rows = np.unique(np.concatenate(needed))
                rows = rows[rows >= 0]
                piece_stats = stats.take(rows)
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

    from rankbias.scoring import tidy_table

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
        missing.update(totals)  # a background is counted per run, as in score_runs
    return tidy_table(frames, missing, empty)
