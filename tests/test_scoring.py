"""Tests of rankbias.scoring: the tidy table, missing documents, empty queries, backgrounds."""

from __future__ import annotations

import math
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from public_data import PUBLIC

from rankbias.errors import InputError
from rankbias.lexicon import Lexicon, default_lexicon
from rankbias.metrics.measures import HigherIs, Input, Measure, MeasureRequest
from rankbias.metrics.rab import MAGNITUDES
from rankbias.runs import Run, read_run
from rankbias.scoring import RankedInputs, mean_per_system, plan_measures, score_runs
from rankbias.text import document_stats

REPO = Path(__file__).resolve().parents[1]
V2 = 1 / math.log2(3)
LEX = Lexicon.from_mapping({"she": "f", "her": "f", "he": "m", "him": "m"})
SWAPPED = Lexicon.from_mapping({"she": "m", "her": "m", "he": "f", "him": "f"})
TEXTS = {
    "d1": "he said he would",  # m = 2, |d| = 4
    "d2": "she and her sister",  # f = 2, |d| = 4
    "d3": "nothing to see",  # no terms, |d| = 3
    "d4": "she told him",  # f = 1, m = 1, |d| = 3
}


def make_run(lists: dict[str, list[str]], name: str = "run") -> Run:
    rows = [(q, d, float(len(docs) - i)) for q, docs in lists.items() for i, d in enumerate(docs)]
    return Run.from_frame(pd.DataFrame(rows, columns=["qid", "docid", "score"]), name)


def stats_of(texts: dict[str, str], lexicon=LEX, **kw):
    return document_stats(list(texts.values()), lexicon, docids=list(texts), **kw)


def value(frame, metric, cutoff, qid="q1", run="run"):
    sel = frame[(frame.metric == metric) & (frame.cutoff == cutoff) & (frame.qid == qid)]
    sel = sel[sel.run == run]
    assert len(sel) == 1
    return float(sel.value.iloc[0])


def test_tidy_table_by_hand():
    run = make_run({"q1": ["d1", "d2", "d3"], "q2": ["d4"]})
    frame = score_runs(run, stats_of(TEXTS), cutoffs=[2, 5])
    assert list(frame.columns) == ["run", "qid", "metric", "cutoff", "value"]
    # one row per query × default metric × cutoff
    from rankbias.scoring import DEFAULT_MEASURES

    assert not frame.duplicated(["run", "qid", "metric", "cutoff"]).any()
    assert set(frame.metric) == set(DEFAULT_MEASURES) and set(frame.cutoff) == {2, 5}
    assert len(frame) == 2 * len(DEFAULT_MEASURES) * 2
    # q1 @2: m − f = 2, −2 -> RaB = 0; ARaB = (2 + 0)/2 = 1
    assert value(frame, "rab_tc", 2) == 0 and value(frame, "arab_tc", 2) == 1
    # ω: d1 = 0, d2 = 0, d3 = 1 -> FaiRR@5 (3 docs) = 0 + 0 + 1·0.5
    assert value(frame, "fairr", 5) == pytest.approx(0.5)
    # collection background: ω sorted 1 (d3), 1 (d4: (1,1) balanced), 0, 0 -> IFaiRR@5 = 1 + v2
    assert value(frame, "nfairr", 5) == pytest.approx(0.5 / (1 + V2))
    # TE_m = 2/4, TE_f = 2/4 · v2 -> p_m = 1/(1 + v2); RBDF@5 = (1 + v2)/(1 + v2 + 0.5)
    p_m = 1 / (1 + V2)
    rbdf = (1 + V2) / (1 + V2 + 0.5)
    assert value(frame, "rbdf", 5) == pytest.approx(rbdf)
    assert value(frame, "texfair", 5) == pytest.approx(1 - 2 * abs(p_m - 0.5) * rbdf)
    assert value(frame, "texfair_norbdf", 5) == pytest.approx(1 - 2 * abs(p_m - 0.5))
    # q2: one balanced document -> RaB 0, TExFAIR 1, NFaiRR@2 = 1 / (1 + v2)
    assert value(frame, "rab_tc", 2, "q2") == 0 and value(frame, "texfair", 2, "q2") == 1
    assert value(frame, "nfairr", 2, "q2") == pytest.approx(1 / (1 + V2))
    assert frame.attrs["missing_documents"] == {"run": 0}
    assert frame.attrs["empty_queries"] == {"run": []}


def test_background_run_and_group_parts():
    run = make_run({"q1": ["d1", "d2"]})
    background = make_run({"q1": ["d1", "d2", "d4"], "q2": ["d3"]}, "bm25")
    metrics = ["nfairr(background=run)", "ifairr(background=run)", "rab_bool_f", "arab_tf_m"]
    frame = score_runs(run, stats_of(TEXTS), metrics, [2], background)
    # background ω: d4 = 1, d1 = 0, d2 = 0 -> IFaiRR@2 = 1; FaiRR = 0 -> NFaiRR = 0
    assert value(frame, "ifairr(background=run)", 2) == 1
    assert value(frame, "nfairr(background=run)", 2) == 0
    # the background run is an input: the collection stays the default background
    assert value(score_runs(run, stats_of(TEXTS), ["ifairr"], [2], background), "ifairr", 2) > 1
    assert value(frame, "rab_bool_f", 2) == 0.5  # (0 + 1)/2
    assert value(frame, "arab_tf_m", 2) == pytest.approx((math.log(3) + math.log(3) / 2) / 2)
    with pytest.raises(InputError, match="background: run 'bm25' has no documents for 1"):
        score_runs(
            make_run({"q9": ["d1"]}), stats_of(TEXTS), ["nfairr(background=run)"], [2], background
        )
    with pytest.raises(InputError, match="reads a background run, which was not supplied"):
        score_runs(run, stats_of(TEXTS), ["nfairr(background=run)"], [2])


def test_the_group_labels_are_the_measures_own():
    """rab(female=m,male=f) reads the word list's groups the other way round: RaB and ARaB
    change sign and the female part is the male magnitudes; groups are looked up by label."""
    run, stats = make_run({"q1": ["d1", "d2", "d4"]}), stats_of(TEXTS)
    swap = "(female=m,male=f)"
    frame = score_runs(
        run, stats, ["rab", "arab", "rab_f", *(m + swap for m in ["rab", "arab", "rab_f"])], [1, 3]
    )
    # m − f by rank: 2, −2, 0 -> RaB@1 = 2, RaB@3 = 0; ARaB@3 = (2 + 0 + 0)/3
    for k, rab, arab, female, male in [(1, 2.0, 2.0, 0.0, 2.0), (3, 0.0, 2 / 3, 1.0, 1.0)]:
        assert value(frame, "rab_tc", k) == rab and value(frame, f"rab_tc{swap}", k) == -rab
        assert value(frame, "arab_tc", k) == pytest.approx(arab)
        assert value(frame, f"arab_tc{swap}", k) == pytest.approx(-arab)
        assert value(frame, "rab_tc_f", k) == female and value(frame, f"rab_tc_f{swap}", k) == male


def test_awrf_through_the_scorer_reads_its_own_targets():
    """awrf(targets=…) is scored against those targets, not the uniform default: d1 is all
    male, d2 all female, so the exposure at 2 is (f, m) = (v2, 1) / (1 + v2)."""
    run, stats = make_run({"q1": ["d1", "d2", "d4"]}), stats_of(TEXTS)
    assert stats.groups == ("f", "m")
    frame = score_runs(run, stats, ["awrf", "awrf(targets=(0.25,0.75))"], [2])
    female, male = V2 / (1 + V2), 1 / (1 + V2)
    assert value(frame, "awrf", 2) == pytest.approx(abs(female - 0.5) + abs(male - 0.5))
    assert value(frame, "awrf(targets=(0.25,0.75))", 2) == pytest.approx(
        abs(female - 0.25) + abs(male - 0.75)
    )


def test_ted_and_texfair_through_the_scorer_read_their_own_targets_in_one_call():
    """The TExFAIR family shares one computation per call, kept apart per targets: at 2 the
    exposure is (f, m) = (v2, 1) / (1 + v2) and RBDF 1 (both documents have group terms), so
    TED = Σ_g |p_g − p̂_g| and TExFAIR = 2(1 − min p̂) − TED (Eq. 12–13)."""
    run, stats = make_run({"q1": ["d1", "d2", "d4"]}), stats_of(TEXTS)
    skewed = "(targets=(0.25,0.75))"
    frame = score_runs(run, stats, ["ted", f"ted{skewed}", f"texfair{skewed}", "texfair"], [2])
    female, male = V2 / (1 + V2), 1 / (1 + V2)
    uniform, skew = abs(female - 0.5) + abs(male - 0.5), abs(female - 0.25) + abs(male - 0.75)
    assert value(frame, "ted", 2) == pytest.approx(uniform)
    assert value(frame, f"ted{skewed}", 2) == pytest.approx(skew)
    assert value(frame, "texfair", 2) == pytest.approx(1 - uniform)
    assert value(frame, f"texfair{skewed}", 2) == pytest.approx(1.5 - skew)


