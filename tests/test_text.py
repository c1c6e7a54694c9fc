"""Tests of rankbias.text: tokenisers, vectorised statistics, the streamed collection reader."""

from __future__ import annotations

import dataclasses
import gzip
import re
from collections import Counter
from pathlib import Path

import numpy as np
import pyarrow as pa
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from rankbias.collection import read_collection_stats
from rankbias.errors import InputError
from rankbias.lexicon import Lexicon, default_lexicon
from rankbias.text import DocStats, TermMatcher, document_stats, tokenize, unmatchable_terms

LEX = Lexicon.from_mapping(
    {"she": "f", "her": "f", "woman": "f", "señora": "f", "he": "m", "him": "m", "man": "m"}
)


def loop_stats(texts, lexicon, tokenizer):
    """The plain per-document loop the vectorised code must equal (independent of rankbias)."""
    lengths, counts, per_term = [], [], []
    for text in texts:
        if tokenizer == "default":
            tokens = re.findall(r"[^\W_]+", text.lower())
        else:
            tokens = text.lower().split(" ")
        tf = Counter(tokens)
        lengths.append(len(tokens))
        counts.append([sum(tf[t] for t in lexicon.terms_of(g)) for g in lexicon.groups])
        per_term.append([tf[t] for t in lexicon.terms])
    return np.array(lengths), np.array(counts).reshape(-1, len(lexicon.groups)), np.array(per_term)


def test_default_tokenizer_examples():
    assert tokenize("She said: HE's 2nd_best!") == ["she", "said", "he", "s", "2nd", "best"]
    assert tokenize("Königin und König") == ["königin", "und", "könig"]
    assert tokenize("he2 he-she") == ["he2", "he", "she"]


def test_whitespace_tokenizer_is_split_on_single_spaces():
    assert tokenize("She  said, HE", "whitespace") == ["she", "", "said,", "he"]
    with pytest.raises(
        ValueError, match="tokenizer: expected one of 'default', 'whitespace', found 'words'"
    ):
        tokenize("x", "words")


def test_document_stats_by_hand():
    texts = ["She met him; he, she and HER man.", "nothing here", "Señora y señor, she_he"]
    stats = document_stats(texts, LEX, per_term=True, docids=["a", "b", "c"])
    # doc a: she met him he she and her man -> 8 tokens; f: she, she, her = 3; m: him, he, man = 3
    # doc b: nothing here -> 2 tokens; no terms ('here' is not 'he')
    # doc c: señora y señor she he -> 5 tokens; f: señora, she = 2; m: he = 1
    assert stats.lengths.tolist() == [8, 2, 5]
    # counts are integers, as the compiled scanner's are
    assert stats.lengths.dtype == stats.group_counts.dtype == stats.term_counts.dtype == np.int64
    assert stats.groups == ("f", "m")
    assert stats.group_counts.tolist() == [[3, 3], [0, 0], [2, 1]]
    terms = list(stats.terms)  # her, she, señora, woman | he, him, man
    dense = stats.term_counts.toarray()
    assert dense[0, terms.index("she")] == 2 and dense[0, terms.index("her")] == 1
    assert dense[2, terms.index("señora")] == 1 and dense[2, terms.index("he")] == 1
    assert dense.sum() == 3 + 3 + 2 + 1
    assert stats.to_frame().to_dict("list") == {
        "docid": ["a", "b", "c"],
        "length": [8, 2, 5],
        "f": [3, 0, 2],
        "m": [3, 0, 1],
    }
    assert stats.rows(["c", "zz", "a"]).tolist() == [2, -1, 0]
    assert stats.rows(np.array(["b", "b"], dtype=object)).tolist() == [1, 1]
    assert stats.rows([]).tolist() == []
    assert stats.rows(["c", "zz"]).dtype == np.int64  # Arrow's lookup gives int32
    each = stats.rows_of_each([["c", "zz"], np.array([], dtype=object), ["a", "b", "a"]])
    assert [r.tolist() for r in each] == [[2, -1], [], [0, 1, 0]]
    assert stats.rows_of_each([]) == []
    arrow = stats.rows_of_each([pa.array(["b", "q"]), np.array(["c"], dtype=object)])
    assert [r.tolist() for r in arrow] == [[1, -1], [2]]
    with pytest.raises(TypeError) as info:
        stats.rows_of_each("ab")  # one run's docids, not a list of runs
    assert str(info.value) == "lists: expected docid arrays, one per run, found str 'ab'"
    with pytest.raises(ValueError, match="^nothing to concatenate$"):
        DocStats.concat([])


