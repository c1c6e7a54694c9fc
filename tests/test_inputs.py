"""Tests of rankbias.inputs: opening paths and streams, gzip by content, text rules, errors."""

from __future__ import annotations

import gzip
import io
import os
import random
import re
import subprocess
import sys
import threading

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from unprivileged import raised_unprivileged, shared_folder

from rankbias import inputs
from rankbias.errors import InputError
from rankbias.inputs import iter_lines, open_lines, read_bytes, source_name

LINES = ["first line", "", "t\u00e9l\u00e9phone\tx", "last"]


@pytest.mark.parametrize(
    ("raw", "expected"),
    [
        (b"a\nb\n", ["a", "b"]),
        (b"a\r\nb\r\n", ["a", "b"]),
        (b"a\rb\r", ["a", "b"]),
        (b"a\nb", ["a", "b"]),  # no final line end
        (b"a\n\nb\n", ["a", "", "b"]),  # a blank line is a line
        (b"a\r\n\r\nb", ["a", "", "b"]),
        (b"a\n\r", ["a", ""]),  # LF then a lone CR: two line ends
        (b"\xef\xbb\xbfa\nb\n", ["a", "b"]),  # BOM dropped
        (b"\xef\xbb\xbf", []),
        (b"", []),
        (b"\n", [""]),
        (b"a\xef\xbb\xbfb\n", ["a\ufeffb"]),  # a BOM elsewhere is a character
        # only CR and LF end lines, not the other characters str.splitlines() splits on
        ("a\x0bb\x0cc\x1cd\x85e\u2028f\n".encode(), ["a\x0bb\x0cc\x1cd\x85e\u2028f"]),
    ],
)
def test_line_rules(tmp_path, raw, expected):
    assert [text for _, text in iter_lines(raw, "x")] == expected
    path = tmp_path / "f.txt"
    path.write_bytes(raw)
    got = list(open_lines(path))
    assert [text for _, text in got] == expected
    assert [number for number, _ in got] == list(range(1, len(expected) + 1))


@settings(max_examples=80, deadline=None)
@given(
    lines=st.lists(st.text(alphabet="ab\u00e9\u20ac\t ,", max_size=6), min_size=1, max_size=12),
    end=st.sampled_from(["\n", "\r\n", "\r"]),
    bom=st.booleans(),
    chunk=st.integers(1, 7),
)
def test_chunk_boundaries_never_change_the_lines(lines, end, bom, chunk):
    raw = ("\ufeff" if bom else "").encode() + end.join(lines).encode() + end.encode()
    pieces = [raw[i : i + chunk] for i in range(0, len(raw), chunk)]
    # every line once, in order, whatever the block size (a CR at a block's end included)
    assert [text for _, text in inputs._split_chunks(pieces, "x")] == lines


@pytest.mark.parametrize(
    ("raw", "line"),
    [
        (b"a\n\xef\xbb\xbfb\n", 2),  # two files joined: `cat a.csv b.csv`
        (b"a\r\n\xef\xbb\xbfb\r\n", 2),
        (b"a\rb\r\xef\xbb\xbfc", 3),
        (b"\xef\xbb\xbf\xef\xbb\xbfa\n", 1),  # only the first mark is the file's own
    ],
)
def test_a_byte_order_mark_starting_a_later_line_is_refused(tmp_path, raw, line):
    path = tmp_path / "joined.txt"
    path.write_bytes(raw)
    for reader in (lambda: list(open_lines(path)), lambda: list(iter_lines(raw, str(path)))):
        with pytest.raises(InputError) as info:
            reader()
        assert str(info.value).startswith(f"{path}:{line}: a byte-order mark"), info.value


@pytest.mark.parametrize(
    ("raw", "where"),
    [
        (b"a b\n\xef\xbb\xbfc d\n", "2: a byte-order mark (bytes ef bb bf, U+FEFF) at column 1"),
        (b"a b\r\nc \xef\xbb\xbfd\n", "2: a byte-order mark (bytes ef bb bf, U+FEFF) at column 3"),
        (b"a\rb\rc\xef\xbb\xbf\n", "3: a byte-order mark"),
    ],
)
def test_refuse_inner_bom_names_line_and_column(raw, where):
    with pytest.raises(InputError, match=re.escape(f"run.txt:{where}")):
        inputs.refuse_inner_bom(raw, "run.txt")
    inputs.refuse_inner_bom(raw.replace(b"\xef\xbb\xbf", b""), "run.txt")  # no mark: no error


