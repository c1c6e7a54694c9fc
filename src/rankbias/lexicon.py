"""Word lists: groups of terms, the project's default gendered pairs, stratified subsampling.

A *lexicon* assigns each term to exactly one group (the book's "Conventions" page: groups
``G``, term sets ``V_g``).  Files are ``term,group`` lists (the public lists' format,
:func:`read_lexicon`) or the project's ``female,male`` pair files (``resources/README.md``,
:func:`read_pairs`); :func:`read_word_list` tells them apart by the first line.  Terms are
lower-cased, as the tokenisers lower-case the text.
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from importlib import resources
from pathlib import Path
from types import MappingProxyType

import numpy as np

from rankbias.errors import InputError, expect_flag, expect_items, expect_type, located
from rankbias.inputs import Source, open_lines, source_name

__all__ = [
    "Lexicon",
    "read_lexicon",
    "read_word_list",
    "lexicon_from_pairs",
    "normalise_label",
    "normalise_term",
    "HEADER_TERMS",
    "HEADER_LABELS",
    "read_pairs",
    "default_lexicon",
    "default_pairs_path",
    "subsample",
]

DEFAULT_PAIRS_FILE = "gendered_terms.csv"


@dataclass(frozen=True, eq=False)
class Lexicon:
    """Terms assigned to groups (``term_to_group``, read-only); ``groups`` fixes the column
    order of every per-group array; ``pairs`` are a pair file's ``(female, male)`` pairs (else
    ``None``); ``source`` names it in messages and data cards.  At least 2 groups, none empty."""

    groups: tuple[str, ...]
    term_to_group: Mapping[str, str]
    pairs: tuple[tuple[str, str], ...] | None = None
    source: str = "<memory>"
    _terms_by_group: Mapping[str, tuple[str, ...]] = field(init=False, repr=False)

    def __post_init__(self) -> None:
        groups = tuple(expect_items(self.groups, "groups", "a list of group labels"))
        expect_type(self.term_to_group, "term_to_group", Mapping, "a mapping of terms to groups")
        if len(groups) < 2:
            raise InputError(
                f"{self.source}: found {len(groups)} group(s) {list(groups)}; "
                "expected at least 2 groups"
            )
        if len(set(groups)) != len(groups):
            raise InputError(f"{self.source}: group labels repeat in {list(groups)}")
        mapping = dict(self.term_to_group)
        unknown = sorted(set(mapping.values()) - set(groups))
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
        for term, group in dict(term_to_group).items():
            if not (isinstance(term, str) and isinstance(group, str)):
                raise TypeError(
                    f"term_to_group: expected str terms and groups, found {term!r}: {group!r}"
                )
        groups = (
            _labels(groups) if groups is not None else tuple(sorted(set(term_to_group.values())))
        )
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


#: a first line is a header when its term field is one of these …
HEADER_TERMS = frozenset({"term", "terms", "word", "words", "token", "tokens", "name", "names"})
#: … or its group field is one of these (and the label is not used by any other line)
HEADER_LABELS = frozenset(
    {"group", "groups", "label", "labels", "gender", "category", "class", "attribute"}
)


def _looks_like_header(term: str, label: str) -> bool:
    return normalise_term(term) in HEADER_TERMS and normalise_label(label) in HEADER_LABELS


def _data_lines(source: Source, what: str = "word list") -> list[tuple[int, str]]:
    """``(line_number, stripped_text)`` of every line, trailing blank lines removed."""
    lines = [(number, line.strip()) for number, line in open_lines(source, what)]
    while lines and lines[-1][1] == "":
        lines.pop()
    return lines


def _split_pair(where: str, number: int, line: str, names: str) -> tuple[str, str]:
    if not line:
        raise located(where, number, f"found a blank line; expected '{names}'")
    fields = [f.strip() for f in line.split(",")]
    if len(fields) != 2:
        raise located(
            where, number, f"found {len(fields)} column(s) in {line!r}; expected 2: {names}"
        )
    return fields[0], fields[1]


def _check_field(where: str, number: int, line: str, value: str, what: str, names: str) -> None:
    """Refuse an empty or quoted ``value``, or one with a control or format character (a
    zero-width space)."""
    if not value:
        raise located(where, number, f"empty {what} in {line!r}; expected '{names}'")
    if len(value) >= 2 and value[0] == value[-1] and value[0] in "\"'":
        raise located(
            where,
            number,
            f"{what} {value} is quoted in {line!r}; expected unquoted '{names}' fields "
            f"(the quotes would become part of the {what})",
        )
    for ch in value:
        if unicodedata.category(ch) in ("Cc", "Cf"):
            hidden = f"U+{ord(ch):04X} ({unicodedata.name(ch, 'a control character')})"
            raise located(
                where,
                number,
                f"{what} {value!r} contains the invisible character {hidden}; expected visible "
                "text only (it would never match the text)",
            )


def normalise_label(label: str) -> str:
    """A group label as the package compares it: surrounding white space removed, Unicode
    composed (NFC), lower case."""
    expect_type(label, "label", str, "a str")
    return unicodedata.normalize("NFC", label.strip()).lower()


def normalise_term(term: str) -> str:
    """A term as the package counts it: Unicode composed (NFC) and lower case."""
    expect_type(term, "term", str, "a str")
    return unicodedata.normalize("NFC", term).lower()


def read_lexicon(source: Source, groups: Iterable[str] | None = None) -> Lexicon:
    """Read a ``term,group`` word list (a path or a stream, :mod:`rankbias.inputs`).

    Terms and labels (and ``groups``) are stripped and lower-cased.  The first line is a header,
    skipped and noted in ``source``, when its term is one of :data:`HEADER_TERMS` or its label
    one of :data:`HEADER_LABELS` used by no other line.  ``groups`` fixes the group order and
    the labels allowed; otherwise the labels found, sorted.  Trailing blank lines are ignored.
    Refused, as an :class:`~rankbias.errors.InputError` naming ``file:line``: a blank line
    between terms, a term with white space, quotes or an invisible character, a term listed
    twice, an unexpected label, fewer than 2 groups, a pair file's ``female,male`` header.
    """
    return _lexicon_from_lines(source_name(source), _data_lines(source), groups)


def _labels(groups) -> tuple:
    """``groups`` as a tuple of labels; a string (``"mf"``, read as two one-letter labels) is
    a ``TypeError``."""
    if isinstance(groups, str):
        raise TypeError(f"groups: expected a sequence of group labels, found the string {groups!r}")
    return tuple(groups)


def _is_pair_header(line: str) -> bool:
    return [f.strip().lower() for f in line.split(",")] == ["female", "male"]


def _lexicon_from_lines(
    where: str, lines: list[tuple[int, str]], groups: Iterable[str] | None
) -> Lexicon:
    """:func:`read_lexicon` on lines already read (``where`` names them in messages)."""
    expected = None
    if groups is not None:
        expected = tuple(normalise_label(g) for g in _labels(groups))
        if len(set(expected)) != len(expected):
            raise InputError(f"groups {list(groups)} repeat after lower-casing; expected distinct")
    if not lines:
        raise located(where, None, "the word list is empty; expected 'term,group' lines")
    parsed = [(n, line, *_split_pair(where, n, line, "term,group")) for n, line in lines]
    first_number, first_line, first_term, first_label = parsed[0]
    if (first_term.lower(), normalise_label(first_label)) == ("female", "male"):
        raise located(
            where,
            first_number,
            "found the header 'female,male' of a pair file; expected 'term,group' lines "
            "(read pair files with read_pairs, or either format with read_word_list)",
        )
    source_text = where
    other_labels = {
        normalise_label(label)
        for _, _, term, label in parsed[1:]
        if not _looks_like_header(term, label)  # refused below, whatever the first line
    }
    known = other_labels | set(expected or ())
    label0 = normalise_label(first_label)
    if label0 not in known and (first_term.lower() in HEADER_TERMS or label0 in HEADER_LABELS):
        parsed = parsed[1:]
        source_text = f"{where} (header {first_line!r} skipped)"
        if not parsed:
            raise located(where, None, "the word list has a header but no terms")
    first_seen: dict[str, tuple[int, str]] = {}
    for number, line, raw_term, raw_label in parsed:
        term, group = normalise_term(raw_term), normalise_label(raw_label)
        if _looks_like_header(term, group):
            raise located(
                where,
                number,
                f"found the header line {line!r} after line {first_number}; expected a header "
                "only on the first line (were two word lists joined?)",
            )
        _check_field(where, number, line, term, "term", "term,group")
        _check_field(where, number, line, group, "group label", "term,group")
        if any(ch.isspace() for ch in term):
            raise located(
                where,
                number,
                f"term {term!r} contains white space; expected a single token (the tokenisers "
                "split on white space, so it could never be counted)",
            )
        if expected is not None and group not in expected:
            raise located(
                where, number, f"unknown group label {group!r}; expected one of {list(expected)}"
            )
        line0, group0 = first_seen.setdefault(term, (number, group))
        if line0 != number:
            raise located(
                where,
                number,
                f"term {term!r} (group {group!r}) is already listed on line {line0} "
                f"(group {group0!r}); expected each term once",
            )
    mapping = {term: group for term, (_, group) in first_seen.items()}
    found = sorted(set(mapping.values()))
    if expected is None and len(found) < 2:
        raise located(where, None, f"found {len(found)} group(s) {found}; expected at least 2")
    groups = expected if expected is not None else tuple(found)
    return Lexicon(groups, mapping, source=source_text)


def read_pairs(source: Source) -> tuple[tuple[str, str], ...]:
    """Read a ``female,male`` pair file (with that header; read like :func:`read_lexicon`).

    Each term once in the file (a one-to-one map); an empty or repeated term, a blank line or a
    line without two columns is an error naming the line.
    """
    return _pairs_from_lines(source_name(source), _data_lines(source, "pair file"))


def _pairs_from_lines(where: str, lines: list[tuple[int, str]]) -> tuple[tuple[str, str], ...]:
    """:func:`read_pairs` on lines already read (``where`` names them in messages)."""
    if not lines or not _is_pair_header(lines[0][1]):
        raise located(where, 1, "expected the header 'female,male'")
    pairs: list[tuple[str, str]] = []
    seen: dict[str, int] = {}
    for number, line in lines[1:]:
        female, male = _split_pair(where, number, line, "female,male")
        fields = (normalise_term(female), normalise_term(male))
        for term in fields:
            _check_field(where, number, line, term, "term", "female,male")
            if term in seen:
                raise located(
                    where,
                    number,
                    f"term {term!r} is already listed on line {seen[term]}; "
                    "expected each term once",
                )
            seen[term] = number
        pairs.append(fields)
    if not pairs:
        raise located(where, None, "no pairs after the header")
    return tuple(pairs)


def read_word_list(source: Source) -> Lexicon:
    """Read a pair file (first line ``female,male``: groups ``f``, ``m``, pairs kept) or else a
    ``term,group`` list, reading the source once (a pipe works)."""
    where = source_name(source)
    lines = _data_lines(source)
    if lines and _is_pair_header(lines[0][1]):
        return lexicon_from_pairs(_pairs_from_lines(where, lines), source=where)
    return _lexicon_from_lines(where, lines, None)


def default_pairs_path() -> Path:
    """Path of the project's own ``female,male`` pair list shipped with the package."""
    return Path(str(resources.files("rankbias") / "resources" / DEFAULT_PAIRS_FILE))