def test_rows_of_many_docids_and_of_each_run():
    """The same rows, in the same order, missing docids -1, whether the docids are looked up
    at once or as the runs of one scoring (the chunks of one lookup)."""
    docids = [f"doc{i}" for i in range(50)]
    stats = document_stats(["she"] * 50, LEX, docids=docids)
    rng = np.random.default_rng(11)
    wanted = [docids[i] if i < 50 else f"gone{i}" for i in rng.integers(0, 60, size=997)]
    expected = [int(w[3:]) if w.startswith("doc") else -1 for w in wanted]
    assert stats.rows(wanted).tolist() == expected
    each = stats.rows_of_each([wanted[:500], wanted[500:]])
    assert [r.tolist() for r in each] == [expected[:500], expected[500:]]
    assert {r.dtype for r in each} == {np.dtype(np.int64)}


def test_whitespace_stats_by_hand():
    stats = document_stats(["She  met him, he", "he"], LEX, tokenizer="whitespace")
    # tokens: she | '' | met | him, | he -> 5; 'him,' is not 'him'
    assert stats.lengths.tolist() == [5, 1]
    assert stats.group_counts.tolist() == [[1, 1], [0, 1]]


def test_log_tf_sums_by_hand():
    stats = document_stats(["she she she her he", "man"], LEX, per_term=True)
    # doc 0: f: ln 3 (she) + ln 1 (her) = ln 3; m: ln 1 (he) = 0.  doc 1: m: ln 1 = 0
    np.testing.assert_allclose(stats.log_tf_sums(), [[np.log(3), 0.0], [0.0, 0.0]])
    with pytest.raises(ValueError, match=r"^per-term counts were not computed; pass per_term=True"):
        document_stats(["she"], LEX).log_tf_sums()
    # a group none of whose terms is kept (a subsampled word list) keeps its column, of zeros
    only_female = dataclasses.replace(
        stats,
        terms=("she",),
        term_group=np.array([0]),
        term_counts=stats.term_counts[:, [stats.terms.index("she")]],
    )
    np.testing.assert_allclose(only_female.log_tf_sums(), [[np.log(3), 0.0], [0.0, 0.0]])


def test_log_tf_sums_leaves_counts_given_as_floats_as_they_were():
    # counts a user gives as floats (weighted, or read back from a table): the logarithms are
    # taken of a copy; taken in place, a second call would read logarithms of logarithms
    stats = document_stats(["she she she her he", "man"], LEX, per_term=True)
    floats = dataclasses.replace(stats, term_counts=stats.term_counts.astype(np.float64))
    before = floats.term_counts.toarray()
    for _ in range(2):
        np.testing.assert_allclose(floats.log_tf_sums(), [[np.log(3), 0.0], [0.0, 0.0]])
        np.testing.assert_array_equal(floats.term_counts.toarray(), before)


def test_unmatchable_terms_reported():
    lex = Lexicon.from_mapping({"mother-in-law": "f", "he": "m"})
    assert unmatchable_terms(lex, "default") == unmatchable_terms(lex) == ("mother-in-law",)
    assert unmatchable_terms(lex, "whitespace") == ()
    stats = document_stats(["my mother-in-law and he"], lex, tokenizer="whitespace")
    assert stats.group_counts.tolist() == [[1, 1]]


ALPHABET = "abehimnorsw éßİΣσς中_-,.!'0129\t"
WORDS = ["she", "her", "he", "him", "man", "woman", "señora", "SHE", "He", "hers", "the"]
texts_strategy = st.lists(
    st.lists(st.one_of(st.sampled_from(WORDS), st.text(ALPHABET, max_size=6)), max_size=12).map(
        lambda parts: "".join(p + (" " if i % 3 else "") for i, p in enumerate(parts))
    ),
    min_size=1,
    max_size=8,
)


@settings(max_examples=150, deadline=None)
@given(texts=texts_strategy, tokenizer=st.sampled_from(["default", "whitespace"]))
def test_vectorised_equals_plain_loop(texts, tokenizer):
    stats = document_stats(texts, LEX, tokenizer=tokenizer, per_term=True)
    lengths, counts, per_term = loop_stats(texts, LEX, tokenizer)
    assert stats.lengths.tolist() == lengths.tolist()
    assert stats.group_counts.tolist() == counts.tolist()
    assert stats.term_counts.toarray().tolist() == per_term.tolist()


