"""Regression tests for the public arguments every metric takes: num_samples, scalar counts and
num_ranks, confidence levels, extreme values; each checked on every metric of the registry."""

from __future__ import annotations

import math
import warnings
from collections.abc import Callable
from typing import Any

import mpmath as mp
import numpy as np
import pytest

from rankstats import (
    AdjustedArithmeticMeanRankIndex,
    AdjustedHitsAtK,
    ArithmeticMeanRank,
    Count,
    GeometricMeanRank,
    HitsAtK,
    InverseHarmonicMeanRank,
    NoClosedFormError,
    RankBasedMetric,
    StandardDeviation,
    metric_resolver,
)
from rankstats.base import NullMoments, sample_null_values
from rankstats.metrics.derived import DerivedRankBasedMetric
from support import ALL_METRICS, metric_id

CANDIDATES = [7, 2, 8, 11, 8, 3, 5, 8]
RANKS = [3, 1, 8, 2, 5, 2, 5, 1]

#: every public method that takes num_samples, called with a given num_samples
NUM_SAMPLES_METHODS: dict[str, Callable[[RankBasedMetric, Any], object]] = {
    "expected_value": lambda m, s: m.expected_value(CANDIDATES, num_samples=s),
    "variance": lambda m, s: m.variance(CANDIDATES, num_samples=s),
    "std": lambda m, s: m.std(CANDIDATES, num_samples=s),
    "moments": lambda m, s: m.moments(CANDIDATES, num_samples=s),
    "get_sampled_values": lambda m, s: m.get_sampled_values(CANDIDATES, s),
    "numeric_expected_value": lambda m, s: m.numeric_expected_value(CANDIDATES, s),
    "numeric_variance": lambda m, s: m.numeric_variance(CANDIDATES, s),
    "numeric_expected_value_with_ci": lambda m, s: m.numeric_expected_value_with_ci(CANDIDATES, s),
    "numeric_variance_with_ci": lambda m, s: m.numeric_variance_with_ci(CANDIDATES, s),
}


@pytest.mark.parametrize("method", sorted(NUM_SAMPLES_METHODS))
@pytest.mark.parametrize(
    ("num_samples", "error"),
    [
        (0, ValueError),
        (-3, ValueError),
        (2.5, TypeError),
        (10.0, TypeError),
        (True, TypeError),
        ("10", TypeError),
        (np.float64(10), TypeError),
    ],
)
def test_bad_num_samples_is_refused_even_with_a_closed_form(
    metric: RankBasedMetric, method: str, num_samples: object, error: type[Exception]
) -> None:
    with pytest.raises(error, match=r"num_samples must be a positive integer, got"):
        NUM_SAMPLES_METHODS[method](metric, num_samples)


#: every public method that takes a generator, called with a given one
GENERATOR_METHODS: dict[str, Callable[[RankBasedMetric, Any], object]] = {
    "expected_value": lambda m, g: m.expected_value(CANDIDATES, generator=g),
    "variance": lambda m, g: m.variance(CANDIDATES, generator=g),
    "std": lambda m, g: m.std(CANDIDATES, generator=g),
    "moments": lambda m, g: m.moments(CANDIDATES, num_samples=10, generator=g),
    "get_sampled_values": lambda m, g: m.get_sampled_values(CANDIDATES, 10, generator=g),
    "numeric_expected_value": lambda m, g: m.numeric_expected_value(CANDIDATES, 10, None, g),
    "numeric_variance_with_ci": lambda m, g: m.numeric_variance_with_ci(CANDIDATES, 10, None, g),
    "sample_null_values": lambda m, g: sample_null_values([m], CANDIDATES, 10, generator=g),
}


@pytest.mark.parametrize("method", sorted(GENERATOR_METHODS))
@pytest.mark.parametrize(
    ("generator", "error"),
    [("abc", TypeError), (1.5, TypeError), (True, TypeError), (-1, ValueError)],
)
def test_bad_generator_is_refused_even_with_a_closed_form(
    method: str, generator: object, error: type[Exception]
) -> None:
    with pytest.raises(error, match="generator must be a"):
        GENERATOR_METHODS[method](ArithmeticMeanRank(), generator)


def test_good_generators_are_accepted() -> None:
    for generator in (None, 3, np.int64(3), np.random.default_rng(3), np.random.SeedSequence(3)):
        assert ArithmeticMeanRank().expected_value(CANDIDATES, generator=generator) == 3.75


