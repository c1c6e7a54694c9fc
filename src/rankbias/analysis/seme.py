r"""Does Duo predict opinion change?  The search-engine-manipulation-effect (SEME) study of
Ziems et al. 2024 (ziems2024indexical §5.2, Table 2, Table 3, App. A.2, A.5).

The regression
--------------
For each participant the study records an opinion before (``prior``) and after (``posterior``)
reading a ranked list, both on the 7-point scale −3…3 (agreement with perspective 1 of the
question), and regresses

.. math::  o_\text{posterior} = \beta_0 + \beta_1 o_\text{prior}
           + \beta_2 \mu^+_\text{Duo} + \epsilon

per corpus and per behaviour subset (``all`` participants, or those who ``clicked`` at least one
result), reporting ``N``, ``β2``, ``P(β2 = 0)`` and ``R²`` (Table 3).  :func:`fit_seme` fits it
with statsmodels OLS (classical or HC3 standard errors).

Which signed Duo
----------------
Three signed versions of the unsigned Duo of the shown ordering are computed by
:func:`attach_duo` (the polarisation scores come from :func:`polarisation_table`):

``signed_duo``
    The paper's App. A.2 quantity :math:`\mu^+_\text{Duo}`,
    :func:`rankbias.metrics.duo.signed_duo`: the direction of the ordering *along the PCA axis*
    (``+1`` = the positive end of the axis comes first) times Duo.  The sign of a principal
    axis is arbitrary (here: largest loading positive), so ``+1`` means perspective 1 for some
    questions and perspective 2 for others.  It is the default regressor of :func:`fit_seme`
    and :func:`power_curve`.
``released_signed_duo``
    What the released ``seme_experiment.py`` regressed on,
    :func:`rankbias.metrics.duo.orientation_signed_duo`: Duo times the *orientation of the axis*
    (``+1`` if at least half of the perspective-1 documents project positively).  It does not
    depend on which side the ordering puts first.
``aligned_signed_duo``
    A variant defined by this project, not by the paper: the ordering's direction times the
    axis orientation times Duo, so that ``+1`` means the ordering puts the documents the axis
    places on perspective 1's side first.  It needs the perspective labels of the documents.

The simulated study
-------------------
:func:`simulate_study` draws participants as the study did: a question uniformly at random, one
of the two orderings of its documents the study showed — the most biased (Duo = 1) or the most
balanced (Duo = 0) according to the polarisation scores, :func:`rankbias.metrics.duo.
extreme_orderings` — with probability ½ each, and a prior from ``prior_probabilities``.  Clicks
follow a position-based click model (:class:`PositionBasedClickModel`): the result at rank
``r`` is clicked independently with probability ``α θ_r`` (examination ``θ_r``, default
``1/r``; attractiveness ``α``, set from a target click-through rate).  The opinion moves by

.. math::  \text{shift} = \text{effect} \cdot q \cdot g, \qquad
           o^* = o_\text{prior} + \text{shift} + \varepsilon,\ \varepsilon \sim N(0, \sigma^2)

where ``q`` is the *planted* quantity of the shown ordering (``planted``) and ``g = 1`` for a
participant who clicked at least one result, ``g = snippet_weight`` otherwise (the pull of
titles and snippets alone).  The posterior is ``o*`` rounded to the nearest integer and clipped
to −3…3.  ``planted`` is one of

``"signed_duo"`` (the default)
    the paper's regressor, App. A.2: the model the paper's regression assumes, taken at its
    word;
``"label_side"``
    Duo times ``d ∈ {−1, 0, +1}``, the side the ordering favours *by the documents' true
    labels* (the sign of ``Σ_r θ_r y_r``, ``y = +1`` for perspective 1, ``−1`` for
    perspective 2): readers pulled towards the perspective they actually read first;
``"released_signed_duo"``, ``"aligned_signed_duo"``
    the other two signed Duos.

Whatever is planted, the regressor that *is* the planted quantity recovers ``effect`` (up to
the attenuation clipping causes) by construction.  Note that where the polarisation scores
split every question correctly, ``label_side`` equals ``aligned_signed_duo`` exactly, so a
simulation planted on ``label_side`` cannot show that the aligned variant is better than the
paper's: it only shows which quantity was planted.

The response file
-----------------
:func:`read_study_responses` reads a UTF-8 CSV with a header and these columns (any order;
extra columns are kept as text):

``participant_id`` (unique, non-empty), ``corpus`` (non-empty), ``question_id`` (non-empty),
``prior`` and ``posterior`` (integers −3…3; an empty cell is a *missing* value),
``shown`` (the document ids in rank order, separated by ``|``, no repeats),
``clicked`` (the ranks clicked, 1-based, in click order, separated by ``|``; empty = no click;
a rank may repeat when a result was clicked again).

A malformed row raises :class:`~rankbias.errors.InputError` naming ``file:line``, what was
found and what was expected.  A row with a missing prior or posterior is skipped and counted:
the counts and line numbers are in ``frame.attrs["skipped"]``.  :func:`write_study_responses`
writes the same layout.

Power
-----
:func:`power_curve` repeats the simulation many times per ``(N, click-through rate)`` and
reports the share of replicates in which ``β2`` differs from 0 at level ``α`` (two-sided,
classical OLS standard errors).  The replicates are simulated and fitted at once with NumPy
(batched normal equations, the ``clicked`` subset as 0/1 weights); :func:`fit_seme` on a single
replicate gives the same ``β2`` and p-value.
"""

