r"""Derived metrics: affine transforms :math:`M^* = \alpha M + \beta` of a base metric.

The coefficients :math:`\alpha, \beta` depend only on the candidate counts (and weights), never on
the ranks, so published results can be adjusted without the model, and the null moments follow
from the base metric's: :math:`\mathbb{E}[M^*] = \alpha \mathbb{E}[M] + \beta` and
:math:`\mathbb{V}[M^*] = \alpha^2 \mathbb{V}[M]`.

Three adjustments are offered:

- :class:`ExpectationNormalizedMetric`: :math:`M / \mathbb{E}[M]`, expected value 1;
- :class:`ReindexedMetric`: :math:`(M - \mathbb{E}[M]) / (1 - \mathbb{E}[M])`, expected value 0
  and best value 1 (for metrics whose best value is 1, or, like the mean rank, 1 at its best);
- :class:`ZMetric`: :math:`\pm (M - \mathbb{E}[M]) / \sqrt{\mathbb{V}[M]}`, expected value 0 and
  variance 1, with the sign chosen so that larger is always better.
"""

from __future__ import annotations

import math
from abc import abstractmethod
from typing import Any, ClassVar, NamedTuple

import numpy as np
import numpy.typing as npt
from docdata import parse_docdata

from rankstats.arrays import FloatArray, IntArray
from rankstats.base import RANK_TYPES, RankBasedMetric, RankType, override
from rankstats.errors import NoClosedFormError
from rankstats.metrics.central import (
    ArithmeticMeanRank,
    GeometricMeanRank,
    InverseHarmonicMeanRank,
)
from rankstats.metrics.hits import HitsAtK
from rankstats.ranges import ValueRange
from rankstats.validation import validate_null_input

__all__ = [
    "AdjustedArithmeticMeanRank",
    "AdjustedArithmeticMeanRankIndex",
    "AdjustedGeometricMeanRankIndex",
    "AdjustedHitsAtK",
    "AdjustedInverseHarmonicMeanRank",
    "AffineTransformationParameters",
    "DerivedRankBasedMetric",
    "ExpectationNormalizedMetric",
    "ReindexedMetric",
    "ZArithmeticMeanRank",
    "ZGeometricMeanRank",
    "ZHitsAtK",
    "ZInverseHarmonicMeanRank",
    "ZMetric",
]


_UNBOUNDED = ValueRange(lower=None, upper=None)
#: reindexed metrics reach 1 at best; their lower bound depends on the data
_AT_MOST_ONE = ValueRange(lower=None, upper=1, upper_inclusive=True)


class AffineTransformationParameters(NamedTuple):
    r"""The coefficients of :math:`M^* = \\text{scale} \\cdot M + \\text{offset}`."""

    scale: float = 1.0
    offset: float = 0.0


