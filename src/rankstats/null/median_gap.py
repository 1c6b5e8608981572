r"""The joint law of the two middle ranks for an even number of tasks, in product form.

For :math:`n = 2a` tasks with ranks :math:`r_i \sim \mathcal{U}\{1, \dots, C_i\}` and
:math:`N_x = \#\{i : r_i \le x\}`, the median's even-:math:`n` terms need, besides the single
order statistics, the double sums over :math:`x < y` of

.. math::

    H(x, y) = P(N_x = a,\ N_y = a) = [u^a] \prod_i \bigl(P(r_i \le x)\, u + P(r_i > y)\bigr),

the probability that exactly :math:`a` ranks are at most :math:`x` and none falls in
:math:`(x, y]`. Such a configuration needs :math:`n - a` tasks above :math:`y`, each with weight
:math:`(C_i - y) / C_i`; every other task is at most :math:`x`, with weight 1 if
:math:`C_i \le x` and :math:`x / C_i` otherwise. As the tasks above :math:`y` are among those
above :math:`x`, the number of tasks with weight :math:`x / C_i` is always
:math:`a - c(x)`, :math:`c(x) = \#\{i : C_i \le x\}`, and :math:`H` factorises:

.. math::

    H(x, y) = \alpha(x)\, \beta(y), \qquad
    \alpha(x) = \frac{x^{a - c(x)}}{\prod_{C_i > x} C_i}, \qquad
    \beta(y) = e_{n-a}\bigl(\{C_i - y : C_i > y\}\bigr)

(:math:`e_k` the elementary symmetric polynomial). With :math:`y = x` it is the point mass
:math:`P(N_y = a) = \alpha(y)\beta(y)`, so that

.. math::

    H(x, y) = P(N_y = a)\, \kappa(x, y), \qquad
    \log \kappa(x, y) = \log\frac{\alpha(x)}{\alpha(y)}
    = (a - c(y)) \log\frac{x}{y} + \sum_{x < C_i \le y} \log\frac{x}{C_i} \le 0 .

The double sums :math:`\sum_{x < y} H(x, y)\, \varphi(x + y)` thus need the point masses
:math:`P(N_y = a)` only at the nodes :math:`y` of the single sums (already computed for the
single order statistics) and an explicit kernel: no second Poisson-binomial law at all. The
kernel decays at least like :math:`(1 - t/y)^{a - c(y)}` in :math:`t = y - x`, so the sum over
:math:`x` stops once that bound is below :math:`e^{-41} \approx 1.6 \cdot 10^{-18}` (relative to the
largest term, which is 1).

Nodes :math:`y` that are integers (every node, when the window of :math:`y` is short enough to be
summed point by point) give the double sum exactly, to rounding. Non-integer nodes (discrete
Gauss rules on long windows) use the continuation :math:`\sum_{t \ge 1} \kappa(y - t, y)` of the
inner sum, which is smooth in :math:`y` between the counts :math:`C_i`; it is used only where the
kernel has decayed before :math:`x` reaches 1 and the pairs are few. Other inputs return ``None``
and the caller falls back to its quadrature of the double sum.
"""

from __future__ import annotations

import math
from collections.abc import Callable

import numpy as np
from numpy.lib.stride_tricks import sliding_window_view

from rankstats.arrays import FloatArray, IntArray
from rankstats.null.interpolation import chebyshev_interpolate, chebyshev_points
from rankstats.null.median_gap_intervals import Cells, interpolated_sums, plan_points
from rankstats.null.median_gap_panels import (
    kernel_pieces,
    node_blocks,
    pair_count,
    panel_nodes,
    shift_cuts,
)
from rankstats.null.median_gap_shared import shared_sums
from rankstats.null.median_rules import _NU, dot

__all__ = ["continues", "gap_sums", "interpolation_plan"]

#: integer nodes up to this value use the table of log-kernel increments (its arrays and the
#: weight tables take about 100 bytes per integer: 4e6 made a median of 66 tasks peak at 94 MB)
_INTEGER_RANGE = 1_000_000
#: at most this many (x, y) pairs are summed ...
_PAIR_BUDGET = 6_000_000
#: ... this many at a time; more pairs than _ENUMERATE_MAX are summed by rules in t on panels
#: (a few dozen nodes per decay length instead of every integer)
_ENUMERATE_MAX = 500_000
_PAIR_CHUNK = 16_384
#: the kernel's explicit reach serves nodes whose reach crosses at most power / _CROSSED_MAX
#: tasks' counts
_CROSSED_MAX = 8
#: entries (nodes by shifts) per block of the sums over nodes with no count in reach
_PLAIN_BLOCK = 8_192
#: Chebyshev points of the interpolant of the inner sums, and the relative agreement with the
#: direct sums it must reach (see _smooth_sums)
_CHEBYSHEV = 33
#: ... unless the inner sums are longer than this (shifts per point): then the panels' rules,
#: whose pairs do not grow with the reach, are cheaper (equal counts of 3e8 at n = 2306 had
#: summed 1e7 shifts at every point: 7 s)
_SMOOTH_MAX_SHIFTS = 20_000
_SMOOTH_TOLERANCE = 1e-14
#: the integer nodes' every pair (from the table of running sums) against the panels' rules: a
#: panel's pair costs about _PANEL_COST times a table's pair (an exponential and the weights per
#: pair, against three multiply-adds; measured 36 against 10 ns), a node's panels about
#: _PANEL_NODE_COST pairs more, and a piece about _PANEL_PAIRS pairs (its Gauss nodes)
_PANEL_COST = 4
_PANEL_NODE_COST = 400
_PANEL_PAIRS = 12
#: nodes and pairs per block of the integer-node sums (each block as wide as its longest span)
_BLOCK_ROWS = 128
_PAIR_BLOCK = 65_536
#: the most a block's log-kernel references D(y) may differ for one reference to serve them
#: all (see _integer_rows)
_BLOCK_LOG_RANGE = 4.0