from __future__ import annotations

import csv
import functools
import io
import math
import re
from collections.abc import Sequence
from dataclasses import dataclass
from importlib import resources
from pathlib import Path

import numpy as np
import pandas as pd

from rankbias.errors import InputError, located
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
    "DEFAULT_PRIOR_PROBABILITIES",
    "DUO_COLUMNS",
    "LIKERT_MAX",
    "PLANTED_QUANTITIES",
    "PositionBasedClickModel",
    "accuracy_by_question",
    "attach_duo",
    "fit_seme",
    "load_distractors",
    "load_perspectives",
    "polarisation_table",
    "power_curve",
    "read_study_responses",
    "simulate_study",
    "study_orderings",
    "write_study_responses",
]

#: The opinion scale is the integers −LIKERT_MAX … LIKERT_MAX.
LIKERT_MAX = 3
#: Prior opinions −3…3 drawn with these probabilities unless told otherwise (a unimodal spread
#: centred on "undecided"; an assumption, the study's priors are not public).
DEFAULT_PRIOR_PROBABILITIES = (0.06, 0.12, 0.17, 0.30, 0.17, 0.12, 0.06)
#: The signed-Duo columns :func:`attach_duo` adds (see the module docstring).
DUO_COLUMNS = ("signed_duo", "released_signed_duo", "aligned_signed_duo")
#: The quantities :func:`simulate_study` can plant the effect on (see the module docstring).
PLANTED_QUANTITIES = ("signed_duo", "label_side", "released_signed_duo", "aligned_signed_duo")
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


# --------------------------------------------------------------------------------------------
# the perspective testbed
# --------------------------------------------------------------------------------------------


def _resource(name: str) -> Path:
    return Path(str(resources.files("rankbias") / "resources" / name))


def _read_tsv(path: Path, columns: Sequence[str]) -> list[tuple[int, dict[str, str]]]:
    """Rows of a tab-separated file with exactly ``columns`` as its header, with line numbers."""
    with open(path, encoding="utf-8", newline="") as handle:
        lines = handle.read().split("\n")
    if not lines or lines[0].rstrip("\r").split("\t") != list(columns):
        found = lines[0].rstrip("\r").split("\t") if lines else []
        raise located(path, 1, f"expected the header {list(columns)}, found {found}")
    rows = []
    for number, line in enumerate(lines[1:], start=2):
        line = line.rstrip("\r")
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
    """The perspective testbed: one row per document.

    Columns ``question_id, question, doc_id, perspective (1 or 2), text``.  Default: the
    project's own ``resources/perspectives.tsv`` (data card ``PERSPECTIVES.md``).  Checks that
    document ids are unique, perspectives are 1 or 2, each question id has one question text,
    and each question has documents of both perspectives.
    """
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
    """Distractor documents for spurious-direction removal (App. A.5).

    Columns ``question_id, doc_id, style_of (1 or 2), text``: each question has documents that
    borrow the topic vocabulary of perspective 1's (``style_of = 1``) or perspective 2's
    arguments without taking a side.  Default: ``resources/perspective_distractors.tsv``.
    """
    path = Path(path) if path is not None else _resource("perspective_distractors.tsv")
    rows = _read_tsv(path, _DISTRACTOR_COLUMNS)
    for number, row in rows:
        if row["style_of"] not in ("1", "2"):
            raise located(path, number, f"style_of: expected 1 or 2, found {row['style_of']!r}")
    frame = pd.DataFrame([row for _, row in rows], columns=list(_DISTRACTOR_COLUMNS))
    frame["style_of"] = frame["style_of"].astype(int)
    return frame


