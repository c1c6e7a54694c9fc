"""The embedded testbed ``wikisample``: real passages, queries, judgements and runs.

Built locally from text inside a registry package (no other network):

* **Text.**  The test data of the ``gensim`` wheel, verified by sha256: a shortened English
  Wikipedia dump (106 articles without redirects), split into sections, cleaned with gensim's
  ``filter_wiki`` and cut into passages of about 100 words at sentence ends; and the Lee news
  corpus (300 articles), cut the same way, as distractors.
* **Queries and judgements** as TREC CAR makes them: title plus heading path is the query, the
  section's passages are relevant (grade 1); a query with a gendered term is excluded, counted.
* **Bias-sensitive queries** written by the team (``resources/queries_sensitive.tsv``) with the
  sections judged relevant.
* **Runs** of five systems (:mod:`rankbias.retrieval`), top-100 for every query.

A rebuild must reproduce the collection's recorded sha256.
"""

from __future__ import annotations

import bz2
import json
import re
import shutil
import time
from dataclasses import dataclass
from pathlib import Path

import pandas as pd

from rankbias.errors import InputError
from rankbias.inputs import sha256_of
from rankbias.outputs import write_table, write_text
from rankbias.retrieval import SYSTEMS
from rankbias.runs import write_qrels

WIKI_FILE = "enwiki-latest-pages-articles1.xml-p000000010p000030302-shortened.bz2"
NEWS_FILE = "lee_background.cor"
SOURCE_SHA256 = {
    WIKI_FILE: "a53f4648dec40467ebdcbc7a1307eddb51fe6e28e9309f6ebde81ba0d04bea2d",
    NEWS_FILE: "5d78d6dafd953bbf65797bef09a9ffb9ec430583381be705f8fd460000f370fb",
}

#: Sections that are lists of links or citations rather than prose.
SKIPPED_SECTIONS = frozenset(
    "references|external links|see also|notes|further reading|bibliography|sources|footnotes|"
    "citations|notes and references|references and notes|works cited|gallery|links".split("|")
)

#: sha256 of the ``collection.tsv`` extracted from the pinned sources (a build checks it)
COLLECTION_SHA256 = "5fd585f45a183bd72fec36203ebd410103dec3bf57d032e6efdd059802041ec0"

PASSAGE_WORDS = 100  # target length; a passage closes at the first sentence end past it
MIN_PASSAGE_WORDS = 20  # shorter remainders are merged into the previous passage
MIN_LINE_WORDS = 6  # shorter lines are captions or list debris, not prose
RUN_DEPTH = 100

_HEADING = re.compile(r"^(={2,6})\s*(.+?)\s*\1\s*$", re.MULTILINE)
_SENTENCE_END = re.compile(r"(?:(?<=[.!?])|(?<=[.!?][\"')\]]))\s+(?=[\"'(\[]?[A-Z0-9])")
_BOLD_ITALIC = re.compile(r"'{2,}")
_SPACES = re.compile(r"[ \t\u00a0]+")


@dataclass(frozen=True)
class Passage:
    docid: str
    text: str
    source: str  # "wiki" or "news"
    article: str  # article title (news: the article number)
    section: tuple[str, ...]  # heading path, () for the lead section


def gensim_data_path(name: str) -> Path:
    """Path of a file of gensim's test data, checked against its pinned sha256."""
    try:
        from gensim.test.utils import datapath
    except ImportError as exc:  # pragma: no cover - depends on the environment
        raise InputError(
            "the wikisample testbed needs gensim (pip install 'rankbias[testbed]')"
        ) from exc
    path = Path(datapath(name))
    if not path.exists():
        raise InputError(f"{path}: gensim's test data file is missing; expected {name}")
    found = sha256_of(path)
    expected = SOURCE_SHA256[name]
    if found != expected:
        raise InputError(
            f"{path}: sha256 {found} differs from the pinned {expected}; this gensim release "
            "ships different test data, so the testbed would not be the documented one"
        )
    return path


