"""Null models from rows of tasks with multiplicities (:class:`rankstats.null.tasks.Tasks`).

Every closed form must give the same moments from the rows of a candidate table as from one entry
per task, so that :meth:`rankstats.RankAccumulator.compute` and :func:`rankstats.evaluate` never
expand their state to one entry per query.
"""

from __future__ import annotations

import math
import tracemalloc
from fractions import Fraction

import numpy as np
import pytest

import rankstats
from rankstats import RankAccumulator, metric_resolver
from rankstats.base import RankBasedMetric
from rankstats.errors import NoClosedFormError
from rankstats.null.tasks import Tasks

#: every metric with a closed form somewhere, derived ones included
METRICS = [
    "mr",
    "mrr",
    "hits@1",
    "hits@10",
    "gmr",
    "igmr",
    "hmr",
    "iamr",
    "median",
    "inverse_median",
    "var",
    "count",
    "amr",
    "amri",
    "zmr",
    "agmri",
    "zgmr",
    "aihmr",
    "zmrr",
    "adjusted_hits_at_10",
    "z_hits_at_10",
]


def _rows(rng: np.random.Generator, weighted: bool) -> tuple[Tasks, Tasks]:
    """The same tasks as sorted distinct rows with counts, and one entry per task (shuffled)."""
    k = int(rng.integers(1, 12))
    candidates = np.sort(rng.choice(np.arange(1, 400), size=k, replace=False)).astype(np.int64)
    counts = rng.integers(1, 6, size=k).astype(np.int64)
    weights = None
    if weighted:
        # distinct (C, w) rows: a count may appear with two weights
        candidates = np.repeat(candidates, 2)
        counts = rng.integers(1, 6, size=candidates.size).astype(np.int64)
        weights = rng.choice([0.5, 1.0, 2.0, 3.25], size=candidates.size)
    rows = Tasks(candidates, weights, counts)
    expanded_c, expanded_w = rows.expanded()
    order = rng.permutation(expanded_c.size)
    flat = Tasks(expanded_c[order], None if expanded_w is None else expanded_w[order])
    return rows, flat


def _moments(metric: RankBasedMetric, tasks: Tasks) -> tuple[float | None, float | None]:
    try:
        return metric._moments(tasks)
    except NoClosedFormError:
        return None, None


@pytest.mark.parametrize("weighted", [False, True])
@pytest.mark.parametrize("key", METRICS)
def test_rows_with_counts_equal_one_entry_per_task(key: str, weighted: bool) -> None:
    metric = metric_resolver.make(key)
    if weighted and not metric.supports_weights:
        pytest.skip("no weights")
    rng = np.random.default_rng(sum(map(ord, key)) + weighted)
    checked = 0
    for _ in range(6):
        rows, flat = _rows(rng, weighted)
        got, wanted = _moments(metric, rows), _moments(metric, flat)
        for g, w in zip(got, wanted, strict=True):
            assert (g is None) == (w is None)
            if w is not None:
                assert g is not None
                assert math.isclose(g, w, rel_tol=1e-13, abs_tol=1e-300), (rows, g, w)
                checked += 1
    assert checked > 0 or key in {"median", "inverse_median"}  # weighted medians: none


@pytest.mark.parametrize("key", ["mr", "mrr", "hits@3", "var", "count"])
def test_rows_against_exact_rationals(key: str) -> None:
    """Tiny cases: the closed forms from rows match exact enumeration of every rank tuple."""
    import itertools

    metric = metric_resolver.make(key)
    rows = Tasks(np.array([2, 3], dtype=np.int64), counts=np.array([2, 1], dtype=np.int64))
    tasks = [2, 2, 3]
    values = []
    for ranks in itertools.product(*(range(1, c + 1) for c in tasks)):
        values.append(Fraction(metric(np.array(ranks, dtype=float))).limit_denominator(10**9))
    mean = sum(values, Fraction(0)) / len(values)
    variance = sum(((v - mean) ** 2 for v in values), Fraction(0)) / len(values)
    e, v = metric._moments(rows)
    assert e is not None
    assert v is not None
    assert math.isclose(e, float(mean), rel_tol=1e-12)
    assert math.isclose(v, float(variance), rel_tol=1e-12, abs_tol=1e-15)


def test_weighted_mean_moments_of_rows() -> None:
    terms = np.array([1.0, 2.0, 3.0])
    rows = Tasks(np.array([2, 3, 4]), np.array([1.0, 1.0, 2.0]), np.array([2, 1, 1]))
    # tasks: weights 1, 1, 1, 2 with terms 1, 1, 2, 3: W = 5
    assert rows.total_weight == 5.0
    assert rows.mean(terms) == pytest.approx((1 + 1 + 2 + 2 * 3) / 5)
    assert rows.mean_variance(terms) == pytest.approx((1 + 1 + 2 + 4 * 3) / 25)
    unweighted = Tasks(np.array([2, 3]), counts=np.array([3, 1]))
    assert unweighted.mean_variance(np.array([1.0, 2.0])) == pytest.approx((3 + 2) / 16)


