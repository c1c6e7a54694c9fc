"""Tests of rankbias.metrics.measures: the registry, the parser, the listing and the old aliases."""

from __future__ import annotations

import dataclasses
import importlib.metadata
import importlib.util
import sys
from pathlib import Path

import pytest

import rankbias.metrics
from rankbias.errors import PluginError
from rankbias.metrics import measures as registry
from rankbias.metrics.measures import (
    FAMILIES,
    HigherIs,
    Input,
    Measure,
    MeasureRequest,
    Parameter,
    get_measure,
    measure_table,
    measures,
    parse_measure,
    parse_measures,
    split_cutoff,
    split_measure_list,
)

# every family of the issue, with the measures it must declare
EXPECTED = {
    "rab": {"rab", "arab", "rab_f", "rab_m", "arab_f", "arab_m"},
    "fairr": {"fairr", "ifairr", "nfairr"},
    "texfair": {"awrf", "rbdf", "ted", "texfair", "texfair_norbdf"},
    "duo": {"duo", "signed_duo"},
    "rank_fairness": {"rnd", "rkl"},
    "prf": {"prf_m", "prf_f", "nprf_m", "nprf_f", "delta_a_prf", "pd", "ts"},
    "rbo": {"rbo", "crbo"},
}


@pytest.fixture
def own_registry(monkeypatch):
    """The registry, filled, then copied for this test alone: what it registers is undone."""
    measures()
    monkeypatch.setattr(registry, "MEASURES", dict(registry.MEASURES))
    monkeypatch.setattr(registry, "ALIASES", dict(registry.ALIASES))
    return registry


def declared_by_module(family: str) -> set[str]:
    """The names a family's module registers, found by running its source with a recording
    ``register`` (the registry itself is left alone)."""
    spec = importlib.util.find_spec(f"rankbias.metrics.{family}")
    assert spec is not None and spec.origin, f"no module rankbias.metrics.{family}"
    declared: list[str] = []
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(registry, "register", lambda measure, aliases=None: declared.append(
            measure.name))  # fmt: skip
        source = open(spec.origin, encoding="utf-8").read()
        exec(compile(source, spec.origin, "exec"), {"__name__": f"_declared_{family}"})
    assert len(declared) == len(set(declared)), f"{family} declares a name twice: {declared}"
    return set(declared)


def test_every_family_is_registered_with_enumerated_declarations():
    registered = measures()
    names = [m.name for m in registered]
    assert len(names) == len(set(names))
    families = {m.family for m in registered}
    # the families of the issue are there; a new family module may join them
    assert set(EXPECTED) <= set(FAMILIES) <= families
    for family in families:
        if importlib.util.find_spec(f"rankbias.metrics.{family}") is None:
            continue  # a plugin's family (entry point rankbias.measures), not a module here
        # every measure its module declares is registered, under that family, and no other
        assert {m.name for m in registered if m.family == family} == declared_by_module(family)
    for family, known in EXPECTED.items():
        assert known <= {m.name for m in registered if m.family == family}
    for measure in registered:
        assert isinstance(measure.higher_is, HigherIs)
        assert measure.inputs and all(isinstance(i, Input) for i in measure.inputs)
        assert all(isinstance(p, Parameter) for p in measure.parameters)
        assert measure.definition and measure.reference and callable(measure.kernel)
    assert get_measure("texfair").higher_is is HigherIs.FAIRER
    assert get_measure("ted").higher_is is HigherIs.MORE_BIASED
    assert get_measure("arab").higher_is is HigherIs.SIGNED
    assert get_measure("ifairr").higher_is is HigherIs.NEITHER
    assert get_measure("duo").inputs == (Input.POLARISATION,)
    assert get_measure("rnd").inputs == (Input.GROUP_MEMBERSHIP,)
    assert get_measure("crbo").inputs == (Input.COUNTERFACTUAL_RUN,)
    assert set(get_measure("nprf_m").inputs) == {Input.TERM_STATISTICS, Input.RELEVANCE}
    assert {m.name for m in registered if m.level == "system" and m.family in EXPECTED} == {
        "delta_a_prf",
        "pd",
        "ts",
        "crbo",
    }


