"""Tests of rankbias.analysis.list_polarisation; expected values are worked out by hand."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from rankbias.analysis.list_polarisation import (
    duo_per_query,
    list_polarisation,
    run_polarisation,
)
from rankbias.errors import InputError
from rankbias.runs import Run

# Embeddings on the x axis at 3, 0 and -3 (documents a, b, c): the PCA axis is (1, 0) (largest
# loading made positive), the centre is (0, 0), so the scores are 3, 0 and -3.
DOCIDS = pd.Index(["a", "b", "c", "d", "e"])
EMBEDDINGS = np.array([[3.0, 0.0], [0.0, 0.0], [-3.0, 0.0], [1.0, 1.0], [2.0, 2.0]])


def make_run(name: str, lists: dict[str, list[str]]) -> Run:
    rows = [
        (qid, docid, float(len(docids) - rank))
        for qid, docids in lists.items()
        for rank, docid in enumerate(docids)
    ]
    return Run.from_frame(pd.DataFrame(rows, columns=["qid", "docid", "score"]), name)


def test_duo_per_query_hand_example():
    # n = 3: the only cut point is i = 2, so DCV = u(2), the variance of the first two scores.
    # Pairs: {3, 0} -> 2.25, {0, -3} -> 2.25, {3, -3} -> 9 (prefix variance).  Ranking a, b, c
    # has u(2) = 2.25 = min -> Duo 1; ranking a, c, b has u(2) = 9 = max -> Duo 0.
    # Global variant (mean 0): u(2) = mean of squares: {3,0} 4.5, {0,-3} 4.5, {3,-3} 9 -> same.
    run = make_run("sys", {"q1": ["a", "b", "c"], "q2": ["a", "c", "b"]})
    table = duo_per_query(
        {"sys": run}, ["q1", "q2"], EMBEDDINGS, DOCIDS, metrics=["duo", "duo(variance=global)"]
    )
    assert list(table.columns) == ["run", "qid", "metric", "cutoff", "value"]
    values = table.set_index(["qid", "metric"])["value"]
    assert values[("q1", "duo")] == pytest.approx(1.0)
    assert values[("q2", "duo")] == pytest.approx(0.0)
    assert values[("q1", "duo(variance=global)")] == pytest.approx(1.0)
    assert values[("q2", "duo(variance=global)")] == pytest.approx(0.0)
    assert set(table["cutoff"]) == {10} and set(table["run"]) == {"sys"}
    assert table.attrs["skipped"] == []
    assert table.index.tolist() == list(range(4))  # one index over the queries' rows


def test_duo_per_query_cutoff_and_skips():
    run = make_run("sys", {"q1": ["a", "c", "b", "d"], "short": ["a", "b"]})
    table = duo_per_query({"sys": run}, ["q1", "short", "absent"], EMBEDDINGS, DOCIDS, cutoff=3)
    assert set(table["qid"]) == {"q1"}
    # the cut list is a, c, b: Duo 0 as in the hand example above
    assert table["value"].tolist() == pytest.approx([0.0])
    skipped = pd.DataFrame(table.attrs["skipped"]).set_index("qid")
    assert skipped.loc["short", "n_docs"] == 2
    assert "fewer than 3" in skipped.loc["short", "reason"]
    assert skipped.loc["absent", "reason"] == "no ranked list"


def test_polarisation_is_fitted_on_the_cut_list():
    # a, c, b, d cut at 3: the PCA sees a, c, b only, so d has no score and the scores are the
    # x coordinates 3, -3, 0 (d at (1, 1) would tilt the axis)
    run = make_run("sys", {"q1": ["a", "c", "b", "d"]})
    table = run_polarisation(run, ["q1"], EMBEDDINGS, DOCIDS, cutoff=3)
    assert table["docid"].tolist() == ["a", "c", "b"]
    both = make_run("sys", {"q1": ["a", "b", "c"], "q2": ["d", "c", "b"]})
    two = run_polarisation(both, ["q1", "q2"], EMBEDDINGS, DOCIDS, cutoff=3)
    assert two.index.tolist() == list(range(6))
    assert table["score"].tolist() == pytest.approx([3.0, -3.0, 0.0])


def test_unknown_document_is_an_error_naming_run_and_query():
    run = make_run("sys", {"q1": ["a", "b", "zzz"]})
    with pytest.raises(ValueError, match="run 'sys', query q1: document 'zzz'"):
        duo_per_query({"sys": run}, ["q1"], EMBEDDINGS, DOCIDS)


def test_list_polarisation_hand_scores():
    # x coordinates 3, 0, -3 around their mean 0 on the axis (1, 0): the scores themselves
    assert list_polarisation(["a", "b", "c"], EMBEDDINGS, DOCIDS) == pytest.approx([3, 0, -3])
    assert list_polarisation(["c", "b", "a"], EMBEDDINGS, DOCIDS) == pytest.approx([-3, 0, 3])
    with pytest.raises(ValueError, match="my list: document 'x'"):
        list_polarisation(["a", "x"], EMBEDDINGS, DOCIDS, where="my list")


def test_a_missing_document_is_named_in_the_default_message():
    with pytest.raises(ValueError) as info:
        list_polarisation(["a", "x"], EMBEDDINGS, DOCIDS)
    assert str(info.value) == (
        "list: document 'x' has no embedding; expected every ranked document in the collection"
    )


def test_a_cutoff_of_one_is_allowed_and_an_all_skipped_run_gives_an_empty_table():
    run = make_run("sys", {"q1": ["a", "b", "c"]})
    table = run_polarisation(run, ["q1"], EMBEDDINGS, DOCIDS, cutoff=1)
    assert table.empty and list(table.columns) == ["qid", "docid", "score"]
    assert table.attrs["skipped"] == [
        {"run": "sys", "qid": "q1", "n_docs": 1, "reason": "fewer than 3 documents"}
    ]
    with pytest.raises(ValueError) as info:
        run_polarisation(run, ["q1"], EMBEDDINGS, DOCIDS, cutoff=0)
    assert str(info.value) == "cutoff: expected a positive integer, found 0"


def folder_of(tmp_path, texts: dict[str, str], files: dict | None = None):
    """A stand-in for a dataset: ``texts`` (docid -> text) counts every call, ``files`` the
    optional inputs by role."""
    from types import SimpleNamespace

    asked = []

    def read(docids):
        asked.append(list(docids))
        return pd.Series({d: texts[d] for d in docids}, dtype=object)

    files = files or {}
    return SimpleNamespace(
        path=tmp_path,
        texts=read,
        has=lambda role: role in files,
        file=lambda role: files[role],
        asked=asked,
    )


def test_passage_embeddings_are_the_models_unit_vectors_and_then_the_cache(tmp_path, monkeypatch):
    """Only the documents asked for are read and encoded by all-MiniLM-L6-v2 (from its registry
    package), each once, in docid order; then read from the folder's cache without the model."""
    from rankbias import retrieval
    from rankbias.analysis.list_polarisation import passage_embeddings

    texts = {
        "p1": "The nurse said she would stay.",
        "p2": "He fixed the engine.",
        "p3": "Rain fell all day.",
        "p4": "Never asked for.",
    }
    data = folder_of(tmp_path, texts)
    with pytest.raises(TypeError) as info:
        passage_embeddings(tmp_path, ["p1"])  # the folder's path, not the dataset
    assert str(info.value) == (
        f"data: expected a dataset (rankbias.dataset.load_dataset), found {tmp_path!r:.60}"
    )
    with pytest.raises(TypeError, match="docids: expected a list of docids, found the string"):
        passage_embeddings(data, "p1")
    vectors, docids = passage_embeddings(data, ["p3", "p1", "p2", "p1"])
    assert docids.tolist() == ["p1", "p2", "p3"]
    assert data.asked == [["p1", "p2", "p3"]]  # p4 is never read
    assert vectors.shape == (3, 384) and vectors.dtype == np.float64
    np.testing.assert_allclose(np.linalg.norm(vectors, axis=1), 1.0, atol=1e-6)
    ordered = [texts["p1"], texts["p2"], texts["p3"]]
    direct = retrieval.load_dense_model().encode(ordered, normalize_embeddings=True)
    np.testing.assert_allclose(vectors, direct, atol=1e-6)
    assert [p.name for p in (tmp_path / "cache").iterdir()] == [
        "passage-vectors-all-MiniLM-L6-v2.npz"
    ]

    def no_model(*args, **kwargs):
        raise AssertionError("the model was loaded although the cache holds the vectors")

    monkeypatch.setattr(retrieval, "load_dense_model", no_model)
    again, same = passage_embeddings(data, ["p2", "p3", "p1"])  # another order, same set
    np.testing.assert_array_equal(again, vectors)
    assert same.tolist() == ["p1", "p2", "p3"]
    # a subset, and a document sharing p2's text, come from the store too: one row per text
    shared = folder_of(tmp_path, {"p2": texts["p2"], "p5": texts["p2"], "p3": texts["p3"]})
    part, part_ids = passage_embeddings(shared, ["p5", "p3", "p2"])
    assert part_ids.tolist() == ["p2", "p3", "p5"]
    np.testing.assert_array_equal(part, vectors[[1, 2, 1]])


