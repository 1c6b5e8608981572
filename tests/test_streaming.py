"""The streaming accumulator: exact equality with one-shot evaluation, merging, state."""

from __future__ import annotations

import json
import pickle

import numpy as np
import pytest

from rankstats.evaluation import RankAccumulator, Ranks, evaluate

METRICS = ["mrr", "hits@1", "hits@10", "mr", "gmr", "median_rank", "variance", "count"]
METRICS += ["amri", "amrr", "zmrr", "zmr", "agmri"]


def make_batch(seed: int, n: int = 40) -> dict[str, Ranks]:
    rng = np.random.default_rng(seed)

    def side() -> Ranks:
        candidates = rng.integers(3, 50, size=n)
        optimistic = np.minimum(rng.geometric(0.1, size=n), candidates)
        ties = rng.binomial(1, 0.3, size=n) * rng.integers(1, 5, size=n)
        return Ranks(optimistic, np.minimum(optimistic + ties, candidates), candidates)

    return {"head": side(), "tail": side()}


BATCHES = [
    make_batch(seed, n=n) for seed, n in zip(range(7), (40, 1, 17, 40, 3, 25, 8), strict=True)
]
ALL = {side: Ranks.concatenate(b[side] for b in BATCHES) for side in ("head", "tail")}
GROUPS = [
    np.random.default_rng(100 + i).integers(0, 5, size=len(b["head"]))
    for i, b in enumerate(BATCHES)
]


def accumulate(
    batches: list[dict[str, Ranks]], groups: list[np.ndarray] | None = None, **kwargs: object
) -> RankAccumulator:
    accumulator = RankAccumulator(METRICS, **kwargs)  # type: ignore[arg-type]
    for i, batch in enumerate(batches):
        accumulator.update(batch, groups=None if groups is None else groups[i])
    return accumulator


def assert_identical(left: object, right: object) -> None:
    """Equal to the last bit, NaN included (the JSON text compares floats exactly)."""
    assert json.dumps(left.to_dict(statistics=True)) == json.dumps(right.to_dict(statistics=True))  # type: ignore[attr-defined]


def test_batch_by_batch_equals_one_shot_exactly() -> None:
    streamed = accumulate(BATCHES).compute()
    assert_identical(streamed, evaluate(ALL, metrics=METRICS))
    assert accumulate(BATCHES).num_ranks == 2 * len(ALL["head"])


def test_groups_and_macro_average_stream_exactly() -> None:
    labels = np.concatenate(GROUPS)
    for average in ("micro", "macro"):
        streamed = accumulate(BATCHES, GROUPS, average=average).compute()
        one_shot = evaluate(ALL, metrics=METRICS, groups=labels, average=average)
        assert_identical(streamed, one_shot)
        assert list(streamed.by_group) == list(one_shot.by_group)
        for label in one_shot.by_group:
            assert_identical(streamed.by_group[label], one_shot.by_group[label])


def test_merge_is_associative_and_commutative() -> None:
    a, b, c = accumulate(BATCHES[:2]), accumulate(BATCHES[2:5]), accumulate(BATCHES[5:])
    left = (a + b) + c
    right = a + (b + c)
    swapped = c + (b + a)
    reference = evaluate(ALL, metrics=METRICS)
    for merged in (left, right, swapped, RankAccumulator.merged([a, b, c])):
        assert_identical(merged.compute(), reference)
    # + leaves its operands alone
    assert_identical(
        a.compute(),
        evaluate(
            {s: Ranks.concatenate(x[s] for x in BATCHES[:2]) for s in ("head", "tail")},
            metrics=METRICS,
        ),
    )


def test_merge_with_groups_relabels() -> None:
    a = accumulate(BATCHES[:3], GROUPS[:3])
    b = accumulate(BATCHES[3:], GROUPS[3:])
    a.merge(b)
    one_shot = evaluate(ALL, metrics=METRICS, groups=np.concatenate(GROUPS))
    assert_identical(a.compute(), one_shot)


