"""Early stopping on a rank-based metric, in whichever direction the metric improves."""

from __future__ import annotations

import math
import numbers
from collections.abc import Mapping
from typing import Any

from rankstats.base import RankBasedMetric
from rankstats.registry import metric_resolver
from rankstats.validation import check_positive_int

__all__ = ["EarlyStopper"]


class EarlyStopper:
    r"""Stop training when a metric has not improved for ``patience`` evaluations in a row.

    Parameters
    ----------
    metric : str or RankBasedMetric, default="mrr"
        The result to watch: a key of :class:`~rankstats.evaluation.results.EvaluationResults`
        such as ``"mrr"`` or ``"tail.realistic.hits@10"``, or a metric. Whether larger values
        are better is taken from the metric's
        :attr:`~rankstats.RankBasedMetric.increasing` flag, so ``"mr"`` is minimised.
    patience : int, default=2
        The number of evaluations in a row without improvement after which to stop.
    relative_delta : float, default=0.0
        The relative improvement over the best value that counts as one.
    absolute_delta : float, default=0.0
        The absolute improvement that counts as one.
    larger_is_better : bool, optional
        Overrides the direction taken from the metric.

    Notes
    -----
    With :math:`s = +1` if larger is better and :math:`-1` otherwise, a value :math:`x`
    improves on the best value :math:`b` if

    .. math:: s (x - b) > \max(\delta_{\text{rel}} |b|, \delta_{\text{abs}}),

    which, unlike a factor :math:`(1 + \delta_{\text{rel}}) b`, also works for the negative
    values of adjusted indices and z-scores. The first value always improves.

    Examples
    --------
    >>> stopper = EarlyStopper("mr", patience=2)  # the mean rank: smaller is better
    >>> [stopper.report(value) for value in (50.0, 40.0, 41.0, 39.0, 45.0, 40.0)]
    [False, False, False, False, False, True]
    >>> stopper.best_value, stopper.best_epoch
    (39.0, 3)
    >>> restored = EarlyStopper.from_state_dict(stopper.state_dict())
    >>> restored.should_stop, restored.best_value
    (True, 39.0)
    """

    def __init__(
        self,
        metric: str | RankBasedMetric = "mrr",
        patience: int = 2,
        relative_delta: float = 0.0,
        *,
        absolute_delta: float = 0.0,
        larger_is_better: bool | None = None,
    ) -> None:
        if isinstance(metric, RankBasedMetric):
            resolved = metric
            self.key: str = metric.key
        elif isinstance(metric, str):
            *qualifiers, name = metric.split(".")
            if len(qualifiers) > 2:
                raise ValueError(
                    f"metric must be a key of the form [side.][rank_type.]metric, got {metric!r}"
                )
            resolved = metric_resolver.make(name)
            self.key = metric
        else:
            raise TypeError(f"metric must be a key or a metric, got {type(metric).__name__}")
        patience = check_positive_int(patience, "patience")
        deltas: dict[str, Any] = {"relative_delta": relative_delta}
        deltas["absolute_delta"] = absolute_delta
        for name, delta in deltas.items():
            if not isinstance(delta, numbers.Real) or not 0.0 <= float(delta) < math.inf:
                raise ValueError(f"{name} must be a finite non-negative number, got {delta!r}")
        if larger_is_better is not None and not isinstance(larger_is_better, bool):
            raise TypeError(f"larger_is_better must be a bool or None, got {larger_is_better!r}")
        self.metric = resolved
        self.patience = int(patience)
        self.relative_delta = float(relative_delta)
        self.absolute_delta = float(absolute_delta)
        self.larger_is_better = (
            resolved.increasing if larger_is_better is None else larger_is_better
        )
        self.best_value: float | None = None
        self.best_epoch: int | None = None
        #: the number of evaluations in a row without improvement
        self.bad_evaluations = 0
        #: every reported (epoch, value)
        self.history: list[tuple[int, float]] = []

    @property
    def should_stop(self) -> bool:
        """Whether the last ``patience`` evaluations brought no improvement."""
        return self.bad_evaluations >= self.patience

    @property
    def remaining_patience(self) -> int:
        """How many more evaluations without improvement are tolerated before stopping."""
        return max(self.patience - self.bad_evaluations, 0)

    def is_improvement(self, value: float) -> bool:
        """Whether ``value`` improves on the best value so far (the first value always does)."""
        if self.best_value is None:
            return True
        sign = 1.0 if self.larger_is_better else -1.0
        threshold = max(self.relative_delta * abs(self.best_value), self.absolute_delta)
        return sign * (value - self.best_value) > threshold

    def report(self, result: Any, epoch: int | None = None) -> bool:
        """Record an evaluation and return whether to stop.

        Parameters
        ----------
        result : EvaluationResults, mapping or float
            The evaluation: results (or any mapping, e.g. a flat dict) to look the key up in, or
            the value itself.
        epoch : int, optional
            The epoch of the evaluation; by default one after the previous one (0 at first).
            Epochs must increase.

        Returns
        -------
        bool
            :attr:`should_stop`.
        """
        value = self._value(result)
        epoch = self._next_epoch(epoch)
        if self.is_improvement(value):
            self.best_value, self.best_epoch = value, epoch
            self.bad_evaluations = 0
        else:
            self.bad_evaluations += 1
        self.history.append((epoch, value))
        return self.should_stop

    def _next_epoch(self, epoch: Any) -> int:
        if epoch is None:
            return 0 if not self.history else self.history[-1][0] + 1
        if isinstance(epoch, bool) or not isinstance(epoch, numbers.Integral):
            raise TypeError(f"epoch must be an integer, got {epoch!r}")
        if self.history and epoch <= self.history[-1][0]:
            raise ValueError(f"epochs must increase, got {epoch} after {self.history[-1][0]}")
        return int(epoch)

    def _value(self, result: Any) -> float:
        if isinstance(result, Mapping):
            try:
                raw = result[self.key]
            except KeyError as error:
                raise KeyError(f"the results have no value for {self.key!r}: {error}") from error
        else:
            raw = result
        try:
            if isinstance(raw, str | bytes):
                raise TypeError(raw)
            value = float(raw)
        except (TypeError, ValueError) as error:
            raise TypeError(
                f"result must be evaluation results, a mapping or a number, "
                f"got {type(result).__name__}"
            ) from error
        if not math.isfinite(value):
            raise ValueError(f"the value of {self.key!r} must be finite, got {value!r}")
        return value

    def state_dict(self) -> dict[str, Any]:
        """The configuration and progress as JSON-able Python objects."""
        return {
            "metric": self.key,
            "larger_is_better": self.larger_is_better,
            "patience": self.patience,
            "relative_delta": self.relative_delta,
            "absolute_delta": self.absolute_delta,
            "best_value": self.best_value,
            "best_epoch": self.best_epoch,
            "bad_evaluations": self.bad_evaluations,
            "history": [[epoch, value] for epoch, value in self.history],
        }

    def load_state_dict(self, state: Mapping[str, Any]) -> None:
        """Restore the progress saved by :meth:`state_dict` (best value, history, counters).

        The configuration (patience, deltas) stays as constructed; the watched key and the
        direction must match.
        """
        if state["metric"] != self.key or state["larger_is_better"] != self.larger_is_better:
            raise ValueError(
                f"the state watches {state['metric']!r} (larger_is_better="
                f"{state['larger_is_better']}), this stopper {self.key!r} "
                f"(larger_is_better={self.larger_is_better})"
            )
        self.best_value = None if state["best_value"] is None else float(state["best_value"])
        self.best_epoch = None if state["best_epoch"] is None else int(state["best_epoch"])
        self.bad_evaluations = int(state["bad_evaluations"])
        self.history = [(int(epoch), float(value)) for epoch, value in state["history"]]

    @classmethod
    def from_state_dict(cls, state: Mapping[str, Any]) -> EarlyStopper:
        """A stopper with the configuration and progress saved by :meth:`state_dict`."""
        stopper = cls(
            state["metric"],
            patience=state["patience"],
            relative_delta=state["relative_delta"],
            absolute_delta=state["absolute_delta"],
            larger_is_better=state["larger_is_better"],
        )
        stopper.load_state_dict(state)
        return stopper

    def __repr__(self) -> str:
        direction = "max" if self.larger_is_better else "min"
        return (
            f"EarlyStopper({self.key!r} ({direction}), patience={self.patience}, "
            f"best_value={self.best_value}, best_epoch={self.best_epoch})"
        )