def test_passage_embeddings_encode_only_the_texts_the_store_lacks(tmp_path, monkeypatch):
    from rankbias import retrieval
    from rankbias.analysis.list_polarisation import passage_embeddings

    encoded = []

    class Model:
        def encode(self, texts, **options):
            encoded.append(list(texts))
            return np.array([[len(t), 1.0] for t in texts], dtype=np.float32)

    monkeypatch.setattr(retrieval, "load_dense_model", lambda *a, **k: Model())
    texts = {"a": "one", "b": "three", "c": "seven", "d": "three"}
    first, _ = passage_embeddings(folder_of(tmp_path, texts), ["b", "a"])
    np.testing.assert_array_equal(first, [[3, 1], [5, 1]])
    both, ids = passage_embeddings(folder_of(tmp_path, texts), ["d", "c", "b", "a"])
    assert encoded == [["one", "three"], ["seven"]]  # "three" of d is b's text, already kept
    assert ids.tolist() == ["a", "b", "c", "d"]
    np.testing.assert_array_equal(both, [[3, 1], [5, 1], [5, 1], [5, 1]])


def test_passage_embeddings_read_the_folders_embeddings_input(tmp_path, monkeypatch):
    from rankbias import retrieval
    from rankbias.analysis.list_polarisation import passage_embeddings

    def no_model(*args, **kwargs):
        raise AssertionError("the model was loaded although the folder has embeddings")

    monkeypatch.setattr(retrieval, "load_dense_model", no_model)
    table = np.array([[1.0, 0.0], [0.0, 2.0], [3.0, 3.0]], dtype=np.float32)
    np.save(tmp_path / "vectors.npy", table)
    (tmp_path / "vectors.txt").write_text("c\na\nb\n", encoding="utf-8")
    data = folder_of(tmp_path, {}, {"embeddings": tmp_path / "vectors.npy"})
    vectors, docids = passage_embeddings(data, ["b", "c"])
    assert docids.tolist() == ["b", "c"] and data.asked == []
    np.testing.assert_array_equal(vectors, [[3.0, 3.0], [1.0, 0.0]])
    assert vectors.dtype == np.float64
    with pytest.raises(ValueError) as info:
        passage_embeddings(data, ["a", "z"])
    assert str(info.value) == (
        f"{tmp_path / 'vectors.txt'}: no docid 'z'; expected every ranked document"
    )
    (tmp_path / "vectors.txt").write_text("c\na\n", encoding="utf-8")
    with pytest.raises(ValueError, match=r"shape \(3, 2\) for 2 docids in vectors.txt"):
        passage_embeddings(data, ["a"])
    (tmp_path / "vectors.txt").write_text("c\na\nc\n", encoding="utf-8")
    with pytest.raises(ValueError, match="vectors.txt: a docid is listed twice"):
        passage_embeddings(data, ["a"])
    (tmp_path / "vectors.txt").unlink()
    with pytest.raises(ValueError, match="no vectors.txt beside it"):
        passage_embeddings(data, ["a"])


