r"""Per-task terms of the mean-type metrics, for computing many groups in vectorised passes.

A mean-type metric is :math:`M = f\left(\sum_i a_i\, t(r_i)\right)` (the mean rank, MRR, Hits@k,
the harmonic and geometric means and their inverses); its null moments are sums of the per-task
:math:`\mathbb{E}[t(r_i)]` and :math:`\mathbb{V}[t(r_i)]`. Each function here returns the terms of
one metric, or ``None`` for a metric not of this form, which :mod:`rankstats.evaluation.grouped`
then computes group by group.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

import numpy as np

from rankstats.arrays import FloatArray, IntArray
from rankstats.base import RankBasedMetric
from rankstats.chance import ChanceTerms, Ratio
from rankstats.evaluation.ties import reciprocal_sum
from rankstats.metrics.central import (
    ArithmeticMeanRank,
    GeometricMeanRank,
    HarmonicMeanRank,
    InverseArithmeticMeanRank,
    InverseGeometricMeanRank,
    InverseHarmonicMeanRank,
)
from rankstats.metrics.derived import DerivedRankBasedMetric
from rankstats.metrics.dispersion import Count
from rankstats.metrics.hits import HitsAtK, hit_probability
from rankstats.null.harmonic import (
    rank_mean,
    rank_variance,
    reciprocal_rank_mean,
    reciprocal_rank_variance,
)

__all__ = [
    "NullTerm",
    "Transform",
    "exact_chance_sums",
    "has_value_gap",
    "identity",
    "null_gap_term",
    "null_terms",
    "sums_only",
    "tie_ratios",
    "tie_terms",
    "value_gap_terms",
    "value_terms",
]

Transform = Callable[[FloatArray], FloatArray]
NullTerm = Callable[[IntArray], FloatArray]

#: the metrics whose gaps here are those of their chance terms (:func:`_chance_terms`)
_CHANCE_KINDS = (ArithmeticMeanRank, InverseHarmonicMeanRank, HitsAtK)


def identity(x: FloatArray) -> FloatArray:
    """The identity transform."""
    return x


def _negative_exp(x: FloatArray) -> FloatArray:
    return np.exp(-x)


def _negative_expm1(x: FloatArray) -> FloatArray:
    return -np.expm1(x)


def _negative_expm1_of_negative(x: FloatArray) -> FloatArray:
    return -np.expm1(-x)


#: the gaps 1 - exp(s) and 1 - exp(-s) of the geometric means from s = sum_i a_i log r_i
_GEOMETRIC_GAPS: dict[type[RankBasedMetric], Transform] = {
    GeometricMeanRank: _negative_expm1,
    InverseGeometricMeanRank: _negative_expm1_of_negative,
}


def value_terms(metric: RankBasedMetric) -> tuple[Transform, Transform] | None:
    """``(t, f)`` with the metric's value ``f(sum_i a_i t(r_i))``, for the metrics so written."""
    kind = type(metric)
    if kind is ArithmeticMeanRank:
        return identity, identity
    if kind is InverseHarmonicMeanRank:
        return np.reciprocal, identity
    if kind is HarmonicMeanRank:
        return np.reciprocal, np.reciprocal
    if kind is InverseArithmeticMeanRank:
        return identity, np.reciprocal
    if kind is GeometricMeanRank:
        return np.log, np.exp
    if kind is InverseGeometricMeanRank:
        return np.log, _negative_exp
    if kind is HitsAtK:
        k = metric.cutoff  # type: ignore[attr-defined]
        return (lambda r: (r <= k).astype(np.float64)), identity
    return None


def exact_chance_sums(metric: RankBasedMetric) -> bool:
    """Whether the metric's :math:`M - E` has an exact sum (:mod:`rankstats.chance`)."""
    return _chance_terms(metric) is not None


def _chance_terms(metric: RankBasedMetric) -> ChanceTerms | None:
    """The metric's own per-task terms and gaps (:class:`~rankstats.chance.ChanceTerms`).

    For the mean rank, the MRR and Hits@k themselves (not their subclasses, as elsewhere here).
    """
    return metric._chance_terms() if type(metric) in _CHANCE_KINDS else None


def has_value_gap(metric: RankBasedMetric) -> bool:
    """Whether :func:`value_gap_terms` has terms for the metric."""
    return type(metric) in _GEOMETRIC_GAPS or exact_chance_sums(metric)


def value_gap_terms(metric: RankBasedMetric) -> tuple[Transform, Transform] | None:
    """``(t, f)`` with the gap ``1 - M = f(sum_i a_i t(r_i))`` computed without forming ``M``."""
    geometric = _GEOMETRIC_GAPS.get(type(metric))
    if geometric is not None:
        return np.log, geometric
    terms = _chance_terms(metric)
    return None if terms is None else (terms.value_gap, identity)


