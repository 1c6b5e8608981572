r"""Null moments of reciprocal-of-mean metrics: the inverse arithmetic and the harmonic mean rank.

Under the null :math:`r_i \sim \mathcal{U}\{1, \dots, C_i\}` independently, and with
:math:`a_i = w_i / \sum_j w_j`,

.. math::

    \mathrm{IAMR} = \frac{1}{\sum_i a_i r_i}, \qquad
    \mathrm{HMR} = \frac{1}{\sum_i a_i / r_i} .

Both are :math:`1/X` for a positive sum :math:`X` of independent terms, whose Laplace transform
factorises over the tasks; the two moments of :math:`1/X` are integrals of that transform,

.. math::

    \mathbb{E}[X^{-1}] = \int_0^\infty \mathbb{E}[e^{-tX}] \, dt, \qquad
    \mathbb{E}[X^{-2}] = \int_0^\infty t \, \mathbb{E}[e^{-tX}] \, dt,

evaluated to about machine precision by a trapezoidal rule in :math:`\log t` on a centred
integrand (see :func:`inverse_arithmetic_mean_moments`). The per-task transforms are evaluated once
per distinct pair :math:`(C_i, a_i)` and node, vectorised, with memory independent of
:math:`\max C` (see :func:`harmonic_mean_moments` for the harmonic one); with many distinct
pairs (a distinct weight per task), the harmonic transform is instead tabulated once per
distinct count on a lattice in :math:`\log s` and interpolated (:mod:`rankstats.null.lattice`),
so that its cost follows the number of distinct counts, not of pairs.

The module is longer than most because it is one method: the per-task transforms, the
quadrature that integrates their product and its error control are tuned together, and splitting
them would separate each tolerance from the step it bounds. Constants of the series are computed
once at import; folding many counts into interpolation nodes lives in
:mod:`rankstats.null.interpolation`, the lattice tables in :mod:`rankstats.null.lattice`.
"""

from __future__ import annotations

import functools
import math
import weakref
from collections.abc import Callable
from dataclasses import dataclass
from typing import Protocol

import numpy as np
import numpy.typing as npt
from scipy import special

from rankstats.arrays import BoolArray, FloatArray, IntArray
from rankstats.null.interpolation import interpolation_pairs
from rankstats.null.lattice import FLOOR, POINTS, STEP, LatticeSum
from rankstats.null.tasks import Tasks
from rankstats.weighting import pairwise_dot

__all__ = [
    "harmonic_mean_moments",
    "harmonic_mean_moments_of",
    "inverse_arithmetic_mean_moments",
    "inverse_arithmetic_mean_moments_of",
]


# --- quadrature ---------------------------------------------------------------------------------
#: first step of the trapezoidal rule in v = log(mu t); it is halved until the sums settle
_STEP = 0.4
#: ... that is, until two successive sums agree to this, relative to the variance
_SETTLED = 1e-5
_MAX_HALVINGS = 4
#: the first range of v, in steps, and the number of steps it grows by at a time
_FIRST_LOW, _FIRST_HIGH, _GROWTH = -32, 16, 8
#: bound on each neglected tail, relative to the result
_TAIL_TOLERANCE = 1e-16
#: float64 elements per block of (rows, nodes) evaluated at once
_BLOCK_ELEMENTS = 1 << 18
#: groups integrated together at most (:func:`quadrature_by_parts`)
GROUPS_PER_PASS = 2_048
#: rows per block when the series coefficients are set up
_INIT_ROWS = 1 << 14
#: ... and counts per block of their central moments (each takes 25 x 25 binomial terms: a
#: block of 16,384 counts had peaked at 180 MB)
_MOMENT_ROWS = 1 << 10
#: sum the harmonic transform through lattice tables (rankstats.null.lattice) from this many
#: distinct pairs (C, a) up, where that is estimated to cost less than pair by pair
_LATTICE_PAIRS = 1024
#: the cost of a pair's power sums in the buckets, in units of one term of a transform
_BUCKET_SETUP = 28.0

# --- harmonic transform -------------------------------------------------------------------------
#: candidate counts up to this are summed directly
_DIRECT_MAX = 256
#: up to this argument, a centred form (series or direct sum of e^x - 1 - x)
_SERIES_MAX = 2.0
_SERIES_TERMS = 24
#: Euler-Maclaurin starts at max(_EM_START, _EM_SCALE * sqrt(s)) with Bernoulli terms
#: B_2 .. B_{2 * _EM_ORDER}
_EM_START = 24
_EM_SCALE = 2.0
_EM_ORDER = 6
_BERNOULLI = (1 / 6, -1 / 30, 1 / 42, -1 / 30, 5 / 66, -691 / 2730)
#: terms below exp(-_NEGLIGIBLE) / C of the largest one are not summed
_NEGLIGIBLE = 40.0


def _derivative_polynomials(order: int) -> list[FloatArray]:
    r"""Coefficients (highest power first) of the polynomials :math:`P_k`, k = 0..order.

    :math:`\frac{d^k}{dx^k} e^{-s/x} = e^{-s/x} x^{-k} P_k(s/x)`, from :math:`P_0 = 1` and
    :math:`P_{k+1}(y) = (y - k) P_k(y) - y P_k'(y)`; the coefficients are integers.
    """
    y = np.polynomial.Polynomial([0.0, 1.0])
    current = np.polynomial.Polynomial([1.0])
    out = [current.coef[::-1].copy()]
    for k in range(order):
        current = (y - k) * current - y * current.deriv()
        out.append(current.coef[::-1].copy())
    return out


_POLYNOMIALS = _derivative_polynomials(2 * _EM_ORDER - 1)
#: the odd orders k = 1, 3, .., 2 _EM_ORDER - 1 of the Euler-Maclaurin terms
_ODD_ORDERS = np.arange(1, 2 * _EM_ORDER, 2)
#: the coefficients of P_k for the odd k (columns), highest power first, padded with leading
#: zeros to one length: Horner's rule over the padded rows gives every P_k exactly as over its
#: own coefficients (0 x + 0 = 0 until the first coefficient), for all k at once
_ODD_POLYNOMIALS = np.array(
    [
        np.concatenate((np.zeros(2 * _EM_ORDER - _POLYNOMIALS[k].size), _POLYNOMIALS[k]))
        for k in _ODD_ORDERS
    ]
).T


def _odd_derivative_polynomials(y: FloatArray) -> FloatArray:
    """:math:`P_k(y)` for the odd orders k (first axis), by Horner's rule, as numpy.polyval."""
    out = np.zeros((_ODD_ORDERS.size, *y.shape))
    expand = (slice(None),) + (None,) * y.ndim
    for row in _ODD_POLYNOMIALS:
        out *= y
        out += row[expand]
    return out


# --- special functions ---------------------------------------------------------------------
def _log_sinhc(x: FloatArray) -> FloatArray:
    r""":math:`g(x) = \log(\sinh(x) / x) \ge 0` for :math:`x \ge 0`, to full relative precision.

    For :math:`x \le 1`, ``log1p`` of :math:`\sum_{k=1}^{10} x^{2k} / (2k+1)!` (truncation
    below :math:`1/23!`); above, :math:`x - \log(2x) + \log(1 - e^{-2x})`.
    """
    out = np.empty_like(x)
    small = x <= 1.0
    z = x[small] ** 2
    series = np.zeros_like(z)
    for k in range(10, 0, -1):
        series = (series + 1.0 / math.factorial(2 * k + 1)) * z
    out[small] = np.log1p(series)
    large = x[~small]
    out[~small] = large + np.log1p(-np.exp(-2.0 * large)) - np.log(2.0 * large)
    return out


def _log_one_minus_exp_ratio(x: FloatArray) -> FloatArray:
    r""":math:`\lambda(x) = \log((1 - e^{-x}) / x) \le 0`, accurate relative to :math:`|\lambda|`.

    :math:`\lambda(x) = -x/2 + g(x/2)` for :math:`x \le 2` (the correction :math:`g` is at most
    a sixth of :math:`x/2` there), :math:`\log(1 - e^{-x}) - \log x` above.
    """
    out = np.empty_like(x)
    small = x <= 2.0
    xs = x[small]
    out[small] = _log_sinhc(0.5 * xs) - 0.5 * xs
    large = x[~small]
    out[~small] = np.log(-np.expm1(-large)) - np.log(large)
    return out


def _exp_minus_one_minus(x: FloatArray) -> FloatArray:
    r""":math:`e^x - 1 - x \ge 0` to full relative precision (Taylor series for :math:`|x| < 1`)."""
    out = np.empty_like(x)
    small = np.abs(x) < 1.0
    xs = x[small]
    series = np.zeros_like(xs)
    for k in range(19, 1, -1):
        series = series * xs + 1.0 / math.factorial(k)
    out[small] = series * xs * xs
    large = x[~small]
    out[~small] = np.expm1(large) - large
    return out


