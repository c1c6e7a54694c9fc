"""Tests of the ``rankbias stats`` and ``rankbias score`` commands (contract of issue 3)."""

from __future__ import annotations

import gzip
import math
import sys
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from public_data import PUBLIC

from rankbias.cli import main

REPO = Path(__file__).resolve().parents[2]
V2 = 1 / math.log2(3)


@pytest.fixture
def terms(tmp_path) -> Path:
    path = tmp_path / "terms.txt"
    path.write_text("she,f\nher,f\nhe,m\nhim,m\n", encoding="utf-8")
    return path


@pytest.fixture
def collection(tmp_path) -> Path:
    path = tmp_path / "collection.tsv"
    path.write_text(
        "d1\tHe said he would\nd2\tshe and her sister\nd3\tnothing to see\nd4\tshe told him\n",
        encoding="utf-8",
    )
    return path


def write_run(path: Path, lines: list[tuple[str, str]]) -> Path:
    text = "".join(f"{q} Q0 {d} {i + 1} {10 - i} tag\n" for i, (q, d) in enumerate(lines))
    path.write_text(text, encoding="utf-8")
    return path


@pytest.mark.parametrize("suffix", [".csv", ".tsv", ".parquet"])
def test_stats_output_by_hand(tmp_path, terms, collection, suffix):
    out = tmp_path / f"stats{suffix}"
    assert main(["stats", "--collection", str(collection), "--terms", str(terms),
                 "--workers", "1", "--out", str(out)]) == 0  # fmt: skip
    if suffix == ".parquet":
        frame = pd.read_parquet(out)
    else:
        frame = pd.read_csv(out, sep="," if suffix == ".csv" else "\t", dtype={"docid": str})
    assert list(frame.columns) == ["docid", "length", "f", "m", "neutrality"]
    assert frame.docid.tolist() == ["d1", "d2", "d3", "d4"]
    assert frame.length.tolist() == [4, 4, 3, 3]
    assert frame.f.tolist() == [0, 2, 0, 1] and frame.m.tolist() == [2, 0, 0, 1]
    # ω: d1 (0,2) -> 0; d2 (2,0) -> 0; d3 -> 1; d4 (1,1) -> 1 − 0 = 1
    assert frame.neutrality.tolist() == [0.0, 0.0, 1.0, 1.0]


def test_stats_counts_non_ascii_text_and_docids(tmp_path):
    """Non-ASCII text (and a non-ASCII docid) is counted as str.lower() and the tokeniser
    would."""
    terms = tmp_path / "terms.csv"
    terms.write_text("ärztin,f\nstraße,m\nκόρης,f\n", encoding="utf-8")
    collection = tmp_path / "c.tsv"
    collection.write_text(
        "a\tDIE ÄRZTIN, die Straße.\nb\tΚΌΡΗΣ ΣΑΣ\nnº3\tSTRAẞE\n", encoding="utf-8"
    )
    out = tmp_path / "s.csv"
    assert main(["stats", "--collection", str(collection), "--terms", str(terms),
                 "--out", str(out)]) == 0  # fmt: skip
    frame = pd.read_csv(out)
    assert frame.docid.tolist() == ["a", "b", "nº3"] and frame.length.tolist() == [4, 2, 1]
    assert frame.f.tolist() == [1, 1, 0] and frame.m.tolist() == [1, 0, 1]


def test_stats_whitespace_tokenizer_and_gzip(tmp_path, terms):
    path = tmp_path / "c.tsv.gz"
    with gzip.open(path, "wt", encoding="utf-8") as handle:
        handle.write("a\tshe,  he\n")
    out = tmp_path / "s.csv"
    assert main(["stats", "--collection", str(path), "--terms", str(terms), "--tokenizer",
                 "whitespace", "--workers", "1", "--out", str(out)]) == 0  # fmt: skip
    frame = pd.read_csv(out)
    # tokens 'she,', '', 'he' -> length 3; 'she,' is not 'she'
    assert frame.length.tolist() == [3] and frame.f.tolist() == [0] and frame.m.tolist() == [1]


