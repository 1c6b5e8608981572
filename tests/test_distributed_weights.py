"""Weights and counts in the accumulator: exact per-cell sums, any sharding, the same bits."""

from __future__ import annotations

import copy
import json
import math
from fractions import Fraction

import numpy as np
import pytest

from rankstats import RankAccumulator, Ranks, evaluate
from rankstats.evaluation import weight_sums
from rankstats.evaluation.weight_sums import (
    add_limbs,
    align,
    rounded_sums,
    row_sums,
    weight_limbs,
)

METRICS = ["mrr", "hits@1", "hits@10", "mr", "gmr", "median_rank", "variance", "amri", "zmrr"]
NO_TIES = ["optimistic", "realistic", "pessimistic"]


def data(seed: int, n: int = 300) -> dict[str, np.ndarray]:
    rng = np.random.default_rng(seed)
    candidates = rng.integers(1, 30, size=n)
    optimistic = np.minimum(rng.geometric(0.2, size=n), candidates)
    pessimistic = np.minimum(optimistic + rng.binomial(1, 0.3, size=n) * 2, candidates)
    weights = rng.exponential(size=n) * 10.0 ** rng.integers(-6, 6, size=n)
    weights[rng.random(n) < 0.1] = 0.0
    return {
        "optimistic": optimistic,
        "pessimistic": pessimistic,
        "num_candidates": candidates,
        "groups": rng.integers(0, 5, size=n),
        "weights": weights,
    }


def shard_and_merge(
    d: dict[str, np.ndarray], seed: int, metrics: list[str] = METRICS, **kwargs: object
) -> RankAccumulator:
    """Random shards (some empty), each in random batches, merged in a random tree."""
    rng = np.random.default_rng(seed)
    n = d["weights"].size
    order = rng.permutation(n)
    cuts = np.sort(rng.integers(0, n + 1, size=int(rng.integers(1, 8))))
    accumulators = []
    for shard in np.split(order, cuts):
        accumulator = RankAccumulator(metrics, **kwargs)  # type: ignore[arg-type]
        for batch in np.array_split(shard, int(rng.integers(1, 4))):
            accumulator.update(
                {"optimistic": d["optimistic"][batch], "pessimistic": d["pessimistic"][batch]},
                d["num_candidates"][batch],
                groups=d["groups"][batch],
                weights=d["weights"][batch],
            )
        accumulators.append(accumulator)
    while len(accumulators) > 1:
        rng.shuffle(accumulators)  # type: ignore[arg-type]
        a, b = accumulators.pop(), accumulators.pop()
        accumulators.append(a + b)
    return accumulators[0]


@pytest.mark.parametrize("seed", range(4))
def test_any_sharding_and_merge_order_gives_the_same_bits(seed: int) -> None:
    d = data(seed)
    results, states = set(), set()
    for trial in range(4):
        merged = shard_and_merge(d, 100 * seed + trial, rank_types=NO_TIES)
        states.add(json.dumps(merged.state_dict()))
        results.add(merged.compute().to_json())
    assert len(states) == 1
    assert len(results) == 1


@pytest.mark.parametrize("kind", ["real", "integer", "dyadic"])
def test_weighted_results_match_evaluate_bit_for_bit(kind: str) -> None:
    # both weigh each distinct rank by the correctly rounded sum of its tasks' weights
    d = data(7)
    rng = np.random.default_rng(0)
    if kind == "integer":
        d["weights"] = rng.integers(0, 7, size=d["weights"].size).astype(float)
    elif kind == "dyadic":
        d["weights"] = rng.integers(0, 7, size=d["weights"].size) / 4
    ranks = Ranks(d["optimistic"], d["pessimistic"], d["num_candidates"])
    merged = shard_and_merge(d, 3, rank_types=NO_TIES)
    expected = evaluate(
        ranks, metrics=METRICS, rank_types=NO_TIES, weights=d["weights"], groups=d["groups"]
    )
    got = merged.compute()
    assert got.to_json() == expected.to_json()
    assert got.to_dict(statistics=True) == expected.to_dict(statistics=True)
    for label, group in expected.by_group.items():
        assert got.by_group[label].to_dict(statistics=True) == group.to_dict(statistics=True)


