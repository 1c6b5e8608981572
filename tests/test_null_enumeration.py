"""Every closed form against exact enumeration of all rank tuples, and the Monte-Carlo fallback.

Ranks are independent and uniform under the null, so for small candidate counts enumerating every
rank tuple gives the exact mean and variance of any metric, weighted or not. Such a test cannot be
flaky, and it does catch a wrong formula. Even ``n`` is included on purpose (the median).
"""

from __future__ import annotations

import numpy as np
import pytest

from rankstats import (
    Count,
    HarmonicMeanRank,
    InverseArithmeticMeanRank,
    InverseMedianRank,
    MedianRank,
    RankBasedMetric,
    ReindexedMetric,
    StandardDeviation,
    ZMetric,
    sample_null_values,
)
from support import ALL_METRICS, exact_moments, metric_id

CASES = [
    [1, 2, 3, 5],  # even n: PyKEEN's median expectation gives 1.933 here, the exact value is 1.6
    [2, 3, 4, 4],
    [3, 7, 2],
    [5],
    [2, 2],
    [4, 1, 6, 3, 2],
    [1, 1, 2],
]
WEIGHTS = {4: [1.0, 2.0, 0.5, 3.0], 3: [0.2, 1.0, 2.5], 2: [1.0, 3.0], 5: [1, 0, 2, 1, 4], 1: [2.0]}
#: quadrature-based closed forms are exact to their integration tolerance
#: (expected value, variance) relative tolerances: quadrature-based closed forms are exact to their
#: integration tolerance, every other closed form to rounding
TOLERANCE = {InverseArithmeticMeanRank: (1e-9, 1e-7), HarmonicMeanRank: (1e-9, 1e-7)}


def _tolerance(metric: RankBasedMetric) -> tuple[float, float]:
    base = getattr(metric, "base", metric)
    return TOLERANCE.get(type(base), (1e-12, 1e-12))


def _undefined(metric: RankBasedMetric, candidates: list[int], weights: list[float] | None) -> bool:
    """Whether a derived metric is undefined here: chance already perfect, or no randomness."""
    if isinstance(metric, ZMetric):
        return metric.base.variance(candidates, weights=weights) == 0.0
    if isinstance(metric, ReindexedMetric):
        return metric.base.expected_value(candidates, weights=weights) == 1.0
    return False


def _check(metric: RankBasedMetric, candidates: list[int], weights: list[float] | None) -> None:
    if _undefined(metric, candidates, weights):
        with pytest.raises(ValueError, match="undefined"):
            metric.expected_value(candidates, weights=weights)
        return
    exact_mean, exact_variance = exact_moments(metric, candidates, weights)
    mean_tolerance, variance_tolerance = _tolerance(metric)
    mean = metric.expected_value(candidates, weights=weights)
    variance = metric.variance(candidates, weights=weights)
    assert mean == pytest.approx(exact_mean, rel=mean_tolerance, abs=1e-13)
    assert variance == pytest.approx(exact_variance, rel=variance_tolerance, abs=1e-13)


CLOSED = [m for m in ALL_METRICS if m.closed_expectation and m.closed_variance]


@pytest.mark.parametrize("candidates", CASES, ids=str)
@pytest.mark.parametrize("metric", CLOSED, ids=metric_id)
def test_closed_forms_unweighted(metric: RankBasedMetric, candidates: list[int]) -> None:
    _check(metric, candidates, None)


@pytest.mark.parametrize("candidates", CASES, ids=str)
@pytest.mark.parametrize(
    "metric",
    [m for m in CLOSED if m.supports_weights and not isinstance(m, MedianRank | InverseMedianRank)],
    ids=metric_id,
)
def test_closed_forms_weighted(metric: RankBasedMetric, candidates: list[int]) -> None:
    _check(metric, candidates, WEIGHTS[len(candidates)])


def test_median_even_n_is_the_mean_of_the_middle_pair() -> None:
    """np.median averages the two middle ranks; the closed form must do the same."""
    assert MedianRank().expected_value([1, 2, 3, 5]) == pytest.approx(1.6, rel=1e-14)


