"""A dataset is a folder: the documented layout alone, a manifest's options, and the refusals
of a folder that does not hold together (each names the file and what to fix)."""

import shutil
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
from folders import minimal_folder, papers_folder
from public_data import PUBLIC

from rankbias import dataset as ds
from rankbias.collection import read_collection_stats
from rankbias.errors import InputError
from rankbias.lexicon import default_lexicon

RANKBIAS = [sys.executable, "-c", "import sys; from rankbias.cli import main; sys.exit(main())"]
needs_public = pytest.mark.skipif(not PUBLIC.is_dir(), reason=f"{PUBLIC} absent")


def write_folder(
    root: Path,
    runs: dict[str, str],
    queries: str = "1\tfirst query\n2\tsecond\n",
    manifest: str | None = None,
) -> Path:
    """A small folder of real shape: three passages, the queries, one run per entry."""
    root.mkdir(parents=True, exist_ok=True)
    (root / "collection.tsv").write_text(
        "d1\tShe studied physics at the university.\n"
        "d2\tHe played football for the town.\n"
        "d3\tThe river floods every spring.\n"
    )
    (root / "queries.tsv").write_text(queries)
    (root / "runs").mkdir(exist_ok=True)
    for name, text in runs.items():
        (root / "runs" / f"{name}.run").write_text(text)
    if manifest is not None:
        (root / "dataset.toml").write_text(manifest)
    return root


RUN = "1 Q0 d1 1 2.0 x\n1 Q0 d2 2 1.0 x\n2 Q0 d3 1 3.0 x\n"


def test_the_documented_layout_alone_is_a_dataset(tmp_path):
    root = write_folder(tmp_path / "mine", {"zeta": RUN, "alpha": RUN})
    data = ds.load_dataset(root)
    assert data.name == "mine"
    assert data.systems == ("alpha", "zeta")  # by name without a manifest
    assert data.label("zeta") == "zeta"
    assert list(data.query_sets) == ["queries"]
    assert data.query_sets["queries"].qids.tolist() == ["1", "2"]
    assert data.query_sets["queries"].qrels is None and data.judged_sets == []
    assert data.word_lists == {"rankbias": None} and data.default_word_list == "rankbias"
    assert data.files == {} and not data.has("polarisation") and data.notes == ()
    assert data.texts(["d3", "d1"]).tolist() == [
        "The river floods every spring.",
        "She studied physics at the university.",
    ]
    assert data.run("alpha").qids.tolist() == ["1", "2"]


def test_a_manifest_orders_names_and_adds_query_sets_word_lists_and_inputs(tmp_path):
    root = write_folder(
        tmp_path / "study",
        {"b": RUN, "a": "3 Q0 d2 1 1.0 x\n"},
        manifest="""
name = "my study"
[[systems]]
run = "b"
label = "System B"
[[systems]]
run = "a"
[[query_sets]]
name = "first"
queries = "queries.tsv"
qrels = "qrels.txt"
[[query_sets]]
name = "second"
queries = "more.tsv"
[word_lists]
default = "mine"
mine = "words.csv"
[files]
polarisation = "polar.tsv"
""",
    )
    (root / "more.tsv").write_text("3\tthird query\n")
    (root / "qrels.txt").write_text("1 0 d1 1\n2 0 d3 0\n9 0 d2 1\n")
    (root / "words.csv").write_text("she,f\nhe,m\n")
    (root / "polar.tsv").write_text("qid\tdocid\tscore\n1\td1\t0.5\n")
    data = ds.load_dataset(root)
    assert data.name == "my study"
    assert data.systems == ("b", "a") and data.labels == {"b": "System B", "a": "a"}
    assert list(data.query_sets) == ["first", "second"]
    # judgements of queries outside the set are not the set's
    assert data.query_sets["first"].qrels["qid"].tolist() == ["1", "2"]
    assert data.judged_sets == ["first"]
    assert data.queries["query_set"].tolist() == ["first", "first", "second"]
    assert data.lexicon().term_to_group == {"she": "f", "he": "m"}
    assert data.file("polarisation") == (root / "polar.tsv").resolve()
    assert data.stats().group_counts.tolist() == [[1, 0], [0, 1], [0, 0]]


@pytest.mark.parametrize(
    ("manifest", "message"),
    [
        (
            '[[query_sets]]\nname = "x"\nqueries = "gone.tsv"\n',
            "dataset.toml: query set 'x' queries names 'gone.tsv', but .*gone.tsv is no file; "
            "expected a path relative to the dataset folder",
        ),
        (
            '[[systems]]\nrun = "nosuch"\n',
            "dataset.toml: system 1 names run 'nosuch', but runs/nosuch.run does not exist; "
            "expected one of a",
        ),
        ('colour = "blue"\n', "dataset.toml: unknown key\\(s\\) colour; expected some of"),
        (
            '[word_lists]\ndefault = "papers"\n',
            "dataset.toml: word_lists.default is 'papers'; expected one of rankbias",
        ),
        ('[files]\nsurvey = "x.csv"\n', "dataset.toml: files: unknown input 'survey'"),
        ("name = [\n", "dataset.toml: not valid TOML"),
        (
            'rankers = "pyserini"\n',
            "dataset.toml: rankers is 'pyserini'; expected 'rankbias.retrieval' or no key",
        ),
        (
            'rankers = "rankbias.retrieval"\n',
            "dataset.toml: rankers = 'rankbias.retrieval', but runs a are not its systems "
            "\\(bm25, bm25_rm3, dense, hybrid, rerank\\)",
        ),
    ],
)
def test_a_manifest_that_does_not_hold_is_refused_naming_what_to_fix(tmp_path, manifest, message):
    root = write_folder(tmp_path / "bad", {"a": RUN}, manifest=manifest)
    with pytest.raises(InputError, match=message):
        ds.load_dataset(root)


