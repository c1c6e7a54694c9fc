"""The metric API: measures declared next to their kernels, one parser, one listing.

In the style of ``ir_measures``, every family module (:mod:`~rankbias.metrics.rab`,
:mod:`~rankbias.metrics.fairr`, :mod:`~rankbias.metrics.texfair`, :mod:`~rankbias.metrics.duo`,
:mod:`~rankbias.metrics.rank_fairness`, :mod:`~rankbias.metrics.prf`,
:mod:`~rankbias.metrics.rbo`) ends with :func:`register` calls that declare its measures:

- ``name`` and ``family``; a one-line ``definition`` and a ``reference`` (bib key + equation);
- ``parameters``: names of entries of :data:`PARAMETERS`, each declared once with its type,
  default, allowed values and meaning, and shared by every measure that uses it;
- ``higher_is``: a :class:`HigherIs` (``fairer``, ``more_biased``, ``signed``, ``neither``);
- ``inputs``: the :class:`Input` kinds the kernel reads (term statistics, relevance judgements,
  polarisation scores, a counterfactual run, group membership);
- ``level``: ``"query"`` (one value per query and cut-off) or ``"system"`` (one per run and
  cut-off, reported with ``qid = "all"``);
- ``kernel(inputs, cutoffs, **parameters)``: reads the arrays it needs from a
  :class:`rankbias.scoring.RankedInputs` (many queries at once) and returns an array
  ``(n_queries, n_cutoffs)`` (``(n_cutoffs,)`` for a system-level measure).

:func:`parse_measure` reads ``texfair@10``, ``nfairr(tau=0)@10``, ``arab(magnitude=tf)@5`` or
``duo(variance=global)@20``; :func:`rankbias.scoring.score_runs` computes any set of them into
the tidy table ``run, qid, metric, cutoff, value``.  The ``metric`` column holds a measure's
canonical label: its name followed by the parameters given that differ from their defaults,
``nfairr(tau=0)``; the RaB/ARaB measures keep their historical labels (``arab_tf``,
``rab_bool_f``), which the parser accepts as names too.
"""

from __future__ import annotations

import enum
import importlib
import math
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field

__all__ = [
    "HigherIs",
    "Input",
    "Parameter",
    "Measure",
    "MeasureRequest",
    "PARAMETERS",
    "MEASURES",
    "FAMILIES",
    "register",
    "get_measure",
    "parse_measure",
    "parse_measures",
    "split_measure_list",
    "split_cutoff",
    "measure_table",
]


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
    POLARISATION = "polarisation_scores"  # per (query, document) scores from embeddings
    COUNTERFACTUAL_RUN = "counterfactual_run"  # the same system on a counterfactual collection
    GROUP_MEMBERSHIP = "group_membership"  # per document: in the protected group or not


@dataclass(frozen=True)
class Parameter:
    """A measure parameter, declared once and shared by every measure that uses it.

    ``type`` is one of ``int``, ``float``, ``bool``, ``str``, ``floats`` (a tuple, written
    ``(0.3,0.7)``); ``allowed`` lists the admissible values of a ``str`` parameter;
    ``minimum`` bounds a number from below (``exclusive_minimum`` for a strict bound).
    """

    name: str
    type: str
    default: object
    meaning: str
    allowed: tuple | None = None
    minimum: float | None = None
    exclusive_minimum: bool = False
    maximum: float | None = None

    def parse(self, text: str) -> object:
        """The value of ``text`` in this parameter's type; a ValueError says what was expected."""
        text = text.strip()
        expected = self.describe_type()
        try:
            if self.type == "int":
                value = int(text)
            elif self.type == "float":
                value = float(text)
                if not math.isfinite(value):
                    raise ValueError
            elif self.type == "bool":
                lowered = text.lower()
                if lowered not in ("true", "false", "1", "0", "yes", "no"):
                    raise ValueError
                value = lowered in ("true", "1", "yes")
            elif self.type == "floats":
                inner = text.removeprefix("(").removesuffix(")")
                value = tuple(float(part) for part in inner.split(","))
                if not all(math.isfinite(v) for v in value):
                    raise ValueError
            else:
                value = text
        except ValueError:
            raise ValueError(
                f"parameter {self.name}: cannot read {text!r}; expected {expected}"
            ) from None
        return self.check(value)

    def check(self, value: object) -> object:
        """``value`` if it is admissible, else a ValueError naming the parameter."""
        if value is None and self.default is None:
            return value
        if self.allowed is not None and value not in self.allowed:
            raise ValueError(
                f"parameter {self.name}: value {value!r} is not allowed; expected one of "
                f"{', '.join(map(str, self.allowed))}"
            )
        if self.type in ("int", "float") and self.minimum is not None:
            low = value <= self.minimum if self.exclusive_minimum else value < self.minimum
            if low or (self.maximum is not None and value >= self.maximum):
                raise ValueError(
                    f"parameter {self.name}: value {value!r} is out of range; expected "
                    f"{self.describe_type()}"
                )
        return value

    def describe_type(self) -> str:
        if self.allowed is not None:
            return "one of " + ", ".join(map(str, self.allowed))
        text = {"floats": "numbers like (0.5,0.5)", "bool": "true or false"}.get(
            self.type, f"a {self.type}"
        )
        if self.minimum is not None:
            text += f" {'>' if self.exclusive_minimum else '≥'} {self.minimum:g}"
        if self.maximum is not None:
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


