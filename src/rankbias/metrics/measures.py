"""The measure model: a measure is a value, declared once next to its kernel.

In the manner of ``ir_measures``, each family module ends with :func:`register` calls that
declare its measures as :class:`Measure` values (name, family, definition, reference,
:class:`HigherIs`, :class:`Input` kinds, :class:`Parameter` values; the cut-off ``@k`` is
:data:`CUTOFF`, shared by all).  The ``kernel(inputs, cutoffs, **parameters)`` reads a
:class:`rankbias.scoring.RankedInputs` and returns ``(n_queries, n_cutoffs)``, or
``(n_cutoffs,)`` for ``level="system"`` (reported with ``qid = "all"``); an optional
``aggregate(stats, cutoffs, **parameters)`` is computed once per collection and handed to the
kernel as ``aggregate=`` (NFaiRR's ideal under its own τ).

:func:`parse_measure` reads text such as ``nfairr(tau=0,strict=true)@10`` into a hashable
:class:`MeasureRequest`, whose :attr:`~MeasureRequest.label` (the ``metric`` column) is the name
and the given parameters that differ from their defaults, ``nfairr(tau=0)``; RaB/ARaB keep
their historical labels (``arab_tf``, ``rab_bool_f``), which the parser accepts as names too.
Plugins join through the entry-point group :data:`ENTRY_POINT_GROUP` (``rankbias.measures``):
each entry point names a :class:`Measure`, a sequence of them, or a module that registers some.
"""

from __future__ import annotations

import enum
import functools
import importlib
import math
import re
import types
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field, replace

from rankbias.errors import PluginError, expect_choice, expect_type

__all__ = [
    "HigherIs", "Input", "Parameter", "Measure", "MeasureRequest", "CUTOFF", "MEASURES",
    "FAMILIES", "ENTRY_POINT_GROUP", "register", "measures", "get_measure", "parse_measure",
    "parse_measures", "split_measure_list", "split_cutoff", "higher_is", "display_name",
    "measure_table",
]  # fmt: skip

ENTRY_POINT_GROUP = "rankbias.measures"


class HigherIs(enum.StrEnum):
    """What a higher value of a measure means."""

    FAIRER = "fairer"
    MORE_BIASED = "more_biased"
    SIGNED = "signed"  # the sign says which group is favoured, |value| how much
    NEITHER = "neither"  # a component or normaliser, not a fairness score


class Input(enum.StrEnum):
    """What a kernel needs besides the ranked lists."""

    TERM_STATISTICS = "term_statistics"  # per-document group magnitudes and lengths
    RELEVANCE = "relevance"  # relevance judgements (qrels)
    POLARISATION = "polarisation_scores"  # per document (or query and document) scores
    COUNTERFACTUAL_RUN = "counterfactual_run"  # the same system on a counterfactual collection
    GROUP_MEMBERSHIP = "group_membership"  # per document: in the protected group or not


_INTEGER = re.compile(r"[+-]?[0-9]+", re.ASCII)
_NAME = re.compile(r"[a-z][a-z0-9_]*")  # a measure's, a parameter's and an alias's name
_DECIMAL = re.compile(r"[+-]?([0-9]+\.?[0-9]*|\.[0-9]+)([eE][+-]?[0-9]+)?", re.ASCII)


