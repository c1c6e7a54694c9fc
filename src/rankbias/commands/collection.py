"""What ``rankbias stats`` and ``rankbias score`` share: the collection, the word list, the
tokeniser, the workers and the engine (``--engine local|dask`` with its cluster options)."""

from __future__ import annotations

import sys
from pathlib import Path

from rankbias.commands import options
from rankbias.commands.progress import estimate_lines, progress
from rankbias.distributed import CONNECT_TIMEOUT_S, WAIT_FOR_WORKERS_S
from rankbias.errors import InputError
from rankbias.inputs import MAX_LINE_BYTES, check_unchanged, file_identity

ENGINES = ("local", "dask")


def add_collection_arguments(parser, required: bool = True) -> None:
    """The arguments ``stats`` and ``score`` share: collection, terms, tokenizer, workers and
    engine (``score`` needs a collection and a word list only for the term-based measures)."""
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
        "--max-line-bytes",
        type=options.positive_int,
        default=MAX_LINE_BYTES,
        metavar="N",
        help=f"the longest line a collection may have (default {MAX_LINE_BYTES}, 64 MiB); a "
        "longer one, or an input without line ends, is an error",
    )
    parser.add_argument(
        "--workers",
        type=options.worker_count,
        help="counting threads (local engine) or worker processes (--engine dask without "
        "--scheduler), 1 to the number of cores (default: all cores)",
    )
    parser.add_argument(
        "--engine",
        choices=ENGINES,
        default="local",
        help="local: threads on this machine (default); dask: partitions on a Dask "
        "cluster (needs the 'dask' extra)",
    )
    parser.add_argument(
        "--scheduler",
        type=options.scheduler_address,
        metavar="ADDRESS",
        help="with --engine dask: address of a running `dask scheduler` (tcp://HOST:PORT); "
        "default: a local cluster of --workers single-threaded processes",
    )
    parser.add_argument(
        "--connect-timeout",
        type=options.seconds,
        metavar="SECONDS",
        help=f"with --scheduler: how long to wait for it to answer (default {CONNECT_TIMEOUT_S:g})",
    )
    parser.add_argument(
        "--worker-wait",
        type=options.seconds,
        metavar="SECONDS",
        help="with --engine dask: how long the cluster may have no worker, at the start or "
        f"after one dies (default {WAIT_FOR_WORKERS_S:g})",
    )


def check_engine_arguments(args) -> bool:
    """True when the command should run on Dask.  An option of the Dask engine without it
    (``--scheduler``, ``--worker-wait``; ``--connect-timeout`` without ``--scheduler``) or
    ``--workers`` with ``--scheduler`` is an error, not ignored; their defaults are filled in
    here."""
    given = {
        "--scheduler": args.scheduler,
        "--worker-wait": args.worker_wait,
        "--connect-timeout": args.connect_timeout,
    }
    for option, value in given.items():
        if value is not None and args.engine != "dask":
            shown = f"{value:g}" if isinstance(value, float) else value
            raise InputError(
                f"{option} {shown}: found --engine {args.engine}; expected --engine dask"
            )
    if args.workers is not None and args.scheduler is not None:
        raise InputError(
            f"--workers {args.workers}: the cluster at --scheduler has the workers started on "
            "it; expected --workers only for this machine's threads or local cluster"
        )
    if args.connect_timeout is not None and args.scheduler is None:
        raise InputError(
            f"--connect-timeout {args.connect_timeout:g}: applies to --scheduler ADDRESS, not to "
            "the local cluster started without it; expected --scheduler too"
        )
    args.connect_timeout = (
        CONNECT_TIMEOUT_S if args.connect_timeout is None else args.connect_timeout
    )
    args.worker_wait = WAIT_FOR_WORKERS_S if args.worker_wait is None else args.worker_wait
    return args.engine == "dask"


def load_lexicon(terms: str):
    """``--terms``: a word-list path in either format (told apart by the first line), or
    ``default`` for the packaged pair list."""
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


def file_blocks(args, lexicon, per_term: bool, show_progress: bool, description: str):
    """``(matcher, block)`` for each :class:`~rankbias.collection.Block` of the collection file
    ``--collection``, with a progress bar; each block is checked to come from the file first
    opened (never the statistics of two files)."""
    from rankbias import collection

    source = Path(args.collection)
    started = file_identity(source)
    matcher, blocks = collection.iter_blocks(
        source, lexicon, args.tokenizer, per_term, args.workers, max_line_bytes=args.max_line_bytes
    )
    counted = progress(
        blocks,
        show_progress,
        total=estimate_lines(source),
        unit="doc",
        description=description,
        weight=lambda block: len(block.lengths),
    )
    for block in counted:
        check_unchanged(source, started)
        yield matcher, block
    check_unchanged(source, started)


def collection_statistics(
    args, lexicon, per_term: bool, show_progress: bool, check=None, description="collection"
):
    """The :class:`~rankbias.text.DocStats` of ``--collection``, with a progress bar;
    ``check()``, if given, is called after every block of a collection file (it raises to stop
    the reading)."""
    from rankbias import collection

    if not Path(args.collection).exists():
        pairs = ir_datasets_pairs(args.collection, show_progress, description)
        return collection.stats_from_pairs(
            pairs, lexicon, args.collection, args.tokenizer, per_term, args.workers
        )
    parts = []
    for matcher, block in file_blocks(args, lexicon, per_term, show_progress, description):
        parts.append(block.stats(matcher))
        if check is not None:
            check()
    return collection.concat_stats(parts, args.collection)