def _exp_integral_ratio(y: FloatArray) -> FloatArray:
    r""":math:`G(y) = 1 - y e^y E_1(y) = \int_0^\infty \frac{v e^{-v}}{y + v} dv` for :math:`y > 0`.

    Direct below :math:`y = 5` (at most two bits lost). Above, the continued fraction
    :math:`e^y E_1(y) = 1 / (y + 1 - R)`, :math:`R = 1^2 / (y + 3 - 2^2 / (y + 5 - \dots))`,
    30 levels deep (converged to 4e-18 at :math:`y = 5`), gives :math:`G = (1 - R)/(y + 1 - R)`
    without cancellation.
    """
    out = np.empty_like(y)
    small = y < 5.0
    ys = y[small]
    out[small] = 1.0 - ys * np.exp(ys) * special.exp1(ys)
    yl = y[~small]
    if yl.size:  # the 30 levels cost more than the rest: not for nothing
        rest = np.zeros_like(yl)
        for i in range(30, 0, -1):
            rest = (i * i) / (yl + (2 * i + 1) - rest)
        out[~small] = (1.0 - rest) / (yl + 1.0 - rest)
    return out


def _exp_integral_complement(y: FloatArray) -> FloatArray:
    r""":math:`\hat G(y) = 1 - e^{-y} G(y) = (1 - e^{-y}) + y E_1(y)`, a sum of positive terms."""
    out: FloatArray = -np.expm1(-y) + y * special.exp1(y)
    return out


def _ragged_sums(
    lows: IntArray, highs: IntArray, term: Callable[[IntArray, FloatArray], FloatArray]
) -> FloatArray:
    """``out[p] = sum(term(p, j) for j in lows[p]..highs[p])``, vectorised; empty ranges give 0."""
    counts = np.maximum(highs - lows + 1, 0)
    owner = np.repeat(np.arange(lows.size), counts)
    first = np.cumsum(counts) - counts
    j = lows[owner] + (np.arange(owner.size) - first[owner])
    values = term(owner, j.astype(np.float64))
    return np.bincount(owner, weights=values, minlength=lows.size).astype(np.float64, copy=False)


# --- per-task transforms ------------------------------------------------------------------------
def _ragged_ranks(counts: npt.NDArray[np.generic]) -> tuple[IntArray, FloatArray, IntArray]:
    """Every rank j = 1..C of each count, flat: owner (the count's position), j, segment starts."""
    lengths = counts.astype(np.int64)
    owner = np.repeat(np.arange(lengths.size), lengths)
    starts = np.cumsum(lengths) - lengths
    j = (np.arange(owner.size) - starts[owner] + 1).astype(np.float64)
    return owner, j, starts


def _log_series(moment_series: FloatArray) -> FloatArray:
    r"""Taylor coefficients of :math:`\log F` from those of :math:`F`, one row per series.

    ``moment_series[m]`` are :math:`f_m` for :math:`m \ge 2`, with :math:`f_0 = 1` and
    :math:`f_1 = 0` implied; from :math:`F' = F (\log F)'`,
    :math:`m \lambda_m = m f_m - \sum_{j=2}^{m-2} j \lambda_j f_{m-j}`.
    """
    out = np.zeros_like(moment_series)
    # j * lambda_j, filled in as the recursion goes
    scaled = np.zeros_like(moment_series)
    for m in range(2, moment_series.shape[0]):
        # sum_{j=2}^{m-2} j lambda_j f_{m-j}: rows j = 2..m-2 against f_{m-2} .. f_2
        acc = m * moment_series[m] - np.einsum(
            "j...,j...->...", scaled[2 : m - 1], moment_series[m - 2 : 1 : -1]
        )
        out[m] = acc / m
        scaled[m] = m * out[m]
    return out


#: B_{2k} / (2k (2k)!), k = 1.._SERIES_TERMS / 2: the series of the centred arithmetic CGF
_ARITHMETIC_SERIES = tuple(
    float(bernoulli) / (2 * k * math.factorial(2 * k))
    for k, bernoulli in enumerate(special.bernoulli(_SERIES_TERMS)[2::2], start=1)
)


#: ``evaluate(s, rows) -> (K, ell)`` of the pairs (or table counts) ``rows`` at the arguments
#: ``s`` of shape (rows, points): a task's transforms (:class:`_ArithmeticTask`, or
#: :meth:`_HarmonicTask.tabulate`)
Evaluator = Callable[[FloatArray, IntArray], tuple[FloatArray, FloatArray]]


class _ArithmeticTask:
    r"""Transforms of :math:`r \sim \mathcal{U}\{1..C\}`, one row per pair.

    The centred CGF :math:`K_C(s) = \log \mathbb{E}[e^{-s(r - (C+1)/2)}] = g(Cs/2) - g(s/2)` and
    :math:`\ell_C(s) = \log \mathbb{E}[e^{-sr}] = -s + \lambda(Cs) - \lambda(s)` (three terms of
    one sign). For :math:`s \le 1/C`, also the series
    :math:`K_C(s) = \sum_{k \ge 1} \frac{B_{2k}}{2k (2k)!} (C^{2k} - 1) s^{2k}` (from
    :math:`g(x) = \sum_k \frac{2^{2k} B_{2k}}{2k (2k)!} x^{2k}`, radius :math:`\pi`), whose
    terms beyond :math:`s^{24}` are below 1e-20 relative there.
    """

    def __init__(self, c: FloatArray) -> None:
        self.c = c
        self.mean = 0.5 * (c + 1.0)
        #: the series is used for s <= limit; coefficients are in x = s / limit
        self.limit = 1.0 / c
        self.row_cost = np.ones(c.size)

    def series_rows(self, part: slice) -> FloatArray:
        """The coefficients of :math:`x^m`, m = 2..24 (columns; zero for odd m), of some pairs."""
        c = self.c[part]
        out = np.zeros((c.size, _SERIES_TERMS - 1))
        even = np.arange(2, _SERIES_TERMS + 1, 2)
        coefficients = np.array(_ARITHMETIC_SERIES)
        out[:, ::2] = coefficients * -np.expm1(-even * np.log(c)[:, None])
        return out

    def __call__(self, s: FloatArray, rows: IntArray) -> tuple[FloatArray, FloatArray]:
        """``(K, ell)`` at ``s`` of shape (len(rows), nodes)."""
        cs = self.c[rows][:, None] * s
        centred = _log_sinhc(0.5 * cs) - _log_sinhc(0.5 * s)
        log_transform = -s + (_log_one_minus_exp_ratio(cs) - _log_one_minus_exp_ratio(s))
        return centred, log_transform


#: the powers m = 2.._SERIES_TERMS of the series
_EXPONENTS = np.arange(2.0, _SERIES_TERMS + 1)
#: binom(m, k) for k <= m (zero above)
_BINOMIAL = np.array(
    [[math.comb(m, k) for k in range(_SERIES_TERMS + 1)] for m in range(_SERIES_TERMS + 1)],
    dtype=np.float64,
)
#: zeta(k), k = 2.._SERIES_TERMS
_ZETA = special.zeta(np.arange(2.0, _SERIES_TERMS + 1))
#: m - k where k <= m, else 0: the power of (-h) that multiplies raw moment k in central moment m
_POWER_INDEX = np.maximum(
    np.subtract.outer(np.arange(_SERIES_TERMS + 1), np.arange(_SERIES_TERMS + 1)), 0
)


