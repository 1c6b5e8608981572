r"""The spread of the ranks (variance, standard deviation, MAD) and their count."""

from __future__ import annotations

import math

import numpy as np
from docdata import parse_docdata

from rankstats.arrays import FloatArray, IntArray
from rankstats.base import JointMoments, RankBasedMetric, override
from rankstats.null.dispersion import weighted_variance_moments_of
from rankstats.null.tasks import Tasks
from rankstats.ranges import ValueRange
from rankstats.weighting import weighted_mean, weighted_median

__all__ = ["Count", "MedianAbsoluteDeviation", "StandardDeviation", "Variance"]


_NON_NEGATIVE = ValueRange(lower=0, lower_inclusive=True, upper=math.inf)
#: 1 / Phi^{-1}(3/4): makes the MAD a consistent estimator of a normal standard deviation
MAD_NORMAL_SCALE = 1.482602218505602


def _weighted_variance(ranks: FloatArray, weights: FloatArray | None) -> FloatArray:
    if weights is None:
        return np.asarray(ranks.var(axis=-1), dtype=np.float64)
    deviation = ranks - weighted_mean(ranks, weights)[..., None]
    deviation *= deviation
    return weighted_mean(deviation, weights)


@parse_docdata
class Variance(JointMoments, RankBasedMetric):
    r"""The ranks' (population) variance.

    .. math:: S^2 = \sum_{i=1}^{n} a_i \big(r_i - \bar r\big)^2, \qquad \bar r = \sum_i a_i r_i

    Unweighted, this is :func:`numpy.var` with ``ddof=0``. Lower means more consistent ranks.

    Notes
    -----
    The ranks are independent but not identically distributed; with
    :math:`\mu_i = (C_i + 1)/2`, :math:`\sigma_i^2 = (C_i^2 - 1)/12` and
    :math:`d_i = \mu_i - \sum_j a_j \mu_j`,

    .. math:: \mathbb{E}[S^2] = \sum_i (a_i - a_i^2) \sigma_i^2 + \sum_i a_i d_i^2,

    and the variance follows from the fourth central moments
    :math:`\mu_{4,i} = (C_i^2 - 1)(3 C_i^2 - 7)/240` (see
    :func:`rankstats.null.dispersion.weighted_variance_moments`).

    Examples
    --------
    >>> Variance()([1, 2, 3])
    0.6666666666666666

    ---
    link: https://en.wikipedia.org/wiki/Variance
    description: The variance of the ranks.
    """

    name = "Variance"
    synonyms = ("rank_var", "var")
    value_range = _NON_NEGATIVE
    increasing = False

    @override
    def _evaluate(
        self, ranks: FloatArray, num_candidates: IntArray | None, weights: FloatArray | None
    ) -> FloatArray:
        return _weighted_variance(ranks, weights)

    @override
    def _moments(self, tasks: Tasks) -> tuple[float | None, float | None]:
        return weighted_variance_moments_of(tasks)


@parse_docdata
class StandardDeviation(RankBasedMetric):
    r"""The ranks' (population) standard deviation, :math:`\sqrt{S^2}` of :class:`Variance`.

    Notes
    -----
    :math:`\mathbb{E}[\sqrt{S^2}]` has no closed form; its null moments come from Monte-Carlo.

    Examples
    --------
    >>> StandardDeviation()([1, 3])
    1.0

    ---
    link: https://en.wikipedia.org/wiki/Standard_deviation
    description: The standard deviation of the ranks.
    """

    name = "Standard Deviation (std)"
    synonyms = ("rank_std", "std")
    value_range = _NON_NEGATIVE
    increasing = False

    @override
    def _evaluate(
        self, ranks: FloatArray, num_candidates: IntArray | None, weights: FloatArray | None
    ) -> FloatArray:
        return np.sqrt(_weighted_variance(ranks, weights))


@parse_docdata
class MedianAbsoluteDeviation(RankBasedMetric):
    r"""The ranks' median absolute deviation (MAD), scaled to estimate a normal standard deviation.

    .. math:: \mathrm{MAD} = 1.4826 \cdot \operatorname{median}_i |r_i - \operatorname{median}(r)|

    The factor :math:`1 / \Phi^{-1}(3/4) \approx 1.4826` is
    ``scipy.stats.median_abs_deviation(..., scale="normal")``. It applies with and without
    weights (medians weighted as in :class:`~rankstats.metrics.central.MedianRank`).

    Notes
    -----
    No closed form; the null moments come from Monte-Carlo.

    Examples
    --------
    >>> round(MedianAbsoluteDeviation()([1, 2, 3, 4, 100]), 4)
    1.4826

    ---
    link: https://en.wikipedia.org/wiki/Median_absolute_deviation
    description: The median absolute deviation of the ranks.
    """

    name = "Median Absolute Deviation (MAD)"
    synonyms = ("rank_mad", "mad")
    value_range = _NON_NEGATIVE
    increasing = False

    @override
    def _evaluate(
        self, ranks: FloatArray, num_candidates: IntArray | None, weights: FloatArray | None
    ) -> FloatArray:
        center = weighted_median(ranks, weights)
        deviation = np.abs(ranks - center[..., None])
        return MAD_NORMAL_SCALE * weighted_median(deviation, weights)


@parse_docdata
class Count(RankBasedMetric):
    r"""The number of ranks, :math:`n`; small counts flag unreliable results.

    Notes
    -----
    It does not depend on the ranks, so under the null :math:`\mathbb{E} = n` and
    :math:`\mathbb{V} = 0`. It takes no weights.

    Examples
    --------
    >>> Count()([4, 1, 2])
    3.0

    ---
    link: https://pykeen.readthedocs.io/en/stable/reference/evaluation.html
    description: The number of ranks.
    """

    name = "Count"
    synonyms = ("rank_count",)
    value_range = _NON_NEGATIVE
    #: more ranks, more reliable results (PyKEEN's direction too)
    increasing = True
    supports_weights = False
    _null_from_weight_sums = True

    @override
    def _evaluate(
        self, ranks: FloatArray, num_candidates: IntArray | None, weights: FloatArray | None
    ) -> FloatArray:
        return np.full(ranks.shape[:-1], float(ranks.shape[-1]))

    @override
    def _evaluate_histogram(self, values: FloatArray, counts: FloatArray) -> float:
        return float(counts.sum())

    @override
    def _expected_value(self, tasks: Tasks) -> float:
        return float(tasks.size)

    @override
    def _variance(self, tasks: Tasks) -> float:
        return 0.0
