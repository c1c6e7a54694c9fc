"""Tests of rankbias.kernel: the compiled scanner equals the reference tokenisers and a Counter.

The reference is written here, independently of the package: ``re.findall(r"[^\\W_]+",
text.lower())`` (default) or ``text.lower().split(" ")`` (whitespace) on the text after the
tab with trailing white space removed, and a ``Counter`` of the tokens.
"""

from __future__ import annotations

import re
from collections import Counter

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from rankbias import kernel
from rankbias.collection import _kernel_terms, count_block
from rankbias.lexicon import Lexicon
from rankbias.text import TermMatcher

LEX = Lexicon.from_mapping(
    {"she": "f", "her": "f", "woman": "f", "señora": "f", "he": "m", "him": "m", "man": "m",
     "2nd": "m", "a1": "f"}
)  # fmt: skip


def reference(texts: list[str], lexicon: Lexicon, tokenizer: str):
    lengths, counts, per_term = [], [], []
    for text in texts:
        stripped = text.rstrip().lower()
        if tokenizer == "default":
            tokens = re.findall(r"[^\W_]+", stripped)
        else:
            tokens = stripped.split(" ")
        tf = Counter(tokens)
        lengths.append(len(tokens))
        counts.append([sum(tf[t] for t in lexicon.terms_of(g)) for g in lexicon.groups])
        per_term.append([tf[t] for t in lexicon.terms])
    return lengths, counts, per_term


def raw_scan(data: bytes, lexicon: Lexicon, tokenizer: str, want_hits: bool = True):
    matcher = TermMatcher(lexicon, tokenizer)
    terms = _kernel_terms(matcher)
    buf = np.frombuffer(data, dtype=np.uint8)
    return kernel.scanner()(
        buf, terms.tokenizer_code, terms.term_bytes, terms.term_offsets,
        terms.term_group, len(matcher.groups), terms.max_term, want_hits, *kernel.unicode_tables(),
    )  # fmt: skip


ASCII_PIECES = st.one_of(
    st.sampled_from(["she", "SHE", "He", "him,", "her.", "man_", "_he", "2nd", "A1", "a1b"]),
    st.sampled_from(["woman", "hers", "the", "x_y", "  ", " ", ".", "-", "\x0b", "\x0c", "\x1c"]),
    st.text(alphabet="abehimnorsw ABEHIMS019_-,.!'", max_size=6),
)
ASCII_TEXT = st.lists(ASCII_PIECES, min_size=1, max_size=12).map("".join)


@settings(max_examples=200, deadline=None)
@given(
    texts=st.lists(ASCII_TEXT.filter(lambda t: t.strip() != ""), min_size=1, max_size=10),
    tokenizer=st.sampled_from(["default", "whitespace"]),
)
def test_compiled_scanner_alone_equals_the_reference_on_ascii(texts, tokenizer):
    """ASCII lines are counted by the compiled code itself (no line is handed on)."""
    data = "".join(f"d{i}\t{t}\n" for i, t in enumerate(texts)).encode("ascii")
    status, n, bounds, lengths, counts, flags, _, _, _, hits, n_hits = raw_scan(
        data, LEX, tokenizer
    )
    expected_lengths, expected_counts, expected_terms = reference(texts, LEX, tokenizer)
    assert status == kernel.STATUS_OK and n == len(texts)
    assert flags[:n].tolist() == [0] * n
    assert lengths[:n].tolist() == expected_lengths
    assert counts[:n].tolist() == expected_counts
    per_term = np.zeros((n, len(LEX.terms)), dtype=int)
    np.add.at(per_term, (hits[:n_hits, 0], hits[:n_hits, 1]), 1)
    assert per_term.tolist() == expected_terms


