"""Tests of rankbias.analysis.agreement: paired t-tests with Bonferroni, Pearson r, the table.

Expected values come from SciPy called in the test, hand-built differences and hand-applied
Bonferroni (``min(1, m·p)``).
"""

from __future__ import annotations

import warnings

import numpy as np
import pandas as pd
import pytest
from scipy import stats

from rankbias.analysis.agreement import (
    metric_correlation,
    paired_tests,
    split_label,
)
from rankbias.errors import InputError


def tidy(run, metric, values, cutoff=10, qids=None):
    qids = [f"q{i:02d}" for i in range(len(values))] if qids is None else qids
    return pd.DataFrame(
        {"run": run, "qid": qids, "metric": metric, "cutoff": cutoff, "value": values}
    )


@pytest.fixture
def testbed():
    rng = np.random.default_rng(0)
    n = 40
    base = rng.uniform(0.5, 0.9, n)
    systems = {
        "bm25": base,
        "dense": np.clip(base + 0.08 + rng.normal(0, 0.03, n), 0, 1),  # clearly fairer
        "noisy": np.clip(base + rng.normal(0, 0.1, n), 0, 1),  # no real difference
        "worse": np.clip(base - 0.1 + rng.normal(0, 0.02, n), 0, 1),  # clearly less fair
    }
    bias = pd.concat(
        [tidy(r, "nfairr", v) for r, v in systems.items()]
        + [tidy(r, "texfair", 0.5 * v + rng.normal(0, 0.05, n)) for r, v in systems.items()]
    )
    effectiveness = pd.concat(
        [tidy(r, "nDCG", rng.uniform(0, 1, n)) for r in systems]
        + [tidy(r, "RR", rng.uniform(0, 1, n)) for r in systems]
    )
    effectiveness["cutoff"] = effectiveness["cutoff"].astype("Int64")  # as effectiveness() has it
    return bias, effectiveness, systems


def test_split_label():
    assert split_label("nDCG@10") == ("nDCG", 10)
    assert split_label("AP") == ("AP", None)
    assert split_label("P(rel=2)@10") == ("P(rel=2)", 10)
    # the one reader of @k (rankbias.metrics.measures.split_cutoff): same errors as the parser
    with pytest.raises(ValueError, match=r"bad cut-off 'ten'; expected an integer from 1 to"):
        split_label("nDCG@ten")
    with pytest.raises(ValueError, match=r"bad cut-off '0'"):
        split_label("nDCG@0")
    with pytest.raises(ValueError, match="no name before '@'"):
        split_label("@10")


def test_paired_tests_match_scipy_with_bonferroni_by_hand(testbed):
    bias, effectiveness, systems = testbed
    out = paired_tests([effectiveness, bias], baseline="bm25")
    assert out["run"].tolist()[:4] == ["bm25", "dense", "noisy", "worse"]
    rows = out[out["measure"] == "nfairr@10"].set_index("run")
    for run in ("dense", "noisy", "worse"):
        ref = stats.ttest_rel(systems[run], systems["bm25"])
        assert rows.loc[run, "t"] == pytest.approx(ref.statistic)
        assert rows.loc[run, "p"] == pytest.approx(ref.pvalue)
        assert rows.loc[run, "p_bonferroni"] == pytest.approx(min(1.0, 3 * ref.pvalue))
        assert rows.loc[run, "mean"] == pytest.approx(systems[run].mean())
        assert rows.loc[run, "difference"] == pytest.approx((systems[run] - systems["bm25"]).mean())
    assert rows.loc["dense", "significant"] and rows.loc["dense", "better"] is True
    assert rows.loc["worse", "significant"] and rows.loc["worse", "better"] is False
    assert not rows.loc["noisy", "significant"]
    assert np.isnan(rows.loc["bm25", "p"]) and rows.loc["bm25", "better"] is None


def test_lower_is_better_for_a_more_biased_metric_and_none_for_a_signed_one():
    base = np.array([0.5, 0.6, 0.7, 0.8, 0.4])
    lower = base - np.array([0.1, 0.12, 0.09, 0.11, 0.1])
    table = pd.concat([tidy("bm25", "ted", base), tidy("s", "ted", lower),
                       tidy("bm25", "arab_tc", base), tidy("s", "arab_tc", lower)])  # fmt: skip
    out = paired_tests(table, measures=["ted@10", "arab_tc@10"]).set_index(["run", "measure"])
    assert out.loc[("s", "ted@10"), "significant"]
    assert out.loc[("s", "ted@10"), "better"] is True  # TED: higher = more biased
    assert out.loc[("s", "arab_tc@10"), "significant"]
    assert out.loc[("s", "arab_tc@10"), "better"] is None  # signed: no better direction
    flipped = paired_tests(table, measures=["ted@10"], higher_is_better={"ted": True})
    assert flipped.set_index("run").loc["s", "better"] is False