class _HarmonicTask:
    r"""Transforms of :math:`1/r`, :math:`r \sim \mathcal{U}\{1..C\}`, one row per pair.

    :math:`K_C(s) = \log \frac{1}{C} \sum_{j=1}^{C} e^{-s(1/j - h_C)}` with
    :math:`h_C = H_C / C`, and :math:`\ell_C(s) = K_C(s) - s h_C`; the method is described in
    :func:`harmonic_mean_moments`.
    """

    def __init__(self, num_candidates: IntArray) -> None:
        values, inverse = np.unique(num_candidates, return_inverse=True)
        c = values.astype(np.float64)
        #: the distinct counts, and each row's index into them
        self.values, self.inverse = c, inverse.reshape(-1)
        self.small = np.flatnonzero(values <= _DIRECT_MAX)
        harmonic = special.digamma(c + 1.0) + np.euler_gamma
        if self.small.size:  # exact harmonic numbers
            _, j, starts = self._ragged_distinct(self.small)
            harmonic[self.small] = np.add.reduceat(1.0 / j, starts)
        self.distinct_mean = harmonic / c
        self._moment_series: FloatArray | None = None
        self._series: FloatArray | None = None
        self._distinct_excess = (harmonic - 1.0) / c
        self.c = c[self.inverse]
        #: E[1/r] = H_C / C
        self.mean = self.distinct_mean[self.inverse]

    # per-row arrays that only the pair-by-pair sums need, made on first use
    @functools.cached_property
    def log_c(self) -> FloatArray:
        r""":math:`\log C` of every row."""
        out: FloatArray = np.log(self.c)
        return out

    @functools.cached_property
    def excess(self) -> FloatArray:
        r""":math:`(H_C - 1)/C = \mathbb{E}[1/r] - 1/C`, the drift of the scaled sums."""
        out: FloatArray = self._distinct_excess[self.inverse]
        return out

    @functools.cached_property
    def limit(self) -> FloatArray:
        """The series of K is used for s <= 1 (its radius exceeds 1.2 for every C)."""
        return np.ones(self.c.size)

    @functools.cached_property
    def row_cost(self) -> FloatArray:
        """The cost of one value of a row: C for direct sums, about 100 for Euler-Maclaurin."""
        out: FloatArray = np.where(self.c <= _DIRECT_MAX, self.c, 4.0 * _EM_START)
        return out

    def _ragged_distinct(self, rows: IntArray) -> tuple[IntArray, FloatArray, IntArray]:
        """Owner (position in ``rows``), j and segment starts of j = 1..C per distinct count."""
        return _ragged_ranks(self.values[rows])

    @property
    def moment_series(self) -> FloatArray:
        r"""Taylor coefficients :math:`(-1)^m \mu_m / m!` of the centred transform, per count.

        One column per distinct count (index with :attr:`inverse`), computed on first use:
        direct sums for :math:`C \le 256`, Hurwitz zeta sums above.
        """
        if self._moment_series is None:
            c, mean, small = self.values, self.distinct_mean, self.small
            size = _SERIES_TERMS + 1
            moment_series = np.zeros((size, c.size))
            signs = np.array([(-1) ** m / math.factorial(m) for m in range(size)])
            if small.size:  # direct sums
                owner, j, starts = self._ragged_distinct(small)
                deviation = 1.0 / j - mean[small][owner]
                power = deviation * deviation
                for m in range(2, size):
                    moment_series[m, small] = signs[m] * np.add.reduceat(power, starts) / c[small]
                    power *= deviation
            for begin in range(small.size, c.size, _MOMENT_ROWS):  # the rest, in blocks of rows
                part = slice(begin, begin + _MOMENT_ROWS)
                moment_series[:, part] = self._central_moments(c[part], mean[part]) * signs[:, None]
            moment_series[:2] = 0.0
            self._moment_series = moment_series
        return self._moment_series

    @property
    def series(self) -> FloatArray:
        r"""The coefficients :math:`\lambda_m` of :math:`s^m` of the series of :math:`K`, per count.

        One column per distinct count (index with :attr:`inverse`), computed on first use.
        """
        if self._series is None:
            moments = self.moment_series
            series = np.empty_like(moments)
            for begin in range(0, moments.shape[1], _INIT_ROWS):
                part = slice(begin, begin + _INIT_ROWS)
                series[:, part] = _log_series(moments[:, part])
            self._series = series
        return self._series

    def series_rows(self, part: slice) -> FloatArray:
        r"""The coefficients :math:`\lambda_m`, m = 2..24 (columns), of some rows' series."""
        out: FloatArray = self.series[2:, self.inverse[part]].T
        return out

    def _ragged(self, rows: IntArray) -> tuple[IntArray, FloatArray, IntArray]:
        """Owner (position in ``rows``), j and segment starts of j = 1..C for every row."""
        return _ragged_ranks(self.c[rows])

    @staticmethod
    def _central_moments(c: FloatArray, mean: FloatArray) -> FloatArray:
        r""":math:`\mu_m = \sum_{k} \binom{m}{k} (-h)^{m-k} H_k(C) / C` for :math:`C > 256`.

        :math:`H_k(C) = \zeta(k) - \zeta(k, C + 1)`; :math:`h = H_C / C < 0.025` keeps the
        binomial sums from cancelling.
        """
        size = _SERIES_TERMS + 1
        raw = np.empty((size, c.size))
        raw[0] = 1.0
        raw[1] = mean
        raw[2:] = _ZETA[:, None] / c
        # zeta(k, C + 1) < C^(1-k) / (k - 1) is below 1e-17 zeta(k) for most (k, C)
        order = np.arange(2.0, size)[:, None]
        tail = (order - 1.0) * np.log(c) < 40.0
        row, column = np.nonzero(tail)
        raw[2 + row, column] -= special.zeta(row + 2.0, c[column] + 1.0) / c[column]
        powers = np.ones((size, c.size))  # (-h)^k
        for k in range(1, size):
            powers[k] = powers[k - 1] * -mean
        # central[m] = sum_{k <= m} binom(m, k) raw[k] (-h)^(m - k), every m at once: the terms
        # k > m are zeros (binom(m, k) = 0) added after the others
        terms = _BINOMIAL[:, :, None] * raw[None, :, :] * powers[_POWER_INDEX]
        central: FloatArray = terms.sum(axis=1)
        central[0], central[1] = 1.0, 0.0
        return central

    def tabulate(self, s: FloatArray, rows: IntArray) -> tuple[FloatArray, FloatArray]:
        """``(K, ell)`` like calling the task, with the series of K wherever ``s <= 1``.

        The series costs 23 terms per value where the direct sums of small counts cost
        :math:`C`; it is the one the bucketed sums use, and its radius exceeds 1.2.
        """
        inside = s <= 1.0
        centred = np.empty_like(s)
        log_transform = np.empty_like(s)
        if not np.all(inside):
            rest = ~inside
            row_index = np.broadcast_to(rows[:, None], s.shape)[rest]
            k, ell = self(s[rest][:, None], row_index)
            centred[rest], log_transform[rest] = k[:, 0], ell[:, 0]
        if np.any(inside):
            row_index = np.broadcast_to(rows[:, None], s.shape)[inside]
            x = s[inside]
            series = np.zeros_like(x)
            distinct = self.inverse[row_index]
            coefficients = self.series
            for m in range(_SERIES_TERMS, 1, -1):
                series = (series + coefficients[m, distinct]) * x
            series *= x
            centred[inside] = series
            log_transform[inside] = series - x * self.mean[row_index]
        return centred, log_transform

    def __call__(self, s: FloatArray, rows: IntArray) -> tuple[FloatArray, FloatArray]:
        """``(K, ell)`` at ``s`` of shape (len(rows), nodes)."""
        centred = np.empty_like(s)
        log_transform = np.empty_like(s)
        small = self.c[rows] <= _DIRECT_MAX
        if np.any(small):
            centred[small], log_transform[small] = self._direct(s[small], rows[small])
        if not np.all(small):
            centred[~small], log_transform[~small] = self._large(s[~small], rows[~small])
        return centred, log_transform

    def _finish(
        self, kind: npt.NDArray[np.int_], base: FloatArray, s: FloatArray, rows: IntArray
    ) -> tuple[FloatArray, FloatArray]:
        r"""``(K, ell)`` from the summed pieces.

        Kind 0 is the centred form (``base`` is :math:`K`); otherwise ``base`` is
        :math:`\log(\hat S / C) = K - s(H_C - 1)/C` and :math:`\ell = \text{base} - s / C`.
        """
        column = rows[:, None]
        centred = np.where(kind == 0, base, base + s * self.excess[column])
        log_transform = np.where(kind == 0, base - s * self.mean[column], base - s / self.c[column])
        return centred, log_transform

    def _kinds(self, s: FloatArray, rows: IntArray) -> npt.NDArray[np.int_]:
        """0: centred form; 1: complement D = C - S summed; 2: scaled sum S summed."""
        drift = s * self.excess[rows][:, None]
        kind: npt.NDArray[np.int_] = np.where(s <= _SERIES_MAX, 0, np.where(drift <= 1.0, 1, 2))
        return kind

    def _direct(self, s: FloatArray, rows: IntArray) -> tuple[FloatArray, FloatArray]:
        """Sums over j = 1..C for rows with C <= 256."""
        kind = self._kinds(s, rows)
        owner, j_flat, starts = self._ragged(rows)
        kind_j, s_j = kind[owner], s[owner]
        j, c_j = j_flat[:, None], self.c[rows][owner][:, None]
        terms = np.empty_like(s_j)
        mask = kind_j == 0  # e^x - 1 - x >= 0 with x = -s (1/j - h)
        x = -s_j * (1.0 / j - self.mean[rows][owner][:, None])
        terms[mask] = _exp_minus_one_minus(x[mask])
        gap = s_j * ((c_j - j) / (j * c_j))  # s (1/j - 1/C) >= 0
        mask = kind_j == 1
        terms[mask] = -np.expm1(-gap[mask])
        mask = kind_j == 2
        terms[mask] = np.exp(-gap[mask])
        ratio = np.add.reduceat(terms, starts, axis=0) / self.c[rows][:, None]
        base = np.empty_like(ratio)
        mask = kind == 0
        base[mask] = np.log1p(ratio[mask])
        mask = kind == 1
        base[mask] = np.log1p(-ratio[mask])
        mask = kind == 2
        base[mask] = np.log(ratio[mask])
        return self._finish(kind, base, s, rows)

    def _large(self, s: FloatArray, rows: IntArray) -> tuple[FloatArray, FloatArray]:
        """Power series for s <= 2, Euler-Maclaurin above, for rows with C > 256."""
        kind = self._kinds(s, rows)
        clipped = np.minimum(s, _SERIES_MAX)
        coefficients = self.moment_series[:, self.inverse[rows]]
        q = np.zeros_like(s)
        for m in range(_SERIES_TERMS, 1, -1):
            q = (q + coefficients[m][:, None]) * clipped
        base = np.log1p(q * clipped)
        beyond = kind > 0
        if np.any(beyond):
            row_index = np.broadcast_to(rows[:, None], s.shape)[beyond]
            base[beyond] = self._euler_maclaurin(s[beyond], row_index, kind[beyond] == 1)
        return self._finish(kind, base, s, rows)

    def _euler_maclaurin(self, s: FloatArray, rows: IntArray, complement: BoolArray) -> FloatArray:
        r""":math:`\log(\hat S / C)` with :math:`\hat S = \sum_{j=1}^{C} e^{-s (1/j - 1/C)}`.

        Where ``complement``, from :math:`D = C - \hat S = \sum_j (1 - e^{-s (1/j - 1/C)})`.
        """
        c = self.c[rows]
        start = np.maximum(_EM_START, np.ceil(_EM_SCALE * np.sqrt(s)))
        direct = start > 0.5 * c  # only the last few terms matter: sum them all
        start[direct] = c[direct] + 1.0
        # where s (1/j - 1/C) > threshold, the terms e^{-s (1/j - 1/C)} of S are below
        # e^{-40} / C and dropped, and those of D, 1 - e^{-s (1/j - 1/C)}, are 1 to the same
        # accuracy and counted: j = 1..first-1, a number of terms that grows like s, never
        # materialised (the head summed term by term has at most 2 sqrt(s) - s / threshold
        # terms, fewer than 2 threshold, whatever C)
        threshold = _NEGLIGIBLE + self.log_c[rows]
        first = np.maximum(1.0, np.floor(s * c / (threshold * c + s)))
        first = np.minimum(first, start)  # a head j = first..start-1 that may be empty

        lows, highs = first.astype(np.int64), (start - 1.0).astype(np.int64)
        total = np.where(complement, first - 1.0, 0.0)
        # the common case, j = 1..J-1 of D with J = _EM_START: one dense block
        dense = complement & (lows == 1) & (highs == _EM_START - 1)
        inverse_j = 1.0 / np.arange(1.0, _EM_START)
        gap = s[dense][:, None] * (inverse_j[None, :] - 1.0 / c[dense][:, None])
        total[dense] += np.sum(-np.expm1(-gap), axis=1)

        def head_term(owner: IntArray, j: FloatArray) -> FloatArray:
            # D sums 1 - e^{-gap}; S sums e^{-gap} <= 1 next to its last term 1, so 1 + expm1
            # is accurate enough there
            small_gap = np.expm1(-s_rest[owner] * ((c_rest[owner] - j) / (j * c_rest[owner])))
            out: FloatArray = np.where(complement_rest[owner], -small_gap, 1.0 + small_gap)
            return out

        rest = ~dense
        if np.any(rest):
            s_rest, c_rest, complement_rest = s[rest], c[rest], complement[rest]
            total[rest] += _ragged_sums(lows[rest], highs[rest], head_term)

        # j = J..C by Euler-Maclaurin, J = start
        em = ~direct
        ce, se, je, comp = c[em], s[em], start[em], complement[em]
        gap = se * ((ce - je) / (je * ce))
        f_start = np.exp(-gap)
        y_end, y_start = se / ce, se / je
        # the two ends of the range as the rows of one array: each function called once for both
        ends_x, ends_y = np.stack((ce, je)), np.stack((y_end, y_start))
        # every odd order at once: (order, end, value)
        derivatives = _odd_derivative_polynomials(ends_y)
        derivatives[:, 1] *= f_start
        derivatives /= ends_x ** _ODD_ORDERS[:, None, None]
        correction = np.zeros_like(se)
        for i, (at_end, at_start) in enumerate(derivatives, start=1):
            correction += _BERNOULLI[i - 1] / math.factorial(2 * i) * (at_end - at_start)
        tail = np.empty_like(se)
        # S: the integral of exp(-s (1/x - 1/C)) is x exp(-s (1/x - 1/C)) G(s / x)
        n = ~comp
        if np.any(n):
            g_end, g_start = _exp_integral_ratio(ends_y[:, n])
            integral = ce[n] * g_end - je[n] * f_start[n] * g_start
            tail[n] = integral + 0.5 * (f_start[n] + 1.0) + correction[n]
        # D: 1 - exp(-s (1/x - 1/C)) = -expm1(s/C) + exp(s/C) (1 - exp(-s/x)), and the
        # integral of 1 - exp(-s/x) is x G^(s/x)
        if np.any(comp):
            g_end, g_start = _exp_integral_complement(ends_y[:, comp])
            integral = -(ce[comp] - je[comp]) * np.expm1(y_end[comp]) + np.exp(y_end[comp]) * (
                ce[comp] * g_end - je[comp] * g_start
            )
            tail[comp] = integral - 0.5 * np.expm1(-gap[comp]) - correction[comp]
        total[em] += tail
        out = np.empty_like(total)
        out[complement] = np.log1p(-total[complement] / c[complement])
        out[~complement] = np.log(total[~complement] / c[~complement])
        return out


