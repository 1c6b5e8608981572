"""Early stopping: direction from the metric, patience, deltas, results input, save and restore."""

from __future__ import annotations

import json

import numpy as np
import pytest

from rankstats import HitsAtK, Ranks
from rankstats.evaluation import EarlyStopper, evaluate


def run(stopper: EarlyStopper, values: list[float]) -> list[bool]:
    return [stopper.report(value) for value in values]


def test_direction_comes_from_the_metric() -> None:
    assert EarlyStopper("mrr").larger_is_better
    assert not EarlyStopper("mr").larger_is_better
    assert not EarlyStopper("tail.pessimistic.median_rank").larger_is_better
    assert EarlyStopper("zmr").larger_is_better  # z-scores are oriented: larger is better
    assert EarlyStopper(HitsAtK(k=3)).key == "hits_at_3"
    assert EarlyStopper(HitsAtK).key == "hits_at_10"
    assert EarlyStopper("realistic.head.mrr").key == "realistic.head.mrr"
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
    # a synonym or another spelling of the same key watches the same value; a key naming the
    # side and rank type may find another value than one without them
    synonym = EarlyStopper("arithmetic_mean_rank", patience=3, relative_delta=0.01)
    synonym.load_state_dict(state)
    assert synonym.state_dict()["history"] == state["history"]
    assert synonym.best_value == 30.0
    with pytest.raises(ValueError, match=r"the state watches 'mr' .* 'both\.realistic\.mr'"):
        EarlyStopper("both.realistic.mr").load_state_dict(state)
    hits = EarlyStopper("hits@10").state_dict()
    EarlyStopper("hits_at_10").load_state_dict(hits)
    with pytest.raises(ValueError, match=r"the state watches 'hits@10'"):
        EarlyStopper("hits@5").load_state_dict(hits)


