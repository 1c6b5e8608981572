"""Null moments of HMR and IAMR with a distinct weight per task, against np.mean(C).

Weights ~ U(0.5, 2), all distinct, so every task is its own pair (C, w): the harmonic transform
is summed through lattice tables (rankstats.null.lattice). One row also times the pair-by-pair
sums (each pair's transform at each node, the method before the lattice) on the same input, and
the largest cases print their peak memory (tracemalloc, measured in a separate call).
"""

from __future__ import annotations

import numpy as np

from _timing import Row, best_time
from bench_reciprocal import peak_megabytes
from rankstats.null import reciprocal
from rankstats.null.reciprocal import harmonic_mean_moments, inverse_arithmetic_mean_moments


def _counts(rng: np.random.Generator, shape: str, n: int) -> np.ndarray:
    if shape == "5 distinct C":
        return rng.choice([100, 1000, 5000, 14541, 20000], n)
    if shape == "C~U[100, 2e4]":
        return rng.integers(100, 20_001, n)
    if shape == "C~U[1, 1e9]":
        return rng.integers(1, 10**9 + 1, n)
    return rng.integers(10**14, 10**15 + 1, n)  # C~U[1e14, 1e15]


def _pair_by_pair(c: np.ndarray, w: np.ndarray) -> tuple[float, float]:
    saved = reciprocal._LATTICE_PAIRS
    reciprocal._LATTICE_PAIRS = 10**12
    try:
        return harmonic_mean_moments(c, w)
    finally:
        reciprocal._LATTICE_PAIRS = saved


def run() -> list[Row]:
    """E + V with distinct weights at n = 1e5 and 1e6, and the lattice against pair by pair."""
    rng = np.random.default_rng(0)
    rows = []
    for n, target in ((10**5, 0.5), (10**6, 3.0)):
        w = rng.uniform(0.5, 2.0, n)
        for shape in ("5 distinct C", "C~U[100, 2e4]", "C~U[1, 1e9]", "C~U[1e14, 1e15]"):
            c = _counts(rng, shape, n)
            label = f"HMR E+V, n={n:.0e}, distinct w, {shape}"
            if n == 10**6 and shape in ("C~U[1, 1e9]", "C~U[1e14, 1e15]"):
                peak = peak_megabytes(lambda c=c, w=w: harmonic_mean_moments(c, w))
                label += f" (peak {peak:.0f} MB)"
            seconds = best_time(lambda c=c, w=w: harmonic_mean_moments(c, w), repeat=1)
            baseline = best_time(lambda c=c: np.mean(c), repeat=5)
            rows.append(Row(label, seconds, "np.mean(C)", baseline, max_seconds=target))
        c = _counts(rng, "C~U[1, 1e9]", n)
        seconds = best_time(lambda c=c, w=w: inverse_arithmetic_mean_moments(c, w), repeat=1)
        baseline = best_time(lambda c=c: np.mean(c), repeat=5)
        label = f"IAMR E+V, n={n:.0e}, distinct w, C~U[1, 1e9]"
        rows.append(Row(label, seconds, "np.mean(C)", baseline, max_seconds=target))
    n = 10**4
    c, w = _counts(rng, "C~U[1, 1e9]", n), rng.uniform(0.5, 2.0, n)
    seconds = best_time(lambda: harmonic_mean_moments(c, w), repeat=3)
    baseline = best_time(lambda: _pair_by_pair(c, w), repeat=1)
    label = "HMR E+V, n=1e4, distinct w, C~U[1, 1e9], lattice"
    rows.append(Row(label, seconds, "pair-by-pair sums", baseline, max_ratio=0.25))
    return rows
