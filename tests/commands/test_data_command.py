"""``rankbias data fetch | verify | build`` through the command-line entry point."""

from __future__ import annotations

import hashlib
import sys
import types
from pathlib import Path

import pytest
from public_data import PUBLIC

from rankbias.cli import main

# (local path, repository path) of the files these tests mirror, written out by hand from
# SOURCES.md; the commits are the pinned ones.
REKABSAZ = "navid-rekabsaz/GenderBias_IR/3b940f978e8db5a890899b953dba1fa3e05cc3d3"
CPJKU = "CPJKU/FairnessRetrievalResults/81693da5305d67307673574252a4d963510a3632"
MIRRORED = {
    "rekabsaz_genderbias_ir/LICENSE": f"{REKABSAZ}/LICENSE",
    "rekabsaz_genderbias_ir/queries_gender_annotated.csv": (
        f"{REKABSAZ}/resources/queries_gender_annotated.csv"
    ),
    "rekabsaz_genderbias_ir/wordlist_genderspecific.txt": (
        f"{REKABSAZ}/resources/wordlist_genderspecific.txt"
    ),
    "cpjku_fairness_retrieval_results/LICENSE": f"{CPJKU}/LICENSE",
    "cpjku_fairness_retrieval_results/runs/msmarco_passage/BM25.run": (
        f"{CPJKU}/measurement/sample_trec_runs/msmarco_passage/BM25.run"
    ),
}


@pytest.fixture(scope="module")
def public() -> Path:
    if not PUBLIC.is_dir():
        pytest.skip(f"the reference copy of the public resources is absent ({PUBLIC})")
    return PUBLIC.resolve()


@pytest.fixture
def mirror(tmp_path: Path, public: Path) -> Path:
    root = tmp_path / "mirror"
    for local, remote in MIRRORED.items():
        target = root / remote
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_bytes((public / local).read_bytes())
    return root


def test_fetch_a_bundle_then_verify_it(tmp_path: Path, mirror: Path, public: Path, capsys) -> None:
    dest = tmp_path / "public"
    assert (
        main(["data", "fetch", "genderbias_ir", "--dest", str(dest), "--mirror", mirror.as_uri()])
        == 0
    )
    out = capsys.readouterr().out
    assert out.count("fetched rekabsaz/") == 3
    for local in list(MIRRORED)[:3]:
        assert (dest / local).read_bytes() == (public / local).read_bytes()

    assert (
        main(["data", "fetch", "genderbias_ir", "--dest", str(dest), "--mirror", mirror.as_uri()])
        == 0
    )
    assert capsys.readouterr().out.count("skipped rekabsaz/") == 3

    assert main(["data", "verify", "genderbias_ir", "--dest", str(dest)]) == 0
    assert capsys.readouterr().out.count("ok ") == 3


def test_fetch_with_a_directory_as_mirror(tmp_path: Path, mirror: Path, public: Path) -> None:
    dest = tmp_path / "public"
    name = "cpjku/runs/msmarco_passage/BM25.run"
    assert main(["data", "fetch", name, "--dest", str(dest), "--mirror", str(mirror)]) == 0
    local = "cpjku_fairness_retrieval_results/runs/msmarco_passage/BM25.run"
    assert (dest / local).read_bytes() == (public / local).read_bytes()


def test_a_bad_checksum_exits_2_with_a_clear_message(tmp_path: Path, mirror: Path, capsys) -> None:
    target = mirror / MIRRORED["rekabsaz_genderbias_ir/wordlist_genderspecific.txt"]
    data = bytearray(target.read_bytes())
    data[7] ^= 0x20  # "boys" becomes "bOys"
    target.write_bytes(bytes(data))
    dest = tmp_path / "public"
    status = main(
        [
            "data",
            "fetch",
            "rekabsaz/wordlist_genderspecific.txt",
            "--dest",
            str(dest),
            "--mirror",
            mirror.as_uri(),
        ]
    )
    assert status == 2
    err = capsys.readouterr().err
    assert err.startswith("rankbias data: error: refused rekabsaz/wordlist_genderspecific.txt")
    assert target.as_uri() in err
    assert hashlib.sha256(bytes(data)).hexdigest() in err
    assert "checksum differs" in err
    assert not (dest / "rekabsaz_genderbias_ir" / "wordlist_genderspecific.txt").exists()


