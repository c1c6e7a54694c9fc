"""One computation: ``rankbias score`` gives the same table on ``--engine local`` and on
``--engine dask`` (a cluster of two worker processes) for every registered measure, at its
defaults and over a grid of its parameters, on generated data whose most neutral documents
are in no run (so NFaiRR's collection-wide ideal must come from the whole collection)."""

from __future__ import annotations

import itertools

import numpy as np
import pandas as pd
import pytest

distributed = pytest.importorskip(
    "distributed", reason="dask.distributed is not installed (the optional extra 'dask')"
)

import rankbias.distributed as engine  # noqa: E402
from rankbias.cli import main  # noqa: E402
from rankbias.lexicon import default_lexicon  # noqa: E402
from rankbias.metrics.measures import MeasureRequest, measures  # noqa: E402
from rankbias.scoring import required_inputs  # noqa: E402

WORDS = ["river", "stone", "market", "winter", "garden", "letter", "bridge", "music"]
N_QUERIES, DEPTH = 12, 15


def grid(measure) -> list[MeasureRequest]:
    """The measure at its defaults, then each parameter varied alone: a float at 0 and 2.5,
    a bool flipped, every allowed value, an integer at 2, targets at (0.3, 0.7); values the
    declaration refuses (e.g. RBO's p = 2.5) are left out, and a value equal to the default
    (a float parameter whose default is 0) once."""
    requests = [MeasureRequest(measure)]
    for parameter in measure.parameters:
        if parameter.allowed is not None:
            candidates = [v for v in parameter.allowed if v != parameter.default]
        elif parameter.type == "float":
            candidates = [0.0, 2.5, 0.5]
        elif parameter.type == "bool":
            candidates = [not parameter.default]
        elif parameter.type == "int":
            candidates = [2]
        elif parameter.type == "floats":
            candidates = [(0.3, 0.7)]
        else:
            candidates = []  # free text (group labels): one value fits the data
        for value in candidates:
            try:
                requests.append(MeasureRequest(measure).with_parameters(**{parameter.name: value}))
            except ValueError:
                continue
    return list({str(r): r for r in requests}.values())  # a value at its default: the plain


@pytest.fixture(scope="module")
def data(tmp_path_factory):
    """A collection, two runs, their counterfactual runs, a background run, qrels,
    polarisation scores and group membership, all generated with a fixed seed."""
    folder = tmp_path_factory.mktemp("engines")
    rng = np.random.default_rng(11)
    lexicon = default_lexicon()
    female, male = list(lexicon.terms_of("f")), list(lexicon.terms_of("m"))
    lines, listed = [], []
    for i in range(400):
        words = list(rng.choice(WORDS, 12))
        if i < 300:  # retrievable: at least two gendered words, never balanced
            n_f, n_m = rng.integers(0, 4), rng.integers(2, 6)
            if rng.random() < 0.5:
                n_f, n_m = n_m, n_f
            if n_f == n_m:
                n_m += 1
            words += list(rng.choice(female, n_f)) + list(rng.choice(male, n_m))
            listed.append(f"d{i}")
        elif i < 350:  # the most neutral documents: balanced, in no run
            words += [female[i % len(female)], male[i % len(male)]]
        # the last 50: no gendered word, ω = 1 under every reading; in no run either
        rng.shuffle(words)
        lines.append(f"d{i}\t{' '.join(words)}\n")
    (folder / "collection.tsv").write_text("".join(lines), encoding="utf-8")

    def write_run(name: str, seed: int) -> None:
        local = np.random.default_rng(seed)
        rows = []
        for q in range(N_QUERIES):
            docs = local.choice(listed, DEPTH + 5 * (name == "background"), replace=False)
            scores = np.sort(local.uniform(size=len(docs)))[::-1]  # in [0, 1]: any PRF map
            rows += [
                f"q{q} Q0 {d} {r + 1} {s:.6f} {name}\n"
                for r, (d, s) in enumerate(zip(docs, scores, strict=True))
            ]
        (folder / f"{name}.run").write_text("".join(rows))

    for name, seed in [("a", 1), ("b", 2), ("a_cf", 3), ("b_cf", 4), ("background", 5)]:
        write_run(name, seed)
    qrels = [
        f"q{q} 0 {d} {int(rng.random() < 0.4)}\n" for q in range(N_QUERIES) for d in listed[::3]
    ]
    (folder / "qrels.txt").write_text("".join(qrels))
    (folder / "polarisation.csv").write_text(
        "docid,score\n" + "".join(f"{d},{rng.normal():.6f}\n" for d in listed)
    )
    (folder / "groups.tsv").write_text(
        "docid\tprotected\n" + "".join(f"{d}\t{int(rng.random() < 0.3)}\n" for d in listed)
    )
    return folder


