r"""Null moments of the harmonic mean rank in many groups at once.

:func:`~rankstats.null.reciprocal.harmonic_mean_moments` integrates the centred Laplace
transform of :math:`X = \sum_i a_i / r_i` by a trapezoidal rule in :math:`v = \log u` (see
:func:`~rankstats.null.reciprocal.inverse_arithmetic_mean_moments`, Notes). Here the same rule
(:func:`~rankstats.null.reciprocal._quadrature`, the same code) runs for every group of an
unweighted table together. Group :math:`g` has :math:`n_g` tasks, each with the share
:math:`a = 1/n_g`, so at a node :math:`u` every task of the group takes the same argument

.. math::

    s = a\,u / \mu_g = u / S_g, \qquad S_g = \sum_{i \in g} h_{C_i}, \quad h_C = H_C / C,

and the group's sums are :math:`K_g = s^2 \sum_C m_{g,C}\, F_C(\log s)` and
:math:`\ell_g = s \sum_C m_{g,C}\, E_C(\log s)` with the functions
:math:`F_C(\sigma) = K_C(e^\sigma) e^{-2\sigma}` and :math:`E_C(\sigma) = \ell_C(e^\sigma)
e^{-\sigma}` of :mod:`rankstats.null.lattice` (:math:`m_{g,C}` tasks of the group have the
count :math:`C`; tasks with one candidate add :math:`-s` each to :math:`\ell_g`).

*Nodes on a common grid.* The trapezoidal rule on the whole line converges as fast for the
nodes :math:`v = hk + \varphi` as for :math:`v = hk`, for any offset :math:`\varphi`. Each group
takes the offset :math:`\varphi_g \in [0, \delta)`, :math:`\delta = h_0 / 16 = 0.025` (the
finest step of the rule's four halvings of :math:`h_0 = 0.4`), that puts
:math:`\log s = v + \varphi_g - \log S_g` on the grid :math:`\delta \mathbb{Z}` at every node
of every step. :math:`F_C` and :math:`E_C` are then needed only at grid points, shared by all
groups: they are tabulated there (exactly, by
:meth:`~rankstats.null.reciprocal._HarmonicTask.tabulate`, at the grid points some group asks
for, as it asks), and a group's sums at a node are a weighted sum of table values, without
interpolation in :math:`\log s`. The tail bounds of the rule take each group's offset into
account (``offsets``).

*Few tables.* Distinct counts from :data:`~rankstats.null.lattice.LOWEST` up are folded into
Chebyshev counts of intervals of :math:`\log C`
(:func:`~rankstats.null.interpolation.count_intervals`, as the single group's lattice sums do),
so a group's sums read :math:`\sum_t W_{g,t} F_{c_t}` over the tables :math:`t` with the weights
:math:`W = A B` (:math:`A_{g,C} = m_{g,C}`, :math:`B_{C,t}` the Lagrange basis of the count's
interval in :math:`\log C`, or one for a count standing for itself): a sparse matrix of about
17 entries per group and interval. Ten thousand groups of ten tasks with counts in
13,541..14,541 take 17 tables.

*Agreement.* The moments are those of the single group's computation up to the quadrature's
nodes (shifted by less than :math:`\delta`) and the order of the sums: the expectation to
about 1e-15 relative and the variance to about 1e-14 (``tests/test_harmonic_groups.py``),
against exact enumeration in rationals on small groups to the same. Weighted groups keep the
computation per group (their tasks' shares differ, and so do their arguments).
"""

from __future__ import annotations

import numpy as np
from scipy import sparse

from rankstats.arrays import FloatArray, IntArray
from rankstats.null.interpolation import count_intervals
from rankstats.null.lattice import FLOOR, LOWEST, _interval_basis
from rankstats.null.reciprocal import _BLOCK_ELEMENTS, _STEP, _HarmonicTask, _quadrature

__all__ = ["grouped_harmonic_moments"]

