"""Tests of rankbias.collection: the collection reader's rules, sources and public API.

Each rule is a table row: the bytes of a collection file and either the expected message
(fragment, with its ``file:line``) or the expected numbers, checked by hand.  Every row is
read as a plain file, as a gzip file and through a FIFO (a stream that cannot seek).
"""

from __future__ import annotations

import contextlib
import errno
import gzip
import io
import itertools
import os
import pickle
import re
import signal
import subprocess
import sys
import threading
import time
import types
import uuid
from collections import Counter, namedtuple
from pathlib import Path

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from unprivileged import raised_unprivileged, shared_folder

from rankbias.collection import (
    BlockError,
    check_unique,
    count_block,
    docids_at_lines,
    document_text,
    ir_datasets_corpus,
    iter_collection_stats,
    iter_documents,
    range_cuts,
    read_collection_stats,
    stats_from_pairs,
    stream_blocks,
)
from rankbias.errors import InputError
from rankbias.lexicon import Lexicon
from rankbias.text import TermMatcher

LEX = Lexicon.from_mapping({"she": "f", "her": "f", "señora": "f", "he": "m", "him": "m"})
REPO = Path(__file__).resolve().parents[1]

# (id, bytes, expected): expected is (docids, lengths, [[f, m], ...]) or (line, fragment)
GOOD = [
    ("lf", b"a\tShe met him\nb\the\n", (["a", "b"], [3, 1], [[1, 1], [0, 1]])),
    ("crlf", b"a\tshe he\r\nb\thim\r\n", (["a", "b"], [2, 1], [[1, 1], [0, 1]])),
    ("cr only", b"a\tshe\rb\the\rc\ther her\r",
     (["a", "b", "c"], [1, 1, 2], [[1, 0], [0, 1], [2, 0]])),
    ("mixed breaks", b"a\tshe\r\nb\the\rc\thim\n",
     (["a", "b", "c"], [1, 1, 1], [[1, 0], [0, 1], [0, 1]])),
    ("no final break", b"a\tshe\nb\the him", (["a", "b"], [1, 2], [[1, 0], [0, 2]])),
    ("bom at start", b"\xef\xbb\xbfa\tshe\n", (["a"], [1], [[1, 0]])),
    ("trailing white space", b"a\tshe \x0c \x1c \n", (["a"], [1], [[1, 0]])),
    ("unicode", "a\tSeñora y él\nb\tSHE\n".encode(), (["a", "b"], [3, 1], [[1, 0], [1, 0]])),
    ("unicode docid", "dé\tshe\n".encode(), (["dé"], [1], [[1, 0]])),
]  # fmt: skip
_ONE_TAB = "; expected exactly one tab, between the docid and the text"
_NO_SPACE = ", which a run file cannot name; expected a docid without white space"
_NO_TEXT = " has no text (an empty collection line); expected 'docid<TAB>text' with non-empty text"
_EMPTY = "found an empty collection line; expected 'docid<TAB>text' lines"
# (line, whole message after "path:line: "); {where} is "the file" or "the decompressed file"
BAD = [
    ("second tab", b"a\tshe\nb\tshe\the\n", (2, "found 2 tabs in 'b\\tshe\\the'" + _ONE_TAB)),
    ("trailing tab", b"a\tshe\t\n", (1, "found 2 tabs in 'a\\tshe\\t'" + _ONE_TAB)),
    ("long line, two tabs", b"a\t" + b"y" * 70 + b"\tz\n",
     (1, "found 2 tabs in " + repr("a\t" + "y" * 58) + _ONE_TAB)),
    ("no tab", b"a\tshe\nb she\n", (2, "found no tab in 'b she'; expected 'docid<TAB>text'")),
    ("long line, no tab", b"a\tshe\n" + b"x" * 70 + b"\n",
     (2, f"found no tab in '{'x' * 60}'; expected 'docid<TAB>text'")),
    ("empty docid", b"a\tshe\n\the\n", (2, "found an empty docid; expected 'docid<TAB>text'")),
    ("docid with a space", b"a b\tshe\n", (1, "docid 'a b' contains white space" + _NO_SPACE)),
    ("docid with nbsp", "x\u00a0y\tshe\n".encode(),
     (1, "docid 'x\\xa0y' contains white space" + _NO_SPACE)),
    ("leading space", b"a\tshe\n b\the\n", (2, "docid ' b' contains white space" + _NO_SPACE)),
    ("bom inside", b"a\tshe\n\xef\xbb\xbfb\the\n",
     (2, "docid '\\ufeffb' contains a byte-order mark (U+FEFF); expected one only at the very "
         "start of the file")),
    ("empty text", b"a\tshe\nb\t \x0c \n", (2, "document 'b'" + _NO_TEXT)),
    ("unicode-space text", "a\t\u3000\n".encode(), (1, "document 'a'" + _NO_TEXT)),
    ("empty line", b"a\tshe\n\nb\the\n", (2, _EMPTY)),
    ("crlf empty line", b"a\tshe\r\n\r\nb\the\r\n", (2, _EMPTY)),
    ("cr splits a line", b"a\tshe\rhe\n", (2, "found no tab in 'he'; expected 'docid<TAB>text'")),
    ("not utf-8", b"a\tshe\nb\the \xff\n",
     (2, "byte 0xff at byte offset 11 of {where} (byte 6 of the line) is not valid UTF-8; "
         "expected UTF-8 text")),
    ("duplicate docid", b"a\tshe\nb\the\na\thim\n",
     (3, "docid 'a' is already used on line 1; expected each docid once")),
]  # fmt: skip


def write(path: Path, data: bytes, kind: str) -> Path:
    if kind == "gzip":
        path.write_bytes(gzip.compress(data, mtime=0))
    else:
        path.write_bytes(data)
    return path


def read_via(tmp_path: Path, data: bytes, kind: str, **options):
    """Read ``data`` as a plain file, a gzip file or from a FIFO fed by a thread."""
    if kind != "fifo":
        path = write(tmp_path / f"c-{kind}.tsv", data, kind)
        return path, read_collection_stats(path, LEX, **options)
    path = tmp_path / "c.fifo"
    os.mkfifo(path)

    def feed():
        with open(path, "wb") as handle:
            handle.write(data)

    writer = threading.Thread(target=feed)
    writer.start()
    try:
        return path, read_collection_stats(path, LEX, **options)
    finally:
        writer.join(timeout=10)


