"""``rankbias score``: per-query bias metrics of run files, as a tidy table.

::

    rankbias score --collection C --terms T --run R [--run R ...] [--cutoffs 5,10,20]
                   [--metrics LIST] [--background RUN|collection] [--background-depth N]
                   [--order score|file] [--tau 1] [--strict]
                   [--tokenizer default|whitespace] [--distance l1|l2|jsd|kl]
                   [--missing error|neutral] --out F.csv

To reproduce the released NFaiRR script (metrics_fairness.py of CPJKU/FairnessRetrievalResults)
use ``--tokenizer whitespace --order file --background BM25.run --background-depth 200
--missing neutral``: it ranks by the run file's line order and reads 200 background documents.

Writes ``run,qid,metric,cutoff,value`` (``run`` = the run file's stem) in the format of the
suffix of ``F`` (``.csv``, ``.tsv``, ``.parquet``, ``.csv.gz``, ``.tsv.gz``), atomically; the
output is checked before the work and may not be one of the inputs.  ``LIST`` is a
comma-separated list of measures as ``rankbias metrics`` lists them, each optionally with
parameters and a cut-off (``texfair@10``, ``nfairr(tau=0)@10``, ``arab(magnitude=tf)@5``; a
measure with ``@k`` is scored at ``k`` only, the others at ``--cutoffs``), or ``all`` for every
measure computable from term statistics (default: RaB/ARaB tc/tf/bool, FaiRR, NFaiRR, AWRF,
RBDF, TED, TExFAIR, TExFAIR without RBDF).  The command line supplies term statistics only: a
measure that needs other inputs (relevance, polarisation scores, group membership, a
counterfactual run) is an error naming the missing input.  Missing documents are an error
unless ``--missing neutral``, which then reports their count; NaN values (the undefined cases of
the book's "Conventions" page) are counted on stderr.
"""

from __future__ import annotations

import os
import sys
from pathlib import Path

from rankbias.commands import options
from rankbias.commands.progress import estimate_lines, progress, wanted
from rankbias.commands.stats import (
    add_collection_arguments,
    ir_datasets_pairs,
    load_lexicon,
    warn_unmatchable,
)
from rankbias.distributed import check_engine_arguments
from rankbias.errors import InputError


def register(subparsers) -> None:
    """Add the ``score`` command to the ``rankbias`` parser."""
    parser = subparsers.add_parser(
        "score",
        help="per-query bias metrics of TREC run files",
        description="Score TREC run files with the term-based bias metrics "
        "(RaB/ARaB, FaiRR/NFaiRR, AWRF, TExFAIR) into a tidy table run,qid,metric,cutoff,value.",
    )
    add_collection_arguments(parser)
    parser.add_argument(
        "--run",
        action="append",
        required=True,
        type=options.input_file,
        help="TREC run file (repeat for several)",
    )
    parser.add_argument(
        "--cutoffs",
        type=options.cutoff_list,
        default=options.DEFAULT_CUTOFFS,
        help="comma-separated cutoffs, integers >= 1, each used once (default: 5,10,20)",
    )
    parser.add_argument(
        "--metrics",
        default=None,
        help="comma-separated measures, each name, name@k or name(key=value,...)@k "
        "(see 'rankbias metrics'), or 'all'",
    )
    parser.add_argument(
        "--background",
        default="collection",
        type=options.input_file_or("collection"),
        help="background for IFaiRR: a run file, or 'collection' (default)",
    )
    parser.add_argument(
        "--background-depth",
        type=options.positive_int,
        default=None,
        help="use only the first N >= 1 documents of each background list (the released "
        "NFaiRR script reads 200); default: all",
    )
    parser.add_argument(
        "--order",
        choices=("score", "file"),
        default="score",
        help="order of each ranked list: by score, ties by docid (default), or the run file's "
        "line order, as the released scripts do",
    )
    parser.add_argument(
        "--tau",
        type=options.nonnegative_float,
        default=1.0,
        help="neutrality threshold, a finite number >= 0 (default 1)",
    )
    parser.add_argument(
        "--strict", action="store_true", help="neutral when Σ M_g < τ instead of ≤ τ"
    )
    parser.add_argument(
        "--distance", choices=options.DISTANCES, default="l1", help="AWRF distance (default l1)"
    )
    parser.add_argument("--missing", choices=("error", "neutral"), default="error")
    parser.add_argument(
        "--out",
        required=True,
        help="output file: .csv, .tsv, .parquet, .csv.gz or .tsv.gz (written atomically)",
    )
    parser.set_defaults(func=run_score)


