"""The public-resource catalogue and the downloader, against a local mirror of the files."""

from __future__ import annotations

import filecmp
import functools
import hashlib
import http.server
import os
import shutil
import threading
import time
from pathlib import Path

import pytest
from public_data import PUBLIC

from rankbias.data import catalog
from rankbias.data.fetch import fetch, verify
from rankbias.errors import InputError

REKABSAZ_COMMIT = "3b940f978e8db5a890899b953dba1fa3e05cc3d3"
CPJKU_COMMIT = "81693da5305d67307673574252a4d963510a3632"


@pytest.fixture(scope="module")
def public() -> Path:
    if not PUBLIC.is_dir():
        pytest.skip(f"the reference copy of the public resources is absent ({PUBLIC})")
    return PUBLIC.resolve()


def public_files(public: Path) -> dict[str, Path]:
    """Every file of the reference copy except SOURCES.md, by relative path."""
    return {
        p.relative_to(public).as_posix(): p
        for p in public.rglob("*")
        if p.is_file() and p.name != "SOURCES.md"
    }


def build_mirror(root: Path, public: Path) -> Path:
    """A mirror laid out as <owner>/<repo>/<commit>/<path>, files symlinked from ``public``."""
    for resource in catalog.resources().values():
        target = root / resource.repository / resource.commit / resource.path
        target.parent.mkdir(parents=True, exist_ok=True)
        target.symlink_to(public / resource.local_path)
    return root


@pytest.fixture
def mirror(tmp_path: Path, public: Path) -> Path:
    return build_mirror(tmp_path / "mirror", public)


# --- the catalogue --------------------------------------------------------------------------


def test_catalogue_lists_every_public_file_once(public: Path) -> None:
    files = public_files(public)
    local_paths = [r.local_path for r in catalog.resources().values()]
    assert len(local_paths) == len(set(local_paths))
    assert sorted(local_paths) == sorted(files)
    # 3 Rekabsaz files; CPJKU: LICENSE, word list, 4 query files, 2 x 10 runs
    assert len(files) == 29


def test_catalogue_sizes_and_checksums_match_the_public_files(public: Path) -> None:
    for resource in catalog.resources().values():
        data = (public / resource.local_path).read_bytes()
        assert resource.size == len(data), resource.name
        assert resource.sha256 == hashlib.sha256(data).hexdigest(), resource.name


def test_catalogue_pins_repositories_commits_and_licenses() -> None:
    for resource in catalog.resources().values():
        if resource.name.startswith("rekabsaz/"):
            assert (resource.repository, resource.commit) == (
                "navid-rekabsaz/GenderBias_IR",
                REKABSAZ_COMMIT,
            )
        else:
            assert resource.name.startswith("cpjku/")
            assert (resource.repository, resource.commit) == (
                "CPJKU/FairnessRetrievalResults",
                CPJKU_COMMIT,
            )
        assert resource.license == "MIT"


def test_urls_follow_the_raw_github_pattern() -> None:
    bm25 = catalog.resource("cpjku/runs/msmarco_passage/BM25.run")
    assert bm25.url() == (
        "https://raw.githubusercontent.com/CPJKU/FairnessRetrievalResults/"
        "81693da5305d67307673574252a4d963510a3632/"
        "measurement/sample_trec_runs/msmarco_passage/BM25.run"
    )
    words = catalog.resource("rekabsaz/wordlist_genderspecific.txt")
    assert words.url() == (
        "https://raw.githubusercontent.com/navid-rekabsaz/GenderBias_IR/"
        "3b940f978e8db5a890899b953dba1fa3e05cc3d3/resources/wordlist_genderspecific.txt"
    )
    qs2 = catalog.resource("cpjku/msmarco_passage.dev.fair.tsv")
    assert qs2.url("file:///srv/mirror/") == (
        "file:///srv/mirror/CPJKU/FairnessRetrievalResults/"
        "81693da5305d67307673574252a4d963510a3632/dataset/msmarco_passage.dev.fair.tsv"
    )