KINDS = ["plain", "gzip", "fifo"]
_LINES = b"".join(b"d%d\tshe said %d\n" % (i, i * 7919 % 10007) for i in range(5000))
_TRUNCATED_GZIP = gzip.compress(_LINES, mtime=0)[: len(gzip.compress(_LINES, mtime=0)) // 2]


@pytest.mark.parametrize("kind", KINDS)
@pytest.mark.parametrize(("data", "expected"), [c[1:] for c in GOOD], ids=[c[0] for c in GOOD])
def test_good_collections(tmp_path, kind, data, expected):
    _, stats = read_via(tmp_path, data, kind, workers=1)
    docids, lengths, counts = expected
    assert stats.docids.tolist() == docids
    assert stats.lengths.tolist() == lengths
    assert stats.group_counts.tolist() == counts


@pytest.mark.parametrize("kind", KINDS)
@pytest.mark.parametrize(("data", "expected"), [c[1:] for c in BAD], ids=[c[0] for c in BAD])
def test_bad_collections(tmp_path, kind, data, expected):
    line, message = expected
    if kind == "fifo" and "already used" in message:  # a stream cannot be re-read: see below
        message = (
            "the docid repeats the one on line 1 (found by hashing; a stream cannot be re-read "
            "to show it); expected each docid once"
        )
    where = "the decompressed file" if kind == "gzip" else "the file"
    path = tmp_path / ("c.fifo" if kind == "fifo" else f"c-{kind}.tsv")
    with pytest.raises(InputError) as info:
        read_via(tmp_path, data, kind, workers=2, block_bytes=4)
    assert str(info.value) == f"{path}:{line}: " + message.format(where=where)


def test_duplicate_docid_in_a_stream_is_found_without_rereading(tmp_path):
    with pytest.raises(InputError, match=r"c\.fifo:3: the docid repeats the one on line 1"):
        read_via(tmp_path, b"a\tshe\nb\the\na\thim\n", "fifo", workers=1)


def test_bad_line_in_a_later_block_with_many_threads(tmp_path):
    lines = [f"p{i}\tfiller text she" for i in range(2000)] + ["bad line"]
    path = write(tmp_path / "c.tsv", ("\n".join(lines) + "\n").encode(), "plain")
    with pytest.raises(InputError, match=re.escape(f"{path}:2001: found no tab in 'bad line'")):
        read_collection_stats(path, LEX, workers=2, block_bytes=1000)


@pytest.mark.parametrize(
    ("make", "fragment"),
    [
        (lambda p: p.mkdir(), "is a directory; expected a docid<TAB>text file"),
        (lambda p: None, "no such file"),
        (lambda p: p.write_bytes(_TRUNCATED_GZIP), "gzip data is truncated"),
        (lambda p: p.write_bytes(b"\x1f\x8b not really gzip"), "truncated or corrupt"),
        (lambda p: p.write_bytes(b""), "the name ends in '.gz' but the content is not gzip"),
    ],
    ids=["directory", "missing", "truncated gzip", "bad gzip", "empty file named .gz"],
)  # fmt: skip
def test_unreadable_sources_are_input_errors(tmp_path, make, fragment):
    path = tmp_path / "c.tsv.gz"
    make(path)
    with pytest.raises(InputError, match=re.escape(fragment)) as info:
        read_collection_stats(path, LEX, workers=1)
    assert str(info.value).startswith(str(path))


def test_unreadable_file():
    """As ``nobody`` (root reads any file), after counting a readable file in this process (the
    child imports and compiles nothing)."""
    with shared_folder() as folder:
        readable = write(folder / "open.tsv", b"a\tshe\n", "plain")
        assert list(read_collection_stats(readable, LEX, workers=1).docids) == ["a"]
        assert raised_unprivileged(lambda: read_collection_stats(readable, LEX, workers=1)) is None
        path = write(folder / "c.tsv", b"a\tshe\n", "plain")
        path.chmod(0)
        assert raised_unprivileged(lambda: read_collection_stats(path, LEX, workers=1)) == (
            "InputError",
            f"{path}: cannot be read (Permission denied); expected a readable docid<TAB>text file",
        )


@pytest.mark.parametrize("kind", ["not a directory", "symbolic link loop"])
def test_a_path_the_system_cannot_open_is_named_with_its_reason(tmp_path, kind):
    if kind == "not a directory":
        path = write(tmp_path / "c.tsv", b"a\tshe\n", "plain") / "c.tsv"
        reason = "Not a directory"
    else:
        path = tmp_path / "loop.tsv"
        path.symlink_to(path)
        reason = "Too many levels of symbolic links"
    with pytest.raises(InputError) as info:
        read_collection_stats(path, LEX, workers=1)
    assert str(info.value) == (
        f"{path}: cannot be read ({reason}); expected a readable docid<TAB>text file"
    )


def test_gzip_is_recognised_by_its_bytes_not_its_name(tmp_path):
    gzip_named_tsv = write(tmp_path / "packed.tsv", b"a\tshe he\n", "gzip")
    stats = read_collection_stats(gzip_named_tsv, LEX, workers=1)
    assert stats.group_counts.tolist() == [[1, 1]]


def test_plain_file_named_gz_is_refused_as_by_every_reader(tmp_path):
    plain_named_gz = write(tmp_path / "plain.tsv.gz", b"a\tshe he\n", "plain")
    with pytest.raises(InputError, match="not gzip-compressed"):
        read_collection_stats(plain_named_gz, LEX, workers=1)


def test_empty_fifo_is_empty_not_judged_by_size(tmp_path):
    with pytest.raises(InputError) as info:
        read_via(tmp_path, b"", "fifo", workers=1)
    assert str(info.value) == (
        f"{tmp_path / 'c.fifo'}: the collection is empty; expected 'docid<TAB>text' lines"
    )


def test_gzip_through_a_fifo(tmp_path):
    _, stats = read_via(tmp_path, gzip.compress(b"a\tshe\nb\the him\n", mtime=0), "fifo", workers=1)
    assert stats.group_counts.tolist() == [[1, 0], [0, 2]]


def _command(*args: str, **kwargs) -> subprocess.CompletedProcess:
    env = dict(os.environ, PYTHONPATH=str(REPO / "src"))
    return subprocess.run(
        [sys.executable, "-m", "rankbias.cli", *args],
        capture_output=True,
        text=True,
        env=env,
        check=False,
        **kwargs,
    )


def test_stats_reads_dev_stdin_and_process_substitution(tmp_path):
    terms = tmp_path / "terms.csv"
    terms.write_text("she,f\nhe,m\n")
    source = write(tmp_path / "c.tsv", b"a\tshe he she\nb\tnothing\n", "plain")
    out = tmp_path / "stdin.csv"
    with open(source, "rb") as stdin:
        done = _command("stats", "--collection", "/dev/stdin", "--terms", str(terms),
                        "--out", str(out), "--workers", "1", stdin=stdin)  # fmt: skip
    assert done.returncode == 0, done.stderr
    # a: f 2, m 1 -> 1 - (|2/3 - 1/2| + |1/3 - 1/2|) = 2/3; b: no term -> neutral, 1
    assert out.read_text().splitlines()[1:] == ["a,3,2,1,0.6666666666666667", "b,1,0,0,1.0"]
    out2 = tmp_path / "subst.csv"
    script = (
        f"{sys.executable} -m rankbias.cli stats --collection <(cat {source}) "
        f"--terms {terms} --out {out2}"
    )
    done = subprocess.run(
        ["bash", "-c", script],
        capture_output=True,
        text=True,
        env=dict(os.environ, PYTHONPATH=str(REPO / "src")),
        check=False,
    )
    assert done.returncode == 0, done.stderr
    assert out2.read_text() == out.read_text()


@pytest.mark.signals
def test_no_worker_outlives_a_killed_stats(tmp_path):
    """kill -9 of `rankbias stats` leaves no process behind (the scan runs on threads)."""
    terms = tmp_path / "terms.csv"
    terms.write_text("she,f\nhe,m\n")
    path = tmp_path / "big.tsv"
    line = b"she said he would go there and she did not " * 8
    with open(path, "wb") as handle:
        for start in range(0, 400_000, 20_000):
            handle.write(b"".join(b"d%d\t%s\n" % (i, line) for i in range(start, start + 20_000)))
    env = dict(os.environ, PYTHONPATH=str(REPO / "src"))
    process = subprocess.Popen(
        [sys.executable, "-m", "rankbias.cli", "stats", "--collection", str(path),
         "--terms", str(terms), "--out", str(tmp_path / "o.parquet"), "--workers", "2"],
        env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
    )  # fmt: skip
    children: set[int] = set()
    deadline = time.monotonic() + 20
    while time.monotonic() < deadline and process.poll() is None:
        children |= _descendants(process.pid)
        try:
            threads = len(list(Path(f"/proc/{process.pid}/task").iterdir()))
        except OSError:  # the process ended between poll() and the listing
            threads = 0
        if threads > 1:  # the scanning threads have started
            break
        time.sleep(0.05)
    children |= _descendants(process.pid)
    process.send_signal(signal.SIGKILL)
    process.wait(timeout=10)
    deadline = time.monotonic() + 5
    alive = {pid for pid in children if Path(f"/proc/{pid}").exists()}
    while alive and time.monotonic() < deadline:
        time.sleep(0.1)
        alive = {pid for pid in alive if Path(f"/proc/{pid}").exists()}
    assert alive == set()


def _descendants(pid: int) -> set[int]:
    found: set[int] = set()
    for task in Path(f"/proc/{pid}/task").glob("*"):
        try:
            kids = (task / "children").read_text().split()
        except OSError:
            continue
        for kid in map(int, kids):
            found |= {kid} | _descendants(kid)
    return found


# ---- the API for distributed drivers ----------------------------------------------------------
BREAKS = st.sampled_from(["\n", "\r\n", "\r"])
LINE = st.tuples(
    st.lists(st.sampled_from(["she", "He", "him", "x", "señora", "the", ",", "é"]), min_size=1,
             max_size=8).map(" ".join),
    BREAKS,
)  # fmt: skip


@settings(max_examples=60, deadline=None)
@given(
    lines=st.lists(LINE, min_size=1, max_size=40),
    cuts=st.lists(st.integers(min_value=0, max_value=40), max_size=5),
)
def test_blocks_counted_one_by_one_equal_the_reader(tmp_path_factory, lines, cuts):
    """count_block (the Dask engine's counter) on blocks cut at line ends, at their absolute
    offsets, gives the reader's numbers and per-term counts by hand."""
    raw = [f"d{i}\t{t}{br}".encode() for i, (t, br) in enumerate(lines)]
    data = b"".join(raw)
    path = tmp_path_factory.mktemp("r") / "c.tsv"
    path.write_bytes(data)
    ends = sorted({0, len(raw), *(c for c in cuts if c <= len(raw))})
    matcher = TermMatcher(LEX, "default")
    parts = []
    for a, b in zip(ends[:-1], ends[1:], strict=True):
        offset = sum(map(len, raw[:a]))
        parts.append(count_block(b"".join(raw[a:b]), offset, matcher, per_term=True))
    whole = read_collection_stats(path, LEX, per_term=True, workers=1)
    stats = [p.stats(matcher) for p in parts]
    assert np.concatenate([p.docids for p in stats]).tolist() == whole.docids.tolist()
    assert np.concatenate([p.lengths for p in stats]).tolist() == whole.lengths.tolist()
    assert np.concatenate([p.group_counts for p in stats]).tolist() == whole.group_counts.tolist()
    expected = [[Counter(re.findall(r"[^\W_]+", t.lower()))[term] for term in LEX.terms]
                for t, _ in lines]  # fmt: skip
    assert np.vstack([p.term_counts.toarray() for p in stats]).tolist() == expected


# ---- streams (a pipe, gzip): read in order, in blocks of whole lines --------------------------
_BOM = b"\xef\xbb\xbf"
# the first line holds U+FEFF (the byte-order mark's bytes) at byte 8 of the stream, where the
# second read of 8 bytes begins: only the stream's first 3 bytes are a byte-order mark
_STREAM = "a\tshe\ufeffher\nb\the said\r\nc\thim\rd\ther\n".encode()


@pytest.mark.parametrize("gzipped", [False, True])
def test_stream_blocks_are_whole_lines_at_their_offsets(gzipped):
    raw = _BOM + _STREAM
    raw = gzip.compress(raw, mtime=0) if gzipped else raw
    where = "the decompressed file" if gzipped else "the file"
    # read 8 bytes at a time: the mark and "a\tshe" (kept); U+FEFF, "her\n" and "b" end the
    # first line (12 bytes, at byte 3); "b\the said" waits for its CR LF; "c\thim\r" waits
    # too (a CR at the end of a read may be followed by LF); "d\ther\n" ends the stream
    assert list(stream_blocks(io.BytesIO(raw), "c.tsv", gzipped, 8)) == [
        ("a\tshe\ufeffher\n".encode(), 3, where),
        (b"b\the said\r\n", 15, where),
        (b"c\thim\rd\ther\n", 26, where),
    ]


def test_stream_blocks_refuse_a_line_longer_than_the_limit_naming_where_it_starts():
    def blocks(data, block_bytes):
        return list(stream_blocks(io.BytesIO(data), "c.tsv", False, block_bytes, 10))

    assert len(blocks(b"a\tshe\nb\txxxxxxxx\n", 2)) >= 2  # a line of 10 bytes is allowed
    for block_bytes in (4, 1000):  # still without a line end, or within a block
        with pytest.raises(InputError) as info:
            blocks(b"a\tshe\nb\t" + b"x" * 20 + b"\nc\the\n", block_bytes)
        assert str(info.value) == (
            "c.tsv: the line that starts at byte 6 runs for more than 10 bytes without a line "
            "end; expected docid<TAB>text lines (--max-line-bytes sets the limit)"
        )


class _FailingStream(io.RawIOBase):
    def readable(self):
        return True

    def __init__(self, error: OSError):
        self.error = error

    def readinto(self, buffer):
        raise self.error


def test_a_stream_that_fails_to_read_is_named_with_the_reason():
    with pytest.raises(InputError) as info:
        list(
            stream_blocks(
                _FailingStream(OSError(errno.EIO, "Input/output error")), "c.tsv", False, 8
            )
        )
    assert str(info.value) == (
        "c.tsv: cannot be read (Input/output error); expected a readable docid<TAB>text file"
    )
    with pytest.raises(InputError) as info:  # an error without a description: its kind
        list(stream_blocks(_FailingStream(ConnectionResetError()), "c.tsv", False, 8))
    assert str(info.value) == (
        "c.tsv: cannot be read (ConnectionResetError); expected a readable docid<TAB>text file"
    )


def test_block_error_carries_the_line_in_block_and_the_offset():
    data = b"a\tshe\r\nb\the\rc\tbad\ttab\nd\the\n"
    with pytest.raises(BlockError) as info:
        count_block(data, 100, TermMatcher(LEX, "default"), per_term=False)
    err = info.value
    assert err.line_in_block == 2  # 0-based: the third line
    assert err.byte_offset == 100 + 12  # "a\tshe\r\n" is 7 bytes, "b\the\r" 5
    assert err.message.startswith("found 2 tabs in 'c\\tbad\\ttab'")
    assert err.args == (2, err.message, 112)  # all three in args: an exception pickles its args
    again = pickle.loads(pickle.dumps(err))
    assert (again.line_in_block, again.byte_offset, str(again)) == (2, 112, str(err))


def test_a_line_the_scanner_leaves_to_python_is_checked_and_counted_term_by_term():
    """A non-ASCII docid sends its line to the exact path: a bad one is refused at its own line
    and byte offset; a good one gets the same per-term counts as under an ASCII docid."""
    matcher = TermMatcher(LEX, "default")
    with pytest.raises(BlockError) as info:
        count_block(b"d1\tshe\nn\xc2\xba2\t \n", 100, matcher, per_term=False)
    assert (info.value.line_in_block, info.value.byte_offset) == (1, 107)
    assert info.value.message.startswith("document 'nº2' has no text")
    block = count_block("d1\tshe her he\nnº2\tshe her he\n".encode(), 0, matcher, per_term=True)
    stats = block.stats(matcher)
    assert stats.docids.tolist() == ["d1", "nº2"]
    counts = dict(zip(stats.terms, stats.term_counts.toarray()[1].tolist(), strict=True))
    assert counts == {"her": 1, "señora": 0, "she": 1, "he": 1, "him": 0}
    assert stats.term_counts.toarray()[0].tolist() == stats.term_counts.toarray()[1].tolist()


# ---- iterators and ir_datasets ---------------------------------------------------------------
def test_pairs_follow_the_same_rules():
    stats = stats_from_pairs([("a", "She\tsaid\nhe"), ("b", "him")], LEX, "corpus", workers=1)
    assert stats.lengths.tolist() == [3, 1]
    assert stats.group_counts.tolist() == [[1, 1], [0, 1]]
    with pytest.raises(InputError, match=r"corpus:2: docid 'b c' contains white space"):
        stats_from_pairs([("a", "she"), ("b c", "he")], LEX, "corpus", workers=1)
    with pytest.raises(InputError, match=r"corpus:2: docid 'b\\tc' contains a tab"):
        stats_from_pairs([("a", "she"), ("b\tc", "he")], LEX, "corpus", workers=1)
    with pytest.raises(InputError, match=r"corpus:3: docid 'a' is already used on line 1"):
        stats_from_pairs([("a", "she"), ("b", "he"), ("a", "x")], LEX, "corpus", workers=1)


def test_pairs_without_a_document_are_an_empty_collection():
    with pytest.raises(InputError) as info:
        stats_from_pairs([], LEX, "corpus", workers=1)
    assert str(info.value) == "corpus: the collection is empty"


@pytest.mark.parametrize("workers", [1, 2, 3, None])
def test_workers_is_the_number_of_counting_threads(tmp_path, monkeypatch, workers):
    """``workers`` threads count the blocks (one: the calling thread, no pool); by default, one
    per core; through every reader."""
    import rankbias.collection as module

    pools = []

    class Recording(module.ThreadPoolExecutor):
        def __init__(self, max_workers, **kwargs):
            pools.append(max_workers)
            super().__init__(max_workers, **kwargs)

    monkeypatch.setattr(module, "ThreadPoolExecutor", Recording)
    pairs = [(f"d{i}", f"she said {i}") for i in range(40)]
    path = tmp_path / "c.tsv"
    path.write_text("".join(f"{docid}\t{text}\n" for docid, text in pairs))
    threads = workers or os.cpu_count() or 1
    expected = [threads] if threads > 1 else []
    for count in (
        lambda: read_collection_stats(path, LEX, workers=workers, block_bytes=64),
        lambda: list(iter_collection_stats(path, LEX, workers=workers, block_bytes=64)),
        lambda: stats_from_pairs(pairs, LEX, "corpus", workers=workers, block_bytes=64),
    ):
        pools.clear()
        assert len(count()) > 0
        assert pools == expected


@pytest.mark.parametrize("kind", ["plain", "with a byte-order mark", "gzip"])
def test_a_regular_file_is_counted_from_byte_ranges_read_on_the_threads(
    tmp_path, monkeypatch, kind
):
    """The counting threads read their own line-aligned ranges of a regular uncompressed file
    (``os.pread``: what lets counting scale with cores); gzip data and pipes are read as one
    stream, cut into blocks as they arrive.  The statistics are the same either way."""
    import rankbias.collection as module

    ranges, streams = [], []
    read = module.read_range
    monkeypatch.setattr(module, "read_range", lambda *a: ranges.append(a[1:3]) or read(*a))
    stream = module.stream_blocks
    monkeypatch.setattr(module, "stream_blocks", lambda *a: streams.append(a[1]) or stream(*a))
    text = "".join(f"d{i}\tshe said {i} to him\n" for i in range(300)).encode()
    data = {"plain": text, "with a byte-order mark": b"\xef\xbb\xbf" + text}.get(kind)
    path = tmp_path / "c.tsv"
    path.write_bytes(gzip.compress(text, mtime=0) if data is None else data)
    stats = read_collection_stats(path, LEX, workers=2, block_bytes=1000)
    assert stats.docids.tolist() == [f"d{i}" for i in range(300)]
    assert stats.group_counts.sum(axis=0).tolist() == [300, 300]
    if data is None:
        assert ranges == [] and streams == [str(path)]
    else:
        start = len(data) - len(text)
        cuts = sorted(ranges)  # several, end to end, from the first line to the file's end
        assert streams == [] and len(cuts) >= len(text) // 1000
        assert cuts[0][0] == start and cuts[-1][1] == len(data)
        assert all(a[1] == b[0] for a, b in itertools.pairwise(cuts))


@pytest.mark.parametrize("block_bytes", [1, 1 << 20], ids=["a block per document", "one block"])
def test_pairs_are_refused_by_position_and_byte_offset(block_bytes):
    def read(*pairs, terms=False):
        return stats_from_pairs(pairs, LEX, "corpus", per_term=terms, block_bytes=block_bytes)

    stats = read(("a", "She\tsaid\rhe"), ("b", "him\r\nher"))  # each break becomes a space
    assert stats.lengths.tolist() == [3, 2] and stats.group_counts.tolist() == [[1, 1], [1, 1]]
    assert stats.term_counts is None and read(("a", "she"), terms=True).term_counts.nnz == 1
    assert stats_from_pairs([("a", "she")], LEX, "corpus").term_counts is None  # the default
    for docid in ("b\nc", "b\rc", "b\tc"):
        with pytest.raises(InputError) as info:
            read(("a", "she"), (docid, "he"))
        assert str(info.value) == (
            f"corpus:2: docid {docid!r} contains a tab or a line break; expected none"
        )
    # a lone surrogate (which UTF-8 cannot hold) in the third document: "a\tshe\n" is 6
    # bytes, "b\the\n" 5, "c\tx " 4 more
    with pytest.raises(InputError) as info:
        read(("a", "she"), ("b", "he"), ("c", "x \ud800"))
    assert str(info.value) == (
        "corpus:3: byte 0xed at byte offset 15 of the documents (byte 5 of the line) is not "
        "valid UTF-8; expected UTF-8 text"
    )


def test_pairs_are_cut_into_blocks_of_whole_documents_at_their_offsets():
    from rankbias.collection import _pair_blocks

    pairs = [(f"d{i}", "she said") for i in range(10)]  # each line "dI\tshe said\n": 12 bytes
    blocks = list(_pair_blocks(pairs, "corpus", 36))  # a block ends once it holds 36 bytes
    assert [(len(block), offset) for block, offset, _ in blocks] == [
        (36, 0), (36, 36), (36, 72), (12, 108)
    ]  # fmt: skip
    assert b"".join(block for block, _, _ in blocks) == b"".join(
        f"{d}\t{t}\n".encode() for d, t in pairs
    )
    assert {where for _, _, where in blocks} == {"the documents"}


class _FailingCorpus:
    def has_docs(self):
        return True

    def docs_count(self):
        raise OSError("[Errno 101] Network is unreachable")

    def docs_iter(self):
        raise ConnectionError("[Errno -3] Temporary failure in name resolution")
        yield  # pragma: no cover


def test_offline_ir_datasets_id_is_an_input_error(monkeypatch):
    import types

    fake = types.ModuleType("ir_datasets")
    fake.load = lambda dataset_id: _FailingCorpus()
    monkeypatch.setitem(sys.modules, "ir_datasets", fake)
    with pytest.raises(InputError) as info:
        corpus = ir_datasets_corpus("msmarco-passage")
        pairs = ((doc.doc_id, document_text(doc)) for doc in corpus.docs_iter())
        stats_from_pairs(pairs, LEX, "msmarco-passage", workers=1)
    message = str(info.value)
    assert "ir_datasets id 'msmarco-passage'" in message
    assert "could not be read or downloaded (ConnectionError" in message
    corpus = ir_datasets_corpus("msmarco-passage")
    assert corpus.has_docs()
    with pytest.raises(InputError, match=r"could not be read or downloaded \(OSError: \[Errno 101"):
        corpus.docs_count()


class _SlowMirrorCorpus:
    """A corpus whose store answers by position and keyword, then loses its mirror."""

    def has_docs(self):
        return True

    def lookup(self, docid, *, field="text"):
        if docid == "gone":
            raise OSError("the mirror answered: " + "503 Service Unavailable " * 10)
        if docid == "slow":
            raise TimeoutError("timed out")
        if docid == "edge":
            raise OSError("e" * 160)
        if docid == "over":
            raise OSError("o" * 161)
        return (docid, field)


def test_an_ir_datasets_corpus_passes_calls_through_and_names_a_failure_whole(monkeypatch):
    import types

    fake = types.ModuleType("ir_datasets")
    fake.load = lambda dataset_id: _SlowMirrorCorpus()
    monkeypatch.setitem(sys.modules, "ir_datasets", fake)
    corpus = ir_datasets_corpus("msmarco-passage")
    assert corpus.lookup("d1", field="title") == ("d1", "title")
    assert corpus.lookup("d2") == ("d2", "text")
    with pytest.raises(InputError) as info:
        corpus.lookup("gone")
    reason = ("the mirror answered: " + "503 Service Unavailable " * 10).strip()
    assert len(reason) > 160  # shown cut at 160 characters
    assert str(info.value) == (
        "ir_datasets id 'msmarco-passage': its documents could not be read or downloaded "
        f"(OSError: {reason[:159]}…); expected the data in the ir_datasets cache "
        "(~/.ir_datasets or $IR_DATASETS_HOME) or a network connection; or pass a docid<TAB>text "
        "file"
    )
    with pytest.raises(InputError, match=r"downloaded \(TimeoutError: timed out\); expected"):
        corpus.lookup("slow")
    with pytest.raises(InputError, match=rf"\(OSError: {'e' * 160}\); expected"):
        corpus.lookup("edge")  # 160 characters are shown whole
    with pytest.raises(InputError, match=rf"\(OSError: {'o' * 159}…\); expected"):
        corpus.lookup("over")  # 161 are cut


def test_iter_collection_stats_streams_blocks(tmp_path):
    lines = b"".join(b"d%d\tshe he him\n" % i for i in range(500))
    path = write(tmp_path / "c.tsv", lines, "plain")
    blocks = list(iter_collection_stats(path, LEX, workers=2, block_bytes=512))
    assert len(blocks) > 5
    assert sum(len(b) for b in blocks) == 500
    assert np.vstack([b.group_counts for b in blocks]).sum(axis=0).tolist() == [500, 1000]
    assert all(b.term_counts is None for b in blocks)  # unless asked for
    assert read_collection_stats(path, LEX, workers=1).term_counts is None
    with pytest.raises(InputError, match=r"runs for more than 10 bytes without a line end"):
        list(iter_collection_stats(path, LEX, workers=1, max_line_bytes=10))


def documents_read(path: Path, data: bytes, kind: str, limit: int, block_bytes=1 << 20) -> int:
    """How many documents ``iter_collection_stats`` reads from ``data`` at ``path`` (a plain
    file, gzip file or FIFO) under ``max_line_bytes=limit``."""

    def count() -> int:
        blocks = iter_collection_stats(
            path, LEX, workers=1, block_bytes=block_bytes, max_line_bytes=limit
        )
        return sum(len(block) for block in blocks)

    if kind != "fifo":
        write(path, data, kind)
        return count()
    os.mkfifo(path)

    def feed() -> None:  # the reader may stop reading at a refused line before the end
        with contextlib.suppress(BrokenPipeError):
            path.write_bytes(data)

    writer = threading.Thread(target=feed)
    writer.start()
    try:
        return count()
    finally:
        writer.join(timeout=10)


@pytest.mark.parametrize("kind", KINDS)
def test_a_line_of_max_line_bytes_is_read_and_one_byte_more_is_refused(tmp_path, kind):
    """``max_line_bytes=40``: a 40-byte line (line end not counted) is read, first or not, and
    so are many short lines ended by CR alone; a 41-byte line is refused, naming the byte where
    it starts (the first such line, not the longest), on every reader (a file is read in
    ranges, gzip and FIFOs as streams)."""
    short, exact, over = b"d1\tshe he\n", b"d2\t" + b"x" * 37 + b"\n", b"d2\t" + b"x" * 38 + b"\n"
    assert documents_read(tmp_path / "a", short + exact + b"d3\the\n", kind, 40) == 3
    assert documents_read(tmp_path / "b", exact, kind, 40) == 1
    only_cr = b"".join(b"d%d\tshe\r" % i for i in range(10))
    assert documents_read(tmp_path / "c", only_cr, kind, 40) == 10
    long = b"d2\t" + b"x" * 100 + b"\n"  # read in blocks of 16 bytes: found between blocks
    for name, data, start, block_bytes in (
        ("d", over + short, 0, 1 << 20),
        ("e", short + over, len(short), 1 << 20),
        ("f", short + long, len(short), 16),
        # two lines over the limit in one block: the first is named, not the longest
        ("h", short + over + long, len(short), 1 << 20),
        # longer than a 64 KiB look-ahead for the next cut: refused while the file is cut, and
        # named where it starts, not at the cut (byte 16) where the search began
        ("g", short + b"d2\t" + b"x" * 70_000 + b"\n", len(short), 16),
        # the cut searched 140,000 bytes into the line: found three 64 KiB windows back
        ("i", short * 10 + b"d2\t" + b"x" * 300_000 + b"\n", len(short) * 10, 140_100),
        ("j", b"d2\t" + b"x" * 300_000 + b"\n" + short, 0, 140_000),  # the file's first line
    ):
        with pytest.raises(InputError) as info:
            documents_read(tmp_path / name, data, kind, 40, block_bytes)
        assert str(info.value) == (
            f"{tmp_path / name}: the line that starts at byte {start} runs for more than 40 "
            "bytes without a line end; expected docid<TAB>text lines (--max-line-bytes sets the "
            "limit)"
        )


@pytest.mark.parametrize("end", [b"\n", b"\r\n", b"\r"], ids=["lf", "crlf", "cr"])
def test_a_file_cut_into_ranges_anywhere_gives_the_same_statistics(tmp_path, end):
    """A regular file is cut into line-aligned ranges of about ``block_bytes``: every size from
    1 to 40 bytes (cuts inside CRLF pairs and next to them) gives the statistics of one range;
    a CRLF pair split by the 64 KiB look-ahead window is one line break; a cut searched for
    beyond half the line limit is no error."""
    lines = [b"d%d\t%s" % (i, b" ".join([b"she", b"he", b"x" * (i % 5)])) for i in range(12)]
    path = tmp_path / "c.tsv"
    path.write_bytes(end.join(lines) + end)
    # by hand: each line has one "she" and one "he", and an x-word unless i % 5 == 0
    docids, lengths = [f"d{i}" for i in range(12)], [2 if i % 5 == 0 else 3 for i in range(12)]
    for block_bytes in range(1, 41):
        parts = list(iter_collection_stats(path, LEX, workers=1, block_bytes=block_bytes))
        assert [d for p in parts for d in p.docids] == docids
        assert np.concatenate([p.lengths for p in parts]).tolist() == lengths
        assert np.vstack([p.group_counts for p in parts]).tolist() == [[1, 1]] * 12
    within = iter_collection_stats(path, LEX, workers=1, block_bytes=30, max_line_bytes=40)
    assert sum(len(p) for p in within) == 12
    # longer than the look-ahead window: every break is found, none is a long line
    many = tmp_path / "many.tsv"
    many.write_bytes(b"".join(b"d%d\tshe%s" % (i, end) for i in range(8_000)))
    within = iter_collection_stats(many, LEX, workers=1, block_bytes=4096, max_line_bytes=40)
    assert sum(len(p) for p in within) == 8_000
    # the window of the cut searched for from byte 16 ends on the CR of a CRLF pair
    long = tmp_path / "long.tsv"
    long.write_bytes(b"d1\t" + b"x" * (16 + 65_532) + b"\r\nd2\tshe\r\n")
    parts = list(iter_collection_stats(long, LEX, workers=1, block_bytes=16))
    assert [d for p in parts for d in p.docids] == ["d1", "d2"]


def test_an_endless_stream_is_refused_at_its_first_overlong_line_without_waiting_for_its_end(
    tmp_path,
):
    """A FIFO whose writer sends 200 kB without a line end and then keeps it open: refused
    under ``max_line_bytes=40`` once the first blocks have come (read in blocks of 64 bytes
    here), never read to its end first."""
    path = tmp_path / "endless.fifo"
    os.mkfifo(path)
    done = threading.Event()

    def feed() -> None:
        with contextlib.suppress(BrokenPipeError), open(path, "wb") as handle:
            handle.write(b"d1\t" + b"x" * 200_000)
            handle.flush()
            done.wait(timeout=10)

    writer = threading.Thread(target=feed)
    writer.start()
    started = time.monotonic()
    try:
        with pytest.raises(InputError, match="runs for more than 40 bytes without a line end"):
            list(iter_collection_stats(path, LEX, workers=1, block_bytes=64, max_line_bytes=40))
        assert time.monotonic() - started < 5
    finally:
        done.set()
        writer.join(timeout=10)


def test_a_collection_that_cannot_be_opened_or_read_is_named_with_the_reason(tmp_path):
    """The system's reason, whole, when the path cannot be looked up (a symbolic link to
    itself), opened (a socket) or read (``/proc/self/mem``: its first bytes are an I/O error);
    a ``.gz`` name on content that is not gzip is refused before any reading."""
    import socket
    import tempfile

    loop = tmp_path / "loop.tsv"
    loop.symlink_to(loop)
    with tempfile.TemporaryDirectory(dir="/tmp") as short:  # a socket path has ~100 bytes
        sock = Path(short) / "c.sock"
        listener = socket.socket(socket.AF_UNIX)
        listener.bind(str(sock))
        cases = [(loop, "Too many levels of symbolic links"), (sock, "No such device or address")]
        if Path("/proc/self/mem").exists():
            cases.append((Path("/proc/self/mem"), "Input/output error"))
        try:
            for path, reason in cases:
                with pytest.raises(InputError) as info:
                    read_collection_stats(path, LEX, workers=1)
                assert str(info.value) == (
                    f"{path}: cannot be read ({reason}); expected a readable docid<TAB>text file"
                )
        finally:
            listener.close()
    named = tmp_path / "c.tsv.gz"
    named.write_bytes(b"d1\tshe\n")
    with pytest.raises(InputError) as info:
        read_collection_stats(named, LEX, workers=1)
    assert str(info.value) == (
        f"{named}: the name ends in '.gz' but the content is not gzip-compressed (first bytes "
        "b'd1'); expected a gzip-compressed collection, or rename the file"
    )


def test_at_most_twice_workers_tasks_are_in_flight_and_closing_cancels_the_rest():
    """The thread pool of the readers holds at most ``2 × workers`` tasks; closing the results
    early cancels the queued ones and waits for the running ones (none runs after)."""
    from rankbias.collection import _ordered

    pulled, executed = [], []

    def tasks(n):
        for i in range(n):
            pulled.append(i)
            yield (i,)

    results = _ordered(lambda i: i, tasks(20), 3)
    assert next(results) == 0 and len(pulled) == 6
    assert list(results) == list(range(1, 20))

    def slow(i):
        time.sleep(0.01 if i == 0 else 1.0)
        executed.append(i)
        return i

    pulled.clear()
    results = _ordered(slow, tasks(20), 2)
    assert next(results) == 0 and len(pulled) == 4
    results.close()  # task 1 runs (till 1 s), task 2 runs or is queued, task 3 is queued
    ran = sorted(executed)
    assert 1 in ran and 3 not in ran  # closing waited for task 1 and cancelled task 3
    time.sleep(0.05)
    assert sorted(executed) == ran


def test_a_word_list_the_scanner_cannot_take_is_counted_in_python(tmp_path):
    """A lexicon built in Python may hold a term with a control character (the word-list reader
    refuses them); under the whitespace tokeniser every line is then counted in Python, which a
    warning says, with the reference's numbers, a non-ASCII docid included."""
    lexicon = Lexicon.from_mapping({"a\x0bb": "f", "straße": "m", "he": "m"})
    path = tmp_path / "c.tsv"
    path.write_text(
        "d1\tA\x0bB he  STRAẞE\x0b\nnº2\ta\x0bb. he\nd3\ta\x0bb he he\n", encoding="utf-8"
    )  # d3 is all ASCII: the scanner would count it, wrongly (\v splits its tokens)
    with pytest.warns(UserWarning, match="every line is counted in Python"):
        stats = read_collection_stats(path, lexicon, tokenizer="whitespace", per_term=True)
    # d1: "a\x0bb he  straße" (rstrip takes the last \x0b): a\x0bb | he | "" | straße
    assert stats.docids.tolist() == ["d1", "nº2", "d3"] and stats.lengths.tolist() == [4, 2, 3]
    assert stats.group_counts.tolist() == [[1, 2], [0, 1], [1, 2]]
    assert stats.terms == ("a\x0bb", "he", "straße") and stats.term_counts.dtype == np.int64
    assert stats.term_counts.toarray().tolist() == [[1, 1, 1], [0, 1, 0], [1, 2, 0]]


@pytest.mark.parametrize("tokenizer", ["default", "whitespace"])
def test_ascii_lines_are_counted_by_the_scanner_alone_and_without_a_warning(monkeypatch, tokenizer):
    """The fast path is taken whenever it can be: an ASCII block and a lexicon without control
    characters never reach the Python counter, under either tokenizer, and nothing warns. A
    term Python holds but UTF-8 cannot (a lone surrogate, from Lexicon.from_mapping) takes the
    scanner too and is found nowhere."""
    import warnings

    python_counted = []
    count = TermMatcher.count
    monkeypatch.setattr(TermMatcher, "count", lambda self, texts, per_term: python_counted.append(
        texts) or count(self, texts, per_term))  # fmt: skip
    lexicon = Lexicon.from_mapping({"she": "f", "her": "f", "he": "m", "he\ud800": "m"})
    matcher = TermMatcher(lexicon, tokenizer)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        block = count_block(b"d1\tshe told her he\nd2\the said\n", 0, matcher, per_term=True)
    stats = block.stats(matcher)
    assert python_counted == []
    assert stats.lengths.tolist() == [4, 2] and stats.group_counts.tolist() == [[2, 1], [0, 1]]
    assert stats.terms == ("her", "she", "he", "he\ud800")
    assert stats.term_counts.toarray().tolist() == [[1, 1, 1, 0], [0, 0, 1, 0]]


@settings(max_examples=200, deadline=None)
@given(
    pairs=st.lists(st.tuples(st.integers(0, 3), st.integers(0, 2)), min_size=0, max_size=30),
    cut=st.integers(0, 30),
)
def test_check_unique_finds_the_first_line_that_repeats_both_hashes(pairs, cut):
    """Hashes drawn from a few values (first hashes shared without the second, across the
    block boundary, three times): the error names the earliest line whose pair of hashes an
    earlier line has, and the earliest such earlier line."""
    h1 = np.array([a for a, _ in pairs], dtype=np.uint64)
    h2 = np.array([b for _, b in pairs], dtype=np.uint64)
    cut = min(cut, len(pairs))
    blocks = [(h1[:cut], h2[:cut]), (h1[cut:], h2[cut:])]
    first = {}
    expected = None
    for line, pair in enumerate(pairs):
        if pair in first:
            expected = (line + 1, first[pair] + 1)
            break
        first[pair] = line
    if expected is None:
        check_unique(blocks, "c.tsv", None)
        return
    with pytest.raises(InputError, match=rf"^c.tsv:{expected[0]}: the docid repeats the one on "
                       rf"line {expected[1]} "):  # fmt: skip
        check_unique(blocks, "c.tsv", None)


def test_an_id_or_document_of_the_wrong_kind_is_named():
    with pytest.raises(TypeError, match=r"^dataset_id: expected an ir_datasets id .*found list"):
        ir_datasets_corpus([])
    with pytest.raises(TypeError, match=r"^doc: expected an ir_datasets document, found NoneType"):
        document_text(None)


# ---- documents: (docid, text) as the engines read them --------------------------------------
# Passages written for these tests in the shape of MS MARCO's collection.tsv: integer docids,
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
        "according to 2,400 reported salaries.  ",
    ),
]


