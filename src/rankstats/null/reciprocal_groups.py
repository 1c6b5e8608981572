r"""Null moments of the reciprocal-of-mean metrics in many groups at once.

:func:`~rankstats.null.reciprocal.inverse_arithmetic_mean_moments` and
:func:`~rankstats.null.reciprocal.harmonic_mean_moments` integrate the centred Laplace transform
of :math:`X = \sum_i a_i Y_i` (:math:`Y = r` or :math:`1/r`) by a trapezoidal rule in
:math:`v = \log u` (see the first one's Notes). Here the same rule
(:func:`~rankstats.null.reciprocal._quadrature`, the same code) runs for every group of an
unweighted table together. Group :math:`g` has :math:`n_g` tasks, each with the share
:math:`a = 1/n_g`, so at a node :math:`u` every task of the group takes the same argument

.. math::

    s = a\,u / \mu_g = u / S_g, \qquad S_g = \sum_{i \in g} \mathbb{E}[Y_i],

and the group's sums are :math:`K_g = s^2 \sum_C m_{g,C}\, F_C(\log s)` and
:math:`\ell_g = s \sum_C m_{g,C}\, E_C(\log s)` with :math:`F_C(\sigma) = K_C(e^\sigma)
e^{-2\sigma}` and :math:`E_C(\sigma) = \ell_C(e^\sigma) e^{-\sigma}` (as in
:mod:`rankstats.null.lattice`; :math:`m_{g,C}` tasks of the group have the count :math:`C`,
and each task with one candidate adds :math:`-s` to :math:`\ell_g`).

*Nodes on a common grid.* The trapezoidal rule on the whole line converges as fast for the
nodes :math:`v = hk + \varphi` as for :math:`v = hk`, whatever the offset :math:`\varphi`.
Each group takes the offset :math:`\varphi_g \in [0, 8\delta)`, :math:`\delta = h_0 / 16 = 0.025`
(the finest step of the rule's four halvings of :math:`h_0 = 0.4`), that puts
:math:`\log s = v + \varphi_g - \log S_g` on the grid :math:`\delta \mathbb{Z}` at every node of
every step, and on :math:`8 \delta \mathbb{Z}` at the first nodes and midpoints (so that the
groups' first nodes fall on few grid points). :math:`F_C` and :math:`E_C` are then needed at
grid points only, shared by all groups: they are tabulated there, exactly (the per-task
transforms of :mod:`rankstats.null.reciprocal`), at the points some group asks for, as it asks,
and a group's sums at a node are a weighted sum of table values, without interpolation in
:math:`\log s`. The groups of one offset read the same columns of the tables: one sparse product
each. The rule's tail bounds take each group's offset into account (``offsets``).

*Few tables.* Distinct counts from :data:`~rankstats.null.lattice.LOWEST` up are folded into
Chebyshev counts of intervals of :math:`\log C`
(:func:`~rankstats.null.interpolation.count_intervals`, as the single group's lattice sums do;
both transforms are analytic in :math:`\log C` well beyond the intervals' width), so a group's
sums read :math:`\sum_t W_{g,t} F_{c_t}` over the tables :math:`t`, with the weights
:math:`W = A B` (:math:`A_{g,C} = m_{g,C}`, :math:`B_{C,t}` the Lagrange basis of the count's
interval in :math:`\log C`, or one for a count standing for itself): a sparse matrix of about
17 entries per group and interval. Ten thousand groups of ten tasks with counts in
13,541..14,541 read 17 tables; the harmonic mean rank's moments take 0.1 s there, where a call
per group took 10 s (the inverse arithmetic mean rank's: 4.5 s). A group of at least
:data:`~rankstats.null.interpolation.MIN_DISTINCT` distinct counts keeps the single group's
function, whose power-series buckets and folded pairs serve it better.

*Agreement.* The moments are the single group's computation's up to the quadrature's nodes
(shifted by less than :math:`8\delta`), the folding of the counts and the order of the sums:
the expectation to about 1e-15 relative and the variance to about 1e-14
(``tests/test_reciprocal_groups.py``), and exact
enumeration in rationals on small groups to the same. Weighted groups keep the computation
per group (their tasks' shares differ, and so do their arguments).
"""

