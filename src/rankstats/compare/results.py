r"""The result of :func:`~rankstats.compare.compare`: values, intervals, differences, p-values.

A :class:`Comparison` holds, per metric, a :class:`ModelValue` for every model (the value with its
confidence interval) and a :class:`PairComparison` for every pair (the difference, its interval,
an effect size, the test's p-value and the corrected one), the settings that produced them
(:class:`ComparisonSettings`), and, for per-group comparisons, one :class:`Comparison` per group.
It renders itself as a plain table (``str``), a dictionary or JSON, CSV, a pandas DataFrame, and
Markdown and LaTeX tables for papers (:mod:`rankstats.compare.report`);
:func:`rankstats.plot.plot_comparison` draws it.
"""

from __future__ import annotations

import json
import math
from collections.abc import Hashable, Mapping
from dataclasses import asdict, dataclass, field
from typing import TYPE_CHECKING, Any

from rankstats.base import RankBasedMetric

if TYPE_CHECKING:  # pragma: no cover
    import pandas  # type: ignore[import-untyped,import-not-found,unused-ignore]

__all__ = ["RECORD_COLUMNS", "Comparison", "ComparisonSettings", "ModelValue", "PairComparison"]

#: the columns of :meth:`Comparison.to_records` (CSV, DataFrame)
RECORD_COLUMNS = (
    "group",
    "metric",
    "kind",
    "model",
    "other",
    "estimate",
    "lower",
    "upper",
    "effect_size",
    "statistic",
    "p_value",
    "p_value_se",
    "p_adjusted",
)


@dataclass(frozen=True)
class ModelValue:
    """One model's value of one metric with its confidence interval (``None`` if not computed)."""

    metric: str
    model: str
    value: float
    lower: float | None
    upper: float | None


@dataclass(frozen=True)
class PairComparison:
    r"""One pair of models on one metric: ``difference`` is ``model_a`` minus ``model_b``.

    ``effect_size`` is the standardised mean of the per-query term differences (Cohen's
    :math:`d_z`), signed like the difference, for metrics that are means of per-query terms;
    ``p_value_se`` is the Monte-Carlo standard error of a randomized p-value (0 for exact tests,
    ``None`` for analytic ones); ``p_adjusted`` is corrected for multiple comparisons.
    """

    metric: str
    model_a: str
    model_b: str
    difference: float
    lower: float | None
    upper: float | None
    effect_size: float | None
    statistic: float | None
    p_value: float | None
    p_value_se: float | None
    p_adjusted: float | None

    def significant(self, alpha: float = 0.05) -> bool:
        """Whether the corrected p-value is below ``alpha`` (a fraction in (0, 1))."""
        from rankstats.compare.inputs import check_fraction

        level = check_fraction(alpha, "alpha", 0.05)
        return self.p_adjusted is not None and self.p_adjusted < level


@dataclass(frozen=True)
class ComparisonSettings:
    """How a comparison was made, stated under every report."""

    test: str
    n_resamples: int | None
    exact: bool | None
    seed: int | str | None
    interval: str | None
    confidence_level: float
    n_bootstrap: int | None
    stratified: bool
    correction: str
    rank_type: str
    num_queries: int
    weighted: bool
    #: a group's comparison (``by_group``): its p-values were corrected over every pair of
    #: each metric in this many groups; 0 for a comparison corrected over its own pairs
    family_groups: int = 0


_TESTS = {
    "randomization": "paired randomization test",
    "t": "paired t-test",
    "wilcoxon": "Wilcoxon signed-rank test",
    "bootstrap": "paired bootstrap test",
}