def test_the_listing_has_the_documented_columns():
    table = measure_table()
    assert list(table.columns[:6]) == [
        "name", "family", "higher_is", "inputs", "parameters", "reference",
    ]  # fmt: skip
    assert table["name"].is_unique and set(table["name"]) == {m.name for m in measures()}
    assert set(table["higher_is"]) <= {"fairer", "more_biased", "signed", "neither"}
    assert list(table.columns[6:]) == ["level", "display", "definition", "undefined"]
    rnd = table.set_index("name").loc["rnd", "undefined"]
    assert rnd.startswith("NaN when the top k holds one group only") and "rnd(step=10)@20" in rnd
    row = table.set_index("name").loc["nfairr"]
    assert row["parameters"] == (
        "tau=1 (float); strict=false (bool); targets=uniform (floats); "
        "background=collection (collection|run)"
    )
    prf = table.set_index("name").loc["prf_m"]
    assert prf["inputs"] == "term_statistics + relevance"
    crbo = table.set_index("name").loc["crbo"]
    assert (crbo["level"], crbo["display"]) == ("system", get_measure("crbo").display)
    assert crbo["definition"] == get_measure("crbo").definition
    assert row["reference"].startswith("rekabsaz2021societal")


@pytest.mark.parametrize(
    ("text", "label", "cutoff", "given"),
    [
        ("texfair@10", "texfair", 10, {}),
        ("nfairr(tau=0)@10", "nfairr(tau=0)", 10, {"tau": 0.0}),
        ("arab(magnitude=tf)@5", "arab_tf", 5, {"magnitude": "tf"}),
        ("duo(variance=global)@20", "duo(variance=global)", 20, {"variance": "global"}),
        ("rab_bool_f", "rab_bool_f", None, {"magnitude": "bool"}),  # historical label
        (
            "nfairr(strict=true,tau=2)",
            "nfairr(tau=2,strict=true)",
            None,
            {"tau": 2.0, "strict": True},
        ),  # fmt: skip
        ("awrf(targets=(0.25,0.75))@3", "awrf(targets=(0.25,0.75))", 3, {"targets": (0.25, 0.75)}),
        (
            "rnd(discount=log2(i),step=2)@8",
            "rnd(step=2,discount=log2(i))",
            8,
            {"step": 2, "discount": "log2(i)"},
        ),  # fmt: skip
        ("nfairr(tau=1)", "nfairr", None, {"tau": 1.0}),  # a default is not part of the label
        ("nfairr(tau=-0.0)@5", "nfairr(tau=0)", 5, {"tau": 0.0}),  # -0 is 0: one label
        ("awrf(targets=(-0,1))", "awrf(targets=(0,1))", None, {"targets": (0.0, 1.0)}),
        ("TExFAIR@10", "texfair", 10, {}),  # names are case-insensitive
        ("ARaB_TF@5", "arab_tf", 5, {"magnitude": "tf"}),
    ],
)
def test_parser_reads_types_and_round_trips(text, label, cutoff, given):
    request = parse_measure(text)
    assert isinstance(request, MeasureRequest)
    assert request.label == label and request.cutoff == cutoff
    assert dict(request.given) == given
    for name, value in given.items():
        assert type(request.parameters()[name]) is type(value)
    again = parse_measure(str(request))
    assert again.label == request.label and again.cutoff == request.cutoff
    assert again.parameters() == request.parameters()


