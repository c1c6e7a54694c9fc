r"""Counterfactual data substitution (CDS), the collection the counterfactual runs of CRBO use.

abolghasemi2024texfair §5(iii): a ranker is run twice, on the
original collection and on a *counterfactual* collection in which the gender of every gendered
word is reversed ("he" → "she", "son" → "daughter") and given names are swapped for names of the
other gender (Maudslay et al. 2019).  The queries are gender-neutral and are not changed.  Then

.. math::  \mathrm{CRBO}(\text{system}) = \frac{1}{|Q|} \sum_{q \in Q}
           \mathrm{RBO}\big(L_q, L'_q; p\big)

where ``L_q`` is the system's ranked list for ``q`` on the original collection, ``L'_q`` on the
counterfactual one, and RBO is :func:`rankbias.metrics.rbo.rbo` — the *extrapolated* variant
(Webber et al. 2010, Eq. 32) with persistence ``p = 0.9`` by default.  A system that ignores
gender gets 1.  The measures ``rbo`` (per query) and ``crbo`` (per system) of
:func:`rankbias.scoring.score_runs` compute it from a run and its counterfactual run
(``counterfactual=``); this module builds the counterfactual collection (chapter 08 reruns
the testbed's systems on it).

Substitution
------------
A :class:`Substitution` is a one-to-one map between female and male terms built from pair
files (``female,male`` per line): by default the project's gendered terms
(``resources/gendered_terms.csv``) and given names (``resources/name_pairs.csv``, card
``resources/NAMES.md``), each pair used in both directions.  A *token* is what the default
tokeniser sees (the book's Conventions page, "Tokens and term counts"): a maximal run of
Unicode letters and digits (``[^\W_]+``), compared lower-cased.  Only whole tokens are
swapped; every other character of
the text (spaces, punctuation, hyphens, apostrophes, line breaks) is kept exactly, and the
swapped word takes the casing pattern of the original token:

- ``lower`` → lower (``she`` → ``he``), ``Title`` → Title (``Mary`` → ``James``),
  ``UPPER`` (two letters or more) → UPPER (``MRS`` → ``MR``);
- any other pattern (``hE``, ``McMary``-like) is *irregular*: the replacement is Title-cased if the
  token starts with a capital and lower-cased otherwise, and the report counts these tokens.

The rule for ``her`` (and ``his``)
----------------------------------
``her`` is both the object pronoun (counterpart ``him``: "she saw her" → "he saw him") and the
possessive determiner (counterpart ``his``: "her book" → "his book"); ``his`` is both the
determiner (counterpart ``her``) and the independent possessive (counterpart ``hers``: "the
book is his" → "the book is hers").  The pairs file lists ``her,him`` and ``hers,his``, which is
right for ``him`` (always → ``her``) and ``hers`` (always → ``his``).  For ``her`` and ``his`` this
module decides from the **next token**, without a part-of-speech tagger:

    ``her`` → ``his`` and ``his`` → ``her`` when the word is followed, after white space only,
    by a token that can start a noun phrase — any token that is not in the closed list
    :data:`FUNCTION_WORDS` (articles and other determiners, pronouns, prepositions and
    particles, conjunctions, auxiliaries and a few verbs that follow an object pronoun,
    adverbs of time, place and degree), or any token directly followed by a hyphen and
    another token (a compound modifier: "her well-being", "his all-time best");

    otherwise — followed by punctuation, by the end of the text, or by a function word —
    ``her`` → ``him`` and ``his`` → ``hers``.

Words frequent after both readings (``back``, ``home``, ``past``, ``will``, ``only``, ``every``,
``one``, numerals) are deliberately left out of the list, so they count as noun-phrase starts
("her back", "his will", "her two sons"): in encyclopaedic and news text the possessive is the
more frequent reading.

So "her own book" → "his own book", "her 1943 novel" → "his 1943 novel", "told her that" →
"told him that", "gave her the prize" → "gave him the prize", "with her." → "with him.";
"his work" → "her work", "the choice was his." → "the choice was hers.", "a friend of his
and" → "a friend of hers and".  The rule reads the original text, so every decision in a
passage is independent of the other swaps.  Known misses (documented and tested): an object
``her`` followed by an open-class word ("made her cry" → "made his cry", "gave her flowers" →
"gave his flowers"), and a determiner followed by a listed word ("her very own" →
"him very own").  The rule is kept simple on purpose: it is stated here, tested on sentences,
and :func:`substitute_collection` reports how often each branch was taken so a reader can
judge its weight.

Round trip: for texts whose gendered tokens are other than ``her``, ``his``, ``him``, ``hers``,
substituting twice restores the text exactly (every other swap is an involution and casing is
restored); the four pronouns need not round-trip (``him`` → ``her`` → ``his`` before a noun).
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from functools import lru_cache
from importlib import resources
from pathlib import Path
from types import MappingProxyType

import numpy as np
import pandas as pd

from rankbias.errors import InputError
from rankbias.lexicon import default_pairs_path, read_pairs
from rankbias.text import TOKEN_PATTERN

__all__ = [
    "FUNCTION_WORDS",
    "PRONOUN_RULE",
    "Substitution",
    "SubstitutionReport",
    "default_name_pairs_path",
    "default_substitution",
    "substitute",
    "substitute_collection",
]

DEFAULT_NAMES_FILE = "name_pairs.csv"

#: Context-dependent counterparts: ``term -> (before a noun phrase, otherwise)``.
PRONOUN_RULE: Mapping[str, tuple[str, str]] = MappingProxyType(
    {"her": ("his", "him"), "his": ("her", "hers")}
)

#: Closed-class words after which ``her``/``his`` is read as object / independent possessive.
FUNCTION_WORDS: frozenset[str] = frozenset(
    # articles, determiners and quantifiers that cannot follow a possessive determiner
    "a an the this that these those my your his her its our their some any no all both each "
    "either neither another such what which whose "
    # pronouns
    "i me you he him she it we us they them myself yourself himself herself itself ourselves "
    "yourselves themselves who whom someone somebody something anyone anybody anything "
    "everyone everybody everything nobody nothing "
    # prepositions and particles
    "about above across after against along alongside amid among amongst around as at before "
    "behind below beneath beside besides between beyond by despite down during except for from "
    "in inside into like near of off on onto out outside over per since than through "
    "throughout till to toward towards under underneath unlike until up upon via with within "
    "without away "
    # conjunctions
    "and or but nor so yet because if when while although though whether where unless whereas "
    "once "
    # auxiliaries, modals and verbs that follow an object pronoun ("let her go")
    "is was are were be been being am has have had do does did would shall should can could "
    "may might must go come get feel know stay leave become seem "
    # adverbs of negation, time, place and degree
    "not never also again alone already always anymore anyway apart ever forever here there now "
    "then too very just still today tonight tomorrow yesterday together well instead however "
    "thus therefore".split()
)

# after a matched word: white space, the next token, and whether a hyphenated token follows it
_FOLLOWING = re.compile(rf"\s+({TOKEN_PATTERN.pattern})(-[^\W_])?")


def default_name_pairs_path() -> Path:
    """Path of the project's ``female,male`` given-name pairs (``resources/NAMES.md``)."""
    return Path(str(resources.files("rankbias") / "resources" / DEFAULT_NAMES_FILE))


