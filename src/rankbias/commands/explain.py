"""``rankbias explain``: which documents make a list biased?

One row per document of each list, down to each measure's cut-off, with its contribution to the
value ``rankbias score`` reports (:mod:`rankbias.analysis.explain`: exact shares that add up to
the value for RaB, ARaB, FaiRR and NFaiRR; Shapley values for the exposure measures).  The
collection is read on this machine (``--engine local``).
"""

from __future__ import annotations

import sys

from rankbias.commands.collection import (
    add_collection_arguments,
    check_engine_arguments,
    collection_statistics,
    load_lexicon,
)
from rankbias.commands.compare import add_plot_argument, seed
from rankbias.commands.options import input_file, positive_int
from rankbias.commands.progress import wanted
from rankbias.errors import InputError


def register(subparsers) -> None:
    """Add the ``explain`` command to the ``rankbias`` parser."""
    parser = subparsers.add_parser(
        "explain",
        help="each document's contribution to a list's bias",
        description="For each --qid of the run and each measure (with its cut-off), one row "
        "per listed document: rank, docid, group counts and its contribution to the value "
        "rankbias score reports — exact shares for RaB, ARaB, FaiRR and NFaiRR, Shapley values "
        "for AWRF, TED, TExFAIR and RBDF.",
    )
    add_collection_arguments(parser)
    parser.add_argument("--run", required=True, type=input_file, help="a TREC run file")
    parser.add_argument("--qid", required=True, action="append", help="a query of the run")
    parser.add_argument(
        "--background", type=input_file, metavar="RUN", help="the background run of background=run"
    )
    parser.add_argument("--metrics", required=True, help="measures with cut-offs: nfairr@10,…")
    parser.add_argument("--out", required=True, help="the table (.csv, .tsv, .parquet, …)")
    parser.add_argument(
        "--top-terms",
        type=positive_int,
        metavar="N",
        help="also print the N terms that weigh most in each list",
    )
    parser.add_argument(
        "--permutations",
        type=positive_int,
        metavar="N",
        help="random orders of a Shapley estimate beyond 10 documents (default 1000)",
    )
    parser.add_argument("--seed", type=seed, metavar="N", help="of those orders (default 0)")
    add_plot_argument(parser, "the lists as strips coloured by contribution")
    parser.set_defaults(func=run_explain)


def _sampled(text: str) -> bool:
    """Whether ``text`` is a measure whose Shapley values are estimated from random orders."""
    from rankbias.analysis.explain import EXACT_MAX_DOCUMENTS, SHAPLEY
    from rankbias.metrics.measures import parse_measure

    try:
        request = parse_measure(text)
    except ValueError:
        return False  # explain() names it
    return request.measure.name in SHAPLEY and (request.cutoff or 0) > EXACT_MAX_DOCUMENTS


def run_explain(args) -> int:
    from rankbias.analysis.explain import EXACT_MAX_DOCUMENTS, explain, strip_plot, top_terms
    from rankbias.metrics.measures import split_measure_list
    from rankbias.outputs import check_output, write_table
    from rankbias.runs import read_run
    from rankbias.scoring import plan_measures

    if check_engine_arguments(args):
        raise InputError("--engine dask: explain reads the collection on this machine only")
    inputs = [args.collection, args.terms, args.run, args.background]
    out = check_output(args.out, inputs=inputs)
    plot = (
        check_output(args.plot, inputs=inputs, option="--plot", table=False) if args.plot else None
    )
    try:
        metrics = split_measure_list(args.metrics)
        plan_measures(metrics)  # a measure twice, however spelled, before anything is read
    except ValueError as exc:
        raise InputError(f"--metrics: {str(exc).removeprefix('metrics: ')}") from None
    sampled = [m for m in metrics if _sampled(m)]
    for option in ("permutations", "seed"):  # given, but no list is long enough to sample
        if getattr(args, option) is not None and not sampled:
            raise InputError(
                f"--{option}: no measure of --metrics is a Shapley value over more than "
                f"{EXACT_MAX_DOCUMENTS} documents (AWRF, TED, TExFAIR or RBDF with a cut-off "
                f"above {EXACT_MAX_DOCUMENTS}), which alone draw random orders; expected it "
                "only with one"
            )
    if args.background and not any("background=run" in m.replace(" ", "") for m in metrics):
        raise InputError(
            f"--background {args.background}: no measure of --metrics reads it; expected one "
            "with background=run, e.g. nfairr(background=run)@10"
        )
    if twice := sorted({q for q in args.qid if args.qid.count(q) > 1}):
        raise InputError(f"--qid {', '.join(twice)}: given twice; expected each query once")
    run = read_run(args.run)
    background = read_run(args.background) if args.background else "collection"
    unknown = [qid for qid in args.qid if qid not in set(run.qids)]
    if unknown:
        raise InputError(f"--qid {', '.join(unknown)}: not a query of the run {args.run}")
    lexicon = load_lexicon(args.terms)
    stats = collection_statistics(
        args,
        lexicon,
        args.top_terms is not None or any("tf_paper" in m for m in metrics),
        wanted(args),
    )
    try:
        given = {
            k: getattr(args, k) for k in ("permutations", "seed") if getattr(args, k) is not None
        }
        table = explain(run, stats, args.qid, metrics, background=background, **given)
    except ValueError as exc:
        argument, _, rest = str(exc).partition(": ")
        option = f"--background {args.background}" if argument == "background" else None
        text = rest if option else str(exc)
        if "absent from the collection" in text:  # explain has no --missing
            text = text.partition("; expected")[0] + "; expected every docid in the collection"
            option = option or f"--run {args.run}"
        raise InputError(f"{option or f'--metrics {args.metrics}'}: {text}") from None
    write_table(out, table)
    if plot is not None:
        strip_plot(table, plot)
    if args.top_terms:
        cutoff = max(int(c) for c in table["cutoff"])
        for qid in args.qid:
            terms = top_terms(run, stats, qid, cutoff, args.top_terms)
            print(f"{qid}: the terms that weigh most in the top {cutoff}")
            print(terms.to_string(index=False, float_format=lambda v: f"{v:.3f}"))
    print(f"{len(table)} rows -> {out}", file=sys.stderr)
    return 0
