"""The exceptions rankstats raises; every one is a :class:`ValueError`."""

from __future__ import annotations

__all__ = [
    "NoClosedFormError",
    "NoWeightSupportError",
    "UnknownMetricError",
]


class NoClosedFormError(ValueError):
    """A metric has no closed form for the requested null-model quantity.

    Pass ``num_samples=`` to fall back to a Monte-Carlo estimate.
    """


class NoWeightSupportError(ValueError):
    """Weights were given to a metric that does not support them."""


class UnknownMetricError(ValueError, KeyError):
    """A metric name could not be resolved.

    It is a :class:`KeyError` too, as class-resolver's own lookup error is, so code written
    against either keeps working. The message lists the closest valid names.
    """

    def __str__(self) -> str:
        # KeyError quotes its argument; show the message as written.
        return str(self.args[0]) if self.args else ""
