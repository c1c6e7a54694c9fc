r"""The search-engine-manipulation-effect (SEME) study of Ziems et al. (2024) (§5.2, Tables
2–3, App. A.2, A.5): perspective testbed, polarisation scores, signed Duo, the Table-3
regression (:func:`fit_seme`) and the response file.

.. math::  o_\text{posterior} = \beta_0 + \beta_1 o_\text{prior}
           + \beta_2 \mu^+_\text{Duo} + \epsilon

per corpus and behaviour (``all`` participants, or those who ``clicked``), opinions on the scale
−3…3 (agreement with perspective 1).  Signed Duo columns (:func:`attach_duo`): ``signed_duo``,
the paper's :math:`\mu^+_\text{Duo}` (App. A.2, :func:`rankbias.metrics.duo.signed_duo`; the
PCA axis sign is arbitrary per question; the default regressor); ``released_signed_duo``, what
the released ``seme_experiment.py`` regressed on (Duo times the axis orientation,
:func:`rankbias.metrics.duo.orientation_signed_duo`); ``aligned_signed_duo``, this project's
variant (``+1`` = the ordering puts perspective 1's side first).

Response file (:func:`read_study_responses`): UTF-8 CSV with a header and the columns
``participant_id`` (unique), ``corpus``, ``question_id`` (non-empty), ``prior`` and
``posterior`` (integers −3…3; empty = missing, the row is skipped and counted in
``attrs["skipped"]``), ``shown`` (distinct document ids in rank order, ``|``-separated) and
``clicked`` (1-based ranks in click order, ``|``-separated, may repeat; empty = no click), in any
order; extra columns are kept as text.  A malformed row is an
:class:`~rankbias.errors.InputError` naming ``file:line``.
"""

from __future__ import annotations

import csv
import io
import math
import os
import re
from collections.abc import Sequence
from importlib import resources
from pathlib import Path

import numpy as np
import pandas as pd

from rankbias.errors import (
    InputError,
    expect_choice,
    expect_count,
    expect_flag,
    expect_fraction,
    expect_frame,
    expect_seed,
    expect_type,
    located,
)
from rankbias.inputs import Source, iter_lines, read_bytes, refuse_inner_bom, source_name
from rankbias.metrics.duo import (
    duo,
    duo_direction,
    extreme_orderings,
    orientation_signed_duo,
    polarisation_accuracy,
    polarisation_scores,
    signed_duo,
    spurious_direction,
)
from rankbias.outputs import atomic_path

__all__ = [
    "DUO_COLUMNS",
    "LIKERT_MAX",
    "accuracy_by_question",
    "accuracy_summary",
    "attach_duo",
    "chance_accuracy",
    "dataset_perspectives",
    "fit_seme",
    "load_distractors",
    "load_perspectives",
    "polarisation_table",
    "read_study_responses",
    "study_orderings",
    "write_study_responses",
]

#: The opinion scale is the integers −LIKERT_MAX … LIKERT_MAX.
LIKERT_MAX = 3
#: The signed-Duo columns :func:`attach_duo` adds (see the module docstring).
DUO_COLUMNS = ("signed_duo", "released_signed_duo", "aligned_signed_duo")
CONDITIONS = ("most_biased", "most_balanced")

_PERSPECTIVE_COLUMNS = ("question_id", "question", "doc_id", "perspective", "text")
_DISTRACTOR_COLUMNS = ("question_id", "doc_id", "style_of", "text")
_RESPONSE_COLUMNS = (
    "participant_id",
    "corpus",
    "question_id",
    "prior",
    "posterior",
    "shown",
    "clicked",
)
_SEPARATOR = "|"


# ---- the perspective testbed ---------------------------------------------------------------------
def _resource(name: str) -> Path:
    return Path(str(resources.files("rankbias") / "resources" / name))


