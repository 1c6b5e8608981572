"""The median's null moments of many groups together equal each group's alone, and exact ones."""

from __future__ import annotations

import itertools
import math
import tracemalloc
from fractions import Fraction

import numpy as np
import pytest

from rankstats import evaluate
from rankstats.null import median_small_groups
from rankstats.null.median import median_moments
from rankstats.null.median_small import EVEN_N, EVEN_N_VALID, SMALL_N, small_moments
from rankstats.null.median_small_groups import (
    _GroupSums,
    grouped_median_moments,
    grouped_small_moments,
)
from test_median_small import _every_integer


def _shapes(rng: np.random.Generator, n: int, size: int) -> dict[str, np.ndarray]:
    """Counts of ``size`` groups of ``n`` tasks, in the shapes the single group is tested on."""
    return {
        "filtered": rng.integers(13_541, 14_542, size=(size, n)),
        "tiny": rng.integers(1, 8, size=(size, n)),
        "uniform": rng.integers(1, 1_000, size=(size, n)),
        "log-uniform": np.exp(rng.uniform(0.0, math.log(1e12), size=(size, n))).astype(np.int64)
        + 1,
        "two clusters": np.where(
            rng.random((size, n)) < 0.5,
            rng.integers(1, 10, size=(size, n)),
            rng.integers(10**6, 10**12, size=(size, n)),
        ),
        "ones mixed in": np.where(
            rng.random((size, n)) < 0.4, 1, rng.integers(2, 10**5, size=(size, n))
        ),
        "huge": rng.integers(10**11, 10**12, size=(size, n)),
        "equal": np.repeat(rng.integers(1, 10**9, size=(size, 1)), n, axis=1),
    }


def _relative(found: np.ndarray, wanted: np.ndarray) -> np.ndarray:
    scale = np.where(wanted == 0.0, 1.0, np.abs(wanted))
    return np.asarray(np.abs(found - wanted) / scale)


@pytest.mark.parametrize("n", [*range(3, SMALL_N + 1), 18, 24, 34, EVEN_N, 48, EVEN_N_VALID])
def test_groups_together_equal_each_group_alone(n: int) -> None:
    rng = np.random.default_rng(100 + n)
    for name, counts in _shapes(rng, n, 5 if n <= SMALL_N else 2).items():
        found = grouped_small_moments(counts)
        for row, got in zip(counts, found, strict=True):
            wanted = np.array(small_moments(row))
            assert _relative(got, wanted).max() < 5e-15, (name, row.tolist())


@pytest.mark.parametrize("n", [4, 5, 7, 10, 16, 40, 56])
def test_windows_kept_and_moved_for_the_inverse_median_in_one_batch(n: int) -> None:
    """Groups whose window starts at 1 beside groups whose lower end the check of
    :func:`~rankstats.null.median_tails.inverse_tail` keeps (40 and 56 tasks) or moves down (up
    to 16), in one batch: each as alone."""
    rng = np.random.default_rng(n)
    counts = np.stack(
        [
            rng.integers(20, 40, size=n),
            np.full(n, 10**12),
            rng.integers(13_541, 14_542, size=n),
            rng.integers(10**9, 10**15, size=n),
            np.full(n, 10**6),
        ]
    )
    found = grouped_small_moments(counts)
    for row, got in zip(counts, found, strict=True):
        wanted = np.array(small_moments(row))
        assert _relative(got, wanted).max() < 5e-15, row.tolist()


@pytest.mark.parametrize(
    "counts",
    [
        np.array([[1500, 1400, 2, 700], [1, 1, 1200, 1300]]),
        np.array([[1, 1, 1200, 1300, 5, 900], [1000, 1000, 1000, 1000, 1000, 1000]]),
        np.array([[1000, 1000, 1000], [1, 1300, 800]]),
        np.random.default_rng(5).integers(100, 1200, size=(3, 8)),
        np.random.default_rng(6).integers(1, 1000, size=(3, 11)),
        np.random.default_rng(7).integers(300, 1000, size=(2, 16)),
        np.random.default_rng(8).integers(300, 1500, size=(2, 20)),
    ],
    ids=lambda c: f"{c.shape[0]} groups of {c.shape[1]}",
)
def test_groups_against_every_integer(counts: np.ndarray) -> None:
    """Against the point masses summed at every integer (every pair u < v, math.fsum)."""
    for row, got in zip(counts, grouped_small_moments(counts), strict=True):
        wanted = np.array(_every_integer(row))
        assert _relative(got, wanted).max() < 1e-13, row.tolist()