def test_verify_exits_2_on_missing_files(tmp_path: Path, capsys) -> None:
    status = main(["data", "verify", "cpjku/LICENSE", "--dest", str(tmp_path)])
    assert status == 2
    captured = capsys.readouterr()
    assert "missing  cpjku/LICENSE" in captured.out
    assert "1 of 1 resource(s)" in captured.err
    assert str(tmp_path / "cpjku_fairness_retrieval_results" / "LICENSE") in captured.err


def test_verify_names_three_missing_files_and_counts_the_others(tmp_path, capsys) -> None:
    # the line named all 29 files, 3.5 kB; the list above it has each of them
    assert main(["data", "verify", "--dest", str(tmp_path)]) == 2
    captured = capsys.readouterr()
    assert captured.out.count("missing  ") == 29
    err = captured.err.strip()
    assert len(err.splitlines()) == 1 and err.count(" missing") == 3
    assert "; and 26 more (listed above) — run `rankbias data fetch`" in err


@pytest.mark.parametrize("command", [["fetch", "--dest"], ["verify", "--dest"], ["build", "--out"]])
def test_an_empty_directory_name_is_refused_not_read_as_the_current_one(command, capsys):
    # Path("") is ".": fetch --dest "" downloaded into the current directory
    assert main(["data", *command, ""]) == 2
    assert capsys.readouterr().err == (
        f"rankbias data: error: {command[1]} '': expected a directory name\n"
    )


def test_verify_the_reference_copy(public: Path, capsys) -> None:
    assert main(["data", "verify", "--dest", str(public)]) == 0
    assert capsys.readouterr().out.count("ok ") == 29


def test_an_unknown_name_exits_2(tmp_path: Path, capsys) -> None:
    assert main(["data", "fetch", "qs3", "--dest", str(tmp_path)]) == 2
    assert "unknown public resource or bundle 'qs3'" in capsys.readouterr().err


def test_list_prints_bundles_and_urls_and_downloads_nothing(tmp_path: Path, capsys) -> None:
    dest = tmp_path / "public"
    # --list writes nothing: a --dest or --overwrite beside it would be ignored, so is refused
    for extra in (["--dest", str(dest)], ["--overwrite"]):
        assert main(["data", "fetch", "runs_trecdl2019", "--list", *extra]) == 2
        assert capsys.readouterr().err == (
            f"rankbias data: error: {extra[0]}: --list downloads nothing; expected one or the "
            "other\n"
        )
    assert main(["data", "fetch", "runs_trecdl2019", "--list"]) == 0
    out = capsys.readouterr().out
    for bundle in ("genderbias_ir", "fairness_retrieval", "runs_msmarco", "runs_trecdl2019", "all"):
        assert f"  {bundle} " in out
    assert (
        "https://raw.githubusercontent.com/CPJKU/FairnessRetrievalResults/"
        "81693da5305d67307673574252a4d963510a3632/measurement/sample_trec_runs/"
        "trecdl2019_passage/knrm.run"
    ) in out
    assert "cpjku/runs/msmarco_passage/" not in out
    assert not dest.exists()


