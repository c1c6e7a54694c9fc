"""Word lists: groups of terms, the project's default gendered pairs, stratified subsampling.

A *lexicon* assigns each term to exactly one group (the book's "Conventions" page: groups
``G``, term sets ``V_g``).  On disk a lexicon is a ``term,group`` file, one term per line — the
format of the public lists (Rekabsaz & Schedl's gender-specific list, the CPJKU
gender-representative list).  Terms are lower-cased when read, as the reference code does,
because the tokenisers lower-case the text.  The project's own lists are *pair* files (the
header ``female,male``, then one pair per line, see ``resources/README.md``), read by
:func:`read_pairs` and :func:`default_lexicon`.  :func:`read_word_list` reads either format,
telling them apart by the first line (what ``rankbias stats/score --terms`` uses).

Everything here is strict: a malformed line, an empty term, a term listed twice (in the same or
in different groups), fewer than two groups, or a group the caller did not expect is an
:class:`~rankbias.errors.InputError` naming the file and line.  Group labels are normalised
(stripped, lower-cased) and a header line is recognised explicitly and skipped, never read as
a term; :func:`read_lexicon` states the rules.
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

from rankbias.errors import InputError, located
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


def _invisible(text: str) -> str | None:
    """The first control or format character of ``text`` (a zero-width space, a byte-order
    mark, a soft hyphen, …) as ``U+XXXX``, or ``None``: such a character makes a term or label
    that looks like another but never matches it."""
    for ch in text:
        if unicodedata.category(ch) in ("Cc", "Cf"):
            return f"U+{ord(ch):04X} ({unicodedata.name(ch, 'a control character')})"
    return None


def _check_field(where: str, number: int, line: str, value: str, what: str, names: str) -> None:
    if len(value) >= 2 and value[0] == value[-1] and value[0] in "\"'":
        raise located(
            where,
            number,
            f"{what} {value} is quoted in {line!r}; expected unquoted '{names}' fields "
            f"(the quotes would become part of the {what})",
        )
    hidden = _invisible(value)
    if hidden is not None:
        raise located(
            where,
            number,
            f"{what} {value!r} contains the invisible character {hidden}; expected visible "
            "text only (it would never match the text)",
        )


def normalise_label(label: str) -> str:
    """A group label as the package compares it: surrounding white space removed, Unicode
    composed (NFC), lower case."""
    return unicodedata.normalize("NFC", label.strip()).lower()


def normalise_term(term: str) -> str:
    """A term as the package counts it: Unicode composed (NFC) and lower case, so ``Café``
    typed with a combining accent (as some editors and macOS file names write it) is the
    ``café`` of the text."""
    return unicodedata.normalize("NFC", term).lower()


def read_lexicon(source: Source, groups: Iterable[str] | None = None) -> Lexicon:
    """Read a ``term,group`` word list (one term per line) into a :class:`Lexicon`.

    ``source`` is a path or a stream, opened by :mod:`rankbias.inputs` (gzip by content, UTF-8,
    a byte-order mark dropped, ``\\n``/``\\r\\n``/``\\r`` line ends).  The rules:

    - **Normalisation.**  Terms and group labels are stripped of surrounding white space and
      lower-cased (``He`` → ``he``, `` M `` → ``m``), the labels in ``groups`` too, so ``man,M``
      and ``man,m`` are the same line.  A term containing white space is refused: the
      tokenisers split on it, so such a term could never be counted.
    - **Header.**  The first line is a *header* and is skipped when its term field is one of
      :data:`HEADER_TERMS` (``term``, ``word``, …) or its group field is one of
      :data:`HEADER_LABELS` (``group``, ``label``, ``gender``, …), provided that group field is
      not a label of any other line (nor one of ``groups``).  ``term,group`` is therefore a
      header; ``they,n`` with no other ``n`` term is data.  A skipped header is recorded in the
      lexicon's ``source`` (and so in its repr).  A pair file's ``female,male`` header is
      refused with a pointer to :func:`read_pairs`.
    - **Blank lines** at the end of the file are ignored; a blank line between terms is an
      error (it usually means two files were joined or one was damaged).
    - **Duplicates.**  Each term once: a term listed twice (after lower-casing), in the same or
      in different groups, is an error naming both lines.
    - **Groups.**  If ``groups`` is given, it fixes the group order and every label must be one
      of them; otherwise the groups are the labels found, sorted, and there must be at least 2.

    Every refusal is an :class:`~rankbias.errors.InputError` naming ``file:line``.
    """
    return _lexicon_from_lines(source_name(source), _data_lines(source), groups)


def _is_pair_header(line: str) -> bool:
    return [f.strip().lower() for f in line.split(",")] == ["female", "male"]


def _lexicon_from_lines(
    where: str, lines: list[tuple[int, str]], groups: Iterable[str] | None
) -> Lexicon:
    """:func:`read_lexicon` on lines already read (``where`` names them in messages)."""
    expected = None
    if groups is not None:
        expected = tuple(normalise_label(g) for g in groups)
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
    mapping: dict[str, str] = {}
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
        if not term:
            raise located(where, number, f"empty term in {line!r}; expected 'term,group'")
        if not group:
            raise located(where, number, f"empty group label in {line!r}; expected 'term,group'")
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
        if term in first_seen:
            line0, group0 = first_seen[term]
            raise located(
                where,
                number,
                f"term {term!r} (group {group!r}) is already listed on line {line0} "
                f"(group {group0!r}); expected each term once",
            )
        first_seen[term] = (number, group)
        mapping[term] = group
    found = sorted(set(mapping.values()))
    if expected is None and len(found) < 2:
        raise located(where, None, f"found {len(found)} group(s) {found}; expected at least 2")
    return Lexicon(
        groups=expected if expected is not None else tuple(found),
        term_to_group=mapping,
        source=source_text,
    )


def read_pairs(source: Source) -> tuple[tuple[str, str], ...]:
    """Read a ``female,male`` pair file (with that header) into a tuple of pairs.

    Opened like :func:`read_lexicon` (BOM, line ends, gzip, streams); terms are stripped and
    lower-cased.  Every term must appear once in the whole file (so the pairs define a one-to-one
    map in both directions); a term repeated, an empty term, a blank line between pairs or a line
    without exactly two columns is an error naming the line.
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
            if not term:
                raise located(where, number, f"empty term in {line!r}; expected 'female,male'")
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
    """Read a word list in either format, told apart by its first line.

    - A first line ``female,male`` (the header of the project's own lists,
      ``resources/gendered_terms.csv`` and ``resources/name_pairs.csv``) makes it a *pair
      file*, read by :func:`read_pairs` into the groups ``f`` and ``m``, keeping the pairs (as
      :func:`default_lexicon` reads the default list).
    - Anything else is a ``term,group`` list, read by :func:`read_lexicon` (an optional header
      such as ``term,group``, any number of groups).

    The source is read once, so a stream or a pipe works; every refusal is the
    :class:`~rankbias.errors.InputError` of the reader the first line chose.
    """
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
    """A random sub-lexicon keeping ``fraction`` of the terms (Klasnja et al. (2022), RQ2).

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
