"""Early stopping on a rank-based metric, in whichever direction the metric improves.

A stopper is safe to share between threads: :meth:`EarlyStopper.report`,
:meth:`EarlyStopper.state_dict` and :meth:`EarlyStopper.load_state_dict` hold a lock, so
concurrent reports are serialised (in an order the threads decide; give explicit epochs if the
order matters).
"""

from __future__ import annotations

import math
import numbers
import threading
from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np

from rankstats.base import RankBasedMetric
from rankstats.errors import UnknownMetricError
from rankstats.evaluation.keys import ParsedKey, parse_key, try_parse_key
from rankstats.evaluation.results import DEFAULT_RANK_TYPE, SIDE_BOTH
from rankstats.registry import metric_resolver
from rankstats.validation import check_positive_int

__all__ = ["EarlyStopper"]

#: the version of the layout of :meth:`EarlyStopper.state_dict`
STATE_VERSION = 1
_STATE_KEYS = frozenset(
    {
        "version",
        "metric",
        "larger_is_better",
        "patience",
        "relative_delta",
        "absolute_delta",
        "best_value",
        "best_epoch",
        "bad_evaluations",
        "history",
    }
)
_REQUIRED_STATE_KEYS = frozenset(
    {"metric", "larger_is_better", "best_value", "best_epoch", "bad_evaluations", "history"}
)


