"""Property-based tests (hypothesis) of the invariants every metric and its null model keep.

For random ranks, candidate counts and weights: permutation invariance, weight scaling, a zero
weight equal to removal, integer weights equal to repetition, the same value from lists, arrays
and every numeric dtype, and inputs never modified. Values are compared at 1e-12 relative (plus a
tiny absolute floor for values near zero, such as z-scores at chance).
"""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from rankstats import NoClosedFormError, RankBasedMetric
from rankstats.metrics.derived import DerivedRankBasedMetric, ZMetric
from support import ALL_METRICS, metric_id

SETTINGS = settings(
    max_examples=25, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
WEIGHTED = [m for m in ALL_METRICS if m.supports_weights]
#: integer weights equal repetition for the values, and for the derived metrics whose null
#: expectation is a weighted mean; z-scores and the adjusted geometric mean differ on purpose
#: (a weighted task is one draw counted w times; see RankBasedMetric's docstring)
REPEATABLE = [
    m
    for m in WEIGHTED
    if not isinstance(m, DerivedRankBasedMetric)
    or (not isinstance(m, ZMetric) and m.base._size_free_expectation)
]


@st.composite
def tasks(draw: st.DrawFn, min_size: int = 2, max_size: int = 12) -> tuple[np.ndarray, ...]:
    """Candidate counts (at least one above 1), ranks within them, and positive weights."""
    n = draw(st.integers(min_size, max_size))
    counts = np.array(draw(st.lists(st.integers(1, 60), min_size=n, max_size=n)))
    counts[0] = max(counts[0], 2)
    ranks = np.array([draw(st.integers(1, int(c))) for c in counts], dtype=np.float64)
    # realistic ranks are half-integers where ties are broken in the middle
    halves = np.array(draw(st.lists(st.booleans(), min_size=n, max_size=n)))
    ranks = np.where(halves & (ranks < counts), ranks + 0.5, ranks)
    weights = np.array(
        draw(st.lists(st.floats(0.1, 10.0, allow_nan=False), min_size=n, max_size=n))
    )
    return counts, ranks, weights


def _close(a: float, b: float) -> None:
    assert a == pytest.approx(b, rel=1e-12, abs=1e-13)


def _value(metric: RankBasedMetric, ranks: object, counts: object, weights: object = None) -> float:
    try:
        return metric(ranks, counts, weights)
    except ValueError as error:  # undefined here (e.g. every count 1): the same everywhere
        return float("nan") if "undefined" in str(error) else pytest.fail(str(error))


def _same(a: float, b: float) -> None:
    if np.isnan(a) or np.isnan(b):
        assert np.isnan(a)
        assert np.isnan(b)
    else:
        _close(a, b)


@pytest.mark.parametrize("metric", ALL_METRICS, ids=metric_id)
@SETTINGS
@given(data=tasks(), seed=st.integers(0, 2**32 - 1))
def test_permutation_invariance(metric: RankBasedMetric, data: tuple, seed: int) -> None:
    counts, ranks, weights = data
    order = np.random.default_rng(seed).permutation(counts.size)
    w = weights if metric.supports_weights else None
    shuffled_w = None if w is None else w[order]
    _same(_value(metric, ranks, counts, w), _value(metric, ranks[order], counts[order], shuffled_w))
    if metric.closed_expectation and metric.closed_variance:
        try:
            moments = metric.moments(counts, weights=w)
        except (NoClosedFormError, ValueError):
            return
        shuffled = metric.moments(counts[order], weights=shuffled_w)
        _close(moments.expected_value, shuffled.expected_value)
        _close(moments.variance, shuffled.variance)


@pytest.mark.parametrize("metric", WEIGHTED, ids=metric_id)
@SETTINGS
@given(data=tasks(), scale=st.sampled_from([1e-200, 1e-3, 3.0, 1e150, 1e300]))
def test_scaling_the_weights_changes_nothing(
    metric: RankBasedMetric, data: tuple, scale: float
) -> None:
    counts, ranks, weights = data
    _same(_value(metric, ranks, counts, weights), _value(metric, ranks, counts, weights * scale))


@pytest.mark.parametrize("metric", WEIGHTED, ids=metric_id)
@SETTINGS
@given(data=tasks(min_size=3))
def test_a_zero_weight_is_removal(metric: RankBasedMetric, data: tuple) -> None:
    counts, ranks, weights = data
    zeroed = weights.copy()
    zeroed[-1] = 0.0
    _same(
        _value(metric, ranks, counts, zeroed),
        _value(metric, ranks[:-1], counts[:-1], weights[:-1]),
    )


@pytest.mark.parametrize("metric", REPEATABLE, ids=metric_id)
@SETTINGS
@given(data=tasks(), repeats=st.lists(st.integers(1, 4), min_size=12, max_size=12))
def test_integer_weights_are_repetition(
    metric: RankBasedMetric, data: tuple, repeats: list[int]
) -> None:
    counts, ranks, _ = data
    times = np.array(repeats[: counts.size])
    _same(
        _value(metric, ranks, counts, times.astype(np.float64)),
        _value(metric, np.repeat(ranks, times), np.repeat(counts, times)),
    )


@pytest.mark.parametrize("metric", ALL_METRICS, ids=metric_id)
@SETTINGS
@given(
    data=tasks(),
    dtype=st.sampled_from(["float16", "float32", "float64", "int16", "int32", "uint32", "int64"]),
)
def test_lists_arrays_and_dtypes_agree_and_inputs_stay(
    metric: RankBasedMetric, data: tuple, dtype: str
) -> None:
    counts, ranks, weights = data
    ranks = np.floor(ranks)  # integers: every dtype holds them exactly
    reference = _value(metric, ranks, counts)
    as_lists = _value(metric, ranks.tolist(), counts.tolist())
    typed_ranks, typed_counts = ranks.astype(dtype), counts.astype(dtype)
    before = (typed_ranks.copy(), typed_counts.copy())
    typed = _value(metric, typed_ranks, typed_counts)
    _same(reference, as_lists)
    _same(reference, typed)
    np.testing.assert_array_equal(typed_ranks, before[0])
    np.testing.assert_array_equal(typed_counts, before[1])
    if metric.supports_weights:
        w_before = weights.copy()
        _value(metric, ranks, counts, weights)
        np.testing.assert_array_equal(weights, w_before)