def _read_tsv(path: Path, columns: Sequence[str]) -> list[tuple[int, dict[str, str]]]:
    """Rows of a tab-separated file with exactly ``columns`` as its header, with line numbers
    (read as every input: UTF-8, an optional byte-order mark, LF, CRLF or CR line ends)."""
    lines = iter_lines(read_bytes(path, "tab-separated table"), str(path))
    header = next((line for _, line in lines), "").split("\t")
    if header != list(columns):
        raise located(path, 1, f"expected the header {list(columns)}, found {header}")
    rows = []
    for number, line in lines:
        if not line:
            continue
        fields = line.split("\t")
        if len(fields) != len(columns):
            raise located(
                path, number, f"expected {len(columns)} tab-separated fields, found {len(fields)}"
            )
        if any(not field.strip() for field in fields):
            empty = [c for c, f in zip(columns, fields, strict=True) if not f.strip()]
            raise located(path, number, f"expected non-empty fields, found empty {empty}")
        rows.append((number, dict(zip(columns, fields, strict=True))))
    return rows


def load_perspectives(path: str | Path | None = None) -> pd.DataFrame:
    """The perspective testbed, ``question_id, question, doc_id, perspective (1 or 2), text``
    (default ``resources/perspectives.tsv``, card ``PERSPECTIVES.md``); refuses repeated document
    ids, other perspectives, two texts of one question id and a one-sided question."""
    path = Path(path) if path is not None else _resource("perspectives.tsv")
    rows = _read_tsv(path, _PERSPECTIVE_COLUMNS)
    seen: dict[str, int] = {}
    questions: dict[str, str] = {}
    for number, row in rows:
        if row["perspective"] not in ("1", "2"):
            raise located(
                path, number, f"perspective: expected 1 or 2, found {row['perspective']!r}"
            )
        if row["doc_id"] in seen:
            raise located(
                path, number, f"doc_id {row['doc_id']!r} already used on line {seen[row['doc_id']]}"
            )
        seen[row["doc_id"]] = number
        known = questions.setdefault(row["question_id"], row["question"])
        if known != row["question"]:
            raise located(
                path,
                number,
                f"question_id {row['question_id']!r}: expected the question {known!r}, "
                f"found {row['question']!r}",
            )
    frame = pd.DataFrame([row for _, row in rows], columns=list(_PERSPECTIVE_COLUMNS))
    frame["perspective"] = frame["perspective"].astype(int)
    sides = frame.groupby("question_id")["perspective"].nunique()
    if (sides < 2).any():
        one_sided = sides.index[sides < 2].tolist()
        raise located(
            path, None, f"expected both perspectives for every question, {one_sided} have one"
        )
    return frame


def load_distractors(path: str | Path | None = None) -> pd.DataFrame:
    """Distractors for spurious-direction removal (App. A.5), ``question_id, doc_id, style_of,
    text``: documents borrowing perspective ``style_of``'s vocabulary without taking a side
    (default ``resources/perspective_distractors.tsv``)."""
    path = Path(path) if path is not None else _resource("perspective_distractors.tsv")
    rows = _read_tsv(path, _DISTRACTOR_COLUMNS)
    for number, row in rows:
        if row["style_of"] not in ("1", "2"):
            raise located(path, number, f"style_of: expected 1 or 2, found {row['style_of']!r}")
    frame = pd.DataFrame([row for _, row in rows], columns=list(_DISTRACTOR_COLUMNS))
    frame["style_of"] = frame["style_of"].astype(int)
    return frame


# ---- embeddings and polarisation scores ----------------------------------------------------------
def polarisation_table(
    perspectives: pd.DataFrame,
    embeddings: np.ndarray,
    *,
    removal: str = "none",
    distractors: pd.DataFrame | None = None,
    distractor_embeddings: np.ndarray | None = None,
) -> pd.DataFrame:
    """Polarisation scores ``question_id, doc_id, perspective, score`` of every document, one
    PCA per question (ziems2024indexical §4.2) of ``embeddings`` (rows as ``perspectives``);
    ``removal``: ``"none"``, ``"pooled"`` (one spurious direction from all distractors, style 1
    minus style 2, App. A.5) or ``"per_question"`` (each question's own distractors)."""
    expect_choice(removal, "removal", ("none", "pooled", "per_question"))
    expect_frame(perspectives, "perspectives", ("question_id", "doc_id", "perspective"))
    embeddings = np.asarray(embeddings)
    if embeddings.shape[0] != len(perspectives):
        raise ValueError(
            f"embeddings: expected one row per document ({len(perspectives)}), "
            f"found {embeddings.shape[0]}"
        )
    if removal != "none" and (distractors is None or distractor_embeddings is None):
        raise ValueError(f"removal={removal!r} needs distractors and distractor_embeddings")
    direction = None
    if removal != "none":
        style = distractors["style_of"].to_numpy()
    if removal == "pooled":
        direction = spurious_direction(
            distractor_embeddings[style == 1], distractor_embeddings[style == 2]
        )
    scores = np.empty(len(perspectives))
    question_ids = perspectives["question_id"].to_numpy()
    for question in pd.unique(question_ids):
        rows = np.flatnonzero(question_ids == question)
        if removal == "per_question":
            mine = (distractors["question_id"] == question).to_numpy()
            one, two = mine & (style == 1), mine & (style == 2)
            if not one.any() or not two.any():
                raise ValueError(f"question {question!r}: expected distractors of both styles")
            direction = spurious_direction(distractor_embeddings[one], distractor_embeddings[two])
        scores[rows] = polarisation_scores(embeddings[rows], remove_direction=direction)
    table = perspectives[["question_id", "doc_id", "perspective"]].copy()
    table["score"] = scores
    return table.reset_index(drop=True)