def test_numpy_integer_num_samples_is_accepted() -> None:
    assert ArithmeticMeanRank().expected_value(CANDIDATES, num_samples=np.int64(5)) == 3.75


@pytest.mark.parametrize("method", ["variance", "numeric_variance", "numeric_variance_with_ci"])
def test_one_sample_gives_no_variance(method: str) -> None:
    with pytest.raises(ValueError, match="num_samples must be at least 2 to estimate a variance"):
        NUM_SAMPLES_METHODS[method](StandardDeviation(), 1)


def test_moments_needs_two_samples_for_monte_carlo() -> None:
    with pytest.raises(ValueError, match="at least 2"):
        StandardDeviation().moments(CANDIDATES, num_samples=1)


# --- scalar num_candidates -----------------------------------------------------------------------


def test_call_broadcasts_a_scalar_count(metric: RankBasedMetric) -> None:
    ranks = [1, 3, 2, 5]
    assert metric(ranks, 6) == metric(ranks, [6, 6, 6, 6])
    assert metric(ranks, np.int64(6)) == metric(ranks, [6, 6, 6, 6])
    if metric.supports_weights:
        assert metric(ranks, 6, weights=2.0) == metric(ranks, [6] * 4)


def test_call_checks_ranks_against_a_scalar_count() -> None:
    with pytest.raises(ValueError, match=r"got rank 5.0 > num_candidates 4 at index 1"):
        ArithmeticMeanRank()([1, 5], 4)


@pytest.mark.parametrize("method", ["expected_value", "variance", "std", "moments"])
def test_null_methods_broadcast_a_scalar_count_with_num_ranks(
    metric: RankBasedMetric, method: str
) -> None:
    call = getattr(metric, method)
    kwargs = {} if metric.closed_expectation and metric.closed_variance else {"num_samples": 500}
    broadcast = call(5, num_ranks=3, generator=1, **kwargs)
    explicit = call([5, 5, 5], generator=1, **kwargs)
    assert broadcast == explicit
    if metric.supports_weights and not kwargs and "Median" not in type(metric).__name__:
        # the weights give the number of tasks too
        weighted = call(5, weights=[1.0, 1.0, 1.0], generator=1, **kwargs)
        np.testing.assert_allclose(weighted, explicit, rtol=1e-14)


def test_sampling_methods_broadcast_a_scalar_count(metric: RankBasedMetric) -> None:
    broadcast = metric.get_sampled_values(5, 50, generator=3, num_ranks=4)
    np.testing.assert_array_equal(broadcast, metric.get_sampled_values([5] * 4, 50, generator=3))
    assert metric.numeric_expected_value(5, 50, generator=3, num_ranks=4) == pytest.approx(
        float(broadcast.mean()), rel=1e-15, abs=1e-15
    )
    interval = metric.numeric_variance_with_ci(5, 50, generator=3, num_ranks=4, n_boot=20)
    assert interval.lower <= interval.upper


@pytest.mark.parametrize(
    "metric",
    [ArithmeticMeanRank(), InverseHarmonicMeanRank(), HitsAtK(k=3), AdjustedHitsAtK(k=3)],
    ids=metric_id,
)
def test_expected_value_of_a_mean_takes_a_bare_scalar(metric: RankBasedMetric) -> None:
    """As in PyKEEN (``expected_value(num_candidates=2)``): the mean's expectation needs no n."""
    for size in (1, 7):
        assert metric.expected_value(20) == pytest.approx(
            metric.expected_value([20] * size), rel=1e-15, abs=1e-15
        )
    # PyKEEN's tests pass 2-D arrays too
    assert metric.expected_value(np.full((10, 2), 20)) == pytest.approx(
        metric.expected_value([20]), rel=1e-15, abs=1e-15
    )


@pytest.mark.parametrize(
    "call",
    [
        lambda: GeometricMeanRank().expected_value(5),
        lambda: Count().expected_value(5),
        lambda: ArithmeticMeanRank().variance(5),
        lambda: ArithmeticMeanRank().moments(5),
        lambda: HitsAtK().std(5),
        lambda: AdjustedHitsAtK().get_coefficients(5),
        lambda: ArithmeticMeanRank().get_sampled_values(5, 10),
    ],
)
def test_scalar_count_that_needs_n_says_so(call: Callable[[], object]) -> None:
    with pytest.raises(ValueError, match=r"num_candidates is the scalar 5.*pass num_ranks="):
        call()


