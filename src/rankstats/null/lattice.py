r"""Sums of a per-task transform over many tasks, through tables on a lattice in :math:`\log s`.

The reciprocal-rank quadrature of :mod:`rankstats.null.reciprocal` needs, at each of its
nodes :math:`t = e^v / \mu`,

.. math::

    K(t) = \sum_g m_g K_{C_g}(a_g t), \qquad \ell(t) = \sum_g m_g \ell_{C_g}(a_g t),

over distinct pairs :math:`(C_g, a_g)` of a count and a share, with multiplicities :math:`m_g`.
With a distinct weight per task there are as many pairs as tasks, and evaluating the transform
of each pair at each node is the whole cost. Here the cost follows the number of distinct counts
instead, in three steps.

*A lattice in* :math:`\sigma = \log s`. The quadrature's nodes lie on a grid
:math:`v = N h` (:data:`STEP` :math:`= h`; the steps 0.4, 0.2, 0.1 and 0.05 of the quadrature
are multiples of it), so :math:`\log(a_g t) = \sigma_{N + q_g} + \delta_g h` with
:math:`\sigma_k = k h`, an integer cell :math:`q_g` and an offset :math:`\delta_g \in [0, 1)`
that do not depend on the node. The smooth functions :math:`F_C(\sigma) = K_C(e^\sigma)
e^{-2\sigma}` (:math:`K_C \ge 0` is quadratic at 0 and linear at infinity) and
:math:`E_C(\sigma) = \ell_C(e^\sigma) e^{-\sigma}` are tabulated on the lattice once per count
and interpolated by the local Lagrange polynomial through :data:`POINTS` lattice points around
:math:`\sigma`, whose weights :math:`\lambda_j(\delta_g)` depend on the pair only:

.. math::

    K(t) = u^2 \sum_C \sum_r V_C[r]\, F_C(\sigma_{N + r}), \qquad
    V_C[r] = \sum_{g:\, C_g = C} m_g \Bigl(\frac{a_g}{\mu}\Bigr)^2
    \sum_{j:\, q_g + j = r} \lambda_j(\delta_g),

with :math:`u = e^v`, and likewise :math:`\ell(t) = u \sum_C \sum_r V'_C[r]\, E_C(\sigma_{N+r})`
with :math:`(a_g / \mu)` to the first power. The weights :math:`V` are folded once; every node
then costs a short correlation per count. Nodes off the lattice (a fourth halving of the
quadrature step) get their own fold, with :math:`\delta_g` shifted.

*Interpolation counts in* :math:`\log C`. Many distinct counts from :data:`LOWEST` up are
folded into Chebyshev counts of intervals of :math:`\log C`
(:func:`rankstats.null.interpolation.count_intervals`), whatever the shares, so that the number
of tables stays in the hundreds even for :math:`10^6` distinct counts up to :math:`10^{12}`.

*A floor.* Below :math:`s = e^{\text{FLOOR}} = 10^{-18}` both tabulated functions are constant
to :math:`10^{-18}` relative (their next series terms are :math:`O(s)` relative, since
:math:`1/r \in [0, 1]`), so the tables are held constant there, and pairs whose cells lie below
the floor at every node up to :data:`CAP` share one column: memory is bounded whatever the
spread of the weights.

*Error.* Measured on the harmonic transform for counts from 2 to :math:`10^9` and :math:`s` from
:math:`10^{-3}` to :math:`50 C^2`, with :math:`h = 0.05`: the stencil error falls about 60-fold
per two more points (1e-10 with 6 points, 2e-13 with 10, at the transform's own rounding of
1e-15 to 9e-15 with 12), so the 16 points used leave about 1e-18; the folding in
:math:`\log C` from :math:`C = 64` up (degree 16 on intervals of width 1/2) is at the same
rounding floor (degree 12 is not: 5e-14). A coarser lattice does not pay: :math:`h = 0.1` needs
24 points, and at :math:`h = 0.2` even 40 points leave 1e-10. At the quadrature's nodes the
summed :math:`K` and :math:`\ell` agree with every pair's transform summed directly to 2e-15
to 3e-15 relative (the bucketed power sums of :mod:`rankstats.null.reciprocal`: 2e-15 to
7e-15), and the moments of the harmonic mean rank agree with exact enumeration and 30-digit
``mpmath`` quadrature to about 1e-15 (``tests/test_reciprocal_lattice.py``).

*Cost.* The fold is :math:`O(n\,P)` per task standing for itself and :math:`O(n\,P\,17)` for
folded ones, in blocks (:math:`P` = :data:`POINTS`); the tables hold
:math:`(\text{span of } \log s) / h` values per count; each node costs
:math:`O(\text{tables} \times \text{cells})`. Memory is independent of :math:`\max C`, and of
:math:`n` beyond the per-pair arrays.
"""

