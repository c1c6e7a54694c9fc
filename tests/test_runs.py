"""Tests of rankbias.runs: TREC run and qrels I/O, ordering, validation."""

from __future__ import annotations

import gzip
import io
import os
import subprocess
import sys
import threading
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from public_data import PUBLIC

from rankbias import runs as runs_module
from rankbias.errors import InputError
from rankbias.runs import Run, read_qrels, read_run, run_name, write_qrels, write_run

PUBLIC_RUNS = PUBLIC / "cpjku_fairness_retrieval_results" / "runs"


def write(tmp_path: Path, text: str, name: str = "sys.run") -> Path:
    path = tmp_path / name
    path.write_text(text, encoding="utf-8")
    return path


def test_order_is_score_then_docid_not_file_order(tmp_path):
    # Lines deliberately out of order, with a score tie between d2 and d1 at 3.0.
    path = write(
        tmp_path,
        "q1 Q0 d3 1 1.0 x\nq1 Q0 d2 2 3.0 x\nq1 Q0 d1 3 3.0 x\nq1 Q0 d9 4 5.5 x\nq0 Q0 a 1 0.1 x\n",
    )
    run = read_run(path)
    assert run.name == "sys"
    assert run.qids.tolist() == ["q0", "q1"]
    # by score descending: d9 (5.5), then the tie d1/d2 by docid, then d3 (1.0)
    assert run.ranked("q1").tolist() == ["d9", "d1", "d2", "d3"]
    assert run.ranks().tolist() == [1, 1, 2, 3, 4]
    assert run.offsets.tolist() == [0, 1, 5]


def test_arrow_docids_are_those_the_reader_made_and_never_inherited(tmp_path):
    import dataclasses

    import pyarrow as pa

    path = write(tmp_path, "q1 Q0 d3 1 1.0 x\nq1 Q0 d2 2 3.0 x\nq0 Q0 a 1 0.1 x\n")
    run = read_run(path)
    kept = runs_module.arrow_docids(run)
    assert kept.type == pa.string() and kept.to_pylist() == run.docids.tolist() == ["a", "d2", "d3"]
    assert runs_module.arrow_docids(run) is kept  # the reader's array, not a new conversion
    other = dataclasses.replace(run, docids=np.array(["b", "e2", "e3"], dtype=object))
    assert runs_module.arrow_docids(other).to_pylist() == ["b", "e2", "e3"]
    built = Run("r", run.qids, run.offsets, run.docids.copy(), run.scores)
    assert runs_module.arrow_docids(built).to_pylist() == ["a", "d2", "d3"]
    empty = Run.from_frame(pd.DataFrame({"qid": [], "docid": [], "score": []}), name="e")
    assert runs_module.arrow_docids(empty).type == pa.string()  # typed even with no docid


def test_the_reader_keeps_docids_in_arrow_until_they_are_read(tmp_path):
    """Python strings of 8 million docids take 0.5 GB: the run holds Arrow's array, and its cut
    and parts hold slices of it; ``docids`` makes the strings once, when it is read."""
    import pyarrow as pa

    run = read_run(write(tmp_path, "q1 Q0 d3 1 1.0 x\nq1 Q0 d2 2 3.0 x\nq0 Q0 a 1 0.1 x\n"))
    for held in (run, run.cut(1), run.restrict(["q1"])):
        assert isinstance(held.__dict__["docids"], pa.StringArray)
    assert run.cut(1).docids.tolist() == ["a", "d2"]
    assert run.restrict(["q1"]).docids.tolist() == ["d2", "d3"]
    assert run.docids.dtype == object and run.docids is run.docids  # made once
    built = Run("r", run.qids, run.offsets, pa.array(["x", "y", "z"]), run.scores)
    assert built.ranked("q1").tolist() == ["y", "z"]  # a Run may be given Arrow docids too


def test_a_hash_collision_only_sends_the_run_to_the_exact_reader(tmp_path, monkeypatch):
    """The fast reader finds repeated (query, docid) pairs by 64-bit hashes; equal hashes of
    different docids (made here: every docid hashes alike) must not refuse a good run."""
    text = "q1 Q0 d3 1 1.0 x\nq1 Q0 d2 2 3.0 x\nq1 Q0 d1 3 3.0 x\nq0 Q0 a 1 0.1 x\n"
    expected = read_run(write(tmp_path, text))
    monkeypatch.setattr(
        runs_module, "_string_hashes", lambda strings: np.zeros(len(strings), dtype=np.uint64)
    )
    assert runs_module._read_run_fast(text.encode(), "sys", "score") is None
    run = read_run(write(tmp_path, text))
    assert run.docids.tolist() == expected.docids.tolist() == ["a", "d1", "d2", "d3"]
    assert run.scores.tolist() == expected.scores.tolist()


def test_cut_and_frame(tmp_path):
    path = write(tmp_path, "q1 Q0 a 1 3 t\nq1 Q0 b 2 2 t\nq1 Q0 c 3 1 t\nq2 Q0 z 1 1 t\n")
    run = read_run(path)
    cut = run.cut(2)
    assert cut.ranked("q1").tolist() == ["a", "b"]
    assert cut.ranked("q2").tolist() == ["z"]  # shorter list kept as it is
    frame = cut.to_frame()
    assert frame.to_dict("list") == {
        "qid": ["q1", "q1", "q2"],
        "docid": ["a", "b", "z"],
        "rank": [1, 2, 1],
        "score": [3.0, 2.0, 1.0],
    }
    with pytest.raises(ValueError, match="cutoff: expected a positive integer, found 0"):
        run.cut(0)


def test_restrict_keeps_alignment(tmp_path):
    path = write(tmp_path, "q1 Q0 a 1 3 t\nq2 Q0 b 1 2 t\nq2 Q0 c 2 1 t\nq3 Q0 d 1 1 t\n")
    run = read_run(path).restrict(["q2", "q9"])
    assert run.qids.tolist() == ["q2"]
    assert run.docids.tolist() == ["b", "c"]
    assert run.scores.tolist() == [2.0, 1.0]


