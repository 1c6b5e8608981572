"""The exact null model of the median rank and of its inverse (:mod:`rankstats.null.median`).

References, each independent of the module's quadrature and Fourier machinery:

* full enumeration of every rank tuple (``np.median`` on a meshgrid) for small candidate counts;
* a dynamic programme over the Poisson-binomial count at every integer ``x`` (odd ``n``), plus an
  exhaustive double sum of ``P(N_x = a, N_y = a)`` over all ``x < y`` (even ``n``);
* 35-digit binomial tails (mpmath) for equal counts at large ``n``;
* Monte-Carlo with a fixed seed at ``n = 1e4``.
"""

from __future__ import annotations

import math
import sys
from pathlib import Path

import mpmath
import numpy as np
import pytest

import rankstats.null.median as median_module
import rankstats.null.median_even as median_even
import rankstats.null.median_gap as median_gap
import rankstats.null.median_gap_quadrature as quadrature_module
from rankstats.null.median import (
    MedianDistribution,
    inverse_median_moments,
    median_distribution,
    median_moments,
    order_statistic_pmf,
    order_statistic_sf,
)
from rankstats.null.median_small_groups import grouped_small_moments
from support import record_found

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "benchmarks"))
from sweep_reference import _even_single_count_closed_form, _odd_single_count_power_sums

# ----------------------------------------------------------------------------- references


@pytest.fixture(autouse=True)
def _fresh_distributions() -> None:
    """Each test computes its distributions afresh (patched settings must not hit the cache)."""
    median_module._CACHE.clear()


def _enumerated(candidates: list[int]) -> tuple[float, float, float, float]:
    """E and V of the median and of its inverse over every rank tuple."""
    grids = np.meshgrid(*[np.arange(1, c + 1) for c in candidates], indexing="ij")
    ranks = np.stack([g.ravel() for g in grids], axis=1).astype(np.float64)
    med = np.median(ranks, axis=1)
    inv = 1.0 / med
    return float(med.mean()), float(med.var()), float(inv.mean()), float(inv.var())


def _count_distribution(candidates: np.ndarray) -> np.ndarray:
    """``dist[x, j] = P(N_x = j)`` for every integer ``x`` in ``0..max C``, by convolution."""
    c = candidates.astype(np.float64)
    xs = np.arange(int(c.max()) + 1, dtype=np.float64)
    q = np.minimum(1.0, xs[:, None] / c[None, :])
    dist = np.zeros((xs.size, c.size + 1))
    dist[:, 0] = 1.0
    for i in range(c.size):
        qi = q[:, i : i + 1]
        dist[:, 1:] = dist[:, 1:] * (1.0 - qi) + dist[:, :-1] * qi
        dist[:, 0] *= 1.0 - qi[:, 0]
    return dist


def _tail_terms(dist: np.ndarray, m: int, centre: int) -> np.ndarray:
    """``P(N_x <= m) - 1[x < centre]``, each side summed from its small end."""
    xs = np.arange(dist.shape[0])
    below = dist[:, : m + 1].sum(axis=1)
    above = dist[:, m + 1 :].sum(axis=1)
    tail = np.where(xs < centre, -above, below)
    tail[0] = 0.0
    return tail


def _fsum(values: np.ndarray) -> float:
    return math.fsum(values.tolist())


