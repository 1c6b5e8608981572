"""Null moments of the geometric mean rank: E and V together, against one numpy pass over ln C."""

from __future__ import annotations

import numpy as np

from _timing import Row, best_time
from rankstats.null.powers import geometric_mean_moments

#: (number of ranks, largest number of candidates, target seconds for E and V together)
CASES = ((10**6, 10**7, 0.5), (10**7, 10**9, 5.0))


def run() -> list[Row]:
    """Time E + V of the GMR for uniformly spread candidate counts."""
    rng = np.random.default_rng(0)
    rows = []
    for n, c_max, target in CASES:
        num_candidates = rng.integers(1, c_max + 1, size=n)
        seconds = best_time(lambda c=num_candidates: geometric_mean_moments(c), repeat=3)
        baseline = best_time(lambda c=num_candidates: np.log(c).mean(), repeat=3)
        rows.append(
            Row(
                case=f"GMR E+V, n={n:.0e}, C~U[1, {c_max:.0e}]",
                seconds=seconds,
                baseline="np.log(C).mean()",
                baseline_s=baseline,
                max_seconds=target,
            )
        )
    return rows
