"""The shared order-statistic distribution: exactness on randomized sweeps, sharing, threads.

References are independent of the product form of the joint law used by the library: exact
enumeration, and a trinomial dynamic programme for P(N_x = a, N_y = a) at every pair x < y
(``_reference`` of ``test_median_null``), summed with math.fsum.
"""

from __future__ import annotations

import math
from concurrent.futures import ThreadPoolExecutor

import mpmath
import numpy as np
import pytest

import rankstats.null.median as median_module
import rankstats.null.median_even as median_even
import rankstats.null.median_rules as rules_module
from rankstats import InverseMedianRank, MedianRank
from rankstats.null.median import (
    MedianDistribution,
    inverse_median_moments,
    median_distribution,
    median_moments,
    order_statistic_pmf,
    order_statistic_sf,
)
from support import median_null_moments
from test_median_null import _enumerated, _reference


@pytest.fixture(autouse=True)
def _fresh_distributions() -> None:
    median_module._CACHE.clear()


def _close(actual: float, expected: float, rel: float = 1e-12, abs_: float = 0.0) -> None:
    assert actual == pytest.approx(expected, rel=rel, abs=abs_)


def _sweep(seed: int, count: int) -> list[np.ndarray]:
    """Random inputs with spread counts, both parities of n, short and long windows."""
    rng = np.random.default_rng(seed)
    cases = []
    for _ in range(count):
        n = int(rng.integers(2, 41))
        low = int(rng.integers(1, 150))
        high = low + int(rng.integers(1, 200))
        cases.append(rng.integers(low, high + 1, size=n))
    return cases


@pytest.mark.parametrize("candidates", _sweep(2026, 10), ids=lambda c: f"n={c.size}")
def test_randomized_sweep_against_the_pairwise_programme(candidates: np.ndarray) -> None:
    expected = _reference(candidates)
    got = (*median_moments(candidates), *inverse_median_moments(candidates))
    for actual, wanted in zip(got, expected, strict=True):
        _close(actual, wanted)


@pytest.mark.parametrize(
    "candidates",
    [[1, 2, 3, 5], [1, 12], [2, 3, 5, 7, 11, 13], [1, 1, 4, 9], [6, 6, 6, 6, 6, 6], [3, 30, 1]],
    ids=str,
)
def test_metrics_agree_with_enumeration(candidates: list[int]) -> None:
    mean, var, inv_mean, inv_var = _enumerated(candidates)
    for metric, (e, v) in ((MedianRank(), (mean, var)), (InverseMedianRank(), (inv_mean, inv_var))):
        _close(metric.expected_value(candidates), e)
        _close(metric.variance(candidates), v, abs_=1e-15)
        _close(metric.std(candidates), math.sqrt(v), abs_=1e-15)


def test_metrics_agree_with_the_pairwise_programme() -> None:
    candidates = np.random.default_rng(11).integers(30, 250, size=36)
    mean, var, inv_mean, inv_var = _reference(candidates)
    _close(MedianRank().expected_value(candidates), mean)
    _close(MedianRank().variance(candidates), var)
    _close(InverseMedianRank().expected_value(candidates), inv_mean)
    _close(InverseMedianRank().variance(candidates), inv_var)


def _integer_everywhere(monkeypatch: pytest.MonkeyPatch) -> None:
    """Every integer of the window a node: no rule in x, the kernel sums exact."""
    monkeypatch.setattr(median_even, "_N_SUB", 10**9)


