r"""Monte-Carlo under the null: drawing rank blocks and bootstrapping confidence intervals.

Ranks are drawn as :math:`\\lfloor u \\, C \\rfloor + 1` from uniform doubles :math:`u \\in [0, 1)`,
which is exactly uniform on :math:`\\{1, \\dots, C\\}` up to the 53-bit resolution of ``u`` and
cheaper than ``Generator.integers(1, C + 1)`` with an array of bounds. Samples are produced in
blocks of at most :data:`MAX_BLOCK_ELEMENTS` numbers, so memory stays bounded whatever the number of
samples, and every block is evaluated by one vectorised call.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Sequence
from typing import Literal, Protocol, TypeAlias

import numpy as np

from rankstats.arrays import FloatArray, IntArray
from rankstats.validation import check_confidence_level

__all__ = [
    "MAX_BLOCK_ELEMENTS",
    "Seed",
    "bootstrap_interval",
    "evaluate_on_samples",
    "iter_rank_blocks",
    "sample_ranks",
]

#: what every random entry point accepts: a seed, a generator, or None for fresh entropy
Seed: TypeAlias = int | np.random.Generator | None

#: the most numbers held in one block of sampled ranks (32 MiB of float64)
MAX_BLOCK_ELEMENTS = 2**22


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


def iter_rank_blocks(
    num_candidates: IntArray, num_samples: int, generator: np.random.Generator
) -> Iterator[FloatArray]:
    """Yield sampled rank blocks of bounded size that together hold ``num_samples`` rows."""
    rows = max(1, MAX_BLOCK_ELEMENTS // num_candidates.size)
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