def test_bundles() -> None:
    bundles = catalog.bundles()
    assert set(bundles) >= {
        "genderbias_ir",
        "fairness_retrieval",
        "runs_msmarco",
        "runs_trecdl2019",
        "all",
    }
    assert sorted(bundles["genderbias_ir"].members) == [
        "rekabsaz/LICENSE",
        "rekabsaz/queries_gender_annotated.csv",
        "rekabsaz/wordlist_genderspecific.txt",
    ]
    rankers = ["BM25", "RM3", "advbert_L2", "advbert_L4", "bert_L2", "bert_L4"]
    rankers += ["conv_knrm", "knrm", "match_pyramid", "tk"]
    for bundle, folder in (
        ("runs_msmarco", "msmarco_passage"),
        ("runs_trecdl2019", "trecdl2019_passage"),
    ):
        expected = {f"cpjku/runs/{folder}/{ranker}.run" for ranker in rankers} | {"cpjku/LICENSE"}
        assert set(bundles[bundle].members) == expected
    assert sorted(bundles["all"].members) == sorted(catalog.resources())
    named = set().union(*(set(b.members) for n, b in bundles.items() if n != "all"))
    assert named == set(catalog.resources())


def test_select_resolves_names_and_bundles_without_duplicates() -> None:
    chosen = catalog.select(["cpjku/LICENSE", "runs_msmarco", "rekabsaz/LICENSE"])
    names = [r.name for r in chosen]
    assert names[0] == "cpjku/LICENSE"
    assert names[-1] == "rekabsaz/LICENSE"
    assert len(names) == len(set(names)) == 12


def test_unknown_name_is_an_error() -> None:
    with pytest.raises(InputError, match="'runs_msmarko'"):
        catalog.select(["runs_msmarko"])


# --- fetching -------------------------------------------------------------------------------


def test_fetch_everything_from_a_file_mirror(tmp_path: Path, mirror: Path, public: Path) -> None:
    dest = tmp_path / "dest"
    messages: list[str] = []
    paths = fetch("all", dest, base_url=mirror.as_uri(), report=messages.append)
    files = public_files(public)
    assert sorted(p.relative_to(dest).as_posix() for p in paths) == sorted(files)
    for relative, original in files.items():
        copy = dest / relative
        assert not copy.is_symlink()
        assert filecmp.cmp(copy, original, shallow=False), relative
    # nothing but the 29 files: no temporary files left behind
    assert sorted(p.relative_to(dest).as_posix() for p in dest.rglob("*") if p.is_file()) == sorted(
        files
    )
    assert len(messages) == 29 and all(m.startswith("fetched ") for m in messages)
    assert [c.status for c in verify(dest)] == ["ok"] * 29


def test_fetch_accepts_a_plain_directory_as_mirror(
    tmp_path: Path, mirror: Path, public: Path
) -> None:
    dest = tmp_path / "dest"
    (path,) = fetch("rekabsaz/wordlist_genderspecific.txt", dest, base_url=str(mirror), report=None)
    assert path == dest / "rekabsaz_genderbias_ir" / "wordlist_genderspecific.txt"
    assert (
        path.read_bytes()
        == (public / "rekabsaz_genderbias_ir/wordlist_genderspecific.txt").read_bytes()
    )


def corrupt(mirror: Path, name: str, change) -> tuple[catalog.Resource, bytes]:
    """Replace the mirror's file of ``name`` by ``change(original bytes)``."""
    resource = catalog.resource(name)
    target = mirror / resource.repository / resource.commit / resource.path
    data = change(target.read_bytes())
    target.unlink()
    target.write_bytes(data)
    return resource, data


def flip_one_byte(data: bytes) -> bytes:
    middle = len(data) // 2
    return data[:middle] + bytes([data[middle] ^ 0x01]) + data[middle + 1 :]


@pytest.mark.parametrize(
    "change",
    [flip_one_byte, lambda data: data + b"\n", lambda data: data[:-1]],
    ids=["one byte changed", "one byte longer", "one byte shorter"],
)
def test_a_corrupted_file_is_refused_and_not_left_in_dest(
    tmp_path: Path, mirror: Path, public: Path, change
) -> None:
    name = "cpjku/runs/trecdl2019_passage/tk.run"
    resource, data = corrupt(mirror, name, change)
    assert data != (public / resource.local_path).read_bytes()
    dest = tmp_path / "dest"
    url = f"{mirror.as_uri()}/CPJKU/FairnessRetrievalResults/{CPJKU_COMMIT}/" + (
        "measurement/sample_trec_runs/trecdl2019_passage/tk.run"
    )
    with pytest.raises(InputError) as caught:
        fetch(name, dest, base_url=mirror.as_uri(), report=None)
    message = str(caught.value)
    assert name in message
    assert url in message
    assert resource.sha256 in message
    assert "checksum differs" in message
    assert f"found sha256 {hashlib.sha256(data).hexdigest()} ({len(data)} bytes)" in message
    assert [p for p in dest.rglob("*") if p.is_file()] == []


