"""Tests of rankbias.analysis.term_chapters: hand-computed values, brute force, invariants."""

from __future__ import annotations

import math
from pathlib import Path

import numpy as np
import pytest

from rankbias.analysis.term_chapters import (
    MISS_KINDS,
    magnitude_frame,
    miss_kind,
    restrict_stats,
    subsample_coverage,
    whitespace_misses,
)
from rankbias.lexicon import Lexicon, default_lexicon, read_lexicon, subsample
from rankbias.text import document_stats

REPO = Path(__file__).resolve().parents[2]
PUBLIC = REPO / "../shared/data/public"

SMALL = Lexicon.from_mapping(
    {"she": "f", "her": "f", "mother": "f", "he": "m", "him": "m", "father": "m"},
    groups=("f", "m"),
)


def random_texts(seed: int, n: int = 60) -> list[str]:
    """Texts of lexicon terms, other words and punctuation glued in every way."""
    rng = np.random.default_rng(seed)
    words = ["she", "her", "mother", "he", "him", "father", "hers", "the", "theme", "x1"]
    glue = [" ", " ", " ", "  ", ". ", ", ", "'s ", "-", "/", '"', "\t", "—"]
    texts = []
    for _ in range(n):
        k = int(rng.integers(1, 15))
        parts = [str(rng.choice(words)).capitalize() if rng.random() < 0.2
                 else str(rng.choice(words)) for _ in range(k)]  # fmt: skip
        text = parts[0]
        for part in parts[1:]:
            text += str(rng.choice(glue)) + part
        texts.append(text)
    return texts


def test_whitespace_misses_hand_example():
    texts = ["He said: her mother's hat.", "she he", "him/her, HE"]
    misses = whitespace_misses(texts, SMALL)
    got = sorted(zip(misses["doc"], misses["form"], misses["term"], misses["group"], strict=True))
    assert got == [
        (0, "mother's", "mother", "f"),
        (2, "him/her,", "her", "f"),
        (2, "him/her,", "him", "m"),
    ]
    kinds = dict(zip(misses["term"], misses["kind"], strict=True))
    assert kinds["mother"] == "clitic ('s, 'd)"
    assert kinds["him"] == kinds["her"] == "joined (hyphen, dash, slash)"


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_whitespace_misses_equal_count_difference(seed):
    texts = random_texts(seed)
    default = document_stats(texts, SMALL, tokenizer="default").group_counts
    spaces = document_stats(texts, SMALL, tokenizer="whitespace").group_counts
    misses = whitespace_misses(texts, SMALL)
    assert len(misses) > 0
    for j, group in enumerate(SMALL.groups):
        per_doc = np.bincount(misses.loc[misses["group"] == group, "doc"], minlength=len(texts))
        np.testing.assert_array_equal(per_doc, default[:, j] - spaces[:, j])


def test_miss_kind_cases():
    assert miss_kind("father's", "father") == MISS_KINDS[0]
    assert miss_kind("he'd", "he") == MISS_KINDS[0]
    assert miss_kind("half-brother", "brother") == MISS_KINDS[1]
    assert miss_kind("he/she", "she") == MISS_KINDS[1]
    assert miss_kind("(1931)—he", "he") == MISS_KINDS[1]
    assert miss_kind("him.", "him") == MISS_KINDS[2]
    assert miss_kind('"woman', "woman") == MISS_KINDS[2]
    assert miss_kind("o'heir,", "heir") == MISS_KINDS[2]  # apostrophe before, not a clitic


def test_magnitude_frame_hand_values():
    stats = document_stats(["She said she saw her; he left.", "the end"], SMALL, per_term=True)
    frame = magnitude_frame(stats).set_index(["docid", "magnitude", "group"])["value"]
    # document 0: she ×2, her ×1 (M_f = 3); he ×1 (M_m = 1)
    expected = {
        ("tc", "f"): 3.0,
        ("tc", "m"): 1.0,
        ("tf", "f"): math.log(4),
        ("tf", "m"): math.log(2),
        ("bool", "f"): 1.0,
        ("bool", "m"): 1.0,
        ("tf_paper", "f"): math.log(2) + math.log(1),
        ("tf_paper", "m"): 0.0,
    }
    for (kind, group), value in expected.items():
        assert frame[("0", kind, group)] == pytest.approx(value)
        assert frame[("1", kind, group)] == 0.0
    assert len(frame) == 2 * 4 * 2


@pytest.mark.parametrize("seed", [3, 4])
def test_restrict_stats_equals_direct_count(seed):
    texts = random_texts(seed)
    full = document_stats(texts, SMALL, per_term=True)
    sub = Lexicon.from_mapping({"her": "f", "father": "m", "he": "m"}, groups=("f", "m"))
    direct = document_stats(texts, sub, per_term=True)
    restricted = restrict_stats(full, sub)
    np.testing.assert_array_equal(restricted.group_counts, direct.group_counts)
    np.testing.assert_array_equal(restricted.term_counts.toarray(), direct.term_counts.toarray())
    assert restricted.terms == direct.terms


def test_restrict_stats_errors():
    stats = document_stats(["she he"], SMALL, per_term=True)
    with pytest.raises(ValueError, match="per_term=True"):
        restrict_stats(document_stats(["she he"], SMALL), SMALL)
    other = Lexicon.from_mapping({"queen": "f", "king": "m"}, groups=("f", "m"))
    with pytest.raises(ValueError, match="queen"):
        restrict_stats(stats, other)
    swapped = Lexicon.from_mapping({"she": "m", "he": "f"}, groups=("f", "m"))
    with pytest.raises(ValueError, match="another group"):
        restrict_stats(stats, swapped)


def test_subsample_coverage_brute_force():
    texts = random_texts(5, n=80)
    stats = document_stats(texts, SMALL, per_term=True)
    table = subsample_coverage(stats, SMALL, [1 / 3, 1.0], seeds=[0, 1])
    assert len(table) == 2 * 2 * 2
    full = table[table["fraction"] == 1.0]
    assert (full["occurrence_share"] == 1.0).all()
    assert (full["terms"] == 3).all()
    for row in table.itertuples():
        sub = subsample(SMALL, row.fraction, row.seed)
        counts = document_stats(texts, sub).group_counts[:, SMALL.groups.index(row.group)]
        assert row.terms == len(sub.terms_of(row.group))
        assert row.occurrences == counts.sum()
        assert row.documents == (counts > 0).sum()


def test_public_list_facts_quoted_in_the_book():
    """The facts chapter 02 states about the two public lists (they are not loaded there)."""
    if not PUBLIC.is_dir():
        pytest.skip("public data folder absent")
    specific = read_lexicon(PUBLIC / "rekabsaz_genderbias_ir/wordlist_genderspecific.txt")
    representative = read_lexicon(
        PUBLIC / "cpjku_fairness_retrieval_results/wordlist_gender_representative.txt"
    )
    ours = default_lexicon()
    assert [len(specific.terms_of(g)) for g in ("f", "m")] == [32, 32]
    assert [t for t in specific.terms if t not in ours] == ["godfather"]
    assert all(ours.term_to_group[t] == g for t, g in specific.term_to_group.items() if t in ours)
    assert [len(representative.terms_of(g)) for g in ("f", "m")] == [163, 163]
    assert set(specific.term_to_group.items()) <= set(representative.term_to_group.items())
    raw = PUBLIC / "cpjku_fairness_retrieval_results/wordlist_gender_representative.txt"
    names = [line for line in raw.read_text().split() if line[0].isupper()]
    assert len(names) == 262