def test_scanner_by_hand():
    # line 1: "She met HIM, he said 2nd." -> she met him he said 2nd: 6 tokens, f 1, m 3
    # line 2: "x_y\x0c" -> x y: 2 tokens; whitespace: ["x_y"] (\x0c stripped): 1 token
    data = b"a\tShe met HIM, he said 2nd.\nb\tx_y\x0c\n"
    status, n, _, lengths, counts, *_ = raw_scan(data, LEX, "default")
    assert (status, n) == (kernel.STATUS_OK, 2)
    assert lengths[:2].tolist() == [6, 2]
    assert counts[:2].tolist() == [[1, 3], [0, 0]]  # groups (f, m)
    # whitespace: she | met | him, | he | said | 2nd. -> 6 tokens; 'she' (f) and 'he' (m)
    status, n, _, lengths, counts, *_ = raw_scan(data, LEX, "whitespace")
    assert lengths[:2].tolist() == [6, 1]
    assert counts[:2].tolist() == [[1, 1], [0, 0]]


def test_whitespace_pieces_by_hand():
    """Pieces between single spaces; trailing white space stripped first."""
    data = b"a\tshe \x0b\nb\tshe\x0b\nc\tHe  SHE  \nd\the\x0bshe her\ne\tshe\x0c he\n"
    status, n, _, lengths, counts, *_ = raw_scan(data, LEX, "whitespace")
    assert (status, n) == (kernel.STATUS_OK, 5)
    # a: ["she"]; b: ["she"]; c: ["he", "", "she"]; d: ["he\x0bshe", "her"];
    # e: ["she\x0c", "he"]
    assert lengths[:5].tolist() == [1, 1, 3, 2, 2]
    assert counts[:5].tolist() == [[1, 0], [1, 0], [1, 1], [1, 0], [0, 1]]  # groups (f, m)


# Terms of every word count the scanner's key compares (1, 2, 3 and 4 eight-byte words, and the
# sizes on either side of a word boundary), and words around them that share their first eight
# or sixteen bytes; for the whitespace tokeniser, terms with the bytes next to "A" and "Z" (only
# A-Z lower-case: "@" is not "`", "[" is not "{").
LONG = Lexicon.from_mapping(
    {"she": "f", "abcdefgh": "f", "abcdefghi": "m", "congresswomen": "f", "chairmanships": "m",
     "abcdefghijklmnop": "f", "abcdefghijklmnopq": "m",
     "businesswomanlikeness": "f", "abcdefghijklmnopqrstuvwxyz012345": "m", "z@a": "f",
     "[z]": "m"}
)  # fmt: skip
LONG_WORDS = st.sampled_from(
    [*LONG.terms, "ABCDEFGHIJKLMNOPQRSTUVWXYZ012345", "Z@A", "z`a", "[Z]", "{z}", "ABCDEFGH",
     "Abcdefghij", "abcdefg", "abcdefghijklmno", "Abcdefghijklmnopqr",
     "congresswoman", "CONGRESSWOMEN", "businesswomanlikenes", "businesswomanlikenesss",
     "abcdefghijklmnopqrstuvwxyz01234", "abcdefghijklmnopqrstuvwxyz0123456", "x", "7"]
)  # fmt: skip
SEPARATORS = st.sampled_from([" ", "  ", ", ", "-", "_", ".", "'", " \x0b", "!? "])


@settings(max_examples=300, deadline=None)
@given(
    lines=st.lists(
        st.lists(st.tuples(LONG_WORDS, SEPARATORS), min_size=1, max_size=30),
        min_size=1,
        max_size=6,
    ),
    final_newline=st.booleans(),
)
def test_long_terms_and_lines_across_64_byte_chunks(lines, final_newline):
    """Terms of up to 32 bytes, lines much longer than the scanner's 64-byte chunks (tokens
    cross chunk boundaries) and a last line without a line break (its last word is read to the
    block's last byte) give the reference's counts, with both tokenisers."""
    texts = ["".join(w + s for w, s in line).rstrip(" ,.!?-'\x0b") or "x" for line in lines]
    data = "\n".join(f"d{i}\t{t}" for i, t in enumerate(texts)) + ("\n" if final_newline else "")
    for tokenizer in ("default", "whitespace"):
        status, n, _, lengths, counts, *_ = raw_scan(data.encode(), LONG, tokenizer)
        want_lengths, want_counts, _ = reference(texts, LONG, tokenizer)
        assert (status, n) == (kernel.STATUS_OK, len(texts))
        assert lengths[:n].tolist() == want_lengths
        assert counts[:n].tolist() == want_counts


