"""Readers for the query-set formats of the public resources, on the real files."""

from __future__ import annotations

import gzip
import io
from collections import Counter
from pathlib import Path

import pytest
from public_data import PUBLIC

from rankbias.data.public import read_gender_annotated_queries, read_query_tsv
from rankbias.errors import InputError


@pytest.fixture(scope="module")
def public() -> Path:
    if not PUBLIC.is_dir():
        pytest.skip(f"the reference copy of the public resources is absent ({PUBLIC})")
    return PUBLIC.resolve()


# --- queries_gender_annotated.csv (QS1) -----------------------------------------------------


def test_gender_annotated_queries(public: Path) -> None:
    path = public / "rekabsaz_genderbias_ir" / "queries_gender_annotated.csv"
    frame = read_gender_annotated_queries(path)
    lines = path.read_text(encoding="utf-8").splitlines()
    assert len(frame) == len(lines) == 3750  # SOURCES.md: 3,750 annotated queries
    assert frame.columns.tolist() == ["qid", "query", "label"]
    # labels counted independently: the text after the last comma of each line
    assert dict(Counter(frame["label"])) == dict(Counter(line.rsplit(",", 1)[1] for line in lines))
    assert (frame["label"] == "n").sum() == 1765  # SOURCES.md: QS1 has 1,765 queries
    assert frame.iloc[0].tolist() == ["986563", "who was known as the heretic king", "m"]
    # line 39 has commas inside the query text, and a space before one of them
    assert frame.iloc[38].tolist() == ["976587", "where is alexander ,kentucky ?", "m"]
    with_commas = sum(1 for line in lines if line.count(",") > 2)
    assert frame["query"].str.contains(",", regex=False).sum() == with_commas > 0
    assert frame["qid"].is_unique


def write(path: Path, text: str) -> Path:
    path.write_bytes(text.encode("utf-8"))
    return path


def test_gender_annotated_queries_crlf_and_commas(tmp_path: Path) -> None:
    path = write(
        tmp_path / "q.csv", "1,who is steve brown, comedian?,m\r\n2,what is surrogate,n\r\n"
    )
    frame = read_gender_annotated_queries(path)
    assert frame.values.tolist() == [
        ["1", "who is steve brown, comedian?", "m"],
        ["2", "what is surrogate", "n"],
    ]


@pytest.mark.parametrize(
    "text, line, found",
    [
        ("1,a query,n\n2,another query,x\n", 2, "found label 'x'"),
        ("1,a query,n\n2,n\n", 2, "found 2 comma-separated field(s)"),
        ("1,a query,n\n\n3,a third,f\n", 2, "found a blank line"),
        ("1,a query,n\n2,b,f\n1,a repeat,m\n", 3, "qid '1' repeats line 1"),
        ("1,a query,n\n2, ,f\n", 2, "found an empty query text"),
        ("1,a query,n\n2,a query,N\n", 2, "found label 'N'"),
        ("qid,query,label\n1,a query,n\nqid,query,label\n", 3, "found the header line"),
        ("", None, "the query file has no queries"),
        ("qid,query,label\n", None, "the query file has no queries"),
        ("1,a query,n\n\ufeff2,b,f\n", 2, "a byte-order mark (bytes ef bb bf, U+FEFF) starts"),
        ("1,a query,n\n2,b,f\xa0\n", 2, "found label 'f\\xa0'"),  # NBSP is not stripped
    ],
)
def test_malformed_gender_annotated_queries(
    tmp_path: Path, text: str, line: int, found: str
) -> None:
    path = write(tmp_path / "q.csv", text)
    with pytest.raises(InputError) as caught:
        read_gender_annotated_queries(path)
    message = str(caught.value)
    assert message.startswith(f"{path}:{line}: " if line else f"{path}: ")
    assert found in message


def test_an_unknown_label_error_lists_the_expected_labels(tmp_path: Path) -> None:
    path = write(tmp_path / "q.csv", "1,a query,x\n")
    with pytest.raises(InputError, match="expected one of n, f, m, o"):
        read_gender_annotated_queries(path)


# --- qid<TAB>query files (QS2) and their FULL_ANNOTATION variants ---------------------------


def test_qs2_queries(public: Path) -> None:
    path = public / "cpjku_fairness_retrieval_results" / "msmarco_passage.dev.fair.tsv"
    frame = read_query_tsv(path)
    assert len(frame) == 215  # SOURCES.md: 215 bias-sensitive queries
    assert frame.columns.tolist() == ["qid", "query"]
    assert frame.iloc[0].tolist() == ["361240", "how to get big thighs and hips"]
    assert frame.iloc[-1].tolist() == ["699838", "what is a short term trust"]
    assert frame["qid"].is_unique


def test_qs2_is_a_subset_of_qs1(public: Path) -> None:
    # book/reproducing.md states this; the check joins the two files on qid
    qs1 = read_gender_annotated_queries(
        public / "rekabsaz_genderbias_ir" / "queries_gender_annotated.csv"
    )
    qs1 = qs1[qs1["label"] == "n"]
    qs2 = read_query_tsv(
        public / "cpjku_fairness_retrieval_results" / "msmarco_passage.dev.fair.tsv"
    )
    joined = qs2.merge(qs1, on="qid", how="left", suffixes=("_qs2", "_qs1"))
    assert len(joined) == 215
    assert (joined["label"] == "n").all()
    assert (joined["query_qs2"] == joined["query_qs1"]).all()


