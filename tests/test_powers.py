"""Log power moments K_C(p), dispersions D_C(p) and GMR moments against mpmath and enumeration.

Achieved (mpmath references at 40 digits; C in [1, 1e12], 1e-9 <= |p| <= 2): relative error
<= 6e-16 for K_C(p) and <= 1e-14 for D_C(p) (the worst case is -1/2 <= p < -3/8, where D is
K(2p) - 2K(p)); E and V of the (inverse) geometric mean rank within 1e-15 of exact enumeration
and within 2.3e-15 of the mpmath product formula at n = 1e5 (weighted too). The asserted bounds
leave a margin for other libm / SIMD builds.
"""

from __future__ import annotations

import functools
import itertools
import warnings

import mpmath as mp
import numpy as np
import pytest

from mp_reference import power_sum
from rankstats.null.harmonic import log_rank_mean
from rankstats.null.powers import (
    geometric_mean_log_moments_of,
    geometric_mean_moments,
    log_power_moment,
    log_power_moment_dispersion,
)
from rankstats.null.tasks import Tasks

mp.mp.dps = 40

K_BOUND = 2e-15
D_BOUND = 5e-14

#: Every C to 40 (the direct sums end at 16), then log-spaced up to 1e12.
C_GRID = np.unique(
    np.concatenate(
        [np.arange(1, 41), [64, 100, 101, 1000, 12345], np.round(np.logspace(4.5, 12, 10))]
    ).astype(np.int64)
)
MAGNITUDES = [1e-9, 1e-6, 1e-3, 0.05, 0.3, 0.374, 0.376, 0.5, 0.74, 0.76, 1.0, 1.5, 2.0]
EXPONENTS = sorted(m * s for m in MAGNITUDES for s in (1, -1))


@functools.cache
def k_reference(c: int, p: float) -> mp.mpf:
    """ln E[r^p] in mpmath; p is the float exponent exactly."""
    return mp.log(power_sum(c, mp.mpf(p)) / c)


def d_reference(c: int, p: float) -> mp.mpf:
    return k_reference(c, 2 * p) - 2 * k_reference(c, p)


def relative_error(value: float, reference: mp.mpf) -> float:
    if reference == 0:
        return float(abs(value))
    return float(abs((mp.mpf(value) - reference) / reference))


def test_reference_power_sum_agrees_with_hurwitz_zeta():
    for q, n in [(-1.5, 5000), (-1e-6, 3000), (0.5, 3000), (-0.5, 3000), (1.5, 200)]:
        hurwitz = mp.zeta(-q) - mp.zeta(-q, n + 1)
        assert abs(power_sum(n, mp.mpf(q)) / hurwitz - 1) < mp.mpf(10) ** -30


@pytest.mark.parametrize("p", EXPONENTS)
def test_log_power_moment_against_mpmath(p):
    values = log_power_moment(C_GRID, p)
    errors = [
        relative_error(v, k_reference(int(c), p)) for c, v in zip(C_GRID, values, strict=True)
    ]
    assert max(errors) <= K_BOUND


@pytest.mark.parametrize("p", [p for p in EXPONENTS if abs(p) <= 1])
def test_dispersion_against_mpmath(p):
    values = log_power_moment_dispersion(C_GRID, p)
    errors = [
        relative_error(v, d_reference(int(c), p)) for c, v in zip(C_GRID, values, strict=True)
    ]
    assert max(errors) <= D_BOUND


def test_small_exponent_limits():
    c = C_GRID
    p = 1e-9
    # K ~ p E[ln r]; D ~ p^2 V[ln r] with V[ln r] -> 1 as C -> infinity.
    np.testing.assert_allclose(log_power_moment(c, p) / p, log_rank_mean(c), rtol=1e-7)
    variance = log_power_moment_dispersion(10**12, 1e-9) / 1e-18
    assert variance == pytest.approx(1.0, abs=1e-6)


def test_exact_values():
    p = np.array([-2.0, -1.0, -1e-9, 0.0, 1e-9, 1.0, 2.0])
    assert np.all(log_power_moment(1, p) == 0.0)
    assert np.all(log_power_moment_dispersion(1, p[1:-1]) == 0.0)
    assert np.all(log_power_moment(C_GRID, 0.0) == 0.0)
    assert np.all(log_power_moment_dispersion(C_GRID, 0.0) == 0.0)
    # E[r] = (C + 1) / 2 and E[r^2] = (C + 1)(2C + 1) / 6
    c = np.array([2, 3, 17, 1000, 10**9])
    np.testing.assert_allclose(log_power_moment(c, 1.0), np.log((c + 1) / 2), rtol=1e-15)
    second = (c + 1) * (2 * c + 1) / 6
    np.testing.assert_allclose(log_power_moment(c, 2.0), np.log(second), rtol=1e-15)
    ratio = second / ((c + 1) / 2) ** 2
    np.testing.assert_allclose(log_power_moment_dispersion(c, 1.0), np.log(ratio), rtol=1e-14)