def test_duo_per_query_passes_min_docs_and_gathers_every_run():
    empty = make_run("empty", {"q9": ["a", "b", "c"]})
    full = make_run("full", {"q1": ["a", "b", "c"], "q2": ["a", "c", "b"], "pair": ["a", "c"]})
    table = duo_per_query({"empty": empty, "full": full}, ["q1", "q2", "pair"], EMBEDDINGS, DOCIDS)
    assert table.index.tolist() == [0, 1]
    assert table[["run", "qid"]].values.tolist() == [["full", "q1"], ["full", "q2"]]
    twice = duo_per_query({"full": full, "again": full}, ["q1"], EMBEDDINGS, DOCIDS)
    assert twice.index.tolist() == [0, 1]  # numbered afresh across runs
    two = duo_per_query({"full": full}, ["pair"], EMBEDDINGS, DOCIDS, min_docs=2)
    assert two["qid"].tolist() == ["pair"] and two.attrs["skipped"] == []
    nothing = duo_per_query({"empty": empty}, ["q1"], EMBEDDINGS, DOCIDS)
    assert nothing.empty and list(nothing.columns) == ["run", "qid", "metric", "cutoff", "value"]
    assert nothing.attrs["skipped"] == [
        {"run": "empty", "qid": "q1", "n_docs": 0, "reason": "no ranked list"}
    ]


