"""Property-based tests (hypothesis) of the invariants every part of the public API promises.

- every metric, its expected value and its variance are invariant under permuting the tasks;
- scaling all weights changes nothing; a zero weight is the same as leaving the task out; an
  integer weight is the same as repeating the task (for the value and the expected value: the
  variance of a weighted mean is not that of repeated tasks, see the weights guide);
- lists, tuples, integer and float32 / float64 arrays give the same numbers;
- no function changes its input arrays;
- the accumulator gives :func:`rankstats.evaluate`'s results to the last bit however the ranks are
  split into batches, and a failed update, merge or report leaves accumulator and stopper exactly
  as they were.

Examples are small (n <= 24 tasks, at most 40 candidates) and few (``max_examples`` about 50), so
the whole module takes seconds; the exact-enumeration and mpmath tests elsewhere check the numbers
themselves.
"""

from __future__ import annotations

import inspect
import itertools
import json
import math
from collections.abc import Callable
from typing import Any

import numpy as np
import pytest

hypothesis = pytest.importorskip("hypothesis")
from hypothesis import given, settings  # noqa: E402
from hypothesis import strategies as st  # noqa: E402

from rankstats import (  # noqa: E402
    DerivedRankBasedMetric,
    EarlyStopper,
    NoClosedFormError,
    RankAccumulator,
    RankBasedMetric,
    Ranks,
    ZMetric,
    evaluate,
    metric_resolver,
    ranks_from_scores,
)

SETTINGS = settings(max_examples=40, deadline=None, derandomize=True)
SMALL = settings(max_examples=25, deadline=None, derandomize=True)

#: every metric; cut-offs at k = 1, where the adjusted Hits@k is defined for any C >= 2
METRICS: list[RankBasedMetric] = [
    cls(k=1) if "k" in inspect.signature(cls).parameters else cls() for cls in metric_resolver
]
WEIGHTED = [metric for metric in METRICS if metric.supports_weights]
#: metrics whose value is a weighted mean of per-task terms, or a functional of the weighted
#: distribution of the ranks, so that scaling the weights changes nothing
SCALE_FREE = [metric for metric in WEIGHTED if metric.key != "count"]

RTOL = 1e-12
#: metrics that are weighted arithmetic means of per-task terms, so that their expected value
#: under weights equals that under repetition (not so for the geometric or harmonic mean)
LINEAR = {"arithmetic_mean_rank", "inverse_harmonic_mean_rank", "hits_at_1"}


def close(left: float | None, right: float | None, rtol: float = RTOL) -> bool:
    """Equal up to ``rtol``, NaN included; ``None`` (no closed form for this input) is unknown."""
    if left is None or right is None:
        return True
    if math.isnan(left) or math.isnan(right):
        return math.isnan(left) and math.isnan(right)
    return math.isclose(left, right, rel_tol=rtol, abs_tol=rtol)


@st.composite
def tasks(draw: st.DrawFn, max_n: int = 12, half: bool = True) -> tuple[Any, Any]:
    """Ranks (integers or half-integers) with their candidate counts."""
    n = draw(st.integers(1, max_n))
    # at least two candidates: with one, chance is perfect and the adjusted metrics are undefined
    candidates = np.array(draw(st.lists(st.integers(2, 30), min_size=n, max_size=n)))
    # a rank in [1, C], on the half-integer grid where allowed
    steps = np.array(draw(st.lists(st.floats(0, 1, exclude_max=True), min_size=n, max_size=n)))
    grid = 2 if half else 1
    ranks = 1 + np.floor(steps * ((candidates - 1) * grid + 1)) / grid
    return ranks, candidates


@st.composite
def weighted_tasks(draw: st.DrawFn) -> tuple[Any, Any, Any]:
    ranks, candidates = draw(tasks())
    weights = np.array(
        draw(
            st.lists(
                st.sampled_from([0.0, 0.25, 0.5, 1.0, 2.0, 3.0, 7.5]),
                min_size=ranks.size,
                max_size=ranks.size,
            )
        )
    )
    if not weights.any():
        weights[draw(st.integers(0, ranks.size - 1))] = 1.0
    return ranks, candidates, weights