def _reference(candidates: np.ndarray) -> tuple[float, float, float, float]:
    """E, V of the median and of its inverse from every integer x (and pair x < y if n is even)."""
    n = candidates.size
    a = n // 2 if n % 2 == 0 else (n + 1) // 2
    dist = _count_distribution(candidates)
    xs = np.arange(dist.shape[0], dtype=np.float64)
    survival = dist[:, :a].sum(axis=1)  # P(X_(a) > x) = P(N_x <= a - 1)
    c = float(max(1, np.argmin(np.abs(survival - 0.5))))
    tail = _tail_terms(dist, a - 1, int(c))
    d = xs - c
    x1, t1 = xs[1:], tail[1:]
    v0, v1 = (c - x1) / (x1 * c), (c - x1 - 1) / ((x1 + 1) * c)
    shift = _fsum(tail)
    m2 = _fsum((2 * d + 1) * tail)
    e_inv = -_fsum(t1 / (x1 * (x1 + 1)))
    m2_inv = -_fsum(t1 * (v1 + v0) / (x1 * (x1 + 1)))
    if n % 2:
        return c + shift, m2 - shift**2, 1 / c + e_inv, m2_inv - e_inv**2
    mass = dist[:, a].copy()
    mass[0] = 0.0
    shift += 0.5 * _fsum(mass)
    m2 += _fsum(mass * (d + 0.25))
    p1 = mass[1:]
    s = 2 * x1
    e_inv -= _fsum(p1 / (x1 * (2 * x1 + 1)))
    m2_inv += _fsum(
        p1 * (-2 / (s * (s + 1))) * ((2 * c - s - 1) / ((s + 1) * c) + (2 * c - s) / (s * c))
    )
    # every pair x < y: P(exactly a ranks <= x and none in (x, y]), by a trinomial convolution
    cf = candidates.astype(np.float64)
    top = int(cf.max())
    g0, g1, g2 = [], [], []
    for x in range(1, top):
        y = np.arange(x + 1, top + 1, dtype=np.float64)
        u = np.minimum(1.0, x / cf)
        w = np.maximum(0.0, 1.0 - y[:, None] / cf[None, :])
        pairs = np.zeros((y.size, a + 1))
        pairs[:, 0] = 1.0
        for i in range(n):
            pairs[:, 1:] = pairs[:, 1:] * w[:, i : i + 1] + pairs[:, :-1] * u[i]
            pairs[:, 0] *= w[:, i]
        h = pairs[:, a]
        ss = x + y
        u1 = (2 * c - ss - 1) / ((ss + 1) * c)
        d0, d1 = -2 / (ss * (ss + 1)), -2 / ((ss + 1) * (ss + 2))
        g0.append(h)
        g1.append(h * 4 / (ss * (ss + 1) * (ss + 2)))
        g2.append(h * (8 * u1 / (ss * (ss + 1) * (ss + 2)) + d1 * d1 + d0 * d0))
    m2 -= 0.5 * _fsum(np.concatenate(g0))
    e_inv -= _fsum(np.concatenate(g1))
    m2_inv -= _fsum(np.concatenate(g2))
    return c + shift, m2 - shift**2, 1 / c + e_inv, m2_inv - e_inv**2


def _binomial_sf_of_median(n: int, num: int, x: int) -> float:
    """P(X_(k) > x) for n equal counts ``num``, k = (n + 1) // 2, to 35 digits (small side)."""
    k = (n + 1) // 2
    with mpmath.workdps(35):
        p = mpmath.mpf(x) / num
        q = 1 - p
        lower = k - 1 < n * p
        sd = math.sqrt(n * float(p) * float(q))
        span = int(60 * sd) + 60
        js = range(k - 1, max(-1, k - 1 - span), -1) if lower else range(k, min(n, k + span) + 1)
        j0 = js[0]
        term = mpmath.e ** (
            mpmath.loggamma(n + 1)
            - mpmath.loggamma(j0 + 1)
            - mpmath.loggamma(n - j0 + 1)
            + j0 * mpmath.log(p)
            + (n - j0) * mpmath.log(q)
        )
        total = mpmath.mpf(0)
        for j in js:
            total += term
            term = term * j / (n - j + 1) * q / p if lower else term * (n - j) / (j + 1) * p / q
        return float(total if lower else 1 - total)


def _close(actual: float, expected: float, rel: float, abs_: float = 0.0) -> None:
    assert actual == pytest.approx(expected, rel=rel, abs=abs_)


# ----------------------------------------------------------------------------- enumeration

ENUMERATED = [
    [1, 2, 3, 5],  # even n: PyKEEN's upper-median closed form gives 1.933, the exact value 1.6
    [3],
    [2, 2],
    [4, 4, 4],
    [1, 1, 1, 1],
    [2, 3, 4, 5, 6],
    [5, 5, 5, 5],
    [3, 7, 2, 6, 4, 4],
    [1, 1, 5],
    [10, 10],
    [7, 3, 9, 2, 8, 6, 5, 4],
    [1, 9, 1, 9, 2],
    [12, 1, 30],
]


