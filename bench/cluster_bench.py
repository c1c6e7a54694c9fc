"""``rankbias stats --engine dask`` on a cluster started by hand, against the local engine.

Run: ``python bench/cluster_bench.py [--docs 1000000,3000000,10000000] [--repeats 3]
[--json FILE]`` (or through ``bench/run.py``).

For every size, on the generated collection of ``bench/scale_bench.py`` (the same seeded
passages of about 85 words, created once in ``bench/out/``, ignored by git: about 612 bytes
per passage, 6.1 GB and two minutes to generate for 10 million; the whole default run takes
about ten minutes on two cores):

1. ``dask scheduler`` is started once on the loopback; for every Dask run, two fresh
   ``dask worker ADDRESS --nworkers 1 --nthreads 1`` processes join it (as a user starts
   them, with their nannies; the command's time begins once both have joined), so each
   worker's peak memory (``VmHWM`` of ``/proc/PID/status``, exact) is that of one run.
2. Times, in the same run and on the same file (read once untimed first, so that both engines
   find it in the page cache), ``rankbias stats --workers 2`` (local engine) and ``rankbias
   stats --engine dask --scheduler ADDRESS``, each a fresh process (interpreter start, imports
   and connecting included), ``--repeats`` times, each engine first in every other repeat;
   prints the median wall time, the ratio Dask/local, the CPU seconds (the command's, plus for
   Dask the workers' and the scheduler's) and each worker's peak resident memory, and checks
   that the two engines wrote the same table (Parquet, read back and compared).
3. Before the first size's runs, times the Dask command once on workers whose kernel cache
   (``RANKBIAS_CACHE_DIR``) is an empty directory, so that each compiles the scanner in its
   first task (a user's first run), then on fresh workers with that cache filled.
4. Writes the figures as JSON (``--json``, default ``bench/out/cluster_bench.json``), which
   ``bench/cluster_plot.py`` draws.

The machine's load average is printed before and after: other processes slow every figure.
"""

from __future__ import annotations

import argparse
import datetime
import json
import os
import socket
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

import scale_bench  # noqa: E402

OUT = scale_bench.OUT
DASK = str(Path(sys.executable).parent / "dask")
DEFAULT_DOCS = "1000000,3000000,10000000"


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


def proc_status(pid: int, field: str) -> int:
    """A ``kB`` field of ``/proc/PID/status`` (e.g. ``VmHWM``), in bytes."""
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith(field + ":"):
            return int(line.split()[1]) * 1024
    raise KeyError(field)


def cpu_seconds(pid: int) -> float:
    """User and system CPU time of one process so far."""
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def start(command: list[str], log: Path, env: dict | None = None) -> subprocess.Popen:
    """A process in this benchmark's session: with the kernel's autogroup scheduling a new
    session would be given a share of the cores of its own, more than the local engine has
    on a busy machine."""
    with open(log, "ab") as handle:
        return subprocess.Popen(
            command,
            stdout=subprocess.DEVNULL,
            stderr=handle,
            cwd=OUT,
            env={**os.environ, **(env or {})},
        )


def stop(processes: list[subprocess.Popen]) -> None:
    for process in processes:
        if process.poll() is None:
            process.terminate()
    for process in processes:
        try:
            process.wait(timeout=30)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait(timeout=10)


class Workers:
    """Two fresh ``dask worker`` processes of one thread each, joined to ``address``, with
    ``env`` added to their environment."""

    def __init__(self, address: str, env: dict | None = None) -> None:
        self.address = address
        self.env = env

    def __enter__(self) -> Workers:
        import distributed

        command = [
            DASK,
            "worker",
            self.address,
            "--nworkers",
            "1",
            "--nthreads",
            "1",
            "--no-dashboard",
            "--local-directory",
            str(OUT / "dask-worker-space"),
        ]
        log = OUT / "cluster_bench_workers.log"
        self.processes = [start(command, log, self.env) for _ in range(2)]
        with distributed.Client(self.address, timeout=60) as probe:
            probe.wait_for_workers(2, timeout=120)
            deadline = time.monotonic() + 120
            while len(probe.nthreads()) != 2:  # workers of an earlier run still leaving
                if time.monotonic() > deadline:
                    raise RuntimeError(f"expected 2 workers, found {probe.nthreads()}")
                time.sleep(0.1)
            self.pids = sorted(probe.run(os.getpid).values())
        self.cpu = [cpu_seconds(pid) for pid in self.pids]
        return self

    def report(self) -> dict:
        """Each worker's peak resident memory and CPU seconds since it joined."""
        return {
            "worker_peak_bytes": [proc_status(pid, "VmHWM") for pid in self.pids],
            "worker_cpu": [cpu_seconds(p) - c for p, c in zip(self.pids, self.cpu, strict=True)],
        }

    def __exit__(self, *exc) -> None:
        stop(self.processes)


