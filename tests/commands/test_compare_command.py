"""``rankbias compare`` on the command line: the table ``rankbias score`` writes, in and out."""

from __future__ import annotations

import gzip
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from rankbias.analysis.compare import OUTPUT, compare, read_scores
from rankbias.cli import main
from rankbias.errors import InputError
from rankbias.outputs import write_table

REPO = Path(__file__).resolve().parents[2]
TESTBED = REPO / "data/build/wikisample"


def write_scores(path: Path, shift: float = 0.1, n: int = 40, seed: int = 0) -> Path:
    """Runs "plain", "fair" (plain + shift, jittered) and "noisy" on n queries, as a CSV."""
    rng = np.random.default_rng(seed)
    base = rng.uniform(0.2, 0.8, n)
    jitter = rng.normal(0, 0.02, n)
    fair, noisy = base + shift + jitter - jitter.mean(), base + rng.normal(0, 0.2, n)
    rows = []
    for run, values in (("fair", fair), ("plain", base), ("noisy", noisy)):
        rows += [(run, f"q{i}", "nfairr", 10, v) for i, v in enumerate(values)]
    frame = pd.DataFrame(rows, columns=["run", "qid", "metric", "cutoff", "value"])
    frame.to_csv(path, index=False)
    return path


def test_compare_writes_every_pair_and_shows_a_table(tmp_path, capsys):
    scores = write_scores(tmp_path / "scores.csv")
    out, plot = tmp_path / "cmp.tsv", tmp_path / "forest.svg"
    assert main(["compare", str(scores), "--out", str(out), "--plot", str(plot)]) == 0
    captured = capsys.readouterr()
    table = pd.read_csv(out, sep="\t")
    assert list(table.columns) == list(OUTPUT)
    assert list(zip(table["run_a"], table["run_b"], strict=True)) == [
        ("fair", "plain"),
        ("fair", "noisy"),
        ("plain", "noisy"),
    ]
    fair = table.iloc[0]
    assert fair["diff"] == pytest.approx(0.1) and fair["significant"] and fair["fairer"] == "fair"
    assert "d_z" in captured.out and "fair" in captured.out
    assert "3 comparisons" in captured.err
    assert plot.read_text().lstrip().startswith("<?xml")


def test_baseline_test_and_correction_reach_the_library(tmp_path):
    scores = write_scores(tmp_path / "scores.csv")
    out = tmp_path / "cmp.csv"
    args = ["compare", str(scores), "--out", str(out), "--baseline", "plain", "--test", "t"]
    assert main([*args, "--correction", "none", "-q"]) == 0
    table = pd.read_csv(out)
    assert list(table["run_b"]) == ["plain", "plain"]
    assert set(table["test"]) == {"paired t"}
    assert np.allclose(table["p_adjusted"], table["p_value"])


def test_every_option_reaches_the_library(tmp_path):
    """The command's table is the library's for the same options, byte for byte, and not the
    table of the defaults: resamples, sign flips, seed, confidence, level and correction."""
    scores = write_scores(tmp_path / "scores.csv", shift=0.02)
    options = dict(bootstrap=200, permutations=300, seed=7, confidence=0.9, alpha=0.9)
    argv = [f"--{k}={v}" for k, v in options.items()]
    outs = {name: tmp_path / f"{name}.csv" for name in ("given", "default", "library")}
    args = ["compare", str(scores), "-q", "--out"]
    assert main([*args, str(outs["given"]), *argv, "--correction", "bh"]) == 0
    assert main([*args, str(outs["default"])]) == 0
    table = compare(read_scores(scores), None, "randomisation", correction="bh", **options)
    write_table(outs["library"], table)
    assert outs["given"].read_bytes() == outs["library"].read_bytes()
    given, default = (pd.read_csv(outs[k]) for k in ("given", "default"))
    for column in ("ci_low", "ci_high", "p_value", "p_adjusted"):
        assert not np.allclose(given[column], default[column]), column
    # fair vs noisy: adjusted p ≈ 0.8, significant at the level 0.9 only, and with at most 300
    # sign flips too close to that level to decide: not settled, so not significant
    assert list(given["significant"]) == [True, False, False]
    assert list(given["settled"]) == [True, False, True]
    assert given["fairer"].iloc[1] == "undetermined"
    assert list(default["significant"]) == [True, False, False]
    argv = [a.replace("--permutations=300", "--permutations=3000") for a in argv]
    more = main([*args, str(outs["given"]), *argv, "--correction", "bh"])
    assert more == 0 and list(pd.read_csv(outs["given"])["significant"]) == [True, True, False]