@pytest.mark.parametrize("candidates", ENUMERATED, ids=str)
def test_exact_enumeration(candidates: list[int]) -> None:
    mean, var, inv_mean, inv_var = _enumerated(candidates)
    e, v = median_moments(np.array(candidates, dtype=np.int64))
    ei, vi = inverse_median_moments(np.array(candidates, dtype=np.int64))
    _close(e, mean, 1e-12)
    _close(v, var, 1e-12, 1e-15)
    _close(ei, inv_mean, 1e-12)
    _close(vi, inv_var, 1e-12, 1e-15)
    assert all(isinstance(value, float) for value in (e, v, ei, vi))


def test_even_n_is_not_the_upper_median() -> None:
    e, _ = median_moments(np.array([1, 2, 3, 5], dtype=np.int64))
    assert e == pytest.approx(1.6, rel=1e-14)


# ----------------------------------------------------------------------------- mid-size references

MID_SIZE = [
    pytest.param(np.random.default_rng(1).integers(100, 1001, size=51), id="n=51 C~U[100,1000]"),
    pytest.param(np.random.default_rng(2).integers(1, 300, size=199), id="n=199 C~U[1,300]"),
    pytest.param(np.full(101, 500), id="n=101 C=500"),
    pytest.param(np.array([1, 1, 1, 2, 500, 800, 900, 1000, 3]), id="n=9 mixed"),
    pytest.param(np.random.default_rng(3).integers(1, 1500, size=401), id="n=401 C~U[1,1500]"),
    pytest.param(np.random.default_rng(4).integers(100, 301, size=50), id="n=50 C~U[100,300]"),
    pytest.param(np.full(40, 200), id="n=40 C=200"),
    pytest.param(np.random.default_rng(5).integers(200, 601, size=64), id="n=64 C~U[200,600]"),
    pytest.param(np.array([1, 1, 2, 500, 800, 900, 1000, 3]), id="n=8 mixed"),
]


@pytest.mark.parametrize("candidates", MID_SIZE)
def test_independent_reference(candidates: np.ndarray) -> None:
    expected = _reference(candidates)
    got = (*median_moments(candidates), *inverse_median_moments(candidates))
    for actual, wanted in zip(got, expected, strict=True):
        _close(actual, wanted, 1e-12)


@pytest.mark.parametrize("order", ["a", "b", "c"])
def test_even_orders_of_the_gap_sums(order: str, monkeypatch: pytest.MonkeyPatch) -> None:
    """The fallback quadrature of the double sum, each order forced: (a), (b) exact, (c) bounded."""
    candidates = np.random.default_rng(6).integers(100, 401, size=40)
    expected = _reference(candidates)
    monkeypatch.setattr(median_module, "gap_sums", lambda *args, **kwargs: None)
    monkeypatch.setattr(quadrature_module, "_FORCE_ORDER", order)
    got = (*median_moments(candidates), *inverse_median_moments(candidates))
    rel = 1e-12 if order in "ab" else 1e-6
    for actual, wanted in zip(got, expected, strict=True):
        _close(actual, wanted, rel)


def test_quadrature_matches_point_by_point_sums(monkeypatch: pytest.MonkeyPatch) -> None:
    """Discrete Gauss panels against summing every integer of the window (large windows)."""
    cases = [np.full(20001, 10**5), np.random.default_rng(7).integers(10**3, 10**4, size=3001)]
    default = [(*median_moments(c), *inverse_median_moments(c)) for c in cases]
    monkeypatch.setattr(median_even, "_N_SUB", 10**9)
    every = [(*median_moments(c), *inverse_median_moments(c)) for c in cases]
    for got, expected in zip(default, every, strict=True):
        for actual, wanted in zip(got, expected, strict=True):
            _close(actual, wanted, 1e-12)