# ---- text -> passages ----------------------------------------------------------------------
def clean_markup(wikitext: str) -> str:
    """Plain prose from a piece of wikitext: gensim's ``filter_wiki``, less the lines shorter
    than ``MIN_LINE_WORDS`` words or without sentence punctuation (captions, lists, tables)."""
    from gensim.corpora.wikicorpus import filter_wiki

    text = filter_wiki(wikitext)
    text = _BOLD_ITALIC.sub("", text)
    kept = []
    for line in text.splitlines():
        line = _SPACES.sub(" ", line).strip()
        prose = len(line.split()) >= MIN_LINE_WORDS and re.search(r"[.!?]", line)
        if prose and not line.startswith(("*", "#", "|", "{", "!")):
            kept.append(line)
    return "\n".join(kept)


def split_sentences(text: str) -> list[str]:
    """Sentences of a paragraph: split after ``.!?`` followed by space and a capital/digit."""
    out = []
    for paragraph in text.split("\n"):
        out.extend(s.strip() for s in _SENTENCE_END.split(paragraph) if s.strip())
    return out


def chunk_sentences(sentences: list[str], target: int = PASSAGE_WORDS) -> list[str]:
    """Greedy passages of about ``target`` words, cut only at sentence boundaries."""
    passages: list[list[str]] = []
    current: list[str] = []
    words = 0
    for sentence in sentences:
        current.append(sentence)
        words += len(sentence.split())
        if words >= target:
            passages.append(current)
            current, words = [], 0
    if current:
        if passages and words < MIN_PASSAGE_WORDS:
            passages[-1].extend(current)
        else:
            passages.append(current)
    return [" ".join(p) for p in passages]


def wiki_sections(title: str, wikitext: str) -> list[tuple[tuple[str, ...], str]]:
    """``(heading path, wikitext)`` for the lead and every section of an article."""
    parts = _HEADING.split(wikitext)
    sections = [((), parts[0])]
    stack: list[tuple[int, str]] = []
    for i in range(1, len(parts) - 1, 3):
        level = len(parts[i])
        heading = re.sub(r"<!--.*?-->|\{\{[^{}]*\}\}", "", parts[i + 1])
        heading = _SPACES.sub(" ", heading).strip()
        heading = re.sub(r"\[\[(?:[^|\]]*\|)?([^\]]*)\]\]", r"\1", heading)
        heading = _BOLD_ITALIC.sub("", heading).strip()
        while stack and stack[-1][0] >= level:
            stack.pop()
        stack.append((level, heading))
        sections.append((tuple(h for _, h in stack), parts[i + 2]))
    return sections


def read_wikipedia(path: Path) -> list[tuple[str, str]]:
    """``(title, wikitext)`` of every article of the dump, redirects and empty pages skipped."""
    from gensim.corpora.wikicorpus import extract_pages

    articles = []
    with bz2.open(path, "rb") as handle:
        for title, text, _pageid in extract_pages(handle):
            if not text.strip() or text.lstrip().lower().startswith("#redirect"):
                continue
            articles.append((title, text))
    return articles


def wiki_passages(articles: list[tuple[str, str]]) -> list[Passage]:
    passages = []
    for a, (title, wikitext) in enumerate(articles):
        for s, (path, body) in enumerate(wiki_sections(title, wikitext)):
            if any(h.lower() in SKIPPED_SECTIONS for h in path):
                continue
            chunks = chunk_sentences(split_sentences(clean_markup(body)))
            for p, chunk in enumerate(chunks):
                docid = f"w{a:03d}-{s:02d}-{p:02d}"
                passages.append(Passage(docid, chunk, "wiki", title, path))
    return passages


def news_passages(path: Path) -> list[Passage]:
    passages = []
    with open(path, encoding="utf-8") as handle:
        for a, line in enumerate(handle):
            text = _SPACES.sub(" ", line).strip()
            if not text:
                continue
            for p, chunk in enumerate(chunk_sentences(split_sentences(text))):
                passages.append(Passage(f"n{a:03d}-{p:02d}", chunk, "news", f"news {a}", ()))
    return passages


