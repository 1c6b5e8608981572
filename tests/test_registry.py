"""Looking metrics up by name."""

from __future__ import annotations

import pytest

from rankstats import (
    AdjustedArithmeticMeanRankIndex,
    AdjustedHitsAtK,
    HitsAtK,
    InverseHarmonicMeanRank,
    ZHitsAtK,
    metric_resolver,
)


@pytest.mark.parametrize(
    ("query", "expected"),
    [
        ("hits@10", HitsAtK(k=10)),
        ("hits_at_3", HitsAtK(k=3)),
        ("h@1", HitsAtK(k=1)),
        ("Hits@K", HitsAtK(k=10)),
        ("hits_at_k", HitsAtK()),
        ("adjusted_hits_at_5", AdjustedHitsAtK(k=5)),
        ("ah@3", AdjustedHitsAtK(k=3)),
        ("z_hits_at_7", ZHitsAtK(k=7)),
        ("zh@2", ZHitsAtK(k=2)),
        ("mrr", InverseHarmonicMeanRank()),
        ("MRR", InverseHarmonicMeanRank()),
        ("mean_reciprocal_rank", InverseHarmonicMeanRank()),
        ("amri", AdjustedArithmeticMeanRankIndex()),
        (None, InverseHarmonicMeanRank()),
    ],
)
def test_make(query: str | None, expected: object) -> None:
    assert metric_resolver.make(query) == expected


def test_keys_round_trip_with_the_cut_off() -> None:
    for metric in (HitsAtK(k=3), AdjustedHitsAtK(k=5), ZHitsAtK(k=7)):
        assert metric_resolver.make(metric.key) == metric
    assert HitsAtK(k=3).key == "hits_at_3"
    assert ZHitsAtK(k=5).key == "z_hits_at_5"
    assert AdjustedHitsAtK(k=5).key == "adjusted_hits_at_5"


def test_make_passes_instances_and_classes_through() -> None:
    metric = HitsAtK(k=4)
    assert metric_resolver.make(metric) is metric
    assert metric_resolver.make(HitsAtK, k=4) == metric
    assert metric_resolver.make("hits@4", k=4) == metric


def test_pykeen_result_keys_resolve() -> None:
    """The metric part of every key in PyKEEN's results resolves to a metric."""
    for key in (
        "adjusted_arithmetic_mean_rank",
        "adjusted_arithmetic_mean_rank_index",
        "adjusted_geometric_mean_rank_index",
        "adjusted_hits_at_k",
        "adjusted_inverse_harmonic_mean_rank",
        "arithmetic_mean_rank",
        "count",
        "geometric_mean_rank",
        "harmonic_mean_rank",
        "hits_at_1",
        "hits_at_10",
        "inverse_arithmetic_mean_rank",
        "inverse_geometric_mean_rank",
        "inverse_harmonic_mean_rank",
        "inverse_median_rank",
        "median_absolute_deviation",
        "median_rank",
        "standard_deviation",
        "variance",
        "z_arithmetic_mean_rank",
        "z_geometric_mean_rank",
        "z_hits_at_k",
        "z_inverse_harmonic_mean_rank",
    ):
        assert metric_resolver.make(key).key.startswith(key.removesuffix("_k").rstrip("0123456789"))
