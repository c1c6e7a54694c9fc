"""Paired comparisons of systems (rankbias.analysis.compare), on generated score tables with
known differences, against scipy's and statsmodels' own implementations."""

import itertools
from fractions import Fraction

import numpy as np
import pandas as pd
import PIL.Image
import pytest
from scipy import stats

from rankbias.analysis.compare import (
    OUTPUT,
    check_scores,
    compare,
    forest_plot,
    read_scores,
    sign_flip_test,
)
from rankbias.errors import InputError


def tidy(values: dict, metric="nfairr", cutoff=10) -> pd.DataFrame:
    """A score table from {run: per-query values} (queries q0, q1, …; NaN kept)."""
    return pd.DataFrame(
        [
            {"run": run, "qid": f"q{i}", "metric": metric, "cutoff": cutoff, "value": v}
            for run, column in values.items()
            for i, v in enumerate(column)
        ]
    )


def test_a_planted_difference_of_0_1_on_60_queries_is_found():
    rng = np.random.default_rng(42)
    base = rng.uniform(0.3, 0.7, 60)
    noise = rng.normal(0, 0.05, 60)
    noise -= noise.mean()  # the sample difference is exactly the planted 0.1
    table = compare(tidy({"fair": base + 0.1 + noise, "less_fair": base}), seed=1)
    row = table.iloc[0]
    assert (row["run_a"], row["run_b"], row["n_queries"]) == ("fair", "less_fair", 60)
    assert row["diff"] == pytest.approx(0.1)
    assert row["ci_low"] < 0.1 < row["ci_high"] and row["ci_high"] - row["ci_low"] < 0.05
    assert row["p_value"] < 1e-3 and row["significant"]
    assert row["test"] == "randomisation (10,000 sign flips)"
    assert row["effect_size"] == pytest.approx(0.1 / np.std(noise, ddof=1))
    assert row["fairer"] == "fair"  # NFaiRR: higher is fairer


def test_the_exact_test_on_10_queries_is_scipys_exact_permutation_test():
    rng = np.random.default_rng(7)
    for _ in range(5):
        a, b = rng.uniform(0, 1, 10), rng.uniform(0, 1, 10)
        expected = stats.permutation_test(
            (a, b),
            lambda x, y: np.mean(x - y),
            permutation_type="samples",
            n_resamples=np.inf,
            alternative="two-sided",
        ).pvalue
        ours = compare(tidy({"a": a, "b": b})).iloc[0]
        assert ours["test"] == "randomisation (exact)"
        assert abs(ours["p_value"] - expected) < 0.02
        assert ours["p_value"] == pytest.approx(expected, abs=1e-12)


def test_the_monte_carlo_test_is_close_to_the_exact_one():
    rng = np.random.default_rng(3)
    d = rng.normal(0.15, 0.5, 18)  # more than 16 queries: Monte Carlo
    signs = 1 - 2 * ((np.arange(2**18)[:, None] >> np.arange(18)) & 1)  # all 2**18 patterns
    exact = np.mean(np.abs(signs @ d) / 18 >= abs(d.mean()) - 1e-12)
    p, is_exact = sign_flip_test(d, 20_000, np.random.default_rng(0))
    assert not is_exact and abs(p - exact) < 0.01 and 0.01 < exact < 0.99


def test_no_difference_gives_alpha_false_positives_and_at_most_one_after_holm():
    rng = np.random.default_rng(11)
    frames = []
    for k in range(100):  # 100 metric/cut-off pairs, two runs drawn from one distribution
        frames.append(tidy({"a": rng.normal(0, 1, 30), "b": rng.normal(0, 1, 30)}, "nfairr", k + 1))
    table = compare(pd.concat(frames), permutations=2_000, bootstrap=200, seed=0)
    assert len(table) == 100
    unadjusted = int((table["p_value"] < 0.05).sum())
    assert 1 <= unadjusted <= 12  # binomial(100, 0.05): 1–12 holds with probability 0.998
    assert int(table["significant"].sum()) <= 1
    assert (table["p_adjusted"] >= table["p_value"]).all()


def test_t_and_wilcoxon_are_scipys():
    rng = np.random.default_rng(5)
    a, b = rng.uniform(0, 1, 25), rng.uniform(0, 1, 25)
    t = compare(tidy({"a": a, "b": b}), test="t").iloc[0]
    w = compare(tidy({"a": a, "b": b}), test="wilcoxon").iloc[0]
    assert t["p_value"] == pytest.approx(stats.ttest_rel(a, b).pvalue)
    assert w["p_value"] == pytest.approx(stats.wilcoxon(a, b).pvalue)
    assert (t["test"], w["test"]) == ("paired t", "wilcoxon")


def test_the_correction_runs_over_every_comparison_of_the_call():
    rng = np.random.default_rng(2)
    frames = [
        tidy({"a": rng.uniform(0, 1, 12) + shift, "b": rng.uniform(0, 1, 12)}, "nfairr", k)
        for k, shift in ((5, 0.5), (10, 0.05), (20, 0.0))
    ]
    none = compare(pd.concat(frames), correction="none")
    holm = compare(pd.concat(frames), correction="holm")
    bonferroni = compare(pd.concat(frames), correction="bonferroni")
    assert np.allclose(none["p_adjusted"], none["p_value"])
    assert np.allclose(bonferroni["p_adjusted"], np.minimum(1, 3 * none["p_value"]))
    order = np.argsort(none["p_value"].to_numpy())
    by_hand = np.maximum.accumulate(np.minimum(1, (3 - np.arange(3)) * none["p_value"].iloc[order]))
    assert np.allclose(holm["p_adjusted"].iloc[order], by_hand)
    bh = compare(pd.concat(frames), correction="bh")
    ranked = none["p_value"].iloc[order].to_numpy() * 3 / np.arange(1, 4)
    by_hand = np.minimum(1, np.minimum.accumulate(ranked[::-1])[::-1])
    assert np.allclose(bh["p_adjusted"].iloc[order], by_hand)


