"""``rankbias data fetch|verify|build|check|msmarco``: fetch and verify the public resources
(names of :mod:`rankbias.data.catalog`, default: the bundle ``all``) from commit-pinned URLs,
refusing a file whose sha256 differs; build the embedded ``wikisample`` testbed; check a dataset
folder (:mod:`rankbias.dataset`); build the MS MARCO folder (:mod:`rankbias.data.msmarco`).
"""

from __future__ import annotations

import argparse
import importlib
from pathlib import Path

from rankbias.commands.progress import byte_bar, wanted
from rankbias.errors import InputError

DEFAULT_DEST = "data/build/public"


def register(subparsers) -> None:
    """Add the ``data`` command and its sub-commands to the ``rankbias`` parser."""
    parser = subparsers.add_parser(
        "data",
        help="fetch and verify the public resources; build the embedded testbed",
        description="Fetch and verify the public resources of the literature "
        "(word lists, query sets, run files); build the embedded wikisample testbed.",
    )
    sub = parser.add_subparsers(dest="data_command", required=True)
    fetch = sub.add_parser(
        "fetch",
        help="download public resources, checking their sha256",
        description="Download public resources from URLs pinned to upstream commits, verify "
        "size and sha256, and refuse any file that differs. Files already present with the "
        "right checksum are skipped.",
    )
    verify = sub.add_parser(
        "verify",
        help="check downloaded resources against the catalogue",
        description="Check that every selected resource is present under --dest with the "
        "catalogued size and sha256. Exit status 2 if any is missing or differs.",
    )
    for command, names_help, dest_help, run in (
        (fetch, "resource or bundle names (default: all); see --list", "write into", run_fetch),
        (verify, "resource or bundle names (default: all)", "check", run_verify),
    ):
        command.add_argument("names", nargs="*", metavar="NAME", help=names_help)
        command.add_argument("--dest", help=f"directory to {dest_help} (default: {DEFAULT_DEST})")
        command.set_defaults(func=run)
    fetch.add_argument(
        "--mirror",
        metavar="URL",
        help="base URL or directory replacing https://raw.githubusercontent.com, laid out as "
        "<owner>/<repo>/<commit>/<path> (file:// URLs work)",
    )
    fetch.add_argument(
        "--overwrite", action="store_true", help="download again and replace files already present"
    )
    fetch.add_argument(
        "--list",
        action="store_true",
        help="list the bundles and the selected resources with their URLs, download nothing",
    )

    build = sub.add_parser(
        "build",
        help="build the embedded wikisample testbed",
        description="Build the wikisample testbed (collection, queries, judgements, runs) "
        "into --out.",
    )
    build.add_argument("--out", required=True, metavar="DIR", help="output directory")
    build.add_argument("--force", action="store_true", help="rebuild even if up to date")
    build.set_defaults(func=run_build)

    check = sub.add_parser(
        "check",
        help="check a dataset folder as the book reads it",
        description="Read a dataset folder (collection.tsv, queries.tsv, qrels.txt, runs/*.run "
        "and an optional dataset.toml) as every chapter of the book will, and say what it "
        "holds; exit status 2, with one line naming the file and what to fix, if it does not "
        "hold together.",
    )
    check.add_argument("folder", metavar="DIR", help="the dataset folder")
    check.set_defaults(func=run_check)

    msmarco = sub.add_parser(
        "msmarco",
        help="build the MS MARCO dataset folder of the papers",
        description="Build a dataset folder for MS MARCO passage retrieval as the papers study "
        "it: query sets QS1 and QS2, their dev judgements, the ten released runs on QS2 and the "
        "papers' two word lists (fetched from pinned URLs and checked by sha256, or from "
        "--mirror), with the collection from --collection or ir_datasets.",
    )
    msmarco.add_argument("--out", required=True, metavar="DIR", help="output directory")
    msmarco.add_argument(
        "--mirror",
        metavar="URL_OR_DIR",
        help="a folder laid out as `rankbias data fetch` writes it, or a base URL or folder "
        "laid out as <owner>/<repo>/<commit>/<path> (default: the pinned GitHub URLs)",
    )
    msmarco.add_argument(
        "--collection",
        metavar="FILE",
        help="a local docid<TAB>text collection, linked into the folder (default: exported "
        "from ir_datasets' msmarco-passage, about 3 GB)",
    )
    judgements = msmarco.add_mutually_exclusive_group()
    judgements.add_argument(
        "--qrels",
        metavar="FILE",
        help="MS MARCO's dev qrels as a local TREC qrels file (default: from ir_datasets' "
        "msmarco-passage/dev; none if it cannot be read)",
    )
    judgements.add_argument(
        "--no-qrels", action="store_true", help="build the folder without judgements"
    )
    msmarco.set_defaults(func=run_msmarco)


