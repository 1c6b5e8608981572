"""Early stopping: direction from the metric, patience, deltas, results input, save and restore."""

from __future__ import annotations

import json

import numpy as np
import pytest

from rankstats import HitsAtK
from rankstats.evaluation import EarlyStopper, evaluate


def run(stopper: EarlyStopper, values: list[float]) -> list[bool]:
    return [stopper.report(value) for value in values]


def test_direction_comes_from_the_metric() -> None:
    assert EarlyStopper("mrr").larger_is_better
    assert not EarlyStopper("mr").larger_is_better
    assert not EarlyStopper("tail.pessimistic.median_rank").larger_is_better
    assert EarlyStopper("zmr").larger_is_better  # z-scores are oriented: larger is better
    assert EarlyStopper(HitsAtK(k=3)).key == "hits_at_3"
    assert not EarlyStopper("mrr", larger_is_better=False).larger_is_better


def test_patience_counts_evaluations_without_improvement_in_a_row() -> None:
    stopper = EarlyStopper("mrr", patience=2)
    assert run(stopper, [0.1, 0.2, 0.2, 0.3, 0.25, 0.29]) == [False] * 5 + [True]
    assert (stopper.best_value, stopper.best_epoch) == (0.3, 3)
    assert stopper.should_stop
    assert stopper.remaining_patience == 0
    assert stopper.history[-1] == (5, 0.29)
    # an improvement after the stop resets the count
    assert stopper.report(0.5) is False
    assert stopper.remaining_patience == 2


def test_relative_and_absolute_delta() -> None:
    stopper = EarlyStopper("mrr", patience=1, relative_delta=0.1)
    assert run(stopper, [0.5, 0.54]) == [False, True]  # +8% is not enough
    stopper = EarlyStopper("mr", patience=1, absolute_delta=1.0)
    assert run(stopper, [10.0, 9.5]) == [False, True]
    # negative values (adjusted indices, z-scores) use |best|, not a factor
    stopper = EarlyStopper("zmrr", patience=1, relative_delta=0.5)
    assert run(stopper, [-4.0, -3.0, -1.0]) == [False, True, False]
    assert stopper.best_value == -1.0


def test_results_objects_and_mappings() -> None:
    stopper = EarlyStopper("tail.hits@1", patience=1)
    for epoch, ranks in ((1, [1.0, 3.0]), (2, [1.0, 1.0]), (4, [2.0, 1.0])):
        results = evaluate({"head": [1.0, 1.0], "tail": ranks}, metrics=["hits@1", "mrr"])
        stopper.report(results, epoch=epoch)
    assert stopper.best_epoch == 2
    assert stopper.should_stop
    flat = EarlyStopper("both.realistic.inverse_harmonic_mean_rank")
    flat.report({"both.realistic.inverse_harmonic_mean_rank": np.float32(0.25)})
    assert flat.best_value == 0.25


def test_save_and_restore() -> None:
    stopper = EarlyStopper("mr", patience=3, relative_delta=0.01)
    run(stopper, [40.0, 30.0, 31.0])
    state = json.loads(json.dumps(stopper.state_dict()))
    restored = EarlyStopper.from_state_dict(state)
    fresh = EarlyStopper("mr", patience=3, relative_delta=0.01)
    fresh.load_state_dict(state)
    for copy in (restored, fresh):
        assert copy.state_dict() == stopper.state_dict()
        assert run(copy, [32.0, 33.0]) == [False, True]
    with pytest.raises(ValueError, match=r"the state watches 'mr' .* this stopper 'mrr'"):
        EarlyStopper("mrr").load_state_dict(state)


STOPPER_ERRORS = [
    ({"metric": "mrrr"}, ValueError, r"unknown metric 'mrrr'"),
    ({"metric": 3}, TypeError, r"metric must be a key or a metric, got int"),
    ({"metric": "a.b.c.mrr"}, ValueError, r"\[side\.\]\[rank_type\.\]metric"),
    ({"patience": 0}, ValueError, r"patience must be a positive integer, got 0"),
    ({"patience": 1.5}, TypeError, r"patience must be a positive integer, got 1\.5"),
    ({"relative_delta": -0.1}, ValueError, r"relative_delta must be a finite non-negative"),
    ({"absolute_delta": float("inf")}, ValueError, r"absolute_delta must be a finite"),
    ({"larger_is_better": 1}, TypeError, r"larger_is_better must be a bool or None"),
]


@pytest.mark.parametrize(("kwargs", "error", "match"), STOPPER_ERRORS)
def test_bad_configuration(kwargs: dict[str, object], error: type, match: str) -> None:
    with pytest.raises(error, match=match):
        EarlyStopper(**kwargs)  # type: ignore[arg-type]


def test_bad_reports() -> None:
    stopper = EarlyStopper("mrr")
    with pytest.raises(ValueError, match=r"the value of 'mrr' must be finite, got nan"):
        stopper.report(float("nan"))
    with pytest.raises(TypeError, match="result must be evaluation results, a mapping or a number"):
        stopper.report("0.5")
    with pytest.raises(KeyError, match="the results have no value for 'mrr'"):
        stopper.report({"hits@1": 0.5})
    stopper.report(0.5, epoch=3)
    with pytest.raises(ValueError, match="epochs must increase, got 3 after 3"):
        stopper.report(0.6, epoch=3)
    with pytest.raises(TypeError, match="epoch must be an integer"):
        stopper.report(0.6, epoch=4.0)  # type: ignore[arg-type]
    assert stopper.history == [(3, 0.5)]
