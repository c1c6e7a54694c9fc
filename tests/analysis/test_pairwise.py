"""Pairwise fairness of whole runs: a three-query example computed by hand (the one of the
chapter "Pairwise ranking fairness"), the bookkeeping of queries that contribute nothing, and
the invariance of PRF under monotone score transforms."""

from __future__ import annotations

import math

import numpy as np
import pandas as pd
import pytest

from rankbias.analysis.pairwise import (
    disparity_summary,
    paired_gaps,
    pairwise_fairness_table,
    pairwise_inputs,
)
from rankbias.errors import InputError
from rankbias.runs import Run
from rankbias.text import DocStats

# docid, qid, score, male count, female count, relevant
DOCUMENTS = [
    ("a1", "q1", 18, 3, 1, True),  # male, clicked
    ("a2", "q1", 16, 0, 0, False),
    ("a3", "q1", 14, 2, 0, False),
    ("a4", "q1", 13, 0, 1, False),
    ("a5", "q1", 12, 1, 2, True),  # female, clicked
    ("a6", "q1", 10, 0, 0, False),
    ("b1", "q2", 9, 1, 0, True),  # male, clicked
    ("b2", "q2", 8, 0, 0, False),
    ("b3", "q2", 7, 0, 3, False),
    ("b4", "q2", 5, 4, 1, True),  # male, clicked
    ("b5", "q2", 3, 0, 0, False),
    ("b6", "q2", 1, 0, 0, False),
    ("c1", "q3", 30, 1, 1, True),  # neutral (1 - 1), clicked
    ("c2", "q3", 25, 0, 2, True),  # female, clicked, tied with c3
    ("c3", "q3", 25, 0, 0, False),
    ("c4", "q3", 20, 1, 0, False),
    ("c5", "q3", 15, 0, 0, False),
    ("c6", "q3", 10, 0, 0, False),
]
# q4: only a neutral relevant document retrieved; q5: its relevant document not retrieved;
# q6: judged but absent from the run.
EXTRA = [
    ("d1", "q4", 5, 0, 0, True),
    ("d2", "q4", 4, 1, 0, False),
    ("e1", "q5", 2, 0, 1, False),
    ("e2", "q5", 1, 1, 0, False),
]


def make_stats(documents, groups=("f", "m")) -> DocStats:
    male = np.array([d[3] for d in documents])
    female = np.array([d[4] for d in documents])
    counts = np.column_stack([female, male]) if groups == ("f", "m") else male[:, None]
    return DocStats(
        docids=np.array([d[0] for d in documents], dtype=object),
        lengths=np.full(len(documents), 50, dtype=np.int64),
        group_counts=counts.astype(np.int64),
        groups=groups,
        terms=("she", "he")[: len(groups)],
        term_group=np.arange(len(groups)),
    )


def make_run(documents, name="toy", transform=lambda s: s) -> Run:
    frame = pd.DataFrame(
        {
            "qid": [d[1] for d in documents],
            "docid": [d[0] for d in documents],
            "score": [transform(float(d[2])) for d in documents],
        }
    )
    return Run.from_frame(frame, name)


def make_qrels(documents, extra_judged=()) -> pd.DataFrame:
    rows = [(d[1], d[0], 1) for d in documents if d[5]]
    rows += list(extra_judged)
    return pd.DataFrame(rows, columns=["qid", "docid", "relevance"])


def cell(table, qid, group, column, run="toy"):
    row = table[(table["run"] == run) & (table["qid"] == qid) & (table["group"] == group)]
    assert len(row) == 1
    return float(row[column].iloc[0])


@pytest.fixture
def hand_table():
    return pairwise_fairness_table(
        make_run(DOCUMENTS), make_qrels(DOCUMENTS), make_stats(DOCUMENTS)
    )


def test_inputs_map_judgements_to_clicks_and_counts_to_labels():
    inputs = pairwise_inputs(make_run(DOCUMENTS), make_qrels(DOCUMENTS), make_stats(DOCUMENTS))
    by_doc = inputs.set_index("docid")
    assert by_doc["clicked"].to_dict() == {d[0]: d[5] for d in DOCUMENTS}
    expected_labels = {d[0]: int(np.sign(d[3] - d[4])) for d in DOCUMENTS}
    assert by_doc["label"].astype(int).to_dict() == expected_labels
    assert by_doc.loc["c1", "label"] == 0  # one male and one female term: neutral
    assert inputs.attrs["unretrieved"] == []


