"""A high-precision reference for the median's null moments with two distinct candidate counts.

Independent of the library's machinery (tails, Fourier inversion, Gram rules, product-form
kernels): it conditions on how the ranks fall into *pools*. With counts ``c1 < c2`` (``m1`` and
``m2`` tasks), let ``J`` be the number of ``c2``-tasks whose rank is at most ``c1``
(``J ~ Bin(m2, c1 / c2)``). Given ``J = j``, the ``p = m1 + j`` ranks at most ``c1`` are i.i.d.
uniform on ``1..c1`` and the other ``q = n - p`` i.i.d. uniform on ``c1 + 1..c2``. For ``n = 2a``:

* ``p > a``: both middle ranks are order statistics ``a, a + 1`` of the lower pool (finite sums);
* ``p = a``: ``X_(a)`` is the largest of the lower pool and ``X_(a+1)`` the smallest of the upper
  one, independent;
* ``p = a - 1``: the middle ranks are the two smallest of the upper pool.

(``p < a - 1`` is not covered: ``m1 >= a - 1`` is required.) For ``n = 2a - 1``
(:func:`odd_two_count_reference`) the median is the lower pool's ``a``-th smallest rank where
``p >= a``, and ``c1`` plus the upper pool's smallest where ``p = a - 1``. The sums over the
upper pool, up to ``c2 - c1`` terms, are i.i.d. order-statistic laws summed by Euler-Maclaurin
in mpmath after a direct head (the summands are analytic there), the inner sums of the
two-smallest case in closed form (digamma / Hurwitz zeta). Everything is in mpmath at 30 digits
(60 where the variances are tiny); the moments are returned as floats.
"""

from __future__ import annotations

import functools
from collections.abc import Callable

import mpmath as mp

#: digits of the arithmetic: 30, and 60 where every rank pair lies below c1 (then the variances
#: can be 1e-30 of the squared means, formed as differences of raw moments)
_DPS = 30
_DPS_LOWER = 60
#: terms summed directly before Euler-Maclaurin takes over
_HEAD = 300
#: ranges up to this long are summed term by term
_DIRECT = 4000


def _sum_all(h: Callable[[mp.mpf], tuple[mp.mpf, ...]], top: int) -> tuple[mp.mpf, ...]:
    """``sum_{w=1}^{top} h(w)`` (a tuple per ``w``) for ``h`` analytic on ``[1, top]``."""
    if top <= _DIRECT:
        rows = [h(mp.mpf(w)) for w in range(1, top + 1)]
        return tuple(mp.fsum(row[j] for row in rows) for j in range(len(rows[0])))
    # (keyed by the working precision too: sumem differentiates at raised precision)
    cache: dict[tuple[int, mp.mpf], tuple[mp.mpf, ...]] = {}

    def cached(w: mp.mpf) -> tuple[mp.mpf, ...]:
        key = (mp.mp.prec, w)
        found = cache.get(key)
        if found is None:
            found = cache[key] = h(w)
        return found

    lo = _HEAD + 1
    head = [cached(mp.mpf(w)) for w in range(1, lo)]
    points = [mp.mpf(lo)]
    value = lo
    while value * 2 < top:
        value *= 2
        points.append(mp.mpf(value))
    points.append(mp.mpf(top))
    out = []
    for j in range(len(head[0])):

        def f(w: mp.mpf, j: int = j) -> mp.mpf:
            return cached(w)[j]

        integral = mp.quad(f, points, method="gauss-legendre")
        out.append(mp.fsum(row[j] for row in head) + mp.sumem(f, [lo, top], integral=integral))
    return tuple(out)


def _above(q: int, nn: mp.mpf, w: mp.mpf, first: int) -> mp.mpf:
    """``sum_{j >= first} binom(q, j) N^-j ((N - w) / N)^(q - j)``, by the binomial theorem.

    With ``first = 1`` the probability that the smallest of ``q`` i.i.d. U{1..N} is ``w``, with
    ``first = 2`` that at least two equal ``w`` and the others are larger: ``(r + 1/N)^q`` minus
    its first one or two terms, ``r = (N - w) / N``. The differences of nearly equal powers cost
    up to ``2 log10(N)`` digits, so they are formed with that many more. A polynomial in ``w``
    (also beyond ``N``, where Euler-Maclaurin differentiates it numerically): a series cut where
    its terms became small, as before, was not, and sums over ``N > 4000`` came out wrong (e.g.
    E[M] 71432.2 instead of 71429.07 for 18 counts 1 and 20 counts 10^6).
    """
    extra = 2 * len(str(int(nn))) + 10
    with mp.workdps(mp.mp.dps + extra):
        rest = (nn - w) / nn
        total = (rest + 1 / nn) ** q - rest**q
        if first == 2:
            total -= q / nn * rest ** (q - 1)
    return +total