#: weight functions of s = x + y for the gap sums, one array per sum
Weights = Callable[[FloatArray], list[FloatArray]]


class _Kernel:
    r""":math:`\log \kappa(x, y)` from running sums of :math:`\log \alpha` over the counts.

    Between consecutive counts :math:`v_i < v_{i+1}`, :math:`\alpha(x)` is one power of
    :math:`x`, :math:`a - c(x)`, and it is continuous at the counts: so
    :math:`H_i = \log \alpha(v_i)` is a running sum of :math:`(a - c) \log(v_{i+1} / v_i)`, kept
    as a double-double (:func:`_running_sum`), and :math:`\log \kappa(x, y)` for :math:`x` and
    :math:`y` in different intervals is :math:`(a - c(x)) \log(x / v_{\uparrow})
    + (H_{\uparrow} - H_{\downarrow}) + (a - c(y)) \log(v_{\downarrow} / y)`, the count
    :math:`v_{\uparrow}` next above :math:`x` and :math:`v_{\downarrow}` next at or below
    :math:`y`: three terms of one sign where the powers are (no cancellation), each log of a
    ratio taken as :math:`\log(1 + d / v)` of the exact difference. It had been
    :math:`(a - c(y)) \log(x / y) + k \log x - (P_y - P_x)` with :math:`P` the running sum of
    :math:`\log C_i` over all tasks: a difference of sums of the size of :math:`P` (thousands at
    a thousand tasks), which left :math:`10^{-13}` in kernels near 1.
    """

    def __init__(self, values: FloatArray, below: IntArray, a: int) -> None:
        self.values = values
        self.below = below.astype(np.float64)
        self.a = a
        self._power = a - self.below  # by index(x): the power a - c(x)
        steps = self._power[1:-1] * np.log1p(np.diff(values) / values[:-1])
        high, low = _running_sum(steps)
        # by index(x): the count next above x, and log alpha there (padded past the last);
        # by index(y): the count at or below y, and log alpha there (padded before the first)
        self._up = np.append(values, 1.0)
        self._up_log, self._up_log_low = np.append(high, 0.0), np.append(low, 0.0)
        self._down = np.concatenate(([1.0], values))
        self._down_log = np.concatenate(([0.0], high))
        self._down_log_low = np.concatenate(([0.0], low))

    def exponent(self, y: FloatArray) -> FloatArray:
        """:math:`a - c(y)`, the power of ``x`` in the kernel near ``y``."""
        return np.asarray(self._power[self.index(y)], dtype=np.float64)

    def lowest(self, y: FloatArray, cut: FloatArray) -> FloatArray:
        r"""Per node, an integer :math:`x \ge 1` from which on :math:`\log\kappa(x, y) \ge -c`.

        (:math:`c` is ``cut``.) Where no count lies between that :math:`x` and :math:`y`, the
        kernel is :math:`(x / y)^{a - c(y)}` and the answer is explicit (the smallest such
        :math:`x`); where a few do, that :math:`x` is a little lower than needed; elsewhere
        :meth:`_crossing` finds it in closed form.
        """
        hi = np.maximum(np.ceil(y) - 1.0, 1.0)  # kappa(hi) = 1 or close: above the cut
        power = self.exponent(y)
        guess = np.minimum(np.maximum(np.ceil(y - _plain_reach(y, power, cut)), 1.0), hi)
        # each of the k tasks with a count in (x, y] takes at most log(y / x) more from
        # log kappa, like a power p + k: their reach lies within about k / p of the explicit
        # one, which (an upper bound) is close enough where k <= p / 8 (a few more terms, each
        # exact, are summed)
        crossed = self.below[self.index(y)] - self.below[self.index(guess)]
        plain = crossed * _CROSSED_MAX <= power
        if bool(np.all(plain)):
            return np.asarray(guess, dtype=np.float64)
        out: FloatArray = guess.copy()
        out[~plain] = self._crossing(y[~plain], cut[~plain], hi[~plain])
        return out

    def _crossing(self, y: FloatArray, cut: FloatArray, hi: FloatArray) -> FloatArray:
        r""":meth:`lowest` in closed form, from :math:`\log \alpha` at the counts.

        :math:`\log\kappa(x, y) \ge -c` where :math:`\log \alpha(x) \ge T = \log \alpha(y) - c`.
        The first count at which the running maximum of :math:`\log \alpha` reaches :math:`T`
        (one search) bounds the interval of the crossing; there :math:`\alpha` is one power
        :math:`p > 0` of :math:`x` from the count :math:`v` below, so the crossing is
        :math:`x = v\, e^{(T - \log\alpha(v)) / p}`, and the answer its ceiling. (The set where
        :math:`\log \alpha \ge T` below :math:`y` is an interval up to :math:`y`: past its
        maximum, where :math:`c(x) > a`, :math:`\alpha` falls towards :math:`\alpha(y)`.) The
        bracketing it replaced took about a dozen evaluations of the kernel per node; this is
        bisection's answer but where the crossing lies within :math:`10^{-12}` of an integer
        (one term at the cut more or less).
        """
        iy = self.index(y)
        at_counts = self._down_log[1:] + self._down_log_low[1:]
        # log alpha(y) from the count at or below y (the first count, where y is below all)
        below_y = np.maximum(iy - 1, 0)
        count = self.values[below_y]
        target = at_counts[below_y] + self._power[iy] * np.log1p((y - count) / count) - cut
        first = np.minimum(
            np.searchsorted(np.maximum.accumulate(at_counts), target, side="left"), iy
        )
        base = np.maximum(first - 1, 0)  # the count below the crossing (the first, below all)
        with np.errstate(under="ignore"):
            x = self.values[base] * np.exp((target - at_counts[base]) / self._power[first])
        return np.asarray(np.clip(np.ceil(x), 1.0, hi), dtype=np.float64)

    def index(self, x: FloatArray) -> IntArray:
        """Position of the first distinct count above ``x``."""
        return np.asarray(np.searchsorted(self.values, x, side="right"), dtype=np.int64)

    def log_ratio(
        self,
        x: FloatArray,
        y: FloatArray,
        ix: IntArray | None = None,
        iy: IntArray | None = None,
    ) -> FloatArray:
        r"""Return :math:`\log \kappa(x, y)` for :math:`1 \le x < y`.

        ``ix`` and ``iy`` are :meth:`index` of ``x`` and ``y`` when known; a single ``y`` (of
        shape ``(1,)``) serves every ``x`` (its terms computed once).
        """
        ix = self.index(x) if ix is None else ix
        iy = self.index(y) if iy is None else iy
        power_y = self._power[iy]
        same = np.asarray(ix == iy)
        if bool(same.all()):  # no count in (x, y]: one power
            return np.asarray(power_y * np.log1p(-(y - x) / y), dtype=np.float64)
        v_up, v_down = self._up[ix], self._down[iy]
        out = np.subtract(x, v_up)
        out /= v_up
        np.log1p(out, out=out)
        out *= self._power[ix]
        out += (self._up_log[ix] - self._down_log[iy]) + (
            self._up_log_low[ix] - self._down_log_low[iy]
        )
        below_y = np.subtract(v_down, y)
        below_y /= y
        np.log1p(below_y, out=below_y)
        below_y *= power_y
        out += below_y
        if bool(same.any()):
            pick = np.flatnonzero(same)
            shape = out.shape  # (a single y broadcasts against many x)
            y_same = np.broadcast_to(y, shape)[pick]
            step = (np.broadcast_to(x, shape)[pick] - y_same) / y_same
            out[pick] = np.broadcast_to(power_y, shape)[pick] * np.log1p(step)
        return np.asarray(out, dtype=np.float64)


