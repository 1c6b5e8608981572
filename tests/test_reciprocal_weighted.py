"""The null moments of the reciprocal-of-mean metrics in many weighted groups together.

Module: :mod:`rankstats.null.reciprocal_weighted`. References: exact enumeration of every rank
tuple in rationals (small groups), and the single group's functions,
:func:`~rankstats.null.reciprocal.harmonic_mean_moments_of` and
:func:`~rankstats.null.reciprocal.inverse_arithmetic_mean_moments_of`, themselves tested against
enumeration and mpmath (``tests/test_reciprocal_null.py``).
"""

from __future__ import annotations

import itertools
from fractions import Fraction

import numpy as np
import pytest

from rankstats import Ranks, evaluate
from rankstats.null.reciprocal import (
    harmonic_mean_moments_of,
    inverse_arithmetic_mean_moments_of,
)
from rankstats.null.reciprocal_weighted import PAIRS_MAX, weighted_grouped_moments
from rankstats.null.tasks import Tasks

SINGLE = {True: harmonic_mean_moments_of, False: inverse_arithmetic_mean_moments_of}


def _rows(groups: list[Tasks]) -> tuple[np.ndarray, ...]:
    """Each group's distinct pairs (C, a) with their numbers of tasks, and the group's index."""
    parts = [task.shares() for task in groups]
    owner = np.concatenate([np.full(c.size, g) for g, (c, _, _) in enumerate(parts)])
    counts, shares, multiplicity = (np.concatenate(column) for column in zip(*parts, strict=True))
    # any order of the rows
    order = np.random.default_rng(len(groups)).permutation(owner.size)
    return (
        counts.astype(np.int64)[order],
        shares[order],
        multiplicity[order],
        owner.astype(np.int64)[order],
    )


def _enumerated(harmonic: bool, counts: list[int], weights: list[int]) -> tuple[float, float]:
    """E and V of 1/X over every rank tuple, exactly: X the weighted mean of 1/r or of r."""
    total = sum(weights)
    values = []
    for ranks in itertools.product(*(range(1, c + 1) for c in counts)):
        terms = (Fraction(1, r) if harmonic else Fraction(r) for r in ranks)
        x = sum(Fraction(w, total) * y for w, y in zip(weights, terms, strict=True))
        values.append(1 / x)
    mean = sum(values) / len(values)
    return float(mean), float(sum((v - mean) ** 2 for v in values) / len(values))


@pytest.mark.parametrize("harmonic", [True, False])
def test_small_weighted_groups_against_enumeration(harmonic: bool) -> None:
    rng = np.random.default_rng(3)
    cases = [
        ([1], [2]),
        ([5], [1]),
        ([1, 4], [3, 1]),
        ([2, 2, 7], [1, 1, 5]),
        ([6, 1, 3], [2, 7, 1]),
    ]
    for _ in range(12):
        n = int(rng.integers(1, 4))
        cases.append((rng.integers(1, 8, size=n).tolist(), rng.integers(1, 6, size=n).tolist()))
    groups = [Tasks(np.array(c), np.array(w, dtype=np.float64)) for c, w in cases]
    expected, variance, done = weighted_grouped_moments(harmonic, *_rows(groups), len(groups))
    assert done.all()
    for g, (counts, weights) in enumerate(cases):
        mean, var = _enumerated(harmonic, counts, weights)
        assert expected[g] == pytest.approx(mean, rel=1e-14), (counts, weights)
        assert variance[g] == pytest.approx(var, rel=1e-13, abs=1e-300), (counts, weights)


def _shapes(seed: int) -> list[Tasks]:
    rng = np.random.default_rng(seed)
    groups = []
    for g in range(80):
        n = int(rng.integers(1, 30))
        kind = g % 5
        if kind == 0:  # a filtered dataset's counts
            counts = rng.integers(13_541, 14_542, size=n)
        elif kind == 1:
            counts = rng.integers(1, 10 ** int(rng.integers(1, 13)), size=n) + 1
        elif kind == 2:  # tasks with one candidate among small counts
            counts = np.where(rng.random(n) < 0.3, 1, rng.integers(2, 300, size=n))
        elif kind == 3:
            counts = np.exp(rng.uniform(0.0, np.log(1e12), size=n)).astype(np.int64) + 1
        else:  # two very different counts
            counts = np.where(rng.random(n) < 0.5, 2, 10**12)
        weights = rng.uniform(0.05, 5.0, size=n)
        if g % 7 == 0 and n > 1:
            weights[0] = 0.0  # a task of weight zero: the same as no task
        groups.append(Tasks(counts.astype(np.int64), weights))
    return groups


@pytest.mark.parametrize("harmonic", [True, False])
@pytest.mark.parametrize("seed", range(3))
def test_weighted_groups_against_one_group_at_a_time(harmonic: bool, seed: int) -> None:
    groups = _shapes(seed)
    expected, variance, done = weighted_grouped_moments(harmonic, *_rows(groups), len(groups))
    assert done.all()
    for g, task in enumerate(groups):
        mean, var = SINGLE[harmonic](task)
        assert expected[g] == pytest.approx(mean, rel=2e-14), g
        assert variance[g] == pytest.approx(var, rel=2e-14, abs=1e-300), g


