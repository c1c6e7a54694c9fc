"""Per-document contributions (rankbias.analysis.explain) on the testbed's real lists and on
lists made by hand: they add up to what score_runs reports, and the Shapley values are the
game's."""

from __future__ import annotations

import itertools
import math
from pathlib import Path

import numpy as np
import pandas as pd
import PIL.Image
import pytest

from rankbias.analysis.explain import explain, top_terms
from rankbias.collection import read_collection_stats
from rankbias.errors import InputError
from rankbias.lexicon import Lexicon, default_lexicon
from rankbias.runs import Run, read_run
from rankbias.scoring import score_runs
from rankbias.text import document_stats

TESTBED = Path(__file__).resolve().parents[2] / "data" / "build" / "wikisample"


@pytest.fixture(scope="module")
def testbed():
    if not (TESTBED / ".complete").exists():
        pytest.skip("needs the testbed (make data)")
    stats = read_collection_stats(TESTBED / "collection.tsv", default_lexicon(), per_term=True)
    run = read_run(TESTBED / "runs" / "bm25.run")
    # lists that hold gendered terms of both groups, one group only, and none
    counts = {}
    for qid in run.qids[:200]:
        rows = stats.rows(run.ranked(qid)[:10])
        counts[qid] = stats.group_counts[rows].sum(axis=0)
    mixed = [q for q, c in counts.items() if c.min() > 0][:3]
    one_sided = [q for q, c in counts.items() if (c > 0).sum() == 1][:2]
    none = [q for q, c in counts.items() if c.sum() == 0][:1]
    assert len(mixed) == 3 and len(one_sided) == 2 and len(none) == 1
    return run, stats, [*mixed, *one_sided, *none]


ADDITIVE = [
    "rab@10",
    "rab(magnitude=tf)@10",
    "rab_m(magnitude=bool)@5",
    "arab@10",
    "arab(magnitude=tf)@10",
    "arab(magnitude=bool)@20",
    "arab(magnitude=tf_paper)@10",
    "arab_f@10",
    "fairr@10",
    "fairr(tau=0)@20",
    "nfairr@10",
    "nfairr(tau=0,strict=true)@10",
    "nfairr(tau=2.5)@5",
]


@pytest.mark.parametrize("measure", ADDITIVE)
def test_exact_contributions_add_up_to_the_score(testbed, measure):
    run, stats, qids = testbed
    table = explain(run, stats, qids, [measure])
    cutoff = int(measure.rsplit("@", 1)[1])
    scored = score_runs(run.restrict(qids), stats, [measure], [cutoff]).set_index("qid")["value"]
    for qid, rows in table.groupby("qid"):
        assert (rows["kind"] == "exact").all()
        assert rows["rank"].tolist() == list(range(1, min(cutoff, len(run.ranked(qid))) + 1))
        assert rows["contribution"].sum() == pytest.approx(scored[qid], abs=1e-9)
        assert (rows["value"] == scored[qid]).all()


def test_a_neutral_document_adds_nothing_to_rab_and_its_full_weight_to_fairr(testbed):
    run, stats, qids = testbed
    table = explain(run, stats, qids[:1], ["rab@10", "fairr@10"])
    neutral = table[(table["count_f"] == 0) & (table["count_m"] == 0)]
    assert len(neutral) > 0
    rab = neutral[neutral["metric"] == "rab_tc"]
    assert (rab["contribution"] == 0).all()
    fairr = neutral[neutral["metric"] == "fairr"]
    assert np.allclose(fairr["contribution"], 1 / np.log2(fairr["rank"] + 1))


def _brute_force_shapley(run, stats, qid, measure, cutoff):
    """Shapley values from their definition: marginal gains over all orders (n ≤ 7)."""
    from rankbias.analysis import explain as module

    docids = list(run.ranked(qid)[:cutoff])
    twins = module._with_neutral_twins(stats, docids)
    n = len(docids)
    worth = {}
    for size in range(n + 1):
        for subset in itertools.combinations(range(n), size):
            keep = np.zeros((1, n), dtype=bool)
            keep[0, list(subset)] = True
            worth[frozenset(subset)] = module._variants(docids, keep, parse(measure), twins)[0]
    phi = np.zeros(n)
    for order in itertools.permutations(range(n)):
        seen: set = set()
        for i in order:
            phi[i] += worth[frozenset(seen | {i})] - worth[frozenset(seen)]
            seen.add(i)
    return phi / math.factorial(n), worth[frozenset()]


