"""The median and its inverse over two candidate counts, against the pool references.

``median_pool_reference.py`` conditions on how many ranks fall below the smaller count (30-60
digits, none of the library's machinery). Checked here first against every rank tuple, for even
and odd numbers of tasks; then the library's odd-n moments against it where the middle rank is
either a small count or the smallest of many huge ones (the even-n cases are in
``test_median_even.py``).
"""

from __future__ import annotations

import numpy as np
import pytest

from median_pool_reference import odd_two_count_reference, pool_reference
from support import all_rank_tuples, median_null_moments


@pytest.mark.parametrize(
    ("c1", "m1", "c2", "m2"),
    [(2, 2, 9, 2), (1, 1, 7, 3), (3, 3, 11, 1), (2, 3, 8, 3), (2, 2, 5, 1), (3, 1, 4, 2)],
    ids=str,
)
def test_the_references_against_every_rank_tuple(c1: int, m1: int, c2: int, m2: int) -> None:
    medians = np.median(all_rank_tuples([c1] * m1 + [c2] * m2), axis=1)
    expected = (medians.mean(), medians.var(), (1 / medians).mean(), (1 / medians).var())
    np.testing.assert_allclose(pool_reference(c1, m1, c2, m2), expected, rtol=1e-12)


@pytest.mark.parametrize(
    ("c1", "m1", "c2", "m2"),
    [
        # the median the smallest of 30 huge ranks, or the small count (2.5e-14 apart at most)
        (30, 29, 10**4, 30),
        (10, 29, 10**9, 30),
        (50, 50, 2 * 10**6, 51),
        # one small count more than half: the median at most the small count but rarely
        (30, 31, 2 * 10**6, 30),
        (50, 101, 10**9, 100),
    ],
    ids=str,
)
def test_odd_n_against_the_pool_reference(c1: int, m1: int, c2: int, m2: int) -> None:
    expected = odd_two_count_reference(c1, m1, c2, m2)
    candidates = np.random.default_rng(m1).permutation(np.array([c1] * m1 + [c2] * m2))
    got = median_null_moments(candidates)
    np.testing.assert_allclose(got, expected, rtol=1e-12, atol=0.0)
