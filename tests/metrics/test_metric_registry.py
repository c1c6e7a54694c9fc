"""Tests of rankbias.metrics.registry: every metric of issue 3 is declared completely."""

from __future__ import annotations

import pytest

from rankbias.metrics.registry import METRICS, PARAMETERS, get_metric, metric_table

ISSUE_3_NAMES = (
    "rab_tc rab_tf rab_bool arab_tc arab_tf arab_bool fairr nfairr awrf ted texfair "
    "texfair_norbdf rbdf"
).split()


def test_every_issue_metric_is_registered_with_direction_and_parameters():
    for name in ISSUE_3_NAMES:
        spec = get_metric(name)
        assert spec.name == name and spec.definition and spec.paper and spec.direction
        assert all(p in PARAMETERS for p in spec.parameters)
    for kind in ("tc", "tf", "bool", "tf_paper"):  # group parts and the paper variant
        for name in (f"rab_{kind}_f", f"arab_{kind}_m", f"rab_{kind}", f"arab_{kind}"):
            assert name in METRICS


def test_directions():
    assert "fairer" in get_metric("nfairr").direction
    assert "fairer" in get_metric("texfair").direction
    assert "biased" in get_metric("ted").direction and "biased" in get_metric("awrf").direction
    assert "signed" in get_metric("arab_tf").direction


def test_parameters_declared_once_with_defaults():
    assert PARAMETERS["tau"].default == 1.0 and PARAMETERS["tau"].type == "float"
    assert PARAMETERS["strict"].default is False
    assert PARAMETERS["distance"].default == "l1"


def test_unknown_metric_and_table():
    with pytest.raises(ValueError, match="unknown metric 'texfiar'"):
        get_metric("texfiar")
    table = metric_table()
    assert list(table.columns) == [
        "metric", "family", "definition", "paper", "parameters", "direction",
    ]  # fmt: skip
    assert len(table) == len(METRICS) and table.metric.is_unique
