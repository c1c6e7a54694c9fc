"""Gender lean: which way the documents of the top k lean, one vote per document.

A document leans male when it has more than ``margin`` more male than female terms, female
when it has more than ``margin`` more female than male terms, and neither otherwise:

    lean(d) = sgn(M_m(d) − M_f(d)) if |M_m(d) − M_f(d)| > margin, else 0
    GL@k(q) = (1/k') Σ_{r≤k'} lean(d_r),  k' = min(k, list length)

Positive = male-leaning, negative = female-leaning, as RaB (Rekabsaz & Schedl 2020), of which
it is a per-document vote: RaB with the ``bool`` magnitude counts whether each group is
mentioned at all, GL which group a document mentions more.  An empty list gives NaN.
"""

import numpy as np

from rankbias.metrics.measures import HigherIs, Input, Measure, Parameter, register
from rankbias.metrics.ranked import at_cutoffs, cutoff_positions, valid_mask

MARGIN = Parameter(
    "margin",
    "float",
    0.0,
    "a document leans only if one group has more than this many terms more than the other",
    minimum=0.0,
)


def gender_lean(female, male, list_lengths, cutoffs, margin=0.0):
    """(n_queries, K) female and male magnitudes by rank -> (n_queries, n_cutoffs) GL@k."""
    difference = np.asarray(male, dtype=float) - np.asarray(female, dtype=float)
    votes = np.where(np.abs(difference) > margin, np.sign(difference), 0.0)
    votes = np.where(valid_mask(list_lengths, votes.shape[1]), votes, 0.0)
    depth = cutoff_positions(list_lengths, cutoffs)
    with np.errstate(invalid="ignore", divide="ignore"):
        return at_cutoffs(np.cumsum(votes, axis=1), depth) / depth


def _kernel(inputs, cutoffs, margin):
    counts, _ = inputs.ranked_group_counts()
    female = counts[:, :, inputs.group_column("f")]
    male = counts[:, :, inputs.group_column("m")]
    return gender_lean(female, male, inputs.list_lengths, cutoffs, margin)


GENDER_LEAN = register(
    Measure(
        name="gender_lean",
        family="gender_lean",
        display="GL",
        definition="GL@k = (1/k') Σ_{r≤k'} lean(d_r), lean = sgn(M_m − M_f) beyond a margin",
        reference="rekabsaz2020neural (a per-document vote of RaB)",
        higher_is=HigherIs.SIGNED,
        inputs=(Input.TERM_STATISTICS,),
        kernel=_kernel,
        parameters=(MARGIN,),
    )
)