def test_reading_stops_on_a_much_longer_answer(tmp_path: Path, mirror: Path) -> None:
    name = "rekabsaz/wordlist_genderspecific.txt"  # 578 bytes
    corrupt(mirror, name, lambda data: data * 5000)  # 2.9 MB: over twice the size plus 1 MiB
    dest = tmp_path / "dest"
    with pytest.raises(InputError, match="found more than 1049732 bytes, reading stopped"):
        fetch(name, dest, base_url=mirror.as_uri(), report=None)
    assert [p for p in dest.rglob("*") if p.is_file()] == []


def test_a_bad_file_stops_the_fetch_but_keeps_the_verified_ones(
    tmp_path: Path, mirror: Path
) -> None:
    corrupt(mirror, "rekabsaz/wordlist_genderspecific.txt", flip_one_byte)
    dest = tmp_path / "dest"
    with pytest.raises(InputError, match="rekabsaz/wordlist_genderspecific.txt"):
        fetch(
            ["rekabsaz/LICENSE", "rekabsaz/wordlist_genderspecific.txt"],
            dest,
            base_url=mirror.as_uri(),
            report=None,
        )
    present = sorted(p.relative_to(dest).as_posix() for p in dest.rglob("*") if p.is_file())
    assert present == ["rekabsaz_genderbias_ir/LICENSE"]


def test_files_already_present_are_skipped(tmp_path: Path, mirror: Path) -> None:
    dest = tmp_path / "dest"
    first = fetch("genderbias_ir", dest, base_url=mirror.as_uri(), report=None)
    stamps = {p: p.stat().st_mtime_ns for p in first}
    empty = tmp_path / "empty-mirror"
    empty.mkdir()
    messages: list[str] = []
    # a mirror that holds nothing: any download attempt would fail
    second = fetch("genderbias_ir", dest, base_url=empty.as_uri(), report=messages.append)
    assert second == first
    assert {p: p.stat().st_mtime_ns for p in second} == stamps
    assert len(messages) == 3
    assert all(m.startswith("skipped ") and "already present" in m for m in messages)


def test_a_present_file_that_differs_is_an_error_unless_overwrite(
    tmp_path: Path, mirror: Path, public: Path
) -> None:
    name = "rekabsaz/wordlist_genderspecific.txt"
    dest = tmp_path / "dest"
    (target,) = fetch(name, dest, base_url=mirror.as_uri(), report=None)
    original = target.read_bytes()
    target.write_bytes(flip_one_byte(original))
    with pytest.raises(InputError, match="present but not") as caught:
        fetch(name, dest, base_url=mirror.as_uri(), report=None)
    assert hashlib.sha256(flip_one_byte(original)).hexdigest() in str(caught.value)
    assert str(target) in str(caught.value)
    fetch(name, dest, base_url=mirror.as_uri(), overwrite=True, report=None)
    assert target.read_bytes() == original


def test_a_missing_mirror_file_is_a_download_error(tmp_path: Path, mirror: Path) -> None:
    resource = catalog.resource("cpjku/LICENSE")
    (mirror / resource.repository / resource.commit / resource.path).unlink()
    with pytest.raises(InputError, match="could not download cpjku/LICENSE"):
        fetch("cpjku/LICENSE", tmp_path / "dest", base_url=mirror.as_uri(), report=None)


def test_a_mirror_that_is_neither_url_nor_directory_is_an_error(tmp_path: Path) -> None:
    with pytest.raises(InputError, match="nowhere"):
        fetch("all", tmp_path / "dest", base_url=str(tmp_path / "nowhere"), report=None)


@pytest.fixture
def http_mirror(mirror: Path):
    handler = functools.partial(http.server.SimpleHTTPRequestHandler, directory=os.fspath(mirror))
    handler.func.log_message = lambda *args: None
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}"
    finally:
        server.shutdown()
        server.server_close()


def test_fetch_over_http(tmp_path: Path, http_mirror: str, public: Path, mirror: Path) -> None:
    dest = tmp_path / "dest"
    paths = fetch("fairness_retrieval", dest, base_url=http_mirror, report=None)
    assert len(paths) == 6
    for path in paths:
        relative = path.relative_to(dest)
        assert path.read_bytes() == (public / relative).read_bytes()
    resource = catalog.resource("cpjku/msmarco_passage.dev.fair.tsv")
    (mirror / resource.repository / resource.commit / resource.path).unlink()
    with pytest.raises(InputError, match="404"):
        fetch(resource.name, tmp_path / "other", base_url=http_mirror, report=None)


# --- verifying ------------------------------------------------------------------------------