def test_parameters_are_the_measures_own():
    request = parse_measure("nfairr(tau=0)")
    assert request.parameters() == {
        "tau": 0.0, "strict": False, "targets": None, "background": "collection",
    }  # fmt: skip
    # a measure value is built in Python as well as from text, and compares as one
    nfairr = get_measure("nfairr")
    assert nfairr(10, tau=0) == parse_measure("nfairr(tau=0)@10")
    assert hash(nfairr(10, tau=0)) == hash(parse_measure("nfairr(tau=0.0)@10"))
    assert request.with_parameters(strict=True).label == "nfairr(tau=0,strict=true)"
    with pytest.raises(ValueError, match="unknown parameter 'distance' of texfair"):
        parse_measure("texfair").with_parameters(distance="l2")
    with pytest.raises(TypeError, match="parameter strict: expected true or false"):
        nfairr(strict="yes")
    with pytest.raises(ValueError, match="parameter cutoff: value 0 is out of range"):
        nfairr(0)


def test_a_switch_is_read_from_any_of_its_spellings_in_any_case():
    for text, value in (("true", True), ("1", True), ("yes", True), ("YES", True),
                        ("false", False), ("0", False), ("no", False), ("NO", False)):  # fmt: skip
        assert parse_measure(f"nfairr(strict={text})").parameters()["strict"] is value, text
    for text in ("y", "2", "on", "t"):
        with pytest.raises(ValueError) as info:
            parse_measure(f"nfairr(strict={text})")
        assert str(info.value) == (
            f"measure 'nfairr(strict={text})': parameter strict: cannot read '{text}'; "
            "expected true or false"
        )


def test_parameters_take_numpy_numbers_of_their_kind_and_refuse_the_rest():
    import numpy as np

    nfairr = get_measure("nfairr")
    assert nfairr(10, tau=np.float32(0.5)).parameters()["tau"] == 0.5
    assert nfairr(np.int32(5)) == nfairr(5)
    for call, message in (
        (lambda: nfairr(10, tau=True), "parameter tau: expected a number ≥ 0, found bool True"),
        (lambda: nfairr(10, tau="1"), "parameter tau: expected a number ≥ 0, found str '1'"),
        (lambda: nfairr(np.float64(5.0)), "parameter cutoff: expected an integer ≥ 1 and "
         "≤ 2147483647, found float64 np.float64(5.0)"),
    ):  # fmt: skip
        with pytest.raises(TypeError) as info:
            call()
        assert str(info.value) == message
    # each kind of parameter says what it expects: a choice, text, a list of shares
    rab = get_measure("rab")
    for call, message in (
        (lambda: rab(10, magnitude=5),
         "parameter magnitude: expected one of tc, tf, bool, tf_paper, found int 5"),
        (lambda: rab(10, female=5), "parameter female: expected text, found int 5"),
    ):  # fmt: skip
        with pytest.raises(TypeError) as info:
            call()
        assert str(info.value) == message
    with pytest.raises(ValueError) as info:
        parse_measure("fairr(targets=x)")
    assert str(info.value) == (
        "measure 'fairr(targets=x)': parameter targets: cannot read 'x'; "
        "expected numbers like (0.5,0.5)"
    )
    # a strict lower bound: RBO's persistence p lies strictly between 0 and 1
    with pytest.raises(ValueError) as info:
        parse_measure("rbo(p=0)")
    assert str(info.value) == (
        "measure 'rbo(p=0)': parameter p: value 0.0 is out of range; expected a number > 0 and < 1"
    )


def test_display_names_come_from_the_declarations():
    from rankbias.metrics.measures import display_name

    assert display_name("nfairr@10") == "NFaiRR@10"
    assert display_name("texfair") == "TExFAIR"
    assert display_name("arab_tf_f") == "ARaB_f (tf)"
    assert display_name("nfairr(tau=0)@5") == "NFaiRR(tau=0)@5"
    assert display_name("nDCG@10") == "nDCG@10"  # not a registered measure: as it is


