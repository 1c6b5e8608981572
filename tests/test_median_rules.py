"""The discrete Gauss (Gram) rules of the median null model against exact power sums.

Each rule of ``nu`` nodes on ``0..L-1`` must sum every polynomial of degree below ``2 nu``
exactly; the reference sums come from Bernoulli polynomials in 80-digit arithmetic. The lengths
straddle every tier of the rule tables (computed one by one, tabulated from the interpolant,
summed from the low-degree series, its first three terms far out).
"""

from __future__ import annotations

import mpmath as mp
import numpy as np
import pytest

from rankstats.null.median_rules import _gram_rules


def _exact_mean(length: int, power: int) -> float:
    r"""``mean_{x=0}^{L-1} ((2x - (L - 1)) / L)^power`` (Faulhaber sums, 80 digits)."""
    with mp.workdps(80):
        big = mp.mpf(length)
        total = mp.mpf(0)
        for i in range(power + 1):
            sums = (mp.bernpoly(i + 1, big) - mp.bernpoly(i + 1, 0)) / (i + 1)
            total += mp.binomial(power, i) * 2**i * (-(big - 1)) ** (power - i) * sums
        return float(total / big**power / big)


def _lengths(nu: int) -> list[int]:
    return [
        nu + 1,
        2 * nu + 1,
        4 * nu,
        4 * nu + 1,
        17 * nu + 3,
        64 * nu,
        64 * nu + 1,
        640 * nu,
        640 * nu + 1,
        10**6 + 7,
        10**12 + 3,
    ]


@pytest.mark.parametrize("nu", [3, 8, 16, 24, 32])
def test_gram_rules_sum_polynomials_exactly(nu: int) -> None:
    lengths = np.array(_lengths(nu), dtype=np.int64)
    z, w = _gram_rules(lengths, nu)
    assert np.all(np.diff(z, axis=1) > 0)
    assert np.all(w > 0)
    for row, length in enumerate(lengths.tolist()):
        # nodes x_j = (L - 1) / 2 + L z_j, so (2 x_j - (L - 1)) / L = 2 z_j
        for power in range(0, 2 * nu, 3):
            got = float(np.sum(w[row] * (2.0 * z[row]) ** power))
            assert got == pytest.approx(_exact_mean(length, power), rel=1e-13, abs=1e-15), (
                length,
                power,
            )


def test_gram_rules_repeat_and_order() -> None:
    """Repeated and unsorted lengths get the same rule each time, in the order asked."""
    lengths = np.array([10**9, 40, 10**9, 7000, 40], dtype=np.int64)
    z, w = _gram_rules(lengths, 16)
    single = [_gram_rules(np.array([length]), 16) for length in lengths.tolist()]
    for row, (z1, w1) in enumerate(single):
        assert np.array_equal(z[row], z1[0])
        assert np.array_equal(w[row], w1[0])
