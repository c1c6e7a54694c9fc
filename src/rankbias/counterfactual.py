r"""Counterfactual data substitution (CDS): the collection the counterfactual runs of CRBO use.

abolghasemi2024texfair §5(iii): a ranker is run on the original collection and on one in which
every gendered word is reversed ("he" → "she") and given names are swapped for names of the
other gender (Maudslay et al. 2019); :math:`\mathrm{CRBO} = \frac{1}{|Q|} \sum_q
\mathrm{RBO}(L_q, L'_q; p)` (measures ``rbo``/``crbo`` of :func:`rankbias.scoring.score_runs`).

Substitution: a one-to-one female ↔ male map from ``female,male`` pair files (default
``resources/gendered_terms.csv`` and ``resources/name_pairs.csv``, card ``resources/NAMES.md``)
of whole tokens of the default tokeniser (``[^\W_]+``, compared lower-cased); every other
character is kept.  The swapped word takes the token's casing (lower, Title, UPPER of two letters
or more); any other casing is *irregular* (Title-cased if the token starts with a capital, else
lower) and counted.  ``her`` → ``his`` and ``his`` → ``her`` when followed, after white space
only, by a token that can start a noun phrase (one not in :data:`FUNCTION_WORDS`, or one
directly followed by a hyphen and a token); otherwise ``her`` → ``him`` and ``his`` → ``hers``
(chapter 8 discusses the rule and its known misses).  Substituting twice restores a text
exactly unless it holds ``her``, ``his``, ``him`` or ``hers``.
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

from rankbias.errors import InputError, expect_type
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
    if token[0].isupper():
        return target[:1].upper() + target[1:], len(token) == 1 or token[1:].islower()
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
        return "(?:" + body + ")?" if "" in node else body

    return emit(trie)


@dataclass(frozen=True, eq=False)
class Substitution:
    """A one-to-one female ↔ male map of tokens (``mapping``, lower case, both directions),
    with ``contextual`` overrides ``term -> (before a noun phrase, otherwise)`` decided by
    ``function_words`` (module docstring); ``source`` names the pairs in messages."""

    mapping: Mapping[str, str]
    contextual: Mapping[str, tuple[str, str]] = field(default_factory=dict)
    function_words: frozenset[str] = FUNCTION_WORDS
    source: str = "<pairs>"
    _pattern: re.Pattern = field(init=False, repr=False)
    _pattern_folded: re.Pattern = field(init=False, repr=False)

    def __post_init__(self) -> None:
        mapping = dict(expect_type(self.mapping, "mapping", Mapping, "a mapping of terms"))
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
        # case-insensitive: for the rare text whose lower-casing changes its length ('İ')
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
        """From ``(female, male)`` pairs, each term in one pair only; ``contextual=None``
        applies :data:`PRONOUN_RULE` to its terms present (``{}`` turns the rule off)."""
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
        return cls(mapping, contextual, function_words, source)

    @classmethod
    def from_files(cls, *paths: str | Path, **kw) -> Substitution:
        """From ``female,male`` pair files (:func:`rankbias.lexicon.read_pairs`); a term in
        two files is an error naming both."""
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
        self.sub = substitution
        self.counts: Counter = Counter()
        self.irregular = 0
        self.swaps = 0

    def target(self, key: str, text: str, end: int) -> str | None:
        """Counterpart of the lower-case ``key`` that ends at ``end`` of ``text``."""
        rule = self.sub.contextual.get(key)
        if rule is None:
            return self.sub.mapping.get(key)
        following = _FOLLOWING.match(text, end)
        nominal = following is not None and (
            following.group(2) is not None
            or following.group(1).lower() not in self.sub.function_words
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
        if target is None:  # matched only by case folding (e.g. 'ſhe'): not a term, kept
            return token
        return self.replace(token, key, target)

    def __call__(self, text: str) -> str:
        lowered = text.lower()
        if len(lowered) != len(text):
            return self.sub._pattern_folded.sub(self.folded, text)
        pieces: list[str] = []
        last = 0
        for match in self.sub._pattern.finditer(lowered):
            start, end = match.span()
            target = self.target(match.group(), lowered, end)
            pieces += [text[last:start], self.replace(text[start:end], match.group(), target)]
            last = end
        return "".join([*pieces, text[last:]])


def substitute(text: str, substitution: Substitution | None = None) -> tuple[str, int]:
    """``text`` with every gendered token swapped (module docstring), and the number of swaps;
    ``substitution`` defaults to :func:`default_substitution`."""
    expect_type(text, "text", str, "a str")
    substitution = substitution or default_substitution()
    swapper = _Swapper(substitution)
    return swapper(text), swapper.swaps


@dataclass(frozen=True)
class SubstitutionReport:
    """What :func:`substitute_collection` changed: passages read, changed and swaps in all;
    ``swaps`` (``source, target, count``, most frequent first: each branch of the ``her`` rule
    is a row), the swaps of each passage in input order, and the irregular-case swaps."""

    n_passages: int
    n_changed: int
    n_swaps: int
    swaps: pd.DataFrame
    swaps_per_passage: np.ndarray
    irregular_case: int


def substitute_collection(
    collection: pd.DataFrame, substitution: Substitution | None = None
) -> tuple[pd.DataFrame, SubstitutionReport]:
    """The counterfactual collection (``docid, text`` and other columns, same rows, ``text``
    substituted) and a report; a text that is not a string is an error naming the docid."""
    expect_type(collection, "collection", pd.DataFrame, "a DataFrame with columns docid, text")
    missing = {"docid", "text"} - set(collection.columns)
    if missing:
        raise InputError(
            f"collection lacks column(s) {sorted(missing)}; expected columns docid, text"
        )
    docids = collection["docid"]
    bad = docids.isna() | docids.duplicated(keep="first")
    if bad.any():
        i = int(np.flatnonzero(bad.to_numpy())[0])
        found = "no docid" if pd.isna(docids.iloc[i]) else f"docid {docids.iloc[i]!r} again"
        raise InputError(
            f"collection: row {i} has {found} ({int(bad.sum())} such row(s) in all); "
            "expected one row per document, each with its docid"
        )
    if substitution is not None:
        expect_type(substitution, "substitution", Substitution, "a Substitution or None")
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