def _recase(token: str, target: str) -> tuple[str, bool]:
    """``target`` in the casing pattern of ``token``; the flag is False for irregular casing."""
    if token.islower():
        return target, True
    if len(token) > 1 and token.isupper():
        return target.upper(), True
    if token[0].isupper() and (len(token) == 1 or token[1:].islower()):
        return target[:1].upper() + target[1:], True
    if token[0].isupper():
        return target[:1].upper() + target[1:], False
    return target, False


def _trie_regex(terms: Iterable[str]) -> str:
    """A regular expression matching exactly ``terms``, as a prefix tree (fast alternation)."""
    trie: dict = {}
    for term in terms:
        node = trie
        for char in term:
            node = node.setdefault(char, {})
        node[""] = {}

    def emit(node: dict) -> str:
        branches = [re.escape(ch) + emit(child) for ch, child in sorted(node.items()) if ch]
        if not branches:
            return ""
        body = branches[0] if len(branches) == 1 else "(?:" + "|".join(branches) + ")"
        if "" in node:
            return "(?:" + body + ")?"
        return body

    return emit(trie)


@dataclass(frozen=True, eq=False)
class Substitution:
    """A one-to-one female ↔ male map of tokens, with the contextual rule for ``her``/``his``.

    Attributes
    ----------
    mapping:
        Read-only ``term -> counterpart`` (lower case), both directions of every pair.
    contextual:
        ``term -> (counterpart before a noun phrase, counterpart otherwise)``; overrides
        ``mapping`` for those terms (default :data:`PRONOUN_RULE`, see the module docstring).
    function_words:
        The closed list that decides the contextual rule.
    source:
        Where the pairs came from, for messages and reports.
    """

    mapping: Mapping[str, str]
    contextual: Mapping[str, tuple[str, str]] = field(default_factory=dict)
    function_words: frozenset[str] = FUNCTION_WORDS
    source: str = "<pairs>"
    _pattern: re.Pattern = field(init=False, repr=False)
    _pattern_folded: re.Pattern = field(init=False, repr=False)

    def __post_init__(self) -> None:
        mapping = dict(self.mapping)
        for term, other in mapping.items():
            for word in (term, other):
                if word != word.lower() or not TOKEN_PATTERN.fullmatch(word):
                    raise InputError(
                        f"{self.source}: term {word!r} is not a single lower-case token of the "
                        "default tokeniser; expected letters/digits only, lower case"
                    )
            if mapping.get(other) != term:
                raise InputError(
                    f"{self.source}: {term!r} maps to {other!r} but {other!r} maps to "
                    f"{mapping.get(other)!r}; expected a one-to-one map in both directions"
                )
        contextual = {k: tuple(v) for k, v in dict(self.contextual).items()}
        for term, targets in contextual.items():
            if term not in mapping:
                raise InputError(
                    f"{self.source}: the contextual rule names {term!r}, which is not a term of "
                    "the pairs; expected a rule only for listed terms"
                )
            missing = [t for t in targets if t not in mapping]
            if len(targets) != 2 or missing:
                raise InputError(
                    f"{self.source}: the contextual rule for {term!r} is {targets!r}; expected "
                    f"two counterparts that are terms of the pairs (missing: {missing})"
                )
        object.__setattr__(self, "mapping", MappingProxyType(mapping))
        object.__setattr__(self, "contextual", MappingProxyType(contextual))
        object.__setattr__(self, "function_words", frozenset(self.function_words))
        pattern = rf"(?<![^\W_])(?:{_trie_regex(sorted(mapping))})(?![^\W_])"
        # the terms in lower-cased text (the usual path), and case-insensitively in the rare
        # text whose lower-casing changes its length (e.g. 'İ' -> 'i̇'), where positions in the
        # lower-cased text would not be positions in the original
        object.__setattr__(self, "_pattern", re.compile(pattern))
        object.__setattr__(self, "_pattern_folded", re.compile(pattern, re.IGNORECASE))

    @classmethod
    def from_pairs(
        cls,
        pairs: Iterable[tuple[str, str]],
        *,
        contextual: Mapping[str, tuple[str, str]] | None = None,
        function_words: Iterable[str] = FUNCTION_WORDS,
        source: str = "<pairs>",
    ) -> Substitution:
        """From ``(female, male)`` pairs; every term must occur in one pair only.

        ``contextual=None`` applies :data:`PRONOUN_RULE` to those of its terms present in the
        pairs (``{}`` turns the rule off: ``her`` then follows its pair like any term).
        """
        mapping: dict[str, str] = {}
        for number, (female, male) in enumerate(pairs, start=1):
            for term in (female, male):
                if term in mapping:
                    raise InputError(
                        f"{source}: pair {number} ({female},{male}) repeats the term {term!r}; "
                        "expected each term in one pair only"
                    )
            if female == male:
                raise InputError(f"{source}: pair {number} maps {female!r} to itself")
            mapping[female], mapping[male] = male, female
        if contextual is None:
            contextual = {k: v for k, v in PRONOUN_RULE.items() if k in mapping}
        return cls(
            mapping=mapping, contextual=contextual, function_words=function_words, source=source
        )

    @classmethod
    def from_files(cls, *paths: str | Path, **kw) -> Substitution:
        """From ``female,male`` pair files (see :func:`rankbias.lexicon.read_pairs`).

        A term listed in two files is an error naming both files.
        """
        pairs: list[tuple[str, str]] = []
        where: dict[str, Path] = {}
        for path in map(Path, paths):
            for pair in read_pairs(path):
                for term in pair:
                    if term in where:
                        raise InputError(
                            f"{path}: term {term!r} is also listed in {where[term]}; expected "
                            "each term in one file only"
                        )
                    where[term] = path
                pairs.append(pair)
        return cls.from_pairs(pairs, source=" + ".join(map(str, paths)), **kw)

    @property
    def terms(self) -> frozenset[str]:
        """Every term that is substituted."""
        return frozenset(self.mapping)

    def __repr__(self) -> str:
        # file names only: a repr shown in the book must not depend on where it was built
        source = re.sub(r"\S*/([^/\s]+)", r"\1", str(self.source))
        return (
            f"Substitution({len(self.mapping)} terms, contextual {sorted(self.contextual)}; "
            f"from {source})"
        )


