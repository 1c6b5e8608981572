"""Value ranges."""

from __future__ import annotations

import math
from fractions import Fraction

import numpy as np
import pytest

from rankstats import ValueRange


def test_contains() -> None:
    unit = ValueRange(lower=0, lower_inclusive=False, upper=1, upper_inclusive=True)
    assert 0.5 in unit
    assert 1 in unit
    assert 0 not in unit
    assert 1.5 not in unit
    assert math.nan not in unit
    assert "a" not in unit
    unbounded = ValueRange()
    assert -1e300 in unbounded
    assert math.inf not in ValueRange(upper=math.inf)
    assert 5 in ValueRange(lower=1, lower_inclusive=True, upper=math.inf)


def test_approximate_and_notate() -> None:
    unit = ValueRange(lower=0, lower_inclusive=False, upper=1, upper_inclusive=True)
    assert 1 + 1e-10 in unit.approximate(1e-9)
    assert 0.0 in unit.approximate(0.0)
    assert unit.notate() == "(0, 1]"
    assert ValueRange(lower=1, lower_inclusive=True, upper=math.inf).notate() == "[1, ∞)"
    assert ValueRange().notate() == "(-∞, ∞)"
    assert ValueRange(lower=0, lower_inclusive=True, upper=2).notate() == "[0, 2)"


@pytest.mark.parametrize("epsilon", [math.nan, math.inf, -1e-9, -math.inf])
def test_approximate_refuses_nan_infinite_and_negative_epsilon(epsilon: float) -> None:
    with pytest.raises(ValueError, match="epsilon must be a finite non-negative number"):
        ValueRange(lower=0, upper=1).approximate(epsilon)


@pytest.mark.parametrize("epsilon", ["0.1", None, True, 1j, [0.1]])
def test_approximate_refuses_non_numbers(epsilon: object) -> None:
    with pytest.raises(TypeError, match="epsilon must be a real number"):
        ValueRange(lower=0, upper=1).approximate(epsilon)  # type: ignore[arg-type]


def test_approximate_keeps_infinite_bounds_exclusive() -> None:
    at_least_one = ValueRange(lower=1, lower_inclusive=True, upper=math.inf)
    widened = at_least_one.approximate(1e-9)
    assert math.inf not in widened
    assert 1 - 1e-10 in widened
    assert widened.notate() == "[0.999999999, ∞)"
    assert -math.inf not in ValueRange(lower=-math.inf, upper=0).approximate(0.5)


def test_approximate_takes_numpy_scalars() -> None:
    unit = ValueRange(lower=0, upper=1)
    assert unit.approximate(np.float32(0.5)) == unit.approximate(0.5)
    assert 1.25 in unit.approximate(np.int64(1))


@pytest.mark.parametrize(
    "value", ["0.5", b"0.5", None, [0.5], np.array([0.5, 0.6]), 0.5 + 0j, object()]
)
def test_non_numbers_are_never_contained(value: object) -> None:
    assert value not in ValueRange()
    assert value not in ValueRange(lower=0, upper=1)


@pytest.mark.parametrize(
    "value", [np.float32(0.5), np.float16(0.5), np.int64(0), np.float64(0.5), Fraction(1, 2)]
)
def test_numpy_and_fraction_numbers_are_contained(value: object) -> None:
    assert value in ValueRange(lower=0, lower_inclusive=True, upper=1)


def test_nan_of_any_type_is_never_contained() -> None:
    for nan in (math.nan, np.float32("nan"), np.float64("nan"), np.float16("nan")):
        assert nan not in ValueRange()


def test_huge_integers() -> None:
    assert 10**400 in ValueRange(lower=1, upper=math.inf)
    assert 10**400 not in ValueRange(lower=1, upper=1e308)
    assert -(10**400) in ValueRange()
    assert ValueRange(lower=0, upper=10**400).approximate(1).upper == 10**400 + 1


@pytest.mark.parametrize(
    ("kwargs", "error", "pattern"),
    [
        ({"lower": math.nan}, ValueError, "lower must not be NaN"),
        ({"upper": math.nan}, ValueError, "upper must not be NaN"),
        ({"lower": math.inf}, ValueError, "lower must not be"),
        ({"upper": -math.inf}, ValueError, "upper must not be"),
        ({"lower": 2, "upper": 1}, ValueError, "lower must not exceed upper"),
        ({"upper": math.inf, "upper_inclusive": True}, ValueError, "cannot be inclusive"),
        ({"lower": -math.inf, "lower_inclusive": True}, ValueError, "cannot be inclusive"),
        ({"lower": "0"}, TypeError, "lower must be a real number"),
        ({"upper": True}, TypeError, "upper must be a real number"),
        ({"lower_inclusive": 1}, TypeError, "lower_inclusive must be a bool"),
    ],
)
def test_construction_refuses_nonsense(
    kwargs: dict[str, object], error: type, pattern: str
) -> None:
    with pytest.raises(error, match=pattern):
        ValueRange(**kwargs)  # type: ignore[arg-type]


def test_every_metric_range_is_valid_and_its_approximation_contains_it() -> None:
    from rankstats import metric_resolver

    for cls in metric_resolver:
        rng = cls.value_range
        widened = rng.approximate(1e-9)
        for bound, inclusive in (
            (rng.lower, rng.lower_inclusive),
            (rng.upper, rng.upper_inclusive),
        ):
            if bound is not None and math.isfinite(bound):
                assert bound in widened
                assert (bound in rng) == inclusive