def test_restrict_refuses_query_ids_that_are_not_strings(tmp_path):
    run = read_run(write(tmp_path, "1 Q0 a 1 3 t\n2 Q0 b 1 2 t\n"))
    assert run.restrict(np.array(["2"])).qids.tolist() == ["2"]
    assert run.restrict([]).qids.tolist() == []
    with pytest.raises(TypeError) as info:
        run.restrict(["1", 2])  # an integer would select nothing, without a word
    assert str(info.value) == (
        "qids: expected query ids as strings (as a run holds them), found int 2 at position 1"
    )


@pytest.mark.parametrize(
    ("line", "message"),
    [
        ("q1 Q0 d1 1 2.0", "found 5 field"),
        ("q1 Q0 d1 one 2.0 t", "rank 'one' is not an integer"),
        ("q1 Q0 d1 1 high t", "score 'high' is not a number"),
        ("q1 Q0 d1 1 nan t", "not finite"),
    ],
)
def test_malformed_lines_name_file_and_line(tmp_path, line, message):
    path = write(tmp_path, "q1 Q0 d0 1 9.0 t\n" + line + "\n")
    with pytest.raises(InputError, match=message) as info:
        read_run(path)
    assert f"{path}:2:" in str(info.value)


def test_duplicate_document_names_both_lines(tmp_path):
    path = write(tmp_path, "q1 Q0 d1 1 3 t\nq2 Q0 d1 1 3 t\nq1 Q0 d1 2 2 t\n")
    with pytest.raises(InputError, match=r":3: document d1 already listed for query q1 on line 1"):
        read_run(path)


def test_empty_file_is_an_error(tmp_path):
    path = write(tmp_path, "")
    with pytest.raises(InputError) as info:
        read_run(path)
    assert str(info.value) == (
        f"{path}: the run file is empty; expected lines 'qid Q0 docid rank score tag'"
    )


def test_write_read_roundtrip(tmp_path):
    rng = np.random.default_rng(7)
    frame = pd.DataFrame(
        {
            "qid": np.repeat(["10", "2", "33"], 20),
            "docid": [f"doc{i}" for i in range(60)],
            "score": np.round(rng.normal(size=60), 3),  # 3 decimals: some ties likely
        }
    )
    run = Run.from_frame(frame, name="r")
    write_run(tmp_path / "r.run", run)
    back = read_run(tmp_path / "r.run")
    assert back.qids.tolist() == ["10", "2", "33"]  # string order
    assert back.docids.tolist() == run.docids.tolist()
    np.testing.assert_array_equal(back.scores, run.scores)
    # rank column written 1..n per query
    ranks = [int(line.split()[3]) for line in (tmp_path / "r.run").read_text().splitlines()]
    assert ranks == list(range(1, 21)) * 3


def test_writer_refuses_to_change_order(tmp_path):
    frame = pd.DataFrame({"qid": ["q", "q"], "docid": ["b", "a"], "score": [1.0000002, 1.0]})
    run = Run.from_frame(frame, name="r")
    assert run.docids.tolist() == ["b", "a"]
    with pytest.raises(ValueError, match="differ below 1e-6"):
        write_run(tmp_path / "r.run", run)


GOOD = pd.DataFrame({"qid": ["q", "q"], "docid": ["a", "b"], "score": [2.0, 1.0]})


def test_from_frame_rejects_duplicates_and_nan():
    dup = pd.DataFrame({"qid": ["q", "q"], "docid": ["a", "a"], "score": [1.0, 2.0]})
    with pytest.raises(InputError, match="appears more than once for query q"):
        Run.from_frame(dup, name="r")
    for bad in (np.nan, np.inf, -np.inf):
        frame = pd.DataFrame({"qid": ["q"], "docid": ["a"], "score": [bad]})
        with pytest.raises(InputError, match=f"document a has score {bad}; expected a finite"):
            Run.from_frame(frame, name="r")
    for column, value in (("docid", None), ("qid", None), ("docid", " "), ("qid", np.nan)):
        frame = pd.DataFrame({"qid": ["q", "q"], "docid": ["a", "b"], "score": [1.0, 2.0]})
        frame[column] = frame[column].astype(object)
        frame.loc[1, column] = value
        with pytest.raises(InputError, match=f"row 1 has {column} .*; expected a non-empty id"):
            Run.from_frame(frame, name="r")
    text = pd.DataFrame({"qid": ["q"], "docid": ["a"], "score": ["high"]})
    with pytest.raises(InputError, match="column score holds a non-number"):
        Run.from_frame(text, name="r")


@pytest.mark.parametrize(
    ("frame", "name", "error", "message"),
    [
        # a run named None or 5 gave a 'run' column of None or 5 in every table it scored
        (GOOD, None, TypeError, "name: expected the run's name, a non-empty str, found None"),
        (GOOD, 5, TypeError, "name: expected the run's name, a non-empty str, found 5"),
        (GOOD, " ", TypeError, "name: expected the run's name, a non-empty str, found ' '"),
        # these two were AttributeErrors
        ([("q", "a", 1.0)], "r", TypeError,
         "frame: expected a DataFrame qid, docid, score, found list"),
        (pd.DataFrame([["q", "a", 1.0, "b"]], columns=["qid", "docid", "score", "docid"]), "r",
         InputError, "run 'r': the table has column(s) ['docid'] twice; expected once"),
    ],
)  # fmt: skip
def test_from_frame_names_a_wrong_argument(frame, name, error, message):
    with pytest.raises(error) as info:
        Run.from_frame(frame, name)
    assert type(info.value) is error and str(info.value) == message


def test_qrels_roundtrip_and_errors(tmp_path):
    table = pd.DataFrame({"qid": ["1", "1", "2"], "docid": ["a", "b", "a"], "relevance": [1, 0, 2]})
    write_qrels(tmp_path / "q.txt", table)
    assert (tmp_path / "q.txt").read_text().splitlines()[0] == "1 0 a 1"
    pd.testing.assert_frame_equal(read_qrels(tmp_path / "q.txt"), table)
    bad = write(tmp_path, "1 0 a 1\n1 0 a 2\n", "bad.txt")
    with pytest.raises(InputError, match=r"bad.txt:2: document a already judged"):
        read_qrels(bad)
    bad = write(tmp_path, "1 0 a x\n", "bad2.txt")
    with pytest.raises(InputError, match=r"bad2.txt:1: relevance 'x'"):
        read_qrels(bad)


