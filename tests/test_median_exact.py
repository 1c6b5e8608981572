"""The median's exact null model against independent references: enumeration, a dynamic programme
over the Poisson-binomial counts, and Monte-Carlo at scale. Both parities of n throughout."""

from __future__ import annotations

import itertools

import numpy as np
import pytest

from rankstats import InverseMedianRank, MedianRank
from rankstats.null.median import inverse_median_moments, median_moments


def _enumerated(candidates: list[int]) -> tuple[float, float, float, float]:
    grids = np.meshgrid(*[np.arange(1, c + 1, dtype=float) for c in candidates], indexing="ij")
    ranks = np.stack([g.ravel() for g in grids], axis=-1)
    median = np.median(ranks, axis=-1)
    inverse = 1.0 / median
    return median.mean(), median.var(), inverse.mean(), inverse.var()


ENUMERATED = [
    [1],
    [7],
    [2, 2],
    [1, 2, 3, 5],
    [1, 1, 1, 1],
    [5, 5, 5, 5],
    [4, 4, 4],
    [2, 3, 4, 5, 6],
    [3, 7, 2, 6, 4, 4],
    [1, 9, 1, 9, 1, 9, 2],
    [10, 10, 10, 10, 10, 10],
    [30, 1, 17, 8, 25],
    [12, 3, 12, 3, 12, 3, 12, 3],
]


@pytest.mark.parametrize("candidates", ENUMERATED, ids=str)
def test_against_enumeration(candidates: list[int]) -> None:
    mean, variance, inverse_mean, inverse_variance = _enumerated(candidates)
    c = np.array(candidates, dtype=np.int64)
    got_mean, got_variance = median_moments(c)
    assert got_mean == pytest.approx(mean, rel=1e-12, abs=1e-13)
    assert got_variance == pytest.approx(variance, rel=1e-12, abs=1e-13)
    got_mean, got_variance = inverse_median_moments(c)
    assert got_mean == pytest.approx(inverse_mean, rel=1e-12, abs=1e-13)
    assert got_variance == pytest.approx(inverse_variance, rel=1e-11, abs=1e-14)


def test_pykeen_upper_median_is_not_what_np_median_computes() -> None:
    """PyKEEN's closed form targets the upper median: 1.933 here, where np.median gives 1.6."""
    assert MedianRank().expected_value([1, 2, 3, 5]) == pytest.approx(1.6, rel=1e-14)
    upper = np.sort(np.array(list(itertools.product(*[range(1, c + 1) for c in (1, 2, 3, 5)]))))
    assert upper[:, 2].mean() == pytest.approx(29 / 15)


