"""Sweep every closed form of every registered metric against high-precision references.

Run from the repository root (``--quick`` for a small sample)::

    PYTHONPATH=src python benchmarks/sweep_accuracy.py [--quick] [--cases N] [--seed S]

For seeded random inputs (n log-uniform in 1..1e6; candidate counts equal, spread, log-uniform up to
1e12, wildly separated such as (1, 1e12), all ones, ones and twos; for the median, up to 60 tasks
with counts up to 200, and two counts, at most 60 and 1e4 to 1e12, at n = 58..1001; no weights,
equal, random, log-spread and a few huge or tiny weights; Hits@k with k in 1, 3, 10 and beyond every
count) it compares ``expected_value``, ``variance`` and ``moments`` of every metric in the registry
with a closed form, and the values of the derived metrics (and their bases) on drawn ranks, with the
references of ``sweep_reference.py`` (mpmath, independent of rankstats); then the unweighted cases
and the weighted ones, a dozen at a time, as the groups of one grouped ``evaluate`` (whose
vectorised null moments, rankstats.evaluation.grouped and rankstats.null.reciprocal_groups, the
per-case checks do not reach), each group's null moments against its case's references. It prints
the worst error per metric and quantity, then the peak memory (tracemalloc) of every closed form at
C = 1e15 and at n = 1e6 with C up to 1e9, against the same inputs with small C.

Error measure: ``|got - ref| / max(|ref|, floor)``. The floor is 0 for null moments: a zero
reference (the variance where every task has one candidate, the count's variance, the derived
metrics' fixed moments) must be met exactly, and anything else is an infinite error. For the
values of derived metrics the floor is the condition number of the transform on rounded inputs:
``|1 - M| / |1 - E|`` for re-indexed metrics (``1 - (1 - M) / (1 - E)``), ``min(|M| + |E|,
|1 - M| + |1 - E|) / sqrt(V)`` for z-scores; no code working from a correctly rounded ``M``
can do better. The adjusted and z-scored means (of the mean rank, the MRR and Hits@k) take
``M - E`` as an exact sum where it cancels (``rankstats.chance``): their floor is that of the
reference itself, ``10**(15 - DPS)`` of the condition number's terms (a difference that is exactly
0, as the adjusted Hits@3 of ten tasks of ten candidates with three hits, comes out of 50-digit
arithmetic as -2.7e-51, which the exact 0 must not miss). Where a
reference is undefined (re-indexed metric with E = 1, z-score with V = 0)
a ``ValueError`` is required. Every call runs with warnings turned into errors, so a
``RuntimeWarning`` counts as a failure, as does any other exception where a value exists.
"""

from __future__ import annotations

import argparse
import dataclasses
import math
import sys
import time
import warnings
from collections.abc import Callable, Iterator, Sequence
from pathlib import Path

import mpmath as mp
import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))

import contextlib

import rankstats
from _timing import peak_memory
from rankstats.errors import NoClosedFormError
from rankstats.metrics.derived import (
    DerivedRankBasedMetric,
    ExpectationNormalizedMetric,
    ReindexedMetric,
    ZMetric,
)
from sweep_reference import (
    CONFIRM_DPS,
    Row,
    TooCostly,
    base_gap,
    base_moments,
    base_value,
    hmr_many_rows,
    median_reference,
)

TOLERANCE = 1e-12
DPS = 50
#: the references' own rounding, relative to the terms a derived value is taken from: a
#: difference that is exactly 0 comes out at about 10**-DPS of them, so the floor trusts a
#: reference to DPS - 15 digits of its terms (an exact 0 meets a reference of 1e-51 at 1e-16)
REFERENCE_ROUNDING = mp.mpf(10) ** (15 - DPS)

#: reference key of each base metric class
BASE_KEYS = {
    "ArithmeticMeanRank": "mr",
    "InverseHarmonicMeanRank": "mrr",
    "HitsAtK": "hits",
    "GeometricMeanRank": "gmr",
    "InverseGeometricMeanRank": "igmr",
    "InverseArithmeticMeanRank": "iamr",
    "HarmonicMeanRank": "hmr",
    "Variance": "variance",
    "Count": "count",
    "MedianRank": "median",
    "InverseMedianRank": "inverse_median",
}
#: metrics whose value is checked on ranks too (the derived ones, their bases and the other means)
VALUE_KEYS = {"mr", "mrr", "hits", "gmr", "igmr", "iamr", "hmr", "variance"}