def test_two_paired_queries_and_constant_differences_by_hand():
    # two queries suffice for a difference; a constant difference has no spread: t = ±inf, p = 0
    # when it is not zero, t = 0, p = 1 and no "better" when it is
    # (values exact in binary, so the differences are exactly constant)
    values = {"bm25": [0.25, 0.5], "up": [0.5, 0.75], "down": [0.125, 0.375], "same": [0.25, 0.5]}
    table = pd.concat([tidy(run, "nfairr", v) for run, v in values.items()])
    out = paired_tests(table, measures=["nfairr@10"], runs=["bm25", "up", "down", "same"])
    out = out.set_index("run")
    assert out.loc["up", "difference"] == 0.25
    assert (out.loc["up", "t"], out.loc["up", "p"]) == (np.inf, 0.0)
    assert out.loc["up", "better"] is True  # NFaiRR: higher = fairer
    assert out.loc["down", "difference"] == -0.125
    assert (out.loc["down", "t"], out.loc["down", "p"]) == (-np.inf, 0.0)
    assert out.loc["down", "better"] is False
    assert out.loc["same", "difference"] == 0.0
    assert (out.loc["same", "t"], out.loc["same", "p"]) == (0.0, 1.0)
    assert out.loc["same", "better"] is None and not out.loc["same", "significant"]


def test_values_held_as_objects_with_none_are_numbers_and_undefined():
    # a table whose undefined values are None (as a PRF table's) has an object column
    values = {"bm25": [0.25, 0.5, None, 0.5], "up": [0.5, 0.75, 0.5, None]}
    table = pd.concat([tidy(run, "nfairr", pd.array(v, dtype=object)) for run, v in values.items()])
    out = paired_tests(table, measures=["nfairr@10"]).set_index("run")
    assert out.loc["bm25", ["n", "mean"]].tolist() == [3, pytest.approx(1.25 / 3)]
    assert out.loc["up", ["difference", "t", "p", "n_excluded"]].tolist() == [0.25, np.inf, 0.0, 2]


def test_queries_are_paired_and_the_left_out_ones_counted():
    base = tidy("bm25", "nfairr", [0.1, 0.2, 0.3, 0.4, 0.5])
    other = tidy("s", "nfairr", [0.3, np.nan, 0.6, 0.5, 0.9, 0.7],
                 qids=["q00", "q01", "q02", "q03", "q04", "q05"])  # fmt: skip
    out = paired_tests(pd.concat([base, other]), measures=["nfairr@10"]).set_index("run")
    # paired queries: q00, q02, q03, q04 (q01 is NaN in s, q05 absent in bm25)
    ref = stats.ttest_rel([0.3, 0.6, 0.5, 0.9], [0.1, 0.3, 0.4, 0.5])
    assert out.loc["s", "p"] == pytest.approx(ref.pvalue)
    assert out.loc["s", "n_excluded"] == 2
    assert out.loc["s", "n"] == 5 and out.loc["s", "mean"] == pytest.approx(3.0 / 5)
    assert out.loc["bm25", "n_excluded"] == 1  # q05 has no bm25 value


def test_a_query_set_restricts_every_statistic(testbed):
    bias, _, systems = testbed
    subset = [f"q{i:02d}" for i in range(0, 40, 2)]
    out = paired_tests(bias, measures=["nfairr@10"], qids=subset).set_index("run")
    ref = stats.ttest_rel(systems["dense"][::2], systems["bm25"][::2])
    assert out.loc["dense", "p"] == pytest.approx(ref.pvalue)
    assert out.loc["dense", "n"] == 20


def test_metric_correlation_matches_scipy(testbed):
    bias, _, _ = testbed
    out = metric_correlation(bias).set_index("run")
    for run in ("bm25", "dense", "noisy", "worse"):
        wide = bias[bias["run"] == run].pivot(index="qid", columns="metric", values="value")
        ref = stats.pearsonr(wide["texfair"], wide["nfairr"])
        assert out.loc[run, "r"] == pytest.approx(ref.statistic)
        assert out.loc[run, "p"] == pytest.approx(ref.pvalue)
        assert out.loc[run, "significant"] == (ref.pvalue < 0.05)
        assert out.loc[run, "n"] == 40