@dataclass(frozen=True)
class Parameter:
    """A parameter of a measure, declared in the module of the measure's family.

    ``type`` is one of ``int``, ``float``, ``bool``, ``str``, ``floats`` (a tuple, written
    ``(0.3,0.7)``); ``allowed`` lists the admissible values; ``minimum`` and ``maximum`` bound a
    number (``exclusive_minimum`` makes the lower bound strict; ``maximum`` is always strict).
    Numbers are read in ASCII decimal notation only (``1_0``, ``0x1``, ``١٠`` are refused).
    """

    name: str
    type: str
    default: object
    meaning: str
    allowed: tuple | None = None
    minimum: float | None = None
    exclusive_minimum: bool = False
    maximum: float | None = None

    def __post_init__(self) -> None:
        if not isinstance(self.name, str) or not _NAME.fullmatch(self.name):
            raise ValueError(f"parameter name {self.name!r}: expected lower-case [a-z0-9_]")
        expect_choice(
            self.type, f"parameter {self.name} type", ("int", "float", "bool", "str", "floats")
        )

    def parse(self, text: str) -> object:
        """The value of ``text`` in this parameter's type; a ValueError says what was expected."""
        text = text.strip()
        try:
            if self.type == "int":
                if not _INTEGER.fullmatch(text):
                    raise ValueError
                value = int(text)
            elif self.type == "float":
                value = _finite(text)
            elif self.type == "bool":
                lowered = text.lower()
                if lowered not in ("true", "false", "1", "0", "yes", "no"):
                    raise ValueError
                value = lowered in ("true", "1", "yes")
            elif self.type == "floats":
                inner = text.removeprefix("(").removesuffix(")")
                value = tuple(_finite(part.strip()) for part in inner.split(","))
            else:
                value = text
        except ValueError:
            raise ValueError(
                f"parameter {self.name}: cannot read {text!r}; expected {self.describe_type()}"
            ) from None
        return self.check(value)

    def check(self, value: object) -> object:
        """``value`` in this parameter's type if admissible, else a ValueError (a TypeError for
        the wrong type) naming the parameter."""
        if value is None and self.default is None:
            return value
        value = self._typed(value)
        if self.allowed is not None and value not in self.allowed:
            raise ValueError(
                f"parameter {self.name}: value {value!r} is not allowed; expected one of "
                f"{', '.join(map(str, self.allowed))}"
            )
        if self.type in ("int", "float"):
            low = self.minimum is not None and (
                value <= self.minimum if self.exclusive_minimum else value < self.minimum
            )
            if low or (self.maximum is not None and value >= self.maximum):
                raise ValueError(
                    f"parameter {self.name}: value {value!r} is out of range; expected "
                    f"{self.describe_type()}"
                )
        return value

    def _typed(self, value: object) -> object:
        wrong = TypeError(
            f"parameter {self.name}: expected {self.describe_type()}, found "
            f"{type(value).__name__} {value!r}"
        )
        if self.type == "bool":
            if not isinstance(value, bool):
                raise wrong
            return value
        if self.type == "int":
            if isinstance(value, bool) or not isinstance(value, int | _numpy_types(floats=False)):
                raise wrong
            return int(value)
        if self.type == "float":
            if isinstance(value, bool) or not isinstance(value, int | float | _numpy_types()):
                raise wrong
            if not math.isfinite(float(value)):
                raise ValueError(f"parameter {self.name}: expected a finite number, found {value}")
            return float(value) + 0.0  # -0.0 is 0.0: one label, one measure
        if self.type == "floats":
            try:
                values = tuple(float(v) + 0.0 for v in value)
            except (TypeError, ValueError):
                raise wrong from None
            if not values or not all(math.isfinite(v) for v in values):
                raise ValueError(f"parameter {self.name}: expected finite numbers, found {value!r}")
            return values
        if not isinstance(value, str):
            raise wrong
        return value

    def describe_type(self) -> str:
        if self.allowed is not None:
            return "one of " + ", ".join(map(str, self.allowed))
        text = {
            "floats": "numbers like (0.5,0.5)",
            "bool": "true or false",
            "int": "an integer",
            "float": "a number",
            "str": "text",
        }[self.type]
        if self.minimum is not None:
            text += f" {'>' if self.exclusive_minimum else '≥'} {self.minimum:g}"
        if self.maximum is not None and self.type == "int":
            text += f" and ≤ {int(self.maximum) - 1}"
        elif self.maximum is not None:
            text += f" and < {self.maximum:g}"
        return text

    def show(self, value: object) -> str:
        if isinstance(value, tuple):
            return "(" + ",".join(f"{v:g}" for v in value) + ")"
        if isinstance(value, bool):
            return str(value).lower()
        if isinstance(value, float):
            return f"{value:g}"
        return str(value)