def _binom_pmf(n: int, k: int, p: mp.mpf) -> mp.mpf:
    return mp.binomial(n, k) * p**k * (1 - p) ** (n - k)


def _lower_pool(p: int, c: int, a: int) -> list[tuple[mp.mpf, mp.mpf, mp.mpf]]:
    """Point masses ``(prob, x, y)`` of order statistics ``a, a + 1`` of ``p`` i.i.d. U{1..c}."""
    out = []
    cc = mp.mpf(c)
    for u in range(1, c + 1):
        fu = mp.binomial(p, a) * (mp.mpf(u) ** a - mp.mpf(u - 1) ** a) / cc**a
        for v in range(u + 1, c + 1):
            gv = (mp.mpf(c - v + 1) ** (p - a) - mp.mpf(c - v) ** (p - a)) / cc ** (p - a)
            out.append((fu * gv, mp.mpf(u), mp.mpf(v)))
        # tie: i ranks below u (i <= a - 1) and at least a + 1 - i of the others equal to u
        tie = mp.mpf(0)
        for i in range(a):
            rest = p - i
            need = a + 1 - i
            prob_i = (
                mp.binomial(p, i) * (mp.mpf(u - 1) / cc) ** i * (mp.mpf(c - u + 1) / cc) ** rest
            )
            if prob_i == 0:
                continue
            s = 1 / mp.mpf(c - u + 1)
            tie += prob_i * mp.fsum(_binom_pmf(rest, j, s) for j in range(need, rest + 1))
        out.append((tie, mp.mpf(u), mp.mpf(u)))
    return out


def _moments_from(parts: list[tuple[mp.mpf, tuple[mp.mpf, ...]]]) -> tuple[mp.mpf, ...]:
    total = mp.fsum(w for w, _ in parts)
    e1, e2, i1, i2 = (mp.fsum(w * m[j] for w, m in parts) / total for j in range(4))
    return e1, e2 - e1 * e1, i1, i2 - i1 * i1


#: a conditional law's point masses, each with the moments (M, M^2, 1/M, 1/M^2) at its point
Parts = list[tuple[mp.mpf, tuple[mp.mpf, ...]]]


def _powers(m: mp.mpf) -> tuple[mp.mpf, mp.mpf, mp.mpf, mp.mpf]:
    return m, m * m, 1 / m, 1 / (m * m)


def _over_pools(
    c1: int,
    m1: int,
    c2: int,
    m2: int,
    a: int,
    deep: bool,
    given: Callable[[int, mp.mpf, int], Parts],
) -> tuple[float, float, float, float]:
    """The moments over ``J``, each value's parts from ``given(p, nn, big_n)``.

    ``p = m1 + J`` ranks fall in the lower pool; ``big_n = c2 - c1`` is the upper pool's range
    (``nn`` the same as an mpf).

    ``deep``: 60 digits rather than 30 (every rank pair below ``c1``: tiny variances).
    """
    assert c1 < c2
    assert m1 >= a - 1
    assert c1 <= 60
    with mp.workdps(_DPS_LOWER if deep else _DPS):
        big_n = c2 - c1
        nn = mp.mpf(big_n)
        ratio = mp.mpf(c1) / c2
        parts: Parts = []
        for j in range(m2 + 1):
            weight = _binom_pmf(m2, j, ratio)
            if weight < mp.mpf(10) ** -40 and j > 2:
                break
            parts += [(weight * prob, moments) for prob, moments in given(m1 + j, nn, big_n)]
        out = _moments_from(parts)
        return tuple(float(v) for v in out)  # type: ignore[return-value]


@functools.cache
def two_count_reference(c1: int, m1: int, c2: int, m2: int) -> tuple[float, float, float, float]:
    """E and V of the median and of its inverse for ``m1`` counts ``c1`` and ``m2`` counts ``c2``.

    Requires ``n = m1 + m2`` even, ``c1 < c2``, ``m1 >= n / 2 - 1``, ``c1 <= 60``.
    """
    n = m1 + m2
    a = n // 2
    assert n % 2 == 0

    def given(p: int, nn: mp.mpf, big_n: int) -> Parts:
        q = n - p
        if p > a:
            return [(prob, _powers((x + y) / 2)) for prob, x, y in _lower_pool(p, c1, a)]
        if p == a:
            return [(mp.mpf(1), _cross(p, c1, q, nn, big_n))]
        return [(mp.mpf(1), _two_smallest(c1, q, nn, big_n))]

    return _over_pools(c1, m1, c2, m2, a, m1 > a, given)