def test_fairer_follows_the_measures_direction_and_says_why_when_there_is_no_verdict():
    up, down = np.linspace(0.5, 0.9, 8), np.linspace(0.1, 0.5, 8)
    rows = {
        metric: tuple(compare(tidy({"x": up, "y": down}, metric)).iloc[0][["fairer", "why"]])
        for metric in ("nfairr", "awrf", "rab", "rbdf", "nDCG")
    }
    p = 1 / 256  # exact: only the observed signs and their mirror reach |mean| 0.4
    assert rows == {
        "nfairr": ("x", f"higher is fairer; adjusted p = {2 * p:.3g}"),
        "awrf": ("y", f"lower is fairer; adjusted p = {2 * p:.3g}"),
        "rab": (
            "",
            "signed measure: the sign says which group is favoured; compare |value| to judge",
        ),
        "rbdf": ("", "not a fairness score"),
        "nDCG": ("", "unknown direction: not a registered measure"),
    }
    row = compare(tidy({"x": up, "y": up})).iloc[0]
    assert (row["fairer"], row["why"]) == (
        "no detectable difference",
        ("adjusted p = 1 > alpha; the interval [0, 0] holds the differences the data allow"),
    )


def test_undefined_values_and_missing_queries_are_counted():
    scores = pd.concat(
        [
            tidy({"a": [0.1, np.nan, 0.3, 0.4, 0.5, 0.6], "b": [0.2, 0.2, np.nan, 0.1, 0.3, 0.4]}),
            pd.DataFrame([{"run": "a", "qid": "qa", "metric": "nfairr", "cutoff": 10, "value": 1}]),
            pd.DataFrame([{"run": "b", "qid": "qb", "metric": "nfairr", "cutoff": 10, "value": 1}]),
            pd.DataFrame([{"run": "b", "qid": "qc", "metric": "nfairr", "cutoff": 10, "value": 1}]),
        ]
    )
    row = compare(scores).iloc[0]
    assert (row["n_queries"], row["n_undefined"], row["n_only_a"], row["n_only_b"]) == (4, 2, 1, 2)
    assert row["mean_a"] == pytest.approx(np.mean([0.1, 0.4, 0.5, 0.6]))
    assert row["mean_b"] == pytest.approx(np.mean([0.2, 0.1, 0.3, 0.4]))


def test_pairs_and_baseline():
    rng = np.random.default_rng(0)
    scores = tidy({run: rng.uniform(0, 1, 5) for run in ("bm25", "dense", "hybrid")})
    every = compare(scores)
    assert list(zip(every["run_a"], every["run_b"], strict=True)) == [
        ("bm25", "dense"),
        ("bm25", "hybrid"),
        ("dense", "hybrid"),
    ]
    against = compare(scores, baseline="bm25")
    assert list(zip(against["run_a"], against["run_b"], strict=True)) == [
        ("dense", "bm25"),
        ("hybrid", "bm25"),
    ]
    assert list(against.columns) == list(OUTPUT)


def test_system_level_rows_are_listed_apart():
    scores = pd.concat(
        [
            tidy({"a": [0.1, 0.2], "b": [0.2, 0.3]}),
            pd.DataFrame({"run": ["a", "b"], "qid": "all", "metric": "delta_a_prf", "cutoff": 10,
                          "value": [0.1, 0.2]}),
        ]
    )  # fmt: skip
    table = compare(scores)
    assert set(table["metric"]) == {"nfairr"}
    assert table.attrs["system_level"] == ["delta_a_prf"]


def test_the_same_seed_gives_the_same_table():
    rng = np.random.default_rng(9)
    scores = tidy({"a": rng.uniform(0, 1, 40), "b": rng.uniform(0, 1, 40)})
    pd.testing.assert_frame_equal(compare(scores, seed=4), compare(scores, seed=4))
    assert compare(scores, seed=4)["ci_low"].iloc[0] != compare(scores, seed=5)["ci_low"].iloc[0]


@pytest.mark.parametrize(
    ("call", "message"),
    [
        (lambda s: compare(s[s["run"] == "a"]), "expected two or more runs"),
        (lambda s: compare(s, baseline="bm25"), "baseline 'bm25' is not a run"),
        (lambda s: compare(s.drop(columns="value")), "no column(s) value"),
        (
            lambda s: compare(s, test="z"),
            "test: expected one of 'randomisation', 't', 'wilcoxon', found 'z'",
        ),
        (
            lambda s: compare(s, correction="sidak"),
            "correction: expected one of 'holm', 'bonferroni', 'bh', 'none', found 'sidak'",
        ),
        (lambda s: compare(s, permutations=0), "permutations: expected a positive integer"),
        (lambda s: compare(s, confidence=95), "confidence: expected a number between 0 and 1"),
        (lambda s: compare(s, metrics=["texfair"]), "metric(s) texfair not in the scores"),
        (lambda s: compare(pd.concat([s, s])), "is given twice"),
        (lambda s: compare(s.assign(value="high")), "expected integer cutoffs and numeric"),
        (lambda s: compare(s.assign(value=np.inf)), "expected finite"),
    ],
)
def test_bad_input_is_refused_naming_what_is_wrong(call, message):
    scores = tidy({"a": [0.1, 0.2, 0.3], "b": [0.2, 0.2, 0.2]})
    with pytest.raises((ValueError, InputError)) as error:
        call(scores)
    assert message in str(error.value)


