r"""Tails and point masses of the Poisson-binomial counts N_x behind the median null model.

See :class:`_Evaluator`: an exact dynamic programme over the uncertain tasks where that is cheap,
a lattice Fourier inversion of the characteristic function (from tabulated power sums,
:mod:`rankstats.null.median_fourier`) otherwise.

The programme adds the tasks to the law of the count sixteen at a time (each block's own law,
convolved with the band of live counts: :func:`_programme`), all terms nonnegative, so both
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

The evaluator splits the nodes into chunks (sorted, by the power tables' anchors), takes the
programme where it is cheap and the small-tail methods where the asked probabilities are small,
and hands the rest of each chunk to the inversion, which keeps the input's power tables.
"""

from __future__ import annotations

import math
from collections.abc import Sequence

import numpy as np

from rankstats.arrays import BoolArray, FloatArray, IntArray
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
from rankstats.null.median_fourier import _BLOCK_TERMS, Inversion, _next_powers
from rankstats.null.median_rules import _suffix_sum

#: tails below this are dropped: they bound the window of x that is evaluated
_LOG_EPS = math.log(1e-24)
#: ... and where the inverse median's sums lose at most this much of their size below the
#: window (:func:`inverse_tail`)
INVERSE_TAIL = 1e-15
#: nodes evaluated together (bounds the memory of the Fourier arrays: 2048 had made the odd-n
#: median at n = 1e4 with counts up to 1e9 peak at 6 MB against 2 MB with small counts; the
#: smaller arrays are faster too, as they fault fewer fresh pages)
_CHUNK = 512
#: nodes per dynamic programme (the tasks certain below a piece's lowest node are left out)
_DP_NODES = 512
#: the exact dynamic programme is used up to this many uncertain tasks ...
_DP_MAX_ITEMS = 1500
#: tasks the programme adds at once (:func:`_programme`)
_DP_BLOCK = 16
#: ... and this much work per node (tasks times counts kept)
_DP_MAX_WORK = 40_000
#: ... or this much work for all the nodes of a chunk together (few nodes: keep the relative
#: accuracy of tiny tails, which the Fourier inversion has only in absolute terms)
_DP_MAX_TOTAL = 2_000_000
#: ... and, at nodes whose asked probabilities are small (median_band.small_tails), up to this
#: many tasks and this much work for all those nodes of a chunk (tasks x counts kept x nodes)
_SMALL_TAIL_ITEMS = 5_000
_SMALL_TAIL_WORK = 20_000_000


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


def _log_tail_bounds(tau: FloatArray, var: FloatArray) -> FloatArray:
    """:func:`_log_tail_bound` element-wise.

    For many groups' windows at once (:mod:`rankstats.null.median_small_groups`).
    """
    out = np.zeros(tau.shape)
    positive = tau > 0.0
    degenerate = positive & (var <= 0.0)
    out[degenerate] = -math.inf
    live = positive & ~degenerate
    t, v = tau[live], var[live]
    out[live] = -((v + t) * np.log1p(t / v) - t)
    return out


def dyadic_points(top: float) -> FloatArray:
    r"""The ends :math:`2^{j+1}` of the blocks :math:`[2^j, 2^{j+1})` starting at most at ``top``.

    For :func:`inverse_tail`, :math:`j = 0, 1, \dots`
    """
    return np.asarray(2.0 ** np.arange(1, max(math.floor(math.log2(max(top, 1.0))), 0) + 2))


def inverse_tail_table(
    log_at_points: FloatArray, n: int, kth: FloatArray
) -> tuple[FloatArray, FloatArray]:
    r"""Per block, what :func:`inverse_tail` sums over the blocks below it, and its weight.

    ``log_at_points`` is the log of Bennett's bound on :math:`P(X \le 2^{j+1})` at
    :func:`dyadic_points` (last axis; leading axes, with ``kth``'s, one group or many). Returns
    ``(below, weights)``, the first with one more entry than the blocks.
    """
    blocks = log_at_points.shape[-1]
    scale = kth[..., None] * 2.0 ** -np.arange(blocks)
    weights = scale + 8.0 * n * scale * scale
    below = np.zeros((*weights.shape[:-1], blocks + 1))
    np.cumsum(np.exp(log_at_points) * weights, axis=-1, out=below[..., 1:])
    return below, weights


