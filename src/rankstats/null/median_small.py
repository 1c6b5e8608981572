r"""The median's null moments for a few tasks, from point masses in product form.

For :math:`n \le 16` tasks every moment of the median and of its inverse is a sum of point masses
of the middle order statistics, each a sum of nonnegative terms, times the summand: nothing
cancels, whatever the counts (:math:`C = (1, 1, 10^{12}, 10^{12})` included, where the
decomposition of :mod:`rankstats.null.median` for long windows subtracts terms of size 1 to leave
:math:`10^{-12}`).

Point masses
------------
With :math:`N_x = \#\{i : r_i \le x\}`, :math:`A(u) = \{i : C_i \ge u\}`, :math:`c'(u) = n - |A(u)|`
(the tasks surely below :math:`u`) and :math:`z_i = C_i - u` for :math:`i \in A(u)`, the
generating function :math:`\prod_{i \in A(u)} ((u - 1) s + t + z_i) / C_i` counts the tasks below,
at and above :math:`u`, and

.. math::

    P(N_{u-1} \le J,\ N_u \ge L) = \frac{1}{\prod_{A(u)} C_i} \sum_{l=0}^{n-L} e_l(z)
    \sum_{j=0}^{J - c'(u)} \binom{|A(u)| - l}{j} (u - 1)^j \qquad (J < L),

(:math:`e_l` the elementary symmetric polynomials), which is :math:`P(X_{(m)} = u)` for
:math:`J = m - 1, L = m` and, for :math:`n = 2a`, the tie :math:`P(X_{(a)} = X_{(a+1)} = u)` for
:math:`J = a - 1, L = a + 1`. For :math:`u < v` the joint law of the middle pair is
:math:`P(X_{(a)} = u, X_{(a+1)} = v) = f(u)\, g(v)` (:mod:`rankstats.null.median_gap`:
:math:`H(x, y) = \alpha(x) \beta(y)`) with

.. math::

    f(u) = \alpha(u) - \alpha(u - 1) = \frac{u^{m} - (u - 1)^{m}}{\prod_{A(u)} C_i},\quad
    m = a - c'(u), \qquad
    g(v) = \beta(v - 1) - \beta(v) = \sum_{j=0}^{k-1} e_j(z(v)) \binom{|A(v)| - j}{k - j},

:math:`k = n - a`, the last from :math:`e_k(z + 1) = \sum_j e_j(z) \binom{|A| - j}{k - j}`; the
difference of powers is :math:`u^m (-\operatorname{expm1}(m \log(1 - 1/u)))`. Every quantity is
a sum or product of nonnegative numbers, each to a few units in the last place.

Sums
----
Between two consecutive distinct counts, :math:`f`, :math:`g` and the tie masses are polynomials
(of degree below :math:`n`). The windows of the middle ranks (outside which their tails are
below :math:`10^{-24}`, :meth:`~rankstats.null.median_tails._Candidates.window`) are cut into
panels at every count (a panel starts at :math:`C_i + 1`) and at a geometric ladder from 32
(ratio 2, so that :math:`1/(u + v)` is analytic on a disc of at least five half-lengths about each
panel; :math:`1 + 16/n` beyond 16 tasks); panels of at most 32 integers are summed point by
point, longer ones by 16-node discrete Gauss (Gram) rules. The double sum over :math:`u < v` is a
tensor rule on pairs of distinct panels and, within one panel :math:`s..e`, a rule in :math:`v`
on 32 integer nodes of :math:`s + 1..e` (the inner sum over :math:`u` is a polynomial in
:math:`v` when the summand is one) times a Gram rule in :math:`u` on :math:`s..v - 1` (12 nodes
up to 16 tasks, :func:`inner_nodes`; 16 before 2026-11-27, the moments the same to
:math:`1.1 \cdot 10^{-15}`): the costly
factor :math:`g` (elementary symmetric polynomials) is needed at the 32 nodes :math:`v` only, the
cheap :math:`f` (a power over a suffix product of the counts) at every pair. The moments are
accumulated centred (:math:`\sum p\,(M - \mathbb{E}[M])^2`) with pairwise summation of
nonnegative terms. Rule errors are below :math:`10^{-15}` relative (polynomials times functions
analytic far from each panel); measured against exact power sums with 50-digit harmonic sums and
against sums over every integer, :math:`10^{-15}` relative or better. Magnitudes are kept as
mantissa and exponent (the elementary symmetric polynomials are rescaled every eight tasks, by
one power of two per node where their entries span at most 960 binary orders, else by one per
entry: a single one had flushed the small entries of the first tasks, which the later tasks
multiply by up to :math:`C^{n-i}`, and 48 to 56 equal counts of :math:`10^{14}` to
:math:`2^{53}` had E[M] up to :math:`7 \cdot 10^{-8}` off), so nothing overflows or is lost.

On the pairs of distinct panels the masses are a product, :math:`w_u f(u)\, w_v g(v)`, and the
nodes :math:`u` below the panel of a node :math:`v` are a prefix of all nodes :math:`u` taken in
panel order. So the moments of :math:`M = (u + v)/2` need no pairs: under a product the two are
independent, and with :math:`P_v`, :math:`\bar u_v` and :math:`s^2_v` the mass, mean and
centred second moment of that prefix, the pairs of :math:`v` have mass :math:`w_v g(v) P_v`, mean
:math:`(\bar u_v + v)/2` and centred second moment :math:`P_v s^2_v / 4` (one prefix statistic
per panel). Only :math:`1/M` needs the pairs: the kernel :math:`2/(u + v)`, masked to each
prefix, is summed against the masses of :math:`u` by matrix products, once for each node's mean
and once centred on it and squared, a block of nodes :math:`v` at a time (bounded memory).
Every term is nonnegative, and the nodes' statistics are merged by the parallel formula. Where
the masses of either side span more than 900 binary orders (met by no input tried: the
windows' tails keep them within 147 at counts up to :math:`10^{18}` and :math:`n = 56`), the
pairs go panel by panel instead, each panel's masses scaled by the largest exponents of its two
sides (tested by forcing it). Against the pair-by-pair sums before
(2026-11-27), the four moments agree to :math:`2 \cdot 10^{-15}` relative over equal, narrow,
uniform, log-uniform, two-cluster and huge counts at every even :math:`n` from 4 to 56, and
the even-:math:`n` calls take 0.55-0.65 times as long (with the ties' sum over :math:`j` as one
matrix product per distinct :math:`|A(u)|` and the panels' own pairs in one block): 2.0 ms at
:math:`n = 10` and 6 ms at :math:`n = 40`, counts :math:`13541..14542`.

The same sums hold for every even number of tasks up to :data:`EVEN_N_VALID` = 56, with a finer
ladder beyond 16 tasks and 24-node rules beyond 32 (the summands' degree grows with :math:`n`):
:math:`10^{-15}` relative in the tests. Beyond 56 tasks the rules lose digits on counts near
:math:`10^{12}` (62 tasks with counts in :math:`10^{11}..10^{12}`: :math:`10^{-10}`; 64 equal
counts of :math:`10^{12}`: :math:`3 \cdot 10^{-12}` on :math:`\mathbb{E}[M]`, whose exact value is
:math:`(C + 1)/2`). They serve even numbers of tasks up to :data:`EVEN_N` = 40 only: beyond, the
main path of :mod:`rankstats.null.median` (checked by its condition, with its sums from the upper
middle rank where the decomposition would cancel) is cheaper, and within :math:`4 \cdot 10^{-13}`
of these sums on the tests' inputs of 42 to 56 tasks;
:func:`two_tasks` sums the trapezoidal law of :math:`r_1 + r_2` for two tasks.
"""

