"""Tests of rankbias.analysis.consistency: bias levels, quartile bins, overlaps (the rank
statistics are chapter 09's, checked there).

Expected values come from hand computation, invariants (identical metrics, reversed metrics) and
the hypergeometric law of the overlap of independent orderings — never from the code under test.
"""

from __future__ import annotations

import math

import numpy as np
import pandas as pd
import pytest

from rankbias.analysis.consistency import (
    bias_direction,
    bias_levels,
    bias_ranks,
    consistency_bins,
    query_bins,
    rank_bins,
)
from rankbias.errors import InputError


def tidy(values: dict[str, np.ndarray], run="bm25", cutoff=10, qids=None) -> pd.DataFrame:
    """A per-query table for one run/cutoff: {metric: values over the same queries}."""
    n = len(next(iter(values.values())))
    qids = [f"q{i:04d}" for i in range(n)] if qids is None else qids
    return pd.concat(
        [
            pd.DataFrame({"run": run, "qid": qids, "metric": m, "cutoff": cutoff, "value": v})
            for m, v in values.items()
        ],
        ignore_index=True,
    )


# ---- bias levels ------------------------------------------------------------------------------
def test_bias_levels_follow_the_registry_directions():
    table = tidy({"nfairr": np.array([0.9, 0.2]), "ted": np.array([0.3, 0.1]),
                  "arab_tc": np.array([-0.5, 0.25])})  # fmt: skip
    out = bias_levels(table, ["nfairr", "ted", "arab_tc"]).set_index(["metric", "qid"])["bias"]
    assert out["nfairr", "q0000"] == pytest.approx(0.1)  # 1 − NFaiRR
    assert out["nfairr", "q0001"] == pytest.approx(0.8)
    assert out["ted", "q0000"] == pytest.approx(0.3)  # higher = more biased: as is
    assert out["arab_tc", "q0000"] == pytest.approx(0.5)  # |ARaB|
    assert out["arab_tc", "q0001"] == pytest.approx(0.25)


def test_bias_levels_of_a_value_column_of_objects_are_floats_and_none_is_nan():
    # a table whose undefined values are None (as a PRF table's) has an object column
    table = tidy({"arab_tc": np.array([-0.5, 0.25, 0.0])})
    table["value"] = pd.array([-0.5, None, 0.25], dtype=object)
    out = bias_levels(table, ["arab_tc"])
    assert out["bias"].dtype == np.float64
    np.testing.assert_array_equal(out["bias"], [0.5, np.nan, 0.25])


def test_bias_levels_of_a_metric_outside_the_registry_follow_the_given_direction():
    table = tidy({"own": np.array([0.25, -0.5]), "ted": np.array([0.3, 0.1])})
    directions = {"own": "signed"}
    out = bias_levels(table, ["own", "ted"], directions).set_index(["metric", "qid"])["bias"]
    assert out["own", "q0000"] == pytest.approx(0.25)
    assert out["own", "q0001"] == pytest.approx(0.5)  # |−0.5|
    assert out["ted", "q0000"] == pytest.approx(0.3)
    with pytest.raises(ValueError, match="'own' is not in the registry"):
        bias_levels(table, ["own"])


def test_directions_of_every_registered_fairness_measure_come_from_the_registry():
    # Duo, rND and rKL: higher = more biased; CRBO: higher = fairer; signed Duo: signed
    assert [bias_direction(m) for m in ("duo", "rnd", "rkl@10")] == ["biased"] * 3
    assert bias_direction("crbo(p=0.9)@10") == "fairer"
    assert bias_direction("signed_duo") == "signed"
    table = tidy({"duo": np.array([0.25, 0.75])})
    out = bias_levels(table, ["duo"]).set_index(["metric", "qid"])["bias"]
    assert out["duo", "q0001"] == pytest.approx(0.75)  # as is


def test_non_fairness_entries_and_unknown_metrics_are_refused_unless_directed():
    for name in ("rbdf", "ifairr", "rab_tc_f"):
        with pytest.raises(ValueError, match="no bias level"):
            bias_direction(name)
    with pytest.raises(ValueError, match="not in the registry"):
        bias_direction("own")
    assert bias_direction("own", {"own": "biased"}) == "biased"
    assert bias_direction("duo", {"duo": "signed"}) == "signed"  # a given direction comes first
    with pytest.raises(ValueError, match="expected one of"):
        bias_direction("duo", {"duo": "up"})