def collection_statistics(args, lexicon, per_term: bool, show_progress: bool, check=None):
    """The :class:`~rankbias.text.DocStats` of ``--collection``, with a progress bar;
    ``check()``, if given, is called after every block of a collection file (it raises to stop
    the reading)."""
    from rankbias import collection, text

    source = Path(args.collection)
    if source.exists():
        blocks = collection.iter_collection_stats(
            source, lexicon, args.tokenizer, per_term=per_term, workers=args.workers
        )
        parts = []
        for part in progress(
            blocks,
            show_progress,
            total=estimate_lines(source),
            unit="doc",
            description="collection",
            weight=len,
        ):
            parts.append(part)
            if check is not None:
                check()
        if not parts:
            raise InputError(
                f"{args.collection}: the collection is empty; expected 'docid<TAB>text' lines"
            )
        return text.DocStats.concat(parts)
    pairs = ir_datasets_pairs(args.collection, show_progress, "collection")
    return collection.stats_from_pairs(
        pairs, lexicon, args.collection, args.tokenizer, per_term, args.workers
    )


def read_runs(paths, order: str, workers: int | None) -> list:
    """The run files, read on up to ``workers`` threads (Arrow parses and sorts without the
    global interpreter lock); the first bad file in command-line order is the one reported."""
    from concurrent.futures import ThreadPoolExecutor

    from rankbias.runs import read_run

    threads = min(len(paths), workers or os.cpu_count() or 1)
    if threads <= 1:
        return [read_run(path, order=order) for path in paths]
    with ThreadPoolExecutor(max_workers=threads, thread_name_prefix="rankbias-read") as pool:
        return list(pool.map(lambda path: read_run(path, order=order), paths))


def _read_with_statistics(read_inputs, statistics):
    """``(runs, background, stats)``: the run files are read on a thread while the collection
    is counted (the two share the cores: Arrow's reader and the scanner release the
    interpreter lock).  A bad run file is reported first, as if it had been read first, and
    stops the counting at the next block."""
    from concurrent.futures import ThreadPoolExecutor

    with ThreadPoolExecutor(max_workers=1, thread_name_prefix="rankbias-runs") as pool:
        reading = pool.submit(read_inputs)

        def check() -> None:
            if reading.done() and reading.exception() is not None:
                raise reading.exception()

        try:
            stats = statistics(check)
        except BaseException:
            if reading.exception() is not None:  # waits for the runs: their error comes first
                raise reading.exception() from None
            raise
        runs, background = reading.result()
    return runs, background, stats


def run_score(args) -> int:
    from rankbias.metrics.measures import Input, parse_measure
    from rankbias.outputs import check_output, write_table
    from rankbias.runs import read_run
    from rankbias.scoring import parse_metric_list, required_inputs, score_runs

    background_file = None if args.background == "collection" else args.background
    out = check_output(args.out, inputs=[args.collection, args.terms, *args.run, background_file])
    try:
        metrics = parse_metric_list(args.metrics)
    except ValueError as exc:
        raise InputError(f"--metrics: {exc}") from None
    for kind, names in required_inputs(metrics).items():
        if kind != Input.TERM_STATISTICS:
            raise InputError(
                f"--metrics: {', '.join(names)} need(s) the input {kind.value}, which the "
                "command line cannot supply (it computes term statistics only); score it "
                "with rankbias.scoring.score_runs"
            )
    show = wanted(args)
    lexicon = load_lexicon(args.terms)
    warn_unmatchable(lexicon, args.tokenizer)

    def read_inputs():
        runs = read_runs(args.run, args.order, args.workers)
        if background_file is None:
            return runs, "collection"
        background = read_run(background_file, order=args.order)
        if args.background_depth is not None:
            background = background.cut(args.background_depth)
        return runs, background

    per_term = any(dict(parse_measure(m).given).get("magnitude") == "tf_paper" for m in metrics)
    score_options = dict(
        metrics=metrics,
        cutoffs=args.cutoffs,
        tau=args.tau,
        strict=args.strict,
        distance=args.distance,
        missing=args.missing,
    )
    if check_engine_arguments(args):
        from rankbias.distributed import score_for_command

        runs, background = read_inputs()
        frame = score_for_command(
            args, runs, lexicon, per_term, background=background, **score_options
        )
    else:
        runs, background, stats = _read_with_statistics(
            read_inputs, lambda check: collection_statistics(args, lexicon, per_term, show, check)
        )
        frame = score_runs(runs, stats, background=background, **score_options)
    write_table(out, frame)
    for name, count in frame.attrs["missing_documents"].items():
        if count:
            print(
                f"{name}: {count} retrieved document(s) absent from the collection, "
                "counted as neutral (--missing neutral)",
                file=sys.stderr,
            )
    for (run, metric), count in frame.attrs["undefined_values"].items():
        print(f"{run}: {metric}: {count} undefined value(s) (NaN)", file=sys.stderr)
    print(f"{len(frame)} rows -> {out}", file=sys.stderr)
    return 0