@pytest.mark.parametrize(
    ("kwargs", "error", "message"),
    [
        ({"num_ranks": 0}, ValueError, "num_ranks must be a positive integer, got 0"),
        ({"num_ranks": 2.0}, TypeError, "num_ranks must be a positive integer, got 2.0"),
        ({"num_ranks": True}, TypeError, "num_ranks must be a positive integer, got True"),
        (
            {"num_candidates": [3, 4], "num_ranks": 3},
            ValueError,
            r"num_ranks must equal the number of entries of num_candidates \(2\), got 3",
        ),
        (
            {"num_ranks": 3, "weights": [1.0, 2.0]},
            ValueError,
            r"weights must have one entry per rank task like num_candidates \(3\), got 2",
        ),
    ],
)
def test_bad_num_ranks(kwargs: dict[str, Any], error: type[Exception], message: str) -> None:
    kwargs = {"num_candidates": 5, **kwargs}
    with pytest.raises(error, match=message):
        ArithmeticMeanRank().variance(**kwargs)


def test_scalar_weights_broadcast() -> None:
    assert ArithmeticMeanRank().variance([3, 4, 5], weights=2.0) == ArithmeticMeanRank().variance(
        [3, 4, 5]
    )


# --- moments ---------------------------------------------------------------------------------


def test_moments_is_expected_value_and_variance(metric: RankBasedMetric) -> None:
    if not (metric.closed_expectation and metric.closed_variance):
        with pytest.raises(NoClosedFormError, match="pass num_samples="):
            metric.moments(CANDIDATES)
        moments = metric.moments(CANDIDATES, num_samples=2000, generator=5)
        values = metric.get_sampled_values(CANDIDATES, 2000, generator=5)
        assert moments == (float(values.mean()), float(values.var(ddof=1)))
    else:
        moments = metric.moments(CANDIDATES)
        assert moments == (metric.expected_value(CANDIDATES), metric.variance(CANDIDATES))
    assert isinstance(moments, NullMoments)
    assert type(moments.expected_value) is float
    assert type(moments.variance) is float
    assert moments.std == math.sqrt(moments.variance)


# --- extreme values --------------------------------------------------------------------------


def _no_warnings(call: Callable[[], float]) -> float:
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        return call()


def test_weights_whose_sum_overflows_are_rescaled(metric: RankBasedMetric) -> None:
    if not metric.supports_weights:
        pytest.skip("no weights")
    huge = np.full(len(RANKS), 1e308)
    tiny = np.full(len(RANKS), 5e-324)
    plain = metric(RANKS, CANDIDATES)
    for weights in (huge, tiny):
        assert _no_warnings(lambda w=weights: metric(RANKS, CANDIDATES, w)) == pytest.approx(
            plain, rel=1e-14, abs=1e-15
        )
    try:
        reference = metric.moments(CANDIDATES, weights=np.arange(1.0, 9.0))
    except NoClosedFormError:
        pass
    else:
        scaled = metric.moments(CANDIDATES, weights=np.arange(1.0, 9.0) * 1e300)
        np.testing.assert_allclose(scaled, reference, rtol=1e-13)


def test_weights_input_is_not_modified_when_rescaled() -> None:
    weights = np.full(3, 1e308)
    ArithmeticMeanRank()([1, 2, 3], weights=weights)
    assert (weights == 1e308).all()


def _mp_mean(r: list[mp.mpf]) -> mp.mpf:
    return mp.fsum(r) / len(r)


def _mp_variance(r: list[mp.mpf]) -> mp.mpf:
    mean = _mp_mean(r)
    return _mp_mean([(x - mean) ** 2 for x in r])


#: the metrics that skip the search for huge ranks, with an mpmath reference for their results
_HUGE_RANK_REFERENCES: dict[str, Callable[[list[mp.mpf]], mp.mpf]] = {
    "ArithmeticMeanRank": _mp_mean,
    "GeometricMeanRank": lambda r: mp.exp(_mp_mean([mp.log(x) for x in r])),
    "Variance": _mp_variance,
    "StandardDeviation": lambda r: mp.sqrt(_mp_variance(r)),
}