def accuracy_by_question(table: pd.DataFrame, *, method: str = "best_sign") -> pd.DataFrame:
    """Polarisation accuracy (ziems2024indexical Table 2) of each question: ``question_id,
    accuracy, n_one, n_two`` (documents of perspective 1 and 2); ``method`` as
    :func:`rankbias.metrics.duo.polarisation_accuracy`."""
    expect_frame(table, "table", ("question_id", "perspective", "score"))
    values = [
        (
            question,
            polarisation_accuracy(
                g["score"].to_numpy(), g["perspective"].to_numpy(), method=method
            ),
            int((g["perspective"] == 1).sum()),
            int((g["perspective"] == 2).sum()),
        )
        for question, g in table.groupby("question_id")
    ]
    return pd.DataFrame(values, columns=["question_id", "accuracy", "n_one", "n_two"])


def chance_accuracy(
    n_one: int, n_two: int, *, positives: int | None = None, method: str = "best_sign"
) -> float:
    """Expected polarisation accuracy of scores that carry no information about the labels,
    ``n_one`` / ``n_two`` documents of each perspective: each sign a fair coin
    (``positives=None``), or a uniformly random set of ``positives`` documents positive (a
    centred principal axis splits a question near half and half).  Exact: a sum over how many
    documents of each perspective land on the positive side.  ``method`` as
    :func:`rankbias.metrics.duo.polarisation_accuracy`."""
    n_one, n_two = expect_count(n_one, "n_one", 0), expect_count(n_two, "n_two", 0)
    expect_choice(method, "method", ("best_sign", "per_group_majority"))
    n = n_one + n_two
    if n == 0:
        raise ValueError("n_one + n_two: expected at least one document, found 0")
    one, two = np.arange(n_one + 1)[:, None], np.arange(n_two + 1)[None, :]  # positives per side
    if positives is None:
        weights = _fair_coins(n_one)[:, None] * _fair_coins(n_two)[None, :]
    else:
        positives = expect_count(positives, "positives", 0)
        if positives > n:
            raise ValueError(f"positives: expected 0…{n}, found {positives}")
        ways = math.comb(n, positives)
        weights = np.array(
            [[math.comb(n_one, a) * math.comb(n_two, b) if a + b == positives else 0
              for b in range(n_two + 1)] for a in range(n_one + 1)],
            dtype=float,
        ) / ways  # fmt: skip
    if method == "best_sign":
        hits = one + (n_two - two)  # perspective 1 positive, perspective 2 negative
        hits = np.maximum(hits, n - hits)
    else:
        hits = np.maximum(one, n_one - one) + np.maximum(two, n_two - two)
    return float(np.sum(weights * hits) / n)


def _fair_coins(n: int) -> np.ndarray:
    """``P(k of n fair coins are heads)``, ``k = 0..n``."""
    return np.array([math.comb(n, k) for k in range(n + 1)], dtype=float) / 2.0**n