# --------------------------------------------------------------------------------------------
# embeddings and polarisation scores
# --------------------------------------------------------------------------------------------


def polarisation_table(
    perspectives: pd.DataFrame,
    embeddings: np.ndarray,
    *,
    removal: str = "none",
    distractors: pd.DataFrame | None = None,
    distractor_embeddings: np.ndarray | None = None,
) -> pd.DataFrame:
    """Polarisation scores of every document, one PCA per question (ziems2024indexical §4.2).

    ``embeddings``: rows aligned with ``perspectives``.  ``removal``: ``"none"``;
    ``"pooled"`` — one spurious direction from all distractors (style 1 minus style 2, as in
    App. A.5); ``"per_question"`` — each question's own distractors.  Returns
    ``question_id, doc_id, perspective, score``.
    """
    if removal not in ("none", "pooled", "per_question"):
        raise ValueError(f"removal: expected 'none', 'pooled' or 'per_question', found {removal!r}")
    embeddings = np.asarray(embeddings, dtype=float)
    if embeddings.shape[0] != len(perspectives):
        raise ValueError(
            f"embeddings: expected one row per document ({len(perspectives)}), "
            f"found {embeddings.shape[0]}"
        )
    if removal != "none" and (distractors is None or distractor_embeddings is None):
        raise ValueError(f"removal={removal!r} needs distractors and distractor_embeddings")
    pooled = None
    if removal == "pooled":
        style = distractors["style_of"].to_numpy()
        pooled = spurious_direction(
            distractor_embeddings[style == 1], distractor_embeddings[style == 2]
        )
    scores = np.empty(len(perspectives))
    question_ids = perspectives["question_id"].to_numpy()
    for question in pd.unique(question_ids):
        rows = np.flatnonzero(question_ids == question)
        direction = pooled
        if removal == "per_question":
            mine = (distractors["question_id"] == question).to_numpy()
            style = distractors["style_of"].to_numpy()
            if not (mine & (style == 1)).any() or not (mine & (style == 2)).any():
                raise ValueError(f"question {question!r}: expected distractors of both styles")
            direction = spurious_direction(
                distractor_embeddings[mine & (style == 1)],
                distractor_embeddings[mine & (style == 2)],
            )
        scores[rows] = polarisation_scores(embeddings[rows], remove_direction=direction)
    table = perspectives[["question_id", "doc_id", "perspective"]].copy()
    table["score"] = scores
    return table.reset_index(drop=True)


def accuracy_by_question(table: pd.DataFrame) -> pd.DataFrame:
    """Polarisation accuracy (best sign assignment, ziems2024indexical Table 2) of each question."""
    values = [
        (
            question,
            polarisation_accuracy(group["score"].to_numpy(), group["perspective"].to_numpy()),
        )
        for question, group in table.groupby("question_id", sort=True)
    ]
    return pd.DataFrame(values, columns=["question_id", "accuracy"])


# --------------------------------------------------------------------------------------------
# orderings and signed Duo
# --------------------------------------------------------------------------------------------


def _signed_values(scores: np.ndarray, perspective_one: np.ndarray) -> dict[str, float]:
    value = duo(scores)
    released = orientation_signed_duo(scores, perspective_one)
    return {
        "duo": value,
        "signed_duo": signed_duo(scores),
        "released_signed_duo": released,
        "aligned_signed_duo": duo_direction(scores) * released,
    }


def study_orderings(table: pd.DataFrame) -> pd.DataFrame:
    """The two orderings per question the study showed (most biased, most balanced).

    One row per ``(question_id, condition)`` with ``shown`` (tuple of document ids in rank
    order), ``labels`` (their perspectives), ``duo`` and the three signed Duo columns.  The
    result is memoised on the table's content (repeated simulations reuse it).
    """
    key = (
        tuple(table["question_id"]),
        tuple(table["doc_id"]),
        tuple(int(y) for y in table["perspective"]),
        np.asarray(table["score"], dtype=float).tobytes(),
    )
    return _study_orderings_cached(key).copy()