def test_a_list_splits_only_at_top_level_commas():
    items = parse_measures("texfair@10, nfairr(tau=0,strict=true)@5,awrf(targets=(0.5,0.5))")
    assert [str(r) for r in items] == [
        "texfair@10",
        "nfairr(tau=0,strict=true)@5",
        "awrf(targets=(0.5,0.5))",
    ]


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("texfiar@10", r"unknown measure 'texfiar'; known measures: rab, .*texfair"),
        ("nfairr(tua=0)", r"unknown parameter 'tua' of nfairr; its parameters: tau, strict"),
        ("duo(variance=local)", r"value 'local' is not allowed; expected one of prefix, global"),
        ("texfair@0", r"bad cut-off '0'; expected an integer from 1 to 2147483647"),
        ("texfair@2147483648", r"bad cut-off '2147483648'"),
        ("texfair@²", r"bad cut-off '²'"),
        ("texfair@١٠", r"bad cut-off '١٠'"),
        ("nfairr(tau=1_0)", r"parameter tau: cannot read '1_0'"),
        ("rnd(step=1e1)", r"parameter step: cannot read '1e1'"),
        ("texfair@ten", r"bad cut-off 'ten'"),
        ("texfair@", r"bad cut-off ''"),
        ("nfairr(tau=abc)", r"parameter tau: cannot read 'abc'; expected a number ≥ 0"),
        ("nfairr(tau=-1)", r"parameter tau: value -1.0 is out of range"),
        ("nfairr(strict=maybe)", r"expected true or false"),
        ("rbo(p=1)", r"parameter p: value 1.0 is out of range"),
        ("nfairr(tau)", r"parameter 'tau' is not key=value"),
        ("nfairr(tau=0", r"unbalanced|expected parameters"),
        ("nfairr(tau=0,tau=1)", r"given twice"),
        ("", r"empty measure name"),
    ],
)
def test_parser_errors_say_what_was_expected(text, message):
    with pytest.raises(ValueError, match=message):
        parse_measure(text)


def test_split_cutoff_is_the_reader_of_at_k_for_any_label():
    assert split_cutoff("texfair@10") == ("texfair", 10)
    assert split_cutoff(" nDCG@5 ") == ("nDCG", 5)
    assert split_cutoff("AP") == ("AP", None)
    assert split_cutoff("nfairr(tau=0)@3") == ("nfairr(tau=0)", 3)
    assert split_cutoff("x(key=a@b)") == ("x(key=a@b)", None)  # '@' inside parameters
    assert split_cutoff("x(key=a@b)@5") == ("x(key=a@b)", 5)  # the last '@', outside them
    with pytest.raises(ValueError, match="bad cut-off '-1'"):
        split_cutoff("rnd@-1")


def declaration(**fields):
    """A declaration with every required field, overridden by ``fields``."""
    from rankbias.metrics.measures import Measure

    base = dict(
        name="probe_measure", family="probe", definition="a test declaration",
        reference="none", higher_is=HigherIs.NEITHER, inputs=(Input.TERM_STATISTICS,),
        kernel=len,
    )  # fmt: skip
    return Measure(**{**base, **fields})


def test_a_declaration_is_checked_whole_when_it_is_made():
    tau = Parameter("tau", "float", 1.0, "a threshold")
    cases = [
        ({"name": "Probe"}, ValueError, "measure name 'Probe': expected lower-case [a-z0-9_]"),
        ({"higher_is": "fairer"}, TypeError,
         "probe_measure: higher_is must be a HigherIs, found 'fairer'"),
        ({"inputs": ()}, TypeError, "probe_measure: inputs must be Input members, found ()"),
        ({"inputs": ("stats",)}, TypeError,
         "probe_measure: inputs must be Input members, found ('stats',)"),
        ({"parameters": ("tau",)}, TypeError, "probe_measure: parameters must be Parameter values"),
        ({"parameters": (tau, tau)}, ValueError,
         "probe_measure: parameter names ['tau', 'tau'] repeat or use ('aggregate', 'cutoff')"),
        ({"parameters": (Parameter("cutoff", "int", 10, "k"),)}, ValueError,
         "probe_measure: parameter names ['cutoff'] repeat or use ('aggregate', 'cutoff')"),
        ({"level": "list"}, ValueError, "probe_measure: level must be 'query' or 'system'"),
        ({"kernel": "len"}, TypeError, "probe_measure: kernel must be callable"),
    ]  # fmt: skip
    for fields, kind, message in cases:
        with pytest.raises(kind) as error:
            declaration(**fields)
        assert str(error.value) == message, fields
    assert declaration().display == "probe_measure"
    for arguments, message in (
        (("Tau", "float", 1.0, "t"), "parameter name 'Tau': expected lower-case [a-z0-9_]"),
        (("tau", "double", 1.0, "t"), "parameter tau type: expected one of 'int', 'float', "
         "'bool', 'str', 'floats', found 'double'"),
    ):  # fmt: skip
        with pytest.raises(ValueError) as error:
            Parameter(*arguments)
        assert str(error.value) == message
    assert declaration(display="Probe").display == "Probe"


