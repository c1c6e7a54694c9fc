"""``rankbias stats``: per-document length, group counts and neutrality of a collection.

::

    rankbias stats --collection C --terms T [--tokenizer default|whitespace] --out F

One row per document: ``docid``, ``length``, one count column per group (named by the group
label, e.g. ``f``, ``m``) and ``neutrality`` (``ω`` with ``τ = 1``, ``≤``).  The output format
follows the suffix of ``F``: ``.parquet``, ``.csv`` or ``.tsv``.  A file collection is streamed
block by block and written as it goes (into a temporary file renamed at the end, so a bad line
never leaves a partial output).
"""

from __future__ import annotations

import os
import sys
from pathlib import Path

import pandas as pd

from rankbias.distributed import add_engine_arguments, check_engine_arguments
from rankbias.errors import InputError
from rankbias.lexicon import Lexicon, default_lexicon, read_lexicon
from rankbias.metrics.fairr import neutrality
from rankbias.text import (
    DEFAULT_BLOCK_BYTES,
    TOKENIZERS,
    DocStats,
    _ir_datasets_corpus,
    _iter_blocks,
    document_text,
    stats_from_pairs,
    unmatchable_terms,
)

OUTPUT_SUFFIXES = (".parquet", ".csv", ".tsv")
RESERVED_COLUMNS = ("docid", "length", "neutrality")


def register(subparsers) -> None:
    """Add the ``stats`` command to the ``rankbias`` parser."""
    parser = subparsers.add_parser(
        "stats",
        help="per-document length, group term counts and neutrality",
        description="Count group terms in every document of a collection "
        "(docid<TAB>text file, optionally .gz, or an ir_datasets id).",
    )
    add_collection_arguments(parser)
    parser.add_argument("--out", required=True, help="output file: .parquet, .csv or .tsv")
    parser.set_defaults(func=run_stats)


def add_collection_arguments(parser) -> None:
    """The arguments ``stats`` and ``score`` share: collection, terms, tokenizer, workers."""
    parser.add_argument(
        "--collection", required=True, help="docid<TAB>text file (optionally .gz) or ir_datasets id"
    )
    parser.add_argument(
        "--terms",
        required=True,
        help="term,group word list, or 'default' for the project's gendered pairs",
    )
    parser.add_argument("--tokenizer", choices=TOKENIZERS, default="default")
    parser.add_argument(
        "--workers", type=int, default=None, help="worker processes (default: all cores)"
    )
    add_engine_arguments(parser)


def load_lexicon(terms: str) -> Lexicon:
    """``--terms``: a word-list path, or ``default`` for the packaged pair list."""
    if terms == "default" and not Path(terms).exists():
        return default_lexicon()
    return read_lexicon(terms)


def warn_unmatchable(lexicon: Lexicon, tokenizer: str) -> None:
    """Tell the user about terms the tokeniser splits (they can never be counted)."""
    lost = unmatchable_terms(lexicon, tokenizer)
    if lost:
        print(
            f"note: {len(lost)} term(s) are not single tokens under the {tokenizer} tokenizer "
            f"and are never counted: {', '.join(lost[:10])}",
            file=sys.stderr,
        )


def stats_frame(stats: DocStats, tau: float = 1.0) -> pd.DataFrame:
    """The output table of ``rankbias stats`` for one block of statistics."""
    frame = stats.to_frame()
    frame["neutrality"] = neutrality(stats.group_counts, tau=tau)
    return frame


def _stats_table(docids, lengths, group_counts, groups, tau: float = 1.0):
    """The output table of ``rankbias stats`` for one block, built directly in Arrow."""
    import pyarrow as pa

    columns = {"docid": pa.array(docids, type=pa.string()), "length": pa.array(lengths)}
    for j, group in enumerate(groups):
        columns[group] = pa.array(group_counts[:, j])
    columns["neutrality"] = pa.array(neutrality(group_counts, tau=tau))
    return pa.table(columns)


def _writer(out: Path, suffix: str):
    """Return ``(write(table), close())`` appending Arrow tables to ``out`` in format ``suffix``.

    Parquet is written by Arrow; CSV/TSV by pandas (minimal quoting, as ``to_csv`` does).
    """
    import pyarrow.parquet as pq

    state: dict = {}
    if suffix == ".parquet":

        def write(table) -> None:
            if "writer" not in state:
                # docids are unique: dictionary encoding would only cost time
                state["writer"] = pq.ParquetWriter(out, table.schema, use_dictionary=False)
            state["writer"].write_table(table)

        def close() -> None:
            if "writer" in state:
                state["writer"].close()

        return write, close
    handle = open(out, "w", encoding="utf-8", newline="")

    def write_text(table) -> None:
        table.to_pandas().to_csv(
            handle, sep="," if suffix == ".csv" else "\t", index=False, header="done" not in state
        )
        state["done"] = True

    return write_text, handle.close


def run_stats(args) -> int:
    out = Path(args.out)
    if out.suffix not in OUTPUT_SUFFIXES:
        raise InputError(
            f"--out {out}: unknown suffix {out.suffix!r}; expected one of {OUTPUT_SUFFIXES}"
        )
    lexicon = load_lexicon(args.terms)
    clash = [g for g in lexicon.groups if g in RESERVED_COLUMNS]
    if clash:
        raise InputError(f"{args.terms}: group label(s) {clash} clash with output columns")
    warn_unmatchable(lexicon, args.tokenizer)
    source = Path(args.collection)
    if check_engine_arguments(args):
        from rankbias.distributed import stats_blocks_for_command

        blocks = (
            _stats_table(b.docids, b.lengths, b.group_counts, lexicon.groups)
            for b in stats_blocks_for_command(args, lexicon)
        )
    elif source.exists():
        _, raw_blocks = _iter_blocks(
            source, lexicon, args.tokenizer, False, args.workers, DEFAULT_BLOCK_BYTES
        )
        blocks = (
            _stats_table(b.docids, b.lengths, b.group_counts, lexicon.groups) for b in raw_blocks
        )
    else:
        corpus = _ir_datasets_corpus(args.collection)
        pairs = ((d.doc_id, document_text(d)) for d in corpus.docs_iter())
        stats = stats_from_pairs(
            pairs, lexicon, args.collection, args.tokenizer, workers=args.workers
        )
        blocks = iter([_stats_table(stats.docids, stats.lengths, stats.group_counts, stats.groups)])
    out.parent.mkdir(parents=True, exist_ok=True)
    partial = out.with_name(out.name + ".partial")
    write, close = _writer(partial, out.suffix)
    n_docs = 0
    try:
        for table in blocks:
            write(table)
            n_docs += table.num_rows
    except BaseException:
        close()
        partial.unlink(missing_ok=True)
        raise
    close()
    if n_docs == 0:
        partial.unlink(missing_ok=True)
        raise InputError(f"{args.collection}: the collection is empty; expected documents")
    os.replace(partial, out)
    print(f"{n_docs} documents -> {out}", file=sys.stderr)
    return 0