def _order_statistic_tails(candidates: np.ndarray, k: int) -> tuple[np.ndarray, np.ndarray]:
    """P(X_(k) > x) for x = 0..max C by a dynamic programme over the tasks (float64, exact DP)."""
    xs = np.arange(0, candidates.max() + 1, dtype=float)
    p = np.minimum(xs[:, None] / candidates[None, :], 1.0)  # (x, task)
    # distribution of N_x, truncated at k (counts >= k are lumped): shape (x, k + 1)
    dist = np.zeros((xs.size, k + 1))
    dist[:, 0] = 1.0
    for i in range(candidates.size):
        pi = p[:, i : i + 1]
        shifted = np.zeros_like(dist)
        shifted[:, 1:] = dist[:, :-1]
        shifted[:, -1] += dist[:, -1]
        dist = dist * (1 - pi) + shifted * pi
    survival = dist[:, :k].sum(axis=1)  # P(N_x <= k - 1) = P(X_(k) > x)
    return xs, survival


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_odd_n_against_a_dynamic_programme(seed: int) -> None:
    rng = np.random.default_rng(seed)
    n = int(rng.choice([51, 101, 151]))
    candidates = rng.integers(20, 400, size=n)
    xs, survival = _order_statistic_tails(candidates, (n + 1) // 2)
    mean = survival.sum()
    second = ((2 * xs + 1) * survival).sum()
    pmf = survival[:-1] - survival[1:]  # P(X = x) for x = 1..max C
    support = xs[1:]
    inverse_mean = (pmf / support).sum()
    inverse_second = (pmf / support**2).sum()
    got = median_moments(candidates)
    assert got[0] == pytest.approx(mean, rel=1e-12)
    assert got[1] == pytest.approx(second - mean**2, rel=1e-9)
    got = inverse_median_moments(candidates)
    assert got[0] == pytest.approx(inverse_mean, rel=1e-12)
    assert got[1] == pytest.approx(inverse_second - inverse_mean**2, rel=1e-8)


@pytest.mark.parametrize("n", [10_000, 10_001])
def test_monte_carlo_agreement_at_scale(n: int) -> None:
    rng = np.random.default_rng(0)
    candidates = rng.integers(5_000, 15_000, size=n)
    metric = MedianRank()
    values = metric.get_sampled_values(candidates, 4_000, generator=1)
    mean, variance = median_moments(candidates)
    assert abs(values.mean() - mean) < 5 * np.sqrt(variance / values.size)
    assert values.var(ddof=1) == pytest.approx(variance, rel=0.1)
    inverse = InverseMedianRank().get_sampled_values(candidates, 4_000, generator=1)
    inverse_mean, inverse_variance = inverse_median_moments(candidates)
    assert abs(inverse.mean() - inverse_mean) < 5 * np.sqrt(inverse_variance / inverse.size)


def test_edges() -> None:
    assert median_moments(np.array([10])) == pytest.approx((5.5, 99 / 12))
    assert median_moments(np.ones(7, dtype=np.int64)) == (1.0, 0.0)
    assert inverse_median_moments(np.ones(6, dtype=np.int64)) == (1.0, 0.0)
    mean, variance = median_moments(np.full(5, 10**12))
    assert mean == pytest.approx((10**12 + 1) / 2, rel=1e-9)
    assert 0 < variance < (10**12) ** 2 / 12
    # three of five ranks are surely 1, so the median is 1
    assert median_moments(np.array([1, 1, 1, 10**9, 10**9])) == pytest.approx((1.0, 0.0))


def test_large_inputs_are_fast_enough_to_test() -> None:
    """n = 1e5 tasks with 1e6 candidates: finite, centred where the median must be."""
    mean, variance = median_moments(np.full(100_001, 10**6))
    assert mean == pytest.approx(500_000.5, rel=1e-6)
    assert variance == pytest.approx(1e12 / (4 * 100_001), rel=1e-2)


def _even_median_moments_by_dynamic_programme(candidates: np.ndarray) -> tuple[float, float]:
    """E and V of (X_(a) + X_(a+1)) / 2 for even n, from the exact joint law of the middle pair.

    With N_x = #{i: r_i <= x}: P(X_(k) > x) = P(N_x <= k - 1); for x < y,
    P(X_(a) > x, X_(a+1) > y) = P(N_y <= a) - P(N_x = a, N_y = a), and the last term is the
    coefficient of t^a in prod_i (P(r_i <= x) t + P(r_i > y)): nobody lands in (x, y].
    """
    n = candidates.size
    a = n // 2
    top = int(candidates.max())
    xs = np.arange(0, top + 1, dtype=float)
    _, survival_a = _order_statistic_tails(candidates, a)
    _, survival_b = _order_statistic_tails(candidates, a + 1)
    mean = 0.5 * (survival_a.sum() + survival_b.sum())
    second_a = ((2 * xs + 1) * survival_a).sum()
    second_b = ((2 * xs + 1) * survival_b).sum()
    # E[X_a X_b] = sum_{x, y >= 0} P(X_a > x, X_b > y)
    x, y = np.meshgrid(xs, xs, indexing="ij")
    below = x < y
    px = np.minimum(x[below][:, None] / candidates[None, :], 1.0)
    py = np.minimum(y[below][:, None] / candidates[None, :], 1.0)
    dist = np.zeros((px.shape[0], a + 1))
    dist[:, 0] = 1.0
    for i in range(n):
        shifted = np.zeros_like(dist)
        shifted[:, 1:] = dist[:, :-1]
        dist = dist * (1.0 - py[:, i : i + 1]) + shifted * px[:, i : i + 1]
    both_at_a = dist[:, a]
    joint = np.where(below, 0.0, survival_a[:, None] * np.ones_like(x))  # x >= y: P(X_a > x)
    joint[below] = survival_b[np.nonzero(below)[1]] - both_at_a
    cross = joint.sum()
    second = 0.25 * (second_a + 2 * cross + second_b)
    return mean, second - mean**2


@pytest.mark.parametrize("seed", [0, 1])
def test_even_n_against_the_exact_joint_law_of_the_middle_pair(seed: int) -> None:
    rng = np.random.default_rng(seed)
    candidates = rng.integers(10, 60, size=int(rng.choice([20, 40])))
    mean, variance = _even_median_moments_by_dynamic_programme(candidates)
    got_mean, got_variance = median_moments(candidates)
    assert got_mean == pytest.approx(mean, rel=1e-12)
    assert got_variance == pytest.approx(variance, rel=1e-12)


def test_the_joint_reference_itself_matches_enumeration() -> None:
    candidates = np.array([3, 5, 2, 4])
    mean, variance, _, _ = _enumerated(candidates.tolist())
    assert _even_median_moments_by_dynamic_programme(candidates) == pytest.approx(
        (mean, variance), rel=1e-12
    )
