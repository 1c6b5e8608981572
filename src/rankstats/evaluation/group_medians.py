r"""Medians of every group at once: the median rank, its inverse and the MAD of many groups.

A group's median of ranks with integer counts (unweighted input: a table row's count is how
many of the group's tasks have that rank) is :func:`~rankstats.weighting.weighted_median` of its
rows: with the rows sorted and :math:`c_j` the cumulative count up to the :math:`j`-th, the lower
median is the first value with :math:`c_j \ge W/2` and the upper one the first with
:math:`c_j > W/2`, :math:`W` the group's count, and the median is their mean. The counts are
integers, so the cumulative counts over all rows, sorted by group and value, are exact (below
:math:`2^{53}`), and each group's two bounds are one :func:`numpy.searchsorted` of
:math:`C_{g-1} + W_g/2` among them: one sort for all groups, no pass per group.
"""

from __future__ import annotations

import math

import numpy as np

from rankstats.arrays import FloatArray, IntArray
from rankstats.evaluation.tables import _run_starts

__all__ = ["group_medians"]


def group_medians(ids: IntArray, values: FloatArray, counts: FloatArray, size: int) -> FloatArray:
    r"""Each group's median of ``values`` repeated ``counts`` times (NaN in groups without rows).

    Parameters
    ----------
    ids : numpy.ndarray of shape (rows,)
        Each row's group, in ``0..size - 1`` (any order).
    values : numpy.ndarray of shape (rows,)
        The rows' values (float64).
    counts : numpy.ndarray of shape (rows,)
        The rows' counts: positive integers (float64), summing to below :math:`2^{53}`.
    size : int
        The number of groups.

    Returns
    -------
    numpy.ndarray of shape (size,)
        The medians, as :func:`numpy.median` of each group's repeated values.

    Examples
    --------
    Group 0 holds the ranks 3 and 1, group 1 the rank 2 once and 4 twice, group 2 nothing:

    >>> ids, ranks = np.array([0, 0, 1, 1]), np.array([3.0, 1.0, 2.0, 4.0])
    >>> group_medians(ids, ranks, np.array([1.0, 1.0, 1.0, 2.0]), 3)
    array([ 2.,  4., nan])
    """
    out = np.full(size, math.nan)
    if not ids.size:
        return out
    order = np.lexsort((values, ids))
    group = ids[order]
    value = values[order]
    cumulative = np.cumsum(counts[order])
    starts = _run_starts(group)
    ends = np.append(starts[1:], group.size) - 1
    before = np.where(starts > 0, cumulative[starts - 1], 0.0)
    half = before + 0.5 * (cumulative[ends] - before)
    lower = np.searchsorted(cumulative, half, side="left")
    upper = np.searchsorted(cumulative, half, side="right")
    out[group[starts]] = 0.5 * (value[lower] + value[upper])
    return out
