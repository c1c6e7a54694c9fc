"""PRF, nPRF, |ΔA-PRF|, PD and TS: hand examples and a per-query double-loop brute force."""

from __future__ import annotations

import math
import warnings

import numpy as np
import pandas as pd
import pytest

from rankbias.metrics.prf import (
    bias_labels,
    delta_a_prf,
    normalise_scores,
    pairwise_difference,
    pairwise_ranking_fairness,
    t_statistic_squared,
)


def value(table, qid, group, column):
    row = table[(table["qid"] == qid) & (table["group"] == group)]
    assert len(row) == 1
    return float(row[column].iloc[0])


def test_bias_labels_are_the_sign_of_the_magnitude_difference():
    labels = bias_labels([3, 0, 2, 0], [1, 0, 5, 2])
    assert labels.tolist() == [1, 0, -1, -1]
    assert labels.dtype == np.int8  # as documented: one byte per document


def test_hand_example_one_query():
    # R (no normalisation): .9 clicked male, .8 non-clicked, .5 clicked female, .3 and .1
    # non-clicked (labels of non-clicked documents do not matter).
    table = pairwise_ranking_fairness(
        qid=["q"] * 5,
        score=[0.9, 0.8, 0.5, 0.3, 0.1],
        clicked=[True, False, True, False, False],
        label=[1, 0, -1, 1, 0],
        normalisation="none",
    )
    assert value(table, "q", "m", "n_clicked") == 1
    assert value(table, "q", "m", "n_non_clicked") == 3
    assert value(table, "q", "m", "prf") == pytest.approx(1.0)
    assert value(table, "q", "m", "nprf") == pytest.approx(0.9)
    assert value(table, "q", "f", "prf") == pytest.approx(2 / 3)
    assert value(table, "q", "f", "nprf") == pytest.approx(math.sqrt(0.25 * 2 / 3))


def test_clicks_as_0_or_1_equal_booleans_and_other_numbers_are_refused():
    args = dict(qid=["q"] * 5, score=[0.9, 0.8, 0.5, 0.3, 0.1], label=[1, 0, -1, 1, 0])
    as_bool = pairwise_ranking_fairness(clicked=[True, False, True, False, False], **args)
    as_int = pairwise_ranking_fairness(clicked=[1, 0, 1, 0, 0], **args)
    pd.testing.assert_frame_equal(as_int, as_bool)
    assert value(as_int, "q", "f", "prf") == pytest.approx(2 / 3)  # as in the hand example
    with pytest.raises(ValueError) as error:
        pairwise_ranking_fairness(clicked=[2, 0, 1, 0, 0], **args)
    assert str(error.value) == "clicked: expected booleans (or 0/1)"


def test_labels_outside_minus_one_to_one_are_refused_naming_the_first_five():
    labels = [7, -1, 0, 1, 2, 6, 3, 5, 4, 9]
    with pytest.raises(ValueError) as error:
        pairwise_ranking_fairness(["q"] * 10, np.linspace(1, 0, 10), [1, 0] * 5, labels)
    assert str(error.value) == "label: expected bias labels in {-1, 0, 1}, found [2, 3, 4, 5, 6]"


def test_no_rows_give_an_empty_table_and_groups_without_pairs_nan_quietly():
    empty = pairwise_ranking_fairness([], [], [], [])
    assert empty.empty
    assert list(empty.columns) == ["qid", "group", "n_clicked", "n_non_clicked", "prf", "nprf"]
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # 0/0 for a group without pairs is NaN, not a warning
        table = pairwise_ranking_fairness(["a", "a", "b"], [0.3, 0.2, 0.1], [1, 0, 1], [1, -1, -1])
    assert table[["qid", "group", "n_clicked", "n_non_clicked"]].values.tolist() == [
        ["a", "f", 0, 1],
        ["a", "m", 1, 1],
        ["b", "f", 1, 0],
        ["b", "m", 0, 0],
    ]
    assert table.index.equals(pd.RangeIndex(4))
    assert table["prf"].tolist()[1] == 1.0
    assert table["prf"].drop(index=1).isna().all() and table["nprf"].drop(index=1).isna().all()


