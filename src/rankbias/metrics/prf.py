r"""Pairwise ranking fairness: PRF (Beutel et al., KDD 2019), normed PRF, |ΔA-PRF| and the batch
disparity statistics PD and TS (Li et al., *Debiasing Neural Retrieval via In-batch Balancing
Regularization*, 2022: ``li2022debiasing`` Eq. 1–4, §3.2.2 and §4.3).  Choices: the book's
Conventions page, section "Scores in pairwise ranking fairness".

Each retrieved document ``p`` has a bias label ``d(p) = sign(M_m(p) − M_f(p))`` ∈ {−1, 0, +1}
(:func:`bias_labels`; Li et al. (2022) Eq. 1 writes ``Σ_{w∈G_m} log tf(w,p) − Σ_{w∈G_f} log
tf(w,p)``, undefined for absent words; the project uses the count difference), a click label
(clicked = relevant) and a ranking score ``R(p) ∈ [0, 1]``.  For group ``g ∈ {m (+1), f (−1)}``
and one query, with ``C_g`` its ``n_1^g`` clicked documents labelled ``g`` and ``N`` its ``n_0``
non-clicked documents, ``PRF_g = (1/(n_1^g n_0)) Σ_{j∈C_g} Σ_{k∈N} 1[R_j ≥ R_k]`` and ``nPRF_g``
is the square root of the same mean of ``R_j² 1[R_j ≥ R_k]``; both are NaN when ``n_1^g = 0``
or ``n_0 = 0``, and clicked documents with label 0 are in neither group.

- ``|ΔA-PRF| = | mean_{q ∈ T_m} PRF_m(q) − mean_{q ∈ T_f} PRF_f(q) |``, ``T_g`` = queries with a
  clicked document of group ``g`` (and at least one non-clicked document).
- ``PD = (1/(n_m n_f)) Σ_{c∈T_m} Σ_{d∈T_f} (nPRF_m(c) − nPRF_f(d))²`` (Eq. 4 prints ``nPRF_m``
  twice; the group-specific reading is meant), as ``mean(a²) − 2 mean(a) mean(b) + mean(b²)``.
- ``TS = (μ_m − μ_f)² / (var_m/n_m + var_f/n_f)`` (§3.2.2, the unnumbered equation after Eq. 4),
  the squared Welch t-statistic with the population variances ``var = (1/n) Σ (x − μ)²`` that Li
  et al. (2022) define.  The printed ``{(μ_m − μ_f)² / sqrt(var_m/n_m + var_f/n_f)}²`` squares
  the mean difference twice (``form="printed"``, for comparison only).

Scores are mapped into ``[0, 1]`` (nPRF depends on the values, PRF only on the order):
``"min_max"`` (default) per query, ``R = 1`` for all of a query whose scores are equal;
``"sigmoid"`` for all queries (logits), which in float64 saturates to exactly 1.0 above ``s ≈
37`` where ties count as wins, so PRF is then no longer order-only (BM25 scores on MS MARCO can
exceed 37: use ``min_max`` for unbounded scores); ``"none"``: scores already in ``[0, 1]``.
"""

from __future__ import annotations

import functools
from collections.abc import Sequence
from typing import Literal

import numpy as np
import pandas as pd

from rankbias.errors import expect_choice, expect_count, expect_type
from rankbias.metrics.validation import as_array

__all__ = [
    "GROUP_LABELS", "bias_labels", "delta_a_prf", "normalise_scores", "pairwise_difference",
    "pairwise_ranking_fairness", "t_statistic_squared",
]  # fmt: skip

Normalisation = Literal["min_max", "sigmoid", "none"]

#: Group name → bias label ``d(p)``.
GROUP_LABELS = {"m": 1, "f": -1}


def bias_labels(male_magnitude, female_magnitude) -> np.ndarray:
    """``d(p) = sign(M_m(p) − M_f(p))`` ∈ {−1, 0, +1} per document (int8); magnitudes must be
    finite (a NaN would give the label 0, a neutral document)."""
    male = as_array(male_magnitude, "male_magnitude")
    female = as_array(female_magnitude, "female_magnitude")
    if male.shape != female.shape:
        raise ValueError(
            f"male_magnitude has shape {male.shape}, female_magnitude {female.shape}; "
            "expected one value per document in each"
        )
    for name, values in (("male_magnitude", male), ("female_magnitude", female)):
        if not np.isfinite(values).all():
            bad = np.flatnonzero(~np.isfinite(values.ravel()))
            raise ValueError(
                f"{name}: expected finite numbers, found {values.ravel()[bad[0]]} at position "
                f"{int(bad[0])} ({len(bad)} such value(s))"
            )
    return np.sign(male - female).astype(np.int8)


