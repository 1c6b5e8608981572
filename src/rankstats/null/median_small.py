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
(of degree below :math:`n`). The integers :math:`1..\max C` are cut into panels at every count
(a panel starts at :math:`C_i + 1`) and at the powers of two from 32 (so that :math:`1/(u + v)`
is analytic on a disc of at least five half-lengths about each panel); panels of at most 32
integers are summed point by point, longer ones by 16-node discrete Gauss (Gram) rules. The
double sum over :math:`u < v` is a tensor rule on pairs of distinct panels and, within one long
panel, a rule in :math:`t = v - u` on 32 integer nodes (the inner sum over :math:`u` is a
polynomial in :math:`t` when the summand is one) times a Gram rule in :math:`u`. The moments are
accumulated centred (:math:`\sum p\,(M - \mathbb{E}[M])^2`) with pairwise summation of
nonnegative terms. Rule errors are below :math:`10^{-15}` relative (the summands are
polynomials of degree below 16 times functions analytic far from each panel); measured against
40-digit references, :math:`10^{-14}` relative or better. Magnitudes stay within double range
for :math:`n \le 16` and :math:`C \le 2^{63}`.
"""

from __future__ import annotations

import math

import numpy as np

from rankstats.arrays import BoolArray, FloatArray, IntArray
from rankstats.null.median_rules import _integer_rule, _piece_nodes, _pieces

__all__ = ["SMALL_N", "small_moments"]

#: the product-form path is used up to this many tasks
SMALL_N = 16
#: integer nodes of the rule in t = v - u within a panel
_NU_T = 32
#: powers of two from this value on cut the panels
_LADDER_START = 32


def _binomials(n: int) -> FloatArray:
    """Pascal's triangle ``out[N, j] = binom(N, j)`` for ``N, j <= n`` (0 above the diagonal)."""
    out = np.zeros((n + 2, n + 2))
    for big in range(n + 1):
        for j in range(big + 1):
            out[big, j] = math.comb(big, j)
    return out


class _Tasks:
    """The counts of a few tasks and the point masses of their order statistics at any nodes."""

    def __init__(self, counts: IntArray) -> None:
        self.c = np.sort(counts.astype(np.float64))
        self.n = int(counts.size)
        self.binom = _binomials(self.n)

    def _above(self, x: FloatArray) -> tuple[BoolArray, FloatArray, IntArray]:
        r"""Mask of :math:`C_i \ge x`, the values :math:`C_i - x` there, and :math:`|A(x)|`."""
        mask: BoolArray = self.c[None, :] >= x[:, None]
        z: FloatArray = np.where(mask, self.c[None, :] - x[:, None], 0.0)
        size: IntArray = mask.sum(axis=1).astype(np.int64)
        return mask, z, size

    def _elementary(self, z: FloatArray, mask: BoolArray, top: int) -> FloatArray:
        """:math:`e_0..e_{top}` of the masked values, one row per node (nonnegative terms)."""
        e = np.zeros((z.shape[0], max(top, 0) + 1))
        e[:, 0] = 1.0
        for i in range(self.n):
            zi = np.where(mask[:, i], z[:, i], 0.0)[:, None]
            e[:, 1:] = e[:, 1:] + zi * e[:, :-1]
        return e

    def _scale(self, mask: BoolArray) -> FloatArray:
        r""":math:`1 / \prod_{A(x)} C_i`."""
        return np.asarray(np.where(mask, 1.0 / self.c[None, :], 1.0).prod(axis=1))

    def window_mass(self, u: FloatArray, lower: int, upper: int) -> FloatArray:
        r""":math:`P(N_{u-1} \le J,\ N_u \ge L)` at nodes ``u``, J = ``lower``, L = ``upper``."""
        mask, z, size = self._above(u)
        below = self.n - size
        e = self._elementary(z, mask, self.n - upper)
        inner = np.zeros((u.size, self.n - upper + 1))
        power = np.ones(u.size)
        for j in range(0, lower + 1):
            active = j <= lower - below
            if not np.any(active):
                break
            for l_ in range(self.n - upper + 1):
                inner[:, l_] += np.where(
                    active, self.binom[np.maximum(size - l_, 0), j] * power, 0.0
                )
            power = power * (u - 1.0)
        total = (e * inner).sum(axis=1)
        return np.asarray(total * self._scale(mask))

    def lower_factor(self, u: FloatArray, a: int) -> FloatArray:
        r""":math:`f(u) = \alpha(u) - \alpha(u - 1)` (zero where :math:`m \le 0`)."""
        mask, _, size = self._above(u)
        m = (a - (self.n - size)).astype(np.float64)
        positive = m > 0
        with np.errstate(divide="ignore", invalid="ignore"):
            drop = -np.expm1(np.where(positive, m, 1.0) * np.log1p(-1.0 / u))
        power = u ** np.where(positive, m, 0.0)
        return np.asarray(np.where(positive, power * drop, 0.0) * self._scale(mask))

    def upper_factor(self, v: FloatArray, a: int) -> FloatArray:
        r""":math:`g(v) = \beta(v - 1) - \beta(v)`."""
        k = self.n - a
        mask, z, size = self._above(v)
        e = self._elementary(z, mask, k - 1)
        j = np.arange(k)
        coef = self.binom[np.maximum(size[:, None] - j[None, :], 0), (k - j)[None, :]]
        return np.asarray((e * coef).sum(axis=1))