def moments(
    metric: RankBasedMetric, candidates: Any, weights: Any = None
) -> list[Callable[[], float | None]]:
    """The closed-form expected value and variance, as calls; ``None`` where there is none."""

    def closed(method: Callable[..., float]) -> Callable[[], float | None]:
        def call() -> float | None:
            try:
                return method(candidates, weights=weights)
            except NoClosedFormError:  # e.g. the weighted median
                return None

        return call

    calls: list[Callable[[], float | None]] = []
    if metric.closed_expectation:
        calls.append(closed(metric.expected_value))
    if metric.closed_variance:
        calls.append(closed(metric.variance))
    return calls


# --- permutation -------------------------------------------------------------------------------


@SETTINGS
@given(data=weighted_tasks(), seed=st.integers(0, 2**32 - 1))
def test_permuting_the_tasks_changes_nothing(data: tuple[Any, Any, Any], seed: int) -> None:
    ranks, candidates, weights = data
    order = np.random.default_rng(seed).permutation(ranks.size)
    for metric in METRICS:
        w = weights if metric.supports_weights else None
        wp = None if w is None else w[order]
        assert close(metric(ranks, candidates, w), metric(ranks[order], candidates[order], wp))
        for before, after in zip(
            moments(metric, candidates, w),
            moments(metric, candidates[order], wp),
            strict=True,
        ):
            assert close(before(), after(), 1e-10), metric


# --- weights -------------------------------------------------------------------------------------


@SETTINGS
@given(data=weighted_tasks(), factor=st.sampled_from([1e-3, 0.5, 3.0, 1e6]))
def test_scaling_the_weights_changes_nothing(data: tuple[Any, Any, Any], factor: float) -> None:
    ranks, candidates, weights = data
    for metric in SCALE_FREE:
        assert close(
            metric(ranks, candidates, weights), metric(ranks, candidates, weights * factor), 1e-10
        ), metric
        for before, after in zip(
            moments(metric, candidates, weights),
            moments(metric, candidates, weights * factor),
            strict=True,
        ):
            assert close(before(), after(), 1e-10), metric


@SETTINGS
@given(data=weighted_tasks())
def test_unit_weights_are_no_weights(data: tuple[Any, Any, Any]) -> None:
    ranks, candidates, _ = data
    ones = np.ones(ranks.size)
    for metric in WEIGHTED:
        assert close(metric(ranks, candidates, ones), metric(ranks, candidates), 1e-10), metric
        for weighted, plain in zip(
            moments(metric, candidates, ones), moments(metric, candidates), strict=True
        ):
            assert close(weighted(), plain(), 1e-10), metric


@SETTINGS
@given(data=weighted_tasks())
def test_a_zero_weight_is_removal(data: tuple[Any, Any, Any]) -> None:
    ranks, candidates, weights = data
    keep = weights > 0
    for metric in WEIGHTED:
        assert close(
            metric(ranks, candidates, weights),
            metric(ranks[keep], candidates[keep], weights[keep]),
            1e-10,
        ), metric
        for with_zeros, without in zip(
            moments(metric, candidates, weights),
            moments(metric, candidates[keep], weights[keep]),
            strict=True,
        ):
            assert close(with_zeros(), without(), 1e-10), metric


@SETTINGS
@given(data=tasks(), repeats=st.lists(st.integers(0, 3), min_size=12, max_size=12))
def test_an_integer_weight_is_repetition(data: tuple[Any, Any], repeats: list[int]) -> None:
    ranks, candidates = data
    counts = np.array(repeats[: ranks.size])
    if not counts.any():
        counts[0] = 1
    weights = counts.astype(np.float64)
    repeated_ranks, repeated_candidates = np.repeat(ranks, counts), np.repeat(candidates, counts)
    for metric in WEIGHTED:
        base = metric.base if isinstance(metric, DerivedRankBasedMetric) else None
        if base is None or (not isinstance(metric, ZMetric) and base.key in LINEAR):
            # values: every base metric is a functional of the weighted distribution of the ranks;
            # a derived metric also depends on the null model, which repetition changes except
            # for the expected value of a weighted arithmetic mean (z-scores use the variance)
            assert close(
                metric(ranks, candidates, weights),
                metric(repeated_ranks, repeated_candidates),
                1e-10,
            ), metric
        if metric.key in LINEAR:
            # the expected value of a weighted arithmetic mean of per-task terms
            for weighted, repeated in zip(
                moments(metric, candidates, weights)[:1],
                moments(metric, repeated_candidates)[:1],
                strict=True,
            ):
                assert close(weighted(), repeated(), 1e-10), metric


# --- containers and dtypes -----------------------------------------------------------------------

