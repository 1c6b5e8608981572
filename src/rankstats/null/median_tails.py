r"""Tails and point masses of the Poisson-binomial counts N_x behind the median null model.

See :class:`_Evaluator`: an exact dynamic programme over the uncertain tasks where that is cheap,
a lattice Fourier inversion of the characteristic function (from tabulated power sums) otherwise.

The programme adds one task at a time to the law of the count, all terms nonnegative, so both
tails keep their relative accuracy however small. It tracks only a band of counts: counts above
the largest one asked for are pooled in one cell, and a count that cannot pass the smallest one
asked for with the tasks left is settled (its mass added to every lower tail) and dropped, so the
band is never wider than the tasks left. It is used where its work per node is small, or where
the nodes are so few that the whole chunk is cheap (a median pinned at a small count, whose tiny
tails the Fourier inversion has only to about :math:`10^{-16}` absolute). Beyond the tasks left,
a count is also settled once the tasks left reach past the asked counts from it with
probability :math:`10^{-320}` at most (a Chernoff bound, the tasks taken by ascending count):
beside tasks that almost never succeed (counts of :math:`10^{12}`) the band shrinks from
thousands of counts to a few dozen. Where many tasks are uncertain but the count is asked on a
narrow band in a small tail, the law on that band comes from :mod:`rankstats.null.median_band`,
also relative to its size, as does the law split into the likely tasks' misses and the
unlikely tasks' count, each on a band. That split is more accurate than the programme where
thousands of tasks share a count: each step of the programme rounds :math:`p + q` off 1 the
same way, a relative drift of up to :math:`n` units in the last place (:math:`4 \cdot 10^{-13}`
at :math:`n = 10^4`, against :math:`10^{-14}` for the split).

The inversion's series of :math:`\log(1 + q w)` is cut where its remainder, weighted by
:math:`|\varphi(\theta)| \le e^{-\sigma^2 (1 - \cos\theta)}`, stays below 1e-21 (18 terms
for 4,000 tasks at counts near twice the median, where the remainder's bound at the largest
angle alone had asked 35). A chunk of nodes with no count among them and no shift has every tail
and point mass one polynomial in :math:`x`, smooth on the law's spread in ranks: it is inverted
at 129 Chebyshev points or so (nested doublings until the last quarter of the coefficients is
below 1e-14, and three nodes checked against the direct inversion) and interpolated to its ~540
nodes. Against tails from the law built task by task in extended precision, the moments agree
to 1e-14 (1,000 to 3,000 tasks), as with the inversion at every node.

About 1,000 lines, one class: both methods share the evaluator's power tables, chunks and node
order, and the dynamic programme is the fallback of the inversion within one chunk.
"""

from __future__ import annotations

import math
from collections.abc import Sequence

import numpy as np

from rankstats.arrays import BoolArray, FloatArray, IntArray
from rankstats.null.interpolation import (
    chebyshev_coefficients,
    chebyshev_interpolate,
    chebyshev_points,
)
from rankstats.null.median_band import (
    BAND_COUNTS,
    band_nodes,
    band_tails,
    chernoff_reach,
    hit_probability,
    small_tails,
    split_band_tails,
    split_plan,
    two_count_tails,
)
from rankstats.null.median_rules import _prefix_sum, _suffix_sum, matmul

#: tails below this are dropped: they bound the window of x that is evaluated
_LOG_EPS = math.log(1e-24)
#: nodes evaluated together (bounds the memory of the Fourier arrays: 2048 had made the odd-n
#: median at n = 1e4 with counts up to 1e9 peak at 6 MB against 2 MB with small counts; the
#: smaller arrays are faster too, as they fault fewer fresh pages)
_CHUNK = 512
#: terms per block of rows where tasks are taken one by one (the characteristic function's
#: (task, angle) terms, the log-factor's tasks): each block's temporaries take a few MB
_BLOCK_TERMS = 250_000
#: nodes per dynamic programme (the tasks certain below a piece's lowest node are left out)
_DP_NODES = 512
#: the exact dynamic programme is used up to this many uncertain tasks ...
_DP_MAX_ITEMS = 1500
#: ... and this much work per node (tasks times counts kept)
_DP_MAX_WORK = 40_000
#: ... or this much work for all the nodes of a chunk together (few nodes: keep the relative
#: accuracy of tiny tails, which the Fourier inversion has only in absolute terms)
_DP_MAX_TOTAL = 2_000_000
#: ... and, at nodes whose asked probabilities are small (median_band.small_tails), up to this
#: many tasks and this much work for all those nodes of a chunk (tasks x counts kept x nodes)
_SMALL_TAIL_ITEMS = 5_000
_SMALL_TAIL_WORK = 20_000_000
#: tasks with a candidate count below one of these multiples of the shift t are handled one by
#: one, the first multiple for which the series in t / C needs at most _MAX_SERIES_TERMS terms
_SERIES_RATIOS = (4.0, 8.0, 16.0, 66.0)
_MAX_SERIES_TERMS = 48
#: the Fourier inversion at Chebyshev points of a chunk's range, interpolated to its nodes
#: (_Evaluator._smooth_cf): the numbers of points tried in turn (each reuses the last's values)
_SMOOTH_POINTS = (33, 65, 129, 257)
#: ... taken once the last quarter of every column's Chebyshev coefficients is below this
_SMOOTH_RESOLVED = 1e-14
#: ... and the interpolant agrees with the direct inversion at three nodes to this
_SMOOTH_CHECK = 1e-13
#: bound on |q w| in the power series of log(1 + q w)
_RHO = 0.8


def _log_tail_bound(tau: float, var: float) -> float:
    r"""Log of Bennett's bound on :math:`P(N - \mu \ge \tau)` for a sum of Bernoulli variables.

    :math:`\exp(-v\,h(\tau / v))` with :math:`h(u) = (1 + u)\log(1 + u) - u`; it is 1 for
    :math:`\tau \le 0` and 0 for a degenerate sum (:math:`v = 0`).
    """
    if tau <= 0.0:
        return 0.0
    if var <= 0.0:
        return -math.inf
    return -((var + tau) * math.log1p(tau / var) - tau)


def _reach(q_max: FloatArray) -> IntArray:
    r"""For each task k, a count the tasks k, k+1, ... exceed with probability 1e-320 at most.

    ``q_max`` bounds each task's success probability over the nodes, so the bound
    (:func:`~rankstats.null.median_band.chernoff_reach` of :math:`\mu_k = \sum_{i \ge k} q_i`)
    holds at every node. The tasks :math:`k, \dots, j - 1` add at most :math:`j - k`, so
    :math:`\min_{j \ge k} (j - k + r_j)` bounds too: with likely tasks first and unlikely ones
    after (ascending counts), that is much tighter than the Chernoff bound of the whole sum.
    """
    left = np.arange(q_max.size, 0, -1)
    mu = np.cumsum(q_max[::-1])[::-1]
    # the bound saves counts only where the tasks left are unlikely to succeed: elsewhere the
    # tasks left bound the reach (no bisection where it would not pay)
    chernoff = left.copy()
    rare = np.flatnonzero(mu <= left / 8.0)
    if rare.size:
        chernoff[rare] = chernoff_reach(mu[rare], left[rare])
    # the tasks k..j-1 add at most j - k: the best split of the tasks left
    reach_from = np.arange(q_max.size) + chernoff
    return np.minimum.accumulate(reach_from[::-1])[::-1] - np.arange(q_max.size)