@dataclass
class Comparison:
    """Models compared on the same queries, metric by metric.

    Look values up with :meth:`value` and :meth:`pair`; iterate :attr:`values` and :attr:`pairs`
    for everything. ``by_group`` maps each group label to the comparison on that group's queries,
    whose p-values are corrected across all groups and pairs of a metric. ``notes`` are remarks on
    the whole comparison, e.g. queries or groups left out because their weights are 0; the reports
    state them.
    """

    models: tuple[str, ...]
    metrics: tuple[RankBasedMetric, ...]
    values: list[ModelValue]
    pairs: list[PairComparison]
    settings: ComparisonSettings
    by_group: dict[Hashable, Comparison] = field(default_factory=dict)
    notes: list[str] = field(default_factory=list)

    # --- lookup --------------------------------------------------------------------------------

    def metric_of(self, metric: str | RankBasedMetric) -> RankBasedMetric:
        """The metric of this comparison that ``metric`` names (any name the resolver knows)."""
        from rankstats.registry import metric_resolver

        resolved = metric if isinstance(metric, RankBasedMetric) else metric_resolver.make(metric)
        for known in self.metrics:
            if known == resolved:
                return known
        raise KeyError(
            f"metric {metric!r} is not in this comparison; it has {[m.key for m in self.metrics]}"
        )

    def _metric_key(self, metric: str | RankBasedMetric) -> str:
        return self.metric_of(metric).key

    def _check_model(self, model: str) -> None:
        if model not in self.models:
            raise KeyError(f"model {model!r} is not in this comparison; it has {list(self.models)}")

    def value(self, metric: str | RankBasedMetric, model: str) -> ModelValue:
        """The value of ``model`` on ``metric`` (any name the metric resolver knows)."""
        key = self._metric_key(metric)
        self._check_model(model)
        return next(v for v in self.values if v.metric == key and v.model == model)

    def pair(self, metric: str | RankBasedMetric, model_a: str, model_b: str) -> PairComparison:
        """The comparison of two models on ``metric``; the difference is ``model_a - model_b``."""
        key = self._metric_key(metric)
        self._check_model(model_a)
        self._check_model(model_b)
        for pair in self.pairs:
            if pair.metric != key:
                continue
            if (pair.model_a, pair.model_b) == (model_a, model_b):
                return pair
            if (pair.model_b, pair.model_a) == (model_a, model_b):
                return _reversed(pair, self.settings.test != "wilcoxon")
        raise KeyError(f"no pair ({model_a!r}, {model_b!r}) on {key}")

    # --- export --------------------------------------------------------------------------------

    def to_dict(self) -> dict[str, Any]:
        """Everything as plain Python data (NaN as ``None``), e.g. for JSON."""
        return {
            "models": list(self.models),
            "metrics": [m.key for m in self.metrics],
            "settings": asdict(self.settings),
            "values": [_clean(asdict(v)) for v in self.values],
            "pairs": [_clean(asdict(p)) for p in self.pairs],
            "by_group": {str(label): c.to_dict() for label, c in self.by_group.items()},
            "notes": list(self.notes),
        }

    def to_json(self, indent: int | None = 2) -> str:
        """The :meth:`to_dict` data as JSON."""
        return json.dumps(self.to_dict(), indent=indent, allow_nan=False)

    def to_records(self) -> list[dict[str, Any]]:
        """One flat row per model value and per pair (and per group), in :data:`RECORD_COLUMNS`."""
        rows = _records(self, None)
        for label, comparison in self.by_group.items():
            rows.extend(_records(comparison, label))
        return rows

    def to_csv(self) -> str:
        """The :meth:`to_records` rows as CSV with a header line (empty cells for ``None``).

        A group labelled ``""`` is refused, as by :meth:`EvaluationResults.to_csv
        <rankstats.evaluation.results.EvaluationResults.to_csv>`: its rows would read as the
        overall ones.
        """
        from rankstats.evaluation.report import check_csv_labels, tabulate

        check_csv_labels(self.by_group)
        return tabulate(self.to_records(), RECORD_COLUMNS, "csv")

    def to_frame(self) -> pandas.DataFrame:
        """The :meth:`to_records` rows as a pandas DataFrame (needs pandas)."""
        try:
            import pandas as pd
        except ImportError as error:  # pragma: no cover - pandas is installed in the test env
            raise ImportError(
                "Comparison.to_frame needs pandas; install it with `pip install pandas`"
            ) from error
        return pd.DataFrame(self.to_records(), columns=list(RECORD_COLUMNS))

    def to_markdown(self, alpha: float = 0.05, *, digits: int = 4, intervals: bool = False) -> str:
        """A Markdown table for papers: best value in bold, significance marked per pair."""
        from rankstats.compare.report import paper_table

        return paper_table(self, "markdown", alpha=alpha, digits=digits, intervals=intervals)

    def to_latex(self, alpha: float = 0.05, *, digits: int = 4, intervals: bool = False) -> str:
        """A LaTeX table (booktabs) for papers: best value in bold, significance per pair."""
        from rankstats.compare.report import paper_table

        return paper_table(self, "latex", alpha=alpha, digits=digits, intervals=intervals)

    def to_table(self, alpha: float = 0.05) -> str:
        """A plain-text report: every model's value and every pair's comparison."""
        from rankstats.compare.report import plain_table

        return plain_table(self, alpha=alpha)

    def describe(self, alpha: float = 0.05) -> str:
        """The sentence stating test, resamples, seed, interval and correction."""
        from rankstats.compare.report import describe

        return describe(self, alpha=alpha)

    def __str__(self) -> str:
        return self.to_table()

    def __repr__(self) -> str:
        return (
            f"Comparison(models={list(self.models)}, metrics={[m.key for m in self.metrics]}, "
            f"test={self.settings.test!r})"
        )

    @property
    def test_name(self) -> str:
        """The test's name in words."""
        return _TESTS[self.settings.test]


def _reversed(pair: PairComparison, signed_statistic: bool = True) -> PairComparison:
    """The pair the other way round: signed quantities negated, the p-values kept.

    Wilcoxon's statistic (the smaller rank sum) has no sign: ``signed_statistic`` False keeps it.
    """

    def negate(value: float | None) -> float | None:
        return None if value is None else -value

    return PairComparison(
        metric=pair.metric,
        model_a=pair.model_b,
        model_b=pair.model_a,
        difference=-pair.difference,
        lower=negate(pair.upper),
        upper=negate(pair.lower),
        effect_size=negate(pair.effect_size),
        statistic=negate(pair.statistic) if signed_statistic else pair.statistic,
        p_value=pair.p_value,
        p_value_se=pair.p_value_se,
        p_adjusted=pair.p_adjusted,
    )


def _clean(row: Mapping[str, Any]) -> dict[str, Any]:
    return {
        key: None if isinstance(value, float) and not math.isfinite(value) else value
        for key, value in row.items()
    }


def _records(comparison: Comparison, group: Hashable | None) -> list[dict[str, Any]]:
    rows: list[dict[str, Any]] = []
    for value in comparison.values:
        rows.append(
            _clean(
                dict.fromkeys(RECORD_COLUMNS)
                | {
                    "group": group,
                    "metric": value.metric,
                    "kind": "model",
                    "model": value.model,
                    "estimate": value.value,
                    "lower": value.lower,
                    "upper": value.upper,
                }
            )
        )
    for pair in comparison.pairs:
        rows.append(
            _clean(
                {
                    "group": group,
                    "metric": pair.metric,
                    "kind": "pair",
                    "model": pair.model_a,
                    "other": pair.model_b,
                    "estimate": pair.difference,
                    "lower": pair.lower,
                    "upper": pair.upper,
                    "effect_size": pair.effect_size,
                    "statistic": pair.statistic,
                    "p_value": pair.p_value,
                    "p_value_se": pair.p_value_se,
                    "p_adjusted": pair.p_adjusted,
                }
            )
        )
    return rows
