"""Bad input through the `rankbias` command, as a user meets it: the default worker pool,
exit status 2, and one message naming the file, the line or id, and what was expected."""

from __future__ import annotations

import pytest

from rankbias.cli import main


@pytest.fixture
def files(tmp_path):
    (tmp_path / "c.tsv").write_text("d1\tshe said he\nd2\tthe man\n", encoding="utf-8")
    (tmp_path / "t.csv").write_text("she,f\nhe,m\nman,m\n", encoding="utf-8")
    return tmp_path


def run_cli(args, capsys):
    status = main([str(a) for a in args])
    return status, capsys.readouterr().err


@pytest.mark.parametrize(
    ("content", "message"),
    [
        (b"d1\tok\nd2\t\n", r"c2.tsv:2: document 'd2' has no text"),
        (b"d1\tok\nd2\tbad \xff byte\n", r"c2.tsv:2: byte 0xff .* is not valid UTF-8"),
        (b"d1\tok\nd2 no tab\n", r"c2.tsv:2:"),
    ],
)
def test_bad_collection_lines_through_the_worker_pool(files, capsys, content, message):
    import re

    (files / "c2.tsv").write_bytes(content * 1)
    status, err = run_cli(
        [
            "stats",
            "--collection",
            files / "c2.tsv",
            "--terms",
            files / "t.csv",
            "--out",
            files / "s.csv",
        ],
        capsys,
    )
    assert status == 2
    assert re.search(message, err), err


def test_duplicate_term_across_groups(files, capsys):
    (files / "dup.csv").write_text("she,f\nshe,m\n")
    status, err = run_cli(
        [
            "stats",
            "--collection",
            files / "c.tsv",
            "--terms",
            files / "dup.csv",
            "--out",
            files / "s.csv",
        ],
        capsys,
    )
    assert status == 2
    assert "dup.csv:2: term 'she'" in err


def score_args(files, collection, run, *extra):
    """``rankbias score`` on ``files/collection`` with the fixture's word list."""
    return ["score", "--collection", files / collection, "--terms", files / "t.csv",
            "--run", files / run, *extra]  # fmt: skip


def test_missing_documents_are_an_error_or_counted(files, capsys):
    (files / "r.run").write_text("q1 Q0 d1 1 2 x\nq1 Q0 d9 2 1 x\n")
    args = score_args(files, "c.tsv", "r.run", "--out", files / "o.csv")
    status, err = run_cli(args, capsys)
    assert status == 2
    assert "1 document(s) absent from the collection" in err and "d9" in err
    assert "--missing neutral" in err
    status, err = run_cli([*args, "--missing", "neutral"], capsys)
    assert status == 0
    assert "1 retrieved document(s) absent from the collection, counted as neutral" in err


def scored_value(files, capsys, args, metric):
    """Run ``rankbias score`` and return the one value of ``metric`` it wrote."""
    import pandas as pd

    assert run_cli([*args, "--out", files / "o.csv"], capsys)[0] == 0
    table = pd.read_csv(files / "o.csv")
    return table.loc[table["metric"] == metric, "value"].item()


def test_file_order_changes_what_is_scored(files, capsys):
    # d2 ("the man", one male term) is listed first but scores lower than d1
    (files / "r.run").write_text("q1 Q0 d2 1 1.0 x\nq1 Q0 d1 2 2.0 x\n")
    args = score_args(files, "c.tsv", "r.run", "--metrics", "rab_tc", "--cutoffs", "1")
    # by score d1 ("she said he": one f, one m) is first: RaB@1 = 1 - 1 = 0
    assert scored_value(files, capsys, args, "rab_tc") == 0.0
    # by file order d2 ("the man") is first: RaB@1 = 1 - 0 = 1
    assert scored_value(files, capsys, [*args, "--order", "file"], "rab_tc") == 1.0


def test_background_depth_changes_the_normaliser(files, capsys):
    import numpy as np

    # d3 "he he" has omega = 1 - (|0 - .5| + |1 - .5|) = 0; d4 has no term, omega = 1
    (files / "c3.tsv").write_text("d3\the he\nd4\tplain text\n")
    (files / "r3.run").write_text("q1 Q0 d4 1 1.0 x\n")
    (files / "bg3.run").write_text("q1 Q0 d3 1 2.0 x\nq1 Q0 d4 2 1.0 x\n")
    args = score_args(files, "c3.tsv", "r3.run", "--metrics", "nfairr", "--cutoffs", "1",
                      "--background", files / "bg3.run")  # fmt: skip
    # whole background: IFaiRR@1 = max omega = 1, NFaiRR@1 = omega(d4) / 1 = 1
    label = "nfairr(background=run)"  # --background RUN sets the measure's background
    assert scored_value(files, capsys, args, label) == 1.0
    # first background document only: IFaiRR@1 = omega(d3) = 0, so NFaiRR@1 is undefined
    assert np.isnan(scored_value(files, capsys, [*args, "--background-depth", "1"], label))


