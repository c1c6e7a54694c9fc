"""Tests of rankbias.outputs: atomic writes, clean-up, checks before the work, table formats."""

from __future__ import annotations

import errno
import gzip
import os
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path

import pandas as pd
import pyarrow.parquet as pq
import pytest
from terminal import default_signals, python_sigint
from unprivileged import raised_unprivileged, shared_folder

from rankbias.errors import InputError
from rankbias.outputs import (
    TABLE_SUFFIXES,
    TableWriter,
    Terminated,
    atomic_open,
    atomic_path,
    check_output,
    check_output_dir,
    handle_signals,
    remove_stale_temps,
    table_format,
    write_table,
    write_text,
)

SRC = Path(__file__).resolve().parents[1] / "src"


def temporaries(directory: Path) -> list[str]:
    return sorted(p.name for p in directory.iterdir() if p.name.endswith(".tmp"))


# ---- atomic writes ---------------------------------------------------------------------------
def test_the_target_appears_only_when_the_block_ends(tmp_path):
    target = tmp_path / "out.txt"
    target.write_text("old\n")
    with atomic_open(target) as handle:
        handle.write("new\n")
        handle.flush()
        assert target.read_text() == "old\n"  # a reader still sees the previous file
        (name,) = temporaries(tmp_path)
        assert name.startswith(f".out.txt.{os.getpid()}.")
    assert target.read_text() == "new\n"
    assert temporaries(tmp_path) == []


@pytest.mark.signals
def test_an_error_keeps_the_previous_file_and_removes_the_temporary(tmp_path):
    target = tmp_path / "out.txt"
    target.write_text("old\n")
    with pytest.raises(RuntimeError, match="boom"):
        with atomic_open(target) as handle:
            handle.write("half")
            raise RuntimeError("boom")
    assert target.read_text() == "old\n"
    assert temporaries(tmp_path) == []
    with pytest.raises(KeyboardInterrupt):
        with atomic_path(target):
            raise KeyboardInterrupt
    assert target.read_text() == "old\n" and temporaries(tmp_path) == []


def test_a_full_disk_keeps_the_previous_file(tmp_path, monkeypatch):
    target = tmp_path / "out.csv"
    target.write_text("a\n1\n")

    def no_space(fd):
        raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))

    monkeypatch.setattr("rankbias.outputs.os.fsync", no_space)
    with pytest.raises(OSError) as caught:
        write_table(target, pd.DataFrame({"a": [2, 3]}))
    assert caught.value.errno == errno.ENOSPC
    assert target.read_text() == "a\n1\n"
    assert temporaries(tmp_path) == []


@pytest.mark.parametrize("directory", ["/proc", "/sys"])
def test_a_directory_that_takes_no_new_file_is_named_not_the_temporary(directory):
    # the kernel's file systems take no new file (ENOENT, EACCES, even for root, whom
    # os.access lets pass); the message named the hidden temporary, /proc/.o.csv.<pid>.<x>.tmp
    target = Path(directory) / "o.csv"
    with pytest.raises(InputError) as caught:
        write_text(target, "a\n")
    message = str(caught.value)
    assert message.startswith(f"{target}: cannot create a file in {directory} (")
    assert message.endswith("); expected a writable location") and ".tmp" not in message
    assert not target.exists()


def test_concurrent_writers_never_share_a_temporary_file(tmp_path):
    target = tmp_path / "out.txt"
    inside = threading.Barrier(2)
    seen = []

    def writer(text):
        with atomic_path(target) as temporary:
            seen.append(temporary)
            temporary.write_text(text * 10_000)
            inside.wait()  # both temporary files exist at the same time

    threads = [threading.Thread(target=writer, args=(t,)) for t in ("a", "b")]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert seen[0] != seen[1]
    assert target.read_text() in ("a" * 10_000, "b" * 10_000)
    assert temporaries(tmp_path) == []


def test_a_symbolic_link_is_followed_and_kept(tmp_path):
    real = tmp_path / "real.txt"
    real.write_text("old")
    link = tmp_path / "link.txt"
    link.symlink_to(real)
    write_text(link, "new")
    assert link.is_symlink() and real.read_text() == "new"


def test_permissions_follow_the_umask_or_the_replaced_file(tmp_path):
    fresh = write_text(tmp_path / "fresh.txt", "x")
    mask = os.umask(0)
    os.umask(mask)
    assert fresh.stat().st_mode & 0o777 == 0o666 & ~mask
    kept = tmp_path / "kept.txt"
    kept.write_text("x")
    kept.chmod(0o640)
    write_text(kept, "y")
    assert kept.stat().st_mode & 0o777 == 0o640