def test_metrics_selects_a_measure_at_all_its_cut_offs_or_at_one():
    """``nfairr@10`` was 'not in the scores' although compare prints its rows under that label;
    a measure without a cut-off (NA) is kept apart from every ``@k``."""
    values = {"a": [0.1, 0.2, 0.3], "b": [0.2, 0.2, 0.2]}
    scores = pd.concat(
        [
            tidy(values, "nfairr", 5),
            tidy(values, "nfairr", 10),
            tidy(values, "awrf", 10),
            tidy(values, "ap", None),
            tidy(values, "P@10", None),
        ]
    )  # fmt: skip (a name with '@' of its own)
    chosen = {
        "nfairr@10": [("nfairr", 10)],
        "nfairr": [("nfairr", 5), ("nfairr", 10)],
        "nfairr@5,awrf@10": [("nfairr", 5), ("awrf", 10)],
        "ap": [("ap", None)],
        "P@10": [("P@10", None)],
    }
    for text, expected in chosen.items():
        table = compare(scores, metrics=text.split(","), permutations=10, bootstrap=10)
        pairs = zip(table.metric, table.cutoff, strict=True)
        found = [(m, None if pd.isna(k) else int(k)) for m, k in pairs]
        assert sorted(found, key=str) == sorted(expected, key=str)
    with pytest.raises(InputError) as info:
        compare(scores, metrics=["nfairr@20", "awrf@10", "ap@10"])
    assert str(info.value) == (
        "metric(s) ap@10, nfairr@20 not in the scores; expected P@10, ap, awrf, nfairr (name@k: at "
        "the "
        "cut-off k only)"
    )


def test_check_scores_types_the_columns():
    checked = check_scores(tidy({"a": [0.5]}).astype({"cutoff": str, "value": str}))
    assert checked["cutoff"].dtype == "Int64" and checked["value"].dtype == float
    with pytest.raises(TypeError, match="expected a DataFrame"):
        check_scores([1, 2])


def test_the_package_offers_compare_and_explain_at_its_top():
    import rankbias
    from rankbias.analysis import explain

    assert rankbias.compare is compare and rankbias.explain is explain.explain
    with pytest.raises(AttributeError, match="no attribute 'nothing'"):
        rankbias.nothing  # noqa: B018


@pytest.mark.parametrize(
    ("differences", "message"),
    [("x", "differences: expected numbers"), ([], "differences: expected at least one"),
     ([0.1, float("nan")], "differences: found nan"), ([[0.1]], "differences: expected a 1-D")],
)  # fmt: skip
def test_the_sign_flip_test_refuses_what_is_not_paired_differences(differences, message):
    with pytest.raises(ValueError, match=f"^{message}"):
        sign_flip_test(differences)


def _forest_table(run_b):
    table = pd.DataFrame(
        {
            "metric": ["nfairr", "nfairr", "arab_tc", "ndcg"],
            "cutoff": pd.array([10, 10, 5, None], dtype="Int64"),  # as compare types it
            "run_a": ["dense", "splade", "dense", "dense"],
            "run_b": run_b,
            "diff": [0.25, -0.5, np.nan, 0.125],
            "ci_low": [0.125, -0.75, np.nan, -0.25],
            "ci_high": [0.5, -0.25, np.nan, 0.5],
            "significant": [True, True, False, False],
        }
    )
    table.attrs["confidence"] = 0.9
    return table


def test_the_forest_plot_draws_each_defined_row_with_its_interval(tmp_path):
    import matplotlib.pyplot as plt

    figure = forest_plot(_forest_table("bm25"))
    axis = figure.axes[0]
    # the rows bottom up, the undefined one left out; one baseline: runs named alone
    labels = [t.get_text() for t in axis.get_yticklabels()]
    assert labels == ["ndcg: dense", "NFaiRR@10: splade", "NFaiRR@10: dense"]
    assert figure.get_size_inches().tolist() == [6.5, pytest.approx(0.9 + 0.3 * 3)]
    segments = axis.collections[0].get_segments()  # the intervals, in the same order
    assert [s.tolist() for s in segments] == [
        [[-0.25, 0.0], [0.5, 0.0]], [[-0.75, 1.0], [-0.25, 1.0]], [[0.125, 2.0], [0.5, 2.0]]
    ]  # fmt: skip
    filled, hollow = axis.collections[-2:]
    assert filled.get_offsets().tolist() == [[-0.5, 1.0], [0.25, 2.0]]
    assert hollow.get_offsets().tolist() == [[0.125, 0.0]]
    assert filled.get_facecolor().tolist() == hollow.get_edgecolor().tolist()
    assert hollow.get_facecolor().tolist() == [[1.0, 1.0, 1.0, 1.0]]
    legend = [t.get_text() for t in axis.get_legend().get_texts()]
    assert legend == ["significant (adjusted)", "not significant"]
    assert axis.get_xlabel() == "mean paired difference from bm25, 90% interval"
    plt.close(figure)
    # pairs of several baselines: each row names both runs
    pairs = forest_plot(_forest_table(["bm25", "dense", "bm25", "bm25"]), tmp_path / "f.svg")
    assert [t.get_text() for t in pairs.axes[0].get_yticklabels()][1] == (
        "NFaiRR@10: splade − dense"
    )
    assert pairs.axes[0].get_xlabel() == "mean paired difference (run a − run b), 90% interval"
    assert (tmp_path / "f.svg").read_bytes().startswith(b"<?xml")
    assert not plt.fignum_exists(pairs.number)  # saved figures are closed
    # two systems compared on one measure: one row
    single = forest_plot(_forest_table("bm25").iloc[[1]])
    assert [t.get_text() for t in single.axes[0].get_yticklabels()] == ["NFaiRR@10: splade"]
    assert single.axes[0].get_xlabel() == "mean paired difference from bm25, 90% interval"
    plt.close(single)