PARAMETERS: dict[str, Parameter] = {
    p.name: p
    for p in (
        Parameter(
            "magnitude",
            "str",
            "tc",
            "per-document group magnitude: term count, ln(1 + count) (released code), "
            "1[count > 0], or Σ ln tf (Klasnja et al. 2022 Eq. 2 as printed)",
            allowed=("tc", "tf", "bool", "tf_paper"),
        ),
        Parameter("female", "str", "f", "label of the female group (RaB/ARaB, PRF)"),
        Parameter("male", "str", "m", "label of the male group (RaB/ARaB, PRF)"),
        Parameter(
            "tau", "float", 1.0, "neutrality threshold: ω = 1 when Σ_g M_g(d) ≤ τ", minimum=0.0
        ),
        Parameter("strict", "bool", False, "use Σ_g M_g(d) < τ instead of ≤ τ"),
        Parameter(
            "background",
            "str",
            "collection",
            "the set S_q whose most neutral documents give IFaiRR: the whole collection, or "
            "the background run given to the scorer",
            allowed=("collection", "run"),
        ),
        Parameter("targets", "floats", None, "target share per group (uniform if not given)"),
        Parameter(
            "distance",
            "str",
            "l1",
            "AWRF distance to the target: L1, L2, Jensen–Shannon (bits), KL (nats)",
            allowed=("l1", "l2", "jsd", "kl"),
        ),
        Parameter(
            "variance",
            "str",
            "prefix",
            "centre of the prefix variance: the prefix's own mean (released code) or the mean "
            "of all scores (Ziems et al. 2024 Eq. 5)",
            allowed=("prefix", "global"),
        ),
        Parameter("step", "int", 1, "distance s between cut points i = s, 2s, …", minimum=1),
        Parameter("include_full", "bool", False, "count the cut point i = n too (Duo)"),
        Parameter(
            "discount",
            "str",
            "log2(i+1)",
            "cut-point discount of rND/rKL: 1/log2(i+1) (FairRank code) or 1/log2(i) "
            "(Yang & Stoyanovich 2017, skips i = 1)",
            allowed=("log2(i+1)", "log2(i)"),
        ),
        Parameter(
            "normalisation",
            "str",
            "max",
            "rND/rKL normaliser over all orderings: raw / max, or (raw − min) / (max − min) "
            "(Yang & Stoyanovich 2017 Eq. 2; Ziems et al. 2024 Eq. 2)",
            allowed=("max", "min_max"),
        ),
        Parameter(
            "kl_smoothing",
            "str",
            "none",
            "rKL: 0·log 0 = 0, or FairRank's replacement of shares 0 and 1 by 0.001",
            allowed=("none", "fairrank"),
        ),
        Parameter(
            "score_normalisation",
            "str",
            "min_max",
            "map of retrieval scores into [0, 1] for PRF/nPRF: per-query min–max, sigmoid, "
            "or none (scores already in [0, 1])",
            allowed=("min_max", "sigmoid", "none"),
        ),
        Parameter(
            "ddof",
            "int",
            0,
            "TS: 0 = population variances (Li et al. 2022), 1 = sample variances",
            allowed=(0, 1),
        ),
        Parameter(
            "p",
            "float",
            0.9,
            "RBO persistence, strictly between 0 and 1",
            minimum=0.0,
            exclusive_minimum=True,
            maximum=1.0,
        ),
    )
}

