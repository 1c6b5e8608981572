r"""The paired bootstrap: confidence intervals for every model's value and every pair's difference.

Queries are drawn with replacement, the same draw for all models (the pairing is kept), and every
statistic is evaluated on each resample. Without groups this is :func:`scipy.stats.bootstrap` with
a vectorised statistic of the resampled query indices (so its percentile and BCa intervals are
scipy's own); with groups the queries are drawn *within* each group, keeping the group sizes fixed
(a stratified bootstrap, which scipy does not offer), and the intervals are computed here by the
same formulas (Efron & Tibshirani, 1993, 14.3 and 15.4), with the acceleration of the BCa interval
from the jackknife over all queries. Where the BCa interval is undefined (a jackknife without
spread, as for the median of tied ranks) the percentile interval is given instead.

The bootstrap distribution also gives a test: the shifted distribution
:math:`\theta^*_b - \hat\theta` approximates the statistic's distribution under
:math:`\theta = 0`, so :math:`p = (1 + \#\{|\theta^*_b - \hat\theta| \ge |\hat\theta|\}) / (B + 1)`.
"""

from __future__ import annotations

import warnings
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Literal

import numpy as np
from scipy import special, stats

from rankstats.arrays import FloatArray, IntArray

__all__ = ["INTERVALS", "BootstrapResult", "Interval", "bootstrap_pvalues", "paired_bootstrap"]

Interval = Literal["bca", "percentile"]
#: the interval methods and their names in reports
INTERVALS: dict[str, str] = {"bca": "BCa", "percentile": "percentile"}

Statistic = Callable[[IntArray], FloatArray]


@dataclass(frozen=True)
class BootstrapResult:
    """Intervals of every statistic: ``low`` and ``high`` of shape (K,), and the distribution."""

    estimate: FloatArray
    low: FloatArray
    high: FloatArray
    distribution: FloatArray


def _degenerate(estimate: FloatArray, distribution: FloatArray) -> FloatArray:
    """Where every resample gives the estimate, the interval is that single point."""
    with np.errstate(invalid="ignore"):
        same: FloatArray = np.all(distribution == estimate[:, None], axis=-1)
    return same


def _scipy_bootstrap(
    statistic: Statistic,
    num_queries: int,
    *,
    n_resamples: int,
    confidence_level: float,
    method: Interval,
    rng: np.random.Generator,
    batch: int,
) -> tuple[FloatArray, FloatArray, FloatArray]:
    def vectorized(index: IntArray, axis: int = -1) -> FloatArray:
        return statistic(index)

    with warnings.catch_warnings(), np.errstate(all="ignore"):
        warnings.simplefilter("ignore", stats.DegenerateDataWarning)
        result = stats.bootstrap(
            (np.arange(num_queries),),
            vectorized,
            vectorized=True,
            paired=False,
            n_resamples=n_resamples,
            batch=batch,
            confidence_level=confidence_level,
            method=method,
            rng=rng,
        )
    low, high = result.confidence_interval
    return np.asarray(low, np.float64), np.asarray(high, np.float64), result.bootstrap_distribution


def _stratified_distribution(
    statistic: Statistic,
    strata: Sequence[IntArray],
    n_resamples: int,
    rng: np.random.Generator,
    batch: int,
) -> FloatArray:
    parts = []
    for start in range(0, n_resamples, batch):
        rows = min(batch, n_resamples - start)
        index = np.concatenate(
            [members[rng.integers(0, members.size, (rows, members.size))] for members in strata],
            axis=1,
        )
        parts.append(statistic(index))
    return np.concatenate(parts, axis=-1)


def _jackknife(statistic: Statistic, num_queries: int, batch: int) -> FloatArray:
    """The statistics with each query left out in turn, shape (K, n)."""
    parts = []
    for start in range(0, num_queries, batch):
        stop = min(start + batch, num_queries)
        keep = np.ones((stop - start, num_queries), dtype=bool)
        keep[np.arange(stop - start), np.arange(start, stop)] = False
        index = np.broadcast_to(np.arange(num_queries), keep.shape)[keep]
        parts.append(statistic(index.reshape(stop - start, num_queries - 1)))
    return np.concatenate(parts, axis=-1)


