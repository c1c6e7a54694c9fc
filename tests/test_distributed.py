"""``--engine dask``: the same output as the local engine, on a LocalCluster and on a real
``dask scheduler`` with two ``dask worker`` processes on the loopback."""

from __future__ import annotations

import contextlib
import gzip
import importlib.util
import io
import os
import socket
import subprocess
import sys
import time
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

distributed = pytest.importorskip(
    "distributed", reason="dask.distributed is not installed (the optional extra 'dask')"
)

import rankbias.distributed as engine  # noqa: E402
from rankbias.cli import main  # noqa: E402
from rankbias.collection import read_collection_stats  # noqa: E402
from rankbias.errors import InputError  # noqa: E402
from rankbias.lexicon import default_lexicon  # noqa: E402
from rankbias.runs import Run, read_run  # noqa: E402
from rankbias.scoring import parse_metric_list, score_runs  # noqa: E402

REPO = Path(__file__).resolve().parents[1]
SRC = REPO / "src"
TESTBED = REPO / "data/build/wikisample"
BIN = Path(sys.executable).parent


def child_env() -> dict:
    """Environment of subprocesses: this checkout's package first on the path."""
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join(filter(None, [str(SRC), env.get("PYTHONPATH")]))
    return env


@pytest.fixture
def small_partitions(monkeypatch):
    """Partitions of about 8 KiB, so that a small file has many."""
    monkeypatch.setattr(engine, "MIN_PARTITION_BYTES", 8192)
    monkeypatch.setattr(engine, "MAX_PARTITION_BYTES", 8192)


@pytest.fixture
def testbed_partitions(monkeypatch):
    """Partitions of about 128 KiB: a couple of dozen for the testbed's collection."""
    monkeypatch.setattr(engine, "MIN_PARTITION_BYTES", 1 << 17)
    monkeypatch.setattr(engine, "MAX_PARTITION_BYTES", 1 << 17)


def generated_collection(path: Path, n_docs: int, seed: int = 7, bad: dict | None = None) -> Path:
    """Passages of pseudo-words and gendered terms, some capitalised or non-ASCII; ``bad``
    maps 0-based line numbers to raw lines that replace them."""
    rng = np.random.default_rng(seed)
    terms = list(default_lexicon().terms)
    words = ["alpha", "beta", "Gamma", "delta,", "café", "naïve", "straße", "x1"] + terms[:40]
    words += [t.upper() for t in terms[:10]] + ["İstanbul"]  # lower-casing changes the length
    lines = []
    for i in range(n_docs):
        picks = rng.choice(len(words), size=int(rng.integers(3, 30)))
        lines.append(f"d{i}\t{' '.join(words[j] for j in picks)}  \n".encode())
    for i, raw in (bad or {}).items():
        lines[i] = raw
    path.write_bytes(b"".join(lines))
    return path


def assert_same_blocks(got, expected) -> None:
    """The same documents in the same order: docids, lengths, counts and both hashes."""
    import pyarrow as pa

    docids = [pa.concat_arrays([b.docids for b in blocks]) for blocks in (got, expected)]
    assert docids[0].equals(docids[1])
    for field in ("lengths", "group_counts", "hashes", "hashes2"):
        np.testing.assert_array_equal(
            np.concatenate([getattr(b, field) for b in got]),
            np.concatenate([getattr(b, field) for b in expected]),
        )


def run_cli(argv: list[str], capsys) -> tuple[int, str]:
    status = main(argv)
    return status, capsys.readouterr().err


# ---- partitions ---------------------------------------------------------------------------
def test_partitions_are_line_aligned_by_hand(tmp_path):
    path = tmp_path / "c.tsv"
    path.write_bytes(b"a\tx\nbb\ty\nc\tz\n")  # lines end at bytes 4, 9, 13
    assert engine.plan_partitions(str(path), 1) == [(0, 4), (4, 9), (9, 13)]
    assert engine.plan_partitions(str(path), 5) == [(0, 9), (9, 13)]
    assert engine.plan_partitions(str(path), 100) == [(0, 13)]


def test_partitions_cover_a_file_without_final_newline(tmp_path):
    path = generated_collection(tmp_path / "c.tsv", 500)
    path.write_bytes(path.read_bytes().rstrip(b"\n"))
    data = path.read_bytes()
    ranges = engine.plan_partitions(str(path), 1000)
    assert ranges[0][0] == 0 and ranges[-1][1] == len(data) and len(ranges) > 5
    assert all(a[1] == b[0] for a, b in zip(ranges, ranges[1:], strict=False))
    assert all(data[end - 1 : end] == b"\n" for _, end in ranges[:-1])


def test_compressed_file_is_one_partition_and_told_by_its_content(tmp_path):
    text = b"a\tx\nbb\ty\nc\tz\n"
    for name in ("c.tsv.gz", "c.tsv"):  # gzip with and without the suffix
        (tmp_path / name).write_bytes(gzip.compress(text, mtime=0))
        assert engine.plan_partitions(str(tmp_path / name), 5) == [(0, -1)]
    (tmp_path / "plain.gz").write_bytes(text)  # named .gz, but plain text: cut as plain text
    assert engine.plan_partitions(str(tmp_path / "plain.gz"), 5) == [(0, 9), (9, 13)]


def test_a_partition_read_block_by_block_through_one_buffer(tmp_path, monkeypatch):
    """A worker reads a partition's blocks into one buffer it reuses: blocks of every size
    (longer and shorter than the one before, a non-ASCII docid counted again from the
    buffer) are the local engine's documents, and a bad line in a late block is found."""

    from rankbias import collection

    extra = {101: "dé101\tshe and her sister  \n".encode(), 402: b"d402\t" + b"he " * 900 + b"\n"}
    path = generated_collection(tmp_path / "c.tsv", 600, bad=extra)
    lexicon = default_lexicon()
    local = list(collection.iter_blocks(path, lexicon, "default", False, 1)[1])
    monkeypatch.setattr(collection, "DEFAULT_BLOCK_BYTES", 997)
    size = path.stat().st_size
    got = engine.count_byte_range(str(path), 0, size, lexicon, "default", False)
    assert len(got) > 20
    assert_same_blocks(got, local)
    generated_collection(path, 600, bad={**extra, 530: b"d530\tcaf\xe9\n"})
    with pytest.raises(collection.BlockError) as caught:
        engine.count_byte_range(str(path), 0, path.stat().st_size, lexicon, "default", False)
    assert caught.value.line_in_block == 530 and "not valid UTF-8" in caught.value.message