def test_groups_left_to_the_single_function() -> None:
    """Groups with more than PAIRS_MAX pairs, and groups without rows, are not done."""
    rng = np.random.default_rng(1)
    many = Tasks(rng.integers(2, 10**6, size=PAIRS_MAX + 1), rng.uniform(1.0, 2.0, PAIRS_MAX + 1))
    few = Tasks(np.array([3, 9]), np.array([1.0, 2.0]))
    ones = Tasks(np.array([1, 1]), np.array([1.0, 3.0]))
    counts, shares, multiplicity, owner = _rows([many, few, ones])
    # a fourth group whose only task has weight zero: no row
    counts, shares = np.append(counts, 4), np.append(shares, 0.0)
    multiplicity, owner = np.append(multiplicity, 1.0), np.append(owner, 3)
    expected, variance, done = weighted_grouped_moments(
        True, counts, shares, multiplicity, owner, 5
    )
    assert done.tolist() == [False, True, True, False, False]
    assert np.isnan(expected[[0, 3, 4]]).all()
    assert (expected[2], variance[2]) == (1.0, 0.0)  # X = 1 whatever the weights
    assert expected[1] == pytest.approx(harmonic_mean_moments_of(few)[0], rel=1e-15)


def test_evaluate_mixes_the_batched_groups_with_calls_per_group() -> None:
    """Weighted ``evaluate`` with groups small and large: each equals the group alone."""
    rng = np.random.default_rng(7)
    sizes = [5, 12, 2 * PAIRS_MAX, 1, 9]
    groups = np.repeat(np.arange(len(sizes)), sizes)
    n = groups.size
    candidates = rng.integers(2, 10**5, size=n)
    candidates[groups == 3] = 1
    optimistic = np.minimum(rng.integers(1, 50, size=n), candidates)
    ranks = Ranks(optimistic, optimistic, candidates)
    weights = rng.uniform(0.2, 3.0, size=n)
    metrics = ["hmr", "iamr"]
    results = evaluate(ranks, metrics=metrics, groups=groups, weights=weights)
    for label in range(len(sizes)):
        rows = groups == label
        alone = evaluate(
            Ranks(optimistic[rows], optimistic[rows], candidates[rows]),
            metrics=metrics,
            weights=weights[rows],
        )
        for key in alone:
            got, wanted = results.by_group[label].row(key), alone.row(key)
            assert got.expected_value == pytest.approx(wanted.expected_value, rel=1e-13)
            assert got.variance == pytest.approx(wanted.variance, rel=1e-13, abs=1e-300)
            assert got.method == wanted.method


def test_series_of_many_distinct_counts_in_bounded_memory() -> None:
    """Many groups' pairs bring many distinct counts: their series' setup stays in a few MB
    per block (16,384 counts at once had taken 180 MB at 40,000 counts; now about 21 MB, most
    of it the two tables of 25 coefficients per count)."""
    import tracemalloc

    from rankstats.null.reciprocal import _HarmonicTask

    counts = np.unique(np.exp(np.random.default_rng(0).uniform(6.0, 27.0, 40_000)).astype(int))
    task = _HarmonicTask(counts)
    tracemalloc.start()
    try:
        assert task.series.shape[1] == counts.size
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert peak < 40e6


@pytest.mark.parametrize("harmonic", [True, False])
def test_groups_integrated_in_parts(harmonic: bool, monkeypatch: pytest.MonkeyPatch) -> None:
    """A few groups at a time (bounded memory) give each group's moments as all at once, for
    weighted and unweighted groups: each part's range follows its own groups' tails."""
    import rankstats.null.reciprocal as single_module
    from rankstats.null.reciprocal_groups import (
        grouped_harmonic_moments,
        grouped_inverse_arithmetic_moments,
    )

    groups = _shapes(4)
    weighted = _rows(groups)
    rng = np.random.default_rng(4)
    owner = np.repeat(np.arange(50), 6)
    counts = rng.integers(2, 10**6, size=owner.size).astype(np.float64)
    plain = (counts, np.ones(owner.size), owner, np.full(50, 6.0), np.zeros(50))
    unweighted = grouped_harmonic_moments if harmonic else grouped_inverse_arithmetic_moments
    together = weighted_grouped_moments(harmonic, *weighted, len(groups)), unweighted(*plain)
    monkeypatch.setattr(single_module, "GROUPS_PER_PASS", 7)
    apart = weighted_grouped_moments(harmonic, *weighted, len(groups)), unweighted(*plain)
    for got, wanted in zip(apart, together, strict=True):
        np.testing.assert_allclose(got[0], wanted[0], rtol=2e-14)
        np.testing.assert_allclose(got[1], wanted[1], rtol=2e-14)
