"""A measure from outside the package: ``examples/measure-plugin`` installed with pip into a
folder on ``PYTHONPATH`` joins through the entry-point group ``rankbias.measures``; it is
listed, scored by both engines, and the tests that read the registry still pass."""

from __future__ import annotations

import io
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pandas as pd
import pytest

REPO = Path(__file__).resolve().parents[1]
EXAMPLE = REPO / "examples/measure-plugin"
BIN = Path(sys.executable).parent


@pytest.fixture(scope="module")
def plugin_env(tmp_path_factory):
    """The environment of a process that has the plugin installed (and this checkout's
    package first on the path)."""
    work = tmp_path_factory.mktemp("plugin")
    source = shutil.copytree(EXAMPLE, work / "source")  # the build writes beside the source
    target = work / "site"
    done = subprocess.run(
        [sys.executable, "-m", "pip", "install", "--quiet", "--no-deps", "--no-build-isolation",
         "--no-index", "--target", str(target), str(source)],
        capture_output=True, text=True, timeout=300,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    env = dict(os.environ)
    paths = [str(target), str(REPO / "src"), env.get("PYTHONPATH")]
    env["PYTHONPATH"] = os.pathsep.join(filter(None, paths))
    return env


def rankbias(env, *args) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-m", "rankbias.cli", *map(str, args)],
        env=env, capture_output=True, text=True, timeout=300,
    )  # fmt: skip


def test_the_plugin_is_listed(plugin_env):
    done = rankbias(plugin_env, "metrics", "--format", "csv")
    assert done.returncode == 0, done.stderr
    table = pd.read_csv(io.StringIO(done.stdout)).set_index("name")
    row = table.loc["gender_lean"]
    assert row["family"] == "gender_lean" and row["higher_is"] == "signed"
    assert row["parameters"] == "margin=0 (float)"
    assert {"nfairr", "texfair", "duo"} <= set(table.index)  # the package's own are still there
    if not (REPO / "src/rankbias/metrics/gender_lean.py").exists():  # no copy in the package
        env = {**plugin_env, "PYTHONPATH": str(REPO / "src")}
        without = rankbias(env, "metrics", "--format", "csv")
        assert "gender_lean" not in without.stdout  # it comes from the installed plugin


def test_the_plugin_is_scored_by_both_engines(plugin_env, tmp_path):
    # q1 lists a (2 m, 1 f: +1), b (no term: 0), c (2 f, 1 m: -1); q2 lists c then a
    (tmp_path / "c.tsv").write_text("a\the he she\nb\tthe rain\nc\tshe her he\nd\ther\n")
    (tmp_path / "r.run").write_text(
        "q1 Q0 a 1 3 x\nq1 Q0 b 2 2 x\nq1 Q0 c 3 1 x\nq2 Q0 c 1 2 x\nq2 Q0 a 2 1 x\n"
    )
    tables = []
    for engine in ("local", "dask"):
        out = tmp_path / f"{engine}.csv"
        done = rankbias(
            plugin_env, "score", "--collection", tmp_path / "c.tsv", "--terms", "default",
            "--run", tmp_path / "r.run", "--metrics", "gender_lean,gender_lean(margin=1)@3",
            "--cutoffs", "1,3", "--engine", engine, "--workers", "2", "--quiet", "--out", out,
        )  # fmt: skip
        assert done.returncode == 0, done.stderr
        tables.append(pd.read_csv(out))
    pd.testing.assert_frame_equal(tables[0], tables[1])
    value = tables[0].set_index(["qid", "metric", "cutoff"])["value"]
    assert value["q1", "gender_lean", 1] == 1 and value["q1", "gender_lean", 3] == 0
    assert value["q2", "gender_lean", 1] == -1 and value["q2", "gender_lean", 3] == 0
    assert value["q1", "gender_lean(margin=1)", 3] == 0


def test_the_registry_tests_pass_with_the_plugin_installed(plugin_env):
    tests = [
        "tests/metrics/test_measures.py", "tests/commands/test_metrics_command.py",
        "tests/test_scoring.py", "tests/test_engines.py", "tests/test_book_extending.py",
        str(EXAMPLE / "tests"),
    ]  # fmt: skip
    done = subprocess.run(
        [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", *tests],
        cwd=REPO, env=plugin_env, capture_output=True, text=True, timeout=900,
    )  # fmt: skip
    assert done.returncode == 0, done.stdout[-3000:]


@pytest.mark.parametrize(
    ("value", "found"),
    [
        ("json:dumps", "expected a Measure, a list of them or a module, found function"),
        ("no_such_module_here:M", "(no_such_module_here:M, entry point group 'rankbias.measures') "
         "failed to load: No module named 'no_such_module_here'"),
    ],
)  # fmt: skip
def test_a_broken_plugin_is_the_users_error_named_not_a_bug(tmp_path, value, found):
    """An installed entry point that names no measure, or a module that is not there, stops the
    command with exit status 2 and one line naming the entry point: the environment is to be
    mended, so the message is not rankbias's "internal error … please report it"."""
    info = tmp_path / "broken_plugin-0.1.dist-info"  # what pip installs, written by hand
    info.mkdir()
    (info / "METADATA").write_text("Metadata-Version: 2.1\nName: broken-plugin\nVersion: 0.1\n")
    (info / "entry_points.txt").write_text(f"[rankbias.measures]\nlean = {value}\n")
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(tmp_path), str(REPO / "src")])}
    done = rankbias(env, "metrics")
    assert done.returncode == 2 and done.stdout == ""
    assert done.stderr.startswith("rankbias metrics: error: measure plugin 'lean' ")
    assert done.stderr.rstrip("\n").endswith(found) and done.stderr.count("\n") == 1
