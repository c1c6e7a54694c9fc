"""The figure of ``book/at_scale.md``: time and peak memory of ``rankbias stats`` against the
collection's size, local engine and Dask engine, from the JSON that ``bench/cluster_bench.py``
writes.

Run: ``python bench/cluster_plot.py [RESULTS.json] [FIGURE.svg]`` (defaults: the results kept
in ``bench/results/cluster_bench.json`` and ``book/_static/cluster_bench.svg``).
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
RESULTS = HERE / "results" / "cluster_bench.json"
FIGURE = HERE.parent / "book" / "_static" / "cluster_bench.svg"


def plot(results: dict, target: Path) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    plt.rcParams["svg.hashsalt"] = "rankbias"  # the same file for the same figures
    rows = results["rows"]
    millions = [row["docs"] / 1e6 for row in rows]
    mib = 2**20
    figure, (times, memory) = plt.subplots(1, 2, figsize=(9, 3.6), layout="constrained")
    engines = (("local", "o", "local, 2 threads"), ("dask", "s", "Dask, 2 workers"))
    for engine, marker, name in engines:
        times.plot(millions, [r[f"{engine}_seconds"] for r in rows], f"{marker}-", label=name)
        cpu = [r[f"{engine}_cpu"] for r in rows]
        colour = times.lines[-1].get_color()
        times.plot(millions, cpu, f"{marker}:", color=colour, label=f"{name}: CPU seconds")
    times.set(xlabel="passages (millions)", ylabel="seconds (median)", title="Whole command")
    memory.plot(
        millions, [r["local_peak_bytes"] / mib for r in rows], "o-", label="local engine (process)"
    )
    memory.plot(
        millions, [r["dask_driver_peak_bytes"] / mib for r in rows], "s-", label="Dask driver"
    )
    for index in range(len(rows[0]["worker_peak_bytes"])):
        peaks = [r["worker_peak_bytes"][index] / mib for r in rows]
        memory.plot(millions, peaks, "^--", label=f"Dask worker {index + 1}")
    memory.set(xlabel="passages (millions)", ylabel="peak RSS (MiB)", title="Peak memory")
    for axes in (times, memory):
        axes.set_xticks(millions)
        axes.set_ylim(bottom=0)
        axes.grid(alpha=0.3)
        axes.legend(fontsize="small")
    figure.savefig(target, metadata={"Date": None})
    plt.close(figure)


def main(argv: list[str]) -> int:
    results = Path(argv[0]) if argv else RESULTS
    target = Path(argv[1]) if len(argv) > 1 else FIGURE
    plot(json.loads(results.read_text()), target)
    print(f"{results} -> {target}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