# ---- queries ---------------------------------------------------------------------------------
def car_queries(passages: list[Passage], gendered: frozenset[str], tokenize) -> tuple:
    """TREC-CAR style queries (title + heading path): ``(queries, qrels, excluded)``, tables
    ``qid, query, article, section``, ``qid, docid, relevance`` and the queries dropped for a
    gendered term or a duplicate text (``query, reason``)."""
    by_section: dict[tuple[str, tuple[str, ...]], list[str]] = {}
    for passage in passages:
        if passage.source == "wiki":
            by_section.setdefault((passage.article, passage.section), []).append(passage.docid)
    rows, qrels, excluded = [], [], []
    seen: set[str] = set()
    for (article, section), docids in by_section.items():
        query = " ".join((article, *section))
        found = sorted(set(tokenize(query)) & gendered)
        if found:
            excluded.append((query, " ".join(found)))
            continue
        if query.lower() in seen:  # two sections with the same heading path
            excluded.append((query, "(duplicate query text)"))
            continue
        seen.add(query.lower())
        qid = f"q{len(rows) + 1:04d}"
        rows.append((qid, query, article, " / ".join(section)))
        qrels.extend((qid, d, 1) for d in docids)
    queries = pd.DataFrame(rows, columns=["qid", "query", "article", "section"])
    qrels_frame = pd.DataFrame(qrels, columns=["qid", "docid", "relevance"])
    excluded_frame = pd.DataFrame(excluded, columns=["query", "reason"])
    return queries, qrels_frame, excluded_frame


def sensitive_queries(passages: list[Passage], resource: Path, gendered, tokenize) -> tuple:
    """The team's bias-sensitive queries (``qid, query, category, relevant``) and their
    judgements: ``relevant`` lists ``Article > Section`` paths separated by ``;`` (empty: kept
    unjudged).  A path not in the collection or a gendered query is an error naming the line."""
    table = pd.read_csv(resource, sep="\t", dtype=str, keep_default_na=False)
    by_path: dict[str, list[str]] = {}
    for passage in passages:
        if passage.source == "wiki":
            key = " > ".join((passage.article, *passage.section)).lower()
            by_path.setdefault(key, []).append(passage.docid)
    qrels = []
    for line, row in enumerate(table.itertuples(index=False), start=2):
        found = sorted(set(tokenize(row.query)) & gendered)
        if found:
            raise InputError(
                f"{resource}:{line}: query {row.query!r} contains gendered term(s) {found}; "
                "expected a gender-neutral query"
            )
        for path in filter(None, (p.strip() for p in row.relevant.split(";"))):
            docids = by_path.get(path.lower())
            if docids is None:
                raise InputError(
                    f"{resource}:{line}: section {path!r} is not in the collection; expected "
                    "'Article > Section > ...' as built from the Wikipedia sample"
                )
            qrels.extend((row.qid, d, 1) for d in docids)
    queries = table[["qid", "query", "category"]].copy()
    qrels_frame = pd.DataFrame(qrels, columns=["qid", "docid", "relevance"]).drop_duplicates()
    return queries, qrels_frame


# ---- build -----------------------------------------------------------------------------------
def build_collection() -> tuple[list[Passage], dict]:
    """All passages of the testbed and the facts about their sources."""
    articles = read_wikipedia(gensim_data_path(WIKI_FILE))
    passages = wiki_passages(articles) + news_passages(gensim_data_path(NEWS_FILE))
    info = {
        "sources": {
            WIKI_FILE: {"sha256": SOURCE_SHA256[WIKI_FILE], "articles": len(articles)},
            NEWS_FILE: {"sha256": SOURCE_SHA256[NEWS_FILE]},
        }
    }
    return passages, info


def write_tsv(path: Path, frame: pd.DataFrame) -> None:
    lines = ("\t".join(map(str, row)) for row in frame.itertuples(index=False))
    write_text(path, "\n".join(lines) + "\n")