@functools.lru_cache(maxsize=16)
def _study_orderings_cached(key) -> pd.DataFrame:
    questions, doc_ids, labels, score_bytes = key
    table = pd.DataFrame(
        {
            "question_id": questions,
            "doc_id": doc_ids,
            "perspective": labels,
            "score": np.frombuffer(score_bytes, dtype=float),
        }
    )
    rows = []
    for question, group in table.groupby("question_id", sort=True):
        scores = group["score"].to_numpy()
        doc_ids = group["doc_id"].to_numpy()
        labels = group["perspective"].to_numpy()
        reference = scores[labels == 1]
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
    """``responses`` with ``duo`` and the signed Duo columns of each participant's ordering.

    ``table``: polarisation scores (:func:`polarisation_table`).  The perspective-1 reference
    for the axis orientation is the question's perspective-1 documents in ``table``.  A shown
    document that is not in ``table``, or belongs to another question, raises
    :class:`InputError` naming the participant (no document is silently treated as neutral).
    """
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


# --------------------------------------------------------------------------------------------
# the click model
# --------------------------------------------------------------------------------------------


def _reciprocal_examination(n: int) -> tuple[float, ...]:
    return tuple(1.0 / np.arange(1, n + 1))


@dataclass(frozen=True)
class PositionBasedClickModel:
    """Position-based click model: rank ``r`` is clicked with probability ``α θ_r``,
    independently of the other ranks (Craswell et al. 2008's examination hypothesis).

    ``examination``: ``θ_1, θ_2, …`` (default ``1/r`` for ten ranks, the DCG-like decay);
    ``attractiveness``: ``α`` in ``[0, 1]``, the same for every document.
    """

    attractiveness: float
    examination: tuple[float, ...] = _reciprocal_examination(10)

    def __post_init__(self):
        theta = np.asarray(self.examination, dtype=float)
        if theta.ndim != 1 or theta.size == 0 or np.any((theta < 0) | (theta > 1)):
            raise ValueError(
                f"examination: expected probabilities in [0, 1], found {self.examination}"
            )
        if not 0.0 <= self.attractiveness <= 1.0:
            raise ValueError(
                f"attractiveness: expected a value in [0, 1], found {self.attractiveness}"
            )

    def click_probabilities(self, n_results: int) -> np.ndarray:
        if n_results > len(self.examination):
            raise ValueError(
                f"the click model covers {len(self.examination)} ranks, found a list of {n_results}"
            )
        return self.attractiveness * np.asarray(self.examination[:n_results], dtype=float)

    def click_through_rate(self, n_results: int) -> float:
        """Probability of at least one click on a list of ``n_results``."""
        return float(1.0 - np.prod(1.0 - self.click_probabilities(n_results)))

    @classmethod
    def for_click_through(
        cls, rate: float, n_results: int, examination: Sequence[float] | None = None
    ) -> PositionBasedClickModel:
        """The model whose share of participants with at least one click is ``rate``."""
        theta = tuple(examination) if examination is not None else _reciprocal_examination(10)
        ceiling = cls(1.0, theta).click_through_rate(n_results)
        if not 0.0 <= rate <= ceiling:
            raise ValueError(
                f"rate: expected a click-through rate in [0, {ceiling:.3f}] for these examination "
                f"probabilities, found {rate}"
            )
        low, high = 0.0, 1.0
        for _ in range(60):  # bisection; the rate grows monotonically with α
            middle = (low + high) / 2
            if cls(middle, theta).click_through_rate(n_results) < rate:
                low = middle
            else:
                high = middle
        return cls((low + high) / 2, theta)


# --------------------------------------------------------------------------------------------
# simulation (vectorised over replicates)
# --------------------------------------------------------------------------------------------


@dataclass
class _Design:
    orderings: pd.DataFrame  # study_orderings(), rows (question, condition) in order
    n_questions: int
    n_results: int
    duo: np.ndarray  # (Q, 2)
    regressor: np.ndarray  # (Q, 2) the signed Duo column regressed on
    planted: np.ndarray  # (Q, 2) the quantity the effect multiplies