@pytest.mark.skipif(not PUBLIC.exists(), reason="../shared/data/public is absent")
@pytest.mark.parametrize(
    ("collection", "depth"), [("msmarco_passage", 200), ("trecdl2019_passage", 1000)]
)
def test_real_public_runs(collection, depth):
    for path in sorted((PUBLIC_RUNS / collection).glob("*.run")):
        run = read_run(path)
        lines = path.read_text().splitlines()
        # an independent count of the file: rows and distinct queries
        assert len(run.docids) == len(lines)
        assert len(run) == len({line.split()[0] for line in lines})
        # within each query the order is non-increasing in score
        same_query = np.repeat(np.arange(len(run)), run.list_lengths)
        step = np.diff(run.scores)[same_query[1:] == same_query[:-1]]
        assert (step <= 0).all(), path
        # the published files are top-200 (MS MARCO dev) and top-1000 (TREC DL 2019) lists
        assert run.list_lengths.max() <= depth


def test_empty_table_gives_an_empty_run():
    run = Run.from_frame(pd.DataFrame({"qid": [], "docid": [], "score": []}), name="e")
    assert len(run) == 0 and run.offsets.tolist() == [0] and run.to_frame().empty


def test_file_order_is_explicit_and_keeps_line_order(tmp_path):
    # ties and a deliberately unsorted file: score order and file order differ
    path = write(tmp_path, "q1 Q0 b 1 2.0 x\nq1 Q0 a 2 2.0 x\nq1 Q0 c 3 5.0 x\nq0 Q0 z 1 1 x\n")
    assert read_run(path).ranked("q1").tolist() == ["c", "a", "b"]
    by_file = read_run(path, order="file")
    assert by_file.ranked("q1").tolist() == ["b", "a", "c"]
    assert by_file.qids.tolist() == ["q0", "q1"]
    assert by_file.cut(2).ranked("q1").tolist() == ["b", "a"]
    with pytest.raises(ValueError, match="order: expected one of 'score', 'file', found 'rank'"):
        read_run(path, order="rank")


# ---- strict reading: a table of malformed inputs ---------------------------------------------
GOOD = b"q1 Q0 d0 1 9.0 t\n"


@pytest.mark.parametrize(
    ("body", "line", "fragment"),
    [
        (b"q1 Q0 d1 2 2.0\n", 2, "found 5 field(s)"),
        (b"q1 Q0 d1 2 2.0 t extra\n", 2, "found 7 field(s)"),
        (b"\n", 2, "found a blank line"),
        (b"   \n", 2, "found a blank line"),
        (b"q1 Q0 d1 1.5 2.0 t\n", 2, "rank '1.5' is not an integer"),
        (b"q1 Q0 d1 1e3 2.0 t\n", 2, "rank '1e3' is not an integer"),
        (b"q1 Q0 d1 1_000 2.0 t\n", 2, "rank '1_000' is not an integer"),
        (b"q1 Q0 d1 0x10 2.0 t\n", 2, "rank '0x10' is not an integer"),
        (b"q1 Q0 d1 -2 2.0 t\n", 2, "rank '-2' is negative"),
        (b"q1 Q0 d1 1 2.0 t\n", 2, "rank 1 already used for query q1 on line 1"),
        # ranks far above the line count: the reader's check for repeats uses a table, not a
        # count per possible rank
        (
            b"q1 Q0 d1 90000 2.0 t\nq1 Q0 d2 90000 1.0 t\n",
            3,
            "rank 90000 already used for query q1 on line 2",
        ),
        (b"q1 Q0 d0 2 2.0 t\n", 2, "document d0 already listed for query q1 on line 1"),
        (b"q1 Q0 d1 2 1_000 t\n", 2, "score '1_000' is not a number"),
        (b"q1 Q0 d1 2 0x10 t\n", 2, "score '0x10' is not a number"),
        (b"q1 Q0 d1 2 1,5 t\n", 2, "score '1,5' is not a number"),
        (b"q1 Q0 d1 2 nan t\n", 2, "score 'nan' is not finite"),
        (b"q1 Q0 d1 2 -inf t\n", 2, "score '-inf' is not finite"),
        (b"q1 Q0 d1 2 Infinity t\n", 2, "score 'Infinity' is not finite"),
        (b"q1 Q0 d1 2 1e999 t\n", 2, "score '1e999' overflows a 64-bit float"),
        (b"q1 Q0 d\xe91 2 2.0 t\n", 2, "byte 0xe9 at column 8 is not UTF-8"),
        # a second file's byte-order mark: the qid would be '\ufeffq1', a new query
        (b"\xef\xbb\xbfq1 Q0 d1 2 2.0 t\n", 2, "a byte-order mark (bytes ef bb bf, U+FEFF) at col"),
        (b"q1 Q0 \xef\xbb\xbfd1 2 2.0 t\n", 2, "U+FEFF) at column 7"),
        (b"q1\xc2\xa0Q0 d1 2 2.0 t\n", 2, "found 5 field(s)"),  # NBSP is not a separator
        (b"q1 Q0 d1 \xd9\xa1 2.0 t\n", 2, "is not an integer"),  # an Arabic-Indic digit
        (b"q1 Q0 d1 2 \xef\xbc\x95 t\n", 2, "is not a number"),  # a full-width digit
    ],
)
def test_malformed_run_lines_table(tmp_path, body, line, fragment):
    path = tmp_path / "bad.run"
    path.write_bytes(GOOD + body + b"q2 Q0 d5 1 1.0 t\n")
    with pytest.raises(InputError) as info:
        read_run(path)
    message = str(info.value)
    assert message.startswith(f"{path}:{line}: "), message
    assert fragment in message, message


@pytest.mark.parametrize(
    ("raw", "fragment"),
    [
        (b"", "the run file is empty"),
        (b"\xef\xbb\xbf", "the run file is empty"),
    ],
)
def test_empty_run_inputs(tmp_path, raw, fragment):
    path = tmp_path / "e.run"
    path.write_bytes(raw)
    with pytest.raises(InputError, match=fragment):
        read_run(path)