class DerivedRankBasedMetric(RankBasedMetric):
    r"""A metric :math:`M^* = \alpha M + \beta` derived from a base metric :math:`M`.

    Subclasses name the base in :attr:`base_cls` and implement :meth:`_coefficients`; they need
    the candidate counts, inherit :attr:`supports_weights` from the base, and have closed-form
    moments exactly where the base has those the coefficients use.

    Parameters
    ----------
    **kwargs
        Passed to the base metric, e.g. ``k`` for Hits@k.
    """

    #: the base metric's class
    base_cls: ClassVar[type[RankBasedMetric]]
    needs_candidates = True
    #: every rank type, as PyKEEN; the null model has no ties, so for optimistic and
    #: pessimistic ranks of tied scores the comparison is biased (see the rank-types guide)
    supported_rank_types: ClassVar[tuple[RankType, ...]] = RANK_TYPES
    #: which of the base's moments the coefficients use
    _coefficients_use_variance: ClassVar[bool] = False

    def __init_subclass__(cls, **kwargs: Any) -> None:
        base_cls = cls.__dict__.get("base_cls")
        if base_cls is not None:
            closed = base_cls.closed_expectation and (
                base_cls.closed_variance or not cls._coefficients_use_variance
            )
            cls.supports_weights = base_cls.supports_weights
            cls.closed_expectation = closed
            cls.closed_variance = closed and base_cls.closed_variance
        super().__init_subclass__(**kwargs)

    def __init__(self, **kwargs: Any) -> None:
        self.base = self.base_cls(**kwargs)

    @override
    def _params(self) -> dict[str, Any]:
        return self.base._params()

    def get_coefficients(
        self, num_candidates: npt.ArrayLike, weights: npt.ArrayLike | None = None
    ) -> AffineTransformationParameters:
        """Return the coefficients (scale, offset) for these candidate counts and weights."""
        candidates, clean_weights = validate_null_input(
            num_candidates, weights, supports_weights=self.supports_weights, metric=repr(self)
        )
        return self._coefficients(candidates, clean_weights)

    def adjust(
        self,
        base_metric_result: float,
        num_candidates: npt.ArrayLike,
        weights: npt.ArrayLike | None = None,
    ) -> float:
        """Adjust a published value of the base metric, without the model or the ranks.

        Examples
        --------
        >>> AdjustedArithmeticMeanRankIndex().adjust(1.0, num_candidates=[5, 5])
        1.0
        """
        scale, offset = self.get_coefficients(num_candidates, weights)
        return float(scale * base_metric_result + offset)

    @abstractmethod
    def _coefficients_from(
        self, base_mean: float, base_variance: float | None
    ) -> AffineTransformationParameters:
        """The coefficients, given the base metric's null moments; raises where undefined."""

    def _exact_moments(self) -> tuple[float | None, float | None]:
        """The moments the transformation fixes by construction (``None``: follow from the base)."""
        return None, None

    def _base_moments(
        self, num_candidates: IntArray, weights: FloatArray | None
    ) -> tuple[float, float | None]:
        mean, variance = self.base._moments(num_candidates, weights)
        if mean is None:
            raise NoClosedFormError(f"{self!r} needs a closed-form expected value of {self.base!r}")
        if variance is None and self._coefficients_use_variance:
            raise NoClosedFormError(f"{self!r} needs a closed-form variance of {self.base!r}")
        return mean, variance

    def _coefficients(
        self, num_candidates: IntArray, weights: FloatArray | None
    ) -> AffineTransformationParameters:
        """The coefficients for clean input."""
        return self._coefficients_from(*self._base_moments(num_candidates, weights))

    def _moments_from(
        self, base_mean: float, base_variance: float | None
    ) -> tuple[float, float | None]:
        """Return the null moments, given the base metric's; raises where undefined."""
        scale, offset = self._coefficients_from(base_mean, base_variance)
        exact_mean, exact_variance = self._exact_moments()
        mean = scale * base_mean + offset if exact_mean is None else exact_mean
        if exact_variance is not None:
            return mean, exact_variance
        return mean, None if base_variance is None else scale**2 * base_variance

    @override
    def _moments(
        self, num_candidates: IntArray, weights: FloatArray | None
    ) -> tuple[float, float | None]:
        return self._moments_from(*self._base_moments(num_candidates, weights))

    @override
    def _evaluate(
        self, ranks: FloatArray, num_candidates: IntArray | None, weights: FloatArray | None
    ) -> FloatArray:
        assert num_candidates is not None  # needs_candidates: guaranteed by validation
        scale, offset = self._coefficients(num_candidates, weights)
        return scale * np.asarray(self.base._evaluate(ranks, num_candidates, weights)) + offset

    @override
    def _expected_value(self, num_candidates: IntArray, weights: FloatArray | None) -> float:
        return self._moments(num_candidates, weights)[0]

    @override
    def _variance(self, num_candidates: IntArray, weights: FloatArray | None) -> float | None:
        return self._moments(num_candidates, weights)[1]


class ExpectationNormalizedMetric(DerivedRankBasedMetric):
    r"""The base metric divided by its expected value, :math:`M^* = M / \mathbb{E}[M]`.

    .. math:: \alpha = \frac{1}{\mathbb{E}[M]}, \qquad \beta = 0, \qquad \mathbb{E}[M^*] = 1
    """

    @override
    def _coefficients_from(
        self, base_mean: float, base_variance: float | None
    ) -> AffineTransformationParameters:
        if base_mean == 0:
            raise ValueError(f"{self!r} is undefined: the expected value of {self.base!r} is 0")
        return AffineTransformationParameters(scale=1.0 / base_mean)

    @override
    def _exact_moments(self) -> tuple[float | None, float | None]:
        return 1.0, None


class ReindexedMetric(DerivedRankBasedMetric):
    r"""The base metric re-indexed to 0 at chance and 1 at best.

    .. math::

        M^* = \frac{M - \mathbb{E}[M]}{1 - \mathbb{E}[M]}, \qquad
        \alpha = \frac{1}{1 - \mathbb{E}[M]}, \qquad \beta = -\alpha \, \mathbb{E}[M]

    It is larger-is-better whatever the base's direction, for bases whose best value is 1. It is
    undefined when :math:`\mathbb{E}[M] = 1`, i.e. when every task has a single candidate.
    """

    increasing = True

    @override
    def _coefficients_from(
        self, base_mean: float, base_variance: float | None
    ) -> AffineTransformationParameters:
        mean = base_mean
        if mean == 1.0:
            raise ValueError(
                f"{self!r} is undefined: the expected value of {self.base!r} is 1, so chance is "
                f"already perfect here (e.g. every task has a single candidate)"
            )
        scale = 1.0 / (1.0 - mean)
        return AffineTransformationParameters(scale=scale, offset=-scale * mean)

    @override
    def _exact_moments(self) -> tuple[float | None, float | None]:
        return 0.0, None


