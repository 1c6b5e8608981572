r"""Exact null distribution of the median rank and of its inverse.

Under the null each rank :math:`r_i` is uniform on :math:`\{1, \dots, C_i\}`, independently for
:math:`i = 1, \dots, n`. This module gives the moments of :func:`numpy.median` of the ranks,

.. math::

    M = \begin{cases} X_{(m)}, & n = 2m - 1, \\
                      \tfrac12 (X_{(a)} + X_{(a+1)}), & n = 2a, \end{cases}

(:math:`X_{(k)}` the :math:`k`-th smallest rank) and of :math:`1 / M`, together with the tail and
the probability mass function of any order statistic :math:`X_{(k)}`. Everything about one
multiset of counts lives in one :class:`MedianDistribution`, computed once and shared by the
median and the inverse median (:func:`median_distribution` keeps the last few in a small cache).

Method
------
Everything rests on the count :math:`N_x = \#\{i : r_i \le x\}`, a Poisson-binomial variable with
success probabilities :math:`p_i(x) = \min(1, x / C_i)`, and on the identities
:math:`P(X_{(k)} > x) = P(N_x \le k - 1)` and, for the two middle order statistics,
:math:`X_{(a)} \le x < X_{(a+1)} \iff N_x = a`.

*Single order statistics.* Summation by parts about an integer :math:`c` near the median gives
:math:`\mathbb{E}[g(X)] = g(c) + \sum_x (g(x+1) - g(x)) (P(X > x) - \mathbb{1}[x < c])`, used with
:math:`g(x) = x - c, (x - c)^2, 1/x - 1/c, (1/x - 1/c)^2`: the moments are accumulated centred,
each tail taken from the side where it is small. Only the window of :math:`x` where both tails
exceed :math:`10^{-24}` is summed (bisection on Bennett's inequality). The tails come from an
exact dynamic programme over the uncertain tasks when that is cheap, else from a lattice Fourier
inversion of the characteristic function built from power sums of :math:`x / C_i` over the
distinct counts (:mod:`rankstats.null.median_tails`), to about :math:`10^{-16}` absolute (a few
:math:`10^{-15}` at the centre of a law of thousands of tasks); a block of nodes with no count
among them takes the inversion at Chebyshev points of its range, interpolated. Long
windows are summed by discrete Gauss (Gram) rules on panels cut at the counts (where the tails
stop being one polynomial) and at powers of four (where :math:`1/x` changes scale); short ones
point by point (:mod:`rankstats.null.median_rules`).

*Even n.* Telescoping :math:`\psi(X_{(a)}, X_{(a+1)})` in both arguments adds to the single-sum
terms the double sum :math:`\sum_{x<y} H(x, y)\, \Delta_1\Delta_2\psi(x, y)` with
:math:`H(x, y) = P(N_x = a, N_y = a)`; for the median :math:`\Delta_1\Delta_2\psi = 1/2` and the
double sum is :math:`\mathbb{E}[G(G-1)]/2`, :math:`G = X_{(a+1)} - X_{(a)}`, so that
:math:`\mathbb{V}[M] = (\mathbb{V}[X_{(a)}] + \mathbb{V}[X_{(a+1)}])/2 - \mathbb{V}[G]/4`.
The joint law factorises (:mod:`rankstats.null.median_gap`):
:math:`H(x, y) = P(N_y = a)\, \kappa(x, y)` with the explicit kernel
:math:`\kappa(x, y) = \alpha(x) / \alpha(y)`, :math:`\alpha(x) = x^{a - c(x)} / \prod_{C_i > x}
C_i`, :math:`c(x) = \#\{C_i \le x\}`. So the double sum needs only the point masses
:math:`P(N_y = a)` at the nodes :math:`y` of a single sum and, per node, a sum of the kernel
(:math:`\le (x/y)^{a - c(y)}`) over :math:`x < y`; no second Poisson-binomial law. The kernel
sums are exact (every :math:`x`, the log-kernel's running sums kept as a double-double) when
few, else discrete Gauss rules in :math:`t = y - x` on pieces cut where :math:`x` crosses a count
(the kernel's only kinks). The nodes :math:`y` are those of the single sums: where they are
integers, or where no count lies within the kernel's reach below the window (the kernel sum then
continues smoothly to non-integer :math:`y`), each node takes its own kernel sums; otherwise the
kernel sums, an analytic function of :math:`y` between consecutive counts, are interpolated
there from exact sums at a few integers near Chebyshev points
(:mod:`~rankstats.null.median_gap_intervals`, with its derivation and error bound), and the
panels next to a count where the kernel varies within a few integers take every integer (found
before the tails are evaluated). Where the interpolants would need more exact sums than the
integer nodes would (the Gram nodes and the interpolation points against twice the integer
nodes: many distinct counts in a narrow window), such inputs take integer nodes instead:
every integer on panels shorter than 256, integer interpolatory rules on longer ones, with as
many nodes (8 to 32) as the summands' scale asks, and then the single sums take those nodes
too, so that the tails and point masses are evaluated once. A node with no count within the
kernel's reach has the kernel :math:`(1 - t/y)^{a - c(y)}` on all its shifts, summed over every
:math:`t` as a block of nodes by shifts. For :math:`n = 2` the inverse median is summed
directly over the trapezoidal law of :math:`r_1 + r_2`.

Error bound
-----------
What is dropped: tails below :math:`10^{-24}` in each single sum, and below the window at most
:math:`10^{-15}` of the inverse median's sums (whose weights :math:`1/x^2` grow towards 0:
:func:`~rankstats.null.median_tails.inverse_tail`); in the double sum, kernel
terms below :math:`\tau = \min(10^{-12}, \max(10^{-18}, 10^{-16} n))` of the largest and nodes
whose point mass is below :math:`\tau` of the largest; the interpolated kernel sums within
:math:`10^{-16}` by their bound and :math:`10^{-13}` of the largest by their check. The double
sum enters
:math:`\mathbb{V}[M]` through :math:`\mathbb{V}[G]/4 \approx \mathbb{V}[M]/n`, so a relative
error :math:`\tau` in it moves :math:`\mathbb{V}[M]` by about :math:`2\tau/n \le 2 \cdot 10^{-16}`
relative (and the inverse median's by less: its weights carry a further :math:`(G/X)^2`).
What is approximated: the tails, to about :math:`10^{-16}` absolute (exact dynamic programme, or
Fourier inversion); sums over windows longer than :math:`48 \times 32` integers, by Gram rules of
up to 16 nodes (exact to degree 31) on panels no longer than a fiftieth of the window (about half
a standard deviation) and than their distance from 0, on which the summands are analytic: the
rule error is below :math:`10^{-15}` relative. Integer rules of :math:`\nu` nodes are exact to
degree :math:`\nu - 1`, and take the fewest :math:`\nu \ge 8` with
:math:`(L / 2s)^\nu \le 10^{-16}` (:math:`L` the panel, :math:`s` the summands' scale). The
kernel sums' pieces in :math:`t` (at most four decay lengths :math:`y / (a - c(y))`) take as
many Gauss nodes as an exponential of the decay length :math:`d` asks, the Gauss-Legendre error
:math:`K_\nu r^{2\nu} e^{2r} \le 10^{-17}` relative with :math:`r = L / 2d` (11 nodes on four
decay lengths), and no fewer than the weights' scale :math:`y` asks. Measured against summing
every integer of the window with exact kernel sums, and against an independent dynamic programme
over all pairs :math:`x < y` (tests): :math:`\mathbb{E}` to a few units in the last place,
:math:`\mathbb{V}` to :math:`10^{-14}` relative or better, for :math:`n` from 2 to
:math:`10^6` and counts up to :math:`10^{12}`.

*Few tasks.* For the inverse median this decomposition cancels when the two middle ranks are
orders of magnitude apart (e.g. :math:`C = (1, 1, 10^6, 10^6)`: :math:`X_{(2)} = 1`,
:math:`X_{(3)} \sim 10^6`): terms of the size of :math:`\mathbb{E}[1/X_{(a)}] = 1` leave
:math:`\mathbb{E}[1/M] \approx 10^{-5}`, and about :math:`\log_{10}` of that ratio is lost in
digits (:math:`10^{-11}` there, :math:`10^{-4}` at :math:`10^{12}`); two very different counts
at :math:`n = 38` lost up to :math:`10^{-6}` too. So :math:`n \le 16` tasks and every even
:math:`n \le 40` are summed instead over the point masses of the middle order statistics in
product form, every term nonnegative (:mod:`rankstats.null.median_small`): :math:`10^{-15}`
relative against exact power sums and 50-digit harmonic sums at counts mixing 1, small,
:math:`10^6`, :math:`10^9` and :math:`10^{12}`. (Those sums hold up to 56 tasks, but beyond 40
the path below is cheaper: 0.7 of their time in the median over 250 inputs of 42 to 56 tasks,
and 0.4 to 0.6 for many groups of one size.)

*Many tasks, middle ranks far apart.* Beyond 40 tasks the decomposition above is kept when it is
well conditioned: the sizes of the terms of each of :math:`\mathbb{V}[M]`,
:math:`\mathbb{E}[1/M]` and :math:`\mathbb{V}[1/M]` (single sums, point-mass sums, double
sums, squared shift) within 50 times its value. Measured against the two-count pool references
(about 90 inputs of 58 to 200 tasks), its error was at most :math:`8.4 \cdot 10^{-15}` times
that ratio (with the limit at :math:`10^3`, 28 tasks at 50 candidates beside 30 at :math:`2
\cdot 10^6` had :math:`\mathbb{V}[1/M]` :math:`2.6 \cdot 10^{-12}` off, its terms 500 times
its value), so that 50 keeps about :math:`4 \cdot 10^{-13}` relative. Otherwise (e.g. half
the tasks at 3 candidates and half at :math:`10^9`: the decomposition had lost :math:`3 \cdot
10^{-10}` on :math:`\mathbb{E}[1/M]` and :math:`4 \cdot 10^{-9}` on :math:`\mathbb{V}[1/M]`,
up to :math:`10^{-2}` with counts 2 and :math:`10^{12}`), the moments are summed from the upper
middle rank with nonnegative pair terms (:mod:`rankstats.null.median_even`, with its method and
error bound): :math:`10^{-14}` relative or better against a 30-60 digit reference for two
separated counts at :math:`n = 66 .. 1000`. Where this path begins (even :math:`n` from 34 to
56, checked with the product form's range cut to 32, 2026-11-28), the main path with its
condition check was within :math:`3.3 \cdot 10^{-14}` of the two-count pool references (240
inputs: small counts 2 to 60 held by :math:`a - 1` to :math:`n - 2` tasks beside :math:`10^4`
to :math:`10^{12}`), :math:`2.7 \cdot 10^{-15}` of the exact sums over every pair (400 inputs
of up to six counts up to 200) and :math:`5 \cdot 10^{-14}` of the product form (600 inputs of
the five shapes of the shape sweep).

Where the centres of the two middle ranks (the smallest :math:`x` with
:math:`\mathbb{E}[N_x] \ge k - 1/2`) are more than 2000 times apart, the decomposition would
fail that test, and the sums from the upper middle rank are taken at once. If the double sum
cannot be done within its budget of six million kernel terms (counted before any is summed),
the older quadrature of :math:`H` over :math:`(x, t)`
(:mod:`rankstats.null.median_gap_quadrature`, about :math:`10^{-8}`) is the last resort: it is
reached from a few :math:`10^5` tasks with counts spread over :math:`1..10^{12}`, where the
double sum weighs :math:`1/n` in :math:`\mathbb{V}[M]` (at :math:`n = 10^6`: :math:`3 \cdot
10^{-13}` relative on :math:`\mathbb{V}[M]` against the kernel sums with an unlimited budget).

Cost
----
The even case adds to the odd one the point masses at the same nodes (one more row of the same
dynamic programme or Fourier inversion) and the kernel sums. Those over integer nodes are formed
as two-dimensional windows (nodes by shifts) of the running log-kernel and of the weight tables;
the discrete Gauss rules come from one table per node count
(:func:`~rankstats.null.median_rules._gram_rules`: no eigen-decomposition per new panel length);
inner products are pairwise sums in one thread (OpenBLAS's threaded dot products stalled for
milliseconds on a busy machine). Measured in one run against the odd neighbour (one more task,
CPU time, ``python benchmarks/run.py median``): within 1.3 to 1.5 times at n = 100, 4000, 20466
and :math:`10^6`; 3 to 10 times for the few-task product form with huge counts (n = 4, counts
of :math:`10^{12}`: 3.3 ms, 4.7 times), long windows
with many distinct counts (:math:`n = 64` to 1000 with counts in :math:`1..10^9`: 30 to 120 ms)
and counts of 3 and :math:`10^9` in equal numbers (0.15 s at :math:`n = 1000`). The widest
inputs tried, :math:`10^2..10^6` tasks with counts uniform or log-uniform in
:math:`1..10^{12}`, take at most about a second (:math:`n = 10^6`, where the odd neighbour
takes 0.2 s), and none more than 5 MB beyond the input's own arrays at :math:`n = 10^4`.

This module (about 670 lines) keeps the public functions and the moment assembly together; the
numerical pieces live in the ``median_*`` modules beside it.

Thread safety: a :class:`MedianDistribution` computes its moments once, under its own lock; the
cache of :func:`median_distribution` and the cache of Gram rules are guarded by locks. All are
safe to use from several threads.
"""