def test_register_takes_a_declaration_once_and_refuses_a_different_one(own_registry):
    import functools

    with pytest.raises(TypeError) as error:
        registry.register("probe_measure")
    assert str(error.value) == "measure: expected a Measure, found str"
    first = declaration(kernel=functools.partial(sorted, key=abs))
    assert registry.register(first, aliases={"probe_abs": {"tau": 0.0}}) is first
    assert registry.ALIASES["probe_abs"] == ("probe_measure", (("tau", 0.0),))
    # the same declaration again: the first one stays
    assert registry.register(declaration(kernel=functools.partial(sorted, key=abs))) is first

    def module_copy():  # a copy of a plugin's module makes new functions of the same names
        def key(value):
            return value

        def kernel(inputs, cutoffs):
            return inputs

        return key, kernel

    key, kernel = module_copy()
    copied = declaration(
        name="probe_copy", kernel=kernel, aggregate=functools.partial(max, key=key)
    )
    assert registry.register(copied) is copied
    key, kernel = module_copy()
    again = declaration(name="probe_copy", kernel=kernel, aggregate=functools.partial(max, key=key))
    assert registry.register(again) is copied
    different = [
        declaration(kernel=functools.partial(sorted, key=len)),  # the shared kernel's own key
        declaration(kernel=functools.partial(sorted, key=abs, reverse=True)),
        declaration(kernel=functools.partial(max, key=abs)),
        declaration(kernel=functools.partial(sorted, key=abs), aggregate=min),
    ]
    for other in different:
        with pytest.raises(ValueError) as error:
            registry.register(other)
        assert str(error.value) == (
            "measure 'probe_measure' is registered twice, with different declarations "
            "(family 'probe' and 'probe')"
        )


def test_a_measure_list_is_split_at_the_commas_outside_brackets():
    assert split_measure_list("texfair@10,nfairr(tau=0,strict=true)@5, rbo[p=0.9]") == [
        "texfair@10", "nfairr(tau=0,strict=true)@5", "rbo[p=0.9]",
    ]  # fmt: skip
    assert split_measure_list("X(a,b),Y") == ["X(a,b)", "Y"]  # any letter is text, not a bracket
    assert split_measure_list("a,,a", empty_ok=True) == ["a", "", "a"]
    for text, message in (
        ("rnd)", "unbalanced ')' in measure list 'rnd)'"),
        ("rnd(tau=0", "unbalanced '(' in measure list 'rnd(tau=0'"),
        ("rnd,rbo,rnd,rbo", "measure list 'rnd,rbo,rnd,rbo' names rbo, rnd twice; expected once"),
        ("a,,b", "measure list 'a,,b' has an empty item; expected comma-separated measures like "
                 "texfair@10,nfairr(tau=0)@5"),
    ):  # fmt: skip
        with pytest.raises(ValueError) as info:
            split_measure_list(text)
        assert str(info.value) == message
    with pytest.raises(TypeError) as info:
        split_measure_list(["rnd"])
    assert str(info.value) == "measures: expected text such as 'texfair@10,nfairr@5', found list"


