r"""The null moments as results: exact values, Monte-Carlo estimates and bootstrap intervals.

:class:`~rankstats.base.RankBasedMetric` delegates here everything that is not a closed form:
the Monte-Carlo fallback of its null methods (one sampling pass gives both moments), the
percentile-bootstrap intervals of ``numeric_*_with_ci``, and :func:`sample_null_values`, which
evaluates several metrics on the same sampled rank vectors. Inputs are clean (validated by the
caller); the functions only compute.
"""

from __future__ import annotations

import math
from collections.abc import Collection, Sequence
from typing import Literal, NamedTuple, Protocol

import numpy as np
import numpy.typing as npt

from rankstats.arrays import FloatArray, IntArray
from rankstats.errors import NoClosedFormError
from rankstats.null import sampling
from rankstats.null.sampling import Seed, bootstrap_interval, evaluate_on_samples
from rankstats.null.tasks import Tasks
from rankstats.validation import (
    check_generator,
    check_num_samples,
    check_variance_samples,
    validate_null_input,
)

__all__ = [
    "ConfidenceInterval",
    "NullMoments",
    "check_variance_samples",
    "monte_carlo_moments",
    "null_moment",
    "null_moments",
    "sample_null_values",
    "sampled_values",
    "with_confidence_interval",
]


class NullMoments(NamedTuple):
    r"""The expected value and variance of a metric under the null model.

    Examples
    --------
    >>> moments = NullMoments(expected_value=2.0, variance=0.25)
    >>> moments.std
    0.5
    >>> mean, variance = moments
    """

    expected_value: float
    variance: float

    @property
    def std(self) -> float:
        """The standard deviation, the square root of the variance."""
        return math.sqrt(self.variance)


class ConfidenceInterval(NamedTuple):
    """A Monte-Carlo estimate with a percentile-bootstrap confidence interval.

    It unpacks as ``lower, estimate, upper``, the order of PyKEEN's percentile array.
    """

    lower: float
    estimate: float
    upper: float


class _Metric(Protocol):
    """What the Monte-Carlo helpers need of a metric."""

    @property
    def supports_weights(self) -> bool: ...

    def _evaluate(
        self, ranks: FloatArray, num_candidates: IntArray | None, weights: FloatArray | None
    ) -> FloatArray | float: ...


class _NullMetric(_Metric, Protocol):
    """What the closed-form-or-Monte-Carlo dispatch needs of a metric."""

    def _expected_value(self, tasks: Tasks) -> float | None: ...

    def _variance(self, tasks: Tasks) -> float | None: ...

    def _moments(self, tasks: Tasks) -> tuple[float | None, float | None]: ...


def _no_closed_form(metric: object, which: str, weights: FloatArray | None) -> NoClosedFormError:
    qualifier = " for weighted ranks" if weights is not None else ""
    return NoClosedFormError(
        f"{metric!r} has no closed-form {which}{qualifier}; "
        f"pass num_samples= for a Monte-Carlo estimate"
    )


def null_moment(
    metric: _NullMetric,
    which: Literal["expected value", "variance"],
    tasks: Tasks,
    num_samples: int | None,
    generator: Seed,
) -> float:
    """One null moment: the closed form, else a Monte-Carlo estimate from ``num_samples``.

    Raises :class:`~rankstats.errors.NoClosedFormError` when there is no closed form and no
    ``num_samples``; input is clean (``num_samples`` already validated).
    """
    hook = metric._expected_value if which == "expected value" else metric._variance
    value = hook(tasks)
    if value is not None:
        return float(value)
    if num_samples is None:
        raise _no_closed_form(metric, which, tasks.weights)
    if which == "variance":
        num_samples = check_variance_samples(num_samples)
    rng = np.random.default_rng(generator)
    estimate = monte_carlo_moments(metric, *tasks.expanded(), num_samples, rng)
    return estimate.expected_value if which == "expected value" else estimate.variance


def null_moments(
    metric: _NullMetric,
    tasks: Tasks,
    num_samples: int | None,
    generator: Seed,
) -> NullMoments:
    """Both null moments from one computation: closed forms, else one set of samples for both."""
    mean, variance = metric._moments(tasks)
    if mean is not None and variance is not None:
        return NullMoments(float(mean), float(variance))
    if num_samples is None:
        which = "expected value" if mean is None else "variance"
        raise _no_closed_form(metric, which, tasks.weights)
    rng = np.random.default_rng(generator)
    return monte_carlo_moments(metric, *tasks.expanded(), check_variance_samples(num_samples), rng)