CLEAN = b"q1 Q0 a 1 3.5 t\nq1 Q0 b 2 3.5 t\nq2 Q0 a 1 -1e-3 t\nq1 Q0 c 3 +.5 t\n"


@pytest.mark.parametrize(
    "variant",
    [
        CLEAN.replace(b"\n", b"\r\n"),
        CLEAN.replace(b"\n", b"\r"),
        b"\xef\xbb\xbf" + CLEAN,
        CLEAN.replace(b" ", b"\t"),
        CLEAN.replace(b" ", b" \t "),
        b"  " + CLEAN.replace(b"\n", b"  \n"),
        CLEAN.rstrip(b"\n"),  # no final line end
        gzip.compress(CLEAN, mtime=0),
        CLEAN.replace(b"q2 Q0 a 1", b"q2 Q0 a +1"),  # a sign on a rank
        CLEAN.replace(b"q2 Q0 a 1", b"q2 Q0 a -0"),  # minus zero is not negative
        CLEAN.replace(b"q2 Q0 a 1", b"q2 Q0 a 0001"),
        CLEAN.replace(b"q2 Q0 a 1", b"q2 Q0 a 99999999999999999999999"),  # beyond 64 bits
        CLEAN.replace(b"\n", b"\r\n", 2),  # line ends mixed within the file
        CLEAN.replace(b"\n", b"\r", 1),
        CLEAN.replace(b" t\n", b" t\xc2\xa0\n"),  # NBSP inside the (ignored) tag
        CLEAN.replace(b"3.5", b"35e-1").replace(b"+.5", b"0.5000"),
    ],
)
def test_quirky_but_valid_runs_give_the_clean_numbers(tmp_path, variant):
    clean = tmp_path / "clean.run"
    clean.write_bytes(CLEAN)
    quirky = tmp_path / "quirky.run"
    quirky.write_bytes(variant)
    for order in ("score", "file"):
        expected, found = read_run(clean, order=order), read_run(quirky, order=order)
        assert found.qids.tolist() == expected.qids.tolist() == ["q1", "q2"]
        assert found.docids.tolist() == expected.docids.tolist()
        assert found.scores.tolist() == expected.scores.tolist()
    # by hand: q1 = a (3.5), b (3.5), c (0.5) ; q2 = a (-0.001)
    assert read_run(quirky).docids.tolist() == ["a", "b", "c", "a"]
    assert read_run(quirky).scores.tolist() == [3.5, 3.5, 0.5, -0.001]


def test_opening_errors_name_the_file(tmp_path):
    with pytest.raises(InputError, match=r"no such file; expected a run file"):
        read_run(tmp_path / "absent.run")
    with pytest.raises(InputError, match=r"is a directory; expected a run file"):
        read_run(tmp_path)
    fake = tmp_path / "plain.run.gz"
    fake.write_bytes(CLEAN)
    with pytest.raises(InputError, match=r"plain.run.gz: the name ends in '.gz' but"):
        read_run(fake)
    truncated = tmp_path / "cut.run.gz"
    truncated.write_bytes(gzip.compress(CLEAN * 50, mtime=0)[:-30])
    with pytest.raises(InputError, match=r"cut.run.gz: the gzip data ends before its end marker"):
        read_run(truncated)
    hidden = tmp_path / "hidden.run"  # gzip without the suffix: read by content
    hidden.write_bytes(gzip.compress(CLEAN, mtime=0))
    assert read_run(hidden).docids.tolist() == ["a", "b", "c", "a"]


def test_streams_are_read_once(tmp_path):
    assert read_run(io.BytesIO(CLEAN), name="s").docids.tolist() == ["a", "b", "c", "a"]
    assert read_run(io.StringIO(CLEAN.decode()), name="s").docids.tolist() == ["a", "b", "c", "a"]
    fifo = tmp_path / "pipe.run"
    os.mkfifo(fifo)

    def feed():
        with open(fifo, "wb") as handle:
            for line in CLEAN.splitlines(keepends=True):
                handle.write(line)
                handle.flush()

    writer = threading.Thread(target=feed)
    writer.start()
    run = read_run(fifo)
    writer.join()
    assert run.name == "pipe" and run.docids.tolist() == ["a", "b", "c", "a"]


def test_gzip_through_a_pipe_and_dev_stdin(tmp_path):
    clean = tmp_path / "clean.run"
    clean.write_bytes(CLEAN)
    code = (
        "import sys; from rankbias.runs import read_run; r = read_run(sys.argv[1]); "
        "print(' '.join(r.docids.tolist()), r.scores.sum())"
    )
    env = {**os.environ, "PYTHONPATH": str(Path(__file__).resolve().parents[1] / "src")}
    zipped = subprocess.run(["gzip", "-c", str(clean)], check=True, capture_output=True).stdout
    for stdin in (zipped, CLEAN):
        done = subprocess.run(
            [sys.executable, "-c", code, "/dev/stdin"],
            input=stdin,
            capture_output=True,
            env=env,
            check=True,
        )
        assert done.stdout.decode().split() == ["a", "b", "c", "a", "7.499"]


def test_long_interleaved_run_keeps_file_order_with_tied_scores(tmp_path):
    # 3,000 lines, 7 queries interleaved at random, scores from three values (many ties)
    rng = np.random.default_rng(9)
    qids = [f"q{i}" for i in rng.integers(0, 7, size=3000)]
    scores = rng.choice([1.0, 2.0, 3.0], size=3000)
    docids = [f"d{j}" for j in rng.permutation(3000)]
    rank_of: dict[str, int] = {}
    lines = []
    for q, d, s in zip(qids, docids, scores, strict=True):
        rank_of[q] = rank_of.get(q, 0) + 1
        lines.append(f"{q} Q0 {d} {rank_of[q]} {s} t")
    path = write(tmp_path, "\n".join(lines) + "\n")
    by_file = read_run(path, order="file")
    by_score = read_run(path)
    for q in sorted(set(qids)):
        in_file = [d for qq, d in zip(qids, docids, strict=True) if qq == q]
        assert by_file.ranked(q).tolist() == in_file
        ranked = sorted(
            ((s, d) for qq, d, s in zip(qids, docids, scores, strict=True) if qq == q),
            key=lambda pair: (-pair[0], pair[1]),
        )
        assert by_score.ranked(q).tolist() == [d for _, d in ranked]


