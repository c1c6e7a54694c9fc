"""How many sign flips ``rankbias compare`` needs: the testbed's family of 120 comparisons
(ARaB-TC, NFaiRR, AWRF and TExFAIR at 5, 10 and 20; the ten pairs of its five systems), each
compared under 20 seeds with at most so many sign flips per comparison (compare draws 10,000
first, and more only where the decision is not settled); a row whose ``significant`` is not
the same under every seed is counted as flipping.  Also prints what a call costs (CPU seconds
of ``compare`` in this process; the scores are computed once, by ``rankbias score``).

``python bench/compare_seeds.py [FOLDER] [--permutations 10000,1000000] [--seeds 20]``
"""

from __future__ import annotations

import argparse
import time
from pathlib import Path

import numpy as np
import pandas as pd

ROOT = Path(__file__).resolve().parents[1]
MEASURES = ("arab_tc", "nfairr", "awrf", "texfair")
CUTOFFS = (5, 10, 20)


def family_scores(folder: Path, out: Path) -> pd.DataFrame:
    """``rankbias score`` of the folder's runs on the four measures, as a user runs it."""
    import subprocess
    import sys

    from rankbias.analysis.compare import read_scores

    runs = [arg for path in sorted((folder / "runs").glob("*.run")) for arg in ("--run", path)]
    command = [Path(sys.executable).with_name("rankbias"), "score", "--collection",
               folder / "collection.tsv", "--terms", "default", *runs, "--metrics",
               ",".join(MEASURES), "--cutoffs", ",".join(map(str, CUTOFFS)), "--out", out,
               "--quiet"]  # fmt: skip
    subprocess.run([str(part) for part in command], check=True)
    return read_scores(out)


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("folder", nargs="?", default=ROOT / "data" / "build" / "wikisample")
    parser.add_argument("--permutations", default="10000,1000000")
    parser.add_argument("--seeds", type=int, default=20)
    args = parser.parse_args(argv)
    from rankbias.analysis.compare import compare

    out = ROOT / "bench" / "out" / "compare_seeds_scores.csv"
    out.parent.mkdir(parents=True, exist_ok=True)
    scores = family_scores(Path(args.folder), out)
    print(f"{scores['run'].nunique()} runs, {scores['qid'].nunique()} queries")
    for permutations in (int(p) for p in args.permutations.split(",")):
        significant, seconds = [], []
        for seed in range(args.seeds):
            start = time.process_time()
            table = compare(scores, permutations=permutations, bootstrap=1, seed=seed)
            seconds.append(time.process_time() - start)
            significant.append(table["significant"].to_numpy())
        flags = np.array(significant)
        flipping = int(np.sum(flags.any(axis=0) & ~flags.all(axis=0)))
        tight = table.loc[flags.any(axis=0) & ~flags.all(axis=0), ["metric", "cutoff", "run_a",
                                                                   "run_b", "p_value"]]  # fmt: skip
        print(
            f"permutations {permutations:>9,}: {len(table)} comparisons, {flipping} change "
            f"'significant' across {args.seeds} seeds, {int(flags[0].sum())} significant under "
            f"seed 0, {int((~table['settled']).sum())} unsettled; compare {np.median(seconds):.2f} "
            "CPU s per call (median)"
        )
        if len(tight):
            print(tight.to_string(index=False))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
