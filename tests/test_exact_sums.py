"""exact_sum against math.fsum (the correctly rounded sum) and exact rational arithmetic."""

from __future__ import annotations

import math
from fractions import Fraction

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from rankstats.exact_sums import exact_products, exact_sum

FINITE = st.floats(allow_nan=False, allow_infinity=False, min_value=-1e290, max_value=1e290)


def _close(got: float, exact: Fraction) -> bool:
    """Within one unit in the last place of the exact sum (or of the smallest subnormal)."""
    error = abs(Fraction(got) - exact)
    return error <= abs(exact) * Fraction(2) ** -52 or error <= Fraction(5e-324)


@settings(max_examples=400, deadline=None)
@given(st.lists(FINITE, min_size=0, max_size=60))
def test_one_sum_is_the_exact_sum_rounded(terms: list[float]) -> None:
    exact = sum((Fraction(x) for x in terms), Fraction(0))
    got = exact_sum(np.array(terms, dtype=np.float64))
    assert isinstance(got, float)
    assert _close(got, exact), (got, float(exact))


@settings(max_examples=200, deadline=None)
@given(st.lists(st.tuples(FINITE, st.integers(0, 4)), min_size=0, max_size=60))
def test_group_sums_are_the_exact_sums_rounded(rows: list[tuple[float, int]]) -> None:
    terms = np.array([x for x, _ in rows], dtype=np.float64)
    groups = np.array([g for _, g in rows], dtype=np.int64)
    got = exact_sum(terms, groups, 6)
    assert got.shape == (6,)
    for g in range(6):
        exact = sum((Fraction(x) for x, h in rows if h == g), Fraction(0))
        assert _close(float(got[g]), exact), (g, got[g], float(exact))


@pytest.mark.parametrize("seed", range(5))
def test_cancellation_that_numpy_loses(seed: int) -> None:
    """Large terms cancelling around small ones: numpy's sum keeps none of the small ones."""
    rng = np.random.default_rng(seed)
    large = rng.normal(size=5_000) * 1e8
    small = rng.normal(size=5_000) * 1e-9
    terms = np.concatenate([large, small, -large])
    rng.shuffle(terms)
    assert exact_sum(terms) == math.fsum(terms)
    assert abs(float(np.sum(terms)) - math.fsum(terms)) > 1e3 * abs(math.fsum(terms)) * 2**-52


def test_integers_take_one_level_and_groups_without_terms_are_zero() -> None:
    terms = np.array([2.0**60, 1.0, -(2.0**60), 3.0])
    assert exact_sum(terms) == 4.0
    assert exact_sum(terms, np.array([0, 0, 0, 2]), 4).tolist() == [1.0, 0.0, 3.0, 0.0]
    assert exact_sum(np.array([])) == 0.0


PRODUCT_FACTORS = st.floats(
    allow_nan=False, allow_infinity=False, min_value=-1e150, max_value=1e150
).filter(lambda x: x == 0 or abs(x) > 1e-140)


@settings(max_examples=400, deadline=None)
@given(st.lists(st.tuples(PRODUCT_FACTORS, PRODUCT_FACTORS), min_size=1, max_size=40))
def test_products_split_into_two_doubles_exactly(pairs: list[tuple[float, float]]) -> None:
    a = np.array([x for x, _ in pairs])
    b = np.array([y for _, y in pairs])
    high, low = exact_products(a, b)
    for x, y, h, lo in zip(a, b, high, low, strict=True):
        assert Fraction(float(x)) * Fraction(float(y)) == Fraction(float(h)) + Fraction(float(lo))
        assert h == x * y  # the high part is the rounded product
