"""``rankbias stats``: per-document length, group counts and neutrality of a collection.

::

    rankbias stats --collection C --terms T [--tokenizer default|whitespace] [--workers N]
                   --out F

One row per document: ``docid``, ``length``, one count column per group (named by the group
label, e.g. ``f``, ``m``) and ``neutrality`` (``ω`` with ``τ = 1``, ``≤``).  The output format
follows the suffix of ``F``: ``.parquet``, ``.csv``, ``.tsv``, ``.csv.gz`` or ``.tsv.gz``.  The
output is checked before the work (format, writable location, not one of the inputs); a file
collection is streamed block by block into a temporary file beside ``F`` that is renamed into
place at the end, so a bad line, an interrupt or a full disk never leaves a partial output.
"""

from __future__ import annotations

import sys
from pathlib import Path

from rankbias.commands import options
from rankbias.commands.progress import estimate_lines, progress, wanted
from rankbias.distributed import add_engine_arguments, check_engine_arguments
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


def add_collection_arguments(parser, required: bool = True) -> None:
    """The arguments ``stats`` and ``score`` share: collection, terms, tokenizer, workers
    (``score`` needs a collection and a word list only for the term-based measures)."""
    parser.add_argument(
        "--collection",
        required=required,
        type=options.collection_source,
        help="docid<TAB>text file (optionally .gz; a pipe works) or ir_datasets id",
    )
    parser.add_argument(
        "--terms",
        required=required,
        type=options.input_file_or("default"),
        help="word list: 'term,group' lines, or a pair file whose first line is 'female,male' "
        "(groups f and m, like the project's own lists); 'default' for the project's gendered "
        "pairs",
    )
    parser.add_argument("--tokenizer", choices=options.TOKENIZERS, default="default")
    parser.add_argument(
        "--workers",
        type=options.worker_count,
        default=None,
        help="counting threads (local engine) or worker processes (--engine dask), 1 to the "
        "number of cores (default: all cores)",
    )
    add_engine_arguments(parser)


def load_lexicon(terms: str):
    """``--terms``: a word-list path in either format (``term,group`` lines, or a
    ``female,male`` pair file, told apart by the first line), or ``default`` for the packaged
    pair list."""
    from rankbias.lexicon import default_lexicon, read_word_list

    if terms == "default" and not Path(terms).exists():
        return default_lexicon()
    return read_word_list(terms)


def warn_unmatchable(lexicon, tokenizer: str) -> None:
    """Tell the user about terms the tokeniser splits (they can never be counted)."""
    from rankbias.text import unmatchable_terms

    lost = unmatchable_terms(lexicon, tokenizer)
    if lost:
        print(
            f"note: {len(lost)} term(s) are not single tokens under the {tokenizer} tokenizer "
            f"and are never counted: {', '.join(lost[:10])}",
            file=sys.stderr,
        )


def stats_frame(stats, tau: float = 1.0):
    """The output table of ``rankbias stats`` for one block of statistics (a DataFrame)."""
    from rankbias.metrics.fairr import neutrality

    frame = stats.to_frame()
    frame["neutrality"] = neutrality(stats.group_counts, tau=tau)
    return frame


def _stats_table(docids, lengths, group_counts, groups, tau: float = 1.0):
    """The output table of ``rankbias stats`` for one block, built directly in Arrow."""
    import pyarrow as pa

    from rankbias.metrics.fairr import neutrality

    columns = {"docid": _arrow(docids, pa.string()), "length": _arrow(lengths)}
    for j, group in enumerate(groups):
        columns[group] = _arrow(group_counts[:, j])
    columns["neutrality"] = _arrow(neutrality(group_counts, tau=tau))
    return pa.table(columns)


def _arrow(values, kind=None):
    """``values`` as an Arrow array.  A NumPy number column is wrapped from its buffer:
    ``pyarrow.array`` would import pandas (about 0.3 s of start-up) to inspect it."""
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
    from rankbias import collection

    if check_engine_arguments(args.engine, args.scheduler):
        from rankbias.distributed import dask_client, iter_stats_on_dask

        with dask_client(
            args.scheduler, args.workers, args.connect_timeout, args.worker_wait, args.debug
        ) as client:
            blocks = iter_stats_on_dask(
                client, args.collection, lexicon, args.tokenizer, progress=show_progress
            )
            for b in blocks:
                yield _stats_table(b.docids, b.lengths, b.group_counts, lexicon.groups)
        return
    source = Path(args.collection)
    if source.exists():
        _, raw_blocks = collection.iter_blocks(
            source, lexicon, args.tokenizer, False, args.workers, collection.DEFAULT_BLOCK_BYTES
        )
        counted = progress(
            raw_blocks,
            show_progress,
            total=estimate_lines(source),
            unit="doc",
            description="stats",
            weight=lambda block: len(block.lengths),
        )
        for b in counted:
            yield _stats_table(b.docids, b.lengths, b.group_counts, lexicon.groups)
        return
    stats = collection.stats_from_pairs(
        ir_datasets_pairs(args.collection, show_progress, "stats"),
        lexicon,
        args.collection,
        args.tokenizer,
        workers=args.workers,
    )
    yield _stats_table(stats.docids, stats.lengths, stats.group_counts, stats.groups)


def ir_datasets_pairs(dataset_id: str, show_progress: bool, description: str):
    """``(docid, text)`` of an ``ir_datasets`` corpus; a failed download is an InputError."""
    from rankbias import collection

    corpus = collection.ir_datasets_corpus(dataset_id)
    try:
        total = corpus.docs_count()
    except Exception:  # the count is only for the progress bar
        total = None
    documents = progress(
        corpus.docs_iter(), show_progress, total=total, unit="doc", description=description
    )
    try:
        for doc in documents:
            yield doc.doc_id, collection.document_text(doc)
    except OSError as exc:  # network errors of the download, a missing local copy
        raise InputError(
            f"collection {dataset_id!r}: ir_datasets could not download or read it ({exc}); "
            "expected the dataset available locally (see ir_datasets' messages above) or a "
            "docid<TAB>text file"
        ) from exc


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
