"""``rankbias score``: per-query bias metrics of run files, as a tidy CSV.

::

    rankbias score --collection C --terms T --run R [--run R ...] [--cutoffs 5,10,20]
                   [--metrics LIST] [--background RUN|collection] [--background-depth N]
                   [--order score|file] [--tau 1] [--strict]
                   [--tokenizer default|whitespace] [--distance l1|l2|jsd|kl]
                   [--missing error|neutral] --out F.csv

To reproduce the released NFaiRR script (metrics_fairness.py of CPJKU/FairnessRetrievalResults)
use ``--tokenizer whitespace --order file --background BM25.run --background-depth 200
--missing neutral``: it ranks by the run file's line order and reads 200 background documents.

Writes ``run,qid,metric,cutoff,value`` (``run`` = the run file's stem).  ``LIST`` is a
comma-separated list of registry names (``all`` for every metric; default: RaB/ARaB tc/tf/bool,
FaiRR, NFaiRR, AWRF, RBDF, TED, TExFAIR, TExFAIR without RBDF).  Missing documents are an error
unless ``--missing neutral``, which then reports their count; NaN values (undefined cases of
METRICS.md) are counted on stderr.
"""

from __future__ import annotations

import sys
from pathlib import Path

from rankbias.commands.stats import add_collection_arguments, load_lexicon, warn_unmatchable
from rankbias.distributed import check_engine_arguments
from rankbias.errors import InputError
from rankbias.metrics.texfair import DISTANCES
from rankbias.runs import read_run
from rankbias.scoring import DEFAULT_CUTOFFS, parse_metric_list, score_runs
from rankbias.text import collection_stats


def register(subparsers) -> None:
    """Add the ``score`` command to the ``rankbias`` parser."""
    parser = subparsers.add_parser(
        "score",
        help="per-query bias metrics of TREC run files",
        description="Score TREC run files with the term-based bias metrics "
        "(RaB/ARaB, FaiRR/NFaiRR, AWRF, TExFAIR) into a tidy CSV run,qid,metric,cutoff,value.",
    )
    add_collection_arguments(parser)
    parser.add_argument(
        "--run", action="append", required=True, help="TREC run file (repeat for several)"
    )
    parser.add_argument(
        "--cutoffs",
        default=",".join(map(str, DEFAULT_CUTOFFS)),
        help="comma-separated cutoffs (default: 5,10,20)",
    )
    parser.add_argument("--metrics", default=None, help="comma-separated metric names, or 'all'")
    parser.add_argument(
        "--background",
        default="collection",
        help="background for IFaiRR: a run file, or 'collection' (default)",
    )
    parser.add_argument(
        "--background-depth",
        type=int,
        default=None,
        help="use only the first N documents of each background list (the released NFaiRR "
        "script reads 200); default: all",
    )
    parser.add_argument(
        "--order",
        choices=("score", "file"),
        default="score",
        help="order of each ranked list: by score, ties by docid (default), or the run file's "
        "line order, as the released scripts do",
    )
    parser.add_argument("--tau", type=float, default=1.0, help="neutrality threshold (default 1)")
    parser.add_argument(
        "--strict", action="store_true", help="neutral when Σ M_g < τ (seed 002) instead of ≤ τ"
    )
    parser.add_argument(
        "--distance", choices=DISTANCES, default="l1", help="AWRF distance (default l1)"
    )
    parser.add_argument("--missing", choices=("error", "neutral"), default="error")
    parser.add_argument("--out", required=True, help="output CSV")
    parser.set_defaults(func=run_score)


def parse_cutoffs(text: str) -> tuple[int, ...]:
    """``"5,10,20"`` → ``(5, 10, 20)``; anything else is an InputError saying what was found."""
    try:
        cutoffs = tuple(int(part) for part in text.split(","))
    except ValueError:
        raise InputError(f"--cutoffs {text!r}: expected positive integers like 5,10,20") from None
    if not cutoffs or min(cutoffs) < 1:
        raise InputError(f"--cutoffs {text!r}: expected positive integers like 5,10,20")
    return cutoffs


def run_score(args) -> int:
    cutoffs = parse_cutoffs(args.cutoffs)
    try:
        metrics = parse_metric_list(args.metrics)
    except ValueError as exc:
        raise InputError(f"--metrics: {exc}") from None
    lexicon = load_lexicon(args.terms)
    warn_unmatchable(lexicon, args.tokenizer)
    runs = [read_run(path, order=args.order) for path in args.run]
    if args.background == "collection":
        background = "collection"
    else:
        background = read_run(args.background, order=args.order)
        if args.background_depth is not None:
            background = background.cut(args.background_depth)
    per_term = any(m.startswith(("rab_tf_paper", "arab_tf_paper")) for m in metrics)
    options = dict(
        metrics=metrics,
        cutoffs=cutoffs,
        background=background,
        tau=args.tau,
        strict=args.strict,
        distance=args.distance,
        missing=args.missing,
    )
    if check_engine_arguments(args):
        from rankbias.distributed import score_for_command

        frame = score_for_command(args, runs, lexicon, per_term, **options)
    else:
        stats = collection_stats(
            args.collection, lexicon, args.tokenizer, per_term=per_term, workers=args.workers
        )
        frame = score_runs(runs, stats, **options)
    out = Path(args.out)
    out.parent.mkdir(parents=True, exist_ok=True)
    frame.to_csv(out, index=False)
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