class ZMetric(DerivedRankBasedMetric):
    r"""The z-score of the base metric under the null, oriented so that larger is better.

    .. math::

        M^* = s \, \frac{M - \mathbb{E}[M]}{\sqrt{\mathbb{V}[M]}}, \qquad
        s = \begin{cases} +1 & \text{if larger } M \text{ is better} \\
                          -1 & \text{otherwise} \end{cases}

    so :math:`\alpha = s / \sqrt{\mathbb{V}[M]}` and :math:`\beta = -\alpha \, \mathbb{E}[M]`; under
    the null :math:`\mathbb{E}[M^*] = 0` and :math:`\mathbb{V}[M^*] = 1`. It is undefined when the
    null variance is 0 (every task has a single candidate). See
    :class:`~rankstats.base.RankBasedMetric` for why weights and repetitions give different
    z-scores.
    """

    increasing = True
    value_range = _UNBOUNDED
    _coefficients_use_variance = True

    @override
    def _coefficients_from(
        self, base_mean: float, base_variance: float | None
    ) -> AffineTransformationParameters:
        mean, variance = base_mean, base_variance
        if variance is None:
            raise NoClosedFormError(f"{self!r} needs a closed-form variance of {self.base!r}")
        if not variance > 0:
            raise ValueError(
                f"{self!r} is undefined: the null variance of {self.base!r} is {variance!r}, so "
                f"every outcome is certain here (e.g. every task has a single candidate)"
            )
        scale = (1.0 if self.base.increasing else -1.0) / math.sqrt(variance)
        return AffineTransformationParameters(scale=scale, offset=-scale * mean)

    @override
    def _exact_moments(self) -> tuple[float | None, float | None]:
        return 0.0, 1.0


@parse_docdata
class AdjustedArithmeticMeanRank(ExpectationNormalizedMetric):
    r"""The adjusted arithmetic mean rank (AMR), :math:`\mathrm{MR} / \mathbb{E}[\mathrm{MR}]`.

    It lies in :math:`[0, 2)`, lower is better, and is 1 in expectation for a random model
    (Berrendorf et al., 2020).

    Examples
    --------
    >>> AdjustedArithmeticMeanRank()([1, 1], num_candidates=[3, 3])
    0.5

    ---
    link: https://arxiv.org/abs/2002.06914
    description: The mean over all ranks divided by its expected value.
    """

    name = "Adjusted Arithmetic Mean Rank (AAMR)"
    synonyms = ("adjusted_mean_rank", "amr", "aamr")
    value_range = ValueRange(lower=0, lower_inclusive=True, upper=2, upper_inclusive=False)
    increasing = False
    base_cls = ArithmeticMeanRank


@parse_docdata
class AdjustedArithmeticMeanRankIndex(ReindexedMetric):
    r"""The adjusted arithmetic mean rank index (AMRI).

    .. math::

        \mathrm{AMRI} = \frac{\mathrm{MR} - \mathbb{E}[\mathrm{MR}]}{1 - \mathbb{E}[\mathrm{MR}]}

    It lies in :math:`[-1, 1]`: 1 when every rank is 1, 0 in expectation for a random model, and
    -1 when every rank is last (Berrendorf et al., 2020).

    Examples
    --------
    >>> AdjustedArithmeticMeanRankIndex()([1, 1], num_candidates=[3, 3])
    1.0
    >>> AdjustedArithmeticMeanRankIndex()([3, 3], num_candidates=[3, 3])
    -1.0

    ---
    link: https://arxiv.org/abs/2002.06914
    description: The re-indexed adjusted mean rank (AAMR)
    """

    name = "Adjusted Arithmetic Mean Rank Index (AAMRI)"
    synonyms = ("adjusted_mean_rank_index", "amri", "aamri")
    value_range = ValueRange(lower=-1, lower_inclusive=True, upper=1, upper_inclusive=True)
    base_cls = ArithmeticMeanRank


@parse_docdata
class ZArithmeticMeanRank(ZMetric):
    r"""The z-scored arithmetic mean rank (zMR); larger is better.

    Examples
    --------
    >>> ZArithmeticMeanRank()([2], num_candidates=[3])
    0.0

    ---
    link: https://arxiv.org/abs/2203.07544
    description: The z-scored mean rank
    """

    name = "z-Mean Rank (zMR)"
    synonyms = ("zamr", "zmr")
    base_cls = ArithmeticMeanRank