def _plain_reach(y: FloatArray, power: FloatArray, cut: FloatArray) -> FloatArray:
    r"""The shift :math:`t` where :math:`(1 - t/y)^p` falls to :math:`e^{-c}` (inf where p = 0)."""
    with np.errstate(divide="ignore"):
        return np.where(power > 0.0, -y * np.expm1(-cut / np.maximum(power, 1.0)), np.inf)


def _least_pairs(y: FloatArray, x0: float, a: int, cut: FloatArray) -> int:
    r"""A lower bound of the pairs :func:`_integer_rows` sums, without its table of :math:`D`.

    Each of the :math:`c(y) - c(x)` counts in :math:`(x, y]` adds :math:`\log(x / C_i) \ge
    \log(x / y)` to :math:`\log \kappa(x, y)`, so :math:`\log \kappa(x, y) \ge (a - c(x))
    \log(x / y) \ge a \log(x / y)`: every integer :math:`x \ge \max(x_0, y e^{-c / a})` below
    :math:`y` is above the cut :math:`c`. An input past the budget by this bound is turned away
    before the table of :math:`D` over :math:`x_0..\max y` is built (up to
    :data:`_INTEGER_RANGE` entries: 15 ms for 100 tasks with counts up to :math:`10^6`).
    """
    with np.errstate(under="ignore"):
        start = np.maximum(np.ceil(y * np.exp(-cut / max(a, 1))), x0)
    return int(np.maximum(y - start, 0.0).sum())


def _enumerated(span: IntArray) -> tuple[FloatArray, IntArray, FloatArray]:
    """Every integer ``t = 1..span[j]`` of every node ``j``, with unit weights."""
    owner = np.repeat(np.arange(span.size, dtype=np.int64), span)
    t = np.arange(owner.size) - np.repeat(np.cumsum(span) - span, span) + 1.0
    return t.astype(np.float64), owner, np.ones(owner.size)


