"""The law of a Poisson-binomial count on a narrow band (:mod:`rankstats.null.median_band`).

The reference is a 40-digit programme that adds one task at a time, with the counts at or above
the band's size pooled in its last cell.
"""

from __future__ import annotations

import math

import mpmath
import numpy as np
import pytest

from rankstats.null.median_band import band_law


def _reference(
    values: np.ndarray,
    multiplicities: np.ndarray,
    x: float,
    t: float,
    size: int,
    *,
    failures: bool = False,
) -> list[mpmath.mpf]:
    with mpmath.workdps(40):
        law = [mpmath.mpf(1)] + [mpmath.mpf(0)] * size
        for value, count in zip(values.tolist(), multiplicities.tolist(), strict=True):
            room = mpmath.mpf(value) - t
            q = mpmath.mpf(1) if room <= x else mpmath.mpf(x) / room
            if failures:
                q = 1 - q
            for _ in range(int(count)):
                law = (
                    [law[0] * (1 - q)]
                    + [law[j] * (1 - q) + law[j - 1] * q for j in range(1, size)]
                    + [law[size] + law[size - 1] * q]
                )
        return law


@pytest.mark.parametrize("seed", range(12))
def test_against_one_task_at_a_time(seed: int) -> None:
    """Every probability to 1e-13 relative, tiny ones included, shared counts and shifts too."""
    rng = np.random.default_rng(seed)
    values = np.unique(rng.integers(2, 10 ** int(rng.integers(1, 6)), size=30)).astype(np.float64)
    multiplicities = rng.integers(1, [1, 4, 40][seed % 3] + 1, size=values.size).astype(np.float64)
    size = 1 if seed < 4 else int(rng.integers(1, 17))  # size 1 has a path of its own
    x = np.sort(rng.integers(1, int(values.max()) + 2, size=6)).astype(np.float64)
    t = (seed % 2) * rng.integers(0, 3, size=6).astype(np.float64)
    law = band_law(values, multiplicities, x, t, size)
    assert law.shape == (size + 1, x.size)
    for i in range(x.size):
        expected = _reference(values, multiplicities, float(x[i]), float(t[i]), size)
        for j, value in enumerate(expected):
            assert abs(law[j, i] - float(value)) <= 1e-13 * float(value) + 1e-300, (i, j)


@pytest.mark.parametrize("seed", range(8))
def test_the_misses_against_one_task_at_a_time(seed: int) -> None:
    """The law of the tasks with rank above x: counts shared by up to 5000 tasks, q near 1."""
    rng = np.random.default_rng(100 + seed)
    values = np.unique(rng.integers(5, 60, size=4)).astype(np.float64)
    multiplicities = rng.integers(1, [2, 50, 5000][seed % 3] + 1, size=values.size).astype(
        np.float64
    )
    size = int(rng.integers(2, 40))
    # nodes just below the counts (few misses: a tiny tail) and some certain tasks
    x = np.sort(values.max() - rng.uniform(0.01, 3.0, size=5))
    x = np.append(x, values.min())
    t = (seed % 2) * rng.integers(0, 2, size=x.size).astype(np.float64)
    law = band_law(values, multiplicities, x, t, size, failures=True)
    for i in range(x.size):
        expected = _reference(values, multiplicities, float(x[i]), float(t[i]), size, failures=True)
        for j, value in enumerate(expected):
            assert abs(law[j, i] - float(value)) <= 1e-13 * float(value) + 1e-300, (i, j)


def test_a_pool_far_below_one_keeps_its_digits() -> None:
    """P(Bin(k, q) >= D) of 1e-31 comes from the incomplete beta function, not 1 - band."""
    values = np.array([1e6])
    multiplicities = np.array([50.0])
    x = np.array([10.0])
    law = band_law(values, multiplicities, x, np.zeros(1), 8)
    expected = _reference(values, multiplicities, 10.0, 0.0, 8)
    assert float(expected[8]) < 1e-30
    assert law[8, 0] == pytest.approx(float(expected[8]), rel=1e-13)