def parse(text):
    from rankbias.metrics.measures import parse_measure

    return parse_measure(text)


@pytest.mark.parametrize("measure", ["texfair@6", "awrf@6", "ted@6", "rbdf@6"])
def test_shapley_values_are_the_games_and_add_up_to_value_minus_baseline(testbed, measure):
    run, stats, qids = testbed
    qid = qids[0]
    table = explain(run, stats, [qid], [measure])
    assert table["kind"].iloc[0] == "shapley (exact over 64 sets)"
    expected, empty = _brute_force_shapley(run, stats, qid, measure, 6)
    assert np.allclose(table["contribution"], expected, atol=1e-12)
    assert table["baseline"].iloc[0] == pytest.approx(empty)
    value = score_runs(run.restrict([qid]), stats, [measure], [6])["value"].iloc[0]
    assert table["contribution"].sum() + empty == pytest.approx(value, abs=1e-9)


def test_texfair_gives_one_row_per_listed_document_with_exposures(testbed):
    run, stats, qids = testbed
    table = explain(run, stats, qids, ["texfair@10"])
    for qid, rows in table.groupby("qid"):
        assert rows["docid"].tolist() == list(run.ranked(qid)[:10])
    weights = 1 / np.log2(table["rank"] + 1)
    lengths = stats.lengths[stats.rows(table["docid"])]
    assert np.allclose(table["exposure_f"], weights * table["count_f"] / lengths)


def test_awrf_rows_give_awrfs_own_exposure_the_association_by_rank(testbed):
    run, stats, qids = testbed
    table = explain(run, stats, qids, ["awrf@10"])
    weights = 1 / np.log2(table["rank"] + 1)
    total = table["count_f"] + table["count_m"]
    female = np.where(total > 0, table["count_f"] / total.where(total > 0, 1), 0.5)
    assert np.allclose(table["exposure_f"], weights * female)
    assert np.allclose(table["exposure_f"] + table["exposure_m"], weights)


def test_sampled_shapley_is_close_to_the_exact_values(testbed, monkeypatch):
    run, stats, qids = testbed
    sampled = explain(run, stats, qids[:1], ["texfair@12"], permutations=3000, seed=1)
    assert sampled["kind"].iloc[0] == "shapley (mean of 3000 orders)"
    total = score_runs(run.restrict(qids[:1]), stats, ["texfair@12"], [12])["value"].iloc[0]
    assert sampled["contribution"].sum() + sampled["baseline"].iloc[0] == pytest.approx(total)
    again = explain(run, stats, qids[:1], ["texfair@12"], permutations=3000, seed=1)
    pd.testing.assert_frame_equal(sampled, again)
    from rankbias.analysis import explain as module

    monkeypatch.setattr(module, "EXACT_MAX_DOCUMENTS", 12)
    exact = explain(run, stats, qids[:1], ["texfair@12"])
    assert exact["kind"].iloc[0] == "shapley (exact over 4096 sets)"
    assert np.abs(exact["contribution"] - sampled["contribution"]).max() < 0.01


