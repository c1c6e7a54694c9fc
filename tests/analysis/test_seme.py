"""The SEME study: perspective testbed, signed Duos, Table-3 regression, response file.

Expected values come from hand construction (oracle scores whose split is known) or direct
NumPy/SciPy least squares written here.  The simulator and the power curve are chapter 13's,
checked there.
"""

from __future__ import annotations

import gzip
import io
import re

import numpy as np
import pandas as pd
import pytest
from scipy import stats

from rankbias.analysis.seme import (
    accuracy_by_question,
    accuracy_summary,
    attach_duo,
    chance_accuracy,
    dataset_perspectives,
    fit_seme,
    load_distractors,
    load_perspectives,
    polarisation_table,
    read_study_responses,
    study_orderings,
    write_study_responses,
)
from rankbias.errors import InputError


@pytest.fixture(scope="module")
def perspectives():
    return load_perspectives()


@pytest.fixture(scope="module")
def oracle(perspectives):
    """Scores that split every question perfectly: +1 / −1 by label plus small jitter, with
    perspective 1 on the *negative* side for every third question (so the PCA-axis sign and
    the perspective disagree there, as they may for real scores)."""
    rng = np.random.default_rng(20240601)
    table = perspectives[["question_id", "doc_id", "perspective"]].copy()
    side = np.where(table["perspective"] == 1, 1.0, -1.0)
    flipped = table["question_id"].isin(sorted(table["question_id"].unique())[::3])
    side = np.where(flipped, -side, side)
    table["score"] = side * (1.0 + rng.uniform(0.0, 0.2, size=len(table)))
    return table.reset_index(drop=True)


# ---- the testbed ---------------------------------------------------------------------------


def test_perspective_file_integrity(perspectives):
    # the data card's counts: 24 questions, 8 documents per side, interleaved odd/even ids
    counts = perspectives.groupby(["question_id", "perspective"]).size().unstack()
    assert len(counts) >= 24
    assert (counts >= 8).all().all()
    number = perspectives["doc_id"].str.extract(r"^(q\d+)-d(\d+)$")
    assert (number[0] == perspectives["question_id"]).all()
    assert np.array_equal(number[1].astype(int) % 2 == 1, perspectives["perspective"] == 1)
    assert (counts[1] == counts[2]).all()  # balanced
    assert perspectives["doc_id"].is_unique
    assert perspectives.groupby("question_id")["question"].nunique().eq(1).all()
    assert perspectives["text"].is_unique
    sentences = perspectives["text"].map(lambda t: len(re.findall(r"[.!?](?:\s|$)", t)))
    assert sentences.between(2, 4).all(), perspectives.loc[~sentences.between(2, 4), "doc_id"]


def test_distractors_cover_every_question_with_both_styles(perspectives):
    distractors = load_distractors()
    styles = distractors.groupby("question_id")["style_of"].apply(set)
    assert set(styles.index) == set(perspectives["question_id"])
    assert all(s == {1, 2} for s in styles)
    assert not set(distractors["text"]) & set(perspectives["text"])


def test_load_perspectives_rejects_bad_rows(tmp_path):
    path = tmp_path / "p.tsv"
    header = "question_id\tquestion\tdoc_id\tperspective\ttext\n"
    path.write_text(header + "q1\tWhy?\td1\t1\tA. B.\nq1\tWhy?\td2\t3\tC. D.\n", encoding="utf-8")
    with pytest.raises(
        InputError, match=rf"{re.escape(str(path))}:3: perspective: expected 1 or 2, found '3'"
    ):
        load_perspectives(path)
    path.write_text(header + "q1\tWhy?\td1\t1\tA. B.\nq1\tWhy?\td1\t2\tC. D.\n", encoding="utf-8")
    with pytest.raises(InputError, match=r":3: doc_id 'd1' already used on line 2"):
        load_perspectives(path)


def test_accuracy_of_a_perfect_and_a_half_wrong_split(oracle):
    assert (accuracy_by_question(oracle)["accuracy"] == 1.0).all()
    scrambled = oracle.copy()
    # in every question swap the sign of one document per side: n − 2 of n right either way
    first_of_each = scrambled.groupby(["question_id", "perspective"]).head(1).index
    scrambled.loc[first_of_each, "score"] *= -1
    per_question = accuracy_by_question(scrambled)
    n = per_question["n_one"] + per_question["n_two"]
    assert np.allclose(per_question["accuracy"], (n - 2) / n)


def test_chance_accuracy_by_hand():
    # 4 + 4 documents, fair-coin signs: agreements X ~ Bin(8, 1/2), E[max(X, 8 − X)] = 1304/256;
    # exactly 4 positive: k of perspective 1 positive ~ Hypergeom(8, 4, 4) with weights
    # 1, 16, 36, 16, 1 of 70 and hits max(2k, 8 − 2k): (8 + 96 + 144 + 96 + 8) / 70 = 352/70
    assert chance_accuracy(4, 4) == pytest.approx(1304 / 256 / 8)
    assert chance_accuracy(4, 4, positives=4) == pytest.approx(352 / 70 / 8)
    # nothing positive: the best sign is right for the larger side; each group's own majority
    # (the released code) is right for every document
    assert chance_accuracy(3, 2, positives=0) == pytest.approx(3 / 5)
    assert chance_accuracy(3, 2, positives=0, method="per_group_majority") == 1.0
    # one document per side, fair coins: equal signs (half the time) give 1 of 2, unequal 2 of 2
    assert chance_accuracy(1, 1) == pytest.approx(0.75)
    assert chance_accuracy(1, 1, method="per_group_majority") == 1.0
    with pytest.raises(ValueError, match=r"positives: expected 0…5, found 6"):
        chance_accuracy(3, 2, positives=6)