def test_a_parameter_a_measure_does_not_have_is_named_with_the_ones_it_has():
    with pytest.raises(ValueError) as info:
        get_measure("nfairr").parameter("p")
    assert str(info.value).startswith("unknown parameter 'p' of nfairr; its parameters: ")
    bare = Measure(name="bare", family="probe", definition="d", reference="r",
                   higher_is=HigherIs.NEITHER, inputs=(Input.RELEVANCE,), kernel=len)  # fmt: skip
    with pytest.raises(ValueError) as info:
        bare.parameter("p")
    assert str(info.value) == "unknown parameter 'p' of bare; its parameters: none"


class _Entry:
    """An entry point as importlib.metadata gives it: a name, a value and ``load()``."""

    def __init__(self, name: str, value: str, loads):
        self.name, self.value, self.loads = name, value, loads

    def load(self):
        if isinstance(self.loads, Exception):
            raise self.loads
        return self.loads


def test_the_loader_imports_each_family_once_and_registers_each_plugin(monkeypatch, own_registry):
    """The registry fills itself once per process: the families' modules in their order, every
    other module beside them, then each entry point of the group ``rankbias.measures`` (a
    Measure, a list of them, or a module that registered its own). Run in this process, so
    mutation testing sees it (the installed example plugin is tested in a process of its own)."""
    nfairr = get_measure("nfairr")
    imported: list[str] = []
    real_import = importlib.import_module
    monkeypatch.setattr(importlib, "import_module", lambda name, package=None: imported.append(
        name) or real_import(name, package))  # fmt: skip
    groups: dict = {}
    monkeypatch.setattr(importlib.metadata, "entry_points", lambda group: groups.get(group, []))
    one, two = (dataclasses.replace(nfairr, name=n) for n in ("plugin_one", "plugin_two"))
    module = sys.modules["rankbias.metrics.rbo"]  # a module registers when it is imported
    groups["rankbias.measures"] = [
        _Entry("m", "m", module),  # first: the entries after a module are read too
        _Entry("one", "plug:ONE", one),
        _Entry("two", "plug:ALL", [two]),
    ]
    monkeypatch.setattr(registry, "_LOADED", [])
    registry._load_families()
    assert registry.MEASURES["plugin_one"] is one and registry.MEASURES["plugin_two"] is two
    families = [f"rankbias.metrics.{family}" for family in FAMILIES]
    assert imported[: len(families)] == families
    here = Path(rankbias.metrics.__file__).parent
    modules = {f"rankbias.metrics.{p.stem}" for p in here.glob("*.py") if p.stem != "__init__"}
    assert set(imported[len(families) :]) == modules and len(imported) == len(families) + len(
        modules)  # fmt: skip
    registry._load_families()  # once per process: nothing imported again
    assert len(imported) == len(families) + len(modules)


def test_a_family_that_fails_to_import_is_not_read_past(monkeypatch, own_registry):
    """Not only a plugin: whatever stops the loading stops every later call too."""

    def broken(name, package=None):
        raise ImportError(f"broken {name}")

    monkeypatch.setattr(importlib, "import_module", broken)
    monkeypatch.setattr(registry, "_LOADED", [])
    for _ in range(2):
        with pytest.raises(ImportError, match=r"^broken rankbias\.metrics\.rab$"):
            registry._load_families()