# --- the sum over tasks -------------------------------------------------------------------------
def _pair_cost(task: _HarmonicTask, a: FloatArray, mu: float) -> float:
    r"""Rough cost of the pair-by-pair sums: pairs beyond their series range at the first nodes.

    Five nodes per unit of :math:`\log u` (the accepted step 0.2) from where
    :math:`a t` reaches half the series range to the first range's end, each costing the
    pair's row cost (:math:`C` for direct sums, about 100 for Euler-Maclaurin), plus the power
    sums of the buckets, :data:`_BUCKET_SETUP` per pair (measured).
    """
    reach = np.log(a * (2.0 * math.exp(_STEP * _FIRST_HIGH) / mu) / task.limit)
    evaluations = float(np.sum(np.maximum(reach, 0.0) * task.row_cost) / _STEP * 2.0)
    return evaluations + _BUCKET_SETUP * a.size


def _lattice_cost(lattice: LatticeSum, a: FloatArray, mu: float) -> float:
    r"""Rough cost of the lattice sums, in the units of :func:`_pair_cost`.

    Table values above the series range at their row cost, below it at the 23 terms of the
    series, over the span of :math:`\log s` of the first nodes, per table; the fold at a
    seventh of a unit per stencil term (measured).
    """
    counts = lattice.table_counts
    row_cost = np.where(counts <= _DIRECT_MAX, counts, 4.0 * _EM_START)
    high = math.log(float(np.max(a)) / mu) + _STEP * _FIRST_HIGH
    low = max(math.log(float(np.min(a)) / mu) + _STEP * _FIRST_LOW, FLOOR)
    above = (max(high, 0.0) + POINTS * STEP) / STEP
    below = max(-low, 0.0) / STEP
    tables = float(np.sum(above * row_cost + below * _SERIES_TERMS))
    return tables + lattice.fold_terms / 7.0