from __future__ import annotations

import functools
import math

import numpy as np

from rankstats.arrays import BoolArray, FloatArray, IntArray
from rankstats.null.median_rules import (
    _integer_rules,
    _ladder,
    _panel_nodes,
    _piece_nodes,
    _pieces,
    _prefix_sum,
    dot,
    matmul,
)
from rankstats.null.median_tails import _Candidates

__all__ = [
    "EVEN_N",
    "EVEN_N_VALID",
    "SMALL_N",
    "gram_nodes",
    "inner_nodes",
    "panel_ladder",
    "panel_pair_nodes",
    "panels_with_pairs",
    "small_moments",
    "two_tasks",
]

#: the product-form path is used up to this many tasks
SMALL_N = 16
#: beyond this many tasks the Gram rules take _NU_MANY nodes per panel
_NU_SWITCH = 32
_NU_MANY = 24
#: the elementary symmetric polynomials are rescaled after this many tasks (growth below 2^504)
_RESCALE = 8
#: ... by one power of two per row where the entries' spread is at most this many binary orders
#: (all normal numbers then: 2**-960 is far above 2**-1022), else one per entry
_SPREAD_ROW_SCALED = 960
#: integer nodes of the rule in t = v - u within a panel
_NU_T = 32
#: Gram nodes of the rule in u below each of those nodes, up to SMALL_N tasks (inner_nodes)
_NU_INNER = 12
#: the pairs of different panels are summed as one masked array of all nodes where the factors'
#: magnitudes span at most this many binary orders each (else panel by panel, each scaled)
_SPAN_MAX = 900
#: ... a block of nodes v at a time, about this many pairs each
_KERNEL_BLOCK = 32_768
#: panels whose pairs within are formed at a time (their pairs grow with the panels, log C)
_PANELS_PER_BLOCK = 32
#: a geometric ladder from this value on cuts the panels ...
_LADDER_START = 32
#: ... with ratio 1 + _LADDER_SPREAD / max(n, _LADDER_SPREAD)
_LADDER_SPREAD = 16
#: even numbers of tasks up to this are summed here, by a call (median.median_moments) and for
#: groups (median_small_groups). Beyond it the main path is cheaper. On 500 inputs of 34 to 56
#: tasks (equal, uniform, log-uniform, clustered and pinned counts; 2026-11-28) it took 0.7 of
#: the time here in the median per input at 42 to 48 tasks and at 50 to 56 (0.5 for log-uniform
#: counts), and 0.95 at 34 to 40, but 1.1 to 1.3 in total there (its sums from the upper middle
#: rank on pinned counts); a call per group took 0.4 to 0.6 of the grouped sums at 42 to 56
#: tasks (24-node rules beyond 32). Its decomposition is checked by its condition, and where
#: that fails its sums from the upper middle rank take over (the decomposition alone had lost up
#: to 1e-6 on two very different counts at 38 tasks): within 4e-13 of these sums there
EVEN_N = 40
#: ... and these sums' rules hold up to this many (1e-15 relative): the tests check the main
#: path against them between the two
EVEN_N_VALID = 56


@functools.lru_cache(maxsize=64)
def _binomials(n: int) -> FloatArray:
    """Pascal's triangle ``out[N, j] = binom(N, j)`` for ``N, j <= n`` (0 above the diagonal).

    Read-only and cached: the medians of many groups of a few dozen tasks each ask for the same
    few sizes (56 tasks: 1,653 exact binomials).
    """
    out = np.zeros((n + 2, n + 2))
    for big in range(n + 1):
        for j in range(big + 1):
            out[big, j] = math.comb(big, j)
    out.setflags(write=False)
    return out