@pytest.mark.parametrize(
    ("candidates", "interpolated"),
    [
        (np.random.default_rng(11).integers(1, 10**6, size=100), True),
        (np.random.default_rng(12).integers(200, 20_000, size=200), True),
        (np.random.default_rng(14).integers(1_000, 2_001, size=100), True),
        (np.random.default_rng(15).integers(1, 5_001, size=64), True),
        (
            np.exp(np.random.default_rng(13).uniform(0.0, math.log(1e12), size=60)).astype(np.int64)
            + 1,
            True,
        ),
        (np.random.default_rng(16).integers(1, 10**12, size=100_000), False),
    ],
    ids=[
        "n=100 C~U[1,1e6]",
        "n=200 C~U[200,2e4]",
        "n=100 C~U[1e3,2e3]",
        "n=64 C~U[1,5e3]",
        "n=60 log-uniform to 1e12",
        "n=1e5 C~U[1,1e12]",
    ],
)
def test_even_gram_nodes_with_interpolated_gap_sums_against_integer_nodes(
    candidates: np.ndarray, interpolated: bool, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Counts within the kernel's reach: Gram nodes, the gap sums' inner sums interpolated.

    Against the integer nodes for both the single sums and the gap sums (the path before
    2026-11-28, forced by pricing the interpolation out), which sum the gap sums exactly in
    :math:`y`. Where the interpolants would need more exact sums than the integer nodes (1e5
    tasks with as many distinct counts), the integer nodes serve either way.
    """
    taken = record_found(monkeypatch, median_gap, "_interpolated")
    got = (*median_moments(candidates), *inverse_median_moments(candidates))
    assert any(taken) == interpolated
    median_module._CACHE.clear()
    # the integer nodes, whatever they cost
    for module in (median_module, median_even):
        monkeypatch.setattr(
            module, "cheaper_nodes", lambda *args, **kwargs: (*args[4].nodes(), True, None)
        )
    taken.clear()
    expected = (*median_moments(candidates), *inverse_median_moments(candidates))
    assert not any(taken)
    for actual, wanted in zip(got, expected, strict=True):
        _close(actual, wanted, 1e-13)


# ----------------------------------------------------------------------------- large n


@pytest.mark.parametrize(("n", "num"), [(40933, 14541), (1_000_001, 10**7)])
def test_tail_against_binomial(n: int, num: int) -> None:
    """Equal counts: N_x is binomial; compare the tail with 35-digit sums at a few points."""
    candidates = np.full(n, num, dtype=np.int64)
    k = (n + 1) // 2
    sd = num / (2 * math.sqrt(n))
    xs = np.array([round(num / 2 + z * sd) for z in (-6, -2, -0.5, 0, 0.7, 3, 7)])
    got = order_statistic_sf(candidates, k, xs)
    expected = [_binomial_sf_of_median(n, num, int(x)) for x in xs]
    np.testing.assert_allclose(got, expected, rtol=0, atol=5e-14)


@pytest.mark.parametrize("n", [1_000_001, 1_000_000])
def test_symmetry_of_equal_counts(n: int) -> None:
    """r -> C + 1 - r maps the null onto itself: E = (C + 1) / 2 for every n."""
    e, v = median_moments(np.full(n, 10**7, dtype=np.int64))
    _close(e, (10**7 + 1) / 2, 1e-15)
    _close(v, 25e6, 1e-4)  # about C^2 / (4 n) for large n


@pytest.mark.parametrize("n", [10_000, 10_001])
def test_monte_carlo(n: int) -> None:
    rng = np.random.default_rng(0)
    candidates = rng.integers(5_000, 15_000, size=n)
    samples = 2_000
    med = np.median(rng.integers(1, candidates + 1, size=(samples, n)), axis=1)
    e, v = median_moments(candidates)
    ei, vi = inverse_median_moments(candidates)
    assert abs(med.mean() - e) < 4 * math.sqrt(v / samples)
    assert abs(med.var() / v - 1) < 4 * math.sqrt(2 / samples)
    inv = 1 / med
    assert abs(inv.mean() - ei) < 4 * math.sqrt(vi / samples)
    assert abs(inv.var() / vi - 1) < 4 * math.sqrt(2 / samples)


# ----------------------------------------------------------------------------- edges


@pytest.mark.parametrize("num", [1, 2, 7, 1000, 10**12])
def test_single_task(num: int) -> None:
    """n = 1: the median is the rank itself."""
    e, v = median_moments(np.array([num], dtype=np.int64))
    _close(e, (num + 1) / 2, 1e-14)
    _close(v, (num * num - 1) / 12, 1e-13, 1e-15)
    ei, vi = inverse_median_moments(np.array([num], dtype=np.int64))
    with mpmath.workdps(30):
        h1 = mpmath.harmonic(num) / num
        h2 = (mpmath.zeta(2) - mpmath.zeta(2, num + 1)) / num
        _close(ei, float(h1), 1e-12)
        _close(vi, float(h2 - h1 * h1), 1e-11, 1e-16)


@pytest.mark.parametrize("n", [1, 2, 5, 1000])
def test_all_counts_one(n: int) -> None:
    assert median_moments(np.ones(n, dtype=np.int64)) == (1.0, 0.0)
    assert inverse_median_moments(np.ones(n, dtype=np.int64)) == (1.0, 0.0)


def test_two_tasks_huge_counts() -> None:
    """n = 2: the median is the mean of the two ranks; 1/M has a tiny variance (~1e-22)."""
    big = 10**12
    e, v = median_moments(np.array([big, big], dtype=np.int64))
    _close(e, (big + 1) / 2, 1e-14)
    _close(v, (big * big - 1) / 24, 1e-12)
    # one task certain: M = (1 + r) / 2, E[2 / (1 + r)] = 2 (H(C + 1) - 1) / C (summed directly)
    for num, rel in ((10**6, 1e-12), (big, 1e-12)):
        ei, vi = inverse_median_moments(np.array([1, num], dtype=np.int64))
        with mpmath.workdps(30):
            h1 = 2 * (mpmath.harmonic(num + 1) - 1) / num
            h2 = 4 * (mpmath.zeta(2) - mpmath.zeta(2, num + 2) - 1) / num
            _close(ei, float(h1), rel)
            _close(vi, float(h2 - h1 * h1), rel)
    # two equal counts: S = r_1 + r_2 is triangular, P(S = s) = min(s - 1, 2C + 1 - s) / C^2
    ei, vi = inverse_median_moments(np.array([big, big], dtype=np.int64))
    with mpmath.workdps(40):
        num = mpmath.mpf(big)

        def h(order: int, upper: mpmath.mpf) -> mpmath.mpf:
            if order == 1:
                return mpmath.harmonic(upper)
            return mpmath.zeta(order) - mpmath.zeta(order, upper + 1)

        low1 = num - (h(1, num + 1) - 1)  # sum_{s=2}^{C+1} (s - 1) / s
        high1 = (2 * num + 1) * (h(1, 2 * num) - h(1, num + 1)) - (num - 1)
        low2 = (h(1, num + 1) - 1) - (h(2, num + 1) - 1)  # sum (s - 1) / s^2
        high2 = (2 * num + 1) * (h(2, 2 * num) - h(2, num + 1)) - (h(1, 2 * num) - h(1, num + 1))
        mean = 2 * (low1 + high1) / num**2
        second = 4 * (low2 + high2) / num**2
        _close(ei, float(mean), 1e-13)
        _close(vi, float(second - mean**2), 1e-12)


@pytest.mark.parametrize(
    "candidates",
    [
        [10**12] * 3,
        [10**12] * 4,
        [1, 10**12, 3, 10**9, 7],
        [1, 10**12, 3, 10**9, 7, 10**6],
        list(np.random.default_rng(8).integers(1, 10**12, size=11)),
        list(np.random.default_rng(9).integers(1, 10**12, size=1001)),
        list(np.random.default_rng(10).integers(10**9, 10**12, size=30)),
    ],
    ids=["3x1e12", "4x1e12", "n=5 mixed", "n=6 mixed", "n=11", "n=1001", "n=30"],
)
def test_huge_counts_are_finite_and_sensible(candidates: list[int]) -> None:
    c = np.array(candidates, dtype=np.int64)
    e, v = median_moments(c)
    ei, vi = inverse_median_moments(c)
    assert all(math.isfinite(value) for value in (e, v, ei, vi))
    assert 1 <= e <= c.max()
    assert 0 < v <= (float(c.max()) - 1) ** 2 / 4
    assert 1 / c.max() <= ei <= 1
    assert 0 < vi < 1


def test_huge_counts_scale_like_the_continuum() -> None:
    """For n equal counts C, E/C and V/C^2 tend to those of the continuous median."""
    small = median_moments(np.full(4, 10**6, dtype=np.int64))
    large = median_moments(np.full(4, 10**12, dtype=np.int64))
    _close(large[0] / 1e12, small[0] / 1e6, 1e-6)
    _close(large[1] / 1e24, small[1] / 1e12, 1e-5)


@pytest.mark.parametrize("n", [3, 5, 7, 9])
@pytest.mark.parametrize("count", [10**6, 10**9, 10**12, 10**15])
def test_inverse_median_of_a_few_huge_counts_against_exact_sums(n: int, count: int) -> None:
    """The inverse median keeps the lower tail its weights 1/x^2 need.

    Near 0 the law of the median of a few tasks is a low power of x, and the window's cut at a
    tail of 1e-24 had dropped most of E[1/X^2] for three counts of 1e15 (V 17 % off), 1e-8 of
    it for five counts of 1e9 and more, 2e-12 for seven.
    """
    # the accuracy sweep's exact reference: power sums of the point masses, a polynomial in x
    _, _, first, second = _odd_single_count_power_sums(count, n)
    expected, variance = float(first), float(second)
    got = inverse_median_moments(np.full(n, count, dtype=np.int64))
    _close(got[0], expected, 1e-14)
    _close(got[1], variance, 1e-13)
    # the groups' windows (one bisection for many groups) keep the same tail
    grouped = grouped_small_moments(np.full((2, n), count, dtype=np.int64))
    for row in grouped:
        _close(float(row[2]), expected, 1e-14)
        _close(float(row[3]), variance, 1e-13)


# ----------------------------------------------------------------------------- order statistics


@pytest.mark.parametrize("candidates", [[4, 4, 4], [1, 2, 3, 5], [3, 7, 2, 6]], ids=str)
def test_order_statistic_pmf_against_enumeration(candidates: list[int]) -> None:
    grids = np.meshgrid(*[np.arange(1, c + 1) for c in candidates], indexing="ij")
    ranks = np.sort(np.stack([g.ravel() for g in grids], axis=1), axis=1)
    for k in range(1, len(candidates) + 1):
        support, pmf = order_statistic_pmf(np.array(candidates, dtype=np.int64), k)
        counts = np.bincount(ranks[:, k - 1], minlength=max(candidates) + 1) / ranks.shape[0]
        full = np.zeros(max(candidates) + 1)
        full[support] = pmf
        np.testing.assert_allclose(full, counts, atol=1e-15)
        xs = np.arange(-1, max(candidates) + 2)
        sf = order_statistic_sf(np.array(candidates, dtype=np.int64), k, xs)
        expected = [(ranks[:, k - 1] > x).mean() for x in xs]
        np.testing.assert_allclose(sf, expected, atol=1e-15)


@pytest.mark.parametrize(
    ("call", "message"),
    [
        (lambda: order_statistic_sf(np.array([3, 4]), 0, np.array([1])), r"k in 1\.\.2, got: 0"),
        (lambda: order_statistic_pmf(np.array([3, 4]), 3), r"k in 1\.\.2, got: 3"),
        (lambda: order_statistic_pmf(np.array([10**6]), 1, max_support=10), "max_support=10"),
    ],
)
def test_order_statistic_errors(call: object, message: str) -> None:
    with pytest.raises(ValueError, match=message):
        call()  # type: ignore[operator]


@pytest.mark.parametrize(
    ("call", "error", "message"),
    [
        # the counts: each entry point validates them (they had given a silent 0 for NaN or 0)
        (lambda: order_statistic_sf(np.array([0, 3]), 1, np.array([1])), ValueError, "got 0"),
        (lambda: order_statistic_sf(np.array([np.nan, 3]), 1, [1]), ValueError, "got nan"),
        (lambda: median_moments(np.array([2.5, 3])), ValueError, "num_candidates.*got 2.5"),
        (lambda: inverse_median_moments([]), ValueError, "num_candidates must not be empty"),
        (lambda: order_statistic_pmf(np.array([2**60]), 1), ValueError, r"between 1 and 2\*\*53"),
        (lambda: median_distribution(np.array([3, 2]), np.array([1, 1])), ValueError, "increasing"),
        (lambda: median_distribution(np.array([2, 3]), np.array([1])), ValueError, "one multip"),
        (lambda: median_distribution(np.array([2, 3]), np.array([1, 0])), ValueError, "counts"),
        (lambda: MedianDistribution(np.array([1, -4])), ValueError, "got -4"),
        # the points and the order
        (lambda: order_statistic_sf([4, 4, 4], 2, [np.nan]), ValueError, "x must be finite"),
        (lambda: order_statistic_sf([4, 4, 4], 2, [2.5]), ValueError, "got 2.5"),
        (lambda: order_statistic_sf([4, 4, 4], 2, [np.inf]), ValueError, "got inf"),
        (lambda: order_statistic_sf([4, 4, 4], 2, [True]), TypeError, "x must hold integers"),
        (lambda: order_statistic_sf([4, 4, 4], 2.0, [1]), TypeError, "k must be an integer"),
        (lambda: order_statistic_pmf([4, 4, 4], True), TypeError, "k must be an integer"),
    ],
)
def test_entry_points_reject_bad_input(call: object, error: type, message: str) -> None:
    """A clear error naming the argument, never a silent number (NaN, 0, 2.5, inf, bools)."""
    with pytest.raises(error, match=message):
        call()  # type: ignore[operator]


def test_entry_points_accept_what_the_metrics_accept() -> None:
    """Lists, integral floats and multidimensional arrays (flattened), as the metrics take them."""
    expected = median_moments(np.array([3, 4, 5, 6]))
    assert median_moments([3.0, 4.0, 5.0, 6.0]) == expected
    assert median_moments(np.array([[3, 4], [5, 6]])) == expected
    np.testing.assert_array_equal(
        order_statistic_sf([4, 4, 4], 2, np.array([[1, 2], [3, 4]])),
        order_statistic_sf([4, 4, 4], 2, np.array([1, 2, 3, 4])).reshape(2, 2),
    )


def test_tails_with_many_certain_tasks_against_exact_sums() -> None:
    """Thousands of tasks certain below x and a few uncertain: tails to 1e-15 absolute.

    The Fourier inversion's phase once added the uncertain tasks' mean to the count of certain
    ones first, losing its digits below that integer's last place (3e-14 on the tails here).
    The reference is a 40-digit programme over the uncertain tasks, in the band it needs.
    """
    rng = np.random.default_rng(11)
    candidates = np.concatenate((np.full(3000, 20), rng.integers(10**4, 10**5, size=3000)))
    x = 38
    uncertain = [int(c) for c in candidates if c > x]
    certain = candidates.size - len(uncertain)
    with mpmath.workdps(40):
        band = [mpmath.mpf(1)] + [mpmath.mpf(0)] * 12  # P(S = 0..12) of the uncertain tasks
        for count in uncertain:
            q = mpmath.mpf(x) / count
            band = [band[0] * (1 - q)] + [
                band[j] * (1 - q) + band[j - 1] * q for j in range(1, len(band))
            ]
        for k in (certain + 1, certain + 2, certain + 4, certain + 8):
            expected = float(mpmath.fsum(band[: k - certain]))  # P(N_x <= k - 1)
            got = float(order_statistic_sf(candidates, k, np.array([x]))[0])
            assert abs(got - expected) < 1e-15, (k, got, expected)


def _long_double_moments(candidates: np.ndarray) -> tuple[float, float]:
    """E and V of the median of an odd number of tasks from P(M > x) at every x, long double.

    ``P(M > x) = P(N_x <= k - 1)``: a programme over the tasks uncertain at ``x`` on the counts
    ``0..k - 1 - certain`` (and a pool above), or their product where no count may be added.
    """
    ld = np.longdouble
    c = np.sort(candidates)
    k = (c.size + 1) // 2
    tails = [ld(1)]  # P(M > 0)
    x = 1
    while True:
        certain = int(np.searchsorted(c, x, side="right"))
        need = k - 1 - certain
        if need < 0:
            break
        q = ld(x) / c[certain:].astype(ld)
        if need == 0:
            tail = np.prod(1 - q)
        else:
            law = np.zeros(need + 2, dtype=ld)
            law[0] = 1
            for qi in q:
                pool = law[-1] + law[-2] * qi
                law[1:-1] = law[1:-1] * (1 - qi) + law[:-2] * qi
                law[0] *= 1 - qi
                law[-1] = pool
            tail = law[:-1].sum()
        tails.append(tail)
        if tail < 1e-40:
            break
        x += 1
    sf = np.array(tails, dtype=ld)
    mean = sf.sum()
    second = ((2 * np.arange(sf.size) + 1).astype(ld) * sf).sum()
    return float(mean), float(second - mean * mean)


@pytest.mark.skipif(np.finfo(np.longdouble).eps > 1e-18, reason="needs 80-bit long double")
def test_pinned_median_with_a_long_tail_against_long_double() -> None:
    """Half the counts in 2..39, half in 3e3..3e4: a median near 37 (sd 0.8), a tail 300 wide.

    V[M] weighs the tail at x by 2|x - c| + 1, so the Fourier inversion's absolute 1e-16 on
    tails of 1e-6..1e-24 had put V 3e-11 off; those tails now come from the band's law
    (:mod:`rankstats.null.median_band`), relative to their size.
    """
    rng = np.random.default_rng(7)
    candidates = np.concatenate((rng.integers(2, 40, 2500), rng.integers(3000, 30_000, 2501)))
    expected_mean, expected_variance = _long_double_moments(candidates)
    mean, variance = median_moments(candidates)
    assert expected_variance < 1.0  # pinned: the tail is hundreds of standard deviations long
    assert mean == pytest.approx(expected_mean, rel=1e-14)
    assert variance == pytest.approx(expected_variance, rel=1e-13)


def test_pinned_even_median_with_a_long_tail_against_the_exact_programme(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """The even-n twin of the case above: its point masses and tails as the programme has them.

    The reference is the one-task-at-a-time programme forced on every node (no Fourier
    inversion, no band); without the band V[M] was 3e-11 off it.
    """
    import rankstats.null.median_tails as tails_module

    rng = np.random.default_rng(7)
    candidates = np.concatenate((rng.integers(2, 40, 2500), rng.integers(3000, 30_000, 2502)))
    got = median_moments(candidates) + inverse_median_moments(candidates)
    monkeypatch.setattr(tails_module, "_DP_MAX_ITEMS", 10**9)
    monkeypatch.setattr(tails_module, "_DP_MAX_WORK", 10**12)
    monkeypatch.setattr(tails_module, "_DP_MAX_TOTAL", 10**15)
    median_module._CACHE.clear()
    expected = median_moments(candidates) + inverse_median_moments(candidates)
    assert got[1] < 1.0  # pinned
    assert got == pytest.approx(expected, rel=1e-13)


@pytest.mark.parametrize("n", [4, 6])
@pytest.mark.parametrize("count", [10**9, 10**12, 2**53 - 1])
def test_even_median_of_a_few_huge_counts_against_closed_forms(n: int, count: int) -> None:
    """Four or six equal huge counts against the exact closed forms (the sweep's reference).

    V[1/M] had been 1.5e-8 off for four counts of 1e12 and 1e-12 for six (the window's cut of
    the lower tail), single and grouped.
    """
    expected = [float(value) for value in _even_single_count_closed_form(count, n)]
    candidates = np.full(n, count, dtype=np.int64)
    got = (*median_moments(candidates), *inverse_median_moments(candidates))
    grouped = grouped_small_moments(np.full((2, n), count, dtype=np.int64))
    for moments in (got, *grouped.tolist()):
        for actual, wanted, rel in zip(
            moments, expected, (1e-15, 1e-13, 1e-14, 1e-13), strict=True
        ):
            _close(float(actual), wanted, rel)


@pytest.mark.parametrize("n", [5, 51, 201, 501])
def test_order_statistic_sf_against_binomial_sums(n: int) -> None:
    """P(X_(k) > x) for equal counts is a binomial tail: a few 1e-15 absolute, as documented.

    The larger tail had been a sum of terms near 1 (1.2e-14 off at 201 tasks); it is now one
    less the smaller.
    """
    count, k = 10**7, (n + 1) // 2
    x = np.linspace(0.01 * count, 0.99 * count, 120).astype(np.int64)
    got = order_statistic_sf(np.full(n, count, dtype=np.int64), k, x)
    with mpmath.workdps(40):
        exact = [
            float(mpmath.betainc(k, n - k + 1, mpmath.mpf(int(v)) / count, 1, regularized=True))
            for v in x
        ]
    assert np.max(np.abs(got - np.array(exact))) < 8e-15
