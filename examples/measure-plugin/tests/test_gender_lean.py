import numpy as np
import pandas as pd
import pytest
from rankbias_gender_lean import gender_lean

from rankbias.lexicon import Lexicon
from rankbias.runs import Run
from rankbias.scoring import score_runs
from rankbias.text import document_stats


def test_gender_lean_by_hand():
    # two queries; female and male magnitudes by rank; the second list has two documents
    female = np.array([[0, 2, 1], [3, 1, 0]])
    male = np.array([[2, 0, 1], [0, 3, 0]])
    got = gender_lean(female, male, np.array([3, 2]), [1, 2, 5])
    # votes: q1 +1, -1, 0; q2 -1, +1
    np.testing.assert_allclose(got, [[1, 0, 0], [-1, 0, 0]])
    # margin 2: only differences above 2 vote -> q2's first document (-3) alone
    got = gender_lean(female, male, np.array([3, 2]), [1, 2], margin=2)
    np.testing.assert_allclose(got, [[0, 0], [-1, -1 / 2]])


def test_gender_lean_through_the_scorer():
    lexicon = Lexicon.from_mapping({"she": "f", "her": "f", "he": "m"})
    texts = {"a": "he he she", "b": "the rain", "c": "she her he"}
    stats = document_stats(list(texts.values()), lexicon, docids=list(texts))
    rows = [("q1", "a", 3.0), ("q1", "b", 2.0), ("q1", "c", 1.0)]
    run = Run.from_frame(pd.DataFrame(rows, columns=["qid", "docid", "score"]), "run")
    frame = score_runs(run, stats, ["gender_lean@1", "gender_lean@3", "gender_lean(margin=1)@3"])
    # a: +1 (2 m, 1 f); b: 0; c: -1 (2 f, 1 m); with margin 1 no document leans
    assert frame["metric"].tolist() == ["gender_lean", "gender_lean", "gender_lean(margin=1)"]
    assert frame["value"].tolist() == pytest.approx([1, 0, 0])
