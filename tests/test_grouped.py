"""Groups computed together (vectorised columns) equal each group evaluated alone."""

from __future__ import annotations

import math

import numpy as np
import pytest

from rankstats import Ranks, evaluate
from rankstats.evaluation.grouped import LazyGroups

METRICS = [
    "mr",
    "mrr",
    "hmr",
    "iamr",
    "gmr",
    "igmr",
    "hits@1",
    "hits@3",
    "hits@10",
    "median",
    "variance",
    "std",
    "mad",
    "amr",
    "amri",
    "amrr",
    "agmri",
    "zmr",
    "zmrr",
    "zgmr",
    "adjusted_hits_at_10",
    "z_hits_at_10",
]


def _side(rng: np.random.Generator, n: int) -> Ranks:
    candidates = rng.integers(1, 30, size=n)
    optimistic = np.minimum(rng.geometric(0.2, size=n), candidates)
    ties = rng.binomial(1, 0.3, size=n) * rng.integers(1, 4, size=n)
    return Ranks(optimistic, np.minimum(optimistic + ties, candidates), candidates)


def _subset(ranks: Ranks, rows: np.ndarray) -> Ranks:
    assert ranks.num_candidates is not None
    return Ranks(ranks.optimistic[rows], ranks.pessimistic[rows], ranks.num_candidates[rows])


def _same_row(grouped: object, alone: object) -> None:
    for name in ("value", "expected_value", "variance"):
        a, b = getattr(grouped, name), getattr(alone, name)
        if b is None:
            assert a is None, name
        elif math.isnan(b):
            assert math.isnan(a), name
        else:
            assert a == pytest.approx(b, rel=1e-11, abs=1e-13), name
    assert grouped.method == alone.method  # type: ignore[attr-defined]
    assert (grouped.note is None) == (alone.note is None)  # type: ignore[attr-defined]


@pytest.mark.parametrize("weighted", [False, True])
def test_every_group_equals_evaluating_it_alone(weighted: bool) -> None:
    rng = np.random.default_rng(11)
    head, tail = _side(rng, 120), _side(rng, 90)
    head_groups = rng.integers(0, 7, size=120)
    tail_groups = rng.integers(2, 9, size=90)
    # a group of single-candidate tasks: adjusted metrics undefined there
    single = head_groups == 1
    assert head.num_candidates is not None
    head = Ranks(
        np.where(single, 1, head.optimistic),
        np.where(single, 1, head.pessimistic),
        np.where(single, 1, head.num_candidates),
    )
    weights = None
    if weighted:
        weights = {"head": rng.integers(1, 4, size=120) * 0.5, "tail": rng.random(90) + 0.1}
    metrics = [m for m in METRICS if not (weighted and m == "count")]
    results = evaluate(
        {"head": head, "tail": tail},
        metrics=metrics,
        groups={"head": head_groups, "tail": tail_groups},
        weights=weights,
    )
    assert isinstance(results.by_group, LazyGroups)
    assert list(results.by_group) == list(range(9))
    for label, group in results.by_group.items():
        sides = {}
        side_weights = {}
        for side, ranks, ids in (("head", head, head_groups), ("tail", tail, tail_groups)):
            rows = ids == label
            if rows.any():
                sides[side] = _subset(ranks, rows)
                if weights is not None:
                    side_weights[side] = weights[side][rows]
        alone = evaluate(sides, metrics=metrics, weights=side_weights or None)
        # a group on one side only still has the side "both", equal to that side
        assert {k for k in group if not k.startswith("both.") or len(sides) > 1} == set(alone)
        for key in group:
            side, rest = key.split(".", 1)
            reference = key if key in alone else f"{next(iter(sides))}.{rest}"
            _same_row(group.row(key), alone.row(reference))


def test_macro_rows_average_the_groups() -> None:
    rng = np.random.default_rng(3)
    ranks = _side(rng, 200)
    groups = rng.integers(0, 12, size=200)
    results = evaluate(ranks, metrics=METRICS, groups=groups, average="macro")
    for key in results:
        rows = [g.row(key) for g in results.by_group.values()]
        defined = [r for r in rows if not math.isnan(r.value)]
        row = results.row(key)
        assert row.value == pytest.approx(sum(r.value for r in defined) / len(defined), rel=1e-12)
        if all(r.expected_value is not None for r in defined):
            mean = sum(r.expected_value for r in defined) / len(defined)  # type: ignore[misc]
            assert row.expected_value == pytest.approx(mean, rel=1e-12, abs=1e-14)
            variance = sum(r.variance for r in defined) / len(defined) ** 2  # type: ignore[misc]
            assert row.variance == pytest.approx(variance, rel=1e-12)
        else:
            assert row.expected_value is None
            assert row.note is not None


def test_groups_without_candidates() -> None:
    results = evaluate([1, 2, 3, 4], metrics=["mrr", "median"], groups=[0, 0, 1, 1])
    row = results.by_group[1].row("mrr")
    assert row.value == pytest.approx((1 / 3 + 1 / 4) / 2)
    assert row.method is None
    assert row.note is not None
    assert "num_candidates" in row.note


def test_lazy_groups_mapping() -> None:
    results = evaluate([1, 2, 3], [3, 3, 3], metrics=["mr"], groups=["b", "a", "b"])
    groups = results.by_group
    assert len(groups) == 2
    assert "a" in groups
    assert "c" not in groups
    assert [] not in groups  # unhashable: not a label
    assert groups["a"] is groups["a"]
    with pytest.raises(KeyError):
        groups["c"]