def _design(table: pd.DataFrame, click_model, duo_column: str, planted: str) -> _Design:
    if duo_column not in DUO_COLUMNS:
        raise ValueError(f"duo_column: expected one of {DUO_COLUMNS}, found {duo_column!r}")
    if planted not in PLANTED_QUANTITIES:
        raise ValueError(f"planted: expected one of {PLANTED_QUANTITIES}, found {planted!r}")
    orderings = study_orderings(table)
    sizes = orderings["shown"].map(len)
    if sizes.nunique() != 1:
        raise ValueError(
            f"expected the same number of documents per question, found {sorted(set(sizes))}"
        )
    n_results = int(sizes.iloc[0])
    theta = np.asarray(click_model.examination[:n_results], dtype=float)
    signs = np.array([[1.0 if y == 1 else -1.0 for y in labels] for labels in orderings["labels"]])
    label_side = orderings["duo"].to_numpy() * np.sign(signs @ theta)
    quantity = label_side if planted == "label_side" else orderings[planted].to_numpy()
    shape = (orderings["question_id"].nunique(), 2)
    return _Design(
        orderings=orderings,
        n_questions=shape[0],
        n_results=n_results,
        duo=orderings["duo"].to_numpy().reshape(shape),
        regressor=orderings[duo_column].to_numpy().reshape(shape),
        planted=quantity.reshape(shape),
    )


def _draw(
    design: _Design,
    n_replicates: int,
    n_participants: int,
    effect: float,
    click_model: PositionBasedClickModel,
    rng: np.random.Generator,
    prior_probabilities,
    noise_sd: float,
    snippet_weight: float,
):
    """Arrays of shape ``(R, N)`` (clicks ``(R, N, k)``) for ``R`` replicated studies."""
    shape = (n_replicates, n_participants)
    probabilities = np.asarray(prior_probabilities, dtype=float)
    if probabilities.shape != (2 * LIKERT_MAX + 1,) or np.any(probabilities < 0):
        raise ValueError(
            f"prior_probabilities: expected 7 non-negative numbers, found {prior_probabilities}"
        )
    probabilities = probabilities / probabilities.sum()
    question = rng.integers(design.n_questions, size=shape)
    condition = rng.integers(2, size=shape)
    prior = rng.choice(np.arange(-LIKERT_MAX, LIKERT_MAX + 1), size=shape, p=probabilities)
    clicks = rng.random((*shape, design.n_results)) < click_model.click_probabilities(
        design.n_results
    )
    clicked = clicks.any(axis=2)
    gate = np.where(clicked, 1.0, snippet_weight)
    shift = effect * design.planted[question, condition] * gate
    latent = prior + shift + rng.normal(scale=noise_sd, size=shape)
    posterior = np.clip(np.rint(latent), -LIKERT_MAX, LIKERT_MAX).astype(int)
    regressor = design.regressor[question, condition]
    return question, condition, prior, posterior, clicks, clicked, regressor


def _default_click_model(click_model, click_through, n_results):
    if click_model is not None and click_through is not None:
        raise ValueError("give either click_model or click_through, not both")
    if click_model is None:
        rate = 0.5 if click_through is None else click_through
        return PositionBasedClickModel.for_click_through(rate, n_results)
    return click_model


def simulate_study(
    n_participants: int,
    effect: float,
    *,
    table: pd.DataFrame,
    click_model: PositionBasedClickModel | None = None,
    click_through: float | None = None,
    seed: int | np.random.Generator = 0,
    corpus: str = "simulated",
    prior_probabilities: Sequence[float] = DEFAULT_PRIOR_PROBABILITIES,
    noise_sd: float = 1.0,
    snippet_weight: float = 0.0,
    planted: str = "signed_duo",
) -> pd.DataFrame:
    """A simulated SEME study (see the module docstring for the model).

    ``table``: polarisation scores of the documents (:func:`polarisation_table`), which decide
    the orderings shown.  ``click_model`` or ``click_through`` (the share of participants who
    click at least once under the default ``1/r`` examination; default 0.5).  ``planted``: the
    quantity the effect is planted on, one of :data:`PLANTED_QUANTITIES` (default the paper's
    signed Duo).

    Returns one row per participant with the public study's fields (``participant_id`` =
    ``<corpus>-p<number>``, ``corpus,
    question_id, prior, posterior, shown, clicked``) plus ``condition``, ``n_clicked`` (distinct
    results clicked), ``duo`` and the signed Duo columns (:func:`attach_duo`).
    """
    if n_participants < 1:
        raise ValueError(f"n_participants: expected a positive integer, found {n_participants}")
    rng = np.random.default_rng(seed)
    n_results = table.groupby("question_id").size().max()
    model = _default_click_model(click_model, click_through, int(n_results))
    design = _design(table, model, "signed_duo", planted)
    question, condition, prior, posterior, clicks, _, _ = _draw(
        design, 1, n_participants, effect, model, rng, prior_probabilities, noise_sd, snippet_weight
    )
    rows = design.orderings.iloc[question[0] * 2 + condition[0]].reset_index(drop=True)
    ranks = [tuple((np.flatnonzero(row) + 1).tolist()) for row in clicks[0]]
    width = len(str(n_participants))
    frame = pd.DataFrame(
        {
            "participant_id": [f"{corpus}-p{i + 1:0{width}d}" for i in range(n_participants)],
            "corpus": corpus,
            "question_id": rows["question_id"],
            "condition": rows["condition"],
            "prior": prior[0],
            "posterior": posterior[0],
            "shown": rows["shown"],
            "clicked": ranks,
            "n_clicked": clicks[0].sum(axis=1),
            "duo": rows["duo"],
        }
    )
    for column in DUO_COLUMNS:
        frame[column] = rows[column]
    frame.attrs["click_model"] = model
    frame.attrs["planted"] = planted
    return frame


