"""Effectiveness of runs through ``ir_measures`` (the book's Conventions page, "Effectiveness"),
in the package's tidy format ``run, qid, metric, cutoff, value``, so that effectiveness and bias
tables join on ``run`` and ``qid``.  A judged query a run retrieved nothing for scores 0 (as with
``trec_eval -c``) and is counted in ``attrs["unretrieved"]``.
"""

from __future__ import annotations

import re

import pandas as pd

from rankbias.errors import expect_items, expect_type
from rankbias.metrics.measures import split_cutoff
from rankbias.runs import Run

DEFAULT_MEASURES = ("nDCG@10", "RR@10", "R@100")

_NAME = re.compile(r"^[^@()]+(?:\([^()]*\))?$")


def split_measure(name: str) -> tuple[str, int | None]:
    """``"nDCG@10"`` -> ``("nDCG", 10)``; ``"AP"`` -> ``("AP", None)``; a label without a
    name or with unbalanced parentheses is refused."""
    metric, cutoff = split_cutoff(name)
    if not _NAME.match(metric):
        raise ValueError(f"cannot read measure name {name!r}; expected e.g. 'nDCG@10'")
    return metric, cutoff


def effectiveness(
    runs: dict[str, Run] | list[Run] | Run,
    qrels: pd.DataFrame,
    measures=DEFAULT_MEASURES,
) -> pd.DataFrame:
    """Per-query effectiveness (``measures`` in ``ir_measures`` syntax) of a :class:`Run`, a
    list or a mapping name -> run, on the queries judged in ``qrels`` (``qid, docid,
    relevance``), as a tidy table; ``attrs["unretrieved"]`` counts per run the judged queries
    it retrieved nothing for (scored 0)."""
    import ir_measures

    expected = "a Run, a list of Runs or a mapping name -> Run"
    if isinstance(runs, Run):
        runs = [runs]
    if not isinstance(runs, dict):
        runs = expect_items(runs, "runs", expected)
    for run in runs.values() if isinstance(runs, dict) else runs:
        expect_type(run, "runs", Run, expected)
    if not isinstance(runs, dict):
        names = [run.name for run in runs]
        if len(set(names)) < len(names):  # one would replace the other in the table
            raise ValueError(f"runs: two runs share a name in {names}; expected distinct names")
        runs = dict(zip(names, runs, strict=True))
    if isinstance(measures, str):
        raise TypeError(f"measures: expected a list of measures, found {measures!r}")
    try:
        parsed = [ir_measures.parse_measure(m) for m in measures]
    except (NameError, ValueError, TypeError) as exc:  # ir_measures says NameError
        raise ValueError(f"measures: {exc}; expected ir_measures names such as nDCG@10") from None
    if lacking := [c for c in ("qid", "docid", "relevance") if c not in qrels.columns]:
        raise ValueError(f"qrels: lacks column(s) {lacking}; expected qid, docid, relevance")
    qrels_frame = pd.DataFrame(
        {
            "query_id": qrels["qid"].astype(str),
            "doc_id": qrels["docid"].astype(str),
            "relevance": qrels["relevance"].astype(int),
        }
    )
    judged = sorted(qrels_frame["query_id"].unique())
    rows = []
    unretrieved: dict[str, int] = {}
    for name, run in runs.items():
        frame = run.to_frame()
        run_frame = pd.DataFrame(
            {"query_id": frame["qid"], "doc_id": frame["docid"], "score": frame["score"]}
        )
        seen: dict[tuple[str, str], float] = {}
        for result in ir_measures.iter_calc(parsed, qrels_frame, run_frame):
            seen[(result.query_id, str(result.measure))] = float(result.value)
        retrieved = set(run.qids.tolist())
        unretrieved[name] = sum(q not in retrieved for q in judged)
        for q in judged:
            for m in parsed:
                metric, cutoff = split_measure(str(m))
                rows.append((name, q, metric, cutoff, seen.get((q, str(m)), 0.0)))
    table = pd.DataFrame(rows, columns=["run", "qid", "metric", "cutoff", "value"])
    table["cutoff"] = table["cutoff"].astype("Int64")
    table.attrs["unretrieved"] = unretrieved
    return table