def test_broadcasting_and_shapes():
    c = np.array([[1], [7], [30], [10**6]])
    p = np.array([-0.9, -1e-5, 0.3, 1.0])
    k = log_power_moment(c, p)
    d = log_power_moment_dispersion(c, p)
    assert k.shape == d.shape == (4, 4)
    assert k.dtype == d.dtype == np.float64
    for i, j in itertools.product(range(4), range(4)):
        assert k[i, j] == log_power_moment(int(c[i, 0]), float(p[j]))
        assert d[i, j] == log_power_moment_dispersion(int(c[i, 0]), float(p[j]))
    scalar = log_power_moment(5, 0.5)
    assert isinstance(scalar, np.ndarray)
    assert scalar.shape == ()
    np.testing.assert_array_equal(log_power_moment(c.astype(float), p), k)


def test_no_floating_point_warnings_at_the_extremes():
    c = np.array([1, 2, 16, 17, 18, 10**6, 10**12])[:, None]
    p = np.array([-2.0, -1.0, -0.75, -0.5, -0.375, -1e-300, 0.0, 5e-324, 1e-9, 1.0, 2.0])
    with warnings.catch_warnings(), np.errstate(over="raise", invalid="raise", divide="raise"):
        warnings.simplefilter("error")
        assert np.all(np.isfinite(log_power_moment(c, p)))
        assert np.all(np.isfinite(log_power_moment_dispersion(c, p[1:-1])))
        assert np.all(np.isfinite(geometric_mean_moments(c.ravel(), c.ravel() ** 2.0, sign=-1)))


@pytest.mark.parametrize(
    ("func", "p", "match"),
    [
        (log_power_moment, 2.5, r"\|p\| <= 2"),
        (log_power_moment, [0.1, -2.01], r"\|p\| <= 2"),
        (log_power_moment, float("nan"), r"\|p\| <= 2"),
        (log_power_moment_dispersion, 1.01, r"\|p\| <= 1"),
        (log_power_moment_dispersion, -1.5, r"\|p\| <= 1"),
    ],
)
def test_unsupported_exponents(func, p, match):
    with pytest.raises(ValueError, match=match):
        func([1, 10], p)


def test_unsupported_sign():
    with pytest.raises(ValueError, match="sign must be 1 or -1"):
        geometric_mean_moments([1, 2], sign=2)  # type: ignore[arg-type]


def enumerate_moments(
    candidates: list[int], weights: list[float] | None, sign: int
) -> tuple[mp.mpf, mp.mpf]:
    """E and V of prod_i r_i^(sign a_i) over every rank tuple, in mpmath."""
    w = [mp.mpf(1)] * len(candidates) if weights is None else [mp.mpf(x) for x in weights]
    a = [sign * x / sum(w) for x in w]
    total = total2 = mp.mpf(0)
    count = 0
    for ranks in itertools.product(*[range(1, c + 1) for c in candidates]):
        g = mp.fprod(mp.mpf(r) ** ai for r, ai in zip(ranks, a, strict=True))
        total += g
        total2 += g * g
        count += 1
    mean = total / count
    return mean, total2 / count - mean * mean


@pytest.mark.parametrize("sign", [1, -1])
@pytest.mark.parametrize(
    ("candidates", "weights"),
    [
        ([1, 2, 3, 5], None),
        ([2, 3, 4, 4], None),
        ([1, 2, 3, 5], [1.0, 2.0, 0.5, 3.0]),
        ([2, 3, 4, 4], [0.0, 1.0, 1.0, 2.0]),
        ([7], [3.0]),
        ([17, 20, 3], None),
        ([17, 20, 3], [1.0, 3.0, 2.0]),
    ],
)
def test_geometric_mean_moments_exact_enumeration(candidates, weights, sign):
    expected_mean, expected_variance = enumerate_moments(candidates, weights, sign)
    mean, variance = geometric_mean_moments(candidates, weights, sign=sign)
    assert isinstance(mean, float)
    assert isinstance(variance, float)
    assert relative_error(mean, expected_mean) <= 1e-12
    assert relative_error(variance, expected_variance) <= 1e-12


