"""The built book as a reader's browser shows it: every page opened in headless Chromium.

The built ``_build/html`` is served by ``http.server`` on 127.0.0.1 (a random free port) and
each of its pages is opened once; what the page did (console, requests, images, math, links,
element ids) is recorded and each test below checks one property over all pages, listing
every page that fails it.  A full-page PNG of each page at 1280 px is saved under
``_build/screenshots/`` for a reviewer who does not want to open a browser.

Driver: Playwright's Python package, driving Debian's Chromium (``executable_path``; its own
browser download, ``playwright install``, is never used).  Chosen over Selenium because the
checks need request interception (every request leaving the loopback is recorded and
aborted), request-failure and console events, and full-page screenshots, which Playwright
gives as plain Python callbacks; Selenium would need the system chromedriver to match the
browser's version and performance-log parsing through the DevTools protocol for the same,
and raw DevTools would mean writing a websocket client.  Playwright ships as a wheel on the
package index (its driver included), so ``pip`` is all a fresh clone needs besides Chromium.

Run with ``pytest -q -m browser tests/book`` after building the book; skipped, with the
reason, when the book is not built, Chromium is missing or playwright is not installed.
"""

import json
import re
from dataclasses import dataclass, field
from pathlib import Path
from urllib.parse import unquote, urlsplit

import pytest

pytestmark = pytest.mark.browser

SCREENSHOTS = Path(__file__).resolve().parents[2] / "_build" / "screenshots"
PAGE_TIMEOUT_MS = 60_000
LOOPBACK = "127.0.0.1"

# Everything the checks need from a loaded page, read in one evaluation.  Images are made
# eager and awaited, and MathJax's typesetting promise is awaited, before anything is read.
READ_PAGE_JS = r"""
async () => {
  const images = [...document.images];
  for (const img of images) { img.loading = "eager"; }
  await Promise.all(images.map(img => img.complete ? null : new Promise(done => {
    img.addEventListener("load", done); img.addEventListener("error", done);
  })));
  if (window.MathJax && MathJax.startup && MathJax.startup.promise) {
    await MathJax.startup.promise;
  }
  const body = document.body.cloneNode(true);
  body.querySelectorAll("pre, code, script, style, textarea, mjx-container, .highlight")
      .forEach(node => node.remove());
  // the page's own content: the article, or the search page's main column
  const article = document.querySelector("article") || document.querySelector("#main-content")
      || document.body;
  return {
    mathjax_version: (window.MathJax && MathJax.version) || null,
    math: [...document.querySelectorAll(".math")].map(node => ({
      rendered: node.querySelector("mjx-container") !== null,
      text: node.textContent.slice(0, 80),
    })),
    math_errors: [...document.querySelectorAll("[data-mjx-error]")]
        .map(node => node.getAttribute("data-mjx-error")),
    prose_text: body.textContent,
    images: images.map(img => {
      const figure = img.closest("figure");
      const caption = figure && figure.querySelector("figcaption");
      return {
        src: img.currentSrc || img.src,
        alt: img.getAttribute("alt"),
        loaded: img.complete && img.naturalWidth > 0,
        in_article: article.contains(img),
        caption: caption ? caption.textContent.trim() : null,
      };
    }),
    links: [...document.querySelectorAll("a[href]")].map(a => a.href),
    ids: [...document.querySelectorAll("[id]")].map(node => node.id)
        .concat([...document.querySelectorAll("a[name]")].map(a => a.name)),
    // search fields and search-field buttons a reader sees outside the article (the search
    // page's own form is its content)
    search_boxes: [...document.querySelectorAll(
        "input[type=search], input[name=q], .search-button-field")]
        .filter(node => node.getClientRects().length > 0 && !article.contains(node))
        .map(node => node.closest("[class]").parentElement.className || node.tagName),
    page_overflow: document.documentElement.scrollWidth - document.documentElement.clientWidth,
    tables: [...article.querySelectorAll("table")].map(table => {
      const cells = [...table.querySelectorAll("td, th")].filter(cell => cell.textContent.trim());
      const style = cell => getComputedStyle(cell);
      return {
        text: table.textContent.trim().replace(/\s+/g, " ").slice(0, 60),
        cells: cells.length,
        min_padding_px: Math.min(...cells.map(cell =>
            Math.min(parseFloat(style(cell).paddingLeft), parseFloat(style(cell).paddingRight)))),
        ruled_cells: cells.filter(cell => parseFloat(style(cell).borderBottomWidth) > 0).length,
        tabular_numbers: style(table).fontVariantNumeric.includes("tabular-nums"),
      };
    }),
    output_text: [...article.querySelectorAll(".cell_output")].map(node => node.textContent),
  };
}
"""