def test_a_partition_read_from_a_file_that_returns_short_reads(tmp_path, monkeypatch):
    """A file object may fill less than it is asked for (a network file system, an fsspec
    file): a block is read until it is whole, so the documents are the local engine's."""
    from rankbias import collection

    lexicon = default_lexicon()
    path = generated_collection(tmp_path / "c.tsv", 300)
    size = path.stat().st_size
    expected = list(collection.iter_blocks(path, lexicon, "default", False, 1)[1])  # local engine
    opened = engine._open_raw

    class Trickle(io.RawIOBase):
        def __init__(self, handle):
            self.handle = handle

        def seek(self, *where):
            return self.handle.seek(*where)

        def readinto(self, view):
            return self.handle.readinto(memoryview(view)[:333])

        def read(self, size=-1):
            return self.handle.read(size)

    monkeypatch.setattr(engine, "_open_raw", lambda location: Trickle(opened(location)))
    monkeypatch.setattr(collection, "DEFAULT_BLOCK_BYTES", 4096)
    got = engine.count_byte_range(str(path), 0, size, lexicon, "default", False)
    assert len(got) > 3
    assert_same_blocks(got, expected)


def test_a_partition_checks_the_file_it_opened_not_the_path(tmp_path, monkeypatch):
    """The identity a worker checks is the open file's: a file renamed over the path after the
    open is not read (the open file is the one the command started with, read whole); one
    renamed over it before the open is refused."""
    lexicon = default_lexicon()
    path = generated_collection(tmp_path / "c.tsv", 300)
    other = generated_collection(tmp_path / "other.tsv", 300, seed=5)
    started, size = engine.identity(str(path)), path.stat().st_size
    expected = engine.count_byte_range(str(path), 0, size, lexicon, "default", False, started)
    opened = engine._open_raw

    def open_then_replace(location):
        handle = opened(location)
        os.replace(other, path)
        return handle

    monkeypatch.setattr(engine, "_open_raw", open_then_replace)
    got = engine.count_byte_range(str(path), 0, size, lexicon, "default", False, started)
    assert_same_blocks(got, expected)
    monkeypatch.setattr(engine, "_open_raw", opened)
    with pytest.raises(engine.FileChangedError):
        engine.count_byte_range(str(path), 0, size, lexicon, "default", False, started)


# ---- what the local engine reads, the Dask engine reads too --------------------------------
@pytest.mark.parametrize(
    "variant", ["gzip without .gz", "byte-order mark", "CR LF line ends", "lone CR line ends"]
)
def test_the_same_files_as_the_local_engine(
    tmp_path, capsys, on_cluster, small_partitions, variant
):
    source = generated_collection(tmp_path / "source.tsv", 600).read_bytes()
    path = tmp_path / "collection.tsv"
    if variant == "gzip without .gz":
        path.write_bytes(gzip.compress(source, mtime=0))
    elif variant == "byte-order mark":
        path.write_bytes(b"\xef\xbb\xbf" + source)
    elif variant == "CR LF line ends":
        path.write_bytes(source.replace(b"\n", b"\r\n"))
    else:
        path.write_bytes(source.replace(b"\n", b"\r"))
    local, dask = stats_outputs(tmp_path, path, ".csv", capsys)
    assert_same_output(local, dask)
    assert pd.read_csv(dask).docid.iloc[0] == "d0"  # the mark is not part of the first docid


@pytest.mark.parametrize("variant", ["long line, lone CR ends", "truncated gzip"])
def test_the_same_reading_errors_as_the_local_engine(
    tmp_path, capsys, on_cluster, small_partitions, variant
):
    """Both engines read with collection.py's reader: the same --max-line-bytes check on
    lone-CR files, the same gzip message, the file named as the user named it."""
    lines = [f"d{i}\tshe went home {'x' * (300 if i == 50 else 5)}\r" for i in range(2000)]
    data = "".join(lines).encode()
    path = tmp_path / "c.tsv"
    path.write_bytes(data if variant.startswith("long") else gzip.compress(data)[:-30])
    common = ["stats", "--collection", str(path), "--terms", "default", "--max-line-bytes", "100"]
    local = run_cli([*common, "--out", str(tmp_path / "l.csv")], capsys)
    dask = run_cli([*common, "--engine", "dask", "--out", str(tmp_path / "d.csv")], capsys)
    assert local[0] == dask[0] == 2
    assert dask[1].splitlines()[-1] == local[1].splitlines()[-1]
    assert f"error: {path}: the " in dask[1]


def test_score_counts_with_the_line_limit_it_is_given(tmp_path, capsys, on_cluster):
    """``score --max-line-bytes`` holds on the Dask engine as on the local one (the Dask engine
    once counted the collection for ``score`` under the default limit, and scored)."""
    path = tmp_path / "c.tsv"
    path.write_text("".join(f"d{i}\tshe went {'x' * (300 if i == 50 else 5)}\n" for i in range(99)))
    run = write_run(tmp_path / "r.run", [("q1", "d1", 2.0), ("q1", "d50", 1.0)])
    common = ["score", "--collection", str(path), "--terms", "default", "--run", str(run)]
    for limit, status in (("100", 2), ("400", 0)):
        outs = [tmp_path / f"{engine}{limit}.csv" for engine in ("local", "dask")]
        local = run_cli([*common, "--max-line-bytes", limit, "--out", str(outs[0])], capsys)
        dask = run_cli(
            [*common, "--max-line-bytes", limit, "--engine", "dask", "--out", str(outs[1])], capsys
        )
        assert local[0] == dask[0] == status
        assert dask[1].splitlines()[-1] == local[1].splitlines()[-1].replace("local", "dask")
        assert [out.exists() for out in outs] == [status == 0] * 2
        if status:
            start = path.read_bytes().index(b"d50\t")
            assert f"the line that starts at byte {start} runs for more than 100" in dask[1]


@pytest.mark.parametrize("line_end", [b"\n", b"\r\n", b"\r"])
def test_a_repeated_docid_is_found_with_any_line_end(tmp_path, capsys, on_cluster, line_end):
    lines = [b"d1\tshe sang", b"d2\the ran", b"d3\tthe rain", b"d2\tit rained", b"d5\tx"]
    path = tmp_path / "c.tsv"
    path.write_bytes(line_end.join(lines) + line_end)
    out = tmp_path / "o.csv"
    common = ["stats", "--collection", str(path), "--terms", "default", "--out", str(out)]
    local = run_cli(common, capsys)
    dask = run_cli([*common, "--engine", "dask"], capsys)
    assert local == dask
    assert dask[0] == 2 and "c.tsv:4: docid 'd2' is already used on line 2" in dask[1]
    assert not out.exists()