@pytest.mark.filterwarnings("error")  # an empty document is 0/0 on purpose: no RuntimeWarning
def test_an_empty_document_adds_no_exposure_and_no_warning():
    texts = {**TEXTS, "d0": ""}
    run = make_run({"q1": ["d0", "d1", "d2"]})
    frame = score_runs(run, stats_of(texts), ["ted", "texfair_norbdf"], [3])
    # d0 has no tokens: ranks 2 and 3 give TE_m = 2/4 · v2, TE_f = 2/4 · 1/2
    p_m = V2 / (V2 + 0.5)
    rbdf = (V2 + 0.5) / (1 + V2 + 0.5)
    assert value(frame, "ted", 3) == pytest.approx((abs(p_m - 0.5) + abs(0.5 - p_m)) * rbdf)
    assert value(frame, "texfair_norbdf", 3) == pytest.approx(1 - 2 * abs(p_m - 0.5))


def test_the_fairr_family_through_the_scorer_reads_its_own_targets():
    """ω = 1 − Σ_g |share_g − J_g| with J = (0.25, 0.75): d1 (all male) 0.5, d2 (all female)
    −0.5, d3 (no terms: ≤ τ) 1, d4 (balanced) 0.5; uniform targets give 0, 0, 1, 1.  FaiRR@3 of
    d1, d2, d3 and the collection's ideal (1, 0.5, 0.5 at ranks 1–3) by hand."""
    run, stats = make_run({"q1": ["d1", "d2", "d3"]}), stats_of(TEXTS)
    skewed = "(targets=(0.25,0.75))"
    names = [f"{m}{skewed}" for m in ("fairr", "ifairr", "nfairr")]
    frame = score_runs(run, stats, ["fairr", "ifairr", "nfairr", *names], [3])
    fairr, ideal = 0.5 - 0.5 * V2 + 0.5, 1 + 0.5 * V2 + 0.5 * 0.5
    assert value(frame, f"fairr{skewed}", 3) == pytest.approx(fairr)
    assert value(frame, f"ifairr{skewed}", 3) == pytest.approx(ideal)
    assert value(frame, f"nfairr{skewed}", 3) == pytest.approx(fairr / ideal)
    assert value(frame, "fairr", 3) == pytest.approx(0.5)
    assert value(frame, "nfairr", 3) == pytest.approx(0.5 / (1 + V2))


def test_the_fairr_family_reads_its_targets_in_a_background_run_and_strict_in_the_collection():
    """A background run {d1, d4} of q1: with J = (0.25, 0.75) both have ω = 0.5, so IFaiRR@2 =
    0.5 + 0.5·v2; uniform targets give d4 1 and d1 0, so 1.  With τ = 2 every document is
    neutral (Σ_g M_g ≤ 2), IFaiRR@3 of the collection 1 + v2 + 0.5; strictly (Σ_g M_g < 2) only
    d3 (none) and d4 (balanced) are, d1 and d2 have ω = 0: 1 + v2."""
    run, stats = make_run({"q1": ["d2", "d1"]}), stats_of(TEXTS)
    background = make_run({"q1": ["d1", "d4"]}, "bg")
    skewed = "(targets=(0.25,0.75),background=run)"
    names = ["ifairr(background=run)", f"ifairr{skewed}", f"nfairr{skewed}"]
    frame = score_runs(run, stats, names, [2], background)
    ideal = 0.5 + 0.5 * V2
    assert value(frame, "ifairr(background=run)", 2) == pytest.approx(1)
    assert value(frame, f"ifairr{skewed}", 2) == pytest.approx(ideal)
    # FaiRR@2 of d2 (ω = −0.5), d1 (ω = 0.5) under the same targets
    assert value(frame, f"nfairr{skewed}", 2) == pytest.approx((-0.5 + 0.5 * V2) / ideal)
    strict = ["ifairr(tau=2)", "ifairr(tau=2,strict=true)", "nfairr(tau=2,strict=true)"]
    frame = score_runs(make_run({"q1": ["d1", "d3", "d4"]}), stats, strict, [3])
    assert value(frame, "ifairr(tau=2)", 3) == pytest.approx(1 + V2 + 0.5)
    assert value(frame, "ifairr(tau=2,strict=true)", 3) == pytest.approx(1 + V2)
    # FaiRR@3 of d1 (0), d3 (1), d4 (1), strictly
    assert value(frame, "nfairr(tau=2,strict=true)", 3) == pytest.approx((V2 + 0.5) / (1 + V2))


def test_tf_paper_variant_needs_per_term_counts():
    texts = {"a": "he he he him she", "b": "her"}
    run = make_run({"q1": ["a", "b"]})
    frame = score_runs(run, stats_of(texts, per_term=True), ["rab_tf_paper", "rab_tf"], [1])
    # paper: m = ln 3 (he×3) + ln 1 (him) = ln 3, f = ln 1 = 0 -> RaB@1 = ln 3
    assert value(frame, "rab_tf_paper", 1) == pytest.approx(math.log(3))
    # released code: ln(1 + 4) − ln(1 + 1)
    assert value(frame, "rab_tf", 1) == pytest.approx(math.log(5) - math.log(2))
    with pytest.raises(ValueError, match="per_term"):
        score_runs(run, stats_of(texts), ["rab_tf_paper"], [1])


def test_a_very_long_missing_docid_is_shortened_in_the_message():
    long_id = "x" * 200_000
    run = make_run({"q1": ["d1", long_id]})
    with pytest.raises(InputError) as info:
        score_runs(run, stats_of(TEXTS))
    message = str(info.value)
    assert "x" * 40 + "…" in message
    assert len(message) < 600


def test_missing_documents_error_and_neutral_option():
    run = make_run({"q1": ["d1", "x1", "x2"], "q2": ["x1", "d2"]})
    with pytest.raises(InputError) as info:
        score_runs(run, stats_of(TEXTS))
    assert str(info.value) == (
        "run 'run' names 2 document(s) absent from the collection (3 retrieved row(s)), e.g. x1, "
        "x2; expected every docid in the collection, or missing='neutral' (--missing neutral) to "
        "count them as neutral"
    )
    measures = ["fairr", "rbdf", "rab_tc", "rab_tc_m", "rab_tc_f"]
    frame = score_runs(run, stats_of(TEXTS), measures, [3], missing="neutral")
    assert frame.attrs["missing_documents"] == {"run": 3}
    # q1: d1 ω = 0, x1 and x2 count as neutral -> FaiRR@3 = v2 + 0.5
    assert value(frame, "fairr", 3) == pytest.approx(V2 + 0.5)
    # they carry no group terms: RBDF@3 = 1/(1 + v2 + 0.5); RaB@3 = 2/3
    assert value(frame, "rbdf", 3) == pytest.approx(1 / (1 + V2 + 0.5))
    assert value(frame, "rab_tc", 3) == pytest.approx(2 / 3)
    # and no magnitude of either group: the male part of q1 is 2/3, the female part of q2
    # (x1, then d2 with two female terms; a list of 2 read at 3) is 1
    assert value(frame, "rab_tc_m", 3) == pytest.approx(2 / 3)
    assert value(frame, "rab_tc_f", 3, qid="q2") == pytest.approx(1.0)


def test_empty_queries_are_reported():
    run = Run(
        name="run",
        qids=np.array(["q1", "q2"], dtype=object),
        offsets=np.array([0, 0, 1], dtype=np.int64),
        docids=np.array(["d1"], dtype=object),
        scores=np.array([1.0]),
    )
    with pytest.raises(
        InputError, match=r"run 'run': 1 query\(ies\) have no retrieved documents, e.g. q1"
    ):
        score_runs(run, stats_of(TEXTS))
    frame = score_runs(run, stats_of(TEXTS), ["texfair", "nfairr", "rab_tc"], [2], empty="nan")
    assert frame.attrs["empty_queries"] == {"run": ["q1"]}
    assert frame[frame.qid == "q1"].value.isna().all()
    assert frame[frame.qid == "q2"].value.notna().all()
    assert frame.attrs["undefined_values"] == {("run", "nfairr"): 1, ("run", "rab_tc"): 1,
                                               ("run", "texfair"): 1}  # fmt: skip


def test_bad_parameters():
    run = make_run({"q1": ["d1"]})
    with pytest.raises(ValueError, match="unknown measure 'nfair'; known measures: rab, "):
        score_runs(run, stats_of(TEXTS), ["nfair"])
    three = Lexicon.from_mapping({"she": "f", "he": "m", "they": "n"})
    with pytest.raises(InputError, match="exactly two groups"):
        score_runs(run, stats_of(TEXTS, three), ["rab_tc"])
    # the other families work with three groups
    frame = score_runs(run, stats_of(TEXTS, three), ["texfair", "nfairr", "awrf"], [1])
    assert frame.value.notna().all()
    with pytest.raises(InputError, match="share a name"):
        score_runs([run, run], stats_of(TEXTS))


