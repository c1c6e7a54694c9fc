"""``rankbias score``: per-query bias measures of run files, as a tidy table
``run,qid,metric,cutoff,value`` (``run`` = the run file's stem), on either engine.

A measure of ``--metrics`` with a cut-off (``nfairr(tau=0)@10``) is scored there only, the others
at ``--cutoffs`` (default measures: :data:`rankbias.scoring.DEFAULT_MEASURES`).  Each reads the
inputs it declares; a missing one is an error naming the option (:data:`INPUT_OPTIONS`).
``--tau``, ``--strict``, ``--distance`` and ``--background RUN`` set those parameters of the
listed measures that do not set them (:data:`SHORTHANDS`).  ``--tokenizer whitespace --order file
--background BM25.run --background-depth 200 --missing neutral`` reproduces the released NFaiRR
script (metrics_fairness.py of CPJKU/FairnessRetrievalResults).
"""

from __future__ import annotations

import contextlib
import os
import sys
import threading

from rankbias.commands import options
from rankbias.commands.collection import (
    add_collection_arguments,
    check_engine_arguments,
    collection_statistics,
    load_lexicon,
    warn_unmatchable,
)
from rankbias.commands.progress import wanted
from rankbias.errors import InputError

#: Each input of the measures: the options that supply it (``args`` attributes, all needed) and
#: how a message names them.
INPUT_OPTIONS = {
    "term_statistics": (("collection", "terms"), "--collection and --terms"),
    "relevance": (("qrels",), "--qrels FILE"),
    "polarisation_scores": (("polarisation",), "--polarisation FILE"),
    "group_membership": (("groups",), "--groups FILE"),
    "counterfactual_run": (("counterfactual",), "--counterfactual RUN (one per --run)"),
}
#: Command-line shorthands for measure parameters: option (= parameter) → default.
SHORTHANDS = {"tau": 1.0, "strict": False, "distance": "l1"}


def register(subparsers) -> None:
    """Add the ``score`` command to the ``rankbias`` parser."""
    parser = subparsers.add_parser(
        "score",
        help="per-query bias measures of TREC run files",
        description="Score TREC run files with any registered measure (see 'rankbias "
        "metrics') into a tidy table run,qid,metric,cutoff,value.  Each measure reads the "
        "inputs it needs: --collection and --terms (term-based measures), --qrels (PRF), "
        "--polarisation (Duo), --groups (rND, rKL), --counterfactual (RBO, CRBO).",
    )
    add_collection_arguments(parser, required=False)
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
        help="comma-separated measures, each name, name@k or name(key=value,...)@k "
        "(see 'rankbias metrics'), or 'all' (every term-based measure)",
    )
    parser.add_argument(
        "--qrels", type=options.input_file, help="TREC qrels (the PRF family's relevance)"
    )
    parser.add_argument(
        "--polarisation",
        type=options.input_file,
        help="polarisation scores of Duo: a CSV or TSV file with the header docid,score "
        "(or qid,docid,score)",
    )
    parser.add_argument(
        "--groups",
        type=options.input_file,
        help="group membership of rND/rKL: a CSV or TSV file with the header docid,protected "
        "(1 = protected, 0 = not)",
    )
    parser.add_argument(
        "--counterfactual",
        action="append",
        type=options.input_file,
        help="the run of the same system on the counterfactual collection, for RBO/CRBO: one "
        "per --run, in the same order, matched by query id",
    )
    parser.add_argument(
        "--background",
        default="collection",
        type=options.input_file_or("collection"),
        help="background for IFaiRR/NFaiRR: a run file (sets background=run for the measures "
        "that read one), or 'collection' (default)",
    )
    parser.add_argument(
        "--background-depth",
        type=options.positive_int,
        help="with --background RUN: use only the first N >= 1 documents of each background "
        "list (the released NFaiRR script reads 200); default: all",
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
        help="neutrality threshold τ of the measures that declare it, a finite number >= 0 "
        "(default 1; another value shows in the label: nfairr(tau=0))",
    )
    parser.add_argument(
        "--strict",
        action="store_true",
        default=None,
        help="neutral when Σ M_g < τ instead of ≤ τ (strict=true of the measures that declare it)",
    )
    parser.add_argument(
        "--distance",
        choices=options.DISTANCES,
        help="AWRF distance (default l1; distance= of the measures that declare it)",
    )
    parser.add_argument("--missing", choices=("error", "neutral"), default="error")
    parser.add_argument(
        "--out",
        required=True,
        help="output file: .csv, .tsv, .parquet, .csv.gz or .tsv.gz (written atomically)",
    )
    parser.set_defaults(func=run_score)