def _panels(counts: IntArray) -> tuple[IntArray, IntArray]:
    """Panels of ``1..max C``: starts at every count plus one and at powers of two from 32."""
    top = int(counts.max())
    ladder = []
    value = _LADDER_START
    while value <= top:
        ladder.append(value)
        value *= 2
    breaks = np.concatenate((np.unique(counts) + 1, np.array(ladder, dtype=np.int64)))
    return _pieces(1, top, breaks, top)


def _moments_of(p: FloatArray, m: FloatArray) -> tuple[float, float, float, float]:
    """Centred moments of ``m`` and ``1/m`` under point masses ``p`` (pairwise sums)."""
    mean = float(np.sum(p * m))
    var = float(np.sum(p * (m - mean) ** 2))
    inv = 1.0 / m
    inv_mean = float(np.sum(p * inv))
    inv_var = float(np.sum(p * (inv - inv_mean) ** 2))
    return mean, var, inv_mean, inv_var


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
    starts, lengths = _panels(counts)
    x, w, owner = _piece_nodes(starts, lengths)
    if n % 2:
        half = (n + 1) // 2
        return _moments_of(w * tasks.window_mass(x, half - 1, half), x)
    a = n // 2
    ties = w * tasks.window_mass(x, a - 1, a + 1)
    fw = w * tasks.lower_factor(x, a)
    gw = w * tasks.upper_factor(x, a)
    short = lengths[owner] <= 2 * 16
    pair = (owner[:, None] < owner[None, :]) | (
        (owner[:, None] == owner[None, :]) & short[:, None] & (x[:, None] < x[None, :])
    )
    keep = np.nonzero(pair)
    parts_p = [ties, fw[keep[0]] * gw[keep[1]]]
    parts_m = [x, 0.5 * (x[keep[0]] + x[keep[1]])]
    for s, length in zip(starts.tolist(), lengths.tolist(), strict=True):
        if length <= 2 * 16:
            continue
        t, wt = _integer_rule(1, length - 1, _NU_T)
        u, wu, own = _piece_nodes(np.full(t.size, s, dtype=np.int64), (length - t).astype(np.int64))
        v = u + t[own]
        parts_p.append(wt[own] * wu * tasks.lower_factor(u, a) * tasks.upper_factor(v, a))
        parts_m.append(0.5 * (u + v))
    return _moments_of(np.concatenate(parts_p), np.concatenate(parts_m))