@pytest.mark.parametrize("as_url", [False, True], ids=["path", "url"])
@pytest.mark.parametrize("after", ["first", "last"])
@pytest.mark.parametrize("change", ["replaced", "removed"])
def test_a_collection_replaced_while_it_is_read_is_refused(
    tmp_path, capsys, on_cluster, small_partitions, monkeypatch, change, after, as_url
):
    """Workers open the path once per partition: a file renamed over the collection between
    two partitions would mix the two files; it is refused, and nothing is written.  A file
    removed meanwhile is the same fault, not a path the workers cannot see.  After the last
    partition the file is checked once more (its docids may be read again for a repeated
    one), and a URL, whose workers cannot check the file they opened, is checked by its size
    and modification time."""
    path = generated_collection(tmp_path / "c.tsv", 2000)
    replacement = generated_collection(tmp_path / "new.tsv", 2000, seed=8)
    original = engine._ordered_results

    def replace_after(*args, **kwargs):
        results = original(*args, **kwargs)
        if after == "last":
            results = list(results)  # every partition counted before the change
        for index, result in enumerate(results):
            if index == (len(results) - 1 if after == "last" else 0):  # mv new.tsv c.tsv, or rm
                os.replace(replacement, path) if change == "replaced" else path.unlink()
            yield result

    monkeypatch.setattr(engine, "_ordered_results", replace_after)
    out = tmp_path / "o.csv"
    source = path.resolve().as_uri() if as_url else str(path)
    status, err = run_cli(
        ["stats", "--collection", source, "--terms", "default", "--engine", "dask",
         "--out", str(out)], capsys,
    )  # fmt: skip
    assert status == 2 and "c.tsv: the file changed while it was read (removed, replaced" in err
    assert "Traceback" not in err and not out.exists()


def test_a_malformed_collection_is_one_line_without_traceback(tmp_path):
    """Run as a user runs it (a real LocalCluster of the command's own): the message names
    the file and line, and neither Dask's logs nor a traceback reach the terminal."""
    path = generated_collection(tmp_path / "c.tsv", 500, bad={300: b"d300\tone\ttwo\n"})
    done = subprocess.run(
        [str(BIN / "rankbias"), "stats", "--collection", str(path), "--terms", "default",
         "--engine", "dask", "--workers", "2", "--out", str(tmp_path / "o.csv")],
        env=child_env(), capture_output=True, text=True, timeout=120,
    )  # fmt: skip
    assert done.returncode == 2
    assert done.stderr.strip().splitlines() == [
        "rankbias stats: error: "
        + f"{path}:301: found 2 tabs in 'd300\\tone\\ttwo'; expected exactly one tab, "
        "between the docid and the text"
    ]


def test_a_scheduler_that_is_not_one_fails_within_the_connect_timeout(tmp_path):
    """An HTTP server where the scheduler should be never answers Dask's handshake."""
    import http.server
    import threading

    server = http.server.HTTPServer(("127.0.0.1", 0), http.server.BaseHTTPRequestHandler)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    try:
        started = time.monotonic()
        done = subprocess.run(
            [str(BIN / "rankbias"), "stats", "--collection", str(generated_collection(
                tmp_path / "c.tsv", 10)), "--terms", "default", "--engine", "dask",
             "--scheduler", f"tcp://127.0.0.1:{server.server_port}", "--connect-timeout", "2",
             "--out", str(tmp_path / "o.csv")],
            env=child_env(), capture_output=True, text=True, timeout=60,
        )  # fmt: skip
        elapsed = time.monotonic() - started
    finally:
        server.shutdown()
    assert done.returncode == 2 and elapsed < 20
    assert "cannot connect (no answer within 2 s)" in done.stderr
    assert "Traceback" not in done.stderr


def test_a_closed_port_or_a_server_of_another_protocol_is_named_at_once(tmp_path, capsys):
    """Nothing listening took the whole --connect-timeout (distributed retries) and a server
    that sends other bytes was reported in numpy's words ('Unable to allocate 2.82 EiB …', its
    bytes read as the length of a Dask frame)."""
    import threading

    listener = socket.create_server(("127.0.0.1", 0))
    port = listener.getsockname()[1]

    def speak_another_protocol():
        with contextlib.suppress(OSError):
            while True:
                conn, _ = listener.accept()
                conn.sendall(b"SSH-2.0-OpenSSH_9.6\r\n" + b"x" * 4096)
                conn.close()

    threading.Thread(target=speak_another_protocol, daemon=True).start()
    closed = socket.create_server(("127.0.0.1", 0))
    closed_port = closed.getsockname()[1]
    closed.close()  # nothing listens there now
    collection = generated_collection(tmp_path / "c.tsv", 10)
    args = ["stats", "--collection", str(collection), "--terms", "default", "--engine", "dask",
            "--connect-timeout", "30", "--out", str(tmp_path / "s.csv")]  # fmt: skip
    expected = "expected the address of a running `dask scheduler`, e.g. tcp://HOST:8786"
    try:
        for address, reason in [
            (f"tcp://127.0.0.1:{closed_port}", "Connection refused"),
            (f"tcp://127.0.0.1:{port}", "a server answers there, but not as a Dask scheduler"),
        ]:
            started = time.monotonic()
            status, err = run_cli([*args, "--scheduler", address], capsys)
            assert time.monotonic() - started < 15
            assert status == 2 and err.startswith(
                f"rankbias stats: error: --scheduler {address}: cannot connect ({reason}); "
                + expected
            ), err
    finally:
        listener.close()
    assert not (tmp_path / "s.csv").exists()


def test_a_scheduler_without_workers_fails_within_the_worker_wait(tmp_path):
    """A `dask scheduler` of its own, no worker: only the command is timed.  (The scheduler
    runs in a process of its own, started and awaited before the clock starts: an in-process
    LocalCluster gives its IO-loop thread a fixed 10 s to start, which a loaded machine once
    missed.)"""
    with hand_started_cluster(tmp_path, workers=0) as (address, _, _):
        started = time.monotonic()
        done = subprocess.run(
            [str(BIN / "rankbias"), "stats", "--collection", str(generated_collection(
                tmp_path / "c.tsv", 10)), "--terms", "default", "--engine", "dask",
             "--scheduler", address, "--worker-wait", "2",
             "--out", str(tmp_path / "o.csv")],
            env=child_env(), capture_output=True, text=True, timeout=60,
        )  # fmt: skip
        elapsed = time.monotonic() - started
    assert done.returncode == 2 and elapsed < 20
    assert "0 workers joined within 2 s" in done.stderr and "Traceback" not in done.stderr