@pytest.mark.parametrize(
    ("options", "error", "message"),
    [
        # each of these ended in an internal error: max() of an empty sequence, a dict's
        # AttributeError, a list's AttributeError, a KeyError of a tuple
        ({"metrics": []}, ValueError, "metrics: expected at least one measure, found none"),
        ({"stats": {"d1": [1, 0]}}, TypeError, "stats: expected a DocStats, found dict"),
        ({"metrics": ["rbo@5"], "counterfactual": [make_run({"q1": ["d2"]}, "c")]}, TypeError,
         "counterfactual: expected a Run, or a mapping run name -> Run, found list"),
        ({"metrics": ["rbo@5"], "counterfactual": {"run": "c.run"}}, TypeError,
         "counterfactual: expected a Run, or a mapping run name -> Run, found str"),
        ({"metrics": ["nfairr@5"], "aggregates": {}}, ValueError,
         "aggregates: nothing for nfairr at cut-offs (5,); expected collection_aggregates() of "
         "the same measures and cut-offs"),
    ],
)  # fmt: skip
def test_arguments_of_the_wrong_kind_are_named(options, error, message):
    arguments = {"stats": stats_of(TEXTS), **options}
    with pytest.raises(error) as info:
        score_runs(make_run({"q1": ["d1", "d2"]}), **arguments)
    assert type(info.value) is error and str(info.value) == message


def test_figure1_end_to_end_under_the_defaults():
    # Abolghasemi et al. (2024), Fig. 1, each excerpt completed with a second term of its
    # group (the paper: every passage completely biased), plus gender-free background passages
    texts = {
        "p1": "currently he plays for Ligue 1 club Paris Saint-Germain, "
        "where his contract runs out",
        "p2": "she previously played for Espanyol and Levante, where her goals won them a cup",
        "p3": "She became the first player in the history of the league, her club said",
        "p4": "he returned to Manchester United in 2021 after 12 years and won his first match",
        "p5": "He is Real Madrid's all-time top goalscorer, scoring 451 goals in his nine seasons",
        "p6": "he was named the Ligue 1 Player of the Year, selected to the team by his peers",
        "n1": "the match ended in a draw",
        "n2": "the stadium holds eighty thousand spectators",
        "n3": "tickets for the final went on sale on Monday",
        "n4": "the league has twenty clubs",
    }
    left = make_run({"q": ["p1", "p2", "p3", "p4"]}, "left")
    right = make_run({"q": ["p1", "p5", "p6", "p4"]}, "right")
    frame = score_runs([left, right], stats_of(texts, default_lexicon()), ["nfairr", "texfair"],
                       [4])  # fmt: skip
    assert value(frame, "nfairr", 4, "q", "left") == value(frame, "nfairr", 4, "q", "right") == 0
    te_m, te_f = 2 / 15 * (1 + 1 / math.log2(5)), 2 / 14 * (V2 + 0.5)  # 15 and 14 tokens
    assert value(frame, "texfair", 4, "q", "left") == pytest.approx(
        1 - 2 * abs(te_m / (te_m + te_f) - 0.5)
    )
    assert round(value(frame, "texfair", 4, "q", "left"), 3) == 0.917
    assert value(frame, "texfair", 4, "q", "right") == 0


@settings(max_examples=40, deadline=None)
@given(
    order=st.permutations(["d1", "d1b", "d2", "d3", "d4"]),
    swap=st.booleans(),
)
def test_permuting_equal_documents_and_swapping_groups(order, swap):
    texts = dict(TEXTS, d1b=TEXTS["d1"])  # d1 and d1b have equal statistics
    metrics = ["rab_tc", "arab_tf", "nfairr", "texfair", "awrf"]
    base = list(order)
    twin = [{"d1": "d1b", "d1b": "d1"}.get(d, d) for d in base]
    a = score_runs(make_run({"q": base}), stats_of(texts), metrics, [2, 5])
    b = score_runs(make_run({"q": twin}), stats_of(texts), metrics, [2, 5])
    pd.testing.assert_frame_equal(a, b)
    if swap:  # the same text with the groups' terms exchanged
        c = score_runs(make_run({"q": base}), stats_of(texts, SWAPPED), metrics, [2, 5])
        signed = a.metric.isin(["rab_tc", "arab_tf"])
        np.testing.assert_allclose(c.value[signed], -a.value[signed], atol=1e-12)
        np.testing.assert_allclose(c.value[~signed], a.value[~signed], atol=1e-12)


def public_runs(folder: str) -> list[Path]:
    if not PUBLIC.is_dir():
        pytest.skip("public data folder absent")
    return sorted((PUBLIC / "cpjku_fairness_retrieval_results/runs" / folder).glob("*.run"))


@pytest.mark.parametrize("folder", ["msmarco_passage", "trecdl2019_passage"])
def test_real_runs_score_end_to_end(folder):
    runs = [read_run(p) for p in public_runs(folder)]
    assert len(runs) == 10
    docids = sorted(set(np.concatenate([r.docids for r in runs]).tolist()))
    rng = np.random.default_rng(2024)
    lexicon = default_lexicon()
    vocab = np.array(["the", "of", "player", "water", "price", "city", "law", "game"])
    terms = np.array(lexicon.terms)
    texts = [
        " ".join(np.concatenate([rng.choice(vocab, 20), rng.choice(terms, rng.integers(0, 4))]))
        for _ in docids
    ]
    stats = document_stats(texts, lexicon, docids=docids)
    metrics = ["arab_tc", "nfairr(background=run)", "texfair", "awrf", "texfair_norbdf"]
    frame = score_runs(runs, stats, metrics, [5, 10, 20], background=runs[0])
    n_queries = sum(len(r.qids) for r in runs)
    assert len(frame) == n_queries * 5 * 3
    assert set(frame.run) == {p.stem for p in public_runs(folder)}
    assert frame.attrs["missing_documents"][runs[0].name] == 0
    defined = frame[frame.metric.isin(["texfair", "awrf", "arab_tc"])]
    assert defined.value.notna().all()
    tex = frame[frame.metric == "texfair"].value
    assert ((tex >= 0) & (tex <= 1)).all()


def test_a_repeated_cutoff_gives_one_row_per_query():
    run = make_run({"q1": ["d1", "d2", "d3"], "q2": ["d4"]})
    frame = score_runs(run, stats_of(TEXTS), metrics=["rab_tc"], cutoffs=[5, 2, 5, 2])
    assert frame.cutoff.tolist() == [5, 5, 2, 2]  # each cutoff once, in the order given
    assert frame.qid.tolist() == ["q1", "q2", "q1", "q2"]


def test_a_huge_cutoff_reads_the_whole_list_without_allocating_for_it():
    import tracemalloc

    run = make_run({"q1": ["d1", "d2", "d3"], "q2": ["d4"]})
    background = make_run({"q1": ["d3", "d4", "d1"], "q2": ["d4", "d2"]}, name="bg")
    tracemalloc.start()
    try:
        huge = score_runs(
            run, stats_of(TEXTS),
            metrics=["rab_tc", "arab_tc", "nfairr(background=run)", "texfair", "awrf"],
            cutoffs=[1_000_000_000], background=background,
        )  # fmt: skip
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    # a (2 queries × 10^9) matrix of int64 rows would take 16 GB; the lists hold 4 documents
    assert peak < 50 * 2**20
    # q1 (3 documents) at any k ≥ 3 is q1 at k = 3 (a cutoff keeps min(k, length) documents):
    # RaB@3 = (m − f summed: 2 − 2 + 0) / 3 = 0; ARaB@3 = (2 + 0 + 0) / 3
    assert value(huge, "rab_tc", 1_000_000_000) == 0
    assert value(huge, "arab_tc", 1_000_000_000) == pytest.approx(2 / 3)
    # FaiRR@3 = ω(d3)·v3 = 0.5; IFaiRR over the background d3, d4 (ω 1), d1 (ω 0) = 1 + v2
    assert value(huge, "nfairr(background=run)", 1_000_000_000) == pytest.approx(0.5 / (1 + V2))
    small = score_runs(
        run, stats_of(TEXTS), metrics=["texfair", "awrf"], cutoffs=[3], background=background
    )
    for metric in ("texfair", "awrf"):
        for qid in ("q1", "q2"):
            assert value(huge, metric, 1_000_000_000, qid) == value(small, metric, 3, qid)


