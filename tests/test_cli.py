"""The ``rankbias`` command as a user meets it: exit status, one-line messages, inputs never
changed, outputs never half-written (killed, interrupted, concurrent or out of space)."""

from __future__ import annotations

import argparse
import contextlib
import errno
import gzip
import hashlib
import os
import re
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path

import numpy as np
import pandas as pd
import pyarrow.parquet as pq
import pytest
from terminal import default_signals, time_to_end
from unprivileged import raised_unprivileged, shared_folder

from rankbias import cli
from rankbias.cli import main
from rankbias.commands import options

REPO = Path(__file__).resolve().parents[1]
SRC = REPO / "src"
ENV = {**os.environ, "PYTHONPATH": str(SRC)}


@pytest.fixture
def files(tmp_path) -> dict[str, Path]:
    paths = {
        "collection": tmp_path / "collection.tsv",
        "terms": tmp_path / "terms.csv",
        "run": tmp_path / "sys.run",
        "background": tmp_path / "bg.run",
    }
    paths["collection"].write_text("d1\tshe said he\nd2\tthe man\nd3\tnothing\n")
    paths["terms"].write_text("she,f\nhe,m\nman,m\n")
    paths["run"].write_text("q1 Q0 d1 1 3 x\nq1 Q0 d2 2 2 x\nq2 Q0 d3 1 1 x\n")
    paths["background"].write_text("q1 Q0 d3 1 3 x\nq1 Q0 d1 2 2 x\nq2 Q0 d3 1 1 x\n")
    return paths


def stats_args(files, out) -> list[str]:
    return ["stats", "--collection", str(files["collection"]), "--terms", str(files["terms"]),
            "--workers", "1", "--out", str(out)]  # fmt: skip


def score_args(files, out) -> list[str]:
    return ["score", "--collection", str(files["collection"]), "--terms", str(files["terms"]),
            "--run", str(files["run"]), "--background", str(files["background"]),
            "--workers", "1", "--out", str(out)]  # fmt: skip


def digests(files) -> dict[str, str]:
    return {k: hashlib.sha256(Path(p).read_bytes()).hexdigest() for k, p in files.items()}


def run_main(args, capsys) -> tuple[int, str]:
    status = main([str(a) for a in args])
    return status, capsys.readouterr().err


def assert_one_line_error(status: int, err: str, fragment: str) -> None:
    assert status == 2, err
    assert "Traceback" not in err
    assert len(err.strip().splitlines()) == 1, err
    assert fragment in err, err


def hidden_temporaries(directory: Path) -> list[str]:
    return sorted(p.name for p in directory.iterdir() if p.name.endswith(".tmp"))


# ---- option values, checked when the command line is parsed ----------------------------------
BAD_OPTIONS = [
    (["--cutoffs", "0"], "argument --cutoffs: cutoff '0' is less than 1"),
    (["--cutoffs", "-5"], "argument --cutoffs: cutoff '-5' is less than 1"),
    (["--cutoffs", "5,,10"], "has an empty item"),
    (["--cutoffs", "1e3"], "'1e3' is not an integer"),
    (["--cutoffs", "1_000"], "'1_000' is not an integer"),
    (["--cutoffs", "5.0"], "'5.0' is not an integer"),
    (["--tau", "-1"], "argument --tau: '-1': expected a finite number ≥ 0"),
    (["--tau", "nan"], "argument --tau: 'nan': expected a finite number ≥ 0"),
    (["--tau", "inf"], "argument --tau: 'inf': expected a finite number ≥ 0"),
    (["--tau", "Infinity"], "argument --tau: 'Infinity': expected a finite number ≥ 0"),
    (["--tau", "NaN"], "argument --tau: 'NaN': expected a finite number ≥ 0"),
    # -1 was "expected a finite number ≥ 0", which 0 is not
    (
        ["--engine", "dask", "--worker-wait", "0"],
        "argument --worker-wait: '0': expected a number of seconds > 0",
    ),
    (
        ["--engine", "dask", "--worker-wait", "-1"],
        "argument --worker-wait: '-1': expected a number of seconds > 0",
    ),
    (
        ["--engine", "dask", "--scheduler", "tcp://127.0.0.1:1", "--connect-timeout", "nan"],
        "argument --connect-timeout: 'nan': expected a number of seconds > 0",
    ),
    (["--tau", "1_0"], "argument --tau: '1_0' is not a number"),
    (["--workers", "0"], "argument --workers: '0' is out of range"),
    (["--workers", "100000"], "argument --workers: '100000' is out of range"),
    # one more than the cores this process may use (read here as the option reads them)
    (
        ["--workers", str(len(os.sched_getaffinity(0)) + 1)],
        f"argument --workers: '{len(os.sched_getaffinity(0)) + 1}' is out of range; expected an "
        f"integer between 1 and {len(os.sched_getaffinity(0))} (the cores of this machine)",
    ),
    (["--workers", "two"], "argument --workers: 'two' is not an integer"),
    (["--background-depth", "0"], "argument --background-depth: '0' is less than 1"),
    # beyond 64-bit arrays: a message, not an OverflowError
    (["--background-depth", "1" + "0" * 30], "argument --background-depth: '1000000000000000"),
    (["--cutoffs", "5," + "1" + "0" * 30], "is too large (more than 2147483647)"),
    (["--cutoffs", "2147483648"], "'2147483648' is too large (more than 2147483647)"),
    (["--workers", "1" + "0" * 30], "argument --workers: '1000000000000000"),
    # non-ASCII digits, which int() and float() would read
    (["--cutoffs", "\u0665"], "argument --cutoffs: '\u0665' is not an integer"),
    (["--tau", "\u0661"], "argument --tau: '\u0661' is not a number"),
    (["--tau", "\uff11"], "argument --tau: '\uff11' is not a number"),
    (["--order", "rank"], "argument --order: invalid choice: 'rank'"),
    (["--metrics", "nfair"], "--metrics: unknown measure 'nfair'"),
    (["--bogus"], "unrecognized arguments: --bogus"),
    # argparse keeps the last of a repeated option; a second value was silently the only one
    (["--workers", "2"], "argument --workers: given twice (1, then 2); expected once"),
    (["--out", "other.csv"], "argument --out: given twice ("),
    (["--tau", "1", "--tau", "0"], "argument --tau: given twice (1.0, then 0.0); expected once"),
]