STOPPER_ERRORS = [
    ({"metric": "mrrr"}, ValueError, r"unknown metric 'mrrr'"),
    ({"metric": 3}, TypeError, r"metric must be a key or a metric, got int"),
    ({"metric": "a.b.c.mrr"}, ValueError, r"\[side\.\]\[rank_type\.\]metric"),
    ({"patience": 0}, ValueError, r"patience must be a positive integer, got 0"),
    ({"patience": 1.5}, TypeError, r"patience must be a positive integer, got 1\.5"),
    ({"relative_delta": -0.1}, ValueError, r"relative_delta must be a finite non-negative"),
    ({"absolute_delta": float("inf")}, ValueError, r"absolute_delta must be a finite"),
    ({"relative_delta": float("nan")}, ValueError, r"relative_delta must be a finite"),
    ({"relative_delta": True}, TypeError, r"relative_delta must be a finite non-negative number"),
    ({"absolute_delta": "0.1"}, TypeError, r"absolute_delta must be a finite non-negative"),
    ({"metric": "head.tail.mrr"}, ValueError, r"side and rank type at most once"),
    ({"metric": "realistic.optimistic.mrr"}, ValueError, r"side and rank type at most once"),
    ({"metric": ".mrr"}, ValueError, r"side and rank type at most once"),
    ({"metric": "hits@-1"}, ValueError, r"k must be a positive integer"),
    ({"metric": b"mrr"}, TypeError, r"metric must be a key or a metric, got bytes"),
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


# --- flat dictionaries ---------------------------------------------------------------------------


def test_report_takes_the_flat_dict_of_results() -> None:
    results = evaluate(
        {"head": Ranks([1, 2], [1, 3], [10, 10]), "tail": Ranks([1, 3], [2, 4], [10, 10])},
        metrics=["mrr", "hits@1", "mr"],
    )
    for key, expected in (
        ("mrr", results["both.realistic.mrr"]),
        ("tail.mrr", results["tail.realistic.mrr"]),
        ("pessimistic.hits@1", results["both.pessimistic.hits@1"]),
        ("head.optimistic.arithmetic_mean_rank", results["head.optimistic.mr"]),
    ):
        for flat in (results.to_dict(), results.to_dict(statistics=True), results.to_flat_dict()):
            stopper = EarlyStopper(key)
            stopper.report(flat)
            assert stopper.best_value == expected, key


def test_report_takes_pykeen_style_flat_keys_and_objects() -> None:
    flat = {
        "head.realistic.inverse_harmonic_mean_rank": 0.2,
        "both.realistic.inverse_harmonic_mean_rank": 0.3,
        "both.realistic.hits_at_10": 0.6,
        "both.optimistic.hits_at_10": 0.7,
        "both.realistic.adjusted_hits_at_k": 0.1,  # PyKEEN's key for k = 10
    }
    stopper = EarlyStopper("mrr")
    stopper.report(flat)
    assert stopper.best_value == 0.3
    hits = EarlyStopper("hits@10")
    hits.report(flat)
    assert hits.best_value == 0.6
    adjusted = EarlyStopper("adjusted_hits_at_10")
    adjusted.report(flat)
    assert adjusted.best_value == 0.1

    class PykeenLikeResults:
        def to_flat_dict(self) -> dict[str, float]:
            return flat

    duck = EarlyStopper("head.mrr")
    duck.report(PykeenLikeResults())
    assert duck.best_value == 0.2


def test_report_uses_the_only_side_or_rank_type_present() -> None:
    stopper = EarlyStopper("mrr")
    stopper.report(
        {"tail.optimistic.inverse_harmonic_mean_rank": 0.4, "tail.optimistic.hits_at_1": 0.1}
    )
    assert stopper.best_value == 0.4


def test_ambiguous_and_missing_keys_say_what_is_wanted() -> None:
    stopper = EarlyStopper("mrr")
    ambiguous = {"head.inverse_harmonic_mean_rank": 0.1, "tail.inverse_harmonic_mean_rank": 0.2}
    with pytest.raises(ValueError, match=r"several keys for 'mrr'.*head.*tail"):
        stopper.report(ambiguous)
    with pytest.raises(
        KeyError,
        match=r"no value for 'mrr'.*'both.realistic.inverse_harmonic_mean_rank'.*'hits_at_1'",
    ):
        stopper.report({"hits_at_1": 0.5})
    assert stopper.history == []
    assert stopper.best_value is None


# --- epochs and values ---------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("epoch", "error", "match"),
    [
        (-1, ValueError, r"epoch must be a non-negative integer, got -1"),
        (1.0, TypeError, r"epoch must be an integer, got 1\.0"),
        (True, TypeError, r"epoch must be an integer, got True"),
        ("3", TypeError, r"epoch must be an integer"),
    ],
)
def test_bad_epochs(epoch: object, error: type, match: str) -> None:
    stopper = EarlyStopper("mrr")
    with pytest.raises(error, match=match):
        stopper.report(0.5, epoch=epoch)  # type: ignore[arg-type]
    assert stopper.history == []


def test_numpy_epochs_and_values() -> None:
    stopper = EarlyStopper("mrr")
    stopper.report(np.float64(0.5), epoch=np.int64(10))
    stopper.report(np.float32(0.25), epoch=np.uint8(11))
    assert stopper.history == [(10, 0.5), (11, 0.25)]
    assert all(type(epoch) is int and type(value) is float for epoch, value in stopper.history)


@pytest.mark.parametrize("value", [float("nan"), float("inf"), -float("inf"), np.float32("nan")])
def test_non_finite_values_are_refused_without_a_change(value: float) -> None:
    stopper = EarlyStopper("mrr")
    stopper.report(0.5)
    before = stopper.state_dict()
    with pytest.raises(ValueError, match="must be finite"):
        stopper.report(value)
    with pytest.raises(ValueError, match="must be finite"):
        stopper.report({"mrr": value})
    assert stopper.state_dict() == before


# --- loading state -------------------------------------------------------------------------------


def saved_state() -> dict[str, object]:
    stopper = EarlyStopper("mr", patience=3)
    run(stopper, [40.0, 30.0, 31.0, 32.0])
    return json.loads(json.dumps(stopper.state_dict()))


