"""The catalogue of public resources: what the files are, where they live, their checksums.

Every word list, query set and run file the literature ships has a stable name
(``cpjku/runs/msmarco_passage/BM25.run``), repository, pinned commit, path, size, sha256 and
license (``public_resources.json`` beside this file; sizes and checksums computed once from
byte-identical copies).  :mod:`rankbias.data.fetch` downloads
``https://raw.githubusercontent.com/<owner>/<repo>/<commit>/<path>`` to ``<dest>/<local_path>``.
Sources: ``rekabsaz`` — github.com/navid-rekabsaz/GenderBias_IR (MIT; Rekabsaz and Schedl,
SIGIR 2020); ``cpjku`` — github.com/CPJKU/FairnessRetrievalResults (MIT; Rekabsaz, Kopeinik and
Schedl, SIGIR 2021); commits pinned in the JSON file.

Inferred upstream paths (the provenance notes name folders only; a wrong path is an HTTP 404,
never a wrong file): both ``LICENSE`` files at the repository root;
``cpjku/wordlist_gender_representative.txt`` in ``resources/`` (per ``measurement/README.md``);
``cpjku/runs/<collection>/<ranker>.run`` in ``measurement/sample_trec_runs/<collection>/``;
``cpjku/*.tsv`` in ``dataset/``; ``rekabsaz/*`` in ``resources/``.
"""

from __future__ import annotations

import json
from collections.abc import Iterable
from dataclasses import dataclass
from functools import cache
from importlib import resources as importlib_resources
from urllib.parse import quote

from rankbias.errors import InputError, expect_items

DEFAULT_BASE_URL = "https://raw.githubusercontent.com"
CATALOGUE_FILE = "public_resources.json"


@dataclass(frozen=True)
class Resource:
    """One public file, pinned to a commit of its repository."""

    name: str  #: stable name, ``<source>/<path in the source's folder>``
    source: str  #: ``rekabsaz`` or ``cpjku``
    repository: str  #: ``owner/name`` on GitHub
    commit: str  #: 40-hex commit the URL is pinned to
    path: str  #: path of the file inside the repository
    local_path: str  #: where :func:`rankbias.data.fetch.fetch` puts it, relative to ``dest``
    size: int  #: size in bytes
    sha256: str  #: hex digest of the file's bytes
    license: str  #: SPDX identifier of the repository's license
    description: str  #: what the file is, in one line

    def url(self, base_url: str | None = None) -> str:
        """The download URL ``<base_url>/<owner>/<repo>/<commit>/<path>`` (default: GitHub's
        raw-file host)."""
        base = (base_url or DEFAULT_BASE_URL).rstrip("/")
        return f"{base}/{quote(self.repository)}/{self.commit}/{quote(self.path)}"


@dataclass(frozen=True)
class Bundle:
    """A named group of resources fetched together."""

    name: str
    description: str
    members: tuple[str, ...]


@cache
def _load() -> tuple[dict[str, Resource], dict[str, Bundle]]:
    text = importlib_resources.files("rankbias.data").joinpath(CATALOGUE_FILE).read_text("utf-8")
    raw = json.loads(text)
    sources = raw["sources"]
    entries: dict[str, Resource] = {}
    for item in raw["resources"]:
        own = ("name", "source", "path", "local_path", "sha256", "description")
        pinned = {k: sources[item["source"]][k] for k in ("repository", "commit", "license")}
        resource = Resource(**{k: item[k] for k in own}, **pinned, size=int(item["size"]))
        if resource.name in entries:
            raise InputError(f"{CATALOGUE_FILE}: resource {resource.name!r} is listed twice")
        entries[resource.name] = resource
    bundles: dict[str, Bundle] = {}
    for name, item in raw["bundles"].items():
        if name in entries:
            raise InputError(f"{CATALOGUE_FILE}: bundle {name!r} has the name of a resource")
        if unknown := [m for m in item["members"] if m not in entries]:
            raise InputError(
                f"{CATALOGUE_FILE}: bundle {name!r} lists unknown resources {unknown}; "
                f"expected names from the 'resources' list"
            )
        bundles[name] = Bundle(name, item["description"], tuple(item["members"]))
    return entries, bundles


def resources() -> dict[str, Resource]:
    """Every catalogued resource, by name, in catalogue order."""
    return dict(_load()[0])


def bundles() -> dict[str, Bundle]:
    """The named bundles (``genderbias_ir``, ``fairness_retrieval``, ``runs_msmarco``,
    ``runs_trecdl2019``, ``all``), by name."""
    return dict(_load()[1])


def resource(name: str) -> Resource:
    """The resource called ``name``; :class:`InputError` if there is none."""
    entries, _ = _load()
    try:
        return entries[name]
    except KeyError:
        raise InputError(
            f"unknown public resource {name!r}; expected one of the names listed by "
            f"`rankbias data fetch --list`"
        ) from None


def select(names_or_bundles: str | Iterable[str]) -> list[Resource]:
    """Resolve resource and bundle names (a string is one name) to resources, in order, without
    duplicates; an unknown name is an :class:`InputError` listing the bundles."""
    if isinstance(names_or_bundles, str):
        names_or_bundles = [names_or_bundles]
    names_or_bundles = expect_items(names_or_bundles, "names_or_bundles", "names (a list)")
    if not names_or_bundles:
        raise ValueError("names_or_bundles: expected at least one name (or 'all'), found none")
    entries, groups = _load()
    chosen: dict[str, Resource] = {}
    for name in names_or_bundles:
        if name in groups:
            for member in groups[name].members:
                chosen.setdefault(member, entries[member])
        elif name in entries:
            chosen.setdefault(name, entries[name])
        else:
            raise InputError(
                f"unknown public resource or bundle {name!r}; expected a bundle "
                f"({', '.join(groups)}) or a resource name listed by `rankbias data fetch --list`"
            )
    return list(chosen.values())
