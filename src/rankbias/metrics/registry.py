"""The registry of term-based bias metrics: name, definition, paper, parameters, direction.

Every metric :func:`rankbias.scoring.score_runs` can compute is listed here once, with its
parameters declared once in :data:`PARAMETERS` (name, type, default, meaning) and referred to
by name.  The registry is data: the kernels live in the family modules
(:mod:`~rankbias.metrics.rab`, :mod:`~rankbias.metrics.fairr`,
:mod:`~rankbias.metrics.texfair`).  ``metric_table()`` renders it as a table for the book.
"""

from __future__ import annotations

from dataclasses import dataclass

import pandas as pd

__all__ = ["Parameter", "MetricSpec", "PARAMETERS", "METRICS", "get_metric", "metric_table"]

HIGHER_FAIRER = "higher = fairer"
HIGHER_BIASED = "higher = more biased"
SIGNED = "signed: positive = male-leaning, negative = female-leaning; |value| = bias"
GROUP_PART = "higher = more of the group's terms (one side of RaB/ARaB, not a fairness score)"
COVERAGE = "higher = more of the top k carries group terms (not a fairness score)"
NORMALISER = "the best FaiRR reachable from the background set (NFaiRR's normaliser)"


@dataclass(frozen=True)
class Parameter:
    """A metric parameter: declared once, shared by every metric that uses it."""

    name: str
    type: str
    default: object
    meaning: str


@dataclass(frozen=True)
class MetricSpec:
    """One metric: its name (as in the tidy output), family, definition and behaviour."""

    name: str
    family: str
    definition: str
    paper: str
    parameters: tuple[str, ...]
    direction: str


PARAMETERS: dict[str, Parameter] = {
    p.name: p
    for p in (
        Parameter(
            "cutoff", "int", 10, "rank cutoff k (t for RaB/ARaB); a shorter list is used as is"
        ),
        Parameter("tau", "float", 1.0, "neutrality threshold: ω = 1 when Σ_g M_g(d) ≤ τ"),
        Parameter("strict", "bool", False, "use Σ_g M_g(d) < τ (seed 002) instead of ≤ τ"),
        Parameter(
            "background",
            "run | 'collection'",
            "collection",
            "the set S_q whose most neutral documents give IFaiRR: another run's documents "
            "for q, or the whole collection",
        ),
        Parameter("targets", "tuple[float]", None, "target share per group (uniform if None)"),
        Parameter(
            "distance", "str", "l1", "AWRF distance to the target: l1, l2, jsd (bits), kl (nats)"
        ),
        Parameter("female", "str", "f", "label of the female group (RaB/ARaB)"),
        Parameter("male", "str", "m", "label of the male group (RaB/ARaB)"),
    )
}

_PAPER_RAB = "Rekabsaz & Schedl 2020; seed 002 Eq. 1–3"
_PAPER_FAIRR = "Rekabsaz et al. 2021; seed 003 Eq. 1–3"
_PAPER_TEXFAIR = "Abolghasemi et al. 2024; seed 003 Eq. 7–13"
_MAGNITUDE_TEXT = {
    "tc": "M_g(d) (term count)",
    "tf": "ln(1 + M_g(d)) (released code)",
    "bool": "1[M_g(d) > 0]",
    "tf_paper": "Σ_{t∈V_g, tf>0} ln tf(t,d) (seed 002 Eq. 2 as printed)",
}
_RAB_PARAMS = ("cutoff", "female", "male")


def _rab_specs() -> list[MetricSpec]:
    specs = []
    for kind, mag in _MAGNITUDE_TEXT.items():
        specs += [
            MetricSpec(
                f"rab_{kind}",
                "rab",
                f"RaB@t = (1/t') Σ_{{i≤t'}} (mag_m(d_i) − mag_f(d_i)), mag = {mag}",
                _PAPER_RAB,
                _RAB_PARAMS,
                SIGNED,
            ),
            MetricSpec(
                f"arab_{kind}",
                "rab",
                f"ARaB@t = (1/t') Σ_{{x≤t'}} RaB@x, mag = {mag}",
                _PAPER_RAB,
                _RAB_PARAMS,
                SIGNED,
            ),
        ]
        for group in ("f", "m"):
            specs += [
                MetricSpec(
                    f"rab_{kind}_{group}",
                    "rab",
                    f"qRaB_{group}@t = (1/t') Σ_{{i≤t'}} mag_{group}(d_i), mag = {mag}",
                    _PAPER_RAB,
                    _RAB_PARAMS,
                    GROUP_PART,
                ),
                MetricSpec(
                    f"arab_{kind}_{group}",
                    "rab",
                    f"qARaB_{group}@t = (1/t') Σ_{{x≤t'}} qRaB_{group}@x, mag = {mag}",
                    _PAPER_RAB,
                    _RAB_PARAMS,
                    GROUP_PART,
                ),
            ]
    return specs