def _inverse_weights(s: FloatArray, c0: float) -> tuple[FloatArray, FloatArray]:
    r"""The weights :math:`4 / (s(s+1)(s+2))` and :math:`\Delta^2 (2/s - 1/c_0)^2` of the gap sums.

    With :math:`u_s = 2/s - 1/c_0` and :math:`d_s = u_{s+1} - u_s = -2/(s(s+1))`,
    :math:`\Delta^2 (u_s^2) = 8 u_{s+1} / (s(s+1)(s+2)) + d_{s+1}^2 + d_s^2`, without
    cancellation.
    """
    # from three reciprocals, in place (these weights are evaluated at every pair)
    r0 = np.reciprocal(s)
    u1 = s + 1.0
    r1 = np.reciprocal(u1)
    r2 = s + 2.0
    np.reciprocal(r2, out=r2)
    np.multiply(r0, r1, out=r0)  # -d0 / 2
    cube = r0 * r2  # 1 / (s (s+1) (s+2))
    np.multiply(r2, r1, out=r2)  # -d1 / 2
    np.subtract(2.0 * c0, u1, out=u1)
    u1 *= r1
    u1 /= c0
    u1 *= cube
    u1 *= 8.0
    r0 *= r0
    r2 *= r2
    r0 += r2
    r0 *= 4.0
    u1 += r0
    cube *= 4.0
    return cube, u1


def _running_sum(steps: FloatArray) -> tuple[FloatArray, FloatArray]:
    """The running sums of ``steps`` from 0 as high and low parts (a double-double).

    The high part is :func:`numpy.cumsum`'s; the low part sums the exact rounding error of each
    of its additions (Knuth's TwoSum). The log-kernel :math:`D(x) - D(y)` of a few hundred
    thousand steps had carried their roundings, about :math:`10^{-13}` relative in the kernel
    sums.
    """
    running = np.zeros(steps.size + 1)
    np.cumsum(steps, out=running[1:])
    before, after = running[:-1], running[1:]
    added = after - before
    errors = (before - (after - added)) + (steps - added)
    low_part = np.zeros(steps.size + 1)
    np.cumsum(errors, out=low_part[1:])
    return running, low_part


def _integer_rows(
    kernel: _Kernel,
    y: FloatArray,
    power: FloatArray,
    phi: Weights,
    budget: int,
    cut: FloatArray,
) -> FloatArray | None:
    r"""The inner sums :math:`\sum_{x < y} \kappa(x, y) \varphi_j(x + y)` at integer nodes.

    Returns an array of shape ``(weights, nodes)`` (the nodes in the order given), every pair
    :math:`x < y` summed, or ``None`` past the budget or :data:`_INTEGER_RANGE`.

    On the integers, :math:`\alpha(x + 1) / \alpha(x) = (1 + 1/x)^{a - c(x)}` (a count at
    :math:`x + 1` changes the power and the product by the same factor), so
    :math:`\log \kappa(x, y) = D(x) - D(y)` with :math:`D` the running sum of
    :math:`(a - c(z)) \log(1 + 1/z)` from the lowest :math:`x` needed: positive terms, and a
    running total of the size of the window's log-ratio only, not of :math:`\log \alpha`.

    The kernel factorises, :math:`\kappa(x, y) = e^{D(x) - R}\, e^{R - D(y)}`, so a block of
    nodes whose :math:`D(y)` lie within :data:`_BLOCK_LOG_RANGE` of one another shares one
    reference :math:`R` (the block's largest :math:`D(y)`): an exponential per integer
    :math:`x` of the block's windows and one per node, not one per pair, and each node's
    inner sums are dot products of its window of :math:`e^{D(x) - R}` with its windows of the
    weight tables. Each factor's argument is at most :math:`c +` :data:`_BLOCK_LOG_RANGE` in
    size (:math:`c` the cut), so its rounding costs what the single exponential's did. Blocks
    whose nodes are further apart (a steep kernel: short windows, far from one another) take
    an exponential per pair, where that is fewer.
    """
    bound = _plain_reach(y, power, cut)
    x0 = max(1.0, float(np.min(np.maximum(y - 1.0 - np.floor(bound), 1.0))))
    top = float(y.max())
    if top - x0 > _INTEGER_RANGE or _least_pairs(y, x0, kernel.a, cut) > budget:
        return None
    z = np.arange(x0, top + 1.0)
    steps = kernel.exponent(z[:-1]) * np.log1p(1.0 / z[:-1])
    running, low_part = _running_sum(steps)
    at_y = running[(y - x0).astype(np.int64)]
    at_y_low = low_part[(y - x0).astype(np.int64)]
    first = np.searchsorted(running, at_y - cut, side="left")
    span = np.maximum((y - x0).astype(np.int64) - first, 0)
    if int(span.sum()) > budget:
        return None
    s_lo = int(2.0 * x0) + 1
    tables = phi(np.arange(float(s_lo), 2.0 * top))
    out = np.zeros((len(tables), y.size))
    order = np.argsort(y, kind="stable")
    y_at = (y[order] - x0).astype(np.int64)
    span, at_y, at_y_low = span[order], at_y[order], at_y_low[order]
    pad = int(span.max()) if span.size else 0
    # below x0 the kernel's terms are 0: D = -inf there
    padded = np.concatenate((np.full(pad, -np.inf), running))
    padded_low = np.concatenate((np.zeros(pad), low_part))
    padded_tables = [np.concatenate((np.zeros(pad), table)) for table in tables]
    ceiling = np.maximum.accumulate(at_y)  # D(y) is non-decreasing; this keeps it so
    start = 0
    while start < y.size:
        stop = min(start + _BLOCK_ROWS, y.size)
        width = int(span[start:stop].max())
        while stop - start > 1 and (stop - start) * width > _PAIR_BLOCK:
            stop = start + (stop - start) // 2
            width = int(span[start:stop].max())
        if width == 0:
            start = stop
            continue
        rows = y_at[start:stop]
        # row i, column c: x = y_i - width + c, the shift t = width - c; the shifts of a row
        # beyond its own span are summed too (terms below the cut, but exact ones)
        low = int(rows[0]) + pad - width
        reference = float(ceiling[stop - 1])
        # (each difference of D as the difference of its high parts, exact where they are
        # within a factor 2, plus that of its low parts)
        node_hi, node_lo = at_y[start:stop], at_y_low[start:stop]
        if (
            reference - float(ceiling[start]) <= _BLOCK_LOG_RANGE
            and 2 * (int(rows[-1] - rows[0]) + width) < rows.size * width
        ):
            # one exponential per x and per node
            window = slice(low, int(rows[-1]) + pad)
            ratios = np.exp((padded[window] - reference) + padded_low[window])
            kernel_rows = sliding_window_view(ratios, width)[rows - rows[0]]
            factor = np.exp((reference - node_hi) - node_lo)
        else:  # nodes far apart (a steep kernel, short spans): one per pair
            log_k = sliding_window_view(padded, width)[rows + pad - width] - node_hi[:, None]
            log_k += sliding_window_view(padded_low, width)[rows + pad - width]
            log_k -= node_lo[:, None]
            kernel_rows = np.exp(log_k)
            factor = None
        # s = x + y = 2y - width + c, from x0 + (y - x0) + (y - x0) - width + c
        first_s = 2 * rows + int(2.0 * x0) - width - s_lo + pad
        placed = order[start:stop]
        for j, table in enumerate(padded_tables):
            values = sliding_window_view(table, width)[first_s]
            row_sums = np.einsum("ij,ij->i", kernel_rows, values)
            out[j, placed] = row_sums if factor is None else factor * row_sums
        start = stop
    return out