@pytest.mark.parametrize(
    ("name", "qid", "score", "clicked", "label", "message"),
    [
        ("score", ["a", "a"], [1.0], [1, 0], [1, 0], "found shape (1,)"),
        ("clicked", ["a", "a"], [1.0, 2.0], [1], [1, 0], "found shape (1,)"),
        ("label", ["a", "a"], [1.0, 2.0], [1, 0], [[1, 0]], "found shape (1, 2)"),
    ],
)
def test_every_column_needs_one_value_per_row_of_qid(name, qid, score, clicked, label, message):
    with pytest.raises(ValueError) as error:
        pairwise_ranking_fairness(qid, score, clicked, label)
    assert str(error.value) == f"{name}: expected one value per row of qid (2), {message}"


def test_a_single_qid_is_not_a_column_of_them():
    # a scalar qid has no rows: the columns are checked against none, then the pair refused
    with pytest.raises(ValueError) as error:
        pairwise_ranking_fairness("q", [], [], [])
    assert str(error.value) == (
        "qid and score: expected two 1-D sequences of the same length, found shapes () and (0,)"
    )


def test_ties_count_as_wins_and_undefined_groups_are_nan():
    table = pairwise_ranking_fairness(
        qid=["a", "a", "a", "b", "b"],
        score=[0.5, 0.5, 0.7, 0.2, 0.4],
        clicked=[True, False, False, True, True],
        label=[-1, 1, 1, 1, -1],
        normalisation="none",
    )
    # query a: the clicked female document ties with one non-clicked (counts) and loses to .7
    assert value(table, "a", "f", "prf") == pytest.approx(0.5)
    assert value(table, "a", "f", "nprf") == pytest.approx(math.sqrt(0.25 * 1 / 2))
    assert math.isnan(value(table, "a", "m", "prf"))  # no clicked male document
    # query b has no non-clicked document: undefined for both groups
    assert math.isnan(value(table, "b", "m", "prf"))
    assert math.isnan(value(table, "b", "f", "nprf"))
    assert value(table, "b", "m", "n_non_clicked") == 0


def brute_force(qid, score, clicked, label):
    rows = {}
    for q in sorted(set(qid)):
        idx = [i for i in range(len(qid)) if qid[i] == q]
        non_clicked = [i for i in idx if not clicked[i]]
        for group, lab in (("m", 1), ("f", -1)):
            chosen = [i for i in idx if clicked[i] and label[i] == lab]
            if not chosen or not non_clicked:
                rows[(q, group)] = (math.nan, math.nan)
                continue
            wins = sum(score[j] >= score[k] for j in chosen for k in non_clicked)
            weighted = sum(
                score[j] ** 2 * (score[j] >= score[k]) for j in chosen for k in non_clicked
            )
            pairs = len(chosen) * len(non_clicked)
            rows[(q, group)] = (wins / pairs, math.sqrt(weighted / pairs))
    return rows


def test_vectorised_equals_double_loop_on_random_data_with_ties():
    rng = np.random.default_rng(4)
    n = 600
    qid = rng.integers(0, 40, size=n).astype(str).tolist()
    score = (rng.integers(0, 8, size=n) / 7).tolist()  # many ties, already in [0, 1]
    clicked = (rng.random(n) < 0.3).tolist()
    label = rng.integers(-1, 2, size=n).tolist()
    table = pairwise_ranking_fairness(qid, score, clicked, label, normalisation="none")
    expected = brute_force(qid, score, clicked, label)
    assert len(table) == 2 * len(set(qid))
    for (q, group), (prf, nprf) in expected.items():
        got_prf = value(table, q, group, "prf")
        got_nprf = value(table, q, group, "nprf")
        if math.isnan(prf):
            assert math.isnan(got_prf) and math.isnan(got_nprf)
        else:
            assert got_prf == pytest.approx(prf, abs=1e-12)
            assert got_nprf == pytest.approx(nprf, abs=1e-12)


def test_min_max_and_sigmoid_normalisation():
    qid = ["a", "a", "a", "b", "b"]
    scores = [2.0, 4.0, 3.0, 7.0, 7.0]
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # query b's scores are alike: 1.0, without a warning
        assert normalise_scores(qid, scores).tolist() == [0.0, 1.0, 0.5, 1.0, 1.0]
    expected = [1 / (1 + math.exp(-s)) for s in scores]
    assert normalise_scores(qid, scores, "sigmoid") == pytest.approx(expected, abs=1e-15)
    with pytest.raises(ValueError, match=r"\[0, 1\]"):
        normalise_scores(qid, scores, "none")
    with pytest.raises(ValueError) as error:
        normalise_scores(qid, scores, "rank")
    assert (
        str(error.value)
        == "normalisation: expected one of 'min_max', 'sigmoid', 'none', found 'rank'"
    )


