"""Medians of every group at once, against :func:`numpy.median` of each group's repeated values."""

from __future__ import annotations

import numpy as np
import pytest

from rankstats.evaluation.group_medians import group_medians
from rankstats.weighting import weighted_median


@pytest.mark.parametrize("seed", range(5))
def test_group_medians_against_numpy(seed: int) -> None:
    rng = np.random.default_rng(seed)
    size = 40
    rows = 600
    ids = rng.integers(0, size - 3, size=rows)  # the last groups have no rows
    # ranks with ties and half-integers (realistic ranks), counts from 1 to 4
    values = rng.integers(1, 30, size=rows) / (1 + (seed % 2))
    counts = rng.integers(1, 5, size=rows).astype(np.float64)
    got = group_medians(ids, values.astype(np.float64), counts, size)
    for g in range(size):
        mine = ids == g
        if not np.any(mine):
            assert np.isnan(got[g])
            continue
        repeated = np.repeat(values[mine], counts[mine].astype(np.int64))
        assert got[g] == np.median(repeated)
        assert got[g] == weighted_median(values[mine].astype(np.float64), counts[mine])


def test_one_row_and_even_totals() -> None:
    """A single row is its own median; an even total averages the two middle values."""
    ids = np.array([0, 1, 1, 2, 2, 2])
    values = np.array([7.0, 1.0, 10.0, 5.0, 5.0, 1.0])
    counts = np.array([3.0, 1.0, 1.0, 1.0, 1.0, 2.0])
    got = group_medians(ids, values, counts, 4)
    np.testing.assert_array_equal(got[:3], [7.0, 5.5, 3.0])
    assert np.isnan(got[3])
    assert np.all(np.isnan(group_medians(np.zeros(0, dtype=np.int64), np.zeros(0), np.zeros(0), 2)))
