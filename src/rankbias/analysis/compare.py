"""Is one system's bias really different from another's?  Paired comparisons over queries.

From the tidy table ``run, qid, metric, cutoff, value`` that :func:`rankbias.scoring.score_runs`
(and ``rankbias score``) gives, every measure and cut-off is compared for every pair of runs
(or every run against a baseline) over the queries both runs define: the means, the mean
paired difference ``diff = mean_a − mean_b`` with a paired bootstrap percentile interval, the
paired standardised mean difference :math:`d_z = \\bar d / s_d` as effect size, a two-sided
p-value — a paired randomisation (sign-flip) test by default, exact over all :math:`2^n` sign
patterns for :math:`n \\le 16` queries, else Monte Carlo with :math:`(1 + b) / (1 + B)`;
scipy's paired t-test or Wilcoxon signed-rank test on request — with the Monte Carlo standard
error of each p-value (``p_mc_se``), p-values adjusted over the whole family of comparisons in
the call (Holm by default; statsmodels' ``multipletests``), ``significant`` when the adjusted
p-value is at most ``alpha``.

``fairer`` names a run only when the difference is significant, read from the measure's
declared direction; otherwise it says ``no detectable difference`` (and ``why`` gives the
interval), or ``undetermined`` when the two runs' rates of undefined queries differ by more
than ``undefined_margin`` (0.05 by default): the means then compare different queries, as when
a ranking that pushes every protected document out of the top 10 makes rND undefined there.
Signed measures (RaB, ARaB: the sign says which group is favoured) are compared on their value
with no verdict, or on |value| (``absolute=True``; ``scale`` says which), where lower is
fairer.  Each comparison draws its resamples and sign flips from its own streams, seeded by
``seed`` and the comparison's measure, cut-off and runs.  A family in which no Monte Carlo
comparison could reach ``alpha`` after the correction (:math:`m / (1 + B) > \\alpha` under
Holm) is refused with the number of permutations it needs.  Queries whose value is undefined
(NaN) in either run, and queries one run lacks, are counted (``n_undefined``, per run
``n_undefined_a`` and ``n_undefined_b``, ``n_only_a``, ``n_only_b``), never dropped silently;
system-level rows (``qid`` ``all``) have no per-query values and are listed in
``attrs["system_level"]``.
"""

from __future__ import annotations

import csv
import hashlib
import math
import re
from collections.abc import Sequence

import numpy as np
import pandas as pd

from rankbias.errors import (
    InputError,
    expect_choice,
    expect_count,
    expect_fraction,
    expect_items,
    expect_seed,
    expect_type,
    located,
)
from rankbias.inputs import Source, open_lines, source_name
from rankbias.metrics.measures import HigherIs, higher_is, split_cutoff
from rankbias.metrics.validation import as_array, check_values

__all__ = [
    "COLUMNS",
    "TESTS",
    "CORRECTIONS",
    "compare",
    "sign_flip_test",
    "check_scores",
    "read_scores",
]

COLUMNS = ("run", "qid", "metric", "cutoff", "value")
TESTS = ("randomisation", "t", "wilcoxon")
CORRECTIONS = {"holm": "holm", "bonferroni": "bonferroni", "bh": "fdr_bh", "none": None}
EXACT_MAX_QUERIES = 16  # an exact sign-flip test enumerates at most 2**16 sign patterns
SYSTEM_LEVEL_QID = "all"
PERMUTATIONS = 1_000_000  # at most, per comparison; FIRST_ROUND first, more where undecided
FIRST_ROUND = 10_000
DECISION_RISK = 1e-6  # a Monte Carlo decision is settled when its interval at 1 − this agrees
UNDEFINED_MARGIN = (
    0.05  # undefined rates further apart than this: the means compare different queries
)
SPREAD_TOLERANCE = 1e-9  # differences whose spread is this small relative to them are constant
NO_DIFFERENCE = "no detectable difference"
UNDETERMINED = "undetermined"
OUTPUT = tuple(
    "metric cutoff run_a run_b n_queries mean_a mean_b diff ci_low ci_high effect_size p_value "
    "p_mc_se p_adjusted significant settled fairer why test scale n_undefined n_undefined_a "
    "n_undefined_b n_only_a n_only_b".split()
)


