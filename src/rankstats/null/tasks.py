r"""The ranking tasks a null model is computed for: candidate counts, weights, multiplicities.

Under the null model task :math:`i` has a rank :math:`r_i \sim \mathcal{U}\{1, \dots, C_i\}` and a
weight :math:`w_i` (its share of a weighted mean is :math:`a_i = w_i / \sum_j w_j`). Every closed
form depends on the tasks only through the multiset of pairs :math:`(C_i, w_i)`, so the null hooks
of the metrics take a :class:`Tasks`: rows of distinct pairs, each standing for ``counts[j]``
tasks. A public method builds one row per task; the evaluation layer and
:class:`~rankstats.RankAccumulator` pass the rows of their candidate tables, so the cost of a
null model follows the number of distinct rows, not of queries (a billion queries of one
dataset are a few thousand rows).

The weighted sums here are the one place where the weights of a mean are applied:

.. math::

    \mathbb{E}\Big[\sum_i a_i x_i\Big] = \sum_j \frac{m_j w_j}{W}\, \mathbb{E}[x_j], \qquad
    \mathbb{V}\Big[\sum_i a_i x_i\Big] = \sum_j m_j \frac{w_j^2}{W^2}\, \mathbb{V}[x_j], \qquad
    W = \sum_j m_j w_j,

over rows :math:`j` with multiplicity :math:`m_j` (:math:`w_j = 1` without weights).
"""

from __future__ import annotations

import functools
from dataclasses import dataclass

import numpy as np

from rankstats.arrays import FloatArray, IntArray
from rankstats.errors import NoClosedFormError
from rankstats.null.grouping import distinct_counts
from rankstats.weighting import pairwise_dot

__all__ = ["Tasks"]


