"""The bias measures, one module per family.

Each family module starts with its definition (paper, equations, the ``METRICS.md`` conventions
it follows) and exposes array-in/array-out kernels for many queries at once;
:mod:`rankbias.metrics.registry` lists every metric with its parameters and direction, and
:func:`rankbias.scoring.score_runs` is the high-level entry point.  Add a family by adding its
import lines below; the file-wide ``noqa`` says these imports are the package's public names.
"""
# ruff: noqa: F401
# Note: after these imports ``rankbias.metrics.duo`` and ``rankbias.metrics.rbo`` name the
# functions; reach the modules' other names with ``from rankbias.metrics.duo import …``.

from rankbias.metrics.duo import (
    cut_points,
    dcv,
    dcv_bounds,
    duo,
    duo_direction,
    duo_sampled,
    embed_texts,
    extreme_orderings,
    orientation_signed_duo,
    polarisation_accuracy,
    polarisation_scores,
    signed_duo,
    spurious_direction,
)
from rankbias.metrics.fairr import (
    fairr_at_cutoffs,
    ideal_fairr,
    ideal_fairr_collection,
    neutrality,
    nfairr,
)
from rankbias.metrics.prf import (
    bias_labels,
    delta_a_prf,
    normalise_scores,
    pairwise_difference,
    pairwise_ranking_fairness,
    t_statistic_squared,
)
from rankbias.metrics.rab import MAGNITUDES, document_magnitudes, rank_bias
from rankbias.metrics.rank_fairness import rkl, rkl_max, rkl_raw, rnd, rnd_max, rnd_raw
from rankbias.metrics.ranked import position_discount
from rankbias.metrics.rbo import rbo
from rankbias.metrics.registry import METRICS, PARAMETERS, get_metric, metric_table
from rankbias.metrics.texfair import DISTANCES, awrf, max_ted, term_exposure, term_exposure_family
