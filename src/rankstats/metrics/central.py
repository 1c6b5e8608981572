r"""Central tendency of the ranks: the Pythagorean means, the median, and their inverses.

The arithmetic (MR), geometric (GMR) and harmonic (HMR) mean rank satisfy
:math:`\mathrm{HMR} \le \mathrm{GMR} \le \mathrm{MR}`. The arithmetic mean is dominated by the large
ranks, the harmonic mean (the inverse of the mean reciprocal rank, MRR) by the small ones, and the
geometric mean sits in between.
"""

from __future__ import annotations

import math
from typing import ClassVar, Literal

import numpy as np
from docdata import parse_docdata

from rankstats.arrays import FloatArray, IntArray
from rankstats.base import JointMoments, RankBasedMetric, override
from rankstats.chance import ChanceTerms
from rankstats.null.harmonic import (
    harmonic_number,
    rank_mean,
    rank_variance,
    reciprocal_rank_mean,
    reciprocal_rank_variance,
)
from rankstats.null.median import inverse_median_moments, median_moments
from rankstats.null.powers import geometric_mean_log_moments_of
from rankstats.null.reciprocal import harmonic_mean_moments_of, inverse_arithmetic_mean_moments_of
from rankstats.null.tasks import Tasks
from rankstats.ranges import ValueRange
from rankstats.weighting import weighted_mean, weighted_median

__all__ = [
    "ArithmeticMeanRank",
    "GeometricMeanRank",
    "HarmonicMeanRank",
    "InverseArithmeticMeanRank",
    "InverseGeometricMeanRank",
    "InverseHarmonicMeanRank",
    "InverseMedianRank",
    "MedianRank",
]


#: ranks are >= 1
_AT_LEAST_ONE = ValueRange(lower=1, lower_inclusive=True, upper=math.inf)
#: the inverse of a value >= 1
_UNIT = ValueRange(lower=0, lower_inclusive=False, upper=1, upper_inclusive=True)


#: up to this many ranks, reciprocals are summed in extended precision (``np.longdouble``, where
#: the platform has it): it costs 7x a float64 pass, nothing at this size, and makes small results
#: correctly rounded (the MRR of ranks 3, 2, 1 is the double nearest 11/18)
_EXTENDED_PRECISION_MAX_SIZE = 2**16


def _mean_reciprocal(
    ranks: FloatArray, weights: FloatArray | None, *, invert: bool = False
) -> FloatArray:
    """The (weighted) mean of the reciprocal ranks, or with ``invert`` its reciprocal."""
    if ranks.size > _EXTENDED_PRECISION_MAX_SIZE:
        mean = weighted_mean(np.reciprocal(ranks), weights)
        return np.reciprocal(mean) if invert else mean
    extended = np.reciprocal(ranks.astype(np.longdouble))
    if weights is None:
        wide_mean = extended.mean(axis=-1)
    else:
        wide = weights.astype(np.longdouble)
        wide_mean = (extended * wide).sum(axis=-1) / wide.sum()
    return np.asarray(np.reciprocal(wide_mean) if invert else wide_mean, dtype=np.float64)


@parse_docdata
class ArithmeticMeanRank(RankBasedMetric):
    r"""The arithmetic mean rank (MR).

    .. math:: \mathrm{MR} = \sum_{i=1}^{n} a_i r_i, \qquad a_i = \frac{w_i}{\sum_j w_j}

    It lies in :math:`[1, \infty)`, lower is better, and it depends on the number of candidates:
    a mean rank of 10 is excellent among a million candidates and poor among twenty. The adjusted
    variants (AMR, AMRI, zMR) correct for that.

    Notes
    -----
    Under the null, :math:`\mathbb{E}[r_i] = (C_i + 1)/2` and
    :math:`\mathbb{V}[r_i] = (C_i^2 - 1)/12`, hence

    .. math::

        \mathbb{E}[\mathrm{MR}] = \sum_i a_i \frac{C_i + 1}{2}, \qquad
        \mathbb{V}[\mathrm{MR}] = \sum_i a_i^2 \frac{C_i^2 - 1}{12}.

    Examples
    --------
    >>> ArithmeticMeanRank()([1, 2, 6])
    3.0
    >>> ArithmeticMeanRank().expected_value([3, 5])
    2.5

    ---
    link: https://pykeen.readthedocs.io/en/stable/tutorial/understanding_evaluation.html#mean-rank
    description: The arithmetic mean over all ranks.
    """

    name = "Mean Rank (MR)"
    synonyms = ("mean_rank", "mr")
    value_range = _AT_LEAST_ONE
    increasing = False
    _null_from_weight_sums = True
    _size_free_expectation = True
    _mean_bounds_ranks = True

    @override
    def _evaluate(
        self, ranks: FloatArray, num_candidates: IntArray | None, weights: FloatArray | None
    ) -> FloatArray:
        return weighted_mean(ranks, weights)

    @override
    def _value_gap(
        self, ranks: FloatArray, num_candidates: IntArray | None, weights: FloatArray | None
    ) -> FloatArray:
        return weighted_mean(1.0 - ranks, weights)

    @override
    def _chance_terms(self) -> ChanceTerms:
        return ChanceTerms(
            lambda ranks: ranks,
            lambda ranks: 1.0 - ranks,
            rank_mean,
            lambda candidates: 0.5 * (1.0 - candidates.astype(np.float64)),
            halves=True,
        )

    @override
    def _expected_value(self, tasks: Tasks) -> float:
        return tasks.mean(rank_mean(tasks.candidates))

    @override
    def _expected_gap(self, tasks: Tasks) -> float:
        # 1 - (C + 1) / 2 = (1 - C) / 2, exact for integers C
        return tasks.mean(0.5 * (1.0 - tasks.candidates.astype(np.float64)))

    @override
    def _variance(self, tasks: Tasks) -> float:
        return tasks.mean_variance(rank_variance(tasks.candidates))