def null_gap_term(metric: RankBasedMetric) -> NullTerm | None:
    r"""Per-task :math:`1 - \mathbb{E}[t(r_i)]` computed directly, where it carries the digits."""
    terms = _chance_terms(metric)
    return None if terms is None else terms.expected_gap


def null_terms(metric: RankBasedMetric) -> tuple[NullTerm, NullTerm] | None:
    r"""Per-task :math:`\mathbb{E}[t(r_i)]` and :math:`\mathbb{V}[t(r_i)]` of a mean-type metric."""
    kind = type(metric)
    if kind is ArithmeticMeanRank:
        return rank_mean, rank_variance
    if kind is InverseHarmonicMeanRank:
        return reciprocal_rank_mean, reciprocal_rank_variance
    if kind is HitsAtK:
        k = metric.cutoff  # type: ignore[attr-defined]

        def hit_variance(c: IntArray) -> FloatArray:
            p = hit_probability(c, k)
            return p * (1.0 - p)

        return (lambda c: hit_probability(c, k)), hit_variance
    return None


def tie_terms(metric: RankBasedMetric) -> Callable[[IntArray, IntArray], FloatArray] | None:
    """Per-task expectation over tie-breaking of the mean-type terms, rank ``U{o..p}``."""
    kind = type(metric)
    if kind is ArithmeticMeanRank:
        return lambda o, p: 0.5 * (o + p).astype(np.float64)
    if kind is InverseHarmonicMeanRank:
        return _expected_reciprocal
    if kind is HitsAtK:
        k = metric.cutoff  # type: ignore[attr-defined]
        return lambda o, p: _expected_hit(o, p, k)
    return None


def tie_ratios(metric: RankBasedMetric) -> Callable[[IntArray, IntArray], Ratio] | None:
    """:func:`tie_terms` as ratios of integers, where they are (``Hits@k``), else ``None``."""
    if type(metric) is HitsAtK:
        k = metric.cutoff
        return lambda o, p: _hit_ratio(o, p, k)
    return None


def _hit_ratio(low: IntArray, high: IntArray, k: int) -> Ratio:
    r""":func:`_expected_hit` as ``(hits, misses, p - o + 1)`` among the ranks ``o..p``."""
    size = (high - low + 1).astype(np.float64)
    hits = np.minimum(np.maximum(k - low + 1, 0), high - low + 1).astype(np.float64)
    return hits, size - hits, size


def _tied(low: IntArray, high: IntArray) -> tuple[IntArray | slice, IntArray, IntArray]:
    """The rows with ties (``low < high``) and their bounds; every row, as a slice, where all are.

    The grouped sums give their tied rows alone: then no index is gathered.
    """
    tied = np.flatnonzero(low != high)
    if tied.size == low.size:
        return slice(None), low, high
    return tied, low[tied], high[tied]


def _expected_hit(low: IntArray, high: IntArray, k: int) -> FloatArray:
    r"""The probability that :math:`r \sim \mathcal{U}\{o..p\}` is at most ``k``."""
    result = (low <= k).astype(np.float64)
    tied, o, p = _tied(low, high)
    if o.size:
        result[tied] = np.minimum(np.maximum(k - o + 1, 0), p - o + 1) / (p - o + 1)
    return result


def _expected_reciprocal(low: IntArray, high: IntArray) -> FloatArray:
    r"""The expectation of :math:`1/r`, :math:`r \sim \mathcal{U}\{o..p\}`; untied rows: 1/o."""
    tied, o, p = _tied(low, high)
    if isinstance(tied, slice):  # every row tied
        result: FloatArray = reciprocal_sum(o, p) / (p - o + 1)
        return result
    result = np.reciprocal(low.astype(np.float64))
    if o.size:
        result[tied] = reciprocal_sum(o, p) / (p - o + 1)
    return result


def sums_only(metrics: Sequence[RankBasedMetric]) -> bool:
    """Whether every column of ``metrics`` comes from per-group sums, the tables not read again.

    True where each metric (or a derived metric's base) is the count or a mean-type metric
    with terms for every rank type and for its null moments: once the builder of
    :mod:`rankstats.evaluation.grouped` has these sums, it reads only the tables' row counts.
    """
    for metric in metrics:
        base = metric.base if isinstance(metric, DerivedRankBasedMetric) else metric
        if type(base) is Count:
            continue
        if value_terms(base) is None or tie_terms(base) is None or null_terms(base) is None:
            return False
    return True