def test_hand_example_per_query(hand_table):
    # q1: R = (s - 10) / 8 = 1, .75, .5, .375, .25, 0; clicked a1 (R 1, m), a5 (R .25, f)
    assert cell(hand_table, "q1", "m", "prf") == 1.0
    assert cell(hand_table, "q1", "m", "nprf") == pytest.approx(1.0)
    assert cell(hand_table, "q1", "f", "prf") == pytest.approx(0.25)  # beats a6 only
    assert cell(hand_table, "q1", "f", "nprf") == pytest.approx(0.125)  # sqrt(.25**2 / 4)
    assert cell(hand_table, "q1", "m", "n_non_clicked") == 4
    # q2: R = (s - 1) / 8; b1 (R 1) beats 4, b4 (R .5) beats 2 of the 4 non-clicked
    assert cell(hand_table, "q2", "m", "prf") == pytest.approx(0.75)
    assert cell(hand_table, "q2", "m", "nprf") == pytest.approx(0.75)  # sqrt((4 + .25*2)/8)
    assert cell(hand_table, "q2", "m", "n_clicked") == 2
    assert math.isnan(cell(hand_table, "q2", "f", "prf"))
    # q3: R = (s - 10) / 20; c2 (R .75) ties c3 (a win) and beats c4-c6; c1 is neutral
    assert cell(hand_table, "q3", "f", "prf") == 1.0
    assert cell(hand_table, "q3", "f", "nprf") == pytest.approx(0.75)
    assert cell(hand_table, "q3", "f", "n_clicked") == 1
    assert cell(hand_table, "q3", "f", "n_clicked_all") == 2
    assert cell(hand_table, "q3", "m", "n_non_clicked") == 4  # c1 is not non-clicked
    assert math.isnan(cell(hand_table, "q3", "m", "nprf"))


def test_hand_example_summary(hand_table):
    summary = disparity_summary(hand_table).loc["toy"]
    assert summary["queries"] == 3
    assert (summary["n_m"], summary["n_f"], summary["n_both"]) == (2, 2, 1)
    assert summary["prf_m"] == pytest.approx(0.875)  # (1 + .75) / 2
    assert summary["prf_f"] == pytest.approx(0.625)  # (.25 + 1) / 2
    assert summary["delta_a_prf"] == pytest.approx(0.25)
    assert summary["nprf_m"] == pytest.approx(0.875)  # (1 + .75) / 2
    assert summary["nprf_f"] == pytest.approx(0.4375)  # (.125 + .75) / 2
    # PD = (.875**2 + .25**2 + .625**2 + 0) / 4
    assert summary["pd"] == pytest.approx(39 / 128)
    assert summary["mean_gap_sq"] == pytest.approx(49 / 256)
    assert summary["var_sum"] == pytest.approx(1 / 64 + 25 / 256)
    # TS = (7/16)**2 / ((1/64)/2 + (25/256)/2) = 98/29
    assert summary["ts"] == pytest.approx(98 / 29)
    # sample variances (ddof=1) are twice the population ones here: TS = (49/256) / (29/256)
    assert disparity_summary(hand_table, ddof=1).loc["toy", "ts"] == pytest.approx(49 / 29)
    import scipy.stats as scipy_stats

    assert summary["ts_p"] == pytest.approx(scipy_stats.chi2.sf(98 / 29, 1), rel=1e-12)


def test_paired_gaps_use_queries_with_both_groups(hand_table):
    gaps = paired_gaps(hand_table).loc["toy"]
    assert gaps["n_both"] == 1  # q1 only
    assert gaps["prf_gap"] == pytest.approx(0.75)  # 1 - .25
    assert gaps["nprf_gap"] == pytest.approx(0.875)  # 1 - .125


def test_queries_that_contribute_nothing_are_counted():
    documents = DOCUMENTS + EXTRA
    qrels = make_qrels(documents, extra_judged=[("q5", "zz", 1), ("q6", "a1", 1)])
    run = make_run([d for d in documents if d[1] != "q6"])
    stats = make_stats(documents)
    table = pairwise_fairness_table(run, qrels, stats)
    assert sorted(table["qid"].unique()) == ["q1", "q2", "q3", "q4", "q5", "q6"]
    assert len(table) == 12
    assert cell(table, "q6", "m", "n_retrieved") == 0
    assert math.isnan(cell(table, "q6", "f", "prf"))
    summary = disparity_summary(table).loc["toy"]
    assert summary["queries"] == 6
    assert summary["unretrieved"] == 1  # q6
    assert summary["no_relevant_retrieved"] == 1  # q5
    assert summary["only_neutral_relevant"] == 1  # q4
    assert (summary["n_m"], summary["n_f"]) == (2, 2)
    assert summary["delta_a_prf"] == pytest.approx(0.25)  # the extra queries change nothing
    assert pairwise_inputs(run, qrels, stats).attrs["unretrieved"] == ["q6"]