@pytest.mark.parametrize(
    "plain, annotated, count",
    [
        ("msmarco_passage.dev.fair.tsv", "msmarco_passage.dev.fair.FULL_ANNOTATION.tsv", 215),
        ("trecdeep19_passage.fair.tsv", "trecdeep19_passage.fair.FULL_ANNOTATION.tsv", 30),
    ],
)
def test_full_annotation_files(public: Path, plain: str, annotated: str, count: int) -> None:
    folder = public / "cpjku_fairness_retrieval_results"
    frame = read_query_tsv(folder / annotated)
    raw = (folder / annotated).read_bytes()
    assert b"\r\n" in raw  # the format this test is about
    assert len(frame) == count == raw.count(b"\n") + (not raw.endswith(b"\n")) - 1  # minus header
    assert frame.columns.tolist() == [
        "qid",
        "query",
        "categories",
        "domains",
        "subdomains",
        "example_description",
    ]
    for column in frame.columns:
        assert not frame[column].str.contains("\r", regex=False).any(), column
    # the same (qid, query) pairs as the plain file, in another order
    pairs = set(map(tuple, read_query_tsv(folder / plain).values.tolist()))
    assert set(map(tuple, frame[["qid", "query"]].values.tolist())) == pairs
    assert len(pairs) == count


def test_full_annotation_row(public: Path) -> None:
    path = (
        public / "cpjku_fairness_retrieval_results" / "msmarco_passage.dev.fair.FULL_ANNOTATION.tsv"
    )
    first = read_query_tsv(path).iloc[0].tolist()
    assert first == [
        "461718",
        "name of kind of dr that looks at spines",
        "Career",
        "Work",
        "Quality of work",
        "",
    ]


@pytest.mark.parametrize(
    "text, line, found",
    [
        ("1\ta query\n2\ta query\twith a tab\n", 2, "found 3 tab-separated field(s)"),
        ("1\ta query\n2 no tab at all\n", 2, "found 1 tab-separated field(s)"),
        ("1\ta query\n\n", 2, "found a blank line"),
        ("1\ta query\nQID\tQuery\n2\tb\n", 2, "found the header line 'QID\\tQuery' after line 1"),
        ("1\ta query\n1\tagain\n", 2, "qid '1' repeats line 1"),
        ("1\ta query\n2\t\n", 2, "found an empty query"),
        ("QID\tQuery\tDomain\r\n1\tq\tWork\r\n2\tq2\r\n", 3, "found 2 tab-separated field(s)"),
        ("1\ta query\r2\tb\t\r", 2, "found 3 tab-separated field(s)"),
        ("1\ta\n2\t\xff\n", 2, "byte 0xff at column 3 is not UTF-8"),
        ("", None, "the query file has no queries"),
        ("QID\tQuery\r\n", None, "the query file has no queries"),
        ("1\ta query\r\n\ufeff2\tb\r\n", 2, "a byte-order mark (bytes ef bb bf, U+FEFF) starts"),
    ],
)
def test_malformed_query_tsv(tmp_path: Path, text: str, line: int, found: str) -> None:
    path = tmp_path / "q.tsv"
    path.write_bytes(text.encode("utf-8").replace(b"\xc3\xbf", b"\xff"))
    with pytest.raises(InputError) as caught:
        read_query_tsv(path)
    message = str(caught.value)
    assert message.startswith(f"{path}:{line}: " if line else f"{path}: ")
    assert found in message
    assert "expected" in message


def test_query_tsv_header_bom_and_missing_final_newline(tmp_path: Path) -> None:
    path = write(
        tmp_path / "q.tsv", "\ufeffQID\tQuery\tExample/Description\r\n7\tnurse salary\t\r\n8\tx\ty"
    )
    frame = read_query_tsv(path)
    assert frame.columns.tolist() == ["qid", "query", "example_description"]
    assert frame.values.tolist() == [["7", "nurse salary", ""], ["8", "x", "y"]]


CLEAN_CSV = b"1,who is steve brown, comedian?,m\n2,what is surrogate,n\n"
CLEAN_TSV = b"7\tnurse salary\n8\twhat is a trust\n"


@pytest.mark.parametrize(
    "transform",
    [
        lambda raw: raw,
        lambda raw: raw.replace(b"\n", b"\r\n"),
        lambda raw: raw.replace(b"\n", b"\r"),
        lambda raw: b"\xef\xbb\xbf" + raw,
        lambda raw: raw.rstrip(b"\n"),
        gzip.compress,
    ],
    ids=["lf", "crlf", "cr", "bom", "no-final-newline", "gzip"],
)
def test_quirks_give_the_clean_tables(tmp_path: Path, transform) -> None:
    csv_path, tsv_path = tmp_path / "q.csv", tmp_path / "q.tsv"
    csv_path.write_bytes(transform(CLEAN_CSV))
    tsv_path.write_bytes(transform(CLEAN_TSV))
    assert read_gender_annotated_queries(csv_path).values.tolist() == [
        ["1", "who is steve brown, comedian?", "m"],
        ["2", "what is surrogate", "n"],
    ]
    assert read_query_tsv(tsv_path).values.tolist() == [
        ["7", "nurse salary"],
        ["8", "what is a trust"],
    ]
    # a header gives the same rows
    csv_path.write_bytes(transform(b"QID, Query ,label\n" + CLEAN_CSV))
    assert read_gender_annotated_queries(csv_path)["qid"].tolist() == ["1", "2"]


def test_query_readers_take_streams() -> None:
    frame = read_query_tsv(io.BytesIO(CLEAN_TSV))
    assert frame["qid"].tolist() == ["7", "8"]
    frame = read_gender_annotated_queries(io.StringIO(CLEAN_CSV.decode()))
    assert frame["label"].tolist() == ["m", "n"]