@pytest.fixture
def parts(on_cluster, monkeypatch):
    """The shared cluster, with partitions of 4 KiB: the collection is cut in several."""
    monkeypatch.setattr(engine, "MIN_PARTITION_BYTES", 4096)
    monkeypatch.setattr(engine, "MAX_PARTITION_BYTES", 4096)


def score(data, engine_name: str, metrics: list[str], extra=()) -> pd.DataFrame:
    out = data / f"{engine_name}-{abs(hash(tuple(metrics)))}.csv"
    args = ["score", "--run", str(data / "a.run"), "--run", str(data / "b.run")]
    args += [*score_inputs(data, metrics), "--cutoffs", "3,5,10", "--quiet"]
    args += ["--metrics", ",".join(metrics), "--engine", engine_name, "--out", str(out), *extra]
    assert main(args) == 0
    return pd.read_csv(out, keep_default_na=False, na_values=[""])


def score_inputs(data, metrics: list[str]) -> list[str]:
    """The input options of ``metrics``, each given only where a measure reads it (the
    command refuses an unused one)."""
    inputs = {
        "term_statistics": ["--collection", data / "collection.tsv", "--terms", "default"],
        "counterfactual_run": ["--counterfactual", data / "a_cf.run",
                               "--counterfactual", data / "b_cf.run"],
        "relevance": ["--qrels", data / "qrels.txt"],
        "polarisation_scores": ["--polarisation", data / "polarisation.csv"],
        "group_membership": ["--groups", data / "groups.tsv"],
    }  # fmt: skip
    return [str(a) for kind in required_inputs(metrics) for a in inputs[kind.value]]


def test_every_measure_over_its_grid_is_the_same_on_both_engines(data, parts):
    requests = list(itertools.chain.from_iterable(grid(m) for m in measures()))
    reading_background = [r for r in requests if r.parameters().get("background") == "run"]
    others = [r for r in requests if r not in reading_background]
    assert len({r.measure.name for r in others}) == len(measures())
    assert {str(r) for r in requests} >= {"nfairr(tau=0)", "nfairr(strict=true)", "ifairr(tau=0)"}
    for chosen, extra in [
        (others, ()),
        (reading_background, ("--background", str(data / "background.run"))),
    ]:
        texts = [str(r) for r in chosen]
        local = score(data, "local", texts, extra)
        dask = score(data, "dask", texts, extra)
        assert len(local) and set(local.metric) == {r.label for r in chosen}
        pd.testing.assert_frame_equal(dask, local, rtol=0, atol=1e-12)


def test_the_collection_ideal_reads_documents_no_run_retrieved(data):
    """The generated collection is what the parity test needs: NFaiRR's ideal under τ = 0
    comes from documents in no run, so a per-part ideal would differ."""
    local = score(data, "local", ["ifairr(tau=0)", "nfairr(tau=0)"])
    ideal = local[(local.metric == "ifairr(tau=0)") & (local.cutoff == 10)].value
    # ten documents of ω = 1 (balanced or term-free) exist only outside the runs
    assert np.allclose(ideal, (1 / np.log2(np.arange(2, 12))).sum())
    retrieved = {line.split()[2] for line in (data / "a.run").read_text().splitlines()}
    assert all(int(d[1:]) < 300 for d in retrieved)


def test_each_input_option_is_needed_by_its_measures(data, capsys):
    """Without the option that supplies it, a measure's input is an error naming the option."""
    for metric, message in [
        ("duo", "duo need(s) polarisation scores; expected --polarisation FILE"),
        ("rnd", "rnd need(s) group membership; expected --groups FILE"),
        ("nprf_m", "nprf_m need(s) relevance; expected --qrels FILE"),
        ("crbo", "crbo need(s) counterfactual run; expected --counterfactual RUN"),
        ("texfair", "texfair need(s) term statistics; expected --collection and --terms"),
        ("nfairr(background=run)", "reads a background run; expected --background RUN"),
    ]:
        args = ["score", "--run", str(data / "a.run"), "--metrics", metric]
        args += ["--out", str(data / "never.csv")]
        if metric == "nprf_m":
            args += ["--collection", str(data / "collection.tsv"), "--terms", "default"]
        assert main(args) == 2
        assert message in capsys.readouterr().err
        assert not (data / "never.csv").exists()
    args = ["score", "--run", str(data / "a.run"), "--counterfactual", str(data / "a_cf.run")]
    args += ["--counterfactual", str(data / "b_cf.run"), "--metrics", "crbo"]
    assert main([*args, "--out", str(data / "never.csv")]) == 2
    assert "found 2 file(s) for 1 --run file(s)" in capsys.readouterr().err