@pytest.mark.parametrize("seed", range(3))
def test_every_rank_type_with_nonlinear_metrics_matches_evaluate_bit_for_bit(seed: int) -> None:
    """GMR and the variance over ties need each tied task's weight: the accumulator keeps them."""
    d = data(seed + 40)
    merged = shard_and_merge(d, seed)  # every rank type, 'expected' included
    ranks = Ranks(d["optimistic"], d["pessimistic"], d["num_candidates"])
    expected = evaluate(ranks, metrics=METRICS, weights=d["weights"], groups=d["groups"])
    assert "expected" in expected.rank_types
    assert merged.compute().to_json() == expected.to_json()
    state = json.loads(json.dumps(merged.state_dict()))
    assert "tie_pairs" in state["sides"]["both"]
    assert RankAccumulator.from_state_dict(state).compute().to_json() == expected.to_json()
    del state["sides"]["both"]["tie_pairs"]
    with pytest.raises(ValueError, match="tie_pairs"):
        RankAccumulator.from_state_dict(state)


@pytest.mark.parametrize("seed", range(3))
def test_weighted_expected_rank_type_matches_evaluate_bit_for_bit(seed: int) -> None:
    """The expectation over ties of the metrics linear in the weights, from the sums too."""
    d = data(seed)
    linear = ["mrr", "hits@1", "hits@10", "mr", "amri", "zmrr"]
    ranks = Ranks(d["optimistic"], d["pessimistic"], d["num_candidates"])
    expected = evaluate(ranks, metrics=linear, weights=d["weights"], groups=d["groups"])
    assert "expected" in expected.rank_types
    assert shard_and_merge(d, seed, metrics=linear).compute().to_json() == expected.to_json()


def test_evaluate_keeps_each_weight_for_nonlinear_tie_expectations() -> None:
    """GMR and the variance over ties need every task's weight: evaluate keeps them."""
    from rankstats import metric_resolver
    from rankstats.evaluation import expected_over_ties

    d = data(11, n=60)
    ranks = Ranks(d["optimistic"], d["pessimistic"], d["num_candidates"])
    results = evaluate(ranks, metrics=["gmr", "variance"], weights=d["weights"])
    for key in ["gmr", "variance"]:
        wanted = expected_over_ties(metric_resolver.make(key), ranks, weights=d["weights"])
        assert results.get(f"expected.{key}") == pytest.approx(wanted, rel=1e-14)


def test_weight_sums_are_correctly_rounded() -> None:
    rng = np.random.default_rng(1)
    n = 3000
    keys = rng.integers(0, 9, size=n)
    weights = rng.exponential(size=n) * 2.0 ** rng.integers(-1074, 960, size=n)
    count = rng.integers(1, 2**30, size=n)
    keys[:4], count[:4] = [9, 10, 11, 12], 1  # extremes, each alone in its cell
    weights[:4] = [5e-324, 0.0, 1.7e308, 2.2250738585072014e-308]
    table = weight_limbs({"key": keys}, weights, count)
    rows, sums = rounded_sums(table, ["key"])
    for key, value in zip(rows["key"].tolist(), sums.tolist(), strict=True):
        exact = sum(
            (
                Fraction(w) * int(c)
                for w, c in zip(weights[keys == key], count[keys == key], strict=False)
            ),
            Fraction(0),
        )
        assert value == float(exact)  # float(Fraction) rounds correctly, ties to even
    # splitting and regrouping the additions changes nothing, not even the digits
    parts = np.array_split(rng.permutation(n), 6)
    tables = [weight_limbs({"key": keys[p]}, weights[p], count[p]) for p in parts]
    regrouped = add_limbs([add_limbs(tables[:2]), add_limbs(tables[2:5]), tables[5]])
    assert regrouped.count.tolist() == table.count.tolist()
    assert regrouped.columns["limb"].tolist() == table.columns["limb"].tolist()
    assert (regrouped.count > 0).all()
    assert (regrouped.count < 2**32).all()


def test_fsum_agrees_and_align_fills_zeros() -> None:
    values = np.array([0.1] * 10 + [1e100, 1.0, -0.0 + 0.0, 1e-100])
    table = weight_limbs({"k": np.zeros(values.size, dtype=np.int64)}, values, np.ones(14, int))
    rows, sums = rounded_sums(table, ["k"])
    assert sums.tolist() == [math.fsum(values)]
    spread = align(rows, sums, {"k": np.array([-1, 0, 3])})
    assert spread.tolist() == [0.0, math.fsum(values), 0.0]