def test_the_forest_plot_s_look_and_its_file(tmp_path):
    """Grey error bars with caps and no marker of their own, points drawn over them, a dotted
    line at no difference, five ticks at most, the legend in one row above the plot; written at
    150 dots per inch, cropped to what is drawn."""
    import matplotlib.pyplot as plt
    from matplotlib.colors import to_rgba
    from matplotlib.ticker import MaxNLocator

    table = _forest_table("bm25")
    table.attrs.clear()  # no confidence recorded: compare's default, 95%
    path = tmp_path / "f.png"
    figure = forest_plot(table, path)
    axis = figure.axes[0]
    assert axis.get_xlabel() == "mean paired difference from bm25, 95% interval"
    bars = axis.containers[0]
    assert bars.lines[0] is None  # fmt="none": the points are the scatter's
    assert [cap.get_markersize() for cap in bars.lines[1]] == [4.0, 4.0]  # 2 × capsize 2
    (segments,) = bars.lines[2]
    assert segments.get_color().tolist() == [list(to_rgba("0.35"))]
    filled, hollow = axis.collections[-2:]
    assert min(filled.get_zorder(), hollow.get_zorder()) > segments.get_zorder()
    assert hollow.get_facecolor().tolist() == [list(to_rgba("white"))]
    (zero,) = [line for line in axis.lines if line.get_linestyle() == ":"]
    assert list(zero.get_xdata()) == [0, 0] and zero.get_color() == "0.5"
    assert zero.get_linewidth() == 0.8
    locator = axis.xaxis.get_major_locator()  # as MaxNLocator(5): 6 ticks over 0–1.2, not 7
    assert locator.tick_values(0, 1.2).tolist() == MaxNLocator(5).tick_values(0, 1.2).tolist()
    assert len(locator.tick_values(0, 1.2)) == 6
    legend = axis.get_legend()
    assert legend.get_frame_on() is False
    figure.canvas.draw()
    box, frame = legend.get_window_extent(), axis.get_window_extent()
    assert 0 <= box.y0 - frame.y1 < 10 and abs(box.x0 - frame.x0) < 10  # above, from the left
    rows = {round(float(t.get_window_extent().y0), 3) for t in legend.get_texts()}
    assert len(rows) == 1  # the two entries side by side
    plt.close(figure)
    with PIL.Image.open(path) as png:
        assert [round(d) for d in png.info["dpi"]] == [150, 150]
        assert png.size != (round(6.5 * 150), round((0.9 + 0.3 * 3) * 150))


def test_a_forest_plot_for_the_screen_leaves_the_callers_backend_alone():
    """Only a figure written to a file switches matplotlib to Agg (no display needed); one
    drawn for the screen or a notebook keeps the backend the caller chose."""
    import matplotlib
    import matplotlib.pyplot as plt

    before = matplotlib.get_backend()
    matplotlib.use("pdf")
    try:
        plt.close(forest_plot(_forest_table("bm25")))
        assert matplotlib.get_backend() == "pdf"
    finally:
        matplotlib.use(before)


def test_read_scores_reads_parquet_and_the_spellings_of_nothing(tmp_path):
    text = "run,qid,metric,cutoff,value\na,q1,nfairr,10,nan\na,q2,nfairr,10,NaN\na,q3,ndcg,,0.5\n"
    (tmp_path / "s.csv").write_text(text)
    read = read_scores(tmp_path / "s.csv")
    assert read["value"].isna().tolist() == [True, True, False]
    assert read["cutoff"].tolist() == [10, 10, pd.NA] and read["cutoff"].dtype == "Int64"
    read.to_parquet(tmp_path / "s.PARQUET")
    pd.testing.assert_frame_equal(read_scores(tmp_path / "s.PARQUET"), read)
    read.assign(cutoff=[10.5, 10, None]).to_parquet(tmp_path / "half.parquet")
    with pytest.raises(InputError, match=r"^\S+half\.parquet: .*integer"):
        read_scores(tmp_path / "half.parquet")
    (tmp_path / "bad.parquet").write_bytes(b"not a parquet file")
    with pytest.raises(InputError) as info:
        read_scores(tmp_path / "bad.parquet")
    assert str(info.value).startswith(f"{tmp_path / 'bad.parquet'}: not readable as Parquet (")
    with pytest.raises(InputError) as info:
        read_scores(tmp_path / "absent.csv")
    assert str(info.value) == f"{tmp_path / 'absent.csv'}: no such file; expected a scores table"


def test_a_p_value_equal_to_alpha_is_significant_as_statsmodels_rejects():
    # Two queries whose differences are both +0.1: of the 4 sign patterns, 2 give a mean as
    # large as the observed one, so the exact p-value is 2/4 = 0.5 (by hand).  At alpha = 0.5
    # the test rejects (p <= alpha, the level of the test), as multipletests' reject does.
    from statsmodels.stats.multitest import multipletests

    table = compare(tidy({"a": [0.6, 0.7], "b": [0.5, 0.6]}), correction="none", alpha=0.5)
    assert table.loc[0, "p_value"] == 0.5 and bool(table.loc[0, "significant"])
    assert multipletests([0.5], alpha=0.5, method="holm")[0][0]
    assert not compare(tidy({"a": [0.6, 0.7], "b": [0.5, 0.6]}), alpha=0.49).loc[0, "significant"]


def test_the_monte_carlo_p_value_is_1_plus_hits_over_1_plus_draws_in_every_block():
    """Degenerate differences fix the number of hits whatever the draws: none when every
    difference is 1 (only the two all-equal sign patterns of 2^30 reach the mean), every draw
    when all are 0.  100,000 draws of 30 signs take two blocks (at most 2,000,000 signs each)."""
    ones, zeros = np.ones(30), np.zeros(30)
    assert sign_flip_test(ones) == (1 / 10_001, False)  # 10,000 draws by default
    assert sign_flip_test(ones, 100_000) == (1 / 100_001, False)
    assert sign_flip_test(zeros, 100_000) == (1.0, False)
    assert sign_flip_test(zeros, 7) == (1.0, False)
    # 16 queries are enumerated (2^16 patterns), 17 drawn
    assert sign_flip_test(np.ones(16)) == (2 / 2**16, True)
    assert sign_flip_test(np.ones(17))[1] is False


