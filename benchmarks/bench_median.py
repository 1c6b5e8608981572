"""Exact null moments of the median rank and of its inverse, both metrics, both parities of n.

Each row times E and V of :class:`~rankstats.MedianRank` and of
:class:`~rankstats.InverseMedianRank` on one input, from scratch (the shared distribution cache
is emptied first, so one order-statistic law is computed per row, as in a results table).
Baseline: one plain ``np.median(rng.integers(1, C + 1))`` over a sample of the same size.

Targets (issue 9): E+V of both metrics under 10 ms at n = 100 with spread counts
(C ~ U[200, 1200]); elsewhere the even-n rows should cost the same order as the odd-n rows next
to them (no input shape that takes seconds). Up to 16 tasks and for every even n up to 64
(the n = 40 and n = 64 rows) the moments come from the product-form point masses; beyond, where
the middle ranks are orders of magnitude apart (the last two rows), from the upper middle rank
(:mod:`rankstats.null.median_even`), after the decomposition has been tried.
"""

from __future__ import annotations

import numpy as np

import rankstats.null.median as median_module
from _timing import Row, best_time
from rankstats import InverseMedianRank, MedianRank


def _both_metrics(candidates: np.ndarray) -> None:
    median_module._CACHE.clear()
    median, inverse = MedianRank(), InverseMedianRank()
    median.expected_value(candidates)
    median.variance(candidates)
    inverse.expected_value(candidates)
    inverse.variance(candidates)


def run() -> list[Row]:
    rng = np.random.default_rng(0)
    spread = rng.integers(14_000, 15_100, size=1_000)
    cases: dict[str, tuple[np.ndarray, float | None]] = {
        "n=100, C~U[200,1200]": (rng.integers(200, 1201, size=100), 0.01),
        "n=101, C~U[200,1200]": (rng.integers(200, 1201, size=101), 0.01),
        "n=80, C~U[1e4,1e5]": (rng.integers(10**4, 10**5, size=80), None),
        "n=4000, C~U[200,1200]": (rng.integers(200, 1201, size=4_000), None),
        "n=4001, C~U[200,1200]": (rng.integers(200, 1201, size=4_001), None),
        "n=20466, C=14505": (np.full(20_466, 14_505), None),
        "n=20467, C=14505": (np.full(20_467, 14_505), None),
        "n=20466, ~1,000 distinct C": (rng.choice(spread, size=20_466), None),
        "n=20467, ~1,000 distinct C": (rng.choice(spread, size=20_467), None),
        "n=1e6, C=1e7": (np.full(1_000_000, 10_000_000), None),
        "n=1e6 + 1, C=1e7": (np.full(1_000_001, 10_000_000), None),
        "n=2, C=(1, 1e12)": (np.array([1, 10**12]), None),
        "n=4, C=1e12": (np.full(4, 10**12), None),
        "n=4, C=1e7": (np.full(4, 10**7), None),
        "n=4, C=(1, 1, 1e12, 1e12)": (np.array([1, 1, 10**12, 10**12]), None),
        "n=16, C~U[1, 1e12]": (rng.integers(1, 10**12, size=16), None),
        "n=40, C=(1,)*20 + (1e6,)*20": (np.array([1] * 20 + [10**6] * 20), None),
        "n=64, C~U[1, 1e9]": (rng.integers(1, 10**9, size=64), None),
        "n=1000, C~U[1, 1e9]": (rng.integers(1, 10**9, size=1_000), None),
        # middle ranks orders of magnitude apart: summed from the upper middle rank
        "n=100, C=(3,)*50 + (1e9,)*50": (np.array([3] * 50 + [10**9] * 50), None),
        "n=1000, C=(3,)*500 + (1e9,)*500": (np.array([3] * 500 + [10**9] * 500), None),
    }
    rows = []
    for name, (candidates, limit) in cases.items():

        def sample(candidates: np.ndarray = candidates) -> None:
            np.median(rng.integers(1, candidates + 1))

        baseline = best_time(sample, repeat=3)
        seconds = best_time(lambda candidates=candidates: _both_metrics(candidates), repeat=3)
        rows.append(
            Row(
                f"median + inverse median E+V, {name}",
                seconds,
                baseline="np.median of one sample",
                baseline_s=baseline,
                max_seconds=limit,
            )
        )
    return rows