# ---- bins by hand -----------------------------------------------------------------------------
def test_ties_are_broken_by_qid_and_bins_by_position():
    # 8 queries; values (higher = more biased) with ties; order: most biased first, ties by qid
    qids = ["q8", "q1", "q5", "q3", "q2", "q7", "q4", "q6"]
    values = np.array([0.5, 0.9, 0.5, 0.1, 0.9, 0.0, 0.5, 0.1])
    bins = query_bins(tidy({"ted": values}, qids=qids), ["ted"]).set_index("qid")
    # sorted: q1 0.9, q2 0.9, q4 0.5, q5 0.5, q8 0.5, q3 0.1, q6 0.1, q7 0.0
    expected_rank = {"q1": 1, "q2": 2, "q4": 3, "q5": 4, "q8": 5, "q3": 6, "q6": 7, "q7": 8}
    assert bins["rank"].to_dict() == expected_rank
    assert bins["bin"].to_dict() == {q: (r - 1) // 2 + 1 for q, r in expected_rank.items()}


def by_minus_bias_then_qid(values, qids, n_bins):
    """Rank (1-based) and bin of each qid by an independent sort on (−bias, qid)."""
    n = len(qids)
    order = sorted(range(n), key=lambda i: (-values[i], qids[i]))
    return {qids[i]: (position + 1, position * n_bins // n + 1) for position, i in enumerate(order)}


def test_ties_among_more_than_16_queries_are_broken_by_qid():
    # NumPy sorts up to 16 items by insertion sort, stable whatever sort kind is asked for; 60
    # queries in tie groups of about 20 (ted) and 30 (awrf), listed in shuffled order and with
    # qids whose string order is not their numeric order (q10 < q2), make any other order visible
    rng = np.random.default_rng(11)
    n = 60
    qids = [f"q{i}" for i in rng.permutation(n)]
    ted = rng.choice([0.2, 0.5, 0.8], size=n)
    awrf = rng.choice([0.1, 0.3], size=n)
    table = tidy({"ted": ted, "awrf": awrf}, qids=qids)
    expected = {"ted": by_minus_bias_then_qid(ted, qids, 4),
                "awrf": by_minus_bias_then_qid(awrf, qids, 4)}  # fmt: skip

    bins = query_bins(table, ["ted", "awrf"])
    for metric in ("ted", "awrf"):
        got = bins[bins["metric"] == metric].set_index("qid")
        assert {q: (r, b) for q, r, b in zip(got.index, got["rank"], got["bin"], strict=True)} == (
            expected[metric]
        )

    out = consistency_bins(table, ["ted", "awrf"], n_boot=0)
    for k in range(1, 5):
        in_a = {q for q, (_, b) in expected["ted"].items() if b == k}
        in_b = {q for q, (_, b) in expected["awrf"].items() if b == k}
        row = out[out["bin"] == k].iloc[0]
        assert row["n_in_bin"] == len(in_a) == 15
        assert row["overlap"] == pytest.approx(len(in_a & in_b) / 15)


def test_uneven_bins_hold_floor_or_ceiling_of_n_over_bins():
    # n = 10, 4 bins: position i goes to ⌊4i/10⌋ → sizes 3, 2, 3, 2
    x = np.arange(10.0)
    out = consistency_bins(tidy({"ted": x, "awrf": x}), ["ted", "awrf"], n_boot=0)
    assert out["n_in_bin"].tolist() == [3, 2, 3, 2]
    np.testing.assert_allclose(out["chance"], [0.3, 0.2, 0.3, 0.2])


# ---- the invariants of the issue --------------------------------------------------------------
def test_identical_metrics_agree_in_every_bin_with_a_degenerate_interval():
    rng = np.random.default_rng(3)
    x = rng.random(203)  # not divisible by 4 on purpose
    # the same bias levels reached through two directions: ted = x, nfairr = 1 − x
    out = consistency_bins(tidy({"ted": x, "nfairr": 1 - x}), ["ted", "nfairr"], n_boot=200)
    assert out["overlap"].tolist() == [1.0] * 4
    assert out["overlap_low"].tolist() == [1.0] * 4
    assert out["overlap_high"].tolist() == [1.0] * 4


def test_a_metric_and_its_reversal_share_no_query_in_any_bin_when_4_divides_n():
    rng = np.random.default_rng(4)
    x = rng.permutation(400) / 400.0  # distinct values
    # ted = x and nfairr = x: bias levels x and 1 − x, exactly reversed orders
    out = consistency_bins(tidy({"ted": x, "nfairr": x}), ["ted", "nfairr"], n_boot=0)
    assert out["overlap"].tolist() == [0.0] * 4
    np.testing.assert_allclose(out["chance"], 0.25)


def test_reversal_with_an_odd_number_of_queries_meets_in_the_middle_bin():
    # n = 5: positions 0..4 → bins 1,1,2,3,4; reversed, position 2 stays in bin 2 (by hand)
    x = np.array([5.0, 4.0, 3.0, 2.0, 1.0])
    out = consistency_bins(tidy({"ted": x, "awrf": -x}), ["ted", "awrf"], n_boot=0)
    assert out["n_in_bin"].tolist() == [2, 1, 1, 1]
    assert out["overlap"].tolist() == [0.0, 1.0, 0.0, 0.0]


def test_independent_metrics_agree_near_chance_within_hypergeometric_spread():
    n, bins = 2000, 4
    s = n // bins
    # |A_k ∩ B_k| ~ Hypergeometric(population n, s successes, s draws)
    sd_share = math.sqrt(s * (s / n) * (1 - s / n) * (n - s) / (n - 1)) / s
    overlaps = []
    for seed in range(5):
        rng = np.random.default_rng(100 + seed)
        table = tidy({"ted": rng.random(n), "awrf": rng.random(n)})
        out = consistency_bins(table, ["ted", "awrf"], n_boot=0)
        assert np.all(np.abs(out["overlap"] - 0.25) < 4 * sd_share), out["overlap"].tolist()
        overlaps.extend(out["overlap"])
    # the mean of 20 bins (the 4 bins of one pair are negatively dependent: bound by 20 iid)
    assert abs(np.mean(overlaps) - 0.25) < 4 * sd_share / math.sqrt(5)


def test_a_planted_partial_agreement_is_measured_by_hand():
    # 8 queries, 2 bins of 4; a orders q0..q7, b swaps q3 and q4 → one query per bin moves
    a = np.arange(8.0)[::-1]
    b = a.copy()
    b[[3, 4]] = b[[4, 3]]
    out = consistency_bins(tidy({"ted": a, "awrf": b}), ["ted", "awrf"], n_bins=2, n_boot=0)
    assert out["overlap"].tolist() == [0.75, 0.75]


def test_bootstrap_interval_contains_the_estimate_and_is_reproducible():
    rng = np.random.default_rng(5)
    x = rng.random(300)
    table = tidy({"ted": x, "awrf": x + rng.normal(0, 0.3, 300)})
    first = consistency_bins(table, ["ted", "awrf"], seed=7, n_boot=300)
    again = consistency_bins(table, ["ted", "awrf"], seed=7, n_boot=300)
    other = consistency_bins(table, ["ted", "awrf"], seed=8, n_boot=300)
    pd.testing.assert_frame_equal(first, again)
    assert not np.array_equal(first["overlap_low"], other["overlap_low"])
    assert np.all(first["overlap_low"] <= first["overlap"])
    assert np.all(first["overlap"] <= first["overlap_high"])
    assert np.all(first["overlap_high"] - first["overlap_low"] > 0)


def test_the_bootstrap_defaults_are_seed_0_and_1000_replicates():
    rng = np.random.default_rng(6)
    table = tidy({"ted": rng.random(40), "awrf": rng.random(40)})
    pd.testing.assert_frame_equal(
        consistency_bins(table, ["ted", "awrf"]),
        consistency_bins(table, ["ted", "awrf"], seed=0, n_boot=1000),
    )


@pytest.mark.parametrize(
    ("keywords", "message"),
    [
        ({"n_boot": -1}, "n_boot: expected an integer ≥ 0, found -1"),
        ({"n_boot": 2.5}, "n_boot: expected an integer ≥ 0, found 2.5"),
        ({"confidence": 0.0}, "confidence: expected a number between 0 and 1, found 0.0"),
        ({"confidence": 1.0}, "confidence: expected a number between 0 and 1, found 1.0"),
        ({"confidence": 1.5}, "confidence: expected a number between 0 and 1, found 1.5"),
        # True was one replicate, '0.9' a raw TypeError
        ({"n_boot": True}, "n_boot: expected an integer ≥ 0, found True"),
        ({"confidence": "0.9"}, "confidence: expected a number between 0 and 1, found '0.9'"),
    ],
)
def test_consistency_bins_refuses_a_bad_bootstrap_in_whole_messages(keywords, message):
    table = tidy({"ted": np.arange(8.0), "awrf": np.arange(8.0)})
    with pytest.raises(ValueError) as info:
        consistency_bins(table, ["ted", "awrf"], **keywords)
    assert str(info.value) == message


def test_consistency_bins_select_the_cutoff_asked_for():
    table = pd.concat(
        [
            tidy({"ted": np.array([0.1, 0.9, 0.5, 0.3]), "awrf": np.array([0.2, 0.8, 0.6, 0.1])}),
            tidy({"ted": np.array([0.9, 0.1, 0.5, 0.3]), "awrf": np.array([0.2, 0.8, 0.6, 0.1])},
                 cutoff=5),
        ],
        ignore_index=True,
    )  # fmt: skip
    # @10: the same top two (b, c) in both; @5: ted's top two are a, c, awrf's b, c
    at = {
        k: consistency_bins(table, ["ted", "awrf"], n_bins=2, n_boot=0, cutoff=k) for k in (10, 5)
    }
    assert at[10]["overlap"].tolist() == [1.0, 1.0]
    assert at[5]["overlap"].tolist() == [0.5, 0.5]


def test_table_faults_are_refused_in_whole_messages_naming_the_group():
    eight_runs = pd.concat([tidy({"ted": np.arange(3.0)}, run=f"r{i}") for i in range(8)])
    with pytest.raises(InputError) as info:
        query_bins(eight_runs, ["ted"])
    assert str(info.value) == (
        "per-query table holds 8 (run, cutoff) combinations, e.g. ('r0', 10), ('r1', 10), "
        "('r2', 10), ('r3', 10), ('r4', 10), ('r5', 10); expected one: pass run= and cutoff=, "
        "or by=('run', 'cutoff')"
    )
    lacking = pd.concat(
        [tidy({"ted": np.arange(4.0), "awrf": np.arange(4.0)}, run="a"),
         tidy({"ted": np.arange(4.0)}, run="b")]
    )  # fmt: skip
    with pytest.raises(InputError) as info:
        query_bins(lacking, ["ted", "awrf"], by=["run"], n_bins=2)
    assert str(info.value) == (
        "per-query table (run='b') has no rows for metric(s) ['awrf']; it holds ['ted']"
    )
    with pytest.raises(InputError) as info:
        query_bins(lacking, ["ted", "awrf"], by=["run", "cutoff"], n_bins=2)
    assert str(info.value) == (
        "per-query table (run='b', cutoff=10) has no rows for metric(s) ['awrf']; it holds ['ted']"
    )
    with pytest.raises(InputError) as info:
        query_bins(tidy({"ted": np.array([0.5])}), ["ted"], n_bins=1)  # one bin needs 2 queries
    assert str(info.value) == (
        "per-query table: 1 query(ies) have a value for every metric of ['ted']; expected at "
        "least 2"
    )
    # two values for the same query and metric (not repeated rows: the values differ)
    twice = pd.concat([tidy({"ted": np.arange(4.0)}), tidy({"ted": np.arange(2.0) + 10})])
    with pytest.raises(InputError) as info:
        query_bins(twice, ["ted"])
    assert str(info.value) == (
        "per-query table has 4 rows sharing (qid, metric), e.g. qid 'q0000' metric 'ted'; "
        "expected one row each"
    )


_SEVEN = {"ted": np.array([0.1, np.nan, 0.5, 0.3, 0.2, 0.6, 0.7]), "awrf": np.arange(7.0)}


@pytest.mark.parametrize(
    ("keywords", "error", "message"),
    [
        ({"n_bins": 0}, ValueError, "n_bins: expected a positive integer, found 0"),
        ({"n_bins": 2.5}, ValueError, "n_bins: expected a positive integer, found 2.5"),
        ({"n_bins": True}, ValueError, "n_bins: expected a positive integer, found True"),
        ({"by": ["lab"]}, InputError, "by names column(s) ['lab'] the per-query table lacks"),
        ({"run": "x"}, InputError, "per-query table has no rows for run='x', cutoff=None and "
         "metrics ['ted', 'awrf']; runs: ['bm25'], cutoffs: [10]"),
        ({"cutoff": 5}, InputError, "per-query table has no rows for run=None, cutoff=5 and "
         "metrics ['ted', 'awrf']; runs: ['bm25'], cutoffs: [10]"),
        ({"undefined": "error"}, InputError, "per-query table: 1 query(ies) have an undefined "
         "(NaN) or absent value for some of ['ted', 'awrf'], e.g. q0001; expected a value for "
         "every query and metric (or undefined='exclude')"),
        ({"undefined": "drop"}, ValueError,
         "undefined: expected one of 'exclude', 'error', found 'drop'"),
        ({"n_bins": 7}, InputError, "per-query table: 6 query(ies) have a value for every "
         "metric of ['ted', 'awrf']; expected at least 7"),
    ],
)  # fmt: skip
def test_query_bins_refuse_in_whole_messages(keywords, error, message):
    with pytest.raises(error) as info:
        query_bins(tidy(_SEVEN), ["ted", "awrf"], **keywords)
    assert str(info.value) == message


@pytest.mark.parametrize(
    ("metrics", "error", "message"),
    [
        ("ted", TypeError, "metrics must be a sequence of names, found the string 'ted'"),
        (["ted", "ted"], ValueError, "metrics repeat in ['ted', 'ted']; expected distinct names"),
        (["awrf"], InputError, "per-query table has no rows for metric(s) ['awrf']; it holds "
         "none of the requested metrics"),
        (["rbdf"], ValueError, "metric 'rbdf' has no bias level: its registry direction is "
         "'neither'; expected a fairness score (higher is fairer, more biased, or signed)"),
    ],
)  # fmt: skip
def test_metric_faults_are_refused_in_whole_messages(metrics, error, message):
    with pytest.raises(error) as info:
        query_bins(tidy({"ted": np.arange(5.0)}), metrics)
    assert str(info.value) == message
    with pytest.raises(error) as info:  # checked before grouping as well
        query_bins(tidy({"ted": np.arange(5.0)}), metrics, by="run")
    assert str(info.value) == message


def test_an_undefined_error_names_the_first_five_queries():
    values = np.array([np.nan] * 6 + [0.1, 0.2, 0.3])
    with pytest.raises(InputError, match=r"e\.g\. q0000, q0001, q0002, q0003, q0004; expected"):
        query_bins(tidy({"ted": values}), ["ted"], undefined="error")


def test_one_bin_holds_every_query_and_by_takes_a_column_name():
    assert query_bins(tidy(_SEVEN), ["ted"], n_bins=1)["bin"].tolist() == [1] * 6
    two = pd.concat(
        [tidy({"ted": np.arange(4.0)}, run="b"), tidy({"ted": np.arange(4.0)[::-1]}, run="a")]
    )
    out = query_bins(two, ["ted"], n_bins=2, by="run")
    assert out.index.tolist() == list(range(8))  # numbered afresh across the groups
    assert out[["run", "qid", "rank"]].values.tolist() == [
        ["a", "q0000", 1], ["a", "q0001", 2], ["a", "q0002", 3], ["a", "q0003", 4],
        ["b", "q0000", 4], ["b", "q0001", 3], ["b", "q0002", 2], ["b", "q0003", 1],
    ]  # fmt: skip
    assert list(out.attrs) == [("a",), ("b",)] and out.attrs[("a",)]["n_queries"] == 4


def test_every_pair_is_reported_once_in_the_order_given():
    x = np.arange(8.0)
    table = tidy({"ted": x, "awrf": x, "nfairr": x})
    out = consistency_bins(table, ["nfairr", "ted", "awrf"], n_boot=0)
    pairs = list(dict.fromkeys(zip(out["metric_a"], out["metric_b"], strict=True)))
    assert pairs == [("nfairr", "ted"), ("nfairr", "awrf"), ("ted", "awrf")]
    assert out["bin"].tolist() == [1, 2, 3, 4] * 3


# ---- input handling ---------------------------------------------------------------------------
def test_several_runs_or_cutoffs_must_be_selected_or_grouped():
    x = np.arange(8.0)
    table = pd.concat([tidy({"ted": x, "awrf": x}, run="bm25"),
                       tidy({"ted": x, "awrf": -x}, run="dense")])  # fmt: skip
    with pytest.raises(InputError, match="2 \\(run, cutoff\\) combinations"):
        consistency_bins(table, ["ted", "awrf"], n_boot=0)
    bm25 = consistency_bins(table, ["ted", "awrf"], run="bm25", n_boot=0)
    with pytest.raises(InputError, match="no rows for run='bm26'"):
        consistency_bins(table, ["ted", "awrf"], run="bm26", n_boot=0)
    assert bm25["overlap"].tolist() == [1.0] * 4
    grouped = consistency_bins(table, ["ted", "awrf"], by=("run", "cutoff"), n_boot=0)
    assert list(grouped.columns[:2]) == ["run", "cutoff"]
    assert grouped.loc[grouped["run"] == "bm25", "overlap"].tolist() == [1.0] * 4
    assert grouped.loc[grouped["run"] == "dense", "overlap"].tolist() == [0.0] * 4
    assert set(grouped.attrs) == {("bm25", 10), ("dense", 10)}


def test_undefined_values_are_excluded_and_counted_or_refused():
    x = np.arange(10.0)
    y = x.copy()
    y[[2, 7]] = np.nan
    table = tidy({"ted": x, "awrf": y})
    table = table[~((table["metric"] == "ted") & (table["qid"] == "q0009"))]  # an absent row
    out = consistency_bins(table, ["ted", "awrf"], n_boot=0)
    assert out.attrs["undefined_values"] == {"ted": 0, "awrf": 2}
    assert out.attrs["absent_values"] == {"ted": 1, "awrf": 0}
    assert out.attrs["excluded_queries"] == ["q0002", "q0007", "q0009"]
    assert out.attrs["n_queries"] == 7
    assert out["n_in_bin"].sum() == 7
    with pytest.raises(InputError, match="3 query\\(ies\\) have an undefined"):
        consistency_bins(table, ["ted", "awrf"], n_boot=0, undefined="error")


def test_bad_tables_are_errors_that_say_what_was_expected():
    x = np.arange(8.0)
    table = tidy({"ted": x, "awrf": x})
    with pytest.raises(InputError, match="no rows for metric"):
        consistency_bins(table, ["ted", "nfairr"], n_boot=0)
    with pytest.raises(InputError, match="sharing \\(qid, metric\\)"):
        consistency_bins(pd.concat([table, table.head(1)]), ["ted", "awrf"], n_boot=0)
    with pytest.raises(InputError, match="lacks column"):
        consistency_bins(table.drop(columns="cutoff"), ["ted", "awrf"], n_boot=0)
    with pytest.raises(ValueError, match="at least 2"):
        consistency_bins(table, ["ted"], n_boot=0)
    with pytest.raises(InputError, match="expected at least 4"):
        consistency_bins(table[table["qid"] < "q0003"], ["ted", "awrf"], n_boot=0)


def test_query_bins_select_the_run_and_cutoff_asked_for_and_group_by_run():
    table = pd.concat(
        [
            tidy({"ted": np.array([0.1, 0.9])}, run="bm25", cutoff=10, qids=["a", "b"]),
            tidy({"ted": np.array([0.8, 0.2])}, run="bm25", cutoff=5, qids=["a", "b"]),
            tidy({"ted": np.array([0.3, 0.4])}, run="dense", cutoff=10, qids=["a", "b"]),
            tidy({"ted": np.array([0.1, 0.7])}, run="dense", cutoff=5, qids=["a", "b"]),
        ],
        ignore_index=True,
    )
    bins = query_bins(table, ["ted"], n_bins=2, run="bm25", cutoff=5)
    assert bins[["qid", "metric", "bias", "rank", "bin"]].values.tolist() == [
        ["a", "ted", 0.8, 1, 1],
        ["b", "ted", 0.2, 2, 2],
    ]
    by_run = query_bins(table, ["ted"], n_bins=2, cutoff=10, by=["run"])
    ranks = by_run.set_index(["run", "qid"])["rank"].to_dict()
    assert ranks == {("bm25", "a"): 2, ("bm25", "b"): 1, ("dense", "a"): 2, ("dense", "b"): 1}


def reference_overlaps(a: np.ndarray, b: np.ndarray, n_bins: int) -> np.ndarray:
    """O_k by the definition: rank by bias (most biased first, ties in qid order), bin
    ⌊rank·n_bins/n⌋, share of bin k's queries in bin k for both."""
    n = len(a)
    bins = []
    for values in (a, b):
        rank = np.empty(n, dtype=int)
        rank[np.argsort(-values, kind="stable")] = np.arange(n)
        bins.append(rank * n_bins // n)
    sizes = np.bincount(np.arange(n) * n_bins // n, minlength=n_bins)
    return np.array([((bins[0] == k) & (bins[1] == k)).sum() for k in range(n_bins)]) / sizes


def test_the_bootstrap_interval_is_the_percentile_interval_of_resampled_queries(monkeypatch):
    import rankbias.analysis.consistency as module

    rng = np.random.default_rng(11)
    n, n_boot, seed = 40, 30, 3
    x = rng.random(n)
    y = x + rng.normal(0, 0.4, n)
    table = tidy({"a": x, "b": y})
    directions = {"a": "biased", "b": "biased"}
    # replicates drawn in chunks of 7 (four full chunks, then 2): the same as one draw
    monkeypatch.setattr(module, "_CHUNK_CELLS", 7 * n * 2)
    out = consistency_bins(
        table, ["a", "b"], n_bins=4, seed=seed, n_boot=n_boot, confidence=0.8,
        directions=directions,
    )  # fmt: skip
    draws = np.sort(np.random.default_rng(seed).integers(0, n, size=(n_boot, n)), axis=1)
    replicates = np.array([reference_overlaps(x[i], y[i], 4) for i in draws])
    low, high = np.quantile(replicates, [0.1, 0.9], axis=0)
    np.testing.assert_allclose(out["overlap_low"], low, rtol=0, atol=1e-12)
    np.testing.assert_allclose(out["overlap_high"], high, rtol=0, atol=1e-12)
    np.testing.assert_allclose(out["overlap"], reference_overlaps(x, y, 4), rtol=0, atol=1e-12)


def test_query_bins_and_bias_levels_follow_a_given_direction_in_a_plain_table():
    table = tidy({"own": np.array([0.9, 0.3, 0.6])}, qids=["a", "b", "c"])
    bins = query_bins(table, ["own"], n_bins=3, directions={"own": "fairer"})
    assert bins[["qid", "bias", "rank"]].values.tolist() == [
        ["a", pytest.approx(0.1), 3], ["b", pytest.approx(0.7), 1], ["c", pytest.approx(0.4), 2]
    ]  # fmt: skip
    levels = bias_levels(table.iloc[::-1], ["own"], {"own": "signed"})
    assert levels.index.tolist() == [0, 1, 2]
    assert levels.columns.tolist() == ["run", "qid", "metric", "cutoff", "value", "bias"]


def test_bias_ranks_by_hand_ties_by_qid_and_a_single_query():
    # column 0: 0.5 most biased (rank 0), the two 0.2 tied: the earlier row first
    bias = np.array([[0.2, 1.0], [0.5, 0.0], [0.2, 2.0]])
    assert bias_ranks(bias).tolist() == [[1, 1], [0, 2], [2, 0]]
    assert bias_ranks(np.array([[0.3, -0.1]])).tolist() == [[0, 0]]  # one query: rank 0
    assert rank_bins(bias_ranks(bias), 2).tolist() == [[0, 0], [0, 1], [1, 0]]  # ⌊rank·2/3⌋