def test_the_monte_carlo_draws_come_from_the_generator_given_or_seed_0():
    d = np.random.default_rng(9).normal(0.1, 1.0, 30)
    default = sign_flip_test(d, 2_000)
    assert default == sign_flip_test(d, 2_000) == sign_flip_test(d, 2_000, np.random.default_rng(0))
    others = {sign_flip_test(d, 2_000, np.random.default_rng(s))[0] for s in (1, 2, 3)}
    assert default[0] not in others and len(others) > 1
    # compare's seed reaches the test and the bootstrap
    table = tidy({"a": d, "b": np.zeros(30)})
    one, two = (compare(table, permutations=2_000, bootstrap=2_000, seed=s).iloc[0] for s in (1, 2))
    assert one["p_value"] != two["p_value"] and one["ci_low"] != two["ci_low"]


def test_identical_runs_have_p_1_under_each_test_named_as_usual():
    table = tidy({"a": [0.2, 0.5, 0.7], "b": [0.2, 0.5, 0.7]})
    for test, name in [("randomisation", "randomisation (exact)"), ("t", "paired t"),
                       ("wilcoxon", "wilcoxon")]:  # fmt: skip
        row = compare(table, test=test).iloc[0]
        assert (row["p_value"], row["test"], row["diff"]) == (1.0, name, 0.0)


def test_the_bootstrap_interval_is_the_percentile_interval_at_the_confidence_asked():
    """On 400 queries the bootstrap distribution of the mean is close to normal: the 95% and
    80% intervals are the mean ± 1.96 and ± 1.28 standard errors within 4%."""
    d = np.random.default_rng(4).normal(0.05, 1.0, 400)
    se = np.std(d, ddof=0) / np.sqrt(len(d))
    for confidence, z in [(0.95, 1.959964), (0.80, 1.281552)]:
        row = compare(tidy({"a": d, "b": np.zeros(400)}), confidence=confidence,
                      bootstrap=20_000, seed=3).iloc[0]  # fmt: skip
        assert row["ci_low"] == pytest.approx(d.mean() - z * se, abs=0.04 * z * se)
        assert row["ci_high"] == pytest.approx(d.mean() + z * se, abs=0.04 * z * se)
    # every query can be drawn: one difference of 10 among 19 of 0 reaches the upper bound
    row = compare(tidy({"a": [10.0] + [0.0] * 19, "b": [0.0] * 20}), seed=0).iloc[0]
    assert row["ci_low"] == 0.0 and row["ci_high"] >= 1.0


def test_the_fairer_run_of_a_pair_follows_the_sign_and_the_runs_are_named_in_refusals():
    fair = np.linspace(0.4, 0.7, 8)
    table = tidy({"less_fair": fair - 0.3, "fair": fair})  # a − b < 0
    row = compare(table).iloc[0]
    assert (row["run_a"], row["run_b"], row["fairer"]) == ("less_fair", "fair", "fair")
    assert compare(tidy({"a": fair, "b": fair - 0.3}, "rnd")).iloc[0]["fairer"] == "b"
    assert compare(tidy({"a": fair - 0.3, "b": fair}, "rnd")).iloc[0]["fairer"] == "a"
    with pytest.raises(InputError) as info:
        compare(tidy({"only": [0.1, 0.2]}))
    assert str(info.value) == (
        "the scores hold 1 run(s) (only); expected two or more runs to compare"
    )
    with pytest.raises(InputError) as info:
        compare(tidy({"r": [0.1], "s": [0.2]}), baseline="t")
    assert str(info.value) == "baseline 't' is not a run of the scores; expected one of r, s"


def test_sign_patterns_that_tie_in_exact_arithmetic_tie_at_any_scale():
    """Differences 1.1e5, 2.2e5, −3.3e5 and 3e5 (1.1 × 1e5 rounds up by an ulp): flipping the
    first three gives the observed mean again in exact arithmetic and misses it by about
    1e-11 in floating point, inside the tolerance, which scales with the largest difference.
    The p-value is the one counted over the 16 patterns in rational arithmetic."""
    exact = [Fraction(11, 10), Fraction(22, 10), Fraction(-33, 10), Fraction(3)]
    observed = abs(sum(exact))
    patterns = itertools.product((1, -1), repeat=len(exact))
    hits = sum(abs(sum(s * x for s, x in zip(signs, exact, strict=True))) >= observed
               for signs in patterns)  # fmt: skip
    assert hits == 12
    assert sign_flip_test(np.array([1.1, 2.2, -3.3, 3.0]) * 1e5) == (hits / 16, True)


def test_the_defaults_are_10000_resamples_and_seed_0_and_one_resample_is_one_mean():
    d = np.random.default_rng(5).normal(0.1, 1.0, 30)
    table = tidy({"a": d, "b": np.zeros(30)})
    default = compare(table).iloc[0]
    assert default.equals(compare(table, bootstrap=10_000, seed=0).iloc[0])
    for other in ({"bootstrap": 9_999, "seed": 0}, {"bootstrap": 10_000, "seed": 1}):
        assert compare(table, **other).iloc[0]["ci_low"] != default["ci_low"]
    # every difference 0.25: each resample's mean is 0.25, even when there is one resample
    row = compare(tidy({"a": [0.75] * 5, "b": [0.5] * 5}), bootstrap=1).iloc[0]
    assert (row["ci_low"], row["ci_high"]) == (0.25, 0.25)