@pytest.mark.parametrize(
    ("package", "found"),
    [
        ('raise ImportError("a broken rankbias")\n', "ImportError: a broken rankbias"),
        ('__version__ = "0.0.1"\n', "rankbias 0.0.1"),
    ],
)
def test_a_worker_that_cannot_import_the_package_is_named_at_once(tmp_path, package, found):
    """A worker whose rankbias does not import died on its first task, and the command
    waited --worker-wait (30 s) for a replacement, then blamed a dead worker; every worker
    of a cluster started elsewhere is now asked first, and one with another version of the
    package (whose tasks may compute otherwise) is named the same way."""
    fake = tmp_path / "elsewhere" / "rankbias"
    fake.mkdir(parents=True)
    (fake / "__init__.py").write_text(package)
    (fake / "distributed.py").write_text("")
    with hand_started_cluster(tmp_path, workers=0) as (address, _, _):
        env = {**child_env(), "PYTHONPATH": str(tmp_path / "elsewhere")}
        worker = subprocess.Popen(
            [str(BIN / "dask"), "worker", address, "--nthreads", "1", "--no-dashboard"],
            env=env, cwd=tmp_path, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
        )  # fmt: skip
        try:
            with distributed.Client(address, timeout=60) as probe:
                probe.wait_for_workers(1, timeout=60)
            started = time.monotonic()
            done = subprocess.run(
                [str(BIN / "rankbias"), "stats", "--collection", str(generated_collection(
                    tmp_path / "c.tsv", 10)), "--terms", "default", "--engine", "dask",
                 "--scheduler", address, "--worker-wait", "20", "--out", str(tmp_path / "o.csv")],
                env=child_env(), capture_output=True, text=True, timeout=60,
            )  # fmt: skip
            elapsed = time.monotonic() - started
        finally:
            worker.terminate()
            worker.wait(timeout=30)
    assert done.returncode == 2 and elapsed < 15, done.stderr
    assert done.stderr.startswith(f"rankbias stats: error: --scheduler {address}: worker tcp://")
    assert done.stderr.endswith(
        f"cannot run this command's tasks ({found}); expected rankbias 0.1.0 installed on "
        "every worker\n"
    )
    assert not (tmp_path / "o.csv").exists()


# ---- stats: the command's output equals the local engine's ---------------------------------
def stats_outputs(tmp_path, collection: Path, suffix: str, capsys, extra=()) -> tuple[Path, Path]:
    local, dask = tmp_path / f"local{suffix}", tmp_path / f"dask{suffix}"
    common = ["stats", "--collection", str(collection), "--terms", "default", *extra]
    assert run_cli([*common, "--out", str(local)], capsys)[0] == 0
    assert run_cli([*common, "--engine", "dask", "--out", str(dask)], capsys)[0] == 0
    return local, dask


def assert_same_output(local: Path, dask: Path) -> None:
    if local.suffix == ".parquet":
        pd.testing.assert_frame_equal(pd.read_parquet(dask), pd.read_parquet(local))
    else:
        assert dask.read_bytes() == local.read_bytes()


@pytest.mark.skipif(not (TESTBED / "collection.tsv").exists(), reason="testbed not built")
@pytest.mark.parametrize("suffix", [".csv", ".parquet"])
def test_stats_on_the_testbed(tmp_path, capsys, on_cluster, testbed_partitions, suffix):
    local, dask = stats_outputs(tmp_path, TESTBED / "collection.tsv", suffix, capsys)
    assert_same_output(local, dask)
    assert len(pd.read_parquet(dask) if suffix == ".parquet" else pd.read_csv(dask)) == sum(
        1 for _ in open(TESTBED / "collection.tsv", "rb")
    )


@pytest.mark.parametrize("suffix", [".csv", ".tsv", ".parquet"])
def test_stats_on_many_partitions(tmp_path, capsys, on_cluster, small_partitions, suffix):
    collection = generated_collection(tmp_path / "c.tsv", 3000)
    assert len(engine.plan_partitions(str(collection), 8192)) > 8
    local, dask = stats_outputs(tmp_path, collection, suffix, capsys, ["--tokenizer", "whitespace"])
    assert_same_output(local, dask)


def test_stats_gzip_and_fsspec_url(tmp_path, client, small_partitions):
    collection = generated_collection(tmp_path / "c.tsv", 1500)
    packed = tmp_path / "c.tsv.gz"
    packed.write_bytes(gzip.compress(collection.read_bytes(), mtime=0))
    lexicon = default_lexicon()
    expected = read_collection_stats(collection, lexicon, workers=1)
    for source in (str(packed), collection.resolve().as_uri()):
        got = engine.collection_stats_on_dask(client, source, lexicon, partition_bytes=4096)
        assert got.docids.tolist() == expected.docids.tolist()
        np.testing.assert_array_equal(got.lengths, expected.lengths)
        np.testing.assert_array_equal(got.group_counts, expected.group_counts)


@pytest.mark.parametrize(
    ("url", "found"),
    [
        ("memory://absent/c.tsv", "no such file"),  # FileNotFoundError without a file name
        ("nosuchprotocol://x/c.tsv", "Protocol not known: nosuchprotocol"),
        ("s3://bucket/c.tsv", "s3fs"),  # a store fsspec cannot load (s3fs is not a dependency)
    ],
)
def test_a_url_its_store_cannot_open_is_named_not_the_output(tmp_path, capsys, url, found):
    """A URL whose store is missing, unknown or has no such file is one line naming the URL:
    the memory store's FileNotFoundError, which names no file, was once blamed on --out, and
    a store fsspec could not import was an internal error."""
    pytest.importorskip("fsspec")
    if found == "s3fs" and importlib.util.find_spec("s3fs") is not None:
        pytest.skip("s3fs is installed here")
    out = tmp_path / "o.csv"
    argv = ["stats", "--collection", url, "--terms", "default", "--engine", "dask",
            "--workers", "1", "--out", str(out)]  # fmt: skip
    status, err = run_cli(argv, capsys)
    assert status == 2 and f"rankbias stats: error: {url}: " in err and found in err, err
    assert "o.csv" not in err and "Traceback" not in err and not out.exists()


