"""Drawing ranks under the null and bootstrapping."""

from __future__ import annotations

import numpy as np
import pytest

from rankstats.null import sampling
from rankstats.null.sampling import bootstrap_interval, iter_rank_blocks, sample_ranks


def test_sampled_ranks_are_uniform() -> None:
    candidates = np.array([1, 2, 7, 10**12])
    ranks = sample_ranks(candidates, 200_000, np.random.default_rng(0))
    assert ranks.min() >= 1
    assert (ranks <= candidates).all()
    assert (ranks == np.floor(ranks)).all()
    counts = np.bincount(ranks[:, 2].astype(int), minlength=8)[1:]
    expected = 200_000 / 7
    chi2 = ((counts - expected) ** 2 / expected).sum()
    assert chi2 < 30  # 6 degrees of freedom; p ~ 4e-5
    assert ranks[:, 3].mean() == pytest.approx(5e11, rel=0.01)


def test_the_largest_uniform_double_stays_in_range() -> None:
    u = np.nextafter(1.0, 0.0)
    for c in (1, 2, 3, 7, 2**20 + 1, 10**12, 2**52 - 1, 2**53 - 1):
        assert np.floor(u * c) + 1 <= c


def test_blocks_are_bounded(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(sampling, "MAX_BLOCK_ELEMENTS", 100)
    blocks = list(iter_rank_blocks(np.array([5] * 30), 17, np.random.default_rng(0)))
    assert sum(block.shape[0] for block in blocks) == 17
    assert all(block.size <= 100 for block in blocks)


def test_bootstrap_interval_brackets_the_estimate() -> None:
    values = np.random.default_rng(0).normal(size=2_000)
    low, high = bootstrap_interval(
        values, "mean", confidence_level=0.95, num_resamples=500, generator=np.random.default_rng(1)
    )
    assert low < values.mean() < high
    assert high - low == pytest.approx(2 * 1.96 / np.sqrt(2_000), rel=0.2)


def test_metric_methods_stream_their_samples() -> None:
    """expected_value, variance and moments keep running moments, not every sampled value."""
    import tracemalloc

    from rankstats import MedianAbsoluteDeviation

    metric = MedianAbsoluteDeviation()  # no closed form: Monte-Carlo
    peaks = []
    for num_samples in (2**22, 2**24):  # one block of 2**22 rows, then four
        tracemalloc.start()
        try:
            metric.moments([3], num_samples=num_samples, generator=0)
            metric.variance([3], num_samples=num_samples, generator=0)
            peaks.append(tracemalloc.get_traced_memory()[1])
        finally:
            tracemalloc.stop()
    assert peaks[1] < 1.1 * peaks[0]  # every value kept: 100 MB more at 2**24


def test_monte_carlo_entry_points_check_metrics_and_seed() -> None:
    """The metrics may be metrics, their classes or names (resolved as evaluate resolves them);
    anything else, a set (no order for the estimates) and a bad seed are named errors."""
    from rankstats import StandardDeviation, UnknownMetricError, sample_null_values

    metric = StandardDeviation()
    by_name = sampling.null_moments_monte_carlo("std", [3, 5], 200, seed=0)
    by_metric = sampling.null_moments_monte_carlo(metric, [3, 5], 200, seed=0)
    assert isinstance(by_name, sampling.MonteCarloEstimate)
    assert by_name == by_metric
    scalar = sampling.null_moments_monte_carlo(metric, 5, 200, seed=0, num_ranks=2)
    assert scalar == sampling.null_moments_monte_carlo(metric, [5, 5], 200, seed=0)
    for seed, error, pattern in (
        (True, TypeError, r"seed must be a seed \(a non-negative integer\).*got True"),
        ([1, 2], TypeError, r"seed must be a seed .*got \[1, 2\]"),
        (1.5, TypeError, r"seed must be a seed .*got 1\.5"),
        (-1, ValueError, r"seed must be a non-negative seed, got -1"),
    ):
        with pytest.raises(error, match=pattern):
            sampling.null_moments_monte_carlo(metric, [3, 5], 100, seed=seed)  # type: ignore[arg-type]
    with pytest.raises(TypeError, match=r"metrics must be a metric or a sequence .* got a set"):
        sampling.null_moments_monte_carlo({metric}, [3, 5], 100)  # type: ignore[arg-type]
    with pytest.raises(TypeError, match=r"metrics must be metrics, metric classes or their names"):
        sampling.null_moments_monte_carlo(3, [3, 5], 100)  # type: ignore[arg-type]
    with pytest.raises(UnknownMetricError, match=r"unknown metric 'stdd'"):
        sampling.null_moments_monte_carlo(["std", "stdd"], [3, 5], 100)
    named = sample_null_values(["std"], [3, 5], 10, generator=0)
    np.testing.assert_array_equal(named, sample_null_values([metric], [3, 5], 10, generator=0))
    np.testing.assert_array_equal(
        named, sample_null_values([StandardDeviation], [3, 5], 10, generator=0)
    )
    with pytest.raises(
        TypeError, match=r"metrics must be a sequence of metrics .* pass \[metric\]"
    ):
        sample_null_values(metric, [3, 5], 10)  # type: ignore[arg-type]
    with pytest.raises(ValueError, match=r"metrics must name at least one metric, got none"):
        sample_null_values([], [3, 5], 10)
