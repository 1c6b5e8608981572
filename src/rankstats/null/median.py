r"""Exact null distribution of the median rank and of its inverse.

Under the null each rank :math:`r_i` is uniform on :math:`\{1, \dots, C_i\}`, independently for
:math:`i = 1, \dots, n`. This module gives the moments of :func:`numpy.median` of the ranks,

.. math::

    M = \begin{cases} X_{(m)}, & n = 2m - 1, \\
                      \tfrac12 (X_{(a)} + X_{(a+1)}), & n = 2a, \end{cases}

(:math:`X_{(k)}` the :math:`k`-th smallest rank) and of :math:`1 / M`, together with the tail and
the probability mass function of any order statistic :math:`X_{(k)}`.

Everything rests on the count :math:`N_x = \#\{i : r_i \le x\}`, a Poisson-binomial variable with
success probabilities :math:`p_i(x) = \min(1, x / C_i)`, and on the identities
:math:`P(X_{(k)} > x) = P(N_x \le k - 1)` and, for the two middle order statistics,
:math:`X_{(a)} \le x < X_{(a+1)} \iff N_x = a`. The work is confined to the window of :math:`x`
where these tails are neither 0 nor 1 to :math:`10^{-24}`; its cost does not depend on
:math:`\max_i C_i`.
"""

from __future__ import annotations

import math
from collections.abc import Sequence

import numpy as np

from rankstats.arrays import FloatArray, IntArray
from rankstats.null.median_gap import gap_sums

__all__ = [
    "inverse_median_moments",
    "median_moments",
    "order_statistic_pmf",
    "order_statistic_sf",
]


#: tails below this are dropped: they bound the window of x that is evaluated
_LOG_EPS = math.log(1e-24)
#: nodes of the discrete Gauss rule on one panel (exact for polynomials of degree < 32)
_NU = 16
#: panels of at most this many integers are summed point by point
_ENUM = 32
#: the window is cut into at least this many panels, each then well inside one standard deviation
_N_SUB = 48
#: the sums of the gap terms over x use at least this many panels
_N_SUB_GAP = 16
#: tests may force an order of the gap sums ("a", "b" or "c"); None chooses
_FORCE_ORDER: str | None = None
#: integer nodes per panel of the outer rule of order (b)
_NU_OUTER = 32
#: up to this many tasks the gap sums use order (b), exact for the polynomial pieces
_SMALL_N = 24
#: nodes of the Gauss-Meixner rule for the sums of the gap terms over t
_NU_MEIXNER = 24
#: powers of two from this value on are panel boundaries, so that 1/x weights stay smooth
_LADDER_START = 32
#: nodes evaluated together (bounds the memory of the Fourier arrays)
_CHUNK = 2048
#: the exact dynamic programme is used up to this many uncertain tasks ...
_DP_MAX_ITEMS = 1500
#: ... and this much work per node (tasks times counts kept)
_DP_MAX_WORK = 40_000
#: breakpoints of the gap sums are honoured if there are at most this many, for fewer tasks than
#: _GAP_BREAKS_N (and always if there are at most _NU)
_GAP_MAX_BREAKS = 256
_GAP_BREAKS_N = 2000
#: the Gauss-Meixner rule is used from this many tasks on even where t reaches max C
_MEIXNER_MIN_N = 1000
#: the gap sums over t are done point by point while (t values) * (x nodes) stays below this
_T_ENUM_BUDGET = 60_000
#: tasks with a candidate count below one of these multiples of the shift t are handled one by
#: one, the first multiple for which the series in t / C needs at most _MAX_SERIES_TERMS terms
_SERIES_RATIOS = (4.0, 8.0, 16.0, 66.0)
_MAX_SERIES_TERMS = 48
#: bound on |q w| in the power series of log(1 + q w)
_RHO = 0.8


def _suffix_sum(values: FloatArray) -> FloatArray:
    """Return ``out`` with ``out[i] = values[i:].sum()`` and ``out[-1] = 0``, compensated.

    The running sums are corrected by their exact rounding errors (Knuth's TwoSum), so each
    suffix sum is accurate to a few units in the last place whatever the length.
    """
    rev = values[::-1]
    run = np.cumsum(rev)
    prev = np.zeros_like(run)
    prev[1:] = run[:-1]
    part = run - prev
    err = (prev - (run - part)) + (rev - part)
    run += np.cumsum(err)
    out = np.zeros(values.size + 1)
    out[:-1] = run[::-1]
    return out


def _prefix_sum(values: FloatArray) -> FloatArray:
    """Return ``out`` with ``out[i] = values[:i].sum()``, compensated like :func:`_suffix_sum`."""
    out = _suffix_sum(values[::-1].copy())[::-1]
    return np.ascontiguousarray(out)


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


_GRAM_CACHE: dict[tuple[int, int], tuple[FloatArray, FloatArray]] = {}


def _gram_rules(lengths: IntArray, nu: int = _NU) -> tuple[FloatArray, FloatArray]:
    r"""Discrete Gauss rules for sums over :math:`\{0, \dots, L - 1\}`, one per length.

    The orthogonal polynomials of the uniform measure on :math:`L` consecutive integers (discrete
    Chebyshev or Gram polynomials) obey :math:`p_{k+1} = (x - \tfrac{L-1}{2}) p_k - \beta_k p_{k-1}`
    with :math:`\beta_k = k^2 (L^2 - k^2) / (4 (4k^2 - 1))`; the Golub-Welsch eigen-decomposition
    of the scaled Jacobi matrix gives ``nu`` nodes and weights with
    :math:`\sum_{x=0}^{L-1} f(x) = \sum_j w_j f(x_j)` for every polynomial of degree
    :math:`< 2\nu` (``nu < L``). Nodes are returned as :math:`z_j` with
    :math:`x_j = (L-1)/2 + L z_j`, weights normalised to sum to one. Rules are cached.
    """
    missing = [int(v) for v in np.unique(lengths) if (int(v), nu) not in _GRAM_CACHE]
    if missing:
        if len(_GRAM_CACHE) > 100_000:
            _GRAM_CACHE.clear()
        big = np.array(missing, dtype=np.float64)[:, None]
        k = np.arange(1, nu, dtype=np.float64)[None, :]
        off = np.sqrt(k * k * (1.0 - (k / big) ** 2) / (4.0 * (4.0 * k * k - 1.0)))
        jacobi = np.zeros((len(missing), nu, nu))
        i = np.arange(nu - 1)
        jacobi[:, i, i + 1] = off
        jacobi[:, i + 1, i] = off
        nodes, vectors = np.linalg.eigh(jacobi)
        for j, length in enumerate(missing):
            _GRAM_CACHE[(length, nu)] = (nodes[j], vectors[j, 0, :] ** 2)
    z = np.array([_GRAM_CACHE[(int(v), nu)][0] for v in lengths]).reshape(lengths.size, nu)
    w = np.array([_GRAM_CACHE[(int(v), nu)][1] for v in lengths]).reshape(lengths.size, nu)
    return z, w