class _Tasks:
    """The counts of a few tasks and the point masses of their order statistics at any nodes.

    ``counts`` is one group's counts, shape ``(n,)``, or several groups' of one size, shape
    ``(groups, n)``; with several, each method takes ``rows``, the group of each node
    (:mod:`rankstats.null.median_small_groups`).
    """

    def __init__(self, counts: IntArray) -> None:
        self.c = np.sort(counts.astype(np.float64), axis=-1)
        self.n = int(counts.shape[-1])
        self.binom = _binomials(self.n)
        # suffix products of 1 / C_i (mantissas) and suffix sums of exponents over sorted counts
        mant, expo = np.frexp(self.c)
        self._scales = 1.0 / mant, expo  # of 1 / C_i, mantissa and (negated) exponent
        self._inv_mant = np.ones((*self.c.shape[:-1], self.n + 1))
        self._inv_mant[..., :-1] = np.cumprod((1.0 / mant)[..., ::-1], axis=-1)[..., ::-1]
        self._expo = np.zeros((*self.c.shape[:-1], self.n + 1), dtype=np.int64)
        self._expo[..., :-1] = np.cumsum(expo[..., ::-1], axis=-1)[..., ::-1]

    def _counts(self, rows: IntArray | None) -> FloatArray:
        """The sorted counts of each node's group, one row per node (or one row for all)."""
        return self.c[None, :] if rows is None else self.c[rows]

    def _above(
        self, x: FloatArray, rows: IntArray | None
    ) -> tuple[BoolArray, FloatArray, IntArray]:
        r"""Mask of :math:`C_i \ge x`, the values :math:`C_i - x` there, and :math:`|A(x)|`."""
        c = self._counts(rows)
        mask: BoolArray = c >= x[:, None]
        z: FloatArray = np.where(mask, c - x[:, None], 0.0)
        size: IntArray = mask.sum(axis=1).astype(np.int64)
        return mask, z, size

    def _elementary(self, z: FloatArray, mask: BoolArray, top: int) -> tuple[FloatArray, IntArray]:
        r""":math:`e_0..e_{top}` of the masked values, one row per node, as ``(e, p)``.

        The true values are ``e * 2**p``, each row's largest entry in :math:`[1/2, 1)`; entries
        far below it (:math:`2^{-1022}` and less) are not kept to full precision, which costs
        nothing where they are only multiplied by factors of comparable size (the binomial sums
        of the callers). Added task by task with nonnegative terms, rescaled every few tasks:
        by one power of two per row where no entry can fall that far below the row's largest
        on the way (:func:`_row_scaled`), else by one per entry (:func:`_entry_scaled`).
        """
        zs = np.ascontiguousarray(np.where(mask, z, 0.0).T)
        width = max(top, 0) + 1
        positive = zs[zs > 0.0]
        if positive.size == 0 or width == 1:
            return _row_scaled(zs, width)
        # the row's entries after i tasks lie within binom(i, j) (1 + max z)^j and min(1, z)^j
        # of e_0 = 1: their spread, in binary orders, bounded over every step
        spread = self.n + (width - 1) * (
            math.log2(1.0 + float(positive.max())) - min(0.0, math.log2(float(positive.min())))
        )
        if spread <= _SPREAD_ROW_SCALED:
            return _row_scaled(zs, width)
        return _entry_scaled(zs, width)

    def _scale(self, mask: BoolArray, rows: IntArray | None) -> tuple[FloatArray, IntArray]:
        r""":math:`1 / \prod_{A(x)} C_i` as ``(mantissa, exponent)``."""
        inv_mant, expo = self._scales
        if rows is None:
            inv_mant, expo = inv_mant[None, :], expo[None, :]
        else:
            inv_mant, expo = inv_mant[rows], expo[rows]
        return (
            np.asarray(np.where(mask, inv_mant, 1.0).prod(axis=1)),
            -np.where(mask, expo, 0).sum(axis=1).astype(np.int64),
        )

    def window_mass(
        self, u: FloatArray, lower: int, upper: int, rows: IntArray | None = None
    ) -> FloatArray:
        r""":math:`P(N_{u-1} \le J,\ N_u \ge L)` at nodes ``u``, J = ``lower``, L = ``upper``.

        The inner sums :math:`\sum_{j \le j_*} \binom{N}{j} (u - 1)^j` are formed as
        :math:`(u - 1)^{j_*} \sum_j \binom{N}{j} (u - 1)^{j - j_*}` (no overflow).
        """
        mask, z, size = self._above(u, rows)
        top_j = lower - (self.n - size)  # j_* per node; no mass where negative
        e, e_expo = self._elementary(z, mask, self.n - upper)
        base = u - 1.0
        ratio = 1.0 / np.where(base > 0.0, base, 1.0)
        # (u - 1)^(j - j_*) for j = 0..J, zero beyond j_*, and at u = 1 the plain power 0^j
        j = np.arange(lower + 1)
        gap = top_j[:, None] - j[None, :]
        power = np.where(
            base[:, None] > 0.0, ratio[:, None] ** np.maximum(gap, 0), (j == 0)[None, :] * 1.0
        )
        power[gap < 0] = 0.0
        # the sums over j against the binomials' rows N = |A(u)| - l, l = 0..n - upper: one
        # product per distinct |A(u)| (the nodes between two counts share it)
        inner = np.empty((u.size, self.n - upper + 1))
        levels = np.arange(self.n - upper + 1)
        for big in np.unique(size).tolist():
            pick = size == big
            inner[pick] = matmul(
                power[pick], self.binom[np.maximum(big - levels, 0), : lower + 1].T
            )
        # (u - 1)^{j_*}, with j_* = 0 where u = 1
        j_star = np.where(base > 0.0, np.maximum(top_j, 0), 0)
        b_mant, b_expo = np.frexp(np.where(base > 0.0, base, 1.0))
        c_mant, c_expo = self._scale(mask, rows)
        mant = (e * inner).sum(axis=1) * b_mant**j_star * c_mant
        expo = e_expo + b_expo * j_star + c_expo
        return np.asarray(np.where(top_j >= 0, np.ldexp(mant, expo), 0.0))

    def lower_factor(
        self,
        u: FloatArray,
        a: int,
        rows: IntArray | None = None,
        first: IntArray | None = None,
    ) -> tuple[FloatArray, IntArray]:
        r""":math:`f(u) = \alpha(u) - \alpha(u - 1)` (zero where :math:`m \le 0`), scaled.

        ``first``, where known, is the number of counts below each node (those of its group).
        """
        # A(u) = the counts from here on
        if rows is None:
            if first is None:
                first = np.searchsorted(self.c, u, side="left")
            c_mant, c_expo = self._inv_mant[first], -self._expo[first]
        else:
            if first is None:
                first = (self.c[rows] < u[:, None]).sum(axis=1)
            c_mant, c_expo = self._inv_mant[rows, first], -self._expo[rows, first]
        m = a - first
        positive = m > 0
        with np.errstate(divide="ignore", invalid="ignore"):
            drop = -np.expm1(np.where(positive, m, 1).astype(np.float64) * np.log1p(-1.0 / u))
        u_mant, u_expo = np.frexp(u)
        power = np.where(positive, m, 0)
        mant = np.where(positive, drop * u_mant**power, 0.0) * c_mant
        return np.asarray(mant), (u_expo * power + c_expo).astype(np.int64)

    def upper_factor(
        self, v: FloatArray, a: int, rows: IntArray | None = None
    ) -> tuple[FloatArray, IntArray]:
        r""":math:`g(v) = \beta(v - 1) - \beta(v)`, scaled."""
        k = self.n - a
        mask, z, size = self._above(v, rows)
        e, expo = self._elementary(z, mask, k - 1)
        j = np.arange(k)
        coef = self.binom[np.maximum(size[:, None] - j[None, :], 0), (k - j)[None, :]]
        return np.asarray((e * coef).sum(axis=1)), expo


