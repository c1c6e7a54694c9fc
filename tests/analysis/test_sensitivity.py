"""Tests of rankbias.analysis.sensitivity: word-list subsampling by column selection.

Expected values: the full-list scores of :func:`rankbias.scoring.score_runs` (100% must reproduce
them exactly), statistics recomputed from the texts with the sub-list (an independent path
through the tokeniser), and hand-made study tables for the summaries.
"""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from rankbias.analysis.sensitivity import (
    distribution_summary,
    lexicon_of,
    rank_stability,
    subsample_coverage,
    subsample_stats,
    subsampling_study,
    top_category_stability,
)
from rankbias.errors import InputError
from rankbias.lexicon import Lexicon, subsample
from rankbias.runs import Run
from rankbias.scoring import DEFAULT_MEASURES, score_runs
from rankbias.text import document_stats

FEMALE = ["she", "her", "woman", "mother", "girl", "queen", "aunt", "sister"]
MALE = ["he", "him", "man", "father", "boy", "king", "uncle", "brother"]
LEXICON = Lexicon.from_mapping({**{t: "f" for t in FEMALE}, **{t: "m" for t in MALE}})
FILLER = ["the", "river", "data", "music", "stone", "paper", "cloud", "table"]


@pytest.fixture(scope="module")
def testbed():
    rng = np.random.default_rng(0)
    vocabulary = FEMALE + MALE + FILLER * 4
    texts = [" ".join(rng.choice(vocabulary, size=rng.integers(5, 30))) for _ in range(120)]
    docids = [f"d{i:03d}" for i in range(120)]
    stats = document_stats(texts, LEXICON, docids=docids, per_term=True)
    runs = []
    for name in ("bm25", "dense"):
        rows = []
        for q in range(16):
            chosen = rng.choice(120, size=12, replace=False)
            rows.append(
                pd.DataFrame(
                    {
                        "qid": f"q{q:02d}",
                        "docid": [docids[i] for i in chosen],
                        "score": np.arange(12, 0, -1.0),
                    }
                )
            )
        runs.append(Run.from_frame(pd.concat(rows), name))
    return texts, docids, stats, runs


def test_the_full_list_gives_the_statistics_unchanged(testbed):
    _, _, stats, _ = testbed
    same = subsample_stats(stats, lexicon_of(stats))
    np.testing.assert_array_equal(same.group_counts, stats.group_counts)
    assert (same.term_counts != stats.term_counts).nnz == 0
    assert same.terms == stats.terms
    full = subsample_stats(stats, subsample(lexicon_of(stats), 1.0, seed=123))
    np.testing.assert_array_equal(full.group_counts, stats.group_counts)


def test_column_selection_equals_recounting_the_texts_with_the_sub_list(testbed):
    texts, docids, stats, _ = testbed
    for fraction, seed in ((0.25, 1), (0.5, 2), (0.75, 3)):
        sub = subsample(LEXICON, fraction, seed)
        selected = subsample_stats(stats, sub)
        recounted = document_stats(texts, sub, docids=docids, per_term=True)
        np.testing.assert_array_equal(selected.group_counts, recounted.group_counts)
        np.testing.assert_array_equal(selected.lengths, recounted.lengths)
        assert selected.terms == recounted.terms
        assert (selected.term_counts != recounted.term_counts).nnz == 0


def test_subsampling_at_100_percent_reproduces_the_full_list_values_exactly(testbed):
    _, _, stats, runs = testbed
    metrics = list(DEFAULT_MEASURES)
    full = score_runs(runs, stats, metrics, cutoffs=(5, 10))
    study = subsampling_study(
        runs, stats, metrics, cutoffs=(5, 10), fractions=(0.5, 1.0), seeds=range(3)
    )
    at_full = study[study["fraction"] == 1.0]
    assert at_full["seed"].unique().tolist() == [0]  # computed once
    left = full.set_index(["run", "qid", "metric", "cutoff"])["value"].sort_index()
    right = (
        at_full.astype({"run": str, "qid": str, "metric": str})
        .set_index(["run", "qid", "metric", "cutoff"])["value"]
        .sort_index()
    )
    assert left.index.equals(right.index)
    np.testing.assert_array_equal(left.to_numpy(), right.to_numpy())  # NaN where NaN