def _query_codes(qid) -> tuple[np.ndarray, np.ndarray]:
    try:
        uniques, codes = np.unique(np.asarray(qid), return_inverse=True)
    except TypeError:
        kinds = sorted({type(q).__name__ for q in qid})
        raise TypeError(f"qid: expected query ids of one sortable type, found {kinds}") from None
    return uniques, codes.ravel()


def normalise_scores(qid, score, method: Normalisation = "min_max") -> np.ndarray:
    """Map raw ranking scores into ``[0, 1]`` (see the module docstring for the methods)."""
    values = as_array(score, "score")
    if values.ndim != 1 or np.shape(qid) != values.shape:
        raise ValueError(
            f"qid and score: expected two 1-D sequences of the same length, found shapes "
            f"{np.shape(qid)} and {values.shape}"
        )
    if not np.all(np.isfinite(values)):
        raise ValueError("score: expected finite numbers, found NaN or inf")
    expect_choice(method, "normalisation", ("min_max", "sigmoid", "none"))
    if method == "sigmoid":
        return 0.5 * (1.0 + np.tanh(0.5 * values))
    if method == "none":
        outside = np.flatnonzero((values < 0) | (values > 1))
        if outside.size:
            raise ValueError(
                f"score: normalisation='none' expects scores in [0, 1], found "
                f"{values[outside[:5]].tolist()} at rows {outside[:5].tolist()}"
            )
        return values
    uniques, codes = _query_codes(qid)
    low, high = np.full(uniques.size, np.inf), np.full(uniques.size, -np.inf)
    np.minimum.at(low, codes, values)
    np.maximum.at(high, codes, values)
    spread = (high - low)[codes]
    with np.errstate(invalid="ignore"):  # one score, or all alike: 0/0, replaced by 1
        scaled = (values - low[codes]) / spread
    return np.where(spread > 0, scaled, 1.0)


def pairwise_ranking_fairness(
    qid: Sequence,
    score: Sequence[float],
    clicked: Sequence[bool],
    label: Sequence[int],
    *,
    normalisation: Normalisation = "min_max",
) -> pd.DataFrame:
    """PRF_g and nPRF_g per query and group from tidy inputs, one entry per (query, retrieved
    document): ``qid``, raw ``score``, ``clicked`` and bias ``label`` (−1/0/+1).  One row per
    (qid, group ∈ {"m", "f"}) with ``n_clicked`` (``n_1^g``), ``n_non_clicked`` (``n_0``),
    ``prf`` and ``nprf`` (NaN where undefined)."""
    qids = np.asarray(qid)
    values = as_array(score, "score")
    clicks = np.asarray(clicked)
    labels = np.asarray(label)
    n_rows = qids.shape[0] if qids.ndim else 0
    for name, array in (("score", values), ("clicked", clicks), ("label", labels)):
        if array.shape != (n_rows,):
            raise ValueError(
                f"{name}: expected one value per row of qid ({n_rows}), found shape {array.shape}"
            )
    if clicks.dtype != bool:
        if not np.all(np.isin(clicks, (0, 1))):
            raise ValueError("clicked: expected booleans (or 0/1)")
        clicks = clicks.astype(bool)
    if not np.all(np.isin(labels, (-1, 0, 1))):
        found = sorted(set(np.unique(labels).tolist()) - {-1, 0, 1})
        raise ValueError(f"label: expected bias labels in {{-1, 0, 1}}, found {found[:5]}")
    relevance = normalise_scores(qids, values, normalisation)
    uniques, codes = _query_codes(qids)
    n_queries = uniques.size
    # exact integer keys ordering by (query, normalised score)
    _, score_rank = np.unique(relevance, return_inverse=True)
    width = score_rank.max(initial=0) + 1  # ranks 0..max: the queries' key ranges are disjoint
    keys = codes * width + score_rank.ravel()
    non_clicked_keys = np.sort(keys[~clicks])
    n_non_clicked = np.bincount(codes[~clicks], minlength=n_queries)
    rows = []
    for group, group_label in GROUP_LABELS.items():
        chosen = clicks & (labels == group_label)
        query_start = codes[chosen] * width
        beaten = np.searchsorted(non_clicked_keys, keys[chosen], side="right") - np.searchsorted(
            non_clicked_keys, query_start
        )
        n_clicked = np.bincount(codes[chosen], minlength=n_queries)
        wins = np.bincount(codes[chosen], weights=beaten, minlength=n_queries)
        weighted = np.bincount(
            codes[chosen], weights=beaten * relevance[chosen] ** 2, minlength=n_queries
        )
        pairs = n_clicked * n_non_clicked
        with np.errstate(invalid="ignore"):  # no pairs: no wins either, 0/0 is NaN
            prf, nprf = wins / pairs, np.sqrt(weighted / pairs)
        rows.append(
            pd.DataFrame(
                {
                    "qid": uniques,
                    "group": group,
                    "n_clicked": n_clicked,
                    "n_non_clicked": n_non_clicked,
                    "prf": prf,
                    "nprf": nprf,
                }
            )
        )
    return pd.concat(rows).sort_values(["qid", "group"], ignore_index=True)