def inverse_tail(
    table: tuple[FloatArray, FloatArray], x: FloatArray, log_at_x: FloatArray
) -> FloatArray:
    r"""A bound on what the inverse median's sums lose below ``x``, relative to their size.

    Below the window the sums drop :math:`\sum_{x' < x} P(X \le x') |\Delta g(x')|` with
    :math:`|\Delta g| \le 1/x'^2` for :math:`\mathbb{E}[1/X]` and :math:`2/x'^3` for the
    centred second moment. On each block :math:`[2^j, 2^{j+1})` below ``x`` the tail is at most
    its bound at the block's end, :math:`B_j` (:func:`inverse_tail_table`; at ``x`` itself,
    ``log_at_x``, the log of the bound there, for the last block), and the block's weights sum
    to at most :math:`2^{-j}` and :math:`2^{1-2j}`. Relative to :math:`\mathbb{E}[1/X] \ge
    1/C_{(k)}` and to :math:`\mathbb{V}[1/X] \approx 1/(4 n C_{(k)}^2)` (:math:`C_{(k)}` the
    :math:`k`-th smallest count, which :math:`X_{(k)}` never exceeds): :math:`\sum_j B_j (s_j +
    8 n s_j^2)`, :math:`s_j = 2^{-j} C_{(k)}`.

    The window's cut at a tail of :math:`10^{-24}` alone had left out most of
    :math:`\mathbb{E}[1/X^2]` for a few tasks with huge counts, whose law near 0 is a low power
    of :math:`x` (:math:`P(X_{(k)} \le x) \approx \binom{n}{k} (x/C)^k`) against weights
    :math:`1/x^2`: three counts of :math:`10^{15}` had :math:`\mathbb{V}[1/M]` 17% off, five
    counts of :math:`10^9` :math:`7 \cdot 10^{-9}`, seven :math:`2 \cdot 10^{-12}`. ``x >= 1``.
    """
    below, weights = table
    j = np.minimum(np.floor(np.log2(x)).astype(np.int64), weights.shape[-1] - 1)
    last = np.take_along_axis(weights, j[..., None], axis=-1)[..., 0]
    lost = np.take_along_axis(below, j[..., None], axis=-1)[..., 0]
    return np.asarray(lost + np.exp(log_at_x) * last)


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


def _block_polynomials(q_rows: FloatArray, p_rows: FloatArray) -> FloatArray:
    r"""The law of each block's number of successes: ``(_DP_BLOCK + 1, blocks, nodes)``.

    Block :math:`b` holds the tasks :math:`bB, \dots, bB + B - 1` (:math:`B` =
    :data:`_DP_BLOCK`; the last block padded with tasks that never succeed, unless the rows
    come padded: :func:`_task_rows`); its column :math:`[s, b]` is
    :math:`P(\text{$s$ of them succeed})`, built task by task as the programme itself adds tasks
    (two products and a sum of non-negative terms per cell), for all blocks at once. The number
    of successes leads, so that each step reads and writes one contiguous run of memory.
    """
    items, nodes = q_rows.shape
    pad = -items % _DP_BLOCK
    if pad:
        q_rows = np.concatenate((q_rows, np.zeros((pad, nodes))))
        p_rows = np.concatenate((p_rows, np.ones((pad, nodes))))
    blocks = q_rows.shape[0] // _DP_BLOCK
    # task s of every block: q[:, s] (a view of the rows)
    q = q_rows.reshape(blocks, _DP_BLOCK, nodes)
    p = p_rows.reshape(blocks, _DP_BLOCK, nodes)
    law = np.zeros((_DP_BLOCK + 1, blocks, nodes))
    law[0] = 1.0
    moved = np.empty((_DP_BLOCK, blocks, nodes))
    for s in range(_DP_BLOCK):
        np.multiply(law[: s + 1], q[:, s], out=moved[: s + 1])
        law[: s + 1] *= p[:, s]
        law[1 : s + 2] += moved[: s + 1]
    return law


