"""Closed-form null moments of the mean-type metrics at scale.

Target (issue 3): expected value + variance of MR, MRR and Hits@10 for n = 1e7 ranking tasks with
candidate counts uniform up to 1e9, each under 1 s, with memory independent of the counts.
Baseline: one plain numpy pass over the candidate counts (``C.mean()``).
"""

from __future__ import annotations

import numpy as np

import rankstats
from _timing import Row, best_time

N = 10_000_000


def run() -> list[Row]:
    num_candidates = np.random.default_rng(0).integers(1, 10**9, size=N)
    baseline = best_time(lambda: num_candidates.mean())
    rows = []
    for key in ("mr", "mrr", "hits@10"):
        metric = rankstats.metric_resolver.make(key)

        def both(metric: rankstats.RankBasedMetric = metric) -> None:
            metric.expected_value(num_candidates)
            metric.variance(num_candidates)

        rows.append(
            Row(
                f"E+V {key}, n=1e7, C~U[1,1e9]",
                best_time(both, repeat=2),
                baseline="C.mean()",
                baseline_s=baseline,
                max_seconds=1.0,
            )
        )
    return rows