def test_a_run_with_queries_in_no_query_set_is_refused_naming_the_run(tmp_path):
    root = write_folder(tmp_path / "bad", {"a": RUN + "7 Q0 d1 1 1.0 x\n8 Q0 d2 1 1.0 x\n"})
    with pytest.raises(InputError) as refused:
        ds.load_dataset(root)
    assert str(refused.value) == (
        f"{root.resolve()}/runs/a.run: 2 queries in no query set (7, 8); expected every query "
        "of a run in one of the query sets (queries.tsv): add them there or remove them from "
        "the run"
    )


def test_a_query_set_no_run_ranks_is_set_aside_with_a_note(tmp_path):
    root = write_folder(
        tmp_path / "sets",
        {"a": RUN},
        manifest=(
            '[[query_sets]]\nname = "ranked"\nqueries = "queries.tsv"\n'
            '[[query_sets]]\nname = "unranked"\nqueries = "other.tsv"\n'
        ),
    )
    (root / "other.tsv").write_text("5\tfifth\n6\tsixth\n")
    data = ds.load_dataset(root)
    assert list(data.query_sets) == ["ranked"] and list(data.unranked_sets) == ["unranked"]
    assert data.notes == (
        "query set 'unranked' (2 queries): no run ranks any of its queries; "
        "the chapters study the other sets",
    )


def test_missing_documents_and_unknown_names_are_errors(tmp_path):
    data = ds.load_dataset(write_folder(tmp_path / "f", {"a": RUN}))
    with pytest.raises(InputError, match="no document 'd9' \\(1 docid\\(s\\) missing\\)"):
        data.texts(["d1", "d9"])
    with pytest.raises(InputError, match="no system 'b'; expected one of a"):
        data.run("b")
    with pytest.raises(InputError, match="no word list 'x'; expected one of rankbias"):
        data.lexicon("x")
    with pytest.raises(InputError, match="no perspectives input"):
        data.file("perspectives")


def test_statistics_are_counted_once_and_kept_on_disk(tmp_path):
    root = write_folder(tmp_path / "f", {"a": RUN})
    data = ds.load_dataset(root)
    fresh = read_collection_stats(root / "collection.tsv", default_lexicon(), per_term=True)
    cached = data.stats(per_term=True)
    files = list((root / "cache" / "stats").glob("*.npz"))
    assert len(files) == 1
    ds._MEMORY.clear()  # as in a new process: read back from the file
    again = ds.load_dataset(root).stats(per_term=True)
    for stats in (cached, again):
        assert stats.docids.tolist() == fresh.docids.tolist()
        assert np.array_equal(stats.lengths, fresh.lengths)
        assert np.array_equal(stats.group_counts, fresh.group_counts)
        assert stats.terms == fresh.terms and stats.groups == fresh.groups
        assert (stats.term_counts != fresh.term_counts).nnz == 0
    plain = ds.load_dataset(root).stats()  # taken from the per-term counts: no new file
    assert plain.term_counts is None and np.array_equal(plain.group_counts, fresh.group_counts)
    assert len(list((root / "cache" / "stats").glob("*.npz"))) == 1
    (root / "collection.tsv").write_text("d1\tHer sister and her mother.\n")
    changed = ds.load_dataset(root, check_runs=False).stats()  # a changed file: counted again
    assert changed.group_counts.tolist() == [[4, 0]]  # her, sister, her, mother


def test_texts_are_read_once_per_folder_and_kept_on_disk(tmp_path, monkeypatch):
    """The first call reads the collection once for the runs' documents and the docids asked
    for; later calls (a new process too) take them from the folder's store, and read the
    collection again only for a docid the store lacks."""
    import rankbias.collection as collection

    root = write_folder(tmp_path / "f", {"a": "1 Q0 d2 1 2.0 x\n2 Q0 d1 1 1.0 x\n"})
    reads = []
    real = collection.iter_documents

    def counted(source):
        reads.append(source)
        return real(source)

    monkeypatch.setattr(collection, "iter_documents", counted)
    assert ds.load_dataset(root).texts(["d1"]).tolist() == [
        "She studied physics at the university."
    ]
    assert len(reads) == 1 and len(list((root / "cache").glob("texts-*.parquet"))) == 1
    ds._MEMORY.clear()  # as in a new process
    again = ds.load_dataset(root).texts(["d2", "d1"])  # d2 is ranked: read with d1 the first time
    assert again.index.tolist() == ["d2", "d1"] and len(reads) == 1
    assert again["d2"] == "He played football for the town."
    assert ds.load_dataset(root).texts(["d3"]).tolist() == ["The river floods every spring."]
    assert len(reads) == 2  # an unranked docid: one more read, kept too
    ds._MEMORY.clear()
    assert ds.load_dataset(root).texts(["d3", "d2"]).tolist()[0].startswith("The river")
    assert len(reads) == 2
    with pytest.raises(InputError, match="no document 'd9'"):
        ds.load_dataset(root).texts(["d9"])
    (root / "collection.tsv").write_text("d1\tAnother text.\n")  # a changed file: read again
    assert ds.load_dataset(root, check_runs=False).texts(["d1"]).tolist() == ["Another text."]