class _Laplace:
    r"""Centred CGF and log-transform of :math:`X = \sum_i a_i Y_i` at :math:`t = u / \mu`.

    :math:`K(t) = \sum_g m_g K_g(a_g t)` and :math:`\ell(t) = \sum_g m_g \ell_g(a_g t)` over the
    distinct pairs :math:`g = (C, a)` with multiplicities :math:`m_g`; each sum has terms of one
    sign. Tasks with :math:`C = 1` (:math:`Y = 1`) add :math:`-a t` to :math:`\ell` only.

    Pairs whose argument is within the radius of their power series,
    :math:`a_g t \le \hat s_g`, are not evaluated one by one: with
    :math:`\tau_g = \hat s_g / a_g`, the pairs are put in buckets :math:`2^b \le \tau_g < 2^{b+1}`
    and each bucket keeps the power sums
    :math:`B_{b,m} = \sum_{g \in b} m_g k_{g,m} (2^b / \tau_g)^m` of their scaled coefficients
    (all factors in :math:`(1/2, 1]`, so nothing over- or underflows). At a node :math:`t`, a
    bucket with :math:`2^b \ge t` contributes :math:`\sum_m B_{b,m} (t / 2^b)^m`; only the pairs
    of the other buckets (:math:`a_g t > \hat s_g / 2`) are evaluated exactly. For large
    :math:`n` that is a small minority, so the cost follows the number of nodes more than the
    number of distinct pairs.

    For the harmonic transform with at least :data:`_LATTICE_PAIRS` distinct pairs, both sums
    come from :class:`rankstats.null.lattice.LatticeSum` instead whenever its estimated cost
    (:func:`_lattice_cost`: tables per distinct count plus the fold) is below that of the
    buckets and the pair-by-pair evaluations (:func:`_pair_cost`). There :math:`\ell` is taken as
    :math:`K(t) - t \sum_g m_g a_g \mathbb{E}[Y_g]` wherever :math:`K` is at most half the
    linear term, so that its interpolation error is that of :math:`K`, far smaller than that of
    the interpolated :math:`\ell` where :math:`X` is concentrated (the variance is about six
    times as sensitive to a relative error of :math:`\ell` as to one of :math:`K`).
    """

    def __init__(
        self,
        task: _ArithmeticTask | _HarmonicTask,
        a: FloatArray,
        multiplicity: FloatArray,
        certain: float,
        mu: float,
    ) -> None:
        self.task, self.certain, self.mu = task, certain, mu
        self.lattice: LatticeSum | None = None
        if isinstance(task, _HarmonicTask) and a.size >= _LATTICE_PAIRS:
            lattice = LatticeSum(
                task.c.astype(np.int64),
                a,
                multiplicity,
                mu,
                lambda c: _HarmonicTask(c).tabulate,
                (task.values.astype(np.int64), task.inverse),
            )
            if _lattice_cost(lattice, a, mu) < _pair_cost(task, a, mu):
                self.lattice = lattice
                #: sum_g m_g a_g E[Y_g] over the pairs: the slope of ell - K
                self.slope = pairwise_dot(multiplicity * a, task.mean)
                return
        tau = np.minimum(task.limit / a, 2.0**1000)  # a negligible weight: a huge tau
        level = np.floor(np.log2(tau))
        order = np.argsort(level, kind="stable")
        #: pairs by increasing bucket; those below a node's t are a prefix
        self.order = order
        self.a, self.multiplicity = a[order], multiplicity[order]
        self.threshold = np.exp2(level[order])
        self.prefix_cost = np.concatenate(([0.0], np.cumsum(task.row_cost[order])))
        levels, bucket = np.unique(level, return_inverse=True)
        self.bucket_threshold = np.exp2(levels)
        scale = np.exp2(level) / tau
        # B[b, m] for m = 2..24, added pair by pair in order, in blocks of bounded memory
        sums = np.zeros((levels.size, _SERIES_TERMS - 1))
        for begin in range(0, a.size, _INIT_ROWS):
            part = slice(begin, begin + _INIT_ROWS)
            scaled = scale[part, None] ** _EXPONENTS
            scaled[:, 0] = np.square(scale[part])  # scale**2 as numpy computes it: x * x
            terms = multiplicity[part, None] * task.series_rows(part) * scaled
            np.add.at(sums, bucket[part], terms)
        self.power_sums = np.zeros((_SERIES_TERMS + 1, levels.size))
        self.power_sums[2:] = sums.T
        self.bucket_mean = np.bincount(bucket, weights=multiplicity * a * task.mean)

    def __call__(self, u: FloatArray) -> tuple[FloatArray, FloatArray]:
        t = u / self.mu
        if self.lattice is not None:
            centred, log_transform = self.lattice(u)
            # ell = K - t sum m a E[Y] exactly; from K, its error is that of K (small next to
            # the slope where X is concentrated) rather than that of the interpolated ell
            linear = self.slope * t
            log_transform = np.where(centred <= 0.5 * linear, centred - linear, log_transform)
            return centred, log_transform - self.certain * t
        # the buckets within their series radius
        ratio = t[:, None] / self.bucket_threshold[None, :]
        inside = ratio <= 1.0
        ratio = np.where(inside, ratio, 0.0)
        poly = np.zeros_like(ratio)
        for m in range(_SERIES_TERMS, 1, -1):
            poly = (poly + self.power_sums[m][None, :]) * ratio
        centred = np.sum(poly * ratio, axis=1)
        log_transform = centred - t * (np.where(inside, self.bucket_mean[None, :], 0.0).sum(1))
        log_transform -= self.certain * t
        # the pairs beyond: evaluated one by one, in blocks of nodes of bounded size
        counts = np.searchsorted(self.threshold, t, side="left")
        by_count = np.argsort(counts, kind="stable")
        begin = int(np.searchsorted(counts[by_count], 1))
        # the elements a block of nodes by_count[begin:end] takes grow with end: each block is
        # the longest run whose cost stays within _BLOCK_ELEMENTS (at least one node)
        node_cost = self.prefix_cost[counts[by_count]]
        while begin < t.size:
            cost = node_cost[begin + 1 :] * np.arange(2.0, t.size - begin + 1)
            over = np.flatnonzero(cost > _BLOCK_ELEMENTS)
            end = begin + 1 + (int(over[0]) if over.size else cost.size)
            nodes = by_count[begin:end]
            count = int(counts[by_count[end - 1]])
            t_block = t[nodes]
            rows = self.order[:count]
            k, ell = self.task(self.a[:count, None] * t_block[None, :], rows)
            beyond = self.threshold[:count, None] < t_block[None, :]
            weights = self.multiplicity[:count]
            centred[nodes] += np.einsum("g,gn->n", weights, np.where(beyond, k, 0.0))
            log_transform[nodes] += np.einsum("g,gn->n", weights, np.where(beyond, ell, 0.0))
            begin = end
        return centred, log_transform


# --- quadrature ---------------------------------------------------------------------------------
def integrand_values(
    u: FloatArray, centred: FloatArray, log_transform: FloatArray
) -> tuple[FloatArray, FloatArray, FloatArray]:
    r""":math:`u P(u)`, :math:`u (u - 2) P(u)` and :math:`\mathbb{E}[e^{-tX}]` from the sums.

    :math:`P(u) = e^{-u} (M(u/\mu) - 1) = \mathbb{E}[e^{-tX}] (1 - e^{-K(t)})`, from the centred
    CGF :math:`K` and the log-transform :math:`\ell` at :math:`t = u / \mu` (one group, or a row
    per group).
    """
    transform = np.exp(log_transform)
    first = u * transform * -np.expm1(-centred)
    return first, (u - 2.0) * first, transform


def _integrands(laplace: _Laplace, v: FloatArray) -> tuple[FloatArray, FloatArray, FloatArray]:
    """:func:`integrand_values` of one transform at the nodes :math:`u = e^v`."""
    u = np.exp(v)
    return integrand_values(u, *laplace(u))


def nodes_and_midpoints(
    integrands: Callable[[FloatArray], tuple[FloatArray, ...]],
    nodes: tuple[int, int],
    cells: tuple[int, int],
) -> tuple[FloatArray, ...]:
    r"""The integrands at the nodes :math:`v = hk` and at the midpoints :math:`v = h(k + 1/2)`.

    ``nodes`` and ``cells`` are the first and last :math:`k` of each (:math:`h` = ``_STEP``).
    The first halving of the step always follows, so the midpoints are evaluated in the same
    call as the nodes (``integrands(v)``, values along the last axis): every value is that of a
    call of its own, and the transforms' fixed cost is paid once. Returns the integrands and
    transform at the nodes, then the two integrands at the midpoints.
    """
    coarse = _STEP * np.arange(nodes[0], nodes[1] + 1.0)
    middle = _STEP * np.arange(cells[0], cells[1] + 1.0) + 0.5 * _STEP
    first, second, transform = integrands(np.concatenate((coarse, middle)))
    split = coarse.size
    return (
        first[..., :split],
        second[..., :split],
        transform[..., :split],
        first[..., split:],
        second[..., split:],
    )


class Rows:
    """A source of :func:`_quadrature`, its nodes and midpoints in one evaluation.

    Subclasses give :meth:`integrands` (and ``groups``, ``offsets``, ``subset``, as
    :class:`_Integrands` asks); :meth:`nodes_and_midpoints` evaluates it once for both.
    """

    def integrands(self, v: FloatArray) -> tuple[FloatArray, ...]:
        """The integrands at the nodes ``v``, a row per group."""
        raise NotImplementedError

    def nodes_and_midpoints(
        self, nodes: tuple[int, int], cells: tuple[int, int]
    ) -> tuple[FloatArray, ...]:
        """:func:`nodes_and_midpoints` of :meth:`integrands`."""
        return nodes_and_midpoints(self.integrands, nodes, cells)


class _OneGroup(Rows):
    """The integrands of one transform as rows of one group, for :func:`_quadrature`."""

    groups = 1
    offsets = None

    def __init__(self, laplace: _Laplace) -> None:
        self.laplace = laplace

    def integrands(self, v: FloatArray) -> tuple[FloatArray, ...]:
        """:func:`_integrands`, each as a row."""
        return tuple(part[None, :] for part in _integrands(self.laplace, v))

    def subset(self, chosen: IntArray) -> _OneGroup:
        """The groups ``chosen``: this one."""
        return self


class _Integrands(Protocol):
    """The integrands of one or several groups' transforms, a row per group (:func:`_quadrature`).

    ``nodes_and_midpoints((k0, k1), (c0, c1))`` gives :math:`u P`, :math:`u (u - 2) P` and the
    transform at the nodes :math:`v = hk`, ``k0 <= k <= k1``, then the first two at the
    midpoints :math:`v = h(c + 1/2)`, ``c0 <= c <= c1`` (:math:`h` = ``_STEP``);
    ``integrands(v)`` the three at nodes ``v`` (ascending); ``subset(chosen)`` the same for the
    groups ``chosen`` only.
    """

    groups: int

    @property
    def offsets(self) -> FloatArray | None:
        """Per group, the offset of its nodes from the nominal ones (``None``: none)."""

    def nodes_and_midpoints(
        self, nodes: tuple[int, int], cells: tuple[int, int]
    ) -> tuple[FloatArray, ...]: ...

    def integrands(self, v: FloatArray) -> tuple[FloatArray, ...]: ...

    def subset(self, chosen: IntArray) -> _Integrands: ...