def _pieces(lo: int, hi: int, breaks: IntArray, max_piece: int) -> tuple[IntArray, IntArray]:
    """Starts and lengths of the pieces of ``lo..hi``, cut at ``breaks`` and to ``max_piece``."""
    if hi < lo:
        return np.zeros(0, dtype=np.int64), np.zeros(0, dtype=np.int64)
    inner = breaks[(breaks > lo) & (breaks <= hi)]
    edges = np.unique(np.concatenate((np.array([lo, hi + 1], dtype=np.int64), inner)))
    starts = edges[:-1]
    lengths = np.diff(edges)
    pieces = -(-lengths // max(max_piece, 1))
    base = lengths // pieces
    extra = lengths % pieces
    owner = np.repeat(np.arange(lengths.size), pieces)
    j = np.arange(owner.size) - np.repeat(np.cumsum(pieces) - pieces, pieces)
    p_len = base[owner] + (j < extra[owner])
    p_start = starts[owner] + j * base[owner] + np.minimum(j, extra[owner])
    return p_start.astype(np.int64), p_len.astype(np.int64)


def _nodes_per_piece(lengths: IntArray, scale: float | None) -> IntArray:
    r"""Gauss nodes for pieces of a function smooth on the length ``scale``.

    ``_NU`` without a scale; else the fewest :math:`\nu \ge 3` with
    :math:`(L / 2 \text{scale})^{2\nu} \le 10^{-14}`, the size of the error of a rule exact to
    degree :math:`2\nu - 1` on such a function.
    """
    if scale is None:
        return np.full(lengths.size, _NU, dtype=np.int64)
    ratio = np.minimum(lengths / (2.0 * scale), 0.5)
    nu = np.ceil(-7.0 / np.log10(ratio))
    return np.clip(nu, 3, _NU).astype(np.int64)


def _piece_nodes(
    starts: IntArray, lengths: IntArray, scale: float | None = None
) -> tuple[FloatArray, FloatArray, IntArray]:
    r"""Nodes, weights and owning piece for :math:`\sum_{x \in \text{piece}} f(x)`.

    Pieces of at most twice their node count (``_ENUM`` without a ``scale``) are summed point by
    point; longer ones use the discrete Gauss rule of :func:`_gram_rules` with
    :func:`_nodes_per_piece` nodes, exact when ``f`` is a polynomial of degree below twice that
    on the piece and spectrally convergent for smooth ``f``.
    """
    nus = _nodes_per_piece(lengths, scale)
    small = lengths <= 2 * nus
    s_len = lengths[small]
    total = int(s_len.sum())
    offsets = np.arange(total) - np.repeat(np.cumsum(s_len) - s_len, s_len)
    x_parts = [(np.repeat(starts[small], s_len) + offsets).astype(np.float64)]
    w_parts = [np.ones(total)]
    o_parts = [np.repeat(np.flatnonzero(small), s_len)]
    for nu in np.unique(nus[~small]).tolist():
        big = np.flatnonzero(~small & (nus == nu))
        g_len = lengths[big]
        z, weight = _gram_rules(g_len, nu)
        length = g_len.astype(np.float64)[:, None]
        start = starts[big].astype(np.float64)[:, None]
        x_parts.append((start + (length - 1.0) / 2.0 + length * z).ravel())
        w_parts.append((length * weight).ravel())
        o_parts.append(np.repeat(big, nu))
    return np.concatenate(x_parts), np.concatenate(w_parts), np.concatenate(o_parts)


def _panel_nodes(
    lo: int, hi: int, breaks: IntArray, max_piece: int, scale: float | None = None
) -> tuple[FloatArray, FloatArray]:
    r"""Nodes and weights with :math:`\sum_{x=lo}^{hi} f(x) \approx \sum_j w_j f(x_j)`.

    The integers ``lo..hi`` are cut at every ``breaks`` value (a panel starts there) and into
    pieces of at most ``max_piece`` integers, then summed by :func:`_piece_nodes`.
    """
    x, w, _ = _piece_nodes(*_pieces(lo, hi, breaks, max_piece), scale)
    return x, w


def _meixner_rule(rate: float, nu: int) -> tuple[FloatArray, FloatArray]:
    r"""Discrete Gauss rule for :math:`\sum_{u \ge 0} c^u f(u)`, :math:`c = e^{-\lambda}`.

    Built from the monic Meixner polynomials (:math:`\beta = 1`), whose recurrence has
    :math:`\alpha_k = (k + (k + 1)c) / (1 - c)` and :math:`\beta_k = k^2 c / (1 - c)^2`; exact
    for polynomials :math:`f` of degree below :math:`2\nu`. The weights returned already carry
    the factor :math:`c^{-u}`, so that :math:`\sum_{u \ge 0} g(u) \approx \sum_j w_j g(u_j)`
    for :math:`g(u) = c^u f(u)`.
    """
    c = math.exp(-rate)
    one_minus = -math.expm1(-rate)
    k = np.arange(nu, dtype=np.float64)
    off = np.sqrt(k[1:] ** 2 * c)
    jacobi = np.diag(k + (k + 1.0) * c) + np.diag(off, 1) + np.diag(off, -1)
    nodes, vectors = np.linalg.eigh(jacobi)
    nodes = nodes / one_minus
    with np.errstate(divide="ignore"):
        log_w = 2.0 * np.log(np.abs(vectors[0])) - math.log(one_minus) + rate * nodes
    return nodes, np.exp(log_w)


def _ladder(hi: int) -> IntArray:
    """Powers of four from ``_LADDER_START`` up to ``hi``: panels on which ``1/x`` is smooth."""
    out = []
    value = _LADDER_START
    while value <= hi:
        out.append(value)
        value *= 4
    return np.array(out, dtype=np.int64)


def _integer_rule(lo: int, hi: int, nu: int) -> tuple[FloatArray, FloatArray]:
    r"""Interpolatory rule on integer nodes for :math:`\sum_{x=lo}^{hi} f(x)`.

    The ``nu`` nodes are the integers nearest to Chebyshev points of ``[lo, hi]``, pushed apart
    where they collide; the weights make the rule exact for every polynomial of degree below
    ``nu`` (the discrete moments of the Chebyshev basis come from :func:`_gram_rules`, exact up
    to degree 31). Ranges of at most ``2 nu`` integers are enumerated. Unlike
    :func:`_panel_nodes`, the nodes are integers, for functions known only there.
    """
    length = hi - lo + 1
    if length <= 2 * nu:
        return np.arange(lo, hi + 1, dtype=np.float64), np.ones(length)
    z = -np.cos(np.pi * (2.0 * np.arange(nu) + 1.0) / (2.0 * nu))
    nodes = np.rint((length - 1) * (1.0 + z) / 2.0)
    for i in range(1, nu):
        nodes[i] = max(nodes[i], nodes[i - 1] + 1.0)
    nodes[-1] = min(nodes[-1], length - 1.0)
    for i in range(nu - 2, -1, -1):
        nodes[i] = min(nodes[i], nodes[i + 1] - 1.0)
    g_z, g_w = _gram_rules(np.array([length], dtype=np.int64), _NU)
    g_x = (length - 1) / 2.0 + length * g_z[0]
    cheb = np.polynomial.chebyshev.chebvander
    moments = length * (g_w[0] @ cheb(2.0 * g_x / (length - 1) - 1.0, nu - 1))
    vander = cheb(2.0 * nodes / (length - 1) - 1.0, nu - 1)
    return lo + nodes, np.linalg.solve(vander.T, moments)


class _Candidates:
    """Distinct candidate counts with multiplicities, and suffix sums of their reciprocals."""

    def __init__(self, num_candidates: IntArray) -> None:
        distinct, counts = np.unique(num_candidates, return_counts=True)
        self.distinct: IntArray = distinct.astype(np.int64)
        self.values: FloatArray = distinct.astype(np.float64)
        self.counts: FloatArray = counts.astype(np.float64)
        below = np.zeros(distinct.size + 1, dtype=np.int64)
        np.cumsum(counts, out=below[1:])
        self.below: IntArray = below
        self.inv1: FloatArray = _suffix_sum(self.counts / self.values)
        self.inv2: FloatArray = _suffix_sum(self.counts / (self.values * self.values))
        self.n = int(num_candidates.size)
        self.c_max = int(distinct[-1])

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
        valid even where the bound itself is not monotone.
        """
        lo, hi = 0, self.c_max
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
        self._suffix: list[FloatArray] = []
        self._far: list[float] = []

    def query(self, y: FloatArray, ncols: int) -> FloatArray:
        r"""Return :math:`\sum_{c_j > y} m_j (\xi / c_j)^s` for :math:`s = 1..ncols`."""
        while len(self._suffix) < ncols:
            self._power = self._power * self._ratio
            self._suffix.append(_suffix_sum(self._power))
            self._far_power = self._far_power * self._far_ratio
            self._far.append(float(np.sum(self._far_power)))
        idx = np.searchsorted(self.v, y, side="right")
        out = np.empty((y.size, ncols))
        for s in range(ncols):
            out[:, s] = self._suffix[s][idx] + self._far[s]
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
            for c0 in range(b0, b1, _CHUNK):
                c1 = min(c0 + _CHUNK, b1)
                part, part_t, rows = xs[c0:c1], ts[c0:c1], order[c0:c1]
                res = self._dp(part, part_t, cdf_at, pmf_at)
                if res is None:
                    res = self._cf(part, part_t, cdf_at, pmf_at, int(bucket[c0]))
                lower[rows], upper[rows], pmf[rows], log_factor[rows] = res
        return lower, upper, pmf, log_factor

    # ------------------------------------------------------------------ dynamic programme
    def _dp(
        self, x: FloatArray, t: FloatArray, cdf_at: Sequence[int], pmf_at: Sequence[int]
    ) -> tuple[FloatArray, FloatArray, FloatArray, FloatArray] | None:
        """Exact convolution over the uncertain tasks if that is cheap, else ``None``."""
        cands = self.cands
        i0 = int(cands.index_above(float((x + t).min())))
        certain = int(cands.below[i0])
        n_items = cands.n - certain
        top = max([*cdf_at, *pmf_at]) - certain
        if n_items > _DP_MAX_ITEMS or n_items * (max(top, 0) + 1) > _DP_MAX_WORK:
            return None
        low = np.zeros((x.size, len(cdf_at)))
        up = np.ones((x.size, len(cdf_at)))
        pmf = np.zeros((x.size, len(pmf_at)))
        xx, tt = x[:, None], t[:, None]
        if top >= 0:
            items = np.repeat(cands.values[i0:], cands.counts[i0:].astype(np.int64))[None, :]
            room = items - tt
            q = np.where(room > xx, xx / np.where(room > xx, room, 1.0), 1.0)
            # counts 0..top, and a last cell that collects every count above top
            dist = np.zeros((x.size, top + 2))
            dist[:, 0] = 1.0
            for i in range(q.shape[1]):
                qi = q[:, i]
                dist[:, -1] += dist[:, -2] * qi
                dist[:, 1:-1] = dist[:, 1:-1] * (1.0 - qi[:, None]) + dist[:, :-2] * qi[:, None]
                dist[:, 0] *= 1.0 - qi
            cum_low = np.cumsum(dist, axis=1)
            cum_up = np.cumsum(dist[:, ::-1], axis=1)[:, ::-1]
            for j, m in enumerate(cdf_at):
                if m >= certain:
                    low[:, j] = cum_low[:, m - certain]
                    up[:, j] = cum_up[:, m - certain + 1]
            for j, a in enumerate(pmf_at):
                if a >= certain:
                    pmf[:, j] = dist[:, a - certain]
        log_factor = np.zeros(x.size)
        if np.any(t > 0):
            i1 = int(cands.index_above(float(x.min())))
            items = np.repeat(cands.values[i1:], cands.counts[i1:].astype(np.int64))[None, :]
            term = np.log(np.maximum(items - tt, xx) / items)
            log_factor = np.where(items > xx, term, 0.0).sum(axis=1)
        return low, up, pmf, log_factor

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
        mult, q = self._gather(table, x, t, xt, y1)
        p1 = sums[:, 0] + (mult * q).sum(axis=1)
        var = np.maximum(sums[:, 0] - sums[:, 1], 0.0) + (mult * q * (1.0 - q)).sum(axis=1)
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
        p1_max = float(p1[active].max()) + 1.0
        degree = math.ceil(math.log(1e-21 * (1.0 - rho) / (p1_max * w_abs)) / math.log(rho))
        degree = min(max(degree, 2), 400)
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
        mult_h, q_h = self._gather(table, xa, ta, xta, y_high)
        high = self._complement_sums(mult_h, q_h, degree, w_abs)
        w_re = -2.0 * half_sin**2
        w_im = np.sin(theta)
        pw_re = np.empty((degree, count))
        pw_im = np.empty((degree, count))
        pw_re[0], pw_im[0] = w_re, _sin_minus_identity(np.asarray(theta, dtype=np.float64))
        cur_re, cur_im = w_re.copy(), w_im.copy()
        for s in range(2, degree + 1):
            cur_re, cur_im = cur_re * w_re - cur_im * w_im, cur_re * w_im + cur_im * w_re
            sign = 1.0 if s % 2 else -1.0
            pw_re[s - 1] = sign * cur_re / s
            pw_im[s - 1] = sign * cur_im / s
        # einsum rather than BLAS: these products are small, and threaded BLAS stalls on them
        re = np.einsum("ns,sj->nj", sums_low + high, pw_re)
        im = np.einsum("ns,sj->nj", sums_low - high, pw_im)
        mult_m, q_m = self._gather(table, xa, ta, y_high, y_low)
        if q_m.shape[1]:
            m_re, m_im = self._middle_terms(mult_m, q_m, np.asarray(theta, dtype=np.float64))
            re += m_re
            im += m_im
        amp = np.exp(re)
        centre = (
            certain[active]
            + sums_low[:, 0]
            + (mult_h * q_h).sum(axis=1)
            + (mult_m * q_m).sum(axis=1)
        )
        scale = 2.0 / period
        inv_sin = 1.0 / (2.0 * half_sin)
        rows = np.flatnonzero(active)
        for j, m in enumerate(cdf_at):
            delta = centre - (m + 0.5)
            terms_j = amp * np.sin(im + delta[:, None] * theta[None, :])
            val = scale * np.einsum("nj,j->n", terms_j, inv_sin)
            low[rows, j] = np.clip(0.5 - val, 0.0, 1.0)
            up[rows, j] = np.clip(0.5 + val, 0.0, 1.0)
        for j, a in enumerate(pmf_at):
            delta = centre - a
            val = scale * (amp * np.cos(im + delta[:, None] * theta[None, :])).sum(axis=1)
            pmf[rows, j] = np.maximum(val, 0.0)
        return low, up, pmf, log_factor

    @staticmethod
    def _gather(
        table: _PowerTable, x: FloatArray, t: FloatArray, lo: FloatArray, hi: FloatArray
    ) -> tuple[FloatArray, FloatArray]:
        r"""Multiplicities and :math:`q = x / (C - t)` of the tasks with :math:`lo < C \le hi`.

        One row per node, padded with zero multiplicities (and :math:`q = 0`).
        """
        ia = table.index(lo)
        ib = table.index(hi)
        width = max(int((ib - ia).max()), 0) if x.size else 0
        if width == 0:
            return np.zeros((x.size, 0)), np.zeros((x.size, 0))
        idx = ia[:, None] + np.arange(width)[None, :]
        mask = idx < ib[:, None]
        idx = np.minimum(idx, table.v.size - 1)
        mult = np.where(mask, table.m[idx], 0.0)
        room = np.where(mask, table.v[idx] - t[:, None], 1.0)
        q = np.where(mask, x[:, None] / room, 0.0)
        return mult, q

    @staticmethod
    def _complement_sums(mult: FloatArray, q: FloatArray, degree: int, w_abs: float) -> FloatArray:
        r"""Return :math:`\sum m (1 - q)^s` for :math:`s = 1..degree` (zero rows if no task).

        Powers whose contribution :math:`\sum m ((1 - q)|w|)^s / s` stays below 1e-21 for every
        task are left at zero.
        """
        out = np.zeros((q.shape[0], degree))
        if q.shape[1] == 0:
            return out
        base = np.where(mult > 0, 1.0 - q, 0.0)
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
        step = max(1, 2_000_000 // (q.shape[1] * theta.size))
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
            step = max(1, 4_000_000 // width)
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


def _second_difference_inverse_square(s: FloatArray, c0: float) -> FloatArray:
    r"""Second difference of :math:`f(s) = (2/s - 1/c_0)^2`, without cancellation.

    With :math:`u_s = 2/s - 1/c_0` and :math:`d_s = u_{s+1} - u_s = -2/(s(s+1))`,
    :math:`\Delta^2 f(s) = 8 u_{s+1} / (s(s+1)(s+2)) + d_{s+1}^2 + d_s^2`.
    """
    u1 = (2.0 * c0 - s - 1.0) / ((s + 1.0) * c0)
    d0 = -2.0 / (s * (s + 1.0))
    d1 = -2.0 / ((s + 1.0) * (s + 2.0))
    return np.asarray(8.0 * u1 / (s * (s + 1.0) * (s + 2.0)) + d1 * d1 + d0 * d0)


class _GapSums:
    r"""Sums of :math:`H(x, t) = P(N_x = a, N_{x+t} = a)` over :math:`t \ge 1` and :math:`x`.

    :math:`H(x, t) \le P(N_x = a)\, e^{-\lambda t}` with :math:`\lambda` the sum of
    :math:`1 / (C - lo)` over the :math:`n - a` largest counts: given :math:`N_x = a` the
    :math:`n - a` tasks above :math:`x` each avoid :math:`(x, x + t]` with probability at most
    :math:`1 - t / (C_i - x)`. The sum over :math:`t` stops where this bound is below
    :math:`e^{-45}`.
    """

    def __init__(self, cands: _Candidates, lo: int, hi: int, a: int, c0: int) -> None:
        self.cands = cands
        self.lo = lo
        self.hi = hi
        self.a = a
        self.c0 = c0
        self.t_max = 0
        self.rate = float(cands.inv1[int(cands.index_above(float(c0)))])
        i_lo = int(cands.index_above(float(lo)))
        values = cands.values[i_lo:][::-1]
        counts = cands.counts[i_lo:][::-1]
        need = cands.n - a
        total = np.cumsum(counts)
        if total.size == 0 or total[-1] < need:
            return
        j = int(np.searchsorted(total, need))
        before = float(total[j - 1]) if j > 0 else 0.0
        lam = float((counts[:j] / (values[:j] - lo)).sum()) + (need - before) / (values[j] - lo)
        bound = math.ceil((45.0 + math.log1p(lam)) / lam)
        self.t_max = int(min(cands.c_max - 1 - lo, bound))

    def _piece(self) -> int:
        r"""Longest panel in t over which :math:`e^{-2\lambda t}` varies by at most e^12."""
        return max(_ENUM, math.ceil(6.0 / self.rate)) if self.rate > 0 else self.t_max

    def sums(self, evaluator: _Evaluator, budget: int) -> tuple[float, float, float]:
        r"""Return :math:`\sum H`, :math:`\sum H\,4/(s(s+1)(s+2))`, :math:`\sum H \Delta^2 f(s)`.

        Here :math:`s = 2x + t` and :math:`f(s) = (2/s - 1/c_0)^2`. Three orders of work:

        (a) every integer :math:`t`, with :math:`x` on panels cut where a task enters the band
            (:math:`x = C - t`) or becomes certain (:math:`x = C`), where :math:`H(\cdot, t)` is
            a polynomial;
        (b) :math:`x` on integer interpolatory panels cut at the counts (where
            :math:`U(x) = \sum_{y > x} H(x, y - x)` is a polynomial on the integers), with
            :math:`y = x + t` on panels cut at the counts (where :math:`H(x, y - x)` is a
            polynomial in :math:`y`);
        (c) as (a), with a Gauss-Meixner rule (weight :math:`e^{-\lambda t}`) or discrete Gauss
            panels in :math:`t`, which relies on :math:`H` being smooth in :math:`t`.

        (a) and (b) are exact for polynomial pieces of low degree (small :math:`n`) and
        spectrally accurate otherwise; the cheaper of them is used if it fits the budget, else
        (b) for :math:`n \le 24` and (c) beyond.
        """
        if self.t_max < 1:
            return 0.0, 0.0, 0.0
        cands = self.cands
        small = cands.n <= _SMALL_N
        mid_t = np.array([float((self.t_max + 1) // 2)])
        cost_a = self.t_max * self._nodes_by_t(mid_t, np.ones(1))[0].size
        edges = self._outer_edges(small)
        lengths = np.diff(edges)
        n_outer = int(np.where(lengths <= 2 * _NU_OUTER, lengths, _NU_OUTER).sum())
        middle = np.array([float(edges[0] + (edges[-1] - edges[0]) // 2)]) if edges.size else None
        n_inner = 0 if middle is None else self._nodes_by_x(middle, np.ones(1), small)[0].size
        cost_b = n_outer * n_inner
        order = _FORCE_ORDER
        if order is None and (min(cost_a, cost_b) <= budget or small):
            order = "b" if cost_b < cost_a or (small and cost_a > budget) else "a"
        if order in ("a", "b"):
            if order == "b":
                outer, outer_w = self._outer_x(edges)
                x, t, w = self._nodes_by_x(outer, outer_w, small)
            else:
                x, t, w = self._nodes_by_t(np.arange(1, self.t_max + 1.0), np.ones(self.t_max))
        else:
            t_nodes, t_weights = _meixner_rule(self.rate, _NU_MEIXNER)
            t_nodes += 1.0
            if self.rate <= 0 or (
                t_nodes[-1] >= cands.c_max - 1 - self.hi and cands.n < _MEIXNER_MIN_N
            ):
                starts, lengths = _pieces(1, self.t_max, np.zeros(0, dtype=np.int64), self._piece())
                rules = [
                    _integer_rule(int(a), int(a + b - 1), _NU_OUTER)
                    for a, b in zip(starts.tolist(), lengths.tolist(), strict=False)
                ]
                t_nodes = np.concatenate([r[0] for r in rules])
                t_weights = np.concatenate([r[1] for r in rules])
            x, t, w = self._nodes_by_t(t_nodes, t_weights)
        _, _, mass, log_factor = evaluator.evaluate(x, t, [], [self.a])
        h = np.exp(log_factor) * mass[:, 0] * w
        s = 2.0 * x + t
        g0 = float(h.sum())
        g1 = float(h @ (4.0 / (s * (s + 1.0) * (s + 2.0))))
        g2 = float(h @ _second_difference_inverse_square(s, float(self.c0)))
        return g0, g1, g2

    def _nodes_by_t(
        self, t_nodes: FloatArray, t_weights: FloatArray
    ) -> tuple[FloatArray, FloatArray, FloatArray]:
        """For each ``t`` node, ``x`` panels over the window (orders (a) and (c))."""
        cands = self.cands
        lo, hi = self.lo, self.hi
        in_window = cands.distinct[(cands.distinct > lo) & (cands.distinct <= hi)]
        # the kinks matter for small n (each task weighs 1/n); beyond that they are left to the
        # smoothness of the rule unless they are few
        use_breaks = in_window.size <= _NU or (
            cands.n < _GAP_BREAKS_N and in_window.size <= _GAP_MAX_BREAKS
        )
        ladder = _ladder(hi)
        # between kinks the gap terms vary on the scale of the window (some 20 deviations wide)
        scale = max((hi - lo + 1) / 20.0, 1.0) if use_breaks else None
        xs, ts, ws = [], [], []
        for t, wt in zip(t_nodes.tolist(), t_weights.tolist(), strict=True):
            top = min(hi, math.ceil(cands.c_max - t) - 1)
            if top < lo:
                continue
            if use_breaks:
                shifted = np.ceil(in_window - t).astype(np.int64)
                breaks = np.concatenate((in_window, shifted, ladder))
            else:
                breaks = ladder
            piece = max(_ENUM, -(-(top - lo + 1) // _N_SUB_GAP))
            xg, wg = _panel_nodes(lo, top, breaks, piece, scale)
            xs.append(xg)
            ts.append(np.full(xg.size, t))
            ws.append(wg * wt)
        return _concat3(xs, ts, ws)

    def _outer_edges(self, small: bool) -> IntArray:
        """Panel edges in ``x`` for order (b): the counts, the counts less ``t_max``, the ladder."""
        cands = self.cands
        lo, hi = self.lo, min(self.hi, cands.c_max - 2)
        if hi < lo:
            return np.zeros(0, dtype=np.int64)
        values = cands.distinct
        breaks = np.concatenate((values, values - self.t_max, _ladder(hi)))
        breaks = np.unique(breaks[(breaks > lo) & (breaks <= hi)])
        edges = np.concatenate(([lo], breaks, [hi + 1])).astype(np.int64)
        if not small:
            starts, _lengths = _pieces(lo, hi, breaks, max(_ENUM, -(-(hi - lo + 1) // _N_SUB_GAP)))
            edges = np.concatenate((starts, [hi + 1])).astype(np.int64)
        return edges

    @staticmethod
    def _outer_x(edges: IntArray) -> tuple[FloatArray, FloatArray]:
        """Integer nodes and weights in ``x`` for order (b), one rule per panel."""
        xs, ws = [], []
        for e0, e1 in zip(edges[:-1].tolist(), edges[1:].tolist(), strict=False):
            xr, wr = _integer_rule(int(e0), int(e1) - 1, _NU_OUTER)
            xs.append(xr)
            ws.append(wr)
        if not xs:
            return np.zeros(0), np.zeros(0)
        return np.concatenate(xs), np.concatenate(ws)

    def _nodes_by_x(
        self, outer: FloatArray, outer_w: FloatArray, small: bool
    ) -> tuple[FloatArray, FloatArray, FloatArray]:
        """For each outer integer ``x``, ``y = x + t`` panels cut at the counts (order (b))."""
        cands = self.cands
        top = min(self.hi + self.t_max, cands.c_max - 1)
        counts = cands.distinct[(cands.distinct > self.lo) & (cands.distinct <= top)]
        breaks = np.concatenate((counts, _ladder(top)))
        starts, lengths, owners = [], [], []
        for j, x in enumerate(outer.tolist()):
            xi = int(x)
            y_hi = min(xi + self.t_max, cands.c_max - 1)
            if y_hi <= xi:
                continue
            st, ln = _pieces(xi + 1, y_hi, breaks, y_hi - xi if small else self._piece())
            starts.append(st)
            lengths.append(ln)
            owners.append(np.full(st.size, j))
        if not starts:
            return np.zeros(0), np.zeros(0), np.zeros(0)
        y, wy, piece = _piece_nodes(np.concatenate(starts), np.concatenate(lengths))
        owner = np.concatenate(owners)[piece]
        x = outer[owner]
        return x, y - x, wy * outer_w[owner]


def _concat3(
    a: list[FloatArray], b: list[FloatArray], c: list[FloatArray]
) -> tuple[FloatArray, FloatArray, FloatArray]:
    if not a:
        return np.zeros(0), np.zeros(0), np.zeros(0)
    return np.concatenate(a), np.concatenate(b), np.concatenate(c)


def _moments(
    num_candidates: IntArray, *, t_budget: int = _T_ENUM_BUDGET
) -> tuple[float, float, float, float]:
    """E and V of the median and of its inverse (see :func:`median_moments`)."""
    cands = _Candidates(num_candidates)
    n = cands.n
    if cands.c_max == 1:
        return 1.0, 0.0, 1.0, 0.0
    ks = [(n + 1) // 2] if n % 2 else [n // 2, n // 2 + 1]
    windows = [cands.window(k) for k in ks]
    lo = max(min(w[0] for w in windows), 1)
    hi = max(min(max(w[1] for w in windows), cands.c_max), lo)
    c0 = cands.centre(lo, hi)
    in_window = cands.distinct[(cands.distinct > lo) & (cands.distinct <= hi)]
    breaks = np.concatenate((in_window, np.array([c0], dtype=np.int64), _ladder(hi)))
    x, w = _panel_nodes(lo, hi, breaks, max(_ENUM, -(-(hi - lo + 1) // _N_SUB)))
    a = ks[0]
    gap = _GapSums(cands, lo, hi, a, c0) if n % 2 == 0 else None
    evaluator = _Evaluator(cands, float(lo), float(hi), 0.0 if gap is None else float(gap.t_max))
    lower, upper, pmf, _ = evaluator.evaluate(x, 0.0, [a - 1], [] if gap is None else [a])
    # P(X > x) - 1[x < c0], from whichever tail keeps its relative accuracy
    tail = np.where(x < c0, -upper[:, 0], lower[:, 0])
    d = x - c0
    s1 = float(w @ tail)
    s2 = float(w @ ((2.0 * d + 1.0) * tail))
    inv_w = 1.0 / (x * (x + 1.0))
    v0 = (c0 - x) / (x * c0)
    v1 = (c0 - x - 1.0) / ((x + 1.0) * c0)
    e_inv = -float(w @ (inv_w * tail))
    m2_inv = -float(w @ (inv_w * (v1 + v0) * tail))
    if gap is None:
        return c0 + s1, s2 - s1 * s1, 1.0 / c0 + e_inv, m2_inv - e_inv * e_inv
    mass = pmf[:, 0]
    shift = s1 + 0.5 * float(w @ mass)
    m2 = s2 + float(w @ (mass * (d + 0.25)))
    e_inv -= float(w @ (mass / (x * (2.0 * x + 1.0))))
    s = 2.0 * x
    u_s = (2.0 * c0 - s) / (s * c0)
    u_s1 = (2.0 * c0 - s - 1.0) / ((s + 1.0) * c0)
    m2_inv += float(w @ (mass * (-2.0 / (s * (s + 1.0))) * (u_s1 + u_s)))
    sums = gap_sums(cands.values, cands.counts, cands.below, a, x, w, mass, float(c0))
    g0, g1, g2 = gap.sums(evaluator, t_budget) if sums is None else sums
    m2 -= 0.5 * g0
    e_inv -= g1
    m2_inv -= g2
    return c0 + shift, m2 - shift * shift, 1.0 / c0 + e_inv, m2_inv - e_inv * e_inv


def median_moments(num_candidates: IntArray) -> tuple[float, float]:
    r"""Return the null expectation and variance of ``np.median(ranks)``.

    .. math::

        M = \operatorname{median}(r_1, \dots, r_n), \qquad r_i \sim \mathcal{U}\{1, \dots, C_i\}
        \text{ independent},

    the middle order statistic :math:`X_{(m)}` for :math:`n = 2m - 1` and the mean
    :math:`(X_{(a)} + X_{(a+1)}) / 2` of the two middle ones for :math:`n = 2a`, as
    :func:`numpy.median` computes it.

    Parameters
    ----------
    num_candidates : numpy.ndarray of shape (n,)
        The number of candidates :math:`C_i \ge 1` of each ranking task (int64, validated).

    Returns
    -------
    expectation : float
        :math:`\mathbb{E}[M]`.
    variance : float
        :math:`\mathbb{V}[M]`.

    Notes
    -----
    With :math:`N_x = \#\{i : r_i \le x\}`, Poisson-binomial with success probabilities
    :math:`\min(1, x / C_i)`, the tails are :math:`P(X_{(k)} > x) = P(N_x \le k - 1)`. For any
    integer :math:`c` and any function :math:`g`, summation by parts gives

    .. math::

        \mathbb{E}[g(X_{(k)})] = g(c) + \sum_{x \ge 0} \bigl(g(x + 1) - g(x)\bigr)
        \bigl(P(X_{(k)} > x) - \mathbb{1}[x < c]\bigr),

    used with :math:`c` near the median and :math:`g(x) = x - c`, :math:`(x - c)^2`, so that the
    moments are accumulated centred, never as :math:`\mathbb{E}[X^2] - \mathbb{E}[X]^2`. For even
    :math:`n`, :math:`X_{(a)} \le x < X_{(a+1)} \iff N_x = a`, and telescoping
    :math:`\psi(X_{(a)}, X_{(a+1)})` first in the second argument, then in the first, gives

    .. math::

        \mathbb{E}[\psi(X_{(a)}, X_{(a+1)})] = \mathbb{E}[\psi(X_{(a)}, X_{(a)})]
        + \sum_y P(N_y = a)\, \Delta_2\psi(y, y)
        - \sum_{x < y} H(x, y)\, \Delta_1\Delta_2\psi(x, y),

    with :math:`H(x, y) = P(N_x = a, N_y = a)`. For :math:`\psi = ((u + v)/2 - c)^2`,
    :math:`\Delta_1\Delta_2\psi = 1/2`, and the double sum is :math:`(\mathbb{E}[G^2] -
    \mathbb{E}[G]) / 4` with :math:`G = X_{(a+1)} - X_{(a)}`, the term that makes the even case
    differ from the two single order statistics (PyKEEN reports the upper median instead). The
    joint term is one more Poisson-binomial point mass: a task with :math:`C_i > x` avoids
    :math:`(x, y]` with probability :math:`\max(C_i - t, x) / C_i`, :math:`t = y - x`, and is
    then at most :math:`x` with probability :math:`x / \max(C_i - t, x)`.

    Only the window of :math:`x` where :math:`P(N_x \ge k)` and :math:`P(N_x \le k - 1)` both
    exceed :math:`10^{-24}` is evaluated (found by bisection on Bennett's inequality, with the
    mean and variance of :math:`N_x` from suffix sums over the sorted distinct :math:`C`), and
    the sum over :math:`t` stops where :math:`H` is below :math:`e^{-45}` of its total. Each
    Poisson-binomial tail or point mass is an exact dynamic programme over the uncertain tasks
    when that is cheap (small :math:`n`), else a lattice Fourier inversion of the characteristic
    function whose logarithm comes from power sums :math:`\sum_i (x / C_i)^s` (suffix sums over
    the distinct counts, so the cost does not grow with :math:`n` or :math:`\max C`), accurate to
    about :math:`10^{-16}` absolute. Sums over the window use the integers themselves on short
    pieces and discrete Gauss (Gram) rules on long ones, with pieces cut wherever a count
    :math:`C_i` makes the tail change polynomial; memory and time depend on the window and the
    number of distinct counts, not on :math:`\max C`.

    Accuracy, against exact enumeration, exact dynamic programmes at every integer, 35-digit
    binomial tails and exhaustive double sums: :math:`\mathbb{E}` to about :math:`10^{-15}`
    relative; :math:`\mathbb{V}` for odd :math:`n` to about :math:`10^{-13}` relative (limited by
    the rounding of the mean of :math:`N_x`, about :math:`10^{-14}` absolute in the tail at
    :math:`n = 10^6`). For even :math:`n` the double sum is done exactly on the polynomial pieces
    when :math:`n \le 24` or when the integer points are few; otherwise by discrete Gauss rules
    in :math:`x` and a Gauss-Meixner rule (weight :math:`e^{-\lambda t}`) or integer
    interpolatory panels in :math:`t`, which assume :math:`H` smooth. That error enters
    :math:`\mathbb{V}` with a weight of order :math:`1/n`; measured relative errors of
    :math:`\mathbb{V}` were at most :math:`2 \cdot 10^{-8}` (many distinct counts,
    :math:`n = 10^2`-:math:`10^4`) and :math:`10^{-14}` with one distinct count.

    Examples
    --------
    >>> import numpy as np
    >>> e, v = median_moments(np.array([1, 2, 3, 5]))
    >>> round(e, 12), round(v, 12)
    (1.6, 0.223333333333)
    >>> e, v = median_moments(np.array([3, 7, 2]))
    >>> round(e, 12), round(v, 12)
    (2.0, 0.47619047619)
    >>> median_moments(np.array([10**12]))[0]
    500000000000.5
    """
    e, v, _, _ = _moments(num_candidates)
    return e, v


def inverse_median_moments(num_candidates: IntArray) -> tuple[float, float]:
    r"""Return the null expectation and variance of ``1 / np.median(ranks)``.

    .. math::

        \mathbb{E}[1/M], \quad \mathbb{V}[1/M], \qquad
        M = \operatorname{median}(r_1, \dots, r_n), \quad r_i \sim \mathcal{U}\{1, \dots, C_i\}.

    Parameters
    ----------
    num_candidates : numpy.ndarray of shape (n,)
        The number of candidates :math:`C_i \ge 1` of each ranking task (int64, validated).

    Returns
    -------
    expectation : float
        :math:`\mathbb{E}[1/M]`.
    variance : float
        :math:`\mathbb{V}[1/M]`.

    Notes
    -----
    The same tails as :func:`median_moments` with :math:`g(x) = 1/x - 1/c` and
    :math:`(1/x - 1/c)^2`, i.e. :math:`\mathbb{E}[1/X] = \sum_x P(X = x) / x` summed by parts,
    and for even :math:`n` the same double sum of :math:`H(x, y)` with
    :math:`\psi(u, v) = 2/(u + v) - 1/c` and its square (second differences written without
    cancellation). Tails near 1 enter through their complements, which the dynamic programme
    keeps to full relative accuracy, so results stay accurate even at :math:`C = 10^{12}` with
    two tasks, where :math:`\mathbb{V}[1/M] \approx 10^{-22}`. Powers of two from 32 on (every
    fourth) cut the panels, so that :math:`1/x` is smooth on each.

    Accuracy: exact to rounding for odd :math:`n` (about :math:`10^{-13}` relative) and for even
    :math:`n` on the exact paths of :func:`median_moments`; otherwise measured relative errors
    were at most :math:`4 \cdot 10^{-10}` for :math:`\mathbb{E}` and :math:`2 \cdot 10^{-8}` for
    :math:`\mathbb{V}`. One limitation for even :math:`n`: the decomposition adds terms of the
    size of :math:`\mathbb{E}[1/X_{(a)}^2]` that cancel down to :math:`\mathbb{V}[1/M]`, so
    about :math:`\log_{10}(\mathbb{E}[1/X_{(a)}^2] / \mathbb{V}[1/M])` digits are lost when the
    two middle ranks are orders of magnitude apart. That happens only for a handful of tasks with
    very different or huge counts: :math:`C = (10^{12}, 10^{12})` gives :math:`\mathbb{V}` to
    :math:`5 \cdot 10^{-5}` relative (:math:`\mathbb{E}` to :math:`10^{-10}`),
    :math:`C = (1, 10^{12})` to :math:`6 \cdot 10^{-4}`, :math:`C = (1, 3000)` to
    :math:`10^{-12}`; for :math:`n \ge 4` with comparable counts it is negligible.

    Examples
    --------
    >>> import numpy as np
    >>> e, v = inverse_median_moments(np.array([1, 2, 3, 5]))
    >>> round(e, 12), round(v, 12)
    (0.684444444444, 0.043832098765)
    >>> e, v = inverse_median_moments(np.array([10**12]))  # H(C) / C and H_2(C) / C - (H / C)^2
    >>> f"{e:.10e} {v:.10e}"
    '2.8208236781e-11 1.6449340661e-12'
    """
    _, _, e, v = _moments(num_candidates)
    return e, v


def _order_window(cands: _Candidates, k: int) -> tuple[int, int]:
    lo, hi = cands.window(k)
    return max(lo, 1), max(min(hi, cands.c_max), 1)


def order_statistic_sf(num_candidates: IntArray, k: int, x: IntArray) -> FloatArray:
    r"""Return :math:`P(X_{(k)} > x)`, the survival function of the ``k``-th smallest rank.

    .. math:: P(X_{(k)} > x) = P(N_x \le k - 1), \qquad N_x = \#\{i : r_i \le x\}

    Parameters
    ----------
    num_candidates : numpy.ndarray of shape (n,)
        The number of candidates :math:`C_i \ge 1` of each ranking task (int64, validated).
    k : int
        The order, :math:`1 \le k \le n` (1 is the smallest rank).
    x : numpy.ndarray
        Integer points, any shape.

    Returns
    -------
    numpy.ndarray
        The survival function at ``x`` (same shape), accurate to about :math:`10^{-16}`
        absolute; outside the window of :func:`median_moments` it is 1 or 0 to
        :math:`10^{-24}`.

    Raises
    ------
    ValueError
        If ``k`` is not in ``1..n``.

    Examples
    --------
    >>> import numpy as np
    >>> order_statistic_sf(np.array([4, 4, 4]), 2, np.array([0, 1, 2, 3, 4])).round(6).tolist()
    [1.0, 0.84375, 0.5, 0.15625, 0.0]
    """
    n = int(num_candidates.size)
    if not 1 <= k <= n:
        raise ValueError(f"Expected k in 1..{n}, got: {k!r}")
    cands = _Candidates(num_candidates)
    points = np.asarray(x, dtype=np.float64)
    flat = points.ravel()
    out = np.where(flat < 1, 1.0, 0.0)
    lo, hi = _order_window(cands, k)
    inside = (flat >= lo) & (flat <= hi) & (flat < cands.c_max)
    out[(flat >= 1) & (flat < lo)] = 1.0
    if np.any(inside):
        evaluator = _Evaluator(cands, float(lo), float(hi), 0.0)
        lower, _, _, _ = evaluator.evaluate(flat[inside], 0.0, [k - 1], [])
        out[inside] = lower[:, 0]
    return out.reshape(points.shape)


def order_statistic_pmf(
    num_candidates: IntArray, k: int, *, max_support: int = 1_000_000
) -> tuple[IntArray, FloatArray]:
    r"""Return the support and probability mass function of the ``k``-th smallest rank.

    .. math:: P(X_{(k)} = x) = P(X_{(k)} > x - 1) - P(X_{(k)} > x)

    restricted to the window of :math:`x` where the mass is not negligible (the tails outside
    are below :math:`10^{-24}`); meant for plotting the null distribution.

    Parameters
    ----------
    num_candidates : numpy.ndarray of shape (n,)
        The number of candidates :math:`C_i \ge 1` of each ranking task (int64, validated).
    k : int
        The order, :math:`1 \le k \le n`; for odd :math:`n`, :math:`k = (n + 1)/2` is the median.
    max_support : int, default=1_000_000
        The longest window returned.

    Returns
    -------
    support : numpy.ndarray of shape (m,)
        Consecutive integers (int64).
    pmf : numpy.ndarray of shape (m,)
        The point masses, accurate to about :math:`10^{-16}` absolute.

    Raises
    ------
    ValueError
        If ``k`` is not in ``1..n``, or if the window is longer than ``max_support``.

    Examples
    --------
    >>> import numpy as np
    >>> support, pmf = order_statistic_pmf(np.array([4, 4, 4]), 2)
    >>> support.tolist(), pmf.round(6).tolist()
    ([1, 2, 3, 4], [0.15625, 0.34375, 0.34375, 0.15625])
    """
    n = int(num_candidates.size)
    if not 1 <= k <= n:
        raise ValueError(f"Expected k in 1..{n}, got: {k!r}")
    lo, hi = _order_window(_Candidates(num_candidates), k)
    if hi - lo + 1 > max_support:
        raise ValueError(
            f"Expected a window of at most max_support={max_support} points, got {hi - lo + 1}"
        )
    support = np.arange(lo, hi + 1, dtype=np.int64)
    sf = order_statistic_sf(num_candidates, k, np.arange(lo - 1, hi + 1, dtype=np.int64))
    return support, np.maximum(sf[:-1] - sf[1:], 0.0)
