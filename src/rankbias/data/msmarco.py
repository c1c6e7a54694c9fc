"""The papers' setting as a dataset folder (:mod:`rankbias.dataset`): MS MARCO passages, the
query sets QS1 and QS2, the ten released runs and the papers' two word lists.

* **Public resources** (:mod:`rankbias.data.catalog`) — fetched from their commit-pinned URLs
  and checked by sha256, or taken from a ``mirror``: a folder laid out as ``rankbias data
  fetch`` writes it (each file checked against the catalogue), or a base URL or folder laid out
  as ``<owner>/<repo>/<commit>/<path>``.
* **QS1** — the 1,765 queries labelled ``n`` of the gender-annotated MS MARCO dev queries
  {cite}`rekabsaz2020neural`; **QS2** — the 215 bias-sensitive dev queries
  {cite}`rekabsaz2021societal`.  Their judgements are MS MARCO's dev qrels, from ``qrels`` (a
  local TREC qrels file) or ``ir_datasets`` (``msmarco-passage/dev``); when neither can be
  read the folder has none, and says so.
* **Runs** — the ten rankers' top-200 on QS2, as released.
* **Word lists** — ``rekabsaz2020neural``: the 64 gender-specific terms of RaB and ARaB;
  ``rekabsaz2021societal``: the 326 gender-representative terms of FaiRR and NFaiRR (the
  default).
* **Collection** — ``collection`` (a local ``docid<TAB>text`` file, linked, not copied) or the
  ``ir_datasets`` corpus ``msmarco-passage``, exported.
"""

from __future__ import annotations

import json
import os
import shutil
from pathlib import Path

from rankbias.errors import InputError

RUNS = {
    "BM25": "BM25",
    "RM3": "BM25 + RM3",
    "knrm": "KNRM",
    "conv_knrm": "ConvKNRM",
    "match_pyramid": "MatchPyramid",
    "tk": "TK",
    "bert_L2": "BERT (2 layers)",
    "bert_L4": "BERT (4 layers)",
    "advbert_L2": "AdvBERT (2 layers)",
    "advbert_L4": "AdvBERT (4 layers)",
}
WORD_LISTS = {
    "rekabsaz2020neural": ("rekabsaz/wordlist_genderspecific.txt", "gender_specific.txt"),
    "rekabsaz2021societal": (
        "cpjku/wordlist_gender_representative.txt",
        "gender_representative.txt",
    ),
}
QS1 = "rekabsaz/queries_gender_annotated.csv"
QS2 = "cpjku/msmarco_passage.dev.fair.tsv"
LICENSES = ("rekabsaz/LICENSE", "cpjku/LICENSE")
DESCRIPTION = (
    "MS MARCO passage retrieval as {cite:t}`rekabsaz2020neural` and "
    "{cite:t}`rekabsaz2021societal` study it: QS1, the 1,765 non-gendered dev queries of the "
    "gender-annotated set; QS2, the 215 bias-sensitive dev queries; the released top-200 runs "
    "of ten rankers on QS2; and the papers' two word lists."
)


def _resources() -> list[str]:
    return [
        QS1,
        QS2,
        *LICENSES,
        *(f"cpjku/runs/msmarco_passage/{r}.run" for r in RUNS),
        *(name for name, _ in WORD_LISTS.values()),
    ]


def public_files(out: Path, mirror: str | None, log=print) -> dict[str, Path]:
    """The public resources the folder needs, by catalogue name: from a mirror folder laid out
    as ``rankbias data fetch`` writes it (checked), else fetched into ``out/public``."""
    from rankbias.data.catalog import resource
    from rankbias.data.fetch import fetch, verify

    names = _resources()
    if mirror is not None and Path(mirror).expanduser().is_dir():
        checks = verify(Path(mirror).expanduser(), names)
        if all(check.status == "ok" for check in checks):
            log(f"public resources: {len(checks)} files in {mirror}, sha256 verified")
            return {check.resource.name: check.path for check in checks}
        if any(check.status == "differs" for check in checks):
            bad = next(check for check in checks if check.status == "differs")
            raise InputError(
                f"{bad.path}: not {bad.resource.name} as catalogued (expected sha256 "
                f"{bad.resource.sha256}, found {bad.found_sha256}); expected the pinned file"
            )
    dest = out / "public"
    fetch(names, dest, base_url=mirror, report=log)
    return {name: dest / resource(name).local_path for name in names}


def _write_lines(path: Path, lines) -> None:
    from rankbias.outputs import atomic_open

    with atomic_open(path, "w", encoding="utf-8", newline="") as handle:
        for line in lines:
            handle.write(line)


