"""Null moments of IAMR, HMR and the rank variance (E and V together) against np.mean(C).

Cases at huge candidate counts print the peak memory (tracemalloc, measured in a separate call)
in their name: it must not grow with C.
"""

from __future__ import annotations

import tracemalloc
from collections.abc import Callable
from typing import Any

import numpy as np

from _timing import Row, best_time
from rankstats.null.dispersion import weighted_variance_moments
from rankstats.null.reciprocal import harmonic_mean_moments, inverse_arithmetic_mean_moments


def _candidates(rng: np.random.Generator, n: int, distinct: int, c_max: int) -> np.ndarray:
    """``n`` candidate counts drawn from ``distinct`` values spread uniformly over [1, c_max]."""
    values = rng.choice(np.arange(1, c_max + 1), size=distinct, replace=False)
    return rng.choice(values, size=n)


def peak_megabytes(func: Callable[[], Any]) -> float:
    """The peak of memory allocated through Python's allocators during one call, in MB."""
    tracemalloc.start()
    try:
        func()
        return tracemalloc.get_traced_memory()[1] / 1e6
    finally:
        tracemalloc.stop()


def _huge_count_rows(rng: np.random.Generator) -> list[Row]:
    rows = []
    many = rng.integers(1, 10**9 + 1, size=10**6)  # ~1e6 distinct counts
    few_huge = rng.integers(10**14, 10**15 + 1, size=10)
    for name, function in (
        ("HMR", harmonic_mean_moments),
        ("IAMR", inverse_arithmetic_mean_moments),
    ):
        for label, c, target in (
            ("n=1e6, C~U[1, 1e9]", many, 2.0 if name == "HMR" else None),
            ("n=10, C~U[1e14, 1e15]", few_huge, None),
        ):
            peak = peak_megabytes(lambda f=function, c=c: f(c))
            seconds = best_time(lambda f=function, c=c: f(c), repeat=1 if c.size > 10 else 3)
            baseline = best_time(lambda c=c: np.mean(c), repeat=5)
            case = f"{name} E+V, {label} (peak {peak:.1f} MB)"
            rows.append(Row(case, seconds, "np.mean(C)", baseline, max_seconds=target))
    return rows


def run() -> list[Row]:
    """Time E + V at the sizes the targets name, plus two harder reciprocal cases."""
    rng = np.random.default_rng(0)
    rows = []
    mid = _candidates(rng, 10**5, 1000, 10**6)
    weights = rng.random(mid.size)  # every (C, w) pair distinct
    spread = np.full(10**4, 10**6)
    cases = [
        (
            "IAMR E+V, n=1e5, 1000 distinct C <= 1e6",
            inverse_arithmetic_mean_moments,
            mid,
            None,
            1.3,
        ),
        ("HMR E+V, n=1e5, 1000 distinct C <= 1e6", harmonic_mean_moments, mid, None, 1.3),
        (
            "IAMR E+V, n=1e5, 1e5 distinct (C, w)",
            inverse_arithmetic_mean_moments,
            mid,
            weights,
            None,
        ),
        ("HMR E+V, n=1e5, 1e5 distinct (C, w)", harmonic_mean_moments, mid, weights, None),
        ("HMR E+V, n=1e4, C=1e6 (delta method fails)", harmonic_mean_moments, spread, None, None),
    ]
    for case, function, c, w, target in cases:
        repeat = 3 if w is None else 1
        seconds = best_time(lambda f=function, c=c, w=w: f(c, w), repeat=repeat)
        baseline = best_time(lambda c=c: np.mean(c), repeat=5)
        rows.append(Row(case, seconds, "np.mean(C)", baseline, max_seconds=target))
    large = rng.integers(1, 10**6 + 1, size=10**7)
    seconds = best_time(lambda: weighted_variance_moments(large), repeat=3)
    baseline = best_time(lambda: np.mean(large), repeat=3)
    rows.append(Row("var(r) E+V, n=1e7, C~U[1, 1e6]", seconds, "np.mean(C)", baseline))
    large_weights = rng.random(large.size)
    seconds = best_time(lambda: weighted_variance_moments(large, large_weights), repeat=3)
    rows.append(Row("var(r) E+V, n=1e7, weighted", seconds, "np.mean(C)", baseline))
    rows.extend(_huge_count_rows(rng))
    return rows