from __future__ import annotations

import math

import numpy as np
from scipy import sparse

from rankstats.arrays import FloatArray, IntArray
from rankstats.null.interpolation import MIN_DISTINCT, count_intervals
from rankstats.null.lattice import FLOOR, LOWEST, _interval_basis
from rankstats.null.reciprocal import (
    _BLOCK_ELEMENTS,
    _EM_START,
    _STEP,
    Evaluator,
    Rows,
    _ArithmeticTask,
    _HarmonicTask,
    harmonic_mean_moments_of,
    integrand_values,
    inverse_arithmetic_mean_moments_of,
    quadrature_by_parts,
)
from rankstats.null.tasks import Tasks

__all__ = ["GRID", "grouped_harmonic_moments", "grouped_inverse_arithmetic_moments"]

#: the grid of log s: the finest step of the quadrature (0.4 halved four times)
GRID = _STEP / 16.0
#: the groups' grid shifts are multiples of this many grid steps (the spacing of the first
#: nodes and midpoints), so that those of all groups fall on few grid points
_ALIGN = 8


class _Tables:
    r""":math:`F_C` and :math:`E_C` of the table counts at grid points :math:`j \delta`.

    Filled as they are asked for, and shared by a table's groups and their subsets: one column
    per grid point asked for (``keys``, sorted), so that memory follows the points the groups
    use, not the span between them. Below ``floor`` (in :math:`\log s`) both functions are
    taken as constant (for :math:`1/r`, whose next series terms there are :math:`O(s)`
    relative).
    """

    def __init__(self, evaluate: Evaluator, tables: int, floor: float) -> None:
        self._evaluate = evaluate
        self._rows = np.arange(tables)
        self._floor = floor
        self.keys = np.zeros(0, dtype=np.int64)
        self.centred = np.zeros((tables, 0))
        self.linear = np.zeros((tables, 0))

    def ensure(self, indices: IntArray) -> None:
        """Tabulate the grid points ``indices`` (integers) not tabulated yet."""
        missing = np.setdiff1d(indices, self.keys)
        if not missing.size:
            return
        sigma = np.maximum(missing * GRID, self._floor)
        centred = np.empty((self._rows.size, missing.size))
        linear = np.empty((self._rows.size, missing.size))
        # as many values at a time as the single group's blocks evaluate (an Euler-Maclaurin
        # value costs about 4 _EM_START terms)
        rows = max(1, _BLOCK_ELEMENTS // (4 * _EM_START * missing.size))
        for begin in range(0, self._rows.size, rows):
            part = self._rows[begin : begin + rows]
            s = np.broadcast_to(np.exp(sigma), (part.size, missing.size)).copy()
            k, ell = self._evaluate(s, part)
            centred[part] = k * np.exp(-2.0 * sigma)
            linear[part] = ell * np.exp(-sigma)
        keys = np.concatenate((self.keys, missing))
        order = np.argsort(keys, kind="stable")
        self.keys = keys[order]
        self.centred = np.concatenate((self.centred, centred), axis=1)[:, order]
        self.linear = np.concatenate((self.linear, linear), axis=1)[:, order]

    def columns(self, indices: IntArray) -> IntArray:
        """The columns of the grid points ``indices`` (all tabulated)."""
        found: IntArray = np.searchsorted(self.keys, indices)
        return found


class _GridRows(Rows):
    """Each group's weights on the tables, grid shift and sums, as rows for the quadrature."""

    def __init__(
        self,
        tables: _Tables,
        weights: sparse.csr_matrix,
        spread_sum: FloatArray,
        certain: FloatArray,
    ) -> None:
        self.tables = tables
        self.weights = weights
        self.groups = spread_sum.size
        #: S_g, the sum of E[Y] over the group's tasks, and that over its tasks with C > 1
        self.spread_sum, self.certain = spread_sum, certain
        self.mean_sum = spread_sum + certain
        #: the grid index of log s at v = 0, and the offset of v that puts log s on the grid
        log_sum = np.log(self.mean_sum)
        self.shift = _ALIGN * np.ceil(-log_sum / (_ALIGN * GRID)).astype(np.int64)
        self.offsets: FloatArray = np.asarray(self.shift * GRID + log_sum, dtype=np.float64)
        #: the groups by shift: the distinct shifts, and each one's groups (bounds in `_order`)
        self._order = np.argsort(self.shift, kind="stable")
        self._shifts, starts = np.unique(self.shift[self._order], return_index=True)
        self._bounds = np.append(starts, self._order.size)

    def subset(self, chosen: IntArray) -> _GridRows:
        """The groups ``chosen`` (sorted), numbered from 0."""
        return _GridRows(
            self.tables, self.weights[chosen], self.spread_sum[chosen], self.certain[chosen]
        )

    def integrands(self, v: FloatArray) -> tuple[FloatArray, FloatArray, FloatArray]:
        r""":math:`u P(u)`, :math:`u (u - 2) P(u)` and :math:`\mathbb{E}[e^{-tX}]`, (groups, nodes).

        At :math:`u = e^{v + \varphi_g}` for group :math:`g` (``v`` nominal, ascending, on the
        grid), as :func:`~rankstats.null.reciprocal._integrands` for each group.
        """
        step = np.rint(v / GRID).astype(np.int64)
        self.tables.ensure(np.unique(np.add.outer(self._shifts, step)))
        folded_k, folded_e = self._weighted(step)
        s = np.exp((self.shift[:, None] + step[None, :]) * GRID)
        centred = folded_k * (s * s)
        # where K is at most half the linear term, ell = K - t sum m a E[Y]: its error is that
        # of K (as the single group's lattice sums take it)
        linear = s * self.spread_sum[:, None]
        log_transform = np.where(centred <= 0.5 * linear, centred - linear, folded_e * s)
        log_transform -= self.certain[:, None] * s
        return integrand_values(np.exp(v[None, :] + self.offsets[:, None]), centred, log_transform)

    def _weighted(self, step: IntArray) -> tuple[FloatArray, FloatArray]:
        r""":math:`\sum_t W_{g,t} F_t` and :math:`\sum_t W_{g,t} E_t` at each group's grid points.

        The groups of one shift read the same columns of the tables: one sparse product each.
        """
        tables = self.tables
        out_k = np.empty((self.groups, step.size))
        out_e = np.empty((self.groups, step.size))
        bounds = self._bounds.tolist()
        for shift, begin, end in zip(self._shifts.tolist(), bounds[:-1], bounds[1:], strict=True):
            chosen = self._order[begin:end]
            columns = tables.columns(shift + step)
            weights = self.weights[chosen]
            out_k[chosen] = weights @ tables.centred[:, columns]
            out_e[chosen] = weights @ tables.linear[:, columns]
        return out_k, out_e


def _table_weights(
    distinct: IntArray, inverse: IntArray, multiplicity: FloatArray, owner: IntArray, groups: int
) -> tuple[IntArray, sparse.csr_matrix]:
    """The table counts, and each group's weights on them (groups x tables, CSR)."""
    nodes, position, intervals = count_intervals(distinct, LOWEST)
    rows: list[IntArray] = [np.flatnonzero(position >= 0)]
    columns: list[IntArray] = [position[rows[0]]]
    values: list[FloatArray] = [np.ones(rows[0].size)]
    log_nodes = np.log(nodes.astype(np.float64))
    for members, node_positions in intervals:
        basis = _interval_basis(
            log_nodes[node_positions],
            nodes[node_positions],
            np.log(distinct[members].astype(np.float64)),
            distinct[members],
        )
        rows.append(np.repeat(members, node_positions.size))
        columns.append(np.tile(node_positions, members.size))
        values.append(basis.ravel())
    basis_matrix = sparse.csr_matrix(
        (np.concatenate(values), (np.concatenate(rows), np.concatenate(columns))),
        shape=(distinct.size, nodes.size),
    )
    tasks = sparse.csr_matrix((multiplicity, (owner, inverse)), shape=(groups, distinct.size))
    weights = sparse.csr_matrix(tasks @ basis_matrix)
    weights.sort_indices()
    return nodes, weights


def _grouped_moments(
    harmonic: bool,
    counts: FloatArray,
    multiplicity: FloatArray,
    owner: IntArray,
    total: FloatArray,
    certain: FloatArray,
) -> tuple[FloatArray, FloatArray]:
    """E and V of 1/X in each group: X the mean of 1/r (``harmonic``) or of r."""
    expected = np.ones(total.size)
    variance = np.zeros(total.size)
    spread, rows_per_group = np.unique(owner, return_counts=True)
    # a group of many distinct counts keeps the single group's computation (its power-series
    # buckets and folded pairs; four groups of 50,000 tasks with counts up to 1e12: 0.025 s
    # for the inverse arithmetic mean rank, 0.09-0.11 s here)
    large = rows_per_group >= MIN_DISTINCT
    single = harmonic_mean_moments_of if harmonic else inverse_arithmetic_mean_moments_of
    for g in spread[large].tolist():
        mine = owner == g
        tasks = np.concatenate((counts[mine], [1.0])).astype(np.int64)
        times = np.concatenate((multiplicity[mine], [certain[g]])).astype(np.int64)
        keep = times > 0
        expected[g], variance[g] = single(Tasks(tasks[keep], counts=times[keep]))
    spread = spread[~large]
    if not spread.size:
        return expected, variance
    chosen = np.isin(owner, spread)
    counts, multiplicity, owner = counts[chosen], multiplicity[chosen], owner[chosen]
    local = np.searchsorted(spread, owner)
    distinct, inverse = np.unique(counts.astype(np.int64), return_inverse=True)
    inverse = inverse.reshape(-1)
    table_counts, weights = _table_weights(distinct, inverse, multiplicity, local, spread.size)
    evaluate: Evaluator
    lowest: FloatArray
    if harmonic:
        mean = _HarmonicTask(distinct).distinct_mean
        # min X: every rank at its count
        lowest = np.bincount(local, weights=multiplicity / counts, minlength=spread.size).astype(
            np.float64
        )
        evaluate, floor = _HarmonicTask(table_counts).tabulate, FLOOR
    else:
        mean = 0.5 * (distinct + 1.0)
        lowest = total[spread] - certain[spread]  # min X: every rank 1
        evaluate, floor = _ArithmeticTask(table_counts.astype(np.float64)), -math.inf
    spread_sum = np.bincount(local, weights=multiplicity * mean[inverse], minlength=spread.size)
    rows = _GridRows(
        _Tables(evaluate, table_counts.size, floor),
        weights,
        spread_sum.astype(np.float64),
        certain[spread],
    )
    i1, var = quadrature_by_parts(rows, (lowest + certain[spread]) / rows.mean_sum)
    mu = rows.mean_sum / total[spread]
    expected[spread] = (1.0 + i1) / mu
    variance[spread] = np.maximum(var, 0.0) / (mu * mu)
    return expected, variance


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
    return _grouped_moments(False, counts, multiplicity, owner, total, certain)


def grouped_harmonic_moments(
    counts: FloatArray,
    multiplicity: FloatArray,
    owner: IntArray,
    total: FloatArray,
    certain: FloatArray,
) -> tuple[FloatArray, FloatArray]:
    r"""E and V of the harmonic mean rank in each group of unweighted tasks.

    Parameters
    ----------
    counts, multiplicity, owner : numpy.ndarray of shape (rows,)
        As for :func:`grouped_inverse_arithmetic_moments`.
    total, certain : numpy.ndarray of shape (groups,)
        As for :func:`grouped_inverse_arithmetic_moments`.

    Returns
    -------
    expectation, variance : numpy.ndarray of shape (groups,)
        :math:`\mathbb{E}[1/X]` and :math:`\mathbb{V}[1/X]` of each group's
        :math:`X = \frac{1}{n_g} \sum_{i \in g} 1/r_i`.
    """
    return _grouped_moments(True, counts, multiplicity, owner, total, certain)