def write_passages(path: Path, newline: str = "\n", head: bytes = b"") -> Path:
    text = "".join(f"{d}\t{t}{newline}" for d, t in PASSAGES)
    path.write_bytes(head + text.encode("utf-8"))
    return path


@pytest.mark.parametrize(
    ("name", "newline", "head"),
    [
        ("c.tsv", "\n", b""),
        ("c.tsv", "\r\n", b""),
        ("c.tsv", "\r", b""),
        ("c.tsv", "\n", b"\xef\xbb\xbf"),
    ],
)
def test_documents_are_read_back_exactly(tmp_path, name, newline, head):
    path = write_passages(tmp_path / name, newline, head)
    assert list(iter_documents(path)) == PASSAGES
    assert list(iter_documents(str(path))) == PASSAGES


def test_documents_of_a_gzip_file_with_or_without_its_suffix(tmp_path):
    plain = write_passages(tmp_path / "c.tsv").read_bytes()
    for name in ("c.tsv.gz", "c.data"):
        (tmp_path / name).write_bytes(gzip.compress(plain, mtime=0))
        assert list(iter_documents(tmp_path / name)) == PASSAGES


@pytest.mark.parametrize("newline", ["\n", "\r\n", "\r"])
@pytest.mark.parametrize("kind", ["plain", "gzip"])
def test_docids_are_re_read_at_their_lines(tmp_path, newline, kind):
    """The Dask engine re-reads the docids of the lines its workers report (to name repeated
    docids): any line end, a byte-order mark, gzip known by its bytes (the file has no .gz)."""
    text = b"\xef\xbb\xbf" + write_passages(tmp_path / "c.tsv", newline).read_bytes()
    path = write(tmp_path / "c.data", text, kind)
    wanted = [3, 0, 3]
    with open(path, "rb") as raw:
        assert docids_at_lines(raw, wanted) == [PASSAGES[i][0] for i in wanted]
        assert raw.closed


