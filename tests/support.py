"""Shared test support: every metric the resolver knows, instantiated, and exact enumeration."""

from __future__ import annotations

import itertools
from typing import Any

import numpy as np
import pytest

from rankstats import InverseMedianRank, MedianRank, RankBasedMetric, metric_resolver
from rankstats.metrics.derived import DerivedRankBasedMetric, ZMetric


def make_metric(cls: type[RankBasedMetric]) -> RankBasedMetric:
    """An instance of every class, with a cut-off that is interesting for small candidate sets."""
    return cls(k=2) if "k" in metric_resolver.signature(cls).parameters else cls()


ALL_CLASSES = sorted(metric_resolver, key=lambda cls: cls.__name__)
ALL_METRICS = [make_metric(cls) for cls in ALL_CLASSES]
DERIVED_METRICS = [m for m in ALL_METRICS if isinstance(m, DerivedRankBasedMetric)]
Z_METRICS = [m for m in ALL_METRICS if isinstance(m, ZMetric)]


def metric_id(metric: RankBasedMetric) -> str:
    return repr(metric)


def all_rank_tuples(num_candidates: list[int] | np.ndarray) -> np.ndarray:
    """Every rank vector with r_i in 1..C_i, one per row: shape (prod C, n)."""
    grids = [range(1, int(c) + 1) for c in num_candidates]
    return np.array(list(itertools.product(*grids)), dtype=np.float64)


def exact_moments(
    metric: RankBasedMetric, num_candidates: list[int], weights: list[float] | None = None
) -> tuple[float, float]:
    """The exact null mean and variance of a metric by enumerating every rank tuple.

    Each tuple is evaluated through the public ``__call__``, independently of the vectorised
    hooks the Monte-Carlo path uses.
    """
    ranks = all_rank_tuples(num_candidates)
    values = np.array([metric(row, num_candidates, weights) for row in ranks])
    mean = values.mean()
    return float(mean), float(((values - mean) ** 2).mean())


def record_found(monkeypatch: pytest.MonkeyPatch, module: Any, name: str) -> list[bool]:
    """Patch ``module.name`` to record, call by call, whether it found something (not ``None``)."""
    original = getattr(module, name)
    found: list[bool] = []

    def recording(*args: Any, **kwargs: Any) -> Any:
        result = original(*args, **kwargs)
        found.append(result is not None)
        return result

    monkeypatch.setattr(module, name, recording)
    return found


def median_null_moments(candidates: np.ndarray) -> tuple[float, float, float, float]:
    """E and V of the median and of the inverse median, through the metrics' public methods."""
    metric, inverse = MedianRank(), InverseMedianRank()
    return (
        metric.expected_value(candidates),
        metric.variance(candidates),
        inverse.expected_value(candidates),
        inverse.variance(candidates),
    )