def test_stale_temporaries_of_dead_processes_are_removed(tmp_path):
    target = tmp_path / "out.csv"
    dead = subprocess.run([sys.executable, "-c", "import os; print(os.getpid())"],
                          capture_output=True, text=True, check=True)  # fmt: skip
    dead_pid = int(dead.stdout)
    stale = tmp_path / f".out.csv.{dead_pid}.abc123.tmp"
    live = tmp_path / f".out.csv.{os.getpid()}.def456.tmp"  # a concurrent writer's
    other = tmp_path / f".other.csv.{dead_pid}.abc123.tmp"  # another target's
    for path in (stale, live, other):
        path.write_text("partial")
    assert remove_stale_temps(target) == [stale]
    assert not stale.exists() and live.exists() and other.exists()
    stale.write_text("partial")
    write_text(target, "complete")  # every write cleans up after killed runs
    assert not stale.exists() and live.exists()


# ---- signals ---------------------------------------------------------------------------------
@pytest.mark.signals
def test_sigterm_removes_the_temporary_and_keeps_the_previous_file(tmp_path):
    target = tmp_path / "out.txt"
    target.write_text("old\n")
    script = f"""
import sys, time
from rankbias.outputs import atomic_open, handle_signals, Terminated
try:
    with handle_signals(), atomic_open({str(target)!r}) as handle:
        handle.write("half")
        handle.flush()
        print("writing", flush=True)
        time.sleep(60)
except Terminated as exc:
    print(exc, flush=True)
    sys.exit(143)
"""
    env = {**os.environ, "PYTHONPATH": str(SRC)}
    child = subprocess.Popen([sys.executable, "-c", script], stdout=subprocess.PIPE, text=True,
                             env=env)  # fmt: skip
    assert child.stdout.readline() == "writing\n"
    assert len(temporaries(tmp_path)) == 1
    child.send_signal(signal.SIGTERM)
    out, _ = child.communicate(timeout=30)
    assert child.returncode == 143 and out == "terminated by SIGTERM\n"
    assert target.read_text() == "old\n"
    assert temporaries(tmp_path) == []


def killed(pid: int, within: float = 10) -> bool:
    """Whether process ``pid`` is gone or a zombie within ``within`` seconds: a SIGKILL takes
    effect when the process next runs, which on a loaded machine is not at once."""
    status, deadline = Path(f"/proc/{pid}/stat"), time.monotonic() + within
    while time.monotonic() < deadline:
        try:
            if status.read_text().rsplit(")", 1)[1].split()[0] in ("Z", "X"):
                return True
        except FileNotFoundError:
            return True
        time.sleep(0.05)
    return False


@pytest.mark.signals
@pytest.mark.parametrize("ignored", [False, True])
def test_at_once_removes_temporaries_kills_children_and_keeps_an_inherited_ignore(
    tmp_path, ignored
):
    """Inside ``handle_signals(at_once=…)`` the first SIGINT ends the process at once (its
    temporary gone, its child process killed, no clean-up code run), unless SIGINT was ignored
    on entry, as in a background job: then it is ignored and SIGTERM ends the process."""
    target = tmp_path / "out.txt"
    target.write_text("old\n")
    script = f"""
import signal, subprocess, sys, time
from rankbias.outputs import atomic_open, handle_signals
if {ignored}:
    signal.signal(signal.SIGINT, signal.SIG_IGN)
sleeper = subprocess.Popen(["sleep", "60"])
try:
    with handle_signals(at_once="rankbias test"), atomic_open({str(target)!r}) as handle:
        handle.write("half")
        handle.flush()
        print(sleeper.pid, flush=True)
        time.sleep(60)
finally:
    print("clean-up code ran", flush=True)
"""
    env = {**os.environ, "PYTHONPATH": str(SRC)}
    child = subprocess.Popen([sys.executable, "-c", script], stdout=subprocess.PIPE,
                             stderr=subprocess.PIPE, text=True, env=env,
                             preexec_fn=default_signals)  # fmt: skip
    sleeper = int(child.stdout.readline())
    assert len(temporaries(tmp_path)) == 1
    child.send_signal(signal.SIGINT)
    if ignored:
        time.sleep(0.5)
        assert child.poll() is None
        child.send_signal(signal.SIGTERM)
    out, err = child.communicate(timeout=30)
    what = "terminated by SIGTERM" if ignored else "interrupted"
    assert child.returncode == (143 if ignored else 130) and out == ""
    assert err == f"rankbias test: {what}; no output was written\n"
    assert target.read_text() == "old\n" and temporaries(tmp_path) == []
    assert killed(sleeper)
    with python_sigint():
        before = signal.getsignal(signal.SIGINT)
        with handle_signals(at_once="rankbias test"):
            assert signal.getsignal(signal.SIGINT) is not before
        assert signal.getsignal(signal.SIGINT) is before