def check_scores(scores: pd.DataFrame, what: str = "scores") -> pd.DataFrame:
    """``scores`` with the columns of :data:`COLUMNS` checked and typed (``cutoff`` a nullable
    integer, ``value`` a float, NaN allowed); a :class:`ValueError` naming what is wrong."""
    expect_type(scores, what, pd.DataFrame, "a DataFrame")
    missing = [c for c in COLUMNS if c not in scores.columns]
    if missing:
        raise ValueError(
            f"{what}: no column(s) {', '.join(missing)}; expected {','.join(COLUMNS)} "
            "(the table rankbias score writes)"
        )
    frame = scores[list(COLUMNS)].copy()
    for column in ("run", "qid", "metric"):
        bad = frame[column].isna() | (frame[column].astype(str).str.strip() == "")
        if bad.any():
            raise ValueError(f"{what}: row {int(np.argmax(bad))}: empty {column}; expected an id")
        frame[column] = frame[column].astype(str)
    try:
        frame["cutoff"] = pd.to_numeric(frame["cutoff"]).astype("Int64")
        frame["value"] = pd.to_numeric(frame["value"]).astype(float)
    except (TypeError, ValueError) as exc:
        raise ValueError(f"{what}: {exc}; expected integer cutoffs and numeric values") from None
    if np.isinf(frame["value"]).any():
        row = int(np.argmax(np.isinf(frame["value"].to_numpy())))
        raise ValueError(f"{what}: row {row}: value {frame['value'].iloc[row]}; expected finite")
    duplicated = frame.duplicated(["run", "qid", "metric", "cutoff"])
    if duplicated.any():
        run, qid, metric, cutoff = frame.loc[
            duplicated.idxmax(), ["run", "qid", "metric", "cutoff"]
        ]
        raise ValueError(
            f"{what}: run {run}, query {qid}, {metric}@{cutoff} is given twice; expected once"
        )
    return frame


_DECIMAL = re.compile(r"[+-]?([0-9]+\.?[0-9]*|\.[0-9]+)([eE][+-]?[0-9]+)?", re.ASCII)


def _field(text: str, name: str, number: int, column: str):
    text = text.strip()
    if column == "cutoff":
        if text and not re.fullmatch(r"[0-9]+", text):  # [0-9]: ASCII digits only
            raise located(name, number, f"cutoff {text!r}: expected a whole number or nothing")
        return int(text) if text else None
    if text in ("", "nan", "NaN"):
        return math.nan  # how rankbias score writes an undefined value
    if not _DECIMAL.fullmatch(text) or not math.isfinite(float(text)):
        raise located(name, number, f"value {text!r}: expected a finite decimal number or nothing")
    return float(text)


def read_scores(source: Source) -> pd.DataFrame:
    """A scores table as ``rankbias score`` writes it (CSV, TSV, optionally gzip, or Parquet),
    checked: a header with the columns of :data:`COLUMNS` (others are ignored), a whole
    cut-off, a finite value or nothing (NaN), each (run, query, measure, cut-off) once; bad
    input names the file and line."""
    name = source_name(source)
    if name.lower().endswith(".parquet"):
        try:
            frame = pd.read_parquet(source)
        except (OSError, ValueError) as exc:
            raise located(name, None, f"not readable as Parquet ({exc})") from None
        try:
            return check_scores(frame, what=name)
        except ValueError as exc:
            raise InputError(str(exc)) from None
    lines = open_lines(source, "scores table")
    first = next(lines, None)
    if first is None:
        raise located(name, None, f"the file is empty; expected a header {','.join(COLUMNS)}")
    separator = "\t" if "\t" in first[1] else ","
    header = [c.strip() for c in next(csv.reader([first[1]], delimiter=separator))]
    if any(c not in header for c in COLUMNS):
        expected = f"{','.join(COLUMNS)} (the table rankbias score writes)"
        raise located(name, 1, f"header {first[1][:120]!r}: expected the columns {expected}")
    where = [header.index(c) for c in COLUMNS]
    rows, seen = [], {}
    for number, text in lines:
        fields = next(csv.reader([text], delimiter=separator))
        if len(fields) != len(header):
            raise located(name, number, f"found {len(fields)} field(s); expected {len(header)}")
        run, qid, metric, cutoff, value = (fields[i] for i in where)
        if not (run.strip() and qid.strip() and metric.strip()):
            raise located(name, number, "empty run, qid or metric; expected an id")
        key = (run, qid, metric, _field(cutoff, name, number, "cutoff"))
        if key in seen:
            again = f"{run}, {qid}, {metric}@{key[3]} is already given on line {seen[key]}"
            raise located(name, number, f"{again}; expected each once")
        seen[key] = number
        rows.append((*key, _field(value, name, number, "value")))
    if not rows:
        raise located(name, None, "the table has a header but no data line")
    frame = pd.DataFrame(rows, columns=list(COLUMNS))
    frame["cutoff"] = frame["cutoff"].astype("Int64")
    return frame