def test_state_is_bounded_by_distinct_values() -> None:
    accumulator = RankAccumulator(["mrr"])
    batch = make_batch(0)
    for _ in range(50):
        accumulator.update(batch)
    once = RankAccumulator(["mrr"])
    once.update(batch)
    for side in ("head", "tail"):
        for name, table in accumulator._state.sides[side].tables().items():
            assert len(table) == len(once._state.sides[side].tables()[name])
    assert accumulator.compute()["mrr"] == pytest.approx(once.compute()["mrr"], rel=1e-14)
    assert accumulator.num_ranks == 50 * once.num_ranks


def test_pickle_and_state_dict_round_trip() -> None:
    accumulator = accumulate(BATCHES, GROUPS, average="macro")
    reference = accumulator.compute()
    assert_identical(pickle.loads(pickle.dumps(accumulator)).compute(), reference)
    state = json.loads(json.dumps(accumulator.state_dict()))
    restored = RankAccumulator.from_state_dict(state)
    assert_identical(restored.compute(), reference)
    # plain realistic ranks (floats) survive too
    plain = RankAccumulator(["mrr", "hits@1"])
    plain.update([1.5, 2.0, 7.5])
    again = RankAccumulator.from_state_dict(json.loads(json.dumps(plain.state_dict())))
    assert_identical(again.compute(), plain.compute())


def test_reset() -> None:
    accumulator = accumulate(BATCHES[:2])
    accumulator.reset()
    assert accumulator.num_ranks == 0
    with pytest.raises(ValueError, match=r"no ranks to evaluate: call update\(\) first"):
        accumulator.compute()


def test_bad_merges_and_updates() -> None:
    accumulator = accumulate(BATCHES[:2])
    with pytest.raises(ValueError, match="cannot merge accumulators with different metrics"):
        accumulator.merge(RankAccumulator(["mrr"]))
    with pytest.raises(ValueError, match="different rank_types or average"):
        accumulator.merge(RankAccumulator(METRICS, average="macro"))
    with pytest.raises(TypeError, match="can only merge a RankAccumulator"):
        accumulator.merge(evaluate(ALL))  # type: ignore[arg-type]
    with pytest.raises(
        ValueError, match=r"same sides; expected \['head', 'tail'\], got \['both'\]"
    ):
        accumulator.update(ALL["head"])
    with pytest.raises(ValueError, match="same kinds of ranks"):
        accumulator.update({"head": [1.0], "tail": [2.0]}, {"head": [3], "tail": [3]})
    with pytest.raises(ValueError, match="groups must be given with every update or with none"):
        accumulator.update(BATCHES[0], groups=GROUPS[0])
    grouped = accumulate(BATCHES[:1], GROUPS[:1])
    with pytest.raises(ValueError, match="with groups and one without"):
        grouped.merge(accumulator)
    expected_only = RankAccumulator(["mrr"], rank_types=["expected"])
    with pytest.raises(ValueError, match="'expected' needs the optimistic and pessimistic ranks"):
        expected_only.update([1.0, 2.0])


# --- atomic updates and merges -------------------------------------------------------------------


def snapshot(accumulator: RankAccumulator) -> str:
    return json.dumps(accumulator.state_dict(), sort_keys=True)


def test_failed_updates_and_merges_change_nothing() -> None:
    accumulator = accumulate(BATCHES[:2], GROUPS[:2])
    before = snapshot(accumulator)
    failures = [
        # a new label with a layout that does not fit: the label must not be kept
        lambda: accumulator.update({"head": [1.0], "tail": [2.0]}, groups=["new"]),
        lambda: accumulator.update(BATCHES[0]),  # no groups now
        lambda: accumulator.update(BATCHES[0], groups=np.arange(len(BATCHES[0]["head"]) + 1)),
        lambda: accumulator.update({"head": BATCHES[0]["head"]}, groups=GROUPS[0]),
        lambda: accumulator.update(BATCHES[0], groups=[[1, 2]] * len(BATCHES[0]["head"])),
        lambda: accumulator.update({"head": [0.0], "tail": [1.0]}, groups=["other"]),
        lambda: accumulator.merge(accumulate(BATCHES[:1])),  # without groups
        lambda: accumulator.merge(RankAccumulator(["mrr"])),
    ]
    other = RankAccumulator(METRICS)
    other.update({"head": [1.0], "tail": [2.0]}, groups=["fresh"])
    failures.append(lambda: accumulator.merge(other))  # new label, sides of another kind
    for fail in failures:
        with pytest.raises((ValueError, TypeError)):
            fail()
        assert snapshot(accumulator) == before