@pytest.mark.signals
@pytest.mark.parametrize("how", ["SIGTERM", "SIGINT"])
def test_a_command_whose_signal_exception_was_swallowed_ends_after_the_grace(tmp_path, how):
    """``handle_signals(command=…)``: the signal's exception is raised inside a finaliser, where
    Python swallows it, and the command goes on sleeping; it still ends about GRACE_S after the
    signal, its temporary removed, with one line and exit status 128 + signal."""
    target = tmp_path / "out.txt"
    target.write_text("old\n")
    script = f"""
import gc, os, signal, sys, time
from rankbias.outputs import atomic_open, handle_signals
signal.signal(signal.SIGINT, signal.default_int_handler)

class SignalsOnCollection:
    def __del__(self):
        os.kill(os.getpid(), signal.{how})
        for _ in range(10_000):
            pass

with handle_signals(command="rankbias test"), atomic_open({str(target)!r}) as handle:
    handle.write("half")
    SignalsOnCollection()
    print(time.monotonic(), flush=True)
    time.sleep(30)
print("went on", flush=True)
"""
    env = {**os.environ, "PYTHONPATH": str(SRC)}
    child = subprocess.Popen([sys.executable, "-c", script], stdout=subprocess.PIPE,
                             stderr=subprocess.PIPE, text=True, env=env)  # fmt: skip
    signalled = float(child.stdout.readline())
    out, err = child.communicate(timeout=30)
    ended = time.monotonic()
    what = {"SIGTERM": "terminated by SIGTERM", "SIGINT": "interrupted"}[how]
    assert child.returncode == 128 + getattr(signal, how) and out == ""
    assert err.endswith(f"rankbias test: {what}; no output was written\n")  # after Python's
    assert err.count("no output was written") == 1  # "Exception ignored in" lines
    assert 0.4 < ended - signalled < 5
    assert target.read_text() == "old\n" and temporaries(tmp_path) == []


@pytest.mark.signals
def test_a_signal_exception_that_leaves_the_block_cancels_the_grace():
    """Once the exception has left the block the process is ending by itself (or, in a
    library's caller, going on): the grace timer does not end it later."""
    script = """
import os, signal, time
from rankbias.outputs import Terminated, handle_signals
try:
    with handle_signals(command="rankbias test"):
        os.kill(os.getpid(), signal.SIGTERM)
        time.sleep(5)
except Terminated:
    time.sleep(1.5)
    print("went on", flush=True)
"""
    env = {**os.environ, "PYTHONPATH": str(SRC)}
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True,
                          env=env, timeout=30)  # fmt: skip
    assert (done.returncode, done.stdout, done.stderr) == (0, "went on\n", "")


@pytest.mark.signals
def test_handlers_are_restored_after_the_block():
    before = signal.getsignal(signal.SIGTERM)
    interrupt = signal.getsignal(signal.SIGINT)
    with handle_signals():
        assert signal.getsignal(signal.SIGTERM) is not before
        # SIGINT is taken over only from Python's own handler (not from a notebook kernel's)
        own = interrupt is signal.default_int_handler
        assert (signal.getsignal(signal.SIGINT) is interrupt) is not own
    assert signal.getsignal(signal.SIGTERM) is before
    assert signal.getsignal(signal.SIGINT) is interrupt


@pytest.mark.signals
def test_sigint_still_raises_keyboardinterrupt_and_is_recorded():
    """Ctrl-C raises KeyboardInterrupt as Python's own handler does, and is recorded, so that
    an interrupt whose exception Python swallows still ends the command as interrupted."""
    from rankbias import outputs

    previous = signal.signal(signal.SIGINT, signal.default_int_handler)
    try:
        with pytest.raises(KeyboardInterrupt), handle_signals():
            try:
                os.kill(os.getpid(), signal.SIGINT)
                for _ in range(10_000):  # the handler runs here
                    pass
            finally:
                pending = list(outputs.PENDING_SIGNALS)
                outputs.PENDING_SIGNALS.clear()
    finally:
        signal.signal(signal.SIGINT, previous)
    assert pending == [signal.SIGINT]
    assert str(outputs.Terminated(signal.SIGINT)) == "interrupted"
    assert str(outputs.Terminated(signal.SIGTERM)) == "terminated by SIGTERM"


