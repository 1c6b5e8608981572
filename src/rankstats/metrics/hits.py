r"""Hits@k: the fraction of tasks whose true answer is ranked among the top :math:`k`."""

from __future__ import annotations

from typing import Any

import numpy as np
from docdata import parse_docdata

from rankstats.arrays import FloatArray, IntArray
from rankstats.base import RankBasedMetric, override
from rankstats.chance import ChanceTerms, Ratio
from rankstats.null.tasks import Tasks
from rankstats.ranges import ValueRange
from rankstats.validation import MAX_NUM_CANDIDATES, check_positive_int
from rankstats.weighting import weighted_mean

__all__ = ["HitsAtK", "hit_probability", "hit_ratio", "miss_probability"]


def hit_probability(num_candidates: IntArray, k: int) -> FloatArray:
    r"""The null probability of a hit, :math:`p_i = P(r_i \le k) = \min(k / C_i, 1)`."""
    return np.minimum(k / num_candidates, 1.0)


def miss_probability(num_candidates: IntArray, k: int) -> FloatArray:
    r"""The null probability of a miss, :math:`1 - p_i = \max(C_i - k, 0) / C_i`, exactly rounded.

    Computed from the integers rather than as ``1 - p``, which loses the digits :math:`p_i`
    shares with 1 when :math:`C_i` is just above :math:`k`.
    """
    return np.maximum(num_candidates - k, 0) / num_candidates


def hit_ratio(num_candidates: IntArray, k: int) -> Ratio:
    r"""The null probabilities of a hit and a miss as ratios of integers (as doubles).

    ``(min(k, C), max(C - k, 0), C)``: :func:`hit_probability` and :func:`miss_probability`
    are the first two over the third, each rounded once.
    """
    counts = np.asarray(num_candidates, dtype=np.float64)
    hits = np.minimum(float(k), counts)
    return hits, counts - hits, counts


@parse_docdata
class HitsAtK(RankBasedMetric):
    r"""The fraction of tasks whose rank is at most :math:`k`.

    .. math:: \mathrm{H@}k = \sum_{i=1}^{n} a_i \, \mathbb{I}[r_i \le k]

    It lies in :math:`[0, 1]`, larger is better. It ignores everything beyond the cut-off: a miss
    at rank :math:`k + 1` counts the same as one at rank :math:`10^6`.

    Parameters
    ----------
    k : int, default=10
        The cut-off; a positive integer.

    Notes
    -----
    Under the null, :math:`\mathbb{I}[r_i \le k] \sim \mathrm{Bernoulli}(p_i)` with
    :math:`p_i = \min(k / C_i, 1)`, hence

    .. math::

        \mathbb{E}[\mathrm{H@}k] = \sum_i a_i p_i, \qquad
        \mathbb{V}[\mathrm{H@}k] = \sum_i a_i^2 p_i (1 - p_i).

    Realistic (half-integer) ranks count as hits when they do not exceed :math:`k`.

    Examples
    --------
    >>> HitsAtK(k=2)([1, 2, 5])
    0.6666666666666666
    >>> HitsAtK(k=10)
    HitsAtK(k=10)

    ---
    link: https://en.wikipedia.org/wiki/Evaluation_measures_(information_retrieval)
    description: The relative frequency of ranks not larger than a given k.
    """

    name = "Hits @ K"
    synonyms = ("h@k", "hits@k", "h@", "hits@", "hits_at_", "h_at_")
    value_range = ValueRange(lower=0, lower_inclusive=True, upper=1, upper_inclusive=True)
    increasing = True
    _null_from_weight_sums = True
    _size_free_expectation = True

    def __init__(self, k: int = 10) -> None:
        self.k = check_positive_int(k, "k")

    @property
    def cutoff(self) -> int:
        """The cut-off in computations: :math:`k`, or :math:`2^{53}` for a larger :math:`k`.

        No rank or candidate count exceeds :math:`2^{53}`, so a larger :math:`k` counts every
        rank as a hit, as :math:`2^{53}` does; taken as it is, it would overflow the 64-bit
        integers it meets (``C - k``).
        """
        return min(self.k, MAX_NUM_CANDIDATES)

    @override
    def _params(self) -> dict[str, Any]:
        return {"k": self.k}

    @override
    def _evaluate(
        self, ranks: FloatArray, num_candidates: IntArray | None, weights: FloatArray | None
    ) -> FloatArray:
        hits = ranks <= self.cutoff
        if weights is None and ranks.ndim == 1:  # count_nonzero is fastest without an axis
            return np.asarray(np.count_nonzero(hits) / ranks.size, dtype=np.float64)
        if weights is None:
            return np.asarray(np.count_nonzero(hits, axis=-1) / ranks.shape[-1], dtype=np.float64)
        return weighted_mean(hits, weights)

    @override
    def _value_gap(
        self, ranks: FloatArray, num_candidates: IntArray | None, weights: FloatArray | None
    ) -> FloatArray:
        misses = ranks > self.cutoff
        if weights is None:
            return np.asarray(np.count_nonzero(misses, axis=-1) / ranks.shape[-1], dtype=np.float64)
        return weighted_mean(misses, weights)

    @override
    def _chance_terms(self) -> ChanceTerms:
        cutoff = self.cutoff
        return ChanceTerms(
            lambda ranks: (ranks <= cutoff).astype(np.float64),
            lambda ranks: (ranks > cutoff).astype(np.float64),
            lambda candidates: hit_probability(candidates, cutoff),
            lambda candidates: miss_probability(candidates, cutoff),
            expected_ratio=lambda candidates: hit_ratio(candidates, cutoff),
        )

    @override
    def _expected_value(self, tasks: Tasks) -> float:
        return tasks.mean(hit_probability(tasks.candidates, self.cutoff))

    @override
    def _expected_gap(self, tasks: Tasks) -> float:
        return tasks.mean(miss_probability(tasks.candidates, self.cutoff))

    @override
    def _variance(self, tasks: Tasks) -> float:
        # p (1 - p) = min(k, C) max(C - k, 0) / C^2, each factor exact
        c = tasks.candidates.astype(np.float64)
        individual = np.minimum(self.cutoff, c) * np.maximum(c - self.cutoff, 0.0) / (c * c)
        return tasks.mean_variance(individual)