def test_shares_merge_equal_pairs_and_drop_zero_weights() -> None:
    rows = Tasks(np.array([5, 5, 7, 9]), np.array([1.0, 1.0, 2.0, 0.0]), np.array([1, 2, 1, 4]))
    c, a, m = rows.shares()
    assert c.tolist() == [5, 7]
    assert a.tolist() == [0.2, 0.4]
    assert m.tolist() == [3.0, 1.0]


def test_distinct_of_unsorted_rows() -> None:
    rows = Tasks(np.array([9, 2, 9]), counts=np.array([1, 4, 2]))
    values, counts = rows.distinct()
    assert values.tolist() == [2, 9]
    assert counts.tolist() == [4, 3]


def _state_with_huge_counts(count: int) -> RankAccumulator:
    """An accumulator whose cells stand for ``count`` queries each, built from its state."""
    accumulator = RankAccumulator(
        metrics=["mr", "mrr", "hits@10", "amri", "z_mrr", "gmr", "hmr", "median", "var", "count"]
    )
    accumulator.update(np.array([1, 4, 9, 2]), num_candidates=np.array([50, 60, 700, 800]))
    state = accumulator.state_dict()
    for tables in state["sides"].values():
        for table in tables.values():
            table["count"] = [count] * len(table["count"])
    return RankAccumulator.from_state_dict(state)


def test_compute_does_not_expand_the_state() -> None:
    """A billion queries in a few cells: compute() takes the rows, not one entry per query."""
    accumulator = _state_with_huge_counts(10**9)
    tracemalloc.start()
    try:
        results = accumulator.compute()
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert peak < 50 * 2**20  # one entry per query would be 8 GB
    assert results.get("count") == 4e9
    # the same moments as a small state with equal proportions (the means do not depend on n)
    small = _state_with_huge_counts(3).compute()
    for key in ["mr", "mrr", "hits_at_10"]:
        assert results.get(key) == pytest.approx(small.get(key), rel=1e-15)
        assert results.row(key).expected_value == pytest.approx(
            small.row(key).expected_value, rel=1e-15
        )
        big_v, small_v = results.row(key).variance, small.row(key).variance
        assert big_v is not None
        assert small_v is not None
        assert big_v == pytest.approx(small_v * 12 / 4e9, rel=1e-12)


def test_evaluate_equals_public_methods_on_repeated_counts() -> None:
    rng = np.random.default_rng(3)
    candidates = rng.choice([10, 50, 999], size=500)
    ranks = np.minimum(rng.integers(1, 60, size=500), candidates)
    results = rankstats.evaluate(ranks, num_candidates=candidates, metrics=["gmr", "hmr", "var"])
    for key in ["geometric_mean_rank", "harmonic_mean_rank", "variance"]:
        metric = metric_resolver.make(key)
        row = results.row(key)
        assert row.expected_value == pytest.approx(metric.expected_value(candidates), rel=1e-13)
        assert row.variance == pytest.approx(metric.variance(candidates), rel=1e-13)


@pytest.mark.parametrize("key", ["mr", "mrr", "hits@10", "gmr", "hmr", "median", "var", "count"])
def test_scalar_candidates_stand_for_num_ranks_tasks_without_expanding(key: str) -> None:
    metric = metric_resolver.make(key)
    small = metric.moments(37, num_ranks=11)
    assert small == pytest.approx(metric.moments(np.full(11, 37)), rel=1e-13, abs=1e-300)
    tracemalloc.start()
    try:
        huge = metric.moments(37, num_ranks=10**9)
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert peak < 20 * 2**20  # 10**9 counts would be 8 GB
    assert math.isfinite(huge.expected_value)
    assert math.isfinite(huge.variance)


def test_scalar_candidates_are_validated() -> None:
    with pytest.raises(ValueError, match="num_ranks"):
        metric_resolver.make("mr").expected_value(5, num_ranks=0)
    with pytest.raises(ValueError, match="num_candidates"):
        metric_resolver.make("mr").expected_value(0, num_ranks=3)
    with pytest.raises(TypeError):
        metric_resolver.make("mr").expected_value("5", num_ranks=3)


def test_distinct_adds_huge_counts_exactly() -> None:
    rows = Tasks(np.array([7, 3, 7]), counts=np.array([2**60, 1, 1]))
    values, counts = rows.distinct()
    assert values.tolist() == [3, 7]
    assert counts.tolist() == [1, 2**60 + 1]  # a float sum would round 2**60 + 1 to 2**60
