"""High-precision (mpmath) references shared by the numeric tests."""

from __future__ import annotations

import functools

import mpmath as mp


@functools.cache
def _zeta(s: mp.mpf) -> mp.mpf:
    return mp.zeta(s)


def power_sum(n: int, q: float) -> mp.mpf:
    """Reference sum_{j <= n} j^q: direct for n <= 100, else zeta(-q) + Euler-Maclaurin."""
    q = mp.mpf(q)
    if n <= 100:
        return mp.fsum(mp.mpf(j) ** q for j in range(1, n + 1))
    if q == -1:
        return mp.harmonic(n)
    big = mp.mpf(n)
    big_q = big**q
    total = _zeta(-q) + big * big_q / (q + 1) + big_q / 2
    falling, power = q, big_q / big
    for k in range(1, 30):
        if k > 1:
            falling *= (q - 2 * k + 3) * (q - 2 * k + 2)
            power /= big * big
        term = mp.bernoulli(2 * k) / mp.factorial(2 * k) * falling * power
        total += term
        if abs(term) < mp.eps * abs(total) * 1e-3:
            break
    return total