def _row_scaled(zs: FloatArray, width: int) -> tuple[FloatArray, IntArray]:
    """:meth:`_Tasks._elementary` of the values ``zs`` (tasks x nodes), one exponent per row.

    Every few tasks each row is rescaled to a largest entry in :math:`[1/2, 1)`: exact for
    entries within :data:`_SPREAD_ROW_SCALED` binary orders of the largest, and those are all
    where the caller finds the spread of the entries within that bound.
    """
    return _added_tasks(zs, width, per_entry=False)


def _entry_scaled(zs: FloatArray, width: int) -> tuple[FloatArray, IntArray]:
    r""":meth:`_Tasks._elementary` of the values ``zs`` (tasks x nodes), one exponent per entry.

    Every few tasks each :math:`e_j` is rescaled to a mantissa in :math:`[1/2, 1)`, and the
    terms :math:`z_i e_{j-1}` are carried into :math:`e_j`'s units by the power of two between
    the two exponents; at the end each row goes on its largest exponent. With one exponent per
    row all along, the small :math:`e_j` of the first tasks fall below :math:`2^{-1074}` of the
    largest and are flushed to zero, though the tasks still to come multiply them by up to
    :math:`z^{n - i}`: 56 equal counts of :math:`10^{15}` had point masses :math:`10^{-10}` to
    :math:`10^{-7}` off, and the median's expectation :math:`6 \cdot 10^{-10}` off its exact
    :math:`(C + 1) / 2`.
    """
    return _added_tasks(zs, width, per_entry=True)


def _added_tasks(zs: FloatArray, width: int, *, per_entry: bool) -> tuple[FloatArray, IntArray]:
    """The recurrence of :func:`_row_scaled` and :func:`_entry_scaled`, one or the other scaling."""
    nodes = zs.shape[1]
    e = np.zeros((nodes, width))
    e[:, 0] = 1.0
    expo = np.zeros((nodes, width) if per_entry else nodes, dtype=np.int64)
    # 2**(expo[j - 1] - expo[j]): e_{j-1}'s units in e_j's (per entry, after the first rescale)
    carry: FloatArray | None = None
    step = np.empty((nodes, width - 1))
    column = np.arange(width)
    rows = np.arange(nodes)
    for i in range(zs.shape[0]):
        # e_j += z_i e_{j-1}, highest j first through a copy of the old values
        np.multiply(e[:, :-1], zs[i][:, None], out=step)
        if carry is not None:
            step *= carry
        e[:, 1:] += step
        if i % _RESCALE != _RESCALE - 1 and i != zs.shape[0] - 1:
            continue
        # values grow by at most (1 + max C) per task: rescale every few tasks
        if not per_entry:
            _, shift = np.frexp(e.max(axis=1))
            e = np.ldexp(e, -shift[:, None])
            expo += shift
            continue
        # each entry by its own power of two. The entries still zero are a suffix of each row
        # (e_j > 0 once j positive values are in): they take the exponent of the last nonzero
        # entry, whose terms they receive first
        e, shift = np.frexp(e)
        expo += shift
        last = np.count_nonzero(e, axis=1) - 1
        np.copyto(expo, expo[rows, last][:, None], where=column > last[:, None])
        carry = np.ldexp(1.0, expo[:, :-1] - expo[:, 1:])
    if not per_entry:
        return e, expo
    row_expo = expo.max(axis=1)
    with np.errstate(under="ignore"):
        e = np.ldexp(e, expo - row_expo[:, None])
    return e, row_expo