@pytest.mark.parametrize(
    ("call", "error", "message"),
    [
        # an embedding table shorter than its docids read other documents' rows
        (lambda: list_polarisation(["a", "b"], EMBEDDINGS[:3], DOCIDS), ValueError,
         "embeddings: 3 rows for 5 docids; expected one each"),
        (lambda: list_polarisation(["a", "a", "b"], EMBEDDINGS, DOCIDS), ValueError,
         "list: a document is ranked twice in ['a', 'a', 'b']; expected each once"),
        (lambda: list_polarisation("abc", EMBEDDINGS, DOCIDS), TypeError,
         "list: expected a list of docids, found str 'abc'"),
        (lambda: list_polarisation(["a"], EMBEDDINGS[0], DOCIDS), InputError,
         "embeddings: expected a 2-D array, found shape (2,)"),
        (lambda: list_polarisation(["a"], EMBEDDINGS, list(DOCIDS)), TypeError,
         "docids: expected a pandas Index of the embeddings' docids, found list"),
        (lambda: duo_per_query([make_run("r", {"q": ["a", "b", "c"]})], ["q"], EMBEDDINGS,
                               DOCIDS), TypeError,
         "runs: expected a mapping name -> Run, found list"),
        (lambda: duo_per_query({"r": make_run("r", {"q": ["a", "b", "c"]})}, ["q"], EMBEDDINGS,
                               DOCIDS, metrics="duo"), TypeError,
         "metrics: expected a list of measures, found 'duo'"),
        (lambda: run_polarisation(make_run("r", {"q": ["a"]}), ["q"], EMBEDDINGS, DOCIDS,
                                  cutoff=5, min_docs=0), ValueError,
         "min_docs: expected a positive integer, found 0"),
        # a string of query ids would be read character by character
        (lambda: run_polarisation(make_run("r", {"q": ["a"]}), "q1", EMBEDDINGS, DOCIDS, cutoff=3),
         TypeError, "qids: expected a list of query ids, found the string 'q1'"),
    ],
)  # fmt: skip
def test_arguments_that_would_give_other_documents_numbers_are_refused(call, error, message):
    with pytest.raises(error) as info:
        call()
    assert type(info.value) is error and str(info.value) == message


# ---- the axis fitted on the query's perspective documents (Ziems et al. 2024 §4.2) ----------


def test_list_polarisation_on_a_fit_set_by_hand():
    # fit on d (1, 1) and e (2, 2): centre (1.5, 1.5), axis (1, 1)/√2; a (3, 0) projects to 0,
    # b (0, 0) to −3/√2, c (−3, 0) to −6/√2
    scores = list_polarisation(["a", "b", "c"], EMBEDDINGS, DOCIDS, fit=["d", "e"])
    assert scores == pytest.approx([0.0, -3 / np.sqrt(2), -6 / np.sqrt(2)])
    with pytest.raises(ValueError, match=r"list \(fit set\): document 'x'"):
        list_polarisation(["a", "b"], EMBEDDINGS, DOCIDS, fit=["d", "x"])


def test_duo_per_query_with_fit_sets_by_hand_and_a_query_without_one():
    # fit on a (3, 0) and d (1, 1): centre (2, 0.5), axis (2, −1)/√5; a → 2.5/√5, e (2, 2) →
    # −1.5/√5, b (0, 0) → −3.5/√5.  Prefix variances of the pairs: {a, e} (4/√5 / 2)² = 0.8,
    # {a, b} (6/√5 / 2)² = 1.8, {e, b} (2/√5 / 2)² = 0.2.  Ranking a, e, b has u(2) = 0.8:
    # Duo = 1 − (0.8 − 0.2)/(1.8 − 0.2) = 0.625
    run = make_run("sys", {"q1": ["a", "e", "b"], "q2": ["a", "b", "c"]})
    fitted = duo_per_query(
        {"sys": run}, ["q1", "q2"], EMBEDDINGS, DOCIDS, fit_sets={"q1": ["a", "d"]}
    )
    assert fitted.set_index("qid")["value"].to_dict() == pytest.approx({"q1": 0.625})
    assert fitted.attrs["skipped"] == [
        {"run": "sys", "qid": "q2", "n_docs": 3, "reason": "no perspective documents"}
    ]
    own = duo_per_query({"sys": run}, ["q1"], EMBEDDINGS, DOCIDS)
    assert own["value"].iloc[0] != pytest.approx(0.625)  # the list's own axis is another one
    with pytest.raises(TypeError, match="fit_sets"):
        run_polarisation(run, ["q1"], EMBEDDINGS, DOCIDS, cutoff=3, fit_sets=[["a", "d"]])