STATE_ERRORS = [
    ({"best_value": float("nan")}, ValueError, r"state\['best_value'\] must be finite, got nan"),
    ({"best_value": "30"}, TypeError, r"state\['best_value'\] must be a real number"),
    ({"best_value": None}, ValueError, r"must both be None or both be set"),
    ({"best_epoch": -1}, ValueError, r"state\['best_epoch'\] must be a non-negative integer"),
    ({"best_epoch": 1.0}, TypeError, r"state\['best_epoch'\] must be an integer"),
    ({"best_epoch": 2}, ValueError, r"state\['best_epoch'\] must be the epoch .* \(1, .*got 2"),
    ({"best_value": 31.0}, ValueError, r"best value of state\['history'\] \(30\.0 at epoch 1"),
    ({"best_value": 10**400}, ValueError, r"state\['best_value'\] must be finite, got an integer"),
    ({"history": [[0, 40.0], [1, -(10**400)]]}, ValueError, r"\[1\]\[1\] \(a value\) must be"),
    ({"absolute_delta": 10**400}, ValueError, r"state\['absolute_delta'\] must be finite"),
    ({"bad_evaluations": 5}, ValueError, r"the number of reports after the best one \(2\), got 5"),
    ({"bad_evaluations": -1}, ValueError, r"bad_evaluations'\] must be a non-negative integer"),
    ({"bad_evaluations": "2"}, TypeError, r"bad_evaluations'\] must be an integer"),
    ({"history": "abc"}, TypeError, r"state\['history'\] must be a list of \[epoch, value\]"),
    (
        {"history": [[0, 40.0], [1]]},
        TypeError,
        r"state\['history'\]\[1\] must be an \[epoch, value\]",
    ),
    (
        {"history": [[0, 40.0], [0, 30.0]]},
        ValueError,
        r"epochs of state\['history'\] must increase",
    ),
    (
        {"history": [[0, 40.0], [1, float("nan")]]},
        ValueError,
        r"\[1\]\[1\] \(a value\) must be finite",
    ),
    ({"history": []}, ValueError, r"state\['history'\] is empty"),
    ({"version": 2}, ValueError, r"state has version 2; this version of rankstats reads 1"),
    ({"surprise": 1}, ValueError, r"state has unknown keys \['surprise'\]"),
    ({"metric": 3}, TypeError, r"state\['metric'\] must be a str"),
    ({"larger_is_better": "no"}, TypeError, r"state\['larger_is_better'\] must be a bool"),
    ({"patience": 0}, ValueError, r"patience'\] must be a positive integer"),
    ({"relative_delta": -1.0}, ValueError, r"relative_delta'\] must be non-negative"),
]


@pytest.mark.parametrize(("change", "error", "match"), STATE_ERRORS)
def test_bad_states_are_refused_before_anything_changes(
    change: dict[str, object], error: type, match: str
) -> None:
    state = {**saved_state(), **change}
    stopper = EarlyStopper("mr", patience=3)
    run(stopper, [10.0, 11.0])
    before = stopper.state_dict()
    with pytest.raises(error, match=match):
        stopper.load_state_dict(state)
    assert stopper.state_dict() == before
    with pytest.raises(error, match=match):
        EarlyStopper.from_state_dict(state)


@pytest.mark.parametrize("key", ["history", "best_value", "metric"])
def test_missing_state_keys(key: str) -> None:
    state = saved_state()
    del state[key]
    with pytest.raises(ValueError, match=rf"state lacks the keys \['{key}'\]"):
        EarlyStopper("mr").load_state_dict(state)


def test_state_must_be_a_mapping() -> None:
    with pytest.raises(TypeError, match="state must be a mapping"):
        EarlyStopper("mr").load_state_dict([("metric", "mr")])  # type: ignore[arg-type]


def test_a_state_without_version_is_read_as_version_one() -> None:
    state = saved_state()
    del state["version"]
    restored = EarlyStopper.from_state_dict(state)
    assert restored.best_value == 30.0
    assert restored.bad_evaluations == 2


def test_a_fresh_state_round_trips() -> None:
    fresh = EarlyStopper("mrr")
    restored = EarlyStopper.from_state_dict(json.loads(json.dumps(fresh.state_dict())))
    assert restored.state_dict() == fresh.state_dict()


def test_stoppers_pickle_and_copy() -> None:
    import copy
    import pickle

    stopper = EarlyStopper("mr", patience=3)
    run(stopper, [40.0, 30.0, 31.0])
    for clone in (pickle.loads(pickle.dumps(stopper)), copy.deepcopy(stopper)):
        assert clone.state_dict() == stopper.state_dict()
        assert run(clone, [32.0, 33.0]) == [False, True]
    assert stopper.bad_evaluations == 1


