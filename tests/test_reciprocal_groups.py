"""The reciprocal-of-mean metrics' null moments for many groups at once.

:func:`~rankstats.null.reciprocal_groups.grouped_inverse_arithmetic_moments` and
:func:`~rankstats.null.reciprocal_groups.grouped_harmonic_moments` run the single group's
quadrature for every group together, each group's nodes shifted onto a grid shared by all,
where the transforms are tabulated once per table count. Checked, for both metrics, against
exact enumeration of all rank tuples (small groups, rational arithmetic), against the single
group's function on groups of every shape (counts from 1 to 10^12, one to thousands of tasks,
tasks with one candidate, a dataset's filtered counts folded in log C), with the step's
tolerance and the first range shrunk in both modules alike through every halving and both ways
of growing the range, and node by node against the single group's integrands at the shifted
nodes.
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Callable
from fractions import Fraction
from typing import NamedTuple

import numpy as np
import pytest

import rankstats.null.reciprocal as single_module
import rankstats.null.reciprocal_groups as groups_module
from rankstats.null.lattice import FLOOR
from rankstats.null.reciprocal import (
    _ArithmeticTask,
    _HarmonicTask,
    _integrands,
    _Laplace,
    harmonic_mean_moments,
    inverse_arithmetic_mean_moments,
)
from rankstats.null.reciprocal_groups import (
    grouped_harmonic_moments,
    grouped_inverse_arithmetic_moments,
)
from rankstats.null.tasks import Tasks
from rankstats.weighting import pairwise_dot


def _rows(groups: list[np.ndarray]) -> tuple[np.ndarray, ...]:
    """The arguments for the groups' tasks: their distinct counts above 1, sizes, ones."""
    counts, multiplicity, owner, total, certain = [], [], [], [], []
    for g, tasks in enumerate(groups):
        values, times = np.unique(tasks, return_counts=True)
        total.append(float(tasks.size))
        certain.append(float(np.sum(tasks == 1)))
        for value, k in zip(values.tolist(), times.tolist(), strict=True):
            if value > 1:
                counts.append(float(value))
                multiplicity.append(float(k))
                owner.append(g)
    return (
        np.array(counts),
        np.array(multiplicity),
        np.array(owner, dtype=np.int64),
        np.array(total),
        np.array(certain),
    )


class _Kind(NamedTuple):
    """A metric's grouped and single-group functions, and its statistic of a rank tuple."""

    grouped: Callable[..., tuple[np.ndarray, np.ndarray]]
    single: Callable[[np.ndarray], tuple[float, float]]
    #: the metric of a rank tuple, exactly
    of_ranks: Callable[[tuple[int, ...]], Fraction]
    #: the per-task transform of the table counts, the floor of its tables, E[Y] per count
    task: Callable[[np.ndarray], tuple[Callable[..., tuple[np.ndarray, np.ndarray]], float]]
    mean: Callable[[np.ndarray], np.ndarray]


def _arithmetic_task(counts: np.ndarray) -> tuple[Callable[..., tuple[np.ndarray, ...]], float]:
    return _ArithmeticTask(counts.astype(np.float64)), -math.inf


def _harmonic_task(counts: np.ndarray) -> tuple[Callable[..., tuple[np.ndarray, ...]], float]:
    return _HarmonicTask(counts).tabulate, FLOOR


KINDS = {
    "iamr": _Kind(
        grouped_inverse_arithmetic_moments,
        inverse_arithmetic_mean_moments,
        lambda ranks: Fraction(len(ranks), sum(ranks)),
        _arithmetic_task,
        lambda counts: 0.5 * (counts + 1.0),
    ),
    "hmr": _Kind(
        grouped_harmonic_moments,
        harmonic_mean_moments,
        lambda ranks: Fraction(len(ranks)) / sum(Fraction(1, r) for r in ranks),
        _harmonic_task,
        lambda counts: _HarmonicTask(counts).distinct_mean,
    ),
}


def _enumerated(kind: _Kind, tasks: np.ndarray) -> tuple[float, float]:
    """E and V of the metric over every rank tuple, exactly."""
    values = [
        kind.of_ranks(ranks) for ranks in itertools.product(*(range(1, int(c) + 1) for c in tasks))
    ]
    mean = sum(values) / len(values)
    return float(mean), float(sum((x - mean) ** 2 for x in values) / len(values))