# ---- the one scorer: any registered measure, its inputs, name@k ------------------------------
def test_name_at_k_equals_the_cutoffs_argument_and_parameters_label_the_rows():
    run = make_run({"q1": ["d1", "d2", "d3"], "q2": ["d4", "d3"]})
    stats = stats_of(TEXTS)
    at_k = score_runs(run, stats, ["texfair@2", "arab(magnitude=tf)@2"], [5])
    plain = score_runs(run, stats, ["texfair", "arab_tf"], [2])
    pd.testing.assert_frame_equal(at_k, plain)
    # a parameter in the name labels the rows; the scorer has no measure parameters of its own
    frame = score_runs(run, stats, ["nfairr(tau=0)@2", "nfairr@2"], [5])
    assert set(frame.metric) == {"nfairr(tau=0)", "nfairr"}
    with pytest.raises(TypeError, match="unexpected keyword argument 'tau'"):
        score_runs(run, stats, ["nfairr"], [2], tau=0)
    # τ = 0: d4 (one f, one m) is no longer neutral by the threshold but balanced: ω = 1;
    # d3 (no terms) ω = 1 still.  q2 = [d4, d3] -> FaiRR@2 = 1 + v2 = the ideal -> NFaiRR 1
    assert value(frame, "nfairr(tau=0)", 2, "q2") == pytest.approx(1.0)


def test_a_measure_without_its_input_names_the_input():
    run = make_run({"q1": ["d1", "d2"]})
    for name, missing in (
        ("duo@2", "polarisation_scores"),
        ("rnd", "group_membership"),
        ("crbo", "counterfactual_run"),
        ("prf_m", "relevance"),
    ):
        with pytest.raises(InputError, match=f"measure {name.split('@')[0]}.* needs the input "
                           f"{missing}, which was not supplied"):  # fmt: skip
            score_runs(run, stats_of(TEXTS), [name], [2])
    with pytest.raises(InputError, match="needs the input term_statistics"):
        score_runs(run, None, ["texfair"], [2])


def brute_duo(scores):
    """Duo by the definition (prefix variance, cut points 2 ≤ i < n) over every ordering."""
    import itertools

    def dcv(order):
        return sum(np.var(order[:i]) / math.log2(i) for i in range(2, len(order)))

    values = [dcv(list(p)) for p in itertools.permutations(scores)]
    low, high = min(values), max(values)
    return 0.5 if high - low < 1e-15 else 1 - (dcv(list(scores)) - low) / (high - low)


def test_duo_and_rnd_through_the_scorer_equal_the_definitions():
    run = make_run({"q1": ["d1", "d2", "d3", "d4"], "q2": ["d3", "d1", "d2"]})
    polarisation = pd.DataFrame(
        [("q1", "d1", 0.9), ("q1", "d2", -0.4), ("q1", "d3", 0.1), ("q1", "d4", -1.2),
         ("q2", "d3", 0.5), ("q2", "d1", 0.7), ("q2", "d2", -0.2)],
        columns=["qid", "docid", "score"],
    )  # fmt: skip
    frame = score_runs(run, None, ["duo"], [3, 4], polarisation=polarisation)
    assert value(frame, "duo", 4) == pytest.approx(brute_duo([0.9, -0.4, 0.1, -1.2]))
    assert value(frame, "duo", 3) == pytest.approx(brute_duo([0.9, -0.4, 0.1]))
    assert value(frame, "duo", 4, "q2") == pytest.approx(brute_duo([0.5, 0.7, -0.2]))
    # documents below the deepest cut-off need no score (d4 of q1, d2 of q2 have none)
    within = polarisation.drop(index=[3, 6])
    frame = score_runs(run, None, ["duo"], [2], polarisation=within)
    assert value(frame, "duo", 2) == pytest.approx(brute_duo([0.9, -0.4]))
    assert value(frame, "duo", 2, "q2") == pytest.approx(brute_duo([0.5, 0.7]))
    # rND: the 3-item example worked by hand (protected second: 0.568 under max-normalisation)
    membership = {"d1": False, "d2": True, "d3": False, "d4": False}
    frame = score_runs(
        make_run({"q1": ["d1", "d2", "d3"]}), None,
        ["rnd@3", "rnd(normalisation=min_max)@3"], [3], group_membership=membership,
    )  # fmt: skip
    fairest, unfair = 1 / 3 + (1 / 6) / math.log2(3), 2 / 3 + (1 / 6) / math.log2(3)
    assert value(frame, "rnd", 3) == pytest.approx(fairest / unfair)
    assert value(frame, "rnd(normalisation=min_max)", 3) == 0.0
    with pytest.raises(InputError, match="ranks document 'd4'.*no group membership"):
        score_runs(make_run({"q1": ["d4"]}), None, ["rnd"], [1], group_membership={"d1": True})


def test_prf_and_crbo_through_the_scorer_by_hand():
    # q1: d1 (m, relevant, top), d2 (f, relevant), d3 (no terms, not relevant)
    # q2: d3 (not relevant, top), d2 (f, relevant)
    run = make_run({"q1": ["d1", "d2", "d3"], "q2": ["d3", "d2"]})
    qrels = pd.DataFrame(
        [("q1", "d1", 1), ("q1", "d2", 1), ("q2", "d2", 2), ("q2", "d3", 0)],
        columns=["qid", "docid", "relevance"],
    )
    sigmoid = "nprf_f(score_normalisation=sigmoid)"  # in the same call: its own pair table
    measures = ["prf_m", "prf_f", "nprf_f", "delta_a_prf", "pd", sigmoid]
    frame = score_runs(run, stats_of(TEXTS), measures, [3], qrels=qrels)
    assert value(frame, "prf_m", 3) == 1 and value(frame, "prf_f", 3) == 1
    # min–max scores of q1: d1 = 1, d2 = 0.5, d3 = 0 -> nPRF_f = sqrt(0.5²) = 0.5
    assert value(frame, "nprf_f", 3) == pytest.approx(0.5)
    # sigmoid of d2's score 2: 1 / (1 + e^−2)
    assert value(frame, sigmoid, 3) == pytest.approx(1 / (1 + math.exp(-2)))
    assert math.isnan(value(frame, "prf_m", 3, "q2")) and value(frame, "prf_f", 3, "q2") == 0
    # |ΔA-PRF| = |mean PRF_m over {q1} − mean PRF_f over {q1, q2}| = |1 − 0.5|
    assert value(frame, "delta_a_prf", 3, "all") == pytest.approx(0.5)
    # PD: nPRF_m(q1) = 1; nPRF_f = 0.5 (q1), 0 (q2) -> ((1 − 0.5)² + (1 − 0)²)/2
    assert value(frame, "pd", 3, "all") == pytest.approx((0.25 + 1) / 2)
    # CRBO: q1 unchanged (RBO 1), q2 disjoint (RBO 0) -> 0.5
    counterfactual = make_run({"q1": ["d1", "d2", "d3"], "q2": ["d1", "d4"]}, "run_cf")
    frame = score_runs(run, None, ["rbo", "crbo"], [2], counterfactual=counterfactual)
    assert value(frame, "rbo", 2) == pytest.approx(1.0) and value(frame, "rbo", 2, "q2") == 0
    assert value(frame, "crbo", 2, "all") == pytest.approx(0.5)


def test_the_system_level_prf_statistics_at_two_cutoffs_by_hand():
    # The run and qrels of the test above.  At k = 2 no male document is clicked nor any
    # pair formed for a male query: every statistic is undefined (NaN); at k = 3 the values
    # of the test above; TS needs two queries of each group, with either variance: with
    # nPRF_m = [1] (one male query, whose variance is 0 whatever its value) it is NaN.
    run = make_run({"q1": ["d1", "d2", "d3"], "q2": ["d3", "d2"]})
    qrels = pd.DataFrame(
        [("q1", "d1", 1), ("q1", "d2", 1), ("q2", "d2", 2), ("q2", "d3", 0)],
        columns=["qid", "docid", "relevance"],
    )
    measures = ["ts", "ts(ddof=1)", "delta_a_prf", "pd"]
    frame = score_runs(run, stats_of(TEXTS), measures, [2, 3], qrels=qrels)
    for measure in measures:
        assert math.isnan(value(frame, measure, 2, "all"))
    assert math.isnan(value(frame, "ts", 3, "all"))
    assert math.isnan(value(frame, "ts(ddof=1)", 3, "all"))
    assert value(frame, "delta_a_prf", 3, "all") == pytest.approx(0.5)
    assert value(frame, "pd", 3, "all") == pytest.approx(0.625)
    # q3 as q1: nPRF_m = [1, 1], nPRF_f = [0.5, 0, 0.5] (mean 1/3, squared deviations 1/36,
    # 1/9, 1/36): TS = (2/3)² / ((1/6)/2/3) = 16 with ddof=1, (2/3)² / ((1/6)/3/3) = 24 with 0
    run = make_run({"q1": ["d1", "d2", "d3"], "q2": ["d3", "d2"], "q3": ["d1", "d2", "d3"]})
    qrels = pd.concat([qrels, qrels.iloc[:2].assign(qid="q3")])
    frame = score_runs(run, stats_of(TEXTS), ["ts", "ts(ddof=1)"], [3], qrels=qrels)
    assert value(frame, "ts(ddof=1)", 3, "all") == pytest.approx(16.0)
    assert value(frame, "ts", 3, "all") == pytest.approx(24.0)