@pytest.mark.parametrize("seed", range(6))
def test_vectorised_rounding_of_short_sums_is_exact(seed: int) -> None:
    """Rows of one to three limbs are rounded vectorised: every row against exact fractions."""
    rng = np.random.default_rng(seed)
    n = 4000
    keys = rng.integers(0, 1500, size=n)
    scale = [rng.integers(-30, 30, size=n), rng.integers(-1074, 1000, size=n)][seed % 2]
    weights = np.ldexp(rng.integers(1, 2**53, size=n).astype(np.float64), scale - 52)
    if seed >= 4:  # sums near ties: few bits, some exactly half an ulp apart
        weights = np.ldexp(rng.integers(1, 8, size=n).astype(np.float64), rng.integers(-5, 60, n))
    count = rng.integers(1, 4, size=n)
    table = weight_limbs({"key": keys}, weights, count)
    rows, sums = rounded_sums(table, ["key"])
    exact: dict[int, Fraction] = {}
    for key, w, c in zip(keys.tolist(), weights.tolist(), count.tolist(), strict=True):
        exact[key] = exact.get(key, Fraction(0)) + Fraction(w) * c
    for key, value in zip(rows["key"].tolist(), sums.tolist(), strict=True):
        assert value == float(exact[key]), key


def _row_weights(seed: int, n: int, rows: int) -> tuple[np.ndarray, np.ndarray]:
    """Row ids and weights of one of six kinds: narrow, spread, near ties, zeros, extremes."""
    rng = np.random.default_rng(seed)
    index = rng.integers(0, rows, size=n)
    kind = seed % 6
    if kind == 0:  # one binade or two, as most weights are
        weights = rng.uniform(0.5, 2.0, size=n)
    elif kind == 1:  # spread over 2**-80 .. 2**80: several limbs, the dense grid still
        mantissas = rng.integers(1, 2**53, size=n).astype(np.float64)
        weights = np.ldexp(mantissas, rng.integers(-132, 28, n))
    elif kind == 2:  # few bits each: sums at or next to a tie between two floats
        weights = np.ldexp(rng.integers(1, 8, size=n).astype(np.float64), rng.integers(-5, 60, n))
    elif kind == 3:  # zeros of either sign beside positive weights, and rows of zeros only
        zeros = np.where(rng.random(n) < 0.5, -0.0, 0.0)
        weights = np.where(rng.random(n) < 0.5, zeros, rng.exponential(size=n))
    elif kind == 4:  # subnormal to huge: too wide for the dense grid (the sorted limbs)
        weights = rng.choice([5e-324, 2.2250738585072014e-308, 1e-300, 1.0, 1e300, 3.0], size=n)
    else:  # one row holding most weights, beside rows of one
        index = np.where(rng.random(n) < 0.9, 0, index)
        weights = rng.exponential(size=n) * 2.0 ** rng.integers(-10, 10, n)
    return index, weights


@pytest.mark.parametrize("seed", range(16))
def test_row_sums_are_correctly_rounded(seed: int) -> None:
    """Each row's sum from the dense grid is the float nearest the exact sum (ties to even).

    With 5,000 rows for 3,000 weights most rows hold one weight, taken as it is.
    """
    rows = [1, 7, 300, 5000][seed % 4]
    index, weights = _row_weights(seed, 3000, rows)
    sums = row_sums(index, rows + 2, weights)  # two rows without weights
    assert sums.shape == (rows + 2,)
    exact = [Fraction(0)] * (rows + 2)
    for row, weight in zip(index.tolist(), weights.tolist(), strict=True):
        exact[row] += Fraction(weight)
    for row in range(rows + 2):
        assert sums[row] == float(exact[row]), (row, sums[row], float(exact[row]))
        assert math.copysign(1.0, sums[row]) == 1.0  # no negative zero
    # the same numbers as the sorted limbs of the accumulator
    table = weight_limbs({"row": index}, weights, np.ones(index.size, dtype=np.int64))
    found, limb_sums = rounded_sums(table, ["row"])
    assert sums[found["row"]].tolist() == limb_sums.tolist()