def run_fetch(args: argparse.Namespace) -> int:
    from rankbias.data import catalog
    from rankbias.data.fetch import fetch, mirror_base_url
    from rankbias.outputs import check_output_dir

    names = args.names or ["all"]
    selected = catalog.select(names)
    if args.list:
        for option, given in (("--overwrite", args.overwrite), ("--dest", args.dest)):
            if given:  # nothing is written: the option would be ignored
                raise InputError(f"{option}: --list downloads nothing; expected one or the other")
        base = mirror_base_url(args.mirror) if args.mirror is not None else None
        print("bundles:")
        for bundle in catalog.bundles().values():
            print(f"  {bundle.name:<20} {len(bundle.members):>3} files  {bundle.description}")
        print("resources:")
        for resource in selected:
            print(f"  {resource.name}  ({resource.size:,} bytes, {resource.license})")
            print(f"      {resource.description}")
            print(f"      {resource.url(base)}")
            print(f"      sha256 {resource.sha256}")
        return 0
    args.dest = DEFAULT_DEST if args.dest is None else args.dest
    check_output_dir(args.dest, "--dest")
    bar = byte_bar(wanted(args), sum(r.size for r in selected), "fetch")
    try:
        paths = fetch(
            names,
            args.dest,
            base_url=args.mirror,
            overwrite=args.overwrite,
            report=print if bar is None else bar.write,
            progress=None if bar is None else bar.update,
        )
    finally:
        if bar is not None:
            bar.close()
    print(f"{len(paths)} file(s) in {Path(args.dest)}, all with the catalogued sha256")
    return 0


def run_verify(args: argparse.Namespace) -> int:
    from rankbias.data.fetch import verify

    args.dest = DEFAULT_DEST if args.dest is None else args.dest
    if args.dest == "":
        raise InputError("--dest '': expected a directory name")
    if Path(args.dest).exists() and not Path(args.dest).is_dir():
        raise InputError(f"--dest {args.dest}: is a file; expected a directory")
    checks = verify(args.dest, args.names or ["all"])
    bad = []
    for check in checks:
        where = "" if check.status == "ok" else f"  ({check.path})"
        print(f"{check.status:<8} {check.resource.name}{where}")
        if check.status == "missing":
            bad.append(f"{check.path} missing")
        elif check.status != "ok":
            bad.append(
                f"{check.path}: expected sha256 {check.resource.sha256} "
                f"({check.resource.size} bytes), found sha256 {check.found_sha256} "
                f"({check.found_size} bytes)"
            )
    if bad:
        raise InputError(
            f"{len(bad)} of {len(checks)} resource(s) in {args.dest} failed verification: "
            + "; ".join(bad[:3])
            + (f"; and {len(bad) - 3} more (listed above)" if len(bad) > 3 else "")
            + " — run `rankbias data fetch` (with --overwrite for files that differ)"
        )
    print(f"{len(checks)} file(s) in {args.dest} match the catalogue")
    return 0


def run_build(args: argparse.Namespace) -> int:
    from rankbias.outputs import check_output_dir

    out = check_output_dir(args.out)
    log = print
    if wanted(args):
        import logging

        from tqdm import tqdm

        # sentence-transformers shows a bar per encoding when its logger is at INFO level
        logging.getLogger("sentence_transformers").setLevel(logging.INFO)
        log = tqdm.write
    wikisample = importlib.import_module("rankbias.data.wikisample")
    wikisample.build(out, force=args.force, log=log)
    return 0


def run_check(args: argparse.Namespace) -> int:
    from rankbias.dataset import load_dataset

    data = load_dataset(args.folder)
    print(f"{data.path}: dataset {data.name!r}")
    print(
        f"  systems ({len(data.systems)}): "
        + ", ".join(f"{s} ({data.label(s)})" if data.label(s) != s else s for s in data.systems)
    )
    for name, query_set in data.query_sets.items():
        judged = f", {len(query_set.qrels):,} judgements" if query_set.judged else ", not judged"
        print(f"  query set {name!r}: {len(query_set.queries):,} queries{judged}")
    print(f"  word lists: {', '.join(data.word_lists)} (default {data.default_word_list})")
    if data.files:
        print(f"  inputs: {', '.join(data.files)}")
    for note in data.notes:
        print(f"  note: {note}")
    return 0


def run_msmarco(args: argparse.Namespace) -> int:
    from rankbias.data.msmarco import build

    qrels = False if args.no_qrels else args.qrels
    build(args.out, mirror=args.mirror, collection=args.collection, qrels=qrels)
    return 0
