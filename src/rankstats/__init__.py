"""rankstats: rank-based evaluation metrics with exact null models.

>>> import numpy as np
>>> from rankstats import metric_resolver, InverseHarmonicMeanRank
>>> InverseHarmonicMeanRank()(np.array([3, 2, 1]))
0.6111111111111112
>>> metric_resolver.make("hits@10")
HitsAtK(k=10)
"""

from rankstats.base import (
    RANK_OPTIMISTIC,
    RANK_PESSIMISTIC,
    RANK_REALISTIC,
    RANK_TYPES,
    ConfidenceInterval,
    NullMoments,
    RankBasedMetric,
    RankType,
    sample_null_values,
)
from rankstats.compare import Comparison, compare
from rankstats.errors import NoClosedFormError, NoWeightSupportError, UnknownMetricError
from rankstats.evaluation import (
    RANK_EXPECTED,
    EarlyStopper,
    EvaluationResults,
    RankAccumulator,
    Ranks,
    evaluate,
    expected_over_ties,
    ranks_from_scores,
)
from rankstats.metrics.central import (
    ArithmeticMeanRank,
    GeometricMeanRank,
    HarmonicMeanRank,
    InverseArithmeticMeanRank,
    InverseGeometricMeanRank,
    InverseHarmonicMeanRank,
    InverseMedianRank,
    MedianRank,
)
from rankstats.metrics.derived import (
    AdjustedArithmeticMeanRank,
    AdjustedArithmeticMeanRankIndex,
    AdjustedGeometricMeanRankIndex,
    AdjustedHitsAtK,
    AdjustedInverseHarmonicMeanRank,
    AffineTransformationParameters,
    DerivedRankBasedMetric,
    ExpectationNormalizedMetric,
    ReindexedMetric,
    ZArithmeticMeanRank,
    ZGeometricMeanRank,
    ZHitsAtK,
    ZInverseHarmonicMeanRank,
    ZMetric,
)
from rankstats.metrics.dispersion import Count, MedianAbsoluteDeviation, StandardDeviation, Variance
from rankstats.metrics.hits import HitsAtK
from rankstats.ranges import ValueRange
from rankstats.registry import MetricResolver, metric_resolver

__version__ = "0.1.0"

__all__ = [
    "RANK_EXPECTED",
    "RANK_OPTIMISTIC",
    "RANK_PESSIMISTIC",
    "RANK_REALISTIC",
    "RANK_TYPES",
    "AdjustedArithmeticMeanRank",
    "AdjustedArithmeticMeanRankIndex",
    "AdjustedGeometricMeanRankIndex",
    "AdjustedHitsAtK",
    "AdjustedInverseHarmonicMeanRank",
    "AffineTransformationParameters",
    "ArithmeticMeanRank",
    "Comparison",
    "ConfidenceInterval",
    "Count",
    "DerivedRankBasedMetric",
    "EarlyStopper",
    "EvaluationResults",
    "ExpectationNormalizedMetric",
    "GeometricMeanRank",
    "HarmonicMeanRank",
    "HitsAtK",
    "InverseArithmeticMeanRank",
    "InverseGeometricMeanRank",
    "InverseHarmonicMeanRank",
    "InverseMedianRank",
    "MedianAbsoluteDeviation",
    "MedianRank",
    "MetricResolver",
    "NoClosedFormError",
    "NoWeightSupportError",
    "NullMoments",
    "RankAccumulator",
    "RankBasedMetric",
    "RankType",
    "Ranks",
    "ReindexedMetric",
    "StandardDeviation",
    "UnknownMetricError",
    "ValueRange",
    "Variance",
    "ZArithmeticMeanRank",
    "ZGeometricMeanRank",
    "ZHitsAtK",
    "ZInverseHarmonicMeanRank",
    "ZMetric",
    "__version__",
    "compare",
    "evaluate",
    "expected_over_ties",
    "metric_resolver",
    "ranks_from_scores",
    "sample_null_values",
]