def test_verify_reports_missing_and_differing_files(tmp_path: Path, public: Path) -> None:
    dest = tmp_path / "dest"
    shutil.copytree(public / "rekabsaz_genderbias_ir", dest / "rekabsaz_genderbias_ir")
    (dest / "rekabsaz_genderbias_ir" / "LICENSE").chmod(0o644)
    (dest / "rekabsaz_genderbias_ir" / "LICENSE").write_text("not the license\n")
    checks = {c.resource.name: c for c in verify(dest, ["genderbias_ir", "cpjku/LICENSE"])}
    assert {name: c.status for name, c in checks.items()} == {
        "rekabsaz/LICENSE": "differs",
        "rekabsaz/queries_gender_annotated.csv": "ok",
        "rekabsaz/wordlist_genderspecific.txt": "ok",
        "cpjku/LICENSE": "missing",
    }
    assert (
        checks["rekabsaz/LICENSE"].found_sha256 == hashlib.sha256(b"not the license\n").hexdigest()
    )
    assert checks["rekabsaz/LICENSE"].found_size == 16


def test_the_reference_copy_itself_verifies(public: Path) -> None:
    assert {c.status for c in verify(public)} == {"ok"}


# --- partial downloads: removed after killed runs, never left behind -------------------------


def dead_process_id() -> int:
    import subprocess
    import sys

    done = subprocess.run([sys.executable, "-c", "import os; print(os.getpid())"],
                          capture_output=True, text=True, check=True)  # fmt: skip
    return int(done.stdout)


def test_partial_downloads_of_killed_runs_are_removed(tmp_path: Path, mirror: Path) -> None:
    import time

    name = "rekabsaz/wordlist_genderspecific.txt"
    target = tmp_path / "dest" / catalog.resource(name).local_path
    target.parent.mkdir(parents=True)
    dead = target.parent / f".{target.name}.{dead_process_id()}.k2j4x.tmp"
    alive = target.parent / f".{target.name}.{os.getpid()}.q9z1w.tmp"  # a concurrent download
    old_style = target.parent / f".{target.name}.{'ab' * 16}.part"  # earlier versions' name
    fresh_old_style = target.parent / f".{target.name}.{'cd' * 16}.part"
    for path in (dead, alive, old_style, fresh_old_style):
        path.write_bytes(b"half a file")
    an_hour_ago = time.time() - 3600
    os.utime(old_style, (an_hour_ago, an_hour_ago))
    messages: list[str] = []
    fetch(name, tmp_path / "dest", base_url=mirror.as_uri(), report=messages.append)
    assert not dead.exists() and not old_style.exists()
    assert alive.exists() and fresh_old_style.exists()
    removed = sorted(m for m in messages if m.startswith("removed a partial download"))
    assert removed == sorted(
        f"removed a partial download left by an interrupted run: {p}" for p in (dead, old_style)
    )


class StallingHandler(http.server.BaseHTTPRequestHandler):
    """Announces 10 MB, sends 64 KiB, then waits: a download that is still running."""

    def do_GET(self):  # noqa: N802 - the name http.server calls
        self.send_response(200)
        self.send_header("Content-Length", str(10_000_000))
        self.end_headers()
        self.wfile.write(b"x" * 65536)
        self.wfile.flush()
        time.sleep(30)

    def log_message(self, *args):
        pass


@pytest.mark.signals
def test_a_terminated_download_leaves_no_partial_file(tmp_path: Path) -> None:
    import signal
    import subprocess
    import sys

    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), StallingHandler)
    server.daemon_threads = True
    threading.Thread(target=server.serve_forever, daemon=True).start()
    dest = tmp_path / "dest"
    src = Path(__file__).resolve().parents[2] / "src"
    script = "import sys; from rankbias.cli import main; sys.exit(main())"
    try:
        child = subprocess.Popen(
            [sys.executable, "-c", script, "data", "fetch", "cpjku/LICENSE", "--dest", str(dest),
             "--mirror", f"http://127.0.0.1:{server.server_address[1]}"],
            env={**os.environ, "PYTHONPATH": str(src)}, stderr=subprocess.PIPE, text=True,
        )  # fmt: skip
        deadline = time.monotonic() + 60
        while not list(dest.rglob(".LICENSE.*.tmp")):
            assert time.monotonic() < deadline and child.poll() is None, "no download started"
            time.sleep(0.01)
        time.sleep(0.3)  # the download waits for the rest of the answer
        child.send_signal(signal.SIGTERM)
        _, err = child.communicate(timeout=60)
    finally:
        server.shutdown()
    assert child.returncode == 143, err
    assert "terminated by SIGTERM" in err and "Traceback" not in err
    assert [p for p in dest.rglob("*") if p.is_file()] == []