def _exact(counts: tuple[int, ...]) -> tuple[Fraction, ...]:
    """E and V of the median and of its inverse, every tuple of ranks enumerated in rationals."""
    n = len(counts)
    weight = Fraction(1, math.prod(counts))
    medians = []
    for ranks in itertools.product(*(range(1, c + 1) for c in counts)):
        ordered = sorted(ranks)
        medians.append(
            Fraction(ordered[n // 2])
            if n % 2
            else Fraction(ordered[n // 2 - 1] + ordered[n // 2], 2)
        )
    mean = sum(medians, Fraction(0)) * weight
    inv = sum((1 / m for m in medians), Fraction(0)) * weight
    return (
        mean,
        sum(((m - mean) ** 2 for m in medians), Fraction(0)) * weight,
        inv,
        sum(((1 / m - inv) ** 2 for m in medians), Fraction(0)) * weight,
    )


@pytest.mark.parametrize("n", [3, 4, 5, 6])
def test_small_groups_against_exact_enumeration(n: int) -> None:
    rng = np.random.default_rng(n)
    counts = rng.integers(1, 7 if n < 6 else 5, size=(6, n))
    counts[0] = 1  # every rank is 1
    counts[1, 0] = 1
    for row, got in zip(counts, grouped_small_moments(counts), strict=True):
        wanted = np.array([float(value) for value in _exact(tuple(row.tolist()))])
        assert _relative(got, wanted).max() < 1e-13, row.tolist()


def test_rows_in_any_order_and_validation() -> None:
    counts = np.array([[9, 3, 700, 41], [41, 700, 3, 9]])
    found = grouped_small_moments(counts)
    assert np.array_equal(found[0], found[1])
    for n in (2, SMALL_N + 1, EVEN_N_VALID + 2):
        with pytest.raises(ValueError, match="counts: expected rows of 3 to"):
            grouped_small_moments(np.full((2, n), 5))


def test_groups_of_wide_masses_are_summed_alone(monkeypatch: pytest.MonkeyPatch) -> None:
    """Groups whose masses span more than _SPAN_MAX binary orders go to small_moments."""
    counts = np.random.default_rng(3).integers(1, 10**9, size=(6, 8))
    calls = []

    def alone(row: np.ndarray) -> tuple[float, float, float, float]:
        calls.append(row.tolist())
        return small_moments(row)

    monkeypatch.setattr(median_small_groups, "_SPAN_MAX", -1)
    monkeypatch.setattr(median_small_groups, "small_moments", alone)
    found = grouped_small_moments(counts)
    assert len(calls) == counts.shape[0]
    for row, got in zip(counts, found, strict=True):
        assert np.array_equal(got, np.array(small_moments(row)))


def test_group_sums_are_pairwise() -> None:
    """Each group's sum to a few ulps of math.fsum, one long group or many alike, any order."""
    rng = np.random.default_rng(9)
    # one long group among single entries, in random order
    group = np.concatenate((np.zeros(20_000, dtype=np.int64), np.arange(1, 500)))
    order = rng.permutation(group.size)
    group = group[order]
    values = rng.uniform(0.0, 1.0, size=group.size) * 10.0 ** rng.integers(-3, 3, size=group.size)
    (long_group,) = _GroupSums(group, 500)(values)
    # groups of similar sizes, and groups 50..59 without entries (sums of zero)
    even_group = rng.integers(0, 50, size=group.size)
    (alike,) = _GroupSums(even_group, 60)(values)
    # one large entry, then many tiny ones: a sequential sum loses every tiny one (1e-11)
    tiny_ids = np.zeros(100_001, dtype=np.int64)
    tiny = np.concatenate(([1.0], np.full(100_000, 1e-16)))
    (added,) = _GroupSums(tiny_ids, 1)(tiny)
    for summed, ids in ((long_group, group), (alike, even_group)):
        for g in range(summed.size):
            wanted = math.fsum(values[ids == g].tolist())
            assert summed[g] == pytest.approx(wanted, rel=4e-15, abs=0.0)
    assert added[0] == pytest.approx(math.fsum(tiny.tolist()), rel=4e-15, abs=0.0)


def test_table_rows_are_grouped_by_size() -> None:
    """Rows with multiplicities; groups of every size, those outside the path left undone."""
    rng = np.random.default_rng(4)
    sizes = [1, 2, 3, 4, 7, 16, 17, 18, 56, 57, 58]
    counts, multiplicity, owner = [], [], []
    for g, n in enumerate(sizes):
        distinct, times = np.unique(rng.integers(1, 40, size=n), return_counts=True)
        counts.append(distinct)
        multiplicity.append(times)
        owner.append(np.full(distinct.size, g))
    found, done = grouped_median_moments(
        np.concatenate(counts), np.concatenate(multiplicity), np.concatenate(owner), len(sizes) + 1
    )
    wanted_done = [3 <= n <= SMALL_N or (n % 2 == 0 and 3 <= n <= EVEN_N) for n in sizes]
    assert done.tolist() == [*wanted_done, False]  # the last group has no tasks
    for g, n in enumerate(sizes):
        if not done[g]:
            assert np.isnan(found[g]).all()
            continue
        each = np.repeat(counts[g], multiplicity[g])
        assert _relative(found[g, :2], np.array(median_moments(each))).max() < 5e-15, n


def test_evaluate_groups_equal_each_group_alone() -> None:
    """evaluate: the median's and the inverse median's null columns of groups of every size."""
    rng = np.random.default_rng(12)
    sizes = rng.choice([1, 2, 3, 4, 5, 9, 10, 16, 17, 22, 60, 61], size=40)
    groups = np.repeat(np.arange(sizes.size), sizes)
    candidates = rng.integers(1, 5_000, size=groups.size)
    ranks = np.minimum(rng.geometric(0.01, size=groups.size), candidates)
    metrics = ["median", "inverse_median"]
    together = evaluate(ranks, candidates, metrics=metrics, groups=groups)
    for g in range(sizes.size):
        rows = groups == g
        alone = evaluate(ranks[rows], candidates[rows], metrics=metrics)
        for name in metrics:
            a, b = together.by_group[g].row(name), alone.row(name)
            assert a.method == b.method
            for field in ("value", "expected_value", "variance"):
                got, wanted = getattr(a, field), getattr(b, field)
                assert got == pytest.approx(wanted, rel=5e-15, abs=0.0), (g, name, field)


def test_memory_of_many_groups_is_bounded() -> None:
    """The node arrays and the kernels are formed a block at a time."""
    counts = np.random.default_rng(2).integers(1, 10**12, size=(128, 40))
    grouped_small_moments(counts[:2])
    tracemalloc.start()
    grouped_small_moments(counts)
    _, peak = tracemalloc.get_traced_memory()
    tracemalloc.stop()
    assert peak < 24_000_000


@pytest.mark.parametrize("top", [10**15, 10**18, 2**62])
def test_counts_beyond_two_to_the_53(top: int) -> None:
    """Beyond 2**53 a count and the next integer are one float: panels compared in integers."""
    rng = np.random.default_rng(top % 1000)
    for n in (4, 7, 10, 30):
        counts = rng.integers(1, top, size=(4, n))
        counts[0, :2] = 1
        for row, got in zip(counts, grouped_small_moments(counts), strict=True):
            wanted = np.array(small_moments(row))
            assert _relative(got, wanted).max() < 5e-15, (n, row.tolist())