@dataclasses.dataclass(frozen=True)
class Case:
    """One input: rows (C, w, m), whether weighted, Hits cut-off, and ranks per row."""

    label: str
    rows: tuple[Row, ...]
    weighted: bool
    k: int
    ranks: tuple[tuple[tuple[float, int], ...], ...]

    @property
    def n(self) -> int:
        return sum(m for _, _, m in self.rows)

    def arrays(self) -> tuple[np.ndarray, np.ndarray | None, np.ndarray]:
        counts = [m for _, _, m in self.rows]
        candidates = np.repeat(np.array([c for c, _, _ in self.rows], dtype=np.int64), counts)
        weights = (
            np.repeat(np.array([w for _, w, _ in self.rows]), counts) if self.weighted else None
        )
        ranks = np.concatenate(
            [np.repeat([r for r, _ in row], [m for _, m in row]) for row in self.ranks]
        ).astype(np.float64)
        return candidates, weights, ranks


# --- the inputs ---------------------------------------------------------------------------------

PATTERNS = ("equal", "spread", "loguniform", "separated", "ones", "ones-twos", "near-k", "huge")
WEIGHTINGS = ("none", "equal", "random", "logspread", "outliers")


def _composition(rng: np.random.Generator, n: int, parts: int) -> list[int]:
    """``parts`` positive integers adding up to ``n`` (parts <= n)."""
    if parts == 1:
        return [n]
    cuts = np.sort(rng.choice(np.arange(1, n), size=parts - 1, replace=False))
    return np.diff(np.concatenate([[0], cuts, [n]])).tolist()


def _candidate_counts(rng: np.random.Generator, pattern: str, d: int) -> list[int]:
    if pattern == "equal":
        return [int(10 ** rng.uniform(0, 12))] * d
    if pattern == "spread":
        top = int(10 ** rng.uniform(1, 12))
        return rng.integers(1, top + 1, size=d).tolist()
    if pattern == "loguniform":
        return [int(10 ** rng.uniform(0, 12)) for _ in range(d)]
    if pattern == "separated":
        return [int(rng.choice([1, 2, 10**12, 10**12 - 1, 10**9])) for _ in range(d)]
    if pattern == "ones":
        return [1] * d
    if pattern == "ones-twos":
        return rng.integers(1, 3, size=d).tolist()
    if pattern == "near-k":  # expected values within 1e-3 of the best: mostly C <= k
        return [
            int(rng.integers(1, 11)) if rng.random() < 0.9 else int(rng.integers(11, 30))
            for _ in range(d)
        ]
    return [10**12 - int(rng.integers(0, 1000)) for _ in range(d)]


