"""High-precision references for the null moments of every metric, independent of rankstats.

Everything here is computed from the definitions in mpmath (50+ digits) or with exact fractions,
without any of the library's helpers. A case is a list of rows ``(C, w, m)``: ``m`` tasks with
``C`` candidates and weight ``w`` each (``w = 1`` unweighted), so that E and V cost follows the
number of distinct rows, not the number of tasks ``n = sum m``.

References (``a = w / W``, ``W = sum m w``):

* MR, MRR, Hits@k: sums of per-task exact moments; H(C) = ``mp.harmonic``,
  H_2(C) = zeta(2) - zeta(2, C + 1).
* GMR, IGMR: E = prod E[r^a]^m, E[G^2] = prod E[r^(2a)]^m, with the power sums
  ``sum_{j <= C} j^p`` summed directly (C <= 200) or by Euler-Maclaurin (zeta(-p) constant) at
  90 digits, so that ln E[G^2] - 2 ln E[G] (of size a^2) keeps 40 digits for a >= 1e-20.
* Variance of the ranks: E[S^2] and V[S^2] expanded in raw moments of independent uniform
  ranks (checked against enumeration by ``self_check``).
* IAMR, HMR: E[1/X] = int_0^inf E[exp(-tX)] dt and E[1/X^2] = int t E[exp(-tX)] dt by mpmath
  quadrature; the arithmetic transform in closed form, the harmonic one
  ``sum_{j<=C} exp(-s/j)`` directly for small C and otherwise with a direct head and an
  Euler-Maclaurin tail whose integral is ``j e^{-s/j} - s E1(s/j)`` and whose derivatives come
  from the power series of ``exp(x u / (1 + u))``.
* Median, inverse median (unweighted): exact enumeration of all rank tuples (small cases);
  n = 1 and n = 2 in closed form (digamma / Hurwitz zeta sums); odd n with one count from the
  regularised incomplete beta function; even n with few small counts from the exact joint law of
  the middle pair (integer arithmetic); two counts, the smaller at most 60 and held by at least
  a - 1 tasks (a the lower middle rank's order), by conditioning on how many ranks fall below it
  (the tests' ``median_pool_reference.py``).
* Derived metrics: the transforms applied to the references above in mpmath.
"""

from __future__ import annotations

import functools
import itertools
import math
import sys
from collections.abc import Callable, Sequence
from fractions import Fraction
from pathlib import Path

import mpmath as mp
import numpy as np

Row = tuple[int, float, int]

__all__ = [
    "Row",
    "base_moments",
    "base_value",
    "median_reference",
]


def _shares(rows: Sequence[Row]) -> list[mp.mpf]:
    total = mp.fsum(mp.mpf(w) * m for _, w, m in rows)
    return [mp.mpf(w) / total for _, w, _ in rows]


# --- harmonic numbers ---------------------------------------------------------------------------


@functools.cache
def _h1(c: int) -> mp.mpf:
    if c <= 1000:
        return mp.fsum(mp.mpf(1) / j for j in range(1, c + 1))
    return mp.harmonic(c)


@functools.cache
def _h2(c: int) -> mp.mpf:
    if c <= 1000:
        return mp.fsum(mp.mpf(1) / (j * j) for j in range(1, c + 1))
    return mp.zeta(2) - mp.zeta(2, c + 1)


# --- power sums ---------------------------------------------------------------------------------


@functools.cache
def _zeta_neg(p: mp.mpf) -> mp.mpf:
    return mp.zeta(-p)


def power_sum(c: int, p: mp.mpf) -> mp.mpf:
    """``sum_{j=1}^{c} j^p`` at the working precision (direct or Euler-Maclaurin)."""
    if c <= 200:
        return mp.fsum(mp.mpf(j) ** p for j in range(1, c + 1))
    if p == -1:
        return mp.harmonic(c)
    big = mp.mpf(c)
    big_p = big**p
    total = _zeta_neg(p) + big * big_p / (p + 1) + big_p / 2
    falling, power = p, big_p / big
    for k in range(1, 60):
        if k > 1:
            falling *= (p - 2 * k + 3) * (p - 2 * k + 2)
            power /= big * big
        term = mp.bernoulli(2 * k) / mp.factorial(2 * k) * falling * power
        total += term
        if abs(term) < mp.eps * abs(total) * 1e-5:
            break
    return total


# --- harmonic Laplace transform -----------------------------------------------------------------

#: digits of the quadratures (the variance cancels log10(n) of them, and mpmath's quadrature
#: stops short of full precision; a miss is confirmed at ``CONFIRM_DPS``)
QUAD_DPS = 40
CONFIRM_DPS = 70
#: beyond this many digits cancelled in V[1/X], the quadrature reference is not attempted
MAX_EXTRA_DPS = 30


class TooCostly(Exception):
    """A reference that would cost too much for a sweep (the input is skipped)."""


#: rows summed term by term in the harmonic transform before Euler-Maclaurin takes over
_HEAD = 100
#: terms with exp(-s / j) below exp(-_CUT) are dropped (beyond any precision used here)
_CUT = 200


