"""MS MARCO passages, from a local TSV file or through ``ir_datasets``.

The MS MARCO passage collection (Nguyen et al., 2016; 8,841,823 passages) is distributed as
``collection.tsv``: one passage per line, ``docid<TAB>text``, UTF-8.  :func:`iter_collection`
streams such a file (plain or gzip-compressed) or, given an ``ir_datasets`` id such as
``msmarco-passage``, the documents of that dataset, which ``ir_datasets`` downloads and caches
on first use (about 1 GB for ``msmarco-passage``).  ``ir_datasets`` is an optional dependency:
``pip install 'rankbias[msmarco]'``.

The reader is strict and streaming: a line without exactly one tab, an empty docid or bytes
that are not UTF-8 raise :class:`~rankbias.errors.InputError` naming the file and line.
Uniqueness of docids is not checked while streaming (it would hold every docid in memory);
consumers that build an index check it there.
"""

from __future__ import annotations

import gzip
import importlib
import os
from collections.abc import Iterator
from pathlib import Path

from rankbias.errors import InputError, located

INSTALL_HINT = "pip install 'rankbias[msmarco]'"
FILE_SUFFIXES = (".tsv", ".gz", ".txt", ".tsv.gz")


def _ir_datasets():
    """The ``ir_datasets`` module, imported on first use."""
    try:
        return importlib.import_module("ir_datasets")
    except ImportError as exc:
        raise InputError(
            f"reading an ir_datasets collection needs the optional package ir_datasets, "
            f"which is not installed ({exc}); install it with: {INSTALL_HINT}"
        ) from exc


def _is_file_source(source: str | os.PathLike[str]) -> bool:
    if isinstance(source, os.PathLike):
        return True
    return Path(source).exists() or source.lower().endswith(FILE_SUFFIXES)


def _open_binary(path: Path):
    with open(path, "rb") as probe:
        magic = probe.read(2)
    if magic == b"\x1f\x8b":
        return gzip.open(path, "rb")
    return open(path, "rb")


def iter_collection_tsv(path: str | os.PathLike[str]) -> Iterator[tuple[str, str]]:
    """Yield ``(docid, text)`` from a collection file in MS MARCO's ``docid<TAB>text`` format.

    Gzip-compressed files are recognised by their magic bytes.  Line endings ``\\n`` and
    ``\\r\\n`` are both accepted; the text is otherwise kept verbatim.  A missing file raises
    at once, before iteration starts.
    """
    path = Path(path)
    if not path.is_file():
        raise InputError(f"{path}: no such collection file; expected a docid<TAB>text TSV file")
    return _stream_tsv(path)


def _stream_tsv(path: Path) -> Iterator[tuple[str, str]]:
    with _open_binary(path) as handle:
        for number, raw in enumerate(handle, start=1):
            if raw.endswith(b"\r\n"):
                raw = raw[:-2]
            elif raw.endswith(b"\n"):
                raw = raw[:-1]
            try:
                line = raw.decode("utf-8")
            except UnicodeDecodeError as exc:
                raise located(
                    path, number, f"found bytes that are not UTF-8 ({exc.reason}); expected UTF-8"
                ) from None
            fields = line.split("\t")
            if len(fields) != 2:
                shown = line if len(line) <= 80 else line[:77] + "..."
                raise located(
                    path,
                    number,
                    f"found {len(fields)} tab-separated field(s) in {shown!r}; "
                    f"expected docid<TAB>text",
                )
            docid, text = fields
            if not docid or any(ch.isspace() for ch in docid):
                raise located(
                    path, number, f"found docid {docid!r}; expected a non-empty id without spaces"
                )
            yield docid, text


def iter_collection_ir_datasets(dataset_id: str) -> Iterator[tuple[str, str]]:
    """Yield ``(doc_id, text)`` for the documents of the ``ir_datasets`` dataset ``dataset_id``.

    Documents with a ``text`` field (``msmarco-passage``) give that field; others give their
    ``default_text()`` (title and body joined, as ``ir_datasets`` defines it).  A missing
    ``ir_datasets`` or an unknown id raises at once, before iteration starts.
    """
    ir_datasets = _ir_datasets()
    try:
        dataset = ir_datasets.load(dataset_id)
    except KeyError as exc:
        raise InputError(
            f"ir_datasets has no dataset {dataset_id!r} ({exc}); expected an id such as "
            f"'msmarco-passage'"
        ) from None
    if hasattr(dataset, "has_docs") and not dataset.has_docs():
        raise InputError(
            f"ir_datasets dataset {dataset_id!r} has no documents; expected a collection such "
            f"as 'msmarco-passage'"
        )
    return _stream_ir_datasets(dataset_id, dataset)


def _stream_ir_datasets(dataset_id: str, dataset) -> Iterator[tuple[str, str]]:
    for doc in dataset.docs_iter():
        if hasattr(doc, "text"):
            text = doc.text
        elif hasattr(doc, "default_text"):
            text = doc.default_text()
        else:
            raise InputError(
                f"ir_datasets dataset {dataset_id!r}, document {doc.doc_id!r}: found fields "
                f"{getattr(doc, '_fields', type(doc).__name__)}; expected a 'text' field"
            )
        yield str(doc.doc_id), text


def iter_collection(source: str | os.PathLike[str]) -> Iterator[tuple[str, str]]:
    """Yield ``(docid, text)`` for every passage of ``source``.

    ``source`` is either a file in MS MARCO's collection format (a :class:`~pathlib.Path`, an
    existing path, or a name ending in ``.tsv``, ``.tsv.gz``, ``.gz`` or ``.txt``) or an
    ``ir_datasets`` id such as ``msmarco-passage`` (which needs ``rankbias[msmarco]``).
    """
    if _is_file_source(source):
        return iter_collection_tsv(source)
    return iter_collection_ir_datasets(str(source))