def _finite(text: str) -> float:
    if not _DECIMAL.fullmatch(text):
        raise ValueError
    return float(text)


def _numpy_types(floats: bool = True):
    import numpy as np  # only when a number is checked

    return np.integer | np.floating if floats else np.integer


#: The cut-off ``@k`` of every measure: an integer ≥ 1 and at most 2³¹ − 1.
CUTOFF = Parameter(
    "cutoff", "int", None, "depth k: the first k documents of each list", minimum=1, maximum=2**31
)

#: The families of the package, in the order the listing shows them (a family not listed here,
#: e.g. a plugin's, follows them).
FAMILIES = ("rab", "fairr", "texfair", "duo", "rank_fairness", "prf", "rbo")

Kernel = Callable[..., object]
RESERVED = ("aggregate", "cutoff")


@dataclass(frozen=True)
class Measure:
    """One measure: what it is, what it needs, and the kernel that computes it."""

    name: str
    family: str
    definition: str
    reference: str
    higher_is: HigherIs
    inputs: tuple[Input, ...]
    kernel: Kernel
    parameters: tuple[Parameter, ...] = ()
    level: str = "query"
    display: str = ""
    aggregate: Callable | None = None
    label: Callable[[Mapping[str, object]], str] | None = field(default=None, compare=False)
    label_parameters: tuple[str, ...] = ()
    undefined: str = ""  # when a value is NaN, and what is defined there instead

    def __post_init__(self) -> None:
        if not isinstance(self.name, str) or not _NAME.fullmatch(self.name):
            raise ValueError(f"measure name {self.name!r}: expected lower-case [a-z0-9_]")
        if not isinstance(self.higher_is, HigherIs):
            raise TypeError(f"{self.name}: higher_is must be a HigherIs, found {self.higher_is!r}")
        if not self.inputs or not all(isinstance(i, Input) for i in self.inputs):
            raise TypeError(f"{self.name}: inputs must be Input members, found {self.inputs}")
        if not all(isinstance(p, Parameter) for p in self.parameters):
            raise TypeError(f"{self.name}: parameters must be Parameter values")
        names = [p.name for p in self.parameters]
        if len(set(names)) != len(names) or set(names) & set(RESERVED):
            raise ValueError(f"{self.name}: parameter names {names} repeat or use {RESERVED}")
        if self.level not in ("query", "system"):
            raise ValueError(f"{self.name}: level must be 'query' or 'system'")
        if not callable(self.kernel):
            raise TypeError(f"{self.name}: kernel must be callable")
        if not self.display:
            object.__setattr__(self, "display", self.name)

    def parameter(self, name: str) -> Parameter:
        for parameter in self.parameters:
            if parameter.name == name:
                return parameter
        known = ", ".join(p.name for p in self.parameters) or "none"
        raise ValueError(f"unknown parameter {name!r} of {self.name}; its parameters: {known}")

    def defaults(self) -> dict[str, object]:
        return {p.name: p.default for p in self.parameters}

    def __call__(self, cutoff: int | None = None, **parameters) -> MeasureRequest:
        """``get_measure("nfairr")(10, tau=0)``: the request, parameters checked."""
        return MeasureRequest(self).with_parameters(**parameters).at(cutoff)