def sampled_values(
    metric: _Metric,
    num_candidates: IntArray,
    weights: FloatArray | None,
    num_samples: int,
    generator: np.random.Generator,
) -> FloatArray:
    """The metric on ``num_samples`` rank vectors drawn from the null, shape (num_samples,)."""
    values = evaluate_on_samples([metric], num_candidates, weights, num_samples, generator)
    return np.asarray(values[0], dtype=np.float64)


def monte_carlo_moments(
    metric: _Metric,
    num_candidates: IntArray,
    weights: FloatArray | None,
    num_samples: int,
    generator: np.random.Generator,
) -> NullMoments:
    """Estimate both null moments from one set of samples (the variance with ``ddof=1``).

    The samples are streamed in blocks (:func:`rankstats.null.sampling.monte_carlo_moments`):
    memory does not grow with ``num_samples``.
    """
    (estimate,) = sampling.monte_carlo_moments(
        [metric], num_candidates, weights, num_samples, generator
    )
    return NullMoments(estimate.expected_value, estimate.variance)


def with_confidence_interval(
    values: FloatArray,
    statistic: Literal["mean", "variance"],
    confidence_level: float,
    n_boot: int,
    generator: np.random.Generator,
) -> ConfidenceInterval:
    """The mean or (``ddof=1``) variance of ``values`` with its percentile-bootstrap interval."""
    estimate = float(values.mean() if statistic == "mean" else values.var(ddof=1))
    low, high = bootstrap_interval(
        values,
        statistic,
        confidence_level=confidence_level,
        num_resamples=n_boot,
        generator=generator,
    )
    return ConfidenceInterval(low, estimate, high)


class _NamedMetric(_Metric, Protocol):
    def __repr__(self) -> str: ...


def sample_null_values(
    metrics: Sequence[_NamedMetric | str] | Collection[_NamedMetric | str],
    num_candidates: npt.ArrayLike,
    num_samples: int,
    weights: npt.ArrayLike | None = None,
    generator: Seed = None,
    *,
    num_ranks: int | None = None,
) -> FloatArray:
    r"""Evaluate several metrics on the same rank vectors drawn from the null model.

    The Monte-Carlo counterpart of a results table: the samples are drawn once and shared, which
    is several times faster than one :meth:`~rankstats.base.RankBasedMetric.get_sampled_values`
    per metric.

    Parameters
    ----------
    metrics : sequence of RankBasedMetric or str
        The metrics, or their names (:func:`~rankstats.null.sampling.metric_list`); with
        ``weights``, each must support weights.
    num_candidates : int or array-like of shape (n,)
        The number of candidates :math:`C_i` of each task (a scalar needs ``num_ranks``).
    num_samples : int
        The number of rank vectors :math:`r_i \sim \mathcal{U}\{1..C_i\}` to draw.
    weights : array-like of shape (n,), optional
        Non-negative weights, not all zero.
    generator : int or numpy.random.Generator, optional
        Seed or generator.
    num_ranks : int, optional
        The number of tasks, with a scalar ``num_candidates``.

    Returns
    -------
    numpy.ndarray of shape (len(metrics), num_samples)
        Row ``j`` holds the values of ``metrics[j]``.

    Examples
    --------
    >>> from rankstats import ArithmeticMeanRank, HitsAtK
    >>> values = sample_null_values([ArithmeticMeanRank(), HitsAtK(k=1)], [2, 2], 1000, generator=0)
    >>> values.shape
    (2, 1000)
    """
    given: object = metrics
    if not isinstance(given, Collection) or isinstance(given, str):
        raise TypeError(
            f"metrics must be a sequence of metrics (or of their names), got "
            f"{type(given).__name__}: {given!r}; for one metric, pass [metric]"
        )
    items = sampling.metric_list(given)
    num_samples = check_num_samples(num_samples)
    check_generator(generator)
    unweighted = [m for m in items if not getattr(m, "supports_weights", True)]
    candidates, clean_weights = validate_null_input(
        num_candidates,
        weights,
        num_ranks=num_ranks,
        supports_weights=not unweighted,
        metric=repr(unweighted[0]) if unweighted else "this metric",
    )
    return evaluate_on_samples(
        items, candidates, clean_weights, num_samples, np.random.default_rng(generator)
    )