@dataclass
class PageVisit:
    name: str  # path of the page under _build/html, e.g. "notebooks/05_awrf_texfair.html"
    console_errors: list[str] = field(default_factory=list)
    failed_requests: list[str] = field(default_factory=list)
    outside_requests: list[str] = field(default_factory=list)
    content: dict = field(default_factory=dict)

    @property
    def is_chapter(self) -> bool:
        return self.name.startswith("notebooks/")


def book_pages(book_html: Path) -> list[str]:
    """Every HTML page of the book: all ``*.html`` outside Sphinx's ``_``-prefixed folders."""
    return sorted(
        path.relative_to(book_html).as_posix()
        for path in book_html.rglob("*.html")
        if not any(part.startswith("_") for part in path.relative_to(book_html).parts[:-1])
    )


def _is_loopback(url: str) -> bool:
    parts = urlsplit(url)
    if parts.scheme in ("data", "blob", "about"):
        return True
    return parts.scheme in ("http", "https", "ws", "wss") and parts.hostname == LOOPBACK


@pytest.fixture(scope="module")
def visits(chromium_context, book_server, book_html) -> dict[str, PageVisit]:
    """Open every page once, in order; record what happened and save its screenshot."""
    SCREENSHOTS.mkdir(parents=True, exist_ok=True)
    current: list[PageVisit] = []

    def guard(route):
        url = route.request.url
        if _is_loopback(url):
            route.continue_()
        else:
            current[-1].outside_requests.append(url)
            route.abort()

    chromium_context.route("**/*", guard)
    results = {}
    for name in book_pages(book_html):
        visit = PageVisit(name)
        current.append(visit)
        page = chromium_context.new_page()
        page.on(
            "console",
            lambda message, visit=visit: (
                visit.console_errors.append(f"{message.text} ({message.location.get('url')})")
                if message.type == "error"
                else None
            ),
        )
        page.on("pageerror", lambda error, visit=visit: visit.console_errors.append(str(error)))
        page.on(
            "requestfailed",
            lambda request, visit=visit: (
                None
                if request.url in visit.outside_requests
                else visit.failed_requests.append(f"{request.url}: {request.failure}")
            ),
        )
        page.on(
            "response",
            lambda response, visit=visit: (
                visit.failed_requests.append(f"{response.url}: HTTP {response.status}")
                if response.status >= 400
                else None
            ),
        )
        page.goto(book_server + name, wait_until="load", timeout=PAGE_TIMEOUT_MS)
        page.wait_for_load_state("networkidle", timeout=PAGE_TIMEOUT_MS)
        visit.content = page.evaluate(READ_PAGE_JS)
        page.screenshot(
            path=SCREENSHOTS / (name.removesuffix(".html").replace("/", "__") + ".png"),
            full_page=True,
        )
        page.close()
        results[name] = visit
    chromium_context.unroute("**/*", guard)
    return results


def _report(failures: dict[str, list[str]]) -> str:
    return "\n".join(
        f"{page}:\n    " + "\n    ".join(items) for page, items in failures.items() if items
    )


def test_every_page_of_the_table_of_contents_is_built(visits):
    chapters = [name for name in visits if name.startswith("notebooks/")]
    assert "index.html" in visits and "search.html" in visits
    assert len(chapters) >= 13, f"only {len(chapters)} chapter pages: {chapters}"


def test_no_console_errors(visits):
    failures = {name: visit.console_errors for name, visit in visits.items()}
    assert not any(failures.values()), "console errors:\n" + _report(failures)


def test_no_failed_requests(visits):
    failures = {name: visit.failed_requests for name, visit in visits.items()}
    assert not any(failures.values()), "failed requests:\n" + _report(failures)


def test_no_request_leaves_the_loopback(visits):
    failures = {name: visit.outside_requests for name, visit in visits.items()}
    assert not any(failures.values()), "requests to other hosts (aborted):\n" + _report(failures)


def test_math_is_rendered_and_no_raw_tex_is_left(visits):
    raw_tex = re.compile(r"\\\[|\\\(|\$\$|\\begin\{")
    failures = {}
    for name, visit in visits.items():
        content = visit.content
        problems = [
            f"not typeset: {item['text']!r}" for item in content["math"] if not item["rendered"]
        ]
        problems += [f"TeX error: {message}" for message in content["math_errors"]]
        if content["math"] and content["mathjax_version"] is None:
            problems.append("MathJax did not load")
        for match in raw_tex.finditer(content["prose_text"]):
            start = max(match.start() - 40, 0)
            problems.append(
                f"raw TeX in the text: {content['prose_text'][start : match.end() + 40]!r}"
            )
        failures[name] = problems
    assert not any(failures.values()), "math:\n" + _report(failures)
    pages_with_math = [name for name, visit in visits.items() if visit.content["math"]]
    assert len(pages_with_math) >= 10, f"math found on only {pages_with_math}"