@pytest.mark.parametrize(("extra", "fragment"), BAD_OPTIONS)
def test_bad_option_values_exit_2_with_one_line(files, tmp_path, capsys, extra, fragment):
    before = digests(files)
    status, err = run_main([*score_args(files, tmp_path / "o.csv"), *extra], capsys)
    assert_one_line_error(status, err, fragment)
    # (an unknown option is found by the top-level parser, which names no command)
    assert err.startswith("rankbias: error: " if "--bogus" in extra else "rankbias score: error: ")
    assert not (tmp_path / "o.csv").exists()
    assert digests(files) == before


def test_an_unreadable_input_is_refused_as_the_command_line_is_read():
    """As ``nobody`` (root reads any file): a file that exists but cannot be read is refused by
    its option's type, before any work, naming it; a readable one beside it passes."""
    with shared_folder() as folder:
        readable = folder / "open.run"
        readable.write_text("q1 Q0 d1 1 1 x\n")
        assert raised_unprivileged(lambda: options.input_file(str(readable))) is None
        path = folder / "secret.run"
        path.write_text("q1 Q0 d1 1 1 x\n")
        path.chmod(0)
        refusal = ("ArgumentTypeError", f"{path}: permission denied; expected a readable file")
        assert raised_unprivileged(lambda: options.input_file(str(path))) == refusal
        assert raised_unprivileged(lambda: options.collection_source(str(path))) == refusal


def test_integer_options_are_read_without_surrounding_spaces():
    """A quoted value with spaces around it (``--workers " 1"``) is the number, as for the
    options that take a real number."""
    assert options.positive_int(" 7 ") == 7 and options.worker_count(" 1") == 1
    assert options.cutoff_list(" 5 , 10") == (5, 10) and options.nonnegative_float(" 2.5 ") == 2.5


def test_every_single_valued_option_of_every_command_is_taken_once():
    # explain --run a.run --run b.run explained b.run alone, exit 0
    parser = cli.build_parser()
    checked = []
    for sub in cli._sub_parsers(parser):
        for action in sub._actions:
            repeatable = isinstance(action, argparse._AppendAction)  # --run, --qid
            if action.option_strings and action.nargs is None and not repeatable:
                assert isinstance(action, cli._StoreOnce), (sub.prog, action.option_strings)
                checked.append(f"{sub.prog} {action.option_strings[0]}")
    assert "rankbias explain --run" in checked and "rankbias compare --seed" in checked
    with pytest.raises(SystemExit) as info:
        parser.parse_args(["compare", "s.csv", "--out", "o.csv", "--seed", "1", "--seed", "2"])
    assert info.value.code == 2


def test_version_names_the_package_version(capsys):
    from rankbias import __version__

    assert main(["--version"]) == 0
    assert capsys.readouterr().out == f"rankbias {__version__}\n"


def test_option_choices_agree_with_the_library():
    from rankbias.metrics.texfair import DISTANCES
    from rankbias.scoring import DEFAULT_CUTOFFS
    from rankbias.text import TOKENIZERS

    assert options.TOKENIZERS == TOKENIZERS
    assert options.DISTANCES == DISTANCES
    assert options.DEFAULT_CUTOFFS == DEFAULT_CUTOFFS


def test_the_help_imports_no_numerical_module():
    code = (
        "import sys; from rankbias.cli import build_parser; build_parser().format_help(); "
        "print(sorted(m for m in ('pandas', 'numpy', 'pyarrow', 'scipy', 'tqdm', "
        "'rankbias.text', 'rankbias.metrics') if m in sys.modules))"
    )
    done = subprocess.run([sys.executable, "-c", code], env=ENV, capture_output=True, text=True)
    assert done.stdout.strip() == "[]", done.stderr


def test_a_repeated_cutoff_is_scored_once(files, tmp_path, capsys):
    out = tmp_path / "o.csv"
    args = score_args(files, out)
    del args[args.index("--background") : args.index("--background") + 2]  # rab_tc reads none
    status, _ = run_main([*args, "--cutoffs", "5,5,2", "--metrics", "rab_tc"], capsys)
    assert status == 0
    frame = pd.read_csv(out)
    assert frame.cutoff.tolist() == [5, 5, 2, 2] and frame.qid.tolist() == ["q1", "q2"] * 2


# ---- paths -----------------------------------------------------------------------------------
def bad_path_cases(files, tmp_path):
    a_dir = tmp_path / "a_dir"
    a_dir.mkdir()
    parent_file = tmp_path / "plain"
    parent_file.write_text("x")
    truncated = tmp_path / "truncated.tsv.gz"
    truncated.write_bytes(gzip.compress(b"d1\tshe said he\n" * 2000, mtime=0)[:-30])
    not_gzip = tmp_path / "plain.tsv.gz"
    not_gzip.write_text("d1\tshe\n")
    latin1_run = tmp_path / "latin1.run"
    latin1_run.write_bytes("q1 Q0 d\xe9 1 3 x\n".encode("latin-1"))
    out = tmp_path / "o.csv"
    return [
        ({"collection": a_dir}, out, "is a directory; expected a file"),
        ({"terms": a_dir}, out, "is a directory; expected a file"),
        ({"run": a_dir}, out, "is a directory; expected a file"),
        # refused as the command line is read, before any work
        (
            {"run": tmp_path / "missing.run"},
            out,
            f"argument --run: {tmp_path}/missing.run: no such file; expected an existing file",
        ),
        (
            {"terms": tmp_path / "missing.csv"},
            out,
            f"argument --terms: {tmp_path}/missing.csv: no such file; expected an existing file",
        ),
        ({"background": a_dir}, out, "is a directory; expected a file"),
        ({"collection": ""}, out, "argument --collection: empty path; expected a file"),
        ({"run": ""}, out, "argument --run: empty path; expected a file"),
        ({}, parent_file / "o.csv", f"{parent_file} is not a directory"),
        ({}, a_dir, "unknown output format"),
        ({}, tmp_path / "o.xlsx", "unknown output format (.xlsx); expected a name ending in"),
        ({}, tmp_path / "o", "unknown output format (no suffix)"),
        ({"collection": truncated}, out, "expected a complete gzip file"),
        ({"collection": not_gzip}, out, "content is not gzip-compressed"),
        ({"run": latin1_run}, out, "expected UTF-8"),
        # a file named with a trailing /: the system refuses it, a Path object drops the /
        ({"collection": f"{files['collection']}/"}, out, "tsv/ ends in /, naming a directory"),
        ({"run": f"{files['run']}/"}, out, "run/ ends in /, naming a directory; expected a file"),
        ({"collection": f"{tmp_path}/missing/"}, out, "missing/ ends in /, naming a directory"),
    ]


