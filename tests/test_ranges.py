"""Value ranges."""

from __future__ import annotations

import math

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