def test_utf8_errors_name_line_column_and_byte(tmp_path):
    path = tmp_path / "bad.txt"
    path.write_bytes(b"ok\nab\xffc\n")
    with pytest.raises(InputError, match=rf"^{path}:2: byte 0xff at column 3 is not UTF-8"):
        list(open_lines(path, "word list"))
    path.write_bytes(b"ok\r\n\xc3(\r\n")
    with pytest.raises(InputError, match=r":2: byte 0xc3 at column 1 is not UTF-8"):
        list(open_lines(path))
    path.write_bytes("ok\nseñ".encode() + b"\xffa\n")  # the column counts characters
    with pytest.raises(InputError, match=r":2: byte 0xff at column 4 is not UTF-8"):
        list(open_lines(path))


def test_gzip_is_recognised_by_content(tmp_path):
    plain = b"a\r\nb\n"
    named = tmp_path / "x.txt.gz"
    named.write_bytes(gzip.compress(plain, mtime=0))
    unnamed = tmp_path / "x.txt"
    unnamed.write_bytes(gzip.compress(plain, mtime=0))
    for path in (named, unnamed):
        assert [t for _, t in open_lines(path)] == ["a", "b"]
        assert read_bytes(path) == plain
    multi = tmp_path / "multi.gz"  # two gzip members, as `cat a.gz b.gz` makes
    multi.write_bytes(gzip.compress(b"a\n", mtime=0) + gzip.compress(b"b\n", mtime=0))
    assert [t for _, t in open_lines(multi)] == ["a", "b"]


@pytest.mark.parametrize("reader", [read_bytes, lambda p, w: list(open_lines(p, w))])
def test_opening_errors(tmp_path, reader):
    cases = [
        (tmp_path / "absent.txt", "no such file; expected a word list"),
        (tmp_path, "is a directory; expected a word list"),
    ]
    fake = tmp_path / "fake.gz"
    fake.write_bytes(b"plain text\n")
    cases.append((fake, "the name ends in '.gz' but the content is not gzip-compressed"))
    cut = tmp_path / "cut.gz"
    cut.write_bytes(gzip.compress(random.Random(5).randbytes(5000), mtime=0)[:-100])
    cases.append((cut, "the gzip data ends before its end marker"))
    corrupt = tmp_path / "corrupt.gz"
    data = bytearray(gzip.compress(b"hello world\n" * 100, mtime=0))
    data[20:30] = b"\x00" * 10
    corrupt.write_bytes(bytes(data))
    cases.append((corrupt, "gzip"))
    empty_gz = tmp_path / "empty.gz"
    empty_gz.write_bytes(b"")
    cases.append((empty_gz, "the name ends in '.gz'"))
    for path, fragment in cases:
        with pytest.raises(InputError) as info:
            reader(path, "word list")
        assert str(info.value).startswith(f"{path}: "), info.value
        assert fragment in str(info.value), info.value


def test_unreadable_file():
    """As ``nobody`` (root reads any file): the folder may be entered, the file not read."""
    with shared_folder() as folder:
        (folder / "open.txt").write_bytes(b"a\n")
        assert raised_unprivileged(lambda: read_bytes(folder / "open.txt", "run file")) is None
        path = folder / "secret.txt"
        path.write_bytes(b"a\n")
        path.chmod(0)
        assert raised_unprivileged(lambda: read_bytes(path, "run file")) == (
            "InputError",
            f"{path}: cannot be read (permission denied); expected a run file",
        )


def test_streams_binary_text_and_names():
    raw = "\ufeffa\r\nb\rc".encode()
    assert [t for _, t in open_lines(io.BytesIO(raw))] == ["a", "b", "c"]
    assert [t for _, t in open_lines(io.StringIO("a\nb"))] == ["a", "b"]
    assert read_bytes(io.BytesIO(gzip.compress(raw, mtime=0))) == b"a\r\nb\rc"
    assert source_name(io.BytesIO(b"")) == "<stream>"
    assert source_name("dir/x.run") == "dir/x.run"
    with pytest.raises(InputError, match=r"^<stream>:1: byte 0xff"):
        list(open_lines(io.BytesIO(b"\xff")))
    # a text stream wider than one block: re-encoding must not lose characters
    text = "\u20ac" * 700_000 + "\nend"
    assert [t for _, t in open_lines(io.StringIO(text))] == ["\u20ac" * 700_000, "end"]


