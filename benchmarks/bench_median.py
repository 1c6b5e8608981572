"""Exact null moments of the median rank and of its inverse, straight from the null model.

Targets: E + V at FB15k-237's test size (n = 40,932 with C = 14,541, and with ~1,000 distinct
counts around it) under 0.1 s; at n = 1e6, C = 1e7 under 2 s (both parities of n: the even case
adds the joint law of the two middle ranks). Untargeted rows show the huge-count and n = 1e7
regimes. Baseline: one plain ``np.median(rng.integers(1, C + 1))`` over a sample of the same size.
"""

from __future__ import annotations

import numpy as np

from _timing import Row, best_time
from rankstats.null.median import inverse_median_moments, median_moments


def run() -> list[Row]:
    rng = np.random.default_rng(0)
    distinct = rng.integers(14_000, 15_100, size=1_000)
    cases: dict[str, tuple[np.ndarray, float | None]] = {
        "n=40,932, C=14,541": (np.full(40_932, 14_541), 0.1),
        "n=40,932, ~1,000 distinct C": (rng.choice(distinct, size=40_932), 0.1),
        "n=40,933, ~1,000 distinct C": (rng.choice(distinct, size=40_933), 0.1),
        "n=1e6, C=1e7": (np.full(1_000_000, 10_000_000), 2.0),
        "n=1e6 + 1, C=1e7": (np.full(1_000_001, 10_000_000), 2.0),
        "n=1e6, C~U[1,1e12]": (rng.integers(1, 10**12, size=1_000_000), None),
        "n=4, C=1e12": (np.full(4, 10**12), None),
        "n=1e7, C~U[1,1e9]": (rng.integers(1, 10**9, size=10_000_000), None),
    }
    rows = []
    for name, (candidates, limit) in cases.items():

        def sample(candidates: np.ndarray = candidates) -> None:
            np.median(rng.integers(1, candidates + 1))

        baseline = best_time(sample, repeat=2)
        for label, moments in (
            ("median", median_moments),
            ("inverse median", inverse_median_moments),
        ):

            def both(candidates: np.ndarray = candidates, moments=moments) -> None:  # type: ignore[no-untyped-def]
                moments(candidates)

            rows.append(
                Row(
                    f"E+V {label}, {name}",
                    best_time(both, repeat=2),
                    baseline="np.median of one sample",
                    baseline_s=baseline,
                    max_seconds=limit,
                )
            )
    return rows
