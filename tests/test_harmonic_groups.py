"""The harmonic mean rank's null moments for many groups at once.

:func:`~rankstats.null.reciprocal_groups.grouped_harmonic_moments` runs the single group's
quadrature for every group together, each group's nodes shifted so that its arguments fall on a
grid shared by all, where the transforms are tabulated once per table count. Checked against
exact enumeration of all rank tuples (rationals), against the single group's function on groups
of every shape (counts from 1 to 10^12, one to thousands of tasks, tasks with one candidate,
many distinct counts folded in log C), through every halving and both ways of growing the
range, and node by node against the single group's integrands at the shifted nodes.
"""

from __future__ import annotations

import itertools
from fractions import Fraction

import numpy as np
import pytest

import rankstats.null.reciprocal as single_module
import rankstats.null.reciprocal_groups as groups_module
from rankstats.null.reciprocal import harmonic_mean_moments
from rankstats.null.reciprocal_groups import grouped_harmonic_moments
from test_reciprocal_groups import _rows


def _enumerated(tasks: np.ndarray) -> tuple[float, float]:
    """E and V of n / sum(1/r) over every rank tuple, exactly."""
    n = tasks.size
    values = [
        Fraction(n) / sum(Fraction(1, r) for r in ranks)
        for ranks in itertools.product(*(range(1, int(c) + 1) for c in tasks))
    ]
    mean = sum(values) / len(values)
    return float(mean), float(sum((x - mean) ** 2 for x in values) / len(values))


def test_small_groups_against_enumeration() -> None:
    rng = np.random.default_rng(0)
    groups = [np.array([1]), np.array([5]), np.array([1, 1, 1]), np.array([2, 1, 6])]
    groups += [rng.integers(1, 8, size=int(rng.integers(1, 5))) for _ in range(14)]
    expected, variance = grouped_harmonic_moments(*_rows(groups))
    for g, tasks in enumerate(groups):
        mean, var = _enumerated(tasks)
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
        np.array([2, 10**12]),
        np.full(3000, 9),
        np.concatenate((np.full(2000, 2), rng.integers(1, 10**9, size=50))),
        np.array([1, 1, 1, 10**12]),
        np.array([3] * 50 + [10**9] * 50),
        # a thousand distinct counts in one group: the single group's function
        rng.integers(13_541, 14_542, size=1_500),
        np.concatenate((np.ones(30, dtype=np.int64), rng.integers(2, 10**12, size=400))),
    ]
    return groups


@pytest.mark.parametrize("seed", range(3))
def test_groups_against_one_group_at_a_time(seed: int) -> None:
    groups = _shapes(seed)
    expected, variance = grouped_harmonic_moments(*_rows(groups))
    for g, tasks in enumerate(groups):
        mean, var = harmonic_mean_moments(tasks)
        assert expected[g] == pytest.approx(mean, rel=2e-14), tasks
        assert variance[g] == pytest.approx(var, rel=1e-13, abs=1e-300), tasks


@pytest.mark.parametrize("settled", [1e-8, 0.0])
def test_every_halving_and_both_growths(monkeypatch: pytest.MonkeyPatch, settled: float) -> None:
    """A tiny first range and a stricter tolerance: the range grows both ways, and the groups
    settle after different numbers of halvings (with a tolerance of 0, all four, down to the
    grid's own step). The moments are the single group's (computed with its own settings) to
    the rule's accuracy."""
    groups = _shapes(7)
    reference = [harmonic_mean_moments(tasks) for tasks in groups]
    monkeypatch.setattr(single_module, "_FIRST_LOW", -2)
    monkeypatch.setattr(single_module, "_FIRST_HIGH", 2)
    monkeypatch.setattr(single_module, "_SETTLED", settled)
    calls: list[tuple[np.ndarray, int]] = []
    original = groups_module._GridRows.integrands

    def counted(self: groups_module._GridRows, v: np.ndarray) -> tuple[np.ndarray, ...]:
        calls.append((v, self.groups))
        return original(self, v)

    monkeypatch.setattr(groups_module._GridRows, "integrands", counted)
    expected, variance = grouped_harmonic_moments(*_rows(groups))
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


def test_integrands_at_the_shifted_nodes_against_the_single_groups() -> None:
    """Each group's nodes are shifted onto the shared grid; there its integrands are the
    single group's at the shifted nodes, at every step of the rule."""
    from rankstats.null.lattice import FLOOR
    from rankstats.null.reciprocal import _HarmonicTask, _integrands, _Laplace
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
    mean = _HarmonicTask(distinct).distinct_mean[inverse.reshape(-1)]
    spread_sum = np.bincount(local, weights=multiplicity * mean, minlength=spread.size)
    evaluate = _HarmonicTask(tables).tabulate
    batch = groups_module._GridRows(
        groups_module._Tables(evaluate, tables.size, FLOOR), weights, spread_sum, certain[spread]
    )
    assert np.all((batch.offsets >= 0.0) & (batch.offsets < 8 * groups_module.GRID))
    v = groups_module.GRID * np.arange(-600.0, 300.0, 5.0)
    got = batch.integrands(v)
    for j, g in enumerate(spread.tolist()):
        pairs = single_module._spread_pairs(Tasks(groups[g], None))
        assert pairs is not None
        c, a, times = pairs.folded
        task = _HarmonicTask(c)
        mu = pairwise_dot(times * a, task.mean) + pairs.certain
        laplace = _Laplace(task, a, times, pairs.certain, mu)
        expected = _integrands(laplace, v + batch.offsets[j])
        for mine, theirs in zip(got, expected, strict=True):
            live = np.abs(theirs) > 1e-300
            assert np.array_equal(np.sign(mine[j][live]), np.sign(theirs[live]))
            log_mine, log_theirs = np.log(np.abs(mine[j][live])), np.log(np.abs(theirs[live]))
            np.testing.assert_allclose(log_mine, log_theirs, rtol=1e-13, atol=1e-13)


def test_groups_without_spread_and_one_task() -> None:
    """Groups whose tasks all have one candidate: X = 1; a group of one task: HMR = r."""
    groups = [np.array([1, 1]), np.array([10**6]), np.array([1]), np.array([2, 3])]
    expected, variance = grouped_harmonic_moments(*_rows(groups))
    assert expected[0] == 1.0
    assert variance[0] == 0.0
    assert expected[1] == pytest.approx(500_000.5, rel=1e-15)
    assert variance[1] == pytest.approx((10**12 - 1) / 12, rel=1e-14)
    assert expected[2] == 1.0
    mean, var = _enumerated(groups[3])
    assert expected[3] == pytest.approx(mean, rel=1e-15)
    assert variance[3] == pytest.approx(var, rel=1e-14)
