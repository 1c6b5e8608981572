"""Distinct candidate counts with their multiplicities, without a sort where none is needed.

Every closed form sums per-task terms that depend on the task's count only (and its weight), so
it evaluates them once per distinct count. The evaluation layer hands the null models sorted
counts (expanded from its tables of distinct counts), and a dataset's counts span a narrow
range, so a full sort (:func:`numpy.unique`) is rarely needed: sorted input is split in one
pass, a narrow range is counted with :func:`numpy.bincount`.
"""

from __future__ import annotations

import numpy as np

from rankstats.arrays import IntArray

__all__ = ["distinct_counts", "distinct_inverse"]


def distinct_counts(values: IntArray) -> tuple[IntArray, IntArray]:
    """The sorted distinct values of a non-empty 1-D integer array and how often each occurs.

    The same as ``numpy.unique(values, return_counts=True)``, in :math:`O(n)` for sorted input
    or a range of at most :math:`4n` values.

    Examples
    --------
    >>> values, counts = distinct_counts(np.array([5, 3, 5, 9]))
    >>> values.tolist(), counts.tolist()
    ([3, 5, 9], [1, 2, 1])
    """
    if values.size > 1 and bool(np.all(values[1:] >= values[:-1])):
        new = np.empty(values.size, dtype=np.bool_)
        new[0] = True
        np.not_equal(values[1:], values[:-1], out=new[1:])
        starts = np.flatnonzero(new)
        return values[starts], np.diff(starts, append=values.size)
    low, high = int(values.min()), int(values.max())
    if high - low <= 4 * values.size:
        tally = np.bincount(values - low)
        present = np.flatnonzero(tally)
        return (present + low).astype(values.dtype), tally[present]
    distinct, counts = np.unique(values, return_counts=True)
    return distinct, counts


def distinct_inverse(values: IntArray) -> tuple[IntArray, IntArray]:
    """The sorted distinct values of a 1-D integer array and each entry's index into them.

    The same as ``numpy.unique(values, return_inverse=True)``, in :math:`O(n)` for a range of at
    most :math:`4n` values (a table lookup instead of a sort).

    Examples
    --------
    >>> values, inverse = distinct_inverse(np.array([5, 3, 5, 9]))
    >>> values.tolist(), inverse.tolist()
    ([3, 5, 9], [1, 0, 1, 2])
    """
    if values.size:
        low, high = int(values.min()), int(values.max())
        if high - low <= 4 * values.size:
            offset = values - low
            present = np.zeros(high - low + 1, dtype=np.bool_)
            present[offset] = True
            position = np.cumsum(present) - 1
            return (np.flatnonzero(present) + low).astype(values.dtype), position[offset]
    distinct, inverse = np.unique(values, return_inverse=True)
    return distinct, inverse.reshape(-1)
