"""Invariants every metric the resolver knows must satisfy, run over the whole registry."""

from __future__ import annotations

import inspect
import math

import numpy as np
import pytest

import rankstats
from rankstats import (
    Count,
    GeometricMeanRank,
    MedianAbsoluteDeviation,
    NoClosedFormError,
    RankBasedMetric,
    StandardDeviation,
    ValueRange,
    Variance,
    metric_resolver,
)
from rankstats.metrics.derived import DerivedRankBasedMetric, ZMetric
from support import ALL_CLASSES, ALL_METRICS, DERIVED_METRICS, Z_METRICS, metric_id

NUM_CANDIDATES = np.array([7, 2, 8, 11, 8, 3, 5, 8, 11, 11, 14, 1])
RNG_RANKS = np.array([3, 1, 8, 2, 5, 2, 5, 1, 10, 4, 6, 1])
#: the dispersion metrics and the count do not measure how good the ranks are
NOT_QUALITY = (Variance, StandardDeviation, MedianAbsoluteDeviation, Count)


def _concrete_subclasses(cls: type) -> set[type]:
    found = set()
    for sub in cls.__subclasses__():
        if not inspect.isabstract(sub) and sub.__module__.startswith("rankstats."):
            found.add(sub)
        found |= _concrete_subclasses(sub)
    return found


def _kwargs(metric: RankBasedMetric, weights: np.ndarray | None = None) -> dict[str, object]:
    kwargs: dict[str, object] = {"num_candidates": NUM_CANDIDATES}
    if weights is not None:
        kwargs["weights"] = weights
    return kwargs


def test_no_metric_is_forgotten() -> None:
    """The resolver knows every concrete metric class, and the package exports each of them."""
    intermediate = {
        rankstats.DerivedRankBasedMetric,
        rankstats.ExpectationNormalizedMetric,
        rankstats.ReindexedMetric,
        rankstats.ZMetric,
    }
    concrete = _concrete_subclasses(RankBasedMetric) - intermediate
    assert set(metric_resolver) == concrete
    assert {cls.__name__ for cls in concrete} == {
        *("ArithmeticMeanRank", "InverseArithmeticMeanRank", "GeometricMeanRank"),
        *("InverseGeometricMeanRank", "HarmonicMeanRank", "InverseHarmonicMeanRank"),
        *("MedianRank", "InverseMedianRank", "HitsAtK", "StandardDeviation", "Variance"),
        *("MedianAbsoluteDeviation", "Count", "AdjustedArithmeticMeanRank"),
        *("AdjustedArithmeticMeanRankIndex", "ZArithmeticMeanRank"),
        *("AdjustedGeometricMeanRankIndex", "ZGeometricMeanRank"),
        *("AdjustedInverseHarmonicMeanRank", "ZInverseHarmonicMeanRank"),
        *("AdjustedHitsAtK", "ZHitsAtK"),
    }
    for cls in concrete:
        assert getattr(rankstats, cls.__name__) is cls
        assert cls.__name__ in rankstats.__all__


@pytest.mark.parametrize("cls", ALL_CLASSES, ids=lambda c: c.__name__)
def test_metadata(cls: type[RankBasedMetric]) -> None:
    assert isinstance(cls.name, str)
    assert cls.name
    assert isinstance(cls.value_range, ValueRange)
    assert isinstance(cls.increasing, bool)
    assert cls.get_description(), f"{cls.__name__} has no docdata description"
    assert cls.get_link().startswith("https://")
    assert cls.get_range() == cls.value_range.notate()
    assert set(cls.supported_rank_types) <= {"optimistic", "realistic", "pessimistic"}
    assert cls.binarize is False
    if issubclass(cls, DerivedRankBasedMetric):
        assert cls.needs_candidates
        assert cls.supports_weights == cls.base_cls.supports_weights


@pytest.mark.parametrize("cls", ALL_CLASSES, ids=lambda c: c.__name__)
def test_every_synonym_and_the_key_resolve(cls: type[RankBasedMetric]) -> None:
    assert metric_resolver.lookup(cls.__name__) is cls
    for synonym in cls.synonyms:
        assert metric_resolver.lookup(synonym) is cls, synonym
    instance = metric_resolver.make(cls)
    assert metric_resolver.make(instance.key) == instance
    assert metric_resolver.make(repr(instance).split("(")[0]) == type(instance)()


def test_value_in_range_and_a_python_float(metric: RankBasedMetric) -> None:
    best = np.ones_like(NUM_CANDIDATES)
    worst = NUM_CANDIDATES
    for ranks in (best, worst, RNG_RANKS, (best + worst) / 2):
        value = metric(ranks, **_kwargs(metric))
        assert type(value) is float
        assert value in metric.value_range.approximate(1e-12), (ranks, value)