def same_table(a: Path, b: Path) -> bool:
    import pyarrow.parquet as pq

    return pq.read_table(a).equals(pq.read_table(b))


def collection_file(n_docs: int, words: int, terms: list[str]) -> Path:
    """The generated collection of ``n_docs`` passages (made once), read once untimed, so
    that neither engine pays for bringing it into the page cache."""
    collection = OUT / f"scale_{n_docs}x{words}_{len(terms)}terms_seed{scale_bench.SEED}.tsv"
    if not collection.exists():
        started = time.perf_counter()
        scale_bench.generate_collection(collection, n_docs, words, terms)
        print(f"generated {collection.name} in {time.perf_counter() - started:.1f} s")
    subprocess.run(["cat", str(collection)], stdout=subprocess.DEVNULL, check=True)
    return collection


def dask_run(address: str, scheduler_pid: int, command: list[str], env=None) -> dict:
    """``command`` timed on two fresh workers; their peak memory and CPU seconds, and the
    scheduler's CPU seconds, added to the report."""
    with Workers(address, env) as workers:
        scheduler_cpu = cpu_seconds(scheduler_pid)
        report = scale_bench.measure(command)
        report.update(workers.report())
        report["scheduler_cpu"] = cpu_seconds(scheduler_pid) - scheduler_cpu
    return report


def first_runs(address: str, scheduler_pid: int, command: list[str]) -> dict:
    """The Dask command on workers whose kernel cache (``RANKBIAS_CACHE_DIR``) is empty, so
    that each compiles the scanner in its first task, then on fresh workers with that cache."""
    with tempfile.TemporaryDirectory(prefix="rankbias-cache-") as cache:
        env = {"RANKBIAS_CACHE_DIR": cache}
        cold = dask_run(address, scheduler_pid, command, env)
        warm = dask_run(address, scheduler_pid, command, env)
    return {"empty_cache_seconds": cold["seconds"], "cached_seconds": warm["seconds"]}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--docs", default=DEFAULT_DOCS, help="comma-separated sizes")
    parser.add_argument("--words", type=int, default=85)
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--json", type=Path, default=OUT / "cluster_bench.json")
    args = parser.parse_args(argv or [])
    sizes = [int(n) for n in args.docs.split(",")]
    OUT.mkdir(parents=True, exist_ok=True)
    terms_path, terms_label = scale_bench.word_list()
    terms = [
        line.split(",")[0].strip().lower()
        for line in terms_path.read_text().splitlines()
        if line.strip()
    ]
    port = free_port()
    address = f"tcp://127.0.0.1:{port}"
    scheduler = start(
        [DASK, "scheduler", "--host", "127.0.0.1", "--port", str(port), "--no-dashboard"],
        OUT / "cluster_bench_scheduler.log",
    )
    load_before = os.getloadavg()
    print(
        f"word list: {terms_label}; {os.cpu_count()} cores; scheduler {address}; "
        f"load average {load_before[0]:.2f} before the first command"
    )
    local_out, dask_out = OUT / "cluster_local.parquet", OUT / "cluster_dask.parquet"
    results, first = [], {}
    try:
        for n_docs in sizes:
            collection = collection_file(n_docs, args.words, terms)
            common = ["stats", "--collection", str(collection), "--terms", str(terms_path)]
            local_command = scale_bench.rankbias(*common, "--workers", "2", "--out", str(local_out))
            dask_command = scale_bench.rankbias(
                *common, "--engine", "dask", "--scheduler", address, "--out", str(dask_out)
            )
            if not first:
                first = first_runs(address, scheduler.pid, dask_command)
                print(
                    f"first run at {n_docs:,} passages, workers with an empty kernel cache: "
                    f"{first['empty_cache_seconds']:.2f} s; fresh workers with that cache: "
                    f"{first['cached_seconds']:.2f} s"
                )
                print(HEADER)
            local, dask = [], []
            for repeat in range(args.repeats):  # each engine first in every other repeat
                for engine in ("local", "dask") if repeat % 2 == 0 else ("dask", "local"):
                    if engine == "local":
                        local.append(scale_bench.measure(local_command))
                    else:
                        dask.append(dask_run(address, scheduler.pid, dask_command))
            row = summarise(n_docs, collection.stat().st_size, local, dask)
            row["identical"] = same_table(local_out, dask_out)
            results.append(row)
            print_row(row)
    finally:
        stop([scheduler])
    load_after = os.getloadavg()
    print(f"load average {load_after[0]:.2f} after the last command")
    figures = {
        "command": "python bench/cluster_bench.py --docs " + ",".join(map(str, sizes)),
        "date": datetime.date.today().isoformat(),
        "cores": os.cpu_count(),
        "load_average_before": load_before[0],
        "load_average_after": load_after[0],
        "repeats": args.repeats,
        "first_run": {"docs": sizes[0], **first},
        "rows": results,
    }
    args.json.write_text(json.dumps(figures, indent=1) + "\n")
    return 0 if all(row["identical"] for row in results) else 1


