r"""The paired randomization (permutation) test, for every metric and pair of models at once.

Under the null hypothesis that two models are exchangeable on every query, swapping their ranks on
any subset of the queries gives an equally likely data set. The test statistic is the metric's
difference :math:`T = M(A) - M(B)`, recomputed on swapped data: for a mean of per-query terms the
swap flips the sign of the query's term difference; for other metrics (geometric and harmonic mean
ranks, the median, the inverse forms) the metric itself is recomputed on the swapped ranks. The
two-sided p-value is the fraction of the :math:`2^n` swap patterns with :math:`|T^*| \ge |T|`:

- **exact**, by enumerating all :math:`2^n` patterns, where they fit in the requested number of
  resamples (as :func:`scipy.stats.permutation_test` decides);
- otherwise **Monte-Carlo**, from :math:`m` random patterns, as :math:`p = (b + 1) / (m + 1)`
  with :math:`b` the number of patterns at least as extreme, which is never 0 and is a valid
  p-value (Phipson & Smyth, 2010); its standard error :math:`\sqrt{p (1 - p) / m}` is reported.

One block of swap patterns serves every metric and every pair, and all *terms* statistics of a
block come from one matrix product
(:meth:`~rankstats.compare.statistics.StatisticSet.swapped_differences`), so the cost is a few
passes over a (block, n) matrix, nearly independent of the number of metrics.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from rankstats.arrays import FloatArray
from rankstats.compare.statistics import StatisticSet
from rankstats.null.sampling import MAX_BLOCK_ELEMENTS

__all__ = ["MAX_EXACT_QUERIES", "RELATIVE_TOLERANCE", "RandomizationResult", "randomization_test"]

#: the most queries whose :math:`2^n` swap patterns are enumerated (16 million patterns)
MAX_EXACT_QUERIES = 24
#: values within this relative distance of each other count as equal (rounding): the resampled and
#: the observed statistic here, the per-query differences of the paired t-test in compare
RELATIVE_TOLERANCE = 1e-9


@dataclass(frozen=True)
class RandomizationResult:
    """The randomization test of every metric and pair: arrays of shape (num_metrics, num_pairs)."""

    statistic: FloatArray
    pvalue: FloatArray
    standard_error: FloatArray
    n_resamples: int
    exact: bool


def block_rows(num_queries: int, batch: int | None) -> int:
    """The resamples per block: ``batch`` if given, else as many as fit in a bounded block."""
    if batch is not None:
        return batch
    return max(1, MAX_BLOCK_ELEMENTS // max(num_queries, 1))


def _exact_swaps(start: int, stop: int, num_queries: int) -> FloatArray:
    codes = np.arange(start, stop, dtype=np.int64)
    bits = (codes[:, None] >> np.arange(num_queries, dtype=np.int64)) & 1
    return bits.astype(np.float64)


def _random_swaps(rows: int, num_queries: int, rng: np.random.Generator) -> FloatArray:
    packed = rng.integers(0, 256, size=(rows, (num_queries + 7) // 8), dtype=np.uint8)
    return np.unpackbits(packed, axis=1, count=num_queries).astype(np.float64)


def randomization_test(
    statistics: StatisticSet,
    n_resamples: int,
    *,
    exact: bool | None,
    rng: np.random.Generator,
    batch: int | None = None,
) -> RandomizationResult:
    r"""Run the paired randomization test of every metric and pair of ``statistics``.

    Parameters
    ----------
    statistics : StatisticSet
        The metrics and models.
    n_resamples : int
        The number of random swap patterns of the Monte-Carlo test.
    exact : bool or None
        Enumerate all :math:`2^n` swap patterns (``True``), draw random ones (``False``), or
        enumerate where :math:`2^n \\le` ``n_resamples`` (``None``).
    rng : numpy.random.Generator
        The source of the random patterns.
    batch : int, optional
        The number of patterns per block; by default blocks of about 32 MiB.

    Returns
    -------
    RandomizationResult
        The observed differences, p-values and their Monte-Carlo standard errors (0 if exact).
    """
    n = statistics.num_queries
    if exact is None:
        exact = n <= MAX_EXACT_QUERIES and 2**n <= n_resamples
    if exact and n > MAX_EXACT_QUERIES:
        raise ValueError(
            f"exact=True enumerates all 2**n swap patterns, which is feasible up to "
            f"{MAX_EXACT_QUERIES} queries; got {n} queries (use exact=False or None)"
        )
    observed = statistics.swapped_differences(np.zeros((1, n)))[:, :, 0]
    with np.errstate(invalid="ignore"):
        threshold = np.abs(observed) * (1.0 - RELATIVE_TOLERANCE)
    count = np.zeros(observed.shape, dtype=np.int64)
    total = 2**n if exact else n_resamples
    rows = block_rows(n, batch)
    with np.errstate(invalid="ignore", divide="ignore", over="ignore"):
        for start in range(0, total, rows):
            stop = min(start + rows, total)
            swaps = _exact_swaps(start, stop, n) if exact else _random_swaps(stop - start, n, rng)
            differences = statistics.swapped_differences(swaps)
            count += (np.abs(differences) >= threshold[:, :, None]).sum(axis=-1)
    if exact:
        pvalue = count / float(total)
        error = np.zeros_like(pvalue)
    else:
        pvalue = (count + 1.0) / (total + 1.0)
        error = np.sqrt(pvalue * (1.0 - pvalue) / total)
    undefined = np.isnan(observed)
    pvalue[undefined] = np.nan
    error[undefined] = np.nan
    return RandomizationResult(observed, pvalue, error, int(total), bool(exact))
