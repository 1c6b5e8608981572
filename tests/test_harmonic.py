"""Harmonic numbers and the null moments of r, 1/r and ln r against mpmath and exact rationals.

Achieved (40-digit mpmath references, n in [1, 1e12]): relative error <= 3e-16 for p = 1, 2, for
E[1/r], V[1/r] and E[ln r]; <= 5e-16 for the generic orders. The asserted bounds leave a margin
for other libm / SIMD builds.
"""

from __future__ import annotations

import functools
import warnings
from fractions import Fraction

import mpmath as mp
import numpy as np
import pytest

from mp_reference import power_sum
from rankstats.null.harmonic import (
    harmonic_number,
    log_rank_mean,
    rank_mean,
    rank_variance,
    reciprocal_rank_mean,
    reciprocal_rank_variance,
)

mp.mp.dps = 40

#: Dense for small n (the exact table ends at 32), log-spaced up to 1e12.
GRID = np.unique(
    np.concatenate([np.arange(1, 130), np.round(np.logspace(2, 12, 120))]).astype(np.int64)
)

BOUND = 1e-15  # p = 1, 2 and the moments of 1/r and ln r
GENERIC_BOUND = 2e-15  # other orders


def max_relative_error(values: np.ndarray, references: list[mp.mpf]) -> float:
    errors = [
        abs(mp.mpf(float(v)) - r) / abs(r) if r != 0 else abs(mp.mpf(float(v)))
        for v, r in zip(values.ravel(), references, strict=True)
    ]
    return float(max(errors))


def test_reference_power_sum_agrees_with_hurwitz_zeta():
    for q, n in [(-1.5, 5000), (-3.0, 10**6), (0.5, 3000), (-0.5, 3000), (2.5, 200)]:
        hurwitz = mp.zeta(-q) - mp.zeta(-q, n + 1)
        assert abs(power_sum(n, q) / hurwitz - 1) < mp.mpf(10) ** -30


def test_harmonic_number_order_one():
    references = [mp.harmonic(int(n)) for n in GRID]
    assert max_relative_error(harmonic_number(GRID), references) <= BOUND


def test_harmonic_number_order_two():
    references = [mp.zeta(2) - mp.zeta(2, int(n) + 1) for n in GRID]
    assert max_relative_error(harmonic_number(GRID, p=2), references) <= BOUND


def test_harmonic_number_order_one_matches_digamma():
    references = [mp.psi(0, int(n) + 1) + mp.euler for n in GRID[::7]]
    assert max_relative_error(harmonic_number(GRID[::7]), references) <= BOUND


@pytest.mark.parametrize(
    "p", [-16.0, -3.0, -1.0, -0.5, 0.0, 0.5, 0.999999, 1.000001, 1.5, 3.0, 10.0, 64.5, 100.0]
)
def test_harmonic_number_generic_order(p):
    grid = GRID[::3]
    references = [power_sum(int(n), -p) for n in grid]
    assert max_relative_error(harmonic_number(grid, p=p), references) <= GENERIC_BOUND


def test_harmonic_number_small_values_are_exact():
    for p in (1, 2, 3, -2):
        exact = [sum(Fraction(1, j) ** p for j in range(1, n + 1)) for n in range(1, 33)]
        np.testing.assert_array_equal(
            harmonic_number(np.arange(1, 33), p=p), np.array(exact, float)
        )
    assert harmonic_number(10**6, p=0) == 10**6
    assert harmonic_number(100, p=-1) == 5050


def _exact_reciprocal_moments(c: int) -> tuple[Fraction, Fraction]:
    """E[1/r] and V[1/r] by enumerating r = 1..c."""
    mean = sum(Fraction(1, r) for r in range(1, c + 1)) / c
    second = sum(Fraction(1, r * r) for r in range(1, c + 1)) / c
    return mean, second - mean * mean