@pytest.mark.parametrize("name", KINDS)
def test_small_groups_against_enumeration(name: str) -> None:
    kind = KINDS[name]
    rng = np.random.default_rng(0)
    groups = [np.array([1]), np.array([5]), np.array([1, 1, 1]), np.array([2, 1, 6])]
    groups += [rng.integers(1, 8, size=int(rng.integers(1, 5))) for _ in range(14)]
    expected, variance = kind.grouped(*_rows(groups))
    for g, tasks in enumerate(groups):
        mean, var = _enumerated(kind, tasks)
        assert expected[g] == pytest.approx(mean, rel=1e-14), tasks
        assert variance[g] == pytest.approx(var, rel=1e-13, abs=1e-300), tasks


def _shapes(seed: int) -> list[np.ndarray]:
    rng = np.random.default_rng(seed)
    groups = []
    for g in range(60):
        n = int(rng.integers(1, 40))
        top = int(10 ** rng.uniform(0.3, 12))
        tasks = rng.integers(1, top + 1, size=n)
        if g % 5 == 0:
            tasks[: n // 2] = 1
        groups.append(tasks)
    # groups of a dataset's filtered counts: hundreds of distinct counts in all, folded in log C
    groups += [rng.integers(13_541, 14_542, size=10) for _ in range(30)]
    groups += [
        np.array([2, 10**12]),  # a heavy right tail: the range grows
        np.full(3000, 9),
        np.concatenate((np.full(2000, 2), rng.integers(1, 10**9, size=50))),
        np.array([1, 1, 1, 10**12]),
        np.array([3] * 50 + [10**9] * 50),
        # many distinct counts in one group: the single group's function
        rng.integers(13_541, 14_542, size=1_500),
        np.concatenate((np.ones(30, dtype=np.int64), rng.integers(2, 10**12, size=400))),
    ]
    return groups


@pytest.mark.parametrize("name", KINDS)
@pytest.mark.parametrize("seed", range(3))
def test_groups_against_one_group_at_a_time(name: str, seed: int) -> None:
    kind = KINDS[name]
    groups = _shapes(seed)
    expected, variance = kind.grouped(*_rows(groups))
    for g, tasks in enumerate(groups):
        mean, var = kind.single(tasks)
        assert expected[g] == pytest.approx(mean, rel=2e-14), tasks
        assert variance[g] == pytest.approx(var, rel=1e-13, abs=1e-300), tasks


@pytest.mark.parametrize("name", KINDS)
@pytest.mark.parametrize("settled", [1e-8, 0.0])
def test_every_halving_and_both_growths(
    monkeypatch: pytest.MonkeyPatch, name: str, settled: float
) -> None:
    """A tiny first range and a stricter tolerance: the range grows both ways, and the groups
    settle after different numbers of halvings (with a tolerance of 0, all four, down to the
    grid's own step). The moments are the single group's (computed with its own settings) to
    the rule's accuracy."""
    kind = KINDS[name]
    groups = _shapes(7)
    reference = [kind.single(tasks) for tasks in groups]
    monkeypatch.setattr(single_module, "_FIRST_LOW", -2)
    monkeypatch.setattr(single_module, "_FIRST_HIGH", 2)
    monkeypatch.setattr(single_module, "_SETTLED", settled)
    calls: list[tuple[np.ndarray, int]] = []
    original = groups_module._GridRows.integrands

    def counted(self: groups_module._GridRows, v: np.ndarray) -> tuple[np.ndarray, ...]:
        calls.append((v, self.groups))
        return original(self, v)

    monkeypatch.setattr(groups_module._GridRows, "integrands", counted)
    expected, variance = kind.grouped(*_rows(groups))
    assert min(float(v.min()) for v, _ in calls) < -2 * single_module._STEP  # grew left
    sizes = [size for _, size in calls]
    assert min(sizes) < max(sizes)  # later halvings over fewer groups
    # every node is on the grid; with no tolerance the last halving reaches odd grid points
    steps = np.concatenate([v / groups_module.GRID for v, _ in calls])
    np.testing.assert_allclose(steps, np.rint(steps), atol=1e-9)
    assert bool(np.any(np.rint(steps) % 2 == 1)) == (settled == 0.0)
    for g, (mean, var) in enumerate(reference):
        assert expected[g] == pytest.approx(mean, rel=2e-14), groups[g]
        assert variance[g] == pytest.approx(var, rel=1e-12, abs=1e-300), groups[g]


@pytest.mark.parametrize("name", KINDS)
def test_integrands_at_the_shifted_nodes_against_the_single_groups(name: str) -> None:
    """Each group's nodes are shifted onto the shared grid; there its integrands are the
    single group's at the shifted nodes (series or rows' terms, counts folded or not)."""
    kind = KINDS[name]
    groups = [*_shapes(3)[:20], np.array([2, 10**12]), np.array([7, 9, 9, 30])]
    groups.append(np.random.default_rng(5).integers(13_541, 14_542, size=300))
    counts, multiplicity, owner, _, certain = _rows(groups)
    spread = np.unique(owner)
    local = np.searchsorted(spread, owner)
    distinct, inverse = np.unique(counts.astype(np.int64), return_inverse=True)
    inverse = inverse.reshape(-1)
    tables, weights = groups_module._table_weights(
        distinct, inverse, multiplicity, local, spread.size
    )
    assert tables.size < distinct.size  # the filtered counts are folded
    spread_sum = np.bincount(local, weights=multiplicity * kind.mean(distinct)[inverse])
    evaluate, floor = kind.task(tables)
    batch = groups_module._GridRows(
        groups_module._Tables(evaluate, tables.size, floor), weights, spread_sum, certain[spread]
    )
    assert np.all((batch.offsets >= 0.0) & (batch.offsets < 8 * groups_module.GRID))
    v = groups_module.GRID * np.arange(-600.0, 300.0, 5.0)
    got = batch.integrands(v)
    for j, g in enumerate(spread.tolist()):
        pairs = single_module._spread_pairs(Tasks(groups[g], None))
        assert pairs is not None
        c, a, times = pairs.folded
        task = _HarmonicTask(c) if name == "hmr" else _ArithmeticTask(c.astype(np.float64))
        mu = pairwise_dot(times * a, task.mean) + pairs.certain
        laplace = _Laplace(task, a, times, pairs.certain, mu)
        expected = _integrands(laplace, v + batch.offsets[j])
        for mine, theirs in zip(got, expected, strict=True):
            # in logs: the transform is the exponential of a sum (accurate to its own size,
            # so to that size times the ulp in the exponential)
            live = np.abs(theirs) > 1e-300
            assert np.array_equal(np.sign(mine[j][live]), np.sign(theirs[live]))
            log_mine, log_theirs = np.log(np.abs(mine[j][live])), np.log(np.abs(theirs[live]))
            np.testing.assert_allclose(log_mine, log_theirs, rtol=1e-13, atol=1e-13)


@pytest.mark.parametrize("name", KINDS)
def test_groups_without_spread_and_one_task(name: str) -> None:
    """Groups whose tasks all have one candidate: X = 1; a group of one task: 1/X = r or 1/r."""
    kind = KINDS[name]
    groups = [np.array([1, 1]), np.array([10**6]), np.array([1]), np.array([2, 3])]
    expected, variance = kind.grouped(*_rows(groups))
    assert expected[0] == 1.0
    assert variance[0] == 0.0
    assert expected[2] == 1.0
    if name == "hmr":  # HMR = r
        assert expected[1] == pytest.approx(500_000.5, rel=1e-15)
        assert variance[1] == pytest.approx((10**12 - 1) / 12, rel=1e-14)
    else:  # IAMR = 1/r: E = H_C / C
        harmonic = float(_HarmonicTask(np.array([10**6])).distinct_mean[0])
        assert expected[1] == pytest.approx(harmonic, rel=1e-14)
    mean, var = _enumerated(kind, groups[3])
    assert expected[3] == pytest.approx(mean, rel=1e-15)
    assert variance[3] == pytest.approx(var, rel=1e-14)


@pytest.mark.parametrize("name", KINDS)
def test_memory_follows_the_points_asked_for(name: str) -> None:
    """Counts over fifteen decades (a thousand tables) and groups whose sums are far apart
    (their grid shifts spread over hundreds of points): the tables hold the points the groups
    ask for, not the span between them, and the transforms are evaluated in blocks of the
    single group's size (111 MB at first, with a dense span and larger blocks)."""
    import tracemalloc

    rng = np.random.default_rng(9)
    groups = [np.array([10**15]), np.array([2] * 5000), np.array([1] * 200 + [10**15])]
    groups += [
        np.exp(rng.uniform(0, np.log(1e15), size=int(rng.integers(1, 50)))).astype(np.int64) + 1
        for _ in range(200)
    ]
    rows = _rows(groups)
    tracemalloc.start()
    try:
        KINDS[name].grouped(*rows)
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert peak < 48e6