def _collection(out: Path, collection: str | None, log) -> None:
    from rankbias.collection import document_text, ir_datasets_corpus

    target = out / "collection.tsv"
    if target.exists() or target.is_symlink():
        target.unlink()
    if collection is not None:
        source = Path(collection).expanduser().resolve()
        if not source.is_file():
            raise InputError(f"--collection {collection}: no such file; expected docid<TAB>text")
        os.symlink(source, target)
        log(f"collection: {target} -> {source}")
        return
    corpus = ir_datasets_corpus("msmarco-passage")
    log("collection: exporting ir_datasets' msmarco-passage (8.8M passages) …")
    _write_lines(
        target,
        (f"{doc.doc_id}\t{' '.join(document_text(doc).split())}\n" for doc in corpus.docs_iter()),
    )


def _qrels(out: Path, qrels: str | bool | None, qids: set[str], log) -> bool:
    """Write ``qrels.txt`` for ``qids`` (from the file ``qrels``, or ir_datasets when it is
    ``None``; ``False``: none); False when the folder has none."""
    from rankbias.runs import read_qrels, write_qrels

    (out / "qrels.txt").unlink(missing_ok=True)
    if qrels is False:
        log("qrels: none asked for (no effectiveness)")
        return False
    if qrels is not None:
        table = read_qrels(qrels)
    else:
        try:
            import ir_datasets

            dev = ir_datasets.load("msmarco-passage/dev")
            rows = [(q.query_id, q.doc_id, q.relevance) for q in dev.qrels_iter()]
        except Exception as exc:  # no ir_datasets, no network, no cache: the folder has none
            log(
                f"qrels: MS MARCO's dev judgements could not be read ({type(exc).__name__}); "
                "the folder has none (no effectiveness); pass --qrels FILE to add them"
            )
            return False
        import pandas as pd

        table = pd.DataFrame(rows, columns=["qid", "docid", "relevance"]).astype(
            {"qid": str, "docid": str}
        )
    kept = table[table["qid"].isin(qids)]
    write_qrels(out / "qrels.txt", kept)
    log(f"qrels: {len(kept):,} judgements for {kept['qid'].nunique():,} of {len(qids):,} queries")
    return True


def build(
    out_dir: str | Path,
    *,
    mirror: str | None = None,
    collection: str | None = None,
    qrels: str | bool | None = None,
    log=print,
) -> Path:
    """Build the MS MARCO dataset folder into ``out_dir`` (module docstring)."""
    from rankbias.data.public import read_gender_annotated_queries, read_query_tsv
    from rankbias.dataset import load_dataset

    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    files = public_files(out, mirror, log)
    annotated = read_gender_annotated_queries(files[QS1])
    qs1 = annotated[annotated["label"] == "n"]
    qs2 = read_query_tsv(files[QS2])
    for name, table in (("queries_qs1.tsv", qs1), ("queries_qs2.tsv", qs2)):
        _write_lines(
            out / name, (f"{q}\t{t}\n" for q, t in zip(table["qid"], table["query"], strict=True))
        )
    log(f"queries: QS1 {len(qs1):,}, QS2 {len(qs2):,}")
    (out / "runs").mkdir(exist_ok=True)
    for run in RUNS:
        shutil.copyfile(files[f"cpjku/runs/msmarco_passage/{run}.run"], out / "runs" / f"{run}.run")
    (out / "wordlists").mkdir(exist_ok=True)
    for name, local in WORD_LISTS.values():
        shutil.copyfile(files[name], out / "wordlists" / local)
    (out / "licenses").mkdir(exist_ok=True)
    for name in LICENSES:
        shutil.copyfile(files[name], out / "licenses" / f"{name.split('/')[0]}.LICENSE")
    judged = _qrels(out, qrels, set(qs1["qid"]) | set(qs2["qid"]), log)
    _collection(out, collection, log)
    lines = ['name = "msmarco"', f"description = {json.dumps(DESCRIPTION)}", ""]
    for run, label in RUNS.items():
        lines += ["[[systems]]", f"run = {json.dumps(run)}", f"label = {json.dumps(label)}", ""]
    for name, queries in (("QS1", "queries_qs1.tsv"), ("QS2", "queries_qs2.tsv")):
        lines += [
            "[[query_sets]]",
            f"name = {json.dumps(name)}",
            f"queries = {json.dumps(queries)}",
        ]
        lines += ['qrels = "qrels.txt"', ""] if judged else [""]
    lines += ["[word_lists]", 'default = "rekabsaz2021societal"']
    lines += [
        f"{name} = {json.dumps('wordlists/' + local)}" for name, (_, local) in WORD_LISTS.items()
    ]
    _write_lines(out / "dataset.toml", [line + "\n" for line in lines])
    dataset = load_dataset(out)  # the folder is checked as every chapter will read it
    for note in dataset.notes:
        log(f"note: {note}")
    log(f"{out}: MS MARCO dataset folder with {len(dataset.systems)} systems")
    return out