def test_reciprocal_moments_exact_enumeration():
    c = np.arange(1, 80)
    mean, variance = reciprocal_rank_mean(c), reciprocal_rank_variance(c)
    for i, ci in enumerate(c):
        exact_mean, exact_variance = _exact_reciprocal_moments(int(ci))
        if ci <= 32:  # tabled: correctly rounded
            assert mean[i] == pytest.approx(float(exact_mean), rel=3e-16)
            assert variance[i] == float(exact_variance)
        else:
            assert mean[i] == pytest.approx(float(exact_mean), rel=BOUND)
            assert variance[i] == pytest.approx(float(exact_variance), rel=BOUND)


def test_reciprocal_variance_of_one_candidate_is_zero():
    assert reciprocal_rank_variance(1) == 0.0
    assert reciprocal_rank_variance(np.array([1, 1.0]))[1] == 0.0


def test_reciprocal_moments_against_mpmath():
    c = GRID[GRID > 1]
    means = [mp.harmonic(int(x)) / int(x) for x in c]
    variances = [
        (mp.zeta(2) - mp.zeta(2, int(x) + 1)) / int(x) - (mp.harmonic(int(x)) / int(x)) ** 2
        for x in c
    ]
    assert max_relative_error(reciprocal_rank_mean(c), means) <= BOUND
    assert max_relative_error(reciprocal_rank_variance(c), variances) <= BOUND


def test_log_rank_mean_against_mpmath():
    c = GRID[GRID > 1]
    references = [mp.loggamma(int(x) + 1) / int(x) for x in c]
    assert max_relative_error(log_rank_mean(c), references) <= BOUND
    assert log_rank_mean(1) == 0.0


def test_rank_mean_and_variance_are_correctly_rounded():
    c = np.array([1, 2, 3, 7, 10**8 + 1, 2**40 + 3, 10**12 - 1, 10**12])
    for ci, mean, variance in zip(c, rank_mean(c), rank_variance(c), strict=True):
        exact_variance = Fraction(int(ci) ** 2 - 1, 12)
        assert mean == float(Fraction(int(ci) + 1, 2))
        assert variance == pytest.approx(float(exact_variance), rel=2.3e-16, abs=0)


@pytest.mark.parametrize(
    "func",
    [
        harmonic_number,
        functools.partial(harmonic_number, p=2),
        functools.partial(harmonic_number, p=0.5),
        rank_mean,
        rank_variance,
        reciprocal_rank_mean,
        reciprocal_rank_variance,
        log_rank_mean,
    ],
)
@pytest.mark.parametrize("shape", [(), (5,), (2, 3), (0,)])
def test_shapes_and_dtypes(func, shape):
    values = np.arange(1, 1 + int(np.prod(shape))).reshape(shape) * 37
    result = func(values)
    assert isinstance(result, np.ndarray)
    assert result.dtype == np.float64
    assert result.shape == shape
    np.testing.assert_array_equal(func(values.astype(np.float64)), result)
    if shape == (5,):
        np.testing.assert_array_equal(result[2], func(values[2]))
        np.testing.assert_array_equal(func(list(values)), result)


def test_no_floating_point_warnings_at_the_extremes():
    n = np.array([1, 2, 32, 33, 34, 10**6, 10**12])
    with warnings.catch_warnings(), np.errstate(over="raise", invalid="raise", divide="raise"):
        warnings.simplefilter("error")
        for p in (1, 2, -16, -1, 0, 0.5, 1 + 1e-15, 1 - 1e-15, 2.5, 64, 65, 1e6):
            assert np.all(np.isfinite(harmonic_number(n, p=p)))
        for func in (reciprocal_rank_mean, reciprocal_rank_variance, log_rank_mean):
            assert np.all(np.isfinite(func(n)))


@pytest.mark.parametrize(
    ("p", "match"),
    [(float("nan"), "finite order"), (float("inf"), "finite order"), (-16.5, ">= -16")],
)
def test_unsupported_orders(p, match):
    with pytest.raises(ValueError, match=match):
        harmonic_number([1, 2], p=p)