@lru_cache(maxsize=1)
def default_substitution() -> Substitution:
    """The project's gendered terms and given names, with :data:`PRONOUN_RULE`."""
    return Substitution.from_files(default_pairs_path(), default_name_pairs_path())


class _Swapper:
    """Swaps the terms of texts; counts ``(source, target)`` swaps and irregular casing."""

    def __init__(self, substitution: Substitution):
        self.mapping = substitution.mapping
        self.contextual = substitution.contextual
        self.function_words = substitution.function_words
        self.pattern = substitution._pattern
        self.pattern_folded = substitution._pattern_folded
        self.counts: Counter = Counter()
        self.irregular = 0
        self.swaps = 0

    def target(self, key: str, text: str, end: int) -> str | None:
        """Counterpart of the lower-case ``key`` that ends at ``end`` of ``text``."""
        rule = self.contextual.get(key)
        if rule is None:
            return self.mapping.get(key)
        following = _FOLLOWING.match(text, end)
        nominal = following is not None and (
            following.group(2) is not None or following.group(1).lower() not in self.function_words
        )
        return rule[0] if nominal else rule[1]

    def replace(self, token: str, key: str, target: str) -> str:
        replaced, regular = _recase(token, target)
        self.counts[(key, target)] += 1
        self.irregular += not regular
        self.swaps += 1
        return replaced

    def folded(self, match: re.Match) -> str:
        """``re.sub`` callback for the case-insensitive pattern."""
        token = match.group()
        key = token.lower()
        target = self.target(key, match.string, match.end())
        if target is None:
            # matched only by case-insensitive folding (e.g. 'ſhe'); not a token of the
            # default tokeniser after lower-casing, so not a term: left as it is
            return token
        return self.replace(token, key, target)

    def __call__(self, text: str) -> str:
        lowered = text.lower()
        if len(lowered) != len(text):
            return self.pattern_folded.sub(self.folded, text)
        pieces: list[str] = []
        last = 0
        for match in self.pattern.finditer(lowered):
            start, end = match.span()
            key = match.group()
            target = self.target(key, lowered, end)
            pieces.append(text[last:start])
            pieces.append(self.replace(text[start:end], key, target))
            last = end
        if not pieces:
            return text
        pieces.append(text[last:])
        return "".join(pieces)