def test_permutation_invariance(metric: RankBasedMetric) -> None:
    weights = np.linspace(0.5, 2.0, NUM_CANDIDATES.size) if metric.supports_weights else None
    permutation = np.random.default_rng(1).permutation(NUM_CANDIDATES.size)
    original = metric(RNG_RANKS, NUM_CANDIDATES, weights)
    permuted = metric(
        RNG_RANKS[permutation],
        NUM_CANDIDATES[permutation],
        None if weights is None else weights[permutation],
    )
    assert permuted == pytest.approx(original, rel=1e-13, abs=1e-13)


@pytest.mark.parametrize(
    "metric", [m for m in ALL_METRICS if not isinstance(m, NOT_QUALITY)], ids=metric_id
)
def test_direction(metric: RankBasedMetric) -> None:
    """Moving every rank to 1 never makes a quality metric worse, and the best beats the worst."""
    best = metric(np.ones_like(NUM_CANDIDATES), NUM_CANDIDATES)
    worst = metric(NUM_CANDIDATES, NUM_CANDIDATES)
    middle = metric(RNG_RANKS, NUM_CANDIDATES)
    if metric.increasing:
        assert best > worst
        assert best >= middle >= worst
    else:
        assert best < worst
        assert best <= middle <= worst


def test_std_is_sqrt_variance(metric: RankBasedMetric) -> None:
    num_samples = None if metric.closed_variance else 200
    variance = metric.variance(NUM_CANDIDATES, num_samples=num_samples, generator=3)
    std = metric.std(NUM_CANDIDATES, num_samples=num_samples, generator=3)
    assert std == pytest.approx(math.sqrt(variance), rel=1e-14)
    assert type(std) is float
    assert type(variance) is float


def test_no_closed_form_raises_without_num_samples(metric: RankBasedMetric) -> None:
    if metric.closed_expectation and metric.closed_variance:
        pytest.skip("closed forms exist")
    method = metric.variance if metric.closed_expectation else metric.expected_value
    with pytest.raises(NoClosedFormError, match="num_samples="):
        method(NUM_CANDIDATES)


@pytest.mark.parametrize("metric", [m for m in ALL_METRICS if m.supports_weights], ids=metric_id)
class TestWeights:
    def test_none_equals_unit_weights(self, metric: RankBasedMetric) -> None:
        unit = np.ones(NUM_CANDIDATES.size)
        assert metric(RNG_RANKS, NUM_CANDIDATES, unit) == pytest.approx(
            metric(RNG_RANKS, NUM_CANDIDATES), rel=1e-13, abs=1e-13
        )

    def test_scaling_changes_nothing(self, metric: RankBasedMetric) -> None:
        weights = np.linspace(0.5, 2.0, NUM_CANDIDATES.size)
        for factor in (0.1, 3.0, 1e6):
            assert metric(RNG_RANKS, NUM_CANDIDATES, weights * factor) == pytest.approx(
                metric(RNG_RANKS, NUM_CANDIDATES, weights), rel=1e-12, abs=1e-12
            )

    def test_zero_weight_is_removal(self, metric: RankBasedMetric) -> None:
        weights = np.linspace(0.5, 2.0, NUM_CANDIDATES.size)
        weights[[2, 5]] = 0.0
        keep = weights > 0
        expected = metric(RNG_RANKS[keep], NUM_CANDIDATES[keep], weights[keep])
        assert metric(RNG_RANKS, NUM_CANDIDATES, weights) == pytest.approx(
            expected, rel=1e-12, abs=1e-12
        )

    def test_integer_weights_are_repeats(self, metric: RankBasedMetric) -> None:
        if isinstance(metric, ZMetric):
            pytest.skip("z-scores of weights and of repeats differ by design (see RankBasedMetric)")
        if isinstance(metric, DerivedRankBasedMetric) and isinstance(
            metric.base, GeometricMeanRank
        ):
            pytest.skip("E[GMR] of a weighted draw and of repeated draws differ (Jensen)")
        weights = np.array([1, 2, 3, 1, 1, 2, 4, 1, 1, 2, 1, 3])
        repeated = metric(np.repeat(RNG_RANKS, weights), np.repeat(NUM_CANDIDATES, weights))
        assert metric(RNG_RANKS, NUM_CANDIDATES, weights) == pytest.approx(
            repeated, rel=1e-12, abs=1e-12
        )

    def test_weighted_null_moments_ignore_scale(self, metric: RankBasedMetric) -> None:
        weights = np.linspace(0.5, 2.0, NUM_CANDIDATES.size)
        num_samples = 64  # used only where there is no closed form
        first = metric.expected_value(NUM_CANDIDATES, num_samples, weights, generator=0)
        second = metric.expected_value(NUM_CANDIDATES, num_samples, 7 * weights, generator=0)
        assert first == pytest.approx(second, rel=1e-10, abs=1e-12)


def test_weights_rejected_where_unsupported() -> None:
    with pytest.raises(ValueError, match="does not support weights"):
        Count()([1, 2], weights=[1.0, 1.0])


