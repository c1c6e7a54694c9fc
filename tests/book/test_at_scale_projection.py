"""The cluster measurements and the ClueWeb22-B / MS MARCO v2 projection of book/at_scale.md,
redone from the benchmark's results and the inputs the page states.

Inputs: ``bench/results/cluster_bench.json`` (written by ``bench/cluster_bench.py``, drawn by
``bench/cluster_plot.py``); about 200 million ClueWeb22-B pages, about 43% of them English
(the Lemur Project's description of ClueWeb22); 138,364,198 MS MARCO v2 passages and
11,959,635 documents (``ir_datasets``); 85 words per passage and an assumed 1,000 words per
page; the released-style loop's 6.1 CPU seconds for 300,000 passages.  Each figure is
rounded as the page prints it and looked up in the page's text.
"""

import json
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
PAGE = REPO / "book" / "at_scale.md"
RESULTS = REPO / "bench" / "results" / "cluster_bench.json"

PAGES = 200e6
ENGLISH = 0.43 * PAGES
MSMARCO_V2_PASSAGES = 138_364_198
MSMARCO_V2_DOCUMENTS = 11_959_635
WORDS_PER_PASSAGE = 85
WORDS_PER_PAGE = 1_000
LOOP_CPU_SECONDS, LOOP_PASSAGES = 6.1, 300_000
MIB = 2**20


@pytest.fixture(scope="module")
def page() -> str:
    return PAGE.read_text(encoding="utf-8")


@pytest.fixture(scope="module")
def section(page) -> str:
    return page[page.index("## What ClueWeb22-B and MS MARCO v2 would cost, on paper") :]


@pytest.fixture(scope="module")
def results() -> dict:
    return json.loads(RESULTS.read_text())


def passages(pages: float, words_per_page: float = WORDS_PER_PAGE) -> float:
    return pages * words_per_page / WORDS_PER_PASSAGE


def figures(results: dict) -> dict:
    """What the page derives from the largest measured collection, as the page prints it."""
    rows = results["rows"]
    big = rows[-1]
    cpu, wall, docs = big["dask_workers_cpu"], big["dask_seconds"], big["docs"]
    occupied = 2 * wall
    driver_bytes = (rows[-1]["dask_driver_peak_bytes"] - rows[0]["dask_driver_peak_bytes"]) / (
        rows[-1]["docs"] - rows[0]["docs"]
    )
    driver_us = (rows[-1]["dask_driver_cpu"] - rows[0]["dask_driver_cpu"]) / (
        rows[-1]["docs"] - rows[0]["docs"]
    )
    worker_us = cpu / docs * 1e6
    per_byte = big["bytes"] / cpu  # bytes per worker CPU second
    bytes_per_passage = big["bytes"] / docs
    return {
        "cpu": cpu,
        "wall": wall,
        "occupied": occupied,
        "rate": docs / cpu,
        "driver_bytes": driver_bytes,
        "driver_us": driver_us * 1e6,
        "worker_us": worker_us,
        "per_byte": per_byte,
        "bytes_per_passage": bytes_per_passage,
    }


def test_the_table_is_the_benchmarks(page, results):
    times = page[page.index(":name: tbl-scale-cluster\n") :].split("```")[0]
    memory = page[page.index(":name: tbl-scale-cluster-memory\n") :].split("```")[0]
    for r in results["rows"]:
        line = (
            f"| {r['docs']:,} | {r['bytes'] / 1e9:.2f} | {r['local_seconds']:.2f} | "
            f"{r['dask_seconds']:.2f} | {r['ratio']:.2f} | {r['local_cpu']:.1f} | "
            f"{r['dask_cpu']:.1f} |"
        )
        assert line in times
        workers = " | ".join(f"{b / MIB:.0f}" for b in r["worker_peak_bytes"])
        line = (
            f"| {r['docs']:,} | {workers} | {r['dask_driver_peak_bytes'] / MIB:.0f} | "
            f"{r['local_peak_bytes'] / MIB:.0f} |"
        )
        assert line in memory
        assert r["identical"]
    load = f"load average {results['load_average_before']:.1f}"
    assert load in page.replace("\n", " ")
    first = results["first_run"]
    assert f"took {first['empty_cache_seconds']:.2f} s, against" in page.replace("\n", " ")
    assert f"{first['cached_seconds']:.2f} s on two fresh workers" in page.replace("\n", " ")