def substitute(text: str, substitution: Substitution | None = None) -> tuple[str, int]:
    """``text`` with every gendered token swapped, and the number of swaps.

    See the module docstring for tokens, casing and the rule for ``her``/``his``; all other
    characters are kept exactly.  ``substitution`` defaults to :func:`default_substitution`.
    """
    if not isinstance(text, str):
        raise TypeError(f"expected a str text, found {type(text).__name__}")
    substitution = substitution or default_substitution()
    swapper = _Swapper(substitution)
    return swapper(text), swapper.swaps


@dataclass(frozen=True)
class SubstitutionReport:
    """What :func:`substitute_collection` changed.

    Attributes
    ----------
    n_passages, n_changed, n_swaps:
        Passages read, passages with at least one swap, swaps in all.
    swaps:
        Table ``source, target, count`` (lower case), most frequent first; ``her`` appears
        with both targets, so the table shows how often each branch of the rule was taken.
    swaps_per_passage:
        ``int64`` swaps of each passage, aligned with the input rows.
    irregular_case:
        Swapped tokens whose casing was neither lower, Title nor UPPER.
    """

    n_passages: int
    n_changed: int
    n_swaps: int
    swaps: pd.DataFrame
    swaps_per_passage: np.ndarray
    irregular_case: int

    def by_term(self) -> pd.Series:
        """Swaps per source term, most frequent first."""
        return self.swaps.groupby("source")["count"].sum().sort_values(ascending=False)


