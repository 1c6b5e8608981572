"""PyKEEN's key spellings work in results lookups as in the early stopper: one parser for both."""

from __future__ import annotations

import numpy as np
import pytest

from rankstats import EarlyStopper, Ranks, evaluate
from rankstats.errors import UnknownMetricError
from rankstats.evaluation.keys import parse_key, try_parse_key


@pytest.fixture(scope="module")
def results():  # type: ignore[no-untyped-def]
    rng = np.random.default_rng(0)

    def side() -> Ranks:
        candidates = rng.integers(5, 50, 200)
        optimistic = np.minimum(rng.integers(1, 20, 200), candidates)
        pessimistic = np.minimum(optimistic + rng.integers(0, 3, 200), candidates)
        return Ranks(optimistic, pessimistic, candidates)

    return evaluate({"head": side(), "tail": side()}, metrics=["mrr", "hits@3", "hits@10", "amr"])


@pytest.mark.parametrize(
    ("alias", "canonical"),
    [
        ("avg.mrr", "both.realistic.inverse_harmonic_mean_rank"),
        ("average.mrr", "both.realistic.inverse_harmonic_mean_rank"),
        ("best.mrr", "both.optimistic.inverse_harmonic_mean_rank"),
        ("worst.mrr", "both.pessimistic.inverse_harmonic_mean_rank"),
        ("head.best.hits_at_k.3", "head.optimistic.hits_at_3"),
        ("tail.worst.hits_at_k.10", "tail.pessimistic.hits_at_10"),
        ("hits_at_k.10", "both.realistic.hits_at_10"),
        ("tail.avg.amr", "tail.realistic.adjusted_arithmetic_mean_rank"),
    ],
)
def test_results_accept_pykeen_aliases(results, alias: str, canonical: str) -> None:  # type: ignore[no-untyped-def]
    assert canonical in results
    assert alias in results
    assert results[alias] == results[canonical]
    assert results.row(alias) is results.row(canonical)
    stopper = EarlyStopper(alias)
    stopper.report(results.to_dict())  # the stopper finds the same value through the same parser
    assert stopper.best_value == results[canonical]


@pytest.mark.parametrize(
    "key",
    ["left.mrr", "best.worst.mrr", "head.tail.mrr", "a.b.c.mrr", "..mrr", "mrr.mrr.3"],
)
def test_results_refuse_malformed_keys(results, key: str) -> None:  # type: ignore[no-untyped-def]
    with pytest.raises(KeyError):
        results[key]
    assert key not in results


def test_unknown_metric_raises_a_fresh_error_each_time(results) -> None:  # type: ignore[no-untyped-def]
    errors = []
    for _ in range(2):
        with pytest.raises(UnknownMetricError) as info:
            results["best.not_a_metric"]
        errors.append(info.value)
    assert errors[0] is not errors[1]
    assert try_parse_key("best.not_a_metric") is None


def test_parse_key_parts() -> None:
    side, rank_type, metric = parse_key("head.worst.hits_at_k.5")
    assert (side, rank_type, metric.key) == ("head", "pessimistic", "hits_at_5")
    assert parse_key("mrr")[:2] == (None, None)
    assert try_parse_key("both.realistic.mrr.z_score") is None


def test_a_cut_off_in_the_name_and_after_the_dot_must_agree() -> None:
    """'hits@1.5' had silently been Hits@5: two cut-offs that disagree are refused."""
    results = evaluate([1, 2, 4, 1, 6], [9] * 5, metrics=["hits@5", "hits@1"])
    for key in ("hits@1.5", "hits_at_3.10"):
        with pytest.raises(KeyError, match=r"names k=\d+, but k=\d+ was passed"):
            results[key]
        assert key not in results
    assert results["hits_at_k.5"] == results["hits_at_5.5"] == results["hits@5"] == 0.8


@pytest.mark.parametrize(
    ("key", "message"),
    [
        ("hits_at_k.-1", r"the cut-off k after the metric must be a positive integer, got '-1'"),
        ("hits_at_k.1.5", r"must be a positive integer, got '1\.5'"),
        ("both.hits_at_k.1e1", r"must be a positive integer, got '1e1'"),
        ("mrr.", r"it ends without a metric name"),
    ],
)
def test_bad_cut_offs_and_empty_names_in_keys_are_named(key: str, message: str) -> None:
    """They had been reported as unknown metrics '-1', '1' or ''."""
    results = evaluate([1, 2, 3], 5, metrics=["mrr", "hits@1"])
    with pytest.raises(KeyError, match=message):
        results[key]


def test_the_stopper_names_why_a_key_is_none() -> None:
    """It had reported the cut-off '-1' or an empty name as an unknown metric."""
    with pytest.raises(ValueError, match=r"got 'hits_at_k\.-1' \(.*must be a positive integer"):
        EarlyStopper("hits_at_k.-1")
    with pytest.raises(ValueError, match=r"it ends without a metric name"):
        EarlyStopper("mrr.")
    with pytest.raises(UnknownMetricError, match=r"closest valid names: 'mrr'"):
        EarlyStopper("mrrr")