@pytest.mark.parametrize("engine", ["local", "dask"])
def test_a_background_run_that_does_not_fit_is_named_by_its_option_and_file(files, capsys, engine):
    """Both messages named the run by its name in the library's words ('background run …')."""
    (files / "r.run").write_text("q1 Q0 d1 1 2 x\nq2 Q0 d2 1 1 x\n")
    (files / "short.run").write_text("q1 Q0 d2 1 2 x\n")
    (files / "stray.run").write_text("q1 Q0 d9 1 2 x\nq2 Q0 d1 1 1 x\n")
    base = score_args(files, "c.tsv", "r.run", "--metrics", "nfairr(background=run)@1",
                      "--engine", engine, "--workers", "1", "--out", files / "o.csv")  # fmt: skip
    for run, message in [
        ("short", "has no documents for 1 query(ies) of run 'r', e.g. q2; expected a background "
         "list for every scored query"),
        ("stray", "names 1 document(s) absent from the collection (1 retrieved row(s)), e.g. d9; "),
    ]:  # fmt: skip
        status, err = run_cli([*base, "--background", files / f"{run}.run"], capsys)
        head = f"rankbias score: error: --background {files / run}.run: run '{run}' "
        assert status == 2 and err.startswith(head + message), err
        assert not (files / "o.csv").exists()


def test_runs_are_read_while_the_collection_is_counted_and_their_errors_come_first(files, capsys):
    """`score` reads the run files on a thread while it counts the collection; a bad run file
    is reported as when the runs were read first, also when the collection is bad too, and a
    bad collection alone is reported as a bad collection."""
    (files / "good.run").write_text("q1 Q0 d1 1 2 x\nq1 Q0 d2 2 1 x\n")
    (files / "bad.run").write_text("q1 Q0 d1 1 2 x\nq1 Q0 d2 two 1 x\n")
    # a collection of many blocks, bad on its last line
    lines = "".join(f"d{i}\tshe said he and the man\n" for i in range(1, 300_000))
    (files / "big_bad.tsv").write_text(lines + "dX\t\n", encoding="utf-8")
    for collection, run, where in [
        ("c.tsv", "bad.run", "bad.run:2: rank 'two'"),
        ("big_bad.tsv", "bad.run", "bad.run:2: rank 'two'"),
        ("big_bad.tsv", "good.run", "big_bad.tsv:300000: document 'dX' has no text"),
    ]:
        status, err = run_cli(
            [*score_args(files, collection, run), "--out", files / "o.csv"], capsys
        )
        assert status == 2
        assert where in err, err
        assert not (files / "o.csv").exists()


def test_the_shorthand_options_become_the_measures_parameters(files, capsys):
    """--tau, --strict and --distance set the parameter of every measure that declares it,
    and a value other than the default is in the label."""
    (files / "c4.tsv").write_text("d1\tthe man\nd2\tno terms here\n")
    (files / "r4.run").write_text("q1 Q0 d1 1 2 x\n")
    args = score_args(files, "c4.tsv", "r4.run", "--metrics", "fairr,awrf", "--cutoffs", "1")
    # one male term: neutral under τ = 1 (ω = 1); under τ = 0, or τ = 1 strictly, ω = 0
    assert scored_value(files, capsys, args, "fairr") == 1.0
    assert scored_value(files, capsys, [*args, "--tau", "0"], "fairr(tau=0)") == 0.0
    assert scored_value(files, capsys, [*args, "--strict"], "fairr(strict=true)") == 0.0
    # AWRF of one all-male document against (1/2, 1/2): L1 = 1, L2 = sqrt(1/2)
    assert scored_value(files, capsys, args, "awrf") == pytest.approx(1.0)
    distance = scored_value(files, capsys, [*args, "--distance", "l2"], "awrf(distance=l2)")
    assert distance == pytest.approx(0.5**0.5)
    # a parameter the measure sets itself wins over the shorthand, which sets the others'
    metrics = ["--metrics", "fairr(tau=2),nfairr", "--cutoffs", "1"]
    args = score_args(files, "c4.tsv", "r4.run", *metrics, "--tau", "0")
    assert scored_value(files, capsys, args, "fairr(tau=2)") == 1.0
    assert scored_value(files, capsys, args, "nfairr(tau=0)") == 0.0
    # with no measure left to set, the shorthand is refused, not ignored
    args = score_args(files, "c4.tsv", "r4.run", "--metrics", "fairr(tau=2)", "--tau", "0")
    status, err = run_cli([*args, "--out", files / "o.csv"], capsys)
    assert status == 2 and "--tau: no measure of --metrics without its own tau= takes it" in err
