"""High-precision (mpmath) references shared by the numeric tests.

The power sums are the accuracy sweep's (``benchmarks/sweep_reference.py``), written
independently of rankstats: one reference for the tests and the sweep.
"""

from __future__ import annotations

import sys
from pathlib import Path

import mpmath as mp

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "benchmarks"))

from sweep_reference import power_sum as _power_sum


def power_sum(n: int, q: float) -> mp.mpf:
    """Reference ``sum_{j <= n} j^q``: direct for small ``n``, else zeta(-q) + Euler-Maclaurin."""
    return _power_sum(n, mp.mpf(q))