@parse_docdata
class InverseArithmeticMeanRank(JointMoments, RankBasedMetric):
    r"""The inverse arithmetic mean rank (IAMR), :math:`1 / \mathrm{MR}`.

    It lies in :math:`(0, 1]`, larger is better.

    Notes
    -----
    The null moments of a reciprocal are not the reciprocals of the moments. They follow from the
    Laplace transform of :math:`X = \mathrm{MR}`, a product over the tasks:

    .. math::

        \mathbb{E}[X^{-1}] = \int_0^\infty \mathbb{E}[e^{-tX}] \, dt, \qquad
        \mathbb{E}[X^{-2}] = \int_0^\infty t \, \mathbb{E}[e^{-tX}] \, dt,

    evaluated by quadrature (see :func:`rankstats.null.reciprocal.inverse_arithmetic_mean_moments`).

    Examples
    --------
    >>> InverseArithmeticMeanRank()([1, 2, 6])
    0.3333333333333333

    ---
    link: https://arxiv.org/abs/2203.07544
    description: The inverse of the arithmetic mean over all ranks.
    """

    name = "Inverse Arithmetic Mean Rank (IAMR)"
    synonyms = ("iamr",)
    value_range = _UNIT
    increasing = True

    @override
    def _evaluate(
        self, ranks: FloatArray, num_candidates: IntArray | None, weights: FloatArray | None
    ) -> FloatArray:
        return np.reciprocal(weighted_mean(ranks, weights))

    @override
    def _moments(self, tasks: Tasks) -> tuple[float | None, float | None]:
        return inverse_arithmetic_mean_moments_of(tasks)


@parse_docdata
class GeometricMeanRank(JointMoments, RankBasedMetric):
    r"""The geometric mean rank (GMR).

    .. math:: \mathrm{GMR} = \prod_{i=1}^{n} r_i^{a_i} = \exp \sum_i a_i \ln r_i

    It lies in :math:`[1, \infty)`, lower is better; it balances the arithmetic mean (dominated by
    large ranks) and the harmonic mean (dominated by small ones).

    Notes
    -----
    The ranks are independent, so with the cumulant generating function
    :math:`K_C(p) = \ln \mathbb{E}[r^p] = \ln \big(\tfrac{1}{C} \sum_{j=1}^{C} j^p\big)`,

    .. math::

        \mathbb{E}[\mathrm{GMR}] = \exp \sum_i K_{C_i}(a_i), \qquad
        \mathbb{V}[\mathrm{GMR}] = \mathbb{E}[\mathrm{GMR}]^2
            \Big(\exp \sum_i \big(K_{C_i}(2 a_i) - 2 K_{C_i}(a_i)\big) - 1\Big),

    where each term is computed with relative accuracy even for the tiny exponents
    :math:`a_i = 1/n` of large unweighted inputs (see :mod:`rankstats.null.powers`).

    Examples
    --------
    >>> GeometricMeanRank()([1, 4])
    2.0

    ---
    link: https://arxiv.org/abs/2203.07544
    description: The geometric mean over all ranks.
    """

    name = "Geometric Mean Rank (GMR)"
    synonyms = ("gmr",)
    value_range = _AT_LEAST_ONE
    increasing = False
    #: +1 for the geometric mean, -1 for its inverse
    _sign: ClassVar[Literal[1, -1]] = 1

    @override
    def _evaluate(
        self, ranks: FloatArray, num_candidates: IntArray | None, weights: FloatArray | None
    ) -> FloatArray:
        return np.asarray(
            np.exp(self._sign * weighted_mean(np.log(ranks), weights)), dtype=np.float64
        )

    @override
    def _value_gap(
        self, ranks: FloatArray, num_candidates: IntArray | None, weights: FloatArray | None
    ) -> FloatArray:
        return np.asarray(
            -np.expm1(self._sign * weighted_mean(np.log(ranks), weights)), dtype=np.float64
        )

    @override
    def _moments(self, tasks: Tasks) -> tuple[float | None, float | None]:
        return self._moments_and_gap(tasks)[:2]

    @override
    def _moments_and_gap(self, tasks: Tasks) -> tuple[float | None, float | None, float | None]:
        log_mean, log_dispersion = geometric_mean_log_moments_of(tasks, sign=self._sign)
        mean = math.exp(log_mean)
        return mean, mean * mean * math.expm1(log_dispersion), -math.expm1(log_mean)


