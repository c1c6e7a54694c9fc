"""Fixtures for the tests of the built book: where it is, a loopback server, a browser.

The browser tests (marker ``browser``) need the HTML book built by
``jupyter-book build . --builder html`` and a Chromium; ``make test`` runs them after the
strict build with ``pytest -q -m browser tests/book``, and the default ``pytest -q``
deselects them (``addopts`` in ``pyproject.toml``).  Each missing piece skips them with the
reason: no built book, no Chromium (``RANKBIAS_CHROMIUM`` or ``chromium`` on the ``PATH``),
no ``playwright`` package.
"""

import functools
import http.server
import os
import shutil
import threading
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
BOOK_HTML = REPO / "_build" / "html"

# As the issue asks for a browser run as root on a shared machine: no sandbox (root), no GPU,
# nothing Chromium would fetch by itself (updates, sync, QUIC probes, first-run pages).
CHROMIUM_FLAGS = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
]


def find_chromium() -> str | None:
    configured = os.environ.get("RANKBIAS_CHROMIUM")
    if configured:
        return configured if Path(configured).is_file() else None
    for name in ("chromium", "chromium-browser"):
        found = shutil.which(name)
        if found:
            return found
    return None


@pytest.fixture(scope="session")
def book_html() -> Path:
    if not (BOOK_HTML / "index.html").is_file():
        pytest.skip(f"no built book at {BOOK_HTML}: run `make book` (or `make test`) first")
    return BOOK_HTML


class _QuietHandler(http.server.SimpleHTTPRequestHandler):
    def log_message(self, format, *args):  # noqa: A002 - the base class's name
        pass


@pytest.fixture(scope="session")
def book_server(book_html):
    """The built book served by http.server on 127.0.0.1, a free port; yields its base URL."""
    handler = functools.partial(_QuietHandler, directory=str(book_html))
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}/"
    finally:
        server.shutdown()
        server.server_close()
        thread.join(timeout=10)


@pytest.fixture(scope="session")
def chromium_context(tmp_path_factory):
    """A headless Chromium with a fresh profile, driven by Playwright; viewport 1280 x 900."""
    executable = find_chromium()
    if executable is None:
        pytest.skip(
            "browser tests skipped: no Chromium found (set RANKBIAS_CHROMIUM or install "
            "Debian's `chromium` package; .ci/run does)"
        )
    sync_api = pytest.importorskip(
        "playwright.sync_api", reason="browser tests skipped: the playwright package is missing"
    )
    profile = tmp_path_factory.mktemp("chromium-profile")
    with sync_api.sync_playwright() as playwright:
        # launch_persistent_context takes the profile folder (Chromium's --user-data-dir);
        # Playwright adds its own --headless, so the flag list's is harmless and kept explicit.
        context = playwright.chromium.launch_persistent_context(
            str(profile),
            executable_path=executable,
            headless=True,
            args=CHROMIUM_FLAGS,
            viewport={"width": 1280, "height": 900},
            service_workers="block",
        )
        try:
            yield context
        finally:
            context.close()