@dataclass(frozen=True)
class MeasureRequest:
    """A measure with the parameters given explicitly and an optional cut-off: a value."""

    measure: Measure
    given: tuple[tuple[str, object], ...] = ()
    cutoff: int | None = None

    def __post_init__(self) -> None:
        expect_type(self.measure, "measure", Measure, "a Measure (get_measure('nfairr'))")

    def parameters(self) -> dict[str, object]:
        """The declared defaults, overridden by the parameters given."""
        return self.measure.defaults() | dict(self.given)

    def with_parameters(self, **values) -> MeasureRequest:
        """This request with ``values`` given (each checked against its declaration)."""
        given = dict(self.given)
        for name, value in values.items():
            given[name] = self.measure.parameter(name).check(value)
        order = [p.name for p in self.measure.parameters]
        return replace(self, given=tuple((p, given[p]) for p in order if p in given))

    def at(self, cutoff: int | None) -> MeasureRequest:
        """This request at cut-off ``cutoff`` (``None``: at the scorer's cut-offs)."""
        return replace(self, cutoff=None if cutoff is None else CUTOFF.check(cutoff))

    def _shown(self) -> str:
        """``(key=value,…)``: the given parameters that differ from their defaults."""
        measure, given = self.measure, dict(self.given)
        shown = [
            f"{p.name}={p.show(given[p.name])}"
            for p in measure.parameters
            if p.name in given
            and p.name not in measure.label_parameters
            and given[p.name] != p.default
        ]
        return f"({','.join(shown)})" if shown else ""

    @property
    def label(self) -> str:
        """The ``metric`` column: name plus the given parameters that differ from defaults."""
        measure = self.measure
        base = measure.label(self.parameters()) if measure.label else measure.name
        return base + self._shown()

    @property
    def display(self) -> str:
        """How a table or figure writes it: ``NFaiRR (τ=0)``-style, ``NFaiRR(tau=0)@10``."""
        measure = self.measure
        base = measure.display
        if measure.label_parameters:  # ARaB (tf): the values its label spells out
            values = self.parameters()
            base += f" ({','.join(str(values[p]) for p in measure.label_parameters)})"
        return base + self._shown() + (f"@{self.cutoff}" if self.cutoff is not None else "")

    def __str__(self) -> str:
        return self.label + (f"@{self.cutoff}" if self.cutoff is not None else "")


MEASURES: dict[str, Measure] = {}
#: Other names the parser accepts: name → (measure name, parameters), e.g. ``arab_tf``.
ALIASES: dict[str, tuple[str, tuple[tuple[str, object], ...]]] = {}
_LOADED: list[bool] = []


def register(measure: Measure, aliases: Mapping[str, Mapping[str, object]] | None = None):
    """Add ``measure`` (and parser aliases ``name → parameters``) to the registry."""
    if not isinstance(measure, Measure):
        raise TypeError(f"measure: expected a Measure, found {type(measure).__name__}")
    existing = MEASURES.get(measure.name)
    if existing is not None and _declaration(existing) != _declaration(measure):
        raise ValueError(
            f"measure {measure.name!r} is registered twice, with different declarations "
            f"(family {existing.family!r} and {measure.family!r})"
        )
    if existing is not None:
        return existing  # the same declaration again: registered once
    for alias in aliases or {}:  # the reader lower-cases what it is given: names are lower-case
        if not isinstance(alias, str) or not _NAME.fullmatch(alias):
            raise ValueError(f"alias {alias!r} of {measure.name}: expected lower-case [a-z0-9_]")
    MEASURES[measure.name] = measure
    for alias, params in (aliases or {}).items():
        ALIASES[alias] = (measure.name, tuple(params.items()))
    return measure


def _declaration(measure: Measure) -> tuple:
    """Every field, the functions by name: an installed plugin and a copy of its module in the
    package declare one measure."""

    def named(function):
        if isinstance(function, functools.partial):  # a shared kernel with its own key
            keywords = {k: named(v) if callable(v) else v for k, v in function.keywords.items()}
            return named(function.func), function.args, sorted(keywords.items())
        return None if function is None else (function.__qualname__, function.__name__)

    return (
        measure.name, measure.family, measure.definition, measure.reference, measure.higher_is,
        measure.inputs, measure.parameters, measure.level, measure.display,
        named(measure.kernel), named(measure.aggregate), measure.undefined,
    )  # fmt: skip