def test_docids_are_re_read_without_reading_past_the_last_line_asked_for(tmp_path):
    # the line after the last one asked for is longer than a decoding chunk and not UTF-8
    # after 20,000 bytes: read, it would fail
    path = tmp_path / "c.tsv"
    path.write_bytes(b"a\tshe\nb\the\nc\t" + b"x" * 20_000 + b"\xff\n")
    with open(path, "rb") as raw:
        assert docids_at_lines(raw, [1]) == ["b"]


def test_documents_and_a_missing_final_line_break(tmp_path):
    path = tmp_path / "c.tsv"
    path.write_bytes(b"12\tfirst passage\r\n13\tsecond passage")
    assert list(iter_documents(path)) == [("12", "first passage"), ("13", "second passage")]


def test_documents_are_the_documents_the_engine_counts():
    from rankbias.lexicon import default_lexicon

    path = Path(__file__).resolve().parents[1] / "data/build/wikisample/collection.tsv"

    documents = list(iter_documents(path))
    stats = read_collection_stats(path, default_lexicon(), workers=1)
    assert [d for d, _ in documents] == list(stats.docids)
    lengths = [len(re.findall(r"[^\W_]+", t.rstrip().lower())) for _, t in documents]
    assert lengths == list(stats.lengths)


def test_documents_with_a_repeated_docid_are_all_yielded(tmp_path):
    path = tmp_path / "c.tsv"
    path.write_bytes(b"d1\tfirst\nd1\tsecond\n")
    assert list(iter_documents(path)) == [("d1", "first"), ("d1", "second")]