@pytest.mark.parametrize("metric", DERIVED_METRICS, ids=metric_id)
def test_derived_is_affine_in_base(metric: DerivedRankBasedMetric) -> None:
    weights = np.linspace(0.5, 2.0, NUM_CANDIDATES.size)
    for w in (None, weights):
        scale, offset = metric.get_coefficients(NUM_CANDIDATES, w)
        base_value = metric.base(RNG_RANKS, NUM_CANDIDATES, w)
        assert metric(RNG_RANKS, NUM_CANDIDATES, w) == pytest.approx(
            scale * base_value + offset, rel=1e-13, abs=1e-13
        )
        assert metric.adjust(base_value, NUM_CANDIDATES, w) == pytest.approx(
            metric(RNG_RANKS, NUM_CANDIDATES, w), rel=1e-13, abs=1e-13
        )
        base_mean = metric.base.expected_value(NUM_CANDIDATES, weights=w)
        base_var = metric.base.variance(NUM_CANDIDATES, weights=w)
        assert metric.expected_value(NUM_CANDIDATES, weights=w) == pytest.approx(
            scale * base_mean + offset, abs=1e-12
        )
        assert metric.variance(NUM_CANDIDATES, weights=w) == pytest.approx(
            scale**2 * base_var, rel=1e-12
        )


@pytest.mark.parametrize("metric", Z_METRICS, ids=metric_id)
def test_z_scores_are_standardised_and_larger_is_better(metric: ZMetric) -> None:
    assert metric.expected_value(NUM_CANDIDATES) == 0.0
    assert metric.variance(NUM_CANDIDATES) == 1.0
    assert metric(np.ones_like(NUM_CANDIDATES), NUM_CANDIDATES) > 0
    assert metric(NUM_CANDIDATES, NUM_CANDIDATES) < 0


def test_input_containers_agree(metric: RankBasedMetric) -> None:
    class TensorLike:
        """A stand-in for a CPU tensor: only ``__array__``."""

        def __init__(self, data: np.ndarray) -> None:
            self.data = data

        def __array__(self, dtype: object = None, copy: object = None) -> np.ndarray:
            return self.data if dtype is None else self.data.astype(dtype)

    reference = metric(RNG_RANKS, NUM_CANDIDATES)
    for convert in (
        list,
        tuple,
        lambda a: a.astype(float),
        lambda a: a.astype(np.int32),
        TensorLike,
    ):
        assert metric(convert(RNG_RANKS), convert(NUM_CANDIDATES)) == pytest.approx(
            reference, rel=1e-15, abs=1e-15
        )


def test_half_integer_ranks(metric: RankBasedMetric) -> None:
    realistic = np.array([1.5, 2.0, 3.5, 1.0])
    value = metric(realistic, num_candidates=[4, 4, 4, 4])
    assert math.isfinite(value)
    assert value in metric.value_range.approximate(1e-12)


def test_inputs_are_not_modified(metric: RankBasedMetric) -> None:
    ranks = RNG_RANKS.astype(float)
    candidates = NUM_CANDIDATES.copy()
    weights = np.linspace(0.5, 2.0, NUM_CANDIDATES.size) if metric.supports_weights else None
    saved = [a.copy() for a in (ranks, candidates) + (() if weights is None else (weights,))]
    metric(ranks, candidates, weights)
    num_samples = 16  # used only where there is no closed form
    metric.expected_value(candidates, num_samples, weights, generator=0)
    metric.variance(candidates, num_samples, weights, generator=0)
    after = [ranks, candidates] + ([] if weights is None else [weights])
    for before, now in zip(saved, after, strict=True):
        np.testing.assert_array_equal(before, now)


def test_repr_and_equality(metric: RankBasedMetric) -> None:
    assert eval(repr(metric), vars(rankstats)) == metric
    assert hash(eval(repr(metric), vars(rankstats))) == hash(metric)


@pytest.mark.parametrize("bad", [np.inf, np.nan, 0.5, -np.inf], ids=str)
@pytest.mark.parametrize("with_weights", [False, True], ids=["unweighted", "weighted"])
def test_every_metric_rejects_bad_ranks(
    metric: RankBasedMetric, bad: float, with_weights: bool
) -> None:
    """Whichever shortcut validation takes for a metric, a bad rank never yields a number."""
    if with_weights and not metric.supports_weights:
        pytest.skip("no weights")
    ranks = RNG_RANKS.astype(float)
    ranks[4] = bad
    weights = np.zeros(ranks.size) if with_weights else None
    if weights is not None:
        weights[:3] = 1.0  # the bad rank has weight 0 and still must be reported
    candidates = None if not metric.needs_candidates else NUM_CANDIDATES
    with pytest.raises(ValueError, match=r"ranks must .* at index 4"):
        metric(ranks, candidates, weights)