CONTAINERS: list[Callable[[Any], Any]] = [
    lambda a: a.tolist(),
    lambda a: tuple(a.tolist()),
    lambda a: np.asarray(a, dtype=np.float64),
    lambda a: np.asarray(a, dtype=np.float32),
    lambda a: np.asarray(a, dtype=np.int64) if np.all(a == np.floor(a)) else a,
    lambda a: np.asarray(a, dtype=np.int32) if np.all(a == np.floor(a)) else a,
    lambda a: np.asarray(a, dtype=np.uint16) if np.all(a == np.floor(a)) else a,
]


@SETTINGS
@given(data=weighted_tasks())
def test_containers_and_dtypes_give_the_same_numbers(data: tuple[Any, Any, Any]) -> None:
    ranks, candidates, weights = data
    for metric in METRICS:
        w = weights if metric.supports_weights else None
        reference = metric(ranks, candidates, w)
        expected = [call() for call in moments(metric, candidates, w)]
        for position, convert in enumerate(CONTAINERS):
            value = metric(convert(ranks), convert(candidates), None if w is None else convert(w))
            assert type(value) is float
            assert close(value, reference), (metric, convert(ranks))
            if position not in (0, 3):  # the null model: from a list and from float32
                continue
            for call, want in zip(
                moments(metric, convert(candidates), None if w is None else convert(w)),
                expected,
                strict=True,
            ):
                assert close(call(), want, 1e-10), metric


@SMALL
@given(data=tasks())
def test_evaluate_takes_any_container(data: tuple[Any, Any]) -> None:
    ranks, candidates = data
    reference = json.dumps(evaluate(ranks, candidates, metrics=["mrr", "amri", "hits@3"]).to_dict())
    for convert in CONTAINERS:
        results = evaluate(convert(ranks), convert(candidates), metrics=["mrr", "amri", "hits@3"])
        assert json.dumps(results.to_dict()) == reference


# --- inputs are never changed --------------------------------------------------------------------


@SETTINGS
@given(data=weighted_tasks())
def test_no_function_changes_its_input(data: tuple[Any, Any, Any]) -> None:
    ranks, candidates, weights = data
    originals = [array.copy() for array in (ranks, candidates, weights)]
    for metric in METRICS:
        w = weights if metric.supports_weights else None
        metric(ranks, candidates, w)
        for call in moments(metric, candidates, w):
            call()
    evaluate(ranks, candidates, weights=weights, metrics=["mrr", "amri", "mr"])
    accumulator = RankAccumulator(["mrr"])
    accumulator.update(ranks, candidates, groups=candidates)
    for original, array in zip(originals, (ranks, candidates, weights), strict=True):
        np.testing.assert_array_equal(array, original)


@SMALL
@given(
    scores=st.lists(st.lists(st.integers(0, 4), min_size=5, max_size=5), min_size=1, max_size=6),
    seed=st.integers(0, 1000),
)
def test_ranks_from_scores_changes_nothing_and_ignores_the_container(
    scores: list[list[int]], seed: int
) -> None:
    array = np.array(scores, dtype=np.float64)
    rng = np.random.default_rng(seed)
    targets = rng.integers(0, 5, size=array.shape[0])
    mask = rng.random(array.shape) < 0.3
    mask[np.arange(array.shape[0]), targets] = False
    saved = (array.copy(), targets.copy(), mask.copy())
    reference = ranks_from_scores(array, targets, filter_mask=mask)
    for convert in (lambda a: a.tolist(), lambda a: a.astype(np.float32), lambda a: a):
        ranks = ranks_from_scores(convert(array), targets.tolist(), filter_mask=mask.tolist())
        assert ranks.optimistic.tolist() == reference.optimistic.tolist()
        assert ranks.pessimistic.tolist() == reference.pessimistic.tolist()
    for before, after in zip(saved, (array, targets, mask), strict=True):
        np.testing.assert_array_equal(before, after)
    # larger scores better is the mirror image of smaller scores better
    mirrored = ranks_from_scores(-array, targets, filter_mask=mask, larger_is_better=False)
    assert mirrored.optimistic.tolist() == reference.optimistic.tolist()
    assert mirrored.pessimistic.tolist() == reference.pessimistic.tolist()


# --- streaming ------------------------------------------------------------------------------------

STREAM_METRICS = ["mrr", "hits@3", "mr", "amri", "zmrr", "median_rank", "count"]