def test_every_image_loads(visits):
    failures = {
        name: [image["src"] for image in visit.content["images"] if not image["loaded"]]
        for name, visit in visits.items()
    }
    assert not any(failures.values()), "images that did not load:\n" + _report(failures)
    figures = sum(len(visit.content["images"]) for visit in visits.values() if visit.is_chapter)
    assert figures >= 10, f"only {figures} images in the chapters"


def _alt_problem(alt: str | None) -> str | None:
    if not alt or not alt.strip():
        return "no alt text"
    # a path is one word ("../_images/a.png"); a description may hold a slash ("he/she")
    one_word = re.fullmatch(r"\S+", alt.strip())
    if one_word and re.search(r"[/\\]|\.(png|jpe?g|svg|gif|webp)$", alt.strip(), re.IGNORECASE):
        return f"alt text is a file path: {alt!r}"
    return None


def test_every_chapter_image_has_alt_text_and_a_caption(visits):
    failures = {}
    for name, visit in visits.items():
        if not visit.is_chapter:
            continue
        problems = []
        for image in visit.content["images"]:
            if not image["in_article"]:
                continue
            alt_problem = _alt_problem(image["alt"])
            if alt_problem:
                problems.append(f"{image['src']}: {alt_problem}")
            if not image["caption"]:
                problems.append(f"{image['src']}: no caption")
        failures[name] = problems
    assert not any(failures.values()), "figures:\n" + _report(failures)


def test_every_internal_link_and_anchor_resolves(visits, book_server, book_html):
    ids = {name: set(visit.content["ids"]) for name, visit in visits.items()}
    failures = {}
    for name, visit in visits.items():
        problems = []
        for url in sorted(set(visit.content["links"])):
            if not url.startswith(book_server):
                continue
            parts = urlsplit(url)
            target = unquote(parts.path.removeprefix(urlsplit(book_server).path))
            if target == "" or target.endswith("/"):
                target += "index.html"
            if not (book_html / target).is_file():
                problems.append(f"{url}: no file {target}")
                continue
            anchor = unquote(parts.fragment)
            if anchor and target.endswith(".html") and anchor not in ids.get(target, set()):
                problems.append(f"{url}: {target} has no element with id {anchor!r}")
        failures[name] = problems
    assert not any(failures.values()), "broken links:\n" + _report(failures)


def test_one_search_box_per_page(visits):
    failures = {
        name: [
            f"{len(visit.content['search_boxes'])} search boxes, in {visit.content['search_boxes']}"
        ]
        for name, visit in visits.items()
        if len(visit.content["search_boxes"]) != 1
    }
    assert not failures, "pages without exactly one search box:\n" + _report(failures)


def test_search_page_finds_texfair(chromium_context, book_server):
    page = chromium_context.new_page()
    try:
        page.goto(book_server + "search.html?q=TExFAIR", timeout=PAGE_TIMEOUT_MS)
        results = page.locator("#search-results ul.search li")
        results.first.wait_for(timeout=PAGE_TIMEOUT_MS)
        hits = results.all_inner_texts()
    finally:
        page.close()
    assert any("TExFAIR" in hit for hit in hits), hits
    assert any("AWRF" in hit and "TExFAIR" in hit for hit in hits), hits


def test_search_works_from_disk(chromium_context, book_html):
    """Opened as a file (``file://``), the search page lists results without an error."""
    page = chromium_context.new_page()
    errors = []
    page.on("pageerror", lambda error: errors.append(str(error)))
    page.on("console", lambda m: errors.append(m.text) if m.type == "error" else None)
    try:
        page.goto((book_html / "search.html").as_uri() + "?q=TExFAIR", timeout=PAGE_TIMEOUT_MS)
        results = page.locator("#search-results ul.search li")
        results.first.wait_for(timeout=PAGE_TIMEOUT_MS)
        page.wait_for_timeout(1000)  # the per-result fetches, where they happen, fail by now
        hits = results.all_inner_texts()
    finally:
        page.close()
    assert any("TExFAIR" in hit for hit in hits), hits
    assert not errors, errors


