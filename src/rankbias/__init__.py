"""rankbias: measuring bias in ranked lists.

The package behind the `rankbias` Jupyter Book.  Modules:

- :mod:`rankbias.runs`       TREC run and qrels files, validated, as arrays
- :mod:`rankbias.lexicon`    word lists of groups of terms
- :mod:`rankbias.text`       tokenisers and per-document group statistics
- :mod:`rankbias.metrics`    the bias measures, one module per family
- :mod:`rankbias.analysis`   analyses of the measures themselves; ``rankbias.compare``
  compares systems with paired significance tests, ``rankbias.explain`` attributes a list's
  bias to its documents
- :mod:`rankbias.retrieval`  the rankers of the embedded testbed
- :mod:`rankbias.data`       the embedded testbed and the public-resource catalogue
"""

__version__ = "0.1.0"
__all__ = ["compare", "explain"]


def __getattr__(name: str):
    """``rankbias.compare`` and ``rankbias.explain`` (:mod:`rankbias.analysis.compare`,
    :mod:`rankbias.analysis.explain`), imported when first used: ``import rankbias`` stays
    light for the command line."""
    if name == "compare":
        from rankbias.analysis.compare import compare

        return compare
    if name == "explain":
        from rankbias.analysis.explain import explain

        return explain
    raise AttributeError(f"module 'rankbias' has no attribute {name!r}")