def test_queries_left_out_and_system_level_measures_are_reported(tmp_path, capsys):
    """Run b lacks q8 and q9 and is undefined on q0: 7 queries compared, the 3 others counted by
    reason; a measure with one value per run (qid "all") is named, not tested."""
    rows = [("a", f"q{i}", "nfairr", 10, 0.5 + 0.01 * i) for i in range(10)]
    rows += [("b", f"q{i}", "nfairr", 10, np.nan if i == 0 else 0.4) for i in range(8)]
    rows += [("a", "all", "prf_m", 10, 0.3), ("b", "all", "prf_m", 10, 0.2)]
    scores = tmp_path / "scores.csv"
    pd.DataFrame(rows, columns=["run", "qid", "metric", "cutoff", "value"]).to_csv(
        scores, index=False
    )
    out = tmp_path / "cmp.csv"
    assert main(["compare", str(scores), "--out", str(out), "-q", "--bootstrap", "100"]) == 0
    assert capsys.readouterr().err == (
        "nfairr@10 a vs b: queries left out: 1 undefined (NaN) in either run, 2 only in a\n"
        "system-level measures (one value per run, nothing to test over queries): prf_m\n"
        f"1 comparisons -> {out}\n"
    )
    assert pd.read_csv(out)["n_queries"].tolist() == [7]


def test_a_score_table_from_rankbias_score_round_trips(tmp_path):
    if not (TESTBED / ".complete").exists():
        pytest.skip("needs the testbed (make data)")
    scores = tmp_path / "scores.csv.gz"
    runs = [str(TESTBED / "runs" / f"{name}.run") for name in ("bm25", "dense")]
    measures = "nfairr(tau=0,strict=true),texfair"
    collection = str(TESTBED / "collection.tsv")
    args = ["--collection", collection, "--terms", "default", "--metrics", measures]
    args += ["--run", runs[0], "--run", runs[1], "--cutoffs", "10", "--out", str(scores)]
    assert main(["-q", "score", *args]) == 0
    read = read_scores(scores)
    assert set(read["metric"]) == {"nfairr(tau=0,strict=true)", "texfair"}  # quoted commas
    out = tmp_path / "cmp.csv"
    assert main(["-q", "compare", str(scores), "--out", str(out)]) == 0
    table = pd.read_csv(out)
    assert len(table) == 2 and (table["n_queries"] > 1000).all()
    # every query of either run is counted once: compared, undefined, or in one run only
    for row in table.itertuples():
        union = read.loc[read["metric"] == row.metric, "qid"].nunique()
        assert row.n_queries + row.n_undefined + row.n_only_a + row.n_only_b == union


HEADER = "run,qid,metric,cutoff,value\n"
COLUMNS_EXPECTED = (
    "expected the columns run,qid,metric,cutoff,value (the table rankbias score writes)"
)


@pytest.mark.parametrize(
    ("content", "message"),
    [
        ("", ": the file is empty; expected a header run,qid,metric,cutoff,value"),
        ("run,qid,metric,value\n", f":1: header 'run,qid,metric,value': {COLUMNS_EXPECTED}"),
        ("x" * 130 + "\n", f":1: header '{'x' * 120}': {COLUMNS_EXPECTED}"),  # cut at 120
        (HEADER, ": the table has a header but no data line"),
        (HEADER + "a,q1,nfairr,10\n", ":2: found 4 field(s); expected 5"),
        (HEADER + "a,q1,nfairr,ten,0.5\n", ":2: cutoff 'ten': expected a whole number or nothing"),
        (HEADER + "a,q1,nfairr,10,inf\n",
         ":2: value 'inf': expected a finite decimal number or nothing"),
        (HEADER + "a,q1,nfairr,10,1_0\n",
         ":2: value '1_0': expected a finite decimal number or nothing"),
        (HEADER + "a,,nfairr,10,0.5\n", ":2: empty run, qid or metric; expected an id"),
        (HEADER + "a,q1,nfairr,10,0.5\na,q1,nfairr,10,0.6\n",
         ":3: a, q1, nfairr@10 is already given on line 2; expected each once"),
    ],
)  # fmt: skip
def test_read_scores_refuses_bad_tables_naming_file_and_line(tmp_path, content, message):
    path = tmp_path / "scores.csv"
    path.write_text(content)
    with pytest.raises(InputError) as error:
        read_scores(path)
    assert str(error.value) == f"{path}{message}"


def test_read_scores_reads_tsv_gzip_and_nan(tmp_path):
    path = tmp_path / "scores.tsv.gz"
    with gzip.open(path, "wt") as handle:
        handle.write("run\tqid\tmetric\tcutoff\tvalue\textra\na\tq1\tnfairr\t10\t\tx\n")
        handle.write("a\tq2\tnfairr\t10\t0.25\ty\n")
    read = read_scores(path)
    assert np.isnan(read["value"].iloc[0]) and read["value"].iloc[1] == 0.25
    assert list(read.columns) == ["run", "qid", "metric", "cutoff", "value"]