def test_every_refusal_of_the_scores_and_options_is_the_whole_message():
    """Each refusal names the argument (``scores`` by default), the row (not the first one)
    and what was expected, in full."""
    good = tidy({"a": [0.1, 0.2, 0.3], "b": [0.2, 0.2, 0.2]})

    def refusal(call) -> str:
        with pytest.raises((ValueError, TypeError, InputError)) as error:
            call()
        return str(error.value)

    assert refusal(lambda: check_scores([1, 2])) == "scores: expected a DataFrame, found list"
    assert refusal(lambda: compare(good.drop(columns=["qid", "value"]))) == (
        "scores: no column(s) qid, value; expected run,qid,metric,cutoff,value "
        "(the table rankbias score writes)"
    )
    blank, absent = good.copy(), good.copy()
    blank.loc[4, "qid"] = "  "  # a blank id: not NaN
    absent.loc[2, "run"] = None  # NaN: not blank once written as text ("None")
    assert refusal(lambda: compare(blank)) == "scores: row 4: empty qid; expected an id"
    assert refusal(lambda: compare(absent)) == "scores: row 2: empty run; expected an id"
    infinite = good.assign(value=[0.1, 0.2, 0.3, 0.2, -np.inf, 0.2])
    assert refusal(lambda: compare(infinite)) == "scores: row 4: value -inf; expected finite"
    twice = pd.concat([good, good.iloc[[1]].assign(value=0.9)], ignore_index=True)
    assert refusal(lambda: compare(twice)) == (
        "scores: run a, query q1, nfairr@10 is given twice; expected once"
    )
    assert refusal(lambda: compare(good, test="z")) == (
        "test: expected one of 'randomisation', 't', 'wilcoxon', found 'z'"
    )
    assert refusal(lambda: compare(good, correction="sidak")) == (
        "correction: expected one of 'holm', 'bonferroni', 'bh', 'none', found 'sidak'"
    )
    assert refusal(lambda: compare(good, alpha=1.5)).startswith("alpha: expected a number")
    assert refusal(lambda: compare(good, metrics="nfairr")) == (
        "metrics: expected a list of measure names, found 'nfairr'"
    )
    assert refusal(lambda: compare(good, metrics=10)) == (
        "metrics: expected a list of measure names, found int 10"
    )
    assert refusal(lambda: compare(good, metrics=[])) == (
        "metrics: expected at least one measure name, found none"
    )


def test_a_measure_one_run_lacks_gives_a_row_with_no_queries_and_the_table_keeps_its_types():
    """``b`` has no ``awrf`` rows at all: the pair's row counts a's three queries as a's only,
    compares nothing (no mean, no test, nobody fairer) and the columns keep their types."""
    scores = pd.concat(
        [
            tidy({"a": [0.1, 0.2, 0.3], "b": [0.2, 0.4, 0.5]}),
            tidy({"a": [0.3, 0.3, 0.3]}, "awrf"),
            tidy({"b": [0.3, 0.3]}, "ted"),  # and a measure a lacks
        ]
    )
    table = compare(scores, permutations=10, bootstrap=10)
    assert list(table["metric"]) == ["nfairr", "awrf", "ted"]  # in the order of the scores
    row = table.iloc[1]
    assert (row["n_queries"], row["n_only_a"], row["n_only_b"], row["n_undefined"]) == (0, 3, 0, 0)
    assert tuple(table.iloc[2][["n_queries", "n_only_a", "n_only_b"]]) == (0, 0, 2)
    assert (row["fairer"], row["test"], row["significant"]) == ("", "", False)
    assert row[["mean_a", "mean_b", "diff", "ci_low", "effect_size", "p_value"]].isna().all()
    apart = tidy({"b": [0.1, 0.2]}, "awrf").assign(qid=["x0", "x1"])  # no query of a's
    alone = compare(pd.concat([scores, apart]), metrics=["awrf"])
    assert (alone["n_queries"].iloc[0], alone["n_only_b"].iloc[0]) == (0, 2)
    assert alone["mean_a"].dtype == float and alone["p_adjusted"].dtype == float
    assert alone["significant"].dtype == bool and table["significant"].dtype == bool


def test_a_third_run_s_undefined_queries_do_not_change_a_pair_it_is_not_in():
    with_c = tidy({"a": [0.1, 0.5, 0.3, 0.9], "b": [0.2, 0.2, 0.2, 0.2],
                   "c": [np.nan, 0.1, np.nan, 0.1]})  # fmt: skip
    row = compare(with_c, bootstrap=10).iloc[0]
    assert (row["run_a"], row["run_b"], row["n_queries"], row["n_undefined"]) == ("a", "b", 4, 0)
    assert row["mean_a"] == pytest.approx(0.45)


def test_a_constant_difference_has_no_effect_size_and_the_call_is_in_the_attrs():
    """d_z = mean / sd is undefined when every difference is the same (sd 0): NaN, not inf."""
    table = compare(tidy({"a": [0.75, 0.5, 0.25], "b": [0.5, 0.25, 0.0]}), correction="bh",
                    alpha=0.1, confidence=0.9, seed=3, bootstrap=10)  # fmt: skip
    assert table.iloc[0]["diff"] == 0.25 and np.isnan(table.iloc[0]["effect_size"])
    assert table.attrs == dict(system_level=[], test="randomisation", correction="bh",
                               alpha=0.1, confidence=0.9, seed=3, permutations=1_000_000,
                               absolute=False, undefined_margin=0.05)  # fmt: skip