def _reciprocal_moments(laplace: _Laplace, b: float) -> tuple[float, float]:
    r"""Return :math:`I_1 = \mathbb{E}[\mu/X] - 1` and :math:`\mu^2 \mathbb{V}[1/X]`.

    ``b`` is :math:`\min X / \mu`. See :func:`inverse_arithmetic_mean_moments`, Notes.
    """
    i1, variance = _quadrature(_OneGroup(laplace), np.array([b]))
    return float(i1[0]), float(variance[0])


def quadrature_by_parts(source: _Integrands, b: FloatArray) -> tuple[FloatArray, FloatArray]:
    """:func:`_quadrature` for at most :data:`GROUPS_PER_PASS` groups at a time.

    Its arrays are (groups, nodes), about a hundred nodes and several arrays: 10,000 groups at
    once had peaked at 72 MB. The parts share the source's tables; each part's range is decided
    by its own groups' tails, as a single group's is by its own.
    """
    if source.groups <= GROUPS_PER_PASS:
        return _quadrature(source, b)
    i1 = np.empty(source.groups)
    variance = np.empty(source.groups)
    for begin in range(0, source.groups, GROUPS_PER_PASS):
        chosen = np.arange(begin, min(begin + GROUPS_PER_PASS, source.groups))
        i1[chosen], variance[chosen] = _quadrature(source.subset(chosen), b[chosen])
    return i1, variance


def _quadrature(source: _Integrands, b: FloatArray) -> tuple[FloatArray, FloatArray]:
    r""":math:`I_1` and :math:`\mu^2 \mathbb{V}[1/X]` of each group (rows of ``source``).

    The rule of :func:`inverse_arithmetic_mean_moments` (Notes), for one group or many
    together (:mod:`rankstats.null.reciprocal_groups`): the range grows while any group's bound
    on a neglected tail exceeds :math:`10^{-16}` of its result (``b``, each group's
    :math:`\min X / \mu`, bounds the right one), then each group's step is halved until its
    own sums settle, the groups that settled leaving the passes that follow. A source whose
    ``offsets`` are not ``None`` evaluates group :math:`g` at :math:`v + \varphi_g` for each
    nominal node :math:`v` (the tail bounds are taken at those nodes).
    """
    low, high = _FIRST_LOW, _FIRST_HIGH
    shifts = source.offsets
    # the integrands at the nodes of step _STEP (f) and at their midpoints (m)
    f1, f2, transform, m1, m2 = source.nodes_and_midpoints((low, high), (low, high - 1))
    for _ in range(1000):  # grow the range until the bounds on both tails are negligible
        i1, i2 = _STEP * f1.sum(axis=1), _STEP * f2.sum(axis=1)
        tolerance1 = _TAIL_TOLERANCE * i1
        tolerance2 = _TAIL_TOLERANCE * np.maximum(i2 - i1 * i1, 0.0)
        u_low: float | FloatArray
        u_high: float | FloatArray
        if shifts is None:
            u_low, u_high = math.exp(_STEP * low), math.exp(_STEP * high)
            exp_low: float | FloatArray = math.exp(u_low)
        else:  # each group's nodes are shifted by its offset
            u_low, u_high = np.exp(_STEP * low + shifts), np.exp(_STEP * high + shifts)
            exp_low = np.exp(u_low)
        # left: K is convex with K(0) = K'(0) = 0, so P(u) <= (u / u_low) (e^{K(u_low)} - 1)
        left1 = 0.5 * exp_low * f1[:, 0]
        left2 = 2.0 / 3.0 * u_low * exp_low * f1[:, 0]
        # right: E[exp(-tX)] <= E[exp(-TX)] exp(-(t - T) min X)
        right1 = transform[:, -1] / b
        right2 = transform[:, -1] * (u_high**2 / b + 2.0 * u_high / b**2 + 2.0 / b**3)
        grow_left = bool(np.any((left1 > tolerance1) | (left2 + 2.0 * i1 * left1 > tolerance2)))
        grow_right = bool(np.any((right1 > tolerance1) | (right2 + 2.0 * i1 * right1 > tolerance2)))
        if not (grow_left or grow_right):
            break
        if grow_left:
            span = (low - _GROWTH, low - 1)
            g1, g2, _, h1, h2 = source.nodes_and_midpoints(span, span)
            f1, f2 = np.hstack((g1, f1)), np.hstack((g2, f2))
            m1, m2 = np.hstack((h1, m1)), np.hstack((h2, m2))
            low -= _GROWTH
        if grow_right:
            g1, g2, g3, h1, h2 = source.nodes_and_midpoints(
                (high + 1, high + _GROWTH), (high, high + _GROWTH - 1)
            )
            f1, f2 = np.hstack((f1, g1)), np.hstack((f2, g2))
            m1, m2 = np.hstack((m1, h1)), np.hstack((m2, h2))
            transform = np.hstack((transform, g3))
            high += _GROWTH
    i1, i2 = _STEP * f1.sum(axis=1), _STEP * f2.sum(axis=1)
    sum1, sum2 = f1.sum(axis=1), f2.sum(axis=1)
    cells = _STEP * np.arange(low, high + 0.0)
    step = _STEP
    live = np.arange(source.groups)  # the groups whose sums have not settled
    current = source
    for _ in range(_MAX_HALVINGS):  # halve the step: add the midpoints of the current nodes
        if step == _STEP:  # the first midpoints were evaluated with the nodes
            g1, g2 = m1.sum(axis=1), m2.sum(axis=1)
        else:
            offsets = step * np.arange(0.5, _STEP / step)
            points = (cells[:, None] + offsets[None, :]).ravel()
            new1, new2, _ = current.integrands(points)
            g1, g2 = new1.sum(axis=1), new2.sum(axis=1)
        sum1[live] += g1
        sum2[live] += g2
        step /= 2.0
        new_i1, new_i2 = step * sum1[live], step * sum2[live]
        old_var = i2[live] - i1[live] * i1[live]
        change = np.maximum(np.abs(new_i1 - i1[live]), np.abs((new_i2 - new_i1 * new_i1) - old_var))
        i1[live], i2[live] = new_i1, new_i2
        settled: BoolArray = change <= _SETTLED * np.abs(new_i2 - new_i1 * new_i1)
        if bool(settled.all()):
            break
        kept = np.flatnonzero(~settled)
        live = live[kept]
        current = current.subset(kept)
    return i1, i2 - i1 * i1


# --- the pairs (C, a) ---------------------------------------------------------------------------
@dataclass(frozen=True)
class _SpreadPairs:
    r"""The distinct pairs :math:`(C, a)` of the tasks with :math:`C > 1`, for both metrics.

    ``spread`` holds the pairs with their numbers of tasks, ``folded`` the same with many
    distinct large counts of one share replaced by interpolation nodes
    (:func:`~rankstats.null.interpolation.interpolation_pairs`); ``certain`` is the total share
    :math:`\sum a_i` of the tasks with :math:`C = 1`, whose rank is 1.
    """

    spread: tuple[IntArray, FloatArray, FloatArray]
    folded: tuple[IntArray, FloatArray, FloatArray]
    certain: float


#: the pairs of the tasks seen last: the inverse arithmetic and the harmonic mean rank of one
#: cell of a table share them (a table holds its tasks while it computes their null moments)
_PAIRS: weakref.WeakKeyDictionary[Tasks, _SpreadPairs | None] = weakref.WeakKeyDictionary()


def _spread_pairs(tasks: Tasks) -> _SpreadPairs | None:
    """The :class:`_SpreadPairs` of the tasks, computed once per :class:`Tasks` object.

    ``None`` when every task has a single candidate.
    """
    try:
        return _PAIRS[tasks]
    except KeyError:
        pass
    c, a, multiplicity = tasks.shares()
    spread = c > 1
    pairs = None
    if np.any(spread):
        certain = float(np.sum(multiplicity[~spread] * a[~spread]))
        c, a, multiplicity = c[spread], a[spread], multiplicity[spread]
        # many distinct large counts: a few hundred interpolation nodes in log C stand for them
        folded = interpolation_pairs(c, a, multiplicity)
        pairs = _SpreadPairs((c, a, multiplicity), folded, certain)
    _PAIRS[tasks] = pairs
    return pairs