def test_an_input_no_measure_reads_is_refused_naming_its_option(data, capsys):
    """--groups beside duo alone was read (or not) and ignored, exit 0: an input given for
    nothing is an error naming the option and the measures that read it."""
    for metric, extra, message in [
        ("duo", ["--groups", data / "groups.tsv"],
         "--groups: no measure of --metrics reads group membership; expected it with measures "
         "such as rnd, rkl, or not at all"),
        ("duo", ["--qrels", data / "qrels.txt"], "--qrels: no measure of --metrics reads "
         "relevance; expected it with measures such as prf_m, prf_f, nprf_m, nprf_f"),
        ("rnd", ["--collection", data / "collection.tsv", "--terms", "default"],
         "--collection: no measure of --metrics reads term statistics"),
        ("rnd", ["--terms", "default"], "--terms: no measure of --metrics reads term statistics"),
        ("texfair", ["--counterfactual", data / "a_cf.run"],
         "--counterfactual: no measure of --metrics reads counterfactual run"),
        ("texfair", ["--polarisation", data / "polarisation.csv"],
         "--polarisation: no measure of --metrics reads polarisation scores"),
    ]:  # fmt: skip
        needed = score_inputs(data, [metric])
        args = ["score", "--run", str(data / "a.run"), *needed, *map(str, extra)]
        assert main([*args, "--metrics", metric, "--out", str(data / "never.csv")]) == 2
        assert capsys.readouterr().err.startswith(f"rankbias score: error: {message}")
        assert not (data / "never.csv").exists()


@pytest.mark.parametrize("engine_name", ["local", "dask"])
def test_an_input_file_without_a_ranked_document_is_named_by_its_option(
    data, tmp_path, capsys, engine_name, request
):
    """A document ranked within the cut-offs but absent from --polarisation, --groups or (its
    query) from --counterfactual: the option and the file are named, not the library's
    argument; the same message on both engines."""
    if engine_name == "dask":
        request.getfixturevalue("on_cluster")
    first = (data / "a.run").read_text().split("\n", 1)[0].split()  # q0's top document
    without = {}
    for name, option in [("polarisation.csv", "--polarisation"), ("groups.tsv", "--groups")]:
        lines = (data / name).read_text().splitlines(keepends=True)
        without[option] = tmp_path / name
        without[option].write_text("".join(x for x in lines if not x.startswith(f"{first[2]},")
                                           and not x.startswith(f"{first[2]}\t")))  # fmt: skip
    cf = "".join(x for x in (data / "a_cf.run").read_text().splitlines(True) if x[:3] != "q0 ")
    without["--counterfactual"] = tmp_path / "a_cf.run"
    without["--counterfactual"].write_text(cf)
    expected = {
        "--polarisation": f"--polarisation {without['--polarisation']}: run 'a' ranks document "
        f"'{first[2]}' for query 'q0', which has no polarisation score (1 such position(s)); "
        "expected one for every ranked document within the cut-offs",
        "--groups": f"--groups {without['--groups']}: run 'a' ranks document '{first[2]}' for "
        "query 'q0', which has no group membership (1 such position(s)); expected one for every "
        "ranked document within the cut-offs",
        "--counterfactual": "--counterfactual: run 'a_cf' has no list for 1 query(ies) of run "
        "'a', e.g. q0",
    }
    for option, metric in [("--polarisation", "duo"), ("--groups", "rnd"),
                           ("--counterfactual", "rbo")]:  # fmt: skip
        out = tmp_path / "never.csv"
        args = ["score", "--run", str(data / "a.run"), option, str(without[option]), "--quiet"]
        args += ["--metrics", metric, "--cutoffs", "5", "--engine", engine_name]
        assert main([*args, "--out", str(out)]) == 2
        err = capsys.readouterr().err
        assert err.strip() == f"rankbias score: error: {expected[option]}", err
        assert not out.exists()