def test_a_run_undefined_on_many_more_queries_gets_no_verdict_and_the_measure_says_why():
    """A re-ranking that pushes the protected documents out of the top 10 makes rND undefined
    there: over the queries both define it looks fairer, but the means compare different
    queries.  53 of 200 undefined against none: undetermined, with the counts and the
    measure's alternative."""
    rng = np.random.default_rng(11)
    bm25 = rng.uniform(0.2, 0.45, 200)
    biased = np.where(np.arange(200) < 53, np.nan, bm25 - 0.05)  # "fairer" where defined
    row = compare(tidy({"biased": biased, "bm25": bm25}, "rnd")).iloc[0]
    assert row["significant"] and row["diff"] < 0  # lower rND where both are defined
    assert (row["n_undefined_a"], row["n_undefined_b"], row["n_queries"]) == (53, 0, 147)
    assert row["fairer"] == "undetermined"
    assert row["why"] == (
        "undefined on 53 of 200 queries for biased and 0 for bm25 (rates differ by more than "
        "0.05): the means compare different queries; NaN when the top k holds one group only "
        "(no protected document, or nothing else): every ordering is alike; a deeper list, "
        "e.g. rnd(step=10)@20, is defined on more queries"
    )


@pytest.mark.parametrize(("undefined", "margin", "fairer"),
                         [(5, 0.05, "b"), (6, 0.05, "undetermined"), (6, 0.06, "b"),
                          (0, 0.0, "b"), (1, 0.0, "undetermined")])  # fmt: skip
def test_the_undefined_margin_is_a_difference_of_rates_and_its_bound_is_allowed(
    undefined, margin, fairer
):
    values = np.linspace(0.1, 0.5, 100)
    a = np.where(np.arange(100) < undefined, np.nan, values + 0.2)  # awrf: lower is fairer
    row = compare(tidy({"a": a, "b": values}, "awrf"), undefined_margin=margin).iloc[0]
    assert row["fairer"] == fairer and row["significant"]


def test_each_comparison_draws_its_own_numbers_whatever_else_the_call_compares():
    rng = np.random.default_rng(2)
    values = {run: rng.uniform(0, 1, 40) for run in ("a", "b", "c")}
    alone = compare(tidy({r: values[r] for r in "ab"}, "nfairr"))
    crowd = compare(pd.concat([tidy(values, "nfairr"), tidy(values, "awrf", 5)]))
    columns = ["p_value", "p_mc_se", "ci_low", "ci_high", "effect_size"]
    same = crowd[(crowd["metric"] == "nfairr") & (crowd["run_a"] == "a") & (crowd["run_b"] == "b")]
    pd.testing.assert_frame_equal(alone[columns], same[columns].reset_index(drop=True))
    fewer = compare(tidy({r: values[r] for r in "ab"}, "nfairr"), bootstrap=500)
    assert fewer["p_value"].iloc[0] == alone["p_value"].iloc[0]
    assert fewer["ci_low"].iloc[0] != alone["ci_low"].iloc[0]
    other_seed = compare(tidy({r: values[r] for r in "ab"}, "nfairr"), seed=1)
    assert other_seed["p_value"].iloc[0] != alone["p_value"].iloc[0]


def test_the_monte_carlo_standard_error_of_each_p_value_is_reported():
    d = np.random.default_rng(4).normal(0.1, 0.5, 40)
    row = compare(tidy({"a": d, "b": np.zeros(40)}), permutations=5_000).iloc[0]
    p = row["p_value"]
    assert 0.05 < p < 0.95 and row["p_mc_se"] == pytest.approx(np.sqrt(p * (1 - p) / 5_000))
    assert compare(tidy({"a": d[:10], "b": np.zeros(10)})).iloc[0]["p_mc_se"] == 0.0  # exact


def _family(n_runs: int, n_measures: int, n_queries: int) -> pd.DataFrame:
    rng = np.random.default_rng(8)
    return pd.concat(
        tidy({f"r{i}": rng.uniform(0, 1, n_queries) for i in range(n_runs)}, "nfairr", k)
        for k in range(1, n_measures + 1)
    )


def test_a_family_no_monte_carlo_comparison_could_make_significant_is_refused():
    """120 comparisons (5 runs, 12 cut-offs) under Holm: 1/(1 + B) times 120 is at most 0.05
    only from B = 2,399 sign flips."""
    family = _family(5, 12, 20)
    with pytest.raises(ValueError) as info:
        compare(family, permutations=2_398, bootstrap=10)
    assert str(info.value) == (
        "permutations: with 2398 sign flips the smallest p-value is 1/2399 and Holm over 120 "
        "comparisons makes it 120/2399 = 0.05 > alpha 0.05, so no comparison over more than 16 "
        "queries could be significant; expected at least 2399 permutations"
    )
    assert len(compare(family, permutations=2_399, bootstrap=10)) == 120
    with pytest.raises(ValueError, match="1/19 = 0.0526 > alpha 0.05.*at least 19 perm"):
        compare(_family(2, 1, 20), permutations=18, correction="bh", bootstrap=10)
    exact_only = compare(_family(5, 12, 16), permutations=1, bootstrap=10)  # no sign flips drawn
    assert (exact_only["test"] == "randomisation (exact)").all()
    assert len(compare(family, test="t", permutations=1, bootstrap=10)) == 120


def test_differences_constant_up_to_rounding_have_no_effect_size():
    x = np.linspace(0.1, 0.9, 30)
    row = compare(tidy({"a": x + 0.1, "b": x})).iloc[0]  # x + 0.1 − x: 0.1 give or take an ulp
    assert 0 < np.std(x + 0.1 - x) < 1e-15 and np.isnan(row["effect_size"])
    d = np.random.default_rng(1).normal(0.1, 0.3, 30)
    row = compare(tidy({"a": d, "b": np.zeros(30)})).iloc[0]
    assert row["effect_size"] == pytest.approx(d.mean() / d.std(ddof=1), rel=1e-12)