@pytest.mark.parametrize("metric", [MedianRank(), InverseMedianRank()], ids=metric_id)
def test_weighted_median_falls_back_to_monte_carlo(metric: RankBasedMetric) -> None:
    candidates, weights = [2, 3, 4, 4], [1.0, 2.0, 0.5, 3.0]
    exact_mean, exact_variance = exact_moments(metric, candidates, weights)
    values = metric.get_sampled_values(candidates, 40_000, weights, generator=0)
    standard_error = values.std() / np.sqrt(values.size)
    assert abs(values.mean() - exact_mean) < 5 * standard_error
    estimate = metric.expected_value(candidates, 40_000, weights, generator=0)
    assert estimate == pytest.approx(values.mean(), rel=1e-15)
    assert metric.variance(candidates, 40_000, weights, generator=0) == pytest.approx(
        exact_variance, rel=0.05
    )


@pytest.mark.parametrize("weights", [None, [1.0, 2.0, 0.5, 3.0]], ids=["unweighted", "weighted"])
def test_monte_carlo_fallback_matches_enumeration(weights: list[float] | None) -> None:
    metric = StandardDeviation()
    candidates = [2, 3, 4, 4]
    exact_mean, exact_variance = exact_moments(metric, candidates, weights)
    mean = metric.expected_value(candidates, num_samples=50_000, weights=weights, generator=1)
    variance = metric.variance(candidates, num_samples=50_000, weights=weights, generator=1)
    standard_error = np.sqrt(exact_variance / 50_000)
    assert abs(mean - exact_mean) < 5 * standard_error
    assert variance == pytest.approx(exact_variance, rel=0.05)
    # reproducible with a seed or a generator
    again = metric.expected_value(candidates, 50_000, weights, generator=np.random.default_rng(1))
    assert again == mean


def test_confidence_intervals_cover_the_exact_value() -> None:
    metric = StandardDeviation()
    candidates = [2, 3, 4, 4, 7]
    exact_mean, exact_variance = exact_moments(metric, candidates)
    low, estimate, high = metric.numeric_expected_value_with_ci(
        candidates, num_samples=20_000, generator=0, confidence_level=0.999
    )
    assert low < estimate < high
    assert low < exact_mean < high
    low, estimate, high = metric.numeric_variance_with_ci(
        candidates, num_samples=20_000, generator=0, confidence_level=0.999, n_boot=200
    )
    assert low < exact_variance < high


def test_closed_forms_agree_with_monte_carlo_at_mid_size() -> None:
    rng = np.random.default_rng(0)
    candidates = rng.integers(1, 500, size=300)
    for metric in CLOSED:
        try:
            mean = metric.expected_value(candidates)
            variance = metric.variance(candidates)
        except ValueError:
            continue
        values = metric.get_sampled_values(candidates, 4_000, generator=1)
        standard_error = np.sqrt(variance / values.size)
        assert abs(values.mean() - mean) <= 5 * standard_error + 1e-12, metric
        if variance > 0:
            assert values.var(ddof=1) == pytest.approx(variance, rel=0.1), metric


def test_shared_samples_equal_one_metric_at_a_time() -> None:
    """Drawing once for several metrics gives each the values it gets on its own, same seed."""
    metrics = [*[m for m in CLOSED if not m.needs_candidates][:4], StandardDeviation()]
    candidates = [2, 3, 4, 4, 7, 1]
    shared = sample_null_values(metrics, candidates, 300, generator=5)
    for row, metric in zip(shared, metrics, strict=True):
        np.testing.assert_array_equal(row, metric.get_sampled_values(candidates, 300, generator=5))
    with pytest.raises(ValueError, match="does not support weights"):
        sample_null_values([Count()], candidates, 10, weights=np.ones(6))
    with pytest.raises(ValueError, match="at least one metric"):
        sample_null_values([], candidates, 10)
