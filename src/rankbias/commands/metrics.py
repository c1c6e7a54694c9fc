"""``rankbias metrics``: list every registered measure.

::

    rankbias metrics [--format table|csv|json]

One row per measure with ``name, family, higher_is, inputs, parameters, reference, display``
(the declarations of :mod:`rankbias.metrics.measures`; ``display`` is how tables and figures
write the measure); ``higher_is`` is one of ``fairer``, ``more_biased``, ``signed``,
``neither``.  Parameters are shown as ``name=default (allowed
values or type)`` and are given to a measure as ``name(key=value,…)@k``, e.g.
``nfairr(tau=0)@10``.
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