def test_stats_default_terms_and_two_workers(tmp_path):
    path = tmp_path / "c.tsv"
    path.write_text("".join(f"d{i}\tthe queen and the king {i}\n" for i in range(500)))
    out = tmp_path / "s.parquet"
    assert main(["stats", "--collection", str(path), "--terms", "default", "--out", str(out)]) == 0
    frame = pd.read_parquet(out)
    assert len(frame) == 500 and (frame.f == 1).all() and (frame.m == 1).all()
    assert (frame.length == 6).all()


def test_stats_errors_exit_2(tmp_path, terms, capsys):
    bad = tmp_path / "bad.tsv"
    bad.write_bytes(b"a\tshe\nb\the \xff\n")
    out = tmp_path / "s.csv"
    assert main(["stats", "--collection", str(bad), "--terms", str(terms), "--workers", "1",
                 "--out", str(out)]) == 2  # fmt: skip
    err = capsys.readouterr().err
    assert f"{bad}:2: byte 0xff at byte offset 11" in err
    assert not out.exists() and not Path(str(out) + ".partial").exists()
    empty_line = tmp_path / "e.tsv"
    empty_line.write_text("a\tshe\n\nb\the\n")
    assert main(["stats", "--collection", str(empty_line), "--terms", str(terms), "--workers",
                 "1", "--out", str(out)]) == 2  # fmt: skip
    assert f"{empty_line}:2: found an empty collection line" in capsys.readouterr().err
    dup_terms = tmp_path / "dup.txt"
    dup_terms.write_text("she,f\nhe,m\nshe,m\n")
    assert main(["stats", "--collection", str(bad), "--terms", str(dup_terms),
                 "--out", str(out)]) == 2  # fmt: skip
    assert f"{dup_terms}:3: term 'she' (group 'm') is already listed on line 1" in (
        capsys.readouterr().err
    )
    assert main(["stats", "--collection", str(bad), "--terms", str(terms),
                 "--out", str(tmp_path / "s.xlsx")]) == 2  # fmt: skip
    assert "unknown output format (.xlsx)" in capsys.readouterr().err


def test_ir_datasets_id_without_the_package(tmp_path, terms, capsys, monkeypatch):
    monkeypatch.setitem(sys.modules, "ir_datasets", None)  # importing it now fails
    code = main(["stats", "--collection", "msmarco-passage", "--terms", str(terms),
                 "--out", str(tmp_path / "s.csv")])  # fmt: skip
    assert code == 2
    err = capsys.readouterr().err
    assert "collection 'msmarco-passage': no such file, and ir_datasets" in err
    assert "is not installed" in err


def test_score_by_hand_and_missing(tmp_path, terms, collection, capsys):
    run = write_run(tmp_path / "mysystem.run", [("q1", "d1"), ("q1", "d2"), ("q1", "d3")])
    out = tmp_path / "scores.csv"
    args = ["score", "--collection", str(collection), "--terms", str(terms), "--run", str(run),
            "--cutoffs", "2,5", "--metrics", "rab_tc,arab_tc,nfairr,texfair", "--workers", "1",
            "--out", str(out)]  # fmt: skip
    assert main(args) == 0
    frame = pd.read_csv(out, dtype={"qid": str})
    assert list(frame.columns) == ["run", "qid", "metric", "cutoff", "value"]
    assert set(frame.run) == {"mysystem"} and len(frame) == 4 * 2
    got = frame.set_index(["metric", "cutoff"]).value
    assert got[("rab_tc", 2)] == 0 and got[("arab_tc", 2)] == 1  # (2 + 0)/2
    # FaiRR@5 = 0.5 (d3 at rank 3); IFaiRR@5 over the collection = 1 + v2 (d3, d4 neutral)
    assert got[("nfairr", 5)] == pytest.approx(0.5 / (1 + V2))
    missing = write_run(tmp_path / "other.run", [("q1", "d1"), ("q1", "zz9"), ("q2", "zz8")])
    args_missing = args[:6] + [str(missing)] + args[7:]
    assert main(args_missing) == 2
    err = capsys.readouterr().err
    assert "run 'other' names 2 document(s) absent from the collection" in err
    assert "zz9, zz8" in err or "zz8, zz9" in err
    assert main(args_missing + ["--missing", "neutral"]) == 0
    assert "other: 2 retrieved document(s) absent from the collection" in capsys.readouterr().err


