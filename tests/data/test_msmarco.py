"""MS MARCO passages from a collection file in MS MARCO's format, and through ir_datasets."""

from __future__ import annotations

import gzip
import sys
import types
import uuid
from collections import namedtuple
from pathlib import Path

import pytest

from rankbias.data.msmarco import iter_collection
from rankbias.errors import InputError

# Passages written for this test in the shape of MS MARCO's collection.tsv: integer docids,
# one passage per line, no header, commas, quotes and non-ASCII characters inside the text.
PASSAGES = [
    (
        "0",
        "A nurse practitioner is a registered nurse with graduate training who can diagnose "
        "and treat common illnesses, order tests and, in most states, prescribe medication.",
    ),
    (
        "1",
        "Definition of 'quorum': the minimum number of members of an assembly that must be "
        "present for its proceedings to be valid.",
    ),
    (
        "7",
        "Café au lait spots are flat, light-brown patches of skin; one or two are common "
        "and harmless — six or more may point to neurofibromatosis.",
    ),
    (
        "8841822",
        "The average salary of a software engineer in Seattle, WA is $120,000 a year, "
        "according to 2,400 reported salaries.",
    ),
]


def write_collection(path: Path, passages=PASSAGES, newline: str = "\n") -> Path:
    path.write_bytes("".join(f"{d}\t{t}{newline}" for d, t in passages).encode("utf-8"))
    return path


def test_a_collection_file_is_read_back_exactly(tmp_path: Path) -> None:
    path = write_collection(tmp_path / "collection.tsv")
    assert list(iter_collection(path)) == PASSAGES
    assert list(iter_collection(str(path))) == PASSAGES


def test_crlf_line_endings_and_a_missing_final_newline(tmp_path: Path) -> None:
    path = tmp_path / "collection.tsv"
    path.write_bytes(b"12\tfirst passage\r\n13\tsecond passage")
    assert list(iter_collection(path)) == [("12", "first passage"), ("13", "second passage")]


def test_a_gzipped_collection(tmp_path: Path) -> None:
    plain = write_collection(tmp_path / "collection.tsv")
    packed = tmp_path / "collection.tsv.gz"
    packed.write_bytes(gzip.compress(plain.read_bytes(), mtime=0))
    assert list(iter_collection(packed)) == PASSAGES


@pytest.mark.parametrize(
    "bad_line, found",
    [
        ("42 a passage whose tab was lost", "found 1 tab-separated field"),
        ("42\ta passage\twith a second tab", "found 3 tab-separated field"),
        ("\ta passage without a docid", "found docid ''"),
    ],
)
def test_a_malformed_line_names_file_and_line(tmp_path: Path, bad_line: str, found: str) -> None:
    path = tmp_path / "collection.tsv"
    lines = (
        [f"{d}\t{t}" for d, t in PASSAGES[:2]] + [bad_line] + [f"{d}\t{t}" for d, t in PASSAGES[2:]]
    )
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    with pytest.raises(InputError) as caught:
        list(iter_collection(path))
    message = str(caught.value)
    assert message.startswith(f"{path}:3: ")
    assert found in message
    assert "expected" in message


def test_bytes_that_are_not_utf8_name_the_line(tmp_path: Path) -> None:
    path = tmp_path / "collection.tsv"
    path.write_bytes(b"1\tfine\n2\tcaf\xe9 in latin-1\n")
    with pytest.raises(InputError, match=r":2: found bytes that are not UTF-8"):
        list(iter_collection(path))


def test_a_missing_collection_file_fails_before_iteration(tmp_path: Path) -> None:
    with pytest.raises(InputError, match="no such collection file"):
        iter_collection(tmp_path / "absent.tsv")
    with pytest.raises(InputError, match="no such collection file"):
        iter_collection(str(tmp_path / "absent.tsv.gz"))


# --- ir_datasets ----------------------------------------------------------------------------

FakeDoc = namedtuple("FakeDoc", ["doc_id", "text"])
FakeQuery = namedtuple("FakeQuery", ["query_id", "text"])


class FakeDataset:
    """The two methods of an ir_datasets dataset that rankbias uses."""

    def __init__(self, docs, queries=()):
        self._docs, self._queries = docs, queries

    def has_docs(self) -> bool:
        return bool(self._docs)

    def docs_iter(self):
        return iter(self._docs)

    def queries_iter(self):
        return iter(self._queries)


@pytest.fixture
def fake_ir_datasets(monkeypatch: pytest.MonkeyPatch) -> dict:
    """A stand-in ``ir_datasets`` module whose ``load`` looks ids up in a dict."""
    registry: dict[str, FakeDataset] = {}
    module = types.ModuleType("ir_datasets")

    def load(name):
        return registry[name]

    module.load = load
    monkeypatch.setitem(sys.modules, "ir_datasets", module)
    return registry


def test_an_ir_datasets_id_goes_through_ir_datasets_load(fake_ir_datasets: dict) -> None:
    fake_ir_datasets["msmarco-passage"] = FakeDataset([FakeDoc(d, t) for d, t in PASSAGES])
    assert list(iter_collection("msmarco-passage")) == PASSAGES


def test_an_unknown_or_docless_ir_datasets_id_is_an_error(fake_ir_datasets: dict) -> None:
    with pytest.raises(InputError, match="no dataset 'msmarco-pasage'"):
        iter_collection("msmarco-pasage")
    fake_ir_datasets["msmarco-passage/dev/small"] = FakeDataset([], [FakeQuery("2", "q")])
    with pytest.raises(InputError, match="has no documents"):
        iter_collection("msmarco-passage/dev/small")


def test_without_ir_datasets_the_error_says_how_to_install_it(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setitem(sys.modules, "ir_datasets", None)  # makes `import ir_datasets` fail
    with pytest.raises(InputError, match=r"pip install 'rankbias\[msmarco\]'"):
        iter_collection("msmarco-passage")


def test_a_tiny_dataset_registered_with_the_real_ir_datasets(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("IR_DATASETS_HOME", str(tmp_path / "ir_datasets_home"))
    import ir_datasets
    from ir_datasets.datasets.base import Dataset
    from ir_datasets.formats import TsvDocs, TsvQueries
    from ir_datasets.util import LocalDownload

    docs = write_collection(tmp_path / "collection.tsv")
    queries = tmp_path / "queries.tsv"
    queries.write_text("1048585\twhat is paula deen's brother\n2\tandrogen receptor define\n")
    dataset_id = f"rankbias-test/{uuid.uuid4().hex}"
    ir_datasets.registry.register(
        dataset_id, Dataset(TsvDocs(LocalDownload(docs)), TsvQueries(LocalDownload(queries)))
    )
    assert list(iter_collection(dataset_id)) == PASSAGES