class EarlyStopper:
    r"""Stop training when a metric has not improved for ``patience`` evaluations in a row.

    Parameters
    ----------
    metric : str or RankBasedMetric, default="mrr"
        The result to watch: a key of :class:`~rankstats.evaluation.results.EvaluationResults`
        such as ``"mrr"`` or ``"tail.realistic.hits@10"``, or a metric. Whether larger values
        are better is taken from the metric's
        :attr:`~rankstats.RankBasedMetric.increasing` flag, so ``"mr"`` is minimised. In a
        plain mapping such as ``results.to_dict()`` or PyKEEN's ``to_flat_dict()``, the value is
        found by the key itself or by any key naming the same metric, side and rank type
        (``"both.realistic.inverse_harmonic_mean_rank"`` for ``"mrr"``).
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
    values of adjusted indices and z-scores. The first value always improves. (PyKEEN's
    :math:`|x - b| > \delta_{\text{rel}} \max(|x|, |b|)` differs slightly: see the PyKEEN guide.)

    Values must be finite: a NaN or infinite value raises a :class:`ValueError` rather than
    counting silently as no improvement. Epochs are non-negative integers that increase from
    report to report; by default each report is one epoch after the previous one, starting at 0.

    A failed call (bad value, epoch or state) leaves the stopper unchanged. The stopper is safe to
    use from several threads.

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
        if isinstance(metric, type) and issubclass(metric, RankBasedMetric):
            metric = metric_resolver.make(metric)
        if isinstance(metric, RankBasedMetric):
            resolved = metric
            self.key: str = metric.key
        elif isinstance(metric, str):
            parsed = try_parse_key(metric)
            if parsed is None:
                reason = ""
                try:  # an unknown name raises here, with suggestions of close ones
                    parse_key(metric)
                except UnknownMetricError:
                    raise
                except KeyError as error:  # why it is no key: a bad cut-off, no name, ...
                    reason = f" ({error.args[0]})"
                raise ValueError(
                    f"metric must be a key of the form [side.][rank_type.]metric[.k], with each "
                    f"of side and rank type at most once, and k only for a metric with a "
                    f"cut-off, got {metric!r}{reason}"
                )
            resolved = parsed[2]
            self.key = metric
        else:
            raise TypeError(f"metric must be a key or a metric, got {type(metric).__name__}")
        patience = check_positive_int(patience, "patience")
        deltas: dict[str, Any] = {"relative_delta": relative_delta}
        deltas["absolute_delta"] = absolute_delta
        for name, delta in deltas.items():
            if isinstance(delta, bool) or not isinstance(delta, numbers.Real):
                raise TypeError(f"{name} must be a finite non-negative number, got {delta!r}")
            expected = f"{name} must be a finite non-negative number"
            if not 0.0 <= _as_float(delta, expected) < math.inf:
                raise ValueError(f"{expected}, got {delta!r}")
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
        self._lock = threading.RLock()

    def __getstate__(self) -> dict[str, Any]:
        state = self.__dict__.copy()
        del state["_lock"]
        return state

    def __setstate__(self, state: dict[str, Any]) -> None:
        self.__dict__.update(state)
        self._lock = threading.RLock()

    @property
    def should_stop(self) -> bool:
        """Whether the last ``patience`` evaluations brought no improvement."""
        return self.bad_evaluations >= self.patience

    @property
    def remaining_patience(self) -> int:
        """How many more evaluations without improvement are tolerated before stopping."""
        return max(self.patience - self.bad_evaluations, 0)

    def is_improvement(self, value: float) -> bool:
        """Whether ``value`` improves on the best value so far (the first value always does).

        Raises
        ------
        TypeError
            If ``value`` is not a real number.
        ValueError
            If ``value`` is NaN, infinite or beyond the range of a float.
        """
        return _improves(
            _check_value(value, "value"),
            self.best_value,
            self.larger_is_better,
            self.relative_delta,
            self.absolute_delta,
        )

    def report(self, result: Any, epoch: int | None = None) -> bool:
        """Record an evaluation and return whether to stop.

        Parameters
        ----------
        result : EvaluationResults, mapping or float
            The evaluation: results, any mapping of keys to values (e.g. ``results.to_dict()``
            or PyKEEN's ``to_flat_dict()``), an object with a ``to_flat_dict()`` method (PyKEEN's
            results), or the value itself.
        epoch : int, optional
            The epoch of the evaluation, a non-negative integer; by default one after the
            previous one (0 at first). Epochs must increase.

        Returns
        -------
        bool
            :attr:`should_stop`.

        Raises
        ------
        KeyError
            If the results hold no value for the watched key (the message lists what was
            looked for).
        ValueError
            If the value is not finite, the epoch does not increase, or several keys of a
            mapping match.
        TypeError
            If the result or the epoch has the wrong type.
        """
        with self._lock:
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
        checked = _check_epoch(epoch, "epoch")
        if self.history and checked <= self.history[-1][0]:
            raise ValueError(f"epochs must increase, got {checked} after {self.history[-1][0]}")
        return checked

    def _value(self, result: Any) -> float:
        if not isinstance(result, Mapping) and callable(getattr(result, "to_flat_dict", None)):
            result = result.to_flat_dict()  # e.g. PyKEEN's MetricResults
            if not isinstance(result, Mapping):
                raise TypeError(
                    f"to_flat_dict() of the results must return a mapping, "
                    f"got {type(result).__name__}"
                )
        raw = self._lookup(result) if isinstance(result, Mapping) else result
        # a real number: a Python or numpy scalar, or a 0-d array (not a bool, a string or an
        # array of several values, which float() would take with a warning or by accident)
        if isinstance(raw, np.ndarray) and raw.ndim == 0:
            raw = raw[()]
        if isinstance(raw, bool | np.bool_) or not isinstance(raw, numbers.Real):
            shown = type(raw).__name__ if raw is not result else type(result).__name__
            raise TypeError(
                f"result must be evaluation results, a mapping or a number, got {shown}"
                + (f" for the key {self.key!r}" if raw is not result else "")
            )
        value = _as_float(raw, f"the value of {self.key!r} must be finite")
        if not math.isfinite(value):
            raise ValueError(f"the value of {self.key!r} must be finite, got {value!r}")
        return value

    def _lookup(self, result: Mapping[Any, Any]) -> Any:
        """The watched value in a mapping: by the key itself, else by a key of the same meaning."""
        try:
            return result[self.key]
        except (KeyError, TypeError, ValueError) as error:
            missing = error
        match = self._matching_key(result)
        if match is None:
            sample = ", ".join(repr(key) for key in list(result)[:8])
            more = ", ..." if len(result) > 8 else ""
            raise KeyError(
                f"the results have no value for {self.key!r}: looked for that key and for keys "
                f"naming {self._wanted()}, e.g. {self._canonical()!r}; the results have the keys "
                f"{sample}{more}"
            ) from missing
        return result[match]

    def _target(self) -> ParsedKey:
        parsed = try_parse_key(self.key)
        if parsed is None:  # a metric instance's key always parses; a str key was parsed in init
            return None, None, self.metric
        return parsed

    def _wanted(self) -> str:
        side, rank_type, metric = self._target()
        return (
            f"the metric {metric.key!r} for side {side or SIDE_BOTH!r} and rank type "
            f"{rank_type or DEFAULT_RANK_TYPE!r}"
        )

    def _canonical(self) -> str:
        side, rank_type, metric = self._target()
        return f"{side or SIDE_BOTH}.{rank_type or DEFAULT_RANK_TYPE}.{metric.key}"

    def _matching_key(self, result: Mapping[Any, Any]) -> Any:
        """The one key of ``result`` with the watched metric, side and rank type, or ``None``."""
        side, rank_type, metric = self._target()
        found: list[tuple[Any, str, str]] = []
        for key in result:
            if not isinstance(key, str):
                continue
            parsed = try_parse_key(key)
            if parsed is None or parsed[2] != metric:
                continue
            key_side, key_type = parsed[0] or SIDE_BOTH, parsed[1] or DEFAULT_RANK_TYPE
            if side is not None and key_side != side:
                continue
            if rank_type is not None and key_type != rank_type:
                continue
            found.append((key, key_side, key_type))
        # an unspecified side or rank type prefers the default, else the only one there is
        if side is None:
            found = _prefer(found, 1, SIDE_BOTH)
        if rank_type is None:
            found = _prefer(found, 2, DEFAULT_RANK_TYPE)
        if not found:
            return None
        if len(found) > 1:
            raise ValueError(
                f"the results have several keys for {self.key!r}: "
                f"{', '.join(repr(item[0]) for item in found)}; watch one of them"
            )
        return found[0][0]

    def state_dict(self) -> dict[str, Any]:
        """The configuration and progress as JSON-able Python objects."""
        with self._lock:
            return {
                "version": STATE_VERSION,
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

        The configuration (patience, deltas) stays as constructed; the direction must match,
        and the state's key must name the same metric, side and rank type as this stopper's
        (synonyms and spellings alike: ``"mrr"`` and ``"inverse_harmonic_mean_rank"``, but not
        ``"both.realistic.mrr"``, which may find another value than ``"mrr"``). Everything
        is checked before anything changes: on any error the stopper is left as it was. The
        best value, its epoch and the count of evaluations without improvement must be what
        :meth:`report` would have made of the history, with the state's direction and deltas
        (this stopper's deltas where the state has none).

        Raises
        ------
        ValueError
            If the state has unknown or missing keys, another version, another key or direction,
            a NaN or infinite value, epochs that do not increase, or counters that do not agree
            with the history.
        TypeError
            If the state or one of its entries has the wrong type.
        """
        best_value, best_epoch, bad_evaluations, history = _check_state(
            state, self.relative_delta, self.absolute_delta
        )
        with self._lock:
            if (
                not self._watches(state["metric"])
                or state["larger_is_better"] != self.larger_is_better
            ):
                raise ValueError(
                    f"the state watches {state['metric']!r} (larger_is_better="
                    f"{state['larger_is_better']}), this stopper {self.key!r} "
                    f"(larger_is_better={self.larger_is_better})"
                )
            self.best_value, self.best_epoch = best_value, best_epoch
            self.bad_evaluations = bad_evaluations
            self.history = history

    def _watches(self, key: str) -> bool:
        """Whether ``key`` names what this stopper watches (synonyms and spellings alike)."""
        if key == self.key:
            return True
        parsed = try_parse_key(key)
        return parsed is not None and parsed == self._target()

    @classmethod
    def from_state_dict(cls, state: Mapping[str, Any]) -> EarlyStopper:
        """A stopper with the configuration and progress saved by :meth:`state_dict`.

        The state is checked as by :meth:`load_state_dict`; missing deltas are 0 and a missing
        patience is 2, the defaults of the constructor.

        Raises
        ------
        ValueError
            If the state has unknown or missing keys, another version, a NaN or infinite value,
            epochs that do not increase, or counters that do not agree with the history.
        TypeError
            If the state or one of its entries has the wrong type.
        """
        _check_state(state)
        stopper = cls(
            state["metric"],
            patience=state.get("patience", 2),
            relative_delta=state.get("relative_delta", 0.0),
            absolute_delta=state.get("absolute_delta", 0.0),
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


def _prefer(
    found: list[tuple[Any, str, str]], position: int, default: str
) -> list[tuple[Any, str, str]]:
    """Keep the matches with the default side / rank type if there are any, else all of them.

    Several matches left over are reported as ambiguous by the caller.
    """
    return [item for item in found if item[position] == default] or found


def _check_epoch(epoch: Any, name: str) -> int:
    if isinstance(epoch, bool) or not isinstance(epoch, numbers.Integral):
        raise TypeError(f"{name} must be an integer, got {epoch!r}")
    if epoch < 0:
        raise ValueError(f"{name} must be a non-negative integer, got {epoch!r}")
    return int(epoch)


def _check_count(value: Any, name: str) -> int:
    if isinstance(value, bool) or not isinstance(value, numbers.Integral):
        raise TypeError(f"{name} must be an integer, got {value!r}")
    if value < 0:
        raise ValueError(f"{name} must be a non-negative integer, got {value!r}")
    return int(value)


def _check_value(value: Any, name: str) -> float:
    if isinstance(value, bool) or not isinstance(value, numbers.Real):
        raise TypeError(f"{name} must be a real number, got {value!r}")
    result = _as_float(value, f"{name} must be finite")
    if not math.isfinite(result):
        raise ValueError(f"{name} must be finite, got {result!r}")
    return result


def _as_float(value: Any, expected: str) -> float:
    """``float(value)`` of a real number, or a ValueError ``"{expected}, got ..."`` if it overflows.

    A Python integer (or fraction) beyond the range of a float raises :class:`OverflowError` in
    ``float()``; it is reported as any other value out of range, without printing its digits.
    """
    try:
        return float(value)
    except OverflowError:
        if isinstance(value, numbers.Integral):
            digits = int(math.log10(abs(int(value)))) + 1
            shown = f"an integer of {digits} digits"
        else:
            shown = f"a {type(value).__name__}"
        raise ValueError(f"{expected}, got {shown}, beyond the range of a float") from None


def _improves(
    value: float,
    best_value: float | None,
    larger_is_better: bool,
    relative_delta: float,
    absolute_delta: float,
) -> bool:
    """Whether ``value`` improves on ``best_value`` (``None``: none yet), the rule of report()."""
    if best_value is None:
        return True
    sign = 1.0 if larger_is_better else -1.0
    threshold = max(relative_delta * abs(best_value), absolute_delta)
    return sign * (value - best_value) > threshold


def _check_state(
    state: Any, relative_delta: float = 0.0, absolute_delta: float = 0.0
) -> tuple[float | None, int | None, int, list[tuple[int, float]]]:
    """Validate a saved state completely, and return its progress as clean Python objects.

    The progress is the best value and epoch, the count of reports without improvement and the
    history. The best value and epoch and the count must be those that replaying the history
    with :meth:`EarlyStopper.report`'s rule gives, in the state's direction and with its deltas
    (``relative_delta`` and ``absolute_delta`` where the state has none).
    """
    if not isinstance(state, Mapping):
        raise TypeError(f"state must be a mapping from state_dict(), got {type(state).__name__}")
    keys = set(state)
    unknown = sorted(map(str, keys - _STATE_KEYS))
    if unknown:
        raise ValueError(f"state has unknown keys {unknown}; expected those of state_dict()")
    missing = sorted(_REQUIRED_STATE_KEYS - keys)
    if missing:
        raise ValueError(f"state lacks the keys {missing}")
    version = state.get("version", STATE_VERSION)
    if version != STATE_VERSION or isinstance(version, bool):
        raise ValueError(
            f"state has version {version!r}; this version of rankstats reads {STATE_VERSION}"
        )
    if not isinstance(state["metric"], str):
        raise TypeError(f"state['metric'] must be a str, got {state['metric']!r}")
    if not isinstance(state["larger_is_better"], bool):
        raise TypeError(
            f"state['larger_is_better'] must be a bool, got {state['larger_is_better']!r}"
        )
    best_value = state["best_value"]
    best_epoch = state["best_epoch"]
    if (best_value is None) != (best_epoch is None):
        raise ValueError(
            f"state['best_value'] and state['best_epoch'] must both be None or both be set, got "
            f"{best_value!r} and {best_epoch!r}"
        )
    if best_value is not None:
        best_value = _check_value(best_value, "state['best_value']")
        best_epoch = _check_epoch(best_epoch, "state['best_epoch']")
    bad = _check_count(state["bad_evaluations"], "state['bad_evaluations']")
    raw_history = state["history"]
    if isinstance(raw_history, str | bytes) or not isinstance(raw_history, Sequence):
        raise TypeError(
            f"state['history'] must be a list of [epoch, value] pairs, got {raw_history!r}"
        )
    history: list[tuple[int, float]] = []
    for index, entry in enumerate(raw_history):
        name = f"state['history'][{index}]"
        if isinstance(entry, str | bytes) or not isinstance(entry, Sequence) or len(entry) != 2:
            raise TypeError(f"{name} must be an [epoch, value] pair, got {entry!r}")
        epoch = _check_epoch(entry[0], f"{name}[0] (an epoch)")
        value = _check_value(entry[1], f"{name}[1] (a value)")
        if history and epoch <= history[-1][0]:
            raise ValueError(
                f"the epochs of state['history'] must increase, got {epoch} at {index}"
            )
        history.append((epoch, value))
    for name in ("patience",):
        if name in state:
            check_positive_int(state[name], f"state[{name!r}]")
    deltas = {"relative_delta": relative_delta, "absolute_delta": absolute_delta}
    for name in deltas:
        if name in state:
            delta = _check_value(state[name], f"state[{name!r}]")
            if delta < 0:
                raise ValueError(f"state[{name!r}] must be non-negative, got {delta!r}")
            deltas[name] = delta
    if not history:
        if best_value is not None or bad:
            raise ValueError(
                "state['history'] is empty, so state['best_value'] must be None and "
                "state['bad_evaluations'] 0"
            )
        return best_value, best_epoch, bad, history
    # the counters follow from the history: replay it with the rule of report()
    larger_is_better = state["larger_is_better"]
    replayed: float | None = None
    replayed_epoch = 0
    replayed_bad = 0
    for epoch, value in history:
        if _improves(value, replayed, larger_is_better, **deltas):
            replayed, replayed_epoch, replayed_bad = value, epoch, 0
        else:
            replayed_bad += 1
    rule = (
        f"as report() finds it with larger_is_better={larger_is_better}, "
        f"relative_delta={deltas['relative_delta']!r}, "
        f"absolute_delta={deltas['absolute_delta']!r}"
    )
    if best_value != replayed:
        raise ValueError(
            f"state['best_value'] must be the best value of state['history'] ({replayed!r} at "
            f"epoch {replayed_epoch}, {rule}), got {best_value!r}"
        )
    if best_epoch != replayed_epoch:
        raise ValueError(
            f"state['best_epoch'] must be the epoch of the best value in state['history'] "
            f"({replayed_epoch}, {rule}), got {best_epoch!r}"
        )
    if bad != replayed_bad:
        raise ValueError(
            f"state['bad_evaluations'] must be the number of reports after the best one "
            f"({replayed_bad}), got {bad}"
        )
    return best_value, best_epoch, bad, history