@pytest.mark.parametrize(
    ("bad_line", "found"),
    [
        (b"42 a passage whose tab was lost", "found no tab in"),
        (b"42\ta passage\twith a second tab", "found 2 tabs in"),
        (b"\ta passage without a docid", "found an empty docid"),
        (b"42\tcaf\xe9 in latin-1", "byte 0xe9 at byte offset"),
        (b"   ", "found an empty collection line"),
    ],
)
def test_a_bad_document_line_names_file_and_line(tmp_path, bad_line, found):
    path = write_passages(tmp_path / "c.tsv")
    lines = path.read_bytes().splitlines()
    path.write_bytes(b"\n".join(lines[:2] + [bad_line] + lines[2:]) + b"\n")
    documents = iter_documents(path)
    assert [next(documents), next(documents)] == PASSAGES[:2]
    with pytest.raises(InputError) as caught:
        next(documents)
    assert str(caught.value).startswith(f"{path}:3: ") and found in str(caught.value)


@pytest.mark.parametrize("kind", KINDS)
def test_documents_of_a_pipe_or_gzip_and_a_bad_byte_named_at_its_offset(tmp_path, kind):
    """Read as the engines read: from a FIFO (whose first bytes were read to tell gzip), gzip
    (offsets count the decompressed bytes); the text keeps its own last character."""
    data = write_passages(tmp_path / "p.tsv").read_bytes() + b"7\tMalcolm X\r\n"
    bad = data + b"8\tcaf\xe9\n"
    where = "the decompressed file" if kind == "gzip" else "the file"
    for payload, expected in ((data, None), (bad, f"{len(data) + 5} of {where} (byte 6")):
        if kind == "fifo":
            path = tmp_path / f"c{len(payload)}.fifo"
            os.mkfifo(path)
            writer = threading.Thread(target=path.write_bytes, args=(payload,))
            writer.start()
        else:
            path = write(tmp_path / f"c{len(payload)}.tsv", payload, kind)
        try:
            if expected is None:
                assert list(iter_documents(path)) == [*PASSAGES, ("7", "Malcolm X")]
                continue
            with pytest.raises(InputError) as caught:
                list(iter_documents(path))
            line = len(PASSAGES) + 2
            assert str(caught.value) == (
                f"{path}:{line}: byte 0xe9 at byte offset {expected} of the line) is not valid "
                "UTF-8; expected UTF-8 text"
            )
        finally:
            if kind == "fifo":
                writer.join(timeout=10)