def test_unjudged_queries_and_non_relevant_judgements():
    documents = DOCUMENTS + EXTRA
    # q4 and q5 unjudged: left out; a judgement with relevance 0 does not make a click
    qrels = pd.concat(
        [
            make_qrels(DOCUMENTS),
            pd.DataFrame([("q1", "a2", 0)], columns=["qid", "docid", "relevance"]),
        ]
    )
    table = pairwise_fairness_table(make_run(documents), qrels, make_stats(documents))
    assert sorted(table["qid"].unique()) == ["q1", "q2", "q3"]
    assert cell(table, "q1", "m", "n_non_clicked") == 4
    assert cell(table, "q1", "f", "prf") == pytest.approx(0.25)


def test_cutoff_cuts_before_normalising():
    # top 3 of q1: a1 (18, clicked m), a2 (16), a3 (14) -> R = 1, .5, 0; a5 is cut away
    table = pairwise_fairness_table(
        make_run(DOCUMENTS), make_qrels(DOCUMENTS), make_stats(DOCUMENTS), cutoff=3
    )
    assert cell(table, "q1", "m", "n_non_clicked") == 2
    assert cell(table, "q1", "m", "prf") == 1.0
    assert math.isnan(cell(table, "q1", "f", "prf"))
    # q2 top 3: b1 (9, clicked m), b2 (8), b3 (7) -> R = 1, .5, 0
    assert cell(table, "q2", "m", "nprf") == pytest.approx(1.0)
    assert (table["cutoff"] == 3).all()


def test_prf_is_invariant_under_monotone_transforms_and_nprf_is_not():
    rng = np.random.default_rng(7)
    documents = [
        (
            f"x{i}",
            f"q{i % 9}",
            float(rng.normal()),
            int(rng.integers(0, 3)),
            int(rng.integers(0, 3)),
            bool(rng.random() < 0.3),
        )
        for i in range(300)
    ]
    stats, qrels = make_stats(documents), make_qrels(documents)
    base = pairwise_fairness_table(make_run(documents, "base"), qrels, stats)
    cubed = pairwise_fairness_table(make_run(documents, "cubed", lambda s: s**3), qrels, stats)
    assert np.array_equal(base["prf"].to_numpy(), cubed["prf"].to_numpy(), equal_nan=True)
    defined = base["nprf"].notna()
    assert not np.allclose(base.loc[defined, "nprf"], cubed.loc[defined, "nprf"])
    affine = pairwise_fairness_table(
        make_run(documents, "affine", lambda s: 3 * s + 2), qrels, stats
    )
    assert np.allclose(base["nprf"], affine["nprf"], equal_nan=True)  # min-max undoes it


def test_several_runs_are_summarised_separately():
    run_a = make_run(DOCUMENTS, "a")
    reversed_scores = make_run(DOCUMENTS, "b", lambda s: -s)
    table = pairwise_fairness_table(
        {"a": run_a, "b": reversed_scores}, make_qrels(DOCUMENTS), make_stats(DOCUMENTS)
    )
    summary = disparity_summary(table)
    assert list(summary.index) == ["a", "b"]
    # reversed q1: a5 (f) now beats a2, a3, a4 -> 3/4; a1 (m) beats nothing -> 0
    assert cell(table, "q1", "f", "prf", run="b") == pytest.approx(0.75)
    assert cell(table, "q1", "m", "prf", run="b") == 0.0
    assert summary.loc["a", "delta_a_prf"] == pytest.approx(0.25)


def test_missing_documents_and_groups_are_errors():
    qrels = make_qrels(DOCUMENTS)
    with pytest.raises(InputError, match=r"a1 \(query q1\)"):
        pairwise_inputs(make_run(DOCUMENTS), qrels, make_stats(DOCUMENTS[1:]))
    with pytest.raises(InputError, match="'f'"):
        pairwise_inputs(make_run(DOCUMENTS), qrels, make_stats(DOCUMENTS, groups=("m",)))
    with pytest.raises(InputError, match="relevance"):
        pairwise_inputs(make_run(DOCUMENTS), qrels.drop(columns="relevance"), make_stats(DOCUMENTS))


def test_too_few_queries_give_nan_statistics():
    table = pairwise_fairness_table(
        make_run(DOCUMENTS[:6]), make_qrels(DOCUMENTS[:6]), make_stats(DOCUMENTS)
    )
    summary = disparity_summary(table).loc["toy"]
    assert (summary["n_m"], summary["n_f"]) == (1, 1)
    assert summary["pd"] == pytest.approx(0.875**2)
    assert math.isnan(summary["ts"]) and math.isnan(summary["ts_p"])