def test_vectorised_equals_loop_on_random_corpus():
    rng = np.random.default_rng(5)
    lex = default_lexicon()
    vocab = list(lex.terms) + ["the", "of", "player", "Mothers", "kingdom", "shed", "é", "x_y"]
    texts = [" ".join(rng.choice(vocab, rng.integers(1, 40))) for _ in range(300)]
    stats = document_stats(texts, lex)
    lengths, counts, _ = loop_stats(texts, lex, "default")
    assert stats.lengths.tolist() == lengths.tolist()
    assert stats.group_counts.tolist() == counts.tolist()


def write_collection(path: Path, lines: list[str], gz: bool = False) -> Path:
    data = "".join(line + "\n" for line in lines).encode("utf-8")
    if gz:
        with gzip.open(path, "wb") as handle:
            handle.write(data)
    else:
        path.write_bytes(data)
    return path


@pytest.mark.parametrize("gz", [False, True])
@pytest.mark.parametrize("workers", [1, 2])
def test_collection_reader_equals_in_memory(tmp_path, gz, workers):
    rng = np.random.default_rng(9)
    vocab = ["she", "He", "him", "woman", "the", "ball", "señora", "pl_ay", "x"]
    texts = [" ".join(rng.choice(vocab, rng.integers(1, 15))) for _ in range(120)]
    lines = [f"d{i}\t{t}  " for i, t in enumerate(texts)]  # trailing spaces are stripped
    path = write_collection(tmp_path / ("c.tsv.gz" if gz else "c.tsv"), lines, gz)
    stats = read_collection_stats(path, LEX, workers=workers, block_bytes=200, per_term=True)
    expected = document_stats(texts, LEX, per_term=True)
    assert stats.docids.tolist() == [f"d{i}" for i in range(120)]
    assert stats.lengths.tolist() == expected.lengths.tolist()
    assert stats.group_counts.tolist() == expected.group_counts.tolist()
    assert (stats.term_counts != expected.term_counts).nnz == 0


@pytest.mark.parametrize(
    ("lines", "line", "fragment"),
    [
        (["a\tshe", "b she", "c\the"], 2, "found no tab in 'b she'; expected 'docid<TAB>text'"),
        (["a\tshe", "\the"], 2, "found an empty docid"),
        (["a\tshe", "b\t   ", "c\the"], 2, "document 'b' has no text (an empty collection line)"),
        (["a\tshe", "", "c\the"], 2, "found an empty collection line"),
        (["a\tshe", "b\the", "a\thim"], 3, "docid 'a' is already used on line 21"),
    ],
)
def test_collection_errors_name_file_and_line(tmp_path, lines, line, fragment):
    # pad with good lines and use tiny blocks so errors sit in later blocks too
    lines = [f"p{i}\tfiller text" for i in range(20)] + lines
    path = write_collection(tmp_path / "c.tsv", lines)
    with pytest.raises(InputError) as info:
        read_collection_stats(path, LEX, workers=1, block_bytes=64)
    message = str(info.value)
    assert message.startswith(f"{path}:{line + 20}:"), message
    assert fragment in message


def test_duplicate_docid_across_processes(tmp_path):
    lines = [f"d{i}\tshe" for i in range(300)] + ["d7\the"]
    path = write_collection(tmp_path / "c.tsv", lines)
    with pytest.raises(
        InputError, match=re.escape(f"{path}:301: docid 'd7' is already used on line 8")
    ):
        read_collection_stats(path, LEX, workers=2, block_bytes=100)


def test_non_utf8_byte_reports_line_and_offset(tmp_path):
    path = tmp_path / "c.tsv"
    path.write_bytes(b"a\tshe\nb\the \xff\n")
    # "a\tshe\n" is bytes 0-5, so line 2 starts at byte 6: b=6 tab=7 h=8 e=9 space=10 0xff=11
    # (0-based offset 11 in the file, the 6th byte of its line)
    with pytest.raises(InputError) as info:
        read_collection_stats(path, LEX, workers=1)
    message = str(info.value)
    assert message.startswith(f"{path}:2: byte 0xff at byte offset 11 of the file")
    assert "(byte 6 of the line)" in message and "UTF-8" in message