def test_fifo_written_slowly_by_a_thread(tmp_path):
    fifo = tmp_path / "pipe"
    os.mkfifo(fifo)
    parts = [b"\xef", b"\xbb\xbfalpha\r", b"\nbeta\r", b"", b"gamma"]

    def feed():
        with open(fifo, "wb") as handle:
            for part in parts:
                handle.write(part)
                handle.flush()

    writer = threading.Thread(target=feed)
    writer.start()
    got = list(open_lines(fifo, "run file"))
    writer.join()
    assert got == [(1, "alpha"), (2, "beta"), (3, "gamma")]


def test_gzip_through_a_fifo(tmp_path):
    fifo = tmp_path / "zipped"
    os.mkfifo(fifo)
    payload = "\n".join(LINES).encode()
    writer = threading.Thread(target=lambda: fifo.write_bytes(gzip.compress(payload, mtime=0)))
    writer.start()
    assert read_bytes(fifo) == payload
    writer.join()


@pytest.mark.parametrize("gzipped", [False, True])
def test_a_long_run_through_a_fifo_is_read_whole_after_its_head_is_checked(tmp_path, gzipped):
    """The first 64 KiB of a pipe are checked by the run reader's line parser as they arrive:
    decompressed, never as gzip bytes; a good head lets the rest through as it is."""
    from rankbias.runs import read_run

    fifo = tmp_path / "bm25.run"
    os.mkfifo(fifo)
    rng = random.Random(8000)
    docids = [rng.randbytes(12).hex() for _ in range(8000)]
    lines = [f"q{i // 100} Q0 {docid} {i % 100 + 1} {-i} x\n" for i, docid in enumerate(docids)]
    payload = "".join(lines).encode()
    data = gzip.compress(payload, mtime=0) if gzipped else payload
    assert len(data) > 2 << 16  # more than the head
    writer = threading.Thread(target=lambda: fifo.write_bytes(data))
    writer.start()
    run = read_run(fifo)
    writer.join()
    assert len(run.docids) == 8000 and len(run) == 80
    assert run.ranked("q79")[-1] == lines[-1].split()[2]


def test_the_head_check_sees_the_complete_lines_of_the_first_64_kib_once(tmp_path):
    """Of a stream or a device only (a regular file, gzip or not, ends), and once: the check
    costs the slow line parser's time."""
    heads = []
    line = b"q1 Q0 d1 1 1 x\n"  # 15 bytes: 4369 lines are 65535 bytes, one byte short
    data = line * 4369 + b"q"
    for size in (len(data), len(data) - 1):  # exactly 64 KiB, and one byte short of it
        heads.clear()
        assert read_bytes(io.BytesIO(data[:size]), "run file", check=heads.append) == data[:size]
        assert heads == ([line * 4369] if size == 1 << 16 else [])
    heads.clear()
    assert read_bytes(io.BytesIO(inputs.BOM + data), "run file", check=heads.append) == data
    assert heads == [line * 4368]  # the mark dropped, as the readers drop it
    heads.clear()
    for gzipped in (False, True):
        path = tmp_path / f"long{'.gz' * gzipped}"
        path.write_bytes(gzip.compress(data * 20) if gzipped else data * 20)
        assert read_bytes(path, "run file", check=heads.append) == data * 20 and not heads
        fifo = tmp_path / f"pipe{gzipped}"
        os.mkfifo(fifo)
        writer = threading.Thread(target=fifo.write_bytes, args=(path.read_bytes(),))
        writer.start()
        assert read_bytes(fifo, "run file", check=heads.append) == data * 20
        writer.join()
        assert heads == [line * 4369]  # the inflated lines, once
        heads.clear()


def test_dev_stdin_from_a_gzip_pipe(tmp_path):
    source = tmp_path / "lines.txt"
    source.write_bytes("\n".join(LINES).encode())
    code = (
        "from rankbias.inputs import open_lines\n"
        "for n, t in open_lines('/dev/stdin'): print(n, repr(t))\n"
    )
    env = {**os.environ, "PYTHONPATH": os.path.dirname(os.path.dirname(inputs.__file__))}
    with subprocess.Popen(["gzip", "-c", str(source)], stdout=subprocess.PIPE) as zipper:
        done = subprocess.run(
            [sys.executable, "-c", code],
            stdin=zipper.stdout,
            capture_output=True,
            env=env,
            check=True,
        )
    expected = "".join(f"{n} {t!r}\n" for n, t in enumerate(LINES, start=1))
    assert done.stdout.decode() == expected