def test_geometric_mean_moments_weight_conventions():
    c = np.array([3, 17, 17, 250, 4000])
    unweighted = geometric_mean_moments(c)
    assert geometric_mean_moments(c, np.ones(5)) == pytest.approx(unweighted, rel=1e-14)
    assert geometric_mean_moments(c, np.full(5, 7.5)) == pytest.approx(unweighted, rel=1e-14)
    # a zero weight equals removal (integer weights do not equal repetition here: a repeated
    # rank would be a second, independent rank)
    removed = geometric_mean_moments(c[1:], None, sign=-1)
    assert geometric_mean_moments(c, [0, 1, 1, 1, 1], sign=-1) == pytest.approx(removed, rel=1e-14)


def test_geometric_mean_moments_grouping_paths_agree():
    rng = np.random.default_rng(3)
    narrow = rng.integers(1, 2000, size=5000)  # bincount grouping
    wide = np.concatenate([narrow, [10**11]])  # np.unique grouping
    for c in (narrow, wide):
        grouped = geometric_mean_moments(c)
        elementwise = geometric_mean_moments(c, np.ones(c.size))
        assert grouped == pytest.approx(elementwise, rel=1e-13)
    # float input and a 2-D array are accepted
    assert geometric_mean_moments(narrow.astype(float)) == geometric_mean_moments(narrow)
    assert geometric_mean_moments(narrow.reshape(50, 100)) == geometric_mean_moments(narrow)


def product_formula(
    values: np.ndarray, counts: np.ndarray, exponents: list[float]
) -> tuple[mp.mpf, mp.mpf]:
    """E and V from exp(sum K) and expm1(sum D) with K, D in mpmath, per (C, exponent) group."""
    log_mean = mp.fsum(
        int(n) * k_reference(int(c), p) for c, n, p in zip(values, counts, exponents, strict=True)
    )
    log_dispersion = mp.fsum(
        int(n) * d_reference(int(c), p) for c, n, p in zip(values, counts, exponents, strict=True)
    )
    mean = mp.exp(log_mean)
    return mean, mean * mean * mp.expm1(log_dispersion)


@pytest.fixture(scope="module")
def large_candidates() -> tuple[np.ndarray, np.ndarray]:
    """About 8,000 distinct C from 1 to 1e12 with multiplicities summing to n = 1e5."""
    rng = np.random.default_rng(7)
    logs = rng.uniform(0.0, np.log(1e12), size=8000)
    values = np.unique(np.round(np.exp(logs)).astype(np.int64))
    counts = rng.multinomial(10**5 - values.size, np.ones(values.size) / values.size) + 1
    return values, counts


@pytest.mark.parametrize("sign", [1, -1])
def test_geometric_mean_moments_large_n_against_mpmath(large_candidates, sign):
    values, counts = large_candidates
    n = int(counts.sum())
    assert n == 10**5
    c = np.random.default_rng(11).permutation(np.repeat(values, counts))
    mean, variance = geometric_mean_moments(c, sign=sign)
    expected_mean, expected_variance = product_formula(values, counts, [sign / n] * values.size)
    assert relative_error(mean, expected_mean) <= 1e-13
    assert relative_error(variance, expected_variance) <= 1e-12


def test_geometric_mean_moments_large_n_weighted_against_mpmath(large_candidates):
    values, counts = large_candidates
    # one weight per group, from a few levels: the reference needs few zeta values
    levels = np.array([1.0, 2.0, 5.0])
    group_weights = levels[np.arange(values.size) % 3]
    total = float(np.dot(counts, group_weights))
    mean, variance = geometric_mean_moments(
        np.repeat(values, counts), np.repeat(group_weights, counts)
    )
    exponents = [float(w / total) for w in group_weights]
    expected_mean, expected_variance = product_formula(values, counts, exponents)
    assert relative_error(mean, expected_mean) <= 1e-13
    assert relative_error(variance, expected_variance) <= 1e-12


@pytest.mark.parametrize("weighted", [False, True])
def test_both_signs_of_shared_tasks_equal_separate_evaluations(weighted: bool) -> None:
    """GMR and IGMR of one Tasks share one evaluation of both signs: same results."""
    rng = np.random.default_rng(8)
    candidates = rng.integers(1, 10**6, size=3_000)
    weights = rng.random(3_000) if weighted else None
    shared = Tasks(candidates, weights)
    for sign in (1, -1, 1):
        together = geometric_mean_log_moments_of(shared, sign)
        alone = geometric_mean_log_moments_of(Tasks(candidates, weights), sign)
        assert together == alone
    with pytest.raises(ValueError, match="sign must be 1 or -1"):
        geometric_mean_log_moments_of(shared, 2)  # type: ignore[arg-type]