#: the grid of log s: the finest step of the quadrature (0.4 halved four times)
GRID = _STEP / 16.0
#: the groups' grid shifts are multiples of this many grid steps (the spacing of the first
#: nodes and midpoints), so that those of all groups fall on few grid points
_ALIGN = 8


class _Tables:
    r""":math:`F_C` and :math:`E_C` of the table counts at grid points :math:`j \delta`.

    Filled as they are asked for, and shared by a table's groups and their subsets.
    """

    def __init__(self, counts: IntArray) -> None:
        self.counts = counts
        self._task = _HarmonicTask(counts)
        self._rows = np.arange(counts.size)
        self.low = 0
        self.centred = np.zeros((counts.size, 0))
        self.linear = np.zeros((counts.size, 0))
        self._filled = np.zeros(0, dtype=bool)

    def ensure(self, indices: IntArray) -> None:
        """Tabulate the grid points ``indices`` (integers) not tabulated yet."""
        low, high = int(indices.min()), int(indices.max())
        if self._filled.size == 0:
            self._resize(low, high)
        elif low < self.low or high >= self.low + self._filled.size:
            self._resize(min(low, self.low), max(high, self.low + self._filled.size - 1))
        missing = np.unique(indices[~self._filled[indices - self.low]])
        if not missing.size:
            return
        # below the floor both functions are constant (their next terms are O(s) relative)
        sigma = np.maximum(missing * GRID, FLOOR)
        rows = max(1, _BLOCK_ELEMENTS // (16 * missing.size))
        for begin in range(0, self.counts.size, rows):
            part = self._rows[begin : begin + rows]
            s = np.broadcast_to(np.exp(sigma), (part.size, missing.size)).copy()
            k, ell = self._task.tabulate(s, part)
            self.centred[begin : begin + rows, missing - self.low] = k * np.exp(-2.0 * sigma)
            self.linear[begin : begin + rows, missing - self.low] = ell * np.exp(-sigma)
        self._filled[missing - self.low] = True

    def _resize(self, low: int, high: int) -> None:
        width = high - low + 1
        shift = self.low - low
        centred = np.zeros((self.counts.size, width))
        linear = np.zeros((self.counts.size, width))
        filled = np.zeros(width, dtype=bool)
        kept = slice(shift, shift + self._filled.size)
        centred[:, kept], linear[:, kept], filled[kept] = self.centred, self.linear, self._filled
        self.low, self.centred, self.linear, self._filled = low, centred, linear, filled


class _HarmonicRows:
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
        #: S_g = sum of E[1/r] over the group's tasks, and that over its tasks with C > 1
        self.spread_sum, self.certain = spread_sum, certain
        self.mean_sum = spread_sum + certain
        #: the grid index of log s at v = 0, and the offset of v that puts log s on the grid
        log_sum = np.log(self.mean_sum)
        self.shift = _ALIGN * np.ceil(-log_sum / (_ALIGN * GRID)).astype(np.int64)
        self.offsets: FloatArray = np.asarray(self.shift * GRID + log_sum, dtype=np.float64)

    def subset(self, chosen: IntArray) -> _HarmonicRows:
        """The groups ``chosen`` (sorted), numbered from 0."""
        return _HarmonicRows(
            self.tables, self.weights[chosen], self.spread_sum[chosen], self.certain[chosen]
        )

    def nodes_and_midpoints(
        self, nodes: tuple[int, int], cells: tuple[int, int]
    ) -> tuple[FloatArray, ...]:
        """The integrands at the nodes, then at the midpoints, as ``_Integrands`` gives them."""
        f1, f2, transform = self.integrands(_STEP * np.arange(nodes[0], nodes[1] + 1.0))
        m1, m2, _ = self.integrands(_STEP * np.arange(cells[0], cells[1] + 1.0) + 0.5 * _STEP)
        return f1, f2, transform, m1, m2

    def integrands(self, v: FloatArray) -> tuple[FloatArray, FloatArray, FloatArray]:
        r""":math:`u P(u)`, :math:`u (u - 2) P(u)` and :math:`\mathbb{E}[e^{-tX}]`, (groups, nodes).

        At :math:`u = e^{v + \varphi_g}` for group :math:`g` (``v`` nominal, ascending, on the
        grid), as :func:`~rankstats.null.reciprocal._integrands` for each group.
        """
        step = np.rint(v / GRID).astype(np.int64)
        index = self.shift[:, None] + step[None, :]  # log s = index * GRID
        self.tables.ensure(np.unique(np.add.outer(np.unique(self.shift), step)))
        folded_k, folded_e = self._weighted(step)
        sigma = index * GRID
        s = np.exp(sigma)
        centred = folded_k * (s * s)
        log_transform = folded_e * s
        # where K is at most half the linear term, ell = K - t sum m a E[Y]: its error is that
        # of K (as the single group's lattice sums take it)
        linear = s * self.spread_sum[:, None]
        log_transform = np.where(centred <= 0.5 * linear, centred - linear, log_transform)
        log_transform -= self.certain[:, None] * s
        u = np.exp(v[None, :] + self.offsets[:, None])
        transform = np.exp(log_transform)
        first = u * transform * -np.expm1(-centred)
        return first, (u - 2.0) * first, transform

    def _weighted(self, step: IntArray) -> tuple[FloatArray, FloatArray]:
        r""":math:`\sum_t W_{g,t} F_t` and :math:`\sum_t W_{g,t} E_t` at each group's grid points.

        The groups of one shift read the same columns of the tables: one sparse product each.
        """
        tables = self.tables
        out_k = np.empty((self.groups, step.size))
        out_e = np.empty((self.groups, step.size))
        order = np.argsort(self.shift, kind="stable")
        shifts, starts = np.unique(self.shift[order], return_index=True)
        ends = np.append(starts[1:], order.size)
        for shift, begin, end in zip(shifts.tolist(), starts.tolist(), ends.tolist(), strict=True):
            chosen = order[begin:end]
            columns = shift + step - tables.low
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
        A table's rows with more than one candidate: the count :math:`C > 1` (float64), how
        many of the group's tasks have it (float64) and the group's index (int64, sorted).
    total, certain : numpy.ndarray of shape (groups,)
        Each group's number of tasks :math:`n_g > 0` and how many of them have one candidate
        (float64). A group without rows has :math:`X = 1`: E = 1, V = 0.

    Returns
    -------
    expectation, variance : numpy.ndarray of shape (groups,)
        :math:`\mathbb{E}[1/X]` and :math:`\mathbb{V}[1/X]` of each group's
        :math:`X = \frac{1}{n_g} \sum_{i \in g} 1/r_i`.
    """
    expected = np.ones(total.size)
    variance = np.zeros(total.size)
    spread = np.unique(owner)
    if not spread.size:
        return expected, variance
    local = np.searchsorted(spread, owner)
    distinct, inverse = np.unique(counts.astype(np.int64), return_inverse=True)
    inverse = inverse.reshape(-1)
    table_counts, weights = _table_weights(distinct, inverse, multiplicity, local, spread.size)
    mean = _HarmonicTask(distinct).distinct_mean
    weights_of = multiplicity * mean[inverse]
    spread_sum = np.bincount(local, weights=weights_of, minlength=spread.size).astype(np.float64)
    lowest = np.bincount(local, weights=multiplicity / counts, minlength=spread.size)
    rows = _HarmonicRows(_Tables(table_counts), weights, spread_sum, certain[spread])
    # min X / mu = (sum of 1/C over the tasks) / S_g
    i1, var = _quadrature(rows, (lowest + certain[spread]) / rows.mean_sum)
    mu = rows.mean_sum / total[spread]
    expected[spread] = (1.0 + i1) / mu
    variance[spread] = np.maximum(var, 0.0) / (mu * mu)
    return expected, variance
