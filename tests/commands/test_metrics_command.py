"""``rankbias metrics`` and ``rankbias score --metrics name@k`` on the command line."""

from __future__ import annotations

import csv
import io
import json
from pathlib import Path

import pandas as pd
import pytest

from rankbias.cli import main
from rankbias.lexicon import default_lexicon
from rankbias.metrics.measures import measures

REPO = Path(__file__).resolve().parents[2]
TESTBED = REPO / "data/build/wikisample"
COLUMNS = ["name", "family", "higher_is", "inputs", "parameters", "reference", "display"]
FAMILIES = {"rab", "fairr", "texfair", "duo", "rank_fairness", "prf", "rbo"}


def test_metrics_csv_lists_every_family_with_an_enumerated_direction(capsys):
    assert main(["metrics", "--format", "csv"]) == 0
    rows = list(csv.DictReader(io.StringIO(capsys.readouterr().out)))
    assert list(rows[0]) == COLUMNS
    # every registered measure once, under its family; the families of the issue among them
    registered = measures()
    assert sorted(r["name"] for r in rows) == sorted(m.name for m in registered)
    assert {(r["name"], r["family"]) for r in rows} == {(m.name, m.family) for m in registered}
    assert FAMILIES <= {r["family"] for r in rows}
    assert {r["higher_is"] for r in rows} <= {"fairer", "more_biased", "signed", "neither"}
    names = {r["name"] for r in rows}
    for name in ("arab", "nfairr", "awrf", "texfair", "duo", "rnd", "rkl", "prf_m", "ts", "crbo"):
        assert name in names
    rnd = next(r for r in rows if r["name"] == "rnd")
    assert "normalisation=max (max|min_max)" in rnd["parameters"]
    assert rnd["inputs"] == "group_membership" and "yang2017measuring" in rnd["reference"]


def test_metrics_json_and_table(capsys):
    assert main(["metrics", "--format", "json"]) == 0
    records = json.loads(capsys.readouterr().out)
    assert [list(r) for r in records[:1]] == [COLUMNS]
    assert sorted(r["name"] for r in records) == sorted(m.name for m in measures())
    assert FAMILIES <= {r["family"] for r in records}
    assert main(["metrics"]) == 0
    table = capsys.readouterr().out
    assert table.split("\n")[0].split() == COLUMNS and "texfair_norbdf" in table
    assert main(["metrics", "--format", "xml"]) == 2
    assert "invalid choice: 'xml'" in capsys.readouterr().err


@pytest.fixture
def terms(tmp_path) -> Path:
    lexicon = default_lexicon()
    path = tmp_path / "terms.csv"
    lines = [f"{t},{g}" for g in lexicon.groups for t in lexicon.terms_of(g)]
    path.write_text("\n".join(lines) + "\n")
    return path


@pytest.mark.skipif(not TESTBED.exists(), reason="the wikisample testbed is not built")
def test_name_at_k_equals_cutoffs_on_the_testbed(tmp_path, terms, capsys):
    base = ["score", "--collection", str(TESTBED / "collection.tsv"), "--terms", str(terms),
            "--run", str(TESTBED / "runs/bm25.run"), "--workers", "1", "--quiet"]  # fmt: skip
    at_k, plain = tmp_path / "at_k.csv", tmp_path / "plain.csv"
    assert main(base + ["--metrics", "texfair@10,nfairr(tau=0)@5", "--out", str(at_k)]) == 0
    assert main(base + ["--metrics", "texfair", "--cutoffs", "10", "--out", str(plain)]) == 0
    first, second = pd.read_csv(at_k), pd.read_csv(plain)
    texfair = first[first.metric == "texfair"].reset_index(drop=True)
    pd.testing.assert_frame_equal(texfair, second)
    assert len(second) > 100 and set(second.cutoff) == {10}
    tau0 = first[first.metric == "nfairr(tau=0)"]
    assert set(tau0.cutoff) == {5} and len(tau0) == len(second)
    capsys.readouterr()
    # a measure whose input is not given names the option that gives it
    assert main(base + ["--metrics", "texfair@10,duo@10", "--out", str(tmp_path / "d.csv")]) == 2
    err = capsys.readouterr().err
    assert "duo@10 need(s) polarisation scores; expected --polarisation FILE" in err
    assert not (tmp_path / "d.csv").exists()
    assert main(base + ["--metrics", "texfair@0", "--out", str(tmp_path / "e.csv")]) == 2
    assert "bad cut-off '0'" in capsys.readouterr().err