@pytest.mark.parametrize(
    ("loads", "message"),
    [
        (ModuleNotFoundError("No module named 'plug'"), "measure plugin 'bad' (plug:M, entry point "
         "group 'rankbias.measures') failed to load: No module named 'plug'"),
        (len, "measure plugin 'bad' (plug:M): expected a Measure, a list of them or"
         " a module, found builtin_function_or_method"),
        ("nfairr", "measure plugin 'bad' (plug:M): expected a Measure, a list of them or a "
         "module, found str"),
        (["nfairr"], "measure plugin 'bad' (plug:M): expected a Measure, a list of them or a "
         "module, found str"),
    ],
)  # fmt: skip
def test_a_plugin_that_gives_no_measure_is_refused_by_name(
    monkeypatch, own_registry, loads, message
):
    """What an entry point loads is a Measure or a list of them; anything else (or a module
    that fails to import) is an error naming the plugin, never skipped, at every call."""
    entries = {"rankbias.measures": [_Entry("bad", "plug:M", loads)]}
    monkeypatch.setattr(importlib.metadata, "entry_points", lambda group: entries.get(group, []))
    monkeypatch.setattr(registry, "_LOADED", [])
    for _ in range(2):  # refused at every call: the registry is never read half filled
        with pytest.raises(PluginError) as caught:  # an ImportError: the user's plugin to mend
            registry._load_families()
        assert str(caught.value) == message


@pytest.mark.parametrize(
    ("call", "error", "message"),
    [
        (lambda: MeasureRequest("nfairr"), TypeError,
         "measure: expected a Measure (get_measure('nfairr')), found str"),
        (lambda: get_measure(5), TypeError,
         "name: expected a measure name such as 'nfairr', found int"),
        (lambda: parse_measure(" "), ValueError,
         "empty measure name; expected e.g. texfair@10 or nfairr(tau=0)@10"),
        (lambda: parse_measure("nfairr(tau=1"), ValueError,
         "measure 'nfairr(tau=1': expected parameters as name(key=value,…), found '(tau=1'"),
        (lambda: parse_measure("nfairr(tau=0,tau=0)"), ValueError,
         "measure 'nfairr(tau=0,tau=0)': parameter 'tau' given twice"),
        (lambda: parse_measure("nfairr(tau=0,,strict=true)"), ValueError,
         "measure 'nfairr(tau=0,,strict=true)': parameter '' is not key=value"),
        (lambda: parse_measure("nfairr(tau==0)"), ValueError,
         "measure 'nfairr(tau==0)': parameter tau: cannot read '=0'; expected a number ≥ 0"),
    ],
)  # fmt: skip
def test_each_refusal_of_the_measure_reader_names_what_it_read(call, error, message):
    with pytest.raises(error) as caught:
        call()
    assert str(caught.value) == message


def test_empty_parentheses_give_the_defaults():
    assert parse_measure("nfairr()@5") == parse_measure("nfairr@5")


def test_aliases_are_lower_case_names_so_that_any_case_reads_them(own_registry):
    """The reader lower-cases a name before it looks it up, so an alias is a lower-case name
    like a measure's: ``RaB_TF@5`` is ``rab_tf@5``, and ``Lean_X`` could never be read."""
    assert parse_measure("RaB_TF@5") == parse_measure("rab_tf@5")
    assert parse_measure("RaB_TF@5").parameters()["magnitude"] == "tf"
    lean = dataclasses.replace(get_measure("nfairr"), name="lean")
    with pytest.raises(ValueError) as caught:
        registry.register(lean, aliases={"Lean_X": {"tau": 1.0}})
    assert str(caught.value) == "alias 'Lean_X' of lean: expected lower-case [a-z0-9_]"
    assert "lean" not in registry.MEASURES and "Lean_X" not in registry.ALIASES


@pytest.mark.parametrize(
    ("name", "parameters", "message"),
    [
        ("nfairr", {"tau": float("nan")}, "parameter tau: expected a finite number, found nan"),
        ("awrf", {"targets": (float("inf"), 0.5)},
         "parameter targets: expected finite numbers, found (inf, 0.5)"),
        ("awrf", {"targets": ()}, "parameter targets: expected finite numbers, found ()"),
    ],
)  # fmt: skip
def test_a_parameter_given_in_python_is_a_finite_number_or_numbers(name, parameters, message):
    with pytest.raises(ValueError) as caught:
        MeasureRequest(get_measure(name)).with_parameters(**parameters)
    assert str(caught.value) == message
