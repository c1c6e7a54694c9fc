"""``rankbias compare``: is the difference in bias between systems real?

Reads the table ``rankbias score`` writes and compares every pair of runs (or every run with
``--baseline``) on every measure and cut-off, over the queries both define
(:func:`rankbias.analysis.compare.compare`); writes the table to ``--out``, shows it on the
terminal (not with ``--quiet``), and says how many values were undefined or missing.
"""

from __future__ import annotations

import argparse
import re
import sys

from rankbias.commands.options import input_file, nonnegative_float, positive_int

TESTS = ("randomisation", "t", "wilcoxon")  # rankbias.analysis.compare.TESTS
CORRECTIONS = ("holm", "bonferroni", "bh", "none")  # rankbias.analysis.compare.CORRECTIONS
PLOT_SUFFIXES = (".png", ".svg")


def probability(text: str) -> float:
    """A decimal number strictly between 0 and 1 (``0.95``)."""
    try:
        value = nonnegative_float(text)
    except argparse.ArgumentTypeError:  # said as "≥ 0", which 0 is not
        value = 0.0
    if not 0 < value < 1:
        raise argparse.ArgumentTypeError(f"{text!r}: expected a number between 0 and 1")
    return value


def seed(text: str) -> int:
    """A whole number ≥ 0 in ASCII digits."""
    if re.fullmatch(r"[0-9]{1,18}", text.strip(), re.ASCII) is None:
        raise argparse.ArgumentTypeError(f"{text!r}: expected a whole number ≥ 0")
    return int(text)


def plot_file(text: str) -> str:
    if not text.lower().endswith(PLOT_SUFFIXES):
        raise argparse.ArgumentTypeError(
            f"{text!r}: expected a file name ending in {' or '.join(PLOT_SUFFIXES)}"
        )
    return text


def add_plot_argument(parser, what: str) -> None:
    """``--plot FILE``: ``what``, drawn into a .png or .svg file."""
    parser.add_argument("--plot", type=plot_file, metavar="FILE", help=f"{what} (.png or .svg)")


def register(subparsers) -> None:
    """Add the ``compare`` command to the ``rankbias`` parser."""
    parser = subparsers.add_parser(
        "compare",
        help="paired significance tests of the differences between runs, per measure",
        description="Compare runs on the table 'rankbias score' wrote: for every measure, "
        "cut-off and pair of runs (or every run against --baseline), over the queries both "
        "define, the means, the mean paired difference with a bootstrap confidence interval, "
        "the paired standardised mean difference d_z, a paired test (randomisation by "
        "default: exact up to 16 queries, else sign flips) and p-values adjusted over all "
        "comparisons of the call. A run is named fairer only where the difference is "
        "significant; a pair whose runs leave different shares of queries undefined is "
        "'undetermined'.",
    )
    parser.add_argument("scores", type=input_file, help="the table rankbias score wrote")
    parser.add_argument("--out", required=True, help="the comparison table (.csv, .tsv, …)")
    parser.add_argument("--baseline", metavar="RUN", help="compare every run with this one")
    parser.add_argument(
        "--metrics",
        help="only these measures: names as in the table, each at all its cut-offs, "
        "or name@k at k only (nfairr,awrf@10)",
    )
    parser.add_argument("--test", choices=TESTS, default="randomisation")
    for flag, text in (
        (
            "--permutations",
            "the most random sign flips a comparison over more than 16 queries draws: 10,000 "
            "first, more only while its decision is unsettled (default 1000000; randomisation)",
        ),
        ("--bootstrap", "bootstrap resamples of the interval (default 10000)"),
    ):
        parser.add_argument(flag, type=positive_int, metavar="N", help=text)
    parser.add_argument(
        "--seed",
        type=seed,
        default=0,
        metavar="N",
        help="seed of the sign flips and resamples (default 0)",
    )
    parser.add_argument("--confidence", type=probability, default=0.95, metavar="C")
    parser.add_argument("--correction", choices=CORRECTIONS, default="holm")
    parser.add_argument("--alpha", type=probability, default=0.05, metavar="A")
    parser.add_argument(
        "--absolute",
        action="store_true",
        help="compare signed measures (RaB, ARaB) on |value|, where lower is fairer; by default "
        "on their signed value, with no verdict",
    )
    add_plot_argument(parser, "a forest plot of the differences and intervals")
    parser.set_defaults(func=run_compare)


_SUMMARY_COLUMNS = (
    "metric cutoff run_a run_b n_queries n_undefined_a n_undefined_b diff ci_low ci_high "
    "effect_size p_adjusted significant fairer"
).split()


def _summary(table) -> str:
    renamed = {"effect_size": "d_z", "p_adjusted": "p (adjusted)", "n_queries": "n"}
    renamed.update(n_undefined_a="undef_a", n_undefined_b="undef_b")
    shown = table[_SUMMARY_COLUMNS].rename(columns=renamed)
    text = shown.to_string(index=False, float_format=lambda v: f"{v:.3g}")
    undetermined = table[table["fairer"] == "undetermined"]
    notes = [
        f"{row.metric}@{row.cutoff} {row.run_a} vs {row.run_b}: undetermined: {row.why}"
        for row in undetermined.itertuples()
    ]
    return "\n".join([text, *notes])


def run_compare(args) -> int:
    from rankbias.analysis.compare import compare, forest_plot, read_scores
    from rankbias.errors import InputError
    from rankbias.metrics.measures import split_cutoff, split_measure_list
    from rankbias.outputs import check_output, write_table

    if args.permutations is not None and args.test != "randomisation":
        raise InputError(
            f"--permutations: the {args.test} test draws no sign flips; expected it only with "
            "--test randomisation"
        )
    out = check_output(args.out, inputs=[args.scores])
    plot = None
    if args.plot:
        plot = check_output(args.plot, inputs=[args.scores], option="--plot", table=False)
    try:
        metrics = split_measure_list(args.metrics) if args.metrics is not None else None
        [split_cutoff(m) for m in metrics or []]  # a bad @k, before the table is read
    except ValueError as exc:
        raise InputError(f"--metrics: {exc}") from None
    scores = read_scores(args.scores)
    try:
        counts = {k: getattr(args, k) for k in ("permutations", "bootstrap") if getattr(args, k)}
        table = compare(
            scores,
            args.baseline,
            args.test,
            confidence=args.confidence,
            correction=args.correction,
            alpha=args.alpha,
            seed=args.seed,
            metrics=metrics,
            absolute=args.absolute,
            **counts,  # not given: compare()'s defaults
        )
    except ValueError as exc:  # the library names its arguments; here the file is the input
        raise InputError(f"{args.scores}: {exc}") from None
    write_table(out, table)
    if plot is not None:
        forest_plot(table, plot)
    if not args.quiet:
        sys.stdout.write(_summary(table) + "\n")
    for row in table.itertuples():
        lost = {
            "undefined (NaN) in either run": row.n_undefined,
            f"only in {row.run_a}": row.n_only_a,
            f"only in {row.run_b}": row.n_only_b,
        }
        said = ", ".join(f"{n} {what}" for what, n in lost.items() if n)
        if said:
            print(
                f"{row.metric}@{row.cutoff} {row.run_a} vs {row.run_b}: queries left out: {said}",
                file=sys.stderr,
            )
    if table.attrs["system_level"]:
        print(
            "system-level measures (one value per run, nothing to test over queries): "
            + ", ".join(table.attrs["system_level"]),
            file=sys.stderr,
        )
    print(f"{len(table)} comparisons -> {out}", file=sys.stderr)
    return 0