@pytest.mark.parametrize("case", range(18))
def test_bad_paths_exit_2_with_one_line(files, tmp_path, capsys, case):
    changes, out, fragment = bad_path_cases(files, tmp_path)[case]
    inputs = {**files, **changes}
    before = digests(files)
    status, err = run_main(score_args(inputs, out), capsys)
    assert_one_line_error(status, err, fragment)
    assert digests(files) == before
    assert hidden_temporaries(tmp_path) == []


def test_out_at_any_input_is_refused_and_no_input_changes(files, tmp_path, capsys):
    before = digests(files)
    link = tmp_path / "link.csv"
    link.symlink_to(files["run"])
    hard = tmp_path / "hard.tsv"
    os.link(files["collection"], hard)
    targets = [*files.values(), link, hard]
    for target in targets:
        for args in (score_args(files, target), stats_args(files, target)):
            if args[0] == "stats" and target in (files["run"], files["background"], link):
                continue  # not inputs of stats
            status, err = run_main(args, capsys)
            assert_one_line_error(status, err, "is the input file")
    assert digests(files) == before
    # and the successful commands leave every input as it was
    for out in ("s.csv", "s.parquet", "s.tsv.gz"):
        assert run_main(stats_args(files, tmp_path / out), capsys)[0] == 0
        assert run_main(score_args(files, tmp_path / f"score_{out}"), capsys)[0] == 0
    assert digests(files) == before


def test_score_parquet_is_parquet(files, tmp_path, capsys):
    out = tmp_path / "scores.parquet"
    assert run_main(score_args(files, out), capsys)[0] == 0
    raw = out.read_bytes()
    assert raw[:4] == b"PAR1" and raw[-4:] == b"PAR1"
    frame = pq.read_table(out).to_pandas()
    assert list(frame.columns) == ["run", "qid", "metric", "cutoff", "value"]
    assert run_main(score_args(files, tmp_path / "scores.csv"), capsys)[0] == 0
    text = pd.read_csv(tmp_path / "scores.csv", dtype={"qid": str})
    pd.testing.assert_frame_equal(frame, text)


# ---- failures while writing ------------------------------------------------------------------
def test_a_full_disk_exits_2_and_keeps_the_previous_output(files, tmp_path, capsys, monkeypatch):
    out = tmp_path / "o.csv"
    assert run_main(stats_args(files, out), capsys)[0] == 0
    previous = out.read_bytes()

    def no_space(fd):
        raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))

    monkeypatch.setattr("rankbias.outputs.os.fsync", no_space)
    for args in (stats_args(files, out), score_args(files, out)):
        status, err = run_main(args, capsys)
        assert_one_line_error(status, err, "No space left on device: no space left for the output")
        assert out.read_bytes() == previous
        assert hidden_temporaries(tmp_path) == []


def test_a_file_too_large_names_the_output_and_keeps_the_previous_one(files, tmp_path, big):
    """A write the system refuses (here the process's file-size limit: EFBIG) is reported
    with the output's own name, never the hidden temporary one, which is removed."""
    import resource

    out = tmp_path / "out" / "stats.csv"
    out.parent.mkdir()
    # first without the limit: the compiled scanner is built and cached (a compiler writes
    # large files), and the output written
    subprocess.run(command(*stats_args(files, out)), env=ENV, check=True, capture_output=True)
    previous = out.read_bytes()

    def small_files() -> None:
        default_signals()
        resource.setrlimit(resource.RLIMIT_FSIZE, (200_000, 200_000))

    done = subprocess.run(
        command("stats", "--collection", big, "--terms", files["terms"], "--workers", "1",
                "--out", out),
        env=ENV, capture_output=True, text=True, timeout=300, preexec_fn=small_files,
    )  # fmt: skip
    assert done.returncode == 2, done.stderr
    assert done.stderr.strip() == f"rankbias stats: error: {out}: File too large"
    assert out.read_bytes() == previous and hidden_temporaries(out.parent) == []


def test_an_internal_error_is_one_line_and_debug_shows_the_traceback(
    files, tmp_path, capsys, monkeypatch
):
    def broken(args):
        raise TypeError("an example bug")

    monkeypatch.setattr("rankbias.commands.stats.run_stats", broken)
    monkeypatch.setattr(cli, "COMMAND_MODULES", ("rankbias.commands.stats",))
    args = stats_args(files, tmp_path / "o.csv")
    status, err = run_main(args, capsys)
    assert status == 1 and "Traceback" not in err and len(err.strip().splitlines()) == 1
    assert "internal error: TypeError: an example bug" in err and "--debug" in err
    with pytest.raises(TypeError):
        main([*args, "--debug"])


# ---- processes: killed, interrupted, concurrent ----------------------------------------------
def generated_collection(path: Path, n_docs: int, seed: int) -> Path:
    rng = np.random.default_rng(seed)
    words = np.array("she he her him the river bank court king queen man of and to in".split())
    picks = rng.integers(0, len(words), size=(n_docs, 20))
    path.write_text("".join(f"d{i}\t{' '.join(words[row])}\n" for i, row in enumerate(picks)))
    return path


def command(*args) -> list[str]:
    """The command line of a ``rankbias`` process, started as the installed script starts it."""
    script = "import sys; from rankbias.cli import main; sys.exit(main())"
    return [sys.executable, "-c", script, *map(str, args)]


def wait_for_temporary(directory: Path, process, timeout: float = 60) -> list[str]:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline and process.poll() is None:
        found = hidden_temporaries(directory)
        if found:
            return found
        time.sleep(0.01)
    raise AssertionError("the command never started writing its output")


BACKGROUND = "RANKBIAS_TEST_IN_BACKGROUND_JOB"


