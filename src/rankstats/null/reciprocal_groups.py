r"""Null moments of the inverse arithmetic mean rank in many groups at once.

:func:`~rankstats.null.reciprocal.inverse_arithmetic_mean_moments` integrates the centred
Laplace transform of :math:`X = \sum_i a_i r_i` by a trapezoidal rule in :math:`v = \log u`
(see its Notes). Here the same rule runs for every group of an unweighted table together:
group :math:`g` has :math:`n_g` tasks, each with the share :math:`a = 1/n_g`, so at a node
:math:`u` each of its tasks takes the argument :math:`s = a\,u / \mu_g = u / S_g`, with
:math:`S_g = \sum_{i \in g} (C_i + 1)/2` the sum of its tasks' mean ranks. The transform's
per-task terms

.. math::

    K_C(s) = g(Cs/2) - g(s/2), \qquad
    \ell_C(s) = -s + \lambda(Cs) - \lambda(s)

(:func:`~rankstats.null.reciprocal._log_sinhc` :math:`= g`,
:func:`~rankstats.null.reciprocal._log_one_minus_exp_ratio` :math:`= \lambda`) are evaluated
for every row of the table (a distinct count in a group, :math:`m` tasks) at a block of nodes,
the parts that depend on the group alone (:math:`g(s/2)`, :math:`\lambda(s)`) once per group,
and summed per group with the multiplicities: one pass over the rows per block of nodes, not
one call per group (10,000 groups of ten tasks had taken 4.5 s).

The rule is the single group's, the same code (:func:`~rankstats.null.reciprocal._quadrature`
over a row per group). Every group's nodes span the union of the ranges the groups need (the
range grows while the bound on any group's neglected tails exceeds :math:`10^{-16}` of its
result), which only adds terms below its tolerances; each group's step is halved until its own
sums settle (:math:`10^{-5}` of its variance, at most four times), as alone, the groups that
settled leaving the passes that follow. The per-task terms are summed
in another order than the single group's (its power-series buckets are not used: they pay off
for large groups only), so the moments agree with the single group's to a few units in the
last place of the terms, not to the bit. A group of at least
:data:`~rankstats.null.interpolation.MIN_DISTINCT` distinct counts keeps the single group's
function, which folds many distinct counts into a few hundred interpolation nodes where every
row would be evaluated here (four groups of 50,000 tasks with counts up to :math:`10^{12}`:
0.11 s that way, 0.36 s in the batch).
"""

from __future__ import annotations

import numpy as np

from rankstats.arrays import FloatArray, IntArray
from rankstats.null.interpolation import MIN_DISTINCT
from rankstats.null.reciprocal import (
    _ARITHMETIC_SERIES,
    _BLOCK_ELEMENTS,
    _STEP,
    _arithmetic_terms,
    _log_one_minus_exp_ratio,
    _log_sinhc,
    _quadrature,
    inverse_arithmetic_mean_moments_of,
)
from rankstats.null.tasks import Tasks

__all__ = ["grouped_inverse_arithmetic_moments"]


