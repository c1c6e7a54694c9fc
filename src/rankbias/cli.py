"""The ``rankbias`` command.

Each sub-command lives in a module of :mod:`rankbias.commands` that exposes
``register(subparsers)``; this file only assembles them, so adding a command never touches
the others.
"""

from __future__ import annotations

import argparse
import importlib
import sys

from rankbias.errors import InputError

COMMAND_MODULES = (
    "rankbias.commands.data",
    "rankbias.commands.stats",
    "rankbias.commands.score",
)


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="rankbias", description="Measure gender and indexical bias in ranked lists."
    )
    sub = parser.add_subparsers(dest="command", required=True)
    for name in COMMAND_MODULES:
        try:
            module = importlib.import_module(name)
        except ModuleNotFoundError as exc:
            if exc.name == name:  # the command is not part of this build
                continue
            raise
        module.register(sub)
    return parser


def main(argv: list[str] | None = None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    try:
        return int(args.func(args) or 0)
    except (InputError, FileNotFoundError) as exc:
        print(f"rankbias {args.command}: error: {exc}", file=sys.stderr)
        return 2


if __name__ == "__main__":
    sys.exit(main())
