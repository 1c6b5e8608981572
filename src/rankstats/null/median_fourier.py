r"""The lattice Fourier inversion behind the median's tails, and its Chebyshev interpolant.

:class:`Inversion` gives the tails :math:`P(N^{(t)}_x \le m)` and point masses
:math:`P(N^{(t)}_x = a)` of the shifted Poisson-binomial counts of
:mod:`rankstats.null.median_tails` at many nodes, to about :math:`10^{-16}` absolute (a few
:math:`10^{-15}` at the centre of a law of thousands of tasks), from the characteristic
function: each uncertain task contributes :math:`\log(1 + q w)`, :math:`w = e^{i\theta} - 1`,
summed as power series over tabulated power sums of :math:`x / C` (:class:`_PowerTable`, one per
anchor :math:`100^b`), the tasks near certainty through the series in :math:`1 - q`, any others
one by one; the tail follows from the midpoint rule on the period (:meth:`Inversion.invert`).

The series are cut where their remainder, weighted by :math:`|\varphi(\theta)| \le
e^{-\sigma^2 (1 - \cos\theta)}`, stays below 1e-21 (:func:`_series_degree`: 18 terms for 4,000
tasks at counts near twice the median, where the remainder's bound at the largest angle alone
had asked 35). A chunk of nodes with no count among them and no shift has every tail and point
mass one polynomial in :math:`x`, smooth on the law's spread in ranks: it is inverted at 129
Chebyshev points or so (nested doublings until the last quarter of the coefficients is below
1e-14, and three nodes checked against the direct inversion) and interpolated to its ~540 nodes
(:meth:`Inversion.smooth`). Against tails from the law built task by task in extended
precision, the moments agree to 1e-14 (1,000 to 3,000 tasks), as with the inversion at every
node (``tests/test_median_fourier.py``).
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import TYPE_CHECKING

import numpy as np

from rankstats.arrays import FloatArray, IntArray
from rankstats.null.interpolation import (
    chebyshev_coefficients,
    chebyshev_interpolate,
    chebyshev_points,
)
from rankstats.null.median_rules import _prefix_sum, _suffix_sum, matmul

if TYPE_CHECKING:
    from rankstats.null.median_tails import _Candidates

__all__ = ["Inversion"]

#: terms per block of rows where tasks are taken one by one (the characteristic function's
#: (task, angle) terms, the log-factor's tasks, the power table's new columns): each block's
#: temporaries take a few MB
_BLOCK_TERMS = 250_000

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


class Inversion:
    """The Fourier inversion of the counts :math:`N^{(t)}_x` of one input, with its power tables.

    ``x_lo``, ``x_hi`` and ``t_hi`` bound the nodes and shifts it will be asked for (they size the
    power tables, which are built on demand and kept for the input's later nodes).
    """

    def __init__(self, cands: _Candidates, x_lo: float, x_hi: float, t_hi: float) -> None:
        self.cands = cands
        self.x_lo = x_lo
        self.x_hi = x_hi
        self.t_hi = t_hi
        self._tables: dict[int, _PowerTable] = {}

    def smooth(
        self,
        x: FloatArray,
        t: FloatArray,
        cdf_at: Sequence[int],
        pmf_at: Sequence[int],
        bucket: int,
    ) -> tuple[FloatArray, FloatArray, FloatArray, FloatArray] | None:
        r""":meth:`invert` at Chebyshev points of the nodes' range, interpolated to the nodes.

        Without a shift and with no count in the range, every tail and point mass is one
        polynomial in :math:`x` (each uncertain task succeeds with probability :math:`x / C`),
        which changes on the scale :math:`\sigma_x = \sigma_N / (dE[N_x]/dx)` (the law's spread
        in ranks): like :math:`\Phi((x - \mu) / \sigma_x)`, whose Chebyshev coefficients on a
        range of :math:`\pm L \sigma_x` fall below 1e-16 by about the :math:`9 L`-th
        (:math:`\sigma_x` taken at the range's midpoint). The points (the first of
        ``_SMOOTH_POINTS`` from :math:`9 L + 8` on, 129 for a window of :math:`\pm 11 \sigma`,
        against its ~540 nodes) are doubled, nested, until the last quarter of
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
            found = np.hstack(self.invert(fresh, np.zeros(fresh.size), cdf_at, pmf_at, bucket)[:3])
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

    def invert(
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