def _group_values(table: pd.DataFrame, column: str, group: str) -> np.ndarray:
    expect_type(table, "table", pd.DataFrame, "the DataFrame of pairwise_ranking_fairness()")
    missing = {"group", column} - set(table.columns)
    if missing:
        raise ValueError(
            f"table: expected the columns of pairwise_ranking_fairness(), missing {sorted(missing)}"
        )
    values = table.loc[table["group"] == group, column].to_numpy(dtype=float)
    return values[np.isfinite(values)]


def delta_a_prf(table: pd.DataFrame) -> float:
    """``|ΔA-PRF|`` from a :func:`pairwise_ranking_fairness` table (its undefined rows are the
    queries outside ``T_g``); NaN if either group has no defined query."""
    male = _group_values(table, "prf", "m")
    female = _group_values(table, "prf", "f")
    if male.size == 0 or female.size == 0:
        return np.nan
    return float(abs(male.mean() - female.mean()))


def _as_values(values, name: str) -> np.ndarray:
    array = as_array(values, name).ravel()
    if array.size == 0:
        raise ValueError(f"{name}: expected at least one nPRF value, found none")
    if not np.all(np.isfinite(array)):
        raise ValueError(f"{name}: expected finite values (drop undefined queries), found NaN/inf")
    return array


def pairwise_difference(nprf_m: Sequence[float], nprf_f: Sequence[float]) -> float:
    """PD: mean over all (male query, female query) pairs of ``(nPRF_m − nPRF_f)²``."""
    male, female = _as_values(nprf_m, "nprf_m"), _as_values(nprf_f, "nprf_f")
    value = np.mean(male**2) - 2 * male.mean() * female.mean() + np.mean(female**2)
    return float(max(value, 0.0))


def t_statistic_squared(
    nprf_m: Sequence[float],
    nprf_f: Sequence[float],
    *,
    ddof: int = 0,
    form: Literal["standard", "printed"] = "standard",
) -> float:
    """TS: ``(μ_m − μ_f)² / (var_m/n_m + var_f/n_f)`` (squared Welch t), with population
    variances (``ddof=0``, Li et al. (2022)) or sample variances (``ddof=1``); ``form="printed"``:
    Li et al. (2022)'s printed ``((μ_m − μ_f)² / sqrt(var_m/n_m + var_f/n_f))²``.  NaN when both
    variances are 0 (``inf`` if the means differ)."""
    male, female = _as_values(nprf_m, "nprf_m"), _as_values(nprf_f, "nprf_f")
    if min(male.size, female.size) <= expect_count(ddof, "ddof", 0):
        raise ValueError(
            f"ddof={ddof} needs more than {ddof} values per group, found {male.size} and "
            f"{female.size}"
        )
    expect_choice(form, "form", ("standard", "printed"))
    difference = male.mean() - female.mean()
    standard_error_sq = male.var(ddof=ddof) / male.size + female.var(ddof=ddof) / female.size
    with np.errstate(invalid="ignore", divide="ignore"):
        if form == "printed":
            return float((difference**2 / np.sqrt(standard_error_sq)) ** 2)
        return float(difference**2 / standard_error_sq)


# ---- measure declarations (rankbias.metrics.measures) -------------------------------------------

from rankbias.metrics.measures import HigherIs, Input, Measure, Parameter, register  # noqa: E402
from rankbias.metrics.rab import FEMALE, MALE  # noqa: E402

_INPUTS = (Input.TERM_STATISTICS, Input.RELEVANCE)
SCORE_NORMALISATION = Parameter(
    "score_normalisation",
    "str",
    "min_max",
    "map of retrieval scores into [0, 1]: per-query min–max, sigmoid, or none (scores already "
    "in [0, 1])",
    allowed=("min_max", "sigmoid", "none"),
)
DDOF = Parameter(
    "ddof",
    "int",
    0,
    "0 = population variances (Li et al. 2022), 1 = sample variances",
    allowed=(0, 1),
)
_OPTIONS = (SCORE_NORMALISATION, FEMALE, MALE)