@pytest.mark.parametrize("kind", ["fifo", "device", "absent"])
def test_a_collection_that_is_no_regular_file_is_named_for_what_it_is(tmp_path, capsys, kind):
    """The workers read byte ranges of a file: a pipe (which the local engine streams) or a
    device is refused for what it is, before any cluster starts; a pipe was "no such file"."""
    collection = Path("/dev/null") if kind == "device" else tmp_path / "c.tsv"
    if kind == "fifo":
        os.mkfifo(collection)  # nobody writes to it: the command must not open it
    argv = ["stats", "--collection", str(collection), "--terms", "default", "--engine", "dask",
            "--workers", "1", "--out", str(tmp_path / "o.csv")]  # fmt: skip
    status, err = run_cli(argv, capsys)
    found = "no such file" if kind == "absent" else "not a regular file (a pipe, device or"
    assert status == 2 and err.startswith(f"rankbias stats: error: collection '{collection}': ")
    assert found in err and "for a pipe or an ir_datasets id use --engine local" in err
    assert not (tmp_path / "o.csv").exists()


def test_per_term_counts_equal_local(tmp_path, client):
    collection = generated_collection(tmp_path / "c.tsv", 1000)
    lexicon = default_lexicon()
    expected = read_collection_stats(collection, lexicon, per_term=True, workers=1)
    got = engine.collection_stats_on_dask(
        client, collection, lexicon, per_term=True, partition_bytes=3000
    )
    assert (got.term_counts != expected.term_counts).nnz == 0
    assert got.term_counts.shape == expected.term_counts.shape


def test_workers_send_the_local_engines_arrow_blocks(tmp_path, client):
    """The counted blocks travel as they are (docids an Arrow array, not Python strings, which
    cost the workers and the driver a conversion each): the local engine's rows and hashes."""
    import pyarrow as pa

    from rankbias.collection import iter_blocks

    collection = generated_collection(tmp_path / "c.tsv", 1500)
    lexicon = default_lexicon()
    local = list(iter_blocks(collection, lexicon, "default", False, 1)[1])
    got = list(engine.iter_blocks_on_dask(client, collection, lexicon, partition_bytes=4096))
    assert len(got) > 4 and all(isinstance(b.docids, pa.StringArray) for b in got)
    assert_same_blocks(got, local)


# ---- stats: errors found on workers --------------------------------------------------------
BAD_LINES = {
    "no tab": b"d2500 has no tab\n",
    "empty text": b"d2500\t   \n",
    "not utf-8": b"d2500\tcaf\xe9 latin-1\n",
}


