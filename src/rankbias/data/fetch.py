"""Download the public resources of :mod:`rankbias.data.catalog` (:func:`fetch`) and check
a directory of them (:func:`verify`) against the catalogue's sizes and sha256 checksums."""

from __future__ import annotations

import hashlib
import os
import re
import sys
import time
import urllib.error
import urllib.request
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from pathlib import Path
from urllib.parse import urlsplit

from rankbias.data.catalog import Resource, select
from rankbias.errors import InputError, expect_type
from rankbias.inputs import sha256_of
from rankbias.outputs import atomic_path, is_disk_full, remove_stale_temps

CHUNK_BYTES = 1 << 20
TIMEOUT_SECONDS = 60

Report = Callable[[str], None]
Progress = Callable[[int], None]  # called with the number of bytes just downloaded or checked


def _to_stderr(message: str) -> None:
    print(message, file=sys.stderr)


def mirror_base_url(mirror: str) -> str:
    """A base URL for ``mirror``: a URL is kept; an existing directory becomes ``file://…``
    (``""`` is refused: ``Path("")`` is the current directory)."""
    if mirror.strip() == "":
        raise InputError(f"mirror {mirror!r}: expected a base URL or a directory, found none")
    if urlsplit(mirror).scheme in {"http", "https", "file", "ftp"}:
        return mirror.rstrip("/")
    directory = Path(mirror).expanduser()
    if directory.is_dir():
        return directory.resolve().as_uri()
    raise InputError(
        f"mirror {mirror!r}: found neither a URL (http://, https://, file://) nor an existing "
        f"directory; expected a base URL or directory laid out as <owner>/<repo>/<commit>/<path>"
    )


def remove_stale_partials(target: Path) -> list[Path]:
    """Remove partial downloads of ``target`` left by killed runs (those of a live process are
    kept; the older ``.<name>.<hex>.part`` files once older than a download may stall)."""
    removed = remove_stale_temps(target)
    legacy = re.compile(rf"\.{re.escape(target.name)}\.[0-9a-f]{{32}}\.part")
    if target.parent.is_dir():
        for entry in target.parent.iterdir():
            if legacy.fullmatch(entry.name):
                try:
                    if time.time() - entry.stat().st_mtime > 2 * TIMEOUT_SECONDS:
                        entry.unlink()
                        removed.append(entry)
                except FileNotFoundError:
                    pass
    return removed


def _download(resource: Resource, url: str, target: Path, progress: Progress | None = None) -> None:
    """Stream ``url`` into a temporary file beside ``target``; rename it only if it verifies."""
    digest = hashlib.sha256()
    size = 0
    # a longer answer is hashed (for the message) but not written; reading stops past ``limit``
    limit = 2 * resource.size + CHUNK_BYTES
    with atomic_path(target) as partial:
        try:
            with urllib.request.urlopen(url, timeout=TIMEOUT_SECONDS) as response:
                with open(partial, "wb") as out:
                    while size <= limit and (chunk := response.read(CHUNK_BYTES)):
                        if size + len(chunk) <= resource.size:
                            out.write(chunk)
                        size += len(chunk)
                        digest.update(chunk)
                        if progress is not None:
                            progress(len(chunk))
        except (urllib.error.URLError, OSError) as exc:
            if is_disk_full(exc):
                raise
            reason = exc if isinstance(exc, urllib.error.HTTPError) else getattr(exc, "reason", exc)
            raise InputError(f"could not download {resource.name} from {url}: {reason}") from exc
        if size > limit:
            found_text = f"more than {limit} bytes, reading stopped"
        else:
            found_text = f"sha256 {digest.hexdigest()} ({size} bytes)"
        if size != resource.size or digest.hexdigest() != resource.sha256:
            raise InputError(
                f"refused {resource.name} from {url}: checksum differs, "
                f"expected sha256 {resource.sha256} ({resource.size} bytes), found {found_text}"
            )


def fetch(
    names_or_bundles: str | Iterable[str],
    dest: str | os.PathLike[str],
    *,
    base_url: str | None = None,
    overwrite: bool = False,
    report: Report | None = _to_stderr,
    progress: Progress | None = None,
) -> list[Path]:
    """Download resources or bundles (names of :mod:`rankbias.data.catalog`) into
    ``dest/<resource.local_path>``, renamed into place only when size and sha256 match (a file
    present with them is skipped unless ``overwrite``); return their paths.  ``base_url``: a
    mirror URL or directory laid out as ``<owner>/<repo>/<commit>/<path>``; ``report`` gets one
    line per file (``None``: silence), ``progress`` the bytes downloaded or found verified.
    :class:`InputError` for an unknown name, a failed download, a size or sha256 that differs
    (nothing is left behind) and a present file that differs without ``overwrite``."""
    chosen = select(names_or_bundles)
    base = mirror_base_url(base_url) if base_url is not None else None
    say = report or (lambda message: None)
    dest = Path(expect_type(dest, "dest", str | os.PathLike, "a directory path"))
    paths: list[Path] = []
    for resource in chosen:
        target = dest / resource.local_path
        url = resource.url(base)
        for stale in remove_stale_partials(target):
            say(f"removed a partial download left by an interrupted run: {stale}")
        if target.exists() and not overwrite:
            size = target.stat().st_size
            found = sha256_of(target) if size == resource.size else None
            if found != resource.sha256:
                found_text = (
                    f"sha256 {found}" if found else f"{size} bytes instead of {resource.size}"
                )
                raise InputError(
                    f"{target}: present but not {resource.name} as catalogued: expected sha256 "
                    f"{resource.sha256} ({resource.size} bytes), found {found_text}; remove it "
                    f"or fetch with --overwrite"
                )
            say(f"skipped {resource.name}: already present at {target} with the right sha256")
            if progress is not None:
                progress(resource.size)
        else:
            _download(resource, url, target, progress)
            say(f"fetched {resource.name} -> {target} ({resource.size:,} bytes, sha256 verified)")
        paths.append(target)
    return paths


@dataclass(frozen=True)
class Check:
    """The state of one resource in a directory: ``ok``, ``missing`` or ``differs``."""

    resource: Resource
    path: Path
    status: str
    found_sha256: str | None = None
    found_size: int | None = None


def verify(
    dest: str | os.PathLike[str], names_or_bundles: str | Iterable[str] = "all"
) -> list[Check]:
    """One :class:`Check` per resource of ``names_or_bundles`` under ``dest``, in catalogue
    order (an :class:`InputError` only for unknown names)."""
    dest = Path(expect_type(dest, "dest", str | os.PathLike, "a directory path"))
    checks: list[Check] = []
    for resource in select(names_or_bundles):
        path = dest / resource.local_path
        if not path.is_file():
            checks.append(Check(resource, path, "missing"))
            continue
        size = path.stat().st_size
        found = sha256_of(path)
        status = "ok" if (size == resource.size and found == resource.sha256) else "differs"
        checks.append(Check(resource, path, status, found, size))
    return checks