def test_accuracy_summary_by_hand(oracle):
    perfect = accuracy_summary(oracle, n_boot=200, seed=1)
    assert perfect["accuracy"] == perfect["low"] == perfect["high"] == 1.0
    assert perfect["questions"] == oracle["question_id"].nunique()
    assert perfect["documents"] == len(oracle)
    sizes = oracle.groupby("question_id")["perspective"].value_counts().unstack()
    assert perfect["chance"] == pytest.approx(
        np.mean([chance_accuracy(a, b, positives=(a + b) // 2) for a, b in sizes.to_numpy()])
    )
    # two questions, one right and one at 1/2: bootstrap means 1/2, 3/4, 1 with probabilities
    # 1/4, 1/2, 1/4, so the central 95% runs from 1/2 to 1
    two = pd.DataFrame({"question_id": ["a"] * 2 + ["b"] * 2, "perspective": [1, 2, 1, 2],
                        "score": [1.0, -1.0, 1.0, 1.0]})  # fmt: skip
    summary = accuracy_summary(two, n_boot=4000, seed=2)
    assert (summary["accuracy"], summary["low"], summary["high"]) == (0.75, 0.5, 1.0)
    assert summary["chance"] == pytest.approx(chance_accuracy(1, 1, positives=1))


class _Folder:
    """The three things dataset_perspectives reads from a dataset."""

    def __init__(self, path):
        self.path = path
        self.queries = pd.DataFrame({"qid": ["1", "2", "2"], "query": ["one", "two", "two"]})

    def file(self, name):
        assert name == "perspectives"
        return self.path

    def texts(self, docids):
        return pd.Series([f"text of {d}" for d in docids], index=list(docids))


def test_dataset_perspectives_reads_and_refuses(tmp_path):
    path = tmp_path / "perspectives.tsv"
    path.write_text("qid\tdocid\tperspective\n1\td1\t1\n1\td2\t2\n2\td3\t2\n2\td4\t1\n")
    frame = dataset_perspectives(_Folder(path))
    assert frame["question"].tolist() == ["one", "one", "two", "two"]
    assert frame["perspective"].tolist() == [1, 2, 2, 1]
    assert frame["text"].tolist() == [f"text of d{k}" for k in range(1, 5)]
    path.write_text("qid\tdocid\tperspective\n1\td1\t1\n1\td1\t2\n")
    with pytest.raises(InputError, match=r"perspectives.tsv:3: docid: expected each document"):
        dataset_perspectives(_Folder(path))
    path.write_text("qid\tdocid\tperspective\n1\td1\t1\n9\td2\t2\n")
    with pytest.raises(InputError, match=r":3: qid: expected a query of the dataset"):
        dataset_perspectives(_Folder(path))
    path.write_text("qid\tdocid\tperspective\n1\td1\t1\n1\td2\t1\n")
    with pytest.raises(InputError, match=r"both perspectives for every query, \['1'\] have one"):
        dataset_perspectives(_Folder(path))


# ---- orderings and the three signed Duos ----------------------------------------------------


def test_signed_duo_variants_on_a_perfect_split(oracle):
    orderings = study_orderings(oracle)
    assert {type(v) for labels in orderings["labels"] for v in labels} == {int}  # as the file's
    biased = orderings[orderings["condition"] == "most_biased"]
    balanced = orderings[orderings["condition"] == "most_balanced"]
    assert (biased["duo"] == 1.0).all() and (balanced["duo"] == 0.0).all()
    # a perfect split puts one whole side first in the most biased order
    first_side = biased["labels"].map(lambda labels: labels[0])
    assert biased["labels"].map(lambda labels: len(set(labels[:4]))).eq(1).all()
    # aligned: +1 exactly when perspective 1 comes first
    assert np.array_equal(biased["aligned_signed_duo"], np.where(first_side == 1, 1.0, -1.0))
    # released: +1 exactly when perspective 1 sits on the positive end, whatever the order
    p1_positive = oracle[oracle["perspective"] == 1].groupby("question_id")["score"].mean() > 0
    expected = np.where(p1_positive.loc[biased["question_id"]].to_numpy(), 1.0, -1.0)
    assert np.array_equal(biased["released_signed_duo"], expected)
    # paper's: +1 exactly when the positive end comes first
    first_positive = [
        oracle.set_index("doc_id").loc[shown[0], "score"] > 0 for shown in biased["shown"]
    ]
    assert np.array_equal(biased["signed_duo"], np.where(first_positive, 1.0, -1.0))


def test_orderings_of_the_documents_shown_keep_the_fit_sets_orientation():
    # question q: perspective 1 at +3, +2, −1 (two of three positive: orientation +1), the
    # perspective-2 documents at −2, −3.  Shown: the −1 perspective-1 document and the two
    # perspective-2 ones, all negative: alone they would give the orientation −1
    table = pd.DataFrame({
        "question_id": "q", "doc_id": ["p1", "p2", "p3", "n1", "n2"],
        "perspective": [1, 1, 1, 2, 2], "score": [3.0, 2.0, -1.0, -2.0, -3.0]})  # fmt: skip
    orderings = study_orderings(table, shown={"p3", "n1", "n2"})
    assert all(set(shown) == {"p3", "n1", "n2"} for shown in orderings["shown"])
    # three scores −1, −2, −3: the most biased order opens with a pair of variance 0.25
    biased = orderings.set_index("condition").loc["most_biased"]
    assert biased["duo"] == 1.0
    assert biased["released_signed_duo"] == 1.0  # the fit set's orientation, +1
    alone = study_orderings(table[table["doc_id"].isin(["p3", "n1", "n2"])])
    assert alone.set_index("condition").loc["most_biased", "released_signed_duo"] == -1.0
    with pytest.raises(TypeError, match="shown"):
        study_orderings(table, shown="p3")


# ---- the regression against a direct least-squares computation --------------------------------


def _direct_fit(prior, posterior, regressor, robust):
    x = np.column_stack([np.ones_like(prior, dtype=float), prior, regressor]).astype(float)
    y = posterior.astype(float)
    beta, *_ = np.linalg.lstsq(x, y, rcond=None)
    residual = y - x @ beta
    n, k = x.shape
    inverse = np.linalg.inv(x.T @ x)
    if robust:  # HC3: residuals inflated by (1 − h_ii)²
        leverage = np.einsum("ij,jk,ik->i", x, inverse, x)
        meat = x.T @ (x * (residual**2 / (1 - leverage) ** 2)[:, None])
        covariance = inverse @ meat @ inverse
        quantile = stats.norm.ppf(0.975)
        p = 2 * stats.norm.sf(abs(beta[2]) / np.sqrt(covariance[2, 2]))
    else:
        covariance = inverse * (residual @ residual) / (n - k)
        quantile = stats.t.ppf(0.975, n - k)
        p = 2 * stats.t.sf(abs(beta[2]) / np.sqrt(covariance[2, 2]), n - k)
    se = np.sqrt(covariance[2, 2])
    r2 = 1 - residual @ residual / np.sum((y - y.mean()) ** 2)
    return [beta[2], beta[2] - quantile * se, beta[2] + quantile * se, p, r2]


def _responses(n, corpus, seed):
    """Participants with random priors, posteriors, signed Duos −1/0/+1 and 0–2 clicks."""
    rng = np.random.default_rng(seed)
    regressor = rng.choice([-1.0, 0.0, 1.0], size=n)
    prior = rng.integers(-3, 4, size=n)
    return pd.DataFrame(
        {
            "corpus": corpus,
            "prior": prior,
            "posterior": np.clip(prior + np.rint(0.5 * regressor + rng.normal(size=n)), -3, 3),
            "n_clicked": rng.choice([0, 0, 1, 2], size=n),
            "signed_duo": regressor,
        }
    )


@pytest.mark.parametrize("robust", [False, True])
def test_table3_columns_match_direct_least_squares(robust):
    responses = pd.concat(
        [_responses(150, "natural", 11), _responses(120, "synthetic", 12)], ignore_index=True
    )
    table = fit_seme(responses, robust=robust, combined=True)
    assert list(table.columns) == [
        "corpus", "behaviour", "n", "beta2", "beta2_low", "beta2_high", "p_value", "r2",
    ]  # fmt: skip
    assert len(table) == 6
    for row in table.itertuples():
        frame = (
            responses if row.corpus == "combined" else responses[responses["corpus"] == row.corpus]
        )
        if row.behaviour == "clicked":
            frame = frame[frame["n_clicked"] > 0]
        assert row.n == len(frame)
        expected = _direct_fit(
            frame["prior"].to_numpy(), frame["posterior"].to_numpy(),
            frame["signed_duo"].to_numpy(), robust,
        )  # fmt: skip
        got = [row.beta2, row.beta2_low, row.beta2_high, row.p_value, row.r2]
        assert np.allclose(got, expected, rtol=1e-9, atol=1e-12), (row, expected)


def test_fit_reports_undefined_subsets():
    responses = _responses(40, "simulated", 1).assign(n_clicked=0)
    table = fit_seme(responses)
    clicked = table[table["behaviour"] == "clicked"].iloc[0]
    assert clicked["n"] == 0 and np.isnan(clicked["beta2"])
    assert table.attrs["undefined"] == [
        ("simulated", "clicked", "0 participants; at least 4 are needed")
    ]
    # every prior the same: the prior column is collinear with the intercept
    table = fit_seme(_responses(40, "simulated", 1).assign(prior=0, n_clicked=1))
    assert table["beta2"].isna().all()
    assert [reason for *_, reason in table.attrs["undefined"]] == ["prior takes a single value"] * 2


def test_fit_labels_its_rows_and_attrs_and_is_ordinary_least_squares_by_default():
    responses = pd.concat(
        [_responses(60, "synthetic", 3), _responses(50, "natural", 4)], ignore_index=True
    )
    table = fit_seme(responses)
    assert table[["corpus", "behaviour"]].values.tolist() == [
        ["natural", "all"], ["natural", "clicked"], ["synthetic", "all"], ["synthetic", "clicked"],
    ]  # fmt: skip
    assert table["n"].dtype == np.int64
    assert table.attrs == {"duo_column": "signed_duo", "cov_type": "nonrobust", "undefined": []}
    plain = _direct_fit(*(responses.loc[responses["corpus"] == "natural", c].to_numpy()
                          for c in ("prior", "posterior", "signed_duo")), False)  # fmt: skip
    np.testing.assert_allclose(table.iloc[0, 3:].to_numpy(float), plain, rtol=1e-9)
    robust = fit_seme(
        responses.rename(columns={"signed_duo": "duo"}), duo_column="duo", robust=True
    )
    assert robust.attrs["duo_column"] == "duo" and robust.attrs["cov_type"] == "HC3"


def test_fit_refuses_responses_without_its_columns():
    with pytest.raises(ValueError) as info:
        fit_seme(_responses(10, "c", 0).drop(columns=["prior", "n_clicked"]))
    assert str(info.value) == "responses: expected the columns ['n_clicked', 'prior'], not found"


def test_fit_of_a_subset_whose_prior_and_signed_duo_are_collinear_is_undefined():
    # two distinct priors are enough to fit; here the prior is 2 × signed Duo − 1 throughout
    duo = np.array([-1.0, 1.0, -1.0, 1.0, 1.0, -1.0])
    responses = pd.DataFrame({"corpus": "c", "prior": 2 * duo - 1, "posterior": [0, 1, -1, 2, 1, 0],
                              "n_clicked": [1, 1, 1, 0, 0, 0], "signed_duo": duo})  # fmt: skip
    table = fit_seme(responses)
    assert table["n"].tolist() == [6, 3] and table["beta2"].isna().all()
    assert table.attrs["undefined"] == [
        ("c", "all", "prior and signed Duo are collinear"),
        ("c", "clicked", "3 participants; at least 4 are needed"),
    ]
    responses["prior"] = [1, 1, -1, 1, -1, -1]  # two priors, not collinear: fitted
    assert fit_seme(responses).loc[0, "beta2"] == pytest.approx(
        _direct_fit(responses["prior"].to_numpy(), responses["posterior"].to_numpy(), duo, False)[0]
    )
    responses["signed_duo"] = 0.5
    reason = fit_seme(responses).attrs["undefined"][0]
    assert reason == ("c", "all", "signed Duo takes a single value")
    # four participants are enough: three coefficients and one residual degree of freedom
    four = pd.DataFrame({"corpus": "c", "prior": [1, -1, 0, 2], "posterior": [2, -1, 1, 1],
                         "n_clicked": 1, "signed_duo": [1.0, -1.0, 0.0, -1.0]})  # fmt: skip
    expected = _direct_fit(four["prior"].to_numpy(), four["posterior"].to_numpy(),
                           four["signed_duo"].to_numpy(), False)[0]  # fmt: skip
    assert fit_seme(four).loc[0, ["n", "beta2"]].tolist() == [4, pytest.approx(expected)]


# ---- the response file ----------------------------------------------------------------------


def test_round_trip_through_the_response_file(oracle, tmp_path):
    orderings = study_orderings(oracle)
    shown = orderings.iloc[[0, 1, 2, 5]].reset_index(drop=True)
    study = pd.DataFrame(
        {
            "participant_id": ["s-p1", "s-p2", "s-p3", "s-p4"],
            "corpus": "s",
            "question_id": shown["question_id"],
            "condition": shown["condition"],
            "prior": [0, -3, 2, 1],
            "posterior": [1, -2, 2, 3],
            "shown": shown["shown"],
            "clicked": [(1,), (), (2, 1, 2), (8,)],
        }
    )
    path = write_study_responses(study, tmp_path / "responses.csv")
    read = attach_duo(read_study_responses(path), oracle)
    assert read.attrs["skipped"] == {}
    for column in ("participant_id", "question_id", "prior", "posterior", "shown", "clicked"):
        assert read[column].tolist() == study[column].tolist(), column
    assert read["condition"].tolist() == study["condition"].tolist()
    assert read["n_clicked"].tolist() == [1, 0, 2, 1]
    assert np.array_equal(read["aligned_signed_duo"], shown["aligned_signed_duo"])


GOOD = "participant_id,corpus,question_id,prior,posterior,shown,clicked\n"


RANKS = "clicked: expected ranks (integers) separated by '|', found"
BOM_AT = "a byte-order mark (bytes ef bb bf, U+FEFF) at column"
ONLY_AT_START = "expected one only at the very start of the file (were two files joined?)"


@pytest.mark.parametrize(
    ("row", "message"),
    [
        ("p2,c,q01,4,0,a|b,", "prior: expected an integer −3…3, found 4"),
        ("p2,c,q01,1,x,a|b,", "posterior: expected an integer −3…3, found 'x'"),
        ("p2,c,q01,1,0,a|b,3", "clicked: expected ranks 1…2 (the list shown), found [3]"),
        ("p2,c,q01,1,0,a|b,1|two", f"{RANKS} '1|two'"),
        ("p2,c,q01,1,0,a|b,1_0", f"{RANKS} '1_0'"),
        ("p2,c,q01,1,0,a|b,1.0", f"{RANKS} '1.0'"),
        ("p2,c,q01,1,0,a|b,-1", f"{RANKS} '-1'"),
        ('p2,c,q01,1,0,"a|b,', "expected 7 fields, found 6"),
        ("p2,c,q01,1,0,a|a,", "shown: expected distinct document ids, found ['a'] repeated"),
        ("p2,c,q01,1,0,,", "shown: expected document ids separated by '|', found ''"),
        ("p2,c,q01,1,0,a| ,", "shown: expected document ids separated by '|', found 'a| '"),
        ("p2,c,q01,1,0", "expected 7 fields, found 5"),
        ("p1,c,q01,1,0,a|b,", "participant_id 'p1' already used on line 2"),
        ("p2,,q01,1,0,a|b,", "corpus: expected a non-empty value, found ''"),
        (",c,q01,1,0,a|b,", "participant_id: expected a non-empty value, found ''"),
        (
            "p2,c,q01,1,0,a|b," + "1" * 131073,
            "expected CSV fields, found field larger than field limit (131072)",
        ),  # fmt: skip
        # int() would read these as 1: an underscore, an Arabic-Indic and a full-width digit
        ("p2,c,q01,0_1,0,a|b,", "prior: expected an integer −3…3, found '0_1'"),
        ("p2,c,q01,1,\u0661,a|b,", "posterior: expected an integer −3…3, found '\u0661'"),
        ("p2,c,q01,\uff11,0,a|b,", "prior: expected an integer −3…3, found '\uff11'"),
        # a second file's byte-order mark would make the participant '\ufeffp2'
        ("\ufeffp2,c,q01,1,0,a|b,", f"{BOM_AT} 1; {ONLY_AT_START}"),
        ("p2,c,q01,1,0,a|\ufeffb,", f"{BOM_AT} 16; {ONLY_AT_START}"),
    ],
)
def test_loader_rejects_malformed_rows(tmp_path, row, message):
    path = tmp_path / "r.csv"
    path.write_text(GOOD + "p1,c,q01,0,1,a|b,1\n" + row + "\n", encoding="utf-8")
    with pytest.raises(InputError) as info:
        read_study_responses(path)
    assert str(info.value) == f"{path}:3: {message}"


COLUMNS_LIST = (
    "['participant_id', 'corpus', 'question_id', 'prior', 'posterior', 'shown', 'clicked']"
)


@pytest.mark.parametrize(
    ("raw", "message"),
    [
        (b"", f"expected a header with {COLUMNS_LIST}, found an empty file"),
        (
            b"x" * 131073 + b"\n",
            "expected a CSV header, found field larger than field limit (131072)",
        ),
        (
            GOOD.strip().encode() + b",corpus\n",
            "expected each column once, found ['corpus'] repeated",
        ),
        (
            b"participant_id,corpus\n",
            f"expected the columns {COLUMNS_LIST}, missing "
            "['question_id', 'prior', 'posterior', 'shown', 'clicked']",
        ),
    ],
)
def test_loader_rejects_a_bad_header(tmp_path, raw, message):
    path = tmp_path / "r.csv"
    path.write_bytes(raw)
    with pytest.raises(InputError) as info:
        read_study_responses(path)
    assert str(info.value) == f"{path}:1: {message}"


def test_loader_keeps_extra_columns_after_its_own_and_skips_blank_lines(tmp_path):
    path = tmp_path / "r.csv"
    path.write_text(
        "condition,participant_id,corpus,question_id,prior,posterior,shown,clicked\n"
        "A,p1,c,q01,0,1,a|b,1\n\n \nB,p2,c,q01,-1,2,b|a,\n",
        encoding="utf-8",
    )
    frame = read_study_responses(path)
    assert list(frame.columns) == [
        "participant_id", "corpus", "question_id", "prior", "posterior", "shown", "clicked",
        "n_clicked", "condition",
    ]  # fmt: skip
    assert frame["participant_id"].tolist() == ["p1", "p2"]
    assert frame["condition"].tolist() == ["A", "B"]
    assert frame["prior"].tolist() == [0, -1] and frame["prior"].dtype == np.int64
    assert frame.attrs["path"] == str(path)
    with pytest.raises(InputError) as info:
        read_study_responses(tmp_path / "absent.csv")
    assert str(info.value) == f"{tmp_path / 'absent.csv'}: no such file; expected a response file"


def test_loader_rejects_a_missing_column(tmp_path):
    path = tmp_path / "r.csv"
    path.write_text("participant_id,corpus,question_id,prior,shown,clicked\n", encoding="utf-8")
    with pytest.raises(InputError, match=r":1: expected the columns .* missing \['posterior'\]"):
        read_study_responses(path)


def test_loader_counts_missing_values(tmp_path):
    path = tmp_path / "r.csv"
    lines = [
        "p1,c,q01,0,1,a|b,1",
        "p2,c,q01,,1,a|b,",
        "p3,c,q01,2,,a|b,2|1|2",
        "p4,c,q01,-3,-2,b|a,",
    ]
    path.write_text(GOOD + "\n".join(lines) + "\n", encoding="utf-8")
    frame = read_study_responses(path)
    assert frame["participant_id"].tolist() == ["p1", "p4"]
    assert frame.attrs["skipped"] == {"missing prior": [3], "missing posterior": [4]}
    assert frame["n_clicked"].tolist() == [1, 0]


def test_attach_duo_rejects_unknown_documents(oracle):
    responses = pd.DataFrame(
        {"participant_id": ["p1"], "question_id": ["q01"], "shown": [("q01-d1", "q02-d1")]}
    )
    with pytest.raises(
        InputError, match="participant p1: shown document 'q02-d1' belongs to question 'q02'"
    ):
        attach_duo(responses, oracle)
    responses["shown"] = [("q01-d1", "nope")]
    with pytest.raises(InputError, match="shown document 'nope' has no polarisation score"):
        attach_duo(responses, oracle)


def test_n_clicked_counts_a_repeated_click_once_in_a_kept_row(tmp_path):
    path = tmp_path / "r.csv"
    path.write_text(GOOD + "p1,c,q01,0,1,a|b|c,2|1|2\np2,c,q01,1,1,a|b|c,3|3\n", encoding="utf-8")
    frame = read_study_responses(path)
    assert frame.attrs["skipped"] == {}
    assert frame["clicked"].tolist() == [(2, 1, 2), (3, 3)]  # click order kept, repeats kept
    assert frame["n_clicked"].tolist() == [2, 1]  # distinct results clicked, by hand


RESPONSES = (GOOD + "p1,c,q01,0,1,a|b,1\np2,c,q01,-1,2,b|a,\n").encode()


@pytest.mark.parametrize(
    "raw",
    [
        RESPONSES,
        RESPONSES.replace(b"\n", b"\r\n"),
        RESPONSES.replace(b"\n", b"\r"),
        b"\xef\xbb\xbf" + RESPONSES.replace(b"\n", b"\r\n"),
        RESPONSES.rstrip(b"\n"),
        gzip.compress(RESPONSES, mtime=0),
        RESPONSES.replace(b"p1,", b" p1 ,").replace(b",-1,2,", b", -1 ,+2,"),
    ],
    ids=["lf", "crlf", "cr", "bom-crlf", "no-final-newline", "gzip", "padded"],
)
def test_response_file_quirks_give_the_clean_table(tmp_path, raw):
    path = tmp_path / "r.csv"
    path.write_bytes(raw)
    for frame in (read_study_responses(path), read_study_responses(io.BytesIO(raw))):
        assert frame["participant_id"].tolist() == ["p1", "p2"]
        assert frame["prior"].tolist() == [0, -1] and frame["posterior"].tolist() == [1, 2]
        assert frame["shown"].tolist() == [("a", "b"), ("b", "a")]
        assert frame["clicked"].tolist() == [(1,), ()]


def test_a_quoted_field_keeps_its_line_break_as_written(tmp_path):
    """CSV (RFC 4180): a line break inside quotes is part of the field, byte for byte."""
    raw = GOOD.rstrip() + ',note\r\np1,c,q01,0,1,a|b,1,"two\r\nlines"\r\np2,c,q01,1,1,a,,x\r\n'
    path = tmp_path / "r.csv"
    path.write_bytes(raw.encode())
    frame = read_study_responses(path)
    assert frame["note"].tolist() == ["two\r\nlines", "x"]
    assert frame["participant_id"].tolist() == ["p1", "p2"]


def test_response_file_not_utf8_names_line_and_byte(tmp_path):
    path = tmp_path / "r.csv"
    path.write_bytes(GOOD.encode() + b"p1,c,q01,0,1,a|b,1\np2,c\xe9,q01,0,1,a|b,\n")
    with pytest.raises(InputError, match=re.escape(f"{path}:3: byte 0xe9 at column 5")):
        read_study_responses(path)


# ---- polarisation_table: one PCA per question, by hand on the plane --------------------------
PERSPECTIVES = pd.DataFrame(
    {
        "question_id": ["A", "A", "A", "B", "B"],
        "doc_id": ["a1", "a2", "a3", "b1", "b2"],
        "perspective": [1, 2, 1, 2, 1],
    },
    index=[10, 11, 12, 13, 14],  # another index: the table's rows are numbered afresh
)
# A on the x axis (mean x = 1); B along (1, 2) about its mean (0, 3)
PLANE = np.array([[3.0, 0.0], [-1.0, 0.0], [1.0, 0.0], [1.0, 5.0], [-1.0, 1.0]])


def test_polarisation_table_fits_each_question_alone():
    table = polarisation_table(PERSPECTIVES, PLANE)
    assert list(table.columns) == ["question_id", "doc_id", "perspective", "score"]
    assert table.index.tolist() == [0, 1, 2, 3, 4]
    assert table["doc_id"].tolist() == ["a1", "a2", "a3", "b1", "b2"]
    # A: v = (1, 0), scores x − 1; B: v = (1, 2)/√5, scores ±(2, 4)·(1, 2)/(2√5) = ±√5
    np.testing.assert_allclose(table["score"], [2, -2, 0, 5**0.5, -(5**0.5)], atol=1e-12)


def test_polarisation_table_scores_in_double_precision_whatever_the_embeddings_dtype():
    # the model's embeddings are float32; the PCA and the scores are taken in float64
    single = polarisation_table(PERSPECTIVES, (PLANE / 3).astype(np.float32))
    double = polarisation_table(PERSPECTIVES, (PLANE / 3).astype(np.float32).astype(np.float64))
    assert single["score"].dtype == np.float64
    np.testing.assert_array_equal(single["score"], double["score"])


def test_polarisation_table_removes_the_spurious_direction_pooled_or_per_question():
    # pooled: style 1 at (0, 1), style 2 at (0, −1): the y axis goes; B becomes (1, 0), (−1, 0)
    pooled = pd.DataFrame({"question_id": ["A", "B"], "style_of": [1, 2]})
    table = polarisation_table(
        PERSPECTIVES, PLANE, removal="pooled", distractors=pooled,
        distractor_embeddings=np.array([[0.0, 1.0], [0.0, -1.0]]),
    )  # fmt: skip
    np.testing.assert_allclose(table["score"], [2, -2, 0, 1, -1], atol=1e-12)
    # per question: A removes y (no change), B removes x: B becomes (0, 5), (0, 1)
    own = pd.DataFrame({"question_id": ["A", "A", "B", "B"], "style_of": [1, 2, 1, 2]})
    embeddings = np.array([[0.0, 1.0], [0.0, -1.0], [1.0, 0.0], [-1.0, 0.0]])
    table = polarisation_table(
        PERSPECTIVES, PLANE, removal="per_question", distractors=own,
        distractor_embeddings=embeddings,
    )  # fmt: skip
    np.testing.assert_allclose(table["score"], [2, -2, 0, 2, -2], atol=1e-12)
    one_style = own[own["style_of"] == 1]
    with pytest.raises(ValueError) as info:
        polarisation_table(
            PERSPECTIVES, PLANE, removal="per_question", distractors=one_style,
            distractor_embeddings=embeddings[[0, 2]],
        )  # fmt: skip
    assert str(info.value) == "question 'A': expected distractors of both styles"


def test_polarisation_table_refuses_what_it_cannot_use():
    cases = [
        (
            {"removal": "both"},
            "removal: expected one of 'none', 'pooled', 'per_question', found 'both'",
        ),
        ({"removal": "pooled"}, "removal='pooled' needs distractors and distractor_embeddings"),
        (
            {"removal": "per_question", "distractors": PERSPECTIVES},
            "removal='per_question' needs distractors and distractor_embeddings",
        ),
    ]
    for keywords, message in cases:
        with pytest.raises(ValueError) as info:
            polarisation_table(PERSPECTIVES, PLANE, **keywords)
        assert str(info.value) == message
    with pytest.raises(ValueError) as info:
        polarisation_table(PERSPECTIVES, PLANE[:4])
    assert str(info.value) == "embeddings: expected one row per document (5), found 4"


# ---- the tab-separated tables: read as every input, refused with file and line ---------------
HEADER = b"question_id\tquestion\tdoc_id\tperspective\ttext"
ROW_1 = b"q1\tWhy?\td1\t1\tA. B."
ROW_2 = b"q1\tWhy?\td2\t2\tC. D."


@pytest.mark.parametrize(
    "raw",
    [
        HEADER + b"\n" + ROW_1 + b"\n" + ROW_2 + b"\n",
        b"\xef\xbb\xbf" + HEADER + b"\r\n" + ROW_1 + b"\r\n\r\n" + ROW_2,  # BOM, CRLF, a blank
        HEADER + b"\r" + ROW_1 + b"\r" + ROW_2 + b"\r",  # CR line ends
        HEADER + b"\n\n" + ROW_1 + b"\n\n\n" + ROW_2 + b"\n\n",  # blank lines between rows
    ],
)
def test_a_perspectives_table_in_any_line_convention_reads_the_same(tmp_path, raw):
    path = tmp_path / "p.tsv"
    path.write_bytes(raw)
    frame = load_perspectives(path)
    assert frame.to_dict("list") == {
        "question_id": ["q1", "q1"],
        "question": ["Why?", "Why?"],
        "doc_id": ["d1", "d2"],
        "perspective": [1, 2],
        "text": ["A. B.", "C. D."],
    }


COLUMNS = "['question_id', 'question', 'doc_id', 'perspective', 'text']"
BAD_TABLES = [
    (b"", 1, f"expected the header {COLUMNS}, found ['']"),
    (
        b"question_id\tquestion\n",
        1,
        f"expected the header {COLUMNS}, found ['question_id', 'question']",
    ),
    (
        HEADER + b"\n" + ROW_1 + b"\nq1\tWhy?\td2\t2\n",
        3,
        "expected 5 tab-separated fields, found 4",
    ),
    (
        HEADER + b"\n\nq1\t \td2\t2\t\n",
        3,
        "expected non-empty fields, found empty ['question', 'text']",
    ),
    (
        HEADER + b"\n" + ROW_1 + b"\nq1\tWhy?\td\xff\t2\tC.\n",
        3,
        "byte 0xff at column 10 is not UTF-8 (invalid start byte); expected UTF-8 text",
    ),
]


@pytest.mark.parametrize(("raw", "where", "message"), BAD_TABLES)
def test_a_malformed_perspectives_table_is_refused_at_its_line(tmp_path, raw, where, message):
    path = tmp_path / "p.tsv"
    path.write_bytes(raw)
    with pytest.raises(InputError) as info:
        load_perspectives(path)
    assert str(info.value) == f"{path}:{where}: {message}"


def test_a_missing_table_is_named(tmp_path):
    with pytest.raises(InputError) as info:
        load_distractors(tmp_path / "absent.tsv")
    assert (
        str(info.value)
        == f"{tmp_path / 'absent.tsv'}: no such file; expected a tab-separated table"
    )


def test_the_perspective_loaders_refuse_with_whole_messages_and_type_their_columns(tmp_path):
    path = tmp_path / "p.tsv"
    rows = [HEADER, ROW_1, ROW_2, b"q2\tHow?\td3\t1\tE. F."]
    path.write_bytes(b"\n".join(rows) + b"\n")
    with pytest.raises(InputError) as info:
        load_perspectives(path)
    assert (
        str(info.value) == f"{path}: expected both perspectives for every question, ['q2'] have one"
    )
    for bad, message in (
        (b"q1\tHow?\td3\t2\tE. F.", "question_id 'q1': expected the question 'Why?', found 'How?'"),
        (b"q1\tWhy?\td1\t2\tE. F.", "doc_id 'd1' already used on line 2"),
    ):
        path.write_bytes(b"\n".join([HEADER, ROW_1, ROW_2, bad]) + b"\n")
        with pytest.raises(InputError) as info:
            load_perspectives(path)
        assert str(info.value) == f"{path}:4: {message}"
    path.write_bytes(b"\n".join([HEADER, ROW_1, ROW_2]) + b"\n")
    frame = load_perspectives(path)
    assert list(frame.columns) == ["question_id", "question", "doc_id", "perspective", "text"]
    assert frame["perspective"].dtype == np.int64
    distractors = tmp_path / "d.tsv"
    distractors.write_bytes(b"question_id\tdoc_id\tstyle_of\ttext\nq1\tx1\t2\tSome words.\n")
    frame = load_distractors(distractors)
    assert frame.to_dict("list") == {
        "question_id": ["q1"], "doc_id": ["x1"], "style_of": [2], "text": ["Some words."]
    }  # fmt: skip
    assert frame["style_of"].dtype == np.int64
    distractors.write_bytes(b"question_id\tdoc_id\tstyle_of\ttext\nq1\tx1\t3\tSome words.\n")
    with pytest.raises(InputError) as info:
        load_distractors(distractors)
    assert str(info.value) == f"{distractors}:2: style_of: expected 1 or 2, found '3'"


def test_perspective_tables_with_a_header_only_are_empty_tables_with_their_columns(tmp_path):
    path = tmp_path / "p.tsv"
    path.write_bytes(HEADER + b"\n")
    frame = load_perspectives(path)
    assert frame.empty
    assert list(frame.columns) == ["question_id", "question", "doc_id", "perspective", "text"]
    path.write_bytes(b"question_id\tdoc_id\tstyle_of\ttext\n")
    frame = load_distractors(path)
    assert frame.empty and list(frame.columns) == ["question_id", "doc_id", "style_of", "text"]


def test_accuracy_by_question_is_in_question_order():
    table = pd.DataFrame(
        {
            "question_id": ["b", "b", "a", "a"],
            "doc_id": ["b1", "b2", "a1", "a2"],
            "perspective": [1, 2, 1, 2],
            "score": [1.0, -1.0, 1.0, 2.0],  # b split right; a's two documents on one side
        }
    )
    out = accuracy_by_question(table)
    assert list(out.columns) == ["question_id", "accuracy", "n_one", "n_two"]
    assert out["question_id"].tolist() == ["a", "b"]
    assert out["n_one"].tolist() == out["n_two"].tolist() == [1, 1]
    assert out["accuracy"].tolist() == [0.5, 1.0]


def test_attach_duo_keeps_the_responses_index_and_takes_no_responses(oracle):
    orderings = study_orderings(oracle).iloc[[3, 0]]
    responses = pd.DataFrame(
        {
            "participant_id": ["p1", "p2"],
            "question_id": orderings["question_id"].to_numpy(),
            "shown": orderings["shown"].to_numpy(),
        },
        index=[7, 5],  # a selection of a larger table
    )
    out = attach_duo(responses, oracle)
    assert out.index.tolist() == [7, 5]
    for column in ("duo", "signed_duo", "released_signed_duo", "aligned_signed_duo"):
        np.testing.assert_array_equal(out[column].to_numpy(), orderings[column].to_numpy())
    none = attach_duo(responses.iloc[:0], oracle)
    assert len(none) == 0
    assert none.columns.tolist() == [
        "participant_id", "question_id", "shown",
        "duo", "signed_duo", "released_signed_duo", "aligned_signed_duo",
    ]  # fmt: skip
    assert (none.dtypes.iloc[3:] == np.float64).all()


def test_attach_duo_needs_a_perspective_one_document_and_one_is_enough(oracle):
    question = oracle["question_id"].iloc[0]
    rows = oracle[oracle["question_id"] == question]
    twos = rows[rows["perspective"] == 2]["doc_id"].tolist()
    responses = pd.DataFrame(
        {"participant_id": ["p9"], "question_id": [question], "shown": [tuple(twos[:3])]}
    )
    with pytest.raises(InputError) as error:
        attach_duo(responses, oracle[oracle["perspective"] == 2])
    assert str(error.value) == (
        f"participant p9: question {question!r} has no perspective-1 documents in the table"
    )
    one = rows[rows["perspective"] == 1].iloc[:1]
    table = pd.concat([one, rows[rows["perspective"] == 2]])
    out = attach_duo(responses, table)
    assert np.isfinite(out["aligned_signed_duo"].item())


def test_the_response_file_is_written_with_its_header_compressed_by_its_suffix(tmp_path):
    study = pd.DataFrame(
        {
            "participant_id": ["p1", "p2"],
            "corpus": "c",
            "question_id": ["q01", "q02"],
            "prior": [0, -3],
            "posterior": [1, 3],
            "shown": [("a", "b"), ("c", "d")],
            "clicked": [(2, 1), ()],
            "extra": ["not written", "not written"],
        },
        index=[4, 9],
    )
    plain = write_study_responses(study, tmp_path / "responses.csv")
    assert plain.read_text(encoding="utf-8") == (
        "participant_id,corpus,question_id,prior,posterior,shown,clicked\n"
        "p1,c,q01,0,1,a|b,2|1\n"
        "p2,c,q02,-3,3,c|d,\n"
    )
    packed = write_study_responses(study, tmp_path / "responses.CSV.GZ")
    assert packed.read_bytes()[:2] == b"\x1f\x8b"
    assert gzip.decompress(packed.read_bytes()) == plain.read_bytes()
    with pytest.raises(TypeError) as info:
        write_study_responses(study, 3)
    assert str(info.value) == "path: expected a file path, found int"


def test_study_orderings_list_the_questions_sorted_whatever_the_row_order(oracle):
    shuffled = oracle.sample(frac=1.0, random_state=3)
    got = study_orderings(shuffled)
    assert got["question_id"].tolist() == sorted(got["question_id"])
    # the same Duos; among orderings of equal Duo (the first two documents may swap at no
    # cost) the one found follows the row order
    values = [
        "question_id",
        "condition",
        "duo",
        "signed_duo",
        "released_signed_duo",
        "aligned_signed_duo",
    ]
    pd.testing.assert_frame_equal(got[values], study_orderings(oracle)[values])