@pytest.mark.parametrize(
    "ranks",
    [
        [1.0, 1e300],
        [1.0, 1.7e308],
        np.array([1, 2**62], dtype=np.int64),
        np.array([1, 2**64 - 1], dtype=np.uint64),
        [1.0, 2.0**53 + 2],
    ],
)
def test_ranks_beyond_two_to_the_53_give_an_error_or_the_right_number(
    metric: RankBasedMetric, ranks: list[float]
) -> None:
    """No ranking has more than 2**53 candidates: such ranks are refused, except by the metrics
    that do not look for them, which compute the right value or refuse when it overflows."""
    if metric.needs_candidates:  # integer ranks are checked first, counts otherwise
        with pytest.raises(
            ValueError,
            match=r"num_candidates must be integers between 1 and 2|ranks must be at most 2",
        ):
            metric(ranks, ranks)
        return
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        try:
            value = metric(ranks)
        except ValueError as error:
            message = str(error)
        else:
            message = ""
    if message:
        assert "ranks must be at most 2**53" in message
        return
    reference = _HUGE_RANK_REFERENCES.get(type(metric).__name__)
    if isinstance(metric, Count):
        assert value == 2.0
    else:
        assert reference is not None, f"{metric!r} accepted ranks above 2**53"
        with mp.workdps(40):
            exact = reference([mp.mpf(float(x)) for x in np.asarray(ranks, dtype=np.float64)])
        # exp(mean log r) at log r ~ 700 carries the rounding of its argument: ~700 eps
        assert value == pytest.approx(float(exact), rel=2e-13)


@pytest.mark.parametrize("dtype", [np.float16, np.float32, np.int8, np.uint16, np.longdouble])
def test_small_and_wide_dtypes_give_the_float64_result_without_warnings(
    metric: RankBasedMetric, dtype: type
) -> None:
    ranks = np.array(RANKS, dtype=dtype)
    candidates = np.array(CANDIDATES, dtype=dtype)
    weights = None
    if metric.supports_weights and "Median" not in type(metric).__name__:
        weights = np.array([1, 2, 1, 3, 1, 1, 2, 1], dtype=dtype)
    expected = metric(RANKS, CANDIDATES, None if weights is None else weights.astype(float))
    assert _no_warnings(lambda: metric(ranks, candidates, weights)) == expected
    if metric.closed_expectation:
        assert _no_warnings(lambda: metric.expected_value(candidates, weights=weights)) == (
            metric.expected_value(CANDIDATES, weights=None if weights is None else weights * 1.0)
        )


def test_float16_overflowing_count_is_refused_without_warning() -> None:
    with pytest.raises(ValueError, match="num_candidates must be integers between 1 and 2"):
        _no_warnings(lambda: ArithmeticMeanRank().expected_value(np.array([3, np.inf], "f2")))


def test_count_is_larger_is_better() -> None:
    assert Count.increasing is True
    assert metric_resolver.lookup("count").increasing


# --- adjusting published values --------------------------------------------------------------


@pytest.mark.parametrize(
    ("value", "error", "message"),
    [
        (float("nan"), ValueError, r"base_metric_result must be a value of ArithmeticMeanRank"),
        (0.5, ValueError, r"in \[1, ∞\), got 0.5"),
        ("2", TypeError, "base_metric_result must be a real number, got '2'"),
        (True, TypeError, "base_metric_result must be a real number, got True"),
        ([2.0], TypeError, "base_metric_result must be a real number"),
    ],
)
def test_adjust_refuses_impossible_base_values(
    value: object, error: type[Exception], message: str
) -> None:
    with pytest.raises(error, match=message):
        AdjustedArithmeticMeanRankIndex().adjust(value, [5, 5])  # type: ignore[arg-type]


def test_adjust_broadcasts_a_scalar_count() -> None:
    metric = AdjustedArithmeticMeanRankIndex()
    assert metric.adjust(2.0, 5, num_ranks=4) == metric.adjust(2.0, [5, 5, 5, 5]) == 0.5


@pytest.mark.parametrize(
    "metric", [m for m in ALL_METRICS if isinstance(m, DerivedRankBasedMetric)]
)
def test_adjust_matches_call(metric: DerivedRankBasedMetric) -> None:
    base_value = metric.base(RANKS, CANDIDATES)
    assert metric.adjust(base_value, CANDIDATES) == pytest.approx(
        metric(RANKS, CANDIDATES), rel=1e-13, abs=1e-14
    )