def test_scores_must_lie_in_zero_to_one_without_normalisation_and_none_is_nothing():
    scores = [0.5, 1.5, -0.1, 2.5, 3.0, 1.0, 4.0, 5.0, 0.0]
    with pytest.raises(ValueError) as error:
        normalise_scores(["q"] * 9, scores, "none")
    assert str(error.value) == (
        "score: normalisation='none' expects scores in [0, 1], found [1.5, -0.1, 2.5, 3.0, 4.0] "
        "at rows [1, 2, 3, 4, 6]"
    )
    for method in ("min_max", "sigmoid", "none"):
        assert normalise_scores([], [], method).tolist() == []


@pytest.mark.parametrize(
    ("qid", "score", "message"),
    [
        (
            [["a", "b"]],
            [[1.0, 2.0]],
            "qid and score: expected two 1-D sequences of the same length, found shapes (1, 2) "
            "and (1, 2)",
        ),
        (
            ["a"],
            [1.0, 2.0],
            "qid and score: expected two 1-D sequences of the same length, found shapes (1,) "
            "and (2,)",
        ),
        (["a", "b"], [1.0, np.inf], "score: expected finite numbers, found NaN or inf"),
    ],
)
def test_normalisation_refuses_shapes_and_non_finite_scores_whole(qid, score, message):
    with pytest.raises(ValueError) as error:
        normalise_scores(qid, score)
    assert str(error.value) == message


def test_min_max_changes_nprf_but_not_prf():
    args = (["q"] * 4, [10.0, 6.0, 8.0, 2.0], [True, False, True, False], [1, 0, -1, 0])
    table = pairwise_ranking_fairness(*args)  # R = 1, 0.5, 0.75, 0
    assert value(table, "q", "m", "prf") == 1.0
    assert value(table, "q", "f", "prf") == 1.0
    assert value(table, "q", "m", "nprf") == pytest.approx(1.0)
    assert value(table, "q", "f", "nprf") == pytest.approx(0.75)


def test_delta_a_prf_hand_example():
    table = pd.DataFrame(
        {
            "qid": ["1", "1", "2", "2", "3", "3"],
            "group": ["m", "f", "m", "f", "m", "f"],
            "prf": [1.0, np.nan, 0.5, 0.25, np.nan, 0.75],
            "nprf": [0.9, np.nan, 0.4, 0.3, np.nan, 0.6],
        }
    )
    # mean over T_m = (1 + .5)/2 = .75, over T_f = (.25 + .75)/2 = .5
    assert delta_a_prf(table) == pytest.approx(0.25)
    # a table read back with None for the undefined queries (an object column) reads the same
    as_objects = table.assign(prf=pd.Series([1.0, None, 0.5, 0.25, None, 0.75], dtype=object))
    assert as_objects["prf"].dtype == object
    assert delta_a_prf(as_objects) == pytest.approx(0.25)
    with pytest.raises(ValueError, match=r"missing \['prf'\]"):
        delta_a_prf(table.drop(columns="prf"))


def test_pairwise_difference_equals_double_sum():
    male = [0.9, 0.4, 0.7]
    female = [0.3, 0.6]
    expected = sum((a - b) ** 2 for a in male for b in female) / (len(male) * len(female))
    assert pairwise_difference(male, female) == pytest.approx(expected, abs=1e-15)
    assert pairwise_difference([0.5], [0.5]) == 0.0


def test_t_statistic_standard_and_printed_forms():
    # a = 1,2,3 (mean 2, population var 2/3); b = 4,6 (mean 5, var 1); difference -3
    standard = 9 / (2 / 9 + 1 / 2)
    assert t_statistic_squared([1, 2, 3], [4, 6]) == pytest.approx(standard)
    assert standard == pytest.approx(162 / 13)
    printed = (9 / math.sqrt(2 / 9 + 1 / 2)) ** 2
    assert t_statistic_squared([1, 2, 3], [4, 6], form="printed") == pytest.approx(printed)