def test_the_embedded_testbed_reads_as_a_dataset():
    root = ds.dataset_dir()
    data = ds.load_dataset(root)
    assert data.systems == ("bm25", "bm25_rm3", "dense", "hybrid", "rerank")
    assert data.label("bm25_rm3") == "BM25 + RM3"
    lines = len((root / "queries.tsv").read_text(encoding="utf-8").splitlines())
    assert [len(s.queries) for s in data.query_sets.values()] == [lines, 40]
    assert "category" in data.query_sets["bias-sensitive"].queries
    assert data.judged_sets == ["gender-neutral", "bias-sensitive"]
    assert set(data.metadata.columns) == {"docid", "source", "article", "section"}
    assert data.rankers == "rankbias.retrieval"  # its runs are the package's own systems


def test_rankbias_data_check_says_what_the_folder_holds_or_refuses_it(tmp_path):
    good = write_folder(tmp_path / "good", {"a": RUN})
    done = subprocess.run(
        [*RANKBIAS, "data", "check", str(good)],
        capture_output=True,
        text=True,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    assert "query set 'queries': 2 queries, not judged" in done.stdout
    bad = write_folder(tmp_path / "bad", {"a": RUN}, manifest='[[systems]]\nrun = "b"\n')
    done = subprocess.run(
        [*RANKBIAS, "data", "check", str(bad)],
        capture_output=True,
        text=True,
        check=False,
    )
    assert done.returncode == 2
    assert "system 1 names run 'b', but runs/b.run does not exist" in done.stderr


def test_the_test_folders_are_datasets(tmp_path):
    minimal = ds.load_dataset(minimal_folder(ds.dataset_dir(), tmp_path / "minimal"))
    assert minimal.systems == ("system_a", "system_b", "system_c")
    assert minimal.query_sets["queries"].qids.tolist()[:3] == ["1", "2", "3"]
    assert minimal.judged_sets == ["queries"]


@needs_public
def test_the_msmarco_folder_is_built_from_the_pinned_files(tmp_path):
    stand_in = papers_folder(ds.dataset_dir(), PUBLIC, tmp_path / "papers")
    done = subprocess.run(
        [
            *RANKBIAS,
            "data",
            "msmarco",
            "--out",
            str(tmp_path / "msmarco"),
            "--mirror",
            str(PUBLIC),
            "--collection",
            str(stand_in / "collection.tsv"),
            "--no-qrels",
        ],
        capture_output=True,
        text=True,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    data = ds.load_dataset(tmp_path / "msmarco")
    # the papers' numbers: QS1 1,765 non-gendered queries, QS2 215, ten rankers, word lists of
    # 64 and 326 terms
    assert {k: len(v.queries) for k, v in data.query_sets.items()} == {"QS1": 1765, "QS2": 215}
    assert len(data.systems) == 10 and data.label("RM3") == "BM25 + RM3"
    assert len(data.lexicon("rekabsaz2020neural").term_to_group) == 64
    assert len(data.lexicon("rekabsaz2021societal").term_to_group) == 326
    assert data.default_word_list == "rekabsaz2021societal"
    assert data.judged_sets == []
    assert "qrels: none asked for" in done.stdout
    shutil.rmtree(tmp_path / "papers")  # the collection is linked, not copied
    assert (tmp_path / "msmarco" / "collection.tsv").is_symlink()


def test_a_folder_that_cannot_be_written_keeps_its_texts_and_counts_in_memory(
    tmp_path, monkeypatch
):
    """Neither cache can be written: each says so in one warning naming the file, and the
    values are those of the collection."""
    import rankbias.outputs as outputs

    def refuse(*args, **kwargs):
        raise PermissionError(13, "Permission denied")

    monkeypatch.setattr(outputs, "atomic_open", refuse)
    data = ds.load_dataset(write_folder(tmp_path / "f", {"a": RUN}))
    with pytest.warns(UserWarning, match=r"texts-\w+\.parquet: texts not cached \(Permission"):
        assert data.texts(["d2"]).tolist() == ["He played football for the town."]
    with pytest.warns(UserWarning, match=r"\.npz: statistics not cached .* counted again"):
        assert data.stats().group_counts.tolist() == [[1, 0], [0, 1], [0, 0]]
    assert not (tmp_path / "f" / "cache").exists() or not any(
        (tmp_path / "f" / "cache").rglob("*.*")
    )