def _taylor_exp_ratio(x: mp.mpf, order: int) -> list[mp.mpf]:
    """Coefficients e_m of ``F(u) = exp(x u / (1 + u)) = sum e_m u^m``, m = 0..order.

    From ``(1 + u)^2 F' = x F``: ``(k + 1) e_{k+1} = (x - 2k) e_k - (k - 1) e_{k-1}``.
    """
    e = [mp.mpf(1), x]
    for k in range(1, order):
        e.append(((x - 2 * k) * e[k] - (k - 1) * e[k - 1]) / (k + 1))
    return e[: order + 1]


def _exp_recip_derivatives(s: mp.mpf, j: mp.mpf, order: int) -> list[mp.mpf]:
    """Derivatives 0..order of ``f(j) = exp(-s/j)`` at ``j``."""
    # f(j + h) = exp(-s/j) exp((s/j) u / (1 + u)), u = h / j
    e = _taylor_exp_ratio(s / j, order)
    base = mp.exp(-s / j)
    return [base * e[m] * _factorial(m) / j**m for m in range(order + 1)]


@functools.cache
def _factorial(m: int) -> mp.mpf:
    return mp.factorial(m)


@functools.cache
def _bernoulli_ratio(k: int, prec: int) -> mp.mpf:
    return mp.bernoulli(2 * k) / mp.factorial(2 * k)


def _exp_recip_integral(s: mp.mpf, j: mp.mpf) -> mp.mpf:
    """An antiderivative of ``exp(-s/j)``: ``j exp(-s/j) - s E1(s/j)``."""
    if s == 0:
        return j
    return j * mp.exp(-s / j) - s * mp.e1(s / j)


def _log10_term(two_k: int, start: int) -> float:
    return (math.lgamma(two_k + 1) - two_k * math.log(2 * math.pi * start)) / math.log(10) + 2