def test_non_ascii_docids_are_handed_on_and_bad_lines_stop_the_scan():
    data = "a\tSEÑORA she\ndé\tshe\nb\the\tx\nc\the\n".encode()
    status, n, bounds, lengths, counts, flags, *_ = raw_scan(data, LEX, "default")
    assert n == 2 and flags[:2].tolist() == [0, kernel.FLAG_NON_ASCII]  # dé: the exact path
    assert lengths[0] == 2 and counts[0].tolist() == [2, 0]  # señora, she: compiled
    assert status == kernel.STATUS_BAD_LINE  # line b has two tabs; the scan stops there
    assert data[bounds[2, 0] : bounds[2, 3]] == b"b\the\tx"


# Terms and words in Latin, Greek and Cyrillic script with the special cases of ``str.lower``:
# İ (two code points: i and a combining dot, which the default tokeniser does not join), the
# final sigma (by context), ß and ẞ (which lowers to ß), the ligature ﬁ (unchanged), the Kelvin
# sign (lowers to ASCII k), and case-ignorable characters between a letter and a Σ.
WORLD = Lexicon.from_mapping(
    {"señora": "f", "ärztin": "f", "κόρης": "f", "женщина": "f", "ﬁancée": "f", "she": "f",
     "bräutigam": "m", "άνδρας": "m", "мужчина": "m", "straße": "m", "i\u0307stanbul": "m",
     "he": "m", "σς": "f", "kelvin": "m"}
)  # fmt: skip
WORLD_PIECES = st.one_of(
    st.sampled_from(
        ["SEÑORA", "Ärztin", "ÄRZTIN", "ΚΌΡΗΣ", "κόρησ", "Женщина", "ЖЕНЩИНА", "ﬁancée", "FIANCÉE",
         "BRÄUTIGAM", "ΆΝΔΡΑΣ", "МУЖЧИНА", "STRASSE", "STRAẞE", "Straße", "İstanbul", "İSTANBUL",
         "ΣΣ", "Σ", "ΣΑΣ", "A\u0345Σ", "Aʰ'Σ", "A.Σ", "\u212aelvin", "KELVIN", "she", "HE"]
    ),
    st.sampled_from([" ", "  ", ", ", ".", "'", "\u00ad", "\u0307", "\u00a0", "\u3000", "\x85",
                     "\u2028", "\x0b", "\x1c", "中文", "ǅ", "١٢", "_"]),
    st.characters(exclude_categories=["Cs"], exclude_characters="\t\n\r"),
)  # fmt: skip
WORLD_TEXT = st.lists(WORLD_PIECES, min_size=1, max_size=12).map("".join)


@settings(max_examples=300, deadline=None)
@given(
    texts=st.lists(WORLD_TEXT.filter(lambda t: t.strip() != ""), min_size=1, max_size=8),
    tokenizer=st.sampled_from(["default", "whitespace"]),
)
def test_compiled_scanner_alone_equals_the_reference_on_the_worlds_text(texts, tokenizer):
    """Non-ASCII text is lower-cased, tokenised and counted by the compiled code itself (no
    line is handed on), exactly as ``str.lower()`` and the tokeniser would."""
    data = "".join(f"d{i}\t{t}\n" for i, t in enumerate(texts)).encode()
    status, n, _, lengths, counts, flags, _, _, _, hits, n_hits = raw_scan(data, WORLD, tokenizer)
    expected_lengths, expected_counts, expected_terms = reference(texts, WORLD, tokenizer)
    assert status == kernel.STATUS_OK and n == len(texts)
    assert flags[:n].tolist() == [0] * n
    assert lengths[:n].tolist() == expected_lengths
    assert counts[:n].tolist() == expected_counts
    per_term = np.zeros((n, len(WORLD.terms)), dtype=int)
    np.add.at(per_term, (hits[:n_hits, 0], hits[:n_hits, 1]), 1)
    assert per_term.tolist() == expected_terms


