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
        for name, table in accumulator._sides[side].tables().items():
            assert len(table) == len(once._sides[side].tables()[name])
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
