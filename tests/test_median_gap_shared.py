"""The inner sums at integer nodes from Gauss nodes in x they share (median_gap_shared)."""

from __future__ import annotations

import math

import numpy as np
import pytest

import rankstats.null.median as median_module
from rankstats import InverseMedianRank, MedianRank
from rankstats.null import median_gap
from rankstats.null.median_gap import _Kernel, gap_sums
from rankstats.null.median_gap_shared import (
    _Block,
    _cuts,
    _direct_rows,
    _interpolated_rows,
    _interpolation_size,
)
from support import record_found
from test_median_gap import _kernel_parts, _reference


@pytest.mark.parametrize(
    "candidates",
    [
        np.random.default_rng(4).integers(1, 2_000, size=24),
        np.concatenate((np.arange(300, 340, 4), np.random.default_rng(2).integers(600, 700, 30))),
        np.array([2, 3, 5, 40, 45, 50]),  # the power a - c(y) reaches 0: flat to x = 1
    ],
    ids=["spread", "kinks", "flat"],
)
def test_shared_nodes_against_every_pair(
    candidates: np.ndarray, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Integer nodes whose reach crosses counts, beyond the table and the enumeration (both
    patched away): the sums below each node's count from the shared Gauss nodes, the rest from
    its panels, against every pair in 30-digit arithmetic."""
    a = candidates.size // 2
    rng = np.random.default_rng(6)
    values, below = _kernel_parts(candidates)
    lo = max(float(np.sort(candidates)[a - 1]) * 0.3, 2.0)
    y = np.unique(np.floor(rng.uniform(lo, float(np.sort(candidates)[a]) + 1.0, size=40)))
    monkeypatch.setattr(median_gap, "_INTEGER_RANGE", 0)
    monkeypatch.setattr(median_gap, "_ENUMERATE_MAX", 0)
    monkeypatch.setattr(median_gap, "_smooth_sums", lambda *args: None)
    found = record_found(monkeypatch, median_gap, "shared_sums")
    weights = rng.uniform(0.5, 1.5, size=y.size)
    mass = rng.uniform(0.2, 1.0, size=y.size)
    c0 = float(np.median(candidates)) / 2
    got = gap_sums(values, below, a, y, weights, mass, c0, tolerance=1e-20)
    assert found == [True]
    expected = _reference(candidates, a, y, weights * mass, c0)
    np.testing.assert_allclose(got, expected, rtol=1e-13)


def _moments(candidates: np.ndarray) -> np.ndarray:
    median_module._CACHE.clear()
    median, inverse = MedianRank(), InverseMedianRank()
    return np.array(
        [
            median.expected_value(candidates),
            median.variance(candidates),
            inverse.expected_value(candidates),
            inverse.variance(candidates),
        ]
    )


@pytest.mark.parametrize(
    ("n", "low", "high", "seed"),
    [
        (100, 1, 14_505, 0),
        (64, 1, 10**9, 1),
        (200, 1, 10**6, 2),
        (120, 10**4, 10**5, 3),
        (500, 1, 10**12, 4),
    ],
)
def test_moments_with_and_without_shared_nodes(
    n: int, low: int, high: int, seed: int, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Both medians' moments, the integer points' sums from the shared nodes against each
    point's own panels (the way before): within a few units in the last place."""
    candidates = np.random.default_rng(seed).integers(low, high, size=n)
    found = record_found(monkeypatch, median_gap, "shared_sums")
    shared = _moments(candidates)
    assert any(found)
    monkeypatch.setattr(median_gap, "shared_sums", lambda *args: None)
    panels = _moments(candidates)
    np.testing.assert_allclose(shared, panels, rtol=2e-15)


@pytest.mark.parametrize(
    "candidates",
    [
        np.random.default_rng(5).integers(1, 14_505, size=100),
        np.array([3] * 50 + [10**9] * 50),
        np.random.default_rng(6).integers(1, 10**12, size=1_000),
    ],
    ids=["spread", "separated", "wide"],
)
def test_pieces_cover_the_range_cut_at_every_count(candidates: np.ndarray) -> None:
    a = candidates.size // 2
    values, below = _kernel_parts(candidates)
    kernel = _Kernel(values, below, a)
    lo, hi = 2.0, float(np.sort(candidates)[a])
    starts, lengths, power = _cuts(kernel, lo, hi)
    assert starts[0] == lo
    assert starts[-1] + lengths[-1] == hi
    np.testing.assert_array_equal(starts[1:], starts[:-1] + lengths[:-1])  # no gap, no overlap
    inside = values[(values > lo) & (values < hi)]
    assert np.isin(inside, starts).all()  # a piece starts at every count
    # one power per piece (no count strictly inside), as the kernel's at either end
    ends = starts + lengths - 1
    np.testing.assert_array_equal(kernel.exponent(starts.astype(float)), power)
    np.testing.assert_array_equal(kernel.exponent(ends.astype(float)), power)
    # at most four decay lengths and a quarter of x at its start (and one for the rounding of
    # the ladder's rungs), or the shortest step
    q = np.where(power > 4.0, 4.0 / np.maximum(power, 1.0), 0.25)
    assert (lengths <= np.maximum(q * starts + 1.0, 32)).all()


@pytest.mark.parametrize(
    ("x_low", "x_high", "y_low", "y_high"),
    [(300.0, 4_000.0, 4_100.0, 4_300.0), (20.0, 200.0, 250.0, 330.0), (1e6, 8e8, 8.1e8, 8.6e8)],
)
def test_interpolated_weights_against_every_node(
    x_low: float, x_high: float, y_low: float, y_high: float
) -> None:
    """Each node's masked sum with the weights interpolated in y from a few Chebyshev points,
    against the weights at every node (the inverse median's three weight functions), within a
    few units in the last place of the largest sum. As in the gap sums, the kernel rises along
    the Gauss nodes, and each node's range starts where it is still below the cut."""
    rng = np.random.default_rng(8)
    xs = np.sort(rng.uniform(x_low, x_high, size=400))
    rising = np.exp(-45.0 * (1.0 - np.linspace(0.0, 1.0, xs.size)))
    kern = rising * rng.uniform(0.5, 2.0, xs.size)
    y = np.unique(np.floor(rng.uniform(y_low, y_high, size=60)))
    lo = rng.integers(0, int(np.searchsorted(rising, math.exp(-41.4))), size=y.size)
    hi = rng.integers(300, 401, size=y.size)
    c0 = (x_high + y_high) / 4.0

    def phi(s: np.ndarray) -> list[np.ndarray]:
        return [np.ones(s.size), *median_gap._inverse_weights(s, c0)]

    size = _interpolation_size(float(xs[0]), float(y[0]), float(y[-1]))
    assert size < y.size  # fewer points than nodes here
    block = _Block(kern, xs, y, lo, hi)
    direct = _direct_rows(phi, block)
    interpolated = _interpolated_rows(phi, block, size)
    scale = np.abs(direct).max(axis=1, keepdims=True)
    assert (np.abs(interpolated - direct) <= 2e-15 * scale).all()


def test_interpolation_size_near_a_pole() -> None:
    """A range of nodes reaching near the weights' pole (at y = -x - 2) asks too many points
    (the block is summed directly); far from it, a few."""
    assert _interpolation_size(1.0, 2.0, 1_000.0) > 10**6
    assert _interpolation_size(4_000.0, 5_000.0, 5_100.0) <= 12
    assert _interpolation_size(1.0, 7.0, 7.0) == 1  # one node