def test_score_reports_on_stderr_only_what_happened(tmp_path, terms, collection, capsys):
    """The whole of stderr: the missing documents of the run that has some (none for the other
    run), the undefined values (TExFAIR without RBDF on a list of one neutral document has no
    exposure to normalise), the rows written; a cut-off of 2³¹ − 1, the largest, is taken."""
    mine = write_run(tmp_path / "mysystem.run", [("q1", "d1"), ("q1", "d2"), ("q1", "d3")])
    other = write_run(tmp_path / "other.run", [("q1", "d1"), ("q1", "zz9"), ("q2", "zz8")])
    out = tmp_path / "scores.csv"
    args = ["score", "--collection", str(collection), "--terms", str(terms), "--run", str(mine),
            "--run", str(other), "--cutoffs", "2,2147483647", "--metrics", "rab_tc,texfair_norbdf",
            "--missing", "neutral", "--workers", "1", "--out", str(out)]  # fmt: skip
    assert main(args) == 0
    assert capsys.readouterr().err == (
        "other: 2 retrieved document(s) absent from the collection, counted as neutral "
        "(--missing neutral)\n"
        "other: texfair_norbdf: 2 undefined value(s) (NaN)\n"
        f"12 rows -> {out}\n"
    )


def test_each_run_is_scored_against_its_own_counterfactual(tmp_path, capsys):
    """``--counterfactual`` files pair with ``--run`` files in order: x with its copy (RBO 1),
    y with its reversal (Webber's Eq. 30 at depth 2, p = 0.9: X₁ = 0, X₂ = 2, so
    (1 − p)/p · (X₂/2 · p²) + X₂/2 · p² = 0.09 + 0.81 = 0.9)."""
    x = write_run(tmp_path / "x.run", [("q1", "d1"), ("q1", "d2")])
    x_cf = write_run(tmp_path / "x_cf.run", [("q1", "d1"), ("q1", "d2")])
    y = write_run(tmp_path / "y.run", [("q1", "d3"), ("q1", "d4")])
    y_cf = write_run(tmp_path / "y_cf.run", [("q1", "d4"), ("q1", "d3")])
    out = tmp_path / "rbo.csv"
    args = ["score", "--run", str(x), "--run", str(y), "--counterfactual", str(x_cf),
            "--counterfactual", str(y_cf), "--metrics", "rbo@2", "--out", str(out)]  # fmt: skip
    assert main(args) == 0
    frame = pd.read_csv(out)
    assert frame.set_index("run")["value"].to_dict() == pytest.approx({"x": 1.0, "y": 0.9})


def test_score_bad_arguments(tmp_path, terms, collection, capsys):
    run = write_run(tmp_path / "r.run", [("q1", "d1")])
    base = ["score", "--collection", str(collection), "--terms", str(terms), "--run", str(run),
            "--workers", "1", "--out", str(tmp_path / "o.csv")]  # fmt: skip
    assert main(base + ["--cutoffs", "5,x"]) == 2
    assert "argument --cutoffs: 'x' is not an integer" in capsys.readouterr().err
    assert main(base + ["--metrics", "nfair"]) == 2
    assert "unknown measure 'nfair'" in capsys.readouterr().err
    bad_run = tmp_path / "bad.run"
    bad_run.write_text("q1 Q0 d1 1\n")
    assert main(base[:6] + [str(bad_run)] + base[7:]) == 2
    assert f"{bad_run}:1:" in capsys.readouterr().err


TAKES_NONE = "no measure of --metrics without its own {0}= takes it (see rankbias metrics); "