def test_metric_correlation_counts_undefined_queries():
    a = tidy("s", "texfair", [0.1, np.nan, 0.3, 0.2, 0.5])
    b = tidy("s", "nfairr", [0.2, 0.4, 0.5, 0.1, np.nan])
    out = metric_correlation(pd.concat([a, b])).iloc[0]
    ref = stats.pearsonr([0.1, 0.3, 0.2], [0.2, 0.5, 0.1])
    assert out["n"] == 3 and out["n_excluded"] == 2
    assert out["r"] == pytest.approx(ref.statistic)


def test_bad_input_is_an_error(testbed):
    bias, _, _ = testbed
    with pytest.raises(InputError, match="baseline run 'bm26'"):
        paired_tests(bias, measures=["nfairr@10"], baseline="bm26")
    with pytest.raises(InputError, match="no rows for measure 'nfairr@5'"):
        paired_tests(bias, measures=["nfairr@5"])
    with pytest.raises(InputError, match="several rows for query"):
        paired_tests(pd.concat([bias, bias.head(1)]), measures=["nfairr@10"])
    # alpha=5 made every comparison significant; a string was read letter by letter
    for call, error, message in [
        (lambda: paired_tests(bias, measures=["nfairr@10"], alpha=5), ValueError,
         "alpha: expected a number between 0 and 1, found 5"),
        (lambda: metric_correlation(bias, alpha=-1), ValueError,
         "alpha: expected a number between 0 and 1, found -1"),
        (lambda: paired_tests(bias, measures="nfairr@10"), TypeError,
         "measures: expected a list of measure labels, found 'nfairr@10'"),
    ]:  # fmt: skip
        with pytest.raises(error) as info:
            call()
        assert str(info.value) == message


def test_the_bonferroni_factor_is_the_number_of_systems_compared():
    """Moderate p-values, where the factor decides: three systems against a baseline, the
    correction multiplies each p by 3 (not 2, not 4), capped at 1, and significance follows
    the corrected value."""
    from scipy import stats as scipy_stats

    from rankbias.analysis.agreement import paired_tests

    base = np.array([0.30, 0.50, 0.20, 0.60, 0.40, 0.55, 0.35, 0.45])
    shifts = {"a": [0.05, 0.02, 0.06, -0.02, 0.04, 0.02, 0.00, 0.04],  # p = 0.027
              "b": [0.02, -0.03, 0.04, 0.01, -0.02, 0.03, 0.00, -0.01],
              "c": [0.10, 0.12, 0.08, 0.11, 0.09, 0.10, 0.13, 0.07]}  # fmt: skip
    rows = [("bm25", f"q{i}", v) for i, v in enumerate(base)]
    for run, shift in shifts.items():
        rows += [(run, f"q{i}", v + s) for i, (v, s) in enumerate(zip(base, shift, strict=True))]
    table = pd.DataFrame(rows, columns=["run", "qid", "value"]).assign(metric="nDCG", cutoff=10)
    out = paired_tests(table, ["nDCG@10"], baseline="bm25").set_index("run")
    for run, shift in shifts.items():
        p = scipy_stats.ttest_rel(base + np.array(shift), base).pvalue  # by scipy, not the code
        assert out.loc[run, "p"] == pytest.approx(p)
        assert out.loc[run, "p_bonferroni"] == pytest.approx(min(1.0, 3 * p))
        assert out.loc[run, "significant"] == (3 * p < 0.05)
    # the example has a p between 0.05/3 and 0.05: significant alone, not after correction
    assert any(0.05 / 3 < out.loc[r, "p"] < 0.05 for r in shifts)


def test_significant_means_p_after_bonferroni_strictly_below_alpha():
    # (alpha = 1 pinned this before alpha was required to lie strictly between 0 and 1)
    values = {"bm25": [0.25, 0.5, 0.1], "mid": [0.3, 0.9, 0.2]}
    table = pd.concat([tidy(run, "nfairr", v) for run, v in values.items()])
    p = paired_tests(table, measures=["nfairr@10"], alpha=0.5).set_index("run")["p_bonferroni"]
    assert 0 < p["mid"] < 1  # one comparison: p itself
    at = paired_tests(table, measures=["nfairr@10"], alpha=p["mid"]).set_index("run")
    above = paired_tests(table, measures=["nfairr@10"], alpha=np.nextafter(p["mid"], 1))
    assert not at.loc["mid", "significant"] and above.set_index("run").loc["mid", "significant"]


PAIRED_COLUMNS = ["run", "measure", "n", "mean", "difference", "t", "p", "p_bonferroni",
                  "significant", "better", "n_excluded"]  # fmt: skip


