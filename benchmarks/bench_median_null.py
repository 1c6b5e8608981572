"""The median's exact null moments at real scale.

Targets (issue 3): expected value + variance at FB15k-237's test size (n = 40,932, C = 14,541, and
with ~1,000 distinct filtered counts around it) under 0.1 s; at n = 1e6, C = 1e7 under 2 s.
Baseline: one np.median over one sampled rank vector of the same size.
"""

from __future__ import annotations

import numpy as np

from _timing import Row, best_time
from rankstats import InverseMedianRank, MedianRank


def run() -> list[Row]:
    rng = np.random.default_rng(0)
    cases = {
        "n=40,932, C=14,541": (np.full(40_932, 14_541), 0.1),
        "n=40,932, ~1,000 distinct C": (rng.integers(13_500, 14_541, size=40_932), 0.1),
        "n=1e6, C=1e7": (np.full(1_000_000, 10_000_000), 2.0),
        "n=1e6 - 1 (odd), C=1e7": (np.full(999_999, 10_000_000), 2.0),
    }
    rows = []
    for name, (candidates, limit) in cases.items():
        sample = np.floor(rng.random(candidates.size) * candidates) + 1
        baseline = best_time(lambda sample=sample: np.median(sample))
        for metric in (MedianRank(), InverseMedianRank()):

            def both(metric=metric, candidates=candidates) -> None:  # type: ignore[no-untyped-def]
                metric.expected_value(candidates)
                metric.variance(candidates)

            rows.append(
                Row(
                    f"{metric!r} E+V, {name}",
                    best_time(both),
                    baseline="np.median of one sample",
                    baseline_s=baseline,
                    max_seconds=limit,
                )
            )
    return rows