def test_each_chapter_offers_its_notebook_and_source_for_download(visits, book_server, book_html):
    failures = {}
    for name, visit in visits.items():
        if not visit.is_chapter:
            continue
        stem = name.removesuffix(".html")
        expected = {
            ".ipynb": f"{book_server}_sources/{stem}.ipynb",
            ".md": f"{book_server}_sources/{stem}.md",
        }
        problems = [
            f"no link to {url}" for url in expected.values() if url not in visit.content["links"]
        ]
        notebook_file = book_html / "_sources" / f"{stem}.ipynb"
        if notebook_file.is_file():
            notebook = json.loads(notebook_file.read_text(encoding="utf-8"))
            outputs = [
                output
                for cell in notebook["cells"]
                if cell["cell_type"] == "code"
                for output in cell.get("outputs", [])
            ]
            if not outputs:
                problems.append(f"{notebook_file.name} has no outputs: not the executed notebook")
        else:
            problems.append(f"no file {notebook_file}")
        failures[name] = problems
    assert not any(failures.values()), "downloads:\n" + _report(failures)


def test_math_renders_over_file_urls(visits, chromium_context, book_html):
    """Opened from disk (``file://``, no server): MathJax still loads and typesets."""
    name = next(
        name for name, visit in visits.items() if visit.is_chapter and visit.content["math"]
    )
    page = chromium_context.new_page()
    errors = []
    page.on("pageerror", lambda error: errors.append(str(error)))
    try:
        page.goto((book_html / name).as_uri(), wait_until="load", timeout=PAGE_TIMEOUT_MS)
        content = page.evaluate(READ_PAGE_JS)
    finally:
        page.close()
    assert content["mathjax_version"] is not None, f"MathJax did not load in {name}"
    unrendered = [item["text"] for item in content["math"] if not item["rendered"]]
    assert content["math"] and not unrendered, unrendered
    assert not content["math_errors"] and not errors, (content["math_errors"], errors)


def test_no_page_scrolls_sideways(visits):
    """Wide tables and equations scroll inside their own boxes; the page stays 1280 px wide."""
    failures = {
        name: [f"page is {visit.content['page_overflow']} px wider than the window"]
        for name, visit in visits.items()
        if visit.content["page_overflow"] > 0
    }
    assert not failures, _report(failures)


def test_tables_are_padded_ruled_and_use_tabular_numbers(visits):
    failures = {}
    for name, visit in visits.items():
        problems = []
        for table in visit.content["tables"]:
            if not table["cells"]:
                continue
            if table["min_padding_px"] < 4:
                problems.append(f"{table['text']!r}: cells padded {table['min_padding_px']} px")
            if table["ruled_cells"] < table["cells"] / 2:
                problems.append(
                    f"{table['text']!r}: {table['ruled_cells']} of {table['cells']} ruled"
                )
            if not table["tabular_numbers"]:
                problems.append(f"{table['text']!r}: proportional digits")
        failures[name] = problems
    assert not any(failures.values()), "tables:\n" + _report(failures)
    assert sum(len(visit.content["tables"]) for visit in visits.values()) >= 10


def test_no_traceback_or_warning_in_any_output(visits):
    warning = re.compile(r"Traceback \(most recent call last\)|\b[A-Z]\w*Warning: ")
    failures = {
        name: [
            f"{match.group(0)!r} in {text[max(match.start() - 60, 0) : match.end() + 60]!r}"
            for text in visit.content["output_text"]
            for match in warning.finditer(text)
        ]
        for name, visit in visits.items()
    }
    assert not any(failures.values()), "outputs:\n" + _report(failures)


CITATION = re.compile(r'<span class="bibtex-citation"[^>]*>(.*?)</span>', re.S)
LINK = re.compile(r"<a [^>]*>(.*?)</a>", re.S)


def _text(html: str) -> str:
    return re.sub(r"\s+", " ", re.sub(r"<[^>]+>", "", html)).strip()


def test_citations_are_author_year_in_round_brackets_and_linked_whole(book_html):
    """``{cite:t}`` reads "Ziems et al. (2024)" and ``{cite:p}`` "(Ziems et al., 2024)", each
    reference one link that holds the authors and the year."""
    failures, seen = {}, 0
    for name in book_pages(book_html):
        problems = []
        for citation in CITATION.findall((book_html / name).read_text(encoding="utf-8")):
            seen += 1
            text = _text(citation)
            if "[" in text or "]" in text:
                problems.append(f"square brackets: {text}")
            for link in LINK.findall(citation):
                if not re.search(r"\D\b(1[89]|20)\d\d[a-z]?\b", " " + _text(link)) or not re.match(
                    r"[^\d(]", _text(link)
                ):
                    problems.append(f"a link that is not author and year: {_text(link)!r}")
        failures[name] = problems
    assert seen > 50, f"only {seen} citations found"
    assert not any(failures.values()), "citations:\n" + _report(failures)