def test_paired_tests_table_runs_and_refusals():
    values = {"bm25": [0.25, 0.5], "up": [0.5, 0.75], "same": [0.25, 0.5]}
    table = pd.concat([tidy(run, "nfairr", v) for run, v in values.items()])
    out = paired_tests(table, measures=["nfairr@10"], runs=["up", "same"], alpha=0.99)
    assert list(out.columns) == PAIRED_COLUMNS and out["run"].tolist() == ["bm25", "up", "same"]
    assert out["significant"].dtype == bool and out["better"].dtype == object
    # p = 1 for "same" after Bonferroni (2 comparisons): not below alpha
    assert out["significant"].tolist() == [False, True, False]
    assert out.attrs == {"alpha": 0.99, "baseline": "bm25", "comparisons": 2}
    alone = paired_tests(table, measures=["nfairr@10"], runs=["bm25"])  # nothing compared
    assert alone["run"].tolist() == ["bm25"] and alone.attrs["comparisons"] == 0
    undefined = alone[["difference", "t", "p", "p_bonferroni"]]
    assert undefined.isna().all(axis=None) and (undefined.dtypes == np.float64).all()
    assert alone["significant"].tolist() == [False] and alone["better"].tolist() == [None]
    with pytest.raises(InputError) as info:
        paired_tests(table, measures=["nfairr@10"], runs=["up", "dense"])
    assert str(info.value) == "run(s) ['dense'] are not in the tables; runs: ['bm25', 'up', 'same']"
    with pytest.raises(InputError) as info:
        paired_tests([table, table.drop(columns="cutoff")], measures=["nfairr@10"])
    assert str(info.value) == (
        "table 1 lacks column(s) ['cutoff']; expected the tidy columns "
        "['run', 'qid', 'metric', 'cutoff', 'value']"
    )
    with pytest.raises(InputError) as info:
        paired_tests(pd.concat([table, tidy("up", "nfairr", [0.1], qids=["q01"])]), ["nfairr@10"])
    assert (
        str(info.value)
        == "measure 'nfairr@10': run 'up' has several rows for query 'q01'; expected one"
    )


def test_an_effectiveness_measure_without_cutoff_pairs_queries_by_their_text():
    """AP has no cut-off (NaN) and no direction in the registry: higher is better.  Query ids
    given as integers in one table and text in the other are the same queries."""
    effectiveness = pd.DataFrame(
        {"run": ["bm25"] * 3 + ["s"] * 3, "qid": [1, 2, 3, "1", "2", "3"], "metric": "AP",
         "cutoff": np.nan, "value": [0.2, 0.3, 0.4, 0.5, 0.6, 0.8]}
    )  # fmt: skip
    out = paired_tests(effectiveness, measures=["AP"]).set_index("run")
    assert out.loc["s", "n"] == 3 and out.loc["s", "n_excluded"] == 0
    assert out.loc["s", "difference"] == pytest.approx(1.0 / 3)
    assert out.loc["s", "better"] is True


def test_metric_correlation_whole_table_runs_queries_and_undefined_cases():
    qids = [f"q{i:02d}" for i in range(6)]
    x = [0.1, 0.4, 0.3, 0.2, 0.5, 0.9]
    y = [0.2, 0.5, 0.1, 0.4, 0.3, 0.35]  # a moderate correlation: 0.05 < p < 1
    tables = [
        tidy("s", "texfair", x, qids=qids),
        tidy("s", "nfairr", y, qids=qids),
        tidy("flat-x", "texfair", [0.3] * 6, qids=qids),  # constant first metric
        tidy("flat-x", "nfairr", y, qids=qids),
        tidy("flat-y", "texfair", x, qids=qids),
        tidy("flat-y", "nfairr", [0.7] * 6, qids=qids),  # constant second metric
        tidy("two", "texfair", [0.1, 0.2, np.nan, np.nan, np.nan, np.nan], qids=qids),
        tidy("two", "nfairr", [0.5, 0.3, 0.1, 0.2, 0.3, 0.4], qids=qids),
    ]
    with warnings.catch_warnings():  # constant metrics are not passed to pearsonr
        warnings.simplefilter("error")
        out = metric_correlation(pd.concat(tables), runs=["two", "s", "absent", "flat-x", "flat-y"])
    one_only = [tidy("y", "nfairr", y, qids=qids), tidy("x", "texfair", x, qids=qids)]
    one_only = metric_correlation(pd.concat([*tables, *one_only])).set_index("run")
    assert one_only.loc[["y", "x"], ["n", "n_excluded"]].values.tolist() == [[0, 6], [0, 6]]
    assert out.columns.tolist() == [
        "run", "first", "second", "cutoff", "n", "r", "p", "significant", "n_excluded"
    ]  # fmt: skip
    ref = stats.pearsonr(x, y)
    assert 0.05 < ref.pvalue < 1
    assert out["run"].tolist() == ["two", "s", "absent", "flat-x", "flat-y"]
    assert out[["first", "second"]].drop_duplicates().values.tolist() == [["texfair", "nfairr"]]
    assert out["cutoff"].tolist() == [10] * 5
    assert out["n"].tolist() == [2, 6, 0, 6, 6]
    assert out["n_excluded"].tolist() == [4, 0, 0, 0, 0]
    assert out["r"].iloc[1] == pytest.approx(ref.statistic, abs=1e-12)
    assert out["p"].iloc[1] == pytest.approx(ref.pvalue, rel=1e-9)
    undefined = out.drop(index=1)
    assert undefined[["r", "p"]].isna().all().all()
    assert out["significant"].tolist() == [False] * 5  # the default alpha is 0.05
    assert out.attrs == {"alpha": 0.05}
    # significant means p strictly below alpha
    at_p = metric_correlation(pd.concat(tables), alpha=ref.pvalue, runs=["s"])
    assert not at_p["significant"].item()
    above = metric_correlation(pd.concat(tables), alpha=ref.pvalue * (1 + 1e-9), runs=["s"])
    assert above["significant"].item()
    # a subset of the queries, given by id
    subset = metric_correlation(pd.concat(tables), qids=["q00", "q01", "q02", "q05"], runs=["s"])
    ref = stats.pearsonr([x[i] for i in (0, 1, 2, 5)], [y[i] for i in (0, 1, 2, 5)])
    assert subset["n"].item() == 4 and subset["n_excluded"].item() == 0  # both metrics cut
    assert subset["r"].item() == pytest.approx(ref.statistic, abs=1e-12)


