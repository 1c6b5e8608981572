"""Comparing models on the same queries: paired tests, intervals and corrected p-values.

:func:`compare` takes two or more models' ranks on the same queries and returns a
:class:`Comparison`: every model's value of every metric with a bootstrap confidence interval, and
for every pair of models the difference, its interval, an effect size and a p-value (paired
randomization test by default; paired t-test, Wilcoxon signed-rank or bootstrap test on request),
corrected for multiple comparisons (Holm by default, Benjamini-Hochberg on request).
"""

from rankstats.compare.compare import DEFAULT_COMPARE_METRICS, TESTS, compare
from rankstats.compare.correction import CORRECTIONS, correct_pvalues
from rankstats.compare.results import (
    Comparison,
    ComparisonSettings,
    ModelValue,
    PairComparison,
)

__all__ = [
    "CORRECTIONS",
    "DEFAULT_COMPARE_METRICS",
    "TESTS",
    "Comparison",
    "ComparisonSettings",
    "ModelValue",
    "PairComparison",
    "compare",
    "correct_pvalues",
]
