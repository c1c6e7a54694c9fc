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


def _table():
    """Three runs on NFaiRR@10 over 40 queries: 'fair' 0.2 above 'base', 'same' equal to
    'base' up to noise of ±0.001, and nDCG@10 (no direction) 0.1 higher for 'fair'."""
    import numpy as np
    import pandas as pd

    from rankbias import compare

    noise = np.where(np.arange(40) % 2, 0.001, -0.001)
    base = np.linspace(0.2, 0.6, 40)
    values = {"base": base, "fair": base + 0.2 + noise, "same": base + noise}
    rows = [
        {"run": run, "qid": f"q{i}", "metric": metric, "cutoff": 10, "value": v + shift}
        for metric, shift in (("nfairr", 0.0), ("nDCG", 0.1))
        for run, column in values.items()
        for i, v in enumerate(column)
    ]
    return compare(pd.DataFrame(rows), bootstrap=2_000)


def test_a_comparison_names_a_fairer_run_only_when_the_difference_is_significant():
    from rankbias.prose import compared

    table = _table()
    said = compared(table, "nfairr", "base", "fair", 10)
    assert said.startswith("*fair* is fairer than *base* by NFaiRR@10 (difference 0.2, 95% "
                           "interval of this comparison [")  # fmt: skip
    assert said.endswith(", adjusted p = 0.0006)")  # 1/10,001: no sign flip reaches it; Holm × 6
    assert compared(table, "nfairr", "fair", "base", 10).startswith("*fair* is fairer than *base*")
    none = compared(table, "nfairr", "same", "base", 10)
    assert none.startswith("*same* and *base* show no detectable difference by NFaiRR@10 (")
    assert "$d_z$ =" in none and "adjusted p = 1)" in none  # ±0.001 alternating: exactly 0
    higher = compared(table, "nDCG", "base", "fair", 10)
    assert higher.startswith("*base* has a lower nDCG@10 than *fair* (difference -0.2, 95% interv")
    with pytest.raises(ValueError, match="no comparison of base and gone on nfairr@10"):
        compared(table, "nfairr", "base", "gone", 10)


def test_the_extremes_of_a_measure_are_named_with_their_test_and_the_count_of_differences():
    from rankbias.prose import compared, extremes

    said = extremes(_table(), "nfairr", 10)
    assert said.startswith(
        "The highest mean NFaiRR@10 is *fair*'s (0.600) and the lowest *base*'s (0.400): *fair* is "
        "fairer than *base* by NFaiRR@10 (difference 0.2, 95% interval of this comparison "
        "[0.2, 0.2]"
    )
    assert said.endswith("Two of the three pairs of runs differ significantly by NFaiRR@10.")
    table = _table()
    two = table[(table["run_a"] != "fair") & (table["run_b"] != "fair")]  # base and same only
    assert extremes(two, "nfairr", 10).endswith("difference by NFaiRR@10 (" + (
        compared(two, "nfairr", "base", "same", 10).split(" (", 1)[1]) + ".")  # fmt: skip
    counts = table.copy()
    counts["significant"] = False  # as a table whose pairs do not differ would say
    assert extremes(counts, "nfairr", 10).endswith(
        "None of the three pairs of runs differs significantly by NFaiRR@10."
    )
    counts.loc[counts.index[0], "significant"] = True
    assert "One of the three pairs of runs differs significantly" in extremes(counts, "nfairr", 10)


def test_a_comparison_of_magnitudes_says_so_in_its_label():
    import numpy as np
    import pandas as pd

    from rankbias import compare
    from rankbias.prose import compared

    lean = np.linspace(-0.02, 0.02, 30)
    rows = [
        {"run": run, "qid": f"q{i}", "metric": "arab_tc", "cutoff": 10, "value": v + shift}
        for run, shift in (("male", -0.4), ("female", 0.1))
        for i, v in enumerate(lean)
    ]
    table = compare(pd.DataFrame(rows), absolute=True, bootstrap=1_000)
    assert compared(table, "arab_tc", "male", "female", 10).startswith(
        "*female* is fairer than *male* by |ARaB (tc)@10| (difference -0.3, "
    )
