"""``rankbias stats --collection C --terms T [--tokenizer ...] [--workers N] --out F``.

One row per document: ``docid``, ``length``, one count column per group (named by the group
label, e.g. ``f``, ``m``) and ``neutrality`` (``ω`` with ``τ = 1``, ``≤``), in the format of the
suffix of ``F`` (``.parquet``, ``.csv``, ``.tsv``, ``.csv.gz``, ``.tsv.gz``).  The output is
checked before the work; a file collection is streamed block by block into a temporary file
renamed into place at the end, so a bad line, an interrupt or a full disk leaves no partial
output.
"""

from __future__ import annotations

import sys
from pathlib import Path

from rankbias.commands.collection import (
    add_collection_arguments,
    check_engine_arguments,
    collection_statistics,
    file_blocks,
    load_lexicon,
    warn_unmatchable,
)
from rankbias.commands.progress import wanted
from rankbias.errors import InputError

RESERVED_COLUMNS = ("docid", "length", "neutrality")


def register(subparsers) -> None:
    """Add the ``stats`` command to the ``rankbias`` parser."""
    parser = subparsers.add_parser(
        "stats",
        help="per-document length, group term counts and neutrality",
        description="Count group terms in every document of a collection "
        "(docid<TAB>text file, optionally .gz, or an ir_datasets id).",
    )
    add_collection_arguments(parser)
    parser.add_argument(
        "--out",
        required=True,
        help="output file: .parquet, .csv, .tsv, .csv.gz or .tsv.gz (written atomically)",
    )
    parser.set_defaults(func=run_stats)


def _stats_table(block, groups):
    """The output table of one block (``docids``, ``lengths``, ``group_counts``), in Arrow."""
    import pyarrow as pa

    from rankbias.metrics.fairr import neutrality

    columns = {"docid": _arrow(block.docids, pa.string()), "length": _arrow(block.lengths)}
    for j, group in enumerate(groups):
        columns[group] = _arrow(block.group_counts[:, j])
    columns["neutrality"] = _arrow(neutrality(block.group_counts, tau=1.0))
    return pa.table(columns)


def _arrow(values, kind=None):
    """``values`` as an Arrow array; a NumPy number column is wrapped from its buffer
    (``pyarrow.array`` would import pandas, about 0.3 s of start-up)."""
    import numpy as np
    import pyarrow as pa

    if isinstance(values, pa.Array):
        return values if kind is None or values.type == kind else values.cast(kind)
    if isinstance(values, np.ndarray) and values.dtype.kind in "iuf" and kind is None:
        column = np.ascontiguousarray(values)
        buffers = [None, pa.py_buffer(column)]
        return pa.Array.from_buffers(pa.from_numpy_dtype(column.dtype), len(column), buffers)
    return pa.array(values, type=kind)


def document_blocks(args, lexicon, show_progress: bool):
    """Output tables, one per block of the collection, with a progress bar on a terminal."""
    if check_engine_arguments(args):
        from rankbias.distributed import dask_client, iter_blocks_on_dask
        from rankbias.outputs import handle_signals

        with (
            handle_signals(at_once=f"rankbias {args.command}"),
            dask_client(
                args.scheduler, args.workers, args.connect_timeout, args.worker_wait, args.debug
            ) as client,
        ):
            blocks = iter_blocks_on_dask(
                client,
                args.collection,
                lexicon,
                args.tokenizer,
                progress=show_progress,
                max_line_bytes=args.max_line_bytes,
            )
            for block in blocks:
                yield _stats_table(block, lexicon.groups)
    elif Path(args.collection).exists():
        for _, block in file_blocks(args, lexicon, False, show_progress, "stats"):
            yield _stats_table(block, lexicon.groups)
    else:  # an ir_datasets id
        stats = collection_statistics(args, lexicon, False, show_progress, description="stats")
        yield _stats_table(stats, lexicon.groups)


def run_stats(args) -> int:
    from rankbias.outputs import TableWriter, check_output

    out = check_output(args.out, inputs=[args.collection, args.terms])
    lexicon = load_lexicon(args.terms)
    clash = [g for g in lexicon.groups if g in RESERVED_COLUMNS]
    if clash:
        raise InputError(f"{args.terms}: group label(s) {clash} clash with output columns")
    warn_unmatchable(lexicon, args.tokenizer)
    with TableWriter(out) as writer:
        for table in document_blocks(args, lexicon, wanted(args)):
            writer.write(table)
        if writer.rows == 0:
            raise InputError(f"{args.collection}: the collection is empty; expected documents")
    print(f"{writer.rows} documents -> {out}", file=sys.stderr)
    return 0