def _task_rows(items: FloatArray, x: FloatArray, t: FloatArray) -> tuple[FloatArray, FloatArray]:
    r"""Each task's success and failure probabilities at each node: two (rows, nodes) arrays.

    Task :math:`i` of ``items`` (its candidate count :math:`C_i`) succeeds at node :math:`x`
    with shift :math:`t` with probability :math:`\min(1, x / (C_i - t))`. The failure
    probability is :math:`(C_i - t - x) / (C_i - t)`, not :math:`1 - q`: for :math:`q` near 1
    that difference loses digits (38/39: 2e-15 relative), and the programme raises it to high
    powers. The rows are padded to whole blocks of :data:`_DP_BLOCK` with tasks that never
    succeed, and each array is written in place (no temporaries of the rows' size).
    """
    size = items.size + (-items.size % _DP_BLOCK)
    q_rows = np.zeros((size, x.size))
    p_rows = np.ones((size, x.size))
    q, p = q_rows[: items.size], p_rows[: items.size]
    room = items[:, None] - t
    inside = room > x
    q.fill(1.0)
    np.divide(x, room, out=q, where=inside)
    p.fill(0.0)
    np.subtract(room, x, out=p, where=inside)
    np.divide(p, room, out=p, where=inside)
    return q_rows, p_rows