from __future__ import annotations

import math
from collections.abc import Callable

import numpy as np
from scipy import sparse

from rankstats.arrays import FloatArray, IntArray
from rankstats.null.interpolation import count_intervals

__all__ = ["CAP", "FLOOR", "LOWEST", "POINTS", "STEP", "LatticeSum"]

#: the lattice step in log s
STEP = 0.05
#: points of the local interpolation stencil (even): j = -(POINTS/2 - 1) .. POINTS/2
POINTS = 16
#: below s = exp(FLOOR) the tabulated functions are constant
FLOOR = math.log(1e-18)
#: the largest quadrature node v = log u the lattice is built for
CAP = 30.0
#: counts from this up may be folded into interpolation counts in log C
LOWEST = 64
#: pairs per block of the fold
_BLOCK = 1 << 15
#: float64 elements per block of table values or gathered windows
_ELEMENTS = 1 << 18

#: ``evaluate(s, rows) -> (K, ell)`` for the table counts ``rows``, ``s`` of shape (rows, points)
Evaluator = Callable[[FloatArray, IntArray], tuple[FloatArray, FloatArray]]

_OFFSETS = np.arange(-(POINTS // 2 - 1), POINTS // 2 + 1)
_LOW = -(POINTS // 2 - 1)


#: the barycentric weights of the stencil points, 1 / prod_{i != j} (j - i)
_BARYCENTRIC = np.array(
    [
        (-1.0) ** (POINTS // 2 - j) / (math.factorial(j - _LOW) * math.factorial(POINTS // 2 - j))
        for j in range(_LOW, POINTS // 2 + 1)
    ]
)


def _lagrange(difference: FloatArray, barycentric: FloatArray, hit: IntArray) -> FloatArray:
    r"""Lagrange weights :math:`\omega(x)\, b_k / (x - x_k)` from ``difference`` = x - x_k.

    The first barycentric form (backward stable), :math:`\omega(x) = \prod_k (x - x_k)`, in
    four passes; ``hit[i]`` is the node that row ``i`` lies on, or -1. ``difference`` is
    overwritten.
    """
    rows = np.flatnonzero(hit >= 0)
    difference[rows, hit[rows]] = 1.0
    omega = np.prod(difference, axis=1)
    out: FloatArray = np.multiply(omega[:, None], barycentric[None, :])
    out /= difference
    out[rows] = 0.0
    out[rows, hit[rows]] = 1.0
    return out


def _stencil_weights(delta: FloatArray) -> FloatArray:
    r"""Lagrange weights :math:`\lambda_j(\delta)` on the points :data:`_OFFSETS`, (len, POINTS).

    An offset on a lattice point (:math:`\delta = 0`) gets the weight one there.
    """
    hit = np.where(delta == 0.0, -_LOW, -1)
    return _lagrange(delta[:, None] - _OFFSETS[None, :], _BARYCENTRIC, hit)


def _interval_basis(
    log_nodes: FloatArray, nodes: IntArray, log_counts: FloatArray, counts: IntArray
) -> FloatArray:
    """The Lagrange basis in log C of an interval's interpolation counts, (len(counts), nodes)."""
    difference = log_nodes[:, None] - log_nodes[None, :]
    np.fill_diagonal(difference, 1.0)
    barycentric = 1.0 / np.prod(difference, axis=1)
    where = np.minimum(np.searchsorted(nodes, counts), nodes.size - 1)
    hit = np.where(nodes[where] == counts, where, -1)
    return _lagrange(log_counts[:, None] - log_nodes[None, :], barycentric, hit)


class LatticeSum:
    r""":math:`(K(t), \ell(t))` at :math:`t = u / \mu` for many pairs, through lattice tables.

    Parameters
    ----------
    counts, shares, multiplicity : numpy.ndarray of shape (g,)
        The pairs :math:`(C_g, a_g)` (counts :math:`\ge 2`) and their multiplicities.
    mu : float
        The scale :math:`\mu` of :math:`t = u / \mu`.
    evaluator : callable
        ``evaluator(table_counts)`` returns a function ``(s, rows) -> (K, ell)`` that evaluates
        the transform of ``table_counts[rows]`` at ``s`` of shape (len(rows), points).
    grouped : tuple of numpy.ndarray, optional
        ``numpy.unique(counts, return_inverse=True)``, when the caller has it.
    """

    def __init__(
        self,
        counts: IntArray,
        shares: FloatArray,
        multiplicity: FloatArray,
        mu: float,
        evaluator: Callable[[IntArray], Evaluator],
        grouped: tuple[IntArray, IntArray] | None = None,
    ) -> None:
        if grouped is None:
            distinct, inverse = np.unique(counts, return_inverse=True)
        else:
            distinct, inverse = grouped
        nodes, position, intervals = count_intervals(distinct, LOWEST)
        self.table_counts = nodes
        self._evaluate = evaluator(nodes)
        self.floor_index = math.ceil(FLOOR / STEP)
        self.cap_index = math.ceil(CAP / STEP)
        # per pair: position of its count's table (-1: folded), and the pairs of each interval
        inverse = inverse.reshape(-1)
        self._pair_position = position[inverse]
        interval_of = np.full(distinct.size, len(intervals), dtype=np.int64)
        for index, (members, _) in enumerate(intervals):
            interval_of[members] = index
        pair_interval = interval_of[inverse]
        #: the pairs ordered by interval (their own counts last), sorted on the first fold
        self._pair_interval = pair_interval
        self._by_interval: IntArray | None = None
        sizes = np.bincount(pair_interval, minlength=len(intervals) + 1)
        self._interval_bounds = np.concatenate(([0], np.cumsum(sizes)))
        self._node_positions = [node_positions for _, node_positions in intervals]
        #: the number of stencil terms of the fold: POINTS per pair, times the interpolation
        #: counts of its interval for a folded count
        self.fold_terms = float(
            POINTS
            * (
                sizes[-1]
                + sum(
                    int(size) * p.size for size, p in zip(sizes, self._node_positions, strict=False)
                )
            )
        )
        self._counts = counts
        self._log_counts = np.log(counts.astype(np.float64))
        self._log_nodes = np.log(nodes.astype(np.float64))
        self._cells = (np.log(shares) - math.log(mu)) / STEP
        self._square = multiplicity * (shares / mu) ** 2
        self._linear = multiplicity * (shares / mu)
        self._folds: dict[int, tuple[int, FloatArray, FloatArray]] = {}
        # the tables: F and E at k = base .. base + width - 1
        self._base = 0
        self._table_k = np.zeros((nodes.size, 0))
        self._table_e = np.zeros((nodes.size, 0))

    # --- the fold --------------------------------------------------------------------------------
    def _fold(self, phase: int) -> tuple[int, FloatArray, FloatArray]:
        """``(r0, V, V')`` for nodes at ``N + phase / 64`` lattice steps (columns r = r0 + i)."""
        if phase in self._folds:
            return self._folds[phase]
        delta = self._cells + phase / 64.0
        cell = np.floor(delta)
        delta -= cell
        # cells below this are at the floor at every node up to CAP: one shared column
        lowest = self.floor_index - self.cap_index
        r0 = max(int(cell.min()) + _LOW, lowest)
        width = int(cell.max()) + POINTS // 2 - r0 + 1
        tables = self.table_counts.size
        fold_k = np.zeros((tables, width))
        fold_e = np.zeros((tables, width))
        if self._by_interval is None:
            self._by_interval = np.argsort(self._pair_interval, kind="stable")
        by_interval, bounds = self._by_interval, self._interval_bounds
        own = by_interval[bounds[-2] : bounds[-1]]
        clip = int(cell.min()) + _LOW < lowest
        for begin in range(0, own.size, _BLOCK):  # pairs standing for their own count
            pairs = own[begin : begin + _BLOCK]
            weights = _stencil_weights(delta[pairs])
            first = self._pair_position[pairs] * width - r0
            flat = self._columns(cell[pairs], lowest, clip, first).ravel()
            fold_k += np.bincount(
                flat,
                weights=(self._square[pairs][:, None] * weights).ravel(),
                minlength=tables * width,
            ).reshape(tables, width)
            fold_e += np.bincount(
                flat,
                weights=(self._linear[pairs][:, None] * weights).ravel(),
                minlength=tables * width,
            ).reshape(tables, width)
        for index, node_positions in enumerate(self._node_positions):  # folded counts
            members = by_interval[bounds[index] : bounds[index + 1]]
            log_nodes = self._log_nodes[node_positions]
            nodes = self.table_counts[node_positions]
            for begin in range(0, members.size, _BLOCK):
                pairs = members[begin : begin + _BLOCK]
                basis = _interval_basis(
                    log_nodes, nodes, self._log_counts[pairs], self._counts[pairs]
                )
                weights = _stencil_weights(delta[pairs])
                columns = self._columns(cell[pairs], lowest, clip, np.full(pairs.size, -r0))
                # the transpose of the (pairs, width) stencil matrix, built as such
                stencil = sparse.csc_matrix(
                    (
                        weights.ravel(),
                        columns.ravel(),
                        np.arange(0, (pairs.size + 1) * POINTS, POINTS),
                    ),
                    shape=(width, pairs.size),
                )
                size = node_positions.size
                both = np.empty((pairs.size, 2 * size))
                np.multiply(self._square[pairs][:, None], basis, out=both[:, :size])
                np.multiply(self._linear[pairs][:, None], basis, out=both[:, size:])
                product = np.asarray(stencil @ both).T
                fold_k[node_positions] += product[:size]
                fold_e[node_positions] += product[size:]
        self._folds[phase] = (r0, fold_k, fold_e)
        return self._folds[phase]

    @staticmethod
    def _columns(cell: FloatArray, lowest: int, clip: bool, shift: IntArray) -> IntArray:
        """Columns ``q + j`` of the pairs' stencils (the low ones merged), plus ``shift``."""
        start = cell.astype(np.int64) + _LOW
        if clip:
            columns = np.maximum(start[:, None] + np.arange(POINTS)[None, :], lowest)
            out: IntArray = columns + shift[:, None]
            return out
        out = (start + shift)[:, None] + np.arange(POINTS)[None, :]
        return out

    # --- the tables ------------------------------------------------------------------------------
    def _cover(self, low: int, high: int) -> None:
        """Extend the tables to lattice indices ``low .. high``."""
        have_low, have_high = self._base, self._base + self._table_k.shape[1] - 1
        if self._table_k.shape[1] and have_low <= low and high <= have_high:
            return
        if self._table_k.shape[1]:
            low, high = min(low, have_low), max(high, have_high)
        fresh = np.arange(low, high + 1)
        if self._table_k.shape[1]:
            fresh = fresh[(fresh < have_low) | (fresh > have_high)]
        clipped = np.maximum(fresh, self.floor_index)
        sigma = clipped * STEP
        tables = self.table_counts.size
        values_k = np.empty((tables, fresh.size))
        values_e = np.empty((tables, fresh.size))
        rows_per_block = max(1, _ELEMENTS // (16 * max(fresh.size, 1)))
        s_row = np.exp(sigma)
        for begin in range(0, tables, rows_per_block):
            rows = np.arange(begin, min(begin + rows_per_block, tables))
            s = np.broadcast_to(s_row, (rows.size, fresh.size)).copy()
            k, ell = self._evaluate(s, rows)
            values_k[rows] = k * np.exp(-2.0 * sigma)
            values_e[rows] = ell * np.exp(-sigma)
        new_k = np.empty((tables, high - low + 1))
        new_e = np.empty_like(new_k)
        new_k[:, fresh - low] = values_k
        new_e[:, fresh - low] = values_e
        if self._table_k.shape[1]:
            kept = slice(have_low - low, have_high - low + 1)
            new_k[:, kept] = self._table_k
            new_e[:, kept] = self._table_e
        self._base, self._table_k, self._table_e = low, new_k, new_e

    # --- the sums at the nodes -------------------------------------------------------------------
    def __call__(self, u: FloatArray) -> tuple[FloatArray, FloatArray]:
        r"""Return :math:`K(t)` and :math:`\ell(t)` at :math:`t = u / \mu`."""
        position = np.log(u) / STEP
        index = np.floor(position + 1.0 / 128.0)
        phase = np.rint((position - index) * 64.0).astype(np.int64)
        index = index.astype(np.int64)
        if np.any(index > self.cap_index):
            raise RuntimeError(f"quadrature node beyond the lattice: log u = {np.max(np.log(u))}")
        centred = np.empty(u.size)
        log_transform = np.empty(u.size)
        for value in np.unique(phase).tolist():
            nodes = np.flatnonzero(phase == value)
            r0, fold_k, fold_e = self._fold(value)
            width = fold_k.shape[1]
            at = index[nodes]
            self._cover(int(at.min()) + r0, int(at.max()) + r0 + width - 1)
            block = max(1, _ELEMENTS // (fold_k.size or 1))
            for begin in range(0, nodes.size, block):
                part = slice(begin, begin + block)
                start = at[part] + r0 - self._base
                window = start[:, None] + np.arange(width)[None, :]
                centred[nodes[part]] = np.einsum("tr,tnr->n", fold_k, self._table_k[:, window])
                log_transform[nodes[part]] = np.einsum(
                    "tr,tnr->n", fold_e, self._table_e[:, window]
                )
        return u * u * centred, u * log_transform
