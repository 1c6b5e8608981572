"""Sweep the median's null moments over random input shapes for failures, not for digits.

Run from the repository root::

    PYTHONPATH=src python benchmarks/sweep_shapes.py [--seeds 1 2 3] [--cases 300] [--n-max 1e6]

Each case draws n log-uniform in 1..n-max and one of five shapes of candidate counts: clusters
(one to three groups of counts, each log-uniform up to 1e12 and as wide as its centre),
equal counts, counts log-uniform in 1..1e12, half the tasks (give or take two) at counts up to
200 and half at a huge count (the pinned median beside a long tail), and counts uniform up to
2000. It computes E and V of the median and the inverse median with warnings as errors and
prints every case that raises, returns a value that is not finite or a negative variance, takes
more than ``--slow`` seconds (timed under ``tracemalloc``, which slows numpy's allocations) or
allocates more than ``--max-mb`` at its peak; each such case is saved as ``.npy`` for replay.

This is how the shapes that the accuracy sweep (``sweep_accuracy.py``) had not drawn were
found: a ``np.repeat`` of a negative count at n = 1e6 (half at 2..39, half at 1e8..1e9), 8 to
80 s and a 59 GB allocation for equal or clustered counts near 1e10, and negative variances of
medians pinned at a small count beside 4e4 to 7e5 huge ones; and, of a change of this session
that built the far counts' powers as one block, 1.9 GB and 5 s at n = 9e5 (reverted). Over
5,000 cases it now reports none.
"""

from __future__ import annotations

import argparse
import time
import tracemalloc
import warnings
from collections.abc import Sequence
from pathlib import Path

import numpy as np

import rankstats.null.median as median_module
from rankstats import InverseMedianRank, MedianRank


def draw(rng: np.random.Generator, n_max: float) -> tuple[str, np.ndarray]:
    """One case: the name of its shape and its candidate counts."""
    n = max(int(np.exp(rng.uniform(0.0, np.log(n_max)))), 1)
    shape = int(rng.integers(0, 5))
    if shape == 0:
        parts = []
        sizes = rng.multinomial(n, rng.dirichlet(np.ones(int(rng.integers(1, 4)))))
        for size in sizes:
            low = int(np.exp(rng.uniform(0.0, np.log(1e12))))
            high = low + int(np.exp(rng.uniform(0.0, np.log(low + 1))))
            parts.append(rng.integers(low, high + 1, size=size))
        return "clusters", np.concatenate(parts)
    if shape == 1:
        return "equal", np.full(n, int(np.exp(rng.uniform(0.0, np.log(1e12)))))
    if shape == 2:
        counts = np.exp(rng.uniform(0.0, np.log(1e12), size=n)).astype(np.int64) + 1
        return "log-uniform", counts
    if shape == 3:
        half = min(max(n // 2 + int(rng.integers(-2, 3)), 0), n)
        small = int(rng.integers(1, 200))
        big = int(np.exp(rng.uniform(np.log(1e3), np.log(1e12))))
        counts = np.concatenate(
            (rng.integers(1, small + 1, size=half), rng.integers(big, 2 * big, size=n - half))
        )
        return "pinned", counts
    return "uniform", rng.integers(1, int(rng.integers(2, 2000)), size=n)


def check(counts: np.ndarray, slow: float, max_mb: float) -> str | None:
    """What is wrong with the moments of these counts, or ``None``."""
    median_module._CACHE.clear()
    tracemalloc.start()
    start = time.perf_counter()
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("error")
            moments = (
                MedianRank().expected_value(counts),
                MedianRank().variance(counts),
                InverseMedianRank().expected_value(counts),
                InverseMedianRank().variance(counts),
            )
    except Exception as error:  # every failure is reported
        return f"raised {error!r}"[:300]
    finally:
        peak_mb = tracemalloc.get_traced_memory()[1] / 1e6
        tracemalloc.stop()
    seconds = time.perf_counter() - start
    if not all(np.isfinite(moments)):
        return f"not finite: {moments}"
    if moments[1] < 0.0 or moments[3] < 0.0:
        return f"negative variance: {moments}"
    if seconds > slow:
        return f"slow: {seconds:.1f} s"
    if peak_mb > max_mb:
        return f"peak memory {peak_mb:.0f} MB"
    return None


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--seeds", type=int, nargs="+", default=[1, 2, 3])
    parser.add_argument("--cases", type=int, default=300)
    parser.add_argument("--n-max", type=float, default=1e6)
    parser.add_argument("--slow", type=float, default=2.0)
    parser.add_argument("--max-mb", type=float, default=300.0)
    parser.add_argument("--out", type=Path, default=Path("sweep_shapes_failures"))
    args = parser.parse_args(argv)
    failures = 0
    for seed in args.seeds:
        rng = np.random.default_rng(seed)
        for case in range(args.cases):
            shape, counts = draw(rng, args.n_max)
            problem = check(counts, args.slow, args.max_mb)
            if problem is not None:
                failures += 1
                args.out.mkdir(exist_ok=True)
                path = args.out / f"seed{seed}_case{case}.npy"
                np.save(path, counts)
                print(f"seed {seed} case {case} ({shape}, n = {counts.size}): {problem} [{path}]")
    print(f"{failures} of {len(args.seeds) * args.cases} cases failed")
    return 1 if failures else 0


if __name__ == "__main__":
    raise SystemExit(main())