@pytest.mark.parametrize(
    ("extra", "message"),
    [
        # each was read and ignored, exit 0: a table without what the option asked for
        (["--tau", "0", "--metrics", "rab_tc"], "--tau: " + TAKES_NONE.format("tau")),
        (["--tau", "1", "--metrics", "awrf"], "--tau: " + TAKES_NONE.format("tau")),
        (["--strict", "--metrics", "nfairr(strict=false)"], "--strict: " + TAKES_NONE.format(
            "strict")),
        (["--distance", "l2", "--metrics", "nfairr"], "--distance: " + TAKES_NONE.format(
            "distance") + "expected it with measures such as awrf, or not at all"),
        (["--background", "BG", "--metrics", "nfairr(background=collection)"],
         "--background: " + TAKES_NONE.format("background")),
        (["--connect-timeout", "5"], "--connect-timeout 5: found --engine local; expected "
         "--engine dask"),
        (["--worker-wait", "2.5"], "--worker-wait 2.5: found --engine local; expected "
         "--engine dask"),
        (["--engine", "dask", "--connect-timeout", "5"], "--connect-timeout 5: applies to "
         "--scheduler ADDRESS, not to the local cluster started without it; expected "
         "--scheduler too"),
    ],
)  # fmt: skip
def test_an_option_no_part_of_the_command_uses_is_refused(
    tmp_path, terms, collection, capsys, extra, message
):
    run = write_run(tmp_path / "r.run", [("q1", "d1"), ("q1", "d2")])
    extra = [str(run) if e == "BG" else e for e in extra]
    out = tmp_path / "o.csv"
    argv = ["score", "--collection", str(collection), "--terms", str(terms), "--run", str(run),
            "--workers", "1", "--out", str(out), *extra]  # fmt: skip
    assert main(argv) == 2
    assert capsys.readouterr().err.startswith(f"rankbias score: error: {message}")
    assert not out.exists()
    # the same options where a measure takes them: scored, and shown in the label
    used = {"--tau": "nfairr", "--strict": "nfairr", "--distance": "awrf", "--background": "nfairr"}
    if extra[0] in used:
        assert main([*argv[:-1], used[extra[0]] + "@2"]) == 0
        labels = set(pd.read_csv(out)["metric"])
        shown = {
            "--tau": {"nfairr(tau=0)", "nfairr"},
            "--strict": {"nfairr(strict=true)"},
            "--distance": {"awrf(distance=l2)"},
            "--background": {"nfairr(background=run)"},
        }
        assert labels <= shown[extra[0]] and len(labels) == 1


TWICE = "rankbias score: error: --metrics: {0} requested more than once (by {1}); expected each "


@pytest.mark.parametrize(
    ("extra", "message"),
    [
        # each was computed once, silently (two spellings of one measure, exit 0)
        (["--metrics", "nfairr(tau=0)@2,NFaiRR(tau=0.0)@2"],
         TWICE.format("nfairr(tau=0)@2", "'nfairr(tau=0)@2', 'NFaiRR(tau=0.0)@2'")),
        (["--metrics", "nfairr(tau=-0)@2,nfairr(tau=0)@2"],
         TWICE.format("nfairr(tau=0)@2", "'nfairr(tau=-0)@2', 'nfairr(tau=0)@2'")),
        (["--metrics", "awrf,awrf@2", "--cutoffs", "1,2"],
         TWICE.format("awrf@2", "'awrf', 'awrf@2'")),
        # --tau rewrites the first into the second
        (["--metrics", "nfairr@2,texfair@2,nfairr(tau=0)@2", "--tau", "0"],
         TWICE.format("nfairr(tau=0)@2", "'nfairr@2', 'nfairr(tau=0)@2'")),
    ],
)  # fmt: skip
def test_a_measure_spelled_twice_is_refused_naming_its_spellings(
    tmp_path, terms, collection, capsys, extra, message
):
    run = write_run(tmp_path / "r.run", [("q1", "d1"), ("q1", "d2")])
    out = tmp_path / "o.csv"
    argv = ["score", "--collection", str(collection), "--terms", str(terms), "--run", str(run),
            "--workers", "1", "--out", str(out), *extra]  # fmt: skip
    assert main(argv) == 2
    assert capsys.readouterr().err == message + "measure once at each cut-off\n"
    assert not out.exists()


