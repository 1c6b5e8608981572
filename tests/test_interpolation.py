"""Interpolation in log C stands for many distinct counts without changing results; memory
stays independent of the counts."""

from __future__ import annotations

import tracemalloc

import numpy as np
import pytest

from rankstats import (
    ArithmeticMeanRank,
    GeometricMeanRank,
    HarmonicMeanRank,
    InverseArithmeticMeanRank,
    InverseGeometricMeanRank,
    InverseHarmonicMeanRank,
    Variance,
    ZInverseHarmonicMeanRank,
)
from rankstats.null import interpolation
from rankstats.null.harmonic import harmonic_number
from rankstats.null.interpolation import interpolation_pairs
from rankstats.null.reciprocal import harmonic_mean_moments, inverse_arithmetic_mean_moments


def _log_uniform(rng: np.random.Generator, n: int, high: float) -> np.ndarray:
    return np.exp(rng.uniform(0.0, np.log(high), n)).astype(np.int64) + 1


@pytest.mark.parametrize("high", [1e6, 1e9, 1e15])
def test_folded_weights_reproduce_sums_of_smooth_functions(high: float) -> None:
    rng = np.random.default_rng(7)
    counts = np.unique(_log_uniform(rng, 20_000, high))
    multiplicity = rng.integers(1, 4, counts.size).astype(np.float64)
    shares = np.full(counts.size, 1e-5)
    nodes, _, weights = interpolation_pairs(counts, shares, multiplicity)
    assert nodes.size < 1200 + np.count_nonzero(counts < interpolation.LOWEST)
    c, folded = nodes.astype(np.float64), weights
    original = counts.astype(np.float64)
    for function in (
        lambda x: harmonic_number(x) / x,
        lambda x: np.log(x) ** 2,
        lambda x: np.sqrt(x) / (1.0 + x / 1e4),
    ):
        exact = np.sum(multiplicity * function(original))
        assert np.sum(folded * function(c)) == pytest.approx(exact, rel=1e-14)


def _exact_path(
    monkeypatch: pytest.MonkeyPatch, function: object, *args: object
) -> tuple[float, float]:
    with monkeypatch.context() as patch:
        patch.setattr(interpolation, "MIN_DISTINCT", 10**12)
        return function(*args)  # type: ignore[operator,no-any-return]


@pytest.mark.parametrize(
    ("label", "high", "weighted"),
    [
        ("log-uniform-1e6", 1e6, False),
        ("log-uniform-1e9", 1e9, False),
        ("log-uniform-1e12", 1e12, False),
        ("two-weights-1e9", 1e9, True),
    ],
)
@pytest.mark.parametrize(
    "function", [harmonic_mean_moments, inverse_arithmetic_mean_moments], ids=["hmr", "iamr"]
)
def test_reciprocal_moments_unchanged_by_interpolation(
    monkeypatch: pytest.MonkeyPatch, function: object, label: str, high: float, weighted: bool
) -> None:
    rng = np.random.default_rng(11)
    counts = _log_uniform(rng, 6_000, high)
    counts[:50] = rng.integers(1, 40, 50)  # small counts, kept exact, next to the folded ones
    weights = rng.choice([1.0, 2.5], counts.size) if weighted else None
    interpolated = function(counts, weights)  # type: ignore[operator]
    exact = _exact_path(monkeypatch, function, counts, weights)
    # the expected values agree to 1e-16; the variances, which amplify the rounding of the
    # transforms (about 1e-15 either way) by the centring, to 3e-14
    assert interpolated[0] == pytest.approx(exact[0], rel=2e-16)
    assert interpolated[1] == pytest.approx(exact[1], rel=5e-14)


def test_few_distinct_counts_are_not_folded() -> None:
    counts = np.arange(5000, 5000 + interpolation.MIN_DISTINCT - 1)
    ones = np.ones(counts.size)
    out = interpolation_pairs(counts, ones * 1e-3, ones)
    np.testing.assert_array_equal(out[0], counts)


def test_counts_spread_over_many_intervals_are_not_folded() -> None:
    """Fewer counts than MIN_GAIN times the interpolation counts that would replace them."""
    counts = np.unique(np.geomspace(5000, 1e12, 2 * interpolation.MIN_DISTINCT).astype(np.int64))
    ones = np.ones(counts.size)
    out = interpolation_pairs(counts, ones * 1e-3, ones)
    np.testing.assert_array_equal(out[0], counts)


