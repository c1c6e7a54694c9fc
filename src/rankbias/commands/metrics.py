"""``rankbias metrics [--format table|csv|json]``: list every registered measure.

One row per measure with :data:`COLUMNS`, the declarations of :mod:`rankbias.metrics.measures`
(``display`` is how tables and figures write the measure; parameters are shown as
``name=default (allowed values or type)`` and given as ``name(key=value,…)@k``).
"""

from __future__ import annotations

import json
import sys

FORMATS = ("table", "csv", "json")
COLUMNS = ("name", "family", "higher_is", "inputs", "parameters", "reference", "display")


def register(subparsers) -> None:
    """Add the ``metrics`` command to the ``rankbias`` parser."""
    parser = subparsers.add_parser(
        "metrics",
        help="list every measure with its direction, inputs, parameters and reference",
        description="List every registered measure: name, family, higher_is (fairer, "
        "more_biased, signed, neither), the inputs it needs, its parameters with defaults "
        "and allowed values, and its reference (bib key and equation).",
    )
    parser.add_argument(
        "--format", choices=FORMATS, default="table", help="output format (default: table)"
    )
    parser.set_defaults(func=run_metrics)


def run_metrics(args) -> int:
    from rankbias.metrics.measures import measure_table

    table = measure_table()[list(COLUMNS)]
    if args.format == "csv":
        table.to_csv(sys.stdout, index=False)
    elif args.format == "json":
        json.dump(table.to_dict(orient="records"), sys.stdout, ensure_ascii=False, indent=1)
        sys.stdout.write("\n")
    else:
        sys.stdout.write(table.to_string(index=False) + "\n")
    return 0