def test_merging_into_itself_doubles_the_counts() -> None:
    accumulator = accumulate(BATCHES[:2])
    accumulator.merge(accumulator)
    assert_identical(accumulator.compute(), accumulate(BATCHES[:2] * 2).compute())


# --- group labels --------------------------------------------------------------------------------


def test_labels_of_different_types_stay_apart() -> None:
    accumulator = RankAccumulator(["mrr", "count"])
    accumulator.update([1.0, 2.0], groups=[1, "1"])
    accumulator.update([4.0], groups=np.array(["1"]))
    accumulator.update([8.0], groups=np.array([1]))
    results = accumulator.compute()
    assert set(results.by_group) == {1, "1"}
    assert results.by_group[1]["count"] == 2
    assert results.by_group["1"]["count"] == 2
    assert results.by_group[1]["mrr"] == pytest.approx((1 + 1 / 8) / 2)
    assert results.by_group["1"]["mrr"] == pytest.approx((1 / 2 + 1 / 4) / 2)


def test_labels_equal_in_python_are_one_group() -> None:
    accumulator = RankAccumulator(["count"])
    accumulator.update([1.0, 2.0, 3.0], groups=[1, np.int64(1), 1.0])
    accumulator.update([4.0], groups=np.array([1], dtype=np.uint8))
    results = accumulator.compute()
    assert list(results.by_group) == [1]
    assert results.by_group[1]["count"] == 4


def test_mixed_labels_are_listed_in_a_stable_order() -> None:
    accumulator = RankAccumulator(["count"])
    accumulator.update([1.0, 2.0, 3.0, 4.0], groups=["b", 2, "a", 1])
    assert list(accumulator.compute().by_group) == [1, 2, "a", "b"]
    same = RankAccumulator(["count"])
    same.update([3.0, 4.0], groups=["a", 1])
    same.update([1.0, 2.0], groups=["b", 2])
    assert list(same.compute().by_group) == [1, 2, "a", "b"]


def test_string_labels_stream_like_evaluate() -> None:
    labels = [np.array(["x", "y", "z", "w", "v"])[g] for g in GROUPS]
    accumulator = accumulate(BATCHES, labels)
    one_shot = evaluate(ALL, metrics=METRICS, groups=np.concatenate(labels))
    assert_identical(accumulator.compute(), one_shot)
    for label in one_shot.by_group:
        assert_identical(accumulator.compute().by_group[label], one_shot.by_group[label])


@pytest.mark.parametrize(
    ("groups", "error", "match"),
    [
        ([1.0, float("nan")], ValueError, "group labels must not be NaN"),
        (np.array([1.0, np.nan]), ValueError, "group labels must not be NaN"),
        ([[1], [2]], ValueError, "groups must be a 1-D array"),
        (np.zeros((2, 1)), ValueError, "groups must be a 1-D array"),
        ([{1: 2}, {3: 4}], TypeError, "group labels must be hashable"),
        ("ab", TypeError, "groups must be an array-like of labels"),
    ],
)
def test_bad_labels(groups: object, error: type, match: str) -> None:
    accumulator = RankAccumulator(["mrr"])
    with pytest.raises(error, match=match):
        accumulator.update([1.0, 2.0], groups=groups)
    assert accumulator.num_ranks == 0


def test_tuple_labels() -> None:
    accumulator = RankAccumulator(["count"])
    accumulator.update([1.0, 2.0, 3.0], groups=[("a", 1), ("a", 2), ("a", 1)])
    assert accumulator.compute().by_group[("a", 1)]["count"] == 2


# --- empty batches, scalar candidate counts ----------------------------------------------------


