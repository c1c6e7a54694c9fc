"""book/extending.md stays true: its listings are the files of examples/measure-plugin, the
module they show registers a measure that the parser, the scorer and the listing find (in a
registry of its own, so the example never collides with a measure of the same name), its
tests pass, and the page names only API that exists."""

from __future__ import annotations

import importlib.util
import re
import sys
from pathlib import Path

import pytest

from rankbias.metrics import measures

REPO = Path(__file__).resolve().parents[1]
PAGE = REPO / "book/extending.md"
EXAMPLE = REPO / "examples/measure-plugin"
FILES = {
    "pyproject": EXAMPLE / "pyproject.toml",
    "module": EXAMPLE / "rankbias_gender_lean.py",
    "test": EXAMPLE / "tests/test_gender_lean.py",
}


def listing(kind: str) -> str:
    text = PAGE.read_text(encoding="utf-8")
    found = re.search(rf"<!-- listing: {kind} -->\n```\w+\n(.*?)\n```", text, re.S)
    assert found, f"{PAGE}: no '<!-- listing: {kind} -->' block"
    return found.group(1)


@pytest.mark.parametrize("kind", sorted(FILES))
def test_the_listings_are_the_example_files(kind):
    assert listing(kind) == FILES[kind].read_text(encoding="utf-8").rstrip("\n")


@pytest.fixture
def example_module(monkeypatch):
    """The example's module imported under a private registry."""
    measures.measures()  # the package's own measures are loaded first
    monkeypatch.setattr(measures, "MEASURES", dict(measures.MEASURES))
    monkeypatch.setattr(measures, "ALIASES", dict(measures.ALIASES))
    spec = importlib.util.spec_from_file_location("rankbias_gender_lean", FILES["module"])
    module = importlib.util.module_from_spec(spec)
    monkeypatch.setitem(sys.modules, "rankbias_gender_lean", module)
    spec.loader.exec_module(module)
    return module


def test_the_example_registers_and_its_tests_pass(example_module):
    measure = measures.get_measure("gender_lean")
    assert measure is example_module.GENDER_LEAN
    assert measure.higher_is is measures.HigherIs.SIGNED
    request = measures.parse_measure("gender_lean(margin=1)@10")
    assert request.cutoff == 10 and request.parameters() == {"margin": 1.0}
    assert request.display == "GL(margin=1)@10"
    table = measures.measure_table().set_index("name")
    assert table.loc["gender_lean", "inputs"] == "term_statistics"
    namespace: dict = {}
    exec(compile(FILES["test"].read_text(), str(FILES["test"]), "exec"), namespace)
    tests = [f for name, f in namespace.items() if name.startswith("test_")]
    assert len(tests) == 2
    for test in tests:
        test()


def test_a_copy_in_the_package_is_the_same_measure_and_another_is_an_error(example_module):
    """The page's 'inside the package' route: a second import of the same module (as a copy
    in src/rankbias/metrics would be) registers nothing new; a different measure of the same
    name is refused."""
    spec = importlib.util.spec_from_file_location("rankbias_metrics_copy", FILES["module"])
    copy = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(copy)
    assert measures.get_measure("gender_lean") is example_module.GENDER_LEAN
    from dataclasses import replace

    with pytest.raises(ValueError, match="'gender_lean' is registered twice"):
        measures.register(replace(example_module.GENDER_LEAN, definition="another"))


def test_the_page_names_only_existing_api():
    text = PAGE.read_text(encoding="utf-8")
    for name in ("HigherIs", "Input", "Measure", "Parameter", "CUTOFF", "register"):
        assert hasattr(measures, name), name
        assert re.search(rf"\b{name}\b", text), name
    from rankbias.dataset import Dataset
    from rankbias.scoring import RankedInputs

    for accessor in re.findall(r"`(\w+)\(\)`", text):  # a measure's inputs, a dataset's parts
        assert hasattr(RankedInputs, accessor) or hasattr(Dataset, accessor), accessor
    for option in re.findall(r"`(--[a-z-]+)", text):
        assert option in SCORE_OPTIONS | STATS_OPTIONS, option


def _options(command: str) -> set[str]:
    from rankbias.cli import build_parser

    parser = build_parser()
    sub = next(a for a in parser._actions if a.dest == "command").choices[command]
    return {s for action in sub._actions for s in action.option_strings}


try:
    SCORE_OPTIONS, STATS_OPTIONS = _options("score"), _options("stats")
except Exception:  # the test above then fails on its first option, naming it
    SCORE_OPTIONS = STATS_OPTIONS = set()