# --------------------------------------------------------------------------------------------
# the regression
# --------------------------------------------------------------------------------------------

_TABLE3_COLUMNS = ["corpus", "behaviour", "n", "beta2", "beta2_low", "beta2_high", "p_value", "r2"]


def _fit_one(frame: pd.DataFrame, duo_column: str, cov_type: str, alpha: float):
    import statsmodels.api as sm

    data = pd.DataFrame(
        {
            "posterior": frame["posterior"].astype(float),
            "prior": frame["prior"].astype(float),
            "signed_duo": frame[duo_column].astype(float),
        }
    )
    n = len(data)
    undefined = None
    if n < 4:
        undefined = f"{n} participants; at least 4 are needed"
    elif data["signed_duo"].nunique() < 2:
        undefined = "signed Duo takes a single value"
    elif data["prior"].nunique() < 2:
        undefined = "prior takes a single value"
    exog = sm.add_constant(data[["prior", "signed_duo"]], has_constant="add")
    if undefined is None and np.linalg.matrix_rank(exog.to_numpy()) < 3:
        undefined = "prior and signed Duo are collinear"
    if undefined is not None:
        return [n, *[math.nan] * 5], undefined
    result = sm.OLS(data["posterior"], exog).fit(cov_type=cov_type)
    low, high = result.conf_int(alpha=alpha).loc["signed_duo"]
    values = [
        n,
        float(result.params["signed_duo"]),
        float(low),
        float(high),
        float(result.pvalues["signed_duo"]),
        float(result.rsquared),
    ]
    return values, None


def fit_seme(
    responses: pd.DataFrame,
    *,
    duo_column: str = "signed_duo",
    robust: bool = False,
    alpha: float = 0.05,
    combined: bool = False,
) -> pd.DataFrame:
    """Table 3 of ziems2024indexical: OLS ``posterior ~ prior + signed Duo`` per corpus and
    behaviour.

    ``responses``: one row per participant with ``corpus, prior, posterior, n_clicked`` and
    the signed Duo column ``duo_column`` (:func:`attach_duo`; default ``signed_duo``, the
    paper's App. A.2 regressor).  Behaviour ``all`` uses every
    participant, ``clicked`` those with at least one click.  ``robust=True`` uses HC3
    heteroskedasticity-consistent standard errors (MacKinnon & White 1985), otherwise the
    classical ones.  ``combined=True`` adds rows for all corpora pooled (corpus ``combined``).

    Returns ``corpus, behaviour, n, beta2, beta2_low, beta2_high, p_value, r2`` (the
    ``1 − alpha`` interval of β2).  A subset too small or without variation in signed Duo gets
    NaN values, listed in ``attrs["undefined"]``.
    """
    missing = {"corpus", "prior", "posterior", "n_clicked", duo_column} - set(responses.columns)
    if missing:
        raise ValueError(f"responses: expected the columns {sorted(missing)}, not found")
    cov_type = "HC3" if robust else "nonrobust"
    groups = [(corpus, frame) for corpus, frame in responses.groupby("corpus", sort=True)]
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
    table["n"] = table["n"].astype(int)
    table.attrs.update(duo_column=duo_column, cov_type=cov_type, undefined=undefined)
    return table