def _decided(cdf_at: Sequence[int], pmf_at: Sequence[int], certain: int) -> int:
    """The largest count of the uncertain tasks that ends below every asked cdf and pmf point.

    Needs at least one asked point at or above ``certain``.
    """
    wanted = [m - certain for m in cdf_at if m >= certain]
    wanted += [a - certain - 1 for a in pmf_at if a >= certain]
    return min(wanted)


def _least_work(items: int, q_low: float, decided: int, top: int) -> float:
    r"""A lower bound of :func:`_programme_work`, in closed form, for the steps from ``top`` on.

    With :math:`K` tasks left, each at least ``q_low`` likely, the reach is at least
    :math:`\lfloor K q \rfloor - 1 \ge K q - 2` (the median of a Poisson-binomial count is
    within one of its mean), so the settled row is at most :math:`\max(0, d + 3 - K q)` and
    the live band of a step at least :math:`\operatorname{clip}(a + K q, 0, c)`, with
    :math:`c = ` ``top`` + 1 and :math:`a = c - d - 3`: zero, then linear, then :math:`c`, summed
    over :math:`K = 1..` ``items - top``, less two bands for the roundings of the breaks.
    """
    k_max = items - top
    if k_max <= 0 or q_low <= 0.0:
        return 0.0
    c = float(top + 1)
    a = c - float(decided) - 3.0
    k_lo = min(max(math.floor(-a / q_low) + 1, 1), k_max + 1)
    k_hi = min(max(math.ceil((c - a) / q_low), k_lo), k_max + 1)
    count = k_hi - k_lo
    linear = count * a + q_low * (k_lo + k_hi - 1) * count / 2.0
    return max(linear + (k_max + 1 - k_hi) * c - 2.0 * c, 0.0)


def _settle_rows(reach: IntArray, decided: int, top: int) -> IntArray:
    """Before task k, the counts below this row cannot pass ``decided`` (up to the reach)."""
    return np.clip(decided - reach + 1, 0, top + 1)


def _programme_work(settle: IntArray, top: int) -> int:
    """The programme's cells over all its steps, per node (the live band of each step)."""
    hi = np.minimum(np.arange(settle.size), top) + 1
    return int(np.maximum(hi - np.maximum.accumulate(settle), 0).sum())


def _sin_minus_identity(theta: FloatArray) -> FloatArray:
    r"""Return :math:`\sin\theta - \theta` without cancellation for small :math:`\theta`."""
    out = np.sin(theta) - theta
    small = theta < 0.5
    if np.any(small):
        t2 = theta[small] ** 2
        term = -theta[small] * t2 / 6.0
        total = term.copy()
        for j in range(2, 12):
            term = -term * t2 / ((2 * j) * (2 * j + 1))
            total += term
        out[small] = total
    return out


def _series_powers(theta: FloatArray, degree: int) -> tuple[FloatArray, FloatArray]:
    r"""Real and imaginary parts of :math:`(-1)^{s-1} w^s / s`, :math:`w = e^{i\theta} - 1`.

    One row per :math:`s = 1..degree`, less :math:`i\theta` at :math:`s = 1` (the mean's
    phase, which the caller adds exactly). In polar form, :math:`-w = 2 \sin(\theta/2)\,
    e^{i\theta/2} (-i)`: the modulus to the power :math:`s` and the angle :math:`s\theta/2`
    less :math:`s \bmod 4` quarter turns, a few roundings each, where :math:`s` repeated
    complex products gain a rounding each.
    """
    half_sin = np.sin(theta / 2.0)
    order = np.arange(1, degree + 1)
    size = -((2.0 * half_sin[None, :]) ** order[:, None]) / order[:, None]
    # the angle s theta / 2 less the quarter turns of (-i)^s, taken modulo 4 (one rounding)
    turn = 0.5 * order[:, None] * theta[None, :] - (0.5 * math.pi) * (order % 4)[:, None]
    pw_re = size * np.cos(turn)
    pw_im = size * np.sin(turn)
    pw_re[0] = -2.0 * half_sin**2
    pw_im[0] = _sin_minus_identity(theta)
    return pw_re, pw_im


def _series_degree(scale: float, var: float, rho: float, w_abs: float) -> int:
    r"""Powers :math:`s \le D` of the series of :math:`\log(1 + q w)`, for 1e-21 on the inversion.

    The series serve tasks with :math:`q |w| \le \rho` (:math:`q \le \rho / |w|_{\max}`), and
    likewise :math:`1 - q` for the nearly certain ones; at most ``scale`` tasks (their sum of
    :math:`q`, or of :math:`1 - q`, is below it). Cut after :math:`D` terms, they leave at most

    .. math::

        \delta(w) = \text{scale}\, (\rho / |w|_{\max})^D\, \frac{|w|^{D+1}}{(D + 1)(1 - \rho)}

    in :math:`\log\varphi(\theta)`, which enters the tails and point masses multiplied by
    :math:`|\varphi(\theta)| \le e^{-\sigma^2 (1 - \cos\theta)} = e^{-\sigma^2 |w|^2 / 2}`
    (:math:`\sigma^2` the least variance of the nodes): at most twice the largest product over
    the angles. The product peaks at :math:`|w|^2 = (D + 1) / \sigma^2`, or at
    :math:`|w|_{\max}`. At 4,000 tasks with counts near twice the median that is 18 terms,
    where the bound on :math:`\delta` alone (at :math:`|w|_{\max}`) had asked 35.
    """
    log_q = math.log(rho / w_abs) if rho < w_abs else 0.0
    log_fixed = math.log(2.0 * scale / (1.0 - rho)) - math.log(1e-21)
    for degree in range(2, 400):
        w = min(w_abs, math.sqrt((degree + 1) / var)) if var > 0.0 else w_abs
        log_product = -0.5 * var * w * w + degree * log_q + (degree + 1) * math.log(w)
        if log_product - math.log(degree + 1) + log_fixed <= 0.0:
            return degree
    return 400