@pytest.mark.parametrize("engine", ["local", "dask"])
def test_two_run_files_of_one_name_are_refused_before_anything_is_read(
    tmp_path, terms, engine, capsys
):
    """Runs are named after their files: ``a/bm25.run`` and ``b/bm25.txt`` would be two
    ``bm25`` in the table.  Both files are named before the collection is read (this one has a
    bad line) and before a cluster starts, and nothing is written."""
    (tmp_path / "a").mkdir(), (tmp_path / "b").mkdir()
    first = write_run(tmp_path / "a" / "bm25.run", [("q1", "d1")])
    second = write_run(tmp_path / "b" / "bm25.txt", [("q1", "d2")])
    collection = tmp_path / "c.tsv"
    collection.write_text("d1\tno tab here\td2\n", encoding="utf-8")
    out = tmp_path / "o.csv"
    argv = ["score", "--collection", str(collection), "--terms", str(terms), "--engine", engine,
            "--run", str(first), "--run", str(second), "--out", str(out)]  # fmt: skip
    assert main(argv) == 2
    err = capsys.readouterr().err
    assert f"--run {first} and --run {second} are both run 'bm25'" in err
    assert not out.exists()
    twice = str(first)  # one file given twice, as one string object: two runs 'bm25' all the same
    assert main([*argv[:-6], "--run", twice, "--run", twice, "--out", str(out)]) == 2
    assert f"--run {first} and --run {first} are both run 'bm25'" in capsys.readouterr().err
    other = write_run(tmp_path / "b" / "bm25_rm3.run", [("q1", "d2")])
    assert main([*argv[:-4], "--run", str(other), "--out", str(out)]) == 2
    assert f"{collection}:1:" in capsys.readouterr().err  # distinct names: the collection's error


def test_real_runs_through_the_command(tmp_path):
    if not PUBLIC.is_dir():
        pytest.skip("public data folder absent")
    folder = PUBLIC / "cpjku_fairness_retrieval_results/runs/msmarco_passage"
    runs = [folder / "BM25.run", folder / "tk.run", folder / "bert_L2.run"]
    docids = sorted({line.split()[2] for p in runs for line in p.read_text().splitlines()})
    rng = np.random.default_rng(3)
    words = np.array(["she", "he", "her", "him", "the", "river", "bank", "court", "king"])
    collection = tmp_path / "generated.tsv"
    collection.write_text("".join(f"{d}\t{' '.join(rng.choice(words, 25))}\n" for d in docids))
    public_terms = PUBLIC / "cpjku_fairness_retrieval_results/wordlist_gender_representative.txt"
    out = tmp_path / "scores.csv"
    args = ["score", "--collection", str(collection), "--terms", str(public_terms),
            "--tokenizer", "whitespace", "--background", str(runs[0]), "--metrics", "all",
            "--out", str(out)]  # fmt: skip
    for run in runs:
        args += ["--run", str(run)]
    assert main(args) == 0
    frame = pd.read_csv(out, dtype={"qid": str})
    assert set(frame.run) == {"BM25", "tk", "bert_L2"}
    assert frame.qid.nunique() == 215  # the QS2 queries
    assert set(frame.cutoff) == {5, 10, 20}
    nfairr = frame[frame.metric == "nfairr"].value
    assert nfairr.notna().all() and (nfairr > 0).all()


class FakeDoc:
    def __init__(self, doc_id, text):
        self.doc_id, self.text = doc_id, text


class FakeCorpus:
    def has_docs(self):
        return True

    def docs_iter(self):
        yield FakeDoc("p1", "She met him\tthere")
        yield FakeDoc("p2", "nothing\nhere")
        yield FakeDoc("p3", "he, she")


class FakeIrDatasets:
    @staticmethod
    def load(dataset_id):
        if dataset_id != "fake-corpus":
            raise KeyError(dataset_id)
        return FakeCorpus()