def _per_query_table(inputs, cutoffs, score_normalisation, female, male):
    """``{cutoff: pairwise_ranking_fairness table}`` over the top ``k'`` of every query."""
    key = ("prf", score_normalisation, female, male, tuple(cutoffs))
    if key in inputs.cache:
        return inputs.cache[key]
    counts, _ = inputs.ranked_group_counts()
    relevant, scores, lengths = inputs.relevance()
    labels = bias_labels(
        counts[:, :, inputs.group_column(male)], counts[:, :, inputs.group_column(female)]
    )
    rows = np.broadcast_to(np.arange(len(lengths))[:, None], relevant.shape)
    tables = {}
    for k in cutoffs:
        keep = np.arange(relevant.shape[1])[None, :] < np.minimum(lengths, int(k))[:, None]
        tables[k] = pairwise_ranking_fairness(
            rows[keep],
            scores[keep],
            relevant[keep],
            labels[keep],
            normalisation=score_normalisation,
        )
    inputs.cache[key] = tables
    return tables


def _query_kernel(inputs, cutoffs, score_normalisation, female, male, *, column, group):
    tables = _per_query_table(inputs, cutoffs, score_normalisation, female, male)
    out = np.full((inputs.n_queries, len(cutoffs)), np.nan)
    for j, k in enumerate(cutoffs):
        table = tables[k][tables[k]["group"] == group]
        out[table["qid"].to_numpy(dtype=np.int64), j] = table[column].to_numpy()
    return out


def _system_kernel(inputs, cutoffs, score_normalisation, female, male, ddof=None, *, statistic):
    tables = _per_query_table(inputs, cutoffs, score_normalisation, female, male)
    out = np.full(len(cutoffs), np.nan)
    for j, k in enumerate(cutoffs):
        table = tables[k]
        if statistic == "delta_a_prf":
            out[j] = delta_a_prf(table)
            continue
        male_values = _group_values(table, "nprf", "m")
        female_values = _group_values(table, "nprf", "f")
        # undefined (NaN, counted by the scorer): a group without queries; for TS also a group
        # of one query, whose variance is 0 whatever its value (or of no more than ddof)
        if min(male_values.size, female_values.size) <= (max(ddof, 1) if statistic == "ts" else 0):
            continue
        if statistic == "pd":
            out[j] = pairwise_difference(male_values, female_values)
        else:
            out[j] = t_statistic_squared(male_values, female_values, ddof=ddof)
    return out


for _column, _title in (("prf", "PRF"), ("nprf", "nPRF")):
    for _group, _word in (("m", "male"), ("f", "female")):
        register(
            Measure(
                f"{_column}_{_group}",
                "prf",
                f"{_title}_{_group}@k over the top k: clicked (relevant) documents labelled "
                f"{_word} ranked at or above non-clicked ones"
                + (", weighted by R_j² (root of the mean)" if _column == "nprf" else ""),
                "beutel2019pairwise; li2022debiasing Eq. 2" + ("–3" if _column == "nprf" else ""),
                HigherIs.NEITHER,
                _INPUTS,
                functools.partial(_query_kernel, column=_column, group=_group),
                _OPTIONS,
                display=f"{_title}_{_group}",
            )
        )
for _name, _display, _definition, _reference, _extra in (
    (
        "delta_a_prf",
        "|ΔA-PRF|",
        "|ΔA-PRF|@k = |mean_{T_m} PRF_m − mean_{T_f} PRF_f| over the queries of the run",
        "li2022debiasing §4.3",
        (),
    ),
    (
        "pd",
        "PD",
        "PD@k = mean over (male query, female query) pairs of (nPRF_m − nPRF_f)²",
        "li2022debiasing Eq. 4",
        (),
    ),
    (
        "ts",
        "TS",
        "TS@k = (μ_m − μ_f)² / (var_m/n_m + var_f/n_f) of the per-query nPRF values "
        "(NaN when a group has fewer than two queries)",
        "li2022debiasing §3.2.2 (standard form of the printed statistic)",
        (DDOF,),
    ),
):
    register(
        Measure(
            _name,
            "prf",
            _definition,
            _reference,
            HigherIs.MORE_BIASED,
            _INPUTS,
            functools.partial(_system_kernel, statistic=_name),
            _OPTIONS + _extra,
            level="system",
            display=_display,
        )
    )