def test_eight_threads_reporting_to_one_stopper() -> None:
    import threading
    from concurrent.futures import ThreadPoolExecutor

    stopper = EarlyStopper("mrr", patience=1000)
    barrier = threading.Barrier(8)

    def work(worker: int) -> None:
        barrier.wait()
        for step in range(50):
            stopper.report(0.001 * (worker * 50 + step))
            stopper.state_dict()

    with ThreadPoolExecutor(8) as pool:
        list(pool.map(work, range(8)))
    epochs = [epoch for epoch, _ in stopper.history]
    assert epochs == list(range(400))  # no epoch lost or repeated
    assert stopper.best_value == pytest.approx(0.399)
    values = [value for _, value in stopper.history]
    best_index = values.index(max(values))
    assert stopper.best_epoch == epochs[best_index]
    assert stopper.bad_evaluations == len(values) - 1 - best_index
    EarlyStopper.from_state_dict(stopper.state_dict())  # the state is consistent


@pytest.mark.parametrize(
    ("value", "match"),
    [
        (True, "got bool"),
        (np.bool_(False), "got bool"),
        (np.array([0.5]), "got ndarray"),
        (np.array([0.5, 0.6]), "got ndarray"),
        ([0.5], "got list"),
        (None, "got NoneType"),
        (0.5 + 0j, "got complex"),
        (b"0.5", "got bytes"),
    ],
)
def test_values_must_be_real_numbers(value: object, match: str) -> None:
    stopper = EarlyStopper("mrr")
    with pytest.raises(TypeError, match=match):
        stopper.report(value)
    with pytest.raises(TypeError, match=rf"{match} for the key 'mrr'"):
        stopper.report({"mrr": value})
    assert stopper.history == []


def test_numpy_scalars_and_zero_dimensional_arrays_are_numbers() -> None:
    stopper = EarlyStopper("mrr")
    for value in (np.array(0.25), np.float16(0.5), np.int64(1), 0.75):
        stopper.report(value)
    assert [value for _, value in stopper.history] == [0.25, 0.5, 1.0, 0.75]


@pytest.mark.parametrize(
    ("key", "canonical"),
    [
        # PyKEEN's test_resolve_metric_name, with the keys of rankstats' flat dictionary
        ("mrr", "both.realistic.inverse_harmonic_mean_rank"),
        ("both.mean_rank", "both.realistic.arithmetic_mean_rank"),
        ("avg.mean_rank", "both.realistic.arithmetic_mean_rank"),
        ("tail.worst.mean_rank", "tail.pessimistic.arithmetic_mean_rank"),
        ("avg.amri", "both.realistic.adjusted_arithmetic_mean_rank_index"),
        ("hits_at_k", "both.realistic.hits_at_10"),
        ("head.best.hits_at_k.3", "head.optimistic.hits_at_3"),
        ("hits_at_1", "both.realistic.hits_at_1"),
        ("H@10", "both.realistic.hits_at_10"),
        ("average.hits@3", "both.realistic.hits_at_3"),
    ],
)
def test_pykeen_key_spellings(key: str, canonical: str) -> None:
    results = evaluate(
        {"head": Ranks([1, 2, 5], [1, 3, 6], [9, 9, 9]), "tail": Ranks([2, 1], [2, 4], [9, 9])},
        metrics=["mrr", "mr", "amri", "hits@1", "hits@3", "hits@10"],
    )
    flat = results.to_dict()
    for result in (results, flat):
        stopper = EarlyStopper(key)
        stopper.report(result)
        assert stopper.best_value == flat[canonical], (key, type(result))


def test_a_dotted_cut_off_needs_a_metric_with_one() -> None:
    with pytest.raises(ValueError, match="side and rank type at most once"):
        EarlyStopper("mrr.3")


# --- huge Python integers ------------------------------------------------------------------------


def test_integers_beyond_the_float_range_are_value_errors() -> None:
    stopper = EarlyStopper("mrr")
    stopper.report(0.5)
    before = stopper.state_dict()
    message = r"the value of 'mrr' must be finite, got an integer of 401 digits, beyond the range"
    with pytest.raises(ValueError, match=message):
        stopper.report(10**400)
    with pytest.raises(ValueError, match=r"got an integer of 5001 digits"):  # no digits printed
        stopper.report({"mrr": -(10**5000)})
    with pytest.raises(ValueError, match=r"value must be finite, got an integer of 401 digits"):
        stopper.is_improvement(10**400)
    assert stopper.state_dict() == before
    for name in ("relative_delta", "absolute_delta"):
        with pytest.raises(ValueError, match=rf"{name} must be a finite non-negative number"):
            EarlyStopper("mrr", **{name: 10**400})  # type: ignore[arg-type]
    state = {**before, "history": [[5, 10**400]], "best_epoch": 5}
    with pytest.raises(ValueError, match=r"state\['history'\]\[0\]\[1\] \(a value\) must be"):
        EarlyStopper.from_state_dict(state)