@dataclass(frozen=True, eq=False)
class Tasks:
    r"""Ranking tasks as rows of (candidate count, weight), each standing for several tasks.

    Parameters
    ----------
    candidates : numpy.ndarray of shape (k,)
        The number of candidates :math:`C_j \ge 1` of the tasks of each row (int64).
    weights : numpy.ndarray of shape (k,), optional
        The weight :math:`w_j \ge 0` of each of the row's tasks (float64, positive total);
        ``None`` weighs every task equally.
    counts : numpy.ndarray of shape (k,), optional
        The number of tasks :math:`m_j \ge 1` of each row (int64); ``None``: one each.
    squared_weights : numpy.ndarray of shape (k,), optional
        Weight sums instead of weights: then row :math:`j` stands for :math:`m_j` bundles of
        tasks with :math:`C_j` candidates, the weights of each bundle adding up to ``weights[j]``
        and their squares to ``squared_weights[j]`` (what an accumulator keeps of weights that
        differ task by task). Only means of per-task terms and their variances
        (:meth:`mean`, :meth:`mean_variance`) are defined then; everything that needs each
        task's weight raises :class:`~rankstats.errors.NoClosedFormError`.

    The arrays are clean (validated by the caller) and not copied; they must not change.

    Examples
    --------
    Three tasks with 5 candidates and one with 9, as two rows:

    >>> tasks = Tasks(np.array([5, 9]), counts=np.array([3, 1]))
    >>> tasks.size, tasks.mean(np.array([3.0, 5.0]))
    (4, 3.5)
    >>> tasks.expanded()[0].tolist()
    [5, 5, 5, 9]
    """

    candidates: IntArray
    weights: FloatArray | None = None
    counts: IntArray | None = None
    squared_weights: FloatArray | None = None

    @property
    def bundled(self) -> bool:
        """Whether the rows hold weight sums instead of each task's weight."""
        return self.squared_weights is not None

    def require_each_weight(self, what: str) -> None:
        """Raise :class:`~rankstats.errors.NoClosedFormError` if the rows hold weight sums."""
        if self.bundled:
            raise NoClosedFormError(
                f"{what} needs the weight of every task, and only the sums of the weights (and of "
                "their squares) per candidate count were kept; accumulate with a metric that "
                "needs each weight (e.g. the geometric mean rank) to keep them"
            )

    @property
    def size(self) -> int:
        r"""The number of tasks :math:`n = \sum_j m_j` (not known for weight sums)."""
        self.require_each_weight("the number of tasks")
        return int(self.candidates.size if self.counts is None else self.counts.sum())

    @functools.cached_property
    def row_weights(self) -> FloatArray:
        """The total weight :math:`m_j w_j` of each row's tasks (float64)."""
        if self.counts is None:
            if self.weights is None:
                return np.ones(self.candidates.size)
            return self.weights
        if self.weights is None:
            return self.counts.astype(np.float64)
        return self.counts * self.weights

    @functools.cached_property
    def total_weight(self) -> float:
        r"""The total weight :math:`W = \sum_j m_j w_j` (the number of tasks without weights)."""
        if self.weights is None:
            return float(self.size)
        return pairwise_dot(self.row_weights, 1.0)

    def mean(self, terms: FloatArray) -> float:
        r"""The weighted mean over the tasks, :math:`\sum_i a_i t_i`, of per-row terms.

        Examples
        --------
        >>> Tasks(np.array([1, 2, 4]), np.array([1.0, 0.0, 1.0])).mean(np.array([1.0, 2.0, 4.0]))
        2.5
        """
        if self.weights is None and self.counts is None:
            return float(np.mean(terms))
        return pairwise_dot(self.row_weights, terms) / self.total_weight

    def mean_variance(self, terms: FloatArray) -> float:
        r"""The variance of a weighted mean of independent terms: :math:`\sum_i a_i^2 v_i`.

        Examples
        --------
        >>> Tasks(np.array([3, 3])).mean_variance(np.array([1.0, 1.0]))
        0.5
        >>> Tasks(np.array([3]), counts=np.array([2])).mean_variance(np.array([1.0]))
        0.5
        """
        if self.weights is None:
            if self.counts is None:
                return float(terms.mean() / terms.size)
            n = float(self.size)
            return pairwise_dot(self.counts.astype(np.float64), terms) / (n * n)
        if self.squared_weights is not None:
            squared = self.squared_weights
            if self.counts is not None:
                squared = self.counts * squared
            total = self.total_weight
            return pairwise_dot(squared, terms) / (total * total)
        a = self.weights / self.total_weight
        squares = a * a if self.counts is None else self.counts * (a * a)
        return pairwise_dot(squares, terms)

    def distinct(self) -> tuple[IntArray, IntArray]:
        """The sorted distinct candidate counts and the number of tasks with each (no weights).

        Examples
        --------
        >>> values, counts = Tasks(np.array([5, 3, 5]), counts=np.array([1, 2, 4])).distinct()
        >>> values.tolist(), counts.tolist()
        ([3, 5], [2, 5])
        """
        if self.counts is None:
            return distinct_counts(self.candidates)
        if self.candidates.size > 1 and bool(np.all(self.candidates[1:] > self.candidates[:-1])):
            return self.candidates, self.counts
        values, inverse = np.unique(self.candidates, return_inverse=True)
        counts = np.zeros(values.size, dtype=np.int64)
        np.add.at(counts, inverse.reshape(-1), self.counts)  # integers: exact at any size
        return values, counts

    def shares(self) -> tuple[IntArray, FloatArray, FloatArray]:
        r"""The distinct pairs :math:`(C, a)`, :math:`a = w / W`, with the number of tasks of each.

        Tasks of weight zero are left out (they are the same as no task).

        Examples
        --------
        >>> c, a, m = Tasks(np.array([4, 4, 2]), np.array([1.0, 1.0, 2.0])).shares()
        >>> c.tolist(), a.tolist(), m.tolist()
        ([2, 4], [0.5, 0.25], [1.0, 2.0])
        """
        if self.weights is None:
            values, repeats = self.distinct()
            return values, np.full(values.size, 1.0 / self.size), repeats.astype(np.float64)
        self.require_each_weight("this null model")
        keep = self.weights > 0
        c = self.candidates[keep]
        a = self.weights[keep] / self.total_weight
        m = np.ones(c.size) if self.counts is None else self.counts[keep].astype(np.float64)
        order = np.lexsort((a, c))
        c, a, m = c[order], a[order], m[order]
        first = np.ones(c.size, dtype=bool)
        first[1:] = (c[1:] != c[:-1]) | (a[1:] != a[:-1])
        index = np.flatnonzero(first)
        return c[index], a[index], np.add.reduceat(m, index) if index.size else m

    def expanded(self) -> tuple[IntArray, FloatArray | None]:
        """One candidate count (and weight) per task, for samplers that draw task by task."""
        self.require_each_weight("sampling the null model")
        if self.counts is None:
            return self.candidates, self.weights
        candidates = np.repeat(self.candidates, self.counts)
        weights = None if self.weights is None else np.repeat(self.weights, self.counts)
        return candidates, weights