def test_a_replicate_equals_scoring_the_recounted_collection(testbed):
    texts, docids, stats, runs = testbed
    study = subsampling_study(
        runs, stats, ["arab_tc", "nfairr", "texfair"], fractions=(0.5,), seeds=[7]
    )
    recounted = document_stats(texts, subsample(LEXICON, 0.5, 7), docids=docids, per_term=True)
    expected = score_runs(runs, recounted, ["arab_tc", "nfairr", "texfair"], cutoffs=(10,))
    np.testing.assert_allclose(study["value"].to_numpy(), expected["value"].to_numpy())
    assert study.attrs["terms_kept"][(0.5, 7)] == {"f": 4, "m": 4}


def test_study_shape_and_reproducibility(testbed):
    _, _, stats, runs = testbed
    kwargs = dict(metrics=["arab_tc"], fractions=(0.25, 1.0), seeds=range(4))
    first = subsampling_study(runs, stats, **kwargs)
    again = subsampling_study(runs, stats, **kwargs)
    # 2 runs × 16 queries × 1 metric × 1 cutoff: 4 seeds at 25%, once at 100%
    assert len(first) == 32 * (4 + 1)
    pd.testing.assert_frame_equal(first, again)
    seeds = first[first["fraction"] == 0.25].groupby("seed")["value"].apply(tuple)
    assert len(set(seeds)) > 1  # different seeds, different sub-lists


def test_errors_without_per_term_counts_or_with_foreign_terms(testbed):
    texts, docids, stats, _ = testbed
    plain = document_stats(texts, LEXICON, docids=docids)
    with pytest.raises(InputError, match="per_term=True"):
        subsample_stats(plain, LEXICON)
    other = Lexicon.from_mapping({"she": "f", "duke": "m"})
    with pytest.raises(InputError, match="not columns of the statistics"):
        subsample_stats(stats, other)
    moved = Lexicon.from_mapping({"she": "m", "he": "f"}, groups=("f", "m"))
    with pytest.raises(InputError, match="term 'he' is in group 'f'"):
        subsample_stats(stats, moved)


def study_table(values: dict[tuple[float, int], list[float]], metric="nfairr", run="bm25"):
    parts = []
    for (fraction, seed), vals in values.items():
        parts.append(
            pd.DataFrame(
                {
                    "fraction": fraction,
                    "seed": seed,
                    "run": run,
                    "qid": [f"q{i}" for i in range(len(vals))],
                    "metric": metric,
                    "cutoff": 10,
                    "value": vals,
                }
            )
        )
    return pd.concat(parts, ignore_index=True)


def test_distribution_summary_by_hand():
    table = study_table(
        {
            (0.5, 0): [0.4, 0.5, 0.6, np.nan],
            (0.5, 1): [0.3, 0.5, 0.5, 0.7],
            (1.0, 0): [0.0, 0.4, 0.6, 1.0],
        }  # fmt: skip
    )
    out = distribution_summary(table).set_index("fraction")
    half, full = out.loc[0.5], out.loc[1.0]
    assert half["n_values"] == 7 and half["n_undefined"] == 1
    assert half["mean"] == pytest.approx(3.5 / 7)
    assert half["min"] == 0.3 and half["max"] == 0.7 and half["median"] == 0.5
    # per-seed ranges 0.2 and 0.4 -> mean 0.3; full range 1.0 -> ratio 0.3
    assert half["range_mean"] == pytest.approx(0.3)
    assert half["range_ratio"] == pytest.approx(0.3)
    # per-seed IQRs (linear quantiles): seed 0 [0.4,0.5,0.6] -> 0.55 − 0.45 = 0.1;
    # seed 1 [0.3,0.5,0.5,0.7] -> 0.55 − 0.45 = 0.1; full [0,0.4,0.6,1] -> 0.7 − 0.3 = 0.4
    assert half["iqr_mean"] == pytest.approx(0.1)
    assert half["iqr_ratio"] == pytest.approx(0.25)
    assert full["range_ratio"] == 1.0