def test_term_measures_equal_their_kernels_called_directly():
    from rankbias.metrics.texfair import term_exposure_family

    run = make_run({"q1": ["d1", "d2", "d3"], "q2": ["d4"]})
    frame = score_runs(run, stats_of(TEXTS), ["ted", "texfair_norbdf"], [1, 3])
    # magnitudes (f, m) and lengths of the ranked documents, by hand from TEXTS
    counts = np.array([[[0, 2], [2, 0], [0, 0]], [[1, 1], [0, 0], [0, 0]]], dtype=float)
    lengths = np.array([[4, 4, 3], [3, 0, 0]], dtype=float)
    direct = term_exposure_family(counts, lengths, np.array([3, 1]), [1, 3])
    for metric in ("ted", "texfair_norbdf"):
        got = frame[frame.metric == metric].value.to_numpy().reshape(2, 2)  # cutoff × query
        np.testing.assert_allclose(got.T, direct[metric])


def test_metric_lists_all_and_defaults():
    from rankbias.scoring import DEFAULT_MEASURES, parse_metric_list

    assert [str(r) for r in parse_metric_list(None)] == list(DEFAULT_MEASURES)
    everything = [str(r) for r in parse_metric_list("all")]
    # every measure computed from term statistics alone, once: RaB/ARaB and their group parts
    # under each magnitude's label, the others by name
    from rankbias.metrics.measures import Input, measures, parse_measure

    assert len(everything) == len(set(everything))
    term_only = {m.name for m in measures() if m.inputs == (Input.TERM_STATISTICS,)}
    assert {parse_measure(label).measure.name for label in everything} == term_only
    rab = {f"{b}_{k}{s}" for b in ("rab", "arab") for k in MAGNITUDES for s in ("", "_f", "_m")}
    assert rab | {"nfairr", "texfair_norbdf"} <= set(everything)
    assert not {"rab", "arab", "rab_f"} & set(everything)  # the labels stand for these
    assert "duo" not in everything and "crbo" not in everything
    assert [str(r) for r in parse_metric_list("texfair@10, nfairr(tau=0,strict=true)")] == [
        "texfair@10", "nfairr(tau=0,strict=true)",
    ]  # fmt: skip
    with pytest.raises(ValueError) as info:
        parse_metric_list("nfairr,,texfair")
    assert str(info.value) == (
        "measure list 'nfairr,,texfair' has an empty item; expected comma-separated measures "
        "like texfair@10,nfairr(tau=0)@5"
    )
    with pytest.raises(ValueError, match="unknown parameter 'x' of texfair"):
        parse_metric_list("texfair(x=1)")
    # computed once, silently, where the same measure spelled twice (tau=1 is the default)
    # was refused as requested twice
    with pytest.raises(ValueError) as info:
        parse_metric_list("nfairr@5,texfair,nfairr@5")
    assert str(info.value) == (
        "measure list 'nfairr@5,texfair,nfairr@5' names nfairr@5 twice; expected once"
    )
    # two spellings of one measure, or one at a cut-off of the list, computed once, silently
    for metrics, named, spellings in [
        (["nfairr(tau=0)@5", "NFaiRR(tau=0.0)@5"], "nfairr(tau=0)@5", "'nfairr(tau=0)@5', 'NFaiRR"),
        (["texfair", "nfairr", "texfair@5"], "texfair@5", "'texfair', 'texfair@5'"),
        (["rnd@5", "rnd@5"], "rnd@5", "'rnd@5', 'rnd@5'"),
        (["rnd@5", "texfair@5", "rnd@5", "texfair"], "rnd@5, texfair@5",
         "'rnd@5', 'texfair@5', 'rnd@5', 'texfair'"),
    ]:  # fmt: skip
        with pytest.raises(ValueError) as info:
            plan_measures(metrics, [5, 10])
        assert str(info.value).startswith(
            f"metrics: {named} requested more than once (by {spellings}"
        ) and str(info.value).endswith("); expected each measure once at each cut-off")


def test_per_list_measures_equal_their_functions_called_on_each_prefix():
    from rankbias.metrics.duo import signed_duo
    from rankbias.metrics.rank_fairness import rkl

    lists = {"q1": ["d1", "d2", "d3", "d4"], "q2": ["d4", "d2", "d1"]}
    scores = {"d1": 0.3, "d2": -0.8, "d3": 1.1, "d4": -0.1}
    polarisation = pd.DataFrame(
        [(q, d, scores[d]) for q, docs in lists.items() for d in docs],
        columns=["qid", "docid", "score"],
    )
    membership = {"d1": True, "d2": False, "d3": False, "d4": True}
    frame = score_runs(
        make_run(lists), None,
        ["signed_duo(variance=global)", "rkl(normalisation=min_max,step=2)", "duo"], [2, 3, 4],
        polarisation=polarisation, group_membership=membership,
    )  # fmt: skip
    for qid, docs in lists.items():
        for k in (2, 3, 4):
            top = docs[:k]
            assert value(frame, "signed_duo(variance=global)", k, qid) == pytest.approx(
                signed_duo([scores[d] for d in top], variance="global")
            )
            expected = rkl([membership[d] for d in top], normalisation="min_max", step=2)
            got = value(frame, "rkl(step=2,normalisation=min_max)", k, qid)
            assert got == pytest.approx(expected, nan_ok=True)
    # two documents: every ordering has the same DCV -> 0.5 (cut points 2 ≤ i < n are empty)
    assert value(frame, "duo", 2) == 0.5


def test_mean_per_system_by_hand():

    nan = float("nan")
    table = pd.DataFrame(
        {
            "run": ["b", "b", "b", "a", "a", "a", "a"],
            "qid": ["1", "2", "3", "1", "2", "1", "2"],
            "metric": [
                "nfairr",
                "nfairr",
                "nfairr",
                "texfair_norbdf",
                "texfair_norbdf",
                "AP",
                "AP",
            ],
            "cutoff": pd.array([10, 10, 10, 10, 10, None, None], dtype="Int64"),
            "value": [1.0, nan, 0.5, nan, nan, 0.25, 0.75],
        }
    )
    out = mean_per_system(table)
    assert list(out.columns) == ["run", "metric", "cutoff", "value", "n_queries", "n_undefined"]
    assert list(zip(out["run"], out["metric"], strict=True)) == [
        ("b", "nfairr"),
        ("a", "texfair_norbdf"),
        ("a", "AP"),
    ]  # order of first appearance
    assert out["value"].iloc[0] == 0.75  # (1.0 + 0.5) / 2: the undefined query is left out
    assert list(out["n_queries"]) == [2, 0, 2]
    assert list(out["n_undefined"]) == [1, 2, 0]
    assert np.isnan(out["value"].iloc[1])  # every value undefined: NaN, not 0
    assert out["value"].iloc[2] == 0.5 and pd.isna(out["cutoff"].iloc[2])  # no cut-off
    by_run = mean_per_system(table, by=["run"]).set_index("run")
    assert by_run.loc["a", "value"] == 0.5 and by_run.loc["a", "n_undefined"] == 2
    with pytest.raises(InputError, match=r"lacks column\(s\) \['cutoff'\]"):
        mean_per_system(table.drop(columns="cutoff"))


def test_mean_per_system_counts_defined_and_undefined_values():
    frame = pd.DataFrame(
        {
            "run": ["x", "x", "x", "y", "y"],
            "metric": ["m"] * 5,
            "cutoff": [10] * 5,
            "value": [0.2, np.nan, 0.6, np.nan, np.nan],
        }
    )
    out = mean_per_system(frame).set_index("run")
    assert out.loc["x", "value"] == pytest.approx(0.4)
    assert out.loc["x", "n_queries"] == 2 and out.loc["x", "n_undefined"] == 1
    assert np.isnan(out.loc["y", "value"])
    assert out.loc["y", "n_queries"] == 0 and out.loc["y", "n_undefined"] == 2


def test_mean_per_system_by_other_columns_keeps_first_appearance_order():
    frame = pd.DataFrame(
        {
            "set": ["b", "a", "b", "a"],
            "run": ["r", "r", "s", "s"],
            "value": [1.0, 2.0, 4.0, 8.0],
        }
    )
    out = mean_per_system(frame, ["set"])
    assert out["set"].tolist() == ["b", "a"]
    assert out["value"].tolist() == [2.5, 5.0]
    assert out["n_queries"].tolist() == [2, 2] and out["n_undefined"].tolist() == [0, 0]


@pytest.mark.parametrize(
    ("membership", "message"),
    [
        ({"d1": True, "d2": float("nan")}, "document 'd2' has protected = nan"),
        ({"d1": "yes", "d2": False}, "document 'd1' has protected = 'yes'"),
        ({"d1": 2, "d2": 0}, "document 'd1' has protected = 2"),
        (
            pd.DataFrame({"docid": ["d1", "d2", "d1"], "protected": [1, 0, 0]}),
            "'d1' is given twice",
        ),
    ],
)
def test_group_membership_is_booleans_or_zero_one(membership, message):
    run = make_run({"q1": ["d1", "d2"]})
    with pytest.raises(InputError, match=message):
        score_runs(run, None, ["rnd"], [2], group_membership=membership)


