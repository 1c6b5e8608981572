"""The value range of a metric: an interval of the real line, possibly unbounded."""

from __future__ import annotations

import math
import numbers
from dataclasses import dataclass
from typing import Any

__all__ = ["ValueRange"]


@dataclass(frozen=True)
class ValueRange:
    """An interval of the real line; ``None`` marks an unbounded side.

    Parameters
    ----------
    lower, upper : float, optional
        The bounds; ``None`` (or an infinity) for an unbounded side.
    lower_inclusive, upper_inclusive : bool, default=False
        Whether the bound itself belongs to the range; an infinite bound never does.

    Raises
    ------
    TypeError
        If a bound is not a real number (or ``None``), or a flag is not a bool.
    ValueError
        If a bound is NaN, ``lower`` is ``+inf`` or ``upper`` is ``-inf``, ``lower > upper``, or
        an infinite bound is said to be inclusive.

    Examples
    --------
    >>> unit = ValueRange(lower=0, lower_inclusive=False, upper=1, upper_inclusive=True)
    >>> 1.0 in unit, 0.0 in unit
    (True, False)
    >>> unit.notate()
    '(0, 1]'
    >>> ValueRange(lower=1, lower_inclusive=True).notate()
    '[1, ∞)'
    """

    lower: float | None = None
    upper: float | None = None
    lower_inclusive: bool = False
    upper_inclusive: bool = False

    def __post_init__(self) -> None:
        for name in ("lower_inclusive", "upper_inclusive"):
            flag = getattr(self, name)
            if not isinstance(flag, bool):
                raise TypeError(f"{name} must be a bool, got {flag!r}")
        for name in ("lower", "upper"):
            bound: Any = getattr(self, name)
            if bound is None:
                continue
            if isinstance(bound, bool) or not isinstance(bound, numbers.Real):
                raise TypeError(f"{name} must be a real number or None, got {bound!r}")
            if bound != bound:
                raise ValueError(f"{name} must not be NaN")
            if not _finite(bound) and getattr(self, f"{name}_inclusive"):
                raise ValueError(f"{name}={bound} is infinite and cannot be inclusive")
        if self.lower is not None and self.lower == math.inf:
            raise ValueError("lower must not be +inf (use None or a finite number)")
        if self.upper is not None and self.upper == -math.inf:
            raise ValueError("upper must not be -inf (use None or a finite number)")
        if self.lower is not None and self.upper is not None and self.lower > self.upper:
            raise ValueError(f"lower must not exceed upper, got {self.lower!r} > {self.upper!r}")

    def __contains__(self, x: object) -> bool:
        """Whether the real number ``x`` lies in the range; NaN and non-numbers never do."""
        if not isinstance(x, numbers.Real):
            return False  # strings such as "0.5" included: they are not numbers
        value: Any = x
        if value != value:  # NaN, of any real type
            return False
        below = self.lower is not None and (
            value < self.lower or (value == self.lower and not self.lower_inclusive)
        )
        above = self.upper is not None and (
            value > self.upper or (value == self.upper and not self.upper_inclusive)
        )
        return not (below or above)

    def approximate(self, epsilon: float) -> ValueRange:
        """Widen the finite bounds by ``epsilon`` and include them, to test results with rounding.

        Examples
        --------
        >>> 1.0 + 1e-12 in ValueRange(lower=0, upper=1, upper_inclusive=True).approximate(1e-9)
        True

        Infinite bounds stay infinite and exclusive.

        Raises
        ------
        TypeError
            If ``epsilon`` is not a real number.
        ValueError
            If ``epsilon`` is NaN, infinite or negative.
        """
        given: Any = epsilon
        if isinstance(given, bool) or not isinstance(given, numbers.Real):
            raise TypeError(f"epsilon must be a real number, got {epsilon!r}")
        if not 0.0 <= float(epsilon) < math.inf:
            raise ValueError(f"epsilon must be a finite non-negative number, got {epsilon!r}")
        return ValueRange(
            lower=None if self.lower is None else self.lower - epsilon,
            upper=None if self.upper is None else self.upper + epsilon,
            lower_inclusive=_finite(self.lower),
            upper_inclusive=_finite(self.upper),
        )

    def notate(self) -> str:
        """Return the interval in the usual notation, e.g. ``(0, 1]`` or ``[1, ∞)``."""
        if self.lower is None or self.lower == -math.inf:
            left = "(-∞"
        else:
            left = ("[" if self.lower_inclusive else "(") + _number(self.lower)
        if self.upper is None or self.upper == math.inf:
            right = "∞)"
        else:
            right = _number(self.upper) + ("]" if self.upper_inclusive else ")")
        return f"{left}, {right}"


def _finite(bound: Any) -> bool:
    """Whether a bound is a finite number (a Python int of any size is)."""
    if bound is None:
        return False
    return isinstance(bound, numbers.Integral) or math.isfinite(bound)


def _number(x: float) -> str:
    value = float(x)
    return str(int(value)) if value.is_integer() and abs(value) < 1e16 else repr(value)