def _surely_crosses(values: FloatArray, y: FloatArray, a: int, cut: float) -> bool:
    r"""Whether some count surely lies within some node's reach (no :meth:`_Kernel.lowest`).

    :math:`\log \kappa(x, y) \ge (a - c(x)) \log(x / y) \ge a \log(x / y)` (each count in
    :math:`(x, y]` adds :math:`\log(x / C_i) \ge \log(x / y)`), so every integer
    :math:`x \ge x_* = \lceil y e^{-c / a} \rceil` is within the reach, and a count in
    :math:`[x_* + 1, y)` lies inside the shifts summed (whose lowest :math:`x` is below
    :math:`x_* + 1` whatever the rounding of a non-integer :math:`y`). Then
    :func:`_continues` is false: spread counts need not bisect the kernel's reach to say so.
    """
    with np.errstate(under="ignore"):
        x_star = np.maximum(np.ceil(y * math.exp(-cut / max(a, 1))), 1.0)
    first = np.searchsorted(values, x_star + 1.0, side="left")
    return bool(np.any(np.searchsorted(values, y, side="left") > first))


def _continues(values: FloatArray, y: FloatArray, reach: FloatArray, span: IntArray) -> bool:
    """Whether the inner sums continue smoothly to non-integer nodes ``y``."""
    if bool(np.any(reach >= y - 1.0)):
        return False
    # a count inside the kernel's reach: the continuation has kinks at every integer
    return not bool(np.any((values >= float((y - span).min())) & (values < y.max())))


def continues(values: FloatArray, below: IntArray, a: int, y: FloatArray, tolerance: float) -> bool:
    """Whether :func:`gap_sums` accepts the non-integer nodes ``y`` (budget aside)."""
    y = y[y > 1.0]
    if y.size == 0:
        return True
    if _surely_crosses(values, y, a, -math.log(tolerance)):
        return False
    kernel = _Kernel(values, below, a)
    reach = y - kernel.lowest(y, np.full(y.size, -math.log(tolerance)))
    span = np.maximum(np.floor(np.minimum(reach, y - 1.0)), 0.0).astype(np.int64)
    return _continues(values, y, reach, span)


def interpolation_plan(
    values: FloatArray, below: IntArray, a: int, y: FloatArray, tolerance: float
) -> tuple[IntArray, int, Cells]:
    """How :func:`gap_sums` would serve the non-integer nodes ``y`` by interpolation.

    Where a count lies within the kernel's reach, :func:`gap_sums` interpolates the inner sums
    between the counts (:mod:`.median_gap_intervals`). Returns the nodes (indices into ``y``)
    that cannot be interpolated (where the kernel varies within a few integers next to a count:
    their panels need integer nodes) and the number of integer points whose exact inner sums the
    interpolants take, and the cells (for :func:`gap_sums` on the nodes kept). Judged before any
    point mass is evaluated.
    """
    kernel = _Kernel(values, below, a)
    cut = -math.log(tolerance)
    inside = np.flatnonzero(y > 1.0)
    found, points, cells = plan_points(
        values, y[inside], kernel.exponent(y[inside]), _pole_weights(kernel, cut)
    )
    return inside[found], points, cells