def _product(
    f: tuple[FloatArray, IntArray], g: tuple[FloatArray, IntArray], i: IntArray, j: IntArray
) -> FloatArray:
    """``f[i] * g[j]`` for scaled factors (each may overflow alone, not the product)."""
    return np.asarray(np.ldexp(f[0][i] * g[0][j], f[1][i] + g[1][j]))


def _panels(counts: IntArray, lo: int, hi: int) -> tuple[IntArray, IntArray]:
    """Panels of ``lo..hi``: starts at every count plus one and at a geometric ladder from 32.

    The ladder's ratio is 2 up to 16 tasks and :math:`1 + 16/n` beyond, so that the summands
    (polynomials of degree below :math:`n` in :math:`u`) vary like :math:`(1 + 16/n)^n` at most
    on a panel.
    """
    breaks = np.concatenate((np.unique(counts) + 1, panel_ladder(int(counts.size), hi)))
    return _pieces(lo, hi, breaks, hi - lo + 1)


def panel_ladder(n: int, hi: int) -> IntArray:
    """The geometric ladder of panel starts up to ``hi`` for ``n`` tasks (:func:`_panels`)."""
    ratio = 1.0 + _LADDER_SPREAD / max(n, _LADDER_SPREAD)
    ladder = []
    value = _LADDER_START
    while value <= hi:
        ladder.append(value)
        value = max(value + 1, math.ceil(value * ratio))
    return np.array(ladder, dtype=np.int64)


def inner_nodes(n: int) -> int:
    r"""Gram nodes of the rule in :math:`u` below each node :math:`v` within a panel.

    Up to :data:`SMALL_N` tasks, :data:`_NU_INNER` (exact to degree 23, where the summand's
    polynomial part is of degree at most :math:`a + 1 \le 9`); beyond, :func:`gram_nodes`. The
    summand's analytic part, :math:`1/(u + v)` and its square, has its singularity at
    :math:`u = -v`, at least seven half-lengths from the centre of the rule's range
    :math:`s..v - 1` on a panel of ratio 2, so that the rule's error falls like
    :math:`\rho^{-2\nu}` with :math:`\rho \ge 13.9`: below :math:`10^{-20}` of the sum at
    12 nodes even with the factor :math:`f` (degree 7) growing on the ellipse. Measured against
    the sums at every integer: 8, 10, 12 and 16 nodes give :math:`1.5 \cdot 10^{-12}`,
    :math:`9.8 \cdot 10^{-16}`, :math:`1.1 \cdot 10^{-15}` and :math:`9.0 \cdot 10^{-16}`
    on :math:`\mathbb{V}[1/M]` (the worst moment), two nodes of margin.
    """
    return _NU_INNER if n <= SMALL_N else gram_nodes(n)


def gram_nodes(n: int) -> int:
    """Gram nodes per panel for ``n`` tasks.

    Exact to degree ``2 nu - 1``, above the summands' degree (below ``n``).
    """
    return _NU_MANY if n > _NU_SWITCH else 16


def _clip(
    starts: IntArray, lengths: IntArray, lo: int | IntArray, hi: int | IntArray
) -> tuple[IntArray, IntArray, IntArray]:
    """The panels' parts inside ``lo..hi``: starts, lengths and the index of the whole panel.

    ``lo`` and ``hi`` are one range, or one per panel (the groups of
    :mod:`rankstats.null.median_small_groups`).
    """
    begin = np.maximum(starts, lo)
    end = np.minimum(starts + lengths - 1, hi)
    keep = np.flatnonzero(end >= begin)
    return begin[keep], (end - begin + 1)[keep], keep


def small_moments(counts: IntArray) -> tuple[float, float, float, float]:
    r"""E and V of the median and of its inverse for :math:`n \le` :data:`SMALL_N` tasks.

    Parameters
    ----------
    counts : numpy.ndarray of shape (n,)
        The candidate counts (int64, at least one above 1).

    Returns
    -------
    tuple of float
        :math:`\mathbb{E}[M], \mathbb{V}[M], \mathbb{E}[1/M], \mathbb{V}[1/M]`.
    """
    tasks = _Tasks(counts)
    n = tasks.n
    cands = _Candidates(counts)
    top = int(counts.max())
    nu = gram_nodes(n)

    def window(k: int) -> tuple[int, int]:
        lo, hi = cands.window(k)
        return max(lo, 1), max(min(hi, top), 1)

    if n % 2:
        half = (n + 1) // 2
        lo, hi = window(half)
        x, w, _ = _piece_nodes(*_panels(counts, lo, hi), nu=nu)
        odd = _Centred()
        odd.add(w * tasks.window_mass(x, half - 1, half), x)
        return odd.result()
    a = n // 2
    (lo_a, hi_a), (lo_b, hi_b) = window(a), window(a + 1)
    hi_b = max(hi_b, hi_a)
    starts, lengths = _panels(counts, lo_a, hi_b)
    # the lower middle rank lives in lo_a..hi_a, the upper one in lo_b..hi_b (to 1e-24)
    u_s, u_l, u_id = _clip(starts, lengths, lo_a, hi_a)
    v_s, v_l, v_id = _clip(starts, lengths, lo_b, hi_b)
    x_u, w_u, o_u = _piece_nodes(u_s, u_l, nu=nu)
    x_v, w_v, o_v = _piece_nodes(v_s, v_l, nu=nu)
    f = tasks.lower_factor(x_u, a)
    g = tasks.upper_factor(x_v, a)
    moments = _Centred()
    _cross_pairs(moments, (x_u, w_u, f, u_id[o_u]), (x_v, w_v, g, v_id[o_v]))
    t_s, t_l, _ = _clip(starts, lengths, lo_b, hi_a)
    if t_s.size:
        x_t, w_t, _ = _piece_nodes(t_s, t_l, nu=nu)
        moments.add(w_t * tasks.window_mass(x_t, a - 1, a + 1), x_t)
    # pairs within one panel that meets both ranges: a rule in v on integer nodes, then a Gram
    # rule in u = s..v - 1 (short panels: every pair); the costly factor g only at the v nodes
    both = panels_with_pairs(u_id, v_id, lengths)
    # (a few panels at a time: their pairs grow with the panels, log C)
    for b0 in range(0, both.size, _PANELS_PER_BLOCK):
        part = both[b0 : b0 + _PANELS_PER_BLOCK]
        v, w_v, _, u, w_u, own = panel_pair_nodes(starts, lengths, part, inner_nodes(n))
        pair = _product(tasks.lower_factor(u, a), tasks.upper_factor(v, a), np.arange(u.size), own)
        moments.add(w_v[own] * w_u * pair, 0.5 * (u + v[own]))
    return moments.result()