# --------------------------------------------------------------------------------------------
# the response file
# --------------------------------------------------------------------------------------------


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
    """Read a study response file (layout in the module docstring).

    Returns ``participant_id, corpus, question_id, prior, posterior, shown (tuple),
    clicked (tuple of ranks), n_clicked`` plus any extra columns; ``n_clicked`` counts the
    *distinct* ranks clicked (a result clicked twice counts once).  Rows with a missing prior or
    posterior are skipped; ``attrs["skipped"]`` maps the reason to the list of line numbers.

    ``path`` is a path or a stream, opened by :mod:`rankbias.inputs` (gzip by content, UTF-8
    with the line and byte of a bad byte named, a byte-order mark dropped, ``\\n``,
    ``\\r\\n`` and ``\\r`` line ends).  The first line is always the header (column names are
    compared after stripping spaces); blank lines are skipped.
    """
    where = source_name(path)
    data = read_bytes(path, "response file")
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError:
        for _ in iter_lines(data, where):  # raises naming the line and the byte
            pass
        raise
    refuse_inner_bom(data, where)
    with io.StringIO(text, newline="") as handle:
        reader = csv.reader(handle)
        try:
            header = next(reader, None)
        except csv.Error as exc:
            raise located(where, 1, f"expected a CSV header, found {exc}") from None
        if header is None:
            raise located(
                where, 1, f"expected a header with {list(_RESPONSE_COLUMNS)}, found an empty file"
            )
        header = [name.strip() for name in header]
        absent = [name for name in _RESPONSE_COLUMNS if name not in header]
        if absent:
            raise located(
                where, 1, f"expected the columns {list(_RESPONSE_COLUMNS)}, missing {absent}"
            )
        duplicated = sorted({name for name in header if header.count(name) > 1})
        if duplicated:
            raise located(where, 1, f"expected each column once, found {duplicated} repeated")
        records, participants = [], {}
        skipped: dict[str, list[int]] = {"missing prior": [], "missing posterior": []}
        line = reader.line_num
        rows = iter(reader)
        while True:
            try:
                fields = next(rows)
            except StopIteration:
                break
            except csv.Error as exc:
                raise located(where, reader.line_num, f"expected CSV fields, found {exc}") from None
            start, line = line + 1, reader.line_num
            if not fields or (len(fields) == 1 and not fields[0].strip()):
                continue
            if len(fields) != len(header):
                raise located(where, start, f"expected {len(header)} fields, found {len(fields)}")
            row = dict(zip(header, fields, strict=True))
            for name in ("participant_id", "corpus", "question_id"):
                if not row[name].strip():
                    raise located(where, start, f"{name}: expected a non-empty value, found ''")
            participant = row["participant_id"].strip()
            if participant in participants:
                raise located(
                    where,
                    start,
                    f"participant_id {participant!r} already used on line "
                    f"{participants[participant]}",
                )
            participants[participant] = start
            prior = _likert(row["prior"], where, start, "prior")
            posterior = _likert(row["posterior"], where, start, "posterior")
            shown = tuple(doc.strip() for doc in row["shown"].split(_SEPARATOR))
            if not row["shown"].strip() or any(not doc for doc in shown):
                raise located(
                    where,
                    start,
                    f"shown: expected document ids separated by '|', found {row['shown']!r}",
                )
            repeated = sorted({doc for doc in shown if shown.count(doc) > 1})
            if repeated:
                raise located(
                    where,
                    start,
                    f"shown: expected distinct document ids, found {repeated} repeated",
                )
            clicked: tuple[int, ...] = ()
            if row["clicked"].strip():
                ranks = [rank.strip() for rank in row["clicked"].split(_SEPARATOR)]
                if all(rank.isascii() and rank.isdigit() for rank in ranks):
                    clicked = tuple(int(rank) for rank in ranks)
                else:
                    raise located(
                        where,
                        start,
                        "clicked: expected ranks (integers) separated by '|', "
                        f"found {row['clicked']!r}",
                    )
                outside = [rank for rank in clicked if not 1 <= rank <= len(shown)]
                if outside:
                    raise located(
                        where,
                        start,
                        f"clicked: expected ranks 1…{len(shown)} (the list shown), found {outside}",
                    )
            if prior is None:
                skipped["missing prior"].append(start)
                continue
            if posterior is None:
                skipped["missing posterior"].append(start)
                continue
            row.update(
                participant_id=participant,
                prior=prior,
                posterior=posterior,
                shown=shown,
                clicked=clicked,
                n_clicked=len(set(clicked)),
            )
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
    path = Path(path)
    columns = list(_RESPONSE_COLUMNS) + (["condition"] if "condition" in responses else [])
    out = responses[columns].copy()
    out["shown"] = out["shown"].map(_SEPARATOR.join)
    out["clicked"] = out["clicked"].map(lambda ranks: _SEPARATOR.join(str(r) for r in ranks))
    compression = _COMPRESSION_BY_SUFFIX.get(path.suffix.lower())  # as pandas infers it
    with atomic_path(path) as temporary:  # a unique temporary file, renamed into place
        out.to_csv(temporary, index=False, compression=compression)
    return path


