"""Tests of rankbias.prose: the words of computed sentences, written out by hand."""

import pytest

from rankbias.prose import markdown_escape, number_in_words, prose_list, queries_of


def test_counts_up_to_twelve_are_words_and_larger_ones_digits_with_separators():
    assert [number_in_words(n) for n in (0, 1, 5, 10, 12)] == [
        "no", "one", "five", "ten", "twelve",
    ]  # fmt: skip
    assert number_in_words(13) == "13" and number_in_words(1634) == "1,634"
    assert number_in_words(4.0) == "four"  # a whole float, as a mean of counts gives
    for bad in (2.5, True):
        with pytest.raises(ValueError, match="n: expected a whole count"):
            number_in_words(bad)


def test_lists_are_joined_as_prose():
    assert prose_list(["BM25"]) == "BM25"
    assert prose_list(["BM25", "dense"]) == "BM25 and dense"
    assert prose_list(["a", "b", "c"]) == "a, b and c"
    assert prose_list(["he", "his"], mark="*") == "*he* and *his*"
    assert prose_list(["x", "y"], conjunction="or") == "x or y"
    assert prose_list([]) == "none" and prose_list([], empty="nothing") == "nothing"
    with pytest.raises(TypeError, match="found str 'ab'"):
        prose_list("ab")  # its letters would be the items


def test_markdown_punctuation_is_escaped():
    assert markdown_escape("bert_L2") == r"bert\_L2"
    assert markdown_escape("a*b `c` [d] $e$ #f |g ~h {i} <j>") == (
        r"a\*b \`c\` \[d\] \$e\$ \#f \|g \~h \{i\} \<j\>"
    )
    assert markdown_escape(r"back\slash") == r"back\\slash"
    assert markdown_escape(42) == "42"


def test_a_query_sets_queries_are_named_once():
    assert queries_of("gender-neutral") == "gender-neutral queries"
    assert queries_of("queries") == "queries"
    assert queries_of("TREC DL queries") == "TREC DL queries"
    assert queries_of("QS1") == "QS1 queries"
    with pytest.raises(ValueError, match="name: expected a query set's name"):
        queries_of(" ")
