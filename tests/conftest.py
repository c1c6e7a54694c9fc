"""Fixtures shared by the tests of the two engines, and the property tests' settings."""

from __future__ import annotations

import contextlib
import json
import os
import sys
from pathlib import Path

import pytest
from hypothesis import Phase, settings

# Property tests draw the same examples on every run, so that the suite passes or fails the
# same way each time (a run that draws new examples and fails is a flaky suite, not a finding
# of the run).  HYPOTHESIS_PROFILE=explore draws new examples, to look for more;
# HYPOTHESIS_PROFILE=mutation (make mutation) draws the repeatable ones and does not shrink a
# failing example: a mutant is killed by the failure, and shrinking it took 20 s or more, past
# mutmut's time limit (the mutant was reported as a time-out, not as killed).
settings.register_profile("repeatable", derandomize=True)
settings.register_profile("explore", derandomize=False)
settings.register_profile(
    "mutation", derandomize=True, phases=[Phase.explicit, Phase.reuse, Phase.generate]
)
settings.load_profile(os.environ.get("HYPOTHESIS_PROFILE", "repeatable"))


def pytest_sessionstart(session):
    """``make mutation``: the mutant under test is this process's, not its children's.

    mutmut names the active mutant in ``MUTANT_UNDER_TEST`` and keeps a copy inside the
    process, which its trampolines fall back on.  The ``rankbias`` commands the tests start
    run the installed package, where the variable means nothing, and in mutmut's first run
    (``stats``) it made them fail; so the variable leaves the environment they inherit.
    """
    os.environ.pop("MUTANT_UNDER_TEST", None)


def pytest_collection_modifyitems(config, items):
    """``make mutation``: a mutant's own module's tests first, fastest first; an equivalent none.

    mutmut runs, for each mutant, the tests that reached its function, with ``-x``: the first
    failure ends the run and the mutant is killed.  It hands them over as a set, in no order,
    so a mutant killed by a test of a tenth of a second often waited for a minute of slower
    tests first.  Sorted by the durations mutmut recorded in its first run, the run that kills
    a mutant stops as soon as it can; a surviving mutant still runs every test.  Outside a
    mutmut run (no record in the working directory, or no mutant under test) nothing moves.

    A mutant listed in ``mutation_equivalents.tsv`` was read by hand and found to behave as the
    code does: every test reaching it passes, so it would run them all (a minute for the
    validation helpers) to survive again.  Its tests are deselected instead: mutmut records
    "no tests", and ``mutation_score.py`` counts it as equivalent only while the mutant still
    makes the change recorded (otherwise it is listed as stale and counts against the score).
    """
    trampoline = sys.modules.get("mutmut.mutation.trampoline")  # imported by mutmut's workers
    mutant = "" if trampoline is None else trampoline.get_mutant_under_test()
    if "__mutmut_" not in mutant:
        return
    if mutant in _recorded_equivalents():
        config.hook.pytest_deselected(items=list(items))
        items.clear()
        return
    record = Path("mutmut-stats.json")
    if not record.is_file():  # mutmut's first run, before it wrote the record
        return
    durations = json.loads(record.read_text()).get("duration_by_test", {})
    # the tests of the mutant's own module first (tests mirror the package: the mutants of
    # rankbias/metrics/validation.py are checked by tests/metrics/test_validation.py), then the
    # rest; fastest first within each
    modules = mutant.rsplit(".", 1)[0].split(".")[1:]  # e.g. ["metrics", "validation"]
    own = "/".join(["tests", *modules[:-1], f"test_{modules[-1]}.py"]) if modules else None
    items.sort(key=lambda item: (own is None or not item.nodeid.startswith(own),
                                 durations.get(item.nodeid, 0.0)))  # fmt: skip


def _recorded_equivalents() -> set[str]:
    table = Path(__file__).with_name("mutation_equivalents.tsv")
    return {line.split("\t", 1)[0] for line in table.read_text(encoding="utf-8").splitlines()[1:]}


@pytest.fixture(scope="module")
def client():
    """A LocalCluster of two single-threaded worker processes, for a module's tests."""
    distributed = pytest.importorskip(
        "distributed", reason="dask.distributed is not installed (the optional extra 'dask')"
    )
    with (
        distributed.LocalCluster(  # the scheduler's HTTP server on a free port, as the engine's
            processes=True,
            n_workers=2,
            threads_per_worker=1,
            dashboard_address=None,
            scheduler_kwargs={"dashboard_address": ":0"},
        ) as cluster,
        distributed.Client(cluster) as connected,
    ):
        yield connected


@pytest.fixture
def on_cluster(monkeypatch, client):
    """Commands run with ``--engine dask`` use the module's LocalCluster (no start-up each)."""
    import rankbias.distributed as engine

    @contextlib.contextmanager
    def shared(*args, **options):
        yield client

    monkeypatch.setattr(engine, "dask_client", shared)
