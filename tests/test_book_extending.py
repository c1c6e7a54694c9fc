"""The example of book/extending.md runs: its module registers a measure that the parser, the
scorer and the listing find, and its test file passes (so the page cannot rot)."""

from __future__ import annotations

import re
import sys
import types
from pathlib import Path

import pytest

from rankbias.metrics import measures

PAGE = Path(__file__).resolve().parents[1] / "book/extending.md"
MODULE = "rankbias.metrics.group_term_share"


def listing(kind: str) -> str:
    text = PAGE.read_text(encoding="utf-8")
    found = re.search(rf"<!-- listing: {kind} -->\n```python\n(.*?)\n```", text, re.S)
    assert found, f"{PAGE}: no '<!-- listing: {kind} -->' python block"
    return found.group(1)


@pytest.fixture
def example_module():
    module = types.ModuleType(MODULE)
    module.__file__ = str(PAGE)
    sys.modules[MODULE] = module
    try:
        exec(compile(listing("module"), f"{PAGE}:module", "exec"), module.__dict__)
        yield module
    finally:
        sys.modules.pop(MODULE, None)
        measures.MEASURES.pop("group_term_share", None)


def test_the_page_example_registers_and_its_tests_pass(example_module):
    measure = measures.get_measure("group_term_share")
    assert measure.higher_is is measures.HigherIs.NEITHER
    assert measures.parse_measure("group_term_share@10").cutoff == 10
    table = measures.measure_table()
    assert table.set_index("name").loc["group_term_share", "inputs"] == "term_statistics"
    namespace: dict = {}
    exec(compile(listing("test"), f"{PAGE}:test", "exec"), namespace)
    tests = [f for name, f in namespace.items() if name.startswith("test_")]
    assert len(tests) == 2
    for test in tests:
        test()


def test_the_page_names_only_existing_api():
    text = PAGE.read_text(encoding="utf-8")
    for name in ("HigherIs", "Input", "Measure", "PARAMETERS", "register"):
        assert hasattr(measures, name), name
    for accessor in re.findall(r"`(\w+)\(\)`", text):
        from rankbias.scoring import RankedInputs

        assert hasattr(RankedInputs, accessor), accessor