# What a reader on a desktop or a phone, in light or dark mode, would see go wrong.
LAYOUT_JS = r"""
async () => {
  if (window.MathJax && MathJax.startup && MathJax.startup.promise) {
    await MathJax.startup.promise;
  }
  const article = document.querySelector("article") || document.body;
  const right = article.getBoundingClientRect().right;
  const problems = [];
  const overflow = document.documentElement.scrollWidth - document.documentElement.clientWidth;
  if (overflow > 0) problems.push(`the page is ${overflow} px wider than the window`);
  for (const table of article.querySelectorAll("table")) {
    const caption = table.querySelector("caption");
    if (!caption || !caption.textContent.trim()) {
      problems.push("a table without a caption: "
          + table.textContent.trim().replace(/\s+/g, " ").slice(0, 50));
    }
  }
  for (const formula of article.querySelectorAll("span.math mjx-container")) {
    const span = formula.parentElement;
    const box = formula.getBoundingClientRect();
    const clippedBySpan = getComputedStyle(span).overflowX !== "visible"
        && span.scrollWidth > span.clientWidth + 1;
    let scroller = span.parentElement;
    while (scroller && scroller !== article && getComputedStyle(scroller).overflowX === "visible") {
      scroller = scroller.parentElement;
    }
    const inScrollBox = scroller && scroller !== article;  // e.g. a table that scrolls sideways
    if (clippedBySpan || (!inScrollBox && box.right > right + 1)) {
      problems.push("inline math cut off or past the column: "
          + (formula.getAttribute("aria-label") || span.textContent).slice(0, 50));
    }
  }
  if (document.documentElement.dataset.theme === "dark") {
    for (const img of article.querySelectorAll("img")) {
      if (getComputedStyle(img).filter !== "none") {
        problems.push(`a dimmed figure: ${img.alt.slice(0, 40)}`);
      }
    }
  }
  return problems;
}
"""

LAYOUTS = {"phone, light": (375, "light"), "desktop, dark": (1280, "dark")}


def _each_page(page, book_html, url, read) -> dict[str, list[str]]:
    """``read(name)`` after opening every page at ``url(name)`` in ``page``, plus the page's
    console errors: ``{page: problems}``."""
    errors: list[str] = []
    page.on("pageerror", lambda error: errors.append(str(error)))
    page.on("console", lambda m: errors.append(m.text) if m.type == "error" else None)
    found = {}
    try:
        for name in book_pages(book_html):
            errors.clear()
            page.goto(url(name), wait_until="load", timeout=PAGE_TIMEOUT_MS)
            if name == "index.html":  # it redirects to the first page: wait for that one
                page.wait_for_load_state("networkidle", timeout=PAGE_TIMEOUT_MS)
            # (``read`` awaits the images and MathJax; waiting for the network to be idle on
            # every page timed out once on a heavy chapter while two builds shared the cores)
            found[name] = read(name) + [f"console: {e}" for e in errors]
    finally:
        page.close()
    return found


@pytest.mark.parametrize("layout", list(LAYOUTS))
def test_pages_read_well_on_a_phone_and_in_dark_mode(
    chromium_context, book_server, book_html, layout
):
    """Every page at 375 px in light mode and at 1280 px in dark mode (the visits above are the
    1280 px light ones): no sideways scrolling, every table captioned, no inline formula cut
    off or sticking out of the column, figures undimmed in dark mode, no console error."""
    width, theme = LAYOUTS[layout]
    page = chromium_context.new_page()
    page.set_viewport_size({"width": width, "height": 900})
    page.add_init_script(
        f"localStorage.setItem('theme', '{theme}'); localStorage.setItem('mode', '{theme}');"
    )

    def read(name: str) -> list[str]:
        assert page.evaluate("document.documentElement.dataset.theme") == theme, name
        return page.evaluate(LAYOUT_JS)

    failures = _each_page(page, book_html, lambda name: book_server + name, read)
    assert not any(failures.values()), f"{layout}:\n" + _report(failures)


def test_every_page_opens_from_disk_without_errors(chromium_context, book_html):
    """Opened as files (``file://``, no server), no page logs an error."""
    page = chromium_context.new_page()
    failures = _each_page(page, book_html, lambda name: (book_html / name).as_uri(), lambda _: [])
    assert not any(failures.values()), "from disk:\n" + _report(failures)