_FAIRR_PARAMS = ("cutoff", "tau", "strict", "targets")
_TEXFAIR_PARAMS = ("cutoff", "targets")

METRICS: dict[str, MetricSpec] = {
    s.name: s
    for s in _rab_specs()
    + [
        MetricSpec(
            "fairr",
            "fairr",
            "FaiRR@k = Σ_{r≤k} ω(d_r) / log2(r+1); ω(d) = 1 if Σ_g M_g ≤ τ else "
            "1 − Σ_g |M_g/Σ_x M_x − J_g|",
            _PAPER_FAIRR,
            _FAIRR_PARAMS,
            HIGHER_FAIRER,
        ),
        MetricSpec(
            "ifairr",
            "fairr",
            "IFaiRR@k(q,S) = FaiRR@k of the k most neutral documents of the background S_q",
            _PAPER_FAIRR,
            _FAIRR_PARAMS + ("background",),
            NORMALISER,
        ),
        MetricSpec(
            "nfairr",
            "fairr",
            "NFaiRR@k = FaiRR@k / IFaiRR@k(q,S); NaN when IFaiRR = 0",
            _PAPER_FAIRR,
            _FAIRR_PARAMS + ("background",),
            HIGHER_FAIRER,
        ),
        MetricSpec(
            "awrf",
            "texfair",
            "AWRF@k = Δ(E/‖E‖₁, Ê), E = Σ_{r≤k} v_r a(d_r), a_g(d) = M_g/Σ_x M_x (1/|G| if none)",
            "Sapiezynski et al. 2019; seed 003 Eq. 4–6",
            ("cutoff", "targets", "distance"),
            HIGHER_BIASED,
        ),
        MetricSpec(
            "rbdf",
            "texfair",
            "RBDF@k = Σ_{r≤k} 1[d_r has a group term] v_r / Σ_{r≤k} v_r",
            "Abolghasemi et al. 2024; seed 003 Eq. 11",
            ("cutoff",),
            COVERAGE,
        ),
        MetricSpec(
            "ted",
            "texfair",
            "TED@k = Σ_g |p(g|q,k) − p̂_g| · RBDF@k, p(g|q,k) from term exposure",
            "Abolghasemi et al. 2024; seed 003 Eq. 9–12",
            _TEXFAIR_PARAMS,
            HIGHER_BIASED,
        ),
        MetricSpec(
            "texfair",
            "texfair",
            "TExFAIR@k = max(TED) − TED@k, max(TED) = 2(1 − min_g p̂_g)",
            _PAPER_TEXFAIR,
            _TEXFAIR_PARAMS,
            HIGHER_FAIRER,
        ),
        MetricSpec(
            "texfair_norbdf",
            "texfair",
            "max(TED) − Σ_g |p(g|q,k) − p̂_g| (no RBDF); NaN when the top k has no group term",
            "Abolghasemi et al. 2024; seed 003 Fig. 2 ('no proportionality')",
            _TEXFAIR_PARAMS,
            HIGHER_FAIRER,
        ),
    ]
}


def get_metric(name: str) -> MetricSpec:
    """The spec of a metric; an unknown name is a ValueError listing the known ones."""
    try:
        return METRICS[name]
    except KeyError:
        raise ValueError(f"unknown metric {name!r}; known: {', '.join(METRICS)}") from None


def metric_table() -> pd.DataFrame:
    """The registry as a table: name, family, definition, paper, parameters, direction."""
    rows = []
    for spec in METRICS.values():
        params = "; ".join(
            f"{p} ({PARAMETERS[p].type}, default {PARAMETERS[p].default!r})"
            for p in spec.parameters
        )
        rows.append(
            {
                "metric": spec.name,
                "family": spec.family,
                "definition": spec.definition,
                "paper": spec.paper,
                "parameters": params,
                "direction": spec.direction,
            }
        )
    return pd.DataFrame(rows)