@st.composite
def ranks_objects(draw: st.DrawFn) -> tuple[Ranks, Any]:
    ranks, candidates = draw(tasks(max_n=30, half=False))
    ties = np.array(draw(st.lists(st.integers(0, 3), min_size=ranks.size, max_size=ranks.size)))
    optimistic = ranks.astype(np.int64)
    pessimistic = np.minimum(optimistic + ties, candidates)
    groups = np.array(
        draw(st.lists(st.sampled_from(["a", "b", "c"]), min_size=ranks.size, max_size=ranks.size))
    )
    return Ranks(optimistic, pessimistic, candidates), groups


@SMALL
@given(data=ranks_objects(), cuts=st.lists(st.integers(0, 30), max_size=4))
def test_any_split_into_batches_gives_evaluate_exactly(
    data: tuple[Ranks, Any], cuts: list[int]
) -> None:
    ranks, groups = data
    bounds = sorted({0, len(ranks), *(min(c, len(ranks)) for c in cuts)})
    accumulator = RankAccumulator(STREAM_METRICS, average="macro")
    parts = []
    for start, stop in itertools.pairwise(bounds):
        assert ranks.num_candidates is not None
        part = Ranks(
            ranks.optimistic[start:stop],
            ranks.pessimistic[start:stop],
            ranks.num_candidates[start:stop],
        )
        other = RankAccumulator(STREAM_METRICS, average="macro")
        other.update(part, groups=groups[start:stop])
        parts.append(other)
    for part in reversed(parts):  # merged in reverse: merging commutes
        accumulator.merge(part)
    one_shot = evaluate(ranks, metrics=STREAM_METRICS, groups=groups, average="macro")
    assert json.dumps(accumulator.compute().to_dict(statistics=True)) == json.dumps(
        one_shot.to_dict(statistics=True)
    )


BAD_UPDATES: list[Callable[[RankAccumulator], None]] = [
    lambda acc: acc.update([0.5], groups=["new"]),
    lambda acc: acc.update([1.0, 2.0], num_candidates=[1, 1], groups=["x", "y"]),
    lambda acc: acc.update([1.0], groups=["z", "w"]),
    lambda acc: acc.update([1.0]),  # no groups
    lambda acc: acc.update({"head": [1.0]}, groups={"head": ["q"]}),
    lambda acc: acc.update(Ranks([1], [2], [3]), groups=["n"]),  # another kind of ranks
    lambda acc: acc.update([[1.0, 2.0]], groups=["m"]),
    lambda acc: acc.update([float("nan")], groups=["k"]),
    lambda acc: acc.merge(RankAccumulator(["mrr"])),
    lambda acc: acc.update([1.0], num_candidates=[5], groups=[{"unhashable": 1}]),
]


@SMALL
@given(
    data=tasks(max_n=10),
    operations=st.lists(st.tuples(st.booleans(), st.integers(0, len(BAD_UPDATES) - 1)), max_size=8),
)
def test_failed_updates_leave_the_accumulator_unchanged(
    data: tuple[Any, Any], operations: list[tuple[bool, int]]
) -> None:
    ranks, candidates = data
    accumulator = RankAccumulator(["mrr", "amri"])
    accumulator.update(ranks, candidates, groups=["g"] * ranks.size)
    good = 1
    for valid, index in operations:
        if valid:
            accumulator.update(ranks, candidates, groups=[f"g{good}"] * ranks.size)
            good += 1
            continue
        before = json.dumps(accumulator.state_dict(), sort_keys=True)
        with pytest.raises((ValueError, TypeError)):
            BAD_UPDATES[index](accumulator)
        assert json.dumps(accumulator.state_dict(), sort_keys=True) == before
    assert accumulator.num_ranks == good * ranks.size


@SMALL
@given(
    values=st.lists(
        st.one_of(
            st.floats(-10, 10),
            st.sampled_from([math.nan, math.inf, "0.5", None, {"other": 1.0}]),
        ),
        max_size=12,
    ),
    patience=st.integers(1, 3),
)
def test_failed_reports_leave_the_stopper_unchanged(values: list[Any], patience: int) -> None:
    stopper = EarlyStopper("mrr", patience=patience, relative_delta=0.01)
    reference = EarlyStopper("mrr", patience=patience, relative_delta=0.01)
    for value in values:
        before = stopper.state_dict()
        try:
            stopper.report(value)
        except (TypeError, ValueError, KeyError):
            assert stopper.state_dict() == before
        else:
            reference.report(value)
    assert stopper.state_dict() == reference.state_dict()
    assert EarlyStopper.from_state_dict(stopper.state_dict()).state_dict() == stopper.state_dict()