@parse_docdata
class AdjustedGeometricMeanRankIndex(ReindexedMetric):
    r"""The adjusted geometric mean rank index (AGMRI).

    .. math::

        \mathrm{AGMRI}
        = \frac{\mathrm{GMR} - \mathbb{E}[\mathrm{GMR}]}{1 - \mathbb{E}[\mathrm{GMR}]}

    It is 1 when every rank is 1 and 0 in expectation for a random model; its lower bound depends
    on the candidate counts.

    Examples
    --------
    >>> AdjustedGeometricMeanRankIndex()([1, 1], num_candidates=[4, 9])
    1.0

    ---
    link: https://arxiv.org/abs/2203.07544
    description: The re-indexed adjusted geometric mean rank (AGMRI)
    tight_lower: -E[f]/(1-E[f])
    """

    name = "Adjusted Geometric Mean Rank Index (AGMRI)"
    synonyms = ("gmri", "agmri")
    value_range = _AT_MOST_ONE
    base_cls = GeometricMeanRank


@parse_docdata
class ZGeometricMeanRank(ZMetric):
    r"""The z-scored geometric mean rank (zGMR); larger is better.

    Examples
    --------
    >>> ZGeometricMeanRank()([1, 1], num_candidates=[5, 5]) > 0
    True

    ---
    link: https://arxiv.org/abs/2203.07544
    description: The z-scored geometric mean rank
    """

    name = "z-Geometric Mean Rank (zGMR)"
    synonyms = ("zgmr",)
    base_cls = GeometricMeanRank


@parse_docdata
class AdjustedInverseHarmonicMeanRank(ReindexedMetric):
    r"""The adjusted mean reciprocal rank (AMRR).

    .. math::

        \mathrm{AMRR} = \frac{\mathrm{MRR} - \mathbb{E}[\mathrm{MRR}]}{1 - \mathbb{E}[\mathrm{MRR}]}

    It is 1 when every rank is 1 and 0 in expectation for a random model; its lower bound,
    :math:`-\mathbb{E}[\mathrm{MRR}] / (1 - \mathbb{E}[\mathrm{MRR}])`, depends on the data.

    Examples
    --------
    >>> AdjustedInverseHarmonicMeanRank()([1, 1], num_candidates=[10, 10])
    1.0

    ---
    link: https://arxiv.org/abs/2203.07544
    description: The re-indexed adjusted MRR
    tight_lower: -E[f]/(1-E[f])
    """

    name = "Adjusted Inverse Harmonic Mean Rank"
    synonyms = ("amrr", "aihmr", "adjusted_mrr", "adjusted_mean_reciprocal_rank")
    value_range = _AT_MOST_ONE
    base_cls = InverseHarmonicMeanRank


@parse_docdata
class ZInverseHarmonicMeanRank(ZMetric):
    r"""The z-scored mean reciprocal rank (zMRR); larger is better.

    Examples
    --------
    >>> ZInverseHarmonicMeanRank()([1, 1], num_candidates=[10, 10]) > 0
    True

    ---
    link: https://arxiv.org/abs/2203.07544
    description: The z-scored mean reciprocal rank
    """

    name = "z-Mean Reciprocal Rank (zMRR)"
    synonyms = ("zmrr", "zihmr")
    base_cls = InverseHarmonicMeanRank


@parse_docdata
class AdjustedHitsAtK(ReindexedMetric):
    r"""The adjusted Hits@k, re-indexed to 0 at chance and 1 at best.

    .. math::

        \mathrm{AH@}k = \frac{\mathrm{H@}k - \mathbb{E}[\mathrm{H@}k]}{1 - \mathbb{E}[\mathrm{H@}k]}

    Parameters
    ----------
    k : int, default=10
        The cut-off; a positive integer.

    Examples
    --------
    >>> AdjustedHitsAtK(k=1)([1, 2], num_candidates=[2, 2])
    0.0

    ---
    link: https://arxiv.org/abs/2203.07544
    description: The re-indexed adjusted hits at K
    tight_lower: -E[f]/(1-E[f])
    """

    name = "Adjusted Hits at K"
    synonyms = (
        "ahk",
        "ah@k",
        "ahits@k",
        "ah@",
        "ahits@",
        "ahits_at_",
        "ah_at_",
        "adjusted_hits_at_",
    )
    value_range = _AT_MOST_ONE
    base_cls = HitsAtK

    def __init__(self, k: int = 10) -> None:
        super().__init__(k=k)


@parse_docdata
class ZHitsAtK(ZMetric):
    r"""The z-scored Hits@k; larger is better.

    Parameters
    ----------
    k : int, default=10
        The cut-off; a positive integer.

    Examples
    --------
    >>> ZHitsAtK(k=1)([1, 2], num_candidates=[2, 2])
    0.0

    ---
    link: https://arxiv.org/abs/2203.07544
    description: The z-scored hits at K
    """

    name = "z-Hits at K"
    synonyms = ("z_hits_at_", "zahk", "zh@k", "zh@", "zhits@k", "zhits@", "zh_at_")
    base_cls = HitsAtK

    def __init__(self, k: int = 10) -> None:
        super().__init__(k=k)