def _weights(rng: np.random.Generator, weighting: str, d: int) -> list[float]:
    if weighting in ("none", "equal"):
        return [2.5] * d
    if weighting == "random":
        return rng.uniform(0.1, 10.0, size=d).tolist()
    if weighting == "logspread":
        return (10 ** rng.uniform(-6, 6, size=d)).tolist()
    out = rng.uniform(0.5, 2.0, size=d)
    for i in rng.choice(d, size=max(1, d // 4), replace=False):
        out[i] = float(rng.choice([0.0, 1e-12, 1e-9, 1e9, 1e12]))
    if not out.any():
        out[0] = 1.0
    return out.tolist()


def _ranks_of_row(rng: np.random.Generator, c: int, m: int) -> tuple[tuple[float, int], ...]:
    choices = {1.0, float(c), float(rng.integers(1, c + 1))}
    if c > 1:
        choices.add(float(rng.integers(1, c)) + 0.5)  # a realistic (half-integer) rank
    values = sorted(choices)[: min(m, 4)]
    parts = _composition(rng, m, len(values))
    return tuple(zip(values, parts, strict=True))


def make_cases(seed: int, count: int) -> list[Case]:
    """``count`` seeded random cases across every pattern and weighting."""
    rng = np.random.default_rng(seed)
    cases = []
    for index in range(count):
        pattern = PATTERNS[index % len(PATTERNS)]
        weighting = WEIGHTINGS[(index // len(PATTERNS)) % len(WEIGHTINGS)]
        n = round(10 ** rng.uniform(0, 6))
        if rng.random() < 0.15:
            n = int(rng.integers(1, 5))
        d = min(n, int(rng.choice([1, 1, 2, 2, 3, 4, 6, 12, 40])))
        counts = _candidate_counts(rng, pattern, d)
        weights = _weights(rng, weighting, d)
        multiplicities = _composition(rng, n, d)
        merged: dict[tuple[int, float], int] = {}
        for c, w, m in zip(counts, weights, multiplicities, strict=True):
            merged[(c, w)] = merged.get((c, w), 0) + m
        rows = tuple((c, w, m) for (c, w), m in sorted(merged.items()))
        k = int(rng.choice([1, 3, 10, 10**13]))
        ranks = tuple(_ranks_of_row(rng, c, m) for c, _, m in rows)
        label = f"{index}:{pattern}/{weighting}/n={n}/d={len(rows)}/k={k}"
        cases.append(Case(label, rows, weighting != "none", k, ranks))
    return cases


def _case(label: str, rows: Sequence[Row], weighted: bool, k: int, seed: int = 0) -> Case:
    rng = np.random.default_rng(seed)
    ranks = tuple(_ranks_of_row(rng, c, m) for c, _, m in rows)
    return Case(label, tuple(rows), weighted, k, ranks)


def edge_cases() -> list[Case]:
    """Fixed inputs the issue names: C = 1 and 2, (1, 1e12), near-best expected values, ..."""
    big = 10**12
    out = []
    for c in (1, 2, 3, big):
        out.append(_case(f"edge:n=1,C={c}", [(c, 1.0, 1)], False, 10))
    for n in (2, 3, 4, 7, 1000, 10**6):
        out.append(_case(f"edge:all C=2,n={n}", [(2, 1.0, n)], False, 1))
        out.append(_case(f"edge:all C=1,n={n}", [(1, 1.0, n)], False, 1))
    out.append(_case("edge:(1, 1e12)", [(1, 1.0, 1), (big, 1.0, 1)], False, 10))
    out.append(_case("edge:(2, 1e12)", [(2, 1.0, 1), (big, 1.0, 1)], False, 3))
    out.append(_case("edge:(1, 1e12) x 50", [(1, 1.0, 50), (big, 1.0, 50)], False, 10))
    out.append(_case("edge:(1 x 999, 1e12)", [(1, 1.0, 999), (big, 1.0, 1)], False, 10))
    out.append(_case("edge:C=1e12 n=1e6", [(big, 1.0, 10**6)], False, 10))
    out.append(
        _case(
            "edge:C=1e12-1,1e12 n=1e6",
            [(big - 1, 1.0, 5 * 10**5), (big, 1.0, 5 * 10**5)],
            False,
            10,
        )
    )
    out.append(_case("edge:weighted (1, 1e12)", [(1, 1e-12, 1), (big, 1e12, 1)], True, 10))
    out.append(_case("edge:weighted (1e12, 1)", [(1, 1e12, 1), (big, 1e-12, 1)], True, 10))
    for tiny in (1e-3, 1e-6, 1e-9, 1e-12):
        for base in (1, 5, 10):
            rows = [(base, 1.0, 30), (11, tiny, 1), (12, 0.7 * tiny, 1)]
            out.append(_case(f"edge:near-best base={base} tiny={tiny:g}", rows, True, 10))
    for k in (1, 3, 10):  # Hits@k with every count just above / at k
        out.append(_case(f"edge:C=k+1 k={k}", [(k + 1, 1.0, 10**5)], False, k))
        out.append(_case(f"edge:C=k k={k} + one", [(k, 1.0, 10**5), (k + 1, 1.0, 1)], False, k))
    out.append(_case("edge:n=2 (1e12, 1e12)", [(big, 1.0, 2)], False, 10))
    out.append(_case("edge:n=3 C=1e12", [(big, 1.0, 3)], False, 10))
    # the largest counts validated (2**53): closed forms and their derived metrics
    top = 2**53 - 1
    out.append(_case("edge:(2, 2^53-1) x 5", [(2, 1.0, 5), (top, 1.0, 5)], False, 10))
    spread = np.random.default_rng(5)
    pairs = zip(spread.integers(10**14, top, 8), spread.integers(1, 50, 8), strict=True)
    rows = [(int(c), 1.0, int(m)) for c, m in pairs]
    out.append(_case("edge:C~U[1e14, 2^53] d=8", rows, False, 10))
    # a few tasks with huge counts: the median's law near 0 is a low power of x, against the
    # inverse median's weights 1/x^2 (its lower tail had been cut where they still count)
    for n in (4, 5, 6, 7, 9, 15):
        for count in (10**9, big, 10**15):
            out.append(_case(f"edge:n={n} C={count:.0e}", [(count, 1.0, n)], False, 10))
    # chosen ranks where M and E share their leading digits across tasks: certain terms (one
    # candidate; at most k) beside huge counts, a term above and one below its expectation
    cancelling = [
        ("(1, 1, 1e12) ranks (1, 1, 50)", [(1, 1.0, 2), (big, 1.0, 1)], [1, 50], False),
        ("(2, 1e12) ranks (2, 4)", [(2, 1.0, 1), (big, 1.0, 1)], [2, 4], False),
        (
            "(3, 7, 1e12) ranks (2, 5, 11)",
            [(3, 1.0, 1), (7, 1.0, 1), (big, 1.0, 1)],
            [2, 5, 11],
            False,
        ),
        ("weighted (1, 4, 1e12)", [(1, 1e6, 1), (4, 3.0, 1), (big, 0.5, 1)], [1, 4, 10**6], True),
    ]
    for label, rows, ranks, weighted in cancelling:
        per_row = tuple(((float(r), m),) for r, (_, _, m) in zip(ranks, rows, strict=True))
        out.append(Case(f"edge:cancel {label}", tuple(rows), weighted, 10, per_row))
    return out


def median_cases(seed: int, count: int, top: int = 200) -> list[Case]:
    """Unweighted inputs with an exact median law: n <= 60, up to 12 distinct counts <= top."""
    rng = np.random.default_rng(seed)
    out = []
    for index in range(count):
        n = int(rng.integers(2, 61))
        d = min(n, int(rng.integers(1, 13)))
        counts = np.sort(rng.choice(np.arange(1, top + 1), size=d, replace=False))
        rows = [(int(c), 1.0, m) for c, m in zip(counts, _composition(rng, n, d), strict=True)]
        out.append(_case(f"median{index}:n={n}/d={d}", rows, False, 10, seed + index))
    return out


def pooled_median_cases(seed: int, count: int) -> list[Case]:
    """n of 58 to 1001 over two counts: at most 60 beside 1e4 to 1e12, the middle ranks apart.

    The two-count pool reference covers them (:func:`sweep_reference.median_reference`); the
    other median cases keep every count at most 200. Here the decomposition of the even median
    had kept terms 500 times V[1/M] (2.6e-12 off, 28 tasks at 50 beside 30 at 2e6).
    """
    rng = np.random.default_rng(seed)
    out = []
    for index in range(count):
        n = 2 * int(np.exp(rng.uniform(np.log(29), np.log(500)))) + int(rng.integers(0, 2))
        small = int(rng.integers(1, 61))
        # from 1e4 on: the reference sums shorter ranges term by term in mpmath (3 minutes for
        # 354 tasks beside 2337), longer ones by Euler-Maclaurin
        large = int(10 ** rng.uniform(4.0, 12.0))
        m1 = (n + 1) // 2 + int(rng.integers(-1, 2))
        rows = [(small, 1.0, m1), (large, 1.0, n - m1)]
        out.append(_case(f"pooled{index}:n={n}/{small},{large}", rows, False, 10, seed + index))
    return out


def lattice_cases(seed: int) -> list[Case]:
    """Over a thousand distinct (count, weight) pairs: the harmonic mean's lattice path."""
    rng = np.random.default_rng(seed)
    out = []
    for rows_count, top in ((1100, 3), (1500, 64)):
        counts = rng.integers(1, top + 1, rows_count)
        weights = rng.uniform(0.1, 10.0, rows_count)
        multiplicities = rng.integers(1, 5, rows_count)
        rows = [
            (int(c), float(w), int(m))
            for c, w, m in zip(counts, weights, multiplicities, strict=True)
        ]
        out.append(_case(f"lattice:{rows_count} pairs, C <= {top}", rows, True, 10))
    return out


# --- the metrics --------------------------------------------------------------------------------


def registry_metrics(k: int) -> list[rankstats.RankBasedMetric]:
    """One instance of every registered metric with a closed form (``k`` for the cut-off)."""
    out = []
    for cls in sorted(rankstats.metric_resolver, key=lambda cls: cls.__name__):
        if not (cls.closed_expectation or cls.closed_variance):
            continue
        out.append(
            cls(k=k) if "k" in rankstats.metric_resolver.signature(cls).parameters else cls()
        )
    return out


def _base_key(metric: rankstats.RankBasedMetric) -> str:
    base = metric.base if isinstance(metric, DerivedRankBasedMetric) else metric
    return BASE_KEYS[type(base).__name__]


def metric_name(metric: rankstats.RankBasedMetric) -> str:
    name = type(metric).__name__
    return name if not hasattr(metric, "k") and "k" not in metric._params() else f"{name}(k)"


@dataclasses.dataclass
class Result:
    """One comparison: metric, quantity (E, V, moments, value), case, error or failure text."""

    metric: str
    quantity: str
    case: str
    error: float
    note: str = ""


def _relative(got: float, ref: mp.mpf, floor: mp.mpf | float = 0) -> float:
    """``|got - ref| / max(|ref|, floor)``; a reference of exactly 0 must be met exactly."""
    scale = max(abs(ref), mp.mpf(floor))
    if scale == 0:
        return 0.0 if got == 0 else math.inf
    if not math.isfinite(got):
        return math.inf
    return float(abs(mp.mpf(got) - ref) / scale)


#: whether to admit the slow references (the full sweep does, the quick one and the tests not)
THOROUGH = False
#: time spent in each reference, for tuning the sweep
REFERENCE_SECONDS: dict[str, float] = {}


class _Reference:
    """The exact null moments (and values) of every base metric on a case, computed lazily."""

    def __init__(self, case: Case) -> None:
        self.case = case
        self._moments: dict[str, tuple[mp.mpf, mp.mpf] | None] = {}
        self._confirmed: set[str] = set()

    def moments(self, key: str) -> tuple[mp.mpf, mp.mpf] | None:
        if key not in self._moments:
            start = time.perf_counter()
            self._moments[key] = self._compute(key)
            REFERENCE_SECONDS[key] = REFERENCE_SECONDS.get(key, 0.0) + time.perf_counter() - start
        return self._moments[key]

    def _compute(self, key: str) -> tuple[mp.mpf, mp.mpf] | None:
        rows = self.case.rows
        if key in ("median", "inverse_median"):
            if self.case.weighted:
                return None
            found = median_reference([(c, m) for c, _, m in rows], THOROUGH)
            if found is None:
                return None
            return (found[0], found[1]) if key == "median" else (found[2], found[3])
        if key == "hmr" and len(rows) >= 1024 and max(c for c, _, _ in rows) <= 64:
            return hmr_many_rows(rows)  # the library's lattice path
        if key == "hmr" and len(rows) > 2:
            return None  # quadrature of the harmonic transform: kept to a few small rows
        if key == "iamr" and len(rows) > 12:
            return None
        try:
            return base_moments(key, rows, self.case.k)
        except TooCostly:
            return None

    def confirm(self, key: str) -> tuple[mp.mpf, mp.mpf] | None:
        """Recompute a quadrature reference at higher precision (after a miss)."""
        if key in ("iamr", "hmr") and key not in self._confirmed:
            self._confirmed.add(key)
            with contextlib.suppress(TooCostly):
                self._moments[key] = base_moments(key, self.case.rows, self.case.k, CONFIRM_DPS)
        return self._moments[key]

    def value(self, key: str) -> mp.mpf:
        return base_value(key, self.case.rows, self.case.ranks, self.case.k)


def _derived_reference(
    metric: DerivedRankBasedMetric,
    base: tuple[mp.mpf, mp.mpf],
    gap: mp.mpf,
    value: tuple[mp.mpf, mp.mpf] | None,
) -> tuple[mp.mpf, mp.mpf, mp.mpf | None, mp.mpf] | None:
    """E, V, value and the value's error floor of a derived metric; None where undefined."""
    mean, var = base
    if isinstance(metric, ExpectationNormalizedMetric):
        if mean == 0:
            return None
        v = None if value is None else value[0] / mean
        return mp.mpf(1), var / mean**2, v, mp.mpf(0)
    if isinstance(metric, ReindexedMetric):
        if gap == 0:
            return None
        if value is None:
            return mp.mpf(0), var / gap**2, None, mp.mpf(0)
        value_gap = value[1]
        return mp.mpf(0), var / gap**2, 1 - value_gap / gap, abs(value_gap / gap)
    assert isinstance(metric, ZMetric)
    if var == 0:
        return None
    sign = 1 if metric.base.increasing else -1
    sd = mp.sqrt(var)
    if value is None:
        return mp.mpf(0), mp.mpf(1), None, mp.mpf(0)
    m, value_gap = value
    floor = min(abs(m) + abs(mean), abs(value_gap) + abs(gap)) / sd
    return mp.mpf(0), mp.mpf(1), sign * (gap - value_gap) / sd, floor


def _error(
    quantity: str, got: object, ref: mp.mpf | None, mean: mp.mpf, var: mp.mpf, floor: mp.mpf
) -> float:
    if quantity in ("moments", "scalar"):
        assert isinstance(got, tuple)
        return max(_relative(got[0], mean), _relative(got[1], var))
    assert isinstance(got, float)
    assert ref is not None
    return _relative(got, ref, floor if quantity == "value" else 0)


def _call(function: Callable[[], object]) -> tuple[object | None, str]:
    """Call with warnings as errors; returns (result, failure text)."""
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        try:
            return function(), ""
        except NoClosedFormError:
            return None, "no-closed-form"
        except Exception as error:
            return None, f"{type(error).__name__}: {str(error)[:160]}"


#: each case's references, kept for the grouped evaluation of the same cases
_REFERENCES: dict[str, _Reference] = {}


def _reference_of(case: Case) -> _Reference:
    if case.label not in _REFERENCES:
        _REFERENCES[case.label] = _Reference(case)
    return _REFERENCES[case.label]


def check_case(
    case: Case, metrics: Sequence[rankstats.RankBasedMetric] | None = None
) -> Iterator[Result]:
    """Compare every closed form (and derived value) of every metric on one case."""
    candidates, weights, ranks = case.arrays()
    reference = _reference_of(case)
    with mp.workdps(DPS):
        for metric in metrics if metrics is not None else registry_metrics(case.k):
            name = metric_name(metric)
            if weights is not None and not metric.supports_weights:
                continue
            key = _base_key(metric)
            base = reference.moments(key)
            if base is None:
                continue
            derived = isinstance(metric, DerivedRankBasedMetric)
            value_ref = None
            if key in VALUE_KEYS:
                value_ref = reference.value(key)
            if value_ref is not None and not derived:
                value_ref = value_ref[0]
            if derived:
                gap = base_gap(key, case.rows, case.k)
                found = _derived_reference(metric, base, gap, value_ref)
                if found is None:  # undefined: a ValueError is required
                    got, failure = _call(lambda m=metric: m.moments(candidates, weights=weights))
                    if not failure.startswith("ValueError"):
                        yield Result(name, "undefined", case.label, math.inf, failure or repr(got))
                    continue
                mean, var, value, floor = found
                if metric.base._chance_terms() is not None:
                    # M - E summed exactly where it cancels (rankstats.chance): no floor but
                    # the reference's own rounding (DPS digits of the terms it is taken from:
                    # an exact 0 came out as -2.7e-51, and the exact 0 counted as a miss)
                    floor *= REFERENCE_ROUNDING
            else:
                mean, var = base
                value, floor = value_ref, mp.mpf(0)
            checks: list[tuple[str, Callable[[], object], mp.mpf | None]] = [
                ("E", lambda m=metric: m.expected_value(candidates, weights=weights), mean),
                ("V", lambda m=metric: m.variance(candidates, weights=weights), var),
                ("moments", lambda m=metric: tuple(m.moments(candidates, weights=weights)), None),
            ]
            if value is not None:
                checks.append(("value", lambda m=metric: m(ranks, candidates, weights), value))
            if len(case.rows) == 1 and weights is None:  # one count for every task: scalar input
                checks.append(
                    (
                        "scalar",
                        lambda m=metric, c=case.rows[0][0], size=case.n: tuple(
                            m.moments(c, num_ranks=size)
                        ),
                        None,
                    )
                )
            for quantity, function, ref in checks:
                got, failure = _call(function)
                if failure == "no-closed-form" and key in ("median", "inverse_median"):
                    continue
                if failure:
                    yield Result(name, quantity, case.label, math.inf, failure)
                    continue
                error = _error(quantity, got, ref, mean, var, floor)
                if error > TOLERANCE and not derived and key in ("iamr", "hmr"):
                    confirmed = reference.confirm(key)
                    assert confirmed is not None
                    mean, var = confirmed
                    ref = {"E": mean, "V": var}.get(quantity)
                    error = _error(quantity, got, ref, mean, var, floor)
                shown = (mp.nstr(mean, 17), mp.nstr(var, 17)) if ref is None else mp.nstr(ref, 17)
                note = "" if error <= TOLERANCE else f"got {got!r}, reference {shown}"
                yield Result(name, quantity, case.label, error, note)


#: the bases whose null moments ``evaluate(..., groups=...)`` computes for all groups at once
#: (the medians for the groups of a few tasks, :mod:`rankstats.null.median_small_groups`)
GROUPED = (
    "mr",
    "mrr",
    "hits@10",
    "gmr",
    "igmr",
    "iamr",
    "hmr",
    "variance",
    "median",
    "inverse_median",
)


def check_grouped(
    cases: Sequence[Case], size: int = 12, keys: Sequence[str] = GROUPED
) -> Iterator[Result]:
    """Each group's null moments from one grouped ``evaluate`` against its case's references.

    The unweighted cases, then the weighted ones, ``size`` at a time, each case a group of one
    table (Hits@k at k = 10 for every group): the vectorised paths of
    :mod:`rankstats.evaluation.grouped` and :mod:`rankstats.null.reciprocal_groups` (weighted:
    the geometric means' and the variance's, each task at its share of its group, and
    :mod:`rankstats.null.reciprocal_weighted` for the reciprocal-of-mean metrics; unweighted,
    :mod:`rankstats.null.median_small_groups` for the medians of groups of a few tasks), which
    the per-case checks do not reach.
    """
    batches = [
        kind[begin : begin + size]
        for kind in (
            [case for case in cases if not case.weighted],
            [case for case in cases if case.weighted],
        )
        for begin in range(0, len(kind), size)
    ]
    for table in batches:
        arrays = [case.arrays() for case in table]
        candidates = np.concatenate([a[0] for a in arrays])
        ranks = np.concatenate([a[2] for a in arrays])
        weights = np.concatenate([a[1] for a in arrays]) if table[0].weighted else None
        labels = np.repeat(np.arange(len(table)), [a[0].size for a in arrays])
        results, failure = _call(
            lambda c=candidates, r=ranks, w=weights, g=labels: rankstats.evaluate(
                r, c, weights=w, groups=g, metrics=list(keys)
            )
        )
        if failure:
            yield Result("grouped", "evaluate", table[0].label, math.inf, failure)
            continue
        assert isinstance(results, rankstats.EvaluationResults)
        metrics = [rankstats.metric_resolver.make(key) for key in keys]
        with mp.workdps(DPS):
            for group, case in enumerate(table):
                rows = results.by_group[group].rows
                for key, metric in zip(keys, metrics, strict=True):
                    name = f"grouped {type(metric).__name__}"
                    row = next(row for row in rows if row.metric == metric)
                    if key == "hits@10":
                        mean, var = base_moments("hits", case.rows, 10)
                    else:
                        found = _reference_of(case).moments(key)
                        if found is None:
                            continue
                        mean, var = found
                    for quantity, got, ref in (
                        ("E", row.expected_value, mean),
                        ("V", row.variance, var),
                    ):
                        error = math.inf if got is None else _relative(got, ref)
                        note = "" if error <= TOLERANCE else f"got {got!r}, {mp.nstr(ref, 17)}"
                        yield Result(name, quantity, case.label, error, note)


# --- memory -------------------------------------------------------------------------------------


#: the medians are measured up to this many tasks (at 1e6 they keep about 100 MB of arrays
#: per task count whatever C, and take about a second; the even n took hundreds of MB and
#: seconds at n = 1e4 with C up to 1e9 before the issue-9 work)
MEDIAN_MEMORY_MAX_N = 1_000_001
MEDIANS = ("MedianRank", "InverseMedianRank")


def _clear_caches() -> None:
    """Forget cached null laws, so that each measurement computes from scratch.

    The integer rules are cached by panel length, which depends on the input, and are emptied
    too (the Gram tables, one per node count whatever the input, are built by
    :func:`_warm_tables` before any measurement).
    """
    from rankstats.null import median, median_rules

    with median._CACHE_LOCK:
        median._CACHE.clear()
    with median_rules._GRAM_LOCK:
        median_rules._INTEGER_CACHE.clear()


def _warm_tables() -> None:
    """Build the Gram tables of every node count (once per process, whatever the input)."""
    from rankstats.null import median_rules

    for nu in range(3, 33):
        median_rules._gram_rules(np.array([10**6], dtype=np.int64), nu)


def memory_table(quick: bool) -> list[tuple[str, str, int, int, float]]:
    """(closed form, input, peak at small C, peak at huge C, seconds at huge C).

    The small-C input has the same number of tasks and of distinct counts as the huge one (its
    counts are the ranks of the huge ones among the distinct values), so a difference in peak
    memory is growth with C alone (the small counts start at 11, above the cut-off k = 10).
    """
    _warm_tables()
    rng = np.random.default_rng(0)
    n = 10_000 if quick else 1_000_000
    inputs = [
        ("6 tasks, C to 1e15", np.array([10**15, 3, 10**15 - 7, 12345, 10**15, 999])),
        ("6 tasks, C = 1e15", np.full(6, 10**15)),
        ("7 tasks, C to 1e15", np.array([10**15, 3, 10**15 - 7, 12345, 10**15, 999, 2])),
        ("n=1e4, C~U[1,1e9]", rng.integers(1, 10**9, size=10_000)),
        ("n=1e4+1, C~U[1,1e9]", rng.integers(1, 10**9, size=10_001)),
    ]
    if not quick:
        inputs.append((f"n={n:g}, C~U[1,1e9]", rng.integers(1, 10**9, size=n)))
    rows = []
    for label, huge in inputs:
        small = np.unique(huge, return_inverse=True)[1].reshape(-1) + 11
        for metric in registry_metrics(10):
            if huge.size > MEDIAN_MEMORY_MAX_N and type(metric).__name__ in MEDIANS:
                continue
            for what in ("E", "V", "moments"):

                def run(
                    c: np.ndarray, metric: rankstats.RankBasedMetric = metric, what: str = what
                ) -> object:
                    _clear_caches()
                    if what == "E":
                        return metric.expected_value(c, weights=None, num_ranks=None)
                    if what == "V":
                        return metric.variance(c)
                    return metric.moments(c)

                small_peak = peak_memory(lambda run=run, small=small: run(small))
                start = time.perf_counter()
                huge_peak = peak_memory(lambda run=run, huge=huge: run(huge))
                seconds = time.perf_counter() - start
                rows.append(
                    (f"{metric_name(metric)} {what}", label, small_peak, huge_peak, seconds)
                )
    return rows


# --- main ---------------------------------------------------------------------------------------


def _print_misses(results: Sequence[Result]) -> None:
    """Print each result beyond the tolerance as it comes."""
    for result in results:
        if result.error > TOLERANCE:
            print(
                f"MISS {result.metric} {result.quantity} {result.case}: "
                f"{result.error:.3g} {result.note}",
                flush=True,
            )


def summarize(results: Sequence[Result]) -> dict[tuple[str, str], Result]:
    """The worst result per (metric, quantity)."""
    worst: dict[tuple[str, str], Result] = {}
    for result in results:
        key = (result.metric, result.quantity)
        if key not in worst or result.error > worst[key].error:
            worst[key] = result
    return worst


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="a small sample, small memory inputs")
    parser.add_argument("--cases", type=int, default=None, help="number of random cases")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--no-edges", action="store_true", help="skip the fixed edge cases")
    parser.add_argument("--no-memory", action="store_true", help="skip the memory table")
    args = parser.parse_args(argv)
    count = args.cases if args.cases is not None else (60 if args.quick else 600)
    results: list[Result] = []
    start = time.perf_counter()
    global THOROUGH
    THOROUGH = not args.quick
    cases = [] if args.no_edges else edge_cases()
    cases += median_cases(args.seed, 10 if args.quick else 60)
    cases += pooled_median_cases(args.seed, 2 if args.quick else 30)
    if not args.quick:
        cases += lattice_cases(args.seed)
    cases += make_cases(args.seed, count)
    for index, case in enumerate(cases):
        if index % 25 == 0:
            print(f"[{index}/{len(cases)} cases, {time.perf_counter() - start:.0f} s]", flush=True)
        case_results = list(check_case(case))
        results.extend(case_results)
        _print_misses(case_results)
    grouped = list(check_grouped(cases))
    results.extend(grouped)
    _print_misses(grouped)
    print(
        f"\n{len(results)} comparisons on {len(cases)} cases in {time.perf_counter() - start:.0f} s"
    )
    print("reference seconds:", {k: round(v, 1) for k, v in REFERENCE_SECONDS.items()})
    print(f"\n{'metric':45} {'quantity':9} {'worst error':>12}  case")
    failures = 0
    for (metric, quantity), result in sorted(summarize(results).items()):
        flag = "" if result.error <= TOLERANCE else "  <-- MISS"
        failures += result.error > TOLERANCE
        print(f"{metric:45} {quantity:9} {result.error:12.3g}  {result.case}{flag}")
    if not args.no_memory:
        print(f"\n{'closed form':45} {'input':22} {'small C':>10} {'huge C':>10} {'s':>6}")
        for name, label, small_peak, huge_peak, seconds in memory_table(args.quick):
            flag = "  <-- GROWS" if huge_peak > 2 * small_peak + 2**20 else ""
            print(
                f"{name:45} {label:22} {small_peak / 2**20:9.2f}M {huge_peak / 2**20:9.2f}M "
                f"{seconds:6.2f}{flag}"
            )
    return 1 if failures else 0


if __name__ == "__main__":
    raise SystemExit(main())