def harmonic_transform_sum(c: int, s: mp.mpf) -> mp.mpf:
    """``sum_{j=1}^{c} exp(-s/j)`` for ``s >= 0``."""
    low = max(1, int(s / _CUT))
    if c - low < 2 * _HEAD:
        return mp.fsum(mp.exp(-s / j) for j in range(low, c + 1))
    start = low + _HEAD
    head = mp.fsum(mp.exp(-s / j) for j in range(low, start))
    a, b = mp.mpf(start), mp.mpf(c)
    total = _exp_recip_integral(s, b) - _exp_recip_integral(s, a)
    # the k-th Euler-Maclaurin term is about (2k)! / (2 pi start)^(2k): 2k = order suffices
    order = 1
    while _log10_term(order + 1, start) > -mp.mp.dps - 3:
        order += 2
    da = _exp_recip_derivatives(s, a, order)
    db = _exp_recip_derivatives(s, b, order)
    total += (da[0] + db[0]) / 2
    for k in range(1, (order + 1) // 2 + 1):
        term = _bernoulli_ratio(k, mp.mp.prec) * (db[2 * k - 1] - da[2 * k - 1])
        total += term
        if abs(term) < mp.eps * abs(total) * 1e-5:
            break
    return head + total


# --- reciprocal-of-mean metrics -----------------------------------------------------------------


def _reciprocal_moments(
    log_transform: Callable[[mp.mpf], mp.mpf],
    mean: mp.mpf,
    variance: mp.mpf,
    low: mp.mpf,
    dps: int,
) -> tuple[mp.mpf, mp.mpf]:
    """E[1/X], V[1/X] from ``log E[exp(-tX)]``, X with mean, variance and minimum ``low``.

    ``V[1/X] = E[1/X^2] - E[1/X]^2`` cancels about ``log10(E[X]^2 / V[X])`` digits (the delta
    method): the quadratures run with that many more.
    """
    if variance == 0:
        return 1 / mean, mp.mpf(0)
    extra = max(0, int(mp.log10(mean * mean / variance)))
    if extra > MAX_EXTRA_DPS:
        raise TooCostly(f"V[1/X] / E[1/X]^2 ~ 1e-{extra}")
    dps += extra
    cache: dict[mp.mpf, mp.mpf] = {}

    def transform(t: mp.mpf) -> mp.mpf:
        found = cache.get(t)
        if found is None:
            found = cache[t] = mp.exp(log_transform(t)) if t > 0 else mp.mpf(1)
        return found

    points = [mp.mpf(0)]
    x = mp.mpf(1) / (mean * 1000)
    top = mp.mpf(100) / low
    while x < top:
        points.append(x)
        x *= 10
    points.append(top)
    points.append(mp.inf)
    with mp.workdps(dps):
        first = mp.quad(transform, points)
        second = mp.quad(lambda t: t * transform(t), points)
        return first, second - first * first


def _iamr(rows: Sequence[Row], dps: int) -> tuple[mp.mpf, mp.mpf]:
    a = _shares(rows)

    def log_transform(t: mp.mpf) -> mp.mpf:
        total = mp.mpf(0)
        for (c, _, m), ai in zip(rows, a, strict=True):
            s = t * ai
            if s == 0 or c == 1:
                total += -m * s
                continue
            # E[exp(-s r)] = e^{-s} (1 - e^{-sC}) / (C (1 - e^{-s}))
            total += m * (-s + mp.log(-mp.expm1(-s * c)) - mp.log(c) - mp.log(-mp.expm1(-s)))
        return total

    mean, variance = _mr(rows)
    return _reciprocal_moments(log_transform, mean, variance, mp.mpf(1), dps)


def _hmr(rows: Sequence[Row], dps: int) -> tuple[mp.mpf, mp.mpf]:
    a = _shares(rows)

    def log_transform(t: mp.mpf) -> mp.mpf:
        total = mp.mpf(0)
        for (c, _, m), ai in zip(rows, a, strict=True):
            s = t * ai
            total += m * mp.log(harmonic_transform_sum(c, s) / c)
        return total

    mean, variance = _mrr(rows)
    low = mp.fsum(ai * m / c for (c, _, m), ai in zip(rows, a, strict=True))
    return _reciprocal_moments(log_transform, mean, variance, low, dps)


def hmr_many_rows(rows: Sequence[Row]) -> tuple[mp.mpf, mp.mpf]:
    """E and V of the harmonic mean rank for many rows of small counts (C <= 64).

    For the library's lattice path (over a thousand distinct pairs), where a transform per row
    in mpmath is too slow: the transforms are direct sums in numpy ``longdouble`` (about 19
    digits on x86; the variance cancels ``log10(E[X]^2 / V[X])`` of them), integrated by mpmath.
    Good to about 1e-14 relative, enough to judge 1e-12.
    """
    c = np.array([r[0] for r in rows])
    assert c.max() <= 64
    w = np.array([r[1] for r in rows], dtype=np.longdouble)
    m = np.array([r[2] for r in rows], dtype=np.longdouble)
    a = w / np.sum(m * w)
    j = np.arange(1, 65, dtype=np.longdouble)
    inverse = np.where(j[None, :] <= c[:, None], 1 / j[None, :], np.nan)
    mean_row = np.nanmean(inverse, axis=1)  # E[1/r] per row

    def log_transform(t: mp.mpf) -> mp.mpf:
        s = np.longdouble(str(t)) * a
        # log E[exp(-s / r)] = -s E[1/r] + log mean exp(-s (1/r - E[1/r])), centred
        x = -s[:, None] * (inverse - mean_row[:, None])
        top = np.nanmax(x, axis=1)
        centred = top + np.log(np.nanmean(np.exp(x - top[:, None]), axis=1))
        total = np.sum(m * (centred - s * mean_row))
        return mp.mpf(str(total))

    mean, variance = _mrr(rows)
    low = mp.fsum(mp.mpf(ai) * mm / cc for (cc, _, mm), ai in zip(rows, _shares(rows), strict=True))
    return _reciprocal_moments(log_transform, mean, variance, low, 20)


# --- the base metrics ---------------------------------------------------------------------------


def _mr(rows: Sequence[Row]) -> tuple[mp.mpf, mp.mpf]:
    a = _shares(rows)
    pairs = list(zip(rows, a, strict=True))
    mean = mp.fsum(ai * m * mp.mpf(c + 1) / 2 for (c, _, m), ai in pairs)
    var = mp.fsum(ai * ai * m * (mp.mpf(c) ** 2 - 1) / 12 for (c, _, m), ai in pairs)
    return mean, var


def _mrr(rows: Sequence[Row]) -> tuple[mp.mpf, mp.mpf]:
    a = _shares(rows)
    pairs = list(zip(rows, a, strict=True))
    mean = mp.fsum(ai * m * _h1(c) / c for (c, _, m), ai in pairs)
    var = mp.fsum(ai * ai * m * (_h2(c) / c - (_h1(c) / c) ** 2) for (c, _, m), ai in pairs)
    return mean, var


def _hits(rows: Sequence[Row], k: int) -> tuple[mp.mpf, mp.mpf]:
    a = _shares(rows)
    pairs = list(zip(rows, a, strict=True))
    p = [min(mp.mpf(k) / c, mp.mpf(1)) for c, _, _ in rows]
    mean = mp.fsum(ai * m * pi for ((_, _, m), ai), pi in zip(pairs, p, strict=True))
    var = mp.fsum(ai * ai * m * pi * (1 - pi) for ((_, _, m), ai), pi in zip(pairs, p, strict=True))
    return mean, var


def _gmr(rows: Sequence[Row], sign: int) -> tuple[mp.mpf, mp.mpf]:
    with mp.workdps(mp.mp.dps + 40):
        a = _shares(rows)
        log_first = mp.mpf(0)
        log_second = mp.mpf(0)
        for (c, _, m), ai in zip(rows, a, strict=True):
            if c == 1 or ai == 0:
                continue
            log_first += m * mp.log(power_sum(c, sign * ai) / c)
            log_second += m * mp.log(power_sum(c, 2 * sign * ai) / c)
        mean = mp.exp(log_first)
        var = mean * mean * mp.expm1(log_second - 2 * log_first)
        return +mean, +var


def _variance(rows: Sequence[Row]) -> tuple[mp.mpf, mp.mpf]:
    """E and V of S^2 = sum a_i (r_i - sum a_j r_j)^2, from moments of centred uniforms."""
    a = _shares(rows)
    pairs = list(zip(rows, a, strict=True))
    mu = [(mp.mpf(c) + 1) / 2 for c, _, _ in rows]
    # d_i = mu_i - sum_j a_j mu_j = sum_j a_j (mu_i - mu_j): exactly 0 where every mu is equal
    d = [
        mp.fsum(aj * m * (u - v) for ((_, _, m), aj), v in zip(pairs, mu, strict=True)) for u in mu
    ]
    s2 = [(mp.mpf(c) ** 2 - 1) / 12 for c, _, _ in rows]
    mu4 = [(mp.mpf(c) ** 2 - 1) * (3 * mp.mpf(c) ** 2 - 7) / 240 for c, _, _ in rows]
    # S^2 = sum_i b_i x_i^2 - sum_{i != j} a_i a_j x_i x_j + 2 sum_i a_i d_i x_i + sum a_i d_i^2,
    # x_i centred symmetric, b_i = a_i - a_i^2
    terms = list(zip(rows, a, d, s2, mu4, strict=True))
    mean = mp.fsum(m * (ai - ai * ai) * v for (_, _, m), ai, _, v, _ in terms) + mp.fsum(
        m * ai * di * di for (_, _, m), ai, di, _, _ in terms
    )
    # V = sum b_i^2 (mu4_i - s_i^4) + 2 sum_{i != j} a_i^2 a_j^2 s_i^2 s_j^2
    #     + 4 sum_i a_i^2 d_i^2 s_i^2   (the three parts are uncorrelated by symmetry)
    part1 = mp.fsum(m * (ai - ai * ai) ** 2 * (q4 - v * v) for (_, _, m), ai, _, v, q4 in terms)
    u = [(m, ai * ai * v) for (_, _, m), ai, _, v, _ in terms]
    total = mp.fsum(m * x for m, x in u)
    part2 = 2 * (total * total - mp.fsum(m * x * x for m, x in u))
    part3 = 4 * mp.fsum(m * ai * ai * di * di * v for (_, _, m), ai, di, v, _ in terms)
    return mean, part1 + part2 + part3


def base_gap(key: str, rows: Sequence[Row], k: int = 10) -> mp.mpf:
    """``1 - E`` of a base metric from per-task gaps (exactly 0 where E is exactly 1)."""
    a = _shares(rows)
    pairs = list(zip(rows, a, strict=True))
    if key == "mr":
        return mp.fsum(ai * m * mp.mpf(1 - c) / 2 for (c, _, m), ai in pairs)
    if key == "mrr":
        return mp.fsum(ai * m * (1 - _h1(c) / c) for (c, _, m), ai in pairs)
    if key == "hits":
        return mp.fsum(ai * m * mp.mpf(max(c - k, 0)) / c for (c, _, m), ai in pairs)
    if key in ("gmr", "igmr"):
        with mp.workdps(mp.mp.dps + 40):
            sign = 1 if key == "gmr" else -1
            log_first = mp.fsum(
                m * mp.log(power_sum(c, sign * ai) / c) for (c, _, m), ai in pairs if c > 1
            )
            return -mp.expm1(log_first)
    raise KeyError(key)


def base_moments(
    key: str, rows: Sequence[Row], k: int = 10, quad_dps: int = QUAD_DPS
) -> tuple[mp.mpf, mp.mpf]:
    """Exact E and V of a base metric (by key) for the rows, at the working precision.

    ``quad_dps`` is the precision of the quadratures of the reciprocal-of-mean metrics.
    """
    if key == "mr":
        return _mr(rows)
    if key == "mrr":
        return _mrr(rows)
    if key == "hits":
        return _hits(rows, k)
    if key == "gmr":
        return _gmr(rows, 1)
    if key == "igmr":
        return _gmr(rows, -1)
    if key == "iamr":
        return _iamr(rows, quad_dps)
    if key == "hmr":
        return _hmr(rows, quad_dps)
    if key == "variance":
        return _variance(rows)
    if key == "count":
        return mp.mpf(sum(m for _, _, m in rows)), mp.mpf(0)
    raise KeyError(key)


def base_value(
    key: str, rows: Sequence[Row], ranks: Sequence[Sequence[tuple[float, int]]], k: int = 10
) -> tuple[mp.mpf, mp.mpf]:
    """The base metric M on ranks and its gap ``1 - M`` (``ranks[i]``: (rank, count) of row i)."""
    a = _shares(rows)
    items = [
        (ai, mp.mpf(r), mult)
        for ai, rank_list in zip(a, ranks, strict=True)
        for r, mult in rank_list
    ]
    if key == "mr":
        return (
            mp.fsum(ai * mult * r for ai, r, mult in items),
            mp.fsum(ai * mult * (1 - r) for ai, r, mult in items),
        )
    if key == "mrr":
        return (
            mp.fsum(ai * mult / r for ai, r, mult in items),
            mp.fsum(ai * mult * (r - 1) / r for ai, r, mult in items),
        )
    if key == "hits":
        return (
            mp.fsum(ai * mult for ai, r, mult in items if r <= k),
            mp.fsum(ai * mult for ai, r, mult in items if r > k),
        )
    if key in ("gmr", "igmr"):
        sign = 1 if key == "gmr" else -1
        log_value = sign * mp.fsum(ai * mult * mp.log(r) for ai, r, mult in items)
        return mp.exp(log_value), -mp.expm1(log_value)
    if key in ("iamr", "hmr"):
        inner, inner_gap = base_value("mr" if key == "iamr" else "mrr", rows, ranks, k)
        return 1 / inner, -inner_gap / inner  # 1 - 1/x = (x - 1)/x
    if key == "variance":  # in exact fractions: the value is 0 when every rank is equal
        total = sum(Fraction(w) * m for _, w, m in rows)
        exact = [
            (Fraction(w) / total * mult, Fraction(r))
            for (_, w, _), rank_list in zip(rows, ranks, strict=True)
            for r, mult in rank_list
        ]
        center = sum(share * r for share, r in exact)
        value = sum(share * (r - center) ** 2 for share, r in exact)
        result = mp.mpf(value.numerator) / value.denominator
        return result, 1 - result
    raise KeyError(key)


# --- median -------------------------------------------------------------------------------------


def _moments_of_median_values(values: dict[Fraction, int], total: int) -> tuple[mp.mpf, ...]:
    e1 = mp.fsum(mp.mpf(v.numerator) / v.denominator * c for v, c in values.items()) / total
    e2 = mp.fsum((mp.mpf(v.numerator) / v.denominator) ** 2 * c for v, c in values.items()) / total
    i1 = mp.fsum(mp.mpf(v.denominator) / v.numerator * c for v, c in values.items()) / total
    i2 = mp.fsum((mp.mpf(v.denominator) / v.numerator) ** 2 * c for v, c in values.items()) / total
    return e1, e2 - e1 * e1, i1, i2 - i1 * i1


def _enumerated_median(candidates: list[int]) -> tuple[mp.mpf, ...]:
    grids = np.meshgrid(*[np.arange(1, c + 1) for c in candidates], indexing="ij")
    ranks = np.stack([g.ravel() for g in grids], axis=-1)
    ranks.sort(axis=-1)
    n = len(candidates)
    doubled = ranks[:, (n - 1) // 2] + ranks[:, n // 2]  # twice the median, exact integers
    values, counts = np.unique(doubled, return_counts=True)
    table = {Fraction(int(v), 2): int(c) for v, c in zip(values, counts, strict=True)}
    return _moments_of_median_values(table, int(counts.sum()))


def _sum_smooth(f: Callable[[mp.mpf], mp.mpf], top: int) -> mp.mpf:
    """``sum_{u=1}^{top} f(u)`` for ``f`` analytic and slowly varying on ``[1, top]``."""
    if top <= 3000:
        return mp.fsum(f(mp.mpf(u)) for u in range(1, top + 1))
    head = mp.fsum(f(mp.mpf(u)) for u in range(1, 201))
    return head + mp.sumem(f, [201, top])


def _two_task_median(c1: int, c2: int) -> tuple[mp.mpf, ...]:
    """Median (r1 + r2)/2 of two tasks, c1 <= c2 (c1 summed over, c2 in closed form)."""
    e1 = (mp.mpf(c1 + 1) / 2 + mp.mpf(c2 + 1) / 2) / 2
    var = ((mp.mpf(c1) ** 2 - 1) / 12 + (mp.mpf(c2) ** 2 - 1) / 12) / 4
    # E[2/(u + v)] over v uniform on 1..c2: (2/c2) (psi(u + c2 + 1) - psi(u + 1))
    i1 = _sum_smooth(lambda u: 2 * (mp.digamma(u + c2 + 1) - mp.digamma(u + 1)), c1)
    i2 = _sum_smooth(lambda u: 4 * (mp.zeta(2, u + 1) - mp.zeta(2, u + c2 + 1)), c1)
    i1 /= c1 * c2
    i2 /= c1 * c2
    return e1, var, i1, i2 - i1 * i1


def _odd_single_count_median(c: int, n: int) -> tuple[mp.mpf, ...]:
    """Median X_(a) of n i.i.d. U{1..c}, n = 2a - 1: P(X <= x) = I_{x/c}(a, n - a + 1)."""
    a = (n + 1) // 2
    previous = mp.mpf(0)
    s = [mp.mpf(0)] * 4
    parts: list[list[mp.mpf]] = [[], [], [], []]
    for x in range(1, c + 1):
        cdf = mp.betainc(a, n - a + 1, 0, mp.mpf(x) / c, regularized=True) if x < c else 1
        pmf = cdf - previous
        previous = cdf
        xx = mp.mpf(x)
        for j, v in enumerate((xx, xx * xx, 1 / xx, 1 / (xx * xx))):
            parts[j].append(pmf * v)
    s = [mp.fsum(p) for p in parts]
    return s[0], s[1] - s[0] ** 2, s[2], s[3] - s[2] ** 2


def _odd_single_count_power_sums(c: int, n: int) -> tuple[mp.mpf, ...]:
    r"""The same law in closed form, for any count: its point masses are a polynomial in x.

    :math:`P(X \le x) = \sum_{j \ge a} \binom{n}{j} (x/c)^j (1 - x/c)^{n-j}`, so
    :math:`P(X = x)` is a polynomial in :math:`x` and each moment a combination of power sums
    :math:`\sum_{x=1}^{c} x^q`: Bernoulli polynomials for :math:`q \ge 0`, the harmonic number
    and Hurwitz zeta values below. The coefficients cancel over :math:`c^{n+2}`, so the working
    precision covers that many digits and 40 more.
    """
    a = (n + 1) // 2
    digits = 40 + int((n + 3) * math.log10(max(c, 10)))
    with mp.workdps(digits):
        cm = mp.mpf(c)
        cdf = [mp.mpf(0)] * (n + 1)
        for j in range(a, n + 1):
            for i in range(n - j + 1):
                cdf[j + i] += mp.binomial(n, j) * mp.binomial(n - j, i) * (-1) ** i / cm ** (j + i)
        pmf = list(cdf)  # F(x) - F(x - 1), in powers of x
        for i, coefficient in enumerate(cdf):
            for power in range(i + 1):
                pmf[power] -= coefficient * mp.binomial(i, power) * (-1) ** (i - power)

        def power_sum(q: int) -> mp.mpf:
            if q > 0:
                return (mp.bernpoly(q + 1, cm + 1) - mp.bernpoly(q + 1, 1)) / (q + 1)
            if q == 0:
                return cm
            if q == -1:
                return mp.harmonic(cm)
            return mp.zeta(-q) - mp.zeta(-q, cm + 1)

        e1, e2, i1, i2 = (
            mp.fsum(coefficient * power_sum(k + shift) for k, coefficient in enumerate(pmf))
            for shift in (1, 2, -1, -2)
        )
        out = (e1, e2 - e1 * e1, i1, i2 - i1 * i1)
    return tuple(+value for value in out)


@functools.cache
def _even_single_count_forms(n: int, parity: int) -> dict[str, Callable[[mp.mpf], mp.mpf]]:
    r"""Closed forms of the four raw moments of the median of ``n`` (even) equal counts.

    For :math:`n = 2a` ranks uniform on :math:`1..C`, :math:`C = 2k +` ``parity``: the middle
    pair :math:`u < v` has the mass :math:`\binom{n}{a} f(u) g(v) / C^n` with
    :math:`f(u) = u^a - (u-1)^a` (a ranks at most u, one of them u) and
    :math:`g(v) = (C-v+1)^a - (C-v)^a`, and a tie at u the multinomial sum over the ranks below
    and above u. Summed in :math:`u` at fixed :math:`s = u + v` (Faulhaber), then over
    :math:`s = 2m + r` by parity: polynomials in :math:`m`, and :math:`1/s`, :math:`1/s^2`
    through polygamma functions. Exact symbolic sums (sympy), functions of :math:`k` evaluated
    in mpmath. Keys ``"m1"``, ``"m2"``, ``"i1"``, ``"i2"``: :math:`\mathbb{E}[M]`,
    :math:`\mathbb{E}[M^2]`, :math:`\mathbb{E}[1/M]`, :math:`\mathbb{E}[1/M^2]`.
    """
    import sympy as sp  # a test dependency, needed by this reference only

    a = n // 2
    k = sp.Symbol("k", integer=True, positive=True)
    u, s, m, t = sp.symbols("u s m t", integer=True)
    c = 2 * k + parity
    pairs = sp.expand((u**a - (u - 1) ** a) * ((c - (s - u) + 1) ** a - (c - (s - u)) ** a))
    totals = dict.fromkeys(("m1", "m2", "i1", "i2"), sp.Integer(0))
    ties = dict(totals)

    def inverse_sums(coefficients: list[sp.Expr], power: int, lo: sp.Expr, hi: sp.Expr, r: int):
        # sum over m of sum_j c_j t^(j - power), t = 2m + r
        half = sp.Rational(r, 2)
        total = sp.Integer(0)
        for j, coefficient in enumerate(coefficients):
            e = j - power
            if e >= 0:
                total += coefficient * sp.summation(sp.expand((2 * m + r) ** e), (m, lo, hi))
            elif e == -1:
                total += (
                    coefficient * (sp.polygamma(0, hi + 1 + half) - sp.polygamma(0, lo + half)) / 2
                )
            else:
                total += (
                    coefficient * (sp.polygamma(1, lo + half) - sp.polygamma(1, hi + 1 + half)) / 4
                )
        return total

    for r in (0, 1):
        big_s = 2 * m + r
        for from_one in (True, False):
            # u from max(1, s - C) to floor((s - 1) / 2), for s in 3..C+1 or C+2..2C-1
            low = sp.Integer(1) if from_one else big_s - c
            inner = sp.expand(sp.summation(pairs.subs(s, big_s), (u, low, m - 1 + r)))
            if from_one:
                lo, hi = sp.Integer(1 if r else 2), sp.floor(sp.Rational(1, 2) * (c + 1 - r))
            else:
                lo = sp.ceiling(sp.Rational(1, 2) * (c + 2 - r))
                hi = sp.floor(sp.Rational(1, 2) * (2 * c - 1 - r))
            lo, hi = sp.simplify(lo), sp.simplify(hi)
            totals["m1"] += sp.summation(sp.expand(inner * big_s / 2), (m, lo, hi))
            totals["m2"] += sp.summation(sp.expand(inner * big_s**2 / 4), (m, lo, hi))
            in_t = sp.Poly(sp.expand(inner.subs(m, (t - r) / 2)), t)
            coefficients = [in_t.coeff_monomial(t**j) for j in range(in_t.degree() + 1)]
            totals["i1"] += 2 * inverse_sums(coefficients, 1, lo, hi, r)
            totals["i2"] += 4 * inverse_sums(coefficients, 2, lo, hi, r)
    weights = {"m1": u, "m2": u**2, "i1": 1 / u, "i2": 1 / u**2}
    for below in range(a):
        for above in range(a):
            ways = math.factorial(n) // (
                math.factorial(below) * math.factorial(above) * math.factorial(n - below - above)
            )
            tie = ways * (u - 1) ** below * (c - u) ** above
            for key, weight in weights.items():
                ties[key] += sp.summation(sp.expand(tie * weight), (u, 1, c))

    def harmonic(number: mp.mpf, order: int = 1) -> mp.mpf:
        return mp.harmonic(number) if order == 1 else mp.zeta(order) - mp.zeta(order, number + 1)

    functions = [
        {"polygamma": lambda order, z: mp.psi(int(order), z), "harmonic": harmonic},
        "mpmath",
    ]
    pairs_scale = sp.binomial(n, a)
    return {
        key: sp.lambdify(k, (pairs_scale * totals[key] + ties[key]) / c**n, modules=functions)
        for key in totals
    }


def _even_single_count_closed_form(c: int, n: int) -> tuple[mp.mpf, ...]:
    """E and V of the median and of its inverse for ``n`` (even) equal counts ``c``, exactly."""
    forms = _even_single_count_forms(n, c % 2)
    # the closed forms' terms cancel over c^(n+2): that many digits and 40 more
    with mp.workdps(40 + int((n + 3) * math.log10(max(c, 10)))):
        k = mp.mpf(c // 2)
        e1, e2, i1, i2 = (forms[key](k) for key in ("m1", "m2", "i1", "i2"))
        out = (e1, e2 - e1 * e1, i1, i2 - i1 * i1)
    return tuple(+value for value in out)


def _even_small_median(rows: Sequence[tuple[int, int]]) -> tuple[mp.mpf, ...]:
    """Exact law of (X_(a) + X_(a+1)) / 2, n = 2a, from the joint law of the middle pair.

    (For odd n = 2a - 1, the law of X_(a) from its distribution function alone.)

    With N_x = #{i: r_i <= x}, for x <= y: G(x, y) = P(X_(a) <= x, X_(a+1) > y)
    = P(N_x = a, N_y = a) = [t^a] prod_i (p_i(x) t + q_i(y)), in integers scaled by prod C^m.
    """
    n = sum(m for _, m in rows)
    a = (n + 1) // 2  # the lower middle rank (the median itself for odd n)
    top = max(c for c, _ in rows)
    scale = math.prod(c**m for c, m in rows)

    def poly_power(p: int, q: int, m: int) -> list[int]:
        return [math.comb(m, j) * p**j * q ** (m - j) for j in range(m + 1)]

    @functools.cache
    def g(x: int, y: int) -> int:  # scaled by `scale`
        if x < 0:
            return 0
        out = [1]
        for c, m in rows:
            px, qy = min(x, c), c - min(y, c)
            factor = poly_power(px, qy, m)
            new = [0] * min(len(out) + m, a + 1)
            for i, u in enumerate(out):
                if u == 0:
                    continue
                for j, v in enumerate(factor):
                    if i + j > a:
                        break
                    new[i + j] += u * v
            out = new
        return out[a] if len(out) > a else 0

    @functools.cache
    def cdf_a(x: int) -> int:  # P(X_(a) <= x) = P(N_x >= a), scaled
        out = [1]
        for c, m in rows:
            px = min(x, c)
            factor = poly_power(px, c - px, m)
            new = [0] * (len(out) + m)
            for i, u in enumerate(out):
                for j, v in enumerate(factor):
                    new[i + j] += u * v
            out = new
        return sum(out[a:])

    table: dict[Fraction, int] = {}
    if n % 2 == 1:
        for u in range(1, top + 1):
            table[Fraction(u)] = cdf_a(u) - cdf_a(u - 1)
        return _moments_of_median_values(table, scale)
    for u in range(1, top + 1):
        marginal = cdf_a(u) - cdf_a(u - 1)
        strictly_above = 0
        for v in range(u + 1, top + 1):
            mass = g(u, v - 1) - g(u - 1, v - 1) - g(u, v) + g(u - 1, v)
            if mass:
                key = Fraction(u + v, 2)
                table[key] = table.get(key, 0) + mass
                strictly_above += mass
        tie = marginal - strictly_above
        if tie:
            table[Fraction(u)] = table.get(Fraction(u), 0) + tie
    return _moments_of_median_values(table, scale)


def median_reference(
    rows: Sequence[tuple[int, int]], thorough: bool = False
) -> tuple[mp.mpf, ...] | None:
    """(E, V) of the median and of the inverse median for rows (C, m), or None if infeasible.

    ``thorough`` admits the slower references (n = 2 with both counts above 3000: about 20 s).
    """
    rows = sorted(rows)
    n = sum(m for _, m in rows)
    candidates = [c for c, m in rows for _ in range(m)]
    if rows[-1][0] == 1:
        return mp.mpf(1), mp.mpf(0), mp.mpf(1), mp.mpf(0)
    if n <= 16 and math.prod(candidates) <= 200_000:
        return _enumerated_median(candidates)
    if n == 1:
        c = candidates[0]
        return (
            mp.mpf(c + 1) / 2,
            (mp.mpf(c) ** 2 - 1) / 12,
            _h1(c) / c,
            _h2(c) / c - (_h1(c) / c) ** 2,
        )
    if n == 2 and (thorough or candidates[0] <= 3000):
        return _two_task_median(candidates[0], candidates[1])
    if n % 2 == 1 and len(rows) == 1 and rows[0][0] <= 1500 and n <= 301:
        return _odd_single_count_median(rows[0][0], n)
    if n % 2 == 1 and len(rows) == 1 and n <= 41:
        return _odd_single_count_power_sums(rows[0][0], n)
    if n <= 60 and len(rows) <= 12 and rows[-1][0] <= 200:
        return _even_small_median(rows)
    if n % 2 == 0 and len(rows) == 1 and n <= 6:
        return _even_single_count_closed_form(rows[0][0], n)
    if len(rows) == 2 and rows[0][0] <= 60 and rows[0][1] >= (n + 1) // 2 - 1 and n <= 2_000:
        # (the pool references sum about n terms in mpmath: the random case of 733,700 tasks
        # at counts 2 and 10 had held the full sweep for over an hour)
        return _pooled_median(rows)
    return None


def _pooled_median(rows: Sequence[tuple[int, int]]) -> tuple[mp.mpf, ...]:
    """Two counts, from the tests' references that condition on the pools.

    ``tests/median_pool_reference.py`` (30-60 digits, independent of the library): the small
    count at most 60 and held by at least ``a - 1`` tasks (``a`` the lower middle rank's
    order), the large one anything; even or odd n.
    """
    tests = str(Path(__file__).resolve().parent.parent / "tests")
    if tests not in sys.path:
        sys.path.append(tests)
    from median_pool_reference import pool_reference

    (c1, m1), (c2, m2) = rows
    return tuple(mp.mpf(value) for value in pool_reference(c1, m1, c2, m2))


# --- self check ---------------------------------------------------------------------------------


def enumerate_moments(
    rows: Sequence[Row], f: Callable[[np.ndarray, np.ndarray], float]
) -> tuple[float, float]:
    """Mean and variance of f(ranks, weights) over every rank tuple (long double)."""
    candidates = [c for c, _, m in rows for _ in range(m)]
    weights = np.array([w for _, w, m in rows for _ in range(m)], dtype=float)
    values = [
        f(np.array(t, dtype=float), weights)
        for t in itertools.product(*[range(1, c + 1) for c in candidates])
    ]
    v = np.array(values, dtype=np.longdouble)
    return float(v.mean()), float(((v - v.mean()) ** 2).mean())


#: the values of the metrics the references cover, as numpy computes them from ranks and weights
#: (for the enumeration of every rank tuple)
ENUMERATED_VALUES: dict[str, Callable[[np.ndarray, np.ndarray], float]] = {
    "mr": lambda r, w: np.average(r, weights=w),
    "mrr": lambda r, w: np.average(1 / r, weights=w),
    "hits": lambda r, w: np.average(r <= 3, weights=w),
    "gmr": lambda r, w: np.exp(np.average(np.log(r), weights=w)),
    "igmr": lambda r, w: np.exp(-np.average(np.log(r), weights=w)),
    "iamr": lambda r, w: 1 / np.average(r, weights=w),
    "hmr": lambda r, w: 1 / np.average(1 / r, weights=w),
    "variance": lambda r, w: np.average((r - np.average(r, weights=w)) ** 2, weights=w),
}


def self_check() -> None:
    """The references against enumeration of every rank tuple (prints relative errors)."""
    rows_list: list[list[Row]] = [
        [(3, 1.0, 2), (5, 1.0, 1)],
        [(2, 0.5, 1), (7, 2.0, 2), (4, 1.0, 1)],
        [(1, 1.0, 2), (6, 3.0, 1), (9, 0.25, 1)],
    ]
    funcs = ENUMERATED_VALUES
    with mp.workdps(40):
        for rows in rows_list:
            for key, f in funcs.items():
                mean, var = base_moments(key, rows, k=3)
                want = enumerate_moments(rows, f)
                print(
                    key,
                    rows,
                    float(abs(mean - want[0]) / abs(want[0])),
                    float(abs(var - want[1]) / max(abs(want[1]), 1e-300)),
                )
        for median_rows in ([(3, 2), (5, 2)], [(2, 3), (4, 1)], [(7, 4)], [(4, 2), (6, 4)]):
            got = (
                _even_small_median(median_rows) if sum(m for _, m in median_rows) % 2 == 0 else None
            )
            want = _enumerated_median([c for c, m in median_rows for _ in range(m)])
            if got is not None:
                print(
                    "median",
                    median_rows,
                    [float(abs(x - y) / abs(y)) for x, y in zip(got, want, strict=True)],
                )
        for c1, c2 in ((3, 5), (1, 9)):
            got = _two_task_median(c1, c2)
            want = _enumerated_median([c1, c2])
            print(
                "median2",
                c1,
                c2,
                [float(abs(x - y) / abs(y)) for x, y in zip(got, want, strict=True)],
            )
        got = _odd_single_count_median(9, 5)
        want = _enumerated_median([9] * 5)
        print("median-odd", [float(abs(x - y) / abs(y)) for x, y in zip(got, want, strict=True)])
        # the harmonic transform against a direct sum
        for c, s in ((5000, 3.7), (5000, 900.0), (3000, 1e5), (2000, 0.01)):
            direct = mp.fsum(mp.exp(-mp.mpf(s) / j) for j in range(1, c + 1))
            got = harmonic_transform_sum(c, mp.mpf(s))
            print("transform", c, s, float(abs(got - direct) / direct))
        for c, p in ((5000, 0.37), (5000, -0.9), (300, -1.7), (10**4, 1e-7)):
            direct = mp.fsum(mp.mpf(j) ** p for j in range(1, c + 1))
            print("power", c, p, float(abs(power_sum(c, mp.mpf(p)) - direct) / direct))


if __name__ == "__main__":
    self_check()
