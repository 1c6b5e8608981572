r"""One cell of the results (a side, or a group of it): values and null-model quantities.

:class:`NullModels` computes each metric's null moments once per distinct multiset of candidate
counts (shared by rank types, sides with the same candidates and the metrics derived from the
same base), with a Monte-Carlo estimate where there is no closed form and one was asked for;
:func:`cell_rows` turns a cell into result rows. :mod:`rankstats.evaluation.grouped` uses the same
pieces for the metrics it cannot vectorise over groups.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from rankstats.base import RankBasedMetric
from rankstats.errors import NoClosedFormError
from rankstats.evaluation.chance_rows import exact_cell_difference
from rankstats.evaluation.results import METHOD_EXACT, METHOD_MONTE_CARLO, ResultRow
from rankstats.evaluation.scores import RANK_EXPECTED
from rankstats.evaluation.tables import WEIGHT, CellStatistics
from rankstats.evaluation.terms import exact_chance_sums
from rankstats.evaluation.ties import needs_task_weights, tie_expectation
from rankstats.metrics.derived import (
    DerivedRankBasedMetric,
    ExpectationNormalizedMetric,
    accurate_difference,
)
from rankstats.null.sampling import monte_carlo_moments
from rankstats.null.tasks import Tasks

__all__ = [
    "NO_CANDIDATES",
    "MonteCarloPlan",
    "NullModels",
    "base_value",
    "base_value_gap",
    "cell_rows",
]


def _null_moments(
    metric: RankBasedMetric, tasks: Tasks
) -> tuple[float | None, float | None, float | None]:
    """Both closed-form moments and the gap ``1 - E`` from the metric's joint hook.

    The gap is computed without forming ``E`` where the metric can; ``None`` where there is none.
    """
    try:
        expected, variance, gap = metric._moments_and_gap(tasks)
    except NoClosedFormError:
        return None, None, None
    return (
        None if expected is None else float(expected),
        None if variance is None else float(variance),
        None if gap is None else float(gap),
    )


@dataclass(frozen=True)
class _Null:
    r"""The null-model quantities of one metric for one multiset of candidate counts.

    ``gap`` is :math:`1 - \mathbb{E}` of a base metric where computed without forming
    :math:`\mathbb{E}` (``None`` otherwise); ``defined`` says whether a derived metric is
    defined here (its value then follows from its base's by :meth:`value`).
    """

    expected_value: float | None
    variance: float | None
    gap: float | None = None
    method: str | None = METHOD_EXACT
    standard_error: float | None = None
    note: str | None = None
    defined: bool = True


NO_CANDIDATES = _Null(
    None,
    None,
    method=None,
    note="no null model: num_candidates (the number of candidates of each task) was not given",
    defined=False,
)


@dataclass(frozen=True)
class MonteCarloPlan:
    """How to estimate null moments without a closed form: ``num_samples`` draws per cell."""

    num_samples: int
    generator: np.random.Generator
    progress: bool | None = False


class NullModels:
    """Null-model quantities, computed once per metric and distinct multiset of candidates.

    Without a closed form, a :class:`MonteCarloPlan` gives Monte-Carlo estimates, one shared
    draw for every metric of a cell that needs one (:meth:`prepare`); without a plan the
    quantities are ``None`` with a note saying why.

    An instance is used by one call of :func:`compute_results` only, so no state is shared
    between threads.
    """

    def __init__(self, monte_carlo: MonteCarloPlan | None = None) -> None:
        # keyed by the id of one canonical instance per distinct metric (equal metrics, such as
        # the mean rank inside AMRI and zMR, share it): hashing a metric costs more than a lookup
        self._canonical: dict[int, RankBasedMetric] = {}
        self._by_value: dict[RankBasedMetric, RankBasedMetric] = {}
        self._cache: dict[tuple[int, tuple[bytes, ...]], _Null] = {}
        self._monte_carlo = monte_carlo

    @property
    def samples(self) -> bool:
        """Whether a Monte-Carlo plan estimates the moments that have no closed form."""
        return self._monte_carlo is not None

    def canonical(self, metric: RankBasedMetric) -> RankBasedMetric:
        """One instance per distinct metric, looked up by the object's id (no hashing)."""
        canonical = self._canonical.get(id(metric))
        if canonical is None:
            canonical = self._canonical[id(metric)] = self._by_value.setdefault(metric, metric)
        return canonical

    def prepare(self, metrics: Sequence[RankBasedMetric], cell: CellStatistics) -> None:
        """Compute the base metrics' quantities for a cell, sampling once for all that need it."""
        if cell.candidates is None:
            return
        bases = [m.base if isinstance(m, DerivedRankBasedMetric) else m for m in metrics]
        missing: dict[RankBasedMetric, tuple[float | None, float | None]] = {}
        for metric in dict.fromkeys(self.canonical(b) for b in bases):
            key = (id(metric), cell.candidate_key)
            if key in self._cache:
                continue
            expected, variance, gap = _null_moments(metric, cell.tasks)
            if expected is None or variance is None:
                missing[metric] = (expected, variance)
            else:
                self._cache[key] = _Null(expected, variance, gap)
        if not missing:
            return
        if self._monte_carlo is None or cell.tasks.bundled:
            qualifier = " for weighted ranks" if cell.tasks.weights is not None else ""
            for metric, (expected, variance) in missing.items():
                which = "expected value and variance" if expected is None else "variance"
                if variance is not None:
                    which = "expected value"
                self._cache[(id(metric), cell.candidate_key)] = _Null(
                    expected,
                    variance,
                    method=None if expected is None and variance is None else METHOD_EXACT,
                    note=f"no closed-form {which}{qualifier}; pass num_samples= for a "
                    f"Monte-Carlo estimate (--samples N on the command line)",
                )
            return
        plan = self._monte_carlo
        estimates = monte_carlo_moments(
            list(missing),
            *cell.tasks.expanded(),
            plan.num_samples,
            plan.generator,
            progress=plan.progress,
        )
        for (metric, (expected, variance)), estimate in zip(
            missing.items(), estimates, strict=True
        ):
            self._cache[(id(metric), cell.candidate_key)] = _Null(
                estimate.expected_value if expected is None else expected,
                estimate.variance if variance is None else variance,
                method=METHOD_MONTE_CARLO,
                standard_error=estimate.standard_error if expected is None else None,
                note=f"Monte-Carlo estimate from {plan.num_samples} samples (no closed form)",
            )

    def get(self, metric: RankBasedMetric, cell: CellStatistics) -> _Null:
        """The quantities of ``metric`` for the candidates of ``cell``."""
        if cell.candidates is None:
            return NO_CANDIDATES
        canonical = self.canonical(metric)
        key = (id(canonical), cell.candidate_key)
        found = self._cache.get(key)
        if found is None:
            if isinstance(metric, DerivedRankBasedMetric):
                found = self._derived(metric, cell)
            else:
                self.prepare([canonical], cell)
                found = self._cache[key]
            self._cache[key] = found
        return found

    def _derived(self, metric: DerivedRankBasedMetric, cell: CellStatistics) -> _Null:
        """Transform the base metric's cached moments: the base's are computed once for all."""
        base = self.get(metric.base, cell)
        if base.expected_value is None:
            return _Null(None, None, method=None, note=base.note, defined=False)
        try:
            expected, variance = metric._moments_from(base.expected_value, base.variance, base.gap)
        except NoClosedFormError:
            return _Null(None, None, method=None, note=base.note, defined=False)
        except ValueError as error:  # undefined here
            return _Null(None, None, method=None, note=str(error), defined=False)
        note = None
        if base.method == METHOD_MONTE_CARLO:
            note = (
                f"coefficients from a Monte-Carlo estimate of the null moments of {metric.base.key}"
            )
        return _Null(expected, variance, method=base.method, note=note)


def base_value_gap(metric: RankBasedMetric, cell: CellStatistics, rank_type: str) -> float | None:
    """:math:`1 - M` of a (non-derived) metric computed directly, where the metric can."""
    if rank_type == RANK_EXPECTED or not metric.supports_weights:
        return None
    values, weights = cell.histogram(rank_type)
    gap = metric._value_gap(values, None, weights)
    return None if gap is None else float(np.asarray(gap))


def base_value(metric: RankBasedMetric, cell: CellStatistics, rank_type: str) -> float:
    """The value of a (non-derived) metric on the cell's ranks of one type."""
    if rank_type == RANK_EXPECTED:
        pairs = cell.pairs
        if cell.tie_pairs is not None and needs_task_weights(metric):
            pairs = cell.tie_pairs
        assert pairs is not None
        weights = pairs.columns.get(WEIGHT)
        return tie_expectation(
            metric,
            pairs.columns["optimistic"],
            pairs.columns["pessimistic"],
            pairs.count,
            weights,
        )
    values, weights = cell.histogram(rank_type)
    if metric.supports_weights:
        return float(np.asarray(metric._evaluate(values, None, weights)))
    # no weights (the count): the histogram's weights are then integer counts
    return metric._evaluate_histogram(values, weights)


@dataclass(frozen=True)
class _MetricPlan:
    """What the rows of one metric in one cell share, whatever the rank type.

    ``base_key`` identifies the base metric's values (equal bases share them through one canonical
    instance); ``derived`` is the metric if it is a derived one (else ``None``), ``base_null`` its
    base's null quantities.
    """

    base: RankBasedMetric
    base_key: int
    null: _Null
    derived: DerivedRankBasedMetric | None = None
    base_null: _Null | None = None


def _metric_plan(metric: RankBasedMetric, cell: CellStatistics, null: NullModels) -> _MetricPlan:
    moments = null.get(metric, cell)
    if isinstance(metric, DerivedRankBasedMetric):
        base = metric.base
        return _MetricPlan(base, id(null.canonical(base)), moments, metric, null.get(base, cell))
    return _MetricPlan(metric, id(null.canonical(metric)), moments)


def _derived_value(
    plan: _MetricPlan,
    base_value: float,
    value_gap: float | None,
    cell: CellStatistics,
    rank_type: str,
) -> float:
    """A derived metric's value from its base's value (and gap ``1 - M``); NaN if undefined.

    It is the metric's own transformation, from the gaps where they carry the digits, with
    :math:`M - E` taken as one exact sum over the cell's rows where those lose digits
    (:func:`exact_cell_difference`).
    """
    metric, base = plan.derived, plan.base_null
    if metric is None or base is None or not plan.null.defined:
        return math.nan
    assert base.expected_value is not None  # defined
    return metric._value_from(
        base_value,
        base.expected_value,
        base.variance,
        base.gap,
        value_gap=value_gap,
        exact=exact_cell_difference(plan.base, cell, rank_type),
    )


def cell_rows(
    side: str,
    cell: CellStatistics,
    plan: Sequence[tuple[str, Sequence[RankBasedMetric]]],
    null: NullModels,
) -> list[ResultRow]:
    """The result rows of one cell: every rank type of the plan, every metric it lists."""
    metrics = list(dict.fromkeys(m for _, metrics in plan for m in metrics))
    null.prepare(metrics, cell)
    # what does not depend on the rank type, once per metric
    shared = {id(metric): _metric_plan(metric, cell, null) for metric in metrics}
    rows = []
    base_values: dict[tuple[int, str], float] = {}
    weighted = cell.candidates is not None and WEIGHT in cell.candidates.columns
    value_gaps: dict[tuple[int, str], float | None] = {}
    for rank_type, metrics_of_type in plan:
        for metric in metrics_of_type:
            found = shared[id(metric)]
            moments = found.null
            # equal bases (AMRI's and zMR's mean rank) share values, through one canonical id
            key = (found.base_key, rank_type)
            value = base_values.get(key)
            if value is None:
                value = base_values[key] = base_value(found.base, cell, rank_type)
            derived = found.derived
            difference = None
            # the base's null quantities: its own, or a derived metric's base's
            base_null = moments if derived is None else found.base_null
            # the z-score's M - E of a base (and of M / E, which is (M - E) / E), exact where the
            # rounded one lost digits, and from the gaps 1 - M and 1 - E (as the z metric's)
            # where no exact sum is exact: weighted rows (each rank's weight sum is rounded)
            # and the geometric means (none)
            accurate = (
                (derived is None or isinstance(derived, ExpectationNormalizedMetric))
                and base_null is not None
                and base_null.method == METHOD_EXACT
                and base_null.gap is not None
            )
            if (
                (derived is not None and derived._uses_value_gap)
                or (accurate and (weighted or not exact_chance_sums(found.base)))
            ) and key not in value_gaps:
                value_gaps[key] = base_value_gap(found.base, cell, rank_type)
            if accurate:
                assert base_null is not None
                difference = _base_difference(
                    found.base, base_null, value, value_gaps.get(key), cell, rank_type
                )
            if derived is not None:
                if difference is not None and moments.method == METHOD_EXACT:
                    assert base_null is not None
                    assert base_null.expected_value is not None
                    difference /= base_null.expected_value  # M / E - 1
                else:
                    difference = None
                value = _derived_value(found, value, value_gaps.get(key), cell, rank_type)
            rows.append(
                ResultRow(
                    side,
                    rank_type,
                    metric,
                    value,
                    moments.expected_value,
                    moments.variance,
                    method=moments.method,
                    standard_error=moments.standard_error,
                    note=moments.note,
                    difference=difference,
                )
            )
    return rows


def _base_difference(
    base: RankBasedMetric,
    null: _Null,
    value: float,
    value_gap: float | None,
    cell: CellStatistics,
    rank_type: str,
) -> float | None:
    """A base metric's ``M - E`` (its z-score's), as accurate as its forms allow.

    From the gaps ``1 - M`` and ``1 - E`` where those carry the digits, and exact where the
    rounded one lost them (mean-type metrics); ``None`` where neither helps (the z-score takes
    the rounded difference).
    """
    exact = exact_cell_difference(base, cell, rank_type)
    if exact is None and value_gap is None:
        return None
    assert null.expected_value is not None
    assert null.gap is not None
    return float(accurate_difference(value, null.expected_value, value_gap, null.gap, exact))