def panels_with_pairs(u_id: IntArray, v_id: IntArray, lengths: IntArray) -> IntArray:
    """The panels in both middle ranks' ranges, of at least two integers: pairs within them."""
    both = np.intersect1d(u_id, v_id)
    return both[lengths[both] >= 2]


def panel_pair_nodes(
    starts: IntArray, lengths: IntArray, part: IntArray, nu: int
) -> tuple[FloatArray, FloatArray, IntArray, FloatArray, FloatArray, IntArray]:
    r"""The nodes of the pairs :math:`u < v` within each of the panels ``part``.

    A rule in :math:`v` on :data:`_NU_T` integer nodes of :math:`s + 1..e` (every integer of a
    short panel), and below each node :math:`v` a Gram rule of ``nu`` nodes in :math:`u` on
    :math:`s..v - 1` (every integer of a short range). Returns :math:`v`, its weights, each
    panel's count of nodes :math:`v`, and :math:`u`, its weights and the node :math:`v` of each.
    """
    inner = lengths[part] - 1  # v = s + 1 .. s + length - 1
    nus = np.full(part.size, _NU_T, dtype=np.int64)
    v, w_v = _integer_rules(starts[part] + 1, inner, nus)
    per_panel = np.where(inner <= 2 * nus, inner, nus)
    first = np.repeat(starts[part], per_panel)
    u, w_u, own = _piece_nodes(first, (v - first).astype(np.int64), nu=nu)
    return v, w_v, per_panel, u, w_u, own


#: a node's rule weight, its factor (mantissa, exponent) and its panel, at each node
_Side = tuple[FloatArray, FloatArray, tuple[FloatArray, IntArray], IntArray]


def _cross_pairs(moments: _Centred, lower: _Side, upper: _Side) -> None:
    r"""Add the pairs :math:`(u, v)` of nodes in different panels, :math:`u`'s below :math:`v`'s.

    ``lower`` holds the nodes :math:`u` with their rule weights, :math:`f(u)` and panels,
    ``upper`` the nodes :math:`v` with :math:`g(v)`. Taken in panel order, the nodes :math:`u`
    below the panel of a node :math:`v` are a prefix, and the pairs' masses are the products
    :math:`w_u f(u) \cdot w_v g(v)`: :meth:`_Centred.add_columns` sums them all at once, the
    masses of :math:`u` scaled by their largest exponent (those of :math:`v` keep theirs), where
    neither side spans more than :data:`_SPAN_MAX` binary orders (no mass underflows).
    Otherwise each panel of :math:`v` is a block with the whole prefix below it
    (:meth:`_Centred.add_product`), each side scaled by its largest exponent in the block: any
    node of the prefix pairs with any node of the panel, so the pair of the two largest is one
    of the block's, and its scaled masses neither overflow nor lose digits to underflow.
    """
    (x_u, panel_u, (a_mant, a_expo)), (x_v, panel_v, (b_mant, b_expo)) = _in_panel_order(
        lower, upper
    )
    if not (panel_u.size and panel_v.size):
        return
    a_mant, a_expo = _normalised(a_mant, a_expo)
    b_mant, b_expo = _normalised(b_mant, b_expo)
    if _span(a_expo) <= _SPAN_MAX and _span(b_expo) <= _SPAN_MAX:
        cut = np.searchsorted(panel_u, panel_v, side="left")
        shift = int(a_expo.max())
        moments.add_columns(np.ldexp(a_mant, a_expo - shift), x_u, b_mant, b_expo + shift, x_v, cut)
        return
    first = np.flatnonzero(np.concatenate(([True], panel_v[1:] != panel_v[:-1])))
    last = np.append(first[1:], panel_v.size)
    cuts = np.searchsorted(panel_u, panel_v[first], side="left")
    # the largest exponent of f over every prefix of the u nodes
    top = np.maximum.accumulate(a_expo)
    for j0, j1, cut in zip(first.tolist(), last.tolist(), cuts.tolist(), strict=True):
        if cut == 0:
            continue
        shift_a = int(top[cut - 1])
        shift_b = int(b_expo[j0:j1].max())
        moments.add_product(
            np.ldexp(a_mant[:cut], a_expo[:cut] - shift_a),
            x_u[:cut],
            np.ldexp(b_mant[j0:j1], b_expo[j0:j1] - shift_b),
            x_v[j0:j1],
            shift_a + shift_b,
        )


