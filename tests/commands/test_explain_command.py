"""``rankbias explain`` on the command line, on the testbed."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from rankbias.cli import main

TESTBED = Path(__file__).resolve().parents[2] / "data" / "build" / "wikisample"
BM25 = TESTBED / "runs" / "bm25.run"
pytestmark = pytest.mark.skipif(
    not (TESTBED / ".complete").exists(), reason="needs the testbed (make data)"
)


def base(tmp_path, *extra):
    return [
        "explain",
        "--collection",
        str(TESTBED / "collection.tsv"),
        "--terms",
        "default",
        "--run",
        str(TESTBED / "runs" / "bm25.run"),
        "--out",
        str(tmp_path / "explained.csv"),
        *extra,
    ]


def test_explain_writes_a_row_per_document_that_adds_up_to_score(tmp_path, capsys):
    args = base(tmp_path, "--qid", "q0007", "--qid", "q0006", "--metrics", "nfairr@10,texfair@5")
    plot = tmp_path / "strips.png"
    assert main(["-q", *args, "--top-terms", "3", "--plot", str(plot)]) == 0
    table = pd.read_csv(tmp_path / "explained.csv", dtype={"qid": str})
    assert len(table) == 2 * (10 + 5)
    assert set(table["kind"]) == {"exact", "shapley (exact over 32 sets)"}
    scores = tmp_path / "scores.csv"
    run = str(TESTBED / "runs" / "bm25.run")
    assert (
        main(
            [
                "-q",
                "score",
                "--collection",
                str(TESTBED / "collection.tsv"),
                "--terms",
                "default",
                "--run",
                run,
                "--metrics",
                "nfairr",
                "--cutoffs",
                "10",
                "--out",
                str(scores),
            ]
        )
        == 0
    )
    scored = pd.read_csv(scores).set_index("qid")["value"]
    nfairr = table[table["metric"] == "nfairr"].groupby("qid")["contribution"].sum()
    assert nfairr["q0007"] == pytest.approx(scored["q0007"], abs=1e-9)
    out = capsys.readouterr().out
    assert "q0007: the terms that weigh most in the top 10" in out
    assert plot.read_bytes()[:4] == b"\x89PNG"


@pytest.mark.parametrize(
    ("extra", "message"),
    [
        (["--qid", "nope", "--metrics", "nfairr@10"], "--qid nope: not a query of the run"),
        (["--qid", "q0007", "--metrics", "nfairr"], "expected a cut-off"),
        (["--qid", "q0007", "--metrics", "duo@10"], "explain covers RaB, ARaB"),
        (
            ["--qid", "q0007", "--metrics", "nfairr(background=run)@10"],
            "reads a background run, which was not supplied; expected background=<Run> "
            "(--background RUN)",
        ),
        (["--qid", "q0007", "--metrics", "nfairr@10", "--engine", "dask"], "--engine dask"),
        # read, then ignored: nfairr@10 is against the collection
        (
            ["--qid", "q0007", "--metrics", "nfairr@10", "--background", str(BM25)],
            f"--background {BM25}: no measure of --metrics reads it; expected one with "
            "background=run, e.g. nfairr(background=run)@10",
        ),
        # one run is explained: the first of two was dropped
        (
            ["--qid", "q0007", "--metrics", "nfairr@10", "--run", str(BM25)],
            "argument --run: given twice (",
        ),
        (["--qid", "q0007", "--metrics", "nfairr@10", "--plot", "x.pdf"], "--plot"),
        # exact shares and Shapley values over 10 documents draw no random orders: the options
        # were ignored
        (
            ["--qid", "q0007", "--metrics", "nfairr@10,awrf@10", "--seed", "3"],
            "--seed: no measure of --metrics is a Shapley value over more than 10 documents "
            "(AWRF, TED, TExFAIR or RBDF with a cut-off above 10), which alone draw random "
            "orders; expected it only with one",
        ),
        (
            ["--qid", "q0007", "--metrics", "texfair@5", "--permutations", "50"],
            "--permutations: no measure of --metrics is a Shapley value over more than 10",
        ),
        # computed once, silently
        (
            ["--qid", "q0007", "--qid", "q0007", "--metrics", "nfairr@10"],
            "--qid q0007: given twice; expected each query once",
        ),
        (
            ["--qid", "q0007", "--metrics", "awrf@20,awrf@20"],
            "--metrics: measure list 'awrf@20,awrf@20' names awrf@20 twice; expected once",
        ),
        (
            ["--qid", "q0007", "--metrics", "awrf@20,nfairr@5,AWRF@20"],
            "--metrics: awrf@20 requested more than once (by 'awrf@20', 'AWRF@20'); expected "
            "each measure once at each cut-off",
        ),
    ],
)
def test_bad_requests_are_refused_naming_the_option(tmp_path, capsys, extra, message):
    assert main(base(tmp_path, *extra)) == 2
    err = capsys.readouterr().err
    assert message in err and "Traceback" not in err
    assert not (tmp_path / "explained.csv").exists()


def test_a_run_or_background_that_does_not_fit_is_named_by_its_option(tmp_path, capsys):
    """Both were refused as '--metrics …:', and a document missing from the collection with a
    hint to --missing, an option explain does not have."""
    lines = BM25.read_text().splitlines(keepends=True)
    (tmp_path / "short.run").write_text("".join(x for x in lines if x.startswith("q0007 ")))
    (tmp_path / "stray.run").write_text(lines[0].replace(lines[0].split()[2], "nosuchdoc"))
    explained = ["--qid", "q0001", "--metrics", "nfairr(background=run)@10"]
    for args, option, message in [
        (["--background", str(tmp_path / "short.run")], f"--background {tmp_path}/short.run",
         "run 'short' has no documents for 1 query(ies) of run 'bm25', e.g. q0001; expected a "
         "background list for every scored query"),
        (["--background", str(tmp_path / "stray.run")], f"--background {tmp_path}/stray.run",
         "run 'stray' names 1 document(s) absent from the collection (1 retrieved row(s)), e.g. "
         "nosuchdoc; expected every docid in the collection"),
    ]:  # fmt: skip
        assert main(base(tmp_path, *explained, *args)) == 2
        assert capsys.readouterr().err == f"rankbias explain: error: {option}: {message}\n"
    stray = [*base(tmp_path, "--qid", "q0001", "--metrics", "nfairr@10")]
    stray[stray.index(str(BM25))] = str(tmp_path / "stray.run")
    assert main(stray) == 2
    assert capsys.readouterr().err == (
        f"rankbias explain: error: --run {tmp_path}/stray.run: run 'stray' names 1 document(s) "
        "absent from the collection (1 retrieved row(s)), e.g. nosuchdoc; expected every docid "
        "in the collection\n"
    )
    assert not (tmp_path / "explained.csv").exists()


def test_a_background_run_is_read_for_the_measures_that_take_one(tmp_path, capsys):
    """``nfairr(background=run)`` with ``--background`` (here the first three documents of each
    list, fewer than the cut-off): the contributions add up to the value ``rankbias score`` gives
    with the same background, which differs from the value against the collection."""
    rows = (TESTBED / "runs" / "bm25.run").read_text().splitlines()
    background = tmp_path / "top3.run"
    background.write_text("".join(f"{r}\n" for r in rows if int(r.split()[3]) <= 3))
    request = ["--qid", "q0007", "--metrics", "nfairr(background=run)@10,nfairr@10"]
    assert main(["-q", *base(tmp_path, *request, "--background", str(background))]) == 0
    explained = pd.read_csv(tmp_path / "explained.csv").groupby("metric")["contribution"].sum()
    scores = tmp_path / "scores.csv"
    args = ["-q", "score", "--collection", str(TESTBED / "collection.tsv"), "--terms", "default",
            "--run", str(TESTBED / "runs" / "bm25.run"), "--background", str(background),
            "--metrics", "nfairr@10,nfairr(background=collection)@10",
            "--out", str(scores)]  # fmt: skip
    assert main(args) == 0
    scored = pd.read_csv(scores, dtype={"qid": str}).set_index(["qid", "metric"])["value"]
    on_run, on_collection = scored["q0007", "nfairr(background=run)"], scored["q0007", "nfairr"]
    assert explained["nfairr(background=run)"] == pytest.approx(on_run, abs=1e-9)
    assert explained["nfairr"] == pytest.approx(on_collection, abs=1e-9)
    assert abs(on_run - on_collection) > 0.01


def test_permutations_and_seed_reach_a_sampled_shapley_estimate(tmp_path):
    def contributions(*options):
        args = base(tmp_path, "--qid", "q0007", "--metrics", "awrf@20", *options)
        assert main(["-q", *args]) == 0
        return pd.read_csv(tmp_path / "explained.csv")

    default = contributions()
    assert set(default["kind"]) == {"shapley (mean of 1000 orders)"}
    assert default.equals(contributions("--seed", "0", "--permutations", "1000"))
    assert not np.allclose(contributions("--seed", "7")["contribution"], default["contribution"])
    other = contributions("--seed", "7", "--permutations", "40")
    assert set(other["kind"]) == {"shapley (mean of 40 orders)"}
    assert not np.allclose(other["contribution"], default["contribution"])
    # Shapley values add up to the value minus the baseline whatever the orders drawn
    for table in (default, other):
        total = table["contribution"].sum()
        assert total == pytest.approx(table["value"].iloc[0] - table["baseline"].iloc[0])


def test_the_paper_term_frequency_variant_reads_per_term_counts(tmp_path):
    """RaB with magnitude=tf_paper needs each term's count: the command asks the collection
    for them (without --top-terms too), and the contributions add up to the value."""
    args = base(tmp_path, "--qid", "q0007", "--metrics", "rab(magnitude=tf_paper)@5")
    assert main(["-q", *args]) == 0
    table = pd.read_csv(tmp_path / "explained.csv")
    assert len(table) == 5 and set(table["metric"]) == {"rab_tf_paper"}
    assert table["contribution"].sum() == pytest.approx(table["value"].iloc[0])