def _programme(
    q_rows: FloatArray, p_rows: FloatArray, settles: IntArray, top: int
) -> tuple[FloatArray, FloatArray]:
    r"""The law of the count after all tasks, and the mass settled below the band.

    ``q_rows[k]`` and ``p_rows[k]`` are task :math:`k`'s success and failure probabilities at
    each node; before task :math:`k` the rows below ``settles[k]`` are settled (their mass can no
    longer reach an asked count: :func:`_settle_rows`). Returns ``dist`` of shape
    ``(top + 2, nodes)``, the law of counts ``0..top`` with every count above ``top`` pooled in
    the last row, and ``settled``, the mass settled at each node.

    The tasks are added a block of :data:`_DP_BLOCK` at a time: the block's own law
    (:func:`_block_polynomials`) is convolved with the band of live counts, one sum of
    :math:`B + 1` products per cell where adding the tasks one by one took :math:`B` passes of
    three operations each; every term is non-negative either way, so small masses keep their
    relative accuracy. Rows are settled at the start of each block, with the block's first
    task's row: settling later than the row allows only keeps exact terms longer.
    """
    nodes = q_rows.shape[1]
    dist = np.zeros((top + 2, nodes))
    dist[0] = 1.0
    settled = np.zeros(nodes)
    lo = 0
    block = _DP_BLOCK
    # the blocks' laws, a bounded number of blocks at a time (their rows and tails reversed:
    # row s' of `rev` is P(B - s' successes), row s' of `tails` P(at least s' successes))
    per_batch = max(1, _BLOCK_TERMS // ((block + 1) * nodes))
    span = per_batch * block
    # the band between `block` zero rows on either side, one array for all blocks (its rows
    # below the band are never written; those above it are cleared as the band moves)
    padded = np.zeros((top + 1 + 2 * block, nodes))
    windows = np.lib.stride_tricks.sliding_window_view(padded, block + 1, axis=0)
    for start in range(0, q_rows.shape[0], span):
        law = _block_polynomials(q_rows[start : start + span], p_rows[start : start + span])
        rev = law[::-1]
        tails = np.cumsum(rev, axis=0)[::-1]
        for b in range(law.shape[1]):
            k0 = start + b * block
            settle = int(settles[k0])
            if settle > lo:
                settled += dist[lo:settle].sum(axis=0)
                dist[lo:settle] = 0.0
                lo = settle
            # before the block, only the counts 0..k0 can be held
            hi = min(k0, top) + 1
            if hi <= lo:
                continue
            new_hi = min(k0 + block, top) + 1
            # row lo + i of the result is sum_s' rev[s'] band[i + s'] (sliding windows of
            # block + 1 rows of the padded band)
            width = hi - lo
            padded[block : block + width] = dist[lo:hi]
            padded[block + width : 2 * block + width] = 0.0
            # the counts that pass top go to the pool: row j moves there with P(>= top + 1 - j)
            first = max(lo, top + 1 - block)
            if first < hi:
                reach = top + 1 - np.arange(first, hi)
                dist[top + 1] += np.einsum("jn,jn->n", dist[first:hi], tails[reach, b])
            np.einsum("ins,sn->in", windows[: new_hi - lo], rev[:, b], out=dist[lo:new_hi])
    return dist, settled


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
        self._windows: dict[int, tuple[int, int]] = {}

    def power_sums(self, terms: int) -> FloatArray:
        r"""Row ``k - 1``: :math:`\sum_{j \ge i} m_j C_j^{-k}` for every ``i`` (compensated)."""
        if self._power_sums is None or self._power_sums.shape[0] < terms:
            # the power table's rows with the anchor 1 (each power by one more product)
            with np.errstate(under="ignore"):
                self._power_sums = _suffix_sum(_next_powers(self.counts, 1.0 / self.values, terms))
        return self._power_sums[:terms]

    def index_above(self, y: FloatArray | float) -> IntArray:
        """Index of the first distinct count above ``y``."""
        return np.asarray(np.searchsorted(self.values, y, side="right"), dtype=np.int64)

    def mean_var(self, x: float) -> tuple[float, float]:
        """Mean and variance of :math:`N_x`."""
        i = int(self.index_above(x))
        p1 = x * float(self.inv1[i])
        return float(self.below[i]) + p1, max(p1 - x * x * float(self.inv2[i]), 0.0)

    def mean_vars(self, x: FloatArray) -> tuple[FloatArray, FloatArray]:
        """:meth:`mean_var` at many points."""
        i = self.index_above(x)
        p1 = x * self.inv1[i]
        return self.below[i] + p1, np.maximum(p1 - x * x * self.inv2[i], 0.0)

    def window(self, k: int) -> tuple[int, int]:
        r"""Integers ``(lo, hi)`` outside which :math:`P(X_{(k)} > x)` is 1 or 0 to 1e-24.

        For :math:`x < lo`, :math:`P(N_x \ge k) \le 10^{-24}`, and the inverse median's sums
        below ``lo`` are at most :data:`INVERSE_TAIL` of their size (:func:`inverse_tail`); for
        :math:`x \ge hi`,
        :math:`P(N_x \le k - 1) \le 10^{-24}`. Bennett's bound decides; as the tail is monotone
        in :math:`x`, any point where the bound holds bounds the tail beyond it, so bisection is
        valid even where the bound itself is not monotone. Besides, :math:`X_{(k)}` never exceeds
        the :math:`k`-th smallest count (those :math:`k` ranks are all at most that), where
        Bennett's bound is loose (tasks sure to be below :math:`x` with tiny-variance others).
        """
        found = self._windows.get(k)
        if found is None:
            found = self._windows[k] = self._window(k)
        return found

    def _window(self, k: int) -> tuple[int, int]:
        """:meth:`window`, computed (it is kept per ``k``: the even median asks twice)."""
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
        if lo >= 1:
            lo = self._inverse_lower_end(k, lo, float(kth))
        return lo + 1, upper

    def _inverse_lower_end(self, k: int, lo: int, kth: float) -> int:
        """``lo`` (at least 1), moved down where :func:`inverse_tail` needs it.

        Where the inverse median's sums would lose more than :data:`INVERSE_TAIL` below it, a
        bisection below ``lo`` with both conditions (in Python's floats: a step costs no numpy
        call).
        """
        points = dyadic_points(float(lo))
        mu_points, var_points = self.mean_vars(points)
        table = inverse_tail_table(
            _log_tail_bounds(k - mu_points, var_points), self.n, np.array(kth)
        )
        lost, weights = table[0].tolist(), table[1].tolist()

        def holds(x: int) -> bool:
            mu, var = self.mean_var(x)
            log_tail = _log_tail_bound(k - mu, var)
            j = min(x.bit_length() - 1, len(weights) - 1)  # floor(log2(x))
            lost_below = lost[j] + math.exp(log_tail) * weights[j]
            return log_tail <= _LOG_EPS and lost_below <= INVERSE_TAIL

        if holds(lo):
            return lo
        low, high = 0, lo
        while high - low > 1:
            mid = (low + high) // 2
            if holds(mid):
                low = mid
            else:
                high = mid
        return low

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
        self.fourier = Inversion(cands, x_lo, x_hi, t_hi)

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
        # the exact programme's pieces (first node, end, the power tables' anchor)
        pieces: list[tuple[int, int, int]] = []
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
                if split > c0:
                    part, part_t, rows = xs[c0:split], ts[c0:split], order[c0:split]
                    res = self._inverted(part, part_t, cdf_at, pmf_at, int(bucket[c0]))
                    lower[rows], upper[rows], pmf[rows], log_factor[rows] = res
                # the exact part in pieces of _DP_NODES nodes: each piece's programme drops the
                # tasks certain below its lowest node (fewer tasks and counts higher up)
                pieces += [
                    (p0, min(p0 + _DP_NODES, c1), int(bucket[c0]))
                    for p0 in range(split, c1, _DP_NODES)
                ]
        for run in self._band_runs(pieces, xs + ts, max([*cdf_at, *pmf_at])):
            r0, r1 = run[0][0], run[-1][1]
            found = self._dp(xs[r0:r1], ts[r0:r1], cdf_at, pmf_at) if len(run) > 1 else None
            if found is not None:
                rows = order[r0:r1]
                lower[rows], upper[rows], pmf[rows], log_factor[rows] = found
                continue
            for p0, p1, anchor in run:
                part, part_t, rows = xs[p0:p1], ts[p0:p1], order[p0:p1]
                exact = self._dp(part, part_t, cdf_at, pmf_at)
                if exact is None:
                    exact = self._inverted(part, part_t, cdf_at, pmf_at, anchor)
                lower[rows], upper[rows], pmf[rows], log_factor[rows] = exact
        return lower, upper, pmf, log_factor

    def _band_runs(
        self, pieces: list[tuple[int, int, int]], xt: FloatArray, asked: int
    ) -> list[list[tuple[int, int, int]]]:
        """The programme's pieces, adjacent ones that take the same band's law in one run.

        A piece whose highest asked count is within :data:`BAND_COUNTS` of the tasks certain at
        its lowest node takes the band's law over the tasks uncertain there; adjacent pieces
        with the same uncertain tasks are evaluated together, one call for a run (a median
        pinned at a small count beside huge ones: two dozen calls, now a few).
        """
        runs: list[list[tuple[int, int, int]]] = []
        previous = -1
        for p0, p1, anchor in pieces:
            first = int(self.cands.index_above(float(xt[p0:p1].min())))
            band = asked - int(self.cands.below[first]) < BAND_COUNTS
            key = first if band else -1
            if runs and key >= 0 and key == previous and runs[-1][-1][1] == p0:
                runs[-1].append((p0, p1, anchor))
            else:
                runs.append([(p0, p1, anchor)])
            previous = key
        return runs

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
        if top >= 0:
            # one row per task, one column per node (_programme)
            items = np.repeat(cands.values[i0:], cands.counts[i0:].astype(np.int64))
            q_rows, p_rows = _task_rows(items, x, t)
            # counts 0..top, and a last cell that collects every count above top. A count that
            # cannot pass `decided` with the tasks left ends below every cdf and pmf point: its
            # row is added to `settled` (all of it ends in every lower tail) and dropped, so
            # the live rows form a band at most as wide as the tasks left
            decided = _decided(cdf_at, pmf_at, certain)
            settles = _settle_rows(_reach(q_rows[: items.size].max(axis=1)), decided, top)
            dist, settled = _programme(q_rows, p_rows, settles, top)
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
            found = self.fourier.smooth(xi, ti, cdf_at, pmf_at, bucket)
            if found is None:
                found = self.fourier.invert(xi, ti, cdf_at, pmf_at, bucket)
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
