"""Dataset folders made for the tests from real material: the embedded testbed's passages and
runs, and the public runs, query sets and word lists (``../shared/data/public``).

* :func:`minimal_folder` — the documented layout alone (``collection.tsv``, ``queries.tsv``,
  ``qrels.txt``, ``runs/*.run``): three systems, numeric query ids, no manifest.
* :func:`papers_folder` — the ten public rankers on two query sets (the 215 bias-sensitive MS
  MARCO queries and the 30 of TREC DL 2019), the papers' two word lists, document groups and
  polarisation scores, over a stand-in collection: every docid the runs rank, given the text
  of a testbed passage (the real MS MARCO text is out of reach here).
"""

from __future__ import annotations

import hashlib
import re
import shutil
from pathlib import Path

import numpy as np
import pandas as pd

from rankbias.data.msmarco import RUNS

PUBLIC_RUNS = "cpjku_fairness_retrieval_results/runs"


def _write_run(frame: pd.DataFrame, path: Path) -> None:
    lines = [
        f"{q} Q0 {d} {r} {s:.6f} {path.stem}"
        for q, d, r, s in zip(
            frame["qid"], frame["docid"], frame["rank"], frame["score"], strict=True
        )
    ]
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")


def _read_tsv(path: Path, names: list[str]) -> pd.DataFrame:
    """A headerless tab-separated file, every field text, nothing read as quotes or NaN."""
    return pd.read_csv(
        path, sep="\t", header=None, dtype=str, names=names, quoting=3, keep_default_na=False
    )


def _read_run_frame(path: Path) -> pd.DataFrame:
    frame = pd.read_csv(
        path,
        sep=r"\s+",
        header=None,
        dtype=str,
        names=["qid", "q0", "docid", "rank", "score", "tag"],
    )
    return frame.assign(rank=frame["rank"].astype(int), score=frame["score"].astype(float))