def test_group_membership_as_flags_by_hand():
    # one protected document (d2) of two, ranked second: rND@2 over the cut point i = 1 only,
    # |P_1 - P_N| = |0 - 1/2| = 1/2 -> normalised by the maximum (the same ordering) = 1
    run = make_run({"q1": ["d1", "d2"], "q2": ["d2", "d1"]})
    for membership in ({"d1": False, "d2": True}, {"d1": 0, "d2": 1}):
        frame = score_runs(run, None, ["rnd"], [2], group_membership=membership)
        assert frame["value"].tolist() == [1.0, 1.0]


@pytest.mark.parametrize(
    ("cutoffs", "error", "message"),
    [
        ([2.7], TypeError, "parameter cutoff: expected an integer ≥ 1 and ≤ 2147483647, "
         "found float 2.7"),
        ([0], ValueError, "parameter cutoff: value 0 is out of range; expected an integer ≥ 1 "
         "and ≤ 2147483647"),
        ([2**31], ValueError, "parameter cutoff: value 2147483648 is out of range; expected an "
         "integer ≥ 1 and ≤ 2147483647"),
        ([], ValueError, "expected at least one integer ≥ 1, found none"),
        ("5", TypeError, "expected a sequence of integers ≥ 1, found '5'"),
        ([True], TypeError, "parameter cutoff: expected an integer ≥ 1 and ≤ 2147483647, "
         "found bool True"),
    ],
)  # fmt: skip
def test_cutoffs_are_checked_on_entry(cutoffs, error, message):
    with pytest.raises(error) as info:
        score_runs(make_run({"q1": ["d1"]}), stats_of(TEXTS), ["rab_tc"], cutoffs)
    assert str(info.value) == f"cutoffs: {message}"
    assert score_runs(make_run({"q1": ["d1"]}), stats_of(TEXTS), ["rab_tc"], [np.int64(2)])[
        "cutoff"
    ].tolist() == [2]


def test_a_background_document_missing_from_the_collection_is_neutral_under_neutral():
    """missing='neutral' (the released code): a background document without text has no group
    terms, so ω = 1 and it is the ideal's best document."""
    run = make_run({"q1": ["d3", "d1"]})  # ω 1, 0 -> FaiRR@2 = 1
    background = make_run({"q1": ["d1", "d2", "gone"]}, "bg")  # ω 0, 0 and the missing one
    metrics = ["nfairr(background=run)", "ifairr(background=run)"]
    frame = score_runs(run, stats_of(TEXTS), metrics, [2], background, missing="neutral")
    # IFaiRR@2 over the background's best two: ω(gone) = 1, then 0 -> 1; NFaiRR = 1 / 1
    assert value(frame, "ifairr(background=run)", 2) == pytest.approx(1.0)
    assert value(frame, "nfairr(background=run)", 2) == pytest.approx(1.0)
    assert frame.attrs["missing_documents"]["bg (background of run)"] == 1
    with pytest.raises(InputError, match="background: run 'bg' names 1 document"):
        score_runs(run, stats_of(TEXTS), metrics, [2], background)


def test_a_background_is_counted_for_each_run_that_reads_it():
    """Runs with different queries read different parts of the background: the missing
    documents of each part are reported under that run, none is dropped (q1's is read by
    ``a`` only, and ``b`` is the last run)."""
    background = make_run({"q1": ["d1", "gone"], "q2": ["d2", "lost", "away"]}, "bg")
    runs = [make_run({"q1": ["d3"], "q2": ["d1"]}, "a"), make_run({"q2": ["d4"]}, "b")]
    frame = score_runs(
        runs, stats_of(TEXTS), ["nfairr(background=run)"], [2], background, missing="neutral"
    )
    assert frame.attrs["missing_documents"] == {
        "a": 0,
        "bg (background of a)": 3,
        "b": 0,
        "bg (background of b)": 2,
    }


def test_rank_fairness_of_a_short_list_beside_a_long_one():
    """rND/rKL at a cut-off beyond one list's length read that list whole, whatever the other
    lists of the batch are (a padded matrix must not leak padding into a short list)."""
    membership = {"a": True, "b": False, "c": False, "d": True, "e": False, "f": False}
    run = make_run({"q1": ["b", "a"], "q2": ["c", "d", "e", "f"]})
    frame = score_runs(run, None, ["rnd", "rkl"], [2, 4], group_membership=membership)
    alone = score_runs(make_run({"q1": ["b", "a"]}), None, ["rnd", "rkl"], [2],
                       group_membership=membership)  # fmt: skip
    for metric in ("rnd", "rkl"):
        # q1 has two documents: at k = 4 it is q1 at k = 2, and the same as scored alone
        assert value(frame, metric, 4) == value(frame, metric, 2) == value(alone, metric, 2)
    # by hand, rND of q1 = [not, protected]: cut point i = 1, |0 - 1/2| / log2(2) = 1/2, the
    # largest any ordering of one protected in two reaches -> 1 (normalised by the maximum);
    # read with two padding positions as [not, protected, not, not] it would be 0.449/0.949
    assert value(frame, "rnd", 2) == pytest.approx(1.0)


# ---- the other inputs: aligned by id, whole messages, padding ------------------------------
def test_a_polarisation_table_is_aligned_by_its_ids_not_its_rows():
    run = make_run({"q1": ["d1", "d2", "d3"], "q2": ["d2", "d1"]})
    rows = [("q1", "d1", 0.9), ("q1", "d2", -0.4), ("q1", "d3", 0.1), ("q2", "d2", 0.5),
            ("q2", "d1", -0.7)]  # fmt: skip
    aligned = pd.DataFrame(rows, columns=["qid", "docid", "score"])
    shuffled = pd.concat(
        [aligned.iloc[::-1], pd.DataFrame([("q3", "d9", 5.0)], columns=aligned.columns)]
    )  # another order, and a row of a query the run does not have
    expected = score_runs(run, None, ["duo"], [3], polarisation=aligned)
    assert value(expected, "duo", 3) == pytest.approx(brute_duo([0.9, -0.4, 0.1]))
    assert value(expected, "duo", 3, "q2") == pytest.approx(brute_duo([0.5, -0.7]))
    pd.testing.assert_frame_equal(
        score_runs(run, None, ["duo"], [3], polarisation=shuffled), expected
    )
    # the same scores as a mapping (qid, docid) -> score, or as numbers written as text
    as_mapping = {(q, d): v for q, d, v in rows}
    pd.testing.assert_frame_equal(
        score_runs(run, None, ["duo"], [3], polarisation=as_mapping), expected
    )
    as_text = aligned.assign(score=aligned["score"].map(str))
    pd.testing.assert_frame_equal(
        score_runs(run, None, ["duo"], [3], polarisation=as_text), expected
    )


MEMBERSHIP_EXPECTED = (
    "group_membership: expected a mapping docid -> protected or a table with columns docid, "
    "protected; found list"
)


@pytest.mark.parametrize(
    ("inputs", "error", "message"),
    [
        (
            {"polarisation": pd.DataFrame({"qid": ["q1"], "docid": ["d1"], "score": [0.5]})},
            InputError,
            "polarisation: run 'run' ranks document 'd2' for query 'q1', which has no "
            "polarisation score (1 such position(s)); expected one for every ranked document "
            "within the cut-offs",
        ),
        (
            {"polarisation": pd.DataFrame({"docid": ["d1", "d2"], "value": [0.5, 0.1]})},
            InputError,
            "polarisation: lacks column(s) ['score']; expected columns ['docid', 'score'], "
            "found ['docid', 'value']",
        ),
        (
            {"qrels": pd.DataFrame({"qid": ["q1"], "docid": ["d1"], "grade": [1]})},
            InputError,
            "qrels: lacks column(s) ['relevance']; expected columns ['qid', 'docid', "
            "'relevance'], found ['qid', 'docid', 'grade']",
        ),
        (
            {"group_membership": pd.DataFrame({"docid": ["d1", "d2"], "flag": [1, 0]})},
            InputError,
            "group_membership: lacks column(s) ['protected']; expected columns ['docid', "
            "'protected'], found ['docid', 'flag']",
        ),
        (
            {"polarisation": pd.DataFrame({"docid": ["d1", "d2", "d1"], "score": [0.5, 0.1, 0.5]})},
            InputError,
            "polarisation: 'd1' is given twice; expected each once",
        ),
        (
            {"polarisation": {"d1": 0.5, "d2": "high"}},
            InputError,
            "polarisation: 'd2' has score 'high'; expected a number",
        ),
        (
            {
                "qrels": pd.DataFrame(
                    {"qid": ["q1", "q1"], "docid": ["d1"] * 2, "relevance": [1, 0]}
                )
            },
            InputError,
            "qrels: ('q1', 'd1') is given twice; expected each once",
        ),
        (
            {"qrels": pd.DataFrame({"qid": ["q1"], "docid": ["d1"], "relevance": ["yes"]})},
            InputError,
            "qrels: ('q1', 'd1') has relevance 'yes'; expected a number",
        ),
        ({"group_membership": [("d1", True)]}, TypeError, MEMBERSHIP_EXPECTED),
        (
            {"group_membership": {"d1": "yes", "d2": False}},
            InputError,
            "group_membership: document 'd1' has protected = 'yes'; expected True/False or 1/0",
        ),
    ],
)
def test_other_inputs_are_refused_with_their_whole_message(inputs, error, message):
    measure = {"polarisation": "duo", "qrels": "prf_m", "group_membership": "rnd"}[
        next(iter(inputs))
    ]
    run = make_run({"q1": ["d1", "d2"]})
    with pytest.raises(error) as info:
        score_runs(run, stats_of(TEXTS), [measure], [2], **inputs)
    assert str(info.value) == message