@parse_docdata
class InverseGeometricMeanRank(GeometricMeanRank):
    r"""The inverse geometric mean rank (IGMR), :math:`1 / \mathrm{GMR} = \prod_i r_i^{-a_i}`.

    It lies in :math:`(0, 1]`, larger is better.

    Notes
    -----
    The null moments are those of the geometric mean with the exponents negated:
    :math:`\mathbb{E}[\mathrm{IGMR}] = \exp \sum_i K_{C_i}(-a_i)`, and likewise for the variance.

    Examples
    --------
    >>> InverseGeometricMeanRank()([1, 4])
    0.5

    ---
    link: https://arxiv.org/abs/2203.07544
    description: The inverse of the geometric mean over all ranks.
    """

    name = "Inverse Geometric Mean Rank (IGMR)"
    synonyms = ("igmr",)
    value_range = _UNIT
    increasing = True
    _sign = -1


def _reciprocal_mean_gap(candidates: IntArray) -> FloatArray:
    r""":math:`1 - H(C) / C`, computed as :math:`(C - H(C)) / C`, which does not cancel.

    (:math:`C - H(C) \ge (C - 1) / 2`.)
    """
    c = candidates.astype(np.float64)
    gap: FloatArray = (c - harmonic_number(c)) / c
    return gap


@parse_docdata
class InverseHarmonicMeanRank(RankBasedMetric):
    r"""The mean reciprocal rank (MRR), the inverse of the harmonic mean rank.

    .. math:: \mathrm{MRR} = \sum_{i=1}^{n} a_i \, r_i^{-1}

    It lies in :math:`(0, 1]`, larger is better. It acts as a soft Hits@k: small ranks dominate
    it, and it barely moves with changes among the large ones.

    Notes
    -----
    With the harmonic numbers :math:`H_p(C) = \sum_{j=1}^{C} j^{-p}` and :math:`H = H_1`, a rank
    uniform on :math:`\{1..C\}` has :math:`\mathbb{E}[r^{-1}] = H(C)/C` and
    :math:`\mathbb{V}[r^{-1}] = H_2(C)/C - (H(C)/C)^2`, hence

    .. math::

        \mathbb{E}[\mathrm{MRR}] = \sum_i a_i \frac{H(C_i)}{C_i}, \qquad
        \mathbb{V}[\mathrm{MRR}] = \sum_i a_i^2
            \left(\frac{H_2(C_i)}{C_i} - \frac{H(C_i)^2}{C_i^2}\right).

    Examples
    --------
    >>> InverseHarmonicMeanRank()([3, 2, 1])  # 11/18
    0.6111111111111112

    ---
    link: https://en.wikipedia.org/wiki/Mean_reciprocal_rank
    description: The inverse of the harmonic mean over all ranks.
    """

    name = "Mean Reciprocal Rank (MRR)"
    synonyms = ("mean_reciprocal_rank", "mrr")
    value_range = _UNIT
    increasing = True
    _null_from_weight_sums = True
    _size_free_expectation = True

    @override
    def _evaluate(
        self, ranks: FloatArray, num_candidates: IntArray | None, weights: FloatArray | None
    ) -> FloatArray:
        return _mean_reciprocal(ranks, weights)

    @override
    def _value_gap(
        self, ranks: FloatArray, num_candidates: IntArray | None, weights: FloatArray | None
    ) -> FloatArray:
        return weighted_mean((ranks - 1.0) / ranks, weights)

    @override
    def _chance_terms(self) -> ChanceTerms:
        return ChanceTerms(
            lambda ranks: 1.0 / ranks,
            lambda ranks: (ranks - 1.0) / ranks,
            reciprocal_rank_mean,
            _reciprocal_mean_gap,
        )

    @override
    def _expected_value(self, tasks: Tasks) -> float:
        return tasks.mean(reciprocal_rank_mean(tasks.candidates))

    @override
    def _expected_gap(self, tasks: Tasks) -> float:
        return tasks.mean(_reciprocal_mean_gap(tasks.candidates))

    @override
    def _variance(self, tasks: Tasks) -> float:
        return tasks.mean_variance(reciprocal_rank_variance(tasks.candidates))


