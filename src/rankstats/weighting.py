r"""Weighted aggregation: pairwise dot products and a weighted median.

Weights are scaling factors with :func:`numpy.average` semantics, :math:`a_i = w_i / \sum_j w_j`;
the null moments of weighted means are :meth:`rankstats.null.tasks.Tasks.mean` and
:meth:`~rankstats.null.tasks.Tasks.mean_variance`.
"""

from __future__ import annotations

import math
from typing import Any, TypeGuard

import numpy as np
import numpy.typing as npt

from rankstats.arrays import FloatArray

__all__ = [
    "pairwise_dot",
    "weighted_mean",
    "weighted_median",
]


#: the machine epsilon of float64
_EPSILON = float(np.finfo(np.float64).eps)
#: products summed per block by :func:`pairwise_dot` (512 KiB of scratch)
_DOT_BLOCK = 1 << 16


def pairwise_dot(x: FloatArray | float, y: FloatArray | float) -> float:
    r""":math:`\sum_i x_i y_i` with a relative error that does not grow with the length.

    :func:`numpy.dot` hands long vectors to BLAS, which sums in order: its error grows like
    :math:`n \varepsilon` in the worst case (3e-12 relative at :math:`n = 10^7`). Here blocks of
    products are summed pairwise by :func:`numpy.sum` (error :math:`O(\log n)\, \varepsilon`)
    and the block sums are added exactly by :func:`math.fsum`, with bounded scratch memory.
    Scalars broadcast.

    Examples
    --------
    >>> pairwise_dot(np.array([1.0, 2.0]), np.array([3.0, 4.0]))
    11.0
    >>> x = np.random.default_rng(0).random(10**6)
    >>> abs(pairwise_dot(x, x) - math.fsum(x * x)) <= 1e-15 * math.fsum(x * x)
    True
    """
    if _short_vector(x) and (isinstance(y, float) or (_short_vector(y) and y.shape == x.shape)):
        # the common case, without broadcasting: the same products and the same pairwise sum
        return float((x * y).sum())
    xs, ys = np.broadcast_arrays(np.asarray(x, dtype=np.float64), np.asarray(y, dtype=np.float64))
    if xs.ndim == 0:
        return float(xs * ys)
    if xs.size <= _DOT_BLOCK:
        return float(np.sum(xs * ys))
    return math.fsum(
        float(np.sum(xs[i : i + _DOT_BLOCK] * ys[i : i + _DOT_BLOCK]))
        for i in range(0, xs.size, _DOT_BLOCK)
    )


def _short_vector(x: object) -> TypeGuard[FloatArray]:
    """Whether ``x`` is a float64 vector that :func:`pairwise_dot` sums in one block."""
    return (
        isinstance(x, np.ndarray) and x.ndim == 1 and x.dtype == np.float64 and x.size <= _DOT_BLOCK
    )


def weighted_mean(values: npt.NDArray[Any], weights: FloatArray | None) -> FloatArray:
    r"""The (weighted) mean along the last axis, with :func:`numpy.average`'s arithmetic.

    :math:`\sum_i w_i x_i / \sum_i w_i`: the products summed over the last axis (pairwise, by
    :func:`numpy.sum`) divided by the summed weights, the very operations of
    :func:`numpy.average` (and so the same result) without its argument handling, which costs
    more than the sums on the short arrays of a table's histograms. The weights must be clean:
    shape (n,), non-negative, with a positive total.

    Parameters
    ----------
    values : numpy.ndarray of shape (..., n)
        The values (booleans count as 0 and 1).
    weights : numpy.ndarray of shape (n,), optional
        The weights; ``None`` for the plain mean.

    Returns
    -------
    numpy.ndarray of shape (...)
        The means, float64.

    Examples
    --------
    >>> float(weighted_mean(np.array([1.0, 2.0, 6.0]), np.array([1.0, 1.0, 2.0])))
    3.75
    >>> float(weighted_mean(np.array([True, False]), None))
    0.5
    """
    if weights is None:
        return np.asarray(values.mean(axis=-1, dtype=np.float64), dtype=np.float64)
    total = np.multiply(values, weights, dtype=np.float64).sum(axis=-1)
    return np.asarray(total / weights.sum(axis=-1, dtype=np.float64), dtype=np.float64)


def weighted_median(values: FloatArray, weights: FloatArray | None) -> FloatArray:
    r"""The weighted median along the last axis, equal to :func:`numpy.median` on repetitions.

    With the values sorted and :math:`c_j` the cumulative weight up to the :math:`j`-th of them,
    the lower median is the first value with :math:`c_j \ge W/2` and the upper median the first
    with :math:`c_j > W/2`; the median is their mean. For integer weights this is exactly
    :func:`numpy.median` of the values repeated by their weights (so even totals average the two
    middle values), a zero weight is the same as leaving the value out, and scaling all weights
    changes nothing.

    Parameters
    ----------
    values : numpy.ndarray of shape (..., n)
        The values; the median is taken over the last axis.
    weights : numpy.ndarray of shape (n,), optional
        Non-negative weights, not all zero; ``None`` for :func:`numpy.median`.

    Returns
    -------
    numpy.ndarray of shape (...)
        The medians.

    Examples
    --------
    >>> float(weighted_median(np.array([1.0, 2.0, 3.0, 10.0]), np.array([1.0, 1.0, 1.0, 1.0])))
    2.5
    >>> float(weighted_median(np.array([1.0, 2.0, 3.0]), np.array([1.0, 0.0, 3.0])))
    3.0
    """
    if weights is None:
        return np.asarray(np.median(values, axis=-1), dtype=np.float64)
    if values.ndim == 1:
        return _weighted_median_1d(values, weights)
    order = np.argsort(values, axis=-1, kind="stable")
    sorted_values = np.take_along_axis(values, order, axis=-1)
    cumulative = np.cumsum(weights[order], axis=-1)
    total = cumulative[..., -1:]
    half = 0.5 * total
    # cumulative sums carry rounding: treat values within n ulps of the half as equal to it
    tolerance = total * (values.shape[-1] * np.finfo(np.float64).eps)
    lower = np.argmax(cumulative >= half - tolerance, axis=-1)[..., None]
    upper = np.argmax(cumulative > half + tolerance, axis=-1)[..., None]
    median = 0.5 * (
        np.take_along_axis(sorted_values, lower, axis=-1)
        + np.take_along_axis(sorted_values, upper, axis=-1)
    )
    return np.asarray(median[..., 0], dtype=np.float64)


def _weighted_median_1d(values: FloatArray, weights: FloatArray) -> FloatArray:
    """:func:`weighted_median` of one vector: the same sums and bounds, found by bisection.

    The cumulative weights do not decrease (the weights are non-negative), so the first of them
    at or above a bound is where :func:`numpy.searchsorted` puts the bound; the upper bound
    :math:`W/2` plus the tolerance is below :math:`W` for fewer than :math:`2^{51}` values, so
    both exist.
    """
    order = np.argsort(values, kind="stable")
    cumulative = np.cumsum(weights[order])
    total = cumulative[-1]
    half = 0.5 * total
    # cumulative sums carry rounding: treat values within n ulps of the half as equal to it
    tolerance = total * (values.size * _EPSILON)
    lower = order[np.searchsorted(cumulative, half - tolerance, side="left")]
    upper = order[np.searchsorted(cumulative, half + tolerance, side="right")]
    return np.asarray(0.5 * (values[lower] + values[upper]), dtype=np.float64)