# ---- property tests: the fast path equals an independent reading -----------------------------
ids = st.text(alphabet="abcxyz019_-.:é", min_size=1, max_size=4)


SCORES = [0.0, -0.0, 1.5, 2.0, -3.25, 1e-300, 7e10]


@st.composite
def run_rows(draw, scores):
    n = draw(st.integers(1, 40))
    rows = draw(
        st.lists(
            st.tuples(ids, ids, st.sampled_from(scores)),
            min_size=n,
            max_size=n,
            unique_by=lambda row: (row[0], row[1]),
        )
    )
    return rows


@settings(max_examples=60, deadline=None)
@given(rows=run_rows(SCORES), crlf=st.booleans(), tabs=st.booleans())
def test_read_run_equals_a_sort_by_hand(rows, crlf, tabs):
    sep = "\t" if tabs else " "
    end = "\r\n" if crlf else "\n"
    rank: dict[str, int] = {}
    text = ""
    for q, d, s in rows:
        rank[q] = rank.get(q, 0) + 1
        text += sep.join([q, "Q0", d, str(rank[q]), repr(s), "t"]) + end
    run = read_run(io.BytesIO(text.encode()), name="h")
    expected = sorted(rows, key=lambda row: (row[0], -row[2], row[1]))
    assert run.qids.tolist() == sorted({q for q, _, _ in rows})
    got = zip(np.repeat(run.qids, run.list_lengths), run.docids, run.scores, strict=True)
    assert list(got) == [(q, d, s) for q, d, s in expected]
    by_file = read_run(io.BytesIO(text.encode()), name="h", order="file")
    assert by_file.docids.tolist() == [d for q, d, _ in sorted(rows, key=lambda row: row[0])]


@settings(max_examples=40, deadline=None)
@given(rows=run_rows([0.0, 1.5, -2.125, 3.001, 3.002, 1e6]))
def test_run_round_trip_through_write_run(rows, tmp_path_factory):
    frame = pd.DataFrame(rows, columns=["qid", "docid", "score"])
    run = Run.from_frame(frame, name="r")
    path = tmp_path_factory.mktemp("rt") / "r.run"
    write_run(path, run)
    back = read_run(path)
    assert back.qids.tolist() == run.qids.tolist()
    assert back.docids.tolist() == run.docids.tolist()
    np.testing.assert_allclose(back.scores, np.round(run.scores, 6), rtol=0, atol=0)


@settings(max_examples=40, deadline=None)
@given(
    rows=st.lists(
        st.tuples(ids, ids, st.integers(-2, 4)), min_size=1, max_size=30, unique_by=lambda r: r[:2]
    )
)
def test_qrels_round_trip(rows, tmp_path_factory):
    table = pd.DataFrame(rows, columns=["qid", "docid", "relevance"])
    path = tmp_path_factory.mktemp("qr") / "q.txt"
    write_qrels(path, table)
    back = read_qrels(path)
    assert back.to_dict("list") == table.to_dict("list")
    assert back["relevance"].dtype == np.int64


@pytest.mark.parametrize(
    ("body", "line", "fragment"),
    [
        (b"1 0 b\n", 2, "found 3 field(s)"),
        (b"\n", 2, "found a blank line"),
        (b"1 0 b 1.0\n", 2, "relevance '1.0' is not an integer"),
        (b"1 0 b 1_0\n", 2, "relevance '1_0' is not an integer"),
        (b"1 0 a 0\n", 2, "document a already judged for query 1 on line 1"),
        (b"1 0 \xff 0\n", 2, "byte 0xff at column 5 is not UTF-8"),
        (b"1 0 b 99999999999999999999\n", 2, "relevance '99999999999999999999' is out of range"),
        (b"\xef\xbb\xbf2 0 b 1\n", 2, "a byte-order mark (bytes ef bb bf, U+FEFF) at column 1"),
        (b"1 0 b \xd9\xa1\n", 2, "is not an integer"),
    ],
)
def test_malformed_qrels_table(tmp_path, body, line, fragment):
    path = tmp_path / "bad.qrels"
    path.write_bytes(b"1 0 a 1\n" + body)
    with pytest.raises(InputError) as info:
        read_qrels(path)
    assert str(info.value).startswith(f"{path}:{line}: ") and fragment in str(info.value)


def test_qrels_quirks_and_empty(tmp_path):
    expected = {"qid": ["1", "2"], "docid": ["a", "b"], "relevance": [1, -2]}
    for raw in (
        b"1 0 a 1\n2 0 b -2\n",
        b"\xef\xbb\xbf1\t0\ta\t1\r2\t0\tb\t-2",
        b"1 0 a +1\n2 0 b -2\n",
    ):
        path = tmp_path / "q.txt"
        path.write_bytes(gzip.compress(raw, mtime=0))
        assert read_qrels(path).to_dict("list") == expected
    path.write_bytes(b"")
    with pytest.raises(InputError, match="the qrels file is empty"):
        read_qrels(path)


# per column: valid tokens, and (drawn 1 time in 15) unusual or invalid ones
VALID = [
    ["q1", "q2", "é"],
    ["Q0", "0"],
    ["d1", "d2", "d3", "d4", "d5"],
    ["1", "2", "3", "4", "5", "01"],
    ["1", "2.5", "-0", ".5", "5.", "1e3", "1E-2", "+1"],
    ["t", "run"],
]
ODD = [
    ["", "q 1"],
    [""],
    ["", "d\tx"],
    ["+1", "-1", "1.5", "1e3", "1_0", "", "99999999999999999999"],
    ["nan", "inf", "1_0", "0x1", "1e999", "", "1,5"],
    ["", "t t"],
]


@st.composite
def run_text(draw):
    lines = []
    for _ in range(draw(st.integers(1, 8))):
        fields = [
            draw(st.sampled_from(odd if draw(st.integers(0, 14)) == 0 else valid))
            for valid, odd in zip(VALID, ODD, strict=True)
        ]
        if draw(st.integers(0, 19)) == 0:
            fields = fields[: draw(st.integers(0, 7))]  # a short (or blank) line
        lines.append(draw(st.sampled_from([" ", " ", " ", "\t", "  "])).join(fields))
    return "\n".join(lines) + draw(st.sampled_from(["", "\n", "\r\n", "\n\n"]))