def test_documents_of_a_pipe_come_in_blocks_before_it_ends(tmp_path):
    """iter_documents reads whole-line blocks of DEFAULT_BLOCK_BYTES: its first document comes
    while the writer still has most of its 32 MiB to write (the pipe holds 64 KiB), not after
    the whole input was read into memory."""
    path = tmp_path / "c.fifo"
    os.mkfifo(path)
    line = b"d\t" + b"a passage of words " * 20 + b"\n"
    written = []

    def feed():
        with open(path, "wb") as handle:
            for _ in range((32 << 20) // len(line)):
                handle.write(line)
                written.append(len(line))

    writer = threading.Thread(target=feed)
    writer.start()
    try:
        documents = iter_documents(path)
        assert next(documents) == ("d", line[2:-1].decode())
        assert sum(written) < 8 << 20
        assert sum(1 for _ in documents) == (32 << 20) // len(line) - 1
    finally:
        writer.join(timeout=30)


def test_documents_of_a_truncated_gzip_file_name_it(tmp_path):
    packed = gzip.compress(_LINES, mtime=0)
    path = write(tmp_path / "c.tsv.gz", packed[: len(packed) // 2], "plain")
    with pytest.raises(InputError) as caught:
        list(iter_documents(path))
    message = str(caught.value)
    assert message.startswith(f"{path}: the gzip data is truncated or corrupt after ")
    assert message.endswith("; expected a complete gzip file")


def test_document_text_is_the_default_text_where_a_document_has_one():
    titled = types.SimpleNamespace(text="the passage", default_text=lambda: "A title. the passage")
    assert document_text(titled) == "A title. the passage"
    assert document_text(FakeDoc("1", "the passage")) == "the passage"
    with pytest.raises(TypeError) as caught:
        document_text(42)
    assert str(caught.value) == "doc: expected an ir_datasets document, found int"


FakeDoc = namedtuple("FakeDoc", ["doc_id", "text"])


class FakeDataset:
    """The two methods of an ir_datasets dataset that rankbias uses."""

    def __init__(self, docs):
        self._docs = docs

    def has_docs(self) -> bool:
        return bool(self._docs)

    def docs_iter(self):
        return iter(self._docs)


@pytest.fixture
def fake_ir_datasets(monkeypatch) -> dict:
    """A stand-in ``ir_datasets`` module whose ``load`` looks ids up in a dict."""
    registry: dict[str, FakeDataset] = {}
    module = types.ModuleType("ir_datasets")
    module.load = lambda name: registry[name]
    monkeypatch.setitem(sys.modules, "ir_datasets", module)
    return registry


def test_documents_of_an_ir_datasets_id(fake_ir_datasets):
    fake_ir_datasets["msmarco-passage"] = FakeDataset([FakeDoc(d, t) for d, t in PASSAGES])
    assert list(iter_documents("msmarco-passage")) == PASSAGES


def test_documents_of_a_missing_file_unknown_or_docless_id(tmp_path, fake_ir_datasets):
    for source in (str(tmp_path / "absent.tsv"), "msmarco-pasage"):
        with pytest.raises(InputError) as caught:
            iter_documents(source)  # at once, not on first use
        assert str(caught.value) == (
            f"collection {source!r}: no such file and not a known ir_datasets id; expected a "
            "docid<TAB>text file or an id such as msmarco-passage"
        )
    fake_ir_datasets["msmarco-passage/dev/small"] = FakeDataset([])
    with pytest.raises(InputError, match="has no documents"):
        iter_documents("msmarco-passage/dev/small")


def test_documents_without_ir_datasets_say_how_to_install_it(monkeypatch):
    monkeypatch.setitem(sys.modules, "ir_datasets", None)  # makes `import ir_datasets` fail
    with pytest.raises(InputError) as caught:
        iter_documents("msmarco-passage")
    assert str(caught.value) == (
        "collection 'msmarco-passage': no such file, and ir_datasets (needed to read it as an "
        "ir_datasets id) is not installed; install it with `pip install 'rankbias[msmarco]'` or "
        "pass a docid<TAB>text file"
    )


def test_documents_of_a_tiny_dataset_registered_with_the_real_ir_datasets(tmp_path, monkeypatch):
    monkeypatch.setenv("IR_DATASETS_HOME", str(tmp_path / "ir_datasets_home"))
    import ir_datasets
    from ir_datasets.datasets.base import Dataset
    from ir_datasets.formats import TsvDocs, TsvQueries
    from ir_datasets.util import LocalDownload

    docs = write_passages(tmp_path / "collection.tsv")
    queries = tmp_path / "queries.tsv"
    queries.write_text("1048585\twhat is paula deen's brother\n2\tandrogen receptor define\n")
    dataset_id = f"rankbias-test/{uuid.uuid4().hex}"
    ir_datasets.registry.register(
        dataset_id, Dataset(TsvDocs(LocalDownload(docs)), TsvQueries(LocalDownload(queries)))
    )
    assert list(iter_documents(dataset_id)) == PASSAGES


def cuts_of(data: bytes, target: int, limit: int) -> list[tuple[int, int]]:
    """:func:`range_cuts` over the whole of ``data``, read from memory."""
    return list(range_cuts(lambda at, n: data[at : at + n], 0, len(data), target, limit, "c.tsv"))


def test_range_cuts_fall_after_the_line_that_holds_the_target_however_long_it_is():
    """A cut is the first line break at or after ``start + target``; a line longer than the
    64 KiB windows the search reads in is followed to its end (one cut, not the rest of the
    file), and a line of exactly ``limit`` bytes is a line, not a refusal."""
    data = b"a\tb\n" + b"x" * 70_000 + b"\nc\td\n" + b"e\tf\n" * 4
    # "a\tb\n" is bytes 0-3, the long line 4-70,003, its break 70,004; then 4-byte lines
    assert cuts_of(data, 6, 1 << 20) == [
        (0, 70_005), (70_005, 70_013), (70_013, 70_021), (70_021, 70_025)
    ]  # fmt: skip
    exact = b"a\n" + b"x" * 65_536 + b"\nb\n"
    assert cuts_of(exact, 2, 65_536) == [(0, 65_539), (65_539, len(exact))]
    # the refused line is named where it starts: found by reading back window by window
    for refused, target, start in [
        (b"a\n" + b"x" * 200_000, 2, 2),
        (b"a\n" + b"x" * 400_000, 150_000, 2),  # starts 2.3 windows before the target
        (b"a\r" + b"x" * 400_000, 150_000, 2),
        (b"a\nb\r\n" + b"x" * 400_000, 150_000, 5),
        (b"x" * 400_000, 150_000, 0),  # the first line of the file
        (b"\n" + b"x" * 400_000, 1, 1),
        (b"a\rb\r" + b"x" * 400_000, 150_000, 4),  # the last of two CRs
        (b"a\n" + b"x" * 290_000 + b"\nb\n", 150_000, 2),  # its end is not its start
    ]:
        with pytest.raises(InputError) as info:
            cuts_of(refused, target, 65_536)
        assert str(info.value) == (
            f"c.tsv: the line that starts at byte {start} runs for more than 65536 bytes without "
            "a line end; expected docid<TAB>text lines (--max-line-bytes sets the limit)"
        )