def test_build_dispatches_to_wikisample(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    calls = []
    fake = types.ModuleType("rankbias.data.wikisample")
    fake.build = lambda out_dir, force=False, log=print: calls.append((out_dir, force))
    monkeypatch.setitem(sys.modules, "rankbias.data.wikisample", fake)
    assert main(["data", "build", "--out", str(tmp_path / "w")]) == 0
    assert main(["data", "build", "--out", str(tmp_path / "v"), "--force"]) == 0
    assert calls == [(tmp_path / "w", False), (tmp_path / "v", True)]


def test_build_requires_out(capsys) -> None:
    assert main(["data", "build"]) == 2
    err = capsys.readouterr().err
    assert "--out" in err and len(err.strip().splitlines()) == 1


def test_output_directories_that_are_files_are_refused_before_the_work(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys
) -> None:
    calls = []
    fake = types.ModuleType("rankbias.data.wikisample")
    fake.build = lambda out_dir, force=False, log=print: calls.append(out_dir)
    monkeypatch.setitem(sys.modules, "rankbias.data.wikisample", fake)
    plain = tmp_path / "plain"
    plain.write_text("x")
    assert main(["data", "build", "--out", str(plain)]) == 2
    assert (
        capsys.readouterr().err
        == f"rankbias data: error: --out {plain}: is a file; expected a directory\n"
    )
    assert main(["data", "fetch", "cpjku/LICENSE", "--dest", str(plain / "sub")]) == 2
    err = capsys.readouterr().err
    assert err.startswith(f"rankbias data: error: --dest {plain / 'sub'}: {plain} is not a dir")
    assert calls == [] and plain.read_text() == "x"
    # verify reported all 29 resources "missing" under a file
    assert main(["data", "verify", "--dest", str(plain)]) == 2
    assert capsys.readouterr().err == (
        f"rankbias data: error: --dest {plain}: is a file; expected a directory\n"
    )


@pytest.mark.parametrize("listing", [True, False])
def test_an_empty_mirror_is_refused(tmp_path: Path, capsys, listing) -> None:
    # --list ignored it; a download took it for the current directory (file:///cwd/…)
    extra = ["--list"] if listing else ["--dest", str(tmp_path / "d")]
    assert main(["data", "fetch", "cpjku/LICENSE", "--mirror", "", *extra]) == 2
    assert capsys.readouterr().err == (
        "rankbias data: error: mirror '': expected a base URL or a directory, found none\n"
    )
    assert not (tmp_path / "d").exists()


def test_build_progress_on_a_terminal_only(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    import logging

    from tqdm import tqdm

    seen = []
    fake = types.ModuleType("rankbias.data.wikisample")
    level = logging.getLogger("sentence_transformers")
    fake.build = lambda out_dir, force=False, log=print: seen.append(
        (log, level.getEffectiveLevel())
    )
    monkeypatch.setitem(sys.modules, "rankbias.data.wikisample", fake)
    monkeypatch.setattr(level, "level", logging.WARNING)
    assert main(["data", "build", "--out", str(tmp_path / "w")]) == 0  # stderr is not a tty here
    monkeypatch.setattr("rankbias.commands.data.wanted", lambda args: not args.quiet)
    assert main(["data", "build", "--out", str(tmp_path / "w"), "--quiet"]) == 0
    assert seen == [(print, logging.WARNING), (print, logging.WARNING)]
    # on a terminal: log lines above the bars, and sentence-transformers shows its encoding bars
    assert main(["data", "build", "--out", str(tmp_path / "w")]) == 0
    assert seen[-1] == (tqdm.write, logging.INFO)


def test_verify_reports_a_file_that_differs_with_both_checksums(tmp_path, public, capsys):
    """A catalogued file one byte longer: status 2, its line names it and its path, the
    message gives the catalogued and the found checksum and size (sha256 computed here)."""
    name = Path("cpjku_fairness_retrieval_results") / "LICENSE"
    original = (public / name).read_bytes()
    local = tmp_path / name
    local.parent.mkdir()
    local.write_bytes(original + b"\n")
    assert main(["data", "verify", "cpjku/LICENSE", "--dest", str(tmp_path)]) == 2
    out, err = capsys.readouterr()
    assert out == f"differs  cpjku/LICENSE  ({local})\n"
    expected, found = (hashlib.sha256(data).hexdigest() for data in (original, original + b"\n"))
    assert err == (
        f"rankbias data: error: 1 of 1 resource(s) in {tmp_path} failed verification: {local}: "
        f"expected sha256 {expected} ({len(original)} bytes), found sha256 {found} "
        f"({len(original) + 1} bytes) — run `rankbias data fetch` (with --overwrite for files "
        "that differ)\n"
    )


def test_verify_names_three_failures_and_counts_a_fourth(tmp_path, capsys):
    assert main(["data", "verify", "genderbias_ir", "cpjku/LICENSE", "--dest", str(tmp_path)]) == 2
    err = capsys.readouterr().err
    assert err.count(" missing") == 3 and "; and 1 more (listed above) — run" in err
