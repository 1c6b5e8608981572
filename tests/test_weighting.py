"""The weighted mean and median."""

from __future__ import annotations

import numpy as np
import pytest

from rankstats.weighting import weighted_mean, weighted_median


@pytest.mark.parametrize("seed", range(20))
def test_weighted_median_is_numpy_median_of_repeats(seed: int) -> None:
    rng = np.random.default_rng(seed)
    n = int(rng.integers(1, 12))
    values = rng.integers(1, 6, size=n).astype(float) + 0.5 * rng.integers(0, 2, size=n)
    weights = rng.integers(0, 4, size=n).astype(float)
    if weights.sum() == 0:
        weights[0] = 1.0
    expected = np.median(np.repeat(values, weights.astype(int)))
    assert float(weighted_median(values, weights)) == expected
    assert float(weighted_median(values, 0.1 * weights)) == expected


def test_weighted_median_vectorised_over_rows() -> None:
    rng = np.random.default_rng(0)
    block = rng.integers(1, 50, size=(100, 7)).astype(float)
    weights = np.array([1.0, 2.0, 0.0, 1.0, 3.0, 1.0, 1.0])
    rows = np.array([weighted_median(row, weights) for row in block])
    np.testing.assert_array_equal(weighted_median(block, weights), rows)
    np.testing.assert_array_equal(weighted_median(block, None), np.median(block, axis=-1))


@pytest.mark.parametrize("shape", [(1,), (7,), (1000,), (3, 50), (2, 4, 9)])
def test_weighted_mean_is_numpy_average(shape: tuple[int, ...]) -> None:
    """The same arithmetic as numpy.average: equal to the last bit, booleans included."""
    rng = np.random.default_rng(sum(shape))
    values = 100.0 * rng.random(shape)
    weights = rng.random(shape[-1])
    expected = np.average(values, axis=-1, weights=weights)
    np.testing.assert_array_equal(weighted_mean(values, weights), expected)
    hits = values > 50.0
    expected = np.average(hits, axis=-1, weights=weights)
    np.testing.assert_array_equal(weighted_mean(hits, weights), expected)
    np.testing.assert_array_equal(weighted_mean(values, None), values.mean(axis=-1))


@pytest.mark.parametrize("seed", range(50))
def test_weighted_median_of_a_vector_equals_that_of_a_row(seed: int) -> None:
    """The one-vector path finds the same bounds as the vectorised one."""
    rng = np.random.default_rng(seed)
    n = int(rng.integers(1, 40))
    values = rng.integers(1, 8, size=n).astype(float) if seed % 2 else rng.random(n)
    weights = rng.integers(0, 3, size=n).astype(float) if seed % 3 else rng.random(n)
    if weights.sum() == 0:
        weights[0] = 1.0
    assert weighted_median(values, weights) == weighted_median(values[None, :], weights)[0]
