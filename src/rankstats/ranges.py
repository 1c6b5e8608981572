"""The value range of a metric: an interval of the real line, possibly unbounded."""

from __future__ import annotations

import math
from dataclasses import dataclass

__all__ = ["ValueRange"]


@dataclass(frozen=True)
class ValueRange:
    """An interval of the real line; ``None`` marks an unbounded side.

    Parameters
    ----------
    lower, upper : float, optional
        The bounds; ``None`` (or an infinity) for an unbounded side.
    lower_inclusive, upper_inclusive : bool, default=False
        Whether the bound itself belongs to the range.

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

    def __contains__(self, x: object) -> bool:
        """Whether the number ``x`` lies in the range (NaN never does)."""
        if not isinstance(x, int | float):
            try:
                x = float(x)  # type: ignore[arg-type]
            except (TypeError, ValueError):
                return False
        assert isinstance(x, int | float)
        if math.isnan(x):
            return False
        below = self.lower is not None and (
            x < self.lower or (x == self.lower and not self.lower_inclusive)
        )
        above = self.upper is not None and (
            x > self.upper or (x == self.upper and not self.upper_inclusive)
        )
        return not (below or above)

    def approximate(self, epsilon: float) -> ValueRange:
        """Widen the finite bounds by ``epsilon`` and include them, to test results with rounding.

        Examples
        --------
        >>> 1.0 + 1e-12 in ValueRange(lower=0, upper=1, upper_inclusive=True).approximate(1e-9)
        True
        """
        if epsilon < 0:
            raise ValueError(f"epsilon must be non-negative, got {epsilon!r}")
        return ValueRange(
            lower=None if self.lower is None else self.lower - epsilon,
            upper=None if self.upper is None else self.upper + epsilon,
            lower_inclusive=self.lower is not None,
            upper_inclusive=self.upper is not None,
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


def _number(x: float) -> str:
    return str(int(x)) if float(x).is_integer() else repr(x)
