r"""Quadrature of the even-n gap sums over (x, t), the fallback of :mod:`rankstats.null.median_gap`.

Used only where the product form cannot be summed cheaply: non-integer nodes whose kernel has
not decayed before x = 1 (a few tasks with very different counts). See :class:`_GapSums`.
"""

from __future__ import annotations

import math

import numpy as np

from rankstats.arrays import FloatArray, IntArray
from rankstats.null.median_rules import (
    _ENUM,
    _NU,
    _integer_rule,
    _ladder,
    _meixner_rule,
    _panel_nodes,
    _piece_nodes,
    _pieces,
    dot,
)
from rankstats.null.median_tails import _Candidates, _Evaluator

#: tests may force an order of the gap sums ("a", "b" or "c"); None chooses
_FORCE_ORDER: str | None = None
#: the sums of the gap terms over x use at least this many panels
_N_SUB_GAP = 16
#: integer nodes per panel of the outer rule of order (b)
_NU_OUTER = 32
#: up to this many tasks the gap sums use order (b), exact for the polynomial pieces
_SMALL_N = 24
#: nodes of the Gauss-Meixner rule for the sums of the gap terms over t
_NU_MEIXNER = 24
#: breakpoints of the gap sums are honoured if there are at most this many, for fewer tasks than
#: _GAP_BREAKS_N (and always if there are at most _NU)
_GAP_MAX_BREAKS = 256
_GAP_BREAKS_N = 2000
#: the Gauss-Meixner rule is used from this many tasks on even where t reaches max C
_MEIXNER_MIN_N = 1000
#: the gap sums over t are done point by point while (t values) * (x nodes) stays below this
_T_ENUM_BUDGET = 60_000


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
        g1 = dot(h, (4.0 / (s * (s + 1.0) * (s + 2.0))))
        g2 = dot(h, _second_difference_inverse_square(s, float(self.c0)))
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