def _load_families() -> None:
    """Import every module of :mod:`rankbias.metrics` (each registers its measures), then the
    entry points of ``rankbias.measures``; once per process, unless a module or plugin is
    refused (then at every call, so the registry is never read half filled)."""
    if _LOADED:
        return
    _LOADED.append(True)
    import pkgutil
    from importlib.metadata import entry_points

    import rankbias.metrics as package

    try:
        for family in FAMILIES:  # the package's families, then any module added beside them
            importlib.import_module(f"{package.__name__}.{family}")
        for info in pkgutil.iter_modules(package.__path__):
            importlib.import_module(f"{package.__name__}.{info.name}")
        for entry in entry_points(group=ENTRY_POINT_GROUP):
            _load_plugin(entry)
    except BaseException:
        _LOADED.clear()  # refused again at the next call, never read as a half-filled registry
        raise


def _load_plugin(entry) -> None:
    """Register what one entry point of ``rankbias.measures`` names (book: Extending)."""
    try:
        loaded = entry.load()
    except Exception as exc:
        raise PluginError(
            f"measure plugin {entry.name!r} ({entry.value}, entry point group "
            f"{ENTRY_POINT_GROUP!r}) failed to load: {exc}"
        ) from exc
    if isinstance(loaded, types.ModuleType):
        return  # a module registers its measures when it is imported
    items = loaded if isinstance(loaded, Sequence) else [loaded]  # a list, or one Measure
    bad = [item for item in items if not isinstance(item, Measure)]
    if bad:  # a plugin that loads something else is refused, not skipped
        raise PluginError(
            f"measure plugin {entry.name!r} ({entry.value}): expected a Measure, a list of "
            f"them or a module, found {type(bad[0]).__name__}"
        )
    for item in items:
        register(item)


def measures() -> list[Measure]:
    """Every registered measure, by family (in :data:`FAMILIES` order) then declaration."""
    _load_families()
    order = {family: i for i, family in enumerate(FAMILIES)}  # other families last, by name
    return sorted(MEASURES.values(), key=lambda m: (order.get(m.family, len(order)), m.family))


def get_measure(name: str) -> Measure:
    """The measure called ``name``; an unknown name is a ValueError listing the known ones."""
    expect_type(name, "name", str, "a measure name such as 'nfairr'")
    _load_families()
    if name in MEASURES:
        return MEASURES[name]
    raise ValueError(
        f"unknown measure {name!r}; known measures: {', '.join(m.name for m in measures())}"
    )


def higher_is(label: str) -> HigherIs | None:
    """The direction of the registered measure ``label`` names (``arab_tf_f``,
    ``nfairr(tau=0)@10``); ``None`` for any other label (``nDCG@10``, a column of the user's)."""
    try:
        return parse_measure(label).measure.higher_is
    except ValueError:
        return None


def display_name(label: str) -> str:
    """How the book writes the measure ``label`` names (``nfairr@10`` → ``NFaiRR@10``); any
    other label as it is."""
    try:
        return parse_measure(label).display
    except ValueError:
        return label


def split_measure_list(text: str, empty_ok: bool = False) -> list[str]:
    """Split ``"texfair@10,nfairr(tau=0,strict=true)@5"`` at the commas outside brackets; an
    empty item (``","``, ``"a,,b"``) or an item given twice is a ValueError unless
    ``empty_ok``."""
    expect_type(text, "measures", str, "text such as 'texfair@10,nfairr@5'")
    items, depth, current = [], 0, []
    for char in text:
        if char in "([":
            depth += 1
        elif char in ")]":
            depth -= 1
            if depth < 0:
                raise ValueError(f"unbalanced ')' in measure list {text!r}")
        if char == "," and depth == 0:
            items.append("".join(current).strip())
            current = []
        else:
            current.append(char)
    if depth != 0:
        raise ValueError(f"unbalanced '(' in measure list {text!r}")
    items.append("".join(current).strip())
    if not (empty_ok or all(items)):
        raise ValueError(
            f"measure list {text!r} has an empty item; expected comma-separated measures "
            "like texfair@10,nfairr(tau=0)@5"
        )
    if not empty_ok and (twice := sorted({i for i in items if items.count(i) > 1})):
        raise ValueError(f"measure list {text!r} names {', '.join(twice)} twice; expected once")
    return items