def measures_of(args) -> list:
    """``--metrics`` parsed once, with the shorthand options rewritten into each measure's
    parameters; every message names the option."""
    from rankbias.metrics.measures import split_measure_list
    from rankbias.scoring import parse_metric_list, plan_measures

    try:
        requests = list(parse_metric_list(args.metrics))
    except (TypeError, ValueError) as exc:
        raise InputError(f"--metrics: {exc}") from None
    # the options given (None: not given), and --background RUN as background=run
    shorthands = {n: getattr(args, n) for n in SHORTHANDS if getattr(args, n) is not None}
    if args.background != "collection":
        shorthands["background"] = "run"
    rewritten, used = [], set()
    for request in requests:
        unset = {p.name for p in request.measure.parameters} - dict(request.given).keys()
        used.update(unset & shorthands.keys())
        values = {n: v for n, v in shorthands.items() if n in unset and v != SHORTHANDS.get(n)}
        request = request.with_parameters(**values)
        if request.parameters().get("background") == "run":
            if args.background == "collection":
                raise InputError(
                    f"--metrics {request}: reads a background run; expected --background RUN"
                )
            used.add("background")  # also where the measure says background=run itself
        rewritten.append(request)
    spelled = args.metrics is not None and args.metrics.strip() != "all"
    try:  # a measure twice at a cut-off, named as the user spelled it
        plan_measures(
            rewritten, args.cutoffs, split_measure_list(args.metrics) if spelled else None
        )
    except ValueError as exc:
        raise InputError(f"--metrics: {str(exc).removeprefix('metrics: ')}") from None
    for name in sorted(set(shorthands) - used):  # given, but no measure takes it
        raise InputError(
            f"--{name}: no measure of --metrics without its own {name}= takes it (see "
            "rankbias metrics); expected it with measures such as "
            f"{', '.join(_declaring(name))}, or not at all"
        )
    return rewritten


def _declaring(parameter: str) -> list[str]:
    from rankbias.metrics.measures import measures

    return [m.name for m in measures() if parameter in {p.name for p in m.parameters}][:4]


def _check_inputs(args, requests) -> None:
    """Every input the measures need is given, and no option goes unused."""
    from rankbias.metrics.measures import measures
    from rankbias.runs import run_name
    from rankbias.scoring import required_inputs

    needed = required_inputs(requests)
    for kind, names in needed.items():
        attributes, expected = INPUT_OPTIONS[kind.value]
        if any(getattr(args, name) is None for name in attributes):
            raise InputError(
                f"--metrics: {', '.join(names)} need(s) {kind.value.replace('_', ' ')}; "
                f"expected {expected}"
            )
    for kind, (attributes, _) in INPUT_OPTIONS.items():  # given, but read by no measure
        given = [a for a in attributes if getattr(args, a) is not None]
        if given and kind not in {k.value for k in needed}:
            readers = [m.name for m in measures() if kind in {i.value for i in m.inputs}][:4]
            raise InputError(
                f"--{given[0]}: no measure of --metrics reads {kind.replace('_', ' ')}; "
                f"expected it with measures such as {', '.join(readers)}, or not at all"
            )
    if (args.collection is None) != (args.terms is None):
        lacking = "--terms" if args.terms is None else "--collection"
        raise InputError(f"--collection and --terms go together; expected {lacking} too")
    if args.counterfactual is not None and len(args.counterfactual) != len(args.run):
        raise InputError(
            f"--counterfactual: found {len(args.counterfactual)} file(s) for {len(args.run)} "
            "--run file(s); expected one counterfactual run per --run, in the same order"
        )
    if args.background_depth is not None and args.background == "collection":
        raise InputError("--background-depth: expected --background RUN too")
    named = {}  # a run is named after its file: two of one name are refused before any reading
    for path in args.run:
        if (name := run_name(os.fspath(path))) in named:
            raise InputError(
                f"--run {named[name]} and --run {path} are both run {name!r} (a run is named "
                "after its file); expected files of different names"
            )
        named[name] = path


def on_daemon_thread(function, name: str):
    """A :class:`~concurrent.futures.Future` of ``function()`` run on a daemon thread.  A read
    that blocks for ever (a FIFO nobody writes to) then never keeps the command from ending: the
    first SIGTERM or Ctrl-C ends it, where a thread pool would be joined first, and wait with it."""
    from concurrent.futures import Future

    future = Future()

    def run() -> None:
        try:
            future.set_result(function())
        except BaseException as exc:  # raised on the caller's thread
            future.set_exception(exc)

    threading.Thread(target=run, name=name, daemon=True).start()
    return future


def finished(future):
    """``future`` once done, waited for in steps of a tenth of a second, ended by a signal whose
    exception Python swallowed (seen: a SIGTERM that arrived while a module was compiled left
    the command waiting for ever on a ``--run`` FIFO nobody wrote to)."""
    from concurrent.futures import wait

    from rankbias.outputs import PENDING_SIGNALS, Terminated

    while not future.done():
        wait([future], timeout=0.1)
        if PENDING_SIGNALS:  # the handler's exception was swallowed (raised inside an import)
            raise Terminated(PENDING_SIGNALS[0])
    return future


