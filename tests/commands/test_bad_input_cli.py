"""Bad input through the `rankbias` command, as a user meets it: the default worker pool,
exit status 2, and one message naming the file, the line or id, and what was expected."""

from __future__ import annotations

import pytest

from rankbias.cli import main


@pytest.fixture
def files(tmp_path):
    (tmp_path / "c.tsv").write_text("d1\tshe said he\nd2\tthe man\n", encoding="utf-8")
    (tmp_path / "t.csv").write_text("she,f\nhe,m\nman,m\n", encoding="utf-8")
    return tmp_path


def run_cli(args, capsys):
    status = main([str(a) for a in args])
    return status, capsys.readouterr().err


@pytest.mark.parametrize(
    ("content", "message"),
    [
        (b"d1\tok\nd2\t\n", r"c2.tsv:2: document 'd2' has no text"),
        (b"d1\tok\nd2\tbad \xff byte\n", r"c2.tsv:2: byte 0xff .* is not valid UTF-8"),
        (b"d1\tok\nd2 no tab\n", r"c2.tsv:2:"),
    ],
)
def test_bad_collection_lines_through_the_worker_pool(files, capsys, content, message):
    import re

    (files / "c2.tsv").write_bytes(content * 1)
    status, err = run_cli(
        [
            "stats",
            "--collection",
            files / "c2.tsv",
            "--terms",
            files / "t.csv",
            "--out",
            files / "s.csv",
        ],
        capsys,
    )
    assert status == 2
    assert re.search(message, err), err


def test_duplicate_term_across_groups(files, capsys):
    (files / "dup.csv").write_text("she,f\nshe,m\n")
    status, err = run_cli(
        [
            "stats",
            "--collection",
            files / "c.tsv",
            "--terms",
            files / "dup.csv",
            "--out",
            files / "s.csv",
        ],
        capsys,
    )
    assert status == 2
    assert "dup.csv:2: term 'she'" in err


def test_missing_documents_are_an_error_or_counted(files, capsys):
    (files / "r.run").write_text("q1 Q0 d1 1 2 x\nq1 Q0 d9 2 1 x\n")
    args = [
        "score",
        "--collection",
        files / "c.tsv",
        "--terms",
        files / "t.csv",
        "--run",
        files / "r.run",
        "--out",
        files / "o.csv",
    ]
    status, err = run_cli(args, capsys)
    assert status == 2
    assert "1 document(s) absent from the collection" in err and "d9" in err
    status, err = run_cli([*args, "--missing", "neutral"], capsys)
    assert status == 0
    assert "1 retrieved document(s) absent from the collection, counted as neutral" in err