def _in_panel_order(
    lower: _Side, upper: _Side
) -> tuple[
    tuple[FloatArray, IntArray, tuple[FloatArray, IntArray]],
    tuple[FloatArray, IntArray, tuple[FloatArray, IntArray]],
]:
    """Each side's nodes, panels and masses (rule weight times factor, scaled), in panel order."""
    out = []
    for x, w, (mant, expo), panel in (lower, upper):
        order = np.argsort(panel, kind="stable")
        out.append((x[order], panel[order], ((w * mant)[order], expo[order])))
    return out[0], out[1]


def _normalised(mant: FloatArray, expo: IntArray) -> tuple[FloatArray, IntArray]:
    """The values ``mant * 2**expo`` with mantissas in [1/2, 1), zeros at the least exponent.

    The factors' own mantissas may hold powers of two; a zero takes the smallest exponent of the
    others, so that no zero sets a scale.
    """
    mant, carry = np.frexp(mant)
    expo = expo + carry
    live = mant > 0.0
    if np.any(live) and not np.all(live):
        expo[~live] = expo[live].min()
    return mant, expo


def _span(expo: IntArray) -> int:
    """How many binary orders values of these exponents (mantissas in [1/2, 1)) span."""
    return int(expo.max() - expo.min()) if expo.size else 0


