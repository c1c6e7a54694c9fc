"""Word lists: groups of terms, the project's default gendered pairs, stratified subsampling.

A *lexicon* assigns each term to exactly one group (``METRICS.md`` §0: groups ``G``, term sets
``V_g``).  On disk a lexicon is a ``term,group`` file, one term per line — the format of the
public lists (Rekabsaz & Schedl's gender-specific list, the CPJKU gender-representative list).
Terms are lower-cased when read, as the reference code does, because the tokenisers lower-case
the text.  The project's own default list is a *pair* file (``female,male`` per line, see
``resources/README.md``), read by :func:`read_pairs` and :func:`default_lexicon`.

Everything here is strict: a malformed line, an empty term, a term listed twice (in the same or
in different groups), fewer than two groups, or a group the caller did not expect is an
:class:`~rankbias.errors.InputError` naming the file and line.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from importlib import resources
from pathlib import Path
from types import MappingProxyType

import numpy as np

from rankbias.errors import InputError, located

__all__ = [
    "Lexicon",
    "read_lexicon",
    "read_pairs",
    "default_lexicon",
    "default_pairs_path",
    "subsample",
]

DEFAULT_PAIRS_FILE = "gendered_terms.csv"


@dataclass(frozen=True, eq=False)
class Lexicon:
    """Terms assigned to groups; immutable.

    Attributes
    ----------
    groups:
        Group labels in a fixed order (the column order of every per-group array in the
        package), e.g. ``("f", "m")``.
    term_to_group:
        Read-only mapping ``term -> group label``; every term belongs to one group.
    pairs:
        For a lexicon built from a pair file, the ``(female, male)`` pairs in file order;
        otherwise ``None``.  The pairs drive counterfactual substitution.
    source:
        Where the lexicon came from (a path or a description), for messages and data cards.
    """

    groups: tuple[str, ...]
    term_to_group: Mapping[str, str]
    pairs: tuple[tuple[str, str], ...] | None = None
    source: str = "<memory>"
    _terms_by_group: Mapping[str, tuple[str, ...]] = field(init=False, repr=False)

    def __post_init__(self) -> None:
        groups = tuple(self.groups)
        if len(groups) < 2:
            raise InputError(
                f"{self.source}: found {len(groups)} group(s) {list(groups)}; "
                "expected at least 2 groups"
            )
        if len(set(groups)) != len(groups):
            raise InputError(f"{self.source}: group labels repeat in {list(groups)}")
        mapping = dict(self.term_to_group)
        unknown = sorted({g for g in mapping.values()} - set(groups))
        if unknown:
            raise InputError(f"{self.source}: terms assigned to unknown group(s) {unknown}")
        by_group = {g: tuple(sorted(t for t, tg in mapping.items() if tg == g)) for g in groups}
        empty = [g for g, ts in by_group.items() if not ts]
        if empty:
            raise InputError(f"{self.source}: group(s) {empty} have no terms; expected ≥ 1 each")
        object.__setattr__(self, "groups", groups)
        object.__setattr__(self, "term_to_group", MappingProxyType(mapping))
        object.__setattr__(self, "_terms_by_group", MappingProxyType(by_group))

    @classmethod
    def from_mapping(
        cls, term_to_group: Mapping[str, str], groups: Iterable[str] | None = None, **kw
    ) -> Lexicon:
        """Build a lexicon from ``{term: group}``; groups default to the sorted labels used."""
        groups = tuple(groups) if groups is not None else tuple(sorted(set(term_to_group.values())))
        return cls(groups=groups, term_to_group=dict(term_to_group), **kw)

    @property
    def terms(self) -> tuple[str, ...]:
        """All terms, grouped in the order of :attr:`groups`, sorted within a group."""
        return tuple(t for g in self.groups for t in self._terms_by_group[g])

    def terms_of(self, group: str) -> tuple[str, ...]:
        """The terms of one group, sorted (a KeyError names an unknown group)."""
        try:
            return self._terms_by_group[group]
        except KeyError:
            raise KeyError(f"no group {group!r}; the groups are {list(self.groups)}") from None

    def group_index(self) -> np.ndarray:
        """For each term of :attr:`terms`, the index of its group in :attr:`groups`."""
        position = {g: i for i, g in enumerate(self.groups)}
        return np.array([position[self.term_to_group[t]] for t in self.terms], dtype=np.int64)

    def __len__(self) -> int:
        return len(self.term_to_group)

    def __contains__(self, term: object) -> bool:
        return term in self.term_to_group

    def __repr__(self) -> str:
        sizes = ", ".join(f"{g}: {len(self._terms_by_group[g])}" for g in self.groups)
        # file names only: a repr shown in the book must not depend on where it was built
        source = re.sub(r"\S*/([^/\s]+)", r"\1", str(self.source))
        return f"Lexicon({sizes}; from {source})"


def _data_lines(path: Path):
    """Yield ``(line_number, stripped_text)`` for each line of a UTF-8 text file."""
    try:
        text = path.read_text(encoding="utf-8")
    except UnicodeDecodeError as exc:
        line = path.read_bytes()[: exc.start].count(b"\n") + 1
        raise located(path, line, f"byte {exc.object[exc.start]:#04x} is not UTF-8") from None
    for number, line in enumerate(text.splitlines(), start=1):
        yield number, line.strip()


def read_lexicon(path: str | Path, groups: Iterable[str] | None = None) -> Lexicon:
    """Read a ``term,group`` word list (one term per line) into a :class:`Lexicon`.

    Terms are lower-cased and surrounding spaces removed.  If ``groups`` is given, it fixes the
    group order and every label in the file must be one of them (an unknown label is an error
    naming the line); otherwise the groups are the labels found, sorted.  A final empty line
    (a file ending in a newline) is allowed; any other empty line is an error.
    """
    path = Path(path)
    expected = tuple(groups) if groups is not None else None
    mapping: dict[str, str] = {}
    first_seen: dict[str, tuple[int, str]] = {}
    lines = list(_data_lines(path))
    while lines and lines[-1][1] == "":
        lines.pop()
    if not lines:
        raise located(path, None, "the word list is empty; expected 'term,group' lines")
    for number, line in lines:
        fields = [f.strip() for f in line.split(",")]
        if len(fields) != 2:
            raise located(
                path, number, f"found {len(fields)} column(s) in {line!r}; expected 2: term,group"
            )
        term, group = fields[0].lower(), fields[1]
        if not term:
            raise located(path, number, f"empty term in {line!r}; expected 'term,group'")
        if not group:
            raise located(path, number, f"empty group label in {line!r}; expected 'term,group'")
        if expected is not None and group not in expected:
            raise located(
                path, number, f"unknown group label {group!r}; expected one of {list(expected)}"
            )
        if term in first_seen:
            line0, group0 = first_seen[term]
            raise located(
                path,
                number,
                f"term {term!r} (group {group!r}) is already listed on line {line0} "
                f"(group {group0!r}); expected each term once",
            )
        first_seen[term] = (number, group)
        mapping[term] = group
    found = sorted(set(mapping.values()))
    if expected is None and len(found) < 2:
        raise located(path, None, f"found {len(found)} group(s) {found}; expected at least 2")
    return Lexicon(
        groups=expected if expected is not None else tuple(found),
        term_to_group=mapping,
        source=str(path),
    )


def read_pairs(path: str | Path) -> tuple[tuple[str, str], ...]:
    """Read a ``female,male`` pair file (with that header) into a tuple of pairs.

    Every term must appear once in the whole file (so the pairs define a one-to-one map in both
    directions); a term repeated, an empty term or a line without exactly two columns is an
    error naming the line.
    """
    path = Path(path)
    lines = list(_data_lines(path))
    while lines and lines[-1][1] == "":
        lines.pop()
    if not lines or [f.strip() for f in lines[0][1].split(",")] != ["female", "male"]:
        raise located(path, 1, "expected the header 'female,male'")
    pairs: list[tuple[str, str]] = []
    seen: dict[str, int] = {}
    for number, line in lines[1:]:
        fields = [f.strip().lower() for f in line.split(",")]
        if len(fields) != 2:
            raise located(
                path, number, f"found {len(fields)} column(s) in {line!r}; expected 2: female,male"
            )
        for term in fields:
            if not term:
                raise located(path, number, f"empty term in {line!r}; expected 'female,male'")
            if term in seen:
                raise located(
                    path,
                    number,
                    f"term {term!r} is already listed on line {seen[term]}; "
                    "expected each term once",
                )
            seen[term] = number
        pairs.append((fields[0], fields[1]))
    if not pairs:
        raise located(path, None, "no pairs after the header")
    return tuple(pairs)


def default_pairs_path() -> Path:
    """Path of the project's own ``female,male`` pair list shipped with the package."""
    return Path(str(resources.files("rankbias") / "resources" / DEFAULT_PAIRS_FILE))