def _interval_levels(
    method: Interval,
    estimate: FloatArray,
    distribution: FloatArray,
    statistic: Statistic,
    num_queries: int,
    alpha: float,
    batch: int,
) -> FloatArray:
    """The quantile levels of each statistic's interval, shape (K, 2)."""
    if method == "percentile":
        return np.broadcast_to(np.array([alpha, 1.0 - alpha]), (estimate.size, 2))
    resamples = distribution.shape[-1]
    below = np.count_nonzero(distribution < estimate[:, None], axis=-1)
    at_most = np.count_nonzero(distribution <= estimate[:, None], axis=-1)
    bias = special.ndtri((below + at_most) / (2.0 * resamples))
    leave_one_out = _jackknife(statistic, num_queries, batch)
    spread = (num_queries - 1) * (leave_one_out.mean(axis=-1, keepdims=True) - leave_one_out)
    numerator = np.sum(spread**3, axis=-1) / num_queries**3
    denominator = np.sum(spread**2, axis=-1) / num_queries**2
    acceleration = numerator / denominator**1.5 / 6.0
    z = float(special.ndtri(alpha))
    levels = [
        special.ndtr(bias + (bias + zq) / (1.0 - acceleration * (bias + zq))) for zq in (z, -z)
    ]
    return np.stack(levels, axis=-1)


def paired_bootstrap(
    statistic: Statistic,
    num_queries: int,
    *,
    strata: Sequence[IntArray] | None,
    n_resamples: int,
    confidence_level: float,
    method: Interval,
    rng: np.random.Generator,
    batch: int,
) -> BootstrapResult:
    """Bootstrap every statistic of ``statistic`` over the queries, paired across models.

    Parameters
    ----------
    statistic : callable
        Maps query indices of shape (..., k) to statistics of shape (K, ...).
    num_queries : int
        The number of queries, at least 2.
    strata : sequence of numpy.ndarray, optional
        The query indices of each group, to resample within groups; ``None`` resamples all
        queries together (with :func:`scipy.stats.bootstrap`).
    n_resamples : int
        The number of bootstrap resamples.
    confidence_level : float
        The intervals' coverage, in (0, 1).
    method : {"bca", "percentile"}
        The interval.
    rng : numpy.random.Generator
        The source of the resamples.
    batch : int
        The resamples (and jackknife rows) per block.

    Returns
    -------
    BootstrapResult
        The estimates, intervals and the bootstrap distribution, shape (K, n_resamples).
    """
    estimate = np.asarray(statistic(np.arange(num_queries)), dtype=np.float64)
    if strata is None:
        low, high, distribution = _scipy_bootstrap(
            statistic,
            num_queries,
            n_resamples=n_resamples,
            confidence_level=confidence_level,
            method=method,
            rng=rng,
            batch=batch,
        )
    else:
        alpha = (1.0 - confidence_level) / 2.0
        with np.errstate(all="ignore"):
            distribution = _stratified_distribution(statistic, strata, n_resamples, rng, batch)
            levels = _interval_levels(
                method, estimate, distribution, statistic, num_queries, alpha, batch
            )
            bounds = np.full((estimate.size, 2), np.nan)
            valid = ~np.isnan(levels).any(axis=-1)
            if valid.any():
                bounds[valid] = stats.quantile(distribution[valid], levels[valid], axis=-1)
        low, high = bounds[:, 0], bounds[:, 1]
    # BCa is undefined where the jackknife has no spread (the median on tied ranks): give the
    # percentile interval there, which BCa reduces to without bias and acceleration
    missing = np.isnan(low) | np.isnan(high)
    missing &= ~np.isnan(estimate) & ~np.isnan(distribution).any(axis=-1)
    if missing.any():
        alpha = (1.0 - confidence_level) / 2.0
        fallback = stats.quantile(distribution[missing], np.array([alpha, 1.0 - alpha]), axis=-1)
        low, high = low.copy(), high.copy()
        low[missing], high[missing] = fallback[:, 0], fallback[:, 1]
    point = _degenerate(estimate, distribution)
    low = np.where(point, estimate, low)
    high = np.where(point, estimate, high)
    return BootstrapResult(estimate, low, high, np.asarray(distribution, dtype=np.float64))


def bootstrap_pvalues(estimate: FloatArray, distribution: FloatArray) -> FloatArray:
    r"""Two-sided p-values of :math:`\theta = 0` from the shifted bootstrap distribution.

    Returns :math:`(1 + \#\{|\theta^*_b - \hat\theta| \ge |\hat\theta|\}) / (B + 1)`.
    """
    resamples = distribution.shape[-1]
    with np.errstate(invalid="ignore"):
        extreme = np.abs(distribution - estimate[:, None]) >= np.abs(estimate)[:, None] * (
            1.0 - 1e-9
        )
    pvalue = (np.count_nonzero(extreme, axis=-1) + 1.0) / (resamples + 1.0)
    pvalue[np.isnan(estimate)] = np.nan
    result: FloatArray = pvalue
    return result
