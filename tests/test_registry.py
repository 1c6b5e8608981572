"""Looking metrics up by name."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

import rankstats
from rankstats import (
    AdjustedArithmeticMeanRankIndex,
    AdjustedHitsAtK,
    HitsAtK,
    InverseHarmonicMeanRank,
    Ranks,
    UnknownMetricError,
    ZHitsAtK,
    evaluate,
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


# --- bad queries -------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("query", "pattern"),
    [
        ("hits@-1", r"'hits@-1'.*k must be a positive integer.*'-1'"),
        ("hits_at_-3", r"k must be a positive integer.*'-3'"),
        ("hits@ -1", r"k must be a positive integer.*'-1'"),
        ("z_hits_at_-2", r"k must be a positive integer.*'-2'"),
        ("hits@1.5", r"k must be a positive integer.*'1.5'"),
        ("hits@.5", r"k must be a positive integer.*'.5'"),
        ("hits@1e3", r"k must be a positive integer.*'1e3'"),
        ("h@+3", r"k must be a positive integer.*'\+3'"),
        ("hits@0", r"'hits@0'.*k must be a positive integer, got 0"),
        ("adjusted_hits_at_0", r"'adjusted_hits_at_0'.*k must be a positive integer, got 0"),
        ("hits@3", r"names k=3, but k=4"),
        # digits split by separators: normalising had joined them ("hits@3 -1" was k = 31)
        ("hits@3 -1", r"'hits@3 -1'.*positive integer in digits, got the digits '31' split"),
        ("hits@1-3", r"the digits '13' split by separators"),
        ("zh@1 2", r"the digits '12' split by separators"),
        ("hits@1_000", r"the digits '1000' split by separators"),
    ],
)
def test_bad_cut_offs_raise_naming_k(query: str, pattern: str) -> None:
    kwargs = {"k": 4} if query == "hits@3" else {}
    with pytest.raises(ValueError, match=pattern):
        metric_resolver.make(query, **kwargs)


@pytest.mark.parametrize("query", [5, 1.5, b"mrr", object(), ["mrr"], int, {"mrr": 1}])
def test_queries_that_are_not_names_raise_type_error(query: object) -> None:
    with pytest.raises(TypeError, match="a metric must be given as a name"):
        metric_resolver.make(query)  # type: ignore[arg-type]
    with pytest.raises(TypeError, match="a metric must be given as a name"):
        metric_resolver.lookup(query)  # type: ignore[arg-type]


def test_keyword_arguments_with_an_instance_raise() -> None:
    with pytest.raises(TypeError, match="cannot apply keyword arguments"):
        metric_resolver.make(HitsAtK(k=3), k=5)


@pytest.mark.parametrize(
    ("query", "expected"),
    [
        ("Hits @ 10", HitsAtK(k=10)),  # the metric's human name, with spaces
        ("hits@ 10", HitsAtK(k=10)),
        ("  hits@10  ", HitsAtK(k=10)),
        ("HITS_AT_10", HitsAtK(k=10)),
        ("hits-at-10", HitsAtK(k=10)),  # a '-' after a letter separates, it is no sign
        ("hits@010", HitsAtK(k=10)),
        ("hits@123456789012345678901234567890", HitsAtK(k=123456789012345678901234567890)),
        (" MRR ", InverseHarmonicMeanRank()),
    ],
)
def test_spelling_variants(query: str, expected: object) -> None:
    assert metric_resolver.make(query) == expected


def test_a_huge_cut_off_is_a_valid_metric() -> None:
    """k beyond every candidate count: every rank is a hit, exactly as for k = max C."""
    metric = metric_resolver.make("hits@123456789012345678901234567890")
    assert metric([1, 5, 9], [9, 9, 9]) == 1.0
    assert metric.expected_value([9, 9, 9]) == 1.0
    # in evaluate too, grouped and over ties (k had overflowed 64-bit integers there)
    ranks = Ranks([1, 5, 8], [2, 5, 9], [9, 9, 9])
    huge = "hits@123456789012345678901234567890"
    for groups in (None, [0, 0, 1]):
        results = evaluate(ranks, metrics=[huge, "hits@9"], groups=groups)
        for rank_type in ("optimistic", "realistic", "expected"):
            assert results[f"{rank_type}.{huge}"] == results[f"{rank_type}.hits@9"] == 1.0
            assert results.expected_value(f"{rank_type}.{huge}") == 1.0


@pytest.mark.parametrize("query", ["hits", "mrr2", "mean rank please", "", "hits@k@"])
def test_unknown_names_suggest_close_matches(query: str) -> None:
    with pytest.raises(UnknownMetricError, match="closest valid names"):
        metric_resolver.make(query)


def test_unknown_name_suggestions_are_close() -> None:
    with pytest.raises(UnknownMetricError, match="'mrr'"):
        metric_resolver.make("mmr")


# --- order ---------------------------------------------------------------------------------------


def test_order_is_alphabetical_by_class_name() -> None:
    names = [cls.__name__ for cls in metric_resolver]
    assert names == sorted(names)
    assert names == [cls.__name__ for cls in metric_resolver]  # listing twice: same order
    assert list(metric_resolver.lookup_dict) == [metric_resolver.normalize(n) for n in names]


def test_order_is_the_same_in_a_fresh_process() -> None:
    code = "from rankstats import metric_resolver; print([c.__name__ for c in metric_resolver])"
    env = {**os.environ, "PYTHONPATH": str(Path(rankstats.__file__).parent.parent)}
    outputs = {
        subprocess.run(
            [sys.executable, "-c", code],
            capture_output=True,
            text=True,
            check=True,
            env={**env, "PYTHONHASHSEED": seed},
        ).stdout
        for seed in ("1", "2")
    }
    assert outputs == {f"{[cls.__name__ for cls in metric_resolver]}\n"}


def test_eight_threads_resolving_at_once() -> None:
    import threading
    from concurrent.futures import ThreadPoolExecutor

    names = ["mrr", "hits@10", "z_hits_at_3", "amri", "median", "Hits @ 5", "gmr", "count"] * 20
    barrier = threading.Barrier(8)

    def work(worker: int) -> list[object]:
        barrier.wait()
        return [metric_resolver.make(name) for name in names[worker:] + names[:worker]]

    with ThreadPoolExecutor(8) as pool:
        results = list(pool.map(work, range(8)))
    for worker, made in enumerate(results):
        assert made == [metric_resolver.make(name) for name in names[worker:] + names[:worker]]


@pytest.mark.parametrize("query", ["hits@\u0663", "hits_at_\uff15", "z_hits_at_\u0665"])
def test_cut_offs_are_ascii_digits(query: str) -> None:
    """Other scripts' digits are not read as a cut-off ("hits@\u0663" had been Hits@3)."""
    with pytest.raises(UnknownMetricError):
        metric_resolver.make(query)


def test_abstract_kinds_of_derived_metrics_name_their_metrics() -> None:
    """ZMetric, ReindexedMetric and ExpectationNormalizedMetric have no base: constructing one
    (PyKEEN's ZMetric(base_cls="mrr") too) is a TypeError naming the metrics of the kind; it had
    been an AttributeError about base_cls."""
    import rankstats

    for kind, member in (
        (rankstats.ZMetric, "ZInverseHarmonicMeanRank"),
        (rankstats.ReindexedMetric, "AdjustedHitsAtK"),
        (rankstats.ExpectationNormalizedMetric, "AdjustedArithmeticMeanRank"),
    ):
        with pytest.raises(TypeError, match=rf"{kind.__name__} is abstract .*{member}"):
            kind()
        with pytest.raises(TypeError, match=rf"{kind.__name__} is abstract"):
            kind(base_cls="mrr")
        with pytest.raises(TypeError, match=rf"{kind.__name__} is abstract"):
            metric_resolver.make(kind)
    assert rankstats.ZHitsAtK(k=3).base == rankstats.HitsAtK(k=3)