@pytest.mark.parametrize("kind", sorted(BAD_LINES))
def test_bad_line_in_a_late_partition(tmp_path, capsys, on_cluster, small_partitions, kind):
    collection = generated_collection(tmp_path / "c.tsv", 3000, bad={2499: BAD_LINES[kind]})
    ranges = engine.plan_partitions(str(collection), 8192)
    offset = collection.read_bytes().index(BAD_LINES[kind])
    assert offset > ranges[len(ranges) // 2][0]  # the bad line is in the second half
    args = ["stats", "--collection", str(collection), "--terms", "default"]
    status_local, err_local = run_cli([*args, "--out", str(tmp_path / "l.csv")], capsys)
    status_dask, err_dask = run_cli(
        [*args, "--engine", "dask", "--out", str(tmp_path / "d.csv")], capsys
    )
    assert status_local == status_dask == 2
    assert f"{collection}:2500: " in err_dask
    assert err_dask.splitlines()[-1] == err_local.splitlines()[-1]
    assert not (tmp_path / "d.csv").exists() and not (tmp_path / "d.csv.partial").exists()


def test_duplicate_docid_across_partitions(tmp_path, capsys, on_cluster, small_partitions):
    collection = generated_collection(tmp_path / "c.tsv", 3000, bad={2899: b"d9\tshe said\n"})
    args = ["stats", "--collection", str(collection), "--terms", "default", "--engine", "dask"]
    status, err = run_cli([*args, "--out", str(tmp_path / "d.csv")], capsys)
    assert status == 2
    expected = f"{collection}:2900: docid 'd9' is already used on line 10; expected each docid once"
    assert err.strip().endswith(expected)


def test_scheduler_needs_the_dask_engine(tmp_path, capsys):
    collection = generated_collection(tmp_path / "c.tsv", 10)
    status, err = run_cli(
        [
            "stats",
            "--collection",
            str(collection),
            "--terms",
            "default",
            "--scheduler",
            "tcp://127.0.0.1:1",
            "--out",
            str(tmp_path / "s.csv"),
        ],
        capsys,
    )
    assert status == 2 and "expected --engine dask" in err


@pytest.mark.parametrize("command", ["stats", "score"])
def test_workers_with_a_scheduler_are_refused(tmp_path, capsys, command):
    """The cluster's workers are the ones started on it: --workers was read and ignored."""
    collection = generated_collection(tmp_path / "c.tsv", 10)
    args = [command, "--collection", str(collection), "--terms", "default", "--engine", "dask",
            "--scheduler", "tcp://127.0.0.1:1", "--workers", "2",
            "--out", str(tmp_path / "o.csv")]  # fmt: skip
    if command == "score":
        run = tmp_path / "a.run"
        run.write_text("q1 Q0 d1 1 2.0 a\n")
        args += ["--run", str(run)]
    status, err = run_cli(args, capsys)
    assert status == 2 and err == (
        f"rankbias {command}: error: --workers 2: the cluster at --scheduler has the workers "
        "started on it; expected --workers only for this machine's threads or local cluster\n"
    )


@pytest.mark.parametrize(
    ("address", "expected"),
    [
        ("", "'' is not HOST:PORT; expected tcp://HOST:PORT"),
        ("localhost", "'localhost' is not HOST:PORT; expected tcp://HOST:PORT"),
        ("tcp://:8786", "'tcp://:8786' is not HOST:PORT"),
        ("tcp://localhost:abc", "'tcp://localhost:abc' is not HOST:PORT"),
        ("tcp://[::1]", "'tcp://[::1]' is not HOST:PORT"),
        ("tcp://[]:8786", "'tcp://[]:8786' is not HOST:PORT"),  # brackets round no host
        ("tcp://localhost:８７８６", "is not HOST:PORT"),
        ("inproc://x", "'inproc://x': protocol inproc:// is not used; expected tcp://HOST:PORT"),
        ("tls://localhost:8786", "protocol tls:// is not used"),
        ("localhost:0", "'localhost:0': port 0 is out of range 1 to 65535"),
        ("tcp://127.0.0.1:65536", "port 65536 is out of range 1 to 65535"),
    ],
)
def test_a_scheduler_address_that_is_not_tcp_host_port_is_refused(
    tmp_path, capsys, address, expected
):
    """Refused before anything starts, naming the option (an empty address used to start a
    local cluster instead; the others failed inside distributed with its own words)."""
    collection = generated_collection(tmp_path / "c.tsv", 10)
    args = ["stats", "--collection", str(collection), "--terms", "default", "--engine", "dask"]
    out = tmp_path / "s.csv"
    status, err = run_cli([*args, "--scheduler", address, "--out", str(out)], capsys)
    assert status == 2 and "argument --scheduler: " in err and expected in err
    assert not out.exists()


@pytest.mark.parametrize("address", ["tcp://[::1]:1", "127.0.0.1:1"])
def test_a_scheduler_address_in_either_accepted_form_is_tried(tmp_path, capsys, address):
    collection = generated_collection(tmp_path / "c.tsv", 10)
    args = ["stats", "--collection", str(collection), "--terms", "default", "--engine", "dask"]
    extra = ["--scheduler", address, "--connect-timeout", "1", "--out", str(tmp_path / "s.csv")]
    status, err = run_cli([*args, *extra], capsys)
    assert status == 2 and f"--scheduler {address}: cannot connect" in err


def test_a_collection_workers_cannot_read(tmp_path, capsys, on_cluster):
    status, err = run_cli(
        [
            "stats",
            "--collection",
            "no-such-dataset-id",
            "--terms",
            "default",
            "--engine",
            "dask",
            "--out",
            str(tmp_path / "s.csv"),
        ],
        capsys,
    )
    assert status == 2 and "no-such-dataset-id" in err and "--engine local" in err


def test_command_starts_its_own_local_cluster(tmp_path, capsys):
    """No --scheduler: the command starts (and stops) a LocalCluster of --workers processes."""
    collection = generated_collection(tmp_path / "c.tsv", 400)
    local, dask = stats_outputs(tmp_path, collection, ".csv", capsys, ["--workers", "2"])
    assert_same_output(local, dask)


# ---- score ---------------------------------------------------------------------------------
RUNS = sorted((TESTBED / "runs").glob("*.run")) if (TESTBED / "runs").exists() else []
needs_testbed = pytest.mark.skipif(len(RUNS) < 2, reason="testbed runs not built")


@needs_testbed
@pytest.mark.parametrize(
    ("queries_per_task", "background"), [(1, "collection"), (7, "bm25 run"), (13, "collection")]
)
def test_score_runs_by_query_chunks(client, queries_per_task, background):
    lexicon = default_lexicon()
    stats = read_collection_stats(TESTBED / "collection.tsv", lexicon, per_term=True, workers=1)
    runs = [read_run(path) for path in RUNS[:2]]  # bm25 and bm25_rm3: same queries
    if queries_per_task < 10:  # many small tasks: a few dozen queries are enough
        runs = [run.restrict(runs[0].qids[: 30 * queries_per_task]) for run in runs]
    reading_background = ["nfairr(background=run)", "ifairr(background=run)"]
    if background != "bm25 run":
        reading_background = []
    options = dict(
        metrics=(*parse_metric_list("all"), *reading_background),
        cutoffs=(5, 10, 20),
        background=runs[0] if background == "bm25 run" else "collection",
        missing="neutral",
    )
    expected = score_runs(runs, stats, **options)
    got = engine.score_runs_on_dask(
        client, runs, stats, queries_per_task=queries_per_task, **options
    )
    pd.testing.assert_frame_equal(got, expected)
    assert got.attrs == expected.attrs


@needs_testbed
def test_a_background_with_missing_documents_is_counted_per_run_as_locally(client):
    """Two runs over different queries, split in chunks, read a background in which every
    seventh document is not in the collection: the table and the counts per run are the
    local engine's (each run's share of the background, summed over its chunks)."""
    stats = read_collection_stats(TESTBED / "collection.tsv", default_lexicon(), workers=1)
    bm25, rm3 = (read_run(path) for path in RUNS[:2])
    runs = [bm25.restrict(bm25.qids[:9]), rm3.restrict(rm3.qids[5:20])]
    docids = bm25.docids.astype(object)
    docids[::7] = [f"absent-{i}" for i in range(len(docids[::7]))]
    background = Run("bg", bm25.qids, bm25.offsets, docids, bm25.scores)
    options = dict(
        metrics=["nfairr(background=run)", "ifairr(background=run)"], cutoffs=(5, 10),
        background=background, missing="neutral",
    )  # fmt: skip
    expected = score_runs(runs, stats, **options)
    got = engine.score_runs_on_dask(client, runs, stats, queries_per_task=4, **options)
    pd.testing.assert_frame_equal(got, expected)
    assert got.attrs == expected.attrs
    for run in runs:  # counted by hand: the renamed documents of the run's queries
        lists = background.restrict(run.qids).docids
        absent = sum(str(docid).startswith("absent-") for docid in lists)
        assert (
            absent > 0
            and got.attrs["missing_documents"][f"bg (background of {run.name})"] == absent
        )


@needs_testbed
def test_empty_lists_in_different_chunks_give_the_local_engines_message_and_table(client):
    """Queries with no retrieved document, one in the first chunk and two in the last: with
    empty="error" the same message as the local engine (all three counted, not a chunk's
    share), with empty="nan" the same table and the same list of empty queries."""
    stats = read_collection_stats(TESTBED / "collection.tsv", default_lexicon(), workers=1)
    full = read_run(RUNS[0]).restrict(read_run(RUNS[0]).qids[:12])
    lengths = full.list_lengths.copy()
    lengths[[1, 10, 11]] = 0
    keep = np.concatenate(
        [np.arange(n) < m for n, m in zip(full.list_lengths, lengths, strict=True)]
    )
    offsets = np.concatenate([[0], np.cumsum(lengths)])
    run = Run(full.name, full.qids, offsets, full.docids[keep], full.scores[keep])
    options = dict(metrics=["nfairr", "rab"], cutoffs=(5, 10), queries_per_task=3)
    with pytest.raises(InputError) as local:
        score_runs(run, stats, options["metrics"], options["cutoffs"])
    with pytest.raises(InputError) as dask:
        engine.score_runs_on_dask(client, run, stats, **options)
    assert str(dask.value) == str(local.value)
    assert "3 query(ies) have no retrieved documents" in str(local.value)
    expected = score_runs(run, stats, options["metrics"], options["cutoffs"], empty="nan")
    got = engine.score_runs_on_dask(client, run, stats, empty="nan", **options)
    pd.testing.assert_frame_equal(got, expected)
    assert got.attrs == expected.attrs and len(got.attrs["empty_queries"][run.name]) == 3


def test_runs_of_one_name_give_the_local_engines_message(client):
    """Two runs of one name could not be told apart in the table: the local engine refuses
    them, and the Dask engine, which scores each run in parts of its own, says the same
    instead of a table with both under one name."""
    frame = pd.DataFrame({"qid": ["q1", "q1"], "docid": ["d1", "d2"], "score": [2.0, 1.0]})
    runs = [Run.from_frame(frame, "same"), Run.from_frame(frame.iloc[::-1], "same")]
    options = dict(metrics=["rbo"], cutoffs=(2,), counterfactual={"same": runs[0]})
    with pytest.raises(InputError) as local:
        score_runs(runs, None, **options)
    with pytest.raises(InputError) as dask:
        engine.score_runs_on_dask(client, runs, None, **options)
    assert str(dask.value) == str(local.value)
    assert (
        str(local.value) == "two runs share a name in ['same', 'same']; expected distinct run names"
    )


@pytest.mark.parametrize(
    ("background_rows", "message"),
    [
        (  # no list for q1 and q3
            [("q2", "d0", 2.0), ("q2", "d1", 1.0)],
            "background: run 'bg' has no documents for 2 query(ies) of run 'run', e.g. q1, q3; "
            "expected a background list for every scored query",
        ),
        (  # lists for all three, but those of q1 and q3 name documents the collection lacks
            [("q1", "xq1", 1.0), ("q3", "xq3", 1.0), ("q2", "d1", 1.0)],
            "background: run 'bg' names 2 document(s) absent from the collection (2 retrieved "
            "row(s)), e.g. xq1, xq3; expected every docid in the collection, or "
            "missing='neutral' (--missing neutral) to count them as neutral",
        ),
    ],
)
def test_a_background_that_fails_in_several_chunks_gives_the_local_engines_message(
    client, tmp_path, background_rows, message
):
    """The Dask engine scores one query per chunk; a background run that fails two queries
    gives the local engine's message, counting both, not one chunk's."""
    stats = read_collection_stats(generated_collection(tmp_path / "c.tsv", 20), default_lexicon())
    rows = [(q, f"d{i}", 2.0 - i) for q in ("q1", "q2", "q3") for i in range(2)]
    columns = ["qid", "docid", "score"]
    run = Run.from_frame(pd.DataFrame(rows, columns=columns), "run")
    background = Run.from_frame(pd.DataFrame(background_rows, columns=columns), "bg")
    options = dict(metrics=["nfairr(background=run)"], cutoffs=(2,), background=background)
    with pytest.raises(InputError) as local:
        score_runs(run, stats, **options)
    with pytest.raises(InputError) as dask:
        engine.score_runs_on_dask(client, run, stats, queries_per_task=1, **options)
    assert str(dask.value) == str(local.value)
    assert str(local.value) == message


def score_args(collection: Path, runs: list[Path], out: Path, extra=()) -> list[str]:
    args = ["score", "--collection", str(collection), "--terms", "default", "--out", str(out)]
    for run in runs:
        args += ["--run", str(run)]
    return [*args, *extra]


@needs_testbed
def test_score_command_on_the_testbed(tmp_path, capsys, on_cluster, testbed_partitions):
    extra = ["--metrics", "all", "--missing", "neutral", "--background", str(RUNS[0])]
    local, dask = tmp_path / "local.csv", tmp_path / "dask.csv"
    status, err_local = run_cli(
        score_args(TESTBED / "collection.tsv", RUNS[:2], local, extra), capsys
    )
    assert status == 0
    args = score_args(TESTBED / "collection.tsv", RUNS[:2], dask, [*extra, "--engine", "dask"])
    status, err_dask = run_cli(args, capsys)
    assert status == 0
    assert dask.read_bytes() == local.read_bytes()
    # the same report of undefined values and missing documents, but for the output path
    assert err_dask.splitlines()[:-1] == err_local.splitlines()[:-1]


def write_run(path: Path, rows: list[tuple[str, str, float]]) -> Path:
    path.write_text("".join(f"{q} Q0 {d} {i + 1} {s} t\n" for i, (q, d, s) in enumerate(rows)))
    return path


def test_score_on_many_partitions_and_chunks(
    tmp_path, capsys, on_cluster, small_partitions, monkeypatch
):
    monkeypatch.setattr(engine, "PARTITIONS_PER_THREAD", 40)  # chunks of a query or two
    collection = generated_collection(tmp_path / "c.tsv", 3000)
    rng = np.random.default_rng(3)
    runs = []
    for name in ("a", "b"):
        rows = [
            (f"q{q}", f"d{d}", float(s))
            for q in range(60)
            for s, d in enumerate(rng.choice(3000, size=int(rng.integers(1, 40)), replace=False))
        ]
        runs.append(write_run(tmp_path / f"{name}.run", rows))
    local, dask = tmp_path / "local.csv", tmp_path / "dask.csv"
    assert run_cli(score_args(collection, runs, local, ["--metrics", "all"]), capsys)[0] == 0
    args = score_args(collection, runs, dask, ["--metrics", "all", "--engine", "dask"])
    assert run_cli(args, capsys)[0] == 0
    assert dask.read_bytes() == local.read_bytes()


def test_score_errors_are_the_local_engines(tmp_path, capsys, on_cluster):
    collection = generated_collection(tmp_path / "c.tsv", 50)
    run = write_run(tmp_path / "r.run", [("q1", "d1", 3.0), ("q1", "nowhere", 2.0)])
    messages = []
    for extra in ([], ["--engine", "dask"]):
        status, err = run_cli(score_args(collection, [run], tmp_path / "s.csv", extra), capsys)
        assert status == 2
        messages.append(err.strip().splitlines()[-1])
    assert messages[0] == messages[1] and "nowhere" in messages[1]


# ---- a real scheduler and two workers on the loopback -------------------------------------
def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


@pytest.fixture(scope="module")
def scheduler_address(tmp_path_factory):
    """``dask scheduler`` and two ``dask worker`` processes on 127.0.0.1, torn down after."""
    port = free_port()
    address = f"tcp://127.0.0.1:{port}"
    logs = tmp_path_factory.mktemp("dask-logs")
    dask = str(BIN / "dask")
    commands = [[dask, "scheduler", "--host", "127.0.0.1", "--port", str(port), "--no-dashboard"]]
    for i in range(2):
        commands.append(
            [
                dask,
                "worker",
                address,
                "--nthreads",
                "1",
                "--nworkers",
                "1",
                "--host",
                "127.0.0.1",
                "--no-dashboard",
                "--name",
                f"w{i}",
                "--local-directory",
                str(logs / f"w{i}"),
            ]
        )
    processes = []
    try:
        for i, command in enumerate(commands):
            log = open(logs / f"{i}.log", "wb")
            processes.append(
                subprocess.Popen(
                    command, stdout=log, stderr=subprocess.STDOUT, env=child_env(), cwd=logs
                )
            )
            if i == 0:
                time.sleep(1.0)
        with distributed.Client(address, timeout=60) as probe:
            probe.wait_for_workers(2, timeout=120)
        yield address
    finally:
        for process in reversed(processes):
            process.terminate()
        for process in processes:
            try:
                process.wait(timeout=30)
            except subprocess.TimeoutExpired:
                process.kill()
                process.wait(timeout=10)


def cli(args: list[str]) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-m", "rankbias.cli", *args],
        env=child_env(),
        capture_output=True,
        text=True,
        timeout=600,
    )