def gap_sums(
    values: FloatArray,
    below: IntArray,
    a: int,
    y: FloatArray,
    weights: FloatArray,
    mass: FloatArray,
    c0: float,
    *,
    tolerance: float = 1e-18,
    budget: int = _PAIR_BUDGET,
    phi: Weights | None = None,
    cells: Cells | None = None,
) -> list[float] | None:
    r"""Return the sums over :math:`x < y` of :math:`H \varphi_j(x + y)`, one per weight function.

    By default :math:`\varphi_0 = 1`, :math:`\varphi_1(s) = 4 / (s(s+1)(s+2))` and
    :math:`\varphi_2(s) = \Delta^2 (2/s - 1/c_0)^2`, the weights of the inverse median's terms;
    ``phi`` gives others (any weight function of :math:`s` smooth on the scale of :math:`s`).

    Parameters
    ----------
    values, below : numpy.ndarray
        The sorted distinct counts, and ``below[i]`` the number of tasks with a count below
        ``values[i]`` (length one more than ``values``: its steps are the multiplicities).
    a : int
        Half the number of tasks.
    y, weights, mass : numpy.ndarray
        Nodes and weights of the sum over :math:`y`, and :math:`P(N_y = a)` at the nodes.
    c0 : float
        The centre of the inverse median's expansion (for the default weights).
    tolerance : float
        The relative size of what may be dropped: kernel terms below ``tolerance`` (relative to
        the largest, which is 1) and nodes whose sums are bounded by ``tolerance`` of the largest
        sum (their weighted mass times ``y`` times the largest weight on their range of
        :math:`s`, against the largest weighted mass times the weight at :math:`s = 2y`).
    budget : int
        The most pairs :math:`(x, y)` to sum.
    phi : callable, optional
        Maps an array of :math:`s` to the list of weight arrays :math:`\varphi_j(s)`.
    cells : Cells, optional
        The interpolation cells :func:`interpolation_plan` formed on these nodes (or more).

    Returns
    -------
    list of float, or None
        One sum per weight function; ``None`` if the nodes are not integers, a count lies within
        some node's reach and the inner sums cannot be interpolated between the counts
        (:mod:`.median_gap_intervals`), or if the pairs exceed ``budget``.
    """
    contribution = np.abs(weights) * mass
    if phi is None:

        def phi(s: FloatArray) -> list[FloatArray]:
            return [np.ones(s.size), *_inverse_weights(s, c0)]

    # a node's sum over x < y is at least its last term (kappa(y - 1, y) is about 1) and at most
    # y times the largest weight on s in y + 1 .. 2y - 1: nodes whose upper bound is below the
    # tolerance of the largest lower bound change no sum by more than that (weights such as
    # 1/s^3 make nodes of small mass count: a cut on the mass alone had dropped the nodes at
    # small y that carry E[1/M] for counts 2 and 1e12, leaving it 180 % off)
    ends = [np.abs(values_j) for values_j in phi(np.concatenate((y + 1.0, 1.5 * y, 2.0 * y)))]
    keep = np.zeros(y.size, dtype=bool)
    for size in ends:
        near, middle, far = size[: y.size], size[y.size : 2 * y.size], size[2 * y.size :]
        lower = float((contribution * far).max(initial=0.0))
        upper = contribution * y * np.maximum(np.maximum(near, middle), far)
        keep |= upper > tolerance * lower
    width = len(phi(np.ones(1)))
    keep &= y > 1.0
    y = y[keep]
    scale = (weights * mass)[keep]
    if y.size == 0:
        return [0.0] * width
    # (a cut relative to each node's own mass would save a third of the terms, but the inverse
    # median's weights change sign and cancel, which then costs digits)
    cut = np.full(y.size, -math.log(tolerance))
    kernel = _Kernel(values, below, a)
    power = kernel.exponent(y)
    smooth = _smooth_sums(kernel, phi, y, power, cut, scale, width)
    if smooth is not None:
        return smooth
    integral = bool(np.all(y == np.floor(y)))
    reach = None
    if not integral:
        crosses = _surely_crosses(values, y, a, float(cut[0]))
        if not crosses:
            reach = y - kernel.lowest(y, cut)
            span = np.maximum(np.floor(np.minimum(reach, y - 1.0)), 0.0).astype(np.int64)
            crosses = not _continues(values, y, reach, span)
        if crosses:
            # a count within some node's reach: the inner sums between consecutive counts,
            # interpolated from exact sums at integer points
            return _interpolated(kernel, phi, y, scale, power, cut, budget, width, cells)
    rows = _exact_rows(kernel, phi, y, power, cut, budget, width, reach)
    if rows is None:
        return None
    return [dot(row, scale) for row in rows]


def _interpolated(
    kernel: _Kernel,
    phi: Weights,
    y: FloatArray,
    scale: FloatArray,
    power: FloatArray,
    cut: FloatArray,
    budget: int,
    width: int,
    cells: Cells | None = None,
) -> list[float] | None:
    """The gap sums at nodes whose kernel reaches a count: :mod:`.median_gap_intervals`."""
    values = kernel.values

    def exact_rows(points: FloatArray) -> FloatArray | None:
        at = np.full(points.size, cut[0])
        return _exact_rows(kernel, phi, points, kernel.exponent(points), at, budget, width)

    pole = _pole_weights(kernel, cut[0])
    return interpolated_sums(values, y, scale, power, pole, exact_rows, width, cells)


