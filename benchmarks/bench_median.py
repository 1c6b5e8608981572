"""Exact null moments of the median rank and of its inverse, both metrics, both parities of n.

Each row times E and V of :class:`~rankstats.MedianRank` and of
:class:`~rankstats.InverseMedianRank` on one input, from scratch (the shared distribution cache
and the integer rules of the input's panel lengths are emptied first, so one order-statistic law
is computed per row, as in a results table).

Targets (issue 9): E+V of both metrics under 10 ms at n = 100 with spread counts
(C ~ U[200, 1200]); elsewhere the even-n cost should be of the same order as the odd-n cost next
to it (no input shape that takes seconds). So each even-n row is measured against its odd
neighbour (one more task, counts drawn alike) in interleaved rounds of CPU time (other
processes on a shared machine do not inflate it), and the ratio even / odd is checked against
10 (the same order). Up to 16 tasks and for every even n up to 40 (the n = 4, 16 and 40 rows)
the moments come from the product-form point masses; beyond, where the middle ranks are
orders of magnitude apart (the separated rows), from the upper middle rank
(:mod:`rankstats.null.median_even`); the two widest rows (counts over twelve decades, 10^5 and
10^6 tasks) check that no input takes seconds. The last row empties the Gram tables too (the
first call in a process: every node count needs its table).

How the even-n path reached these times, row by row, and what was tried and not kept, is in
``benchmarks/HISTORY.md``.
"""

from __future__ import annotations

import time

import numpy as np

import rankstats.null.median as median_module
import rankstats.null.median_rules as rules_module
from _timing import Row, interleaved_best_times
from rankstats import InverseMedianRank, MedianRank

#: the even-n cost should stay within this factor of the odd neighbour's (the same order)
_SAME_ORDER = 10.0


def _both_metrics(candidates: np.ndarray) -> None:
    median_module._CACHE.clear()
    # integer rules are cached by panel length, which depends on the input: a later round of
    # the same input would find them (the Gram tables, one per node count, stay warm)
    with rules_module._GRAM_LOCK:
        rules_module._INTEGER_CACHE.clear()
    median, inverse = MedianRank(), InverseMedianRank()
    median.expected_value(candidates)
    median.variance(candidates)
    inverse.expected_value(candidates)
    inverse.variance(candidates)


def _cold(candidates: np.ndarray) -> None:
    with rules_module._GRAM_LOCK:
        rules_module._GRAM_CACHE.clear()
        rules_module._INTEGER_CACHE.clear()
    _both_metrics(candidates)