def build(out_dir: str | Path, *, force: bool = False, log=print) -> Path:
    """Build the testbed into ``out_dir`` (skipped when it is complete, unless ``force``)."""
    from importlib.metadata import version

    from rankbias.lexicon import default_lexicon
    from rankbias.retrieval import build_runs
    from rankbias.text import tokenize

    out = Path(out_dir)
    stamp = out / ".complete"
    if stamp.exists() and not force:
        log(f"{out}: already built (delete it or pass --force to rebuild)")
        return out
    started = time.time()
    out.mkdir(parents=True, exist_ok=True)
    stamp.unlink(missing_ok=True)

    passages, info = build_collection()
    collection = pd.DataFrame(
        {"docid": [p.docid for p in passages], "text": [p.text for p in passages]}
    )
    write_tsv(out / "collection.tsv", collection)
    found = sha256_of(out / "collection.tsv")
    if found != COLLECTION_SHA256:
        raise InputError(
            f"{out / 'collection.tsv'}: sha256 {found} differs from the documented "
            f"{COLLECTION_SHA256}; the extraction is not the documented testbed (if the "
            "builder was changed on purpose, update COLLECTION_SHA256 and the data card)"
        )
    meta = pd.DataFrame(
        [(p.docid, p.source, p.article, " / ".join(p.section)) for p in passages],
        columns=["docid", "source", "article", "section"],
    )
    write_table(out / "passages.tsv", meta)
    log(f"collection: {len(passages)} passages")

    lexicon = default_lexicon()
    gendered = frozenset(lexicon.term_to_group)
    queries, qrels, excluded = car_queries(passages, gendered, tokenize)
    write_tsv(out / "queries.tsv", queries[["qid", "query"]])
    write_table(out / "queries_meta.tsv", queries)
    write_qrels(out / "qrels.txt", qrels)
    write_table(out / "queries_excluded.tsv", excluded)
    log(f"queries: {len(queries)} kept, {len(excluded)} excluded (gendered or duplicate)")

    resource = Path(__file__).resolve().parents[1] / "resources" / "queries_sensitive.tsv"
    sens, sens_qrels = sensitive_queries(passages, resource, gendered, tokenize)
    write_tsv(out / "queries_sensitive.tsv", sens[["qid", "query"]])
    write_table(out / "queries_sensitive_meta.tsv", sens)
    write_qrels(out / "qrels_sensitive.txt", sens_qrels)
    log(f"sensitive queries: {len(sens)}, judged: {sens_qrels['qid'].nunique()}")

    all_queries = pd.concat([queries[["qid", "query"]], sens[["qid", "query"]]])
    runs_dir = out / "runs"
    if runs_dir.exists():
        shutil.rmtree(runs_dir)
    timings = build_runs(collection, all_queries, runs_dir, cache_dir=out / "cache", log=log)

    manifest = {
        **info,
        "gensim": version("gensim"),
        "collection_sha256": sha256_of(out / "collection.tsv"),
        "passages": len(passages),
        "passages_wiki": sum(p.source == "wiki" for p in passages),
        "passages_news": sum(p.source == "news" for p in passages),
        "queries": len(queries),
        "queries_excluded": len(excluded),
        "queries_sensitive": len(sens),
        "queries_sensitive_judged": int(sens_qrels["qid"].nunique()),
        "run_depth": RUN_DEPTH,
        "systems": sorted(timings),
        "seconds": {k: round(v, 1) for k, v in timings.items()},
    }
    write_text(out / "manifest.json", json.dumps(manifest, indent=2) + "\n")
    write_dataset_manifest(out)
    write_text(stamp, f"built in {time.time() - started:.0f} s\n")
    log(f"{out}: built in {time.time() - started:.0f} s")
    return out