def test_shapley_contributions_add_up_from_the_neutral_list_exactly_or_sampled(monkeypatch):
    import rankbias.analysis.explain as module

    lexicon = Lexicon.from_mapping({"she": "f", "her": "f", "he": "m", "him": "m"})
    texts = ["she and her", "he", "her", "him and he"]  # every document gendered
    stats = document_stats(texts, lexicon, docids=["d1", "d2", "d3", "d4"], per_term=True)
    run = Run.from_frame(
        pd.DataFrame({"qid": "q", "docid": ["d1", "d2", "d3", "d4"], "score": [4.0, 3, 2, 1]}),
        "s",
    )
    exact = explain(run, stats, ["q"], ["texfair@4"])
    monkeypatch.setattr(module, "EXACT_MAX_DOCUMENTS", 1)
    sampled = explain(run, stats, ["q"], ["texfair@4"], permutations=3000)
    assert exact["kind"].iloc[0] == "shapley (exact over 16 sets)"
    assert sampled["kind"].iloc[0] == "shapley (mean of 3000 orders)"
    for table in (exact, sampled):
        # efficiency: the contributions take the all-neutral list's value to the list's own
        assert table["contribution"].sum() + table["baseline"].iloc[0] == pytest.approx(
            table["value"].iloc[0]
        )
    assert sampled["baseline"].iloc[0] == exact["baseline"].iloc[0] != exact["value"].iloc[0]
    # one order: its marginal gains add up all the same, from the same all-neutral list
    once = explain(run, stats, ["q"], ["texfair@4"], permutations=1, seed=4)
    assert once["kind"].iloc[0] == "shapley (mean of 1 order)"
    twice = explain(run, stats, ["q"], ["texfair@4"], permutations=2, seed=4)
    assert twice["kind"].iloc[0] == "shapley (mean of 2 orders)"
    assert once["baseline"].iloc[0] == exact["baseline"].iloc[0]
    assert once["contribution"].sum() + once["baseline"].iloc[0] == pytest.approx(
        once["value"].iloc[0]
    )
    np.testing.assert_allclose(sampled["contribution"], exact["contribution"], atol=0.02)
    # TExFAIR's exposure M_g(d) / |d| · discount, a one-token document ("he") included
    weights = 1 / np.log2(np.arange(2, 6))
    np.testing.assert_allclose(exact["exposure_f"], weights * [2 / 3, 0, 1, 0])
    np.testing.assert_allclose(exact["exposure_m"], weights * [0, 1, 0, 2 / 3])


def test_additive_contributions_by_hand_lists_take_their_own_parameters_and_background():
    lexicon = Lexicon.from_mapping({"she": "f", "her": "f", "he": "m", "him": "m"})
    texts = ["she and her", "he said", "a quiet river", "him and her", "rain", "she"]
    docids = ["d1", "d2", "d3", "d4", "d5", "d6"]
    stats = document_stats(texts, lexicon, docids=docids, per_term=True)
    frame = pd.DataFrame({"qid": "q", "docid": docids[:4], "score": [4.0, 3, 2, 1]})
    run = Run.from_frame(frame, "s")
    other = Run.from_frame(frame.assign(docid=["d1", "d2", "d4", "d6"]), "o")
    measures = ["rab@4", "nfairr(tau=0)@4", "nfairr(tau=2.5)@4", "nfairr(background=run)@3"]
    table = explain(run, stats, "q", measures, background=other)  # one query id as a string
    assert table.index.tolist() == list(range(len(table)))
    scores = score_runs(run, stats, measures, background=other).set_index("metric")["value"]
    for label, rows in table.groupby("metric", sort=False):
        # additive: the contributions from an empty list (0) add up to the score
        assert (rows["baseline"] == 0.0).all() and (rows["kind"] == "exact").all()
        assert rows["contribution"].sum() == pytest.approx(rows["value"].iloc[0])
        assert rows["value"].iloc[0] == pytest.approx(scores[label])
    values = table.groupby("metric", sort=False)["value"].first()
    assert values["nfairr(tau=0)"] != pytest.approx(values["nfairr(tau=2.5)"])


def test_top_terms_weigh_occurrences_by_rank(testbed):
    run, stats, qids = testbed
    terms = top_terms(run, stats, qids[0], 10, n=3)
    assert len(terms) <= 3 and (terms["weight"].diff().dropna() <= 0).all()
    first = terms.iloc[0]
    column = stats.terms.index(first["term"])
    counts = stats.term_counts[stats.rows(run.ranked(qids[0])[:10]), column].toarray().ravel()
    assert first["weight"] == pytest.approx(np.sum(counts / np.log2(np.arange(2, 12))))


def test_top_terms_by_hand_keep_only_terms_that_occur_and_ten_by_default():
    lexicon = Lexicon.from_mapping({"she": "f", "her": "f", "he": "m", "him": "m"})
    texts = ["she said she and he", "ask him", "her turn"]
    stats = document_stats(texts, lexicon, docids=["d1", "d2", "d3"], per_term=True)
    run = Run.from_frame(
        pd.DataFrame({"qid": "q", "docid": ["d1", "d2", "d3"], "score": [3.0, 2.0, 1.0]}), "s"
    )
    # the top 2: d1 (she ×2, he; discount 1) and d2 (him; discount 1/log2 3); "her" is in d3
    table = top_terms(run, stats, "q", 2)
    assert table.to_dict("list") == {
        "term": ["she", "he", "him"], "group": ["f", "m", "m"], "occurrences": [2, 1, 1],
        "weight": [2.0, 1.0, pytest.approx(1 / math.log2(3))],
    }  # fmt: skip
    assert table["occurrences"].dtype == np.int64
    many = Lexicon.from_mapping({f"w{i}": "f" if i % 2 else "m" for i in range(12)})
    texts = [" ".join(f"w{i}" for i in range(11))]
    stats = document_stats(texts, many, docids=["d1"], per_term=True)
    assert len(top_terms(run, stats, "q", 1)) == 10  # 11 terms occur
    with pytest.raises(ValueError) as info:
        top_terms(run, document_stats(texts, many, docids=["d1"]), "q", 1)
    assert str(info.value) == (
        "top_terms needs per-term counts: read the statistics with per_term=True"
    )


