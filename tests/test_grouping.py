"""distinct_counts / distinct_inverse equal numpy.unique on every path: sorted, narrow, wide."""

from __future__ import annotations

import numpy as np
import pytest

from rankstats.null.grouping import distinct_counts, distinct_inverse


@pytest.mark.parametrize(
    "values",
    [
        np.array([7]),
        np.array([3, 3, 3]),
        np.sort(np.random.default_rng(0).integers(1, 10**12, 1000)),  # sorted, wide
        np.random.default_rng(1).integers(14_000, 14_541, 5000),  # unsorted, narrow
        np.random.default_rng(2).integers(1, 10**15, 300),  # unsorted, wide
        np.array([2, 1, 10**15, 1]),
    ],
    ids=["one", "equal", "sorted-wide", "narrow", "wide", "mixed"],
)
def test_distinct_counts_equal_numpy_unique(values: np.ndarray) -> None:
    copy = values.copy()
    distinct, counts = distinct_counts(values)
    expected, expected_counts = np.unique(values, return_counts=True)
    np.testing.assert_array_equal(distinct, expected)
    np.testing.assert_array_equal(counts, expected_counts)
    assert distinct.dtype == values.dtype
    np.testing.assert_array_equal(values, copy)
    distinct, inverse = distinct_inverse(values)
    expected, expected_inverse = np.unique(values, return_inverse=True)
    np.testing.assert_array_equal(distinct, expected)
    np.testing.assert_array_equal(inverse, expected_inverse.reshape(-1))
    assert distinct.dtype == values.dtype
    np.testing.assert_array_equal(values, copy)