@pytest.mark.parametrize(
    "empty", [[], (), np.array([]), np.zeros(0, dtype=np.int64), {"head": [], "tail": []}]
)
def test_an_empty_batch_changes_nothing(empty: object) -> None:
    accumulator = accumulate(BATCHES[:2])
    before = snapshot(accumulator)
    accumulator.update(empty)
    accumulator.update(empty, num_candidates=5)
    assert snapshot(accumulator) == before
    fresh = RankAccumulator(["mrr"])
    fresh.update(empty, groups=[])
    assert fresh.num_ranks == 0
    fresh.update([1.0])  # it may still choose to have no groups
    assert fresh.compute()["mrr"] == 1.0


def test_an_empty_batch_with_labels_or_counts_is_refused() -> None:
    accumulator = RankAccumulator(["mrr"])
    with pytest.raises(ValueError, match="the batch has no ranks, but groups is not empty"):
        accumulator.update([], groups=[1])
    with pytest.raises(ValueError, match="the batch has no ranks, but num_candidates is not empty"):
        accumulator.update([], num_candidates=[3])


def test_a_scalar_num_candidates_broadcasts() -> None:
    scalar = RankAccumulator(["mrr", "amri"])
    scalar.update([1.0, 2.5, 4.0], num_candidates=10)
    scalar.update([3.0], num_candidates=np.int64(10))
    explicit = RankAccumulator(["mrr", "amri"])
    explicit.update([1.0, 2.5, 4.0, 3.0], num_candidates=[10, 10, 10, 10])
    assert_identical(scalar.compute(), explicit.compute())
    sides = RankAccumulator(["mrr", "amri"])
    sides.update({"head": [1.0, 2.0], "tail": [3.0]}, num_candidates={"head": 5, "tail": 7})
    sides.update({"head": [1.0], "tail": [3.0, 1.0]}, num_candidates=7)
    reference = evaluate(
        {"head": [1.0, 2.0, 1.0], "tail": [3.0, 3.0, 1.0]},
        num_candidates={"head": [5, 5, 7], "tail": [7, 7, 7]},
        metrics=["mrr", "amri"],
    )
    assert_identical(sides.compute(), reference)


@pytest.mark.parametrize(
    ("count", "error", "match"),
    [
        (0, ValueError, "num_candidates must be integers >= 1"),
        (2.5, ValueError, "num_candidates must be integers >= 1"),
        (1, ValueError, "ranks must not exceed their num_candidates"),
        ("10", TypeError, "num_candidates"),
        (float("nan"), ValueError, "num_candidates"),
    ],
)
def test_bad_scalar_num_candidates(count: object, error: type, match: str) -> None:
    accumulator = RankAccumulator(["mrr"])
    with pytest.raises(error, match=match):
        accumulator.update([1.0, 2.0], num_candidates=count)
    assert accumulator.num_ranks == 0


# --- malformed state -----------------------------------------------------------------------------


def grouped_state() -> dict:  # type: ignore[type-arg]
    accumulator = accumulate(BATCHES[:2], GROUPS[:2])
    return json.loads(json.dumps(accumulator.state_dict()))


def edit(path: tuple[object, ...], value: object, delete: bool = False) -> dict:  # type: ignore[type-arg]
    state = grouped_state()
    target = state
    for key in path[:-1]:
        target = target[key]  # type: ignore[index]
    if delete:
        del target[path[-1]]  # type: ignore[arg-type]
    else:
        target[path[-1]] = value  # type: ignore[index]
    return state