def lexicon_from_pairs(pairs: Iterable[tuple[str, str]], source: str = "<pairs>") -> Lexicon:
    """A two-group lexicon (``f``, ``m``) from ``(female, male)`` pairs, keeping the pairs."""
    pairs = tuple(pairs)
    mapping: dict[str, str] = {}
    for female, male in pairs:
        for term, group in ((female, "f"), (male, "m")):
            if term in mapping:
                raise InputError(f"{source}: term {term!r} appears in more than one pair")
            mapping[term] = group
    return Lexicon(groups=("f", "m"), term_to_group=mapping, pairs=pairs, source=source)


def default_lexicon() -> Lexicon:
    """The project's default gendered lexicon (groups ``f``, ``m``) with its pairs."""
    path = default_pairs_path()
    return lexicon_from_pairs(read_pairs(path), source=str(path))


def subsample(lexicon: Lexicon, fraction: float, seed: int, stratified: bool = True) -> Lexicon:
    """A random sub-lexicon keeping ``fraction`` of the terms (METRICS.md §8, RQ2).

    Randomness comes only from ``numpy.random.default_rng(seed)``.  ``stratified=True``
    (default) keeps ``round(fraction * n_g)`` terms of each group ``g`` (at least one), so the
    groups keep their relative sizes; ``stratified=False`` draws ``round(fraction * n)`` terms
    from the pooled list (at least one per group is then *not* guaranteed, and a draw that
    empties a group is an error).  The pairs of a pair lexicon are kept where both terms
    survive.
    """
    if not 0.0 < fraction <= 1.0:
        raise ValueError(f"fraction must be in (0, 1], found {fraction}")
    rng = np.random.default_rng(seed)
    kept: list[str] = []
    if stratified:
        for group in lexicon.groups:
            terms = lexicon.terms_of(group)
            n_keep = max(1, int(round(fraction * len(terms))))
            chosen = rng.choice(len(terms), size=n_keep, replace=False)
            kept.extend(terms[i] for i in np.sort(chosen))
    else:
        terms = lexicon.terms
        n_keep = max(1, int(round(fraction * len(terms))))
        chosen = rng.choice(len(terms), size=n_keep, replace=False)
        kept.extend(terms[i] for i in np.sort(chosen))
    mapping = {t: lexicon.term_to_group[t] for t in kept}
    pairs = None
    if lexicon.pairs is not None:
        pairs = tuple(p for p in lexicon.pairs if p[0] in mapping and p[1] in mapping)
    return Lexicon(
        groups=lexicon.groups,
        term_to_group=mapping,
        pairs=pairs,
        source=f"{lexicon.source} (fraction {fraction}, seed {seed}, "
        f"{'stratified' if stratified else 'pooled'})",
    )