# --------------------------------------------------------------------------------------------
# power
# --------------------------------------------------------------------------------------------


def _batched_p_values(prior, posterior, regressor, weights) -> np.ndarray:
    """Two-sided p-values of β2 (classical OLS) for each replicate; NaN where undefined."""
    from scipy import stats

    design = np.stack([np.ones_like(prior, dtype=float), prior.astype(float), regressor], axis=2)
    gram = np.einsum("rni,rn,rnj->rij", design, weights, design)
    moment = np.einsum("rni,rn,rn->ri", design, weights, posterior.astype(float))
    n = weights.sum(axis=1)
    determinant = np.linalg.det(gram)
    scale = np.einsum("rii->r", gram) ** 3
    usable = (n >= 4) & (np.abs(determinant) > 1e-10 * np.maximum(scale, 1e-300))
    gram[~usable] = np.eye(3)
    inverse = np.linalg.inv(gram)
    beta = np.einsum("rij,rj->ri", inverse, moment)
    residual = posterior - np.einsum("rni,ri->rn", design, beta)
    dof = np.maximum(n - 3, 1)
    sigma2 = (weights * residual**2).sum(axis=1) / dof
    se = np.sqrt(np.maximum(sigma2 * inverse[:, 2, 2], 0.0))
    with np.errstate(divide="ignore", invalid="ignore"):
        t = beta[:, 2] / se
    p = 2 * stats.t.sf(np.abs(t), dof)
    p = np.where(usable & (se > 0), p, np.nan)
    return p


def power_curve(
    table: pd.DataFrame,
    *,
    n_values: Sequence[int],
    click_through_rates: Sequence[float],
    effect: float,
    n_replicates: int = 500,
    seed: int = 0,
    alpha: float = 0.05,
    duo_column: str = "signed_duo",
    prior_probabilities: Sequence[float] = DEFAULT_PRIOR_PROBABILITIES,
    noise_sd: float = 1.0,
    snippet_weight: float = 0.0,
    planted: str = "signed_duo",
) -> pd.DataFrame:
    """Detection probability of β2 at level ``alpha`` by repeated simulation.

    For each ``N`` (participants in the study, clickers and non-clickers) and click-through
    rate, ``n_replicates`` studies are simulated (:func:`simulate_study`'s model, the effect
    planted on ``planted``) and each is regressed on ``duo_column``,
    on ``all`` participants and on those who ``clicked``.  A replicate whose subset is
    too small (fewer than 4) or has no variation in the regressor counts as *not detected*.

    Returns a tidy table ``n, click_through, behaviour, power, n_used, undefined,
    n_replicates`` (``n_used``: mean participants in the fit; ``undefined``: replicates that
    could not be fitted).
    """
    rng = np.random.default_rng(seed)
    n_results = int(table.groupby("question_id").size().max())
    rows = []
    for rate in click_through_rates:
        model = PositionBasedClickModel.for_click_through(rate, n_results)
        design = _design(table, model, duo_column, planted)
        for n in n_values:
            _, _, prior, posterior, _, clicked, regressor = _draw(
                design, n_replicates, int(n), effect, model, rng,
                prior_probabilities, noise_sd, snippet_weight,
            )  # fmt: skip
            for behaviour, weights in (
                ("all", np.ones_like(regressor)),
                ("clicked", clicked * 1.0),
            ):
                p = _batched_p_values(prior, posterior, regressor, weights)
                rows.append(
                    {
                        "n": int(n),
                        "click_through": float(rate),
                        "behaviour": behaviour,
                        "power": float(np.mean(np.nan_to_num(p, nan=1.0) < alpha)),
                        "n_used": float(weights.sum(axis=1).mean()),
                        "undefined": int(np.isnan(p).sum()),
                        "n_replicates": int(n_replicates),
                    }
                )
    return pd.DataFrame(rows)