def substitute_collection(
    collection: pd.DataFrame, substitution: Substitution | None = None
) -> tuple[pd.DataFrame, SubstitutionReport]:
    """The counterfactual collection and a report of what was swapped.

    ``collection`` has columns ``docid`` and ``text`` (others are kept unchanged); the result
    has the same rows in the same order with ``text`` substituted.  A text that is not a
    string (e.g. a missing value) is an error naming the docid.
    """
    missing = {"docid", "text"} - set(collection.columns)
    if missing:
        raise InputError(
            f"collection lacks column(s) {sorted(missing)}; expected columns docid, text"
        )
    substitution = substitution or default_substitution()
    texts = collection["text"].tolist()
    not_text = [i for i, t in enumerate(texts) if not isinstance(t, str)]
    if not_text:
        i = not_text[0]
        raise InputError(
            f"collection: document {collection['docid'].iloc[i]!r} (row {i}) has text "
            f"{texts[i]!r} of type {type(texts[i]).__name__}; expected a string "
            f"({len(not_text)} such row(s) in all)"
        )
    swapper = _Swapper(substitution)
    per_passage = np.zeros(len(texts), dtype=np.int64)
    new_texts = []
    for i, text in enumerate(texts):
        before = swapper.swaps
        new_texts.append(swapper(text))
        per_passage[i] = swapper.swaps - before
    result = collection.copy()
    result["text"] = pd.Series(new_texts, index=collection.index, dtype=collection["text"].dtype)
    rows = [(s, t, c) for (s, t), c in swapper.counts.items()]
    swaps = (
        pd.DataFrame(rows, columns=["source", "target", "count"])
        .astype({"count": "int64"})
        .sort_values(["count", "source", "target"], ascending=[False, True, True])
        .reset_index(drop=True)
    )
    report = SubstitutionReport(
        n_passages=len(texts),
        n_changed=int(np.count_nonzero(per_passage)),
        n_swaps=int(per_passage.sum()),
        swaps=swaps,
        swaps_per_passage=per_passage,
        irregular_case=swapper.irregular,
    )
    return result, report