@settings(max_examples=400, deadline=None)
@given(text=run_text())
def test_the_fast_path_never_accepts_what_the_line_reader_refuses(text):
    data = text.encode()
    fast = runs_module._read_run_fast(data, "r", "score")
    try:
        frame = runs_module._parse_run_lines(data, "r")
        slow = Run.from_frame(frame, name="r") if not frame.empty else None
    except InputError:
        slow = None
    if fast is not None:
        assert slow is not None
        assert fast.qids.tolist() == slow.qids.tolist()
        assert fast.docids.tolist() == slow.docids.tolist()
        assert fast.scores.tolist() == slow.scores.tolist()
        assert fast.offsets.tolist() == slow.offsets.tolist()


def test_a_header_line_is_refused_not_read(tmp_path):
    run = write(tmp_path, "qid Q0 docid rank score tag\nq1 Q0 d1 1 2.0 t\n", "h.run")
    with pytest.raises(InputError, match=r"h.run:1: rank 'rank' is not an integer"):
        read_run(run)
    qrels = write(tmp_path, "qid iteration docid relevance\n1 0 a 1\n", "h.qrels")
    with pytest.raises(InputError, match=r"h.qrels:1: relevance 'relevance' is not an integer"):
        read_qrels(qrels)


@pytest.mark.skipif(sys.platform != "linux", reason="file names are bytes on Linux only")
def test_a_file_name_that_is_not_utf8_gives_a_writable_run_name(tmp_path):
    path = tmp_path / os.fsdecode(b"sys\xff tem.run.gz")  # as the shell passes such a name
    path.write_bytes(gzip.compress(CLEAN, mtime=0))
    run = read_run(path)
    assert run.name == "sys\\xff tem"  # by hand: the byte escaped, the space and stem kept
    run.name.encode("utf-8")  # writable to a UTF-8 table
    assert run.docids.tolist() == ["a", "b", "c", "a"]


@pytest.mark.parametrize("line_two", ["q1\tQ0\tdA\t2\t2.0\tt", "q1 Q0 dA +2 2.0 t"])
def test_file_order_through_the_exact_reader(tmp_path, line_two):
    """A file the fast reader passes to the exact one (tabs and spaces mixed, a signed rank)
    keeps the file's order with order='file' and the score order otherwise."""
    from rankbias.runs import _read_run_fast

    path = tmp_path / "mixed.run"
    path.write_text(f"q1 Q0 dB 1 1.0 t\n{line_two}\nq2 Q0 dC 1 5.0 t\n")
    assert _read_run_fast(path.read_bytes(), "mixed", "file") is None  # the exact path it is
    in_file = read_run(path, order="file")
    by_score = read_run(path)
    assert list(in_file.docids) == ["dB", "dA", "dC"]
    assert list(by_score.docids) == ["dA", "dB", "dC"]


def test_writers_name_an_argument_of_the_wrong_kind(tmp_path):
    with pytest.raises(TypeError, match=r"^run: expected a Run, found DataFrame"):
        write_run(tmp_path / "r.trec", pd.DataFrame({"qid": ["q"], "docid": ["d"]}))
    with pytest.raises(TypeError, match=r"^qrels: expected a DataFrame .*found NoneType"):
        write_qrels(tmp_path / "q.txt", None)
    with pytest.raises(ValueError, match=r"^qrels: .*missing \['relevance'\]"):
        write_qrels(tmp_path / "q.txt", pd.DataFrame({"qid": ["q"], "docid": ["d"]}))
    assert not list(tmp_path.iterdir())  # nothing written


# ---- the exact reader's messages, whole -------------------------------------------------------
RUN_EXPECTED = "expected 6 fields: qid Q0 docid rank score tag separated by spaces or tabs"
FIVE_80 = "q1 Q0 d1 2 " + "9" * 69  # five fields, 80 characters: shown whole
FIVE_81 = FIVE_80 + "9"  # 81: shown cut at 80, with an ellipsis


@pytest.mark.parametrize(
    ("body", "message"),
    [
        ("q1 Q0 d1 2 2.0", f"found 5 field(s) in 'q1 Q0 d1 2 2.0'; {RUN_EXPECTED}"),
        (FIVE_80, f"found 5 field(s) in '{FIVE_80}'; {RUN_EXPECTED}"),
        (FIVE_81, f"found 5 field(s) in '{FIVE_80}…'; {RUN_EXPECTED}"),
        (" \t", f"found a blank line; {RUN_EXPECTED}"),
        (
            "q1 Q0 d1 1.5 2.0 t",
            "rank '1.5' is not an integer; expected ASCII digits with an optional sign, e.g. '1'",
        ),
        (
            "q1 Q0 d1 1 2.0 t",
            "rank 1 already used for query q1 on line 1; expected each rank once per query",
        ),
        (
            "q1 Q0 d0 2 2.0 t",
            "document d0 already listed for query q1 on line 1; expected each document once per "
            "query",
        ),
    ],
)
def test_the_exact_run_reader_gives_its_whole_message(tmp_path, body, message):
    path = tmp_path / "bad.run"
    path.write_text(f"q1\tQ0\td0\t1\t9.0\tt\n{body}\n")  # tabs then spaces: the exact reader
    with pytest.raises(InputError) as info:
        read_run(path)
    assert str(info.value) == f"{path}:2: {message}"


def test_the_exact_reader_strips_spaces_and_tabs_only(tmp_path):
    """Fields are separated by spaces or tabs; another character, even a vertical tab or an
    'X', belongs to the field it touches."""
    path = tmp_path / "edges.run"
    path.write_text("X1\tQ0\tdX\t1\t2.0\tt\n\x0bq2 Q0 d\x0c 1 1.0 t \n")
    run = read_run(path)
    assert run.qids.tolist() == ["\x0bq2", "X1"]  # string order
    assert run.docids.tolist() == ["d\x0c", "dX"]