def _pole_weights(kernel: _Kernel, cut: float) -> Callable[[FloatArray], FloatArray]:
    r"""At points :math:`x`, :math:`\log \kappa(C_-, x)` for the count :math:`C_-` below each.

    The weight of the inner sums' pole at 0 in an interpolant from :math:`x` up
    (:mod:`.median_gap_intervals`); at least :math:`-c` (the cut), where the lowest :math:`x`
    summed takes the count's place.
    """

    def log_pole(x: FloatArray) -> FloatArray:
        ix = kernel.index(x)
        count = kernel.values[np.maximum(ix - 1, 0)]
        inside = (ix > 0) & (count < x)
        log_k = np.full(x.size, -cut)
        if bool(np.any(inside)):
            log_k[inside] = kernel.log_ratio(count[inside], x[inside])
        return np.where((ix > 0) & (count == x), 0.0, np.maximum(log_k, -cut))

    return log_pole


def _exact_rows(
    kernel: _Kernel,
    phi: Weights,
    y: FloatArray,
    power: FloatArray,
    cut: FloatArray,
    budget: int,
    width: int,
    reach: FloatArray | None = None,
) -> FloatArray | None:
    """The inner sums at integer nodes (or at nodes whose sums continue), ``(width, nodes)``.

    ``None`` past the budget.
    """
    tabled = bool(np.all(y == np.floor(y))) and float(y.max()) <= _INTEGER_RANGE
    # few pairs (the plain reach bounds the spans but where counts are crossed, and then it is
    # close): every pair from the table, no panels to weigh
    few = tabled and float(np.minimum(_plain_reach(y, power, cut), y).sum()) <= _ENUMERATE_MAX
    if few:
        fast = _integer_rows(kernel, y, power, phi, budget, cut)
        if fast is not None:
            return fast
    if reach is None:
        reach = y - kernel.lowest(y, cut)
    span = np.maximum(np.floor(np.minimum(reach, y - 1.0)), 0.0).astype(np.int64)
    values, a = kernel.values, kernel.a
    found = shift_cuts(values, y, span, power)
    if (
        tabled
        and not few
        and int(span.sum())
        <= _PANEL_COST
        * int(np.minimum(span, _PANEL_PAIRS * (found.kinks + found.regular + 1)).sum())
        + _PANEL_NODE_COST * y.size
    ):
        # every pair from the table of running sums: cheaper than the panels' rules here
        fast = _integer_rows(kernel, y, power, phi, budget, cut)
        if fast is not None:
            return fast
    iy = kernel.index(y)
    rows = np.zeros((width, y.size))
    if int(span.sum()) <= min(budget, _ENUMERATE_MAX):
        # no count within a node's reach: the kernel is (1 - t/y)^p on all its shifts
        plain = (kernel.index(y - span) == iy) & (power >= 0.0)
        if bool(np.any(plain)):
            rows[:, plain] = _plain_rows(phi, y[plain], power[plain], span[plain], width)
        rest = np.flatnonzero(~plain)
        if rest.size:
            t, owner, w_t = _enumerated(span[rest])
            _add_pairs(rows, kernel, phi, y, iy, t, rest[owner], w_t, None)
        return rows
    if bool(np.all(y == np.floor(y))):
        # integer nodes: the sums below the count under each node from Gauss nodes in x that
        # all nodes share (.median_gap_shared); each node's panels from that count up only
        below_y = np.searchsorted(values, y, side="left") - 1
        lowest = y - span
        bound = np.maximum(np.where(below_y >= 0, values[np.maximum(below_y, 0)], 0.0), lowest)
        shared = shared_sums(kernel, phi, y, lowest, bound, width, budget)
        if shared is not None:
            rows += shared
            span = (y - bound).astype(np.int64)
            found = shift_cuts(values, y, span, power)
    # the panels' pairs, block of nodes by block of nodes: memory bounded by the block, not by
    # the counts (wide spans cut by many counts make many pieces)
    # count the pairs first: an input beyond the budget costs the pieces, not their rules and
    # sums. Each piece has a pair at least, and a node at least max(kinks, regular) + 1 pieces
    # (the kinks are distinct, the regular cuts too, but a kink may fall on a regular cut)
    blocks = node_blocks(found)
    if int((np.maximum(found.kinks, found.regular) + 1).sum()) > budget:
        return None
    # a piece has at most 2 _NU pairs (enumerated) or _NU nodes: where that bound is within the
    # budget, nothing to count
    at_most = np.minimum(span, 2 * _NU * (found.kinks + found.regular + 1))
    if int(at_most.sum()) > budget:
        pairs = 0
        for block in blocks:
            pieces = kernel_pieces(values, kernel.below, a, y[block], span[block], power[block])
            pairs += pair_count(pieces)
            if pairs > budget:
                return None
    for block in blocks:
        pieces = kernel_pieces(values, kernel.below, a, y[block], span[block], power[block])
        t, owner, w_t, ix = panel_nodes(pieces)
        _add_pairs(rows, kernel, phi, y, iy, t, block[owner], w_t, ix)
    return rows