# --- public functions ---------------------------------------------------------------------------
def inverse_arithmetic_mean_moments(
    num_candidates: IntArray, weights: FloatArray | None = None
) -> tuple[float, float]:
    r"""Return the null expectation and variance of the inverse arithmetic mean rank.

    .. math::

        \mathrm{IAMR} = \frac{1}{X}, \qquad X = \sum_{i=1}^{n} a_i r_i, \qquad
        a_i = \frac{w_i}{\sum_j w_j}, \qquad r_i \sim \mathcal{U}\{1, \dots, C_i\}

    Parameters
    ----------
    num_candidates : numpy.ndarray of shape (n,)
        The number of candidates :math:`C_i \ge 1` of each ranking task (int64).
    weights : numpy.ndarray of shape (n,), optional
        Non-negative scaling factors :math:`w_i` with a positive sum (float64); ``None`` means
        equal weights. A task of weight zero is the same as no task.

    Returns
    -------
    expectation : float
        :math:`\mathbb{E}[1/X]`.
    variance : float
        :math:`\mathbb{V}[1/X]`.

    Notes
    -----
    *Transform.* With :math:`\mu = \mathbb{E}[X] = \sum_i a_i (C_i + 1)/2`, the centred Laplace
    transform factorises over the tasks, in closed form,

    .. math::

        M(t) = \mathbb{E}[e^{-t (X - \mu)}] = e^{K(t)}, \qquad
        K(t) = \sum_i K_{C_i}(a_i t), \qquad
        K_C(s) = \log \frac{\sinh(Cs/2)}{C \sinh(s/2)} = g(Cs/2) - g(s/2),

    with :math:`g(x) = \log(\sinh x / x) \ge 0` (the geometric sum
    :math:`\frac1C \sum_{j=1}^{C} e^{-sj}`, written symmetrically about its mean). :math:`K` is
    a cumulant generating function: convex, :math:`K \ge 0`, :math:`K(0) = K'(0) = 0`. The
    transform itself is accumulated in logs,
    :math:`\log \mathbb{E}[e^{-sr}] = -s + \lambda(Cs) - \lambda(s)` with
    :math:`\lambda(x) = \log((1 - e^{-x}) / x) \le 0`, all terms of one sign, so
    :math:`\log \mathbb{E}[e^{-tX}]` is never formed as :math:`K(t) - \mu t`, a difference of
    large numbers when :math:`X` is spread out. For :math:`a_i t \le 1/C_i` the power series
    :math:`K_C(s) = \sum_{k \ge 1} \frac{B_{2k}}{2k\,(2k)!} (C^{2k} - 1) s^{2k}` (Bernoulli
    numbers :math:`B_{2k}`; radius :math:`2\pi / C`) is summed instead, through power sums over
    the tasks, so the cost does not grow with the number of distinct pairs
    :math:`(C_i, a_i)` once :math:`n` is large.

    *Centred moments.* Substituting :math:`u = \mu t` in
    :math:`\mathbb{E}[X^{-1}] = \int_0^\infty \mathbb{E}[e^{-tX}] dt` and
    :math:`\mathbb{E}[X^{-2}] = \int_0^\infty t\, \mathbb{E}[e^{-tX}] dt`, and subtracting
    :math:`\int_0^\infty e^{-u} du = \int_0^\infty u e^{-u} du = 1` analytically,

    .. math::

        \mathbb{E}\Bigl[\frac{\mu}{X}\Bigr] = 1 + I_1, \qquad
        \mu^2\, \mathbb{V}\Bigl[\frac{1}{X}\Bigr] = I_2 - I_1^2, \qquad
        I_1 = \int_0^\infty P(u)\, du, \qquad
        I_2 = \int_0^\infty (u - 2)\, P(u)\, du,

    where :math:`P(u) = e^{-u} (M(u/\mu) - 1) = \mathbb{E}[e^{-tX}]\,(1 - e^{-K(t)}) \ge 0`.
    For concentrated :math:`X`, :math:`I_1 \approx I_2 \approx \sigma^2/\mu^2`, so the variance
    comes out to full relative precision instead of as a difference of two numbers close to
    :math:`\mu^{-2}` (which would lose about :math:`\log_{10} n` digits).

    *Quadrature.* In :math:`v = \log u` the integrands :math:`u P` and :math:`u (u - 2) P` are
    analytic in the strip :math:`|\Im v| < \pi/2` (where :math:`\Re\, t > 0` and
    :math:`|\mathbb{E}[e^{-tX}]| \le \mathbb{E}[e^{-\Re(t) X}]`), decay like :math:`u^3` as
    :math:`v \to -\infty` and doubly exponentially as :math:`v \to \infty`, so the trapezoidal
    rule with step :math:`h` converges geometrically: its error is
    :math:`A e^{-2 \pi d / h}` for any :math:`d < \pi/2`, so halving the step squares it (up to
    the factor :math:`A`). The step starts at :math:`h = 0.4` and is halved, reusing every node,
    until two successive sums of :math:`I_1` and :math:`I_2 - I_1^2` agree to :math:`10^{-5}`
    of :math:`I_2 - I_1^2`; the accepted sum is then accurate to about the square of that
    change. Measured over spread and concentrated cases (:math:`n` from 1 to :math:`10^7`,
    :math:`C` up to :math:`10^{12}`, weighted or not), the change from :math:`h = 0.4` to
    :math:`0.2` is at most 1e-7, and the sums at :math:`h = 0.2` and :math:`h = 0.025` agree to
    3e-15 relative: the result is taken at :math:`h = 0.2`, about 100 to 150 nodes. The range grows
    until rigorous bounds on both neglected tails are below 1e-16 of the result: on the left
    from convexity, :math:`P(u) \le (u/u_0)(e^{K(u_0/\mu)} - 1)` for :math:`u \le u_0`; on the
    right from :math:`\mathbb{E}[e^{-tX}] \le \mathbb{E}[e^{-TX}]\, e^{-(t - T) \min X}`.

    Against exact enumeration with 50-digit arithmetic, and against 40-digit ``mpmath``
    quadrature for :math:`n` in the thousands, the relative error is about 1e-16 on the
    expectation and below 2e-15 on the variance (``tests/test_reciprocal_null.py``). Memory is
    independent of :math:`\max C`; :math:`n = 10^5` tasks with 1000 distinct :math:`C` take a
    few milliseconds. The closed-form transform is cheap enough to evaluate pair by pair even
    with a distinct weight per task (:math:`n = 10^5` distinct weights: about 0.1 s;
    :math:`10^6`: about 1.5 s, with :math:`O(n)` memory and no per-pair table of series
    coefficients).

    The second-order delta method, :math:`\mathbb{E} \approx (1 + \sigma^2/\mu^2)/\mu` and
    :math:`\mathbb{V} \approx \sigma^2/\mu^4`, is close here (relative error :math:`O(n^{-2})`)
    but not exact.

    Examples
    --------
    >>> mean, variance = inverse_arithmetic_mean_moments(np.array([1, 2, 3, 5]))
    >>> round(mean, 12), round(variance, 12)
    (0.564925444925, 0.02090229573)

    One task: :math:`\mathbb{E}[1/r] = H_C / C`, here :math:`H_4 / 4 = 25/48`.

    >>> mean, variance = inverse_arithmetic_mean_moments(np.array([4]))
    >>> round(mean, 12), round(25 / 48, 12)
    (0.520833333333, 0.520833333333)
    """
    return inverse_arithmetic_mean_moments_of(Tasks(num_candidates, weights))


def inverse_arithmetic_mean_moments_of(tasks: Tasks) -> tuple[float, float]:
    """:func:`inverse_arithmetic_mean_moments` of tasks given as rows with multiplicities."""
    pairs = _spread_pairs(tasks)
    if pairs is None:
        return 1.0, 0.0
    certain = pairs.certain
    c, a, multiplicity = pairs.folded
    task = _ArithmeticTask(c.astype(np.float64))
    # the mean from the same pairs as the transform: the centring needs them to agree exactly
    mu = pairwise_dot(multiplicity * a, task.mean) + certain
    laplace = _Laplace(task, a, multiplicity, certain, mu)
    i1, variance = _reciprocal_moments(laplace, 1.0 / mu)
    return (1.0 + i1) / mu, max(variance, 0.0) / (mu * mu)