def test_the_page_counts_pages_not_passages(section):
    assert "200 million web *pages*" in section
    assert "about 43% (about 86 million) are in\nEnglish" in section
    assert round(ENGLISH / 1e6) == 86
    assert "138,364,198 passages" in section and "11,959,635 web pages" in section


def test_passages_per_page_and_in_total(section):
    assert round(WORDS_PER_PAGE / WORDS_PER_PASSAGE) == 12
    assert "a page makes about 12 passages" in section
    assert f"{passages(PAGES) / 1e9:.2f}" == "2.35"
    assert f"{passages(ENGLISH) / 1e9:.2f}" == "1.01"
    assert f"{passages(MSMARCO_V2_DOCUMENTS) / 1e9:.2f}" == "0.14"
    assert "2.35 \\times 10^9" in section and "1.01 \\times 10^9" in section
    assert "$0.14 \\times 10^9$ for the 11,959,635 pages" in section


def hours(n_passages: float, seconds_per_passage: float) -> str:
    return f"{n_passages * seconds_per_passage / 3600:.2g}"


def test_worker_hours_and_driver_memory(section, results):
    f = figures(results)
    text = " ".join(section.split())
    assert f"used {f['cpu']:.1f} CPU seconds together" in text
    assert f"about {round(f['rate'], -2):,.0f} passages per worker CPU second" in text
    assert f"(2 workers × {f['wall']:.1f} s) for {f['occupied']:.1f} worker-seconds" in text
    assert f"{f['occupied'] / f['cpu']:.1f} times their CPU time" in text
    cpu_each, occupied_each = f["cpu"] / 1e7, f["occupied"] / 1e7
    assert results["rows"][-1]["docs"] == 10_000_000
    for n in (passages(PAGES), passages(ENGLISH), MSMARCO_V2_PASSAGES):
        gigabytes = n * f["driver_bytes"] / 1e9
        memory = f"{gigabytes:.0f}" if gigabytes >= 10 else f"{gigabytes:.1f}"
        row = f"| {hours(n, cpu_each)} | {hours(n, occupied_each)} | {memory} GB |"
        assert row in section
    assert f"(about {f['driver_bytes']:.0f} bytes per passage)" in text


def test_per_byte_and_the_limits(section, results):
    f = figures(results)
    text = " ".join(section.split())
    mbs = f["per_byte"] / 1e6
    assert f"is {mbs:.0f} MB per worker CPU second" in text
    assert f"{1e12 / f['per_byte'] / 3600:.2f} worker-hours per TB of text" in text
    assert f"At {f['bytes_per_passage']:.0f} bytes per 85-word passage" in text
    terabytes = [passages(p) * f["bytes_per_passage"] / 1e12 for p in (PAGES, ENGLISH)]
    assert f"about {terabytes[0]:.2f} TB of text for ClueWeb22-B ({terabytes[1]:.2f} TB" in text
    assert f"100 × {mbs:.0f} MB/s ≈ {100 * mbs / 1e3:.1f} GB/s" in text
    assert f"grew by {f['driver_us']:.2f} µs per passage" in text
    assert f"against {f['worker_us']:.2f} µs for the workers" in text
    assert f"about {round(f['worker_us'] / f['driver_us'])} workers keep it busy" in text
    minutes = passages(PAGES) * f["driver_us"] / 1e6 / 60
    assert f"take it about {minutes:.0f} minutes" in text


def test_released_loop(section):
    loop = passages(PAGES) * LOOP_CPU_SECONDS / LOOP_PASSAGES
    assert round(loop / 3600) == 13
    assert "2.35 billion passages is about 13 core-hours" in " ".join(section.split())