PAIRS = ("sides", "head", "pairs")
STATE_ERRORS = [
    (edit(("version",), 99), ValueError, r"state has version 99"),
    (edit(("extra",), 1), ValueError, r"state has unknown keys \['extra'\]"),
    (edit(("labels",), None, delete=True), ValueError, r"state lacks the keys \['labels'\]"),
    (edit(("metrics",), "mrr"), TypeError, r"state\['metrics'\] must be a list"),
    (edit(("metrics",), ["mrrr"]), ValueError, r"unknown metric 'mrrr'"),
    (edit(("default_metrics",), "no"), TypeError, r"default_metrics'\] must be a bool"),
    (edit(("average",), "mean"), ValueError, r"average must be 'micro' or 'macro'"),
    (edit(("rank_types",), "realistic"), TypeError, r"rank_types'\] must be None or a list"),
    (edit(("grouped",), "yes"), TypeError, r"state\['grouped'\] must be None or a bool"),
    (edit(("grouped",), None), ValueError, r"labels.\] must be empty for an accumulator without"),
    (edit(("labels",), [0, 1, 1, 2, 3, 4]), ValueError, r"must not repeat a label"),
    (edit(("labels",), [0, 1, 2]), ValueError, r"\['group'\] must hold integers between 0 and 2"),
    (edit(("labels",), [0, float("nan"), 2, 3, 4]), ValueError, r"must not be NaN"),
    (edit(("sides",), []), TypeError, r"state\['sides'\] must be a mapping"),
    (edit(("sides", "head", "extra"), {}), ValueError, r"unknown tables \['extra'\]"),
    (edit((*PAIRS, "count", 0), -1), ValueError, r"\['count'\] must hold integers between 1"),
    (edit((*PAIRS, "count", 0), 0), ValueError, r"\['count'\] must hold integers between 1"),
    (edit((*PAIRS, "count", 0), 1.5), ValueError, r"\['count'\] must hold integers"),
    (edit((*PAIRS, "count", 0), "3"), TypeError, r"\['count'\] must hold numbers"),
    (edit((*PAIRS, "count"), 3), TypeError, r"\['count'\] must be a list of numbers"),
    (edit((*PAIRS, "optimistic", 0), 0), ValueError, r"\['optimistic'\] must hold integers"),
    (edit((*PAIRS, "optimistic", 0), 2**60), ValueError, r"\['optimistic'\] must hold integers"),
    (edit((*PAIRS, "pessimistic"), [1]), ValueError, r"one entry per row like"),
    (edit((*PAIRS, "weight"), [1.0]), ValueError, r"must have the columns"),
    (edit((*PAIRS, "group", 0), 99), ValueError, r"\['group'\] must hold integers between 0 and 4"),
    (edit((*PAIRS, "optimistic", 0), 10**6), ValueError, r"pessimistic ranks must not be smaller"),
    (
        edit(("sides", "head", "candidates", "count", 0), 10**6),
        ValueError,
        r"as many ranks per group",
    ),
    (edit(("sides", "head", "candidates"), None, delete=True), ValueError, r"the same tables"),
    (edit(("sides", "head", "pairs"), None, delete=True), ValueError, r"either a 'pairs' table"),
    (edit(("sides", "head", "candidates", "num_candidates", 0), 0), ValueError, r"num_candidates"),
]


@pytest.mark.parametrize(("state", "error", "match"), STATE_ERRORS)
def test_malformed_states_are_refused(state: dict, error: type, match: str) -> None:  # type: ignore[type-arg]
    with pytest.raises(error, match=match):
        RankAccumulator.from_state_dict(state)


def test_state_must_be_a_mapping() -> None:
    with pytest.raises(TypeError, match="state must be a mapping"):
        RankAccumulator.from_state_dict([1, 2])  # type: ignore[arg-type]


def test_a_rank_above_every_candidate_count_is_refused() -> None:
    accumulator = RankAccumulator(["mrr"])
    accumulator.update([1.0, 2.0], num_candidates=[3, 3])
    state = json.loads(json.dumps(accumulator.state_dict()))
    state["sides"]["both"]["ranks.realistic"]["rank"] = [1.0, 7.5]
    with pytest.raises(ValueError, match="a rank exceeds every candidate count of its group"):
        RankAccumulator.from_state_dict(state)
    state["sides"]["both"]["ranks.realistic"]["rank"] = [1.0, 1.25]
    with pytest.raises(ValueError, match="integers or half-integers"):
        RankAccumulator.from_state_dict(state)