WORLD_WORDS = st.sampled_from(
    ["SEÑORA", "ärztin", "ΚΌΡΗΣ", "Женщина", "ﬁancée", "STRAẞE", "İstanbul", "ΣΣ", "she", "HE",
     "\u212aelvin", "“said”", "naïve—she", "abcdefghijklmnop", "x", "Ärztinnenkammerpräsidentin"]
)  # fmt: skip
WORLD_SEPARATORS = st.sampled_from([" ", "  ", ", ", "'", ".", " \u00a0", "\u3000", "\u0345 "])


@settings(max_examples=200, deadline=None)
@given(
    lines=st.lists(
        st.lists(st.tuples(WORLD_WORDS, WORLD_SEPARATORS), min_size=1, max_size=40),
        min_size=1,
        max_size=5,
    ),
    tokenizer=st.sampled_from(["default", "whitespace"]),
)
def test_non_ascii_tokens_across_64_byte_chunks(lines, tokenizer):
    """Non-ASCII tokens anywhere in lines much longer than the scanner's 64-byte chunks (some
    across two chunks, some after a chunk with no byte >= 0x80), lines that end in non-ASCII
    white space, with both tokenisers: the compiled code alone gives the reference's counts."""
    texts = ["".join(w + sep for w, sep in line) for line in lines]
    data = "".join(f"d{i}\t{t}\n" for i, t in enumerate(texts)).encode()
    status, n, _, lengths, counts, flags, _, _, _, hits, n_hits = raw_scan(data, WORLD, tokenizer)
    expected_lengths, expected_counts, expected_terms = reference(texts, WORLD, tokenizer)
    assert (status, n) == (kernel.STATUS_OK, len(texts)) and not flags[:n].any()
    assert lengths[:n].tolist() == expected_lengths
    assert counts[:n].tolist() == expected_counts
    per_term = np.zeros((n, len(WORLD.terms)), dtype=int)
    np.add.at(per_term, (hits[:n_hits, 0], hits[:n_hits, 1]), 1)
    assert per_term.tolist() == expected_terms


def test_the_special_cases_of_lower_case_by_hand():
    texts = ["İSTANBUL ΚΌΡΗΣ", "ΣΣ STRAẞE ﬁancée FIANCÉE", "\u212aELVIN A\u0345Σ"]
    data = "".join(f"d{i}\t{t}\n" for i, t in enumerate(texts)).encode()
    _, n, _, lengths, counts, flags, *_ = raw_scan(data, WORLD, "default")
    # i | stanbul | κόρης (final ς: a term, f); σς (f) | straße (m) | ﬁancée (f) | fiancée;
    # kelvin (m) | a | ς (U+0345 is case-ignorable, A is cased: final)
    assert lengths[:n].tolist() == [3, 4, 3]
    assert counts[:n].tolist() == [[1, 0], [2, 1], [0, 1]]
    _, n, _, lengths, counts, *_ = raw_scan(data, WORLD, "whitespace")
    assert counts[:n].tolist() == [[1, 1], [2, 1], [0, 1]]  # i̇stanbul is one piece here


def test_every_code_point_is_lower_cased_and_classified_as_python_does():
    """One line per code point ``c`` (surrogates and line breaks excepted), ``xcΣ xΣcx c``: the
    terms found (every lower-cased letter or digit is a term), the form of each Σ (final or
    not, by ``c`` before the first and after the second) and the number of tokens must be the
    reference's."""
    codes = [c for c in range(0x110000) if not 0xD800 <= c < 0xE000 and c not in (9, 10, 13)]
    lowered = {chr(c).lower() for c in codes}
    single = sorted(t for t in lowered if re.fullmatch(r"[^\W_]+", t)) + ["x\u03c3", "x\u03c2"]
    lexicon = Lexicon.from_mapping({t: "fm"[i % 2] for i, t in enumerate(single)})
    texts = [f"x{chr(c)}\u03a3 x\u03a3{chr(c)}x {chr(c)}" for c in codes]
    data = "".join(f"d{i}\t{t}\n" for i, t in enumerate(texts)).encode("utf-8")
    status, n, _, lengths, _, flags, _, _, _, hits, n_hits = raw_scan(data, lexicon, "default")
    assert (status, n) == (kernel.STATUS_OK, len(texts)) and not flags[:n].any()
    term_id = {t: i for i, t in enumerate(lexicon.terms)}
    want_lengths, want_hits = [], []
    for i, t in enumerate(texts):
        tokens = re.findall(r"[^\W_]+", t.rstrip().lower())
        want_lengths.append(len(tokens))
        want_hits.extend((i, term_id[token]) for token in tokens if token in term_id)
    assert lengths[:n].tolist() == want_lengths
    assert sorted(map(tuple, hits[:n_hits].tolist())) == sorted(want_hits)