#: The families of the package, in the order the listing shows them (a family not listed here,
#: e.g. a user's new module, follows them).
FAMILIES = ("rab", "fairr", "texfair", "duo", "rank_fairness", "prf", "rbo")
_FAMILY_MODULES = tuple(f"rankbias.metrics.{family}" for family in FAMILIES)

Kernel = Callable[..., object]


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
    parameters: tuple[str, ...] = ()
    level: str = "query"
    label: Callable[[Mapping[str, object]], str] | None = field(default=None, compare=False)
    label_parameters: tuple[str, ...] = ()

    def __post_init__(self) -> None:
        if not isinstance(self.higher_is, HigherIs):
            raise TypeError(f"{self.name}: higher_is must be a HigherIs, found {self.higher_is!r}")
        if not all(isinstance(i, Input) for i in self.inputs):
            raise TypeError(f"{self.name}: inputs must be Input members, found {self.inputs}")
        unknown = [p for p in self.parameters if p not in PARAMETERS]
        if unknown:
            raise ValueError(f"{self.name}: parameters {unknown} are not declared in PARAMETERS")
        if self.level not in ("query", "system"):
            raise ValueError(f"{self.name}: level must be 'query' or 'system'")

    def defaults(self) -> dict[str, object]:
        return {p: PARAMETERS[p].default for p in self.parameters}


@dataclass(frozen=True)
class MeasureRequest:
    """A parsed measure: the measure, the parameters given explicitly, and an optional cut-off."""

    measure: Measure
    given: tuple[tuple[str, object], ...] = ()
    cutoff: int | None = None

    def parameters(self, options: Mapping[str, object] | None = None) -> dict[str, object]:
        """Declared defaults, overridden by ``options`` (the scorer's keyword options, for the
        parameters this measure declares), overridden by the parameters given in the name."""
        values = self.measure.defaults()
        for name, value in (options or {}).items():
            if name in values:
                values[name] = value
        values.update(dict(self.given))
        return values

    @property
    def label(self) -> str:
        """The ``metric`` column: name plus the given parameters that differ from defaults."""
        measure = self.measure
        given = dict(self.given)
        base = measure.label(measure.defaults() | given) if measure.label else measure.name
        shown = [
            f"{p}={PARAMETERS[p].show(given[p])}"
            for p in measure.parameters
            if p in given
            and p not in measure.label_parameters
            and given[p] != PARAMETERS[p].default
        ]
        return base + (f"({','.join(shown)})" if shown else "")

    def __str__(self) -> str:
        return self.label + (f"@{self.cutoff}" if self.cutoff is not None else "")


MEASURES: dict[str, Measure] = {}
#: Other names the parser accepts: name → (measure name, parameters), e.g. ``arab_tf``.
ALIASES: dict[str, tuple[str, tuple[tuple[str, object], ...]]] = {}


def register(measure: Measure, aliases: Mapping[str, Mapping[str, object]] | None = None):
    """Add ``measure`` (and parser aliases ``name → parameters``) to the registry."""
    existing = MEASURES.get(measure.name)
    if existing is not None and existing != measure:
        raise ValueError(f"measure {measure.name!r} is registered twice")
    MEASURES[measure.name] = measure
    for alias, params in (aliases or {}).items():
        ALIASES[alias] = (measure.name, tuple(params.items()))
    return measure


def _load_families() -> None:
    """Import every module of :mod:`rankbias.metrics`: a new family module registers itself."""
    import pkgutil

    import rankbias.metrics as package

    for module in _FAMILY_MODULES:
        importlib.import_module(module)
    for info in pkgutil.iter_modules(package.__path__):
        importlib.import_module(f"{package.__name__}.{info.name}")


def measures() -> list[Measure]:
    """Every registered measure, by family (in :data:`FAMILIES` order) then declaration."""
    _load_families()
    order = {family: i for i, family in enumerate(FAMILIES)}  # other families last, by name
    return sorted(MEASURES.values(), key=lambda m: (order.get(m.family, len(order)), m.family))


