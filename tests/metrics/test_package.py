"""rankbias.metrics loads each family on first use of one of its names (the package docstring)."""

from __future__ import annotations

import subprocess
import sys

import pytest


def test_a_name_loads_its_family_only_and_is_listed_before_use():
    code = (
        "import sys, rankbias.metrics as m\n"
        "assert 'rankbias.metrics.rbo' not in sys.modules\n"
        "from rankbias.metrics import rnd\n"
        "assert rnd.__module__ == 'rankbias.metrics.rank_fairness'\n"
        "assert 'rankbias.metrics.prf' not in sys.modules\n"
        "print('ok')\n"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert done.stdout == "ok\n", done.stderr


def test_dir_lists_every_family_name_and_the_package_own():
    import rankbias.metrics as metrics

    listed = dir(metrics)
    assert listed == sorted(listed)
    assert {"rnd", "nfairr", "awrf", "polarisation_scores", "MAGNITUDES"} <= set(listed)
    assert {"_EXPORTS", "importlib", "__doc__"} <= set(listed)
    assert len(listed) == len(set(listed))


def test_an_unknown_name_is_an_attribute_error_naming_it():
    import rankbias.metrics as metrics

    with pytest.raises(AttributeError) as error:
        metrics.rnd_normalised  # noqa: B018
    assert str(error.value) == "module 'rankbias.metrics' has no attribute 'rnd_normalised'"


def test_a_name_is_the_function_of_its_family_and_is_kept_after_first_use():
    """In this process (the first test runs a fresh interpreter): the package's own lookup hands
    out the family's function and keeps it, so a second use does not look it up again."""
    import rankbias.metrics as metrics
    from rankbias.metrics import rank_fairness

    vars(metrics).pop("rnd", None)  # as before its first use
    assert metrics.rnd is rank_fairness.rnd
    assert vars(metrics)["rnd"] is rank_fairness.rnd
