"""Tests of rankbias.runs: TREC run and qrels I/O, ordering, validation."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from rankbias.errors import InputError
from rankbias.runs import Run, read_qrels, read_run, write_qrels, write_run

PUBLIC = Path(__file__).resolve().parents[1] / ".." / "shared" / "data" / "public"
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
    with pytest.raises(ValueError, match="at least 1"):
        run.cut(0)


def test_restrict_keeps_alignment(tmp_path):
    path = write(tmp_path, "q1 Q0 a 1 3 t\nq2 Q0 b 1 2 t\nq2 Q0 c 2 1 t\nq3 Q0 d 1 1 t\n")
    run = read_run(path).restrict(["q2", "q9"])
    assert run.qids.tolist() == ["q2"]
    assert run.docids.tolist() == ["b", "c"]
    assert run.scores.tolist() == [2.0, 1.0]


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
    with pytest.raises(InputError, match="empty"):
        read_run(write(tmp_path, ""))


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


def test_from_frame_rejects_duplicates_and_nan():
    dup = pd.DataFrame({"qid": ["q", "q"], "docid": ["a", "a"], "score": [1.0, 2.0]})
    with pytest.raises(InputError, match="appears more than once for query q"):
        Run.from_frame(dup, name="r")
    nan = pd.DataFrame({"qid": ["q"], "docid": ["a"], "score": [np.nan]})
    with pytest.raises(InputError, match="score NaN"):
        Run.from_frame(nan, name="r")


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
    with pytest.raises(ValueError, match="order must be"):
        read_run(path, order="rank")
