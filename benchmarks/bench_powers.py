"""Null moments of the geometric mean rank: E and V together, against one numpy pass over ln C."""

from __future__ import annotations

import numpy as np

from _timing import Row, best_time
from bench_reciprocal import peak_megabytes
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
    for label, c in (
        ("n=1e6, C~U[1, 1e9]", rng.integers(1, 10**9 + 1, size=10**6)),
        ("n=10, C~U[1e14, 1e15]", rng.integers(10**14, 10**15 + 1, size=10)),
    ):
        for sign, name in ((1, "GMR"), (-1, "IGMR")):
            peak = peak_megabytes(lambda c=c, sign=sign: geometric_mean_moments(c, sign=sign))
            seconds = best_time(lambda c=c, sign=sign: geometric_mean_moments(c, sign=sign))
            baseline = best_time(lambda c=c: np.log(c).mean(), repeat=3)
            case = f"{name} E+V, {label} (peak {peak:.1f} MB)"
            rows.append(Row(case, seconds, "np.log(C).mean()", baseline))
    return rows