def test_a_difference_the_test_does_not_find_has_no_fairer_run():
    tenths = [3, -1, 2, 1, -2, 2.5, 0.5, -0.5]
    exact = [Fraction(t).limit_denominator(10) / 10 for t in tenths]
    hits = sum(abs(sum(s * x for s, x in zip(signs, exact, strict=True))) >= abs(sum(exact))
               for signs in itertools.product((1, -1), repeat=8))  # fmt: skip
    assert hits == 90  # of 256
    d = np.array(tenths) / 10
    row = compare(tidy({"nfairr_a": d + 0.5, "b": np.full(8, 0.5)})).iloc[0]
    assert row["p_value"] == pytest.approx(hits / 256) and row["diff"] > 0
    assert row["fairer"] == "no detectable difference"
    assert row["why"].startswith("adjusted p = 0.352 > alpha; the interval [")


def test_signed_measures_are_compared_on_their_value_or_on_their_magnitude():
    """ARaB of a run that favours men strongly (−0.5) and one that slightly favours women
    (0.1): on the signed value the second is 'higher', which says nothing of fairness; on
    |value| it is the fairer."""
    noise = np.random.default_rng(6).normal(0, 0.02, 30)
    scores = tidy({"male": -0.5 + noise, "female": 0.1 + noise}, "arab_tc")
    signed = compare(scores).iloc[0]
    assert (signed["scale"], signed["fairer"]) == ("value", "")
    assert signed["diff"] == pytest.approx(-0.6)
    magnitude = compare(scores, absolute=True).iloc[0]
    assert (magnitude["scale"], magnitude["fairer"]) == ("|value|", "female")
    assert magnitude["diff"] == pytest.approx(0.4 - 2 * noise.mean())
    assert magnitude["why"].startswith("lower |value| is fairer; adjusted p = ")
    assert compare(tidy({"x": noise, "y": noise + 1}), absolute=True).iloc[0]["scale"] == "value"


def test_the_monte_carlo_p_value_and_the_interval_agree_with_scipy_within_their_error():
    d = np.random.default_rng(9).normal(0.06, 0.3, 60)
    ours = compare(tidy({"a": d, "b": np.zeros(60)}), permutations=20_000,
                   bootstrap=20_000).iloc[0]  # fmt: skip
    flips = stats.permutation_test((d,), np.mean, permutation_type="samples",
                                   n_resamples=20_000, alternative="two-sided",
                                   rng=np.random.default_rng(1))  # fmt: skip
    assert 0.05 < flips.pvalue < 0.5
    error = np.hypot(ours["p_mc_se"], np.sqrt(flips.pvalue * (1 - flips.pvalue) / 20_000))
    assert abs(ours["p_value"] - flips.pvalue) < 4 * error
    interval = stats.bootstrap((d,), np.mean, method="percentile", n_resamples=20_000,
                               rng=np.random.default_rng(1)).confidence_interval  # fmt: skip
    sigma = d.std(ddof=1) / np.sqrt(60)  # the 2.5% and 97.5% quantiles move by ~0.02 sigma
    assert abs(ours["ci_low"] - interval.low) < 0.15 * sigma
    assert abs(ours["ci_high"] - interval.high) < 0.15 * sigma


def _near(p_target: float, n: int = 40, seed: int = 0) -> np.ndarray:
    """Differences of n queries whose t-test p-value is p_target (the sign-flip one is close)."""
    d = np.random.default_rng(seed).normal(0, 1, n)
    d = (d - d.mean()) / d.std(ddof=1)
    return d + stats.t.ppf(1 - p_target / 2, n - 1) / np.sqrt(n)


def test_only_comparisons_whose_decision_is_unsettled_draw_more_sign_flips():
    far = compare(tidy({"a": _near(0.4) + 1, "b": np.ones(40)})).iloc[0]
    assert far["test"] == "randomisation (10,000 sign flips)" and far["settled"]
    assert far["p_mc_se"] == pytest.approx(np.sqrt(far["p_value"] * (1 - far["p_value"]) / 1e4))
    close = compare(tidy({"a": _near(0.05) + 1, "b": np.ones(40)})).iloc[0]
    draws = int(close["test"].split("(")[1].split()[0].replace(",", ""))
    assert 10_000 < draws <= 1_000_000 and abs(close["p_value"] - 0.05) < 0.01
    assert close["settled"] == (draws < 1_000_000)


def test_a_decision_still_unsettled_at_the_last_permutation_is_undetermined():
    row = compare(tidy({"a": _near(0.05) + 1, "b": np.ones(40)}), permutations=20_000).iloc[0]
    assert row["test"] == "randomisation (20,000 sign flips)" and not row["settled"]
    assert not row["significant"]  # whatever the point estimate: the decision is not settled
    assert row["fairer"] == "undetermined"
    assert row["why"] == (
        f"p = {row['p_value']:.3g} ± {row['p_mc_se']:.2g} after 20,000 sign flips is within "
        "Monte Carlo error of its threshold: more permutations would decide"
    )


def test_the_decisions_of_a_family_are_the_same_under_every_seed():
    """Twelve comparisons, three of them near their Holm thresholds: 'significant' is the
    same under ten seeds, though the p-values are not."""
    runs = {"base": np.zeros(60)}
    runs.update({f"r{i}": _near(p, 60, i) for i, p in enumerate(
        [0.001, 0.004, 0.0045, 0.02, 0.3, 0.6, 1e-5, 0.0042, 0.5, 0.9, 0.01, 0.2])})  # fmt: skip
    tables = [compare(tidy(runs), baseline="base", seed=s, bootstrap=10) for s in range(10)]
    decisions = {tuple(t["significant"]) for t in tables}
    assert len(decisions) == 1 and len({tuple(t["p_value"]) for t in tables}) > 1
    assert all(t["settled"].all() for t in tables)