def test_ir_datasets_id_is_read_through_the_package(tmp_path, terms, monkeypatch, capsys):
    monkeypatch.setitem(sys.modules, "ir_datasets", FakeIrDatasets)
    out = tmp_path / "s.csv"
    assert main(["stats", "--collection", "fake-corpus", "--terms", str(terms), "--workers", "1",
                 "--out", str(out)]) == 0  # fmt: skip
    frame = pd.read_csv(out)
    # 'She met him there' (the tab became a space): 4 tokens, f = 1, m = 1; 'nothing here': 2;
    # 'he, she': 2
    assert frame.to_dict("list") == {
        "docid": ["p1", "p2", "p3"], "length": [4, 2, 2], "f": [1, 0, 1], "m": [1, 0, 1],
        "neutrality": [1.0, 1.0, 1.0],
    }  # fmt: skip
    # the whitespace tokenizer reads 'he,' as a token of its own, which no term matches
    assert main(["stats", "--collection", "fake-corpus", "--terms", str(terms), "--workers", "1",
                 "--tokenizer", "whitespace", "--out", str(out)]) == 0  # fmt: skip
    frame = pd.read_csv(out)
    assert frame.f.tolist() == [1, 0, 1] and frame.m.tolist() == [1, 0, 0]
    assert main(["stats", "--collection", "no-such-corpus", "--terms", str(terms),
                 "--out", str(out)]) == 2  # fmt: skip
    assert "not a known ir_datasets id" in capsys.readouterr().err


def test_terms_reads_a_pair_file_like_the_projects_own(tmp_path, collection):
    pairs = tmp_path / "pairs.csv"
    pairs.write_text("female,male\nshe,he\nher,him\n", encoding="utf-8")
    out = tmp_path / "stats.csv"
    assert main(["stats", "--collection", str(collection), "--terms", str(pairs),
                 "--workers", "1", "--out", str(out)]) == 0  # fmt: skip
    frame = pd.read_csv(out, dtype={"docid": str})
    assert list(frame.columns) == ["docid", "length", "f", "m", "neutrality"]
    # by hand: d1 'He said he would', d2 'she and her sister', d3 nothing, d4 'she told him'
    assert frame.f.tolist() == [0, 2, 0, 1] and frame.m.tolist() == [2, 0, 0, 1]


def test_terms_given_the_packaged_pair_file_equals_terms_default(tmp_path, collection):
    packaged = REPO / "src/rankbias/resources/gendered_terms.csv"
    collection.write_text("d1\tthe queen met the king and his wife\nd2\tno one\n", encoding="utf-8")
    outputs = {}
    for terms in ("default", str(packaged)):
        outputs[terms] = tmp_path / f"{len(outputs)}.csv"
        assert main(["stats", "--collection", str(collection), "--terms", terms,
                     "--workers", "1", "--out", str(outputs[terms])]) == 0  # fmt: skip
    by_file, default = (pd.read_csv(p, dtype={"docid": str}) for p in outputs.values())
    pd.testing.assert_frame_equal(by_file, default)
    # queen, wife (f); king, his (m)
    assert default.f.tolist() == [2, 0] and default.m.tolist() == [2, 0]


def test_terms_default_is_a_file_of_that_name_when_one_exists(tmp_path, collection, monkeypatch):
    """``--terms default`` is the packaged list unless a file named ``default`` is where the
    command runs: a path the user gives is never shadowed by the keyword."""
    monkeypatch.chdir(tmp_path)
    (tmp_path / "default").write_text("sister,f\nsaid,m\n", encoding="utf-8")
    out = tmp_path / "stats.csv"
    assert main(["stats", "--collection", str(collection), "--terms", "default",
                 "--workers", "1", "--out", str(out)]) == 0  # fmt: skip
    frame = pd.read_csv(out, dtype={"docid": str})
    # by hand: d1 'He said he would' (said), d2 'she and her sister' (sister)
    assert frame.f.tolist() == [0, 1, 0, 0] and frame.m.tolist() == [1, 0, 0, 0]