# ---- reading a built testbed -----------------------------------------------------------------
#: How the book names each system in words (tables, figures, prose).
SYSTEM_NAMES = dict(zip(SYSTEMS, ("BM25", "BM25 + RM3", "dense", "hybrid", "rerank"), strict=True))
#: What each system is, in Markdown (the book renders it as MyST: the citations resolve).
SYSTEM_DESCRIPTIONS = {
    "bm25": "BM25 {cite}`robertson1994okapi` via `bm25s` {cite}`lu2024bm25s`, `k1 = 0.9`, "
    "`b = 0.4`",
    "bm25_rm3": "BM25 with RM3-style pseudo-relevance feedback {cite}`lavrenko2001relevance` "
    "(10 documents, 20 terms, λ = 0.5)",
    "dense": "bi-encoder retrieval with all-MiniLM-L6-v2 {cite}`reimers2019sbert`, cosine "
    "similarity",
    "hybrid": "reciprocal-rank fusion {cite}`cormack2009rrf` of BM25 and dense (k = 60)",
    "rerank": "BM25's top 100 re-scored by the dense model",
}
#: The testbed in words, in Markdown (the book shows it where it describes the data).
DESCRIPTION = (
    "The embedded `wikisample` testbed is built from text that ships, as test data, inside "
    "the `gensim` package {cite}`rehurek2010gensim,lee2005empirical`: a shortened dump of the "
    "English Wikipedia (the first articles of the alphabet, from *Anarchism* to *Algorithm*) "
    "and the Lee news corpus of 300 short news articles, both checked against pinned sha256 "
    "checksums.  The build removes the wiki markup with gensim's own `filter_wiki`, splits "
    "each article into its sections, drops sections that are lists of references or links, "
    "and cuts every section into passages of about 100 words, closing a passage at the first "
    "sentence end past 100 words.  The news articles become passages in the same way; they "
    "have no sections, no queries are made from them, and they act as distractors.\n\n"
    "Its **gender-neutral** queries are built the way TREC Complex Answer Retrieval builds "
    "them {cite}`dietz2017car`: each section of a Wikipedia article yields one query, the "
    "article title followed by the headings on the path to the section (the lead section's "
    "query is the title alone), and the passages of that section are its relevant documents.  "
    "Queries that contain a term of the gendered-term list are excluded, so that the query "
    "itself does not ask for one gender; the build records each exclusion and its reason.  "
    "Its forty **bias-sensitive** queries were written by the project's authors, "
    "gender-neutral in wording but on topics where a gendered answer is a known risk — "
    "careers, child care, sport, science, health, education, the arts and appearance — in the "
    "spirit of the public query sets of {cite}`rekabsaz2020neural` and "
    "{cite}`rekabsaz2021societal`; the passages of the sections of the Wikipedia sample that "
    "answer a query are its judgements.  Five real systems retrieve the top 100 passages for "
    "every query of both sets (their parameters are in `rankbias.retrieval`)."
)


def _toml_string(text: str) -> str:
    return json.dumps(text, ensure_ascii=False)  # a JSON string is a TOML basic string


def write_dataset_manifest(out: str | Path) -> Path:
    """Write the testbed's ``dataset.toml`` (:mod:`rankbias.dataset`): its systems with their
    names, its two query sets, its passage metadata and description, and that its runs are
    those of :mod:`rankbias.retrieval` (``rankers``), which the counterfactual chapter reruns."""
    lines = [
        "# The embedded testbed, described for rankbias.dataset (written by its builder).",
        'name = "wikisample"',
        f"description = {_toml_string(DESCRIPTION)}",
        'metadata = "passages.tsv"',
        "# the runs are rankbias.retrieval's, so a chapter may rerun them on a changed collection",
        'rankers = "rankbias.retrieval"',
        "",
    ]
    for system in SYSTEMS:
        lines += [
            "[[systems]]",
            f"run = {_toml_string(system)}",
            f"label = {_toml_string(SYSTEM_NAMES[system])}",
            f"description = {_toml_string(SYSTEM_DESCRIPTIONS[system])}",
            "",
        ]
    for name, queries, qrels in (
        ("gender-neutral", "queries.tsv", "qrels.txt"),
        ("bias-sensitive", "queries_sensitive_meta.tsv", "qrels_sensitive.txt"),
    ):
        lines += [
            "[[query_sets]]",
            f"name = {_toml_string(name)}",
            f"queries = {_toml_string(queries)}",
            f"qrels = {_toml_string(qrels)}",
            "",
        ]
    return write_text(Path(out) / "dataset.toml", "\n".join(lines))
