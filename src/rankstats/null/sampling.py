r"""Monte-Carlo under the null: drawing rank blocks, streamed moments, bootstrap intervals.

Ranks are drawn as :math:`\lfloor u \, C \rfloor + 1` from uniform doubles :math:`u \in [0, 1)`,
which is exactly uniform on :math:`\{1, \dots, C\}` up to the 53-bit resolution of ``u`` and
cheaper than ``Generator.integers(1, C + 1)`` with an array of bounds. Samples are produced in
blocks of at most :data:`MAX_BLOCK_ELEMENTS` numbers, so memory stays bounded whatever the number of
samples, and every block is evaluated by one vectorised call.

:func:`monte_carlo_moments` never keeps the samples: each block is reduced to its count, mean and
sum of squared deviations, merged into a running state with the parallel update of Chan, Golub
and LeVeque (1979), which is as accurate as two passes over all samples. Its memory is that of
one block, whatever ``num_samples``; several metrics share every drawn block.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Iterable, Iterator, Sequence, Set
from dataclasses import dataclass
from typing import Any, Literal, Protocol, TypeAlias

import numpy as np
import numpy.typing as npt

from rankstats.arrays import FloatArray, IntArray
from rankstats.progress import progress_bar
from rankstats.validation import (
    check_confidence_level,
    check_generator,
    check_variance_samples,
    validate_null_input,
)

__all__ = [
    "MAX_BLOCK_ELEMENTS",
    "MomentAccumulator",
    "MonteCarloEstimate",
    "Seed",
    "bootstrap_interval",
    "evaluate_on_samples",
    "iter_rank_blocks",
    "metric_list",
    "monte_carlo_moments",
    "null_moments_monte_carlo",
    "sample_ranks",
]

#: what every random entry point accepts: a seed, a generator, or None for fresh entropy
Seed: TypeAlias = int | np.random.Generator | None

#: the most numbers held in one block of sampled ranks (32 MiB of float64)
MAX_BLOCK_ELEMENTS = 2**22


def metric_list(metrics: Iterable[Any], name: str = "metrics") -> list[Evaluable]:
    """The metrics of a sequence of metrics, metric classes or names, resolved and checked.

    A name or class is made into a metric by :data:`rankstats.registry.metric_resolver` (an
    unknown name raises :class:`~rankstats.errors.UnknownMetricError` with close matches);
    anything else raises a ``TypeError`` naming ``name``. At least one metric is needed.
    """
    from rankstats.base import RankBasedMetric
    from rankstats.registry import metric_resolver

    found: list[Evaluable] = []
    for item in metrics:
        if isinstance(item, str) or (isinstance(item, type) and issubclass(item, RankBasedMetric)):
            item = metric_resolver.make(item)
        if not isinstance(item, RankBasedMetric):
            raise TypeError(
                f"{name} must be metrics, metric classes or their names, got "
                f"{type(item).__name__}: {item!r}"
            )
        found.append(item)
    if not found:
        raise ValueError(f"{name} must name at least one metric, got none")
    return found


def sample_ranks(
    num_candidates: IntArray, num_samples: int, generator: np.random.Generator
) -> FloatArray:
    r"""Draw ``num_samples`` rank vectors with :math:`r_i \sim \mathcal{U}\{1, \dots, C_i\}`.

    Returns
    -------
    numpy.ndarray of shape (num_samples, n)
        Float ranks, integer-valued.

    Examples
    --------
    >>> ranks = sample_ranks(np.array([1, 3]), 4, np.random.default_rng(0))
    >>> ranks.shape, bool((ranks[:, 0] == 1).all()), bool((ranks <= 3).all())
    ((4, 2), True, True)
    """
    ranks = generator.random((num_samples, num_candidates.size))
    ranks *= num_candidates
    np.floor(ranks, out=ranks)
    ranks += 1.0
    return ranks


def _block_rows(num_candidates: IntArray) -> int:
    return max(1, MAX_BLOCK_ELEMENTS // max(1, num_candidates.size))


def iter_rank_blocks(
    num_candidates: IntArray, num_samples: int, generator: np.random.Generator
) -> Iterator[FloatArray]:
    """Yield sampled rank blocks of bounded size that together hold ``num_samples`` rows."""
    rows = _block_rows(num_candidates)
    for start in range(0, num_samples, rows):
        yield sample_ranks(num_candidates, min(rows, num_samples - start), generator)


class Evaluable(Protocol):
    """Anything with a metric's vectorised evaluation hook."""

    def _evaluate(
        self, ranks: FloatArray, num_candidates: IntArray | None, weights: FloatArray | None
    ) -> FloatArray | float: ...