def split_cutoff(text: str) -> tuple[str, int | None]:
    """``"texfair@10"`` → ``("texfair", 10)``, ``"nDCG"`` → ``("nDCG", None)``: the package's one
    reader of ``@k``, for any label.  An ``@`` inside parentheses is not a cut-off; a cut-off
    that is not an ASCII integer in ``1…2³¹−1`` is a ValueError naming the label."""
    if not isinstance(text, str):
        raise TypeError(f"measure label: expected a str such as 'nDCG@10', found {text!r}")
    text = text.strip()
    head, at, tail = text.rpartition("@")
    if not at or ")" in tail:
        return text, None
    try:
        cutoff = CUTOFF.parse(tail)
    except ValueError:
        raise ValueError(
            f"measure {text!r}: bad cut-off {tail!r}; expected an integer from 1 to "
            f"{2**31 - 1} after '@'"
        ) from None
    return head.strip(), cutoff


def parse_measure(text: str | MeasureRequest) -> MeasureRequest:
    """``"nfairr(tau=0)@10"`` → a :class:`MeasureRequest` (one is returned as it is); errors say
    what was expected."""
    if isinstance(text, MeasureRequest):
        return text
    if not isinstance(text, str):
        raise TypeError(f"measure: expected text or a MeasureRequest, found {text!r}")
    original = text
    if not text.strip():
        raise ValueError("empty measure name; expected e.g. texfair@10 or nfairr(tau=0)@10")
    text, cutoff = split_cutoff(text)
    name, paren, rest = text.partition("(")
    name = name.strip().lower()  # TExFAIR@10, NFaiRR@10: names (and aliases) are lower-case
    _load_families()
    given: dict[str, object] = {}
    if name in ALIASES:
        target, preset = ALIASES[name]
        measure = get_measure(target)
        given.update(dict(preset))
    else:
        measure = get_measure(name)
    if paren:
        if not rest.endswith(")"):
            raise ValueError(
                f"measure {original!r}: expected parameters as name(key=value,…), found "
                f"{'(' + rest!r}"
            )
        body = rest[:-1].strip()
        for item in split_measure_list(body, empty_ok=True) if body else []:
            key, eq, value = item.partition("=")
            key = key.strip()
            if not eq or not key:
                raise ValueError(f"measure {original!r}: parameter {item!r} is not key=value")
            try:
                parameter = measure.parameter(key)
            except ValueError as exc:
                raise ValueError(f"measure {original!r}: {exc}") from None
            if key in given and name not in ALIASES:
                raise ValueError(f"measure {original!r}: parameter {key!r} given twice")
            try:
                given[key] = parameter.parse(value)
            except ValueError as exc:
                raise ValueError(f"measure {original!r}: {exc}") from None
    return MeasureRequest(measure).with_parameters(**given).at(cutoff)


def parse_measures(text: str) -> list[MeasureRequest]:
    """A comma-separated list of measures (commas inside parameters are fine; no empty item)."""
    return [parse_measure(item) for item in split_measure_list(text)]


def describe_parameters(measure: Measure) -> str:
    """``tau=1 (float); strict=false (bool); …``: each parameter with its default and type."""
    return "; ".join(
        f"{p.name}={p.show(p.default) if p.default is not None else 'uniform'}"
        + (f" ({'|'.join(map(str, p.allowed))})" if p.allowed else f" ({p.type})")
        for p in measure.parameters
    )


def measure_table():
    """Every measure as a table: name, family, higher_is, inputs, parameters, reference."""
    import pandas as pd

    rows = [
        {
            "name": measure.name,
            "family": measure.family,
            "higher_is": measure.higher_is.value,
            "inputs": " + ".join(i.value for i in measure.inputs),
            "parameters": describe_parameters(measure),
            "reference": measure.reference,
            "level": measure.level,
            "display": measure.display,
            "definition": measure.definition,
            "undefined": measure.undefined,
        }
        for measure in measures()
    ]
    return pd.DataFrame(rows)