@pytest.mark.skipif(bool(os.environ.get(BACKGROUND)), reason="already in a background job")
def test_the_signal_tests_pass_in_a_background_job(tmp_path):
    """The signal tests started as `make test &` starts them: from a non-interactive shell's
    background job, where SIGINT is ignored on entry."""
    code = "import signal; print(signal.getsignal(signal.SIGINT) == signal.SIG_IGN)"
    probe = f'{sys.executable} -c "{code}" & wait'
    seen = subprocess.run(["bash", "-c", probe], capture_output=True, text=True, timeout=60)
    assert seen.stdout.strip() == "True"  # the context this test is about: SIGINT ignored
    here = Path(__file__).parent
    files = [here / name for name in SIGNAL_TEST_FILES]
    tests = (
        f"{sys.executable} -m pytest -q -p no:cacheprovider -m signals {' '.join(map(str, files))}"
    )
    done = subprocess.run(
        ["bash", "-c", f"{tests} & wait $!"], cwd=tmp_path, env={**ENV, BACKGROUND: "1"},
        capture_output=True, text=True, timeout=900,
    )  # fmt: skip
    failures = done.stdout.find("= FAILURES =")  # the failure itself, not the warnings after it
    shown = done.stdout[failures : failures + 6000] if failures >= 0 else done.stdout[-6000:]
    assert done.returncode == 0, shown + done.stdout[-500:]
    passed = re.search(r"(\d+) passed", done.stdout)
    assert passed and int(passed.group(1)) >= 20, done.stdout[-3000:]  # the mark selects them


#: The files of the tests marked ``signals`` (the test below checks this list is whole).
SIGNAL_TEST_FILES = [
    "test_cli.py",
    "test_outputs.py",
    "test_collection.py",
    "data/test_catalog_fetch.py",
]


def test_every_test_that_sends_a_signal_is_marked_and_listed():
    """A test that sends a signal (or raises what a signal raises) is marked ``signals``, and
    its file is in :data:`SIGNAL_TEST_FILES`, so that the background job above runs it."""
    import ast

    here, words = Path(__file__).parent, ("SIGINT", "SIGTERM", "SIGHUP", "send_signal", "os.kill")
    these = {
        "test_the_signal_tests_pass_in_a_background_job",
        "test_every_test_that_sends_a_signal_is_marked_and_listed",
    }
    unmarked, files = [], set()
    for path in here.rglob("test_*.py"):
        source = path.read_text(encoding="utf-8")
        for node in ast.parse(source).body:
            if not isinstance(node, ast.FunctionDef) or node.name in these:
                continue
            marked = any("mark.signals" in ast.unparse(d) for d in node.decorator_list)
            files |= {str(path.relative_to(here))} if marked else set()
            sends = any(word in ast.get_source_segment(source, node) for word in words)
            if sends and not marked and node.name.startswith("test_"):
                unmarked.append(f"{path.name}::{node.name}")
    assert unmarked == [] and files == set(SIGNAL_TEST_FILES)


@pytest.mark.signals
@pytest.mark.parametrize("how", ["SIGTERM", "SIGINT"])
@pytest.mark.parametrize("collection", [True, False])
def test_the_first_signal_ends_a_command_waiting_on_a_fifo(files, tmp_path, how, collection):
    """``--run`` is a FIFO nobody writes to: the command waits on it (on a reading thread
    while the collection is counted, or on its own thread) and the first signal ends it."""
    fifo = tmp_path / "never.run"
    os.mkfifo(fifo)
    out = tmp_path / "o.csv"
    args = ["score", "--run", fifo, "--out", out]
    if collection:
        args += ["--collection", files["collection"], "--terms", files["terms"]]
    else:
        args += ["--metrics", "crbo", "--counterfactual", files["run"]]
    child = subprocess.Popen(
        command(*args), env=ENV, stderr=subprocess.PIPE, text=True, preexec_fn=default_signals
    )
    time.sleep(1.5)  # started, and waiting for a writer
    assert child.poll() is None
    err, took = time_to_end(child, getattr(signal, how))
    assert took < 1, f"{took:.2f} s"
    assert child.returncode == {"SIGTERM": 143, "SIGINT": 130}[how], err
    assert "no output was written" in err and "Traceback" not in err
    assert not out.exists() and hidden_temporaries(tmp_path) == []


@pytest.mark.signals
# Python reports the swallowed exception as "ignored in __del__": the situation under test
@pytest.mark.filterwarnings("ignore::pytest.PytestUnraisableExceptionWarning")
@pytest.mark.parametrize("how", ["SIGTERM", "SIGINT"])
def test_a_signal_whose_exception_was_swallowed_still_ends_a_wait(how):
    """A signal's exception raised where Python swallows it (here a finaliser; seen inside an
    import) is recorded, and the wait for a read that never ends stops on it within a
    fraction of a second, as terminated or interrupted; without the record it would wait for
    ever."""
    from concurrent.futures import Future

    from rankbias import outputs
    from rankbias.commands.score import finished

    number = getattr(signal, how)

    class SignalsOnCollection:
        def __del__(self):
            os.kill(os.getpid(), number)
            for _ in range(10_000):  # the handler runs here, inside the finaliser
                pass

    previous = signal.signal(signal.SIGINT, signal.default_int_handler)
    try:
        with outputs.handle_signals():
            try:
                SignalsOnCollection()  # collected at once: the exception goes nowhere
                started = time.monotonic()
                never = Future()  # as good as never: done after 5 s, so that a fault fails
                threading.Timer(5, never.set_result, [None]).start()
                with pytest.raises(outputs.Terminated) as caught:
                    finished(never)
                waited = time.monotonic() - started
            finally:
                pending = list(outputs.PENDING_SIGNALS)
                outputs.PENDING_SIGNALS.clear()
    finally:
        signal.signal(signal.SIGINT, previous)
    assert pending == [number] and caught.value.signum == number and waited < 1
    assert str(caught.value) == {"SIGTERM": "terminated by SIGTERM", "SIGINT": "interrupted"}[how]


@pytest.fixture
def big(tmp_path) -> Path:
    return generated_collection(tmp_path / "big.tsv", 150_000, seed=1)