@pytest.mark.parametrize(
    ("qids", "measures", "error", "message"),
    [
        (["nope"], ["nfairr@10"], InputError, "query 'nope' is not in run 'bm25'"),
        (None, ["NFaiRR(tau=0)"], ValueError,
         "measure 'nfairr(tau=0)': expected a cut-off, e.g. nfairr(tau=0)@10"),
        (None, ["duo@10"], InputError,
         "measure duo: explain covers RaB, ARaB (and their group parts), FaiRR, NFaiRR, AWRF, "
         "TED, TExFAIR and RBDF (not TExFAIR without RBDF: undefined on a list without group "
         "terms, it has no baseline for Shapley values)"),
        (None, ["texfair_norbdf@10"], InputError,
         "measure texfair_norbdf: explain covers RaB, ARaB (and their group parts), FaiRR, "
         "NFaiRR, AWRF, TED, TExFAIR and RBDF (not TExFAIR without RBDF: undefined on a list "
         "without group terms, it has no baseline for Shapley values)"),
    ],
)  # fmt: skip
def test_bad_requests_are_refused(testbed, qids, measures, error, message):
    run, stats, some = testbed
    with pytest.raises(error) as info:
        explain(run, stats, qids or some[:1], measures)
    assert str(info.value) == message


def test_a_query_given_twice_is_explained_once_and_a_measure_twice_is_refused(testbed):
    """The same query gives its rows once; the same measure however written (its name's case, a
    parameter at its default) is refused naming the spellings, as score_runs does."""
    run, stats, some = testbed
    once = explain(run, stats, some[:2], ["nfairr@10", "awrf@5"], permutations=20)
    twice = explain(run, stats, [some[0], some[1], some[0]], ["nfairr@10", "awrf@5"], 20)
    pd.testing.assert_frame_equal(twice, once)
    assert sorted(set(once.metric)) == ["awrf", "nfairr"] and len(once) == 2 * (10 + 5)
    # one query given as a string is that query, not its characters
    alone = explain(run, stats, some[0], ["nfairr@10"])
    pd.testing.assert_frame_equal(alone, explain(run, stats, some[:1], ["nfairr@10"]))
    with pytest.raises(ValueError) as info:
        explain(run, stats, some[:1], ["nfairr@10", "awrf@5", "NFaiRR(tau=1)@10"])
    assert str(info.value) == (
        "metrics: nfairr@10 requested more than once (by 'nfairr@10', 'NFaiRR(tau=1)@10'); "
        "expected each measure once at each cut-off"
    )


@pytest.mark.parametrize(
    ("options", "error", "message"),
    [
        # Shapley values from fresh entropy: other contributions on every call
        ({"seed": None}, TypeError,
         "seed: expected an integer ≥ 0, a sequence of them or a Generator, found None"),
        ({"permutations": 0}, ValueError, "permutations: expected a positive integer, found 0"),
        # a string was read character by character ("unknown measure 'a'")
        ({"metrics": "awrf@10"}, TypeError,
         "metrics: expected a list of measures, found 'awrf@10'"),
        # pandas' "No objects to concatenate"
        ({"metrics": []}, ValueError, "metrics: expected at least one, found none"),
        ({"qids": []}, ValueError, "qids: expected at least one, found none"),
    ],
)  # fmt: skip
def test_the_other_arguments_are_checked_before_any_work(testbed, options, error, message):
    run, stats, some = testbed
    arguments = {"qids": some[:1], "metrics": ["awrf@10"], **options}
    with pytest.raises(error) as info:
        explain(run, stats, **arguments)
    assert type(info.value) is error and str(info.value) == message