def _add_pairs(
    rows: FloatArray,
    kernel: _Kernel,
    phi: Weights,
    y: FloatArray,
    iy: IntArray,
    t: FloatArray,
    owner: IntArray,
    w_t: FloatArray,
    ix: IntArray | None,
) -> None:
    """Add the kernel terms of the pairs ``(y[owner] - t, y[owner])`` to their nodes' ``rows``."""
    for c0_ in range(0, t.size, _PAIR_CHUNK):
        c1_ = c0_ + _PAIR_CHUNK
        own = owner[c0_:c1_]
        yy = y[own]
        xx = yy - t[c0_:c1_]
        log_k = kernel.log_ratio(xx, yy, None if ix is None else ix[c0_:c1_], iy[own])
        kappa = np.exp(log_k) * w_t[c0_:c1_]
        for j, values_j in enumerate(phi(xx + yy)):
            rows[j] += np.bincount(own, weights=kappa * values_j, minlength=y.size)


def _plain_rows(
    phi: Weights, y: FloatArray, power: FloatArray, span: IntArray, width: int
) -> FloatArray:
    r"""Per node, :math:`\sum_{t=1}^{T_j} (1 - t/y_j)^{p_j} \varphi_k(2 y_j - t)`, one row per k.

    The pairs are laid out as rows (nodes, sorted by span) by columns (shifts), in blocks of
    about :data:`_PLAIN_BLOCK` entries: no per-pair index arrays, and each block's temporaries
    stay in cache.
    """
    out = np.zeros((width, y.size))
    order = np.argsort(span, kind="stable")
    y, power, spans = y[order], power[order], span[order].astype(np.float64)
    start = 0
    while start < y.size:
        # the largest block whose rows, padded to its widest (last) span, fit in a block
        padded = (np.arange(1, y.size - start + 1) * spans[start:]) <= _PLAIN_BLOCK
        stop = start + max(int(np.count_nonzero(padded)), 1)
        rows = slice(start, stop)
        start = stop
        columns = int(spans[stop - 1])
        if columns == 0:
            continue
        shift = np.minimum(np.arange(1.0, columns + 1.0)[None, :], spans[rows, None])
        kappa = np.log1p(-shift / y[rows, None])
        kappa *= power[rows, None]
        np.exp(kappa, out=kappa)
        if spans[rows][0] < columns:
            kappa *= np.arange(1.0, columns + 1.0)[None, :] <= spans[rows, None]
        s = 2.0 * y[rows, None] - shift
        for j, values_j in enumerate(phi(s.ravel())):
            out[j, order[rows]] = np.sum(kappa * values_j.reshape(kappa.shape), axis=1)
    return out


def _smooth_sums(
    kernel: _Kernel,
    phi: Weights,
    y: FloatArray,
    power: FloatArray,
    cut: FloatArray,
    scale: FloatArray,
    width: int,
) -> list[float] | None:
    r"""The gap sums from an interpolant of the inner sums, where they are one analytic function.

    Where every node has the same power :math:`p = a - c(y)` and no count lies between the
    lowest :math:`x` reached and the highest node, the inner sum of each weight is
    :math:`g_k(y) = \sum_{t=1}^{T} (1 - t/y)^p \varphi_k(2y - t)` at every node (one
    :math:`T`, the longest reach: the terms beyond a node's own reach are below the cut), an
    analytic function of :math:`y` on the nodes' range (its only singularity is at
    :math:`y = 0`). It is summed at :data:`_CHEBYSHEV` Chebyshev points and interpolated to the
    nodes (barycentric formula), then checked against the direct sums at three nodes; ``None``
    (sum every node) if the conditions fail or the interpolant misses
    :data:`_SMOOTH_TOLERANCE` of the largest value anywhere in the check.
    """
    if y.size < 2 * _CHEBYSHEV or not bool(np.all(power == power[0])) or power[0] <= 0.0:
        return None
    reach = _plain_reach(y, power, cut)
    span = np.maximum(np.floor(np.minimum(reach, y - 1.0)), 0.0).astype(np.int64)
    top_t = int(span.max())
    if top_t > _SMOOTH_MAX_SHIFTS:
        return None
    lo, hi = float(y.min()), float(y.max())
    ends = kernel.index(np.array([lo - top_t, hi]))
    if lo - top_t < 1.0 or hi <= lo or int(ends[0]) != int(ends[1]):
        return None
    points = (lo + hi) / 2.0 + (hi - lo) / 2.0 * chebyshev_points(_CHEBYSHEV)
    longest = np.full(_CHEBYSHEV, top_t, dtype=np.int64)
    at_points = _plain_rows(phi, points, np.full(_CHEBYSHEV, power[0]), longest, width)
    values = chebyshev_interpolate(at_points.T, points, y).T
    # the check: the same function (to the longest reach) summed directly at three nodes
    check = np.argsort(y)[[y.size // 6, y.size // 2, (5 * y.size) // 6]]
    direct = _plain_rows(phi, y[check], power[check], longest[:3], width)
    size = np.abs(at_points).max(axis=1)
    if bool(np.any(np.abs(direct - values[:, check]) > _SMOOTH_TOLERANCE * size[:, None])):
        return None
    return [dot(values[j], scale) for j in range(width)]