def test_distribution_summary_of_an_incomplete_study_counts_only_nan_as_undefined():
    # a cell absent from the table (q4 missing from seed 0; q5 only in the full list) is not an
    # undefined value: n_undefined counts the NaN values the table holds, n_values the finite ones
    rows = {
        (1.0, 0): {"q0": 0.1, "q1": 0.2, "q2": 0.3, "q3": 0.4, "q4": 0.5, "q5": 0.7},
        (0.5, 0): {"q0": 0.2, "q1": 0.2, "q2": np.nan, "q3": 0.6},
        (0.5, 1): {"q0": 0.1, "q1": np.nan, "q2": 0.3, "q3": 0.3, "q4": 0.9},
    }
    table = pd.DataFrame(
        [
            {
                "fraction": f,
                "seed": s,
                "run": "bm25",
                "qid": q,
                "metric": "nfairr",
                "cutoff": 10,
                "value": v,
            }  # fmt: skip
            for (f, s), values in rows.items()
            for q, v in values.items()
        ]
    )
    out = distribution_summary(table).set_index("fraction")
    half, full = out.loc[0.5], out.loc[1.0]
    assert (half["n_values"], half["n_undefined"]) == (7, 2)
    assert (full["n_values"], full["n_undefined"]) == (6, 0)
    # absent cells are counted apart: q4 and q5 from seed 0, q5 from seed 1
    assert (half["n_absent"], full["n_absent"]) == (3, 0)
    # pooled half: 0.1 0.2 0.2 0.3 0.3 0.6 0.9; linear quartiles at positions 1.5, 3, 4.5
    assert half["mean"] == pytest.approx(2.6 / 7)
    assert (half["min"], half["max"]) == (0.1, 0.9)
    assert half["q1"] == pytest.approx(0.2)
    assert half["median"] == pytest.approx(0.3)
    assert half["q3"] == pytest.approx(0.45)
    # ranges: seed 0 {0.2, 0.2, 0.6} 0.4, seed 1 {0.1, 0.3, 0.3, 0.9} 0.8; full 0.7 − 0.1 = 0.6
    assert half["range_mean"] == pytest.approx(0.6)
    assert half["range_ratio"] == pytest.approx(1.0)
    # IQRs: seed 0 0.4 − 0.2, seed 1 0.45 − 0.25; full (positions 1.25, 3.75) 0.475 − 0.225
    assert half["iqr_mean"] == pytest.approx(0.2)
    assert full["iqr_mean"] == pytest.approx(0.25)
    assert half["iqr_ratio"] == pytest.approx(0.8)


def test_distribution_summary_keeps_runs_and_metrics_apart_and_a_zero_range_gives_nan():
    # two runs × two metrics in one study; ted's full-list values are all equal (range 0)
    parts = []
    for run, shift in (("bm25", 0.0), ("dense", 0.5)):
        parts.append(study_table({(1.0, 0): [0.1 + shift, 0.3 + shift],
                                  (0.5, 0): [0.2 + shift, 0.2 + shift]}, run=run))  # fmt: skip
        parts.append(study_table({(1.0, 0): [0.4, 0.4], (0.5, 0): [0.1, 0.7]},
                                 metric="ted", run=run))  # fmt: skip
    out = distribution_summary(pd.concat(parts, ignore_index=True))
    out = out.set_index(["run", "metric", "fraction"]).sort_index()
    assert len(out) == 8
    assert out.loc[("bm25", "nfairr", 1.0), "mean"] == pytest.approx(0.2)
    assert out.loc[("dense", "nfairr", 1.0), "mean"] == pytest.approx(0.7)
    assert out.loc[("dense", "nfairr", 0.5), "max"] == pytest.approx(0.7)
    assert (out.xs("nfairr", level="metric")["n_values"] == 2).all()
    # nfairr: sub-list range 0 over full range 0.2 → 0; ted: full range 0 → ratio NaN, not inf
    assert out.loc[("bm25", "nfairr", 0.5), "range_ratio"] == 0.0
    assert out.loc[("dense", "ted", 0.5), "range_mean"] == pytest.approx(0.6)
    assert np.isnan(out.loc[("bm25", "ted", 0.5), "range_ratio"])
    assert np.isnan(out.loc[("dense", "ted", 0.5), "iqr_ratio"])