def test_permission_denied_is_an_input_error(tmp_path, monkeypatch):
    # as root the real check cannot be provoked; the error the OS would raise is simulated
    path = tmp_path / "secret.txt"
    path.write_bytes(b"a\n")

    def refuse(*args, **kwargs):
        raise PermissionError(13, "Permission denied", str(path))

    monkeypatch.setattr(inputs, "open", refuse, raising=False)
    with pytest.raises(InputError, match=rf"^{path}: cannot be read \(permission denied\)"):
        read_bytes(path, "run file")


@pytest.mark.parametrize(
    ("source", "fragment"),
    [
        (b"q1 Q0 d1 1 1 t\n", "found bytes (wrap bytes in io.BytesIO)"),
        (None, "found NoneType"),
        (3, "found int"),
    ],
)
def test_a_source_that_is_neither_a_path_nor_a_file_is_a_type_error(source, fragment):
    for reader in (read_bytes, lambda s: list(open_lines(s))):
        with pytest.raises(TypeError, match=re.escape(fragment)):
            reader(source)


def test_a_file_rewritten_in_place_with_the_same_size_is_not_the_same_file(tmp_path):
    """The identity holds the modification time: a rewrite that keeps the device, the inode
    and the size (a collection edited in place, one letter changed) is still a change."""
    path = tmp_path / "c.tsv"
    path.write_bytes(b"d1\tshe said\n")
    started = inputs.file_identity(path)
    assert inputs.same_file(inputs.file_identity, path, started)
    with open(path, "r+b") as handle:  # same inode, same size
        handle.write(b"d2")
    later = started[3] + 10**9  # a rewrite's time (set: the clock may not have moved yet)
    os.utime(path, ns=(later, later))
    assert inputs.file_identity(path)[:3] == started[:3]
    assert not inputs.same_file(inputs.file_identity, path, started)
    with pytest.raises(InputError, match="the file changed while it was read"):
        inputs.check_unchanged(path, started)


@pytest.mark.parametrize("reader", ["read_bytes", "open_lines"])
def test_an_endless_input_is_refused_at_the_line_limit_not_read_into_memory(reader):
    # /dev/zero as a run, a qrels or a word list took all the memory it could (or, through the
    # line splitter, minutes); the real limit, 64 MiB, is reached within seconds
    read = read_bytes if reader == "read_bytes" else lambda s, w: list(open_lines(s, w))
    with pytest.raises(InputError) as info:
        read("/dev/zero", "run file")
    assert str(info.value) == (
        "/dev/zero: the line that starts at byte 0 runs for more than 67108864 bytes without a "
        "line end; expected a run file of text lines"
    )