def test_a_query_id_of_forty_characters_is_shown_whole_and_a_longer_one_cut():
    for qid, shown in (("q" * 40, "q" * 40), ("q" * 41, "q" * 40 + "…")):
        run, background = make_run({qid: ["d1"]}), make_run({"other": ["d2"]}, "bg")
        with pytest.raises(InputError) as info:
            score_runs(run, stats_of(TEXTS), ["nfairr(background=run)"], [1], background=background)
        assert f"query(ies) of run 'run', e.g. {shown}; expected" in str(info.value)


def probe_measure(kernel, *inputs, level="query"):
    """An unregistered measure whose kernel looks at what a plugin's kernel is given."""
    return Measure(
        name="probe",
        family="probe",
        definition="reads its inputs",
        reference="none",
        higher_is=HigherIs.NEITHER,
        inputs=inputs,
        kernel=kernel,
        level=level,
    )


MEMBERS = {"d1": True, "d2": False, "d3": True}


def test_a_kernel_that_returns_the_wrong_shape_is_named_with_both_shapes():
    """A plugin's kernel returns one value per query and cut-off (book: Extending)."""
    kernel = lambda inputs, cutoffs: np.zeros((inputs.n_queries, 3))  # noqa: E731
    measure = probe_measure(kernel, Input.GROUP_MEMBERSHIP)
    run = make_run({"q1": ["d1", "d2"], "q2": ["d2"]})
    with pytest.raises(AssertionError) as info:
        score_runs(run, None, [MeasureRequest(measure)], [1, 2], group_membership=MEMBERS)
    assert str(info.value) == "kernel of probe returned shape (2, 3); expected (2, 2)"


def test_the_table_has_one_schema_whatever_the_measures_level():
    """Text columns hold strings as pandas holds them (``object`` before pandas 3, ``str``
    since), cut-offs int64, values float64, rows numbered 0…n−1: the same for a table of
    system-level measures only, so that tables concatenate and merge alike."""
    text = str(pd.Series(["q1"]).dtype)
    system = probe_measure(
        lambda inputs, cutoffs: np.array([0.5, 0.25]), Input.GROUP_MEMBERSHIP, level="system"
    )
    query = probe_measure(  # a kernel may return integers: the table holds floats
        lambda inputs, cutoffs: np.ones((inputs.n_queries, len(cutoffs)), dtype=np.int64),
        Input.GROUP_MEMBERSHIP,
    )
    run = make_run({"q1": ["d1", "d2"], "q2": ["d2"]})
    for measure, qids in ((system, ["all", "all"]), (query, ["q1", "q2", "q1", "q2"])):
        table = score_runs([run, make_run({"q1": ["d3"], "q2": ["d1"]}, "other")], None,
                           [MeasureRequest(measure)], [1, 2], group_membership=MEMBERS)  # fmt: skip
        assert table["qid"].tolist() == qids * 2
        assert table.index.equals(pd.RangeIndex(len(qids) * 2))
        assert {c: str(t) for c, t in table.dtypes.items()} == {
            "run": text, "qid": text, "metric": text, "cutoff": "int64", "value": "float64",
        }  # fmt: skip


def test_the_inputs_a_kernel_reads_are_padded_past_each_list():
    """What a plugin's kernel gets (book: Extending): row i holds list i's first K values in
    rank order, and past the list's end NaN (polarisation, scores) or False (flags,
    relevance)."""
    seen = {}

    def probe(inputs, cutoffs):
        seen["polarisation"] = inputs.polarisation()
        seen["membership"] = inputs.membership()
        seen["relevance"] = inputs.relevance()
        return np.zeros((inputs.n_queries, len(cutoffs)))

    measure = probe_measure(probe, Input.POLARISATION, Input.GROUP_MEMBERSHIP, Input.RELEVANCE)
    run = make_run({"q1": ["d1", "d2", "d3"], "q2": ["d2"]})
    polarisation = pd.DataFrame({"docid": ["d1", "d2", "d3"], "score": [0.5, -1.0, 2.0]})
    qrels = pd.DataFrame({"qid": ["q1", "q2"], "docid": ["d3", "d2"], "relevance": [2, 1]})
    score_runs(
        run, None, [MeasureRequest(measure)], [3], polarisation=polarisation, qrels=qrels,
        group_membership={"d1": True, "d2": False, "d3": True},
    )  # fmt: skip
    nan = np.nan
    values, lengths = seen["polarisation"]
    np.testing.assert_array_equal(values, [[0.5, -1.0, 2.0], [-1.0, nan, nan]])
    assert lengths.tolist() == [3, 1]
    flags, _ = seen["membership"]
    assert flags.tolist() == [[True, False, True], [False, False, False]]
    relevant, scores, _ = seen["relevance"]
    assert relevant.tolist() == [[False, False, True], [True, False, False]]
    np.testing.assert_array_equal(scores, [[3.0, 2.0, 1.0], [1.0, nan, nan]])


def test_the_term_statistics_a_kernel_reads_are_zero_past_each_list():
    """Magnitudes and document lengths at every ranked position, 0 past a list's end."""
    seen = {}

    def probe(inputs, cutoffs):
        seen["counts"], seen["lengths"] = inputs.ranked_group_counts()
        return np.zeros((inputs.n_queries, len(cutoffs)))

    measure = probe_measure(probe, Input.TERM_STATISTICS)
    run = make_run({"q1": ["d1", "d2", "d3"], "q2": ["d2"]})
    score_runs(run, stats_of(TEXTS), [MeasureRequest(measure)], [3])
    assert seen["lengths"].tolist() == [[4, 4, 3], [4, 0, 0]]
    assert seen["counts"].sum(axis=2).tolist() == [[2, 2, 0], [2, 0, 0]]


def test_ranked_inputs_name_a_run_that_is_not_one_and_a_width_below_zero():
    with pytest.raises(TypeError) as info:
        RankedInputs("bm25", 10, {}, {}, {})
    assert str(info.value) == "run: expected a Run, found str"
    with pytest.raises(ValueError) as info:
        RankedInputs(make_run({"q1": ["d1"]}), -1, {}, {}, {})
    assert str(info.value) == "width: expected an integer ≥ 0, found -1"
    run = make_run({"q2": ["d1"], "q1": ["d2", "d3"]})
    for width, kept in ((0, 1), (1, 1), (2, 2)):  # a width of 0 keeps one column
        inputs = RankedInputs(run, width, {}, {}, {})
        assert inputs.width == kept and inputs.qids.tolist() == ["q1", "q2"]


def test_score_runs_names_what_it_refuses_in_its_whole_message():
    run = make_run({"q1": ["d1"]})
    cases = [
        ([], "collection", ValueError, "runs: expected at least one Run, found none"),
        ([run, "bm25"], "collection", TypeError, "runs: expected Run objects, found str"),
        ([run], "corpus", ValueError, "background: expected a Run or 'collection', found 'corpus'"),
        ([run], 3, TypeError, "background: expected a Run or 'collection', found 3"),
    ]
    for runs, background, error, message in cases:
        with pytest.raises(error) as info:
            score_runs(runs, stats_of(TEXTS), ["rab"], [1], background=background)
        assert str(info.value) == message


def test_relevance_is_judged_per_query_not_per_document():
    seen = {}

    def probe(inputs, cutoffs):
        seen["relevant"] = inputs.relevance()[0]
        return np.zeros((inputs.n_queries, len(cutoffs)))

    run = make_run({"q1": ["d1", "d2"], "q2": ["d1", "d2"]})
    qrels = pd.DataFrame({"qid": ["q1", "q2"], "docid": ["d1", "d2"], "relevance": [1, 1]})
    score_runs(run, None, [MeasureRequest(probe_measure(probe, Input.RELEVANCE))], [2], qrels=qrels)
    assert seen["relevant"].tolist() == [[True, False], [False, True]]
    with pytest.raises(InputError) as info:  # judgements without their query are refused
        score_runs(run, None, [MeasureRequest(probe_measure(probe, Input.RELEVANCE))], [2],
                   qrels=qrels.drop(columns="qid"))  # fmt: skip
    assert str(info.value) == (
        "qrels: lacks column(s) ['qid']; expected columns ['qid', 'docid', 'relevance'], "
        "found ['docid', 'relevance']"
    )