from __future__ import annotations

import hashlib
import numbers
import threading
from collections import OrderedDict
from typing import Any

import numpy as np

from rankstats.arrays import FloatArray, IntArray
from rankstats.null.grouping import distinct_counts
from rankstats.null.median_even import (
    _centre,
    cheaper_nodes,
    even_moments,
    single_sums,
    window_nodes,
    window_scale,
)
from rankstats.null.median_gap import continues, gap_sums
from rankstats.null.median_gap_quadrature import _T_ENUM_BUDGET, _GapSums
from rankstats.null.median_rules import (
    IntegerWindow,
    dot,
    integer_nodes,
)
from rankstats.null.median_small import (
    EVEN_N,
    SMALL_N,
    small_moments,
    two_tasks,
)
from rankstats.null.median_tails import _Candidates, _Evaluator
from rankstats.validation import check_num_candidates, check_positive_int

__all__ = [
    "MedianDistribution",
    "inverse_median_moments",
    "median_distribution",
    "median_moments",
    "order_statistic_pmf",
    "order_statistic_sf",
]


#: distributions kept by :func:`median_distribution`
_CACHE_SIZE = 4
#: the even-n gap sums drop terms below 1e-16 n of the largest, at most this much
_GAP_TOLERANCE_MAX = 1e-12
#: even n: moments whose terms exceed this multiple of their value are summed again from the
#: upper middle rank (:mod:`rankstats.null.median_even`). Against the two-count pool references
#: (about 90 inputs of 58 to 200 tasks, conditions 15 to 900) the decomposition's error was at
#: most 8.4e-15 times the condition: V[1/M] was 2.6e-12 off at 500 (28 tasks at 50 beside 30
#: at 2e6) when the limit was 1e3. At 50 it keeps about 4e-13 of a moment's value; the sums
#: from the upper one cost two to five times as much
_CONDITION_MAX = 50.0
#: even n whose lower middle rank's centre is this many times below the upper one's go to the
#: sums from the upper middle rank directly (the decomposition would fail its condition test)
_SEPARATION = 2e3