class _SignFlips:
    """The Monte Carlo sign-flip test of one comparison, drawn in rounds from its own stream:
    one random byte signs eight differences, so each draw's statistic is one look-up per group
    of eight in a table of their 256 signed sums (8x fewer operations and 64x fewer random
    bits than one sign at a time)."""

    def __init__(self, d: np.ndarray, rng: np.random.Generator, tolerance: float) -> None:
        padded = np.zeros(-(-len(d) // 8) * 8)
        padded[: len(d)] = d
        signs = 1.0 - 2.0 * ((np.arange(256)[:, None] >> np.arange(8)) & 1)  # bit j: minus
        self.table = padded.reshape(-1, 8) @ signs.T  # (groups, 256)
        self.threshold = len(d) * (abs(d.mean()) - tolerance)
        self.rng, self.hits, self.draws = rng, 0, 0

    def draw(self, count: int) -> None:
        done = 0
        while done < count:  # in blocks of at most ~16 MB of random bytes
            block = min(count - done, max(1, 16_000_000 // len(self.table)))
            draws = self.rng.integers(0, 256, (len(self.table), block), dtype=np.uint8)
            sums = np.zeros(block)
            for group, row in zip(draws, self.table, strict=True):
                sums += row[group]
            self.hits += int(np.count_nonzero(np.abs(sums) >= self.threshold))
            done += block
        self.draws += count

    @property
    def p(self) -> float:
        return (1 + self.hits) / (1 + self.draws)

    def bounds(self) -> tuple[float, float]:
        """A Clopper–Pearson interval of the exact p-value at level 1 − :data:`DECISION_RISK`."""
        from scipy.stats import beta

        tail = DECISION_RISK / 2
        low, high = 0.0, 1.0
        if self.hits:
            low = float(beta.ppf(tail, self.hits, self.draws - self.hits + 1))
        if self.hits < self.draws:
            high = float(beta.ppf(1 - tail, self.hits + 1, self.draws - self.hits))
        return low, high


def _tolerance(d: np.ndarray) -> float:
    return 1e-12 * max(1.0, float(np.abs(d).max(initial=0.0)))


def sign_flip_test(
    differences: np.ndarray, permutations: int = FIRST_ROUND, rng: np.random.Generator | None = None
) -> tuple[float, bool]:
    """Two-sided p-value of a paired randomisation test of mean difference 0, and whether it
    is exact: over all :math:`2^n` sign patterns when :math:`n \\le 16`, else over
    ``permutations`` random ones as :math:`(1 + b) / (1 + B)`."""
    d = as_array(differences, "differences", 1)
    check_values(d, "differences")
    if len(d) == 0:
        raise ValueError("differences: expected at least one paired difference, found none")
    if len(d) <= EXACT_MAX_QUERIES:
        patterns = (np.arange(2 ** len(d))[:, None] >> np.arange(len(d))) & 1
        means = np.abs(((1 - 2 * patterns) * d).mean(axis=1))
        return float(np.mean(means >= abs(d.mean()) - _tolerance(d))), True
    flips = _SignFlips(d, np.random.default_rng(0) if rng is None else rng, _tolerance(d))
    flips.draw(permutations)
    return flips.p, False


def smallest_p_value(n_queries: int, test: str = "randomisation",
                     permutations: int = PERMUTATIONS) -> float:  # fmt: skip
    """The smallest p-value ``test`` can give over ``n_queries`` paired differences: two
    sign patterns of :math:`2^n` for the exact randomisation test, :math:`1 / (1 + B)` for the
    Monte Carlo one; 0 for the t and Wilcoxon tests (no floor is checked)."""
    if test != "randomisation":
        return 0.0
    if n_queries <= EXACT_MAX_QUERIES:
        return 2.0 / 2**n_queries
    return 1.0 / (1 + permutations)


def _streams(seed, metric, cutoff, run_a, run_b) -> tuple[np.random.Generator, ...]:
    """Two generators (bootstrap, sign flips) of this comparison's own: seeded by ``seed`` and
    the comparison's measure, cut-off and runs, so that a row's numbers do not depend on which
    other rows the call computes, nor the p-value on the number of bootstrap resamples."""
    key = "\0".join(str(part) for part in (metric, cutoff, run_a, run_b))
    words = np.frombuffer(hashlib.sha256(key.encode()).digest()[:16], dtype="<u4").tolist()
    entropy = [*np.atleast_1d(np.asarray(seed, dtype=np.uint64)).tolist(), *words]
    return tuple(np.random.default_rng(s) for s in np.random.SeedSequence(entropy).spawn(2))


def _bootstrap_interval(d, confidence, resamples, rng) -> tuple[float, float]:
    means = np.empty(resamples)
    step = max(1, 2_000_000 // len(d))
    for start in range(0, resamples, step):
        stop = min(resamples, start + step)
        means[start:stop] = d[rng.integers(0, len(d), (stop - start, len(d)))].mean(axis=1)
    tail = (1 - confidence) / 2
    low, high = np.quantile(means, [tail, 1 - tail])
    return float(low), float(high)


def _p_value(test, a, b, permutations, rng):
    """The p-value and the test's name, or for the Monte Carlo test its first round of draws
    (a :class:`_SignFlips`) to be drawn further by :func:`_settle`."""
    d = a - b
    if not np.any(d):
        return 1.0, {"randomisation": "randomisation (exact)", "t": "paired t"}.get(test, test)
    if test == "randomisation":
        if len(d) <= EXACT_MAX_QUERIES:
            return sign_flip_test(d)[0], "randomisation (exact)"
        flips = _SignFlips(d, rng, _tolerance(d))
        flips.draw(min(FIRST_ROUND, permutations))
        return flips, ""
    from scipy import stats

    if test == "t":
        return float(stats.ttest_rel(a, b).pvalue), "paired t"
    return float(stats.wilcoxon(a, b).pvalue), "wilcoxon"


def _adjusted(p: np.ndarray, correction: str) -> np.ndarray:
    if CORRECTIONS[correction] is None or not len(p):
        return p
    from statsmodels.stats.multitest import multipletests

    return multipletests(p, method=CORRECTIONS[correction])[1]


def _settle(tests: list, correction: str, alpha: float, permutations: int) -> np.ndarray:
    """Draw more sign flips, doubling, for each Monte Carlo comparison whose decision is not
    settled — significant under the lower ends of the p-values' intervals and not under their
    upper ends (every correction here is monotone in each p-value) — until none is or each has
    drawn ``permutations``; returns which comparisons are settled."""
    while True:
        low = np.array([t.bounds()[0] if isinstance(t, _SignFlips) else t for t in tests])
        high = np.array([t.bounds()[1] if isinstance(t, _SignFlips) else t for t in tests])
        settled = (_adjusted(low, correction) <= alpha) == (_adjusted(high, correction) <= alpha)
        more = [t for t, done in zip(tests, settled, strict=True) if not done
                and t.draws < permutations]  # fmt: skip
        if not more:
            return settled
        for flips in more:
            flips.draw(min(flips.draws, permutations - flips.draws))


def _effect_size(d: np.ndarray) -> float:
    """:math:`d_z = \\bar d / s_d`; NaN when the differences are constant up to rounding
    (their spread at most :data:`SPREAD_TOLERANCE` times their largest magnitude)."""
    spread = d.std(ddof=1)
    if spread <= SPREAD_TOLERANCE * float(np.abs(d).max(initial=0.0)):
        return math.nan
    return float(d.mean() / spread)


def _verdict(row: dict, direction, undefined_margin: float) -> tuple[str, str]:
    """``fairer`` and ``why`` of a tested row (see :func:`compare`)."""
    run_a, run_b, n = row["run_a"], row["run_b"], row["n_queries"] + row["n_undefined"]
    rate_a, rate_b = (row[f"n_undefined_{s}"] / n if n else 0.0 for s in "ab")
    if abs(rate_a - rate_b) > undefined_margin:
        said = (
            f"undefined on {row['n_undefined_a']} of {n} queries for {run_a} and "
            f"{row['n_undefined_b']} for {run_b} (rates differ by more than "
            f"{undefined_margin:g}): the means compare different queries"
        )
        hint = _undefined_hint(row["metric"])
        return UNDETERMINED, said + (f"; {hint}" if hint else "")
    if direction is None:
        return "", "unknown direction: not a registered measure"
    if direction == HigherIs.NEITHER:
        return "", "not a fairness score"
    if direction == HigherIs.SIGNED and row["scale"] != "|value|":
        return (
            "",
            "signed measure: the sign says which group is favoured; compare |value| to judge",
        )
    if math.isnan(row["p_adjusted"]):
        return "", "too few queries to test" if row["n_queries"] else "no query to compare"
    if not row["settled"]:
        return UNDETERMINED, (
            f"p = {row['p_value']:.3g} ± {row['p_mc_se']:.2g} after {row['test'][15:-1]} is "
            "within Monte Carlo error of its threshold: more permutations would decide"
        )
    if not row["significant"]:
        return NO_DIFFERENCE, (
            f"adjusted p = {row['p_adjusted']:.3g} > alpha; the interval "
            f"[{row['ci_low']:.3g}, {row['ci_high']:.3g}] holds the differences the data allow"
        )
    fairer_is_higher = direction == HigherIs.FAIRER
    higher = run_a if row["diff"] > 0 else run_b
    lower = run_b if row["diff"] > 0 else run_a
    fairer = higher if fairer_is_higher else lower
    said = (
        "higher"
        if fairer_is_higher
        else ("lower |value|" if direction == HigherIs.SIGNED else "lower")
    )
    return fairer, f"{said} is fairer; adjusted p = {row['p_adjusted']:.3g}"


def _undefined_hint(metric: str) -> str:
    from rankbias.metrics.measures import parse_measure

    try:
        return parse_measure(metric).measure.undefined
    except ValueError:
        return ""


def _pairs(runs: list[str], baseline: str | None) -> list[tuple[str, str]]:
    if len(runs) < 2:
        held = f"{len(runs)} run(s) ({', '.join(runs)})"
        raise InputError(f"the scores hold {held}; expected two or more runs to compare")
    if baseline is None:
        return [(a, b) for i, a in enumerate(runs) for b in runs[i + 1 :]]
    if baseline not in runs:
        expected = ", ".join(runs)
        raise InputError(
            f"baseline {baseline!r} is not a run of the scores; expected one of {expected}"
        )
    return [(run, baseline) for run in runs if run != baseline]


def _check_reachable(tested: list[int], test: str, permutations: int, correction: str,
                     alpha: float) -> None:  # fmt: skip
    """Refuse a family in which no Monte Carlo comparison could be significant: Holm and
    Bonferroni multiply the smallest p-value, 1/(1 + B), by the number of comparisons m."""
    monte_carlo = [n for n in tested if n > EXACT_MAX_QUERIES]
    if test != "randomisation" or not monte_carlo:
        return
    m = len(tested) if correction in ("holm", "bonferroni") else 1
    if m / (1 + permutations) <= alpha:
        return
    needed = math.ceil(m / alpha) - 1
    adjusted = (
        f" and {correction.capitalize()} over {m} comparisons makes it {m}/{1 + permutations}"
    )
    raise ValueError(
        f"permutations: with {permutations} sign flips the smallest p-value is 1/{1 + permutations}"
        f"{adjusted if m > 1 else ''} = {m / (1 + permutations):.3g} > alpha {alpha:g}, so no "
        f"comparison over more than {EXACT_MAX_QUERIES} queries could be significant; expected "
        f"at least {needed} permutations"
    )


def compare(
    scores: pd.DataFrame,
    baseline: str | None = None,
    test: str = "randomisation",
    permutations: int = PERMUTATIONS,
    bootstrap: int = 10_000,
    confidence: float = 0.95,
    correction: str = "holm",
    alpha: float = 0.05,
    seed: int = 0,
    metrics: Sequence[str] | None = None,
    absolute: bool = False,
    undefined_margin: float = UNDEFINED_MARGIN,
) -> pd.DataFrame:
    """One row per measure, cut-off and pair of runs (columns :data:`OUTPUT`; see the module
    docstring).  ``baseline`` compares every other run with it (``run_a`` the run, ``run_b``
    the baseline); ``metrics`` keeps only those measures (``nfairr`` at every cut-off,
    ``nfairr@10`` at 10); ``absolute`` compares signed measures (RaB, ARaB) on |value|
    (``scale``), where lower is fairer; by default they are compared on their signed value
    and get no verdict.  A pair whose rates of undefined queries differ by more than
    ``undefined_margin`` is ``undetermined``.  Each row draws from its own random streams,
    seeded by ``seed`` and the row's measure, cut-off and runs: the same call gives the same
    table, and a row is the same whatever else is compared."""
    expect_choice(test, "test", TESTS)
    expect_choice(correction, "correction", tuple(CORRECTIONS))
    expect_count(permutations, "permutations")
    expect_count(bootstrap, "bootstrap")
    expect_seed(seed)
    if isinstance(seed, np.random.Generator):
        raise TypeError("seed: expected a whole number ≥ 0, found a Generator")
    if isinstance(metrics, str):
        raise TypeError(f"metrics: expected a list of measure names, found {metrics!r}")
    expect_fraction(confidence, "confidence")
    expect_fraction(alpha, "alpha")
    expect_type(absolute, "absolute", bool, "True or False")
    expect_type(undefined_margin, "undefined_margin", (int, float), "a number from 0 to 1")
    if not 0 <= undefined_margin <= 1 or isinstance(undefined_margin, bool):
        raise ValueError(
            f"undefined_margin: expected a number from 0 to 1, found {undefined_margin!r}"
        )
    frame = check_scores(scores)
    if metrics is not None:  # a name at all its cut-offs, name@k at one, or 'P@10' as a name
        if not (metrics := expect_items(metrics, "metrics", "a list of measure names")):
            raise ValueError("metrics: expected at least one measure name, found none")
        wanted = [(m, *split_cutoff(m)) for m in metrics]
        keep = {m: ((frame["metric"] == name) & (frame["cutoff"] == k if k else True))
                | (frame["metric"] == m) for m, name, k in wanted}  # fmt: skip
        if unknown := sorted(m for m, rows in keep.items() if not rows.any()):
            known = ", ".join(sorted(set(frame["metric"])))
            raise InputError(
                f"metric(s) {', '.join(unknown)} not in the scores; expected {known} (name@k: "
                "at the cut-off k only)"
            )
        frame = frame[np.logical_or.reduce(list(keep.values()))]
    system = frame["qid"] == SYSTEM_LEVEL_QID
    system_level = sorted(set(frame.loc[system, "metric"]))
    frame = frame[~system]
    pairs = _pairs(list(dict.fromkeys(frame["run"])), baseline)
    rows, values = [], []
    for (metric, cutoff), group in frame.groupby(["metric", "cutoff"], sort=False, dropna=False):
        wide = group.pivot(index="qid", columns="run", values="value")
        present = group.groupby("run")["qid"].agg(set)
        direction = higher_is(metric)
        scale = "|value|" if absolute and direction == HigherIs.SIGNED else "value"
        for run_a, run_b in pairs:
            has_a, has_b = present.get(run_a, set()), present.get(run_b, set())
            both = wide.reindex(index=sorted(has_a & has_b), columns=[run_a, run_b])
            defined = both.dropna()
            a, b = (defined[run].to_numpy(dtype=float) for run in (run_a, run_b))
            if scale == "|value|":
                a, b = np.abs(a), np.abs(b)
            row = dict.fromkeys(OUTPUT, np.nan)
            row.update(metric=metric, cutoff=cutoff, run_a=run_a, run_b=run_b, n_queries=len(a))
            row.update(n_undefined=len(both) - len(a), n_only_a=len(has_a - has_b))
            row.update(n_only_b=len(has_b - has_a), fairer="", test="", scale=scale, why="")
            row.update(settled=True)
            row.update(n_undefined_a=int(both[run_a].isna().sum()))
            row.update(n_undefined_b=int(both[run_b].isna().sum()))
            if len(a):
                row.update(mean_a=a.mean(), mean_b=b.mean(), diff=(a - b).mean())
            rows.append(row)
            values.append((a, b, direction))
    _check_reachable([r["n_queries"] for r in rows if r["n_queries"] >= 2], test, permutations,
                     correction, alpha)  # fmt: skip
    tests = {}
    for i, (row, (a, b, _)) in enumerate(zip(rows, values, strict=True)):
        if len(a) >= 2:
            resampling, flipping = _streams(
                seed, row["metric"], row["cutoff"], row["run_a"], row["run_b"]
            )
            d = a - b
            row["ci_low"], row["ci_high"] = _bootstrap_interval(
                d, confidence, bootstrap, resampling
            )
            row["effect_size"] = _effect_size(d)
            tests[i], row["test"] = _p_value(test, a, b, permutations, flipping)
    settled = _settle(list(tests.values()), correction, alpha, permutations)
    for (i, result), done in zip(tests.items(), settled, strict=True):
        row = rows[i]
        row.update(p_value=result, p_mc_se=0.0, settled=bool(done))
        if isinstance(result, _SignFlips):
            p = result.p
            row.update(p_value=p, p_mc_se=math.sqrt(p * (1 - p) / result.draws))
            row["test"] = f"randomisation ({result.draws:,} sign flips)"
    table = pd.DataFrame(rows, columns=list(OUTPUT))
    tested = table["p_value"].notna()
    table["p_adjusted"] = table["p_value"]
    table.loc[tested, "p_adjusted"] = _adjusted(table.loc[tested, "p_value"].to_numpy(), correction)
    # as multipletests' reject, where the Monte Carlo decision is settled
    table["significant"] = ((table["p_adjusted"] <= alpha) & table["settled"]).astype(bool)
    verdicts = [
        _verdict(row, direction, undefined_margin)
        for row, (_, _, direction) in zip(table.to_dict("records"), values, strict=True)
    ]
    table["fairer"] = [fairer for fairer, _ in verdicts]
    table["why"] = [why for _, why in verdicts]
    table["cutoff"] = table["cutoff"].astype("Int64")
    for column in ("n_undefined_a", "n_undefined_b"):
        table[column] = table[column].astype(int)
    table.attrs = dict(system_level=system_level, test=test, correction=correction, alpha=alpha)
    table.attrs.update(confidence=confidence, seed=seed, permutations=permutations)
    table.attrs.update(absolute=absolute, undefined_margin=undefined_margin)
    return table


def forest_plot(table: pd.DataFrame, path=None):
    """A forest plot of :func:`compare`'s table: one row per measure, cut-off and pair (named
    by the run alone when all share one baseline), the mean difference (filled where
    significant after adjustment) with its interval; saved to
    ``path`` (``.png`` or ``.svg``) when given.  Returns the figure."""
    import matplotlib

    if path is not None:
        matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    from rankbias.metrics.measures import display_name

    rows = table.dropna(subset=["diff"]).iloc[::-1]
    baseline = rows["run_b"].iloc[0] if rows["run_b"].nunique() == 1 else None
    labels = [
        f"{display_name(f'{r.metric}@{r.cutoff}' if pd.notna(r.cutoff) else r.metric)}: "
        + (r.run_a if baseline is not None else f"{r.run_a} − {r.run_b}")
        for r in rows.itertuples()
    ]
    figure, axis = plt.subplots(figsize=(6.5, 0.9 + 0.3 * len(rows)))
    y = np.arange(len(rows))
    axis.errorbar(
        rows["diff"],
        y,
        xerr=[rows["diff"] - rows["ci_low"], rows["ci_high"] - rows["diff"]],
        fmt="none",
        ecolor="0.35",
        capsize=2,
    )
    significant = rows["significant"].to_numpy(dtype=bool)
    for shown, face, label in [
        (significant, "C0", "significant (adjusted)"),
        (~significant, "white", "not significant"),
    ]:
        axis.scatter(
            rows["diff"][shown], y[shown], facecolor=face, edgecolor="C0", zorder=3, label=label
        )
    axis.axvline(0, color="0.5", lw=0.8, ls=":")
    axis.xaxis.set_major_locator(plt.MaxNLocator(5))
    axis.set_yticks(y, labels)
    confidence = table.attrs.get("confidence", 0.95)
    against = f"from {baseline}" if baseline is not None else "(run a − run b)"
    axis.set_xlabel(f"mean paired difference {against}, {confidence:.0%} interval")
    axis.legend(loc="lower left", bbox_to_anchor=(0, 1), ncol=2, frameon=False)
    figure.tight_layout()
    if path is not None:
        figure.savefig(path, dpi=150, bbox_inches="tight")
        plt.close(figure)
    return figure