def test_row_sums_take_the_dense_grid_unless_the_weights_spread_too_far(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    calls: list[int] = []
    original = weight_sums.weight_limbs

    def counted(*args: object, **kwargs: object) -> object:
        calls.append(1)
        return original(*args, **kwargs)  # type: ignore[arg-type]

    monkeypatch.setattr(weight_sums, "weight_limbs", counted)
    index, weights = _row_weights(1, 500, 20)  # 2**-132 .. 2**80
    row_sums(index, 20, weights)
    assert not calls
    index, weights = _row_weights(4, 500, 20)  # 5e-324 .. 1e300
    row_sums(index, 20, weights)
    assert calls


def test_overflowing_row_sums_are_refused() -> None:
    with pytest.raises(ValueError, match="largest float64"):
        row_sums(np.zeros(2, dtype=np.int64), 1, np.array([1.7e308, 1.7e308]))


def test_weights_beyond_the_normal_squares_are_refused_at_update() -> None:
    """Each weight kept (the geometric mean's): weights whose squares leave float64's normal
    range are refused at the update, as with weight sums (1.7e308 had given a GMR of 1.0 with
    warnings, an HMR a ZeroDivisionError, subnormal ones values off where evaluate rescales);
    and weights spread beyond 1e-120, within a batch or between batches, as evaluate's."""
    accumulator = RankAccumulator(["mrr", "gmr"])
    with pytest.raises(ValueError, match=r"weights must be at most 2\*\*500 for an accumulator"):
        accumulator.update([1.0, 1.0], 5, weights=[1.7e308, 1.7e308])
    with pytest.raises(ValueError, match=r"positive weights must be at least 2\*\*-500"):
        accumulator.update([1.0, 2.0, 3.0], 5, weights=[5e-324, 5e-324, 1e-323])
    with pytest.raises(ValueError, match=r"at least 1e-120 times the largest weight, got 1e-130"):
        accumulator.update([1.0, 2.0], 5, weights=[1.0, 1e-130])
    assert accumulator.num_ranks == 0
    accumulator.update([1.0, 2.0], 5, weights=[1.0, 1.0])
    accumulator.update([1.0, 2.0], 5, weights=[1e-125, 1e-125])
    with pytest.raises(ValueError, match=r"weights \(of every batch\) must be 0 or at least"):
        accumulator.compute()


def test_sums_beyond_float64_are_a_value_error() -> None:
    """A cell's exact weight sum beyond float64's range (a hand-made state: an update's weights
    cannot reach it) is a ValueError, from compute and from_state_dict alike (Python's
    integer division had raised OverflowError)."""
    state = weighted_state()
    table = state["weight_sums"]["both"]["ranks.realistic"]
    table["limb"][0] = 70  # 2**(32 * 70 - 1126): far beyond 1.8e308
    with pytest.raises(ValueError, match="largest float64"):
        RankAccumulator.from_state_dict(state)


def test_weights_whose_squares_overflow_are_refused_with_weight_sums() -> None:
    accumulator = RankAccumulator(["mrr"])
    with pytest.raises(ValueError, match=r"weights must be at most 2\*\*500"):
        accumulator.update([1.0, 1.0], 5, weights=[1.0, 2.0**501])
    assert accumulator.num_ranks == 0


def test_zero_weights_and_empty_batches() -> None:
    accumulator = RankAccumulator(["mrr", "amri"])
    accumulator.update([], weights=[])  # an empty batch: nothing happens
    accumulator.update(np.zeros(0), np.zeros(0, dtype=int), weights=np.zeros(0))
    assert accumulator.num_ranks == 0
    assert accumulator.state_dict()["weighted"] is None
    accumulator.update([1.0, 2.0], 5, weights=[0.0, 0.0])  # a shard of zero weights is fine
    with pytest.raises(ValueError, match="every weight collected so far is zero"):
        accumulator.compute()
    accumulator.update([3.0], 5, weights=[2.0])
    expected = evaluate([1.0, 2.0, 3.0], [5, 5, 5], metrics=["mrr", "amri"], weights=[0, 0, 2])
    assert accumulator.compute().to_json() == expected.to_json()
    assert accumulator.num_ranks == 3


def test_counts_stand_for_repetitions() -> None:
    d = data(2, n=60)
    rng = np.random.default_rng(3)
    counts = rng.integers(0, 4, size=60)
    counted, repeated = RankAccumulator(), RankAccumulator()
    counted.update(
        Ranks(d["optimistic"], d["pessimistic"], d["num_candidates"]),
        groups=d["groups"],
        counts=counts,
    )
    repeated.update(
        Ranks(
            np.repeat(d["optimistic"], counts),
            np.repeat(d["pessimistic"], counts),
            np.repeat(d["num_candidates"], counts),
        ),
        groups=np.repeat(d["groups"], counts),
    )
    assert counted.state_dict() == repeated.state_dict()
    # with weights too: a count of k is k tasks of that weight
    a, b = RankAccumulator(["mrr", "amri"]), RankAccumulator(["mrr", "amri"])
    realistic = (d["optimistic"] + d["pessimistic"]) / 2
    a.update(realistic, d["num_candidates"], weights=d["weights"], counts=counts)
    b.update(
        np.repeat(realistic, counts),
        np.repeat(d["num_candidates"], counts),
        weights=np.repeat(d["weights"], counts),
    )
    assert a.state_dict() == b.state_dict()
    before = a.state_dict()
    a.update(realistic, d["num_candidates"], weights=d["weights"], counts=np.zeros(60, int))
    assert a.state_dict() == before  # all counts zero: nothing added
    sides = RankAccumulator(["mrr"])
    sides.update({"head": [1, 2], "tail": [3]}, 5, counts={"head": [2, 1], "tail": [4]})
    assert sides.num_ranks == 7


def test_weighted_state_round_trips_through_json_and_pickle() -> None:
    import pickle

    d = data(4)
    merged = shard_and_merge(d, 1, rank_types=NO_TIES)
    restored = RankAccumulator.from_state_dict(json.loads(json.dumps(merged.state_dict())))
    assert restored.compute().to_json() == merged.compute().to_json()
    assert pickle.loads(pickle.dumps(merged)).compute().to_json() == merged.compute().to_json()
    more = copy.deepcopy(restored)
    more.merge(merged)
    twice = shard_and_merge(
        {k: np.concatenate([v, v]) for k, v in d.items()}, 2, rank_types=NO_TIES
    )
    assert more.state_dict() == twice.state_dict()


def weighted_state(metrics: tuple[str, ...] = ("mrr", "gmr")) -> dict:  # type: ignore[type-arg]
    accumulator = RankAccumulator(list(metrics))
    accumulator.update([1.0, 2.5, 2.5], [5, 5, 6], weights=[0.1, 0.2, 1e-110])
    return json.loads(json.dumps(accumulator.state_dict()))


def test_malformed_weight_sums_are_refused() -> None:
    good = weighted_state()
    cases = []
    state = copy.deepcopy(good)
    state["weight_sums"]["both"]["ranks.realistic"]["count"][0] = 2**32
    cases.append((state, "digits|between"))
    state = copy.deepcopy(good)
    state["weight_sums"]["both"]["ranks.realistic"]["rank"][0] = 4.0
    cases.append((state, "rows that"))
    state = copy.deepcopy(good)
    del state["weight_sums"]["both"]["ranks.realistic"]["limb"]
    cases.append((state, "must have the columns"))
    state = copy.deepcopy(good)
    state["weight_sums"] = {}
    cases.append((state, "one entry per side"))
    state = copy.deepcopy(good)
    state["sides"]["both"]["candidates"]["weight"][0] = -1.0
    cases.append((state, "finite numbers"))
    state = copy.deepcopy(good)
    state["weighted"] = "yes"
    cases.append((state, "weighted"))
    state = copy.deepcopy(good)
    state["version"] = 1
    cases.append((state, "version 1 has no"))
    sums = weighted_state(("mrr",))
    state = copy.deepcopy(sums)
    del state["weight_sums"]["both"]["candidates.squared"]
    cases.append((state, "must have the tables"))
    state = copy.deepcopy(sums)
    state["weight_sums"]["both"]["candidates"]["num_candidates"][0] = 7
    cases.append((state, "rows that"))
    state = copy.deepcopy(sums)
    state["sides"]["both"]["candidates"]["weight"] = [1.0, 1.0]
    cases.append((state, "must have the columns"))
    for state, match in cases:
        with pytest.raises((ValueError, TypeError), match=match):
            RankAccumulator.from_state_dict(state)
    RankAccumulator.from_state_dict(good)
    RankAccumulator.from_state_dict(sums)


def test_weight_sums_keep_the_state_bounded() -> None:
    """Metrics whose null models need only weight sums: one candidate cell per count."""
    rng = np.random.default_rng(5)
    sizes = []
    for n in (5_000, 50_000):
        candidates = rng.integers(10, 60, size=n)
        accumulator = RankAccumulator(["mrr", "hits@10", "amri", "z_mrr"])
        accumulator.update(
            np.minimum(rng.geometric(0.1, size=n), candidates),
            candidates,
            weights=rng.exponential(size=n),  # every weight distinct
        )
        state = accumulator.state_dict()
        sizes.append(len(state["sides"]["both"]["candidates"]["count"]))
        assert "weight" not in state["sides"]["both"]["candidates"]
    assert sizes == [50, 50]
    # with a metric that needs each weight, the candidate table keeps them
    accumulator = RankAccumulator(["mrr", "gmr"])
    accumulator.update([1.0, 2.0, 3.0], [5, 5, 5], weights=[0.1, 0.2, 0.3])
    assert len(accumulator.state_dict()["sides"]["both"]["candidates"]["count"]) == 3


@pytest.mark.parametrize("average", ["micro", "macro"])
def test_weight_sums_match_evaluate_bit_for_bit(average: str) -> None:
    d = data(21, n=2000)
    linear = ["mrr", "hits@1", "hits@10", "mr", "amri", "zmrr", "adjusted_hits_at_10"]
    merged = shard_and_merge(d, 4, rank_types=NO_TIES, metrics=linear, average=average)
    ranks = Ranks(d["optimistic"], d["pessimistic"], d["num_candidates"])
    expected = evaluate(
        ranks,
        metrics=linear,
        rank_types=NO_TIES,
        weights=d["weights"],
        groups=d["groups"],
        average=average,
    )
    assert merged.compute().to_json() == expected.to_json()
    # the same null moments as from each weight (up to the rounding of the sums)
    each = evaluate(
        ranks,
        metrics=[*linear, "gmr"],
        rank_types=NO_TIES,
        weights=d["weights"],
        groups=d["groups"],
        average=average,
    ).to_dict(statistics=True)
    for key, value in expected.to_dict(statistics=True).items():
        assert each[key] == pytest.approx(value, rel=1e-13, abs=1e-300), key


def test_version_2_weighted_states_load_as_weight_sums() -> None:
    """A state saved before weight sums (each weight in the candidate table) is converted."""
    d = data(3, n=200)
    old = RankAccumulator(["mrr", "gmr"], rank_types=NO_TIES)
    new = RankAccumulator(["mrr"], rank_types=NO_TIES)
    for accumulator in (old, new):
        accumulator.update(
            {"optimistic": d["optimistic"], "pessimistic": d["pessimistic"]},
            d["num_candidates"],
            weights=d["weights"],
        )
    state = json.loads(json.dumps(old.state_dict()))
    state["version"] = 2
    state["metrics"] = ["inverse_harmonic_mean_rank"]
    for tables in state["sides"].values():
        del tables["tie_pairs"]  # version 2 had none
    loaded = RankAccumulator.from_state_dict(state)
    assert loaded.state_dict() == new.state_dict()
    assert loaded.compute().to_json() == new.compute().to_json()


@pytest.mark.parametrize(
    ("kwargs", "error", "match"),
    [
        ({"weights": [1.0, -1.0]}, ValueError, "finite and non-negative"),
        ({"weights": [1.0, np.nan]}, ValueError, "finite and non-negative"),
        ({"weights": [1.0]}, ValueError, "one entry per rank"),
        ({"weights": ["a", "b"]}, TypeError, "numbers"),
        ({"counts": [1, -1]}, ValueError, "non-negative integers"),
        ({"counts": [1, 0.5]}, ValueError, "non-negative integers"),
        ({"counts": [True, False]}, TypeError, "not booleans"),
        ({"counts": [1, 2, 3]}, ValueError, "one entry per rank"),
    ],
)
def test_bad_weights_and_counts_change_nothing(
    kwargs: dict[str, object], error: type, match: str
) -> None:
    accumulator = RankAccumulator(["mrr"])
    accumulator.update([1.0], 5, weights=[1.0] if "weights" in kwargs else None)
    before = accumulator.state_dict()
    with pytest.raises(error, match=match):
        accumulator.update([1.0, 2.0], 5, **kwargs)  # type: ignore[arg-type]
    assert accumulator.state_dict() == before


def test_weighted_and_unweighted_do_not_mix() -> None:
    weighted, plain = RankAccumulator(["mrr"]), RankAccumulator(["mrr"])
    weighted.update([1.0], 5, weights=[2.0])
    plain.update([1.0], 5)
    with pytest.raises(ValueError, match="weights must be given with every update"):
        weighted.update([1.0], 5)
    with pytest.raises(ValueError, match="weights must be given with every update"):
        plain.update([1.0], 5, weights=[1.0])
    with pytest.raises(ValueError, match="with weights and one without"):
        weighted.merge(plain)
    with pytest.raises(ValueError, match="with weights and one without"):
        plain.merge(weighted)


def test_tie_expectations_that_need_every_weight_are_kept() -> None:
    ranks = Ranks([1, 2, 1], [3, 2, 4], [5, 5, 6])
    for metrics in (["gmr"], ["variance"], ["agmri"], ["mrr", "hits@1", "mr", "amri"]):
        first, second = RankAccumulator(metrics), RankAccumulator(metrics)
        first.update(Ranks([1, 2], [3, 2], [5, 5]), weights=[1.0, 2.0])
        second.update(Ranks([1], [4], [6]), weights=[0.5])
        expected = evaluate(ranks, metrics=metrics, weights=[1.0, 2.0, 0.5])
        assert "expected" in expected.rank_types
        assert (second + first).compute().to_json() == expected.to_json()


def test_version_2_states_refuse_tie_expectations_that_need_every_weight() -> None:
    accumulator = RankAccumulator(["gmr"])
    accumulator.update(Ranks([1, 2], [3, 2], [5, 5]), weights=[1.0, 2.0])
    state = json.loads(json.dumps(accumulator.state_dict()))
    state["version"] = 2
    for tables in state["sides"].values():
        del tables["tie_pairs"]
    with pytest.raises(ValueError, match="depends on the weight of every tied task"):
        RankAccumulator.from_state_dict(state)
    state["rank_types"] = NO_TIES
    assert RankAccumulator.from_state_dict(state).compute().rank_types == tuple(NO_TIES)


def test_the_rank_tables_stay_bounded_as_weighted_data_grow() -> None:
    sizes = []
    for n in (5_000, 50_000):
        rng = np.random.default_rng(n)
        accumulator = RankAccumulator(["mrr"])
        accumulator.update(
            np.minimum(rng.geometric(0.05, size=n), 100).astype(float),
            100,
            weights=rng.exponential(size=n),
        )
        state = accumulator.state_dict()["sides"]["both"]["ranks.realistic"]
        sums = accumulator.state_dict()["weight_sums"]["both"]["ranks.realistic"]
        sizes.append((len(state["count"]), len(sums["count"])))
    # at most 100 distinct ranks, at most ~3 limbs each, whatever the number of weights
    assert sizes[1][0] <= 100
    assert sizes[1][1] <= 4 * 100


def test_a_missing_engine_says_how_to_install_it() -> None:
    from rankstats.distributed import require

    with pytest.raises(ImportError, match=r"pip install 'rankstats\[engine\]'"):
        require("no_such_engine_module", "engine")


def test_adding_limbs_keeps_rows_apart_up_to_the_highest_limb() -> None:
    """Rows and limbs share one integer code: the highest limb a state may hold, with carries,
    must not run into the next row's limbs."""
    from rankstats.evaluation.tables import Table
    from rankstats.evaluation.weight_sums import LIMB, MAX_LIMB

    top = Table({"key": np.array([1]), LIMB: np.array([MAX_LIMB])}, np.array([2**32 - 1]))
    low = Table({"key": np.array([2]), LIMB: np.array([0])}, np.array([5]))
    total = add_limbs([top, top, low])
    assert total.columns["key"].tolist() == [1, 1, 2]
    assert total.columns[LIMB].tolist() == [MAX_LIMB, MAX_LIMB + 1, 0]
    assert total.count.tolist() == [2**32 - 2, 1, 5]


def test_version_2_states_of_tiny_weights_are_refused_as_updates_are() -> None:
    """Reading a version-2 state squares its weights: the same bounds as an update."""
    accumulator = RankAccumulator(["mrr", "gmr"], rank_types=NO_TIES)
    ranks = {"optimistic": [1, 2, 3], "pessimistic": [1, 2, 3]}
    accumulator.update(ranks, [5, 5, 6], weights=[0.1, 0.2, 0.3])
    state = json.loads(json.dumps(accumulator.state_dict()))
    state["version"] = 2
    state["metrics"] = ["inverse_harmonic_mean_rank"]
    for tables in state["sides"].values():
        tables.pop("tie_pairs", None)
        tables["candidates"]["weight"] = [1e-165] * len(tables["candidates"]["count"])
    with pytest.raises(ValueError, match=r"positive weights must be at least 2\*\*-500"):
        RankAccumulator.from_state_dict(state)
