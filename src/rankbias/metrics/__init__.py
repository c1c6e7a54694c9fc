"""The bias measures, one module per family: its definition (paper and equation, the book's
Conventions it follows), array kernels for many queries at once, and its measure declarations
(:mod:`rankbias.metrics.measures`); :func:`rankbias.scoring.score_runs` is the entry point.

Importing the package imports no family: each is loaded when one of its names is first used
(``from rankbias.metrics import nfairr``).  ``rankbias.metrics.duo`` and
``rankbias.metrics.rbo`` are the *modules*; their functions are ``duo.duo`` and ``rbo.rbo``.
"""

from __future__ import annotations

import importlib

_EXPORTS = {
    "rankbias.metrics.duo": (
        "cut_points", "dcv", "dcv_bounds", "duo_direction", "duo_sampled",
        "extreme_orderings", "orientation_signed_duo", "polarisation_accuracy",
        "polarisation_scores", "signed_duo", "spurious_direction",
    ),
    "rankbias.metrics.fairr": (
        "fairr_at_cutoffs", "ideal_fairr", "ideal_fairr_collection", "neutrality", "nfairr",
    ),
    "rankbias.metrics.prf": (
        "bias_labels", "delta_a_prf", "normalise_scores", "pairwise_difference",
        "pairwise_ranking_fairness", "t_statistic_squared",
    ),
    "rankbias.metrics.rab": ("MAGNITUDES", "document_magnitudes", "rank_bias"),
    "rankbias.metrics.rank_fairness": ("rkl", "rkl_raw", "rnd", "rnd_raw"),
    "rankbias.metrics.ranked": ("position_discount",),
    "rankbias.metrics.texfair": (
        "DISTANCES", "awrf", "max_ted", "term_exposure_family",
    ),
}  # fmt: skip
_MODULE_OF = {name: module for module, names in _EXPORTS.items() for name in names}

__all__ = sorted(_MODULE_OF)


def __getattr__(name: str):
    module = _MODULE_OF.get(name)
    if module is None:
        raise AttributeError(f"module 'rankbias.metrics' has no attribute {name!r}")
    value = getattr(importlib.import_module(module), name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(_MODULE_OF))