@pytest.mark.parametrize("tokenizer", ["default", "whitespace"])
def test_docid_bytes_and_hashes(tokenizer):
    data = b"doc1\tshe\r\nd2\the\rdoc1\thim"
    status, n, bounds, _, _, _, hashes, docid_data, offsets, *_ = raw_scan(data, LEX, tokenizer)
    assert (status, n) == (kernel.STATUS_OK, 3)
    assert offsets[:4].tolist() == [0, 4, 6, 10]
    assert bytes(docid_data[:10]) == b"doc1d2doc1"
    assert hashes[0].tolist() == hashes[2].tolist() != hashes[1].tolist()
    assert bounds[:3, 0].tolist() == [0, 10, 16]  # \r\n and a lone \r end lines


WIDE_PIECES = st.one_of(
    ASCII_PIECES,
    st.sampled_from(["señora", "SEÑORA", "İ", "ΣΑΣ", "é", "\u00a0", "\u3000", "\x85", "中文"]),
    st.text(alphabet="aehmnos éñİΣσς中_.,'0 ", max_size=5),
)


@settings(max_examples=150, deadline=None)
@given(
    texts=st.lists(
        st.lists(WIDE_PIECES, min_size=1, max_size=10).map("".join).filter(lambda t: t.strip()),
        min_size=1,
        max_size=10,
    ),
    tokenizer=st.sampled_from(["default", "whitespace"]),
)
def test_scanner_with_the_exact_path_equals_the_reference(texts, tokenizer):
    data = "".join(f"d{i}\t{t}\n" for i, t in enumerate(texts)).encode()
    block = count_block(data, 0, TermMatcher(LEX, tokenizer), per_term=True)
    lengths, counts, per_term = reference(texts, LEX, tokenizer)
    assert block.docids.to_pylist() == [f"d{i}" for i in range(len(texts))]
    assert block.lengths.tolist() == lengths
    assert block.group_counts.tolist() == counts
    assert block.term_counts.toarray().tolist() == per_term


def test_jit_and_ahead_of_time_scanners_agree():
    """The just-in-time fallback gives what the loaded scanner gives."""
    kernel._jit_helpers()
    jit_scan = kernel._jit(kernel._scan_block)
    rng = np.random.default_rng(3)
    vocab = ["she", "He", "HIM,", "x_y", "señora", "2nd", "  ", "the", "a1", "\x0c"]
    lines = [f"d{i}\tw {' '.join(rng.choice(vocab, rng.integers(1, 12)))}" for i in range(300)]
    data = np.frombuffer("\n".join(lines).encode(), dtype=np.uint8)
    for tokenizer in ("default", "whitespace"):
        matcher = TermMatcher(LEX, tokenizer)
        terms = _kernel_terms(matcher)
        args = (
            data, terms.tokenizer_code, terms.term_bytes, terms.term_offsets,
            terms.term_group, 2, terms.max_term, True, *kernel.unicode_tables(),
        )  # fmt: skip
        ours, theirs = kernel.scanner()(*args), jit_scan(*args)
        n = ours[1]
        assert n == theirs[1] == 300
        for a, b in zip(ours[2:9], theirs[2:9], strict=True):
            assert np.array_equal(a[:n], b[:n])
        assert ours[10] == theirs[10] and np.array_equal(ours[9][: ours[10]], theirs[9][: ours[10]])