class Endless(io.RawIOBase):
    """A pipe that never ends: ``line`` again and again, counting the bytes read."""

    def __init__(self, line: bytes):
        self.line, self.given, self.name = line, 0, "endless"

    def readable(self) -> bool:
        return True

    def readinto(self, buffer) -> int:
        if self.given > 64 << 20:  # instead of all the memory
            raise AssertionError("read past 64 MiB of an endless input")
        start, size = self.given % len(self.line), len(buffer)
        buffer[:size] = (self.line * (size // len(self.line) + 2))[start : start + size]
        self.given += size
        return size


@pytest.mark.parametrize(
    ("reader", "line", "message"),
    [
        ("read_run", b"q1 Q0 d1 1 1\n", "endless:1: found 5 field(s) in 'q1 Q0 d1 1 1'"),
        ("read_run", b"q1 Q0 d1 1 1 x\n", "endless:2: document d1 already listed for query q1"),
        ("read_run", b"\xff\xfe\n", "endless:1: byte 0xff at column 1 is not UTF-8"),
        ("read_qrels", b"q1 0 d1 yes\n", "endless:1: relevance 'yes' is not an integer"),
        ("read_qrels", b"q1 0 d1 1\n", "endless:2: document d1 already judged for query q1"),
    ],
)  # fmt: skip
def test_an_endless_pipe_of_bad_lines_ends_at_its_first_bad_line(reader, line, message):
    """Lines with line ends never reach the line limit: a run or qrels read from such a pipe
    (/dev/urandom, `yes`) took all the memory it could, 11 GB in a minute.  The first 64 KiB
    are checked as they arrive."""
    from rankbias import runs

    source = Endless(line)
    with pytest.raises(InputError, match=re.escape(message)):
        getattr(runs, reader)(source)
    assert source.given < 4 << 20  # the check ran on the first block, not at the end
    # A device of random bytes is refused at its first line, for whatever that line holds: a
    # byte that is not UTF-8 (98% of 6,000 reads), a blank line (a line end first) or a short
    # line of too few fields.
    refused = "|".join(
        [
            r"byte 0x[0-9a-f]{2} at column [0-9]+ is not UTF-8",
            "found a blank line",
            "found [0-9]+ field",
        ]
    )
    with pytest.raises(InputError, match=f"^/dev/urandom:1: ({refused})"):
        getattr(runs, reader)("/dev/urandom")


@pytest.mark.parametrize("gzipped", [False, True])
@pytest.mark.parametrize("reader", ["read_bytes", "open_lines"])
def test_a_line_over_the_limit_names_where_it_starts(tmp_path, monkeypatch, reader, gzipped):
    """A stream (a pipe, gzip data) is read in blocks and refused at the first line longer
    than the limit; a regular uncompressed file is read at once by read_bytes, as it is."""
    monkeypatch.setattr(inputs, "MAX_LINE_BYTES", 3000)
    monkeypatch.setattr(inputs, "_CHUNK", 1000)
    content = b"q1 Q0 d1 1 1 x\n" * 100 + b"x" * 5000 + b"\nq2 Q0 d2 1 1 x\n"
    path = tmp_path / ("r.run.gz" if gzipped else "r.run")
    path.write_bytes(gzip.compress(content) if gzipped else content)
    if reader == "read_bytes" and not gzipped:
        assert read_bytes(path, "run file") == content
        return
    read = read_bytes if reader == "read_bytes" else lambda s, w: list(open_lines(s, w))
    with pytest.raises(InputError) as info:
        read(path, "run file")
    assert str(info.value) == (
        f"{path}: the line that starts at byte 1500 runs for more than 3000 bytes without a "
        "line end; expected a run file of text lines"
    )
    monkeypatch.setattr(inputs, "MAX_LINE_BYTES", 5000)  # the longest line, at the limit
    assert len(read(path, "run file")) == (len(content) if reader == "read_bytes" else 102)


@pytest.mark.parametrize("reader", ["read_bytes", "open_lines"])
def test_a_line_of_exactly_the_limit_that_fills_a_block_is_read(tmp_path, monkeypatch, reader):
    """The 4,500-byte line ends a 1,000-byte block exactly (1,500 + 4,500 bytes), its line end
    the next block's first byte: at the limit, not over it.  (The limit guards against input
    without line ends and is checked where each block ends.)"""
    monkeypatch.setattr(inputs, "MAX_LINE_BYTES", 4500)
    monkeypatch.setattr(inputs, "_CHUNK", 1000)
    content = b"q1 Q0 d1 1 1 x\n" * 100 + b"x" * 4500 + b"\nq2 Q0 d2 1 1 x\n"
    path = tmp_path / "r.run.gz"  # a stream: read block by block
    path.write_bytes(gzip.compress(content))
    read = read_bytes if reader == "read_bytes" else lambda s, w: list(open_lines(s, w))
    assert len(read(path, "run file")) == (len(content) if reader == "read_bytes" else 102)
    monkeypatch.setattr(inputs, "MAX_LINE_BYTES", 4499)  # checked where a block ends
    with pytest.raises(InputError, match="the line that starts at byte 1500 runs for more than"):
        read(path, "run file")


def test_an_inner_byte_order_mark_is_placed_in_characters_not_bytes():
    raw = "a\nseñora \ufeffhe\n".encode()
    with pytest.raises(InputError) as info:
        inputs.refuse_inner_bom(raw, "terms.csv")
    assert str(info.value).startswith(
        "terms.csv:2: a byte-order mark (bytes ef bb bf, U+FEFF) at column 8;"
    )