def _pairs() -> dict[str, tuple[np.ndarray, np.ndarray, float | None]]:
    """Even-n inputs, their odd neighbours and the absolute target (if any)."""
    rng = np.random.default_rng(0)

    def spread(lo: int, hi: int, n: int) -> tuple[np.ndarray, np.ndarray]:
        return rng.integers(lo, hi, size=n), rng.integers(lo, hi, size=n + 1)

    def separated(small: int, large: int, n: int) -> tuple[np.ndarray, np.ndarray]:
        half = n // 2
        even = np.array([small] * half + [large] * half)
        return even, np.append(even, large)

    def log_uniform(n: int) -> tuple[np.ndarray, np.ndarray]:
        counts = np.exp(rng.uniform(0.0, np.log(1e12), size=n + 1)).astype(np.int64) + 1
        return counts[:-1], counts

    pool = rng.integers(14_000, 15_100, size=1_000)
    return {
        "n=100, C~U[200,1200]": (*spread(200, 1201, 100), 0.01),
        "n=80, C~U[1e4,1e5]": (*spread(10**4, 10**5, 80), None),
        # FB15k-237's range of counts, at a relation's number of test triples
        "n=100, C~U[1,14505]": (*spread(1, 14_506, 100), None),
        "n=4000, C~U[200,1200]": (*spread(200, 1201, 4_000), None),
        "n=20466, C=14505": (np.full(20_466, 14_505), np.full(20_467, 14_505), None),
        "n=20466, ~1,000 distinct C": (
            rng.choice(pool, size=20_466),
            rng.choice(pool, size=20_467),
            None,
        ),
        "n=1e6, C=1e7": (np.full(10**6, 10**7), np.full(10**6 + 1, 10**7), None),
        # equal huge counts: the inner sums had run over every shift of a reach of 1e7 (8-80 s)
        "n=2306, C=3.2e8": (np.full(2_306, 321_371_255), np.full(2_307, 321_371_255), None),
        "n=7136, C=1.2e10": (
            np.full(7_136, 12_235_720_357),
            np.full(7_137, 12_235_720_357),
            None,
        ),
        # half the tasks at 2..39, half at 1e8..1e9: the long tail's pmf at top 0 (series)
        "n=1e6, C=(2..39, 1e8..1e9)": (
            np.concatenate((rng.integers(2, 40, 500_000), rng.integers(10**8, 10**9, 500_000))),
            np.concatenate((rng.integers(2, 40, 500_000), rng.integers(10**8, 10**9, 500_001))),
            None,
        ),
        "n=2, C=(1, 1e12)": (np.array([1, 10**12]), np.array([1, 10**12, 10**12]), None),
        "n=4, C=1e12": (np.full(4, 10**12), np.full(5, 10**12), None),
        "n=4, C=1e7": (np.full(4, 10**7), np.full(5, 10**7), None),
        "n=4, C=(1, 1, 1e12, 1e12)": (
            np.array([1, 1, 10**12, 10**12]),
            np.array([1, 1, 10**12, 10**12, 10**12]),
            None,
        ),
        "n=16, C~U[1, 1e12]": (*spread(1, 10**12, 16), None),
        "n=40, C=(1,)*20 + (1e6,)*20": (*separated(1, 10**6, 40), None),
        "n=64, C~U[1, 1e9]": (*spread(1, 10**9, 64), None),
        "n=1000, C~U[1, 1e9]": (*spread(1, 10**9, 1_000), None),
        # counts spread over six decades: the gap sums' kernel crosses counts (integer nodes)
        "n=100, C~U[1, 1e6]": (*spread(1, 10**6, 100), None),
        "n=400, C~U[1, 1e6]": (*spread(1, 10**6, 400), None),
        "n=100, C=(3,)*50 + (1e9,)*50": (*separated(3, 10**9, 100), None),
        "n=1000, C=(3,)*500 + (1e9,)*500": (*separated(3, 10**9, 1_000), None),
        # the widest: many distinct counts over twelve decades (the kernel sums near their budget)
        "n=1e5, C~U[1, 1e12]": (*spread(1, 10**12, 100_000), None),
        "n=1e6, C~U[1, 1e12]": (*spread(1, 10**12, 1_000_000), None),
        # counts spread through the window: the kernel sums interpolated between the counts
        "n=100, C~U[1e3,2e3]": (*spread(1_000, 2_001, 100), None),
        "n=100, C~U[1,5e3]": (*spread(1, 5_001, 100), None),
        "n=200, C~U[1,14505]": (*spread(1, 14_506, 200), None),
        # just beyond the product form (even n up to 40), where the main path is cheaper
        "n=42, C~U[1,14505]": (*spread(1, 14_506, 42), None),
        "n=56, C log-uniform in 1..1e12": (*log_uniform(56), None),
    }


def run() -> list[Row]:
    rows = []
    for name, (even, odd, limit) in _pairs().items():
        best = interleaved_best_times(
            {
                "even": lambda even=even: _both_metrics(even),
                "odd": lambda odd=odd: _both_metrics(odd),
            },
            rounds=5,
            timer=time.process_time,
        )
        rows.append(
            Row(
                f"median + inverse median E+V, {name}",
                best["even"],
                baseline=f"odd n = {odd.size}",
                baseline_s=best["odd"],
                max_seconds=limit,
                max_ratio=_SAME_ORDER,
            )
        )
    # a new input's first call: the summation rules of its panel lengths are not cached yet
    rng = np.random.default_rng(1)
    even, odd = rng.integers(10**8, 5 * 10**10, size=658), rng.integers(10**8, 5 * 10**10, size=659)
    best = interleaved_best_times(
        {"even": lambda: _cold(even), "odd": lambda: _cold(odd)},
        rounds=3,
        timer=time.process_time,
    )
    rows.append(
        Row(
            "median + inverse median E+V, cold rule caches, n=658, C~U[1e8, 5e10]",
            best["even"],
            baseline="odd n = 659",
            baseline_s=best["odd"],
            max_ratio=_SAME_ORDER,
        )
    )
    return rows