class _Candidates:
    """Distinct candidate counts with multiplicities, and suffix sums of their reciprocals."""

    def __init__(self, num_candidates: IntArray, counts: IntArray | None = None) -> None:
        if counts is None:
            distinct, counts = np.unique(num_candidates, return_counts=True)
        else:  # sorted distinct counts with their multiplicities
            distinct = num_candidates
        self.distinct: IntArray = distinct.astype(np.int64)
        self.values: FloatArray = distinct.astype(np.float64)
        self.counts: FloatArray = counts.astype(np.float64)
        below = np.zeros(distinct.size + 1, dtype=np.int64)
        np.cumsum(counts, out=below[1:])
        self.below: IntArray = below
        self.inv1: FloatArray = _suffix_sum(self.counts / self.values)
        self.inv2: FloatArray = _suffix_sum(self.counts / (self.values * self.values))
        self.n = int(below[-1])
        self.c_max = int(distinct[-1])
        self._power_sums: FloatArray | None = None

    def power_sums(self, terms: int) -> FloatArray:
        r"""Row ``k - 1``: :math:`\sum_{j \ge i} m_j C_j^{-k}` for every ``i`` (compensated)."""
        if self._power_sums is None or self._power_sums.shape[0] < terms:
            with np.errstate(under="ignore"):
                inv = 1.0 / self.values
                term = self.counts.copy()
                rows = []
                for _ in range(terms):
                    term = term * inv
                    rows.append(_suffix_sum(term))
            self._power_sums = np.stack(rows)
        return self._power_sums[:terms]

    def index_above(self, y: FloatArray | float) -> IntArray:
        """Index of the first distinct count above ``y``."""
        return np.asarray(np.searchsorted(self.values, y, side="right"), dtype=np.int64)

    def mean_var(self, x: float) -> tuple[float, float]:
        """Mean and variance of :math:`N_x`."""
        i = int(self.index_above(x))
        p1 = x * float(self.inv1[i])
        return float(self.below[i]) + p1, max(p1 - x * x * float(self.inv2[i]), 0.0)

    def window(self, k: int) -> tuple[int, int]:
        r"""Integers ``(lo, hi)`` outside which :math:`P(X_{(k)} > x)` is 1 or 0 to 1e-24.

        For :math:`x < lo`, :math:`P(N_x \ge k) \le 10^{-24}`; for :math:`x \ge hi`,
        :math:`P(N_x \le k - 1) \le 10^{-24}`. Bennett's bound decides; as the tail is monotone
        in :math:`x`, any point where the bound holds bounds the tail beyond it, so bisection is
        valid even where the bound itself is not monotone. Besides, :math:`X_{(k)}` never exceeds
        the :math:`k`-th smallest count (those :math:`k` ranks are all at most that), where
        Bennett's bound is loose (tasks sure to be below :math:`x` with tiny-variance others).
        """
        kth = int(self.distinct[int(np.searchsorted(self.below[1:], k, side="left"))])
        lo, hi = 0, kth
        while hi - lo > 1:
            mid = (lo + hi) // 2
            mu, var = self.mean_var(mid)
            if _log_tail_bound(mu - (k - 1), var) <= _LOG_EPS:
                hi = mid
            else:
                lo = mid
        upper = hi
        lo, hi = 0, self.c_max
        while hi - lo > 1:
            mid = (lo + hi) // 2
            mu, var = self.mean_var(mid)
            if _log_tail_bound(k - mu, var) <= _LOG_EPS:
                lo = mid
            else:
                hi = mid
        return lo + 1, upper

    def centre(self, lo: int, hi: int) -> int:
        r"""An integer near the median: the smallest ``x`` with :math:`E[N_x] \ge n / 2`."""
        a, b = 0, self.c_max
        while b - a > 1:
            mid = (a + b) // 2
            if self.mean_var(mid)[0] >= self.n / 2:
                b = mid
            else:
                a = mid
        return min(max(b, lo), max(hi, lo))


