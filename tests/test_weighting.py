"""The weighted median."""

from __future__ import annotations

import numpy as np
import pytest

from rankstats.weighting import weighted_median


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