def test_empty_collection_file(tmp_path):
    path = write_collection(tmp_path / "c.tsv", [])
    with pytest.raises(InputError, match="the collection is empty"):
        read_collection_stats(path, LEX, workers=1)


LINE_ALPHABET = ALPHABET.replace("\t", "")  # a collection line has exactly one tab
LINE_TEXT = st.lists(
    st.one_of(
        st.sampled_from(WORDS + ["  ", "\u00a0", "\x1c", "\x0c", "\x85", "x_y", "İ"]),
        st.text(LINE_ALPHABET, max_size=5),
    ),
    min_size=1,
    max_size=10,
).map(" ".join)


@settings(max_examples=60, deadline=None)
@given(
    texts=st.lists(LINE_TEXT.filter(lambda t: t.strip() != ""), min_size=1, max_size=12),
    tokenizer=st.sampled_from(["default", "whitespace"]),
    block_bytes=st.sampled_from([16, 64, 1 << 20]),
)
def test_collection_file_equals_plain_loop(tmp_path_factory, texts, tokenizer, block_bytes):
    """The array-based line parser (and its fallback) equals a per-line loop on rstripped text."""
    path = tmp_path_factory.mktemp("c") / "c.tsv"
    lines = [f"d{i}\t{t}" for i, t in enumerate(texts)]
    path.write_bytes("".join(line + "\n" for line in lines).encode("utf-8"))
    stats = read_collection_stats(path, LEX, tokenizer, per_term=True, workers=1,
                                  block_bytes=block_bytes)  # fmt: skip
    expected_texts = [line.partition("\t")[2].rstrip() for line in lines]
    lengths, counts, per_term = loop_stats(expected_texts, LEX, tokenizer)
    assert stats.docids.tolist() == [f"d{i}" for i in range(len(texts))]
    assert stats.lengths.tolist() == lengths.tolist()
    assert stats.group_counts.tolist() == counts.tolist()
    assert stats.term_counts.toarray().tolist() == per_term.tolist()


@pytest.mark.parametrize("tokenizer", ["default", "whitespace"])
def test_trailing_white_space_of_ascii_and_unicode_blocks(tmp_path, tokenizer):
    # str.rstrip() strips \x1c (a separator str.isspace() knows) and \t \r; so must the reader,
    # in an ASCII block (bytes path) and in a non-ASCII one (code-point path)
    for extra in ("", "é"):
        texts = [f"she he{extra} \x1c", "him \x0b\x0c ", f"her  {extra}"]
        path = tmp_path / f"c{len(extra)}.tsv"
        path.write_bytes("".join(f"d{i}\t{t}\n" for i, t in enumerate(texts)).encode())
        stats = read_collection_stats(path, LEX, tokenizer, workers=1)
        lengths, counts, _ = loop_stats([t.rstrip() for t in texts], LEX, tokenizer)
        assert stats.lengths.tolist() == lengths.tolist()
        assert stats.group_counts.tolist() == counts.tolist()


@pytest.mark.parametrize("tokenizer", ["default", "whitespace"])
def test_a_token_that_starts_with_a_term_is_not_the_term(tmp_path, tokenizer):
    """'shes', 'sheer' and 'hermit' begin with a term and are longer than every term of the
    list: none of them is counted, by the Python counter or by the compiled scanner."""
    lexicon = Lexicon.from_mapping({"she": "f", "her": "f", "he": "m"})
    texts = ["shes sheer hermit she", "hermits he heh"]
    stats = document_stats(texts, lexicon, docids=["a", "b"], tokenizer=tokenizer)
    assert stats.group_counts.tolist() == [[1, 0], [0, 1]]  # columns f, m: 'she', then 'he'
    path = tmp_path / "c.tsv"
    path.write_text("".join(f"{d}\t{t}\n" for d, t in zip("ab", texts, strict=True)))
    scanned = read_collection_stats(path, lexicon, tokenizer, workers=1)
    assert scanned.group_counts.tolist() == [[1, 0], [0, 1]]


def test_document_stats_refuses_repeated_or_non_text_docids():
    with pytest.raises(ValueError, match="docids: 'a' at position 2 is used twice"):
        document_stats(["he", "she", "it"], LEX, docids=["a", "b", "a"])
    with pytest.raises(ValueError, match="docids: None at position 1 is a NoneType"):
        document_stats(["he", "she"], LEX, docids=["a", None])
    with pytest.raises(ValueError, match="docids: 7 at position 1 is a int; expected distinct"):
        document_stats(["he", "she"], LEX, docids=["a", 7])
    with pytest.raises(ValueError, match="docids: 1 docids for 2 texts; expected one each"):
        document_stats(["he", "she"], LEX, docids=["a"])