@functools.cache
def odd_two_count_reference(
    c1: int, m1: int, c2: int, m2: int
) -> tuple[float, float, float, float]:
    """:func:`two_count_reference` for an odd number of tasks ``n = 2a - 1`` (``M = X_(a)``).

    Requires ``c1 < c2``, ``m1 >= a - 1`` and ``c1 <= 60``. Given ``p`` ranks in the lower pool:
    ``p >= a``, the median is their ``a``-th smallest (a finite sum over ``1..c1``); ``p = a - 1``,
    it is ``c1`` plus the smallest of the upper pool's ``q`` ranks.
    """
    n = m1 + m2
    a = (n + 1) // 2
    assert n % 2 == 1

    def given(p: int, nn: mp.mpf, big_n: int) -> Parts:
        if p >= a:
            # P(X_(a) <= u) = P(at least a of the p ranks are at most u)
            at_most = [
                mp.fsum(_binom_pmf(p, i, mp.mpf(u) / c1) for i in range(a, p + 1))
                for u in range(c1 + 1)
            ]
            return [(at_most[u] - at_most[u - 1], _powers(mp.mpf(u))) for u in range(1, c1 + 1)]

        def h(w: mp.mpf) -> tuple[mp.mpf, ...]:
            return tuple(_above(n - p, nn, w, 1) * v for v in _powers(c1 + w))

        return [(mp.mpf(1), _sum_all(h, big_n))]

    return _over_pools(c1, m1, c2, m2, a, m1 >= a, given)


def pool_reference(c1: int, m1: int, c2: int, m2: int) -> tuple[float, float, float, float]:
    """:func:`two_count_reference` or :func:`odd_two_count_reference`, by the parity of n."""
    reference = two_count_reference if (m1 + m2) % 2 == 0 else odd_two_count_reference
    return reference(c1, m1, c2, m2)


def _cross(p: int, c1: int, q: int, nn: mp.mpf, big_n: int) -> tuple[mp.mpf, ...]:
    """Moments of M = (X + c1 + W) / 2, X the largest of p U{1..c1}, W the smallest of q U{1..N}."""
    px = [
        (mp.mpf(u), (mp.mpf(u) ** p - mp.mpf(u - 1) ** p) / mp.mpf(c1) ** p)
        for u in range(1, c1 + 1)
    ]

    def pmf_w(w: mp.mpf) -> mp.mpf:
        return _above(q, nn, w, 1)

    def h(w: mp.mpf) -> tuple[mp.mpf, ...]:
        p_w = pmf_w(w)
        return tuple(
            p_w * mp.fsum(pu * ((u + c1 + w) / 2) ** power for u, pu in px)
            for power in (1, 2, -1, -2)
        )

    return _sum_all(h, big_n)


def _two_smallest(c1: int, q: int, nn: mp.mpf, big_n: int) -> tuple[mp.mpf, ...]:
    """Moments of M = c1 + (W1 + W2) / 2, W1 <= W2 the two smallest of q U{1..N}."""
    off = 2 * c1

    def pair_weight(v: mp.mpf) -> mp.mpf:  # P(W1 = u, W2 = v) for any u < v
        return q / nn * _above(q - 1, nn, v, 1)

    def tie(u: mp.mpf) -> mp.mpf:  # P(W1 = W2 = u)
        return _above(q, nn, u, 2)

    def inner(v: mp.mpf, power: int) -> mp.mpf:
        """sum_{u=1}^{v-1} ((off + u + v) / 2)^power: s = off + u + v runs over lo..hi."""
        lo, hi = off + v + 1, off + 2 * v - 1
        if power == -1:
            return 2 * (mp.digamma(hi + 1) - mp.digamma(lo))
        if power == -2:
            return 4 * (mp.zeta(2, lo) - mp.zeta(2, hi + 1))
        count = hi - lo + 1
        s1 = (lo + hi) * count / 2
        if power == 1:
            return s1 / 2
        s2 = (hi * (hi + 1) * (2 * hi + 1) - (lo - 1) * lo * (2 * lo - 1)) / 6
        return s2 / 4

    def h(w: mp.mpf) -> tuple[mp.mpf, ...]:
        pw, tw = pair_weight(w), tie(w)
        return tuple(pw * inner(w, power) + tw * (c1 + w) ** power for power in (1, 2, -1, -2))

    return _sum_all(h, big_n)
