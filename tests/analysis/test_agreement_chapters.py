import itertools

import numpy as np
import pandas as pd
import pytest

from rankbias.analysis.agreement_chapters import (
    chance_rank_difference,
    correlation_by_cutoff,
    duo_per_query,
    pair_labels,
    tied_least_biased,
)


def test_duo_per_query_keeps_one_variant_as_tidy_rows():
    table = pd.DataFrame(
        {
            "run": ["a", "a", "a", "a"],
            "qid": ["q1", "q1", "q1", "q2"],
            "metric": ["Duo", "direction", "Duo", "Duo"],
            "variance": ["prefix", "prefix", "global", "prefix"],
            "cutoff": 10,
            "n_docs": 10,
            "value": [0.7, 1.0, 0.6, 0.9],
        }
    )
    out = duo_per_query(table)
    assert list(out.columns) == ["run", "qid", "metric", "cutoff", "value"]
    assert out["qid"].tolist() == ["q1", "q2"]
    assert out["value"].tolist() == [0.7, 0.9]
    assert set(out["metric"]) == {"duo"}
    assert duo_per_query(table, variance="global")["value"].tolist() == [0.6]
    with pytest.raises(ValueError, match="variance 'none'"):
        duo_per_query(table, variance="none")


def test_tied_least_biased_counts_ties_at_the_lowest_bias_level():
    # nfairr: bias = 1 - value, lowest bias 0 for values 1.0 (q1, q2); q4 undefined
    # arab_tf: bias = |value|, lowest 0.1 shared by q2 (-0.1) and q3 (+0.1)
    table = pd.DataFrame(
        {
            "run": "r",
            "cutoff": 10,
            "qid": ["q1", "q2", "q3", "q4"] * 2,
            "metric": ["nfairr"] * 4 + ["arab_tf"] * 4,
            "value": [1.0, 1.0, 0.4, np.nan, 0.5, -0.1, 0.1, 0.3],
        }
    )
    out = tied_least_biased(table, ["nfairr", "arab_tf"]).set_index("metric")
    assert out.loc["nfairr", "queries"] == 3 and out.loc["nfairr", "tied"] == 2
    assert out.loc["arab_tf", "queries"] == 4 and out.loc["arab_tf", "tied"] == 2
    assert out.loc["arab_tf", "share"] == pytest.approx(0.5)
    assert out.loc["nfairr", "share"] == pytest.approx(2 / 3)


@pytest.mark.parametrize("n", [1, 2, 3, 5, 8])
def test_chance_rank_difference_matches_enumeration(n):
    diffs = [abs(i - j) for i, j in itertools.product(range(n), repeat=2)]
    assert chance_rank_difference(n) == pytest.approx(np.mean(diffs))


def test_chance_rank_difference_rejects_empty():
    with pytest.raises(ValueError):
        chance_rank_difference(0)


def _planted(rng, n=200):
    x = rng.uniform(size=n)
    rows = []
    for cutoff in (5, 10):
        y = x + (0.05 if cutoff == 5 else 1.0) * rng.normal(size=n)
        rbdf = np.where(np.arange(n) % 2 == 0, 1.0, 0.0)
        for metric, values in (("texfair", x), ("nfairr", y), ("rbdf", rbdf)):
            rows.append(
                pd.DataFrame(
                    {
                        "run": "s",
                        "qid": [f"q{i:03d}" for i in range(n)],
                        "metric": metric,
                        "cutoff": cutoff,
                        "value": values,
                    }
                )
            )
    return pd.concat(rows, ignore_index=True), x


def test_correlation_by_cutoff_recovers_planted_correlations():
    table, _ = _planted(np.random.default_rng(3))
    out = correlation_by_cutoff(table, "texfair", "nfairr", [5, 10]).set_index("cutoff")
    assert out.loc[5, "r"] > 0.95  # noise sd 0.05 against sd(x) ≈ 0.29
    assert 0.1 < out.loc[10, "r"] < 0.5  # noise sd 1: r ≈ 0.29
    assert (out["n"] == 200).all()


def test_correlation_by_cutoff_with_rbdf_threshold_keeps_only_dense_lists():
    table, x = _planted(np.random.default_rng(4))
    out = correlation_by_cutoff(table, "texfair", "nfairr", [5], min_rbdf=0.5)
    assert out.loc[0, "n"] == 100 and out.loc[0, "n_below_rbdf"] == 100
    # the same statistic, by hand, on the even queries
    rows = table[(table["cutoff"] == 5)]
    even = rows[rows["qid"].str[1:].astype(int) % 2 == 0]
    a = even[even["metric"] == "texfair"]["value"].to_numpy()
    b = even[even["metric"] == "nfairr"]["value"].to_numpy()
    assert out.loc[0, "r"] == pytest.approx(np.corrcoef(a, b)[0, 1])


def test_correlation_by_cutoff_on_a_query_set_uses_only_those_queries():
    table, _ = _planted(np.random.default_rng(6))
    subset = [f"q{i:03d}" for i in range(0, 200, 4)]
    out = correlation_by_cutoff(table, "texfair", "nfairr", [10], qids=subset)
    assert out.loc[0, "n"] == 50
    rows = table[(table["cutoff"] == 10) & table["qid"].isin(subset)]
    a = rows[rows["metric"] == "texfair"]["value"].to_numpy()
    b = rows[rows["metric"] == "nfairr"]["value"].to_numpy()
    assert out.loc[0, "r"] == pytest.approx(np.corrcoef(a, b)[0, 1])


def test_correlation_by_cutoff_requires_rbdf_rows_for_a_threshold():
    table, _ = _planted(np.random.default_rng(5))
    with pytest.raises(ValueError, match="rbdf"):
        correlation_by_cutoff(
            table[table["metric"] != "rbdf"], "texfair", "nfairr", [5], min_rbdf=0.5
        )


def test_pair_labels_use_display_names():
    frame = pd.DataFrame({"metric_a": ["nfairr", "mine"], "metric_b": ["duo", "arab_tf"]})
    assert pair_labels(frame).tolist() == ["NFaiRR – Duo", "mine – ARaB tf"]