def test_terms_a_tokenizer_splits_are_named_ten_at_most(tmp_path, collection, capsys):
    """Terms the tokeniser would split can never be counted: the command says how many, and
    names the first ten; under the whitespace tokeniser each is one token, and nothing is said."""
    terms = tmp_path / "terms.csv"
    split = [f"a-{i}" for i in range(11)] + ["x_y"]
    terms.write_text("she,f\nhe,m\n" + "".join(f"{t},f\n" for t in split), encoding="utf-8")
    for tokenizer, note in [
        ("default", "note: 12 term(s) are not single tokens under the default tokenizer and are "
         "never counted: a-0, a-1, a-10, a-2, a-3, a-4, a-5, a-6, a-7, a-8\n"),
        ("whitespace", ""),
    ]:  # fmt: skip
        out = tmp_path / f"{tokenizer}.csv"
        args = ["--terms", str(terms), "--tokenizer", tokenizer, "--workers", "1"]
        assert main(["stats", "--collection", str(collection), *args, "--out", str(out)]) == 0
        assert capsys.readouterr().err == f"{note}4 documents -> {out}\n"


@pytest.mark.parametrize(("given", "threads"), [(["--workers", "1"], 1), ([], None)])
def test_workers_is_what_the_local_engines_reader_is_given(
    tmp_path, terms, collection, monkeypatch, given, threads
):
    """``--workers N`` is the number of counting threads of the local engine's reader (it
    counts on that many, tests/test_collection.py); without it, ``None``: all cores."""
    from rankbias import collection as reader

    original, seen = reader.iter_blocks, []

    def recording(source, lexicon, tokenizer, per_term, workers, **options):
        seen.append(workers)
        return original(source, lexicon, tokenizer, per_term, workers, **options)

    monkeypatch.setattr(reader, "iter_blocks", recording)
    out = tmp_path / "stats.csv"
    args = ["stats", "--collection", str(collection), "--terms", str(terms), *given]
    assert main([*args, "--out", str(out)]) == 0
    assert seen == [threads]


def test_terms_refuses_a_broken_pair_file_naming_its_line(tmp_path, collection, capsys):
    pairs = tmp_path / "pairs.csv"
    pairs.write_text("female,male\nshe,he\nher,he\n", encoding="utf-8")
    out = tmp_path / "stats.csv"
    assert main(["stats", "--collection", str(collection), "--terms", str(pairs),
                 "--workers", "1", "--out", str(out)]) == 2  # fmt: skip
    assert f"{pairs}:3: term 'he' is already listed on line 2" in capsys.readouterr().err
    assert not out.exists()


def test_stats_threshold_report_and_reserved_labels(tmp_path, capsys):
    """A document with one group term is neutral (Σ_g M_g = 1 ≤ τ = 1: ω = 1, not 1 − 1 = 0);
    the report counts the documents; a group labelled like an output column is refused."""
    collection = tmp_path / "c.tsv"
    collection.write_text("a\tshe said\nb\tnothing here\n")
    terms, clash = tmp_path / "t.csv", tmp_path / "clash.csv"
    terms.write_text("she,f\nhe,m\n")
    clash.write_text("she,neutrality\nhe,m\n")
    out = tmp_path / "s.csv"
    argv = ["stats", "--collection", str(collection), "--out", str(out), "--terms"]
    assert main([*argv, str(terms)]) == 0
    assert pd.read_csv(out).neutrality.tolist() == [1.0, 1.0]
    assert capsys.readouterr().err == f"2 documents -> {out}\n"
    assert main([*argv, str(clash)]) == 2
    assert capsys.readouterr().err == (
        f"rankbias stats: error: {clash}: group label(s) ['neutrality'] clash with output columns\n"
    )


def test_stats_of_an_empty_collection_is_refused_and_writes_nothing(tmp_path, capsys):
    empty, out = tmp_path / "empty.tsv", tmp_path / "s.csv"
    empty.write_bytes(b"")
    argv = ["stats", "--collection", str(empty), "--terms", "default", "--out", str(out)]
    assert main(argv) == 2
    assert capsys.readouterr().err == (
        f"rankbias stats: error: {empty}: the collection is empty; expected documents\n"
    )
    assert list(tmp_path.iterdir()) == [empty]