def read_runs(paths, order: str) -> list:
    """The run files, read one after the other on one thread (Arrow's reader parses on every
    core): one file's text and table in memory at a time, and the first bad file in
    command-line order is the one reported."""
    from rankbias.runs import read_run

    reading = on_daemon_thread(
        lambda: [read_run(path, order=order) for path in paths], "rankbias-read"
    )
    return finished(reading).result()


def _read_with_statistics(read_inputs, statistics):
    """``(runs, background, stats)``: the run files are read on a thread while the collection
    is counted (the two share the cores: Arrow's reader and the scanner release the
    interpreter lock).  A bad run file is reported first, as if it had been read first, and
    stops the counting at the next block; a signal ends the command at once."""
    reading = on_daemon_thread(read_inputs, "rankbias-runs")

    def check() -> None:
        if reading.done() and reading.exception() is not None:
            raise reading.exception()

    try:
        stats = statistics(check)
    except Exception:
        if finished(reading).exception() is not None:  # the runs' error comes first
            raise reading.exception() from None
        raise
    runs, background = finished(reading).result()
    return runs, background, stats


def run_score(args) -> int:
    from rankbias.metrics.measures import Input
    from rankbias.outputs import check_output, handle_signals, write_table
    from rankbias.runs import read_run
    from rankbias.scoring import score_runs

    requests = measures_of(args)
    _check_inputs(args, requests)
    background_file = None if args.background == "collection" else args.background
    named = [args.collection, args.terms, *args.run, background_file, args.qrels]
    named += [args.polarisation, args.groups, *(args.counterfactual or [])]
    out = check_output(args.out, inputs=[path for path in named if path is not None])
    on_dask = check_engine_arguments(args)
    term_based = any(Input.TERM_STATISTICS in r.measure.inputs for r in requests)
    show = wanted(args)
    lexicon = None
    if args.terms is not None:
        lexicon = load_lexicon(args.terms)
        warn_unmatchable(lexicon, args.tokenizer)

    def read_inputs():
        runs = read_runs(args.run, args.order)
        if background_file is None:
            return runs, "collection"
        background = read_run(background_file, order=args.order)
        if args.background_depth is not None:
            background = background.cut(args.background_depth)
        return runs, background

    per_term = any(r.parameters().get("magnitude") == "tf_paper" for r in requests)
    if on_dask:
        from rankbias.distributed import collection_stats_on_dask, dask_client, score_runs_on_dask

        runs, background = read_inputs()
        inputs = _other_inputs(args, runs, background)
        with (
            handle_signals(at_once=f"rankbias {args.command}"),
            dask_client(
                args.scheduler, args.workers, args.connect_timeout, args.worker_wait, args.debug
            ) as client,
        ):
            stats = None
            if term_based:
                stats = collection_stats_on_dask(
                    client, args.collection, lexicon, args.tokenizer, per_term, None, show,
                    args.max_line_bytes,
                )  # fmt: skip
            with _named_by_option(args):  # a library message names its keyword argument
                frame = score_runs_on_dask(
                    client, runs, stats, requests, args.cutoffs, progress=show, **inputs
                )
    else:
        if term_based:
            runs, background, stats = _read_with_statistics(
                read_inputs,
                lambda check: collection_statistics(args, lexicon, per_term, show, check),
            )
        else:
            (runs, background), stats = read_inputs(), None
        inputs = _other_inputs(args, runs, background)
        with _named_by_option(args):
            frame = score_runs(runs, stats, requests, args.cutoffs, **inputs)
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


#: The option that supplies each keyword input of ``score_runs``.
OPTIONS = {"qrels": "--qrels", "polarisation": "--polarisation", "group_membership": "--groups",
           "background": "--background"}  # fmt: skip


@contextlib.contextmanager
def _named_by_option(args):
    """A library message about a keyword input (``polarisation: …``) names the option and the
    file that supplied it instead (``--polarisation FILE: …``)."""
    try:
        yield
    except InputError as exc:
        argument, _, rest = str(exc).partition(": ")
        if argument == "counterfactual":
            raise InputError(f"--counterfactual: {rest}") from None
        if argument in OPTIONS:
            path = getattr(args, OPTIONS[argument][2:])
            raise InputError(f"{OPTIONS[argument]} {path}: {rest}") from None
        raise


def _other_inputs(args, runs, background) -> dict:
    """The keyword inputs of ``score_runs`` that the options supply, read from their files."""
    from rankbias.annotations import read_group_membership, read_polarisation
    from rankbias.runs import read_qrels, read_run

    inputs = {"background": background, "missing": args.missing}
    if args.qrels is not None:
        inputs["qrels"] = read_qrels(args.qrels)
    if args.polarisation is not None:
        inputs["polarisation"] = read_polarisation(args.polarisation)
    if args.groups is not None:
        inputs["group_membership"] = read_group_membership(args.groups)
    if args.counterfactual is not None:
        inputs["counterfactual"] = {
            run.name: read_run(path, order=args.order)
            for run, path in zip(runs, args.counterfactual, strict=True)
        }
    return inputs
