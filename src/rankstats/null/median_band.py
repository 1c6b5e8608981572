r"""The law of a Poisson-binomial count in a narrow band, exactly, however many tasks it has.

:mod:`rankstats.null.median_tails` needs :math:`P(N \le m)` and :math:`P(N = a)` of the count
:math:`N` of ranks at most :math:`x`, a sum of independent Bernoulli variables, one per task.
Where the count sits far in a tail of its law, those probabilities are small, and the Fourier
inversion has them only to about :math:`10^{-16}` absolute. That is not enough where the median's
law has a long tail: the moments weigh the tail at :math:`x` by :math:`2 |x - c| + 1`, so an
absolute error :math:`\epsilon` over a window of width :math:`W` moves the variance by about
:math:`\epsilon W^2`. A median pinned at a small count by half the tasks, with the other half's
counts large, has a window a thousand times its standard deviation and lost 11 digits of 16 on
the variance that way.

Such a tail is narrow in the count: the median exceeds :math:`x` when at most :math:`m` of the
uncertain tasks fall at or below :math:`x`, with :math:`m` small (the tasks left to reach the
median's order once the small counts are all certain). So the law of the uncertain count is only
needed on the counts :math:`0..D - 1` and the pool of counts :math:`\ge D`, with :math:`D \le
16`. :func:`band_law` forms it as a product of polynomials with nonnegative coefficients, so
every probability keeps its relative accuracy however small:

* the tasks sharing a candidate count :math:`C` (multiplicity :math:`k`) contribute the binomial
  law :math:`\binom{k}{j} q^j p^{k - j}` with :math:`q = x / (C - t)`, :math:`p = (C - t - x) /
  (C - t)` (both without cancellation), formed in the log domain (:math:`\log p` as
  :math:`\log(1 - q)` by ``log1p`` where :math:`q < 1/2`), and its pool
  :math:`P(\mathrm{Bin}(k, q) \ge D)` as the complement of the band where that is at least 1/2,
  else as the regularised incomplete beta function :math:`I_q(D, k - D + 1)`;
* the polynomials are multiplied pairwise (a tree within each block of counts, and blocks merged
  like a binary counter), truncated at :math:`D` with every coefficient of degree :math:`\ge D`
  added to the pool.

The relative error of each probability is a few units in the last place times the depth of the
tree (:math:`\log_2` of the number of distinct counts) and :math:`D`, against the number of tasks
for one task at a time. The cost is the number of distinct counts times the nodes times
:math:`D^2` at most; blocks bound the memory.

Where only :math:`P(N = 0)` is asked at shift 0 (the band of one count: a median past every
small count, waiting for the first of the huge ones), :func:`_none_by_series` sums
:math:`\sum_j m_j \log(1 - x / C_j)` for the counts above :math:`16x` as the series
:math:`-\sum_{k \le 13} \frac{x^k}{k} \sum_j m_j C_j^{-k}` from power sums tabulated once per
input, and the few counts in :math:`(x, 16x]` one by one: per node it costs 13 terms and its near
counts, not every distinct count (5e5 of them at :math:`n = 10^6`, where the band's budget had
left these nodes to the inversion and V of the median 5e-12 off).

Split bands
-----------
A median pinned at a small count :math:`c` by half the tasks, with the other half's counts huge,
asks its lower middle rank's tails at :math:`x < c` on thousands of counts: every task at
:math:`c` must fall at or below :math:`x`. Counted the other way, that is a narrow band again:
with :math:`L` likely tasks (smaller counts) and the rest unlikely, the uncertain count is
:math:`L - F + U`, :math:`F` the likely tasks' misses and :math:`U` the unlikely tasks' count.
:func:`band_law` gives both laws (``failures=True`` for :math:`F`, each miss with probability
:math:`p` formed without cancellation). :math:`U` needs its band up to its
:func:`chernoff_reach` (it passes it with probability :math:`10^{-320}` at most, the absolute
error this leaves), :math:`F` only as far as its misses can bring an asked count within
:math:`U`'s band (its pool counts in the lower tails). :func:`split_plan` picks the split by
the estimated cost (distinct counts times band squared times nodes) within a budget, and
:func:`split_band_tails` sums the products, all nonnegative. Where the unlikely tasks are
many, each rare, and their counts far above the nodes (at shift 0), their law comes from their
power sums and Newton's identities instead (:func:`_rare_law`): a pass over their counts per
term, not a polynomial product per count. The cost does not grow with
:math:`n`: 5,000 tasks at 100 beside 5,000 at :math:`10^{12}` take two binomial laws on bands
of 44 counts; against exact binomial sums the tails are within :math:`2 \cdot 10^{-14}`
relative (tests).
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import TYPE_CHECKING, NamedTuple

import numpy as np
from scipy import special

from rankstats.arrays import BoolArray, FloatArray, IntArray

if TYPE_CHECKING:
    from rankstats.null.median_tails import _Candidates

__all__ = [
    "BAND_COUNTS",
    "LOG_REACH",
    "SplitPlan",
    "band_law",
    "band_nodes",
    "band_tails",
    "chernoff_reach",
    "hit_probability",
    "small_tails",
    "split_band_tails",
    "split_plan",
    "two_count_tails",
]

#: the most counts a band holds below its pool (:math:`D`)
BAND_COUNTS = 16
#: nodes whose asked probabilities are below exp(this) (Chernoff's bound) take the band's law
#: or the exact programme
_LOG_SMALL_TAIL = math.log(1e-3)
#: ... unless that costs more than this (distinct counts x nodes x counts of the band), about
#: 0.2 s; the inversion stays there
_BAND_WORK = 10_000_000
#: counts past a reach are taken with probability at most this (a Chernoff bound): far below any
#: tail that moves a moment
LOG_REACH = math.log(1e-320)
#: P(N = 0) at shift 0 sums the counts above this multiple of x by a series of this many terms
_SERIES_RATIO = 1.0 / 16.0
_SERIES_TERMS = 13
#: the two counts' sums: terms (nodes x masses of the second count), each a few special
#: function calls (about 0.3 s at the most)
_TWO_COUNT_TERMS = 1_000_000
#: the split bands' budget (distinct counts x band squared x nodes)
_SPLIT_WORK = 20_000_000
#: elements of a block's binomial array (distinct counts x band x nodes): about 1 MB
_BLOCK_ELEMENTS = 2**17


def small_tails(
    cands: _Candidates,
    x: FloatArray,
    t: FloatArray,
    cdf_at: Sequence[int],
    pmf_at: Sequence[int],
) -> tuple[BoolArray, IntArray]:
    r"""The nodes where every asked probability lies in a small tail, and each node's band.

    Chernoff's bound puts every asked probability below :math:`10^{-3}` there (or every asked
    count is below the tasks certain at the node). There a method relative to the tail's size
    (the band's law, the exact programme) beats the inversion's absolute :math:`10^{-16}`;
    elsewhere the inversion is the more accurate. The band is the largest asked count less the
    tasks certain at the node: the counts whose law is needed, less one.

    ``cdf_at`` and ``pmf_at`` are the counts ``m`` and ``a`` of :math:`P(N \le m)` and
    :math:`P(N = a)`, as :meth:`~rankstats.null.median_tails._Evaluator.evaluate` takes them.
    """
    index = cands.index_above(x + t)
    certain = cands.below[index]
    top = max([*cdf_at, *pmf_at]) - certain
    # the uncertain tasks as those with q = x / C < 1/2 (C > 2x), whose count A has mean alpha,
    # and the others (n_high of them), whose misses B have mean beta: S = n_high + A - B, and
    # Chernoff's bound with the Poisson law's generating function (which bounds a Bernoulli
    # sum's, of A in e^l and of B in e^-l) bounds each tail (q from x / C: t is left out)
    split = np.maximum(cands.index_above(2.0 * x), index)
    alpha = x * cands.inv1[split]
    n_high = (cands.below[split] - certain).astype(np.float64)
    beta = np.maximum(n_high - x * (cands.inv1[index] - cands.inv1[split]), 0.0)
    log_bound = np.full(x.size, -np.inf)
    asked = [(m - certain, m + 1 - certain) for m in cdf_at]
    asked += [(a - certain, a - certain) for a in pmf_at]
    for below, above in asked:
        # P(S <= below) = P(B - A >= n_high - below), P(S >= above) = P(A - B >= above - n_high)
        lower = np.where(below >= 0, _log_difference_bound(beta, alpha, n_high - below), -np.inf)
        upper = _log_difference_bound(alpha, beta, above - n_high)
        log_bound = np.maximum(log_bound, np.minimum(lower, upper))
    return (log_bound <= _LOG_SMALL_TAIL) | (top < 0), top


def band_nodes(
    cands: _Candidates, x: FloatArray, t: FloatArray, small: BoolArray, top: IntArray
) -> BoolArray:
    """The nodes of :func:`small_tails` whose band holds at most :data:`BAND_COUNTS` counts.

    ``False`` everywhere where the band's law would cost more than ``_BAND_WORK`` (distinct
    counts times nodes times counts of the band).
    """
    band = small & (top < BAND_COUNTS)
    if np.any(band):
        if int(top[band].max()) <= 0 and not np.any(t[band]):
            # P(N = 0) by the series of the far counts and the near ones directly
            work = _near_pairs(cands, x[band]) + _SERIES_TERMS * np.count_nonzero(band)
        else:
            lowest = int(cands.index_above(float((x + t)[band].min())))
            count = np.count_nonzero(band)
            work = (cands.values.size - lowest) * count * (int(top[band].max()) + 2)
        if work > _BAND_WORK:
            band[:] = False
    return band


def hit_probability(room: FloatArray, x: FloatArray | float) -> FloatArray:
    r""":math:`\min(1, x / \text{room})`: the chance of a rank at most ``x`` (1 where certain)."""
    inside = room > x
    out: FloatArray = np.where(inside, x / np.where(inside, room, 1.0), 1.0)
    return out


def _near_pairs(cands: _Candidates, x: FloatArray) -> int:
    """The (node, distinct count) pairs :func:`_none_by_series` sums directly."""
    near = cands.index_above(x / _SERIES_RATIO) - cands.index_above(x)
    return int(near.sum())


def _none_by_series(cands: _Candidates, first: int, x: FloatArray) -> FloatArray:
    r""":math:`\log P(N = 0) = \sum_{C_j > x} m_j \log(1 - x / C_j)` at shift 0, for many nodes.

    The counts above :math:`16x` by the series :math:`-\sum_k \frac{x^k}{k} \sum_j m_j
    C_j^{-k}` (13 terms: the rest is below :math:`10^{-17}` of each count's first term), from
    power sums tabulated once per input (compensated suffix sums); the counts in
    :math:`(x, 16x]` one by one, by ``log1p`` (or :math:`\log((C - x) / C)` where
    :math:`x / C \ge 1/2`). Every term has one sign, so the sum is relative to its size; a
    node with a count of ``first`` on at or below it has a certain task (:math:`-\infty`).
    ``first`` is the first distinct count the caller keeps (those below are certain at every
    node and left out).
    """
    sums = cands.power_sums(_SERIES_TERMS)
    far = cands.index_above(x / _SERIES_RATIO)
    low = np.maximum(cands.index_above(x), first)
    total = np.zeros(x.size)
    with np.errstate(over="ignore", under="ignore"):
        power = np.ones(x.size)
        for k in range(1, _SERIES_TERMS + 1):
            power = power * x
            total -= power * sums[k - 1, far] / k
    near = far - low
    if int(near.sum()):
        owner = np.repeat(np.arange(x.size), near)
        index = np.arange(owner.size) - np.repeat(np.cumsum(near) - near, near) + low[owner]
        c, xo = cands.values[index], x[owner]
        q = xo / c
        with np.errstate(divide="ignore"):
            terms = np.where(q < 0.5, np.log1p(-np.minimum(q, 0.5)), np.log((c - xo) / c))
        terms *= cands.counts[index]
        starts = np.cumsum(near) - near
        has = near > 0
        total[has] += np.add.reduceat(terms, starts[has])
    # tasks at or below x (from `first` on) are certain: N >= 1 surely
    certain = cands.index_above(x) > first
    total[certain] = -np.inf
    return total


def band_tails(
    cands: _Candidates,
    x: FloatArray,
    t: FloatArray,
    cdf_at: Sequence[int],
    pmf_at: Sequence[int],
) -> tuple[FloatArray, FloatArray, FloatArray]:
    r""":math:`P(N \le m)`, :math:`P(N > m)` and :math:`P(N = a)` from the law on a narrow band.

    For nodes :func:`band_nodes` selects; each as ``(nodes, asked)``, nonnegative sums.
    """
    i0 = int(cands.index_above(float((x + t).min())))
    certain = int(cands.below[i0])
    top = max([*cdf_at, *pmf_at]) - certain
    low = np.zeros((x.size, len(cdf_at)))
    up = np.ones((x.size, len(cdf_at)))
    pmf = np.zeros((x.size, len(pmf_at)))
    if top >= 0:
        if top == 0 and not np.any(t):
            log_none = _none_by_series(cands, i0, x)
            law = np.stack((np.exp(log_none), -np.expm1(log_none)))
        else:
            law = band_law(cands.values[i0:], cands.counts[i0:], x, t, top + 1)
        # both tails as sums of nonnegative terms
        below = np.cumsum(law, axis=0)
        above = np.cumsum(law[::-1], axis=0)[::-1]
        for j, m in enumerate(cdf_at):
            if m >= certain:
                low[:, j] = below[m - certain]
                up[:, j] = above[m - certain + 1]
        for j, a in enumerate(pmf_at):
            if a >= certain:
                pmf[:, j] = law[a - certain]
    return low, up, pmf


class SplitPlan(NamedTuple):
    """Where :func:`split_band_tails` splits the uncertain tasks, and its two bands."""

    #: the first distinct count not certain at every node, and the first of the unlikely tasks
    first: int
    split: int
    #: the likely tasks' misses on 0..misses - 1 (and a pool); the unlikely tasks' count on
    #: 0..hits - 1 (and a pool taken with probability 1e-320 at most)
    misses: int
    hits: int
    #: the unlikely tasks' law by this many power sums (:func:`_rare_law`); 0: :func:`band_law`
    rare: int = 0


def split_plan(
    cands: _Candidates,
    x: FloatArray,
    t: FloatArray,
    cdf_at: Sequence[int],
    pmf_at: Sequence[int],
) -> SplitPlan | None:
    r"""The cheapest split of the tasks for :func:`split_band_tails`, or ``None`` past its budget.

    For each split of the uncertain tasks (by candidate count) into likely ones (smaller counts)
    and unlikely ones, the unlikely tasks' band reaches past their count's
    :func:`chernoff_reach` (their success probabilities bounded at the highest node and shift),
    and the likely tasks' band as far as their misses can still bring an asked count within the
    unlikely band. The cost is estimated by :func:`_band_cost` for each band, times the nodes;
    the cheapest split within ``_SPLIT_WORK`` is taken.
    """
    first = int(cands.index_above(float((x + t).min())))
    certain = int(cands.below[first])
    if max([*cdf_at, *pmf_at]) < certain:
        return None
    values = cands.values[first:]
    x_hi, t_hi = float(x.max()), float(t.max())
    # splits s = 0..D: likely tasks values[:s], unlikely values[s:]; the likely band costs at
    # least a cell per count and node, so only the first few splits can be within budget
    splits = min(values.size, _SPLIT_WORK // (2 * x.size)) + 1
    unlikely = cands.n - cands.below[first : first + splits]
    if t_hi == 0.0:
        # the unlikely tasks' mean count at the highest node, bounded above by x / C (1 for a
        # task certain there): from the suffix sums of 1 / C, no pass over the counts
        mu = np.minimum(x_hi * cands.inv1[first : first + splits], unlikely)
    else:
        q_max = hit_probability(values - t_hi, x_hi)
        counts = cands.counts[first:]
        mu = np.concatenate((np.cumsum((counts * q_max)[::-1])[::-1], [0.0]))[:splits]
    likely = int(unlikely[0]) - unlikely
    # the misses f that still matter: an asked count j (of the uncertain tasks) needs
    # f = likely + (unlikely count) - j with the unlikely count below `hits`
    asked = [m - certain + 1 for m in cdf_at] + [a - certain for a in pmf_at]
    distinct = np.arange(splits)
    rest = values.size - distinct
    # first a bound below the cost (the reach is at least the mean): only the splits it leaves
    # within budget need their reach (a bisection over every split costs more than the rest)
    hits_low = np.floor(mu).astype(np.int64) + 1
    misses_low = np.maximum(likely + hits_low - min(asked), 1).astype(np.float64)
    unlikely_low = x.size * _band_cost(rest, (hits_low + 1).astype(np.float64))
    if not np.any(t):
        # where the power sums may serve (their conditions with the reach at its least), a pass
        # over the unlikely counts at least
        maybe = _rare_terms(cands, first, distinct, hits_low, float(x.min()), x_hi) > 0
        unlikely_low = np.where(maybe, rest.astype(np.float64), unlikely_low)
    low = x.size * _band_cost(distinct, misses_low + 1.0) + unlikely_low
    keep = np.flatnonzero(low <= _SPLIT_WORK)
    if keep.size == 0:
        return None
    distinct, rest, mu, unlikely, likely = (
        distinct[keep],
        rest[keep],
        mu[keep],
        unlikely[keep],
        likely[keep],
    )
    splits = keep.size
    hits = chernoff_reach(mu, unlikely) + 1
    misses = np.maximum(likely + hits - min(asked), 1)
    unlikely_cost = x.size * _band_cost(rest, (hits + 1).astype(np.float64))
    rare = np.zeros(splits, dtype=np.int64)
    if not np.any(t):
        rare = _rare_terms(cands, first, distinct, hits, float(x.min()), x_hi)
        unlikely_cost = np.where(
            rare > 0, rest * rare + x.size * (rare * hits + hits * hits), unlikely_cost
        )
    work = x.size * _band_cost(distinct, (misses + 1).astype(np.float64)) + unlikely_cost
    best = int(np.argmin(work))
    if work[best] > _SPLIT_WORK:
        return None
    split = first + int(distinct[best])
    return SplitPlan(first, split, int(misses[best]), int(hits[best]), int(rare[best]))


def _rare_terms(
    cands: _Candidates,
    first: int,
    distinct: IntArray,
    hits: IntArray,
    x_lo: float,
    x_hi: float,
) -> IntArray:
    r"""The terms :func:`_rare_law` needs for the unlikely tasks of each split (0: not served).

    It serves them where every unlikely count is above :math:`16x`, and with
    :math:`\rho = \max(2 x / C_{\min}, \text{hits} \cdot r_{\max} / \mu) \le 1/4`
    (:math:`r = q / (1 - q)`, :math:`\mu` the unlikely tasks' mean count): then the power
    series converge like :math:`\rho^m` and each term of Newton's identities is at most
    :math:`\rho` of the one before (no cancellation). The terms stop where :math:`\rho^m` is
    below :math:`10^{-19}`, and at the band's size plus 14.
    """
    start = first + distinct
    inside = start < cands.values.size
    smallest = cands.values[np.minimum(start, cands.values.size - 1)]
    mean = x_lo * cands.inv1[start]
    r_max = x_hi / np.maximum(smallest - x_hi, 1.0)
    with np.errstate(divide="ignore", invalid="ignore"):
        rho = np.maximum(2.0 * x_hi / smallest, hits * r_max / mean)
        needed = np.ceil(np.log(1e-19) / np.log(np.clip(rho, 1e-300, 0.5))) + 1.0
    terms = np.minimum(needed, hits + _SERIES_TERMS + 1.0).astype(np.int64)
    serves = inside & (x_hi / smallest <= _SERIES_RATIO) & (rho <= 0.25)
    return np.where(serves, terms, 0)


def _rare_law(cands: _Candidates, start: int, x: FloatArray, size: int, terms: int) -> FloatArray:
    r"""The unlikely tasks' law on ``0..size - 1`` at shift 0 from their power sums.

    With :math:`q_i = x / C_i` small, :math:`P(U = j) = \prod_i (1 - q_i)\, e_j(r)`, the
    elementary symmetric polynomial of :math:`r_i = q_i / (1 - q_i)`. With
    :math:`Q_m = \sum_i q_i^m` (one pass over the counts, scaled to the highest node),
    :math:`\log \prod (1 - q_i) = -\sum_m Q_m / m`, :math:`R_k = \sum_i r_i^k =
    \sum_{m \ge k} \binom{m-1}{k-1} Q_m`, and Newton's identities
    :math:`j e_j = \sum_{k=1}^{j} (-1)^{k-1} e_{j-k} R_k`; every series has positive terms, and
    :func:`_rare_terms` keeps the identities' alternating terms each below a quarter of the one
    before, and says how many terms the series need (``terms``; the sums :math:`R_k` past them
    are left at 0). The cost is the counts times the terms once, then the band times the terms
    per node (370,000 distinct counts beside 371,000 small ones at :math:`n = 743{,}384`: where
    :func:`band_law` was past its budget and V of the median came out negative). The pool (the
    count past the band, at most :math:`10^{-320}` by the band's reach) is left at 0.
    """
    values, counts = cands.values[start:], cands.counts[start:]
    x_ref = float(x.max())
    u = x_ref / values
    sums = np.empty(terms)
    power = counts.copy()
    with np.errstate(under="ignore"):
        for m in range(terms):
            power *= u
            sums[m] = power.sum()
        scale = x / x_ref
        q_sums = np.cumprod(np.broadcast_to(scale, (terms, x.size)), axis=0) * sums[:, None]
    orders = np.arange(1, terms + 1)
    # summed from the smallest terms up
    log_none = -((q_sums / orders[:, None])[::-1]).sum(axis=0)
    k = np.arange(1, min(size, terms + 1))
    choose = special.comb(orders[None, :] - 1, k[:, None] - 1)  # 0 where m < k
    # (-1)^(k-1) R_k: the signs are exact, so each product is the one of the identities
    signed = np.where(k % 2 == 1, 1.0, -1.0)[:, None] * (choose @ q_sums)
    elementary = np.zeros((size, x.size))
    elementary[0] = 1.0
    for j in range(1, size):
        kk = min(j, k.size)
        # e_{j-1}, e_{j-2}, ..., e_{j-kk} against R_1 .. R_kk
        previous = elementary[j - kk : j][::-1]
        elementary[j] = (previous * signed[:kk]).sum(axis=0) / j
    law = np.zeros((size + 1, x.size))
    law[:size] = np.exp(log_none) * elementary
    return law


def two_count_tails(
    cands: _Candidates,
    x: FloatArray,
    t: FloatArray,
    cdf_at: Sequence[int],
    pmf_at: Sequence[int],
) -> tuple[FloatArray, FloatArray, FloatArray] | None:
    r"""As :func:`band_tails`, exactly, where at most two distinct counts are uncertain.

    The count is then :math:`B_1 + B_2`, two binomial laws, and every asked probability a sum of
    nonnegative products :math:`\sum_j P(B_2 = j)\, P(B_1 > K - j)` (or :math:`\le`, or
    :math:`=`), with :math:`j` over :math:`B_2`'s mean :math:`\pm 40` standard deviations
    (beyond, below :math:`e^{-800}`). The binomial masses and tails come from
    :mod:`scipy.stats` (Boost's incomplete beta function: relative to their size, to about
    :math:`10^{-13}`), not from the Fourier inversion's absolute :math:`10^{-16}`. ``None``
    where more counts are uncertain or the sums would exceed ``_TWO_COUNT_TERMS``. Medians pinned by
    tens of thousands of tasks at two nearby counts had come out with a negative variance here.
    """
    from scipy import stats

    first = int(cands.index_above(float((x + t).min())))
    certain = int(cands.below[first])
    values, counts = cands.values[first:], cands.counts[first:].astype(np.int64)
    if values.size == 0 or values.size > 2:
        return None
    q = hit_probability(values[:, None] - t[None, :], x[None, :])
    m1 = int(counts[0])
    m2 = int(counts[1]) if values.size == 2 else 0
    q1 = q[0]
    q2 = q[1] if values.size == 2 else np.zeros(x.size)
    sd2 = np.sqrt(m2 * q2 * (1.0 - q2))
    lo = np.clip(np.floor(m2 * q2 - 40.0 * sd2 - 10.0), 0, m2).astype(np.int64)
    hi = np.clip(np.ceil(m2 * q2 + 40.0 * sd2 + 10.0), 0, m2).astype(np.int64)
    width = int((hi - lo).max()) + 1
    if width * x.size > _TWO_COUNT_TERMS:
        return None
    j = lo[:, None] + np.arange(width)[None, :]
    inside = j <= hi[:, None]
    with np.errstate(divide="ignore", invalid="ignore", under="ignore"):
        weight = np.where(inside, stats.binom.pmf(j, m2, q2[:, None]), 0.0)
        low = np.zeros((x.size, len(cdf_at)))
        up = np.ones((x.size, len(cdf_at)))
        pmf = np.zeros((x.size, len(pmf_at)))
        for i, m in enumerate(cdf_at):
            if m >= certain:
                rest = (m - certain) - j
                low[:, i] = (weight * stats.binom.cdf(rest, m1, q1[:, None])).sum(axis=1)
                up[:, i] = (weight * stats.binom.sf(rest, m1, q1[:, None])).sum(axis=1)
        for i, a in enumerate(pmf_at):
            if a >= certain:
                rest = (a - certain) - j
                pmf[:, i] = (weight * stats.binom.pmf(rest, m1, q1[:, None])).sum(axis=1)
    return low, up, pmf


def _band_cost(distinct: IntArray, size: FloatArray) -> FloatArray:
    """:func:`band_law`'s work per node: a factor per distinct count, products up the tree.

    Products below the band's size are cheap (their degree is the counts they hold); the
    full-size products, about one per ``size`` counts and one per level of the binary counter,
    cost ``size**2`` each (measured: 32,295 counts on a band of 41 at 16 nodes, 0.16 s).
    """
    levels = np.ceil(np.log2(distinct + 1.0))
    return np.where(distinct > 0, size * (distinct + size * levels), 0.0)


def split_band_tails(
    cands: _Candidates,
    x: FloatArray,
    t: FloatArray,
    cdf_at: Sequence[int],
    pmf_at: Sequence[int],
    plan: SplitPlan,
) -> tuple[FloatArray, FloatArray, FloatArray]:
    r"""As :func:`band_tails`, from the likely tasks' misses and the unlikely tasks' count.

    With :math:`L` likely tasks (misses :math:`F`) and the unlikely tasks' count :math:`U`, the
    uncertain count is :math:`L - F + U`; both laws come from :func:`band_law` on their bands,
    so every probability is a sum of products of nonnegative terms:
    :math:`P(N' \ge j) = \sum_f P(F = f) P(U \ge j - L + f)`. :math:`U` passes its band with
    probability :math:`10^{-320}` at most (the absolute error this leaves), and misses past
    theirs bring no asked count within reach.
    """
    certain = int(cands.below[plan.first])
    likely = int(cands.below[plan.split]) - certain
    miss_law = _law_or_none(cands, plan.first, plan.split, x, t, plan.misses, failures=True)
    if plan.rare:
        hit_law = _rare_law(cands, plan.split, x, plan.hits, plan.rare)
    else:
        hit_law = _law_or_none(cands, plan.split, cands.values.size, x, t, plan.hits)
    # P(U >= j) and P(U <= j) for j = -misses - 1 .. hits + misses + 1, offset by `pad`
    pad = plan.misses + 1
    ones = np.ones((pad, x.size))
    zeros = np.zeros((pad + 1, x.size))
    at_least = np.concatenate((ones, np.cumsum(hit_law[::-1], axis=0)[::-1], zeros))
    at_most = np.concatenate((0.0 * ones, np.cumsum(hit_law[:-1], axis=0), 1.0 + zeros))
    exactly = np.concatenate((0.0 * ones, hit_law[:-1], zeros))
    f = np.arange(plan.misses)
    weights = miss_law[:-1]

    def mixed(table: FloatArray, j: int) -> FloatArray:
        # sum_f P(F = f) table[j - L + f], j - L + f clipped to the padded table
        rows = np.clip(j - likely + f + pad, 0, table.shape[0] - 1)
        out: FloatArray = (weights * table[rows]).sum(axis=0)
        return out

    low = np.zeros((x.size, len(cdf_at)))
    up = np.ones((x.size, len(cdf_at)))
    pmf = np.zeros((x.size, len(pmf_at)))
    for i, m in enumerate(cdf_at):
        if m >= certain:
            # misses past the band leave N' at most m (the pool of F goes to the lower tail)
            low[:, i] = mixed(at_most, m - certain) + miss_law[-1]
            up[:, i] = mixed(at_least, m - certain + 1)
    for i, a in enumerate(pmf_at):
        if a >= certain:
            pmf[:, i] = mixed(exactly, a - certain)
    return low, up, pmf


def _law_or_none(
    cands: _Candidates,
    start: int,
    stop: int,
    x: FloatArray,
    t: FloatArray,
    size: int,
    *,
    failures: bool = False,
) -> FloatArray:
    """:func:`band_law` of the distinct counts ``start:stop`` (all at 0 where there are none)."""
    if stop > start:
        return band_law(
            cands.values[start:stop], cands.counts[start:stop], x, t, size, failures=failures
        )
    law = np.zeros((size + 1, x.size))
    law[0] = 1.0
    return law


def chernoff_reach(mu: FloatArray, cap: IntArray) -> IntArray:
    r"""A count that a Bernoulli sum of mean ``mu`` exceeds with probability 1e-320 at most.

    Chernoff's bound :math:`P(R \ge s) \le e^{-\mu} (e \mu / s)^s` (:math:`s > \mu`) grows with
    :math:`\mu`, so a bound on the mean bounds every sum below it. The reach is the smallest
    :math:`s - 1` where the bound falls to ``exp(LOG_REACH)``, found by bisection, and at most
    ``cap`` (the number of tasks: past it the sum cannot go).
    """
    mu = np.asarray(mu, dtype=np.float64)
    cap = np.asarray(cap, dtype=np.int64)

    def log_bound(s: IntArray) -> FloatArray:
        # s (1 + log mu - log s) - mu, -inf where no task can succeed
        out = np.full(s.shape, -np.inf)
        live = mu > 0
        ss, mm = s[live].astype(np.float64), mu[live]
        out[live] = np.where(ss > mm, ss * (1.0 + np.log(mm) - np.log(ss)) - mm, 0.0)
        return out

    # bisection on s in (lo, hi]: the bound holds at hi (past every task it holds trivially)
    lo = np.minimum(np.floor(mu).astype(np.int64), cap)
    hi = cap + 1
    while True:
        gap = hi - lo > 1
        if not np.any(gap):
            break
        mid = np.where(gap, (lo + hi) // 2, hi)
        holds = log_bound(mid) <= LOG_REACH
        hi = np.where(gap & holds, mid, hi)
        lo = np.where(gap & ~holds, mid, lo)
    return np.minimum(hi - 1, cap)


def _log_difference_bound(alpha: FloatArray, beta: FloatArray, d: FloatArray) -> FloatArray:
    r"""Chernoff's bound on :math:`\log P(A - B \ge d)` for Poisson-dominated :math:`A`, :math:`B`.

    :math:`A` and :math:`B` are independent sums of Bernoulli variables of means
    :math:`\alpha` and :math:`\beta`, so :math:`E[e^{\lambda A}] \le e^{\alpha(e^\lambda -
    1)}` and :math:`E[e^{-\lambda B}] \le e^{\beta(e^{-\lambda} - 1)}`; the exponent
    :math:`\alpha(z - 1) + \beta(1/z - 1) - d \log z` is least at
    :math:`z = (d + \sqrt{d^2 + 4\alpha\beta}) / (2\alpha)`, and where :math:`\alpha = 0` at
    :math:`z \to \infty` (:math:`d > 0`: :math:`-\infty`) or :math:`1/z = -d / \beta`. 0 where
    :math:`d \le \alpha - \beta` (no bound).
    """
    d = np.asarray(d, dtype=np.float64)
    with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
        safe = np.where(alpha > 0.0, alpha, 1.0)
        z = (d + np.sqrt(d * d + 4.0 * alpha * beta)) / (2.0 * safe)
        log = alpha * (z - 1.0) + beta * (1.0 / z - 1.0) - d * np.log(z)
        # alpha = 0: P(B <= -d), at most exp(-beta h(m / beta)), h(u) = u log u - u + 1, m = -d
        m = np.maximum(-d, 0.0)
        term = np.where(m > 0.0, m * np.log(np.where(m > 0.0, m, 1.0) / beta), 0.0)
        only_b = np.where(d > 0.0, -np.inf, -(term - m + beta))
        log = np.where(alpha > 0.0, log, only_b)
        return np.where(d <= alpha - beta, 0.0, np.minimum(log, 0.0))


def band_law(
    values: FloatArray,
    multiplicities: FloatArray,
    x: FloatArray,
    t: FloatArray,
    size: int,
    *,
    failures: bool = False,
) -> FloatArray:
    r"""The law of the count of tasks with rank at most ``x`` on the band ``0..size``.

    With ``failures``, the law of the count of tasks with rank above ``x`` instead (each with
    probability :math:`p`, formed without cancellation as above).

    Parameters
    ----------
    values, multiplicities : numpy.ndarray
        The tasks' distinct candidate counts :math:`C` and how many tasks have each.
    x, t : numpy.ndarray
        The nodes and their shifts: a task's rank is at most :math:`x` with probability
        :math:`\min(1, x / (C - t))` (1 where :math:`C - t \le x`).
    size : int
        :math:`D \ge 1`, the band's counts below its pool.

    Returns
    -------
    numpy.ndarray of shape (size + 1, nodes)
        :math:`P(N = j)` for :math:`j < D` and :math:`P(N \ge D)` in the last row.

    Examples
    --------
    Two tasks, each with rank at most 1 in 2 candidates with probability 1/2:

    >>> band_law(np.array([2.0]), np.array([2.0]), np.array([1.0]), np.array([0.0]), 1)[:, 0]
    array([0.25, 0.75])
    """
    if size == 1 and not failures:
        return _none_or_some(values, multiplicities, x, t)
    per_block = max(1, _BLOCK_ELEMENTS // (x.size * (size + 1)))
    # partial products with their depth in the tree; two of one depth are merged at once
    stack: list[tuple[int, FloatArray]] = []
    for v0 in range(0, values.size, per_block):
        block = _binomials(
            values[v0 : v0 + per_block],
            multiplicities[v0 : v0 + per_block],
            x,
            t,
            size,
            failures=failures,
        )
        poly = _reduce(block, size)
        depth = 0
        while stack and stack[-1][0] == depth:
            poly = _product(stack.pop()[1][np.newaxis], poly[np.newaxis], size)[0]
            depth += 1
        stack.append((depth, poly))
    law = np.zeros((1, x.size))
    law[0] = 1.0
    while stack:
        law = _product(stack.pop()[1][np.newaxis], law[np.newaxis], size)[0]
    out = np.zeros((size + 1, x.size))
    out[: law.shape[0]] = law
    return out


def _none_or_some(
    values: FloatArray, multiplicities: FloatArray, x: FloatArray, t: FloatArray
) -> FloatArray:
    r"""The band of size 1: :math:`P(N = 0) = \prod p^k` and :math:`P(N \ge 1)`, from one sum.

    :math:`S = \sum k \log p` is summed pairwise (each term :math:`\log(1 - q)` by ``log1p``
    where :math:`q < 1/2`, all of one sign), so :math:`e^S` and :math:`-\operatorname{expm1}(S)`
    are both relative to their size: a few units in the last place times :math:`|S|` and the
    depth of the sum. A certain task (:math:`p = 0`) makes :math:`S = -\infty`.
    """
    log_none = np.zeros(x.size)
    per_block = max(1, _BLOCK_ELEMENTS // x.size)
    with np.errstate(divide="ignore", invalid="ignore"):
        for v0 in range(0, values.size, per_block):
            # (nodes, counts): each node's terms contiguous, so summed pairwise
            room = values[np.newaxis, v0 : v0 + per_block] - t[:, np.newaxis]
            q = x[:, np.newaxis] / room
            terms = np.log1p(-np.minimum(q, 0.5))
            # q >= 1/2 (and C - t <= 0): log((C - t - x) / (C - t)), -inf where certain
            rows, cols = np.nonzero((q >= 0.5) | (q < 0.0))
            if rows.size:
                r, xr = room[rows, cols], x[rows]
                terms[rows, cols] = np.where(r > xr, np.log((r - xr) / r), -np.inf)
            counts = multiplicities[v0 : v0 + per_block]
            if np.all(counts == 1.0):
                log_none += terms.sum(axis=1)
            else:
                log_none += (terms * counts[np.newaxis, :]).sum(axis=1)
    return np.stack((np.exp(log_none), -np.expm1(log_none)))


def _binomials(
    values: FloatArray,
    multiplicities: FloatArray,
    x: FloatArray,
    t: FloatArray,
    size: int,
    *,
    failures: bool = False,
) -> FloatArray:
    """Each distinct count's binomial law on the band, as ``(counts, degree + 1, nodes)``."""
    room = values[:, np.newaxis] - t[np.newaxis, :]
    xx = x[np.newaxis, :]
    inside = room > xx
    safe = np.where(inside, room, 2.0 * xx)
    q = np.where(inside, xx / safe, 1.0)
    p = np.where(inside, (safe - xx) / safe, 0.0)
    if failures:
        q, p = p, q
    degree = min(int(multiplicities.max()), size)
    out = np.zeros((values.size, degree + 1, x.size))
    # one task per count (the common case): the law is (p, q), certain tasks included
    single = np.flatnonzero(multiplicities == 1)
    out[single, 0] = p[single]
    out[single, 1] = q[single]
    several = np.flatnonzero(multiplicities > 1)
    if several.size:
        out[several] = _several(
            multiplicities[several], q[several], p[several], degree, size, failures=failures
        )
    return out


def _several(
    k: FloatArray, q: FloatArray, p: FloatArray, degree: int, size: int, *, failures: bool = False
) -> FloatArray:
    r"""The binomial laws of counts shared by ``k > 1`` tasks, as :func:`_binomials` gives them.

    Each term :math:`\binom{k}{j} q^j p^{k - j}` comes from the one before, times
    :math:`\frac{k - j + 1}{j} \frac{q}{p}`, from :math:`p^k = e^{k \log p}`: a few units in the
    last place per step and :math:`k |\log p|` (the mean count, where :math:`q` is small)
    for the start. Where :math:`p^k` would underflow (below :math:`e^{-700}`) the terms are
    formed in the log domain instead, whose error is the unit in the last place times the
    sizes of :math:`\log \binom{k}{j}`, :math:`j \log q` and :math:`(k - j) \log p` (for
    5000 tasks sharing a count, up to :math:`10^{-13}`). The pool is the complement of the band
    or the incomplete beta function (module docstring).
    """
    # with failures, q is a task's miss: 0 where it is certain
    inside = q > 0.0 if failures else p > 0.0
    kk = k[:, np.newaxis]
    with np.errstate(divide="ignore"):
        log_q = np.log(q)
        # log(1 - q) without cancellation: from q where it is small, from p otherwise
        log_p = np.where(q < 0.5, np.log1p(-np.minimum(q, 0.5)), np.log(p))
    out = np.zeros((k.size, degree + 1, q.shape[1]))
    log_choose = np.zeros_like(k)
    band = np.zeros(q.shape)  # the band's mass below the pool
    with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
        start = kk * log_p
        recur = start >= -700.0
        logs = not np.all(recur)
        ratio = q / p
        term_recur = np.exp(np.where(recur, start, 0.0))
        last = min(degree, size - 1)
        # the steps (k - j + 1) / j of every j at once, row j - 1 for j
        js = np.arange(1.0, last + 1.0)[:, np.newaxis]
        steps = np.maximum(k[np.newaxis, :] - (js - 1.0), 0.0) / js
        every = bool(np.all(inside))
        fewest = float(k.min()) if k.size else 0.0
        for j in range(last + 1):
            if j:
                step = steps[j - 1]
                term_recur = term_recur * (step[:, np.newaxis] * ratio)
                if logs:
                    # log C(k, j) = log C(k, j - 1) + log((k - j + 1) / j); -inf once j > k
                    log_choose = log_choose + np.log(step)
            term = term_recur
            if logs:
                log_term = np.exp(log_choose[:, np.newaxis] + j * log_q + (kk - j) * log_p)
                term = np.where(recur, term_recur, log_term)
            # where p = 0 (every task certain) or j > k there is no mass
            if j > fewest:
                term = np.where(inside & (j <= kk), term, 0.0)
            elif not every:
                term = np.where(inside, term, 0.0)
            out[:, j] = term
            band += term
    if degree == size:
        # P(Bin(k, q) >= D): the complement where the band holds at most half the mass, else
        # the incomplete beta function, which keeps a small pool relative
        pool = np.where(band <= 0.5, 1.0 - band, 0.0)
        small = inside & (band > 0.5) & (kk >= size)
        if np.any(small):
            trials = np.broadcast_to(kk, q.shape)[small]
            pool[small] = special.betainc(float(size), trials - size + 1.0, q[small])
        out[:, size] = np.where(inside, pool, 0.0)
    # the certain tasks (C - t <= x): all k of them count, at k or in the pool (no failure)
    rows, nodes = np.nonzero(~inside)
    if rows.size:
        out[rows, :, nodes] = 0.0
        held = 0 if failures else np.minimum(k[rows], degree).astype(np.int64)
        out[rows, held, nodes] = 1.0
    return out


def _reduce(polys: FloatArray, size: int) -> FloatArray:
    """The product of a stack of band polynomials ``(count, degree + 1, nodes)``, pairwise."""
    while polys.shape[0] > 1:
        if polys.shape[0] % 2:
            one = np.zeros((1, *polys.shape[1:]))
            one[0, 0] = 1.0
            polys = np.concatenate((polys, one))
        polys = _product(polys[0::2], polys[1::2], size)
    product: FloatArray = polys[0]
    return product


def _product(a: FloatArray, b: FloatArray, size: int) -> FloatArray:
    """Products of band polynomials ``(pairs, degree + 1, nodes)``, pooled at ``size``.

    A coefficient of degree ``size`` is the pool (every count at or above it): its products land
    in the pool, as do all others of degree at least ``size``.
    """
    da, db = a.shape[1] - 1, b.shape[1] - 1
    if da + db <= size:
        out = np.zeros((a.shape[0], da + db + 1, a.shape[2]))
        for i in range(da + 1):
            out[:, i : i + db + 1] += a[:, i : i + 1] * b
        return out
    out = np.zeros((a.shape[0], size + 1, a.shape[2]))
    # the pool: a's degree i with b's degrees >= size - i, each b-suffix summed once (nonnegative)
    tail = np.zeros((b.shape[0], b.shape[2]))
    for j in range(db, -1, -1):
        tail += b[:, j]
        if size - j > da:
            break
        out[:, size] += a[:, size - j] * tail
    for i in range(da + 1):
        exact = min(db + 1, size - i)  # b's degrees landing below the pool
        if exact > 0:
            out[:, i : i + exact] += a[:, i : i + 1] * b[:, :exact]
    return out