def test_certain_tasks_land_on_their_count() -> None:
    """Tasks with C - t <= x count surely: the law moves up by their number (or into the pool)."""
    values = np.array([3.0, 5.0, 1000.0])
    multiplicities = np.array([2.0, 1.0, 1.0])
    x = np.array([5.0, 4.0])
    law = band_law(values, multiplicities, x, np.zeros(2), 4)
    # at x = 5: three certain tasks and one with q = 1/200
    assert law[:, 0].tolist() == pytest.approx([0, 0, 0, 199 / 200, 1 / 200], rel=1e-15)
    # at x = 4: two certain, q = 4/5 and 1/250
    p, q = 4 / 5, 1 / 250
    expected = [0, 0, (1 - p) * (1 - q), p * (1 - q) + (1 - p) * q, p * q]
    assert law[:, 1].tolist() == pytest.approx(expected, rel=1e-15)


@pytest.mark.parametrize("seed", range(4))
def test_the_tail_bound_bounds_every_tail(seed: int) -> None:
    """Chernoff's bound of :func:`small_tails` is at least each exact tail, and tight at zero."""
    from rankstats.null.median_band import _log_difference_bound

    rng = np.random.default_rng(seed)
    for _ in range(60):
        q = rng.uniform(0.0, 1.0, size=int(rng.integers(1, 40))) ** rng.uniform(0.2, 5.0)
        law = np.zeros(q.size + 1)
        law[0] = 1.0
        for qi in q:
            law[1:] = law[1:] * (1.0 - qi) + law[:-1] * qi
            law[0] *= 1.0 - qi
        high = q >= 0.5
        alpha, beta, n_high = q[~high].sum(), (1.0 - q[high]).sum(), int(high.sum())
        for m in range(q.size + 1):
            upper = _log_difference_bound(np.array(alpha), np.array(beta), np.array(m - n_high))
            lower = _log_difference_bound(np.array(beta), np.array(alpha), np.array(n_high - m))
            assert math.log(law[m:].sum()) <= upper + 1e-12
            assert math.log(law[: m + 1].sum()) <= lower + 1e-12
    # no task below 1/2: P(S = 0) <= exp(-mean), the bound that picks a long tail's nodes
    assert _log_difference_bound(np.array(0.0), np.array(135.0), np.array(0.0)) == -135.0


@pytest.mark.parametrize("seed", range(6))
def test_none_by_series_against_the_product(seed: int) -> None:
    """log P(N = 0) = sum m log(1 - x / C): the series of the far counts, the near ones directly.

    Counts from the nodes' neighbourhood (one by one) to 1e12 (the series), shared counts,
    and nodes below some count (certain tasks: -inf); 40-digit reference.
    """
    from rankstats.null.median_band import _none_by_series
    from rankstats.null.median_tails import _Candidates

    rng = np.random.default_rng(200 + seed)
    values = np.unique(
        np.concatenate((rng.integers(2, 200, size=20), rng.integers(10**3, 10**12, size=300)))
    )
    multiplicities = rng.integers(1, [2, 30, 3000][seed % 3] + 1, size=values.size)
    cands = _Candidates(values, multiplicities)
    first = int(rng.integers(0, 5))
    lowest = float(values[first]) - 0.5
    x = np.sort(np.concatenate(([lowest], rng.uniform(lowest, 5e4, size=8))))
    got = _none_by_series(cands, first, x)
    with mpmath.workdps(40):
        for i, xi in enumerate(x.tolist()):
            if np.any(values[first:] <= xi):
                assert got[i] == -math.inf
                continue
            expected = mpmath.fsum(
                int(m) * mpmath.log(1 - mpmath.mpf(xi) / int(c))
                for c, m in zip(
                    values[first:].tolist(), multiplicities[first:].tolist(), strict=True
                )
            )
            assert abs(got[i] - float(expected)) <= 1e-14 * abs(float(expected)), i