def test_t_statistic_with_sample_variances_is_welch():
    import scipy.stats as scipy_stats

    rng = np.random.default_rng(2)
    a, b = rng.random(30), rng.random(17) + 0.1
    welch = scipy_stats.ttest_ind(a, b, equal_var=False).statistic
    assert t_statistic_squared(a, b, ddof=1) == pytest.approx(welch**2, rel=1e-12)


def test_bad_input():
    with pytest.raises(ValueError, match="label"):
        pairwise_ranking_fairness(["q"], [0.5], [True], [2])
    with pytest.raises(ValueError, match="score"):
        pairwise_ranking_fairness(["q", "q"], [0.5], [True, False], [1, 0])
    with pytest.raises(ValueError, match="finite"):
        pairwise_difference([0.5, np.nan], [0.2])


def test_bias_labels_refuse_nan_rather_than_call_it_neutral():
    with pytest.raises(ValueError, match=r"male_magnitude: expected finite numbers, found nan"):
        bias_labels([np.nan, 1.0], [0.0, 0.0])
    with pytest.raises(ValueError, match=r"female_magnitude: .* found inf at position 1"):
        bias_labels([1.0, 1.0], [0.0, np.inf])


def test_delta_a_prf_names_a_table_of_the_wrong_kind():
    from rankbias.metrics import delta_a_prf

    with pytest.raises(
        TypeError,
        match=r"^table: expected the DataFrame of pairwise_ranking_fairness\(\), found NoneType",
    ):
        delta_a_prf(None)


def test_delta_a_prf_reads_the_two_groups_only_and_is_nan_quietly_without_one():
    import warnings

    table = pd.DataFrame(
        {
            "qid": ["1", "1", "2", "2", "3"],
            "group": ["m", "f", "m", "f", "n"],  # a row of another label is not a group's
            "prf": [1.0, 0.25, 0.5, 0.75, 0.0],
            "nprf": [0.9, 0.3, 0.4, 0.6, 0.0],
        }
    )
    assert delta_a_prf(table) == pytest.approx(0.25)
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # the documented NaN, not numpy's empty-mean warning
        assert math.isnan(delta_a_prf(table[table["group"] != "f"]))
        assert math.isnan(delta_a_prf(table[table["group"] != "m"]))


def test_the_system_statistics_refuse_with_whole_messages():
    cases = [
        (lambda: pairwise_difference([0.5], []),
         "nprf_f: expected at least one nPRF value, found none"),
        (lambda: pairwise_difference([np.inf], [0.5]),
         "nprf_m: expected finite values (drop undefined queries), found NaN/inf"),
        (lambda: t_statistic_squared([], [0.5]),
         "nprf_m: expected at least one nPRF value, found none"),
        (lambda: t_statistic_squared([0.5], [np.nan]),
         "nprf_f: expected finite values (drop undefined queries), found NaN/inf"),
        (lambda: t_statistic_squared([0.5], [0.2, 0.4, 0.6], ddof=1),
         "ddof=1 needs more than 1 values per group, found 1 and 3"),
        (lambda: t_statistic_squared([0.5, 0.1], [0.2, 0.4], form="welch"),
         "form: expected one of 'standard', 'printed', found 'welch'"),
    ]  # fmt: skip
    for call, message in cases:
        with pytest.raises(ValueError) as error:
            call()
        assert str(error.value) == message


def test_t_statistic_without_spread_is_nan_or_infinite_quietly():
    import warnings

    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert math.isnan(t_statistic_squared([0.5, 0.5], [0.5]))
        assert t_statistic_squared([0.5, 0.5], [0.25]) == math.inf
        assert t_statistic_squared([0.5, 0.5], [0.25], form="printed") == math.inf
        assert math.isnan(t_statistic_squared([0.5, 0.5], [0.5], form="printed"))


def test_bias_labels_need_one_magnitude_per_document_in_each_group():
    with pytest.raises(ValueError) as error:
        bias_labels([1.0, 2.0], [1.0])
    assert str(error.value) == (
        "male_magnitude has shape (2,), female_magnitude (1,); "
        "expected one value per document in each"
    )
