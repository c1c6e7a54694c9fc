"""MS MARCO passages, from a local TSV file or through ``ir_datasets``.

:func:`iter_collection` streams MS MARCO's ``collection.tsv`` (Nguyen et al., 2016;
``docid<TAB>text``, UTF-8, plain or gzip) or an ``ir_datasets`` id such as ``msmarco-passage``
(downloaded and cached by the optional ``ir_datasets``, ``rankbias[msmarco]``).  A line without
exactly one tab, a bad docid or non-UTF-8 bytes are an :class:`~rankbias.errors.InputError`
naming file and line; docids are not checked for uniqueness while streaming.
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


def _is_file_source(source: str | os.PathLike[str]) -> bool:
    if isinstance(source, os.PathLike):
        return True
    return Path(source).exists() or source.lower().endswith(FILE_SUFFIXES)


def _open_binary(path: Path):
    with open(path, "rb") as probe:
        magic = probe.read(2)
    return gzip.open(path, "rb") if magic == b"\x1f\x8b" else open(path, "rb")


def iter_collection_tsv(path: str | os.PathLike[str]) -> Iterator[tuple[str, str]]:
    """Yield ``(docid, text)`` of a ``docid<TAB>text`` file (gzip by content, ``\\n`` or
    ``\\r\\n``, text verbatim); a missing file raises at once."""
    path = Path(path)
    if not path.is_file():
        raise InputError(f"{path}: no such collection file; expected a docid<TAB>text TSV file")
    return _stream_tsv(path)


def _stream_tsv(path: Path) -> Iterator[tuple[str, str]]:
    with _open_binary(path) as handle:
        for number, raw in enumerate(handle, start=1):
            if raw.endswith(b"\n"):
                raw = raw[:-2] if raw.endswith(b"\r\n") else raw[:-1]
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
    """Yield ``(doc_id, text)`` of the ``ir_datasets`` dataset (``text``, else
    ``default_text()``); a missing ``ir_datasets`` or an unknown id raises at once."""
    try:
        ir_datasets = importlib.import_module("ir_datasets")
    except ImportError as exc:
        raise InputError(
            f"reading an ir_datasets collection needs the optional package ir_datasets, "
            f"which is not installed ({exc}); install it with: {INSTALL_HINT}"
        ) from exc
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
    """Yield ``(docid, text)`` of ``source``: a file (a :class:`~pathlib.Path`, an existing
    path or a name ending in one of ``FILE_SUFFIXES``), else an ``ir_datasets`` id."""
    if _is_file_source(source):
        return iter_collection_tsv(source)
    return iter_collection_ir_datasets(str(source))
