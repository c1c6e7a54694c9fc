"""Old names of the metric registry, kept as thin aliases of :mod:`rankbias.metrics.measures`.

``LEGACY_LABELS`` maps each historical label of the term families (``rab_tc``, ``arab_tf_f``,
``nfairr``, ``texfair``, …) to a :class:`MetricSpec` view of the registered measure, whose
``direction`` is the measure's :class:`~rankbias.metrics.measures.HigherIs`; the constants
``HIGHER_FAIRER``, ``HIGHER_BIASED`` and ``SIGNED`` are members of that enumeration.  New code
uses :mod:`rankbias.metrics.measures` (``get_measure``, ``parse_measure``, ``measure_table``).
"""

from __future__ import annotations

from dataclasses import dataclass

import pandas as pd

from rankbias.metrics.measures import (
    ALIASES,
    PARAMETERS,
    HigherIs,
    Measure,
    Parameter,
    measure_table,
    measures,
    parse_measure,
)

__all__ = ["Parameter", "MetricSpec", "PARAMETERS", "LEGACY_LABELS", "get_metric", "metric_table"]

HIGHER_FAIRER = HigherIs.FAIRER
HIGHER_BIASED = HigherIs.MORE_BIASED
SIGNED = HigherIs.SIGNED


@dataclass(frozen=True)
class MetricSpec:
    """A term-family measure under its historical label (``arab_tf``)."""

    name: str
    measure: Measure

    @property
    def family(self) -> str:
        return self.measure.family

    @property
    def definition(self) -> str:
        return self.measure.definition

    @property
    def paper(self) -> str:
        return self.measure.reference

    @property
    def parameters(self) -> tuple[str, ...]:
        return self.measure.parameters

    @property
    def direction(self) -> HigherIs:
        return self.measure.higher_is


def _term_family_labels() -> list[str]:
    labels = []
    for measure in measures():
        if measure.family not in ("rab", "fairr", "texfair"):
            continue
        if measure.family == "rab":
            labels += [a for a, (target, _) in ALIASES.items() if target == measure.name]
        else:
            labels.append(measure.name)
    return labels


LEGACY_LABELS: dict[str, MetricSpec] = {
    label: MetricSpec(label, parse_measure(label).measure) for label in _term_family_labels()
}


def get_metric(name: str) -> MetricSpec:
    """The spec of a historical label; an unknown name is a ValueError listing the known ones."""
    try:
        return LEGACY_LABELS[name]
    except KeyError:
        raise ValueError(f"unknown metric {name!r}; known: {', '.join(LEGACY_LABELS)}") from None


def metric_table() -> pd.DataFrame:
    """Every registered measure (:func:`rankbias.metrics.measures.measure_table`)."""
    return measure_table()