@pytest.mark.signals
def test_a_signal_ignored_on_entry_stays_ignored():
    """``nohup`` starts a command with SIGHUP ignored: a hangup must not end it."""
    before = signal.signal(signal.SIGHUP, signal.SIG_IGN)
    try:
        with handle_signals(), handle_signals(at_once="rankbias test"):
            assert signal.getsignal(signal.SIGHUP) == signal.SIG_IGN
            assert signal.getsignal(signal.SIGTERM) != signal.SIG_DFL
    finally:
        signal.signal(signal.SIGHUP, before)
    assert str(Terminated(signal.SIGHUP)) == "terminated by SIGHUP"


# ---- formats ---------------------------------------------------------------------------------
@pytest.mark.parametrize(
    ("name", "kind", "compressed"),
    [("a.csv", "csv", False), ("a.tsv", "tsv", False), ("a.parquet", "parquet", False),
     ("a.csv.gz", "csv", True), ("A.TSV.GZ", "tsv", True), ("dir.v2/a.b.csv", "csv", False)],
)  # fmt: skip
def test_the_format_follows_the_suffix(name, kind, compressed):
    fmt = table_format(name)
    assert (fmt.kind, fmt.gzip) == (kind, compressed)


@pytest.mark.parametrize("name", ["a.xlsx", "a", "a.gz", "a.parquet.gz", ".csv", "a.csv.bz2"])
def test_other_suffixes_are_refused_with_the_accepted_ones(name):
    with pytest.raises(InputError) as caught:
        table_format(name)
    message = str(caught.value)
    assert message.startswith(f"--out {name}: unknown output format")
    for suffix in TABLE_SUFFIXES:
        assert suffix in message


def test_every_format_round_trips(tmp_path):
    frame = pd.DataFrame({"docid": ["d1", "d 2", "d,3"], "value": [0.5, float("nan"), 2.0]})
    for suffix in TABLE_SUFFIXES:
        target = tmp_path / f"t{suffix}"
        write_table(target, frame)
        if suffix == ".parquet":
            assert target.read_bytes()[:4] == b"PAR1" and target.read_bytes()[-4:] == b"PAR1"
            back = pq.read_table(target).to_pandas()
        else:
            raw = target.read_bytes()
            if suffix.endswith(".gz"):
                assert raw[:2] == b"\x1f\x8b"
                raw = gzip.decompress(raw)
            sep = "\t" if ".tsv" in suffix else ","
            assert raw.decode().splitlines()[0] == f"docid{sep}value"
            back = pd.read_csv(target, sep=sep)
        pd.testing.assert_frame_equal(back, frame)


def test_gzip_output_is_reproducible(tmp_path):
    frame = pd.DataFrame({"a": [1, 2]})
    first = write_table(tmp_path / "a.csv.gz", frame).read_bytes()
    second = write_table(tmp_path / "b.csv.gz", frame).read_bytes()
    assert first == second  # no time stamp, no file name in the gzip header


def test_table_writer_streams_blocks_with_one_header(tmp_path):
    import pyarrow as pa

    target = tmp_path / "s.tsv"
    with TableWriter(target) as writer:
        writer.write(pa.table({"docid": ["a"], "n": [1]}))
        writer.write(pd.DataFrame({"docid": ["b"], "n": [2]}))
    assert target.read_text() == "docid\tn\na\t1\nb\t2\n" and writer.rows == 2
    parquet = tmp_path / "s.parquet"
    with TableWriter(parquet) as writer:
        writer.write(pa.table({"docid": ["a"], "n": [1]}))
        writer.write(pa.table({"docid": ["b"], "n": [2]}))
    assert pq.read_table(parquet).to_pydict() == {"docid": ["a", "b"], "n": [1, 2]}
    with pytest.raises(InputError, match="no table was written"):
        with TableWriter(tmp_path / "empty.parquet"):
            pass
    assert not (tmp_path / "empty.parquet").exists() and temporaries(tmp_path) == []


# ---- checks before the work ------------------------------------------------------------------
def test_an_output_that_is_an_input_is_refused(tmp_path):
    source = tmp_path / "collection.tsv"
    source.write_text("d1\tx\n")
    link = tmp_path / "link.csv"
    link.symlink_to(source)
    hard = tmp_path / "hard.csv"
    os.link(source, hard)
    for out in (source.with_name("collection.tsv"), link, hard,
                tmp_path / "sub" / ".." / "collection.tsv"):  # fmt: skip
        with pytest.raises(InputError, match="is the input file"):
            check_output(out, inputs=["default", None, source], table=False)
    assert check_output(tmp_path / "other.csv", inputs=["msmarco-passage", source])