# --- a state must be what report() made of its history --------------------------------------------


def contradicting_state(**change: object) -> dict[str, object]:
    state: dict[str, object] = {
        "metric": "mrr",
        "larger_is_better": True,
        "best_value": 0.9,
        "best_epoch": 0,
        "bad_evaluations": 1,
        "history": [[0, 0.9], [1, 0.1]],
    }
    return {**state, **change}


@pytest.mark.parametrize(
    ("change", "field"),
    [
        # 0.9 is in the history: a later 0.5 must not count as an improvement
        ({"best_value": 0.1, "best_epoch": 1, "bad_evaluations": 0}, "best_value"),
        ({"best_epoch": 1}, "best_epoch"),  # the best value, at the wrong epoch
        ({"bad_evaluations": 0}, "bad_evaluations"),
        # a tie is no improvement: the best is the first 0.9
        ({"history": [[0, 0.9], [1, 0.9]], "best_epoch": 1, "bad_evaluations": 0}, "best_epoch"),
        # with relative_delta 0.5, 0.9 -> 1.2 is no improvement (needs more than 0.45)
        (
            {
                "history": [[0, 0.9], [1, 1.2]],
                "best_value": 1.2,
                "best_epoch": 1,
                "bad_evaluations": 0,
                "relative_delta": 0.5,
            },
            "best_value",
        ),
        ({"larger_is_better": False}, "best_value"),  # minimised, 0.1 is the best
    ],
)
def test_counters_must_follow_from_the_history(change: dict[str, object], field: str) -> None:
    state = contradicting_state(**change)
    with pytest.raises(ValueError, match=rf"state\['{field}'\] must be the"):
        EarlyStopper.from_state_dict(state)
    stopper = EarlyStopper("mrr", larger_is_better=state["larger_is_better"])  # type: ignore[arg-type]
    with pytest.raises(ValueError, match=rf"state\['{field}'\] must be the"):
        stopper.load_state_dict(state)
    assert stopper.history == []


def test_a_consistent_state_goes_on_as_the_stopper_would() -> None:
    restored = EarlyStopper.from_state_dict(contradicting_state())
    assert restored.is_improvement(0.5) is False  # 0.9 is the best of the history
    assert restored.report(0.5) is True  # a second evaluation without improvement: patience 2


def test_the_history_is_replayed_with_the_deltas_of_the_state() -> None:
    saved = EarlyStopper("mrr", relative_delta=0.5)
    run(saved, [0.4, 0.5])  # 0.5 is no improvement on 0.4 with this delta (it is without)
    state = json.loads(json.dumps(saved.state_dict()))
    assert EarlyStopper.from_state_dict(state).state_dict() == saved.state_dict()
    other = EarlyStopper("mrr")  # other deltas: its own configuration stays, the state is valid
    other.load_state_dict(state)
    assert (other.best_value, other.best_epoch, other.relative_delta) == (0.4, 0, 0.0)
    del state["relative_delta"]  # without them, the history must agree with the stopper's
    with pytest.raises(ValueError, match=r"state\['best_value'\] must be the best value"):
        other.load_state_dict(state)
    EarlyStopper("mrr", relative_delta=0.5).load_state_dict(state)


@pytest.mark.parametrize("seed", range(20))
def test_every_saved_state_is_accepted(seed: int) -> None:
    generator = np.random.default_rng(seed)
    stopper = EarlyStopper(
        "mr" if seed % 2 else "mrr",
        patience=int(generator.integers(1, 4)),
        relative_delta=float(generator.choice([0.0, 0.01, 0.2])),
        absolute_delta=float(generator.choice([0.0, 0.05])),
    )
    for value in np.round(generator.random(int(generator.integers(1, 30))), 2):
        stopper.report(float(value))
    state = json.loads(json.dumps(stopper.state_dict()))
    assert EarlyStopper.from_state_dict(state).state_dict() == stopper.state_dict()