def get_measure(name: str) -> Measure:
    """The measure called ``name``; an unknown name is a ValueError listing the known ones."""
    _load_families()
    if name in MEASURES:
        return MEASURES[name]
    raise ValueError(
        f"unknown measure {name!r}; known measures: {', '.join(m.name for m in measures())}"
    )


def higher_is(label: str) -> HigherIs | None:
    """The direction of the registered measure ``label`` names (aliases, parameters and
    ``@k`` allowed: ``arab_tf_f``, ``nfairr(tau=0)@10``); ``None`` when it names none (an
    effectiveness measure such as ``nDCG@10``, or a column of the user's own)."""
    try:
        return parse_measure(label).measure.higher_is
    except ValueError:
        return None


def split_measure_list(text: str) -> list[str]:
    """Split ``"texfair@10,nfairr(tau=0,strict=true)@5"`` at the commas outside brackets."""
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
    return items


def split_cutoff(text: str) -> tuple[str, int | None]:
    """``"texfair@10"`` → ``("texfair", 10)``, ``"nDCG"`` → ``("nDCG", None)``: the package's one
    reader of the ``@k`` suffix, for registered measures and any other label (``nDCG@10``).

    An ``@`` inside parentheses (``name(key=a@b)``) is not a cut-off; a cut-off that is not an
    integer ≥ 1 is a ValueError naming the label.
    """
    original = text
    text = text.strip()
    head, at, tail = text.rpartition("@")
    if not at or ")" in tail:
        return text, None
    if not tail.strip().isdigit() or int(tail) < 1:
        raise ValueError(
            f"measure {original!r}: bad cut-off {tail!r}; expected an integer ≥ 1 after '@'"
        )
    return head.strip(), int(tail)


def parse_measure(text: str) -> MeasureRequest:
    """``"nfairr(tau=0)@10"`` → a :class:`MeasureRequest`; errors say what was expected."""
    original = text
    if not text.strip():
        raise ValueError("empty measure name; expected e.g. texfair@10 or nfairr(tau=0)@10")
    text, cutoff = split_cutoff(text)
    name, paren, rest = text.partition("(")
    name = name.strip()
    _load_families()
    if name not in MEASURES and name not in ALIASES:
        name = name.lower()  # TExFAIR@10, NFaiRR@10: names are case-insensitive
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
        for item in split_measure_list(body) if body else []:
            key, eq, value = item.partition("=")
            key = key.strip()
            if not eq or not key:
                raise ValueError(f"measure {original!r}: parameter {item!r} is not key=value")
            if key not in measure.parameters:
                known = ", ".join(measure.parameters) or "none"
                raise ValueError(
                    f"measure {original!r}: unknown parameter {key!r} of {measure.name}; "
                    f"its parameters: {known}"
                )
            if key in given and name not in ALIASES:
                raise ValueError(f"measure {original!r}: parameter {key!r} given twice")
            given[key] = PARAMETERS[key].parse(value)
    ordered = tuple((p, given[p]) for p in measure.parameters if p in given)
    return MeasureRequest(measure, ordered, cutoff)


def parse_measures(text: str) -> list[MeasureRequest]:
    """A comma-separated list of measures (commas inside parameters are fine)."""
    return [parse_measure(item) for item in split_measure_list(text)]


def measure_table():
    """Every measure as a table: name, family, higher_is, inputs, parameters, reference."""
    import pandas as pd

    rows = []
    for measure in measures():
        params = "; ".join(
            f"{p}={PARAMETERS[p].show(PARAMETERS[p].default) if PARAMETERS[p].default is not None else 'uniform'}"  # noqa: E501
            + (
                f" ({'|'.join(map(str, PARAMETERS[p].allowed))})"
                if PARAMETERS[p].allowed
                else f" ({PARAMETERS[p].type})"
            )
            for p in measure.parameters
        )
        rows.append(
            {
                "name": measure.name,
                "family": measure.family,
                "higher_is": measure.higher_is.value,
                "inputs": " + ".join(i.value for i in measure.inputs),
                "parameters": params,
                "reference": measure.reference,
                "level": measure.level,
                "definition": measure.definition,
            }
        )
    return pd.DataFrame(rows)