Moments = tuple[float, float, float, float]


def _moments(cands: _Candidates, *, t_budget: int = _T_ENUM_BUDGET) -> Moments:
    """E and V of the median and of its inverse (see :func:`median_moments`)."""
    n = cands.n
    if cands.c_max == 1:
        return 1.0, 0.0, 1.0, 0.0
    if n == 2 and cands.distinct[0] > 1:
        return two_tasks(int(cands.distinct[0]), int(cands.distinct[-1]))
    if n == 2:
        return two_tasks(1, int(cands.distinct[-1]))
    if n <= SMALL_N or (n % 2 == 0 and n <= EVEN_N):
        moments = small_moments(np.repeat(cands.distinct, cands.counts.astype(np.int64)))
        if n == 1:  # one uniform rank: the median's moments in closed form
            c = float(cands.distinct[0])
            return (c + 1.0) / 2.0, (c - 1.0) * (c + 1.0) / 12.0, moments[2], moments[3]
        return moments
    ks = [(n + 1) // 2] if n % 2 else [n // 2, n // 2 + 1]
    windows = [cands.window(k) for k in ks]
    if n % 2 == 0 and _SEPARATION * _centre(cands, ks[0], 1, cands.c_max) < _centre(
        cands, ks[1], 1, cands.c_max
    ):
        # the middle ranks are orders of magnitude apart (their centres): the decomposition
        # below would fail its condition test, so go to the sums from the upper middle rank
        from_upper = even_moments(cands)
        if from_upper is not None:
            return from_upper
    lo = max(min(w[0] for w in windows), 1)
    hi = max(min(max(w[1] for w in windows), cands.c_max), lo)
    c0 = cands.centre(lo, hi)
    nodes = window_nodes(cands, lo, hi, c0)
    x, w, breaks, piece = nodes.x, nodes.w, nodes.breaks, nodes.piece
    a = ks[0]
    even = n % 2 == 0
    # the gap term weighs about 1/n in V[M]: its relative error may grow with n (module docs)
    tolerance = min(_GAP_TOLERANCE_MAX, max(1e-18, 1e-16 * n))
    on_integers = bool(np.all(x == np.floor(x)))
    cells = None
    if even and not on_integers and not continues(cands.values, cands.below, a, x, tolerance):
        # a count within the kernel's reach: either the gap sums interpolate their inner sums
        # between the counts at the Gram nodes (the pieces next to a count where the kernel
        # varies within a few integers take every integer), or every sum takes integer nodes
        # (the tails and point masses evaluated once), whichever evaluates at fewer nodes
        integers = IntegerWindow(lo, hi, breaks, piece, window_scale(lo, hi))
        x, w, on_integers, cells = cheaper_nodes(cands, nodes, a, tolerance, integers)
    evaluator = _Evaluator(cands, float(lo), float(hi), 0.0)
    lower, upper, pmf, _ = evaluator.evaluate(x, 0.0, [a - 1], [a] if even else [])
    # P(X > x) - 1[x < c0], from whichever tail keeps its relative accuracy
    single = single_sums(x, w, np.where(x < c0, -upper[:, 0], lower[:, 0]), c0)
    s1, s2, e_inv, m2_inv = single.s1, single.s2, single.e_inv, single.m2_inv
    if not even:
        return c0 + s1, s2 - s1 * s1, 1.0 / c0 + e_inv, m2_inv - e_inv * e_inv
    mass = pmf[:, 0]
    shift = s1 + 0.5 * dot(w, mass)
    m2_terms = mass * (x - c0 + 0.25)
    m2 = s2 + dot(w, m2_terms)
    e_terms = mass / (x * (2.0 * x + 1.0))
    e_inv -= dot(w, e_terms)
    s = 2.0 * x
    u_s = (2.0 * c0 - s) / (s * c0)
    u_s1 = (2.0 * c0 - s - 1.0) / ((s + 1.0) * c0)
    m2_inv_terms = mass * (-2.0 / (s * (s + 1.0))) * (u_s1 + u_s)
    m2_inv += dot(w, m2_inv_terms)
    # the sizes of the terms, for the condition of the sums below
    aw = np.abs(w)
    sizes = [
        dot(aw, np.abs(single.s2_terms)) + dot(aw, np.abs(m2_terms)),
        1.0 / c0 + dot(aw, np.abs(single.e_inv_terms)) + dot(aw, e_terms),
        dot(aw, np.abs(single.m2_inv_terms)) + dot(aw, np.abs(m2_inv_terms)),
    ]
    sums = gap_sums(
        cands.values,
        cands.below,
        a,
        x,
        w,
        mass,
        float(c0),
        tolerance=tolerance,
        cells=cells,
    )
    if sums is None and not on_integers:
        # sum over integer nodes, where the kernel sums are exact
        xi, wi = integer_nodes(lo, hi, breaks, piece, window_scale(lo, hi))
        _, _, pmf_i, _ = evaluator.evaluate(xi, 0.0, [], [a])
        sums = gap_sums(
            cands.values,
            cands.below,
            a,
            xi,
            wi,
            pmf_i[:, 0],
            float(c0),
            tolerance=tolerance,
        )
    if sums is None:
        gap = _GapSums(cands, lo, hi, a, c0)
        shifted = _Evaluator(cands, float(lo), float(hi), float(gap.t_max))
        sums = list(gap.sums(shifted, t_budget))
    g0, g1, g2 = sums
    m2 -= 0.5 * g0
    e_inv -= g1
    m2_inv -= g2
    found: Moments = (c0 + shift, m2 - shift * shift, 1.0 / c0 + e_inv, m2_inv - e_inv * e_inv)
    # the condition of each moment: the sizes of its terms over its value; where the terms
    # cancel (the middle ranks orders of magnitude apart), sum from the upper one instead
    sizes[0] += 0.5 * abs(g0) + shift * shift
    sizes[1] += abs(g1)
    sizes[2] += abs(g2) + e_inv * e_inv
    values = (found[1], found[2], found[3])
    if any(
        not size <= _CONDITION_MAX * abs(value) for size, value in zip(sizes, values, strict=True)
    ):
        from_upper = even_moments(cands)
        if from_upper is not None:
            return from_upper
    return found


class MedianDistribution:
    r"""The null law of the order statistics of ranks :math:`r_i \sim \mathcal{U}\{1..C_i\}`.

    One object per multiset of candidate counts holds what the median and the inverse median
    need: the moments of both (computed together, once, on first use) and the tails and point
    masses of any order statistic. Get one from :func:`median_distribution`, which shares it
    between callers with the same counts.

    Parameters
    ----------
    num_candidates : numpy.ndarray of shape (n,)
        The number of candidates :math:`C_i \ge 1` of each ranking task: integers up to
        :math:`2^{53}` (a ``ValueError`` names any other, and an empty input). The
        array is not kept (only its distinct values and their multiplicities).

    Notes
    -----
    Safe to share between threads: the moments are computed under a lock, and nothing else
    changes after construction. See the module documentation for the method and its error bound.

    Examples
    --------
    >>> import numpy as np
    >>> dist = MedianDistribution(np.array([1, 2, 3, 5]))
    >>> [round(value, 12) for value in dist.median_moments()]
    [1.6, 0.223333333333]
    >>> [round(value, 12) for value in dist.inverse_median_moments()]
    [0.684444444444, 0.043832098765]
    """

    def __init__(self, num_candidates: IntArray, counts: IntArray | None = None) -> None:
        self._cands = _Candidates(*_checked_counts(num_candidates, counts))
        self._lock = threading.Lock()
        self._moments: Moments | None = None

    @property
    def num_tasks(self) -> int:
        """The number of ranks :math:`n`."""
        return self._cands.n

    def moments(self) -> Moments:
        r"""Return :math:`(\mathbb{E}[M], \mathbb{V}[M], \mathbb{E}[1/M], \mathbb{V}[1/M])`."""
        with self._lock:
            if self._moments is None:
                e, v, e_inv, v_inv = _moments(self._cands)
                # a variance that rounds to zero (a certain median) is +0.0, never -0.0 or a
                # rounding below zero
                self._moments = e, max(0.0, v), e_inv, max(0.0, v_inv)
            return self._moments

    def median_moments(self) -> tuple[float, float]:
        r"""Return :math:`\mathbb{E}[M]` and :math:`\mathbb{V}[M]` (see :func:`median_moments`)."""
        e, v, _, _ = self.moments()
        return e, v

    def inverse_median_moments(self) -> tuple[float, float]:
        r"""Return :math:`\mathbb{E}[1/M]` and :math:`\mathbb{V}[1/M]`."""
        _, _, e, v = self.moments()
        return e, v

    def order_statistic_sf(self, k: int, x: IntArray) -> FloatArray:
        r"""Return :math:`P(X_{(k)} > x)` (see :func:`order_statistic_sf`)."""
        sf, cdf = self._order_tails(k, _check_points(x))
        # from whichever tail is the smaller: the larger one is a sum of terms near 1 (its
        # rounding grows with the tasks: 1e-14 at 200), the smaller one keeps its digits
        return np.asarray(np.where(sf <= 0.5, sf, 1.0 - cdf))

    def _order_tails(self, k: int, points: FloatArray) -> tuple[FloatArray, FloatArray]:
        r""":math:`P(X_{(k)} > x)` and :math:`P(X_{(k)} \le x)` at ``points``, each evaluated.

        Outside the window of :meth:`median_moments` they are 1 and 0 (or 0 and 1) to
        :math:`10^{-24}`; inside, each is accurate to a few :math:`10^{-15}` absolute (the
        rounding of the dynamic programme's steps, or the Fourier inversion's), and the smaller
        one to its own size where the dynamic programme serves.
        """
        cands = self._cands
        k = _check_order(k, cands.n)
        flat = points.ravel()
        sf = np.where(flat < 1, 1.0, 0.0)
        lo, hi = _order_window(cands, k)
        inside = (flat >= lo) & (flat <= hi) & (flat < cands.c_max)
        sf[(flat >= 1) & (flat < lo)] = 1.0
        cdf = 1.0 - sf
        if np.any(inside):
            evaluator = _Evaluator(cands, float(lo), float(hi), 0.0)
            lower, upper, _, _ = evaluator.evaluate(flat[inside], 0.0, [k - 1], [])
            sf[inside], cdf[inside] = lower[:, 0], upper[:, 0]
        return sf.reshape(points.shape), cdf.reshape(points.shape)

    def order_statistic_pmf(
        self, k: int, *, max_support: int = 1_000_000
    ) -> tuple[IntArray, FloatArray]:
        r"""Return the support and point masses of :math:`X_{(k)}` (:func:`order_statistic_pmf`)."""
        k = _check_order(k, self._cands.n)
        max_support = check_positive_int(max_support, "max_support")
        lo, hi = _order_window(self._cands, k)
        if hi - lo + 1 > max_support:
            raise ValueError(
                f"Expected a window of at most max_support={max_support} points, got {hi - lo + 1}"
            )
        support = np.arange(lo, hi + 1, dtype=np.int64)
        sf, cdf = self._order_tails(k, np.arange(lo - 1, hi + 1, dtype=np.float64))
        # the differences of the smaller tail: each mass to its own size in the far tails
        masses = np.where(cdf[1:] <= 0.5, cdf[1:] - cdf[:-1], sf[:-1] - sf[1:])
        return support, np.maximum(masses, 0.0)


_CACHE: OrderedDict[tuple[int, bytes], MedianDistribution] = OrderedDict()
_CACHE_LOCK = threading.Lock()


def median_distribution(
    num_candidates: IntArray, counts: IntArray | None = None
) -> MedianDistribution:
    r"""Return the :class:`MedianDistribution` of these candidate counts, shared when possible.

    The last few distributions (four) are kept, keyed by the multiset of counts (a digest of its
    sorted distinct values and multiplicities), so that the median and the inverse median of one
    input, or a table evaluating both, compute the order-statistic law once. The cache is guarded
    by a lock; two threads asking for a new multiset at once may both build it, and one copy is
    kept.

    Parameters
    ----------
    num_candidates : numpy.ndarray of shape (n,)
        The number of candidates :math:`C_i \ge 1` of each ranking task: integers up to
        :math:`2^{53}` (a ``ValueError`` names any other, and an empty input).
    counts : numpy.ndarray of shape (k,), optional
        With it, ``num_candidates`` are sorted distinct counts and ``counts[j]`` the number of
        tasks with ``num_candidates[j]`` candidates (the rows of a candidate table).

    Returns
    -------
    MedianDistribution
        The shared distribution.

    Examples
    --------
    >>> import numpy as np
    >>> median_distribution(np.array([3, 1, 2])) is median_distribution(np.array([1, 2, 3]))
    True
    """
    distinct, repeats = _checked_counts(num_candidates, counts)
    digest = hashlib.blake2b(distinct.tobytes(), digest_size=20)
    digest.update(repeats.tobytes())
    key = (int(repeats.sum()), digest.digest())
    with _CACHE_LOCK:
        found = _CACHE.get(key)
        if found is not None:
            _CACHE.move_to_end(key)
            return found
    made = MedianDistribution(distinct, repeats)
    with _CACHE_LOCK:
        found = _CACHE.setdefault(key, made)
        _CACHE.move_to_end(key)
        while len(_CACHE) > _CACHE_SIZE:
            _CACHE.popitem(last=False)
    return found


def _checked_counts(num_candidates: Any, counts: Any) -> tuple[IntArray, IntArray]:
    """The sorted distinct counts and their multiplicities, validated.

    These functions are the module's entry points, called with a user's arrays as well as with
    the metrics' validated ones: counts that are not integers in 1..2**53 (NaN, 0, 2.5), an
    empty input, and a table whose counts are not strictly increasing or whose multiplicities
    are not positive integers of the same length raise a ``ValueError`` naming the argument.
    """
    values = check_num_candidates(num_candidates)
    if counts is None:
        distinct, repeats = distinct_counts(values)
        return np.asarray(distinct, dtype=np.int64), np.asarray(repeats, dtype=np.int64)
    repeats = check_num_candidates(counts, "counts")
    if repeats.size != values.size:
        raise ValueError(
            f"counts must have one multiplicity per count of num_candidates ({values.size}), "
            f"got {repeats.size}"
        )
    if values.size > 1 and not bool(np.all(values[1:] > values[:-1])):
        raise ValueError(
            "num_candidates must be strictly increasing distinct counts when counts is given"
        )
    return values, repeats


def _check_order(k: Any, n: int) -> int:
    """``k`` as a Python ``int`` (a numpy ``int8`` would overflow in the sums), in ``1..n``."""
    if isinstance(k, bool) or not isinstance(k, numbers.Integral):
        raise TypeError(f"k must be an integer, got {type(k).__name__}: {k!r}")
    if not 1 <= int(k) <= n:
        raise ValueError(f"Expected k in 1..{n}, got: {k!r}")
    return int(k)


def _check_points(x: Any) -> FloatArray:
    """The points of :func:`order_statistic_sf` as floats: finite integers, any shape."""
    try:
        points = np.asarray(x)
    except (OverflowError, ValueError):  # ragged nesting
        raise TypeError(f"x must be integers in an array of one shape, got {x!r}") from None
    if points.dtype == np.object_:  # Python integers beyond 64 bits, or mixed objects
        raise ValueError(
            f"x must be integers within float64's exact range (up to 2**53), got {x!r}"
        )
    if points.dtype == np.bool_ or not (
        np.issubdtype(points.dtype, np.integer) or np.issubdtype(points.dtype, np.floating)
    ):
        raise TypeError(f"x must hold integers, got an array of dtype {points.dtype}")
    points = points.astype(np.float64)
    bad = ~np.isfinite(points) | (points != np.floor(points))
    if bool(bad.any()):
        first = float(points.ravel()[np.argmax(bad.ravel())])
        raise ValueError(f"x must be finite integers, got {first!r}")
    return points


def _order_window(cands: _Candidates, k: int) -> tuple[int, int]:
    lo, hi = cands.window(k)
    return max(lo, 1), max(min(hi, cands.c_max), 1)


def median_moments(num_candidates: IntArray, counts: IntArray | None = None) -> tuple[float, float]:
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
        The number of candidates :math:`C_i \ge 1` of each ranking task: integers up to
        :math:`2^{53}` (a ``ValueError`` names any other, and an empty input).
    counts : numpy.ndarray, optional
        With it, the rows of a candidate table: see :func:`median_distribution`.

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
    :math:`n = 10^6`). For even :math:`n` the double sum uses the product form of the joint law
    of the middle pair (module documentation: method and error bound), :math:`\mathbb{V}` to
    :math:`10^{-14}` relative or better; up to 16 tasks every moment is a sum of nonnegative
    point masses (:mod:`rankstats.null.median_small`).

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
    return median_distribution(num_candidates, counts).median_moments()


