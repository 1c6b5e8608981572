"""The inverse arithmetic mean rank's null moments for many groups at once.

:func:`~rankstats.null.reciprocal_groups.grouped_inverse_arithmetic_moments` runs the single
group's quadrature for every group together, each group's nodes shifted onto a grid shared by
all, where the transforms are tabulated once per table count. Checked against exact enumeration
of all rank tuples (small groups, rational arithmetic), against the single group's function on
groups of every shape (counts from 1 to 10^12, one to thousands of tasks, tasks with one
candidate, many distinct counts folded in log C), with the step's tolerance and the first range
shrunk in both modules alike through every halving and both ways of growing the range, and node
by node against the single group's integrands at the shifted nodes.
"""

from __future__ import annotations

import itertools
from fractions import Fraction

import numpy as np
import pytest

import rankstats.null.reciprocal as single_module
import rankstats.null.reciprocal_groups as groups_module
from rankstats.null.reciprocal import inverse_arithmetic_mean_moments
from rankstats.null.reciprocal_groups import grouped_inverse_arithmetic_moments


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


def _enumerated(tasks: np.ndarray) -> tuple[float, float]:
    """E and V of 1 / mean rank over every rank tuple, exactly."""
    n = tasks.size
    total = 0
    first = Fraction(0)
    second = Fraction(0)
    for ranks in itertools.product(*(range(1, int(c) + 1) for c in tasks)):
        inverse = Fraction(n, sum(ranks))
        first += inverse
        second += inverse * inverse
        total += 1
    mean = first / total
    return float(mean), float(second / total - mean * mean)


def test_small_groups_against_enumeration() -> None:
    rng = np.random.default_rng(0)
    groups = [np.array([1]), np.array([5]), np.array([1, 1, 1]), np.array([2, 1, 6])]
    groups += [rng.integers(1, 7, size=int(rng.integers(1, 5))) for _ in range(12)]
    expected, variance = grouped_inverse_arithmetic_moments(*_rows(groups))
    for g, tasks in enumerate(groups):
        mean, var = _enumerated(tasks)
        assert expected[g] == pytest.approx(mean, rel=1e-13), tasks
        assert variance[g] == pytest.approx(var, rel=1e-12, abs=1e-300), tasks


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
        np.array([1, 1, 1, 10**15]),
        # many distinct counts, folded in log C
        np.concatenate((np.ones(30, dtype=np.int64), rng.integers(2, 10**12, size=400))),
    ]
    return groups


@pytest.mark.parametrize("seed", range(3))
def test_groups_against_one_group_at_a_time(seed: int) -> None:
    groups = _shapes(seed)
    expected, variance = grouped_inverse_arithmetic_moments(*_rows(groups))
    for g, tasks in enumerate(groups):
        mean, var = inverse_arithmetic_mean_moments(tasks)
        assert expected[g] == pytest.approx(mean, rel=1e-14), tasks
        assert variance[g] == pytest.approx(var, rel=2e-13, abs=1e-300), tasks


def test_every_halving_and_both_growths(monkeypatch: pytest.MonkeyPatch) -> None:
    """A tiny first range and a stricter tolerance: the range grows both ways, and the groups
    settle after different numbers of halvings (those left go on alone). The moments are the
    single group's (computed with its own settings) to the rule's accuracy."""
    groups = _shapes(7)
    reference = [inverse_arithmetic_mean_moments(tasks) for tasks in groups]
    monkeypatch.setattr(single_module, "_FIRST_LOW", -2)
    monkeypatch.setattr(single_module, "_FIRST_HIGH", 2)
    monkeypatch.setattr(single_module, "_SETTLED", 1e-8)
    calls: list[tuple[float, int]] = []
    original = groups_module._GridRows.integrands

    def counted(self: groups_module._GridRows, v: np.ndarray) -> tuple[np.ndarray, ...]:
        calls.append((float(v.min()), self.groups))
        return original(self, v)

    monkeypatch.setattr(groups_module._GridRows, "integrands", counted)
    expected, variance = grouped_inverse_arithmetic_moments(*_rows(groups))
    assert min(v for v, _ in calls) < -2 * single_module._STEP  # grew to the left
    sizes = [size for _, size in calls]
    assert min(sizes) < max(sizes)  # later halvings over fewer groups
    for g, (mean, var) in enumerate(reference):
        assert expected[g] == pytest.approx(mean, rel=1e-14), groups[g]
        assert variance[g] == pytest.approx(var, rel=1e-12, abs=1e-300), groups[g]


def test_integrands_at_the_shifted_nodes_against_the_single_groups() -> None:
    """Each group's nodes are shifted onto the shared grid; there its integrands are the
    single group's at the shifted nodes (series or rows' terms, counts folded or not)."""
    import math

    from rankstats.null.reciprocal import _ArithmeticTask, _integrands, _Laplace
    from rankstats.null.tasks import Tasks
    from rankstats.weighting import pairwise_dot

    groups = [*_shapes(3)[:20], np.array([2, 10**12]), np.array([7, 9, 9, 30])]
    groups.append(np.random.default_rng(5).integers(13_541, 14_542, size=300))
    counts, multiplicity, owner, _, certain = _rows(groups)
    spread = np.unique(owner)
    local = np.searchsorted(spread, owner)
    distinct, inverse = np.unique(counts.astype(np.int64), return_inverse=True)
    tables, weights = groups_module._table_weights(
        distinct, inverse.reshape(-1), multiplicity, local, spread.size
    )
    assert tables.size < distinct.size  # the filtered counts are folded
    mean = 0.5 * (distinct[inverse.reshape(-1)] + 1.0)
    spread_sum = np.bincount(local, weights=multiplicity * mean, minlength=spread.size)
    evaluate = _ArithmeticTask(tables.astype(np.float64))
    batch = groups_module._GridRows(
        groups_module._Tables(evaluate, tables.size, -math.inf),
        weights,
        spread_sum,
        certain[spread],
    )
    v = groups_module.GRID * np.arange(-600.0, 300.0, 5.0)
    got = batch.integrands(v)
    for j, g in enumerate(spread.tolist()):
        pairs = single_module._spread_pairs(Tasks(groups[g], None))
        assert pairs is not None
        c, a, times = pairs.folded
        task = _ArithmeticTask(c.astype(np.float64))
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