@pytest.mark.parametrize(
    ("grade", "message"),
    [
        (
            str(2**63),
            f"relevance '{2**63}' is out of range; expected a grade between {-(2**63)} and "
            f"{2**63 - 1} (usually 0…4)",
        ),
        (
            str(-(2**63) - 1),
            f"relevance '{-(2**63) - 1}' is out of range; expected a grade between {-(2**63)} and "
            f"{2**63 - 1} (usually 0…4)",
        ),
        ("0", "document a already judged for query 1 on line 1; expected one judgement per pair"),
        (
            "x",
            "relevance 'x' is not an integer; expected ASCII digits with an optional sign, "
            "e.g. '1'",
        ),
    ],
)
def test_the_exact_qrels_reader_gives_its_whole_message(tmp_path, grade, message):
    path = tmp_path / "bad.qrels"
    path.write_text(f"1\t0\ta\t1\n1 0 a {grade}\n")
    with pytest.raises(InputError) as info:
        read_qrels(path)
    assert str(info.value) == f"{path}:2: {message}"


def test_the_exact_qrels_reader_keeps_the_64_bit_extremes(tmp_path):
    path = tmp_path / "extremes.qrels"
    path.write_text(f"1\t0\ta\t{2**63 - 1}\n1 0 b {-(2**63)}\n")
    qrels = read_qrels(path)
    assert qrels["relevance"].tolist() == [2**63 - 1, -(2**63)]
    assert qrels["relevance"].dtype == np.int64


def test_write_run_tags_with_the_run_name_or_the_given_tag(tmp_path):
    run = Run.from_frame(pd.DataFrame({"qid": ["q"], "docid": ["d"], "score": [1.5]}), name="bm25")
    write_run(tmp_path / "named.run", run)
    write_run(tmp_path / "tagged.run", run, tag="mine")
    assert (tmp_path / "named.run").read_text() == "q Q0 d 1 1.500000 bm25\n"
    assert (tmp_path / "tagged.run").read_text() == "q Q0 d 1 1.500000 mine\n"


def test_the_writer_names_the_pair_rounding_would_reorder(tmp_path):
    """Past the first rows of the second query: the pair is found wherever it is."""
    frame = pd.DataFrame(
        {
            "qid": ["p", "p", "q", "q", "q", "q"],
            "docid": ["z", "y", "c", "b", "a", "d"],
            "score": [2.0, 1.0, 5.0, 1.0000002, 1.0, 0.5],
        }
    )
    run = Run.from_frame(frame, name="r")
    assert run.docids.tolist() == ["z", "y", "c", "b", "a", "d"]
    with pytest.raises(ValueError) as info:
        write_run(tmp_path / "r.run", run)
    assert str(info.value) == (
        "run 'r': scores of b and a (query q) differ below 1e-6; writing them would change the "
        "order"
    )
    assert not (tmp_path / "r.run").exists()


def test_qrels_opening_errors_say_a_qrels_file_was_expected(tmp_path):
    for path, message in (
        (tmp_path / "absent.qrels", "no such file; expected a qrels file"),
        (tmp_path, "is a directory; expected a qrels file (a file)"),
    ):
        with pytest.raises(InputError) as info:
            read_qrels(path)
        assert str(info.value) == f"{path}: {message}"
    empty = tmp_path / "empty.qrels"
    empty.write_bytes(b"")
    with pytest.raises(InputError) as info:
        read_qrels(empty)
    assert str(info.value) == (
        f"{empty}: the qrels file is empty; expected lines 'qid iteration docid relevance'"
    )


def test_a_clean_qrels_file_is_read_by_the_fast_reader_alone(tmp_path, monkeypatch):
    """The line-by-line reader is only for files the fast one cannot vouch for."""

    def refuse(data, where):
        raise AssertionError("the exact reader was used")

    monkeypatch.setattr(runs_module, "_parse_qrels_lines", refuse)
    path = tmp_path / "clean.qrels"
    path.write_bytes(b"q2 0 b 0\nq1 0 a 3\nq2 0 a -1\nq1 0 c 1\n")  # "+1": the exact reader
    qrels = read_qrels(path)
    assert qrels.to_dict("list") == {
        "qid": ["q2", "q1", "q2", "q1"],
        "docid": ["b", "a", "a", "c"],
        "relevance": [0, 3, -1, 1],
    }
    assert qrels["relevance"].dtype == np.int64


def test_from_frame_messages_whole_and_the_first_repeated_document_named():
    with pytest.raises(ValueError) as info:
        Run.from_frame(pd.DataFrame({"qid": ["q"], "docid": ["d"], "score": [1.0]}), "r", "file")
    assert str(info.value) == "order: expected one of 'score', 'given', found 'file'"
    with pytest.raises(InputError) as info:
        Run.from_frame(pd.DataFrame({"qid": ["q"], "doc": ["d"]}), "r")
    assert str(info.value) == "run 'r': table lacks column(s) ['docid', 'score']"
    # by score: b (3), a (2), b (1), a (0.5): the first row of a repeated pair is b's
    frame = pd.DataFrame(
        {"qid": ["q"] * 5, "docid": ["a", "b", "c", "b", "a"], "score": [2.0, 3.0, 0.1, 1.0, 0.5]}
    )
    with pytest.raises(InputError) as info:
        Run.from_frame(frame, "r")
    assert str(info.value) == (
        "run 'r': document b appears more than once for query q (2 duplicate row(s) in all); "
        "expected each document once per query"
    )


def test_an_empty_run_keeps_its_name_and_id_arrays():
    run = Run.from_frame(pd.DataFrame({"qid": [], "docid": [], "score": []}), name="e")
    assert run.name == "e"
    assert run.qids.dtype == object and run.docids.dtype == object
    assert run.scores.dtype == np.float64 and run.offsets.dtype == np.int64


def test_given_order_keeps_the_rows_of_a_long_interleaved_table():
    """Two queries' rows interleaved, 300 in all (NumPy sorts short arrays stably anyway)."""
    rng = np.random.default_rng(11)
    qids = rng.choice(["q1", "q2"], size=300)
    frame = pd.DataFrame(
        {"qid": qids, "docid": [f"d{i}" for i in range(300)], "score": np.ones(300)}
    )
    run = Run.from_frame(frame, "r", order="given")
    for qid in ("q1", "q2"):
        assert run.ranked(qid).tolist() == frame.loc[frame["qid"] == qid, "docid"].tolist()