def inverse_median_moments(
    num_candidates: IntArray, counts: IntArray | None = None
) -> tuple[float, float]:
    r"""Return the null expectation and variance of ``1 / np.median(ranks)``.

    .. math::

        \mathbb{E}[1/M], \quad \mathbb{V}[1/M], \qquad
        M = \operatorname{median}(r_1, \dots, r_n), \quad r_i \sim \mathcal{U}\{1, \dots, C_i\}.

    Parameters
    ----------
    num_candidates : numpy.ndarray of shape (n,)
        The number of candidates :math:`C_i \ge 1` of each ranking task: integers up to
        :math:`2^{53}` (a ``ValueError`` names any other, and an empty input).
    counts : numpy.ndarray, optional
        With it, the rows of a candidate table: see :func:`median_distribution`.

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
    :math:`n` on the exact paths of :func:`median_moments`; otherwise as measured in the module
    documentation (Error bound). For even :math:`n` the decomposition adds terms of the size of
    :math:`\mathbb{E}[1/X_{(a)}]` that cancel when the two middle ranks are orders of magnitude
    apart (:math:`C = (1, 1, 10^{12}, 10^{12})`) or two very different counts share the tasks;
    up to 16 tasks, and for every even :math:`n \le 40`, the moments are instead summed over
    nonnegative point masses of the middle pair
    (:mod:`rankstats.null.median_small`), to :math:`10^{-15}` relative; two tasks are summed
    over the trapezoidal law of :math:`r_1 + r_2`.

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
    return median_distribution(num_candidates, counts).inverse_median_moments()


def order_statistic_sf(num_candidates: IntArray, k: int, x: IntArray) -> FloatArray:
    r"""Return :math:`P(X_{(k)} > x)`, the survival function of the ``k``-th smallest rank.

    .. math:: P(X_{(k)} > x) = P(N_x \le k - 1), \qquad N_x = \#\{i : r_i \le x\}

    Parameters
    ----------
    num_candidates : numpy.ndarray of shape (n,)
        The number of candidates :math:`C_i \ge 1` of each ranking task: integers up to
        :math:`2^{53}` (a ``ValueError`` names any other, and an empty input).
    k : int
        The order, :math:`1 \le k \le n` (1 is the smallest rank).
    x : numpy.ndarray
        Integer points, any shape.

    Returns
    -------
    numpy.ndarray
        The survival function at ``x`` (same shape), the larger of the two tails taken as one
        less the smaller, accurate to a few :math:`10^{-15}` absolute (against exact binomial
        sums: at most :math:`6 \cdot 10^{-15}` for up to 3,001 equal counts; it had read
        :math:`10^{-16}`, and one less the larger tail was :math:`1.2 \cdot 10^{-14}` off for
        201); outside the window of :func:`median_moments` it is 1 or 0 to :math:`10^{-24}`.

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
    return median_distribution(num_candidates).order_statistic_sf(k, x)


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
        The number of candidates :math:`C_i \ge 1` of each ranking task: integers up to
        :math:`2^{53}` (a ``ValueError`` names any other, and an empty input).
    k : int
        The order, :math:`1 \le k \le n`; for odd :math:`n`, :math:`k = (n + 1)/2` is the median.
    max_support : int, default=1_000_000
        The longest window returned.

    Returns
    -------
    support : numpy.ndarray of shape (m,)
        Consecutive integers (int64).
    pmf : numpy.ndarray of shape (m,)
        The point masses, differences of the smaller tail, accurate to a few
        :math:`10^{-15}` absolute.

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
    return median_distribution(num_candidates).order_statistic_pmf(k, max_support=max_support)