class _Rows:
    """The table's rows with more than one candidate, sorted by group, and each group's sums."""

    #: the nodes are the nominal ones
    offsets = None

    def __init__(
        self,
        counts: FloatArray,
        multiplicity: FloatArray,
        owner: IntArray,
        total: FloatArray,
        certain: FloatArray,
    ) -> None:
        self.c, self.m, self.owner = counts, multiplicity, owner
        self.groups = total.size
        #: each group's first row (every group has one)
        self.starts = np.searchsorted(owner, np.arange(self.groups))
        #: the sum of the mean ranks of the group's tasks with more than one candidate, and
        #: S_g, that of all its tasks (a task with one candidate has rank 1)
        self.spread_mean = np.add.reduceat(multiplicity * (0.5 * (counts + 1.0)), self.starts)
        self.mean_sum = self.spread_mean + certain
        self.certain = certain
        self.total = total
        #: the largest count of each group, and the power sums of its series (below)
        self.largest = np.maximum.reduceat(counts, self.starts)
        self.power_sums = self._power_sums()

    def _power_sums(self) -> FloatArray:
        r""":math:`\sum m\, b_k (C^{2k} - 1) / C_{\max}^{2k}`, k = 1..12, per group (columns).

        :math:`K_C(s) = \sum_k b_k (C^{2k} - 1) s^{2k}` for :math:`s \le 1/C`
        (:class:`~rankstats.null.reciprocal._ArithmeticTask`), so where the group's largest
        count has :math:`C_{\max} s \le 1` its sum is a polynomial in
        :math:`x = C_{\max} s \le 1` (the scaled terms are all at most 1: no overflow).
        """
        ratio = self.c / self.largest[self.owner]
        log_c = np.log(self.c)
        out = np.empty((self.groups, len(_ARITHMETIC_SERIES)))
        with np.errstate(under="ignore"):
            for k, coefficient in enumerate(_ARITHMETIC_SERIES, start=1):
                # C^2k - 1 as C^2k (1 - C^-2k), the second factor without cancellation
                terms = ratio ** (2 * k) * -np.expm1(-2 * k * log_c)
                out[:, k - 1] = coefficient * np.add.reduceat(self.m * terms, self.starts)
        return out

    def subset(self, chosen: IntArray) -> _Rows:
        """The rows of the groups ``chosen`` (sorted), numbered from 0."""
        rows, owner = self._rows_of(chosen)
        # (each group's sums come out the same: the same rows, added in the same order)
        return _Rows(self.c[rows], self.m[rows], owner, self.total[chosen], self.certain[chosen])

    def _rows_of(self, chosen: IntArray) -> tuple[IntArray, IntArray]:
        """The rows of the groups ``chosen`` (sorted), and their index into ``chosen``."""
        ends = np.append(self.starts[1:], self.c.size)
        lengths = ends[chosen] - self.starts[chosen]
        first = np.repeat(self.starts[chosen] - np.cumsum(lengths) + lengths, lengths)
        return np.arange(int(lengths.sum())) + first, np.repeat(np.arange(chosen.size), lengths)

    def nodes_and_midpoints(
        self, nodes: tuple[int, int], cells: tuple[int, int]
    ) -> tuple[FloatArray, ...]:
        """The integrands at the nodes, then at the midpoints (two calls: each one's ascend).

        As :class:`~rankstats.null.reciprocal._Integrands` gives them.
        """
        f1, f2, transform = self.integrands(_STEP * np.arange(nodes[0], nodes[1] + 1.0))
        m1, m2, _ = self.integrands(_STEP * np.arange(cells[0], cells[1] + 1.0) + 0.5 * _STEP)
        return f1, f2, transform, m1, m2

    def integrands(self, v: FloatArray) -> tuple[FloatArray, FloatArray, FloatArray]:
        r""":math:`u P(u)`, :math:`u (u - 2) P(u)` and :math:`\mathbb{E}[e^{-tX}]`, (groups, nodes).

        As :func:`~rankstats.null.reciprocal._integrands` for each group, at :math:`u = e^v`
        (ascending). Where every task of a group is within its series' radius
        (:math:`C_{\max} s \le 1`) the group's sums come from its power sums, as the single
        group's buckets do; elsewhere from every row's terms.
        """
        u = np.exp(v)
        s = u[None, :] / self.mean_sum[:, None]
        x = s * self.largest[:, None]
        inside = x <= 1.0
        # K = sum_k P_k x^2k by Horner's rule in x^2 (0 where outside), ell = K - t sum a E[Y]
        x2 = np.where(inside, x * x, 0.0)
        centred = np.zeros_like(x2)
        for k in range(self.power_sums.shape[1] - 1, -1, -1):
            centred += self.power_sums[:, k, None]
            centred *= x2
        log_transform = centred - s * self.spread_mean[:, None]
        # the nodes (a suffix of each group's) beyond the series, from the rows' terms
        first_outside = np.sum(inside, axis=1)
        block = max(1, _BLOCK_ELEMENTS // max(self.c.size, 1))
        for j0 in range(0, u.size, block):
            j1 = min(j0 + block, u.size)
            chosen = np.flatnonzero(first_outside < j1)
            if not chosen.size:
                continue
            rows, owner = self._rows_of(chosen)
            starts = np.searchsorted(owner, np.arange(chosen.size))
            s_group = s[chosen, j0:j1]
            half = _log_sinhc(0.5 * s_group)
            ratio = _log_one_minus_exp_ratio(s_group)
            s_rows = s_group[owner]
            cs = self.c[rows, None] * s_rows
            # each task's terms, then their sums over its group's rows (all of one sign)
            k_rows, l_rows = _arithmetic_terms(cs, s_rows, half[owner], ratio[owner])
            m = self.m[rows, None]
            outside = ~inside[chosen, j0:j1]
            centred[chosen, j0:j1] = np.where(
                outside, np.add.reduceat(m * k_rows, starts, axis=0), centred[chosen, j0:j1]
            )
            log_transform[chosen, j0:j1] = np.where(
                outside, np.add.reduceat(m * l_rows, starts, axis=0), log_transform[chosen, j0:j1]
            )
        # the tasks with one candidate: -a t each, a t = u / S_g
        log_transform -= self.certain[:, None] * s
        transform = np.exp(log_transform)
        first = u[None, :] * transform * -np.expm1(-centred)
        return first, (u[None, :] - 2.0) * first, transform


def grouped_inverse_arithmetic_moments(
    counts: FloatArray,
    multiplicity: FloatArray,
    owner: IntArray,
    total: FloatArray,
    certain: FloatArray,
) -> tuple[FloatArray, FloatArray]:
    r"""E and V of the inverse arithmetic mean rank in each group of unweighted tasks.

    Parameters
    ----------
    counts, multiplicity, owner : numpy.ndarray of shape (rows,)
        A table's rows with more than one candidate: the count :math:`C > 1` (float64), how
        many of the group's tasks have it (float64) and the group's index (int64, sorted).
    total, certain : numpy.ndarray of shape (groups,)
        Each group's number of tasks :math:`n_g > 0` and how many of them have one candidate
        (float64). A group without rows has :math:`X = 1`: E = 1, V = 0.

    Returns
    -------
    expectation, variance : numpy.ndarray of shape (groups,)
        :math:`\mathbb{E}[1/X]` and :math:`\mathbb{V}[1/X]` of each group's
        :math:`X = \frac{1}{n_g} \sum_{i \in g} r_i`.
    """
    expected = np.ones(total.size)
    variance = np.zeros(total.size)
    spread, rows_per_group = np.unique(owner, return_counts=True)
    # a group of many distinct counts keeps the single group's computation, which folds them
    # into interpolation nodes (a few hundred, where every row here would be evaluated)
    large = rows_per_group >= MIN_DISTINCT
    for g in spread[large].tolist():
        mine = owner == g
        tasks = np.concatenate((counts[mine], [1.0])).astype(np.int64)
        times = np.concatenate((multiplicity[mine], [certain[g]])).astype(np.int64)
        keep = times > 0
        expected[g], variance[g] = inverse_arithmetic_mean_moments_of(
            Tasks(tasks[keep], counts=times[keep])
        )
    spread = spread[~large]
    if spread.size:
        chosen = np.isin(owner, spread)
        counts, multiplicity, owner = counts[chosen], multiplicity[chosen], owner[chosen]
        # the groups with rows, numbered in order (the rows are sorted by group)
        rows = _Rows(
            counts, multiplicity, np.searchsorted(spread, owner), total[spread], certain[spread]
        )
        i1, var = _quadrature(rows, rows.total / rows.mean_sum)  # min X / mu: X >= 1
        mu = rows.mean_sum / rows.total
        expected[spread] = (1.0 + i1) / mu
        variance[spread] = np.maximum(var, 0.0) / (mu * mu)
    return expected, variance