@contextlib.contextmanager
def fed_in_part(source: Path, fifo: Path):
    """``fifo`` fed with the first half of ``source`` by a thread that then holds it open
    without writing, until the block ends: a command reading it is inside its work for as
    long as the test wants, however loaded the machine (a file of any size can be counted to
    its end before a signal sent after a fixed delay arrives)."""
    os.mkfifo(fifo)
    data = source.read_bytes()
    release = threading.Event()

    def feed() -> None:
        with contextlib.suppress(BrokenPipeError), fifo.open("wb") as handle:
            handle.write(data[: len(data) // 2])
            handle.flush()
            release.wait(120)

    writer = threading.Thread(target=feed, daemon=True)
    writer.start()
    try:
        yield
    finally:
        release.set()
        writer.join(10)  # a daemon: a command that never opened the FIFO leaves it blocked


@pytest.mark.signals
@pytest.mark.parametrize("how", ["SIGKILL", "SIGTERM", "SIGINT"])
def test_a_killed_stats_leaves_the_previous_output(files, tmp_path, big, how):
    out_dir = tmp_path / "out"
    out_dir.mkdir()
    out = out_dir / "stats.csv"
    small = command(*stats_args(files, out))
    subprocess.run(small, env=ENV, check=True, capture_output=True)
    previous = out.read_bytes()
    before = hashlib.sha256(big.read_bytes()).hexdigest()
    collection = tmp_path / "big.fifo"
    with fed_in_part(big, collection):
        child = subprocess.Popen(
            command("stats", "--collection", collection, "--terms", files["terms"],
                    "--workers", "1", "--out", out),
            env=ENV, stderr=subprocess.PIPE, text=True, preexec_fn=default_signals,
        )  # fmt: skip
        (temporary,) = wait_for_temporary(out_dir, child)
        assert temporary.startswith(f".stats.csv.{child.pid}.")
        time.sleep(0.05)  # inside the work: half the collection is given, the rest withheld
        assert child.poll() is None
        child.send_signal(getattr(signal, how))
        _, err = child.communicate(timeout=60)
    assert out.read_bytes() == previous  # the previous complete output, untouched
    assert hashlib.sha256(big.read_bytes()).hexdigest() == before
    if how == "SIGKILL":
        assert child.returncode == -signal.SIGKILL
        # nothing can clean up after SIGKILL: the hidden temporary (named after the dead
        # process) is left, never under the target's name, and the next write removes it
        assert hidden_temporaries(out_dir) == [temporary]
        subprocess.run(small, env=ENV, check=True, capture_output=True)
        assert hidden_temporaries(out_dir) == []
    else:
        expected = {"SIGTERM": 143, "SIGINT": 130}[how]
        assert child.returncode == expected, err
        assert "Traceback" not in err and "no output was written" in err
        assert hidden_temporaries(out_dir) == []
    assert sorted(p.name for p in out_dir.iterdir()) == ["stats.csv"]


def processes_running(marker: str) -> list[int]:
    """Live processes whose command line contains ``marker`` (forked workers inherit the
    command line of their parent), from /proc."""
    found = []
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit() or int(entry.name) == os.getpid():
            continue
        try:
            cmdline = (entry / "cmdline").read_bytes().replace(b"\0", b" ").decode(errors="replace")
            state = (entry / "stat").read_text().rsplit(")", 1)[1].split()[0]
        except OSError:  # the process ended meanwhile
            continue
        if marker in cmdline and state != "Z":  # a zombie has ended already
            found.append(int(entry.name))
    return found


def children_of(pid: int) -> list[int]:
    """Live, non-zombie processes whose parent is ``pid``, from /proc."""
    found = []
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            fields = (entry / "stat").read_text().rsplit(")", 1)[1].split()
        except OSError:  # the process ended meanwhile
            continue
        if int(fields[1]) == pid and fields[0] != "Z":
            found.append(int(entry.name))
    return found


def proc_file(pid: int, name: str) -> bytes:
    """``/proc/PID/NAME``; empty once the process has ended (it may end between a listing of
    /proc and the read: a worker process of a cluster that is shutting down)."""
    try:
        return Path(f"/proc/{pid}/{name}").read_bytes()
    except OSError:
        return b""


def threads_of(pid: int) -> int:
    try:
        return len(list(Path(f"/proc/{pid}/task").iterdir()))
    except OSError:
        return 0


needs_two_cores = pytest.mark.skipif(
    not Path("/proc").is_dir() or options.cpu_count() < 2, reason="needs Linux and 2 cores"
)


@needs_two_cores
@pytest.mark.parametrize("command_name", ["stats", "score"])
def test_local_workers_are_threads_of_the_command_and_end_with_it(
    files, tmp_path, big, command_name
):
    """The local engine counts on threads of the command itself: nothing it starts can
    outlive a ``kill -9`` of it."""
    out = tmp_path / f"{command_name}-kill-9.csv"  # marks the command line
    args = [command_name, "--collection", big, "--terms", files["terms"], "--workers", "2"]
    if command_name == "score":
        args += ["--run", files["run"]]
    # no pipes: a surviving worker would hold them open, and reading them would never end
    child = subprocess.Popen(
        command(*args, "--out", out), env=ENV, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL
    )
    deadline = time.monotonic() + 60
    threads = 0
    while time.monotonic() < deadline and child.poll() is None and threads < 3:
        threads = threads_of(child.pid)  # the main thread and two scanning threads
        time.sleep(0.005)
    assert threads >= 3, "the command never started its worker threads"
    assert children_of(child.pid) == []  # no worker process
    child.kill()  # SIGKILL: no clean-up code of the parent runs
    child.wait(timeout=60)
    assert processes_running(str(out)) == []
    assert not out.exists()


def start_dask_stats(files, big, out, stderr=subprocess.DEVNULL, wanted=2):
    """``stats --engine dask --workers 2`` and the pids of its worker processes, once
    ``wanted`` of them have started."""
    args = ["stats", "--collection", big, "--terms", files["terms"], "--engine", "dask"]
    child = subprocess.Popen(
        command(*args, "--workers", "2", "--out", out), env=ENV, stdout=subprocess.DEVNULL,
        stderr=stderr, text=True, preexec_fn=default_signals,
    )  # fmt: skip
    deadline = time.monotonic() + 120
    workers: list[int] = []
    while time.monotonic() < deadline and child.poll() is None and len(workers) < wanted:
        workers = [
            pid for pid in children_of(child.pid)
            if b"dask worker" in proc_file(pid, "cmdline")
        ]  # fmt: skip
        time.sleep(0.01)
    return child, workers


def wait_until_ended(pids: list[int], seconds: float) -> list[int]:
    """Those of ``pids`` still running (not ended, not a zombie) after at most ``seconds``."""
    deadline = time.monotonic() + seconds
    alive = pids
    while time.monotonic() < deadline and alive:
        states = {pid: proc_file(pid, "stat").rsplit(b")", 1)[-1][:3] for pid in alive}
        alive = [pid for pid, state in states.items() if state and b"Z" not in state]
        time.sleep(0.05)
    return alive


@pytest.fixture
def bigger(tmp_path, big) -> Path:
    """Long enough (about 4 s of dask work on 2 cores) to act on the workers mid-run."""
    path = tmp_path / "bigger.tsv"
    with path.open("w") as out:
        for copy in range(6):
            with big.open() as source:
                out.writelines(f"c{copy}{line}" for line in source)
    return path


@pytest.mark.signals
@needs_two_cores
def test_dask_workers_end_with_the_command_after_kill_9(files, tmp_path, bigger):
    pytest.importorskip("distributed")
    out = tmp_path / "dask-kill-9.csv"
    child, workers = start_dask_stats(files, bigger, out)
    assert len(workers) == 2, "the command never started its dask workers"
    child.kill()
    child.wait(timeout=60)
    alive = wait_until_ended(workers, 20)
    for pid in alive:  # do not leave them behind even when the test fails
        with contextlib.suppress(ProcessLookupError):
            os.kill(pid, signal.SIGKILL)
    assert alive == []
    assert not out.exists()


@pytest.mark.signals
@needs_two_cores
@pytest.mark.parametrize("how", ["SIGTERM", "SIGINT"])
@pytest.mark.parametrize("when", ["starting", "counting"])
def test_the_first_signal_ends_a_dask_command_at_once(files, tmp_path, bigger, how, when):
    """A Dask cluster interrupted at an arbitrary point of its start or work takes seconds to
    close, or cannot close without distributed's exit hook printing a traceback: the command
    ends at once instead (within a second of its own time, which ``time_to_end`` tells from the
    time a loaded machine's other processes hold the CPUs), its workers killed, its previous
    output untouched."""
    pytest.importorskip("distributed")
    out = tmp_path / "o.csv"
    out.write_text("previous\n")
    wanted = 1 if when == "starting" else 2
    child, workers = start_dask_stats(files, bigger, out, subprocess.PIPE, wanted)
    assert len(workers) >= wanted, "the command never started its dask workers"
    if when == "counting":
        time.sleep(0.5)
    err, took = time_to_end(child, getattr(signal, how))
    assert child.returncode == {"SIGTERM": 143, "SIGINT": 130}[how], err
    what = "interrupted" if how == "SIGINT" else "terminated by SIGTERM"
    assert err == f"rankbias stats: {what}; no output was written\n"
    assert took < 1, f"{took:.2f} s"
    assert out.read_text() == "previous\n" and hidden_temporaries(tmp_path) == []
    assert wait_until_ended(workers, 10) == []


def local_stats(files, collection, tmp_path) -> Path:
    """The local engine's ``stats`` of ``collection``: the table the Dask engine must give."""
    local = tmp_path / "local.csv"
    subprocess.run(command("stats", "--collection", collection, "--terms", files["terms"],
                           "--workers", "2", "--out", local),
                   env=ENV, check=True, capture_output=True)  # fmt: skip
    return local


@pytest.mark.signals
@needs_two_cores
def test_a_dask_worker_killed_from_outside_is_replaced_and_nothing_is_lost(files, tmp_path, bigger):
    pytest.importorskip("distributed")
    local = local_stats(files, bigger, tmp_path)
    out = tmp_path / "worker-killed.csv"
    out.write_text("previous\n")
    child, workers = start_dask_stats(files, bigger, out, stderr=subprocess.PIPE)
    assert len(workers) == 2, "the command never started its dask workers"
    time.sleep(0.5)  # inside the counting
    os.kill(workers[0], signal.SIGKILL)  # as the out-of-memory killer does
    _, err = child.communicate(timeout=300)
    assert child.returncode == 0, err
    assert "Traceback" not in err
    assert out.read_bytes() == local.read_bytes()  # every document, counted once


@pytest.mark.signals
@needs_two_cores
def test_a_dask_worker_that_stops_answering_is_replaced_within_a_minute(files, tmp_path, bigger):
    """A worker stopped (SIGSTOP: hung, swapped out) keeps its process and its tasks; Dask
    drops such a worker after its heartbeat's time-to-live, 5 minutes by default, which the
    command's own cluster lowers to 15 s.  The command then finishes on the other worker and
    the replaced one, with every document counted once."""
    pytest.importorskip("distributed")
    local = local_stats(files, bigger, tmp_path)
    out = tmp_path / "worker-stopped.csv"
    child, workers = start_dask_stats(files, bigger, out, stderr=subprocess.PIPE)
    assert len(workers) == 2, "the command never started its dask workers"
    time.sleep(0.5)  # inside the counting
    os.kill(workers[0], signal.SIGSTOP)
    stopped = time.monotonic()
    try:
        _, err = child.communicate(timeout=120)
    finally:
        with contextlib.suppress(ProcessLookupError):
            os.kill(workers[0], signal.SIGKILL)
    assert child.returncode == 0, err
    assert time.monotonic() - stopped < 90
    assert out.read_bytes() == local.read_bytes()


def test_two_concurrent_stats_leave_exactly_one_complete_output(files, tmp_path):
    sources = [generated_collection(tmp_path / f"c{i}.tsv", 60_000, seed=i) for i in (2, 3)]
    alone = []
    for i, source in enumerate(sources):
        target = tmp_path / f"alone{i}.csv"
        subprocess.run(command("stats", "--collection", source, "--terms", files["terms"],
                               "--workers", "1", "--out", target),
                       env=ENV, check=True, capture_output=True)  # fmt: skip
        alone.append(target.read_bytes())
    assert alone[0] != alone[1]
    out = tmp_path / "shared" / "stats.csv"
    children = [
        subprocess.Popen(
            command(
                "stats",
                "--collection",
                source,
                "--terms",
                files["terms"],
                "--workers",
                "1",
                "--out",
                out,
            ),
            env=ENV,
            stderr=subprocess.PIPE,
        )  # fmt: skip
        for source in sources
    ]
    for child in children:
        _, err = child.communicate(timeout=300)
        assert child.returncode == 0, err
    assert out.read_bytes() in alone
    assert sorted(p.name for p in out.parent.iterdir()) == ["stats.csv"]


def test_progress_only_on_a_terminal_and_never_with_quiet(files, tmp_path, big):
    import pty

    def stderr_of(*extra) -> str:
        import fcntl
        import struct
        import termios

        leader, follower = pty.openpty()
        # a terminal of 24 × 100 characters (a fresh pseudo-terminal has width 0)
        fcntl.ioctl(follower, termios.TIOCSWINSZ, struct.pack("HHHH", 24, 100, 0, 0))
        child = subprocess.Popen(
            command(*stats_args({**files, "collection": big}, tmp_path / "p.csv"), *extra),
            env=ENV, stderr=follower, stdout=subprocess.DEVNULL,
        )  # fmt: skip
        os.close(follower)
        chunks = []
        while True:
            try:
                chunk = os.read(leader, 65536)
            except OSError:  # the terminal closed
                break
            if not chunk:
                break
            chunks.append(chunk)
        child.wait(timeout=120)
        os.close(leader)
        return b"".join(chunks).decode("utf-8", "replace")

    assert "doc/s" in stderr_of()  # tqdm's rate on a terminal
    assert "doc/s" not in stderr_of("--quiet")
    piped = subprocess.run(command(*stats_args({**files, "collection": big}, tmp_path / "p.csv")),
                           env=ENV, capture_output=True, text=True)  # fmt: skip
    assert piped.returncode == 0 and "doc/s" not in piped.stderr
    assert piped.stderr.strip() == f"150000 documents -> {tmp_path / 'p.csv'}"


def raised_errors():
    import zlib

    from distributed.scheduler import KilledWorker

    from rankbias.errors import InputError
    from rankbias.outputs import Terminated

    return [
        (InputError("c.tsv:3: found x; expected y"), 2, "error: c.tsv:3: found x; expected y"),
        (PermissionError(errno.EACCES, "Permission denied", "r.run"), 2,
         "error: r.run: Permission denied; expected a readable input"),
        (IsADirectoryError(errno.EISDIR, "Is a directory", "runs"), 2,
         "error: runs: is a directory; expected a file"),
        (OSError(errno.ENOSPC, "No space left on device"), 2, "no space left for the output"),
        (UnicodeDecodeError("utf-8", b"ab\xff", 2, 3, "invalid start byte"), 2,
         "byte b'\\xff' at byte offset 2 of a block of input is not valid utf-8"),
        (gzip.BadGzipFile("Not a gzipped file (b'd1')"), 2, "not a valid gzip file"),
        (EOFError("Compressed file ended before the end-of-stream marker was reached"), 2,
         "a compressed file ends early"),
        (zlib.error("Error -3 while decompressing data"), 2, "damaged compressed data"),
        (MemoryError(), 2, "out of memory"),
        (KilledWorker("count-3", None, 3), 2,
         "every dask worker that ran task 'count-3' ended abruptly (killed by a signal"),
        (KeyboardInterrupt(), 130, "interrupted; no output was written"),
        (Terminated(signal.SIGTERM), 143, "terminated by SIGTERM; no output was written"),
        (Terminated(signal.SIGHUP), 129, "terminated by SIGHUP; no output was written"),
    ]  # fmt: skip


def test_a_file_name_with_a_line_break_keeps_the_message_on_one_line(files, tmp_path, capsys):
    bad = tmp_path / "bad\nname.run"
    bad.write_text("q1 Q0 d1 1 x t\n")
    status, err = run_main(score_args({**files, "run": bad}, tmp_path / "o.csv"), capsys)
    assert_one_line_error(status, err, "bad\\nname.run:1: score 'x' is not a number")
    status, err = run_main(
        score_args({**files, "run": tmp_path / "absent\r.run"}, tmp_path / "o.csv"), capsys
    )
    assert_one_line_error(status, err, "absent\\r.run: no such file")


@pytest.mark.parametrize("case", range(13))
def test_each_error_class_is_one_line_with_its_exit_status(
    files, tmp_path, capsys, monkeypatch, case
):
    error, expected_status, fragment = raised_errors()[case]

    def failing(args):
        raise error

    monkeypatch.setattr("rankbias.commands.stats.run_stats", failing)
    monkeypatch.setattr(cli, "COMMAND_MODULES", ("rankbias.commands.stats",))
    status, err = run_main(stats_args(files, tmp_path / "o.csv"), capsys)
    assert status == expected_status
    assert err.startswith("rankbias stats: ") and fragment in err, err
    assert "Traceback" not in err and len(err.strip().splitlines()) == 1


class OfflineCorpus:
    """An ir_datasets corpus whose download fails, as it does without network."""

    def has_docs(self):
        return True

    def docs_count(self):
        raise ConnectionError("Failed to resolve 'example.org'")

    def docs_iter(self):
        raise ConnectionError("Max retries exceeded: Failed to resolve 'example.org'")
        yield


class OfflineIrDatasets:
    @staticmethod
    def load(dataset_id):
        return OfflineCorpus()


@pytest.mark.parametrize("command_name", ["stats", "score"])
def test_an_offline_ir_datasets_id_is_one_line(files, tmp_path, capsys, monkeypatch, command_name):
    monkeypatch.setitem(sys.modules, "ir_datasets", OfflineIrDatasets)
    files = {**files, "collection": "antique"}
    make = stats_args if command_name == "stats" else score_args
    status, err = run_main(make(files, tmp_path / "o.csv"), capsys)
    assert_one_line_error(
        status, err, "ir_datasets id 'antique': its documents could not be read or downloaded"
    )
    assert "Failed to resolve 'example.org'" in err
    assert not (tmp_path / "o.csv").exists()


@pytest.mark.parametrize("change", ["truncated", "removed", "appended to after its last block"])
@pytest.mark.parametrize("command_name", ["stats", "score"])
def test_a_collection_changed_while_it_is_read_is_refused(
    files, tmp_path, big, capsys, monkeypatch, command_name, change
):
    """The local engine records the collection's identity when it starts and checks it after
    every block and at the end: a file truncated or removed while it is read, or grown after
    its last block was read, gives an error and no output, never a partial table with exit 0;
    it stops at the block it noticed the change after, without reading the rest."""
    from rankbias import collection

    original = collection.iter_blocks
    pulled = []
    assert big.stat().st_size > 2 * collection.DEFAULT_BLOCK_BYTES  # three blocks or more

    def changing(blocks):
        for index, block in enumerate(blocks):
            pulled.append(index)
            if index == 0 and change == "truncated":
                os.truncate(big, big.stat().st_size // 2)
            elif index == 0 and change == "removed":
                os.unlink(big)
            yield block
        if change.startswith("appended"):
            with big.open("a") as more:
                more.write("late\tshe came late\n")

    def read_changing(*args, **kwargs):
        matcher, blocks = original(*args, **kwargs)
        return matcher, changing(blocks)

    monkeypatch.setattr(collection, "iter_blocks", read_changing)
    out = tmp_path / "o.csv"
    args = [command_name, "--collection", big, "--terms", files["terms"], "--workers", "1"]
    if command_name == "score":
        args += ["--run", files["run"], "--missing", "neutral"]
    status, err = run_main([*args, "--out", out], capsys)
    assert status == 2 and f"{big}: the file changed while it was read (removed, replaced" in err
    assert not out.exists() and hidden_temporaries(tmp_path) == []
    if change.startswith("appended"):
        assert len(pulled) > 2  # every block read before the change
    else:
        assert pulled == [0]  # the first block given, the change seen before the second was read


def test_a_bad_run_file_stops_the_counting_of_the_collection(
    files, tmp_path, big, capsys, monkeypatch
):
    """``score`` reads its run files on a thread while the collection is counted: a bad run
    file is reported as if it had been read first, and stops the counting at the next block,
    not at the end of the collection."""
    from rankbias import collection

    original, pulled = collection.iter_blocks, []

    def after_the_runs(blocks):
        for index, block in enumerate(blocks):
            pulled.append(index)
            deadline = time.monotonic() + 30  # the run file's reading has failed, and ended
            while time.monotonic() < deadline and any(
                thread.name == "rankbias-runs" for thread in threading.enumerate()
            ):
                time.sleep(0.01)
            yield block

    def read_after_the_runs(*args, **kwargs):
        matcher, blocks = original(*args, **kwargs)
        return matcher, after_the_runs(blocks)

    monkeypatch.setattr(collection, "iter_blocks", read_after_the_runs)
    assert big.stat().st_size > 2 * collection.DEFAULT_BLOCK_BYTES  # three blocks or more
    bad = tmp_path / "bad.run"
    bad.write_text("q1 Q0 d1 1 abc x\n")
    args = ["score", "--collection", big, "--terms", files["terms"], "--workers", "1"]
    status, err = run_main([*args, "--run", bad, "--out", tmp_path / "o.csv"], capsys)
    assert_one_line_error(status, err, "bad.run:1: score 'abc'")
    assert pulled == [0]  # the first block counted, then the run file's error


@pytest.mark.parametrize("engine", ["local", "dask"])
def test_a_line_longer_than_the_limit_is_refused(files, tmp_path, capsys, engine):
    """A line without a line end for longer than --max-line-bytes is an error naming the
    file, on both engines (the Dask engine on a cluster of its own)."""
    if engine == "dask":
        pytest.importorskip("distributed")
    path = tmp_path / "long.tsv"
    path.write_bytes(b"d1\tshe said\n" + b"d2\t" + b"x" * 3_000_000 + b"\nd3\the\n")
    out = tmp_path / "o.csv"
    args = ["stats", "--collection", path, "--terms", files["terms"], "--engine", engine]
    args += ["--workers", "1", "--max-line-bytes", "1000000", "--out", out]
    status, err = run_main(args, capsys)
    assert status == 2 and "runs for more than 1000000 bytes without a line end" in err
    assert "long.tsv" in err and not out.exists()
    # the default limit (64 MiB) reads the same file
    assert run_main(args[:-4] + ["--out", out], capsys)[0] == 0


def test_the_default_line_limit_is_64_mib(files, tmp_path, capsys):
    """Without --max-line-bytes a collection's line may run to 64 MiB (a passage of 17 MiB is
    counted), and one longer is refused naming the limit."""
    out = tmp_path / "o.csv"
    path = tmp_path / "long.tsv"
    path.write_bytes(b"d1\t" + b"she " * (17 << 18) + b"\nd2\the\n")  # 17 MiB of text
    args = ["stats", "--collection", path, "--terms", files["terms"], "--workers", "1"]
    assert run_main([*args, "--out", out], capsys)[0] == 0
    assert pd.read_csv(out)["f"].tolist() == [17 << 18, 0]
    path.write_bytes(b"d1\t" + b"x" * (1 << 26) + b"\n")
    status, err = run_main([*args, "--out", tmp_path / "p.csv"], capsys)
    assert status == 2 and "runs for more than 67108864 bytes without a line end" in err


def test_an_endless_input_is_refused_within_the_limit(files, tmp_path):
    """/dev/zero never ends a line: the command stops at the limit instead of reading it
    into memory until it is killed."""
    out = tmp_path / "o.csv"
    done = subprocess.run(
        command("stats", "--collection", "/dev/zero", "--terms", files["terms"],
                "--max-line-bytes", "5000000", "--out", out),
        env=ENV, capture_output=True, text=True, timeout=120,
    )  # fmt: skip
    assert done.returncode == 2, done.stderr
    assert "/dev/zero: the line that starts at byte 0 runs for more than 5000000" in done.stderr
    assert not out.exists()


def test_the_installed_command_ends_without_teardown_but_loses_nothing(tmp_path, capsys):
    """The console script (``cli.entry``) ends with ``os._exit``: its standard output read
    through a pipe is whole, a written table is complete, and a refused input keeps status 2
    and its one-line message."""
    script = Path(sys.executable).with_name("rankbias")
    assert cli.main(["metrics"]) == 0
    listing = capsys.readouterr().out
    done = subprocess.run([script, "metrics"], capture_output=True, text=True, timeout=120)
    assert (done.returncode, done.stdout, done.stderr) == (0, listing, "")
    run = tmp_path / "a.run"
    run.write_text("q1 Q0 d1 1 2.0 r\nq1 Q0 d2 2 1.0 r\n")
    out = tmp_path / "o.csv"
    argv = ["score", "--run", str(run), "--metrics", "rbo", "--counterfactual", str(run)]
    done = subprocess.run([script, *argv, "--out", str(out)], capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
    # RBO of a list with itself at cut-offs 5, 10, 20: a list of 2 is extrapolated to 1
    assert out.read_text() == "run,qid,metric,cutoff,value\n" + "".join(
        f"a,q1,rbo,{k},1.0\n" for k in (5, 10, 20)
    )
    bad = tmp_path / "bad.run"
    bad.write_text("q1 Q0 d1 1 1e400 r\n")
    argv = ["score", "--run", str(bad), "--metrics", "rbo", "--counterfactual", str(bad)]
    done = subprocess.run([script, *argv, "--out", str(out)], capture_output=True, text=True)
    assert (done.returncode, done.stdout) == (2, "")
    assert done.stderr == (
        f"rankbias score: error: {bad}:1: score '1e400' overflows a 64-bit float; expected a "
        "finite number\n"
    )