def summarise(n_docs: int, size: int, local: list[dict], dask: list[dict]) -> dict:
    """Medians over the repeats (each worker's peak: the largest over the repeats)."""

    def median(reports, key):
        return statistics.median(r[key] for r in reports)

    dask_cpu = [r["cpu"] + sum(r["worker_cpu"]) + r["scheduler_cpu"] for r in dask]
    return {
        "docs": n_docs,
        "bytes": size,
        "local_seconds": median(local, "seconds"),
        "dask_seconds": median(dask, "seconds"),
        "local_seconds_all": [r["seconds"] for r in local],
        "dask_seconds_all": [r["seconds"] for r in dask],
        "ratio": median(dask, "seconds") / median(local, "seconds"),
        "local_cpu": median(local, "cpu"),
        "dask_cpu": statistics.median(dask_cpu),
        "dask_driver_cpu": median(dask, "cpu"),
        "local_peak_bytes": max(r["largest_kb"] * 1024 for r in local),
        "dask_driver_peak_bytes": max(r["largest_kb"] * 1024 for r in dask),
        "dask_workers_cpu": statistics.median(sum(r["worker_cpu"]) for r in dask),
        "dask_scheduler_cpu": median(dask, "scheduler_cpu"),
        "worker_peak_bytes": [
            max(peaks) for peaks in zip(*(r["worker_peak_bytes"] for r in dask), strict=True)
        ],
    }


HEADER = (
    f"{'passages':>11} {'GB':>5} {'local s':>8} {'Dask s':>8} {'ratio':>6} {'local CPU s':>11} "
    f"{'Dask CPU s':>10} {'local MiB':>9} {'driver MiB':>10} {'worker MiB':>11} same table"
)


def print_row(row: dict) -> None:
    """One line of the table under :data:`HEADER` (CPU: all processes; MiB: peak RSS)."""
    mib = 2**20
    workers = "/".join(f"{peak / mib:.0f}" for peak in row["worker_peak_bytes"])
    print(
        f"{row['docs']:>11,} {row['bytes'] / 1e9:5.2f} {row['local_seconds']:8.2f} "
        f"{row['dask_seconds']:8.2f} {row['ratio']:6.2f} {row['local_cpu']:11.1f} "
        f"{row['dask_cpu']:10.1f} {row['local_peak_bytes'] / mib:9.0f} "
        f"{row['dask_driver_peak_bytes'] / mib:10.0f} {workers:>11} {row['identical']}",
        flush=True,
    )


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