def test_a_narrow_band_of_counts_is_folded() -> None:
    """A dataset's filtered counts (FB15k-237: ~1000 within 7% of 14,541) become 17 nodes."""
    counts = np.arange(13_541, 14_542, dtype=np.int64)
    multiplicity = np.random.default_rng(3).integers(1, 40, counts.size).astype(np.float64)
    nodes, shares, weights = interpolation_pairs(counts, np.full(counts.size, 1e-4), multiplicity)
    assert nodes.size == interpolation.DEGREE + 1
    assert np.all(shares == 1e-4)
    assert np.sum(weights) == pytest.approx(np.sum(multiplicity), rel=1e-14)
    exact = np.sum(multiplicity * harmonic_number(counts) / counts)
    assert np.sum(weights * harmonic_number(nodes) / nodes) == pytest.approx(exact, rel=1e-14)


@pytest.mark.parametrize("size", [4_000, 20_466])
def test_filtered_dataset_counts_unchanged_by_interpolation(
    monkeypatch: pytest.MonkeyPatch, size: int
) -> None:
    rng = np.random.default_rng(5)
    counts = 14_541 - rng.integers(0, 1_000, size=size)
    for function in (harmonic_mean_moments, inverse_arithmetic_mean_moments):
        interpolated = function(counts)
        exact = _exact_path(monkeypatch, function, counts)
        assert interpolated[0] == pytest.approx(exact[0], rel=2e-15)
        assert interpolated[1] == pytest.approx(exact[1], rel=5e-14)


@pytest.mark.parametrize(
    "metric",
    [
        HarmonicMeanRank(),
        InverseArithmeticMeanRank(),
        GeometricMeanRank(),
        InverseGeometricMeanRank(),
        InverseHarmonicMeanRank(),
        ArithmeticMeanRank(),
        Variance(),
        ZInverseHarmonicMeanRank(),
    ],
    ids=repr,
)
@pytest.mark.parametrize("weighted", [False, True])
def test_memory_does_not_grow_with_the_candidate_counts(metric: object, weighted: bool) -> None:
    """A handful of tasks with 1e15 candidates each: kilobytes, not the terabytes of a sum."""
    counts = np.array([10**15, 10**15 - 1, 3 * 10**14, 10**14 + 7, 2])
    weights = np.array([1.0, 2.0, 0.5, 1.0, 3.0]) if weighted else None
    tracemalloc.start()
    try:
        moments = metric.moments(counts, weights=weights)  # type: ignore[attr-defined]
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert np.isfinite(moments).all()
    assert peak < 4 * 2**20


# ------------------------------------------------------------------ Chebyshev points


def test_chebyshev_points_nest_and_ascend() -> None:
    """The points of ``size`` are every other one of ``2 size - 1``, ascending in [-1, 1]."""
    for size in (2, 3, 33, 129):
        points = interpolation.chebyshev_points(size)
        assert points[0] == -1.0
        assert points[-1] == 1.0
        assert np.all(np.diff(points) > 0)
        assert np.array_equal(points, interpolation.chebyshev_points(2 * size - 1)[::2])


@pytest.mark.parametrize("size", [9, 65, 257])
def test_chebyshev_interpolate_is_exact_for_polynomials(size: int) -> None:
    """Any affine image of the points; a polynomial of degree below ``size`` comes back.

    Also a query on a point takes that point's value (the barycentric terms are infinite there).
    """
    rng = np.random.default_rng(size)
    lo, hi = 5_000.25, 9_000.75
    points = 0.5 * (lo + hi) + 0.5 * (hi - lo) * interpolation.chebyshev_points(size)
    coef = rng.normal(size=(size, 2)) / (1.0 + np.arange(size))[:, None]
    values = np.polynomial.chebyshev.chebval((2.0 * points - lo - hi) / (hi - lo), coef).T
    at = np.concatenate((rng.uniform(lo, hi, 200), points[[0, size // 3, -1]]))
    expected = np.polynomial.chebyshev.chebval((2.0 * at - lo - hi) / (hi - lo), coef).T
    got = interpolation.chebyshev_interpolate(values, points, at)
    assert np.max(np.abs(got - expected)) <= 1e-13 * np.max(np.abs(values))
    assert np.array_equal(got[-3:], values[[0, size // 3, -1]])


def test_chebyshev_coefficients_of_chebyshev_polynomials() -> None:
    """T_j sampled at the points has coefficient (-1)^j (the points ascend) at j, 0 elsewhere."""
    size = 33
    t = interpolation.chebyshev_points(size)
    for j in (0, 1, 7, size - 1):
        coef = interpolation.chebyshev_coefficients(np.cos(j * np.arccos(t))[:, None])[:, 0]
        expected = np.zeros(size)
        expected[j] = (-1.0) ** j
        assert np.max(np.abs(coef - expected)) < 1e-14