def test_an_old_state_without_version_and_a_fresh_state_load() -> None:
    state = grouped_state()
    del state["version"]
    RankAccumulator.from_state_dict(state)
    fresh = RankAccumulator(["mrr"])
    assert RankAccumulator.from_state_dict(fresh.state_dict()).num_ranks == 0


# --- threads -------------------------------------------------------------------------------------


def test_eight_threads_updating_and_merging_one_accumulator() -> None:
    import threading
    from concurrent.futures import ThreadPoolExecutor

    accumulator = RankAccumulator(METRICS)
    barrier = threading.Barrier(8)

    def work(worker: int) -> None:
        barrier.wait()
        for index in range(worker, len(BATCHES), 8):
            accumulator.update(BATCHES[index], groups=GROUPS[index])
        # every worker also merges an accumulator of its own, and reads meanwhile
        own = RankAccumulator(METRICS)
        own.update(BATCHES[worker % len(BATCHES)], groups=GROUPS[worker % len(BATCHES)])
        accumulator.merge(own)
        accumulator.state_dict()

    with ThreadPoolExecutor(8) as pool:
        list(pool.map(work, range(8)))
    extra = [worker % len(BATCHES) for worker in range(8)]
    expected = accumulate(
        [*BATCHES, *(BATCHES[i] for i in extra)], [*GROUPS, *(GROUPS[i] for i in extra)]
    )
    assert_identical(accumulator.compute(), expected.compute())


def test_eight_threads_computing_from_one_accumulator() -> None:
    from concurrent.futures import ThreadPoolExecutor

    accumulator = accumulate(BATCHES, GROUPS, average="macro")
    reference = json.dumps(accumulator.compute().to_dict(statistics=True))
    with ThreadPoolExecutor(8) as pool:
        texts = list(
            pool.map(
                lambda _: json.dumps(accumulator.compute().to_dict(statistics=True)), range(16)
            )
        )
    assert set(texts) == {reference}


def test_tuple_labels_survive_json() -> None:
    accumulator = RankAccumulator(["count"])
    accumulator.update([1.0, 2.0, 3.0], groups=[("a", 1), ("b", (2, 3)), ((),)])
    restored = RankAccumulator.from_state_dict(json.loads(json.dumps(accumulator.state_dict())))
    assert list(restored.compute().by_group) == list(accumulator.compute().by_group)
    assert restored.compute().by_group[("b", (2, 3))]["count"] == 1


def test_compute_passes_monte_carlo_options_through() -> None:
    # the MAD has no closed-form null model: compute() samples it as evaluate() does
    rng = np.random.default_rng(3)
    candidates = rng.integers(2, 30, size=60)
    ranks = np.minimum(rng.integers(1, 10, size=60), candidates).astype(float)
    accumulator = RankAccumulator(metrics=["median_absolute_deviation"])
    accumulator.update(ranks[:25], candidates[:25])
    accumulator.update(ranks[25:], candidates[25:])
    got = accumulator.compute(num_samples=200, seed=7)
    expected = evaluate(
        ranks, candidates, metrics=["median_absolute_deviation"], num_samples=200, seed=7
    )
    row, reference = got.rows[0], expected.rows[0]
    assert row.method == "monte-carlo"
    assert row.expected_value == reference.expected_value
    assert row.standard_error == reference.standard_error
    assert got.num_samples == 200
    assert got.seed == 7
    with pytest.raises(ValueError, match="num_samples"):
        accumulator.compute(num_samples=0)


@pytest.mark.parametrize("weights", [[1e-160, 3e-160], [1e-165, 3e-165], [5e-324] * 2])
def test_tiny_weights_are_refused_with_a_hint_to_rescale(weights: list[float]) -> None:
    accumulator = RankAccumulator()
    with pytest.raises(ValueError, match=r"at least 2\*\*-500 .*rescale them"):
        accumulator.update([1, 2], [10, 20], weights=weights)
    assert accumulator.num_ranks == 0