def _blocks(have: int, want: int, size: int) -> list[tuple[int, int]]:
    """Rows ``have..want`` in blocks of at most ``_BLOCK_TERMS`` cells of ``size`` (one or more)."""
    step = max(1, _BLOCK_TERMS // max(size, 1))
    return [(start, min(start + step, want)) for start in range(have, want, step)]


def _next_powers(power: FloatArray, ratio: FloatArray, rows: int) -> FloatArray:
    """``power * ratio**s`` for ``s = 1..rows``, one row each, multiplied in turn."""
    steps = np.empty((rows, power.size))
    np.multiply(power, ratio, out=steps[0])
    for row in range(1, rows):  # a product per row: cumprod down the columns is slower
        np.multiply(steps[row - 1], ratio, out=steps[row])
    return steps


class _PowerTable:
    r"""Suffix sums of :math:`m_j (\xi / c_j)^s` over the distinct counts, for :math:`s \ge 1`.

    Counts in ``(lo, hi]`` get one suffix sum per position (queried by ``searchsorted``); counts
    above ``hi`` enter as totals. Scaling by the anchor :math:`\xi \le x` keeps every power in
    :math:`(0, 1]`; columns are added on demand.
    """

    def __init__(self, cands: _Candidates, xi: float, lo: float, hi: float) -> None:
        values = cands.values
        i_lo = int(np.searchsorted(values, lo, side="right"))
        i_hi = max(i_lo, int(np.searchsorted(values, hi, side="right")))
        self.xi = xi
        self.hi = hi
        self.v: FloatArray = values[i_lo:i_hi]
        self.m: FloatArray = cands.counts[i_lo:i_hi]
        self.log_prefix: FloatArray = _prefix_sum(self.m * np.log(self.v / xi))
        self._ratio = xi / self.v
        self._power = self.m.copy()
        self._far_ratio = xi / values[i_hi:]
        self._far_power = cands.counts[i_hi:].copy()
        # one row per power s: the suffix sums over the positions, and the far counts' totals
        self._suffix: FloatArray = np.zeros((0, self.v.size + 1))
        self._far: FloatArray = np.zeros(0)

    def query(self, y: FloatArray, ncols: int) -> FloatArray:
        r"""Return :math:`\sum_{c_j > y} m_j (\xi / c_j)^s` for :math:`s = 1..ncols`."""
        have = self._suffix.shape[0]
        if have < ncols:
            suffix = np.empty((ncols, self.v.size + 1))
            suffix[:have] = self._suffix
            far = np.empty(ncols)
            far[:have] = self._far
            # the next powers in blocks of rows (_BLOCK_TERMS cells at most, one row at least:
            # a million far counts take one power at a time), each by one more product
            for start, stop in _blocks(have, ncols, self.v.size):
                powers = _next_powers(self._power, self._ratio, stop - start)
                suffix[start:stop] = _suffix_sum(powers)
                self._power = powers[-1]
            for start, stop in _blocks(have, ncols, self._far_ratio.size):
                powers = _next_powers(self._far_power, self._far_ratio, stop - start)
                far[start:stop] = powers.sum(axis=1)
                self._far_power = powers[-1]
            self._suffix, self._far = suffix, far
        idx = np.searchsorted(self.v, y, side="right")
        out: FloatArray = self._suffix[:ncols, idx].T + self._far[:ncols]
        return out

    def index(self, y: FloatArray) -> IntArray:
        """Position of the first tabulated count above ``y``."""
        return np.asarray(np.searchsorted(self.v, y, side="right"), dtype=np.int64)


class _Evaluator:
    r"""Tails and point masses of shifted Poisson-binomial counts at many nodes.

    For a node :math:`x \ge 1` with a shift :math:`t \ge 0` (one per node) it evaluates, with
    :math:`N^{(t)}_x` the Poisson-binomial count of success probabilities
    :math:`\min(1, x / (C_i - t))`,

    * ``cdf``: :math:`P(N^{(t)}_x \le m)` for each requested :math:`m`,
    * ``pmf``: :math:`P(N^{(t)}_x = a)` for each requested :math:`a`,
    * ``log_factor``: :math:`\log \prod_{C_i > x} \max(C_i - t, x) / C_i` (0 where
      :math:`t = 0`).

    With :math:`t = 0` the count is :math:`N_x`. With :math:`t > 0` the product
    :math:`e^{\text{log\_factor}}\, P(N^{(t)}_x = a)` is :math:`P(N_x = a, N_{x+t} = a)`: no rank
    falls in :math:`(x, x + t]` with probability :math:`\max(C_i - t, x) / C_i` for a task with
    :math:`C_i > x`, and given that, its rank is at most :math:`x` with probability
    :math:`x / \max(C_i - t, x)`.
    """

    def __init__(self, cands: _Candidates, x_lo: float, x_hi: float, t_hi: float) -> None:
        self.cands = cands
        self.x_lo = x_lo
        self.x_hi = x_hi
        self.t_hi = t_hi
        self._tables: dict[int, _PowerTable] = {}

    def evaluate(
        self,
        x: FloatArray,
        t: FloatArray | float,
        cdf_at: Sequence[int],
        pmf_at: Sequence[int],
    ) -> tuple[FloatArray, FloatArray, FloatArray, FloatArray]:
        r"""Evaluate at the nodes ``x >= 1`` with shifts ``t`` (any order).

        Returns ``lower`` (:math:`P(N \le m)`), ``upper`` (:math:`P(N > m)`, each accurate to its
        own size where the dynamic programme is used), ``pmf`` and ``log_factor``.
        """
        shift = np.broadcast_to(np.asarray(t, dtype=np.float64), x.shape)
        order = np.lexsort((shift, x))
        xs = x[order]
        ts = np.ascontiguousarray(shift[order])
        lower = np.empty((x.size, len(cdf_at)))
        upper = np.empty((x.size, len(cdf_at)))
        pmf = np.empty((x.size, len(pmf_at)))
        log_factor = np.zeros(x.size)
        bucket = np.floor(np.log10(xs) / 2.0).astype(np.int64)
        cuts = np.flatnonzero(np.diff(bucket)) + 1
        bounds = np.concatenate(([0], cuts, [xs.size]))
        for b0, b1 in zip(bounds[:-1].tolist(), bounds[1:].tolist(), strict=False):
            # chunks of _CHUNK nodes, a last one of fewer than a quarter of that joined to the
            # one before (one characteristic function's fixed costs, or one interpolant, less)
            starts = list(range(b0, b1, _CHUNK))
            if len(starts) > 1 and b1 - starts[-1] < _CHUNK // 4:
                starts.pop()
            for c0, c1 in zip(starts, [*starts[1:], b1], strict=True):
                # the exact programme where it is cheap: on the chunk's upper part when its
                # lower nodes have too many uncertain tasks (it keeps small masses relative)
                split = c0 + self._dp_start(xs[c0:c1] + ts[c0:c1], cdf_at, pmf_at)
                # the exact part in pieces of _DP_NODES nodes: each piece's programme drops the
                # tasks certain below its lowest node (fewer tasks and counts higher up)
                parts = [(c0, split, False)] + [
                    (p0, min(p0 + _DP_NODES, c1), True) for p0 in range(split, c1, _DP_NODES)
                ]
                for p0, p1, exact in parts:
                    if p1 <= p0:
                        continue
                    part, part_t, rows = xs[p0:p1], ts[p0:p1], order[p0:p1]
                    res = self._dp(part, part_t, cdf_at, pmf_at) if exact else None
                    if res is None:
                        res = self._inverted(part, part_t, cdf_at, pmf_at, int(bucket[c0]))
                    lower[rows], upper[rows], pmf[rows], log_factor[rows] = res
        return lower, upper, pmf, log_factor

    # ------------------------------------------------------------------ dynamic programme
    def _dp_start(self, xt: FloatArray, cdf_at: Sequence[int], pmf_at: Sequence[int]) -> int:
        """The first node from which on the dynamic programme is cheap (``xt.size``: none)."""
        cands = self.cands
        lowest = np.minimum.accumulate(xt[::-1])[::-1]
        certain = cands.below[cands.index_above(lowest)]
        items = cands.n - certain
        top = np.maximum(max([*cdf_at, *pmf_at]) - certain, 0)
        work = items * (top + 1)
        if int(items.max()) <= _DP_MAX_ITEMS and int(work.max()) * xt.size <= _DP_MAX_TOTAL:
            return 0
        cheap = (items <= _DP_MAX_ITEMS) & (work <= _DP_MAX_WORK)
        # the cost falls along the chunk (more tasks are certain): the cheap nodes are a suffix
        return int(xt.size - np.cumprod(cheap[::-1]).sum())

    def _dp(
        self,
        x: FloatArray,
        t: FloatArray,
        cdf_at: Sequence[int],
        pmf_at: Sequence[int],
        *,
        force: bool = False,
    ) -> tuple[FloatArray, FloatArray, FloatArray, FloatArray] | None:
        """Exact convolution over the uncertain tasks where cheap (or ``force``), else ``None``."""
        cands = self.cands
        i0 = int(cands.index_above(float((x + t).min())))
        certain = int(cands.below[i0])
        n_items = cands.n - certain
        top = max([*cdf_at, *pmf_at]) - certain
        work = n_items * (max(top, 0) + 1)
        too_much = work > _DP_MAX_WORK and work * x.size > _DP_MAX_TOTAL
        if not force and (n_items > _DP_MAX_ITEMS or too_much):
            return None
        if top < BAND_COUNTS:
            # a narrow band: one binomial factor per distinct count, multiplied pairwise, is
            # as exact and needs no step per task (500 tasks sharing a count: one factor)
            return (*band_tails(cands, x, t, cdf_at, pmf_at), self._direct_log_factor(x, t))
        low = np.zeros((x.size, len(cdf_at)))
        up = np.ones((x.size, len(cdf_at)))
        pmf = np.zeros((x.size, len(pmf_at)))
        xx, tt = x[:, None], t[:, None]
        if top >= 0:
            items = np.repeat(cands.values[i0:], cands.counts[i0:].astype(np.int64))[None, :]
            room = items - tt
            inside = room > xx
            safe = np.where(inside, room, 1.0)
            q = np.where(inside, xx / safe, 1.0)
            # one row per task, one column per node: contiguous slices in the loop below. The
            # complement as (room - x) / room, not 1 - q: for q near 1 that difference loses
            # digits (38/39: 2e-15 relative), and the programme raises it to high powers
            q_rows = np.ascontiguousarray(q.T)
            p_rows = np.ascontiguousarray(np.where(inside, (room - xx) / safe, 0.0).T)
            # counts 0..top, and a last cell that collects every count above top; the state is
            # (count, node) so that each step works on contiguous rows, in place, two products.
            # A count that cannot pass `decided` with the tasks left ends below every cdf and
            # pmf point: its row is added to `settled` (all of it ends in every lower tail)
            # and dropped, so the live rows form a band at most as wide as the tasks left
            decided = _decided(cdf_at, pmf_at, certain)
            dist = np.zeros((top + 2, x.size))
            dist[0] = 1.0
            settled = np.zeros(x.size)
            moved = np.empty((top + 1, x.size))
            lo = 0
            # rows j with j + (what the tasks left can add) <= decided are settled: what they
            # can add is bounded by the tasks left, and, where those are unlikely to succeed
            # (a small count next to huge ones), by their reach, past which they go with
            # probability 1e-320 at most (the absolute error this leaves in any tail)
            settles = _settle_rows(_reach(q_rows.max(axis=1)), decided, top).tolist()
            for k, (qi, pi) in enumerate(zip(q_rows, p_rows, strict=True)):
                settle = settles[k]
                if settle > lo:
                    settled += dist[lo:settle].sum(axis=0)
                    dist[lo:settle] = 0.0
                    lo = settle
                # after k tasks only the counts 0..k can be held: the rest of the rows are zero
                hi = min(k, top) + 1
                if hi <= lo:
                    continue
                np.multiply(dist[lo:hi], qi, out=moved[lo:hi])
                dist[lo:hi] *= pi
                dist[lo + 1 : hi + 1] += moved[lo:hi]
            dist = dist.T
            cum_low = np.cumsum(dist, axis=1) + settled[:, None]
            cum_up = np.cumsum(dist[:, ::-1], axis=1)[:, ::-1]
            for j, m in enumerate(cdf_at):
                if m >= certain:
                    low[:, j] = cum_low[:, m - certain]
                    up[:, j] = cum_up[:, m - certain + 1]
            for j, a in enumerate(pmf_at):
                if a >= certain:
                    pmf[:, j] = dist[:, a - certain]
        return low, up, pmf, self._direct_log_factor(x, t)

    def _direct_log_factor(self, x: FloatArray, t: FloatArray) -> FloatArray:
        r""":math:`\log \prod_{C_i > x} \max(C_i - t, x) / C_i`, over the distinct counts."""
        log_factor = np.zeros(x.size)
        if not np.any(t > 0):
            return log_factor
        cands = self.cands
        i1 = int(cands.index_above(float(x.min())))
        values, counts = cands.values[i1:], cands.counts[i1:]
        step = max(1, _BLOCK_TERMS // x.size)
        for v0 in range(0, values.size, step):
            c = values[v0 : v0 + step, None]
            room = c - t[None, :]
            # log(1 - t / C) by log1p where the task stays uncertain, log(x / C) where not
            term = np.where(room > x, np.log1p(-t[None, :] / c), np.log(x[None, :] / c))
            log_factor += (counts[v0 : v0 + step, None] * np.where(c > x, term, 0.0)).sum(axis=0)
        return log_factor

    # ------------------------------------------------------------------ narrow bands
    def _inverted(
        self,
        x: FloatArray,
        t: FloatArray,
        cdf_at: Sequence[int],
        pmf_at: Sequence[int],
        bucket: int,
    ) -> tuple[FloatArray, FloatArray, FloatArray, FloatArray]:
        """The Fourier inversion, except where the asked probabilities are small and exact is cheap.

        There (:func:`~rankstats.null.median_band.small_tails`) the band's law serves a narrow
        band (:func:`~rankstats.null.median_band.band_nodes`); other nodes take the split bands
        (:func:`~rankstats.null.median_band.split_plan`: the likely tasks' misses and the
        unlikely tasks' count, each on a band, as with a median pinned at a small count beside
        huge ones, at any n), else the exact programme up to ``_SMALL_TAIL_ITEMS`` uncertain
        tasks and ``_SMALL_TAIL_WORK`` (its cells over all steps and nodes): all keep a tail
        relative to its size.
        """
        cands = self.cands
        small, top = small_tails(cands, x, t, cdf_at, pmf_at)
        band = band_nodes(cands, x, t, small, top)
        programme = small & ~band
        plan = None
        two: tuple[FloatArray, FloatArray, FloatArray] | None = None
        if np.any(programme):
            plan = split_plan(cands, x[programme], t[programme], cdf_at, pmf_at)
            if plan is None:
                two = two_count_tails(cands, x[programme], t[programme], cdf_at, pmf_at)
            if (
                plan is None
                and two is None
                and not self._small_tail_cheap(x[programme], t[programme], cdf_at, pmf_at)
            ):
                programme[:] = False
        inverted = ~(band | programme)
        parts: list[tuple[BoolArray, tuple[FloatArray, FloatArray, FloatArray, FloatArray]]] = []
        if np.any(band):
            xb, tb = x[band], t[band]
            tails = band_tails(cands, xb, tb, cdf_at, pmf_at)
            parts.append((band, (*tails, self._direct_log_factor(xb, tb))))
        if np.any(programme):
            xp, tp = x[programme], t[programme]
            if plan is not None:
                two = split_band_tails(cands, xp, tp, cdf_at, pmf_at, plan)
            if two is not None:
                parts.append((programme, (*two, self._direct_log_factor(xp, tp))))
            else:
                found = self._dp(xp, tp, cdf_at, pmf_at, force=True)
                assert found is not None
                parts.append((programme, found))
        if np.any(inverted):
            xi, ti = x[inverted], t[inverted]
            found = self._smooth_cf(xi, ti, cdf_at, pmf_at, bucket)
            if found is None:
                found = self._cf(xi, ti, cdf_at, pmf_at, bucket)
            parts.append((inverted, found))
        if len(parts) == 1:
            return parts[0][1]
        outs = [np.empty((x.size, *part.shape[1:])) for part in parts[0][1]]
        for mask, results in parts:
            for out, part in zip(outs, results, strict=True):
                out[mask] = part
        return outs[0], outs[1], outs[2], outs[3]

    def _small_tail_cheap(
        self, x: FloatArray, t: FloatArray, cdf_at: Sequence[int], pmf_at: Sequence[int]
    ) -> bool:
        """Whether the programme on these nodes is within the small tails' budget.

        Its work is estimated with the reach of the tasks at the highest node and shift, which
        bounds their success probabilities at every node.
        """
        cands = self.cands
        i0 = int(cands.index_above(float((x + t).min())))
        certain = int(cands.below[i0])
        items = cands.n - certain
        top = max([*cdf_at, *pmf_at]) - certain
        if items > _SMALL_TAIL_ITEMS:
            return False
        if top < 0:
            return True
        decided = _decided(cdf_at, pmf_at, certain)
        # first a lower bound of the work, from a reach at least the mean of the tasks left
        # less one (a Poisson-binomial count's median is within one of its mean), each of
        # them at least as likely as the largest count: it rejects without the reach's cost
        q_low = float(x.max()) / max(float(cands.values[-1]) - float(t.max()), float(x.max()))
        if _least_work(items, q_low, decided, top) * x.size > _SMALL_TAIL_WORK:
            return False
        room = np.repeat(cands.values[i0:], cands.counts[i0:].astype(np.int64)) - float(t.max())
        q_max = hit_probability(room, float(x.max()))
        settle = _settle_rows(_reach(q_max), decided, top)
        return _programme_work(settle, top) * x.size <= _SMALL_TAIL_WORK

    def _smooth_cf(
        self,
        x: FloatArray,
        t: FloatArray,
        cdf_at: Sequence[int],
        pmf_at: Sequence[int],
        bucket: int,
    ) -> tuple[FloatArray, FloatArray, FloatArray, FloatArray] | None:
        r""":meth:`_cf` at Chebyshev points of the nodes' range, interpolated to the nodes.

        Without a shift and with no count in the range, every tail and point mass is one
        polynomial in :math:`x` (each uncertain task succeeds with probability :math:`x / C`),
        which changes on the scale :math:`\sigma_x = \sigma_N / (dE[N_x]/dx)` (the law's spread
        in ranks): like :math:`\Phi((x - \mu) / \sigma_x)`, whose Chebyshev coefficients on a
        range of :math:`\pm L \sigma_x` fall below 1e-16 by the :math:`9 L`-th. The points (the
        first of ``_SMOOTH_POINTS`` above :math:`11 L + 16`, about 129 for a window of
        :math:`\pm 11 \sigma`, against 512 nodes) are doubled, nested, until the last quarter of
        every column's coefficients is below ``_SMOOTH_RESOLVED`` (absolute: the values are
        probabilities, and the inversion's own rounding is about 1e-15 at the centre); the
        interpolant must then agree with the inversion at three of the nodes to
        ``_SMOOTH_CHECK``. ``None`` where a condition fails, or where the points would not be
        fewer than half the nodes. Both tails are interpolated, each keeping its absolute
        accuracy where it is small (one less the other had carried the interpolant's rounding
        near 1, about 1e-15, into the small tails, where the variance's weights are largest:
        1e-14 on it at 1,500 tasks).
        """
        lo, hi = float(x.min()), float(x.max())
        cands = self.cands
        if np.any(t) or hi <= lo or x.size < 2 * _SMOOTH_POINTS[0]:
            return None
        above = int(cands.index_above(lo))
        if above != int(cands.index_above(hi)):
            return None
        _, var = cands.mean_var(0.5 * (lo + hi))
        slope = float(cands.inv1[above])  # dE[N_x]/dx: the uncertain tasks' sum of 1/C
        if var <= 0.0 or slope <= 0.0:
            return None
        spread = (hi - lo) / (2.0 * math.sqrt(var) / slope)
        sizes = [size for size in _SMOOTH_POINTS if size >= 9.0 * spread + 8.0]
        sizes = sizes[:1] + [size for size in sizes[1:] if 2 * size <= x.size]
        if not sizes or 2 * sizes[0] > x.size:
            return None
        check = np.argsort(x)[[x.size // 6, x.size // 2, (5 * x.size) // 6]]
        values = np.zeros((0, 0))
        direct = np.zeros((0, 0))
        for size in sizes:
            points = 0.5 * (lo + hi) + 0.5 * (hi - lo) * chebyshev_points(size)
            # the last size's points are every other one of these; the check's nodes go first
            fresh = np.concatenate((points, x[check])) if values.size == 0 else points[1::2]
            found = np.hstack(self._cf(fresh, np.zeros(fresh.size), cdf_at, pmf_at, bucket)[:3])
            if values.size == 0:
                values, direct = found[:size], found[size:]
            else:
                merged = np.empty((size, found.shape[1]))
                merged[0::2], merged[1::2] = values, found
                values = merged
            tail = chebyshev_coefficients(values)[-(size // 4) :]
            if float(np.abs(tail).max()) <= _SMOOTH_RESOLVED:
                break
        else:
            return None
        smooth = chebyshev_interpolate(values, points, x)
        if float(np.abs(smooth[check] - direct).max()) > _SMOOTH_CHECK:
            return None
        low, up, pmf = np.split(smooth, [len(cdf_at), 2 * len(cdf_at)], axis=1)
        return np.clip(low, 0.0, 1.0), np.clip(up, 0.0, 1.0), np.maximum(pmf, 0.0), np.zeros(x.size)

    # ------------------------------------------------------------------ characteristic function
    def _table(self, bucket: int, need_hi: float) -> _PowerTable:
        r"""The power table of an anchor :math:`\xi = 100^b`, covering counts up to ``need_hi``."""
        table = self._tables.get(bucket)
        if table is None or table.hi < need_hi:
            xi = 100.0**bucket
            lo = max(xi, self.x_lo)
            base = max(min(self.x_hi, 100.0 * xi), _SERIES_RATIOS[0] * self.t_hi) + self.t_hi + 1.0
            hi = max(need_hi, base if table is None else 2.0 * table.hi)
            table = _PowerTable(self.cands, xi, lo, min(hi, float(self.cands.c_max)))
            table.hi = hi
            self._tables[bucket] = table
        return table

    @staticmethod
    def _series_terms(ratio: float, degree: int, rho: float, scale: float) -> int:
        r"""Terms of :math:`(c - t)^{-s} = \sum_r \binom{s + r - 1}{r} t^r c^{-s-r}`.

        ``ratio`` bounds :math:`t / c`. The part dropped from the power sum of order
        :math:`s \le` ``degree`` stays below 1e-21 once weighted by ``scale`` :math:`\rho^{s-1}`
        (the size of that power's contribution to the log characteristic function).
        """
        if ratio <= 0.0:
            return 0
        for r in range(1, 200):
            worst = 0.0
            coef = ratio**r
            for s in range(1, degree + 1):
                worst = max(worst, coef * rho ** (s - 1))
                coef *= (s + r) / s
            if scale * worst < 1e-21:
                return r
        return 200

    @staticmethod
    def _power_sums(
        table: _PowerTable, u: FloatArray, tau: FloatArray, y: FloatArray, degree: int, terms: int
    ) -> FloatArray:
        r"""Power sums :math:`\sum_{C_i > y} (x / (C_i - t))^s` for :math:`s = 1..degree`.

        ``u = x / xi`` and ``tau = t / xi``; the shift enters through the binomial series of
        :math:`(C - t)^{-s}` in :math:`t / C`.
        """
        raw = table.query(y, degree + terms)
        sums = raw[:, :degree].copy()
        coef = np.ones(degree)
        order = np.arange(1, degree + 1, dtype=np.float64)
        tau_r = np.ones(u.size)
        for r in range(1, terms + 1):
            coef = coef * (order + r - 1.0) / r
            tau_r = tau_r * tau
            sums += coef[None, :] * tau_r[:, None] * raw[:, r : r + degree]
        # u < 100: powers up to 150 are formed directly (exactly rounded for the mean, s = 1),
        # higher ones in the log domain, where they cannot overflow
        direct = min(degree, 150)
        sums[:, :direct] *= u[:, None] ** order[None, :direct]
        if degree > direct:
            expo = np.log(u)[:, None] * order[None, direct:]
            with np.errstate(divide="ignore"):
                sums[:, direct:] = np.exp(expo + np.log(sums[:, direct:]))
        return np.asarray(sums, dtype=np.float64)

    def _cf(
        self,
        x: FloatArray,
        t: FloatArray,
        cdf_at: Sequence[int],
        pmf_at: Sequence[int],
        bucket: int,
    ) -> tuple[FloatArray, FloatArray, FloatArray, FloatArray]:
        r"""Lattice Fourier inversion of the characteristic function of :math:`N^{(t)}_x`.

        With :math:`w = e^{i\theta} - 1`, an uncertain task contributes :math:`\log(1 + q w)`.
        Tasks with :math:`q \le q_\ast = \rho / |w|_{\max}` (:math:`\rho = 0.8`) enter through
        :math:`\sum_s (-1)^{s-1} w^s \sum q^s / s` with tabulated power sums, tasks with
        :math:`1 - q \le q_\ast` through the same series in :math:`1 - q` and :math:`\bar w`
        (as :math:`\log(1 + q w) = i\theta + \log(1 + (1 - q)\bar w)`), any others one by one.
        The tail follows from the midpoint rule on the period,

        .. math::

            P(N \le m) = \frac12 - \frac{2}{M} \sum_{j} \frac{\operatorname{Im}
            [\varphi(\theta_j) e^{-i\theta_j (m + 1/2)}]}{2 \sin(\theta_j / 2)},
            \qquad \theta_j = \frac{(2j + 1)\pi}{M},

        exact for a lattice variable whose mass lies within :math:`M` of :math:`m + 1/2`; terms
        with :math:`|\varphi| < e^{-55}` are dropped.
        """
        cands = self.cands
        xt = x + t
        certain = cands.below[cands.index_above(xt)].astype(np.float64)
        y1 = np.maximum(xt, _SERIES_RATIOS[0] * t)
        table = self._table(bucket, float(y1.max()))
        xi = table.xi
        u = x / xi
        tau = t / xi
        # pass 1: mean and variance
        terms = self._series_terms(float((t / y1).max()), 2, 1.0, float(cands.n))
        sums = self._power_sums(table, u, tau, y1, 2, terms)
        mult, q, qc = self._gather(table, x, t, xt, y1)
        p1 = sums[:, 0] + (mult * q).sum(axis=1)
        var = np.maximum(sums[:, 0] - sums[:, 1], 0.0) + (mult * q * qc).sum(axis=1)
        mean = certain + p1
        reach = 11.0 * np.sqrt(var) + 25.0
        shifts = [m + 0.5 for m in cdf_at] + [float(a) for a in pmf_at]
        active = np.zeros(x.size, dtype=bool)
        dev_max = 0.0
        for shift in shifts:
            dev = np.abs(mean - shift)
            act = dev <= reach
            active |= act
            if np.any(act):
                dev_max = max(dev_max, float((dev + reach)[act].max()))
        low = np.empty((x.size, len(cdf_at)))
        pmf = np.zeros((x.size, len(pmf_at)))
        for j, m in enumerate(cdf_at):
            low[:, j] = (mean < m + 0.5).astype(np.float64)
        up = 1.0 - low
        log_factor = np.zeros(x.size)
        if np.any(t > 0):
            log_factor = self._log_factor(table, x, t, xt, y1, u, tau, terms)
        if not np.any(active):
            return low, up, pmf, log_factor
        xa, ua, ta, xta = x[active], u[active], t[active], xt[active]
        period = 2 * (math.floor((dev_max + 1.0) / 2.0) + 1)
        var_min = float(var[active].min())
        theta_max = math.pi if var_min <= 27.5 else math.acos(1.0 - 55.0 / var_min)
        count = min(period // 2, math.ceil(theta_max * period / (2.0 * math.pi) + 0.5))
        theta = (np.arange(count) + 0.5) * (2.0 * math.pi / period)
        half_sin = np.sin(theta / 2.0)
        w_abs = 2.0 * float(half_sin[-1])
        q_cut = min(1.0, _RHO / w_abs)
        rho = min(_RHO, w_abs)
        if q_cut >= 1.0 and not np.any(ta):
            # every uncertain task comes from the table: its terms shrink like (q |w|)^s, q
            # at most x over the first count above x (0.6 for counts near twice the median,
            # where the bound |w| alone had asked 51 terms for 35)
            above = cands.index_above(xa)
            inside = above < cands.values.size
            if np.any(inside):
                q_top = float((xa[inside] / cands.values[above[inside]]).max())
                rho = max(min(rho, w_abs * q_top), 1e-3)
        p1_max = float(p1[active].max()) + 1.0
        degree = _series_degree(float(cands.n), var_min, rho, w_abs)
        # pass 2: tasks with q <= q_cut from the table, the others gathered
        base = np.maximum(xa / q_cut + ta, xta)
        for ratio in _SERIES_RATIOS:
            y_low = np.maximum(base, ratio * ta)
            terms = self._series_terms(float((ta / y_low).max()), degree, rho, p1_max)
            if terms <= _MAX_SERIES_TERMS:
                break
        y_high = y_low if q_cut >= 1.0 else np.minimum(xa / (1.0 - q_cut) + ta, y_low)
        table = self._table(bucket, float(y_low.max()))
        sums_low = self._power_sums(table, ua, tau[active], y_low, degree, terms)
        mult_h, _, qc_h = self._gather(table, xa, ta, xta, y_high)
        high = self._complement_sums(mult_h, qc_h, degree, w_abs)
        pw_re, pw_im = _series_powers(np.asarray(theta, dtype=np.float64), degree)
        re = matmul(sums_low + high, pw_re)
        im = matmul(sums_low - high, pw_im)
        mult_m, q_m, _ = self._gather(table, xa, ta, y_high, y_low)
        if q_m.shape[1]:
            m_re, m_im = self._middle_terms(mult_m, q_m, np.asarray(theta, dtype=np.float64))
            re += m_re
            im += m_im
        # below e^-700 a term is nothing beside the others: no subnormal amplitudes (slow)
        amp = np.exp(np.maximum(re, -700.0))
        # the mean of N, as whole tasks (the certain ones and the nearly certain, exact in
        # floating point) plus a small remainder: added to ~5000 certain tasks first, the
        # remainder's digits below the integer's last place were lost (5e-13 on the phase,
        # 3e-14 on a tail); the nearly certain tasks count as 1 - (1 - q)
        whole = certain[active] + mult_h.sum(axis=1)
        rest = sums_low[:, 0] - (mult_h * qc_h).sum(axis=1) + (mult_m * q_m).sum(axis=1)
        scale = 2.0 / period
        inv_sin = 1.0 / (2.0 * half_sin)
        rows = np.flatnonzero(active)
        for j, m in enumerate(cdf_at):
            delta = (whole - (m + 0.5)) + rest
            terms_j = amp * np.sin(im + delta[:, None] * theta[None, :])
            val = scale * np.einsum("nj,j->n", terms_j, inv_sin)
            low[rows, j] = np.clip(0.5 - val, 0.0, 1.0)
            up[rows, j] = np.clip(0.5 + val, 0.0, 1.0)
        for j, a in enumerate(pmf_at):
            delta = (whole - a) + rest
            val = scale * (amp * np.cos(im + delta[:, None] * theta[None, :])).sum(axis=1)
            pmf[rows, j] = np.maximum(val, 0.0)
        return low, up, pmf, log_factor

    @staticmethod
    def _gather(
        table: _PowerTable, x: FloatArray, t: FloatArray, lo: FloatArray, hi: FloatArray
    ) -> tuple[FloatArray, FloatArray, FloatArray]:
        r"""Multiplicities, :math:`q = x / (C - t)` and :math:`1 - q` of the tasks in ``(lo, hi]``.

        One row per node, padded with zero multiplicities (and :math:`q = 0`). The complement
        is :math:`(C - t - x) / (C - t)`, not ``1 - q``: for :math:`q` near 1 that difference
        loses digits (:math:`q = 38/39`: :math:`2 \cdot 10^{-15}` relative), and the series
        raise it to high powers.
        """
        ia = table.index(lo)
        ib = table.index(hi)
        width = max(int((ib - ia).max()), 0) if x.size else 0
        if width == 0:
            empty = np.zeros((x.size, 0))
            return empty, empty, empty
        idx = ia[:, None] + np.arange(width)[None, :]
        mask = idx < ib[:, None]
        idx = np.minimum(idx, table.v.size - 1)
        mult = np.where(mask, table.m[idx], 0.0)
        room = np.where(mask, table.v[idx] - t[:, None], 1.0)
        q = np.where(mask, x[:, None] / room, 0.0)
        qc = np.where(mask, (room - x[:, None]) / room, 1.0)
        return mult, q, qc

    @staticmethod
    def _complement_sums(mult: FloatArray, qc: FloatArray, degree: int, w_abs: float) -> FloatArray:
        r"""Return :math:`\sum m (1 - q)^s` for :math:`s = 1..degree` (zero rows if no task).

        ``qc`` is :math:`1 - q` (formed without cancellation, see :meth:`_gather`).

        Powers whose contribution :math:`\sum m ((1 - q)|w|)^s / s` stays below 1e-21 for every
        task are left at zero.
        """
        out = np.zeros((qc.shape[0], degree))
        if qc.shape[1] == 0:
            return out
        base = np.where(mult > 0, qc, 0.0)
        rho = float(base.max()) * w_abs
        if rho <= 0.0:
            return out
        needed = degree
        if rho < 1.0:
            scale = float(mult.sum(axis=1).max()) + 1.0
            needed = math.ceil(math.log(1e-21 * (1.0 - rho) / scale) / math.log(rho))
            needed = min(max(needed, 1), degree)
        cur = mult.copy()
        for s in range(needed):
            cur = cur * base
            out[:, s] = cur.sum(axis=1)
        return out

    @staticmethod
    def _middle_terms(
        mult: FloatArray, q: FloatArray, theta: FloatArray
    ) -> tuple[FloatArray, FloatArray]:
        r"""Real and imaginary parts of :math:`\sum m [\log(1 + q w) - i\theta q]`, one by one."""
        s2 = np.sin(theta / 2.0) ** 2
        sin_t = np.sin(theta)
        re = np.zeros((q.shape[0], theta.size))
        im = np.zeros((q.shape[0], theta.size))
        # rows in blocks of at most _BLOCK_TERMS (task, angle) terms (2e6 made them peak ~70 MB)
        step = max(1, _BLOCK_TERMS // (q.shape[1] * theta.size))
        for r0 in range(0, q.shape[0], step):
            r1 = min(r0 + step, q.shape[0])
            q3 = q[r0:r1, :, None]
            mod = 0.5 * np.log1p(-4.0 * q3 * (1.0 - q3) * s2[None, None, :])
            arg = np.arctan2(q3 * sin_t[None, None, :], 1.0 - 2.0 * q3 * s2[None, None, :])
            arg -= q3 * theta[None, None, :]
            re[r0:r1] = np.einsum("ng,ngj->nj", mult[r0:r1], mod)
            im[r0:r1] = np.einsum("ng,ngj->nj", mult[r0:r1], arg)
        return re, im

    @staticmethod
    def _log_factor(
        table: _PowerTable,
        x: FloatArray,
        t: FloatArray,
        xt: FloatArray,
        y: FloatArray,
        u: FloatArray,
        tau: FloatArray,
        terms: int,
    ) -> FloatArray:
        r"""Return :math:`\log \prod_{C_i > x} \max(C_i - t, x) / C_i`.

        Tasks with :math:`C_i > y` contribute :math:`-\sum_r (t / C_i)^r / r` through the table,
        those in :math:`(x + t, y]` :math:`\log(1 - t / C_i)` one by one, and those in
        :math:`(x, x + t]` :math:`\log(x / C_i)` through prefix sums of :math:`\log(C_i / \xi)`.
        """
        terms = max(terms, 1)
        raw = table.query(y, terms)
        out = np.zeros(x.size)
        tau_r = np.ones(x.size)
        for r in range(1, terms + 1):
            tau_r = tau_r * tau
            out -= tau_r * raw[:, r - 1] / r
        ia = table.index(xt)
        ib = table.index(y)
        width = int((ib - ia).max()) if x.size else 0
        if width > 0:
            step = max(1, _BLOCK_TERMS // width)
            for r0 in range(0, x.size, step):
                r1 = min(r0 + step, x.size)
                idx = ia[r0:r1, None] + np.arange(width)[None, :]
                mask = idx < ib[r0:r1, None]
                idx = np.minimum(idx, table.v.size - 1)
                mult = np.where(mask, table.m[idx], 0.0)
                vals = np.where(mask, table.v[idx], np.inf)
                out[r0:r1] += (mult * np.log1p(-t[r0:r1, None] / vals)).sum(axis=1)
        i_x = table.index(x)
        cum = np.zeros(table.v.size + 1)
        np.cumsum(table.m, out=cum[1:])
        band = cum[ia] - cum[i_x]
        out += band * np.log(u) - (table.log_prefix[ia] - table.log_prefix[i_x])
        return out