def lexicon_from_pairs(pairs: Iterable[tuple[str, str]], source: str = "<pairs>") -> Lexicon:
    """A two-group lexicon (``f``, ``m``) from ``(female, male)`` pairs, keeping the pairs."""
    expected = "an iterable of (female, male) pairs of str"
    pairs = tuple(expect_type(pairs, "pairs", Iterable, expected))
    for pair in pairs:
        if not (isinstance(pair, tuple | list) and len(pair) == 2):
            raise TypeError(f"pairs: expected {expected}, found {pair!r}")
        for term in pair:
            expect_type(term, "pairs", str, expected)
    pairs = tuple(tuple(pair) for pair in pairs)
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
    """A random sub-lexicon keeping ``fraction`` of the terms (Klasnja et al. (2022), RQ2),
    drawn with ``numpy.random.default_rng(seed)``.

    ``stratified=True`` keeps ``round(fraction * n_g)`` terms (at least one) of each group;
    ``False`` draws from the pooled list, and a draw that empties a group is an error.  Pairs
    are kept where both terms survive.
    """
    expect_type(lexicon, "lexicon", Lexicon, "a Lexicon")
    if isinstance(fraction, bool) or not isinstance(fraction, int | float | np.floating):
        raise TypeError(f"fraction: expected a number in (0, 1], found {fraction!r}")
    if not 0.0 < fraction <= 1.0:
        raise ValueError(f"fraction: expected a number in (0, 1], found {fraction}")
    if isinstance(seed, bool) or not isinstance(seed, int | np.integer) or seed < 0:
        raise TypeError(
            f"seed: expected an integer ≥ 0 (explicit, for a reproducible draw), found {seed!r}"
        )
    stratified = expect_flag(stratified, "stratified")
    rng = np.random.default_rng(seed)
    kept: list[str] = []
    pools = [lexicon.terms_of(g) for g in lexicon.groups] if stratified else [lexicon.terms]
    for terms in pools:
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