def minimal_folder(
    testbed: Path,
    out: Path,
    *,
    queries: int = 300,
    depth: int = 50,
    systems=("bm25", "dense", "rerank"),
) -> Path:
    """The documented layout alone: the testbed's collection, ``queries`` of its gender-neutral
    queries renumbered 1, 2, … (numeric qids), their judgements and three of its runs cut to
    ``depth``, renamed ``system_a`` …"""
    out.mkdir(parents=True, exist_ok=True)
    shutil.copyfile(testbed / "collection.tsv", out / "collection.tsv")
    frame = _read_tsv(testbed / "queries.tsv", ["qid", "query"])
    chosen = frame.iloc[:: max(1, len(frame) // queries)].head(queries)
    numbers = {qid: str(i) for i, qid in enumerate(chosen["qid"], 1)}
    chosen.assign(qid=chosen["qid"].map(numbers)).to_csv(
        out / "queries.tsv", sep="\t", header=False, index=False
    )
    qrels = pd.read_csv(
        testbed / "qrels.txt",
        sep=r"\s+",
        header=None,
        dtype=str,
        names=["qid", "iter", "docid", "rel"],
    )
    qrels = qrels[qrels["qid"].isin(numbers)]
    (out / "qrels.txt").write_text(
        "".join(
            f"{numbers[q]} 0 {d} {r}\n"
            for q, d, r in zip(qrels["qid"], qrels["docid"], qrels["rel"], strict=True)
        )
    )
    (out / "runs").mkdir(exist_ok=True)
    for letter, system in zip("abcdefghij", systems, strict=False):
        run = _read_run_frame(testbed / "runs" / f"{system}.run")
        run = run[run["qid"].isin(numbers) & (run["rank"] <= depth)]
        _write_run(run.assign(qid=run["qid"].map(numbers)), out / "runs" / f"system_{letter}.run")
    return out


def _stand_in_text(docids, testbed: Path) -> pd.DataFrame:
    """Each docid given the text of a testbed passage chosen by the docid's hash."""
    collection = _read_tsv(testbed / "collection.tsv", ["docid", "text"])
    texts = collection["text"].to_numpy()
    picks = [int(hashlib.sha256(d.encode()).hexdigest()[:8], 16) % len(texts) for d in docids]
    return pd.DataFrame({"docid": list(docids), "text": texts[picks]})


def papers_folder(testbed: Path, public: Path, out: Path, *, depth: int = 20) -> Path:
    """Ten rankers, two query sets, the papers' word lists, groups and polarisation scores."""
    out.mkdir(parents=True, exist_ok=True)
    cpjku = public / "cpjku_fairness_retrieval_results"
    rekabsaz = public / "rekabsaz_genderbias_ir"
    runs = {}
    for path in sorted((public / PUBLIC_RUNS / "msmarco_passage").glob("*.run")):
        parts = [
            _read_run_frame(public / PUBLIC_RUNS / folder / path.name)
            for folder in ("msmarco_passage", "trecdl2019_passage")
        ]
        run = pd.concat(parts, ignore_index=True)
        runs[path.stem] = run[run["rank"] <= depth]
    (out / "runs").mkdir(exist_ok=True)
    for name, run in runs.items():
        _write_run(run, out / "runs" / f"{name}.run")
    docids = sorted(set().union(*(set(run["docid"]) for run in runs.values())))
    collection = _stand_in_text(docids, testbed)
    collection.to_csv(out / "collection.tsv", sep="\t", header=False, index=False, quoting=3)
    for source, target in (
        ("msmarco_passage.dev.fair.tsv", "queries_msmarco.tsv"),
        ("trecdeep19_passage.fair.tsv", "queries_trecdl.tsv"),
    ):
        shutil.copyfile(cpjku / source, out / target)
    (out / "wordlists").mkdir(exist_ok=True)
    shutil.copyfile(
        rekabsaz / "wordlist_genderspecific.txt", out / "wordlists" / "gender_specific.txt"
    )
    shutil.copyfile(
        cpjku / "wordlist_gender_representative.txt",
        out / "wordlists" / "gender_representative.txt",
    )
    # groups and polarisation: from the stand-in text, by the papers' gender-specific terms
    terms = dict(
        line.strip().split(",")
        for line in (out / "wordlists" / "gender_specific.txt").read_text().splitlines()
        if line
    )
    tokens = collection["text"].str.lower().map(lambda t: re.findall(r"\w+", t))
    female = tokens.map(lambda ts: sum(terms.get(t) == "f" for t in ts))
    male = tokens.map(lambda ts: sum(terms.get(t) == "m" for t in ts))
    group = np.where(female > male, "female", np.where(male > female, "male", "neutral"))
    pd.DataFrame({"docid": collection["docid"], "group": group}).to_csv(
        out / "groups.tsv", sep="\t", index=False
    )
    score = (male - female) / tokens.str.len().clip(lower=1)
    polar = pd.concat([run[["qid", "docid"]] for run in runs.values()]).drop_duplicates()
    polar = polar.merge(pd.DataFrame({"docid": collection["docid"], "score": score}), on="docid")
    polar.to_csv(out / "polarisation.tsv", sep="\t", index=False)
    labels = RUNS  # the rankers' display names, as `rankbias data msmarco` writes them
    lines = [
        'name = "papers-standin"',
        "description = \"The ten rankers of the NFaiRR paper's released runs, over a "
        'stand-in collection."',
        "",
    ]
    for system in labels:
        lines += ["[[systems]]", f'run = "{system}"', f'label = "{labels[system]}"', ""]
    lines += [
        "[[query_sets]]",
        'name = "MS MARCO bias-sensitive"',
        'queries = "queries_msmarco.tsv"',
        "",
        "[[query_sets]]",
        'name = "TREC DL 2019 bias-sensitive"',
        'queries = "queries_trecdl.tsv"',
        "",
        "[word_lists]",
        'default = "gender_representative"',
        'gender_specific = "wordlists/gender_specific.txt"',
        'gender_representative = "wordlists/gender_representative.txt"',
        "",
        "[files]",
        'groups = "groups.tsv"',
        'polarisation = "polarisation.tsv"',
        "",
    ]
    (out / "dataset.toml").write_text("\n".join(lines), encoding="utf-8")
    return out


def stand_in_collection(run_files, testbed: Path, out: Path) -> Path:
    """A ``docid<TAB>text`` file holding every docid the ``run_files`` rank, each given the text
    of a testbed passage (the stand-in for a collection out of reach here)."""
    docids = sorted(set().union(*(set(_read_run_frame(Path(f))["docid"]) for f in run_files)))
    _stand_in_text(docids, testbed).to_csv(out, sep="\t", header=False, index=False, quoting=3)
    return out


def msmarco_folder(testbed: Path, public: Path, out: Path) -> Path:
    """``rankbias data msmarco`` with the public folder as its mirror, over a stand-in
    collection of every docid the ten released runs rank (no judgements: they are out of
    reach here)."""
    from rankbias.data.msmarco import build

    out.parent.mkdir(parents=True, exist_ok=True)
    runs = sorted((public / PUBLIC_RUNS / "msmarco_passage").glob("*.run"))
    collection = stand_in_collection(runs, testbed, out.parent / f"{out.name}-collection.tsv")
    return build(
        out, mirror=str(public), collection=str(collection), qrels=False, log=lambda line: None
    )


FOLDERS = {"minimal": "any-minimal", "papers": "any-papers", "msmarco": "any-msmarco"}


def main(argv: list[str]) -> int:
    """``python tests/folders.py OUT_DIR``: the three folders the book is built on besides the
    testbed (``make test``), each rebuilt only when absent."""
    import sys

    from public_data import PUBLIC

    out = Path(argv[0])
    testbed = Path(argv[1]) if len(argv) > 1 else Path("data/build/wikisample")
    if not PUBLIC.is_dir():
        print(f"tests/folders.py: {PUBLIC} absent: only the minimal folder", file=sys.stderr)
    makers = {
        "minimal": lambda path: minimal_folder(testbed, path),
        "papers": lambda path: papers_folder(testbed, PUBLIC, path),
        "msmarco": lambda path: msmarco_folder(testbed, PUBLIC, path),
    }
    for kind, name in FOLDERS.items():
        path = out / name
        if (path / ".complete").exists() or (kind != "minimal" and not PUBLIC.is_dir()):
            continue
        shutil.rmtree(path, ignore_errors=True)
        makers[kind](path)
        (path / ".complete").write_text("made by tests/folders.py\n")
        print(f"tests/folders.py: {path}")
    return 0


if __name__ == "__main__":
    import sys

    sys.exit(main(sys.argv[1:]))