def test_mean_per_system_gives_no_row_for_an_unused_category():
    frame = pd.DataFrame(
        {
            "run": pd.Categorical(["b", "b"], categories=["a", "b"]),
            "metric": ["m", "m"],
            "cutoff": [5, 5],
            "value": [0.25, 0.75],
        }
    )
    out = mean_per_system(frame)
    assert out["run"].tolist() == ["b"]
    assert out["value"].tolist() == [0.5] and out["n_queries"].tolist() == [2]
    assert out["n_queries"].dtype == np.int64 and out["n_undefined"].dtype == np.int64


def test_background_and_counterfactual_refusals_give_their_whole_message():
    run = make_run({"q1": ["d1"], "q2": ["d2"]})
    background = make_run({"q1": ["d3"]}, "bm25")
    with pytest.raises(InputError) as info:
        score_runs(run, stats_of(TEXTS), ["nfairr(background=run)"], [1], background=background)
    assert str(info.value) == (
        "background: run 'bm25' has no documents for 1 query(ies) of run 'run', e.g. q2; "
        "expected a background list for every scored query"
    )
    by_name = score_runs(run, None, ["rbo"], [1], counterfactual={"run": run, "more": background})
    assert by_name["value"].tolist() == [1.0, 1.0]  # the run's own entry: itself
    with pytest.raises(InputError) as info:
        score_runs(run, None, ["rbo"], [1], counterfactual={"other": run, "more": run})
    assert str(info.value) == (
        "counterfactual: no counterfactual run for run 'run'; the mapping has ['more', 'other']"
    )
    with pytest.raises(InputError) as info:
        score_runs(run, None, ["rbo"], [1], counterfactual=make_run({"q2": ["d1"]}, "cf"))
    assert str(info.value) == (
        "counterfactual: run 'cf' has no list for 1 query(ies) of run 'run', e.g. q1"
    )


def test_a_kernel_that_reads_a_background_run_nobody_gave_is_told_so():
    """A plugin's kernel may call background_ranked without declaring background=run."""

    def kernel(inputs, cutoffs):
        inputs.background_ranked(np.zeros(len(TEXTS)), 0.0)

    measure = probe_measure(kernel, Input.TERM_STATISTICS)
    with pytest.raises(InputError) as info:
        score_runs(make_run({"q1": ["d1"]}), stats_of(TEXTS), [MeasureRequest(measure)], [1])
    assert str(info.value) == (
        "background=run needs a background run; expected score_runs(background=<Run>)"
    )


def test_an_empty_run_scores_to_an_empty_table_even_against_a_background_run():
    empty = Run.from_frame(pd.DataFrame({"qid": [], "docid": [], "score": []}), "empty")
    frame = score_runs(
        empty, stats_of(TEXTS), ["nfairr(background=run)"], [1], background=make_run({"q": ["d1"]})
    )
    assert frame.empty and list(frame.columns) == ["run", "qid", "metric", "cutoff", "value"]


def test_restrict_inputs_keeps_what_one_part_of_a_run_reads():
    from rankbias.scoring import restrict_inputs

    part = make_run({"q1": ["d1", "d2"]})
    other = make_run({"q1": ["d2"], "q2": ["d3"]}, "cf")
    inputs = {
        "qrels": pd.DataFrame({"qid": ["q1", "q2"], "docid": ["d1", "d3"], "relevance": [1, 2]}),
        "polarisation": pd.DataFrame({"docid": ["d1", "d3", "d2"], "score": [0.1, 0.2, 0.3]}),
        "group_membership": {"d1": True, "d3": False},
        "counterfactual": {"run": other, "another": other},
        "background": other,
        "missing": "error",
    }
    out = restrict_inputs(part, inputs)
    assert out["qrels"].to_dict("list") == {"qid": ["q1"], "docid": ["d1"], "relevance": [1]}
    assert out["polarisation"].to_dict("list") == {"docid": ["d1", "d2"], "score": [0.1, 0.3]}
    assert out["group_membership"] == {"d1": True}
    assert list(out["counterfactual"]) == ["run"]
    assert out["counterfactual"]["run"].qids.tolist() == ["q1"]
    assert out["background"].qids.tolist() == ["q1"] and out["missing"] == "error"
    by_query = pd.DataFrame({"qid": ["q2", "q1"], "docid": ["d1", "d1"], "score": [0.5, 0.6]})
    membership = pd.DataFrame({"docid": ["d3", "d2"], "protected": [1, 0]})
    out = restrict_inputs(
        part, {"polarisation": by_query, "group_membership": membership, "counterfactual": other}
    )
    assert out["polarisation"].to_dict("list") == {"qid": ["q1"], "docid": ["d1"], "score": [0.6]}
    assert out["group_membership"].to_dict("list") == {"docid": ["d2"], "protected": [0]}
    assert out["counterfactual"].qids.tolist() == ["q1"]
    assert inputs["qrels"].shape == (2, 3)  # the caller's tables are left as they were
    # counterfactuals of other runs only are left for the scorer to refuse (naming the run)
    elsewhere = {"another": other}
    assert restrict_inputs(part, {"counterfactual": elsewhere})["counterfactual"] is elsewhere
    assert restrict_inputs(part, {}) == {}


@pytest.mark.parametrize("measure", ["rab_tc(female=w)", "prf_m(male=w)"])
def test_a_group_label_the_word_list_lacks_is_named_with_the_groups_it_has(measure):
    qrels = pd.DataFrame({"qid": ["q1"], "docid": ["d1"], "relevance": [1]})
    with pytest.raises(InputError) as info:
        score_runs(make_run({"q1": ["d1"]}), stats_of(TEXTS), [measure], [1], qrels=qrels)
    assert str(info.value) == (
        "group 'w' is not in the word list, which has groups ['f', 'm'] (set female=/male=)"
    )


def test_crbo_is_the_mean_rbo_at_each_cutoff_apart():
    # q1 agrees at rank 1 only, q2 nowhere: RBO per query and cut-off by the rbo function, and
    # CRBO at each cut-off the mean of that cut-off's two values, not of all four
    from rankbias.metrics.rbo import rbo

    run = make_run({"q1": ["d1", "d2", "d3"], "q2": ["d3", "d2"]})
    counterfactual = make_run({"q1": ["d1", "d4", "d5"], "q2": ["d1", "d4"]}, "run_cf")
    frame = score_runs(run, None, ["rbo", "crbo"], [1, 3], counterfactual=counterfactual)
    for k in (1, 3):
        q1 = rbo(["d1", "d2", "d3"][:k], ["d1", "d4", "d5"][:k])
        q2 = rbo(["d3", "d2"][:k], ["d1", "d4"][:k])
        assert value(frame, "crbo", k, "all") == pytest.approx((q1 + q2) / 2)
    assert value(frame, "crbo", 1, "all") == pytest.approx(0.5)  # RBO@1: 1 and 0


def test_gather_fills_absent_rows_in_the_common_type():
    """Per-document values at ranked rows; row -1 (padding or a missing document) gets the
    absent value, the result in the type both share, and ``per_doc`` is left as it was."""
    from rankbias.scoring import _gather

    per_doc = np.array([[1, 2], [3, 4], [5, 6]])
    rows = np.array([[2, -1], [0, 2]])
    got = _gather(per_doc, rows, np.nan)
    expected = np.array([[[5, 6], [np.nan, np.nan]], [[1, 2], [5, 6]]])
    np.testing.assert_array_equal(got, expected)
    assert got.dtype == np.float64
    assert _gather(per_doc, rows, 0).dtype == per_doc.dtype
    np.testing.assert_array_equal(per_doc, [[1, 2], [3, 4], [5, 6]])
    flags = _gather(np.array([True, False]), np.array([1, -1, 0]), False)
    assert flags.dtype == bool and flags.tolist() == [False, False, True]
    empty = _gather(np.empty((0, 2), dtype=np.int64), np.array([-1, -1]), np.nan)
    assert empty.shape == (2, 2) and np.isnan(empty).all()


def test_scoring_read_runs_never_makes_their_docids_python_strings(tmp_path):
    """The collection lookup reads a run's Arrow docids (8 million docids are 0.5 GB as Python
    strings), whether the runs of a call are looked up together or one run alone."""
    runs = []
    for name in ("a", "b"):
        path = tmp_path / f"{name}.run"
        path.write_text("q1 Q0 d1 1 2.0 x\nq1 Q0 d2 2 1.0 x\nq2 Q0 d4 1 1.0 x\n")
        runs.append(read_run(path))
    for scored in (runs, runs[:1]):
        frame = score_runs(scored, stats_of(TEXTS), ["rab_tc", "nfairr"], cutoffs=[1, 2])
        assert value(frame, "rab_tc", 1, run="a") == 2.0  # d1 at rank 1: M_m - M_f = 2
    assert all(set(run.__dict__) == {"name", "qids", "offsets", "docids", "scores"} for run in runs)