@needs_testbed
def test_commands_on_a_scheduler_with_two_workers(tmp_path, scheduler_address):
    collection = TESTBED / "collection.tsv"
    for suffix in (".csv", ".parquet"):
        outputs = []
        for extra in ([], ["--engine", "dask", "--scheduler", scheduler_address]):
            out = tmp_path / f"stats{len(outputs)}{suffix}"
            done = cli(
                [
                    "stats",
                    "--collection",
                    str(collection),
                    "--terms",
                    "default",
                    "--out",
                    str(out),
                    *extra,
                ]
            )
            assert done.returncode == 0, done.stderr
            outputs.append(out)
        assert_same_output(*outputs)
    extra = ["--missing", "neutral"]  # the default metrics; all of them are tested above
    outputs = []
    for engine_args in ([], ["--engine", "dask", "--scheduler", scheduler_address]):
        out = tmp_path / f"score{len(outputs)}.csv"
        done = cli(score_args(collection, RUNS[:2], out, [*extra, *engine_args]))
        assert done.returncode == 0, done.stderr
        outputs.append(out)
    assert outputs[1].read_bytes() == outputs[0].read_bytes()


def listening(port: int, within: float = 120.0) -> None:
    """Wait until something accepts connections on 127.0.0.1:PORT."""
    deadline = time.monotonic() + within
    while True:
        try:
            socket.create_connection(("127.0.0.1", port), timeout=1).close()
            return
        except OSError:
            assert time.monotonic() < deadline, f"nothing listens on port {port}"
            time.sleep(0.1)