def test_measure_rows_missing_or_repeated_are_named_whole():
    many = pd.concat(
        [tidy("s", f"m{j:02d}", [0.1, 0.2]) for j in range(22)]
        + [tidy("s", "AP", [0.3, 0.4], cutoff=None)]
    )
    with pytest.raises(InputError) as error:
        metric_correlation(many, first="m00", second="nfairr")
    known = ["AP"] + [f"m{j:02d}@10" for j in range(19)]  # the first twenty, sorted
    assert str(error.value) == f"no rows for measure 'nfairr@10'; the tables hold {known}"
    # two (run, query) pairs repeated, the second pair first, one with another value
    table = pd.concat([tidy("s", "nfairr", [0.1, 0.2, 0.3]), tidy("t", "nfairr", [0.4, 0.5, 0.6])])
    repeated = pd.concat([table, table.iloc[[4, 1]].assign(value=0.9)])
    with pytest.raises(InputError) as error:
        paired_tests(repeated, measures=["nfairr@10"], baseline="s")
    assert str(error.value) == (
        "measure 'nfairr@10': run 's' has several rows for query 'q01'; expected one"
    )


def test_a_run_or_the_baseline_without_rows_for_a_measure_is_reported_not_tested():
    table = pd.concat(
        [
            tidy("bm25", "nfairr", [0.5, 0.6, 0.7]),
            tidy("dense", "nfairr", [0.6, 0.8, 0.7]),
            tidy("dense", "texfair", [0.2, 0.3, 0.1]),
            tidy("sparse", "texfair", [0.4, 0.3, 0.2]),
        ]
    )
    out = paired_tests(table, measures=["texfair@10", "nfairr@10"], baseline="bm25")
    texfair = out[out["measure"] == "texfair@10"].set_index("run")
    assert texfair["n"].tolist() == [0, 3, 3]  # bm25 has no TExFAIR rows
    assert texfair.loc["bm25", ["mean", "difference", "t", "p"]].isna().all()
    assert texfair.loc["dense", "mean"] == pytest.approx(0.2)
    assert texfair.loc[["dense", "sparse"], ["difference", "t", "p"]].isna().all().all()
    assert texfair.loc[["dense", "sparse"], "n_excluded"].tolist() == [3, 3]
    nfairr = out[out["measure"] == "nfairr@10"].set_index("run")
    assert nfairr.loc["sparse", "n"] == 0 and np.isnan(nfairr.loc["sparse", "mean"])
    assert nfairr.loc["sparse", "n_excluded"] == 3
    assert nfairr.loc["dense", "difference"] == pytest.approx(0.1)
    assert nfairr.loc["dense", "better"] is True  # NFaiRR: higher is fairer
    # a direction given for the measure's label overrides the metric's own
    flipped = paired_tests(
        table, measures=["nfairr@10"], baseline="bm25", higher_is_better={"nfairr@10": False}
    ).set_index("run")
    assert flipped.loc["dense", "better"] is False