def test_arguments_of_the_wrong_type_are_named(testbed):
    from rankbias.analysis.explain import strip_plot

    run, stats, some = testbed
    with pytest.raises(TypeError, match=r"^run: expected a Run .*found NoneType"):
        explain(None, stats, some[:1], ["nfairr@10"])
    with pytest.raises(TypeError, match=r"^stats: expected the DocStats .*found Run"):
        explain(run, run, some[:1], ["nfairr@10"])
    with pytest.raises(TypeError, match=r"^stats: expected the DocStats .*found dict"):
        top_terms(run, {}, some[0], 10)
    with pytest.raises(
        TypeError, match=r"^table: expected the DataFrame of explain\(\), found list"
    ):
        strip_plot([])


def test_strip_plot_draws_each_list_in_table_order_on_its_own_scale(tmp_path):
    import matplotlib.pyplot as plt

    from rankbias.analysis.explain import strip_plot

    table = pd.DataFrame(  # the lists in table order (q2 before q1); q2 lacks ranks 2 and 6
        {
            "qid": ["q2"] * 4 + ["q1"] * 6 + ["q0"] * 2,
            "metric": ["nfairr"] * 4 + ["rab"] * 6 + ["nfairr"] * 2,
            "cutoff": [10] * 4 + [5] * 6 + [10] * 2,
            "rank": [1, 3, 4, 5, 1, 2, 3, 4, 5, 6, 1, 2],
            "contribution": [0.2, -0.4, 0.1, 0.0, -0.03, 0.01, 0.02, 0.0, 0.0, 0.01, 0.0, 0.0],
        }
    )
    figure = strip_plot(table)
    axes = figure.axes
    assert len(axes) == 3
    assert tuple(figure.get_size_inches()) == pytest.approx((7, 0.3 + 0.55 * 3))
    labels = [axis.get_yticklabels()[0].get_text() for axis in axes]
    assert labels == ["q2: NFaiRR@10", "q1: RaB (tc)@5", "q0: NFaiRR@10"]
    expected = [
        ([0.2, np.nan, -0.4, 0.1, 0.0, np.nan], 0.4),
        ([-0.03, 0.01, 0.02, 0.0, 0.0, 0.01], 0.03),
        ([0.0, 0.0, np.nan, np.nan, np.nan, np.nan], 1.0),  # nothing contributes: scale 1
    ]
    for axis, (values, scale) in zip(axes, expected, strict=True):
        (image,) = axis.get_images()
        np.testing.assert_array_equal(np.ma.filled(image.get_array(), np.nan), [values])
        assert image.get_clim() == pytest.approx((-scale, scale))
        assert image.get_cmap().name == "coolwarm"
        assert axis.get_aspect() == "auto"  # the strip fills its row (imshow's default: square)
        assert axis.get_yticks().tolist() == [0]  # the label at the strip's one row
        ticks = [label.get_text() for label in axis.get_xticklabels()]
        assert ticks == ["1", "", "", "", "5", ""]
    assert axes[-1].get_xlabel() == "rank (colour: contribution, blue < 0 < red)"
    plt.close(figure)
    path = tmp_path / "strips.png"
    saved = strip_plot(table, path)
    assert path.read_bytes()[:4] == b"\x89PNG"
    assert not plt.fignum_exists(saved.number)  # closed once written
    with PIL.Image.open(path) as png:  # 150 dots per inch, cropped to what is drawn
        assert [round(d) for d in png.info["dpi"]] == [150, 150]
        assert png.size != (7 * 150, round((0.3 + 0.55 * 3) * 150))


def test_a_strip_plot_for_the_screen_leaves_the_callers_backend_alone():
    """Only a figure written to a file switches matplotlib to Agg (no display needed); one
    drawn for the screen or a notebook keeps the backend the caller chose."""
    import matplotlib
    import matplotlib.pyplot as plt

    from rankbias.analysis.explain import strip_plot

    before = matplotlib.get_backend()
    matplotlib.use("pdf")
    try:
        table = pd.DataFrame({"qid": ["q1"], "metric": ["nfairr"], "cutoff": [10], "rank": [1],
                              "contribution": [0.5]})  # fmt: skip
        plt.close(strip_plot(table))
        assert matplotlib.get_backend() == "pdf"
    finally:
        matplotlib.use(before)