def test_the_packaged_word_lists_are_never_an_output():
    from rankbias.lexicon import default_pairs_path

    default = default_pairs_path()  # what `--terms default` reads, not a path on the command line
    before = default.read_bytes()
    for target in (default, default.parent / "new.csv", default.parent / "sub" / ".." / "x.csv"):
        with pytest.raises(InputError, match="is inside the package's own resources"):
            check_output(target)
    assert default.read_bytes() == before


def test_bad_output_locations_are_refused(tmp_path):
    parent_file = tmp_path / "file"
    parent_file.write_text("x")
    with pytest.raises(InputError, match="is not a directory"):
        check_output(parent_file / "sub" / "out.csv")
    (tmp_path / "d.csv").mkdir()
    with pytest.raises(InputError, match="is a directory; expected a file name"):
        check_output(tmp_path / "d.csv")
    with pytest.raises(InputError, match="not a regular file"):
        check_output("/dev/null", table=False)
    assert check_output(tmp_path / "new" / "deeper" / "out.csv")  # created when written
    assert not (tmp_path / "new").exists()  # nothing is created by the check
    with pytest.raises(InputError, match="is a file; expected a directory"):
        check_output_dir(parent_file, "--dest")
    # a trailing slash names a directory: never silently the file without it
    with pytest.raises(InputError, match="expected a file name \\(not a directory\\)"):
        check_output(f"{tmp_path}/out.csv/")
    assert not (tmp_path / "out.csv").exists()
    # a name the file system would accept, but not with the temporary file's additions:
    # refused before the work, not when the finished table is written
    limit = os.pathconf(tmp_path, "PC_NAME_MAX")
    with pytest.raises(InputError, match=f"the file name has {limit - 10} bytes; expected at most"):
        check_output(tmp_path / ("x" * (limit - 14) + ".csv"))
    longest = check_output(tmp_path / ("x" * (limit - 29) + ".csv"))
    write_table(longest, pd.DataFrame({"a": [1]}))  # the longest accepted name is writable
    assert longest.read_text() == "a\n1\n" and temporaries(tmp_path) == []


def test_an_unwritable_directory_is_refused():
    """As ``nobody`` (root may write anywhere): a folder it may enter but not write is refused,
    one it may write is not."""
    with shared_folder() as folder:
        locked, open_ = folder / "locked", folder / "open"
        locked.mkdir(mode=0o555)
        open_.mkdir()
        open_.chmod(0o777)
        assert raised_unprivileged(lambda: check_output(open_ / "out.csv")) is None
        assert raised_unprivileged(lambda: check_output(locked / "out.csv")) == (
            "InputError",
            f"--out {locked}/out.csv: directory {locked} is not writable; expected a writable "
            "location",
        )


@pytest.mark.signals
# Python reports the swallowed exception as "ignored in __del__": the situation under test
@pytest.mark.filterwarnings("ignore::pytest.PytestUnraisableExceptionWarning")
def test_a_terminated_swallowed_by_a_finaliser_still_ends_the_write(tmp_path):
    """SIGTERM whose handler runs while the main thread is in a ``__del__``: Python prints and
    drops the ``Terminated``; the temporary is gone all the same, and closing the writer ends
    the command as terminated instead of reporting the missing temporary file."""
    import gc

    from rankbias import outputs

    target = tmp_path / "out.csv"
    target.write_text("previous\n")

    class SignalsOnCollection:
        def __del__(self):
            os.kill(os.getpid(), signal.SIGTERM)
            for _ in range(1000):  # the handler runs here, inside the finaliser
                pass

    with pytest.raises(outputs.Terminated), outputs.handle_signals():
        try:
            with outputs.TableWriter(target) as writer:
                writer.write(pd.DataFrame({"a": [1, 2]}))
                SignalsOnCollection()
                gc.collect()
                writer.write(pd.DataFrame({"a": [3]}))  # the command went on
        finally:
            pending = list(outputs.PENDING_SIGNALS)
            outputs.PENDING_SIGNALS.clear()
    assert pending == [signal.SIGTERM]
    assert target.read_text() == "previous\n"
    assert [p.name for p in tmp_path.iterdir()] == ["out.csv"]