def test_ranked_names_a_query_the_run_lacks():
    run = Run.from_frame(
        pd.DataFrame({"qid": ["b", "d"], "docid": ["x", "y"], "score": [1, 2]}), "r"
    )
    for qid in ("a", "c", "e"):  # before, between and after the run's queries
        with pytest.raises(KeyError) as info:
            run.ranked(qid)
        assert info.value.args == (f"run 'r' has no query {qid!r}",)


def test_a_backslash_in_the_path_separates_folders_for_the_run_name(tmp_path):
    """The name of a run read from 'runs\\bm25.run' (a Windows path) is 'bm25'."""
    path = tmp_path / "runs\\bm25.run.gz"
    path.write_bytes(gzip.compress(b"q1 Q0 d1 1 1.0 t\n"))
    assert read_run(path).name == "bm25"


def test_the_writer_compares_each_score_with_the_one_before_it(tmp_path):
    """In a run kept in file order the check looks at each neighbouring pair: here only the
    second and third rows collapse and would swap."""
    frame = pd.DataFrame(
        {"qid": ["q"] * 3, "docid": ["a", "c", "b"], "score": [1.0, 1.0000002, 1.0]}
    )
    run = Run.from_frame(frame, name="r", order="given")
    with pytest.raises(ValueError) as info:
        write_run(tmp_path / "r.run", run)
    assert str(info.value).startswith("run 'r': scores of c and b (query q) differ below 1e-6")


@pytest.mark.parametrize(
    ("qid", "docid", "tag", "message"),
    [
        # each wrote a line of 5 or 7 fields, which read_run refuses: a file that cannot be
        # read back (a run named after 'my run.txt' is tagged 'my run' by default)
        ("q1", "a b", None, "run 'r': docid 'a b' is empty or holds white space; expected a "
         "value without white space, or the file could not be read back"),
        ("q 1", "a", None, "run 'r': qid 'q 1' is empty or holds white space"),
        ("q1", "a", "my run", "run 'r': tag 'my run' is empty or holds white space; expected a "
         "value without white space (pass tag=), or the file could not be read back"),
        ("q1", "a", "", "run 'r': tag '' is empty or holds white space"),
        ("q1", "a\tb", None, "run 'r': docid 'a\\tb' is empty or holds white space"),
        ("q1\nq2", "a", None, "run 'r': qid 'q1\\nq2' is empty or holds white space"),
    ],
)  # fmt: skip
def test_write_run_refuses_a_field_that_would_split_the_line(tmp_path, qid, docid, tag, message):
    run = Run.from_frame(pd.DataFrame({"qid": [qid], "docid": [docid], "score": [1.0]}), "r")
    with pytest.raises(ValueError) as info:
        write_run(tmp_path / "r.run", run, tag=tag)
    assert str(info.value).startswith(message) and not (tmp_path / "r.run").exists()
    assert ("(pass tag=)" in str(info.value)) == (tag is not None)  # the hint only for tag
    qrels = pd.DataFrame({"qid": [qid], "docid": [docid], "relevance": [1]})
    if tag is None:
        with pytest.raises(ValueError, match="^qrels: (doc)?q?id"):
            write_qrels(tmp_path / "q.txt", qrels)


@pytest.mark.parametrize("name", ["", "  ", 5])
def test_read_run_refuses_a_name_that_is_not_a_name(tmp_path, name):
    # "" fell back to the file's stem, 5 made a run whose 'run' column held 5
    path = tmp_path / "r.run"
    path.write_text("q1 Q0 d1 1 1.0 x\n")
    with pytest.raises(TypeError) as info:
        read_run(path, name=name)
    assert (
        str(info.value)
        == f"name: expected None (the file's stem) or a non-empty str, found {name!r}"
    )
    assert read_run(path).name == "r"


def test_a_run_is_named_by_its_file_without_the_last_suffix():
    for where, name in (
        ("runs/bm25.v2.run.gz", "bm25.v2"),  # .gz, then the last suffix only
        ("C:\\runs\\dense.trec", "dense"),
        ("bm25", "bm25"),
        (".trec", ".trec"),  # a hidden file's name is its name, not a suffix
        ("X.run", "X"),
    ):
        assert run_name(where) == name, where


def test_quotes_and_spaces_are_read_as_the_line_reader_reads_them(tmp_path):
    # a run file has no quoting: a quote is a character of its field, and a space separates
    # fields even in a tab-separated file (Arrow's fast reader must agree with the line reader)
    run = read_run(write(tmp_path, 'q1 Q0 "d1" 1 2 t\nq1 Q0 d\'2 2 1 t\n'))
    assert run.docids.tolist() == ['"d1"', "d'2"]
    for text in ('q1 Q0 "d 1" 1 2 t\n', "q1\tQ0\td 1\t1\t2\tt\n"):
        with pytest.raises(InputError, match=r"sys\.run:1: found 7 field\(s\) in "):
            read_run(write(tmp_path, text))


def test_a_run_built_by_hand_must_be_whole():
    parts = {
        "qids": np.array(["q1"], dtype=object),
        "offsets": np.array([0, 2]),
        "docids": np.array(["a", "b"], dtype=object),
        "scores": np.array([2.0, 1.0]),
    }
    assert Run("r", **parts).docids.tolist() == ["a", "b"]
    for name in parts:
        with pytest.raises(TypeError) as info:
            Run("r", **(parts | {name: parts[name].tolist()}))
        assert str(info.value) == (
            f"{name}: expected an array (Run.from_frame builds them), found list"
        )
    for change, message in (
        ({"offsets": np.array([0, 1, 2])}, "offsets must have shape (2,), found (3,)"),
        ({"scores": np.array([2.0])}, "docids, scores and offsets[-1] must agree in length"),
        ({"offsets": np.array([0, 1])}, "docids, scores and offsets[-1] must agree in length"),
    ):
        with pytest.raises(ValueError) as info:
            Run("r", **(parts | change))
        assert str(info.value) == message