@contextlib.contextmanager
def hand_started_cluster(tmp_path, *worker_options, workers: int = 1):
    """A `dask scheduler`, listening when this yields, and ``workers`` (0 or 1) `dask worker`
    (with ``worker_options``) as processes of their own: ``(address, scheduler, worker)``;
    both are killed at the end if still alive."""
    port = free_port()
    address = f"tcp://127.0.0.1:{port}"
    dask = str(BIN / "dask")
    quiet = {"stdout": subprocess.DEVNULL, "stderr": subprocess.DEVNULL, "cwd": tmp_path}
    scheduler = subprocess.Popen(
        [dask, "scheduler", "--host", "127.0.0.1", "--port", str(port), "--no-dashboard"],
        env=child_env(), **quiet,
    )  # fmt: skip
    worker = None
    try:
        listening(port)
        if workers:
            worker = subprocess.Popen(
                [dask, "worker", address, "--nthreads", "1", *worker_options,
                 "--host", "127.0.0.1", "--no-dashboard",
                 "--local-directory", str(tmp_path / "w")],
                env=child_env(), **quiet,
            )  # fmt: skip
        yield address, scheduler, worker
    finally:
        for process in (worker, scheduler):
            if process is not None and process.poll() is None:
                process.kill()
                process.wait(timeout=10)


def started_on(address: str, args: list[str]) -> subprocess.Popen:
    """``rankbias ARGS --scheduler ADDRESS``, returned once the scheduler runs its tasks, however
    long the command takes to start and connect on a loaded machine."""
    with distributed.Client(address, timeout=60) as probe:
        probe.wait_for_workers(1, timeout=120)
        command = subprocess.Popen(
            [str(BIN / "rankbias"), *args, "--scheduler", address],
            env=child_env(), stderr=subprocess.PIPE, text=True,
        )  # fmt: skip
        deadline = time.monotonic() + 120
        while not any(probe.processing().values()):
            assert command.poll() is None and time.monotonic() < deadline, "never started"
            time.sleep(0.05)
    return command


def test_a_cluster_whose_only_worker_dies_fails_within_the_worker_wait(tmp_path):
    """`dask scheduler` and one `dask worker --no-nanny` (nobody restarts it): the worker is
    killed while the command waits on it, and the command ends once --worker-wait has passed
    (give or take the scheduler's notice and the half-second poll), with one message, instead
    of waiting for minutes."""
    collection = generated_collection(tmp_path / "c.tsv", 300_000)
    args = ["stats", "--collection", str(collection), "--terms", "default", "--engine", "dask",
            "--worker-wait", "5", "--out", str(tmp_path / "o.csv")]  # fmt: skip
    with hand_started_cluster(tmp_path, "--no-nanny") as (address, _, worker):
        command = started_on(address, args)
        worker.kill()
        killed = time.monotonic()
        _, err = command.communicate(timeout=90)
        elapsed = time.monotonic() - killed
    assert command.returncode == 2, err
    assert "has had no worker for 5 s" in err and "Traceback" not in err
    assert 5 <= elapsed < 15 and not (tmp_path / "o.csv").exists()


def test_a_scheduler_that_dies_during_the_work_ends_the_command_with_one_line(tmp_path):
    """`dask scheduler` and a `dask worker`: the scheduler is killed while it hands out the
    command's partitions.  Wherever distributed notices (a result cancelled, a read or a
    submit on a closed connection), the command ends with one line naming --scheduler, exit
    status 2, the previous output untouched, and distributed's own error log kept out."""
    collection = generated_collection(tmp_path / "c.tsv", 300_000)
    out = tmp_path / "o.csv"
    out.write_text("previous\n")
    args = ["stats", "--collection", str(collection), "--terms", "default", "--engine", "dask",
            "--out", str(out)]  # fmt: skip
    with hand_started_cluster(tmp_path) as (address, scheduler, _):
        command = started_on(address, args)
        scheduler.kill()
        killed = time.monotonic()
        _, err = command.communicate(timeout=90)
        elapsed = time.monotonic() - killed
    assert command.returncode == 2, err
    assert err == (
        f"rankbias stats: error: --scheduler {address}: the connection to the scheduler was "
        "lost during the work; nothing was written; expected a scheduler that runs for the "
        "length of the command\n"
    )
    assert elapsed < 40 and out.read_text() == "previous\n"