def accuracy_summary(
    table: pd.DataFrame,
    *,
    method: str = "best_sign",
    confidence: float = 0.95,
    n_boot: int = 2000,
    seed: int = 0,
) -> pd.Series:
    """Mean polarisation accuracy over the questions of ``table`` (:func:`polarisation_table`)
    with a percentile bootstrap interval over *questions* (the documents of a question share
    one axis, so they are not resampled apart), and the chance level: the mean over questions
    of :func:`chance_accuracy` with half of each question's documents (rounded down) positive.
    Fields ``questions, documents, accuracy, low, high, chance``."""
    expect_fraction(confidence, "confidence")
    n_boot = expect_count(n_boot, "n_boot")
    per_question = accuracy_by_question(table, method=method)
    values = per_question["accuracy"].to_numpy()
    rng = expect_seed(seed)
    means = values[rng.integers(values.size, size=(n_boot, values.size))].mean(axis=1)
    tail = (1 - confidence) / 2
    sizes = per_question[["n_one", "n_two"]].to_numpy()
    chance = np.mean(
        [chance_accuracy(a, b, positives=(a + b) // 2, method=method) for a, b in sizes]
    )
    return pd.Series(
        {
            "questions": int(values.size),
            "documents": int(sizes.sum()),
            "accuracy": float(values.mean()),
            "low": float(np.quantile(means, tail)),
            "high": float(np.quantile(means, 1 - tail)),
            "chance": float(chance),
        }
    )


def dataset_perspectives(data) -> pd.DataFrame:
    """A dataset folder's perspective documents (``[files] perspectives``: ``qid, docid,
    perspective``, TSV with a header) in the layout of :func:`load_perspectives`, the query as
    the question and the collection's passage as the text.  Refuses (InputError naming the
    file and line) another header, a perspective other than 1 or 2, an unknown query, a
    document listed twice and a one-sided query."""
    if not all(hasattr(data, name) for name in ("file", "queries", "texts")):
        raise TypeError(f"data: expected a dataset (rankbias.dataset), found {data!r:.60}")
    path = data.file("perspectives")
    table = pd.read_csv(path, sep="\t", dtype=str, keep_default_na=False)
    expected = ["qid", "docid", "perspective"]
    if list(table.columns) != expected:
        raise InputError(f"{path}: expected the header {expected}, found {list(table.columns)}")
    queries = data.queries.drop_duplicates("qid").set_index("qid")["query"]
    checks = [
        (~table["perspective"].isin(["1", "2"]), "perspective: expected 1 or 2"),
        (~table["qid"].isin(queries.index), "qid: expected a query of the dataset"),
        (table["docid"].duplicated(), "docid: expected each document once"),
    ]
    for bad, message in checks:
        if bad.any():
            row = int(np.flatnonzero(bad.to_numpy())[0])
            raise InputError(f"{path}:{row + 2}: {message}, found {table.iloc[row].tolist()}")
    sides = table.groupby("qid")["perspective"].nunique()
    if (sides < 2).any():
        raise InputError(
            f"{path}: expected both perspectives for every query, "
            f"{sides.index[sides < 2].tolist()} have one"
        )
    return pd.DataFrame(
        {
            "question_id": table["qid"],
            "question": table["qid"].map(queries),
            "doc_id": table["docid"],
            "perspective": table["perspective"].astype(int),
            "text": data.texts(table["docid"]).to_numpy(),
        }
    )


# ---- orderings and signed Duo --------------------------------------------------------------------
def _signed_values(scores: np.ndarray, perspective_one: np.ndarray) -> dict[str, float]:
    released = orientation_signed_duo(scores, perspective_one)
    return {
        "duo": duo(scores),
        "signed_duo": signed_duo(scores),
        "released_signed_duo": released,
        "aligned_signed_duo": duo_direction(scores) * released,
    }


def study_orderings(table: pd.DataFrame, shown=None) -> pd.DataFrame:
    """The study's two orderings per question (most biased, most balanced): per
    ``(question_id, condition)``, ``shown`` doc ids, their ``labels``, ``duo`` and signed Duos.
    ``shown``: the doc ids a participant sees (default every document of ``table``); the
    others only fit the axis, and the orientation of ``released_signed_duo`` comes from all the
    question's perspective-1 documents (the fit set), as in the released script."""
    expect_frame(table, "table", ("question_id", "doc_id", "perspective", "score"))
    if isinstance(shown, str):
        raise TypeError(f"shown: expected a collection of doc ids, found the string {shown!r}")
    visible = None if shown is None else set(shown)
    rows = []
    for question, group in table.groupby("question_id", sort=True):
        reference = group.loc[group["perspective"] == 1, "score"].to_numpy(dtype=float)
        if visible is not None:
            group = group[group["doc_id"].isin(visible)]
        scores = group["score"].to_numpy(dtype=float)
        doc_ids = group["doc_id"].to_numpy()
        labels = group["perspective"].to_numpy().astype(int)
        for condition, order in zip(CONDITIONS, extreme_orderings(scores), strict=True):
            rows.append(
                {
                    "question_id": question,
                    "condition": condition,
                    "shown": tuple(doc_ids[order].tolist()),
                    "labels": tuple(labels[order].tolist()),
                    **_signed_values(scores[order], reference),
                }
            )
    return pd.DataFrame(rows)


def attach_duo(responses: pd.DataFrame, table: pd.DataFrame) -> pd.DataFrame:
    """``responses`` with ``duo`` and the signed Duo columns of each participant's ordering,
    from the scores of :func:`polarisation_table` (orientation: the question's perspective-1
    documents).  A shown document not in ``table`` or of another question is an
    :class:`InputError` naming the participant."""
    for frame, name, columns in (
        (responses, "responses", ("participant_id", "question_id", "shown")),
        (table, "table", ("question_id", "doc_id", "perspective", "score")),
    ):
        expect_frame(frame, name, columns)
    score_of = dict(zip(table["doc_id"], table["score"], strict=True))
    question_of = dict(zip(table["doc_id"], table["question_id"], strict=True))
    references = {
        question: group.loc[group["perspective"] == 1, "score"].to_numpy()
        for question, group in table.groupby("question_id")
    }
    cache: dict[tuple, dict[str, float]] = {}
    values = []
    for participant, question, shown in zip(
        responses["participant_id"], responses["question_id"], responses["shown"], strict=True
    ):
        key = (question, tuple(shown))
        if key not in cache:
            for doc in shown:
                if doc not in score_of:
                    raise InputError(
                        f"participant {participant}: shown document {doc!r} has no "
                        "polarisation score; expected a document of the perspective table"
                    )
                if question_of[doc] != question:
                    raise InputError(
                        f"participant {participant}: shown document {doc!r} belongs to question "
                        f"{question_of[doc]!r}, expected question {question!r}"
                    )
            if question not in references or references[question].size == 0:
                raise InputError(
                    f"participant {participant}: question {question!r} has no perspective-1 "
                    "documents in the table"
                )
            scores = np.array([score_of[doc] for doc in shown])
            cache[key] = _signed_values(scores, references[question])
        values.append(cache[key])
    out = responses.copy()
    extra = pd.DataFrame(values, index=responses.index)
    for column in ("duo", *DUO_COLUMNS):
        out[column] = extra[column] if len(extra) else pd.Series(dtype=float)
    return out


# ---- the regression ------------------------------------------------------------------------------
_TABLE3_COLUMNS = ["corpus", "behaviour", "n", "beta2", "beta2_low", "beta2_high", "p_value", "r2"]


def _fit_one(frame: pd.DataFrame, duo_column: str, cov_type: str, alpha: float):
    import statsmodels.api as sm

    data = frame[["posterior", "prior", duo_column]].astype(float)
    data.columns = ["posterior", "prior", "signed_duo"]
    n = len(data)
    undefined = None
    if n < 4:
        undefined = f"{n} participants; at least 4 are needed"
    elif data["signed_duo"].nunique() < 2:
        undefined = "signed Duo takes a single value"
    elif data["prior"].nunique() < 2:
        undefined = "prior takes a single value"
    exog = sm.add_constant(data[["prior", "signed_duo"]])
    if undefined is None and np.linalg.matrix_rank(exog.to_numpy()) < 3:
        undefined = "prior and signed Duo are collinear"
    if undefined is not None:
        return [n, *[math.nan] * 5], undefined
    result = sm.OLS(data["posterior"], exog).fit(cov_type=cov_type)
    low, high = result.conf_int(alpha=alpha).loc["signed_duo"]
    estimate, p_value = result.params["signed_duo"], result.pvalues["signed_duo"]
    return [n, *map(float, (estimate, low, high, p_value, result.rsquared))], None


def fit_seme(
    responses: pd.DataFrame,
    *,
    duo_column: str = "signed_duo",
    robust: bool = False,
    alpha: float = 0.05,
    combined: bool = False,
) -> pd.DataFrame:
    """Table 3 of ziems2024indexical: OLS ``posterior ~ prior + signed Duo`` per corpus and
    behaviour, as ``corpus, behaviour, n, beta2, beta2_low, beta2_high, p_value, r2``;
    ``responses`` has ``corpus, prior, posterior, n_clicked`` and ``duo_column``
    (:func:`attach_duo`).  ``robust=True``: HC3 standard errors (MacKinnon & White 1985);
    ``combined=True`` adds all corpora pooled; the interval of β2 is ``1 − alpha``.  A subset too
    small or without variation gets NaN, listed in ``attrs["undefined"]``."""
    expect_frame(responses, "responses", expected="the responses of attach_duo()")
    missing = {"corpus", "prior", "posterior", "n_clicked", duo_column} - set(responses.columns)
    if missing:
        raise ValueError(f"responses: expected the columns {sorted(missing)}, not found")
    for column in ("prior", "posterior", "n_clicked", duo_column):
        given = responses[column]
        bad = ~np.isfinite(pd.to_numeric(given, errors="coerce").to_numpy(dtype=float))
        if bad.any():
            i = int(np.flatnonzero(bad)[0])
            value = given.iloc[i].item() if isinstance(given.iloc[i], np.generic) else given.iloc[i]
            raise InputError(
                f"responses: column {column!r} holds {value!r} at row "
                f"{given.index[i]!r} ({int(bad.sum())} such row(s)); expected finite numbers "
                "(read_study_responses skips and counts a response without an answer)"
            )
    cov_type = "HC3" if expect_flag(robust, "robust") else "nonrobust"
    expect_fraction(alpha, "alpha")
    expect_flag(combined, "combined")
    groups = [(corpus, frame) for corpus, frame in responses.groupby("corpus")]
    if combined:
        groups.append(("combined", responses))
    rows, undefined = [], []
    for corpus, frame in groups:
        for behaviour, subset in (("all", frame), ("clicked", frame[frame["n_clicked"] > 0])):
            values, reason = _fit_one(subset, duo_column, cov_type, alpha)
            rows.append([corpus, behaviour, *values])
            if reason:
                undefined.append((corpus, behaviour, reason))
    table = pd.DataFrame(rows, columns=_TABLE3_COLUMNS)
    table.attrs.update(duo_column=duo_column, cov_type=cov_type, undefined=undefined)
    return table


# ---- the response file ---------------------------------------------------------------------------
def _likert(value: str, path, line: int, column: str):
    text = value.strip()
    if text == "":
        return None
    # ASCII digits with an optional sign only: int() would also read '0_1' and '١' (an
    # Arabic-Indic one), which no survey tool writes
    if re.fullmatch(r"[+-]?[0-9]+", text) is None:
        raise located(path, line, f"{column}: expected an integer −3…3, found {value!r}")
    number = int(text)
    if not -LIKERT_MAX <= number <= LIKERT_MAX:
        raise located(path, line, f"{column}: expected an integer −3…3, found {number}")
    return number


def read_study_responses(path: str | Path | Source) -> pd.DataFrame:
    """Read a study response file (module docstring) from a path or stream (:mod:`rankbias.inputs`):
    its columns, ``shown`` and ``clicked`` as tuples, and ``n_clicked``, the *distinct* ranks
    clicked; ``attrs["skipped"]`` maps a reason to the skipped line numbers."""
    where = source_name(path)
    data = read_bytes(path, "response file")
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError:
        for _ in iter_lines(data, where):  # raises naming the line and the byte
            pass
        raise
    refuse_inner_bom(data, where)
    start = 1  # the line of the record being read

    def fail(message: str) -> InputError:
        return located(where, start, message)

    with io.StringIO(text, newline="") as handle:
        reader = csv.reader(handle)
        try:
            header = next(reader, None)
        except csv.Error as exc:
            raise fail(f"expected a CSV header, found {exc}") from None
        if header is None:
            raise fail(f"expected a header with {list(_RESPONSE_COLUMNS)}, found an empty file")
        header = [name.strip() for name in header]
        absent = [name for name in _RESPONSE_COLUMNS if name not in header]
        if absent:
            raise fail(f"expected the columns {list(_RESPONSE_COLUMNS)}, missing {absent}")
        duplicated = sorted({name for name in header if header.count(name) > 1})
        if duplicated:
            raise fail(f"expected each column once, found {duplicated} repeated")
        records, participants = [], {}
        skipped: dict[str, list[int]] = {"missing prior": [], "missing posterior": []}
        line = reader.line_num
        while True:
            try:
                fields = next(reader)
            except StopIteration:
                break
            except csv.Error as exc:
                raise located(where, reader.line_num, f"expected CSV fields, found {exc}") from None
            start, line = line + 1, reader.line_num
            if not fields or (len(fields) == 1 and not fields[0].strip()):
                continue
            if len(fields) != len(header):
                raise fail(f"expected {len(header)} fields, found {len(fields)}")
            row = dict(zip(header, fields, strict=True))
            for name in ("participant_id", "corpus", "question_id"):
                if not row[name].strip():
                    raise fail(f"{name}: expected a non-empty value, found ''")
            participant = row["participant_id"].strip()
            if participant in participants:
                first = participants[participant]
                raise fail(f"participant_id {participant!r} already used on line {first}")
            participants[participant] = start
            prior = _likert(row["prior"], where, start, "prior")
            posterior = _likert(row["posterior"], where, start, "posterior")
            shown = tuple(doc.strip() for doc in row["shown"].split(_SEPARATOR))
            if not row["shown"].strip() or any(not doc for doc in shown):
                raise fail(f"shown: expected document ids separated by '|', found {row['shown']!r}")
            repeated = sorted({doc for doc in shown if shown.count(doc) > 1})
            if repeated:
                raise fail(f"shown: expected distinct document ids, found {repeated} repeated")
            clicked: tuple[int, ...] = ()
            if row["clicked"].strip():
                ranks = [rank.strip() for rank in row["clicked"].split(_SEPARATOR)]
                if not all(rank.isascii() and rank.isdigit() for rank in ranks):
                    raise fail(
                        "clicked: expected ranks (integers) separated by '|', "
                        f"found {row['clicked']!r}"
                    )
                clicked = tuple(int(rank) for rank in ranks)
                outside = [rank for rank in clicked if not 1 <= rank <= len(shown)]
                if outside:
                    raise fail(
                        f"clicked: expected ranks 1…{len(shown)} (the list shown), found {outside}"
                    )
            if prior is None or posterior is None:
                skipped["missing prior" if prior is None else "missing posterior"].append(start)
                continue
            row.update(participant_id=participant, prior=prior, posterior=posterior, shown=shown)
            row.update(clicked=clicked, n_clicked=len(set(clicked)))
            records.append(row)
    columns = [*_RESPONSE_COLUMNS, "n_clicked", *[c for c in header if c not in _RESPONSE_COLUMNS]]
    frame = pd.DataFrame(records, columns=columns)
    for name in ("prior", "posterior", "n_clicked"):
        frame[name] = frame[name].astype(int)
    frame.attrs["skipped"] = {reason: lines for reason, lines in skipped.items() if lines}
    frame.attrs["path"] = where
    return frame


_COMPRESSION_BY_SUFFIX = {".gz": "gzip", ".bz2": "bz2", ".xz": "xz", ".zip": "zip", ".zst": "zstd"}


def write_study_responses(responses: pd.DataFrame, path: str | Path) -> Path:
    """Write ``responses`` in the layout :func:`read_study_responses` reads (the seven public
    columns and ``condition`` when present)."""
    expect_frame(responses, "responses", _RESPONSE_COLUMNS)
    path = Path(expect_type(path, "path", str | os.PathLike, "a file path"))
    columns = list(_RESPONSE_COLUMNS) + (["condition"] if "condition" in responses else [])
    out = responses[columns].copy()
    out["shown"] = out["shown"].map(_SEPARATOR.join)
    out["clicked"] = out["clicked"].map(lambda ranks: _SEPARATOR.join(str(r) for r in ranks))
    compression = _COMPRESSION_BY_SUFFIX.get(path.suffix.lower())  # as pandas infers it
    with atomic_path(path) as temporary:  # a unique temporary file, renamed into place
        out.to_csv(temporary, index=False, compression=compression)
    return path