def evaluate_on_samples(
    metrics: Sequence[Evaluable],
    num_candidates: IntArray,
    weights: FloatArray | None,
    num_samples: int,
    generator: np.random.Generator,
) -> FloatArray:
    """Evaluate several metrics on the same ``num_samples`` rank vectors drawn from the null.

    Each block of ranks is drawn once and evaluated by every metric with one vectorised call, so
    drawing, the largest cost of Monte-Carlo, is shared.

    Returns
    -------
    numpy.ndarray of shape (len(metrics), num_samples)
        Row ``j`` holds metric ``j``'s values.
    """
    values = np.empty((len(metrics), num_samples))
    start = 0
    for block in iter_rank_blocks(num_candidates, num_samples, generator):
        stop = start + block.shape[0]
        for row, metric in enumerate(metrics):
            values[row, start:stop] = metric._evaluate(block, num_candidates, weights)
        start = stop
    return values


@dataclass(frozen=True)
class MonteCarloEstimate:
    r"""A Monte-Carlo estimate of a metric's null mean and variance.

    Attributes
    ----------
    expected_value : float
        The sample mean of the metric over the draws, estimating :math:`\mathbb{E}[M]`.
    variance : float
        The unbiased (``ddof=1``) sample variance, estimating :math:`\mathbb{V}[M]`; NaN for a
        single sample.
    num_samples : int
        The number of rank vectors drawn.
    """

    expected_value: float
    variance: float
    num_samples: int

    @property
    def std(self) -> float:
        """The estimated null standard deviation, the square root of :attr:`variance`."""
        return math.sqrt(self.variance)

    @property
    def standard_error(self) -> float:
        r"""The standard error of :attr:`expected_value`, :math:`\sqrt{s^2 / N}`."""
        return math.sqrt(self.variance / self.num_samples)


class MomentAccumulator:
    """A mergeable running count, mean and sum of squared deviations of several series.

    Blocks of values are reduced to their own mean and sum of squared deviations and merged with
    the pairwise update of Chan, Golub and LeVeque, so no value is kept and the result matches a
    two-pass computation over all values to rounding.

    Parameters
    ----------
    size : int
        The number of series (one per metric).

    Examples
    --------
    >>> acc = MomentAccumulator(1)
    >>> acc.add(np.array([[1.0, 2.0]]))
    >>> acc.add(np.array([[3.0, 4.0, 5.0]]))
    >>> float(acc.mean[0]), float(acc.variance()[0])
    (3.0, 2.5)
    """

    def __init__(self, size: int) -> None:
        self.count = 0
        self.mean: FloatArray = np.zeros(size)
        self.m2: FloatArray = np.zeros(size)

    def add(self, block: FloatArray) -> None:
        """Add a block of shape (size, m): ``m`` new values of every series."""
        m = block.shape[-1]
        if m == 0:
            return
        mean = block.mean(axis=-1)
        m2 = ((block - mean[:, None]) ** 2).sum(axis=-1)
        self.merge(m, mean, m2)

    def merge(self, count: int, mean: FloatArray, m2: FloatArray) -> None:
        """Merge another state (count, per-series mean and sum of squared deviations)."""
        total = self.count + count
        delta = mean - self.mean
        self.mean = self.mean + delta * (count / total)
        self.m2 = self.m2 + m2 + delta * delta * (self.count * count / total)
        self.count = total

    def variance(self) -> FloatArray:
        """The unbiased (``ddof=1``) variance of each series; NaN with fewer than 2 values."""
        if self.count < 2:
            return np.full(self.mean.shape, math.nan)
        return np.asarray(self.m2 / (self.count - 1), dtype=np.float64)