class _Centred:
    r"""Mass, mean and centred second moment of :math:`m` and :math:`1/m`, added chunk by chunk.

    Each chunk of point masses ``p`` (nonnegative) at values ``m`` is centred on its own mean,
    and chunks are merged by the parallel formula of Chan, Golub and LeVeque
    (:math:`M_2 = M_2^{(1)} + M_2^{(2)} + \delta^2 T_1 T_2 / (T_1 + T_2)`): every term is
    nonnegative, so nothing cancels, whatever the number of chunks. The masses are normalised
    by their sum (one, up to rounding), and the mean of :math:`m` is accumulated about a nearby
    half-integer :math:`g` (each chunk's deviations from its own half-integer, shifted to
    :math:`g` and summed with :func:`math.fsum`), so that symmetric and simple cases come out
    exactly (5.5, not 5.500000000000001; 1.6, not 1.5999999999999999, for the counts 1, 2, 3,
    5). Sums are pairwise (numpy).
    """

    def __init__(self) -> None:
        self.total = 0.0
        self.stats = [0.0, 0.0, 0.0, 0.0]  # mean, M2 of m; mean, M2 of 1/m
        self.chunks: list[tuple[float, float, float]] = []  # mass, half-integer, deviations

    def add(self, p: FloatArray, m: FloatArray) -> None:
        """Add the point masses ``p`` at the values ``m`` (positive)."""
        total = float(np.sum(p))
        if total == 0.0:
            return
        stats = []
        for values in (m, 1.0 / m):
            mean = float(np.sum(p * values)) / total
            dev = values - mean
            stats += [mean, float(np.sum(p * (dev * dev)))]
        guess = round(2.0 * stats[0]) / 2.0
        self._merge(total, stats, guess, float(np.sum(p * (m - guess))))

    def add_product(
        self, a: FloatArray, x: FloatArray, b: FloatArray, y: FloatArray, scale: int
    ) -> None:
        r"""Add the masses :math:`2^{\text{scale}} a_i b_j` at :math:`(x_i + y_j)/2`, every pair.

        Under masses that are a product, :math:`x` and :math:`y` are independent: the mean of
        :math:`m` is the mean of the two means and its centred second moment a quarter of the
        sum of theirs, each summed over one side (nonnegative terms). Only :math:`1/m` needs
        the pairs: the kernel :math:`2/(x_i + y_j)`, summed against :math:`b` (a matrix-vector
        product over the few :math:`y` of the block, nonnegative terms) and then against
        :math:`a` (pairwise), once as it is and once centred and squared.
        """
        ta, tb = float(np.sum(a)), float(np.sum(b))
        total = math.ldexp(ta * tb, scale)
        if total == 0.0:
            return
        xa, yb = float(np.sum(a * x)) / ta, float(np.sum(b * y)) / tb
        dx, dy = x - xa, y - yb
        spread = float(np.sum(a * (dx * dx))) / ta + float(np.sum(b * (dy * dy))) / tb
        mean = 0.5 * (xa + yb)
        kernel = 2.0 / np.add.outer(x, y)
        column = b[:, None]
        inv_mean = dot(a, matmul(kernel, column)[:, 0]) / (ta * tb)
        kernel -= inv_mean
        np.square(kernel, out=kernel)
        inv_m2 = total * (dot(a, matmul(kernel, column)[:, 0]) / (ta * tb))
        guess = round(2.0 * mean) / 2.0
        offsets = float(np.sum(a * (x - guess))) * tb + ta * float(np.sum(b * (y - guess)))
        self._merge(
            total,
            [mean, 0.25 * total * spread, inv_mean, inv_m2],
            guess,
            math.ldexp(0.5 * offsets, scale),
        )

    def add_columns(
        self,
        a: FloatArray,
        x: FloatArray,
        b_mant: FloatArray,
        b_expo: IntArray,
        y: FloatArray,
        cut: IntArray,
    ) -> None:
        r"""Add the masses :math:`a_i\, b_j` at :math:`(x_i + y_j)/2` for :math:`i <` ``cut[j]``.

        Column :math:`j` holds the pairs of :math:`y_j` with the first ``cut[j]`` values
        :math:`x` (``cut`` nondecreasing), :math:`b_j = ` ``b_mant * 2**b_expo``. Each column is a
        chunk of its own: its mass :math:`b_j P_j` (:math:`P_j` the prefix sum of :math:`a`),
        the mean of :math:`m` from the prefix's mean of :math:`x`, the centred second moment
        of :math:`m` a quarter of the prefix's centred one of :math:`x` (one per distinct cut,
        nonnegative terms), and those of :math:`1/m` from the kernel :math:`2/(x_i + y_j)`,
        masked to the prefixes, summed against :math:`a` (matrix products over the column,
        nonnegative terms) as it is and centred on each column's mean and squared. The columns
        are then merged as one chunk by the parallel formula (nonnegative terms).
        """
        prefix = _prefix_sum(a)[cut]
        live = prefix > 0.0
        if not np.any(live):
            return
        b_mant, b_expo, y, cut, prefix = (
            b_mant[live],
            b_expo[live],
            y[live],
            cut[live],
            prefix[live],
        )
        mass = np.ldexp(b_mant * prefix, b_expo)
        total = float(np.sum(mass))
        if total == 0.0:
            return
        # the prefixes' means and centred second moments of x, one per distinct cut
        cuts, back = np.unique(cut, return_inverse=True)
        inside = np.arange(x.size)[None, :] < cuts[:, None]
        weights = np.where(inside, a[None, :], 0.0)
        sums = weights.sum(axis=1)
        x_mean = matmul(weights, x[:, None])[:, 0] / sums
        dev = x[None, :] - x_mean[:, None]
        x_m2 = (weights * (dev * dev)).sum(axis=1) / sums
        m_mean = 0.5 * (x_mean[back] + y)
        m_m2 = 0.25 * mass * x_m2[back]
        # 1/m over the pairs: each column's mean, then its centred second moment, a block of
        # columns at a time (the nodes grow with the panels, log C: the arrays stay bounded)
        inv_mean = np.empty(y.size)
        inv_sq = np.empty(y.size)
        rows = np.arange(x.size)[:, None]
        step = max(1, _KERNEL_BLOCK // x.size)
        for j0 in range(0, y.size, step):
            part = slice(j0, j0 + step)
            valid = rows < cut[None, part]
            kernel = 2.0 / np.add.outer(x, y[part])
            kernel *= valid
            inv_mean[part] = matmul(kernel.T, a[:, None])[:, 0] / prefix[part]
            kernel -= inv_mean[None, part]
            np.square(kernel, out=kernel)
            kernel *= valid
            inv_sq[part] = matmul(kernel.T, a[:, None])[:, 0]
        inv_m2 = np.ldexp(b_mant * inv_sq, b_expo)
        stats = []
        for means, m2s in ((m_mean, m_m2), (inv_mean, inv_m2)):
            mean = dot(mass, means) / total
            spread = means - mean
            stats += [mean, float(np.sum(m2s)) + dot(mass, spread * spread)]
        guess = round(2.0 * stats[0]) / 2.0
        self._merge(total, stats, guess, dot(mass, m_mean - guess))

    def _merge(self, total: float, stats: list[float], guess: float, offset: float) -> None:
        """Merge a chunk: its mass, stats and offset from a half-integer ``guess``.

        ``stats`` are the mean and centred second moment of m and of 1/m, ``offset`` the sum
        of the chunk's masses times m - ``guess`` (a half-integer near its mean).
        """
        merged = self.total + total
        for k in range(2):
            mean, m2 = stats[2 * k], stats[2 * k + 1]
            delta = mean - self.stats[2 * k]
            self.stats[2 * k] += delta * total / merged
            self.stats[2 * k + 1] += m2 + delta * delta * self.total * total / merged
        self.chunks.append((total, guess, offset))
        self.total = merged

    def result(self) -> tuple[float, float, float, float]:
        r""":math:`\mathbb{E}[M], \mathbb{V}[M], \mathbb{E}[1/M], \mathbb{V}[1/M]`."""
        _, m2, inv_mean, inv_m2 = self.stats
        guess = round(2.0 * self.stats[0]) / 2.0
        shift = math.fsum((g - guess) * t + d for t, g, d in self.chunks)
        return guess + shift / self.total, m2 / self.total, inv_mean, inv_m2 / self.total


def two_tasks(c1: int, c2: int) -> tuple[float, float, float, float]:
    r"""E and V of :math:`M = (r_1 + r_2)/2` and of :math:`1/M` for two tasks.

    :math:`S = r_1 + r_2` has the trapezoidal law :math:`P(S = s) = \min(s - 1, C_1, C_1 + C_2 + 1
    - s) / (C_1 C_2)` (:math:`C_1 \le C_2`). :math:`\mathbb{E}[2/S]` and the centred
    :math:`\mathbb{E}[(2/S - \mu)^2]` are summed over :math:`s` by Gram panels cut at the two
    corners and at powers of four, on each of which the summand is a linear function times an
    analytic function of :math:`1/s`; every term is positive, so nothing cancels.
    """
    c1, c2 = min(c1, c2), max(c1, c2)
    f1, f2 = float(c1), float(c2)
    mean = (f1 + f2 + 2.0) / 4.0
    var = (f1 * f1 + f2 * f2 - 2.0) / 48.0
    top = c1 + c2
    breaks = np.concatenate((np.array([c1 + 1, c2 + 1], dtype=np.int64), _ladder(top)))
    s, w = _panel_nodes(2, top, breaks, top)
    p = w * np.minimum(np.minimum(s - 1.0, f1), f1 + f2 + 1.0 - s) / (f1 * f2)
    inv = 2.0 / s
    inv_mean = dot(p, inv)
    dev = inv - inv_mean
    return mean, var, inv_mean, dot(p, (dev * dev))