@pytest.mark.parametrize(
    ("extra", "message"),
    [
        (["--baseline", "bm25"], "baseline 'bm25' is not a run of the scores"),
        (["--metrics", "awrf"], "metric(s) awrf not in the scores"),
        # a bad cut-off is the option's, not the table's
        (
            ["--metrics", "nfairr@x"],
            "--metrics: measure 'nfairr@x': bad cut-off 'x'; expected an "
            "integer from 1 to 2147483647 after '@'",
        ),
        # an empty name was looked up: "metric(s)  not in the scores"
        (["--metrics", ","], "--metrics: measure list ',' has an empty item; expected comma"),
        (["--metrics", ""], "--metrics: measure list '' has an empty item; expected comma"),
        (["--seed", "1", "--seed", "2"], "argument --seed: given twice (1, then 2); expected once"),
        (["--confidence", "95"], "--confidence: '95': expected a number between 0 and 1"),
        (["--alpha", "-0.05"], "--alpha: '-0.05': expected a number between 0 and 1"),
        (["--permutations", "0"], "--permutations"),
        (["--seed", "-1"], "--seed: '-1': expected a whole number"),
        (["--plot", "forest.pdf"], "--plot: 'forest.pdf': expected a file name ending in .png"),
        # read, then ignored: only the randomisation test draws sign flips
        (
            ["--test", "wilcoxon", "--permutations", "100"],
            "--permutations: the wilcoxon test draws no sign flips; expected it only with "
            "--test randomisation",
        ),
        # compared once, silently
        (
            ["--metrics", "nfairr,nfairr"],
            "--metrics: measure list 'nfairr,nfairr' names nfairr twice; expected once",
        ),
    ],
)
def test_bad_options_are_refused_naming_the_option(tmp_path, capsys, extra, message):
    scores = write_scores(tmp_path / "scores.csv")
    code = main(["compare", str(scores), "--out", str(tmp_path / "cmp.csv"), *extra])
    assert code == 2
    err = capsys.readouterr().err
    assert message in err and "Traceback" not in err
    assert not (tmp_path / "cmp.csv").exists()


def test_one_run_only_is_refused(tmp_path, capsys):
    scores = tmp_path / "scores.csv"
    scores.write_text("run,qid,metric,cutoff,value\na,q1,nfairr,10,0.5\na,q2,nfairr,10,0.4\n")
    assert main(["compare", str(scores), "--out", str(tmp_path / "cmp.csv")]) == 2
    assert "expected two or more runs to compare" in capsys.readouterr().err


def test_the_terminal_shows_each_runs_undefined_queries_and_why_a_pair_is_undetermined(
    tmp_path, capsys
):
    """A run undefined on 12 of 40 queries (rND with no protected document in its top 10),
    lower where defined: the terminal shows 12 and 0 and says why there is no verdict."""
    base = np.linspace(0.2, 0.6, 40)
    rows = [("bm25", f"q{i}", "rnd", 10, v) for i, v in enumerate(base)]
    rows += [("biased", f"q{i}", "rnd", 10, np.nan if i < 12 else v - 0.1)
             for i, v in enumerate(base)]  # fmt: skip
    path = tmp_path / "scores.csv"
    pd.DataFrame(rows, columns=["run", "qid", "metric", "cutoff", "value"]).to_csv(
        path, index=False
    )
    assert main(["compare", str(path), "--out", str(tmp_path / "cmp.csv")]) == 0
    out = capsys.readouterr().out
    header, row = out.splitlines()[:2]
    assert header.split() == ["metric", "cutoff", "run_a", "run_b", "n", "undef_a", "undef_b",
                              "diff", "ci_low", "ci_high", "d_z", "p", "(adjusted)",
                              "significant", "fairer"]  # fmt: skip
    assert row.split()[:7] == ["rnd", "10", "bm25", "biased", "28", "0", "12"]
    assert row.split()[-1] == "undetermined"
    assert out.splitlines()[2].startswith(
        "rnd@10 bm25 vs biased: undetermined: undefined on 0 of 40 queries for bm25 and 12 for "
        "biased (rates differ by more than 0.05): the means compare different queries; NaN when"
    )
    assert "rnd(step=10)@20" in out


def test_absolute_compares_signed_measures_on_their_magnitude(tmp_path):
    noise = np.random.default_rng(3).normal(0, 0.01, 30)
    rows = [(run, f"q{i}", "arab_tc", 10, v + shift) for run, shift in (("male", -0.4),
            ("female", 0.1)) for i, v in enumerate(noise)]  # fmt: skip
    path = tmp_path / "scores.csv"
    pd.DataFrame(rows, columns=["run", "qid", "metric", "cutoff", "value"]).to_csv(
        path, index=False
    )
    out = tmp_path / "cmp.csv"
    assert main(["compare", str(path), "--out", str(out), "-q"]) == 0
    assert pd.read_csv(out).iloc[0][["scale", "fairer"]].fillna("").tolist() == ["value", ""]
    assert main(["compare", str(path), "--out", str(out), "-q", "--absolute"]) == 0
    assert pd.read_csv(out).iloc[0][["scale", "fairer"]].tolist() == ["|value|", "female"]
