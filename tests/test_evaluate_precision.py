"""``evaluate`` gives each derived metric exactly what the metric itself gives, near the best
value too, where ``scale * value + offset`` would lose the digits ``M`` and ``E`` share with 1.

The metrics' own ``__call__`` / ``expected_value`` / ``variance`` work from the gaps ``1 - M``
and ``1 - E`` (``tests/test_adjusted_precision.py`` holds them to mpmath references); the table,
ungrouped and per group, must agree with them to 1e-12.
"""

from __future__ import annotations

import numpy as np
import pytest

from rankstats import evaluate, metric_resolver

NEAR_BEST = [
    "hits@10",
    "adjusted_hits_at_10",
    "z_hits_at_10",
    "mrr",
    "amrr",
    "zmrr",
    "mr",
    "amri",
    "zmr",
    "gmr",
    "agmri",
    "zgmr",
]


def _hits_case(rng: np.random.Generator, n: int) -> tuple[np.ndarray, np.ndarray, None]:
    """Hits@10 with at most 11 candidates: E[Hits@10] close to 1, a model closer still."""
    candidates = rng.integers(9, 12, n)
    ranks = np.where(rng.random(n) < 0.995, 1, candidates).astype(np.float64)
    return ranks, candidates, None


def _weighted_case(rng: np.random.Generator, n: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Heavy weights on single-candidate tasks: every expectation close to the best value."""
    candidates = np.where(rng.random(n) < 0.9, 1, rng.integers(2, 50, n))
    ranks = np.minimum(rng.integers(1, 3, n), candidates).astype(np.float64)
    weights = np.where(candidates == 1, 1e6, rng.random(n))
    return ranks, candidates, weights


def _close(actual: float | None, expected: float) -> None:
    assert actual is not None
    assert actual == pytest.approx(expected, rel=1e-12, abs=1e-300)


@pytest.mark.parametrize("case", [_hits_case, _weighted_case], ids=["hits-small-C", "weighted"])
@pytest.mark.parametrize("seed", [0, 1, 2])
def test_evaluate_equals_the_metrics_near_the_best_value(case: object, seed: int) -> None:
    ranks, candidates, weights = case(np.random.default_rng(seed), 400)  # type: ignore[operator]
    results = evaluate(ranks, candidates, metrics=NEAR_BEST, weights=weights)
    for name in NEAR_BEST:
        metric = metric_resolver.make(name)
        row = results.row(f"both.realistic.{name}")
        _close(row.value, metric(ranks, candidates, weights=weights))
        _close(row.expected_value, metric.expected_value(candidates, weights=weights))
        _close(row.variance, metric.variance(candidates, weights=weights))


@pytest.mark.parametrize("average", ["micro", "macro"])
@pytest.mark.parametrize("case", [_hits_case, _weighted_case], ids=["hits-small-C", "weighted"])
def test_grouped_evaluate_equals_the_metrics_per_group(case: object, average: str) -> None:
    rng = np.random.default_rng(5)
    ranks, candidates, weights = case(rng, 600)  # type: ignore[operator]
    groups = rng.integers(0, 4, ranks.size)
    results = evaluate(
        ranks, candidates, metrics=NEAR_BEST, weights=weights, groups=groups, average=average
    )
    for label in range(4):
        inside = groups == label
        part = results.by_group[label]
        w = None if weights is None else weights[inside]
        for name in NEAR_BEST:
            metric = metric_resolver.make(name)
            row = part.row(f"both.realistic.{name}")
            _close(row.value, metric(ranks[inside], candidates[inside], weights=w))
            _close(row.expected_value, metric.expected_value(candidates[inside], weights=w))
            _close(row.variance, metric.variance(candidates[inside], weights=w))
    if average == "micro":
        for name in NEAR_BEST:
            metric = metric_resolver.make(name)
            _close(results[f"both.realistic.{name}"], metric(ranks, candidates, weights=weights))


def test_expected_rank_type_of_a_derived_metric_from_the_gap() -> None:
    """Ties broken at random: the adjusted Hits@10 of the expected ranks, near the best value."""
    from rankstats import Ranks
    from rankstats.evaluation import expected_over_ties

    rng = np.random.default_rng(9)
    candidates = rng.integers(10, 12, 300)
    optimistic = np.ones(300, dtype=np.int64)
    pessimistic = np.where(rng.random(300) < 0.01, candidates, 1)
    ranks = Ranks(optimistic, pessimistic, candidates)
    results = evaluate(ranks, metrics=["adjusted_hits_at_10"], rank_types=["expected"])
    expected = expected_over_ties(metric_resolver.make("adjusted_hits_at_10"), ranks)
    _close(results["both.expected.adjusted_hits_at_10"], expected)