@parse_docdata
class HarmonicMeanRank(JointMoments, RankBasedMetric):
    r"""The harmonic mean rank (HMR), :math:`1 / \mathrm{MRR}`.

    It lies in :math:`[1, \infty)`, lower is better.

    Notes
    -----
    As for the inverse arithmetic mean rank, the null moments of :math:`1/X` with
    :math:`X = \mathrm{MRR}` come from the Laplace transform of :math:`X` by quadrature (see
    :func:`rankstats.null.reciprocal.harmonic_mean_moments`); the delta method is unreliable here
    unless :math:`n \gg C / \ln C`.

    Examples
    --------
    >>> HarmonicMeanRank()([1, 3])
    1.5

    ---
    link: https://arxiv.org/abs/2203.07544
    description: The harmonic mean over all ranks.
    """

    name = "Harmonic Mean Rank (HMR)"
    synonyms = ("hmr",)
    value_range = _AT_LEAST_ONE
    increasing = False

    @override
    def _evaluate(
        self, ranks: FloatArray, num_candidates: IntArray | None, weights: FloatArray | None
    ) -> FloatArray:
        return _mean_reciprocal(ranks, weights, invert=True)

    @override
    def _moments(self, tasks: Tasks) -> tuple[float | None, float | None]:
        return harmonic_mean_moments_of(tasks)


@parse_docdata
class MedianRank(JointMoments, RankBasedMetric):
    r"""The median rank, as :func:`numpy.median` computes it.

    For an even number of ranks it is the mean of the two middle ones. With weights it is the
    weighted median of :func:`rankstats.weighting.weighted_median`, which equals
    :func:`numpy.median` of the ranks repeated by integer weights.

    Notes
    -----
    Under the null, the :math:`k`-th order statistic satisfies
    :math:`P(X_{(k)} \le x) = P(N_x \ge k)` with :math:`N_x = \#\{i : r_i \le x\}` a
    Poisson-binomial count with success probabilities :math:`\min(1, x / C_i)`. The expected value
    and variance follow from these tails, for an even :math:`n` from the joint law of the two middle
    order statistics (see :func:`rankstats.null.median.median_moments`). The law is computed once
    per multiset of counts and shared with :class:`InverseMedianRank`
    (:func:`rankstats.null.median.median_distribution`). Weighted medians fall back to
    Monte-Carlo.

    Examples
    --------
    >>> MedianRank()([1, 2, 3, 5])
    2.5

    ---
    link: https://arxiv.org/abs/2203.07544
    description: The median over all ranks.
    """

    name = "Median Rank"
    synonyms = ("median", "mdr")
    value_range = _AT_LEAST_ONE
    increasing = False

    @override
    def _evaluate(
        self, ranks: FloatArray, num_candidates: IntArray | None, weights: FloatArray | None
    ) -> FloatArray:
        return weighted_median(ranks, weights)

    @override
    def _moments(self, tasks: Tasks) -> tuple[float | None, float | None]:
        return (None, None) if tasks.weights is not None else median_moments(*tasks.distinct())


@parse_docdata
class InverseMedianRank(JointMoments, RankBasedMetric):
    r"""The inverse median rank, :math:`1 / \operatorname{median}(r)`.

    It lies in :math:`(0, 1]`, larger is better.

    Notes
    -----
    The null moments follow from the same order-statistic tails as the median's:
    :math:`\mathbb{E}[1/X] = \sum_x P(X = x) / x` (see
    :func:`rankstats.null.median.inverse_median_moments`), from the distribution shared with
    :class:`MedianRank`. Weighted medians fall back to Monte-Carlo.

    Examples
    --------
    >>> InverseMedianRank()([1, 2, 4])
    0.5

    ---
    link: https://arxiv.org/abs/2203.07544
    description: The inverse of the median over all ranks.
    """

    name = "Inverse Median Rank"
    synonyms = ("inverse_median", "imr")
    value_range = _UNIT
    increasing = True

    @override
    def _evaluate(
        self, ranks: FloatArray, num_candidates: IntArray | None, weights: FloatArray | None
    ) -> FloatArray:
        return np.reciprocal(weighted_median(ranks, weights))

    @override
    def _moments(self, tasks: Tasks) -> tuple[float | None, float | None]:
        return (
            (None, None) if tasks.weights is not None else inverse_median_moments(*tasks.distinct())
        )