def test_weights_at_the_lower_bound_and_zero_weights_stay_exact() -> None:
    weights = [0.0, 2.0**-500, 3 * 2.0**-500]
    accumulator = RankAccumulator()
    accumulator.update([1, 2, 3], [10, 20, 30], weights=weights)
    assert_identical(accumulator.compute(), evaluate([1, 2, 3], [10, 20, 30], weights=weights))


def test_counts_that_overflow_int64_are_refused_in_merge_and_update() -> None:
    part = RankAccumulator(["mrr"])
    part.update([1, 2], 10, counts=[2**53, 2**52])
    too_many = r"counts of side 'both' must add up to fewer than 2\*\*62 ranks"
    with pytest.raises(ValueError, match=too_many):
        RankAccumulator.merged([part] * 1024)
    big = RankAccumulator.merged([part] * 341)  # 341 * 1.5 * 2**53 < 2**62 < 342 * 1.5 * 2**53
    assert big.num_ranks == 341 * (2**53 + 2**52)
    with pytest.raises(ValueError, match=too_many):
        big.update([1, 2], 10, counts=[2**53, 2**52])
    assert big.num_ranks == 341 * (2**53 + 2**52)  # unchanged
    # rows of more than 2**53 tasks, made by merging, read back
    assert RankAccumulator.from_state_dict(big.state_dict()).num_ranks == big.num_ranks
    with pytest.raises(ValueError, match=r"^counts must add up to fewer than 2\*\*62 ranks"):
        RankAccumulator(["mrr"]).update([1] * 1024, 10, counts=[2**53] * 1024)


def test_a_count_above_the_limit_names_the_limit() -> None:
    with pytest.raises(
        ValueError, match=r"non-negative integers of at most 2\*\*53, got 4611686018427387904"
    ):
        RankAccumulator().update([1, 2], 10, counts=[2**62, 1])


def test_state_metrics_must_be_keys_even_with_the_defaults() -> None:
    """A state of the default metrics still lists their keys: junk there is refused."""
    accumulator = RankAccumulator()
    accumulator.update([1, 2], [3, 3])
    state = json.loads(json.dumps(accumulator.state_dict()))
    assert RankAccumulator.from_state_dict(state).compute() == accumulator.compute()
    state["metrics"] = [1, 2]
    with pytest.raises(TypeError, match=r"state\['metrics'\] must be a list of metric keys"):
        RankAccumulator.from_state_dict(state)


def _weighted_tied_state() -> dict:  # type: ignore[type-arg]
    acc = RankAccumulator(["mrr", "gmr", "variance"])
    acc.update(
        Ranks([1, 2, 2, 3, 3], [1, 4, 4, 3, 5], [5, 5, 5, 5, 5]), weights=[1.0, 2.0, 3.0, 1.0, 0.5]
    )
    return json.loads(json.dumps(acc.state_dict()))


@pytest.mark.parametrize(
    ("path", "value", "error", "match"),
    [
        # a tied task's weight moved to another pair: accepted, compute() had changed silently
        (("sides", "both", "tie_pairs", "pessimistic", 1), 5, ValueError, r"must hold the rows of"),
        (("sides", "both", "candidates", "num_candidates", 0), True, TypeError, r"not booleans"),
        (("sides", "both", "pairs", "group", 0), 1.5, ValueError, r"must hold integers"),
        # the weight sums' keys had been converted unchecked: OverflowError, 0.5 read as 0
        (("weight_sums", "both", "pairs", "optimistic", 0), 10**30, TypeError, r"hold numbers"),
        (("weight_sums", "both", "pairs", "group", 0), 0.5, ValueError, r"must hold integers"),
        (("weight_sums", "both", "pairs", "group", 0), True, TypeError, r"not booleans"),
    ],
)
def test_weighted_states_are_checked_throughout(
    path: tuple[object, ...], value: object, error: type, match: str
) -> None:
    state = _weighted_tied_state()
    assert RankAccumulator.from_state_dict(state).compute().rows  # the state as written loads
    target = state
    for key in path[:-1]:
        target = target[key]  # type: ignore[index]
    target[path[-1]] = value  # type: ignore[index]
    with pytest.raises(error, match=match):
        RankAccumulator.from_state_dict(state)