def harmonic_mean_moments(
    num_candidates: IntArray, weights: FloatArray | None = None
) -> tuple[float, float]:
    r"""Return the null expectation and variance of the harmonic mean rank.

    .. math::

        \mathrm{HMR} = \frac{1}{X}, \qquad X = \sum_{i=1}^{n} \frac{a_i}{r_i}, \qquad
        a_i = \frac{w_i}{\sum_j w_j}, \qquad r_i \sim \mathcal{U}\{1, \dots, C_i\}

    Parameters
    ----------
    num_candidates : numpy.ndarray of shape (n,)
        The number of candidates :math:`C_i \ge 1` of each ranking task (int64).
    weights : numpy.ndarray of shape (n,), optional
        Non-negative scaling factors :math:`w_i` with a positive sum (float64); ``None`` means
        equal weights. A task of weight zero is the same as no task.

    Returns
    -------
    expectation : float
        :math:`\mathbb{E}[1/X]`.
    variance : float
        :math:`\mathbb{V}[1/X]`.

    Notes
    -----
    :math:`X` is the mean reciprocal rank, with :math:`\mu = \sum_i a_i h_{C_i}` and
    :math:`h_C = H_C / C = \mathbb{E}[1/r]`. The moments of :math:`1/X` follow from the centred
    transform of :math:`X` by the same centred quadrature as in
    :func:`inverse_arithmetic_mean_moments` (see there); only the per-task transform differs,

    .. math::

        K_C(s) = \log \mathbb{E}\bigl[e^{-s (1/r - h_C)}\bigr]
               = \log \frac{1}{C} \sum_{j=1}^{C} e^{-s (1/j - h_C)} \ge 0,

    which has no closed form. It is evaluated with :math:`O(1)` memory per :math:`(C, s)`, to a
    relative precision of about 1e-14 whatever :math:`C` and :math:`s`:

    * :math:`s \le 1`: the power series :math:`K_C(s) = \sum_{m=2}^{24} \lambda_m s^m`, the
      logarithm of the moment series :math:`\sum_m \mu_m (-s)^m / m!` in the central moments
      :math:`\mu_m = \mathbb{E}[(1/r - h_C)^m]` (direct sums for :math:`C \le 256`; otherwise
      from :math:`H_k(C) = \zeta(k) - \zeta(k, C + 1)`, Hurwitz zeta, whose binomial sums do
      not cancel because :math:`h_C < 0.025`). Its radius exceeds 1.2 for every :math:`C`
      (:math:`\pi` at least, by the range of :math:`1/r`, for the moment series), and it is
      summed through power sums over the tasks, as for the inverse arithmetic mean rank.
    * :math:`C \le 256`, :math:`s > 1`: direct sums; for :math:`s \le 2` in centred form,
      :math:`K = \operatorname{log1p}\bigl(\frac1C \sum_j (e^{x_j} - 1 - x_j)\bigr)` with
      :math:`x_j = -s (1/j - h_C)` (non-negative terms, each to full relative precision);
      above, as in the next item.
    * :math:`C > 256`: for :math:`s \le 2` the moment series itself,
      :math:`K = \operatorname{log1p}(\sum_{m=2}^{24} \mu_m (-s)^m / m!)` (truncation below
      :math:`2^{25}/25! \approx 2 \times 10^{-18}` relative); above, with every term scaled by the
      last one, :math:`\hat S = \sum_{j=1}^{C} e^{-s(1/j - 1/C)} \in [1, C]` and
      :math:`K = \log(\hat S / C) + s (H_C - 1)/C`. The terms :math:`j < J =
      \max(24, \lceil 2 \sqrt{s} \rceil)` are summed directly (skipping those below
      :math:`e^{-40} / C`), the rest by Euler-Maclaurin with the Bernoulli terms
      :math:`B_2, \dots, B_{12}`, using :math:`\int e^{-s/x} dx = x e^{-s/x} G(s/x)`,
      :math:`G(y) = 1 - y e^y E_1(y)`, and
      :math:`\frac{d^k}{dx^k} e^{-s/x} = e^{-s/x} x^{-k} P_k(s/x)`,
      :math:`P_{k+1}(y) = (y - k) P_k(y) - y P_k'(y)`. For :math:`x \ge J` the summand is
      analytic in a disc of radius :math:`x` and its local exponential rate :math:`s/x^2` is at
      most :math:`1/4`, so the remainder is below about :math:`12!/(2\pi \cdot 24)^{12}` and
      :math:`(1/(8\pi))^{12}`, i.e. 1e-17 relative. When :math:`J > C/2`, only the last
      :math:`O(C^2 / s)` terms matter and are summed directly. While :math:`\hat S / C` is close
      to one (:math:`s (H_C - 1) / C \le 1`), the complement
      :math:`C - \hat S = \sum_j (1 - e^{-s(1/j - 1/C)})` is summed instead, in the same way
      (its integral from :math:`\hat G(y) = 1 - e^{-y} + y E_1(y)`), and
      :math:`K = \operatorname{log1p}(-(C - \hat S)/C) + s (H_C - 1)/C`.

    Measured against direct sums in 64-bit-mantissa arithmetic (:math:`C \le 10^6`), 40-digit
    ``mpmath`` Euler-Maclaurin sums (:math:`C = 10^9, 10^{12}`) and a start of the
    Euler-Maclaurin range anywhere from 12 to 128, the relative error of :math:`K_C(s)` stays
    below 1e-14 for :math:`s` from 1e-2 to :math:`40 C^2`; the moments agree with exact
    enumeration to about 1e-16 (expectation) and 1e-15 (variance), and with 40-digit ``mpmath``
    quadrature at :math:`n = 300` and :math:`C` up to 5000 likewise. :math:`n = 10^5` tasks with
    1000 distinct :math:`C` up to :math:`10^6` take a few tens of milliseconds.

    *Many distinct weights.* Evaluated pair by pair, the cost grows with the number of distinct
    :math:`(C_i, w_i)` whose argument leaves the series range (10 to 20 s for :math:`10^5`
    distinct weights and :math:`C` up to :math:`10^9`). With many distinct pairs the sums over
    the tasks are instead taken through tables (:mod:`rankstats.null.lattice`): the quadrature's
    nodes lie on a lattice :math:`\log u = N h`, :math:`h = 0.05`, so
    :math:`\log(a_i t) = (N + q_i + \delta_i) h` with an integer :math:`q_i` and an offset
    :math:`\delta_i \in [0, 1)` fixed per task; :math:`K_C(s) / s^2` and :math:`\ell_C(s) / s`
    are tabulated once per distinct count on the lattice and interpolated through 16 lattice
    points, with Lagrange weights that depend on :math:`\delta_i` only, so they are folded over
    the tasks once, and each node costs one short correlation per table. Distinct counts from 64
    up are folded into Chebyshev counts of intervals of :math:`\log C` (degree 16, width 1/2;
    :mod:`rankstats.null.interpolation`) whatever the weights, so there are a few hundred tables
    even for :math:`10^6` distinct counts. Both interpolations reproduce :math:`K_C` to its own
    rounding (measured: 1e-15 to 9e-15 relative for :math:`C` from 2 to :math:`10^9` and
    :math:`s` from 1e-3 to :math:`50 C^2`; the stencil error falls about 60-fold per two points
    and is about 1e-18 at 16). The summed transforms agree with every pair's transform summed
    directly to 3e-15, and the moments with exact enumeration and 30-digit ``mpmath``
    quadrature, with a distinct weight per task or :math:`10^5` tasks, to about 1e-15; with the
    pair-by-pair sums to 1e-15 (expectation) and up to 1e-13 (variance, at :math:`n = 10^5`:
    the bucketed power sums carry a systematic 5e-15 there, and the variance of a concentrated
    :math:`X` amplifies the transforms' errors up to sixfold; see
    ``tests/test_reciprocal_lattice.py``). Measured with weights :math:`\sim U(0.5, 2)` on an
    idle machine: :math:`n = 10^5` in 0.06 to 0.2 s, :math:`n = 10^6` in 0.8 to 2 s (a third of
    it grouping the pairs), whether there are 5 distinct counts or :math:`10^6` up to
    :math:`10^{15}`; peak memory about 200 bytes per task, independent of :math:`C`.

    The second-order delta method, :math:`\mathbb{E} \approx (1 + \sigma^2/\mu^2)/\mu`, needs
    :math:`n \gg C / \log C` here, because :math:`1/r` is heavily skewed: at :math:`n = 10^4`
    and :math:`C = 10^6` it is off by tens of percent.

    Examples
    --------
    >>> mean, variance = harmonic_mean_moments(np.array([1, 2, 3, 5]))
    >>> round(mean, 12), round(variance, 12)
    (1.460456193519, 0.060778055652)

    One task: :math:`\mathrm{HMR} = r`, so :math:`\mathbb{E} = (C + 1)/2` and
    :math:`\mathbb{V} = (C^2 - 1)/12`.

    >>> mean, variance = harmonic_mean_moments(np.array([10**6]))
    >>> round(mean, 6), round(variance / 1e10, 9)
    (500000.5, 8.333333333)
    """
    return harmonic_mean_moments_of(Tasks(num_candidates, weights))


def harmonic_mean_moments_of(tasks: Tasks) -> tuple[float, float]:
    """:func:`harmonic_mean_moments` of tasks given as rows with multiplicities."""
    pairs = _spread_pairs(tasks)
    if pairs is None:
        return 1.0, 0.0
    certain = pairs.certain
    c, a, multiplicity = pairs.spread
    x_min = pairwise_dot(multiplicity * a, 1.0 / c.astype(np.float64)) + certain
    c, a, multiplicity = pairs.folded
    task = _HarmonicTask(c)
    # the mean from the same pairs as the transform: the centring needs them to agree exactly
    mu = pairwise_dot(multiplicity * a, task.mean) + certain
    laplace = _Laplace(task, a, multiplicity, certain, mu)
    i1, variance = _reciprocal_moments(laplace, x_min / mu)
    return (1.0 + i1) / mu, max(variance, 0.0) / (mu * mu)