@pytest.mark.parametrize(
    "candidates",
    [
        pytest.param(np.random.default_rng(3).integers(2_000, 9_000, size=12), id="n=12 wide"),
        pytest.param(np.random.default_rng(4).integers(1_000, 5_000, size=64), id="n=64 wide"),
        pytest.param(np.random.default_rng(5).integers(500, 40_000, size=301), id="n=301"),
        pytest.param(np.random.default_rng(6).integers(2_000, 20_000, size=600), id="n=600"),
        pytest.param(np.full(50_000, 10**6), id="n=5e4 equal"),
    ],
)
def test_long_windows_match_summing_every_integer(
    candidates: np.ndarray, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Gram panels in y, integer rules and kernel quadrature against every integer y summed."""
    got = (*median_moments(candidates), *inverse_median_moments(candidates))
    median_module._CACHE.clear()
    _integer_everywhere(monkeypatch)
    expected = (*median_moments(candidates), *inverse_median_moments(candidates))
    for actual, wanted in zip(got, expected, strict=True):
        _close(actual, wanted, 1e-12)


@pytest.mark.parametrize(
    ("c1", "c2"), [(1, 10**12), (10**12, 10**12), (1, 10**6), (3, 10**9), (7, 7), (2, 5)]
)
def test_two_tasks_exact(c1: int, c2: int) -> None:
    """n = 2: S = r1 + r2 is trapezoidal; 35-digit sums of 2/S and 4/S^2 over it."""
    e, v = median_moments(np.array([c1, c2]))
    _close(e, (c1 + c2 + 2) / 4, 1e-15)
    _close(v, (c1 * c1 + c2 * c2 - 2) / 48, 1e-14)
    ei, vi = inverse_median_moments(np.array([c1, c2]))
    lo, hi = min(c1, c2), max(c1, c2)
    with mpmath.workdps(35):

        def h(order: int, a: int, b: int) -> mpmath.mpf:  # sum_{s=a}^{b} s^-order
            if b < a:
                return mpmath.mpf(0)
            if order == 1:
                return mpmath.harmonic(b) - mpmath.harmonic(a - 1)
            return mpmath.zeta(order, a) - mpmath.zeta(order, b + 1)

        k = mpmath.mpf(lo + hi + 1)
        # sum D(s) s^-p with D = s - 1, then lo, then k - s
        first = (
            (lo - h(1, 2, lo + 1))  # sum of (s - 1)/s over s = 2..lo+1
            + lo * h(1, lo + 2, hi + 1)
            + (k * h(1, hi + 2, lo + hi) - (lo - 1))
        )
        second = (
            h(1, 2, lo + 1)
            - h(2, 2, lo + 1)
            + lo * h(2, lo + 2, hi + 1)
            + (k * h(2, hi + 2, lo + hi) - h(1, hi + 2, lo + hi))
        )
        mean = 2 * first / (lo * hi)
        square = 4 * second / (lo * hi)
        _close(ei, float(mean), 1e-13)
        _close(vi, float(square - mean * mean), 1e-12)


def test_one_distribution_per_multiset(monkeypatch: pytest.MonkeyPatch) -> None:
    calls = []
    compute = median_module._moments

    def counting(cands: object, **kwargs: object) -> object:
        calls.append(1)
        return compute(cands)  # type: ignore[arg-type]

    monkeypatch.setattr(median_module, "_moments", counting)
    candidates = np.array([5, 9, 2, 7, 7, 30])
    dist = median_distribution(candidates)
    assert median_distribution(candidates[::-1].copy()) is dist
    MedianRank().expected_value(candidates)
    MedianRank().variance(candidates)
    InverseMedianRank().expected_value(candidates[::-1])
    InverseMedianRank().std(candidates)
    assert len(calls) == 1
    assert dist.num_tasks == 6
    assert dist.median_moments() == median_moments(candidates)
    assert median_distribution(np.array([5, 9, 2, 7, 7, 31])) is not dist


def test_cache_is_bounded() -> None:
    for size in range(3, 3 + 3 * median_module._CACHE_SIZE):
        median_distribution(np.arange(1, size + 1))
    assert len(median_module._CACHE) == median_module._CACHE_SIZE


def test_distribution_does_not_keep_or_change_the_input() -> None:
    candidates = np.array([4, 1, 9, 9])
    before = candidates.copy()
    dist = MedianDistribution(candidates)
    candidates[0] = 1000
    assert dist.median_moments() == median_moments(before)
    assert np.array_equal(
        median_distribution(before).order_statistic_sf(2, np.arange(5)),
        order_statistic_sf(before, 2, np.arange(5)),
    )


def test_threads_hammering_both_metrics() -> None:
    """Eight threads, both metrics, inputs that need new rules: no error, the same numbers."""
    rng = np.random.default_rng(21)
    inputs = [rng.integers(20, 400, size=int(n)) for n in rng.integers(10, 60, size=6)]
    inputs += [np.full(101, 777), np.array([1, 10**9]), np.array([3, 5, 8, 13])]
    expected = []
    for candidates in inputs:
        expected.append((*median_moments(candidates), *inverse_median_moments(candidates)))

    def work(i: int) -> tuple[float, ...]:
        if i % 5 == 0:
            median_module._CACHE.clear()
        if i % 7 == 0:
            with rules_module._GRAM_LOCK:
                rules_module._GRAM_CACHE.clear()
        return median_null_moments(inputs[i % len(inputs)])

    median_module._CACHE.clear()
    with ThreadPoolExecutor(max_workers=8) as pool:
        results = list(pool.map(work, range(5 * len(inputs))))
    for i, result in enumerate(results):
        for actual, wanted in zip(result, expected[i % len(inputs)], strict=True):
            _close(actual, wanted, 1e-15, 1e-300)


def test_order_arguments_of_any_integer_type_and_clear_errors() -> None:
    """k of a small numpy integer type is its value (int8 had overflowed inside the sums);
    max_support and x are checked as what they are."""
    counts = [4, 4, 4]
    expected_sf = order_statistic_sf(counts, 2, [1, 2])
    expected_pmf = order_statistic_pmf(counts, 2)[1]
    for k in (np.int8(2), np.int16(2), np.uint8(2), np.int64(2)):
        np.testing.assert_array_equal(order_statistic_sf(counts, k, [1, 2]), expected_sf)  # type: ignore[arg-type]
        np.testing.assert_array_equal(order_statistic_pmf(counts, k)[1], expected_pmf)  # type: ignore[arg-type]
    for bad, error, pattern in (
        ("a", TypeError, r"max_support must be a positive integer, got 'a'"),
        (2.5, TypeError, r"max_support must be a positive integer, got 2\.5"),
        (0, ValueError, r"max_support must be a positive integer, got 0"),
    ):
        with pytest.raises(error, match=pattern):
            order_statistic_pmf(counts, 2, max_support=bad)  # type: ignore[arg-type]
    with pytest.raises(ValueError, match=r"x must be integers within float64's exact range"):
        order_statistic_sf(counts, 2, [10**30])
    with pytest.raises(TypeError, match=r"x must be integers in an array of one shape"):
        order_statistic_sf(counts, 2, [[1], [1, 2]])


def test_a_certain_median_has_variance_plus_zero() -> None:
    """Sixteen tasks of one candidate beside one of five: the median is 1 surely. Its inverse's
    variance had come out -0.0 (a standard deviation of "-0" in the table)."""
    counts = [1] * 16 + [5]
    for metric in (MedianRank(), InverseMedianRank()):
        variance = metric.variance(counts)
        assert variance == 0.0
        assert math.copysign(1.0, variance) == 1.0