def test_a_cold_first_run_builds_the_scanner_and_is_correct(tmp_path):
    """With an empty cache the first process compiles the scanner (ahead of time where a C
    compiler is available, else just in time), and its numbers are right; the next process
    reuses what the first one built."""
    import os
    import subprocess
    import sys
    from pathlib import Path

    repo = Path(__file__).resolve().parents[1]
    terms = tmp_path / "terms.csv"
    terms.write_text("she,f\nhe,m\n")
    collection = tmp_path / "c.tsv"
    collection.write_bytes(b"a\tShe and he, she.\nb\tnothing here\n")
    script = (
        "import sys\n"
        "from rankbias.cli import main\n"
        "code = main(sys.argv[1:])\n"
        "from rankbias import kernel\n"
        "print(kernel.KERNEL_KIND)\n"
        "sys.exit(code)\n"
    )
    env = dict(os.environ, PYTHONPATH=str(repo / "src"), RANKBIAS_CACHE_DIR=str(tmp_path / "k"))
    kinds = []
    for run in ("first", "second"):
        out = tmp_path / f"{run}.csv"
        done = subprocess.run(
            [sys.executable, "-c", script, "stats", "--collection", str(collection),
             "--terms", str(terms), "--out", str(out)],
            capture_output=True, text=True, env=env, check=False,
        )  # fmt: skip
        assert done.returncode == 0, done.stderr
        kinds.append(done.stdout.split()[-1])
        # a: she and he she -> 4 tokens, f 2, m 1: 1 - (1/6 + 1/6) = 2/3; b: 2 tokens, neutral
        assert out.read_text().splitlines() == [
            "docid,length,f,m,neutrality",
            "a,4,2,1,0.6666666666666667",
            "b,2,0,0,1.0",
        ]
    assert kinds[0] in ("aot", "jit") and kinds[1] == kinds[0]
    if kinds[0] == "aot":
        assert list((tmp_path / "k").glob("_rankbias_scan_*"))


def test_compiled_code_is_loaded_only_from_a_private_directory(tmp_path, monkeypatch):
    shared = tmp_path / "shared"
    shared.mkdir()
    shared.chmod(0o777)  # anyone could plant a module here
    monkeypatch.setenv("RANKBIAS_CACHE_DIR", str(shared))
    assert kernel.cache_dir() is None
    shared.chmod(0o700)
    assert kernel.cache_dir() == shared


def test_words_after_the_first_are_compared():
    """Tokens that share a term's size and first 8 bytes but not its later bytes are not the
    term, also when their hash lands on the term's slot (hundreds of variants make that
    certain for some of them in a table of 64 slots)."""
    lexicon = Lexicon.from_mapping({"abcdefghijklmnop": "f", "qrstuvwxyz0123456789": "m"})
    variants = []
    for term in lexicon.terms:
        for at in range(8, len(term)):
            for c in "abcdefghijklmnopqrstuvwxyz0123456789":
                if c != term[at]:
                    variants.append(term[:at] + c + term[at + 1 :])
    texts = [
        " ".join(variants[i : i + 40]) + " " + lexicon.terms[i % 2]
        for i in range(0, len(variants), 40)
    ]
    data = "".join(f"d{i}\t{t}\n" for i, t in enumerate(texts)).encode()
    for tokenizer in ("default", "whitespace"):
        status, n, _, lengths, counts, *_ = raw_scan(data, lexicon, tokenizer)
        want_lengths, want_counts, _ = reference(texts, lexicon, tokenizer)
        assert (status, n) == (kernel.STATUS_OK, len(texts))
        assert lengths[:n].tolist() == want_lengths
        assert counts[:n].tolist() == want_counts


def test_white_space_is_neither_case_ignorable_nor_cased():
    """The final-sigma rule may read past the right-stripped end of a text (the scanner does):
    that is exact only while no white space is case-ignorable or cased."""
    _, props, _ = kernel.unicode_tables()
    spaces = [c for c in range(0x110000) if chr(c).isspace()]
    assert len(spaces) == 29 and not (props[spaces] & (kernel._P_SKIP | kernel._P_CASED)).any()