def test_rank_stability_breaks_ties_among_more_than_16_queries_by_qid():
    # 40 queries, full-list values in three tie groups; sub-list "kept" separates each tie group
    # in qid order (same bins as ties broken by qid), sub-list "turned" in reverse qid order
    rng = np.random.default_rng(5)
    n = 40
    qids = [f"q{i}" for i in rng.permutation(n)]
    full = rng.choice([0.2, 0.5, 0.8], size=n)
    position_in_qid_order = np.argsort(np.argsort(qids))
    kept = full - 1e-4 * position_in_qid_order
    turned = full + 1e-4 * position_in_qid_order
    parts = [
        pd.DataFrame(
            {
                "fraction": f,
                "seed": s,
                "run": "bm25",
                "qid": qids,
                "metric": "ted",
                "cutoff": 10,
                "value": v,
            }
        )  # fmt: skip
        for f, s, v in ((1.0, 0, full), (0.5, 0, kept), (0.5, 1, turned))
    ]
    out = rank_stability(pd.concat(parts, ignore_index=True)).set_index(["fraction", "seed"])

    def bins(values):  # independent: sort by (−level, qid), 4 bins by position
        order = sorted(range(n), key=lambda i: (-values[i], qids[i]))
        return {qids[i]: position * 4 // n for position, i in enumerate(order)}

    reference = bins(full)
    for seed, values in ((0, kept), (1, turned)):
        other = bins(values)
        expected = np.mean([reference[q] == other[q] for q in qids])
        assert out.loc[(0.5, seed), "bin_agreement"] == pytest.approx(expected)
    assert out.loc[(0.5, 0), "bin_agreement"] == 1.0
    assert out.loc[(0.5, 1), "bin_agreement"] < 1.0


def test_rank_stability_of_identical_and_reversed_rankings():
    full = [0.1, 0.2, 0.3, 0.4, 0.5, 0.6, 0.7, 0.8]
    table = study_table({(1.0, 0): full, (0.5, 0): full, (0.5, 1): full[::-1],
                         (0.25, 0): [0.2, 0.1, 0.3, 0.4, 0.5, 0.6, 0.8, 0.7]})  # fmt: skip
    out = rank_stability(table).set_index(["fraction", "seed"])
    assert out.loc[(0.5, 0), "spearman_rho"] == pytest.approx(1.0)
    assert out.loc[(0.5, 0), "bin_agreement"] == 1.0
    assert out.loc[(0.5, 1), "spearman_rho"] == pytest.approx(-1.0)
    assert out.loc[(0.5, 1), "bin_agreement"] == 0.0  # 4 bins of 2: none stays
    # two swaps inside bins: ρ = 1 − 6·Σd²/(n(n²−1)) = 1 − 6·4/504; bins unchanged
    assert out.loc[(0.25, 0), "spearman_rho"] == pytest.approx(1 - 24 / 504)
    assert out.loc[(0.25, 0), "bin_agreement"] == 1.0


def test_rank_stability_counts_undefined_queries():
    full = [0.1, 0.2, 0.3, 0.4, 0.5, 0.6, 0.7, 0.8, 0.9]
    sub = [0.1, np.nan, 0.3, 0.4, 0.5, 0.6, 0.7, 0.8, 0.9]
    out = rank_stability(study_table({(1.0, 0): full, (0.5, 0): sub}))
    row = out[out["fraction"] == 0.5].iloc[0]
    assert row["n"] == 8 and row["n_excluded"] == 1
    assert row["spearman_rho"] == pytest.approx(1.0) and row["bin_agreement"] == 1.0
    with pytest.raises(InputError, match="fraction-1"):
        rank_stability(study_table({(0.5, 0): full}))


def test_top_category_stability_counts_seeds():
    rng = np.random.default_rng(1)
    n = 60
    planted = rng.random(n)
    shares = pd.DataFrame(
        {
            "run": "bm25",
            "qid": np.repeat([f"q{i}" for i in range(n)], 3),
            "category": np.tile(["planted", "noise1", "noise2"], n),
            "value": np.column_stack([planted, rng.random(n), rng.random(n)]).reshape(-1),
        }
    )
    values = {(1.0, 0): planted + rng.normal(0, 0.1, n)}
    for seed in range(4):  # at 50%, two seeds keep the relation, two lose it
        values[(0.5, seed)] = planted + rng.normal(0, 0.1, n) if seed < 2 else rng.random(n)
    table = study_table({k: list(v) for k, v in values.items()})
    out = top_category_stability(table, shares, run="bm25", k=1)
    half = out[(out["fraction"] == 0.5) & (out["category"] == "planted")].iloc[0]
    assert half["n_seeds"] == 4 and half["in_top"] == pytest.approx(0.5)
    whole = out[(out["fraction"] == 1.0) & (out["category"] == "planted")].iloc[0]
    assert whole["in_top"] == 1.0 and whole["mean_rank"] == 1.0


def test_top_category_stability_is_sorted_by_share_of_seeds_then_category():
    # replicate values: v in seeds 0, 1 and the full list, u (uncorrelated with v) in seeds 2, 3;
    # categories alpha = beta = v (top in half the seeds), zeta = v + u (r ≈ 0.7 with both)
    rng = np.random.default_rng(2)
    n = 60
    v = rng.random(n)
    u = rng.random(n)
    basis = np.column_stack([np.ones(n), v])
    u = u - basis @ np.linalg.lstsq(basis, u, rcond=None)[0]  # exactly uncorrelated with v
    u = u / u.std() * v.std()
    shares = pd.DataFrame(
        {
            "run": "bm25",
            "qid": np.repeat([f"q{i}" for i in range(n)], 3),
            "category": np.tile(["zeta", "beta", "alpha"], n),
            "value": np.column_stack([v + u, v, v]).reshape(-1),
        }
    )
    values = {(1.0, 0): v, (0.5, 0): v, (0.5, 1): v, (0.5, 2): u, (0.5, 3): u}
    table = study_table({key: list(vals) for key, vals in values.items()})
    out = top_category_stability(table, shares, run="bm25", k=3)
    rows = [tuple(r) for r in out[["fraction", "category", "in_top"]].itertuples(index=False)]
    assert rows == [(0.5, "zeta", 1.0), (0.5, "alpha", 0.5), (0.5, "beta", 0.5),
                    (1.0, "alpha", 1.0), (1.0, "beta", 1.0), (1.0, "zeta", 1.0)]  # fmt: skip
    assert (out["n_seeds"] == [4, 4, 4, 1, 1, 1]).all()


def test_a_study_with_two_values_for_one_query_and_replicate_is_refused():
    table = study_table({(1.0, 0): [0.1, 0.2, 0.3, 0.4]})
    with pytest.raises(InputError, match="several values for one query"):
        distribution_summary(pd.concat([table, table.head(1)]))


def test_subsample_coverage_equals_recounting_the_texts_with_each_sub_list(testbed):
    texts, docids, stats, _ = testbed
    table = subsample_coverage(stats, LEXICON, [0.25, 1.0], seeds=[0, 1])
    assert len(table) == 2 * 2 * 2
    full = table[table["fraction"] == 1.0]
    assert (full["occurrence_share"] == 1.0).all() and (full["terms"] == 8).all()
    totals = document_stats(texts, LEXICON).group_counts.sum(axis=0)
    for row in table.itertuples():
        sub = subsample(LEXICON, row.fraction, row.seed)
        counts = document_stats(texts, sub).group_counts[:, LEXICON.groups.index(row.group)]
        assert row.terms == len(sub.terms_of(row.group))
        assert row.occurrences == counts.sum()
        assert row.occurrence_share == counts.sum() / totals[LEXICON.groups.index(row.group)]
        assert row.documents == (counts > 0).sum()
    quarter = table[table["fraction"] == 0.25]
    assert (quarter["terms"] == 2).all() and (quarter["occurrence_share"] < 1).all()


def test_subsample_coverage_of_a_group_that_never_occurs_is_nan():
    stats = document_stats(["she and her mother", "the river"], LEXICON, per_term=True)
    table = subsample_coverage(stats, LEXICON, [0.5], seeds=[3]).set_index("group")
    assert np.isnan(table.loc["m", "occurrence_share"])
    assert table.loc["m", "occurrences"] == 0 and table.loc["m", "documents"] == 0