def test_text_functions_name_what_is_not_text_or_a_word_list():
    lexicon = Lexicon.from_mapping({"she": "f", "he": "m"})
    with pytest.raises(TypeError, match="^text: expected a str, found NoneType"):
        tokenize(None)
    with pytest.raises(TypeError, match="^texts: expected an iterable of texts, found one str"):
        document_stats("she said", lexicon)
    with pytest.raises(TypeError, match="^texts: expected str, found int at 1"):
        document_stats(["she", 3], lexicon)
    with pytest.raises(TypeError, match="^lexicon: expected a rankbias.lexicon.Lexicon"):
        document_stats(["she"], {"she": "f"})


def test_statistics_say_which_tokeniser_counted_them():
    for tokenizer in ("default", "whitespace"):
        assert document_stats(["she said"], LEX, tokenizer=tokenizer).tokenizer == tokenizer


def test_rows_take_arrow_docids_of_any_type():
    # a table a user reads with pyarrow may hold docids as large strings, a dictionary, or
    # integers (Arrow's CSV reader types the column "1, 2, 3" as int64): read as text, also
    # where the collection has docids no integer could be
    stats = document_stats(["she", "he", "him"], LEX, docids=["10", "d20", "30"])
    plain = pa.array(["30", "99", "10"])
    for docids in (plain, plain.cast(pa.large_string()), plain.dictionary_encode(),
                   pa.array([30, 99, 10]), pa.chunked_array([[30], [99, 10]])):  # fmt: skip
        assert stats.rows(docids).tolist() == [2, -1, 0]


def test_statistics_built_by_hand_must_hold_arrays():
    # a user who builds DocStats from a table of their own is told which field is not an array
    good = document_stats(["she", "he"], LEX, docids=["a", "b"])
    fields = {f: getattr(good, f) for f in ("docids", "lengths", "group_counts", "groups",
                                            "terms", "term_group")}  # fmt: skip
    for name in ("docids", "lengths", "group_counts", "term_group"):
        with pytest.raises(TypeError) as info:
            DocStats(**(fields | {name: getattr(good, name).tolist()}))
        expected = "an array (document_stats builds them)"
        assert str(info.value) == f"{name}: expected {expected}, found list"
    assert len(DocStats(**fields)) == 2


def test_a_matcher_is_built_from_a_lexicon_and_says_so_given_a_mapping():
    with pytest.raises(TypeError) as caught:
        TermMatcher({"he": "male"}, "default")
    assert str(caught.value) == (
        "lexicon: expected a rankbias.lexicon.Lexicon (read_word_list, default_lexicon, "
        "Lexicon.from_mapping), found dict"
    )


@pytest.mark.parametrize("n_wanted", [0, 1, 7, 49, 50, 51, 400])
def test_rows_are_the_same_whichever_side_is_hashed(n_wanted):
    """Fewer docids than the collection are hashed themselves and the collection scanned; as
    many or more, the collection is hashed: the same rows either way, -1 for a docid the
    collection lacks (or a null), the first row of a docid the collection repeats."""
    import dataclasses

    import pyarrow as pa

    docids = [f"doc{i}" for i in range(49)] + ["doc7"]  # doc7 twice: rows 7 and 49
    stats = document_stats(["she"] * 50, LEX, docids=[f"x{i}" for i in range(50)])
    stats = dataclasses.replace(stats, docids=np.array(docids, dtype=object))  # as built by hand
    rng = np.random.default_rng(n_wanted)
    wanted = [docids[i] if i < 50 else f"gone{i}" for i in rng.integers(0, 60, size=n_wanted)]
    expected = [int(w[3:]) if w.startswith("doc") else -1 for w in wanted]
    assert stats.rows(wanted).tolist() == expected
    assert stats.rows(pa.array(wanted, pa.string())).tolist() == expected
    half = n_wanted // 2
    each = stats.rows_of_each([wanted[:half], wanted[half:]])
    assert [r.tolist() for r in each] == [expected[:half], expected[half:]]
    with_null = pa.chunked_array([pa.array(["doc7", None]), pa.array(["gone", "doc3"])])
    assert stats.rows(with_null).tolist() == [7, -1, -1, 3]