def monte_carlo_moments(
    metrics: Sequence[Evaluable],
    num_candidates: IntArray,
    weights: FloatArray | None,
    num_samples: int,
    generator: np.random.Generator,
    *,
    progress: bool | None = False,
    desc: str = "Monte-Carlo",
) -> list[MonteCarloEstimate]:
    """Streamed Monte-Carlo mean and variance of several metrics from one shared draw (clean input).

    Memory is that of one block of at most :data:`MAX_BLOCK_ELEMENTS` ranks whatever
    ``num_samples``; every block is drawn once and evaluated by every metric. The draws, and so
    the result, are those of :func:`evaluate_on_samples` with the same generator state.

    Returns
    -------
    list of MonteCarloEstimate
        One per metric, in order.
    """
    accumulator = MomentAccumulator(len(metrics))
    rows = _block_rows(num_candidates)
    with progress_bar(-(-num_samples // rows), desc, progress) as bar:
        for block in iter_rank_blocks(num_candidates, num_samples, generator):
            values = np.empty((len(metrics), block.shape[0]))
            for row, metric in enumerate(metrics):
                values[row] = metric._evaluate(block, num_candidates, weights)
            accumulator.add(values)
            bar.update(1)
    variances = accumulator.variance()
    return [
        MonteCarloEstimate(float(mean), float(variance), num_samples)
        for mean, variance in zip(accumulator.mean, variances, strict=True)
    ]


def null_moments_monte_carlo(
    metrics: Evaluable | str | Sequence[Evaluable | str],
    num_candidates: npt.ArrayLike,
    num_samples: int,
    weights: npt.ArrayLike | None = None,
    *,
    seed: Seed = None,
    progress: bool | None = False,
    num_ranks: int | None = None,
) -> MonteCarloEstimate | list[MonteCarloEstimate]:
    r"""Monte-Carlo estimates of null means and variances, in bounded memory.

    Draws ``num_samples`` rank vectors :math:`r_i \sim \mathcal{U}\{1..C_i\}` in blocks, evaluates
    every metric on each block and keeps only running moments, so memory does not grow with
    ``num_samples``. The result is reproducible from ``seed``.

    Parameters
    ----------
    metrics : RankBasedMetric, str or sequence of them
        One metric, or several sharing the same draws: metrics or their names
        (:func:`metric_list`).
    num_candidates : int or array-like of shape (n,)
        The number of candidates :math:`C_i` of each task (a scalar needs ``num_ranks``).
    num_samples : int
        The number of rank vectors to draw; at least 2.
    weights : array-like of shape (n,), optional
        Non-negative weights, not all zero; every metric must support weights.
    seed : int or numpy.random.Generator, optional
        Seed or generator.
    progress : bool or None, default=False
        Show a progress bar over the blocks (see :mod:`rankstats.progress`).
    num_ranks : int, optional
        The number of tasks, with a scalar ``num_candidates``.

    Returns
    -------
    MonteCarloEstimate or list of MonteCarloEstimate
        For one metric its estimate, else one per metric.

    Examples
    --------
    >>> from rankstats import ArithmeticMeanRank
    >>> est = null_moments_monte_carlo(ArithmeticMeanRank(), [3, 3], 20_000, seed=0)
    >>> abs(est.expected_value - 2.0) < 4 * est.standard_error
    True
    """
    if isinstance(metrics, Set):  # one estimate per metric, in the metrics' order
        raise TypeError(f"metrics must be a metric or a sequence of metrics, got a set: {metrics}")
    given: Any = metrics
    single = not isinstance(given, Sequence) or isinstance(given, str)
    items = metric_list([given] if single else given)
    check_generator(seed, "seed")
    unweighted = [m for m in items if not getattr(m, "supports_weights", True)]
    candidates, clean_weights = validate_null_input(
        num_candidates,
        weights,
        num_ranks=num_ranks,
        supports_weights=not unweighted,
        metric=repr(unweighted[0]) if unweighted else "this metric",
    )
    num_samples = check_variance_samples(num_samples)
    estimates = monte_carlo_moments(
        items,
        candidates,
        clean_weights,
        num_samples,
        np.random.default_rng(seed),
        progress=progress,
    )
    return estimates[0] if single else estimates


def bootstrap_interval(
    values: FloatArray,
    statistic: Literal["mean", "variance"],
    *,
    confidence_level: float,
    num_resamples: int,
    generator: np.random.Generator,
) -> tuple[float, float]:
    """Percentile-bootstrap interval of the mean or the (ddof=1) variance of ``values``.

    Resamples are drawn and reduced in bounded blocks, one vectorised call per block.

    Parameters
    ----------
    confidence_level : float
        The interval's coverage as a fraction in (0, 1), e.g. 0.95 (scipy's convention).

    Returns
    -------
    tuple of float
        The lower and upper end of the central interval.
    """
    confidence_level = check_confidence_level(confidence_level)
    reduce: Callable[[FloatArray], FloatArray]
    if statistic == "mean":

        def reduce(block: FloatArray) -> FloatArray:
            return np.asarray(block.mean(axis=-1), dtype=np.float64)

    else:

        def reduce(block: FloatArray) -> FloatArray:
            return np.asarray(block.var(axis=-1, ddof=1), dtype=np.float64)

    m = values.size
    rows = max(1, MAX_BLOCK_ELEMENTS // m)
    estimates = np.empty(num_resamples)
    for start in range(0, num_resamples, rows):
        stop = min(num_resamples, start + rows)
        indices = generator.integers(0, m, size=(stop - start, m))
        estimates[start:stop] = reduce(values[indices])
    tail = 50.0 * (1.0 - confidence_level)
    low, high = np.percentile(estimates, [tail, 100.0 - tail])
    return float(low), float(high)
